"""Hostile *public* parameters under warnings-as-errors (docs/floating_point.md, section 5c).

``tests/test_hostile_warnings.py`` feeds hostile *data*; here the data are ordinary and the
public inputs are hostile: bounds at +-1.7e308, bounds whose width overflows
(``upper - lower = inf``), bounds 1e-320 wide (a subnormal half-width), epsilon 1e300 or
1e-300, delta 1e-320, public scales near 1e308 or 1e-310, ``candidate_range`` extremes and
denormal sample weights. Contract (the same ``check_contract``): with every warning an
error and an accountant, the call is either refused before the charge with a clear
``ValueError`` / ``TypeError``, or it finishes with finite releases (the projection median
may also end in its private ``PTRTestFailedError``).
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from test_hostile_warnings import check_contract  # the same contract as for hostile data

import dpreg.tools as tools
from dpreg import (
    BudgetAccountant,
    FunctionalLinearRegression,
    KNGQuantileRegressor,
    ObjectivePerturbationLogistic,
    ObjectivePerturbationQuantileRegressor,
    PrivateProjectionMedian,
)
from dpreg._kng_exact import MIN_BOX_WIDTH, BoxSampler
from dpreg._kng_grid import EPSILON_MIN as KNG_EPSILON_MIN
from dpreg._kng_grid import float_scale
from dpreg._validation import EPSILON_MAX, RELEASE_EPSILON_MIN
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.linear_model.functional import EPSILON_MIN as F_EPSILON_MIN
from dpreg.location._trimmed import _norm2
from dpreg.noise import GaussianMechanism, analytic_gaussian_sigma
from dpreg.noise.balls import make_ball
from dpreg.noise.classic import GAUSSIAN_DELTA_MIN, gaussian_delta_exact
from dpreg.preprocessing import (
    PrivateBounds,
    PrivateMinMaxScaler,
    PrivateStandardScaler,
    private_bounds,
)
from dpreg.tools._moments import var_sensitivity

BIG = 1.7e308
N, P = 40, 2

# every hostile public interval; "overflow" has upper - lower = inf
INTERVALS = {
    "max": (-BIG, BIG),
    "overflow": (-1e308, 1e308),
    "positive-max": (0.0, BIG),
    "far-off": (1e308, BIG),
    "subnormal": (0.0, 1e-320),
    "subnormal-centred": (-5e-321, 5e-321),
    "one-ulp": (1.0, float(np.nextafter(1.0, 2.0))),
}
EPSILONS = {
    "eps-huge": 1e300,
    "eps-tiny": 1e-300,
    "eps-max": BIG,
    "eps-top": EPSILON_MAX,
    "eps-floor": 1e-12,
}


def ordinary(n=N, p=P, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, p))
    return X, 0.5 * X[:, 0] + 0.1 * rng.standard_normal(n)


def _fit(cls, classifier=False, weights=None, **kw):
    def call(acc):
        X, y = ordinary()
        if classifier:
            y = np.arange(N) % 2
        est = cls(random_state=0, accountant=acc, **kw)
        if weights is not None:
            return lambda: est.fit(X, y, sample_weight=weights)
        return lambda: est.fit(X, y)

    return call


F, L, K, O = (
    FunctionalLinearRegression,
    ObjectivePerturbationLogistic,
    KNGQuantileRegressor,
    ObjectivePerturbationQuantileRegressor,
)
ONE = (-1.0, 1.0)
BASE = {
    "functional": (F, dict(bounds_X=ONE, bounds_y=ONE), False),
    "logistic": (L, dict(bounds_X=ONE, classes=[0, 1]), True),
    "kng": (K, dict(bounds_X=ONE, bounds_y=ONE, n_chains=1), False),
    "opquantile": (O, dict(bounds_X=ONE, bounds_y=ONE), False),
}
DENORMAL_W = {
    "w-denormal": np.full(N, 5e-324),
    "w-mixed": np.where(np.arange(N) % 2 == 0, 5e-324, 1.0),
    "w-tiny": np.full(N, 1e-310),
}


def _estimator_cases():
    cases = {}
    for name, (cls, base, clf) in BASE.items():
        for iname, interval in INTERVALS.items():
            cases[f"{name}-bounds_X-{iname}"] = _fit(cls, clf, **{**base, "bounds_X": interval})
            if "bounds_y" in base:
                cases[f"{name}-bounds_y-{iname}"] = _fit(cls, clf, **{**base, "bounds_y": interval})
        for ename, eps in EPSILONS.items():
            cases[f"{name}-{ename}"] = _fit(cls, clf, **{**base, "epsilon": eps})
        if cls is not O:  # the only estimator without sample_weight
            for wname, w in DENORMAL_W.items():
                cases[f"{name}-{wname}"] = _fit(cls, clf, weights=w, **base)
    gauss = dict(BASE["functional"][1], mechanism="gaussian")
    for d in (1e-320, 5e-324, 1e-300):
        cases[f"functional-gauss-delta-{d:g}"] = _fit(F, delta=d, **gauss)
    cases["functional-gauss-eps-tiny"] = _fit(F, delta=1e-5, **{**gauss, "epsilon": 1e-300})
    cases["functional-l2-max"] = _fit(F, norm="l2", bounds_X=(-BIG, BIG), bounds_y=(-BIG, BIG))
    cases["functional-inference-max"] = _fit(
        F, inference_share=0.1, bounds_X=(-BIG, BIG), bounds_y=(-BIG, BIG)
    )
    cases["logistic-l2-max"] = _fit(L, True, norm="l2", bounds_X=(-BIG, BIG), classes=[0, 1])
    cases["kng-l2-max"] = _fit(K, norm="l2", n_chains=1, bounds_X=(-BIG, BIG), bounds_y=ONE)
    return cases


N_MEDIAN = 200


def _median(**kw):
    def call(acc):
        X, _ = ordinary(n=N_MEDIAN)
        est = PrivateProjectionMedian(random_state=0, accountant=acc, **{"epsilon": 50.0, **kw})
        return lambda: est.fit(X)

    return call


def _median_cases():
    cases = {}
    for v in (BIG, 1e308, 1e-310, 5e-324):
        cases[f"median-scale-{v:g}"] = _median(scale=[v, v])
        cases[f"median-linf-scale-{v:g}"] = _median(norm="linf", scale=[v, v])
        cases[f"median-trim-{v:g}"] = _median(scale=[1.0, 1.0], trim_scale=[v, v])
    cases["median-scale-mixed"] = _median(scale=[BIG, 1e-310])
    for ename, eps in EPSILONS.items():
        cases[f"median-{ename}"] = _median(epsilon=eps)
    for d in (1e-320, 5e-324):
        cases[f"median-delta-{d:g}"] = _median(delta=d)
    return cases


def _pre(cls, **kw):
    def call(acc):
        X, _ = ordinary()
        return lambda: cls(random_state=0, accountant=acc, **kw).fit(X)

    return call


def _tool(fn, *args, **kw):
    def call(acc):
        X, _ = ordinary()
        return lambda: fn(X[:, 0], *args, random_state=0, accountant=acc, **kw)

    return call


def _private_bounds(epsilon=1.0, **kw):
    def call(acc):
        X, _ = ordinary()
        return lambda: private_bounds(X, epsilon, random_state=0, accountant=acc, **kw)

    return call


def _stat_cases():
    cases = {}
    for iname, iv in INTERVALS.items():
        cases[f"PrivateBounds-candidate-{iname}"] = _pre(PrivateBounds, candidate_range=iv)
        cases[f"private_bounds-candidate-{iname}"] = _private_bounds(candidate_range=iv)
        cases[f"MinMax-bounds-{iname}"] = _pre(PrivateMinMaxScaler, bounds=iv)
        cases[f"MinMax-feature_range-{iname}"] = _pre(
            PrivateMinMaxScaler, bounds=ONE, feature_range=iv
        )
        cases[f"Standard-bounds-{iname}"] = _pre(PrivateStandardScaler, bounds=iv)
        cases[f"Standard-candidate-{iname}"] = _pre(PrivateStandardScaler, candidate_range=iv)
        for fn in (tools.mean, tools.var, tools.std, tools.median):
            cases[f"{fn.__name__}-{iname}"] = _tool(fn, bounds=iv)
        cases[f"quantile-{iname}"] = _tool(tools.quantile, [0.1, 0.9], bounds=iv)
        cases[f"quantile-asinh-{iname}"] = _tool(
            tools.quantile, 0.5, bounds=iv, measure="asinh", asinh_scale=1e-310
        )
        cases[f"histogram-{iname}"] = _tool(tools.histogram, bins=4, range=iv)
    for s in (BIG, 1e-310, 5e-324):
        cases[f"quantile-asinh-scale-{s:g}"] = _tool(
            tools.quantile, 0.5, bounds=(-BIG, BIG), measure="asinh", asinh_scale=s
        )
        cases[f"private_bounds-asinh-{s:g}"] = _private_bounds(asinh_scale=s)
    cases["histogram-edges-max"] = _tool(tools.histogram, bins=[-BIG, 0.0, BIG])
    cases["histogram-edges-subnormal"] = _tool(tools.histogram, bins=[0.0, 5e-324, 1e-323])
    for ename, eps in EPSILONS.items():
        cases[f"PrivateBounds-{ename}"] = _pre(PrivateBounds, epsilon=eps)
        cases[f"Standard-{ename}"] = _pre(PrivateStandardScaler, epsilon=eps, bounds=ONE)
        cases[f"private_bounds-{ename}"] = _private_bounds(epsilon=eps)
        for fn in (tools.mean, tools.var, tools.median):
            cases[f"{fn.__name__}-{ename}"] = _tool(fn, epsilon=eps, bounds=ONE)
        cases[f"histogram-{ename}"] = _tool(tools.histogram, bins=4, range=ONE, epsilon=eps)
    return cases


ESTIMATORS = _estimator_cases()
MEDIANS = _median_cases()
STATS = _stat_cases()
# (name) -> reason: failures in code not mended here; strict, so a fix turns them into errors
XFAIL: dict[str, str] = {}


def _params(table):
    return [
        pytest.param(
            name,
            id=name,
            marks=[pytest.mark.xfail(strict=True, reason=XFAIL[name])] if name in XFAIL else [],
        )
        for name in table
    ]


@pytest.mark.parametrize("name", _params(ESTIMATORS))
def test_estimators_with_hostile_public_parameters(name):
    acc = BudgetAccountant(delta=0.5)
    check_contract(ESTIMATORS[name](acc), acc)


@pytest.mark.parametrize("name", _params(MEDIANS))
def test_median_with_hostile_public_parameters(name):
    acc = BudgetAccountant(delta=0.5)
    check_contract(MEDIANS[name](acc), acc, ptr_ok=True)


@pytest.mark.parametrize("name", _params(STATS))
def test_preprocessing_and_statistics_with_hostile_public_parameters(name):
    acc = BudgetAccountant(delta=0.5)
    check_contract(STATS[name](acc), acc)


# ------------------------------------------------------------------ the rules that close them
# Each rule: refused before any spend just outside the supported range (the accountant's
# ledger stays empty), a finite release just inside it (docs/floating_point.md, section 5c).
def _refused(make, match):
    acc = BudgetAccountant(delta=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=match):
            make(acc)()
    assert len(acc.ledger) == 0


def _released(make, ptr_ok=False):
    acc = BudgetAccountant(delta=0.5)
    assert check_contract(make(acc), acc, ptr_ok=ptr_ok) in ("ok", "ptr-failed")
    assert len(acc.ledger) == 1


def test_functional_epsilon_min():
    fit = dict(BASE["functional"][1])
    _refused(_fit(F, epsilon=float(np.nextafter(F_EPSILON_MIN, 0.0)), **fit), "at least 1e-100")
    _released(_fit(F, epsilon=F_EPSILON_MIN, **fit))
    gauss = dict(fit, mechanism="gaussian", delta=1e-5)
    _released(_fit(F, epsilon=F_EPSILON_MIN, **gauss))


def test_gaussian_delta_min():
    below = float(np.nextafter(GAUSSIAN_DELTA_MIN, 0.0))
    gauss = dict(BASE["functional"][1], mechanism="gaussian")
    _refused(_fit(F, delta=below, **gauss), "at least 1e-300")
    _released(_fit(F, delta=GAUSSIAN_DELTA_MIN, **gauss))
    with pytest.raises(ValueError, match="at least 1e-300"):
        GaussianMechanism(1.0, below, 1.0)
    # the calibration at the limit is exact and minimal (within the 2^-40 check steps)
    sigma = analytic_gaussian_sigma(1.0, GAUSSIAN_DELTA_MIN, 1.0)
    assert gaussian_delta_exact(sigma, 1.0, 1.0) <= GAUSSIAN_DELTA_MIN
    assert gaussian_delta_exact(sigma * (1 - 1e-9), 1.0, 1.0) > GAUSSIAN_DELTA_MIN


@pytest.mark.parametrize(
    "epsilon, delta, sensitivity",
    [(1.0, 1e-5, 1e-310), (1e-5, 1e-5, 1e305)],  # sigma below / above the float range
)
def test_gaussian_sigma_out_of_range_is_a_value_error(epsilon, delta, sensitivity):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # was an exp overflow / underflow warning
        with pytest.raises(ValueError, match="no float sigma"):
            analytic_gaussian_sigma(epsilon, delta, sensitivity)


def test_kng_epsilon_min():
    kng = dict(BASE["kng"][1])
    _refused(_fit(K, epsilon=KNG_EPSILON_MIN, **kng), "must exceed 4e-09")
    _refused(_fit(K, epsilon=KNG_EPSILON_MIN, norm="l2", **kng), "must exceed 4e-09")
    _released(_fit(K, epsilon=float(np.nextafter(KNG_EPSILON_MIN, 1.0)), **kng))
    with pytest.raises(ValueError, match="must exceed"):
        float_scale(KNG_EPSILON_MIN, 1.0, make_ball("linf", 2), 100, [1.0, 1.0])


@pytest.mark.parametrize("norm", ["linf", "l2", 1.01])
def test_kng_min_box_width(norm):
    kng = dict(BASE["kng"][1], norm=norm)
    below = float(np.nextafter(MIN_BOX_WIDTH, 0.0))
    _refused(_fit(K, **{**kng, "bounds_y": (0.0, below)}), "at least 3.44e-136")
    _refused(_fit(K, **{**kng, "coef_bounds": below / 2}), "at least 3.44e-136")
    # the intercept spans the response box, the slopes half of it on either side
    _released(_fit(K, **{**kng, "bounds_y": (0.0, MIN_BOX_WIDTH)}))
    _released(_fit(K, **{**kng, "bounds_y": (-MIN_BOX_WIDTH / 2, MIN_BOX_WIDTH / 2)}))


def test_kng_released_box_is_widened_not_refused():
    """After the spend ``_domain`` gets a released response box: a too narrow one is widened
    (post-processing), never refused."""
    est = K(bounds_X=ONE, bounds_y="private")
    y = np.zeros(5)
    lower, upper = est._domain(y, 2, np.ones(2, dtype=bool), bounds_y=(0.0, 1e-320))
    assert np.all(upper - lower >= MIN_BOX_WIDTH)
    assert np.all(lower <= 0.0) and upper[0] >= 1e-320


def test_dual_norm_of_tiny_distances():
    """The loss-gap bound's dual norm is an upper bound also where the plain l_q norm
    underflows (control: the plain value is 0 or far too small)."""
    rows = np.array([[3e-200, 4e-200], [1e-4, 1e-4], [0.3, 0.4]])
    for q, exact in [
        (2.0, [5e-200, 2**0.5 * 1e-4, 0.5]),
        (101.0, [None, 2 ** (1 / 101) * 1e-4, None]),
    ]:
        out = BoxSampler._dual_upper(SimpleNamespace(_dual_ord=q), rows)
        plain = np.linalg.norm(rows, ord=q, axis=1) if q == 2.0 else None
        for i, value in enumerate(exact):
            if value is not None:
                assert value <= out[i] <= value * (1 + 1e-9)
        if q == 2.0:
            assert plain[0] == 0.0  # control: the sum of squares underflowed
            assert out[2] == plain[2] * (1.0 + 1e-10)  # ordinary rows bit for bit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.linalg.norm(rows[1:2], ord=101.0, axis=1)[0] == 0.0  # control


def test_median_trim_scale_rules():
    below = float(np.nextafter(np.finfo(float).tiny, 0.0))
    _refused(_median(scale=[1.0, 1.0], trim_scale=[below, below]), "normal floats")
    # a tiny but normal trim scale: the noisy shift's norm (about 1e200 in trim units) is
    # computed rescaled after the spend instead of overflowing
    for t in (1e-200, 1e-300):
        _released(_median(scale=[1.0, 1.0], trim_scale=[t, t]), ptr_ok=True)
    # no budget split has a positive temperature: a ValueError (was a TypeError)
    _refused(_median(epsilon=1e-12), "epsilon is too small")
    _refused(_median(epsilon=1e-12, trim_scale=[1.0, 1.0]), "epsilon is too small")


def test_trimmed_norm_is_total_and_plain_on_ordinary_vectors():
    v = np.array([3e300, -4e300])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _norm2(v) == pytest.approx(5e300, rel=1e-15)
    w = np.array([0.3, -1.7, 2.5])
    assert _norm2(w) == float(np.linalg.norm(w))


def test_asinh_quantile_on_a_collapsed_interval_releases_its_midpoint():
    lower, upper = 1.0, float(np.nextafter(1.0, 2.0))
    acc = BudgetAccountant(delta=0.5)
    X, _ = ordinary()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q = tools.quantile(
            X[:, 0], 0.5, bounds=(lower, upper), measure="asinh", asinh_scale=1e-310,
            random_state=0, accountant=acc,
        )  # fmt: skip
    assert q == 0.5 * lower + 0.5 * upper and len(acc.ledger) == 1


def test_functional_weighted_ridge_share_leaves_a_positive_statistic_share():
    """Found here: ``COUNT_SHARE + ridge_share >= 1`` made the statistic's epsilon negative,
    refused by the K-norm mechanism AFTER the spend; now before it."""
    fit = dict(BASE["functional"][1], ridge="adaptive")
    w = np.full(N, 0.5)
    _refused(_fit(F, weights=w, ridge_share=0.97, **fit), "ridge_share must be < 0.95")
    _released(_fit(F, weights=w, ridge_share=0.94, **fit))
    _released(_fit(F, ridge_share=0.97, **fit))  # unweighted: no count share, no limit


# --------------------------------------- statistics and transformers (audit s21, finding 3)
def _statistic_calls(eps):
    """Every tools function and transformer at budget ``eps`` (private bounds where the
    transformer has them, so the budget is split)."""
    return {
        "mean": _tool(tools.mean, epsilon=eps, bounds=ONE),
        "var": _tool(tools.var, epsilon=eps, bounds=ONE),
        "quantile": _tool(tools.quantile, [0.2, 0.8], epsilon=eps, bounds=ONE),
        "histogram": _tool(tools.histogram, bins=4, range=ONE, epsilon=eps),
        "private_bounds": _private_bounds(epsilon=eps),
        "PrivateBounds": _pre(PrivateBounds, epsilon=eps),
        "Standard-public": _pre(PrivateStandardScaler, epsilon=eps, bounds=ONE),
        "Standard-private": _pre(PrivateStandardScaler, epsilon=eps),
        "MinMax-private": _pre(PrivateMinMaxScaler, epsilon=eps),
    }


@pytest.mark.parametrize("name", list(_statistic_calls(1.0)))
def test_statistics_release_epsilon_min(name):
    """Below 1e-100 (and at the audit's 1e-320 and 5e-324, which were charged and then raised
    inside the mechanism: a scale of inf, or a share of 0) refused before the spend; at the
    floor, a finite release."""
    for eps in (float(np.nextafter(RELEASE_EPSILON_MIN, 0.0)), 1e-320, 5e-324):
        _refused(_statistic_calls(eps)[name], "at least 1e-100")
    _released(_statistic_calls(RELEASE_EPSILON_MIN)[name])


def test_standard_scaler_budget_shares_are_checked_before_the_spend():
    """A tiny bounds_share makes the bounds' share subnormal (it reached the quantile
    sampler after the charge) or their noise scale astronomical: refused first."""
    _refused(_pre(PrivateStandardScaler, epsilon=1e-10, bounds_share=1e-300), "underflows")
    _refused(_pre(PrivateStandardScaler, epsilon=1e-90, bounds_share=1e-150), "noise scale")
    _released(_pre(PrivateStandardScaler, epsilon=1e-90, bounds_share=0.5))


def test_var_sensitivity_of_numpy_bounds_does_not_warn():
    """numpy scalar bounds (as PrivateStandardScaler passes them) overflowed (n - 1) w^2 with a
    RuntimeWarning (audit s21, finding 4); the value is the reordered finite product."""
    lo, hi = np.float64(-6e153), np.float64(6e153)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sens = var_sensitivity(100, lo, hi)
    assert sens == pytest.approx(99 / 100**2 * 1.2e154 * 1.2e154)
    _released(_pre(PrivateStandardScaler, bounds=(-6e153, 6e153)))


# ------------------------------------------- PrivateMinMaxScaler maps (audit s21, findings 5, 9)
def _narrow_minmax(**kw):
    def call(acc):
        X = np.random.default_rng(0).normal(0, 0.1, size=(2000, 1))
        return lambda: PrivateMinMaxScaler(random_state=0, accountant=acc, **kw).fit(X)

    return call


def test_minmax_private_bounds_too_narrow_for_the_map_are_widened():
    """feature_range (-8e307, 8e307) on data of sd 0.1: the released bounds (about +-0.27)
    gave scale_ = inf after the spend (a RuntimeWarning; NaN from transform). They are widened
    around their centre until the map is finite (post-processing)."""
    fr = (-8e307, 8e307)
    _released(_narrow_minmax(feature_range=fr))
    sc = _narrow_minmax(feature_range=fr)(BudgetAccountant())()
    assert np.all(np.isfinite(sc.scale_)) and np.all(np.isfinite(sc.min_))
    X = np.linspace(-1, 1, 11)[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z = sc.transform(X)
    assert np.all(np.isfinite(Z)) and Z.min() >= fr[0] and Z.max() <= fr[1]
    # the ends of the widened bounds (data at -1 and 1 lie beyond them) reach the ends
    assert Z[0, 0] == pytest.approx(fr[0], rel=1e-12) and Z[-1, 0] == pytest.approx(
        fr[1], rel=1e-12
    )
    plain = _narrow_minmax()(BudgetAccountant())()  # an ordinary feature_range: untouched
    assert 0.2 < plain.upper_[0] < 0.5 and -0.5 < plain.lower_[0] < -0.2


def test_minmax_candidate_range_of_infinite_width_is_refused_before_the_spend():
    """(-1.7e308, 1.7e308) released bounds wider than 1.8e308 on wide data and overflowed
    upper - lower after the spend; refused first now, like the same public bounds."""
    _refused(_narrow_minmax(candidate_range=(-BIG, BIG)), "candidate_range cannot be mapped")
    _released(_narrow_minmax(candidate_range=(-0.5 * BIG, 0.5 * BIG)))


def test_minmax_public_map_needs_a_finite_upper_end():
    """feature_range (0, 1e308), bounds (1, 2): scale 1e308, offset -1e308, and 2 * scale
    overflowed in transform (finding 9); refused before the spend now."""
    _refused(_narrow_minmax(feature_range=(0.0, 1e308), bounds=(1.0, 2.0)), "cannot be mapped")
    acc = BudgetAccountant()  # public bounds: nothing released, nothing charged
    call = _narrow_minmax(feature_range=(0.0, 1e308), bounds=(0.0, 1.0))
    assert check_contract(call(acc), acc) == "ok" and len(acc.ledger) == 0


@pytest.mark.parametrize("value", [BIG, float(np.finfo(float).max), -float(np.finfo(float).max)])
def test_data_read_bounds_of_a_constant_column_at_the_float_max_stay_finite(value):
    """bounds=None pads a constant column by |x| 2**-40; at +-1.797e308 the padded end was
    inf and the asinh quantile's KNG raised after the spend (audit s21, finding 6)."""

    def call(acc):
        def run():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyLeakWarning)  # the documented leak
                return tools.quantile(
                    [value, value],
                    0.5,
                    bounds=None,
                    measure="asinh",
                    accountant=acc,
                    random_state=0,
                )

        return run

    _released(call)
