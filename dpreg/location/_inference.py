r"""Private inference for :class:`~dpreg.PrivateProjectionMedian` with axis directions.

With ``norm="linf"`` the outlyingness is ``O_D(x) = max_j |x_j - mu_j| / sigma_j`` (``mu_j``
the coordinate median, ``sigma_j`` its MAD or IQR), so the release ``x~ ∝ exp(-c O_D(x))``
is, *exactly*,

    x~ = mu + sigma * (R U),   R ~ Gamma(d + 1, 1/c),   U ~ Uniform[-1, 1]^d,

with ``c`` public. The law of ``x~ - mu`` is known up to the scales ``sigma_j``, and ``mu_j``
(the sample median) is asymptotically ``N(m_j, 1 / (4 f_j(m_j)^2 n))``. Both unknowns come
from one declared and charged release of four private quantiles per coordinate
(:func:`release_scale`): the quartiles give ``sigma_j`` and two quantiles at ``1/2 +- a``
(``a = z / (2 sqrt(n))``) give the standard deviation of the median without a density
model, ``(Q(1/2 + a) - Q(1/2 - a)) / (2 z)``. Each level is moved outwards by the typical
rank error of the private quantile, so their noise widens rather than narrows the interval.
Derivation and assumptions: ``docs/inference.md``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import check_epsilon, check_random_state

DEFAULT_N_BOOT = 2000
#: Half-width, in standard deviations of the median, of the order-statistic spread used for
#: the median's standard error (larger z: less noise, more curvature bias).
Z_SPREAD = 4.0


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


def quantile_levels(n, epsilon_each):
    """Public levels: quartiles and ``1/2 +- a``, each moved outwards by ``k/n`` with
    ``k = 2 / epsilon_each``, the mean absolute rank error of a KNG quantile."""
    k = 2.0 / epsilon_each
    a = min(Z_SPREAD / (2.0 * math.sqrt(n)), 0.2)
    shift = k / n
    lv = np.array([0.25 - shift, 0.5 - a - shift, 0.5 + a + shift, 0.75 + shift])
    return np.clip(lv, 0.0, 1.0), a


def _check_axis(estimator):
    from sklearn.utils.validation import check_is_fitted  # noqa: PLC0415

    check_is_fitted(estimator, "location_")
    if hasattr(estimator, "median_location_") or hasattr(estimator, "public_scale_"):
        raise ValueError(
            "private inference for PrivateProjectionMedian is derived for the projection "
            "median with its MAD/IQR scales; this fit used trim_scale (trimmed means) or a "
            "public scale, whose laws differ."
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
    """Release four quantiles per coordinate of ``X - location_`` (exact KNG, asinh measure).

    Everything is validated and ``epsilon`` reserved (the estimator's accountant when
    ``accountant`` is None) before the data are used; ``epsilon`` is split equally over the
    ``4 d`` quantiles (basic composition).
    """
    from sklearn.utils.validation import validate_data  # noqa: PLC0415

    from ..accounting import check_accountant  # noqa: PLC0415
    from ..tools._common import check_interval  # noqa: PLC0415
    from ..tools._quantile import check_measure, private_quantile_draws  # noqa: PLC0415

    _check_axis(estimator)
    epsilon = check_epsilon(epsilon)
    lo, hi = check_interval(candidate_range, name="candidate_range")
    s = check_measure("asinh", asinh_scale)
    accountant = check_accountant(estimator.accountant if accountant is None else accountant)
    accountant.check(epsilon, 0.0)
    X = validate_data(estimator, X, reset=False, dtype=np.float64)
    n, d = X.shape
    eps_each = epsilon / (4 * d)
    levels, a = quantile_levels(n, eps_each)
    rng = check_random_state(random_state)
    accountant.spend(epsilon, 0.0)  # reserve before the data are used
    Q = np.empty((4, d))
    with np.errstate(over="ignore", invalid="ignore"):
        # the centre is public (released); clipping into the public candidate range keeps
        # every value finite (x - centre can overflow) and changes no quantile inside it
        centred = np.clip(X - estimator.location_, lo, hi)
    for j in range(d):
        Q[:, j] = private_quantile_draws(centred[:, j], levels, eps_each, lo, hi, "asinh", s, rng)
    Q = np.sort(Q, axis=0)  # monotone rearrangement (post-processing)
    iqr = Q[3] - Q[0]
    sigma = iqr if estimator.scale == "iqr" else 0.5 * iqr
    estimator.inference_release_ = ScaleRelease(
        levels=levels,
        quantiles=Q + estimator.location_,
        sigma=sigma,
        median_sd=(Q[2] - Q[1]) / (2.0 * Z_SPREAD),
        epsilon=epsilon,
        n=n,
        location=estimator.location_,
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

    return release_inverse_temperature(
        estimator.epsilon_, estimator.delta_, estimator.eta_, estimator.test_fraction_
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


def _draws(estimator, n_boot):
    from ..linear_model._inference import check_n_boot  # noqa: PLC0415

    n_boot = check_n_boot(n_boot)
    rel = _release(estimator)
    if np.any(rel.sigma <= 0) or np.any(rel.median_sd <= 0):
        warnings.warn(
            "A released scale is not positive (too little data or budget for the scale "
            "release): the intervals degenerate; see docs/inference.md.",
            UserWarning,
            stacklevel=4,
        )
    cache = getattr(estimator, "_inference_cache", None)
    if cache is None or cache[0] is not rel or cache[1] != n_boot:
        cache = (rel, n_boot, bootstrap(estimator, n_boot, random_state=0))
        estimator._inference_cache = cache
    return rel, cache[2]


def _names(estimator):
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        return [f"x{j + 1}" for j in range(estimator.n_features_in_)]
    return [str(v) for v in names]


def _maybe_names(estimator):
    return _names(estimator) if getattr(estimator, "feature_names_in_", None) is not None else None


def conf_int(estimator, alpha=0.05, n_boot=DEFAULT_N_BOOT):
    from ..linear_model._inference import check_alpha, interval_output  # noqa: PLC0415

    alpha = check_alpha(alpha)
    _, (est, draws) = _draws(estimator, n_boot)
    return interval_output(est, draws, alpha, _maybe_names(estimator))


def bse(estimator, n_boot=DEFAULT_N_BOOT):
    from ..linear_model._inference import se_output  # noqa: PLC0415

    _, (_, draws) = _draws(estimator, n_boot)
    return se_output(draws, _maybe_names(estimator))


def summary(estimator, alpha=0.05, n_boot=DEFAULT_N_BOOT):
    from ..linear_model._inference import Summary, check_alpha, summary_frame  # noqa: PLC0415

    alpha = check_alpha(alpha)
    rel, (est, draws) = _draws(estimator, n_boot)
    frame = summary_frame(est, draws, alpha, _names(estimator), first="location")
    info = {
        "n": rel.n,
        "epsilon spent": f"{estimator.epsilon_ + rel.epsilon:g} (fit {estimator.epsilon_:g}, "
        f"scales {rel.epsilon:g})",
        "delta spent": f"{estimator.delta_:g}",
        "mechanism": f"PTR + exp(-c O), c={inverse_temperature(estimator):.4g}, "
        f"scale={estimator.scale}",
        "norm": "linf (axis directions)",
        "interval": f"basic parametric bootstrap, {n_boot} draws",
    }
    return Summary(frame, info, title="Private projection median")
