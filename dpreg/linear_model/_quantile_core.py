"""Building blocks of :class:`~dpreg.KNGQuantileRegressor`: gradient, sensitivity, domain.

Parameterisation
----------------
Features are clipped into ``bounds_X`` and mapped affinely onto ``z in [-1, 1]^p``
(:class:`dpreg._bounds.PublicBox`); the response ``y`` is used as it is. The model is
``Q_tau(y | z) = theta_0 + sum_k theta_k z_k`` (``theta_0`` only with ``fit_intercept``), so every
parameter is in units of ``y``. The design row is ``w = (1, z)`` (or ``z``).

Gradient sensitivity
--------------------
The gradient of ``l_n(theta) = sum_i rho_tau(y_i - w_i^T theta)`` is
``g(theta) = sum_i w_i (1{y_i <= w_i^T theta} - tau)``. One record contributes
``w a`` with ``a in {1 - tau, -tau}``, so replacing record ``(w, y)`` by ``(w', y')`` changes
``g`` by ``s = w a - w' a'``. Let ``m = max(tau, 1 - tau)`` and ``B = [-1, 1]^p``.

* Without intercept, ``||s||_K <= |a| ||w||_K + |a'| ||w'||_K <= 2 m C`` with
  ``C = max_{z in B} ||z||_K``; equality at ``w' = -w`` = a vertex and ``a = a'`` of size ``m``
  (the ``y``'s are free, so both indicators can be chosen). When the scaled features only
  fill a sub-box ``A = [a, b]`` of ``B`` (asymmetric ``bounds_X``: features are divided by
  ``max(|lower|, |upper|)``, not centred), the exact value is the maximum of
  ``||alpha w - alpha' w'||_K`` over ``w, w' in A``, which for lp norms is
  ``max(||m (b - a)||_K, ||max(|a|, |b|)||_K)`` (:func:`_sensitivity_no_intercept`); for
  ``A = B`` it is ``2 m C`` again.
* With an intercept column, ``s = (a - a', a z - a' z')``. If ``a = a'`` (same side) then
  ``s = (0, a (z - z'))`` with ``z - z' in 2B``: ``||s||_K <= 2 m max_{v in B} ||(0, v)||_K``.
  If ``a != a'`` then ``a - a' = ±1`` and ``a z - a' z' = (1 - tau) z + tau z'`` (up to the
  common sign) is a convex combination of points of ``B``, i.e. any point of ``B``:
  ``||s||_K <= max_{v in B} ||(1, v)||_K``. So
  ``Delta = max(2 m max_v ||(0, v)||_K, max_v ||(1, v)||_K)`` and both terms are attained.
  A norm is convex, so the maxima over the cube are attained at its vertices ``{-1, 1}^p``.

In closed form for ``lp`` norms (``q`` = the exponent, ``p`` features):

* no intercept: ``Delta = 2 m p^(1/q)``;
* intercept: ``Delta = max(2 m p^(1/q), (1 + p)^(1/q))`` (``p >= 1``), and ``1`` when ``p = 0``
  (Smith's private quantile: the count below ``theta`` changes by at most one).

For ``linf`` this is ``2 m`` (``1`` for the intercept alone), for ``l1`` ``max(2 m p, p + 1)``
and for ``l2`` ``max(2 m sqrt(p), sqrt(p + 1))``, each no larger than the generic
``2 m C_X`` with ``C_X = max ||(1, z)||_K``. (The paper prints ``2 (1 - tau) C_X``, which is too
small when ``tau > 1/2``.) Other norm balls are handled by enumerating the cube's vertices.

Sample weights
--------------
With weights ``omega_i in [0, 1]`` (part of the record) record i contributes
``omega_i a_i w_i`` and a replacement changes g by ``omega a w - omega' a' w'``. This is
bilinear in ``(omega, omega')``, so it is a convex combination of its values at the four
corners of ``[0, 1]^2``: ``a w - a' w'`` (norm at most Delta, above), ``a w``, ``-a' w'`` and
0. The single terms are covered too: keeping the row and flipping the side of its response
(``a' != a``, same ``w``) is an unweighted neighbour with difference ``+-w``, so
``||w||_K <= Delta`` for every admissible row (with or without intercept, any sub-box) and
``||a w||_K <= m ||w||_K <= Delta``. A norm is convex, so ``||omega a w - omega' a' w'||_K <=
Delta``: the weighted sensitivity equals the unweighted one (checked adversarially in
``tests/linear_model/test_weights_kng.py``). The KNG density has no Jacobian term, so nothing
else changes.
"""

from __future__ import annotations

import itertools

import numpy as np

from .._bounds import PublicBox
from ..kng import StepGradient
from ..noise.balls import LpBall, make_ball

__all__ = [
    "FLUSH_BELOW",
    "check_quantile",
    "default_coef_bounds",
    "quantile_gradient",
    "quantile_sensitivity",
    "scale_features",
]


def check_quantile(quantile):
    """Return ``quantile`` as a float in the open interval (0, 1)."""
    if isinstance(quantile, bool) or not isinstance(quantile, (int, float, np.floating)):
        raise ValueError(f"quantile must be a number in (0, 1), got {quantile!r}.")
    q = float(quantile)
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile must lie in the open interval (0, 1), got {quantile!r}.")
    return q


#: Scaled feature values with ``|z| < FLUSH_BELOW`` are set to exactly 0 by
#: :func:`scale_features` (docs/floating_point.md, section 5d).
FLUSH_BELOW = 2.0**-500


def scale_features(X, lower, upper, fit_intercept):
    """Clip ``X`` into the bounds and map it into [-1, 1]^p, flushing tiny values to 0.

    With an intercept the box is mapped affinely (``z = (x - mid) / half``); without one the
    features are only divided by ``max(|lower|, |upper|)`` so that the model keeps passing
    through the origin. Returns ``(Z, mid, half)`` with ``x = mid + half * z`` on the box;
    columns with ``half == 0`` are constant and map to 0.

    Scaled values with ``|z| < FLUSH_BELOW = 2**-500`` become exactly 0. This is a fixed map
    of each record (public threshold), so every mechanism run on ``Z`` keeps its guarantee
    and its sensitivity (``|0| <= |z|`` stays in the same box). Why: the exact KNG sampler's
    rounding slacks are relative to ``|U_i|_1 max|theta|``, and a product ``z theta`` below
    ``2**-1022`` carries an absolute error of up to ``2**-1075`` instead. With every nonzero
    ``|z| >= 2**-500`` and every nonzero grid value ``|theta| >= 2**-484``
    (:data:`dpreg._kng_exact.MIN_BOX_WIDTH`), each product is normal or exactly 0. Values at
    or above the threshold are untouched (bit for bit). The value is far above the
    subnormals (``2**-1022``) and far below any feature scale that matters: it moves a
    prediction by at most ``2**-500 |theta|``.

    Examples
    --------
    >>> from dpreg.linear_model._quantile_core import scale_features
    >>> Z, _, _ = scale_features([[1e-320], [1e-100], [0.5]], [-1.0], [1.0], False)
    >>> Z.ravel().tolist()
    [0.0, 1e-100, 0.5]
    """
    box = PublicBox(np.asarray(lower, dtype=float), np.asarray(upper, dtype=float),
                    symmetric=not fit_intercept)  # fmt: skip
    Z = box.to_unit(X)
    Z[(np.abs(Z) < FLUSH_BELOW) & (Z != 0.0)] = 0.0  # zeros (and their signs) untouched
    return Z, box.mid, box.half


def design(Z, fit_intercept):
    """The design matrix ``W``: ``[1, Z]`` with an intercept, else ``Z``."""
    Z = np.asarray(Z, dtype=float)
    if fit_intercept:
        return np.hstack([np.ones((Z.shape[0], 1)), Z])
    return Z


def quantile_gradient(W, y, tau, sample_weight=None):
    """The check-loss gradient ``sum_i w_i (1{w_i^T theta >= y_i} - tau)`` as a StepGradient.

    (``1{y_i <= w_i^T theta}``: ties have probability zero under the KNG density.) With
    ``sample_weight`` ``omega`` (in [0, 1]) record i's jumps are ``omega_i w_i`` (the crossing
    hyperplanes are unchanged): ``sum_i omega_i w_i (1{...} - tau)``.
    """
    W = np.asarray(W, dtype=float)
    if sample_weight is None:
        return StepGradient(W, np.asarray(y, dtype=float), offset=-tau * W.sum(axis=0))
    V = W * np.asarray(sample_weight, dtype=float)[:, None]
    return StepGradient(W, np.asarray(y, dtype=float), V=V, offset=-tau * V.sum(axis=0))


def quantile_sensitivity(tau, n_features, norm="linf", fit_intercept=True, feature_box=None):
    """K-norm sensitivity of the check-loss gradient for features scaled into [-1, 1].

    Parameters
    ----------
    tau : float in (0, 1)
    n_features : int
        Number of (non-constant) scaled features ``p``.
    norm : "l1", "l2", "linf", p >= 1 or a ball of dimension ``p + fit_intercept``
    fit_intercept : bool
    feature_box : tuple (a, b) of arrays of length ``p``, optional
        Without an intercept: the box ``[a, b]`` inside ``[-1, 1]^p`` that the scaled features
        fill (asymmetric ``bounds_X`` give a smaller box than the cube, hence a smaller
        sensitivity). Ignored with an intercept (the features then fill the whole cube).

    Returns
    -------
    float
        ``Delta`` (see the module docstring for the derivation).

    Examples
    --------
    >>> from dpreg.linear_model._quantile_core import quantile_sensitivity
    >>> quantile_sensitivity(0.9, 3, "linf")
    1.8
    >>> quantile_sensitivity(0.5, 3, "l1")
    4.0
    >>> quantile_sensitivity(0.5, 0, "linf")
    1.0
    >>> quantile_sensitivity(0.9, 1, "linf", fit_intercept=False, feature_box=([0.0], [1.0]))
    1.0
    """
    m = max(tau, 1.0 - tau)
    p = int(n_features)
    dim = p + int(bool(fit_intercept))
    if dim < 1:
        raise ValueError("The model has no parameter.")
    ball = make_ball(norm, dim)
    if not fit_intercept:
        a, b = (-np.ones(p), np.ones(p)) if feature_box is None else feature_box
        return _sensitivity_no_intercept(m, tau, np.asarray(a, float), np.asarray(b, float), ball)
    if isinstance(ball, LpBall):
        q = ball.p
        root = (lambda k: 1.0) if np.isinf(q) else (lambda k: float(k) ** (1.0 / q))
        slopes = 2.0 * m * root(p) if p > 0 else 0.0
        return max(slopes, root(p + 1))
    if p > 16:
        raise ValueError("Sensitivity of a general norm ball is computed for at most 16 features.")
    verts = np.array(list(itertools.product((-1.0, 1.0), repeat=p))).reshape(-1, p)
    zeros, ones = np.zeros((verts.shape[0], 1)), np.ones((verts.shape[0], 1))
    same_side = 2.0 * m * float(np.max(ball.norm(np.hstack([zeros, verts])))) if p else 0.0
    cross = float(np.max(ball.norm(np.hstack([ones, verts]))))
    return max(same_side, cross)


def _sensitivity_no_intercept(m, tau, a, b, ball):
    """``max ||alpha w - alpha' w'||_K`` over ``w, w'`` in the box ``[a, b]`` and
    ``alpha, alpha' in {1 - tau, -tau}`` (module docstring: no intercept).

    The map ``(w, w') -> alpha w - alpha' w'`` is linear and a norm is convex, so the maximum is
    at vertices of the box. For lp norms the coordinates decouple (the norm increases with
    each ``|v_j|``): on the same side (``alpha = alpha'``) ``|alpha (w_j - w'_j)| <= m (b_j -
    a_j)``; on opposite sides ``|(1 - tau) w_j + tau w'_j|`` is a convex combination of points
    of ``[a_j, b_j]``, at most ``max(|a_j|, |b_j|)``; both attained coordinate by coordinate.
    """
    p = a.size
    if isinstance(ball, LpBall):
        same = ball.norm(m * (b - a))
        cross = ball.norm(np.maximum(np.abs(a), np.abs(b)))
        return float(max(same, cross))
    verts = np.array(list(itertools.product((0, 1), repeat=p)), dtype=bool).reshape(-1, p)
    V = np.where(verts, b, a)
    if p > 6:  # triangle inequality: valid, not always tight
        return float(2.0 * m * np.max(ball.norm(V)))
    best = 0.0
    for alpha, alpha2 in itertools.product((1.0 - tau, -tau), repeat=2):
        diffs = alpha * V[:, None, :] - alpha2 * V[None, :, :]
        best = max(best, float(np.max(ball.norm(diffs.reshape(-1, p)))))
    return best


def default_coef_bounds(bounds_y, n_features, fit_intercept):
    """The default parameter box derived from public response bounds ``(y_lo, y_hi)``.

    If every conditional quantile lies in ``[y_lo, y_hi]`` and the model is right, then
    ``theta_0 + sum_k theta_k z_k in [y_lo, y_hi]`` for all ``z in [-1, 1]^p``: at ``z = 0``,
    ``theta_0 in [y_lo, y_hi]``, and the range over the cube, ``2 sum_k |theta_k|``, is at most
    ``y_hi - y_lo``, so ``|theta_k| <= (y_hi - y_lo) / 2``. Without an intercept we use the
    generous ``|theta_k| <= max(|y_lo|, |y_hi|)``.

    Returns ``(lower, upper)`` arrays of length ``n_features + fit_intercept`` (intercept first).
    """
    y_lo, y_hi = float(bounds_y[0]), float(bounds_y[1])
    if fit_intercept:
        half = 0.5 * (y_hi - y_lo)
        lower = np.r_[y_lo, np.full(n_features, -half)]
        upper = np.r_[y_hi, np.full(n_features, half)]
    else:
        big = max(abs(y_lo), abs(y_hi))
        lower, upper = np.full(n_features, -big), np.full(n_features, big)
    return lower, upper
