"""The private quantile: exact law (KS tests with a mis-calibration control), adversarial
privacy check of the exact density ratio, validation and accounting."""

import numpy as np
import pytest
from scipy import stats

from dpreg import BudgetAccountant
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.tools import median, quantile
from dpreg.tools._quantile import quantile_mechanism


def exact_cdf(values, level, epsilon, lower, upper, measure="uniform", s=1.0):
    """CDF of ``exp(-epsilon/2 |#{a_i <= theta} - q n|)`` on [lower, upper], written from scratch
    (no dpreg code): the law every test below compares the sampler with."""
    to_u = (lambda x: np.arcsinh(np.asarray(x, float) / s)) if measure == "asinh" else np.asarray
    c = np.sort(to_u(values))
    lo, hi = float(to_u(lower)), float(to_u(upper))
    inner = c[(c > lo) & (c < hi)]
    edges = np.concatenate(([lo], inner, [hi]))
    counts = np.searchsorted(c, edges[:-1], side="right")
    with np.errstate(divide="ignore"):  # tied values give empty segments
        logw = -epsilon / 2 * np.abs(counts - level * c.size) + np.log(np.diff(edges))
    w = np.exp(logw - logw.max())
    cum = np.concatenate(([0.0], np.cumsum(w))) / w.sum()

    def cdf(theta):
        u = np.clip(to_u(theta), lo, hi)
        k = np.clip(np.searchsorted(edges, u, side="right") - 1, 0, len(w) - 1)
        frac = (u - edges[k]) / np.diff(edges)[k]
        return cum[k] + frac * (cum[k + 1] - cum[k])

    return cdf


def draws(values, level, epsilon, lower, upper, measure="uniform", size=3000, seed=0):
    # a ledger of its own: thousands of draws on the process's global ledger slow every later
    # spend of the test session (a spend sums the ledger)
    rng, acc = np.random.default_rng(seed), BudgetAccountant()
    return np.array(
        [
            quantile(
                values, level, epsilon, (lower, upper), measure=measure, random_state=rng,
                accountant=acc,
            )
            for _ in range(size)
        ]
    )  # fmt: skip


@pytest.mark.parametrize(
    "level, epsilon, measure", [(0.5, 1.0, "uniform"), (0.1, 0.3, "uniform"), (0.8, 2.0, "asinh")]
)
def test_quantile_matches_exact_law_ks(level, epsilon, measure):
    values = np.random.default_rng(1).normal(3.0, 2.0, size=25)
    x = draws(values, level, epsilon, -20.0, 30.0, measure, size=2000)
    p = stats.kstest(x, exact_cdf(values, level, epsilon, -20.0, 30.0, measure)).pvalue
    assert p > 1e-3


def test_ks_control_catches_a_miscalibrated_sampler():
    """The same KS test rejects the law at twice the epsilon (a factor-2 calibration bug) and the
    law with the uniform measure when the sampler uses asinh: the test above can fail."""
    values = np.random.default_rng(1).normal(3.0, 2.0, size=25)
    x = draws(values, 0.5, 1.0, -20.0, 30.0, size=2000)
    assert stats.kstest(x, exact_cdf(values, 0.5, 2.0, -20.0, 30.0)).pvalue < 1e-3
    y = draws(values, 0.5, 1.0, -20.0, 30.0, measure="asinh", size=2000)
    assert stats.kstest(y, exact_cdf(values, 0.5, 1.0, -20.0, 30.0)).pvalue < 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_quantile_exact_law_many_settings_slow(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 60))
    values = rng.standard_cauchy(n)
    level, epsilon = float(rng.uniform()), float(rng.uniform(0.1, 5))
    measure = ("uniform", "asinh")[seed % 2]
    x = draws(values, level, epsilon, -50.0, 50.0, measure, size=20000, seed=seed)
    assert stats.kstest(x, exact_cdf(values, level, epsilon, -50.0, 50.0, measure)).pvalue > 1e-3


def _log_density(values, level, epsilon, lower, upper, grid, measure="uniform"):
    """Normalised log-density of the release on ``grid`` (in the sampling coordinate)."""
    mech = quantile_mechanism(values, level, epsilon, lower, upper, measure)
    # log Z = log of the sum of the segment integrals of the unnormalised density
    c = np.sort(mech.gradient.c)
    lo, hi = mech.lower[0], mech.upper[0]
    edges = np.concatenate(([lo], c[(c > lo) & (c < hi)], [hi]))
    counts = np.searchsorted(c, edges[:-1], side="right")
    logz = np.log(np.sum(np.exp(-epsilon / 2 * np.abs(counts - level * c.size)) * np.diff(edges)))
    return mech.log_density(grid[:, None]) - logz


@pytest.mark.parametrize("level", [0.0, 0.05, 0.5, 0.93, 1.0])
def test_adversarial_neighbours_density_ratio_within_epsilon(level):
    """Search over neighbouring data sets (replace one value, including by the extremes and by
    values outside the interval) for a point where the released density ratio exceeds e^eps."""
    rng = np.random.default_rng(7)
    epsilon, lower, upper = 0.7, -5.0, 5.0
    grid = np.linspace(lower, upper, 4001)
    worst = 0.0
    for _ in range(60):
        n = int(rng.integers(1, 15))
        D = rng.choice([-4.0, -1.0, 0.0, 0.5, 3.0, rng.uniform(-6, 6)], size=n)
        D2 = D.copy()
        D2[rng.integers(n)] = rng.choice([-100.0, lower, 0.0, upper, 100.0, rng.uniform(-6, 6)])
        ratio = np.abs(
            _log_density(D, level, epsilon, lower, upper, grid)
            - _log_density(D2, level, epsilon, lower, upper, grid)
        )
        worst = max(worst, float(ratio.max()))
    assert worst <= epsilon + 1e-9
    # not vacuous: the search reaches the bound's order (about eps/2 at the extreme levels,
    # where the normalising constant moves with the exponent, close to eps in between)
    assert worst > 0.45 * epsilon


def test_quantile_concentrates_and_levels_are_monotone():
    a = np.arange(10001.0)
    q = quantile(a, [0.9, 0.1, 0.5], epsilon=3.0, bounds=(-1e5, 1e5), random_state=0)
    assert np.allclose(q, [9000, 1000, 5000], atol=50)
    assert q[1] <= q[2] <= q[0]
    wide = quantile(a, 0.5, 1.0, (-1e9, 1e9), measure="asinh", random_state=0)
    assert abs(wide - 5000) < 100


def test_quantile_validation_before_spending():
    acc = BudgetAccountant(epsilon=1.0)
    for bad in ([1.0, np.nan], [np.inf], []):
        with pytest.raises(ValueError):
            quantile(bad, 0.5, 0.5, (0, 1), accountant=acc)
    for kwargs in (
        {"q": 1.5},
        {"q": -0.1},
        {"bounds": (1, 0)},
        {"bounds": (0, np.inf)},
        {"epsilon": 0},
        {"measure": "log"},
        {"asinh_scale": 0.0},
    ):
        args = {"q": 0.5, "epsilon": 0.5, "bounds": (0, 1), **kwargs}
        with pytest.raises(ValueError):
            quantile([0.2, 0.3], accountant=acc, **args)
    assert acc.spent == (0.0, 0.0)
    median([0.2, 0.3], 0.5, (0, 1), accountant=acc, random_state=0)
    assert acc.spent == (0.5, 0.0)


def test_quantile_without_bounds_warns():
    with pytest.warns(PrivacyLeakWarning):
        quantile([1.0, 2.0, 3.0], 0.5, 1.0, random_state=0)
