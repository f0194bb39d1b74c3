"""The default intervals on a non-centred design (issue 15; docs/inference.md, "Non-centred
designs (session 11)").

Every committed inference cell draws a centred design (``x ~ U[-1, 1]^2``). Here ``x1 ~
U[-0.3, 1]`` (``X1_LOW``; mean 0.35, so the intercept and the x1 slope are correlated) and
``x2 ~ U[-1, 1]``, drawn from the same random stream as the benchmark's design
(``_inference_cells.shifted_x1``); the bounds, true coefficients, noise, budget shares and
interval calls are those of the committed cells:

* ``functional N REPS SEED [MAIN_INFERENCE_PY]``: ``FunctionalLinearRegression`` as in
  ``benchmarks.inference`` (``_functional_fit``, 250 draws, ``inference_share = 0.1``) at
  epsilon in {0.25, 1, 4}; per data set the library's interval (session 11: the intercept's
  interval around the de-noised intercept) and, on the *same* release, the interval of
  another ``_inference.py`` (e.g. main's before session 11, extracted with ``git show
  main:dpreg/linear_model/_inference.py > FILE``) loaded as a module: a paired comparison.
  The oracle width is the 2.5-97.5 % spread of the released estimates of the coverage fits
  pooled with ``ORACLE_EXTRA`` estimate-only fits on fresh data sets (as
  ``benchmarks.inference``). ``functional-diag N EPS REPS SEED [X1_LOW]``: the bias, the
  interval's z-scores and the coverage split by the library's warning
  (:func:`functional_diagnosis`; ``X1_LOW = -1`` is the centred control); nothing written.
* ``kng EPS START COUNT SEED DIR``: ``KNGQuantileRegressor`` through
  ``_inference_cells.kng_cells`` (fit at 0.6 epsilon, ``release_curvature`` at 0.4 epsilon,
  ``conf_int(0.05, n_boot=1000)`` with the default ``method="auto"``) on data sets
  ``START .. START + COUNT - 1`` of stream ``SEED``, pickled to ``DIR`` (chunks, as
  ``_inference_kng_chunks``), with the method ``"auto"`` chose for each interval.
  ``kng-score EPS SEED DIR`` scores all chunks of ``DIR``: the oracles are the spread of the
  released fits, of the whole-epsilon fits, and the asymptotic laws of both
  (``_inference_cells.kng_asymptotic`` with this design's population Gram matrix
  ``POP_GRAM``).

* ``functional-centred N REPS SEED``: the user-side remedy, the same design and fits with the
  public ``bounds_X`` of x1 set to its support ``(X1_LOW, 1)`` (so the scaled x1 is centred);
  prints the coverage per epsilon (each epsilon on its own stream ``SEED``); nothing written.

``functional`` and ``kng-score`` write their rows into
``benchmarks/results/inference_robust.csv`` (rows of the same estimator, n, epsilon and
interval are replaced). The CPU seconds of the run are printed.
"""

from __future__ import annotations

import importlib.util
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg.linear_model import _inference_quantile as iq
from dpreg.linear_model.functional import sufficient_statistics

from . import _inference_cells as cells_mod
from .inference import (
    BETA,
    BOUNDS_X,
    BOUNDS_Y,
    EPS_GRID,
    SHARE,
    _functional_fit,
    cell_estimates,
    score,
    with_full_oracle,
    with_pooled_oracle,
)

X1_LOW = -0.3
#: E[x1] and E[x1^2] of x1 ~ U[X1_LOW, 1]; x2 ~ U[-1, 1] is independent of x1
_MEAN1 = (X1_LOW + 1.0) / 2.0
_SQ1 = (1.0 - X1_LOW) ** 2 / 12.0 + _MEAN1**2
#: population Gram matrix per row of (1, x1, x2)
POP_GRAM = np.array([[1.0, _MEAN1, 0.0], [_MEAN1, _SQ1, 0.0], [0.0, 0.0, 1.0 / 3.0]])
#: estimate-only fits pooled into the functional oracle (the benchmark uses 4000)
ORACLE_EXTRA = 2000
N_BOOT = 250
RESULTS = Path(__file__).parent / "results" / "inference_robust.csv"


def simulate(n, rng, x1_low=X1_LOW):
    """``benchmarks.inference.simulate``'s model and stream with ``x1 ~ U[x1_low, 1]``."""
    X = cells_mod.shifted_x1(rng.uniform(-1.0, 1.0, size=(n, len(BETA) - 1)), x1_low)
    return X, BETA[0] + X @ BETA[1:] + rng.standard_normal(n)


def load_inference(path):
    """Another version of ``dpreg/linear_model/_inference.py`` as a module of the package
    (its relative imports resolve against the current ``dpreg``)."""
    name = "dpreg.linear_model._inference_other"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _interval(model, module, n_boot):
    model._inference_cache = None  # both versions cache under the same key
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ci = module.conf_int(model, 0.05, n_boot)
    model._inference_cache = None
    return ci


def functional_cells(n, reps, seed, other=None, n_boot=N_BOOT):
    """Per epsilon: released estimates (reps, 3), the library's intervals and those of the
    ``other`` module (reps, 3, 2) on the same releases (``benchmarks.inference.cell_draws``
    with this design)."""
    from dpreg.linear_model import _inference as current  # noqa: PLC0415

    rng, acc = np.random.default_rng(seed), BudgetAccountant()
    out = {eps: ([], [], []) for eps in EPS_GRID}
    for _ in range(reps):
        stats = sufficient_statistics(*simulate(n, rng), BOUNDS_X, BOUNDS_Y)
        for eps in EPS_GRID:
            model = _functional_fit(stats, eps, rng, acc)
            out[eps][0].append(np.r_[model.intercept_, model.coef_])
            out[eps][1].append(_interval(model, current, n_boot))
            if other is not None:
                out[eps][2].append(_interval(model, other, n_boot))
    return {eps: tuple(np.array(a) for a in v) for eps, v in out.items()}


def functional_rows(n, reps, seed, other_path=None):
    other = load_inference(other_path) if other_path else None
    cells = functional_cells(n, reps, seed, other)
    extra = cell_estimates(n, ORACLE_EXTRA, seed + 1, draw_data=simulate)
    rows = []
    for eps, (est, ci, ci_other) in cells.items():
        pooled = np.vstack([est, extra[eps]])
        kinds = [("library", ci)] + ([("main", ci_other)] if other is not None else [])
        for kind, c in kinds:
            new = with_pooled_oracle(score(n, eps, est, c), pooled)
            for r in new:
                r.update(interval=kind, design=f"x1~U[{X1_LOW:g},1]", seed=seed)
            rows += new
    return rows


def functional_diagnosis(n, eps, reps, seed, x1_low=X1_LOW, n_boot=N_BOOT):
    """Why a functional cell misses: per parameter the released estimates' mean error over
    their sd (bias), the interval's ``z = (theta0 - midpoint) / (half-width / 1.96)`` mean
    (off-centre) and sd (1 for a calibrated width), and the coverage among releases where
    ``_inference.poorly_determined`` (the library's small-n*epsilon warning) fires and where
    it does not; the smallest eigenvalue of the true ``Z^T Z`` (with the column of ones) and
    of the released Gram, the Gram noise sd, the PSD floor ``lam`` of the solve and how
    often it exceeds the true smallest eigenvalue (then the release is biased even without
    noise, while the bootstrap world's design is floored and cannot show that bias); since
    session 12 also how often the floor world (``_inference.floor_bootstrap``) is used and
    the error of its de-shrunk estimate.
    ``x1_low = -1``: the benchmark's centred design, the control."""
    from dpreg.linear_model import _inference as current  # noqa: PLC0415

    rng, acc = np.random.default_rng(seed), BudgetAccountant()
    est, ci, poor, world_bias, lam, floor_est = [], [], [], [], [], []
    for _ in range(reps):
        X, y = simulate(n, rng, x1_low)
        stats = sufficient_statistics(X, y, BOUNDS_X, BOUNDS_Y)
        model = _functional_fit(stats, eps, rng, acc)
        ns = model.noisy_statistics_
        est.append(np.r_[model.intercept_, model.coef_])
        ci.append(_interval(model, current, n_boot))
        poor.append(current.poorly_determined(ns))
        (centre, draws), floor = current.bootstrap_with_floor(
            ns, n_boot, current.release_seed(*current.released_values(ns))
        )
        world_bias.append(draws.mean(axis=0) - centre)
        floor_est.append(floor[0] if floor is not None else np.full(len(BETA), np.nan))
        Z = np.column_stack([np.ones(n), X])
        lam.append(
            [
                np.linalg.eigvalsh(Z.T @ Z)[0],
                np.linalg.eigvalsh(ns.gram)[0],
                ns.plan.gram_std,
                ns.lam,
            ]
        )
    est, ci, poor = np.array(est), np.array(ci), np.array(poor)
    world_bias, lam = np.array(world_bias), np.array(lam)
    mid, half = ci.mean(axis=2), (ci[:, :, 1] - ci[:, :, 0]) / 2.0
    z = (BETA - mid) / (half / 1.96)
    inside = (ci[:, :, 0] <= BETA) & (BETA <= ci[:, :, 1])
    r = lambda v: " / ".join(f"{x:.3f}" for x in v)  # noqa: E731
    print(f"n = {n}, eps = {eps:g}, x1 ~ U[{x1_low:g}, 1], {reps} data sets (seed {seed})")
    print(f"coverage {r(inside.mean(0))}")
    print(f"released estimate: mean error / sd {r((est - BETA).mean(0) / est.std(0, ddof=1))}")
    print(f"z mean {r(z.mean(0))}, z sd {r(z.std(0, ddof=1))}")
    sd = est.std(0, ddof=1)
    print(
        "bootstrap world's bias (mean draws - estimate) / real sd: "
        f"mean {r(world_bias.mean(0) / sd)}"
    )
    print(
        f"lambda_min of X'X (with the 1 column) {lam[:, 0].mean():.1f}, of the released Gram "
        f"{lam[:, 1].mean():.1f} (mean), Gram noise sd {lam[:, 2].mean():.1f}; the PSD floor "
        f"{lam[:, 3].mean():.1f} exceeds X'X's lambda_min in {np.mean(lam[:, 3] > lam[:, 0]):.3f}"
    )
    floor_est = np.array(floor_est)
    used = ~np.isnan(floor_est[:, 0])
    if used.any():
        err = (floor_est[used] - BETA) / sd
        print(
            f"floor world (session 12) used in {used.mean():.3f}; its de-shrunk estimate's "
            f"error / real sd of the release: mean {r(err.mean(0))}, sd {r(err.std(0, ddof=1))}"
        )
    for flag in (True, False):
        k = poor == flag
        if k.any():
            print(f"poorly_determined={flag}: {k.sum()} data sets, coverage {r(inside[k].mean(0))}")


class _MethodLog:
    """Records which method ``conf_int(method="auto")`` resolves to (a read-only wrapper
    of ``_inference_quantile._method``; it changes nothing)."""

    def __init__(self):
        self.chosen, self._inner = [], iq._method

    def __enter__(self):
        def wrapped(*args):
            use = self._inner(*args)
            self.chosen.append(use)
            return use

        iq._method = wrapped
        return self

    def __exit__(self, *exc):
        iq._method = self._inner


def kng_chunk(eps, start, count, seed, folder, bounds_X=(-1, 1)):
    """``bounds_X``: the fits' public feature bounds (``_inference_kng_robust remedy``)."""
    with _MethodLog() as log:
        cells = cells_mod.kng_cells(
            1000,
            count,
            1000,
            seed=seed,
            eps_grid=[eps],
            start=start,
            x1_low=X1_LOW,
            bounds_X=bounds_X,
        )
    path = Path(folder) / f"kng_{eps:g}_{start:04d}.pkl"
    with open(path, "wb") as f:
        pickle.dump((cells, log.chosen), f)
    return path


def kng_rows(eps, seed, folder, n=1000, n_asym=200_000):
    paths = sorted(Path(folder).glob(f"kng_{eps:g}_*.pkl"))
    chunks, chosen = [], []
    for p in paths:
        with open(p, "rb") as f:
            cells, log = pickle.load(f)
        chunks.append(cells)
        chosen += log
    est, ci, full, (ball, scale) = cells_mod.concat_cells(chunks)[eps]
    rows = score(n, eps, est, ci, cells_mod.KNG_BETA, cells_mod.KNG_NAMES, "kng")
    rng = np.random.default_rng(seed + 10**6)
    full_scale = scale / (1.0 - cells_mod.KNG_SHARE)  # scale = epsilon / (2 Delta)
    refs = {  # score's width_ratio: against the spread of the released fits
        "full": full,
        "asym": cells_mod.kng_asymptotic(n, ball, scale, n_asym, rng, gram=n * POP_GRAM),
        "full_asym": cells_mod.kng_asymptotic(n, ball, full_scale, n_asym, rng, n * POP_GRAM),
    }
    for key, draws in refs.items():
        with_full_oracle(rows, draws, key)
    methods = ",".join(f"{m}:{chosen.count(m)}" for m in sorted(set(chosen)))
    truth, used = cells_mod.KNG_BETA, np.array(chosen)
    inside = (ci[:, :, 0] <= truth) & (truth <= ci[:, :, 1])
    for m in sorted(set(chosen)):  # one conf_int per data set, in order
        k = used == m
        cov = " / ".join(f"{c:.3f}" for c in inside[k].mean(0))
        print(f"eps = {eps:g}, method {m}: {k.sum()} data sets, coverage {cov}")
    fmt = lambda v: " / ".join(f"{x:.3f}" for x in v)  # noqa: E731
    below, above = (truth < ci[:, :, 0]).mean(0), (truth > ci[:, :, 1]).mean(0)
    print(f"truth below the interval {fmt(below)}, above {fmt(above)}")
    err = est - truth
    print(
        f"released fit: mean error / sd {fmt(err.mean(0) / est.std(0, ddof=1))}, "
        f"median error {fmt(np.median(err, 0))}"
    )
    for r in rows:
        r.update(interval=f"library auto ({methods})", design=f"x1~U[{X1_LOW:g},1]", seed=seed)
        r["coverage_mc_sd"] = float(np.sqrt(0.05 * 0.95 / r["reps"]))
    return rows


def save_rows(rows):
    new = pd.DataFrame(rows)
    key = ["estimator", "n", "epsilon"]
    if RESULTS.exists():
        old = pd.read_csv(RESULTS)
        mine = new[key].drop_duplicates().merge(old, on=key, how="left", indicator=True)
        drop = old.set_index(key).index.isin(mine[mine["_merge"] == "both"].set_index(key).index)
        new = pd.concat([old[~drop], new], ignore_index=True)
    new = new.sort_values(["estimator", "n", "epsilon", "interval", "param"], kind="stable")
    new.to_csv(RESULTS, index=False, float_format="%.6g")
    return new


def functional_centred(n, reps, seed):
    """Coverage of the library's interval when the public bounds of x1 are its support
    ``(X1_LOW, 1)``: the affine scaling then maps x1 onto ``U[-1, 1]`` (the centred design
    in scaled units), and the PSD floor no longer binds in the truth."""
    bounds = (np.array([X1_LOW, BOUNDS_X[0]]), np.array([1.0, BOUNDS_X[1]]))
    out = {}
    for eps in EPS_GRID:
        rng, acc = np.random.default_rng(seed), BudgetAccountant()
        hits = []
        for _ in range(reps):
            X, y = simulate(n, rng)
            model = FunctionalLinearRegression(
                epsilon=eps,
                bounds_X=bounds,
                bounds_y=BOUNDS_Y,
                inference_share=SHARE,
                random_state=rng,
                accountant=acc,
            ).fit_statistics(sufficient_statistics(X, y, bounds, BOUNDS_Y))
            ci = np.asarray(_interval(model, _current_inference(), N_BOOT))
            hits.append((ci[:, 0] <= BETA) & (BETA <= ci[:, 1]))
        out[eps] = np.mean(hits, axis=0)
        print(f"n={n} eps={eps:g} bounds x1=({X1_LOW:g}, 1): coverage const/x1/x2 "
              f"{np.round(out[eps], 3)} ({reps} data sets)")  # fmt: skip
    return out


def _current_inference():
    from dpreg.linear_model import _inference  # noqa: PLC0415

    return _inference


def table(df):
    cols = ["estimator", "n", "epsilon", "interval", "param", "reps", "coverage", "width_ratio"]
    cols += [c for c in ("width_ratio_full", "width_ratio_asym") if c in df]
    return df[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}")


def main(argv):
    t = time.process_time()
    if argv[0] == "functional":
        n, reps, seed = int(argv[1]), int(argv[2]), int(argv[3])
        rows = functional_rows(n, reps, seed, argv[4] if len(argv) > 4 else None)
        print(table(pd.DataFrame(rows)))
        save_rows(rows)
    elif argv[0] == "functional-diag":
        n, eps, reps, seed = int(argv[1]), float(argv[2]), int(argv[3]), int(argv[4])
        functional_diagnosis(n, eps, reps, seed, float(argv[5]) if len(argv) > 5 else X1_LOW)
    elif argv[0] == "functional-centred":
        functional_centred(int(argv[1]), int(argv[2]), int(argv[3]))
    elif argv[0] == "kng":
        eps, start, count, seed = float(argv[1]), int(argv[2]), int(argv[3]), int(argv[4])
        print(kng_chunk(eps, start, count, seed, argv[5]))
    elif argv[0] == "kng-score":
        rows = kng_rows(float(argv[1]), int(argv[2]), argv[3])
        print(table(pd.DataFrame(rows)))
        save_rows(rows)
    else:
        raise SystemExit(__doc__)
    print(f"{time.process_time() - t:.1f} CPU-s (this process)")


if __name__ == "__main__":
    main(sys.argv[1:])
