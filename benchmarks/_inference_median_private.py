"""Median intervals with ``scale="private"`` (issue #15): a few cells of the median inference
benchmark (``benchmarks.inference``, ``median_rows``) with the private scale.

``python -m benchmarks._inference_median_private [--reps 100] [--csv PATH] [--records PATH]``:
n = 1e3, 1e4 and 1e5 (every n where the default scale releases nothing in some cell),
epsilon 0.25 / 1 / 4, the same data streams as the main benchmark's median cells (seeds
3000 + i), the fit at ``(1 - SHARE) epsilon`` (of which ``scale_share="auto"`` goes to the
scales) and ``release_scale`` at ``SHARE epsilon``. Writes ``results/inference_median_private.csv``
(or ``--csv``). The asymptotic oracle uses the population value of the released scale
(``SCALE_FACTOR`` times the MAD of N(0, 1)) and ignores the scale release's own noise.

``--records PATH`` also stores, per data set and epsilon, what the fit released (centre,
scales, quantiles, standard error, c, interval) and what a diagnosis may read from the data
(sample median and MAD): :func:`recording` watches the fits of ``median_cells`` without
drawing anything, so the run is the same with or without it. ``python -m
benchmarks._inference_median_private diagnose PATH`` summarises such a file: coverage given
the released scale against the data's 3 MAD, the noise part's PIT under its law, the median
pair's standard error against the true one (session 12, docs/inference.md, "Released scales").
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

import numpy as np
import pandas as pd

from benchmarks import _inference_cells as cells_mod
from benchmarks._common import RESULTS
from benchmarks.inference import median_rows

N_SEEDS = {1000: 3000, 10000: 3001, 100000: 3002}


@contextlib.contextmanager
def recording():
    """Within the block, every ``median_cells`` fit is logged (in call order) with its data
    set's sample median and MAD; ``_inference_cells.median_fit`` is wrapped, not copied, and
    the wrapper draws nothing from the stream."""
    log = []
    fit = cells_mod.median_fit

    def logged(X, epsilon, config, rng):
        model = fit(X, epsilon, config, rng)
        med = np.median(X, axis=0)
        log.append(dict(model=model, median=med, mad=np.median(np.abs(X - med), axis=0)))
        return model

    cells_mod.median_fit = logged
    try:
        yield log
    finally:
        cells_mod.median_fit = fit


def records_of(n, log, eps_grid, start=0):
    """Per-fit arrays from a :func:`recording` log of one ``median_cells(configs=("private",))``
    run: NaN where nothing was released."""
    k = len(eps_grid)
    nan2 = np.full(2, np.nan)
    rows = []
    for idx, entry in enumerate(log):
        m = entry["model"]
        rel = getattr(m, "inference_release_", None)
        released = hasattr(m, "location_")
        ci = m.conf_int(0.05, n_boot=1000) if released else np.full((2, 2), np.nan)
        rows.append(
            dict(
                n=n,
                i=start + idx // k,
                epsilon=eps_grid[idx % k],
                released=released,
                location=m.location_ if released else nan2,
                scale=getattr(m, "public_scale_", nan2),
                c=_c(m) if released else np.nan,
                median_sd=rel.median_sd if released else nan2,
                quantiles=rel.quantiles if released else np.full((2, 2), np.nan),
                ci=ci,
                sample_median=entry["median"],
                sample_mad=entry["mad"],
            )
        )
    return rows


def _c(model):
    from dpreg.location._inference import inverse_temperature  # noqa: PLC0415

    return inverse_temperature(model)


def save_records(path, rows):
    keys = rows[0].keys()
    np.savez_compressed(path, **{k: np.array([r[k] for r in rows]) for k in keys})


def run(reps, csv=None, records=None, ns=None):
    rows, recs = [], []
    for n, seed in N_SEEDS.items():
        if ns is not None and n not in ns:
            continue
        t = time.process_time()
        with recording() as log:
            cells = cells_mod.median_cells(n, reps, 1000, seed=seed, configs=("private",))
        rows += median_rows(n, cells, seed=seed)
        if records is not None:
            recs += records_of(n, log, cells_mod.EPS_GRID)
        print(f"n={n}: {time.process_time() - t:.0f} CPU s", flush=True)
    df = pd.DataFrame(rows)
    cols = ["n", "epsilon", "param", "reps", "ptr_failed", "ptr_refused", "coverage"]
    cols += ["coverage_mc_sd"]
    cols += ["mean_width", "width_ratio", "width_ratio_asym", "sd_ratio"]
    print(df[[c for c in cols if c in df]].to_string(index=False))
    df.to_csv(RESULTS / "inference_median_private.csv" if csv is None else csv, index=False)
    if records is not None:
        save_records(records, recs)
    return df


def diagnose(path):
    """Per cell and coordinate, from a records file (reads the data's sample median and MAD:
    a diagnosis, not the library): coverage overall and in the thirds of ``s / (3 MAD)``,
    the KS distance of the noise ``(x~ - median) / s`` from its exact law ``R U`` (pooled
    PIT, from 200,000 draws of the law at each fit's c), the released standard error over
    the true one and the share of the interval's variance that is sampling."""
    from scipy import stats  # noqa: PLC0415

    r = dict(np.load(path))
    truth = cells_mod.MEDIAN_TRUTH
    rng = np.random.default_rng(0)
    out = []
    for n in np.unique(r["n"]):
        true_sd = cells_mod.NORMAL_SPARSITY / (2.0 * np.sqrt(n))
        for eps in np.unique(r["epsilon"]):
            sel = (r["n"] == n) & (r["epsilon"] == eps) & r["released"]
            if sel.sum() < 2:
                continue
            c = r["c"][sel][0]
            law = rng.gamma(3.0, 1.0 / c, 200_000) * rng.uniform(-1, 1, 200_000)
            law.sort()
            for j in range(2):
                ci = r["ci"][sel][:, j]
                cover = (ci[:, 0] <= truth[j]) & (truth[j] <= ci[:, 1])
                ratio = r["scale"][sel][:, j] / (3.0 * r["sample_mad"][sel][:, j])
                cuts = np.quantile(ratio, [1 / 3, 2 / 3])
                third = np.digitize(ratio, cuts)
                z = (r["location"][sel][:, j] - r["sample_median"][sel][:, j]) / r["scale"][sel][
                    :, j
                ]
                pit = np.searchsorted(law, z) / law.size
                ks = stats.kstest(pit, "uniform")
                noise_var = r["scale"][sel][:, j] ** 2 * 12.0 / c**2 / 3.0  # E R^2 E U^2
                sd = r["median_sd"][sel][:, j]
                out.append(
                    dict(
                        n=n,
                        epsilon=eps,
                        param=f"x{j + 1}",
                        reps=int(sel.sum()),
                        coverage=cover.mean(),
                        cov_s_low=cover[third == 0].mean(),
                        cov_s_mid=cover[third == 1].mean(),
                        cov_s_high=cover[third == 2].mean(),
                        s_ratio_q10=np.quantile(ratio, 0.1),
                        s_ratio_q90=np.quantile(ratio, 0.9),
                        noise_ks=ks.statistic,
                        noise_ks_p=ks.pvalue,
                        se_ratio=np.median(sd / true_sd),
                        sampling_share=np.median(true_sd**2 / (true_sd**2 + noise_var)),
                        mean_width=np.mean(ci[:, 1] - ci[:, 0]),
                    )
                )
    df = pd.DataFrame(out)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(df.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    return df


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "diagnose":
        return diagnose(argv[1])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--csv", default=None)
    parser.add_argument("--records", default=None)
    parser.add_argument("--n", type=int, nargs="*", default=None)
    args = parser.parse_args(argv)
    return run(args.reps, args.csv, args.records, args.n)


if __name__ == "__main__":
    main()
