"""The projection median's intervals from the exact quantiles of their plug-in law (issue 15).

The law of one coordinate of l-infinity K-norm noise (``dpreg.noise.LinfKNormCoordinate``) in
closed form, its convolution with the median's normal law by quadrature, and the estimator's
default ``conf_int`` / ``bse`` / ``summary`` built from them (docs/inference.md, "Exact
quantiles of the plug-in law").
"""

import doctest

import numpy as np
import pytest
from scipy import integrate, stats

from dpreg import PrivateProjectionMedian
from dpreg.location import _inference as inf
from dpreg.noise import KNormMechanism, LinfKNormCoordinate, linf_coordinate


def test_docstring_example():
    result = doctest.testmod(linf_coordinate, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("scale", [0.3, 1.0, 4.0])
def test_one_dimension_is_laplace(scale):
    """In one dimension the l-infinity K-norm mechanism is the Laplace mechanism."""
    law, lap = LinfKNormCoordinate(1, scale), stats.laplace(scale=scale)
    t = np.linspace(-5 * scale, 5 * scale, 41)
    np.testing.assert_allclose(law.cdf(t), lap.cdf(t), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(law.pdf(t), lap.pdf(t), rtol=1e-12)
    q = np.array([0.001, 0.025, 0.3, 0.5, 0.9, 0.975])
    np.testing.assert_allclose(law.ppf(q), lap.ppf(q), rtol=1e-10, atol=1e-13)
    assert law.var() == pytest.approx(lap.var(), rel=1e-12)


@pytest.mark.parametrize("dim", [2, 3, 7])
def test_density_moments_and_inverse(dim):
    law = LinfKNormCoordinate(dim, 0.7)
    total = integrate.quad(law.pdf, -np.inf, np.inf)[0]
    second = integrate.quad(lambda t: t * t * law.pdf(t), -np.inf, np.inf)[0]
    assert total == pytest.approx(1.0, abs=1e-9)
    assert second == pytest.approx(law.var(), rel=1e-8)
    # the cdf is the integral of the pdf
    assert law.cdf(1.3) - law.cdf(-0.4) == pytest.approx(integrate.quad(law.pdf, -0.4, 1.3)[0])
    t = np.array([-6.0, -0.2, 0.0, 0.9, 4.0])
    np.testing.assert_allclose(law.ppf(law.cdf(t)), t, atol=1e-9)
    np.testing.assert_allclose(law.sf(t) + law.cdf(t), 1.0)
    assert [law.sf_float(float(v)) for v in t] == list(law.sf(t))  # the quadrature's path
    with pytest.raises(ValueError, match="strictly between"):
        law.isf(0.0)


@pytest.mark.parametrize("dim", [2, 5])
def test_ks_against_the_mechanism_and_a_miscalibrated_control(dim):
    """The mechanism's first coordinate follows the law; the same draws reject the law at a
    scale 20 % off (a control that catches a mis-stated law)."""
    mech = KNormMechanism("linf", dim, sensitivity=2.0, epsilon=0.8, random_state=3)
    x = mech.sample(20000)[:, 0]
    assert stats.kstest(x, LinfKNormCoordinate(dim, mech.scale).cdf).pvalue > 1e-3
    assert stats.kstest(x, LinfKNormCoordinate(dim, 1.2 * mech.scale).cdf).pvalue < 1e-6
    # rvs goes through the mechanism too
    y = LinfKNormCoordinate(dim, mech.scale).rvs(size=5000, random_state=4)
    assert stats.kstest(y, LinfKNormCoordinate(dim, mech.scale).cdf).pvalue > 1e-3


@pytest.mark.parametrize(("sd", "s"), [(1.0, 0.0), (0.0, 2.0), (0.4, 1.0), (3.0, 0.2)])
def test_normal_plus_law_quantile(sd, s):
    """The quantile of sd G + s T: the degenerate ends in closed form, and in one dimension
    (T Laplace) against scipy's Laplace survival integrated in the other order."""
    law = LinfKNormCoordinate(1, 1.3)
    z = inf.normal_plus_isf(sd, s, law, 0.025)
    if s == 0:
        assert z == pytest.approx(sd * stats.norm.isf(0.025), rel=1e-12)
        return
    if sd == 0:
        assert z == pytest.approx(s * stats.laplace(scale=1.3).isf(0.025), rel=1e-10)
        return
    # P(sd G + s L > z) = E_L[norm.sf((z - s L) / sd)]
    lap = stats.laplace(scale=1.3)
    tail = integrate.quad(lambda v: lap.pdf(v) * stats.norm.sf((z - s * v) / sd), -60, 60,
                          points=[0.0], limit=200)[0]  # fmt: skip
    assert tail == pytest.approx(0.025, abs=1e-9)


@pytest.mark.parametrize("dim", [2, 6])
@pytest.mark.parametrize("ratio", [1e-4, 0.01, 0.1, 0.78, 5.0, 30.0, 1e2, 1e4])
def test_normal_plus_law_across_ratios(dim, ratio):
    """Every ratio of the normal part to the noise part, checked by the integral in the
    other order (over T's density, split at its kink). The first draft of ``normal_plus_isf``
    integrated over (-inf, z / sd]: at ratios 0.01 and 0.1 it returned 0.37 and 3.64 instead
    of 4.11 (d = 2); the second, on finite pieces split only at 0 and z / sd, stepped over
    the law's narrow step at ratio 1e4 (1.96004 instead of 1.95996). This test caught both."""
    law = LinfKNormCoordinate(dim, 1.0)
    sd, s = (ratio, 1.0) if ratio <= 1 else (1.0, 1.0 / ratio)
    z = inf.normal_plus_isf(sd, s, law, 0.025)
    top = dim + 60.0  # T's tail beyond this weighs less than 1e-20

    def integrand(t):
        return float(law.pdf(t)) * stats.norm.sf((z - s * t) / sd)

    cuts = sorted({-top, 0.0, min(max(z / s, -top), top), top})
    tail = sum(
        integrate.quad(integrand, a, b, epsabs=1e-14, limit=400)[0]
        for a, b in zip(cuts[:-1], cuts[1:])
        if b > a
    )
    assert tail == pytest.approx(0.025, abs=1e-8)
    # and it lies between the two parts' own quantiles' bounds
    assert z <= sd * stats.norm.isf(0.0125) + s * float(law.isf(0.0125)) + 1e-9


def test_normal_plus_law_against_monte_carlo_and_a_control():
    """d = 2: the exact quantile holds 97.5 % of a million draws (within 3 binomial sd), and
    a quantile that ignored the normal part would hold visibly less."""
    law = LinfKNormCoordinate(2, 0.5)
    rng = np.random.default_rng(11)
    n = 1_000_000
    draws = 0.6 * rng.standard_normal(n) + rng.gamma(3, 0.5, n) * rng.uniform(-1, 1, n)
    z = inf.normal_plus_isf(0.6, 1.0, law, 0.025)
    sd = np.sqrt(0.975 * 0.025 / n)
    assert abs(np.mean(draws <= z) - 0.975) < 3 * sd
    assert np.mean(draws <= float(law.isf(0.025))) < 0.975 - 20 * sd


@pytest.fixture(scope="module")
def released():
    X = np.random.default_rng(0).standard_normal((20000, 2)) + [3.0, -1.0]
    m = PrivateProjectionMedian(epsilon=4.0, norm="linf", random_state=0).fit(X)
    return m.release_scale(X, 0.4, random_state=1)


def test_default_interval_is_the_bootstrap_without_its_monte_carlo_error(released):
    """The default (exact) interval and se agree with 200,000 bootstrap draws of the same law
    within that bootstrap's error, and repeat exactly."""
    m = released
    ci, se = m.conf_int(), m.bse()
    boot_ci, boot_se = m.conf_int(n_boot=200_000), m.bse(n_boot=200_000)
    np.testing.assert_allclose(ci, boot_ci, atol=0.02 * (ci[:, 1] - ci[:, 0]).max())
    np.testing.assert_allclose(se, boot_se, rtol=0.01)
    np.testing.assert_allclose(ci.mean(axis=1), m.location_, rtol=1e-12)  # symmetric law
    np.testing.assert_array_equal(m.conf_int(), ci)
    rel, law = m.inference_release_, inf.noise_law(m)
    np.testing.assert_allclose(se, np.sqrt(rel.median_sd**2 + rel.sigma**2 * law.var()))
    frame = m.summary().as_dataframe()
    np.testing.assert_allclose(frame[["[0.025", "0.975]"]].to_numpy(), ci)
    np.testing.assert_allclose(frame["std err"].to_numpy(), se)
    assert "exact quantiles" in str(m.summary())
    assert "bootstrap, 300 draws" in str(m.summary(n_boot=300))


def test_default_keeps_pandas_names():
    import pandas as pd

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.standard_normal((20000, 2)) + [3.0, -1.0], columns=["a", "b"])
    m = PrivateProjectionMedian(epsilon=4.0, norm="linf", random_state=0).fit(X)
    m.release_scale(X, 0.4, random_state=1)
    assert list(m.conf_int().index) == ["a", "b"]
    assert list(m.bse().index) == ["a", "b"]
    assert list(m.summary().as_dataframe().index) == ["a", "b"]
