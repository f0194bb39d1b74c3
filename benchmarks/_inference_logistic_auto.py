"""Where the logistic intervals' opt-in ``method="auto"`` simulates, and what it gives there
(docs/inference.md, "method='auto'").

``conf_int(method="auto")`` simulates (``_inference_logistic_sim``) where the released check
``linear_law_poor`` fires (the linearised interval misses a shrinkage factor above
``SHRINKAGE_LIMIT``), and linearises otherwise, bit for bit as before. Both parts below read
the check from the releases only; neither runs a refit of its own except ``check``.

* ``fires [REPS]``: the check on the data sets of the committed
  ``benchmarks/results/inference_logistic.csv`` (``benchmarks.inference``: seed ``2000 + i``
  for the i-th n, the same random stream replayed by ``_inference_cells.logistic_releases``;
  the spread of the replayed estimates is compared with the 400-data-set oracle width of
  those data sets, ``oracle_width_400`` of ``inference_logistic_oracle.csv`` (the committed
  CSV's ``oracle_width`` pools estimate-only data sets since session 13), to show it is the
  same stream). Writes ``inference_logistic_auto_fires.csv``: per cell the share of
  data sets where it fires, where the Hessian warning fires, and quantiles of the released
  shrinkage ``max_j (H~^{-1} P)_jj``.
* ``cells``: n = 1e3, epsilon = 0.25 and 1 on the 200 data sets per cell of the session-10
  measurement (seed 31, ``python -m benchmarks._inference_logistic_sim``, raw arrays
  committed). The auto interval is assembled from those arrays: the simulation's
  (``sim_pmdeshrunk``, B = 200 refits = ``DEFAULT_N_SIM``) where the check fires, the
  library's linearised interval (``library``, 1000 draws) where it does not. Writes
  ``inference_logistic_auto.csv`` with both rows per coordinate.
* ``check K``: recomputes ``conf_int(method="auto")`` on K data sets per cell of ``cells``
  and asserts that it equals the assembled interval exactly.
* ``intercept N EPS REPS [X1_LOW]``: why the simulation's intercept interval is wide
  (docs/inference.md, "The simulation's intercept"). No refits: per data set (seed 31, or
  the ``X1_LOW`` design of ``_inference_logistic_sim``) the standard deviation of the
  de-shrunk estimate under the linear law, ``sqrt(diag(H^-1 + H^-1 Sigma_V H^-1))``, with
  the synthetic design's exact Hessian ``H_s`` against the true ``H_0``, and with parts of
  ``H_s`` replaced by ``H_0``'s (the intercept-slope coupling ``H[0, 1:]``, the intercept
  entry ``H[0, 0]``), for each design target.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ._inference_cells import EPS_GRID, LOGIT_BETA, LOGIT_NAMES
from ._inference_logistic_sim import release

RESULTS = Path(__file__).parent / "results"
N_GRID = (1000, 10_000, 100_000)
SIM_SEED, SIM_CELLS = 31, {0.25: (0, 100), 1.0: (0, 100)}


def _spread(a):
    lo, hi = np.quantile(a, [0.025, 0.975], axis=0)
    return hi - lo


def fires(reps=400):
    from dpreg.linear_model._inference_logistic import (  # noqa: PLC0415
        SHRINKAGE_LIMIT,
        missing_shrinkage,
        poorly_determined,
    )

    from ._inference_cells import logistic_releases  # noqa: PLC0415

    # the coverage data sets' own spread (inference_logistic.csv pools more data sets)
    committed = pd.read_csv(RESULTS / "inference_logistic_oracle.csv")
    rows = []
    for i, n in enumerate(N_GRID):
        t = time.process_time()
        seen = {eps: ([], [], []) for eps in EPS_GRID}
        for _, eps, model, _ in logistic_releases(n, reps, 2000 + i):
            rel = model.inference_release_
            seen[eps][0].append(missing_shrinkage(model, rel))
            seen[eps][1].append(poorly_determined(rel))
            seen[eps][2].append(np.r_[model.intercept_, model.coef_.ravel()])
        cpu = time.process_time() - t
        for eps, (f, warn, est) in seen.items():
            f = np.array(f)
            ref = committed.query("n == @n and epsilon == @eps")["oracle_width_400"].to_numpy()
            same = reps == 400 and np.allclose(_spread(np.array(est)), ref, rtol=1e-12)
            # order statistics (inf where H~ is not positive definite): no interpolation
            q = np.quantile(f, [0.0, 0.5, 1.0], method="inverted_cdf")
            rows.append(
                dict(
                    n=n,
                    epsilon=eps,
                    reps=reps,
                    fires=float(np.mean(f > SHRINKAGE_LIMIT)),
                    warns=float(np.mean(warn)),
                    shrinkage_min=q[0],
                    shrinkage_median=q[1],
                    shrinkage_max=q[2],
                    same_data_as_committed=bool(same),
                )
            )
        print(f"n = {n}: {cpu:.0f} CPU-s")
    df = pd.DataFrame(rows)
    df.to_csv(RESULTS / "inference_logistic_auto_fires.csv", index=False)
    print(df.to_string(index=False))
    return df


def _arrays(eps):
    """The session-10 arrays of one cell: estimates, de-shrunk estimates, library and
    simulation intervals (data sets 0 to 199 of seed 31)."""
    tag = f"1000_{eps:g}_{SIM_SEED}"
    lib = sorted(RESULTS.glob(f"inference_logistic_sim_{tag}_[0-9]*.npz"), key=_start)
    lib = [np.load(p) for p in lib if len(p.stem.split("_")) == 7]  # the default keys only
    sim = [
        np.load(RESULTS / f"inference_logistic_sim_{tag}_{s}_simpostmean_simpmdeshrunk.npz")
        for s in SIM_CELLS[eps]
    ]
    cat = lambda parts, k: np.concatenate([p[k] for p in parts])  # noqa: E731
    est, sim_est = cat(lib, "est"), cat(sim, "est")
    assert np.array_equal(est, sim_est), "the two runs must hold the same fits"
    return est, cat(lib, "deshrunk"), cat(lib, "library"), cat(sim, "sim_pmdeshrunk")


def _start(path):
    return int(path.stem.split("_")[6])


def _releases(eps, idx):
    """The fits and releases of data sets ``idx`` of seed 31 (``_inference_logistic_sim.run``)."""
    from dpreg import BudgetAccountant  # noqa: PLC0415
    from dpreg.linear_model._inference_logistic import hessian_share  # noqa: PLC0415

    ledger, share = BudgetAccountant(), hessian_share(1000, eps)
    for i in idx:
        yield i, release(1000, eps, SIM_SEED, i, ledger, share, -1.0)[0]


def cells():
    from dpreg.linear_model._inference_logistic import linear_law_poor  # noqa: PLC0415

    rows = []
    for eps in SIM_CELLS:
        est, ds, lib, sim = _arrays(eps)
        fired = []
        for i, m in _releases(eps, range(len(est))):
            assert np.array_equal(np.r_[m.intercept_, m.coef_.ravel()], est[i])
            fired.append(linear_law_poor(m, m.inference_release_))
        fired = np.array(fired)
        auto = np.where(fired[:, None, None], sim, lib)
        own, de = _spread(est), _spread(ds)
        for method, ci in (("linear", lib), ("auto", auto)):
            w = ci[:, :, 1] - ci[:, :, 0]
            cov = ((ci[:, :, 0] <= LOGIT_BETA) & (LOGIT_BETA <= ci[:, :, 1])).mean(0)
            for j, name in enumerate(LOGIT_NAMES):
                rows.append(
                    dict(
                        estimator="logistic",
                        n=1000,
                        epsilon=eps,
                        param=name,
                        reps=len(est),
                        method=method,
                        fires=float(fired.mean()),
                        coverage=cov[j],
                        mean_width=w[:, j].mean(),
                        oracle_width=own[j],
                        width_ratio=w[:, j].mean() / own[j],
                        median_width_ratio=np.median(w[:, j]) / own[j],
                        oracle_width_deshrunk=de[j],
                        width_ratio_deshrunk=w[:, j].mean() / de[j],
                    )
                )
    df = pd.DataFrame(rows)
    df.to_csv(RESULTS / "inference_logistic_auto.csv", index=False)
    print(df.round(3).to_string(index=False))
    return df


def check(k):
    """``conf_int(method="auto")`` on ``k`` data sets per cell equals the assembled interval."""
    for eps in SIM_CELLS:
        est, _, lib, sim = _arrays(eps)
        idx = np.random.default_rng(0).choice(len(est), size=k, replace=False)
        t = time.process_time()
        for i, m in _releases(eps, sorted(idx)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                ci = m.conf_int(0.05, method="auto")
            from dpreg.linear_model._inference_logistic import linear_law_poor  # noqa: PLC0415

            expected = sim[i] if linear_law_poor(m, m.inference_release_) else lib[i]
            assert np.array_equal(ci, expected), (eps, i)
        cpu = time.process_time() - t
        print(
            f"eps = {eps:g}: conf_int(method=auto) equals the assembled interval on {k} data sets "
            f"({cpu:.0f} CPU-s)"
        )


def intercept(n, eps, reps, x1_low=-1.0, seed=SIM_SEED):
    from scipy.special import expit  # noqa: PLC0415

    from dpreg import BudgetAccountant  # noqa: PLC0415
    from dpreg.linear_model import _inference_logistic as il  # noqa: PLC0415
    from dpreg.linear_model import _inference_logistic_sim as sim  # noqa: PLC0415
    from dpreg.noise import KNormMechanism  # noqa: PLC0415
    from dpreg.noise._exact import float_knorm_sample  # noqa: PLC0415

    def hessian(Z, theta):
        a = expit(Z @ theta)
        return (Z * (a * (1.0 - a))[:, None]).T @ Z

    def sd(H, SV):
        Hi = np.linalg.inv(H)
        return np.sqrt(np.diag(Hi + Hi @ SV @ Hi))

    ledger, share, t = BudgetAccountant(), il.hessian_share(n, eps), time.process_time()
    ratios = {}
    for i in range(reps):
        m, X, y, rng = release(n, eps, seed, i, ledger, share, x1_low)
        theta = m.theta_[0]
        H0 = hessian(np.column_stack([np.ones(n), X]), LOGIT_BETA)
        eps_op = m.epsilon_per_problem_ - m.amp_epsilon_
        vm = KNormMechanism(m.norm_, 3, m.sensitivity_, eps_op * m.q_)
        V = float_knorm_sample(vm.ball, vm.sensitivity / vm.epsilon, 20_000, rng)
        SV, ref = np.cov(V.T), None
        ref = sd(H0, SV)
        rel, u, _, post_ss = sim._world(m, 2)
        for target in sim.TARGETS[1:]:
            T = sim.design_target(m, rel, target, post_ss)
            Hs = sim.loss_hessian(
                np.column_stack([np.ones(n), sim.synthetic_design(T, theta, n, u)]), theta
            )
            coupling, corner = Hs.copy(), Hs.copy()
            coupling[0, 1:] = coupling[1:, 0] = H0[0, 1:]
            corner[0, 0] = H0[0, 0]
            for part, H in (("H_s", Hs), ("true coupling", coupling), ("true H00", corner)):
                ratios.setdefault((target, part), []).append(sd(H, SV) / ref)
    cpu = time.process_time() - t
    print(f"n = {n}, eps = {eps:g}, {reps} data sets, x1 ~ U[{x1_low:g}, 1]: {cpu:.0f} CPU-s")
    print("sd of the de-shrunk estimate, synthetic world over truth: mean / median per coordinate")
    for (target, part), r in ratios.items():
        r = np.array(r)
        print(
            f"  {target:36s} {part:14s} mean {np.round(r.mean(0), 3)} "
            f"median {np.round(np.median(r, 0), 3)}"
        )


WORLDS = ("library", "pm design, truth theta0", "true design, truth theta~", "true world")


def worlds(eps, reps, start=0, x1_low=-0.3, keys=WORLDS, seed=41, n_sim=200):
    """Which part of the synthetic world makes the simulation narrow (oracle ingredients,
    simulation only): on data sets ``start ...`` of ``_inference_logistic_sim``'s design, the
    de-shrunk interval ``phi(theta~) - [q_hi, q_lo]`` of ``phi(theta*) - truth_world`` (``phi``
    from the world's exact loss Hessian at its truth) in the worlds of ``WORLDS``: the
    library's (posterior-mean design at ``theta~``, recomputed here and checked against
    ``conf_int(method="simulate")`` on the first data set), the same design target at the true
    ``theta0``, the data set's own ``X`` at ``theta~``, and ``X`` at ``theta0`` (the exact
    world: its refits have the law of the released estimate given ``X``, so its interval is
    the best a simulation can do; it covers about (195 - 5) / 201 = 0.945 with 200 refits).
    ``keys`` a subset of ``WORLDS``. Writes
    ``inference_logistic_auto_worlds_EPS_SEED_START_x1lowX1_LOW[_KEYS].npz``."""
    from dpreg import BudgetAccountant  # noqa: PLC0415
    from dpreg.linear_model import _inference_logistic as il  # noqa: PLC0415
    from dpreg.linear_model import _inference_logistic_sim as sim  # noqa: PLC0415

    n, ledger, share, t = 1000, BudgetAccountant(), il.hessian_share(1000, eps), time.process_time()
    cis, est, ds = {w: [] for w in keys}, [], []
    for i in range(start, start + reps):
        m, X, y, rng = release(n, eps, seed, i, ledger, share, x1_low)
        theta, P = m.theta_[0], il._penalty(m, 3)
        rel, u, rep_ss, post_ss = sim._world(m, n_sim)
        target = sim.design_target(m, rel, "posterior mean", post_ss)
        for w in keys:
            truth = LOGIT_BETA if w in ("pm design, truth theta0", "true world") else theta
            if w.startswith("true"):
                x = X
            else:
                x = sim.synthetic_design(target, truth, n, u)
            Hs = sim.loss_hessian(np.column_stack([np.ones(n), x]), truth)
            phi = np.eye(3) + np.linalg.solve(Hs, P)
            pivot = (sim.refit_draws(m, x, truth, rep_ss) - truth) @ phi.T + truth @ phi.T - truth
            lo, hi = np.quantile(pivot, [0.025, 0.975], axis=0)
            ci = np.column_stack([phi @ theta - hi, phi @ theta - lo])
            if w == "library" and i == start:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    lib = m.conf_int(0.05, method="simulate", n_sim=n_sim)
                assert np.allclose(ci, lib, rtol=0, atol=1e-9), (ci, lib)
            cis[w].append(ci)
        from ._inference_cells import deshrunk  # noqa: PLC0415

        est.append(theta.copy())
        ds.append(deshrunk(m, X))
    cpu = time.process_time() - t
    arrays = {w.replace(" ", "_").replace(",", ""): np.array(v) for w, v in cis.items()}
    tag = "" if tuple(keys) == WORLDS else "_" + "_".join(arrays)
    path = (
        RESULTS / f"inference_logistic_auto_worlds_{eps:g}_{seed}_{start}_x1low{x1_low:g}{tag}.npz"
    )
    np.savez(path, est=np.array(est), deshrunk=np.array(ds), **arrays)
    print(
        f"eps = {eps:g}, data sets {start}-{start + reps - 1}, x1 ~ U[{x1_low:g}, 1]: "
        f"{cpu:.0f} CPU-s"
    )
    worlds_table([path])


def worlds_table(paths):
    parts = [np.load(p) for p in paths]
    ds = np.concatenate([p["deshrunk"] for p in parts])
    sd0 = ds.std(0)
    print(f"{len(ds)} data sets; sd of the de-shrunk estimate {np.round(sd0, 3)}")
    print("| world | coverage const / x1 / x2 | (half-width/1.96) / sd, mean | median | z sd |")
    print("|---|---|---|---|---|")
    for k in parts[0].files:
        if k in ("est", "deshrunk"):
            continue
        ci = np.concatenate([p[k] for p in parts])
        w = ci[:, :, 1] - ci[:, :, 0]
        cov = ((ci[:, :, 0] <= LOGIT_BETA) & (LOGIT_BETA <= ci[:, :, 1])).mean(0)
        r = w / 3.92 / sd0
        z = (LOGIT_BETA - ci.mean(axis=2)) / (w / 3.92)
        cells = [cov, r.mean(0), np.median(r, 0), z.std(0)]
        print(f"| {k} | " + " | ".join(" / ".join(f"{v:.3f}" for v in c) for c in cells) + " |")


def _world_files(eps, seed=41, x1_low=-0.3):
    pat = f"inference_logistic_auto_worlds_{eps:g}_{seed}_*_x1low{x1_low:g}*.npz"
    return sorted(RESULTS.glob(pat), key=lambda p: int(p.stem.split("_")[6]))


def paired(eps, seed=41, x1_low=-0.3):
    """The exact world's interval (``worlds``' ``"true world"``, every file of the cell) against
    the committed ``linear`` and ``simulate`` intervals of the same data sets
    (``_inference_logistic_sim``'s control runs, seed 41): coverage, width over the de-shrunk
    oracle (mean, median), z sd, misses, and the per-data-set width ratio simulate / exact.
    Writes ``inference_logistic_auto_worlds_EPS.csv``."""
    tw = [np.load(p) for p in _world_files(eps, seed, x1_low)]
    exact, ds = (np.concatenate([t[k] for t in tw]) for k in ("true_world", "deshrunk"))
    com = sorted(
        RESULTS.glob(
            f"inference_logistic_sim_1000_{eps:g}_{seed}_*_library_simpmdeshrunk_x1low{x1_low:g}.npz"
        ),
        key=_start,
    )
    com = [np.load(p) for p in com]
    lib, sim, ds_c = (
        np.concatenate([c[k] for c in com])[: len(ds)]
        for k in ("library", "sim_pmdeshrunk", "deshrunk")
    )
    assert np.allclose(ds, ds_c), "the worlds' data sets must be the committed ones"
    de = _spread(ds)
    rows = []
    for method, ci in (("linear", lib), ("simulate", sim), ("exact world", exact)):
        w = ci[:, :, 1] - ci[:, :, 0]
        hit = (ci[:, :, 0] <= LOGIT_BETA) & (LOGIT_BETA <= ci[:, :, 1])
        z = (LOGIT_BETA - ci.mean(axis=2)) / (w / 3.92)
        ratio = w / (exact[:, :, 1] - exact[:, :, 0])
        for j, name in enumerate(LOGIT_NAMES):
            rows.append(
                dict(
                    epsilon=eps,
                    x1_low=x1_low,
                    reps=len(ds),
                    method=method,
                    param=name,
                    coverage=hit[:, j].mean(),
                    misses=int((~hit[:, j]).sum()),
                    width_ratio_deshrunk=w[:, j].mean() / de[j],
                    median_width_ratio_deshrunk=np.median(w[:, j]) / de[j],
                    z_sd=z[:, j].std(),
                    width_over_exact_p10=np.quantile(ratio[:, j], 0.1),
                    width_over_exact_median=np.median(ratio[:, j]),
                    width_over_exact_p90=np.quantile(ratio[:, j], 0.9),
                )
            )
    df = pd.DataFrame(rows)
    df.to_csv(RESULTS / f"inference_logistic_auto_worlds_{eps:g}.csv", index=False)
    print(df.round(3).to_string(index=False))
    return df


def quantile_rule(reps=40_000, seed=0):
    """Expected coverage of the basic interval from ``B`` draws in an exact world (the pivot of
    the estimate and of the ``B`` draws are i.i.d.): a Monte Carlo over ``reps`` pivots from a
    t(5) law, for numpy's default quantile rule (``"linear"``, positions ``p (B - 1)``) and the
    ``(B + 1)`` rule (``"weibull"``, positions ``p (B + 1)``). For order statistics the answer
    is law-free: ``(k_hi - k_lo) / (B + 1)`` for ranks ``k``. Also prints what the (B + 1)
    rule costs: its mean width over the default rule's, and both over the exact 95 % width of
    the law."""
    from scipy.stats import t as student_t  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    exact = 2.0 * student_t.ppf(0.975, 5)
    for b in (200, 1000):
        D, T = rng.standard_t(5, size=(reps, b)), rng.standard_t(5, size=reps)
        out, width = [], {}
        for rule in ("linear", "weibull"):
            lo, hi = np.quantile(D, [0.025, 0.975], axis=1, method=rule)
            width[rule] = np.mean(hi - lo)
            cov = np.mean((lo <= T) & (T <= hi))
            out.append(f"{rule} {cov:.4f} (width / exact {width[rule] / exact:.4f})")
        print(f"B = {b}: coverage of the 95 % basic interval, " + ", ".join(out))
        print(f"  width weibull / linear: {width['weibull'] / width['linear']:.4f}")


def main(argv):
    if argv[0] == "fires":
        fires(int(argv[1]) if len(argv) > 1 else 400)
    elif argv[0] == "cells":
        cells()
    elif argv[0] == "check":
        check(int(argv[1]))
    elif argv[0] == "intercept":
        x1_low = float(argv[4]) if len(argv) > 4 else -1.0
        intercept(int(argv[1]), float(argv[2]), int(argv[3]), x1_low)
    elif argv[0] == "worlds":
        eps, reps, start = float(argv[1]), int(argv[2]), int(argv[3])
        x1_low = float(argv[4]) if len(argv) > 4 else -0.3
        worlds(eps, reps, start, x1_low, tuple(argv[5].split(",")) if len(argv) > 5 else WORLDS)
    elif argv[0] == "quantile-rule":
        quantile_rule()
    elif argv[0] == "paired":
        paired(float(argv[1]))
    elif argv[0] == "worlds-table":
        worlds_table(argv[1:])
    else:
        raise SystemExit(
            f"unknown command {argv[0]!r}: fires, cells, check, intercept, worlds, "
            "worlds-table, paired or quantile-rule"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
