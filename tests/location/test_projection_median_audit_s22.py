"""Regressions from audit s22 of PrivateProjectionMedian: nothing data- or parameter-dependent
may raise after the spend, and the exact sampler must stay live with axis directions.

Each test failed on the code before its fix (noted per test)."""

import numpy as np

from dpreg import BudgetAccountant, PrivateProjectionMedian
from dpreg.location import _lp
from dpreg.location import _sensitivity as sens


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
