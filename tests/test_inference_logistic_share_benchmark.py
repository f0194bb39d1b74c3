"""The Hessian-share sweep of benchmarks/_inference_logistic_nc.py (issue 15, docs/inference.md,
"Non-centred designs (session 12)"): the shares are compared on the same data sets, every
interval spends exactly epsilon, and the scores are those of the arrays."""

import numpy as np
import pytest

from benchmarks import _inference_logistic_nc as nc
from benchmarks._inference_logistic_sim import release
from dpreg import BudgetAccountant


def test_shares_see_the_same_data_and_spend_epsilon():
    """The paired comparison needs the data of data set i to be the same at every share and
    each release to spend (1 - share) eps + share eps = eps. Control: data set i + 1 differs,
    so the equality can fail."""
    ledgers = {s: BudgetAccountant() for s in (0.2, 0.4)}
    out = {s: release(300, 1.0, 1202, 0, ledgers[s], s, -1.0) for s in ledgers}
    np.testing.assert_array_equal(out[0.2][1], out[0.4][1])
    np.testing.assert_array_equal(out[0.2][2], out[0.4][2])
    other = release(300, 1.0, 1202, 1, BudgetAccountant(), 0.2, -1.0)
    assert not np.array_equal(other[1], out[0.2][1])
    for s, ledger in ledgers.items():
        assert sorted(e for e, _ in ledger.ledger) == pytest.approx(sorted([s, 1.0 - s]))
    assert not np.array_equal(out[0.2][0].theta_, out[0.4][0].theta_)  # other fits


def test_sweep_scores_its_arrays(tmp_path, monkeypatch):
    """Two data sets, the rule's share and 0.4: the library is replayed exactly (asserted
    inside), the default's width over itself is 1, and the coverage is the share of
    intervals that hold the truth, recomputed here from the arrays."""
    monkeypatch.setattr(nc, "RESULTS", tmp_path)
    nc.share_sweep(1000, 1.0, 2, 0, -1.0, ["rule", "0.4"])
    path = nc._share_name(1000, 1.0, nc.SHARE_SEEDS[-1.0, 1000], 0, -1.0)
    d = np.load(path)
    assert set(d.files) >= {"full", "est_0.2", "b_0.4", "library_0.4", "rule"}
    rows = nc.share_rows([path])
    assert len(rows) == 2 * 2 * 3
    rule_lib = [r for r in rows if r["rule_share"] and r["interval"].startswith("library")]
    assert [r["width_over_default"] for r in rule_lib] == [1.0, 1.0, 1.0]
    ci = d["b_0.4"]
    hit = ((ci[:, :, 0] <= nc.LOGIT_BETA) & (nc.LOGIT_BETA <= ci[:, :, 1])).mean(0)
    b04 = [r["coverage"] for r in rows if r["share"] == 0.4 and r["interval"].startswith("(b)")]
    np.testing.assert_array_equal(b04, hit)
