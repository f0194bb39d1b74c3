"""Where the width of the logistic intervals comes from at small n * epsilon (docs/inference.md).

The benchmark's model (``benchmarks/_inference_cells.py``: logit P(y = 1) = 0.5 + 1.5 x1 - x2,
``x ~ U[-1, 1]^2``, ``bounds_X = (-1, 1)``; the fit gets ``1 - share`` of epsilon and
``release_hessian`` the rest). On the same data sets and fits, the bootstrap of ``conf_int``
is re-run with each released quantity replaced by its true value in turn, everything else (the
normal score, the K-norm draws of V and W, the basic interval) unchanged:

* ``current``: the library's intervals (feasible posterior of the released Hessian);
* ``true H at fit``: the true loss Hessian at the released point (what ``release_hessian``
  releases, without its noise), the same matrix in every replicate;
* ``true H at theta0``: the true loss Hessian at the true parameter (no plug-in of theta~);
* ``released H plug-in``: the released matrix itself (projected onto the PSD cone) in every
  replicate, i.e. no posterior spread of the curvature;
* ``pivot, true H at theta0`` and ``pivot, posterior H``: the shrinkage-corrected pivot
  (:func:`pivot_draws`) instead of the basic interval, with the true Hessian at theta0 or
  with the library's feasible posterior draws.

Widths are over the oracle width (the 2.5-97.5% spread of the released estimates), in
``full`` over the oracle of a fit with the whole epsilon (equal total budget), and in
``deshrunk`` over the spread of the de-shrunk estimates (``_inference_cells.deshrunk``, the
width an interval that covers the truth needs to first order). ``decompose`` also counts the
data sets whose feasible posterior fell back to the PSD projection.

``splits`` compares Hessian shares on common data sets; ``calibrate`` compares the library's
intervals with a double-bootstrap calibrated level (:func:`calibrated_interval`).

Run: ``python -m benchmarks._inference_logistic_diagnosis decompose N EPS REPS [SHARE]`` or
``python -m benchmarks._inference_logistic_diagnosis splits N EPS REPS SHARE ...`` or
``python -m benchmarks._inference_logistic_diagnosis calibrate N EPS REPS [SHARE]`` or
``python -m benchmarks._inference_logistic_diagnosis cells N REPS SEED`` or
``python -m benchmarks._inference_logistic_diagnosis nboot N EPS REPS`` or
``python -m benchmarks._inference_logistic_diagnosis floor N EPS REPS`` (the shrinkage
factor ``diag(I + H0^{-1} P)``, :func:`floor`). Prints a
table, writes nothing; a diagnostic, not part of ``python -m benchmarks``.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
from scipy.special import expit

from dpreg import ObjectivePerturbationLogistic
from dpreg.linear_model import _inference_logistic as il
from dpreg.linear_model._inference import basic_interval

from ._inference_cells import LOGIT_BETA, simulate_logistic


def _fit(X, y, epsilon, rng):
    return ObjectivePerturbationLogistic(
        epsilon=epsilon, bounds_X=(-1, 1), classes=[0, 1], random_state=rng
    ).fit(X, y)


def _coef(m):
    return np.r_[m.intercept_, m.coef_.ravel()]


def loss_hessian(X, theta):
    """``sum_i s_i (1 - s_i) z_i z_i^T`` (bounds (-1, 1): the scaled features are X)."""
    Z = np.column_stack([np.ones(len(X)), X])
    s = expit(Z @ theta)
    return (Z * (s * (1 - s))[:, None]).T @ Z


def _score(ci, est, digits=2):
    lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
    w = ci[:, :, 1] - ci[:, :, 0]
    cov = ((ci[:, :, 0] <= LOGIT_BETA) & (LOGIT_BETA <= ci[:, :, 1])).mean(0)
    return np.round(cov, 3), np.round(w.mean(0) / (hi - lo), digits)


def pivot_draws(m, H_loss, rng):
    """Draws of theta0 from the shrinkage-corrected linearisation (user units).

    To first order ``H (theta^ - theta0) = -(g + V + P theta^)`` (the optimality condition of
    the fit, ``H`` the loss Hessian, ``P`` the penalty), so ``theta0 = theta^ + H^{-1} (P theta^
    + g + V)`` with ``theta^ = theta~ - W``: the 2.5-97.5% quantiles of these draws are an
    interval for theta0 that undoes the penalty's shrinkage exactly in the linear model. The
    basic interval of ``conf_int`` uses ``(H + P)^{-1}`` instead and is narrower by about
    ``H / (H + P)``. Here ``H^{-1}`` has no penalty to keep it bounded, so noisy Hessian
    draws make it explode; an experiment, not used by the library."""
    from dpreg.noise import KNormMechanism  # noqa: PLC0415
    from dpreg.noise._exact import float_knorm_sample  # noqa: PLC0415

    B, k = H_loss.shape[:2]
    P = il._penalty(m, k)
    w, Q = np.linalg.eigh(H_loss)
    g = np.einsum("bij,bj->bi", Q, rng.standard_normal((B, k)) * np.sqrt(np.maximum(w, 0)))
    v = KNormMechanism(m.norm_, k, m.sensitivity_, (m.epsilon_per_problem_ - m.amp_epsilon_) * m.q_)
    V = float_knorm_sample(v.ball, v.sensitivity / v.epsilon, B, rng)
    wm = KNormMechanism("l2", k, m.amp_sensitivity_, m.amp_epsilon_)
    t = m.theta_[0][None] - float_knorm_sample(wm.ball, wm.sensitivity / wm.epsilon, B, rng)
    return il._user_units(m, t + np.einsum("bij,bj->bi", np.linalg.pinv(H_loss), t @ P + g + V))


def _fell_back(rel, rng):
    """Whether ``feasible_hessian_draws`` would fall back to the PSD projection (fewer than
    1000 feasible proposals in its ``MAX_ROUNDS * 4000``)."""
    H = rel.hessian[None] - il._noise_draws(rel, il.MAX_ROUNDS * 4000, rng)
    return il.feasible(H, rel.n, True).sum() < 1000


def decompose(n, eps, reps, share=0.1, n_boot=1000, seed=5):
    from ._inference_cells import deshrunk  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    keys = ["current", "true H at fit", "true H at theta0", "released H plug-in"]
    keys += ["pivot, true H at theta0", "pivot, posterior H"]
    cis = {k: [] for k in keys}
    est, full, unshrunk, fell_back = [], [], [], 0
    for _ in range(reps):
        X, y = simulate_logistic(n, rng)
        m = _fit(X, y, (1 - share) * eps, rng)
        m.release_hessian(X, y, share * eps, random_state=rng)
        est.append(_coef(m))
        full.append(_coef(_fit(X, y, eps, rng)))
        unshrunk.append(deshrunk(m, X))
        fell_back += _fell_back(m.inference_release_, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cis["current"].append(m.conf_int(n_boot=n_boot, method="linear"))
        fixed = {
            "true H at fit": loss_hessian(X, m.theta_[0]),
            "true H at theta0": loss_hessian(X, LOGIT_BETA),
            "released H plug-in": il._psd(m.inference_release_.hessian),
        }
        for key, H in fixed.items():
            centre, draws = il.linearised_draws(m, np.broadcast_to(H, (n_boot, 3, 3)), rng)
            cis[key].append(basic_interval(centre, draws, 0.05))
        H0 = np.broadcast_to(fixed["true H at theta0"], (n_boot, 3, 3))
        Hp = il.feasible_hessian_draws(m.inference_release_, n_boot, rng)
        for key, H in (("pivot, true H at theta0", H0), ("pivot, posterior H", Hp)):
            cis[key].append(np.quantile(pivot_draws(m, H, rng), [0.025, 0.975], axis=0).T)
    est, full, unshrunk = np.array(est), np.array(full), np.array(unshrunk)
    print(f"n={n} epsilon={eps} Hessian share={share} reps={reps} fell back: {fell_back}")
    for key in keys:
        ci = np.array(cis[key])
        cov, ratio = _score(ci, est)
        _, ratio_full = _score(ci, full)
        _, ratio_deshrunk = _score(ci, unshrunk)
        med = np.median(ci[:, :, 1] - ci[:, :, 0], axis=0) / np.ptp(
            np.quantile(est, [0.025, 0.975], axis=0), axis=0
        )
        print(
            f"  {key:23s} coverage {cov} width/oracle {ratio} (median {np.round(med, 2)}) "
            f"full {ratio_full} deshrunk {ratio_deshrunk}"
        )


def splits(n, eps, reps, shares, n_boot=1000, seed=9):
    """Coverage and width of the library's intervals for several Hessian shares on common
    data sets, against the oracle of the released estimator and of a whole-epsilon fit."""
    rng = np.random.default_rng(seed)
    data = [simulate_logistic(n, rng) for _ in range(reps)]
    full = np.array([_coef(_fit(X, y, eps, rng)) for X, y in data])
    print(f"n={n} epsilon={eps} reps={reps}")
    for share in shares:
        est, ci = [], []
        for X, y in data:
            m = _fit(X, y, (1 - share) * eps, rng)
            m.release_hessian(X, y, share * eps, random_state=rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ci.append(m.conf_int(n_boot=n_boot, method="linear"))
            est.append(_coef(m))
        cov, ratio = _score(np.array(ci), np.array(est))
        _, ratio_full = _score(np.array(ci), full)
        print(f"  share {share}: coverage {cov} width/oracle {ratio} full {ratio_full}")


def cells(n, reps, seed, n_boot=1000):
    """The benchmark's cells (``_inference_cells.logistic_cells``) of one n on ``reps`` data
    sets of stream ``seed``: coverage with its Monte Carlo standard deviation
    ``sqrt(c (1 - c) / reps)`` and the mean width over the three oracles, per epsilon."""
    from ._inference_cells import logistic_cells  # noqa: PLC0415

    for eps, (est, ci, full, deshrunk) in logistic_cells(n, reps, n_boot, seed).items():
        cov, ratio = _score(ci, est)
        _, ratio_full = _score(ci, full)
        _, ratio_deshrunk = _score(ci, deshrunk)
        sd = np.sqrt(cov * (1 - cov) / reps)
        cov_sd = " / ".join(f"{c:.3f}+-{s:.3f}" for c, s in zip(cov, sd))
        print(f"n={n} eps={eps:g} reps={reps} seed={seed}: coverage {cov_sd} ", end="")
        print(f"width/oracle {ratio} full {ratio_full} deshrunk {ratio_deshrunk}", flush=True)


def nboot(n, eps, reps, seed=1, sizes=(300, 1000), ref=10_000):
    """Width of ``conf_int(n_boot=B)`` over that of ``n_boot=ref`` on ``reps`` fits (mean and
    sd over the fits). The bootstrap's seed is fixed (the intervals are a function of the
    releases), so its Monte Carlo error is the same for every data set: a small B biases a
    coverage study instead of averaging out."""
    rng = np.random.default_rng(seed)
    share = il.hessian_share(n, eps)
    r = []
    for _ in range(reps):
        X, y = simulate_logistic(n, rng)
        m = _fit(X, y, (1 - share) * eps, rng)
        m.release_hessian(X, y, share * eps, random_state=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w = {
                b: np.diff(m.conf_int(n_boot=b, method="linear"), axis=1)[:, 0]
                for b in (*sizes, ref)
            }
        r.append([w[b] / w[ref] for b in sizes])
    r = np.array(r)
    for k, b in enumerate(sizes):
        print(
            f"n={n} eps={eps:g} {reps} fits: width(B={b}) / width(B={ref}) mean "
            f"{np.round(r[:, k].mean(0), 3)} sd {np.round(r[:, k].std(0), 3)}"
        )


def floor(n, eps, reps, seed=7):
    """The shrinkage floor: the mean over ``reps`` fits (the rule's share) of
    ``diag(I + H0^{-1} P)``, ``H0`` the loss Hessian at the true parameter and ``P`` the fit's
    penalty. To first order a valid interval for theta0 is at least this many times the
    estimator's own spread per coordinate (docs/inference.md, "Which oracle")."""
    rng = np.random.default_rng(seed)
    share = il.hessian_share(n, eps)
    fac, gam, diag = [], [], []
    for _ in range(reps):
        X, y = simulate_logistic(n, rng)
        m = _fit(X, y, (1 - share) * eps, rng)
        H0 = loss_hessian(X, LOGIT_BETA)
        fac.append(np.diag(np.eye(3) + np.linalg.solve(H0, il._penalty(m, 3))))
        gam.append(float(m.gamma_))
        diag.append(np.diag(H0))
    print(
        f"n={n} eps={eps:g} share={share:.3f} {reps} fits: gamma {np.mean(gam):.2f}, "
        f"diag H0 {np.round(np.mean(diag, 0), 1)}, diag(I + H0^-1 P) {np.round(np.mean(fac, 0), 3)}"
    )


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[0] == "cells":
        return cells(*(int(a) for a in argv[1:4]))
    what, n, eps, reps = argv[0], int(argv[1]), float(argv[2]), int(argv[3])
    if what == "nboot":
        nboot(n, eps, reps)
    elif what == "floor":
        floor(n, eps, reps)
    elif what == "decompose":
        decompose(n, eps, reps, *(float(a) for a in argv[4:5]))
    elif what == "calibrate":
        calibrate(n, eps, reps, *(float(a) for a in argv[4:5]))
    elif what == "splits":
        splits(n, eps, reps, [float(a) for a in argv[4:]])
    else:
        raise SystemExit(
            "usage: decompose|calibrate|splits|nboot|floor N EPS REPS ...|cells N REPS SEED"
        )


if __name__ == "__main__":
    main()


def calibrated_interval(m, alpha, n_out, n_in, rng):
    """The basic interval at a level calibrated by a double bootstrap (an experiment, not used
    by the library): ``n_out`` pseudo-worlds draw H from the feasible posterior, a pseudo
    release of it and a pseudo estimate around theta~ (the pseudo truth); each one's own
    ``n_in``-draw bootstrap says where the pseudo truth falls, and the level is chosen so that
    a share ``1 - alpha`` of the pseudo intervals cover it. Post-processing only."""
    rel = m.inference_release_
    theta = m.theta_[0]
    Hs = il.feasible_hessian_draws(rel, n_out, rng)
    _, outer = il.linearised_draws(m, Hs, rng)  # user units
    H_rel = Hs + il._noise_draws(rel, n_out, rng)
    u = np.empty((n_out, 3))
    t_user = il._user_units(m, theta[None])[0]
    for b in range(n_out):
        pseudo = il.HessianRelease(
            H_rel[b], rel.entry_sd, rel.sensitivity, rel.epsilon, rel.n, None
        )
        Hb = il.feasible_hessian_draws(pseudo, n_in, rng)
        # pseudo fit at outer[b]: theta in scaled units (bounds (-1, 1): user = scaled)
        old = m.theta_
        m.theta_ = outer[b][None]
        try:
            _, inner = il.linearised_draws(m, Hb, rng)
        finally:
            m.theta_ = old
        u[b] = (inner <= 2 * outer[b] - t_user).mean(0)
    c = np.quantile(np.abs(u - 0.5), 1 - alpha, axis=0)
    c = np.minimum(c, 0.5)
    _, draws = il.linearised_draws(m, il.feasible_hessian_draws(rel, n_in * 4, rng), rng)
    lo = np.array([np.quantile(draws[:, j], 0.5 - c[j]) for j in range(3)])
    hi = np.array([np.quantile(draws[:, j], 0.5 + c[j]) for j in range(3)])
    return np.column_stack([2 * t_user - hi, 2 * t_user - lo])


def calibrate(n, eps, reps, share=0.1, seed=5):
    rng = np.random.default_rng(seed)
    est, cur, cal = [], [], []
    for _ in range(reps):
        X, y = simulate_logistic(n, rng)
        m = _fit(X, y, (1 - share) * eps, rng)
        m.release_hessian(X, y, share * eps, random_state=rng)
        est.append(_coef(m))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cur.append(m.conf_int())
        cal.append(calibrated_interval(m, 0.05, 200, 200, rng))
    est = np.array(est)
    print(f"n={n} eps={eps} share={share} reps={reps}")
    for k, ci in (("current", cur), ("calibrated", cal)):
        print(" ", k, *_score(np.array(ci), est))
