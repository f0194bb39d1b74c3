"""KNGQuantileRegressor with sample_weight in [0, 1]: sensitivity, exact law, validation.

Derivation: ``dpreg/linear_model/_quantile_core.py`` ("Sample weights") and
``docs/kng_quantile_regression.md``: a weighted neighbour difference is a convex combination
of ``a w - a' w'``, ``a w``, ``-a' w'`` and 0, each of K-norm at most Delta.
"""

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import QuantileRegressor
from sklearn.model_selection import cross_validate

from dpreg import BudgetAccountant, KNGQuantileRegressor
from dpreg.linear_model._quantile_core import quantile_sensitivity

ORDERS = {"linf": np.inf, "l1": 1, "l2": 2}


def _row(rng, p, box):
    lo, hi = (np.broadcast_to(np.asarray(b, dtype=float), (p,)) for b in box)
    kind = rng.integers(3)
    if kind == 0:
        return np.where(rng.random(p) < 0.5, lo, hi)  # a vertex of the box
    if kind == 1:
        return np.clip(np.zeros(p), lo, hi)
    return rng.uniform(lo, hi)


def _worst(tau, p, fit_intercept, box, w_max, rng, trials=3000):
    """Largest ||omega a w - omega' a' w'||_K over rows in ``box`` (adversarial search)."""
    worst = np.zeros(3)
    for _ in range(trials):
        rows = []
        for _ in range(2):
            z = _row(rng, p, box)
            w = np.r_[1.0, z] if fit_intercept else z
            a = (1.0 - tau) if rng.random() < 0.5 else -tau
            u = rng.random()
            om = w_max if u < 0.4 else (0.0 if u < 0.5 else rng.uniform(0, w_max))
            rows.append(om * a * w)
        d = rows[0] - rows[1]
        worst = np.maximum(worst, [np.linalg.norm(d, ORDERS[k]) for k in ORDERS])
    return worst


@pytest.mark.parametrize(
    "tau, p, fit_intercept, box",
    [
        (0.5, 2, True, (-1.0, 1.0)),
        (0.9, 1, True, (-1.0, 1.0)),
        (0.2, 3, True, (-1.0, 1.0)),
        (0.7, 2, False, (-1.0, 1.0)),
        (0.8, 2, False, (np.array([0.0, -0.5]), np.array([1.0, 1.0]))),  # sub-box, no intercept
    ],
)
def test_weighted_sensitivity_adversarial(tau, p, fit_intercept, box):
    rng = np.random.default_rng(int(10 * tau) + p)
    fb = None if fit_intercept else tuple(np.broadcast_to(b, (p,)) for b in box)
    bounds = np.array(
        [quantile_sensitivity(tau, p, k, fit_intercept, feature_box=fb) for k in ORDERS]
    )
    worst = _worst(tau, p, fit_intercept, box, 1.0, rng)
    assert np.all(worst <= bounds * (1 + 1e-12))
    assert np.all(worst >= 0.95 * bounds)  # the search reaches the (tight) unweighted bound
    # control: weights up to 2 break every bound, and the same search finds it
    assert np.all(_worst(tau, p, fit_intercept, box, 2.0, rng) > bounds)


def test_weighted_intercept_only_is_exact_weighted_private_quantile():
    """Intercept only: the density is exp(-eps/2 |sum_i omega_i (1{y_i <= t} - tau)|) on the
    public interval; KS test of the released draws against its exact CDF."""
    y = np.array([3.0, 7.5, 1.0, 4.2, 9.9, 6.1, 2.2])
    om = np.array([1.0, 0.2, 0.5, 1.0, 0.0, 0.7, 0.3])
    X = np.zeros((7, 1))
    tau, eps, lo, hi = 0.6, 2.0, -5.0, 15.0
    order = np.argsort(y)
    knots = np.r_[lo, y[order], hi]
    below = np.r_[0.0, np.cumsum(om[order])]  # weight at or below each piece
    mass = np.exp(-eps / 2 * np.abs(below - tau * om.sum())) * np.diff(knots)
    cum = np.r_[0.0, np.cumsum(mass)] / mass.sum()

    def cdf(t):
        j = np.clip(np.searchsorted(knots, t, side="right") - 1, 0, 7)
        return cum[j] + (cum[j + 1] - cum[j]) * (t - knots[j]) / np.diff(knots)[j]

    draws = []
    for seed in range(1200):
        m = KNGQuantileRegressor(
            quantile=tau, epsilon=eps, bounds_X=(0, 0), bounds_y=(lo, hi), random_state=seed
        ).fit(X, y, sample_weight=om)
        draws.append(m.intercept_)
    assert m.sensitivity_ == 1.0 and m.sample_weighted_
    assert stats.kstest(draws, cdf).pvalue > 1e-3
    # control: the unweighted law is rejected by the same test
    unweighted_cum = np.exp(-eps / 2 * np.abs(np.arange(8) - 7 * tau)) * np.diff(knots)
    cum = np.r_[0.0, np.cumsum(unweighted_cum)] / unweighted_cum.sum()
    assert stats.kstest(draws, cdf).pvalue < 1e-6


def test_weighted_fit_matches_weighted_quantile_regression():
    rng = np.random.default_rng(3)
    n = 3000
    X = rng.uniform(-1, 1, size=(n, 1))
    group = rng.random(n) < 0.5
    y = np.where(group, 2 * X[:, 0], -2 * X[:, 0] + 1) + 0.1 * rng.standard_normal(n)
    w = np.where(group, 1.0, 0.05)
    ref = QuantileRegressor(quantile=0.5, alpha=0.0).fit(X, y, sample_weight=w)
    model = KNGQuantileRegressor(
        epsilon=200.0, bounds_X=(-1, 1), bounds_y=(-5, 5), random_state=0
    ).fit(X, y, sample_weight=w)
    assert model.coef_[0] == pytest.approx(ref.coef_[0], abs=0.1)
    assert model.intercept_ == pytest.approx(ref.intercept_, abs=0.1)
    # control: the unweighted median regression is far away
    plain = QuantileRegressor(quantile=0.5, alpha=0.0).fit(X, y)
    assert abs(plain.coef_[0] - ref.coef_[0]) > 0.5


@pytest.mark.parametrize(
    "weights",
    [
        lambda n: np.full(n, 1.5),
        lambda n: np.r_[np.ones(n - 1), -0.01],
        lambda n: np.r_[np.ones(n - 1), np.inf],
        lambda n: np.r_[np.ones(n - 1), np.nan],
        lambda n: np.zeros(n),
        lambda n: np.ones(n - 1),
        lambda n: np.ones((n, 2)),
    ],
)
def test_bad_weights_raise_before_spending(weights):
    rng = np.random.default_rng(0)
    X, y = rng.uniform(0, 1, size=(50, 1)), rng.normal(size=50)
    acc = BudgetAccountant(epsilon=3.0)
    with pytest.raises(ValueError, match="sample_weight"):
        KNGQuantileRegressor(epsilon=1.0, bounds_X=(0, 1), bounds_y=(-5, 5), accountant=acc).fit(
            X, y, sample_weight=weights(50)
        )
    assert acc.ledger == []


def test_cross_validate_passes_weights():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(600, 1))
    y = X[:, 0] + rng.normal(size=600)
    w = rng.uniform(0.2, 1.0, size=600)
    est = KNGQuantileRegressor(epsilon=2.0, bounds_X=(0, 1), bounds_y=(-5, 5), random_state=0)
    cv = cross_validate(est, X, y, params={"sample_weight": w}, cv=3)
    assert np.all(np.isfinite(cv["test_score"]))
