"""The functional bootstrap draws its noise replicates in one batched call (issue 15).

``privatize_statistic`` accepts leading batch axes; every row must be an independent draw of
the release's own law (the bootstrap's validity rests on it). Each law test has a control: the
same statistic against a law 10 % off in scale must be rejected.
"""

import warnings

import numpy as np
import pytest
from scipy import stats

from dpreg.linear_model import _inference as inf
from dpreg.linear_model._functional_sensitivity import Layout, l1_sensitivity
from dpreg.linear_model.functional import make_plan, privatize_statistic


def _batch(layout, eps, size, **plan_kw):
    plan = make_plan(layout, eps, **plan_kw)
    rng = np.random.default_rng(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the hull body's uncertified-release warning
        return plan, privatize_statistic(np.zeros((size, layout.dim)), layout, plan, eps, 0.0, rng)


def _ks(sample, law):
    return stats.kstest(sample, law.cdf).pvalue


def test_batched_block_noise_has_the_block_laws():
    layout, eps = Layout(2, True), 0.9
    plan, V = _batch(layout, eps, 4000)
    assert V.shape == (4000, layout.dim) and plan.release == "blocks"
    g = layout.d_gram
    for block, share in ((V[:, :g], plan.split), (V[:, g:], 1 - plan.split)):
        norms = np.max(np.abs(block), axis=1)
        scale = 2.0 / (share * eps)
        assert _ks(norms, stats.gamma(a=block.shape[1], scale=scale)) > 1e-3
        assert _ks(norms, stats.gamma(a=block.shape[1], scale=0.9 * scale)) < 1e-6  # control


@pytest.mark.parametrize("norm", ["l1", "hull"])
def test_batched_joint_noise_has_the_joint_law(norm):
    layout, eps = Layout(2, True), 1.5
    plan, V = _batch(layout, eps, 3000, norm=norm, release="joint")
    if norm == "l1":  # iid Laplace coordinates with the exact l1 sensitivity
        sample, scale = V.ravel(), l1_sensitivity(2) / eps
        law, off = stats.laplace(scale=scale), stats.laplace(scale=0.9 * scale)
    else:  # the hull gauge is Gamma(d, 1 / eps) (sensitivity 1 in its own norm)
        sample = plan.norm.norm(V)
        law = stats.gamma(a=layout.dim, scale=1.0 / eps)
        off = stats.gamma(a=layout.dim, scale=0.9 / eps)
    assert _ks(sample, law) > 1e-3
    assert _ks(sample, off) < 1e-6  # control


def test_batched_rows_are_independent():
    # lag-one correlation of the rows' norms (a shared radius would make it 1)
    _, V = _batch(Layout(2, True), 1.0, 4000)
    r = np.max(np.abs(V), axis=1)
    assert abs(np.corrcoef(r[:-1], r[1:])[0, 1]) < 0.06


def test_one_row_release_is_unchanged_by_the_batch_path():
    # a 1-D statistic is the release: same stream and values as one row drawn alone
    layout = Layout(2, True)
    plan = make_plan(layout, 1.0)
    a = privatize_statistic(np.zeros(layout.dim), layout, plan, 1.0, 0.0, np.random.default_rng(3))
    b = privatize_statistic(
        np.zeros((1, layout.dim)), layout, plan, 1.0, 0.0, np.random.default_rng(3)
    )
    assert a.shape == (layout.dim,)
    np.testing.assert_array_equal(a, b[0])


def test_noise_draws_unpack_each_replicate():
    layout = Layout(2, True)
    plan = make_plan(layout, 1.0)

    class NS:  # the fields noise_draws reads
        pass

    ns = NS()
    ns.layout, ns.plan, ns.epsilon, ns.delta = layout, plan, 1.0, 0.0
    ns.rounding_rows = None  # no float-error inflation: the release below has none either
    grams, xtys = inf.noise_draws(ns, 50, np.random.default_rng(0))
    assert grams.shape == (50, 3, 3) and xtys.shape == (50, 3)
    # each replicate is the layout's own unpack of one row of the batched release
    rows = privatize_statistic(np.zeros((50, layout.dim)), layout, plan, 1.0, 0.0,
                               np.random.default_rng(0))  # fmt: skip
    for g, c, row in zip(grams, xtys, rows):
        g0, c0 = layout.unpack(row, 0.0)
        np.testing.assert_allclose(g, g0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(c, c0, rtol=0, atol=1e-12)
    assert np.all(grams[:, 0, 0] == 0.0)  # n's corner carries no noise
    assert len(set(grams[:, 0, 1].tolist())) == 50  # fresh noise per replicate


def test_stacked_psd_solve_matches_one_at_a_time():
    from dpreg.linear_model.functional import solve_normal_equations  # noqa: PLC0415

    rng = np.random.default_rng(2)
    A = rng.standard_normal((40, 3, 3))
    grams = A @ np.swapaxes(A, 1, 2) - 1.5 * np.eye(3)  # some below the floor, some negative
    xtys = rng.standard_normal((40, 3))
    stacked = solve_normal_equations(grams, xtys, "psd", 0.7)
    single = np.array([solve_normal_equations(g, c, "psd", 0.7) for g, c in zip(grams, xtys)])
    np.testing.assert_allclose(stacked, single, rtol=1e-12, atol=1e-12)


def test_noise_redraws_use_the_release_float_inflation():
    """Session-22 audit F3: the bootstrap redrew the noise without the row count, so from
    n ~ 1e7 its law was narrower than the released noise (whose sensitivity the float-error
    bound of an n-row sum inflates): intervals would have been too narrow. The record now
    carries the rows the release used, and the redraws use them."""
    import dataclasses

    from dpreg import FunctionalLinearRegression
    from dpreg.linear_model._inference import noise_draws

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 10))
    y = X.sum(axis=1) + rng.standard_normal(300)
    m = FunctionalLinearRegression(
        epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-15, 15), random_state=0
    ).fit(X, y)
    ns = m.noisy_statistics_
    assert ns.rounding_rows == 300
    # a record of a 3e7-row release: its noise law is the inflated one
    big = dataclasses.replace(ns, rounding_rows=30_000_000)
    plain = dataclasses.replace(ns, rounding_rows=None)  # the control: the old redraw
    sd_big = noise_draws(big, 400, np.random.default_rng(1))[0].std()
    sd_plain = noise_draws(plain, 400, np.random.default_rng(1))[0].std()
    sd_own = noise_draws(ns, 400, np.random.default_rng(1))[0].std()
    assert sd_big > 3 * sd_plain
    assert sd_own == pytest.approx(sd_plain, rel=0.05)  # at n = 300 the inflation is tiny
