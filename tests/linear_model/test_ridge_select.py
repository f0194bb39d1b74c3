"""``ridge="select"``: the floor factor chosen by a bootstrap on the released statistics."""

import math

import numpy as np
import pytest

from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg.linear_model import _ridge, functional
from dpreg.linear_model.functional import sufficient_statistics

BOX_X, BOX_Y = (-1, 1), (-6, 6)


def _data(n, seed, collinear=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    if collinear:  # a small eigenvalue, below the noise at small n*eps
        X[:, 2] = np.clip(X[:, 1] + 0.05 * rng.normal(size=n), -1, 1)
    y = 0.5 + X @ np.array([1.0, 2.0, -1.0]) + rng.normal(size=n)
    return X, y


def _model(**kw):
    return FunctionalLinearRegression(bounds_X=BOX_X, bounds_y=BOX_Y, **kw)


def test_select_spends_epsilon_once_and_reuses_the_release():
    """Same seed: the released statistics are those of ridge="fixed" (selection comes after),
    the ledger is charged epsilon once, and the floor is a grid factor times the public unit."""
    X, y = _data(4000, 0)
    acc = BudgetAccountant(epsilon=5.0)
    sel = _model(epsilon=1.0, ridge="select", random_state=3, accountant=acc).fit(X, y)
    fixed = _model(epsilon=1.0, random_state=3).fit(X, y)
    assert acc.spent[0] == pytest.approx(1.0)
    np.testing.assert_array_equal(sel.noisy_statistics_.gram, fixed.noisy_statistics_.gram)
    np.testing.assert_array_equal(sel.noisy_statistics_.xty, fixed.noisy_statistics_.xty)
    ns = sel.noisy_statistics_
    assert sel.ridge_factor_ in _ridge.SELECT_FACTORS
    unit = math.sqrt(4) * ns.plan.gram_std
    assert ns.lam == pytest.approx(sel.ridge_factor_ * unit)
    assert fixed.ridge_factor_ == 1.5 and sel.lambda_min_ is None


def test_select_sees_only_the_released_statistics(monkeypatch):
    """Two different data sets, the same (forced) main release: identical coefficients.

    The first call of ``privatize_statistic`` in a fit is the release of T; it is replaced by
    one fixed noisy vector. The bootstrap's own noise draws (later calls) are left alone and
    use the same seed, so any difference would have to come from reading the data."""
    real = functional.privatize_statistic
    X1, y1 = _data(3000, 1)
    X2, y2 = _data(3000, 2, collinear=True)
    s1 = sufficient_statistics(X1, y1, BOX_X, BOX_Y)
    s2 = sufficient_statistics(X2, y2, BOX_X, BOX_Y)
    plan = functional.make_plan(s1.layout, 0.5)
    forced = real(s1.statistic(), s1.layout, plan, 0.5, 0.0, np.random.default_rng(9))

    def patched(T, *args, **kw):
        calls.append(1)
        return forced.copy() if len(calls) == 1 else real(T, *args, **kw)

    monkeypatch.setattr(functional, "privatize_statistic", patched)
    out = []
    for s in (s1, s2):
        calls = []
        out.append(_model(epsilon=0.5, ridge="select", random_state=4).fit_statistics(s))
        assert len(calls) == 1 + _ridge.SELECT_DRAWS
    np.testing.assert_array_equal(out[0].coef_, out[1].coef_)
    assert out[0].ridge_factor_ == out[1].ridge_factor_
    # control: without the forced release the two data sets give different fits
    monkeypatch.setattr(functional, "privatize_statistic", real)
    a = _model(epsilon=0.5, ridge="select", random_state=4).fit_statistics(s1)
    b = _model(epsilon=0.5, ridge="select", random_state=4).fit_statistics(s2)
    assert not np.array_equal(a.coef_, b.coef_)


def _factors_and_errors(ridge, n, eps, collinear, seeds=8):
    """Chosen factors and the median in-sample prediction error against OLS."""
    X, y = _data(n, 100, collinear)
    Z = np.column_stack([np.ones(n), X])
    ols = np.linalg.lstsq(Z, y, rcond=None)[0]
    errs, factors = [], []
    for s in range(seeds):
        m = _model(epsilon=eps, ridge=ridge, random_state=s).fit(X, y)
        d = Z @ (np.r_[m.intercept_, m.coef_] - ols)
        errs.append(float(np.mean(d * d)))
        factors.append(m.ridge_factor_)
    return factors, float(np.median(errs))


def test_grid_never_exceeds_the_fixed_floor():
    """The grid tops out at the default block floor: select can only lower it (section 5b)."""
    assert max(_ridge.SELECT_FACTORS) == functional.RIDGE_FACTOR["blocks"]
    assert _ridge.SELECT_PILOT in _ridge.SELECT_FACTORS


def test_choice_follows_the_released_statistics():
    """Well conditioned at n*eps = 5000: no floor of the grid binds in the bootstrap world,
    every factor has the same risk and the first (lowest) is kept. Near-collinear pair at
    n*eps = 1000 (a direction drowned in noise): the full floor is kept in most fits. A
    constant choice fails one of the two; the prediction error of the drowned case stays
    within 10 % of the fixed floor's (paired seeds, same release)."""
    high, _ = _factors_and_errors("select", 5000, 1.0, collinear=False)
    low, err_sel = _factors_and_errors("select", 2000, 0.5, collinear=True)
    _, err_fix = _factors_and_errors("fixed", 2000, 0.5, collinear=True)
    assert np.median(high) == min(_ridge.SELECT_FACTORS)
    assert np.median(low) == max(_ridge.SELECT_FACTORS)
    assert err_sel <= 1.1 * err_fix


def test_select_with_delta_multioutput_and_inference():
    X, y = _data(3000, 5)
    g = _model(epsilon=1.0, delta=1e-6, mechanism="gaussian", ridge="select", random_state=0)
    g.fit(X, y)
    assert g.mechanism_ == "gaussian" and g.ridge_factor_ in _ridge.SELECT_FACTORS
    Y = np.column_stack([y, -y])
    multi = FunctionalLinearRegression(
        epsilon=1.0, bounds_X=BOX_X, bounds_y=([-6, -6], [6, 6]), ridge="select", random_state=0
    ).fit(X, Y)
    assert multi.coef_.shape == (2, 3) and multi.ridge_factor_ in _ridge.SELECT_FACTORS
    inf = _model(epsilon=2.0, ridge="select", inference_share=0.1, random_state=0).fit(X, y)
    assert inf.conf_int(n_boot=50).shape == (4, 2)


def test_select_is_skipped_without_a_floor():
    """postprocess="none" uses no floor, so nothing is selected (and no extra noise is drawn)."""
    X, y = _data(2000, 6)
    a = _model(epsilon=1.0, ridge="select", postprocess="none", random_state=0).fit(X, y)
    b = _model(epsilon=1.0, postprocess="none", random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_bad_ridge_is_refused_before_spending():
    acc = BudgetAccountant(epsilon=1.0)
    X, y = _data(100, 7)
    with pytest.raises(ValueError, match="ridge must be one of"):
        _model(epsilon=1.0, ridge="chosen", accountant=acc).fit(X, y)
    assert acc.spent[0] == 0.0
