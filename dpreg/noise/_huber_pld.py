"""Numerically exact K-dimensional privacy profile of iid flipped Huber noise (analysis tool).

The privacy loss of the K-dimensional mechanism for a shift ``d`` is a sum of independent
one-dimensional losses, so its distribution (the privacy loss distribution, PLD) is the
convolution of K one-dimensional PLDs. We discretise the 1-D loss on a grid of width ``h``,
rounding every value **up** (giving an upper bound on delta) or **down** (a lower bound),
convolve by FFT under an exponential tilt (which keeps relative accuracy where the hockey-stick
sum lives), and read off ``delta(eps) = E_P[(1 - e^{eps - L})_+]``.

Which shift? For a symmetric log-concave 1-D density the hockey-stick divergence of
``(g, g(. - d))`` is nondecreasing in ``|d|`` for every ``eps`` in R (Lemma 11 of seed 003), so
the pair for a smaller shift is a garbling (Blackwell) of the pair for a larger one; garblings
tensorise, hence ``delta_d(eps)`` is coordinate-wise nondecreasing in ``|d_i|``. Every
sensitivity set with l-inf radius ``Delta_inf`` lies in the cube, so the corner shift
``d = Delta_inf * (1, ..., 1)`` gives an **upper bound** on the mechanism's delta, and the
exact value when the corner is itself a possible difference (``Delta_2 >= sqrt(K) Delta_inf``
and ``Delta_1 >= K Delta_inf``, as in Table II of seed 003).

The upper bound is rigorous up to floating-point error of the FFT (relative ~1e-12 of the
tilted mass, reported in ``fft_error``); it is used by the tests and the benchmark to measure
how conservative Theorem 8 is, and is *not* used by ``FlippedHuberMechanism``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft as sfft
from scipy import optimize

from . import _huber_calibration as _hc


def _segments(b, h):
    """Breakpoints, loss values and regime codes of the centred loss on u >= 0."""
    D = 2.0 * h
    pts = sorted({0.0, *[p for p in (b - h, h - b, h, b + h) if p > 0.0]})
    # The loss as a difference of rho values (the old _centred_loss), not the segment-wise
    # _hc._centred_loss of the audit s22 F1 fix. With the accurate plateau b*D, a Laplace-like
    # shape (b ~ 2e5, K = 5) whose plateau lies within an ulp of the grid point eps/K is
    # rounded up a whole cell by side="upper", a pessimism of ~ P(all K on the plateau) * K *
    # grid (1.6e-5 against delta = 1e-5 in tests/noise/test_huber_calibration.py). This
    # helper is a test and benchmark instrument, not used by FlippedHuberMechanism; its grid
    # handling is left for a separate change.
    vals = np.array([_hc._rho_s(p + h, b) - _hc._rho_s(p - h, b) for p in pts])
    codes = []
    for k, lo in enumerate(pts):
        hi = pts[k + 1] if k + 1 < len(pts) else math.inf
        mid = lo + 1.0 if hi == math.inf else 0.5 * (lo + hi)
        a, c = mid + h, mid - h
        if a > b and (c > b or c < -b):
            codes.append(0)
        elif a > b and c >= 0.0:
            codes.append(1)
        elif a > b:
            codes.append(2)
        elif c < 0.0:
            codes.append(3)
        else:
            codes.append(4)
    return np.array(pts), vals, np.array(codes), D


def _solve(y, seg, pts, codes, b, h, D):
    code = codes[seg]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.select(
            [code == 0, code == 1, code == 2, code == 3],
            [
                y / D,
                b + np.sqrt(np.maximum(2.0 * (y - b * D), 0.0)) - h,
                np.sqrt(np.maximum(2.0 * (y + b * D), 0.0)) - b - h,
                y / (2.0 * b) if b > 0 else y * 0.0,
            ],
            default=np.nan,
        )
    lo = pts[seg]
    hi = np.where(seg + 1 < len(pts), pts[np.minimum(seg + 1, len(pts) - 1)], np.inf)
    return np.clip(u, lo, hi)


def centred_inverse_sup(y, b, h):
    """Vectorised sup{u : rho(u + h) - rho(u - h) <= y} for y >= 0 (matches the scalar one)."""
    pts, vals, codes, D = _segments(b, h)
    y = np.asarray(y, dtype=float)
    seg = np.clip(np.searchsorted(vals, y, side="right") - 1, 0, len(pts) - 1)
    return _solve(y, seg, pts, codes, b, h, D)


def centred_inverse_inf(z, b, h):
    """Vectorised inf{u >= 0 : rho(u + h) - rho(u - h) >= z} for z > 0."""
    pts, vals, codes, D = _segments(b, h)
    z = np.asarray(z, dtype=float)
    seg = np.clip(np.searchsorted(vals, z, side="left") - 1, 0, len(pts) - 1)
    return _solve(z, seg, pts, codes, b, h, D)


def loss_pmf(b, D, grid, side, tail=1e-30):
    """Discretised 1-D privacy loss ``L = log g(S) - log g(S - D)`` with S ~ FH(b, 1).

    Returns ``(j0, pmf, mass_inf)``: probability ``pmf[i]`` sits at ``(j0 + i) * grid`` and
    ``mass_inf`` at +inf. ``side="upper"`` rounds losses up (delta upper bound), ``"lower"``
    rounds them down and drops the mass below the grid (delta lower bound).
    """
    h2 = 0.5 * D
    log_z = _hc.log_normaliser(b)
    s_hi = float(_hc.isf_std(math.log(tail), b, log_z)) + D + 1.0
    l_min = float(_hc.rho(s_hi - D, b) - _hc.rho(s_hi, b))
    l_max = float(_hc.rho(-s_hi - D, b) - _hc.rho(-s_hi, b))
    j_lo, j_hi = math.floor(l_min / grid) - 1, math.ceil(l_max / grid) + 1
    x = np.arange(j_lo, j_hi + 1) * grid
    # P(L < x) = P(S > w(x)) and P(L >= x) = P(S <= w(x)) with w(x) = h2 + sup{u: zeta(u) <= -x}
    w = np.empty_like(x)
    neg = x <= 0
    w[neg] = h2 + centred_inverse_sup(-x[neg], b, h2)
    w[~neg] = h2 - centred_inverse_inf(x[~neg], b, h2)
    log_lt = _hc.logsf_std(w, b, log_z)  # log P(L < x_j), increasing in j
    log_ge = _hc.logcdf_std(w, b, log_z)  # log P(L >= x_j), decreasing in j
    # mass of [x_{j-1}, x_j): accurate difference from whichever side is small
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        d_lt = np.exp(log_lt[1:]) * -np.expm1(log_lt[:-1] - log_lt[1:])
        d_ge = np.exp(log_ge[:-1]) * -np.expm1(log_ge[1:] - log_ge[:-1])
    use_lt = log_lt[1:] < math.log(0.5)
    cell = np.nan_to_num(np.where(use_lt, d_lt, d_ge), nan=0.0)
    cell = np.maximum(cell, 0.0)
    below = math.exp(log_lt[0])  # P(L < x_0)
    above = math.exp(log_ge[-1])  # P(L >= x_last)
    if side == "upper":
        pmf = np.concatenate([[below], cell])  # [x_{j-1}, x_j) -> x_j
        return j_lo, pmf, above
    if side == "lower":
        pmf = np.concatenate([cell, [above]])  # [x_j, x_{j+1}) -> x_j; below dropped
        return j_lo, pmf, 0.0
    raise ValueError("side must be 'upper' or 'lower'")


def kfold_delta(epsilon, b, D, dim, grid=None, side="upper", return_error=False):
    """delta(epsilon) of ``dim`` iid FH(b, 1) coordinates each shifted by ``D`` (std units)."""
    eps = float(epsilon)
    if grid is None:
        grid = min(1e-4, eps / (200.0 * dim))
    j0, pmf, m_inf = loss_pmf(b, D, grid, side)
    x = (j0 + np.arange(pmf.size)) * grid
    # exponential tilt so that the K-fold tilted mean sits at eps (saddle point)
    xs = x - x.mean()

    def tilted_mean(lam):
        w = np.exp(lam * xs - np.max(lam * xs)) * pmf
        return dim * float(np.sum(w * x) / np.sum(w)) - eps

    lam = 0.0
    if tilted_mean(0.0) < 0.0:
        hi = 1.0
        while tilted_mean(hi) < 0.0 and hi < 1e4:
            hi *= 2.0
        lam = optimize.brentq(tilted_mean, 0.0, hi) if tilted_mean(hi) > 0 else hi
    expo = lam * xs
    shift = float(np.max(expo))
    tilted = pmf * np.exp(expo - shift)
    total = float(np.sum(tilted))
    log_c = math.log(total) + shift  # log sum_x pmf(x) e^{lam (x - mean)}
    tilted /= total
    n = pmf.size
    n_out = dim * (n - 1) + 1
    nfft = sfft.next_fast_len(n_out, real=True)
    conv = sfft.irfft(sfft.rfft(tilted, nfft) ** dim, nfft)[:n_out]
    # FFT round-off on a probability vector: a few ulps times sqrt(log n) per entry; we use a
    # generous 1e-13 * sqrt(nfft) absolute error per entry of the normalised tilted law
    err = 1e-13 * math.sqrt(nfft)
    x_out = dim * x[0] + np.arange(n_out) * grid
    # undo the tilt: p_K(x) = conv(x) * exp(dim * log_c - lam * (x - dim * mean))
    log_untilt = dim * log_c - lam * (x_out - dim * x.mean())
    sel = x_out > eps
    weight = -np.expm1(eps - x_out[sel])
    with np.errstate(over="ignore", divide="ignore"):
        log_conv = np.log(np.maximum(conv[sel], 1e-300))
        delta = float(np.sum(np.exp(log_conv + log_untilt[sel]) * weight * (conv[sel] > 0)))
        bound_err = float(np.sum(np.exp(math.log(err) + log_untilt[sel]) * weight))
    p_inf = 1.0 - (1.0 - m_inf) ** dim if m_inf > 0 else 0.0
    if side == "upper":
        delta = delta + bound_err + p_inf
    else:
        delta = max(delta - bound_err, 0.0)
    delta = min(delta, 1.0)
    return (delta, bound_err) if return_error else delta


def corner_delta(epsilon, alpha, gamma, dim, sens_inf, side="upper", grid=None):
    """delta(epsilon) for the corner shift ``sens_inf * (1, ..., 1)`` (see module docstring)."""
    return kfold_delta(epsilon, alpha / gamma, sens_inf / gamma, dim, grid=grid, side=side)


def calibrate_corner(epsilon, delta, dim, sens_inf, n_grid=25, side="upper", b_max=8.0):
    """Minimum-variance (alpha, gamma) with ``corner_delta <= delta``.

    ``side="upper"`` uses the rounded-up PLD, so the result is a sound calibration (up to FFT
    round-off); ``side="lower"`` gives the variance below which *no* flipped Huber noise with
    shape in the scanned range can be (epsilon, delta)-DP for the corner neighbour.

    For each shape b the largest standardised shift D with delta <= target is found by a
    bracketing root finder on log D (delta is increasing in D by the Blackwell argument
    above), warm-started from the neighbouring shape; the variance
    ``sens_inf^2 E[S_b^2] / D^2`` is minimised over a log grid of b in [0.02, b_max] plus
    b = 0 (beyond b ~ 8 the law is a Laplace up to tails of mass e^{-64}), with a bounded
    Brent refinement around the best grid point.
    """
    eps, dlt = float(epsilon), float(delta)
    log_t = math.log(dlt)
    state = {"guess": math.log(sens_inf) - 1.0}

    def max_shift(b):
        def f(log_d):
            val = kfold_delta(eps, b, math.exp(log_d), dim, side=side)
            return (math.log(val) if val > 0 else -745.0) - log_t

        lo, hi = state["guess"] - 0.25, state["guess"] + 0.25
        while f(lo) > 0:
            lo -= 1.0
        while f(hi) < 0:
            hi += 1.0
        r = optimize.brentq(f, lo, hi, xtol=1e-6)
        state["guess"] = r
        return math.exp(r - 1e-6) if side == "upper" else math.exp(r + 1e-6)

    def obj(b):
        return _hc.second_moment_std(b) / max_shift(b) ** 2

    grid = np.concatenate([[0.0], np.geomspace(0.02, b_max, n_grid - 1)])
    vals = np.array([obj(b) for b in grid])
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    b_best, v_best = grid[i], vals[i]
    res = optimize.minimize_scalar(obj, bounds=(lo, hi), method="bounded", options={"xatol": 1e-3})
    if res.fun < v_best:
        b_best, v_best = float(res.x), float(res.fun)
    d = max_shift(b_best)
    gamma = sens_inf / d
    return b_best * gamma, gamma
