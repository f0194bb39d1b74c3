"""Make the committed KNG table say what the default interval does at n = 1e3, epsilon = 0.25.

``KNGQuantileRegressor.conf_int(method="auto")`` (the default) simulates the release's law
where the released linearisation check fails: at n = 1e3, epsilon = 0.25 in 200 of 200
released fits, at every other cell of the grid in none (docs/inference.md, "The simulation
bootstrap at small n·ε"). The committed ``inference_kng.csv`` came from the chunked runs of
``benchmarks._inference_kng_chunks`` (600 data sets at n = 1e3), made before that default, so
its three n = 1e3, epsilon = 0.25 rows held the linearised intervals.

``python -m benchmarks._inference_default_rows splice DIR`` replaces those three rows with the
default's intervals on the data sets that ``python -m benchmarks._inference_kng_sim run 1000
0.25 START STOP DIR linear,simulate`` stored in ``DIR/1000_0.25`` (one pickle per data set;
its ``simulate`` variant is the default's interval: the same data set streams, fit and
curvature draws as the chunked run, since epsilon = 0.25 is the first epsilon of each data
set's stream, and the same seeds; the default's interval of its draws within the box,
``_inference_kng_sim.intervals(..., "default")``, as ``conf_int`` takes it: the shortest
interval of the pivot in sessions 11-12, the draws' own shortest window at quantile 1/2 since
session 13). Per parameter:

* ``reps``, ``coverage``, ``mean_width``, ``coverage_mc_sd``: over the stored data sets;
* the four oracle widths are kept: they are spreads of *estimates*, which the interval method
  does not change, over the chunked run's 600 data sets pooled with estimate-only ones since
  session 13 (``oracle_reps``; ``_inference_kng_oracle``) or of the
  asymptotic laws; every ``width_ratio*`` is the new mean width over them;
* ``interval``: what ``method="auto"`` gives in the row's cell (``"simulate"`` here,
  ``"linear"`` in every other row).

The replaced rows are written once to ``inference_kng_linear_n1e3_eps0.25.csv`` (a second
splice leaves that file alone), and ``inference_kng.png`` is redrawn from the new table.
``check DIR`` refits data set 0 and compares the default ``conf_int`` with the stored
``simulate`` interval (about 15 CPU-s).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from . import _inference_cells as cells_mod
from . import _inference_kng_sim as kng_sim
from . import inference as inf
from ._common import save

N, EPS = 1000, 0.25
RESULTS = Path(__file__).parent / "results"
OLD_ROWS = f"inference_kng_linear_n1e3_eps{EPS:g}"


def default_intervals(folder):
    """``(ids, intervals (m, 3, 2))`` of the default ``conf_int`` on the stored data sets."""
    files = sorted((Path(folder) / f"{N}_{EPS:g}").glob("*.pkl"))
    if not files:
        raise SystemExit(f"no data sets in {Path(folder) / f'{N}_{EPS:g}'}")
    data = [pickle.loads(f.read_bytes()) for f in files]
    if any("simulate" not in d for d in data):
        raise SystemExit("every data set needs the 'simulate' variant (the default's interval)")
    ci = np.array([kng_sim.intervals(d["box"], *d["simulate"], "default") for d in data])
    return [int(f.stem) for f in files], ci


def splice(table, ci):
    """``(new table, replaced rows)``: the cell's rows of ``table`` rescored with ``ci``."""
    table = table.copy()
    if "interval" not in table:
        table["interval"] = "linear"
    if "oracle_reps" not in table:
        table.insert(table.columns.get_loc("reps") + 1, "oracle_reps", table["reps"])
    cell = (table.n == N) & (table.epsilon == EPS)
    if cell.sum() != len(cells_mod.KNG_NAMES):
        raise SystemExit(f"expected {len(cells_mod.KNG_NAMES)} rows for n={N}, eps={EPS:g}")
    old = table[cell].copy()
    cover = (ci[:, :, 0] <= cells_mod.KNG_BETA) & (cells_mod.KNG_BETA <= ci[:, :, 1])
    width = ci[:, :, 1] - ci[:, :, 0]
    for j, param in enumerate(cells_mod.KNG_NAMES):
        row = cell & (table.param == param)
        table.loc[row, ["reps", "coverage", "mean_width"]] = [
            len(ci),
            cover[:, j].mean(),
            width[:, j].mean(),
        ]
        table.loc[row, "coverage_mc_sd"] = float(np.sqrt(0.05 * 0.95 / len(ci)))
        for ratio in [c for c in table if c.startswith("width_ratio")]:
            oracle = "oracle_width" + ratio[len("width_ratio") :]
            table.loc[row, ratio] = width[:, j].mean() / table.loc[row, oracle]
        table.loc[row, "interval"] = "simulate"
    return table, old


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in ("splice", "check"):
        raise SystemExit("usage: splice DIR | check DIR")
    ids, ci = default_intervals(argv[1])
    if argv[0] == "check":
        cells = cells_mod.kng_cells(N, 1, 1000, 4000, eps_grid=[EPS], full_fits=False, start=ids[0])
        same = np.array_equal(cells[EPS][1][0], ci[0])
        print(f"data set {ids[0]}: the default conf_int equals the stored interval: {same}")
        return same
    table = pd.read_csv(RESULTS / "inference_kng.csv")
    new, old = splice(table, ci)
    if (old["interval"] == "linear").all() and not (RESULTS / f"{OLD_ROWS}.csv").exists():
        old.drop(columns="interval").to_csv(RESULTS / f"{OLD_ROWS}.csv", index=False)
    fig = inf._figure(new)
    fig.suptitle(
        f"KNG, default conf_int: n=1e3, eps=0.25 simulates ({len(ci)} data sets: "
        f"{min(ids)}-{max(ids)}), every other cell linearised",
        fontsize=8,
    )
    print(f"n={N}, epsilon={EPS:g}: {len(ci)} data sets")
    save(new, "inference_kng", fig)
    return new


if __name__ == "__main__":
    main()
