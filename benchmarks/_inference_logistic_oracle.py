"""Rescore the committed logistic inference table against pooled oracle widths (session 13).

The committed ``benchmarks/results/inference_logistic.csv`` (session 7) took its three oracle
widths (the 2.5-97.5 % spread of the released estimates, of a whole-epsilon fit's and of the
de-shrunk estimates) from its 400 coverage data sets per cell alone; a tail spread of 400
estimates is uncertain by about 5 %. ``benchmarks.inference.run_logistic`` now pools them with
``LOGISTIC_ORACLE_REPS`` estimate-only data sets (``with_logistic_oracles``), as the functional
benchmark does. This module brings the committed table to that state without re-running the
intervals:

1. replays the coverage streams (seed ``LOGISTIC_SEED + i`` for the i-th n, 400 data sets:
   ``_inference_cells.logistic_estimates``; the intervals draw nothing from the stream, so the
   releases are the same) and **verifies** that their spreads reproduce the committed
   ``oracle_width``, ``oracle_width_full`` and ``oracle_width_deshrunk`` to a relative 1e-9
   (it stops otherwise). Once the table has been rescored, the 400-set widths are read from
   the record ``inference_logistic_oracle.csv`` written by the first rescoring;
2. adds the estimate-only data sets (seed ``LOGISTIC_ORACLE_SEED + i``) and writes the table
   ``run_logistic`` would write: ``reps``, ``coverage`` and ``mean_width`` copied from the
   committed table, the oracle widths, ratios, ``oracle_reps`` and ``coverage_mc_sd`` new,
   through ``benchmarks.inference``'s own ``with_logistic_oracles``, ``_figure`` and ``save``;
3. writes ``inference_logistic_oracle.csv``: per cell and parameter the 400-set and the pooled
   width of each oracle, the mean width over each, and a bootstrap sd of each width (the
   data sets resampled with replacement, ``BOOT`` resamples), so the 400-set widths' Monte
   Carlo error can be read off.

Run: ``python -m benchmarks._inference_logistic_oracle`` (about 1,000 CPU-s).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from . import _inference_cells as cells_mod
from . import inference as inf
from ._common import save

RESULTS = Path(__file__).parent / "results"
RECORD = "inference_logistic_oracle"
#: the three oracles of a logistic row (the suffix of their columns)
ORACLES = ("", "_full", "_deshrunk")
#: bootstrap resamples for the sd of an oracle width
BOOT = 200
#: the columns of a committed row that the rescoring keeps (the interval's numbers)
KEPT = ("estimator", "n", "epsilon", "param", "reps", "coverage", "mean_width")


def committed_rows(table, n, eps):
    """The committed rows of cell ``(n, eps)`` in ``LOGIT_NAMES`` order, as dicts with the
    keys, in order, of ``inference.score``'s rows (their oracle width and ratio unset), so
    the rescored table has ``run_logistic``'s columns."""
    cell = table[(table.n == n) & (table.epsilon == eps)].set_index("param")
    rows = []
    for name in cells_mod.LOGIT_NAMES:
        row = {k: (name if k == "param" else cell.loc[name, k]) for k in KEPT}
        rows.append(row | dict(oracle_width=np.nan, width_ratio=np.nan))
    return rows


def spreads(arrays):
    """The 2.5-97.5 % spread per column of each array of ``arrays``, stacked ``(len, k)``."""
    return np.array([inf.oracle_spread(a) for a in arrays])


def verify(replayed, reference, n, eps, rtol=1e-9):
    """Stop unless the replayed 400-set spreads equal the committed widths (per oracle)."""
    rel = np.abs(replayed / reference - 1.0)
    if not np.all(rel <= rtol):
        raise SystemExit(
            f"n = {n}, eps = {eps:g}: the replayed estimates do not reproduce the committed "
            f"oracle widths (max relative difference {rel.max():.3g}): {replayed} vs {reference}"
        )
    return float(rel.max())


#: bootstrap sd of an oracle width per column (one helper, ``benchmarks.inference``)
boot_sd = inf.oracle_spread_sd


def reference_widths(table):
    """The committed 400-set widths ``{(n, eps, param): [own, full, deshrunk]}``: the table's
    own columns before the rescoring (no ``oracle_reps``), the record's after it."""
    if "oracle_reps" in table:
        table, suffix = pd.read_csv(RESULTS / f"{RECORD}.csv"), "_400"
    else:
        suffix = ""
    cols = [f"oracle_width{k}{suffix}" for k in ORACLES]
    return {
        (r.n, r.epsilon, r.param): np.array([getattr(r, c) for c in cols])
        for r in table.itertuples()
    }


def meets(row, key=""):
    return bool(0.93 <= row["coverage"] <= 0.97 and row[f"width_ratio{key}"] <= 1.3)


def rescore(extra_reps=None, boot=BOOT, seed=0):
    extra_reps = inf.LOGISTIC_ORACLE_REPS if extra_reps is None else extra_reps
    table = pd.read_csv(RESULTS / "inference_logistic.csv")
    reference = reference_widths(table)
    rng = np.random.default_rng(seed)
    rows, record, cpu = [], [], {}
    for i, n in enumerate(inf.N_GRID):
        t = time.process_time()
        own = cells_mod.logistic_estimates(n, inf.LOGISTIC_REPS, inf.LOGISTIC_SEED + i)
        t_own = time.process_time() - t
        more = cells_mod.logistic_estimates(n, extra_reps[n], inf.LOGISTIC_ORACLE_SEED + i)
        cpu[n] = (t_own, time.process_time() - t - t_own)
        for eps in cells_mod.EPS_GRID:
            old = spreads(own[eps])  # (3 oracles, 3 params)
            ref = np.array([reference[n, eps, p] for p in cells_mod.LOGIT_NAMES]).T
            worst = verify(old, ref, n, eps)
            new = inf.with_logistic_oracles(committed_rows(table, n, eps), own[eps], more[eps])
            pooled = [np.vstack(pair) for pair in zip(own[eps], more[eps])]
            sd_old = [boot_sd(a, rng, boot) for a in own[eps]]
            sd_new = [boot_sd(a, rng, boot) for a in pooled]
            for j, r in enumerate(new):
                rec = {k: r[k] for k in ("n", "epsilon", "param", "reps", "oracle_reps")}
                rec |= dict(coverage=r["coverage"], mean_width=r["mean_width"])
                for o, key in enumerate(ORACLES):
                    rec[f"oracle_width{key}_400"] = old[o, j]
                    rec[f"oracle_width{key}"] = r[f"oracle_width{key}"]
                    rec[f"boot_sd{key}_400"] = sd_old[o][j]
                    rec[f"boot_sd{key}"] = sd_new[o][j]
                    rec[f"width_ratio{key}_400"] = r["mean_width"] / old[o, j]
                    rec[f"width_ratio{key}"] = r[f"width_ratio{key}"]
                rec["max_rel_diff_400"] = worst
                record.append(rec)
            rows += new
        print(
            f"n = {n}: replay of {inf.LOGISTIC_REPS} coverage data sets {cpu[n][0]:.0f} CPU-s, "
            f"{extra_reps[n]} estimate-only data sets {cpu[n][1]:.0f} CPU-s",
            flush=True,
        )
    df, rec = pd.DataFrame(rows), pd.DataFrame(record)
    print(inf.summary(df))
    print(report(rec))
    save(df, "inference_logistic", inf._figure(df))
    save(rec, RECORD)
    return df, rec


def report(rec) -> str:
    """Markdown table: per parameter-cell the 400-set and pooled widths (bootstrap sd) and
    ratios of the three oracles, and whether the cell meets the target before and after."""
    lines = [
        "| n | ε | param | coverage | oracle 400 → pooled (boot sd) | ratio | whole-ε oracle "
        "400 → pooled (boot sd) | ratio | de-shrunk 400 → pooled (boot sd) | ratio | "
        "meets before / after |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rec.to_dict("records"):
        cells = [f"{r['n']:.0e}", f"{r['epsilon']:g}", r["param"], f"{r['coverage']:.3f}"]
        for key in ORACLES:
            a, b = r[f"oracle_width{key}_400"], r[f"oracle_width{key}"]
            sa, sb = r[f"boot_sd{key}_400"], r[f"boot_sd{key}"]
            cells.append(f"{a:.4g} ({sa:.2g}) → {b:.4g} ({sb:.2g})")
            cells.append(f"{r[f'width_ratio{key}_400']:.2f} → {r[f'width_ratio{key}']:.2f}")
        before = 0.93 <= r["coverage"] <= 0.97 and r["width_ratio_400"] <= 1.3
        cells.append(f"{'yes' if before else 'no'} / {'yes' if meets(r) else 'no'}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    rescore()
