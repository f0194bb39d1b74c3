"""Floating-point safety of the noise releases (issue #11, docs/floating_point.md).

* a low-bit distinguisher suite: neighbouring inputs (0 vs Delta), a family of low-bit events,
  checked against the DP inequality P0(E) <= e^eps P1(E) + delta up to sampling error -- with
  a control proving that the same suite catches the plain float samplers;
* the hardened output law matches the ideal law (KS tests);
* the ball arithmetic behind the exact cells is an enclosure (checked against arb), the libm
  accuracy it assumes holds on this machine, and the arb refinement agrees with the fast path;
* randomness: OS-keyed ChaCha20 for ``random_state=None``, reproducible seeds.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from flint import arb, ctx
from scipy import stats

from dpreg._random import check_random_state, random_words, secure_generator
from dpreg.noise import (
    FlippedHuber,
    FlippedHuberMechanism,
    GaussianMechanism,
    KNormMechanism,
    LaplaceMechanism,
    PolytopeBall,
)
from dpreg.noise import _exact as ex
from dpreg.noise._grid import float_sum_error_bound, grid_exponent, inflate_sensitivity

EPS = 1.0
N_DRAWS = 20_000


# ---------------------------------------------------------------------------------------------
# the distinguisher suite
# ---------------------------------------------------------------------------------------------
def _low_bit_events(z):
    """name -> boolean array over draws; ``z`` are float64 outputs (first coordinate)."""
    bits = np.ascontiguousarray(z, dtype=np.float64).view(np.uint64)
    mant = bits & np.uint64((1 << 52) - 1)
    expo = (bits >> np.uint64(52)) & np.uint64(0x7FF)
    ev = {}
    for k in (20, 26, 32, 40, 46, 53):
        scaled = z * 2.0**k
        ev[f"off grid 2^-{k}"] = scaled != np.round(scaled)
    ev["last mantissa bit"] = (mant & np.uint64(1)) == 1
    ev["low 8 mantissa bits zero"] = (mant & np.uint64(0xFF)) == 0
    ev["low 20 mantissa bits zero"] = (mant & np.uint64(0xFFFFF)) == 0
    ev["exponent even"] = (expo % np.uint64(2)) == 0
    ev["exponent = 0 mod 4"] = (expo % np.uint64(4)) == 0
    return ev


def _dp_violations(z0, z1, epsilon, delta, z_crit=5.0):
    """Events whose frequencies violate P_a(E) <= e^eps P_b(E) + delta beyond sampling error.

    For each event and direction, the statistic ``p_a - e^eps p_b - delta`` has standard
    error ``sqrt(p_a(1-p_a)/n + e^{2 eps} p_b(1-p_b)/n)``; a violation is a value above
    ``z_crit`` standard errors (plus a 1/n floor so that two zero counts never flag).
    """
    e0, e1 = _low_bit_events(z0), _low_bit_events(z1)
    bad = {}
    for name in e0:
        p0, p1 = e0[name].mean(), e1[name].mean()
        n0, n1 = len(z0), len(z1)
        for pa, pb, na, nb in ((p0, p1, n0, n1), (p1, p0, n1, n0)):
            stat = pa - math.exp(epsilon) * pb - delta
            se = math.sqrt(pa * (1 - pa) / na + math.exp(2 * epsilon) * pb * (1 - pb) / nb)
            if stat > z_crit * se + 1.0 / min(na, nb):
                bad[name] = (round(p0, 4), round(p1, 4))
    return bad


def _mechanisms():
    """name -> (release(value_array_of_rows) -> outputs, neighbour shift, delta)."""
    cube = PolytopeBall(vertices=np.array(list(itertools.product([-1.0, 1.0], repeat=2))))
    out = {}
    lap = LaplaceMechanism(EPS, 1.0, random_state=1)
    out["laplace"] = (lap.randomise, np.array([1.0]), 0.0)
    gau = GaussianMechanism(EPS, 1e-5, 1.0, random_state=2)
    out["gaussian"] = (gau.randomise, np.array([1.0]), 1e-5)
    fh = FlippedHuberMechanism(EPS, 1e-5, 1.0, random_state=3)
    out["flipped_huber"] = (fh.randomise, np.array([1.0]), 1e-5)
    fh_small = FlippedHuberMechanism(0.3, 1e-3, 1.0, dim=4, random_state=4)
    out["flipped_huber_dim4"] = (fh_small.randomise, np.array([1.0, 1.0, 1.0, 1.0]), 1e-3)
    for norm, shift in (
        ("l1", [1.0, 0.0, 0.0]),
        ("l2", [1.0, 0.0, 0.0]),
        ("linf", [1.0, 1.0, 1.0]),
        (3, [1.0, 0.0, 0.0]),
    ):
        mech = KNormMechanism(norm, 3, 1.0, EPS, random_state=5)
        out[f"knorm_{norm}"] = (mech.randomise, np.array(shift), 0.0)
    polar = KNormMechanism("l1", 3, 1.0, EPS, random_state=6, method="polar")
    out["knorm_l1_polar"] = (polar.randomise, np.array([1.0, 0.0, 0.0]), 0.0)
    poly = KNormMechanism(cube, 2, 1.0, EPS, random_state=7)
    out["knorm_polytope_cube"] = (poly.randomise, np.array([1.0, 1.0]), 0.0)
    return out


MECHS = _mechanisms()


@pytest.mark.parametrize("name", sorted(MECHS))
def test_low_bit_distinguishers_find_no_gap(name):
    release, shift, delta = MECHS[name]
    v0 = np.zeros((N_DRAWS, shift.size))
    z0 = np.asarray(release(v0)).reshape(N_DRAWS, -1)[:, 0]
    z1 = np.asarray(release(v0 + shift)).reshape(N_DRAWS, -1)[:, 0]
    assert _dp_violations(z0, z1, EPS, delta) == {}
    # the event: "not on the 2^-53 grid" has probability 0 on both sides now
    assert _low_bit_events(z0)["off grid 2^-53"].mean() == 0.0
    assert _low_bit_events(z1)["off grid 2^-53"].mean() == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["laplace", "gaussian", "flipped_huber", "knorm_linf"])
def test_low_bit_distinguishers_long(name):
    """Ten times more draws: a gap of 0.002 would show."""
    release, shift, delta = MECHS[name]
    n = 10 * N_DRAWS
    v0 = np.zeros((n, shift.size))
    z0 = np.asarray(release(v0)).reshape(n, -1)[:, 0]
    z1 = np.asarray(release(v0 + shift)).reshape(n, -1)[:, 0]
    assert _dp_violations(z0, z1, EPS, delta) == {}


def _float_reference(name, rng):
    """The plain float64 samplers of the old code (value + noise in floats)."""
    if name == "laplace":
        return lambda v: v + rng.laplace(0.0, 1.0, size=v.shape), 0.0
    if name == "gaussian":
        sigma = GaussianMechanism(EPS, 1e-5, 1.0).sigma
        return lambda v: v + rng.normal(0.0, sigma, size=v.shape), 1e-5
    if name == "flipped_huber":
        mech = FlippedHuberMechanism(EPS, 1e-5, 1.0)
        return lambda v: v + mech.distribution._float_rvs(size=v.shape, random_state=rng), 1e-5
    ball = KNormMechanism(name, 3, 1.0, EPS).ball
    return lambda v: v + ex.float_knorm_sample(ball, 1.0 / EPS, v.shape[0], rng), 0.0


@pytest.mark.parametrize("name", ["laplace", "gaussian", "flipped_huber", "linf", "l2"])
def test_control_the_suite_catches_the_float_samplers(name):
    """The same suite run on the old float samplers must find the leak (so it can fail)."""
    rng = np.random.default_rng(11)
    release, delta = _float_reference(name, rng)
    dim = 1 if name in ("laplace", "gaussian", "flipped_huber") else 3
    shift = np.ones(dim) if name == "linf" else np.eye(dim)[0]
    v0 = np.zeros((N_DRAWS, dim))
    z0 = release(v0)[:, 0]
    z1 = release(v0 + shift)[:, 0]
    bad = _dp_violations(z0, z1, EPS, delta)
    assert "off grid 2^-53" in bad, bad


# ---------------------------------------------------------------------------------------------
# the hardened law is the ideal law (up to the grid)
# ---------------------------------------------------------------------------------------------
def test_hardened_laws_match_the_ideal_laws():
    n = 20_000
    lap = LaplaceMechanism(0.5, 1.0, random_state=21).sample(n)
    assert stats.kstest(lap, stats.laplace(scale=2.0).cdf).pvalue > 1e-3
    g = GaussianMechanism(1.0, 1e-5, 1.0, random_state=22)
    assert stats.kstest(g.sample(n), stats.norm(scale=g.sigma).cdf).pvalue > 1e-3
    for dim in (1, 4):
        for norm, order in (("l2", 2), ("linf", np.inf), ("l1", 1)):
            for method in ("auto", "polar"):
                mech = KNormMechanism(norm, dim, 2.0, 1.0, random_state=23, method=method)
                radii = np.linalg.norm(mech.sample(n // 4), ord=order, axis=1)
                p = stats.kstest(radii, mech.norm_distribution().cdf).pvalue
                assert p > 1e-3, (norm, dim, method, p)
    # the direction of the l2 noise is uniform: the first coordinate of V/|V| has
    # density prop. to (1 - t^2)^((d-3)/2), i.e. (t + 1)/2 ~ Beta((d-1)/2, (d-1)/2)
    v = KNormMechanism("l2", 4, 1.0, 1.0, random_state=24).sample(n // 4)
    t = v[:, 0] / np.linalg.norm(v, axis=1)
    assert stats.kstest((t + 1) / 2, stats.beta(1.5, 1.5).cdf).pvalue > 1e-3
    for eps, delta in ((1.0, 1e-5), (0.3, 1e-3)):  # Laplace-like and Gaussian-like shapes
        fh = FlippedHuberMechanism(eps, delta, 1.0, random_state=25)
        law = FlippedHuber(fh.alpha, fh.gamma)
        assert stats.kstest(fh.sample(n)[:, 0], law.cdf).pvalue > 1e-3


@pytest.mark.parametrize("b", [0.05, 0.5, 0.79, 0.81, 2.0, 6.0])
def test_flipped_huber_rejection_sampler_law(b):
    """Both proposals (Gaussian below b = 0.798, Laplace above) give FH(b) exactly."""
    rng = np.random.default_rng(int(100 * b))
    s = ex.release_flipped_huber(np.zeros(8_000), b, 1.0, rng)
    assert stats.kstest(s, FlippedHuber(b, 1.0).cdf).pvalue > 1e-3


def test_flipped_huber_grid_follows_the_laplace_core_scale():
    """A Laplace-like calibration (huge b, gamma) must not get a grid as coarse as gamma."""
    mech = FlippedHuberMechanism(1.0, 1e-5, 1.0, dim=2, random_state=0)
    assert mech.distribution.b > 1e3
    z = mech.sample(2000).ravel()
    core_scale = mech.gamma / mech.distribution.b
    assert len(np.unique(z)) > 1990
    assert np.all(z * 2.0 ** -grid_exponent(core_scale) % 1.0 == 0.0)


def test_accuracy_cost_of_the_grid_is_negligible():
    """Rounding to the grid moves a release by at most g/2 = scale 2^-25."""
    for scale in (1e-6, 0.3, 1.0, 7.0, 1e8):
        g = 2.0 ** grid_exponent(scale)
        assert scale * 2.0**-25 < g <= scale * 2.0**-24
    value = np.full(1000, 0.123456789)
    out = LaplaceMechanism(1.0, 1.0, random_state=0).randomise(value)
    var_ratio = np.var(out - value) / 2.0
    assert 0.85 < var_ratio < 1.15


# ---------------------------------------------------------------------------------------------
# the machinery: enclosures, libm, slow path
# ---------------------------------------------------------------------------------------------
def _samplers():
    return {
        "laplace": ex._laplace(1.3),
        "linf": ex._knorm_linf(3, 0.7),
        "l1_polar": ex._knorm_l1_polar(3, 0.7),
        "l2": ex._knorm_l2(3, 0.7),
        "l2_dim1": ex._knorm_l2(1, 0.7),
        "gaussian": ex._gaussian(2.5),
        "fh_laplace_proposal": ex._flipped_huber(2.0, 0.5),
        "fh_gaussian_proposal": ex._flipped_huber(0.3, 0.5),
    }


def _adversarial_words(rng, n, q):
    """Random words plus the extremes: tiny uniforms (k = 0, 1, 2), U near 1, near 1/4, 1/2."""
    w = random_words(rng, (n, q))
    special = np.array(
        [0, 1, 2, 3, 2**52, 2**51, 2**53 - 1, 2**53 - 2, 2**50, 3 * 2**51], dtype=np.uint64
    )
    picks = rng.random((n, q)) < 0.2
    w[picks] = (special[rng.integers(0, special.size, picks.sum())] << np.uint64(11)) | (
        w[picks] & np.uint64(0x7FF)
    )
    return w


@pytest.mark.parametrize("name", sorted(_samplers()))
def test_float_balls_enclose_the_exact_values(name):
    """For random points inside the uniforms' intervals, the exact (arb, 300 bits) value of
    every output lies in the float64 ball; fails when the radii are set to zero (below)."""
    prog, q, m = _samplers()[name]
    rng = np.random.default_rng(31)
    words = _adversarial_words(rng, 300, q)
    k = (words >> np.uint64(11)).astype(np.float64)
    S = 1.0 - 2.0 * (words & np.uint64(1)).astype(np.float64)
    with np.errstate(all="ignore"):  # k = 0 gives infinite (undecided) balls
        Y, acc = prog(ex._FloatBackend, k, S)
    checked = 0
    old = ctx.prec
    ctx.prec = 300
    try:
        for i in range(words.shape[0]):
            # an exact point of each interval: k + (random 64-bit fraction)
            ext = [int(w) >> 11 for w in words[i]]
            frac = random_words(rng, q)
            pts = [arb(kk * 2**64 + int(x)) / arb(2) ** 117 for kk, x in zip(ext, frac)]
            U = np.array([pts], dtype=object)
            Ye, acce = prog(ex._ArbBackend, U, S[i : i + 1])
            for j in range(m):
                r = Y.r[i, j]
                if not np.isfinite(r):
                    continue
                lo, hi = arb(Y.m[i, j]) - arb(r), arb(Y.m[i, j]) + arb(r)
                assert lo <= Ye[0, j] <= hi, (name, i, j)
                checked += 1
            if acc is not None and np.isfinite(acc.r[i, 0]):
                lo, hi = arb(acc.m[i, 0]) - arb(acc.r[i, 0]), arb(acc.m[i, 0]) + arb(acc.r[i, 0])
                assert lo <= acce[0, 0] <= hi
    finally:
        ctx.prec = old
    # (l2 in dim 1 has one output per row, and its pairs outside the disc -- not in the
    # program's domain: the release draws them inside -- give infinite, unchecked balls)
    assert checked > (150 if name == "l2_dim1" else 200)


def test_enclosure_check_fails_with_too_small_radii(monkeypatch):
    """Control: with every radius shrunk 4096-fold the enclosure test above must fail."""
    init = ex._Ball.__init__

    def shrunk(self, m, r):
        init(self, m, np.asarray(r) * 2.0**-12)

    monkeypatch.setattr(ex._Ball, "__init__", shrunk)
    with pytest.raises(AssertionError):
        test_float_balls_enclose_the_exact_values("l2")


def test_libm_accuracy_assumption_holds_here():
    """The fast path assumes |np.log error| <= 2^-44 relative and |np.cos/np.sin error| <=
    2^-44 absolute at 2 pi k 2^-53; measured against arb on random and extreme inputs."""
    rng = np.random.default_rng(41)
    k = np.concatenate(
        [
            (random_words(rng, 20_000) >> np.uint64(11)).astype(np.float64),
            np.arange(1.0, 200.0),
            2.0**53 - np.arange(1.0, 200.0),
            2.0**51 + np.arange(-100.0, 100.0),
            2.0**50 + np.arange(-100.0, 100.0),
        ]
    )
    k = k[k > 0]
    x = (k + 1.0) * 2.0**-53
    t = k * 2.0**-53
    logs, coss, sins = np.log(x), np.cos(2 * math.pi * t), np.sin(2 * math.pi * t)
    old = ctx.prec
    ctx.prec = 120
    try:
        worst_log = worst_trig = 0.0
        for xi, ti, lg, c, s in zip(x, t, logs, coss, sins):
            exact = arb(xi).log()
            if xi != 1.0:
                worst_log = max(worst_log, float(abs((arb(lg) - exact) / exact).upper()))
            tt = 2 * arb(ti)
            worst_trig = max(
                worst_trig,
                float(abs(arb(c) - tt.cos_pi()).upper()),
                float(abs(arb(s) - tt.sin_pi()).upper()),
            )
    finally:
        ctx.prec = old
    # the trig bound includes the error of the argument fl(2 pi t): up to ~2^-49
    assert worst_log < ex._LIBM_REL
    assert worst_trig < 2.0**-43.5


def _l2_words_in_disc(words, m, rng):
    """Redraw each l2 pair until it is certainly inside the unit disc: the release only gives
    the l2 program such pairs (``_exact_l2._disc_pairs``); outside, it is not defined."""
    p = (m + 1) // 2
    for i in range(words.shape[0]):
        for j in range(p):
            while True:
                k = (words[i, [m + j, m + p + j]] >> np.uint64(11)).astype(np.float64)
                c = (2.0 * k + 1.0) * 2.0**-53 - 1.0
                if c @ c < 1.0 - ex._RHO:
                    break
                words[i, [m + j, m + p + j]] = random_words(rng, 2)
    return words


def test_slow_path_agrees_with_the_fast_path():
    """Where the float64 ball decides a cell, the arb refinement finds the same cell; and
    forcing every row through arb keeps the law (KS)."""
    rng = np.random.default_rng(51)
    for prog, q, m in (ex._laplace(1.0), ex._knorm_l2(2, 1.0), ex._flipped_huber(0.3, 1.0)):
        words = random_words(rng, (40, q))
        if prog.__qualname__.startswith("_knorm_l2"):
            words = _l2_words_in_disc(words, m, rng)
        k = (words >> np.uint64(11)).astype(np.float64)
        S = 1.0 - 2.0 * (words & np.uint64(1)).astype(np.float64)
        with np.errstate(all="ignore"):
            Y, acc = prog(ex._FloatBackend, k, S)
        e = -20
        cells, certain = ex._fast_cells(Y, 2.0**20, 0.0)
        for i in range(words.shape[0]):
            got = ex._slow_row(prog, q, words[i], np.zeros(m), e, rng, acc is not None)
            if got is None:  # rejected: the fast path must not have accepted it for sure
                assert ex._fast_sign(acc)[i, 0] <= 0
                continue
            sure = certain[i].all() and (acc is None or ex._fast_sign(acc)[i, 0] > 0)
            if sure:
                assert got == [int(c) for c in cells[i]]


def test_forced_slow_path_keeps_the_law(monkeypatch):
    fast_cells = ex._fast_cells

    def never_certain(*args):
        n, _ = fast_cells(*args)
        return n, np.zeros(n.shape, dtype=bool)

    def laplace_never_certain(*args):  # the fused Laplace routine, forced undecided too
        n, certain = fused_laplace(*args)
        return n, np.zeros_like(certain)

    fused_laplace = ex._laplace_cells
    monkeypatch.setattr(ex, "_fast_cells", never_certain)
    monkeypatch.setattr(ex, "_laplace_cells", laplace_never_certain)
    slow_row = ex._slow_row
    calls = []
    monkeypatch.setattr(ex, "_slow_row", lambda *a: calls.append(1) or slow_row(*a))
    rng = np.random.default_rng(52)
    z = ex.release_laplace(np.full(600, 0.25), 1.0, 1.0, rng) - 0.25
    assert len(calls) == 600  # every Laplace row went through arb
    assert stats.kstest(z, stats.laplace().cdf).pvalue > 1e-3
    z = ex.release_flipped_huber(np.zeros(400), 0.3, 1.0, rng)
    assert stats.kstest(z, FlippedHuber(0.3, 1.0).cdf).pvalue > 1e-3


def test_huge_and_tiny_values_are_released_exactly():
    """Values far beyond the float grid of ``value / g`` go through exact arithmetic."""
    rng = np.random.default_rng(61)
    for v in (1e300, -3e15, 5e-320, 2.0**60 + 2.0**9):
        out = ex.release_laplace(np.full(5, v), 1.0, 1.0, rng)
        assert np.all(np.isfinite(out))
        assert np.all(np.abs(out - v) <= 60.0 + abs(v) * 2.0**-52)


@pytest.mark.parametrize(
    "mech",
    [
        LaplaceMechanism(1.0, 1.0),
        GaussianMechanism(1.0, 1e-5, 1.0),
        KNormMechanism("l2", 2, 1.0, 1.0),
        FlippedHuberMechanism(1.0, 1e-5, 1.0),
    ],
)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_value_is_a_value_error(mech, bad):
    value = np.full(2, bad) if isinstance(mech, KNormMechanism) else bad
    with pytest.raises(ValueError, match="finite"):
        mech.randomise(value)


def test_polytope_is_flagged_as_not_certified():
    assert KNormMechanism("l2", 3, 1.0, 1.0).floating_point_safe
    assert KNormMechanism("linf", 3, 1.0, 1.0).floating_point_safe
    assert KNormMechanism("l1", 3, 1.0, 1.0).floating_point_safe
    assert KNormMechanism(3, 3, 1.0, 1.0).floating_point_safe  # the exact lp release
    cube = PolytopeBall(vertices=np.array(list(itertools.product([-1.0, 1.0], repeat=2))))
    assert not KNormMechanism(cube, 2, 1.0, 1.0).floating_point_safe


# ---------------------------------------------------------------------------------------------
# randomness and float-statistic helpers
# ---------------------------------------------------------------------------------------------
def test_random_state_none_is_a_fresh_os_keyed_chacha():
    from randomgen import ChaCha

    a, b = check_random_state(None), check_random_state(None)
    assert isinstance(a.bit_generator, ChaCha)
    assert not np.array_equal(a.integers(0, 2**62, 8), b.integers(0, 2**62, 8))
    assert isinstance(secure_generator().bit_generator, ChaCha)
    m1, m2 = LaplaceMechanism(1.0, 1.0), LaplaceMechanism(1.0, 1.0)
    assert m1.sample() != m2.sample()


def test_seeded_releases_are_reproducible():
    for make in (
        lambda: LaplaceMechanism(1.0, 1.0, random_state=3),
        lambda: KNormMechanism("l2", 3, 1.0, 1.0, random_state=3),
        lambda: FlippedHuberMechanism(0.3, 1e-3, 1.0, random_state=3),
    ):
        assert np.array_equal(make().sample(50), make().sample(50))


def test_float_sum_error_bound_holds_adversarially():
    """Sums in several orders, in float64, against the exact rational sum."""
    from fractions import Fraction

    rng = np.random.default_rng(71)
    for n in (10, 1000, 20_000):
        x = rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-8, 1, n)
        x[: n // 2] = np.abs(x[: n // 2])
        exact = sum(Fraction(float(v)) for v in x)
        bound = float_sum_error_bound(n, float(np.max(np.abs(x))))
        for s in (np.sum(x), math.fsum(x), sum(x.tolist()), np.cumsum(x)[-1]):
            assert abs(Fraction(float(s)) - exact) <= Fraction(bound)


def test_inflate_sensitivity_is_a_valid_bound():
    from dpreg.noise import L1Ball, L2Ball

    rng = np.random.default_rng(72)
    for ball in (L1Ball(4), L2Ball(4)):
        new = inflate_sensitivity(1.0, 1e-3, ball)
        for _ in range(200):
            d = rng.normal(size=4)
            d /= ball.norm(d)  # ||d||_K = 1 = Delta
            w = rng.uniform(-2e-3, 2e-3, 4)
            assert ball.norm(d + w) <= new + 1e-12


# ---------------------------------------------------------------------------------------------
# the fused float64 cell routines (Gaussian polar method, linf)
# ---------------------------------------------------------------------------------------------
def _fused_cases(bits=40):
    """name -> (sampler, fused(k) -> (cells, certain), frac) on the grid ``2^-bits``: fine
    enough that the radii are a sizeable part of a cell."""
    inv_g, frac = 2.0**bits, 0.3
    gau = ex._gaussian(1.0)
    lin = ex._knorm_linf(3, 0.7)
    lap = ex._laplace(0.7)
    return {
        "gaussian_polar": (gau, lambda k, S: ex._polar_cells(k, 1.0, inv_g, frac)[:2], frac),
        "linf": (lin, lambda k, S: ex._linf_cells(k, 3, 0.7, inv_g, frac), frac),
        "laplace": (lap, lambda k, S: ex._laplace_cells(k, S, 0.7, inv_g, frac), frac),
    }


def _check_fused(name, n_rows=400, bits=40):
    """Every cell the fused routine calls certain is the cell of the exact value (arb, 300
    bits) at a random point inside the uniforms' intervals. Returns (checked, certain)."""
    (prog, q, m), fused, frac = _fused_cases(bits)[name]
    rng = np.random.default_rng(71)
    words = _adversarial_words(rng, n_rows, q)
    k = (words >> np.uint64(11)).astype(np.float64)
    S = 1.0 - 2.0 * (words & np.uint64(1)).astype(np.float64)
    with np.errstate(all="ignore"):
        cells, certain = fused(k, S)
    checked = 0
    old = ctx.prec
    ctx.prec = 300
    try:
        for i in range(n_rows):
            if not certain[i].any():
                continue
            ext = [int(w) >> 11 for w in words[i]]
            extra = random_words(rng, q)
            pts = [arb(kk * 2**64 + int(x)) / arb(2) ** 117 for kk, x in zip(ext, extra)]
            Ye, acc = prog(ex._ArbBackend, np.array([pts], dtype=object), S[i : i + 1])
            if acc is not None:
                assert acc[0, 0] > 0, (name, i)  # a certain cell implies a sure accept
            for j in range(m):
                if certain[i, j]:
                    exact = (Ye[0, j] * arb(2) ** bits + frac + 0.5).floor().unique_fmpz()
                    assert exact is not None and int(exact) == int(cells[i, j]), (name, i, j)
                    checked += 1
    finally:
        ctx.prec = old
    return checked, int(certain.sum())


@pytest.mark.parametrize("name", sorted(_fused_cases()))
def test_fused_cells_agree_with_exact_arithmetic(name):
    checked, _ = _check_fused(name)
    assert checked > 150


@pytest.mark.parametrize("name", sorted(_fused_cases()))
def test_fused_check_fails_with_too_small_radii(name, monkeypatch):
    """Control: with the radii shrunk 2^-20-fold (below the float64 rounding errors) on a grid
    2^-50 fine, wrong 'certain' cells appear."""
    monkeypatch.setattr(ex, "_FUSED_SLACK", 2.0**-20)
    with pytest.raises(AssertionError):
        _check_fused(name, n_rows=400, bits=50)


def test_polar_gaussian_law_and_rejection_paths(monkeypatch):
    """KS against N(0, sigma^2) on a value with a fractional part; and the in-order path
    (taken when an accept test is undecided) gives the same law."""
    rng = np.random.default_rng(81)
    z = ex.release_gaussian(np.full(20_000, 0.375), 1.7, rng) - 0.375
    assert stats.kstest(z, stats.norm(scale=1.7).cdf).pvalue > 1e-3
    real = ex._gaussian

    def with_undecided(sigma):  # the first proposal of every batch is undecided
        prog, q, m = real(sigma)
        propose = prog.propose

        def forced(k, inv_g):
            acc, rej, rows = propose(k, inv_g)
            acc[0] = rej[0] = False
            return acc, rej, rows

        prog.propose = forced
        return prog, q, m

    monkeypatch.setattr(ex, "_gaussian", with_undecided)
    z = ex.release_gaussian(np.full(3000, -0.25), 1.0, rng) + 0.25
    assert stats.kstest(z, stats.norm().cdf).pvalue > 1e-3


@pytest.mark.parametrize("norm", ["l2", "linf"])
def test_knorm_dim1_is_the_laplace_release(norm):
    """In dim 1 every K-norm law is Laplace(scale); ``release_knorm`` draws it with the Laplace
    release. KS against Laplace(scale) on the signed values (a value with a fractional part);
    control: the same test rejects Laplace(1.1 scale), so it can see a wrong calibration."""
    mech = KNormMechanism(norm, 1, 2.0, 1.0, random_state=91)
    z = mech.randomise(np.full((60_000, 1), 0.375))[:, 0] - 0.375
    assert stats.kstest(z, stats.laplace(scale=mech.scale).cdf).pvalue > 1e-3
    assert stats.kstest(z, stats.laplace(scale=1.1 * mech.scale).cdf).pvalue < 1e-3
    # on the mechanism's public grid, like every hardened release
    g = 2.0 ** grid_exponent(mech.scale)
    assert np.all((z + 0.375) / g == np.round((z + 0.375) / g))


def test_fused_laplace_law_with_a_fractional_value():
    """The fused Laplace cells (the default path of LaplaceMechanism and the l1 K-norm): KS
    against Laplace(scale) around a value with a fractional part on the grid; control: the
    same test rejects Laplace(1.1 scale)."""
    rng = np.random.default_rng(93)
    v = 0.375 + 2.0**-30  # a fractional part in grid units
    z = ex.release_laplace(np.full(20_000, v), 0.7, 1.0, rng) - v
    scale = ex._up(0.7 / 1.0)
    assert stats.kstest(z, stats.laplace(scale=scale).cdf).pvalue > 1e-3
    assert stats.kstest(z, stats.laplace(scale=1.1 * scale).cdf).pvalue < 1e-3
