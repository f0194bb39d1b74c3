"""Laplace and analytic Gaussian mechanisms: calibration, privacy profiles, validation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from dpreg.noise import GaussianMechanism, LaplaceMechanism, analytic_gaussian_sigma
from dpreg.noise.classic import gaussian_delta


def hockey_stick(p, q, eps, lo, hi, points=()):
    """sup_S P(S) - e^eps Q(S) = int max(0, p - e^eps q), by numerical quadrature."""
    val, _ = integrate.quad(
        lambda x: max(0.0, p(x) - math.exp(eps) * q(x)),
        lo,
        hi,
        points=list(points),
        limit=500,
        epsabs=0.0,
        epsrel=1e-10,
    )
    return val


@pytest.mark.parametrize(
    "eps,delta,sens",
    [(1.0, 1e-5, 1.0), (0.3, 1e-6, 1.0), (3.0, 1e-6, 1.0), (0.1, 1e-3, 2.5), (8.0, 1e-10, 0.5)],
)
def test_gaussian_delta_matches_numerical_hockey_stick(eps, delta, sens):
    sigma = analytic_gaussian_sigma(eps, delta, sens)
    # log p/q = (Delta^2 - 2 x Delta) / (2 sigma^2) is decreasing in x, so p > e^eps q exactly
    # on the half-line x < x_star
    x_star = sens / 2 - eps * sigma**2 / sens
    p, q = stats.norm(0, sigma).pdf, stats.norm(sens, sigma).pdf
    num = hockey_stick(p, q, eps, x_star - 40 * sigma, x_star)
    assert hockey_stick(p, q, eps, x_star, x_star + 40 * sigma) == 0.0
    assert num == pytest.approx(delta, rel=1e-6)
    assert gaussian_delta(sigma, eps, sens) <= delta
    assert gaussian_delta(sigma, eps, sens) == pytest.approx(delta, rel=1e-9)
    # smallest sigma: 0.1% less noise breaks delta
    assert gaussian_delta(sigma * 0.999, eps, sens) > delta


def test_reference_values():
    # Balle & Wang (2018): eps = 1, delta = 1e-5, Delta = 1 -> sigma ~= 3.73
    assert analytic_gaussian_sigma(1.0, 1e-5, 1.0) == pytest.approx(3.7306, abs=1e-4)
    # seed 003 / SPEC section 2 (Delta = 1, delta = 1e-6): Gaussian variances 168.80 and 2.38
    assert analytic_gaussian_sigma(0.3, 1e-6, 1.0) ** 2 == pytest.approx(168.80, abs=0.01)
    assert analytic_gaussian_sigma(3.0, 1e-6, 1.0) ** 2 == pytest.approx(2.38, abs=0.01)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (0.5, 1e-6), (0.9, 1e-3)])
def test_analytic_beats_classical_gaussian(eps, delta):
    classical = math.sqrt(2 * math.log(1.25 / delta)) / eps  # valid for eps < 1
    sigma = analytic_gaussian_sigma(eps, delta, 1.0)
    assert sigma < classical
    assert gaussian_delta(classical, eps, 1.0) <= delta


def test_sigma_scales_with_sensitivity_and_is_monotone():
    s1 = analytic_gaussian_sigma(0.7, 1e-6, 1.0)
    assert analytic_gaussian_sigma(0.7, 1e-6, 3.0) == pytest.approx(3 * s1, rel=1e-9)
    sig = [analytic_gaussian_sigma(e, 1e-6, 1.0) for e in (0.1, 0.5, 1, 2, 5, 20)]
    assert np.all(np.diff(sig) < 0)
    sig_d = [analytic_gaussian_sigma(1.0, d, 1.0) for d in (1e-12, 1e-8, 1e-4, 0.1, 0.5)]
    assert np.all(np.diff(sig_d) < 0)


def test_gaussian_mechanism_samples_and_profile():
    mech = GaussianMechanism(1.0, 1e-5, 2.0, random_state=0)
    x = mech.sample(50_000)
    assert stats.kstest(x, stats.norm(0, mech.sigma).cdf).pvalue > 1e-4
    assert mech.variance == pytest.approx(mech.sigma**2)
    assert mech.privacy_profile(1.0) == pytest.approx(1e-5, rel=1e-9)
    prof = mech.privacy_profile([0.5, 1.0, 2.0])
    assert prof.shape == (3,) and np.all(np.diff(prof) < 0)
    assert mech.randomise(np.ones((3, 2))).shape == (3, 2)
    assert np.array_equal(
        GaussianMechanism(1.0, 1e-5, 2.0, random_state=4).sample(3),
        GaussianMechanism(1.0, 1e-5, 2.0, random_state=4).sample(3),
    )


def test_laplace_mechanism_and_profile():
    mech = LaplaceMechanism(0.5, 2.0, random_state=0)
    x = mech.sample(50_000)
    assert stats.kstest(x, stats.laplace(scale=4.0).cdf).pvalue > 1e-4
    assert mech.variance == 2 * 16.0
    p, q = stats.laplace(0, 4.0).pdf, stats.laplace(2.0, 4.0).pdf
    for e in (0.0, 0.1, 0.3):
        assert mech.privacy_profile(e) == pytest.approx(
            hockey_stick(p, q, e, -80, 80, points=(0.0, 2.0)), rel=1e-6, abs=1e-12
        )
    assert mech.privacy_profile(0.5) == 0.0 and mech.privacy_profile(2.0) == 0.0
    assert mech.randomise(np.zeros(4)).shape == (4,)


bad_positive = st.one_of(
    st.floats(max_value=0.0, allow_nan=False),
    st.just(float("nan")),
    st.just(float("inf")),
    st.text(max_size=2),
    st.none(),
)
bad_delta = st.one_of(
    st.floats(max_value=0.0, allow_nan=False, exclude_max=False),
    st.floats(min_value=1.0),
    st.just(float("nan")),
    st.text(max_size=2),
)


@settings(max_examples=40, deadline=None)
@given(eps=bad_positive)
def test_bad_epsilon(eps):
    with pytest.raises(ValueError, match="epsilon"):
        GaussianMechanism(eps, 1e-5, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        LaplaceMechanism(eps, 1.0)


@settings(max_examples=40, deadline=None)
@given(delta=bad_delta)
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        GaussianMechanism(1.0, delta, 1.0)


@settings(max_examples=20, deadline=None)
@given(sens=bad_positive)
def test_bad_sensitivity(sens):
    with pytest.raises(ValueError, match="sensitivity"):
        analytic_gaussian_sigma(1.0, 1e-5, sens)
