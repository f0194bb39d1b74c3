"""Floating-point-safe release of the median's exact sampler (issue #11).

The exact sampler (:class:`~dpreg.location._sampler.ExactSampler`) is, in exact arithmetic,
a fixed function of an exact integer draw k (the mixture component, :class:`GridProposal`) and
independent real uniforms: ``S = -sum_{j <= k} log U_j``, ``t = t_lo + S / c``, the point
``x' = lo(t) + (hi(t) - lo(t)) * V`` in the LP box, accepted iff ``U_0 Q(S) < K P(S)`` and
``t sigma_u - |u^T x' - mu_u| > 0`` for every direction u. The first accepted proposal is
released as ``x = x0 + s x'`` (the sampler's centring frame).

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
from fractions import Fraction

import numpy as np

from .._random import random_words
from ..noise._ballarith import _GROW, _LIBM_REL, _OP, _TINY, _ArbBackend, _Ball, _FloatBackend

#: Outputs carry SIGNIFICANT_BITS + 1 significant bits (relative rounding error <= 2**-33).
SIGNIFICANT_BITS = 32
_EXTRA_BITS = 64  # bits added to each uniform per round of the slow (arb) path
_MIN_EXP = -1074  # the grid never goes below the smallest subnormal spacing
#: Public cap on the arb refinement rounds of one proposal (53 + 64 * 32 = 2101 bits per
#: uniform). A round leaves an ideal draw undecided only if it lies within its ball's radius
#: (relative 2**-(bits - a few)) of an accept or cell boundary, so reaching the cap is an event
#: of probability of order 2**-2000: in practice only a defect (an undecidable cell, as values
#: below 2**-1075 were before session 9) gets there, and it then raises instead of hanging.
_MAX_ROUNDS = 32


def round_relative(x):
    """Round every coordinate of ``x`` to the nearest number with ``SIGNIFICANT_BITS + 1``
    significant bits (the exact sampler's public output set; NaN and inf pass through).

    For the opt-in approximate sampler (``hit_and_run``): its float state is not an exact
    draw, so this only puts the release in the same public set (no float low-bit patterns);
    it certifies nothing about the law.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.location._grid_release import round_relative
    >>> z = round_relative(np.array([1.0 + 2.0**-40, 0.0, -3.0]))
    >>> [float(v) for v in z]
    [1.0, 0.0, -3.0]
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore"):
        e = np.frexp(x)[1] - 1  # floor(log2 |x|) for x != 0
        g_exp = np.maximum(e - SIGNIFICANT_BITS, _MIN_EXP)
        # |x / g| < 2**(SIGNIFICANT_BITS + 2): adding 1/2 and flooring are exact
        n = np.floor(np.ldexp(x, -g_exp) + 0.5)
        out = np.ldexp(n, g_exp)
    return np.where(np.isfinite(x), out, x)


def _masked_gamma_float(kk, k):
    """Ball of ``-sum_{j <= k} log U_j`` per row (Gamma(k + 1)), U_j in [kk_j, kk_j + 1] 2^-53.

    As ``_FloatBackend.gamma_sum``: the products of the interval ends (unused factors are
    exactly 1), each product a rounding of relative 2^-53, bounded by (1 -+ q 2^-51).
    """
    q = kk.shape[1]
    used = np.arange(q)[None, :] <= np.asarray(k)[:, None]
    lo = np.prod(np.where(used, kk * 2.0**-53, 1.0), axis=1)[:, None]
    hi = np.prod(np.where(used, (kk + 1.0) * 2.0**-53, 1.0), axis=1)[:, None]
    slack = q * 2.0**-51
    lo = lo * (1.0 - slack)
    lo = np.where(lo < 2.0**-1000, 0.0, lo)  # near underflow: undecided (slow path)
    hi = hi * (1.0 + slack)
    with np.errstate(divide="ignore"):
        a, b = -np.log(hi), -np.log(lo)
    m = 0.5 * (a + b)
    r = 0.5 * (b - a) * _GROW + np.abs(b) * _LIBM_REL + np.abs(m) * _OP + _TINY
    return _Ball(m, r)


class GridProposal:
    """The proposal's constants (exact reals once chosen) and its programs.

    In the sampler's centring frame: ``U`` (m, d) unit directions, ``mu``/``sigma`` (m,),
    ``c`` the inverse temperature, ``t_lo`` (the LP boxes have non-negative widths from
    there on, exactly), the LP box ``[a_lo + g_lo t, a_hi + g_hi t]`` (floats, (d,) each) and
    the frame ``x0`` (d,), ``s`` (a scalar, or (d,): one scale per coordinate).

    With ``S = c (t - t_lo)`` the box volume is the polynomial ``P(S) = prod_i (A_i + B_i S)``
    (exact rational coefficients ``p_k``). A component k is drawn with probability
    ``N_k / sum N`` for the integers ``N_k = ceil(K p_k k!)`` (K a power of two making the
    largest about 2**40), S ~ Gamma(k + 1) (a sum of k + 1 exponentials), x uniform in the box
    at ``t = t_lo + S / c``; the proposal density of S is ``∝ e^{-S} Q(S)``,
    ``Q(S) = sum_k (N_k / k!) S^k >= K P(S)``. Accepting with probability ``K P(S) / Q(S)``
    (a uniform compared in ball arithmetic) and iff ``O(x) <= t`` leaves the joint density
    ``∝ e^{-c t} 1{O(x) <= t}``: the target, exactly (docs/projection_median.md, section 5).
    """

    def __init__(self, U, mu, sigma, c, t_lo, a_lo, g_lo, a_hi, g_hi, x0, s):
        self.U, self.mu, self.sigma = U, mu, sigma
        self.absU = np.abs(U)
        self.c, self.inv_c = float(c), 1.0 / float(c)
        self.t_lo = float(t_lo)
        self.a_lo, self.g_lo, self.a_hi, self.g_hi = a_lo, g_lo, a_hi, g_hi
        self.d = U.shape[1]
        # s is one scale (the general frame) or one per coordinate (the axis frame of
        # ExactSampler._init_axes); either way x = x0 + s * x' coordinate-wise
        self.x0 = np.asarray(x0, dtype=float)
        self.s = np.broadcast_to(np.asarray(s, dtype=float), (self.d,))
        self.q = 2 * self.d + 2  # 1 for the correction, d + 1 for S, d for the point
        self._mixture()

    def _mixture(self):
        fc, ft = Fraction(self.c), Fraction(self.t_lo)
        poly = [Fraction(1)]
        for i in range(self.d):
            A = Fraction(float(self.a_hi[i])) - Fraction(float(self.a_lo[i]))
            B = Fraction(float(self.g_hi[i])) - Fraction(float(self.g_lo[i]))
            A, B = A + B * ft, B / fc  # width at t = t_lo + S / c is A + B S
            if A < 0 or B <= 0:
                raise ValueError("the LP boxes must have widths >= 0 from t_lo on.")
            nxt = [Fraction(0)] * (len(poly) + 1)
            for k, pk in enumerate(poly):
                nxt[k] += pk * A
                nxt[k + 1] += pk * B
            poly = nxt
        w = [pk * math.factorial(k) for k, pk in enumerate(poly)]
        top = max(w)
        e = 40 - (top.numerator.bit_length() - top.denominator.bit_length())
        if not -1000 <= e <= 1000:  # 2.0**e must be a normal float (the frame makes e small)
            raise ValueError("box polynomial out of the float range.")
        K = Fraction(2) ** e
        N = [math.ceil(wk * K) for wk in w]
        self.K_exp = e
        self.cum = np.cumsum(np.array(N, dtype=np.int64))
        self.total = int(self.cum[-1])
        qc = [Fraction(nk, math.factorial(k)) for k, nk in enumerate(N)]
        self.qc = qc
        self.qc_m = np.array([float(v) for v in qc])
        self.qc_r = np.abs(self.qc_m) * 2.0**-52 + _TINY  # float(v) within half an ulp

    def component(self, rng, size):
        """Mixture components k, exactly with probability ``N_k / sum N`` (integer draws)."""
        return np.searchsorted(self.cum, rng.integers(0, self.total, size=size), side="right")

    # ---------------------------------------------------------------- the sampler program
    def _point(self, bk, u, k):
        """Balls of the correction margin ``K P(S) - U_0 Q(S)`` (column), ``x`` (rows, d) and
        ``t`` (column), for uniforms ``u`` (rows, q) and components ``k`` (rows,)."""
        if bk is _ArbBackend:
            return self._point_arb(u, int(k[0]))
        d = self.d
        S = _masked_gamma_float(u[:, 1 : d + 2], k)
        t = S * _Ball(self.inv_c, abs(self.inv_c) * _OP) + self.t_lo  # fl(1/c): one rounding
        lo = t * self.g_lo + self.a_lo
        hi = t * self.g_hi + self.a_hi
        width = hi - lo
        X = (lo + hi) * 0.5 + (width * 0.5) * _FloatBackend.centred(u[:, d + 2 :])
        P = width[:, 0:1]
        for i in range(1, d):
            P = P * width[:, i : i + 1]
        Q = _Ball(np.full_like(S.m, self.qc_m[-1]), np.full_like(S.r, self.qc_r[-1]))
        for j in range(d - 1, -1, -1):
            Q = Q * S + _Ball(np.full_like(S.m, self.qc_m[j]), np.full_like(S.r, self.qc_r[j]))
        U0 = _Ball((u[:, :1] + 0.5) * 2.0**-53, np.full_like(S.m, 2.0**-54))
        margin = P * 2.0**self.K_exp - U0 * Q
        return margin, X, t

    def _point_arb(self, u, k):
        """The same program on one row of arb uniforms (constants entered exactly)."""
        from flint import arb

        d = self.d
        S = -(np.prod(u[0, 1 : k + 2])).log()
        t = S / arb(self.c) + arb(self.t_lo)
        X = np.empty((1, d), dtype=object)
        P = arb(1)
        for i in range(d):
            lo = arb(float(self.a_lo[i])) + arb(float(self.g_lo[i])) * t
            hi = arb(float(self.a_hi[i])) + arb(float(self.g_hi[i])) * t
            X[0, i] = lo + (hi - lo) * u[0, d + 2 + i]
            P = P * (hi - lo)
        Q = arb(0)
        for j in range(d, -1, -1):
            Q = Q * S + arb(self.qc[j].numerator) / arb(self.qc[j].denominator)
        margin = P * arb(2) ** self.K_exp - u[0, 0] * Q
        return np.array([[margin]], dtype=object), X, np.array([[t]], dtype=object)

    def _accept_float(self, S, X, t):
        """+1 certainly accepted, -1 certainly rejected, 0 undecided (float64 balls); ``S`` is
        the correction margin ``K P(S) - U_0 Q(S)``, which must be > 0 like every O-margin."""
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
        """Released values of one accepted row of arb balls, or ``None`` if a cell is undecided.

        Below ``2**(_MIN_EXP + SIGNIFICANT_BITS + 1)`` (``E <= -1042``) the spacing is
        ``2**_MIN_EXP`` whatever the exponent, so neither the sign nor E is needed (the ideal
        value may be below the smallest subnormal, or 0 after rounding). Above it, E is read
        exactly from the ball's midpoint (an exact dyadic), never through a float: a float
        midpoint underflows to 0 below ``2**-1075`` (the cell was then never decided and the
        refinement loop of :meth:`_slow` ran forever) and can round up to ``2**(E + 1)``.
        """
        from flint import arb

        small = arb(2) ** (_MIN_EXP + SIGNIFICANT_BITS + 1)
        vals = []
        for j in range(self.d):
            s_j = float(np.broadcast_to(self.s, (self.d,))[j])
            o = X[0, j] * arb(s_j) + arb(float(self.x0[j]))
            if abs(o) < small:  # certainly below: the fixed subnormal spacing
                g_exp = _MIN_EXP
            else:
                if not (o > 0 or o < 0):
                    return None
                mag = abs(o)
                man, ex = o.mid().man_exp()  # mid = man * 2**ex exactly, man != 0 here
                e = int(ex) + abs(int(man)).bit_length() - 1
                if not (mag >= arb(2) ** e and mag < arb(2) ** (e + 1)):
                    return None
                g_exp = max(e - SIGNIFICANT_BITS, _MIN_EXP)
            n = (o * arb(2) ** (-g_exp) + arb(0.5)).floor().unique_fmpz()
            if n is None:
                return None
            vals.append(math.ldexp(float(int(n)), g_exp))
        return np.array(vals)

    # ---------------------------------------------------------------- the engine
    def _slow(self, words, k, rng):
        """Refine one proposal in arb: its released values, or ``None`` if rejected; at most
        ``_MAX_ROUNDS`` rounds (a public bound on the time spent after the charge)."""
        from flint import arb, ctx

        nums = [int(w) >> 11 for w in words]
        bits = 53
        old_prec = ctx.prec
        try:
            for _ in range(_MAX_ROUNDS):
                extra = random_words(rng, self.q)
                nums = [(nk << _EXTRA_BITS) | int(w) for nk, w in zip(nums, extra, strict=True)]
                bits += _EXTRA_BITS
                ctx.prec = bits + 64
                half = arb(2) ** (-(bits + 1))
                u = np.empty((1, self.q), dtype=object)
                for j, nk in enumerate(nums):
                    u[0, j] = arb(arb(2 * nk + 1) * half, half)  # [nk, nk + 1] / 2^bits
                S, X, t = self._point(_ArbBackend, u, [k])
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
        raise RuntimeError(
            f"exact sampler: a proposal was still undecided after {bits} bits per uniform "
            "(a defect of the exact release, not a property of the data; please report it)."
        )

    def draw(self, rng, size, batch, budget=None):
        """Up to ``size`` released points (the first accepted proposals, in order) and the
        number of proposals examined; stops early after ``budget`` proposals (an int)."""
        out, used = [], 0
        while len(out) < size and (budget is None or used < budget):
            words = random_words(rng, (batch, self.q))
            kk = (words >> np.uint64(11)).astype(np.float64)
            comp = self.component(rng, batch)
            with np.errstate(all="ignore"):
                S, X, t = self._point(_FloatBackend, kk, comp)
                status = self._accept_float(S, X, t)
            last = batch
            for i in np.flatnonzero(status >= 0):
                if budget is not None and used + i + 1 > budget:
                    last = budget - used
                    break
                cells = self._cells_float(X[i]) if status[i] == 1 else None
                if cells is None:
                    cells = self._slow(words[i], int(comp[i]), rng)
                if cells is not None:
                    out.append(cells)
                    if len(out) == size:
                        last = i + 1
                        break
            used += last
        return out, used
