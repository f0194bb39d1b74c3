"""Statistical tests of the samplers for p(x) ∝ exp(-c O(x)) against numerical integration."""

import numpy as np
import pytest
from scipy import stats

from dpreg.location import _sensitivity as sens
from dpreg.location._sampler import (
    ExactSampler,
    _sample_line,
    _support_tangents,
    hit_and_run,
    outlyingness,
    projection_median_lp,
)


def _problem_2d(c, seed=0, m=5):
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((m, 2))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    mu = rng.normal(0, 0.3, m)  # inconsistent projected medians: a "flat bottom"
    sigma = rng.uniform(0.5, 1.5, m)
    return U, mu, sigma, c


def _grid_density(U, mu, sigma, c, n_grid=700):
    x_star, o_star = projection_median_lp(U, mu, sigma)
    t = o_star + 40.0 / c
    a_hi, g_hi, a_lo, g_lo = _support_tangents(U, mu, sigma, t)
    lo, hi = a_lo + g_lo * t, a_hi + g_hi * t
    xs = np.linspace(lo[0], hi[0], n_grid)
    ys = np.linspace(lo[1], hi[1], n_grid)
    G = np.stack(np.meshgrid(xs, ys, indexing="ij"), axis=-1).reshape(-1, 2)
    logp = -c * outlyingness(G, U, mu, sigma)
    p = np.exp(logp - logp.max()).reshape(n_grid, n_grid)
    return xs, ys, p / p.sum(), o_star


def test_exact_sampler_1d_is_laplace():
    U, mu, sigma, c = np.ones((1, 1)), np.array([0.3]), np.array([0.7]), 5.0
    smp = ExactSampler(U, mu, sigma, c, np.random.default_rng(1))
    x = smp.sample(4000)[:, 0]
    p = stats.kstest(x, stats.laplace(loc=0.3, scale=0.7 / c).cdf).pvalue
    assert p > 1e-3
    assert smp.acceptance_rate > 0.99  # one direction: the box is the level set


def _brute_force(U, mu, sigma, c, o_star, size, half, seed=99):
    """Exact reference draws: uniform proposals on [-half, half]^2 accepted w.p.
    exp(-c (O - o*)) (the grid spans the region holding all but a negligible mass)."""
    rng = np.random.default_rng(seed)
    out, got = [], 0
    while got < size:
        Y = rng.uniform(-half, half, (200000, 2))
        keep = rng.random(len(Y)) < np.exp(-c * (outlyingness(Y, U, mu, sigma) - o_star))
        out.append(Y[keep])
        got += int(keep.sum())
    return np.concatenate(out)[:size]


@pytest.mark.parametrize("c", [3.0, 60.0])
def test_exact_sampler_2d_matches_numerical_integration(c):
    """Chi-square on a 6x6 partition and KS on both marginals, against a 700x700 grid."""
    U, mu, sigma, c = _problem_2d(c)
    xs, ys, P, o_star = _grid_density(U, mu, sigma, c)
    assert c * o_star > 1.0 or c < 10  # the large-c case has a genuinely flat bottom
    smp = ExactSampler(U, mu, sigma, c, np.random.default_rng(2))
    X = smp.sample(6000)
    # marginals
    for axis, grid in ((0, xs), (1, ys)):
        marg = P.sum(axis=1 - axis)
        cdf = np.cumsum(marg)
        # cdf[i] includes cell i's mass: it is the CDF at the cell's right edge
        edges = grid + 0.5 * (grid[1] - grid[0])
        p = stats.kstest(X[:, axis], lambda v, g=edges, f=cdf: np.interp(v, g, f)).pvalue
        assert p > 1e-3
    # joint: a two-sample chi-square on a 6x6 partition (cells from the grid's marginal
    # quantiles) against a brute-force exact sampler (uniform box proposal, accepted with
    # probability exp(-c (O - o*))). A one-sample test against the 700x700 grid rejects even
    # the brute-force sampler at n = 6000 (the grid's mass per cell is off by more than the
    # test's resolution), so the reference is an independent exact sample instead.
    qx = np.interp([1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6], np.cumsum(P.sum(1)), xs)
    qy = np.interp([1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6], np.cumsum(P.sum(0)), ys)
    half = float(np.max(np.abs([xs[0], xs[-1], ys[0], ys[-1]])))
    ref = _brute_force(U, mu, sigma, c, o_star, len(X), half)

    def counts(Z):
        out = np.zeros((6, 6))
        np.add.at(out, (np.searchsorted(qx, Z[:, 0]), np.searchsorted(qy, Z[:, 1])), 1)
        return out.ravel()

    table = np.array([counts(X), counts(ref)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3
    assert smp.acceptance_rate > 0.05


def test_linf_matches_closed_form():
    """Axes: exp(-c max_i |x_i - mu_i| / sigma_i) has ||(x - mu)/sigma||_inf ~ Gamma(d, 1/c)
    and, given it, a uniform point on the cube surface; every proposal is accepted."""
    d, c = 4, 7.0
    mu = np.array([1.0, -2.0, 0.5, 3.0])
    sigma = np.array([0.5, 2.0, 1.0, 0.1])
    smp = ExactSampler(np.eye(d), mu, sigma, c, np.random.default_rng(3))
    X = smp.sample(4000)
    V = (X - mu) / sigma
    r = np.max(np.abs(V), axis=1)
    assert stats.kstest(r, stats.gamma(a=d, scale=1 / c).cdf).pvalue > 1e-3
    assert smp.acceptance_rate > 0.999
    # which face is hit is uniform over the 2d faces
    face = np.argmax(np.abs(V), axis=1) * 2 + (V[np.arange(len(V)), np.argmax(np.abs(V), 1)] > 0)
    counts = np.bincount(face, minlength=2 * d)
    assert stats.chisquare(counts).pvalue > 1e-3
    # uniform position on the face: the other coordinates / r are U(-1, 1)
    other = np.abs(V) / r[:, None]
    other = other[np.abs(V) < r[:, None]]
    assert stats.kstest(other, stats.uniform(0, 1).cdf).pvalue > 1e-3


@pytest.mark.parametrize("c", [2.0, 25.0])
def test_tail_bound_dominates_numerical_tail(c):
    U, mu, sigma, c = _problem_2d(c, seed=4, m=6)
    xs, ys, P, o_star = _grid_density(U, mu, sigma, c, n_grid=500)
    G = np.stack(np.meshgrid(xs, ys, indexing="ij"), axis=-1).reshape(-1, 2)
    O = outlyingness(G, U, mu, sigma).reshape(P.shape)
    informative = 0
    for tau in (o_star + 0.05, o_star + 0.2, 2 * o_star + 0.5, 1.5, 4.0, 8.0):
        bound = np.exp(sens.tail_log_bound(o_star, c, tau, 2))
        numeric = P[O > tau].sum()
        assert numeric <= bound * 1.02 + 1e-6  # grid truncation error only
        informative += bound < 0.5
    assert informative >= 1


def test_line_sampler_is_exact():
    rng = np.random.default_rng(5)
    intercepts = rng.normal(0, 1, 40)
    slopes = rng.normal(0, 2, 40)
    slopes[0], slopes[1] = -3.0, 3.0  # integrable
    c = 1.7
    s = np.array([_sample_line(intercepts, slopes, c, rng) for _ in range(3000)])
    grid = np.linspace(-15, 15, 60001)
    f = np.exp(-c * np.max(intercepts[:, None] + slopes[:, None] * grid, axis=0))
    cdf = np.cumsum(f) / f.sum()
    assert stats.kstest(s, lambda v: np.interp(v, grid, cdf)).pvalue > 1e-3


def test_hit_and_run_approximates_the_target():
    U, mu, sigma, c = _problem_2d(8.0, seed=6)
    xs, ys, P, _ = _grid_density(U, mu, sigma, c, n_grid=400)
    mean = np.array([(P.sum(1) * xs).sum(), (P.sum(0) * ys).sum()])
    sd = np.sqrt([(P.sum(1) * xs**2).sum() - mean[0] ** 2, (P.sum(0) * ys**2).sum() - mean[1] ** 2])
    rng = np.random.default_rng(7)
    x0 = projection_median_lp(U, mu, sigma)[0]
    draws = np.array([hit_and_run(U, mu, sigma, c, rng, x0, 30) for _ in range(400)])
    z = (draws.mean(0) - mean) / (sd / np.sqrt(len(draws)))
    assert np.all(np.abs(z) < 4.5)
    assert np.allclose(draws.std(0), sd, rtol=0.2)


def test_exact_sampler_raises_when_infeasible():
    U, mu, sigma, c = _problem_2d(10.0)
    smp = ExactSampler(U, mu, sigma, c, np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="no acceptance"):
        smp.sample(10**6, max_proposals=4096, batch=4096)
    assert smp.n_proposals == 4096  # exactly the budget, never more


def test_upper_envelope_with_hull_prefilter_matches_brute_force():
    from dpreg.location._sampler import _upper_envelope

    rng = np.random.default_rng(9)
    a, b = rng.normal(size=800), rng.normal(size=800) * 3
    brk, ic, sl = _upper_envelope(a, b)
    grid = np.linspace(-20, 20, 5001)
    seg = np.searchsorted(brk, grid)
    np.testing.assert_allclose(ic[seg] + sl[seg] * grid, np.max(a[:, None] + b[:, None] * grid, 0))


@pytest.mark.parametrize("case", ["lp_free_box", "scale_1e15", "scale_1e-12"])
def test_exact_sampler_exact_with_fallback_box_and_at_extreme_scales(case, monkeypatch):
    """The closed-form parallelepiped box (used if a support LP fails) and the rescaled frame
    change only the acceptance rate: the law still matches numerical integration (KS on both
    marginals, data scaled back to scale 1)."""
    from dpreg.location import _sampler

    U, mu, sigma, c = _problem_2d(3.0)
    xs, ys, P, _ = _grid_density(U, mu, sigma, c)
    scale = {"lp_free_box": 1.0, "scale_1e15": 1e15, "scale_1e-12": 1e-12}[case]
    if case == "lp_free_box":

        def broken(*args, **kwargs):
            raise RuntimeError("support LP failed")

        monkeypatch.setattr(_sampler, "_support_tangents", broken)
    smp = ExactSampler(U, mu * scale, sigma * scale, c, np.random.default_rng(5))
    X = smp.sample(4000) / scale
    for axis, grid in ((0, xs), (1, ys)):
        cdf = np.cumsum(P.sum(axis=1 - axis))
        # cdf[i] includes cell i's mass: it is the CDF at the cell's right edge
        edges = grid + 0.5 * (grid[1] - grid[0])
        p = stats.kstest(X[:, axis], lambda v, g=edges, f=cdf: np.interp(v, g, f)).pvalue
        assert p > 1e-3
    assert smp.acceptance_rate > 0.01
