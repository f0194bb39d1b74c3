"""KNG simulated intervals at a quantile other than 1/2 (issue 15, session 13; a diagnosis).

Since session 13 the default simulated interval at tau = 1/2 is the synthetic draws' own
shortest window (``_inference_quantile.simulated_interval``); at tau != 1/2 it stays the
shortest interval of the pivot, because the world's law is not symmetric there
(docs/inference.md, "The direct orientation at tau = 1/2"). Replacing the errors e by -e maps
the quantile-tau gradient at delta to minus the quantile-(1 - tau) gradient at -delta, so the
analogue of the draws' own window at tau is the window of a *mirrored* world: the same
synthetic design and truth theta~, errors -e (their (1 - tau)-quantile is 0) and synthetic
fits at level 1 - tau. This module measures, at tau = ``TAU``, n = 1e3, epsilon = 0.25 (the
fit 0.15, the curvature 0.1, as in the cells), on the centred and the non-centred design
(``x1 ~ U[-0.3, 1]``, bounds (-1, 1)) of ``_inference_kng_robust``:

* ``pivot``: the shortest interval of the pivot of the unmirrored world's draws (the default
  of sessions 11-12; ``_inference_quantile.simulate(..., mirror=False)``, the same seeds);
* ``mirror``: the mirrored world's own shortest window, the library's default since session
  13 (``conf_int``; the non-centred rows were first measured with the same world built by
  swapping the library's synthetic data and level for the call, and the library reproduces
  those intervals exactly on data sets 0 and 1).

It reads the truth (coverage) and nothing else of the data; the worlds use released values.

``run DESIGN START STOP DIR``: per data set the two intervals (``DIR/DESIGN_NNNN.npz``);
``score DIR [NAME]``: coverage and mean widths per design (``NAME``: CSV in
``benchmarks/results``). The CPU seconds are printed.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from dpreg._random import release_seed
from dpreg.linear_model import _inference_quantile as iq

from . import _inference_cells as cells_mod

TAU = 0.25
N, EPS = 1000, 0.25
#: the designs: ``x1``'s lower end and the data sets' stream (non-centred: session 11's seed)
DESIGNS = {"centred": (-1.0, 4000), "noncentred": (-0.3, 15025)}
#: the true quantile-TAU coefficients of y = 1 + 2 x1 - x2 + N(0, 1)
TRUTH = cells_mod.KNG_BETA + np.array([norm.ppf(TAU), 0.0, 0.0])
RESULTS = Path(__file__).parent / "results"


def intervals(model):
    """``(estimate, pivot interval, mirrored-window interval)`` of one release: the library's
    default ``conf_int`` (the mirrored world's own window since session 13) and the pivot of
    the unmirrored world's draws (the default of sessions 11-12), with the same seeds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mirror = model.conf_int()
    assert model._inference_cache[1][0] == "simulate", "the check did not fire"
    fit, rel = iq._release(model)
    seed = release_seed(*iq.released_values(fit, rel))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est, draws = iq.simulate(model, iq.DEFAULT_N_SIM, random_state=seed, mirror=False)
    pivot = iq.shortest_interval(est, draws, 0.05, iq.box_ranges(fit))
    return est, pivot, mirror


def run(design, start, stop, out):
    x1_low, seed = DESIGNS[design]
    Path(out).mkdir(parents=True, exist_ok=True)
    releases = cells_mod.kng_releases(
        N, stop - start, seed, [EPS], full_fits=False, start=start, x1_low=x1_low, quantile=TAU
    )
    for i, _, _, _, model, _ in releases:
        t = time.process_time()
        est, pivot, mirror = intervals(model)
        np.savez(Path(out) / f"{design}_{i:04d}.npz", estimate=est, pivot=pivot, mirror=mirror)
        print(design, i, f"cpu s {time.process_time() - t:.1f}", flush=True)


def score(out, name=None):
    rows = []
    for design in DESIGNS:
        files = sorted(Path(out).glob(f"{design}_*.npz"))
        if not files:
            continue
        data = [dict(np.load(f)) for f in files]
        for kind in ("pivot", "mirror"):
            ci = np.array([d[kind] for d in data])
            cover = (ci[:, :, 0] <= TRUTH) & (TRUTH <= ci[:, :, 1])
            width = ci[:, :, 1] - ci[:, :, 0]
            for j, param in enumerate(cells_mod.KNG_NAMES):
                rows.append(
                    dict(
                        design=design,
                        interval=kind,
                        param=param,
                        tau=TAU,
                        data_sets=len(data),
                        coverage=cover[:, j].mean(),
                        mean_width=width[:, j].mean(),
                    )
                )
    df = pd.DataFrame(rows)
    print(df.to_string(index=False))
    if name:
        df.to_csv(RESULTS / f"{name}.csv", index=False)
    return df


def main(argv):
    t = time.process_time()
    if argv[0] == "run":
        run(argv[1], int(argv[2]), int(argv[3]), argv[4])
    elif argv[0] == "score":
        score(argv[1], argv[2] if len(argv) > 2 else None)
    else:
        raise SystemExit(__doc__)
    print(f"{time.process_time() - t:.1f} CPU-s (this process)")


if __name__ == "__main__":
    main(sys.argv[1:])
