"""Median intervals with ``scale="private"`` (issue #15): a few cells of the median inference
benchmark (``benchmarks.inference``, ``median_rows``) with the private scale.

``python -m benchmarks._inference_median_private [--reps 100]``: n = 1e3, 1e4 and 1e5 (every
n where the default scale releases nothing in some cell), epsilon 0.25 / 1 / 4, the same data
streams as the main benchmark's median cells (seeds 3000 + i), the
fit at ``(1 - SHARE) epsilon`` (of which ``scale_share="auto"`` goes to the scales) and
``release_scale`` at ``SHARE epsilon``. Writes ``results/inference_median_private.csv``.
The asymptotic oracle uses the population value of the released scale (``SCALE_FACTOR``
times the MAD of N(0, 1)) and ignores the scale release's own noise.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from benchmarks import _inference_cells as cells_mod
from benchmarks._common import RESULTS
from benchmarks.inference import median_rows

N_SEEDS = {1000: 3000, 10000: 3001, 100000: 3002}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    args = parser.parse_args(argv)
    rows = []
    for n, seed in N_SEEDS.items():
        t = time.process_time()
        cells = cells_mod.median_cells(n, args.reps, 1000, seed=seed, configs=("private",))
        rows += median_rows(n, cells, seed=seed)
        print(f"n={n}: {time.process_time() - t:.0f} CPU s", flush=True)
    df = pd.DataFrame(rows)
    cols = ["n", "epsilon", "param", "reps", "ptr_failed", "ptr_refused", "coverage"]
    cols += ["coverage_mc_sd"]
    cols += ["mean_width", "width_ratio", "width_ratio_asym", "sd_ratio"]
    print(df[[c for c in cols if c in df]].to_string(index=False))
    df.to_csv(RESULTS / "inference_median_private.csv", index=False)
    return df


if __name__ == "__main__":
    main()
