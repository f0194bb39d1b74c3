"""The Laplace(Delta_1 / eps) candidate of FlippedHuberMechanism for dim > 1."""

import math

import numpy as np
import pytest
from scipy import stats

from dpreg.noise import FlippedHuberMechanism
from dpreg.noise import _huber_calibration as hc

P_MIN = 1e-4


@pytest.mark.parametrize(
    "eps,delta,dim,d_inf,d1",
    [(1.0, 1e-5, 10, 1.0, 3.0), (0.5, 1e-8, 5, 1.0, 2.0), (2.0, 1e-6, 8, 2.0, 11.0)],
)
def test_variance_is_the_better_of_theorem8_and_laplace(eps, delta, dim, d_inf, d1):
    mech = FlippedHuberMechanism(eps, delta, d_inf, dim=dim, l1_sensitivity=d1)
    alpha, gamma = hc.calibrate_kdim(
        eps, delta, dim, mech.linf_sensitivity_, mech.l2_sensitivity, mech.l1_sensitivity
    )
    fh_var = gamma**2 * hc.second_moment_std(alpha / gamma)
    lap_var = 2.0 * (mech.l1_sensitivity / eps) ** 2
    assert mech.variance == pytest.approx(min(fh_var, lap_var), rel=1e-12)
    assert mech.kind == ("laplace" if lap_var < fh_var else "flipped_huber")


def test_laplace_draws_have_the_laplace_law():
    mech = FlippedHuberMechanism(1.0, 1e-5, 1.0, dim=10, l1_sensitivity=3.0, random_state=1)
    assert mech.kind == "laplace"
    V = mech.sample(5000)
    assert V.shape == (5000, 10) and np.all(np.isfinite(V)) and not np.any(V == 0)
    assert stats.kstest(V.ravel(), stats.laplace(scale=3.0).cdf).pvalue > P_MIN
    # control: the Theorem 8 limit Laplace(K Delta_inf / eps) = Laplace(10) is rejected
    assert stats.kstest(V.ravel(), stats.laplace(scale=10.0).cdf).pvalue < P_MIN
    out = mech.randomise(np.ones((3, 10)))
    assert out.shape == (3, 10)


def test_laplace_candidate_density_ratio_is_bounded_adversarially():
    """Search shifts d with ||d||_1 <= Delta_1 and outputs t for the largest privacy loss."""
    eps, d1, k = 1.0, 3.0, 10
    mech = FlippedHuberMechanism(eps, 1e-5, 1.0, dim=k, l1_sensitivity=d1)
    rng = np.random.default_rng(2)

    def worst_loss(logpdf):
        worst = -np.inf
        for _ in range(200):
            d = rng.standard_normal(k) * (rng.random(k) < 0.3)
            if not np.any(d):
                continue
            d *= d1 / np.abs(d).sum()
            d = np.clip(d, -1.0, 1.0)  # |d_i| <= Delta_inf; ||d||_1 <= Delta_1 still holds
            t = rng.standard_normal((500, k)) * 5 + d * rng.uniform(-2, 2, (500, 1))
            loss = (logpdf(t) - logpdf(t - d)).sum(axis=1)
            worst = max(worst, loss.max())
        return worst

    assert worst_loss(mech.distribution.logpdf) <= eps + 1e-9
    # control: half the scale (a mis-calibrated mechanism) exceeds eps on the same search
    assert worst_loss(stats.laplace(scale=d1 / (2 * eps)).logpdf) > eps * 1.2


def test_laplace_privacy_profile_is_a_valid_bound():
    mech = FlippedHuberMechanism(1.0, 1e-5, 1.0, dim=10, l1_sensitivity=3.0)
    eps_grid = np.linspace(0.0, 1.5, 16)
    prof = mech.privacy_profile(eps_grid)
    assert np.all(prof[eps_grid >= 1.0] == 0.0)
    # a single coordinate shifted by Delta_1 is admissible; its exact profile is a lower bound
    exact_1d = np.where(eps_grid >= 1.0, 0.0, -np.expm1((eps_grid - 1.0) / 2.0))
    assert np.all(prof >= exact_1d - 1e-15)
    assert np.all(np.diff(prof) <= 0)
    big = FlippedHuberMechanism(800.0, 1e-5, 1.0, dim=3, l1_sensitivity=1.0)
    assert math.isfinite(big.privacy_profile(1.0))
    assert "laplace_scale=3" in repr(mech)


def test_tightened_sensitivities_are_never_below_the_real_bounds():
    """Audit s22 F4: with d_inf = d2 given, Delta_1 is tightened to sqrt(k) d2, and the float
    product fl(sqrt(k) d2) rounded one ulp below the real bound; the Laplace limit's scale
    Delta_1 / eps (rounded up by the release) then fell short of sqrt(k) d2 / eps and the
    shift d2 / sqrt(k) (1, ..., 1) had privacy loss eps (1 + 3e-17). Exact rationals."""
    from fractions import Fraction

    from dpreg.noise._exact import _up

    k, d2, eps = 6, 1.6157631780006816, 1.0
    m = FlippedHuberMechanism(eps, 1e-30, d2, dim=k, l2_sensitivity=d2)
    assert m.kind == "laplace"
    # the implied bounds, as real numbers: Delta_1 <= sqrt(k) Delta_2, Delta_2 <= sqrt(k) d_inf
    assert Fraction(m.l1_sensitivity) ** 2 >= k * Fraction(d2) ** 2
    assert Fraction(m.l2_sensitivity) ** 2 >= Fraction(d2) ** 2
    scale = _up(m.l1_sensitivity / eps)  # the scale release_laplace uses
    assert (Fraction(scale) * Fraction(eps)) ** 2 >= k * Fraction(d2) ** 2
    # defaults are exact where the products are (dim 1, perfect squares)
    assert FlippedHuberMechanism(1.0, 1e-6, 1.0).l2_sensitivity == 1.0
    m4 = FlippedHuberMechanism(1.0, 1e-6, 1.0, dim=4)
    assert (m4.l1_sensitivity, m4.l2_sensitivity) == (4.0, 2.0)
