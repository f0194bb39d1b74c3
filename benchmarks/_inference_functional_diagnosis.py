"""The functional bootstrap world's design row and truth at small n * epsilon (docs/inference.md).

On the benchmark's model (``benchmarks.inference``: ``y = 1 + 2 x1 - x2 + N(0, 1)``,
``x ~ U[-1, 1]^2``, ``inference_share = 0.1``) scores the same data sets and releases with
the bootstrap world in one of four forms:

* ``former``: the released intercept row and the released ``b^`` as the world's truth (the
  code before session 8);
* ``row``: only the intercept row de-noised to ``k s~`` (session 8's row, ``|k s~|^2`` the
  positive-part estimate of ``|s|^2``);
* ``session8``: that row and the truth's squared norm de-noised (the library of sessions
  8-10: the interval centred on the released ``b^``);
* ``current``: the library (session 11): the row is the posterior mean ``k^2 s~``, the
  interval's estimate is the de-noised intercept and its replicates hold the row at that
  value (``_inference.denoised_intercept``, ``_inference.conditional_intercept``).

Prints per parameter (const / x1 / x2) the coverage of the 95 % intervals, their mean width
over the 2.5-97.5 % spread of the *released* estimates of these data sets (the benchmark's
oracle), and the root-mean-square bootstrap sd over the real sd of the interval's own
estimate (the released ``b^`` for the first three, the de-noised intercept for ``current``).

Run: ``python -m benchmarks._inference_functional_diagnosis N EPS REPS SEED [VARIANT ...]``
(250 draws per interval, as in the benchmark), or ``... adaptivity N EPS REPS SEED
[VARIANT]`` for :func:`adaptivity` (default ``current``). A diagnostic, not part of
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

VARIANTS = ("former", "row", "session8", "current")
_PATCHED = (
    "denoised_intercept_row",
    "denoised_truth",
    "denoised_intercept",
    "conditional_intercept",
)


def _session8_row(ns, noise_grams):
    """Session 8's world row ``k s~`` (``|k s~|^2 = max(0, |s~|^2 - m)``)."""
    k = np.sqrt(float(inf.row_shrinkage(ns.gram[0, 1:], inf.row_noise_power(noise_grams))))
    gram = np.array(ns.gram, dtype=float, copy=True)
    gram[0, 1:] *= k
    gram[1:, 0] *= k
    return gram


@contextmanager
def world(variant):
    """The library's bootstrap with the steps that ``variant`` predates switched off."""
    saved = {name: getattr(inf, name) for name in _PATCHED}
    if variant != "current":
        inf.denoised_intercept = lambda ns, beta, m: beta
        inf.conditional_intercept = lambda ns, draws, E, truth, G: draws
        inf.denoised_intercept_row = _session8_row
    if variant == "former":
        inf.denoised_intercept_row = lambda ns, _: ns.gram
    if variant in ("former", "row"):
        inf.denoised_truth = lambda beta, _: beta
    try:
        yield
    finally:
        for name, f in saved.items():
            setattr(inf, name, f)


def releases(n, eps, reps, seed):
    """``reps`` releases on fresh data sets (the benchmark's fit), seeded by ``seed``."""
    rng, acc = np.random.default_rng(seed), BudgetAccountant()
    for _ in range(reps):
        stats = sufficient_statistics(*simulate(n, rng), BOUNDS_X, BOUNDS_Y)
        yield _functional_fit(stats, eps, rng, acc)


def score(models, variant, n_boot=250):
    est, centre, inside, width, bse = [], [], [], [], []
    with world(variant), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for m in models:
            m._inference_cache = None
            ci = m.conf_int(0.05, n_boot=n_boot)
            est.append(np.r_[m.intercept_, m.coef_])
            centre.append(inf._draws(m, n_boot)[1][0])  # the interval's own estimate
            inside.append((ci[:, 0] <= BETA) & (BETA <= ci[:, 1]))
            width.append(ci[:, 1] - ci[:, 0])
            bse.append(m.bse(n_boot=n_boot))
            m._inference_cache = None
    est, centre = np.array(est), np.array(centre)
    lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
    return (
        np.mean(inside, axis=0),
        np.mean(width, axis=0) / (hi - lo),
        np.sqrt(np.mean(np.square(bse), axis=0)) / centre.std(axis=0, ddof=1),
    )


def adaptivity(models, n_boot=250, variant="current"):
    """Why the intercept over-covers at a width equal to the spread: the basic interval
    against the bias-aware hull, the correlation of the hull's width with the error, the
    error's excess kurtosis, the sd of error / bse (1 for a non-adaptive pivot), the
    correlation of the error with the released row's component along the true slopes, and
    per quintile of the released ``|s~|^2 / m`` (a public statistic) the coverage, the RMS
    error and the RMS bse of the intercept. Errors are those of the interval's estimate."""
    ins_h, ins_b, w_h, err, se, ratio, along = [], [], [], [], [], [], []
    direction = BETA[1:] / np.linalg.norm(BETA[1:])
    with world(variant):
        for m in models:
            ns = m.noisy_statistics_
            seed = inf.release_seed(*inf.released_values(ns))
            est, d = inf.bootstrap(ns, n_boot, random_state=seed)
            h, b = inf.bias_aware_interval(est, d, 0.05), inf.basic_interval(est, d, 0.05)
            ins_h.append((h[:, 0] <= BETA) & (BETA <= h[:, 1]))
            ins_b.append((b[:, 0] <= BETA) & (BETA <= b[:, 1]))
            w_h.append(h[:, 1] - h[:, 0])
            err.append(est - BETA)
            se.append(d.std(axis=0, ddof=1))
            E = inf.noise_draws(ns, n_boot, np.random.default_rng(seed))[0]
            mm = float(np.mean(np.sum(E[:, 0, 1:] ** 2, axis=1)))
            s = ns.gram[0, 1:]
            ratio.append(float(s @ s) / mm)
            along.append(float(s @ direction) / np.sqrt(mm / len(s)))
    w_h, err, se = np.array(w_h), np.array(err), np.array(se)
    ratio, along, cov0 = np.array(ratio), np.array(along), np.array(ins_h)[:, 0]
    corr = [np.corrcoef(w_h[:, j], np.abs(err[:, j]))[0, 1] for j in range(err.shape[1])]
    kurt = np.mean((err - err.mean(0)) ** 4, axis=0) / err.var(axis=0) ** 2 - 3.0
    r = lambda v: " / ".join(f"{x:.3f}" for x in v)  # noqa: E731
    print(f"{variant}: coverage hull {r(np.mean(ins_h, 0))}, basic {r(np.mean(ins_b, 0))}")
    print(f"corr(width, |error|) {r(corr)}; excess kurtosis of the error {r(kurt)}")
    print(f"sd of error / bse {r((err / se).std(axis=0))}")
    print(f"corr(intercept error, s~ along beta_s) {np.corrcoef(err[:, 0], along)[0, 1]:.3f}")
    print("| \\|s~\\|^2 / m quintile | coverage | RMS error | RMS bse |")
    print("|---|---|---|---|")
    q = np.quantile(ratio, np.linspace(0.0, 1.0, 6))
    for a, b in zip(q[:-1], q[1:]):
        k = (ratio >= a) & (ratio <= b)
        rms_err, rms_se = np.sqrt(np.mean(np.square(err[k, 0]))), np.sqrt(np.mean(se[k, 0] ** 2))
        print(f"| {a:.2f}-{b:.2f} | {cov0[k].mean():.3f} | {rms_err:.3f} | {rms_se:.3f} |")


def main(argv):
    if argv[0] == "adaptivity":
        n, eps, reps, seed = int(argv[1]), float(argv[2]), int(argv[3]), int(argv[4])
        models = list(releases(n, eps, reps, seed))
        for v in argv[5:] or ["current"]:
            t = time.process_time()
            adaptivity(models, variant=v)
            print(f"({time.process_time() - t:.0f} CPU s)")
        return None
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
