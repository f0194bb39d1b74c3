"""The one linear program of the projection median, solved in a centred and rescaled frame.

Every LP here has the form ``min_z max_u (|u^T z - mid_u| + half_u) / lower_u`` (the projection
median is ``half = 0``, ``lower = sigma``; the safety-margin bound ``T_k`` uses the median
interval and the scale lower bounds). The objective is invariant under ``z = x0 + s z'``,
``mid -> (mid - U x0) / s``, ``half -> half / s``, ``lower -> lower / s`` for any point x0 and any
``s > 0``. HiGHS treats coefficients of magnitude >= 1e15 as infinite and works with absolute
tolerances of about 1e-7, so data whose projected spread is ~1e15 or ~1e-10 made it fail or
return a poor point. We therefore always solve in the frame centred at the least-squares point
of the ``mid`` values and scaled by the median of ``lower`` (so the solved problem has
coefficients of order 1 at every data scale), and map the solution back.

The solution only *proposes* a point: callers re-evaluate the objective at it directly in the
original units (:func:`minimax_value`), so a poor solve can only make a bound looser, never
wrong.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize


def centring_frame(U, mid, lower):
    """``(x0, s)``: the least-squares solution of ``U x0 ~ mid`` and ``s = median(lower)``."""
    x0 = np.linalg.lstsq(U, mid, rcond=None)[0]
    s = float(np.median(lower))
    if not (np.all(np.isfinite(x0)) and np.isfinite(s) and s > 0):
        return np.zeros(U.shape[1]), 1.0
    return x0, s


def signed_permutation(U):
    """``(cols, signs)`` if every row of ``U`` is ``signs[u] * e_{cols[u]}`` (exactly +-1) and
    every coordinate has exactly one row (``norm="linf"``), else ``None``.

    For such U the objective separates: row u only sees ``z_{cols[u]}``, so
    ``z_{cols[u]} = signs[u] * mid_u`` gives ``u^T z = mid_u`` exactly and attains the lower
    bound ``max_u half_u / lower_u``: the minimiser in closed form, in the data's units, with
    no LP and no frame (which overflows when the scales span more than the float range)."""
    m, d = U.shape
    if m != d:
        return None
    nonzero = U != 0
    if not np.all(nonzero.sum(axis=1) == 1):
        return None
    cols = np.argmax(nonzero, axis=1)
    signs = U[np.arange(m), cols]
    if np.unique(cols).size != d or not np.all(np.abs(signs) == 1.0):
        return None
    return cols, signs


def minimax_value(U, z, mid, half, lower):
    """``max_u (|u^T z - mid_u| + half_u) / lower_u`` evaluated directly (inf if not finite)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        val = float(np.max((np.abs(U @ z - mid) + half) / lower))
    return val if np.isfinite(val) else np.inf


def minimax_point(U, mid, half, lower):
    """A minimiser of :func:`minimax_value` over z (by LP in the centred, rescaled frame),
    or ``None`` if there is none to offer (callers then fall back to other points).

    ``None`` when a rescaled input is not finite, or ``lower / s`` is not positive: the
    inputs are finite in the data's units, but when the ``lower`` span more than the float
    range relative to their median ``s`` (e.g. axis directions on columns whose MADs differ
    by 1e400), ``lower / s`` overflows to inf or underflows to 0, and HiGHS refuses inf
    coefficients with a ``ValueError``. Callers run after the budget is spent, so any such
    refusal of the solver (a ``ValueError`` on its inputs) is also ``None``, never an
    exception: the point only proposes a value, which callers re-evaluate directly."""
    m, d = U.shape
    perm = signed_permutation(U)
    if perm is not None:
        cols, signs = perm
        z = np.zeros(d)
        z[cols] = signs * mid
        return z
    x0, s = centring_frame(U, mid, lower)
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        mid_s = (mid - U @ x0) / s
        half_s, lower_s = half / s, lower / s
    finite = np.all(np.isfinite(mid_s)) and np.all(np.isfinite(half_s))
    if not (finite and np.all(np.isfinite(lower_s)) and np.all(lower_s > 0)):
        return None
    # variables (z', t): minimise t s.t. +-(U z' - mid') + half' <= t * lower'
    A = np.block([[U, -lower_s[:, None]], [-U, -lower_s[:, None]]])
    b = np.concatenate([mid_s - half_s, -mid_s - half_s])
    cost = np.zeros(d + 1)
    cost[-1] = 1.0
    try:
        res = optimize.linprog(
            cost, A_ub=A, b_ub=b, bounds=[(None, None)] * (d + 1), method="highs"
        )
    except ValueError:  # inputs HiGHS refuses (e.g. an overflow in A or b): no LP point
        return None
    if res.status != 0:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        z = x0 + s * res.x[:d]
    return z if np.all(np.isfinite(z)) else None
