"""The n = 1e3 KNG cells after the Gram release stopped noising its public corner (session 16).

Since session 16 ``release_curvature`` leaves ``G[0, 0] = n`` out of the linf K-norm draw
(``release_symmetric(..., public_corner=n)``): five noised entries instead of six, each with
``sqrt(42 / 56) = 0.87`` of the former noise sd. The fits are unchanged; only the intervals
(and, through the stream, the later epsilons' draws) move.

``score DIR[,DIR...] [NAME]`` scores chunk folders of ``benchmarks._inference_kng_chunks run
1000 ...`` (the command's streams) like ``inference_kng.csv``: each cell's simulated oracle
pools its own released estimates with the committed estimate-only ones
(``inference_kng_oracle_estimates.npz``, ``extra_1000_*``: 2,400 per epsilon, drawn without
a curvature release, so the change does not touch them) and, for a cell run on data sets
0..k-1 with k < 600, the committed estimates of data sets k..599 (``replay_1000_*``; at
epsilon = 0.25, the first draw of each data set's stream, they are the very fits the command
draws; at epsilon = 1 and 4 they are fits of the same law, since the stream moved). The
oracle therefore pools 3,000 estimates per cell, as in the committed table. Writes
``NAME.csv``/``.png`` (default ``inference_kng_s16_n1e3``) and prints each row next to the
committed one.

``paired N EPS REPS``: a paired check of the two releases on the same data sets and fits
(data set i: data, fit and curvature release from ``default_rng([77, i])``, ``[77, i, 1]``
and ``[77, i, 2]``; fit 0.6 epsilon, curvature 0.4 epsilon, 500 draws, the benchmark's
model). "before" is the six-entry release (the corner noised too), "after" the library's;
prints the coverage and mean widths of both and the mean paired width ratio.

``share START STOP DIR GRAM_SHARE``: the n = 1e3, epsilon = 0.25 chunks of data sets
``START..STOP`` (the command's streams, so the fits are the committed ones) with the Gram
matrix's part of the curvature budget set to ``GRAM_SHARE`` instead of
``_inference_quantile.GRAM_SHARE``; ``compare BASE DIR`` scores such a folder against a
folder of the library's chunks on the data sets both hold (checks that the estimates are
the same): coverage, mean widths, the ratio of the mean widths and the median paired ratio.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from . import _inference_cells as cells_mod
from . import inference as inf
from ._inference_kng_chunks import _load
from ._inference_kng_chunks import run as chunks_run

RESULTS = Path(__file__).parent / "results"
N = 1000


def pooled_extra(cells):
    """``{epsilon: (estimates, full)}`` pooled into each cell's oracle (module docstring)."""
    z = np.load(RESULTS / "inference_kng_oracle_estimates.npz")
    extra = {}
    for eps, (est, _, _, _) in cells.items():
        key = f"{eps:g}"
        e, f = z[f"extra_{N}_est_{key}"], z[f"extra_{N}_full_{key}"]
        have = len(est)
        if have < 600:  # the committed replay's data sets this run did not redo
            e = np.vstack([z[f"replay_{N}_est_{key}"][have:], e])
            f = np.vstack([z[f"replay_{N}_full_{key}"][have:], f])
        extra[eps] = (e, f)
    return extra


def score(dirs, name="inference_kng_s16_n1e3"):
    by_eps = _load(dirs.split(","), N)
    cells = {}
    for eps in sorted(by_eps):
        ids = sorted(by_eps[eps])
        if ids != list(range(len(ids))):
            raise SystemExit(f"epsilon={eps:g}: data sets must be 0..k-1 (the replay's order)")
        cells.update(cells_mod.concat_cells([by_eps[eps][i] for i in ids]))
    rows = inf.kng_score(N, cells, 4000 + inf.N_GRID.index(N), extra=pooled_extra(cells))
    df = inf.kng_frame(rows, name=name)
    old = pd.read_csv(RESULTS / "inference_kng.csv")
    old = old[old.n == N].set_index(["epsilon", "param"])
    for _, r in df.iterrows():
        o = old.loc[(r.epsilon, r.param)]
        print(
            f"eps {r.epsilon:<4g} {r.param:5s} reps {int(o.reps)} -> {int(r.reps)}  coverage "
            f"{o.coverage:.3f} -> {r.coverage:.3f}  mean width {o.mean_width:.4f} -> "
            f"{r.mean_width:.4f} (x{r.mean_width / o.mean_width:.3f})  / oracle "
            f"{o.width_ratio:.3f} -> {r.width_ratio:.3f} ({int(r.oracle_reps)} estimates)"
        )
    return df


def paired(n, eps, reps):
    """The module docstring's ``paired``: ``{variant: (inside, widths)}``."""
    from dpreg import KNGQuantileRegressor
    from dpreg.linear_model import _inference_quantile as iq

    beta = cells_mod.KNG_BETA
    six_entries = iq.release_symmetric
    variants = {
        "before": lambda *a, public_corner=None, **k: six_entries(*a, **k),
        "after": six_entries,
    }
    out = {}
    for name, release in variants.items():
        inside, widths = [], []
        iq.release_symmetric = release
        try:
            for i in range(reps):
                X, y = cells_mod.kng_data(n, np.random.default_rng([77, i]))
                m = KNGQuantileRegressor(
                    epsilon=0.6 * eps,
                    bounds_X=(-1, 1),
                    bounds_y=(-7, 9),
                    random_state=np.random.default_rng([77, i, 1]),
                ).fit(X, y)
                m.release_curvature(X, y, 0.4 * eps, random_state=np.random.default_rng([77, i, 2]))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    ci = m.conf_int(n_boot=500)
                inside.append((ci[:, 0] <= beta) & (beta <= ci[:, 1]))
                widths.append(ci[:, 1] - ci[:, 0])
        finally:
            iq.release_symmetric = six_entries
        out[name] = (np.array(inside), np.array(widths))
        print(
            name,
            "coverage",
            np.round(out[name][0].mean(0), 3),
            "mean width",
            np.round(out[name][1].mean(0), 4),
            flush=True,
        )
    ratio = (out["after"][1] / out["before"][1]).mean(0)
    print("mean paired width ratio after / before", np.round(ratio, 3))
    return out


def run_share(start, stop, out, gram_share):
    """The module docstring's ``share``: ``_inference_kng_chunks.run`` at epsilon = 0.25 with
    ``GRAM_SHARE`` patched for the call."""
    from dpreg.linear_model import _inference_quantile as iq

    default, iq.GRAM_SHARE = iq.GRAM_SHARE, gram_share
    try:
        chunks_run(N, start, stop, out, [0.25])
    finally:
        iq.GRAM_SHARE = default


def compare(base, other, eps=0.25):
    """The module docstring's ``compare``: ``(coverage, widths)`` of both on shared data sets."""
    cells = [_load([d], N).get(eps, {}) for d in (base, other)]
    ids = sorted(set(cells[0]) & set(cells[1]))
    (e0, c0), (e1, c1) = (
        (np.array([c[i][eps][0][0] for i in ids]), np.array([c[i][eps][1][0] for i in ids]))
        for c in cells
    )
    if not np.array_equal(e0, e1):
        raise SystemExit("the two folders hold different fits")
    beta = cells_mod.KNG_BETA
    cov = [((c[..., 0] <= beta) & (beta <= c[..., 1])).mean(0) for c in (c0, c1)]
    w0, w1 = c0[..., 1] - c0[..., 0], c1[..., 1] - c1[..., 0]
    print(f"{len(ids)} data sets; coverage {np.round(cov[0], 3)} -> {np.round(cov[1], 3)}")
    print(f"mean width {np.round(w0.mean(0), 3)} -> {np.round(w1.mean(0), 3)}")
    print(f"ratio of the means {np.round(w1.mean(0) / w0.mean(0), 3)}")
    print(f"median paired ratio {np.round(np.median(w1 / w0, axis=0), 3)}")
    return cov, (w0, w1)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["score"] and len(argv) >= 2:
        score(*argv[1:3])
    elif argv[:1] == ["paired"] and len(argv) == 4:
        t = time.process_time()
        paired(int(argv[1]), float(argv[2]), int(argv[3]))
        print(f"cpu s {time.process_time() - t:.0f}")
    elif argv[:1] == ["share"] and len(argv) == 5:
        run_share(int(argv[1]), int(argv[2]), argv[3], float(argv[4]))
    elif argv[:1] == ["compare"] and len(argv) == 3:
        compare(argv[1], argv[2])
    else:
        raise SystemExit(
            "usage: score DIR[,DIR...] [NAME] | paired N EPS REPS | share START STOP DIR "
            "GRAM_SHARE | compare BASE DIR"
        )


if __name__ == "__main__":
    main()
