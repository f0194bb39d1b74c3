"""Validation shared by the private statistics: everything is checked before any budget is spent."""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import check_epsilon
from ..accounting import check_accountant
from ..exceptions import PrivacyLeakWarning


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
            lo, hi = lo - pad, hi + pad
        return lo, hi
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        msg = f"{name} must be a pair of numbers (lower, upper), got {bounds!r}."
        raise ValueError(msg) from None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{name} must be finite, got {bounds!r}.")
    if not lo < hi:
        raise ValueError(f"{name} needs lower < upper, got {bounds!r}.")
    return lo, hi


def spend(accountant, epsilon):
    """Validate ``epsilon`` and ``accountant`` and charge the budget (call before any release)."""
    epsilon = check_epsilon(epsilon)
    accountant = check_accountant(accountant)
    if accountant is not None:
        accountant.spend(epsilon, 0.0)
    return epsilon
