"""BudgetAccountant: basic and advanced composition, check-before-spend, sharing through clone."""

import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone

from dpreg import BudgetAccountant
from dpreg.accounting import check_accountant
from dpreg.exceptions import BudgetExceededError


def advanced_eps(eps_list, slack):
    """Kairouz-Oh-Viswanath heterogeneous bound, written out independently."""
    sq = sum(e * e for e in eps_list)
    drift = sum(e * (math.exp(e) - 1) / (math.exp(e) + 1) for e in eps_list)
    return math.sqrt(2 * math.log(1 / slack) * sq) + drift


def test_basic_composition():
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    acc.spend(0.5, 1e-6)
    acc.spend(0.25)
    acc.spend(1.0, 2e-6)
    assert acc.spent == pytest.approx((1.75, 3e-6))
    assert acc.remaining() == pytest.approx((0.25, 7e-6))
    assert len(acc) == 3 and acc.ledger == [(0.5, 1e-6), (0.25, 0.0), (1.0, 2e-6)]
    with pytest.raises(BudgetExceededError, match="exceed"):
        acc.spend(0.3)
    assert len(acc) == 3  # a refused spend is not recorded
    acc.spend(0.25)  # exactly the remainder is allowed
    assert acc.remaining()[0] == pytest.approx(0.0)


def test_delta_budget_is_enforced():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-6)
    with pytest.raises(BudgetExceededError):
        acc.check(0.1, 2e-6)
    assert acc.check(0.1, 1e-6) is True


def test_advanced_composition_numbers():
    slack = 1e-6
    # 100 spends of 0.01: advanced (0.5307...) beats basic (1.0)
    spends = [(0.01, 0.0)] * 100
    eps, delta = BudgetAccountant.compose(spends, slack=slack)
    assert eps == pytest.approx(advanced_eps([0.01] * 100, slack), rel=1e-12)
    assert eps == pytest.approx(0.5307, abs=1e-4)
    assert delta == pytest.approx(slack)
    # 10 spends of 0.1: advanced (1.71) is worse, so basic (1.0) is reported with delta 0
    eps, delta = BudgetAccountant.compose([(0.1, 0.0)] * 10, slack=slack)
    assert eps == pytest.approx(1.0) and delta == 0.0
    assert advanced_eps([0.1] * 10, slack) == pytest.approx(1.7122, abs=1e-4)
    # heterogeneous spends with deltas: the deltas add up, plus the slack
    spends = [(0.01, 1e-8)] * 50 + [(0.02, 0.0)] * 50
    eps, delta = BudgetAccountant.compose(spends, slack=slack)
    assert eps == pytest.approx(advanced_eps([0.01] * 50 + [0.02] * 50, slack))
    assert delta == pytest.approx(50e-8 + slack)
    assert BudgetAccountant.compose([]) == (0.0, 0.0)


def test_accountant_with_slack_allows_more_spends():
    basic = BudgetAccountant(epsilon=0.6, delta=1e-5)
    adv = BudgetAccountant(epsilon=0.6, delta=1e-5, slack=1e-6)
    n_basic = n_adv = 0
    while n_basic < 1000:
        try:
            basic.spend(0.01)
            n_basic += 1
        except BudgetExceededError:
            break
    while n_adv < 1000:
        try:
            adv.spend(0.01)
            n_adv += 1
        except BudgetExceededError:
            break
    assert n_basic == 60
    assert n_adv > 100
    assert adv.spent[0] <= 0.6 + 1e-12 and adv.spent[1] == pytest.approx(1e-6)


class _TinyPrivateEstimator(BaseEstimator):
    def __init__(self, epsilon=1.0, accountant=None):
        self.epsilon = epsilon
        self.accountant = accountant

    def fit(self, X, y=None):
        acc = check_accountant(self.accountant)
        if acc is not None:
            acc.check(self.epsilon, 0.0)  # before touching the data
        self.mean_ = float(np.mean(X))
        if acc is not None:
            acc.spend(self.epsilon, 0.0)
        return self


def test_ledger_is_shared_through_clone():
    acc = BudgetAccountant(epsilon=1.0)
    est = _TinyPrivateEstimator(epsilon=0.4, accountant=acc)
    c1, c2 = clone(est), clone(clone(est))
    assert c1.accountant is acc and c2.accountant is acc
    c1.fit(np.ones(3))
    c2.fit(np.ones(3))
    assert acc.spent[0] == pytest.approx(0.8)
    with pytest.raises(BudgetExceededError):
        clone(est).fit(np.ones(3))
    assert acc.spent[0] == pytest.approx(0.8)


def test_validation_of_accountant_and_spends():
    with pytest.raises(ValueError, match="accountant"):
        check_accountant("budget")
    assert check_accountant(None) is BudgetAccountant.default()
    with pytest.raises(ValueError, match="epsilon"):
        BudgetAccountant(epsilon=-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        BudgetAccountant(epsilon=float("nan"))
    with pytest.raises(ValueError, match="delta"):
        BudgetAccountant(epsilon=1.0, delta=1.5)
    with pytest.raises(ValueError, match="slack"):
        BudgetAccountant(epsilon=1.0, delta=1e-6, slack=1e-5)
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match="non-negative"):
        acc.spend(-0.1)
    assert "BudgetAccountant" in repr(acc)


def test_nan_spend_is_rejected():
    """A NaN spend must not be recorded: NaN comparisons are False, which would disable checks."""
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError):
        acc.spend(float("nan"))
    acc.spend(0.5)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.6)
