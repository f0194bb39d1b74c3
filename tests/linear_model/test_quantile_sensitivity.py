"""Adversarial searches for neighbouring data sets that break the KNG quantile sensitivity.

For every (tau, fit_intercept, norm) the search maximises
``||grad l_n(theta; D) - grad l_n(theta; D')||_K / Delta`` over neighbouring data sets
``D, D'`` (one record replaced, raw features possibly outside ``bounds_X``), and over
``theta``: random search, then greedy local moves over the extreme points (features at or
beyond the bounds, responses far above or below the fitted line). The observed maximum must not
exceed 1, and must reach 1 (the bounds are tight).
"""

import itertools

import numpy as np
import pytest

from dpreg.linear_model._quantile_core import (
    design,
    quantile_gradient,
    quantile_sensitivity,
    scale_features,
)
from dpreg.noise import PolytopeBall, make_ball

# Asymmetric bounds: with an intercept the affine map fills [-1, 1]^p, so the bound is tight.
# Without an intercept features are only divided by max(|lower|, |upper|), so the scaled box
# of asymmetric bounds is smaller than the cube and the bound is valid but not tight; the
# tightness check then uses symmetric bounds.
ASYMMETRIC = (np.array([-1.0, 0.0, -2.0]), np.array([1.0, 3.0, 2.0]))
SYMMETRIC = (np.array([-1.0, -3.0, -2.0]), np.array([1.0, 3.0, 2.0]))
P = 3


class _Search:
    def __init__(self, tau, fit_intercept, norm, seed, bounds=ASYMMETRIC):
        self.tau, self.fit_intercept = tau, fit_intercept
        self.lower, self.upper = bounds
        self.d = P + int(fit_intercept)
        self.ball = make_ball(norm, self.d)
        self.delta = quantile_sensitivity(tau, P, norm, fit_intercept)
        self.rng = np.random.default_rng(seed)
        self.X = self.rng.uniform(self.lower - 1, self.upper + 1, size=(4, P))
        self.y = self.rng.normal(0, 3, size=4)

    def ratio(self, x, y1, x2, y2, theta):
        X1, X2 = np.vstack([self.X, x]), np.vstack([self.X, x2])
        Y1, Y2 = np.r_[self.y, y1], np.r_[self.y, y2]
        g1, g2 = self.gradient(X1, Y1, theta), self.gradient(X2, Y2, theta)
        return float(self.ball.norm(g1 - g2)) / self.delta

    def gradient(self, X, y, theta):
        Z, _, _ = scale_features(X, self.lower, self.upper, self.fit_intercept)
        return quantile_gradient(design(Z, self.fit_intercept), y, self.tau)(theta)

    def random_point(self):
        return (
            self.rng.uniform(self.lower - 1, self.upper + 1),
            self.rng.normal(0, 10),
            self.rng.uniform(self.lower - 1, self.upper + 1),
            self.rng.normal(0, 10),
            self.rng.normal(0, 2, size=self.d),
        )

    def local(self, point):
        x, y1, x2, y2, theta = (np.array(v, dtype=float) for v in point)
        best = self.ratio(x, y1, x2, y2, theta)
        improved = True
        while improved:
            improved = False
            for which, k in itertools.product((0, 1), range(P)):
                vec = x if which == 0 else x2
                lo, hi = self.lower[k], self.upper[k]
                for value in (lo - 1, lo, hi, hi + 1):
                    old = vec[k]
                    vec[k] = value
                    r = self.ratio(x, y1, x2, y2, theta)
                    if r > best + 1e-12:
                        best, improved = r, True
                    else:
                        vec[k] = old
            for which in (0, 1):
                for value in (-1e3, 1e3):
                    cand = (value, y2) if which == 0 else (y1, value)
                    r = self.ratio(x, cand[0], x2, cand[1], theta)
                    if r > best + 1e-12:
                        best, improved = r, True
                        y1, y2 = cand
        return best

    def run(self, n_random=400, n_local=6):
        points = [self.random_point() for _ in range(n_random)]
        scores = np.array([self.ratio(*pt) for pt in points])
        top = np.argsort(scores)[::-1][:n_local]
        return max(scores.max(), max(self.local(points[i]) for i in top))


@pytest.mark.parametrize("tau", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("norm", ["linf", "l1", "l2"])
def test_sensitivity_bound_holds_and_is_tight(tau, fit_intercept, norm):
    seed = int(100 * tau) + 7 * fit_intercept + 13 * len(norm)
    worst = _Search(tau, fit_intercept, norm, seed).run()
    assert worst <= 1.0 + 1e-12
    if fit_intercept:
        assert worst >= 1.0 - 1e-9
    else:
        assert _Search(tau, False, norm, seed, bounds=SYMMETRIC).run() >= 1.0 - 1e-9


@pytest.mark.parametrize("tau", [0.1, 0.5, 0.9])
def test_sensitivity_general_norm_ball(tau):
    """A non-lp polytope: the vertex enumeration path is checked by the same search."""
    rng = np.random.default_rng(0)
    V = rng.normal(size=(7, P + 1))
    ball = PolytopeBall(vertices=np.vstack([V, -V]))
    worst = _Search(tau, True, ball, seed=1).run()
    assert 1.0 - 1e-9 <= worst <= 1.0 + 1e-12


class _Wrapped:
    """An lp ball seen as a general ball (forces the vertex-enumeration path)."""

    def __init__(self, ball):
        self.ball, self.dim = ball, ball.dim

    def norm(self, x):
        return self.ball.norm(x)

    def sample_uniform(self, size=None, random_state=None):
        return self.ball.sample_uniform(size, random_state)


@pytest.mark.parametrize("norm", ["l1", "l2", "linf", 3.0])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_closed_form_matches_vertex_enumeration(norm, fit_intercept):
    d = P + int(fit_intercept)
    others = [_Wrapped(make_ball(norm, d))]
    if norm == "l1":
        others.append(PolytopeBall(vertices=np.eye(d), symmetrize=True))
    if norm == "linf":
        others.append(PolytopeBall(vertices=np.array(list(itertools.product((-1, 1), repeat=d)))))
    for tau in (0.05, 0.3, 0.5, 0.8):
        closed = quantile_sensitivity(tau, P, norm, fit_intercept)
        for ball in others:
            assert closed == pytest.approx(quantile_sensitivity(tau, P, ball, fit_intercept))


def test_closed_forms():
    m = 0.9
    assert quantile_sensitivity(0.9, 3, "linf") == pytest.approx(2 * m)
    assert quantile_sensitivity(0.1, 3, "linf") == pytest.approx(2 * m)
    assert quantile_sensitivity(0.5, 3, "l1") == pytest.approx(4.0)  # p + 1 > 2 m p
    assert quantile_sensitivity(0.9, 3, "l1") == pytest.approx(2 * m * 3)
    assert quantile_sensitivity(0.5, 3, "l2") == pytest.approx(2.0)  # sqrt(p + 1)
    assert quantile_sensitivity(0.9, 3, "l2", fit_intercept=False) == pytest.approx(2 * m * 3**0.5)
    assert quantile_sensitivity(0.3, 0, "l2") == pytest.approx(1.0)  # intercept only
    with pytest.raises(ValueError):
        quantile_sensitivity(0.5, 0, "linf", fit_intercept=False)


def test_printed_bound_is_too_small_for_tau_above_half():
    """The paper's 2 (1 - tau) C_X is broken by the search when tau > 1/2."""
    search = _Search(0.9, False, "linf", seed=3)
    printed = 2 * (1 - 0.9) * 1.0
    assert search.run() * search.delta > 2 * printed
