"""Benchmark: PrivateSearchCV against a naive private GridSearchCV at equal total epsilon.

Both searches tune the same private estimator over the same grid with the same public bounds
(the demo bounds of ``dpreg.demo``), so only the selection scheme differs:

* **PrivateSearchCV** (Liu & Talwar random stopping, default ``validation_fraction=0.4``):
  total epsilon ``E``; every run fits a random candidate with ``E / 3`` on 60 % of the
  training rows and scores it with ``E / 3`` on the rest; the best run is released. The whole
  search is ``E``-DP.
* **naive GridSearchCV** (5-fold): every fit gets ``E / (m * 5 + 1)`` (``m`` candidates, 5 folds
  and the refit), so the fits together cost ``E`` by composition; its validation scores are
  *not* private (it is given that advantage).

Data: diabetes (raw units, n = 442, FunctionalLinearRegression, test R^2, grid ridge_factor x
postprocess, 12 candidates, clipped absolute error with loss bound 175, half the public
target range, as the docs recommend) and breast cancer (the ten "mean" features,
n = 569, ObjectivePerturbationLogistic, test accuracy, grid q x alpha, 6 candidates). Each
setting is repeated over random 75/25 train/test splits; the table reports the median test
score of each method, the share of repeats in which PrivateSearchCV's model is at least as
good, and the non-private score (sklearn, no privacy) as the ceiling.

Run ``python -m benchmarks.model_selection`` (full) or ``--quick``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, train_test_split
from tqdm import tqdm

from benchmarks._common import cli_parser, save
from dpreg import FunctionalLinearRegression, ObjectivePerturbationLogistic
from dpreg.demo import BREAST_CANCER_BOUNDS_X, DIABETES_BOUNDS_X, DIABETES_BOUNDS_Y
from dpreg.model_selection import PrivateSearchCV

CV = 5


def _settings():
    X, y = load_diabetes(return_X_y=True, scaled=False)
    yield (
        "diabetes",
        X,
        y,
        FunctionalLinearRegression(bounds_X=DIABETES_BOUNDS_X, bounds_y=DIABETES_BOUNDS_Y),
        {"ridge_factor": [0.1, 0.3, 1.0, 3.0, 10.0, 30.0], "postprocess": ["psd", "ridge"]},
        {"scoring": "neg_mean_absolute_error", "loss_bound": 175.0},
        "r2",
        LinearRegression(),
    )
    X, y = load_breast_cancer(return_X_y=True)
    yield (
        "breast_cancer",
        X[:, :10],
        y,
        ObjectivePerturbationLogistic(bounds=BREAST_CANCER_BOUNDS_X),
        {"q": [0.5, 0.85], "alpha": [0.0, 1.0, 10.0]},
        {},
        "accuracy",
        LogisticRegression(max_iter=5000),
    )


def run(quick=False):
    epsilons = [1.0, 3.0, 10.0]
    repeats = 4 if quick else 20
    rows = []
    for name, X, y, est, grid, kwargs, metric, plain in _settings():
        m = int(np.prod([len(v) for v in grid.values()]))
        for eps in epsilons:
            for rep in tqdm(range(repeats), desc=f"{name} eps={eps}", leave=False):
                Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=rep)
                ours = PrivateSearchCV(est, grid, epsilon=eps, random_state=rep, **kwargs).fit(
                    Xtr, ytr
                )
                naive_est = est.set_params(epsilon=eps / (m * CV + 1), random_state=rep)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # failed fits are part of the baseline
                    naive = GridSearchCV(naive_est, grid, cv=CV, error_score=np.nan).fit(Xtr, ytr)
                base = plain.fit(Xtr, ytr).score(Xte, yte)
                rows.append(
                    {
                        "dataset": name,
                        "metric": metric,
                        "epsilon": eps,
                        "repeat": rep,
                        "candidates": m,
                        "private_search": ours.score(Xte, yte),
                        "naive_gridsearch": naive.score(Xte, yte),
                        "non_private": base,
                        "runs": ours.n_runs_,
                    }
                )
    raw = pd.DataFrame(rows)
    df = (
        raw.groupby(["dataset", "metric", "epsilon", "candidates"])
        .agg(
            private_search=("private_search", "median"),
            naive_gridsearch=("naive_gridsearch", "median"),
            non_private=("non_private", "median"),
            share_private_at_least_naive=(
                "private_search",
                lambda s: float(
                    np.mean(s.to_numpy() >= raw.loc[s.index, "naive_gridsearch"].to_numpy())
                ),
            ),
            median_runs=("runs", "median"),
            repeats=("repeat", "count"),
        )
        .reset_index()
    )
    fig = None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, (name, sub) in zip(axes, df.groupby("dataset")):
            ax.plot(sub.epsilon, sub.private_search, "o-", label="PrivateSearchCV")
            ax.plot(sub.epsilon, sub.naive_gridsearch, "s--", label="naive GridSearchCV")
            ax.plot(sub.epsilon, sub.non_private, ":", color="gray", label="non-private")
            ax.set_xscale("log")
            ax.set_xlabel("total epsilon")
            ax.set_ylabel(f"median test {sub.metric.iloc[0]}")
            ax.set_title(name)
            ax.legend()
        fig.tight_layout()
    except ImportError:
        pass
    save(df, "model_selection", fig, quick=quick)
    return df


def summary(df):
    lines = []
    for _, r in df.iterrows():
        lines.append(
            f"{r.dataset} eps={r.epsilon:g}: PrivateSearchCV {r.private_search:.3f} vs naive "
            f"{r.naive_gridsearch:.3f} ({r.metric}; at least as good in "
            f"{r.share_private_at_least_naive:.0%} of {r.repeats} repeats)"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    args = cli_parser(__doc__).parse_args()
    out = run(quick=args.quick)
    print(out.to_string(index=False))
    print(summary(out))
