"""Dask paths of FunctionalLinearRegression and ObjectivePerturbationLogistic.

Same statistics / same certified release as in memory, input errors before the spend, and
the per-iteration pass count of the dask logistic solver.
"""

import threading
import warnings

import numpy as np
import pytest

from dpreg import BudgetAccountant, FunctionalLinearRegression, ObjectivePerturbationLogistic
from dpreg.linear_model._certify import certify_problem, is_certified, minimal_subgradient
from dpreg.linear_model._dask_logistic import N_SUB, DaskBinaryProblem, solve
from dpreg.linear_model._logistic_core import _lbfgs, objective
from dpreg.linear_model.functional import sufficient_statistics
from dpreg.noise._grid import grid_exponent

da = pytest.importorskip("dask.array")


def _linear(n=6000, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 3, size=(n, p))
    y = 0.7 + X @ np.linspace(-1, 2, p) + rng.normal(scale=0.5, size=n)
    return X, y


def _classes(n, seed=0, k=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    s = X @ rng.normal(size=(3, k))
    return X, np.argmax(s + rng.gumbel(size=s.shape), axis=1)


# ------------------------------------------------------------------ FunctionalLinearRegression


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_dask_statistics_equal_numpy_for_any_chunking(fit_intercept):
    X, y = _linear(n=5003)
    X[:7] *= 10  # rows outside the bounds: the clip must act the same way
    b = ((-2, -1, 0), (3, 3, 2)), (-15, 15)
    ref = sufficient_statistics(X, y, *b, fit_intercept=fit_intercept, chunk_size=10**6)
    for xc, yc in (((1000, 3), 1000), ((777, 2), 1234), ((5003, 1), 5003)):
        st = sufficient_statistics(
            da.from_array(X, chunks=xc), da.from_array(y, chunks=yc), *b,
            fit_intercept=fit_intercept,
        )  # fmt: skip
        np.testing.assert_allclose(st.gram, ref.gram, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(st.xty, ref.xty, rtol=1e-12, atol=1e-9)
        assert st.yty == pytest.approx(ref.yty, rel=1e-12)
    # numpy y with a dask X, float32 X
    st = sufficient_statistics(da.from_array(X.astype(np.float32), chunks=(900, 3)), y, *b,
                               fit_intercept=fit_intercept)  # fmt: skip
    ref32 = sufficient_statistics(X.astype(np.float32), y, *b, fit_intercept=fit_intercept)
    np.testing.assert_allclose(st.gram, ref32.gram, rtol=1e-12, atol=1e-9)


def test_dask_fit_equals_numpy_fit():
    X, y = _linear()
    kw = {"bounds_X": (-2, 3), "bounds_y": (-15, 15), "random_state": 5, "epsilon": 0.7}
    a = FunctionalLinearRegression(**kw).fit(X, y)
    b = FunctionalLinearRegression(**kw).fit(da.from_array(X, chunks=(1000, 3)), y)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9)
    assert b.intercept_ == pytest.approx(a.intercept_, rel=1e-9)


@pytest.mark.parametrize(
    "bad, match",
    [
        (lambda X, y: (X, y[:-1]), "rows"),
        (lambda X, y: (X[:, 0], y), "2-D"),
        (lambda X, y: (X.astype(str), y), "numeric"),
        (lambda X, y: (X, np.column_stack([y, y])), "1-D"),
    ],
)
def test_dask_metadata_errors_before_spend(bad, match):
    X, y = _linear(n=500)
    Xb, yb = bad(X, y)
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError, match=match):
        FunctionalLinearRegression(bounds_X=(-2, 3), bounds_y=(-15, 15), accountant=acc).fit(
            da.from_array(Xb), yb if yb.ndim == 1 and len(yb) != 500 else da.from_array(yb)
        )
    assert acc.spent == (0.0, 0.0)


def test_unknown_chunk_sizes_are_rejected_before_spend():
    X, y = _linear(n=500)
    Xd = da.from_array(X, chunks=(100, 3))
    Xd = Xd[Xd[:, 0] > -10]  # boolean mask: unknown row chunks
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError, match="chunk sizes"):
        FunctionalLinearRegression(bounds_X=(-2, 3), bounds_y=(-15, 15), accountant=acc).fit(
            Xd, da.from_array(y, chunks=100)
        )
    assert acc.spent == (0.0, 0.0)


# ------------------------------------------------------------------ ObjectivePerturbationLogistic


def _grid(model):
    return 2.0 ** grid_exponent(model.amp_sensitivity_ / model.amp_epsilon_)


@pytest.mark.parametrize("classes", [[0, 1], [0, 1, 2], [0, 1, 2, 3]])
def test_dask_logistic_releases_the_same_point_as_numpy(classes):
    # n <= N_SUB: the warm start sees the same rows, the release is the same float
    X, y = _classes(N_SUB, seed=1, k=len(classes))
    if len(classes) == 2:
        y = (y > 0).astype(int)
    kw = {"epsilon": 1.0, "bounds_X": (-1, 1), "classes": classes, "random_state": 7}
    kw["multi_class"] = "ovr"  # numpy's "auto" takes the softmax model for 3-6 classes
    a = ObjectivePerturbationLogistic(**kw).fit(X, y)
    b = ObjectivePerturbationLogistic(**kw).fit(
        da.from_array(X, chunks=(3001, 3)), da.from_array(y, chunks=3001)
    )
    np.testing.assert_array_equal(b.theta_, a.theta_)
    np.testing.assert_array_equal(b.coef_, a.coef_)
    assert b.grad_tol_ == a.grad_tol_ and b.amp_sensitivity_ == a.amp_sensitivity_


def test_dask_logistic_large_n_same_grid_point():
    # n > N_SUB: the warm-start paths differ (free), both points pass the same certificate,
    # which alone allows 2 tol / mu (about 1e5 grid steps here); the Newton polish past the
    # certificate takes both to the floating-point floor: measured 0 grid steps (13 before)
    X, y = _classes(3 * N_SUB, seed=0)
    kw = {"epsilon": 1.0, "bounds_X": (-1, 1), "classes": [0, 1, 2], "random_state": 0}
    kw["multi_class"] = "ovr"  # numpy's "auto" takes the softmax model for 3-6 classes
    a = ObjectivePerturbationLogistic(**kw).fit(X, y)
    b = ObjectivePerturbationLogistic(**kw).fit(
        da.from_array(X, chunks=(10_000, 3)), da.from_array(y, chunks=10_000)
    )
    steps = np.abs(b.theta_ - a.theta_) / _grid(a)
    assert steps.max() <= 1
    assert a.amp_sensitivity_ / _grid(a) > 1e4  # the certificate's slack is far wider


def test_dask_solver_point_passes_the_in_memory_certificate_one_pass_per_step():
    X, y = _classes(3 * N_SUB, seed=2)
    Z, yk = X, (y == 1).astype(float)
    n, dim = Z.shape[0], 4
    gamma, V, tol, L = 5.0, np.array([3.0, -2.0, 1.0, 0.5]), 2e-10, dim / 4 + 5.0 / n
    Zd, yd = da.from_array(Z, chunks=(7000, 3)), da.from_array(yk, chunks=7000)
    step = n // N_SUB
    theta, n_iter, passes = solve(Zd, yd, (Z[::step], yk[::step]), True, 0.0, gamma, V, tol, L,
                                  1000)  # fmt: skip
    s, err, _ = minimal_subgradient(theta, Z, yk, True, 0.0, 0.0, gamma, V)  # in memory
    assert is_certified(s, err, tol)
    # a pass computes gradient and Hessian together: asking for the Hessian costs nothing
    problem = DaskBinaryProblem(Zd, yd, True, 0.0, gamma, V)
    problem.measure(theta)
    problem.hessian(theta)
    problem.gradient(theta)
    assert problem.passes == 1
    # Newton from the subsample warm start: one pass per iteration, plus the first measure
    Zs, ys = Z[::step], yk[::step]
    theta0 = _lbfgs(objective, np.zeros(dim), (Zs, ys, True, 0.0, gamma, V, n), 1000, 1e-6).x
    problem = DaskBinaryProblem(Zd, yd, True, 0.0, gamma, V)
    theta2, steps = certify_problem(theta0, problem, tol, L)
    # (the polish ends with one rejected trial, which also costs a pass)
    assert steps >= 2 and steps + 1 <= problem.passes <= steps + 2 and problem.passes == passes
    np.testing.assert_array_equal(theta2, theta)


@pytest.mark.parametrize(
    "mutate, kw, match",
    [
        (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 17, np.nan, X), y), {},
         "NaN"),
        (lambda X, y: (X, np.where(np.arange(len(y)) == 3, 5, y)), {}, "outside classes"),
        (lambda X, y: (X, y), {"multi_class": "multinomial"}, "dask input supports"),
        (lambda X, y: (X, y), {"solver": "cvxpy"}, "dask input supports"),
    ],
)  # fmt: skip
def test_dask_logistic_bad_input_raises_before_spend(mutate, kw, match):
    X, y = _classes(600, seed=3)
    Xb, yb = mutate(X, y)
    acc = BudgetAccountant(epsilon=5.0)
    clf = ObjectivePerturbationLogistic(
        bounds_X=(-1, 1), classes=[0, 1, 2], accountant=acc, random_state=0, **kw
    )
    with pytest.raises(ValueError, match=match):
        clf.fit(da.from_array(Xb, chunks=(100, 3)), da.from_array(yb, chunks=100))
    assert acc.spent == (0.0, 0.0)


def test_dask_logistic_predicts_like_numpy_and_records_one_spend():
    X, y = _classes(4000, seed=4)
    acc = BudgetAccountant(epsilon=5.0)
    clf = ObjectivePerturbationLogistic(
        epsilon=2.0, bounds_X=(-1, 1), classes=[0, 1, 2], accountant=acc, random_state=1
    ).fit(da.from_array(X, chunks=(1000, 3)), da.from_array(y, chunks=1000))
    assert acc.spent == (2.0, 0.0) and len(acc) == 1
    assert clf.n_features_in_ == 3 and clf.predict(X).shape == (4000,)
    assert clf.score(X, y) > 0.5


def _nan_on_second_read(X, chunks):
    """Block (0, 0) gets X[0, 0] = NaN from its second read on (a source that changes)."""
    seen, lock = set(), threading.Lock()

    def block(b, block_info=None):
        loc = block_info[None]["chunk-location"]
        with lock:
            again = loc in seen
            seen.add(loc)
        b = b.copy()
        if again and loc == (0, 0):
            b[0, 0] = np.nan
        return b

    return da.from_array(X, chunks=chunks).map_blocks(block, dtype=X.dtype)


def test_dask_logistic_nan_after_the_reserve_still_certifies():
    # the logistic dask solver reads the data once per iteration; a NaN appearing on a later
    # read is scaled to 0, so the objective stays strongly convex and the certificate is met
    X, y = _classes(3000, seed=5)
    labels = (y > 0).astype(int)
    Xd = _nan_on_second_read(X, (500, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = ObjectivePerturbationLogistic(
            epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], random_state=0
        ).fit(Xd, da.from_array(labels, chunks=500))
    assert np.all(np.isfinite(clf.theta_))


def test_dask_logistic_data_bounds_and_labels_warn_like_numpy():
    from dpreg.exceptions import PrivacyLeakWarning

    X, y = _classes(3000, seed=6)
    Xd, yd = da.from_array(X, chunks=(1000, 3)), da.from_array(y, chunks=1000)
    with pytest.warns(PrivacyLeakWarning) as rec:
        b = ObjectivePerturbationLogistic(random_state=0).fit(Xd, yd)
    assert len(rec) == 2  # labels read from the data, bounds read from the data
    assert b.multi_class_ == "ovr"  # "auto" on dask input
    with pytest.warns(PrivacyLeakWarning):
        a = ObjectivePerturbationLogistic(random_state=0, multi_class="ovr").fit(X, y)
    np.testing.assert_array_equal(b.classes_, a.classes_)
    np.testing.assert_array_equal(b.bounds_[0], a.bounds_[0])
    np.testing.assert_array_equal(b.theta_, a.theta_)
