"""Private inference for PrivateProjectionMedian(norm="linf") (issue #15)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpreg import PrivateProjectionMedian
from dpreg.accounting import BudgetAccountant
from dpreg.location import _inference as inf
from dpreg.location.projection_median import release_inverse_temperature

CENTRE = np.array([3.0, -1.0])


def data(n, seed):
    return np.random.default_rng(seed).standard_normal((n, 2)) + CENTRE


def fitted(X, **kw):
    kw = dict(epsilon=4.0, norm="linf", random_state=0) | kw
    return PrivateProjectionMedian(**kw).fit(X)


@pytest.fixture(scope="module")
def big():
    X = data(20000, 0)
    return X, fitted(X)


def test_shapes_dataframe_summary_and_charge(big):
    X, m = big
    acc = BudgetAccountant(epsilon=10)
    m.release_scale(X, 0.4, accountant=acc, random_state=1)
    assert acc.spent == (0.4, 0.0)
    ci = m.conf_int(n_boot=200)
    assert ci.shape == (2, 2) and np.all(ci[:, 0] < m.location_) and np.all(m.location_ < ci[:, 1])
    assert m.bse(n_boot=200).shape == (2,)
    text = str(m.summary(n_boot=200))
    for word in ("n: 20000", "scales 0.4", "linf", "std err"):
        assert word in text
    assert list(m.summary(n_boot=200).as_dataframe().columns) == [
        "location",
        "std err",
        "[0.025",
        "0.975]",
    ]
    assert acc.spent == (0.4, 0.0)  # intervals are free
    Xf = pd.DataFrame(X, columns=["a", "b"])
    mf = fitted(Xf).release_scale(Xf, 0.4)
    assert list(mf.conf_int(n_boot=200).index) == ["a", "b"]


def test_released_scales_are_close_to_the_data_scales(big):
    X, m = big
    rel = m.release_scale(X, 1.0, random_state=2).inference_release_
    mad = np.median(np.abs(X - np.median(X, axis=0)), axis=0)
    assert np.all(np.abs(rel.sigma / mad - 1) < 0.15), rel.sigma / mad
    sd_med = 1.2533 / np.sqrt(len(X))
    assert np.all((rel.median_sd > 0.7 * sd_med) & (rel.median_sd < 2.0 * sd_med))


@pytest.mark.parametrize("bad", ["nan", "shape", "eps"])
def test_bad_input_raises_before_spend(big, bad, monkeypatch):
    X, m = big
    acc = BudgetAccountant(epsilon=10)
    Xb, eps = X.copy(), 0.1
    if bad == "nan":
        Xb[5, 1] = np.inf
    elif bad == "shape":
        Xb = X[:, :1]
    else:
        eps = -1.0
    with pytest.raises(ValueError):
        m.release_scale(Xb, eps, accountant=acc)
    assert acc.spent == (0.0, 0.0)


def test_spend_before_computation(big, monkeypatch):
    X, m = big
    acc = BudgetAccountant(epsilon=10)

    def boom(*a, **k):
        raise RuntimeError("touched")

    monkeypatch.setattr("dpreg.tools._quantile.private_quantile_draws", boom)
    with pytest.raises(RuntimeError, match="touched"):
        m.release_scale(X, 0.3, accountant=acc)
    assert acc.spent == (0.3, 0.0)


def test_refusals():
    X = data(20000, 3)
    with pytest.raises(ValueError, match="linf"):
        PrivateProjectionMedian(epsilon=4.0, random_state=0).fit(X).release_scale(X, 0.1)
    m = fitted(X)
    with pytest.raises(ValueError, match="release_scale"):
        m.conf_int()
    m.release_scale(X, 0.1)
    m.fit(X)  # a refit makes the scale release stale
    with pytest.raises(ValueError, match="release_scale"):
        m.bse()


def test_bootstrap_noise_is_the_release_law(big):
    """Draws minus the sampling part are sigma * R U with R ~ Gamma(d + 1, 1/c): the linf
    norm of (draw - location) / sigma is Gamma(d, 1/c) when the sampling part is switched off."""
    X, m = big
    m.release_scale(X, 1.0, random_state=4)
    rel = m.inference_release_
    rel.median_sd = np.zeros(2)
    _, draws = inf.bootstrap(m, 4000, random_state=5)
    c = release_inverse_temperature(m.epsilon_, m.delta_, m.eta_, m.test_fraction_)
    r = np.max(np.abs((draws - m.location_) / rel.sigma), axis=1)
    assert stats.kstest(r, stats.gamma(2, scale=1 / c).cdf).pvalue > 1e-3


def _coverage(n, eps, reps, seed):
    rng = np.random.default_rng(seed)
    inside, est, widths = [], [], []
    for _ in range(reps):
        X = data(n, int(rng.integers(2**31)))
        m = fitted(X, epsilon=0.9 * eps, random_state=rng)
        m.release_scale(X, 0.1 * eps, random_state=rng)
        ci = m.conf_int()
        inside.append((ci[:, 0] <= CENTRE) & (CENTRE <= ci[:, 1]))
        est.append(m.location_)
        widths.append(ci[:, 1] - ci[:, 0])
    lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
    return np.mean(inside, axis=0), np.mean(widths, axis=0) / (hi - lo)


def test_coverage_one_cell_loosely():
    cov, ratio = _coverage(20000, 4.0, reps=8, seed=6)
    assert cov.mean() >= 0.8, cov  # 16 correlated indicators: a loose band
    # the oracle width here is the 2.5-97.5 % range of only 8 estimates, which for normal
    # estimates averages about 2.85 sd instead of 3.92: a true ratio of 1.3 shows as ~1.8 and
    # seeds 6/7/8 gave 1.9-3.1, 1.5-2.1, 1.9-2.2 (a loose guard against huge intervals)
    assert np.all((ratio > 0.6) & (ratio < 4.0)), ratio


@pytest.mark.slow
def test_coverage_cell():
    cov, ratio = _coverage(100000, 4.0, reps=100, seed=7)
    # guard the lower side tightly and the width against the simulated oracle (100 data
    # sets: that oracle's own range is noisy, docs/inference.md, median "Measured")
    assert np.all(cov >= 0.91), cov
    assert np.all(ratio <= 1.5), ratio


def test_extreme_finite_values_do_not_raise_after_the_spend(big):
    """x - location_ can overflow; the release must still complete (no data-dependent raise)."""
    X, m = big
    X2 = X.copy()
    X2[0] = [1.7e308, -1.7e308]
    rel = m.release_scale(X2, 0.4, random_state=8).inference_release_
    assert np.all(np.isfinite(rel.quantiles)) and np.all(rel.sigma > 0)
