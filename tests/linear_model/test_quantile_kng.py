"""Tests of KNGQuantileRegressor: sklearn compatibility, exactness, utility, privacy plumbing."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import QuantileRegressor
from sklearn.metrics import make_scorer, mean_pinball_loss
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpreg import BudgetAccountant, KNGQuantileRegressor
from dpreg.exceptions import BudgetExceededError, PrivacyLeakWarning


def _data(n=500, seed=0, p=2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(n, p))
    coef = np.array([2.0, -1.0, 0.5])[:p]
    y = 1.0 + X @ coef + rng.standard_normal(n)
    return X, y, coef


def _model(**kw):
    params = dict(bounds_X=(0, 10), bounds_y=(-30, 40), random_state=0)
    params.update(kw)
    return KNGQuantileRegressor(**params)


@parametrize_with_checks(
    [
        # sklearn's checks use up to 10 features, beyond the exact sampler's range: the Gibbs
        # opt-in (its approximate-guarantee warning is expected here)
        KNGQuantileRegressor(
            epsilon=1e4,
            bounds_X=(-10, 10),
            bounds_y=(-1000, 1000),
            sampler="gibbs",
            n_sweeps=5,
            n_chains=2,
            random_state=0,
        )
    ],
    # sample weights must lie in [0, 1] (the sensitivity is derived for that range); these
    # checks use integer weights up to 4 (test_weights_kng.py tests weights in [0, 1])
    expected_failed_checks=lambda est: dict.fromkeys(
        [
            "check_sample_weights_list",
            "check_sample_weights_not_overwritten",
            "check_sample_weight_equivalence_on_dense_data",
        ],
        "sample_weight must lie in [0, 1]",
    ),
)
@pytest.mark.filterwarnings("ignore:sampler='gibbs'")
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ----------------------------------------------------------------------------- exactness
def test_intercept_only_is_exact_private_quantile():
    """A constant feature (bounds lower == upper) leaves the intercept alone: Smith's private
    quantile, drawn exactly. KS against the exact piecewise-constant CDF."""
    y = np.array([3.0, 7.5, 1.0, 4.2, 9.9, 6.1, 2.2])
    X = np.zeros((7, 1))
    tau, eps, lo, hi = 0.7, 2.0, -5.0, 15.0
    knots = np.r_[lo, np.sort(y), hi]
    mass = np.exp(-eps / 2 * np.abs(np.arange(8) - 7 * tau)) * np.diff(knots)
    cum = np.r_[0.0, np.cumsum(mass)] / mass.sum()

    def cdf(t):
        j = np.clip(np.searchsorted(knots, t, side="right") - 1, 0, 7)
        return cum[j] + (cum[j + 1] - cum[j]) * (t - knots[j]) / np.diff(knots)[j]

    draws = []
    for seed in range(1500):
        m = KNGQuantileRegressor(
            quantile=tau, epsilon=eps, bounds_X=(0, 0), bounds_y=(lo, hi), random_state=seed
        ).fit(X, y)
        draws.append(m.intercept_)
        assert m.coef_[0] == 0.0
    assert m.sampler_diagnostics_["exact"] is True
    assert m.sensitivity_ == 1.0
    assert stats.kstest(draws, cdf).pvalue > 1e-3


# ----------------------------------------------------------------------------- utility
def test_approaches_non_private_solution_as_epsilon_and_n_grow():
    errors = {}
    for n, eps in [(200, 0.5), (5000, 50.0)]:
        X, y, _ = _data(n, seed=1)
        ref = QuantileRegressor(quantile=0.5, alpha=0.0).fit(X, y)
        errs = []
        for seed in range(3):
            m = _model(epsilon=eps, random_state=seed, n_chains=1).fit(X, y)
            errs.append(np.linalg.norm(np.r_[m.intercept_ - ref.intercept_, m.coef_ - ref.coef_]))
        errors[n] = np.mean(errs)
    assert errors[5000] < 0.02
    assert errors[5000] < errors[200] / 5


@pytest.mark.parametrize("tau", [0.1, 0.9])
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_extreme_quantiles_high_epsilon(tau):
    # (at epsilon = 100 the density is sharply peaked on a mosaic of cells and the chains
    # mix more slowly; R-hat may flag it, the estimate is still accurate)
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(3000, 1))
    y = X[:, 0] + (1 + X[:, 0]) * rng.standard_normal(3000)  # heteroscedastic
    ref = QuantileRegressor(quantile=tau, alpha=0.0).fit(X, y)
    m = KNGQuantileRegressor(
        quantile=tau, epsilon=100.0, bounds_X=(-1, 1), bounds_y=(-10, 10), random_state=0
    ).fit(X, y)
    assert m.intercept_ == pytest.approx(ref.intercept_, abs=0.05)
    assert m.coef_[0] == pytest.approx(ref.coef_[0], abs=0.05)
    assert m.quantile_ == tau


def test_fit_without_intercept():
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, size=(3000, 2))
    y = X @ [1.5, -0.5] + 0.3 * rng.standard_normal(3000)
    m = KNGQuantileRegressor(
        epsilon=100.0, bounds_X=(-2, 2), bounds_y=(-5, 5), fit_intercept=False, random_state=0
    ).fit(X, y)
    assert m.intercept_ == 0.0
    np.testing.assert_allclose(m.coef_, [1.5, -0.5], atol=0.05)


def test_y_is_never_rescaled_scale_equivariance():
    """Multiplying y and its public range by c multiplies the release by c (same seed): the
    mechanism does not depend on the size of y. (c = 128 is a power of two, so every float
    operation of the exact sampler scales exactly and the same random numbers are used.)"""
    X, y, _ = _data(300, seed=4)
    a = _model(random_state=5).fit(X, y)
    b = _model(random_state=5, bounds_y=(-30 * 128, 40 * 128)).fit(X, 128 * y)
    np.testing.assert_allclose(b.coef_, 128 * a.coef_, rtol=1e-6, atol=1e-9)
    assert b.intercept_ == pytest.approx(128 * a.intercept_, rel=1e-6, abs=1e-9)


# ----------------------------------------------------------------------------- parameters
def test_domain_contains_estimate_and_coef_bounds():
    X, y, _ = _data(50, seed=5)
    m = _model(epsilon=0.01, coef_bounds=3.0, random_state=1, n_chains=1).fit(X, y)
    lower, upper = m.coef_bounds_
    np.testing.assert_array_equal(lower, -3.0)
    theta = np.r_[m.intercept_ + m.coef_ @ np.full(2, 5.0), m.coef_ * 5.0]  # scaled params
    assert np.all(theta >= -3.0 - 1e-9) and np.all(theta <= 3.0 + 1e-9)
    m2 = _model(coef_bounds=([-40, -1, -1], [40, 30, 30]), n_chains=1).fit(X, y)
    assert m2.coef_bounds_[0].tolist() == [-40, -1, -1]
    # default domain from bounds_y
    m3 = _model(n_chains=1).fit(X, y)
    np.testing.assert_allclose(m3.coef_bounds_[0], [-30, -35, -35])
    np.testing.assert_allclose(m3.coef_bounds_[1], [40, 35, 35])


def test_norm_auto_and_sensitivities():
    X, y, _ = _data(100, seed=6, p=3)
    m = _model(norm="auto", bounds_X=(0, 10), n_chains=1, quantile=0.9).fit(X, y)
    assert m.norm_ in ("l1", "l2", "linf")
    assert _model(norm="linf", quantile=0.9, n_chains=1).fit(X, y).sensitivity_ == 1.8
    assert _model(norm="l1", quantile=0.5, n_chains=1).fit(X, y).sensitivity_ == 4.0


def test_exact_sampler_reproducible_and_diagnostics():
    X, y, _ = _data(300, seed=7)
    a = _model(random_state=3, diagnostics=True).fit(X, y)
    b = _model(random_state=3).fit(X, y)
    c = _model(random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)  # diagnostics do not change the draw
    assert not np.array_equal(a.coef_, c.coef_)
    diag = a.sampler_diagnostics_
    assert diag["exact"] is True and diag["sampler"] == "boxes"
    assert diag["n_boxes"] >= 1 and diag["n_proposals"] >= 1
    # by default only the public plan is kept: the counts are functions of the data
    assert b.sampler_diagnostics_ == {"exact": True, "sampler": "boxes"}


def test_default_diagnostics_are_the_same_on_neighbouring_data():
    # the control: with diagnostics=True the statistics differ between neighbours
    X, y, _ = _data(300, seed=7)
    y2 = y.copy()
    y2[0] += 50.0  # replace one row's response
    plain = [_model(random_state=3).fit(X, t).sampler_diagnostics_ for t in (y, y2)]
    assert plain[0] == plain[1]
    full = [
        _model(random_state=3, diagnostics=True).fit(X, t).sampler_diagnostics_ for t in (y, y2)
    ]
    assert full[0] != full[1]
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match="diagnostics must be True or False"):
            _model(diagnostics=bad).fit(X, y)


def test_gibbs_is_opt_in_with_a_warning_and_no_data_anchor():
    X, y, _ = _data(300, seed=7)
    with pytest.warns(PrivacyLeakWarning, match="unknown delta"):
        m = _model(sampler="gibbs", n_sweeps=3, n_chains=1).fit(X, y)
    assert m.sampler_diagnostics_["exact"] is False
    with pytest.raises(ValueError, match="sampler"):
        _model(sampler="mcmc").fit(X, y)
    with pytest.raises(ValueError, match="at most 5 parameters"):
        _model(bounds_X=(0, 10)).fit(np.tile(X, 3), y)


def fit_gibbs(model, X, y):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "sampler='gibbs'", PrivacyLeakWarning)
        return model.fit(X, y)


def test_reproducible_and_diagnostics():
    X, y, _ = _data(300, seed=7)
    a = fit_gibbs(_model(sampler="gibbs", random_state=3, n_sweeps=10, diagnostics=True), X, y)
    b = fit_gibbs(_model(sampler="gibbs", random_state=3, n_sweeps=10), X, y)
    c = fit_gibbs(_model(sampler="gibbs", random_state=4, n_sweeps=10), X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)
    diag = a.sampler_diagnostics_
    assert diag["exact"] is False and diag["n_chains"] == 4 and diag["n_sweeps"] == 10
    assert diag["rhat"].shape == (3,) and np.isfinite(diag["max_rhat"])
    assert "rhat" not in b.sampler_diagnostics_ and "max_rhat" not in b.sampler_diagnostics_
    assert b.sampler_diagnostics_["rhat_limit"] == diag["rhat_limit"]
    # "auto" sweeps: about 1e6 record-line visits per chain, between 20 and 1000
    auto = fit_gibbs(_model(sampler="gibbs", n_chains=1), X, y)
    assert auto.sampler_diagnostics_["n_sweeps"] == 833
    rs = np.random.RandomState(0)
    d = _model(random_state=rs).fit(X, y)
    e = _model(random_state=np.random.RandomState(0)).fit(X, y)
    np.testing.assert_array_equal(d.coef_, e.coef_)


def test_rhat_limit_in_the_diagnostics_and_no_warning_after_the_spend(monkeypatch):
    from dpreg.linear_model import quantile as module

    assert module._rhat_limit(20) == pytest.approx(1 + 5 / 21)
    assert module._rhat_limit(10**6) == 1.01
    X, y, _ = _data(200, seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = fit_gibbs(_model(sampler="gibbs", n_sweeps=40, diagnostics=True), X, y)  # no warning
    assert m.sampler_diagnostics_["max_rhat"] <= m.sampler_diagnostics_["rhat_limit"]
    monkeypatch.setattr(module, "_rhat_limit", lambda n_sweeps: 0.5)
    # above the limit the fit still does not warn (session 21: a warning after the spend that
    # depends on the data was a side channel); the diagnostics say it, for the analyst only
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = fit_gibbs(_model(sampler="gibbs", n_sweeps=40, diagnostics=True), X, y)
    assert m.sampler_diagnostics_["max_rhat"] > m.sampler_diagnostics_["rhat_limit"] == 0.5


def test_pandas_input_and_feature_names():
    X, y, _ = _data(200, seed=9)
    df = pd.DataFrame(X, columns=["a", "b"])
    m = _model(n_chains=1, n_sweeps=5).fit(df, pd.Series(y))
    assert list(m.feature_names_in_) == ["a", "b"]
    assert m.predict(df).shape == (200,)


# ----------------------------------------------------------------------------- privacy plumbing
def test_privacy_leak_warnings():
    X, y, _ = _data(100, seed=10)
    with pytest.warns(PrivacyLeakWarning, match="bounds_X"):
        KNGQuantileRegressor(bounds_y=(-30, 40), random_state=0, n_chains=1).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="bounds_y"):
        KNGQuantileRegressor(bounds_X=(0, 10), random_state=0, n_chains=1).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        _model(n_chains=1, n_sweeps=3).fit(X, y)
        _model(n_chains=1, n_sweeps=3, bounds_y=None, coef_bounds=50.0).fit(X, y)


def test_accountant_spends_once_and_checks_before_touching_data():
    X, y, _ = _data(100, seed=11)
    acc = BudgetAccountant(epsilon=1.0)
    _model(epsilon=0.6, accountant=acc, n_chains=1, n_sweeps=3).fit(X, y)
    assert acc.spent == (0.6, 0.0) and len(acc) == 1
    X_bad = X.copy()
    X_bad[0, 0] = np.nan
    with pytest.raises(BudgetExceededError):
        _model(epsilon=0.6, accountant=acc, n_chains=1).fit(X_bad, y)
    assert len(acc) == 1
    clone(_model(epsilon=0.3, accountant=acc, n_chains=1, n_sweeps=3)).fit(X, y)
    assert acc.spent[0] == pytest.approx(0.9)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"quantile": 0.0}, "quantile"),
        ({"quantile": 1.0}, "quantile"),
        ({"quantile": "a"}, "quantile"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"norm": "l7"}, "norm"),
        ({"norm": 0.5}, "norm"),
        ({"n_sweeps": 0}, "n_sweeps"),
        ({"n_sweeps": "many"}, "n_sweeps"),
        ({"n_chains": 0}, "n_chains"),
        ({"coef_bounds": -1.0}, "coef_bounds"),
        ({"coef_bounds": ([0, 0, 0], [1, 1])}, "coef_bounds"),
        ({"bounds_y": (5, 5)}, "lower < upper"),
        ({"accountant": "x"}, "accountant"),
    ],
)
def test_invalid_parameters(params, match):
    X, y, _ = _data(30, seed=12)
    with pytest.raises(ValueError, match=match):
        _model(**params).fit(X, y)


def test_invalid_data():
    X, y, _ = _data(30, seed=13)
    y_bad = y.copy()
    y_bad[3] = np.inf
    with pytest.raises(ValueError):
        _model().fit(X, y_bad)
    with pytest.raises(ValueError):
        _model().fit(X, y[:-1])


# ----------------------------------------------------------------------------- workflows
def test_pipeline_and_grid_search_over_quantile_and_epsilon():
    X, y, _ = _data(300, seed=14)
    pipe = make_pipeline(FunctionTransformer(), _model(n_chains=1, n_sweeps=5))
    grid = GridSearchCV(
        pipe,
        {"kngquantileregressor__quantile": [0.25, 0.5], "kngquantileregressor__epsilon": [1, 10]},
        cv=3,
        scoring=make_scorer(mean_pinball_loss, alpha=0.5, greater_is_better=False),
    ).fit(X, y)
    assert grid.best_params_["kngquantileregressor__quantile"] in (0.25, 0.5)
    assert grid.predict(X).shape == (300,)
    assert np.isfinite(grid.score(X, y))


def test_intercept_only_draws_by_segments_and_never_stalls():
    """Session-22 audit: an intercept-only fit with a wide public bounds_y (every response
    inside one grid cell of the box) stalled in the box sampler after the spend. Intercept
    only is Smith's private quantile, whose structure is public: it is drawn segment by
    segment (dpreg._kng_line) in O(n log n) whatever the data."""
    import time

    from dpreg import BudgetAccountant

    rng = np.random.default_rng(0)
    y = rng.standard_normal(200)
    X = np.zeros((200, 1))  # bounds_X=(0, 0): the constant feature is dropped (d = 1)
    acc = BudgetAccountant()
    start = time.monotonic()
    m = KNGQuantileRegressor(
        bounds_X=(0, 0), bounds_y=(-1e12, 1e12), random_state=0, accountant=acc
    ).fit(X, y)
    assert time.monotonic() - start < 10.0  # the box sampler did not finish in 20 s
    assert m.sampler_diagnostics_ == {"exact": True, "sampler": "line"}
    assert np.isfinite(m.intercept_) and abs(m.intercept_) < 1e12 and acc.spent[0] == 1.0
    # the structure decides, not the data: weighted fits and slopes keep the box sampler
    w = np.full(200, 0.5)
    mw = KNGQuantileRegressor(bounds_X=(0, 0), bounds_y=(-10, 10), random_state=0)
    assert mw.fit(X, y, sample_weight=w).sampler_diagnostics_["sampler"] == "boxes"
    m2 = _model(fit_intercept=False).fit(rng.uniform(1, 9, (50, 1)), rng.uniform(0, 9, 50))
    assert m2.sampler_diagnostics_["sampler"] == "boxes"


def test_intercept_only_segment_law_matches_the_box_sampler(monkeypatch):
    """The two exact samplers draw the same grid law (their density scales differ by about
    1e-12 relative): a two-sample KS test on 300 draws each; a shifted law is rejected."""
    from scipy import stats

    from dpreg.linear_model import quantile as module

    rng = np.random.default_rng(1)
    y = rng.standard_normal(30)
    X = np.zeros((30, 1))

    def draws(seeds):
        return np.array([
            KNGQuantileRegressor(
                quantile=0.3, bounds_X=(0, 0), bounds_y=(-3, 3), random_state=s
            ).fit(X, y).intercept_
            for s in seeds
        ])  # fmt: skip

    line = draws(range(300))
    monkeypatch.setattr(module, "line_release_applies", lambda *args: False)
    boxes = draws(range(1000, 1300))
    assert stats.ks_2samp(line, boxes).pvalue > 1e-3
    assert stats.ks_2samp(line, boxes + 0.25).pvalue < 1e-3  # the control
