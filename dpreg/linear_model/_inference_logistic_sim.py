r"""Simulation bootstrap for a binary :class:`~dpreg.ObjectivePerturbationLogistic`.

The linearised bootstrap of :mod:`._inference_logistic` replaces the fit by its first-order
expansion. This module instead runs the *real* mechanism (the same estimator class, its
certified solver and its output noise) on synthetic data sets built from released quantities
only, and reads the interval off the replicates. It is post-processing: nothing here reads
the private data, and it spends nothing.

The synthetic world (scaled units, ``docs/inference.md``, "Simulation bootstrap")
---------------------------------------------------------------------------------
* Truth: the released ``theta~`` (``theta_``).
* Design: ``n`` rows ``z = (1, x)`` (``x`` in the public box ``[-1, 1]^p``) of the affine form
  ``x = clip(c + L u)``, ``u`` a fixed public draw of unit-variance uniforms, with ``c`` and
  ``L`` chosen by a fixed-point iteration so that the design's loss Hessian at ``theta~``,
  ``sum_i a_i z_i z_i^T`` with ``a_i = s_i (1 - s_i)``, ``s_i = sigmoid(z_i . theta~)``,
  matches the released Hessian ``H~`` on the slope block and the intercept/slope column
  (:func:`synthetic_design`). The intercept entry ``sum_i a_i`` is not free: it follows from
  ``theta~`` and the design (it is the least noisy entry anyway). ``H~`` is first made
  feasible (PSD; a weighted covariance needs a positive semi-definite target).
* Labels: ``y* ~ Bernoulli(sigmoid(z . theta~))``.
* Fit: a fresh ``ObjectivePerturbationLogistic`` with the original fit's public settings
  (its per-problem epsilon, norm, q, penalty, solver), ``bounds_X = (-1, 1)`` because the
  design is already in scaled units, a throwaway unlimited accountant and a seed spawned from
  the release seed. Its gamma is checked to equal the original ``gamma_``.

The intervals
-------------
To first order ``theta~ = A theta0 + e``, ``A = (H + P)^{-1} H``, ``e`` the noise of the fit
(score, V and W) whose law depends on H but, to first order, not on ``theta0``:

* ``"basic"``: ``[2 theta~ - q_hi, 2 theta~ - q_lo]`` of the replicates. It removes the
  world's bias ``(A - I) theta~`` (first-order correct) but its width is the spread of ``e``,
  not of ``A^{-1} e``: valid only when the shrinkage ``P`` is small against ``H``.
* ``"deshrunk"`` (test inversion of the linear law): with ``phi(t) = A_s^{-1} t``,
  ``A_s = (H_s + P)^{-1} H_s`` from the synthetic design's exact Hessian ``H_s``,
  ``theta0 in phi(theta~) - [q_hi, q_lo]`` of ``phi(theta*) - theta~``. In the linear model it
  is the Neyman interval of the law ``A theta0 + e`` (exact when ``H_s = H``); it assumes
  that ``e``'s law does not depend on ``theta0`` and that ``H_s`` is close to ``H``.

Both inherit the error of the design's target through the design: a target that understates
the curvature gives a flatter loss and wider replicates, and vice versa. The target is the
released ``H~`` or the mean of its feasible posterior (:func:`design_target`); the posterior
mean stays away from singular matrices, which is what keeps ``A_s^{-1}`` finite.

Measured (``python -m benchmarks._inference_logistic_sim``, 200 data sets per cell,
``n_boot=200``, docs/inference.md): at n = 1e3, epsilon = 0.25 the posterior-mean design with
the ``"deshrunk"`` interval covers 0.995 / 0.950 / 0.955 (const / x1 / x2) at 1.65 / 1.16 /
1.08 times the de-shrunk oracle; its basic interval under-covers the slopes (0.905 / 0.910);
on the released-``H~`` design ``"deshrunk"`` has an unbounded mean width. At epsilon = 1 the
posterior-mean ``"deshrunk"`` interval covers 0.955 / 0.945 / 0.955 at 1.12 / 1.10 / 1.21
times the estimator's own spread. ``conf_int(method="simulate")`` is that interval, and
the opt-in ``method="auto"`` uses it where the released shrinkage check fires
(``_inference_logistic.linear_law_poor``: at n = 1e3, epsilon <= 1 on every measured data
set). On a design whose x1 ~ U[-0.3, 1] is correlated with the intercept it under-covers
at epsilon = 1 (0.925 / 0.925 / 0.919, 160 data sets, docs/inference.md).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from .._random import release_seed
from ._inference import check_alpha, check_n_boot, interval_output
from ._inference_logistic import _penalty, _psd, _release, _user_units, released_values

#: Fixed-point rounds of :func:`synthetic_design` (converges in a few when nothing clips).
DESIGN_ROUNDS = 60
#: Floor of the eigenvalues of a target weighted covariance (keeps the update finite).
COV_FLOOR = 1e-6
#: Caps of the design map: centre within [-0.9, 0.9], pre-clip sd of a coordinate at most 1
#: (``u`` has range ``+-sqrt(3)``, so up to about 40 % of a coordinate is clipped to the box).
MAX_CENTRE, MAX_SD = 0.9, 1.0
METHODS = ("basic", "deshrunk")
#: Seconds before the progress bar over the refits appears (shorter jobs print nothing).
PROGRESS_DELAY = 2.0


def _sqrt_psd(C):
    w, Q = np.linalg.eigh(C)
    return (Q * np.sqrt(np.maximum(w, COV_FLOOR))) @ Q.T


def _weighted(Z, theta):
    a = expit(Z @ theta)
    return a * (1.0 - a)


def loss_hessian(Z, theta):
    """``sum_i s_i (1 - s_i) z_i z_i^T`` at ``theta`` (``Z`` scaled, intercept column first)."""
    a = _weighted(Z, theta)
    return (Z * a[:, None]).T @ Z


def synthetic_design(H, theta, n, u, intercept=True, rounds=DESIGN_ROUNDS):
    """``n`` scaled rows ``x`` in ``[-1, 1]^p`` whose loss Hessian at ``theta`` matches ``H``.

    ``x = clip(c + u L^T)`` with ``u`` ``(n, p)`` fixed; each round sets ``c`` and ``L`` so that
    the ``a``-weighted mean and covariance of the current rows move to the targets implied by
    ``H`` and the current total weight ``sum a`` (with an intercept: mean
    ``H[0, 1:] / sum a``, second moment ``H[1:, 1:] / sum a``; without: second moment
    ``H / sum a`` about 0). Targets outside the box (a mean beyond ``(-1, 1)``, a variance
    above what ``[-1, 1]`` allows) are clipped; the design's actual Hessian is what the caller
    uses afterwards (:func:`loss_hessian`), never the target.
    """
    H = _psd(np.asarray(H, dtype=float))
    p = u.shape[1]
    c, L = np.zeros(p), np.eye(p) * (1.0 / math.sqrt(3.0))
    S = H[1:, 1:] if intercept else H
    for _ in range(rounds):
        x = np.clip(c + u @ L.T, -1.0, 1.0)
        Z = np.column_stack([np.ones(n), x]) if intercept else x
        a = _weighted(Z, theta)
        tot = a.sum()
        w = a / tot
        mu_w = w @ x if intercept else np.zeros(p)
        d = x - mu_w
        C_w = (d * w[:, None]).T @ d
        mu_t = np.clip(H[0, 1:] / tot, -0.99, 0.99) if intercept else np.zeros(p)
        C_t = S / tot - np.outer(mu_t, mu_t)
        cap = np.sqrt(np.maximum(1.0 - mu_t**2, COV_FLOOR))  # sd of a [-1, 1] variable
        sd_t = np.sqrt(np.clip(np.diag(C_t), COV_FLOOR, None))
        scale = np.minimum(1.0, cap / sd_t)
        C_t = C_t * np.outer(scale, scale)
        c = np.clip(c + (mu_t - mu_w), -MAX_CENTRE, MAX_CENTRE)
        L = _sqrt_psd(C_t) @ np.linalg.inv(_sqrt_psd(C_w)) @ L
        # a target no design in the box reaches (a noisy release) must not blow the map up:
        # cap the pre-clip standard deviation of each coordinate
        L = L / np.maximum(1.0, np.linalg.norm(L, axis=1) / MAX_SD)[:, None]
    return np.clip(c + u @ L.T, -1.0, 1.0)


def _world(estimator, n_boot):
    """The release, the design draw ``u``, the replicate seeds and the seed of the posterior
    draws of :func:`design_target` (all from the release seed: public)."""
    rel = _release(estimator)
    seed = release_seed(*released_values(estimator, rel))  # as conf_int's bootstrap
    ss = np.random.SeedSequence(seed)
    design_ss, *rep_ss = ss.spawn(n_boot + 2)
    post_ss = rep_ss.pop()
    p = estimator.theta_.shape[1] - int(estimator.fit_intercept)
    u = np.random.default_rng(design_ss).uniform(-math.sqrt(3.0), math.sqrt(3.0), (rel.n, p))
    return rel, u, rep_ss, post_ss


#: Targets of the synthetic design: the released matrix (PSD-projected), or the mean of the
#: feasible posterior of the loss Hessian (``_inference_logistic.feasible_hessian_draws``).
TARGETS = ("release", "posterior mean", "posterior mean, coupling de-noised")
POSTERIOR_DRAWS = 1000


def denoise_coupling(T, coupling_var):
    """``T`` with its intercept-slope column ``h = T[1:, 0]`` scaled by
    ``c = sqrt(max(0, 1 - tr(S^{-1} Sigma) / h' S^{-1} h))`` (``S = T[1:, 1:]``, ``Sigma`` the
    diagonal noise variance ``coupling_var`` of the released ``h``).

    The intercept's variance is ``1 / (T_00 - h' S^{-1} h)``, convex in ``h``: a noisy but
    unbiased ``h`` inflates the quadratic form by ``tr(S^{-1} Sigma)`` on average and so
    widens the intercept's interval. The scaled ``h`` has the method-of-moments value of the
    quadratic form, ``h' S^{-1} h - tr(S^{-1} Sigma)``, truncated at 0.
    """
    T = np.array(T, dtype=float)
    h, S = T[1:, 0], T[1:, 1:]
    if np.linalg.eigvalsh(S)[0] <= 0.0:
        return T
    Sinv = np.linalg.inv(S)
    q, noise = float(h @ Sinv @ h), float(np.sum(np.diag(Sinv) * coupling_var))
    c = math.sqrt(max(0.0, 1.0 - noise / q)) if q > 0.0 else 0.0
    T[1:, 0] = T[0, 1:] = c * h
    return T


def design_target(estimator, rel, target, post_ss):
    """The Hessian the synthetic design matches (released quantities only)."""
    if target == "release":
        return rel.hessian
    from ._inference_logistic import feasible_hessian_draws  # noqa: PLC0415

    rng = np.random.default_rng(post_ss)
    intercept = bool(estimator.fit_intercept)
    T = feasible_hessian_draws(rel, POSTERIOR_DRAWS, rng, intercept).mean(axis=0)
    if target == "posterior mean" or not intercept:
        return T
    return denoise_coupling(T, rel.entry_sd[1:, 0] ** 2)


def simulation_draws(estimator, n_boot=200, target="release"):
    """``(theta~, draws, H_s)`` in scaled units: the released point, ``n_boot`` refits of the
    real mechanism on synthetic data sets of the world ``(theta~, design)`` and the design's
    exact loss Hessian at ``theta~``. Reads released quantities only."""
    n_boot = check_n_boot(n_boot)
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}.")
    rel, u, rep_ss, post_ss = _world(estimator, n_boot)
    theta = estimator.theta_[0]
    intercept = bool(estimator.fit_intercept)
    n = rel.n
    x = synthetic_design(design_target(estimator, rel, target, post_ss), theta, n, u, intercept)
    Z = np.column_stack([np.ones(n), x]) if intercept else x
    return theta, refit_draws(estimator, x, theta, rep_ss), loss_hessian(Z, theta)


def simulation_interval(
    estimator, alpha=0.05, n_boot=200, method="basic", names=None, target="release"
):
    """Intervals from :func:`simulation_draws` (user units, intercept first); ``method`` is
    ``"basic"`` or ``"deshrunk"``, ``target`` the design's Hessian (module docstring: what
    each assumes). ``conf_int(method="simulate")`` uses ``"deshrunk"`` on the
    ``"posterior mean"`` design."""
    alpha = check_alpha(alpha)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}.")
    out = simulation_draws(estimator, n_boot, target)
    return interval_from_draws(estimator, *out, alpha, method, names)


def interval_from_draws(estimator, theta, draws, H_s, alpha, method, names=None):
    """The ``method`` interval from the output of :func:`simulation_draws` (user units)."""
    if method == "deshrunk":
        if np.linalg.eigvalsh(H_s)[0] <= 0.0:  # A_s has no inverse: nothing bounds theta0
            ci = np.column_stack([np.full(len(theta), -np.inf), np.full(len(theta), np.inf)])
            if names is None:
                return ci
            import pandas as pd  # noqa: PLC0415

            return pd.DataFrame(ci, index=names, columns=[f"{alpha / 2:g}", f"{1 - alpha / 2:g}"])
        P = _penalty(estimator, len(theta))
        phi = np.linalg.solve(H_s, P).T  # t @ phi = (H_s^{-1} P t)^T: phi(t) = t + t @ phi
        est = theta + theta @ phi
        # phi(theta~) - [q_hi, q_lo] of (phi(theta*) - theta~) is the basic interval of the
        # estimate phi(theta~) with draws phi(theta*) - theta~ + phi(theta~)
        draws = (draws + draws @ phi) - theta + est
        theta = est
    return interval_output(
        _user_units(estimator, theta[None])[0], _user_units(estimator, draws), alpha, names
    )


def refit_draws(estimator, x, truth, rep_ss):
    """One certified refit of ``estimator``'s mechanism (its public settings and budget) per
    replicate seed in ``rep_ss``, on labels drawn from the logistic model with design ``x`` and
    parameters ``truth``: the refit loop of :func:`simulation_draws`, whose world is the
    synthetic design around ``theta~`` (a diagnosis may pass another world). Returns the refits'
    ``theta`` ``(len(rep_ss), n_params)``. The refits spend from a throw-away ledger."""
    from .. import BudgetAccountant, ObjectivePerturbationLogistic  # noqa: PLC0415

    intercept = bool(estimator.fit_intercept)
    n = len(x)
    Z = np.column_stack([np.ones(n), x]) if intercept else x
    prob = expit(Z @ truth)
    ledger = BudgetAccountant()  # synthetic fits release nothing about anyone
    draws = np.empty((len(rep_ss), len(truth)))
    from tqdm.auto import tqdm  # noqa: PLC0415

    # one certified refit per replicate (about 8 ms at n = 1e3): the estimator has no progress
    # setting, so the bar shows only once the job has run PROGRESS_DELAY seconds
    bar = tqdm(rep_ss, delay=PROGRESS_DELAY, desc="simulation bootstrap", unit="fit")
    for b, ss in enumerate(bar):
        rng = np.random.default_rng(ss)
        y = (rng.uniform(size=n) < prob).astype(int)
        fit = ObjectivePerturbationLogistic(
            epsilon=float(estimator.epsilon_per_problem_),
            norm=estimator.norm_,
            q=float(estimator.q_),
            alpha=estimator.alpha,
            l1_ratio=estimator.l1_ratio,
            fit_intercept=intercept,
            bounds_X=(-1.0, 1.0),
            classes=[0, 1],
            solver=estimator.solver,
            multi_class="binary",
            max_iter=estimator.max_iter,
            random_state=rng,
            accountant=ledger,
        ).fit(x, y)
        if b == 0 and not math.isclose(fit.gamma_, estimator.gamma_, rel_tol=1e-12):
            raise RuntimeError("the synthetic fit's gamma differs from the fit's")
        draws[b] = fit.theta_[0]
    return draws
