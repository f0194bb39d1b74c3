"""Private inference for KNGQuantileRegressor (issue #15)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpreg import KNGQuantileRegressor
from dpreg.accounting import BudgetAccountant
from dpreg.exceptions import BudgetExceededError
from dpreg.linear_model import _inference_logistic as inf_logit
from dpreg.linear_model import _inference_quantile as inf
from dpreg.linear_model import _quantile_core

BETA = np.array([1.0, 2.0, -1.0])  # intercept first: the conditional median


def data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, BETA[0] + X @ BETA[1:] + rng.standard_normal(n)


def model(**kw):
    kw = dict(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-7, 9), random_state=0) | kw
    return KNGQuantileRegressor(**kw)


def test_shapes_dataframe_and_summary():
    X, y = data(3000, 0)
    m = model().fit(X, y).release_curvature(X, y, 0.5, random_state=1)
    ci = m.conf_int(n_boot=200)
    assert ci.shape == (3, 2) and np.all(ci[:, 0] < ci[:, 1])
    est = np.r_[m.intercept_, m.coef_]
    assert np.all((ci[:, 0] <= est) & (est <= ci[:, 1]))
    assert m.bse(n_boot=200).shape == (3,)
    Xf = pd.DataFrame(X, columns=["a", "b"])
    m.fit(Xf, y).release_curvature(Xf, y, 0.5, random_state=1)
    assert list(m.conf_int(n_boot=200).index) == ["const", "a", "b"]
    assert list(m.bse(n_boot=200).index) == ["const", "a", "b"]
    table = m.summary(n_boot=200)
    df = table.as_dataframe()
    assert list(df.columns) == ["coef", "std err", "[0.025", "0.975]"]
    np.testing.assert_allclose(df["coef"], np.r_[m.intercept_, m.coef_])
    text = str(table)
    for word in ("n: 3000", "epsilon spent: 1.5", "curvature 0.5", "K-norm gradient"):
        assert word in text
    m2 = model(fit_intercept=False, quantile=0.7).fit(X, y).release_curvature(X, y, 0.5)
    assert m2.conf_int(n_boot=200).shape == (2, 2)


def test_release_is_charged_once_and_intervals_are_free():
    X, y = data(2000, 1)
    acc = BudgetAccountant(epsilon=10)
    m = model(accountant=acc).fit(X, y)
    m.release_curvature(X, y, 0.25)
    assert acc.spent == (1.25, 0.0) and len(acc) == 2
    a = m.conf_int(n_boot=100)
    m.bse(n_boot=100)
    str(m.summary(n_boot=100))
    assert acc.spent == (1.25, 0.0)
    np.testing.assert_array_equal(a, m.conf_int(n_boot=100))  # deterministic


class _Boom(Exception):
    pass


def _explode(*_, **__):
    raise _Boom


@pytest.mark.parametrize(
    "bad, match",
    [
        ("epsilon0", "epsilon"),
        ("epsilon_nan", "epsilon"),
        ("X_nan", "NaN|infinity"),
        ("y_inf", "NaN|infinity"),
        ("X_shape", "features"),
        ("n_rows", "rows"),
    ],
)
def test_bad_input_raises_before_spend(bad, match, monkeypatch):
    X, y = data(500, 2)
    acc = BudgetAccountant(epsilon=10)
    m = model(accountant=acc).fit(X, y)
    spent = acc.spent
    Xb, yb, eps = X.copy(), y.copy(), 0.1
    if bad == "epsilon0":
        eps = 0.0
    if bad == "epsilon_nan":
        eps = float("nan")
    if bad == "X_nan":
        Xb[3, 0] = np.nan
    if bad == "y_inf":
        yb[7] = np.inf
    if bad == "X_shape":
        Xb = np.column_stack([X, X[:, 0]])
    if bad == "n_rows":
        Xb, yb = X[:-1], y[:-1]
    # nothing may touch the data before the spend: make the data path explode
    monkeypatch.setattr(_quantile_core, "scale_features", _explode)
    with pytest.raises(ValueError, match=match):
        m.release_curvature(Xb, yb, eps)
    assert acc.spent == spent


def test_spend_happens_before_computation(monkeypatch):
    X, y = data(500, 3)
    acc = BudgetAccountant(epsilon=10)
    m = model(accountant=acc).fit(X, y)
    monkeypatch.setattr(_quantile_core, "scale_features", _explode)
    with pytest.raises(_Boom):
        m.release_curvature(X, y, 0.5)
    assert acc.spent == (1.5, 0.0)  # reserved before the data were used


def test_budget_refused_before_data():
    X, y = data(500, 4)
    acc = BudgetAccountant(epsilon=1.05)
    m = model(accountant=acc).fit(X, y)
    with pytest.raises(BudgetExceededError):
        m.release_curvature(X, y, 0.1)
    assert acc.spent == (1.0, 0.0)


def test_refusals():
    X, y = data(600, 5)
    with pytest.raises(ValueError, match="release_curvature"):
        model().fit(X, y).conf_int()
    m = model().fit(X, y).release_curvature(X, y, 0.1)
    m.fit(X, y)  # a new fit makes the old release stale
    with pytest.raises(ValueError, match="release_curvature"):
        m.bse()
    m.release_curvature(X, y, 0.1)
    with pytest.raises(ValueError, match="alpha"):
        m.conf_int(alpha=1.5)
    with pytest.raises(ValueError, match="n_boot"):
        m.conf_int(n_boot=5)


def test_small_n_eps_warns_and_is_wide():
    X, y = data(300, 6)
    m = model(epsilon=0.2).fit(X, y).release_curvature(X, y, 0.05, random_state=0)
    # "auto" simulates here (few fits), and the warning names the simulation's error law
    with pytest.warns(UserWarning, match="Small n.*normal errors.*far from normal"):
        ci = m.conf_int(n_boot=300, n_sim=40)
    assert m._inference_cache[1] == ("simulate", 40)
    assert np.all(ci[:, 1] - ci[:, 0] > 1.0)  # never falsely narrow: the data say little
    # the intervals stay inside the public parameter box (the model's domain)
    np.testing.assert_array_less(inf.box_ranges(m.kng_release_)[:, 0] - 1e-9, ci[:, 0])


def test_large_n_eps_matches_the_asymptotic_standard_errors():
    """With negligible privacy noise the standard errors are Koenker's
    s sqrt(tau (1 - tau) diag(G^-1)), s = 1 / phi(0) for normal errors."""
    X, y = data(30000, 7)
    m = model(epsilon=200.0).fit(X, y).release_curvature(X, y, 200.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no small-n warning here
        se = m.bse(n_boot=4000)
    W = np.column_stack([np.ones(len(X)), X])
    sparsity = 1 / stats.norm.pdf(0)
    expect = sparsity * 0.5 * np.sqrt(np.diag(np.linalg.inv(W.T @ W)))
    np.testing.assert_allclose(se, expect, rtol=0.12)


def test_gram_release_is_the_stated_linf_knorm_law():
    """The released Gram entries minus the true ones (encoded) have the density
    exp(-|u|_inf eps/sens) on the five entries other than the public corner G[0, 0] = n,
    which is exact: their linf norm is Gamma(5, sens/eps)."""
    X, y = data(400, 8)
    m = model().fit(X, y)
    W = np.column_stack([np.ones(len(X)), X])
    G = W.T @ W
    eps = 0.6
    radii = []
    for seed in range(300):
        rel = m.release_curvature(X, y, eps, random_state=seed).curvature_release_
        assert rel.gram.hessian[0, 0] == len(X)  # public, put in without noise
        assert rel.gram.entry_sd[0, 0] == 0.0
        u, _, _ = inf_logit._encode(rel.gram.hessian - G)
        radii.append(np.max(np.abs(u)))
    scale = rel.gram.sensitivity / rel.gram.epsilon
    ks = stats.kstest(radii, stats.gamma(5, scale=scale).cdf)
    assert ks.pvalue > 1e-3
    assert rel.gram.sensitivity == pytest.approx(1.0, rel=1e-6)
    assert rel.gram.epsilon == pytest.approx(inf.GRAM_SHARE * eps)
    # the stated per-entry sd is that of a linf coordinate in dimension 5
    assert rel.gram.entry_sd[1, 1] == pytest.approx(np.sqrt(6 * 7 / 3) * scale)
    # controls: the law at a 20% smaller scale, and the former six-entry law, are rejected
    ks_bad = stats.kstest(radii, stats.gamma(5, scale=0.8 / rel.gram.epsilon).cdf)
    assert ks_bad.pvalue < 1e-3
    assert stats.kstest(radii, stats.gamma(6, scale=scale).cdf).pvalue < 1e-3


def test_gram_release_without_intercept_noises_every_entry():
    """Without an intercept G[0, 0] = sum z_1^2 depends on the data: it must be noised, so
    the release is the linf law over every entry (three with two features: Gamma(3))."""
    X, y = data(400, 8)
    m = model(fit_intercept=False).fit(X, y)
    G = X.T @ X
    radii, corner_moved = [], 0
    for seed in range(200):
        rel = m.release_curvature(X, y, 0.6, random_state=seed).curvature_release_
        assert not rel.gram.public_corner
        corner_moved += rel.gram.hessian[0, 0] != G[0, 0]
        u, _, _ = inf_logit._encode(rel.gram.hessian - G)
        radii.append(np.max(np.abs(u)))
    assert corner_moved == 200
    scale = rel.gram.sensitivity / rel.gram.epsilon
    assert stats.kstest(radii, stats.gamma(3, scale=scale).cdf).pvalue > 1e-3


def test_replace_one_changes_each_encoded_gram_entry_by_at_most_one():
    """Adversarial search over replaced design rows: the sensitivity 1 holds and is reached.
    With an intercept the corner's change is exactly 0 (why it is public and not released),
    without one it is not (so it must be released)."""
    rng = np.random.default_rng(9)
    worst, corner_with, corner_without = 0.0, 0.0, 0.0
    for _ in range(3000):
        pick = lambda: rng.choice([-1.0, 1.0, rng.uniform(-1, 1)], size=3)  # noqa: E731
        z, z2 = pick(), pick()
        for w, w2 in ((np.r_[1.0, z], np.r_[1.0, z2]), (z, z2)):
            u, _, _ = inf_logit._encode(np.outer(w, w) - np.outer(w2, w2))
            worst = max(worst, np.max(np.abs(u)))
            if w.size == 4:
                corner_with = max(corner_with, abs(u[0]))
            else:
                corner_without = max(corner_without, abs(u[0]))
    assert worst <= 1.0 + 1e-15
    assert worst >= 1.0 - 1e-12  # the bound is attained
    assert corner_with == 0.0
    assert corner_without > 0.99  # z_1 = +-1 against z_1 near 0


def test_hall_sheather_bandwidth():
    # n = 1000, tau = 0.5: 1000^(-1/3) 1.96^(2/3) (1.5 phi(0)^2)^(1/3)
    assert inf.hall_sheather(1000, 0.5) == pytest.approx(0.0969, abs=5e-4)
    level, h, k = inf.window_level(10_000, 0.5, 0.5)
    half = h + inf.RANK_WIDEN * 4e-4  # RANK_WIDEN mean rank errors (k / n) past the bandwidth
    assert k == 4.0 and level == pytest.approx(2 * half)
    level, _, _ = inf.window_level(100, 0.9, 0.01)  # huge rank noise: capped
    assert level == pytest.approx(0.15)  # 1.5 min(tau, 1 - tau): each half inside its side


def _abs_residuals(m, X, y):
    """The values the sparsity release ranks: |clip(y - W theta~)| (bounds_X = (-1, 1), so the
    scaled design is X itself), and the public reach of the clipped values."""
    fit = m.kng_release_
    lo, hi, measure = inf._residual_range(fit)
    W = np.column_stack([np.ones(len(X)), X])
    assert measure == "uniform"
    return np.abs(np.clip(y - W @ fit.theta, lo, hi)), max(abs(lo), abs(hi))


def _radius_log_density(values, level, eps, reach, grid):
    """Log density (uniform base measure on [0, reach]) of the exact private level-quantile
    of ``values`` at ``eps``: exp(-eps / 2 |#{v <= t} - level n|), normalised exactly over
    the pieces between the sorted values. Written here from the stated law, not the code."""
    v = np.sort(values)
    n = v.size
    edges = np.r_[0.0, v[v < reach], reach]
    counts = np.arange(edges.size - 1) + np.sum(v <= 0.0)  # count on [edges[j], edges[j+1])
    logw = -0.5 * eps * np.abs(counts - level * n)
    top = logw.max()
    log_z = top + np.log(np.sum(np.diff(edges) * np.exp(logw - top)))
    at = np.searchsorted(v, grid, side="right")  # #{v <= t}
    return -0.5 * eps * np.abs(at - level * n) - log_z, edges, logw - log_z


def test_sparsity_release_is_the_stated_quantile_law():
    """The released radius is one exact draw of the private L-quantile of the absolute
    residuals at epsilon (1 - GRAM_SHARE) epsilon: KS against its exact CDF, and the laws at
    twice and half that epsilon (the controls: a release calibrated for the wrong
    sensitivity) are rejected. One number per release, so 500 draws tell apart a factor 2
    (max CDF gap ~0.12 of Laplace rank errors), not 1.25 (p ~0.3 measured)."""
    X, y = data(400, 18)
    m = model().fit(X, y)
    values, reach = _abs_residuals(m, X, y)
    eps = 0.6
    radii = []
    for seed in range(500):
        rel = m.release_curvature(X, y, eps, random_state=seed).curvature_release_
        radii.append(rel.radius)
    eps_s = (1 - inf.GRAM_SHARE) * eps
    level, _, k = inf.window_level(400, 0.5, eps_s)
    assert rel.level == level and rel.rank_scale == pytest.approx(2 / eps_s)

    def cdf_at(e):
        _, edges, logp = _radius_log_density(values, level, e, reach, np.zeros(1))
        mass = np.r_[0.0, np.cumsum(np.diff(edges) * np.exp(logp))]
        return lambda t: np.interp(t, edges, mass)

    assert stats.kstest(radii, cdf_at(eps_s)).pvalue > 1e-3
    assert stats.kstest(radii, cdf_at(2 * eps_s)).pvalue < 1e-3
    assert stats.kstest(radii, cdf_at(eps_s / 2)).pvalue < 1e-3


def test_sparsity_release_neighbour_search():
    """Adversarial search over neighbouring data sets (one row replaced, its residual moved
    anywhere, including to 0 and to the reach): the stated law of the radius changes its log
    density by at most eps_s everywhere (the count has sensitivity 1: half of eps_s pays for
    the exponent, half for the normaliser). Control: the law calibrated for sensitivity 1/2
    (twice the exponent) breaks the bound on the same search."""
    rng = np.random.default_rng(19)
    n, eps_s, reach = 60, 0.3, 20.0
    level, _, _ = inf.window_level(n, 0.5, eps_s)
    worst, worst_bad = 0.0, 0.0
    for _ in range(300):
        values = np.abs(rng.standard_normal(n)) * rng.choice([0.3, 1.0, 3.0])
        other = values.copy()
        other[rng.integers(n)] = rng.choice([0.0, reach, rng.uniform(0, reach)])
        grid = np.r_[np.linspace(0, reach, 400), values, other]
        for factor, key in ((1.0, "ok"), (2.0, "bad")):
            a, _, _ = _radius_log_density(values, level, factor * eps_s, reach, grid)
            b, _, _ = _radius_log_density(other, level, factor * eps_s, reach, grid)
            gap = np.max(np.abs(a - b))
            if key == "ok":
                worst = max(worst, gap)
            else:
                worst_bad = max(worst_bad, gap)
    assert worst <= eps_s + 1e-9
    assert worst >= 0.5 * eps_s  # the exponent's half is reached
    assert worst_bad > 1.2 * eps_s  # the control is caught


def _coverage(n, eps, reps, n_boot, seed, share=0.4):
    rng = np.random.default_rng(seed)
    inside, est, widths = [], [], []
    for _ in range(reps):
        X, y = data(n, int(rng.integers(2**31)))
        m = model(epsilon=(1 - share) * eps, random_state=rng).fit(X, y)
        m.release_curvature(X, y, share * eps, random_state=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ci = m.conf_int(n_boot=n_boot)
        inside.append((ci[:, 0] <= BETA) & (BETA <= ci[:, 1]))
        est.append(np.r_[m.intercept_, m.coef_])
        widths.append(ci[:, 1] - ci[:, 0])
    lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
    return np.mean(inside, axis=0), np.mean(widths, axis=0) / (hi - lo)


def test_coverage_with_paired_control(monkeypatch):
    """Real intervals cover; a bootstrap that forgets the KNG noise V (the control) covers
    clearly less on the same data sets, so the check can fail."""
    cov_real, ratio = _coverage(5000, 0.25, reps=30, n_boot=300, seed=10, share=0.5)
    assert cov_real.mean() >= 0.85, cov_real
    assert np.all((ratio > 0.6) & (ratio < 2.5)), ratio
    real = inf.bootstrap

    def no_v(estimator, n_boot=1000, random_state=0):
        fit = estimator.kng_release_
        old = fit.scale
        fit.scale = 1e12  # V* ~ 0 in the bootstrap world only
        try:
            return real(estimator, n_boot, random_state)
        finally:
            fit.scale = old

    monkeypatch.setattr(inf, "bootstrap", no_v)
    cov, _ = _coverage(5000, 0.25, reps=30, n_boot=300, seed=10, share=0.5)
    assert cov.mean() <= cov_real.mean() - 0.15, (cov, cov_real)


def test_small_n_eps_budget_split_keeps_intervals_off_the_box(monkeypatch):
    """n = 1e3, epsilon = 1 (n epsilon = 1000): with the measured split (0.4 epsilon to the
    curvature, 0.7 of it to G, the sparsity window two rank errors wider than the bandwidth)
    the intervals cover and are a small multiple of the oracle; the former split (0.2, 0.5,
    one rank error, and the noised public corner G[0, 0] of sessions 4-15) on the same data
    sets gives intervals several times wider (the control: the check can fail)."""
    cov, ratio = _coverage(1000, 1.0, reps=30, n_boot=300, seed=12)
    assert cov.mean() >= 0.85, cov
    assert np.all(ratio < 2.0), ratio
    monkeypatch.setattr(inf, "GRAM_SHARE", 0.5)
    monkeypatch.setattr(inf, "RANK_WIDEN", 1.0)
    six_entries = inf.release_symmetric  # the former release: the corner noised as well
    monkeypatch.setattr(
        inf, "release_symmetric", lambda *a, public_corner=None, **k: six_entries(*a, **k)
    )
    _, ratio_old = _coverage(1000, 1.0, reps=30, n_boot=300, seed=12, share=0.2)
    assert ratio_old.mean() > 1.5 * ratio.mean(), (ratio_old, ratio)


def test_tiny_n_eps_warns_about_the_rank_noise():
    """n = 1e3, curvature epsilon 0.04 (0.012 to the sparsity, k = 167 ranks): the quantile's
    rank noise (sd 236 ranks) is a large part of its window (750 of 1000 residuals); at the
    benchmark's 0.1 (sd 94 of 460) it is not."""
    X, y = data(1000, 13)
    m = model(epsilon=0.15).fit(X, y).release_curvature(X, y, 0.1, random_state=0)
    rel = m.curvature_release_
    assert not any("rank noise" in w for w in inf.warnings_for(m.kng_release_, rel))
    m.release_curvature(X, y, 0.04, random_state=0)
    with pytest.warns(UserWarning, match="rank noise"):  # linear: "auto" simulates here (slow)
        m.conf_int(n_boot=200, method="linear")


@pytest.mark.slow
@pytest.mark.parametrize("n, eps, limit", [(1000, 1.0, 1.8), (10000, 1.0, 1.4), (10000, 4.0, 1.4)])
def test_coverage_cells(n, eps, limit):
    # cells measured by benchmarks.inference (curvature share 0.4). At n = 1e3, epsilon = 1
    # three runs gave width ratios 1.11-1.14, 1.12-1.38 and (this seed) 1.24-1.53: a few
    # near-singular Gram redraws and the noisy 150-estimate oracle move the mean, hence
    # the looser limit there (the former split gave 3.7-6.0, which it still catches).
    # The coverage band: a correct interval covers k ~ Binomial(150, 0.95) of 150; the former
    # lower limit 0.91 (k <= 136 fails) had a false-alarm rate of 1.9 % per parameter, 16 %
    # over the nine checks, and failed once (intercept 0.900 at n = 1e4, epsilon = 4, after
    # session 16's Gram release changed the draws; 300 paired data sets gave 0.960 against
    # 0.957 before). At 0.88 (k <= 131) it is 2e-4 per parameter; a true coverage of 0.85
    # still fails with probability 0.8 per parameter.
    cov, ratio = _coverage(n, eps, reps=150, n_boot=500, seed=11)
    assert np.all((cov >= 0.88) & (cov <= 0.99)), cov
    assert np.all(ratio <= limit), ratio


def test_weighted_fit_refuses_intervals_before_spending():
    """The curvature release and the bootstrap assume unit weights (as for the logistic)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (400, 1))
    y = X[:, 0] + rng.standard_normal(400)
    acc = BudgetAccountant(epsilon=10.0)
    est = KNGQuantileRegressor(
        epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-5, 5), random_state=0, accountant=acc
    ).fit(X, y, sample_weight=np.full(400, 0.5))
    spent = acc.spent
    with pytest.raises(NotImplementedError, match="unweighted"):
        est.release_curvature(X, y, epsilon=1.0)
    assert acc.spent == spent


def test_sparsity_release_without_bounds_y_uses_the_asinh_measure():
    """No public response box: the absolute residuals are ranked on [0, 1e9) with the asinh
    base measure; the estimate 2 t / L still lands near 1 / phi(0) at n = 3000."""
    X, y = data(3000, 20)
    with pytest.warns(UserWarning, match="bounds_y"):  # the fit's own (leaky) bounds
        m = model(bounds_y=None, epsilon=2.0).fit(X, y)
    assert inf._residual_range(m.kng_release_)[2] == "asinh"
    rel = m.release_curvature(X, y, 1.0, random_state=2).curvature_release_
    s_hat = 2 * rel.radius / rel.level
    assert abs(s_hat / np.sqrt(2 * np.pi) - 1) < 0.3, s_hat
    assert m.conf_int(n_boot=200).shape == (3, 2)
