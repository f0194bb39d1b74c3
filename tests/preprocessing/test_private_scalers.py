"""Private transformers: sklearn API, one ledger for a private pipeline, public output ranges,
validation before spending, no data-dependent exception after it."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.preprocessing import PrivateBounds, PrivateMinMaxScaler, PrivateStandardScaler

TRANSFORMERS = (PrivateBounds, PrivateMinMaxScaler, PrivateStandardScaler)


@parametrize_with_checks([cls(epsilon=1e6, random_state=0) for cls in TRANSFORMERS])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal([50.0, -3.0, 1e4], [10.0, 0.5, 2e3], size=(n, 3))
    y = 7.0 + (X - [50.0, -3.0, 1e4]) @ np.array([0.2, 4.0, 1e-3]) + rng.normal(size=n)
    return X, y


def test_private_pipeline_is_one_ledger_and_accurate():
    X, y = _data()
    acc = BudgetAccountant(epsilon=2.0)
    pipe = make_pipeline(
        PrivateStandardScaler(epsilon=0.5, clip=3.0, accountant=acc, random_state=0),
        FunctionalLinearRegression(
            epsilon=1.0, bounds_X=(-3, 3), bounds_y=(-10, 25), accountant=acc, random_state=0
        ),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(X, y)
    assert acc.ledger == [(0.5, 0.0), (1.0, 0.0)]
    assert pipe.score(X, y) > 0.5


@pytest.mark.parametrize("cls", TRANSFORMERS)
def test_output_lies_in_the_public_range(cls):
    X, _ = _data(3000)
    est = cls(epsilon=1.0, random_state=0).fit(X)
    Xt = est.transform(X * 100)  # far outside the training range
    lo, hi = getattr(est, "output_bounds_", (est.lower_, est.upper_))
    assert np.all(Xt >= np.asarray(lo) - 1e-12) and np.all(Xt <= np.asarray(hi) + 1e-12)
    if cls is PrivateStandardScaler:
        assert est.output_bounds_ == (-3.0, 3.0)
    if cls is PrivateMinMaxScaler:
        assert est.output_bounds_ == (0.0, 1.0)


def test_standard_scaler_statistics_and_budget_split():
    X, _ = _data(50000)
    sc = PrivateStandardScaler(epsilon=2.0, bounds_share=0.25, random_state=1).fit(X)
    assert sc.epsilon_bounds_ == 0.5
    assert np.allclose(sc.mean_, X.mean(axis=0), rtol=0, atol=0.05 * X.std(axis=0))
    assert np.allclose(sc.scale_, X.std(axis=0), rtol=0.1)
    pub = PrivateStandardScaler(epsilon=1.0, bounds=(X.min(0), X.max(0)), random_state=0)
    pub.fit(X)
    assert pub.epsilon_bounds_ == 0.0
    assert np.allclose(pub.inverse_transform(pub.transform(X[:5])), X[:5], rtol=1e-6)


def test_min_max_inverse_and_constant_feature():
    X = np.column_stack([np.linspace(0, 10, 2000), np.full(2000, 4.0)])
    mm = PrivateMinMaxScaler(epsilon=1.0, feature_range=(-1, 1), random_state=0).fit(X)
    Z = mm.transform(X)
    assert np.all(np.abs(Z) <= 1)
    inside = (X[:, 0] >= mm.lower_[0]) & (X[:, 0] <= mm.upper_[0])
    assert np.allclose(mm.inverse_transform(Z)[inside, 0], X[inside, 0])


def test_set_output_pandas():
    X, _ = _data(3000)
    df = pd.DataFrame(X, columns=["age", "dose", "income"])
    for cls in TRANSFORMERS:
        out = cls(epsilon=1.0, random_state=0).set_output(transform="pandas").fit_transform(df)
        assert isinstance(out, pd.DataFrame) and list(out.columns) == ["age", "dose", "income"]


@pytest.mark.parametrize("cls", TRANSFORMERS)
def test_validation_before_spending(cls):
    acc = BudgetAccountant(epsilon=10.0)
    X, _ = _data(100)
    bad_X = X.copy()
    bad_X[3, 1] = np.nan
    with pytest.raises(ValueError):
        cls(accountant=acc).fit(bad_X)
    for params in (
        {"epsilon": 0.0},
        {"bounds": "privat"},
        {"bounds": (1.0, 0.0)},
        {"levels": (0.5, 0.5)},
        {"widen": -1},
        {"candidate_range": (0, 0)},
        {"accountant": "ledger"},
    ):
        kwargs = {"accountant": acc, **params}
        with pytest.raises(ValueError):
            cls(**kwargs).fit(X)
    assert acc.spent == (0.0, 0.0)
    with pytest.raises(ValueError):
        PrivateStandardScaler(clip=0, accountant=acc).fit(X)
    with pytest.raises(ValueError):
        PrivateStandardScaler(bounds_share=1.0, accountant=acc).fit(X)
    with pytest.raises(ValueError):
        PrivateMinMaxScaler(feature_range=(1, 1), accountant=acc).fit(X)
    assert acc.spent == (0.0, 0.0)


@pytest.mark.parametrize("cls", TRANSFORMERS)
def test_no_exception_after_spending_on_odd_data(cls):
    acc = BudgetAccountant(epsilon=100.0)
    for X in (np.zeros((1, 2)), np.full((30, 1), 1e15), np.array([[0.0], [1e-300], [-1e-300]])):
        est = cls(epsilon=1.0, accountant=acc, random_state=0).fit(X)
        assert np.all(np.isfinite(est.transform(X)))


def test_clones_share_the_ledger():
    acc = BudgetAccountant(epsilon=1.0)
    sc = PrivateStandardScaler(epsilon=0.4, accountant=acc, random_state=0)
    X, _ = _data(500)
    clone(sc).fit(X)
    clone(sc).fit(X)
    assert acc.spent[0] == pytest.approx(0.8)
    with pytest.raises(ValueError, match="budget"):
        clone(sc).fit(X)


@pytest.mark.parametrize("cls", [PrivateBounds, PrivateMinMaxScaler])
def test_public_bounds_cost_nothing_when_nothing_else_is_released(cls):
    """The docs promise that public bounds cost nothing; these two transformers release
    nothing else, yet were charged epsilon (audit s21, finding 7). The standard scaler,
    which releases means and variances, is still charged."""
    X = np.random.default_rng(0).normal(size=(100, 2))
    acc = BudgetAccountant()
    est = cls(epsilon=1.0, bounds=(-3, 3), accountant=acc, random_state=0).fit(X)
    assert acc.spent == (0.0, 0.0) and len(acc.ledger) == 0 and est.epsilon_bounds_ == 0.0
    acc = BudgetAccountant()
    PrivateStandardScaler(epsilon=1.0, bounds=(-3, 3), accountant=acc, random_state=0).fit(X)
    assert acc.spent == (1.0, 0.0)


@pytest.mark.parametrize("cls", [PrivateBounds, PrivateMinMaxScaler, PrivateStandardScaler])
def test_refused_refit_leaves_an_unfitted_transformer(cls):
    """A refit that the accountant refuses used to keep the old fit's statistics (3 columns)
    next to the new n_features_in_ (2): transform broadcast-failed (audit s21, finding 8). Now
    the old fit is forgotten first, and transform says the transformer is not fitted."""
    from sklearn.exceptions import NotFittedError  # noqa: PLC0415

    from dpreg.exceptions import BudgetExceededError  # noqa: PLC0415

    acc = BudgetAccountant(epsilon=1.0)
    est = cls(epsilon=1.0, accountant=acc, random_state=0)
    X = np.random.default_rng(0).normal(size=(200, 3))
    est.fit(X)
    with pytest.raises(BudgetExceededError):
        est.fit(X[:, :2])
    with pytest.raises(NotFittedError):
        est.transform(X[:, :2])
    assert not hasattr(est, "lower_") and acc.spent == (1.0, 0.0)
