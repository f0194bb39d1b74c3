r"""Private quantiles: the exact intercept-only KNG sampler on a data-independent interval.

Mechanism
---------
For a level ``q`` in [0, 1] and values ``a_1..a_n`` the check loss
``sum_i rho_q(a_i - theta)`` has the (sub)gradient ``g(theta) = #{i : a_i <= theta} - q n``.
Replacing one value changes the count by at most one, so ``|g_D(theta) - g_D'(theta)| <= 1``
for every ``theta``: the sensitivity is ``Delta = 1`` (SPEC section 5, intercept-only case,
where ``2 max(q, 1-q) C_X`` is replaced by the exact bound 1 of one indicator).
K-norm gradient mechanism (:class:`dpreg.kng.KNG`, the same code path as
:class:`~dpreg.KNGQuantileRegressor`) releases one draw from

    f_D(theta)  ∝  exp( -epsilon / 2 * | #{a_i <= theta} - q n | )     on [lower, upper],

which is epsilon-DP by the KNG argument in :mod:`dpreg.kng` (half of the budget pays for the
exponent, half for the normalising constant). The density is piecewise constant with
breakpoints at the data, so :meth:`dpreg.kng.KNG.sample_exact` draws it **exactly** (this is
Smith's 2011 private quantile). The interval ``[lower, upper]`` must not depend on the data.

Base measure (``measure="asinh"``)
---------------------------------
The KNG guarantee holds for a density with respect to any data-independent base measure. With
``measure="asinh"`` the sampler works in ``u = asinh(theta / s)`` (``s = asinh_scale``, public):
the count ``#{a_i <= theta}`` equals ``#{asinh(a_i/s) <= u}``, so this is the same mechanism
on the transformed values, and ``theta = s sinh(u)`` is post-processing. In ``theta`` units it
is the exponential mechanism with base measure ``dtheta / sqrt(s^2 + theta^2)``: a very wide
candidate interval such as ``(-1e9, 1e9)`` then costs ``log``-many units of mass instead of
linearly many, which is what lets :func:`dpreg._bounds.private_bounds` work in the user's raw
units without a bound given by hand.

Several levels split the budget equally (basic composition); sorting the released values (so
that they are monotone in ``q``) is post-processing.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_random_state
from ..kng import KNG, StepGradient
from ._common import check_interval, check_values, is_number, spend

MEASURES = ("uniform", "asinh")


def check_levels(q, name="q"):
    """Return the quantile levels as a 1-D float array in [0, 1] and whether ``q`` was scalar."""
    scalar = isinstance(q, numbers.Real) and not isinstance(q, bool)
    msg = f"{name} must be a number or array of numbers in [0, 1], got {q!r}."
    try:
        raw = np.asarray(q)
    except (TypeError, ValueError):
        raise ValueError(msg) from None
    # a float conversion would read strings: q="0.5" was the median
    if raw.dtype.kind not in "iuf" and not (
        raw.dtype.kind == "O" and all(map(is_number, raw.ravel().tolist()))
    ):
        raise ValueError(msg)
    try:
        levels = np.atleast_1d(raw.astype(float)).ravel()
    except (TypeError, ValueError):
        raise ValueError(msg) from None
    if levels.size == 0 or not np.all((levels >= 0) & (levels <= 1)):
        raise ValueError(f"{name} must lie in [0, 1], got {q!r}.")
    return levels, scalar


def check_measure(measure, asinh_scale):
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}.")
    if (
        isinstance(asinh_scale, bool)
        or not isinstance(asinh_scale, numbers.Real)
        or not np.isfinite(asinh_scale)
        or asinh_scale <= 0
    ):
        raise ValueError(f"asinh_scale must be a finite number > 0, got {asinh_scale!r}.")
    return float(asinh_scale)


def _to_u(x, measure, s):
    """``asinh(x / s)``, finite for every finite ``x``. It runs on the private values after
    the spend, where nothing may raise (also under warnings-as-errors): when ``x / s``
    overflows (``|x| > 1.8e308 s``, e.g. ``|x| > 1.8e306`` at ``s = 0.01``) the value is
    ``sign(x) (log 2 + log|x| - log s)``, the expansion ``asinh(z) = log(2 z) + O(z^-2)``,
    exact to double precision there, so the order of the values (all the KNG count uses) is
    kept. Other values are unchanged bit for bit."""
    if measure != "asinh":
        return x
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # unused entries
        u = np.arcsinh(x / s)
        far = np.isinf(u)
        if np.any(far):
            u = np.where(far, np.sign(x) * (np.log(np.abs(x)) + (np.log(2.0) - np.log(s))), u)
    return u


def _from_u(u, measure, s):
    """``s sinh(u)``; an overflow to +-inf (past 1.8e308) is clipped to the public interval by
    the caller (:func:`private_quantile_draws`), so it is not a warning either."""
    if measure != "asinh":
        return u
    with np.errstate(over="ignore"):
        return s * np.sinh(u)


def quantile_mechanism(values, level, epsilon, lower, upper, measure="uniform", asinh_scale=1.0):
    """The :class:`~dpreg.kng.KNG` object whose exact draw is the private ``level``-quantile.

    Works in the sampling coordinate ``u`` (``theta`` itself, or ``asinh(theta / s)``); use
    :func:`private_quantile_draws` for draws in the user's units. Exposed for the KS tests.
    """
    c = _to_u(values, measure, asinh_scale)
    n = c.size
    grad = StepGradient(np.ones((n, 1)), c, offset=[-float(level) * n])
    lo, hi = _to_u(np.array([lower, upper]), measure, asinh_scale)
    return KNG(grad, epsilon=epsilon, sensitivity=1.0, norm="linf", lower=[lo], upper=[hi])


def private_quantile_draws(values, levels, epsilon_each, lower, upper, measure, asinh_scale, rng):
    """One exact KNG draw per level (no validation, no accounting: callers do both first).

    If the public interval's image ``[asinh(lower / s), asinh(upper / s)]`` is a single float
    (an interval narrower than the float resolution of ``u``, e.g. one ulp wide at ``s =
    1e-310``, where ``u`` is about 714), there is no interval to sample on; every draw is then
    the interval's midpoint, a function of the public inputs only (0-DP, so within the
    budget already charged), instead of an exception after the spend.
    """
    out = np.empty(len(levels))
    lo_u, hi_u = _to_u(np.array([lower, upper], dtype=float), measure, asinh_scale)
    if not lo_u < hi_u:
        out[:] = 0.5 * float(lower) + 0.5 * float(upper)
        return np.clip(out, lower, upper)
    for k, level in enumerate(levels):
        mech = quantile_mechanism(values, level, epsilon_each, lower, upper, measure, asinh_scale)
        out[k] = _from_u(mech.sample_exact(random_state=rng)[0], measure, asinh_scale)
    # sinh/arcsinh round-off must not push a draw outside the public interval
    return np.clip(out, lower, upper)


def quantile(
    a,
    q,
    epsilon=1.0,
    bounds=None,
    *,
    measure="uniform",
    asinh_scale=1.0,
    random_state=None,
    accountant=None,
):
    """Differentially private quantile(s) of ``a`` (flattened), by the exact KNG sampler.

    Parameters
    ----------
    a : array-like
        Values (flattened; must be finite).
    q : float or array-like of floats in [0, 1]
        Level(s). Several levels share ``epsilon`` equally.
    epsilon : float, default=1.0
        Total privacy budget of the call.
    bounds : (lower, upper), optional
        Data-independent interval that contains the answer. ``None`` reads it from the data
        with a :class:`~dpreg.exceptions.PrivacyLeakWarning` (not private).
    measure : {"uniform", "asinh"}, default="uniform"
        Base measure of the exponential mechanism (see the module docstring). ``"asinh"``
        suits very wide intervals (raw units, unknown scale).
    asinh_scale : float, default=1.0
        Public scale ``s`` of the asinh measure (the resolution near 0).
    random_state : None, int, RandomState or Generator
    accountant : BudgetAccountant, optional
        Charged ``(epsilon, 0)`` after validation and before the data are used.

    Returns
    -------
    float or ndarray
        A float for a scalar ``q``, else an array sorted like ``q`` (monotone rearrangement).

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.tools import quantile
    >>> a = np.arange(1001.0)
    >>> m = quantile(a, 0.5, epsilon=1.0, bounds=(-1e4, 1e4), random_state=0)
    >>> bool(abs(m - 500) < 30)
    True
    """
    values = check_values(a)
    levels, scalar = check_levels(q)
    s = check_measure(measure, asinh_scale)
    # the uniform measure samples on [lower, upper] itself: its width must be a finite float
    lower, upper = check_interval(bounds, values, finite_width=measure != "asinh")
    rng = check_random_state(random_state)
    epsilon = spend(accountant, epsilon, n_releases=levels.size)
    draws = private_quantile_draws(
        values, levels, epsilon / levels.size, lower, upper, measure, s, rng
    )
    order = np.argsort(levels, kind="stable")
    draws[order] = np.sort(draws)
    return float(draws[0]) if scalar else draws


def median(a, epsilon=1.0, bounds=None, **kwargs):
    """Differentially private median: :func:`quantile` at ``q = 0.5``.

    Examples
    --------
    >>> from dpreg.tools import median
    >>> bool(abs(median(range(1001), epsilon=1.0, bounds=(0, 2000), random_state=0) - 500) < 30)
    True
    """
    return quantile(a, 0.5, epsilon=epsilon, bounds=bounds, **kwargs)
