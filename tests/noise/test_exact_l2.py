"""The fused l2 K-norm release (``dpreg.noise._exact_l2``): enclosures, exact disc tests, law."""

import math

import numpy as np
import pytest
from flint import arb, ctx
from scipy import stats

from dpreg._random import random_words
from dpreg.noise import _exact as ex
from dpreg.noise import _exact_l2 as el


def _centred(k):
    return (2.0 * k + 1.0) * 2.0**-53 - 1.0


def _pairs_inside(rng, n):
    """Centred pairs certainly inside the disc: random ones, tiny s, and s within 2^-t of 1."""
    k = (random_words(rng, (2, 4 * n)) >> np.uint64(11)).astype(np.float64)
    cu, cv = _centred(k)
    # near the circle: cv chosen so that 1 - s is about 2^-t
    t = rng.choice([12.0, 25.0, 40.0, 46.0], size=cu.size)
    pick = rng.random(cu.size) < 0.25
    cv_edge = np.sqrt(np.maximum(1.0 - cu * cu - 2.0**-t, 0.0))
    cv = np.where(pick, _centred(np.floor((cv_edge + 1.0) * 2.0**52)), cv)
    # tiny s: keys next to 2^52 (u, v near 0)
    tiny = rng.random(cu.size) < 0.05
    cu = np.where(tiny, _centred(2.0**52 + rng.integers(-3, 3, cu.size)), cu)
    cv = np.where(tiny, _centred(2.0**52 + rng.integers(-3, 3, cu.size)), cv)
    s = cu * cu + cv * cv
    ok = s < 1.0 - ex._RHO
    return cu[ok][:n], cv[ok][:n]


def _worst_ratio(m, log, lam, n_rows=120, seed=0):
    """max over checked coordinates of |exact - x| / Rad (Rad = 1/2 - lim) for the fused l2
    routine, the exact value taken at random points of the uniforms' intervals (300 bits)."""
    rng = np.random.default_rng(seed)
    p = (m + 1) // 2
    prog = ex._knorm_l2(m, 0.7)[0]
    kg = (random_words(rng, (n_rows, m)) >> np.uint64(11)).astype(np.float64)
    kg[rng.random(kg.shape) < 0.1] = rng.choice([0.0, 1.0, 2.0, 2.0**53 - 1.0])
    cu, cv = _pairs_inside(rng, n_rows * p)
    cu, cv = cu.reshape(n_rows, p), cv.reshape(n_rows, p)
    frac = rng.random((n_rows, m))
    e = -22
    f = 0.7 * 2.0**-e
    with np.errstate(all="ignore"):
        x, lim = el._l2_fused(kg, cu, cv, m, f, frac, log=log, lam=lam)
    worst, checked = 0.0, 0
    old = ctx.prec
    ctx.prec = 300
    try:
        for i in range(n_rows):
            if not np.any(lim[i] > 0):
                continue
            keys = list(kg[i]) + [(c + 1.0 - 2.0**-53) * 2.0**52 for c in (*cu[i], *cv[i])]
            pts = [
                arb(int(k) * 2**64 + int(w)) / arb(2) ** 117
                for k, w in zip(keys, random_words(rng, len(keys)))
            ]
            us = [2 * pts[m + j] - 1 for j in range(p)]
            vs = [2 * pts[m + p + j] - 1 for j in range(p)]
            if any(not (u * u + v * v < 1) for u, v in zip(us, vs)):
                continue  # this point of the box is outside the disc: not in the domain
            Y, _ = prog(ex._ArbBackend, np.array([pts], dtype=object), None)
            for j in range(m):
                if not lim[i, j] > 0:
                    continue
                exact = Y[0, j] / arb(2) ** e + frac[i, j]
                err = float(abs(exact - arb(x[i, j])).upper())
                worst = max(worst, err / (0.5 - lim[i, j]))
                checked += 1
    finally:
        ctx.prec = old
    assert checked > 100
    return worst


@pytest.mark.parametrize("m", [2, 3, 5, 20])
def test_fused_l2_radius_encloses_the_exact_value(m):
    """The exact value lies within the stated radius; the same check flags radii 4096 times
    too small (the control: the radius is not vacuously large)."""
    worst = _worst_ratio(m, np.log, ex._LIBM_REL, seed=m)
    assert worst <= 1.0
    assert worst * 4096 > 1.0


def test_fused_l2_radius_with_accurate_logs_encloses_the_exact_value():
    worst = _worst_ratio(5, el._accurate_log, el._ACCURATE_LOG_REL, seed=11)
    assert worst <= 1.0
    assert worst * 4096 > 1.0


def test_decide_disc_is_exact():
    """Boxes inside / outside are decided at 53 bits; a straddling box is refined until its
    sub-box is inside (checked exactly on integers) or outside."""
    rng = np.random.default_rng(3)
    half = 2**52
    assert el._decide_disc(half, half, rng) == (half, half, 53)  # (u, v) ~ (0, 0)
    assert el._decide_disc(2**53 - 1, 2**53 - 1, rng) is None  # (u, v) ~ (1, 1)
    # a box across the circle: u about 2^-26, v in [1 - 2^-52, 1] (about half inside)
    nu, nv = half + 2**26, 2**53 - 1
    ends = [(2 * n - 2**53, 2 * n + 2 - 2**53) for n in (nu, nv)]
    assert sum(min(a * a, b * b) for a, b in ends) < 4**53 <= sum(b * b for a, b in ends)
    outcomes = set()
    for _ in range(60):
        got = el._decide_disc(nu, nv, rng)
        if got is None:
            outcomes.add("out")
            continue
        a, b, bits = got
        assert bits > 53
        hi = sum(max((2 * n - (1 << bits)) ** 2, (2 * n + 2 - (1 << bits)) ** 2) for n in (a, b))
        assert hi < 1 << (2 * bits)  # the whole refined box is inside the disc
        assert a >> (bits - 53) == nu and b >> (bits - 53) == nv  # a sub-box of the proposal
        outcomes.add("in")
    assert outcomes == {"in", "out"}


def _ks_release(m, n, rng, scale=1.0, true_scale=1.0):
    z = ex.release_knorm(np.zeros((n, m)), 2, m, true_scale, 1.0, rng)
    r = np.linalg.norm(z, axis=1)
    p_r = stats.kstest(r, stats.gamma(m, scale=scale).cdf).pvalue
    # first coordinate of a uniform direction: (t + 1) / 2 ~ Beta((m - 1) / 2, (m - 1) / 2)
    beta = stats.beta((m - 1) / 2, (m - 1) / 2)
    p_d = stats.kstest(z[:, 0] / r, lambda t: beta.cdf((t + 1) / 2)).pvalue
    return p_r, p_d


@pytest.mark.parametrize("m", [2, 3, 5, 20])
def test_l2_release_law_ks_with_control(m):
    """Radius ~ Gamma(m, scale) and the direction's first coordinate, KS; the control (a
    release with a 15 % larger scale tested against the nominal law) is rejected."""
    rng = np.random.default_rng(100 + m)
    p_r, p_d = _ks_release(m, 20_000, rng)
    assert p_r > 1e-3 and p_d > 1e-3
    p_r_bad, _ = _ks_release(m, 20_000, rng, true_scale=1.15)
    assert p_r_bad < 1e-6


def _force_undecided(monkeypatch, which):
    """Make the fused routine's first pass (``which="first"``) or every pass undecided."""
    fused = el._l2_fused

    def patched(*args, log=np.log, lam=ex._LIBM_REL):
        x, lim = fused(*args, log=log, lam=lam)
        if which == "all" or log is np.log:
            lim = np.full_like(lim, -1.0)
        return x, lim

    monkeypatch.setattr(el, "_l2_fused", patched)


def test_second_pass_keeps_the_law(monkeypatch):
    _force_undecided(monkeypatch, "first")
    calls = []
    refine = el._refine_row
    monkeypatch.setattr(el, "_refine_row", lambda *a: calls.append(1) or refine(*a))
    rng = np.random.default_rng(7)
    p_r, p_d = _ks_release(3, 3000, rng)
    assert p_r > 1e-3 and p_d > 1e-3
    assert len(calls) < 30  # the accurate-log pass decided almost every row


def test_forced_arb_path_keeps_the_law(monkeypatch):
    _force_undecided(monkeypatch, "all")
    calls = []
    refine = el._refine_row
    monkeypatch.setattr(el, "_refine_row", lambda *a: calls.append(1) or refine(*a))
    rng = np.random.default_rng(8)
    p_r, p_d = _ks_release(3, 400, rng)
    assert len(calls) == 400  # every row went through arb
    assert p_r > 1e-3 and p_d > 1e-3
    _, p_bad = (
        0,
        stats.kstest(
            np.linalg.norm(ex.release_knorm(np.zeros((400, 3)), 2, 3, 1.3, 1.0, rng), axis=1),
            stats.gamma(3).cdf,
        ).pvalue,
    )
    assert p_bad < 1e-3  # control: a 30 % mis-scaled release is caught at this size


def test_undecided_disc_tests_keep_the_law(monkeypatch):
    """With a much wider float uncertainty about s, many proposals go through the exact
    integer test and their rows through arb from the refined bits; the law is unchanged."""
    monkeypatch.setattr(el, "_RHO", 2.0**-6)
    calls = []
    decide = el._decide_disc
    monkeypatch.setattr(el, "_decide_disc", lambda *a: calls.append(1) or decide(*a))
    rng = np.random.default_rng(9)
    p_r, p_d = _ks_release(3, 2000, rng)
    assert len(calls) > 50
    assert p_r > 1e-3 and p_d > 1e-3


def test_release_is_on_the_grid_and_values_beyond_the_float_grid_are_exact():
    rng = np.random.default_rng(10)
    z = ex.release_knorm(np.full((50, 4), 0.3), 2, 4, 1.0, 1.0, rng)
    e = ex.grid_exponent(ex._up(1.0))
    assert np.all(z * 2.0**-e == np.round(z * 2.0**-e))
    big = ex.release_knorm(np.full((5, 4), 1e300), 2, 4, 1.0, 1.0, rng)
    assert np.all(np.isfinite(big)) and np.all(np.abs(big - 1e300) <= 1e300 * 2.0**-50 + 100)
    assert math.isfinite(float(np.sum(big)))
