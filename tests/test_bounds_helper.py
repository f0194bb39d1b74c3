"""dpreg._bounds.PublicBox: the one clip / scale / unscale helper of the estimators and scalers."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from dpreg import (
    BudgetAccountant,
    FunctionalLinearRegression,
    KNGQuantileRegressor,
    ObjectivePerturbationLogistic,
)
from dpreg._bounds import (
    UNSCALE_LIMIT,
    PublicBox,
    safe_inverse,
    unscale_cap,
    unscale_coefficients,
)
from dpreg._validation import scale_to_unit
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.linear_model._quantile_core import scale_features
from dpreg.preprocessing import PrivateBounds, PrivateMinMaxScaler, PrivateStandardScaler

TINY = np.finfo(float).tiny


@pytest.mark.parametrize(
    "bounds",
    [
        (0.0, np.nan),
        (-np.inf, 1.0),
        (2.0, 1.0),
        ([0.0, 0.0, 0.0], [1.0, 1.0]),
        ([[0.0, 0.0]], [1.0, 1.0]),
        "private",
        (0.0, 1.0, 2.0),
        ("a", 1.0),
    ],
)
def test_validated_rejects_bad_bounds(bounds):
    with pytest.raises(ValueError):
        PublicBox.validated(bounds, 2)


def test_validated_reads_missing_bounds_from_data_with_a_warning():
    X = np.array([[1.0, -2.0], [3.0, 5.0]])
    with pytest.warns(PrivacyLeakWarning):
        box = PublicBox.validated(None, 2, X=X)
    assert box.lower.tolist() == [1.0, -2.0] and box.upper.tolist() == [3.0, 5.0]
    with pytest.raises(ValueError):
        PublicBox.validated(None, 2)  # no data, no bounds


def test_to_unit_is_exactly_in_the_unit_box_and_handles_degenerate_columns():
    rng = np.random.default_rng(0)
    lower = np.array([16.0, -3.0, 5.0, 0.0])
    upper = np.array([16.001, 7.0, 5.0, 5e-324])  # tiny width, ordinary, constant, subnormal
    X = np.r_[rng.uniform(-20, 30, size=(2000, 4)), [lower], [upper]]
    for symmetric in (False, True):
        box = PublicBox(lower, upper, symmetric)
        Z = box.to_unit(X)
        assert np.all(np.isfinite(Z)) and np.all(np.abs(Z) <= 1.0)
        assert np.all(Z[:, 3] == 0.0)  # subnormal width: constant, not NaN
        assert not box.active[3] and box.active[0]
        back = box.from_unit(Z)
        inside = box.clip(X)
        np.testing.assert_allclose(back[:, :2], inside[:, :2], rtol=0, atol=1e-9 * 16)
    # the affine map sends the box onto [-1, 1]; the symmetric one keeps the origin
    assert PublicBox(lower, upper).to_unit(lower[None, :])[0, :2].tolist() == [-1.0, -1.0]
    assert PublicBox(np.array([-2.0]), np.array([4.0]), True).to_unit([[0.0]])[0, 0] == 0.0


def test_safe_inverse():
    assert safe_inverse(np.array([2.0, 0.0, 5e-324, TINY])).tolist() == [0.5, 0.0, 0.0, 0.0]


def test_scale_to_unit_is_the_helper():
    rng = np.random.default_rng(1)
    lo, hi = np.array([-1.0, 2.0]), np.array([3.0, 2.5])
    X = rng.uniform(-5, 5, size=(100, 2))
    assert np.array_equal(scale_to_unit(X, lo, hi), PublicBox(lo, hi).to_unit(X))


def test_unscale_matches_a_fit_in_user_units_multi_output_and_without_intercept():
    rng = np.random.default_rng(2)
    x_box = PublicBox(np.array([0.0, -50.0]), np.array([10.0, 50.0]))
    y_box = PublicBox(np.array([-20.0, -5.0]), np.array([30.0, 5.0]))
    X = rng.uniform(x_box.lower, x_box.upper, size=(300, 2))
    B = np.array([[0.5, -0.1], [0.2, 0.03]])
    Y = np.array([3.0, -1.0]) + X @ B.T + rng.normal(scale=0.01, size=(300, 2))
    W = (Y - y_box.mid) / y_box.half
    unit = LinearRegression().fit(x_box.to_unit(X), W)
    coef, intercept = x_box.unscale(unit.coef_, unit.intercept_, y_box)
    ref = LinearRegression().fit(X, Y)
    np.testing.assert_allclose(coef, ref.coef_, atol=1e-10)
    np.testing.assert_allclose(intercept, ref.intercept_, atol=1e-9)
    # without intercept: symmetric map, intercept 0
    sym = PublicBox(np.array([-4.0, 1.0]), np.array([2.0, 8.0]), symmetric=True)
    Xs = rng.uniform(sym.lower, sym.upper, size=(200, 2))
    ys = Xs @ np.array([1.5, -0.5])
    fit = LinearRegression(fit_intercept=False).fit(sym.to_unit(Xs), ys)
    coef, intercept = sym.unscale(fit.coef_[None, :])
    np.testing.assert_allclose(coef[0], [1.5, -0.5], atol=1e-12)
    assert intercept.tolist() == [0.0]
    # a constant column gets a zero coefficient, never inf/NaN
    c, _ = unscale_coefficients(np.array([[1.0, 2.0]]), np.array([0.0]), [0.0, 1.0], [1.0, 0.0])
    assert c.tolist() == [[1.0, 0.0]]


def test_estimators_use_the_helper_bit_for_bit():
    """The logistic and KNG models' scaled data and coefficients are the helper's, exactly;
    the functional model's statistics use the helper's map and unscale."""
    rng = np.random.default_rng(3)
    X = rng.uniform([-3, 10], [5, 20], size=(400, 2))
    y = (X[:, 0] > 1).astype(int)
    bx = ([-3.0, 10.0], [5.0, 20.0])
    for fi in (True, False):
        box = PublicBox(np.array(bx[0]), np.array(bx[1]), symmetric=not fi)
        m = ObjectivePerturbationLogistic(
            epsilon=1.0, bounds_X=bx, classes=[0, 1], fit_intercept=fi, random_state=0
        ).fit(X, y)
        assert np.array_equal(m._scale(X, *m.bounds_), box.to_unit(X))
        t = m.theta_
        coef, icpt = box.unscale(t[:, 1:], t[:, 0]) if fi else box.unscale(t)
        assert np.array_equal(m.coef_, coef) and np.array_equal(m.intercept_, icpt)
        Z, mid, half = scale_features(X, *bx, fi)
        assert np.array_equal(Z, box.to_unit(X)) and np.array_equal(half, box.half)
        f = FunctionalLinearRegression(
            epsilon=1.0, bounds_X=bx, bounds_y=(-5, 5), fit_intercept=fi, random_state=0
        ).fit(X, y.astype(float))
        ns = f.noisy_statistics_
        assert np.array_equal(ns.x_offset, box.mid) and np.array_equal(ns.x_scale, box.half)


def test_scalers_clip_with_the_helper():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 2))
    bx = ([-1.0, -0.5], [1.0, 0.5])
    box = PublicBox.validated(bx, 2)
    pb = PrivateBounds(epsilon=1.0, bounds=bx, random_state=0).fit(X)
    np.testing.assert_array_equal(pb.transform(X), box.clip(X))
    mm = PrivateMinMaxScaler(epsilon=1.0, bounds=bx, random_state=0).fit(X)
    np.testing.assert_allclose(mm.inverse_transform(mm.transform(X)), box.clip(X), atol=1e-15)
    assert np.array_equal(mm.lower_, box.lower) and np.array_equal(mm.upper_, box.upper)


@pytest.mark.parametrize(
    "make",
    [
        lambda acc, b: FunctionalLinearRegression(bounds_X=b, bounds_y=(-1, 1), accountant=acc),
        lambda acc, b: ObjectivePerturbationLogistic(bounds_X=b, classes=[0, 1], accountant=acc),
        lambda acc, b: KNGQuantileRegressor(bounds_X=b, bounds_y=(-1, 1), accountant=acc),
        lambda acc, b: PrivateStandardScaler(bounds=b, accountant=acc),
        lambda acc, b: PrivateMinMaxScaler(bounds=b, accountant=acc),
    ],
)
@pytest.mark.parametrize("bounds", [(1.0, 0.0), (0.0, np.inf), ([0, 0, 0], [1, 1, 1])])
def test_bad_bounds_raise_before_spending(make, bounds):
    rng = np.random.default_rng(5)
    X, y = rng.uniform(size=(50, 2)), rng.integers(0, 2, size=50)
    acc = BudgetAccountant(epsilon=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        with pytest.raises(ValueError):
            make(acc, bounds).fit(X, y)
    assert acc.ledger == []


# -- the map back to the user's units must not overflow (s22 audits: functional F5, KNG F2)
def test_unscale_cap_keeps_every_model_finite():
    # the worst model within the cap: every |b| = cap with the signs that add up
    rng = np.random.default_rng(5)
    for _ in range(300):
        p = int(rng.integers(1, 6))
        lo = rng.choice([-1.0, 1.0], p) * 10.0 ** rng.uniform(-300, 300, p)
        hi = lo + 10.0 ** rng.uniform(-300, 300, p)
        hi = np.where(np.isfinite(hi), hi, np.finfo(float).max)
        box = PublicBox(lo, hi)
        y_map = (float(rng.choice([-1, 1]) * 10.0 ** rng.uniform(-300, 300)),
                 float(10.0 ** rng.uniform(-300, 300)))  # fmt: skip
        cap = unscale_cap(box.mid, box.half, y_map)
        if cap == 0.0:
            continue
        coef = cap * -np.sign(box.mid)[None, :]
        coef[coef == 0] = cap
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            c, b = unscale_coefficients(coef, np.array([cap]), box.mid, box.half, y_map)
        assert np.all(np.abs(c) <= UNSCALE_LIMIT * (1 + 1e-12))
        assert np.all(np.isfinite(b)) and np.all(np.abs(b) <= UNSCALE_LIMIT * (1 + 1e-12))


def _functional_report_data():
    rng = np.random.default_rng(0)
    return rng.uniform(0, 1e-300, (50, 1)), rng.uniform(-1e300, 1e300, 50)


def test_functional_refuses_overflowing_public_boxes_before_the_spend():
    # the report's settings: a unit slope is 1e300 / 5e-301 = 2e600 in the user's units
    X, y = _functional_report_data()
    acc = BudgetAccountant(epsilon=1e6, delta=0.9)
    model = FunctionalLinearRegression(
        epsilon=1.0, bounds_X=(0, 1e-300), bounds_y=(-1e300, 1e300), accountant=acc,
        random_state=0,
    )  # fmt: skip
    with pytest.raises(ValueError, match="overflow"):
        model.fit(X, y)
    assert acc.ledger == []
    from dpreg.linear_model.functional import sufficient_statistics  # noqa: PLC0415

    stats = sufficient_statistics(X, y, (0, 1e-300), (-1e300, 1e300))
    with pytest.raises(ValueError, match="overflow"):
        FunctionalLinearRegression(epsilon=1.0, accountant=acc).fit_statistics(stats)
    assert acc.ledger == []


def test_functional_data_read_extreme_box_fits_without_warning():
    # data-read bounds (warned before the spend) are not refused; after the spend the
    # solution is clipped to the size that unscales to finite values: no RuntimeWarning
    X, y = _functional_report_data()
    for seed in range(3):
        acc = BudgetAccountant(epsilon=1e6, delta=0.9)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            model = FunctionalLinearRegression(epsilon=1.0, accountant=acc, random_state=seed)
            model.fit(X, y)
        assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.intercept_)


def test_kng_refuses_overflowing_public_boxes_before_the_spend():
    # the report's settings: theta up to 1e176 over a half-width 1e-182
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1e-182, 1e-182, (30, 1)), rng.standard_normal(30)
    acc = BudgetAccountant(10.0)
    model = KNGQuantileRegressor(
        bounds_X=(-1e-182, 1e-182), coef_bounds=1e176, random_state=1, accountant=acc
    )
    with pytest.raises(ValueError, match="overflow"):
        model.fit(X, y)
    assert acc.ledger == []


def test_kng_released_box_overflow_is_clipped_without_warning():
    # a released response box is known only after the spend: the map back is fed theta
    # clipped to the size that stays finite (post-processing), so nothing warns or is inf
    rng = np.random.default_rng(2)
    X, y = rng.uniform(-1e-305, 1e-305, (200, 1)), 1e6 * rng.standard_normal(200)
    acc = BudgetAccountant(10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = KNGQuantileRegressor(
            bounds_X=(-1e-305, 1e-305), bounds_y="private", random_state=0, accountant=acc
        ).fit(X, y)
    assert np.all(np.isfinite(model.coef_)) and np.isfinite(model.intercept_)
