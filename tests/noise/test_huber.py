"""The flipped Huber distribution: closed forms against quadrature, sampler against the CDF,
limits (Gaussian, Laplace), the mechanism's API and input validation."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from dpreg.noise import FlippedHuber, FlippedHuberMechanism

SHAPES = [(0.0, 1.0), (1e-9, 1.0), (1e-3, 2.0), (0.3, 1.0), (1.0, 1.0), (2.0, 0.5), (5.0, 1.0)]


def _rho(t, alpha):
    return alpha * abs(t) if abs(t) <= alpha else 0.5 * (t * t + alpha * alpha)


def _unnormalised(alpha, gamma):
    return lambda t: math.exp(-_rho(t, alpha) / gamma**2)


def _quad(f, alpha, lo=-np.inf, hi=np.inf):
    pts = sorted({-alpha, 0.0, alpha})
    pieces = [lo, *[p for p in pts if lo < p < hi], hi]
    return sum(
        integrate.quad(f, a, b, epsabs=0, epsrel=1e-12, limit=200)[0]
        for a, b in zip(pieces[:-1], pieces[1:])
    )


@pytest.mark.parametrize("alpha,gamma", SHAPES + [(30.0, 3.0)])
def test_normalising_constant_and_variance_match_quadrature(alpha, gamma):
    fh = FlippedHuber(alpha, gamma)
    f = _unnormalised(alpha, gamma)
    kappa = _quad(f, alpha)
    assert fh.normalising_constant == pytest.approx(kappa, rel=1e-10)
    second = _quad(lambda t: t * t * f(t), alpha) / kappa
    assert fh.var() == pytest.approx(second, rel=1e-9)
    assert fh.std() == pytest.approx(math.sqrt(second), rel=1e-9)
    assert fh.mean() == 0.0
    assert fh.var() <= gamma**2 * (1 + 1e-12)  # Section III-B1 of seed 003


@pytest.mark.parametrize("b", [0.1, 0.5, 1.0, 2.0, 3.0, 5.0])
def test_variance_agrees_with_papers_equation_11(b):
    fh = FlippedHuber(b, 1.0)
    x = b * b / 2
    omega = 2 * (math.sqrt(2 * math.pi) * stats.norm.sf(b) + 2 / b * math.sinh(x))
    var = 1 - (2 / b) ** 3 * (x * math.cosh(x) - math.sinh(x)) / omega
    assert fh.var() == pytest.approx(var, rel=1e-9)
    # kappa = gamma * omega * exp(-alpha^2 / (2 gamma^2))
    assert fh.normalising_constant == pytest.approx(omega * math.exp(-x), rel=1e-12)


@pytest.mark.parametrize("alpha,gamma", SHAPES)
def test_cdf_matches_integrated_pdf(alpha, gamma):
    fh = FlippedHuber(alpha, gamma)
    f = _unnormalised(alpha, gamma)
    kappa = fh.normalising_constant
    for x in [-3.1 * gamma, -alpha, -0.5 * alpha, -1e-3, 0.0, 0.4 * alpha, alpha, 2.5 * gamma]:
        expected = _quad(f, alpha, hi=x) / kappa
        assert float(fh.cdf(x)) == pytest.approx(expected, rel=1e-9, abs=1e-14)
        assert float(fh.sf(x)) == pytest.approx(1 - expected, rel=1e-9, abs=1e-14)
    # pdf is continuous at the transition and symmetric
    eps = 1e-9
    assert fh.pdf(alpha - eps) == pytest.approx(fh.pdf(alpha + eps), rel=1e-6)
    xs = np.linspace(-4, 4, 17)
    np.testing.assert_allclose(fh.pdf(xs), fh.pdf(-xs), rtol=1e-14)


def test_far_tails_against_mpmath():
    mpmath.mp.dps = 40
    for alpha, gamma, x in [(1.0, 1.0, 30.0), (0.5, 2.0, 70.0), (4.0, 1.0, 3.0), (40.0, 1.0, 20.0)]:
        fh = FlippedHuber(alpha, gamma)
        a, g = mpmath.mpf(alpha), mpmath.mpf(gamma)

        def core(u, a=a, g=g):  # int_u^a exp(-a t / g^2) dt for 0 <= u <= a (exact)
            return g**2 / a * (mpmath.e ** (-a * u / g**2) - mpmath.e ** (-(a**2) / g**2))

        def gauss_tail(u, a=a, g=g):  # int_u^inf exp(-(t^2 + a^2) / (2 g^2)) dt, u >= a
            scale = mpmath.e ** (-(a**2) / (2 * g**2)) * g * mpmath.sqrt(mpmath.pi / 2)
            return scale * mpmath.erfc(u / (g * mpmath.sqrt(2)))

        z = 2 * (core(0) + gauss_tail(a))
        xm = mpmath.mpf(x)
        tail = (gauss_tail(xm) if x >= alpha else core(xm) + gauss_tail(a)) / z
        assert float(fh.logsf(x)) == pytest.approx(float(mpmath.log(tail)), rel=1e-12)
        assert float(fh.logcdf(-x)) == pytest.approx(float(mpmath.log(tail)), rel=1e-12)


@pytest.mark.parametrize("alpha,gamma", SHAPES + [(300.0, 1.0), (1.0, 1e-3)])
def test_ppf_inverts_cdf(alpha, gamma):
    fh = FlippedHuber(alpha, gamma)
    s = fh.std()
    xs = np.concatenate(
        [
            np.linspace(-8 * s, 8 * s, 401),
            np.array([-alpha, alpha, alpha * (1 - 1e-9), alpha * (1 + 1e-9)]),
            -np.geomspace(1e-6, 30, 50) * max(gamma, alpha),
        ]
    )
    xs = xs[(fh.cdf(xs) > 0) & (fh.cdf(xs) < 1)]
    # cdf(x) for x > 0 is 1 - sf(x) and loses the right tail in floating point: invert the
    # well-conditioned side (ppf o cdf on x <= 0 and on the bulk, isf o sf on x > 0)
    left = xs[(xs <= 0) | (fh.cdf(xs) < 0.99)]
    right = xs[xs > 0]
    # the conditioning of the quantile function near 0 limits absolute accuracy there
    atol = 4e-16 / fh.pdf(0.0)
    np.testing.assert_allclose(fh.ppf(fh.cdf(left)), left, rtol=1e-11, atol=atol)
    np.testing.assert_allclose(fh.isf(fh.sf(right)), right, rtol=1e-11, atol=atol)
    # and cdf(ppf(q)) == q
    qs = np.array([1e-300, 1e-12, 1e-3, 0.2, 0.5, 0.7, 1 - 1e-9])
    np.testing.assert_allclose(fh.cdf(fh.ppf(qs)), qs, rtol=1e-10)
    assert fh.ppf(0.0) == -np.inf and fh.ppf(1.0) == np.inf and np.isnan(fh.ppf(1.5))
    assert float(fh.isf(0.25)) == pytest.approx(-float(fh.ppf(0.25)))


@pytest.mark.parametrize("alpha,gamma", [(0.0, 1.0), (0.4, 1.0), (1.5, 1.0), (3.0, 2.0)])
def test_sampler_matches_cdf_and_moments(alpha, gamma):
    fh = FlippedHuber(alpha, gamma)
    x = fh.rvs(size=40_000, random_state=12345)
    assert stats.kstest(x, fh.cdf).pvalue > 1e-3
    # variance: Monte Carlo within 5 standard errors (kurtosis-aware)
    m4 = np.mean(x**4)
    se = math.sqrt((m4 - fh.var() ** 2) / x.size)
    assert abs(np.mean(x**2) - fh.var()) < 5 * se
    assert abs(np.mean(x)) < 5 * fh.std() / math.sqrt(x.size)
    # the core/tail split is right: P(|X| <= alpha)
    p_core = float(fh.cdf(alpha) - fh.cdf(-alpha))
    se_core = math.sqrt(p_core * (1 - p_core) / x.size) + 1e-12
    assert abs(np.mean(np.abs(x) <= alpha) - p_core) < 5 * se_core


def test_sampler_extreme_shapes_stay_finite():
    for alpha, gamma in [(0.0, 1e-8), (1e-12, 1.0), (500.0, 1.0), (1e6, 1e3)]:
        x = FlippedHuber(alpha, gamma).rvs(size=2000, random_state=0)
        assert np.all(np.isfinite(x))
    # b = 500 is a Laplace(scale 1/500) up to tails of mass exp(-250000)
    x = FlippedHuber(500.0, 1.0).rvs(size=20_000, random_state=1)
    assert stats.kstest(x, stats.laplace(scale=1 / 500).cdf).pvalue > 1e-3


def test_rvs_reproducible_and_scalar():
    fh = FlippedHuber(1.0, 2.0)
    assert isinstance(fh.rvs(random_state=3), float)
    np.testing.assert_array_equal(fh.rvs(size=5, random_state=3), fh.rvs(size=5, random_state=3))
    assert fh.rvs(size=(2, 3), random_state=0).shape == (2, 3)


def test_limits_gaussian_and_laplace():
    xs = np.linspace(-5, 5, 41)
    np.testing.assert_allclose(FlippedHuber(0.0, 1.7).cdf(xs), stats.norm(scale=1.7).cdf(xs))
    assert FlippedHuber(0.0, 1.7).var() == pytest.approx(1.7**2, rel=1e-14)
    # gamma^2 / alpha fixed at 0.5 and alpha -> inf: Laplace(0.5)
    fh = FlippedHuber(200.0, 10.0)
    np.testing.assert_allclose(fh.cdf(xs), stats.laplace(scale=0.5).cdf(xs), rtol=1e-10)
    assert fh.var() == pytest.approx(2 * 0.5**2, rel=1e-10)


finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(alpha=st.one_of(st.floats(max_value=-1e-300), st.just(np.nan), st.just(np.inf)))
def test_bad_alpha_rejected(alpha):
    with pytest.raises(ValueError):
        FlippedHuber(alpha, 1.0)


@settings(max_examples=40, deadline=None)
@given(gamma=st.one_of(st.floats(max_value=0.0), st.just(np.nan), st.just(np.inf)))
def test_bad_gamma_rejected(gamma):
    with pytest.raises(ValueError):
        FlippedHuber(1.0, gamma)


@pytest.mark.parametrize("bad", ["1", None, True, [1.0]])
def test_non_numeric_parameters_rejected(bad):
    with pytest.raises(ValueError):
        FlippedHuber(bad, 1.0)
    with pytest.raises(ValueError):
        FlippedHuber(1.0, bad)


# --------------------------------------------------------------------------- mechanism API
@settings(max_examples=30, deadline=None)
@given(
    epsilon=st.one_of(st.floats(max_value=0.0), st.just(np.nan), st.just(np.inf)),
)
def test_mechanism_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError):
        FlippedHuberMechanism(epsilon, 1e-6, 1.0)


@settings(max_examples=30, deadline=None)
@given(delta=st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0), st.just(np.nan)))
def test_mechanism_rejects_bad_delta(delta):
    with pytest.raises(ValueError):
        FlippedHuberMechanism(1.0, delta, 1.0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sensitivity": 0.0},
        {"sensitivity": -1.0},
        {"sensitivity": np.inf},
        {"dim": 0},
        {"dim": 2.5},
        {"dim": 3, "l2_sensitivity": -1.0},
        {"dim": 3, "l1_sensitivity": 0.0},
        {"dim": 1, "l2_sensitivity": 2.0},
    ],
)
def test_mechanism_rejects_bad_sensitivities(kwargs):
    base = {"epsilon": 1.0, "delta": 1e-6, "sensitivity": 1.0}
    base.update(kwargs)
    with pytest.raises(ValueError):
        FlippedHuberMechanism(**base)


def test_mechanism_shapes_and_reproducibility():
    m = FlippedHuberMechanism(1.0, 1e-6, 1.0, random_state=7)
    assert m.sample().shape == (1,)
    assert m.sample(10).shape == (10, 1)
    assert isinstance(m.randomise(3.0), float)
    m3 = FlippedHuberMechanism(1.0, 1e-6, 1.0, dim=3, random_state=7)
    assert m3.sample().shape == (3,)
    assert m3.sample((4, 2)).shape == (4, 2, 3)
    assert m3.randomise(np.zeros((5, 3))).shape == (5, 3)
    with pytest.raises(ValueError):
        m3.randomise(np.zeros(4))
    with pytest.raises(ValueError):
        m3.randomise(1.0)
    a = FlippedHuberMechanism(1.0, 1e-6, 1.0, dim=3, random_state=11).sample(5)
    b = FlippedHuberMechanism(1.0, 1e-6, 1.0, dim=3, random_state=11).sample(5)
    np.testing.assert_array_equal(a, b)
    assert m3.randomize is not None and "FlippedHuberMechanism" in repr(m3)


def test_mechanism_noise_has_the_calibrated_law():
    m = FlippedHuberMechanism(0.5, 1e-5, 2.0, dim=4, random_state=3)
    x = m.sample(10_000)
    assert x.shape == (10_000, 4)
    assert stats.kstest(x.ravel(), m.distribution.cdf).pvalue > 1e-3
    # coordinates independent: sample correlation small
    c = np.corrcoef(x.T)
    assert np.max(np.abs(c - np.eye(4))) < 5 / math.sqrt(10_000)
    assert m.variance == pytest.approx(FlippedHuber(m.alpha, m.gamma).var())


def test_default_sensitivities_are_worst_case_and_tightened():
    m = FlippedHuberMechanism(1.0, 1e-6, 1.0, dim=9)
    assert m.l2_sensitivity == pytest.approx(3.0) and m.l1_sensitivity == pytest.approx(9.0)
    # an l1 sensitivity larger than sqrt(dim) * l2 is implied-tightened
    m = FlippedHuberMechanism(1.0, 1e-6, 1.0, dim=9, l2_sensitivity=1.0, l1_sensitivity=100.0)
    assert m.l1_sensitivity == pytest.approx(3.0)
    assert m.l2_sensitivity == pytest.approx(1.0)
