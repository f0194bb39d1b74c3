r"""One place for bounds: validate, clip, map to [-1, 1] and back, and private bounds.

Every dpreg estimator works on data clipped into a public box and mapped affinely onto
[-1, 1]; :class:`PublicBox` does that once for the functional, logistic and KNG models and
the transformers of :mod:`dpreg.preprocessing` (validation before the spend, clipping, the
unit map and the map of fitted coefficients back to the user's units).

Private bounds (``bounds="private"``)
-------------------------------------
:func:`private_bounds` releases, for every column, the private quantiles at ``levels``
(default the quartiles) with the exact KNG sampler of :mod:`dpreg.tools` over the public
``candidate_range`` with the asinh base measure (so the raw units need not be known), and
widens them to Tukey's fences ``q_lo - widen (q_hi - q_lo)``, ``q_hi + widen (q_hi - q_lo)``
(default ``widen=1.5``). With ``p`` columns the ``2 p`` quantiles share ``epsilon`` equally; by
basic composition the bounds cost ``epsilon`` in total. The widening, a swap of a released
lower bound above the upper one and clamping into ``candidate_range`` are post-processing, so
the bounds are always usable and nothing can raise after the budget is spent.

Why quartiles and not the 1 % / 99 % quantiles: the exponential mechanism's density outside
the data is ``exp(-epsilon_q q n / 2)`` times the (long) length of the candidate range, so a
level ``q`` needs ``epsilon_q q n`` of order ``2 log(range / spread)``. Levels near 0 or 1 give
``q n`` of a few records, and the draw then lands anywhere in the candidate range; quartiles
have ``n / 4`` ranks of margin (measured in ``docs/private_workflow.md``). Clipping into the
bounds and any later fit use them as public constants: the fit composes sequentially with them.

The estimators' ``"private"`` bounds go through :func:`fit_bounds`, which uses one of four
exact per-column releases, picked by public rules (n, epsilon, column counts, the
estimator): the median / MAD box (two draws, :func:`private_median_mad_unchecked`), the
scale-only box (one draw of the median of ``|x|``, :func:`private_abs_scale_unchecked`),
the relative box (one draw of the median, box ``m -/+ RELATIVE_WIDEN |m|``,
:func:`private_relative_box_unchecked`) and, for the linear model, the window box (one draw
of the densest window of width ``WINDOW_WIDTH`` in the asinh coordinate,
:func:`private_window_box_unchecked`). All four draw through the same exact KNG line
sampler. At small n * epsilon the linear model's feature releases are preceded by ONE pooled
window over all feature values (:func:`private_coarse_range_unchecked`, :func:`coarse_rule`)
whose release becomes their candidate range (coarse-to-fine; the same sampler).

:func:`resolve_bounds` is the single call an estimator needs for ``bounds_X="private"``: it
returns the bounds and the epsilon they cost, so the estimator spends the rest on its fit. See
``docs/private_workflow.md`` for the recipe and the measured cost.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ._validation import check_bounds, check_random_state, equal_share, shares_within
from .tools._quantile import check_measure, private_quantile_draws

PRIVATE = "private"
DEFAULT_LEVELS = (0.25, 0.75)
DEFAULT_WIDEN = 1.5
DEFAULT_CANDIDATE_RANGE = (-1e9, 1e9)
#: widening of the estimators' private bounds: median -/+ FIT_WIDEN * MAD for a feature,
#: FIT_WIDEN_TARGET * MAD for the response (``bounds_y``). Measured in
#: ``docs/private_workflow.md``: a tighter feature box gives the noisy fit more signal per
#: unit of sensitivity (diabetes eps = 4: R^2 0.14 with 3, 0.23 with 2), while clipping the
#: response harder biases every prediction (CPS1988: 0.37 with 2 for y, 0.41 with 3)
FIT_WIDEN = 2.0
FIT_WIDEN_TARGET = 3.0
#: default share of a fit's epsilon spent on ``"private"`` bounds (see :func:`bounds_epsilon`)
AUTO = "auto"
DEFAULT_BOUNDS_SHARE = AUTO
AUTO_RANKS = 600.0
AUTO_MIN_SHARE = 0.05
AUTO_MAX_SHARE = 0.5
#: a median / MAD draw is reliable once its budget times n reaches RELIABLE_RANKS (the exact
#: law on real columns: P(draw in the interquartile range) 0.68-0.91 at 32, 0.27-0.66 at 24,
#: docs/private_workflow.md "Small data"); when the units' draws need a little more than
#: AUTO_MAX_SHARE of epsilon for that, "auto" gives it, up to AUTO_SHARE_LIMIT (auto_share_cap)
RELIABLE_RANKS = 32.0
AUTO_SHARE_LIMIT = 0.6
#: public scale of the asinh base measure of the estimators' private bounds: linear below
#: 0.01, logarithmic above, so columns measured in fractions (rates, shares) get as much
#: prior mass per factor of scale as columns in the hundreds (docs/private_workflow.md)
FIT_ASINH_SCALE = 0.01
#: log-odds that a target column's private median lands in the data (see column_epsilons);
#: the floor of a scale-only target's one draw (a box right within a factor of about 2)
TARGET_LOG_ODDS = 8.0
#: the same floor for a target's median / MAD box, whose median must land inside the bulk of
#: the data: about ln(1.4 / 0.03) = 3.8 nats more for a response that is a level far from 0
#: with a coefficient of variation of 2 % (log prices, test scores), see column_epsilons
MEDIAN_TARGET_LOG_ODDS = 12.0
#: share of a median / MAD target's budget that goes to its median (the MAD gets the rest):
#: each draw gets budget in proportion to the log-odds its job needs, the median
#: MEDIAN_TARGET_LOG_ODDS (land in the bulk of a level far from 0) and the MAD
#: TARGET_LOG_ODDS (a scale right within a factor of about 2): 12 / (12 + 8) = 0.6
#: (docs/private_workflow.md, "The response's two draws"). Features keep 1 : 1.
TARGET_MEDIAN_FRACTION = MEDIAN_TARGET_LOG_ODDS / (MEDIAN_TARGET_LOG_ODDS + TARGET_LOG_ODDS)
#: the logistic model's features switch to one scale-only release each when each of the two
#: median / MAD releases would get less than SCALE_ONLY_RANKS / n: there a median lands in the
#: data's interquartile range with probability below about 0.15, against about 0.3-0.65 for
#: the one release with twice the budget (docs/private_workflow.md, "Small data"). Not higher:
#: a symmetric box loses the spread of columns far from 0 (measured: 0.65 -> 0.52 accuracy on
#: five columns with a coefficient of variation of 0.3 at 20 budget-ranks per release)
SCALE_ONLY_RANKS = 12.0
#: the scale-only feature box of the logistic model is -/+ SCALE_WIDEN * median |x_j|
SCALE_WIDEN = 2.0
#: the one-draw box of an under-funded feature (private_relative_box_unchecked) is
#: m -/+ RELATIVE_WIDEN |m| (measured in docs/private_workflow.md, "One median per column")
RELATIVE_WIDEN = 0.5
#: the linear model's one-draw feature box at small n * eps is the densest window
#: (private_window_box_unchecked) of this width in u = asinh(x / FIT_ASINH_SCALE), i.e. a
#: ratio upper / lower of e^0.4 = 1.49 for |x| >> 0.01 (measured in docs/private_workflow.md,
#: "The window box")
WINDOW_WIDTH = 0.4
#: the linear model's coarse pooled stage (private_coarse_range_unchecked, coarse_rule): ONE
#: window of this width in u = asinh(x / FIT_ASINH_SCALE) over the pooled feature values
#: (a ratio e^8 ~ 3000 between its ends for |x| >> 0.01) becomes every feature release's
#: candidate range, instead of the ~52 units of DEFAULT_CANDIDATE_RANGE; it takes
#: COARSE_FRACTION of the features' budget (docs/private_workflow.md, "The coarse stage")
COARSE_WIDTH = 8.0
COARSE_FRACTION = 0.2


# ---------------------------------------------------------------------------------------------
# clip / scale / unscale
# ---------------------------------------------------------------------------------------------
def clip(X, lower, upper):
    """Clip ``X`` column-wise into ``[lower, upper]`` (a new float array).

    Examples
    --------
    >>> from dpreg._bounds import clip
    >>> clip([[5.0, -3.0]], [0, 0], [1, 1]).tolist()
    [[1.0, 0.0]]
    """
    return np.clip(np.asarray(X, dtype=float), lower, upper)


def unit_map(lower, upper, symmetric=False):
    """``(mid, half)`` with ``x = mid + half * z`` mapping ``z`` in [-1, 1] onto the bounds.

    ``symmetric=True`` keeps the origin: ``mid = 0`` and ``half = max(|lower|, |upper|)`` (the
    no-intercept scaling). A zero ``half`` marks a constant column.

    Halving first: ``upper / 2 + lower / 2`` equals ``(upper + lower) / 2`` bit for bit
    (halving is exact for normal floats) but cannot overflow for bounds near 1.8e308, e.g.
    bounds read from a constant column of 1.7e308, where ``upper + lower`` is inf and a
    RuntimeWarning after the spend would become an exception under warnings-as-errors.
    """
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    if symmetric:
        return np.zeros_like(lower), np.maximum(np.abs(lower), np.abs(upper))
    return upper / 2.0 + lower / 2.0, upper / 2.0 - lower / 2.0


def safe_inverse(half):
    """``1 / half``, with 0 where ``half`` is 0 or subnormal (a constant column).

    A subnormal half-width would make ``1 / half`` overflow to inf and the scaled data NaN
    (found by the long fuzz run of the functional model); such a column is constant for every
    purpose here, so it maps to 0 and gets a zero coefficient.
    """
    half = np.asarray(half, dtype=float)
    return np.divide(1.0, half, out=np.zeros_like(half), where=half > np.finfo(float).tiny)


def to_unit(X, lower, upper, symmetric=False):
    """Clip ``X`` into the bounds and map them affinely onto [-1, 1] (constant columns -> 0).

    ``z = (clip(x, lower, upper) - mid) * (1 / half)`` (:func:`unit_map`, :func:`safe_inverse`),
    computed in place on one new float64 array. The result lies in [-1, 1] *exactly* (round-off,
    e.g. ``1 - 1.2e-12`` for bounds (16, 16.001), is clipped away), which is what every
    sensitivity bound assumes.

    Examples
    --------
    >>> from dpreg._bounds import to_unit
    >>> to_unit([[0.0], [5.0], [99.0]], [0.0], [10.0]).ravel().tolist()
    [-1.0, 0.0, 1.0]
    """
    mid, half = unit_map(lower, upper, symmetric)
    Z = np.maximum(np.asarray(X, dtype=float), np.asarray(lower, dtype=float))
    np.minimum(Z, np.asarray(upper, dtype=float), out=Z)
    Z -= mid
    Z *= safe_inverse(half)
    return np.clip(Z, -1.0, 1.0, out=Z)


def from_unit(Z, lower, upper, symmetric=False):
    """Inverse of :func:`to_unit` on [-1, 1] (values outside are first clipped into it)."""
    mid, half = unit_map(lower, upper, symmetric)
    return mid + half * np.clip(np.asarray(Z, dtype=float), -1.0, 1.0)


def unscale_linear(coef_unit, intercept_unit, lower, upper, y_lower=-1.0, y_upper=1.0):
    """Coefficients in the user's units of a linear model fitted on :func:`to_unit` data.

    If ``(y - y_mid) / y_half = b0 + sum_j b_j z_j`` with ``z_j = (x_j - mid_j) / half_j``, then
    ``y = intercept + coef . x`` with ``coef_j = y_half b_j / half_j`` (0 for a constant column)
    and ``intercept = y_mid + y_half b0 - coef . mid`` (:meth:`PublicBox.unscale`).

    Examples
    --------
    >>> from dpreg._bounds import unscale_linear
    >>> coef, b = unscale_linear([1.0], 0.0, [0.0], [10.0], 0.0, 4.0)
    >>> coef.tolist(), b
    ([0.4], 0.0)
    """
    box = PublicBox(np.asarray(lower, dtype=float), np.asarray(upper, dtype=float))
    y_box = PublicBox(np.array([float(y_lower)]), np.array([float(y_upper)]))
    coef, intercept = box.unscale(np.asarray(coef_unit, dtype=float)[None, :],
                                  np.array([float(intercept_unit)]), y_box)  # fmt: skip
    return coef[0], float(intercept[0])


@dataclass(frozen=True)
class PublicBox:
    """Validated public bounds of some columns and the affine map of the box onto [-1, 1].

    The one implementation of clip / scale / unscale used by
    :class:`~dpreg.FunctionalLinearRegression`, :class:`~dpreg.ObjectivePerturbationLogistic`,
    :class:`~dpreg.KNGQuantileRegressor` and the transformers of :mod:`dpreg.preprocessing`.
    With ``symmetric=False`` the box ``[lower, upper]`` maps affinely onto [-1, 1]
    (``z = (x - mid) / half``); with ``symmetric=True`` (models without an intercept) the map
    only divides by ``max(|lower|, |upper|)``, which keeps the origin and hence a model through
    it. ``lower == upper`` marks a constant column: it maps to 0 and gets a zero coefficient
    (so do subnormal widths, :func:`safe_inverse`).

    Build it with :meth:`validated` in ``fit`` *before* anything is spent: a bad shape, NaN or
    inf, or ``lower > upper`` is then a ``ValueError`` that costs nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._bounds import PublicBox
    >>> box = PublicBox.validated(([0, -1], [10, 1]), 2)
    >>> box.to_unit([[5.0, 3.0], [-2.0, 0.5]]).tolist()
    [[0.0, 1.0], [-1.0, 0.5]]
    >>> coef, intercept = box.unscale(np.array([[1.0, 2.0]]), np.array([0.5]))
    >>> coef.tolist(), intercept.tolist()
    ([[0.2, 2.0]], [-0.5])
    """

    lower: np.ndarray
    upper: np.ndarray
    symmetric: bool = False

    @classmethod
    def validated(cls, bounds, n_features, X=None, name="bounds_X", symmetric=False):
        """Check ``bounds = (lower, upper)`` (scalars or length-``n_features`` arrays, finite,
        ``lower <= upper``). ``bounds=None`` with data ``X`` reads them from ``X`` with a
        :class:`~dpreg.exceptions.PrivacyLeakWarning` (not private); see ``check_bounds``."""
        lower, upper = check_bounds(bounds, n_features, X=X, name=name)
        return cls(lower, upper, bool(symmetric))

    @property
    def mid(self):
        """Centre of the map (0 when ``symmetric``)."""
        return unit_map(self.lower, self.upper, self.symmetric)[0]

    @property
    def half(self):
        """Half-width of the map: ``x = mid + half * z``."""
        return unit_map(self.lower, self.upper, self.symmetric)[1]

    @property
    def inv_half(self):
        """``1 / half`` with 0 for constant (or subnormal-width) columns."""
        return safe_inverse(self.half)

    @property
    def active(self):
        """Columns that are not constant (``half`` above the subnormal range)."""
        return self.half > np.finfo(float).tiny

    def clip(self, X):
        """``X`` clipped column-wise into ``[lower, upper]`` (a new float array)."""
        return clip(X, self.lower, self.upper)

    def to_unit(self, X):
        """Clip and map onto [-1, 1] exactly (:func:`to_unit`)."""
        return to_unit(X, self.lower, self.upper, self.symmetric)

    def from_unit(self, Z):
        """Inverse of :meth:`to_unit` on [-1, 1]."""
        return from_unit(Z, self.lower, self.upper, self.symmetric)

    def unscale(self, coef_unit, intercept_unit=None, y_box=None):
        """Coefficients in the user's units of a linear model fitted in the unit box.

        ``coef_unit`` has shape ``(k, p)`` (one row per output or class) and
        ``intercept_unit`` shape ``(k,)``, or None for a model without intercept. If the
        (optionally scaled, ``y_box``) target satisfies ``(y - y_mid) / y_half = b0 + b . z``
        with ``z = (x - mid) / half``, then ``coef = (y_half b) / half`` (0 for a constant
        column) and ``intercept = y_mid + y_half b0 - coef . mid``; without an intercept it is
        0. Float64, post-processing only: returns ``(coef, intercept)`` of shapes ``(k, p)``
        and ``(k,)``.
        """
        y_map = None if y_box is None else (y_box.mid, y_box.half)
        return unscale_coefficients(coef_unit, intercept_unit, self.mid, self.half, y_map)


def unscale_coefficients(coef_unit, intercept_unit, mid, half, y_map=None):
    """:meth:`PublicBox.unscale` from the map itself: ``x = mid + half z`` and, optionally,
    ``y = y_mid + y_half w`` (``y_map = (y_mid, y_half)``, scalars or length-k arrays).

    The single implementation of the map back to the user's units (callers that kept only the
    map, e.g. precomputed sufficient statistics, use it directly).
    """
    coef_unit = np.asarray(coef_unit, dtype=float)
    k = coef_unit.shape[0]
    y_mid, y_half = (0.0, 1.0) if y_map is None else y_map
    y_mid = np.broadcast_to(np.asarray(y_mid, dtype=float), (k,))
    y_half = np.broadcast_to(np.asarray(y_half, dtype=float), (k,))
    half = np.asarray(half, dtype=float)
    active = half > np.finfo(float).tiny
    scaled = y_half[:, None] * coef_unit
    coef = np.where(active, scaled / np.where(active, half, 1.0), 0.0)
    if intercept_unit is None:
        return coef, np.zeros(k)
    intercept = y_mid + y_half * np.asarray(intercept_unit, dtype=float) - coef @ mid
    return coef, intercept


#: the largest magnitude :func:`unscale_cap` lets an unscaled coefficient or intercept reach:
#: a quarter of the largest float, so the few roundings of the unscaling (and of the cap
#: itself, relative ``(p + 3) u``) cannot carry a value past it to inf
UNSCALE_LIMIT = float(np.finfo(float).max) / 4.0


def unscale_cap(mid, half, y_map=None, intercept=True):
    """The largest ``B`` such that :func:`unscale_coefficients` of *any* unit model with every
    ``|b| <= B`` (slopes and, with ``intercept``, the intercept) stays finite; 0 if none does.

    Public: only the maps ``x = mid + half z`` and ``y = y_mid + y_half w`` enter. For an
    active column (``half_j`` above the subnormal range, so ``1 / half_j`` is finite)
    ``|coef_j| = y_half |b_j| / half_j <= B y_half / half_j``; a constant column gets 0.
    The intercept ``y_mid + y_half b_0 - sum_j coef_j mid_j`` is at most
    ``|y_mid| + B y_half (1 + sum_j |mid_j| / half_j)``. With
    ``F = y_half max(max_j 1 / half_j, 1 + sum_j |mid_j| / half_j)`` (the second term only
    with an intercept) and ``A = |y_mid|`` (0 without intercept), every unscaled value is at
    most ``A + B F``, so ``B = (UNSCALE_LIMIT - A) / F`` (the smallest over the outputs, and
    at most the largest float).

    Tiny public ``bounds_X`` against a wide target or parameter box made the slopes overflow
    after the spend (RuntimeWarning, ``coef_ = inf``; s22 audits, functional F5 and KNG F2):
    the estimators refuse such boxes before the spend with :func:`check_unscalable`.

    Examples
    --------
    >>> from dpreg._bounds import unscale_cap
    >>> unscale_cap([0.0], [1.0]) > 1e307
    True
    >>> unscale_cap([0.0], [1e-300], (0.0, 1e300))
    0.0
    """
    half = np.atleast_1d(np.asarray(half, dtype=float))
    mid = np.broadcast_to(np.asarray(mid, dtype=float), half.shape)
    y_mid, y_half = (0.0, 1.0) if y_map is None else y_map
    y_mid = np.abs(np.atleast_1d(np.asarray(y_mid, dtype=float)))
    y_half = np.atleast_1d(np.asarray(y_half, dtype=float))
    active = half > np.finfo(float).tiny
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        inv = np.where(active, 1.0 / np.where(active, half, 1.0), 0.0)
        spread = float(np.max(inv, initial=0.0))
        if intercept:
            spread = max(spread, 1.0 + float(np.sum(np.abs(mid) * inv)))
        F = y_half * spread
        A = y_mid if intercept else np.zeros_like(y_mid)
        caps = np.where(F > 0, (UNSCALE_LIMIT - A) / np.where(F > 0, F, 1.0), np.inf)
    caps = np.where(np.isnan(caps) | (caps < 0), 0.0, caps)
    # at most the largest float: (L - A) / F can overflow for a tiny F, and every finite b
    # is then safe
    return float(min(np.min(caps), np.finfo(float).max))


def check_unscalable(bound, mid, half, y_map=None, intercept=True, what="coefficient"):
    """``ValueError`` (before the spend) unless every unit model with ``|b| <= bound``
    unscales to finite values (:func:`unscale_cap`); public inputs only."""
    if not unscale_cap(mid, half, y_map, intercept) >= bound:
        raise ValueError(
            f"The public bounds make the map back to the user's units overflow: a {what} of "
            f"{bound:g} in the unit box, divided by a bounds_X half-width (and times the "
            "target's half-width), exceeds the float range. Widen bounds_X, or rescale X "
            "or y (and coef_bounds) by a public factor."
        )


# ---------------------------------------------------------------------------------------------
# private bounds
# ---------------------------------------------------------------------------------------------
def check_private_bounds_params(levels, candidate_range, asinh_scale=1.0, widen=DEFAULT_WIDEN):
    """Validate the public parameters of :func:`private_bounds` (no data needed)."""
    if (
        isinstance(widen, bool)
        or not isinstance(widen, numbers.Real)
        or not np.isfinite(widen)
        or widen < 0
    ):
        raise ValueError(f"widen must be a finite number >= 0, got {widen!r}.")
    try:
        lo_q, hi_q = (float(v) for v in levels)
    except (TypeError, ValueError):
        raise ValueError(f"levels must be a pair (low, high), got {levels!r}.") from None
    if not 0.0 <= lo_q < hi_q <= 1.0:
        raise ValueError(f"levels must satisfy 0 <= low < high <= 1, got {levels!r}.")
    try:
        c_lo, c_hi = (float(v) for v in candidate_range)
    except (TypeError, ValueError):
        raise ValueError(
            f"candidate_range must be a pair (lower, upper), got {candidate_range!r}."
        ) from None
    if not (np.isfinite(c_lo) and np.isfinite(c_hi) and c_lo < c_hi):
        raise ValueError(f"candidate_range must be finite with lower < upper: {candidate_range!r}.")
    check_measure("asinh", asinh_scale)
    return (lo_q, hi_q), (c_lo, c_hi)


def private_bounds_unchecked(X, epsilon, levels, candidate_range, asinh_scale, widen, rng):
    """Private per-column bounds; inputs already validated and the budget already charged."""
    X = np.asarray(X, dtype=float)
    X = X.reshape(X.shape[0], -1)
    p = X.shape[1]
    eps_each = equal_share(epsilon, 2 * p)  # 2 p draws, exactly within epsilon
    lower, upper = np.empty(p), np.empty(p)
    for j in range(p):
        q = private_quantile_draws(
            X[:, j], levels, eps_each, *candidate_range, "asinh", asinh_scale, rng
        )
        lo, hi = min(q), max(q)  # a swap is post-processing
        # post-processing of released values: past +-1.8e308 the width or the sum is +-inf
        # without a RuntimeWarning and the clip below returns the candidate_range end
        # (bit-identical to the old expression on every finite result; 0 * inf is kept out)
        with np.errstate(over="ignore"):
            spread = widen * (hi - lo) if widen else 0.0
            lower[j], upper[j] = lo - spread, hi + spread
    return np.clip(lower, *candidate_range), np.clip(upper, *candidate_range)


def _per_column(X, epsilon, widen, scale):
    """The per-column arguments of the private box releases: ``X`` as (n, p) floats, ``p``,
    one budget per column (a scalar ``epsilon`` split equally; an array gives column j the
    budget ``epsilon[j]``), one widening per column and the asinh scale (default
    ``FIT_ASINH_SCALE``)."""
    X = np.asarray(X, dtype=float)
    X = X.reshape(X.shape[0], -1)
    p = X.shape[1]
    eps_col = np.asarray(epsilon, dtype=float)
    eps_col = np.full(p, eps_col / p) if eps_col.ndim == 0 else eps_col
    widen = np.broadcast_to(np.asarray(widen, dtype=float), (p,))
    return X, p, eps_col, widen, FIT_ASINH_SCALE if scale is None else scale


def median_mad_epsilons(epsilon, median_fraction=0.5):
    """``(eps_median, eps_mad)`` of one median / MAD release with budget ``epsilon``: the
    median gets ``median_fraction * epsilon``, the MAD the rest, and the two never add up to
    more than ``epsilon`` in floating point (the MAD's part is lowered by one float step if
    round-off would make them). ``median_fraction = 0.5`` gives ``epsilon / 2`` twice, exactly.

    Examples
    --------
    >>> from dpreg._bounds import median_mad_epsilons
    >>> median_mad_epsilons(0.25)
    (0.125, 0.125)
    >>> [round(e, 12) for e in median_mad_epsilons(0.25, 0.6)]
    [0.15, 0.1]
    """
    eps_m = float(median_fraction) * float(epsilon)
    eps_m, eps_s = shares_within([eps_m, float(epsilon) - eps_m], epsilon, lower=1).tolist()
    return eps_m, eps_s


def private_median_mad_unchecked(
    X, epsilon, candidate_range, widen, rng, scale=None, median_fraction=0.5
):
    """Private per-column ``median -/+ widen * MAD`` (the estimators' ``"private"`` bounds).

    Inputs validated and the budget charged by the caller. For every column ``j`` (a scalar
    ``epsilon`` is split equally over the columns, an array gives column ``j`` the budget
    ``epsilon[j]``; column ``j``'s median gets ``median_fraction * epsilon_j`` and its MAD the
    rest, ``epsilon_j - median_fraction * epsilon_j``, lowered by one float step if the two
    would add up to more than ``epsilon_j``; the default 0.5 gives each exactly half, bit for
    bit as before; basic composition):

    1. ``m_j``: the exact KNG median (sensitivity 1, :mod:`dpreg.tools._quantile`) over
       ``candidate_range`` with the asinh base measure of public scale ``scale`` (default
       ``FIT_ASINH_SCALE``);
    2. ``s_j``: the exact KNG median of ``|x_ij - m_j|`` over ``[0, upper - lower]`` of the
       range, again asinh. ``m_j`` is public once released, so ``x -> |x - m_j|`` is a fixed
       per-record map: one record still changes one count by at most one (sensitivity 1), and
       the two releases compose sequentially.

    The bounds ``m_j -/+ widen * s_j`` (clamped into the range) are post-processing. Why the
    median and the MAD rather than the quartiles: the exponential mechanism's failure mode is
    a draw outside the data, whose rank error is ``min(q, 1 - q) n``; both medians have
    ``n / 2`` of margin against ``n / 4`` for a quartile, so the same accuracy costs half the
    budget. A median that lands outside the data makes the MAD at least its distance to the
    data, so the box is too wide (the column loses signal) rather than empty. A binary column
    (two values) gets a median between or at its values and a MAD of about half the gap, so it
    is kept. ``widen`` (a number or one per column) of 2 / 3 is +/- 1.35 / 2 standard
    deviations for normal data (MAD = 0.674 sd); :func:`fit_bounds` uses 2 for features and 3
    for the response.
    """
    X, p, eps_col, widen, scale = _per_column(X, epsilon, widen, scale)
    frac = np.broadcast_to(np.asarray(median_fraction, dtype=float), (p,))
    c_lo, c_hi = candidate_range
    lower, upper = np.empty(p), np.empty(p)
    for j in range(p):
        eps_m, eps_s = median_mad_epsilons(float(eps_col[j]), float(frac[j]))
        m = private_quantile_draws(X[:, j], [0.5], eps_m, c_lo, c_hi, "asinh", scale, rng)[0]
        dev = np.abs(X[:, j] - m)
        s = private_quantile_draws(dev, [0.5], eps_s, 0.0, c_hi - c_lo, "asinh", scale, rng)[0]
        lower[j], upper[j] = m - widen[j] * s, m + widen[j] * s
    return np.clip(lower, c_lo, c_hi), np.clip(upper, c_lo, c_hi)


def private_abs_scale_unchecked(X, epsilon, candidate_range, widen, rng, scale=None):
    """Private per-column symmetric box ``-/+ widen * M_j``: ONE release per column.

    ``M_j`` is the exact KNG median (sensitivity 1, :mod:`dpreg.tools._quantile`) of
    ``|x_ij|`` over ``[0, max(|lower|, |upper|)]`` of ``candidate_range`` with the asinh base
    measure of public scale ``scale`` (default ``FIT_ASINH_SCALE``), drawn with the whole
    budget of column ``j`` (``epsilon`` a scalar split equally over the columns, or one
    amount per column; basic composition over the columns). ``x -> |x|`` is a fixed public
    per-record map, so one record changes one count by at most one; the box is
    post-processing. Inputs validated and the budget charged by the caller.

    Why: at small ``n * epsilon`` the two releases of :func:`private_median_mad_unchecked`
    each get half a column's budget, and a median draw is reliable only when its budget times
    ``n`` is about 32 (``docs/private_workflow.md``, "Small data"); one release per column
    doubles the budget of each draw. The box is centred at the public 0, so only the scale
    is learnt: enough for a model whose accuracy depends on the scale of the features within
    a factor of about 2 (the logistic model, :func:`fit_bounds` with
    ``scale_only_features=True``), not for one that needs the box to hug the data (the linear
    model's sufficient statistics, measured: diabetes R^2 about 0 with such boxes even with
    the exact ``M_j``).
    """
    X, p, eps_col, widen, scale = _per_column(X, epsilon, widen, scale)
    top = max(abs(float(candidate_range[0])), abs(float(candidate_range[1])))
    half = np.empty(p)
    for j in range(p):
        m = private_quantile_draws(
            np.abs(X[:, j]), [0.5], float(eps_col[j]), 0.0, top, "asinh", scale, rng
        )[0]
        half[j] = widen[j] * m
    return np.clip(-half, *candidate_range), np.clip(half, *candidate_range)


def private_relative_box_unchecked(X, epsilon, candidate_range, widen, rng, scale=None):
    r"""Private per-column box ``m_j -/+ widen * |m_j|``: ONE release per column.

    The release of :func:`fit_bounds` for feature columns whose median / MAD box would be
    under-funded (:func:`relative_rule`). Inputs validated and the budget charged by the
    caller. ``m_j`` is the exact KNG median (sensitivity 1, :mod:`dpreg.tools._quantile`) of
    column ``j`` over ``candidate_range`` with the asinh base measure of public scale
    ``scale`` (default ``FIT_ASINH_SCALE``), drawn with the column's whole budget
    (``epsilon`` a scalar split equally over the columns, or one amount per column).

    **Privacy (proof).** Replace-one adjacency, ``n`` public. Replacing one record changes
    ``#{i : x_ij <= theta}`` by at most 1 at every ``theta``: the draw with exponent
    ``epsilon_j / 2 * |count - n/2|`` over the data-independent range is ``epsilon_j``-DP
    (the KNG argument of :mod:`dpreg.tools._quantile`). The columns compose sequentially to
    ``sum_j epsilon_j``. ``widen`` is public, so the box, its clamping into
    ``candidate_range`` and the padding of a zero width in :func:`fit_bounds` are
    post-processing; nothing can raise on the data (the draw is always finite).

    **Why.** A median / MAD box costs two draws per column, and a draw is reliable (lands in
    the interquartile range with probability 0.68-0.91 on real columns) only once its budget
    times ``n`` is about 32 (``docs/private_workflow.md``, "Small data"). One draw with the
    whole budget doubles that, and the spread is then the public rule ``widen * |m_j|``: a
    coefficient of variation of order ``widen / 2``. That suits positive measurements
    (ages, pressures, incomes); a column centred at 0 gets a box much narrower than its
    spread, i.e. it is clipped to about ``sign(x - m_j)``: it keeps its order at the median,
    never raises and does not ruin the fit (``predict`` clips it the same way).

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._bounds import private_relative_box_unchecked
    >>> X = np.random.default_rng(0).normal(100.0, 10.0, size=(2000, 1))
    >>> lo, hi = private_relative_box_unchecked(X, 1.0, (-1e9, 1e9), 0.5, np.random.default_rng(1))
    >>> bool(45 < lo[0] < 55 and 145 < hi[0] < 155)
    True
    """
    X, p, eps_col, widen, scale = _per_column(X, epsilon, widen, scale)
    c_lo, c_hi = candidate_range
    lower, upper = np.empty(p), np.empty(p)
    for j in range(p):
        m = private_quantile_draws(
            X[:, j], [0.5], float(eps_col[j]), c_lo, c_hi, "asinh", scale, rng
        )[0]
        lower[j], upper[j] = m - widen[j] * abs(m), m + widen[j] * abs(m)
    return np.clip(lower, c_lo, c_hi), np.clip(upper, c_lo, c_hi)


def private_window_box_unchecked(X, epsilon, candidate_range, width, rng, scale=None):
    r"""Private per-column box: the densest window of fixed width in ``u = asinh(x / s)``.

    ONE release per column, the linear model's feature box at small ``n * epsilon``
    (:func:`fit_bounds` with ``window_features=True``, where :func:`relative_rule` switches).
    Inputs validated and the budget charged by the caller. In the coordinate ``u_i =
    asinh(x_ij / s)`` (``s = scale``, default ``FIT_ASINH_SCALE``) the release draws the
    window's left end ``t`` from

        f_D(t)  ∝  exp(-epsilon_j / 2 * g_D(t)),   g_D(t) = #{i : u_i not in (t, t + width]},

    on the data-independent interval ``[asinh(lower / s), asinh(upper / s) - width]`` of
    ``candidate_range`` (Lebesgue measure in ``u``, i.e. the asinh base measure of the
    quantiles), with the column's whole budget ``epsilon_j`` (a scalar ``epsilon`` split
    equally over the columns, or one amount per column). The box is ``[s sinh(t), s sinh(t +
    width)]``, clamped into the range. It is the exponential mechanism with the utility
    "number of values in the window" (``n - g_D``), drawn by the exact KNG line sampler
    that draws the private quantiles of :mod:`dpreg.tools._quantile` (``g_D`` is a step
    function with jumps ``+1`` at ``u_i`` and ``-1`` at ``u_i - width``, offset ``n``).

    **Privacy (proof).** Replace-one adjacency, ``n`` public. Replacing one record changes
    one term ``1{u_i not in (t, t + width]}`` of ``g_D(t)``, by at most 1, at every ``t``:
    ``sup_t |g_D(t) - g_D'(t)| <= 1``. The unnormalised density therefore moves by at most
    ``exp(epsilon_j / 2)`` at every ``t`` and so does its normaliser (the interval and the
    base measure do not depend on the data), so the density ratio is at most
    ``exp(epsilon_j)``: the KNG argument of :mod:`dpreg.kng` with sensitivity 1 in the
    ``linf`` norm (one dimension). In floating point the same holds for the computed
    steps: record ``i`` contributes ``1 + 1{t >= u_i} - 1{t >= fl(u_i - width)}``, which is 0
    or 1 because ``fl(u_i - width) < u_i`` for finite ``u_i`` (``|u_i| < 710``, far below
    where an ulp reaches ``width``), and a value so large that ``x / s`` overflows has ``u_i =
    -/+inf``, whose two steps coincide: it is outside every window. The exact line sampler
    sums these integers exactly. The columns compose sequentially to ``sum_j epsilon_j``;
    ``width`` and ``scale`` are public, so the box, its clamping and anything later are
    post-processing. The draw is always finite and the box always has positive
    width, so nothing can raise on the data after the spend. A pooled unit of ``g``
    columns (:func:`pooled_release_epsilon`) changes at most ``g`` terms per row, hence
    ``g_D`` by at most ``g``, and its call gets the budget divided by ``g``.

    **Why** (against :func:`private_relative_box_unchecked`'s one median). Outside the data
    the median's utility is ``n / 2`` below its best, the window's a whole ``n`` below it
    (an empty window against one holding nearly every value), so the exponent that must
    beat the log-length of the candidate range (about 51 units of ``u``) is ``epsilon_j n /
    2 * f`` (``f`` the share of values in the densest window) instead of ``epsilon_j n /
    4``: the window lands on the data at about half the budget. And the box is the data's
    densest stretch of a public relative width (``e^width``: ``1.49`` for ``width = 0.4``,
    about ``m -/+ 0.2 m``) instead of ``m -/+ 0.5 |m|``, which suits the linear model,
    whose noisy sufficient statistics gain signal when the features fill their box
    (``docs/private_workflow.md``, "The window box"). Like the relative box it assumes a
    column that keeps one sign (positive measurements): a column centred at 0 gets a
    window on one side of 0 (or a tiny one around it) and is clipped to a near-binary
    column; clipping keeps the order, so a binary column stays binary unless the window
    misses both of its values.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._bounds import private_window_box_unchecked
    >>> X = np.random.default_rng(0).normal(100.0, 10.0, size=(2000, 1))
    >>> lo, hi = private_window_box_unchecked(X, 1.0, (-1e9, 1e9), 0.4, np.random.default_rng(1))
    >>> bool(70 < lo[0] < 100 < hi[0] < 130), round(float(hi[0] / lo[0]), 3)
    (True, 1.492)
    """
    X, p, eps_col, _, scale = _per_column(X, epsilon, 1.0, scale)
    c_lo, c_hi = candidate_range
    lower, upper = np.empty(p), np.empty(p)
    for j in range(p):
        t = window_draw(X[:, j], float(eps_col[j]), c_lo, c_hi, float(width), scale, rng)
        lower[j], upper[j] = scale * np.sinh(t), scale * np.sinh(t + width)
    return np.clip(lower, c_lo, c_hi), np.clip(upper, c_lo, c_hi)


def window_mechanism(values, epsilon, lower, upper, width, scale):
    """The :class:`~dpreg.kng.KNG` whose exact draw is the left end ``t`` (in ``u =
    asinh(x / scale)``) of :func:`private_window_box_unchecked`'s window. Exposed for tests.

    ``lower, upper`` is the candidate range in the user's units; it must be longer than
    ``width`` in ``u`` (public; :func:`window_draw` handles the other case)."""
    from .kng import KNG, StepGradient

    with np.errstate(over="ignore"):  # |x| / scale beyond 1.8e308: u = -/+inf, no warning
        u = np.arcsinh(np.asarray(values, dtype=float).ravel() / scale)
    n = u.size
    grad = StepGradient(
        np.ones((2 * n, 1)),
        np.concatenate([u, u - width]),  # a value leaves the window below / enters from above
        np.concatenate([np.ones(n), -np.ones(n)])[:, None],
        offset=[float(n)],
    )
    u_lo, u_hi = np.arcsinh(lower / scale), np.arcsinh(upper / scale)
    return KNG(grad, epsilon=epsilon, sensitivity=1.0, norm="linf",
               lower=[u_lo], upper=[u_hi - width])  # fmt: skip


def window_draw(values, epsilon, lower, upper, width, scale, rng):
    """One exact draw of the window's left end ``t`` (no validation, no accounting).

    If the candidate range is no longer than ``width`` in ``u`` (public inputs only), the
    window is the whole range and nothing is drawn (spending less is private)."""
    u_lo, u_hi = np.arcsinh(lower / scale), np.arcsinh(upper / scale)
    if u_hi - u_lo <= width:
        return float(u_lo)
    mech = window_mechanism(values, epsilon, lower, upper, width, scale)
    t = float(mech.sample_exact(random_state=rng)[0])
    return float(np.clip(t, u_lo, u_hi - width))


def relative_rule(eps_units, n_samples, is_target):
    """Whether the feature units get :func:`private_relative_box_unchecked` (public inputs).

    True when a feature unit's budget, split over the two draws of the median / MAD box,
    gives a draw less than ``RELIABLE_RANKS / n`` (up to round-off: the share cap of
    :func:`auto_share_cap` brings the draws to exactly that budget, and then the two draws
    are kept). Measured (``docs/private_workflow.md``, "One median per column"): Engel at
    ``epsilon = 1`` (28 ranks per draw), raw diabetes at 1, 2 and 4 (at 4: 30 ranks, since
    the response's floor ``MEDIAN_TARGET_LOG_ODDS`` takes more of the share cap's budget),
    HousePrices and CASchools at 1 and 2; every other benchmark cell has 32 or more.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._bounds import relative_rule
    >>> relative_rule(np.array([0.32, 0.18]), 176, [False, True])  # Engel, eps = 1
    True
    >>> relative_rule(np.array([0.667, 0.333]), 176, [False, True])  # Engel, eps = 2
    False
    """
    eps_units = np.asarray(eps_units, dtype=float)
    features = ~np.asarray(is_target, dtype=bool)
    if not features.any():
        return False
    ranks = np.min(eps_units[features]) / 2.0 * max(n_samples, 1)
    return bool(ranks < RELIABLE_RANKS * (1.0 - 1e-9))


def private_coarse_range_unchecked(X, epsilon, candidate_range, width, rng, scale=None):
    r"""Private coarse range of a set of columns: ONE window over their pooled values.

    The first stage of the linear model's coarse-to-fine feature bounds (:func:`fit_bounds`
    with ``window_features=True``, where :func:`coarse_rule` switches). Inputs validated and
    the budget charged by the caller. ``X`` has shape ``(n, g)``; its ``N = n g`` values are
    pooled, and in ``u = asinh(x / s)`` (``s = scale``, default ``FIT_ASINH_SCALE``) the
    release draws the left end ``t`` of a window of width ``width`` from

        f_D(t)  ∝  exp(-(epsilon / g) / 2 * G_D(t)),
        G_D(t) = #{(i, j) : u_ij not in (t, t + width]},

    on ``[asinh(lower / s), asinh(upper / s) - width]`` of ``candidate_range``, by
    :func:`window_draw` (the exact KNG line sampler of :func:`private_window_box_unchecked`)
    with the budget ``epsilon / g`` (:func:`pooled_release_epsilon`). It returns the range
    ``(s sinh(t), s sinh(t + width))`` clamped into ``candidate_range``: the candidate range
    of every feature release that follows (the second stage).

    **Privacy (proof).** Replace-one adjacency, ``n`` public. Replacing one record (one row)
    changes at most its ``g`` values, each of which changes one term of ``G_D(t)`` by at most
    1, so ``sup_t |G_D(t) - G_D'(t)| <= g``: the unnormalised density moves by at most
    ``exp((epsilon / g) / 2 * g) = exp(epsilon / 2)`` at every ``t``, and so does its
    normaliser (the interval and the base measure are public), hence the density ratio is at
    most ``exp(epsilon)``: the draw is ``epsilon``-DP (the argument of
    :func:`private_window_box_unchecked` with sensitivity ``g``; its floating-point remark
    holds term by term). **Composition with the second stage:** every later release uses the
    returned range as its public candidate range, a function of the released ``t`` only;
    for each fixed range it is ``epsilon_j``-DP (its own proof), so by sequential (adaptive)
    composition the two stages cost ``epsilon + sum_j epsilon_j``, what :func:`fit_bounds`
    charges. The range has positive width and is finite, so nothing can raise after the
    spend (a value outside it is simply counted below or above the range by the second
    stage's draws).

    **Why.** Every feature draw must beat the log of the candidate range's length in units
    of its good region (about 52 units of ``u`` for ``DEFAULT_CANDIDATE_RANGE``); narrowing
    it to ``width = COARSE_WIDTH = 8`` saves ``ln(52 / 8) = 1.9`` nats per draw. The pooled
    draw itself is cheap: outside the data ``G_D = N`` against about ``(1 - F) N`` for a
    window holding a share ``F`` of the pooled values, an exponent gap ``epsilon n F / 2``
    that does not grow with ``g`` (the window's utility scales with ``N`` as its sensitivity
    does). It suits columns whose bulks lie within a factor ``e^8 ~ 3000`` of each other
    (most raw-unit tables); a column far outside the released range gets a box at the
    range's edge and is clipped to a near-constant (it loses its signal, nothing raises).

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._bounds import private_coarse_range_unchecked
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.normal(50, 5, 500), rng.normal(3000, 300, 500)])
    >>> lo, hi = private_coarse_range_unchecked(X, 0.2, (-1e9, 1e9), 8.0, rng)
    >>> bool(lo < 40 and hi > 3600)
    True
    """
    X = np.asarray(X, dtype=float)
    X = X.reshape(X.shape[0], -1)
    s = FIT_ASINH_SCALE if scale is None else scale
    c_lo, c_hi = candidate_range
    e = pooled_release_epsilon(epsilon, X.shape[1])
    t = window_draw(X.ravel(), e, c_lo, c_hi, float(width), s, rng)
    lo, hi = s * np.sinh(t), s * np.sinh(t + width)
    return float(np.clip(lo, c_lo, c_hi)), float(np.clip(hi, c_lo, c_hi))


def coarse_threshold():
    r"""The per-draw budget-ranks below which :func:`coarse_rule` switches the coarse stage on:
    ``4 ln(L / COARSE_WIDTH) / COARSE_FRACTION`` with ``L`` the length of
    ``DEFAULT_CANDIDATE_RANGE`` in ``u = asinh(x / FIT_ASINH_SCALE)`` (52.0): 37.5.

    Derivation (break-even). A median draw with budget ``e`` has exponent ``e / 2 |rank
    error|`` and a rank error of ``n / 2`` outside the data: ``r / 4`` nats with ``r = e n``
    its budget-ranks. The coarse stage shortens the range by ``ln(L / COARSE_WIDTH) = 1.87``
    nats, worth ``4 * 1.87 = 7.5`` ranks of such a draw, and takes ``COARSE_FRACTION r``
    ranks from it; it pays while ``COARSE_FRACTION r < 7.5``. Public constants only.
    """
    u_range = 2.0 * np.arcsinh(DEFAULT_CANDIDATE_RANGE[1] / FIT_ASINH_SCALE)
    return 4.0 * np.log(u_range / COARSE_WIDTH) / COARSE_FRACTION


def coarse_rule(eps_units, n_samples, is_target, unit_sizes):
    """Whether the feature units get the coarse pooled stage first (public inputs only).

    True when there are at least two feature units, each a single column (no
    ``bounds_groups``: a group is pooled already), and a feature unit's budget split over
    the two draws of the median / MAD box gives a draw less than :func:`coarse_threshold`
    budget-ranks (``37.5``). Measured (``docs/private_workflow.md``, "The coarse stage"):
    in the benchmark it switches on raw diabetes at ``epsilon`` = 1, 2, 4, HousePrices at
    1, 2, 4 and CASchools at 1, 2; every other cell keeps its release, draw for draw.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._bounds import coarse_rule
    >>> coarse_rule(np.array([0.2] * 10 + [0.3]), 331, [False] * 10 + [True], [1] * 11)
    True
    >>> coarse_rule(np.array([0.3] * 10 + [0.3]), 331, [False] * 10 + [True], [1] * 11)
    False
    """
    eps_units = np.asarray(eps_units, dtype=float)
    features = ~np.asarray(is_target, dtype=bool)
    if features.sum() < 2 or np.any(np.asarray(unit_sizes)[features] != 1):
        return False
    ranks = np.min(eps_units[features]) / 2.0 * max(n_samples, 1)
    return bool(ranks < coarse_threshold())


def private_bounds(
    X,
    epsilon,
    levels=DEFAULT_LEVELS,
    candidate_range=DEFAULT_CANDIDATE_RANGE,
    asinh_scale=1.0,
    widen=DEFAULT_WIDEN,
    random_state=None,
    accountant=None,
):
    """Differentially private per-column bounds of ``X`` (see the module docstring).

    Parameters
    ----------
    X : array-like of shape (n_samples,) or (n_samples, n_features)
        Finite values.
    epsilon : float
        Total budget of all ``2 * n_features`` quantiles.
    levels : (low, high), default=(0.25, 0.75)
        Quantile levels released privately.
    candidate_range : (lower, upper), default=(-1e9, 1e9)
        Public interval that the quantiles are drawn from (asinh base measure).
    asinh_scale : float, default=1.0
        Public resolution of the asinh measure near 0.
    widen : float, default=1.5
        The bounds are ``q_lo - widen * (q_hi - q_lo)`` and ``q_hi + widen * (q_hi - q_lo)``
        (Tukey's fences for the default levels); ``widen=0`` returns the quantiles.
    random_state : None, int, RandomState or Generator
    accountant : BudgetAccountant, optional
        Charged ``(epsilon, 0)`` after validation and before the data are used.

    Returns
    -------
    lower, upper : ndarrays of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._bounds import private_bounds
    >>> X = np.random.default_rng(0).uniform(100, 200, size=(5000, 2))
    >>> lo, hi = private_bounds(X, epsilon=1.0, widen=0.0, random_state=0)
    >>> bool(np.all((lo > 120) & (lo < 130) & (hi > 170) & (hi < 180)))
    True
    """
    from .accounting import check_accountant
    from .tools._common import check_release_epsilon, check_shares, check_values

    shape = np.shape(X)
    if len(shape) not in (1, 2) or 0 in shape:
        raise ValueError(f"X must be a non-empty 1-D or 2-D array, got shape {shape}.")
    values = check_values(X, name="X").reshape(shape[0], -1)
    levels, candidate_range = check_private_bounds_params(
        levels, candidate_range, asinh_scale, widen
    )
    epsilon = check_release_epsilon(epsilon)
    check_shares([epsilon / (2 * values.shape[1])])  # the share of private_bounds_unchecked
    accountant = check_accountant(accountant)
    rng = check_random_state(random_state)
    if accountant is not None:
        accountant.spend(epsilon, 0.0)
    return private_bounds_unchecked(
        values, epsilon, levels, candidate_range, asinh_scale, widen, rng
    )


def check_share(share, name="bounds_share"):
    """Return a budget share in (0, 1)."""
    if (
        isinstance(share, bool)
        or not isinstance(share, numbers.Real)
        or not np.isfinite(share)
        or not 0 < share < 1
    ):
        raise ValueError(f"{name} must be a number in (0, 1), got {share!r}.")
    return float(share)


def check_fit_share(share):
    """An estimator's ``bounds_share``: ``"auto"`` or a number in (0, 1) (no data needed)."""
    if isinstance(share, str) and share == AUTO:
        return share
    return check_share(share)


def bounds_epsilon(share, epsilon, n_samples, n_columns):
    """The part of a fit's ``epsilon`` spent on ``n_columns`` private bounds.

    A number is a fixed share. ``"auto"`` is ``clip(AUTO_RANKS * n_columns / (n_samples *
    epsilon), AUTO_MIN_SHARE, cap) * epsilon`` with ``cap = auto_share_cap(epsilon,
    n_samples, n_columns)`` (``AUTO_MAX_SHARE = 0.5``, or up to ``AUTO_SHARE_LIMIT = 0.6``
    when that makes every draw reliable): each column's two medians need
    ``epsilon_each * margin / 2`` (the log-odds of a draw outside the data, ``margin`` the rank
    error out there) to beat the log of the candidate range's length in data spreads, so the
    budget the bounds need grows with the number of columns and falls as ``1 / n``. The
    constant ``AUTO_RANKS = 600`` is measured (``docs/private_workflow.md``: on CPS1988,
    n = 21,116 training rows and 10 private columns, bounds cheaper than about 0.3 lost
    accuracy; rare binary indicators have a margin of only ``min(p1, 1 - p1) n``). It depends
    only on public quantities: ``n`` is public under replace-one adjacency, and so are the
    column count and ``epsilon``.
    """
    if isinstance(share, str):
        share = AUTO_RANKS * n_columns / (max(n_samples, 1) * float(epsilon))
        share = min(max(share, AUTO_MIN_SHARE), auto_share_cap(epsilon, n_samples, n_columns))
    return float(share) * float(epsilon)


def auto_share_cap(epsilon, n_samples, n_units):
    r"""The largest share ``"auto"`` gives the bounds: ``need / epsilon`` when that lies in
    ``(AUTO_MAX_SHARE, AUTO_SHARE_LIMIT]``, else ``AUTO_MAX_SHARE``, with ``need =
    RELIABLE_RANKS * 2 n_units / n``.

    ``need`` is what the ``2 n_units`` median / MAD draws cost when each gets the budget of a
    reliable draw, ``RELIABLE_RANKS / n``: a draw with budget ``e`` lands outside the data
    with log-odds about ``-e n / 4`` plus the log of the candidate range's length in data
    spreads (about 26 nats for ``DEFAULT_CANDIDATE_RANGE`` and ``FIT_ASINH_SCALE``); the
    exact law on real columns gives P(draw in the interquartile range) 0.68-0.91 at
    ``e n = 32`` (``docs/private_workflow.md``, "Small data"). Three regimes:

    * ``need <= AUTO_MAX_SHARE * epsilon``: the cap is the old 0.5 (nothing changes);
    * ``need`` up to ``AUTO_SHARE_LIMIT * epsilon``: a little more than half of ``epsilon``
      makes every draw reliable, which is worth more to the fit than the budget it takes
      from the model (raw diabetes, ``epsilon = 4``, 500 splits: R^2 0.265 / 0.281 / 0.291 /
      0.272 at shares 0.5 / 0.53 / 0.6 / 0.7, public bounds 0.288);
    * ``need`` above that: no share within the limit makes the draws reliable, and a
      larger share only starves the model (measured, 500 splits: raw diabetes at
      ``epsilon = 1, 2`` as poor at 0.6 as at 0.5; Engel at ``epsilon = 1``: R^2 0.337 at
      0.6 against 0.348 at 0.5, collapsing at 0.7; breast cancer at ``epsilon = 1``, 200
      splits: accuracy 0.671 at 0.6 against 0.832 at 0.5, because the larger share lifts
      the columns over :func:`scale_only_rule`'s threshold and trades the one reliable
      scale-only draw for two under-funded ones), so the cap stays 0.5.

    It depends on ``epsilon``, ``n`` (public under replace-one adjacency) and the number of
    units only. ``2 n_units`` is an upper bound on the draws (a scale-only unit makes one).

    Examples
    --------
    >>> from dpreg._bounds import auto_share_cap
    >>> round(auto_share_cap(4.0, 331, 11), 3)  # raw diabetes: 22 draws need 2.13
    0.532
    >>> auto_share_cap(8.0, 331, 11), auto_share_cap(1.0, 331, 11)
    (0.5, 0.5)
    """
    reliable = RELIABLE_RANKS * 2.0 * n_units / (max(n_samples, 1) * float(epsilon))  # need / eps
    return reliable if AUTO_MAX_SHARE < reliable <= AUTO_SHARE_LIMIT else AUTO_MAX_SHARE


def split_budget(share, epsilon, n_samples, n_units):
    """``(eps_bounds, eps_model)``: a fit's ``epsilon`` split between ``n_units`` private
    bounds (:func:`bounds_epsilon`) and the model, with ``eps_bounds + eps_model <= epsilon``
    in floating point (round-off would otherwise let the parts exceed the total: the model's
    part is then lowered by one float step). A function of public quantities only, so an
    estimator can plan its model at ``eps_model`` before the spend and get the same value
    back from :func:`fit_bounds` after it.
    """
    eps_b = bounds_epsilon(share, epsilon, n_samples, n_units)
    eps_b, eps_model = shares_within([eps_b, float(epsilon) - eps_b], epsilon, lower=1).tolist()
    return eps_b, eps_model


def check_bounds_param(bounds, size, name):
    """Check an estimator's bounds parameter with no data: a pair, None or ``"private"``.

    Called in ``fit`` before anything is spent, so that a bad value is a ``ValueError`` that
    costs nothing. Returns True when the parameter asks for private bounds.
    """
    if isinstance(bounds, str):
        if bounds != PRIVATE:
            raise ValueError(f"{name} must be (lower, upper), None or 'private', got {bounds!r}.")
        return True
    if bounds is not None:
        check_bounds(bounds, size, name=name)
    return False


def column_epsilons(eps_b, n_samples, is_target, releases=None):
    """Split the bounds' budget ``eps_b`` over the stacked private columns (public inputs only).

    A regression's target is worth more than one feature: its box sets the scale of every
    prediction, so a median that misses the data ruins the whole model, while a feature
    whose box misses only loses that feature (``predict`` clips into the released box).
    Each of the ``k`` target columns therefore gets
    ``eps_t = min(max(eps_b / m, 8 L / n), eps_b / (2 k))`` with ``L =
    MEDIAN_TARGET_LOG_ODDS`` and the ``m - k``
    features share the rest equally (all columns equally when there is no target, or only
    targets). Why ``8 L / n``: the column's median draw gets ``eps_t / 2`` and its exponent
    is ``eps_t / 4 |rank error|``; a draw outside the data has a rank error of at least
    ``n / 2``, so its density is ``exp(-eps_t n / 8)`` times that at the median, i.e. log-odds
    ``L`` per unit of base measure. What the draw needs is ``L`` minus the log of the ratio of
    the candidate range's base measure to that of the data's bulk: in the asinh coordinate
    ``u = asinh(y / FIT_ASINH_SCALE)`` a response that is a level far from 0 with a
    coefficient of variation ``c`` has its interquartile range in ``du ~ 1.35 c``, so a
    median / MAD target needs ``ln(1.4 / du)`` nats more than a draw that may be off by a
    factor of 2 (``du ~ 1.4``, the scale-only target below): 3.8 nats at ``c = 2 %`` (log
    house prices, mean test scores: issue 14's HousePrices and CASchools, where the median
    missed the data in half the splits with ``L = 8``). Hence ``MEDIAN_TARGET_LOG_ODDS =
    12 = 8 + 4``; measured in ``docs/private_workflow.md`` (*The response's floor*: 8 / 12 /
    16 on every small benchmark set, 12 lowers no cell). The amounts add up to ``eps_b``
    (basic composition over the columns); they depend only on ``eps_b``, ``n`` (public under
    replace-one adjacency) and which columns are targets.

    ``releases`` (one count per column, 1 for a scale-only column of :func:`fit_bounds`, 2
    for a median / MAD one; default all 2) splits per *release* instead: every release of a
    target gets ``a = min(max(eps_b / R, 4 L / n), eps_b / (2 R_t))`` (``R``
    releases in all, ``R_t`` of targets; the floor per draw of ``TARGET_LOG_ODDS = 8``,
    measured, when the targets are scale-only, whose one draw may be off by a factor of
    about 2, else ``MEDIAN_TARGET_LOG_ODDS``) and the feature
    columns share the rest in proportion to their releases. With all counts 2 this is the
    rule above. Measured on Engel at eps = 1 (KNG, a scale-only response box): R^2 0.70
    against 0.775 public with the per-release split, -0.06 with the per-column one.

    Examples
    --------
    >>> from dpreg._bounds import column_epsilons
    >>> column_epsilons(0.5, 331, [False] * 10 + [True]).round(3).tolist()[-2:]
    [0.025, 0.25]
    >>> column_epsilons(1.0, 100, [False, False]).tolist()
    [0.5, 0.5]
    >>> column_epsilons(0.6, 1000, [False, True], releases=[2, 1]).round(3).tolist()
    [0.4, 0.2]
    """
    is_target = np.asarray(is_target, dtype=bool)
    m, k = is_target.size, int(is_target.sum())
    if releases is not None:
        r = np.asarray(releases, dtype=float)
        total, r_t = float(r.sum()), float(r[is_target].sum())
        if k in (0, m):
            return shares_within(eps_b * r / total, eps_b)
        # a median / MAD target (two draws) needs the larger log-odds (see above)
        odds = MEDIAN_TARGET_LOG_ODDS if np.any(r[is_target] > 1) else TARGET_LOG_ODDS
        a = min(max(eps_b / total, 4.0 * odds / max(n_samples, 1)), eps_b / (2 * r_t))
        # a unit's draws split its part exactly (median_mad_epsilons): only the units' sum
        # must stay within eps_b, exactly
        return shares_within(
            np.where(is_target, r * a, (eps_b - r_t * a) * r / (total - r_t)), eps_b
        )
    if k in (0, m):
        return shares_within(np.full(m, eps_b / m), eps_b)
    eps_t = min(max(eps_b / m, 8.0 * MEDIAN_TARGET_LOG_ODDS / max(n_samples, 1)), eps_b / (2 * k))
    return shares_within(np.where(is_target, eps_t, (eps_b - k * eps_t) / (m - k)), eps_b)


def scale_only_rule(eps_cols, n_samples, is_target):
    """Whether the features get one scale-only release each (public inputs only).

    True when a feature column's budget, split over the two releases of the median / MAD
    box, leaves each release less than ``SCALE_ONLY_RANKS / n``: then the one release of
    :func:`private_abs_scale_unchecked` (twice the budget per draw) is used instead.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._bounds import scale_only_rule
    >>> scale_only_rule(np.full(10, 0.05), 426, [False] * 10)  # breast cancer, eps = 1
    True
    >>> scale_only_rule(np.full(10, 0.1), 426, [False] * 10)  # eps = 2
    False
    """
    eps_cols = np.asarray(eps_cols, dtype=float)
    features = ~np.asarray(is_target, dtype=bool)
    if not features.any():
        return False
    return bool(np.min(eps_cols[features]) / 2.0 * max(n_samples, 1) < SCALE_ONLY_RANKS)


ALL = "all"


def check_bounds_groups(groups, n_features):
    """Validate ``bounds_groups`` (no data needed): None, ``"all"`` or lists of feature indices.

    Returns None or a list of sorted int arrays: disjoint, each index in ``[0, n_features)``
    (negative indices count from the end), each group non-empty. ``"all"`` is one group of
    every feature. A ``ValueError`` otherwise, before anything is spent.

    Examples
    --------
    >>> from dpreg._bounds import check_bounds_groups
    >>> [g.tolist() for g in check_bounds_groups([[0, 2], [-1]], 4)]
    [[0, 2], [3]]
    >>> [g.tolist() for g in check_bounds_groups("all", 3)]
    [[0, 1, 2]]
    """
    if groups is None:
        return None
    if isinstance(groups, str):
        if groups != ALL:
            raise ValueError(f"bounds_groups must be None, 'all' or lists of column indices, "
                             f"got {groups!r}.")  # fmt: skip
        return [np.arange(n_features)]
    message = (
        "bounds_groups must be None, 'all' or a list of non-empty, disjoint lists of column "
        f"indices in [-{n_features}, {n_features}), got {groups!r}."
    )
    out, seen = [], set()
    try:
        for group in groups:
            if isinstance(group, (str, bytes)) or len(group) == 0:
                raise ValueError(message)
            idx = []
            for j in group:
                if isinstance(j, (bool, np.bool_)) or not isinstance(j, numbers.Integral):
                    raise ValueError(message)
                if not -n_features <= j < n_features:
                    raise ValueError(message)
                idx.append(int(j) % n_features)
            if len(set(idx)) != len(idx) or seen & set(idx):
                raise ValueError(message)
            seen |= set(idx)
            out.append(np.array(sorted(idx), dtype=int))
    except TypeError:
        raise ValueError(message) from None
    if not out:
        raise ValueError(message)
    return out


def pooled_release_epsilon(epsilon_unit, size):
    r"""The budget argument of a release on a unit of ``size`` pooled columns: ``epsilon / size``.

    **Proof** that the pooled release of a group costs ``epsilon_unit``. The release draws
    the exact KNG median of the ``N = n g`` pooled values (and then of their deviations from
    the released median) with the utility ``-|c(theta) - N / 2|``, ``c(theta) =
    #{(i, j) : x_ij <= theta}``. Replacing one record (one row) changes at most ``g`` of the
    pooled values, so ``c`` moves by at most ``g`` at every ``theta``: the sensitivity is
    ``g``. The KNG draw with exponent ``(e / 2) |c - N/2|`` is ``e g``-DP (the unnormalised
    density moves by at most ``exp(e g / 2)`` and so does its normaliser), so ``e =
    epsilon_draw / g`` makes each draw ``epsilon_draw``-DP and the release's draws compose to
    ``epsilon_unit`` as for one column. The same holds for ``x -> |x|`` (scale-only) and
    ``x -> |x - m|`` with ``m`` released: fixed per-value maps keep ``g`` changed values per
    row. Size 1 is the per-column release itself.

    Why it pays: outside the data ``|c - N/2| = n g / 2``, so the exponent there is ``e n g /
    4 = epsilon_draw n / 4``: a group of ``g`` columns buys the reliability of ONE column with
    the whole budget of the unit, instead of ``g`` columns at ``1 / g`` of it each. It is
    only right when one box suits every column of the group (a shared unit, centre and
    spread: e.g. columns standardised by a public rule); that is public knowledge the user
    states, never read from the data.
    """
    return float(epsilon_unit) / int(size)


def _units(private, names, groups):
    """Index arrays into the stacked private columns: one per unit (a group or a column)."""
    units, start = [], 0
    for index, cols in private:
        width = cols.shape[1]
        grouped = np.zeros(width, dtype=bool)
        if names[index] == "bounds_X" and groups is not None:
            for group in groups:
                units.append(start + np.asarray(group, dtype=int))
                grouped[group] = True
        units.extend(np.array([start + j]) for j in np.flatnonzero(~grouped))
        start += width
    # a fixed public order (by first column), so that an ungrouped fit draws as before
    return sorted(units, key=lambda u: int(u[0]))


def fit_bounds(
    columns,
    params,
    epsilon,
    share,
    rng,
    names,
    scale_only_features=False,
    scale_only_targets=False,
    groups=None,
    relative_features=False,
    window_features=False,
):
    """Resolve the bounds of one fit: the single code path of ``bounds_X/bounds_y="private"``.

    ``params[i]`` is the bounds parameter (pair, None or ``"private"``, already checked by
    :func:`check_bounds_param`) of the data ``columns[i]`` (a 2-D float array, validated: finite).
    The estimator has reserved its *whole* ``epsilon`` in its accountant before the call (one
    ledger entry for the fit). If any parameter is ``"private"``, the columns of all private
    parameters are stacked and released together by ONE call of
    :func:`private_median_mad_unchecked` with ``share * epsilon`` (``share="auto"``: see
    :func:`bounds_epsilon`), split over the ``m`` stacked columns by :func:`column_epsilons`
    (the columns of a parameter named ``"bounds_y"`` are targets; a feature's median and
    MAD get half of its part each, a target's median ``TARGET_MEDIAN_FRACTION = 0.6`` of it
    and its MAD the rest, :func:`median_mad_epsilons`; basic composition), with the box
    ``median -/+ FIT_WIDEN * MAD``
    for features and ``FIT_WIDEN_TARGET * MAD`` for targets, and the fit gets the rest: the
    bounds and the fit compose sequentially to ``epsilon`` (if
    round-off made the two parts add up to more than ``epsilon``, the fit's part is lowered by
    one float step). A released interval of zero width (a MAD of 0, e.g. a column with one
    value on more than half of the rows) is widened to a half-width of
    ``max(1e-3, 1e-3 |value|)`` around its value: post-processing, so that every later step
    sees a non-degenerate box and nothing can raise after the budget is spent.

    ``scale_only_features=True`` (an estimator whose accuracy depends on the feature scale
    only within a factor of about 2: the logistic model) switches the feature columns to the
    one-release symmetric box ``-/+ SCALE_WIDEN * median |x_j|``
    (:func:`private_abs_scale_unchecked`) when :func:`scale_only_rule`
    says the two releases would each be under-funded; targets keep the median / MAD box. The
    choice depends on ``epsilon``, the share, ``n`` and the column counts only.
    ``scale_only_targets=True`` does the same for the target columns, always (the KNG
    model, whose response box only sets the parameter domain, which must contain the
    coefficients: measured on Engel, eps = 1, the exact symmetric box fits as well as the
    exact median / MAD box, R^2 0.858 against 0.857). With scale-only columns the budget is
    split per release (``column_epsilons(..., releases)``), after the rule has been applied
    to the per-column split.

    ``groups`` (the output of :func:`check_bounds_groups`: None or lists of column indices of
    the parameter named ``"bounds_X"``) pools each group of feature columns into ONE *unit*
    with one shared box: the unit is released like a single column, by the same release
    function, on its ``n g`` pooled values ``x_ij`` (``g`` columns) with its budget divided
    by ``g`` (:func:`pooled_release_epsilon`, the proof is there). Everything above (the
    share, the split, the scale-only rule) then counts units instead of columns; with no
    groups every column is its own unit and the release is the one without groups, draw for
    draw.

    ``relative_features=True`` (the linear and KNG models) switches the feature units that
    are not scale-only to :func:`private_relative_box_unchecked` (ONE median per unit, drawn
    with the unit's whole two-draw budget, box ``m -/+ RELATIVE_WIDEN |m|``) when
    :func:`relative_rule` says the two median / MAD draws would each be under-funded. The
    budgets are those of the two-release split (``column_epsilons``), so the bounds still
    cost ``eps_b`` in total (proof in the release's docstring). Draw order (public):
    scale-only units, then the relative units, then the median / MAD units, each in unit
    order. With the flag off, or where the rule says no, the release is the one without
    it, draw for draw.

    ``window_features=True`` (with ``relative_features=True``; the linear model) releases
    those same units, under the same rule and with the same budgets and draw order, by
    :func:`private_window_box_unchecked` (the densest window of width ``WINDOW_WIDTH`` in
    the asinh coordinate) instead of the relative box: one draw each, proof in its
    docstring. Where the rule says no, the release is the one without it, draw for draw.

    ``window_features=True`` also enables the **coarse stage** where :func:`coarse_rule`
    says so (at least two single-column feature units whose median / MAD draws would each
    get less than :func:`coarse_threshold` budget-ranks): ``COARSE_FRACTION`` of the
    feature units' budgets (after the rules above, which see the undiscounted budgets, so
    the choice of release is unchanged) goes to ONE pooled window of width
    ``COARSE_WIDTH`` over all their values (:func:`private_coarse_range_unchecked`, drawn
    first), and the features' releases (window or median / MAD) then draw with the rest of
    their budgets over the released range instead of ``DEFAULT_CANDIDATE_RANGE``; the
    targets keep theirs. The parts still add up to ``eps_b`` (the coarse part is lowered by
    a float step if round-off would make them exceed it); sequential composition, proof in
    the release's docstring. Where the rule says no, nothing changes, draw for draw.

    Pairs are returned as validated arrays; None stays None (the estimator then reads the
    bounds from the data with its ``PrivacyLeakWarning``, as before).

    Returns
    -------
    resolved : list of ``(lower, upper)`` pairs of arrays, or None entries
    epsilon_left : float
        What the fit may spend: ``epsilon`` minus the bounds' part if any were private, else
        ``epsilon``.
    """
    resolved, private = [], []
    for cols, bounds, name in zip(columns, params, names):
        shape = np.shape(cols)
        size = shape[1] if len(shape) == 2 else 1
        if isinstance(bounds, str):
            private.append((len(resolved), np.asarray(cols, dtype=float).reshape(shape[0], -1)))
            resolved.append(None)
        elif bounds is None:
            resolved.append(None)
        else:
            resolved.append(check_bounds(bounds, size, name=name))
    if not private:
        return resolved, float(epsilon)
    stacked = np.hstack([cols for _, cols in private])
    is_target = np.concatenate(
        [np.full(cols.shape[1], names[index] == "bounds_y") for index, cols in private]
    )
    units = _units(private, names, groups)
    unit_target = np.array([is_target[u[0]] for u in units])
    eps_b, eps_left = split_budget(share, epsilon, stacked.shape[0], len(units))
    eps_units = column_epsilons(eps_b, stacked.shape[0], unit_target)
    scale_only = np.zeros(len(units), dtype=bool)  # public: which units get one release
    if scale_only_features and scale_only_rule(eps_units, stacked.shape[0], unit_target):
        scale_only |= ~unit_target
    if scale_only_targets:
        scale_only |= unit_target
    if scale_only.any():  # one draw instead of two: split the budget per release
        releases = np.where(scale_only, 1, 2)
        eps_units = column_epsilons(eps_b, stacked.shape[0], unit_target, releases)
    relative = np.zeros(len(units), dtype=bool)  # public: which units share one spread
    if relative_features and relative_rule(eps_units, stacked.shape[0], unit_target):
        relative = ~unit_target & ~scale_only
    # public: the coarse pooled stage (linear model) narrows the features' candidate range
    ranges = [DEFAULT_CANDIDATE_RANGE] * len(units)
    sizes = [u.size for u in units]
    if window_features and coarse_rule(eps_units, stacked.shape[0], unit_target, sizes):
        pooled = np.flatnonzero(~unit_target & ~scale_only)
        former = eps_units[pooled].copy()
        total = float(np.sum(former))
        eps_units = eps_units.copy()
        eps_units[pooled] *= 1.0 - COARSE_FRACTION
        eps_coarse = total - float(np.sum(eps_units[pooled]))  # COARSE_FRACTION of total
        # round-off: the stage and the pooled units never exceed their former parts, exactly
        parts = shares_within([eps_coarse, *eps_units[pooled]], former, lower=0)
        eps_coarse = float(parts[0])
        cols = np.concatenate([units[k] for k in pooled])
        coarse = private_coarse_range_unchecked(
            stacked[:, cols], eps_coarse, DEFAULT_CANDIDATE_RANGE, COARSE_WIDTH, rng
        )
        for k in pooled:
            ranges[k] = coarse
    lower, upper = np.empty(is_target.size), np.empty(is_target.size)
    # scale-only units, then relative ones, then median / MAD ones: a fixed public order
    for k in np.flatnonzero(scale_only):
        cols = units[k]
        lo, hi = private_abs_scale_unchecked(
            stacked[:, cols].reshape(-1, 1),  # a group: its n * g pooled values
            pooled_release_epsilon(eps_units[k], cols.size),
            DEFAULT_CANDIDATE_RANGE,
            SCALE_WIDEN,
            rng,
        )
        lower[cols], upper[cols] = lo[0], hi[0]
    # one draw with the unit's whole (two-draw) budget: the window box or the relative box
    release, width = (
        (private_window_box_unchecked, WINDOW_WIDTH)
        if window_features
        else (private_relative_box_unchecked, RELATIVE_WIDEN)
    )
    for k in np.flatnonzero(relative):
        cols = units[k]
        lo, hi = release(
            stacked[:, cols].reshape(-1, 1),
            pooled_release_epsilon(eps_units[k], cols.size),
            ranges[k],
            width,
            rng,
        )
        lower[cols], upper[cols] = lo[0], hi[0]
    for k in np.flatnonzero(~scale_only & ~relative):
        cols = units[k]
        lo, hi = private_median_mad_unchecked(
            stacked[:, cols].reshape(-1, 1),
            pooled_release_epsilon(eps_units[k], cols.size),
            ranges[k],
            FIT_WIDEN_TARGET if unit_target[k] else FIT_WIDEN,
            rng,
            # the target's median needs more log-odds than its MAD (TARGET_MEDIAN_FRACTION)
            median_fraction=TARGET_MEDIAN_FRACTION if unit_target[k] else 0.5,
        )
        lower[cols], upper[cols] = lo[0], hi[0]
    pad = np.maximum(1e-3, 1e-3 * np.abs(lower))
    flat = ~(upper > lower)
    lower, upper = np.where(flat, lower - pad, lower), np.where(flat, upper + pad, upper)
    start = 0
    for index, cols in private:
        stop = start + cols.shape[1]
        resolved[index] = (lower[start:stop], upper[start:stop])
        start = stop
    return resolved, eps_left


def clip_released(values, box):
    """Clip ``values`` (rows) into a released ``box = (lower, upper)``; ``None`` leaves them as is.

    The prediction-time half of ``"private"`` bounds: a model fitted on data clipped into a
    *released* box sees test rows through the same clip, so a column whose box came out narrow
    (a private median or MAD that missed) stays the near-constant it was in training instead
    of being extrapolated by its noisy coefficient. The box is public once released, so this
    is post-processing. The dtype of ``values`` is kept (float32 stays float32).

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._bounds import clip_released
    >>> clip_released(np.array([[5.0, -3.0]]), (np.array([0.0, 0.0]), np.array([1.0, 1.0])))
    array([[1., 0.]])
    >>> clip_released(np.array([7.0]), None)
    array([7.])
    """
    if box is None:
        return values
    lower, upper = box
    dtype = getattr(values, "dtype", None)
    out = np.clip(values, lower, upper)
    return out.astype(dtype, copy=False) if dtype is not None else out


def resolve_bounds(
    bounds,
    X,
    epsilon,
    share=0.2,
    levels=DEFAULT_LEVELS,
    candidate_range=DEFAULT_CANDIDATE_RANGE,
    random_state=None,
    name="bounds_X",
):
    """Bounds for an estimator: given, read from the data (with a warning), or ``"private"``.

    The estimator must validate ``X`` (finite, 2-D) and charge its accountant for its *total*
    ``epsilon`` before calling this; ``"private"`` then spends ``share * epsilon`` of that total
    on :func:`private_bounds` and the estimator fits with the returned remainder.

    Returns
    -------
    lower, upper : ndarrays of shape (n_features,)
    epsilon_left : float
        ``epsilon`` minus what the bounds cost (``epsilon`` itself unless ``"private"``).

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._bounds import resolve_bounds
    >>> X = np.random.default_rng(0).normal(size=(2000, 1))
    >>> lo, hi, left = resolve_bounds("private", X, epsilon=1.0, random_state=0)
    >>> left
    0.8
    >>> lo, hi, left = resolve_bounds((-3, 3), X, epsilon=1.0)
    >>> lo.tolist(), hi.tolist(), left
    ([-3.0], [3.0], 1.0)
    """
    X = np.asarray(X, dtype=float)
    X = X.reshape(X.shape[0], -1)
    if isinstance(bounds, str):
        if bounds != PRIVATE:
            raise ValueError(f"{name} must be (lower, upper), None or 'private', got {bounds!r}.")
        share = check_share(share)
        levels, candidate_range = check_private_bounds_params(levels, candidate_range)
        rng = check_random_state(random_state)
        eps_b = share * float(epsilon)
        lower, upper = private_bounds_unchecked(
            X, eps_b, levels, candidate_range, 1.0, DEFAULT_WIDEN, rng
        )
        return lower, upper, float(epsilon) - eps_b
    lower, upper = check_bounds(bounds, X.shape[1], X=X if bounds is None else None, name=name)
    return lower, upper, float(epsilon)
