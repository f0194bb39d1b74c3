"""Breast-cancer accuracy of ObjectivePerturbationLogistic at epsilon in {0.1, 1, 5}.

Usage: python docs/user_guide/logistic_amp_accuracy.py [R]
The ten "mean" features with the public bounds of ``dpreg.demo``; held-out accuracy over
stratified 5-fold cross-validation repeated with R seeds (default 20). Runs against the
current API (``bounds_X``, ``classes``) and the one before the certified release (``bounds``),
so the same script measures both sides of the change.
"""

import inspect
import sys
import warnings

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import StratifiedKFold

from dpreg import ObjectivePerturbationLogistic
from dpreg.demo import BREAST_CANCER_BOUNDS_X


def main(reps):
    X, y = load_breast_cancer(return_X_y=True)
    X = X[:, :10]
    if "bounds_X" in inspect.signature(ObjectivePerturbationLogistic).parameters:
        kw = {"bounds_X": BREAST_CANCER_BOUNDS_X, "classes": [0, 1]}
    else:
        kw = {"bounds": BREAST_CANCER_BOUNDS_X}
    for eps in (0.1, 1.0, 5.0):
        accs = []
        for s in range(reps):
            folds = StratifiedKFold(5, shuffle=True, random_state=s).split(X, y)
            for k, (tr, te) in enumerate(folds):
                clf = ObjectivePerturbationLogistic(epsilon=eps, random_state=1000 * s + k, **kw)
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    clf.fit(X[tr], y[tr])
                accs.append(clf.score(X[te], y[te]))
        accs = np.asarray(accs)
        se = accs.std(ddof=1) / np.sqrt(len(accs))
        print(f"eps={eps:<4} mean accuracy {accs.mean():.4f}  se {se:.4f}  (fits: {len(accs)})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
