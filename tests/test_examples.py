"""Run every script in examples/ (executed, not just present) with a non-interactive backend."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

EXPECTED = {
    "quickstart.py": ["diabetes R^2", "breast cancer accuracy", "Engel median regression"],
    "pipeline_gridsearch.py": ["best parameters", "budget spent", "refused"],
    "norm_choice.py": ["choose_norm picks: linf", "empirical per-coordinate variance"],
    "private_centring.py": ["sample mean", "private", "pipeline"],
    "private_workflow.py": ["total epsilon spent: 3.000000", "test R^2 private workflow"],
}


def test_every_example_is_listed():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_example_runs(script, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for text in EXPECTED[script]:
        assert text in proc.stdout, (text, proc.stdout)
    assert "Traceback" not in proc.stderr


def test_benchmark_runner_lists_and_summarises(tmp_path):
    """``python -m benchmarks`` finds the benchmark modules; its Markdown helpers render."""
    pd = pytest.importorskip("pandas")
    root = EXAMPLES.parent
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--list"],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    names = proc.stdout.split()
    assert "noise" in names and not any(n.startswith("_") for n in names)
    sys.path.insert(0, str(root))
    try:
        from benchmarks.__main__ import _summary_generic, markdown_table
    finally:
        sys.path.remove(str(root))
    df = pd.DataFrame({"method": ["a", "b"], "error_ratio": [0.5, float("nan")]})
    table = markdown_table(df, index=False)
    assert table.splitlines()[0] == "| method | error_ratio |"
    assert "| a | 0.5 |" in table and "| b |  |" in table
    assert "error_ratio" in _summary_generic(df)
