"""Validation shared by the private statistics: everything is checked before any budget is spent."""

from __future__ import annotations

import numbers
import sys
import warnings

import numpy as np

from .._validation import check_release_epsilon
from ..accounting import check_accountant
from ..exceptions import PrivacyLeakWarning

_FLOAT_MAX = sys.float_info.max


def check_values(a, name="a"):
    """Return ``a`` flattened to a finite float vector with at least one entry (else ValueError)."""
    try:
        values = np.asarray(a, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be array-like of numbers.") from None
    if values.size == 0:
        raise ValueError(f"{name} must not be empty.")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains NaN or infinity; remove or impute them first.")
    return values


def is_number(value):
    """A real number (Python or numpy), not a bool and not a string that looks like one."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_interval(bounds, values=None, name="bounds", finite_width=True):
    """Validate a public interval ``(lower, upper)`` with ``lower < upper``.

    ``bounds=None`` reads the interval from ``values`` with a :class:`PrivacyLeakWarning`
    (the min and max of private data are not private), as every dpreg estimator does.
    ``finite_width`` also requires ``upper - lower`` to be a finite float (it is a
    sensitivity, a bin width or a sampling domain for every caller but the asinh measure):
    an interval such as ``(-1.7e308, 1.7e308)`` is refused here, before the spend, instead of
    overflowing after it.
    """
    lo, hi = _interval(bounds, values, name)
    if finite_width and not np.isfinite(hi - lo):
        raise ValueError(
            f"{name} must have a finite width upper - lower (at most 1.8e308), got "
            f"({lo!r}, {hi!r})."
        )
    return lo, hi


def _interval(bounds, values, name):
    if bounds is None:
        if values is None:
            raise ValueError(f"{name} must be given.")
        warnings.warn(
            f"{name} were not given, so they are computed from the data. This leaks privacy: "
            f"pass data-independent {name}=(lower, upper) to get the stated guarantee.",
            PrivacyLeakWarning,
            stacklevel=3,
        )
        lo, hi = float(np.min(values)), float(np.max(values))
        if lo == hi:  # a degenerate interval would give a zero sensitivity
            pad = max(0.5, abs(lo) * 2.0**-40)  # 0.5 would vanish next to 1e300
            # capped at the largest float: next to +-1.8e308 the padded end was inf, which
            # the KNG refused after the spend (the other end still moves, so lo < hi)
            lo, hi = max(lo - pad, -_FLOAT_MAX), min(hi + pad, _FLOAT_MAX)
        return lo, hi
    msg = f"{name} must be a pair of numbers (lower, upper), got {bounds!r}."
    try:
        pair = list(bounds)
    except TypeError:
        raise ValueError(msg) from None
    # float() would read strings: bounds="01" was the interval (0, 1)
    if isinstance(bounds, (str, bytes)) or not all(map(is_number, pair)):
        raise ValueError(msg)
    try:
        lo, hi = (float(b) for b in pair)
    except (TypeError, ValueError):
        raise ValueError(msg) from None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{name} must be finite, got {bounds!r}.")
    if not lo < hi:
        raise ValueError(f"{name} needs lower < upper, got {bounds!r}.")
    return lo, hi


#: The largest noise scale a release may have: far below the float range, so the noisy value
#: (and the mechanism's rounded-up scale) stay finite.
NOISE_SCALE_MAX = 1e200


def check_shares(shares, sensitivity=1.0):
    """Before the spend: every per-release epsilon (computed by the caller with the formula it
    uses after the spend) is a normal float and its noise scale ``sensitivity / share`` is at
    most :data:`NOISE_SCALE_MAX`; else a ValueError, so nothing raises after the charge."""
    for share in shares:
        share = float(share)
        if not share >= sys.float_info.min:
            raise ValueError(
                f"the budget per release underflows: epsilon share {share!r} is below the "
                f"smallest normal float; raise epsilon or release fewer statistics."
            )
        scale = float(sensitivity) / share  # Python floats: an overflow is inf, silently
        if not scale <= NOISE_SCALE_MAX:
            raise ValueError(
                f"the noise scale sensitivity / epsilon = {scale!r} exceeds "
                f"{NOISE_SCALE_MAX:g}; raise epsilon."
            )


def spend(accountant, epsilon, n_releases=1, sensitivity=1.0):
    """Validate ``epsilon`` and ``accountant`` and charge the budget (call before any release).

    ``n_releases`` equal shares ``epsilon / n_releases`` of noise scale
    ``sensitivity / share`` are checked first (:func:`check_shares`)."""
    epsilon = check_release_epsilon(epsilon)
    check_shares([epsilon / n_releases], sensitivity)
    accountant = check_accountant(accountant)
    if accountant is not None:
        accountant.spend(epsilon, 0.0)
    return epsilon
