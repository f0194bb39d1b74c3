"""Issue #10 item 6 (KNG quantile regression): one regression test per reported defect."""

import itertools
import warnings

import numpy as np
import pytest

from dpreg import BudgetAccountant, KNGQuantileRegressor
from dpreg.exceptions import BudgetExceededError
from dpreg.linear_model._quantile_core import scale_features
from dpreg.noise.balls import make_ball


def _data(n=60, p=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, p))
    return X, X @ np.arange(1.0, p + 1) + rng.standard_normal(n)


class _RefusingAccountant(BudgetAccountant):
    """Passes the up-front check, refuses the spend itself (e.g. a concurrent fit won)."""

    def spend(self, epsilon, delta=0.0):
        raise BudgetExceededError("refused by the ledger")


def test_kng_coef_not_stored_before_spend():
    X, y = _data()
    model = KNGQuantileRegressor(
        bounds_X=(0, 1), bounds_y=(-10, 10), random_state=0, accountant=_RefusingAccountant()
    )
    with pytest.raises(BudgetExceededError):
        model.fit(X, y)
    fitted = [a for a in vars(model) if a.endswith("_") and not a.startswith("_")]
    assert fitted == [] or fitted == ["n_features_in_"], fitted
    assert not hasattr(model, "coef_") and not hasattr(model, "intercept_")


@pytest.mark.parametrize("p", [1, 2, 3])
def test_kng_responses_1e308_do_not_raise(p):
    """All responses at +-1e308 (public bounds given): no data-dependent exception, a finite
    release inside the domain (old code: LinAlgError from the non-private anchor)."""
    rng = np.random.default_rng(p)
    X = rng.uniform(0, 1, size=(20, p))
    for y in (np.full(20, 1e308), np.r_[np.full(10, 1e308), np.full(10, -1e308)]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # sklearn's finiteness check sums y
            m = KNGQuantileRegressor(bounds_X=(0, 1), bounds_y=(-10, 10), random_state=0)
            m.fit(X, y)
        assert np.all(np.isfinite(m.coef_)) and np.isfinite(m.intercept_)
        assert np.all(np.abs(m.coef_) <= 10.0 + 1e-9) and -30 <= m.intercept_ <= 30


def test_kng_no_intercept_with_coef_bounds():
    """fit_intercept=False with coef_bounds used to raise IndexError (float mask)."""
    X, y = _data()
    for cb in (5.0, ([-5.0, -4.0], [5.0, 6.0])):
        m = KNGQuantileRegressor(
            fit_intercept=False, bounds_X=(0, 1), coef_bounds=cb, random_state=0
        ).fit(X, y)
        assert m.intercept_ == 0.0 and m.coef_.shape == (2,)
        lower, upper = m.coef_bounds_
        assert np.all(lower <= m.coef_) and np.all(m.coef_ <= upper)


def test_kng_coef_bounds_1e300_clear():
    """coef_bounds=1e300 used to fail inside _line_range with 'zero-size array'."""
    X, y = _data()
    m = KNGQuantileRegressor(bounds_X=(0, 1), coef_bounds=1e300, random_state=0).fit(X, y)
    assert np.all(np.isfinite(m.coef_)) and np.isfinite(m.intercept_)
    for cb in (1e305, ([-1e308] * 3, [1e308] * 3)):
        with pytest.raises(ValueError, match="coef_bounds"):
            KNGQuantileRegressor(bounds_X=(0, 1), coef_bounds=cb).fit(X, y)
    with pytest.raises(ValueError, match="coef_bounds .or bounds_y."):
        KNGQuantileRegressor(bounds_X=(0, 1), bounds_y=(-1e308, 1e308)).fit(X, y)


def _max_gradient_change(tau, lo, hi, ball, rng, n_random=3000):
    """Adversarial search: the largest ||Delta g||_K over replacements of one record.

    Records are raw feature vectors (vertices of the bounds, points beyond them so clipping
    is exercised, random points) with either indicator value (the response is free)."""
    p = lo.size
    verts = np.array(list(itertools.product(*zip(lo, hi))))
    beyond = np.array(list(itertools.product(*zip(lo - 5.0, hi + 5.0))))
    raw = np.vstack([verts, beyond, rng.uniform(lo - 1, hi + 1, size=(n_random, p))])
    W, _, _ = scale_features(raw, lo, hi, fit_intercept=False)
    best = 0.0
    for alpha, alpha2 in itertools.product((1.0 - tau, -tau), repeat=2):
        # all pairs among the structured points, random pairs among the rest
        k = verts.shape[0] + beyond.shape[0]
        S = W[:k]
        diffs = alpha * S[:, None, :] - alpha2 * S[None, :, :]
        best = max(best, float(np.max(ball.norm(diffs.reshape(-1, p)))))
        i, j = rng.integers(0, W.shape[0], size=(2, 20000))
        best = max(best, float(np.max(ball.norm(alpha * W[i] - alpha2 * W[j]))))
    return best


@pytest.mark.parametrize("norm", ["linf", "l1", "l2"])
@pytest.mark.parametrize("tau", [0.5, 0.9, 0.2])
@pytest.mark.parametrize("bounds", [((0.0, 0.0), (10.0, 1.0)), ((-1.0, 2.0), (3.0, 2.5))])
def test_kng_sensitivity_no_intercept_asymmetric_bounds(norm, tau, bounds):
    """Without intercept, asymmetric bounds_X: sensitivity_ is the exact maximum (the search
    reaches it and never exceeds it); the old value 2 max(tau, 1 - tau) C was 2-40 % larger."""
    lo, hi = np.array(bounds[0]), np.array(bounds[1])
    X, y = _data(p=2)
    m = KNGQuantileRegressor(
        quantile=tau, norm=norm, fit_intercept=False, bounds_X=(lo, hi), coef_bounds=50.0
    ).fit(X, y)
    found = _max_gradient_change(tau, lo, hi, make_ball(norm, 2), np.random.default_rng(0))
    assert found <= m.sensitivity_ * (1 + 1e-12)
    assert found >= m.sensitivity_ * (1 - 1e-9)
    old = 2 * max(tau, 1 - tau) * float(make_ball(norm, 2).norm(np.ones(2)))
    assert m.sensitivity_ <= old
    if tau != 0.5:  # at tau = 1/2 the opposite-side term max(|a|, |b|) = 1 is the maximum
        assert m.sensitivity_ < old
