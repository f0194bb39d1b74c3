"""The simulation bootstrap of KNGQuantileRegressor.conf_int (issue #15, small n * epsilon)."""

import warnings

import numpy as np
import pytest

from dpreg import KNGQuantileRegressor
from dpreg.accounting import BudgetAccountant
from dpreg.linear_model import _inference_quantile as inf

BETA = np.array([1.0, 2.0, -1.0])  # intercept first: the conditional median


def data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, BETA[0] + X @ BETA[1:] + rng.standard_normal(n)


def small(seed=0, n=200, eps=0.5, curvature=0.3, **kw):
    """A fit where the released check of the linearisation fails (n * epsilon = 100)."""
    X, y = data(n, seed)
    kw = dict(epsilon=eps, bounds_X=(-1, 1), bounds_y=(-7, 9), random_state=seed) | kw
    m = KNGQuantileRegressor(**kw).fit(X, y)
    m.release_curvature(X, y, curvature, random_state=seed + 1)
    return m, X, y


def ci(m, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return m.conf_int(**({"n_sim": 20} | kw))


def test_auto_simulates_where_the_linear_check_fails_and_warns():
    m, _, _ = small()
    assert inf.linear_law_poor(m.kng_release_, m.curvature_release_)
    with pytest.warns(UserWarning, match="simulate the exact sampler") as caught:
        a = m.conf_int(n_sim=20)
    # it names the off-centre case (session 12, kngnc): at tau = 1/2 the draws' own window
    # widens towards the box there (session 13); at other tau the sparsity's hull is only
    # measured at two levels (1/4, 0.9) and one n * epsilon (sessions 14-15)
    texts = [str(w.message) for w in caught]
    assert any("off-centre in its public bounds" in t and "widen" in t for t in texts), texts
    assert "two sparsities" not in inf._edge_note(0.5)
    assert "two sparsities" in inf._edge_note(0.25) and "under-cover" in inf._edge_note(0.25)
    assert m._inference_cache[1] == ("simulate", 20)
    m._inference_cache = None
    np.testing.assert_array_equal(a, ci(m, method="simulate"))
    assert not np.array_equal(a, ci(m, method="linear"))
    est = np.r_[m.intercept_, m.coef_]
    box = inf.box_ranges(m.kng_release_)
    assert np.all((box[:, 0] <= a[:, 0]) & (a[:, 0] <= a[:, 1]) & (a[:, 1] <= box[:, 1]))
    assert a.shape == (3, 2) and np.all(np.isfinite(est))


def test_auto_keeps_the_linear_intervals_where_the_check_passes():
    """Every fit whose check passes gets the linearised intervals bit for bit."""
    X, y = data(3000, 1)
    m = KNGQuantileRegressor(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-7, 9), random_state=0)
    m.fit(X, y).release_curvature(X, y, 0.5, random_state=1)
    assert not inf.linear_law_poor(m.kng_release_, m.curvature_release_)
    a = ci(m, n_boot=200)
    m._inference_cache = None
    np.testing.assert_array_equal(a, ci(m, n_boot=200, method="linear"))


def test_simulation_reads_released_quantities_only():
    """The interval is a function of the release: the data overwritten after the fit and
    the curvature release change nothing, the synthetic fits never see the data, and
    nothing is charged to the user's budget."""
    acc = BudgetAccountant(epsilon=10)
    m, X, y = small(accountant=acc)
    spent = acc.spent
    seen = []
    real_fit = KNGQuantileRegressor.fit

    def spy(self, X_, y_, sample_weight=None):
        seen.append((np.array(X_), np.array(y_)))
        return real_fit(self, X_, y_, sample_weight)

    X0, y0 = X.copy(), y.copy()
    X[:] = np.nan  # the private data are gone
    y[:] = np.nan
    KNGQuantileRegressor.fit = spy
    try:
        a = ci(m)
    finally:
        KNGQuantileRegressor.fit = real_fit
    assert len(seen) == 20 and acc.spent == spent
    for Xs, ys in seen:
        assert Xs.shape == X0.shape and not np.any(np.isin(ys, y0))
        assert np.all((Xs >= -1) & (Xs <= 1))
    # a fresh estimator holding only the released records gives the same interval
    fresh = KNGQuantileRegressor(**m.get_params())
    for name in ("kng_release_", "curvature_release_", "norm_", "n_features_in_"):
        setattr(fresh, name, getattr(m, name))
    fresh.sample_weighted_ = False
    np.testing.assert_array_equal(a, ci(fresh))


def test_simulation_is_reproducible_and_release_seeded():
    m1, _, _ = small(seed=3)
    m2, _, _ = small(seed=3)
    np.testing.assert_array_equal(ci(m1), ci(m2))  # the same release: the same interval
    m3, _, _ = small(seed=4)
    e1 = ci(m1) - np.r_[m1.intercept_, m1.coef_][:, None]
    e3 = ci(m3) - np.r_[m3.intercept_, m3.coef_][:, None]
    assert not np.allclose(e1, e3)  # another release: other synthetic draws


def test_synthetic_data_match_the_released_summaries():
    """The design's Gram matrix is the given one (up to sampling error) and the errors have
    density 1 / s at their tau-quantile, which is 0 around the line theta~."""
    m, _, _ = small(n=200)
    fit = m.kng_release_
    fit2 = inf.KNGRelease(**(vars(fit) | {"n": 40_000}))
    # a Gram matrix whose uniform-law design fits in the box (clipping would shrink it)
    G = 40_000 * np.array([[1.0, 0.05, 0.0], [0.05, 0.3, 0.02], [0.0, 0.02, 0.25]])
    X, y = inf.synthetic_data(fit2, G, 3.0, np.random.default_rng(0))
    W = np.column_stack([np.ones(len(X)), X])
    np.testing.assert_allclose(W.T @ W / 40_000, G / 40_000, atol=0.012)
    r = y - W @ fit.theta
    assert abs(np.mean(r <= 0) - 0.5) < 0.01
    assert abs(np.mean(np.abs(r) <= 0.1) / 0.2 - 1 / 3.0) < 0.02  # density 1 / s at 0


def test_simulation_refuses_released_bounds_and_auto_falls_back():
    X, y = data(400, 5)
    kw = dict(epsilon=0.5, bounds_X="private", bounds_y=(-7, 9), random_state=0)
    m = KNGQuantileRegressor(**kw).fit(X, y)
    m.release_curvature(X, y, 0.3, random_state=1)
    with pytest.raises(ValueError, match="public bounds"):
        ci(m, method="simulate")
    with pytest.raises(ValueError, match="method"):
        ci(m, method="exact")
    assert ci(m, n_boot=100).shape == (3, 2)  # auto: the linearised bootstrap
    assert m._inference_cache[1] == 100


def test_parameters_changed_after_fit_are_caught():
    m, _, _ = small()
    m.set_params(epsilon=2.0)  # the synthetic fits would not be the release's law
    with pytest.raises(RuntimeError, match="reproduce"):
        ci(m, method="simulate")


def _cell(reps, n_sim, seed, widen=1.0):
    """Coverage of the truth and mean widths at n = 1e3, epsilon = 0.25 (fit 0.15,
    curvature 0.1); ``widen`` multiplies the synthetic fits' epsilon (a control)."""
    inside, widths = [], []
    real = inf.simulation_params

    def params(estimator, fit):
        p = real(estimator, fit)
        p["epsilon"] = p["epsilon"] * widen
        return p

    inf.simulation_params = params
    same = inf.same_law
    if widen != 1.0:  # the control's synthetic law is deliberately not the release's
        inf.same_law = lambda sim, fit: True
    try:
        for i in range(reps):
            rng = np.random.default_rng([seed, i])
            X, y = data(1000, int(rng.integers(2**31)))
            m = KNGQuantileRegressor(
                epsilon=0.15, bounds_X=(-1, 1), bounds_y=(-7, 9), random_state=rng
            ).fit(X, y)
            m.release_curvature(X, y, 0.1, random_state=rng)
            c = ci(m, n_sim=n_sim, method="simulate")
            inside.append((c[:, 0] <= BETA) & (BETA <= c[:, 1]))
            widths.append(c[:, 1] - c[:, 0])
    finally:
        inf.simulation_params = real
        inf.same_law = same
    return np.mean(inside, axis=0), np.mean(widths, axis=0)


@pytest.mark.slow
def test_coverage_at_n_1e3_epsilon_quarter_with_control():
    """The cell the simulation is for (benchmarks/_inference_kng_sim.py measures it with
    more data sets): the intervals cover; a control whose synthetic fits run at 4x the
    release's epsilon (a mis-calibrated law: too little KNG noise) under-covers clearly on
    the same releases, so the check can fail."""
    cov, width = _cell(reps=20, n_sim=60, seed=21)
    assert cov.mean() >= 0.85, cov
    assert np.all(width < 16.0), width  # not the whole box (16 wide for the slopes)
    cov_bad, width_bad = _cell(reps=20, n_sim=60, seed=21, widen=4.0)
    assert cov_bad.mean() <= cov.mean() - 0.15, (cov_bad, cov)
    assert np.all(width_bad < width), (width_bad, width)


def _pivot_coverage(reps, b, core_sd_draws=0.2, seed=0):
    """Coverage and mean width of the shortest and the basic interval when the root
    theta~ - theta0 has a known law with a plateau (the KNG law at small n * epsilon: 94 %
    N(0, 0.2^2), 6 % uniform on [-10, 6]) and the draws come from that law with core sd
    ``core_sd_draws`` (0.2: the right law)."""
    from dpreg.linear_model._inference import basic_interval  # noqa: PLC0415

    rng = np.random.default_rng(seed)

    def roots(size, sd):
        core = rng.normal(0.0, sd, size)
        return np.where(rng.uniform(size=size) < 0.06, rng.uniform(-10, 6, size), core)

    cover = np.zeros(2)
    width = np.zeros(2)
    for _ in range(reps):
        est = np.array([2.0 + roots(1, 0.2)[0]])
        draws = est + roots(b, core_sd_draws)[:, None]
        intervals = [inf.shortest_interval(est, draws, 0.05), basic_interval(est, draws, 0.05)]
        for j, c in enumerate(intervals):
            cover[j] += c[0, 0] <= 2.0 <= c[0, 1]
            width[j] += c[0, 1] - c[0, 0]
    return cover / reps, width / reps


def test_shortest_interval_covers_a_plateau_law_and_is_narrower_than_basic():
    """2000 pivots of a known core-and-plateau law, 1000 draws each: the shortest interval
    covers 0.95 (+- 3 Monte Carlo sd) at a smaller mean width than the basic interval.
    Control: draws whose core is a quarter as wide (a mis-calibrated law) cover clearly
    less (about 0.80)."""
    cover, width = _pivot_coverage(2000, 1000)
    assert abs(cover[0] - 0.95) < 3 * np.sqrt(0.05 * 0.95 / 2000), cover
    assert width[0] < width[1], width
    bad, _ = _pivot_coverage(2000, 1000, core_sd_draws=0.05)
    assert bad[0] < cover[0] - 0.1, (bad, cover)


def test_shortest_interval_is_the_narrowest_window_and_conf_int_uses_it():
    """Among [q(p), q(p + 0.95)] (p in [0, 0.05]) of the roots it is the narrowest: never
    wider than the basic interval (p = 0.025), equal to it for a symmetric law (up to the
    draws' noise), much narrower for a core with a one-sided flat tail, and it holds the
    basic interval's share of the draws. conf_int and summary of a simulated fit return it
    for the reflected draws (test_median_regression_takes_the_draws_own_window,
    test_other_quantiles_take_the_mirrored_worlds_window)."""
    from dpreg.linear_model._inference import basic_interval  # noqa: PLC0415

    rng = np.random.default_rng(0)
    est = np.array([0.0, 1.0, 2.0])
    tail = np.where(rng.uniform(size=4000) < 0.04, rng.uniform(-10, 0, 4000), 0.0)
    roots = np.column_stack(
        [rng.standard_normal(4000), rng.exponential(size=4000), rng.normal(0, 0.1, 4000) + tail]
    )
    ci = inf.shortest_interval(est, est + roots, 0.05)
    basic = basic_interval(est, est + roots, 0.05)
    width, width_basic = ci[:, 1] - ci[:, 0], basic[:, 1] - basic[:, 0]
    assert np.all(width <= width_basic + 1e-12)
    assert abs(width[0] / width_basic[0] - 1) < 0.02  # symmetric: about the basic interval
    assert width[1] < 0.85 * width_basic[1]  # skewed: shorter
    assert width[2] < 0.2 * width_basic[2]  # 4 % flat tail on one side: left out
    inside = np.mean((est - roots >= ci[:, 0]) & (est - roots <= ci[:, 1]), axis=0)
    np.testing.assert_allclose(inside, 0.95, atol=0.002)


def test_other_quantiles_take_the_mirrored_worlds_window(monkeypatch):
    """At tau != 1/2 the simulation draws the mirrored world (the synthetic errors negated,
    the synthetic fits at level 1 - tau; docs/inference.md, "The direct orientation") at two
    sparsities, and conf_int / summary are the hull of the two worlds' own shortest windows
    ("The sparsity's span at tau != 1/2"); at tau = 1/2 nothing is mirrored (the world is its
    own mirror in law): the control, on the same code path."""
    calls, sparsities = [], []
    real_data, real_fit = inf.synthetic_data, KNGQuantileRegressor.fit

    def data(fit, gram, sparsity, rng, mirror=False):
        calls.append(("data", mirror))
        sparsities.append(sparsity)
        return real_data(fit, gram, sparsity, rng, mirror)

    def fit(self, X, y, *a, **k):
        calls.append(("quantile", self.quantile))
        return real_fit(self, X, y, *a, **k)

    monkeypatch.setattr(inf, "synthetic_data", data)
    monkeypatch.setattr(KNGQuantileRegressor, "fit", fit)
    m, _, _ = small(quantile=0.3)
    calls.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = m.conf_int(n_sim=20, method="simulate")
        est, worlds = m._inference_cache[2]
        summary = m.summary(n_sim=20, method="simulate")
        se = m.bse(n_sim=20, method="simulate")
    assert set(calls) == {("data", True), ("quantile", 0.7)}, set(calls)
    # two worlds (docs/inference.md, "The sparsity's span"): the released sparsity and a
    # quarter of it, 20 synthetic data sets each, seeded alike
    rel = m.curvature_release_
    s_hat = 2.0 * rel.radius / rel.level
    assert sparsities == [s_hat] * 20 + [s_hat / inf.SPARSITY_SPAN] * 20, sparsities[::20]
    assert worlds.shape == (2, 20, 3)
    box = inf.box_ranges(m.kng_release_)
    each = [inf.shortest_interval(est, 2.0 * est - d, 0.05, box) for d in worlds]
    hull = np.column_stack([np.minimum(each[0][:, 0], each[1][:, 0]),
                            np.maximum(each[0][:, 1], each[1][:, 1])])  # fmt: skip
    np.testing.assert_array_equal(a, hull)
    assert np.any(hull != each[0]) and np.any(hull != each[1])  # both ends count here
    np.testing.assert_array_equal(summary.as_dataframe()[["[0.025", "0.975]"]].to_numpy(), a)
    np.testing.assert_array_equal(se, worlds.std(axis=1, ddof=1).max(axis=0))
    np.testing.assert_array_equal(summary.as_dataframe()["std err"].to_numpy(), se)
    assert "two mirrored worlds" in str(summary)
    # the first world is simulate's own (the released sparsity), bit for bit
    _, one = inf.simulate(m, 20, random_state=inf.release_seed(*inf.released_values(
        m.kng_release_, rel)))  # fmt: skip
    np.testing.assert_array_equal(worlds[0], one)
    # the control: at tau = 1/2 the same code path does not mirror
    calls.clear()
    m2, _, _ = small()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m2.conf_int(n_sim=20, method="simulate")
    assert set(calls) == {("data", False), ("quantile", 0.5)}, set(calls)


def test_median_regression_takes_the_draws_own_window():
    """At tau = 1/2 (the world's law is symmetric) conf_int and summary of a simulated fit
    are the shortest window of the synthetic draws themselves, i.e. the pivot's interval of
    the draws reflected through the estimate; on this release (n * epsilon = 100, near the
    box) the two orientations differ, so the test can tell them apart (control: the
    pivot's interval of the unreflected draws is another interval). Off the box the window
    holds the share of the draws the pivot's interval holds of the roots."""
    m, _, _ = small()
    assert m.quantile == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = m.conf_int(n_sim=20, method="simulate")
        est, worlds = m._inference_cache[2]
        summary = m.summary(n_sim=20, method="simulate")
        se = m.bse(n_sim=20, method="simulate")
    assert worlds.shape[0] == 1  # tau = 1/2: one world, simulate's own draws
    draws = worlds[0]
    np.testing.assert_array_equal(se, draws.std(axis=0, ddof=1))
    box = inf.box_ranges(m.kng_release_)
    direct = inf.shortest_interval(est, 2.0 * est - draws, 0.05, box)
    np.testing.assert_array_equal(a, direct)
    np.testing.assert_array_equal(summary.as_dataframe()[["[0.025", "0.975]"]].to_numpy(), a)
    assert "shortest window of the draws" in str(summary)
    pivot = inf.shortest_interval(est, draws, 0.05, box)
    assert np.abs(pivot - direct).max() > 1.0  # the control: the orientations differ here
    # away from the box: the window [theta~ + l, theta~ + u] of a draw cloud around theta~
    rng = np.random.default_rng(1)
    est_ = np.array([0.0, 1.0])
    draws_ = est_ + np.column_stack([rng.exponential(size=4000), rng.standard_normal(4000)])
    ci_ = inf.simulated_interval(est_, draws_, 0.05, None)
    inside = np.mean((draws_ >= ci_[:, 0]) & (draws_ <= ci_[:, 1]), axis=0)
    np.testing.assert_allclose(inside, 0.95, atol=0.002)
    # a skewed cloud: the window lies on the draws' side, the pivot's on the reflected one
    assert ci_[0, 0] >= est_[0] - 1e-12 and inf.shortest_interval(est_, draws_, 0.05)[0, 1] <= 0


def test_two_worlds_label_their_progress_bars(monkeypatch):
    """At tau != 1/2 each world has its own bar, named so that the second does not look like
    a restart; at tau = 1/2 the one bar keeps its plain name."""
    import tqdm.auto

    seen = []
    real = tqdm.auto.tqdm

    def recording(*args, **kwargs):  # the fits' own bars (other names) are left out
        if str(kwargs.get("desc", "")).startswith("simulation bootstrap"):
            seen.append(kwargs["desc"])
        return real(*args, **kwargs)

    monkeypatch.setattr(tqdm.auto, "tqdm", recording)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        small(quantile=0.3)[0].conf_int(n_sim=20, method="simulate")
        assert seen == [
            "simulation bootstrap (world 1 of 2)",
            "simulation bootstrap (world 2 of 2)",
        ]
        seen.clear()
        small()[0].conf_int(n_sim=20, method="simulate")
        assert seen == ["simulation bootstrap"]


def test_linear_check_measures_the_move_against_the_levels_room():
    """The check compares the noise's level move with ``min(tau, 1 - tau)``: at tau = 0.9,
    n = 1e3, epsilon = 1 it now fires on releases that the level-free rule linearised (where
    session 15 measured coverage 0.36 / 0.54 / 0.51), and at tau = 1/2 it is the former rule
    (the control: the same answer as ``move > LINEAR_LIMIT`` on either side of it)."""
    from benchmarks import _inference_cells as cells_mod

    checked = 0
    for tau in (0.9, 0.5):
        releases = cells_mod.kng_releases(1000, 3, 4000, [1.0], full_fits=False, quantile=tau)
        for _, _, _, _, model, _ in releases:
            fit, rel = model.kng_release_, model.curvature_release_
            move = inf.level_move(fit, rel)
            if tau == 0.9:  # the session-15 cell: moves 0.07-0.11, room 0.2
                assert 0.2 * inf.LINEAR_LIMIT < move
                assert inf.linear_law_poor(fit, rel)
            else:
                assert inf.linear_law_poor(fit, rel) is (move > inf.LINEAR_LIMIT)
            checked += 1
    assert checked == 6
    # at tau = 1/2 both sides of the rule are taken somewhere: a small n * epsilon fires
    m, _, _ = small()
    assert inf.level_move(m.kng_release_, m.curvature_release_) > inf.LINEAR_LIMIT
    assert inf.linear_law_poor(m.kng_release_, m.curvature_release_)
