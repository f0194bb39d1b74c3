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

from .._validation import check_random_state
from ..noise import LaplaceMechanism
from ._common import check_interval, check_values, spend


def mean_sensitivity(n, lower, upper):
    """Replace-one sensitivity of the mean of ``n`` values in ``[lower, upper]``."""
    return (upper - lower) / n


def var_sensitivity(n, lower, upper):
    """Replace-one sensitivity of the population variance of ``n`` values in ``[lower, upper]``."""
    return (n - 1) * (upper - lower) ** 2 / n**2


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
    noisy = _laplace(x.mean(), sens, epsilon, rng, fallback=(lower + upper) / 2.0)
    return min(max(noisy, lower), upper)


def private_var(values, lower, upper, epsilon, rng):
    """Noisy clamped population variance (no validation, no accounting)."""
    x = values.clip(lower, upper)
    noisy = _laplace(x.var(), var_sensitivity(x.size, lower, upper), epsilon, rng, fallback=0.0)
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
