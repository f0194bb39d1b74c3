"""benchmarks._inference_median_private: the recording of fits changes nothing, and its
records hold what the fits released."""

import numpy as np

from benchmarks import _inference_cells as cells_mod
from benchmarks import _inference_median_private as mp


def test_recording_draws_nothing_and_records_the_releases():
    """The same cells with and without the recording (it wraps median_fit and draws nothing);
    the records hold each fit's released centre and interval. Control: the wrapper is in
    place only inside the block."""
    kw = dict(n_boot=1000, seed=9, eps_grid=[4.0], configs=("private",))
    plain = cells_mod.median_cells(1000, 2, **kw)
    original = cells_mod.median_fit
    with mp.recording() as log:
        assert cells_mod.median_fit is not original
        watched = cells_mod.median_cells(1000, 2, **kw)
    assert cells_mod.median_fit is original
    for key in ("est", "ci", "median_sd"):
        np.testing.assert_array_equal(plain["private", 4.0][key], watched["private", 4.0][key])
    recs = mp.records_of(1000, log, [4.0])
    assert [r["i"] for r in recs] == [0, 1] and all(r["released"] for r in recs)
    np.testing.assert_array_equal([r["location"] for r in recs], watched["private", 4.0]["est"])
    # the benchmark's n_boot (1000): the records' intervals are the cells' ones
    np.testing.assert_array_equal([r["ci"] for r in recs], watched["private", 4.0]["ci"])
    assert all(np.all(r["scale"] > 0) for r in recs)
