"""Helpers shared by the benchmarks: results folder, CSV/PNG output, diffprivlib baselines.

diffprivlib does not import with the newest scikit-learn, so it is run in a separate
interpreter (``DPREG_DIFFPRIVLIB_PYTHON``, default ``/work/dpl-venv/bin/python``) through a
subprocess; the benchmarks skip its columns, with a note, when that interpreter is missing.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

_WORKER = r"""
import pickle, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
import diffprivlib.models as dm
jobs = pickle.load(open(sys.argv[1], "rb"))
out = []
for name, kwargs, X, y in jobs:
    model = getattr(dm, name)(**kwargs).fit(X, y)
    out.append((np.asarray(model.coef_, float), np.asarray(model.intercept_, float)))
pickle.dump(out, open(sys.argv[2], "wb"))
"""


def diffprivlib_python():
    """Path of the interpreter that has diffprivlib, or None when it is not available."""
    path = os.environ.get("DPREG_DIFFPRIVLIB_PYTHON", "/work/dpl-venv/bin/python")
    if not Path(path).exists():
        return None
    probe = subprocess.run([path, "-c", "import diffprivlib"], capture_output=True)
    return path if probe.returncode == 0 else None


def diffprivlib_fit(jobs):
    """Fit diffprivlib models in one subprocess.

    ``jobs`` is a list of ``(model_name, init_kwargs, X, y)``, e.g.
    ``("LinearRegression", {"epsilon": 1.0, "bounds_X": (-1, 1), "bounds_y": (-1, 1)}, X, y)``.
    Returns a list of ``(coef_, intercept_)`` or None when diffprivlib is unavailable.
    """
    python = diffprivlib_python()
    if python is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "jobs.pkl", Path(tmp) / "out.pkl"
        with open(src, "wb") as fh:
            pickle.dump(jobs, fh)
        subprocess.run([python, "-c", _WORKER, str(src), str(dst)], check=True)
        with open(dst, "rb") as fh:
            return pickle.load(fh)


def results_dir(quick=False):
    """``results/`` for full runs; ``results/quick/`` (not committed) for ``--quick`` runs, so a
    smoke run never overwrites the committed full-run numbers."""
    return RESULTS / "quick" if quick else RESULTS


def pipe_table(df):
    """A pipe (Markdown) table of ``df``'s columns, values as ``str`` gives them (pandas'
    ``to_markdown`` needs the extra ``tabulate`` package)."""
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "---|" * len(df.columns)
    body = ["| " + " | ".join(map(str, r)) + " |" for r in df.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def cells_section(stem, quick=False, lead="\n"):
    """The committed targeted, paired re-runs ``<stem>.md`` (``--cells`` of the real-data
    benchmarks) as a section to append to a matrix's summary: they decide the cells the
    matrix's run count left open. Empty for quick runs or when the file does not exist."""
    path = results_dir(quick) / f"{stem}.md"
    if quick or not path.exists():
        return ""
    body = path.read_text().split("\n", 1)[1]
    return f"{lead}## Targeted cells, paired (`{stem}.md`)\n" + body


def save(df, name, fig=None, quick=False):
    """Write ``<name>.csv`` (and ``<name>.png`` from a matplotlib figure) to :func:`results_dir`."""
    out = results_dir(quick)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / f"{name}.csv", index=False)
    if fig is not None:
        fig.savefig(out / f"{name}.png", dpi=120, bbox_inches="tight")
    print(f"wrote {out / (name + '.csv')}" + (" and .png" if fig is not None else ""))


def cli_parser(doc):
    """The command line every benchmark shares: ``--quick`` (small sizes) or ``--full``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="small sizes (< 2 min)")
    group.add_argument("--full", action="store_true", help="full settings (default)")
    return parser
