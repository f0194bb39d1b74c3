"""FunctionalLinearRegression with sample_weight in [0, 1]: sensitivity, validation, workflow."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg.linear_model._functional_sensitivity import (
    Layout,
    l1_sensitivity,
    l2_sensitivity,
    linf_sensitivity,
)


def _data(n=40000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    group = rng.random(n) < 0.5
    y = np.where(group, 1 + X @ [2.0, -1.0], -1 + X @ [-1.0, 1.0]) + rng.normal(0, 0.1, n)
    return X, y, np.where(group, 1.0, 0.1)


def _model(**kw):
    return FunctionalLinearRegression(bounds_X=(-1, 1), bounds_y=(-5, 5), **kw)


def test_weighted_fit_matches_weighted_least_squares():
    X, y, w = _data()
    ref = LinearRegression().fit(X, y, sample_weight=w)
    for fit_intercept in (True, False):
        ref = LinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
        model = _model(epsilon=8.0, fit_intercept=fit_intercept, random_state=0)
        model.fit(X, y, sample_weight=w)
        np.testing.assert_allclose(model.coef_, ref.coef_, atol=0.05)
        assert model.intercept_ == pytest.approx(ref.intercept_, abs=0.05)
    # the unweighted fit is far from the weighted one: the weights matter
    assert np.max(np.abs(LinearRegression().fit(X, y).coef_ - ref.coef_)) > 0.2


def test_weighted_fit_is_one_ledger_entry():
    X, y, w = _data(n=2000)
    acc = BudgetAccountant(epsilon=3.0)
    _model(epsilon=1.5, accountant=acc, random_state=0).fit(X, y, sample_weight=w)
    assert acc.ledger == [(1.5, 0.0)]


@pytest.mark.parametrize(
    "weights",
    [
        lambda n: np.full(n, 1.5),
        lambda n: np.r_[np.ones(n - 1), -0.01],
        lambda n: np.r_[np.ones(n - 1), np.nan],
        lambda n: np.ones(n + 1),
        lambda n: np.ones((n, 1)),
        lambda n: ["a"] * n,
    ],
)
def test_bad_weights_raise_before_spending(weights):
    X, y, _ = _data(n=100)
    acc = BudgetAccountant(epsilon=3.0)
    with pytest.raises(ValueError):
        _model(epsilon=1.0, accountant=acc).fit(X, y, sample_weight=weights(100))
    assert acc.ledger == []


def test_weights_with_inference_share_raise_before_spending():
    X, y, w = _data(n=100)
    acc = BudgetAccountant(epsilon=3.0)
    with pytest.raises(ValueError, match="inference_share"):
        _model(epsilon=1.0, accountant=acc, inference_share=0.1).fit(X, y, sample_weight=w)
    assert acc.ledger == []


def test_cross_validate_and_pipeline_pass_weights():
    X, y, w = _data(n=20000)
    cv = cross_validate(
        _model(epsilon=4.0, random_state=0), X, y, params={"sample_weight": w}, cv=3
    )
    assert np.all(np.isfinite(cv["test_score"]))
    pipe = make_pipeline(FunctionTransformer(), _model(epsilon=4.0, random_state=0))
    pipe.fit(X, y, functionallinearregression__sample_weight=w)
    ref = LinearRegression().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(pipe[-1].coef_, ref.coef_, atol=0.1)


def _worst_weighted_difference(p, fit_intercept, k, w_max, rng, trials=400):
    """Largest ||w t(a) - w' t(a')|| (l_inf, l1, l2) found over rows in the unit box.

    Adversarial: the rows are box vertices, 0 and random points; the weights 0, w_max and
    random values in [0, w_max] (the norm is convex in the weights, so the vertices of the
    weight square are the candidates for the worst case).
    """
    layout = Layout(p, fit_intercept, k)
    worst = np.zeros(3)
    for _ in range(trials):
        rows = []
        for _ in range(2):
            kind = rng.integers(3)
            if kind == 0:
                x, yy = rng.choice([-1.0, 1.0], size=p), rng.choice([-1.0, 1.0], size=k)
            elif kind == 1:
                x, yy = np.zeros(p), np.zeros(k)
            else:
                x, yy = rng.uniform(-1, 1, p), rng.uniform(-1, 1, k)
            rows.append(layout.contributions(x[None, :], yy[None, :])[0])
        for w1, w2 in ((w_max, 0.0), (0.0, w_max), (w_max, w_max), tuple(rng.uniform(0, w_max, 2))):
            d = w1 * rows[0] - w2 * rows[1]
            worst = np.maximum(worst, [np.max(np.abs(d)), np.sum(np.abs(d)), np.linalg.norm(d)])
    return worst


@pytest.mark.parametrize(
    "p, fit_intercept, k", [(1, True, 1), (2, True, 1), (3, False, 1), (2, True, 2)]
)
def test_weighted_sensitivity_adversarial(p, fit_intercept, k):
    """Weights in [0, 1] never exceed the unweighted sensitivities of T."""
    rng = np.random.default_rng(p + 10 * k)
    bounds = np.array(
        [
            linf_sensitivity(p, fit_intercept, k),
            l1_sensitivity(p, fit_intercept, k),
            l2_sensitivity(p, fit_intercept, k),
        ]
    )
    worst = _worst_weighted_difference(p, fit_intercept, k, 1.0, rng)
    assert np.all(worst <= bounds * (1 + 1e-12))
    # control: weights up to 2 break the l_inf bound, and the same search finds it
    control = _worst_weighted_difference(p, fit_intercept, k, 2.0, rng)
    assert control[0] > bounds[0]


def test_intervals_refuse_a_weighted_fit():
    """conf_int/bse/summary assume unit weights: a weighted fit gets a clear error, an
    unweighted fit of the same data does not."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(500, 2))
    y = X @ np.array([1.0, -1.0]) + rng.normal(size=500)
    kw = dict(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-5, 5), random_state=0)
    weighted = FunctionalLinearRegression(**kw).fit(X, y, sample_weight=np.full(500, 0.5))
    for method in (weighted.conf_int, weighted.bse, weighted.summary):
        with pytest.raises(NotImplementedError, match="unweighted"):
            method()
    assert FunctionalLinearRegression(**kw).fit(X, y).conf_int().shape == (3, 2)
