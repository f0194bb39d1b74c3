"""Adaptive regularisation (``ridge="adaptive"``): the lambda_min release and its use."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg.linear_model import _ridge
from dpreg.linear_model.functional import sufficient_statistics


def _lam_min(rows):
    return float(np.linalg.eigvalsh(rows.T @ rows)[0])


def _design(rng, n, p):
    return np.column_stack([np.ones(n), rng.uniform(-1, 1, size=(n, p))])


def test_sensitivity_is_attained():
    """Hadamard rows: removing the all-ones row drops lambda_min by exactly q."""
    H = np.array([[1, 1, -1, -1], [1, -1, 1, -1], [1, -1, -1, 1]], dtype=float)
    x = np.ones(4)
    D = np.vstack([x, np.repeat(H, 5, axis=0)])
    D2 = np.vstack([H[0], np.repeat(H, 5, axis=0)])
    change = abs(_lam_min(D) - _lam_min(D2))
    assert change == pytest.approx(_ridge.lambda_min_sensitivity(4), abs=1e-9)


@pytest.mark.parametrize("p", [1, 2, 4])
def test_adversarial_neighbours_never_exceed_sensitivity(p):
    """Search neighbouring data sets (corners and random rows, several base designs)."""
    rng = np.random.default_rng(p)
    q = p + 1
    bound = _ridge.lambda_min_sensitivity(q)
    corners = [np.r_[1.0, c] for c in itertools.product([-1.0, 1.0], repeat=p)]
    worst = 0.0
    for trial in range(12):
        n = int(rng.integers(q, 4 * q + 2))
        base = _design(rng, n, p)
        if trial % 3 == 0:  # near-collinear designs: small lambda_min, where it matters most
            # entries of magnitude ~1 or ~0.01 with random signs, within [-1, 1]
            mag = 1.0 - 0.01 * rng.random((n, p)) if trial % 2 else 0.01 * rng.random((n, p))
            base[:, 1:] = np.sign(base[:, 1:]) * mag
        lam = _lam_min(base)
        candidates = corners + [np.r_[1.0, rng.uniform(-1, 1, p)] for _ in range(8)]
        for i in range(n):
            for c in candidates:
                other = base.copy()
                other[i] = c
                worst = max(worst, abs(_lam_min(other) - lam))
    assert worst <= bound * (1 + 1e-12)
    assert worst >= 0.5 * bound  # the search gets close enough to be a real check


def test_release_is_laplace_with_stated_scale():
    """KS test of released - lambda_min against Laplace(sens / eps); 2x mis-scale rejected."""
    rng = np.random.default_rng(0)
    Z = _design(rng, 200, 3)
    G = Z.T @ Z
    lam = _lam_min(Z)
    eps = 0.7
    draws = np.array([_ridge.release_lambda_min(G, 200, eps, rng)[0] for _ in range(3000)])
    _, scale = _ridge.release_lambda_min(G, 200, eps, rng)
    assert scale == pytest.approx(4 / eps, rel=1e-9)
    assert stats.kstest(draws - lam, stats.laplace(scale=scale).cdf).pvalue > 1e-3
    # control: a mechanism calibrated to 2 * eps (half the noise) is caught
    assert stats.kstest(draws - lam, stats.laplace(scale=scale / 2).cdf).pvalue < 1e-6


def test_adaptive_floor_formula():
    lcb_shift = math.log(1 / (2 * _ridge.RHO))
    assert _ridge.adaptive_floor(-5.0, 1.0, 10.0, 1.0) == pytest.approx(10.0)
    assert _ridge.adaptive_floor(4.0 + lcb_shift, 1.0, 10.0, 1.0) == pytest.approx(6.0)
    assert _ridge.adaptive_floor(1e6, 1.0, 10.0, 1.0) == 0.0
    # the default factor is the documented public constant
    assert _ridge.adaptive_floor(-5.0, 1.0, 10.0) == pytest.approx(10.0 * _ridge.ADAPTIVE_FACTOR)


def _data(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = 1.0 + X @ np.array([2.0, -1.0]) + rng.normal(scale=0.1, size=n)
    return X, y


def test_adaptive_spends_epsilon_once_and_reports_lambda_min():
    X, y = _data()
    acc = BudgetAccountant(epsilon=10.0)
    model = FunctionalLinearRegression(
        epsilon=2.0,
        bounds_X=(-1, 1),
        bounds_y=(-4, 6),
        ridge="adaptive",
        random_state=0,
        accountant=acc,
    ).fit(X, y)
    assert acc.spent[0] == pytest.approx(2.0)
    G = sufficient_statistics(X, y, (-1, 1), (-4, 6)).gram
    assert abs(model.lambda_min_ - _lam_min_from_gram(G)) < 60 * 3 / (0.05 * 2.0)
    # well-conditioned data at this n*eps: lambda_min is far above the noise, so no floor
    assert model.noisy_statistics_.lam == 0.0
    np.testing.assert_allclose(model.coef_, [2.0, -1.0], atol=0.05)
    fixed = FunctionalLinearRegression(
        epsilon=2.0, bounds_X=(-1, 1), bounds_y=(-4, 6), random_state=0
    ).fit(X, y)
    assert fixed.lambda_min_ is None and fixed.noisy_statistics_.lam > 0


def _lam_min_from_gram(G):
    return float(np.linalg.eigvalsh(G)[0])


def test_adaptive_floor_kept_when_lambda_min_is_small():
    """Collinear features: lambda_min ~ 0, so the floor stays near 1.5 sqrt(q) sigma_G."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, 500)
    X = np.column_stack([x, x])
    y = x + rng.normal(scale=0.1, size=500)
    model = FunctionalLinearRegression(
        epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-2, 2), ridge="adaptive", random_state=0
    ).fit(X, y)
    ns = model.noisy_statistics_
    level = _ridge.ADAPTIVE_FACTOR * math.sqrt(3) * ns.plan.gram_std
    assert 0 < ns.lam <= level
    assert ns.epsilon == pytest.approx(0.95)  # the statistics got 1 - ridge_share of epsilon


@pytest.mark.parametrize(
    "kw",
    [
        {"ridge": "auto"},
        {"ridge": None},
        {"ridge": "adaptive", "ridge_share": 0.0},
        {"ridge": "adaptive", "ridge_share": 1.0},
        {"ridge": "adaptive", "ridge_share": True},
        {"ridge": "adaptive", "ridge_share": 0.6, "inference_share": 0.5},
    ],
)
def test_bad_ridge_options_fail_before_spending(kw):
    X, y = _data(100)
    acc = BudgetAccountant(epsilon=5.0)
    model = FunctionalLinearRegression(bounds_X=(-1, 1), bounds_y=(-4, 6), accountant=acc, **kw)
    with pytest.raises(ValueError, match="ridge"):
        model.fit(X, y)
    assert acc.spent[0] == 0.0


def test_adaptive_with_delta_and_fit_statistics():
    X, y = _data(5000)
    st = sufficient_statistics(X, y, (-1, 1), (-4, 6))
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    m = FunctionalLinearRegression(
        epsilon=1.0, delta=1e-6, ridge="adaptive", random_state=0, accountant=acc
    ).fit_statistics(st)
    assert acc.spent == pytest.approx((1.0, 1e-6))
    assert m.lambda_min_ is not None and np.all(np.isfinite(m.coef_))
