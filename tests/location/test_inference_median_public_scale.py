"""Intervals of PrivateProjectionMedian(norm="linf") with a public scale (issue #15).

With ``scale=s`` the release is exactly ``mu + s * R U`` (``R ~ Gamma(d + 1, 1/c)``), so the
noise part of the interval needs no estimate; ``release_scale`` releases only the two
quantiles that give the median's standard error (docs/inference.md, median section).
"""

import numpy as np
import pytest
from scipy import stats

from dpreg import PrivateProjectionMedian
from dpreg.accounting import BudgetAccountant
from dpreg.location import _inference as inf
from dpreg.location.projection_median import release_inverse_temperature

CENTRE = np.array([3.0, -1.0])
SCALE = np.array([1.0, 1.0])
Z = stats.norm.ppf(0.975)


def fit_public(X, epsilon, rng, scale=SCALE):
    return PrivateProjectionMedian(epsilon=epsilon, norm="linf", scale=scale, random_state=rng).fit(
        X
    )


def coverage_run(n, eps, reps, seed, share=0.1):
    """Coverage of the interval and of a control that drops the privacy noise (the
    sampling-only normal interval with the *true* standard error), on the same fits."""
    rng = np.random.default_rng(seed)
    sd = np.sqrt(np.pi / 2.0 / n)
    inside, control, widths, est, cs = [], [], [], [], []
    for _ in range(reps):
        X = rng.standard_normal((n, 2)) + CENTRE
        m = fit_public(X, (1 - share) * eps, rng)
        m.release_scale(X, share * eps, random_state=rng)
        ci = m.conf_int()
        inside.append((ci[:, 0] <= CENTRE) & (CENTRE <= ci[:, 1]))
        control.append(np.abs(m.location_ - CENTRE) <= Z * sd)
        widths.append(ci[:, 1] - ci[:, 0])
        est.append(m.location_)
        cs.append(inf.inverse_temperature(m))
    return np.mean(inside, 0), np.mean(control, 0), np.mean(widths, 0), cs[0]


def asymptotic_width(n, c, size=200_000, seed=0):
    """95 % width of the asymptotic law ``N(0, pi / (2n)) + R U`` (exact noise, s = 1)."""
    rng = np.random.default_rng(seed)
    draws = np.sqrt(np.pi / 2.0 / n) * rng.standard_normal(size)
    draws += rng.gamma(3.0, 1.0 / c, size) * rng.uniform(-1.0, 1.0, size)
    lo, hi = np.quantile(draws, [0.025, 0.975])
    return hi - lo


def test_public_scale_coverage_one_cell():
    """n = 1000, epsilon = 4 (the default MAD scale is refused there): 30 data sets. The
    control (noise ignored) must under-cover on the same fits, so the check has power."""
    cov, control, widths, c = coverage_run(1000, 4.0, reps=30, seed=11)
    assert np.all(cov >= 0.85), cov  # MC sd of one coverage at 0.95: 0.04
    assert np.all(control <= 0.7), control  # the noise is about 5x the sampling sd here
    ratio = widths / asymptotic_width(1000, c)
    assert np.all((ratio > 0.85) & (ratio < 1.3)), ratio


@pytest.mark.slow
@pytest.mark.parametrize("n, eps", [(1000, 4.0), (10000, 1.0), (100000, 4.0)])
def test_public_scale_coverage_cells(n, eps):
    cov, control, widths, c = coverage_run(n, eps, reps=300, seed=12)
    # about 3 MC sds (0.0126 at 300 data sets) around 0.95: six coverages are checked
    assert np.all((cov >= 0.915) & (cov <= 0.985)), cov
    ratio = widths / asymptotic_width(n, c)
    assert np.all(ratio <= 1.3), ratio


def test_public_release_law_is_exact_with_the_public_scale():
    """sigma is the public s itself; with the sampling part switched off the bootstrap's
    linf norm of (draw - location) / s is Gamma(d, 1/c) (the release law)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5000, 2)) * [2.0, 0.5] + CENTRE
    m = fit_public(X, 3.6, 0, scale=[2.0, 0.5]).release_scale(X, 0.4, random_state=1)
    rel = m.inference_release_
    assert rel.public_scale and np.array_equal(rel.sigma, [2.0, 0.5])
    assert rel.quantiles.shape == (2, 2)  # only the median pair is released
    rel.median_sd = np.zeros(2)
    _, draws = inf.bootstrap(m, 4000, random_state=5)
    c = release_inverse_temperature(m.epsilon_, m.delta_, m.eta_, m.test_fraction_)
    r = np.max(np.abs((draws - m.location_) / [2.0, 0.5]), axis=1)
    assert stats.kstest(r, stats.gamma(2, scale=1 / c).cdf).pvalue > 1e-3
    # control: a wrong scale in the law is detected by the same test
    r_bad = np.max(np.abs((draws - m.location_) / [2.0, 0.4]), axis=1)
    assert stats.kstest(r_bad, stats.gamma(2, scale=1 / c).cdf).pvalue < 1e-6


def test_public_release_charges_and_summary():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    X = np.random.default_rng(4).standard_normal((3000, 2)) + CENTRE
    m = PrivateProjectionMedian(
        epsilon=3.6, norm="linf", scale=SCALE, accountant=acc, random_state=0
    ).fit(X)
    m.release_scale(X, 0.4, random_state=1)
    assert len(acc) == 2 and acc.spent[0] == pytest.approx(4.0)
    text = str(m.summary(n_boot=200))
    assert "public scale" in text and "median se 0.4" in text
    assert m.bse(n_boot=200).shape == (2,)
    assert len(acc) == 2  # the intervals are free


@pytest.mark.parametrize("bad", ["nan", "shape", "eps"])
def test_public_release_bad_input_raises_before_spend(bad):
    X = np.random.default_rng(5).standard_normal((3000, 2))
    m = fit_public(X, 4.0, 0)
    acc = BudgetAccountant(epsilon=10.0)
    Xb, eps = X.copy(), 0.1
    if bad == "nan":
        Xb[3, 0] = np.nan
    elif bad == "shape":
        Xb = X[:, :1]
    else:
        eps = 0.0
    with pytest.raises(ValueError):
        m.release_scale(Xb, eps, accountant=acc)
    assert len(acc) == 0


def test_public_release_survives_overflowing_rows():
    """x - location_ can overflow; after the spend nothing may raise on the data."""
    X = np.random.default_rng(6).standard_normal((3000, 2))
    m = fit_public(X, 4.0, 0)
    X[0] = [1.7e308, -1.7e308]
    rel = m.release_scale(X, 0.4, random_state=2).inference_release_
    assert np.all(np.isfinite(rel.quantiles)) and np.all(rel.median_sd >= 0)


# --- adversarial: never narrower than the noise-free asymptotic interval -----------------
# Each family: (sampler of one coordinate, density at its median). The search draws data
# from each, fits with a public scale at a large epsilon (noise small against the sampling
# error, the hardest case for this check) and compares the interval with the non-private
# asymptotic one, +-z / (2 f(m) sqrt n). "dip" has a trough at its median (f(0) = phi(2)),
# where a difference quotient over too wide a window under-states 1/f(m).
def _mixture(r, n, p, a, b):
    return np.where(r.uniform(size=n) < p, a(r, n), b(r, n))


FAMILIES = {
    "normal": (lambda r, n: r.standard_normal(n), stats.norm.pdf(0)),
    "laplace": (lambda r, n: r.laplace(0, 1, n), 0.5),
    "t3": (lambda r, n: r.standard_t(3, n), stats.t(3).pdf(0)),
    "uniform": (lambda r, n: r.uniform(-1, 1, n), 0.5),
    "lognormal": (lambda r, n: r.lognormal(0, 1, n), stats.lognorm(1).pdf(1.0)),
    "exponential": (lambda r, n: r.exponential(1, n), 0.5),
    "cauchy": (lambda r, n: r.standard_cauchy(n), 1 / np.pi),
    # 0.8 N(0, 1) + 0.2 at 8: median Phi^{-1}(0.5 / 0.8), density 0.8 phi there
    "contaminated": (
        lambda r, n: _mixture(
            r, n, 0.2, lambda r, n: np.full(n, 8.0), lambda r, n: r.normal(0, 1, n)
        ),
        0.8 * stats.norm.pdf(stats.norm.ppf(0.5 / 0.8)),
    ),
    "dip": (
        lambda r, n: _mixture(
            r, n, 0.5, lambda r, n: r.normal(-2, 1, n), lambda r, n: r.normal(2, 1, n)
        ),
        stats.norm.pdf(2.0),
    ),
}


def noise_free_ratios(name, seeds=4, n=20000):
    """Interval widths over the noise-free asymptotic width, per data set and coordinate."""
    sample, density = FAMILIES[name]
    nf_width = 2 * Z / (2 * density * np.sqrt(n))
    # a public, generous scale; the dip's sparsity 1/f(m) = 18 needs 6 for the private test
    # to pass (with 4 it failed on 1 of 4 data sets)
    scale = 6.0 if name == "dip" else 3.0
    out = []
    for seed in range(seeds):
        rng = np.random.default_rng([7, seed])
        X = np.column_stack([sample(rng, n), sample(rng, n)])
        m = fit_public(X, 7.2, rng, scale=[scale, scale])
        m.release_scale(X, 0.8, random_state=rng)
        ci = m.conf_int(n_boot=2000)
        out.append((ci[:, 1] - ci[:, 0]) / nf_width)
    return np.array(out)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_interval_never_narrower_than_noise_free_asymptotic(name):
    """The released standard error is an estimate: one data set's interval can be narrower
    than the noise-free one by that estimate's error (relative sd about 0.055 here: 0.042
    from the 2an = 566 order statistics of the quotient, 0.035 from the quantiles' rank
    noise), so the check is on the mean over 4 data sets x 2 coordinates (>= 0.97) and on
    each (>= 0.8, about 4 of those sds). Measured: dip mean 1.015 (0.86-1.08), the other
    families 1.3 and more. A fixed bandwidth a = 0.1 gives the dip 0.64 (the control)."""
    r = noise_free_ratios(name)
    assert r.mean() >= 0.97 and r.min() >= 0.8, (name, r)


def test_noise_free_check_catches_a_too_wide_bandwidth(monkeypatch):
    """Control: the session-6 draft's fixed bandwidth a = 0.1 fails the check on "dip"."""
    orig = inf.quantile_levels

    def wide(n, epsilon_each):
        levels, _ = orig(n, epsilon_each)
        levels[1:3] = 0.4, 0.6
        return levels, 0.1

    monkeypatch.setattr(inf, "quantile_levels", wide)
    r = noise_free_ratios("dip", seeds=2)
    assert r.mean() < 0.8, r
