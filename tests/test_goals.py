"""The committed goal table of issue 14 is what ``benchmarks.goals`` computes from the CSVs."""

import shutil

import pandas as pd
import pytest

goals = pytest.importorskip("benchmarks.goals")


def test_committed_goal_table_is_recomputed_from_the_committed_results():
    committed = (goals.RESULTS / "goals.md").read_text()
    assert committed == goals.render(goals.table())


def test_a_changed_result_changes_its_verdict(tmp_path, monkeypatch):
    # control: the table is computed, not stored: a slower dask fit must flip the verdict
    for f in goals.RESULTS.glob("*.csv"):
        shutil.copy(f, tmp_path / f.name)
    monkeypatch.setattr(goals, "RESULTS", tmp_path)
    before = goals.table().set_index("goal")["verdict"]
    lin = pd.read_csv(tmp_path / "linear_dask.csv")
    lin.loc[lin["stage"].str.startswith("dpreg fit"), "ratio_to_bare"] = 1.5
    lin.to_csv(tmp_path / "linear_dask.csv", index=False)
    after = goals.table().set_index("goal")["verdict"]
    changed = before[before != after]
    assert len(changed) == 1 and "dask" in changed.index[0]
    assert changed.iloc[0] == "met" and after[changed.index[0]] == "**not met**"
