r"""Private mean, variance and standard deviation of bounded values (Laplace mechanism).

Values are clipped into the public interval ``[lower, upper]`` (width ``w = upper - lower``);
``n`` is public (replace-one adjacency).

Real-arithmetic sensitivities (:func:`mean_sensitivity`, :func:`var_sensitivity`).
Mean: ``mean = (1/n) sum_i x_i``; replacing one value moves it by at most ``w / n``.
Variance (population, ``ddof=0``): write ``var = 1/(2 n^2) sum_{i,j} (x_i - x_j)^2``. Replacing
``x_1`` by ``x_1'`` changes only the pairs that contain index 1:

    var' - var = (1/n^2) sum_{j != 1} [ (x_1' - x_j)^2 - (x_1 - x_j)^2 ],

and every bracket lies in ``[-w^2, w^2]``, so ``|var' - var| <= (n - 1) w^2 / n^2``. The bound
is attained (n = 2, values at the two ends), see ``tests/test_stats_sensitivity.py``.

What is released: float-safe statistics of centred terms
----------------------------------------------------------
The Laplace release (``LaplaceMechanism.randomise``) is epsilon-DP for the sensitivity of the
*computed* float it is given (``docs/floating_point.md``, sections 3-4). A float mean or variance
can move far more than the real sensitivity: with bounds ``(2**50, 2**50 + 1)`` and ``n = 1000``,
one replaced value moved ``fl(mean)`` by 0.25 against ``w / n = 0.001``, because the sum of the
raw values carries an absolute rounding error of order ``n u 2**50``. Both releases are
therefore computed on public, per-row, centred terms (``u = 2**-53``, ``gamma_k = k u / (1 - k u)``,
Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section 3.1 and eq. 4.4):

    mid = fl(lower / 2 + upper / 2),   half = fl((upper - lower) / 2),
    z_i = clip(fl(fl(clip(x_i, lower, upper) - mid) / half), -1, 1).

Each computed ``z_i`` is a deterministic function of ``x_i`` and the public bounds alone, and
lies in ``[-1, 1]``: replacing one row replaces one ``z_i`` and nothing else. Below, ``z_i``
denotes these computed floats, treated as exact numbers.

Sums. Every sum below is Python's ``math.fsum`` (Shewchuk's exact partial sums), which
returns the exact sum rounded once: ``|fsum(t) - sum t_i| <= u |sum t_i|`` for a normal result
and at most half a subnormal step otherwise. Python's documentation allows one extra rounding
of an intermediate on builds with extended-precision addition, so we take one unit in the last
place: ``e(T) = 2 u T + 2**-1074`` for terms whose exact sum is at most ``T`` in absolute
value (:func:`_fsum_error`). A pairwise or naive float sum would need Higham's order-free
bound ``gamma_{n-1} sum |t_i|``, which grows like ``n^2 u`` against the real sensitivities
(2.2e-2 of the variance's noise at ``n = 10**7``); ``fsum`` keeps the float terms at the level
of ``u`` for every ``n``, for about 40 ms per million values.

Mean. ``S = fsum(z_i)`` satisfies ``|S - sum_i z_i| <= e_1 = e(n)``. The exact sum moves by at
most 2 when a row is replaced, so the computed ``S`` moves by at most ``2 + 2 e_1``
(:func:`mean_sum_sensitivity`, which rounds it up by a relative 1e-12), and ``randomise(S)``
with that sensitivity is epsilon-DP. The mean
``mid + half * clip(S_noisy / n, -1, 1)``, clamped into ``[lower, upper]``, is post-processing.

Variance. Two passes, in units of ``z``:

    s = fsum(z_i),  m = clip(fl(s / n), -1, 1),  d_i = fl(z_i - m),  q_i = fl(d_i^2),
    Q = fsum(q_i),  V = fl(Q / n).

Let ``zbar`` be the exact mean of the ``z_i`` and ``Var = (1/n) sum (z_i - zbar)^2`` their
exact population variance. Each step, in the standard model ``fl(a op b) = (a op b)(1 + delta)
+ eta``, ``|delta| <= u``, ``|eta| <= 2**-1075`` (``eta`` only for a product or quotient that
underflows; a sum or difference that lands among the subnormals is exact):

1. ``|s - n zbar| <= e_1``; ``fl(s / n) = (s / n)(1 + delta) + eta``, so
   ``|fl(s / n) - zbar| <= e_1 / n + u (1 + e_1 / n) + 2**-1074 =: a``. Clipping into
   ``[-1, 1]``, which contains ``zbar``, can only bring ``m`` closer: ``|m - zbar| <= a``.
2. ``|z_i - m| <= 2``, so ``|d_i| <= 2`` (rounding is monotone and 2 is a float) and
   ``q_i <= 4``; ``q_i = (z_i - m)^2 (1 + delta_i)^2 (1 + delta_i') + eta_i``, so
   ``|q_i - (z_i - m)^2| <= gamma_3 (z_i - m)^2 + 2**-1075 <= 4 gamma_3 + 2**-1074``, and
   summed over the rows ``e_sq = n (4 gamma_3 + 2**-1074)``.
3. ``|Q - sum q_i| <= e_Q = e(4 n)`` (the ``q_i`` lie in ``[0, 4]``).
4. ``|V - Q / n| <= u Q / n + 2**-1075 <= u (4 + e_Q / n) + 2**-1074 =: e_div``.
5. ``sum (z_i - m)^2 = sum (z_i - zbar)^2 + n (zbar - m)^2`` (the cross term vanishes), so
   ``0 <= (1/n) sum (z_i - m)^2 - Var <= a^2``.

Together, ``E(n) = a^2 + (e_sq + e_Q) / n + e_div`` bounds ``|V - Var|``
(:func:`var_float_error`, which adds a relative margin of 1e-9 for its own rounding). ``Var``
is the variance of ``n`` values in an interval of width 2, with real sensitivity
``4 (n - 1) / n^2``; the computed ``V`` therefore moves by at most
``4 (n - 1) / n^2 + 2 E(n)`` (:func:`var_z_sensitivity`, rounded up by a relative 1e-12). The
noisy ``V`` is clamped into ``[0, 1]`` (the largest variance of values in ``[-1, 1]``) and
scaled by ``half^2``: the variance in the data's units, in ``[0, w^2 / 4]``, is
post-processing. For ``n = 1`` the computed ``V`` is 0 for every data set (``m = z_1``
exactly, so ``d_1 = 0``): nothing depends on the data and 0 is returned. ``std`` is the
square root of the private variance (post-processing, same budget). A ``half`` that underflows
to 0 (an interval one subnormal step wide) has nothing to release either: the mean returns the
data-independent ``mid`` and the variance 0.

Cost. With ``fsum`` the float terms are of order ``u`` (mean: ``2 e(n) ~ 4 n u`` against 2;
variance: ``E(n) ~ 10 u`` against ``4 (n - 1) / n^2``), so the noise scale exceeds the real
calibration's by a relative ``2 n u``-ish: about 2e-13 at ``n = 1000`` and 2e-9 at
``n = 10**7`` (:func:`mean_sum_sensitivity` and :func:`var_z_sensitivity` print the exact
values).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_random_state
from ..noise import LaplaceMechanism
from ._common import check_interval, check_values, spend

_U = 2.0**-53  # unit roundoff of float64
_TINY = 2.0**-1074  # the smallest subnormal: bounds the absolute error of an underflow


def _gamma(k):
    return k * _U / (1.0 - k * _U)


def mean_sensitivity(n, lower, upper):
    """Replace-one sensitivity of the (real) mean of ``n`` values in ``[lower, upper]``."""
    return (float(upper) - float(lower)) / n


def var_sensitivity(n, lower, upper):
    """Replace-one sensitivity of the (real) population variance of ``n`` values in
    ``[lower, upper]``. Python floats: numpy scalars would warn on an overflow, which the
    fallback below handles."""
    width = float(upper) - float(lower)
    sens = (n - 1) * (width * width) / n**2  # Python floats: an overflow is inf, silently
    if sens == float("inf"):  # (n - 1) w^2 passed 1.8e308: reorder
        sens = (n - 1) / n**2 * width * width
    return sens


def _fsum_error(total):
    """Bound on ``|math.fsum(t) - sum t_i|`` when ``|sum t_i| <= total`` (module docstring:
    one unit in the last place, plus a subnormal step)."""
    return 2.0 * _U * float(total) + _TINY


def _fsum(a):
    """The sum the releases use: exact, rounded once (``math.fsum``)."""
    return math.fsum(np.ravel(a))


def mean_sum_sensitivity(n):
    """Sensitivity of the computed ``S = fsum(z_i)``, ``z_i`` in [-1, 1] (module docstring).

    Examples
    --------
    >>> from dpreg.tools._moments import mean_sum_sensitivity
    >>> 2.0 < mean_sum_sensitivity(10**7) < 2.0 + 1e-8
    True
    """
    # the relative margin covers the rounding of this float sum itself (it could round down)
    return (2.0 + 2.0 * _fsum_error(n)) * (1.0 + 1e-12)


def var_float_error(n):
    """``E(n)``: bound on ``|V - Var|`` for the two-pass ``V`` of the module docstring."""
    n = int(n)
    e_1 = _fsum_error(n)
    a = e_1 / n + _U * (1.0 + e_1 / n) + _TINY
    e_sq = n * (4.0 * _gamma(3) + _TINY)
    e_q = _fsum_error(4.0 * n)
    e_div = _U * (4.0 + e_q / n) + _TINY
    return (a * a + (e_sq + e_q) / n + e_div) * (1.0 + 1e-9)


def var_z_sensitivity(n):
    """Sensitivity of the computed two-pass variance ``V`` of ``n`` terms in [-1, 1]."""
    n = int(n)
    # the relative margin covers the roundings of this expression itself
    return (4.0 * (n - 1) / n**2 + 2.0 * var_float_error(n)) * (1.0 + 1e-12)


def _check_var_width(lower, upper):
    """Before the spend: the variance bounds ``w^2 / 4`` and its sensitivity need a finite
    ``w^2`` (``w <= 1.3e154``); a wider public interval is a ValueError here rather than an
    ``OverflowError`` after the budget is charged."""
    width = float(upper - lower)
    if not np.isfinite(width * width):  # a Python float product: inf, no warning
        raise ValueError(
            f"bounds are too wide for the variance: (upper - lower)^2 overflows a float "
            f"(width {upper - lower:g} > 1.3e154), got ({lower!r}, {upper!r})."
        )


def _centre(lower, upper):
    """``(mid, half)``: ``lower / 2 + upper / 2`` cannot overflow, and ``half`` is finite
    because the width is (checked before the spend)."""
    return lower / 2.0 + upper / 2.0, (upper - lower) / 2.0


def _centred_terms(x, lower, upper):
    """``z_i = clip((clip(x_i) - mid) / half, -1, 1)``: per row, in [-1, 1] (module
    docstring); clipping ``x`` first keeps ``x - mid`` finite. Needs ``half > 0``."""
    mid, half = _centre(lower, upper)
    return ((x.clip(lower, upper) - mid) / half).clip(-1.0, 1.0)


def _mean_statistic(z):
    """The computed ``S = fsum(z_i)`` that the mean releases."""
    return _fsum(z)


def _var_statistic(z):
    """The computed two-pass ``V`` that the variance releases (the steps bounded in the
    module docstring, in that order)."""
    n = z.size
    m = min(max(_fsum(z) / n, -1.0), 1.0)
    d = z - m
    return _fsum(d * d) / n


def _release(value, sensitivity, epsilon, rng):
    return float(LaplaceMechanism(epsilon, sensitivity, random_state=rng).randomise(value))


def private_mean(values, lower, upper, epsilon, rng):
    """Noisy clamped mean (no validation, no accounting: callers do both first)."""
    lower, upper = float(lower), float(upper)
    mid, half = _centre(lower, upper)
    if not half > 0:  # a width of one subnormal step: nothing data-dependent to release
        return min(max(mid, lower), upper)
    z = _centred_terms(values, lower, upper)
    noisy = _release(_mean_statistic(z), mean_sum_sensitivity(z.size), epsilon, rng)
    t = min(max(noisy / z.size, -1.0), 1.0)  # the mean lies in [lower, upper]: post-processing
    return min(max(mid + half * t, lower), upper)


def private_var(values, lower, upper, epsilon, rng):
    """Noisy clamped population variance (no validation, no accounting)."""
    lower, upper = float(lower), float(upper)
    half = _centre(lower, upper)[1]
    if values.size == 1 or not half > 0:  # V is 0 for every data set (module docstring)
        return 0.0
    z = _centred_terms(values, lower, upper)
    noisy = _release(_var_statistic(z), var_z_sensitivity(z.size), epsilon, rng)
    return half * half * min(max(noisy, 0.0), 1.0)


def mean(a, epsilon=1.0, bounds=None, *, random_state=None, accountant=None):
    """Differentially private mean of ``a`` (flattened) clipped into ``bounds``.

    Parameters
    ----------
    a : array-like
        Finite values.
    epsilon : float, default=1.0
    bounds : (lower, upper), optional
        Public interval; values outside are clipped. ``None`` reads it from the data with a
        :class:`~dpreg.exceptions.PrivacyLeakWarning`.
    random_state : None, int, RandomState or Generator
    accountant : BudgetAccountant, optional
        Charged ``(epsilon, 0)`` after validation, before the data are used.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.tools import mean
    >>> x = np.random.default_rng(0).uniform(0, 10, size=10000)
    >>> bool(abs(mean(x, epsilon=1.0, bounds=(0, 10), random_state=0) - 5) < 0.1)
    True
    """
    values = check_values(a)
    lower, upper = check_interval(bounds, values)
    rng = check_random_state(random_state)
    epsilon = spend(accountant, epsilon, sensitivity=mean_sum_sensitivity(values.size))
    return private_mean(values, lower, upper, epsilon, rng)


def var(a, epsilon=1.0, bounds=None, *, random_state=None, accountant=None):
    """Differentially private population variance of ``a`` clipped into ``bounds``.

    Same parameters as :func:`mean`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.tools import var
    >>> x = np.random.default_rng(0).uniform(0, 10, size=10000)
    >>> bool(abs(var(x, epsilon=1.0, bounds=(0, 10), random_state=0) - 100 / 12) < 0.5)
    True
    """
    values = check_values(a)
    lower, upper = check_interval(bounds, values)
    _check_var_width(lower, upper)
    rng = check_random_state(random_state)
    epsilon = spend(accountant, epsilon, sensitivity=var_z_sensitivity(values.size))
    return private_var(values, lower, upper, epsilon, rng)


def std(a, epsilon=1.0, bounds=None, *, random_state=None, accountant=None):
    """Differentially private standard deviation: the square root of :func:`var`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.tools import std
    >>> x = np.random.default_rng(0).normal(size=10000).clip(-4, 4)
    >>> bool(abs(std(x, epsilon=1.0, bounds=(-4, 4), random_state=0) - 1) < 0.05)
    True
    """
    return var(a, epsilon, bounds, random_state=random_state, accountant=accountant) ** 0.5
