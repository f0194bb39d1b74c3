"""Exact pieces of the grid release of KNG draws (used by :mod:`dpreg._kng_exact`).

The KNG draw for ``d >= 1`` parameters is released on a public power-of-two grid: the box
sampler draws a grid *cell* ``k`` with probability proportional to ``exp(-s ||g(c_k)||_K)``,
``c_k`` the centre of the cell, and releases ``c_k`` (a float that depends on ``k`` only). The
derivation (why this is epsilon-DP on the machine, and what float error is charged) is in
``docs/kng_quantile_regression.md`` ("Floating point") and in :func:`float_scale`. This module
holds the parts that must be exact:

* :func:`grid_box` -- the public grid and the grid-aligned box (depends on the box only);
* :func:`indicators_at` -- ``1{U_i^T c >= c_i}`` decided exactly (floats with a rigorous error
  bound; rational arithmetic for the rare near-ties);
* :func:`accept` -- the rejection step ``U <= exp(D)`` for a real uniform ``U`` whose bits are
  drawn lazily, decided exactly (float bounds first; python-flint ``arb`` when undecided);
* :func:`float_scale` -- the density scale ``s`` that pays for the float error of the gradient
  sums, from public quantities only.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._random import random_words

__all__ = [
    "GRID_BITS",
    "accept",
    "accept_fast",
    "check_grid_epsilon",
    "decide_below",
    "float_scale",
    "grid_box",
    "indicators_at",
    "round_to_grid",
]

GRID_BITS = 32
"""Cells per coordinate: about ``2**GRID_BITS`` across the public box (fewer far from 0)."""

# grid indices stay below 2**_INDEX_BITS in absolute value, so that ``(k + 1/2) g`` and every
# box edge ``L + k g`` are exact floats
_INDEX_BITS = 49
_U53 = 2.0**-53
_LIBM_REL = 2.0**-44  # assumed accuracy of np.exp (docs/floating_point.md, libm assumption)
# rho of :func:`float_scale`: the absolute error charged for the logarithms of volumes and
# integer weights in the sampler's accept test
_LOG_ERROR = 1e-9
#: The smallest epsilon (exclusive) of a grid release that pays for its float error
#: (:func:`float_scale`): ``s = (epsilon - 4 rho) / (2 Delta + 4 (A_1 + A_2))`` is positive
#: iff ``epsilon > 4 rho`` (the denominator is positive), whatever ``n``, ``d``, the norm and
#: the sensitivity. At or below it no scale makes the release epsilon-DP as computed;
#: estimators refuse it before the spend (:func:`check_grid_epsilon`; docs/floating_point.md,
#: section 5c). KNG releases at such epsilon would be nearly uniform on the box anyway.
EPSILON_MIN = 4.0 * _LOG_ERROR


def grid_box(lower, upper):
    """The public grid ``g = 2**e`` (per coordinate) and the aligned box ``[L, H]``.

    ``e = floor(log2(upper - lower)) - GRID_BITS``, raised where needed so that
    ``|L / g|, |H / g| < 2**49``. ``L = floor(lower / g) g`` and ``H = ceil(upper / g) g``:
    the cells ``[L + k g, L + (k + 1) g]`` cover the box. Everything depends only on the public
    box.

    Examples
    --------
    >>> from dpreg._kng_grid import grid_box
    >>> g, L, H = grid_box([-1.0, 0.0], [1.0, 3.0])
    >>> [float(x) for x in g * 2.0**32]
    [2.0, 2.0]
    >>> [float(x) for x in L], [float(x) for x in H]
    ([-1.0, 0.0], [1.0, 3.0])
    """
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    e = np.empty(lower.shape, dtype=np.int64)
    for j, (a, b) in enumerate(zip(lower, upper)):
        ej = math.frexp(b - a)[1] - 1 - GRID_BITS  # floor(log2(width)) - GRID_BITS
        big = max(abs(a), abs(b))
        if big > 0.0:
            ej = max(ej, math.frexp(big)[1] - _INDEX_BITS + 1)
        e[j] = max(ej, -1070)
    g = np.ldexp(1.0, e)
    return g, np.floor(lower / g) * g, np.ceil(upper / g) * g


def round_to_grid(theta, lower, upper):
    """The centre of the public grid cell of :func:`grid_box` that contains ``theta``, clipped.

    For samplers whose output is *not* an exact cell draw (the opt-in Gibbs chains): the
    release then takes values in the same public set as the exact samplers, which removes the
    low-bit patterns of float arithmetic, but it certifies nothing about the law (the chain's
    law is approximate anyway). ``(k + 1/2) g`` with ``|k| < 2**50`` is an exact float.

    Examples
    --------
    >>> from dpreg._kng_grid import round_to_grid
    >>> t = round_to_grid([0.3], [-1.0], [1.0])
    >>> bool(t[0] * 2.0**33 == round(t[0] * 2.0**33) and abs(t[0] - 0.3) < 2.0**-31)
    True
    """
    theta = np.asarray(theta, dtype=float)
    g, L, H = grid_box(lower, upper)
    k = np.clip(np.floor((theta - L) / g), 0.0, (H - L) / g - 1.0)
    return np.clip(L + (k + 0.5) * g, lower, upper)


def indicators_at(U, c, theta):
    """``U @ theta >= c`` decided exactly for the float vector ``theta``.

    The float dot product of ``d`` terms errs by at most ``gamma_d sum_j |U_ij theta_j|``
    (Higham, eq. 3.4) plus underflow; rows within twice that of the threshold are re-decided
    in rational arithmetic (they have probability ~1e-16 each).
    """
    val = U @ theta
    d = theta.shape[0]
    bound = 2.0 * (d + 1) * _U53 * (np.abs(U) @ np.abs(theta)) + 1e-300
    on = val >= c
    for i in np.flatnonzero(np.abs(val - c) <= bound):
        exact = sum(Fraction(float(u)) * Fraction(float(t)) for u, t in zip(U[i], theta))
        on[i] = exact >= Fraction(float(c[i]))
    return on


def accept(u, log_f, log_m, rng):
    """Decide ``U <= exp(log_f - log_m)`` exactly, with ``U = u + 2**-53 V``.

    ``u`` is a multiple of ``2**-53`` in ``[0, 1)`` (the top 53 bits of a real uniform ``U``),
    ``V`` a fresh real uniform whose bits are drawn only if needed; ``log_f`` and ``log_m``
    are floats and the threshold is ``exp`` of their *exact* difference. Fast path: float
    bounds on the threshold (subtraction within one rounding, ``exp`` within ``2**-44``).
    Slow path (probability about ``2**-40`` per call): ``arb`` at growing precision with 64
    more bits of ``U`` per round; it ends with probability 1.
    """
    decided = accept_fast(u, log_f, log_m)
    return _accept_slow(u, log_f, log_m, rng) if decided is None else decided


def accept_fast(u, log_f, log_m):
    """The fast path of :func:`accept`: True, False, or None when the 53 bits do not decide."""
    if log_f >= log_m:
        return True
    diff = log_f - log_m
    rnd = abs(diff) * 2.0 * _U53
    t_lo = math.exp(diff - rnd) * (1.0 - _LIBM_REL) if diff - rnd > -745.0 else 0.0
    t_hi = math.exp(diff + rnd) * (1.0 + _LIBM_REL) if diff + rnd > -745.0 else 0.0
    t_hi = max(t_hi, 5e-324)  # a true upper bound even when exp underflows
    if u + _U53 <= t_lo:
        return True
    if u >= t_hi:
        return False
    return None


def _accept_slow(u, log_f, log_m, rng):
    from flint import arb

    return decide_below(u, lambda: (arb(log_f) - arb(log_m)).exp(), rng)


def decide_below(u, threshold, rng):
    """Decide ``U < t`` exactly for ``U = u + 2**-53 V`` (``V`` a fresh real uniform).

    ``u`` is a multiple of ``2**-53`` in ``[0, 1)`` (the top 53 bits of ``U``) and
    ``threshold()`` returns an ``arb`` ball that contains the real ``t`` at the current
    ``flint.ctx.prec``. Each round appends 64 random bits to ``U`` and raises the precision
    by 64 bits, until the two balls are disjoint; ``U = t`` has probability 0, so this ends
    with probability 1. Used by :func:`accept` and by the 1-D line release
    (:mod:`dpreg._kng_line`) when their float bounds do not decide.
    """
    from flint import arb, ctx

    num, bits = int(u * 2.0**53), 53
    old = ctx.prec
    try:
        while True:
            num = (num << 64) | int(random_words(rng, 1)[0])
            bits += 64
            ctx.prec = bits + 64
            half = arb(2) ** (-(bits + 1))
            U = arb(arb(2 * num + 1) * half, half)  # [num, num + 1] / 2^bits
            t = threshold()
            if U < t:
                return True
            if U > t:
                return False
    finally:
        ctx.prec = old


def float_scale(epsilon, sensitivity, ball, n, jump_bound):
    """The density scale ``s`` that makes the grid release epsilon-DP as computed.

    The sampler evaluates ``log f~(c_k) = fl(-s ||g~(c_k)||_K)`` where ``g~`` is the gradient
    at the cell centre summed in floating point (exact indicators, :func:`indicators_at`), and
    compares it with a float envelope. With ``|V_ij| <= b_j`` (``jump_bound``, public) and
    ``|offset_j| <= n b_j``, every coordinate of ``g~`` is within
    ``e_j = (4 n + 1000) u 2 n b_j`` of the exact ``g`` (the bound the envelope uses; ``u`` the
    machine epsilon), so ``| ||g~|| - ||g|| | <= A_1 = sum_j e_j ||e_j||_K``; the norm, the
    product with ``s`` and the envelope's logarithms add relative roundings, covered by
    ``A_2 = 2e-12 G`` with ``G = 2 n sum_j b_j ||e_j||_K >= ||g||_K``, and by ``rho = 1e-9``
    (absolute, for the logarithms of volumes and integer weights). So the accepted cell has
    probability ``p_D(k) = exp(+-2 eta) q_D(k) / Z_D`` with ``q_D(k) = exp(-s ||g_D(c_k)||)``
    and ``eta = s (A_1 + A_2) + rho`` -- for every history of the adaptive sampler, because
    each proposal accepts ``k`` with probability proportional to ``exp(+-eta) q_D(k)`` (module
    docstring of :mod:`dpreg._kng_exact`). With ``|| g_D(c) - g_D'(c) ||_K <= Delta`` at every
    point (the KNG sensitivity, which holds for any indicator values),
    ``p_D(k) / p_D'(k) <= exp(2 s Delta + 4 eta)``, which is ``exp(epsilon)`` for

        s = (epsilon - 4 rho) / (2 Delta + 4 (A_1 + A_2)).

    Examples
    --------
    >>> from dpreg._kng_grid import float_scale
    >>> from dpreg.noise.balls import make_ball
    >>> s = float_scale(1.0, 1.0, make_ball("linf", 2), 10_000, [1.0, 1.0])
    >>> bool(0.4999 < s < 0.5)
    True
    """
    b = np.asarray(jump_bound, dtype=float)
    unit = np.asarray(ball.norm(np.eye(b.size)), dtype=float)
    n = float(n)
    err = (4.0 * n + 1000.0) * np.finfo(float).eps * 2.0 * n * b
    a1 = float(np.sum(err * unit))
    a2 = 2e-12 * 2.0 * n * float(np.sum(b * unit))
    s = (float(epsilon) - 4.0 * _LOG_ERROR) / (2.0 * float(sensitivity) + 4.0 * (a1 + a2))
    if not s > 0.0:
        check_grid_epsilon(epsilon)  # raises: s > 0 exactly when epsilon > EPSILON_MIN
        raise ValueError("epsilon is too small for the float error of the KNG gradient sums.")
    return s


def check_grid_epsilon(epsilon):
    """Raise ``ValueError`` unless ``epsilon > EPSILON_MIN`` (a rule on a public parameter:
    callers run it before the spend, so that :func:`float_scale` cannot fail after it).

    Examples
    --------
    >>> from dpreg._kng_grid import EPSILON_MIN, check_grid_epsilon
    >>> check_grid_epsilon(1e-8)
    >>> try:
    ...     check_grid_epsilon(EPSILON_MIN)
    ... except ValueError:
    ...     print("refused")
    refused
    """
    if not float(epsilon) > EPSILON_MIN:
        raise ValueError(
            f"epsilon must exceed {EPSILON_MIN:g} for the exact KNG sampler: its grid release "
            f"pays for the float error of the log-densities with an absolute {EPSILON_MIN:g} of "
            f"epsilon (dpreg._kng_grid.float_scale), so nothing is left below it; got "
            f"{float(epsilon)!r}."
        )
