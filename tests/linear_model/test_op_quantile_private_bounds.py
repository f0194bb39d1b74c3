"""ObjectivePerturbationQuantileRegressor with ``bounds_X/bounds_y="private"`` (#12, #13 item 5).

The private-bounds path must (i) plan every constant of the regression from public inputs
before the spend, with the budget ``fit_bounds`` later leaves, (ii) spend ``epsilon`` once in
total, (iii) read nothing from the data without privacy (no PrivacyLeakWarning), and (iv) give
a useful fit in original units with no bounds chosen by hand.
"""

import math
import warnings

import numpy as np
import pytest

from dpreg import BudgetAccountant, ObjectivePerturbationQuantileRegressor
from dpreg._bounds import bounds_epsilon, fit_bounds
from dpreg.exceptions import PrivacyLeakWarning

OPQ = ObjectivePerturbationQuantileRegressor


def _raw(n=20_000, seed=0):
    """Raw-unit data far from [-1, 1]: income-like features and a shifted response."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(40.0, 12.0, n), rng.normal(2_000.0, 500.0, n)])
    y = 300.0 + 2.0 * X[:, 0] + 0.1 * X[:, 1] + rng.normal(0.0, 10.0, n)
    return X, y


def test_private_bounds_fit_is_private_end_to_end_and_accurate():
    X, y = _raw()
    acc = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # nothing read without privacy
        model = OPQ(
            epsilon=2.0, bounds_X="private", bounds_y="private", random_state=3, accountant=acc
        ).fit(X, y)
    assert len(acc) == 1
    assert acc.total()[0] == pytest.approx(2.0)
    # the released boxes are not the data's range (they come from the private quantile release)
    lo, hi = model.bounds_X_
    assert np.all(lo > X.min(axis=0)) or np.all(hi < X.max(axis=0))
    # the fit is usable in raw units (non-private slopes 2.0 and 0.1)
    assert model.coef_ == pytest.approx([2.0, 0.1], abs=0.35)


def test_public_plan_uses_the_budget_fit_bounds_leaves():
    """The plan is made before the spend from ``epsilon - bounds_epsilon(...)`` with the same
    guard as ``fit_bounds`` (exact since session 21: lowered while the two parts' exact sum
    exceeds epsilon): equal budgets over a grid of public inputs. A control (the plan at the
    whole epsilon) differs, so the comparison can fail."""
    rng = np.random.default_rng(0)
    for n in (50, 1_000, 100_000):
        for eps in (0.1, 1.0 / 3.0, 1.0, 7.3):
            for share in ("auto", 0.1, 0.37):
                X = rng.normal(size=(n, 3))
                y = rng.normal(size=n)
                eps_b = bounds_epsilon(share, eps, n, 4)
                planned = eps - eps_b
                while math.fsum([eps_b, planned, -eps]) > 0:  # the exact guard
                    planned = float(np.nextafter(planned, 0.0))
                _, left = fit_bounds(
                    [X, y], ["private", "private"], eps, share,
                    np.random.default_rng(1), ("bounds_X", "bounds_y"),
                )  # fmt: skip
                assert left == planned
                assert left != eps  # control


def test_only_the_private_parameter_is_released():
    X, y = _raw(5_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = OPQ(epsilon=1.0, bounds_X="private", bounds_y=(0.0, 1_000.0), random_state=0).fit(
            X, y
        )
    assert model.bounds_y_[0][0] == 0.0 and model.bounds_y_[1][0] == 1_000.0
    with pytest.warns(PrivacyLeakWarning):  # public X read from the data: warned as before
        OPQ(epsilon=1.0, bounds_y="private", random_state=0).fit(X, y)


def test_private_bounds_fit_is_reproducible_and_random():
    X, y = _raw(3_000)
    a = OPQ(epsilon=1.0, bounds_X="private", bounds_y="private", random_state=5).fit(X, y)
    b = OPQ(epsilon=1.0, bounds_X="private", bounds_y="private", random_state=5).fit(X, y)
    c = OPQ(epsilon=1.0, bounds_X="private", bounds_y="private", random_state=6).fit(X, y)
    assert np.array_equal(a.theta_, b.theta_)
    assert not np.array_equal(a.theta_, c.theta_)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"fit_intercept": False}, "fit_intercept=True"),
        ({"bounds_share": 0.0}, "bounds_share"),
        ({"bounds_share": "half"}, "bounds_share"),
        ({"epsilon": 0.0}, "epsilon"),
    ],
)
def test_bad_private_settings_raise_before_spending(kw, match):
    X, y = _raw(200)
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match=match):
        OPQ(bounds_X="private", bounds_y="private", accountant=acc, **kw).fit(X, y)
    assert len(acc) == 0
