"""The simulation bootstrap of ``KNGQuantileRegressor.conf_int`` at small n * epsilon.

``run N EPS START STOP DIR [VARIANTS]``: data sets ``START <= i < STOP`` of the KNG cell
(n, epsilon) of ``benchmarks.inference`` -- the same streams and the same fit and curvature
draws as ``kng_cells`` when epsilon is the first epsilon of the grid it is run with
(``default_rng([4000 + N_GRID.index(n), i])``, fit at 0.6 epsilon, ``release_curvature`` at
0.4 epsilon) -- and for each the draws of several variants, one pickle per data set
(``{variant: (estimate, draws), "box": ..., "estimate": ...}``). Variants (comma-separated; default
``linear,simulate``):

* ``linear``: the linearised parametric bootstrap (``method="linear"``, 1000 draws);
* ``simulate``: the library's simulation bootstrap (``method="simulate"``, ``N_SIM`` fits:
  the released Gram matrix and sparsity plugged in);
* ``posterior``: the same synthetic fits, but each with a Gram matrix and a sparsity
  redrawn given their releases as the linearised bootstrap redraws them (``gram_draws``,
  ``sparsity_draws``; the library's first version, session 10);
* ``true``: the same with the data set's own Gram matrix and the true sparsity sqrt(2 pi)
  (a diagnosis only: it reads the data);
* ``plugin``: the released ``G~`` (PSD part floored) and the linearised sparsity
  ``2 t~ / L``: the draws of the library's ``simulate`` (sessions 10 and 11), by a second
  code path;
* ``normal_s``: ``G~`` as in ``plugin`` with :func:`normal_sparsity` (a diagnosis of
  session 11: the normal error law whose window holds exactly the released share);
* ``debiased`` / ``debiased_g``: :func:`debiased_gram` (a diagnosis of session 11, not the
  library's) with ``normal_sparsity`` / with ``2 t~ / L``.

Each variant stores ``(estimate, draws)``. ``score DIR N EPS``: coverage of the truth
``(1, 2, -1)``, mean width and width over the committed oracle of
``benchmarks/results/inference_kng.csv`` (the 2.5-97.5 % spread of the released estimates
over the cell's data sets), per variant, for the basic, the percentile and the shortest
interval of the draws (``score DIR N EPS NAME`` also writes
``benchmarks/results/NAME.csv``; ``DIR`` may join folders with commas and rename a
folder's variant with ``DIR@old=new``, see :func:`_load`). ``rule N EPS
REPS``: how often the ``auto`` rule simulates. ``law N EPS I REPS``: the
exact law of the release given data set ``I`` (``REPS`` refits).
"""

from __future__ import annotations

import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from . import _inference_cells as cells_mod
from . import inference as inf

N_SIM = 200
RESULTS = Path(__file__).parent / "results"


#: Noise draws and fixed-point steps of :func:`debiased_gram` (common random numbers: the
#: same draws at every step, so the map is deterministic given the release's seed).
DEBIAS_DRAWS = 1000
DEBIAS_STEPS = 40


def _design_block(G, o):
    """The design's own block of ``G`` (``(..., d, d)``): with an intercept (``o = 1``) the
    Schur complement ``G_zz - G_z0 G_0z / G_00`` (``n`` times the covariance of the rows, what
    the slopes' precision depends on), else ``G`` itself."""
    if not o:
        return G
    return G[..., 1:, 1:] - G[..., 1:, :1] * G[..., :1, 1:] / G[..., :1, :1]


def _from_block(C, m, n, o):
    """Inverse of :func:`_design_block` for the row mean ``m`` (``G_z0 / n``)."""
    if not o:
        return C
    top = np.concatenate([[float(n)], n * m])
    return np.vstack([top, np.column_stack([n * m, C + n * np.outer(m, m)])])


def _ascending(c):
    """The closest ascending sequence to ``c`` in least squares (pool adjacent violators,
    equal weights): a sorted spectrum for the fixed-point step of :func:`debiased_gram`."""
    blocks = []  # [mean, size]
    for v in np.asarray(c, float):
        blocks.append([v, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            (a, i), (b, j) = blocks[-2], blocks[-1]
            blocks[-2:] = [[(a * i + b * j) / (i + j), i + j]]
    return np.concatenate([np.full(k, v) for v, k in blocks])


def debiased_gram(fit, rel, rng, draws=DEBIAS_DRAWS, steps=DEBIAS_STEPS):
    r"""A diagnosis (measured, not the library's default; docs/inference.md, session 11).

    The released Gram matrix with the spread that the release noise adds to its spectrum
    taken out (post-processing: released ``G~``, the known noise law, public ``n``).

    The design's block ``C`` (:func:`_design_block`: with an intercept the Schur complement
    of the public corner ``G_00 = n``) sets the slopes' precision. Its release ``C~ = C + E``
    has symmetric zero-mean noise, but its spectrum is biased: ``lambda_min`` is a concave
    function of the matrix (a minimum of linear functions ``x^T C x``), so by Jensen
    ``E lambda_min(C + E) <= lambda_min(C)``, and ``lambda_max`` (convex) is biased up. With
    ``C`` about ``n / 3`` on the diagonal and entry noise of sd 60-130 (n = 1e3, a Gram budget
    of 0.07) the released smallest eigenvalue was a median 236 against a true 321 over 100
    data sets; a synthetic design with it carries far too little curvature in one direction
    and its KNG law too much mass on the plateau (``docs/inference.md``).

    The estimate keeps the eigenvectors ``U`` of ``C~`` and solves for the eigenvalues ``c``
    whose noisy version has, on average, the released sorted spectrum ``c~``: the moment
    equation ``mean_E* sort eig(C(c) + E*) = c~``, ``C(c) = U diag(c) U^T``, ``E*`` fresh draws
    of the release noise (public corner restored before the Schur complement), by the fixed
    point ``c <- c + (c~ - mean sort eig(C(c) + E*))``, kept ascending (pool adjacent
    violators: where the noise alone explains the spread, the eigenvalues merge) and floored
    at ``iq.GRAM_FLOOR``. The row mean ``m = G~_z0 / n`` (zero-mean noise, no such bias) is
    kept. Returns the Gram matrix with the public corner.
    """
    import dpreg.linear_model._inference_quantile as iq  # noqa: PLC0415
    from dpreg.linear_model._inference_logistic import _noise_draws  # noqa: PLC0415

    o = int(fit.fit_intercept)
    n = fit.n
    Gt = iq.public_gram(fit, rel.gram.hessian)
    m = Gt[1:, 0] / n if o else None
    ct, U = np.linalg.eigh(_design_block(Gt, o))
    E = _noise_draws(rel.gram, draws, rng)
    c = np.maximum(ct, iq.GRAM_FLOOR)
    for _ in range(steps):
        noisy = iq.public_gram(fit, _from_block((U * c) @ U.T, m, n, o)[None] + E)
        mean = np.linalg.eigvalsh(_design_block(noisy, o)).mean(axis=0)
        c = np.maximum(_ascending(c + (ct - mean)), iq.GRAM_FLOOR)
    return _from_block((U * c) @ U.T, m, n, o)


def normal_sparsity(fit, rel):
    """A diagnosis (measured, not the library's: it widened the intervals; docs/inference.md,
    session 11). The sparsity of the normal error law whose window ``|e| <= t~`` holds the released
    share ``L`` (the simulation's error model; post-processing of ``t~``).

    For errors ``e = sigma (N - q)`` with ``q = Phi^-1(tau)`` (``tau``-quantile 0) the share is
    ``Phi(q + t / sigma) - Phi(q - t / sigma)``, increasing in ``t / sigma``; solving it for
    ``x = t~ / sigma`` gives ``s = sigma / phi(q)``. The linearised ``2 t~ / L`` takes the
    density at the quantile for its mean over the window, which for a density peaked there
    (the normal at ``tau = 1/2``) over-states ``s``: by 6.3 % at ``L = 0.46`` (n = 1e3,
    epsilon = 0.25). With this ``s`` the synthetic errors reproduce the released window."""
    from scipy.optimize import brentq  # noqa: PLC0415

    t = max(float(rel.radius), 0.0)
    q = float(norm.ppf(fit.tau))
    level = float(rel.level)
    if t == 0.0:
        return 0.0

    def share(x):
        return norm.cdf(q + x) - norm.cdf(q - x) - level

    x = brentq(share, 0.0, 50.0, xtol=1e-12)
    return float(t / x / norm.pdf(q))


def _variant(model, X, name, alpha=0.05):
    import dpreg.linear_model._inference_quantile as iq  # noqa: PLC0415
    from dpreg._random import release_seed  # noqa: PLC0415

    if name in ("linear", "simulate"):
        model._inference_cache = None
        model.conf_int(alpha, n_boot=1000, method=name, n_sim=N_SIM)
        est, draws = model._inference_cache[2]
        if name == "linear":
            return est, draws
        (world,) = draws  # the simulation's worlds: one at the cells' quantile 1/2
        return est, world
    fit, rel = iq._release(model)
    rng = np.random.default_rng(release_seed(*iq.released_values(fit, rel)))
    if name in ("plugin", "normal_s", "debiased", "debiased_g"):
        # the Gram matrix: G~ (PSD part, floored; session 10) or debiased_gram; the
        # sparsity: 2 t~ / L (session 10) or normal_sparsity
        if name.startswith("debiased"):
            G = debiased_gram(fit, rel, rng)
        else:
            lam, Q = np.linalg.eigh(iq.public_gram(fit, rel.gram.hessian))
            G = (Q * np.maximum(lam, iq.GRAM_FLOOR)) @ Q.T
        if name in ("normal_s", "debiased"):
            s = normal_sparsity(fit, rel)
        else:
            s = 2.0 * max(float(rel.radius), 0.0) / float(rel.level)
        return iq.simulate_from(model, np.repeat(G[None], N_SIM, 0), np.full(N_SIM, s), rng)
    if name == "posterior":
        lam, Q = iq.gram_draws(fit, rel, N_SIM, rng)
        grams = np.einsum("bij,bj,bkj->bik", Q, lam, Q)
        return iq.simulate_from(model, grams, iq.sparsity_draws(rel, N_SIM, rng), rng)
    if name == "true":
        W = np.column_stack([np.ones(len(X)), X])  # bounds_X = (-1, 1): scaled = user units
        G, s = W.T @ W, np.sqrt(2.0 * np.pi)
    else:
        raise SystemExit(f"unknown variant {name}")
    return iq.simulate_from(model, np.repeat(G[None], N_SIM, 0), np.full(N_SIM, s), rng)


def intervals(model_box, est, draws, kind, alpha=0.05):
    """The 95 % interval of the draws: ``basic`` (reflected about the estimate),
    ``percentile``, ``shortest`` (the shortest interval of the pivot, the library's default
    in sessions 11-12) or ``default`` (the library's default since session 13 at the
    benchmark's quantile 1/2: the draws' own shortest window,
    ``_inference_quantile.simulated_interval``), intersected with the box ranges
    ``model_box``."""
    from dpreg.linear_model._inference import basic_interval_within  # noqa: PLC0415

    if kind == "default":
        from dpreg.linear_model._inference_quantile import simulated_interval  # noqa: PLC0415

        return simulated_interval(est, draws, alpha, model_box)
    if kind == "basic":
        return basic_interval_within(est, draws, alpha, model_box)
    if kind == "shortest":
        from dpreg.linear_model._inference_quantile import shortest_interval  # noqa: PLC0415

        return shortest_interval(est, draws, alpha, model_box)
    lo, hi = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
    return np.clip(np.column_stack([lo, hi]), model_box[:, :1], model_box[:, 1:])


def release(n, eps, seed, i, x1_low=-1.0, bounds_X=(-1, 1)):
    """``(X, y, model)``: data set ``i`` of stream ``seed`` as ``_inference_cells.kng_cells``
    draws it (``x1_low`` > -1: the non-centred design of ``_inference_robust``), fitted at
    ``(1 - KNG_SHARE) * eps`` with its curvature release at ``KNG_SHARE * eps``, both from the
    data set's generator ``default_rng([seed, i])``. ``bounds_X`` is the fit's public box."""
    first = cells_mod.kng_releases(
        n, 1, seed, [eps], full_fits=False, start=i, x1_low=x1_low, bounds_X=bounds_X
    )
    _, X, y, _, model, _ = next(first)  # the cells' own data, fit and curvature release
    return X, y, model


def run(n, eps, start, stop, out, variants=("linear", "simulate")):
    import dpreg.linear_model._inference_quantile as iq  # noqa: PLC0415

    seed = 4000 + inf.N_GRID.index(n)
    folder = Path(out) / f"{n}_{eps:g}"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(start, stop):
        t = time.process_time()
        X, y, model = release(n, eps, seed, i)
        est = np.r_[model.intercept_, model.coef_]
        res = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for v in variants:
                res[v] = _variant(model, X, v)
        res["box"] = iq.box_ranges(model.kng_release_)
        res["estimate"] = est
        with open(folder / f"{i:04d}.pkl", "wb") as fh:
            pickle.dump(res, fh)
        print(i, f"cpu s {time.process_time() - t:.1f}", flush=True)


def _load(out, n, eps):
    """The pickles of ``out``: one folder, or several joined by commas whose data sets are
    merged by file name (the first folder's data sets; each must have the same released
    estimate in every folder). ``DIR@old=new`` renames variant ``old`` of that folder (e.g.
    session 10's ``simulate`` draws, which are the ``plugin`` variant)."""
    merged, files = {}, None
    for part in out.split(","):
        folder, _, rename = part.partition("@")
        old, _, new = rename.partition("=")
        found = sorted((Path(folder) / f"{n}_{eps:g}").glob("*.pkl"))
        if files is None:
            files = found
        for f in found:
            with open(f, "rb") as fh:
                d = pickle.load(fh)
            if old and old in d:
                d[new] = d.pop(old)
            have = merged.setdefault(f.name, d)
            if have is not d and f.name in {g.name for g in files}:
                if not np.array_equal(have["estimate"], d["estimate"]):
                    raise SystemExit(f"{f}: another release than in the first folder")
                have.update({k: v for k, v in d.items() if k not in ("box", "estimate")})
    return [merged[f.name] for f in files], files


def score(out, n, eps, name=None):
    ref = pd.read_csv(RESULTS / "inference_kng.csv")
    ref = ref[(ref.n == n) & (ref.epsilon == eps)].set_index("param")
    data, files = _load(out, n, eps)
    rows = []
    names = list(dict.fromkeys(v for d in data for v in d if v not in ("box", "estimate")))
    kinds = [(v, k) for v in names for k in ("basic", "percentile", "shortest")]
    for v, kind in kinds:
        if v == "linear" and kind != "basic":
            continue  # symmetric draws: the same interval; the library's linear one is basic
        have = [intervals(d["box"], *d[v], kind) for d in data if v in d]
        ci = np.array(have)
        cover = (ci[:, :, 0] <= cells_mod.KNG_BETA) & (cells_mod.KNG_BETA <= ci[:, :, 1])
        width = ci[:, :, 1] - ci[:, :, 0]
        for j, param in enumerate(cells_mod.KNG_NAMES):
            rows.append(
                {
                    "variant": v,
                    "interval": kind,
                    "param": param,
                    "reps": len(have),
                    "coverage": cover[:, j].mean(),
                    "coverage_mc_sd": (0.05 * 0.95 / len(have)) ** 0.5,
                    "mean_width": width[:, j].mean(),
                    "median_width": np.median(width[:, j]),
                    "width_ratio": width[:, j].mean() / ref.loc[param, "oracle_width"],
                    "width_ratio_asym": width[:, j].mean() / ref.loc[param, "oracle_width_asym"],
                }
            )
    df = pd.DataFrame(rows)
    print(f"n={n}, epsilon={eps:g}: data sets {files[0].stem}-{files[-1].stem}")
    print(df.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    if name:  # e.g. inference_kng_sim: benchmarks/results/NAME.csv
        df.to_csv(RESULTS / f"{name}.csv", index=False)
    return df


def rule(n, eps, reps):
    """How often ``conf_int(method="auto")`` simulates: the share of ``reps`` released fits
    (fit at 0.6 epsilon, curvature at 0.4 epsilon, data set ``i`` from ``default_rng([4000 +
    N_GRID.index(n), i])``) whose released check :func:`linear_law_poor` fails."""
    import dpreg.linear_model._inference_quantile as iq  # noqa: PLC0415
    from dpreg import KNGQuantileRegressor  # noqa: PLC0415

    seed, share, fires = 4000 + inf.N_GRID.index(n), cells_mod.KNG_SHARE, 0
    for i in range(reps):
        rng = np.random.default_rng([seed, i])
        X = rng.uniform(-1.0, 1.0, size=(n, 2))
        y = cells_mod.KNG_BETA[0] + X @ cells_mod.KNG_BETA[1:] + rng.standard_normal(n)
        m = KNGQuantileRegressor(
            epsilon=(1 - share) * eps, bounds_X=(-1, 1), bounds_y=(-7, 9), random_state=rng
        ).fit(X, y)
        m.release_curvature(X, y, share * eps, random_state=rng)
        fires += iq.linear_law_poor(m.kng_release_, m.curvature_release_)
    print(f"n={n}, epsilon={eps:g}: the check fails in {fires} of {reps} released fits")


def law(n, eps, i, reps):
    """The exact law of the release given data set ``i``: ``reps`` fits (0.6 epsilon) of the
    same data with fresh seeds; quantiles and the mass far from the median."""
    from dpreg import KNGQuantileRegressor  # noqa: PLC0415

    rng = np.random.default_rng([4000 + inf.N_GRID.index(n), i])
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    y = cells_mod.KNG_BETA[0] + X @ cells_mod.KNG_BETA[1:] + rng.standard_normal(n)
    eps_fit = (1 - cells_mod.KNG_SHARE) * eps
    draws = np.array(
        [
            np.r_[m.intercept_, m.coef_]
            for m in (
                KNGQuantileRegressor(
                    epsilon=eps_fit, bounds_X=(-1, 1), bounds_y=(-7, 9), random_state=10_000 + b
                ).fit(X, y)
                for b in range(reps)
            )
        ]
    )
    q = np.percentile(draws, [2.5, 50, 97.5], axis=0)
    print("2.5 / 50 / 97.5 %:", q.round(2).tolist(), "95 % width:", (q[2] - q[0]).round(2))
    for r in (0.25, 0.5, 1.0, 2.0):
        print(f"share farther than {r} from the median:", np.mean(np.abs(draws - q[1]) > r, 0))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        variants = argv[6].split(",") if len(argv) > 6 else ("linear", "simulate")
        run(int(argv[1]), float(argv[2]), int(argv[3]), int(argv[4]), argv[5], variants)
    elif argv[:1] == ["score"]:
        score(argv[1], int(argv[2]), float(argv[3]), *argv[4:5])
    elif argv[:1] == ["rule"]:
        rule(int(argv[1]), float(argv[2]), int(argv[3]))
    elif argv[:1] == ["law"]:
        law(int(argv[1]), float(argv[2]), int(argv[3]), int(argv[4]))
    else:
        raise SystemExit(
            "usage: run N EPS START STOP DIR [VARIANTS] | score DIR N EPS [NAME] | "
            "rule N EPS REPS | law N EPS DATASET REPS"
        )


if __name__ == "__main__":
    main()
