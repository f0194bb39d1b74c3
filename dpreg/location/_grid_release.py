"""Floating-point-safe release of the median's exact sampler (issue #11).

The exact sampler (:class:`~dpreg.location._sampler.ExactSampler`) is, in exact arithmetic,
a fixed function of independent real uniforms: a proposal ``(G, V)`` with ``G ~ Gamma(d + 1)``
(``-sum_{j=0}^{d} log U_j``) and ``V`` uniform in ``[0, 1]^d``, the point
``x' = m0 + kappa (G - a) + (G W / 2) * (2 V - 1)`` and the level ``t = t_lo + (G - a) / c``,
accepted iff ``G > a`` and ``t sigma_u - |u^T x' - mu_u| > 0`` for every direction u. The
first accepted proposal is released as ``x = x0 + s x'`` (the sampler's centring frame).

Computed naively in float64, the low bits of the output are not those of the ideal draw and
depend on the data in ways the (epsilon, delta) analysis does not cover (Mironov 2012). We
release instead a *deterministic function of the ideal real-valued draw*: every coordinate
rounded to :data:`SIGNIFICANT_BITS` + 1 significant bits, i.e. to the nearest multiple of
``2**(E - SIGNIFICANT_BITS)`` with ``E = floor(log2 |x_i|)``. The set of possible outputs and
the rounding map are fixed in advance (they are the numbers with at most 33 significant bits
and "round to nearest" in that set), so nothing about the data enters the grid; the release is
post-processing of the ideal mechanism and keeps its guarantee with no inflation. (The
median has no public scale -- it takes no bounds -- so a uniform grid ``2**e`` could not be
chosen without looking at the data; a relative grid needs none.)

How the ideal outcome is decided (the pattern of :mod:`dpreg.noise._exact`):

* a uniform is drawn lazily: the top 53 bits of a random 64-bit word pin it to a dyadic
  interval of width ``2**-53``; more words refine it when needed;
* the accept test and the output cells are evaluated in ball arithmetic -- vectorised float64
  balls with rigorous radii first (the assumption on libm's ``log`` is that of
  :mod:`dpreg.noise._ballarith`), python-flint ``arb`` with 64 more bits per uniform and round
  for the rare proposals whose ball straddles an accept boundary or a cell boundary;
* a proposal is accepted or rejected only when its ball decides it; proposals are examined in
  the order they were drawn, so the released value is the cell of the first accepted *ideal*
  proposal.

Float error of the inner products (fast path): ``fl(sum_j u_j x_j)`` is within
``gamma_d sum_j |u_j x_j|`` of the exact sum for any summation order (Higham, eq. 3.5; FMA
only reduces it), and the inputs' radii add ``sum_j |u_j| r_j``; each later operation adds
one rounding, charged at ``2**-50`` relative (see ``_accept_float``).
"""

from __future__ import annotations

import math

import numpy as np

from .._random import random_words
from ..noise._ballarith import _OP, _TINY, _ArbBackend, _Ball, _FloatBackend

#: Outputs carry SIGNIFICANT_BITS + 1 significant bits (relative rounding error <= 2**-33).
SIGNIFICANT_BITS = 32
_EXTRA_BITS = 64  # bits added to each uniform per round of the slow (arb) path
_MIN_EXP = -1074  # the grid never goes below the smallest subnormal spacing


class GridProposal:
    """The float constants of the proposal (exact reals once chosen) and its programs.

    Parameters are those of the module docstring, all in the sampler's centring frame:
    ``U`` (m, d) unit directions, ``mu``/``sigma`` (m,), ``c`` the inverse temperature,
    ``t_lo``, ``a`` (the Gamma truncation), ``m0``, ``kappa``, ``W`` (d,) the box, and the
    frame ``x0`` (d,), ``s``.
    """

    def __init__(self, U, mu, sigma, c, t_lo, a, m0, kappa, W, x0, s):
        self.U, self.mu, self.sigma = U, mu, sigma
        self.absU = np.abs(U)
        self.c, self.inv_c = float(c), 1.0 / float(c)
        self.t_lo, self.a = float(t_lo), float(a)
        self.m0, self.kappa, self.halfW = m0, kappa, 0.5 * W  # W / 2 is exact (power of two)
        self.x0, self.s = x0, float(s)
        self.d = U.shape[1]
        self.q = 2 * self.d + 1  # d + 1 uniforms for G, d for V

    # ---------------------------------------------------------------- the sampler program
    def _point(self, bk, u):
        """Balls of ``G - a`` (column), ``x'`` (rows, d) and ``t`` (column)."""
        if bk is _ArbBackend:
            return self._point_arb(u)
        d = self.d
        G = bk.gamma_sum(u[:, : d + 1])
        S = G - self.a
        X = (G * self.halfW) * bk.centred(u[:, d + 1 :]) + (S * self.kappa + self.m0)
        t = S * _Ball(self.inv_c, abs(self.inv_c) * _OP) + self.t_lo  # fl(1/c): one rounding
        return S, X, t

    def _point_arb(self, u):
        """The same program on one row of arb uniforms (constants entered as exact floats)."""
        from flint import arb

        d = self.d
        G = _ArbBackend.gamma_sum(u[:, : d + 1])[0, 0]
        S = G - arb(self.a)
        X = np.empty((1, d), dtype=object)
        for j in range(d):
            v = 2 * u[0, d + 1 + j] - 1
            X[0, j] = G * arb(float(self.halfW[j])) * v + (
                S * arb(float(self.kappa[j])) + arb(float(self.m0[j]))
            )
        t = S / arb(self.c) + arb(self.t_lo)
        return np.array([[S]], dtype=object), X, np.array([[t]], dtype=object)

    def _accept_float(self, S, X, t):
        """+1 certainly accepted, -1 certainly rejected, 0 undecided (float64 balls)."""
        d = self.d
        gam = d * 2.0**-53 / (1.0 - d * 2.0**-53)
        P = X.m @ self.U.T
        # error of P: gamma_d sum |u x_m| (any order) + sum |u| r; the 1.01 covers the
        # rounding of these two sums themselves
        E = (np.abs(X.m) @ self.absU.T) * (gam * 1.01) + (X.r @ self.absU.T) * 1.01
        D = P - self.mu
        T = t.m * self.sigma
        M = T - np.abs(D)
        # one rounding each for D, T, M and for M -+ R below (the 1.01 covers R's share)
        R = E + t.r * self.sigma + (np.abs(D) + np.abs(T) + 2.0 * np.abs(M)) * _OP
        R *= 1.01
        R += _TINY
        sr = S.r[:, 0] * 1.01 + np.abs(S.m[:, 0]) * _OP + _TINY
        with np.errstate(invalid="ignore"):
            rej = np.any(M + R < 0.0, axis=1) | (S.m[:, 0] + sr < 0.0)
            acc = (np.min(M - R, axis=1) > 0.0) & (S.m[:, 0] - sr > 0.0) & ~rej
        return np.where(acc, 1, np.where(rej, -1, 0)).astype(np.int8)

    def _accept_arb(self, S, X, t):
        """Same decision in arb (``True``/``False``, or ``None`` if undecided)."""
        from flint import arb

        if S[0, 0] < 0:
            return False
        undecided = not S[0, 0] > 0
        xs = [X[0, j] for j in range(self.d)]
        tt = t[0, 0]
        for u in range(self.U.shape[0]):
            p = sum((arb(float(self.U[u, j])) * xs[j] for j in range(self.d)), arb(0))
            margin = tt * arb(float(self.sigma[u])) - abs(p - arb(float(self.mu[u])))
            if margin < 0:
                return False
            if not margin > 0:
                undecided = True
        return None if undecided else True

    # ---------------------------------------------------------------- the output cells
    def _cells_float(self, X):
        """Released values of one accepted row (1-D array) or ``None`` if a cell is undecided."""
        out = X * self.s + self.x0  # ball of x = x0 + s x'
        # widen by 2**-50 |m|: covers the rounding of m -+ r (at most 2**-53 of the result)
        r = out.r * 1.01 + np.abs(out.m) * _OP + _TINY
        lo, hi = out.m - r, out.m + r
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            return None
        if not np.all((lo > 0) | (hi < 0)):
            return None
        e_lo = np.frexp(np.abs(lo))[1]
        e_hi = np.frexp(np.abs(hi))[1]
        if not np.all(e_lo == e_hi):
            return None
        g_exp = np.maximum(e_lo - 1 - SIGNIFICANT_BITS, _MIN_EXP)
        n_lo = np.floor(np.ldexp(lo, -g_exp) + 0.5)  # exact: |x / g| < 2**(SIGNIFICANT_BITS + 2)
        n_hi = np.floor(np.ldexp(hi, -g_exp) + 0.5)
        if not np.all(n_lo == n_hi):
            return None
        return np.ldexp(n_lo, g_exp)

    def _cells_arb(self, X):
        from flint import arb

        vals = []
        for j in range(self.d):
            o = X[0, j] * arb(self.s) + arb(float(self.x0[j]))
            if not (o > 0 or o < 0):
                return None
            mag = abs(o)
            e = math.frexp(float(o.mid()))[1] - 1
            if not (mag >= arb(2) ** e and mag < arb(2) ** (e + 1)):
                return None
            g_exp = max(e - SIGNIFICANT_BITS, _MIN_EXP)
            n = (o * arb(2) ** (-g_exp) + arb(0.5)).floor().unique_fmpz()
            if n is None:
                return None
            vals.append(math.ldexp(float(int(n)), g_exp))
        return np.array(vals)

    # ---------------------------------------------------------------- the engine
    def _slow(self, words, rng):
        """Refine one proposal in arb: its released values, or ``None`` if rejected."""
        from flint import arb, ctx

        nums = [int(w) >> 11 for w in words]
        bits = 53
        old_prec = ctx.prec
        try:
            while True:
                extra = random_words(rng, self.q)
                nums = [(nk << _EXTRA_BITS) | int(w) for nk, w in zip(nums, extra, strict=True)]
                bits += _EXTRA_BITS
                ctx.prec = bits + 64
                half = arb(2) ** (-(bits + 1))
                u = np.empty((1, self.q), dtype=object)
                for j, nk in enumerate(nums):
                    u[0, j] = arb(arb(2 * nk + 1) * half, half)  # [nk, nk + 1] / 2^bits
                S, X, t = self._point(_ArbBackend, u)
                ok = self._accept_arb(S, X, t)
                if ok is False:
                    return None
                if ok is None:
                    continue
                cells = self._cells_arb(X)
                if cells is not None:
                    return cells
        finally:
            ctx.prec = old_prec

    def draw(self, rng, size, batch, budget=None):
        """Up to ``size`` released points (the first accepted proposals, in order) and the
        number of proposals examined; stops early after ``budget`` proposals (an int)."""
        out, used = [], 0
        while len(out) < size and (budget is None or used < budget):
            words = random_words(rng, (batch, self.q))
            k = (words >> np.uint64(11)).astype(np.float64)
            with np.errstate(all="ignore"):
                S, X, t = self._point(_FloatBackend, k)
                status = self._accept_float(S, X, t)
            last = batch
            for i in np.flatnonzero(status >= 0):
                if budget is not None and used + i + 1 > budget:
                    last = budget - used
                    break
                cells = self._cells_float(X[i]) if status[i] == 1 else None
                if cells is None:
                    cells = self._slow(words[i], rng)
                if cells is not None:
                    out.append(cells)
                    if len(out) == size:
                        last = i + 1
                        break
            used += last
        return out, used
