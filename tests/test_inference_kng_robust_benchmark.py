"""The non-centred KNG diagnosis (benchmarks/_inference_kng_robust.py): its exact world and
the box geometry along the weak direction (issue #15)."""

from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks import _inference_kng_robust as robust
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
