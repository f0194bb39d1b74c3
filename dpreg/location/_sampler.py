"""Samplers for the density ``p(x) ∝ exp(-c O(x))``, ``O(x) = max_u |u^T x - mu_u| / sigma_u``.

Exact sampler (default): layer cake + rejection
------------------------------------------------
``exp(-c O(x)) = c ∫ exp(-c t) 1{O(x) <= t} dt``, so ``p`` is the x-marginal of the joint
density ``∝ exp(-c t) 1{x in P_t}`` with ``P_t = {x : |u^T x - mu_u| <= t sigma_u for all u}``.
We propose from ``q(t, x) ∝ exp(-c t) 1{x in B_t}`` where ``B_t`` is an axis-aligned box with
``P_t ⊆ B_t`` for every t, and accept iff ``O(x) <= t``. The accepted pair has density
``∝ exp(-c t) 1{x in P_t}``; its x-marginal is exactly p. The boxes come from linear
programming duality: ``h_i(t) = max{x_i : x in P_t}`` is the value of an LP whose right-hand
side is affine in t, hence ``h_i(t) <= y^T (b + t s)`` for *every* dual-feasible y (weak
duality); the optimal dual at one t0 gives a tangent that bounds h_i for all t. Widths are
then affine in t, ``vol(B_t)`` is a polynomial with non-negative coefficients in
``t - t_lo`` and t is drawn from the matching Gamma mixture. For axis directions ("linf", one
``+-e_i`` row per coordinate) no LP is needed: in an exact per-coordinate frame ``B_t = P_t``
and every proposal is accepted up to the mixture's correction (``ExactSampler._init_axes``).

The box and x* only shape the proposal; the accept step uses the exact target, so the output
law does not depend on them. A floating-point safety margin inflates the LP boxes slightly; it
must only ever enlarge them (a rejection envelope has to contain the target's support).

The acceptance rate is about ``vol(P_t) / vol(B_t)``: near 1 for axes, around ``2^d /
vol(unit ball)`` for round polytopes, which makes the exact sampler impractical for many
general directions beyond d of about 10 (the estimator refuses it there, from public information).

Approximate sampler (opt-in): hit-and-run whose one-dimensional conditionals (exp of minus a
convex piecewise-linear function along a line) are drawn exactly; it converges to p but a
finite chain is not exact, so the DP guarantee holds only approximately.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import linalg, optimize, spatial

from . import _lp
from ._grid_release import GridProposal


def outlyingness(X, U, mu, sigma):
    """``O(x)`` for every row of ``X`` (2-D) or a single point (1-D)."""
    X = np.asarray(X, dtype=float)
    single = X.ndim == 1
    Z = np.abs(np.atleast_2d(X) @ U.T - mu) / sigma
    out = Z.max(axis=1)
    return out[0] if single else out


def projection_median_lp(U, mu, sigma):
    """The minimiser x* of O and ``O(x*)`` (LP in a centred, rescaled frame, ``_lp``)."""
    x = _lp.minimax_point(U, mu, np.zeros_like(mu), sigma)
    if x is None:
        raise RuntimeError("projection-median LP failed.")
    return x, float(outlyingness(x, U, mu, sigma))


def _support_tangents(U, mu, sigma, t0):
    """Affine-in-t upper bounds ``hi_i(t) = a_i + g_i t`` and lower ``lo_i(t) = a'_i - g'_i t``."""
    m, d = U.shape
    A = np.vstack([U, -U])
    b = np.concatenate([mu, -mu])
    s = np.concatenate([sigma, sigma])
    rhs = b + t0 * s
    out = []
    for sign in (1.0, -1.0):
        icpt, slope = np.empty(d), np.empty(d)
        for i in range(d):
            cost = np.zeros(d)
            cost[i] = -sign  # minimise -sign * x_i  <=>  maximise sign * x_i
            res = optimize.linprog(
                cost, A_ub=A, b_ub=rhs, bounds=[(None, None)] * d, method="highs"
            )
            if res.status != 0:
                raise RuntimeError(f"support LP failed: {res.message}")
            y = np.maximum(-res.ineqlin.marginals, 0.0)  # dual multipliers >= 0
            primal = -res.fun
            dual_val = float(y @ rhs)
            slope_i = float(y @ s)
            # tangent through max(primal, dual) at t0; inflate for floating point safety.
            # The pad is in the frame's units (the median scale), not coordinate i's own: the
            # HiGHS dual is feasible only to an absolute tolerance, and its residual multiplies
            # every coordinate of x, so the error of this bound is of the frame's size whatever
            # coordinate i's own extent. Axis directions, where this made coordinates with a
            # tiny scale unsampleable, never get here (ExactSampler._init_axes).
            val0 = max(primal, dual_val)
            scale = 1.0 + abs(val0) + slope_i * (1.0 + abs(t0))
            val0 += 1e-9 * scale
            icpt[i] = val0 - slope_i * t0
            slope[i] = slope_i * (1 + 1e-9)
        out.append((icpt, slope))
    (a_hi, g_hi), (a_lo, g_lo) = out
    # hi_i(t) = a_hi + g_hi t ;  lo_i(t) = -(a_lo + g_lo t)
    return a_hi, g_hi, -a_lo, -g_lo


def _parallelepiped_tangents(U, mu, sigma):
    """Closed-form affine box bounds on P_t (no LP): fallback if a support LP fails.

    For d linearly independent directions B (rows of U picked by pivoted QR), P_t lies in
    ``{x : |B x - mu_B| <= t sigma_B}``, so ``x = B^{-1} y`` and coordinate i lies within
    ``(B^{-1} mu_B)_i +- t sum_j |B^{-1}_ij| sigma_j``.
    """
    d = U.shape[1]
    _, _, piv = linalg.qr(U.T, pivoting=True)
    rows = piv[:d]
    Binv = np.linalg.inv(U[rows])
    centre = Binv @ mu[rows]
    slope = np.abs(Binv) @ sigma[rows]
    pad = 1e-9 * (1.0 + np.abs(centre) + slope)
    return centre + pad, slope * (1 + 1e-9), centre - pad, -slope * (1 + 1e-9)


class ExactSampler:
    """Exact rejection sampler for ``∝ exp(-c O(x))`` (see module docstring).

    Parameters
    ----------
    U, mu, sigma : arrays
        Directions (m, d), projected locations and scales (m,).
    c : float
        Inverse temperature.
    rng : numpy Generator
    x_star, o_star : optional precomputed minimiser and minimum.
    """

    def __init__(self, U, mu, sigma, c, rng, x_star=None, o_star=None):
        self.c, self.rng = float(c), rng
        perm = _lp.signed_permutation(U)
        if perm is not None:
            self._init_axes(U, mu, sigma, perm)
            return
        # Work in the frame x = x0 + s x' (``_lp.centring_frame``): O(x0 + s x') is the
        # outlyingness of (mu - U x0) / s, sigma / s at x', so sampling x' exactly and mapping
        # back is exact, and every LP below sees coefficients of order 1 at any data scale.
        self.x0, self.s = _lp.centring_frame(U, mu, sigma)
        mu_s, sigma_s = (mu - U @ self.x0) / self.s, sigma / self.s
        self.U, self.mu, self.sigma = U, mu_s, sigma_s
        d = U.shape[1]
        if x_star is None:
            try:
                x_star, o_star = projection_median_lp(U, mu_s, sigma_s)
            except RuntimeError:  # any point will do: x* only shapes the proposal
                x_star = np.zeros(d)
                o_star = float(outlyingness(x_star, U, mu_s, sigma_s))
        else:
            x_star = (np.asarray(x_star, float) - self.x0) / self.s
            o_star = float(outlyingness(x_star, U, mu_s, sigma_s))
        self.x_star, self.o_star = x_star, o_star
        t0 = o_star + d / self.c
        try:
            a_hi, g_hi, a_lo, g_lo = _support_tangents(U, mu_s, sigma_s, t0)
        except RuntimeError:  # a looser box in closed form; the output law is unchanged
            a_hi, g_hi, a_lo, g_lo = _parallelepiped_tangents(U, mu_s, sigma_s)
        # hi(t) = a_hi + g_hi t, lo(t) = a_lo + g_lo t (g_lo <= 0); width = A + B t
        A, B = a_hi - a_lo, g_hi - g_lo
        with np.errstate(divide="ignore", invalid="ignore"):
            roots = np.where(B > 0, -A / B, np.where(A >= 0, -np.inf, np.inf))
        t_lo = float(np.max(roots))
        if not np.isfinite(t_lo):
            t_lo = o_star
        self.t_lo = min(t_lo, o_star)
        self.t_lo = _nonnegative_widths(a_lo, g_lo, a_hi, g_hi, self.t_lo)
        self.proposal = GridProposal(
            U, mu_s, sigma_s, self.c, self.t_lo, a_lo, g_lo, a_hi, g_hi, self.x0, self.s
        )
        self.n_proposals = 0
        self.n_accepted = 0

    def _init_axes(self, U, mu, sigma, perm):
        """Axis directions (``norm="linf"``): an exact diagonal frame and ``B_t = P_t``.

        Row u is ``signs[u] e_i`` with ``i = cols[u]``, one row per coordinate. Take
        ``x0_i = signs[u] mu_u`` and ``s_i = sigma_u`` (floats, copied exactly) and map
        ``x = x0 + s * x'`` coordinate-wise. Then ``u^T x - mu_u = signs[u] s_i x'_i`` exactly
        in real arithmetic (``signs[u]^2 = 1``), so ``O(x) = max_i |x'_i|``: the frame's
        constants are ``mu' = 0``, ``sigma' = 1`` with no rounding at all, whatever the spread
        of the scales (the scalar frame of the general case divides by one median scale; a
        coordinate whose scale is 1e-14 of it then has a P_t of width ~1e-14 t there, and
        its absolute float pad of 1e-9 made the acceptance collapse; with scales more than
        the float range apart, ``sigma / s`` overflowed). ``P_t = [-t, t]^d``, and the box
        ``lo(t) = -t``, ``hi(t) = t`` (exact constants, ``t_lo = 0``) *is* P_t: no pad is
        needed to contain it, and only the mixture's ``K P(S) / Q(S)`` correction rejects.
        """
        cols, signs = perm
        d = U.shape[1]
        self.x0, self.s = np.empty(d), np.empty(d)
        self.x0[cols] = signs * mu
        self.s[cols] = sigma
        self.U, self.mu, self.sigma = U, np.zeros(d), np.ones(d)
        self.x_star, self.o_star, self.t_lo = np.zeros(d), 0.0, 0.0
        one = np.ones(d)
        self.proposal = GridProposal(
            U, self.mu, self.sigma, self.c, 0.0, -0.0 * one, -one, 0.0 * one, one, self.x0, self.s
        )
        self.n_proposals = 0
        self.n_accepted = 0

    def sample(self, size=1, max_proposals=None, batch=4096):
        """Draw ``size`` exact samples, each released on the relative grid of
        :mod:`._grid_release` (the cell of the ideal draw, decided exactly). With an int
        ``max_proposals``, raise ``RuntimeError`` after that many proposals (a data-dependent
        event: see the estimator's docstring)."""
        out = []
        while len(out) < size:
            budget = None if max_proposals is None else max_proposals - self.n_proposals
            if budget is not None and budget <= 0:
                raise RuntimeError(
                    f"exact sampler: no acceptance within {max_proposals} proposals "
                    f"(acceptance rate {self.acceptance_rate:.2e}). Use fewer directions, a "
                    "lower dimension, or the approximate sampler='hit_and_run'."
                )
            got, used = self.proposal.draw(self.rng, size - len(out), batch, budget)
            self.n_proposals += used
            self.n_accepted += len(got)
            out.extend(got)
        return np.asarray(out)

    @property
    def acceptance_rate(self):
        return self.n_accepted / self.n_proposals if self.n_proposals else float("nan")


def _nonnegative_widths(a_lo, g_lo, a_hi, g_hi, t_lo):
    """``t_lo`` nudged up (float steps) until every LP box width ``(a_hi - a_lo) + (g_hi -
    g_lo) t_lo`` is >= 0 in exact arithmetic (the mixture needs a polynomial with
    non-negative coefficients). Rounding in the root makes a nudge of a few ulps at most."""
    from fractions import Fraction

    def width(al, gl, ah, gh, ft):
        F = Fraction
        return F(float(ah)) - F(float(al)) + (F(float(gh)) - F(float(gl))) * ft

    for _ in range(64):
        ft = Fraction(t_lo)
        ok = all(width(*v, ft) >= 0 for v in zip(a_lo, g_lo, a_hi, g_hi, strict=True))
        if ok:
            return t_lo
        t_lo = float(np.nextafter(t_lo, np.inf)) + 1e-300
    raise RuntimeError("could not make the LP box widths non-negative.")


def _upper_envelope(intercepts, slopes):
    """Breakpoints and active lines of ``max_j (intercepts_j + slopes_j s)``."""
    if slopes.size > 64:
        # envelope lines are vertices of the upper convex hull of the points (slope, intercept)
        try:
            keep = spatial.ConvexHull(np.column_stack([slopes, intercepts])).vertices
            slopes, intercepts = slopes[keep], intercepts[keep]
        except spatial.QhullError:  # degenerate (e.g. collinear): use every line
            pass
    order = np.lexsort((intercepts, slopes))
    sl, ic = slopes[order], intercepts[order]
    hull = []  # indices into sl/ic
    for j in range(sl.size):
        if hull and sl[hull[-1]] == sl[j]:
            hull.pop()  # same slope, larger intercept comes later in lexsort
        while len(hull) >= 2:
            i1, i2 = hull[-2], hull[-1]
            # line i2 is useless if intersection(i1, j) <= intersection(i1, i2)
            x12 = (ic[i1] - ic[i2]) / (sl[i2] - sl[i1])
            x1j = (ic[i1] - ic[j]) / (sl[j] - sl[i1])
            if x1j <= x12:
                hull.pop()
            else:
                break
        hull.append(j)
    hs, hi = sl[hull], ic[hull]
    brk = (hi[:-1] - hi[1:]) / (hs[1:] - hs[:-1])
    return brk, hi, hs


def _sample_line(intercepts, slopes, c, rng):
    """Exact draw of s with density ``∝ exp(-c max_j(intercepts_j + slopes_j s))``."""
    brk, ic, sl = _upper_envelope(intercepts, slopes)
    edges = np.concatenate([[-np.inf], brk, [np.inf]])
    # log mass of segment k: ∫_{e_k}^{e_{k+1}} exp(-c(ic + sl s)) ds
    logm = np.empty(sl.size)
    for k in range(sl.size):
        lo, hi, a, g = edges[k], edges[k + 1], ic[k], sl[k]
        rate = c * g
        if rate == 0:
            logm[k] = -c * a + math.log(hi - lo)
        elif rate > 0:  # decreasing density; hi may be inf, lo finite
            logm[k] = -c * (a + g * lo) - math.log(rate) + math.log(-math.expm1(-rate * (hi - lo)))
        else:  # increasing density; lo may be -inf, hi finite
            logm[k] = -c * (a + g * hi) - math.log(-rate) + math.log(-math.expm1(rate * (hi - lo)))
    p = np.exp(logm - logm.max())
    k = rng.choice(sl.size, p=p / p.sum())
    lo, hi, g = edges[k], edges[k + 1], sl[k]
    rate = c * g
    u = rng.random()
    if rate == 0:
        return lo + u * (hi - lo)
    if rate > 0:
        return lo - math.log1p(-u * -math.expm1(-rate * (hi - lo))) / rate
    return hi - math.log1p(-u * -math.expm1(rate * (hi - lo))) / rate


def hit_and_run(U, mu, sigma, c, rng, x0, n_steps):
    """Approximate draw by ``n_steps`` of hit-and-run started at ``x0`` (not exact)."""
    x = np.array(x0, dtype=float)
    d = x.size
    A = np.vstack([U, -U]) / np.concatenate([sigma, sigma])[:, None]
    b = np.concatenate([mu, -mu]) / np.concatenate([sigma, sigma])
    for _ in range(n_steps):
        w = rng.standard_normal(d)
        w /= np.linalg.norm(w)
        s = _sample_line(A @ x - b, A @ w, c, rng)
        x = x + s * w
    return x
