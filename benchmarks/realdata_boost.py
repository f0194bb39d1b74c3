"""Where the one-shot linear fit loses to BoostedAdaSSP, and what closes the gap (issue 14).

For the sets of the real-data matrix where BoostedAdaSSP was ahead (CollegeDistance, CPS1988)
and PSID wages (where small n * epsilon hurts boosting), the same 5 folds and seeds as
``benchmarks.realdata``, ``reps`` noise draws per fold, median held-out R^2 of:

* ``default``: ``FunctionalLinearRegression`` defaults (one-shot solve, floor 1.5);
* ``iterated k``: post-processing only, iterated Tikhonov of the *released* statistics:
  ``theta_{j+1} = theta_j + (G~_lam)^{-1} (b~ - G~_+ theta_j)`` with ``G~_lam`` the floored and
  ``G~_+`` the PSD part of the noisy Gram, ``k`` steps (a spectral filter between the floored
  solve and the unregularised one; no budget, no data);
* ``boost T share factor``: ``boost_rounds=T, boost_share=share, ridge_factor=factor``
  (``dpreg/linear_model/_boost.py``; ``boost_clip="auto"``).

Run: ``python -m benchmarks.realdata_boost [--quick] [--sets college cps1988 wages]
[--reps R] [--delta D]``; prints the table and writes ``benchmarks/results/realdata_boost.md``
(``realdata_boost_delta.md`` with ``--delta``: every fit on the (epsilon, delta) path, where
the first release is the Gaussian or flipped Huber one and the rounds stay pure epsilon).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold

from dpreg import BudgetAccountant, FunctionalLinearRegression

from . import _realdata_sets as sets
from ._common import results_dir

EPS = [0.1, 0.5, 1.0, 2.0, 4.0]
BOOSTS = {  # label: (rounds, share, floor factor)
    "boost 2 0.4 0.75": (2, 0.4, 0.75),
    "boost 2 0.4 1.0": (2, 0.4, 1.0),
    "boost 2 0.4 1.5": (2, 0.4, 1.5),
    "boost 2 0.3 1.0": (2, 0.3, 1.0),
    "boost 3 0.4 1.0": (3, 0.4, 1.0),
}


def iterated_tikhonov(gram, xty, lam, k):
    """``k`` refinement steps on the released statistics (post-processing; module doc)."""
    w, V = np.linalg.eigh(0.5 * (gram + gram.T))
    floored, psd = np.maximum(w, lam), np.maximum(w, 0.0)
    # in the eigenbasis each step maps t -> t + (c - psd t) / floored; from t_0 = c / floored
    # the k-step result is c (1 - (1 - psd / floored)^(k + 1)) / psd (c / floored when psd = 0)
    ratio = 1.0 - psd / floored
    safe = np.where(psd > 0, psd, 1.0)
    filt = np.where(psd > 0, (1.0 - ratio ** (k + 1)) / safe, 1.0 / floored)
    return V @ (filt * (V.T @ xty))


def _predict_scaled(model, beta, X):
    """Predictions of scaled coefficients ``beta`` mapped through the model's unit maps."""
    ns = model.noisy_statistics_
    z = (X - ns.x_offset) / np.where(ns.x_scale > 0, ns.x_scale, 1.0)
    z = np.where(ns.x_scale > 0, z, 0.0)
    return ns.y_offset + ns.y_scale * (beta[0] + z @ beta[1:])


def run(names, eps_grid, reps, delta=0.0):
    rows = []
    acc = BudgetAccountant(epsilon=float("inf"), delta=0.5)  # a simulation, not one analysis
    for name in names:
        t0 = time.process_time()
        data = sets.load(name)
        folds = KFold(5, shuffle=True, random_state=0).split(data.X)
        for f, (tr, te) in enumerate(folds):
            X, y, Xt, yt = data.X[tr], data.y[tr], data.X[te], data.y[te]
            kw = dict(bounds_X=data.bounds_X, bounds_y=data.bounds_y, accountant=acc, delta=delta)
            for eps in eps_grid:
                for rep in range(reps):
                    rs = 100 * f + 7919 * rep + int(1000 * eps)
                    base = FunctionalLinearRegression(epsilon=eps, random_state=rs, **kw)
                    base.fit(X, y)
                    out = {"default": r2_score(yt, base.predict(Xt))}
                    ns = base.noisy_statistics_
                    for k in (1, 2, 4):
                        beta = iterated_tikhonov(ns.gram, ns.xty, ns.lam, k)
                        out[f"iterated {k}"] = r2_score(yt, _predict_scaled(base, beta, Xt))
                    for label, (T, share, factor) in BOOSTS.items():
                        m = FunctionalLinearRegression(
                            epsilon=eps, random_state=rs, boost_rounds=T, boost_share=share,
                            ridge_factor=factor, **kw,
                        ).fit(X, y)  # fmt: skip
                        out[label] = r2_score(yt, m.predict(Xt))
                    rows += [
                        dict(dataset=name, epsilon=eps, method=k, r2=v) for k, v in out.items()
                    ]
        print(f"{name}: {time.process_time() - t0:.1f} CPU s")
    df = pd.DataFrame(rows)
    return df.pivot_table(
        index="method", columns=["dataset", "epsilon"], values="r2", aggfunc="median"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one set, one draw per fold")
    parser.add_argument("--sets", nargs="+", default=["college", "cps1988", "wages"])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument(
        "--delta", type=float, default=0.0, help="every fit with this delta (the (eps, delta) path)"
    )
    args = parser.parse_args(argv)
    names = args.sets[:1] if args.quick else args.sets
    reps = 1 if args.quick else args.reps
    t0 = time.process_time()
    tab = run(names, EPS if not args.quick else [1.0], reps, args.delta).round(3)
    cmd = "python -m benchmarks.realdata_boost" + (" --quick" if args.quick else "")
    if not args.quick:
        cmd += f" --sets {' '.join(args.sets)} --reps {args.reps}"
    cmd += f" --delta {args.delta:g}" if args.delta > 0 else ""
    text = tab.to_string()
    print(text)
    head = (
        f"# Boosting rounds vs post-processing on the real-data matrix\n\nProduced by `{cmd}` "
        f"({time.process_time() - t0:.0f} CPU s on a shared, loaded 2-core machine). Median "
        "held-out R^2 over 5 folds x draws (rows: methods; columns: data set, epsilon).\n\n"
    )
    results_dir(args.quick).mkdir(parents=True, exist_ok=True)
    suffix = "_delta" if args.delta > 0 else ""
    out = results_dir(args.quick) / f"realdata_boost{suffix}.md"
    out.write_text(head + "```\n" + text + "\n```\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
