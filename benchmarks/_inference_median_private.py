"""Median intervals with ``scale="private"`` (issue #15): a few cells of the median inference
benchmark (``benchmarks.inference``, ``median_rows``) with the private scale.

``python -m benchmarks._inference_median_private [--reps 100] [--csv PATH] [--records PATH]
[--n N ...] [--start I] [--config private|default]`` (``--n`` a subset of the n, ``--start``
the first data set, for chunks: data set i keeps its stream; ``--config default`` runs the
default MAD scale with the main benchmark's interval instead, e.g. ``--start 300`` to extend
its 300 data sets per cell, as session 17 did at n = 1e5):
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
from benchmarks.inference import MEDIAN_N_BOOT, median_rows
from dpreg.location._inference import WINDOW

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


def run(reps, csv=None, records=None, ns=None, start=0, config="private"):
    """``config="default"`` runs the same cells with the default (MAD) scale and the main
    benchmark's interval (``MEDIAN_N_BOOT``), e.g. to extend its 300 data sets per cell with
    ``--start 300`` (data set i keeps its stream; only this configuration is fitted on it)."""
    if records is not None and config != "private":
        raise SystemExit("--records describes scale='private' fits only")
    n_boot = 1000 if config == "private" else MEDIAN_N_BOOT
    rows, recs = [], []
    for n, seed in N_SEEDS.items():
        if ns is not None and n not in ns:
            continue
        t = time.process_time()
        with recording() as log:
            cells = cells_mod.median_cells(
                n, reps, n_boot, seed=seed, configs=(config,), start=start
            )
        rows += median_rows(n, cells, seed=seed)
        if records is not None:
            recs += records_of(n, log, cells_mod.EPS_GRID, start=start)
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


def load_records(paths):
    """One dict of arrays from one or more records files (e.g. per-n chunks of a run)."""
    parts = [dict(np.load(p)) for p in paths]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def diagnose(paths, csv=None):
    """Per cell and coordinate, from records files (reads the data's sample median and MAD:
    a diagnosis, not the library):

    * ``coverage`` over the data sets, and in the thirds of ``s / (3 MAD)`` (the released
      scale over its value on the data set, ``cov_s_*``; its 10 / 90 % quantiles);
    * ``cond_coverage``: the mean over data sets of each interval's coverage *probability*
      given its released s and the cell's c, ``P(x~ - hi <= e <= x~ - lo)`` for
      ``e = true_sd xi + s R U`` (the exact release law given s and the median's normal law,
      200,000 draws); free of the Monte Carlo noise of which data sets missed, so it says
      whether the interval is calibrated given s; ``cond_cov_q05`` its 5 % quantile;
    * ``noise_ks`` / ``noise_ks_p``: KS test of the pooled PIT of ``(x~ - median) / s`` under
      ``R U`` (is the release law, in units of the released s, what the interval assumes);
    * ``se_ratio``: median released standard error of the median over the true one;
      ``sampling_share``: the median share of the interval's variance that is sampling;
    * ``window_min``: the smallest half-window ``w s`` of the median pair over the cell, in
      data standard deviations (below about 0.7 the pair would be clipped)."""
    from scipy import stats  # noqa: PLC0415

    r = load_records(paths)
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
            xi = rng.standard_normal(200_000)
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
                # the interval's coverage probability given its data set's released s and c:
                # P(x~ - hi <= e <= x~ - lo) for e = true_sd xi + s R U (exact given s)
                loc, s_j = r["location"][sel][:, j], r["scale"][sel][:, j]
                cond = np.array(
                    [
                        np.mean(np.abs(true_sd * xi + s_i * law - (x - (a + b) / 2)) <= (b - a) / 2)
                        for x, s_i, (a, b) in zip(loc, s_j, ci)
                    ]
                )
                out.append(
                    dict(
                        n=n,
                        epsilon=eps,
                        param=f"x{j + 1}",
                        reps=int(sel.sum()),
                        coverage=cover.mean(),
                        cond_coverage=cond.mean(),
                        cond_cov_q05=np.quantile(cond, 0.05),
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
                        window_min=np.min((WINDOW + 4.0 * 3.0 / c) * s_j),
                    )
                )
    df = pd.DataFrame(out)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(df.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if csv is not None:
        df.to_csv(csv, index=False)
    return df


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "diagnose":
        parser = argparse.ArgumentParser(description="diagnose records files")
        parser.add_argument("records", nargs="+")
        parser.add_argument("--csv", default=None)
        args = parser.parse_args(argv[1:])
        return diagnose(args.records, args.csv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--csv", default=None)
    parser.add_argument("--records", default=None)
    parser.add_argument("--n", type=int, nargs="*", default=None)
    parser.add_argument("--start", type=int, default=0, help="first data set (chunks)")
    parser.add_argument("--config", choices=("private", "default"), default="private")
    args = parser.parse_args(argv)
    return run(args.reps, args.csv, args.records, args.n, args.start, args.config)


if __name__ == "__main__":
    main()
