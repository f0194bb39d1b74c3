r"""Private inference for :class:`~dpreg.PrivateProjectionMedian` with axis directions.

With ``norm="linf"`` the outlyingness is ``O_D(x) = max_j |x_j - mu_j| / sigma_j`` (``mu_j``
the coordinate median, ``sigma_j`` its MAD or IQR, or the user's public scale ``s_j``), so
the release ``x~ ∝ exp(-c O_D(x))`` is, *exactly*,

    x~ = mu + sigma * (R U),   R ~ Gamma(d + 1, 1/c),   U ~ Uniform[-1, 1]^d,

with ``c`` public. ``mu_j`` (the sample median) is asymptotically ``N(m_j, 1 / (4 f_j(m_j)^2
n))``. The unknowns come from one declared and charged release of private quantiles per
coordinate (:func:`release_scale`):

* two quantiles at ``1/2 +- a`` give the standard deviation of the median without a density
  model, ``(Q(1/2 + a) - Q(1/2 - a)) / (4 a sqrt(n))`` (a difference quotient of the
  quantile function). The bandwidth ``a = max(z / (2 sqrt(n)), 10 k / n)`` (``k`` the mean
  absolute rank error of one private quantile) spans at least the median's own sampling
  window (+-z of its standard deviations) and makes the relative rank noise of the quotient
  at most 0.1 (it is mean-zero: no inflation);
* with a data-derived scale (``scale="mad"``/``"iqr"``) the quartiles (moved outwards
  likewise) give ``sigma_j``; with a **public** scale ``sigma_j = s_j`` is known exactly and
  only the two median quantiles are released (on a public window in units of ``s_j``).

A scale released by ``scale="private"`` (``public_scale_``) takes the public-scale path
unchanged. Given the released s the release is exactly ``mu + s * (R U)`` with c of the
median stage, which is the bootstrap's noise law, so the interval is calibrated given s for
every s and hence on average over the scale release: its own noise needs no term (an
interval that widened for it, or used the data's spread instead of s, would be the
miscalibrated one). Every input stays a released value (centre, s, median pair) or public
(c, n, epsilon). Derivation and the measurement: docs/inference.md, "Released scales
(session 12)".

The interval with ``trim_scale`` is refused: the trimmed mean's law needs the variance of the
kept rows (a further release) and how the first stage's error leaks through the trimming
window, neither derived. Derivation and assumptions: ``docs/inference.md``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, stats

from .._random import release_seed
from .._validation import (
    check_epsilon,
    check_fit_rows,
    check_random_state,
    check_release_epsilon,
    equal_share,
    warn_if_released_again,
)
from ..noise import LinfKNormCoordinate

DEFAULT_N_BOOT = 2000
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_G_MAX = 40.0
#: The median pair's bandwidth ``a`` (in quantile level) is at least ``Z_SPREAD`` standard
#: deviations of the median, ``Z_SPREAD / (2 sqrt(n))``: the density that matters for the
#: median's law is the one in that window (a fixed bandwidth of 0.1 made the interval of the
#: dip density 0.5 N(-1.5, 1) + 0.5 N(1.5, 1) at n = 2e4 0.96-0.995 times the noise-free
#: asymptotic one). It is also at least ``RANK_NOISE_FACTOR k / n`` so that the rank noise of
#: the two quantiles (each Laplace with scale k, their difference sd 2k, the spread 2 a n
#: ranks) moves the quotient by a relative sd ``k / (a n)`` of at most 0.1; it is capped at
#: ``MAX_SPREAD``. Session 5 instead
#: moved the levels out by k/n at a = Z_SPREAD / (2 sqrt(n)) and kept the nominal divisor,
#: which inflated the standard error by ``1 + k / (a n)`` (1.25x at n = 1e5, epsilon = 1).
Z_SPREAD = 4.0
RANK_NOISE_FACTOR = 10.0
MAX_SPREAD = 0.25
#: Public-scale path: the quantiles are released on ``[-w, w]`` in units of ``s_j`` around the
#: released centre, ``w = WINDOW + 4 (d + 1) / c`` (``4 (d+1)/c`` bounds the centre's own
#: noise ``R`` except with probability < 1e-3 at d <= 10: ``R ~ Gamma(d + 1, 1/c)``).
WINDOW = 8.0


@dataclass
class ScaleRelease:
    """The private quantiles (``levels`` x features) and what the intervals use from them."""

    levels: np.ndarray
    quantiles: np.ndarray
    sigma: np.ndarray
    median_sd: np.ndarray
    epsilon: float
    n: int
    location: np.ndarray
    public_scale: bool = False


def quantile_levels(n, epsilon_each):
    """Public levels ``[1/4 - k/n, 1/2 - a, 1/2 + a, 3/4 + k/n]`` and ``a``.

    ``k = 2 / epsilon_each`` is the mean absolute rank error of a KNG quantile (its rank error
    is Laplace with scale k). The quartiles are moved outwards by ``k/n`` so that their noise
    enlarges the released scale rather than shrinking it; the median pair is not moved (its
    quotient divides by the released distance ``2a``, see the module constants)."""
    k = 2.0 / epsilon_each
    a = min(max(Z_SPREAD / (2.0 * math.sqrt(n)), RANK_NOISE_FACTOR * k / n), MAX_SPREAD)
    lv = np.array([0.25 - k / n, 0.5 - a, 0.5 + a, 0.75 + k / n])
    return np.clip(lv, 0.0, 1.0), a


def rank_noise_share(rel, d):
    """Relative sd ``k / (a n)`` of the median pair's span that its rank noise causes (public:
    ``n``, the release's epsilon and ``d`` only; ``k = 2 / epsilon_each``).

    The bandwidth rule keeps it at most ``1 / RANK_NOISE_FACTOR`` unless ``a`` is capped at
    ``MAX_SPREAD`` (``k > MAX_SPREAD n / RANK_NOISE_FACTOR``: too little data or budget for
    the scale release). Above that the released standard error of the median is mostly rank
    noise: the public-scale benchmark measured its mean at 184-195x the true one at
    n = 1e3, epsilon = 0.25 (share 1.3), 15x at epsilon = 1 (0.32) and 2.8-4.2x at n = 1e4,
    epsilon = 0.25 (0.13), against 0.99-1.06x in every cell below the limit."""
    eps_each = rel.epsilon / (len(rel.levels) * d)
    _, a = quantile_levels(rel.n, eps_each)
    return (2.0 / eps_each) / (a * rel.n)


def median_sd_from(q_low, q_high, a, n):
    """``(Q(1/2 + a) - Q(1/2 - a)) / (4 a sqrt(n))``: ``Q(1/2 + a) - Q(1/2 - a) ~ 2 a / f(m)``
    and the median's standard deviation is ``1 / (2 f(m) sqrt(n))``."""
    return (q_high - q_low) / (4.0 * a * math.sqrt(n))


def _check_axis(estimator):
    from sklearn.utils.validation import check_is_fitted  # noqa: PLC0415

    check_is_fitted(estimator, "location_")
    if hasattr(estimator, "median_location_"):
        raise ValueError(
            "private inference for PrivateProjectionMedian is derived for the projection "
            "median (data-derived or public scale); this fit used trim_scale (trimmed means), "
            "whose law is not derived (docs/inference.md)."
        )
    U = estimator.directions_
    if U.shape[0] != U.shape[1] or not np.array_equal(U, np.eye(U.shape[1])):
        raise ValueError(
            "private inference for PrivateProjectionMedian needs norm='linf' (axis "
            "directions), where the noise law is known in closed form."
        )


def release_scale(
    estimator,
    X,
    epsilon,
    accountant=None,
    random_state=None,
    candidate_range=(-1e9, 1e9),
    asinh_scale=1.0,
):
    """Release private quantiles per coordinate of ``X - location_`` (exact KNG).

    Data-derived scale: four quantiles (quartiles and the median pair) on
    ``candidate_range`` with the asinh measure. Public scale ``s``: only the median pair, on
    the public window ``[-w s_j, w s_j]`` (:data:`WINDOW`) with the uniform measure
    (``candidate_range``/``asinh_scale`` are then unused). Everything is validated and
    ``epsilon`` reserved (the estimator's accountant when ``accountant`` is None) before the
    data are used; ``epsilon`` is split equally over the quantiles (basic composition).
    """
    from sklearn.utils.validation import validate_data  # noqa: PLC0415

    from ..accounting import check_accountant  # noqa: PLC0415
    from ..tools._common import check_interval  # noqa: PLC0415
    from ..tools._quantile import check_measure, private_quantile_draws  # noqa: PLC0415

    _check_axis(estimator)
    epsilon = check_epsilon(epsilon)
    lo, hi = check_interval(candidate_range, name="candidate_range", finite_width=False)  # asinh
    s = check_measure("asinh", asinh_scale)
    accountant = check_accountant(estimator.accountant if accountant is None else accountant)
    accountant.check(epsilon, 0.0)
    X = validate_data(estimator, X, reset=False, dtype=np.float64)
    n, d = X.shape
    check_fit_rows(getattr(estimator, "n_samples_fit_", None), n, "release_scale")
    epsilon = check_release_epsilon(epsilon)
    public = getattr(estimator, "public_scale_", None)
    n_levels = 4 if public is None else 2
    eps_each = equal_share(epsilon, n_levels * d)  # n_levels * d draws, exactly within
    levels, a = quantile_levels(n, eps_each)
    if public is not None:
        levels = levels[1:3]
        width = WINDOW + 4.0 * (d + 1) / inverse_temperature(estimator)
    rng = check_random_state(random_state)
    previous = getattr(estimator, "inference_release_", None)
    warn_if_released_again(previous, estimator.location_, epsilon, "scale", "location")
    accountant.spend(epsilon, 0.0)  # reserve before the data are used
    Q = np.empty((n_levels, d))
    with np.errstate(over="ignore", invalid="ignore"):
        # the centre is public (released); clipping into the public candidate range keeps
        # every value finite (x - centre can overflow) and changes no quantile inside it
        centred = np.clip(X - estimator.location_, lo, hi)
    for j in range(d):
        if public is None:
            Q[:, j] = private_quantile_draws(
                centred[:, j], levels, eps_each, lo, hi, "asinh", s, rng
            )
        else:  # in units of s_j on the public window (clipping is part of the mechanism)
            with np.errstate(over="ignore", invalid="ignore"):
                z = np.clip(centred[:, j] / public[j], -width, width)
            draws = private_quantile_draws(z, levels, eps_each, -width, width, "uniform", 1, rng)
            Q[:, j] = public[j] * draws
    Q = np.sort(Q, axis=0)  # monotone rearrangement (post-processing)
    if public is None:
        iqr = Q[3] - Q[0]
        sigma = iqr if estimator.scale == "iqr" else 0.5 * iqr
        pair = Q[1], Q[2]
    else:
        sigma = np.asarray(public, dtype=float).copy()
        pair = Q[0], Q[1]
    estimator.inference_release_ = ScaleRelease(
        levels=levels,
        quantiles=Q + estimator.location_,
        sigma=sigma,
        median_sd=median_sd_from(*pair, a, n),
        epsilon=epsilon,
        n=n,
        location=estimator.location_,
        public_scale=public is not None,
    )
    return estimator


def _release(estimator):
    _check_axis(estimator)
    rel = getattr(estimator, "inference_release_", None)
    # the very array of this fit (a refit makes a new one, even with the same seed)
    if rel is None or rel.location is not estimator.location_:
        raise ValueError(
            "no scale release for this fit: call release_scale(X, epsilon) after fit (it "
            "spends epsilon; the noise law of the release depends on the data's scales)."
        )
    return rel


def inverse_temperature(estimator):
    from .projection_median import release_inverse_temperature  # noqa: PLC0415

    # the median stage's epsilon: the whole fit's minus a private scale release, if any
    return release_inverse_temperature(
        estimator.median_epsilon_, estimator.delta_, estimator.eta_, estimator.test_fraction_
    )


def bootstrap(estimator, n_boot=DEFAULT_N_BOOT, random_state=0):
    """``(estimate, draws)``: the release and ``n_boot`` draws of its plug-in law."""
    rel = _release(estimator)
    rng = check_random_state(random_state)
    d = len(estimator.location_)
    c = inverse_temperature(estimator)
    R = rng.gamma(d + 1.0, 1.0 / c, size=(n_boot, 1))
    U = rng.uniform(-1.0, 1.0, size=(n_boot, d))
    noise = rel.sigma * (R * U)
    sampling = rel.median_sd * rng.standard_normal((n_boot, d))
    return estimator.location_.copy(), estimator.location_ + sampling + noise


def _checked_release(estimator, stacklevel):
    """The scale release of this fit, warning where its numbers are known to be poor."""
    rel = _release(estimator)
    if np.any(rel.sigma <= 0) or np.any(rel.median_sd <= 0):
        warnings.warn(
            "A released scale is not positive (too little data or budget for the scale "
            "release): the intervals degenerate; see docs/inference.md.",
            UserWarning,
            stacklevel=stacklevel,
        )
    share = rank_noise_share(rel, len(estimator.location_))
    if share > 1.0 / RANK_NOISE_FACTOR + 1e-12:  # only when the bandwidth cap binds
        warnings.warn(
            f"Small n * epsilon for the scale release: the rank noise of the two private "
            f"quantiles is {share:.2g} of their span (the bandwidth rule needs at most "
            f"{1.0 / RANK_NOISE_FACTOR:g}), so the median's sampling standard error is "
            "unreliable (the benchmark measured it up to 195x too large). The intervals stay "
            "usable only while the privacy noise of the centre dominates them, as it did in "
            "those benchmark cells; release the scale with more epsilon or more data. See "
            "docs/inference.md.",
            UserWarning,
            stacklevel=stacklevel,
        )
    return rel


def _draws(estimator, n_boot):
    from ..linear_model._inference import check_n_boot  # noqa: PLC0415

    n_boot = check_n_boot(n_boot)
    rel = _checked_release(estimator, stacklevel=5)
    cache = getattr(estimator, "_inference_cache", None)
    if cache is None or cache[0] is not rel or cache[1] != n_boot:
        # seeded by the releases: deterministic for one release, independent across releases
        seed = release_seed(*released_values(estimator, rel))
        cache = (rel, n_boot, bootstrap(estimator, n_boot, random_state=seed))
        estimator._inference_cache = cache
    return rel, cache[2]


def noise_law(estimator):
    """The law of one coordinate of the release's noise ``R U`` (before the scale):
    :class:`~dpreg.noise.LinfKNormCoordinate` with ``dim = d`` and ``scale = 1 / c``."""
    return LinfKNormCoordinate(len(estimator.location_), 1.0 / inverse_temperature(estimator))


def exact_se(rel, law):
    """``sqrt(sd_j^2 + sigma_j^2 Var T)``: the plug-in law's standard deviations, exactly
    (the bootstrap's draws estimate the same numbers)."""
    return np.sqrt(rel.median_sd**2 + rel.sigma**2 * law.var())


def normal_plus_isf(sd, s, law, q):
    """The ``z`` with ``P(sd G + s T > z) = q`` (``0 < q < 1/2``), ``G ~ N(0, 1)`` independent
    of ``T ~ law`` (symmetric), by quadrature and Brent's method.

    ``P(sd G + s T > z) = E_G[P(T > (z - sd G) / s)]`` is one integral against the normal
    density, over ``|G| <= 40`` (the rest weighs less than 1e-300), split at 0 (the normal's
    mass), where the argument crosses 0 (``G = z / sd``: the law's kink) and at the ends of
    the window ``(m + 60) b s / sd`` around it, where the law's survival function changes
    (adaptive quadrature can step over a narrow feature inside a long piece). The root is
    bracketed by ``hi = 2 max(sd z_(q/2), s t_(q/2))``, at which each term exceeds ``hi / 2``
    with probability at most ``q / 2``.
    """
    sd, s = abs(float(sd)), abs(float(s))
    if s == 0.0:
        return sd * stats.norm.isf(q)
    if sd == 0.0:
        return s * float(law.isf(q))

    law_sf = law.sf_float
    step = (law.dim + 60.0) * law.scale * s / sd

    def survival(z):
        def integrand(g):
            return math.exp(-0.5 * g * g) * _INV_SQRT_2PI * law_sf((z - sd * g) / s)

        # finite pieces: quad on (-inf, g0] with g0 far out (sd << s) missed the normal's
        # mass near 0 (it returned half the tail at sd / s = 0.01), and on [g0, 40] it
        # missed the law's step of width ~ s b / sd at g0 (sd >> s: a tail 4e-6 off at
        # sd / s = 1e4); beyond |g| = 40 the normal density is below 1e-300, beyond
        # (m + 60) b the law's tail below 1e-20
        g0 = z / sd
        near = {g0 + k * step for k in (-1.0, 0.0, 1.0)}
        cuts = sorted({min(max(g, -_G_MAX), _G_MAX) for g in near | {-_G_MAX, 0.0, _G_MAX}})
        return sum(
            integrate.quad(integrand, left, right, epsabs=1e-13, epsrel=1e-11, limit=200)[0]
            for left, right in zip(cuts[:-1], cuts[1:])
            if right > left
        )

    hi = 2.0 * max(sd * stats.norm.isf(q / 2.0), s * float(law.isf(q / 2.0)))
    return optimize.brentq(lambda z: survival(z) - q, 0.0, hi, xtol=1e-10 * hi, rtol=1e-10)


def exact_interval(estimator, rel, law, alpha):
    """``(d, 2)``: the location plus or minus, per coordinate, the ``1 - alpha/2`` quantile
    of the plug-in law of its error, median error plus ``sigma T`` (symmetric, so this is
    the basic interval with exact quantiles)."""
    half = np.array(
        [normal_plus_isf(sd, s, law, alpha / 2.0) for sd, s in zip(rel.median_sd, rel.sigma)]
    )
    est = estimator.location_
    return np.column_stack([est - half, est + half])


def released_values(estimator, rel):
    """The public quantities that seed the bootstrap: the released centre, the released
    quantiles with their public levels, the scale the intervals use (public, or computed from
    the released quartiles), ``n``, both releases' budgets and the public inverse temperature.

    A fixed seed (0) made every release reuse the same Monte Carlo draws, so their error was
    common to all intervals instead of averaging out (the median's x1 intervals were 5 % too
    wide and its x2 ones 5 % too narrow in every cell; docs/inference.md, "One seed per
    release"). Only released values enter the hash, so seeding is post-processing.
    """
    return (
        estimator.location_,
        rel.quantiles,
        rel.levels,
        rel.sigma,
        rel.n,
        rel.epsilon,
        estimator.epsilon_,
        estimator.delta_,
        inverse_temperature(estimator),
    )


def _names(estimator):
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        return [f"x{j + 1}" for j in range(estimator.n_features_in_)]
    return [str(v) for v in names]


def _maybe_names(estimator):
    return _names(estimator) if getattr(estimator, "feature_names_in_", None) is not None else None


def conf_int(estimator, alpha=0.05, n_boot=None):
    """Intervals from the plug-in law: its exact quantiles (``n_boot=None``) or ``n_boot``
    bootstrap draws of it (the method before session 15)."""
    from ..linear_model._inference import check_alpha, ci_output, interval_output  # noqa: PLC0415

    alpha = check_alpha(alpha)
    if n_boot is None:
        rel = _checked_release(estimator, stacklevel=4)
        ci = exact_interval(estimator, rel, noise_law(estimator), alpha)
        return ci_output(ci, alpha, _maybe_names(estimator))
    _, (est, draws) = _draws(estimator, n_boot)
    return interval_output(est, draws, alpha, _maybe_names(estimator))


def bse(estimator, n_boot=None):
    from ..linear_model._inference import se_output, se_values_output  # noqa: PLC0415

    if n_boot is None:
        rel = _checked_release(estimator, stacklevel=4)
        return se_values_output(exact_se(rel, noise_law(estimator)), _maybe_names(estimator))
    _, (_, draws) = _draws(estimator, n_boot)
    return se_output(draws, _maybe_names(estimator))


def summary(estimator, alpha=0.05, n_boot=None):
    from ..linear_model._inference import (  # noqa: PLC0415
        Summary,
        check_alpha,
        summary_frame,
        summary_frame_of,
    )

    alpha = check_alpha(alpha)
    names = _names(estimator)
    if n_boot is None:
        rel = _checked_release(estimator, stacklevel=4)
        law = noise_law(estimator)
        ci = exact_interval(estimator, rel, law, alpha)
        se = exact_se(rel, law)
        frame = summary_frame_of(estimator.location_, se, ci, alpha, names, first="location")
        method = "exact quantiles of the plug-in law (quadrature)"
    else:
        rel, (est, draws) = _draws(estimator, n_boot)
        frame = summary_frame(est, draws, alpha, names, first="location")
        method = f"basic parametric bootstrap, {n_boot} draws"
    info = {
        "n": rel.n,
        "epsilon spent": f"{estimator.epsilon_ + rel.epsilon:g} (fit {estimator.epsilon_:g}, "
        f"{'median se' if rel.public_scale else 'scales'} {rel.epsilon:g})",
        "delta spent": f"{estimator.delta_:g}",
        "mechanism": f"PTR + exp(-c O), c={inverse_temperature(estimator):.4g}, "
        + ("public scale" if rel.public_scale else f"scale={estimator.scale}"),
        "norm": "linf (axis directions)",
        "interval": method,
    }
    return Summary(frame, info, title="Private projection median")
