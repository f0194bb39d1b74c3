"""Regressions from audit s22 of PrivateProjectionMedian: nothing data- or parameter-dependent
may raise after the spend, and the exact sampler must stay live with axis directions.

Each test failed on the code before its fix (noted per test)."""

import warnings

import numpy as np
import pytest

from dpreg import BudgetAccountant, PrivateProjectionMedian
from dpreg.location import _lp
from dpreg.location import _sensitivity as sens
from dpreg.location._sampler import ExactSampler


def _fit(X, **kw):
    """A fit with its own ledger: ``(estimator, accountant)``."""
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    params = dict(epsilon=5.0, random_state=0, accountant=acc)
    params.update(kw)
    return PrivateProjectionMedian(**params).fit(X), acc


# ---------------------------------------------------------------- finding 1: LP overflow
def test_minimax_point_gives_no_point_when_the_frame_overflows():
    """Scales 1e400 apart: ``lower / median(lower)`` overflows to inf. HiGHS refused it with a
    ValueError (old code); now ``None`` (no LP point), and the T_k bound does not raise."""
    U = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]) / np.array([[1.0], [1.0], [np.sqrt(2)]])
    mid = np.array([1e-200, 2e-200, 1e-200])  # the centred mid / s stays finite
    lower = np.array([1e-200, 1e-200, 1e200])
    assert _lp.minimax_point(U, mid, np.zeros(3), lower) is None
    half = np.array([1e-201, 1e-201, 1e199])
    val, z = sens.min_outlyingness_from_bounds(U, mid - half, mid + half, lower)
    assert z is None and val == np.inf
    # a candidate point is still evaluated directly (the LP only proposes)
    val, z = sens.min_outlyingness_from_bounds(U, mid - half, mid + half, lower, [np.zeros(2)])
    assert np.isfinite(val) and np.array_equal(z, np.zeros(2))


def test_minimax_point_is_closed_form_for_axes():
    """Signed axis rows: ``z_i = sign * mid`` exactly, at any spread of the scales."""
    U = np.array([[0.0, -1.0], [1.0, 0.0]])
    mid, half = np.array([3e-200, -2e200]), np.array([1e-201, 1e199])
    z = _lp.minimax_point(U, mid, half, np.array([1e-200, 1e200]))
    np.testing.assert_array_equal(U @ z, mid)


@pytest.mark.parametrize("as_errors", [False, True])
def test_linf_fit_with_scales_beyond_the_float_range_releases(as_errors):
    """Audit reproduction (n scaled down): column MADs 1e400 apart with norm='linf'. Old code:
    ValueError from linprog after the spend. Now the test passes (h > 0) and a finite
    location is released, also with warnings turned into errors."""
    X = np.random.default_rng(0).standard_normal((2000, 3)) * [1e-200, 1e-200, 1e200]
    with warnings.catch_warnings():
        if as_errors:
            warnings.simplefilter("error")
        est, acc = _fit(X, norm="linf", max_proposals=10_000)
    assert np.all(np.isfinite(est.location_))
    assert acc.spent == (5.0, est.delta_)
    # the release sits at each column's own scale
    assert np.all(np.abs(est.location_) < 10 * np.array([1e-200, 1e-200, 1e200]))


# ------------------------------------------------------- finding 2: linf acceptance collapse
@pytest.mark.parametrize("r", [1e-13, 1e-100])
def test_exact_sampler_linf_accepts_with_a_tiny_axis_scale(r):
    """A coordinate whose scale is r times the other's: the old absolute 1e-9 pad made the box
    ~1e-9 / r times too wide there (acceptance 3e-5 at r = 1e-13, none at 1e-100). The axis
    frame is exact and B_t = P_t, so the acceptance is 1 up to the mixture correction."""
    U = np.eye(2)
    mu, sigma = np.array([0.3, -2e-5 * r]), np.array([0.66, 0.67 * r])
    smp = ExactSampler(U, mu, sigma, 169.65, np.random.default_rng(0))
    X = smp.sample(200, max_proposals=400)
    assert smp.acceptance_rate > 0.99
    # the law in the data's units: (X - mu) / sigma is exp(-c ||.||_inf), radius ~ Gamma(2)
    V = (X - mu) / sigma
    assert 0.5 * 2 / 169.65 < np.mean(np.max(np.abs(V), axis=1)) < 1.5 * 2 / 169.65


def test_linf_fit_with_a_tiny_column_scale_releases_quickly():
    """Audit reproduction (b4, n scaled down): data N(0, I) * [1, 1e-16], norm='linf'. Old code:
    RuntimeError after the spend at max_proposals (or a hang with the default None)."""
    X = np.random.default_rng(0).standard_normal((2000, 2)) * [1.0, 1e-16]
    est, acc = _fit(X, norm="linf", max_proposals=1000, diagnostics=True)
    assert np.all(np.isfinite(est.location_))
    assert est.diagnostics_["acceptance_rate"] > 0.5
    assert acc.spent == (5.0, est.delta_)


# ------------------------------------------------- finding 4: directions before the spend
@pytest.mark.parametrize(
    "kw",
    [
        dict(norm="l2", n_directions=1),
        dict(norm=np.array([[1.0, 1.0], [2.0, 2.0]])),
        dict(norm=np.ones((3, 5))),
        dict(norm=np.array([[1.0, 0.0], [0.0, np.nan]])),
        dict(norm=np.array([[1.0, 0.0], [0.0, 0.0]])),
    ],
    ids=["too-few", "rank-deficient", "wrong-shape", "nan", "zero-row"],
)
def test_bad_directions_are_refused_before_the_spend(kw):
    """Old code: the ValueError came after ``accountant.spend`` (the ledger was charged)."""
    X = np.random.default_rng(0).standard_normal((2000, 2))
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="direction"):
        PrivateProjectionMedian(epsilon=5.0, accountant=acc, random_state=0, **kw).fit(X)
    assert acc.spent == (0.0, 0.0)


# Seeded releases recorded from the code before the directions moved ahead of the spend
# (commit 1e3dce1): a seed's stream, hence its output, must not change.
_X2 = np.random.default_rng(3).standard_normal((2000, 2)) + [1.0, -2.0]
_X3 = np.random.default_rng(4).standard_normal((3000, 3)) * [1.0, 2.0, 0.5]
_SEEDED = [
    (
        "l2",
        _X2,
        dict(norm="l2", n_directions=50),
        ["0x1.17e5fa7a00000p+0", "-0x1.f4c2638100000p+0"],
    ),
    ("l1", _X2, dict(norm="l1"), ["0x1.cd236fd500000p-1", "-0x1.1617b63f00000p+1"]),
    (
        "array",
        _X2,
        dict(norm=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, -1.0]])),
        ["0x1.f15174ff00000p-1", "-0x1.112e2be100000p+1"],
    ),
    (
        "l2_private_scale",
        _X3,
        dict(norm="l2", n_directions=40, scale="private"),
        ["0x1.a37452ac00000p-4", "0x1.3e08bdcf00000p-3", "0x1.f562351200000p-5"],
    ),
]


@pytest.mark.parametrize("name, X, kw, expected", _SEEDED, ids=[s[0] for s in _SEEDED])
def test_seeded_release_unchanged_by_building_directions_first(name, X, kw, expected):
    est = PrivateProjectionMedian(epsilon=5.0, delta=1e-6, random_state=7, **kw).fit(X)
    assert [float(v).hex() for v in est.location_] == expected


# ---------------------------------------------------------------- finding 5: the message
def test_magnitude_refusal_does_not_print_a_data_value():
    X = np.random.default_rng(0).standard_normal((50, 2))
    X[17, 0] = 1.2345e307
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="magnitude above") as info:
        PrivateProjectionMedian(epsilon=5.0, accountant=acc).fit(X)
    assert "1.23e+307" not in str(info.value) and "1.2345" not in str(info.value)
    assert acc.spent == (0.0, 0.0)
