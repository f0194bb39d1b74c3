"""bounds_X / bounds_y = "private" in the estimators (one helper: dpreg._bounds.fit_bounds)."""

import warnings

import numpy as np
import pytest

from dpreg import BudgetAccountant, FunctionalLinearRegression, ObjectivePerturbationLogistic
from dpreg._bounds import bounds_epsilon, fit_bounds, private_median_mad_unchecked
from dpreg.exceptions import PrivacyLeakWarning


def _raw_regression(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(18, 80, n), rng.normal(13, 3, n), rng.lognormal(2.5, 0.5, n)])
    y = 4000 + 300 * X[:, 0] + 2500 * X[:, 1] - 50 * X[:, 2] + rng.normal(0, 8000, n)
    return X, y


def _raw_classification(n=20000, seed=1):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(120, 15, n), rng.normal(0.3, 0.05, n)])
    z = (X[:, 0] - 120) / 15 + 2 * (X[:, 1] - 0.3) / 0.05
    y = (z + rng.logistic(size=n) > 0).astype(int)
    return X, y


MODELS = [
    (
        lambda **kw: FunctionalLinearRegression(bounds_X="private", bounds_y="private", **kw),
        _raw_regression,
    ),
    (
        lambda **kw: ObjectivePerturbationLogistic(bounds_X="private", classes=[0, 1], **kw),
        _raw_classification,
    ),
]


@pytest.mark.parametrize("make, data", MODELS)
def test_private_bounds_fit_is_one_ledger_entry_without_leak_warning(make, data):
    X, y = data()
    acc = BudgetAccountant(epsilon=5.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = make(epsilon=2.0, accountant=acc, random_state=0).fit(X, y)
    assert acc.ledger == [(2.0, 0.0)]  # bounds share + model share, reserved once
    # at n = 20,000 the private bounds cost little: >= 90 % of a fit with the data's range
    lo, hi = X.min(axis=0), X.max(axis=0)
    public = {"bounds_X": (lo, hi)}
    if isinstance(model, FunctionalLinearRegression):
        public["bounds_y"] = (y.min(), y.max())
    ref = model.set_params(accountant=None, **public).fit(X, y).score(X, y)
    assert model.set_params(**dict.fromkeys(public, "private")).fit(X, y).score(X, y) > 0.9 * ref


def test_private_bounds_are_close_to_the_data_and_reproducible():
    X, y = _raw_regression()
    a = FunctionalLinearRegression(bounds_X="private", bounds_y="private", epsilon=2.0)
    a = a.set_params(random_state=3).fit(X, y)
    b = FunctionalLinearRegression(bounds_X="private", bounds_y="private", epsilon=2.0)
    b = b.set_params(random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    lo, hi = a.bounds_X_
    med = np.median(X, axis=0)
    assert np.all((lo < med) & (med < hi))
    # features: median -/+ 2 MAD, about +/- 1.35 standard deviations of the normal column
    assert 3.3 < (hi[1] - lo[1]) / 2 < 4.8  # 2 MAD = 2 * 0.674 * sd (sd 3): about 4.0
    # the response: median -/+ 3 MAD
    ylo, yhi = a.bounds_y_
    expected = 3 * 0.674 * np.std(y)
    assert 0.8 * expected < (yhi[0] - ylo[0]) / 2 < 1.2 * expected


@pytest.mark.parametrize("make, data", MODELS)
@pytest.mark.parametrize(
    "params",
    [
        {"bounds_X": "privat"},
        {"bounds_share": 1.0},
        {"bounds_share": 0.0},
        {"bounds_share": float("nan")},
        {"bounds_share": True},
    ],
)
def test_bad_private_bounds_parameters_raise_before_spending(make, data, params):
    X, y = data(n=200)
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError):
        make(epsilon=1.0, accountant=acc, random_state=0).set_params(**params).fit(X, y)
    assert acc.ledger == []


@pytest.mark.parametrize("make, data", MODELS)
def test_nan_input_with_private_bounds_raises_before_spending(make, data):
    X, y = data(n=200)
    X[3, 1] = np.nan
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError):
        make(epsilon=1.0, accountant=acc, random_state=0).fit(X, y)
    assert acc.ledger == []


@pytest.mark.parametrize("make, data", MODELS)
def test_private_bounds_never_raise_after_spending_on_degenerate_data(make, data):
    """Constant, binary, huge and tiny columns: the fit always returns once it has spent."""
    X, y = data(n=60)
    X[:, 0] = 7.0 if isinstance(make(), FunctionalLinearRegression) else X[:, 0]
    X[:, -1] = np.where(np.arange(60) % 2, 1e12, -1e12)
    for seed in range(5):
        acc = BudgetAccountant(epsilon=10.0)
        model = make(epsilon=0.05, accountant=acc, random_state=seed).fit(X, y)
        assert np.all(np.isfinite(model.coef_))
        assert len(acc) == 1


def test_budget_parts_never_exceed_the_total():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    for _ in range(500):
        eps = float(rng.uniform(1e-3, 50.0))
        share = float(rng.uniform(1e-6, 1 - 1e-6)) if rng.random() < 0.5 else "auto"
        (bx,), left = fit_bounds([X[:, :1]], ["private"], eps, share, rng, ("bounds_X",))
        assert bounds_epsilon(share, eps, 50, 1) + left <= eps
        assert np.all(bx[1] > bx[0])


def test_public_and_none_bounds_pass_through_fit_bounds():
    X = np.zeros((5, 2))
    (bx, by), left = fit_bounds(
        [X, X[:, 0]], [(-1, 1), None], 2.0, 0.5, np.random.default_rng(0), ("bounds_X", "y")
    )
    assert left == 2.0 and by is None
    np.testing.assert_array_equal(bx[0], [-1.0, -1.0])


def _mad_gradient(values, m, thetas):
    """The MAD step's count gradient #{|x - m| <= theta} - n/2 on a grid of theta."""
    dev = np.abs(np.asarray(values) - m)
    return (dev[None, :] <= thetas[:, None]).sum(axis=1) - 0.5 * dev.size


def test_mad_step_sensitivity_adversarial_neighbours():
    """Replacing one record moves the MAD step's gradient by at most 1 at every theta.

    Adversarial search: the replaced record and its replacement are drawn from the data, the
    released centre, far outliers and points just around every threshold.
    """
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(300):
        n = int(rng.integers(2, 30))
        x = np.round(rng.normal(size=n) * rng.choice([0.1, 1, 100]), int(rng.integers(0, 3)))
        m = float(rng.choice(np.concatenate([x, [0.0, 1e9, -1e9]])))
        thetas = np.unique(np.concatenate([np.abs(x - m), np.abs(x - m) + 1e-9, [0.0, 1e10]]))
        base = _mad_gradient(x, m, thetas)
        candidates = np.concatenate([x, [m, m + 1e-12, -1e12, 1e12], m + thetas, m - thetas])
        for i in rng.choice(n, size=min(n, 3), replace=False):
            for new in rng.choice(candidates, size=20):
                x2 = x.copy()
                x2[i] = new
                worst = max(worst, np.max(np.abs(_mad_gradient(x2, m, thetas) - base)))
    assert worst == 1.0


def test_mad_step_control_catches_a_doubled_sensitivity():
    """Control: a neighbour notion that moves two records is caught by the same search."""
    x = np.array([0.0, 1.0, 2.0, 3.0])
    thetas = np.linspace(0, 5, 51)
    x2 = x.copy()
    x2[:2] = 10.0
    assert np.max(np.abs(_mad_gradient(x2, 1.5, thetas) - _mad_gradient(x, 1.5, thetas))) == 2.0


def test_median_mad_bounds_cover_binary_and_skewed_columns():
    rng = np.random.default_rng(0)
    n = 5000
    X = np.column_stack([rng.integers(1, 3, n), rng.lognormal(6, 0.7, n)])
    lo, hi = private_median_mad_unchecked(X, 2.0, (-1e9, 1e9), 3.0, rng)
    assert lo[0] < 1.0 + 1e-9 and hi[0] > 2.0  # both values of the binary column kept apart
    # the box is symmetric about the median: a long right tail is clipped beyond ~ its q85
    q10, q80, q95 = np.quantile(X[:, 1], [0.1, 0.8, 0.95])
    assert lo[1] < q10 and q80 < hi[1] < q95


def test_predict_outside_the_bounds_behaves_as_documented():
    """Public bounds: predict extrapolates on unclipped X. Released ("private") bounds: predict
    clips X into bounds_X_ and the output into bounds_y_, the map the model was fitted
    through (docs/private_workflow.md)."""
    X, y = _raw_regression(n=5000)
    model = FunctionalLinearRegression(epsilon=5.0, bounds_X="private", bounds_y="private")
    model.set_params(random_state=0).fit(X, y)
    (lo, hi), (ylo, yhi) = model.bounds_X_, model.bounds_y_
    far = np.array([[1000.0, 13.0, 10.0]])
    assert far[0, 0] > hi[0]
    inside = np.clip(far, lo, hi)
    expected = np.clip(inside[0] @ model.coef_ + model.intercept_, ylo[0], yhi[0])
    assert model.predict(far)[0] == pytest.approx(expected)
    assert model.predict(far)[0] != pytest.approx(far[0] @ model.coef_ + model.intercept_)
    public = FunctionalLinearRegression(epsilon=5.0, bounds_X=(lo, hi), bounds_y=(ylo, yhi))
    public.set_params(random_state=0).fit(X, y)
    assert public.predict(far)[0] == pytest.approx(far[0] @ public.coef_ + public.intercept_)
    clf = ObjectivePerturbationLogistic(epsilon=5.0, bounds_X="private", classes=[0, 1])
    Xc, yc = _raw_classification(n=5000)
    clf.set_params(random_state=0).fit(Xc, yc)
    farc = np.array([[1e4, 0.3]])
    clo, chi = clf.bounds_X_ if hasattr(clf, "bounds_X_") else clf.bounds_
    assert clf.decision_function(farc)[0] == pytest.approx(
        (np.clip(farc, clo, chi) @ clf.coef_.T + clf.intercept_)[0, 0]
    )
    pub = ObjectivePerturbationLogistic(epsilon=5.0, bounds_X=(clo, chi), classes=[0, 1])
    pub.set_params(random_state=0).fit(Xc, yc)
    assert pub.decision_function(farc)[0] == pytest.approx(
        (farc @ pub.coef_.T + pub.intercept_)[0, 0]
    )


def test_auto_share_depends_on_public_quantities_only():
    # more columns or fewer rows -> more of epsilon on the bounds, within [0.05, 0.5]
    assert bounds_epsilon("auto", 1.0, 21116, 10) == pytest.approx(600 * 10 / 21116)
    assert bounds_epsilon("auto", 2.0, 300, 11) == pytest.approx(1.0)  # capped at half
    assert bounds_epsilon("auto", 8.0, 10**7, 3) == pytest.approx(0.4)  # floor 0.05
    assert bounds_epsilon(0.3, 2.0, 10, 1) == pytest.approx(0.6)
    X, y = _raw_regression(n=400)
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError):
        FunctionalLinearRegression(bounds_X="private", bounds_share="autox", accountant=acc).fit(
            X, y
        )
    assert acc.ledger == []


def test_column_epsilons_add_up_and_favour_the_target():
    from dpreg._bounds import column_epsilons

    for eps_b, n, m in [(0.5, 331, 11), (2.0, 331, 11), (0.3, 21116, 10), (1.0, 50, 3)]:
        w = column_epsilons(eps_b, n, [False] * (m - 1) + [True])
        assert w.sum() == pytest.approx(eps_b) and np.all(w > 0)
        assert w[-1] >= w[0] - 1e-12 and w[-1] <= eps_b / 2 + 1e-12
    assert column_epsilons(1.0, 10, [False] * 4).tolist() == [0.25] * 4
    assert column_epsilons(1.0, 10, [True] * 2).tolist() == [0.5] * 2
