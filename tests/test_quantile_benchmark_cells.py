"""benchmarks.quantile timing cells: a fit past its cap is recorded, never waited for."""

import time

import numpy as np
import pandas as pd

from benchmarks._quantile_cells import cell_data, refused, run_cell
from benchmarks.quantile import scaling_table, timing_lines
from dpreg.linear_model.quantile import MAX_EXACT_ROWS


def test_a_fit_over_its_cap_is_killed_and_recorded_as_timeout():
    # HiGHS at n = 1e6 takes far longer than 0.5 s (even the child's imports do)
    w0 = time.perf_counter()
    row = run_cell("highs", 2, 1_000_000, 0, cap=0.5)
    assert row["status"] == "timeout"
    assert time.perf_counter() - w0 < 120  # ended at the cap (HiGHS alone needs far longer)
    assert "cpu_seconds" not in row


def test_cells_beyond_the_public_row_limit_are_refused_without_a_process():
    for d, limit in MAX_EXACT_ROWS.items():
        assert refused("kng", d, limit + 1) and not refused("kng", d, limit)
        row = run_cell("kng", d, limit + 1, 0, cap=0.01)  # a child could not even start
        assert row["status"] == "refused"
    assert not refused("op", 5, 10**7) and not refused("highs", 5, 10**7)


def test_cell_data_is_the_shared_design():
    X, y = cell_data(3, 500)
    X2, y2 = cell_data(3, 500)
    assert X.shape == (500, 2) and np.array_equal(y, y2) and np.array_equal(X, X2)
    resid = y - X @ np.array([1.0, -1.0])
    assert abs(np.median(resid)) < 0.2


def _row(method, d, n, status, cpu=np.nan, **kw):
    return dict(method=method, d=d, n=n, rep=0, cap=120.0, status=status, cpu_seconds=cpu, **kw)


def test_tables_show_timeouts_refusals_and_bounded_ratios():
    kng = dict(wall_seconds=2.0, n_boxes=100, n_proposals=4, acceptance_bound=0.5)
    df = pd.DataFrame(
        [
            _row("kng", 2, 1000, "ok", 1.0, **kng),
            _row("op", 2, 1000, "ok", 0.1),
            _row("highs", 2, 1000, "ok", 4.0),
            _row("kng", 2, 10**6, "ok", 6.0, **kng),
            _row("op", 2, 10**6, "ok", 1.0),
            _row("highs", 2, 10**6, "timeout"),
            _row("kng", 5, 10**6, "refused"),
            _row("op", 5, 10**6, "ok", 1.5),
            _row("highs", 5, 10**6, "timeout"),
        ]
    )
    lines = scaling_table(df).splitlines()
    assert "| 0.25 |" in lines[2]  # 1.0 / 4.0
    assert "timeout > 120 CPU s" in lines[3] and "< 0.05 |" in lines[3]  # 6 / 120
    assert "refused" in lines[4] and lines[4].count("timeout") == 1

    tim = pd.DataFrame(
        [
            dict(
                method="KNG exact", n=10**6, d=2, status="ok", cap=300.0, seconds=6.0, cpu_seconds=5
            ),
            dict(method="sklearn highs", n=10**6, d=2, status="timeout", cap=300.0),
        ]
    )
    text = timing_lines(tim)
    assert "timeout > 300 CPU s" in text and "< 0.0167 CPU" in text
