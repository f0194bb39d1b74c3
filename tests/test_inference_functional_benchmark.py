"""The functional cells of benchmarks.inference: the pooled oracle and its columns (issue #15)."""

import numpy as np

from benchmarks import inference as inf


def test_pooled_oracle_scores_against_all_estimates():
    est, ci = inf.cell_draws(1000, 3, 30, seed=1)[4.0]
    extra = inf.cell_estimates(1000, 5, seed=2)[4.0]
    assert est.shape == (3, 3) and ci.shape == (3, 3, 2) and extra.shape == (5, 3)
    pool = np.vstack([est, extra])
    rows = inf.with_pooled_oracle(inf.score(1000, 4.0, est, ci), pool)
    lo, hi = np.quantile(pool, [0.025, 0.975], axis=0)
    for j, r in enumerate(rows):
        assert r["reps"] == 3 and r["oracle_reps"] == 8
        assert np.isclose(r["oracle_width"], hi[j] - lo[j])
        assert np.isclose(r["width_ratio"], r["mean_width"] / (hi[j] - lo[j]))
        assert np.isclose(r["coverage_mc_sd"], np.sqrt(0.05 * 0.95 / 3))
