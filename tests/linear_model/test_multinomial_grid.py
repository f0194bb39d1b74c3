"""Floating-point safety of the multinomial model's perturbation vector (issues #11 and #16).

Every multinomial perturbation vector -- the class-wise ``"l1_linf"`` one and the stacked
``"linf"``/``"l2"``/``"l1"`` ones -- is an exact grid release of the ideal K-norm draw on the
public grid of :func:`dpreg.linear_model._certify.perturbation_grid`, with the rounding shift
charged in the AMP plan, and ``theta_`` lies on W's public grid
(``docs/floating_point.md``, section 5a; ``docs/objective_perturbation.md``, section 2b).

* Sampler: the class-wise release is the l_{1,inf} K-norm mechanism on a grid. A low-bit
  distinguisher on neighbouring values (shift of class-wise norm Delta = 4) finds no gap; the
  same suite flags the former float64 draw added in floats (the control). A KS test checks
  the ideal law of the rows (i.i.d. linf K-norm rows, ``|V_k|_inf ~ Gamma(m, scale)``) and
  rejects a 10 % mis-scaled control.
* Estimator: the vector the certified solver sees is on the public grid, W is calibrated to
  ``tol + shift / n``, ``theta_`` is on W's grid; a low-bit suite on whole fits of
  neighbouring data (one label and one feature row changed) finds no gap, and its control is
  the grid check, which flags the old float vector and an old float release of theta.
"""

from __future__ import annotations

import importlib.util
import math
import pathlib

import numpy as np
import pytest
from scipy import stats

import dpreg.linear_model.logistic as logistic_module
from dpreg import ObjectivePerturbationLogistic
from dpreg.linear_model._certify import AMP_SHARE, perturbation_grid
from dpreg.linear_model._multinomial import (
    ROWS,
    float_rows_noise,
    rows_perturbation,
    softmax_sensitivity,
)
from dpreg.noise import KNormMechanism
from dpreg.noise._exact import float_knorm_sample, release_knorm
from dpreg.noise._grid import grid_exponent

_spec = importlib.util.spec_from_file_location(
    "_fp_noise_suite_multi",
    pathlib.Path(__file__).parents[1] / "noise" / "test_floating_point.py",
)
_suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_suite)
dp_violations = _suite._dp_violations  # the suite shared by every mechanism and estimator

K, M = 3, 2  # classes, coordinates per class row (intercept + one feature)


def _on_grid(x, step):
    x = np.asarray(x, dtype=float) / step  # a power of two: exact
    return bool(np.all(x == np.round(x)))


def _violations(a, b, epsilon):
    return {j: v for j in range(a.shape[1]) if (v := dp_violations(a[:, j], b[:, j], epsilon, 0.0))}


# ---------------------------------------------------------------------------------------------
# the sampler
# ---------------------------------------------------------------------------------------------
def test_rows_perturbation_is_on_its_public_grid_with_the_ideal_row_law():
    """Rows i.i.d. with ``|V_k|_inf ~ Gamma(m, scale)`` (the product form of the density);
    the control (10 % larger scale) is rejected; every entry is on the public grid, which
    the float reference sampler is not."""
    sens, eps, n = 4.0, 0.8, 3000
    scale = sens / eps
    grid = perturbation_grid(K * M, sens, eps)
    rng = np.random.default_rng(21)
    V = np.array([rows_perturbation(K, M, sens, eps, rng) for _ in range(n)])
    assert _on_grid(V, grid.step)
    assert not _on_grid(V, 2.0 * grid.step)  # not a coarser grid: the charged shift is right
    assert grid.step <= scale * 2.0**-36  # far finer than the noise
    row_norms = np.abs(V.reshape(n, K, M)).max(axis=2)
    for k in range(K):
        assert stats.kstest(row_norms[:, k], stats.gamma(M, scale=scale).cdf).pvalue > 1e-3
    control = stats.kstest(row_norms.ravel(), stats.gamma(M, scale=1.1 * scale).cdf)
    assert control.pvalue < 1e-6
    # independence of the rows: their norms are uncorrelated (Dirichlet shares would not be)
    assert abs(stats.spearmanr(row_norms[:, 0], row_norms[:, 1])[0]) < 0.07
    old = np.array([float_rows_noise(K, M, scale, rng) for _ in range(50)])
    assert not _on_grid(old, grid.step)


def _rows_release(values, sens, eps, rng):
    """The class-wise K-norm mechanism on the perturbation grid: ``values`` of shape (K, M)."""
    bits = perturbation_grid(K * M, sens, eps).bits
    return release_knorm(values, math.inf, M, sens, eps, rng, grid_bits=bits).ravel()


def _rows_suite(release, n_draws, seed):
    """Low-bit events of ``release(value)`` at value 0 and at a neighbour whose class-wise
    distance is Delta: one row moves by (1, 1), another by (-1, 1) (``|.|_{1,inf}`` = 2 < 4)
    and the last by (1, -1) (total 3 <= Delta = 4): on the real line a shift within the
    sensitivity, so any low-bit gap beyond e^eps is a floating-point leak."""
    sens, eps = softmax_sensitivity(ROWS, M), 1.0
    rng = np.random.default_rng(seed)
    zero = np.zeros((K, M))
    shift = np.array([[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0]])
    a = np.array([release(zero, sens, eps, rng) for _ in range(n_draws)])
    b = np.array([release(shift, sens, eps, rng) for _ in range(n_draws)])
    return _violations(a, b, eps)


def test_rows_release_low_bits_show_no_gap():
    assert _rows_suite(_rows_release, 4000, 1) == {}


def test_control_the_suite_flags_the_float_rows_draw():
    """The former draw added to the value in floats: "off grid 2^-53" separates the values."""

    def float_release(values, sens, eps, rng):
        return (values.ravel() + float_rows_noise(K, M, sens / eps, rng)).ravel()

    bad = _rows_suite(float_release, 4000, 2)
    assert len(bad) >= K * M - 1, bad  # the coordinates whose value moves off zero
    assert any("off grid 2^-53" in v for v in bad.values()), bad


@pytest.mark.slow
def test_rows_release_low_bits_show_no_gap_long():
    assert _rows_suite(_rows_release, 40_000, 3) == {}


# ---------------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------------
X0 = np.array([[-1.0], [-0.5], [0.0], [0.5], [1.0], [0.2]])
Y0 = np.array([0, 0, 1, 1, 2, 2])
X1, Y1 = X0.copy(), Y0.copy()
X1[-1], Y1[-1] = -1.0, 0  # the neighbour: the last record changes its feature and label
EPS = 2.0


def _multi(norm, rng, **kw):
    return ObjectivePerturbationLogistic(
        epsilon=EPS,
        norm=norm,
        bounds_X=(-1.0, 1.0),
        classes=[0, 1, 2],
        multi_class="multinomial",
        random_state=rng,
        **kw,
    )


@pytest.mark.parametrize("norm", [ROWS, "linf", "l2", "l1"])
def test_fit_feeds_a_grid_vector_and_charges_its_shift(norm, monkeypatch):
    """The vector the certified solver sees is on the public grid of the stacked dimension
    K m, and W is calibrated to twice ``(tol + shift / n) / mu``."""
    seen = []
    real = logistic_module.SoftmaxProblem

    def spy(Z1, Y, fit_intercept, alpha_l2, gamma, V, *weights):
        seen.append(np.array(V))
        return real(Z1, Y, fit_intercept, alpha_l2, gamma, V, *weights)

    monkeypatch.setattr(logistic_module, "SoftmaxProblem", spy)
    est = _multi(norm, 0).fit(X0, Y0)
    assert est.multi_class_ == "multinomial" and est.norm_ == norm
    eps_v = EPS * (1 - AMP_SHARE) * est.q_
    grid = perturbation_grid(K * M, est.sensitivity_, eps_v)
    assert _on_grid(seen[0], grid.step)
    # not a coarser grid: one vector of K m = 6 entries is all even with probability 1/64
    # (seed 0 of the l2 release is such a draw), so look at three fits' vectors together
    for seed in (1, 2):
        _multi(norm, seed).fit(X0, Y0)
    assert len(seen) == 3 and _on_grid(np.concatenate(seen), grid.step)
    assert not _on_grid(np.concatenate(seen), 2.0 * grid.step)
    radius = (est.grad_tol_ + grid.shift / len(X0)) / est.strong_convexity_
    assert est.amp_sensitivity_ >= 2.0 * radius
    scale = float(np.nextafter(est.amp_sensitivity_ / est.amp_epsilon_, np.inf))
    assert _on_grid(est.theta_, 2.0 ** grid_exponent(scale))


def test_control_the_grid_check_flags_the_old_float_vector(monkeypatch):
    seen = []
    real = logistic_module.SoftmaxProblem

    def spy(Z1, Y, fit_intercept, alpha_l2, gamma, V, *weights):
        seen.append(np.array(V))
        return real(Z1, Y, fit_intercept, alpha_l2, gamma, V, *weights)

    def old(n_classes, dim, sens, eps, rng):
        return float_rows_noise(n_classes, dim, sens / eps, rng)

    monkeypatch.setattr(logistic_module, "SoftmaxProblem", spy)
    monkeypatch.setattr(logistic_module, "rows_perturbation", old)
    est = _multi(ROWS, 0).fit(X0, Y0)
    eps_v = EPS * (1 - AMP_SHARE) * est.q_
    assert not _on_grid(seen[0], perturbation_grid(K * M, est.sensitivity_, eps_v).step)


def test_control_an_old_float_release_of_theta_is_off_the_grid(monkeypatch):
    class FloatW(KNormMechanism):
        def randomise(self, value):
            noise = float_knorm_sample(self.ball, self.scale, 1, self._rng)[0]
            return np.asarray(value, dtype=float) + noise

    monkeypatch.setattr(logistic_module, "KNormMechanism", FloatW)
    est = _multi(ROWS, 1).fit(X0, Y0)
    scale = float(np.nextafter(est.amp_sensitivity_ / est.amp_epsilon_, np.inf))
    assert not _on_grid(est.theta_, 2.0 ** grid_exponent(scale))


def _fits_suite(norm, n_fits, seed):
    """Every released number (theta_, coef_, intercept_) of many multinomial fits on two
    neighbouring data sets, through the low-bit suite."""
    rng = np.random.default_rng(seed)
    out = []
    for X, y in ((X0, Y0), (X1, Y1)):
        est = _multi(norm, rng)
        rows = []
        for _ in range(n_fits):
            est.fit(X, y)
            rows.append(np.r_[est.theta_.ravel(), est.coef_.ravel(), est.intercept_])
        out.append(np.array(rows))
    return _violations(out[0], out[1], EPS)


@pytest.mark.parametrize("norm", [ROWS, "linf"])
def test_multinomial_fits_low_bits_show_no_gap(norm):
    assert _fits_suite(norm, 60, 4) == {}


@pytest.mark.slow
@pytest.mark.parametrize("norm", [ROWS, "linf"])
def test_multinomial_fits_low_bits_show_no_gap_long(norm):
    assert _fits_suite(norm, 1000, 5) == {}
