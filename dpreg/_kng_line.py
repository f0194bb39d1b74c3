"""Exact grid release of a one-parameter KNG draw with integer jumps (private quantiles).

Target
------
For ``d = 1``, index vectors ``U_i = 1``, integer jumps ``V_i`` and a float offset ``o``, the
step gradient is ``G(theta) = o + sum_i V_i 1{theta >= c_i}`` (:class:`dpreg.kng.StepGradient`;
the private quantiles of :mod:`dpreg.tools` have ``V_i = 1``, ``o = fl(-q n)``). The release
is the centre ``c_j = L + (j + 1/2) g`` of a cell of the public grid of
:func:`dpreg._kng_grid.grid_box` (``g = 2**e`` and the aligned box ``[L, H]`` depend only on
the public interval), drawn with probability

    P(j)  ∝  exp( -s |G(c_j)| ),       j = 0, ..., J - 1,

``s <= epsilon / (2 Delta)`` (real). This is the law the box sampler targets for ``d >= 1``
(:mod:`dpreg._kng_exact`): KNG on the counting measure of the public cell centres, epsilon-DP
by the KNG argument (``|G_D(c) - G_D'(c)| <= Delta`` at every centre). Here it is drawn with
**no** float error: ``G`` is an exact integer plus the exact float ``o``.

Algorithm
---------
1. *Segments.* Record ``i`` is active at the cells ``j >= j_i``, ``j_i = ceil(c_i/g - L/g -
   1/2)`` (computed exactly: ``c_i / g`` is a power-of-two scaling, and ``ceil(y - 1/2) =
   floor(y) + [y - floor(y) > 1/2]`` with exact float operations). The distinct ``j_i`` split
   ``0..J-1`` into runs of ``m_k`` cells on which ``G = S_k + o`` with the exact integer
   ``S_k`` (an int64 cumulative sum).
2. *Segment.* Integer proposal weights ``W_k >= m_k exp(-s |S_k + o| - top) 2**B`` (float
   evaluation moved up by a rigorous error bound, then ``floor + 1``); ``k`` is drawn with
   probability ``W_k / sum W`` (exact integer draw) and accepted with probability
   ``p_k = m_k exp(-s |S_k + o| - top) 2**B / W_k <= 1``, decided exactly for a real uniform
   (float bounds first, :func:`dpreg._kng_grid.decide_below` in ``arb`` when they do not
   decide). So ``P(k, accepted) ∝ m_k exp(-s |S_k + o|)`` at every proposal.
3. *Cell.* A uniform integer among the ``m_k`` cells of the segment (exact).

Hence ``P(j) ∝ exp(-s |G(c_j)|)`` exactly, and the released float ``fl(c_j)`` (exact) clipped to
the public interval is a deterministic function of ``j``: post-processing. Derivation and the
distinguisher tests: ``docs/floating_point.md``, "The 1-D line release".
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._kng_grid import decide_below, grid_box
from ._random import random_words
from .noise.balls import LpBall

__all__ = ["line_release_applies", "sample_line_grid", "scale_down"]

_U53 = 2.0**-53
_SLACK = 2.0**-42  # relative, covers exp (libm within 2**-44) and the float products
#: The float bounds of an acceptance probability are used when its exponent errs by less
#: than this (else the test goes straight to arb); the tests set it to -1 to force arb.
_FAST_ERR = 2.0**-12


def line_release_applies(gradient, ball):
    """Whether :func:`sample_line_grid` draws this KNG exactly: ``d = 1``, every ``U_i = 1``,
    integer jumps with exact int64 sums and floats below ``2**52``, an lp norm (``|G|`` at
    ``d = 1``) and a finite offset. Depends on the gradient's structure, not on ``c``."""
    if gradient.dim != 1 or not isinstance(ball, LpBall):
        return False
    U, V = gradient.U[:, 0], gradient.V[:, 0]
    off = float(gradient.offset[0])
    if not (np.all(U == 1.0) and np.all(np.isfinite(V)) and math.isfinite(off)):
        return False
    return bool(np.all(V == np.round(V)) and np.abs(V).sum() + abs(off) < 2.0**52)


def scale_down(epsilon, sensitivity):
    """The float ``s = fl(epsilon / (2 Delta))``, moved down one ulp if it rounded up, so that
    ``s <= epsilon / (2 Delta)`` holds for the reals."""
    s = float(epsilon) / (2.0 * float(sensitivity))
    if Fraction(s) > Fraction(float(epsilon)) / (2 * Fraction(float(sensitivity))):
        s = float(np.nextafter(s, 0.0))
    return s


def _segments(c, V, L, H, g):
    """Run starts ``b_k`` (int64), lengths ``m_k`` and exact integer sums ``S_k`` of the
    active jumps on each run (cells ``j`` with ``b_k <= j < b_k + m_k``)."""
    e = int(math.frexp(g)[1] - 1)  # g = 2**e exactly
    yL = float(np.ldexp(L, -e))  # an integer, |yL| < 2**49
    J = int(np.ldexp(H, -e) - yL)
    cc = np.clip(c, L, H)  # below L: active everywhere; above H: nowhere (exact)
    y = np.ldexp(cc, -e)  # exact power-of-two scaling (see the module docstring)
    fl = np.floor(y)
    j = fl + ((y - fl) > 0.5) - yL  # ceil(y - 1/2) - yL, exact
    j = np.where(np.isnan(c), float(J), j)  # a NaN threshold never switches on
    j = j.astype(np.int64)
    if V.size and np.all(V == V[0]):  # the quantiles: one sort, no permutation needed
        js = np.sort(j)
        csum = V[0] * np.arange(1, js.size + 1, dtype=np.int64)
    else:
        order = np.argsort(j)
        js = j[order]
        csum = np.cumsum(V[order])
    # the last record of every run of equal j: S at that cell is the cumulative sum there
    ends = np.flatnonzero(np.r_[js[1:] != js[:-1], True]) if js.size else np.zeros(0, int)
    keep = ends[js[ends] < J]
    starts, S = js[keep], csum[keep]
    if starts.size == 0 or starts[0] != 0:  # the run from cell 0 has no active record
        starts = np.r_[np.int64(0), starts]
        S = np.r_[np.int64(0), S]
    m = np.diff(np.concatenate((starts, [J])))
    return starts, m, S, J


def sample_line_grid(gradient, scale, lower, upper, rng, return_info=False):
    """One exact draw of the grid release described in the module docstring.

    Parameters
    ----------
    gradient : dpreg.kng.StepGradient
        With :func:`line_release_applies` true.
    scale : float
        ``s`` (use :func:`scale_down` so that it does not exceed the real ``epsilon/(2 Delta)``).
    lower, upper : float
        The public interval.
    rng : numpy Generator

    Returns
    -------
    float (and a dict of sampler statistics, which depend on the data, if ``return_info``)

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.kng import StepGradient
    >>> from dpreg._kng_line import sample_line_grid
    >>> y = np.arange(101.0)
    >>> grad = StepGradient(np.ones((101, 1)), y, offset=[-50.5])
    >>> t = sample_line_grid(grad, 0.5, -1000.0, 1000.0, np.random.default_rng(0))
    >>> bool(abs(t - 50) < 25)
    True
    """
    g, L, H = (float(a[0]) for a in grid_box([lower], [upper]))
    V = gradient.V[:, 0].astype(np.int64)
    off = float(gradient.offset[0])
    s = float(scale)
    starts, m, S, _ = _segments(gradient.c, V, L, H, g)
    a = S.astype(float) + off  # one rounding: |a - (S + o)| <= |a| 2**-53
    lam = -s * np.abs(a)  # |lam - (-s |S + o|)| <= s |a| 2**-51 (+ underflow)
    logm = np.log(m.astype(float))
    top = float(np.max(lam + logm))
    x = lam + logm - top
    # error of x as an exponent: lam's (rho), log m (libm 2**-44 of at most 35) and the two
    # roundings of the sum (relative 2**-52 of the terms); generous constants
    err = s * np.abs(a) * 2.0**-51 + (np.abs(lam) + abs(top) + 64.0) * 2.0**-50 + 1e-300
    B = 61 - int(m.size).bit_length()
    with np.errstate(over="ignore", under="ignore"):
        W = np.floor(np.exp(x + err) * (1.0 + _SLACK) * 2.0**B).astype(np.int64) + 1
        p_mid = np.exp(x) * 2.0**B / W
    cum = np.cumsum(W)
    n_prop = 0
    while True:
        k = np.searchsorted(cum, rng.integers(0, cum[-1], size=8), side="right")
        u = (random_words(rng, 8) >> np.uint64(11)).astype(np.float64) * _U53
        for i in range(8):
            n_prop += 1
            kk = int(k[i])
            if _accepts(float(u[i]), kk, p_mid, err, m, S, off, s, top, B, W, rng):
                j = int(starts[kk]) + int(rng.integers(0, int(m[kk])))
                theta = (L / g + j + 0.5) * g  # exact: a half-integer below 2**50 times g
                theta = min(max(theta, float(lower)), float(upper))
                info = {"n_segments": int(m.size), "n_proposals": n_prop}
                return (theta, info) if return_info else theta


def _accepts(u, k, p_mid, err, m, S, off, s, top, B, W, rng):
    """``U < p_k`` for ``U = u + 2**-53 V``, decided exactly."""
    e = float(err[k])
    if e < _FAST_ERR:  # float bounds: |p - p_mid| <= p_mid (2 e + 2**-41)
        rel = 2.0 * e + 2.0**-41
        p = float(p_mid[k])
        if u + _U53 <= p * (1.0 - rel):
            return True
        if u >= p * (1.0 + rel):
            return False

    def threshold():
        from flint import arb

        lam = -arb(s) * abs(arb(int(S[k])) + arb(off))
        return arb(int(m[k])) * (lam - arb(top)).exp() * arb(2) ** B / arb(int(W[k]))

    return decide_below(u, threshold, rng)
