"""Multi-output y, float32 input and lr norms for FunctionalLinearRegression (issue #16).

The sensitivities of the stacked statistic (Gram block and the p-by-k block ``X^T Y``) are
attacked like the one-output ones in ``test_functional_sensitivity.py``: exhaustive search
over pairs of rows on the grid {-1, 0, 1} plus L-BFGS-B from random starts. The calibration
of the released noise is checked by the law of its K-norm, Gamma(d, Delta / epsilon) (density
proportional to r^(d-1) exp(-epsilon r / Delta)), which a wrongly calibrated mechanism fails.
"""

import itertools

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize
from sklearn.datasets import load_linnerud
from sklearn.linear_model import LinearRegression

from dpreg import FunctionalLinearRegression
from dpreg.accounting import BudgetAccountant
from dpreg.linear_model._functional_sensitivity import (
    Layout,
    l1_attaining_pair,
    l1_sensitivity,
    l2_sensitivity,
    lp_sensitivity,
    sensitivity,
)
from dpreg.linear_model.functional import make_plan, privatize_statistic, sufficient_statistics

ORD = {"l1": 1, "l2": 2, "linf": np.inf}


def _attack(layout, norm, rng, n_starts=16):
    """Largest ||t(r) - t(r')|| found over pairs of rows r = (x, y), y in [-1, 1]^k."""
    p, k = layout.p, layout.n_outputs
    m = p + k
    o = ORD.get(norm, norm)

    def diff(z):
        a = layout.contributions(z[None, :p], z[None, p:m])
        b = layout.contributions(z[None, m : m + p], z[None, m + p :])
        return (a - b)[0]

    rows = np.array(list(itertools.product((-1.0, 0.0, 1.0), repeat=m)))
    a, b = np.repeat(rows, len(rows), axis=0), np.tile(rows, (len(rows), 1))
    U = layout.contributions(a[:, :p], a[:, p:]) - layout.contributions(b[:, :p], b[:, p:])
    best = float(np.max(np.linalg.norm(U, ord=o, axis=1)))
    for s in range(n_starts):
        z0 = rng.uniform(-1, 1, 2 * m)
        if s % 2:
            z0 = np.clip(rng.choice([-1.0, 0.0, 1.0], 2 * m) + rng.normal(0, 0.1, 2 * m), -1, 1)
        res = minimize(
            lambda z: -np.linalg.norm(diff(z), ord=o),
            z0,
            bounds=[(-1, 1)] * (2 * m),
            method="L-BFGS-B",
        )
        best = max(best, -float(res.fun))
    return best


# how close the search must come to each bound: l1 is exact; the l2 bound for k >= 2 and the
# lr interpolation bound are upper bounds whose measured gaps are documented in
# docs/functional_linear_regression.md (worst seen: 0.88 for l2, 0.96 for r = 7)
TIGHT = {"l1": 1 - 1e-3, "l2": 0.87, 7.0: 0.95}
SHAPES = [
    (1, 2),
    (2, 2),
    pytest.param(1, 3, marks=pytest.mark.slow),
    pytest.param(3, 2, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize(("p", "k"), SHAPES)
@pytest.mark.parametrize("norm", ["l1", "l2", 7.0])
def test_multioutput_sensitivity_survives_adversarial_search(norm, p, k, fit_intercept):
    layout = Layout(p, fit_intercept, k)
    bound = sensitivity(norm, p, fit_intercept, k)
    found = _attack(layout, norm, np.random.default_rng(10 * p + k))
    assert found <= bound * (1 + 1e-9), (found, bound)
    assert found >= TIGHT[norm] * bound, (found, bound)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("p", [1, 2, pytest.param(4, marks=pytest.mark.slow)])
def test_lp_sensitivity_one_output_survives_adversarial_search(p, fit_intercept):
    layout = Layout(p, fit_intercept)
    for r in (1.5, 3.0, 7.0):
        bound = lp_sensitivity(r, p, fit_intercept)
        found = _attack(layout, r, np.random.default_rng(p), n_starts=8)
        assert found <= bound * (1 + 1e-9), (r, found, bound)
        assert found >= 0.85 * bound, (r, found, bound)
        # between the l1 and l_inf sensitivities, as every lr norm of one vector is
        assert 2.0 <= bound <= l1_sensitivity(p, fit_intercept)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize(("p", "k"), [(1, 2), (2, 5), (3, 3), (5, 12), (2, 40)])
def test_multioutput_l1_witness_attains_the_bound(p, k, fit_intercept):
    layout = Layout(p, fit_intercept, k)
    (x, y), (xp, yp) = l1_attaining_pair(p, fit_intercept, k)
    u = layout.contributions(x[None], y[None]) - layout.contributions(xp[None], yp[None])
    assert np.abs(u).sum() == pytest.approx(l1_sensitivity(p, fit_intercept, k), rel=1e-12)


def test_one_output_sensitivities_are_unchanged():
    for p in range(1, 8):
        for fi in (True, False):
            assert l1_sensitivity(p, fi, 1) == l1_sensitivity(p, fi)
            old = p * (p - 1) / 2 + (4 * p + 2 if fi else 3 * p + p / (2 * (p + 3)))
            assert l1_sensitivity(p, fi) == pytest.approx(old, rel=1e-14)
    assert l2_sensitivity(5) == 7.0 and Layout(5, True).dim == 26


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_multioutput_layout_pack_unpack(fit_intercept):
    rng = np.random.default_rng(1)
    n, p, k = 40, 3, 4
    layout = Layout(p, fit_intercept, k)
    x, y = rng.uniform(-1, 1, (n, p)), rng.uniform(-1, 1, (n, k))
    Z = np.column_stack([np.ones(n), x]) if fit_intercept else x
    T = layout.pack(Z.T @ Z, Z.T @ y)
    assert T.shape == (layout.dim,) == (layout.d_gram + (p + fit_intercept) * k,)
    assert np.allclose(T, layout.contributions(x, y).sum(axis=0))
    gram, xty = layout.unpack(T, n)
    assert np.allclose(gram, Z.T @ Z) and np.allclose(xty, Z.T @ y)


# ---------------------------------------------------------------------------------------------
# calibration of the released noise: ||V||_K ~ Gamma(d, scale = Delta_K / epsilon)


@pytest.mark.parametrize(("norm", "k"), [("l1", 3), ("l2", 2), (7.0, 3), (7.0, 1)])
def test_released_noise_has_the_calibrated_norm_law(norm, k):
    layout, eps = Layout(2, True, k), 1.3
    plan = make_plan(layout, eps, norm=norm, release="joint")
    rng = np.random.default_rng(7)
    V = np.array(
        [privatize_statistic(np.zeros(layout.dim), layout, plan, eps, 0.0, rng) for _ in range(600)]
    )
    radii = np.linalg.norm(V, ord=ORD.get(norm, norm), axis=1)
    delta = sensitivity(norm, 2, True, k)
    assert stats.kstest(radii, stats.gamma(layout.dim, scale=delta / eps).cdf).pvalue > 1e-3
    # control: the one-output sensitivity (too small for k > 1) or a 10% smaller one is rejected
    wrong = sensitivity(norm, 2, True, 1) if k > 1 else 0.9 * delta
    assert stats.kstest(radii, stats.gamma(layout.dim, scale=wrong / eps).cdf).pvalue < 1e-3


# ---------------------------------------------------------------------------------------------
# the estimator


def _linnerud():
    X, Y = load_linnerud(return_X_y=True)
    return X, Y, (X.min(0), X.max(0)), (Y.min(0), Y.max(0))


def test_linnerud_matches_sklearn_at_large_epsilon():
    X, Y, bx, by = _linnerud()
    ref = LinearRegression().fit(X, Y)
    m = FunctionalLinearRegression(
        epsilon=1e7, bounds_X=bx, bounds_y=by, postprocess="none", random_state=0
    ).fit(X, Y)
    assert m.coef_.shape == ref.coef_.shape == (3, 3)
    assert m.intercept_.shape == ref.intercept_.shape == (3,)
    assert np.allclose(m.coef_, ref.coef_, rtol=0, atol=1e-3)
    assert np.allclose(m.intercept_, ref.intercept_, rtol=0, atol=1e-2)
    pred = m.predict(X)
    assert pred.shape == (20, 3)
    assert np.allclose(pred, ref.predict(X), atol=0.05)
    assert np.allclose(pred, X @ m.coef_.T + m.intercept_)


def test_multioutput_columns_agree_with_single_output_fits():
    # a single-column 2-D y uses the same statistic (and noise) as the 1-D fit; repeated
    # columns give (nearly, at large epsilon) equal rows
    X, Y, bx, by = _linnerud()
    kw = dict(epsilon=3.0, bounds_X=bx, random_state=4)
    two = FunctionalLinearRegression(epsilon=1e7, bounds_X=bx, bounds_y=(0, 250)).fit(
        X, np.column_stack([Y[:, 0]] * 2)
    )
    assert np.allclose(two.coef_[0], two.coef_[1], atol=1e-3)
    one_1d = FunctionalLinearRegression(bounds_y=(0, 250), **kw).fit(X, Y[:, 0])
    one_2d = FunctionalLinearRegression(bounds_y=(0, 250), **kw).fit(X, Y[:, :1])
    assert one_1d.coef_.shape == (3,) and isinstance(one_1d.intercept_, float)
    assert one_2d.coef_.shape == (1, 3) and one_2d.intercept_.shape == (1,)
    assert np.allclose(one_2d.coef_[0], one_1d.coef_)
    assert np.allclose(one_2d.intercept_[0], one_1d.intercept_)
    assert one_2d.predict(X).shape == (20, 1) and one_1d.predict(X).shape == (20,)


def test_bounds_y_scalar_pair_equals_repeated_vectors():
    X, Y, bx, _ = _linnerud()
    kw = dict(epsilon=2.0, bounds_X=bx, random_state=1)
    a = FunctionalLinearRegression(bounds_y=(0, 250), **kw).fit(X, Y)
    b = FunctionalLinearRegression(bounds_y=([0, 0, 0], [250, 250, 250]), **kw).fit(X, Y)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.intercept_, b.intercept_)


def test_bad_bounds_y_length_fails_before_spending():
    X, Y, bx, _ = _linnerud()
    acc = BudgetAccountant(epsilon=10.0)
    m = FunctionalLinearRegression(bounds_X=bx, bounds_y=([0, 0], [1, 1]), accountant=acc)
    with pytest.raises(ValueError, match=r"bounds_y\[0\] .*shape \(2,\).* length 3"):
        m.fit(X, Y)
    with pytest.raises(ValueError, match="bounds_X"):
        FunctionalLinearRegression(bounds_X=([0, 0], [1, 1]), bounds_y=(0, 1)).fit(X, Y)
    assert acc.spent == (0.0, 0.0)


def test_hull_and_dask_reject_multioutput():
    X, Y, bx, by = _linnerud()
    with pytest.raises(ValueError, match="one output"):
        FunctionalLinearRegression(norm="hull", bounds_X=bx, bounds_y=by).fit(X, Y)
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="1-D"):
        FunctionalLinearRegression(bounds_X=bx, bounds_y=by).fit(
            da.from_array(X, chunks=10), da.from_array(Y, chunks=10)
        )


def test_fit_statistics_multioutput():
    X, Y, bx, by = _linnerud()
    st = sufficient_statistics(X, Y, bx, by)
    assert st.n_outputs == 3 and st.xty.shape == (4, 3)
    m = FunctionalLinearRegression(epsilon=1e7, postprocess="none", random_state=0)
    m.fit_statistics(st)
    assert m.coef_.shape == (3, 3)
    assert np.allclose(m.coef_, LinearRegression().fit(X, Y).coef_, atol=1e-3)


# ---------------------------------------------------------------------------------------------
# dtypes (sklearn's LinearRegression: coef_ takes X's float dtype; predict follows numpy)


@pytest.mark.parametrize("multi", [False, True])
def test_float32_follows_sklearn_dtypes(multi):
    X, Y, bx, by = _linnerud()
    y = Y if multi else Y[:, 0]
    X32 = X.astype(np.float32)
    m = FunctionalLinearRegression(
        epsilon=1e6, bounds_X=bx, bounds_y=by if multi else (0, 250), random_state=0
    ).fit(X32, y)
    ref = LinearRegression().fit(X32, y)
    assert m.coef_.dtype == ref.coef_.dtype == np.float32
    assert np.asarray(m.intercept_).dtype == np.asarray(ref.intercept_).dtype == np.float32
    assert m.predict(X32).dtype == ref.predict(X32).dtype == np.float32
    assert m.predict(X).dtype == ref.predict(X).dtype == np.float64
    m64 = FunctionalLinearRegression(
        epsilon=1e6, bounds_X=bx, bounds_y=by if multi else (0, 250), random_state=0
    ).fit(X, y)
    assert m64.coef_.dtype == np.float64 and m64.predict(X32).dtype == np.float64
    # same noise, same computation in float64: only the storage differs
    assert np.allclose(m.coef_, m64.coef_, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# lr norms


@pytest.mark.parametrize("norm", [7, 7.0, 1.5, np.float64(3.0)])
def test_lp_norm_is_accepted_and_calibrated(norm):
    X, Y, bx, by = _linnerud()
    m = FunctionalLinearRegression(epsilon=1e6, norm=norm, bounds_X=bx, bounds_y=by, random_state=0)
    m.fit(X, Y)
    assert m.norm_ == float(norm) and m.release_ == "joint" and m.mechanism_ == "knorm"
    assert m.sensitivity_[float(norm)] == lp_sensitivity(float(norm), 3, True, 3)
    assert np.allclose(m.coef_, LinearRegression().fit(X, Y).coef_, atol=0.05)


@pytest.mark.parametrize("norm", [0.5, -1, "l7", True, float("nan")])
def test_bad_norm_fails_before_spending(norm):
    X, Y, bx, by = _linnerud()
    acc = BudgetAccountant(epsilon=10.0)
    with pytest.raises(ValueError):
        FunctionalLinearRegression(norm=norm, bounds_X=bx, bounds_y=by, accountant=acc).fit(X, Y)
    assert acc.spent == (0.0, 0.0)


def test_norm_numbers_1_2_inf_are_the_named_norms():
    layout = Layout(2, True, 2)
    for num, name in ((1, "l1"), (2.0, "l2"), (np.inf, "linf")):
        assert make_plan(layout, 1.0, norm=num).norm == name
