"""The default budget split and PSD floor of FunctionalLinearRegression (issue 14, item 2).

Both are public constants (``GRAM_WEIGHT``, ``RIDGE_FACTOR``): no sensitivity changes, the
release is the same l_inf block mechanism. What can go wrong is the arithmetic of the split
(it must minimise its stated proxy), its data independence, and the accuracy claim that
motivated the change; each has a test here.
"""

import math

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.metrics import r2_score

from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg.demo import DIABETES_BOUNDS_X, DIABETES_BOUNDS_Y
from dpreg.linear_model._functional_sensitivity import Layout
from dpreg.linear_model.functional import (
    GRAM_WEIGHT,
    RIDGE_FACTOR,
    default_split,
    gram_weight,
    linf_noise_std,
    make_plan,
    split_for_weight,
    sufficient_statistics,
)


@pytest.mark.parametrize("p", [1, 2, 5, 9, 12, 20])
def test_default_split_minimises_its_proxy(p):
    # sigma_y^2 + gram_weight(p) sigma_G^2 over a fine grid of splits: the closed form wins
    layout = Layout(p, True)

    def proxy(s):
        sg = linf_noise_std(layout.d_gram, 2.0, s)
        sy = linf_noise_std(layout.d_target, 2.0, 1.0 - s)
        return sy**2 + gram_weight(p) * sg**2

    grid = np.linspace(0.01, 0.99, 981)
    best = grid[np.argmin([proxy(s) for s in grid])]
    s = default_split(layout)
    assert abs(s - best) < 2e-3
    assert proxy(s) <= min(proxy(g) for g in grid) * (1 + 1e-9)


def test_default_split_gives_the_target_more_than_the_worst_case_weight():
    # GRAM_WEIGHT < 1 moves budget from the Gram block to X^T y (the measured gain); with the
    # worst-case weight 1 / (p + 1) the split would be larger for every p
    assert 0 < GRAM_WEIGHT < 1
    for p in (1, 5, 20):
        layout = Layout(p, True)
        assert 0.1 < default_split(layout) < split_for_weight(layout, 1.0 / (p + 1.0))


def test_default_plan_is_data_independent_and_uses_the_public_floor():
    rng = np.random.default_rng(0)
    acc = BudgetAccountant(epsilon=float("inf"))
    fits = []
    for scale in (0.1, 10.0):  # two very different data sets with the same public shape
        X = scale * rng.uniform(-1, 1, (500, 3))
        y = X.sum(axis=1) + rng.normal(size=500)
        m = FunctionalLinearRegression(
            epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-5, 5), random_state=0, accountant=acc
        ).fit(X, y)
        fits.append(m)
    plan = make_plan(Layout(3, True), 1.0)
    for m in fits:
        ns = m.noisy_statistics_
        assert m.split_ == plan.split == default_split(Layout(3, True))
        assert ns.lam == RIDGE_FACTOR["blocks"] * math.sqrt(4.0) * plan.gram_std


def test_auto_floor_factor_follows_the_release():
    # 1.5 for the (default) l_inf blocks, 3 for joint releases (Gaussian with delta, joint K-norm)
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (400, 20))
    y = X.sum(axis=1) + rng.normal(size=400)
    acc = BudgetAccountant(epsilon=float("inf"), delta=1.0)
    for kw, release, factor in (
        ({}, "blocks", 1.5),
        ({"delta": 1e-6}, "joint", 3.0),  # p = 20: the Gaussian wins the proxy
        ({"release": "joint"}, "joint", 3.0),
        ({"ridge_factor": 0.7}, "blocks", 0.7),
    ):
        m = FunctionalLinearRegression(
            epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-25, 25), accountant=acc, **kw
        ).fit(X, y)
        ns = m.noisy_statistics_
        assert m.release_ == release
        assert ns.lam == pytest.approx(factor * math.sqrt(21.0) * ns.plan.gram_std, rel=1e-12)
    with pytest.raises(ValueError, match="ridge_factor"):
        FunctionalLinearRegression(ridge_factor="big").fit(X, y)


def _diabetes_r2(params, eps, draws=30):
    X, y = load_diabetes(return_X_y=True, scaled=False)
    rng = np.random.default_rng(1)
    test = rng.permutation(len(y))[:88]
    train = np.setdiff1d(np.arange(len(y)), test)
    st = sufficient_statistics(X[train], y[train], DIABETES_BOUNDS_X, DIABETES_BOUNDS_Y)
    acc = BudgetAccountant(epsilon=float("inf"))
    m = FunctionalLinearRegression(epsilon=eps, accountant=acc, **params)
    out = []
    for seed in range(draws):
        m.set_params(random_state=seed).fit_statistics(st)
        out.append(r2_score(y[test], m.predict(X[test])))
    return float(np.median(out))


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_defaults_beat_the_previous_defaults_on_diabetes(eps):
    # the previous defaults: worst-case split weight (GRAM_WEIGHT = 1) and ridge_factor 3.
    # measured (this train/test split, 30 draws): median R^2 0.087 vs 0.056 at epsilon 1,
    # 0.265 vs 0.181 at epsilon 4
    old = dict(split=split_for_weight(Layout(10, True), 1.0 / 11.0), ridge_factor=3.0)
    assert _diabetes_r2({}, eps) > _diabetes_r2(old, eps) + 0.02


def test_mechanism_choice_with_delta_is_unchanged_by_the_new_split():
    # the delta > 0 choice ranks an automatic block split at the worst-case-optimal split, so
    # the re-tuned split changes no decision; these are the decisions of the previous code
    # (computed with it; these cells sit next to a switch, where a changed split would move it)
    expected = {
        (1, 0.25): "knorm", (5, 0.05): "gaussian", (5, 0.1): "knorm", (9, 0.5): "gaussian",
        (9, 1.0): "knorm", (11, 1.0): "gaussian", (12, 2.0): "knorm", (20, 4.0): "gaussian",
        (20, 8.0): "knorm",
    }  # fmt: skip
    for (p, eps), mech in expected.items():
        assert make_plan(Layout(p, True), eps, 1e-6).mechanism == mech, (p, eps)
