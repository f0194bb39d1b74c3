"""A second interval release for the same fit warns before it spends, and spends honestly.

``release_hessian``, ``release_curvature`` and ``release_scale`` replace an earlier release of
the same fit (the intervals use only the newest; the two are not combined). The warning comes
before the accountant is charged, so with warnings as errors nothing is spent; without, the
ledger keeps both charges. A refit starts afresh: its first release does not warn.
"""

import warnings

import numpy as np
import pytest

from dpreg import (
    BudgetAccountant,
    KNGQuantileRegressor,
    ObjectivePerturbationLogistic,
    PrivateProjectionMedian,
)

# filterwarnings matches from the start of the message, pytest.warns anywhere
MESSAGE = ".*already has a .* release"


def _logistic(accountant):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(400, 2))
    y = (rng.uniform(size=400) < 1 / (1 + np.exp(-X @ [1.5, -1.0]))).astype(int)
    est = ObjectivePerturbationLogistic(
        epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], accountant=accountant, random_state=0
    )
    return est, (X, y), est.release_hessian


def _kng(accountant):
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(300, 1))
    y = 0.5 + X[:, 0] + rng.normal(size=300)
    est = KNGQuantileRegressor(epsilon=2.0, bounds_X=(-1, 1), accountant=accountant, random_state=0)
    return est, (X, y), est.release_curvature


def _median(accountant):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2000, 2))
    est = PrivateProjectionMedian(
        epsilon=4.0, norm="linf", scale=[1.0, 1.0], accountant=accountant, random_state=0
    )
    return est, (X,), est.release_scale


CASES = [_logistic, _kng, _median]


def _quiet_fit(est, data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(*data)


@pytest.mark.parametrize("make", CASES, ids=["logistic", "kng", "median"])
def test_second_release_warns_and_both_are_charged(make):
    accountant = BudgetAccountant(epsilon=100.0, delta=0.1)
    est, data, release = make(accountant)
    _quiet_fit(est, data)
    fit_eps = accountant.total()[0]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=MESSAGE)  # the first release is silent
        release(*data, epsilon=0.1, random_state=1)
    with pytest.warns(UserWarning, match=MESSAGE):
        release(*data, epsilon=0.2, random_state=2)
    assert accountant.total()[0] == pytest.approx(fit_eps + 0.3)


def _fitted_and_released_once(make):
    """A fit with one release already made: ``(accountant, est, data, release)``."""
    accountant = BudgetAccountant(epsilon=100.0, delta=0.1)
    est, data, release = make(accountant)
    _quiet_fit(est, data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release(*data, epsilon=0.1, random_state=1)
    return accountant, est, data, release


@pytest.mark.parametrize("make", CASES, ids=["logistic", "kng", "median"])
def test_second_release_as_error_spends_nothing(make):
    accountant, _, data, release = _fitted_and_released_once(make)
    before = accountant.total()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=MESSAGE)
        with pytest.raises(UserWarning, match=MESSAGE):
            release(*data, epsilon=0.2, random_state=2)
    assert accountant.total() == before


@pytest.mark.parametrize("make", CASES, ids=["logistic", "kng", "median"])
def test_a_refit_starts_afresh(make):
    _, est, data, release = _fitted_and_released_once(make)
    _quiet_fit(est, data)  # a new fit: the old release no longer belongs to it
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=MESSAGE)
        release(*data, epsilon=0.1, random_state=1)
