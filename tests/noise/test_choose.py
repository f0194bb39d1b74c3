"""choose_norm: the volume order of seed 001 section 3."""

import itertools
import math

import numpy as np
import pytest

from dpreg.noise import ConvexBody, L1Ball, L2Ball, LinfBall, PolytopeBall, choose_norm
from dpreg.noise.choose import log_scaled_volume


@pytest.mark.parametrize("m", [1, 2, 5, 20])
def test_box_sensitivity_space_picks_linf(m):
    # sensitivity space [-1, 1]^m: Delta_inf = 1, Delta_2 = sqrt(m), Delta_1 = m
    choice = choose_norm(["l1", "l2", "linf"], [m, math.sqrt(m), 1.0], dim=m)
    assert choice == ("l1" if m == 1 else "linf")  # m = 1: all three coincide; first wins


@pytest.mark.parametrize("m", [2, 5, 20])
def test_cross_polytope_sensitivity_space_picks_l1(m):
    # sensitivity space = unit l1 ball: every lp sensitivity is 1
    assert choose_norm(["linf", "l2", "l1"], [1.0, 1.0, 1.0], dim=m) == "l1"
    # a slightly scaled l1 sensitivity still wins
    assert choose_norm(["linf", "l2", "l1"], [1.0, 1.0, 1.1], dim=m) == "l1"


def test_scaled_volumes_match_formula():
    assert log_scaled_volume("l2", 2.0, 3) == pytest.approx(math.log(4 / 3 * math.pi * 8))
    assert log_scaled_volume("linf", 3.0, 4) == pytest.approx(4 * math.log(6.0))
    assert log_scaled_volume(L1Ball(3), 1.0, 3) == pytest.approx(math.log(8 / 6))


def test_paper_example_3_22_and_the_hull():
    """Seed 001, Example 3.22: T = (sum x, sum 2 x^2), x in [-1, 1].

    Exact sensitivities Delta_1 = 3.125, Delta_2 = sqrt(71 + 8 sqrt 2) / 4, Delta_inf = 2 give
    scaled volumes 19.53, 16.16, 16; the hull of the sensitivity space has volume 40/3 = 13.33.
    """
    d1, d2, dinf = 3.125, math.sqrt(71 + 8 * math.sqrt(2)) / 4, 2.0
    vols = [
        math.exp(log_scaled_volume(n, s, 2)) for n, s in [("l1", d1), ("l2", d2), ("linf", dinf)]
    ]
    assert vols == pytest.approx([19.53, 16.16, 16.0], abs=0.005)

    def hull(u):  # |u1| <= 2, |u2| <= 2 for |u1| <= 1, else <= 2 - 2 (|u1| - 1)^2
        u = np.asarray(u, dtype=float)
        a = np.abs(u[..., 0])
        cap = np.where(a <= 1, 2.0, 2.0 - 2.0 * (a - 1.0) ** 2)
        return (a <= 2) & (np.abs(u[..., 1]) <= cap)

    body = ConvexBody(hull, [2.0, 2.0])
    vol, se = body.volume_estimate(400_000)
    assert abs(vol - 40 / 3) < 4.5 * se and se < 0.02
    cands = ["l1", "l2", "linf", body]
    assert choose_norm(cands, [d1, d2, dinf, 1.0], dim=2, prefer_floating_point_safe=False) is body
    # by default the uncertified body gives way to the hardened linf ball
    assert choose_norm(cands, [d1, d2, dinf, 1.0], dim=2) == "linf"
    assert choose_norm(cands[:3], [d1, d2, dinf], dim=2) == "linf"
    # the approximate sensitivities of equation (2) (4, sqrt 8, 2) give the same order
    assert choose_norm(["l1", "l2", "linf"], [4.0, math.sqrt(8), 2.0], dim=2) == "linf"


def test_balls_carry_their_dim_and_polytopes_compare_exactly():
    m = 3
    cube = PolytopeBall(vertices=np.array(list(itertools.product([-1.0, 1.0], repeat=m))))
    cands = [L2Ball(m), LinfBall(m), cube]
    assert choose_norm(cands, [math.sqrt(m), 1.0, 0.99], prefer_floating_point_safe=False) is cube
    assert isinstance(choose_norm(cands, [math.sqrt(m), 1.0, 0.99]), LinfBall)
    assert choose_norm([L2Ball(m), L1Ball(m)], [1.0, 1.0]) is not None


def test_errors():
    with pytest.raises(ValueError, match="dim is required"):
        choose_norm(["l1", "l2"], [1.0, 1.0])
    with pytest.raises(ValueError, match="equal length"):
        choose_norm(["l1", "l2"], [1.0], dim=2)
    with pytest.raises(ValueError, match="equal length"):
        choose_norm([], [], dim=2)
    with pytest.raises(ValueError, match="sensitivity"):
        choose_norm(["l1", "l2"], [1.0, -1.0], dim=2)
    with pytest.raises(ValueError, match="sensitivity"):
        choose_norm(["l1", "l2"], [1.0, float("nan")], dim=2)
    with pytest.raises(ValueError, match="Unknown norm"):
        choose_norm(["l1", "l9"], [1.0, 1.0], dim=2)
    with pytest.raises(ValueError, match="dim"):
        choose_norm([L1Ball(2), L2Ball(3)], [1.0, 1.0])


def test_auto_prefers_floating_point_safe_balls():
    """Issue 11: polytopes are not certified on real hardware, so a hardened candidate wins
    even against a smaller uncertified ball; every lp ball is hardened now (exact lp release),
    so the volume order decides among them."""
    m = 4
    cube = PolytopeBall(vertices=np.array(list(itertools.product([-1.0, 1.0], repeat=m))))
    assert choose_norm(["l2", cube], [math.sqrt(m), 0.5], dim=m) == "l2"
    assert (
        choose_norm(["l2", cube], [math.sqrt(m), 0.5], dim=m, prefer_floating_point_safe=False)
        is cube
    )
    assert choose_norm(["l2", 3.0], [math.sqrt(m), 1.0], dim=m) == 3.0
    assert choose_norm([3.0, 1.5], [1.0, 1.0], dim=m) == 1.5  # smaller volume, both hardened
