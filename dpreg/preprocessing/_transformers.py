r"""Private bounds, min-max and standard scaling as scikit-learn transformers.

All three learn per-feature bounds ``[lower_, upper_]`` -- privately by default
(:func:`dpreg._bounds.private_bounds`: quartiles by the exact KNG sampler, widened to Tukey's
fences) or from public ``bounds`` -- and clip into them. The private standard scaler then
releases the mean and variance of the clipped data (:mod:`dpreg.tools`, Laplace mechanism).

Privacy (replace-one, n public): ``fit`` is a sequential composition of epsilon-DP releases
(bounds with ``bounds_share * epsilon``, the ``p`` means and ``p`` variances with the rest
split equally), so it is ``epsilon``-DP; the accountant is charged ``epsilon`` once, after the
input is validated and before the data are read. ``PrivateBounds`` and ``PrivateMinMaxScaler``
with public bounds release nothing and are not charged. ``transform`` uses only released quantities
(post-processing: it costs nothing, and it is applied to any data, e.g. a test set).

Public output ranges (for the next step of a pipeline)
------------------------------------------------------
The downstream private estimator needs *public* bounds. Each transformer's output lies in a
range fixed before seeing the data:

* :class:`PrivateBounds`: ``[lower_, upper_]`` (released, hence public, but known only after
  ``fit``) -- pass ``bounds_X="private"`` downstream or prefer the scalers;
* :class:`PrivateMinMaxScaler`: exactly ``feature_range`` (default ``[0, 1]``);
* :class:`PrivateStandardScaler`: ``[-clip, clip]`` (default ``[-3, 3]``): the standardised
  value is clipped there.

So ``make_pipeline(PrivateStandardScaler(clip=3), FunctionalLinearRegression(bounds_X=(-3,
3), ...))`` is private end to end; with one accountant passed to both, both spends land in one
ledger. See ``docs/private_workflow.md``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._bounds import DEFAULT_CANDIDATE_RANGE, DEFAULT_LEVELS, DEFAULT_WIDEN, PublicBox
from .._validation import equal_share
from ..tools._common import check_shares
from ..tools._moments import (
    mean_sum_sensitivity,
    private_mean,
    private_var,
    var_z_sensitivity,
)
from ._base import PrivateTransformerBase


def _check_positive(value, name):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}.")
    return float(value)


class PrivateBounds(PrivateTransformerBase):
    """Learn per-feature bounds privately and clip into them.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of ``fit``.
    bounds : "private" or (lower, upper), default="private"
        ``"private"`` learns them (all of ``epsilon``); public bounds cost nothing.
    levels : (low, high), default=(0.25, 0.75)
        Levels of the private quantiles.
    widen : float, default=1.5
        Bounds are ``q_lo - widen (q_hi - q_lo)`` and ``q_hi + widen (q_hi - q_lo)``.
    candidate_range : (lower, upper), default=(-1e9, 1e9)
        Public interval the quantiles are drawn from (asinh base measure).
    random_state : None, int, RandomState or Generator
    accountant : BudgetAccountant, optional
        Charged ``(epsilon, 0)`` once per ``fit`` with private bounds; public bounds are not
        charged (nothing is released).

    Attributes
    ----------
    lower_, upper_ : ndarray of shape (n_features,)
        The bounds (private releases).
    epsilon_bounds_ : float
        The part of ``epsilon`` spent on the bounds.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.preprocessing import PrivateBounds
    >>> X = np.random.default_rng(0).normal(50, 10, size=(5000, 2))
    >>> pb = PrivateBounds(epsilon=1.0, random_state=0).fit(X)
    >>> bool(np.all((pb.lower_ > 10) & (pb.lower_ < 30) & (pb.upper_ > 70) & (pb.upper_ < 90)))
    True
    """

    _spends_rest = False

    def __init__(
        self,
        epsilon=1.0,
        bounds="private",
        levels=DEFAULT_LEVELS,
        widen=DEFAULT_WIDEN,
        candidate_range=DEFAULT_CANDIDATE_RANGE,
        random_state=None,
        accountant=None,
    ):
        self.epsilon = epsilon
        self.bounds = bounds
        self.levels = levels
        self.widen = widen
        self.candidate_range = candidate_range
        self.random_state = random_state
        self.accountant = accountant

    def _transform(self, X):
        return X

    def inverse_transform(self, X):
        """Identity (clipping cannot be undone)."""
        return np.asarray(X, dtype=float)


class PrivateMinMaxScaler(PrivateTransformerBase):
    """Scale features into ``feature_range`` using private bounds; the output is clipped there.

    The map sends ``lower_`` to ``feature_range[0]`` and ``upper_`` to ``feature_range[1]``
    (constant features, ``lower_ == upper_``, go to the middle of the range). A downstream
    private estimator can be given ``bounds_X=feature_range``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of ``fit`` (all of it buys the bounds).
    feature_range : (min, max), default=(0, 1)
    bounds, levels, widen, candidate_range, random_state, accountant
        As in :class:`PrivateBounds`.

    Attributes
    ----------
    lower_, upper_ : ndarray of shape (n_features,)
    scale_, min_ : ndarray of shape (n_features,)
        ``X_scaled = X_clipped * scale_ + min_`` (sklearn's names).
    output_bounds_ : tuple
        ``feature_range`` as floats.

    Notes
    -----
    The map must be finite in floating point: public bounds and the ``candidate_range`` of
    private bounds whose map onto ``feature_range`` overflows are refused before the spend, and
    released bounds too narrow for a finite map (a very wide ``feature_range``) are widened
    around their centre until it is finite (post-processing; ``lower_``/``upper_`` are the
    widened bounds).

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.preprocessing import PrivateMinMaxScaler
    >>> X = np.random.default_rng(0).uniform(-5, 5, size=(5000, 3))
    >>> Z = PrivateMinMaxScaler(epsilon=1.0, random_state=0).fit_transform(X)
    >>> bool(Z.min() >= 0.0 and Z.max() <= 1.0)
    True
    """

    _spends_rest = False

    def __init__(
        self,
        epsilon=1.0,
        feature_range=(0, 1),
        bounds="private",
        levels=DEFAULT_LEVELS,
        widen=DEFAULT_WIDEN,
        candidate_range=DEFAULT_CANDIDATE_RANGE,
        random_state=None,
        accountant=None,
    ):
        self.epsilon = epsilon
        self.feature_range = feature_range
        self.bounds = bounds
        self.levels = levels
        self.widen = widen
        self.candidate_range = candidate_range
        self.random_state = random_state
        self.accountant = accountant

    def _check_params(self):
        try:
            a, b = (float(v) for v in self.feature_range)
        except (TypeError, ValueError):
            raise ValueError(f"feature_range must be a pair, got {self.feature_range!r}.") from None
        if not (math.isfinite(a) and math.isfinite(b) and a < b and math.isfinite(b - a)):
            raise ValueError(
                "feature_range needs finite min < max with a finite width max - min, "
                f"got {self.feature_range!r}."
            )
        return super()._check_params()

    def _check_public_bounds(self, lower, upper):
        """The map ``x * scale_ + min_`` needs a finite width, scale and offset per column,
        and finite ``x * scale_`` at both ends (checked before the spend)."""
        a, b = (float(v) for v in self.feature_range)
        for lo, hi in zip(lower.tolist(), upper.tolist()):
            if hi - lo != 0 and not _finite_map(lo, hi, a, b):
                raise ValueError(
                    "bounds cannot be mapped onto feature_range in floating point: each "
                    "column needs a finite width upper - lower and a finite "
                    "(max - min) / (upper - lower) (e.g. not wider than 1.7e308 or narrower "
                    f"than (max - min) / 1.7e308), got {self.bounds!r}."
                )

    def _check_candidate_range(self, candidate_range):
        """Private bounds lie in ``candidate_range``, and a released pair whose map is not
        finite is widened towards it (:meth:`_usable_bounds`): the range itself must map."""
        a, b = (float(v) for v in self.feature_range)
        if not _finite_map(*candidate_range, a, b):
            raise ValueError(
                "candidate_range cannot be mapped onto feature_range in floating point: it "
                "needs a finite width upper - lower and a finite (max - min) / (upper - lower), "
                f"got {self.candidate_range!r}."
            )

    def _usable_bounds(self, lower, upper, candidate_range):
        """Released bounds too narrow for a finite map (a wide ``feature_range`` on narrow
        data: ``scale_`` was inf and ``transform`` gave NaN) are widened around their centre,
        doubling the width, until the map is finite; at worst they become the candidate
        range, which maps (checked before the spend). Post-processing of the release."""
        a, b = (float(v) for v in self.feature_range)
        lower, upper = lower.copy(), upper.copy()
        for j, (lo, hi) in enumerate(zip(lower.tolist(), upper.tolist())):
            if hi - lo != 0:
                lower[j], upper[j] = _widen_until_finite(lo, hi, a, b, candidate_range)
        return lower, upper

    def _fit_private(self, X, lower, upper, epsilon, rng):
        a, b = (float(v) for v in self.feature_range)
        width = upper - lower
        self.scale_ = np.where(width > 0, (b - a) / np.where(width > 0, width, 1.0), 0.0)
        self.min_ = np.where(width > 0, a - lower * self.scale_, (a + b) / 2.0)
        self.output_bounds_ = (a, b)

    def _transform(self, X):
        return np.clip(X * self.scale_ + self.min_, *self.output_bounds_)

    def inverse_transform(self, X):
        """Map scaled values back to the clipped original units."""
        X = np.asarray(X, dtype=float)
        inv = np.where(self.scale_ > 0, 1.0 / np.where(self.scale_ > 0, self.scale_, 1.0), 0.0)
        return np.where(self.scale_ > 0, (X - self.min_) * inv, self.lower_)


def _finite_map(lo, hi, a, b):
    """Whether ``x * scale + offset`` mapping ``[lo, hi]`` onto ``[a, b]`` is finite at both
    ends (Python floats: an overflow is inf, without a warning)."""
    width = hi - lo
    if not (math.isfinite(width) and width > 0):
        return False
    scale = (b - a) / width
    offset = a - lo * scale
    ends = (lo * scale, hi * scale, hi * scale + offset)
    return math.isfinite(scale) and math.isfinite(offset) and all(map(math.isfinite, ends))


def _widen_until_finite(lo, hi, a, b, candidate_range):
    """``(lo, hi)`` widened around its centre (doubling, clipped into ``candidate_range``)
    until :func:`_finite_map` holds; ends at ``candidate_range`` at the latest."""
    c_lo, c_hi = candidate_range
    centre, width = lo / 2.0 + hi / 2.0, hi - lo
    while not _finite_map(lo, hi, a, b) and (lo, hi) != (c_lo, c_hi):
        width *= 2.0  # at worst inf after about 2100 doublings: then the clip gives the range
        lo, hi = max(centre - width / 2.0, c_lo), min(centre + width / 2.0, c_hi)
    return lo, hi


class PrivateStandardScaler(PrivateTransformerBase):
    """Standardise features with private bounds, mean and variance; clip the output to
    ``[-clip, clip]``.

    ``fit`` spends ``bounds_share * epsilon`` on the bounds (when ``bounds="private"``) and the
    rest on the ``p`` means and ``p`` variances of the clipped data (equal shares, Laplace
    mechanism). ``transform`` returns ``clip((clip(x, lower_, upper_) - mean_) / scale_, -clip,
    clip)``, so a downstream private estimator can be given ``bounds_X=(-clip, clip)``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of ``fit``.
    bounds : "private" or (lower, upper), default="private"
    bounds_share : float in (0, 1), default=0.5
        Share of ``epsilon`` for private bounds (ignored for public bounds).
    clip : float, default=3.0
        Standardised values are clipped into ``[-clip, clip]``.
    levels, widen, candidate_range, random_state, accountant
        As in :class:`PrivateBounds`.

    Attributes
    ----------
    lower_, upper_ : ndarray of shape (n_features,)
    mean_, var_, scale_ : ndarray of shape (n_features,)
        Private mean and variance of the clipped data; ``scale_`` is ``sqrt(var_)`` floored at
        ``1e-3 * (upper_ - lower_) / 2`` (1 for a constant feature), post-processing that
        keeps the division finite.
    output_bounds_ : tuple
        ``(-clip, clip)``.
    epsilon_bounds_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.preprocessing import PrivateStandardScaler
    >>> X = np.random.default_rng(0).normal(100, 15, size=(20000, 2))
    >>> sc = PrivateStandardScaler(epsilon=1.0, random_state=0).fit(X)
    >>> bool(np.all(np.abs(sc.mean_ - 100) < 1) and np.all(np.abs(sc.scale_ - 15) < 1.5))
    True
    >>> bool(np.abs(sc.transform(X)).max() <= 3.0)
    True
    """

    def __init__(
        self,
        epsilon=1.0,
        bounds="private",
        bounds_share=0.5,
        clip=3.0,
        levels=DEFAULT_LEVELS,
        widen=DEFAULT_WIDEN,
        candidate_range=DEFAULT_CANDIDATE_RANGE,
        random_state=None,
        accountant=None,
    ):
        self.epsilon = epsilon
        self.bounds = bounds
        self.bounds_share = bounds_share
        self.clip = clip
        self.levels = levels
        self.widen = widen
        self.candidate_range = candidate_range
        self.random_state = random_state
        self.accountant = accountant

    def _check_params(self):
        _check_positive(self.clip, "clip")
        return super()._check_params()

    def _check_shares(self, epsilon, n, p):
        # the shares and sensitivities of _fit_private's 2 p releases
        sens = max(mean_sum_sensitivity(n), var_z_sensitivity(n))
        check_shares([equal_share(epsilon, 2 * p)], sens)

    def _fit_private(self, X, lower, upper, epsilon, rng):
        p = X.shape[1]
        eps_each = equal_share(epsilon, 2 * p)  # 2 p releases, exactly within epsilon
        mean, var = np.empty(p), np.empty(p)
        for j in range(p):
            if upper[j] > lower[j]:
                mean[j] = private_mean(X[:, j], lower[j], upper[j], eps_each, rng)
                var[j] = private_var(X[:, j], lower[j], upper[j], eps_each, rng)
            else:  # a constant (clipped) column: nothing to learn, nothing released
                mean[j], var[j] = lower[j], 0.0
        half = PublicBox(lower, upper).half
        scale = np.maximum(np.sqrt(var), 1e-3 * half)
        self.mean_, self.var_ = mean, var
        self.scale_ = np.where(scale > 0, scale, 1.0)
        c = float(self.clip)
        self.output_bounds_ = (-c, c)

    def _transform(self, X):
        return np.clip((X - self.mean_) / self.scale_, *self.output_bounds_)

    def inverse_transform(self, X):
        """Map standardised values back to original units."""
        return np.asarray(X, dtype=float) * self.scale_ + self.mean_
