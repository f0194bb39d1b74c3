"""Exact grid releases: ``g * round((value + Y) / g)`` with Y the *ideal* real-valued noise.

The threat and the full derivation are in ``docs/floating_point.md``; in short:

1. Every hardened sampler is a fixed function ``Y = F(U_1, ..., U_q, s_1, ..., s_q)`` of
   independent *real* uniforms ``U_j`` on (0, 1) and fair signs ``s_j`` whose law is exactly
   the noise law (Laplace: ``-log U``; Gamma(k) radius: ``-sum log U_j``; Gaussian:
   Box--Muller; cube coordinates ``2U - 1``; flipped Huber: exact rejection sampling).
2. A uniform is drawn lazily: the top 53 bits of a random 64-bit word pin ``U`` to a dyadic
   interval of width ``2**-53``; its lowest bit is the sign ``s`` (independent bits).
3. The release is the integer ``N = round((value + Y) / g)`` (``g = 2**e`` public). We
   evaluate F in *ball arithmetic* -- a midpoint and a rigorous error radius, covering both
   the width of the uniforms' intervals and every rounding error -- first vectorised in
   float64 (fast path), and, for the rare elements whose ball straddles a rounding boundary
   ``(N + 1/2) g``, in python-flint's ``arb`` with 64 more random bits per uniform each round
   (slow path), until the ball is inside one cell. ``N`` is then *exactly* the integer the
   ideal real-valued mechanism would produce: the output law is the law of a post-processed
   ideal mechanism, so its (epsilon, delta) guarantee carries over with no inflation.
4. The ball arithmetic and its stated assumption about libm accuracy (``np.log``,
   ``np.cos``, ``np.sin`` within ``2**-44``) are in :mod:`dpreg.noise._ballarith`.

The released float is ``fl(N) * g`` -- a deterministic function of N (post-processing).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._random import random_words
from ._ballarith import _GROW, _LIBM_REL, _OP, _TINY, _ArbBackend, _Ball, _FloatBackend
from ._grid import GRID_BITS, grid_exponent
from .balls import LpBall

__all__ = [
    "release_flipped_huber",
    "release_gaussian",
    "release_knorm",
    "release_laplace",
]

_SLOW_EXTRA_BITS = 64


# ---------------------------------------------------------------------------------------------
# the samplers, written once for both backends: prog(bk, U, S) -> (Y, accept margin or None)
# U: uniform handles of shape (rows, q); S: fair signs (+-1.0) of the same shape.
# ---------------------------------------------------------------------------------------------
def _laplace(scale):
    """One coordinate per row: ``s * scale * (-log U)`` is Laplace(scale)."""

    def prog(bk, U, S):
        if bk is _FloatBackend:  # the same ball as the generic code, with fewer passes
            return _laplace_float(U, S, scale), None
        return bk.neglog(U) * (S * scale), None

    def cells(k, S, inv_g, frac):
        return _laplace_cells(k, S, scale, inv_g, frac)

    prog.signs = True
    prog.cells = cells
    return prog, 1, 1


def _laplace_cells(k, S, scale, inv_g, frac):
    """Fused float64 cells of ``frac + S scale (-log U) / g``, U in ``[k, k + 1] 2^-53``.

    With ``f = scale / g`` (exact: a power-of-two scaling), ``a0 = -log((k + 1) 2^-53)`` (the
    argument is exact) and its libm value ``a_c`` (``|a_c - a0| <= a0 2^-44``): the real
    ``-log U`` lies in ``[a0, a0 + log(1 + 1/k)]`` and ``log(1 + 1/k) <= 1/k``. The float
    ``x = fl(fl(-S a_c f) + frac)`` rounds twice (a sign flip is exact), so the real value is
    within ``f/k + f a0 2^-44 + f a_c 2^-53 + |x| 2^-53`` of x. As ``0 <= frac < 1``, ``f a_c
    <= (|x| + 1)(1 + 2^-51)`` and ``a0 <= a_c (1 + 2^-43.9)``, so the error is below ``R =
    (f/k + (|x| + 1) 2^-43.8) _FUSED_SLACK`` (the slack covers the roundings made computing
    R). A cell is certain iff ``d + R < 1/2`` with ``d = |x - round(x)|`` (exact for ``|x| <
    2^51``; a larger or NaN x has ``R > 1/2``: never certain); we test ``fl(d + R) < 1/2 -
    2^-52``, which covers the rounding of the sum (at most ``2^-54``). ``k = 0`` (``U`` may
    be 0) gives ``R = inf``: undecided.
    """
    f = scale * inv_g
    x = k + 1.0  # exact: k < 2^53
    x *= 2.0**-53  # exact
    np.log(x, out=x)  # -a_c
    x *= S
    x *= -f  # S a_c f, one rounding
    x += frac
    n = np.rint(x)
    R = f / k  # inf for k = 0
    t = np.abs(x)
    t += 1.0
    t *= 2.0**-43.8
    R += t
    R *= _FUSED_SLACK
    x -= n
    np.abs(x, out=x)
    x += R
    return n, x < 0.5 - 2.0**-52


def _laplace_float(k, S, scale):
    """Ball of ``S * scale * (-log U)``, U in [k, k+1] 2^-53 (see ``_FloatBackend.neglog``).

    -log U = m0 + [0, 1/k] with m0 = -log((k+1) 2^-53) within a relative 2^-44 (libm) and two
    roundings; the product by ``S * scale`` adds one rounding.
    """
    with np.errstate(divide="ignore"):
        half = 0.5 / k
    m0 = np.log((k + 1.0) * 2.0**-53)
    np.negative(m0, out=m0)
    r = np.abs(m0)
    r *= _LIBM_REL + 2 * _OP
    r += half
    m0 += half
    m0 *= S * scale
    r *= _GROW * scale
    t = np.abs(m0)
    t *= _OP
    r += t
    r += _TINY
    return _Ball(m0, r)


def _knorm_linf(m, scale):
    """``r * (2W - 1)``: r ~ Gamma(m + 1, scale) (sum of m + 1 exponentials), W uniform."""

    def prog(bk, U, S):
        r = bk.gamma_sum(U[:, : m + 1]) * scale
        if bk is _FloatBackend:
            return _times_centred_float(r, U[:, m + 1 :]), None
        return r * bk.centred(U[:, m + 1 :]), None

    def cells(k, S, inv_g, frac):
        return _linf_cells(k, m, scale, inv_g, frac)

    prog.cells = cells
    return prog, 2 * m + 1, m


def _linf_cells(k, m, scale, inv_g, frac):
    """Fused float64 cells of ``frac + r (2W - 1) / g`` (the linf program, fewer passes).

    With ``f = scale / g`` (exact: a power-of-two scaling) and the ball ``r`` of the Gamma sum,
    the row factor ``rc = fl(r.m f)`` is within ``r.r f + rc 2^-53`` of the real ``r scale / g``;
    ``c = (2k + 1) 2^-53 - 1`` is exact, ``|c| < 1`` and within ``2^-53`` of ``2W - 1``. So
    ``x = fl(fl(rc c) + frac)`` is within ``r.r f + rc 2^-51 + 2^-52`` of the real value: one
    radius per row, below ``R = (r.r f + (rc + 1) 2^-50) _FUSED_SLACK + TINY``. A cell is certain
    when ``|x - round(x)| < 1/2 - R`` (exact subtraction for ``|x| < 2^51``, ensured by
    ``rc < 2^50``).
    """
    r = _FloatBackend.gamma_sum(k[:, : m + 1])
    f = scale * inv_g
    rc = r.m * f
    R = r.r * f
    R += (rc + 1.0) * _OP
    R *= _FUSED_SLACK
    R += _TINY
    lim = 0.5 - R
    lim = np.where(rc < 2.0**50, lim, -1.0)  # NaN/inf/huge rows: undecided
    x = k[:, m + 1 :] * 2.0**-52
    x += 2.0**-53 - 1.0  # exact: c
    x *= rc
    x += frac
    n = np.round(x)
    x -= n
    np.abs(x, out=x)
    return n, x < lim


def _times_centred_float(r, k):
    """Ball of ``r * (2W - 1)``, W in [k, k+1] 2^-53, for a row ball r (fewer passes).

    2W - 1 = c + [-2^-53, 2^-53] with c = (2k + 1) 2^-53 - 1 exact, so |r (2W - 1) - r.m c| <=
    r.r |c| + (r.m + r.r) 2^-53, plus one rounding of the product.
    """
    c = k * 2.0**-52
    c += 2.0**-53 - 1.0  # exact: a multiple of 2^-53 in (-1, 1)
    m = r.m * c
    rad = np.abs(c)
    rad *= r.r
    rad += (r.m + r.r) * (2.0**-53 * _GROW)
    rad *= _GROW
    t = np.abs(m)
    t *= _OP
    rad += t
    rad += _TINY
    return _Ball(m, rad)


def _knorm_l1_polar(m, scale):
    """``r * s_i E_i / (E_0 + ... + E_m)``: a uniform point of the l1 ball (Dirichlet)."""

    def prog(bk, U, S):
        r = bk.gamma_sum(U[:, : m + 1]) * scale
        e = bk.neglog(U[:, m + 1 :])
        total = bk.sum(e, axis=1)
        return r * (e[:, 1:] * S[:, m + 2 :]) / total, None

    prog.signs = True
    return prog, 2 * m + 2, m


def _gaussian_pairs(bk, A, B):
    """Box--Muller: two independent N(0, 1) per (A, B) pair, as columns [cos..., sin...]."""
    return bk.gaussian_pairs(A, B)


def _knorm_l2(m, scale):
    """``R * G / ||G||_2``: R ~ Gamma(m, scale), G an m-vector of iid centred Gaussians.

    The direction comes from Marsaglia's polar pairs (no trigonometry): ``(u, v)`` uniform in
    the unit disc, ``s = u^2 + v^2``; then ``(u, v) sqrt(-log s / s)`` are two iid N(0, 1/2)
    (Marsaglia & Bray 1964; the constant factor cancels in ``G / ||G||``). Coordinates are
    ``[u_1 .. u_p, v_1 .. v_p][:m]`` with ``p = ceil(m / 2)`` pairs (odd m drops ``v_p``).
    Uniforms: the m of R, then ``u_1 .. u_p``, then ``v_1 .. v_p``; every pair is certainly
    inside the disc (``prog.chunk`` draws pairs by exact rejection before they reach a row).
    ``prog`` is the reference program (both backends; arb on the slow path); the fast path
    is the fused ``_l2_fused``.
    """
    p = (m + 1) // 2

    def prog(bk, U, S):
        R = bk.gamma_sum(U[:, :m]) * scale
        u, v = bk.centred(U[:, m : m + p]), bk.centred(U[:, m + p :])
        s = u * u + v * v
        h = bk.sqrt(bk.nlog(s) / s)
        G = bk.concat([u * h, v * h], axis=1)[:, :m]
        # one row factor R / ||G|| times G: fewer per-coordinate operations than R * (G / ||G||)
        return (R / bk.sqrt(bk.sum(G * G, axis=1))) * G, None

    def chunk(values, vint, vfrac, exact, e, rng):
        from ._exact_l2 import _l2_chunk  # (imports this module)

        return _l2_chunk(prog, m, scale, values, vint, vfrac, exact, e, rng)

    prog.chunk = chunk
    return prog, m + 2 * p, m


def _gaussian(sigma):
    """Two N(0, sigma^2) coordinates per row: Marsaglia's polar method (no trigonometry).

    u, v uniform on (-1, 1); accept iff ``s = u^2 + v^2 < 1`` (the accept margin ``1 - s``);
    then ``(u, v) sqrt(-2 log s / s)`` are two independent N(0, 1) (Marsaglia & Bray 1964),
    exactly, for the ideal real uniforms. ``s = 0`` has probability 0; a ball that contains
    it is undecided (the slow path refines it away).
    """

    def prog(bk, U, S):
        u, v = bk.centred(U[:, :1]), bk.centred(U[:, 1:])
        s = u * u + v * v
        h = bk.sqrt(bk.nlog(s) * 2.0 / s)
        return bk.concat([u * h, v * h], axis=1) * sigma, 1.0 - s

    def cells(k, S, inv_g, frac):
        return _polar_cells(k, sigma, inv_g, frac)

    prog.cells = cells
    prog.propose = lambda k, inv_g: _polar_propose(k, sigma, inv_g)
    prog.finish = lambda rows, frac, inv_g: _polar_finish(rows, frac, sigma * inv_g)
    prog.oversample = 4.0 / math.pi  # 1 / P(accept)
    return prog, 2, 2


#: Relative slack on every fused radius (covers the roundings made computing the radius).
_FUSED_SLACK = 1.0 + 2.0**-20


_RHO = 2.0**-49  # >= the error of fl(cu^2 + cv^2): (|cu| + |cv|) 2^-52 + s 2^-51 + 2^-105
_S_MIN = 2.0**-39  # a smaller s is left undecided (probability ~ 2^-40 per proposal)


def _polar_propose(k, sigma, inv_g):
    """Accept/reject masks and per-row data ``(cu, cv, s)`` of the polar method.

    Derivation (every quantity is a float64 array over proposals):

    * ``cu = (2k + 1) 2^-53 - 1`` is exact and within ``2^-53`` of the real ``u`` (same for
      v), so ``|u^2 - cu^2| <= |cu| 2^-52 + 2^-106`` and ``s_m = fl(cu^2 + cv^2)`` (two
      products and a sum, each rounded once) is within the per-row ``rho_r = (|cu| + |cv|)
      2^-52 + s_m 2^-51 + 2^-104`` of the real s; ``rho_r <= rho = 2^-49`` always. Accept for
      sure iff ``S_MIN < s_m < 1 - rho``, reject for sure iff ``s_m >= 1 + rho``, otherwise
      undecided (the exact in-order path).
    * For an accepted proposal, ``rho_r <= sqrt(2.01 s_m) 2^-52 + s_m 2^-51 + 2^-104 <= s_m
      2^-10`` (as ``s_m > 2^-39``), so every real s' within rho_r of s_m has ``s' >= s_m (1 -
      2^-10)`` and ``L(s') <= L + 2^-9`` (``L = -log s_m``). ``Q(s) = -2 log s / s`` has
      ``|Q'(s')| = 2 (1 + L(s')) / s'^2 <= 2.01 (1.002 + L) / s_m^2``, and the computed ``Q_m
      = fl(fl(2 L_m) / s_m)`` errs by at most ``Q 2^-43.9`` (libm ``log`` within ``2^-44``
      relative, two roundings). So ``|Q(s) - Q_m| <= rQ = 2.01 rho_r (1.002 + L) / s_m^2 +
      Q_m 2^-43.9``. (The per-row rho_r, about ``sqrt(s) 2^-51.5`` for small s, keeps the
      rows with a small s decidable: the global rho made about 1 cell in 5,000 undecided.)
    * ``h = sqrt(Q)``: ``|sqrt(Q) - h_m| <= rQ / h_m + h_m 2^-52`` (``|sqrt a - sqrt b| <=
      |a - b| / sqrt b`` and one rounding of the square root).
    * With ``f = sigma / g`` (exact scaling), ``hc = fl(h_m f)`` and ``x = fl(fl(hc cu) +
      frac)``: ``|x - (frac + u h sigma / g)| <= rh f + (2 h_m f + 1) 2^-51`` (the width
      ``2^-53`` of u times ``h f``, and three roundings), below ``R = (rh + h_m 2^-49)
      f _FUSED_SLACK + 2^-49``. ``hc < 2^48`` (``h <= 2^22.4`` for ``s > S_MIN`` and
      ``f < 2^25``), so ``x - round(x)`` is exact and a cell is certain iff
      ``|x - round(x)| < 1/2 - R``. ``_FUSED_SLACK`` also covers the roundings made while
      computing the radii.
    """
    # Only the cheap accept test runs on every proposal; the radius (``_polar_finish``) runs
    # on the accepted ones after the engine's gather (a fifth of the work saved, and three
    # arrays gathered instead of four). In place where possible: fresh arrays page-fault.
    cu = k[:, 0] * 2.0**-52
    cu += 2.0**-53 - 1.0
    cv = k[:, 1] * 2.0**-52
    cv += 2.0**-53 - 1.0
    s = cu * cu
    s += cv * cv
    acc = s > _S_MIN
    acc &= s < 1.0 - _RHO
    rej = s >= 1.0 + _RHO
    return acc, rej, (cu, cv, s)


def _polar_finish(rows, frac, f):
    """Cells ``round(frac + (cu, cv) hc)`` and whether each is certain, for selected rows.

    ``rows = (cu, cv, s)`` of ``_polar_propose``, ``f = sigma / g``; the radius is the one
    derived there (computed here, on the accepted proposals only).
    """
    cu, cv, s = rows
    L = np.log(s)
    np.negative(L, out=L)
    Q = L * 2.0
    Q /= s
    rho = np.abs(cu)  # rho_r = (|cu| + |cv|) 2^-52 + s 2^-51 + 2^-104
    t = np.abs(cv)
    rho += t
    rho *= 2.0**-52
    rho += np.multiply(s, 2.0**-51, out=t)
    rho += 2.0**-104
    rQ = L  # 2.01 rho_r (1.002 + L) / s^2 (L is not needed after this)
    rQ += 1.002
    rQ /= s
    rQ /= s
    rQ *= rho
    rQ *= 2.01
    h = np.sqrt(Q, out=Q)
    # rh + h 2^-49 = rQ / h + h 2^-49 <= (2.01 rho_r (1.002 + L) / s^2) / h + h 2^-43.85:
    # the libm term Q 2^-43.9 / h is h 2^-43.9 up to one rounding, and 2^-43.9 + 2^-49 <
    # 2^-43.85 (rh's own rounding term 2^-52 is inside)
    rQ /= h
    rQ += np.multiply(h, 2.0**-43.85, out=t)
    rQ *= f * _FUSED_SLACK
    lim = np.subtract(0.5 - 2.0**-49, rQ, out=rQ)  # lim = 1/2 - R
    h *= f  # hc
    x = np.empty((cu.shape[0], 2))
    np.multiply(cu, h, out=x[:, 0])
    np.multiply(cv, h, out=x[:, 1])
    x += frac
    n = np.round(x)
    x -= n
    np.abs(x, out=x)
    return n, x < lim[:, None]


def _polar_cells(k, sigma, inv_g, frac):
    """Fused float64 cells of the polar method (derivation: ``_polar_propose``).

    Returns ``(n, certain, sign)`` for every proposal (sign +1 accept, -1 reject, 0 undecided;
    the cells of rejected or undecided rows are not certain).
    """
    acc, rej, rows = _polar_propose(k, sigma, inv_g)
    n, certain = _polar_finish(rows, frac, sigma * inv_g)
    sign = acc.astype(np.int8) - rej.astype(np.int8)
    return n, certain & acc[:, None], sign


# proposal switch: Laplace(rate b) accepts Z b / 2, N(0, 1) accepts Z / sqrt(2 pi) (Z the
# normaliser of exp(-rho_b)); the Laplace proposal wins iff b > 2 / sqrt(2 pi). Public.
_FH_SWITCH = 2.0 / math.sqrt(2.0 * math.pi)


def _flipped_huber(b, gamma):
    """Exact rejection sampler of FH with shape b (density prop. to exp(-rho_b(t))) times gamma.

    * b > 0.798: propose S = s E / b (Laplace, rate b); ``exp(-rho_b(S) + b|S|) =
      exp(-max(|S| - b, 0)^2 / 2)``; accept iff ``E' >= max(|S| - b, 0)^2 / 2``, E' ~ Exp(1).
    * otherwise: propose Z ~ N(0, 1); ``exp(-rho_b(Z) + Z^2/2) = exp(-D)`` with
      ``D = t (b - t/2)``, ``t = min(|Z|, b)``; accept iff ``E' >= D``.
    Both ratios are <= 1 and the accept test is decided exactly like the cells.
    """
    if b > _FH_SWITCH:

        def prog(bk, U, S):
            mag = bk.neglog(U[:, :1]) * (1.0 / b)
            t = bk.maximum(mag - b, 0.0)
            accept = bk.neglog(U[:, 1:]) - t * t * 0.5
            return mag * (S[:, :1] * gamma), accept

        prog.signs = True
        return prog, 2, 1

    def prog(bk, U, S):
        z = _gaussian_pairs(bk, U[:, :1], U[:, 1:2])[:, :1]
        t = bk.minimum(bk.abs(z), b)
        accept = bk.neglog(U[:, 2:]) - t * (b - t * 0.5)
        return z * gamma, accept

    return prog, 3, 1


# ---------------------------------------------------------------------------------------------
# the engine
# ---------------------------------------------------------------------------------------------
_SIGN_BIT = np.uint64(63)
_ONE_BITS = np.uint64(0x3FF0000000000000)  # the bit pattern of the float64 1.0


def _keys(words):
    """The top 53 bits ``k`` of each word as exact float64 (``U`` in ``[k, k + 1] 2^-53``).

    ``k < 2^53`` fits an int64 and is exactly representable; numpy converts int64 to float64
    several times faster than uint64, hence the view.
    """
    return (words >> np.uint64(11)).view(np.int64).astype(np.float64)


def _signs(words):
    """The lowest bit ``b`` of each word as the fair sign ``1 - 2 b`` (+-1.0), exactly.

    Built from bits: ``b`` moved to the sign bit of the float64 1.0 gives ``(-1)^b``; this is
    independent of the top 53 bits (``_keys``).
    """
    return ((words << _SIGN_BIT) | _ONE_BITS).view(np.float64)


def _fast_cells(Y, inv_g, frac):
    """Cells ``round(Y / g + frac)`` of the balls Y and whether each is certain (float64).

    ``inv_g`` is a power of two, so ``Y.m * inv_g`` is exact unless it over/underflows (an
    infinite midpoint is undecided; ``_TINY`` covers underflow); the addition of the exact
    ``frac`` rounds once. The cell is certain when the ball avoids both half-integers.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        m = Y.m * inv_g
        m += frac
        r = Y.r * (inv_g * _GROW)
        t = np.abs(m)
        t *= _OP
        r += t
        r *= 1.0001
        r += 2.0**-50 + _TINY
        n = np.round(m)
        f = m - n  # exact for |m| < 2**51 (Sterbenz)
        np.abs(f, out=f)
        np.subtract(0.5, f, out=f)
        certain = (f > r) & (np.abs(m) < 2.0**51)  # False for NaN and inf
    return n, certain


def _fast_sign(a):
    """+1 where the ball is certainly > 0, -1 certainly < 0, 0 undecided."""
    with np.errstate(invalid="ignore"):
        bound = a.r * 1.0001 + _TINY
        return np.where(a.m > bound, 1, np.where(-a.m > bound, -1, 0))


def _slow_row(prog, q, words, value, e, rng, has_accept):
    """Refine one row in arb until decided: returns the integer cells, or None (rejected)."""
    signs = np.where((words & np.uint64(1)) == 1, -1.0, 1.0)[None, :]
    nums = [int(w) >> 11 for w in words]
    return _refine_row(prog, nums, [53] * q, signs, value, e, rng, has_accept)


def _refine_row(prog, nums, bits, signs, value, e, rng, has_accept):
    """``_slow_row`` from uniforms already known to ``bits[j]`` bits: ``U_j`` in ``[nums[j],
    nums[j] + 1] 2^-bits[j]``. Every round draws 64 more bits of every uniform."""
    from flint import arb, ctx

    q = len(nums)
    bits = list(bits)
    old_prec = ctx.prec
    try:
        while True:
            extra = random_words(rng, q)
            nums = [(nk << _SLOW_EXTRA_BITS) | int(w) for nk, w in zip(nums, extra)]
            bits = [b + _SLOW_EXTRA_BITS for b in bits]
            ctx.prec = max(bits) + 64
            U = np.empty((1, q), dtype=object)
            for j, (nk, b) in enumerate(zip(nums, bits)):
                half = arb(2) ** (-(b + 1))
                U[0, j] = arb(arb(2 * nk + 1) * half, half)  # [nk, nk + 1] / 2^b
            Y, accept = prog(_ArbBackend, U, signs)
            if has_accept:
                acc = accept[0, 0]
                if acc < 0:
                    return None
                if not acc > 0:
                    continue
            g = arb(2) ** e
            cells = [
                ((arb(value[i]) + Y[0, i]) / g + 0.5).floor().unique_fmpz()
                for i in range(Y.shape[1])
            ]
            if all(c is not None for c in cells):
                return [int(c) for c in cells]
    finally:
        ctx.prec = old_prec


# Chunk sizes (measured, loaded 2-core machine): every numpy call costs ~1 us whatever its
# size, so a chunk needs many rows; but every fresh large temporary is page-faulted, so a
# chunk of a short-row sampler stays at about _CHUNK_WORDS words. _MAX_WORDS bounds the
# size of long rows (high dims): 1 MiB per temporary (measured: faster than 4 MiB).
_CHUNK_WORDS = 16384
_MIN_ROWS = 8192
_MAX_WORDS = 2**17


def _release(sampler, values, e, rng):
    """Run ``sampler = (prog, q, m)`` on every row of ``values`` (shape (n, m)), by chunks."""
    q = sampler[1]
    step = max(1, min(_MIN_ROWS, _MAX_WORDS // q), _CHUNK_WORDS // q)
    if values.shape[0] <= step:
        return _release_chunk(sampler, values, e, rng)
    out = np.empty_like(values)
    for i in range(0, len(values), step):
        out[i : i + step] = _release_chunk(sampler, values[i : i + step], e, rng)
    return out


def _release_rejection(prog, q, values, vint, vfrac, e, rng):
    """Rows of a rejection sampler with a fused float64 accept test and cell routine.

    Proposals are drawn in a batch of about ``todo / P(accept)`` rows and examined *in order*:
    the i-th accepted proposal serves the i-th pending value (accepted proposals are iid from
    the target law, whatever their positions). Undecided accept tests (astronomically rare)
    switch to an in-order loop that decides each in arb; undecided cells go to ``_slow_row``.
    """
    g = 2.0**e
    out = np.empty_like(values)
    todo = np.arange(values.shape[0])
    while todo.size:
        # enough proposals for all pending rows with high probability (mean + 4 sd + 8)
        size = int(todo.size * prog.oversample + 4.0 * math.sqrt(todo.size) + 8)
        words = random_words(rng, (size, q))
        k = _keys(words)
        with np.errstate(all="ignore"):
            acc, rej, rows = prog.propose(k, 1.0 / g)
        if not np.all(acc | rej):  # an undecided test (astronomically rare)
            sign = acc.astype(np.int8) - rej.astype(np.int8)
            todo = _rejection_in_order(
                prog, q, words, k, sign, values, vint, vfrac, todo, e, rng, out
            )
            continue
        idx = np.flatnonzero(acc)[: todo.size]
        # the first pass serves rows 0, 1, ... in order: slices instead of gathers
        first = todo[0] == 0 and todo[-1] == todo.size - 1
        tgt = slice(0, idx.size) if first else todo[: idx.size]
        with np.errstate(all="ignore"):
            cells, certain = prog.finish(tuple(a[idx] for a in rows), vfrac[tgt], 1.0 / g)
        cells += vint[tgt]
        cells *= g
        out[tgt] = cells
        tgt = todo[: idx.size]
        failed = []
        unsure = [] if certain.all() else np.unique(np.nonzero(~certain)[0])
        for j in unsure:
            got = _slow_row(prog, q, words[idx[j]], values[tgt[j]], e, rng, True)
            if got is None:  # cannot happen for a sure accept; redraw to stay exact anyway
                failed.append(tgt[j])
            else:
                out[tgt[j]] = _grid_values(got, g)
        todo = np.concatenate([todo[idx.size :], np.asarray(failed, dtype=todo.dtype)])
    return out


def _rejection_in_order(prog, q, words, k, sign, values, vint, vfrac, todo, e, rng, out):
    """The in-order loop of ``_release_rejection`` for a batch with an undecided test."""
    g = 2.0**e
    t = 0
    for i in range(words.shape[0]):
        if t == todo.size:
            break
        if sign[i] < 0:
            continue
        row = todo[t]
        got = None
        if sign[i] > 0:
            with np.errstate(all="ignore"):
                cells, certain = prog.cells(k[i : i + 1], None, 1.0 / g, vfrac[row : row + 1])[:2]
            if certain.all():
                got = [int(c) for c in (vint[row] + cells[0])]
        if got is None:
            got = _slow_row(prog, q, words[i], values[row], e, rng, True)
            if got is None:
                continue
        out[row] = _grid_values(got, g)
        t += 1
    return todo[t:]


def _split_values(values, e):
    """``values / g`` split exactly into ``(vint, vfrac, exact)``, ``g = 2**e``.

    ``vint`` is an integer-valued float and ``0 <= vfrac < 1``, so that ``x = vfrac + Y / g``
    stays small and its cell is resolvable in float64. ``exact`` is None when every element
    was scaled exactly, else a boolean mask: rows with a False entry must go to the exact
    (arb) path (their ``vint``/``vfrac`` are 0).
    """
    with np.errstate(all="ignore"):
        vg = values * 2.0**-e  # a power of two (e >= -1022): exact unless it over/underflows
        # scaling up (e <= 0) never rounds short of overflow, and the values are finite: one
        # bound on max |value| decides every element (the common case, in one reduction)
        # (max and min rather than max |.|: two reductions, no temporary array)
        lim = 2.0 ** (1023 + e) if e <= 0 else 0.0
        all_exact = e <= 0 and (
            values.size == 0 or bool(np.max(values) < lim and np.min(values) > -lim)
        )
        exact = None  # None: every element is exact
        if not all_exact:
            # vg * g == values (so vg is finite) and, when scaling down (e > 0), vg normal or
            # 0 => vg = values / g exactly
            exact = vg * 2.0**e == values
            if e > 0:
                exact &= (vg == 0) | (np.abs(vg) >= 2.0**-1021)
            if bool(exact.all()):
                exact = None
    if exact is not None:
        vg = np.where(exact, vg, 0.0)
    vint = np.floor(vg)
    vfrac = vg - vint  # exact
    return vint, vfrac, exact


def _release_chunk(sampler, values, e, rng):
    prog, q, m = sampler
    n_rows = values.shape[0]
    g = 2.0**e
    vint, vfrac, exact = _split_values(values, e)
    all_exact = exact is None
    if getattr(prog, "chunk", None) is not None:  # a sampler with its own fused chunk routine
        return prog.chunk(values, vint, vfrac, exact, e, rng)
    if all_exact and getattr(prog, "propose", None) is not None:
        return _release_rejection(prog, q, values, vint, vfrac, e, rng)
    out = None
    pending = None  # every row (the first pass), then the rows still to do
    first = True
    while first or pending.size:
        words = random_words(rng, (n_rows if first else pending.size, q))
        k = _keys(words)
        S = _signs(words) if getattr(prog, "signs", False) else None
        frac = vfrac if first else vfrac[pending]
        with np.errstate(all="ignore"):  # inf/NaN balls are simply undecided
            fused = getattr(prog, "cells", None)
            if fused is not None:  # a fused float64 routine: (cells, certain[, accept sign])
                got = fused(k, S, 1.0 / g, frac)
                cells, certain = got[0], got[1]
                sign = got[2] if len(got) > 2 else None
            else:
                Y, accept = prog(_FloatBackend, k, S)
                cells, certain = _fast_cells(Y, 1.0 / g, frac)
                sign = None if accept is None else _fast_sign(accept)[:, 0]
        if first and sign is None and all_exact:
            # the common case: every cell certain in one pass (in place: fresh arrays are
            # costly page faults at this size)
            cells += vint
            cells *= g
            out = cells
            if not certain.all():  # rare: refine only the rows with an undecided cell
                for i in np.unique(np.nonzero(~certain)[0]):
                    got = _slow_row(prog, q, words[i], values[i], e, rng, False)
                    out[i] = _grid_values(got, g)
            return out
        if first:
            out = np.empty_like(values)
            pending = np.arange(n_rows)
        first = False
        row_ok = certain.all(axis=1)
        if exact is not None:
            row_ok &= exact[pending].all(axis=1)
        retry = np.zeros(pending.size, dtype=bool)
        if sign is not None:
            retry = sign < 0
            row_ok &= sign > 0
        done = row_ok
        rows = pending[done]
        out[rows] = (vint[rows] + cells[done]) * g
        for i in np.flatnonzero(~done & ~retry):
            row = pending[i]
            got = _slow_row(prog, q, words[i], values[row], e, rng, sign is not None)
            if got is None:
                retry[i] = True
            else:
                out[row] = _grid_values(got, g)
        pending = pending[retry]
    return out


def _grid_values(cells, g):
    """The released floats ``N * g`` of the integers ``N`` of a row (``g`` a power of two).

    Correctly rounded, and ``+-inf`` where that overflows: a function of ``N`` alone, as the
    release must be. ``float(N) * g`` rounds once (scaling by a power of two is exact in the
    normal range, and ``N * g >= g >= 2^-1022``), but ``float(N)`` itself raises for
    ``|N| >= 2^1024``, which a finite value above ``2^1023 g`` reaches (``1e302`` at scale 1,
    audit s22 F2): an exception that depended on the private value and came after the draw.
    Those rows go through the exact rational ``N * g``.
    """
    out = np.empty(len(cells))
    for i, c in enumerate(cells):
        c = int(c)
        try:
            out[i] = float(c) * g
        except OverflowError:
            try:
                out[i] = float(Fraction(c) * Fraction(g))
            except OverflowError:
                out[i] = math.inf if c > 0 else -math.inf
    return out


def _rows(value, m):
    """``value`` as rows of m coordinates (validated: finite floats)."""
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError("The value to randomise must be finite (no NaN or inf).")
    return arr, arr.reshape(-1, m)


def _up(x):
    """A float >= the real number that ``x`` (a correctly rounded result) approximates."""
    return float(np.nextafter(x, np.inf))


def release_laplace(value, sensitivity, epsilon, rng):
    """``value + Laplace(sensitivity / epsilon)`` per coordinate, released exactly on a grid.

    The scale is ``fl(sensitivity / epsilon)`` rounded *up* one ulp, so it is at least the
    real ``sensitivity / epsilon``: the release is exactly epsilon-DP for an l1 sensitivity
    ``sensitivity`` of the (float) value, with no inflation.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.noise._exact import release_laplace
    >>> z = release_laplace(np.zeros(3), 1.0, 1.0, np.random.default_rng(0))
    >>> bool(np.all(z * 2.0**24 == np.round(z * 2.0**24)))
    True
    """
    scale = _up(sensitivity / epsilon)
    arr, rows = _rows(value, 1)
    e = grid_exponent(scale)
    return _release(_laplace(scale), rows, e, rng).reshape(arr.shape)[()]


def release_gaussian(value, sigma, rng):
    """``value + N(0, sigma^2)`` per coordinate, released exactly on a grid (Box--Muller)."""
    arr = np.asarray(value, dtype=float)
    flat = _rows(arr, 1)[1].ravel()
    # pairs of values (a view when the size is even: no copy)
    padded = (flat if flat.size % 2 == 0 else np.append(flat, 0.0)).reshape(-1, 2)
    e = grid_exponent(sigma)
    out = _release(_gaussian(float(sigma)), padded, e, rng).ravel()[: flat.size]
    return out.reshape(arr.shape)[()]


def release_knorm(value, p, dim, sensitivity, epsilon, rng, polar=False, grid_bits=GRID_BITS):
    """K-norm release for the lp ball, ``1 <= p <= inf`` (l1, l2, linf and any other lp).

    ``value`` has shape ``(..., dim)``. The scale ``sensitivity / epsilon`` is rounded up.
    l1 uses iid Laplace coordinates (or, ``polar=True``, the ``r * U`` sampler with U uniform
    in the cross-polytope through normalised exponentials -- the same law); in dim 1 every
    ball is [-1, 1] and the law is Laplace(scale), drawn as such. Other p (``1 < p < inf``)
    use the generalised-Gaussian rejection sampler of :mod:`dpreg.noise._exact_lp`. The grid is
    ``2**grid_exponent(scale, grid_bits)`` (see :func:`dpreg.noise._grid.grid_exponent`).
    """
    scale = _up(sensitivity / epsilon)
    arr, rows = _rows(value, dim)
    e = grid_exponent(scale, grid_bits)
    if (p == 1 and not polar) or dim == 1:
        # iid Laplace coordinates are the l1 K-norm law; in dim 1 every norm is |x|, so the
        # K-norm density exp(-|x| / scale) is Laplace(scale) for l2 and linf too: the same
        # law through the fastest exact sampler
        return _release(_laplace(scale), rows.reshape(-1, 1), e, rng).reshape(arr.shape)[()]
    if p not in (1, 2, math.inf):  # 1 < p < inf: the generalised-Gaussian rejection sampler
        from ._exact_lp import release_lp  # noqa: PLC0415

        return release_lp(rows, p, scale, e, rng).reshape(arr.shape)[()]
    sampler = {1: _knorm_l1_polar, 2: _knorm_l2, math.inf: _knorm_linf}[p](dim, scale)
    return _release(sampler, rows, e, rng).reshape(arr.shape)[()]


def release_flipped_huber(value, b, gamma, rng):
    """``value + gamma * S`` per coordinate, S exactly of density prop. to exp(-rho_b(s)).

    ``b`` is the shape ``alpha / gamma`` exactly as the float the calibration used. The grid
    follows the smaller of the two public scales of the law: ``gamma`` (Gaussian tails) and
    ``gamma / b`` (the Laplace core), so it is fine for Laplace-like shapes too.
    """
    arr, rows = _rows(value, 1)
    e = grid_exponent(gamma * min(1.0, 1.0 / b) if b > 0 else gamma)
    return _release(_flipped_huber(float(b), float(gamma)), rows, e, rng).reshape(arr.shape)[()]


def hardened_p(ball):
    """The p of an lp ball (every lp ball, ``1 <= p <= inf``, has an exact grid release), else
    None (polytope and membership-oracle balls)."""
    return ball.p if isinstance(ball, LpBall) else None


def float_knorm_sample(ball, scale, n, rng):
    """The plain float64 K-norm sampler ``r * U`` (r ~ Gamma(dim + 1, scale), U uniform in K).

    Not floating-point safe: kept for balls without an exact release and as the reference
    (the "old" sampler) in the benchmark and the distinguisher tests.
    """
    r = rng.gamma(ball.dim + 1.0, scale, size=(n, 1))
    return r * ball.sample_uniform(n, random_state=rng)


def release_knorm_ball(value, ball, sensitivity, epsilon, rng, polar=False):
    """K-norm release for any ball: exact for lp balls, else grid-snapped (uncertified).

    For polytope and membership-oracle balls the sample is the
    float64 ``r * U`` draw snapped to the same grid; this removes the low-bit patterns of
    the float sum that the distinguisher tests look for, but it is *not* certified (the cell
    of the float draw may differ from the ideal one, by an amount nobody has bounded).
    """
    p = hardened_p(ball)
    if p is not None:
        return release_knorm(value, p, ball.dim, sensitivity, epsilon, rng, polar=polar)
    scale = _up(sensitivity / epsilon)
    arr, rows = _rows(value, ball.dim)
    noisy = rows + float_knorm_sample(ball, scale, rows.shape[0], rng)
    # The noise's own size is scale times the ball's extent (a polytope need not be a unit
    # ball): take the grid from the smallest public half-width so it stays far finer than the
    # noise in every coordinate (a unit-scale grid rounded 1e-10-sized noise to exactly 0).
    widths = getattr(ball, "half_widths", None)
    extent = float(np.min(widths)) if widths is not None else 1.0
    if not (math.isfinite(extent) and extent > 0.0):
        extent = 1.0
    return snap(noisy, scale * extent).reshape(arr.shape)[()]


def snap(value, scale):
    """Round ``value`` to the grid of ``scale`` (for samplers that are *not* hardened).

    This removes the low-bit pattern of the float sum but certifies nothing: the cell of a
    float sample may differ from the cell of the ideal sample (see the docs).
    """
    e = grid_exponent(scale)
    return np.round(np.ldexp(np.asarray(value, dtype=float), -e)) * 2.0**e
