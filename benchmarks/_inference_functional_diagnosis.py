"""The functional bootstrap world's design row and truth at small n * epsilon (docs/inference.md).

On the benchmark's model (``benchmarks.inference``: ``y = 1 + 2 x1 - x2 + N(0, 1)``,
``x ~ U[-1, 1]^2``, ``inference_share = 0.1``) scores the same data sets and releases with
the bootstrap world in one of three forms:

* ``former``: the released intercept row and the released ``b^`` as the world's truth (the
  code before session 8);
* ``row``: only the intercept row de-noised (``_inference.denoised_intercept_row``);
* ``current``: the library (the row and the truth's squared norm de-noised).

Prints per parameter (const / x1 / x2) the coverage of the 95 % intervals, their mean width
over the 2.5-97.5 % spread of the estimates of these data sets, and the root-mean-square
bootstrap sd over the real sd of the estimates.

Run: ``python -m benchmarks._inference_functional_diagnosis N EPS REPS SEED [VARIANT ...]``
(250 draws per interval, as in the benchmark). A diagnostic, not part of
``python -m benchmarks``; nothing is written.
"""

from __future__ import annotations

import sys
import time
import warnings
from contextlib import contextmanager

import numpy as np

from dpreg import BudgetAccountant
from dpreg.linear_model import _inference as inf
from dpreg.linear_model.functional import sufficient_statistics

from .inference import BETA, BOUNDS_X, BOUNDS_Y, _functional_fit, simulate

VARIANTS = ("former", "row", "current")


@contextmanager
def world(variant):
    """The library's bootstrap with the de-noising steps of ``variant`` switched off."""
    saved = inf.denoised_intercept_row, inf.denoised_truth
    if variant in ("former",):
        inf.denoised_intercept_row = lambda ns, _: ns.gram
    if variant in ("former", "row"):
        inf.denoised_truth = lambda beta, _: beta
    try:
        yield
    finally:
        inf.denoised_intercept_row, inf.denoised_truth = saved


def releases(n, eps, reps, seed):
    """``reps`` releases on fresh data sets (the benchmark's fit), seeded by ``seed``."""
    rng, acc = np.random.default_rng(seed), BudgetAccountant()
    for _ in range(reps):
        stats = sufficient_statistics(*simulate(n, rng), BOUNDS_X, BOUNDS_Y)
        yield _functional_fit(stats, eps, rng, acc)


def score(models, variant, n_boot=250):
    est, inside, width, bse = [], [], [], []
    with world(variant), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for m in models:
            m._inference_cache = None
            ci = m.conf_int(0.05, n_boot=n_boot)
            b = np.r_[m.intercept_, m.coef_]
            est.append(b)
            inside.append((ci[:, 0] <= BETA) & (BETA <= ci[:, 1]))
            width.append(ci[:, 1] - ci[:, 0])
            bse.append(m.bse(n_boot=n_boot))
    est = np.array(est)
    lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
    return (
        np.mean(inside, axis=0),
        np.mean(width, axis=0) / (hi - lo),
        np.sqrt(np.mean(np.square(bse), axis=0)) / est.std(axis=0, ddof=1),
    )


def main(argv):
    n, eps, reps, seed = int(argv[0]), float(argv[1]), int(argv[2]), int(argv[3])
    variants = argv[4:] or list(VARIANTS)
    models = list(releases(n, eps, reps, seed))
    print(f"n = {n}, epsilon = {eps:g}, {reps} data sets (seed {seed}), 250 draws")
    print("| world | coverage const / x1 / x2 | width / spread | RMS bse / real sd | CPU s |")
    print("|---|---|---|---|---|")
    for v in variants:
        t = time.process_time()
        cov, wr, sd = score(models, v)
        fmt = " / ".join
        print(
            f"| {v} | {fmt(f'{c:.3f}' for c in cov)} | {fmt(f'{w:.3f}' for w in wr)} | "
            f"{fmt(f'{s:.3f}' for s in sd)} | {time.process_time() - t:.0f} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
