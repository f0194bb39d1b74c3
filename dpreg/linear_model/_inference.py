r"""Private inference for :class:`~dpreg.linear_model.FunctionalLinearRegression`.

Standard errors, confidence intervals and a summary table computed from the *released*
quantities only (the noisy sufficient statistics, the public ``n``, the public scaling and the
public noise law), so they are post-processing and cost no privacy budget. The derivation and
the assumptions are in ``docs/inference.md``; in short, a parametric bootstrap:

1. From the noisy Gram ``G~`` and target vector ``c~`` take the released estimate ``b^`` (the
   estimator's own post-processing) and ``G^``, the PSD floor of ``G~`` (the same projection
   the estimator uses) with its intercept row de-noised (:func:`denoised_intercept_row`), as
   the design (the intercept row replaced by its posterior mean).
2. The residual variance (scaled units, where ``w in [-1, 1]``) comes from the optional
   private release of ``w^T w`` (``inference_share > 0``): ``RSS = w^T w - 2 b^T c~ +
   b^T G~ b`` minus the bias that the noise of ``G~`` and ``c~`` gives it (measured by
   simulation, :func:`rss_noise_bias`); each replicate takes its own ``sigma*^2`` from a
   fresh draw of the Laplace noise of ``w^T w`` (:func:`sigma2_draws`), clipped into
   [0, 1] (1 bounds the variance of any variable in [-1, 1]). Without that release we use
   the bound 1 (valid but conservative).
3. Each bootstrap replicate draws the sampling error of ``Z^T w`` under the Gaussian linear
   model, ``c* = G^ b^ + sigma* L xi`` (``L L^T = G^``), adds a fresh draw of the *same*
   privacy noise law (:func:`~dpreg.linear_model.functional.privatize_statistic` with the
   stored plan) and re-runs the same post-processing. The world's truth is ``b^`` shrunk so
   that its squared norm is de-noised (:func:`denoised_truth`, from a first pass around
   ``b^``); the replicates' roots are re-centred on the interval's estimate.
4. The interval's estimate is the release with its intercept de-noised
   (:func:`denoised_intercept`: the intercept equation solved with the posterior mean of the
   noisy row ``s~ = sum_i x~_i``); its replicates hold that row fixed where it multiplies the
   slopes' error and simulate the de-noising's own error (:func:`conditional_intercept`).
   The slopes are the released ones.
5. Bias-aware intervals of the parameters in the user's units (:func:`bias_aware_interval`):
   the union of the basic interval (which removes the bootstrap world's bias) and the same
   interval without that correction, because at small ``n * epsilon`` the world's bias is
   not a reliable estimate of the estimator's (docs/inference.md, "The bias-aware
   interval").
6. Where a de-noised eigenvalue of ``G~`` is below the PSD floor by a margin (the floor may
   bind in the truth: a design not centred within its bounds), the hull of that interval and
   the one of a second world whose design keeps the small eigenvalue and whose estimate is
   de-shrunk along it, the replicates applying the same rule (:func:`floor_bootstrap`;
   docs/inference.md, "The floor on non-centred designs (session 12)").
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._random import release_seed  # its home is _random; this import keeps the old path
from .._validation import check_random_state

DEFAULT_N_BOOT = 1000


@dataclass
class NoisyStatistics:
    """Everything the estimator released, plus the public facts needed to re-use it.

    ``gram`` and ``xty`` are the noisy (scaled) ``Z^T Z`` and ``Z^T w``; ``yty`` the noisy
    ``w^T w`` (None when it was not released) with Laplace scale ``yty_scale``. ``plan``,
    ``epsilon``, ``delta`` describe the noise of the main release, ``postprocess``/``lam``
    the solve. None of these depend on the data except the three noisy quantities.
    """

    gram: np.ndarray
    xty: np.ndarray
    yty: float | None
    yty_scale: float | None
    n: int
    layout: object
    plan: object
    epsilon: float
    delta: float
    postprocess: str
    lam: float
    x_offset: np.ndarray
    x_scale: np.ndarray
    y_offset: float
    y_scale: float
    #: the row count the release's float-error inflation used (``n``, or ``n + 1`` with
    #: weights): redraws of the noise must use the same law (session-22 audit, F3)
    rounding_rows: int | None = None


def release_yty(w_squared_sum, epsilon, rng, n=None):
    """Laplace release of ``sum w_i^2`` for scaled targets ``w_i in [-1, 1]``.

    Replace-one sensitivity: ``w^2 in [0, 1]``, so replacing one row changes the sum by at
    most 1 and ``Laplace(1 / epsilon)`` noise gives ``epsilon``-DP. The computed sum differs
    from the exact sum of the computed squares by at most ``float_sum_error_bound(n, 1)``, so
    with the public ``n`` the sensitivity is ``1 + 2 * that`` (``docs/floating_point.md``), and
    the release is the exact grid release of the shared noise backend. Returns
    ``(value, scale)``.
    """
    from ..noise import LaplaceMechanism  # noqa: PLC0415
    from ..noise._grid import float_sum_error_bound  # noqa: PLC0415

    sens = 1.0
    if n is not None:
        sens += 2.0 * float_sum_error_bound(int(n), 1.0, products=True)
    mech = LaplaceMechanism(epsilon, sens, random_state=rng)
    return float(mech.randomise(float(w_squared_sum))), sens / epsilon


def _to_user_units(beta, ns):
    """Map scaled coefficients (rows of ``beta``) to ``[intercept, coef...]`` (linear map)."""
    from .._bounds import unscale_coefficients  # noqa: PLC0415

    beta = np.atleast_2d(beta)
    fi = ns.layout.fit_intercept
    o = 1 if fi else 0
    coef, intercept = unscale_coefficients(
        beta[:, o:], beta[:, 0] if fi else None, ns.x_offset, ns.x_scale, (ns.y_offset, ns.y_scale)
    )
    if not fi:
        return coef
    return np.column_stack([intercept, coef])


def _solve(ns, gram, xty):
    """The estimator's own solve; a stack ``(B, q, q)``/``(B, q)`` gives ``(B, q)``."""
    from .functional import solve_normal_equations  # noqa: PLC0415

    args = (ns.postprocess, ns.lam, ns.layout.fit_intercept)
    if np.ndim(gram) == 3 and ns.postprocess != "psd":  # only "psd" solves a stack at once
        return np.array([solve_normal_equations(g, c, *args) for g, c in zip(gram, xty)])
    return solve_normal_equations(gram, xty, *args)


def _psd_floor(gram, floor):
    w, V = np.linalg.eigh(0.5 * (gram + gram.T))
    return (V * np.maximum(w, floor)) @ V.T


def _rss(ns, beta, gram, xty, yty):
    """``w^T w - 2 b^T (Z^T w) + b^T (Z^T Z) b``: the residual sum of squares of ``b`` (rows
    of a stack ``beta (B, q)``, ``gram (B, q, q)``, ``xty (B, q)`` give ``(B,)``)."""
    sym = 0.5 * (gram + np.swapaxes(gram, -1, -2))
    quad = np.einsum("...i,...ij,...j->...", beta, sym, beta)
    return yty - 2.0 * np.einsum("...i,...i->...", beta, xty) + quad


def residual_variance(ns, beta, noise_bias=0.0):
    """Plug-in ``sigma^2`` of the scaled target: the released RSS with the privacy noise's
    bias removed, over ``n - q``, in ``[0, 1]`` (1 bounds any variable in [-1, 1]; the bound
    itself without the ``w^T w`` release)."""
    if ns.yty is None:
        return 1.0
    rss = _rss(ns, beta, ns.gram, ns.xty, ns.yty) - noise_bias
    return float(np.clip(rss / max(ns.n - len(beta), 1), 0.0, 1.0))


def sigma2_draws(ns, beta, noise_bias, n_boot, rng):
    """Plausible ``sigma^2`` given the released RSS (the flat-prior posterior of the RSS for
    the symmetric Laplace noise of ``w^T w``): ``(RSS~ - bias - L*) / (n - q)`` with ``L*`` a
    fresh Laplace draw, clipped into [0, 1]. Without the release: the bound 1."""
    if ns.yty is None:
        return np.ones(n_boot)
    rss = _rss(ns, beta, ns.gram, ns.xty, ns.yty) - noise_bias
    rss = rss - rng.laplace(0.0, ns.yty_scale, size=n_boot)
    return np.clip(rss / max(ns.n - len(beta), 1), 0.0, 1.0)


def _bootstrap_world(ns, noise_grams):
    """``(b^, G^, L)``: the released estimate and the design of the bootstrap world, the noisy
    Gram with its intercept row de-noised (:func:`denoised_intercept_row`) and the estimator's
    floor (keeps it PD), and its Cholesky factor."""
    beta = _solve(ns, ns.gram, ns.xty)
    gram = denoised_intercept_row(ns, noise_grams)
    G = _psd_floor(gram, max(ns.lam, 1e-9 * max(ns.n, 1)))
    return beta, G, np.linalg.cholesky(G)


def row_noise_power(noise_grams):
    """``m = E|noise of s~|^2``, the mean square of the intercept row's release noise, over
    the replicates' own noise draws (so it holds for every plan)."""
    return float(np.mean(np.sum(noise_grams[:, 0, 1:] ** 2, axis=1)))


def row_shrinkage(rows, m):
    """``k^2 = max(0, 1 - m / |s~|^2)`` for each intercept row ``s~`` (the last axis of
    ``rows``); 0 for a zero row.

    Empirical Bayes: with ``s ~ N(0, tau^2 I)`` and ``tau^2`` estimated by ``(|s~|^2 - m) /
    p``, the posterior mean of the true row is ``k^2 s~`` (docs/inference.md, "The intercept
    given the released row"). ``|k s~|^2 = max(0, |s~|^2 - m)`` is the positive-part estimate
    of ``|s|^2``."""
    ss = np.sum(np.square(rows), axis=-1)
    with np.errstate(divide="ignore"):
        return np.where(ss > 0, np.maximum(0.0, 1.0 - m / np.where(ss > 0, ss, 1.0)), 0.0)


def _has_row(ns):
    return bool(ns.layout.fit_intercept) and ns.gram.shape[0] >= 2


def denoised_intercept_row(ns, noise_grams):
    """The released Gram with its intercept row ``s~ = sum_i x~_i`` (the off-diagonal part of
    the scaled Gram's first row) replaced by its posterior mean ``s^ = k^2 s~``
    (:func:`row_shrinkage`): the world's design row.

    The release noise of ``s~`` would otherwise enter each replicate twice (in the world's
    design and again in the replicate's fresh draw): at n = 1e3, epsilon = 0.25, ``m ~
    1.7e4`` against a true ``|s|^2 ~ 670``. ``s^`` is also the row of
    :func:`denoised_intercept`, so the world's intercept equation is the one the interval's
    estimate solves. (Sessions 8-10 used ``k s~``; docs/inference.md has both measured.)"""
    if not _has_row(ns):
        return ns.gram
    k2 = float(row_shrinkage(ns.gram[0, 1:], row_noise_power(noise_grams)))
    gram = np.array(ns.gram, dtype=float, copy=True)
    gram[0, 1:] *= k2
    gram[1:, 0] *= k2
    return gram


def denoised_intercept(ns, beta, m):
    """The interval's estimate: the release with its intercept's predictable row-noise error
    removed, ``b~_0 = b^_0 + (s~ - s^)^T b^_s / n`` with ``s^ = k^2 s~``
    (:func:`row_shrinkage`), i.e. the intercept equation solved with the posterior mean of
    the row in place of the noisy ``s~`` (post-processing; the slopes are unchanged).

    From the intercept equation ``n b^_0 + s~^T b^_s = sum w + e_0`` the released intercept's
    error contains ``-(s~ - s)^T beta_s / n``. Given the release this is mostly a shift along
    ``s~``, not a spread (correlation -0.58 with the error at n = 1e3, epsilon = 0.25); ``b~_0``
    has ``-(s^ - s)^T beta_s / n`` instead. ``n`` is the Gram's corner (public n, or the
    released count of a weighted fit)."""
    if not _has_row(ns):
        return beta
    s = ns.gram[0, 1:]
    out = np.array(beta, dtype=float, copy=True)
    out[0] += (1.0 - float(row_shrinkage(s, m))) * float(s @ beta[1:]) / float(ns.gram[0, 0])
    return out


def conditional_intercept(ns, draws, noise_grams, truth, G):
    """Replicates of :func:`denoised_intercept`'s intercept given the released row.

    A replicate solved in the world (row ``s_w``, the row of ``G``, i.e. ``s^``) with fresh
    row noise ``E*`` has the intercept error ``A* - (s_w + E*)^T (b*_s - beta_s) / n -
    E*^T beta_s / n``, ``A* = (sum u* + e*_0) / n`` and ``beta`` the world's truth. The real
    ``b~_0`` has ``A - s^T (b^_s - beta_s) / n - (s^ - s)^T beta_s / n``. Adding ``(E*^T b*_s -
    (s^* - s_w)^T beta_s) / n``, where ``s^*`` is the replicate's own de-noised row (the
    release's rule, :func:`row_shrinkage`, applied to ``s_w + E*``), gives ``A* - s_w^T (b*_s
    - beta_s) / n - (s^* - s_w)^T beta_s / n``: the row that multiplies the slopes' error is
    held at the released ``s^`` (it is known), and the de-noising's own error is simulated
    at the world's row. With negligible noise (``s^* = s_w + E*``) the addition is only the
    second-order ``E*^T (b*_s - beta_s) / n``."""
    if not _has_row(ns):
        return draws
    E = noise_grams[:, 0, 1:]
    s_w = G[0, 1:]
    rows = s_w + E
    k2 = row_shrinkage(rows, row_noise_power(noise_grams))
    out = np.array(draws, dtype=float, copy=True)
    out[:, 0] += (
        np.einsum("bi,bi->b", E, draws[:, 1:]) - (k2[:, None] * rows - s_w) @ truth[1:]
    ) / float(ns.gram[0, 0])
    return out


def noise_draws(ns, n_boot, rng):
    """Fresh draws ``(E*, e*)`` of the release noise (the estimator's own code and plan), as
    stacks ``(n_boot, q, q)`` and ``(n_boot, q)``."""
    from .functional import privatize_statistic  # noqa: PLC0415

    # one batched call: the same mechanisms and law as n_boot single releases, without
    # building the mechanisms n_boot times (that was most of conf_int's time)
    zero = np.zeros((n_boot, ns.layout.dim))
    noise = privatize_statistic(
        zero, ns.layout, ns.plan, ns.epsilon, ns.delta, rng, n=ns.rounding_rows
    )
    # unpack is linear in T (n's corner set to 0: it carries no noise), so the layout's own
    # unpack of the unit vectors maps every replicate at once
    basis = [ns.layout.unpack(e, 0.0) for e in np.eye(ns.layout.dim)]
    grams = np.tensordot(noise, np.array([g for g, _ in basis]), axes=1)
    xtys = noise @ np.array([c for _, c in basis])
    return grams, xtys


def rss_noise_bias(ns, beta, G, noises):
    """Mean shift of the released RSS caused by the noise of ``G~`` and ``c~``.

    The RSS is computed from the noisy statistics with a ``b^`` fitted to their noise, so it
    is biased (downwards, by about ``tr(G^-1 Cov e) + E[b^T E G^-1 E b]``). We measure the
    shift in the bootstrap world without sampling error (true RSS 0 there) with the same
    noise draws and the estimator's own solve, instead of deriving each plan's moments."""
    E, e = noises
    c = G @ beta
    grams, xtys = G + E, c + e
    return float(np.mean(_rss(ns, _solve(ns, grams, xtys), grams, xtys, beta @ c)))


def _world_parts(ns, n_boot, random_state):
    """The draws of one bootstrap in stream order: the release noise ``(E*, e*)``, the main
    world ``(b^, G^, L)``, the ``sigma*`` and the normal draws ``xi``."""
    rng = check_random_state(random_state)
    noises = noise_draws(ns, n_boot, rng)
    beta, G, L = _bootstrap_world(ns, noises[0])
    bias = rss_noise_bias(ns, beta, G, noises) if ns.yty is not None else 0.0
    sigma = np.sqrt(sigma2_draws(ns, beta, bias, n_boot, rng))
    # the rows of one (n_boot, q) normal draw are the per-replicate draws in stream order
    xi = rng.standard_normal((n_boot, len(beta)))
    return noises, beta, G, L, sigma, xi


def bootstrap(ns, n_boot=DEFAULT_N_BOOT, random_state=0):
    """``(estimate, draws)`` in user units: the interval's estimate (the release, its intercept
    de-noised by :func:`denoised_intercept`) and ``n_boot`` replicates of it."""
    return _bootstrap_from(ns, *_world_parts(ns, n_boot, random_state))


def bootstrap_with_floor(ns, n_boot=DEFAULT_N_BOOT, random_state=0):
    """``(bootstrap(...), floor_bootstrap(...))`` from one set of draws: the same stream as
    :func:`bootstrap` (its result is bit for bit the same), the floor world re-using its noise,
    ``sigma*`` and normal draws."""
    parts = _world_parts(ns, n_boot, random_state)
    return _bootstrap_from(ns, *parts), floor_bootstrap(ns, parts[0], parts[4], parts[5])


#: The de-shrinking stops at this many noise units ``sqrt(q) * sigma_G`` (the unit of the PSD
#: floor; the default floor is 1.5 units): a de-noised eigenvalue below half a unit cannot be
#: told from 0, and the cap keeps the de-shrink factor at most ``lambda / guard`` (3 for the
#: default floor). docs/inference.md, "The floor on non-centred designs (session 12)".
FLOOR_GUARD = 0.5
#: The floor world is used when some de-noised eigenvalue is below the floor by at least this
#: many of its own noise sds (the replicates' spread of that eigenvalue): a released rule
#: with a margin, so that noise alone rarely switches it on where the floor does not bind.
FLOOR_MARGIN = 0.5


def eigenvalue_shift(gram, noise_grams):
    """``mean_b eig(G~ + E*_b) - eig(G~)`` (sorted eigenvalues): the privacy noise's mean
    shift of each eigenvalue, measured at the release with the replicates' own noise draws
    (every plan), i.e. a one-step bootstrap bias estimate. ``eig(G~) - shift`` is the
    de-noised (deconvolved) eigenvalue: the smallest eigenvalue of ``G + E`` is pulled down
    (about ``sum_j E[(v_j^T E v)^2] / (lambda - lambda_j)`` to second order), so it is raised."""
    w = np.linalg.eigvalsh(0.5 * (gram + gram.T))
    return np.mean(np.linalg.eigvalsh(gram + noise_grams), axis=0) - w


def _deconvolved_eigs(w, shift, lam, guard):
    """Eigenvalues of the floor-aware solve: the de-noised ``w - shift`` clipped at ``guard``
    where it is below the floor ``lam`` (the floor would bind in the truth), else the
    estimator's ``max(w, lam)``."""
    mu = w - shift
    return np.where(mu < lam, np.maximum(mu, guard), np.maximum(w, lam))


def deconvolved_solve(gram, xty, lam, shift, guard):
    """The release's solve with the floor replaced, along the directions where the de-noised
    eigenvalue is below it, by that eigenvalue (:func:`_deconvolved_eigs`): the estimate
    de-shrunk where the floor binds. A stack ``(B, q, q)``/``(B, q)`` gives ``(B, q)``."""
    w, V = np.linalg.eigh(0.5 * (gram + np.swapaxes(gram, -1, -2)))
    m = _deconvolved_eigs(w, shift, lam, guard)
    return np.einsum("...ij,...j->...i", V, np.einsum("...ji,...j->...i", V, xty) / m)


def floor_bootstrap(ns, noises, sigma, xi, guard_units=FLOOR_GUARD, margin=FLOOR_MARGIN):
    r"""The interval's second world, for releases where the PSD floor may bind in the truth;
    ``None`` where it cannot (then the interval is :func:`bias_aware_interval` of
    :func:`bootstrap` alone, as before session 12).

    The floor ``lam`` shrinks the release along each eigenvector of ``G~`` whose eigenvalue
    is below it: along such a ``v``, ``b^_v = (mu beta_v + noise_v) / max(w, lam)``, ``mu`` the
    true curvature. When ``mu < lam`` in the truth (a design not centred within its bounds,
    docs/inference.md) the release is biased by the factor ``mu / max(w, lam)`` and
    :func:`bootstrap`'s world, whose design is floored at ``lam`` and whose truth is the
    shrunk ``b^``, does not show it. Here:

    1. ``mu^ = w - shift`` (:func:`eigenvalue_shift`) de-noises each eigenvalue of ``G~``;
       ``s`` is its noise sd (the sd of that eigenvalue of ``G~ + E*`` over the replicates).
       If no ``mu^ + margin * s < lam`` (or the floor is below the guard) the floor is taken
       not to bind: None.
    2. The estimate ``t~ = deconvolved_solve(G~, c~)`` solves with ``max(mu^, guard)`` in
       place of the floor along those directions (de-shrunk); ``guard = guard_units *
       sqrt(q) * sigma_G`` caps the de-shrink factor at ``lam / guard``.
    3. The world's design is the row-de-noised ``G^`` (:func:`denoised_intercept_row`) with
       the same eigenvalue rule, so its small eigenvalue is not floored away; its truth is
       ``t~`` with its squared norm de-noised (:func:`denoised_truth`, first pass around
       ``t~``). Each replicate applies the *same* rule to its own ``(G_w + E*, c*)`` with the
       release's ``shift``, so the replicates carry the noise of ``mu^`` and the amplified
       noise of the de-shrunk estimate into their spread (a bias estimate whose noise
       enters only the centre under-covered, session 4).
    4. The replicates' roots are re-centred on ``t~`` (user units).

    :func:`conf_int` takes the hull of this world's bias-aware interval and the main one:
    the release cannot tell whether the floor binds in the truth (``mu^`` has the noise's
    spread), so both hypotheses are allowed, as the bias-aware interval allows every bias
    between none and the world's. Everything is computed from the released ``G~, c~``,
    public ``n``, ``lam``, the plan and the seeded draws: post-processing. Only the ``"psd"``
    solve has this floor (ridge: None)."""
    if ns.postprocess != "psd":
        return None
    E, e = noises
    lam = float(ns.lam)
    w = np.linalg.eigvalsh(0.5 * (ns.gram + ns.gram.T))
    guard = max(guard_units * math.sqrt(len(w)) * ns.plan.gram_std, 1e-9 * max(ns.n, 1))
    shift = eigenvalue_shift(ns.gram, E)
    spread = np.std(np.linalg.eigvalsh(ns.gram + E), axis=0)
    if guard >= lam or not np.any(w - shift + margin * spread < lam):
        return None
    estimate = deconvolved_solve(ns.gram, ns.xty, lam, shift, guard)
    gram = denoised_intercept_row(ns, E)
    wd, Vd = np.linalg.eigh(0.5 * (gram + gram.T))
    G = (Vd * _deconvolved_eigs(wd, shift, lam, guard)) @ Vd.T
    sampling = sigma[:, None] * (xi @ np.linalg.cholesky(G).T)
    first = deconvolved_solve(G + E, G @ estimate + sampling + e, lam, shift, guard)
    truth = denoised_truth(estimate, first)
    draws = deconvolved_solve(G + E, G @ truth + sampling + e, lam, shift, guard)
    return _to_user_units(estimate, ns)[0], _to_user_units(draws - truth + estimate, ns)


def interval(worlds, alpha):
    """The functional interval from :func:`_worlds`' ``(main, floor)``: the bias-aware interval of
    :func:`bootstrap`'s draws, hulled with that of :func:`floor_bootstrap` when it exists."""
    (est, draws), floor = worlds
    ci = bias_aware_interval(est, draws, alpha)
    if floor is None:
        return ci
    other = bias_aware_interval(*floor, alpha)
    return np.column_stack([np.minimum(ci[:, 0], other[:, 0]), np.maximum(ci[:, 1], other[:, 1])])


def _bootstrap_from(ns, noises, beta, G, L, sigma, xi):
    sampling = sigma[:, None] * (xi @ L.T)
    E, e = noises
    # first pass around b^: its spread estimates Var b^ for the de-biased world truth
    draws = _solve(ns, G + E, G @ beta + sampling + e)
    truth = denoised_truth(beta, draws)
    # the same draws around that truth, the intercept given the released row; their roots
    # are re-centred on the estimate (the map to user units is affine: the same shift there)
    estimate = denoised_intercept(ns, beta, row_noise_power(E))
    draws = _solve(ns, G + E, G @ truth + sampling + e)
    draws = conditional_intercept(ns, draws, E, truth, G) - truth + estimate
    return _to_user_units(estimate, ns)[0], _to_user_units(draws, ns)


def denoised_truth(beta, draws):
    """The world's truth ``k b^`` with ``k^2 = max(0, 1 - tr V / |b^|^2)``, ``V`` the
    covariance of the first-pass replicates ``draws`` (an estimate of ``Var b^``).

    Each replicate's error contains ``-(G^ + E*)^-1 E* beta_w``, the Gram noise times the
    world's truth, whose variance is quadratic in ``beta_w``. With ``beta_w = b^`` it is too
    large on average, ``E|b^|^2 = |beta|^2 + tr Var b^``; ``|k b^|^2`` is the positive-part
    estimate of ``|beta|^2``. One scalar ``k`` keeps the truth's direction. Measured at
    n = 1e3, epsilon = 0.25 (with :func:`denoised_intercept_row`): the intercept's bootstrap
    sd 1.077 -> 1.02x the real sd (docs/inference.md, "The world's design and truth at
    small n * epsilon"). From n = 1e4 on the benchmark's coverages did not change."""
    bb = float(beta @ beta)
    tr = float(np.sum(np.var(draws, axis=0, ddof=1)))
    return beta * (math.sqrt(max(0.0, 1.0 - tr / bb)) if bb > 0 else 0.0)


def poorly_determined(ns):
    """True when the privacy noise of the Gram is not small against its smallest eigenvalue:
    then the delta-method/bootstrap approximation is known to be poor (small ``n * epsilon``)."""
    w = np.linalg.eigvalsh(0.5 * (ns.gram + ns.gram.T))
    noise = ns.plan.gram_std * math.sqrt(len(w))
    return bool(w[0] <= 5.0 * noise)


def check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}.")
    return float(alpha)


def check_n_boot(n_boot):
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 20:
        raise ValueError(f"n_boot must be an integer >= 20, got {n_boot!r}.")
    return int(n_boot)


def basic_interval(estimate, draws, alpha):
    """Basic bootstrap interval ``[2 t - q_{1-a/2}, 2 t - q_{a/2}]`` per parameter."""
    lo, hi = np.quantile(draws, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return np.column_stack([2.0 * estimate - hi, 2.0 * estimate - lo])


def bias_aware_interval(estimate, draws, alpha):
    """The union over biases ``t * B`` (``0 <= t <= 1``) of the basic interval re-centred by
    ``t * B``, where ``B = mean(draws) - estimate`` is the bootstrap world's bias.

    ``t = 1`` is the basic interval (the world's bias removed), ``t = 0`` the interval of the
    same root centred on the estimate (no correction). Both ends move linearly in ``t``, so
    the union is the hull of the two: the basic interval widened by ``|B|`` on the side the
    correction moved it away from. Used where the world's bias may be spurious (the
    functional mechanism's floor binds more often in the noisy world than in the truth,
    docs/inference.md); it contains the basic interval, so it never covers less.
    """
    basic = basic_interval(estimate, draws, alpha)
    uncorrected = basic + (draws.mean(axis=0) - estimate)[:, None]
    return np.column_stack(
        [np.minimum(basic[:, 0], uncorrected[:, 0]), np.maximum(basic[:, 1], uncorrected[:, 1])]
    )


def basic_interval_within(estimate, draws, alpha, limits=None):
    """The basic interval, intersected with public ``limits`` (``(k, 2)``) when the model
    restricts the parameters to them (the KNG box)."""
    ci = basic_interval(estimate, draws, alpha)
    if limits is not None:
        ci = np.clip(ci, limits[:, :1], limits[:, 1:])
    return ci


def interval_output(estimate, draws, alpha, names=None, limits=None):
    """``conf_int``'s return value from bootstrap draws: an array, or a DataFrame indexed by
    ``names`` (when the fit saw column names). Shared by every estimator's intervals."""
    return ci_output(basic_interval_within(estimate, draws, alpha, limits), alpha, names)


def ci_output(ci, alpha, names=None):
    """``conf_int``'s return value from ``(k, 2)`` intervals: the array, or a DataFrame
    indexed by ``names``."""
    if names is None:
        return ci
    import pandas as pd  # noqa: PLC0415

    return pd.DataFrame(ci, index=names, columns=[f"{alpha / 2:g}", f"{1 - alpha / 2:g}"])


def se_output(draws, names=None):
    """``bse``'s return value: bootstrap standard deviations, a Series when ``names`` is given.
    ``draws`` of shape ``(worlds, B, params)`` (the KNG simulation at ``tau != 1/2``): the
    largest standard deviation over the worlds."""
    se = draws.std(axis=-2, ddof=1)
    if se.ndim == 2:
        se = se.max(axis=0)
    return se_values_output(se, names)


def se_values_output(se, names=None):
    """``bse``'s return value from standard errors: the array, or a Series by ``names``."""
    if names is None:
        return se
    import pandas as pd  # noqa: PLC0415

    return pd.Series(se, index=names, name="std err")


def summary_frame(estimate, draws, alpha, names, first="coef", limits=None):
    """The table of ``summary()``: estimate, std err and the basic interval per parameter."""
    ci = basic_interval_within(estimate, draws, alpha, limits)
    return summary_frame_of(estimate, draws.std(axis=0, ddof=1), ci, alpha, names, first)


def summary_frame_of(estimate, se, ci, alpha, names, first="coef"):
    """The table of ``summary()`` from estimates, standard errors and ``(k, 2)`` intervals."""
    import pandas as pd  # noqa: PLC0415

    return pd.DataFrame(
        {
            first: estimate,
            "std err": se,
            f"[{alpha / 2:g}": ci[:, 0],
            f"{1 - alpha / 2:g}]": ci[:, 1],
        },
        index=names,
    )


def warn_if_poor(ns):
    if poorly_determined(ns):
        warnings.warn(
            "The privacy noise is large against the smallest eigenvalue of the Gram matrix "
            "(small n * epsilon): the bootstrap intervals are approximate and may under-cover; "
            "see docs/inference.md.",
            UserWarning,
            stacklevel=3,
        )
    if ns.yty is None:
        warnings.warn(
            "y^T y was not released (inference_share=0): the residual variance is bounded by "
            "its worst case, so the intervals are valid but conservative.",
            UserWarning,
            stacklevel=3,
        )


class Summary:
    """Result of ``summary()``: ``str(summary)`` is the table, :meth:`as_dataframe` the frame."""

    def __init__(self, frame, info, title="Private linear regression (functional mechanism)"):
        self.frame = frame
        self.info = info
        self.title = title

    def as_dataframe(self):
        """The coefficient table as a :class:`pandas.DataFrame`."""
        return self.frame.copy()

    def __str__(self):
        left = [f"{k}: {v}" for k, v in self.info.items()]
        body = self.frame.to_string(float_format=lambda v: f"{v: .4g}")
        width = max(len(line) for line in body.splitlines() + left + [self.title])
        rule = "=" * width
        return "\n".join([rule, self.title.center(width), rule] + left + ["-" * width, body, rule])

    __repr__ = __str__


def param_names(estimator, fit_intercept):
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        names = [f"x{j + 1}" for j in range(estimator.n_features_in_)]
    names = [str(s) for s in names]
    return (["const"] if fit_intercept else []) + names


# ---------------------------------------------------------------------------------------------
# What the estimator's methods delegate to


def _released(estimator):
    from sklearn.utils.validation import check_is_fitted  # noqa: PLC0415

    check_is_fitted(estimator, "noisy_statistics_")
    ns = estimator.noisy_statistics_
    if np.ndim(ns.xty) != 1:
        raise ValueError("private inference supports a 1-D target only (one output).")
    return ns


def _worlds(estimator, n_boot):
    """``(ns, (main, floor))``: the release and its two worlds' ``(estimate, draws)``
    (:func:`bootstrap_with_floor`; ``floor`` None where the floor cannot bind), computed once
    per release and ``n_boot`` and cached on the estimator."""
    ns = _released(estimator)
    n_boot = check_n_boot(n_boot)
    cache = getattr(estimator, "_inference_cache", None)
    if cache is None or cache[0] is not ns or cache[1] != n_boot:
        # seeded by the release: deterministic for one release, independent across releases
        seed = release_seed(*released_values(ns))
        cache = (ns, n_boot, *bootstrap_with_floor(ns, n_boot, random_state=seed))
        estimator._inference_cache = cache
    return ns, cache[2:]


def _draws(estimator, n_boot):
    """``(ns, (estimate, draws))`` of the main world (:func:`_worlds`)."""
    ns, (main, _) = _worlds(estimator, n_boot)
    return ns, main


def released_values(ns):
    """The released quantities of a functional release that seed its bootstrap (all public)."""
    return (ns.gram, ns.xty, ns.yty, ns.n, ns.epsilon, ns.delta, ns.lam)


def _framed(estimator, values, columns):
    """A DataFrame when the estimator saw column names, else the array."""
    if getattr(estimator, "feature_names_in_", None) is None:
        return values
    import pandas as pd  # noqa: PLC0415

    names = param_names(estimator, estimator.noisy_statistics_.layout.fit_intercept)
    return pd.DataFrame(values, index=names, columns=columns)


def conf_int(estimator, alpha=0.05, n_boot=DEFAULT_N_BOOT):
    alpha = check_alpha(alpha)
    ns, worlds = _worlds(estimator, n_boot)
    warn_if_poor(ns)
    ci = interval(worlds, alpha)
    return _framed(estimator, ci, [f"{alpha / 2:g}", f"{1 - alpha / 2:g}"])


def standard_errors(worlds):
    """The functional standard errors from :func:`_worlds`' ``(main, floor)``: the main world's
    replicate sds, or, where :func:`floor_bootstrap`'s world exists, the larger of the two
    worlds' sds per parameter. The interval is then the hull of both worlds' intervals (either
    hypothesis about the floor is allowed), so its standard error is the larger one: a
    ``+-1.96`` interval from ``bse`` is not falsely narrower than ``conf_int`` where the floor
    may bind (post-processing of the same draws)."""
    (_, draws), floor = worlds
    se = draws.std(axis=0, ddof=1)
    if floor is None:
        return se
    return np.maximum(se, floor[1].std(axis=0, ddof=1))


def bse(estimator, n_boot=DEFAULT_N_BOOT):
    ns, worlds = _worlds(estimator, n_boot)
    warn_if_poor(ns)
    se = standard_errors(worlds)
    if getattr(estimator, "feature_names_in_", None) is None:
        return se
    import pandas as pd  # noqa: PLC0415

    return pd.Series(se, index=param_names(estimator, ns.layout.fit_intercept), name="std err")


def summary(estimator, alpha=0.05, n_boot=DEFAULT_N_BOOT):
    import pandas as pd  # noqa: PLC0415

    alpha = check_alpha(alpha)
    ns, worlds = _worlds(estimator, n_boot)
    (est, _), floor = worlds
    warn_if_poor(ns)
    ci = interval(worlds, alpha)
    # coef: the released estimates (what the model predicts with); the intercept's std err
    # and interval are those of the de-noised intercept (denoised_intercept), named below
    released = np.r_[np.ravel(estimator.intercept_)[:1], np.ravel(estimator.coef_)]
    fi = ns.layout.fit_intercept
    frame = pd.DataFrame(
        {
            "coef": released if fi else np.ravel(estimator.coef_),
            "std err": standard_errors(worlds),
            f"[{alpha / 2:g}": ci[:, 0],
            f"{1 - alpha / 2:g}]": ci[:, 1],
        },
        index=param_names(estimator, fi),
    )
    floor_info = {}
    if floor is not None:
        # the interval is the hull with floor_bootstrap's, the std err the larger world's
        floor_info["PSD floor"] = "may bind: interval and std err widened (second world)"
    info_const = {}
    if fi and len(est) > 1:
        info_const["const"] = f"std err, interval of the de-noised intercept {est[0]:.4g}"
    norm = ns.plan.norm if isinstance(ns.plan.norm, str) else "hull"
    eps_yty = float(estimator.epsilon) - ns.epsilon if ns.yty is not None else 0.0
    info = {
        "n": ns.n,
        "epsilon spent": f"{float(estimator.epsilon):g} (statistics {ns.epsilon:g}, "
        f"y^T y {eps_yty:g})",
        "delta spent": f"{ns.delta:g}",
        "mechanism": f"{ns.plan.mechanism} ({ns.plan.description})",
        "norm": norm,
        "interval": f"bias-aware parametric bootstrap, {n_boot} draws (no extra budget)",
        **info_const,
        **floor_info,
    }
    return Summary(frame, info)
