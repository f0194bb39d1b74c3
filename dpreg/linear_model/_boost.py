r"""Boosting rounds after the released normal equations (opt-in ``boost_rounds``; issue 14).

Why. The estimator solves the *noisy* normal equations ``(G~ + floor) theta = b~`` once. The
floor (a ridge on the small eigenvalues) and the Gram noise both bias ``theta``, and no
post-processing of ``(G~, b~)`` alone can remove them: on CPS1988 the floor applied to the
*exact* statistics already costs 0.04 R^2 (``docs/functional_linear_regression.md`` 5b).
Gradient boosting in the style of BoostedAdaSSP (Tang et al., SaTML 2024, Algorithm 1)
instead asks the data for fresh residual information: round ``t`` releases

    s_t = Z^T clip(w - Z theta_{t-1}, -c, c)        (plus noise)

and updates ``theta_t = theta_{t-1} + M^{-1} s~_t`` with ``M`` the floored noisy Gram of the
first release (the same post-processing solve). Without noise and clipping this is iterative
refinement: ``theta_t - theta* = (I - M^{-1} G)^t (theta_0 - theta*)`` with ``G = Z^T Z`` the
*exact* Gram matrix, so the floor's bias and the Gram noise shrink geometrically wherever
``M`` is close to ``G``, at the price of the rounds' own noise. Our version differs from the
paper's in the mechanism (pure-epsilon l_inf K-norm noise instead of Gaussian), in the clip
``c`` (chosen from released values instead of fixed at 1) and in keeping the first release of
``Z^T w`` (the paper starts from ``theta_0 = 0``).

Sensitivity of one round (replace-one; scaled rows ``x = [1, z]`` or ``z`` with entries in
[-1, 1], ``theta`` a released, hence public, vector, ``c`` public). Row ``i`` contributes
``x_i r_i`` with ``r_i = clip(w_i - x_i^T theta, -c, c)``, a function of that row and public
values only, and ``|x_ij r_i| <= |r_i| <= c``. Replacing one row changes each coordinate of
``s_t`` by ``|x_j r - x'_j r'| <= 2c``: the l_inf sensitivity is ``2c`` (attained with
``x = x' = (1, ..., 1)``, ``r = c``, ``r' = -c``). Floating point: the computed residual is
clipped by ``fmax``/``fmin`` to exactly ``[-c, c]`` (NaN goes to ``-c``), the computed
products are at most ``c`` in magnitude, and the computed sum differs from the exact sum of
the computed terms by at most ``float_sum_error_bound(n, c, products=True)`` per coordinate
in any summation order, so the release is calibrated to
``inflate_sensitivity(2c, that, LinfBall(q))`` and drawn by the exact-grid K-norm release
(``docs/floating_point.md``). ``tests/linear_model/test_boost_privacy.py`` searches
neighbouring data sets for a larger change.

Budget (basic composition, adaptive: each round's query depends on earlier *released*
values only). The fit's epsilon is split by public shares fixed before the data are read:
``boost_share`` for the ``T`` rounds (``boost_share * epsilon / T`` each),
:data:`CLIP_SHARE` for the Laplace release of ``w^T w`` when ``boost_clip="auto"``, and the
rest for the statistics (and the other releases of the estimator). With ``delta > 0`` the
first release may be the Gaussian or flipped Huber one; the rounds stay pure epsilon, so the
fit is ``(epsilon, delta)``-DP in total.

The clip. The rounds' noise scales with ``c``, and clipping biases the update only for rows
with ``|residual| > c``. ``boost_clip="auto"`` sets ``c = CLIP_SIGMAS * sigma~`` (limited to
``[CLIP_MIN, 1]``; 1 never clips since ``|w| <= 1`` and the residual of theta's fit is
mostly smaller), where ``sigma~^2 = (yty~ - 2 b~^T theta_0 + theta_0^T G~ theta_0) / n`` is
the residual mean square computed from released values only (post-processing).

Public constants (chosen on CollegeDistance, CPS1988 and PSID wages of the real-data matrix,
5 folds x 5 draws, ``docs/functional_linear_regression.md`` section 5c): ``boost_share``
0.4 (0.3, 0.5 tried), 2 rounds (1, 3 tried), the floor factor 0.75 of ``sqrt(p + 1) sigma_G``
for the l_inf block release when ``ridge_factor="auto"`` (1.0, 1.5 tried; the rounds remove
the floor's bias, so a lower floor pays), i.e. :data:`BOOST_FACTOR` = half the one-shot
factor (joint releases: 1.5 instead of 3), ``CLIP_SIGMAS = 2`` (3 tried, same).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

#: default share of the fit's epsilon spent on the boosting rounds
BOOST_SHARE = 0.4
#: share of the fit's epsilon for the released ``w^T w`` behind ``boost_clip="auto"``
CLIP_SHARE = 0.05
CLIP_SIGMAS = 2.0
CLIP_MIN = 0.05
#: a boosted fit with ``ridge_factor="auto"`` floors at this fraction of the one-shot factor
#: (``RIDGE_FACTOR`` of ``functional``): 0.75 for the l_inf block release, 1.5 for joint ones
BOOST_FACTOR = 0.5
#: ``boost_rounds="auto"``: this many rounds when ``n * epsilon >= AUTO_MIN_N_EPS``, else none
AUTO_ROUNDS = 2
AUTO_MIN_N_EPS = 2000.0


def check_boost(rounds, share, clip):
    """Validate ``boost_rounds``, ``boost_share`` and ``boost_clip`` (no data involved).

    Returns ``(rounds, share)`` with ``rounds`` the most rounds the setting can run
    (:data:`AUTO_ROUNDS` for ``"auto"``)."""
    if isinstance(rounds, str) and rounds == "auto":
        rounds = AUTO_ROUNDS
    elif isinstance(rounds, bool) or not isinstance(rounds, numbers.Integral) or rounds < 0:
        raise ValueError(f"boost_rounds must be 'auto' or an integer >= 0, got {rounds!r}.")
    if isinstance(share, bool) or not isinstance(share, numbers.Real) or not 0 < share < 1:
        raise ValueError(f"boost_share must be a number in (0, 1), got {share!r}.")
    if isinstance(clip, str):
        if clip != "auto":
            raise ValueError(f"boost_clip must be 'auto' or a number in (0, 1], got {clip!r}.")
    elif (
        isinstance(clip, bool)
        or not isinstance(clip, numbers.Real)
        or not 0 < clip <= 1
        or not math.isfinite(clip)
    ):
        raise ValueError(f"boost_clip must be 'auto' or a number in (0, 1], got {clip!r}.")
    return int(rounds), float(share)


def resolve_rounds(setting, n, epsilon, supported=True):
    """The number of rounds a fit runs: ``setting`` itself, or for ``"auto"``
    :data:`AUTO_ROUNDS` when ``supported`` (the fit can run rounds and is pure epsilon) and
    ``n * epsilon >= AUTO_MIN_N_EPS`` (public: ``n`` under replace-one adjacency, the fit's
    epsilon), else 0.

    Why not with ``delta > 0``: there the first release is the Gaussian (or flipped Huber)
    one, much less noisy per entry than the pure-epsilon rounds, and the rounds lost to the
    one-shot fit on CPS1988 at epsilon = 0.1 and PSID wages at epsilon = 1 and 2 while winning
    on CollegeDistance (``python -m benchmarks.realdata_boost --delta 1e-6``).

    Why ``n * epsilon``: on the real-data matrix the rounds' own noise outweighs the bias they
    remove when ``n * epsilon`` is small (CASchools, diabetes, Engel, HousePrices at every
    epsilon, PSID wages at 0.5: n eps <= 1,900) and wins from about 2,000 on (CPS1988 at
    every epsilon, CollegeDistance and wages from epsilon = 1); the threshold is a public
    constant read off that matrix (``docs/functional_linear_regression.md`` 5c).
    """
    if not (isinstance(setting, str) and setting == "auto"):
        return int(setting)
    return AUTO_ROUNDS if supported and n * epsilon >= AUTO_MIN_N_EPS else 0


def boost_shares(rounds, share, clip):
    """``(epsilon share of the rounds, epsilon share of the clip's release)``."""
    if rounds == 0:
        return 0.0, 0.0
    return float(share), (CLIP_SHARE if isinstance(clip, str) else 0.0)


def round_sensitivity(c, n, q):
    """l_inf sensitivity of the computed ``Z^T clip(r, -c, c)`` (module docstring)."""
    from ..noise import LinfBall  # noqa: PLC0415
    from ..noise._grid import float_sum_error_bound, inflate_sensitivity  # noqa: PLC0415

    err = float_sum_error_bound(int(n), float(c), products=True)
    return inflate_sensitivity(2.0 * c, err, LinfBall(q))


def residual_scores(chunks, theta, c, fit_intercept):
    """``Z^T clip(w - Z theta, -c, c)`` over the scaled row chunks (total: never raises).

    ``chunks`` yields ``(Z, W)`` without the intercept column (``W`` of shape ``(m, 1)``);
    ``theta`` is finite. ``fmax``/``fmin`` send NaN (an overflowed prediction) to ``-c``.
    """
    o = 1 if fit_intercept else 0
    s = np.zeros(len(theta))
    for Z, W in chunks:
        pred = Z @ theta[o:]
        if o:
            pred = pred + theta[0]
        r = np.fmin(np.fmax(W[:, 0] - pred, -c), c)
        s[o:] += Z.T @ r
        if o:
            s[0] += r.sum()
    return s


def auto_clip(yty, gram, xty, theta, n):
    """The clip from released values: ``CLIP_SIGMAS`` residual root mean squares, in
    ``[CLIP_MIN, 1]`` (post-processing)."""
    g = 0.5 * (gram + gram.T)
    rss = float(yty - 2.0 * xty @ theta + theta @ g @ theta)
    if not math.isfinite(rss):
        return 1.0
    c = CLIP_SIGMAS * math.sqrt(max(rss, 0.0) / max(n, 1))
    return float(min(max(c, CLIP_MIN), 1.0))


def boost(theta, solve, chunks, rounds, c, epsilon_round, n, fit_intercept, rng):
    """Run ``rounds`` boosting rounds from ``theta`` (each an ``epsilon_round``-DP release).

    ``solve(v)`` applies the floored noisy Gram's inverse (post-processing); ``chunks()``
    returns a fresh iterator of the scaled rows. Returns the final coefficients.
    """
    for _ in range(rounds):
        theta = np.nan_to_num(theta, nan=0.0, posinf=0.0, neginf=0.0)  # public vector
        noisy = release_round(chunks(), theta, c, epsilon_round, n, fit_intercept, rng)
        theta = theta + solve(noisy)
    return np.nan_to_num(theta, nan=0.0, posinf=0.0, neginf=0.0)


def release_round(chunks, theta, c, epsilon, n, fit_intercept, rng):
    """One round: ``Z^T clip(w - Z theta, -c, c)`` plus l_inf K-norm noise calibrated to
    :func:`round_sensitivity` (``epsilon``-DP; exact-grid release of :mod:`dpreg.noise`)."""
    from ..noise import KNormMechanism  # noqa: PLC0415

    q = len(theta)
    s = residual_scores(chunks, theta, c, fit_intercept)
    sens = round_sensitivity(c, n, q)
    noisy = KNormMechanism("linf", q, sens, epsilon, random_state=rng).randomise(s)
    return np.asarray(noisy, dtype=float)


__all__ = [
    "BOOST_FACTOR",
    "BOOST_SHARE",
    "auto_clip",
    "boost",
    "boost_shares",
    "check_boost",
    "resolve_rounds",
    "release_round",
    "residual_scores",
    "round_sensitivity",
]
