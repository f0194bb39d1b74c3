"""Objective perturbation (smoothed check loss) vs exact KNG vs Gibbs-KNG quantile regression.

Design (the one of ``benchmarks.quantile --scaling``): x ~ U(-1, 1)^(d-1), y = x beta + e,
e ~ N(0, 1), beta = (1, -1, 0.5, 0.3)[:d-1], tau = 1/2 (true parameter (0, beta)), public
bounds_X = (-1, 1) and bounds_y = (-6, 6); d = 2..5 parameters, n = 1e3..1e6, epsilon in
{0.5, 1, 4}. Methods:

* ``op``: :class:`dpreg.ObjectivePerturbationQuantileRegressor` (defaults, linf);
* ``kng_exact``: :class:`dpreg.KNGQuantileRegressor` (default exact sampler);
* ``kng_gibbs``: the same with ``sampler="gibbs"``, one chain, ``n_sweeps="auto"``
  (approximate guarantee: the comparison the issue asks for).

Every KNG fit runs in a forked worker process (memory limit 3 GiB) with a wall-clock cap;
after a cap or an error the larger n of that (method, d, epsilon) are not tried. Per fit:
CPU seconds (``time.process_time`` in the process that fits), Euclidean parameter error and
excess held-out check loss (2e4 fresh rows) over the true quantile function.

``python -m benchmarks.op_quantile`` writes ``results/op_quantile_<methods>.csv`` as it goes,
then ``op_quantile.csv`` (one row per fit, all methods' CSVs found), ``op_quantile.md``
(median table) and ``op_quantile.png``. Options: ``--quick``, ``--cap`` (wall seconds per
KNG fit), ``--reps``, ``--methods op,kng_exact`` (run methods in separate processes, then
``--report`` to combine), ``--d 4,5 --n 1e3 --eps 1 --tag _x`` (a sub-grid, its own CSV),
``--tau 0.9`` (another quantile; the true intercept is the normal quantile).
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats

try:
    from ._common import cli_parser, results_dir, save
except ImportError:  # pragma: no cover - run as a script
    from benchmarks._common import cli_parser, results_dir, save

BETA = np.array([1.0, -1.0, 0.5, 0.3])
D_GRID = (2, 3, 4, 5)
N_GRID = (1_000, 10_000, 100_000, 1_000_000)
EPS_GRID = (0.5, 1.0, 4.0)
METHODS = ("op", "kng_exact", "kng_gibbs")
TAU = 0.5


def data(d, n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d - 1))
    return X, X @ BETA[: d - 1] + rng.standard_normal(n)


def _check_loss(u, tau):
    return float(np.mean(u * (tau - (u < 0))))


def fit_one(method, d, n, eps, rep):
    """One fit: CPU seconds, parameter error, excess held-out check loss."""
    from dpreg import KNGQuantileRegressor, ObjectivePerturbationQuantileRegressor

    X, y = data(d, n, 1000 * rep + d)
    kw = dict(quantile=TAU, epsilon=eps, bounds_X=(-1, 1), bounds_y=(-6, 6), random_state=rep)
    if method == "op":
        model = ObjectivePerturbationQuantileRegressor(**kw)
    elif method == "kng_exact":
        model = KNGQuantileRegressor(**kw, progress_bar=False)
    else:
        model = KNGQuantileRegressor(**kw, sampler="gibbs", n_chains=1, progress_bar=False)
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Gibbs' PrivacyLeakWarning: the method is labelled
        model.fit(X, y)
    cpu = time.process_time() - c0
    truth = np.r_[stats.norm.ppf(TAU), BETA[: d - 1]]  # N(0, 1) errors
    est = np.r_[model.intercept_, model.coef_]
    Xt, yt = data(d, 20_000, 10**6 + rep)
    excess = _check_loss(yt - model.predict(Xt), TAU) - _check_loss(
        yt - Xt @ truth[1:] - truth[0], TAU
    )
    return dict(
        method=method, tau=TAU, d=d, n=n, epsilon=eps, rep=rep, status="ok", cpu_seconds=cpu,
        param_error=float(np.linalg.norm(est - truth)), excess_check_loss=excess,
    )  # fmt: skip


def _limit_memory(gib=3):
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))


class _Worker:
    """A forked child process (dpreg already imported) that runs KNG fits one at a time;
    on a timeout it is killed and a fresh one is forked for the next fit."""

    def __init__(self):
        self.pool = None

    def __call__(self, method, d, n, eps, rep, cap):
        import multiprocessing as mp

        if self.pool is None:
            self.pool = mp.get_context("fork").Pool(1, initializer=_limit_memory)
        job = self.pool.apply_async(fit_one, (method, d, n, eps, rep))
        try:
            return job.get(timeout=cap)
        except mp.TimeoutError:
            status = f"> {cap:g} s wall"
        except Exception as err:  # noqa: BLE001 - e.g. MemoryError under the limit
            status = f"error: {type(err).__name__}: {str(err)[:150]}"
        self.pool.terminate()
        self.pool.join()
        self.pool = None
        return dict(method=method, d=d, n=n, epsilon=eps, rep=rep, status=status)


def run(quick=False, cap=120.0, reps=3, methods=METHODS, grids=(None, None, None), tag=""):
    d_grid, n_grid = ((2, 5), (1_000, 10_000)) if quick else (D_GRID, N_GRID)
    eps_grid = EPS_GRID
    d_grid, n_grid, eps_grid = (g or dflt for g, dflt in zip(grids, (d_grid, n_grid, eps_grid)))
    reps = 2 if quick else reps
    out = results_dir(quick) / f"op_quantile_{'_'.join(methods)}{tag}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    child = _Worker()
    for method in methods:
        for d in d_grid:
            for eps in eps_grid:
                for n in n_grid:
                    # KNG: fewer repeats where fits are slow (the machine is shared)
                    r = reps if method == "op" else (min(reps, 2) if n <= 10_000 else 1)
                    failed = False
                    for rep in range(r):
                        w0 = time.perf_counter()
                        if method == "op":
                            row = fit_one(method, d, n, eps, rep)
                        else:
                            row = child(method, d, n, eps, rep, cap)
                        row["wall_seconds"] = time.perf_counter() - w0
                        rows.append(row)
                        print(row, flush=True)
                        pd.DataFrame(rows).to_csv(out, index=False)
                        failed = row["status"] != "ok"
                        if failed:
                            break
                    if failed:  # larger n would only take longer
                        break
    return pd.DataFrame(rows)


def report(quick=False):
    """Combine the per-method CSVs of :func:`run` into ``op_quantile.csv/.md/.png``."""
    parts = sorted(results_dir(quick).glob("op_quantile_*.csv"))
    df = pd.concat([pd.read_csv(p) for p in parts], ignore_index=True)
    df["tau"] = df["tau"].fillna(0.5) if "tau" in df else 0.5  # runs before --tau existed
    save(df, "op_quantile", plot(df), quick=quick)
    md = table(df)
    (results_dir(quick) / "op_quantile.md").write_text(md + "\n")
    print(md)
    return df


def table(df):
    """Median CPU s / parameter error per method and cell (markdown), one block per tau."""
    if "tau" not in df:
        df = df.assign(tau=0.5)
    df = df.assign(tau=df["tau"].fillna(0.5))
    return "\n\n".join(f"tau = {tau:g}\n\n" + _table(g) for tau, g in df.groupby("tau", sort=True))


def _table(df):
    ok = df[df["status"] == "ok"]
    med = ok.groupby(["d", "n", "epsilon", "method"])[["cpu_seconds", "param_error"]].median()
    lines = [
        "| d | n | eps | " + " | ".join(f"{m}: CPU s / error" for m in METHODS) + " |",
        "|---|---|---|" + "---|" * len(METHODS),
    ]
    for (d, n, eps), _ in ok.groupby(["d", "n", "epsilon"]):
        cells = []
        for m in METHODS:
            if (d, n, eps, m) in med.index:
                c, e = med.loc[(d, n, eps, m)]
                cells.append(f"{c:.3g} / {e:.3g}")
            else:
                bad = df[(df.d == d) & (df.n == n) & (df.epsilon == eps) & (df.method == m)]
                cells.append(bad["status"].iloc[0] if len(bad) else "not run")
        lines.append(f"| {d} | {n:.0e} | {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(df):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = df[(df["status"] == "ok") & (df.get("tau", 0.5) == 0.5)]
    ds = sorted(ok["d"].unique())
    fig, axes = plt.subplots(2, len(ds), figsize=(4 * len(ds), 7), squeeze=False)
    style = {"op": "-", "kng_exact": "--", "kng_gibbs": ":"}
    for j, d in enumerate(ds):
        for (m, eps), g in ok[ok.d == d].groupby(["method", "epsilon"]):
            med = g.groupby("n")[["param_error", "cpu_seconds"]].median()
            lab = f"{m} eps={eps:g}"
            axes[0, j].loglog(med.index, med["param_error"], style[m], marker="o", label=lab)
            axes[1, j].loglog(med.index, med["cpu_seconds"], style[m], marker="o", label=lab)
        axes[0, j].set_title(f"d = {d} parameters")
        axes[1, j].set_xlabel("n")
    axes[0, 0].set_ylabel("median parameter error")
    axes[1, 0].set_ylabel("median CPU seconds per fit (loaded machine)")
    axes[0, -1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--cell":
        method, d, n, eps, rep = argv[1], int(argv[2]), int(argv[3]), float(argv[4]), int(argv[5])
        print(json.dumps(fit_one(method, d, n, eps, rep)))
        return
    parser = cli_parser(__doc__)
    parser.add_argument("--cap", type=float, default=120.0, help="wall seconds per KNG fit")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--report", action="store_true", help="only combine the CSVs")
    for name in ("d", "n", "eps"):
        parser.add_argument(f"--{name}", default=None, help=f"comma-separated {name} grid")
    parser.add_argument("--tag", default="", help="suffix of this run's CSV name")
    parser.add_argument("--tau", type=float, default=0.5, help="the quantile (truth known)")
    args = parser.parse_args(argv)
    global TAU
    TAU = args.tau
    grids = [
        None if g is None else tuple(t(x) for x in g.split(","))
        for g, t in ((args.d, int), (args.n, lambda x: int(float(x))), (args.eps, float))
    ]
    if not args.report:
        run(args.quick, args.cap, args.reps, tuple(args.methods.split(",")), grids, args.tag)
    report(args.quick)


if __name__ == "__main__":
    main()
