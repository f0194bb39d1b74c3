"""ObjectivePerturbationLogistic: scikit-learn behaviour, solvers, limits and errors."""

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

from dpreg import BudgetAccountant, ObjectivePerturbationLogistic
from dpreg.exceptions import BudgetExceededError, PrivacyLeakWarning

BETA = np.array([0.0, -1.0, -0.5, -0.25, 0.0, 0.75, 1.5])


@pytest.fixture(autouse=True)
def _single_threaded_blas():
    """Tiny linear algebra: threaded BLAS only adds overhead (a lot on a busy machine)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def make_data(n=3000, seed=0, beta=BETA, intercept=0.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, len(beta)))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ beta + intercept)))).astype(int)
    return X, y


@parametrize_with_checks(
    [
        ObjectivePerturbationLogistic(epsilon=50.0, bounds_X=(-10, 10), random_state=0),
        ObjectivePerturbationLogistic(
            epsilon=50.0, bounds_X=(-10, 10), multi_class="multinomial", random_state=0
        ),
        ObjectivePerturbationLogistic(
            epsilon=50.0,
            norm="l2",
            q=0.7,
            alpha=0.5,
            fit_intercept=False,
            bounds_X=(-10, 10),
            random_state=0,
        ),
    ],
    # sample weights must lie in [0, 1] (the sensitivity is derived for that range); these
    # checks use integer weights up to 4 (test_weights_logistic.py tests weights in [0, 1])
    expected_failed_checks=lambda est: dict.fromkeys(
        [
            "check_sample_weights_list",
            "check_sample_weights_not_overwritten",
            "check_sample_weight_equivalence_on_dense_data",
        ],
        "sample_weight must lie in [0, 1]",
    ),
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


def test_binary_attributes_and_predictions():
    X, y = make_data()
    labels = np.where(y == 1, "yes", "no")
    clf = ObjectivePerturbationLogistic(
        epsilon=2.0, bounds_X=(-1, 1), classes=["no", "yes"], random_state=0
    ).fit(X, labels)
    assert list(clf.classes_) == ["no", "yes"]
    assert clf.coef_.shape == (1, 7) and clf.intercept_.shape == (1,)
    assert clf.theta_.shape == (1, 8)
    scores = clf.decision_function(X)
    assert scores.shape == (len(X),)
    np.testing.assert_allclose(scores, X @ clf.coef_[0] + clf.intercept_[0])
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba, rtol=1e-10)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(scores > 0).astype(int)])
    assert clf.score(X, labels) > 0.65
    assert clf.norm_ == "linf" and 0 < clf.q_ < 1 and clf.gamma_ > 0
    assert clf.sensitivity_ == 2.0 and clf.hessian_bound_ == 8 / 4


def test_multiclass_ovr_splits_budget():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(3000, 2))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.4, 0.4])
    clf = ObjectivePerturbationLogistic(
        epsilon=30.0, bounds_X=(-1, 1), multi_class="ovr", random_state=0
    ).fit(X, y)
    assert clf.coef_.shape == (3, 2) and clf.intercept_.shape == (3,)
    assert clf.epsilon_per_problem_ == pytest.approx(10.0)
    assert clf.decision_function(X).shape == (3000, 3)
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    assert clf.score(X, y) > 0.8
    with pytest.raises(ValueError, match="multi_class='binary'"):
        ObjectivePerturbationLogistic(bounds_X=(-1, 1), multi_class="binary").fit(X, y)
    with pytest.raises(ValueError, match="multi_class='binary'"):  # public: before the data
        ObjectivePerturbationLogistic(
            bounds_X=(-1, 1), classes=[0, 1, 2], multi_class="binary"
        ).fit(X, y)


def test_unscaling_matches_scaled_decision():
    """coef_/intercept_ on the original scale reproduce theta_ . [1, z] for z in the bounds."""
    rng = np.random.default_rng(2)
    lower, upper = np.array([0.0, -5.0, 10.0]), np.array([4.0, 1.0, 30.0])
    X = rng.uniform(lower, upper, size=(500, 3))
    y = rng.integers(0, 2, size=500)
    for fit_intercept in (True, False):
        clf = ObjectivePerturbationLogistic(
            epsilon=1.0, bounds_X=(lower, upper), fit_intercept=fit_intercept, random_state=0
        ).fit(X, y)
        Z = clf._scale(X, lower, upper)
        if fit_intercept:
            Z = np.column_stack([np.ones(len(Z)), Z])
        np.testing.assert_allclose(clf.decision_function(X), Z @ clf.theta_[0], atol=1e-10)
        if not fit_intercept:
            assert clf.intercept_[0] == 0.0


def test_clipping_and_reproducibility():
    X, y = make_data(n=800, seed=3)
    X_wild = X * 3.0  # far outside the bounds
    kw = dict(epsilon=1.0, bounds_X=(-1, 1), random_state=7)
    a = ObjectivePerturbationLogistic(**kw).fit(X_wild, y)
    b = ObjectivePerturbationLogistic(**kw).fit(np.clip(X_wild, -1, 1), y)
    np.testing.assert_allclose(a.coef_, b.coef_)
    c = ObjectivePerturbationLogistic(**{**kw, "random_state": 8}).fit(X_wild, y)
    assert not np.allclose(a.coef_, c.coef_)
    rs = np.random.RandomState(5)
    d1 = ObjectivePerturbationLogistic(**{**kw, "random_state": rs}).fit(X, y).coef_
    d2 = ObjectivePerturbationLogistic(**{**kw, "random_state": np.random.RandomState(5)}).fit(X, y)
    np.testing.assert_allclose(d1, d2.coef_)


def test_lbfgs_and_cvxpy_agree():
    X, y = make_data(n=400, seed=4)
    for kw in (dict(alpha=0.0), dict(alpha=3.0), dict(alpha=1.0, fit_intercept=False)):
        fits = [
            ObjectivePerturbationLogistic(
                epsilon=0.5, bounds_X=(-1, 1), solver=s, random_state=11, **kw
            ).fit(X, y)
            for s in ("lbfgs", "cvxpy")
        ]
        np.testing.assert_allclose(fits[0].theta_, fits[1].theta_, atol=2e-5)


def test_large_epsilon_recovers_regularised_mle():
    X, y = make_data(n=3000, seed=5, intercept=0.4)
    # bounds (-1, 1) make the scaling the identity, so alpha matches sklearn's 1/C exactly
    for alpha, C in ((0.0, np.inf), (5.0, 0.2)):
        ours = ObjectivePerturbationLogistic(
            epsilon=1e5, alpha=alpha, bounds_X=(-1, 1), random_state=0
        ).fit(X, y)
        ref = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(X, y)
        np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)
        np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-4)


def _l1_logistic_reference(C):
    """An explicitly L1-penalised sklearn model on every supported sklearn version.

    Before sklearn 1.8 ``l1_ratio`` is ignored unless ``penalty="elasticnet"`` (the default
    penalty is L2); from 1.8 on ``penalty`` is deprecated and ``l1_ratio=1`` alone means L1.
    """
    major, minor = (int(v) for v in sklearn.__version__.split(".")[:2])
    kw = dict(C=C, l1_ratio=1.0, solver="saga", tol=1e-10, max_iter=100_000)
    if (major, minor) < (1, 8):
        kw["penalty"] = "elasticnet"
    return LogisticRegression(**kw)


def test_l1_penalty_via_cvxpy_matches_sklearn():
    X, y = make_data(n=600, seed=6)
    ours = ObjectivePerturbationLogistic(
        epsilon=1e5, alpha=20.0, l1_ratio=1.0, solver="cvxpy", bounds_X=(-1, 1), random_state=0
    ).fit(X, y)
    ref = _l1_logistic_reference(1 / 20.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref.fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=2e-3)
    # the L1 penalty produces exact zeros at the certified point; the released coefficients
    # carry the output noise W (mean norm amp_sensitivity_ / amp_epsilon_ * m, about 1e-5 here)
    assert np.sum(np.abs(ours.coef_) < 1e-4) >= 1


def test_private_error_shrinks_with_epsilon():
    X, y = make_data(n=5000, seed=8)
    err = {}
    for eps in (0.1, 10.0):
        err[eps] = np.median(
            [
                np.linalg.norm(
                    ObjectivePerturbationLogistic(
                        epsilon=eps, bounds_X=(-1, 1), fit_intercept=False, random_state=s
                    )
                    .fit(X, y)
                    .coef_[0]
                    - BETA
                )
                for s in range(15)
            ]
        )
    assert err[10.0] < 0.25 < err[0.1]


def test_norm_auto_and_lp():
    X, y = make_data(n=300, seed=9)
    clf = ObjectivePerturbationLogistic(norm="auto", bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert clf.norm_ == "linf"
    clf = ObjectivePerturbationLogistic(norm=3, bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert clf.sensitivity_ == pytest.approx(2 * 8 ** (1 / 3))
    clf = ObjectivePerturbationLogistic(norm="l1", bounds_X=(-1, 1), random_state=0).fit(X, y)
    assert clf.sensitivity_ == 16.0


def test_unknown_label_error_quotes_no_label_value():
    # a label of y is a private record: the error gives how many are unknown, not which
    # (s22 audit F3; the dask path already did so)
    X, y = make_data(n=100)
    y_bad = np.where(np.arange(100) == 7, 7919, y)
    acc = BudgetAccountant(epsilon=5.0)
    clf = ObjectivePerturbationLogistic(bounds_X=(-1, 1), classes=[0, 1], accountant=acc)
    with pytest.raises(ValueError, match="outside classes") as info:
        clf.fit(X, y_bad)
    assert "7919" not in str(info.value) and "1 of 100 labels" in str(info.value)
    assert acc.ledger == []


def test_bad_inputs_give_clear_errors():
    X, y = make_data(n=100)
    ok = dict(bounds_X=(-1, 1), classes=[0, 1])
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ValueError, match="only one class"):
        ObjectivePerturbationLogistic(bounds_X=(-1, 1)).fit(X, np.zeros(100))
    with pytest.raises(ValueError, match="outside classes"):
        ObjectivePerturbationLogistic(**ok).fit(X, np.where(y == 1, 2, 0))
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ObjectivePerturbationLogistic(**ok).fit(Xn, y)
    with pytest.raises(ValueError, match="continuous"):
        ObjectivePerturbationLogistic(**ok).fit(X, np.linspace(0, 1, 100))
    bad = [
        dict(epsilon=0.0),
        dict(epsilon=-1.0),
        dict(epsilon=1e-60),  # overflow territory: rejected publicly, before the data
        dict(q=1e-300),  # the same for a vanishing share of the budget
        dict(norm="l7"),
        dict(q=1.0),
        dict(q=0.0),
        dict(q="best"),
        dict(alpha=-1.0),
        dict(l1_ratio=1.5),
        dict(alpha=1.0, l1_ratio=0.5),  # lbfgs cannot do L1
        dict(solver="newton"),
        dict(multi_class="softmax"),
        dict(multi_class="multinomial", solver="cvxpy"),
        dict(max_iter=0),
        dict(bounds_X=(1, -1)),
        dict(accountant="me"),
        dict(classes=[1]),
        dict(classes=[0, 0, 1]),
        dict(classes=[[0, 1]]),
        dict(classes=[0, "a"]),
        dict(bounds=(-1, 1)),  # together with bounds_X
    ]
    for kw in bad:
        with pytest.raises(ValueError):
            ObjectivePerturbationLogistic(**{**ok, **kw}).fit(X, y)
    with pytest.warns(PrivacyLeakWarning):
        ObjectivePerturbationLogistic(random_state=0, classes=[0, 1]).fit(X, y)


def test_bounds_is_a_deprecated_alias_of_bounds_X():
    X, y = make_data(n=200)
    new = ObjectivePerturbationLogistic(bounds_X=(-1, 1), classes=[0, 1], random_state=0)
    old = ObjectivePerturbationLogistic(bounds=(-1, 1), classes=[0, 1], random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new.fit(X, y)
    with pytest.warns(FutureWarning, match="bounds_X"):
        old.fit(X, y)
    np.testing.assert_array_equal(new.coef_, old.coef_)
    assert clone(old).get_params()["bounds"] == (-1, 1)


def test_accountant_checked_before_data_and_shared_by_clones():
    X, y = make_data(n=200)
    acc = BudgetAccountant(epsilon=1.0)
    clf = ObjectivePerturbationLogistic(epsilon=0.6, bounds_X=(-1, 1), accountant=acc)
    clf.fit(X, y)
    assert acc.spent == (0.6, 0.0)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(BudgetExceededError):  # raised before the NaN is even looked at
        clone(clf).fit(Xn, y)
    assert acc.spent == (0.6, 0.0)


def test_pandas_pipeline_and_gridsearch():
    X, y = make_data(n=1500, seed=10)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(7)])
    clf = ObjectivePerturbationLogistic(epsilon=2.0, bounds_X=(-1, 1), random_state=0).fit(df, y)
    np.testing.assert_array_equal(clf.feature_names_in_, df.columns)
    assert clf.predict(df).shape == (1500,)
    # a fixed seed: with fresh entropy the search picked epsilon = 0.5 in about 1 of 40 runs
    # (measured over seeds 0-39: 39 / 40 pick 5.0), which made this a flaky test
    pipe = make_pipeline(
        FunctionTransformer(), ObjectivePerturbationLogistic(bounds_X=(-1, 1), random_state=0)
    )
    grid = GridSearchCV(
        pipe,
        {"objectiveperturbationlogistic__epsilon": [0.5, 5.0]},
        cv=3,
    ).fit(df, y)
    assert grid.best_params_["objectiveperturbationlogistic__epsilon"] == 5.0
    assert grid.score(df, y) > 0.65


@pytest.mark.slow
def test_algorithm3_linf_beats_l1_and_default_beats_half():
    """Seed 001 Algorithm 3 at small scale: linf < l2 < l1 at q = 1/2, and q='auto' improves
    on q = 1/2 (the paper's q = 0.85 finding, without tuning on the data)."""
    eps_grid, reps = (1 / 16, 1 / 4), 20
    med = {}
    for eps in eps_grid:
        errs = {k: [] for k in ("l1", "l2", "linf", "auto")}
        for r in range(reps):
            X, y = make_data(n=10_000, seed=100 + r)
            for key in errs:
                norm, q = (key, 0.5) if key != "auto" else ("linf", "auto")
                clf = ObjectivePerturbationLogistic(
                    epsilon=eps,
                    norm=norm,
                    q=q,
                    fit_intercept=False,
                    bounds_X=(-1, 1),
                    random_state=r,
                ).fit(X, y)
                errs[key].append(np.linalg.norm(clf.coef_[0] - BETA))
        med[eps] = {k: float(np.median(v)) for k, v in errs.items()}
        assert med[eps]["linf"] < med[eps]["l2"] < med[eps]["l1"]
        assert med[eps]["auto"] < 0.9 * med[eps]["linf"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    n=st.integers(1, 40),
    p=st.integers(1, 4),
    scale=st.sampled_from([1e-300, 1e-12, 1.0, 1e12, 1e300]),
    eps=st.sampled_from([1e-6, 0.1, 5.0, 1e4]),
    solver=st.sampled_from(["lbfgs", "cvxpy"]),
)
def test_no_exception_after_validation_with_public_classes(data, n, p, scale, eps, solver):
    """With public classes and finite X, every fit succeeds (no data-dependent exception):
    any subset of the classes may occur, features may be huge, tiny, constant or repeated."""
    rows = data.draw(
        st.lists(
            st.lists(st.floats(-1, 1, allow_nan=False), min_size=p, max_size=p),
            min_size=n,
            max_size=n,
        )
    )
    X = np.asarray(rows, dtype=float) * scale
    labels = data.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    classes = data.draw(st.sampled_from([["a", "b", "c"], ["a", "b", "c", "d"]]))
    clf = ObjectivePerturbationLogistic(
        epsilon=eps, bounds_X=(-scale, scale), classes=classes, solver=solver, random_state=0
    ).fit(X, np.asarray(labels))
    assert clf.theta_.shape == (len(classes), p + 1) and np.all(np.isfinite(clf.theta_))
    assert np.all(np.isfinite(clf.predict_proba(X)))
