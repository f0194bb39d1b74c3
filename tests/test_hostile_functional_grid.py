"""FunctionalLinearRegression over a grid of extreme public options: nothing raises after the
spend (warnings as errors). The plan is validated before the spend with the fit's epsilon and
rebuilt after it with the statistic's smaller part (inference, ridge and count shares), so a
calibration that worked before could in principle fail after; this grid checks it does not."""

import itertools
import warnings

import numpy as np
import pytest

from dpreg import BudgetAccountant, FunctionalLinearRegression

GRID = list(
    itertools.product(
        ["huber", "gaussian", "auto", "knorm"],  # mechanism
        [1e-100, 1e-50, 1e-10, 1.0, 1e6, 9e7],  # epsilon (1e-100: the EPSILON_MIN)
        [0.0, 1e-300, 1e-12, 0.5],  # delta (1e-300: GAUSSIAN_DELTA_MIN)
        [0.0, 0.9],  # ridge_share (0: fixed ridge)
        [0.0, 0.09],  # inference_share
    )
)


@pytest.mark.slow
def test_no_failure_after_the_spend_over_extreme_options():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 3))
    y = X.sum(axis=1) + rng.normal(size=200)
    after = []
    for mech, eps, delta, ridge_share, inference_share in GRID:
        acc = BudgetAccountant(delta=0.9)
        kw = dict(
            mechanism=mech,
            epsilon=eps,
            delta=delta,
            bounds_X=(-1, 1),
            bounds_y=(-5, 5),
            accountant=acc,
            random_state=0,
            inference_share=inference_share,
        )
        if ridge_share:
            kw.update(ridge="adaptive", ridge_share=ridge_share)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                model = FunctionalLinearRegression(**kw).fit(X, y)
            assert np.all(np.isfinite(model.coef_))
        except Exception as exc:  # noqa: BLE001 (the point: what raised, and when)
            if acc.spent[0] > 0:
                after.append((mech, eps, delta, ridge_share, inference_share, repr(exc)))
    assert after == []
