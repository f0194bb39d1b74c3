"""Degenerate draws: no sampler may return an exact 0 (the true value is released) or a
non-finite value, at huge dimensions, extreme lp exponents, extreme polytope scales and extreme
flipped Huber calibrations; and the repaired samplers must still have the right law.

Each statistical check has a control: the same test applied to a wrong law must fail.
"""

import numpy as np
import pytest
from scipy import stats

from dpreg.noise import FlippedHuberMechanism, KNormMechanism, LpBall, PolytopeBall
from dpreg.noise.balls import log_gamma_variates

P_MIN = 1e-4  # fixed seeds: a pass is deterministic, the threshold only guards against drift


def _degenerate_fraction(v):
    v = np.asarray(v)
    return float(np.mean((v == 0) | ~np.isfinite(v)))


# ------------------------------------------------------------------------- log-Gamma variates
@pytest.mark.parametrize("shape", [1e-6, 1e-3, 0.5, 1.0, 3.0])
def test_log_gamma_variates_have_the_loggamma_law(shape):
    rng = np.random.default_rng(0)
    x = log_gamma_variates(rng, shape, 20_000)
    assert np.all(np.isfinite(x))
    assert stats.kstest(x, stats.loggamma(shape).cdf).pvalue > P_MIN
    # control: a shape off by 10 % is detected
    assert stats.kstest(x, stats.loggamma(1.1 * shape).cdf).pvalue < P_MIN


def test_naive_log_of_gamma_underflows_where_log_gamma_variates_does_not():
    # the bug being fixed: log(rng.gamma(1e-3)) is -inf for about half of the draws
    with np.errstate(divide="ignore"):
        naive = np.log(np.random.default_rng(1).gamma(1e-3, size=10_000))
    assert np.mean(np.isinf(naive)) > 0.3
    assert np.all(np.isfinite(log_gamma_variates(np.random.default_rng(1), 1e-3, 10_000)))


# ------------------------------------------------------------------------- lp balls
@pytest.mark.parametrize("p", [1.5, 50, 100, 1000, 1e6])
def test_lp_ball_large_p_has_no_degenerate_coordinates_and_the_right_radius(p):
    ball = LpBall(p, 3)
    U = ball.sample_uniform(20_000, random_state=2)
    assert _degenerate_fraction(U) == 0.0
    r = ball.norm(U)
    assert r.max() <= 1.0 + 1e-12
    # ||U||_K^m ~ Uniform(0, 1) for U uniform in K
    assert stats.kstest(r**3, "uniform").pvalue > P_MIN
    # control: the radius law of a point uniform in a ball of one dimension less is rejected
    assert stats.kstest(r**2, "uniform").pvalue < P_MIN
    # second moment of a coordinate (closed form, Schechtman-Zinn) within 4 standard errors
    expected = ball.coordinate_second_moment()[0, 0]
    se = np.std(U[:, 0] ** 2) / np.sqrt(len(U))
    assert abs(np.mean(U[:, 0] ** 2) - expected) < 4 * se


@pytest.mark.parametrize("p", [50, 1000, 1e6])
def test_lp_ball_in_one_dimension_is_the_uniform_interval(p):
    U = LpBall(p, 1).sample_uniform(20_000, random_state=3)[:, 0]
    assert _degenerate_fraction(U) == 0.0
    assert stats.kstest(U, stats.uniform(-1, 2).cdf).pvalue > P_MIN
    assert stats.kstest(U, stats.uniform(-1, 1.9).cdf).pvalue < P_MIN  # control


@pytest.mark.parametrize("p", [1e100, 1e300])
def test_lp_ball_astronomical_p_is_still_exact_or_refused(p):
    U = LpBall(p, 3).sample_uniform(2000, random_state=8)
    assert _degenerate_fraction(U) == 0.0
    with pytest.raises(ValueError, match="use 'linf'"):
        LpBall(1e301, 3)


def test_lp_gauge_neither_overflows_nor_underflows():
    ball = LpBall(1000, 3)
    assert ball.norm(np.array([5.0, 1.0, 1.0])) == pytest.approx(5.0, rel=1e-12)
    assert ball.norm(np.array([1e-5, 0.0, 0.0])) == pytest.approx(1e-5, rel=1e-12)
    assert LpBall(3, 2).norm(np.array([1e300, 1e300])) == pytest.approx(2 ** (1 / 3) * 1e300)
    out = LpBall(3, 2).norm(np.array([[np.nan, 1.0], [np.inf, 1.0], [0.0, 0.0], [-2.0, 0.0]]))
    assert np.isnan(out[0]) and out[1] == np.inf and out[2] == 0.0 and out[3] == 2.0


# ------------------------------------------------------------------------- K-norm, huge dims
@pytest.mark.parametrize(
    "norm,dim,n",
    [
        ("l1", 1000, 400),
        ("l2", 1000, 400),
        ("linf", 1000, 400),
        (3.0, 1000, 400),
        (1000.0, 1000, 400),
        ("l2", 10_000, 100),
        (1.5, 10_000, 100),
    ],
)
def test_knorm_huge_dim_has_no_degenerate_draws_and_gamma_norm(norm, dim, n):
    mech = KNormMechanism(norm, dim, 2.0, 0.5, random_state=4, method="polar")
    V = mech.sample(n)
    assert _degenerate_fraction(V) == 0.0
    r = mech.ball.norm(V)
    assert stats.kstest(r, mech.norm_distribution().cdf).pvalue > P_MIN
    # control: a 10 % miscalibrated scale is rejected (||V||_K has relative spread 1/sqrt(m))
    assert stats.kstest(r / 1.1, mech.norm_distribution().cdf).pvalue < P_MIN


@pytest.mark.parametrize("p", [100, 1000, 1e6])
def test_knorm_large_p_randomise_never_returns_the_value(p):
    out = KNormMechanism(p, 3, 1.0, 1.0, random_state=5).randomise(np.zeros((5000, 3)))
    assert _degenerate_fraction(out) == 0.0


# ------------------------------------------------------------------------- polytopes
def _cube(dim, scale):
    return PolytopeBall(
        vertices=scale * np.array(np.meshgrid(*[[-1.0, 1.0]] * dim)).reshape(dim, -1).T
    )


@pytest.mark.parametrize("scale", [1e-150, 1e-5, 1.0, 1e11, 1e150])
@pytest.mark.parametrize("kind", ["cube", "cross"])
def test_polytope_at_extreme_scales(scale, kind):
    ball = _cube(4, scale) if kind == "cube" else PolytopeBall(scale * np.eye(6), symmetrize=True)
    d = ball.dim
    # the gauge of a vertex and of its negation is 1 whatever the scale
    v = ball.vertices
    assert np.allclose(ball.norm(v), 1.0) and np.allclose(ball.norm(-v), 1.0)
    mech = KNormMechanism(ball, d, scale, 1.0, random_state=6)
    V = mech.sample(10_000)
    assert _degenerate_fraction(V) == 0.0
    r = ball.norm(V) / scale  # ||V||_K ~ Gamma(d, scale = sensitivity / epsilon = scale)
    assert _degenerate_fraction(r) == 0.0
    assert stats.kstest(r, stats.gamma(a=d, scale=1.0).cdf).pvalue > P_MIN
    assert stats.kstest(r, stats.gamma(a=d, scale=1.1).cdf).pvalue < P_MIN  # control


# ------------------------------------------------------------------------- flipped Huber
@pytest.mark.parametrize(
    "eps,delta,dim",
    [
        (1e-3, 1e-300, 1),
        (1e-3, 0.5, 1),
        (50.0, 1e-300, 1),
        (50.0, 0.5, 1),
        (10.0, 1e-10, 1),
        (1e-3, 1e-300, 5),
        (50.0, 0.5, 5),
    ],
)
def test_flipped_huber_extreme_calibrations_have_no_degenerate_draws(eps, delta, dim):
    mech = FlippedHuberMechanism(eps, delta, 1.0, dim=dim, random_state=7)
    V = mech.sample(20_000).ravel()
    assert _degenerate_fraction(V) == 0.0
    assert stats.kstest(V, mech.distribution.cdf).pvalue > P_MIN
    # control: the same law with a 10 % larger scale is rejected
    wrong = stats.kstest(V * 0.9, mech.distribution.cdf).pvalue
    assert wrong < P_MIN
