"""The per-release table of ``benchmarks.private_bounds_diagnosis`` (``--per-release``)."""

import numpy as np
import pytest

from benchmarks.private_bounds_diagnosis import per_release_table


def _box(lo, hi):
    return np.array([lo]), np.array([hi])


def test_per_release_table_counts_off_boxes_and_failures():
    exact = _box(0.0, 2.0)  # centre 1, half-width 1
    good = (_box(0.1, 2.1), exact)  # centre off by 0.1 half-widths, same width
    wide = (_box(-3.0, 5.0), exact)  # 4x wider
    shifted = (_box(0.7, 2.7), exact)  # centre off by 0.7 half-widths
    per_fit = [
        [good, wide],
        [good, good],
        [shifted, good],
        [good, wide],
        [good, good],
    ]
    scores = [0.1, 0.8, 0.2, 0.9, 0.3]
    table = per_release_table(per_fit, scores, fail_below=0.5)
    assert table["p_off"].tolist() == [0.2, 0.4]
    assert table["n_off"].tolist() == [1, 2]
    assert table["p_fail_if_off"].tolist() == [1.0, 0.5]
    # fits 1 and 4 have every box good; one of them (score 0.3) fails
    assert table["p_fail_all_good"].iloc[0] == pytest.approx(0.5)
    assert table["n_all_good"].iloc[0] == 2


def test_narrow_box_counts_as_off():
    exact = _box(0.0, 2.0)
    narrow = (_box(0.8, 1.2), exact)  # 5x narrower
    table = per_release_table([[narrow]], [0.9], fail_below=0.5)
    assert table["p_off"].tolist() == [1.0]
    assert np.isnan(table["p_fail_all_good"].iloc[0])
