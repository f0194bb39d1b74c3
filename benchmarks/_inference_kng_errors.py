"""``KNGQuantileRegressor``'s default intervals under non-normal errors (issue 15; session 17).

Every committed KNG inference cell draws N(0, 1) errors, and at n = 1e3, epsilon = 0.25 the
default interval simulates synthetic data with normal errors (docs/inference.md, "The
simulation bootstrap at small n·ε": the normal law is *assumed* there). Quantile regression is
what a user picks for heavy tails or skew, so this runs the benchmark's cells with other
error laws, all with median 0 (so the truth, the conditional median ``1 + 2 x1 - x2``, is
unchanged; clipping y into the public ``bounds_y`` does not move a conditional median
either):

* ``t3``: Student's t with 3 degrees of freedom (sd 1.73, heavy tails), sparsity
  ``1 / f(0) = pi sqrt(3) / 2``;
* ``laplace``: Laplace with scale ``1 / sqrt(2)`` (sd 1, a cusp at the median), sparsity
  ``sqrt(2)``;
* ``skewed``: ``Exp(1) - ln 2`` (sd 1), sparsity 2: the density falls through the median,
  so the window count of the released sparsity (``release_curvature``) averages a convex
  density and estimates it too *high*: the one law here whose sparsity estimate errs towards
  narrow intervals (by t / sinh t: -3.3 % at n = 1e3, epsilon = 0.25, -1.1 % at epsilon = 1).

Everything else is the benchmark's (``_inference_cells.kng_cells``): the design ``x ~ U[-1,
1]^2``, the fit at 0.6 epsilon, ``release_curvature`` at 0.4 epsilon, ``conf_int`` with the
default ``method="auto"``, data set ``i`` of n from ``default_rng([4000 + N_GRID.index(n),
i])``: the same designs as the committed cells (the design is drawn first) and errors drawn
at the same place of the stream, so each data set is paired with the committed normal one.

``run LAW N START STOP DIR [EPS,...]``: data sets ``START <= i < STOP`` (one pickle each, as
``_inference_kng_chunks``; ``DIR/LAW`` holds them). ``score LAW[,LAW...] DIR[,DIR...]
[NAME]``: the rows of ``benchmarks.inference``'s KNG cells (``kng_score``: coverage, width
over the spread of the released estimates, of the whole-epsilon fits and over the asymptotic
laws, here with the law's own sparsity) with ``coverage_mc_sd`` and the law in ``errors``;
``NAME`` writes ``benchmarks/results/NAME.csv``/``.png``. ``compare LAW DIR[,DIR...]
NORMAL_DIR[,DIR...]``: the same designs with normal errors (chunk folders of the committed
cells), paired by data set. ``sampling LAW N REPS``: the non-private median regression's
spread on fresh data sets of the design and its oracle interval's coverage
(:func:`sampling_check`). ``paired LAW N START STOP [DIR,...]``: that oracle interval on the
cells' own data sets, against the private intervals in the chunks (:func:`paired_check`).
``worlds LAW N START STOP EPS WORLD[,WORLD...] DIR``: the simulated interval on the cells'
own releases at ``EPS`` with the synthetic errors of each world (:func:`worlds_check`:
``normal``, the library's own; ``laplace``; ``oracle``, the data's law at its true scale;
``NAME/c`` at the released sparsity divided by c); ``worlds-score FILE[,FILE...]`` pools
their files (:func:`worlds_score`).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import numpy as np

from . import _inference_cells as cells_mod
from . import _inference_kng_chunks as chunks
from . import inference as inf
from ._common import save


def _t3(rng, n):
    return rng.standard_t(3, n)


def _laplace(rng, n):
    return rng.laplace(0.0, 1.0 / np.sqrt(2.0), n)


def _skewed(rng, n):
    return rng.exponential(1.0, n) - np.log(2.0)


#: name -> (draw(rng, n), sparsity 1 / f(0) at the median 0)
ERROR_LAWS = {
    "normal": (cells_mod.kng_errors, cells_mod.NORMAL_SPARSITY),
    "t3": (_t3, np.pi * np.sqrt(3.0) / 2.0),
    "laplace": (_laplace, np.sqrt(2.0)),
    "skewed": (_skewed, 2.0),
}


@contextlib.contextmanager
def error_law(name):
    """Within the block the KNG cells' errors (``_inference_cells.kng_errors``) are drawn from
    ``ERROR_LAWS[name]``: the design and its place in the stream are unchanged, and
    ``normal`` reproduces the committed cells."""
    original = cells_mod.kng_errors
    cells_mod.kng_errors = ERROR_LAWS[name][0]
    try:
        yield
    finally:
        cells_mod.kng_errors = original


def run(law, n, start, stop, out, eps_grid=cells_mod.EPS_GRID):
    with error_law(law):
        chunks.run(n, start, stop, Path(out) / law, eps_grid)


def score_law(law, out):
    """Rows per n and epsilon of one law's chunks in ``out`` (comma-separated folders, each
    holding ``LAW/N/*.pkl``; ``_inference_kng_chunks.merged_rows``), the asymptotic oracles
    with the law's sparsity, the law in ``errors``."""
    dirs = [str(Path(d) / law) for d in out.split(",")]
    rows = chunks.merged_rows(dirs, sparsity=ERROR_LAWS[law][1])
    return [r | {"errors": law} for r in rows]


def score(laws, out, name=None):
    """:func:`score_law` for each of the comma-separated ``laws``, printed; with ``name`` also
    written to ``benchmarks/results/NAME.csv`` with a figure (:func:`figure`)."""
    import pandas as pd  # noqa: PLC0415

    df = pd.DataFrame([r for law in laws.split(",") for r in score_law(law, out)])
    cols = ["errors", "n", "epsilon", "param", "reps", "coverage", "width_ratio"]
    cols += ["width_ratio_full", "width_ratio_asym", "width_ratio_full_asym"]
    with pd.option_context("display.width", 200):
        print(df[cols].to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if name is not None:
        save(df, name, figure(df))
    return df


def figure(df):
    """Coverage and width over the asymptotic oracle (the law's sparsity) per cell, one
    colour per error law, one marker per parameter."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    cells = sorted({(n, e) for n, e in zip(df.n, df.epsilon)})
    where = {c: i for i, c in enumerate(cells)}
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    markers = dict(zip(cells_mod.KNG_NAMES, "os^"))
    laws = list(dict.fromkeys(df.errors))
    for k, law in enumerate(laws):
        for param, g in df[df.errors == law].groupby("param"):
            x = [where[c] + 0.12 * (k - (len(laws) - 1) / 2) for c in zip(g.n, g.epsilon)]
            kw = dict(color=f"C{k}", marker=markers[param], ls="none", ms=4)
            axes[0].plot(x, g.coverage, label=f"{law} {param}", **kw)
            axes[1].plot(x, g.width_ratio_asym, **kw)
    axes[0].axhspan(0.93, 0.97, color="0.9")
    axes[0].set(ylabel="coverage of 95% intervals")
    axes[1].axhline(1.0, color="0.5", ls="--")
    axes[1].set(yscale="log", ylabel="mean width / asymptotic oracle (law's sparsity)")
    for ax in axes:
        ax.set_xticks(range(len(cells)), [f"n={n:.0e}\neps={e:g}" for n, e in cells], fontsize=7)
    axes[0].legend(fontsize=6, ncol=len(laws))
    fig.suptitle("KNGQuantileRegressor default intervals under non-normal errors", fontsize=9)
    return fig


def compare(law, out, normal):
    """Paired with the normal errors: on the data sets (and epsilons) that both ``out/LAW``
    and the chunk folders ``normal`` (comma-separated, ``_inference_kng_chunks`` runs of the
    committed cells) hold, per n, epsilon and parameter: coverage under each law, mean widths
    and the median over data sets of the width ratio (law / normal). Same designs, other
    errors (module docstring); prints, writes nothing."""
    import pandas as pd  # noqa: PLC0415

    dirs, base = [str(Path(d) / law) for d in out.split(",")], normal.split(",")
    rows = []
    for n in inf.N_GRID:
        mine, theirs = chunks._load(dirs, n), chunks._load(base, n)
        for eps in sorted(set(mine) & set(theirs)):
            ids = sorted(set(mine[eps]) & set(theirs[eps]))
            if not ids:
                continue
            a = cells_mod.concat_cells([mine[eps][i] for i in ids])[eps]
            b = cells_mod.concat_cells([theirs[eps][i] for i in ids])[eps]
            for j, name in enumerate(cells_mod.KNG_NAMES):
                wa, wb = (c[1][:, j, 1] - c[1][:, j, 0] for c in (a, b))
                cover = [np.mean(_covers(c[1], j)) for c in (a, b)]
                rows.append(
                    dict(
                        n=n,
                        epsilon=eps,
                        param=name,
                        data_sets=len(ids),
                        coverage=cover[0],
                        coverage_normal=cover[1],
                        mean_width=wa.mean(),
                        mean_width_normal=wb.mean(),
                        median_width_ratio=np.median(wa / wb),
                    )
                )
    df = pd.DataFrame(rows)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    return df


def sampling_check(law, n, reps, seed=5):
    """Non-private median regression (statsmodels ``QuantReg``) on ``reps`` fresh data sets of
    the cells' design with the errors of ``law``: the mean error, the sd of the estimates
    over the asymptotic sd (:func:`_asymptotic_sd`), and how often the oracle interval
    ``beta_hat ± 1.96`` asymptotic sd covers the truth (:func:`_oracle_hits`: whether the
    estimator's own law is near enough to normal at n). Tells the estimator's own sampling
    law apart from the privacy noise; prints."""
    rng = np.random.default_rng(seed)
    with error_law(law):  # the cells' own data model, fresh data sets from one stream
        est = _median_regressions(cells_mod.kng_data(n, rng) for _ in range(reps))
    asym = _asymptotic_sd(law, n)
    print(f"{law}, n={n}, {reps} fits: bias {np.round(est.mean(0) - cells_mod.KNG_BETA, 4)}")
    print(f"  sd / asymptotic sd {np.round(est.std(0) / asym, 3)}")
    hit = _oracle_hits(est, law, n)
    print("  beta_hat ± 1.96 asymptotic sd covers " + " / ".join(f"{c:.3f}" for c in hit.mean(0)))
    return est


def _asymptotic_sd(law, n):
    """The non-private median regression's asymptotic sd on the cells' design, ``s sqrt(tau
    (1 - tau)) / sqrt(n) * (1, sqrt 3, sqrt 3)`` at the law's sparsity ``s`` (``x ~ U[-1,
    1]^2`` has second moments 1/3)."""
    return ERROR_LAWS[law][1] * 0.5 / np.sqrt(n) * np.array([1.0, np.sqrt(3.0), np.sqrt(3.0)])


def _oracle_hits(est, law, n):
    """Whether the oracle interval ``est ± 1.96`` asymptotic sd (the law's true sparsity, no
    privacy noise) of each non-private estimate (k, 3) holds the truth."""
    return np.abs(est - cells_mod.KNG_BETA) <= 1.959964 * _asymptotic_sd(law, n)


def _covers(ci, j):
    """Whether the intervals ``ci`` (k, 3, 2) of parameter ``j`` hold its truth."""
    truth = cells_mod.KNG_BETA[j]
    return (ci[:, j, 0] <= truth) & (truth <= ci[:, j, 1])


def _median_regressions(X_y_pairs):
    """statsmodels' non-private median regression of each ``(X, y)``, an array (k, 3)."""
    import warnings  # noqa: PLC0415

    from statsmodels.regression.quantile_regression import QuantReg  # noqa: PLC0415

    est = []
    for X, y in X_y_pairs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.append(QuantReg(y, np.c_[np.ones(len(y)), X]).fit(q=0.5).params)
    return np.array(est)


def paired_check(law, n, start, stop, out=None):
    """On the cells' own data sets ``START <= i < STOP`` (the streams of :func:`run`): does
    the *non-private* median regression's oracle interval ``beta_hat ± 1.96 sd`` (``sd`` the
    asymptotic sd at the law's sparsity, :func:`_oracle_hits`) cover the truth? Where the
    privacy noise is small against the sampling error (n = 1e4) a private interval of the
    asymptotic width misses on about the same data sets, so this tells a shortfall of the
    method from an unlucky draw of data sets: if the non-private oracle misses as often on
    these data sets, the private cells' shortfall is the data sets'. With ``out`` (chunk
    folders as :func:`score`) it also cross-tabulates, per epsilon and parameter, the private
    intervals' misses against the oracle's on the data sets both hold. Prints."""
    import pandas as pd  # noqa: PLC0415

    seed = 4000 + inf.N_GRID.index(n)
    ids = list(range(start, stop))
    with error_law(law):
        data = (cells_mod.kng_data(n, np.random.default_rng([seed, i])) for i in ids)
        est = _median_regressions(data)
    oracle_hit = _oracle_hits(est, law, n)
    print(f"{law}, n={n}, data sets {start}-{stop - 1}: non-private oracle interval covers")
    print("  " + " / ".join(f"{c:.3f}" for c in oracle_hit.mean(0)))
    if out is None:
        return oracle_hit
    dirs = [str(Path(d) / law) for d in out.split(",")]
    rows = []
    for eps, cells in sorted(chunks._load(dirs, n).items()):
        both = [i for i in ids if i in cells]
        if not both:
            continue
        ci = cells_mod.concat_cells([cells[i] for i in both])[eps][1]
        o = oracle_hit[[i - start for i in both]]
        for j, name in enumerate(cells_mod.KNG_NAMES):
            p = _covers(ci, j)
            rows.append(
                dict(
                    epsilon=eps,
                    param=name,
                    data_sets=len(both),
                    private=p.mean(),
                    oracle=o[:, j].mean(),
                    both_miss=int(np.sum(~p & ~o[:, j])),
                    only_private_misses=int(np.sum(~p & o[:, j])),
                    only_oracle_misses=int(np.sum(p & ~o[:, j])),
                )
            )
    df = pd.DataFrame(rows)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return df


_PHI0 = 1.0 / np.sqrt(2.0 * np.pi)  # the normal density at its median, sd 1

#: Error laws of the synthetic worlds of :func:`worlds_check`: name -> ``draw(rng, n, s)``
#: with ``s`` the world's sparsity (the released one), median 0 and density ``1 / s`` there,
#: as the library's world (for ``tau = 1/2`` only). ``laplace``: scale ``s / 2``; ``normal``:
#: sd ``s phi(0)``, the library's law with draws of its own (for ``NAME/c``; the world
#: ``normal`` itself is the library's). :func:`worlds_check` adds ``oracle``, the data's own
#: law at its true scale (``s`` ignored: not a released value).
WORLD_LAWS = {
    "laplace": lambda rng, n, s: rng.laplace(0.0, s / 2.0, n),
    "normal": lambda rng, n, s: rng.normal(0.0, s * _PHI0, n),
}


@contextlib.contextmanager
def world_errors(draw):
    """Within the block the simulation bootstrap's synthetic errors
    (``_inference_quantile.synthetic_data``) come from ``draw(rng, n, sparsity)`` instead of
    the normal law (at tau = 1/2; the design and its place in the stream are unchanged)."""
    from dpreg.linear_model import _inference_quantile as iq  # noqa: PLC0415

    original = iq.synthetic_data

    def synthetic(fit, gram, sparsity, rng, mirror=False):
        X, y = original(fit, gram, 0.0, rng, mirror)  # y = w^T theta~ exactly
        e = draw(rng, fit.n, float(sparsity))
        return X, y - e if mirror else y + e

    iq.synthetic_data = synthetic
    try:
        yield
    finally:
        iq.synthetic_data = original


def worlds_check(law, n, start, stop, eps, worlds, out):
    """Diagnosis of the simulated interval under non-normal errors: on the cells' data sets
    ``START <= i < STOP`` with errors from ``law`` and their very releases at ``eps``
    (``_inference_cells.kng_releases``, no whole-epsilon fits), the simulated interval
    (``method="simulate"``, the library's seed) with the synthetic errors of each world:
    ``normal`` (the library's own), a :data:`WORLD_LAWS` name, or ``oracle`` (the data's
    own law at its true scale). Saves ``out/worlds_LAW_N_START_STOP.npz`` (estimates,
    intervals per world, the released sparsity); :func:`worlds_score` reads them."""
    import warnings  # noqa: PLC0415

    from dpreg import BudgetAccountant  # noqa: PLC0415
    from dpreg._random import release_seed  # noqa: PLC0415
    from dpreg.linear_model import _inference_quantile as iq  # noqa: PLC0415

    draws = dict(WORLD_LAWS, oracle=lambda rng, m, s: ERROR_LAWS[law][0](rng, m))
    for w in worlds:  # "NAME/c": the world NAME at the sparsity divided by c
        if "/" in w:
            name, c = w.split("/")
            draws[w] = lambda rng, m, s, d=draws[name], c=float(c): d(rng, m, s / c)
    seed = 4000 + inf.N_GRID.index(n)
    est, cis, spars = [], {w: [] for w in worlds}, []
    with error_law(law):
        releases = cells_mod.kng_releases(
            n,
            stop - start,
            seed,
            [eps],
            full_fits=False,
            start=start,
            accountant=BudgetAccountant(),
        )
        for i, _, _, _, model, _ in releases:
            fit, rel = iq._release(model)
            key = release_seed(*iq.released_values(fit, rel))
            est.append(np.r_[model.intercept_, model.coef_])
            spars.append(iq.world_sparsities(fit, rel)[0])
            for w in worlds:
                # "normal" is the library's own world (its normal draws, bit for bit)
                ctx = contextlib.nullcontext() if w == "normal" else world_errors(draws[w])
                with ctx, warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    e, d = iq.simulate_worlds(model, iq.DEFAULT_N_SIM, random_state=key)
                cis[w].append(iq.simulated_interval(e, d, 0.05, iq.box_ranges(fit)))
            print(f"data set {i} done", flush=True)
    path = Path(out) / f"worlds_{law}_{n}_{start}_{stop}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        path,
        est=np.array(est),
        sparsity=np.array(spars),
        **{f"ci_{w}": np.array(c) for w, c in cis.items()},
    )
    return path


def worlds_score(paths):
    """Coverage and mean width per world and parameter of :func:`worlds_check`'s files
    (comma-separated), pooled; prints, with the released sparsity's quartiles."""
    import pandas as pd  # noqa: PLC0415

    files = [np.load(p) for p in paths.split(",")]
    worlds = [k[3:] for k in files[0].files if k.startswith("ci_")]
    est = np.concatenate([f["est"] for f in files])
    spars = np.concatenate([f["sparsity"] for f in files])
    cis = {w: np.concatenate([f[f"ci_{w}"] for f in files]) for w in worlds}
    if "normal" in cis:  # the hull of the library's world and each other one's window
        for w in [w for w in worlds if w != "normal"]:
            a, b = cis["normal"], cis[w]
            cis[f"hull normal, {w}"] = np.stack(
                [np.minimum(a[..., 0], b[..., 0]), np.maximum(a[..., 1], b[..., 1])], axis=-1
            )
    rows = []
    for w, ci in cis.items():
        for j, name in enumerate(cells_mod.KNG_NAMES):
            width = ci[:, j, 1] - ci[:, j, 0]
            rows.append(
                dict(
                    world=w,
                    param=name,
                    data_sets=len(ci),
                    coverage=_covers(ci, j).mean(),
                    mean_width=width.mean(),
                )
            )
    print(
        f"{len(est)} releases; released sparsity quartiles "
        f"{np.round(np.quantile(spars, [0.25, 0.5, 0.75]), 2)}; estimates' 2.5-97.5 % spread "
        f"{np.round(np.diff(np.quantile(est, [0.025, 0.975], axis=0), axis=0)[0], 2)}"
    )
    df = pd.DataFrame(rows)
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return df


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        grid = [float(e) for e in argv[6].split(",")] if len(argv) > 6 else cells_mod.EPS_GRID
        run(argv[1], int(argv[2]), int(argv[3]), int(argv[4]), argv[5], grid)
    elif argv[:1] == ["score"]:
        score(*argv[1:4])
    elif argv[:1] == ["compare"]:
        compare(*argv[1:4])
    elif argv[:1] == ["sampling"]:
        sampling_check(argv[1], int(argv[2]), int(argv[3]))
    elif argv[:1] == ["worlds"]:
        worlds_check(
            argv[1],
            int(argv[2]),
            int(argv[3]),
            int(argv[4]),
            float(argv[5]),
            argv[6].split(","),
            argv[7],
        )
    elif argv[:1] == ["worlds-score"]:
        worlds_score(argv[1])
    elif argv[:1] == ["paired"]:
        paired_check(argv[1], int(argv[2]), int(argv[3]), int(argv[4]), *argv[5:6])
    else:
        raise SystemExit(
            "usage: run LAW N START STOP DIR [EPS,...] | score LAW[,LAW...] DIR[,DIR...] [NAME]"
            " | compare LAW DIR[,DIR...] NORMAL_DIR[,DIR...] | sampling LAW N REPS"
            " | paired LAW N START STOP [DIR,...]"
            " | worlds LAW N START STOP EPS WORLD[,WORLD...] DIR | worlds-score FILE[,FILE...]"
        )


if __name__ == "__main__":
    main()
