"""PrivateProjectionMedian as a scikit-learn transformer, its PTR test and its budget."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpreg import BudgetAccountant, PrivateProjectionMedian
from dpreg.exceptions import (
    BudgetExceededError,
    PrivacyLeakWarning,
    PTRInfeasibleError,
    PTRTestFailedError,
)
from dpreg.location import _sensitivity as sens
from dpreg.location.projection_median import (
    AUTO_TAU_TARGET,
    auto_tau,
    choose_split,
    default_delta,
    default_eta,
    make_directions,
    projection_median,
    ptr_threshold,
    release_inverse_temperature,
    required_margin,
    sklearn_expected_failed_checks,
)


# The sklearn checks fit on 10-30 points. PTR cannot pass on so little data at a sane budget,
# so the checks use a huge epsilon and an explicit eta/tau (the mechanism is unchanged).
@parametrize_with_checks(
    [
        PrivateProjectionMedian(
            epsilon=1e5, delta=1e-3, tau=10.0, eta=500.0, n_directions=50, random_state=0
        )
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_sklearn_checks_at_defaults_fail_only_through_declared_ptr_failures():
    """Issue #10 item 9: at the defaults every sklearn check passes except the declared ones,
    and each declared one fails only because the private test cannot pass on 10-30 rows
    (strict: a declared check that passed would be reported here)."""
    from sklearn.utils.estimator_checks import check_estimator

    est = PrivateProjectionMedian()
    expected = sklearn_expected_failed_checks(est)
    assert expected and all("PTRTestFailedError" in r for r in expected.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, expected_failed_checks=expected, on_fail=None)
    assert not [r["check_name"] for r in results if r["status"] == "failed"]
    for r in results:
        if r["check_name"] in expected:
            assert r["status"] == "xfail", r["check_name"]
            exc = r["exception"]
            # PTRInfeasibleError (a PTRTestFailedError raised before spending) may be wrapped
            # by sklearn's message about ValueErrors
            assert isinstance(exc, PTRTestFailedError) or any(
                name in str(exc)
                for name in ("PTRTestFailedError", "PTRInfeasibleError", "Nothing was spent")
            )
    assert {r["check_name"] for r in results if r["status"] == "xfail"} == set(expected)
    # the parameters used by the check above allow a pass: nothing is declared there
    tuned = PrivateProjectionMedian(epsilon=1e5, delta=1e-3, tau=10.0, eta=500.0)
    assert sklearn_expected_failed_checks(tuned) == {}


@pytest.fixture(scope="module")
def gaussian():
    rng = np.random.default_rng(0)
    return rng.standard_normal((20000, 2)) + [3.0, -1.0]


def test_accurate_on_large_gaussian_sample(gaussian):
    est = PrivateProjectionMedian(epsilon=5.0, random_state=1, diagnostics=True).fit(gaussian)
    assert np.linalg.norm(est.location_ - [3.0, -1.0]) < 0.1
    assert est.noisy_safety_margin_ > est.ptr_threshold_
    assert est.directions_.shape == (est.n_directions_, 2)
    assert 0 < est.diagnostics_["acceptance_rate"] <= 1
    k = required_margin(5.0, est.delta_, test_fraction=est.test_fraction_)
    assert est.diagnostics_["safety_margin"] >= k
    assert 0.4 <= est.test_fraction_ <= 0.6


def test_robust_to_contamination():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((20000, 2))
    X[:5000] += 5.0
    est = PrivateProjectionMedian(epsilon=5.0, random_state=0).fit(X)
    assert np.linalg.norm(est.location_) < 0.6 * np.linalg.norm(X.mean(0))


def test_pipeline_before_regressor():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((8000, 3)) * 2 + 10
    y = X @ [1.0, -2.0, 0.5] + rng.normal(0, 0.1, len(X))
    pipe = make_pipeline(PrivateProjectionMedian(epsilon=5.0, random_state=0), LinearRegression())
    assert pipe.fit(X, y).score(X, y) > 0.99
    centred = pipe[0].transform(X)
    assert np.all(np.abs(np.median(centred, axis=0)) < 0.2)


def test_pandas_output_and_feature_names(gaussian):
    df = pd.DataFrame(gaussian, columns=["a", "b"])
    est = PrivateProjectionMedian(epsilon=5.0, random_state=0).set_output(transform="pandas")
    out = est.fit(df).transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["a", "b"]
    assert list(est.get_feature_names_out()) == ["a", "b"]
    np.testing.assert_allclose(est.inverse_transform(out), gaussian)


def test_reproducible_and_directions_data_independent(gaussian):
    a = PrivateProjectionMedian(epsilon=5.0, random_state=7).fit(gaussian)
    b = PrivateProjectionMedian(epsilon=5.0, random_state=7).fit(gaussian)
    np.testing.assert_array_equal(a.location_, b.location_)
    c = PrivateProjectionMedian(epsilon=5.0, random_state=7).fit(gaussian[::-1] * 2 + 1)
    np.testing.assert_array_equal(a.directions_, c.directions_)


def test_direction_sets():
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(make_directions("linf", 3, None, rng), np.eye(3))
    U = make_directions("l1", 3, None, rng)
    assert U.shape == (4, 3) and np.allclose(np.abs(U), 1 / np.sqrt(3))
    assert make_directions("l1", 12, 100, rng).shape == (100, 12)
    for norm in ("l1", "l2", "linf"):
        np.testing.assert_array_equal(make_directions(norm, 1, None, rng), [[1.0]])
    U = make_directions("l2", 5, 300, rng)
    assert U.shape == (300, 5) and np.allclose(np.linalg.norm(U, axis=1), 1)
    U = make_directions(np.array([[2.0, 0.0], [1.0, 1.0]]), 2, None, rng)
    np.testing.assert_allclose(U[1], [2**-0.5, 2**-0.5])
    with pytest.raises(ValueError, match="span"):
        make_directions(np.array([[1.0, 1.0], [2.0, 2.0]]), 2, None, rng)
    with pytest.raises(ValueError, match="shape"):
        make_directions(np.ones((3, 4)), 2, None, rng)


@pytest.mark.parametrize("norm", ["linf", "l1"])
def test_other_norms_fit(gaussian, norm):
    est = PrivateProjectionMedian(epsilon=5.0, norm=norm, random_state=0).fit(gaussian)
    assert np.linalg.norm(est.location_ - [3.0, -1.0]) < 0.1


def test_iqr_scale(gaussian):
    est = PrivateProjectionMedian(epsilon=5.0, scale="iqr", random_state=0).fit(gaussian)
    assert np.linalg.norm(est.location_ - [3.0, -1.0]) < 0.1


@pytest.mark.parametrize(
    "params,match",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"delta": 0.0}, "delta > 0"),
        ({"norm": "l3"}, "norm"),
        ({"scale": "sd"}, "scale"),
        ({"location": "mean"}, "location"),
        ({"n_directions": 0}, "n_directions"),
        ({"tau": -1.0}, "tau"),
        ({"eta": 0.0}, "eta"),
        ({"sampler": "mala"}, "sampler"),
        ({"test_fraction": 1.0}, "test_fraction"),
        ({"test_fraction": 0.0}, "test_fraction"),
    ],
)
def test_invalid_parameters(params, match):
    X = np.random.default_rng(0).standard_normal((50, 2))
    with pytest.raises(ValueError, match=match):
        PrivateProjectionMedian(**params).fit(X)


def test_invalid_data():
    est = PrivateProjectionMedian()
    with pytest.raises(ValueError, match="NaN"):
        est.fit(np.array([[0.0, np.nan], [1.0, 2.0], [3.0, 4.0]]))
    with pytest.raises(ValueError, match="3 samples"):
        est.fit(np.zeros((2, 2)))


def test_failed_test_raises_and_spends_budget():
    acc = BudgetAccountant(epsilon=3.0, delta=1e-3)
    X = np.random.default_rng(0).standard_normal((30, 2))
    # eta = 0.01 keeps the test feasible (a refusal would spend nothing); F_0 > eta here
    est = PrivateProjectionMedian(epsilon=1.0, delta=1e-4, eta=0.01, accountant=acc, random_state=0)
    with pytest.raises(PTRTestFailedError, match="spent") as err:
        est.fit(X)
    assert not isinstance(err.value, PTRInfeasibleError)
    assert acc.spent == (1.0, 1e-4)
    assert not hasattr(est, "location_")


def test_certain_failure_is_refused_before_spending():
    """At n = 30, epsilon = 1 the default eta leaves the tail uncertifiable even at min O = 0:
    h(D) = 0 for every D, so fit refuses (a ValueError and a PTRTestFailedError) before the
    accountant is charged; the refusal is decided by the public tail bound alone."""
    from dpreg.location import _sensitivity as sens
    from dpreg.location import projection_median as pm

    acc = BudgetAccountant(epsilon=3.0, delta=1e-3)
    X = np.random.default_rng(0).standard_normal((30, 2))
    est = PrivateProjectionMedian(epsilon=1.0, delta=1e-4, accountant=acc, random_state=0)
    for kind in (PTRInfeasibleError, ValueError, PTRTestFailedError):
        with pytest.raises(kind, match="Nothing was spent"):
            est.fit(X)
    assert acc.spent == (0.0, 0.0)
    # the data-derived default scale points to the routes that pass from fewer rows
    with pytest.raises(PTRInfeasibleError, match="scale='private'"):
        est.fit(X)
    assert "scale=" not in PrivateProjectionMedian(scale=np.ones(2))._scale_hint()
    frac, tau, eta = pm.choose_split(30, 2, 1.0, 1e-4)  # what fit uses (public)
    c = pm.release_inverse_temperature(1.0, 1e-4, eta, frac)
    assert sens.max_min_outlyingness(c, tau, 2, 1e-4) == -np.inf
    # the same parameters with a feasible eta are not refused (the refusal is not a blanket)
    ok = PrivateProjectionMedian(epsilon=1.0, delta=1e-4, eta=0.01)
    ok._refuse_certain_failure(30, 2, *ok._check_params(30, 2))


def test_accountant_spends_once_and_checks_first(gaussian):
    acc = BudgetAccountant(epsilon=6.0, delta=1e-3)
    PrivateProjectionMedian(epsilon=5.0, delta=1e-6, accountant=acc, random_state=0).fit(gaussian)
    assert acc.spent == (5.0, 1e-6)
    with pytest.raises(BudgetExceededError):
        PrivateProjectionMedian(epsilon=5.0, delta=1e-6, accountant=acc).fit(gaussian)
    assert len(acc) == 1


def test_unsafe_data_pass_with_probability_at_most_delta():
    """All-equal projections: h = 0, so the test passes w.p. delta (here 0.05 for power)."""
    X = np.zeros((40, 2))
    X[:, 0] = np.repeat([0.0, 1.0], 20)
    fails = 0
    for seed in range(200):
        try:
            PrivateProjectionMedian(epsilon=1.0, delta=0.05, norm="linf", random_state=seed).fit(X)
        except PTRTestFailedError:
            fails += 1
    # P(pass) = delta = 0.05: 200 trials -> expect 10 passes; allow a wide binomial band
    assert 190 - 12 <= fails <= 200


def test_hit_and_run_is_opt_in_and_warns(gaussian):
    est = PrivateProjectionMedian(epsilon=5.0, sampler="hit_and_run", n_steps=20, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="approximately"):
        est.fit(gaussian)
    assert np.linalg.norm(est.location_ - [3.0, -1.0]) < 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        PrivateProjectionMedian(epsilon=5.0, random_state=0).fit(gaussian)


def test_hit_and_run_warns_before_the_spend(gaussian):
    """The warning depends on a public parameter only: with warnings as errors the fit stops
    at it and nothing is charged (it used to warn after the release, budget already spent).
    Control: the same accountant is charged by the fit that runs through."""
    acc = BudgetAccountant(delta=0.5)
    est = PrivateProjectionMedian(
        epsilon=5.0, sampler="hit_and_run", n_steps=20, random_state=0, accountant=acc
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        with pytest.raises(PrivacyLeakWarning, match="only approximately"):
            est.fit(gaussian)
    assert acc.spent == (0.0, 0.0)
    assert not hasattr(est, "location_")
    with pytest.warns(PrivacyLeakWarning, match="only approximately"):
        est.fit(gaussian)
    assert acc.spent[0] == pytest.approx(5.0)


def test_diagnostics_only_on_request(gaussian):
    est = PrivateProjectionMedian(epsilon=5.0, random_state=0).fit(gaussian)
    assert not hasattr(est, "diagnostics_")


def test_defaults_are_data_independent_formulas():
    assert default_delta(1000) == 1e-5
    assert default_delta(10**6) == pytest.approx(1e-9)
    e1 = default_eta(10000, 2.0, 1e-6, 1.0)
    assert default_eta(20000, 2.0, 1e-6, 1.0) == pytest.approx(e1 / 2)  # ~ 1/n
    tau = auto_tau(50000, 10, 5.0, 2e-4)
    assert 0.25 <= tau <= 2.0
    c = release_inverse_temperature(5.0, 2e-4, default_eta(50000, 5.0, 2e-4, tau))
    assert sens.max_min_outlyingness(c, tau, 10, 2e-4) >= AUTO_TAU_TARGET
    # the automatic split never predicts more noise than SPEC's half/half split
    f, t, e = choose_split(50000, 10, 5.0, 2e-4)
    assert e / ((1 - f) * 5.0) <= default_eta(50000, 5.0, 2e-4, tau) / 2.5
    assert choose_split(50000, 10, 5.0, 2e-4, eta=0.01) == (
        0.5,
        auto_tau(50000, 10, 5.0, 2e-4, eta=0.01),
        0.01,
    )


def test_ptr_threshold_matches_laplace_tail():
    # P(Lap(1/eps_t) > threshold) = delta exactly, for any split
    for f in (0.3, 0.5, 0.7):
        thr = ptr_threshold(4.0, 1e-6, f)
        assert 0.5 * np.exp(-thr * f * 4.0) == pytest.approx(1e-6)


def _margin(est, X):
    """Raw h(D) with the estimator's public parameters (white-box)."""
    rng = np.random.default_rng(0)
    U = make_directions(est.norm, X.shape[1], est.n_directions, rng)
    S = np.sort(U @ X.T, axis=1)
    n, d = X.shape
    eps, delta, tau, eta, c = est._check_params(n, d)
    mu, sig = sens.location_scale(S, est.scale)
    from dpreg.location._sampler import projection_median_lp

    x_star = projection_median_lp(U, mu, sig)[0] if np.all(sig > 0) else None
    return est._safety_margin(U, S, eta, tau, c, delta, 60, x_star)[0]


@pytest.mark.parametrize("scale", ["mad", "iqr"])
def test_safety_margin_has_sensitivity_one(scale):
    """|h(D) - h(D')| <= 1 over adversarial neighbours (outliers, points at the median, ...)."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((1501, 2))
    X[:, 1] = np.exp(X[:, 1])  # skewed
    est = PrivateProjectionMedian(
        epsilon=8.0, delta=1e-4, tau=1.0, eta=0.1, n_directions=25, scale=scale
    )
    h = _margin(est, X)
    assert 3 <= h < 60  # informative regime
    med = np.median(X, axis=0)
    moves = [
        np.array([1e6, -1e6]),
        med,
        med + [0.001, 0],
        np.array([0.0, 100.0]),
        med + [0.7, 0.5],
    ]
    for i, v in enumerate(moves + list(rng.standard_normal((5, 2)) * 3)):
        Y = X.copy()
        Y[(7 * i) % len(X)] = v
        assert abs(_margin(est, Y) - h) <= 1


def test_nonprivate_projection_median_is_the_lp_minimiser(gaussian):
    U = make_directions("l2", 2, 200, np.random.default_rng(0))
    x = projection_median(gaussian, U)
    assert np.linalg.norm(x - [3.0, -1.0]) < 0.05


@pytest.mark.slow
def test_pass_rate_and_accuracy_n50000_d10_eps5():
    """Issue targets: pass rate >= 95% (measured 100%) and private RMSE <= 1.5x the
    non-private one (measured 1.48 in the benchmark, marginal: each estimate has a sampling
    error of about +-0.1). The assertion guards against regressions at 1.7x."""
    n, d, runs = 50000, 10, 20
    passed, err_p, err_np = 0, [], []
    for seed in range(runs):
        X = np.random.default_rng(100 + seed).standard_normal((n, d))
        est = PrivateProjectionMedian(epsilon=5.0, delta=10 / n, random_state=seed)
        try:
            est.fit(X)
        except PTRTestFailedError:
            continue
        passed += 1
        err_p.append(np.sum(est.location_**2))
        err_np.append(np.sum(projection_median(X, est.directions_) ** 2))
    assert passed / runs >= 0.95
    assert np.sqrt(np.mean(err_p)) <= 1.7 * np.sqrt(np.mean(err_np))


def test_one_dimensional_private_median():
    X = np.random.default_rng(8).standard_cauchy((20000, 1)) + 4.0
    est = PrivateProjectionMedian(epsilon=2.0, random_state=0, diagnostics=True).fit(X)
    # the release is Laplace-like with scale MAD / c (MAD ~ 1 here): 8 scales is a 3e-4 tail
    # (a fixed 0.1 was 2.3 scales, seed-dependent; this seed draws 4.5 scales)
    assert abs(est.location_[0] - 4.0) < 8.0 / est.diagnostics_["c"]
    assert est.diagnostics_["acceptance_rate"] > 0.99  # one direction: closed form


def test_tiny_projected_scale_fails_the_test_cleanly():
    """A projected MAD near float underflow once made the LP unbounded (RuntimeError)."""
    X = np.array([[9.47335052e-303], [0.0], [1.0]])
    with pytest.raises(PTRTestFailedError):
        PrivateProjectionMedian(epsilon=2.0, delta=1e-3, random_state=0).fit(X)


def test_exact_sampler_refused_in_high_dimension_before_spending():
    """Feasibility of the exact sampler is decided from public (d, norm), never by giving up."""
    from dpreg import BudgetAccountant
    from dpreg.location.projection_median import MAX_EXACT_DIM

    X = np.random.default_rng(0).standard_normal((20000, MAX_EXACT_DIM + 1))
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="hit_and_run"):
        PrivateProjectionMedian(epsilon=5.0, accountant=acc).fit(X)
    assert acc.spent == (0.0, 0.0)
    assert PrivateProjectionMedian().get_params()["max_proposals"] is None


def test_streaming_chunks_give_identical_certificates_and_release(gaussian, monkeypatch):
    """fit streams the sorted projections in chunks of directions (bounded memory); the
    certificates and the release must be identical to those from the whole matrix."""
    from dpreg.location import _certificate

    X = gaussian[:3000]
    whole = PrivateProjectionMedian(epsilon=5.0, random_state=0, diagnostics=True).fit(X)
    monkeypatch.setattr(_certificate, "CHUNK_BYTES", 7 * 8 * len(X))  # 7 directions a chunk
    chunked = PrivateProjectionMedian(epsilon=5.0, random_state=0, diagnostics=True).fit(X)
    assert whole.n_directions_ % 7 != 0  # a ragged last chunk is exercised
    assert chunked.diagnostics_["F"] == whole.diagnostics_["F"]
    assert chunked.diagnostics_["safety_margin"] == whole.diagnostics_["safety_margin"]
    np.testing.assert_array_equal(chunked.location_, whole.location_)
    # and the white-box path on the whole matrix agrees with fit
    assert _margin(PrivateProjectionMedian(epsilon=5.0), X) == whole.diagnostics_["safety_margin"]


def test_default_direction_count_is_public_and_capped_for_large_n():
    """The default m depends on (d, n) only; above DIRECTION_BUDGET / m rows it shrinks so that
    m n stays near the budget (n = 1e6, d = 2: 50 directions), never below 20 d."""
    from dpreg.location.projection_median import default_n_directions, make_directions

    assert default_n_directions(2) == default_n_directions(2, 50_000) == 200
    assert default_n_directions(10, 50_000) == 1000
    assert default_n_directions(2, 1_000_000) == 50
    assert default_n_directions(10, 1_000_000) == 200
    assert default_n_directions(3, 10**9) == 60
    U = make_directions("l2", 2, None, np.random.default_rng(0), n_samples=1_000_000)
    assert U.shape == (50, 2)
