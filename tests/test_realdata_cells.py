"""The targeted, paired mode of the real-data benchmarks (issue 14, close14).

``python -m benchmarks.realdata --cells ...`` and ``python -m benchmarks.realdata_logistic
--cells ...`` re-run only named cells with many more runs and judge the goal with the standard
error of the *paired* difference (same folds for dpreg and the anchor).
"""

import numpy as np
import pandas as pd
import pytest
from _matrix_rows import matrix_cell

from benchmarks import realdata
from benchmarks import realdata_logistic as rl


def test_parse_cells_checks_names_and_reads_epsilons():
    assert realdata.parse_cells("college:0.5, cps1988:4") == [("college", 0.5), ("cps1988", 4.0)]
    with pytest.raises(ValueError, match="DATASET:EPSILON"):
        realdata.parse_cells("college")
    with pytest.raises(ValueError, match="DATASET:EPSILON"):
        realdata.parse_cells("nosuchset:1")
    assert rl.parse_cells("default:0.1") == [("default", 0.1)]
    with pytest.raises(ValueError, match="DATASET:EPSILON"):
        rl.parse_cells("college:1")


def _units(fold_effect, own_sd, gap, n_folds=40, reps=5, seed=0, tukey_pass=0.0):
    """Synthetic paired runs: every method's R^2 in a fold shares ``fold_effect`` * a fold
    draw (how hard the held-out rows are); the method sits ``gap`` above AdaSSP's bar."""
    rng = np.random.default_rng(seed)
    rows = []
    for f in range(n_folds):
        shared = fold_effect * rng.normal()
        for rep in range(reps):
            scores = {
                "AdaSSP": 0.30 + shared + own_sd * rng.normal(),
                "BoostedAdaSSP": 0.10 + shared + own_sd * rng.normal(),
                "TukeyEM": 0.0,
                "dpreg boost auto": 0.30 - 0.005 + gap + shared + own_sd * rng.normal(),
            }
            for m, r2 in scores.items():
                ok = rng.random() < tukey_pass if m == "TukeyEM" else True
                rows.append(("toy", 1.0, f // 5, f % 5, rep, m, r2, ok))
    return pd.DataFrame(
        rows, columns=["dataset", "epsilon", "split", "fold", "rep", "method", "r2", "passed"]
    )


def test_paired_gap_matches_the_goal_and_removes_the_shared_fold_variation():
    u = _units(fold_effect=0.05, own_sd=0.005, gap=0.01)
    g = realdata.paired_gap(u)
    wide = u.pivot_table(index=["split", "fold", "rep"], columns="method", values="r2")
    # the gap is the goal's: median(dpreg) - (best bounded anchor's median - 0.005)
    assert g["bar_anchor"] == "AdaSSP"
    assert g["gap"] == pytest.approx(
        np.median(wide["dpreg boost auto"]) - np.median(wide["AdaSSP"]) + 0.005
    )
    assert g["runs"] == 200 and g["folds"] == 40
    # the fold effect is shared: the paired se is well below the independent one (not down
    # to the noise of the difference alone, own_sd * sqrt(2 / 200) ~ 0.0005: two medians can
    # land in different folds, 40 fold effects of sd 0.05 are ~0.003 apart near the middle)
    assert g["gap_se_paired"] < 0.5 * g["gap_se_independent"]
    assert 0.0003 < g["gap_se_paired"] < 0.004
    assert realdata.verdict(g["gap"], g["gap_se_paired"]) == "met (beyond 2 se)"
    # control: without a shared fold effect the two standard errors agree
    g0 = realdata.paired_gap(_units(fold_effect=0.0, own_sd=0.02, gap=0.0, seed=1))
    assert 0.6 < g0["gap_se_paired"] / g0["gap_se_independent"] < 1.5


def test_paired_gap_uses_tukey_only_where_its_test_passed():
    failed = realdata.paired_gap(_units(0.0, 0.01, 0.0, tukey_pass=0.0))
    assert failed["bar_anchor"] == "AdaSSP"
    # TukeyEM "released" 0.0 in every run: its bar (0.0) is below AdaSSP's, so still AdaSSP
    passed = realdata.paired_gap(_units(0.0, 0.01, 0.0, tukey_pass=1.0))
    assert passed["tukey_pass_rate"] == 1.0 and passed["bar_anchor"] == "AdaSSP"
    u = _units(0.0, 0.01, 0.0, tukey_pass=1.0)
    u.loc[u["method"] == "TukeyEM", "r2"] = 0.9
    g = realdata.paired_gap(u)
    assert g["bar_anchor"] == "TukeyEM" and g["bar"] == pytest.approx(0.9)
    assert realdata.verdict(g["gap"], g["gap_se_paired"]) == "not met (beyond 2 se)"


def test_verdict_words():
    assert realdata.verdict(0.0, 0.01) == "met (within 2 se)"
    assert realdata.verdict(-0.001, 0.01) == "not met (within 2 se)"
    assert realdata.verdict(-0.03, 0.01) == "not met (beyond 2 se)"


def test_run_cells_is_paired_and_split_zero_is_the_matrix():
    """Two cells of a small set, 1 draw, 2 splits: every unit has every method; split 0
    reproduces the matrix's runs (same folds and seeds)."""
    u = realdata.run_cells([("diabetes", 1.0)], reps=1, splits=2)
    methods = {"dpreg boost auto", *realdata.ANCHORS}
    assert set(u["method"]) == methods
    per_unit = u.groupby(["split", "fold", "rep"])["method"].nunique()
    assert len(per_unit) == 10 and (per_unit == len(methods)).all()
    matrix = pd.DataFrame(
        realdata.run_regression(names=["diabetes"], eps_grid=[1.0], reps=1)
    ).set_index("method")
    split0 = u[u["split"] == 0].groupby("method")["r2"].median()
    for m in methods:
        assert split0[m] == pytest.approx(matrix.loc[m, "score"], abs=1e-12)
    # another split gives other folds
    assert not np.allclose(
        u[(u["split"] == 0) & (u["method"] == "AdaSSP")]["r2"].to_numpy(),
        u[(u["split"] == 1) & (u["method"] == "AdaSSP")]["r2"].to_numpy(),
    )


def test_logistic_cells_summary_is_the_paired_mean_difference():
    rows = []
    rng = np.random.default_rng(0)
    for rep in range(4):
        for fold in range(5):
            hard = 0.1 * rng.normal()
            base = dict(dataset="toy", epsilon=0.5, rep=rep, fold=fold, delta=0.0)
            for m, s in (
                ("dpreg default", 0.80 + hard),
                ("DP-SGD (tuned)", 0.79 + hard + 0.001 * rng.normal()),
                ("output perturbation", 0.70 + hard),
                ("output perturbation (tuned)", 0.90 + hard),
                ("non-private", 0.95),
            ):
                rows.append(dict(base, method=m, score=s))
    tab = rl.cells_summary(pd.DataFrame(rows)).set_index("anchor")
    sgd = tab.loc["DP-SGD (tuned)"]
    assert sgd["runs"] == 20
    assert sgd["dpreg_minus_anchor"] == pytest.approx(0.01, abs=0.001)
    assert sgd["se"] < 0.001  # the shared fold difficulty cancels in the pair
    assert sgd["verdict"] == "met (beyond 2 se)"
    assert tab.loc["output perturbation (tuned)", "verdict"] == "not met (beyond 2 se)"


def test_matrix_goal_uses_the_paired_se_when_the_run_stored_it():
    rows = [
        matrix_cell("AdaSSP", 0.30, 0.01),
        matrix_cell("BoostedAdaSSP", 0.40, 0.03),
        matrix_cell("TukeyEM", 0.50, 0.02, pass_rate=0.2),
        dict(matrix_cell("dpreg boost auto", 0.38, 0.04), gap_paired=-0.015, gap_se_paired=0.004),
    ]
    g = realdata.goals(pd.DataFrame(rows)).iloc[0]
    assert g["boost_auto_gap"] == pytest.approx(0.38 - 0.395)
    assert g["gap_se"] == 0.004  # not hypot(0.04, 0.03)
    # -0.015 < -2 * 0.004: with the paired se this miss is beyond the Monte Carlo error
    assert "0 of its 1 unmet cells" in realdata.summary(pd.DataFrame(rows))


def test_within_fold_resampling_keeps_the_split_fixed():
    u = _units(fold_effect=0.05, own_sd=0.005, gap=0.01, n_folds=5, reps=40)
    within = realdata.paired_gap(u, clusters=False)
    # given the split, the fold effect is no error at all: about the noise of the difference
    assert within["gap_se_paired"] < 0.002
    assert within["gap"] == realdata.paired_gap(u)["gap"]


def test_variants_run_is_paired_and_restores_the_targeted_methods():
    from benchmarks import realdata_variants as rv

    before = dict(realdata.TARGETED_ONLY)
    variants = {"auto": rv.VARIANTS["auto"], "2 rounds": rv.VARIANTS["2 rounds"]}
    u = rv.run([("diabetes", 4.0)], splits=1, reps=1, variants=variants)
    assert realdata.TARGETED_ONLY == before
    per_unit = u.groupby(["split", "fold", "rep"])["method"].nunique()
    assert (per_unit == 2 + len(realdata.ANCHORS)).all()
    g = rv.gaps(u, variants)
    assert list(g["variant"]) == ["auto", "2 rounds"]
    # diabetes: n * eps = 1,414 < 2,000, so "auto" is the one-shot fit, unlike 2 rounds
    wide = u.pivot_table(index=["split", "fold", "rep"], columns="method", values="r2")
    assert not np.allclose(wide["v auto"], wide["v 2 rounds"])
    assert "| (bar) |" in rv.table(g)


def test_targeted_sections_are_appended_to_the_goal_tables():
    sec = realdata.targeted_section()
    assert sec.startswith("\n## Targeted cells, paired") and "--cells" in sec
    assert realdata.targeted_section(quick=True) == ""
    sec = rl.targeted_section()
    assert "## Targeted cells, paired" in sec and "--cells" in sec
