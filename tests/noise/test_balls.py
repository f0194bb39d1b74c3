"""Uniform samplers, gauges, volumes and second moments of the unit balls."""

import math

import numpy as np
import pytest
from scipy import stats

from dpreg.noise import ConvexBody, L1Ball, L2Ball, LinfBall, LpBall, PolytopeBall, make_ball

P_MIN = 1e-4  # KS p-value threshold: fixed seeds, so a pass is deterministic and not borderline


def _hexagon():
    ang = np.arange(6) * np.pi / 3
    return PolytopeBall(vertices=np.c_[np.cos(ang), np.sin(ang)])


def _l2_body(dim):
    return ConvexBody(lambda x: np.sum(np.square(x), axis=-1) <= 1.0, np.ones(dim))


BALLS = [
    ("l1-1", lambda: L1Ball(1)),
    ("l1-4", lambda: L1Ball(4)),
    ("l2-3", lambda: L2Ball(3)),
    ("l2-6", lambda: L2Ball(6)),
    ("linf-5", lambda: LinfBall(5)),
    ("l3-3", lambda: LpBall(3, 3)),
    ("l1.5-4", lambda: LpBall(1.5, 4)),
    ("l1.5-1", lambda: LpBall(1.5, 1)),
    ("hexagon", _hexagon),
    ("cross-3", lambda: PolytopeBall(vertices=np.eye(3), symmetrize=True)),
    ("body-l2-3", lambda: _l2_body(3)),
]


@pytest.mark.parametrize("name,make", BALLS, ids=[b[0] for b in BALLS])
def test_norm_of_uniform_point_to_the_dim_is_uniform(name, make):
    # vol{||u||_K <= s} = s^m vol(K), so ||U||_K^m ~ Uniform(0, 1) for U uniform on K.
    ball = make()
    U = ball.sample_uniform(20_000, random_state=11)
    assert U.shape == (20_000, ball.dim)
    r = np.asarray(ball.norm(U))
    assert r.max() <= 1 + 1e-9
    assert stats.kstest(r**ball.dim, "uniform").pvalue > P_MIN
    # wrong law check: the sign of every coordinate is symmetric
    assert np.all(np.abs(U.mean(axis=0)) < 5 * U.std(axis=0) / np.sqrt(len(U)))


@pytest.mark.parametrize("p,dim", [(3, 3), (1.5, 3), (1, 2), (2, 4), (1.2, 5)])
def test_lp_sampler_matches_box_rejection(p, dim):
    """BGMN samples vs exact rejection from the cube on the same lp ball (two-sample KS)."""
    ball = LpBall(p, dim)
    body = ConvexBody(ball.contains, np.ones(dim))
    rng = np.random.default_rng(3)
    A = ball.sample_uniform(6000, random_state=1)
    B = body.sample_uniform(6000, random_state=2)
    directions = np.vstack([np.eye(dim)[0], rng.standard_normal((3, dim))])
    for u in directions:
        assert stats.ks_2samp(A @ u, B @ u).pvalue > P_MIN


@pytest.mark.parametrize("p,dim", [(1, 3), (1.5, 2), (2, 3), (3, 4), (np.inf, 3), (7, 2)])
def test_lp_volume_formula_vs_monte_carlo(p, dim):
    ball = LpBall(p, dim)
    est, se = ConvexBody(ball.contains, np.ones(dim)).volume_estimate(200_000, random_state=5)
    assert abs(ball.volume() - est) <= 4.5 * se + 1e-9


def test_lp_volume_known_values():
    assert math.isclose(L2Ball(3).volume(), 4 * math.pi / 3, rel_tol=1e-12)
    assert math.isclose(L2Ball(2).volume(), math.pi, rel_tol=1e-12)
    assert math.isclose(L1Ball(5).volume(), 2**5 / math.factorial(5), rel_tol=1e-12)
    assert math.isclose(LinfBall(7).volume(), 2**7, rel_tol=1e-12)
    assert math.isclose(LpBall(1.5, 1).volume(), 2.0, rel_tol=1e-12)
    # the unit lp ball grows with p
    vols = [LpBall(p, 4).volume() for p in (1, 1.5, 2, 3, 10)]
    assert np.all(np.diff(vols) > 0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: LpBall(1, 4),
        lambda: LpBall(2, 3),
        lambda: LpBall(3, 3),
        lambda: LpBall(1.5, 2),
        lambda: LinfBall(3),
        _hexagon,
    ],
)
def test_coordinate_second_moment_vs_empirical(make):
    ball = make()
    exact = ball.coordinate_second_moment()
    U = ball.sample_uniform(100_000, random_state=9)
    emp = U.T @ U / len(U)
    scale = np.sqrt(np.mean(np.sum(U**2, axis=1) ** 2) / len(U))
    assert np.allclose(exact, exact.T)
    assert np.max(np.abs(exact - emp)) < 6 * scale


def test_known_second_moments():
    assert np.allclose(L2Ball(4).coordinate_second_moment(), np.eye(4) / 6)  # 1/(m+2)
    assert np.allclose(LinfBall(4).coordinate_second_moment(), np.eye(4) / 3)
    assert np.allclose(L1Ball(3).coordinate_second_moment(), np.eye(3) * 2 / 20)  # 2/((m+1)(m+2))


def test_norms_and_contains():
    x = np.array([[3.0, -4.0], [0.0, 0.0], [0.5, 0.5]])
    assert np.allclose(L1Ball(2).norm(x), [7, 0, 1])
    assert np.allclose(L2Ball(2).norm(x), [5, 0, np.sqrt(0.5)])
    assert np.allclose(LinfBall(2).norm(x), [4, 0, 0.5])
    assert np.allclose(LpBall(3, 2).norm(x), (np.abs(x) ** 3).sum(1) ** (1 / 3))
    assert list(L1Ball(2).contains(x)) == [False, True, True]
    assert float(L2Ball(2).norm([3.0, 4.0])) == 5.0


def test_sample_shapes_and_reproducibility():
    ball = LpBall(3, 2)
    assert ball.sample_uniform(random_state=0).shape == (2,)
    assert ball.sample_uniform((4, 3), random_state=0).shape == (4, 3, 2)
    assert np.array_equal(
        ball.sample_uniform(5, random_state=1), ball.sample_uniform(5, random_state=1)
    )
    assert not np.array_equal(
        ball.sample_uniform(5, random_state=1), ball.sample_uniform(5, random_state=2)
    )


def test_make_ball():
    assert isinstance(make_ball("l1", 3), L1Ball)
    assert isinstance(make_ball("L2", 3), L2Ball)
    assert isinstance(make_ball("inf", 3), LinfBall)
    assert isinstance(make_ball(np.inf, 3), LinfBall)
    assert make_ball(4, 2).p == 4.0
    h = _hexagon()
    assert make_ball(h, 2) is h
    with pytest.raises(ValueError, match="dim=2"):
        make_ball(h, 3)
    with pytest.raises(ValueError, match="Unknown norm"):
        make_ball("l7", 3)
    with pytest.raises(ValueError, match="p >= 1"):
        make_ball(0.5, 3)
    with pytest.raises(ValueError, match="dim"):
        make_ball("l2", 0)
