"""The simulation bootstrap of the logistic intervals at small n * epsilon (docs/inference.md,
"Simulation bootstrap (session 10)").

The benchmark's model (``benchmarks/_inference_cells.py``: logit P(y = 1) = 0.5 + 1.5 x1 - x2,
``x ~ U[-1, 1]^2``, ``bounds_X = (-1, 1)``; the fit gets ``1 - hessian_share`` of epsilon and
``release_hessian`` the rest, so each interval spends exactly epsilon). On every data set:
the library's ``conf_int`` (linearised bootstrap, ``LIB_BOOT`` draws) and the two intervals of
:mod:`dpreg.linear_model._inference_logistic_sim` from one set of ``B`` refits of the real
mechanism (``basic`` and ``deshrunk``). Widths are over the 2.5-97.5% spread of the released
estimates (``own``) and of the de-shrunk estimates (``deshrunk``, ``_inference_cells.deshrunk``).

Run: ``python -m benchmarks._inference_logistic_sim N EPS REPS B SEED [START [KEYS [X1_LOW]]]``
(``KEYS`` comma-separated names of ``KEYS``; ``X1_LOW`` moves the design's x1 to
``U[X1_LOW, 1]``, a design correlated with the intercept); data set ``i``
has its own stream ``default_rng([SEED, i])`` so runs can be split into chunks. Writes the raw
per-data-set arrays to ``benchmarks/results/inference_logistic_sim_N_EPS_SEED_START.npz``
and prints the table; ``... summary FILE.npz ...`` prints the table of the concatenated files.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ._inference_cells import LOGIT_BETA, deshrunk, simulate_logistic

#: The benchmark's design has x1 ~ U[-1, 1]; ``x1_low > -1`` draws x1 ~ U[x1_low, 1] instead
#: (a design whose intercept and x1 are correlated; the same random draws, mapped affinely).
X1_LOW = -1.0


def _data(n, rng, x1_low=X1_LOW):
    if x1_low == -1.0:
        return simulate_logistic(n, rng)
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    X[:, 0] = x1_low + (1.0 - x1_low) * (X[:, 0] + 1.0) / 2.0
    p = 1.0 / (1.0 + np.exp(-(LOGIT_BETA[0] + X @ LOGIT_BETA[1:])))
    return X, (rng.uniform(size=n) < p).astype(int)


def release(n, eps, seed, i, ledger, share, x1_low=X1_LOW, bounds_X=(-1, 1)):
    """Data set ``i`` of stream ``seed`` and its release, as every logistic inference benchmark
    draws them: the fit at ``(1 - share) * eps`` and ``release_hessian`` at ``share * eps``, both
    from the data set's generator ``default_rng([seed, i])``, charged to ``ledger``. Returns
    ``(model, X, y, rng)`` (the model holds both releases); ``rng`` has advanced past them.
    ``bounds_X`` is the fit's public box (the benchmarks' ``(-1, 1)`` unless a run asks for the
    user-side remedy of a non-centred design, ``benchmarks/_inference_logistic_nc.py``)."""
    from dpreg import ObjectivePerturbationLogistic  # noqa: PLC0415

    rng = np.random.default_rng([seed, i])
    X, y = _data(n, rng, x1_low)
    m = ObjectivePerturbationLogistic(
        epsilon=(1 - share) * eps,
        bounds_X=bounds_X,
        classes=[0, 1],
        random_state=rng,
        accountant=ledger,
    ).fit(X, y)
    m.release_hessian(X, y, share * eps, random_state=rng)
    return m, X, y, rng


RESULTS = Path(__file__).parent / "results"
LIB_BOOT = 1000
KEYS = (
    "library",
    "sim basic",
    "sim deshrunk",
    "sim postmean",
    "sim pmdeshrunk",
    "auto",
    "sim cpmean",
    "sim cpdeshrunk",
)


def run(n, eps, reps, n_boot, seed, start=0, keys=KEYS, x1_low=X1_LOW):
    """``(estimates, de-shrunk estimates, {key: intervals}, fires)`` of data sets ``start`` to
    ``start + reps``; ``keys`` a subset of ``KEYS`` (every interval is seeded by its release,
    so leaving one out does not change the others). ``"library"`` is the linearised interval
    (``method="linear"``, ``LIB_BOOT`` draws), ``"auto"`` ``conf_int(method="auto")`` with
    ``n_sim = B`` (the simulation where the released check fires, else the linearised
    interval, ``LIB_BOOT`` draws); ``fires`` is that check per data set."""
    from dpreg import BudgetAccountant  # noqa: PLC0415
    from dpreg.linear_model import _inference_logistic_sim as sim  # noqa: PLC0415
    from dpreg.linear_model._inference_logistic import (  # noqa: PLC0415
        hessian_share,
        linear_law_poor,
    )

    ledger = BudgetAccountant()
    share = hessian_share(n, eps)
    est, ds, cis, fires = [], [], {k: [] for k in keys}, []
    for i in range(start, start + reps):
        m, X, y, rng = release(n, eps, seed, i, ledger, share, x1_low)
        if "library" in keys:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                cis["library"].append(m.conf_int(0.05, n_boot=LIB_BOOT, method="linear"))
        if {"sim basic", "sim deshrunk"} & set(keys):
            out = sim.simulation_draws(m, n_boot)
            for k in {"sim basic", "sim deshrunk"} & set(keys):
                cis[k].append(sim.interval_from_draws(m, *out, 0.05, k.split()[1]))
        pm = {"sim postmean": "basic", "sim pmdeshrunk": "deshrunk"}
        if set(pm) & set(keys):  # the design matches the posterior mean of the Hessian
            out = sim.simulation_draws(m, n_boot, target="posterior mean")
            for k in set(pm) & set(keys):
                cis[k].append(sim.interval_from_draws(m, *out, 0.05, pm[k]))
        cp = {"sim cpmean": "basic", "sim cpdeshrunk": "deshrunk"}
        if set(cp) & set(keys):  # the posterior-mean design with the coupling de-noised
            out = sim.simulation_draws(m, n_boot, target="posterior mean, coupling de-noised")
            for k in set(cp) & set(keys):
                cis[k].append(sim.interval_from_draws(m, *out, 0.05, cp[k]))
        if "auto" in keys:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                cis["auto"].append(m.conf_int(0.05, n_boot=LIB_BOOT, method="auto", n_sim=n_boot))
        fires.append(linear_law_poor(m, m.inference_release_))
        est.append(np.r_[m.intercept_, m.coef_.ravel()])
        ds.append(deshrunk(m, X))
    cis = {k: np.array(v) for k, v in cis.items()}
    return np.array(est), np.array(ds), cis, np.array(fires)


def table(est, ds, cis, fires=None):
    def spread(a):
        lo, hi = np.quantile(a, [0.025, 0.975], axis=0)
        return hi - lo

    own, de = spread(est), spread(ds)
    lines = [
        f"{len(est)} data sets"
        + ("" if fires is None else f"; the auto rule fires on {int(np.sum(fires))}"),
        "| interval | coverage const / x1 / x2 | width / own (mean) | (median) "
        "| width / de-shrunk | z mean | z sd |",
        "|---|---|---|---|---|---|---|",
    ]
    for k, ci in cis.items():
        w = ci[:, :, 1] - ci[:, :, 0]
        cov = ((ci[:, :, 0] <= LOGIT_BETA) & (LOGIT_BETA <= ci[:, :, 1])).mean(0)
        # z = (theta0 - centre) / (half-width / 1.96): mean 0 and sd 1 for a calibrated
        # normal interval; sd > 1 is too narrow, |mean| > 0 off-centre
        z = (LOGIT_BETA - ci.mean(axis=2)) / (w / 2.0) * 1.96
        cells = [cov, w.mean(0) / own, np.median(w, 0) / own, w.mean(0) / de, z.mean(0), z.std(0)]
        row = " | ".join(" / ".join(f"{v:.3f}" for v in c) for c in cells)
        lines.append(f"| {k} | {row} |")
    return "\n".join(lines)


def main(argv):
    if argv[0] == "summary":
        parts = [np.load(f) for f in argv[1:]]
        est = np.concatenate([p["est"] for p in parts])
        ds = np.concatenate([p["deshrunk"] for p in parts])
        cis = {
            k: np.concatenate([p[k.replace(" ", "_")] for p in parts])
            for k in KEYS
            if all(k.replace(" ", "_") in p for p in parts)
        }
        fires = [p["fires"] for p in parts if "fires" in p]
        print(table(est, ds, cis, np.concatenate(fires) if len(fires) == len(parts) else None))
        return
    n, eps, reps, n_boot, seed = int(argv[0]), float(argv[1]), *map(int, argv[2:5])
    start = int(argv[5]) if len(argv) > 5 else 0
    keys = tuple(argv[6].split(",")) if len(argv) > 6 else KEYS[:3]
    x1_low = float(argv[7]) if len(argv) > 7 else X1_LOW
    t = time.process_time()
    est, ds, cis, fires = run(n, eps, reps, n_boot, seed, start, keys, x1_low)
    cpu = time.process_time() - t
    RESULTS.mkdir(exist_ok=True)
    tag = "" if keys == KEYS[:3] else "_" + "_".join(k.replace(" ", "") for k in keys)
    tag += "" if x1_low == X1_LOW else f"_x1low{x1_low:g}"
    path = RESULTS / f"inference_logistic_sim_{n}_{eps:g}_{seed}_{start}{tag}.npz"
    arrays = {k.replace(" ", "_"): v for k, v in cis.items()}
    np.savez(path, est=est, deshrunk=ds, fires=fires, **arrays)
    print(f"n = {n}, eps = {eps:g}, B = {n_boot}, seed {seed}, start {start}: {cpu:.0f} CPU-s")
    print(table(est, ds, cis, fires))


if __name__ == "__main__":
    main(sys.argv[1:])
