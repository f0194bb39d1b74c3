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
