"""benchmarks._inference_kng_errors: the error laws are what the docs say (median 0 and the
stated sparsity), and swapping them in changes nothing but the errors."""

import numpy as np
import pytest
from scipy import stats

from benchmarks import _inference_cells as cells_mod
from benchmarks import _inference_kng_errors as ke

# the same laws in scipy's parametrisation (independent of the benchmark's draws)
SCIPY_LAWS = {
    "normal": stats.norm(),
    "t3": stats.t(3),
    "laplace": stats.laplace(scale=1 / np.sqrt(2)),
    "skewed": stats.expon(loc=-np.log(2)),
}


@pytest.mark.parametrize("law", sorted(ke.ERROR_LAWS))
def test_laws_have_median_zero_and_the_stated_sparsity(law):
    """The truth (the conditional median) is unchanged only if each law's median is 0, and the
    asymptotic oracle uses ``1 / f(0)``: both against scipy's law, and the benchmark's draws
    follow that law (KS on 20,000 draws). Control: the normal sparsity is not t3's or the
    skewed law's, so a law wired to the wrong constant would fail."""
    draw, sparsity = ke.ERROR_LAWS[law]
    ref = SCIPY_LAWS[law]
    assert ref.median() == pytest.approx(0.0, abs=1e-12)
    assert sparsity == pytest.approx(1.0 / ref.pdf(0.0), rel=1e-12)
    sample = draw(np.random.default_rng(3), 20_000)
    assert stats.kstest(sample, ref.cdf).pvalue > 1e-3
    if law in ("t3", "skewed"):
        assert abs(sparsity - cells_mod.NORMAL_SPARSITY) > 0.2


def test_error_law_swaps_only_the_errors_and_restores_the_data():
    """``normal`` gives the committed cells' data exactly; another law the same design and
    other errors; ``kng_data`` is the original again after the block, also after an error."""
    original = cells_mod.kng_data
    X0, y0 = original(50, np.random.default_rng([4000, 0]))
    with ke.error_law("normal"):
        X1, y1 = cells_mod.kng_data(50, np.random.default_rng([4000, 0]))
    with ke.error_law("t3"):
        X2, y2 = cells_mod.kng_data(50, np.random.default_rng([4000, 0]))
    np.testing.assert_array_equal(X0, X1)
    np.testing.assert_array_equal(y0, y1)
    np.testing.assert_array_equal(X0, X2)
    assert not np.allclose(y0, y2)
    with pytest.raises(RuntimeError), ke.error_law("skewed"):
        raise RuntimeError
    assert cells_mod.kng_data is original
    assert cells_mod.kng_errors is ke.ERROR_LAWS["normal"][0]


def test_paired_check_uses_the_cells_data_sets_and_cross_tabulates(tmp_path):
    """The oracle's hits are those of the non-private fit on data set i's own stream (checked
    against a fit made here), and the cross-tabulation counts a private interval's misses
    against them: fake chunks whose interval covers on data set 0 and misses on data set 1
    give exactly those counts (a control for the table's bookkeeping)."""
    import pickle

    from benchmarks import inference as inf

    n, law = 1000, "skewed"
    hits = ke.paired_check(law, n, 0, 2)
    with ke.error_law(law):
        X, y = cells_mod.kng_data(n, np.random.default_rng([4000 + inf.N_GRID.index(n), 1]))
    est = ke._median_regressions([(X, y)])[0]
    sd = 2.0 * 0.5 / np.sqrt(n) * np.array([1.0, np.sqrt(3.0), np.sqrt(3.0)])
    np.testing.assert_array_equal(hits[1], np.abs(est - cells_mod.KNG_BETA) <= 1.959964 * sd)

    folder = tmp_path / law / str(n)
    folder.mkdir(parents=True)
    truth = cells_mod.KNG_BETA
    for i, offset in ((0, 0.0), (1, 10.0)):  # data set 1's interval lies far from the truth
        ci = np.c_[truth - 1.0, truth + 1.0] + offset
        cells = {1.0: (truth[None], ci[None], np.empty((0, 3)), None)}
        with open(folder / f"{i:04d}.pkl", "wb") as fh:
            pickle.dump(cells, fh)
    df = ke.paired_check(law, n, 0, 2, str(tmp_path))
    assert list(df.data_sets) == [2, 2, 2]
    assert list(df.private) == [0.5, 0.5, 0.5]
    for j, row in df.iterrows():
        o = hits[:, j]
        assert row.both_miss == int(not o[1])
        assert row.only_private_misses == int(o[1])
        assert row.only_oracle_misses == int(not o[0])


def test_world_errors_swaps_only_the_synthetic_errors_and_restores():
    """The diagnosis' worlds (``worlds_check``): inside ``world_errors`` the simulation's
    synthetic data have the library's design exactly and errors ``y - w^T theta~`` that are
    the given draw at the given sparsity; the worlds' laws have density ``1 / s`` at their
    median (KS against scipy); ``synthetic_data`` is the library's again after the block.
    Control: the library's own world at the same sparsity has other errors."""
    from types import SimpleNamespace

    from dpreg.linear_model import _inference_quantile as iq

    fit = SimpleNamespace(
        n=4000,
        tau=0.5,
        fit_intercept=True,
        active=np.array([True, True]),
        theta=np.array([1.0, 2.0, -1.0]),
        mid=np.zeros(2),
        half=np.ones(2),
    )
    gram = 4000 * np.diag([1.0, 1 / 3, 1 / 3])
    original = iq.synthetic_data
    s = 1.7
    X0, y0 = original(fit, gram, s, np.random.default_rng(1))
    for name in ("normal", "laplace"):
        with ke.world_errors(ke.WORLD_LAWS[name]):
            X1, y1 = iq.synthetic_data(fit, gram, s, np.random.default_rng(1))
        np.testing.assert_array_equal(X0, X1)
        e = y1 - np.c_[np.ones(fit.n), X1] @ fit.theta
        ref = (
            stats.norm(scale=s / np.sqrt(2 * np.pi))
            if name == "normal"
            else stats.laplace(scale=s / 2)
        )
        assert ref.pdf(0.0) == pytest.approx(1 / s)
        assert stats.kstest(e, ref.cdf).pvalue > 1e-3
        assert not np.allclose(y0, y1)
    assert iq.synthetic_data is original


def test_worlds_score_pools_files_and_takes_the_hull(tmp_path):
    """Fake files with known intervals: the library's world misses x1 on release 0, the
    other world misses it on release 1, so each covers 1/2 and their hull (the union of the
    windows) covers both; widths are the mean of each world's and of the hull's. A control
    for the table's bookkeeping (pooling two files, the hull's min/max)."""
    truth = cells_mod.KNG_BETA
    good = np.column_stack([truth - 1.0, truth + 1.0])  # (3, 2), covers every parameter
    bad = good.copy()
    bad[1] = [truth[1] + 0.5, truth[1] + 2.5]  # x1 misses, width 2
    paths = []
    for k, (a, b) in enumerate([(bad, good), (good, bad)]):
        path = tmp_path / f"f{k}.npz"
        np.savez(
            path,
            est=truth[None],
            sparsity=np.array([2.0]),
            ci_normal=a[None],
            ci_laplace=b[None],
        )
        paths.append(str(path))
    df = ke.worlds_score(",".join(paths)).set_index(["world", "param"])
    assert df.loc[("normal", "x1"), "coverage"] == 0.5
    assert df.loc[("laplace", "x1"), "coverage"] == 0.5
    assert df.loc[("hull normal, laplace", "x1"), "coverage"] == 1.0
    assert df.loc[("hull normal, laplace", "x1"), "mean_width"] == pytest.approx(3.5)
    assert df.loc[("normal", "const"), "coverage"] == 1.0
    assert df.loc[("normal", "x1"), "data_sets"] == 2
