"""Exact grid release of the lp K-norm mechanism, ``1 < p < inf`` (docs/floating_point.md).

The law. The K-norm density ``∝ exp(-||x||_p / scale)`` in dimension m is that of

    X = R V / ||V||_p,    R ~ Gamma(m, scale),    V_i iid with density ∝ exp(-|v|^p),

independent: ``exp(-||v||_p^p)`` is a function of ``||v||_p``, so ``V / ||V||_p`` follows the
cone measure of the unit sphere independently of ``||V||_p`` (Schechtman & Zinn 1990; Barthe,
Guedon, Mendelson & Naor 2005), and so does ``X / ||X||_p``, while ``||X||_p`` has density
``∝ r^(m-1) exp(-r / scale)`` (polar coordinates of the lp norm). The l2 release does the same
with Gaussian V.

The generalised Gaussian V_i, drawn exactly by rejection. Propose ``V = S E`` (Laplace: E =
-log U1, S a fair sign). ``exp(-|v|^p) / exp(-|v|) = exp(|v| - |v|^p) <= exp(c)`` with ``c =
max_t (t - t^p) = t*(1 - 1/p)``, ``t* = p^(-1/(p-1))``; we use a public float ``c_up >= c``
(any upper bound keeps the law exact; only the acceptance rate ``Gamma(1 + 1/p) exp(-c_up)``
depends on it: 0.78 at p = 1.5, 0.61 at p = 3, 1/e as p -> inf). Accept iff

    E' >= E^p - E + c_up,    E' = -log U2,

i.e. with probability ``exp(-(E^p - E + c_up)) <= 1``. Accepted proposals are iid with the
target law whatever their positions in the sequence of proposals (as for the polar Gaussian,
``_exact._gaussian``), so a batch is decided as a whole and its accepted proposals serve the
coordinates in order.

How it is decided exactly (the framework of :mod:`dpreg.noise._exact`):

* each accept test in float64 ball arithmetic (``_ballarith._FloatBackend``, with ``pow``
  under the stated libm assumption); an undecided test is refined in arb with 64 more bits of
  both uniforms per round until decided, and an accepted proposal keeps its refined uniform;
* each row's cells ``round((value + X) / g)`` in float64 balls; a row with an undecided cell
  is refined in arb (all its uniforms, 64 more bits per round) until every cell is certain.
  Refinement draws fresh independent bits at a stopping time, so every uniform stays uniform
  on the interval it is known to lie in, conditionally on all decisions made so far.

The released ``fl(N) g`` is a fixed function of the cell N of the ideal ``value + X``: the
mechanism's guarantee carries over with no inflation (docs/floating_point.md, section 3).
"""

from __future__ import annotations

import math

import numpy as np

from .._random import random_words
from ._ballarith import _FloatBackend
from ._exact import _fast_cells, _fast_sign, _grid_values, _keys, _signs, _split_values

_EXTRA_BITS = 64
_CHUNK_WORDS = 16384  # as in _exact: a chunk of about this many words per row group
_MAX_ROWS = 8192


def gg_shift(p):
    """A public float ``c_up >= max_t (t - t^p)`` for ``p > 1`` (the Laplace-proposal bound).

    ``c = t*(1 - 1/p)`` at ``t* = p^(-1/(p-1))``; its float evaluation errs by a few ulp, far
    below the added relative margin ``2^-30`` (plus ``2^-60`` absolute), so ``c_up >= c``.
    A larger ``c_up`` only lowers the acceptance rate; the law stays exact.
    """
    p = float(p)
    c = math.exp(-math.log(p) / (p - 1.0)) * (1.0 - 1.0 / p)
    return c * (1.0 + 2.0**-30) + 2.0**-60


def acceptance_rate(p):
    """``P(accept) = Gamma(1 + 1/p) exp(-c_up)`` of the generalised-Gaussian rejection step."""
    return math.gamma(1.0 + 1.0 / p) * math.exp(-gg_shift(p))


# ---------------------------------------------------------------------------------------------
# the generalised-Gaussian proposals
# ---------------------------------------------------------------------------------------------
def _propose_float(k1, k2, p, c):
    """Float balls ``E = -log U1``, ``E^p`` and the accept sign (+1 / -1 / 0 undecided).

    The margin ``E' - (E^p - E + c)`` is a ball; a certain sign decides. ``E^p`` overflowing
    (``pow`` returns inf only when the real power exceeds the largest float, up to the libm
    error) with a tight, finite ball of E and a finite E' (``k2 > 0``: ``E' <= 53 ln 2``) is a
    sure reject: the real power is above ``2^1022`` (``(1 - r/E)^p >= 1 - 2^-20``), so the
    real margin is below ``37 + E - 2^1022``.
    """
    fb = _FloatBackend
    with np.errstate(all="ignore"):  # k = 0 gives infinite (undecided) balls
        mag = fb.neglog(k1)
        y = fb.pow(mag, p)
        margin = fb.neglog(k2) - ((y - mag) + c)
        sign = _fast_sign(margin)
    with np.errstate(invalid="ignore"):
        # (a finite radius: k1 = 0 gives E in [36.7, inf), whose power need not be huge)
        tight = np.isfinite(mag.r) & (mag.r * max(p, 1.0) <= mag.m * 2.0**-20)
        huge = np.isinf(y.m) & tight & (k2 > 0)
    sign = np.where(huge, -1, sign)
    return mag, y, sign


def _arb_uniform(num, bits):
    """The arb ball ``[num, num + 1] 2^-bits`` (exact)."""
    from flint import arb  # noqa: PLC0415

    half = arb(2) ** (-(bits + 1))
    return arb(arb(2 * num + 1) * half, half)


def _decide_arb(num1, num2, p, c, rng):
    """Decide one proposal's accept test in arb: ``(accepted, num1, bits)`` (refined U1)."""
    from flint import arb, ctx  # noqa: PLC0415

    bits = 53
    old = ctx.prec
    try:
        while True:
            extra = random_words(rng, 2)
            num1 = (num1 << _EXTRA_BITS) | int(extra[0])
            num2 = (num2 << _EXTRA_BITS) | int(extra[1])
            bits += _EXTRA_BITS
            ctx.prec = bits + 64
            e1 = -_arb_uniform(num1, bits).log()
            e2 = -_arb_uniform(num2, bits).log()
            margin = e2 - (e1 ** arb(p) - e1 + arb(c))
            if margin > 0:
                return True, num1, bits
            if margin < 0:
                return False, num1, bits
    finally:
        ctx.prec = old


def _accepted(count, p, c, rng):
    """``count`` accepted proposals, in order: keys, signs, balls E and E^p, refined uniforms.

    ``refined`` maps a position to ``(num, bits)`` for the (astronomically rare) proposals
    whose test was decided in arb: their U1 is known more precisely than its 53-bit key (the
    key's ball still encloses it, so the float balls stay valid).
    """
    rate = acceptance_rate(p)
    keys, signs, mags, ys, refined = [], [], [], [], {}
    have = 0
    while have < count:
        need = count - have
        size = int(need / rate + 4.0 * math.sqrt(need) + 8)
        words = random_words(rng, (size, 2))
        k = _keys(words)
        mag, y, sign = _propose_float(k[:, 0], k[:, 1], p, c)
        in_batch = {}
        for i in np.flatnonzero(sign == 0):
            acc, num, bits = _decide_arb(int(words[i, 0]) >> 11, int(words[i, 1]) >> 11, p, c, rng)
            sign[i] = 1 if acc else -1
            if acc:
                in_batch[i] = (num, bits)
        idx = np.flatnonzero(sign > 0)[:need]
        for i, ref in in_batch.items():  # its position among the accepted, if it was taken
            j = int(np.searchsorted(idx, i))
            if j < idx.size and idx[j] == i:
                refined[have + j] = ref
        keys.append(k[idx, 0])
        signs.append(_signs(words[idx, 0]))
        mags.append((mag.m[idx], mag.r[idx]))
        ys.append((y.m[idx], y.r[idx]))
        have += idx.size
    cat = np.concatenate
    return (
        cat(keys),
        cat(signs),
        (cat([a for a, _ in mags]), cat([b for _, b in mags])),
        (cat([a for a, _ in ys]), cat([b for _, b in ys])),
        refined,
    )


# ---------------------------------------------------------------------------------------------
# the rows
# ---------------------------------------------------------------------------------------------
#: Above this p the row norm is computed as ``c ||E / c||_p`` (c the row's largest midpoint):
#: ``E^p`` underflows for large p (``E^1000 = 0`` for E < 0.48), which would leave the row
#: undecided. Below it ``E >= 2^-54`` gives ``E^p >= 2^-864``: no underflow.
_RESCALE_P = 16.0


def _row_cells(kR, S, mag, y, p, scale, inv_g, frac):
    """Float cells of ``frac + R S E / ||E||_p / g`` per row and whether each is certain.

    ``||E||_p = c ||E / c||_p`` for any real ``c > 0``; for large p we take the exact float
    ``c = max_i fl(E_i)`` of the row (the division by an exact float is a ball operation).
    """
    from ._ballarith import _Ball  # noqa: PLC0415

    fb = _FloatBackend
    R = fb.gamma_sum(kR) * scale
    if p > _RESCALE_P:
        c = np.max(mag.m, axis=1, keepdims=True)
        nrm = fb.pow(fb.sum(fb.pow(mag / c, p), axis=1), 1.0 / p) * c
    else:
        nrm = fb.pow(fb.sum(y, axis=1), 1.0 / p)
    F = R / nrm
    X = _Ball(mag.m * S, mag.r) * F  # a sign flip is exact
    return _fast_cells(X, inv_g, frac)


def _slow_row(wR, nums, bits, S, value, p, scale, e, rng):
    """Refine one row in arb until every cell is certain; returns the integer cells.

    ``wR``: the radius words (53-bit keys), ``nums``/``bits``: the coordinates' U1 as known so
    far, ``S``: their signs. Every uniform gets 64 fresh bits per round.
    """
    from flint import arb, ctx  # noqa: PLC0415

    m = len(nums)
    rnums = [int(w) >> 11 for w in wR]
    rbits = 53
    nums = [int(v) for v in nums]
    bits = [int(b) for b in bits]
    old = ctx.prec
    try:
        while True:
            extra = random_words(rng, 2 * m)
            rnums = [(a << _EXTRA_BITS) | int(w) for a, w in zip(rnums, extra[:m])]
            rbits += _EXTRA_BITS
            nums = [(a << _EXTRA_BITS) | int(w) for a, w in zip(nums, extra[m:])]
            bits = [b + _EXTRA_BITS for b in bits]
            ctx.prec = max(rbits, *bits) + 64
            prod = arb(1)
            for a in rnums:
                prod *= _arb_uniform(a, rbits)
            R = -prod.log() * arb(scale)
            E = [-_arb_uniform(a, b).log() for a, b in zip(nums, bits)]
            t = arb(p)
            nrm = sum((x**t for x in E), arb(0)) ** (1 / t)
            F = R / nrm
            g = arb(2) ** e
            cells = [
                ((arb(value[i]) + F * E[i] * float(S[i])) / g + 0.5).floor().unique_fmpz()
                for i in range(m)
            ]
            if all(c is not None for c in cells):
                return [int(c) for c in cells]
    finally:
        ctx.prec = old


def _release_chunk(values, p, c, scale, e, rng):
    n, m = values.shape
    g = 2.0**e
    vint, vfrac, exact = _split_values(values, e)
    k1, S, (mm, mr), (ym, yr), refined = _accepted(n * m, p, c, rng)
    from ._ballarith import _Ball  # noqa: PLC0415

    mag = _Ball(mm.reshape(n, m), mr.reshape(n, m))
    y = _Ball(ym.reshape(n, m), yr.reshape(n, m))
    S = S.reshape(n, m)
    wR = random_words(rng, (n, m))
    with np.errstate(all="ignore"):
        cells, certain = _row_cells(_keys(wR), S, mag, y, p, scale, 1.0 / g, vfrac)
    cells += vint
    cells *= g
    row_ok = certain.all(axis=1)
    if exact is not None:
        row_ok &= exact.all(axis=1)
    for pos in refined:  # rows with a U1 refined in arb go through arb
        row_ok[pos // m] = False
    k1 = k1.reshape(n, m)
    for i in np.flatnonzero(~row_ok):
        nums, bits = k1[i].astype(np.int64).tolist(), [53] * m
        for j in range(m):
            if i * m + j in refined:
                nums[j], bits[j] = refined[i * m + j]
        got = _slow_row(wR[i], nums, bits, S[i], values[i], p, scale, e, rng)
        cells[i] = _grid_values(got, g)
    return cells


def release_lp(rows, p, scale, e, rng):
    """``rows + X`` on the grid ``2**e``, X the lp K-norm noise of ``scale`` (1 < p < inf).

    ``rows`` has shape (n, m) of finite floats; returns the released (n, m) array.
    """
    p, scale = float(p), float(scale)
    if not (1.0 < p < math.inf):
        raise ValueError(f"release_lp needs 1 < p < inf, got p={p!r}.")
    c = gg_shift(p)
    n, m = rows.shape
    step = max(1, min(_MAX_ROWS, _CHUNK_WORDS // (3 * m)))
    out = np.empty_like(rows)
    for i in range(0, n, step):
        out[i : i + step] = _release_chunk(rows[i : i + step], p, c, scale, e, rng)
    return out
