r"""Private mean, variance and standard deviation of bounded values (Laplace mechanism).

Values are clipped into the public interval ``[lower, upper]`` (width ``w = upper - lower``);
``n`` is public (replace-one adjacency).

Mean. ``mean = (1/n) sum_i x_i``; replacing one value moves it by at most ``w / n``.

Variance (population, ``ddof=0``). Write ``var = 1/(2 n^2) sum_{i,j} (x_i - x_j)^2``. Replacing
``x_1`` by ``x_1'`` changes only the pairs that contain index 1:

    var' - var = (1/n^2) sum_{j != 1} [ (x_1' - x_j)^2 - (x_1 - x_j)^2 ],

and every bracket lies in ``[-w^2, w^2]``, so ``|var' - var| <= (n - 1) w^2 / n^2``. The bound
is attained (n = 2, values at the two ends), see ``tests/test_stats_sensitivity.py``.

Each statistic is released with Laplace noise of scale ``sensitivity / epsilon``
(:class:`dpreg.noise.LaplaceMechanism`, epsilon-DP). Clamping the noisy mean into
``[lower, upper]`` and the noisy variance into ``[0, w^2 / 4]`` (the largest variance of values
in an interval of width ``w``) is post-processing. ``std`` is the square root of the private
variance (post-processing, same budget).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_random_state
from ..noise import LaplaceMechanism
from ._common import check_interval, check_values, spend


def mean_sensitivity(n, lower, upper):
    """Replace-one sensitivity of the mean of ``n`` values in ``[lower, upper]``."""
    return (upper - lower) / n


def var_sensitivity(n, lower, upper):
    """Replace-one sensitivity of the population variance of ``n`` values in ``[lower, upper]``."""
    sens = (n - 1) * (upper - lower) ** 2 / n**2
    if sens == float("inf"):  # (n - 1) w^2 passed 1.8e308 (w^2 is finite): reorder
        sens = (n - 1) / n**2 * (upper - lower) ** 2
    return sens


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


def _centred(x, lower, upper):
    """``(mid, half, z)`` with ``x = mid + half * z`` and ``z`` in [-1, 1]: the overflow-free
    form of values near +-1.8e308 (``lower / 2 + upper / 2`` cannot overflow, ``half`` is finite
    because the width is)."""
    mid, half = lower / 2.0 + upper / 2.0, (upper - lower) / 2.0
    return mid, half, (x - mid) / half


def _laplace(value, sensitivity, epsilon, rng, fallback):
    """Laplace release; a sensitivity that is 0 (n = 1 for the variance, or a width so small
    that it underflows) returns the data-independent ``fallback`` instead of the exact value."""
    if not sensitivity > 0:
        return float(fallback)
    return float(LaplaceMechanism(epsilon, sensitivity, random_state=rng).randomise(value))


def private_mean(values, lower, upper, epsilon, rng):
    """Noisy clamped mean (no validation, no accounting: callers do both first)."""
    x = values.clip(lower, upper)
    sens = mean_sensitivity(x.size, lower, upper)
    with np.errstate(over="ignore", invalid="ignore"):  # after the spend: nothing may raise
        value = x.mean()
    if not np.isfinite(value):  # the sum passed 1.8e308: the same mean, computed centred
        mid, half, z = _centred(x, lower, upper)
        value = mid + half * z.mean()
    noisy = _laplace(value, sens, epsilon, rng, fallback=(lower + upper) / 2.0)
    return min(max(noisy, lower), upper)


def private_var(values, lower, upper, epsilon, rng):
    """Noisy clamped population variance (no validation, no accounting)."""
    x = values.clip(lower, upper)
    with np.errstate(over="ignore", invalid="ignore"):  # after the spend: nothing may raise
        value = x.var()
    if not np.isfinite(value):  # a sum passed 1.8e308: the same variance, computed centred
        _, half, z = _centred(x, lower, upper)
        value = half**2 * z.var()
    noisy = _laplace(value, var_sensitivity(x.size, lower, upper), epsilon, rng, fallback=0.0)
    return min(max(noisy, 0.0), (upper - lower) ** 2 / 4.0)


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
    epsilon = spend(accountant, epsilon)
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
    epsilon = spend(accountant, epsilon)
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
