"""Runs examples/private_workflow.py with PrivacyLeakWarning as an error and checks its numbers."""

import os
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "private_workflow.py"


def test_private_workflow_example(tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PYTHONPATH"] = str(SCRIPT.parents[1]) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-W", "error::dpreg.exceptions.PrivacyLeakWarning", str(SCRIPT)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "Warning" not in proc.stderr, proc.stderr
    spent = float(re.search(r"total epsilon spent: ([0-9.]+) \(delta 0.0\)", out).group(1))
    assert abs(spent - 3.0) < 1e-6
    ledger = re.search(r"ledger: (\[.*\])", out).group(1)
    assert ledger.count("(") == 2  # the target's bounds and the whole search, one ledger
    private = float(re.search(r"test R\^2 private workflow: ([-0-9.]+)", out).group(1))
    public = float(re.search(r"test R\^2 non-private pipeline: ([-0-9.]+)", out).group(1))
    assert 0.55 < public < 0.65
    assert private > 0.9 * public
    lo, hi = (
        float(v.replace(",", ""))
        for v in re.search(r"private target bounds: \(([0-9,.-]+), ([0-9,.-]+)\)", out).groups()
    )
    assert 10_000 < lo < 50_000 < 80_000 < hi < 150_000
