"""Private inference for FunctionalLinearRegression (issue #15): API, no spend, calibration."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpreg import FunctionalLinearRegression
from dpreg.accounting import BudgetAccountant
from dpreg.linear_model._inference import release_yty
from dpreg.linear_model.functional import sufficient_statistics

BETA = np.array([1.0, 2.0, -1.0])
BX, BY = (-1.0, 1.0), (-7.0, 9.0)


def data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, BETA[0] + X @ BETA[1:] + rng.standard_normal(n)


def model(**kw):
    kw = dict(epsilon=1.0, bounds_X=BX, bounds_y=BY, inference_share=0.1, random_state=0) | kw
    return FunctionalLinearRegression(**kw)


def test_shapes_and_dataframe():
    X, y = data(5000, 0)
    m = model().fit(X, y)
    ci = m.conf_int(n_boot=100)
    assert ci.shape == (3, 2) and np.all(ci[:, 0] < ci[:, 1])
    assert m.bse(n_boot=100).shape == (3,)
    m2 = model(fit_intercept=False).fit(X, y)
    assert m2.conf_int(n_boot=100).shape == (2, 2)
    m.fit(pd.DataFrame(X, columns=["a", "b"]), y)
    frame = m.conf_int(n_boot=100)
    assert list(frame.index) == ["const", "a", "b"]
    table = m.summary(n_boot=100)
    df = table.as_dataframe()
    assert list(df.columns) == ["coef", "std err", "[0.025", "0.975]"]
    np.testing.assert_allclose(df["coef"], np.r_[m.intercept_, m.coef_])
    text = str(table)
    for word in ("n: 5000", "epsilon spent: 1", "linf", "knorm", "std err"):
        assert word in text


def test_no_extra_spend_and_deterministic():
    X, y = data(3000, 1)
    acc = BudgetAccountant(epsilon=10)
    m = model(accountant=acc).fit(X, y)
    assert acc.spent == (1.0, 0.0)  # inference_share comes out of epsilon, not on top
    coef = m.coef_.copy()
    a = m.conf_int(n_boot=100)
    m.bse(n_boot=100)
    str(m.summary(n_boot=100))
    assert acc.spent == (1.0, 0.0) and len(acc) == 1
    np.testing.assert_array_equal(a, m.conf_int(n_boot=100))
    np.testing.assert_array_equal(coef, m.coef_)


@pytest.mark.parametrize(
    "kw", [dict(inference_share=1.0), dict(inference_share=-0.1), dict(inference_share="a")]
)
def test_bad_share_raises_before_spend(kw):
    acc = BudgetAccountant(epsilon=10)
    with pytest.raises(ValueError, match="inference_share"):
        model(accountant=acc, **kw).fit(*data(100, 2))
    assert acc.spent == (0.0, 0.0)


def test_bad_alpha_and_n_boot():
    m = model().fit(*data(500, 3))
    for bad in (0, 1, -0.1, "x", True):
        with pytest.raises(ValueError, match="alpha"):
            m.conf_int(alpha=bad)
    for bad in (5, 10.0, True):
        with pytest.raises(ValueError, match="n_boot"):
            m.bse(n_boot=bad)


def test_unfitted_and_multioutput_refused():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        model().conf_int()
    m = model().fit(*data(500, 4))
    m.noisy_statistics_.xty = np.zeros((3, 2))  # what a multi-output release would store
    with pytest.raises(ValueError, match="1-D target"):
        m.conf_int()


def test_no_yty_release_warns_conservative():
    m = model(inference_share=0.0).fit(*data(5000, 5))
    assert m.noisy_statistics_.yty is None
    with pytest.warns(UserWarning, match="conservative"):
        wide = m.conf_int(n_boot=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        narrow = model().fit(*data(5000, 5)).conf_int(n_boot=200)
    # the worst-case residual variance (sd 8 in y units vs the true 1) makes intervals wider
    assert np.all(wide[:, 1] - wide[:, 0] > 2 * (narrow[:, 1] - narrow[:, 0]))


def test_small_n_eps_warns():
    with pytest.warns(UserWarning, match="small n"):
        model(epsilon=0.05).fit(*data(200, 6)).conf_int(n_boot=50)


def test_yty_is_the_clipped_scaled_sum_of_squares():
    X, y = data(1000, 7)
    y[0] = 1e6  # clipped to the bound: contributes exactly 1 after scaling
    s = sufficient_statistics(X, y, BX, BY)
    w = (np.clip(y, *BY) - 1.0) / 8.0
    assert abs(s.yty - np.sum(w**2)) < 1e-9 * len(w)
    assert np.all(w**2 <= 1.0)  # the sensitivity-1 argument of release_yty


def test_yty_noise_is_laplace_with_the_stated_scale():
    rng = np.random.default_rng(8)
    draws = np.array([release_yty(0.0, 0.5, rng)[0] for _ in range(4000)])
    assert release_yty(0.0, 0.5, rng)[1] == 2.0
    assert stats.kstest(draws, stats.laplace(scale=2.0).cdf).pvalue > 1e-3
    # control: the test rejects a mis-calibrated scale
    assert stats.kstest(draws, stats.laplace(scale=2.4).cdf).pvalue < 1e-3


def _coverage(n, eps, reps, n_boot, seed):
    rng = np.random.default_rng(seed)
    inside, est, widths = [], [], []
    for _ in range(reps):
        X, y = data(n, rng.integers(2**32))
        m = model(epsilon=eps, random_state=rng).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ci = m.conf_int(n_boot=n_boot)
        inside.append((ci[:, 0] <= BETA) & (BETA <= ci[:, 1]))
        est.append(np.r_[m.intercept_, m.coef_])
        widths.append(ci[:, 1] - ci[:, 0])
    lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
    return np.mean(inside, axis=0), np.mean(widths, axis=0) / (hi - lo)


def test_coverage_one_cell_loosely():
    cov, ratio = _coverage(10000, 1.0, reps=40, n_boot=150, seed=9)
    # 120 correlated Bernoulli(0.95) indicators, so a loose band. Control: a bootstrap that
    # leaves out the privacy noise gave coverage 0.81 and a width ratio 0.66 on this cell
    # (these seeds), failing both checks; ours gave 0.975 and ratios 1.24-1.77.
    assert 0.88 <= cov.mean() <= 1.0
    assert np.all((ratio > 0.75) & (ratio < 2.5))


@pytest.mark.slow
@pytest.mark.parametrize("n, eps", [(10000, 1.0), (100000, 4.0)])
def test_coverage_cells(n, eps):
    cov, ratio = _coverage(n, eps, reps=200, n_boot=300, seed=10)
    assert np.all((cov >= 0.92) & (cov <= 0.98)), cov
    assert np.all(ratio <= 1.3), ratio


def test_residual_variance_is_not_inflated_at_small_n():
    """At n = 1e3 the old plug-in (one Laplace sd added, no correction for the noise of G~
    and c~) overstated sigma^2 1.3-3.6 times (median over data sets). The bias-corrected
    estimate centres on the truth (1/64 in scaled units here); the old formula is the
    control and must stay far off on the same releases."""
    from dpreg.linear_model import _inference as inf  # noqa: PLC0415

    truth = 1.0 / 64.0  # y noise sd 1 over the half-range 8 of bounds_y
    new, old = [], []
    for seed in range(15):
        X, y = data(1000, 100 + seed)
        ns = model(epsilon=1.0, random_state=seed).fit(X, y).noisy_statistics_
        noises = inf.noise_draws(ns, 100, np.random.default_rng(0))
        beta, G, _ = inf._bootstrap_world(ns, noises[0])
        bias = inf.rss_noise_bias(ns, beta, G, noises)
        new.append(inf.residual_variance(ns, beta, bias) / truth)
        rss = inf._rss(ns, beta, ns.gram, ns.xty, ns.yty)
        old.append((max(rss, 0.0) + np.sqrt(2.0) * ns.yty_scale) / (ns.n - 3) / truth)
    assert 0.75 <= np.median(new) <= 1.3, np.median(new)
    assert np.median(old) >= 1.5, np.median(old)
