"""Where the width of the KNG intervals comes from at small n * epsilon (docs/inference.md).

Two probes on the benchmark's model (``y = 1 + 2 x1 - x2 + N(0, 1)``, ``x ~ U[-1, 1]^2``,
median regression, ``bounds_X = (-1, 1)``, ``bounds_y = (-7, 9)``):

* ``decompose``: the bootstrap of ``conf_int`` re-run on the same data sets with the true
  Gram matrix ``W^T W`` and/or the true sparsity ``1 / phi(0)`` in place of their releases
  (everything else, the K-norm draws of V, the normal xi and the clipping to the parameter
  box, unchanged), to see which release makes the interval wide;
* ``splits``: coverage and width for several budget splits (curvature share, Gram part of
  it, quantile-level widening) on common data sets, against the oracle of the released
  estimator and against the oracle of a fit with the whole epsilon.

Run: ``python -m benchmarks._inference_kng_diagnosis decompose N EPS REPS [SHARE [GRAM
[WIDEN]]]`` or ``python -m benchmarks._inference_kng_diagnosis splits N EPS REPS
SHARE,GRAM,WIDEN ...``. Data set ``i`` of ``decompose`` has its own stream
``default_rng([7, i])``, so runs of two versions of the library share their data sets. Both
print a table (widths also against the released estimator's asymptotic law,
``_inference_cells.kng_asymptotic``); nothing is written. A diagnostic, not part of
``python -m benchmarks``.
"""

from __future__ import annotations

import math
import sys
import warnings
from contextlib import contextmanager

import numpy as np

from dpreg import KNGQuantileRegressor
from dpreg.linear_model import _inference_quantile as iq
from dpreg.linear_model._inference import basic_interval_within
from dpreg.noise._exact import float_knorm_sample

BETA = np.array([1.0, 2.0, -1.0])
SPARSITY = math.sqrt(2.0 * math.pi)  # 1 / phi(0): N(0, 1) errors at tau = 1/2


def _fit(X, y, epsilon, rng):
    return KNGQuantileRegressor(
        epsilon=epsilon, bounds_X=(-1, 1), bounds_y=(-7, 9), random_state=rng, progress_bar=False
    ).fit(X, y)


def _coef(m):
    return np.r_[m.intercept_, m.coef_]


def _bootstrap(fit, eig, s, n_boot, rng):
    """The draws of ``_inference_quantile.bootstrap`` with given Gram eigen-decompositions
    and sparsities (one per replicate)."""
    lam, Q = eig
    theta = np.asarray(fit.theta, float)
    z = rng.standard_normal((n_boot, theta.size)) * math.sqrt(fit.tau * (1 - fit.tau))
    z = z / np.sqrt(lam)
    V = float_knorm_sample(fit.ball, 1.0 / fit.scale, n_boot, rng)
    VQ = np.einsum("bji,bj->bi", Q, V) / lam
    return theta, theta + np.einsum("bij,bj->bi", Q, z + VQ) * s[:, None]


def _score(ci, est_oracle):
    """Coverage and mean width over the oracle width (2.5-97.5% spread of ``est_oracle``)."""
    lo, hi = np.quantile(est_oracle, [0.025, 0.975], axis=0)
    w = ci[:, :, 1] - ci[:, :, 0]
    cov = ((ci[:, :, 0] <= BETA) & (BETA <= ci[:, :, 1])).mean(0)
    return np.round(cov, 3), np.round(w.mean(0) / (hi - lo), 2)


def _asymptotic(n, fit, size=200_000, seed=0):
    """Draws of the released estimator's asymptotic law (``kng_asymptotic``: population G and
    s, the fit's K-norm law): an oracle without the Monte Carlo noise of a few data sets."""
    from ._inference_cells import kng_asymptotic  # noqa: PLC0415

    return kng_asymptotic(n, fit.ball, fit.scale, size, np.random.default_rng(seed))


@contextmanager
def _split(gram, widen):
    old = iq.GRAM_SHARE, iq.RANK_WIDEN
    iq.GRAM_SHARE, iq.RANK_WIDEN = gram, widen
    try:
        yield
    finally:
        iq.GRAM_SHARE, iq.RANK_WIDEN = old


def decompose(n, eps, reps, share=0.2, gram=0.5, widen=1.0, n_boot=1000, seed=7):
    """Defaults: the former split (the one the docs' decomposition table measured)."""
    with _split(gram, widen):
        _decompose(n, eps, reps, share, n_boot, seed)


def _decompose(n, eps, reps, share, n_boot, seed):
    keys = ["current", "true G and s", "released G", "released s"]
    cis = {k: [] for k in keys}
    est = []
    for i in range(reps):
        rng = np.random.default_rng([seed, i])  # data set i is the same in every run
        X = rng.uniform(-1, 1, (n, 2))
        y = BETA[0] + X @ BETA[1:] + rng.standard_normal(n)
        m = _fit(X, y, (1 - share) * eps, rng)
        m.release_curvature(X, y, share * eps, random_state=rng)
        fit, rel = iq._release(m)
        est.append(_coef(m))
        W = np.column_stack([np.ones(n), X])
        lam, Q = np.linalg.eigh(W.T @ W)
        true_eig = (np.broadcast_to(lam, (n_boot, 3)), np.broadcast_to(Q, (n_boot, 3, 3)))
        true_s = np.full(n_boot, SPARSITY)
        limits = iq.box_ranges(fit)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cis["current"].append(m.conf_int())  # the library's default n_boot
        variants = {
            "true G and s": (true_eig, true_s),
            "released G": (iq.gram_draws(fit, rel, n_boot, rng), true_s),
            "released s": (true_eig, iq.sparsity_draws(rel, n_boot, rng)),
        }
        for key, (eig, s) in variants.items():
            centre, draws = _bootstrap(fit, eig, s, n_boot, rng)
            cis[key].append(basic_interval_within(centre, draws, 0.05, limits))
    est = np.array(est)
    asym = _asymptotic(n, fit)
    print(f"n={n} epsilon={eps} curvature share={share} reps={reps}")
    for key in keys:
        cov, ratio = _score(np.array(cis[key]), est)
        _, ratio_asym = _score(np.array(cis[key]), asym)
        print(f"  {key:12s} coverage {cov} width/oracle {ratio} width/asymptotic {ratio_asym}")


def splits(n, eps, reps, configs, n_boot=1000, seed=11):
    """``configs``: ``(share, gram_share, rank_widen)`` triples."""
    rng = np.random.default_rng(seed)
    data = []
    for _ in range(reps):
        X = rng.uniform(-1, 1, (n, 2))
        data.append((X, BETA[0] + X @ BETA[1:] + rng.standard_normal(n)))
    full_fits = [_fit(X, y, eps, rng) for X, y in data]
    full = np.array([_coef(m) for m in full_fits])
    full_asym = _asymptotic(n, full_fits[0].kng_release_)  # the whole-epsilon fit's law
    print(f"n={n} epsilon={eps} reps={reps}")
    for share, gram, widen in configs:
        est, ci = [], []
        with _split(gram, widen):
            for X, y in data:
                m = _fit(X, y, (1 - share) * eps, rng)
                m.release_curvature(X, y, share * eps, random_state=rng)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ci.append(m.conf_int(n_boot=n_boot))
                est.append(_coef(m))
        cov, ratio = _score(np.array(ci), np.array(est))
        _, ratio_full = _score(np.array(ci), full)
        _, ratio_asym = _score(np.array(ci), _asymptotic(n, m.kng_release_))
        _, ratio_full_asym = _score(np.array(ci), full_asym)
        print(
            f"  share {share} gram {gram} widen {widen}: coverage {cov} width/oracle {ratio}"
            f" width/full-epsilon oracle {ratio_full} width/asymptotic {ratio_asym}"
            f" width/full-epsilon asymptotic {ratio_full_asym}"
        )


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    what, n, eps, reps = argv[0], int(argv[1]), float(argv[2]), int(argv[3])
    if what == "decompose":  # [SHARE [GRAM [WIDEN]]]
        decompose(n, eps, reps, *(float(a) for a in argv[4:7]))
    elif what == "splits":
        splits(n, eps, reps, [tuple(float(v) for v in c.split(",")) for c in argv[4:]])
    else:
        raise SystemExit("usage: decompose|splits N EPS REPS ...")


if __name__ == "__main__":
    main()
