"""Numerics behind :mod:`dpreg.noise.huber`: the standardised flipped Huber law, its exact
one-dimensional privacy profile, the K-dimensional sufficient condition and the calibrations.

Everything is written for the *standardised* variable ``S = T / gamma``, whose law depends on
the single shape parameter ``b = alpha / gamma``:

* negative log-density ``rho_b(s) = b|s|`` for ``|s| <= b`` and ``(s^2 + b^2) / 2`` otherwise;
* normaliser ``Z(b) = (2 / b)(1 - e^{-b^2}) + sqrt(2 pi) e^{-b^2} erfcx(b / sqrt 2)``
  (the first term is the Laplace core ``int_{|s|<=b} e^{-b|s|}``, the second the two Gaussian
  tails ``2 e^{-b^2/2} int_b^inf e^{-s^2/2}``); the paper's ``omega`` is ``Z e^{b^2/2}``.

A shift ``Delta`` of ``T`` is a shift ``D = Delta / gamma`` of ``S``, so privacy questions only
involve ``(b, D)``. All quantities are evaluated in log space (``log_ndtr``, ``erfcx``,
``logaddexp``) so that they stay finite for ``b`` from 0 (Gaussian) to 1e6 (Laplace-like)
and for ``delta`` down to 1e-300. See ``docs/flipped_huber.md`` for derivations.

Float evaluation guides the calibration search but does not certify it. At the 1-D optimum
the Laplace plateau of the loss, ``b D``, sits at eps to within round-off, and a plateau a few
ulps above eps costs delta ~ 1e-16, far above a small target. So the released 1-D pair is
verified by :func:`exact_delta_mp`: it decides the plateau's side exactly (rationals on the
released floats ``b = fl(alpha / gamma)``, ``gamma``, ``Delta``) and evaluates delta in
multiprecision (see ``calibrate_1d``).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
from scipy import optimize, special

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_2 = math.log(2.0)
#: upper end of the shape range scanned by the 1-D calibration: beyond b ~ 8 the law is a
#: Laplace up to Gaussian tails of mass < exp(-b^2), so larger shapes cannot do better.
B_MAX = 60.0


# ---------------------------------------------------------------------------------------------
# standardised distribution
# ---------------------------------------------------------------------------------------------
def _log1mexp(x):
    """log(1 - exp(x)) for x <= 0, accurate everywhere (Maechler's recipe)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > -LOG_2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_inner_mass(b):
    """log of ``int_{|s|<=b} exp(-b|s|) ds = (2/b)(1 - exp(-b^2))`` (``-inf`` at b = 0)."""
    b = float(b)
    if b == 0.0:
        return -math.inf
    val = -math.expm1(-b * b)
    if val == 0.0:  # b^2 below the float resolution: the integral is 2 b
        return LOG_2 + math.log(b)
    return LOG_2 - math.log(b) + math.log(val)


def log_half_tail_mass(b):
    """log of ``int_b^inf exp(-(s^2 + b^2)/2) ds = sqrt(2 pi) e^{-b^2/2} Q(b)``."""
    b = float(b)
    return LOG_SQRT_2PI - 0.5 * b * b + float(special.log_ndtr(-b))


def log_normaliser(b):
    """log Z(b), Z(b) = inner core mass + both Gaussian tails."""
    return float(np.logaddexp(log_inner_mass(b), LOG_2 + log_half_tail_mass(b)))


def rho(s, b):
    """Flipped Huber loss of the standardised variable."""
    a = np.abs(s)
    return np.where(a <= b, b * a, 0.5 * (a * a + b * b))


def logsf_std(s, b, log_z=None):
    """log P(S > s) for the standardised law, vectorised and accurate in both tails."""
    s = np.asarray(s, dtype=float)
    if log_z is None:
        log_z = log_normaliser(b)
    a = np.abs(s)
    lt = log_half_tail_mass(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        # |s| > b: Gaussian tail
        out_tail = -0.5 * b * b + LOG_SQRT_2PI + special.log_ndtr(-a)
        # |s| <= b: rest of the Laplace core plus the tail
        if b > 0:
            core = -b * a + _log1mexp(-b * np.clip(b - a, 0.0, None)) - math.log(b)
            out_core = np.logaddexp(core, lt)
        else:
            out_core = np.full_like(a, lt)
    log_right = np.where(a > b, out_tail, out_core) - log_z  # log P(S > |s|) <= log(1/2)
    return np.where(s >= 0, log_right, _log1mexp(log_right))


def _log1mexp_s(x):
    """Scalar log(1 - exp(x)), x <= 0."""
    if x > -LOG_2:
        return math.log(-math.expm1(x)) if x < 0.0 else -math.inf
    return math.log1p(-math.exp(x))


def _rho_s(s, b):
    a = abs(s)
    return b * a if a <= b else 0.5 * (a * a + b * b)


def _logsf_s(s, b, log_z, log_tail):
    """Scalar fast path of :func:`logsf_std` (same formulas); ``log_tail`` is
    ``log_half_tail_mass(b)``."""
    a = abs(s)
    if a > b:
        log_right = -0.5 * b * b + LOG_SQRT_2PI + float(special.log_ndtr(-a)) - log_z
    else:
        if b - a > 0.0:
            core = -b * a + _log1mexp_s(-b * (b - a)) - math.log(b)
            m = max(core, log_tail)
            log_right = m + math.log(math.exp(core - m) + math.exp(log_tail - m)) - log_z
        else:
            log_right = log_tail - log_z
    return log_right if s >= 0 else _log1mexp_s(log_right)


def logcdf_std(s, b, log_z=None):
    return logsf_std(-np.asarray(s, dtype=float), b, log_z)


def isf_std(logp, b, log_z=None):
    """The s >= 0 with log P(S > s) = logp, for logp <= log(1/2) (vectorised)."""
    logp = np.asarray(logp, dtype=float)
    if log_z is None:
        log_z = log_normaliser(b)
    log_pb = log_half_tail_mass(b) - log_z  # P(S > b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # Gaussian tail: e^{-b^2/2} sqrt(2 pi) Q(s) = p Z
        s_tail = -special.ndtri_exp(np.minimum(logp + log_z + 0.5 * b * b - LOG_SQRT_2PI, 0.0))
        if b > 0:
            # from the centre: (1 - e^{-bs}) / b = (1/2 - p) Z
            x = b * (0.5 - np.exp(logp)) * np.exp(log_z)
            s_centre = -np.log1p(-np.minimum(x, 1.0)) / b
            # from the edge: e^{-bs} = e^{-b^2} + b (p Z - P(S>b) Z)
            log_e = np.logaddexp(
                math.log(b) + logp + log_z + _log1mexp(np.minimum(log_pb - logp, 0.0)), -b * b
            )
            s_edge = -log_e / b
            s_core = np.where(x <= 0.5, s_centre, s_edge)
            s_core = np.clip(s_core, 0.0, b)
        else:
            s_core = np.zeros_like(logp)
    return np.where(logp <= log_pb, s_tail, s_core)


def second_moment_std(b):
    """E[S^2] (so Var T = gamma^2 E[S^2]); exact closed form, stable for every b >= 0."""
    b = float(b)
    log_z = log_normaliser(b)
    terms = [LOG_2 + log_half_tail_mass(b)]  # both tails contribute their mass ...
    if b > 0:
        terms.append(LOG_2 + math.log(b) - b * b)  # ... plus 2 b e^{-b^2}
        p3 = special.gammainc(3.0, b * b)
        if p3 > 0:
            terms.append(math.log(4.0 * p3) - 3.0 * math.log(b))  # core: 4 P(3, b^2) / b^3
        elif b > 0:
            terms.append(math.log(2.0 / 3.0) + 3.0 * math.log(b))  # P(3,x) ~ x^3/6
    return math.exp(float(special.logsumexp(terms)) - log_z)


def sample_std(rng, b, size):
    """Exact draws of S: Laplace core (truncated exponential) or Gaussian tail, random sign."""
    log_z = log_normaliser(b)
    p_core = math.exp(log_inner_mass(b) - log_z)
    u_region = rng.random(size)
    # u in (0, 1]: u = 0 would give an infinite Gaussian tail draw (log 0) and a core draw of
    # exactly 0, i.e. a release of the true value.
    u = 1.0 - rng.random(size)
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    # inverse CDF of the exponential(rate b) truncated to [0, b]
    with np.errstate(divide="ignore", invalid="ignore"):
        if b * b > 1e-300:
            core = -np.log1p(u * math.expm1(-b * b)) / b
        else:  # b^2 underflows: the truncated exponential is uniform on [0, b] to 1e-300
            core = u * b
        core = np.clip(core, 0.0, b)
        # Gaussian tail beyond b: Q(s) = u Q(b)
        tail = -special.ndtri_exp(np.log(u) + special.log_ndtr(-b))
        tail = np.maximum(tail, b)
    return sign * np.where(u_region < p_core, core, tail)


# ---------------------------------------------------------------------------------------------
# exact one-dimensional privacy profile (Theorem 3 of seed 003, re-derived)
# ---------------------------------------------------------------------------------------------
def _centred_loss(u, b, h):
    """rho_b(u + h) - rho_b(u - h) for u >= 0, by the closed form of its segment.

    As a difference of two ``rho`` values the loss cancels catastrophically when ``b`` is large
    (``rho ~ b^2 / 2`` against a loss of order eps), and the plateau picks up the round-off
    of each term, so two points of the same plateau could compare differently against eps
    (``b*b - b*(b - D)`` against ``b*D``). The segment search then took a point past a larger
    value as the last one below eps (audit s22, F1). Each segment's formula (the table in
    ``docs/flipped_huber.md``, with ``a = u + h``, ``c = u - h``, ``D = 2h``) is monotone in
    ``u`` and the pieces meet at the breakpoints, so the float values of the breakpoints are
    nondecreasing up to an ulp where two formulas meet, and the plateau is one value, ``b*D``.
    """
    D = 2.0 * h
    a, c = u + h, u - h
    if a > b and (c > b or c < -b):
        return D * u  # both ends in the Gaussian tails: (a^2 - c^2) / 2
    if a > b and c >= 0.0:
        return 0.5 * (a - b) ** 2 + b * D
    if a > b:
        return 0.5 * (a + b) ** 2 - b * D
    if c < 0.0:
        return 2.0 * b * u  # both ends in the Laplace core, opposite signs: b (a + c)
    return b * D  # the plateau: both ends in [0, b]


def centred_loss_inverse(eps, b, h):
    """sup{u >= 0 : rho_b(u + h) - rho_b(u - h) <= eps} in closed form.

    The centred loss is continuous, nondecreasing and piecewise (linear or square-root) between
    the breakpoints where ``u +- h`` crosses ``-b, 0, b``; we locate the segment by evaluating
    the breakpoints and solve on that segment. The segment is the one that ends at the *first*
    breakpoint whose loss exceeds eps: the true loss is nondecreasing, so that is the same as
    "the last breakpoint with loss <= eps", but the float values need not be monotone and only
    the first rule never puts ``u*`` beyond a point where the loss is already above eps.
    This float routine serves the search and ``privacy_profile``; the released calibration is
    verified independently by :func:`exact_delta_mp`.
    """
    D = 2.0 * h
    pts = sorted({0.0, *[p for p in (b - h, h - b, h, b + h) if p > 0.0]})
    vals = [_centred_loss(p, b, h) for p in pts]
    above = [i for i, v in enumerate(vals) if v > eps]
    if above and above[0] == 0:  # the loss at u = 0 is 0 <= eps; only reachable for eps < 0
        return 0.0
    k = above[0] - 1 if above else len(pts) - 1
    lo = pts[k]
    hi = pts[k + 1] if k + 1 < len(pts) else math.inf
    mid = lo + 1.0 if hi == math.inf else 0.5 * (lo + hi)
    a, c = mid + h, mid - h
    plateau = b * D
    if a > b and (c > b or c < -b):
        u = eps / D  # both ends in the Gaussian tails: loss = D u
    elif a > b and c >= 0.0:
        u = b + math.sqrt(max(2.0 * (eps - plateau), 0.0)) - h
    elif a > b:
        u = math.sqrt(max(2.0 * (eps + plateau), 0.0)) - b - h
    elif c < 0.0:
        u = eps / (2.0 * b)  # both ends in the Laplace core, opposite signs: loss = 2 b u
    else:  # plateau b D <= eps cannot be a segment whose right end exceeds eps
        u = hi
    return min(max(u, lo), hi)


def exact_log_delta_std(eps, b, D, log_z=None):
    """log delta(eps) of the one-dimensional mechanism with shape b and shift D (std units)."""
    if log_z is None:
        log_z = log_normaliser(b)
    h = 0.5 * D
    u = centred_loss_inverse(eps, b, h)
    lt = log_half_tail_mass(b)
    lc = _logsf_s(u - h, b, log_z, lt)
    la = _logsf_s(u + h, b, log_z, lt)
    r = eps + la - lc
    if r >= 0.0:
        return -math.inf
    return lc + _log1mexp_s(r)


def exact_delta(epsilon, alpha, gamma, sensitivity):
    """Exact delta(epsilon) of the 1-D flipped Huber mechanism (necessary and sufficient)."""
    b = alpha / gamma
    return math.exp(exact_log_delta_std(float(epsilon), b, sensitivity / gamma))


def _mp_sf_std(s, b, log_z):
    """P(S > s) of the standardised law in mpmath (closed form, no cancellation in either
    tail: the left half uses the symmetry ``P(S > s) = 1 - P(S > -s)``)."""
    a = abs(s)
    tail = mpmath.exp(-b * b / 2) * mpmath.sqrt(2 * mpmath.pi)
    if b == 0 or a > b:
        r = tail * mpmath.erfc(a / mpmath.sqrt(2)) / 2
    else:  # (e^{-b a} - e^{-b^2}) / b + the tail beyond b
        r = mpmath.exp(-b * a) * -mpmath.expm1(-b * (b - a)) / b
        r += tail * mpmath.erfc(b / mpmath.sqrt(2)) / 2
    r = r / mpmath.exp(log_z)
    return r if s >= 0 else 1 - r


def exact_delta_mp(epsilon, b, gamma, sensitivity, target=None):
    """delta(epsilon) of the 1-D mechanism for the *released floats*, in multiprecision.

    Independent of the float routine above (:func:`exact_log_delta_std`): the shape ``b`` is
    the float the sampler uses (``fl(alpha / gamma)``), the shift ``D = Delta / gamma`` is taken
    as the exact rational, and the sign of the plateau excess ``b D - eps`` is decided exactly
    in :class:`fractions.Fraction`. With ``L(s) = rho_b(s) - rho_b(s - D)`` (nondecreasing,
    the log-ratio of the densities of ``S + D`` and ``S``) and ``s* = inf{s : L(s) > eps}``,

        delta = P(S > s* - D) - e^eps P(S > s*).

    ``L`` is strictly increasing except on the plateau ``s in [D, b]`` (when ``D <= b``) where
    it equals ``b D``; so

    * ``D <= b`` and ``b D > eps``: ``s*`` lies below the plateau, on ``[0, D]`` where
      ``L = 2 b s - b D``, i.e. ``s* = (eps + b D) / (2 b)`` (the plateau then carries
      ``delta >= (about) P(plateau)(b D - eps)``, however small the target);
    * ``D <= b`` and ``b D <= eps``: ``s* >= b``; on ``[b, b + D]`` ``L = (s - b)^2 / 2 + b D``
      and beyond ``L = s D - D^2 / 2``, each solved in closed form;
    * ``D > b``: no plateau, ``s*`` by bisection on the strictly increasing ``L``.

    ``delta`` is first order insensitive to the error in ``s*`` (the derivative in ``s*`` is
    ``f(s*)(e^{L(s*)} - e^eps) = 0``). The working precision is ``max(50, -log10(target) + 30)``
    digits, so that the absolute error of the difference (whose terms may be of order 1 when
    the plateau counts) is far below ``target``.
    """
    eps_q, b_q = Fraction(float(epsilon)), Fraction(float(b))
    D_q = Fraction(float(sensitivity)) / Fraction(float(gamma))
    excess = b_q * D_q - eps_q  # exact plateau loss minus eps
    dps = 50 if target is None else max(50, int(-math.log10(float(target))) + 30)
    with mpmath.workdps(dps):
        e, bb = mpmath.mpf(float(epsilon)), mpmath.mpf(float(b))
        D = mpmath.mpf(D_q.numerator) / D_q.denominator
        if bb == 0:
            log_z = mpmath.log(mpmath.sqrt(2 * mpmath.pi))
        else:
            log_z = mpmath.log(
                2 * -mpmath.expm1(-bb * bb) / bb
                + mpmath.exp(-bb * bb / 2)
                * mpmath.sqrt(2 * mpmath.pi)
                * mpmath.erfc(bb / mpmath.sqrt(2))
            )
        if D_q <= b_q and excess > 0:
            s_star = (e + bb * D) / (2 * bb)
        elif D_q <= b_q:
            # eps - b D, >= 0 exactly; rounded once here, at the working precision
            gap = mpmath.mpf(-excess.numerator) / excess.denominator
            if 2 * gap <= D * D:
                s_star = bb + mpmath.sqrt(2 * gap)
            else:
                s_star = e / D + D / 2

        else:

            def rho(x):
                ax = abs(x)
                return bb * ax if ax <= bb else (ax * ax + bb * bb) / 2

            def loss(x):
                return rho(x) - rho(x - D)

            lo, hi = mpmath.mpf(-1), mpmath.mpf(1)
            while loss(lo) > e:
                lo *= 2
            while loss(hi) <= e:
                hi *= 2
            tol = mpmath.mpf(10) ** (5 - dps)
            while hi - lo > tol * max(1, abs(hi)):
                mid = (lo + hi) / 2
                if loss(mid) > e:
                    hi = mid
                else:
                    lo = mid
            s_star = (lo + hi) / 2
        delta = _mp_sf_std(s_star - D, bb, log_z) - mpmath.exp(e) * _mp_sf_std(s_star, bb, log_z)
        return max(delta, mpmath.mpf(0))


def log_concave_delta(epsilon, sensitivity, logpdf, logcdf, scale=1.0):
    """Hockey-stick divergence of ``N + sensitivity`` against ``N`` for symmetric log-concave N.

    Independent, distribution-agnostic route used to cross-check the closed form: with
    ``l(t) = log g(t) - log g(t - Delta)`` (nonincreasing for log-concave g) and
    ``t* = sup{t : l(t) > eps}``, ``delta(eps) = G(t*) - e^eps G(t* - Delta)`` where ``G`` is
    the CDF. ``t*`` is found by bisection on the monotone loss. ``scale`` sets the initial
    bracket only.
    """
    eps, Delta = float(epsilon), float(sensitivity)

    def loss(t):
        return float(logpdf(t) - logpdf(t - Delta))

    lo, hi = -scale, scale
    while loss(lo) <= eps:
        lo *= 2.0
    while loss(hi) > eps:
        hi *= 2.0
    for _ in range(200):  # plain bisection: robust on plateaus
        mid = 0.5 * (lo + hi)
        if loss(mid) > eps:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * max(1.0, abs(lo)):
            break
    t = 0.5 * (lo + hi)
    l1, l2 = float(logcdf(t)), eps + float(logcdf(t - Delta))
    if l2 >= l1:
        return 0.0
    return math.exp(l1) * -math.expm1(l2 - l1)


# ---------------------------------------------------------------------------------------------
# K-dimensional sufficient condition (Theorem 8 of seed 003)
# ---------------------------------------------------------------------------------------------
def ridge_height(alpha, sens_inf):
    """R_Delta(alpha) = alpha^2 - ([alpha - Delta]_+)^2: twice the maximal excess of the 1-D
    centred loss over its linear part."""
    return alpha * alpha - max(alpha - sens_inf, 0.0) ** 2


def ridge_height_inverse(nu, sens_inf):
    if nu < sens_inf * sens_inf:
        return math.sqrt(max(nu, 0.0))
    return (nu + sens_inf * sens_inf) / (2.0 * sens_inf)


def theta_over_gamma(b):
    """theta / gamma = Q^{-1}(sqrt(pi/2) / omega): the shift of the Gaussian N(theta, gamma^2)
    that stochastically dominates FH(alpha, gamma^2) (Lemma 6)."""
    log_half_c = LOG_SQRT_2PI - LOG_2 - log_normaliser(b) - 0.5 * b * b
    return -float(special.ndtri_exp(min(log_half_c, -LOG_2)))


def theorem8_log_delta(epsilon, alpha, gamma, dim, sens_inf, sens_2, sens_1):
    """log of the Theorem 8 bound on delta(epsilon); ``+0`` (delta bound 1) if the side
    condition ``K R(alpha) <= 2 gamma^2 eps - Delta_2^2`` fails."""
    eps = float(epsilon)
    R = ridge_height(alpha, sens_inf)
    slack = 2.0 * gamma * gamma * eps - sens_2 * sens_2 - dim * R
    if slack < 0.0:
        return 0.0
    b = alpha / gamma
    base = gamma * eps / sens_2
    corr = sens_2 / (2.0 * gamma) + dim * R / (2.0 * gamma * sens_2)
    A = base - corr
    B = base + corr + theta_over_gamma(b) * sens_1 / sens_2
    la = float(special.log_ndtr(-A))
    lb = eps + float(special.log_ndtr(-B))
    if lb >= la:
        return -math.inf
    return la + float(_log1mexp(lb - la))


# ---------------------------------------------------------------------------------------------
# calibrations
# ---------------------------------------------------------------------------------------------
def max_shift_std(eps, delta, b):
    """Largest standardised shift D with exact delta(eps; b, D) <= delta.

    delta is strictly increasing in D for any symmetric log-concave density (the derivative of
    the hockey-stick divergence in the shift is (g(t* - D) + e^eps g(t*)) / 2 > 0, Lemma 11 of
    seed 003), so a bracketing root finder on log D is exact. The returned D is verified and
    nudged down until it meets delta: the result always errs on the private side.
    """
    log_z = log_normaliser(b)
    log_target = math.log(delta)

    def f(log_d):
        return exact_log_delta_std(eps, b, math.exp(log_d), log_z) - log_target

    lo, hi = -1.0, 1.0
    while f(lo) >= 0.0:
        lo -= 2.0
    while f(hi) <= 0.0:
        hi += 2.0
    root = optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-13, maxiter=500)
    d = math.exp(root)
    while exact_log_delta_std(eps, b, d, log_z) > log_target:
        d *= 1.0 - 1e-12
    return d


def _golden_refine(func, grid, values):
    """Refine the minimum of a 1-D function known on a sorted grid with bounded Brent search in
    the cell pair around the best grid point; returns (x, f(x))."""
    i = int(np.argmin(values))
    lo = grid[max(i - 1, 0)]
    hi = grid[min(i + 1, len(grid) - 1)]
    best_x, best_v = grid[i], values[i]
    if hi > lo:
        res = optimize.minimize_scalar(
            func, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10 * max(1.0, hi)}
        )
        if res.fun < best_v:
            best_x, best_v = float(res.x), float(res.fun)
    return best_x, best_v


@functools.lru_cache(maxsize=512)
def calibrate_1d(epsilon, delta, sensitivity, n_grid=121):
    """Minimum-variance (alpha, gamma) meeting the exact 1-D condition delta(eps) <= delta.

    For each shape b the scale is solved exactly (``max_shift_std``), which makes every
    candidate private; the variance ``Delta^2 E[S_b^2] / D*(b)^2`` is then minimised over
    b in [0, B_MAX] by a log-spaced scan (b = 0, the Gaussian, included) followed by a bounded
    Brent refinement around the best scan point. A non-unimodal objective can only cost
    optimality, never privacy.
    """
    eps, dlt, sens = float(epsilon), float(delta), float(sensitivity)

    def objective_b(b):
        return second_moment_std(b) / max_shift_std(eps, dlt, b) ** 2

    grid = np.concatenate([[0.0], np.geomspace(1e-3, B_MAX, n_grid - 1)])
    vals = np.array([objective_b(b) for b in grid])
    logs = np.log(grid[1:])

    def obj_log(x):
        return objective_b(math.exp(x))

    i = int(np.argmin(vals))
    if i == 0:
        b_best, v_best = 0.0, vals[0]
        # the optimum may sit between 0 and the first positive grid point
        res = optimize.minimize_scalar(objective_b, bounds=(0.0, grid[1]), method="bounded")
        if res.fun < v_best:
            b_best, v_best = float(res.x), float(res.fun)
    else:
        x, v_best = _golden_refine(obj_log, logs, vals[1:])
        b_best = math.exp(x)
    D = max_shift_std(eps, dlt, b_best)
    gamma = sens / D
    alpha = b_best * gamma
    # Re-verify in the representation that is released: the sampler draws with the floats
    # b = fl(alpha / gamma) and gamma, and the shift is sens / gamma as a real number. The float
    # routine alone is not enough: at the optimum the plateau b D sits at eps to within
    # round-off, and for small targets an excess of one ulp already costs delta ~ 1e-16 (the
    # float check missed it and released delta up to 1e-13 for targets down to 1e-300, audit
    # s22 F1). exact_delta_mp decides the plateau's side exactly and evaluates delta in
    # multiprecision. Raising gamma at fixed b lowers D and hence delta (Lemma 11); the relative
    # step starts at one ulp and doubles, so the loop is short and overshoots by at most 2x.
    # The float check is kept too, so that privacy_profile (float) agrees with the target.
    target = mpmath.mpf(dlt)
    step = 2.0**-52
    while (
        exact_delta(eps, alpha, gamma, sens) > dlt
        or exact_delta_mp(eps, alpha / gamma, gamma, sens, dlt) > target
    ):
        gamma *= 1.0 + step
        step *= 2.0
        alpha = b_best * gamma
    return alpha, gamma


def max_alpha_kdim(epsilon, delta, gamma, dim, sens_inf, sens_2, sens_1):
    """Largest alpha meeting Theorem 8 at fixed gamma, or None when even alpha = 0 fails.

    At fixed gamma both conditions are monotone in alpha: R(alpha) is increasing, omega(b)
    is increasing in b (d omega / db = 2 e^{b^2/2} - 2 sinh(b^2/2) / (b^2/2) > 0), so theta
    grows, and the bound Q(A) - e^eps Q(B) grows because A falls and B rises. Hence the
    feasible alphas form an interval [0, alpha*], found by bisection.
    """
    eps = float(epsilon)
    nu = (2.0 * gamma * gamma * eps - sens_2 * sens_2) / dim
    if nu < 0.0:
        return None
    log_target = math.log(delta)

    def ok(alpha):
        return theorem8_log_delta(eps, alpha, gamma, dim, sens_inf, sens_2, sens_1) <= log_target

    if not ok(0.0):
        return None
    a_hi = ridge_height_inverse(nu, sens_inf)
    # the side condition is R(alpha) <= nu; guard against round-off at its boundary. The step
    # doubles: with a fixed 1e-12 step this loop ran for minutes when gamma ~ 1e10 (eps = 1e-3,
    # delta = 1e-300), where the round-off of R(alpha) is far above 1e-12 relative.
    step = 1e-12
    while a_hi > 0 and dim * ridge_height(a_hi, sens_inf) > 2 * gamma * gamma * eps - sens_2**2:
        a_hi *= 1.0 - min(step, 0.5)
        step *= 2.0
    if ok(a_hi):
        return a_hi
    lo, hi = 0.0, a_hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return lo


@functools.lru_cache(maxsize=512)
def calibrate_kdim(epsilon, delta, dim, sens_inf, sens_2, sens_1, n_grid=181):
    """Minimum-variance (alpha, gamma) meeting the Theorem 8 sufficient condition.

    One-dimensional search over gamma (log scan from the Gaussian calibration upwards, then a
    bounded Brent refinement); at each gamma the largest feasible alpha is taken (variance at
    fixed gamma decreases in alpha, and the feasible alphas form an interval, see
    ``max_alpha_kdim``).
    """
    from .classic import analytic_gaussian_sigma

    eps, dlt = float(epsilon), float(delta)
    g_min = max(analytic_gaussian_sigma(eps, dlt, sens_2), sens_2 / math.sqrt(2.0 * eps))
    g_min *= 1.0 + 1e-12
    while max_alpha_kdim(eps, dlt, g_min, dim, sens_inf, sens_2, sens_1) is None:
        g_min *= 1.0 + 1e-9

    def variance(log_g):
        g = math.exp(log_g)
        a = max_alpha_kdim(eps, dlt, g, dim, sens_inf, sens_2, sens_1)
        if a is None:
            return math.inf
        return g * g * second_moment_std(a / g)

    # As gamma -> inf the largest feasible alpha grows like gamma^2 eps / (K Delta) and the
    # noise tends to Laplace(K Delta_inf / eps) with Gaussian tails pushed to infinity; the
    # variance then decreases towards 2 (K Delta_inf / eps)^2. (Laplace(Delta_1 / eps), better
    # when Delta_1 < K Delta_inf, is a separate candidate of FlippedHuberMechanism.) The scan up
    # to 1e6 g_min reaches that limit to ~1e-6 relative; the other end (gamma = g_min) is the
    # analytic Gaussian.
    grid = np.linspace(math.log(g_min), math.log(g_min) + math.log(1e6), n_grid)
    vals = np.array([variance(x) for x in grid])
    x, _ = _golden_refine(variance, grid, vals)
    gamma = math.exp(x)
    alpha = max_alpha_kdim(eps, dlt, gamma, dim, sens_inf, sens_2, sens_1)
    return alpha, gamma
