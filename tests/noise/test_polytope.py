"""PolytopeBall (exact cone-decomposition sampler) and ConvexBody (oracle + box rejection)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpreg.noise import ConvexBody, KNormMechanism, L1Ball, L2Ball, LinfBall, PolytopeBall

P_MIN = 1e-4


def cube_vertices(d):
    return np.array(list(itertools.product([-1.0, 1.0], repeat=d)))


def cross_vertices(d):
    return np.vstack([np.eye(d), -np.eye(d)])


def random_symmetric_polytope(d, n_points, seed):
    rng = np.random.default_rng(seed)
    pts = rng.standard_normal((n_points, d)) * rng.uniform(0.5, 2.0, size=d)
    return PolytopeBall(vertices=pts, symmetrize=True)


# ----------------------------------------------------------------------------- volumes
@pytest.mark.parametrize("d", [1, 2, 3, 4, 6])
def test_cross_polytope_and_cube_volumes(d):
    cross_v = PolytopeBall(vertices=cross_vertices(d))
    cross_h = PolytopeBall(A=cube_vertices(d), b=np.ones(2**d))  # |x|_1 <= 1 as 2^d halfspaces
    cube_v = PolytopeBall(vertices=cube_vertices(d))
    cube_h = PolytopeBall(A=cross_vertices(d), b=np.ones(2 * d))
    for P in (cross_v, cross_h):
        assert math.isclose(P.volume(), 2**d / math.factorial(d), rel_tol=1e-10)
        assert np.allclose(P.half_widths, 1.0)
    for P in (cube_v, cube_h):
        assert math.isclose(P.volume(), 2.0**d, rel_tol=1e-10)
        assert np.allclose(P.coordinate_second_moment(), np.eye(d) / 3)
    assert np.allclose(cross_v.coordinate_second_moment(), L1Ball(d).coordinate_second_moment())


def test_regular_hexagon_volume_and_gauge():
    ang = np.arange(6) * np.pi / 3
    V = np.c_[np.cos(ang), np.sin(ang)]
    P = PolytopeBall(vertices=V)
    assert math.isclose(P.volume(), 3 * math.sqrt(3) / 2, rel_tol=1e-12)
    # the inradius is sqrt(3)/2 along the facet normal at angle 30 degrees
    u = np.array([np.cos(np.pi / 6), np.sin(np.pi / 6)])
    assert math.isclose(float(P.norm(u)), 2 / math.sqrt(3), rel_tol=1e-12)
    assert np.allclose(P.norm(V), 1.0)
    # the same hexagon from half of its vertices, and from its halfspaces
    Q = PolytopeBall(vertices=V[:3], symmetrize=True)
    normals = np.c_[np.cos(ang + np.pi / 6), np.sin(ang + np.pi / 6)]
    H = PolytopeBall(A=normals, b=np.full(6, math.sqrt(3) / 2))
    X = np.random.default_rng(0).standard_normal((200, 2))
    assert np.allclose(P.norm(X), Q.norm(X)) and np.allclose(P.norm(X), H.norm(X))
    assert math.isclose(H.volume(), P.volume(), rel_tol=1e-10)


@pytest.mark.parametrize("d,n_points,seed", [(2, 7, 0), (3, 10, 1), (4, 12, 2)])
def test_polytope_volume_vs_monte_carlo(d, n_points, seed):
    P = random_symmetric_polytope(d, n_points, seed)
    est, se = ConvexBody(P.contains, P.half_widths * (1 + 1e-9)).volume_estimate(200_000)
    assert abs(P.volume() - est) < 4.5 * se


def test_gauges_of_cube_and_cross_polytope_are_linf_and_l1():
    X = np.random.default_rng(1).standard_normal((300, 4))
    assert np.allclose(PolytopeBall(vertices=cube_vertices(4)).norm(X), np.abs(X).max(1))
    assert np.allclose(PolytopeBall(vertices=cross_vertices(4)).norm(X), np.abs(X).sum(1))
    assert np.allclose(PolytopeBall(A=cube_vertices(4), b=np.ones(16)).norm(X), np.abs(X).sum(1))
    assert PolytopeBall(vertices=cross_vertices(4)).norm(np.zeros(4)) == 0.0


# ----------------------------------------------------------------------------- sampling
@pytest.mark.parametrize("d,n_points,seed", [(2, 6, 3), (3, 9, 4), (4, 10, 5)])
def test_polytope_sampler_matches_box_rejection(d, n_points, seed):
    P = random_symmetric_polytope(d, n_points, seed)
    body = ConvexBody(P.contains, P.half_widths * (1 + 1e-9))
    A = P.sample_uniform(6000, random_state=10)
    B = body.sample_uniform(6000, random_state=20)
    assert np.all(P.contains(A))
    rng = np.random.default_rng(seed)
    directions = np.vstack([np.eye(d), rng.standard_normal((3, d))])
    for u in directions:
        assert stats.ks_2samp(A @ u, B @ u).pvalue > P_MIN
    # and the gauge: ||U||^d ~ Uniform(0, 1)
    assert stats.kstest(P.norm(A) ** d, "uniform").pvalue > P_MIN


@pytest.mark.parametrize("d,n_points,seed", [(2, 6, 6), (3, 8, 7)])
def test_polytope_second_moment_exact_vs_empirical(d, n_points, seed):
    P = random_symmetric_polytope(d, n_points, seed)
    U = P.sample_uniform(200_000, random_state=1)
    emp = U.T @ U / len(U)
    tol = 6 * np.sqrt(np.mean(np.sum(U**2, 1) ** 2) / len(U))
    assert np.max(np.abs(P.coordinate_second_moment() - emp)) < tol


def test_interval_polytope():
    P = PolytopeBall(vertices=[[2.0], [-2.0], [0.5]])
    assert P.dim == 1 and P.volume() == 4.0 and np.allclose(P.half_widths, [2.0])
    assert np.allclose(P.norm(np.array([[1.0], [-4.0]])), [0.5, 2.0])
    U = P.sample_uniform(5000, random_state=0)
    assert stats.kstest(U[:, 0], "uniform", args=(-2, 4)).pvalue > P_MIN
    H = PolytopeBall(A=[[1.0], [-1.0]], b=[3.0, 3.0])
    assert H.volume() == 6.0
    assert np.isclose(P.coordinate_second_moment()[0, 0], 4 / 3)


def test_polytope_with_knorm_mechanism():
    P = random_symmetric_polytope(3, 9, 8)
    mech = KNormMechanism(P, dim=3, sensitivity=2.0, epsilon=0.5, random_state=0)
    V = mech.sample(20_000)
    assert stats.kstest(P.norm(V), mech.norm_distribution().cdf).pvalue > P_MIN


def test_uncertified_balls_warn_at_use_and_lp_balls_do_not():
    # A polytope or membership-oracle ball is exact in law but its float release is not
    # certified: the user must hear it when the noise is drawn, not only in the docs.
    import warnings  # noqa: PLC0415

    from dpreg.exceptions import PrivacyLeakWarning  # noqa: PLC0415

    P = random_symmetric_polytope(3, 9, 8)
    body = ConvexBody(lambda v: np.abs(v).max(axis=-1) <= 1.0, np.ones(3))
    for ball in (P, body):
        mech = KNormMechanism(ball, dim=3, sensitivity=1.0, epsilon=1.0, random_state=0)
        assert not mech.floating_point_safe
        with pytest.warns(PrivacyLeakWarning, match="only lp balls are certified"):
            mech.randomise(np.zeros(3))
    for norm in ("l1", "l2", "linf", 3.0):
        mech = KNormMechanism(norm, dim=3, sensitivity=1.0, epsilon=1.0, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            mech.randomise(np.zeros(3))


# ----------------------------------------------------------------------------- validation
def test_polytope_errors():
    with pytest.raises(ValueError, match="not symmetric"):
        PolytopeBall(vertices=[[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    with pytest.raises(ValueError, match="symmetric|interior"):
        PolytopeBall(vertices=[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 2.0]])
    with pytest.raises(ValueError, match="not symmetric"):
        PolytopeBall(vertices=[[2.0], [-1.0]])
    with pytest.raises(ValueError, match="full-dimensional"):
        PolytopeBall(vertices=[[1.0, 1.0], [-1.0, -1.0], [2.0, 2.0]])
    with pytest.raises(ValueError, match="either"):
        PolytopeBall(vertices=np.eye(2), A=np.eye(2), b=[1, 1])
    with pytest.raises(ValueError, match="needs"):
        PolytopeBall(A=np.eye(2))
    with pytest.raises(ValueError, match="finite"):
        PolytopeBall(vertices=[[np.nan, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="> 0"):
        PolytopeBall(A=cross_vertices(2), b=[1, 1, 1, 0])
    with pytest.raises(ValueError, match="unbounded"):
        PolytopeBall(A=[[1.0, 0.0], [-1.0, 0.0]], b=[1.0, 1.0])
    with pytest.raises(ValueError, match="unbounded along coordinate 1"):  # full rank, unbounded
        PolytopeBall(A=[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], b=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="not symmetric"):
        PolytopeBall(A=[[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]], b=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="not symmetric"):
        PolytopeBall(A=cross_vertices(2), b=[1.0, 1.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="entries"):
        PolytopeBall(A=cross_vertices(2), b=[1.0, 1.0])
    with pytest.raises(ValueError, match="entries"):
        PolytopeBall(vertices=cross_vertices(2)).norm(np.ones(3))


# ----------------------------------------------------------------------------- ConvexBody
def test_convex_body_gauge_accuracy():
    body = ConvexBody(lambda x: np.sum(np.square(x), axis=-1) <= 1.0, [1.0, 1.0, 1.0], rtol=1e-9)
    X = np.random.default_rng(0).standard_normal((500, 3)) * 10
    X[0] = 0.0
    g, true = body.norm(X), np.linalg.norm(X, axis=1)
    assert np.all(g >= true * (1 - 1e-12))  # conservative side
    assert np.all(g <= true / (1 - 1e-9) + 1e-12)
    # small bodies need the doubling phase: half-widths much larger than the body
    small = ConvexBody(lambda x: np.abs(x).sum(axis=-1) <= 0.01, [1.0, 1.0])
    assert np.isclose(small.norm([1.0, 1.0]), 200.0, rtol=1e-9)


def test_convex_body_rowwise_oracle_and_consistency_check():
    calls = []

    def scalar_oracle(x):
        calls.append(1)
        return float(np.abs(x).max()) <= 1.0  # returns one bool even for a 2-D array

    body = ConvexBody(scalar_oracle, [1.0, 1.0])
    assert not body._vectorized
    assert np.allclose(body.norm(np.array([[2.0, 1.0], [0.5, 0.0]])), [2.0, 0.5])
    assert body.contains([0.5, 0.5]) and not body.contains([1.5, 0.0])

    def bad(x):  # vectorised result that disagrees with row-wise calls
        x = np.asarray(x)
        return np.ones(len(x), bool) if x.ndim == 2 else bool(np.abs(x).max() <= 0.1)

    with pytest.raises(ValueError, match="disagrees"):
        ConvexBody(bad, [1.0, 1.0])


def test_convex_body_sampler_exact_and_feasibility_errors():
    body = ConvexBody(lambda x: np.abs(x).sum(axis=-1) <= 1.0, [1.0] * 3)
    U = body.sample_uniform(20_000, random_state=0)
    assert stats.kstest(np.abs(U).sum(1) ** 3, "uniform").pvalue > P_MIN
    assert math.isclose(body.acceptance_rate(), 1 / 6, rel_tol=0.05)
    # l2 ball in dim 20: acceptance ~2.5e-8, nothing accepted in the pilot
    ball = ConvexBody(L2Ball(20).contains, np.ones(20), n_pilot=2000)
    with pytest.raises(ValueError, match="acceptance rate"):
        ball.sample_uniform(1, random_state=0)
    # a feasible body but a request beyond max_proposals
    limited = ConvexBody(L2Ball(6).contains, np.ones(6), max_proposals=10_000)
    with pytest.raises(ValueError, match=r"acceptance\s+rate 0\.0[78]"):  # vol ratio 0.0807
        limited.sample_uniform(5_000, random_state=0)
    assert limited.sample_uniform(100, random_state=0).shape == (100, 6)


def test_convex_body_sanity_checks():
    with pytest.raises(ValueError, match="contains\\(0\\)"):
        ConvexBody(lambda x: np.abs(x - 0.5).max(axis=-1) <= 0.1, [1.0, 1.0])
    shifted = ConvexBody(lambda x: np.abs(x - 0.1).max(axis=-1) <= 0.5, [1.0, 1.0])
    with pytest.raises(ValueError, match="not symmetric"):
        shifted.sample_uniform(10, random_state=0)
    annulus = ConvexBody(
        lambda x: (np.abs(x).max(axis=-1) <= 0.1) | (np.abs(np.abs(x).max(axis=-1) - 0.9) <= 0.1),
        [1.0, 1.0],
    )
    with pytest.raises(ValueError, match="not convex"):
        annulus.sample_uniform(10, random_state=0)
    too_small_box = ConvexBody(lambda x: np.sum(x**2, axis=-1) <= 1.0, [0.8, 0.8])
    with pytest.raises(ValueError, match="half_widths"):
        too_small_box.sample_uniform(10, random_state=0)
    for bad in ([], [1.0, -1.0], [np.inf], [[1.0]]):
        with pytest.raises(ValueError, match="half_widths"):
            ConvexBody(lambda x: True, bad)
    with pytest.raises(ValueError, match="callable"):
        ConvexBody(None, [1.0])
    with pytest.raises(ValueError, match="max_proposals"):
        ConvexBody(lambda x: True, [1.0], max_proposals=0)


def test_convex_body_volume_is_deterministic_with_standard_error():
    body = ConvexBody(LinfBall(3).contains, [1.0, 1.0, 2.0])
    v1, se = body.volume_estimate()
    assert v1 == body.volume_estimate()[0] and body.volume() == pytest.approx(v1)
    assert abs(v1 - 8.0) < 4.5 * se and se > 0
    assert math.isclose(np.exp(body.log_volume()), v1)


@settings(max_examples=25, deadline=None)
@given(
    d=st.integers(2, 3),
    seed=st.integers(0, 10_000),
    shift=st.floats(0.3, 3.0),
)
def test_shifted_polytopes_are_rejected(d, seed, shift):
    """A symmetric vertex set moved off the origin is not a norm ball: clear ValueError."""
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((d + 2, d))
    V = np.vstack([V, -V])
    c = rng.standard_normal(d)
    c *= shift * np.abs(V).max() / np.linalg.norm(c)
    with pytest.raises(ValueError, match="symmetric|interior|full-dimensional"):
        PolytopeBall(vertices=V + c)
    # and the halfspace form of the shifted body
    P = PolytopeBall(vertices=V)
    A = P.facet_normals
    with pytest.raises(ValueError, match="symmetric|> 0"):
        PolytopeBall(A=A, b=1.0 + A @ c)


@settings(max_examples=25, deadline=None)
@given(bad=st.sampled_from([np.nan, np.inf, -np.inf]), i=st.integers(0, 3), j=st.integers(0, 1))
def test_non_finite_inputs_are_rejected(bad, i, j):
    V = cross_vertices(2)
    V[i, j] = bad
    with pytest.raises(ValueError, match="finite"):
        PolytopeBall(vertices=V)
    with pytest.raises(ValueError, match="finite"):
        PolytopeBall(A=V, b=np.ones(4))
    b = np.ones(4)
    b[i] = bad
    with pytest.raises(ValueError, match="finite|> 0"):
        PolytopeBall(A=cross_vertices(2), b=b)


@pytest.mark.slow
@pytest.mark.parametrize("d,n_points,seed", [(5, 14, 11), (6, 16, 12)])
def test_polytope_sampler_matches_box_rejection_large(d, n_points, seed):
    """Larger samples and dimensions: cone decomposition vs box rejection, many projections."""
    P = random_symmetric_polytope(d, n_points, seed)
    body = ConvexBody(P.contains, P.half_widths * (1 + 1e-9), max_proposals=10**9)
    A = P.sample_uniform(100_000, random_state=1)
    B = body.sample_uniform(100_000, random_state=2)
    rng = np.random.default_rng(seed)
    for u in np.vstack([np.eye(d), rng.standard_normal((10, d))]):
        assert stats.ks_2samp(A @ u, B @ u).pvalue > 1e-5
    assert stats.ks_2samp(P.norm(A), P.norm(B)).pvalue > 1e-5
    est, se = body.volume_estimate(2_000_000)
    assert abs(P.volume() - est) < 4.5 * se


def test_gauges_of_non_finite_points():
    P = PolytopeBall(vertices=cross_vertices(2))
    body = ConvexBody(lambda x: np.abs(x).sum(axis=-1) <= 1.0, [1.0, 1.0])
    X = np.array([[np.inf, 0.0], [np.nan, 1.0], [1.0, 1.0], [0.0, -np.inf]])
    for ball in (P, body):
        g = ball.norm(X)
        assert g[0] == np.inf and np.isnan(g[1]) and np.isclose(g[2], 2.0) and g[3] == np.inf
