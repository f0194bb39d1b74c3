"""The non-centred KNG diagnosis (benchmarks/_inference_kng_robust.py): its exact world and
the box geometry along the weak direction (issue #15)."""

from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks import _inference_cells as cells_mod
from benchmarks import _inference_kng_robust as robust
from dpreg import KNGQuantileRegressor
from dpreg.linear_model import _inference_quantile as iq


def test_exact_world_feeds_the_data_and_the_true_errors_then_restores_the_library():
    """Inside ``world`` the simulation's data generator returns the given design and
    ``y = truth_0 + X truth_1: + N(0, 1)`` (mean and sd of the errors within 4 se); outside it
    is the library's own again, also after an exception. Control: the library's generator
    with the same public values does not return the given design."""
    rng = np.random.default_rng(1)
    n = 4000
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    truth = np.array([1.0, 2.0, -1.0])
    fit = SimpleNamespace(
        n=n,
        fit_intercept=True,
        active=np.ones(2, bool),
        mid=np.zeros(2),
        half=np.ones(2),
        tau=0.5,
        theta=np.array([0.0, 0.0, 0.0]),
    )
    gram = np.diag([n, n / 3, n / 3])
    with robust.world(X, truth):
        X1, y1 = iq.synthetic_data(fit, gram, 1.0, rng)
    assert X1 is X
    e = y1 - truth[0] - X @ truth[1:]
    assert abs(e.mean()) < 4 / np.sqrt(n) and abs(e.std() - 1.0) < 4 / np.sqrt(2 * n)
    with pytest.raises(RuntimeError), robust.world(X, truth):
        raise RuntimeError
    X2, _ = iq.synthetic_data(fit, gram, 1.0, rng)  # the library's again
    assert X2 is not X and not np.allclose(X2, X)
    fit.half = np.full(2, 2.0)
    with pytest.raises(ValueError), robust.world(X, truth):
        iq.synthetic_data(fit, gram, 1.0, rng)


def test_box_reach_along_the_weak_direction():
    """theta0 = (1, 2, -1) in the box [-7, 9] x [-8, 8]^2 along v = (-0.371, 0.929, 0): x1
    leaves [-8, 8] at t = -10 / v1 and 6 / v1, before the intercept leaves [-7, 9] (control:
    the intercept alone would allow |t| > 21)."""
    v, lam = robust.weak_direction()
    assert lam == pytest.approx(0.124, abs=1e-3) and v[1] > 0 and v[2] == pytest.approx(0.0)
    lo, hi = np.array([-7.0, -8.0, -8.0]), np.array([9.0, 8.0, 8.0])
    t_min, t_max = robust.box_reach(np.array([1.0, 2.0, -1.0]), v, lo, hi)
    assert t_min == pytest.approx(-10.0 / v[1]) and t_max == pytest.approx(6.0 / v[1])
    assert 8.0 / abs(v[0]) > 21.0  # the intercept: 1 - 0.371 t in [-7, 9]


def test_remedy_bounds_make_the_scaled_design_the_centred_one():
    """Under the remedy's bounds (x1's support) the scaled design's population Gram matrix is
    the centred ``diag(1, 1/3, 1/3)``, and a sample of the non-centred design scaled by those
    bounds has that Gram matrix (within 5 se). Control: with bounds (-1, 1) it is
    ``POP_GRAM``, whose intercept-x1 entry is 0.35, not 0."""
    centred = np.diag([1.0, 1.0 / 3.0, 1.0 / 3.0])
    assert np.allclose(robust.scaled_pop_gram(robust.REMEDY_BOUNDS), centred)
    assert np.allclose(robust.scaled_pop_gram((-np.ones(2), np.ones(2))), robust.POP_GRAM)
    assert robust.POP_GRAM[0, 1] == pytest.approx(0.35)
    n = 20000
    X = cells_mod.shifted_x1(np.random.default_rng(2).uniform(-1.0, 1.0, (n, 2)), robust.X1_LOW)
    lo, hi = (np.asarray(b, float) for b in robust.REMEDY_BOUNDS)
    W = np.column_stack([np.ones(n), (X - (lo + hi) / 2) / ((hi - lo) / 2)])
    assert np.all(np.abs(W.T @ W / n - centred) < 5 * np.sqrt(1.0 / (3 * n)))  # var <= 1/3


def test_user_units_of_the_remedy_bounds_are_the_fits():
    """``_to_user(bounds)`` maps a fit's scaled parameter to its ``intercept_``/``coef_``
    when ``bounds`` are the fit's public bounds. Control: the map of bounds (-1, 1) does not
    (x1's mid-point is 0.35 under the remedy's bounds)."""
    rng = np.random.default_rng(3)
    X = cells_mod.shifted_x1(rng.uniform(-1.0, 1.0, (300, 2)), robust.X1_LOW)
    y = 1.0 + X @ np.array([2.0, -1.0]) + rng.standard_normal(300)
    model = KNGQuantileRegressor(
        epsilon=1.0, bounds_X=robust.REMEDY_BOUNDS, bounds_y=(-7, 9), random_state=rng,
        progress_bar=False,
    ).fit(X, y)  # fmt: skip
    theta = np.asarray(iq._fitted(model).theta, float)[None, :]
    user = np.r_[model.intercept_, model.coef_]
    assert np.allclose(robust._to_user(robust.REMEDY_BOUNDS)(theta)[0], user)
    assert not np.allclose(robust._to_user((-np.ones(2), np.ones(2)))(theta)[0], user)
