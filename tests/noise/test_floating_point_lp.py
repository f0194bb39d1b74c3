"""The exact lp K-norm release, 1 < p < inf (issue #11; ``dpreg/noise/_exact_lp.py``).

* the generalised-Gaussian coordinates (exact Laplace-proposal rejection), the radius and the
  whole vector against the ideal law (KS), each with a mis-scaled control that is rejected;
* every output on the charged grid (and not on a coarser one);
* the low-bit distinguisher at neighbouring values, with the old float ``r U`` draw added in
  floats as the control that IS flagged;
* the machinery: the rejection constant, ``pow`` against arb (the libm assumption), the float
  balls against arb, and a forced slow path whose rows really go through arb;
* the lp objective-perturbation vector on its public grid, with the ideal law.
"""

from __future__ import annotations

import importlib.util
import math
import pathlib

import numpy as np
import pytest
from flint import arb, ctx
from scipy import stats

from dpreg._random import random_words
from dpreg.linear_model import logistic
from dpreg.linear_model._certify import perturbation_grid
from dpreg.noise import KNormMechanism
from dpreg.noise import _exact as ex
from dpreg.noise import _exact_lp as lp
from dpreg.noise._ballarith import _Ball, _FloatBackend
from dpreg.noise._grid import grid_exponent

_spec = importlib.util.spec_from_file_location(
    "_fp_noise_suite_lp", pathlib.Path(__file__).parent / "test_floating_point.py"
)
_suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_suite)


def _gg(p, n, rng):
    """n accepted generalised-Gaussian variates ``S E`` (density ∝ exp(-|v|^p))."""
    k, S, (mm, _), _, _ = lp._accepted(n, p, lp.gg_shift(p), rng)
    return S * mm


def _reference_lp(p, dim, scale, n, rng):
    """A float draw of the ideal law: R V / ||V||_p with scipy's gennorm and gamma."""
    V = stats.gennorm(p).rvs(size=(n, dim), random_state=rng)
    R = rng.gamma(dim, scale, size=(n, 1))
    return R * V / np.sum(np.abs(V) ** p, axis=1, keepdims=True) ** (1.0 / p)


# ---------------------------------------------------------------------------------------------
# the law
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [1.1, 1.5, 3.0, 10.0])
def test_generalised_gaussian_coordinates_have_the_ideal_law(p):
    rng = np.random.default_rng(int(p * 10))
    v = _gg(p, 40_000, rng)
    assert stats.kstest(v, stats.gennorm(p).cdf).pvalue > 1e-3
    # control: a 5 % mis-scaled reference is rejected at this sample size
    assert stats.kstest(v, stats.gennorm(p, scale=1.05).cdf).pvalue < 1e-3


def test_acceptance_rate_is_the_stated_one():
    """The measured fraction of accepted proposals matches Gamma(1 + 1/p) exp(-c_up)."""
    rng = np.random.default_rng(3)
    for p in (1.5, 3.0):
        k = ex._keys(random_words(rng, (200_000, 2)))
        _, _, sign = lp._propose_float(k[:, 0], k[:, 1], p, lp.gg_shift(p))
        assert np.all(sign != 0)
        rate = float(np.mean(sign > 0))
        assert abs(rate - lp.acceptance_rate(p)) < 5 * math.sqrt(rate * (1 - rate) / k.shape[0])


@pytest.mark.parametrize(("p", "dim"), [(1.5, 5), (3.0, 20), (1.5, 2)])
def test_lp_release_has_the_ideal_law(p, dim):
    """Radius ``||z||_p`` ~ Gamma(dim, scale) and the first coordinate against a float
    reference draw of the ideal law (two-sample KS); controls: mis-scaled references (5 % for
    the radius, 15 % for the symmetric coordinate, where KS has less power)."""
    rng = np.random.default_rng(dim)
    scale = 0.7
    mech = KNormMechanism(p, dim, 0.7, 1.0, random_state=rng)
    assert mech.floating_point_safe
    z = mech.sample(20_000)
    r = np.sum(np.abs(z) ** p, axis=1) ** (1.0 / p)
    assert stats.kstest(r, stats.gamma(dim, scale=scale).cdf).pvalue > 1e-3
    assert stats.kstest(r, stats.gamma(dim, scale=scale * 1.05).cdf).pvalue < 1e-3
    ref = _reference_lp(p, dim, scale, 20_000, np.random.default_rng(dim + 100))
    assert stats.ks_2samp(z[:, 0], ref[:, 0]).pvalue > 1e-3
    assert stats.ks_2samp(z[:, 0], 1.15 * ref[:, 0]).pvalue < 1e-3
    # the direction: |z_1| / ||z||_p against the reference's (cone measure)
    rr = np.sum(np.abs(ref) ** p, axis=1) ** (1.0 / p)
    assert stats.ks_2samp(np.abs(z[:, 0]) / r, np.abs(ref[:, 0]) / rr).pvalue > 1e-3


@pytest.mark.parametrize("p", [40.0, 1000.0])
def test_large_p_release_has_the_ideal_radius_and_rarely_needs_arb(p, monkeypatch):
    """Large p (E^p underflows in floats): the row norm is rescaled; ||z||_p ~ Gamma(3)
    (computed in log space) and few rows go to arb."""
    rows = []
    slow_row = lp._slow_row
    monkeypatch.setattr(lp, "_slow_row", lambda *a: rows.append(1) or slow_row(*a))
    z = KNormMechanism(p, 3, 1.0, 1.0, random_state=21).sample(10_000)
    lz = np.log(np.abs(z))
    top = lz.max(axis=1, keepdims=True)
    r = np.exp(top[:, 0] + np.log(np.sum(np.exp(p * (lz - top)), axis=1)) / p)
    assert stats.kstest(r, stats.gamma(3).cdf).pvalue > 1e-3
    assert stats.kstest(r, stats.gamma(3, scale=1.05).cdf).pvalue < 1e-3
    assert len(rows) < 100


def test_lp_release_is_on_the_charged_grid_and_not_a_coarser_one():
    rng = np.random.default_rng(7)
    for p, dim in ((1.5, 3), (3.0, 5)):
        mech = KNormMechanism(p, dim, 1.0, 0.5, random_state=rng)
        e = grid_exponent(float(np.nextafter(2.0, np.inf)))
        z = mech.randomise(np.full((2000, dim), 0.3))
        on = z * 2.0**-e
        assert np.all(on == np.round(on))
        coarser = z * 2.0 ** -(e + 1)
        assert np.mean(coarser != np.round(coarser)) > 0.4


# ---------------------------------------------------------------------------------------------
# the low-bit distinguisher, with the old float draw as its control
# ---------------------------------------------------------------------------------------------
def _old_float_release(mech, v, rng):
    """The former float path without its snapping: ``v + r U`` added in floats (control)."""
    return v + ex.float_knorm_sample(mech.ball, mech.scale, v.shape[0], rng)


@pytest.mark.parametrize("p", [1.5, 3.0])
def test_lp_low_bit_distinguisher_finds_no_gap_and_flags_the_float_draw(p):
    n = 4000
    mech = KNormMechanism(p, 3, 1.0, 1.0, random_state=11)
    shift = np.array([1.0, 0.0, 0.0])
    v0 = np.zeros((n, 3))
    z0, z1 = mech.randomise(v0)[:, 0], mech.randomise(v0 + shift)[:, 0]
    assert _suite._dp_violations(z0, z1, 1.0, 0.0) == {}
    rng = np.random.default_rng(12)
    f0 = _old_float_release(mech, v0, rng)[:, 0]
    f1 = _old_float_release(mech, v0 + shift, rng)[:, 0]
    bad = _suite._dp_violations(f0, f1, 1.0, 0.0)
    assert "off grid 2^-53" in bad


# ---------------------------------------------------------------------------------------------
# the machinery
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [1.0001, 1.1, 1.5, 2.5, 3.0, 10.0, 1000.0])
def test_rejection_constant_bounds_the_log_ratio(p):
    """``c_up >= max_t (t - t^p)``, checked in arb at the maximiser and on a fine grid."""
    c = lp.gg_shift(p)
    old = ctx.prec
    ctx.prec = 200
    try:
        P = arb(p)
        tstar = (-(P.log()) / (P - 1)).exp()
        assert arb(c) > tstar - tstar**P
        for t in np.linspace(0.0, 3.0, 301)[1:]:
            assert arb(c) > arb(t) - arb(t) ** P
    finally:
        ctx.prec = old


def test_pow_libm_accuracy_assumption_holds_here():
    """``np.power`` within ``2^-44`` relative of arb, on the argument ranges the sampler uses:
    E = -log U in (0, 37] to the power p, and sums of m such powers to the power 1/p."""
    rng = np.random.default_rng(13)
    k = (random_words(rng, 6000) >> np.uint64(11)).astype(np.float64)
    k = k[k > 0]
    E = -np.log(k * 2.0**-53)
    E = np.concatenate([E, [2.0**-53, 1e-10, 0.5, 1.0, 1.0 + 2.0**-52, 36.7]])
    worst = 0.0
    old = ctx.prec
    ctx.prec = 150
    try:
        for p in (1.1, 1.5, 3.0, 10.0, 1000.0):
            for x, t in ((E, p), (E * 40.0, 1.0 / p)):
                with np.errstate(over="ignore"):
                    y = np.power(x, t)
                for xi, yi in zip(x[::3], y[::3]):
                    if not (np.isfinite(yi) and yi > 2.0**-1000):
                        continue
                    exact = arb(xi) ** arb(t)
                    worst = max(worst, float(abs((arb(yi) - exact) / exact).upper()))
    finally:
        ctx.prec = old
    assert worst < 2.0**-44


def _pow_enclosure_failures(shrink=1.0):
    rng = np.random.default_rng(14)
    m = np.exp(rng.uniform(-30, 4, 400))
    r = m * np.exp(rng.uniform(-50, -22, 400))
    bad = 0
    old = ctx.prec
    ctx.prec = 200
    try:
        for t in (1.5, 3.0, 1.0 / 3.0, 40.0):
            y = _FloatBackend.pow(_Ball(m, r), t)
            for i in range(m.size):
                if not np.isfinite(y.r[i]):
                    continue
                for u in (-1.0, 1.0, rng.uniform(-1, 1)):
                    x = arb(m[i]) + arb(r[i]) * arb(u)
                    exact = x ** arb(t)
                    rad = arb(y.r[i] * shrink)
                    if not (arb(y.m[i]) - rad <= exact <= arb(y.m[i]) + rad):
                        bad += 1
    finally:
        ctx.prec = old
    return bad


def test_float_pow_ball_encloses_the_exact_power():
    assert _pow_enclosure_failures() == 0


def test_pow_enclosure_check_fails_with_too_small_radii():
    """Control: radii shrunk 2^12-fold must fail the same check."""
    assert _pow_enclosure_failures(2.0**-12) > 0


def _accept_mismatches(p, sign_of=None):
    """Proposals (random and adversarial keys: k = 0, 1, 2, near 2^53, 2^52, ...) whose float
    accept sign is sure, checked against the exact margin (arb) at random points of both
    uniforms' intervals; returns (wrong, checked, undecided k1 = 0 proposals wrongly decided)."""
    rng = np.random.default_rng(22)
    words = _suite._adversarial_words(rng, 400, 2)
    k = ex._keys(words)
    c = lp.gg_shift(p)
    _, _, sign = lp._propose_float(k[:, 0], k[:, 1], p, c)
    if sign_of is not None:
        sign = sign_of(k, p, c)
    wrong = checked = 0
    old = ctx.prec
    ctx.prec = 300
    try:
        for i in np.flatnonzero(sign != 0):
            for _ in range(2):
                u = [
                    (arb(int(kk)) + arb(int(random_words(rng, 1)[0])) / arb(2) ** 64) / arb(2) ** 53
                    for kk in k[i]
                ]
                e1, e2 = -u[0].log(), -u[1].log()
                margin = e2 - (e1 ** arb(p) - e1 + arb(c))
                checked += 1
                if (sign[i] > 0 and not margin > 0) or (sign[i] < 0 and not margin < 0):
                    wrong += 1
    finally:
        ctx.prec = old
    return wrong, checked


@pytest.mark.parametrize("p", [1.0001, 1.5, 3.0, 1000.0])
def test_float_accept_decisions_agree_with_exact_arithmetic(p):
    wrong, checked = _accept_mismatches(p)
    assert checked > 400
    assert wrong == 0


def test_accept_check_catches_an_unsound_sure_reject():
    """Control: the overflow rule without its finiteness guard (a first draft of this code)
    calls ``k1 = 0`` proposals (E in [36.7, inf)) sure rejects; near p = 1 many of them are
    accepts, and the same check catches it."""

    def unguarded(k, p, c):
        fb = _FloatBackend
        with np.errstate(all="ignore"):
            mag = fb.neglog(k[:, 0])
            y = fb.pow(mag, p)
            sign = ex._fast_sign(fb.neglog(k[:, 1]) - ((y - mag) + c))
            huge = (np.isinf(y.m) | np.isnan(y.r)) & (mag.r * p <= mag.m * 2.0**-20)
        return np.where(huge & (k[:, 1] > 0), -1, sign)

    wrong, _ = _accept_mismatches(1.0001, unguarded)
    assert wrong > 0


def _row_cell_mismatches(rows=300, bits=36, p=3.0):
    """Rows whose float cells are all 'certain' on a fine grid (``2^-bits`` of the scale),
    checked against the exact value at a random point of the uniforms' intervals (arb)."""
    rng = np.random.default_rng(15)
    m, scale = 3, 1.0
    e = grid_exponent(scale, bits)
    c = lp.gg_shift(p)
    k1, S, (mm, mr), (ym, yr), _ = lp._accepted(rows * m, p, c, rng)
    mag = _Ball(mm.reshape(rows, m), mr.reshape(rows, m))
    y = _Ball(ym.reshape(rows, m), yr.reshape(rows, m))
    wR = random_words(rng, (rows, m))
    with np.errstate(all="ignore"):
        cells, certain = lp._row_cells(
            ex._keys(wR), S.reshape(rows, m), mag, y, p, scale, 2.0**-e, np.zeros((rows, m))
        )
    k1 = k1.reshape(rows, m)
    S = S.reshape(rows, m)
    bad = checked = 0
    old = ctx.prec
    ctx.prec = 300
    try:
        for i in np.flatnonzero(certain.all(axis=1)):

            def pt(key):
                return (arb(int(key)) + arb(int(random_words(rng, 1)[0])) / arb(2) ** 64) / arb(
                    2
                ) ** 53

            prod = arb(1)
            for w in wR[i]:
                prod *= pt(int(w) >> 11)
            R = -prod.log() * scale
            E = [-pt(kk).log() for kk in k1[i]]
            nrm = sum((x ** arb(p) for x in E), arb(0)) ** (1 / arb(p))
            for j in range(m):
                exact = (R * E[j] * float(S[i, j]) / nrm / arb(2) ** e + 0.5).floor()
                checked += 1
                if not exact.contains(int(cells[i, j])) or not exact.is_exact():
                    bad += 1
    finally:
        ctx.prec = old
    return bad, checked


@pytest.mark.parametrize("p", [3.0, 40.0])  # 40: the rescaled norm c ||E / c||_p
def test_float_row_cells_agree_with_exact_arithmetic(p):
    bad, checked = _row_cell_mismatches(p=p)
    assert checked > 300
    assert bad == 0


def test_row_cell_check_fails_when_the_radii_are_ignored(monkeypatch):
    """Control: a cell routine that ignores the balls' radii (every cell 'certain'), on a
    ``2^-50`` grid (cells about as fine as the uniforms' intervals), is caught."""

    def midpoint_only(Y, inv_g, frac):
        n = np.round(Y.m * inv_g + frac)
        return n, np.ones(n.shape, dtype=bool)

    monkeypatch.setattr(lp, "_fast_cells", midpoint_only)
    bad, checked = _row_cell_mismatches(rows=100, bits=50)
    assert checked == 300
    assert bad > 0
    assert bad > 0


def test_forced_slow_path_takes_arb_and_keeps_the_law(monkeypatch):
    """Every accept test and every row forced through arb: all rows really take the arb path
    (counted), and the law is unchanged (KS of the radius and of the first coordinate)."""
    fast_cells, fast_sign = lp._fast_cells, lp._fast_sign

    def never_certain(*args):
        n, _ = fast_cells(*args)
        return n, np.zeros(n.shape, dtype=bool)

    def never_sure(a):
        return np.zeros_like(fast_sign(a))

    decided, slow_rows = [], []
    decide, slow_row = lp._decide_arb, lp._slow_row
    monkeypatch.setattr(lp, "_fast_cells", never_certain)
    monkeypatch.setattr(lp, "_fast_sign", never_sure)
    monkeypatch.setattr(lp, "_decide_arb", lambda *a: decided.append(1) or decide(*a))
    monkeypatch.setattr(lp, "_slow_row", lambda *a: slow_rows.append(1) or slow_row(*a))
    rng = np.random.default_rng(16)
    n, dim, p = 400, 2, 1.5
    z = ex.release_knorm(np.zeros((n, dim)), p, dim, 1.0, 1.0, rng)
    assert len(slow_rows) == n  # every row went through arb
    assert len(decided) >= n * dim  # and every accepted proposal was decided there
    r = np.sum(np.abs(z) ** p, axis=1) ** (1.0 / p)
    scale = float(np.nextafter(1.0, np.inf))
    assert stats.kstest(r, stats.gamma(dim, scale=scale).cdf).pvalue > 1e-3
    ref = _reference_lp(p, dim, scale, 20_000, np.random.default_rng(17))
    assert stats.ks_2samp(z[:, 0], ref[:, 0]).pvalue > 1e-3


def test_values_far_off_the_grid_are_released_exactly():
    """Huge values (beyond float resolution of value / g) go through arb; the release is the
    value's own grid point plus noise, on the grid."""
    rng = np.random.default_rng(18)
    v = np.array([[1e30, -3.0e20, 0.1]] * 20)
    z = ex.release_knorm(v, 1.5, 3, 1.0, 1.0, rng)
    e = grid_exponent(float(np.nextafter(1.0, np.inf)))
    assert np.all(z * 2.0**-e == np.round(z * 2.0**-e))
    assert np.allclose(z[:, 0], 1e30, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# the lp objective-perturbation vector
# ---------------------------------------------------------------------------------------------
def test_lp_op_vector_is_on_its_grid_with_the_ideal_law():
    dim, sens, eps = 4, 2.0, 0.8
    grid = perturbation_grid(dim, sens, eps)
    rng = np.random.default_rng(19)
    V = np.array([logistic._perturbation(3.0, dim, sens, eps, rng) for _ in range(600)])
    assert np.all(V / grid.step == np.round(V / grid.step))
    coarser = V / (2 * grid.step)
    assert np.mean(coarser != np.round(coarser)) > 0.4
    r = np.sum(np.abs(V) ** 3.0, axis=1) ** (1.0 / 3.0)
    scale = sens / eps
    assert stats.kstest(r, stats.gamma(dim, scale=scale).cdf).pvalue > 1e-3
    assert stats.kstest(r, stats.gamma(dim, scale=1.15 * scale).cdf).pvalue < 1e-3


def test_lp_fit_sees_a_grid_vector(monkeypatch):
    """Through a whole fit with norm=1.5: the vector handed to the solver is on the grid."""
    from dpreg import ObjectivePerturbationLogistic

    seen = []
    orig = logistic._perturbation
    monkeypatch.setattr(
        logistic, "_perturbation", lambda *a: seen.append((a, orig(*a))) or seen[-1][1]
    )
    rng = np.random.default_rng(20)
    X = rng.uniform(-1, 1, size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    ObjectivePerturbationLogistic(norm=1.5, bounds_X=(-1, 1), classes=[0, 1], random_state=0).fit(
        X, y
    )
    assert seen
    (norm, dim, sens, eps, _), V = seen[0]
    assert norm == 1.5
    step = perturbation_grid(dim, sens, eps).step
    assert np.all(V / step == np.round(V / step))


@pytest.mark.slow
@pytest.mark.parametrize(("p", "dim"), [(1.5, 3), (3.0, 5), (1.5, 20)])
def test_lp_low_bit_distinguisher_long(p, dim):
    """The long form: 20,000 releases a side, every coordinate's events."""
    n = 20_000
    mech = KNormMechanism(p, dim, 1.0, 1.0, random_state=31)
    shift = np.zeros(dim)
    shift[0] = 1.0
    v0 = np.zeros((n, dim))
    z0, z1 = mech.randomise(v0), mech.randomise(v0 + shift)
    for j in (0, dim - 1):
        assert _suite._dp_violations(z0[:, j], z1[:, j], 1.0, 0.0) == {}
