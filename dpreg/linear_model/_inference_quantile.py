r"""Private inference for :class:`~dpreg.KNGQuantileRegressor`.

Scaled units throughout (``docs/kng_quantile_regression.md``): design rows ``w = (1, z)``
with ``z in [-1, 1]^p``, parameters ``theta`` in units of ``y``. The released ``theta~`` is one
exact draw from ``f(theta) ∝ exp(-s_K ||g(theta)||_K)`` on the public box, with
``g(theta) = sum_i w_i (1{y_i <= w_i^T theta} - tau)`` and ``s_K = epsilon / (2 Delta)``.

Around the check-loss minimiser ``theta^``, ``g(theta) ~= D (theta - theta^)`` with
``D = sum_i f_i(0) w_i w_i^T`` (``f_i`` the error density at its ``tau``-quantile), so the
release is ``theta~ ~= theta^ + D^{-1} V`` with ``V`` a K-norm draw of density
``∝ exp(-s_K ||v||_K)`` (known law, independent of the data). The sampling error is the
classical one, ``theta^ - theta0 ~ N(0, tau (1 - tau) D^{-1} G D^{-1})``, ``G = sum_i w_i w_i^T``
(Koenker 2005, section 3.2). Under the location-shift model (errors independent of ``x``)
``D = G / s`` with the sparsity ``s = 1 / f(0)``, so

    theta~ - theta0 ~= s G^{-1} (xi + V),   xi ~ N(0, tau (1 - tau) G).

``G`` and ``s`` depend on the data and are released once, privately and charged
(:func:`release_curvature`): ``G`` by the linf K-norm mechanism of the logistic Hessian
(:func:`~dpreg.linear_model._inference_logistic.release_symmetric`, entry bound 1), ``s`` by
one private quantile of the absolute residuals at the released point: the radius ``t`` of
the window ``|r| <= t`` that holds a public share ``L`` of them, so ``s ~= 2 t / L`` (a
nearest-neighbour estimate of the error density at its ``tau``-quantile, the location-shift
form of Powell's 1991 kernel estimate, with ``L`` from the bandwidth of Hall & Sheather 1988).
The bootstrap then redraws the uncertainty of both releases. Derivation, privacy proof and
assumptions: ``docs/inference.md``.

Where the released check of the linearisation fails (small n * epsilon), ``method="auto"``
uses :func:`simulate` instead: the fit's own exact sampler run on synthetic data matched to
the released Gram matrix and sparsity (post-processing; ``docs/inference.md``, "The
simulation bootstrap at small n·ε"). At ``tau != 1/2`` it runs two such worlds, at the
released sparsity and at a quarter of it, and takes the hull of their windows
(:func:`world_sparsities`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm as _normal

from .._random import release_seed
from .._validation import (
    check_epsilon,
    check_fit_rows,
    check_random_state,
    check_release_epsilon,
    shares_within,
    warn_if_released_again,
)
from ._inference import (
    Summary,
    check_alpha,
    check_n_boot,
    interval_output,
    param_names,
    se_output,
    summary_frame,
)
from ._inference_logistic import hessian_draws, poorly_determined, release_symmetric

DEFAULT_N_BOOT = 2000
#: Share of the curvature budget spent on the Gram matrix; the rest goes to the one
#: residual quantile of the sparsity. At n = 1e3, epsilon = 1 (150 data sets, curvature 0.4
#: epsilon, the former two-quantile sparsity) 0.7 gave width ratios 1.11-1.14 against
#: 1.21-1.26 for 0.6; the Gram matrix has five unknown entries where the sparsity has one
#: number, so it needs the larger part.
GRAM_SHARE = 0.7
#: The window's share of the residuals is ``2 (h + RANK_WIDEN k / n)``: RANK_WIDEN mean rank
#: errors (plus the Hall-Sheather bandwidth) on each side. A wider window shrinks the rank
#: noise's share of the count (the bias it adds over-states the sparsity of an error density
#: with its mode at the tau-quantile: wider, not narrower, intervals). See docs/inference.md.
RANK_WIDEN = 2.0
#: The sparsity's denominator is floored at this fraction of its nominal value in the
#: bootstrap (a draw below it would mean the released count is almost all rank noise).
DENOMINATOR_FLOOR = 0.25
#: Floor of the eigenvalues of the redrawn Gram matrix (one observation's worth).
GRAM_FLOOR = 1.0
#: Warn when the KNG noise moves quantile levels by more than this (the linearisation of the
#: gradient around theta^ is then poor).
LINEAR_LIMIT = 0.1
_RANGE = 1e9  # public candidate range of the residuals without bounds_y
#: Synthetic fits of the simulation bootstrap (``method="simulate"``; one exact KNG draw on
#: n synthetic rows each, about 0.07 CPU-s at n = 1e3, epsilon = 0.15).
DEFAULT_N_SIM = 200
METHODS = ("auto", "linear", "simulate")
#: Candidate lower tail shares ``p`` of :func:`shortest_interval` (evenly spaced on
#: ``[0, alpha]``; an odd number so that ``alpha / 2``, the basic interval, is one).
SHORTEST_GRID = 201


@dataclass
class KNGRelease:
    """Public facts of one KNG fit that inference needs (stored by ``fit``).

    ``theta`` is the released draw in scaled units (the very array: it identifies the fit),
    ``lower``/``upper`` the feature bounds used, ``mid``/``half`` the affine scaling,
    ``active`` the non-constant features, ``ball``/``scale`` the K-norm law of ``V``
    (density ``∝ exp(-scale ||v||_K)``), ``box`` the parameter domain.
    """

    theta: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    mid: np.ndarray
    half: np.ndarray
    active: np.ndarray
    ball: object
    scale: float
    box: tuple
    n: int
    tau: float
    fit_intercept: bool
    y_bounds: tuple | None


@dataclass
class CurvatureRelease:
    """The private Gram matrix and sparsity window radius (:func:`release_curvature`)."""

    gram: object  # a HessianRelease of G = W^T W
    level: float  # public share L of the residuals inside the window |r| <= radius
    radius: float  # the released L-quantile of |r|
    bandwidth: float
    rank_scale: float  # Laplace scale (in ranks) of the quantile's rank error
    epsilon: float
    n: int
    theta: np.ndarray


def hall_sheather(n, tau, alpha=0.05):
    """Hall & Sheather's (1988) bandwidth on the probability scale (public: n and tau only).

    ``h = n^(-1/3) z^(2/3) (1.5 phi(q)^2 / (2 q^2 + 1))^(1/3)``, ``q = Phi^-1(tau)``,
    ``z = Phi^-1(1 - alpha / 2)``: the rate that balances the bias and the variance of the
    difference-quotient sparsity estimate for interval coverage.
    """
    q = _normal.ppf(tau)
    z = _normal.ppf(1.0 - alpha / 2.0)
    shape = 1.5 * _normal.pdf(q) ** 2 / (2.0 * q * q + 1.0)
    return float(n ** (-1 / 3) * z ** (2 / 3) * shape ** (1 / 3))


def window_level(n, tau, epsilon_sparsity):
    """The public share ``L = 2 (h + RANK_WIDEN k / n)`` of the residuals in the sparsity's
    window (``h`` the Hall-Sheather bandwidth, ``k = 2 / epsilon_sparsity`` the mean absolute
    rank error of the private quantile: widening by a multiple of it keeps the rank noise a
    minor part of the count), at most ``1.5 min(tau, 1 - tau)`` so that each half of the
    window stays well inside its side of the ``tau``-quantile. Returns ``(L, h, k)``."""
    h = hall_sheather(n, tau)
    k = 2.0 / epsilon_sparsity
    level = min(2.0 * (h + RANK_WIDEN * k / n), 1.5 * min(tau, 1.0 - tau))
    return float(level), h, k


def kng_release(theta, bounds, scaling, mech, n, tau, fit_intercept, y_bounds):
    """The :class:`KNGRelease` record ``fit`` stores (no data: public facts only)."""
    lower, upper = bounds
    mid, half, active = scaling
    return KNGRelease(
        theta=theta,
        lower=np.asarray(lower, float),
        upper=np.asarray(upper, float),
        mid=np.asarray(mid, float),
        half=np.asarray(half, float),
        active=np.asarray(active, bool),
        ball=None if mech is None else mech.ball,
        scale=float("nan") if mech is None else float(mech.scale),
        box=(None, None) if mech is None else (mech.lower.copy(), mech.upper.copy()),
        n=int(n),
        tau=float(tau),
        fit_intercept=bool(fit_intercept),
        y_bounds=y_bounds,
    )


def _fitted(estimator):
    from sklearn.utils.validation import check_is_fitted  # noqa: PLC0415

    check_is_fitted(estimator, "kng_release_")
    if getattr(estimator, "sample_weighted_", False):  # checked before anything is spent
        raise NotImplementedError(
            "release_curvature/conf_int are derived for unweighted fits only; this model was "
            "fitted with sample_weight."
        )
    rel = estimator.kng_release_
    if rel.ball is None:
        raise ValueError("the model has no parameter: there is nothing to make intervals for.")
    return rel


def _residual_range(fit):
    """A public interval that contains every residual quantile we need.

    With public ``bounds_y = (a, b)`` and ``theta~`` public, a residual of a ``y`` inside the
    bounds lies in ``[a - max_w w^T theta~, b - min_w w^T theta~]`` (``w`` over the design
    box); clipping residuals into it changes no quantile of those inside. Without bounds:
    ``(-1e9, 1e9)`` and the asinh base measure."""
    if fit.y_bounds is None:
        return -_RANGE, _RANGE, "asinh"
    a, b = fit.y_bounds
    theta = np.asarray(fit.theta, float)
    o = int(fit.fit_intercept)
    centre = theta[0] if o else 0.0
    reach = float(np.sum(np.abs(theta[o:])))
    return float(a - centre - reach), float(b - centre + reach), "uniform"


def release_curvature(estimator, X, y, epsilon, accountant=None, random_state=None):
    """Release ``G = W^T W`` and the sparsity's window radius (epsilon-DP in total).

    Validates everything (fitted model, epsilon, X, y, the public n) and reserves ``epsilon``
    from the accountant (the estimator's own when ``accountant`` is None) before it reads the
    data. ``GRAM_SHARE * epsilon`` goes to ``G`` (linf K-norm, sensitivity 1; with an
    intercept the corner ``G[0, 0] = n`` is public and not noised, ``release_symmetric``), the
    rest to one private quantile, at the public level ``L`` (:func:`window_level`), of the
    absolute residuals ``|y_i - w_i^T theta~|`` at the released (public) ``theta~`` (exact KNG
    quantile, sensitivity 1: replacing a row changes one residual, so the count
    ``#{i : |r_i| <= t}`` moves by at most 1 for every ``t``); basic composition.
    ``random_state`` defaults to fresh entropy.
    """
    from sklearn.utils.validation import validate_data  # noqa: PLC0415

    from ..accounting import check_accountant  # noqa: PLC0415
    from ..tools._quantile import private_quantile_draws  # noqa: PLC0415
    from ._quantile_core import design, scale_features  # noqa: PLC0415

    fit = _fitted(estimator)
    epsilon = check_epsilon(epsilon)
    accountant = check_accountant(estimator.accountant if accountant is None else accountant)
    accountant.check(epsilon, 0.0)
    X, y = validate_data(estimator, X, y, reset=False, y_numeric=True, dtype=np.float64)
    n = X.shape[0]
    check_fit_rows(fit.n, n, "release_curvature")
    epsilon = check_release_epsilon(epsilon)
    eps_gram, eps_s = shares_within(
        [GRAM_SHARE * epsilon, epsilon - GRAM_SHARE * epsilon], epsilon, lower=1
    ).tolist()  # exactly within epsilon
    level, h, k = window_level(n, fit.tau, eps_s)
    lo_r, hi_r, measure = _residual_range(fit)
    reach = max(abs(lo_r), abs(hi_r))  # public: every clipped |residual| is in [0, reach]
    rng = check_random_state(random_state)
    previous = getattr(estimator, "curvature_release_", None)
    warn_if_released_again(previous, fit.theta, epsilon, "curvature")
    accountant.spend(epsilon, 0.0)  # reserve before computing anything from the data
    Z, _, _ = scale_features(X, fit.lower, fit.upper, fit.fit_intercept)
    W = design(Z[:, fit.active], fit.fit_intercept)
    # with an intercept G[0, 0] = sum_i 1 = n on every data set: public, so not noised
    corner = float(n) if fit.fit_intercept else None
    gram = release_symmetric(W.T @ W, 1.0, n, eps_gram, rng, public_corner=corner)
    with np.errstate(over="ignore", invalid="ignore"):
        resid = np.abs(np.clip(y - W @ fit.theta, lo_r, hi_r))  # public range: finite
    t = private_quantile_draws(resid, [level], eps_s, 0.0, reach, measure, 1.0, rng)[0]
    estimator.curvature_release_ = CurvatureRelease(
        gram=gram,
        level=level,
        radius=float(t),
        bandwidth=h,
        rank_scale=k,
        epsilon=epsilon,
        n=n,
        theta=fit.theta,
    )
    return estimator


def _release(estimator):
    fit = _fitted(estimator)
    rel = getattr(estimator, "curvature_release_", None)
    if rel is None or rel.theta is not fit.theta:
        raise ValueError(
            "no curvature release for this fit: call release_curvature(X, y, epsilon) after "
            "fit (it spends epsilon; the intervals need the design Gram and the sparsity)."
        )
    return fit, rel


def public_gram(fit, G):
    """With an intercept, ``G[0, 0] = n`` is public: put it back (post-processing). The release
    holds it exactly, but a PSD projection of a posterior draw moves it."""
    if fit.fit_intercept:
        G = np.array(G, dtype=float, copy=True)
        G[..., 0, 0] = fit.n
    return G


def gram_draws(fit, rel, n_boot, rng):
    """Plausible Gram matrices given the release: ``G~ - E*`` (``E*`` a fresh draw of the
    release noise; the flat-prior posterior of ``G`` for a symmetric noise law), the public
    corner restored, projected onto the PSD cone, eigenvalues floored at ``GRAM_FLOOR``.
    Returns the eigen-decompositions ``(lam, Q)``."""
    G = hessian_draws(rel.gram, n_boot, rng)  # PSD(G~ - E*)
    lam, Q = np.linalg.eigh(public_gram(fit, G))
    return np.maximum(lam, GRAM_FLOOR), Q


def box_ranges(fit):
    """``(n_params, 2)``: the range of every user-unit parameter over the public box (the
    model assumes the truth lies in it; interval arithmetic through the linear map)."""
    lo, hi = fit.box
    o = int(fit.fit_intercept)
    ranges = np.zeros((o + fit.active.size, 2))
    h = fit.half[fit.active]
    ranges[o:][fit.active] = np.column_stack([lo[o:] / h, hi[o:] / h])
    if o:
        m = fit.mid[fit.active]
        terms = np.column_stack([lo[o:] * m / h, hi[o:] * m / h])
        ranges[0] = [lo[0] - terms.max(axis=1).sum(), hi[0] - terms.min(axis=1).sum()]
    return ranges


def sparsity_draws(rel, n_boot, rng):
    """Plausible sparsities given the released window radius.

    The share of the residuals inside ``|r| <= t`` is about ``2 t / s``, and the release
    holds ``(L n + e + b n)`` of them: ``e`` the rank error of the private quantile (about
    Laplace with scale ``k`` ranks) and ``b`` the sampling error of the empirical share
    (about ``N(0, L (1 - L) / n)``). So ``s ~= 2 t / (L + e / n + b)``; each replicate
    divides by a fresh draw of the bracket (floored at a quarter of ``L``), so the noise of
    the release widens the interval."""
    n, level = rel.n, float(rel.level)
    e = rng.laplace(0.0, rel.rank_scale, size=n_boot)
    b = rng.standard_normal(n_boot) * math.sqrt(level * (1.0 - level) / n)
    denom = np.maximum(level + e / n + b, DENOMINATOR_FLOOR * level)
    return 2.0 * max(float(rel.radius), 0.0) / denom


def bootstrap(estimator, n_boot=DEFAULT_N_BOOT, random_state=0):
    """``(estimate, draws)`` in user units, intercept first (module docstring)."""
    from ..noise._exact import float_knorm_sample  # noqa: PLC0415

    fit, rel = _release(estimator)
    rng = check_random_state(random_state)
    theta = np.asarray(fit.theta, float)
    d = theta.size
    lam, Q = gram_draws(fit, rel, n_boot, rng)
    s = sparsity_draws(rel, n_boot, rng)
    # sampling part: s G^{-1/2} sqrt(tau (1 - tau)) z; privacy part: s G^{-1} V
    z = rng.standard_normal((n_boot, d)) * math.sqrt(fit.tau * (1.0 - fit.tau)) / np.sqrt(lam)
    V = float_knorm_sample(fit.ball, 1.0 / fit.scale, n_boot, rng)
    VQ = np.einsum("bji,bj->bi", Q, V) / lam  # Q^T V / lam
    step = np.einsum("bij,bj->bi", Q, z + VQ) * s[:, None]
    return _user_units(fit, theta[None, :])[0], _user_units(fit, theta + step)


def _user_units(fit, thetas):
    """Scaled parameters (rows) to ``[intercept, coef...]`` in the user's units (linear)."""
    o = int(fit.fit_intercept)
    coef = np.zeros((thetas.shape[0], fit.active.size))
    coef[:, fit.active] = thetas[:, o:] / fit.half[fit.active]
    if not o:
        return coef
    return np.column_stack([thetas[:, 0] - coef @ fit.mid, coef])


def linear_law_poor(fit, rel):
    """True when the KNG noise moves quantile levels by more than ``LINEAR_LIMIT`` of their
    room at level 1/2: ``(d + 1) / (s_K lambda_min(G~)) > 2 min(tau, 1 - tau) LINEAR_LIMIT``
    (the mean K-norm radius ``(d + 1) / s_K`` against the smallest curvature of the released
    Gram matrix: the levels the noise moves the fit by). Released and public quantities only,
    so a rule that switches on it is post-processing.

    **Why the level's room.** The gradient's indicators can move the level from ``tau`` by at
    most ``tau`` down and ``1 - tau`` up before they saturate, so the linearisation holds
    while the move is small against ``min(tau, 1 - tau)``, not against 1/2. At ``tau = 1/2``
    this is the former rule, bit for bit. Session 15 measured the former, level-free rule at
    ``tau = 0.9``, n = 1e3, epsilon = 1: it linearised 193 of 200 releases (moves 0.07-0.11)
    and the intervals covered 0.36 / 0.54 / 0.51 (docs/inference.md, "The linearised
    interval at tau != 1/2")."""
    room = 2.0 * min(float(fit.tau), 1.0 - float(fit.tau))
    return level_move(fit, rel) > room * LINEAR_LIMIT


def level_move(fit, rel):
    """``(d + 1) / (s_K lambda_min(G~))``: the quantile levels the KNG noise moves the fit by
    (:func:`linear_law_poor`); released and public quantities only."""
    lam = float(np.linalg.eigvalsh(public_gram(fit, rel.gram.hessian))[0])
    return (len(fit.theta) + 1) / fit.scale / max(lam, GRAM_FLOOR)


def warnings_for(fit, rel, simulated=False):
    """Released-quantity checks of the approximations (small n * epsilon). With
    ``simulated`` (the simulation bootstrap, which does not linearise) the linearisation
    check is replaced by a note of the simulation's model assumptions."""
    out = []
    if poorly_determined(rel.gram):
        out.append("the Gram matrix's privacy noise is large against its smallest eigenvalue")
    # the count's rank noise (Laplace: sd sqrt(2) k) against the window's share L n
    if math.sqrt(2.0) * rel.rank_scale / rel.n > 0.25 * rel.level:
        out.append("the residual quantile's rank noise is a large part of its window")
    if linear_law_poor(fit, rel):
        out.append(
            "the KNG noise is not small against the linear range of the gradient (the "
            "intervals simulate the exact sampler on synthetic data: normal errors with the "
            "released sparsity, a design matched to the released Gram matrix; errors far "
            "from normal, peaked like the Laplace law or skewed, can leave them too narrow; "
            + _edge_note(fit.tau)
            + ")"
            if simulated
            else "the KNG noise is not small against the linear range of the gradient"
        )
    return out


def _edge_note(tau):
    """What the simulated interval does when the release lies near the parameter box's edge
    (:func:`simulated_interval`), and at a level other than 1/2 what was measured
    (docs/inference.md, "At tau != 1/2: the mirrored world")."""
    note = (
        "when the release lies near an edge of the parameter box, e.g. when a feature sits "
        "off-centre in its public bounds, they widen towards the whole box; public bounds "
        "that centre each column narrow them"
    )
    if mirrors(tau):
        note += (
            "; at a quantile level other than 1/2 the released sparsity is uncertain and "
            "moves the intercept's interval: it takes the hull over two sparsities, measured "
            "at levels 1/4 and 0.9 at n * epsilon = 250 (intercept 0.95-1.00) and on a few "
            "dozen releases at 1000 only, so it may under-cover elsewhere"
        )
    return note


def simulation_params(estimator, fit):
    """The public settings of the synthetic fits of :func:`simulate` (no data).

    The estimator's own parameters, except: the feature bounds are the fit's (public) box,
    the parameter domain is passed as ``coef_bounds`` equal to the fit's box (so it does not
    depend on the synthetic ``y``), the norm is the one the fit used, no progress bar.
    Released (``"private"``) bounds are refused: their fit split epsilon with the bounds
    release, which the synthetic fits would not reproduce (a ``ValueError``; nothing is
    spent by inference)."""
    for name in ("bounds_X", "bounds_y"):
        if isinstance(getattr(estimator, name), str):
            raise ValueError(
                f"method='simulate' needs public bounds; this fit released {name} "
                "('private'). Use method='linear'."
            )
    o = int(fit.fit_intercept)
    keep = np.concatenate([np.ones(o, dtype=bool), fit.active])
    lo_all, hi_all = np.full(keep.size, -1.0), np.full(keep.size, 1.0)
    lo_all[keep], hi_all[keep] = fit.box
    params = estimator.get_params(deep=False)
    params.update(
        bounds_X=(fit.lower.copy(), fit.upper.copy()),
        bounds_y=None,
        coef_bounds=(lo_all, hi_all),
        norm=estimator.norm_,
        progress_bar=False,
    )
    return params


def synthetic_data(fit, gram, sparsity, rng, mirror=False):
    """One synthetic data set ``(X, y)`` in user units, built from public values only.

    Design: with ``M = gram / n`` (``M = [[1, m^T], [m, S]]`` with an intercept, ``S``
    without, ``m = 0``), the scaled rows are ``z = clip(m + A u, -1, 1)``, ``A A^T`` the PSD
    part of ``S - m m^T`` and ``u`` iid uniform on ``[-sqrt 3, sqrt 3]`` (mean 0, variance 1):
    the Gram matrix of the rows is ``gram`` up to sampling error and the clipping to the
    public box (exact for a uniform design on the box, ``S = I / 3``). Errors: normal, shifted
    so that their ``tau``-quantile is 0, with scale ``sigma = sparsity * phi(Phi^-1(tau))``,
    i.e. density ``1 / sparsity`` at the quantile. ``y = w^T theta~ + e`` in scaled units (the
    units of ``y``), and ``x = mid + half z`` for the active features (``mid`` otherwise).
    ``mirror``: the errors negated, ``y = w^T theta~ - e`` (their ``(1 - tau)``-quantile is 0:
    the mirrored world of :func:`simulate`)."""
    n = fit.n
    o = int(fit.fit_intercept)
    p = int(fit.active.sum())
    M = np.asarray(gram, float) / n
    m = M[0, 1:] if o else np.zeros(p)
    C = M[o:, o:] - np.outer(m, m)
    lam, Q = np.linalg.eigh((C + C.T) / 2.0)
    A = Q * np.sqrt(np.maximum(lam, 0.0))
    u = rng.uniform(-math.sqrt(3.0), math.sqrt(3.0), size=(n, p))
    Z = np.clip(m + u @ A.T, -1.0, 1.0)
    q = _normal.ppf(fit.tau)
    e = float(sparsity) * _normal.pdf(q) * (rng.standard_normal(n) - q)
    W = np.hstack([np.ones((n, o)), Z])
    y = W @ np.asarray(fit.theta, float) + (-e if mirror else e)
    X = np.tile(fit.mid, (n, 1))
    X[:, fit.active] = fit.mid[fit.active] + fit.half[fit.active] * Z
    return X, y


def simulate(estimator, n_sim=DEFAULT_N_SIM, random_state=0, mirror=None, sparsity=None, desc=None):
    r"""``(estimate, draws)`` in user units: the simulation (parametric) bootstrap.

    Pure post-processing: it reads the released ``theta~``, the released Gram matrix and
    sparsity radius, the public box, ``n`` and the estimator's public settings, never the
    data. Each replicate ``b``:

    1. builds a synthetic data set whose design has the released Gram matrix (its PSD
       part, eigenvalues floored at ``GRAM_FLOOR``, the public corner ``n`` restored) and
       whose normal errors have density ``1 / s^`` at their ``tau``-quantile, ``s^ = 2 t~ / L``
       the released sparsity, around the line ``theta~`` (:func:`synthetic_data`). (The
       normal law whose window ``|e| <= t~`` holds exactly the share ``L``, 6 % narrower at
       n = 1e3, epsilon = 0.25, made the intervals 4-9 % wider there: a smaller error scale
       shrinks the core of the KNG law against its plateau; ``docs/inference.md``, session
       11.)
    2. fits a fresh estimator with the fit's own public settings (:func:`simulation_params`)
       and a seed from this stream: the very code path and exact sampler of the release,
       spending from a throw-away unlimited accountant (never the user's).

    **The interval.** Under the location-shift model, with ``e_i = y_i - w_i^T theta0`` the
    KNG density of ``delta = theta - theta0`` is ``∝ exp(-s_K || sum_i w_i (1{e_i <= w_i^T
    delta} - tau) ||_K)``: it does not depend on ``theta0`` except through the box. So
    ``theta~ - theta0`` is a pivot (its law is that of ``theta* - theta~`` when the
    synthetic design and errors have the data's law), and any interval ``[theta~ - u,
    theta~ - l]`` with ``[l, u]`` holding ``1 - alpha`` of the draws' roots inverts it without
    linearising the gradient: this is what fails at small n * epsilon, where the KNG noise
    reaches the flat, saturated part of the gradient. ``conf_int`` takes the shortest such
    ``[l, u]`` (:func:`shortest_interval`; session 10 took the equal-tailed one, the basic
    interval): the law is a narrow core and a flat plateau over the box, and the shortest
    window leaves a thin one-sided plateau out instead of cutting into it. Near the box edge
    the pivot breaks (the box truncates the law differently at ``theta~`` and ``theta0``):
    ``conf_int`` therefore takes the shortest window of the draws themselves instead, at
    ``tau != 1/2`` of the mirrored world's draws (errors negated, fits at level ``1 - tau``;
    :func:`simulated_interval`, :func:`mirrors`, session 13), intersected with the box; and
    at ``tau != 1/2`` the hull of two such worlds' windows, whose sparsities span the
    released one's uncertainty (:func:`simulate_worlds`, :func:`world_sparsities`, session
    14). ``sparsity``: the world's sparsity (default: the released one); ``desc``: the
    progress bar's label.
    **Assumed:** normal errors (the shape away
    from the quantile matters once the noise reaches it), a design with the released Gram
    matrix (only its first two moments are matched), the location-shift model. The released
    ``G~`` and ``t~`` are plugged in, not redrawn: redrawing ``G`` as the linearised
    bootstrap does (``G~ - E*``, double the release noise) gave near-singular synthetic
    designs (smallest eigenvalue down to 14 against about 330) whose laws were 1.1-2.3x
    wider in sd (8 data sets at n = 1e3, epsilon = 0.25); the noise of the releases is thus
    not propagated. ``docs/inference.md`` ("The simulation bootstrap", sessions 10 and 11)
    has the measurements.
    """
    fit, rel = _release(estimator)
    rng = check_random_state(random_state)
    lam, Q = np.linalg.eigh(public_gram(fit, rel.gram.hessian))
    gram = (Q * np.maximum(lam, GRAM_FLOOR)) @ Q.T
    s = world_sparsities(fit, rel)[0] if sparsity is None else float(sparsity)
    grams, sparsities = np.repeat(gram[None], n_sim, 0), np.full(n_sim, s)
    mirror = mirrors(fit.tau) if mirror is None else bool(mirror)  # a diagnosis may force it
    return simulate_from(estimator, grams, sparsities, rng, mirror=mirror, desc=desc)


#: At ``tau != 1/2`` the simulation also draws a world whose sparsity is the released one
#: divided by this (:func:`world_sparsities`; docs/inference.md, "The sparsity's span at
#: tau != 1/2").
SPARSITY_SPAN = 4.0


def world_sparsities(fit, rel):
    """The sparsities of the simulated worlds (public values only): the released ``s^ = 2
    t~ / L``, and at ``tau != 1/2`` also ``s^ / SPARSITY_SPAN``.

    **Why two at tau != 1/2.** At small ``n * epsilon`` the released radius ``t~`` is the
    window of the residuals at the noisy ``theta~``, not at ``theta0``, so ``s^`` carries the
    release's own error (measured at tau = 1/4, n * epsilon = 250: ``s^`` from 0.55 to 11
    times the true sparsity). At ``tau = 1/2`` the world's law is symmetric about ``theta~``
    for every sparsity, so a wrong ``s^`` changes the width only. At ``tau != 1/2`` the
    normal errors' offset from their quantile scales with ``sigma = s phi(Phi^-1(tau))``, so
    ``s`` moves the *location* of the world's intercept law: with ``s^`` several times too
    large the intercept's window missed on one side (0.825 / 0.900, every miss at ``s^`` 4.9-11
    times the truth), with the true ``s`` it covered (1.000 / 0.950); the hull of
    :func:`simulate_worlds` covers 0.975 / 0.950 (40 / 60 releases). No released value
    pins ``s`` down better there (the radius mostly measures ``theta~``'s own error), so
    :func:`simulate_worlds` treats ``s`` as a nuisance parameter in the range ``[s^ / 4,
    s^]`` and the interval is the hull of the two ends' windows
    (:func:`simulated_interval`). Public and released values only: post-processing."""
    s = 2.0 * max(float(rel.radius), 0.0) / float(rel.level)
    return (s, s / SPARSITY_SPAN) if mirrors(fit.tau) else (s,)


def simulate_worlds(estimator, n_sim=DEFAULT_N_SIM, random_state=0):
    """``(estimate, draws)`` with ``draws`` of shape ``(worlds, n_sim, params)``: one
    :func:`simulate` per sparsity of :func:`world_sparsities` (one world at ``tau = 1/2``,
    exactly :func:`simulate`'s draws; two at ``tau != 1/2``). An integer ``random_state``
    seeds every world alike (common random numbers: the worlds differ by their sparsity
    only)."""
    fit, rel = _release(estimator)
    worlds = world_sparsities(fit, rel)
    # one bar per world, labelled so that the second bar does not look like a restart
    labels = (
        [None]
        if len(worlds) == 1
        else [f"world {k + 1} of {len(worlds)}" for k in range(len(worlds))]
    )
    out = [
        simulate(estimator, n_sim, random_state=random_state, sparsity=s, desc=label)
        for s, label in zip(worlds, labels, strict=True)
    ]
    return out[0][0], np.stack([draws for _, draws in out])


def mirrors(tau):
    """Whether :func:`simulate` draws the mirrored world: at every level but 1/2, where the
    world is its own mirror in law (:func:`simulated_interval`)."""
    return float(tau) != SYMMETRIC_TAU


def shortest_interval(estimate, draws, alpha, limits=None, grid=SHORTEST_GRID):
    """The shortest interval of the pivot ``theta~ - theta0`` whose law the draws' roots
    ``theta* - theta~`` estimate, per parameter, intersected with ``limits``.

    For any fixed ``[l, u]`` that holds ``1 - alpha`` of the root's law, ``[theta~ - u,
    theta~ - l]`` covers ``theta0`` with probability ``1 - alpha`` (the pivot). The basic
    interval takes ``[l, u] = [q(alpha / 2), q(1 - alpha / 2)]``; this one the narrowest of
    ``[q(p), q(p + 1 - alpha)]`` over ``grid`` points ``p`` in ``[0, alpha]`` (the basic one
    among them), with ``q`` the roots' quantiles in the same (linear) convention as the
    basic interval, so both hold the same share of the draws. Where the law has a narrow
    core and a flat tail on one side (the KNG plateau, ``docs/inference.md``) it leaves that
    tail out instead of cutting into both.
    """
    roots = np.asarray(draws, float) - estimate
    p = np.linspace(0.0, alpha, grid)
    lo = np.quantile(roots, p, axis=0)  # (grid, params)
    hi = np.quantile(roots, p + (1.0 - alpha), axis=0)
    best = np.argmin(hi - lo, axis=0)
    cols = np.arange(roots.shape[1])
    ci = np.column_stack([estimate - hi[best, cols], estimate - lo[best, cols]])
    if limits is not None:
        ci = np.clip(ci, limits[:, :1], limits[:, 1:])
    return ci


#: The quantile level whose synthetic world is its own mirror in law (:func:`mirrors`).
SYMMETRIC_TAU = 0.5


def simulated_interval(estimate, draws, alpha, limits):
    """The interval of the simulation bootstrap (``conf_int`` and ``summary``): the shortest
    window holding ``1 - alpha`` of the synthetic draws ``theta*`` themselves ("direct"),
    i.e. :func:`shortest_interval` of the draws reflected through ``theta~``, intersected
    with ``limits``. At ``tau != 1/2`` the draws are the mirrored world's (:func:`mirrors`).

    **Why the draws themselves (derivation).** Write ``g^tau_e(delta) = sum_i w_i (1{e_i <=
    w_i^T delta} - tau)`` for the KNG gradient at ``theta = theta~ + delta`` on a synthetic
    data set with errors ``e`` and ``h^tau_e(delta) = exp(-s_K ||g^tau_e(delta)||_K)`` for
    the unnormalised density. Since ``1{-e_i <= w_i^T delta} - tau = -(1{e_i < -w_i^T delta}
    - (1 - tau))`` and ties have probability 0, ``g^tau_e(delta) = -g^(1-tau)_(-e)(-delta)``,
    and ``K`` is symmetric: ``h^tau_e(theta~ - theta0) = h^(1-tau)_(-e)(theta0 - theta~)``.
    The test that accepts ``theta~`` where ``h^tau(theta~ - theta0)`` is above a level
    ``kappa`` therefore inverts to ``{theta0 : h^(1-tau)_(-e)(theta0 - theta~) >= kappa}``,
    the high-density region of a world centred at ``theta~`` whose errors are ``-e`` (their
    ``(1 - tau)``-quantile is 0) and whose fits are at level ``1 - tau``: the mirrored world.
    At ``tau = 1/2`` with the world's normal errors, ``-e`` has the law of ``e``, so the
    mirrored world is the world itself in law (and :func:`simulate` does not mirror it).
    The level is set in the world at ``theta~``, which is exact where the parameter box's
    mass ``Z(theta0)`` equals ``Z(theta~)``; near the box's edge (a release on the law's
    plateau, e.g. a feature off-centre in its public bounds at small n * epsilon) it is an
    approximation, measured in ``docs/inference.md`` ("The direct orientation"). There the
    pivot ``[theta~ - u, theta~ - l]`` of sessions 11-12 (:func:`shortest_interval` of the
    unreflected draws) reflects the world's box-truncated draws outwards, against the edge,
    and misses: 0.85 at tau = 1/2 on the non-centred design, 0.33-0.65 at tau = 1/4 on both.
    """
    draws = np.asarray(draws, float)
    if draws.ndim == 3:  # several worlds (simulate_worlds): the hull of their windows
        cis = np.array([simulated_interval(estimate, d, alpha, limits) for d in draws])
        return np.column_stack([cis[:, :, 0].min(axis=0), cis[:, :, 1].max(axis=0)])
    return shortest_interval(estimate, 2.0 * np.asarray(estimate, float) - draws, alpha, limits)


def simulate_from(estimator, grams, sparsities, rng, mirror=False, desc=None):
    """The synthetic fits of :func:`simulate` for given Gram matrices ``(B, d, d)`` and
    sparsities ``(B,)`` (public values; a diagnosis may pass others). ``mirror``: the
    mirrored world (errors negated, :func:`synthetic_data`, and fits at level ``1 - tau``).
    ``desc`` is added to the progress bar's label. Returns ``(estimate, draws)`` in user
    units."""
    from ..accounting import BudgetAccountant  # noqa: PLC0415

    fit, _ = _release(estimator)
    params = simulation_params(estimator, fit)
    if mirror:
        params["quantile"] = 1.0 - float(fit.tau)
    n_sim = len(sparsities)
    seeds = rng.integers(0, 2**63 - 1, size=n_sim)
    ledger = BudgetAccountant()  # the synthetic fits' spends are not the user's
    o = int(fit.fit_intercept)
    draws = np.empty((n_sim, o + fit.active.size))
    from tqdm.auto import tqdm  # noqa: PLC0415

    # a long job (one exact fit per replicate): the estimator's own public progress setting
    # (None, the default: the bar appears once the job has run two seconds; False: never)
    show = getattr(estimator, "progress_bar", None)
    bar = tqdm(
        range(n_sim),
        disable=show is False,
        delay=0.0 if show else 2.0,
        desc="simulation bootstrap" + (f" ({desc})" if desc else ""),
        unit="fit",
    )
    for b in bar:
        X, y = synthetic_data(fit, grams[b], sparsities[b], rng, mirror)
        params.update(random_state=int(seeds[b]), accountant=ledger)
        with warnings.catch_warnings():  # about synthetic data, not the user's
            warnings.simplefilter("ignore")
            model = type(estimator)(**params).fit(X, y)
        if not same_law(model.kng_release_, fit):
            raise RuntimeError(
                "the synthetic fits do not reproduce the release's KNG law (were the "
                "estimator's parameters changed after fit?); refit, or use method='linear'."
            )
        draws[b] = np.r_[model.intercept_, model.coef_] if o else model.coef_
    return _user_units(fit, np.asarray(fit.theta, float)[None, :])[0], draws


def same_law(sim, fit):
    """True when a synthetic fit's KNG law (scale and box) is the release's."""
    return sim.scale == fit.scale and all(
        np.array_equal(a, c) for a, c in zip(sim.box, fit.box, strict=True)
    )


def _method(estimator, fit, rel, method):
    """``"linear"`` or ``"simulate"``. ``"auto"`` simulates where the released-quantity check
    :func:`linear_law_poor` fires and the bounds are public, else linearises (so every fit
    whose check passes keeps its linearised intervals bit for bit)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}.")
    if method != "auto":
        return method
    public = not any(isinstance(getattr(estimator, k), str) for k in ("bounds_X", "bounds_y"))
    return "simulate" if public and linear_law_poor(fit, rel) else "linear"


def released_values(fit, rel):
    """The public quantities that seed the bootstrap: the released parameter (scaled units)
    with its K-norm scale, box and quantile level, the released Gram matrix, the released
    window radius with its public level, ``n`` and the curvature budget.

    A fixed seed (0) made every release reuse the same Monte Carlo draws, so their error was
    common to all intervals instead of averaging out (docs/inference.md, "One seed per
    release"). Only released values enter the hash, so seeding is post-processing.
    """
    return (
        fit.theta,
        fit.scale,
        *fit.box,
        fit.tau,
        fit.n,
        rel.gram.hessian,
        rel.gram.epsilon,
        rel.level,
        rel.radius,
        rel.epsilon,
    )


def _draws(estimator, n_boot, method="auto", n_sim=DEFAULT_N_SIM):
    n_boot = check_n_boot(n_boot)
    fit, rel = _release(estimator)
    use = _method(estimator, fit, rel, method)
    if use == "simulate":
        simulation_params(estimator, fit)  # refuses released bounds
        key = (use, check_n_boot(n_sim))
    else:
        key = n_boot
    cache = getattr(estimator, "_inference_cache", None)
    if cache is None or cache[0] is not rel or cache[1] != key:
        # seeded by the releases: deterministic for one release, independent across releases
        seed = release_seed(*released_values(fit, rel))
        if use == "simulate":
            draws = simulate_worlds(estimator, key[1], random_state=seed)
        else:
            draws = bootstrap(estimator, n_boot, random_state=seed)
        cache = (rel, key, draws)
        estimator._inference_cache = cache
    problems = warnings_for(fit, rel, simulated=use == "simulate")
    if problems:
        warnings.warn(
            "Small n * epsilon: "
            + "; ".join(problems)
            + ". The intervals are approximate (wide, coverage not guaranteed); see "
            "docs/inference.md.",
            UserWarning,
            stacklevel=4,
        )
    return fit, rel, cache[2]


def _maybe_names(estimator, fit):
    if getattr(estimator, "feature_names_in_", None) is None:
        return None
    return param_names(estimator, fit.fit_intercept)


def _simulated(estimator):
    """True when the cached draws are the simulation bootstrap's (key ``(method, n_sim)``)."""
    return isinstance(estimator._inference_cache[1], tuple)


def conf_int(estimator, alpha=0.05, n_boot=DEFAULT_N_BOOT, method="auto", n_sim=DEFAULT_N_SIM):
    alpha = check_alpha(alpha)
    fit, _, (est, draws) = _draws(estimator, n_boot, method, n_sim)
    names = _maybe_names(estimator, fit)
    if not _simulated(estimator):
        return interval_output(est, draws, alpha, names, box_ranges(fit))
    ci = simulated_interval(est, draws, alpha, box_ranges(fit))
    if names is None:
        return ci
    import pandas as pd  # noqa: PLC0415

    return pd.DataFrame(ci, index=names, columns=[f"{alpha / 2:g}", f"{1 - alpha / 2:g}"])


def bse(estimator, n_boot=DEFAULT_N_BOOT, method="auto", n_sim=DEFAULT_N_SIM):
    fit, _, (_, draws) = _draws(estimator, n_boot, method, n_sim)
    # simulated: (worlds, n_sim, params), the largest sd over the worlds (as the hull of
    # simulated_interval takes the widest window)
    return se_output(draws, _maybe_names(estimator, fit))


def summary(estimator, alpha=0.05, n_boot=DEFAULT_N_BOOT, method="auto", n_sim=DEFAULT_N_SIM):
    alpha = check_alpha(alpha)
    fit, rel, (est, draws) = _draws(estimator, n_boot, method, n_sim)
    simulated = _simulated(estimator)
    names = param_names(estimator, fit.fit_intercept)
    one = draws[0] if simulated else draws  # simulated: (worlds, n_sim, params)
    frame = summary_frame(est, one, alpha, names, limits=box_ranges(fit))
    if simulated:  # conf_int's interval (simulated_interval) and bse, not the basic ones
        ci = simulated_interval(est, draws, alpha, box_ranges(fit))
        frame[f"[{alpha / 2:g}"], frame[f"{1 - alpha / 2:g}]"] = ci[:, 0], ci[:, 1]
        frame["std err"] = se_output(draws)
    fit_eps = float(estimator.epsilon)
    info = {
        "n": rel.n,
        "epsilon spent": f"{fit_eps + rel.epsilon:g} (fit {fit_eps:g}, curvature {rel.epsilon:g})",
        "delta spent": "0",
        "mechanism": f"K-norm gradient, quantile {fit.tau:g}",
        "norm": f"{estimator.norm_} (KNG), linf (Gram)",
        "interval": (
            f"simulation bootstrap (exact sampler on synthetic data), {n_sim} fits a world, "
            + (
                "hull of the shortest windows of two mirrored worlds' draws (the released "
                f"sparsity and 1/{SPARSITY_SPAN:g} of it)"
                if mirrors(fit.tau)
                else "shortest window of the draws"
            )
            if simulated
            else f"linearised parametric bootstrap, {n_boot} draws"
        ),
    }
    return Summary(frame, info, title="Private quantile regression (KNG)")
