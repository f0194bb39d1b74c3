"""Floating-point safety of the median's release (issue #11; dpreg/location/_grid_release.py).

* low-bit distinguishers (the event family of tests/noise/test_floating_point.py) find no gap
  between the releases of two inputs whose ideal laws are e^eps-close, and the same suite
  flags the plain float computation (control);
* released values lie on the public relative grid (at most SIGNIFICANT_BITS + 1 bits);
* the float balls enclose the exact (arb) values, and the arb slow path keeps the law.
"""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest
from scipy import stats

from dpreg import PrivateProjectionMedian
from dpreg._random import random_words
from dpreg.location import _grid_release as gr
from dpreg.location._sampler import ExactSampler
from dpreg.noise._ballarith import _ArbBackend, _FloatBackend

_spec = importlib.util.spec_from_file_location(
    "_fp_noise_suite", pathlib.Path(__file__).parents[1] / "noise" / "test_floating_point.py"
)
_suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_suite)
_dp_violations, _low_bit_events = _suite._dp_violations, _suite._low_bit_events

N_DRAWS = 20_000
C = 0.5  # inverse temperature of the pair below: shifting x by e_1 moves O by <= 1 (sigma = 1)
EPS_PAIR = 2 * C  # so the two ideal laws are (2 C)-close (exp mechanism, factor 2)


def _pair(seed=0, m=24):
    """Two inputs whose ideal laws differ by a shift of e_1: mu_B = mu_A + U e_1, sigma = 1.

    With mu_A = 0 the centring frame of A is x0 = 0 exactly; B's is about e_1, so a float
    computation ``x0 + s x'`` has different low bits on the two sides (Mironov's leak)."""
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((m, 2))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    mu_a = np.zeros(m)
    return U, mu_a, mu_a + U[:, 0], np.ones(m)


def _hardened(U, mu, sigma, seed, n=N_DRAWS):
    return ExactSampler(U, mu, sigma, C, np.random.default_rng(seed)).sample(n)


def _float_path(U, mu, sigma, seed, n=N_DRAWS):
    """The old computation: accepted proposals evaluated in plain float64 (ball midpoints)."""
    smp = ExactSampler(U, mu, sigma, C, np.random.default_rng(seed))
    p, out, rng = smp.proposal, [], np.random.default_rng(seed + 1)
    while sum(len(o) for o in out) < n:
        k = (random_words(rng, (8192, p.q)) >> np.uint64(11)).astype(np.float64)
        S, X, t = p._point(_FloatBackend, k, p.component(rng, 8192))
        ok = p._accept_float(S, X, t) == 1
        out.append(smp.x0 + smp.s * X.m[ok])
    return np.concatenate(out)[:n]


def test_median_release_low_bit_distinguishers_find_no_gap():
    U, mu_a, mu_b, sigma = _pair()
    za = _hardened(U, mu_a, sigma, 1)[:, 0]
    zb = _hardened(U, mu_b, sigma, 2)[:, 0]
    assert _dp_violations(za, zb, EPS_PAIR, 0.0) == {}
    for z in (za, zb):  # at most SIGNIFICANT_BITS + 1 significant bits: never off 2^-53 here
        assert _low_bit_events(z)["off grid 2^-53"].mean() == 0.0


def test_control_the_suite_catches_the_float_median_sampler():
    """The same events flag the plain float computation of the same draws (so the test can
    fail): with x0 = 0 the float output keeps all 53 bits of ``s x'``; with x0 ~ 1 it lies on
    the 2^-53 grid."""
    U, mu_a, mu_b, sigma = _pair()
    za = _float_path(U, mu_a, sigma, 1)[:, 0]
    zb = _float_path(U, mu_b, sigma, 2)[:, 0]
    bad = _dp_violations(za, zb, EPS_PAIR, 0.0)
    assert "off grid 2^-53" in bad, bad


def _significant_bits(z):
    """Number of significant bits of each (non-zero, normal) float."""
    mant, _ = np.frexp(np.abs(z))  # mant in [0.5, 1): 53-bit integer after scaling
    ints = (mant * 2.0**53).astype(np.uint64)
    trailing = np.zeros(z.shape, dtype=int)
    for b in range(53):
        trailing += np.all(
            [(ints >> np.uint64(j)) & np.uint64(1) == 0 for j in range(b + 1)], axis=0
        )
    return 53 - trailing


def test_fitted_location_is_on_the_public_relative_grid():
    X = np.random.default_rng(3).standard_normal((5000, 3)) + [1e3, -2.0, 1e-3]
    a = PrivateProjectionMedian(epsilon=5.0, random_state=4).fit(X).location_
    b = PrivateProjectionMedian(epsilon=5.0, random_state=4).fit(X).location_
    np.testing.assert_array_equal(a, b)  # seeded: reproducible
    assert np.all(_significant_bits(a) <= gr.SIGNIFICANT_BITS + 1)
    # and the rounding is only a relative 2^-33: the estimate is still where it should be
    assert np.all(np.abs(a - [1e3, -2.0, 1e-3]) < 0.2)


def test_significant_bits_helper_detects_full_precision():
    z = np.array([1.0 / 3.0, 0.5, 3.0])
    assert list(_significant_bits(z)) == [53, 1, 2]


def test_float_balls_enclose_the_arb_values():
    """Float path vs arb on the same uniforms (the arb uniforms refine the float intervals)."""
    from flint import arb, ctx

    U, mu, _, sigma = _pair(m=8)
    p = ExactSampler(U, mu, sigma, 3.0, np.random.default_rng(0)).proposal
    words = random_words(np.random.default_rng(5), (300, p.q))
    k = (words >> np.uint64(11)).astype(np.float64)
    comp = p.component(np.random.default_rng(6), 300)
    S, X, t = p._point(_FloatBackend, k, comp)
    status = p._accept_float(S, X, t)
    old = ctx.prec
    ctx.prec = 200
    try:
        for i in range(40):
            extra = random_words(np.random.default_rng(i), p.q)
            nums = [((int(w) >> 11) << 64) | int(e) for w, e in zip(words[i], extra, strict=True)]
            half = arb(2) ** (-(53 + 64 + 1))
            u = np.empty((1, p.q), dtype=object)
            for j, nk in enumerate(nums):
                u[0, j] = arb(arb(2 * nk + 1) * half, half)
            Sa, Xa, ta = p._point(_ArbBackend, u, [int(comp[i])])
            for j in range(p.d):
                v = float(Xa[0, j].mid())
                assert abs(v - X.m[i, j]) <= X.r[i, j], (i, j)
            assert abs(float(Sa[0, 0].mid()) - S.m[i, 0]) <= S.r[i, 0]
            dec = p._accept_arb(Sa, Xa, ta)
            if status[i] != 0:
                assert dec is bool(status[i] == 1)
    finally:
        ctx.prec = old


def test_forced_slow_path_keeps_the_law(monkeypatch):
    """Every decision through arb: same law as the fast path (two-sample KS per coordinate)."""
    U, mu, _, sigma = _pair(m=6)
    fast = ExactSampler(U, mu, sigma, 3.0, np.random.default_rng(7)).sample(400)
    monkeypatch.setattr(
        gr.GridProposal,
        "_accept_float",
        lambda self, S, X, t: np.zeros(S.m.shape[0], dtype=np.int8),
    )
    slow = ExactSampler(U, mu, sigma, 3.0, np.random.default_rng(8)).sample(400, batch=64)
    for j in range(2):
        assert stats.ks_2samp(fast[:, j], slow[:, j]).pvalue > 1e-3
    assert np.all(_significant_bits(slow.ravel()) <= gr.SIGNIFICANT_BITS + 1)


@pytest.mark.slow
def test_median_release_low_bit_distinguishers_long():
    """Ten times more draws."""
    U, mu_a, mu_b, sigma = _pair(seed=1)
    za = _hardened(U, mu_a, sigma, 11, 10 * N_DRAWS)[:, 0]
    zb = _hardened(U, mu_b, sigma, 12, 10 * N_DRAWS)[:, 0]
    assert _dp_violations(za, zb, EPS_PAIR, 0.0) == {}


def _cells_of(value_arb):
    """``_cells_arb`` on one coordinate ``x' = value`` in the frame ``x0 = 0, s = 1``."""
    from types import SimpleNamespace

    X = np.empty((1, 1), dtype=object)
    X[0, 0] = value_arb
    return gr.GridProposal._cells_arb(SimpleNamespace(d=1, s=1.0, x0=np.zeros(1)), X)


def test_arb_cells_decide_values_below_the_smallest_subnormal():
    """Regression (hang on denormal data, scale="iqr"): an ideal value below 2**-1075 has a
    float midpoint 0, from which the old code read the exponent -1 and never decided the cell,
    so ``_slow`` refined forever after the spend. The cell is the fixed spacing 2**-1074
    there; the exponent comes from the exact midpoint (a float one can round up to 2**(E+1))."""
    from flint import arb, ctx

    old = ctx.prec
    ctx.prec = 300
    try:
        tiny = arb(2) ** -1200
        assert list(_cells_of(arb("7.99e-327", tiny))) == [0.0]  # 2**-1084: rounds to 0
        assert list(_cells_of(-arb("7.99e-327", tiny))) == [0.0]
        # 0.6 * 2**-1074 rounds up to the smallest subnormal; 1.4 * 2**-1074 down to it
        assert list(_cells_of(arb(2) ** -1074 * arb("0.6") + tiny)) == [5e-324]
        assert list(_cells_of(arb(2) ** -1074 * arb("1.4") + tiny)) == [5e-324]
        # just below a power of two: the float midpoint is 2**-1000, the exponent is -1001
        below = arb(2) ** -1000 * (1 - arb(2) ** -60)
        assert list(_cells_of(below + arb(0, arb(2) ** -1090))) == [2.0**-1000]
        below = arb(2) ** 10 * (1 - arb(2) ** -60)  # same at a normal scale
        assert list(_cells_of(below + arb(0, arb(2) ** -100))) == [1024.0]
        # agrees with the public rounding map wherever the value is a float
        for v in (3.7e-320, -2.5e-310, 1.234567e-300, 7.0, -1e300):
            assert list(_cells_of(arb(v))) == list(gr.round_relative(np.array([v])))
        # a ball straddling a cell boundary stays undecided (more bits are drawn)
        assert _cells_of(arb(2) ** -1074 * arb("0.5") + arb(0, arb(2) ** -1100)) is None
    finally:
        ctx.prec = old


@pytest.mark.parametrize("kw", [{"scale": "iqr"}, {"scale": "iqr", "norm": "linf"}])
def test_denormal_data_release_in_bounded_time(kw):
    """The hostile case that hung (test_hostile_warnings): n = 200, d = 2, values 0, +-5e-324,
    +-1e-323, epsilon = 50. The test passes and the release is decided in one arb round
    (~0.5 CPU-s); a faulthandler guard turns a regression into a failure, not a hang."""
    import faulthandler

    rng = np.random.default_rng(0)
    X = np.where(rng.random((200, 2)) < 0.5, -1.0, 1.0) * 5e-324 * rng.integers(0, 3, (200, 2))
    faulthandler.dump_traceback_later(60, exit=True)
    try:
        est = PrivateProjectionMedian(epsilon=50.0, random_state=0, **kw).fit(X)
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert np.all(np.abs(est.location_) <= 1e-323)
    assert np.all(_significant_bits(est.location_) <= gr.SIGNIFICANT_BITS + 1)


def test_arb_refinement_is_capped(monkeypatch):
    """A cell that is never decided (the failure mode of the denormal hang) raises after the
    public cap of ``_MAX_ROUNDS`` arb rounds instead of refining forever."""
    U, mu, _, sigma = _pair(m=6)
    monkeypatch.setattr(
        gr.GridProposal,
        "_accept_float",
        lambda self, S, X, t: np.zeros(S.m.shape[0], dtype=np.int8),
    )
    monkeypatch.setattr(gr.GridProposal, "_cells_arb", lambda self, X: None)
    smp = ExactSampler(U, mu, sigma, 3.0, np.random.default_rng(8))
    with pytest.raises(RuntimeError, match=f"{53 + 64 * gr._MAX_ROUNDS} bits"):
        smp.sample(1, batch=64)
