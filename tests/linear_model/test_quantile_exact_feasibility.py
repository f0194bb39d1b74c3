"""The exact KNG sampler's feasible range is decided from public inputs before the spend
(issue #12): beyond it a default fit is refused with a ValueError that names the
alternatives, and the ledger stays empty."""

import warnings

import numpy as np
import pytest

from dpreg import BudgetAccountant, KNGQuantileRegressor
from dpreg.linear_model.quantile import MAX_EXACT_ROWS


def _data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d - 1))
    return X, X.sum(axis=1) + rng.standard_normal(n)


@pytest.mark.parametrize("d", sorted(MAX_EXACT_ROWS))
def test_infeasible_exact_fit_is_refused_before_the_spend(d):
    X, y = _data(MAX_EXACT_ROWS[d] + 1, d)
    acc = BudgetAccountant(epsilon=10.0)
    m = KNGQuantileRegressor(bounds_X=(-1, 1), bounds_y=(-6, 6), accountant=acc)
    with pytest.raises(ValueError, match="not feasible") as err:
        m.fit(X, y)
    assert "sampler='gibbs'" in str(err.value)
    assert "ObjectivePerturbationQuantileRegressor" in str(err.value)
    assert acc.ledger == []
    assert not hasattr(m, "coef_")


def test_infeasible_exact_fit_with_private_bounds_is_refused_before_the_spend():
    X, y = _data(MAX_EXACT_ROWS[5] + 1, 5)
    acc = BudgetAccountant(epsilon=10.0)
    m = KNGQuantileRegressor(bounds_X=(-1, 1), bounds_y="private", accountant=acc)
    with pytest.raises(ValueError, match="not feasible"):
        m.fit(X, y)
    assert acc.ledger == []


def test_refusal_depends_on_public_inputs_only():
    """The same (n, d) is refused whatever the data (here: responses of 1e308, a constant
    column, and ordinary data), and one row less is not refused by this check."""
    n, d = MAX_EXACT_ROWS[5] + 1, 5
    X, y = _data(n, d)
    hostile = (X.copy(), np.full(n, 1e308))
    hostile[0][:, 0] = 0.5
    for Xi, yi in ((X, y), hostile):
        acc = BudgetAccountant(epsilon=10.0)
        with pytest.raises(ValueError, match="not feasible"):
            KNGQuantileRegressor(bounds_X=(-1, 1), bounds_y=(-6, 6), accountant=acc).fit(Xi, yi)
        assert acc.ledger == []
    # one row fewer passes the public checks (only the checks run here: a fit at the limit
    # takes about a minute)
    small = KNGQuantileRegressor(bounds_X=(-1, 1), bounds_y=(-6, 6))
    small._mechanism_checks(0.5, 1.0, "linf", n - 1, d - 1, None)


def test_gibbs_opt_in_is_not_refused():
    X, y = _data(MAX_EXACT_ROWS[5] + 1, 5)
    acc = BudgetAccountant(epsilon=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        KNGQuantileRegressor(
            bounds_X=(-1, 1), bounds_y=(-6, 6), accountant=acc, sampler="gibbs", n_sweeps=1,
            n_chains=1, random_state=0,
        ).fit(X, y)  # fmt: skip
    assert acc.ledger == [(1.0, 0.0)]
