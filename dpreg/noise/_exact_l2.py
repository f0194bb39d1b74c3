"""The fused fast path of the exact l2 K-norm release (``dpreg.noise._exact._knorm_l2``).

The law is the one of ``_knorm_l2``: ``R G / ||G||`` with ``R ~ Gamma(m, scale)`` and the
direction of an m-vector of iid Gaussians, built from Marsaglia's polar pairs (no
trigonometry). What is specific here:

* **Pairs uniform in the disc, by exact rejection** (``_disc_pairs``): proposals ``(u, v)``
  from two uniforms each are examined in order and the i-th accepted one serves the i-th
  slot (accepted proposals are iid uniform in the disc, whatever their positions). A
  proposal is accepted for sure when its float ``s`` is below ``1 - 2^-49``, rejected for
  sure above ``1 + 2^-49``, and otherwise (probability about ``2^-46``) decided exactly on
  integers with 64 more random bits per round (``_decide_disc``).
* **One rigorous radius per pair** (``_l2_fused``) instead of a ball per operation: a row
  costs about m words and ``4p / pi`` pair proposals, one ``log`` and two ``sqrt`` per pair
  and a handful of passes over the coordinates.
* Rows whose cells are undecided go to the arb refinement of the reference program
  (``_exact._refine_row``), starting from the bits already drawn (a pair decided on more
  bits keeps them, so its refinements stay inside the disc).
"""

from __future__ import annotations

import math

import numpy as np

from .._random import random_words
from ._ballarith import _LIBM_REL, _FloatBackend
from ._exact import _RHO, _S_MIN, _grid_values, _keys, _refine_row

# linearisation limit: a relative error above this is treated as undecided (the bounds below
# keep their second-order terms inside a 2^-18 relative slack only below it)
_LIN = 2.0**-20


def _decide_disc(nu, nv, rng):
    """Decide exactly whether the proposal with 53-bit keys ``nu``, ``nv`` lies in the disc.

    ``U`` in ``[n, n + 1] 2^-b`` gives ``2U - 1`` in ``[2n - 2^b, 2n + 2 - 2^b] 2^-b``; the
    extremes of ``u^2 + v^2`` over the box are exact integers in units of ``2^-2b``. Accept
    when the whole box is inside (``max < 1``), reject when it is outside (``min >= 1``; the
    boundary has measure 0), else draw 64 more bits of both uniforms. Returns ``(nu, nv,
    bits)`` for an accepted proposal, None for a rejected one.
    """
    bits = 53
    while True:
        one = 1 << (2 * bits)
        lo = hi = 0
        for n in (nu, nv):
            a, b = 2 * n - (1 << bits), 2 * n + 2 - (1 << bits)
            lo += 0 if a < 0 < b else min(a * a, b * b)
            hi += max(a * a, b * b)
        if hi < one:
            return nu, nv, bits
        if lo >= one:
            return None
        ext = random_words(rng, 2)
        nu, nv, bits = (nu << 64) | int(ext[0]), (nv << 64) | int(ext[1]), bits + 64


def _disc_pairs(need, rng):
    """``need`` pairs uniform in the disc: centred ``(cu, cv)`` (float arrays) and refined ones.

    ``cu = (2k + 1) 2^-53 - 1`` (exact) is the midpoint of ``2U - 1`` for the 53-bit key k;
    ``k = (cu + 1 - 2^-53) 2^52`` recovers it exactly. ``refined`` maps a slot to ``(nu, nv,
    bits)`` for the (astronomically rare) slots whose acceptance needed more than 53 bits;
    their 53-bit intervals still enclose them, so the float radii stay valid.
    """
    parts, refined, have = [], {}, 0
    while have < need:
        todo = need - have
        # enough proposals with high probability (mean + 4 sd + 8); a shortfall draws more
        size = int(todo * (4.0 / math.pi) + 4.0 * math.sqrt(todo) + 8)
        words = random_words(rng, (2, size))
        c = _keys(words)
        c *= 2.0**-52
        c += 2.0**-53 - 1.0  # exact
        cu, cv = c
        s = cu * cu
        s += cv * cv
        acc = s < 1.0 - _RHO  # |s - fl(s)| <= 2^-49 (_exact._polar_propose)
        local = {}
        if np.count_nonzero(s < 1.0 + _RHO) != np.count_nonzero(acc):  # an undecided test
            for i in np.flatnonzero(~acc & (s < 1.0 + _RHO)):
                got = _decide_disc(int(words[0, i]) >> 11, int(words[1, i]) >> 11, rng)
                if got is not None:
                    acc[i] = True
                    local[int(i)] = got
        idx = np.flatnonzero(acc)[:todo]
        if local:
            for pos, i in enumerate(idx):
                if int(i) in local:
                    refined[have + pos] = local[int(i)]
        parts.append((cu[idx], cv[idx]))
        have += idx.size
    if len(parts) == 1:
        return parts[0][0], parts[0][1], refined
    return (
        np.concatenate([a for a, _ in parts]),
        np.concatenate([b for _, b in parts]),
        refined,
    )


def _accurate_log(x):
    """``log x`` elementwise through arb (80 bits), within ``2^-52`` relative (faithful
    rounding of an 80-bit ball); NaN where arb gives no finite value (0): undecided."""
    from flint import arb, ctx

    old = ctx.prec
    ctx.prec = 80
    try:
        flat = [float(arb(float(v)).log().mid()) for v in np.ravel(x)]
    finally:
        ctx.prec = old
    return np.array(flat, dtype=float).reshape(np.shape(x))


#: relative error charged for ``_accurate_log`` (>= 2^-52 + arb's 2^-78 radius)
_ACCURATE_LOG_REL = 2.0**-51


def _l2_fused(kg, cu, cv, m, f, frac, log=np.log, lam=_LIBM_REL):
    """Float64 values ``x`` of ``frac + X / g`` and the certainty limits ``lim`` (shape (n, m)).

    ``kg`` (n, m): keys of R's uniforms; ``cu``, ``cv`` (n, p): centred pairs certainly inside
    the disc (``_disc_pairs``); ``f = scale / g`` (exact). A cell ``round(x)`` is certain iff
    ``|x - round(x)| < lim`` (NaN/inf give False: undecided). ``log`` is libm's (relative
    error ``lam``, the stated assumption ``_LIBM_REL``) or ``_accurate_log`` for a second,
    rarer pass. Derivation, per pair (floats; relative errors to first order, with a ``2^-18``
    slack for the higher orders, valid while every relative error is below ``_LIN = 2^-20``;
    larger ones are undecided):

    1. ``cu`` is exact and within ``2^-53`` of the real u (same for v); ``s_m = fl(cu^2 +
       cv^2)`` is within ``rho = (|cu| + |cv|) 2^-52 + s_m 2^-51 + 2^-104`` of the real s
       (``_polar_propose``). Relative: ``e_s = rho / s_m <= (|cu| + |cv|) 2^-52 / s_m +
       2^-50.9``, and ``e_s <= 2^-32`` for ``s_m > S_MIN = 2^-39`` (a row with a smaller s is
       undecided).
    2. ``L = fl(-log s_m)``, within ``lam L (1 + lam)`` of ``-log s_m``; ``|log(s / s_m)| <=
       1.001 e_s``. So ``|-log s - L| <= aE = 1.001 e_s + 1.0001 lam L``.
    3. ``Q = fl(L / s_m)`` against the real ``P = -log s / s``: relative error ``eQ <= 1.002
       (aE / L + e_s) + 2^-52 <= 1.0031 e_s (1 / L + 1) + 1.0022 lam + 2^-52``.
    4. ``h = fl(sqrt Q)`` against ``sqrt P``: relative ``eh = (eQ / 2)(1 + 2^-18) + 2^-52``.
    5. ``||G||^2`` with ``G_i = c_i sqrt(P_j)``: a full pair contributes ``(u^2 + v^2) P = -log
       s`` exactly, so ``N2 = fl(sum L)`` over the full pairs, plus ``fl(fl(cu^2) Q)`` for the
       lone ``u_p`` of an odd m. Error: ``sum aE = 1.0001 lam sum L + 1.001 sum e_s``, plus
       ``N2 p 2^-52`` (Higham's ``gamma_(p - 1)`` for the additions), plus for the lone term
       ``(|cu| 2^-52 + 2^-106) Q (1 + eQ) + cu^2 Q (eQ + 2^-51)``; ``eN2`` = that / N2.
    6. R: the ball ``(r.m, r.r)`` of ``_FloatBackend.gamma_sum`` (same ``log``), ``eR = r.r /
       r.m``. ``T = fl(fl(r.m f) / fl(sqrt N2))`` is within the relative ``eT = (eR + eN2 /
       2)(1 + 2^-18) + 2^-51`` of the real ``R scale / (g ||G||)`` (three roundings).
    7. ``A = fl(h T)`` against the real ``sqrt(P) R scale / (g ||G||)``: relative ``(eh +
       eT)(1 + 2^-18) + 2^-53``. Pairs with ``A >= 2^50`` are undecided.
    8. ``x = fl(fl(cu A) + frac)``: the real ``frac + u sqrt(P) T_real`` is within ``A (eh +
       eT)(1 + 2^-18)(1 + 2^-52) + A 2^-53`` (A's error and u's width) ``+ A 2^-53 + (A + 1)
       2^-53`` (two roundings) of x: below ``Rad = (A (eh + eT + 2^-50) + 2^-50)
       (1 + 2^-17)`` (the slack covers the ``(1 + 2^-18)(1 + 2^-52)`` factors and the
       roundings made computing the radii, relative ``2^-50`` at most). ``lim = 1/2 - Rad``;
       ``|x - round(x)|`` is exact for ``|x| < 2^51``.
    """
    n, p = cu.shape
    s = cu * cu
    s += cv * cv
    L = log(s)
    np.negative(L, out=L)
    # 1. e_s (the row sum of e_s is needed for N2 below)
    es = np.abs(cu)
    es += np.abs(cv)
    es *= 2.0**-52
    es /= s
    es += 2.0**-50.9
    es[s <= _S_MIN] = np.inf  # undecided rows (the bounds below need e_s <= 2^-10)
    # 5. N2 and its relative error (reductions along a contiguous axis: faster for short rows)
    full = m // 2
    N2 = np.ascontiguousarray(L[:, :full].T).sum(axis=0)
    aN2 = np.ascontiguousarray(es[:, :full].T).sum(axis=0)
    aN2 *= 1.001
    aN2 += N2 * (1.0001 * lam)
    # 2.-4. eh, in place in es
    Q = L / s
    np.reciprocal(L, out=L)
    L += 1.0
    es *= L
    es *= 0.5 * 1.0031 * (1.0 + 2.0**-18)
    es += 0.5 * (1.0022 * lam + 2.0**-52) * (1.0 + 2.0**-18) + 2.0**-52
    eh = es
    if m % 2:
        c = cu[:, p - 1]
        c2 = c * c
        q = Q[:, p - 1]
        eq = 2.0 * eh[:, p - 1]  # >= eQ
        N2 += c2 * q
        aN2 += (np.abs(c) * 2.0**-52 + 2.0**-106) * q * (1.0 + eq)
        aN2 += c2 * q * (eq + 2.0**-51)
    aN2 += N2 * (p * 2.0**-52)
    eN2 = np.divide(aN2, N2, out=aN2)
    # 6. T and eT (rows beyond the linearisation limit: undecided)
    r = _FloatBackend.gamma_sum(kg, log, lam)
    rm, eR = r.m[:, 0], r.r[:, 0] / r.m[:, 0]
    T = rm * f
    T /= np.sqrt(N2)
    bad = ~((eR < _LIN) & (eN2 < _LIN))
    eT = eN2 * 0.5
    eT += eR
    eT *= 1.0 + 2.0**-18
    eT += 2.0**-51 + 2.0**-50  # (+ the 2^-50 of step 8, once per row)
    eT[bad] = np.inf
    # 7.-8. A, the radius and the limit; a large eh or A: undecided
    A = np.sqrt(Q, out=Q)
    A *= T[:, None]
    eh += eT[:, None]
    eh[~((eh < _LIN) & (A < 2.0**50))] = np.inf
    eh *= A
    eh += 2.0**-50
    eh *= 1.0 + 2.0**-17
    lim = np.subtract(0.5, eh, out=eh)
    x = np.empty((n, 2 * p))
    np.multiply(cu, A, out=x[:, :p])
    np.multiply(cv, A, out=x[:, p:])
    x = x[:, :m]
    x += frac
    return x, np.concatenate([lim, lim], axis=1)[:, :m]


def _l2_chunk(prog, m, scale, values, vint, vfrac, exact, e, rng):
    """Release the rows of ``values`` (shape (n, m)) with the l2 K-norm noise, exactly.

    ``vint + vfrac`` is ``values / g`` (exact where ``exact`` is None or True); other rows go
    to the arb refinement, which uses the values themselves.
    """
    n = values.shape[0]
    p = (m + 1) // 2
    g = 2.0**e
    gw = random_words(rng, (n, m))
    cu, cv, refined = _disc_pairs(n * p, rng)
    cu, cv = cu.reshape(n, p), cv.reshape(n, p)
    with np.errstate(all="ignore"):  # inf/NaN radii are simply undecided
        x, lim = _l2_fused(_keys(gw), cu, cv, m, scale * 2.0**-e, vfrac)
        cells = np.round(x)
        x -= cells
        np.abs(x, out=x)
        ok = (x < lim).all(axis=1)
    cells += vint
    cells *= g
    if exact is not None:
        ok &= exact.all(axis=1)
    for slot in refined:
        ok[slot // p] = False
    redo = np.flatnonzero(~ok)
    if redo.size:
        # second pass on the undecided rows, the same uniforms with logs through arb: most
        # are undecided only because of the (pessimistic) libm error allowance
        f = scale * 2.0**-e
        with np.errstate(all="ignore"):
            args = (_keys(gw[redo]), cu[redo], cv[redo], m, f, vfrac[redo])
            x, lim = _l2_fused(*args, log=_accurate_log, lam=_ACCURATE_LOG_REL)
            c2 = np.round(x)
            x -= c2
            np.abs(x, out=x)
            ok2 = (x < lim).all(axis=1)
        for slot in refined:  # (rows with a pair decided on more bits: arb, below)
            ok2[redo == slot // p] = False
        if exact is not None:
            ok2 &= exact[redo].all(axis=1)
        cells[redo[ok2]] = (vint[redo[ok2]] + c2[ok2]) * g
        ok[redo[ok2]] = True
    for i in np.flatnonzero(~ok):
        nums = [int(w) >> 11 for w in gw[i]]
        # the exact keys back from the centred midpoints (cu + 1 is exact: a multiple of 2^-53)
        nums += [int(k) for k in ((cu[i] + 1.0 - 2.0**-53) * 2.0**52)]
        nums += [int(k) for k in ((cv[i] + 1.0 - 2.0**-53) * 2.0**52)]
        bits = [53] * len(nums)
        for slot, (nu, nv, b) in refined.items():
            if slot // p == i:
                j = slot % p
                nums[m + j], nums[m + p + j] = nu, nv
                bits[m + j] = bits[m + p + j] = b
        got = _refine_row(prog, nums, bits, np.ones((1, len(nums))), values[i], e, rng, False)
        cells[i] = _grid_values(got, g)
    return cells
