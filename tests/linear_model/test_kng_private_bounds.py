"""KNGQuantileRegressor with bounds_X="private" / bounds_y="private" (issue 13 item 1)."""

import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from dpreg import BudgetAccountant, KNGQuantileRegressor
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.preprocessing import PrivateBounds


def _engel_like(n=400, seed=0):
    rng = np.random.default_rng(seed)
    income = rng.lognormal(7, 0.5, n)
    food = 0.6 * income + rng.normal(0, 0.1 * income)
    return income[:, None], food


def _fit(X, y, eps=2.0, **kw):
    acc = BudgetAccountant(epsilon=eps)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = KNGQuantileRegressor(
            epsilon=eps, bounds_X="private", bounds_y="private", accountant=acc, **kw
        ).fit(X, y)
    return model, acc


def test_private_bounds_fit_one_ledger_entry_and_sensible_slope():
    X, y = _engel_like(n=2000)
    model, acc = _fit(X, y, eps=4.0, random_state=0)
    assert acc.ledger == [(4.0, 0.0)]
    lo, hi = model.bounds_X_
    assert lo[0] < np.median(X) < hi[0]
    assert 0.3 < model.coef_[0] < 0.9


@pytest.mark.parametrize(
    "column",
    [
        np.full(300, 7.0),  # constant
        np.r_[np.zeros(150), np.ones(150)],  # binary
        np.r_[np.full(150, -1e12), np.full(150, 1e12)],  # outside the candidate range
    ],
    ids=["constant", "binary", "huge"],
)
def test_no_raise_after_the_spend_on_hostile_columns(column):
    rng = np.random.default_rng(1)
    X = np.column_stack([column, rng.normal(size=300)])
    for y in (rng.normal(size=300), np.full(300, 3.0), column):
        model, acc = _fit(X, y, eps=1.0, random_state=0)
        assert acc.ledger == [(1.0, 0.0)]
        assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.intercept_)
        assert np.all(np.isfinite(model.predict(X)))


def test_predict_extrapolates_also_past_a_released_box():
    """y is not clipped in quantile regression: predict stays linear (documented)."""
    X, y = _engel_like(n=1000)
    model, _ = _fit(X, y, eps=4.0, random_state=0)
    lo, hi = model.bounds_X_
    far = np.array([[hi[0] * 100.0]])
    assert model.predict(far)[0] == pytest.approx(far[0, 0] * model.coef_[0] + model.intercept_)
    public = KNGQuantileRegressor(
        epsilon=4.0, bounds_X=(lo, hi), bounds_y=model.bounds_y_, random_state=0
    ).fit(X, y)
    assert public.predict(far)[0] == pytest.approx(far[0, 0] * public.coef_[0] + public.intercept_)


@pytest.mark.parametrize(
    "params",
    [
        {"fit_intercept": False},
        {"coef_bounds": 10.0},
        {"bounds_share": 1.5},
        {"bounds_share": "autox"},
        {"sampler": "exact", "epsilon": 1e308},
    ],
)
def test_bad_parameters_raise_before_the_spend(params):
    X, y = _engel_like(n=200)
    acc = BudgetAccountant(epsilon=np.inf) if "epsilon" in params else BudgetAccountant(5.0)
    model = KNGQuantileRegressor(bounds_X="private", bounds_y="private", accountant=acc)
    with pytest.raises(ValueError):
        model.set_params(**params).fit(X, y)
    assert acc.ledger == []


def test_too_many_parameters_for_the_exact_sampler_raise_before_the_spend():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 5)), rng.normal(size=200)
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError, match="exact KNG sampler"):
        KNGQuantileRegressor(bounds_X="private", bounds_y=(-5, 5), accountant=acc).fit(X, y)
    assert acc.ledger == []


def test_works_in_a_pipeline_and_with_public_y_bounds():
    X, y = _engel_like(n=800)
    acc = BudgetAccountant(epsilon=3.0)
    pipe = make_pipeline(
        PrivateBounds(epsilon=1.0, accountant=acc, random_state=0),
        KNGQuantileRegressor(
            epsilon=2.0, bounds_X="private", bounds_y=(0, 5000), accountant=acc, random_state=0
        ),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(X, y)
    assert acc.ledger == [(1.0, 0.0), (2.0, 0.0)]
    assert np.all(np.isfinite(pipe.predict(X)))


def test_private_bounds_with_weights_and_intervals_compose():
    """Private bounds, sample weights and the conf_int record work together (merge guard)."""
    import numpy as np

    from dpreg import KNGQuantileRegressor

    rng = np.random.default_rng(11)
    X = rng.uniform(0, 10, (3000, 1))
    y = 2.0 * X[:, 0] + rng.standard_normal(3000)
    w = rng.uniform(0.2, 1.0, 3000)
    est = KNGQuantileRegressor(
        epsilon=4.0, bounds_X="private", bounds_y="private", random_state=0
    ).fit(X, y, sample_weight=w)
    assert est.sample_weighted_ and est.kng_release_.y_bounds == tuple(est.bounds_y_)
    assert abs(est.coef_[0] - 2.0) < 1.0
    est2 = KNGQuantileRegressor(
        epsilon=4.0, bounds_X="private", bounds_y="private", random_state=0
    ).fit(X, y)
    est2.release_curvature(X, y, epsilon=1.0)
    assert est2.conf_int(n_boot=200).shape == (2, 2)
