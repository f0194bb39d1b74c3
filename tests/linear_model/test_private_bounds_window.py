"""The one-draw window box of the linear model's under-funded features (issue #13 item 1).

dpreg._bounds.private_window_box_unchecked: the left end t of a window (t, t + w] in
u = asinh(x / s), drawn from exp(-eps / 2 * #{u_i outside the window}) over the public range
(the exponential mechanism with the utility "values in the window"), box [s sinh t,
s sinh(t + w)]; chosen by the public relative_rule inside
fit_bounds(relative_features=True, window_features=True) (FunctionalLinearRegression).
"""

import numpy as np
import pytest
from _piecewise_law import piecewise_cdf
from scipy import stats

import dpreg._bounds as B
from dpreg import BudgetAccountant, FunctionalLinearRegression

SCALE = B.FIT_ASINH_SCALE
LO, HI = B.DEFAULT_CANDIDATE_RANGE
U_LO, U_HI = np.arcsinh(LO / SCALE), np.arcsinh(HI / SCALE)


def _outside(values, t, width):
    """#{i : u_i not in (t, t + width]}, counted directly (independent of the sampler)."""
    with np.errstate(over="ignore"):
        u = np.arcsinh(np.asarray(values, dtype=float) / SCALE)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    inside = (u[None, :] > t[:, None]) & (u[None, :] <= t[:, None] + width)
    return u.size - inside.sum(axis=1)


def _law(values, eps, width):
    """The exact law of t on [U_LO, U_HI - width], derived here: piecewise constant between
    the points u_i and u_i - width, weight exp(-eps / 2 * outside) on each piece."""
    with np.errstate(over="ignore"):
        u = np.arcsinh(np.asarray(values, dtype=float) / SCALE)
    top = U_HI - width
    edges = np.unique(np.clip(np.concatenate([[U_LO, top], u, u - width]), U_LO, top))
    mids = (edges[:-1] + edges[1:]) / 2
    logw = -eps / 2 * _outside(values, mids, width)
    log_z = np.logaddexp.reduce(logw + np.log(np.diff(edges)))
    return edges, logw, log_z


def _log_density(values, eps, width, t):
    edges, logw, log_z = _law(values, eps, width)
    k = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, len(logw) - 1)
    return logw[k] - log_z


def _cdf(values, eps, width):
    edges, logw, log_z = _law(values, eps, width)
    return piecewise_cdf(edges, logw, log_z)


def test_window_gradient_is_the_count_outside_the_window():
    """The KNG's gradient is #{u_i outside (t, t + w]} at every t (a sign or offset error in
    the step construction would fail this)."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(50, 8, 40), [-3.0, 0.0, 1e6, 2.0]])
    mech = B.window_mechanism(x, 1.0, LO, HI, 0.4, SCALE)
    u = np.arcsinh(x / SCALE)
    ts = np.concatenate([rng.uniform(U_LO, U_HI - 0.4, 200), u + 1e-7, u - 0.4 - 1e-7])
    got = mech.gradient(ts[:, None])[:, 0]
    np.testing.assert_array_equal(got, _outside(x, ts, 0.4))


def test_window_box_follows_its_exact_law_and_mis_calibrations_are_rejected():
    """KS test of the released window's left end against the law derived above with the
    column's whole budget; the laws at 2 eps (control) and at eps / 2 are rejected."""
    x = np.array([120.0, 95.0, 130.0, 101.0, 250.0, 88.0, 110.0, 99.0, 140.0, 0.5, 105.0])
    eps, width = 2.0, B.WINDOW_WIDTH
    rng = np.random.default_rng(0)
    boxes = [B.private_window_box_unchecked(x[:, None], eps, (LO, HI), width, rng)
             for _ in range(1500)]  # fmt: skip
    lo = np.array([b[0][0] for b in boxes])
    hi = np.array([b[1][0] for b in boxes])
    t = np.arcsinh(lo / SCALE)
    np.testing.assert_allclose(np.arcsinh(hi / SCALE), t + width, atol=1e-6)
    assert stats.kstest(t, _cdf(x, eps, width)).pvalue > 0.01
    assert stats.kstest(t, _cdf(x, 2 * eps, width)).pvalue < 1e-4  # mis-calibrated control
    assert stats.kstest(t, _cdf(x, eps / 2, width)).pvalue < 1e-4


def test_window_box_density_ratio_adversarial_neighbours():
    """Exact output-density ratio over replace-one neighbours (signs, 0, +/-1e12, values
    beyond the candidate range, values at a window's edge): never above eps, and the search
    gets above 0.9 eps (tight); a two-record change (control) exceeds eps."""
    rng = np.random.default_rng(1)
    eps, width = 0.8, B.WINDOW_WIDTH
    worst = 0.0
    for trial in range(150):
        if trial % 2:  # spread, rounded (ties) values of either sign
            n = int(rng.integers(2, 12))
            x = np.round(rng.normal(size=n) * rng.choice([0.01, 1, 1e6]), int(rng.integers(0, 3)))
        else:  # a cluster that one window holds: the normaliser moves too (tight case)
            n = int(rng.integers(12, 25))
            x = rng.choice([-1, 1]) * rng.choice([0.5, 100, 1e6]) * np.exp(rng.uniform(0, 0.3, n))
        u = np.arcsinh(x / SCALE)
        pts = np.concatenate([u, u - width, [U_LO, 0.0, U_HI - width]])
        grid = np.unique(np.clip(np.concatenate([pts, pts + 1e-9, pts - 1e-9]), U_LO,
                                 U_HI - width))  # fmt: skip
        base = _log_density(x, eps, width, grid)
        edge = SCALE * np.sinh(u + width)  # a value exactly at another window's right end
        hostile = [0.0, 1e12, -1e12, 1e-300, 1.5e308, -1.7e308]  # the last two: u = -/+inf
        news = np.concatenate([x, -x, edge, hostile, rng.normal(size=4) * 100])
        for i in rng.choice(n, size=min(n, 3), replace=False):
            for new in news:
                x2 = x.copy()
                x2[i] = new
                worst = max(worst, np.max(np.abs(_log_density(x2, eps, width, grid) - base)))
    assert worst <= eps + 1e-9
    assert worst > 0.9 * eps
    x = np.array([10.0, 10.5, 11.0, 11.5])
    grid = np.linspace(U_LO, U_HI - width, 2001)
    x2 = np.array([1e8, 1e8, 11.0, 11.5])
    gap = np.max(np.abs(_log_density(x2, eps, width, grid) - _log_density(x, eps, width, grid)))
    assert gap > eps


def _spy(monkeypatch):
    """Record the budget of every draw: quantile draws and window draws."""
    calls = []
    quantile, window = B.private_quantile_draws, B.window_draw

    def spy_q(values, levels, eps_each, *args):
        calls.append(("median", np.asarray(values).size, float(eps_each) * len(levels)))
        return quantile(values, levels, eps_each, *args)

    def spy_w(values, eps, *args):
        calls.append(("window", np.asarray(values).size, float(eps)))
        return window(values, eps, *args)

    monkeypatch.setattr(B, "private_quantile_draws", spy_q)
    monkeypatch.setattr(B, "window_draw", spy_w)
    return calls


def _data(n=300, seed=2):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(120, 15, n), rng.lognormal(3, 0.4, n), rng.normal(50, 9, n)])
    return X, rng.normal(100, 30, n)


def test_fit_bounds_window_budget_is_exact(monkeypatch):
    """At small n * eps the features get one window draw each with the budget the relative
    box would get, the target its two median / MAD draws; the budgets add up to the bounds'
    share exactly and the rest goes to the model. The boxes have the public ratio e^w."""
    X, y = _data()
    n = len(y)
    monkeypatch.setattr(B, "coarse_rule", lambda *a: False)  # test_private_bounds_coarse.py
    calls = _spy(monkeypatch)
    (bx, by), left = B.fit_bounds([X, y], ["private", "private"], 1.0, "auto",
                                  np.random.default_rng(0), ("bounds_X", "bounds_y"),
                                  relative_features=True, window_features=True)  # fmt: skip
    eb, eps_model = B.split_budget("auto", 1.0, n, 4)
    assert left == eps_model
    assert [c[0] for c in calls] == ["window"] * 3 + ["median"] * 2
    assert sum(c[2] for c in calls) == pytest.approx(eb, rel=1e-12)
    relative = B.column_epsilons(eb, n, [False] * 3 + [True])
    np.testing.assert_allclose([c[2] for c in calls[:3]], relative[:3], rtol=1e-12)
    ratio = np.arcsinh(bx[1] / B.FIT_ASINH_SCALE) - np.arcsinh(bx[0] / B.FIT_ASINH_SCALE)
    np.testing.assert_allclose(ratio, B.WINDOW_WIDTH, atol=1e-6)
    assert np.all(bx[1] > bx[0])


def test_fit_bounds_window_only_where_the_relative_rule_switches(monkeypatch):
    """Where relative_rule says no (large n * eps) the release is the median / MAD one, draw
    for draw (bit-identical); where it says yes the target's release is unchanged."""
    X, y = _data()
    monkeypatch.setattr(B, "coarse_rule", lambda *a: False)  # test_private_bounds_coarse.py
    args = (["private", "private"], "auto")
    names = ("bounds_X", "bounds_y")
    for eps in (60.0, 1.0):
        a = B.fit_bounds([X, y], args[0], eps, args[1], np.random.default_rng(0), names,
                         relative_features=True, window_features=True)  # fmt: skip
        b = B.fit_bounds([X, y], args[0], eps, args[1], np.random.default_rng(0), names,
                         relative_features=True)  # fmt: skip
        if eps == 60.0:
            np.testing.assert_array_equal(a[0][0][0], b[0][0][0])
            np.testing.assert_array_equal(a[0][0][1], b[0][0][1])
        else:
            assert not np.array_equal(a[0][0][0], b[0][0][0])
        np.testing.assert_array_equal(a[0][1][0], b[0][1][0])  # the target's box
        assert a[1] == b[1]


def test_fit_bounds_window_with_groups_pools_the_unit(monkeypatch):
    """A group is one unit: one pooled window draw (n g values, budget / g) for its box."""
    rng = np.random.default_rng(4)
    X = rng.normal(40, 5, size=(200, 3))
    calls = _spy(monkeypatch)
    (bx,), _ = B.fit_bounds([X], ["private"], 0.3, 0.5, np.random.default_rng(0),
                            ("bounds_X",), groups=[np.array([0, 1])],
                            relative_features=True, window_features=True)  # fmt: skip
    assert bx[0][0] == bx[0][1] and bx[1][0] == bx[1][1]
    assert np.all(bx[1] > bx[0])
    units = B.column_epsilons(0.15, 200, [False, False])
    assert [(c[0], c[1]) for c in calls] == [("window", 400), ("window", 200)]
    assert calls[0][2] == pytest.approx(units[0] / 2, rel=1e-12)
    assert calls[1][2] == pytest.approx(units[1], rel=1e-12)


def test_window_on_a_range_shorter_than_the_width_draws_nothing():
    """Public inputs only: a candidate range no longer than the window is the box itself."""
    lo, hi = B.private_window_box_unchecked(np.ones((5, 1)), 1.0, (1.0, 1.001), 0.4,
                                            np.random.default_rng(0))  # fmt: skip
    assert lo[0] == 1.0 and hi[0] == 1.001


def test_functional_window_path_never_raises_after_spending(monkeypatch):
    """Zero, constant, binary, centred, +/-1e12 and 1.5e308 columns at small n*eps (the window
    path with its coarse stage, checked with a spy): one ledger entry of the whole epsilon,
    finite boxes of positive width, finite predictions."""
    rng = np.random.default_rng(3)
    n = 60
    binary = rng.integers(0, 2, n).astype(float)
    X = np.column_stack(
        [
            np.zeros(n),
            np.full(n, -4.0),
            binary,
            np.where(rng.random(n) < 0.5, 1e12, -1e12),
            rng.normal(0, 5, n),
            np.where(rng.random(n) < 0.2, 1.5e308, 3.0),  # x / s overflows: u = inf
        ]  # fmt: skip
    )
    y = rng.normal(10, 3, n)
    calls = _spy(monkeypatch)
    for seed in range(4):
        calls.clear()
        acc = BudgetAccountant(epsilon=5.0)
        est = FunctionalLinearRegression(epsilon=0.5, bounds_X="private", bounds_y="private",
                                         accountant=acc, random_state=seed)  # fmt: skip
        est.fit(X, y)
        # six feature windows after ONE coarse pooled window over the 6 n values
        assert [c[0] for c in calls].count("window") == 7
        assert calls[0][:2] == ("window", 6 * n)
        assert acc.ledger == [(0.5, 0.0)]
        lo, hi = est.bounds_X_
        assert np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(hi > lo)
        assert np.all(np.isfinite(est.predict(X)))
