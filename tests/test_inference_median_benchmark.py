"""The median cells of benchmarks.inference: extended runs and cells that release nothing."""

import numpy as np
import pytest

from benchmarks import _inference_cells as cells_mod
from benchmarks import inference as inf

# n = 1000, epsilon = 4: the default (MAD) scale is refused before spending on every data set
# (PTRInfeasibleError, public parameters only), the public scale releases: both cheap
KW = dict(n_boot=50, seed=9, eps_grid=[4.0])


@pytest.fixture(scope="module")
def extended():
    return cells_mod.median_cells_extended(1000, {"default": 2, "public": 4}, **KW)


def test_extension_keeps_the_shorter_run_and_each_data_set_stream(extended):
    """The first data sets are the run of both scales, value for value; the public scale's
    extra data sets are the public-only run of those data sets (data set i keeps its
    stream). Control: where the default scale releases (n = 1e4, epsilon = 4; at n = 1e3 it
    is refused before it draws anything), a public-only run of the first data set differs
    from the both-scales run (the default fit draws first), so the check can fail."""
    both = cells_mod.median_cells(1000, 2, **KW)
    more = cells_mod.median_cells(1000, 2, configs=("public",), start=2, **KW)
    public = extended["public", 4.0]
    for key in ("est", "ci", "median_sd"):
        np.testing.assert_array_equal(public[key][:2], both["public", 4.0][key])
        np.testing.assert_array_equal(public[key][2:], more["public", 4.0][key])
    assert public["attempts"] == 4 and extended["default", 4.0]["attempts"] == 2
    both = cells_mod.median_cells(10_000, 1, **KW)
    alone = cells_mod.median_cells(10_000, 1, configs=("public",), **KW)
    assert len(both["default", 4.0]["est"]) == 1  # released: it drew from the stream
    assert not np.array_equal(alone["public", 4.0]["est"], both["public", 4.0]["est"])


def test_a_refused_cell_is_reported_as_nothing_released(extended):
    """CSV rows, summary and figure all say "nothing released" for the default scale, with
    the refusal counted as before any spend; the public cell is scored."""
    rows = inf.median_rows(1000, extended, seed=9, n_asym=2000)
    default = [r for r in rows if r["scale"] == "default"]
    public = [r for r in rows if r["scale"] == "public"]
    assert len(default) == len(public) == 2
    for r in default:
        assert r["reps"] == 0 and "coverage" not in r
        assert r["ptr_failed"] == r["ptr_refused"] == r["attempts"] == 2
        assert r["outcome"] == "nothing released: refused before spending (PTRInfeasibleError)"
    for r in public:
        assert r["reps"] == 4 and r["outcome"] == "released" and 0 <= r["coverage"] <= 1
    import pandas as pd

    df = pd.DataFrame(rows)
    assert "nothing released: refused" in inf.median_summary(df)
    fig = inf._median_figure(df)
    for ax in fig.axes[:2]:  # an "x" at epsilon = 4 on the coverage and width panels
        marks = [ln for ln in ax.get_lines() if ln.get_marker() == "x"]
        assert [list(ln.get_xdata()) for ln in marks] == [[4.0]]
    assert "nothing released" in fig.get_suptitle()


def test_outcome_names_every_case():
    cell = dict(attempts=10, failed=0, refused=0)
    assert inf.median_outcome(cell) == "released"
    assert inf.median_outcome(cell | dict(failed=3)) == "released in 7 of 10"
    assert "budget spent (PTRTestFailedError)" in inf.median_outcome(cell | dict(failed=10))
    mixed = inf.median_outcome(cell | dict(failed=10, refused=4))
    assert mixed == "nothing released: 4 refused before spending, 6 failed"
