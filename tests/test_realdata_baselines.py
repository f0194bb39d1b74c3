"""The anchors of the real-data matrix (benchmarks/baselines) and the matrix's plumbing."""

import math

import numpy as np
import pytest
from scipy import stats

from benchmarks.baselines import Box, ols
from benchmarks.baselines.adassp import adassp, boosted_adassp, gdp_mu
from benchmarks.baselines.tukeyem import PTRFailed, _depth_boxes, _uniform_shell, tukeyem


def _gdp_delta(eps, mu):
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-6), (1.0, 1e-6), (4.0, 1e-6), (1.0, 1e-3)])
def test_gdp_mu_meets_delta(eps, delta):
    mu = gdp_mu(eps, delta)
    assert _gdp_delta(eps, mu) <= delta
    assert _gdp_delta(eps, mu * 1.01) > delta  # and it is not needlessly small


def _problem(n=20000, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(n, p))
    y = 2.0 + X @ np.linspace(-1, 1, p) + rng.normal(scale=0.5, size=n)
    box = Box.from_bounds((0, 10), (-20, 20), p)
    return X, y, box


def test_box_predict_matches_ols_in_user_units():
    X, y, box = _problem(500)
    Z, w = box.design(X), box.target(y)
    beta = np.linalg.lstsq(Z, w, rcond=None)[0]
    b0, b = ols(X, y)
    np.testing.assert_allclose(box.predict(beta, X), b0 + X @ b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("method", [adassp, boosted_adassp])
def test_ssp_anchors_converge_to_ols(method):
    X, y, box = _problem()
    Z, w = box.design(X), box.target(y)
    exact = np.linalg.lstsq(Z, w, rcond=None)[0]
    est = method(Z, w, 50.0, 1e-6, 0)
    np.testing.assert_allclose(est, exact, atol=2e-3)
    noisy = method(Z, w, 0.1, 1e-6, 0)
    assert np.linalg.norm(noisy - exact) > 1e-3  # the noise is really there


def test_tukeyem_fails_on_small_n_and_works_on_large_clean_data():
    X, y, box = _problem(300)
    with pytest.raises(PTRFailed):
        tukeyem(box.design(X), box.target(y), 1.0, 1e-6, 0)
    X, y, box = _problem(60000, p=2)
    Z, w = box.design(X), box.target(y)
    est = tukeyem(Z, w, 4.0, 1e-6, 0)
    exact = np.linalg.lstsq(Z, w, rcond=None)[0]
    np.testing.assert_allclose(est, exact, atol=0.02)


def test_tukey_shell_sampler_is_uniform_on_the_shell():
    """Points of depth exactly i: inside box_i, outside box_{i+1}; area shares match."""
    rng = np.random.default_rng(0)
    models = rng.normal(size=(40, 2))
    lo, hi = _depth_boxes(models, rng)
    i = 5
    pts = np.array([_uniform_shell(lo, hi, i, rng) for _ in range(4000)])
    inside_outer = np.all((pts >= lo[:, i - 1]) & (pts <= hi[:, i - 1]), axis=1)
    inside_inner = np.all((pts > lo[:, i]) & (pts < hi[:, i]), axis=1)
    assert inside_outer.all() and not inside_inner.any()
    # share of the shell with x_0 below the inner box, against its area share
    w_out, w_in = hi[:, i - 1] - lo[:, i - 1], hi[:, i] - lo[:, i]
    left = (lo[0, i] - lo[0, i - 1]) * w_out[1] / (np.prod(w_out) - np.prod(w_in))
    share = np.mean(pts[:, 0] < lo[0, i])
    assert abs(share - left) < 4 * math.sqrt(left * (1 - left) / len(pts)) + 1e-3


@pytest.mark.slow
def test_matrix_plumbing_on_a_small_set():
    from benchmarks import realdata

    rows = realdata.run_regression(names=["engel"], eps_grid=[2.0], reps=1)
    methods = {r["method"] for r in rows}
    assert {"dpreg", "AdaSSP", "BoostedAdaSSP", "TukeyEM", "OLS (non-private)"} <= methods
    ols_r2 = next(r["score"] for r in rows if r["method"] == "OLS (non-private)")
    assert 0.7 < ols_r2 < 0.95
    text = realdata.summary(__import__("pandas").DataFrame(rows))
    assert "Issue 14 goals" in text and "PTR fails" in text
