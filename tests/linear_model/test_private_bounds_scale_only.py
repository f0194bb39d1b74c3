"""The one-release scale-only feature box of the logistic model's private bounds at small n*eps.

dpreg._bounds.private_abs_scale_unchecked (exact KNG median of |x_j|, box -/+ SCALE_WIDEN M_j),
chosen by the public scale_only_rule inside fit_bounds(scale_only_features=True).
"""

import numpy as np
import pytest
from _piecewise_law import piecewise_cdf
from scipy import stats

import dpreg._bounds as B
from dpreg import BudgetAccountant, ObjectivePerturbationLogistic

SCALE = B.FIT_ASINH_SCALE
TOP = max(abs(v) for v in B.DEFAULT_CANDIDATE_RANGE)


def _log_density(values, eps, u_grid):
    """Log of the exact output density of M (in u = asinh(M / s)) on ``u_grid``, derived here
    independently of the sampler: exp(-eps / 2 |#{asinh(|x| / s) <= u} - n / 2|) on
    [0, asinh(TOP / s)], normalised piece by piece."""
    c = np.sort(np.arcsinh(np.abs(np.asarray(values, dtype=float)) / SCALE))
    n = c.size
    top = np.arcsinh(TOP / SCALE)  # values beyond the public interval count at its end
    edges = np.concatenate([[0.0], np.clip(c, 0.0, top), [top]])
    logw = -eps / 2 * np.abs(np.arange(n + 1) - n / 2)
    log_z = np.logaddexp.reduce(logw + np.log(np.maximum(np.diff(edges), 1e-300)))
    counts = np.searchsorted(c, u_grid, side="right")
    return -eps / 2 * np.abs(counts - n / 2) - log_z, edges, logw, log_z


def _exact_cdf(values, eps):
    _, edges, logw, log_z = _log_density(values, eps, np.zeros(1))
    return piecewise_cdf(edges, logw, log_z)


def test_scale_release_follows_its_exact_law_and_a_doubled_budget_is_rejected():
    """KS test of the released scale against the law derived above (control: 2 eps)."""
    x = np.array([-3.0, 0.02, 0.5, 1.0, 2.0, -7.5, 40.0, 0.3, 0.0, 5.0, 11.0])
    eps = 0.6
    rng = np.random.default_rng(0)
    draws = np.array(
        [
            B.private_abs_scale_unchecked(x[:, None], eps, (-TOP, TOP), 1.0, rng)[1][0]
            for _ in range(1500)
        ]  # fmt: skip
    )
    u = np.arcsinh(draws / SCALE)
    assert stats.kstest(u, _exact_cdf(x, eps)).pvalue > 0.01
    assert stats.kstest(u, _exact_cdf(x, 2 * eps)).pvalue < 1e-4  # mis-calibrated control


def test_scale_release_density_ratio_adversarial_neighbours():
    """Exact output-density ratio over replace-one neighbours: never above eps, and the search
    gets close to eps (the bound is tight); a two-record change (control) exceeds it."""
    rng = np.random.default_rng(1)
    eps = 0.8
    worst = 0.0
    for _ in range(200):
        n = int(rng.integers(2, 12))
        x = np.round(rng.normal(size=n) * rng.choice([0.01, 1, 1e6]), int(rng.integers(0, 3)))
        c = np.arcsinh(np.abs(x) / SCALE)
        grid = np.unique(np.concatenate([c, c + 1e-9, c - 1e-9, [0.0, 30.0]]))
        grid = grid[(grid >= 0) & (grid <= np.arcsinh(TOP / SCALE))]
        base = _log_density(x, eps, grid)[0]
        news = np.concatenate([x, -x, [0.0, 1e12, -1e12, 1e-300], rng.normal(size=5) * 100])
        for i in rng.choice(n, size=min(n, 3), replace=False):
            for new in news:
                x2 = x.copy()
                x2[i] = new
                worst = max(worst, np.max(np.abs(_log_density(x2, eps, grid)[0] - base)))
    assert worst <= eps + 1e-9
    assert worst > 0.9 * eps
    x = np.array([0.0, 1.0, 2.0, 3.0])
    grid = np.linspace(0, 30, 301)
    x2 = np.array([1e9, 1e9, 2.0, 3.0])
    gap = np.max(np.abs(_log_density(x2, eps, grid)[0] - _log_density(x, eps, grid)[0]))
    assert gap > eps


def test_scale_only_rule_depends_on_public_quantities():
    is_target = np.array([False] * 10)
    assert B.scale_only_rule(np.full(10, 0.05), 426, is_target)  # 0.025 * 426 < 12
    assert not B.scale_only_rule(np.full(10, 0.1), 426, is_target)  # 0.05 * 426 >= 12
    # a target's budget does not count, only the features'
    assert B.scale_only_rule([0.05, 1.0], 426, [False, True])
    assert not B.scale_only_rule(np.full(1, 0.5), 100, [True])  # targets only


def test_fit_bounds_switches_only_when_the_two_releases_are_under_funded():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(120, 15, 400), rng.normal(0.3, 0.05, 400)])
    # small n * eps (0.025 * 400 < 12 per release): symmetric boxes around the public 0
    (box,), left = B.fit_bounds(
        [X], ["private"], 0.2, 0.5, np.random.default_rng(0), ("bounds_X",), True
    )
    np.testing.assert_array_equal(box[0], -box[1])
    assert left == 0.1
    # the same with scale_only_features=False, or at a large n * eps: the median / MAD box,
    # bit-identical to what fit_bounds released before the scale-only path existed
    for eps, flag in ((0.2, False), (40.0, True)):
        (a,), _ = B.fit_bounds([X], ["private"], eps, 0.5, np.random.default_rng(0),
                               ("bounds_X",), flag)  # fmt: skip
        r = np.random.default_rng(0)
        ref = B.private_median_mad_unchecked(
            X, B.column_epsilons(eps / 2, 400, [False, False]), B.DEFAULT_CANDIDATE_RANGE,
            B.FIT_WIDEN, r,
        )  # fmt: skip
        np.testing.assert_array_equal(a[0], ref[0])
        np.testing.assert_array_equal(a[1], ref[1])


@pytest.mark.parametrize("multi", [False, True])
def test_scale_only_logistic_never_raises_after_spending(multi):
    """Zero, constant, binary and +/-1e12 columns at small n*eps: one ledger entry, finite."""
    rng = np.random.default_rng(3)
    n = 80
    X = np.column_stack(
        [
            np.zeros(n),
            np.full(n, -4.0),
            rng.integers(0, 2, n),
            np.where(rng.random(n) < 0.5, 1e12, -1e12),
            rng.normal(50, 5, n),
        ]  # fmt: skip
    )
    classes = [0, 1, 2] if multi else [0, 1]
    y = rng.integers(0, len(classes), n)
    for seed in range(4):
        acc = BudgetAccountant(epsilon=10.0)
        model = ObjectivePerturbationLogistic(
            epsilon=0.5, bounds_X="private", classes=classes, accountant=acc, random_state=seed
        ).fit(X, y)
        assert acc.ledger == [(0.5, 0.0)]
        lo, hi = model.predict_bounds_
        np.testing.assert_array_equal(lo, -hi)  # the scale-only path was taken
        assert np.all(np.isfinite(model.coef_)) and np.all(hi > 0)
        assert np.isin(model.predict(X), classes).all()


def _median_accuracy(X, y, n_train, seeds=8):
    accs = []
    for seed in range(seeds):
        model = ObjectivePerturbationLogistic(
            epsilon=1.0, bounds_X="private", classes=[0, 1], random_state=seed
        ).fit(X[:n_train], y[:n_train])
        accs.append(model.score(X[n_train:], y[n_train:]))
    return float(np.median(accs))


def test_scale_only_beats_two_releases_on_breast_cancer(monkeypatch):
    """426 training rows, the ten "mean" features, eps = 1 (the cell of issue #13 item 1):
    the scale-only boxes beat the median / MAD boxes, whose draws mostly miss the data here
    (benchmark, 20 splits: 0.83 against 0.76 of the public-bounds accuracy)."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(5).permutation(len(y))
    X, y = X[order, :10], y[order]
    scale_only = _median_accuracy(X, y, 426)
    monkeypatch.setattr(B, "scale_only_rule", lambda *args: False)
    two_releases = _median_accuracy(X, y, 426)
    assert scale_only > two_releases + 0.04, (scale_only, two_releases)


def test_low_cv_columns_keep_the_two_releases_when_they_are_funded():
    """Five columns far from 0 (coefficient of variation 0.3), n = 400, eps = 1: 20 budget-
    ranks per release, so the rule keeps the median / MAD boxes, which the symmetric box
    would lose to (measured 0.65 against 0.52 median accuracy)."""
    rng = np.random.default_rng(4)
    n, p = 400, 5
    scales = 10.0 ** rng.uniform(-1.5, 3, p)
    X = scales * rng.lognormal(0.0, 0.3, (2 * n, p))
    y = np.log(X / scales).sum(axis=1) / 0.3 / np.sqrt(p) + 0.5 * rng.logistic(size=2 * n) > 0
    eps_b = B.bounds_epsilon("auto", 1.0, n, p)
    assert not B.scale_only_rule(B.column_epsilons(eps_b, n, [False] * p), n, [False] * p)
    assert _median_accuracy(X, y.astype(int), n) > 0.6


def test_per_release_split_adds_up_and_reduces_to_the_per_column_rule():
    rng = np.random.default_rng(6)
    for _ in range(300):
        m = int(rng.integers(1, 12))
        is_target = rng.random(m) < 0.3
        releases = rng.integers(1, 3, m)
        eps_b, n = float(rng.uniform(1e-3, 10)), int(rng.integers(1, 30000))
        split = B.column_epsilons(eps_b, n, is_target, releases)
        assert np.all(split > 0) and np.isclose(split.sum(), eps_b, rtol=1e-12)
        np.testing.assert_array_equal(  # all two releases: bit-identical to the old split
            B.column_epsilons(eps_b, n, is_target, np.full(m, 2)),
            B.column_epsilons(eps_b, n, is_target),
        )


def test_kng_response_box_is_one_scale_release():
    """KNG with bounds_y="private": a symmetric response box (one draw), the feature box from
    the median / MAD, one ledger entry, and the budget split per release."""
    from dpreg import KNGQuantileRegressor

    rng = np.random.default_rng(7)
    X = rng.lognormal(6.5, 0.5, (176, 1))
    y = 0.5 * X[:, 0] + rng.normal(0, 50, 176)
    acc = BudgetAccountant(epsilon=5.0)
    model = KNGQuantileRegressor(
        epsilon=1.0, bounds_X="private", bounds_y="private", accountant=acc,
        random_state=0, progress_bar=False,
    ).fit(X, y)  # fmt: skip
    assert acc.ledger == [(1.0, 0.0)]
    lo_y, hi_y = model.bounds_y_
    np.testing.assert_array_equal(lo_y, -hi_y)
    assert model.bounds_X_[0][0] > 0  # the feature keeps its median / MAD box
    # the release behind it: fit_bounds with scale_only_targets draws the same boxes
    (bx, by), _ = B.fit_bounds(
        [X, y], ["private", "private"], 1.0, "auto", np.random.default_rng(0),
        ("bounds_X", "bounds_y"), scale_only_targets=True,
    )  # fmt: skip
    np.testing.assert_array_equal(by[1], hi_y)
