"""KNG grid release (issue #11): draws on a public power-of-two grid, decided exactly.

* the released parameters are cell centres of the public grid (a function of the cell only);
* a low-bit distinguisher suite finds no gap between neighbouring data sets, and flags a
  control that adds a tiny data-dependent float term to the same draws;
* the exact pieces: indicators at near-ties, the lazily decided acceptance, the grid box and
  the float-error charge.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpreg import KNGQuantileRegressor
from dpreg._kng_grid import accept, accept_fast, float_scale, grid_box, indicators_at
from dpreg.kng import KNG
from dpreg.linear_model._quantile_core import design, quantile_gradient
from dpreg.noise.balls import make_ball


# ----------------------------------------------------------------------------- the suite
def _low_bit_events(z):
    """name -> boolean array over draws of the float64 values ``z``."""
    bits = np.ascontiguousarray(z, dtype=np.float64).view(np.uint64)
    mant = bits & np.uint64((1 << 52) - 1)
    expo = (bits >> np.uint64(52)) & np.uint64(0x7FF)
    ev = {}
    for k in (20, 26, 30, 32, 34, 40, 46, 53):
        scaled = z * 2.0**k
        ev[f"off grid 2^-{k}"] = scaled != np.round(scaled)
    ev["last mantissa bit"] = (mant & np.uint64(1)) == 1
    ev["low 8 mantissa bits zero"] = (mant & np.uint64(0xFF)) == 0
    ev["low 20 mantissa bits zero"] = (mant & np.uint64(0xFFFFF)) == 0
    ev["exponent even"] = (expo % np.uint64(2)) == 0
    return ev


def _gaps(z0, z1, epsilon, z_crit=5.0):
    """Events with ``P_a(E) > e^eps P_b(E)`` beyond sampling error (either direction)."""
    e0, e1 = _low_bit_events(z0), _low_bit_events(z1)
    bad = {}
    for name in e0:
        p0, p1 = e0[name].mean(), e1[name].mean()
        for pa, pb in ((p0, p1), (p1, p0)):
            stat = pa - math.exp(epsilon) * pb
            se = math.sqrt(
                pa * (1 - pa) / len(z0) + math.exp(2 * epsilon) * pb * (1 - pb) / len(z1)
            )
            if stat > z_crit * se + 1.0 / min(len(z0), len(z1)):
                bad[name] = (round(p0, 4), round(p1, 4))
    return bad


def _neighbours():
    """n = 8, d = 2; one record moves. ``y`` sums to 0 in the first set and not in the second."""
    X0 = np.array([[-1.0], [-0.5], [0.0], [0.5], [1.0], [-1.0], [0.25], [0.75]])
    y0 = np.array([-1.0, -0.5, 0.25, 0.5, 1.0, -1.25, 0.25, 0.75])
    X1, y1 = X0.copy(), y0.copy()
    X1[7], y1[7] = -1.0, 3.0
    return (X0, y0), (X1, y1)


def _draws(data, m, seed, tamper=False):
    """``m`` released (scaled) parameter vectors of the exact sampler on ``data``."""
    X, y = data
    W = design(X, True)
    mech = KNG(quantile_gradient(W, y, 0.5), 1.0, 1.0, "linf", [-2.0, -2.0], [2.0, 2.0])
    rng = np.random.default_rng(seed)
    out = np.array([mech.sample_exact(rng, jump_bound=np.ones(2)) for _ in range(m)])
    if tamper:  # control: a tiny data-dependent float term, invisible to any accuracy test
        out = out + 1e-9 * float(np.sum(y))
    return out


def _check_suite(m):
    d0, d1 = _neighbours()
    z0, z1 = _draws(d0, m, 1), _draws(d1, m, 2)
    for j in range(2):
        assert _gaps(z0[:, j], z1[:, j], 1.0) == {}
    # every coordinate is a cell centre (k + 1/2) g of the public grid
    g, L, _ = grid_box([-2.0, -2.0], [2.0, 2.0])
    for z in (z0, z1):
        k = (z - L) / g - 0.5
        assert np.all(k == np.round(k))
    return d0, d1


def test_kng_draws_have_no_low_bit_gap():
    """600 draws per neighbour; every event of the suite has the same frequency on both sides
    up to sampling error and e^eps (old code: continuous floats, off the grid)."""
    _check_suite(600)


@pytest.mark.slow
def test_kng_draws_have_no_low_bit_gap_long():
    _check_suite(5000)


def test_control_low_bit_suite_flags_a_float_leak():
    """The same draws with ``+ 1e-9 sum(y)`` added in floats: the suite must flag it."""
    d0, d1 = _neighbours()
    z0, z1 = _draws(d0, 300, 1, tamper=True), _draws(d1, 300, 2, tamper=True)
    assert _gaps(z0[:, 0], z1[:, 0], 1.0) != {}


def test_estimator_release_is_a_function_of_the_cell():
    """Two fits on the same data that draw the same cell release bit-identical coefficients,
    and the scaled parameters sit on cell centres."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = X @ np.array([1.0, -1.0]) + rng.standard_normal(200)
    m = KNGQuantileRegressor(bounds_X=(-1, 1), bounds_y=(-6, 6), random_state=3).fit(X, y)
    lower, upper = m.coef_bounds_
    g, L, _ = grid_box(lower, upper)
    theta = np.r_[m.intercept_, m.coef_]  # bounds_X = (-1, 1): mid 0, half 1
    k = (theta - L) / g - 0.5
    assert np.all(k == np.round(k))
    assert m.sampler_diagnostics_["exact"]


# ----------------------------------------------------------------------------- exact pieces
def test_indicators_at_decides_near_ties_exactly():
    """Thresholds one ulp either side of the exact value of ``U @ theta`` (and equal to it)."""
    rng = np.random.default_rng(0)
    U = rng.uniform(-1, 1, size=(300, 3))
    theta = rng.uniform(-1, 1, size=3)
    exact = [sum(Fraction(float(a)) * Fraction(float(t)) for a, t in zip(row, theta)) for row in U]
    near = np.array([float(e) for e in exact])
    for c in (np.nextafter(near, np.inf), np.nextafter(near, -np.inf), near):
        got = indicators_at(U, c, theta)
        truth = np.array([e >= Fraction(float(ci)) for e, ci in zip(exact, c)])
        assert np.array_equal(got, truth)


def test_accept_has_the_exact_probability():
    """P(accept) = exp(log_f - log_m) for thresholds near 1, near 0 and far below 2^-53."""
    rng = np.random.default_rng(1)
    for diff, m in ((-0.1, 20_000), (-3.0, 20_000)):
        hits = sum(accept(rng.random(), diff, 0.0, rng) for _ in range(m))
        p = math.exp(diff)
        assert stats.binomtest(hits, m, p).pvalue > 1e-4
    # threshold e^-800: the fast path cannot decide u = 0 and must not accept at 2^-53 rate
    assert accept_fast(0.0, -800.0, 0.0) is None
    assert not accept(0.0, -800.0, 0.0, rng)
    assert accept_fast(0.5, -800.0, 0.0) is False
    assert accept_fast(0.1, 0.0, 0.0) is True


def test_accept_slow_path_keeps_the_law():
    """u pinned to the 2^-53 interval that contains the threshold: the slow path decides with
    the conditional probability (threshold position inside the interval)."""
    rng = np.random.default_rng(2)
    diff = math.log(0.3)
    t = math.exp(diff)
    u = math.floor(t * 2.0**53) * 2.0**-53
    assert accept_fast(u, diff, 0.0) is None
    from flint import arb, ctx

    old, ctx.prec = ctx.prec, 200
    frac = float(((arb(diff).exp() - u) * 2**53).mid())  # P(U < t | U in [u, u + 2^-53))
    ctx.prec = old
    hits = sum(accept(u, diff, 0.0, rng) for _ in range(2000))
    assert stats.binomtest(hits, 2000, min(max(frac, 0.0), 1.0)).pvalue > 1e-4


def test_grid_box_is_public_and_exact():
    g, L, H = grid_box([-3.0, 1e6], [5.0, 1e6 + 1.0])
    assert np.all(L <= [-3.0, 1e6]) and np.all(H >= [5.0, 1e6 + 1.0])
    assert np.all(np.abs(H / g) < 2.0**49)
    assert g[0] == 2.0**-29  # width 8 = 2^3, 32 bits finer
    assert np.all(np.log2(g) == np.round(np.log2(g)))


def test_float_scale_charges_only_a_little_and_grows_with_n():
    ball = make_ball("linf", 2)
    s_small = float_scale(1.0, 1.0, ball, 1_000, [1.0, 1.0])
    s_big = float_scale(1.0, 1.0, ball, 1_000_000, [1.0, 1.0])
    assert 0.5 * (1 - 1e-6) < s_small < 0.5
    assert 0.49 < s_big < s_small
    with pytest.raises(ValueError):
        float_scale(1e-12, 1.0, ball, 1_000_000, [1.0, 1.0])
