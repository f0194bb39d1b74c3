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
  (a diagnosis only: it reads the data).

Each variant stores ``(estimate, draws)``. ``score DIR N EPS``: coverage of the truth
``(1, 2, -1)``, mean width and width over the committed oracle of
``benchmarks/results/inference_kng.csv`` (the 2.5-97.5 % spread of the released estimates
over the cell's data sets), per variant, for the basic and the percentile interval of the
draws (``score DIR N EPS NAME`` also writes ``benchmarks/results/NAME.csv``). ``rule N EPS
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

from . import _inference_cells as cells_mod
from . import inference as inf

N_SIM = 200
RESULTS = Path(__file__).parent / "results"


def _variant(model, X, name, alpha=0.05):
    import dpreg.linear_model._inference_quantile as iq  # noqa: PLC0415
    from dpreg._random import release_seed  # noqa: PLC0415

    if name in ("linear", "simulate"):
        model._inference_cache = None
        model.conf_int(alpha, n_boot=1000, method=name, n_sim=N_SIM)
        return model._inference_cache[2]
    fit, rel = iq._release(model)
    rng = np.random.default_rng(release_seed(*iq.released_values(fit, rel)))
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
    """The 95 % interval of the draws: ``basic`` (reflected about the estimate) or
    ``percentile``, intersected with the box ranges ``model_box``."""
    from dpreg.linear_model._inference import basic_interval_within  # noqa: PLC0415

    if kind == "basic":
        return basic_interval_within(est, draws, alpha, model_box)
    lo, hi = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
    return np.clip(np.column_stack([lo, hi]), model_box[:, :1], model_box[:, 1:])


def run(n, eps, start, stop, out, variants=("linear", "simulate")):
    import dpreg.linear_model._inference_quantile as iq  # noqa: PLC0415
    from dpreg import KNGQuantileRegressor  # noqa: PLC0415

    seed = 4000 + inf.N_GRID.index(n)
    share = cells_mod.KNG_SHARE
    folder = Path(out) / f"{n}_{eps:g}"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(start, stop):
        t = time.process_time()
        rng = np.random.default_rng([seed, i])
        X = rng.uniform(-1.0, 1.0, size=(n, 2))
        y = cells_mod.KNG_BETA[0] + X @ cells_mod.KNG_BETA[1:] + rng.standard_normal(n)
        model = KNGQuantileRegressor(
            epsilon=(1 - share) * eps,
            bounds_X=(-1, 1),
            bounds_y=(-7, 9),
            random_state=rng,
            progress_bar=False,
        ).fit(X, y)
        model.release_curvature(X, y, share * eps, random_state=rng)
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


def score(out, n, eps, name=None):
    ref = pd.read_csv(RESULTS / "inference_kng.csv")
    ref = ref[(ref.n == n) & (ref.epsilon == eps)].set_index("param")
    files = sorted((Path(out) / f"{n}_{eps:g}").glob("*.pkl"))
    data = [pickle.load(open(f, "rb")) for f in files]  # noqa: SIM115
    rows = []
    names = [v for v in data[0] if v not in ("box", "estimate")]
    kinds = [(v, k) for v in names for k in ("basic", "percentile")]
    for v, kind in kinds:
        if v == "linear" and kind == "percentile":
            continue  # symmetric draws: the same interval
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
