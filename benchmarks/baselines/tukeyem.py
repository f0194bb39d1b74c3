"""TukeyEM: the Tukey-depth exponential mechanism over many small OLS fits.

K. Amin, M. Joseph, M. Ribero and S. Vassilvitskii, "Easy differentially private linear
regression", ICLR 2023 (arXiv:2208.07353), Algorithm 1, which builds on the restricted
exponential mechanism and propose-test-release of G. Brown, M. Gaboardi, A. Smith, J. Ullman
and L. Zakynthinou, "Covariance-aware private mean estimation without private covariance
estimation", NeurIPS 2021. Own implementation.

1. Split the (scaled) rows at random into ``m`` disjoint parts and fit OLS on each: ``m``
   models in R^q. Replace-one changes one row, hence at most one model.
2. Approximate Tukey depth: the depth of a point is the smallest, over coordinates ``j`` and
   both directions, number of models on that side, so ``{depth >= i}`` is the box
   ``prod_j [S_j(i), S_j(m + 1 - i)]`` of order statistics; ``V_i`` is its volume.
3. Propose-test-release with ``epsilon / 2``: ``k`` is the largest integer such that for some
   ``g >= 1``, ``V_{t-k-1} / V_{t+k+g+1} * exp(-epsilon_1 g / 2) <= delta / (8 exp(epsilon_1))``
   (``t = floor(m / 4)``); the test passes when ``k + Laplace(1 / epsilon_1) > log(1 / (2 delta))
   / epsilon_1``. A failed test releases nothing ("PTR fails"); it is a valid outcome, reported
   as such in the matrix.
4. Otherwise sample with ``epsilon_1`` from the exponential mechanism restricted to depth
   ``>= t``: a depth ``i`` with weight ``(V_i - V_{i+1}) exp(epsilon_1 i)``, then a uniform
   point of ``{depth = i}``.

The method needs no bounds on the data (the matrix still feeds it the clipped, scaled rows so
that every method sees the same data), but it needs ``delta > 0`` and many rows per
parameter. ``m`` is our choice from public quantities,
``min(floor(n / (2 q)), ceil(64 log(1 / (2 delta)) / epsilon_1))``: the test needs the
distance ``k`` (at most about ``m / 4``) well above its threshold ``log(1/(2 delta)) /
epsilon_1``, while fewer models mean more rows per model and better models (at least ``2q``
rows each). The constant 64 was picked on CPS1988 (the smallest ``m`` at which the test passed
at every epsilon in {1, 2, 4}), which favours the anchor on that data set.
"""

from __future__ import annotations

import math

import numpy as np


class PTRFailed(Exception):
    """The propose-test-release check did not pass; nothing is released."""


def _depth_boxes(models, rng):
    m, q = models.shape
    # a tiny jitter breaks ties so that every box has positive width (as the paper does)
    S = np.sort(models.T + 1e-10 * rng.random((q, m)), axis=1)
    K = m // 2
    lo = S[:, :K]  # lo[:, i-1] = S_j(i)
    hi = S[:, ::-1][:, :K]  # hi[:, i-1] = S_j(m + 1 - i)
    return lo, hi


def tukey_em(models, epsilon, delta, rng=None):
    """Run PTR + the restricted Tukey exponential mechanism on ``models`` (m, q)."""
    rng = np.random.default_rng(rng)
    m, q = models.shape
    lo, hi = _depth_boxes(models, rng)
    K = lo.shape[1]
    logV = np.sum(np.log(hi - lo), axis=0)  # logV[i-1] = log V_i, i = 1..K

    eps1 = epsilon / 2
    t = K // 2
    log_thr = math.log(delta / (8 * math.exp(eps1)))

    def safe(k):
        # some g >= 1 with V_{t-k-1} / V_{t+k+g+1} * exp(-eps1 g / 2) <= threshold; boxes
        # deeper than K are empty (log volume -inf), so g runs while t + k + g + 1 <= K
        g = np.arange(1, K - (t + k + 1) + 1)
        if t - k - 1 < 1 or len(g) == 0:
            return False
        gaps = logV[t - k - 2] - logV[t + k + g] - eps1 * g / 2  # logV[i-1] = log V_i
        return bool(np.min(gaps) <= log_thr)

    dist = -1
    for k in range(0, max(t - 1, 0)):
        if not safe(k):
            break
        dist = k
    if dist + rng.laplace(scale=1 / eps1) <= math.log(1 / (2 * delta)) / eps1:
        raise PTRFailed(f"PTR fails (distance {dist}, m = {m})")
    depths = np.arange(t, K + 1)
    nxt = np.append(logV[depths[:-1]], -np.inf)  # log V_{i+1}; V_{K+1} = 0
    cur = logV[depths - 1]
    log_shell = cur + np.log1p(-np.exp(np.minimum(nxt - cur, 0.0)))
    score = log_shell + eps1 * depths
    i = int(depths[np.argmax(score + rng.gumbel(size=len(score)))])
    return _uniform_shell(lo, hi, i, rng)


def _uniform_shell(lo, hi, i, rng):
    """A uniform point of ``box_i minus box_{i+1}``: split by the first coordinate outside."""
    K = lo.shape[1]
    o_lo, o_hi = lo[:, i - 1], hi[:, i - 1]
    if i < K:
        n_lo, n_hi = lo[:, i], hi[:, i]
    else:  # the innermost box: its "inside" is empty
        n_lo = n_hi = 0.5 * (o_lo + o_hi)
    outer, inner = np.log(o_hi - o_lo), np.log(np.maximum(n_hi - n_lo, 1e-300))
    shell = np.log(np.maximum((o_hi - o_lo) - (n_hi - n_lo), 1e-300))
    q = len(o_lo)
    before = np.concatenate([[0.0], np.cumsum(inner)[:-1]])
    after = np.concatenate([np.cumsum(outer[::-1])[::-1][1:], [0.0]])
    j = int(np.argmax(before + shell + after + rng.gumbel(size=q)))
    x = np.empty(q)
    x[:j] = rng.uniform(n_lo[:j], n_hi[:j])
    x[j + 1 :] = rng.uniform(o_lo[j + 1 :], o_hi[j + 1 :])
    left, right = n_lo[j] - o_lo[j], o_hi[j] - n_hi[j]
    u = rng.uniform(0, left + right)
    x[j] = o_lo[j] + u if u < left else n_hi[j] + (u - left)
    return x


def split_models(Z, w, m, rng):
    """OLS on ``m`` random disjoint parts of the rows (the non-private step, before EM)."""
    idx = rng.permutation(len(Z))
    size = len(Z) // m
    out = np.empty((m, Z.shape[1]))
    for b in range(m):
        rows = idx[b * size : (b + 1) * size]
        out[b] = np.linalg.lstsq(Z[rows], w[rows], rcond=None)[0]
    return out


def tukeyem(Z, w, epsilon, delta, rng=None):
    """TukeyEM on the scaled design (intercept column first); raises :class:`PTRFailed`."""
    rng = np.random.default_rng(rng)
    n, q = Z.shape
    m = min(n // (2 * q), math.ceil(64 * math.log(1 / (2 * delta)) / (epsilon / 2)))
    if m < 8:
        raise PTRFailed(f"n too small ({n} rows give {m} models of {2 * q} rows)")
    return tukey_em(split_models(Z, w, m, rng), epsilon, delta, rng)


__all__ = ["PTRFailed", "split_models", "tukey_em", "tukeyem"]
