"""Order-statistic bounds behind the propose-test-release step of PrivateProjectionMedian.

Everything here works on the *sorted* projections ``S`` (shape ``(m, n)``, one row per
direction, each row sorted ascending). Ranks are 1-based in the comments and formulas,
``x_(r)`` is the r-th smallest value of a row, ``x_(r) = -inf`` for ``r < 1`` and ``+inf`` for
``r > n``. ``B_k(D)`` is the set of data sets that differ from ``D`` in at most ``k`` rows.

Facts used (proofs in ``docs/projection_median.md``)
-----------------------------------------------------
(I) Interlacing. If ``D''`` is in ``B_k(D)`` then ``x_(r-k) <= x''_(r) <= x_(r+k)`` in every
    direction (changing one row moves every order statistic at most one rank).
(G) Gap sup. ``G_j(r) = max_{p in [r-j, r]} (x_(p+j+1) - x_(p))`` is *exactly*
    ``sup_{D'' in B_j(D)} (x''_(r+1) - x''_(r))``: in D'' the open gap contains no point, so the
    s <= j original points inside it were changed, which confines the gap to a window of at
    most j+1 consecutive spacings starting at a rank in [r-j, r]; the window [p, p+j+1] is
    attained by moving its j interior points, r-p of them below x_(p) and the rest above.
(M) One replacement moves all order statistics in the same direction, each by at most one
    rank. Hence the median (x_(a)+x_(b))/2, a = floor((n+1)/2), b = floor(n/2)+1, moves by at
    most max((gap_a + gap_b)/2, (gap_{a-1} + gap_{b-1})/2) and the IQR x_(n+1-r) - x_(r)
    (r = ceil(n/4)) by at most the largest of the four gaps next to its two ends.
(D) Deviations. ``g_r(m)`` = r-th smallest |x_i - m|; a data set in B_k(D) has its r-th
    smallest deviation about any centre >= g_{r-k} and <= g_{r+k} of D. The median of every
    data set in B_k(D) lies in [L_k, R_k] = [M_{-k}, M_{+k}] with M_s = (x_(a+s) + x_(b+s))/2,
    so every MAD in B_k(D) lies in
    [ (min_m g_{a-k}(m) + min_m g_{b-k}(m))/2 , (max_m g_{a+k}(m) + max_m g_{b+k}(m))/2 ],
    m ranging over [L_k, R_k]; both extremes are computed exactly
    (:func:`min_centred_deviation`, :func:`max_centred_deviation`; docs section 3). (An earlier
    version used the 1-Lipschitz bound ``g_r(m_k) -+ w_k`` about the centre m_k of [L_k, R_k]
    with half-width w_k, which is looser.)

Monotonicity (what makes the safety margin have sensitivity 1)
---------------------------------------------------------------
Every upper bound ``U_k(D)`` here satisfies ``U_{k-1}(D') <= U_k(D)`` and every lower bound
``B_k(D)`` satisfies ``B_{k-1}(D') >= B_k(D)`` for all neighbours D' of D: exact sups (G) by
nesting ``B_{k-1}(D') subset B_k(D)``, interlacing formulas by (I), and the MAD bounds because
``g'_{r-(k-1)} >= g_{r-k}`` and ``g'_{r+k-1} <= g_{r+k}`` pointwise (by (I)) while the centre
ranges over ``[L'_{k-1}, R'_{k-1}] subset [L_k, R_k]`` (a min over a smaller set is larger, a
max smaller).
Positive combinations of upper bounds divided by lower bounds inherit the property.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special, stats

from . import _lp


def order_stat(S, ranks):
    """``x_(r)`` for 1-based ``ranks`` (scalar or array broadcast over rows), +-inf outside."""
    n = S.shape[1]
    r = np.asarray(ranks)
    idx = np.clip(r - 1, 0, n - 1)
    if idx.ndim == 0:
        out = S[:, int(idx)].astype(float)
    else:
        out = S[:, idx].astype(float)
    out = np.where(r < 1, -np.inf, out)
    return np.where(r > n, np.inf, out)


def median_ranks(n):
    """1-based ranks ``(a, b)`` with median ``(x_(a) + x_(b)) / 2``."""
    return (n + 1) // 2, n // 2 + 1


def iqr_ranks(n):
    """1-based ranks ``(r1, r3)`` with ``IQR = x_(r3) - x_(r1)``, ``r1 = ceil(n / 4)``."""
    r1 = -(-n // 4)
    return r1, n + 1 - r1


def shifted_median(S, s):
    """``M_s = (x_(a+s) + x_(b+s)) / 2`` per row (the median after shifting ranks by s)."""
    a, b = median_ranks(S.shape[1])
    return 0.5 * (order_stat(S, a + s) + order_stat(S, b + s))


def gap_sup(S, r, j):
    """``G_j(r) = max_{p in [r-j, r]} (x_(p+j+1) - x_(p))`` (exact sup over B_j of gap r)."""
    p = np.arange(r - j, r + 1)
    hi = order_stat(S, p + j + 1)
    lo = order_stat(S, p)
    with np.errstate(invalid="ignore"):
        diff = hi - lo
    return np.max(np.where(np.isnan(diff), np.inf, diff), axis=1)


def deviation_stat(S, r, m):
    """``g_r(m)``: the r-th smallest ``|x_i - m_row|`` in every row (0 if r < 1, inf if r > n).

    The r nearest points form a window of consecutive order statistics; the radius of window i
    is ``max(m - x_(i), x_(i+r-1) - m)``, minimised where ``x_(i) + x_(i+r-1) - 2m`` changes
    sign (a non-decreasing sequence), found by a vectorised binary search.
    """
    nrow, n = S.shape
    m = np.broadcast_to(np.asarray(m, dtype=float), (nrow,))
    if r < 1:
        return np.zeros(nrow)
    if r > n:
        return np.full(nrow, np.inf)
    rows = np.arange(nrow)
    lo = np.zeros(nrow, dtype=np.int64)  # 0-based window start
    hi = np.full(nrow, n - r + 1, dtype=np.int64)  # one past the last start
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        midc = np.minimum(mid, n - r)
        cond = S[rows, midc] + S[rows, midc + r - 1] - 2 * m >= 0
        act = lo < hi
        hi = np.where(act & cond, mid, hi)
        lo = np.where(act & ~cond, mid + 1, lo)
    best = np.full(nrow, np.inf)
    for cand in (lo - 1, lo):
        ok = (cand >= 0) & (cand <= n - r)
        cc = np.clip(cand, 0, n - r)
        val = np.maximum(m - S[rows, cc], S[rows, cc + r - 1] - m)
        best = np.where(ok, np.minimum(best, val), best)
    return best


def _first_index(S, start_fn, n_win, value, strict):
    """Per row, the first window start i0 in [0, n_win) with ``start_fn(i0) >= value``
    (``> value`` if ``strict``), ``n_win`` if none; ``start_fn`` must be non-decreasing."""
    nrow = S.shape[0]
    lo = np.zeros(nrow, dtype=np.int64)
    hi = np.full(nrow, n_win, dtype=np.int64)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        v = start_fn(np.minimum(mid, max(n_win - 1, 0)))
        cond = v > value if strict else v >= value
        act = lo < hi
        hi = np.where(act & cond, mid, hi)
        lo = np.where(act & ~cond, mid + 1, lo)
    return lo


def _range_extreme(S, r, start, stop, reducer):
    """``reducer`` of ``(x_(i+r) - x_(i)) / 2`` (0-based start i) over ``i in [start, stop)``."""
    rows = np.arange(S.shape[0])
    init = np.inf if reducer is np.minimum else -np.inf
    out = np.full(S.shape[0], init)
    length = stop - start
    top = int(np.max(length)) if length.size else 0
    if top > 4096:  # degenerate data: one vectorised pass over all windows
        half = 0.5 * (S[:, r:] - S[:, : S.shape[1] - r])
        idx = np.arange(half.shape[1])
        mask = (idx >= start[:, None]) & (idx < stop[:, None])
        filled = np.where(mask, half, init)
        return (np.min if reducer is np.minimum else np.max)(filled, axis=1)
    for o in range(top):
        i0 = start + o
        ok = i0 < stop
        ic = np.where(ok, i0, 0)
        val = 0.5 * (S[rows, np.minimum(ic + r, S.shape[1] - 1)] - S[rows, ic])
        out = np.where(ok, reducer(out, val), out)
    return out


def min_centred_deviation(S, r, L, R):
    """Exact ``min_{m in [L, R]} g_r(m)`` per row (0 if r < 1, inf if r > n).

    Windows of r consecutive order statistics with midpoint below L cost ``L - x_(i)``
    (decreasing in i), above R cost ``x_(i+r-1) - R`` (increasing), in between half their length.
    """
    nrow, n = S.shape
    if r < 1:
        return np.zeros(nrow)
    if r > n:
        return np.full(nrow, np.inf)
    rows = np.arange(nrow)
    n_win = n - r + 1

    def mid(i0):
        return 0.5 * (S[rows, i0] + S[rows, i0 + r - 1])

    i_l = _first_index(S, mid, n_win, L, strict=False)
    i_r = _first_index(S, mid, n_win, R, strict=True)
    best = _range_extreme(S, r - 1, i_l, i_r, np.minimum)
    left = i_l - 1
    best = np.where(left >= 0, np.minimum(best, L - S[rows, np.maximum(left, 0)]), best)
    right_ok = i_r < n_win
    ic = np.minimum(i_r, n_win - 1)
    best = np.where(right_ok, np.minimum(best, S[rows, ic + r - 1] - R), best)
    return best


def max_centred_deviation(S, r, L, R):
    """Exact ``max_{m in [L, R]} g_r(m)`` per row (inf if r > n).

    g_r is piecewise linear with slopes +-1; an interior local maximum sits at a midpoint
    ``(x_(i) + x_(i+r)) / 2`` where ``g_r = (x_(i+r) - x_(i)) / 2``; otherwise at L or R.
    """
    nrow, n = S.shape
    if r > n:
        return np.full(nrow, np.inf)
    r = max(r, 1)
    rows = np.arange(nrow)
    best = np.maximum(deviation_stat(S, r, L), deviation_stat(S, r, R))
    n_win = n - r  # pairs (i, i + r)
    if n_win <= 0:
        return best

    def mid(i0):
        return 0.5 * (S[rows, i0] + S[rows, i0 + r])

    j_l = _first_index(S, mid, n_win, L, strict=False)
    j_r = _first_index(S, mid, n_win, R, strict=True)
    return np.maximum(best, _range_extreme(S, r, j_l, j_r, np.maximum))


def location_scale(S, scale="mad"):
    """Projected median and scale (MAD or IQR) of every row."""
    mu = shifted_median(S, 0)
    n = S.shape[1]
    if scale == "mad":
        a, b = median_ranks(n)
        sig = 0.5 * (deviation_stat(S, a, mu) + deviation_stat(S, b, mu))
    else:
        r1, r3 = iqr_ranks(n)
        sig = order_stat(S, r3) - order_stat(S, r1)
    return mu, sig


def median_interval(S, k):
    """``[L_k, R_k]``: every data set in B_k(D) has its projected median in it."""
    return shifted_median(S, -k), shifted_median(S, k)


def median_movement(S, j):
    """``S_mu(j)``: sup over D'' in B_j(D) of how far one replacement moves the median."""
    a, b = median_ranks(S.shape[1])
    up = 0.5 * (gap_sup(S, a, j) + gap_sup(S, b, j))
    down = 0.5 * (gap_sup(S, a - 1, j) + gap_sup(S, b - 1, j))
    return np.maximum(up, down)


def scale_bounds(S, k, scale="mad"):
    """``(lower, upper)`` bounds on the scale of every data set in B_k(D), per row."""
    n = S.shape[1]
    if scale == "mad":
        a, b = median_ranks(n)
        L, R = median_interval(S, k)
        finite = np.isfinite(L) & np.isfinite(R)
        Lc, Rc = np.where(finite, L, 0.0), np.where(finite, R, 0.0)
        lower = 0.5 * (
            min_centred_deviation(S, a - k, Lc, Rc) + min_centred_deviation(S, b - k, Lc, Rc)
        )
        upper = 0.5 * (
            max_centred_deviation(S, a + k, Lc, Rc) + max_centred_deviation(S, b + k, Lc, Rc)
        )
        lower = np.where(finite, lower, -np.inf)
        upper = np.where(finite, upper, np.inf)
        return lower, upper
    r1, r3 = iqr_ranks(n)
    with np.errstate(invalid="ignore"):
        lower = order_stat(S, r3 - k) - order_stat(S, r1 + k)
        upper = order_stat(S, r3 + k) - order_stat(S, r1 - k)
    return lower, upper


def scale_movement(S, j, scale="mad", cache=None):
    """``S_sigma(j)``: sup over D'' in B_j(D) of how far one replacement moves the scale."""
    if scale == "mad":
        # D'' lies in B_j(D) and its neighbour in B_{j+1}(D), so the MAD rises by at most
        # upper_{j+1} - lower_j and falls by at most upper_j - lower_{j+1}.
        lo_j, up_j = _cached_bounds(S, j, scale, cache)
        lo_j1, up_j1 = _cached_bounds(S, j + 1, scale, cache)
        with np.errstate(invalid="ignore"):
            out = np.maximum(up_j1 - lo_j, up_j - lo_j1)
        return np.where(np.isnan(out), np.inf, out)
    r1, r3 = iqr_ranks(S.shape[1])
    return np.max([gap_sup(S, r, j) for r in (r1 - 1, r1, r3 - 1, r3)], axis=0)


def _cached_bounds(S, k, scale, cache):
    if cache is None:
        return scale_bounds(S, k, scale)
    key = (k, scale)
    if key not in cache:
        cache[key] = scale_bounds(S, k, scale)
    return cache[key]


def outlyingness_sensitivity(S, j, tau, scale="mad", cache=None):
    """``F_j(D) = max_u (tau S_sigma,u(j) + S_mu,u(j)) / b_u(j+1)`` (inf if a b_u <= 0).

    Bounds ``sup |O_D''(x) - O_D'''(x)|`` over x with ``min(O_D'', O_D''') <= tau`` for every
    ``D''`` in B_j(D) and neighbour ``D'''`` of ``D''``. ``cache`` (a dict) reuses the scale
    bounds across calls on the same ``S``.
    """
    lower, _ = _cached_bounds(S, j + 1, scale, cache)
    num = tau * scale_movement(S, j, scale, cache) + median_movement(S, j)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(lower > 0, num / np.where(lower > 0, lower, 1.0), np.inf)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    return float(np.max(ratio))


def tail_log_bound(o, c, tau, dim):
    """``log`` of an upper bound on ``P(O(X) > tau)`` for ``X ∝ exp(-c O)`` with ``min O <= o``.

    With x* the minimiser, ``v = x - x*`` and ``r = ||v||_K``: ``O(x) <= o + r`` and
    ``O(x) >= max(tau, r - o)`` on ``{O > tau}`` (which lies in ``{r > tau - o}``). For any norm,
    ``∫ exp(-c r) 1{r <= s} dv / ∫ exp(-c r) dv = P(Gamma(dim, 1) <= c s)`` and
    ``vol{r <= s} ∝ s^dim``, so ``P(O > tau) <= e^{c o} [ e^{-c tau} ((c(tau+o))^dim -
    (c(tau-o))_+^dim) / dim! + e^{c o} P(Gamma(dim, 1) > c (tau + o)) ]``.
    """
    r1, r2 = max(c * (tau - o), 0.0), c * (tau + o)
    lg = special.gammaln(dim + 1.0)
    # log(r2^d - r1^d) = d log r2 + log(1 - (r1/r2)^d)
    with np.errstate(divide="ignore"):
        shell = np.log(-np.expm1(dim * np.log(r1 / r2))) if r1 > 0 else 0.0
    first = -c * tau + dim * np.log(r2) + shell - lg
    second = c * o + float(stats.gamma.logsf(r2, dim))
    return float(c * o + np.logaddexp(first, second))


def max_min_outlyingness(c, tau, dim, delta):
    """Largest ``o`` with ``tail_log_bound(o) <= log(delta)`` (``-inf`` if none)."""
    target = np.log(delta)
    if tail_log_bound(0.0, c, tau, dim) > target:
        return -np.inf
    hi = tau
    while tail_log_bound(hi, c, tau, dim) <= target:  # pragma: no cover - needs huge c
        hi *= 2.0
    return optimize.brentq(
        lambda o: tail_log_bound(o, c, tau, dim) - target, 0.0, hi, xtol=1e-14, rtol=1e-12
    )


def min_outlyingness_bound(U, S, k, scale="mad", candidates=(), cache=None):
    """Upper bound on ``min_x O_D''(x)`` over all D'' in B_k(D), and the point attaining it.

    ``T_k(D) = min_z H_k(z)``, ``H_k(z) = max_u (|u^T z - m_u| + h_u) / b_u(k)`` with
    ``[m_u - h_u, m_u + h_u]`` the median interval and ``b_u(k)`` the scale lower bound. Each
    point of ``candidates`` is tried first (``H_k`` evaluated directly); only if none reaches
    below ``accept`` is the LP solved (``_lp.minimax_point``, centred and rescaled). Returns
    ``(value, z)`` with ``value = H_k(z)`` evaluated directly in the data's units, so
    ``value >= T_k`` always; ``(inf, None)`` if no finite bound exists.
    """
    return _min_outlyingness(U, S, k, scale, candidates, cache, accept=-np.inf)


def _min_outlyingness(U, S, k, scale, candidates, cache, accept):
    L, R = median_interval(S, k)
    lower, _ = _cached_bounds(S, k, scale, cache)
    return min_outlyingness_from_bounds(U, L, R, lower, candidates, accept)


def min_outlyingness_from_bounds(U, L, R, lower, candidates=(), accept=-np.inf):
    """``(H_k(z), z)`` for the best candidate z, or the LP's point if no candidate reaches
    ``accept``; ``[L, R]`` are the median intervals and ``lower`` the scale lower bounds at k.
    ``(inf, None)`` if the bounds are not finite and positive."""
    if not (np.all(np.isfinite(L)) and np.all(np.isfinite(R)) and np.all(lower > 0)):
        return np.inf, None
    mid, half = 0.5 * (L + R), 0.5 * (R - L)
    best, best_z = np.inf, None
    for z in candidates:
        if z is None:
            continue
        val = _lp.minimax_value(U, z, mid, half, lower)
        if val < best:
            best, best_z = val, np.asarray(z, float)
    if best <= accept:
        return best, best_z
    z = _lp.minimax_point(U, mid, half, lower)
    if z is not None:
        val = _lp.minimax_value(U, z, mid, half, lower)
        if val < best:
            best, best_z = val, z
    return best, best_z
