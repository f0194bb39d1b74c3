"""benchmarks.logistic_small_eps (issue 14, item 4): the private levers it measures keep the
proof's Jacobian step, and benchmarks.realdata_logistic's ``small_reps`` extends a run."""

import math

import numpy as np
import pandas as pd
import pytest

from benchmarks import logistic_small_eps as lse
from benchmarks import realdata_logistic as rl
from benchmarks.baselines._logistic_common import design


def _worst_log_det_ratio(C, rows, thetas):
    """max over rows z and thetas of log det(C + s(1-s) z z^T) - log det(C)."""
    sign0, logdet0 = np.linalg.slogdet(C)
    assert sign0 > 0
    worst = -np.inf
    for theta in thetas:
        s = 1.0 / (1.0 + np.exp(-(rows @ theta)))
        for z, w in zip(rows, s * (1.0 - s)):
            worst = max(worst, np.linalg.slogdet(C + w * np.outer(z, z))[1] - logdet0)
    return worst


def _vertices(p, rng, k=40):
    signs = rng.choice([-1.0, 1.0], size=(k, p))
    return np.column_stack([np.ones(k), signs])


@pytest.mark.parametrize("k", [2.0, 4.0])
def test_intercept_weighted_ridge_keeps_the_jacobian_step(k):
    """Ridge diag(gamma/k, gamma, ...) with (k + p)/(4 gamma) = expm1(eps (1 - q)): the changed
    row moves the log-Jacobian by at most eps (1 - q) (adversarial rows: box vertices, thetas
    through 0 where s(1-s) = 1/4, data Hessians from none to many rows); the bound is reached
    within 2 %. Control: weighting the intercept without raising gamma breaks it."""
    rng = np.random.default_rng(0)
    p, eps, q = 10, 0.25, 0.85
    budget = math.expm1(eps * (1 - q))
    gamma = (k + p) / (4 * budget)
    rows = _vertices(p, rng)
    thetas = [np.zeros(p + 1), 0.01 * rng.standard_normal(p + 1)]
    worst = -np.inf
    for n_data in (0, 5, 50):
        Zd = design(rng.uniform(-1, 1, size=(n_data, p)), -1, 1)
        H = Zd.T @ Zd / 4.0
        C = H + np.diag([gamma / k] + [gamma] * p)
        worst = max(worst, _worst_log_det_ratio(C, rows, thetas))
    assert worst <= eps * (1 - q) * (1 + 1e-12)
    assert worst >= 0.98 * eps * (1 - q)
    old_gamma = (1 + p) / (4 * budget)  # the unweighted proof's gamma
    C_bad = np.diag([old_gamma / k] + [old_gamma] * p)
    assert _worst_log_det_ratio(C_bad, rows, thetas) > 1.05 * eps * (1 - q)


def test_row_clip_maps_into_the_ball_and_keeps_the_jacobian_step():
    """clip_rows: rows in [-1, 1]^p and |z|^2 <= R^2, rows inside untouched; with
    gamma = (1 + R^2)/(4 expm1(eps (1 - q))) the clipped vertices stay within the Jacobian
    budget, unclipped ones (the control) do not."""
    rng = np.random.default_rng(1)
    p, eps, q, r2 = 10, 0.5, 0.8, 5.0
    Z = design(rng.uniform(-1, 1, size=(200, p)), -1, 1)
    Z[:40] = _vertices(p, rng)
    C = lse.clip_rows(Z, r2)
    norms = np.einsum("ij,ij->i", C[:, 1:], C[:, 1:])
    assert np.all(norms <= r2 * (1 + 1e-12)) and np.all(np.abs(C) <= 1.0)
    inside = np.einsum("ij,ij->i", Z[:, 1:], Z[:, 1:]) <= r2
    assert inside.any() and np.array_equal(C[inside], Z[inside])
    assert np.all(C[:, 0] == 1.0)
    budget = math.expm1(eps * (1 - q))
    G = np.eye(p + 1) * (1 + r2) / (4 * budget)
    theta0 = [np.zeros(p + 1)]
    assert _worst_log_det_ratio(G, C[:40], theta0) <= eps * (1 - q) * (1 + 1e-12)
    assert _worst_log_det_ratio(G, Z[:40], theta0) > 1.5 * eps * (1 - q)


def test_fit_with_intercept_weight_is_the_weighted_ridge_minimiser():
    """_fit(gamma, V, gamma_intercept) solves grad loss + diag(g0, g, ...) theta/n + V/n = 0."""
    rng = np.random.default_rng(2)
    n, p = 300, 4
    Z = design(rng.uniform(-1, 1, size=(n, p)), -1, 1)
    y = (Z[:, 1] + 0.3 * rng.standard_normal(n) > 0.2).astype(float)
    V = rng.standard_normal(p + 1)
    g, g0 = 30.0, 7.0
    theta = lse._fit(Z, y, g, V, g0)
    s = 1.0 / (1.0 + np.exp(-(Z @ theta)))
    grad = Z.T @ (s - y) / n + (np.r_[g0, [g] * p] * theta + V) / n
    assert np.max(np.abs(grad)) < 1e-7
    # the control: the isotropic ridge's minimiser differs
    assert np.max(np.abs(lse._fit(Z, y, g, V) - theta)) > 1e-3


def test_best_threshold_is_the_oracle_accuracy():
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.9])
    y = np.array([0, 0, 1, 0, 1])
    assert lse._best_threshold(scores, y) == pytest.approx(0.8)
    assert lse._best_threshold(-scores, 1 - y) == pytest.approx(0.8)


def test_small_reps_extends_the_default_repetitions(monkeypatch):
    """run(small_reps=R) runs repetitions 0..R-1 for sets under SMALL rows (so the first
    SMALL_REPS reproduce the default run) and leaves larger sets alone."""
    calls = []

    def fake_scores(name, X, y, bounds, rep, n_public):
        calls.append((name, rep))
        methods = ["dpreg default", *rl.DP_METHODS, "non-private"]
        return [
            dict(dataset=name, rep=rep, fold=0, epsilon=1.0, method=m, score=0.5, delta=0.0)
            for m in methods
        ]

    small = ("small", np.zeros((50, 2)), np.r_[np.zeros(25), np.ones(25)], (0, 1))
    big = (
        "big",
        np.zeros((rl.SMALL, 2)),
        np.r_[np.zeros(rl.SMALL // 2), np.ones(rl.SMALL // 2)],
        (0, 1),
    )
    monkeypatch.setattr(rl, "_fold_scores", fake_scores)
    monkeypatch.setattr(rl, "data_sets", lambda quick=False: iter([small, big]))
    rows = pd.DataFrame(rl.run(small_reps=7))
    assert [r for s, r in calls if s == "small"] == list(range(7))
    assert [r for s, r in calls if s == "big"] == list(range(rl.REPS))
    assert set(rows.loc[rows["dataset"] == "small", "n_runs"]) == {7}
    calls.clear()
    monkeypatch.setattr(rl, "data_sets", lambda quick=False: iter([small]))
    rl.run()
    assert [r for _, r in calls] == list(range(rl.SMALL_REPS))
