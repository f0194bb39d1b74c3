"""The KNG bootstrap is seeded by the release (issue 15, docs/inference.md).

With the fixed seed 0 every release reused the same normal, K-norm, Gram-noise and rank-noise
draws, so the Monte Carlo error of the replicates was common to all intervals instead of
averaging out. The seed is now a hash of released quantities only.
"""

import warnings

import numpy as np
from scipy import stats

from dpreg import KNGQuantileRegressor
from dpreg._random import release_seed
from dpreg.accounting import BudgetAccountant
from dpreg.linear_model import _inference as inf_functional
from dpreg.linear_model import _inference_quantile as inf

BETA = np.array([1.0, 2.0, -1.0])


def _release(seed, n=3000):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = BETA[0] + X @ BETA[1:] + rng.standard_normal(n)
    m = KNGQuantileRegressor(
        epsilon=2.4,
        bounds_X=(-1, 1),
        bounds_y=(-7, 9),
        random_state=rng,
        accountant=BudgetAccountant(),
        progress_bar=False,
    )
    return m.fit(X, y).release_curvature(X, y, 1.6, random_state=rng)


def _draws(m, n_boot=300):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # small-n * epsilon checks: not tested here
        return inf._draws(m, n_boot)[2]


def _standardised(m, n_boot=300):
    """Replicates minus the estimate over their sd: the fixed seed made two releases' equal
    up to the (slightly different) released G and sparsity, so rank correlation ~1."""
    est, draws = _draws(m, n_boot)
    return (draws - est) / draws.std(axis=0)


def test_bootstrap_draws_are_independent_across_releases():
    a, b = _release(0), _release(1)
    sa, sb = _standardised(a), _standardised(b)
    for j in range(3):
        assert abs(stats.spearmanr(sa[:, j], sb[:, j])[0]) < 0.3  # sd of rho ~ 0.06
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ci = a.conf_int(n_boot=300)
        a._inference_cache = None  # recomputed from the same release: the same draws
        np.testing.assert_array_equal(a.conf_int(n_boot=300), ci)
    np.testing.assert_array_equal(_standardised(a), sa)


def test_seed_is_a_function_of_the_release_only():
    """``b`` fitted on other data, then handed ``a``'s two releases (the KNG draw and the
    curvature release) and nothing else, gives ``a``'s interval; its own releases give
    other draws."""
    a, b = _release(2), _release(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ci = a.conf_int(n_boot=300)
        own = _standardised(b)
        b.kng_release_ = a.kng_release_
        b.curvature_release_ = a.curvature_release_
        b._inference_cache = None
        np.testing.assert_array_equal(b.conf_int(n_boot=300), ci)
    assert abs(stats.spearmanr(own[:, 1], _standardised(b)[:, 1])[0]) < 0.3


def test_release_seed_has_one_home():
    """One helper for every bootstrap; the old import path still works."""
    assert inf_functional.release_seed is release_seed
    assert inf.release_seed is release_seed
    m = _release(4)
    values = inf.released_values(m.kng_release_, m.curvature_release_)
    assert values[0] is m.kng_release_.theta
    assert release_seed(*values) != release_seed(*values[:-1], values[-1] + 1e-9)
