"""Parameter and data validation shared by every estimator and mechanism.

All checks raise :class:`ValueError` with a message that names the offending parameter, so a
user sees *what* is wrong at ``fit`` (or at mechanism construction) rather than deep inside a
sampler.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from . import _random
from .exceptions import PrivacyLeakWarning

NAMED_NORMS = ("l1", "l2", "linf")


# the largest privacy parameter a user may pass (docs/floating_point.md, section 5c): above it
# exp(epsilon) and epsilon**2 overflow after the spend (1e300 overflowed the logistic's
# (exp(epsilon / 2)) ** 2 and the functional mechanism's math.exp; the projection median did
# not finish in 10 CPU-min at 1e12, 0.3 CPU-s at 1e8); no guarantee is meaningful there. Only
# an upper cap: the internal shares of a valid epsilon are smaller, so they never trip it.
EPSILON_MAX = 1e8


def check_epsilon(epsilon, name="epsilon"):
    """Return ``epsilon`` as a float, requiring a finite positive number.

    The privacy parameter (``name="epsilon"``, also its internal shares) must also be at
    most ``EPSILON_MAX``; other positive quantities validated here (sensitivities, shares,
    radii) need not.
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise ValueError(f"{name} must be a positive real number, got {epsilon!r}.")
    epsilon = float(epsilon)
    if not np.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {epsilon!r}.")
    if name == "epsilon" and epsilon > EPSILON_MAX:
        raise ValueError(
            f"epsilon must be at most {EPSILON_MAX:g} (above, the calibration overflows in "
            f"floating point), got {epsilon!r}."
        )
    return epsilon


def check_delta(delta, name="delta", allow_zero=True):
    """Return ``delta`` as a float in [0, 1) (or (0, 1) when ``allow_zero`` is False)."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise ValueError(f"{name} must be a real number in [0, 1), got {delta!r}.")
    delta = float(delta)
    if not np.isfinite(delta) or delta < 0 or delta >= 1:
        raise ValueError(f"{name} must lie in [0, 1), got {delta!r}.")
    if not allow_zero and delta == 0:
        raise ValueError(f"{name} must be > 0 for this mechanism, got 0.")
    return delta


def check_sensitivity(sensitivity, name="sensitivity"):
    """Return a finite, positive sensitivity as a float."""
    return check_epsilon(sensitivity, name=name)


def check_dim(dim, name="dim"):
    """Return ``dim`` as a positive int."""
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise ValueError(f"{name} must be a positive integer, got {dim!r}.")
    return int(dim)


def check_norm(norm, allowed=NAMED_NORMS, allow_p=True, allow_ball=True):
    """Canonicalise a ``norm=`` argument.

    Returns one of the strings in ``allowed``, a float ``p >= 1`` (``inf`` maps to ``"linf"``,
    1 to ``"l1"``, 2 to ``"l2"``), or a ball object (anything with ``norm``, ``dim`` and
    ``sample_uniform``).
    """
    if isinstance(norm, str):
        key = norm.lower()
        if key in ("inf", "max"):
            key = "linf"
        if key in allowed:
            return key
        raise ValueError(
            f"Unknown norm {norm!r}; expected one of {list(allowed)}"
            + (", a number p >= 1" if allow_p else "")
            + (", or a ball" if allow_ball else "")
            + "."
        )
    if allow_p and isinstance(norm, numbers.Real) and not isinstance(norm, bool):
        p = float(norm)
        if np.isnan(p) or p < 1:
            raise ValueError(f"An lp norm needs p >= 1, got {norm!r}.")
        if np.isinf(p):
            return "linf"
        if p == 1:
            return "l1"
        if p == 2:
            return "l2"
        return p
    if allow_ball and all(hasattr(norm, a) for a in ("norm", "dim", "sample_uniform")):
        return norm
    raise ValueError(
        f"Invalid norm {norm!r}; expected one of {list(allowed)}"
        + (", a number p >= 1" if allow_p else "")
        + (", or a ball" if allow_ball else "")
        + "."
    )


def check_random_state(random_state):
    """Turn ``random_state`` into a numpy ``Generator`` (:func:`dpreg._random.check_random_state`).

    One implementation for the whole library: ``None`` gives a fresh cryptographically secure
    generator keyed from the operating system; a seed is reproducible (for tests only).
    """
    return _random.check_random_state(random_state)


def check_bounds(bounds, n_features, X=None, name="bounds"):
    """Validate ``bounds = (lower, upper)`` for ``n_features`` columns.

    ``lower``/``upper`` may be scalars or arrays of length ``n_features``. When ``bounds`` is
    None and data ``X`` is given, the bounds are read from the data with a
    :class:`~dpreg.exceptions.PrivacyLeakWarning` (this is *not* differentially private).

    Returns two float arrays of shape ``(n_features,)``.
    """
    if bounds is None:
        if X is None:
            raise ValueError(f"{name} must be given.")
        warnings.warn(
            f"{name} were not given, so they are computed from the data. This leaks privacy: "
            f"pass data-independent {name}=(lower, upper) to get the stated guarantee.",
            PrivacyLeakWarning,
            stacklevel=3,
        )
        X = np.asarray(X, dtype=float)
        if X.ndim == 1:
            X = X[:, None]
        return X.min(axis=0).astype(float), X.max(axis=0).astype(float)
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lower, upper), got {bounds!r}.") from None
    lower = _bound_vector(lower, n_features, f"{name}[0] (lower)")
    upper = _bound_vector(upper, n_features, f"{name}[1] (upper)")
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError(f"{name} must be finite.")
    if np.any(lower > upper):
        raise ValueError(f"{name}: every lower bound must be <= its upper bound.")
    return lower, upper


def _bound_vector(value, n_features, label):
    """One side of a bounds pair as a float array of shape ``(n_features,)``.

    A scalar applies to every feature; an array must have exactly one entry per feature. The
    message names the parameter and both lengths (numpy's own broadcast error names neither).
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{label} must be a number or an array of numbers: {value!r}.") from None
    if arr.ndim == 0:
        return np.full(n_features, float(arr))
    if arr.ndim != 1 or arr.shape[0] != n_features:
        raise ValueError(
            f"{label} has shape {arr.shape}, but the data have {n_features} column(s): give a "
            f"scalar or an array of length {n_features} (one value per column)."
        )
    return arr.copy()


def scale_to_unit(X, lower, upper):
    """Clip ``X`` column-wise into ``[lower, upper]`` and map that box affinely onto [-1, 1].

    Columns with ``lower == upper`` map to 0. Clipping (never rejection) is what makes the
    sensitivity analysis of every estimator hold for arbitrary input.
    """
    from ._bounds import to_unit  # noqa: PLC0415 (one implementation; _bounds imports us)

    return to_unit(X, lower, upper)


def unit_scaling(lower, upper):
    """Return ``(mid, half)`` with ``x = mid + half * z`` mapping [-1, 1] back to the bounds."""
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    return (upper + lower) / 2.0, (upper - lower) / 2.0


def check_unit_sample_weight(sample_weight, n_samples):
    """Sample weights as a float array of shape ``(n_samples,)`` in [0, 1], not all zero.

    The estimators that accept ``sample_weight`` derive their sensitivity for weights in
    [0, 1] (the weight is part of the record; a weighted record's contribution lies in the hull
    of the unweighted ones and 0), so anything else -- larger or negative weights, NaN, a wrong
    shape, all zeros -- is a ``ValueError``, raised in ``fit`` before anything is spent. A
    scalar applies to every row.

    Examples
    --------
    >>> from dpreg._validation import check_unit_sample_weight
    >>> check_unit_sample_weight([0.5, 1, 0], 3).tolist()
    [0.5, 1.0, 0.0]
    """
    try:
        w = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("sample_weight must be an array of numbers in [0, 1].") from None
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.shape != (n_samples,):
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), got {np.shape(sample_weight)}."
        )
    if not np.all((w >= 0.0) & (w <= 1.0)):  # also rejects NaN
        raise ValueError(
            "sample_weight must lie in [0, 1] (the sensitivity is derived for that range; "
            "rescale larger weights by a public constant)."
        )
    if not np.any(w > 0):
        raise ValueError("sample_weight must not be all zero (no row would count).")
    return w


def warn_if_released_again(previous, current_fit, epsilon, what, fit_attr="theta"):
    """Warn, before the spend, that a second release for the same fit spends again.

    ``previous`` is the estimator's stored release (or None) and ``current_fit`` the fit's
    released array that a release records (``rel.<fit_attr> is current_fit`` means the
    release belongs to this fit). The intervals use only the newest release: the two are not
    combined, so the earlier one's epsilon buys nothing more. A notebook cell run twice is the
    common way to get here. Whether a release exists is the user's call history, not the
    data, so the warning reveals nothing private; it fires before the accountant is charged,
    so a caller that turns warnings into errors spends nothing.
    """
    if previous is None or getattr(previous, fit_attr, None) is not current_fit:
        return
    warnings.warn(
        f"This fit already has a {what} release (epsilon={previous.epsilon:g}); this call "
        f"spends epsilon={epsilon:g} again and replaces it. The intervals use only the newest "
        "release (the two are not combined), and the ledger keeps both charges.",
        UserWarning,
        stacklevel=4,
    )


#: The smallest epsilon a side release or a private statistic accepts (``release_hessian``,
#: ``release_curvature``, ``release_scale``, the parts of ``FunctionalLinearRegression``'s
#: epsilon given to y^T y, the adaptive ridge and the boosting rounds; ``dpreg.tools``, the
#: private bounds and the transformers, whose equal shares ``dpreg.tools._common.check_shares``
#: checks too).
#: Their noise scales are ``sensitivity / (share * epsilon)`` with sensitivities of order 1
#: and public shares >= 0.1; at a subnormal epsilon (1e-320) the scale overflowed to inf and
#: the exact grid sampler raised AFTER the spend. From 1e-100 on every scale is below 1e102,
#: far inside the float range (the same floor as the functional fit's ``EPSILON_MIN``), and
#: no release at a smaller epsilon carries information anyway. A rule on a public parameter:
#: checked before the spend.
RELEASE_EPSILON_MIN = 1e-100


def check_release_epsilon(epsilon, name="epsilon"):
    """``check_epsilon`` plus the floor :data:`RELEASE_EPSILON_MIN` of the interval releases.

    Examples
    --------
    >>> from dpreg._validation import check_release_epsilon
    >>> check_release_epsilon(0.1)
    0.1
    >>> try:
    ...     check_release_epsilon(1e-320)
    ... except ValueError as exc:
    ...     print(str(exc)[:31])
    epsilon must be at least 1e-100
    """
    epsilon = check_epsilon(epsilon, name=name)
    if epsilon < RELEASE_EPSILON_MIN:
        raise ValueError(
            f"{name} must be at least {RELEASE_EPSILON_MIN:g} (below it the noise scale of "
            f"its release overflows in floating point), got {epsilon!r}."
        )
    return epsilon


def check_fit_rows(n_fit, n, method):
    """Refuse, before the spend, data whose number of rows ``n`` is not the fit's ``n_fit``.

    A release for a fit's intervals must read the data of that fit; n is public under
    replace-one adjacency, so comparing it reveals nothing. ``n_fit`` None (an estimator
    fitted before ``n_samples_fit_`` existed, unpickled) is not checked.
    """
    if n_fit is not None and int(n) != int(n_fit):
        raise ValueError(
            f"{method} needs the data of the fit: it has {n_fit} rows, X has {int(n)}."
        )


def shares_within(parts, total, lower=None):
    """Budget parts whose *exact* sum is at most ``total`` (basic composition, stated exactly).

    A split computed in floats (``eps * share``, ``eps - part``) can add up to one float step
    more than the total it splits (the session-21 audits found excesses of about 1e-16
    relative in about one case in six), and comparing the float sum with the total does not
    catch every case, since that sum is itself rounded. ``math.fsum`` of the parts and
    ``-total`` is the exact difference rounded once, so its sign is exact; while it is
    positive, the part at index ``lower`` (default: the largest) is lowered by one float step.
    ``total`` may be a sequence: the bound is then the exact sum of its floats. Returns a
    float array. Public inputs only: run it when the split is planned.

    Examples
    --------
    >>> from dpreg._validation import shares_within
    >>> parts = shares_within([0.1, 0.2], 0.3)  # 0.1 + 0.2 exceeds 0.3 in exact arithmetic
    >>> import math
    >>> math.fsum([*parts, -0.3]) <= 0
    True
    """
    parts = np.array(parts, dtype=float, copy=True).ravel()
    if not np.all(np.isfinite(parts)):
        raise ValueError(f"Budget parts must be finite, got {parts.tolist()!r}.")
    _check_total(total)
    while _exceeds(parts.tolist(), total):
        k = int(np.argmax(parts)) if lower is None else int(lower)
        # nextafter towards 0 stalls at 0 (and moves a negative part up): without this check
        # a part at index `lower` that reached 0 while the sum still exceeded looped forever
        if parts[k] <= 0.0:
            raise ValueError(
                f"Cannot bring the budget parts {parts.tolist()!r} within {total!r} by lowering "
                f"the part at index {k}."
            )
        parts[k] = np.nextafter(parts[k], 0.0)
    return parts


def _check_total(total):
    """A budget total (one float or several) must be finite and >= 0: a negative total made
    :func:`shares_within` and :func:`equal_share` loop forever and a NaN one passed NaN shares
    on unchecked (audit s22, F5)."""
    arr = np.atleast_1d(np.asarray(total, dtype=float))
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"A budget total must be finite and >= 0, got {total!r}.")


def _exceeds(parts, total):
    """Whether the exact sum of ``parts`` exceeds the exact sum of ``total`` (one float or
    several): ``math.fsum`` rounds the exact difference once, so its sign is exact."""
    minus = [-float(t) for t in np.atleast_1d(np.asarray(total, dtype=float))]
    return math.fsum([*parts, *minus]) > 0


def equal_share(total, k):
    """``total / k``, lowered by float steps until ``k`` copies add up to at most ``total``
    exactly (:func:`shares_within` for ``k`` equal parts; the quotient is rounded, so ``k``
    times it can exceed ``total`` by a float step).

    Examples
    --------
    >>> from dpreg._validation import equal_share
    >>> import math
    >>> math.fsum([equal_share(0.7, 6)] * 6) <= 0.7
    True
    """
    if isinstance(k, bool) or not isinstance(k, (numbers.Integral, np.integer)) or k < 1:
        raise ValueError(f"The number of equal shares must be an integer >= 1, got {k!r}.")
    k = int(k)
    _check_total(total)
    share = float(total) / k
    while _exceeds([share] * k, total):
        share = float(np.nextafter(share, 0.0))
    return share
