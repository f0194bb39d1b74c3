"""``dpreg.inference.interval_share``: the measured budget split, one ledger for both releases."""

import math

import numpy as np
import pytest

from dpreg import (
    BudgetAccountant,
    FunctionalLinearRegression,
    KNGQuantileRegressor,
    ObjectivePerturbationLogistic,
    ObjectivePerturbationQuantileRegressor,
    PrivateProjectionMedian,
)
from dpreg.inference import (
    FUNCTIONAL_SHARE,
    KNG_CURVATURE_SHARE,
    MEDIAN_SCALE_SHARE,
    interval_share,
)


@pytest.mark.parametrize(
    ("n", "epsilon", "expected"),
    [
        (1_000, 0.25, 0.2),  # sqrt(40 / 250) = 0.4, capped at 0.2
        (1_000, 1.0, 0.2),
        (1_000, 4.0, 0.1),
        (10_000, 0.25, math.sqrt(40 / 2_500)),  # 0.126: the one cell inside the clip
        (100_000, 1.0, 0.1),
    ],
)
def test_logistic_share_is_the_hessian_rule(n, epsilon, expected):
    assert interval_share(ObjectivePerturbationLogistic, n, epsilon) == pytest.approx(expected)
    assert interval_share(ObjectivePerturbationLogistic(), n, epsilon) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("estimator", "share"),
    [
        (FunctionalLinearRegression, FUNCTIONAL_SHARE),
        (KNGQuantileRegressor, KNG_CURVATURE_SHARE),
        (PrivateProjectionMedian, MEDIAN_SCALE_SHARE),
    ],
)
def test_fixed_shares(estimator, share):
    for n, epsilon in [(1_000, 0.25), (100_000, 4.0)]:
        assert interval_share(estimator, n, epsilon) == share
        assert interval_share(estimator(), n, epsilon) == share
    assert 0 < share < 1


def test_the_benchmark_measures_the_library_split():
    """The coverage tables describe a user's fit only if the benchmark splits the same way."""
    from benchmarks import _inference_cells as cells
    from benchmarks import inference as bench

    assert bench.SHARE == FUNCTIONAL_SHARE
    assert cells.SHARE == MEDIAN_SCALE_SHARE
    assert cells.KNG_SHARE == KNG_CURVATURE_SHARE


@pytest.mark.parametrize(
    ("n", "epsilon"),
    [
        (0, 1.0),
        (-5, 1.0),
        (10.5, 1.0),
        (True, 1.0),
        (float("inf"), 1.0),
        ("100", 1.0),
        (100, 0.0),
        (100, -1.0),
        (100, float("nan")),
    ],
)
def test_bad_input_is_refused(n, epsilon):
    with pytest.raises(ValueError):
        interval_share(KNGQuantileRegressor, n, epsilon)


def test_estimator_without_intervals_is_refused():
    with pytest.raises(TypeError, match="no private confidence intervals"):
        interval_share(ObjectivePerturbationQuantileRegressor, 1_000, 1.0)


@pytest.mark.filterwarnings("ignore:The privacy noise of the released Hessian")
def test_split_spends_exactly_the_total_on_one_ledger():
    """Fit + release with the suggested split: one accountant, the total epsilon, no more."""
    rng = np.random.default_rng(0)
    n, total = 2_000, 2.0
    X = rng.uniform(-1, 1, size=(n, 2))
    y = 1 + X @ [2.0, -1.0] + rng.normal(size=n)
    labels = (rng.uniform(size=n) < 1 / (1 + np.exp(-X @ [1.5, -1.0]))).astype(int)

    acc = BudgetAccountant()
    FunctionalLinearRegression(
        epsilon=total,
        bounds_X=(-1, 1),
        bounds_y=(-7, 9),
        inference_share=interval_share(FunctionalLinearRegression, n, total),
        accountant=acc,
        random_state=0,
    ).fit(X, y).conf_int()
    assert acc.spent == pytest.approx((total, 0.0))

    for estimator, target, release in [
        (
            ObjectivePerturbationLogistic(bounds_X=(-1, 1), classes=[0, 1], random_state=0),
            labels,
            "release_hessian",
        ),
        (
            KNGQuantileRegressor(bounds_X=(-1, 1), bounds_y=(-7, 9), random_state=0),
            y,
            "release_curvature",
        ),
    ]:
        acc = BudgetAccountant()
        share = interval_share(estimator, n, total)
        estimator.set_params(epsilon=(1 - share) * total, accountant=acc).fit(X, target)
        getattr(estimator, release)(X, target, epsilon=share * total)
        estimator.conf_int()
        assert acc.spent == pytest.approx((total, 0.0))

    acc = BudgetAccountant(delta=0.5)  # the median's test is (epsilon, delta)-DP
    share = interval_share(PrivateProjectionMedian, n, total)
    median = PrivateProjectionMedian(
        epsilon=(1 - share) * total, norm="linf", scale=[1.0, 1.0], accountant=acc, random_state=0
    ).fit(X)
    median.release_scale(X, epsilon=share * total)
    median.conf_int()
    assert acc.spent[0] == pytest.approx(total)
