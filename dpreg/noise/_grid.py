"""The public release grid and the float error of statistics (see ``docs/floating_point.md``).

Two small, separate ideas live here:

* :func:`grid_exponent` -- every hardened mechanism releases a multiple of ``g = 2**e``, a
  power of two derived from the mechanism's *public* noise scale only, so the grid itself
  reveals nothing. ``g <= scale * 2**-GRID_BITS`` makes the rounding error (at most ``g/2``,
  variance ``g**2/12``) negligible next to the noise (relative variance below ``1e-14``).
* :func:`float_sum_error_bound` / :func:`inflate_sensitivity` -- the statistic an estimator
  feeds to a mechanism is computed in floating point. Its sensitivity must be that of the
  *computed* statistic: ``|fl(T(D)) - T(D)| <= e`` per coordinate gives
  ``||fl(T(D)) - fl(T(D'))||_K <= Delta + 2 e sum_i ||e_i||_K``.
"""

from __future__ import annotations

import math

import numpy as np

GRID_BITS = 24
"""The grid is at least ``2**GRID_BITS`` times finer than the noise scale."""

_U = 2.0**-53  # unit roundoff of float64 (round to nearest)


def grid_exponent(scale, bits=GRID_BITS):
    """``e`` with ``2**e`` the largest power of two ``<= scale * 2**-bits``.

    ``bits`` defaults to :data:`GRID_BITS` (releases); a finer grid serves values that are
    not released but must stay within a small public distance of the ideal draw (the
    objective-perturbation vector, :mod:`dpreg.linear_model.logistic`).

    Examples
    --------
    >>> from dpreg.noise._grid import grid_exponent
    >>> grid_exponent(1.0)
    -24
    >>> grid_exponent(3.0)
    -23
    """
    scale = float(scale)
    if not (math.isfinite(scale) and scale > 0.0):
        raise ValueError(f"scale must be finite and > 0, got {scale!r}.")
    mant, exp = math.frexp(scale)  # scale = mant * 2**exp, 0.5 <= mant < 1
    # floor(log2(scale)) = exp - 1 exactly (frexp is exact); keep g a normal float
    return max(exp - 1 - int(bits), -1022)


def float_sum_error_bound(n_terms, max_abs, products=False):
    """Bound on ``|fl(sum x_i) - sum x_i|`` for ``n_terms`` values with ``|x_i| <= max_abs``.

    Holds for *any* summation order (numpy's pairwise summation, BLAS, dask chunks): the
    classical bound ``gamma_{n-1} sum |x_i|`` with ``gamma_k = k u / (1 - k u)`` (Higham,
    *Accuracy and Stability of Numerical Algorithms*, 2nd ed., eq. 4.4). With
    ``products=True`` each term is itself a rounded product ``fl(a_i b_i)`` with
    ``|a_i b_i| <= max_abs``, which adds one rounding per term: ``gamma_n``. A term of
    ``n * 2**-1074`` covers underflow (subnormal results carry an absolute, not relative,
    error).

    Examples
    --------
    >>> from dpreg.noise._grid import float_sum_error_bound
    >>> float_sum_error_bound(1_000_000, 1.0) < 1.2e-4
    True
    """
    n = int(n_terms)
    if n < 0 or not math.isfinite(max_abs) or max_abs < 0:
        raise ValueError("n_terms must be >= 0 and max_abs finite and >= 0.")
    k = n if products else max(n - 1, 0)
    if k * _U >= 0.5:
        return math.inf
    gamma = k * _U / (1.0 - k * _U)
    # round the bound itself up: a relative 1e-12 margin dwarfs its own rounding errors
    return (gamma * n * max_abs + n * 2.0**-1074) * (1.0 + 1e-12)


def inflate_sensitivity(sensitivity, coord_error, ball):
    """Sensitivity of the *computed* statistic in the norm of ``ball``.

    If every coordinate of the computed statistic is within ``coord_error`` of the exact
    one, then ``fl(T(D)) - fl(T(D')) = (T(D) - T(D')) + w`` with ``|w_i| <= 2 coord_error``,
    and ``||w||_K <= sum_i |w_i| ||e_i||_K <= 2 coord_error sum_i ||e_i||_K`` (triangle
    inequality over the unit vectors ``e_i``).

    Examples
    --------
    >>> from dpreg.noise import LinfBall
    >>> from dpreg.noise._grid import inflate_sensitivity
    >>> inflate_sensitivity(2.0, 1e-12, LinfBall(3)) > 2.0
    True
    """
    eye = np.eye(ball.dim)
    unit_norms = float(np.sum(ball.norm(eye)))
    return float(sensitivity + 2.0 * coord_error * unit_norms * (1.0 + 1e-12))
