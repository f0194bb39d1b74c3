"""Floating-point safety of the estimators' releases (issue #11, docs/floating_point.md).

* The low-bit distinguisher suite of ``tests/noise/test_floating_point.py`` run on whole fits
  of FunctionalLinearRegression and ObjectivePerturbationLogistic (default paths): two
  neighbouring small data sets (one record changed), many fits a side, every released number
  (noisy statistics, theta_, coef_, intercept_) checked against the DP inequality for a family
  of low-bit events. Controls: the same suite flags an old-style float release of the
  functional mechanism's statistic; the objective-perturbation control is the grid check
  (its old float release of theta_hat + W is off the public grid).
* Objective perturbation: the perturbation vector b is an exact grid release of the ideal
  K-norm vector (on its public grid, with the ideal law), and the certified distance the
  output noise W is calibrated to includes the public bound on the rounding shift of b.
"""

from __future__ import annotations

import importlib.util
import math
import pathlib

import numpy as np
import pytest
from scipy import stats

import dpreg.linear_model.functional as functional_module
import dpreg.linear_model.logistic as logistic_module
from dpreg import ObjectivePerturbationLogistic
from dpreg.linear_model import FunctionalLinearRegression
from dpreg.linear_model._certify import amp_plan, perturbation_grid
from dpreg.noise import KNormMechanism
from dpreg.noise._exact import float_knorm_sample
from dpreg.noise._grid import grid_exponent

_spec = importlib.util.spec_from_file_location(
    "_fp_noise_suite", pathlib.Path(__file__).parent / "noise" / "test_floating_point.py"
)
_suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_suite)
dp_violations = _suite._dp_violations  # one suite for mechanisms and estimators

# neighbouring data sets: the last record changes from (0, 0) to (1, 1), so every sum of the
# functional mechanism's statistic moves from 0 to 1 (the shape of the example)
X0 = np.zeros((4, 1))
Y0 = np.zeros(4)
X1, Y1 = X0.copy(), Y0.copy()
X1[-1], Y1[-1] = 1.0, 1.0
# logistic: one label flips (classes are public)
C0 = np.array([0, 0, 1, 1])
C1 = np.array([0, 0, 1, 0])
EPS_FLR = 4.0  # moderate noise: the float control's leak is P(|noise| < 1/2) ~ 0.2
EPS_OP = 1.0


def _flr_fits(X, y, n_fits, rng):
    """Released numbers of ``n_fits`` fits: columns xty, gram (without n), coef_, intercept_."""
    est = FunctionalLinearRegression(
        epsilon=EPS_FLR, bounds_X=(-1.0, 1.0), bounds_y=(-1.0, 1.0), random_state=rng
    )
    out = []
    for _ in range(n_fits):
        est.fit(X, y)
        ns = est.noisy_statistics_
        out.append(np.r_[ns.xty.ravel(), ns.gram.ravel()[1:], est.coef_.ravel(), est.intercept_])
    return np.array(out)


def _op_fits(y, n_fits, rng):
    """Released numbers of ``n_fits`` fits: theta_, coef_, intercept_."""
    est = ObjectivePerturbationLogistic(
        epsilon=EPS_OP, bounds_X=(-1.0, 1.0), classes=[0, 1], random_state=rng
    )
    out = []
    for _ in range(n_fits):
        est.fit(np.column_stack([X1[:, 0], X1[::-1, 0]]), y)
        out.append(np.r_[est.theta_.ravel(), est.coef_.ravel(), est.intercept_])
    return np.array(out), est


def _violations(a, b, epsilon):
    return {j: v for j in range(a.shape[1]) if (v := dp_violations(a[:, j], b[:, j], epsilon, 0.0))}


def _flr_suite(n_fits, seed):
    rng = np.random.default_rng(seed)
    return _violations(_flr_fits(X0, Y0, n_fits, rng), _flr_fits(X1, Y1, n_fits, rng), EPS_FLR)


def _op_suite(n_fits, seed):
    rng = np.random.default_rng(seed)
    a, _ = _op_fits(C0, n_fits, rng)
    b, _ = _op_fits(C1, n_fits, rng)
    return _violations(a, b, EPS_OP)


# ---------------------------------------------------------------------------------------------
# distinguisher suite on estimators
# ---------------------------------------------------------------------------------------------
def test_functional_regression_low_bits_show_no_gap():
    assert _flr_suite(200, 1) == {}


def test_control_the_suite_flags_a_float_release_of_the_statistic(monkeypatch):
    """Old style: statistic + float Laplace noise (comparable scale) added in float64."""

    def float_release(T, layout, plan, epsilon, delta, rng, n=None):
        T = np.asarray(T, dtype=float)
        return T + rng.laplace(0.0, plan.gram_std / math.sqrt(2.0), T.shape)

    monkeypatch.setattr(functional_module, "privatize_statistic", float_release)
    bad = _flr_suite(200, 2)
    # every noisy sum (xty and the gram entries) is flagged by "off grid 2^-53"
    assert {0, 1, 2, 3, 4} <= set(bad), bad
    assert all("off grid 2^-53" in bad[j] for j in range(5)), bad


def test_objective_perturbation_low_bits_show_no_gap():
    assert _op_suite(60, 3) == {}


@pytest.mark.slow
def test_functional_regression_low_bits_show_no_gap_long():
    assert _flr_suite(3000, 4) == {}


@pytest.mark.slow
def test_objective_perturbation_low_bits_show_no_gap_long():
    assert _op_suite(1000, 5) == {}


# ---------------------------------------------------------------------------------------------
# objective perturbation: exact b, charged shift, released grid
# ---------------------------------------------------------------------------------------------
def _on_grid(x, step):
    x = np.asarray(x, dtype=float) / step  # a power of two: exact
    return bool(np.all(x == np.round(x)))


@pytest.mark.parametrize(
    "norm,p", [("linf", math.inf), ("l2", 2), ("l1", 1), (3.0, 3.0), (1.5, 1.5)]
)
def test_perturbation_vector_is_an_exact_grid_release(norm, p):
    """b lies on its public grid and has the ideal law (KS of ||b||_K ~ Gamma(dim, scale))."""
    dim, sens, eps = 3, 2.0, 0.5
    grid = perturbation_grid(dim, sens, eps)
    rng = np.random.default_rng(7)
    b = np.array([logistic_module._perturbation(norm, dim, sens, eps, rng) for _ in range(800)])
    assert _on_grid(b, grid.step)
    assert grid.step <= (sens / eps) * 2.0**-30  # far finer than the noise
    norms = np.linalg.norm(b, ord=p, axis=1)
    assert stats.kstest(norms, stats.gamma(a=dim, scale=sens / eps).cdf).pvalue > 1e-3


def test_amp_plan_charges_the_rounding_shift_of_b():
    dim, n = 3, 50
    grid = perturbation_grid(dim, 2.0, 0.5)
    assert grid.shift >= math.sqrt(dim) * grid.step / 2.0
    plain = amp_plan(0.01, dim, 0.1, 5.0)
    shifted = amp_plan(0.01, dim, 0.1, 5.0, grid.shift / n)
    assert plain.tol == shifted.tol
    assert shifted.sensitivity >= 2.0 * (plain.tol + grid.shift / n) / 0.1
    assert shifted.sensitivity > plain.sensitivity


def test_fit_certifies_against_the_ideal_b(monkeypatch):
    """The fit feeds the solver a grid b and calibrates W to tol + shift / n."""
    seen = []
    real = logistic_module.certify

    def spy(theta0, Z, y, fit_intercept, ridge, l1, gamma, V, tol, lip):
        seen.append(np.array(V))
        return real(theta0, Z, y, fit_intercept, ridge, l1, gamma, V, tol, lip)

    monkeypatch.setattr(logistic_module, "certify", spy)
    X = np.column_stack([X1[:, 0], X1[::-1, 0]])
    est = ObjectivePerturbationLogistic(
        epsilon=EPS_OP, bounds_X=(-1.0, 1.0), classes=[0, 1], random_state=0
    ).fit(X, C0)
    dim, n = 3, 4
    eps_b = est.epsilon_per_problem_ * (1 - logistic_module.AMP_SHARE) * est.q_
    grid = perturbation_grid(dim, est.sensitivity_, eps_b)
    assert _on_grid(seen[0], grid.step)
    radius = (est.grad_tol_ + grid.shift / n) / est.strong_convexity_
    assert est.amp_sensitivity_ >= 2.0 * radius


def test_released_theta_on_the_public_grid_and_coef_is_post_processing():
    _, est = _op_fits(C0, 1, np.random.default_rng(1))
    scale = float(np.nextafter(est.amp_sensitivity_ / est.amp_epsilon_, np.inf))
    assert _on_grid(est.theta_, 2.0 ** grid_exponent(scale))
    coef, intercept = est._unscale(est.theta_, *est.bounds_)
    np.testing.assert_array_equal(est.coef_, coef)
    np.testing.assert_array_equal(est.intercept_, intercept)


def test_control_an_old_float_release_of_theta_is_off_the_grid(monkeypatch):
    """Old style theta_hat + float W: the grid check above flags it."""

    class FloatW(KNormMechanism):
        def randomise(self, value):
            return (
                np.asarray(value, dtype=float)
                + float_knorm_sample(self.ball, self.scale, 1, self._rng)[0]
            )

    monkeypatch.setattr(logistic_module, "KNormMechanism", FloatW)
    _, est = _op_fits(C0, 1, np.random.default_rng(1))
    scale = float(np.nextafter(est.amp_sensitivity_ / est.amp_epsilon_, np.inf))
    assert not _on_grid(est.theta_, 2.0 ** grid_exponent(scale))
