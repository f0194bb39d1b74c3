"""The side releases refuse, before anything is spent, what used to fail after the spend.

Found by the session-21 audit (each case charged the ledger and then raised, or released on
the wrong data): a subnormal epsilon (or a subnormal epsilon share of the functional fit)
whose noise scale overflowed to inf in the sampler; a multi-output functional fit with
``inference_share > 0``; ``fit_statistics`` with non-finite statistics; a Hessian or scale
release on data with another number of rows than the fit's.
"""

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
from dpreg._validation import RELEASE_EPSILON_MIN
from dpreg.linear_model.functional import sufficient_statistics


def _acc():
    return BudgetAccountant(epsilon=100.0, delta=0.1)


def _quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


def _logistic(acc, n=400):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-X @ [1.5, -1.0]))).astype(int)
    est = ObjectivePerturbationLogistic(
        epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], accountant=acc, random_state=0
    )
    return _quiet(lambda: est.fit(X, y)), (X, y), est.release_hessian


def _kng(acc, n=300):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(n, 1))
    y = 0.5 + X[:, 0] + rng.normal(size=n)
    est = KNGQuantileRegressor(epsilon=2.0, bounds_X=(-1, 1), accountant=acc, random_state=0)
    return _quiet(lambda: est.fit(X, y)), (X, y), est.release_curvature


def _median(acc, n=2000):
    X = np.random.default_rng(2).normal(size=(n, 2))
    est = PrivateProjectionMedian(
        epsilon=4.0, norm="linf", scale=[1.0, 1.0], accountant=acc, random_state=0
    )
    return _quiet(lambda: est.fit(X)), (X,), est.release_scale


RELEASES = {"logistic": _logistic, "kng": _kng, "median": _median}


@pytest.mark.parametrize("name", RELEASES)
@pytest.mark.parametrize("epsilon", [1e-320, 5e-324, 1e-101])
def test_a_release_below_the_floor_is_refused_before_the_spend(name, epsilon):
    acc = _acc()
    _, data, release = RELEASES[name](acc)
    before = acc.total()
    with pytest.raises(ValueError, match="at least 1e-100"):
        release(*data, epsilon=epsilon, random_state=1)
    assert acc.total() == before


@pytest.mark.parametrize("name", RELEASES)
def test_a_release_at_the_floor_is_finite(name):
    """Control: the floor itself releases (finite, charged), so the rule is not too strict."""
    acc = _acc()
    est, data, release = RELEASES[name](acc)
    before = acc.total()[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing may raise after the spend
        release(*data, epsilon=RELEASE_EPSILON_MIN, random_state=1)
    assert acc.total()[0] == pytest.approx(before + RELEASE_EPSILON_MIN, abs=0)


@pytest.mark.parametrize("name", RELEASES)
def test_a_release_on_data_with_other_rows_is_refused_before_the_spend(name):
    acc = _acc()
    _, data, release = RELEASES[name](acc)
    fewer = tuple(a[:-7] for a in data)
    before = acc.total()
    with pytest.raises(ValueError, match="needs the data of the fit"):
        release(*fewer, epsilon=0.1, random_state=1)
    assert acc.total() == before
    release(*data, epsilon=0.1, random_state=1)  # control: the fit's own rows release


def _xy(n=300, k=1):
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(n, 2))
    Y = X @ rng.normal(size=(2, k)) + 0.1 * rng.normal(size=(n, k))
    return X, (Y[:, 0] if k == 1 else Y)


@pytest.mark.parametrize(
    "params",
    [
        {"inference_share": 1e-310},
        {"inference_share": 1e-200},
        {"ridge": "adaptive", "ridge_share": 1e-310},
        {"boost_rounds": 2, "boost_share": 1e-310},
    ],
)
def test_functional_subnormal_share_is_refused_before_the_spend(params):
    X, y = _xy()
    acc = _acc()
    est = FunctionalLinearRegression(
        epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-3, 3), accountant=acc, random_state=0, **params
    )
    with pytest.raises(ValueError, match="at least 1e-100"):
        est.fit(X, y)
    assert acc.total() == (0.0, 0.0)


def test_functional_multi_output_with_inference_share_is_refused_before_the_spend():
    X, Y = _xy(k=2)
    acc = _acc()
    est = FunctionalLinearRegression(
        epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-3, 3), accountant=acc, inference_share=0.1
    )
    with pytest.raises(ValueError, match="one output only"):
        est.fit(X, Y)
    assert acc.total() == (0.0, 0.0)
    # control: the same fit without the share, and one output with it, spend and fit
    FunctionalLinearRegression(
        epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-3, 3), accountant=acc, random_state=0
    ).fit(X, Y)
    assert acc.total()[0] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("field", "value"),
    [("yty", np.nan), ("yty", np.inf), ("yty", -1.0), ("yty", 301.0), ("gram", np.nan)],
)
def test_fit_statistics_refuses_bad_statistics_before_the_spend(field, value):
    import dataclasses

    X, y = _xy()
    stats = sufficient_statistics(X, y, bounds_X=(-1, 1), bounds_y=(-3, 3))
    if field == "gram":
        gram = np.array(stats.gram, dtype=float, copy=True)
        gram[1, 1] = value
        value = gram
    bad = dataclasses.replace(stats, **{field: value})
    acc = _acc()
    est = FunctionalLinearRegression(epsilon=1.0, accountant=acc, inference_share=0.1)
    with pytest.raises(ValueError, match=f"stats.{field}"):
        est.fit_statistics(bad)
    assert acc.total() == (0.0, 0.0)
    est.fit_statistics(stats)  # control: the true statistics fit
    assert acc.total()[0] == pytest.approx(1.0)
