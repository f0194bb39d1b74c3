"""dpreg._bounds: clip / scale / unscale round trips and private bounds."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from dpreg import BudgetAccountant
from dpreg._bounds import (
    clip,
    from_unit,
    private_bounds,
    resolve_bounds,
    to_unit,
    unscale_linear,
)
from dpreg.exceptions import PrivacyLeakWarning


def test_to_unit_is_in_unit_box_and_inverts_inside_bounds():
    rng = np.random.default_rng(0)
    lower, upper = np.array([-3.0, 16.0, 5.0]), np.array([7.0, 16.001, 5.0])
    X = rng.uniform(-10, 20, size=(500, 3))
    Z = to_unit(X, lower, upper)
    assert np.all(np.abs(Z) <= 1.0) and np.all(Z[:, 2] == 0.0)
    back = from_unit(Z, lower, upper)
    assert np.allclose(back, clip(X, lower, upper), rtol=0, atol=1e-9)
    Zs = to_unit(X, lower, upper, symmetric=True)
    assert np.all(np.abs(Zs) <= 1.0)
    assert np.allclose(from_unit(Zs, lower, upper, symmetric=True), clip(X, lower, upper))


def test_unscale_linear_matches_a_fit_in_user_units():
    rng = np.random.default_rng(1)
    lower, upper = np.array([0.0, -50.0]), np.array([10.0, 50.0])
    X = rng.uniform(lower, upper, size=(200, 2))
    y = 3.0 + X @ np.array([0.5, -0.1]) + rng.normal(scale=0.1, size=200)
    ylo, yhi = -20.0, 30.0
    fit = LinearRegression().fit(to_unit(X, lower, upper), (y - 5.0) / 25.0)
    coef, intercept = unscale_linear(fit.coef_, fit.intercept_, lower, upper, ylo, yhi)
    ref = LinearRegression().fit(X, y)
    assert np.allclose(coef, ref.coef_) and np.isclose(intercept, ref.intercept_)


def test_private_bounds_cover_the_bulk_and_charge_once():
    X = np.random.default_rng(2).normal([100.0, -0.001], [10.0, 0.0005], size=(20000, 2))
    acc = BudgetAccountant(epsilon=1.0)
    lo, hi = private_bounds(X, 0.5, random_state=0, accountant=acc)
    assert acc.spent == (0.5, 0.0)
    q1, q3 = np.quantile(X, [0.25, 0.75], axis=0)
    iqr = q3 - q1
    assert np.all(lo < q1) and np.all(hi > q3)
    assert np.all(lo > q1 - 3 * iqr) and np.all(hi < q3 + 3 * iqr)


def test_private_bounds_validation_before_spending():
    acc = BudgetAccountant(epsilon=1.0)
    good = np.ones((5, 2))
    for X, kwargs in (
        (np.array([[1.0, np.nan]]), {}),
        (np.ones((0, 2)), {}),
        (np.ones((2, 2, 2)), {}),
        (good, {"levels": (0.9, 0.1)}),
        (good, {"levels": (0.1, 1.1)}),
        (good, {"candidate_range": (0, np.inf)}),
        (good, {"widen": -1.0}),
        (good, {"asinh_scale": 0}),
        (good, {"epsilon": -1}),
    ):
        args = {"epsilon": 0.5, **kwargs}
        with pytest.raises(ValueError):
            private_bounds(X, accountant=acc, **args)
    assert acc.spent == (0.0, 0.0)


def test_private_bounds_never_raise_after_spending():
    """Ties, constant columns, n = 1 and data far outside the candidate range all give usable
    bounds (lower <= upper inside the candidate range): no data-dependent exception."""
    for X in (np.zeros((1, 1)), np.full((50, 2), 7.0), np.array([[1e12], [-1e12], [3.0]])):
        lo, hi = private_bounds(X, 1.0, candidate_range=(-1e3, 1e3), random_state=0)
        assert np.all(lo <= hi) and np.all(lo >= -1e3) and np.all(hi <= 1e3)


def test_resolve_bounds_modes():
    X = np.random.default_rng(3).normal(size=(3000, 2))
    lo, hi, left = resolve_bounds("private", X, epsilon=2.0, share=0.25, random_state=0)
    assert left == 1.5 and lo.shape == (2,) and np.all(lo < -0.5) and np.all(hi > 0.5)
    lo, hi, left = resolve_bounds((-1, [1, 2]), X, epsilon=2.0)
    assert left == 2.0 and hi.tolist() == [1.0, 2.0]
    with pytest.warns(PrivacyLeakWarning):
        resolve_bounds(None, X, epsilon=1.0)
    for bad in ("privat", ("a", "b")):
        with pytest.raises(ValueError):
            resolve_bounds(bad, X, epsilon=1.0)
    with pytest.raises(ValueError):
        resolve_bounds("private", X, epsilon=1.0, share=1.0)
