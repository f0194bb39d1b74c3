"""The logistic anchors of the real-data matrix (benchmarks/baselines): their calibrations."""

import numpy as np
import pytest

from benchmarks.baselines import dpsgd, output_perturbation
from benchmarks.baselines._logistic_common import design


def test_output_perturbation_sensitivity_bound_holds_on_neighbours():
    """Replacing one row moves the regularised minimiser by at most 2 sqrt(m) / (n Lambda);
    neighbours with opposite sign-vector rows reach more than a quarter of it (the bound
    needs |sigmoid - y| near 1 for both rows, which a strong ridge prevents)."""
    rng = np.random.default_rng(0)
    n, p, lam = 40, 2, 5.0
    m = p + 1
    bound = 2 * np.sqrt(m) / (n * lam)
    worst = 0.0
    for _ in range(15):
        Z = design(rng.uniform(-1, 1, size=(n, p)), -1, 1)
        y = (rng.uniform(size=n) < 0.5).astype(float)
        Z2 = Z.copy()
        Z[0, 1:] = np.sign(rng.normal(size=p))
        Z2[0, 1:] = -Z[0, 1:]
        a = output_perturbation.regularised_minimiser(Z, y, lam)
        b = output_perturbation.regularised_minimiser(Z2, y, lam)
        worst = max(worst, np.linalg.norm(a - b))
    assert worst <= bound
    assert worst > bound / 4


def test_output_perturbation_noise_radius_is_gamma():
    from scipy import stats

    rng = np.random.default_rng(1)
    r = [np.linalg.norm(output_perturbation.l2_knorm_noise(4, 0.5, rng)) for _ in range(1000)]
    assert stats.kstest(r, stats.gamma(4, scale=0.5).cdf).pvalue > 1e-3


def test_dpsgd_accountant_is_replace_one_and_monotone():
    """Short form: a larger noise multiplier spends less, and the sampling rate b/n_public of
    a smaller public n spends more (why one sigma computed at the smallest fold serves all)."""
    pytest.importorskip("dp_accounting")
    e1 = dpsgd.rdp_epsilon(2.0, 2000, 200, 1e-6)
    assert dpsgd.rdp_epsilon(4.0, 2000, 200, 1e-6) < e1 < dpsgd.rdp_epsilon(2.0, 1000, 200, 1e-6)


def test_dpsgd_run_learns_with_small_noise():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(2000, 2))
    y = (X[:, 0] + 0.2 * rng.standard_normal(2000) > 0).astype(float)
    Z = design(X, -1, 1)
    theta = dpsgd.run(Z, y, lr=1.0, epochs=3, sigma=0.5, n_public=2000, rng=rng)
    assert np.mean((Z @ theta > 0) == (y == 1)) > 0.85


@pytest.mark.slow
def test_dpsgd_noise_multiplier_meets_the_budget_and_is_nearly_minimal():
    pytest.importorskip("dp_accounting")
    eps, delta, n, steps = 1.0, 1e-6, 2000, 200
    mult = dpsgd.noise_multiplier(eps, delta, n, steps)
    assert dpsgd.rdp_epsilon(mult, n, steps, delta) <= eps
    assert dpsgd.rdp_epsilon(0.95 * mult, n, steps, delta) > eps


@pytest.mark.slow
def test_dpsgd_tuned_fit_runs_and_learns_at_large_epsilon():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(3000, 2))
    y = (X[:, 0] + 0.2 * rng.standard_normal(3000) > 0).astype(float)
    Z = design(X, -1, 1)
    theta, mult = dpsgd.fit_tuned(Z, y, 50.0, 1e-6, rng, n_public=3000)
    assert mult > 0 and np.mean((Z @ theta > 0) == (y == 1)) > 0.85
