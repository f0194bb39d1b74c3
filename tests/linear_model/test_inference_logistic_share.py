"""The Hessian share of the logistic intervals (issue #15): ``hessian_share(n, epsilon)``."""

import warnings

import numpy as np
import pytest

from dpreg import ObjectivePerturbationLogistic
from dpreg.linear_model._inference_logistic import hessian_share

BETA = np.array([0.5, 1.5, -1.0])


def test_share_is_a_clipped_public_rule():
    assert hessian_share(1000, 0.25) == pytest.approx(0.2)
    assert hessian_share(1000, 1.0) == pytest.approx(0.2)
    assert hessian_share(2000, 1.0) == pytest.approx(np.sqrt(0.02))
    assert hessian_share(1000, 4.0) == pytest.approx(0.1)
    assert hessian_share(10, 0.01) == pytest.approx(0.2)  # capped: the fit keeps 0.8
    assert hessian_share(10**7, 10.0) == pytest.approx(0.1)
    grid = [hessian_share(n, e) for n in (100, 1000, 10**4, 10**5) for e in (0.1, 1.0, 10.0)]
    assert all(0.1 <= s <= 0.2 for s in grid)
    # non-increasing in n * epsilon
    ne = sorted((n * e, hessian_share(n, e)) for n in (100, 10**4) for e in (0.1, 1.0, 10.0))
    assert all(a[1] >= b[1] for a, b in zip(ne, ne[1:]))


@pytest.mark.parametrize("n, eps", [(0, 1.0), (100, 0.0), (100, -1.0), (100, np.nan)])
def test_bad_input_raises(n, eps):
    with pytest.raises(ValueError):
        hessian_share(n, eps)


def _widths(n, eps, share, reps, seed):
    """Coverage and mean width over the whole-epsilon oracle, on data sets fixed by ``seed``."""
    rng = np.random.default_rng(seed)
    inside, widths, full = [], [], []
    for _ in range(reps):
        X = rng.uniform(-1, 1, size=(n, 2))
        y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(BETA[0] + X @ BETA[1:])))).astype(int)

        def fit(e, X=X, y=y):
            return ObjectivePerturbationLogistic(
                epsilon=e, bounds_X=(-1, 1), classes=[0, 1], random_state=rng
            ).fit(X, y)

        m = fit((1 - share) * eps)
        m.release_hessian(X, y, share * eps, random_state=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ci = m.conf_int(n_boot=200, method="linear")
        inside.append((ci[:, 0] <= BETA) & (BETA <= ci[:, 1]))
        widths.append(ci[:, 1] - ci[:, 0])
        f = fit(eps)
        full.append(np.r_[f.intercept_, f.coef_.ravel()])
    lo, hi = np.quantile(full, [0.025, 0.975], axis=0)
    return np.mean(inside, axis=0), np.mean(widths, axis=0) / (hi - lo)


def test_share_narrows_small_n_eps_intervals_at_equal_budget():
    """n = 1e3, epsilon = 1 (n epsilon = 1000): the rule's 0.2 against the former 0.1 (the
    control) on the same data sets, both spending epsilon in total. The Hessian's noise is what
    made the 0.1 intervals wide (benchmarks/_inference_logistic_diagnosis.py), so the rule must
    give narrower intervals against the same whole-epsilon oracle and still cover."""
    share = hessian_share(1000, 1.0)
    cov, ratio = _widths(1000, 1.0, share, reps=30, seed=4)
    cov_old, ratio_old = _widths(1000, 1.0, 0.1, reps=30, seed=4)
    assert cov.mean() >= 0.88, cov  # 30 data sets: the mean of 90 indicators, sd ~0.02
    assert ratio.mean() < 0.9 * ratio_old.mean(), (ratio, ratio_old)


@pytest.mark.slow
def test_small_n_eps_cell_with_the_rule():
    """n = 1e3, epsilon = 1 with the rule's split, 150 data sets: covers, and at equal total
    budget is narrower than the former split's 1.8-2.2x the whole-epsilon oracle (docs).
    Measured on these data sets: coverage 0.96 / 0.95 / 0.95, ratio 1.12 / 1.17 / 1.27; the
    former 0.1 on the same seed (the control) gives 1.55 / 1.85 / 2.16 and fails."""
    cov, ratio = _widths(1000, 1.0, hessian_share(1000, 1.0), reps=150, seed=12)
    assert cov.mean() >= 0.92, cov
    assert np.all(ratio <= 1.75), ratio
