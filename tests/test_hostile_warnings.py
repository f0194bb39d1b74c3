"""Hostile floating-point input under warnings-as-errors (docs/floating_point.md, section 5c).

Threat: a user (or ``pytest -W error``, or a notebook with ``warnings.simplefilter("error")``)
turns warnings into exceptions. A numpy ``RuntimeWarning`` (overflow, invalid value, divide by
zero) emitted on the private data *after* the accountant was charged is then an exception
that depends on the data: a side channel, and a ledger charged for nothing.

Contract checked for every estimator (default and main options), the preprocessing
transformers, the private statistics and the inference releases, on finite but hostile data
(+-1.7e308, +-1e300, denormals, a mix, constant columns, one huge row among normal ones),
inside ``catch_warnings`` + ``simplefilter("error")`` with an accountant:

* either the call raises **before** the accountant is charged (a clear ``ValueError`` /
  ``TypeError`` / ``PrivacyLeakWarning``; a ``RuntimeWarning`` raised by scikit-learn's own
  finiteness check is tolerated there, see ``_pre_spend_ok``),
* or it completes with no exception (and its released numbers are finite);
* the projection median may also end in ``PTRTestFailedError`` after the charge: that is
  its private (DP) outcome, not an error of the floating point.

Failures in files being edited by other engineers are ``xfail(strict=True)`` with the place
in the reason, so the xfail turns into an error once they are fixed.
"""

from __future__ import annotations

import copy
import functools
import traceback
import warnings

import numpy as np
import pytest

import dpreg.tools as tools
from dpreg import (
    BudgetAccountant,
    FunctionalLinearRegression,
    KNGQuantileRegressor,
    ObjectivePerturbationLogistic,
    ObjectivePerturbationQuantileRegressor,
    PrivateProjectionMedian,
)
from dpreg.exceptions import PrivacyLeakWarning, PTRTestFailedError
from dpreg.preprocessing import (
    PrivateBounds,
    PrivateMinMaxScaler,
    PrivateStandardScaler,
    private_bounds,
)
from dpreg.tools._quantile import _to_u

BIG = 1.7e308
KINDS = ["max", "e300", "denormal", "mix", "constant", "one_huge"]
N, P = 40, 2


def hostile(kind, n=N, p=P, seed=0):
    """``(X, y)`` of finite hostile values; ``y`` is the last of ``p + 1`` columns.

    * ``max``: +-1.7e308 with random signs (the sum of X overflows to inf - inf: NaN);
    * ``e300``: +-1e300; ``denormal``: 0, 5e-324 and 1e-323 with random signs;
    * ``mix``: 1.7e308, +-1e300, +-5e-324, 0, 1, -2.5, 1e-300 (positive 1.7e308 only);
    * ``constant``: every column all 1.7e308 (a constant column at the largest scale);
    * ``one_huge``: uniform(-1, 1) rows and one row (-1.7e308, 1.7e308, ..., 1.7e308).
    """
    rng = np.random.default_rng(seed)
    sign = np.where(rng.random((n, p + 1)) < 0.5, -1.0, 1.0)
    if kind == "max":
        A = sign * BIG
    elif kind == "e300":
        A = sign * 1e300
    elif kind == "denormal":
        A = sign * 5e-324 * rng.integers(0, 3, (n, p + 1))
    elif kind == "mix":
        pool = np.array([BIG, 1e300, -1e300, 5e-324, -5e-324, 0.0, 1.0, -2.5, 1e-300])
        A = rng.choice(pool, (n, p + 1))
    elif kind == "constant":
        A = np.full((n, p + 1), BIG)
    elif kind == "one_huge":
        A = rng.uniform(-1.0, 1.0, (n, p + 1))
        A[0] = BIG
        A[0, 0] = -BIG
    else:  # pragma: no cover
        raise AssertionError(kind)
    return A[:, :p].copy(), A[:, p].copy()


def labels(n=N):
    return np.arange(n) % 2


# ------------------------------------------------------------------------------ the contract
def _pre_spend_ok(exc):
    """A clear validation error; or scikit-learn's finiteness check warning on a sum that
    overflowed to inf - inf (its own code, before our spend; noted in docs/floating_point.md)."""
    if isinstance(exc, (ValueError, TypeError, PrivacyLeakWarning)):
        return True
    frames = traceback.extract_tb(exc.__traceback__)
    return isinstance(exc, RuntimeWarning) and any(
        "sklearn/utils/validation.py" in f.filename.replace("\\", "/") for f in frames
    )


def _where(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    inside = [
        f"{f.filename.split('dpreg/')[-1]}:{f.lineno}" for f in frames if "dpreg" in f.filename
    ]
    return inside[-1] if inside else "?"


def check_contract(call, acc, ptr_ok=False):
    """Run ``call()`` with every warning an error; return "ok", "refused" or "ptr-failed"."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            out = call()
        except PTRTestFailedError as exc:
            if ptr_ok and not isinstance(exc, ValueError):
                return "ptr-failed"  # the median's private test outcome (charged by design)
            assert len(acc.ledger) == 0, f"charged, then {exc!r}"
            return "refused"
        except Exception as exc:  # noqa: BLE001 - the point is to classify every exception
            charged = len(acc.ledger) > 0
            assert not charged, (
                f"raised AFTER the spend: {type(exc).__name__}: {exc} at {_where(exc)}"
            )
            assert _pre_spend_ok(exc), f"unclear error before the spend: {exc!r} at {_where(exc)}"
            return "refused"
    for value in _released(out):
        assert np.all(np.isfinite(value)), f"non-finite release {value!r}"
    return "ok"


def _released(out):
    if isinstance(out, tuple):
        return [np.asarray(v, float) for v in out]
    if isinstance(out, (float, np.ndarray)):
        return [np.asarray(out, float)]
    names = ("coef_", "intercept_", "location_", "lower_", "upper_", "mean_", "scale_")
    return [np.asarray(getattr(out, a), float) for a in names if hasattr(out, a)]


# ------------------------------------------------------------------------------ the cases
NARROW = (0.0, 0.5)  # half-width 0.25 < 1: the scaling multiplies, so 1.7e308 overflows
FAR = 1.7e308


def _est(cls, classifier=False, sample_weight=False, **kw):
    def call(acc, kind):
        X, y = hostile(kind)
        if classifier:
            y = labels()
        est = cls(random_state=0, accountant=acc, **kw)
        if sample_weight:
            return lambda: est.fit(X, y, sample_weight=np.linspace(0.1, 1.0, N))
        return lambda: est.fit(X, y)

    return call


def _leak_ok(make):
    """The default (no bounds) path with the PrivacyLeakWarning acknowledged by the user."""

    def call(acc, kind):
        inner = make(acc, kind)

        def run():
            warnings.filterwarnings("ignore", category=PrivacyLeakWarning)
            return inner()

        return run

    return call


B2 = dict(bounds_X=NARROW, bounds_y=NARROW)
PRIV = dict(bounds_X="private", bounds_y="private")
F, L, K, O = (
    FunctionalLinearRegression,
    ObjectivePerturbationLogistic,
    KNGQuantileRegressor,
    ObjectivePerturbationQuantileRegressor,
)
KNG_FAST = dict(n_chains=1)

ESTIMATORS = {
    "functional-default": _est(F),
    "functional-public": _est(F, **B2),
    "functional-private": _est(F, **PRIV),
    "functional-public-l2": _est(F, norm="l2", **B2),
    "functional-public-l1": _est(F, norm="l1", **B2),
    "functional-public-gauss": _est(F, delta=1e-5, mechanism="gaussian", **B2),
    "functional-public-weights": _est(F, sample_weight=True, **B2),
    "functional-private-weights": _est(F, sample_weight=True, **PRIV),
    "functional-public-inference": _est(F, inference_share=0.1, **B2),
    "functional-public-boost": _est(F, boost_rounds=2, **B2),
    "logistic-default": _est(L, classifier=True, classes=[0, 1]),
    "logistic-public": _est(L, classifier=True, classes=[0, 1], bounds_X=NARROW),
    "logistic-private": _est(L, classifier=True, classes=[0, 1], bounds_X="private"),
    "logistic-public-l2": _est(L, classifier=True, classes=[0, 1], bounds_X=NARROW, norm="l2"),
    "logistic-public-weights": _est(
        L, classifier=True, sample_weight=True, classes=[0, 1], bounds_X=NARROW
    ),
    "kng-default": _est(K, **KNG_FAST),
    "kng-public": _est(K, **B2),
    "kng-private": _est(K, **PRIV),
    "kng-public-l2": _est(K, norm="l2", **B2),
    "kng-public-weights": _est(K, sample_weight=True, **B2),
    "kng-public-gibbs": _est(K, sampler="gibbs", n_sweeps=3, **KNG_FAST, **B2),
    "opquantile-default": _est(O),
    "opquantile-public": _est(O, **B2),
    "opquantile-private": _est(O, **PRIV),
    "opquantile-public-l2": _est(O, norm="l2", **B2),
}
LEAK_OK = {
    "functional-default-leak-ok": _leak_ok(_est(F)),
    "logistic-default-leak-ok": _leak_ok(_est(L, classifier=True, classes=[0, 1])),
    "kng-default-leak-ok": _leak_ok(_est(K)),
    "opquantile-default-leak-ok": _leak_ok(_est(O)),
}
# after the spend, in a file not edited here (see the reason strings); the unit_map overflow of
# the default bounds on a constant 1.7e308 column was mended at integration (_bounds.unit_map)
XFAIL = {}


def _params(table):
    out = []
    for name in table:
        for kind in KINDS:
            reason = XFAIL.get((name, kind))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(name, kind, id=f"{name}-{kind}", marks=marks))
    return out


@pytest.mark.parametrize(("name", "kind"), _params(ESTIMATORS))
def test_estimators_never_raise_after_the_spend(name, kind):
    acc = BudgetAccountant(delta=0.5)
    check_contract(ESTIMATORS[name](acc, kind), acc)


@pytest.mark.parametrize(("name", "kind"), _params(LEAK_OK))
def test_default_bounds_with_the_leak_acknowledged(name, kind):
    acc = BudgetAccountant(delta=0.5)
    check_contract(LEAK_OK[name](acc, kind), acc)


# ------------------------------------------------------------------------------ the median
N_MEDIAN = 200  # large enough at epsilon = 50 that the PTR test is not refused up front


def _median(**kw):
    def call(acc, kind):
        X, _ = hostile(kind, n=N_MEDIAN)
        est = PrivateProjectionMedian(epsilon=50.0, random_state=0, accountant=acc, **kw)
        return lambda: est.fit(X)

    return call


MEDIANS = {
    "median-default": _median(),
    "median-linf": _median(norm="linf"),
    "median-iqr": _median(scale="iqr"),
    "median-public-scale": _median(scale=[1.0, 1.0]),
    "median-private-scale": _median(scale="private"),
    "median-public-trim": _median(scale=[1.0, 1.0], trim_scale=[1.0, 1.0]),
    "median-private-trim": _median(scale="private", trim_scale="private"),
}
# denormal data with scale="iqr" (n=200, d=2, epsilon=50) used to hang after the spend (the
# exact sampler's output cell below 2**-1075 was never decided; fixed in _grid_release, now
# ~0.5 CPU-s): nothing is skipped any more; the hook stays for the next such case
SKIP = {}


def _params_skip(table):
    out = []
    for p in _params(table):
        name, kind = p.values
        if (name, kind) in SKIP:
            p = pytest.param(name, kind, id=p.id, marks=pytest.mark.skip(SKIP[(name, kind)]))
        out.append(p)
    return out


@pytest.mark.parametrize(("name", "kind"), _params_skip(MEDIANS))
def test_median_never_raises_after_the_spend(name, kind):
    acc = BudgetAccountant(delta=0.5)
    check_contract(MEDIANS[name](acc, kind), acc, ptr_ok=True)


# ------------------------------------------------------------------ preprocessing, statistics
def _pre(cls, **kw):
    def call(acc, kind):
        X, _ = hostile(kind)
        return lambda: cls(random_state=0, accountant=acc, **kw).fit(X)

    return call


def _tool(fn, *args, **kw):
    def call(acc, kind):
        X, _ = hostile(kind)
        return lambda: fn(X[:, 0], *args, random_state=0, accountant=acc, **kw)

    return call


def _private_bounds(acc, kind):
    X, _ = hostile(kind)
    return lambda: private_bounds(X, 1.0, random_state=0, accountant=acc)


WIDE = (-8e307, 8e307)  # finite width 1.6e308: sums of clipped values overflow
STATS = {
    "PrivateBounds": _pre(PrivateBounds),
    "PrivateMinMaxScaler": _pre(PrivateMinMaxScaler),
    "PrivateMinMaxScaler-public": _pre(PrivateMinMaxScaler, bounds=NARROW),
    "PrivateStandardScaler": _pre(PrivateStandardScaler),
    "PrivateStandardScaler-public": _pre(PrivateStandardScaler, bounds=NARROW),
    "PrivateStandardScaler-too-wide": _pre(PrivateStandardScaler, bounds=(-1e300, 1e300)),
    "private_bounds": _private_bounds,
    "mean": _tool(tools.mean, bounds=NARROW),
    "mean-wide": _tool(tools.mean, bounds=WIDE),
    "var": _tool(tools.var, bounds=NARROW),
    "var-wide": _tool(tools.var, bounds=(-6e153, 6e153)),
    "var-too-wide": _tool(tools.var, bounds=(-1e300, 1e300)),
    "std": _tool(tools.std, bounds=NARROW),
    "quantile": _tool(tools.quantile, 0.3, bounds=NARROW),
    "quantile-wide": _tool(tools.quantile, [0.1, 0.9], bounds=WIDE),
    "quantile-asinh": _tool(
        tools.quantile, [0.1, 0.9], bounds=(-FAR, FAR), measure="asinh", asinh_scale=0.01
    ),
    "median": _tool(tools.median, bounds=NARROW),
    "histogram": _tool(tools.histogram, bins=5, range=NARROW),
    "histogram-edges": _tool(tools.histogram, bins=[-FAR, 0.0, FAR]),
    "histogram-too-wide": _tool(tools.histogram, bins=5, range=(-FAR, FAR)),
}


@pytest.mark.parametrize(("name", "kind"), _params(STATS))
def test_preprocessing_and_statistics_never_raise_after_the_spend(name, kind):
    acc = BudgetAccountant(delta=0.5)
    check_contract(STATS[name](acc, kind), acc)


# ------------------------------------------------------------------------------ inference
def _fitted(cls, kind, **kw):
    """A fit on ordinary data of the hostile shape (the release then reads the hostile X)."""
    X = np.random.default_rng(1).uniform(-1, 1, (N, P))
    y = labels() if cls is ObjectivePerturbationLogistic else X[:, 0]
    return cls(random_state=0, **kw).fit(X, y)


def _hessian(acc, kind):
    est = _fitted(ObjectivePerturbationLogistic, kind, classes=[0, 1], bounds_X=NARROW)
    X, _ = hostile(kind)
    return lambda: est.release_hessian(X, labels(), 1.0, accountant=acc, random_state=0)


def _curvature(acc, kind):
    est = _fitted(KNGQuantileRegressor, kind, bounds_X=NARROW, bounds_y=NARROW)
    X, y = hostile(kind)
    return lambda: est.release_curvature(X, y, 1.0, accountant=acc, random_state=0)


@functools.cache
def _linf_median():
    X = np.random.default_rng(1).normal(size=(N_MEDIAN, P))
    return PrivateProjectionMedian(epsilon=50.0, norm="linf", random_state=0).fit(X)


def _median_scale(acc, kind):
    # one fit (0.4 s) for every kind; each release gets its accountant and its own copy of
    # the fit (a second release on one fit would warn, before the spend, that it replaces
    # the first: tests/test_rerelease_warning.py)
    est = copy.deepcopy(_linf_median())
    H, _ = hostile(kind, n=N_MEDIAN)
    return lambda: est.release_scale(H, 1.0, accountant=acc, random_state=0)


INFERENCE = {
    "logistic-release_hessian": _hessian,
    "kng-release_curvature": _curvature,
    "median-release_scale": _median_scale,
}


@pytest.mark.parametrize(("name", "kind"), _params(INFERENCE))
def test_inference_releases_never_raise_after_the_spend(name, kind):
    acc = BudgetAccountant(delta=0.5)
    check_contract(INFERENCE[name](acc, kind), acc)


# ------------------------------------------------------------------ the values that follow
def test_control_the_contract_catches_a_warning_after_the_spend(monkeypatch):
    """A mechanism that overflows after the spend must fail the contract (else it proves
    nothing); a refusal before the spend must pass it."""
    import dpreg.tools._moments as moments  # noqa: PLC0415

    def overflowing(values, lower, upper, epsilon, rng):
        return float(np.float64(1e308) * 10.0)  # RuntimeWarning: overflow

    monkeypatch.setattr(moments, "private_mean", overflowing)
    acc = BudgetAccountant()
    X, _ = hostile("e300")
    with pytest.raises(AssertionError, match="AFTER the spend"):
        check_contract(lambda: tools.mean(X[:, 0], bounds=NARROW, accountant=acc), acc)
    acc = BudgetAccountant()
    bad = lambda: tools.mean(X[:, 0], bounds=(1.0, 0.0), accountant=acc)  # noqa: E731
    assert check_contract(bad, acc) == "refused" and len(acc.ledger) == 0


def test_functional_overflowing_rows_are_clipped_to_the_bound():
    """_scale_flat: (x - off) * inv overflows to +-inf for |x| near 1.8e308 and is then
    clipped; the fit equals the fit on data clipped beforehand, bit for bit."""
    X, y = hostile("one_huge")
    lo, hi = NARROW
    fits = []
    for A, b in ((X, y), (np.clip(X, lo, hi), np.clip(y, lo, hi))):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fits.append(FunctionalLinearRegression(random_state=3, **B2).fit(A, b))
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    np.testing.assert_array_equal(fits[0].noisy_statistics_.gram, fits[1].noisy_statistics_.gram)


def test_asinh_map_is_exact_past_the_overflow_and_unchanged_before():
    mpmath = pytest.importorskip("mpmath")
    s = 0.01
    far = np.array([1.8e306, -3e306, 1e307, 1.7e308, -1.7e308])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        u = _to_u(far, "asinh", s)
        near = np.array([0.0, 5e-324, -1.0, 3e5, 1e300, 1.7e306])
        np.testing.assert_array_equal(_to_u(near, "asinh", s), np.arcsinh(near / s))
    exact = [float(mpmath.asinh(mpmath.mpf(x) / mpmath.mpf(s))) for x in far]
    np.testing.assert_allclose(u, exact, rtol=4e-16)
    assert np.all(np.diff(_to_u(np.sort(far), "asinh", s)) > 0)  # the order is kept


def test_mean_and_variance_past_the_overflow_are_the_exact_statistics(monkeypatch):
    """The centred statistics of private_mean / private_var are the exact statistics when
    the plain sum overflows (the noise is switched off to read it)."""
    import dpreg.tools._moments as moments  # noqa: PLC0415

    monkeypatch.setattr(moments, "_release", lambda value, *a, **k: value)
    values = np.array([1.7e308, 1.6e308, -1e300, 1.65e308])
    lo, hi = -1.7e308 / 2, 1.7e308 / 2  # width 1.7e308: sum of the clipped values overflows
    x = [mpmath_mpf(v) for v in np.clip(values, lo, hi)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = moments.private_mean(values, lo, hi, 1.0, None)
    assert m == pytest.approx(float(sum(x) / len(x)), rel=1e-15)
    lo, hi = -6e153, 6e153
    v = np.array([6e153, -6e153, 5e153, -5.5e153, 6e153])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = moments.private_var(v, lo, hi, 1.0, None)
    xs = [mpmath_mpf(t) for t in v]
    mu = sum(xs) / len(xs)
    assert got == pytest.approx(float(sum((t - mu) ** 2 for t in xs) / len(xs)), rel=1e-14)


def mpmath_mpf(value):
    mpmath = pytest.importorskip("mpmath")
    return mpmath.mpf(float(value))


def test_functional_data_read_bounds_warn_before_the_spend():
    """bounds=None: the PrivacyLeakWarning comes before the charge (once per bounds)."""
    X, y = hostile("e300")
    acc = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(PrivacyLeakWarning):
            FunctionalLinearRegression(accountant=acc, random_state=0).fit(X, y)
    assert len(acc.ledger) == 0
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        FunctionalLinearRegression(random_state=0).fit(X, y)
    leaks = [w for w in seen if issubclass(w.category, PrivacyLeakWarning)]
    assert sorted(str(w.message).split()[0] for w in leaks) == ["bounds_X", "bounds_y"]


def test_median_refuses_entries_too_large_to_project_before_the_spend():
    """Data whose projections could overflow are refused with a clear error and no charge;
    the same data rescaled by a public factor are fitted (the remedy the message gives)."""
    X, _ = hostile("one_huge", n=N_MEDIAN)
    acc = BudgetAccountant(delta=0.5)
    est = PrivateProjectionMedian(epsilon=50.0, random_state=0, accountant=acc)
    with pytest.raises(ValueError, match="Rescale X by a public factor"):
        est.fit(X)
    assert acc.spent == (0.0, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            est.fit(X / 1e10)
        except PTRTestFailedError:  # the private outcome; the point is: no overflow warning
            pass
    assert acc.spent[0] == pytest.approx(50.0)
