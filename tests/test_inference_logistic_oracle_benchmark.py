"""The logistic cells' pooled oracle (benchmarks.inference, _inference_logistic_oracle)."""

import numpy as np
import pandas as pd
import pytest

from benchmarks import _inference_cells as cells_mod
from benchmarks import _inference_logistic_oracle as lo
from benchmarks import inference as inf


def _rows(est, ci):
    return inf.score(1000, 1.0, est, ci, cells_mod.LOGIT_BETA, cells_mod.LOGIT_NAMES, "logistic")


def _spread(a):
    lo_, hi = np.quantile(a, [0.025, 0.975], axis=0)
    return hi - lo_


def test_pooling_without_extra_data_sets_is_the_coverage_only_oracle():
    rng = np.random.default_rng(0)
    own = tuple(rng.standard_normal((40, 3)) * s for s in (1.0, 0.8, 1.2))
    more = tuple(rng.standard_normal((60, 3)) * 2.0 for _ in range(3))
    empty = tuple(np.empty((0, 3)) for _ in range(3))
    ci = np.stack([own[0] - 2.0, own[0] + 2.0], axis=2)
    alone = inf.with_logistic_oracles(_rows(own[0], ci), own, empty)
    pooled = inf.with_logistic_oracles(_rows(own[0], ci), own, more)
    for j, (a, p) in enumerate(zip(alone, pooled)):
        assert a["reps"] == p["reps"] == 40
        assert a["oracle_reps"] == 40 and p["oracle_reps"] == 100
        assert a["mean_width"] == p["mean_width"] == pytest.approx(4.0)
        for key, k in (("", 0), ("_full", 1), ("_deshrunk", 2)):
            assert a[f"oracle_width{key}"] == _spread(own[k])[j]
            assert p[f"oracle_width{key}"] == _spread(np.vstack([own[k], more[k]]))[j]
            assert a[f"width_ratio{key}"] == a["mean_width"] / a[f"oracle_width{key}"]
            # control: the extra data sets (twice the spread) do change the pooled width
            assert p[f"oracle_width{key}"] > 1.2 * a[f"oracle_width{key}"]


def test_estimate_only_stream_is_the_coverage_stream_without_intervals():
    cells = cells_mod.logistic_cells(1000, 1, 20, seed=7)
    only = cells_mod.logistic_estimates(1000, 1, seed=7)
    other = cells_mod.logistic_estimates(1000, 1, seed=8)
    for eps, (est, _, full, deshrunk) in cells.items():
        for a, b in zip(only[eps], (est, full, deshrunk)):
            assert a.shape == (1, 3) and np.array_equal(a, b)
        assert not np.array_equal(other[eps][0], est)  # control: another stream differs
    empty = cells_mod.logistic_estimates(1000, 0, seed=7)
    assert all(a.shape == (0, 3) for v in empty.values() for a in v)


def test_verify_stops_on_a_different_stream():
    ref = np.array([[1.0, 2.0, 3.0]] * 3)
    assert lo.verify(ref * (1 + 1e-12), ref, 1000, 1.0) < 1e-9
    with pytest.raises(SystemExit, match="do not reproduce"):
        lo.verify(ref * (1 + 1e-6), ref, 1000, 1.0)


def test_rescored_rows_have_run_logistic_columns():
    rng = np.random.default_rng(1)
    est = rng.standard_normal((5, 3))
    ci = np.stack([est - 1.0, est + 1.0], axis=2)
    scored = _rows(est, ci)
    table = pd.DataFrame(scored)
    rows = lo.committed_rows(table, 1000, 1.0)
    assert [list(r) for r in rows] == [list(r) for r in scored]
    for r, s in zip(rows, scored):
        assert all(r[k] == s[k] for k in lo.KEPT)
