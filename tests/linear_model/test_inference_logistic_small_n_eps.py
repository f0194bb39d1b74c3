"""Logistic intervals at small n * epsilon (issue #15): the de-shrunk oracle of the benchmark
and the guard that the intervals are never narrower than an interval that knows the Hessian.

Why (docs/inference.md, "Which oracle"): the fit's penalty P (gamma, the ridge) shrinks the
estimate, ``theta~ ~ (H + P)^{-1} H theta0 + noise``, so an interval that covers theta0 must be
wider than the estimator's own spread by about ``(H + P) / H``; the shrinkage-corrected pivot
with the *true* Hessian (``benchmarks._inference_logistic_diagnosis.pivot_draws``) has that
width. The library does not know H (it releases it with noise), so its intervals must be at
least that wide.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from benchmarks._inference_cells import LOGIT_BETA, deshrunk, simulate_logistic
from benchmarks._inference_logistic_diagnosis import loss_hessian, pivot_draws
from dpreg import BudgetAccountant, ObjectivePerturbationLogistic
from dpreg.linear_model import _inference_logistic as inf
from dpreg.linear_model._inference import basic_interval


def _fit(X, y, epsilon, rng, acc, alpha=0.0):
    return ObjectivePerturbationLogistic(
        epsilon=epsilon,
        alpha=alpha,
        bounds_X=(-1, 1),
        classes=[0, 1],
        random_state=rng,
        accountant=acc,
    ).fit(X, y)


def test_deshrunk_oracle_undoes_the_penalty():
    """With a large ridge and negligible noise the de-shrunk estimate is close to the
    unpenalised maximum-likelihood fit, while the released estimate (the control) is far."""
    from scipy.optimize import minimize  # noqa: PLC0415

    rng = np.random.default_rng(0)
    X, y = simulate_logistic(4000, rng)
    m = _fit(X, y, 1e4, rng, BudgetAccountant(), alpha=60.0)
    Z = np.column_stack([np.ones(len(X)), X])

    def nll(t):  # the unpenalised logistic loss and its gradient
        eta = Z @ t
        return np.sum(np.logaddexp(0.0, eta) - y * eta), Z.T @ (1 / (1 + np.exp(-eta)) - y)

    mle = minimize(nll, np.zeros(3), jac=True, method="BFGS", options={"gtol": 1e-10}).x
    est = np.r_[m.intercept_, m.coef_.ravel()]
    far = np.max(np.abs(est - mle))
    assert far > 0.2, (est, mle)  # the control: the ridge shrinks the slopes (measured 0.33-0.35)
    # measured 0.05-0.10 of it (seeds 0-2): what is left is second order and H(theta0) vs H(mle)
    assert np.max(np.abs(deshrunk(m, X) - mle)) < 0.25 * far, (deshrunk(m, X), mle, est)


def _widths(n, eps, reps, seed, n_boot=1000):
    """Per data set: the library's interval, the basic interval with the true Hessian at the
    released point, and the shrinkage-corrected pivot with the true Hessian at theta0."""
    rng, acc = np.random.default_rng(seed), BudgetAccountant()
    share = inf.hessian_share(n, eps)
    lib, basic, pivot = [], [], []
    for _ in range(reps):
        X, y = simulate_logistic(n, rng)
        m = _fit(X, y, (1 - share) * eps, rng, acc)
        m.release_hessian(X, y, share * eps, random_state=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            lib.append(m.conf_int(n_boot=n_boot, method="linear"))
        H = np.broadcast_to(loss_hessian(X, m.theta_[0]), (n_boot, 3, 3))
        basic.append(basic_interval(*inf.linearised_draws(m, H, rng), 0.05))
        H0 = np.broadcast_to(loss_hessian(X, LOGIT_BETA), (n_boot, 3, 3))
        pivot.append(np.quantile(pivot_draws(m, H0, rng), [0.025, 0.975], axis=0).T)
    return tuple(np.array(c) for c in (lib, basic, pivot))


def _ratio(ci, ref):
    return np.mean(ci[:, :, 1] - ci[:, :, 0], axis=0) / np.mean(ref[:, :, 1] - ref[:, :, 0], 0)


def test_small_n_eps_intervals_are_not_narrower_than_the_known_hessian_pivot():
    """n = 1e3, epsilon = 0.25: the library's intervals are at least as wide as the pivot that
    knows the true Hessian (measured 1.4-2x, docs). The control, the basic interval with the
    true Hessian (what the library's bootstrap would give with a noiseless release), is
    narrower than the pivot on the slopes by about H / (H + P) (measured ~0.8) and fails."""
    lib, basic, pivot = _widths(1000, 0.25, reps=6, seed=21)
    assert np.all(_ratio(lib, pivot) >= 1.0), _ratio(lib, pivot)
    assert np.all(_ratio(basic, pivot)[1:] < 0.9), _ratio(basic, pivot)


def _covers(ci):
    return np.mean((ci[:, :, 0] <= LOGIT_BETA) & (LOGIT_BETA <= ci[:, :, 1]), axis=0)


@pytest.mark.slow
def test_small_n_eps_cell_covers_and_is_not_falsely_narrow():
    """n = 1e3, epsilon = 0.25, 200 data sets: the library covers (benchmark, 400 data sets:
    docs) and is never narrower than the known-Hessian pivot. The control, the basic interval
    with the true Hessian, under-covers the slopes there (measured 0.87-0.89 on 150-300 data
    sets: the shrinkage it does not undo), so a coverage check of 0.93 can fail."""
    lib, basic, pivot = _widths(1000, 0.25, reps=200, seed=22, n_boot=500)
    assert np.all(_covers(lib) >= 0.93), _covers(lib)
    assert np.all(_ratio(lib, pivot) >= 1.0), _ratio(lib, pivot)
    assert np.all(_covers(pivot) >= 0.91), _covers(pivot)
    assert np.any(_covers(basic)[1:] < 0.93), _covers(basic)
