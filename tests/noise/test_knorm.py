"""The K-norm mechanism: law of ||V||_K, the l1 special case, covariance, API and validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpreg.noise import ConvexBody, KNormMechanism, LpBall, PolytopeBall

P_MIN = 1e-4


def _hexagon():
    ang = np.arange(6) * np.pi / 3
    return PolytopeBall(vertices=np.c_[np.cos(ang), np.sin(ang)])


CASES = [
    ("l1", 4),
    ("l2", 1),
    ("l2", 5),
    ("linf", 3),
    ("linf", 20),
    (3, 3),
    (1.5, 6),
    ("hexagon", 2),
    ("body", 3),
]


def _norm_arg(norm, dim):
    if norm == "hexagon":
        return _hexagon()
    if norm == "body":
        return ConvexBody(
            lambda x: np.abs(x).sum(axis=-1) + np.abs(x).max(axis=-1) <= 1.0, np.full(dim, 0.5)
        )
    return norm


@pytest.mark.parametrize("norm,dim", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
@pytest.mark.parametrize("method", ["auto", "polar"])
def test_norm_of_noise_is_gamma(norm, dim, method):
    # ||V||_K ~ Gamma(dim, scale=Delta/eps). The common bug (Gamma(dim) radius times a point
    # *inside* K) gives ||V||_K ~ Gamma(dim) * Beta(dim, 1), stochastically too small.
    mech = KNormMechanism(
        _norm_arg(norm, dim), dim=dim, sensitivity=2.0, epsilon=0.7, random_state=5, method=method
    )
    V = mech.sample(20_000)
    r = mech.ball.norm(V)
    assert stats.kstest(r, stats.gamma(a=dim, scale=2.0 / 0.7).cdf).pvalue > P_MIN
    assert mech.norm_distribution().mean() == pytest.approx(dim * 2.0 / 0.7)


def test_interior_point_with_gamma_m_would_be_detected():
    """The KS check above has power against the classic bug (Gamma(m) radius, U inside K)."""
    rng = np.random.default_rng(0)
    ball = LpBall(2, 3)
    wrong = rng.gamma(3, 1.0, size=(20_000, 1)) * ball.sample_uniform(20_000, random_state=1)
    assert stats.kstest(ball.norm(wrong), stats.gamma(a=3).cdf).pvalue < 1e-10


@pytest.mark.parametrize("dim", [1, 3, 6])
def test_l1_polar_path_is_iid_laplace(dim):
    scale = 1.5 / 0.5
    mech = KNormMechanism("l1", dim, sensitivity=1.5, epsilon=0.5, random_state=1, method="polar")
    V = mech.sample(30_000)
    for j in range(dim):
        assert stats.kstest(V[:, j], stats.laplace(scale=scale).cdf).pvalue > P_MIN
    if dim > 1:
        # independence: |V_i| and |V_j| are uncorrelated, as are V_i V_j's signs
        A = np.abs(V)
        C = np.corrcoef(A, rowvar=False)[np.triu_indices(dim, 1)]
        assert np.max(np.abs(C)) < 5 / np.sqrt(len(V))
        # a dependence the l1 polar law would show if r and U were mixed up: ||V||_1 vs Gamma
        S = np.corrcoef(np.sign(V), rowvar=False)[np.triu_indices(dim, 1)]
        assert np.max(np.abs(S)) < 5 / np.sqrt(len(V))
    # the fast path has the same law
    fast = KNormMechanism("l1", dim, 1.5, 0.5, random_state=2).sample(30_000)
    assert stats.ks_2samp(fast[:, 0], V[:, 0]).pvalue > P_MIN


@pytest.mark.parametrize("norm,dim", [("l1", 3), ("l2", 4), ("linf", 3), (3, 2), ("hexagon", 2)])
def test_covariance_vs_empirical(norm, dim):
    mech = KNormMechanism(
        _norm_arg(norm, dim), dim, sensitivity=1.0, epsilon=2.0, random_state=3, method="polar"
    )
    V = mech.sample(200_000)
    emp = V.T @ V / len(V)
    cov = mech.covariance()
    tol = 6 * np.sqrt(np.mean(np.sum(V**2, 1) ** 2) / len(V))
    assert np.max(np.abs(cov - emp)) < tol
    assert mech.variance == pytest.approx(np.trace(cov) / dim)


def test_known_variances():
    # l1: Laplace(b) per coordinate, variance 2 b^2; linf: E r^2 / 3
    assert KNormMechanism("l1", 4, 1.0, 0.5).variance == pytest.approx(2 * 4.0)
    m, b = 5, 2.0
    assert KNormMechanism("linf", m, 1.0, 0.5).variance == pytest.approx(
        (m + 1) * (m + 2) * b**2 / 3
    )
    # l2: (m+1)(m+2) b^2 / (m+2) = (m+1) b^2
    assert KNormMechanism("l2", m, 1.0, 0.5).variance == pytest.approx((m + 1) * b**2)


def test_density_ratio_is_bounded_by_exp_epsilon():
    """Privacy: the log density ratio at shifted outputs is eps * (||t - a|| - ||t||) / Delta."""
    eps, delta = 0.8, 1.3
    ball = _hexagon()
    mech = KNormMechanism(ball, 2, sensitivity=delta, epsilon=eps, random_state=0)
    t = mech.sample(5000)
    # neighbours differing by shifts u with ||u||_K <= Delta (boundary points of Delta * K)
    U = ball.sample_uniform(5000, random_state=1)
    U = delta * U / ball.norm(U)[:, None]
    log_ratio = eps * (ball.norm(t - U) - ball.norm(t)) / delta
    assert log_ratio.max() <= eps + 1e-12
    assert log_ratio.max() > eps * 0.95  # the bound is tight


def test_randomise_shapes_and_reproducibility():
    mech = KNormMechanism("l2", 3, 1.0, 1.0, random_state=0)
    assert mech.sample().shape == (3,)
    assert mech.sample((2, 4)).shape == (2, 4, 3)
    assert mech.randomise(np.zeros(3)).shape == (3,)
    assert mech.randomise(np.zeros((5, 3))).shape == (5, 3)
    one = KNormMechanism("linf", 1, 1.0, 1.0, random_state=0)
    assert np.shape(one.randomise(2.0)) == ()
    a = KNormMechanism("l2", 3, 1.0, 1.0, random_state=7).sample(4)
    b = KNormMechanism("l2", 3, 1.0, 1.0, random_state=7).sample(4)
    assert np.array_equal(a, b)
    rs = np.random.RandomState(3)
    assert KNormMechanism("l2", 3, 1.0, 1.0, random_state=rs).sample().shape == (3,)
    with pytest.raises(ValueError, match="3 entries"):
        mech.randomise(np.zeros(4))
    assert "KNormMechanism" in repr(mech)


bad_positive = st.one_of(
    st.floats(max_value=0.0, allow_nan=False),
    st.just(float("nan")),
    st.just(float("inf")),
    st.just(-float("inf")),
    st.text(max_size=3),
    st.none(),
    st.booleans(),
)


@settings(max_examples=40, deadline=None)
@given(eps=bad_positive)
def test_bad_epsilon_raises(eps):
    with pytest.raises(ValueError, match="epsilon"):
        KNormMechanism("l2", 2, 1.0, eps)


@settings(max_examples=40, deadline=None)
@given(sens=bad_positive)
def test_bad_sensitivity_raises(sens):
    with pytest.raises(ValueError, match="sensitivity"):
        KNormMechanism("l2", 2, sens, 1.0)


@settings(max_examples=40, deadline=None)
@given(
    norm=st.one_of(
        st.text(max_size=6).filter(lambda s: s.lower() not in ("l1", "l2", "linf", "inf", "max")),
        st.floats(max_value=1.0, exclude_max=True),
        st.just(float("nan")),
        st.lists(st.integers(), max_size=2),
    )
)
def test_bad_norm_raises(norm):
    with pytest.raises(ValueError, match="norm|p >= 1"):
        KNormMechanism(norm, 2, 1.0, 1.0)


@settings(max_examples=30, deadline=None)
@given(dim=st.one_of(st.integers(max_value=0), st.floats(), st.just("3"), st.booleans()))
def test_bad_dim_raises(dim):
    with pytest.raises(ValueError, match="dim"):
        KNormMechanism("l2", dim, 1.0, 1.0)


def test_ball_with_wrong_dim_and_bad_method():
    with pytest.raises(ValueError, match="dim=2"):
        KNormMechanism(_hexagon(), 3, 1.0, 1.0)
    with pytest.raises(ValueError, match="method"):
        KNormMechanism("l2", 3, 1.0, 1.0, method="grid-walk")


@pytest.mark.slow
@pytest.mark.parametrize("norm,dim", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_norm_of_noise_is_gamma_large(norm, dim):
    mech = KNormMechanism(
        _norm_arg(norm, dim), dim=dim, sensitivity=1.0, epsilon=1.0, random_state=17, method="polar"
    )
    V = mech.sample(300_000)
    assert stats.kstest(mech.ball.norm(V), mech.norm_distribution().cdf).pvalue > 1e-5


def test_same_body_three_ways_gives_the_same_noise():
    """Hexagon as PolytopeBall (cones) and ConvexBody (rejection); cube as LinfBall/PolytopeBall."""
    hexagon = _hexagon()
    body = ConvexBody(hexagon.contains, hexagon.half_widths * (1 + 1e-9))
    A = KNormMechanism(hexagon, 2, 1.0, 1.0, random_state=1).sample(8000)
    B = KNormMechanism(body, 2, 1.0, 1.0, random_state=2).sample(8000)
    cube = PolytopeBall(vertices=[[1, 1, 1], [1, -1, 1], [-1, 1, 1], [-1, -1, 1]], symmetrize=True)
    C = KNormMechanism(cube, 3, 1.0, 1.0, random_state=3).sample(8000)
    D = KNormMechanism("linf", 3, 1.0, 1.0, random_state=4).sample(8000)
    rng = np.random.default_rng(0)
    for u in rng.standard_normal((4, 2)):
        assert stats.ks_2samp(A @ u, B @ u).pvalue > P_MIN
    for u in rng.standard_normal((4, 3)):
        assert stats.ks_2samp(C @ u, D @ u).pvalue > P_MIN
    assert np.allclose(
        KNormMechanism(cube, 3, 1.0, 1.0).covariance(),
        KNormMechanism("linf", 3, 1.0, 1.0).covariance(),
    )
