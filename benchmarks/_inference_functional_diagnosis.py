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
(250 draws per interval, as in the benchmark), or ``... adaptivity N EPS REPS SEED`` for
:func:`adaptivity` (the library's world only). A diagnostic, not part of
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


def adaptivity(models, n_boot=250):
    """Why the intercept over-covers at a width equal to the spread: the basic interval
    against the bias-aware hull, the correlation of the hull's width with the error, the
    error's excess kurtosis and the sd of error / bse (1 for a non-adaptive pivot)."""
    ins_h, ins_b, w_h, err, se = [], [], [], [], []
    for m in models:
        ns = m.noisy_statistics_
        est, d = inf.bootstrap(ns, n_boot, random_state=inf.release_seed(*inf.released_values(ns)))
        h, b = inf.bias_aware_interval(est, d, 0.05), inf.basic_interval(est, d, 0.05)
        ins_h.append((h[:, 0] <= BETA) & (BETA <= h[:, 1]))
        ins_b.append((b[:, 0] <= BETA) & (BETA <= b[:, 1]))
        w_h.append(h[:, 1] - h[:, 0])
        err.append(est - BETA)
        se.append(d.std(axis=0, ddof=1))
    w_h, err, se = np.array(w_h), np.array(err), np.array(se)
    corr = [np.corrcoef(w_h[:, j], np.abs(err[:, j]))[0, 1] for j in range(err.shape[1])]
    kurt = np.mean((err - err.mean(0)) ** 4, axis=0) / err.var(axis=0) ** 2 - 3.0
    r = lambda v: " / ".join(f"{x:.3f}" for x in v)  # noqa: E731
    print(f"coverage hull {r(np.mean(ins_h, 0))}, basic {r(np.mean(ins_b, 0))}")
    print(f"corr(width, |error|) {r(corr)}; excess kurtosis of the error {r(kurt)}")
    print(f"sd of error / bse {r((err / se).std(axis=0))}")


def main(argv):
    if argv[0] == "adaptivity":
        n, eps, reps, seed = int(argv[1]), float(argv[2]), int(argv[3]), int(argv[4])
        return adaptivity(list(releases(n, eps, reps, seed)))
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
