r"""Differentially private linear regression by the functional mechanism with K-norm noise.

Seed 001 (Awan & Slavković), section 5, with the exact sensitivities of
:mod:`dpreg.linear_model._functional_sensitivity` and the improvements of SPEC section 4.

Mechanism
---------
1. Clip every feature into ``bounds_X`` and the target into ``bounds_y`` and map them affinely
   onto [-1, 1] (with ``fit_intercept=False`` the map is the symmetric scaling
   ``x -> x / max(|lower|, |upper|)``, which keeps the origin and hence the no-intercept model).
2. Compute the sufficient statistics ``Z^T Z`` and ``Z^T w`` of the scaled design ``Z`` (with a
   leading column of ones when an intercept is fitted) in one streaming pass over row chunks
   (BLAS ``syrk`` per chunk; dask arrays are reduced by dask).
3. Release ``T``, the unique non-constant entries of both (squares doubled, so every entry has
   sensitivity 2), with noise calibrated to the exact sensitivity of T in the chosen norm:

   * ``delta = 0``: the K-norm mechanism (density ``∝ exp(-epsilon ||v||_K / Delta_K)``) with
     K the l1, l2 or l_inf ball or the hull body of SPEC section 4 (sensitivity 1 in its own
     norm). With ``release="blocks"`` (l_inf only) the Gram block and the target block are
     released by two l_inf mechanisms with a data-independent split ``epsilon_G +
     epsilon_y = epsilon`` (basic composition); every entry still has sensitivity 2 in each
     block.
   * ``delta > 0``: additionally the analytic Gaussian mechanism (exact l2 sensitivity) or the
     flipped Huber mechanism (l_inf, l2 and l1 sensitivities).

4. Rebuild the noisy ``(Z^T Z)*`` (``n`` is public under replace-one adjacency) and ``(Z^T w)*``
   and solve. Everything after step 3 is post-processing and costs no privacy:
   ``postprocess="none"`` is the paper's ``pinv((Z^T Z)*) (Z^T w)*``; ``"psd"`` projects the
   noisy Gram onto the matrices whose eigenvalues are at least ``lambda``, and ``"ridge"`` adds
   ``lambda`` to the diagonal (not to the intercept entry), where ``lambda`` is a
   data-independent multiple of the noise scale of the Gram entries. Either keeps the solve
   well posed when the noisy Gram is singular or indefinite.
5. Map the coefficients back to the user's units.

Guarantee: the release in step 3 is ``(epsilon, delta)``-DP under replace-one adjacency (the
K-norm/Gaussian/flipped-Huber guarantees with the sensitivities derived in
:mod:`~dpreg.linear_model._functional_sensitivity`; blocks by basic composition); steps 4--5
are post-processing. Choices that depend only on ``(n, p, epsilon, delta)`` (norm for
``"auto"``, budget split, ``lambda``) are data-independent. Bounds read from the data (when
``bounds_X``/``bounds_y`` are None) void the guarantee, hence the ``PrivacyLeakWarning``.

Why the defaults (measured by ``python -m benchmarks.linear``; see
``docs/functional_linear_regression.md``): the paper's joint release spends the budget on
every entry of T equally, while the estimation error is ``(Z^T Z)^{-1} (e - E beta)``, where
the target noise ``e`` enters directly but the Gram noise ``E`` is damped by the scaled
coefficients; the block split shifts budget accordingly.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._bounds import (
    DEFAULT_BOUNDS_SHARE,
    PublicBox,
    check_bounds_groups,
    check_bounds_param,
    check_fit_share,
    check_unscalable,
    clip_released,
    fit_bounds,
    safe_inverse,
    split_budget,
    unscale_cap,
    unscale_coefficients,
)
from .._validation import (
    check_bounds,
    check_delta,
    check_epsilon,
    check_norm,
    check_random_state,
    check_release_epsilon,
    check_unit_sample_weight,
    shares_within,
)
from ..accounting import check_accountant
from ..exceptions import PrivacyLeakWarning
from . import _inference
from ._boost import (
    BOOST_FACTOR,
    BOOST_SHARE,
    auto_clip,
    boost,
    boost_shares,
    check_boost,
    resolve_rounds,
)
from ._dask_stats import is_dask as _is_dask
from ._functional_sensitivity import (
    Layout,
    hull_body,
    l1_sensitivity,
    l2_sensitivity,
    linf_sensitivity,
    sensitivity,
)
from ._inference import NoisyStatistics, release_yty
from ._ridge import adaptive_floor, check_ridge, release_lambda_min, select_floor

NORMS = ("l1", "l2", "linf", "hull", "auto")
#: ``norm="hull"``: the hull body is a polytope, exact in law but not certified on floating-
#: point hardware (``KNormMechanism.floating_point_safe``); said before the spend
HULL_WARNING = (
    "norm='hull': the K-norm release with the hull body is exact in law and snapped to a public "
    "grid, but only lp balls are certified on floating-point hardware, so the epsilon "
    "guarantee of this release is not proven there (docs/floating_point.md). Use an lp norm "
    "(e.g. norm='linf') for a certified release."
)
#: share of a weighted fit's epsilon that releases the sum of the weights (with an intercept)
COUNT_SHARE = 0.05
MECHANISMS = ("auto", "knorm", "gaussian", "huber")
RELEASES = ("auto", "joint", "blocks")
POSTPROCESS = ("none", "psd", "ridge")
#: share of the worst-case coefficient size ``1 / (p + 1)`` assumed by the budget split; a
#: public constant chosen on the real-data matrix and checked on the synthetic design
#: (``docs/functional_linear_regression.md``, section 6); it costs no privacy
GRAM_WEIGHT = 0.25
#: ``ridge_factor="auto"``: the PSD floor is ``1.5 sqrt(p + 1) sigma_G`` for the l_inf block
#: release (same provenance as GRAM_WEIGHT); joint releases (the Gaussian and flipped Huber
#: paths with delta > 0, the paper's joint K-norm release) keep the factor 3 they were tuned
#: with: the issue-14 re-tuning measured the block release only
RIDGE_FACTOR = {"blocks": 1.5, "joint": 3.0}
#: The smallest ``epsilon`` a fit accepts (checked before anything is spent; docs/
#: floating_point.md, section 5c). Every plan's noise has a per-coordinate standard deviation
#: ``sigma = c Delta / epsilon_T`` (``c <= sqrt((m+1)(m+2)/3) <= m`` for the l_inf K-norm of
#: dimension m, comparable for the others), and the plan's error proxy, the Gaussian and
#: flipped Huber calibrations and the PSD solve form ``sigma**2``, which must stay below the
#: float maximum 1.8e308 (at epsilon = 1e-300 Python's ``**`` raised an OverflowError, and at
#: 5e-324 the split epsilon underflowed to 0: a ZeroDivisionError, both before the spend). The
#: statistic's part ``epsilon_T`` is ``epsilon`` minus public shares whose sum is < 1, so
#: ``epsilon_T >= 2**-53 epsilon`` up to round-off. From ``epsilon >= 1e-100``:
#: ``sigma <= 1e116 m Delta``, ``sigma**2 <= 1e232 (m Delta)**2``, inside the float range for
#: any ``m Delta < 1e38``; and no guarantee at epsilon below 1e-100 carries information anyway.
EPSILON_MIN = 1e-100


def ridge_factor_for(ridge_factor, plan, boosted=False):
    """The number behind ``ridge_factor`` (``"auto"`` resolves by the plan's release, and to
    :data:`~dpreg.linear_model._boost.BOOST_FACTOR` times that for a boosted fit)."""
    if isinstance(ridge_factor, str):
        return RIDGE_FACTOR[plan.release] * (BOOST_FACTOR if boosted else 1.0)
    return float(ridge_factor)


# ---------------------------------------------------------------------------------------------
# Sufficient statistics


@dataclass
class SufficientStatistics:
    """Scaled moments of one data set: everything the private release needs.

    ``gram = Z^T Z`` and ``xty = Z^T w`` for the scaled design ``Z`` (intercept column first
    when ``fit_intercept``) and scaled target ``w``; ``x_offset, x_scale, y_offset, y_scale``
    describe the maps ``z = (clip(x) - offset) / scale`` (scale 0 means "constant 0").
    With one output ``xty`` has shape ``(q,)`` and ``y_offset, y_scale`` are floats; with
    ``n_outputs = k > 1`` they have shapes ``(q, k)``, ``(k,)`` and ``(k,)``.
    Computing them once and calling :meth:`FunctionalLinearRegression.fit_statistics`
    repeatedly lets simulations vary the noise without touching the data again.
    """

    gram: np.ndarray
    xty: np.ndarray
    n: int
    n_features: int
    fit_intercept: bool
    x_offset: np.ndarray
    x_scale: np.ndarray
    y_offset: float
    y_scale: float
    yty: float | None = None  # w^T w, released only for inference (``inference_share > 0``)
    n_outputs: int = 1
    weighted: bool = False  # rows carry sample weights in [0, 1]: gram[0, 0] is their sum

    @property
    def layout(self):
        return Layout(self.n_features, self.fit_intercept, self.n_outputs)

    def statistic(self):
        """The vector T (noise-free) in the layout of :class:`Layout`."""
        return self.layout.pack(self.gram, self.xty)


def _scaling(bounds, n_features, data, name, fit_intercept):
    # the public box and its unit map (dpreg._bounds.PublicBox; symmetric without intercept)
    box = PublicBox.validated(bounds, n_features, X=data, name=name, symmetric=not fit_intercept)
    return box.lower, box.upper, box.mid, box.half


def _inverse(scale):
    return safe_inverse(scale)  # subnormal half-widths are constant features (fuzz finding)


def sufficient_statistics(
    X, y, bounds_X=None, bounds_y=None, fit_intercept=True, chunk_size=65536, sample_weight=None
):
    """Clip, scale and reduce ``(X, y)`` to :class:`SufficientStatistics` in one pass.

    ``X`` is a 2-D numpy array (or a dask array); ``y`` 1-D, or 2-D ``(n, k)`` for k outputs
    (numpy only). ``bounds_y`` then holds scalars or per-output vectors. Rows are processed
    in chunks of ``chunk_size`` with one BLAS ``syrk`` per chunk, so the extra memory is
    ``O(chunk_size * p)``, independent of n. Missing bounds are read from the data with a
    :class:`~dpreg.exceptions.PrivacyLeakWarning`. ``sample_weight`` (numpy, validated in
    [0, 1] by the caller) weights every row's contribution: ``sum_i w_i a_i a_i^T``.
    """
    n, p = X.shape
    if _is_dask(X) or _is_dask(y):
        from ._dask_stats import dask_statistics, prepare  # noqa: PLC0415 (optional dependency)

        inp = prepare(X, y, bounds_X, bounds_y)  # raises on NaN/inf; no budget involved here
        return dask_statistics(inp, bounds_X, bounds_y, fit_intercept, chunk_size)
    maps, (x_off, x_sc, y_off, y_sc) = _data_maps(X, y, bounds_X, bounds_y, fit_intercept)
    M = _moments(X, y, maps, fit_intercept, chunk_size, sample_weight)
    stats = _from_moments(M, n, p, fit_intercept, x_off, x_sc, y_off, y_sc)
    stats.weighted = sample_weight is not None
    return stats


def _data_maps(X, y, bounds_X, bounds_y, fit_intercept):
    """The clip-and-scale maps of :func:`_moments` and the ``(x_off, x_sc, y_off, y_sc)``
    of the unit maps (bounds that are None are read from the data)."""
    p = X.shape[1]
    lo, hi, x_off, x_sc = _scaling(
        bounds_X, p, X if bounds_X is None else None, "bounds_X", fit_intercept
    )
    k = 1 if np.ndim(y) == 1 else y.shape[1]
    ylo, yhi, y_off, y_sc = _scaling(
        bounds_y, k, y if bounds_y is None else None, "bounds_y", fit_intercept
    )
    maps = (lo, hi, x_off, _inverse(x_sc), ylo, yhi, y_off, _inverse(y_sc))
    return maps, (x_off, x_sc, y_off, y_sc)


_TILE_VALUES = 2**15


def _tile_step(n, p, k, chunk_size):
    # cache-sized tiles: the five flat work vectors of 2^15 values stay in L2 (measured: at
    # 65,536 rows x 10 features, when they spill to memory, the pass is 5x slower)
    return max(1, min(int(chunk_size), max(n, 1), _TILE_VALUES // max(p, k)))


def _chunk_scaler(maps, p, k, step):
    """``scale(X_chunk, y_chunk) -> (Z, W)``: the clipped, scaled chunk (views of buffers
    reused by the next call; see :func:`_moments` for why scaling then clipping is exact)."""
    lo, hi, x_off, inv, ylo, yhi, y_off, yinv = maps

    def tiles(off, scale, lower, upper):
        zlo = np.maximum((lower - off) * scale, -1.0)  # the scaled box, inside [-1, 1]
        zhi = np.minimum((upper - off) * scale, 1.0)
        return [np.tile(np.asarray(v, dtype=float), step) for v in (off, scale, zlo, zhi)]

    xt, yt = tiles(x_off, inv, lo, hi), tiles(y_off, yinv, ylo, yhi)
    Zbuf, Wbuf = np.empty(step * p), np.empty(step * k)

    def scale(Xc, yc):
        m = Xc.shape[0]
        Z = _scale_flat(np.reshape(Xc, -1), Zbuf[: m * p], xt).reshape(m, p)
        W = _scale_flat(np.reshape(yc, -1), Wbuf[: m * k], yt).reshape(m, k)
        return Z, W

    return scale


def scaled_chunks(X, y, maps, chunk_size=65536):
    """Yield the clipped and scaled ``(Z, W)`` row chunks of ``(X, y)`` (numpy input; no
    intercept column). The buffers are reused: consume each chunk before the next."""
    n, p = X.shape
    k = 1 if np.ndim(y) == 1 else y.shape[1]
    step = _tile_step(n, p, k, chunk_size)
    scale = _chunk_scaler(maps, p, k, step)
    for start in range(0, n, step):
        stop = min(n, start + step)
        yield scale(X[start:stop], y[start:stop])


def _moments(X, y, maps, fit_intercept, chunk_size, sample_weight=None):
    """``[A W]^T [A W]`` of the clipped and scaled rows, streamed in chunks of ``chunk_size``.

    ``maps = (lo, hi, x_off, x_inv, ylo, yhi, y_off, y_inv)``. Each chunk is scaled first,
    ``z = (x - off) * inv``, and then clipped to the scaled box ``[max((lo - off) inv, -1),
    min((hi - off) inv, 1)]``. Rounding is monotone, so this equals clipping to
    ``[lo, hi]`` before scaling and then to [-1, 1], bit for bit on finite data; and it is
    total: NaN goes to the lower end (``fmax`` ignores NaN), +-inf to an end, so every scaled
    entry lies in [-1, 1] whatever the input. The dask path runs this kernel on every block
    *after* the spend, where nothing may raise or turn NaN (see ``_dask_stats``).

    Speed: every step is a contiguous 1-D ufunc over the chunk (the per-feature vectors are
    tiled once), so numpy runs long SIMD loops instead of length-p inner loops; the moments
    are BLAS products of the chunk with itself.
    """
    n, p = X.shape
    k = 1 if np.ndim(y) == 1 else y.shape[1]
    o = 1 if fit_intercept else 0
    q = p + o
    step = _tile_step(n, p, k, chunk_size)
    scale = _chunk_scaler(maps, p, k, step)
    M = np.zeros((q + k, q + k))
    G, C, Wm = M[o:q, o:q], M[o:q, q:], M[q:, q:]  # views: Z^T Z, Z^T W, W^T W
    for start in range(0, n, step):
        stop = min(n, start + step)
        m = stop - start
        Z, W = scale(X[start:stop], y[start:stop])
        if sample_weight is None:
            G += Z.T @ Z  # BLAS syrk
            C += Z.T @ W
            Wm += W.T @ W
        else:  # sum_i w_i a_i a_i^T: one more rounding per term (charged by the caller)
            wc = sample_weight[start:stop]
            G += Z.T @ (Z * wc[:, None])
            C += Z.T @ (W * wc[:, None])
            Wm += W.T @ (W * wc[:, None])
        if o:
            if sample_weight is None:
                M[0, 0] += m
                M[0, 1:] += np.concatenate([Z.sum(axis=0), W.sum(axis=0)])
            else:
                M[0, 0] += wc.sum()
                M[0, 1:] += np.concatenate([wc @ Z, wc @ W])
    if o:
        M[1:, 0] = M[0, 1:]
    M[q:, o:q] = C.T
    return M


def _scale_flat(src, out, tiled):
    """``clip((src - off) * inv, zlo, zhi)`` on flat arrays (``tiled`` as in ``_moments``)."""
    off, inv, zlo, zhi = (t[: out.shape[0]] for t in tiled)
    # after the spend nothing may raise, also under warnings-as-errors: a finite x far outside
    # the box (|x| near 1.8e308) overflows to +-inf here, and inf * 0 (a constant column) is
    # NaN; both are taken to the right end of [zlo, zhi] just below (docs/floating_point.md)
    with np.errstate(over="ignore", invalid="ignore"):
        np.subtract(src, off, out=out)
        out *= inv
    np.fmax(out, zlo, out=out)  # fmax/fmin, not clip: NaN goes to a bound
    np.fmin(out, zhi, out=out)
    return out


def _from_moments(M, n, p, fit_intercept, x_off, x_sc, y_off, y_sc):
    """Split the moment matrix ``[A W]^T [A W]`` into the Gram block and ``A^T W``."""
    k = len(y_off)
    q = M.shape[0] - k
    one = k == 1  # one output keeps the historical 1-D xty and float offsets
    return SufficientStatistics(
        gram=M[:q, :q].copy(),
        xty=M[:q, q].copy() if one else M[:q, q:].copy(),
        n=int(n),
        n_features=int(p),
        fit_intercept=bool(fit_intercept),
        x_offset=x_off,
        x_scale=x_sc,
        y_offset=float(y_off[0]) if one else np.asarray(y_off, dtype=float),
        y_scale=float(y_sc[0]) if one else np.asarray(y_sc, dtype=float),
        yty=float(M[q, q]) if one else None,  # inference supports one output only
        n_outputs=int(k),
    )


# ---------------------------------------------------------------------------------------------
# The private release (the only step that touches the data) and the post-processing


def linf_noise_std(dim, sensitivity, epsilon):
    """Per-coordinate standard deviation of l_inf K-norm noise: ``sqrt((m+1)(m+2)/3) Δ/ε``."""
    return math.sqrt((dim + 1.0) * (dim + 2.0) / 3.0) * sensitivity / epsilon


def default_split(layout):
    """Data-independent share of epsilon for the Gram block under ``release="blocks"``.

    Minimises ``sigma_y^2 + c * sigma_G^2`` (per-entry noise variances of the two l_inf
    releases, ``sigma ∝ sqrt((m+1)(m+2)) / epsilon_block``) with ``c = GRAM_WEIGHT / (p + 1)``:
    the Gram noise reaches the estimate only through ``E beta``, so its weight is the size of
    the scaled coefficients, ``||beta||^2`` per entry. A model whose fitted values span all of
    [-1, 1] has ``||beta||^2`` of order ``1 / (p + 1)`` per entry; real targets rarely do
    (public bounds are wider than the fitted values, and R^2 < 1), so :data:`GRAM_WEIGHT`
    scales that worst case down (``docs/functional_linear_regression.md``, section 4).
    With ``k = (m+1)(m+2)`` per block the minimiser is
    ``epsilon_G / epsilon_y = (c k_G / k_y)^{1/3}``.
    """
    return split_for_weight(layout, gram_weight(layout.p))


def split_for_weight(layout, weight):
    """The Gram share ``s`` minimising ``sigma_y^2 + weight * sigma_G^2`` (closed form)."""
    kg = (layout.d_gram + 1.0) * (layout.d_gram + 2.0)
    ky = (layout.d_target + 1.0) * (layout.d_target + 2.0)
    ratio = (weight * kg / ky) ** (1.0 / 3.0)
    return ratio / (1.0 + ratio)


def gram_weight(p):
    """``c = GRAM_WEIGHT / (p + 1)``: the public weight of the Gram noise in the error proxy
    ``sigma_y^2 + c sigma_G^2`` that :func:`default_split` minimises."""
    return GRAM_WEIGHT / (p + 1.0)


@dataclass
class ReleasePlan:
    """A data-independent description of the noise: what each block gets."""

    norm: object
    mechanism: str
    release: str
    split: float
    gram_std: float  # per-entry noise std of the (undoubled) off-diagonal Gram entries
    target_std: float  # per-entry noise std of the X^T y entries
    description: str


def _check_choice(value, allowed, name):
    if not isinstance(value, str) or value.lower() not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}.")
    return value.lower()


def _hull_or_error(layout, epsilon):
    if not layout.fit_intercept:
        raise ValueError(
            "norm='hull' needs fit_intercept=True (the hull body uses the sums of "
            "the intercept column); use norm='linf' instead."
        )
    body = hull_body(layout.p)
    try:
        body._check_feasible(1)
    except ValueError as exc:
        raise ValueError(
            f"norm='hull' is infeasible for p={layout.p} features: exact box-rejection sampling "
            f"of the {layout.dim}-dimensional hull body has too small an acceptance rate "
            f"({exc}). Use norm='linf' (almost as good, seed 001 section 5) or norm='auto'."
        ) from None
    return body


def make_plan(
    layout,
    epsilon,
    delta=0.0,
    norm="linf",
    mechanism="auto",
    release="auto",
    split="auto",
    n=None,
):
    """Resolve the estimator's options into a :class:`ReleasePlan` (data-independent).

    With ``mechanism="auto"`` and ``delta > 0`` the candidates (the K-norm release with
    ``norm``, the Gaussian and the flipped Huber mechanism) are compared by the error proxy
    ``sigma_y^2 + sigma_G^2 / (p + 1)`` (the worst-case weight), which depends only on
    ``(p, epsilon, delta)``.

    ``n`` is the public number of roundings per coordinate that the release passes to
    :func:`privatize_statistic`. The flipped Huber candidate is then calibrated exactly as
    the release calibrates it (:func:`_huber_release`: the sensitivities inflated by the
    float error of an ``n``-term sum). Its calibration can fail where the uninflated one
    succeeds (session-22 audit F1), so ``fit`` plans with the release's own ``n`` and epsilon
    before the spend: an explicit ``mechanism="huber"`` that cannot be calibrated is then a
    ``ValueError`` that costs nothing, and ``"auto"`` drops the candidate in both plans alike.
    """
    d, p, fi, k = layout.dim, layout.p, layout.fit_intercept, layout.n_outputs
    norm = check_norm(norm, allowed=NORMS, allow_ball=False)  # names or a number r >= 1
    if norm == "hull" and k > 1:
        raise ValueError(
            "norm='hull' supports one output only (the hull body is derived for a scalar "
            "target); use norm='linf' for multi-output y."
        )
    mechanism = _check_choice(mechanism, MECHANISMS, "mechanism")
    release = _check_choice(release, RELEASES, "release")
    if delta == 0 and mechanism in ("gaussian", "huber"):
        raise ValueError(
            f"mechanism={mechanism!r} needs delta > 0; use mechanism='knorm' for pure epsilon-DP."
        )
    if release == "blocks" and mechanism in ("gaussian", "huber"):
        raise ValueError("release='blocks' is implemented for the l_inf K-norm mechanism only.")
    d1, d2 = l1_sensitivity(p, fi, k), l2_sensitivity(p, fi, k)
    if norm == "auto":
        from ..noise import choose_norm  # noqa: PLC0415

        norm = choose_norm(["l1", "l2", "linf"], [d1, d2, 2.0], dim=d)
    plans = []
    if mechanism in ("auto", "knorm"):
        ball = _hull_or_error(layout, epsilon) if norm == "hull" else norm
        rel = release
        if rel == "auto":
            rel = "blocks" if norm == "linf" else "joint"
        if rel == "blocks" and norm != "linf":
            raise ValueError(
                "release='blocks' is implemented for the l_inf K-norm mechanism only (norm='linf')."
            )
        if rel == "blocks":
            s = default_split(layout) if (isinstance(split, str) and split == "auto") else split
            if isinstance(s, bool) or not isinstance(s, numbers.Real) or not 0 < s < 1:
                raise ValueError(f"split must be 'auto' or a number in (0, 1), got {split!r}.")
            s = float(s)
            plans.append(
                ReleasePlan(
                    ball,
                    "knorm",
                    "blocks",
                    s,
                    linf_noise_std(layout.d_gram, 2.0, s * epsilon),
                    linf_noise_std(layout.d_target, 2.0, (1.0 - s) * epsilon),
                    f"l_inf blocks, epsilon split {s:.3f}/{1 - s:.3f}",
                )
            )
        else:
            std = _knorm_std(ball, layout, epsilon)
            plans.append(ReleasePlan(ball, "knorm", "joint", 1.0, std, std, f"joint {norm}"))
    if delta > 0 and release != "blocks":
        if mechanism in ("auto", "gaussian"):
            std = _gauss_std(epsilon, delta, d2)
            plans.append(ReleasePlan(norm, "gaussian", "joint", 1.0, std, std, "joint gaussian"))
        if mechanism == "huber":  # explicit request: a failed calibration is refused here
            try:
                std = math.sqrt(_huber_release(layout, epsilon, delta, n).variance)
            except (NotImplementedError, RuntimeError) as err:
                raise ValueError(
                    f"mechanism='huber' cannot be calibrated for {d} released entries at "
                    f"epsilon={epsilon!r}, delta={delta!r} (n={n!r}): {err}. Use "
                    "mechanism='gaussian' or 'auto'."
                ) from err
            plans.append(ReleasePlan(norm, "huber", "joint", 1.0, std, std, "joint huber"))
        elif mechanism == "auto":
            std = _huber_std(layout, epsilon, delta, n)
            if std is not None:
                plans.append(ReleasePlan(norm, "huber", "joint", 1.0, std, std, "joint huber"))
    return min(plans, key=lambda pl: _choice_proxy(pl, layout, epsilon, split))


def _choice_proxy(plan, layout, epsilon, split):
    """The error proxy that ranks the candidate mechanisms (data-independent).

    ``sigma_y^2 + sigma_G^2 / (p + 1)`` with the worst-case weight, not :func:`gram_weight`:
    with the smaller weight the l_inf blocks would beat the Gaussian at p = 20, where the
    Gaussian is measured 2-3x better on the seed 001 design (n = 1e5;
    ``docs/functional_linear_regression.md``, section 4). An automatic block split is ranked
    at the split that minimises this proxy, so the choice between mechanisms is the one made
    before the split was re-tuned (issue 14); the chosen block release then uses
    :func:`default_split`.
    """
    w = 1.0 / (layout.p + 1.0)
    if plan.release == "blocks" and isinstance(split, str):
        s = split_for_weight(layout, w)
        sg = linf_noise_std(layout.d_gram, 2.0, s * epsilon)
        sy = linf_noise_std(layout.d_target, 2.0, (1.0 - s) * epsilon)
        return sy**2 + w * sg**2
    return plan.target_std**2 + w * plan.gram_std**2


def _knorm_std(ball, layout, epsilon):
    d = layout.dim
    if isinstance(ball, (str, float)):  # a named norm or an lr norm
        sens = sensitivity(ball, layout.p, layout.fit_intercept, layout.n_outputs)
        from ..noise import KNormMechanism  # noqa: PLC0415

        return math.sqrt(KNormMechanism(ball, d, sens, epsilon).variance)
    # hull body: contained in the cube [-2, 2]^d, so l_inf's scale is an upper proxy (used only
    # for the post-processing scale, which may be any data-independent number)
    return linf_noise_std(d, 2.0, epsilon)


def _gauss_std(epsilon, delta, d2):
    if delta <= 0:
        return None
    from ..noise import analytic_gaussian_sigma  # noqa: PLC0415

    return analytic_gaussian_sigma(epsilon, delta, d2)


def _huber_mechanism(epsilon, delta, d, d1, d2, rng=None):
    from ..noise import FlippedHuberMechanism  # noqa: PLC0415

    return FlippedHuberMechanism(
        epsilon, delta, 2.0, dim=d, l2_sensitivity=d2, l1_sensitivity=d1, random_state=rng
    )


def _huber_release(layout, epsilon, delta, n=None, rng=None):
    """The flipped Huber mechanism of the release of ``T`` over ``n`` rounded terms.

    The one place that calibrates it: :func:`make_plan` (before the spend) and
    :func:`privatize_statistic` (the release) both call this with the same arguments, so a
    calibration that fails, fails before anything is spent.
    """
    from ..noise import L1Ball, L2Ball  # noqa: PLC0415
    from ..noise._grid import inflate_sensitivity  # noqa: PLC0415

    d, p, fi, k = layout.dim, layout.p, layout.fit_intercept, layout.n_outputs
    d1, d2 = l1_sensitivity(p, fi, k), l2_sensitivity(p, fi, k)
    err = _coordinate_error(n)
    if err > 0:
        d1, d2 = inflate_sensitivity(d1, err, L1Ball(d)), inflate_sensitivity(d2, err, L2Ball(d))
    return _huber_mechanism(epsilon, delta, d, d1, d2, rng)


def _huber_std(layout, epsilon, delta, n=None):
    if delta <= 0:
        return None
    try:
        return math.sqrt(_huber_release(layout, epsilon, delta, n).variance)
    except (NotImplementedError, RuntimeError, ValueError):  # no calibration: not a candidate
        return None


def _coordinate_error(n):
    """Bound on ``|fl(T_i) - T_i|`` for every coordinate of the computed ``T`` (0 if ``n`` is
    None).

    Every computed per-record term lies in [-1, 1] and each coordinate of the moment matrix
    is a sum of ``n`` rounded products, within ``e = float_sum_error_bound(n, 1,
    products=True)`` of the exact sum in any order. :meth:`Layout.pack` releases the squares
    doubled, ``S_j = 2 fl(sum z_j^2)``; the doubling is exact, so ``|S_j - 2 sum z_j^2| <=
    2 e``: twice the error of the other coordinates (session-22 audit F4). The bound for
    terms of magnitude 2, ``float_sum_error_bound(n, 2, products=True) = 2 e``, covers every
    coordinate, the doubled squares included.
    """
    from ..noise._grid import float_sum_error_bound  # noqa: PLC0415

    return 0.0 if n is None else float_sum_error_bound(int(n), 2.0, products=True)


def privatize_statistic(T, layout, plan, epsilon, delta, rng, n=None):
    """Release ``T`` through the plan's mechanism; the only data-dependent randomised step.

    The release is floating-point safe (``docs/floating_point.md``): every mechanism's
    ``randomise`` returns the ideal real-valued output rounded exactly to a public grid, so the
    statistic is never added to float noise here. The *computed* statistic differs from the
    exact sum of the computed (clipped, |value| <= 1) per-record terms by at most
    ``float_sum_error_bound(n, 2, products=True)`` per coordinate (any summation order; the
    factor 2 covers the doubled squares, :func:`_coordinate_error`), so with the public ``n``
    each sensitivity is inflated by that error (:func:`dpreg.noise._grid.inflate_sensitivity`).

    ``T`` may carry leading batch axes (``(..., dim)``): every row gets an independent draw of
    the same noise law. The release uses one row; the bootstrap of ``_inference`` draws its
    noise replicates in one call this way.
    """
    from ..noise import (  # noqa: PLC0415
        GaussianMechanism,
        KNormMechanism,
        L2Ball,
        LinfBall,
    )
    from ..noise._grid import inflate_sensitivity  # noqa: PLC0415

    T = np.asarray(T, dtype=float)
    d, p, fi, k = layout.dim, layout.p, layout.fit_intercept, layout.n_outputs
    err = _coordinate_error(n)

    def inflated(sens, ball):
        return inflate_sensitivity(sens, err, ball) if err > 0 else sens

    if plan.mechanism == "gaussian":
        sens2 = inflated(l2_sensitivity(p, fi, k), L2Ball(d))
        return GaussianMechanism(epsilon, delta, sens2, random_state=rng).randomise(T)
    if plan.mechanism == "huber":  # the calibration make_plan checked before the spend
        mech = _huber_release(layout, epsilon, delta, n, rng)
        return np.asarray(mech.randomise(T), dtype=float).reshape(T.shape)
    if plan.release == "blocks":
        out = np.empty(T.shape)
        g = layout.d_gram
        s = plan.split
        out[..., :g] = KNormMechanism(
            "linf", g, inflated(linf_sensitivity(p, fi), LinfBall(g)), s * epsilon, random_state=rng
        ).randomise(T[..., :g])
        out[..., g:] = KNormMechanism(
            "linf",
            d - g,
            inflated(linf_sensitivity(p, fi), LinfBall(d - g)),
            (1 - s) * epsilon,
            random_state=rng,
        ).randomise(T[..., g:])
        return out
    norm = plan.norm
    if isinstance(norm, (str, float)):  # a named norm or an lr norm
        sens = sensitivity(norm, p, fi, k)
    else:
        sens = 1.0  # the hull body contains the sensitivity space
    mech = KNormMechanism(norm, d, sens, epsilon, random_state=rng)
    if err > 0:
        mech = KNormMechanism(norm, d, inflated(sens, mech.ball), epsilon, random_state=rng)
    if mech.floating_point_safe:
        return mech.randomise(T)
    with warnings.catch_warnings():  # the hull body: the estimator warned before the spend
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return mech.randomise(T)


def solve_normal_equations(gram, xty, postprocess="psd", lam=0.0, fit_intercept=True):
    """Coefficients from a noisy Gram matrix and target vector (post-processing only).

    ``"none"``: ``pinv(gram) @ xty`` (seed 001, equation (4)). ``"psd"``: eigenvalues of the
    symmetrised Gram are raised to at least ``lam`` (a projection onto ``{G >= lam I}`` in
    Frobenius norm), then solved. ``"ridge"``: ``(gram + lam D)^{-1} xty`` with D the identity
    except 0 for the intercept, falling back to the pseudo-inverse if still singular.

    ``"psd"`` also solves a stack at once: ``gram`` ``(B, q, q)`` and ``xty`` ``(B, q)``
    give ``(B, q)``, each row as if solved alone (the bootstrap of ``_inference``).
    """
    if np.ndim(gram) == 3 and postprocess == "psd":
        return _psd_solve_stack(np.asarray(gram, dtype=float), np.asarray(xty, dtype=float), lam)
    gram = 0.5 * (gram + gram.T)
    if postprocess == "none" or lam <= 0 and postprocess == "ridge":
        return np.linalg.pinv(gram, hermitian=True) @ xty
    if postprocess == "psd":
        w, V = np.linalg.eigh(gram)
        floor = max(lam, 1e-12 * max(float(np.max(np.abs(w))), 1.0))
        w = np.maximum(w, floor)
        return V @ ((V.T @ xty) / w.reshape((-1,) + (1,) * (np.ndim(xty) - 1)))
    if postprocess == "ridge":
        D = np.ones(len(gram))
        if fit_intercept:
            D[0] = 0.0
        A = gram + lam * np.diag(D)
        try:
            return np.linalg.solve(A, xty)
        except np.linalg.LinAlgError:
            return np.linalg.pinv(A, hermitian=True) @ xty
    raise ValueError(f"postprocess must be one of {list(POSTPROCESS)}, got {postprocess!r}.")


def _psd_solve_stack(gram, xty, lam):
    """The ``"psd"`` solve of :func:`solve_normal_equations` for each of a stack of systems."""
    w, V = np.linalg.eigh(0.5 * (gram + np.swapaxes(gram, 1, 2)))
    top = np.maximum(np.max(np.abs(w), axis=1, keepdims=True), 1.0)
    w = np.maximum(w, np.maximum(lam, 1e-12 * top))
    return np.einsum("bij,bj->bi", V, np.einsum("bji,bj->bi", V, xty) / w)


# ---------------------------------------------------------------------------------------------


def _check_finite_statistics(stats, needs_yty):
    """Refuse non-finite statistics (and a y^T y outside ``[0, n]``) before the spend.

    ``fit_statistics`` takes the statistics from the caller: a NaN or inf in them made the
    samplers raise AFTER the budget was charged. ``sufficient_statistics`` never produces
    either (clipped, scaled rows), and its ``yty = sum w_i^2`` lies in ``[0, n]``, which
    ``release_yty``'s sensitivity assumes."""
    for name in ("gram", "xty"):
        if not np.all(np.isfinite(np.asarray(getattr(stats, name), dtype=float))):
            raise ValueError(f"stats.{name} must be finite (no NaN or inf).")
    if needs_yty and not 0.0 <= float(stats.yty) <= float(stats.n):
        raise ValueError(
            f"stats.yty must be a finite number in [0, n] = [0, {stats.n}] (the sum of the "
            f"squared scaled targets), got {stats.yty!r}."
        )


class FunctionalLinearRegression(RegressorMixin, BaseEstimator):
    r"""Linear regression with (epsilon, delta)-DP by a functional mechanism with K-norm noise.

    The private statistic is the vector T of unique non-constant entries of ``Z^T Z`` and
    ``Z^T w`` for the clipped and scaled data (seed 001 section 5); noise is calibrated to the
    exact sensitivity of T in the chosen norm, and the coefficients are obtained by
    post-processing. See the module docstring for the mechanism and the guarantee.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of one ``fit``.
    norm : {"linf", "l1", "l2", "hull", "auto"} or float >= 1, default="linf"
        K-norm of the noise when ``mechanism`` is ``"knorm"``. A number ``r`` is the lr ball
        (``1``, ``2``, ``inf`` are the named balls), calibrated to the upper bound of
        :func:`~dpreg.linear_model._functional_sensitivity.lp_sensitivity`. ``"hull"`` is the
        hull body of SPEC section 4 (exact box-rejection sampling; one output and small p only,
        otherwise a ``ValueError`` naming ``"linf"``). ``"auto"`` uses
        :func:`~dpreg.noise.choose_norm` (volume order) among l1, l2, l_inf with the
        sensitivities of the stacked statistic.
    delta : float, default=0.0
        Total delta; ``delta > 0`` allows the Gaussian and flipped Huber mechanisms.
    bounds_X : tuple (lower, upper), "private" or None, default=None
        Per-feature (or scalar) bounds. Data outside are clipped. ``"private"`` releases them
        from the data with ``bounds_share`` of ``epsilon`` (see ``docs/private_workflow.md``).
        None reads them from the data with a :class:`~dpreg.exceptions.PrivacyLeakWarning`.
    bounds_y : tuple (lower, upper), "private" or None, default=None
        Bounds of the target; same conventions (scalars, or vectors with one entry per output
        for a 2-D ``y``).
    fit_intercept : bool, default=True
        Whether to fit an intercept (a column of ones, part of the released statistic).
    random_state : None, int, RandomState or Generator, default=None
        Seed of the noise.
    accountant : BudgetAccountant or None, default=None
        Ledger charged ``(epsilon, delta)`` once per successful ``fit``; checked before the
        data are touched.
    mechanism : {"auto", "knorm", "gaussian", "huber"}, default="auto"
        ``"auto"`` is the K-norm mechanism when ``delta == 0``; when ``delta > 0`` it is the one
        of K-norm (with ``norm``), Gaussian and flipped Huber with the smallest per-entry noise
        variance (a data-independent choice).
    release : {"auto", "joint", "blocks"}, default="auto"
        ``"joint"`` noises all of T at once (seed 001). ``"blocks"`` (l_inf K-norm only) noises
        the Gram entries and the target entries separately with budgets ``split * epsilon`` and
        ``(1 - split) * epsilon``. ``"auto"`` uses blocks whenever they apply.
    split : "auto" or float in (0, 1), default="auto"
        Share of epsilon for the Gram block; ``"auto"`` is :func:`default_split`.
    postprocess : {"psd", "ridge", "none"}, default="psd"
        How the noisy Gram matrix is turned into coefficients (see
        :func:`solve_normal_equations`); ``"none"`` is the paper's pseudo-inverse.
    ridge_factor : float or "auto", default="auto"
        ``lambda = ridge_factor * sqrt(p + 1) * sigma_G`` where ``sigma_G`` is the per-entry
        noise standard deviation of the Gram block (data-independent). ``"auto"`` is 1.5 for
        the l_inf block release (chosen with the automatic ``split`` on the real-data matrix
        of ``benchmarks.realdata``; ``docs/functional_linear_regression.md``, section 6) and
        3 for joint releases (the Gaussian/flipped Huber paths and ``release="joint"``).
    chunk_size : int, default=65536
        Most rows per chunk of the streaming pass (the kernel also caps a chunk at 2^15
        values, which keeps its work vectors in cache).
    inference_share : float in [0, 1), default=0.0
        Share of ``epsilon`` spent on a Laplace release of the scaled ``y^T y`` (sensitivity
        1), which lets :meth:`conf_int` estimate the residual variance; the statistics get
        the rest (basic composition, same total). 0 releases nothing extra and the intervals
        use the worst-case residual variance (valid, conservative). See ``docs/inference.md``.
    bounds_share : "auto" or float in (0, 1), default="auto"
        Share of ``epsilon`` spent on the bounds that are ``"private"`` (all of them in one
        release, :func:`dpreg._bounds.fit_bounds`); the statistics get the rest, so the fit
        still costs ``epsilon`` in total, reserved once before the data are read. Unused when
        no bounds are ``"private"``.
        ``"auto"`` grows with the number of private columns and falls with n (between 0.05 and
        0.5, up to 0.6 when small data need it; :func:`dpreg._bounds.bounds_epsilon`).
    ridge : {"fixed", "adaptive", "select"}, default="fixed"
        ``"fixed"``: the floor ``lambda`` above. ``"adaptive"``: ``ridge_share * epsilon`` pays
        for a Laplace release of the smallest eigenvalue of the scaled ``X^T X`` (sensitivity
        ``p + 1``), and the floor is ``1.5 * sqrt(p + 1) * sigma_G`` lowered by a lower confidence
        bound on that eigenvalue, as AdaSSP does (``ridge_factor`` is then not used;
        :mod:`dpreg.linear_model._ridge`, ``docs/functional_linear_regression.md``).
        ``"select"``: the factor is chosen from a public grid by a parametric bootstrap on the
        released statistics (post-processing: no extra epsilon; ``ridge_factor`` not used).
    ridge_share : float in (0, 1), default=0.05
        Share of ``epsilon`` spent on that eigenvalue when ``ridge="adaptive"``.
    bounds_groups : None, "all" or list of lists of int, default=None
        Only with ``bounds_X="private"``: feature columns that share one public unit, centre
        and spread (e.g. columns standardised by a documented rule), each group released as
        ONE box from its pooled values, which costs what one column costs
        (:func:`dpreg._bounds.pooled_release_epsilon`; ``docs/private_workflow.md``,
        *Grouped columns*). ``"all"`` is one group of every feature. Public knowledge that
        you state; a wrong grouping costs accuracy, never privacy. Ignored otherwise.
    boost_rounds : int >= 0 or "auto", default=0
        Boosting rounds after the one-shot solve (opt-in; :mod:`dpreg.linear_model._boost`,
        ``docs/functional_linear_regression.md`` section 5c). Each round releases
        ``Z^T clip(w - Z theta, -c, c)`` of the scaled rows with l_inf K-norm noise
        (sensitivity ``2c``) and adds the floored noisy Gram's solve of it to ``theta``,
        which removes most of the floor's bias where ``n * epsilon`` is large. The floor
        factor of ``ridge_factor="auto"`` is then halved (0.75 for the l_inf block release).
        A number > 0 needs ``fit`` on numpy input with one output, no ``sample_weight`` and
        ``inference_share=0`` (else a ``ValueError`` before anything is spent); with
        ``delta > 0`` the rounds stay pure epsilon. ``"auto"`` runs 2 rounds when
        ``delta == 0``, ``n * epsilon >= 2000`` and the fit supports them, and none otherwise.
    boost_share : float in (0, 1), default=0.4
        Share of ``epsilon`` spent on the rounds (``boost_share * epsilon / rounds`` each).
    boost_clip : "auto" or float in (0, 1], default="auto"
        The residual clip ``c`` on the scaled target's scale ([-1, 1]). ``"auto"`` spends
        0.05 of ``epsilon`` on a Laplace release of ``w^T w`` and takes ``c`` = 2 residual
        root mean squares estimated from released values (in ``[0.05, 1]``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_outputs, n_features)
        Coefficients in the user's units; 2-D when ``y`` is 2-D (as in scikit-learn's
        ``LinearRegression``). Same dtype as ``X`` (float32 stays float32).
    intercept_ : float or ndarray of shape (n_outputs,)
        Intercept in the user's units (0 when ``fit_intercept=False``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.
    norm_ : object
        The norm used (a name or the hull body).
    mechanism_ : str
    release_ : str
    split_ : float
        Share of epsilon spent on the Gram block (1.0 for a joint release).
    sensitivity_ : dict
        ``{"linf": ..., "l1": ..., "l2": ...}`` sensitivities of T (and ``{r: ...}`` for an
        lr ``norm``).
    bounds_X_, bounds_y_ : tuple of ndarray or None
        The ``(lower, upper)`` bounds used by ``fit`` (the released ones for ``"private"``);
        None when they were read from the data (``bounds_X=None``/``bounds_y=None``).
    predict_bounds_ : tuple (box_X, box_y)
        The released boxes that :meth:`predict` clips ``X`` and its output into (None for
        bounds that were not ``"private"``).
    lambda_min_ : float or None
        The released smallest eigenvalue of the scaled Gram matrix (``ridge="adaptive"``).
    ridge_factor_ : float or None
        The floor used, in units of ``sqrt(p + 1) * sigma_G`` (the resolved ``ridge_factor``,
        the selected one with ``ridge="select"``; None when ``sigma_G`` is 0).
    boost_rounds_ : int
        The number of boosting rounds the fit ran (0 for the one-shot solve).
    boost_clip_ : float or None
        The residual clip of the rounds (None without rounds).
    sample_weighted_ : bool
        Whether ``fit`` received ``sample_weight`` (the intervals of :meth:`conf_int` are
        derived for unweighted fits only and refuse weighted ones).
    noisy_statistics_ : NoisyStatistics
        The released noisy statistics and the public noise law (used by :meth:`conf_int`,
        :meth:`bse`, :meth:`summary`; post-processing, no extra budget).

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg import FunctionalLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 2))
    >>> y = 1.0 + X @ np.array([2.0, -1.0]) + rng.normal(scale=0.1, size=20000)
    >>> model = FunctionalLinearRegression(epsilon=2.0, bounds_X=(-1, 1), bounds_y=(-4, 6),
    ...                                    random_state=0).fit(X, y)
    >>> np.round(model.coef_, 1)
    array([ 2., -1.])
    >>> round(model.intercept_, 1)
    1.0

    Several outputs at once (one release of ``X^T X`` and the p-by-k block ``X^T Y``):

    >>> Y = np.column_stack([y, 0.5 - X[:, 0]])
    >>> multi = FunctionalLinearRegression(epsilon=2.0, bounds_X=(-1, 1),
    ...                                    bounds_y=([-4, -1], [6, 2]), random_state=0)
    >>> multi.fit(X, Y).coef_.shape, multi.intercept_.shape, multi.predict(X[:3]).shape
    ((2, 2), (2,), (3, 2))
    """

    def __init__(
        self,
        epsilon=1.0,
        norm="linf",
        delta=0.0,
        bounds_X=None,
        bounds_y=None,
        fit_intercept=True,
        random_state=None,
        accountant=None,
        mechanism="auto",
        release="auto",
        split="auto",
        postprocess="psd",
        ridge_factor="auto",
        chunk_size=65536,
        inference_share=0.0,
        bounds_share=DEFAULT_BOUNDS_SHARE,
        ridge="fixed",
        ridge_share=0.05,
        bounds_groups=None,
        boost_rounds=0,
        boost_share=BOOST_SHARE,
        boost_clip="auto",
    ):
        self.epsilon = epsilon
        self.norm = norm
        self.delta = delta
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.accountant = accountant
        self.mechanism = mechanism
        self.release = release
        self.split = split
        self.postprocess = postprocess
        self.ridge_factor = ridge_factor
        self.chunk_size = chunk_size
        self.inference_share = inference_share
        self.bounds_share = bounds_share
        self.ridge = ridge
        self.ridge_share = ridge_share
        self.bounds_groups = bounds_groups
        self.boost_rounds = boost_rounds
        self.boost_share = boost_share
        self.boost_clip = boost_clip

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        tags.target_tags.multi_output = True
        tags.non_deterministic = self.random_state is None
        return tags

    # -- parameter checks that need no data
    def _check_params(self):
        eps = check_epsilon(self.epsilon)
        if eps < EPSILON_MIN:
            raise ValueError(
                f"epsilon must be at least {EPSILON_MIN:g} for FunctionalLinearRegression (below "
                f"it the squared noise scale overflows in floating point), got {eps!r}."
            )
        delta = check_delta(self.delta)
        acc = check_accountant(self.accountant)
        if isinstance(self.norm, str) and self.norm.lower() == "hull":
            # said here, before the spend: the release's own warning (KNormMechanism.randomise,
            # silenced in privatize_statistic) came after it, i.e. an exception after the
            # charge for a user with warnings as errors. It depends on the public norm only.
            warnings.warn(HULL_WARNING, PrivacyLeakWarning, stacklevel=3)
        _check_choice(self.postprocess, POSTPROCESS, "postprocess")
        rf = self.ridge_factor
        if isinstance(rf, str) and rf == "auto":
            pass
        elif (
            isinstance(rf, bool)
            or not isinstance(rf, numbers.Real)
            or not (rf >= 0)
            or not math.isfinite(rf)
        ):
            raise ValueError(f"ridge_factor must be 'auto' or a finite number >= 0, got {rf!r}.")
        cs = self.chunk_size
        if isinstance(cs, bool) or not isinstance(cs, numbers.Integral) or cs < 1:
            raise ValueError(f"chunk_size must be a positive integer, got {cs!r}.")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be a bool, got {self.fit_intercept!r}.")
        sh = self.inference_share
        if isinstance(sh, bool) or not isinstance(sh, numbers.Real) or not 0 <= sh < 1:
            raise ValueError(f"inference_share must be a number in [0, 1), got {sh!r}.")
        check_fit_share(self.bounds_share)
        ridge, share = check_ridge(self.ridge, self.ridge_share)
        if ridge == "adaptive" and sh + share >= 1:
            raise ValueError("inference_share + ridge_share must be < 1.")
        rounds, _ = check_boost(self.boost_rounds, self.boost_share, self.boost_clip)
        if self._explicit_rounds() > 0 and sh > 0:
            raise ValueError(
                "inference_share > 0 is not supported with boost_rounds > 0 (the intervals are "
                "derived for the one-shot solve)."
            )
        b_share, c_share = boost_shares(rounds, self.boost_share, self.boost_clip)
        if b_share + c_share + (share if ridge == "adaptive" else 0.0) >= 1:
            raise ValueError(
                "boost_share (+ 0.05 for boost_clip='auto') + ridge_share must be < 1."
            )
        # each side release gets epsilon * share: a subnormal product (share 1e-310) made its
        # noise scale inf and the sampler raised AFTER the spend (public values: check now)
        parts = {
            "inference_share": sh,
            "ridge_share": share if ridge == "adaptive" else 0.0,
            "boost_share": b_share,
            "boost clip share": c_share,
        }
        for name, part in parts.items():
            if part > 0:
                check_release_epsilon(eps * part, name=f"epsilon * {name}")
        return eps, delta, acc

    def fit(self, X, y, sample_weight=None):
        """Fit on ``X`` (n, p) and ``y`` (n,) or (n, k); numpy, pandas or dask input.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            A dask ``y`` must be 1-D.
        sample_weight : array-like of shape (n_samples,), optional
            Public-range weights in [0, 1] (numpy input; not with ``inference_share > 0``).
            The weight is part of the record. Every row contributes ``w_i`` times its
            unweighted contribution ``t(x_i, y_i)`` to T, so T's sensitivity is unchanged
            (``docs/functional_linear_regression.md``, "Sample weights"); with an intercept
            the sum of the weights replaces the constant n and is released with
            ``COUNT_SHARE`` of epsilon (Laplace, sensitivity 1). Weights outside [0, 1],
            NaN or a wrong shape raise a ``ValueError`` before anything is spent.

        Returns
        -------
        self
        """
        eps, delta, acc = self._check_params()
        if acc is not None:
            acc.check(eps, delta)  # before touching the data
        prepared = None
        if _is_dask(X) or _is_dask(y):
            from ._dask_stats import align  # noqa: PLC0415 (optional dependency)

            Xv, yv = align(X, y)  # metadata checks only; the data check is below
            self.n_features_in_ = int(Xv.shape[1])
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        else:
            Xv, yv = validate_data(
                self, X, y, dtype=[np.float64, np.float32], y_numeric=True, multi_output=True
            )
        k = 1 if np.ndim(yv) == 1 else int(yv.shape[1])
        sample_weight = self._check_sample_weight(sample_weight, Xv, yv)
        # "auto" runs rounds only where they apply; an explicit number refuses the rest
        boostable = not (_is_dask(Xv) or _is_dask(yv) or sample_weight is not None or k > 1)
        boostable = boostable and float(self.inference_share) == 0
        if self._explicit_rounds() > 0 and not boostable:
            raise ValueError(
                "boost_rounds > 0 needs numpy input, one output and no sample_weight (the "
                "rounds' sensitivity is derived for that case)."
            )
        if k > 1 and float(self.inference_share) > 0:  # fit_statistics refuses it too
            raise ValueError(
                f"inference_share > 0 supports one output only (the intervals release y^T y of "
                f"one target); y has {k} columns."
            )
        # bounds shapes depend only on (p, k): checked before the data pass
        private = [
            check_bounds_param(bounds, size, name)
            for bounds, size, name in (
                (self.bounds_X, self.n_features_in_, "bounds_X"),
                (self.bounds_y, k, "bounds_y"),
            )
        ]
        if any(private) and (_is_dask(Xv) or _is_dask(yv)):
            raise ValueError("'private' bounds need numpy input (not dask arrays).")
        groups = check_bounds_groups(self.bounds_groups, self.n_features_in_)
        # the share counts units: a group of g private feature columns is one unit
        n_pooled = sum(g.size - 1 for g in groups) if groups is not None and private[0] else 0
        n_private = self.n_features_in_ * private[0] + k * private[1] - n_pooled
        n_rows = int(Xv.shape[0])
        if not any(private) and self.bounds_X is not None and self.bounds_y is not None:
            # public boxes so extreme that a unit slope overflows in the user's units (tiny
            # bounds_X, wide bounds_y) are refused now, not after the spend (s22 audit F5)
            fi = bool(self.fit_intercept)
            x_box = _scaling(self.bounds_X, self.n_features_in_, None, "bounds_X", fi)
            y_box = _scaling(self.bounds_y, k, None, "bounds_y", fi)
            check_unscalable(1.0, x_box[2], x_box[3], (y_box[2], y_box[3]), fi)
        eps_fit = (
            split_budget(self.bounds_share, eps, n_rows, n_private)[1] if any(private) else eps
        )
        # the plan is validated before the data pass so that bad options fail fast, with the
        # release's own epsilon and rounding count (n = n_rows: the statistics sum every row)
        self._release_plan(
            Layout(self.n_features_in_, bool(self.fit_intercept), k),
            eps_fit,
            delta,
            n_rows,
            sample_weight is not None,
            boostable,
        )
        if _is_dask(Xv):
            from ._dask_stats import dask_statistics, prepare  # noqa: PLC0415

            # dask: a finiteness pass BEFORE the reserve (a raise after it would be a release)
            prepared = prepare(Xv, yv, self.bounds_X, self.bounds_y)
        # bounds=None: its PrivacyLeakWarning is raised here, before the spend (a user with
        # warnings as errors is refused, not charged); sufficient_statistics would repeat it
        read = [
            (b, c, k)
            for b, c, k in ((self.bounds_X, Xv, "bounds_X"), (self.bounds_y, yv, "bounds_y"))
            if b is None
        ]
        if prepared is None:
            for _, column, name in read:
                check_bounds(None, 1 if np.ndim(column) == 1 else column.shape[1], column, name)
        # one stream for the bounds and the fit; built before the spend, because a bad
        # random_state raised here after the charge (session-21 audit)
        rng = check_random_state(self.random_state)
        acc.spend(eps, delta)  # atomic reserve, after validation and before computing
        # dask input cannot have "private" bounds (refused above), so this reads no dask data
        (bounds_X, bounds_y), eps_fit = fit_bounds(
            [Xv, yv],
            [self.bounds_X, self.bounds_y],
            eps,
            self.bounds_share,
            rng,
            ("bounds_X", "bounds_y"),
            groups=groups,
            relative_features=True,  # one draw per feature at small n * eps (relative_rule)
            window_features=True,  # ... of the densest window (private_window_box_unchecked)
        )
        self.bounds_X_, self.bounds_y_ = bounds_X, bounds_y
        # released ("private") boxes are applied again in predict (see predict)
        self.predict_bounds_ = (bounds_X if private[0] else None, bounds_y if private[1] else None)
        if prepared is not None:  # one fused pass; total on every input (see _dask_stats)
            stats = dask_statistics(
                prepared, bounds_X, bounds_y, self.fit_intercept, self.chunk_size
            )
        else:
            with warnings.catch_warnings():
                if read:  # data-read bounds: warned above, before the spend
                    warnings.simplefilter("ignore", PrivacyLeakWarning)
                stats = sufficient_statistics(
                    Xv,
                    yv,
                    bounds_X,
                    bounds_y,
                    bool(self.fit_intercept),
                    self.chunk_size,
                    sample_weight,
                )
        # sklearn's convention: the coefficients take X's floating dtype (float32 stays float32)
        dtype = np.float32 if getattr(Xv, "dtype", None) == np.float32 else np.float64
        one_d = np.ndim(yv) == 1
        rows = None
        if boostable and resolve_rounds(self.boost_rounds, stats.n, eps_fit, delta == 0) > 0:
            # the rounds re-read the rows through the same clip and scale
            with warnings.catch_warnings():  # data-read bounds warned once already above
                warnings.simplefilter("ignore", PrivacyLeakWarning)
                maps, _ = _data_maps(Xv, yv, bounds_X, bounds_y, bool(self.fit_intercept))

            def rows():
                return scaled_chunks(Xv, yv, maps, self.chunk_size)

        return self._fit_statistics(stats, eps_fit, delta, acc, dtype, one_d, rng, rows)

    def fit_statistics(self, stats):
        """Fit from precomputed :class:`SufficientStatistics` (spends the budget like ``fit``).

        Useful for simulations: compute the statistics once with
        :func:`sufficient_statistics` and call this for many noise draws, norms or epsilons.
        ``stats.fit_intercept`` must match ``self.fit_intercept``.
        """
        eps, delta, acc = self._check_params()
        if bool(stats.fit_intercept) != bool(self.fit_intercept):
            raise ValueError("stats.fit_intercept does not match fit_intercept.")
        if self.inference_share > 0 and stats.yty is None:
            raise ValueError("inference_share > 0 needs stats.yty (sufficient_statistics sets it).")
        if self.inference_share > 0 and stats.weighted:
            raise ValueError("sample_weight is not supported with inference_share > 0.")
        if stats.weighted:
            self._check_count_share()
        if self._explicit_rounds() > 0:  # "auto" fits without rounds here
            raise ValueError("boost_rounds > 0 needs the rows: use fit(X, y).")
        _check_finite_statistics(stats, self.inference_share > 0)
        y_map = (stats.y_offset, stats.y_scale)  # public maps: refused now if they overflow
        check_unscalable(1.0, stats.x_offset, stats.x_scale, y_map, bool(stats.fit_intercept))
        # the release's plan, before the spend (a failed calibration raised after it)
        self._release_plan(stats.layout, eps, delta, stats.n, stats.weighted, False)
        rng = check_random_state(self.random_state)  # before the spend: it can raise
        acc.spend(eps, delta)  # atomic reserve before the statistics are used
        self.n_features_in_ = stats.n_features
        self.predict_bounds_ = (None, None)  # the statistics were clipped by public bounds
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_  # the statistics carry no column names
        return self._fit_statistics(
            stats, eps, delta, acc, np.float64, stats.n_outputs == 1, rng=rng
        )

    def _check_sample_weight(self, sample_weight, X, y):
        """Weights as a float array in [0, 1], or None; every check runs before spending."""
        if sample_weight is None:
            return None
        if _is_dask(X) or _is_dask(y) or _is_dask(sample_weight):
            raise ValueError("sample_weight needs numpy input (not dask arrays).")
        if float(self.inference_share) > 0:
            raise ValueError("sample_weight is not supported with inference_share > 0.")
        self._check_count_share()
        return check_unit_sample_weight(sample_weight, X.shape[0])

    def _check_count_share(self):
        """A weighted fit with an intercept spends ``COUNT_SHARE`` of epsilon on the sum of
        the weights: with ``ridge="adaptive"`` the two shares must leave the statistic a
        positive part (``ridge_share=0.97`` gave a negative epsilon, refused by the K-norm
        mechanism AFTER the spend). Public parameters only; runs before the spend."""
        ridge, share = check_ridge(self.ridge, self.ridge_share)
        if self.fit_intercept and ridge == "adaptive" and COUNT_SHARE + share >= 1:
            raise ValueError(
                f"A weighted fit with an intercept spends {COUNT_SHARE:g} of epsilon on the sum "
                f"of the weights: ridge_share must be < {1 - COUNT_SHARE:g}, got {share!r}."
            )

    def _epsilon_parts(self, eps, delta, n, weighted, fit_intercept, boostable):
        """``(rounds, eps_T, eps_y, eps_c, eps_lam, eps_b, eps_clip)`` of a fit with budget
        ``eps`` (public: the options, ``n``, whether the fit is weighted and whether it can
        run boosting rounds). ``fit`` calls it before the spend and ``_fit_statistics`` after
        it with the same arguments, so the release's epsilon is known before the spend.
        """
        eps_y = eps * float(self.inference_share)
        # boosting rounds and the clip's w^T w (dpreg/linear_model/_boost)
        rounds = resolve_rounds(self.boost_rounds, n, eps, delta == 0) if boostable else 0
        b_share, c_share = boost_shares(rounds, self.boost_share, self.boost_clip)
        eps_b, eps_clip = (eps * b_share, eps * c_share) if rounds > 0 else (0.0, 0.0)
        # weighted with an intercept: the weight sum (in place of n) is released too
        eps_c = eps * COUNT_SHARE if weighted and fit_intercept else 0.0
        # ridge="adaptive": a private lambda_min (shares fixed before the data are read)
        eps_lam = eps * float(self.ridge_share) if self.ridge == "adaptive" else 0.0
        # basic composition: eps_T + eps_y + eps_c + eps_lam + eps_b + eps_clip = eps
        eps_T = eps - eps_y - eps_c - eps_lam - eps_b - eps_clip
        # no round-off excess, exactly (a float comparison of the rounded sum missed some)
        parts = shares_within([eps_T, eps_y, eps_c, eps_lam, eps_b, eps_clip], eps, lower=0)
        return rounds, float(parts[0]), eps_y, eps_c, eps_lam, eps_b, eps_clip

    def _release_plan(self, layout, eps, delta, n, weighted, boostable):
        """``(plan, eps_T, n_round, parts)``: the plan of the release of T, calibrated at the
        release's epsilon and rounding count (public inputs only; see :meth:`_epsilon_parts`).
        """
        parts = self._epsilon_parts(eps, delta, n, weighted, layout.fit_intercept, boostable)
        eps_T = parts[1]
        # a weighted term fl(fl(w a_j) a_k) has one more rounding: n + 1 covers it
        n_round = n + 1 if weighted else n
        plan = make_plan(
            layout, eps_T, delta, self.norm, self.mechanism, self.release, self.split, n_round
        )
        return plan, eps_T, n_round, parts

    def _fit_statistics(self, stats, eps, delta, acc, dtype, one_d, rng=None, rows=None):
        layout = stats.layout
        # ``rows`` given: the fit can run boosting rounds (dpreg/linear_model/_boost)
        plan, eps_T, n_round, parts = self._release_plan(
            layout, eps, delta, stats.n, stats.weighted, rows is not None
        )
        rounds, _, eps_y, eps_c, eps_lam, eps_b, eps_clip = parts
        rows = rows if rounds > 0 else None
        self.boost_rounds_ = rounds
        rng = check_random_state(self.random_state) if rng is None else rng
        T_noisy = privatize_statistic(stats.statistic(), layout, plan, eps_T, delta, rng, n=n_round)
        count = stats.n
        if eps_c > 0:  # Laplace release of sum w_i (each w_i in [0, 1]: sensitivity 1)
            count, _ = release_yty(stats.gram[0, 0], eps_c, rng, n=stats.n)
            count = min(max(count, min(1.0, stats.n)), stats.n)  # post-processing
        gram, xty = layout.unpack(T_noisy, count)
        unit = math.sqrt(layout.p + 1.0) * plan.gram_std
        factor = ridge_factor_for(self.ridge_factor, plan, boosted=rows is not None)
        lam = factor * unit
        if eps_lam > 0:  # AdaSSP-style floor from a private lambda_min (dpreg/linear_model/_ridge)
            released, scale = release_lambda_min(stats.gram, stats.n, eps_lam, rng)
            lam = adaptive_floor(released, scale, unit)
            factor = lam / unit if unit > 0 else None
        self.lambda_min_ = released if eps_lam > 0 else None
        if self.ridge == "select" and self.postprocess.lower() != "none":
            factor, lam = self._select_floor(
                gram, xty, unit, layout, plan, eps_T, delta, rng, n_round
            )
        self.ridge_factor_ = factor
        beta = solve_normal_equations(
            gram, xty, self.postprocess.lower(), lam, layout.fit_intercept
        )
        self.boost_clip_ = None
        if rows is not None:  # boosting rounds on fresh residuals (dpreg/linear_model/_boost)
            beta = self._boost(beta, gram, xty, lam, stats, rows, eps_b, eps_clip, rng)
        yty, yty_scale = (
            release_yty(stats.yty, eps_y, rng, n=stats.n) if eps_y > 0 else (None, None)
        )
        self.sample_weighted_ = bool(stats.weighted)
        self.noisy_statistics_ = NoisyStatistics(
            gram, xty, yty, yty_scale, stats.n, layout, plan, eps_T, delta,
            self.postprocess.lower(), lam, stats.x_offset, stats.x_scale, stats.y_offset,
            stats.y_scale, n_round,
        )  # fmt: skip
        self._set_coefficients(beta, stats, dtype, one_d)
        self.norm_ = plan.norm
        self.mechanism_ = plan.mechanism
        self.release_ = plan.release
        self.split_ = plan.split
        args = (layout.p, layout.fit_intercept, layout.n_outputs)
        self.sensitivity_ = {
            "linf": linf_sensitivity(*args),
            "l1": l1_sensitivity(*args),
            "l2": l2_sensitivity(*args),
        }
        if isinstance(plan.norm, float):
            self.sensitivity_[plan.norm] = sensitivity(plan.norm, *args)
        return self

    def _explicit_rounds(self):
        """``boost_rounds`` when it is a number (``"auto"`` never refuses an input: 0)."""
        return 0 if isinstance(self.boost_rounds, str) else int(self.boost_rounds)

    def _boost(self, beta, gram, xty, lam, stats, rows, eps_b, eps_clip, rng):
        """The boosting rounds (:func:`._boost.boost`); only ``rows`` touches the data."""
        pp, fi = self.postprocess.lower(), stats.fit_intercept
        c = self.boost_clip
        if isinstance(c, str):  # "auto": from a Laplace release of w^T w and the release
            yty, _ = release_yty(stats.yty, eps_clip, rng, n=stats.n)
            c = auto_clip(yty, gram, xty, beta, stats.n)
        self.boost_clip_ = float(c)

        def solve(v):  # the first solve's own post-processing, applied to a round's scores
            return solve_normal_equations(gram, v, pp, lam, fi)

        rounds = self.boost_rounds_
        return boost(beta, solve, rows, rounds, float(c), eps_b / rounds, stats.n, fi, rng)

    def _select_floor(self, gram, xty, unit, layout, plan, eps, delta, rng, n_round):
        """``ridge="select"``: post-processing of the release (:func:`._ridge.select_floor`)."""
        zero = np.zeros(layout.dim)
        pp, fi = self.postprocess.lower(), layout.fit_intercept

        def draw_noise():  # the release's own noise law (its float inflation too), afresh
            noise = privatize_statistic(zero, layout, plan, eps, delta, rng, n=n_round)
            return layout.unpack(noise, 0.0)

        def solve(G, b, lam):
            return solve_normal_equations(G, b, pp, lam, fi)

        return select_floor(gram, xty, unit, draw_noise, solve)

    def _set_coefficients(self, beta, stats, dtype=np.float64, one_d=True):
        """Map the scaled solution back to the user's units (post-processing only).

        ``beta`` is ``(q,)`` or ``(q, k)``; the arithmetic is float64 and only the stored
        attributes take ``dtype``. ``one_d`` (y was 1-D) gives ``coef_`` shape ``(p,)`` and a
        scalar intercept; otherwise ``(k, p)`` and ``(k,)`` as in scikit-learn.
        """
        o = 1 if stats.fit_intercept else 0
        k = stats.n_outputs
        beta = np.asarray(beta, dtype=float).reshape(-1, k)
        y_map = (
            np.asarray(stats.y_offset, dtype=float).reshape(k),
            np.asarray(stats.y_scale, dtype=float).reshape(k),
        )
        # the solve's beta is unbounded a priori (noise): clipping it to the largest size that
        # unscales to finite values (post-processing; it binds only for extreme boxes, e.g.
        # released or data-read ones) keeps the unscaling from overflowing after the spend
        cap = unscale_cap(stats.x_offset, stats.x_scale, y_map, stats.fit_intercept)
        beta = np.clip(beta, -cap, cap)
        coef, intercept = unscale_coefficients(  # (k, p), (k,)
            beta[o:].T, beta[0] if stats.fit_intercept else None, stats.x_offset,
            stats.x_scale, y_map,
        )  # fmt: skip
        if not np.all(np.isfinite(coef)) or not np.all(np.isfinite(intercept)):
            warnings.warn(
                "Non-finite coefficients after post-processing; set to 0.", RuntimeWarning
            )
            coef = np.nan_to_num(coef, nan=0.0, posinf=0.0, neginf=0.0)
            intercept = np.nan_to_num(intercept, nan=0.0, posinf=0.0, neginf=0.0)
        coef, intercept = coef.astype(dtype), intercept.astype(dtype)
        if one_d:
            self.coef_ = coef[0]
            self.intercept_ = float(intercept[0]) if dtype == np.float64 else intercept[0]
        else:
            self.coef_, self.intercept_ = coef, intercept

    # -- private inference: post-processing of noisy_statistics_ (dpreg.linear_model._inference)
    def _check_unweighted(self):
        # the bootstrap's noise and sampling model assume unit weights (docs/inference.md);
        # whether weights were passed is the caller's own (public) choice
        if getattr(self, "sample_weighted_", False):
            raise NotImplementedError(
                "conf_int/bse/summary are derived for unweighted fits only; this model was "
                "fitted with sample_weight."
            )
        if getattr(self, "boost_clip_", None) is not None:
            raise NotImplementedError(
                "conf_int/bse/summary are derived for the one-shot solve; this model was "
                "fitted with boost_rounds > 0."
            )

    def conf_int(self, alpha=0.05, n_boot=1000):
        """``(1 - alpha)`` intervals for ``[intercept, coef...]``; no extra budget.

        Parametric bootstrap from the released statistics, seeded by the release: the
        bias-aware hull of the basic interval and the uncorrected one
        (:func:`dpreg.linear_model._inference.bias_aware_interval`, ``docs/inference.md``).
        The intercept's interval is built around the de-noised intercept (the released
        intercept equation solved with the posterior mean of its noisy row,
        :func:`dpreg.linear_model._inference.denoised_intercept`), which can differ from
        ``intercept_`` at small ``n * epsilon``. Returns an array of shape ``(n_params, 2)``,
        or a DataFrame indexed by ``"const"`` and the feature names when ``fit`` saw column
        names.
        """
        self._check_unweighted()
        return _inference.conf_int(self, alpha, n_boot)

    def bse(self, n_boot=1000):
        """Standard errors of ``[intercept, coef...]`` (bootstrap; no extra budget); the
        intercept's is that of the de-noised intercept of :meth:`conf_int`."""
        self._check_unweighted()
        return _inference.bse(self, n_boot)

    def summary(self, alpha=0.05, n_boot=1000):
        """A statsmodels-style table; ``str()`` it or call ``.as_dataframe()``.

        Examples
        --------
        >>> import numpy as np
        >>> from dpreg import FunctionalLinearRegression
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(-1, 1, size=(20000, 2))
        >>> y = 1.0 + X @ np.array([2.0, -1.0]) + rng.normal(size=20000)
        >>> model = FunctionalLinearRegression(epsilon=2.0, bounds_X=(-1, 1), bounds_y=(-7, 9),
        ...                                    inference_share=0.1, random_state=0).fit(X, y)
        >>> model.conf_int().shape
        (3, 2)
        >>> list(model.summary().as_dataframe().columns)
        ['coef', 'std err', '[0.025', '0.975]']
        """
        self._check_unweighted()
        return _inference.summary(self, alpha, n_boot)

    def predict(self, X):
        """Predicted targets ``X @ coef_.T + intercept_`` in the user's units.

        Shape ``(n,)`` for a model fitted on 1-D ``y``, else ``(n, n_outputs)``; float32 only
        when both ``X`` and the coefficients are float32 (numpy promotion, as in scikit-learn).

        Bounds given as numbers are the user's public domain: rows outside them are
        extrapolated linearly (no clipping). Bounds released by ``"private"`` are applied
        again: ``X`` is clipped into ``bounds_X_`` and the prediction into ``bounds_y_``
        (``predict_bounds_``), the same map the model was fitted through, so a feature whose
        released box came out narrow is not extrapolated by its noisy coefficient
        (post-processing of released values; ``docs/private_workflow.md``).
        """
        check_is_fitted(self, "coef_")
        if not _is_dask(X):
            X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        box_X, box_y = getattr(self, "predict_bounds_", (None, None))
        return clip_released(clip_released(X, box_X) @ self.coef_.T + self.intercept_, box_y)


__all__ = [
    "FunctionalLinearRegression",
    "SufficientStatistics",
    "default_split",
    "gram_weight",
    "make_plan",
    "privatize_statistic",
    "solve_normal_equations",
    "sufficient_statistics",
]
