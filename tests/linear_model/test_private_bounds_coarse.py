"""The coarse pooled stage of the linear model's private feature bounds (issue #13 item 1).

dpreg._bounds.private_coarse_range_unchecked: ONE window (t, t + W] in u = asinh(x / s) over
the n g pooled values of g feature columns, t drawn from exp(-(eps / g) / 2 * #{pooled u_ij
outside the window}) over the public range; the released [s sinh t, s sinh(t + W)] is then
the candidate range of every feature release (second stage). Switched on by the public
coarse_rule inside fit_bounds(window_features=True) (FunctionalLinearRegression).

Each law below is derived here from the mechanism's definition, independently of the
sampler; only the CDF of a piecewise-constant density is shared (_piecewise_law).
"""

import numpy as np
import pytest
from _piecewise_law import piecewise_cdf
from scipy import stats

import dpreg._bounds as B
from dpreg import BudgetAccountant, FunctionalLinearRegression

SCALE = B.FIT_ASINH_SCALE
LO, HI = B.DEFAULT_CANDIDATE_RANGE


def _u(values):
    with np.errstate(over="ignore"):
        return np.arcsinh(np.asarray(values, dtype=float).ravel() / SCALE)


def _law(values, eps_exponent, width, lo, hi):
    """Law of a window's left end t on [asinh(lo / s), asinh(hi / s) - width]: piecewise
    constant between the points u_i and u_i - width, weight exp(-eps_exponent / 2 * #outside)
    (eps_exponent = the draw's budget divided by its sensitivity)."""
    u = _u(values)
    u_lo, top = np.arcsinh(lo / SCALE), np.arcsinh(hi / SCALE) - width
    edges = np.unique(np.clip(np.concatenate([[u_lo, top], u, u - width]), u_lo, top))
    mids = (edges[:-1] + edges[1:]) / 2
    inside = ((u[None, :] > mids[:, None]) & (u[None, :] <= mids[:, None] + width)).sum(axis=1)
    logw = -eps_exponent / 2 * (u.size - inside)
    log_z = np.logaddexp.reduce(logw + np.log(np.diff(edges)))
    return edges, logw, log_z


def _log_density(values, eps_exponent, width, lo, hi, t):
    edges, logw, log_z = _law(values, eps_exponent, width, lo, hi)
    k = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, len(logw) - 1)
    return logw[k] - log_z


def _cdf(values, eps_exponent, width, lo, hi):
    return piecewise_cdf(*_law(values, eps_exponent, width, lo, hi))


def _pooled():
    """Three columns a factor ~20 apart, and a stray value: 8 rows, 24 pooled values."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(5, 1, 8), rng.normal(100, 20, 8), rng.normal(2e3, 300, 8)])
    X[3, 1] = -40.0
    return X


def test_coarse_range_follows_its_exact_law_and_mis_calibrations_are_rejected():
    """KS test of the released range's left end against the law with exponent eps / g (one
    row moves g pooled values); the laws at 2 eps (control) and at eps / 2 are rejected, and
    so is the law that forgets the division by g."""
    X = _pooled()
    eps, g, width = 1.5, X.shape[1], B.COARSE_WIDTH
    rng = np.random.default_rng(1)
    out = np.array([B.private_coarse_range_unchecked(X, eps, (LO, HI), width, rng)
                    for _ in range(1500)])  # fmt: skip
    t = np.arcsinh(out[:, 0] / SCALE)
    np.testing.assert_allclose(np.arcsinh(out[:, 1] / SCALE), t + width, atol=1e-6)
    assert stats.kstest(t, _cdf(X, eps / g, width, LO, HI)).pvalue > 0.01
    assert stats.kstest(t, _cdf(X, 2 * eps / g, width, LO, HI)).pvalue < 1e-4  # control
    assert stats.kstest(t, _cdf(X, eps / (2 * g), width, LO, HI)).pvalue < 1e-4
    assert stats.kstest(t, _cdf(X, eps, width, LO, HI)).pvalue < 1e-4  # sensitivity 1


def test_two_stages_in_fit_bounds_follow_their_exact_joint_law(monkeypatch):
    """The whole coarse-to-fine release of fit_bounds: the coarse draw's left end follows its
    law (KS), and each feature window, given the released range, follows ITS law on that
    range with 1 - COARSE_FRACTION of the feature's budget: the conditional CDF at the draw
    (probability integral transform) is uniform. Controls: the conditional laws at 2 eps,
    at eps / 2 and on the default range instead of the released one are rejected."""
    X = _pooled()
    n, g = X.shape
    eps, share = 12.0, 0.5  # eps_b = 6, two per feature: 8 ranks a draw, both rules switch
    eps_unit = B.column_epsilons(eps * share, n, [False] * g)
    assert B.relative_rule(eps_unit, n, [False] * g)
    assert B.coarse_rule(eps_unit, n, [False] * g, [1] * g)
    eps_c = B.COARSE_FRACTION * eps_unit.sum()
    eps_j = (1 - B.COARSE_FRACTION) * eps_unit[0]
    ranges = []
    original = B.private_coarse_range_unchecked

    def spy(*args):
        ranges.append(original(*args))
        return ranges[-1]

    monkeypatch.setattr(B, "private_coarse_range_unchecked", spy)
    rng = np.random.default_rng(2)
    t_c, pit = [], {"ok": [], "2eps": [], "eps/2": [], "default range": []}
    width = B.WINDOW_WIDTH
    for _ in range(700):
        (bx,), _ = B.fit_bounds([X], ["private"], eps, share, rng, ("bounds_X",),
                                relative_features=True, window_features=True)  # fmt: skip
        lo_c, hi_c = ranges[-1]
        t_c.append(np.arcsinh(lo_c / SCALE))
        t = np.arcsinh(bx[0] / SCALE)
        for j in range(g):
            col = X[:, j]
            pit["ok"].append(_cdf(col, eps_j, width, lo_c, hi_c)(t[j]))
            pit["2eps"].append(_cdf(col, 2 * eps_j, width, lo_c, hi_c)(t[j]))
            pit["eps/2"].append(_cdf(col, eps_j / 2, width, lo_c, hi_c)(t[j]))
            pit["default range"].append(_cdf(col, eps_j, width, LO, HI)(t[j]))
    assert stats.kstest(t_c, _cdf(X, eps_c / g, B.COARSE_WIDTH, LO, HI)).pvalue > 0.01
    assert stats.kstest(pit["ok"], "uniform").pvalue > 0.01
    for control in ("2eps", "eps/2", "default range"):
        assert stats.kstest(pit[control], "uniform").pvalue < 1e-4, control


def _grid(values, width, lo, hi):
    u = _u(values)
    u_lo, top = np.arcsinh(lo / SCALE), np.arcsinh(hi / SCALE) - width
    pts = np.concatenate([u, u - width, [u_lo, 0.0, top]])
    return np.unique(np.clip(np.concatenate([pts, pts + 1e-9, pts - 1e-9]), u_lo, top))


def _neighbours(X, rng):
    """Replace-one neighbours: one whole row replaced (all g values at once)."""
    n, g = X.shape
    flat = X.ravel()
    hostile = [0.0, 1e12, -1e12, 1e-300, 1.5e308, -1.7e308]  # the last two: u = -/+inf
    for i in rng.choice(n, size=min(n, 3), replace=False):
        for _ in range(12):
            X2 = X.copy()
            X2[i] = rng.choice(np.concatenate([flat, -flat, hostile]), size=g)
            yield X2
        for value in hostile:
            X2 = X.copy()
            X2[i] = value
            yield X2


def test_coarse_density_ratio_adversarial_neighbours():
    """Exact output-density ratio of the pooled draw over replace-one neighbours (whole rows;
    signs, 0, +/-1e12, 1.5e308): never above eps, and the search gets above 0.9 eps (tight,
    clustered rows); the law that treats the pooled values as one record each (exponent eps
    instead of eps / g, the control) exceeds eps."""
    rng = np.random.default_rng(3)
    eps, width = 0.8, B.COARSE_WIDTH
    worst, worst_control = 0.0, 0.0
    for trial in range(60):
        g = int(rng.integers(2, 5))
        if trial % 2:  # spread values of either sign, rounded (ties)
            n = int(rng.integers(2, 8))
            X = np.round(rng.normal(size=(n, g)) * rng.choice([0.01, 1, 1e6]), 1)
        else:  # a cluster that one window holds: the normaliser moves too (tight case)
            n = int(rng.integers(10, 20))
            X = (
                rng.choice([-1, 1])
                * rng.choice([0.5, 100, 1e6])
                * np.exp(rng.uniform(0, 2.0, (n, g)))
            )
        grid = _grid(X, width, LO, HI)
        base = _log_density(X, eps / g, width, LO, HI, grid)
        base_control = _log_density(X, eps, width, LO, HI, grid)
        for X2 in _neighbours(X, rng):
            d = _log_density(X2, eps / g, width, LO, HI, grid) - base
            worst = max(worst, float(np.max(np.abs(d))))
            d = _log_density(X2, eps, width, LO, HI, grid) - base_control
            worst_control = max(worst_control, float(np.max(np.abs(d))))
    assert worst <= eps + 1e-9
    assert worst > 0.9 * eps
    assert worst_control > eps


def test_two_stage_joint_density_ratio_is_within_the_total():
    """The joint density of (coarse left end, one feature window's left end) over
    replace-one neighbours: log f_c(t_c) + log f_j(t_j | range(t_c)); never above
    eps_c + eps_j (sequential composition), and above eps_c alone (the second stage
    adds to it: a control that forgets it would be caught)."""
    rng = np.random.default_rng(4)
    eps_c, eps_j, wc, w = 0.3, 0.5, B.COARSE_WIDTH, B.WINDOW_WIDTH
    worst = 0.0
    for _ in range(12):
        n, g = int(rng.integers(8, 14)), 2
        X = 50.0 * np.exp(rng.uniform(0, 0.3, (n, g)))
        t_cs = _grid(X, wc, LO, HI)
        t_cs = t_cs[:: max(1, t_cs.size // 12)]
        for X2 in _neighbours(X, rng):
            d_c = _log_density(X2, eps_c / g, wc, LO, HI, t_cs) - _log_density(
                X, eps_c / g, wc, LO, HI, t_cs
            )
            for k, t_c in enumerate(t_cs):
                lo, hi = SCALE * np.sinh(t_c), SCALE * np.sinh(t_c + wc)
                grid = _grid(X[:, 0], w, lo, hi)
                d_j = _log_density(X2[:, 0], eps_j, w, lo, hi, grid) - _log_density(
                    X[:, 0], eps_j, w, lo, hi, grid
                )
                worst = max(worst, float(np.max(np.abs(d_c[k] + d_j))))
    assert worst <= eps_c + eps_j + 1e-9
    assert worst > eps_c


def test_fit_bounds_coarse_budget_is_exact(monkeypatch):
    """Where coarse_rule switches: ONE pooled window over the n p feature values first, with
    COARSE_FRACTION of the features' budget divided by p, then one window per feature with
    the rest, then the target's two draws unchanged; the parts add up to the bounds' budget
    and the model gets the rest."""
    rng = np.random.default_rng(5)
    n = 300
    X = np.column_stack([rng.normal(120, 15, n), rng.lognormal(3, 0.4, n), rng.normal(50, 9, n)])
    y = rng.normal(100, 30, n)
    calls = []
    quantile, window = B.private_quantile_draws, B.window_draw
    monkeypatch.setattr(
        B,
        "private_quantile_draws",
        lambda v, lv, e, *a: (
            calls.append(("median", np.size(v), float(e) * len(lv))) or quantile(v, lv, e, *a)
        ),
    )
    monkeypatch.setattr(B, "window_draw", lambda v, e, *a: (
        calls.append(("window", np.size(v), float(e))) or window(v, e, *a)))  # fmt: skip
    (bx, by), left = B.fit_bounds([X, y], ["private", "private"], 1.0, "auto",
                                  np.random.default_rng(0), ("bounds_X", "bounds_y"),
                                  relative_features=True, window_features=True)  # fmt: skip
    eb, eps_model = B.split_budget("auto", 1.0, n, 4)
    assert left == eps_model
    units = B.column_epsilons(eb, n, [False] * 3 + [True])
    assert B.coarse_rule(units, n, [False] * 3 + [True], [1] * 4)
    assert [c[:2] for c in calls] == [("window", 3 * n)] + [("window", n)] * 3 + [("median", n)] * 2
    spent = 3 * calls[0][2] + sum(c[2] for c in calls[1:])  # the pooled draw: budget / 3
    assert spent <= eb and spent == pytest.approx(eb, rel=1e-12)
    assert 3 * calls[0][2] == pytest.approx(B.COARSE_FRACTION * units[:3].sum(), rel=1e-12)
    np.testing.assert_allclose([c[2] for c in calls[1:4]],
                               (1 - B.COARSE_FRACTION) * units[:3], rtol=1e-12)  # fmt: skip
    f = B.TARGET_MEDIAN_FRACTION  # the target's median / MAD split
    np.testing.assert_allclose([c[2] for c in calls[4:]], [f * units[3], (1 - f) * units[3]],
                               rtol=1e-12)  # fmt: skip


def test_coarse_rule_public_switch():
    """Only where each feature's median / MAD draw would get fewer than coarse_threshold()
    budget-ranks (37.5), with two or more single-column feature units; draw for draw the old
    release elsewhere (large n * eps, groups)."""
    assert B.coarse_threshold() == pytest.approx(4 * np.log(52.04 / 8) / 0.2, rel=1e-3)
    target = [False] * 3 + [True]
    n = 300
    below = np.array([0.24, 0.24, 0.24, 0.3])  # 36 ranks a draw
    above = np.array([0.26, 0.26, 0.26, 0.3])  # 39 ranks
    assert B.coarse_rule(below, n, target, [1] * 4)
    assert not B.coarse_rule(above, n, target, [1] * 4)
    assert not B.coarse_rule(below, n, target, [2, 1, 1, 1])  # a group
    assert not B.coarse_rule(below[[0, 3]], n, [False, True], [1, 1])  # one feature
    rng = np.random.default_rng(6)
    X = rng.normal(40, 5, size=(200, 3))
    for kwargs in ({"groups": [np.array([0, 1, 2])]}, {}):  # grouped: no coarse stage
        a = B.fit_bounds([X], ["private"], 60.0 if not kwargs else 0.3, 0.5,
                         np.random.default_rng(0), ("bounds_X",), relative_features=True,
                         window_features=True, **kwargs)  # fmt: skip
        b = B.fit_bounds([X], ["private"], 60.0 if not kwargs else 0.3, 0.5,
                         np.random.default_rng(0), ("bounds_X",), relative_features=True,
                         window_features=False, **kwargs)  # fmt: skip
        if not kwargs:  # large n * eps: median / MAD boxes in both, bit-identical
            np.testing.assert_array_equal(a[0][0][0], b[0][0][0])
            np.testing.assert_array_equal(a[0][0][1], b[0][0][1])
        assert a[1] == b[1]


def test_functional_coarse_path_one_ledger_entry_and_finite():
    """FunctionalLinearRegression at small n * eps takes the coarse path: one ledger entry
    of the whole epsilon, finite boxes of positive width, finite predictions; columns far
    apart in scale (one outside the released range) only get clipped."""
    rng = np.random.default_rng(7)
    n = 80
    X = np.column_stack([rng.normal(5, 1, n), rng.normal(1e7, 1e6, n), rng.integers(0, 2, n)])
    y = X[:, 0] + rng.normal(0, 1, n)
    for seed in range(3):
        acc = BudgetAccountant(epsilon=5.0)
        est = FunctionalLinearRegression(epsilon=1.0, bounds_X="private", bounds_y="private",
                                         accountant=acc, random_state=seed).fit(X, y)  # fmt: skip
        assert acc.ledger == [(1.0, 0.0)]
        lo, hi = est.bounds_X_
        assert np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)
        assert np.all(np.isfinite(est.predict(X)))
