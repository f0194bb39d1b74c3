"""Coverage cells of the functional intervals (issue 15, docs/inference.md).

The bootstrap of every release used to run on one fixed seed, so all intervals shared the
same normal and noise draws and their Monte Carlo error did not average out (the first
slope's draws were light-tailed in every cell and its intervals under-covered everywhere,
0.904 at n = 1e3, epsilon = 4 on 800 data sets). The seed now comes from the release.
"""

import warnings

import numpy as np
import pytest
from _functional_cells import cell_model
from scipy import stats

from dpreg import BudgetAccountant
from dpreg.linear_model import _inference as inf
from dpreg.linear_model.functional import sufficient_statistics

BETA = np.array([1.0, 2.0, -1.0])


def _fit(n, eps, rng, acc):
    X = rng.uniform(-1, 1, size=(n, 2))
    y = BETA[0] + X @ BETA[1:] + rng.standard_normal(n)
    stats_ = sufficient_statistics(X, y, (-1, 1), (-7, 9))
    return cell_model(eps, rng, acc).fit_statistics(stats_)


def test_bootstrap_draws_are_independent_across_releases():
    """Two releases' standardised replicates must not be the same draws (the fixed seed made
    them nearly identical: rank correlation ~1); one release's stay deterministic."""
    rng, acc = np.random.default_rng(0), BudgetAccountant()
    a, b = _fit(1000, 4.0, rng, acc), _fit(1000, 4.0, rng, acc)
    _, (_, da) = inf._draws(a, 200)
    _, (_, db) = inf._draws(b, 200)
    for j in range(3):
        assert abs(stats.spearmanr(da[:, j], db[:, j])[0]) < 0.3
    a._inference_cache = None  # recomputed from the same release: the same draws
    np.testing.assert_array_equal(inf._draws(a, 200)[1][1], da)
    seed = [inf.release_seed(*inf.released_values(m.noisy_statistics_)) for m in (a, b)]
    assert seed[0] != seed[1]


def _cell(n, eps, reps, n_boot, seed):
    rng, acc = np.random.default_rng(seed), BudgetAccountant()
    est, cis = [], []
    for _ in range(reps):
        m = _fit(n, eps, rng, acc)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            cis.append(m.conf_int(0.05, n_boot=n_boot))
        est.append(np.r_[m.intercept_, m.coef_])
    return np.array(est), np.array(cis)


def _coverage(ci):
    return np.mean((ci[:, :, 0] <= BETA) & (BETA <= ci[:, :, 1]), axis=0)


@pytest.mark.slow
@pytest.mark.parametrize("n, eps", [(1000, 4.0), (10000, 1.0)])
def test_functional_cell_covers_and_is_not_wide(n, eps):
    """400 data sets (MC sd 0.011): every parameter covers within [0.92, 0.98] and the mean
    width is at most 1.3x the 2.5-97.5 % spread of the 400 estimates. Control: the same
    intervals shrunk by 20 % about their centres must fall below 0.92 (the check can fail).
    With the fixed seed the first slope covered 0.904 at n = 1e3, epsilon = 4 (800 sets)."""
    est, ci = _cell(n, eps, reps=400, n_boot=250, seed=21)
    cov = _coverage(ci)
    assert np.all((cov >= 0.92) & (cov <= 0.98)), cov
    lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
    ratio = (ci[:, :, 1] - ci[:, :, 0]).mean(axis=0) / (hi - lo)
    assert np.all(ratio <= 1.3), ratio
    mid, half = ci.mean(axis=2, keepdims=True), (ci[:, :, 1:] - ci[:, :, :1]) / 2
    shrunk = np.concatenate([mid - 0.8 * half, mid + 0.8 * half], axis=2)
    assert np.all(_coverage(shrunk) < 0.92), _coverage(shrunk)
