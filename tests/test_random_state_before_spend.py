"""A bad ``random_state`` is refused before the spend, and the Gibbs sampler's warning comes
before the spend with ``"private"`` bounds too (session-21 audit: both came after the charge,
so a user's typo or warnings-as-errors cost budget for nothing)."""

import warnings

import numpy as np
import pytest

from dpreg import (
    BudgetAccountant,
    FunctionalLinearRegression,
    KNGQuantileRegressor,
    ObjectivePerturbationLogistic,
    PrivateProjectionMedian,
)
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.linear_model.functional import sufficient_statistics


def _data(n=200):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, X @ [1.0, -1.0] + 0.1 * rng.normal(size=n)


def _fits(acc, random_state):
    X, y = _data()
    lab = (y > 0).astype(int)
    kw = {"accountant": acc, "random_state": random_state}
    return {
        "functional": lambda: FunctionalLinearRegression(
            bounds_X=(-1, 1), bounds_y=(-3, 3), **kw
        ).fit(X, y),
        "functional-private": lambda: FunctionalLinearRegression(
            bounds_X="private", bounds_y="private", **kw
        ).fit(X, y),
        "functional-statistics": lambda: FunctionalLinearRegression(**kw).fit_statistics(
            sufficient_statistics(X, y, bounds_X=(-1, 1), bounds_y=(-3, 3))
        ),
        "logistic": lambda: ObjectivePerturbationLogistic(
            bounds_X=(-1, 1), classes=[0, 1], **kw
        ).fit(X, lab),
        "kng": lambda: KNGQuantileRegressor(bounds_X=(-1, 1), **kw).fit(X, y),
        "median": lambda: PrivateProjectionMedian(epsilon=50.0, **kw).fit(
            np.random.default_rng(1).normal(size=(500, 2))
        ),
    }


NAMES = list(_fits(None, None))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", ["bad", True, -1, 1.5])
def test_bad_random_state_is_refused_before_the_spend(name, bad):
    acc = BudgetAccountant(epsilon=100.0, delta=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises((ValueError, TypeError)):
            _fits(acc, bad)[name]()
    assert acc.spent == (0.0, 0.0)


@pytest.mark.parametrize("name", NAMES)
def test_control_a_good_random_state_fits_and_spends(name):
    acc = BudgetAccountant(epsilon=100.0, delta=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        _fits(acc, 0)[name]()
    assert acc.spent[0] > 0


@pytest.mark.parametrize("bounds", [((-1, 1), (-3, 3)), ("private", "private")])
def test_gibbs_warning_comes_before_the_spend(bounds):
    X, y = _data()
    acc = BudgetAccountant(epsilon=10.0)
    est = KNGQuantileRegressor(
        sampler="gibbs", bounds_X=bounds[0], bounds_y=bounds[1], accountant=acc, n_sweeps=5,
        random_state=0,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        with pytest.raises(PrivacyLeakWarning, match="sampler='gibbs'"):
            est.fit(X, y)
    assert acc.spent == (0.0, 0.0)
