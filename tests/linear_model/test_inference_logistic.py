"""Private inference for a binary ObjectivePerturbationLogistic (issue #15)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpreg import ObjectivePerturbationLogistic
from dpreg.accounting import BudgetAccountant
from dpreg.exceptions import BudgetExceededError
from dpreg.linear_model import _inference_logistic as inf

BETA = np.array([0.5, 1.5, -1.0])


def data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    p = 1 / (1 + np.exp(-(BETA[0] + X @ BETA[1:])))
    return X, (rng.uniform(size=n) < p).astype(int)


def model(**kw):
    kw = dict(epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], random_state=0) | kw
    return ObjectivePerturbationLogistic(**kw)


def test_shapes_dataframe_and_summary():
    X, y = data(4000, 0)
    m = model().fit(X, y).release_hessian(X, y, 0.2, random_state=1)
    ci = m.conf_int(n_boot=100)
    assert ci.shape == (3, 2) and np.all(ci[:, 0] < ci[:, 1])
    assert m.bse(n_boot=100).shape == (3,)
    Xf = pd.DataFrame(X, columns=["a", "b"])
    m.fit(Xf, y).release_hessian(Xf, y, 0.2, random_state=1)
    assert list(m.conf_int(n_boot=100).index) == ["const", "a", "b"]
    table = m.summary(n_boot=100)
    df = table.as_dataframe()
    assert list(df.columns) == ["coef", "std err", "[0.025", "0.975]"]
    np.testing.assert_allclose(df["coef"], np.r_[m.intercept_, m.coef_.ravel()])
    text = str(table)
    for word in ("n: 4000", "epsilon spent: 1.2", "Hessian 0.2", "objective perturbation"):
        assert word in text
    m2 = model(fit_intercept=False).fit(X, y).release_hessian(X, y, 0.2)
    assert m2.conf_int(n_boot=100).shape == (2, 2)


def test_release_is_charged_once_and_intervals_are_free():
    X, y = data(3000, 1)
    acc = BudgetAccountant(epsilon=10)
    m = model(accountant=acc).fit(X, y)
    m.release_hessian(X, y, 0.25)
    assert acc.spent == (1.25, 0.0) and len(acc) == 2
    a = m.conf_int(n_boot=100)
    m.bse(n_boot=100)
    str(m.summary(n_boot=100))
    assert acc.spent == (1.25, 0.0)
    np.testing.assert_array_equal(a, m.conf_int(n_boot=100))  # deterministic


class _Boom(Exception):
    pass


@pytest.mark.parametrize(
    "args, match",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=float("nan")), "epsilon"),
        (dict(X_bad="nan"), "NaN|infinity"),
        (dict(X_bad="shape"), "features"),
        (dict(y_bad=True), "outside classes"),
    ],
)
def test_bad_input_raises_before_spend(args, match, monkeypatch):
    X, y = data(500, 2)
    acc = BudgetAccountant(epsilon=10)
    m = model(accountant=acc).fit(X, y)
    spent = acc.spent
    Xb, yb = X.copy(), y.copy()
    if args.get("X_bad") == "nan":
        Xb[3, 0] = np.nan
    if args.get("X_bad") == "shape":
        Xb = np.column_stack([X, X[:, 0]])
    if args.get("y_bad"):
        yb[0] = 7
    # nothing may touch the data before the spend: make the Hessian computation explode
    monkeypatch.setattr(inf, "expit", lambda *_: (_ for _ in ()).throw(_Boom()))
    with pytest.raises(ValueError, match=match):
        m.release_hessian(Xb, yb, args.get("epsilon", 0.1))
    assert acc.spent == spent


def test_spend_happens_before_computation(monkeypatch):
    X, y = data(500, 3)
    acc = BudgetAccountant(epsilon=10)
    m = model(accountant=acc).fit(X, y)
    monkeypatch.setattr(inf, "expit", lambda *_: (_ for _ in ()).throw(_Boom()))
    with pytest.raises(_Boom):
        m.release_hessian(X, y, 0.5)
    assert acc.spent == (1.5, 0.0)  # reserved before the data were used


def test_budget_refused_before_data():
    X, y = data(500, 4)
    acc = BudgetAccountant(epsilon=1.05)
    m = model(accountant=acc).fit(X, y)
    with pytest.raises(BudgetExceededError):
        m.release_hessian(X, y, 0.1)
    assert acc.spent == (1.0, 0.0)


def test_refusals():
    X, y = data(600, 5)
    with pytest.raises(ValueError, match="release_hessian"):
        model().fit(X, y).conf_int()
    m = model().fit(X, y).release_hessian(X, y, 0.1)
    m.fit(X, y)  # a new fit makes the old Hessian release stale
    with pytest.raises(ValueError, match="release_hessian"):
        m.bse()
    y3 = np.arange(600) % 3
    with pytest.raises(ValueError, match="binary"):
        model(classes=[0, 1, 2]).fit(X, y3).release_hessian(X, y3, 0.1)
    with pytest.raises(ValueError, match="alpha"):
        m.conf_int(alpha=1.5)
    with pytest.raises(ValueError, match="n_boot"):
        m.conf_int(n_boot=5)


def test_small_n_eps_warns_and_is_wide():
    X, y = data(300, 6)
    m = model(epsilon=0.2).fit(X, y).release_hessian(X, y, 0.02, random_state=0)
    with pytest.warns(UserWarning, match="small n"):
        ci = m.conf_int(n_boot=200)
    assert np.all(ci[:, 1] - ci[:, 0] > 1.0)  # never falsely narrow: the data say little
    assert inf.linear_law_poor(m, m.inference_release_)  # method="auto" simulates here
    with pytest.warns(UserWarning, match="small n"):
        ci = m.conf_int(n_sim=50, method="auto")
    assert np.all(ci[:, 1] - ci[:, 0] > 1.0)


def test_hessian_release_is_the_stated_linf_knorm_law():
    """The released entries minus the true Hessian have the density exp(-|u|_inf eps/sens):
    their linf norm is Gamma(d, sens/eps)."""
    X, y = data(800, 7)
    m = model().fit(X, y)
    Z = np.column_stack([np.ones(len(X)), m._scale(X, *m.bounds_)])
    s = 1 / (1 + np.exp(-(Z @ m.theta_[0])))
    H = (Z * (s * (1 - s))[:, None]).T @ Z
    eps = 0.5
    radii = []
    for seed in range(300):
        rel = m.release_hessian(X, y, eps, random_state=seed).inference_release_
        u, _, _ = inf._encode(rel.hessian - H)
        radii.append(np.max(np.abs(u)))
    d = 6
    ks = stats.kstest(radii, stats.gamma(d, scale=rel.sensitivity / eps).cdf)
    assert ks.pvalue > 1e-3
    assert rel.sensitivity == pytest.approx(0.25, rel=1e-6)


def test_replace_one_changes_each_encoded_entry_by_at_most_a_quarter():
    """Adversarial search over replaced rows: the sensitivity of the encoding holds."""
    rng = np.random.default_rng(8)
    worst = 0.0
    for _ in range(2000):
        m = 3
        z = np.r_[1.0, rng.choice([-1.0, 1.0, rng.uniform(-1, 1)], size=m - 1)]
        z2 = np.r_[1.0, rng.choice([-1.0, 1.0, rng.uniform(-1, 1)], size=m - 1)]
        a, a2 = rng.choice([0.25, rng.uniform(0, 0.25), 0.0]), rng.choice([0.25, 0.0])
        u, _, _ = inf._encode(a * np.outer(z, z) - a2 * np.outer(z2, z2))
        worst = max(worst, np.max(np.abs(u)))
    assert worst <= 0.25 + 1e-15
    assert worst >= 0.25 - 1e-12  # the bound is attained


def _coverage(n, eps, reps, n_boot, seed):
    rng = np.random.default_rng(seed)
    inside, est, widths = [], [], []
    for _ in range(reps):
        X, y = data(n, int(rng.integers(2**31)))
        m = model(epsilon=0.9 * eps, random_state=rng).fit(X, y)
        m.release_hessian(X, y, 0.1 * eps, random_state=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ci = m.conf_int(n_boot=n_boot, method="linear")  # the linearised bootstrap
        inside.append((ci[:, 0] <= BETA) & (BETA <= ci[:, 1]))
        est.append(np.r_[m.intercept_, m.coef_.ravel()])
        widths.append(ci[:, 1] - ci[:, 0])
    lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
    return np.mean(inside, axis=0), np.mean(widths, axis=0) / (hi - lo)


def test_coverage_one_cell_loosely():
    cov, ratio = _coverage(5000, 2.0, reps=30, n_boot=200, seed=9)
    assert 0.85 <= cov.mean() <= 1.0, cov
    assert np.all((ratio > 0.7) & (ratio < 2.5)), ratio


def test_control_without_privacy_noise_undercovers(monkeypatch):
    """The check above can fail: a bootstrap that forgets the OP noise V under-covers."""
    real = inf.bootstrap

    def no_v(estimator, n_boot=1000, random_state=0):
        old = estimator.epsilon_per_problem_
        # a huge epsilon for V in the bootstrap world only: V* ~ 0 (9e7 keeps the total
        # within the public cap EPSILON_MAX = 1e8 of check_epsilon)
        estimator.epsilon_per_problem_ = estimator.amp_epsilon_ + 9e7
        try:
            return real(estimator, n_boot, random_state)
        finally:
            estimator.epsilon_per_problem_ = old

    # paired on the same 30 data sets: at n = 2000 the real intervals are conservative
    # (coverage ~1.0), the control's fall to ~0.8 (seeds 9/10: 0.81/0.84); an absolute
    # threshold on 30 data sets alone is too noisy to separate them reliably
    cov_real, _ = _coverage(2000, 0.25, reps=30, n_boot=200, seed=9)
    monkeypatch.setattr(inf, "bootstrap", no_v)
    cov, _ = _coverage(2000, 0.25, reps=30, n_boot=200, seed=9)
    assert cov.mean() <= cov_real.mean() - 0.08, (cov, cov_real)


@pytest.mark.slow
@pytest.mark.parametrize("n, eps", [(10000, 1.0), (10000, 4.0)])
def test_coverage_cells(n, eps):
    # cells measured inside the band by benchmarks.inference (100 data sets); the n = 1e5
    # intercept's 0.90-0.92 of an earlier run was Monte Carlo error (docs/inference.md)
    cov, ratio = _coverage(n, eps, reps=150, n_boot=300, seed=10)
    assert np.all((cov >= 0.91) & (cov <= 0.99)), cov
    assert np.all(ratio <= 1.5), ratio


def test_hessian_draws_are_feasible_and_follow_the_release_law():
    """Posterior draws of H_loss: every one a possible Hessian of n rows; when the release is
    far inside that set (nothing rejected) they are exactly H~ - E*, whose linf radius of the
    encoded difference is Gamma(d, sens/eps) (KS, with a mis-scaled control)."""
    X, y = data(300, 3)
    m = model(epsilon=0.5).fit(X, y).release_hessian(X, y, 0.05, random_state=1)
    rel = m.inference_release_
    H = inf.feasible_hessian_draws(rel, 400, np.random.default_rng(0))
    assert H.shape == (400, 3, 3)
    assert np.all(inf.feasible(H, rel.n, True))
    assert not np.all(
        inf.feasible(
            rel.hessian[None] - inf._noise_draws(rel, 400, np.random.default_rng(0)), rel.n, True
        )
    )

    X, y = data(20000, 4)
    rel = model().fit(X, y).release_hessian(X, y, 2.0, random_state=2).inference_release_
    H = inf.feasible_hessian_draws(rel, 2000, np.random.default_rng(5))
    iu = np.triu_indices(3)
    u = (rel.hessian[None] - H)[:, iu[0], iu[1]] * np.where(iu[0] == iu[1], 1.0, 0.5)
    radii = np.max(np.abs(u), axis=1)
    scale = rel.sensitivity / rel.epsilon
    assert stats.kstest(radii, stats.gamma(6, scale=scale).cdf).pvalue > 1e-3
    assert stats.kstest(radii, stats.gamma(6, scale=1.1 * scale).cdf).pvalue < 1e-3


def test_feasible_draws_narrow_the_small_n_eps_intervals(monkeypatch):
    """At n = 1e3, epsilon = 1 the PSD projection of every H~ - E* (the earlier draws) gave
    intervals 2.3-4x the oracle width; the feasible posterior narrows them and still covers.
    Paired on the same data sets and fits; the projection is the control."""
    cov, ratio = _coverage(1000, 1.0, reps=25, n_boot=200, seed=3)
    monkeypatch.setattr(
        inf,
        "feasible_hessian_draws",
        lambda rel, n_boot, rng, intercept=True: inf.hessian_draws(rel, n_boot, rng),
    )
    cov_old, ratio_old = _coverage(1000, 1.0, reps=25, n_boot=200, seed=3)
    assert cov.mean() >= 0.9, cov
    assert np.all(ratio < 0.85 * ratio_old), (ratio, ratio_old)


@pytest.mark.slow
def test_coverage_small_n_eps_cell_is_not_needlessly_wide():
    """n = 1e3, epsilon = 1: the Hessian is poorly known, so the intervals are wider than the
    oracle, but with the feasible posterior 1.6-1.9x (benchmark), not 2.1-3.6x as with the
    PSD projection; they must still cover."""
    cov, ratio = _coverage(1000, 1.0, reps=150, n_boot=300, seed=11)
    assert np.all((cov >= 0.92) & (cov <= 1.0)), cov
    assert np.all(ratio <= 2.4), ratio
