"""Private estimators in a Pipeline and GridSearchCV, with a shared privacy budget.

``GridSearchCV`` clones the estimator for every candidate and fold; a
:class:`dpreg.BudgetAccountant` passed as a parameter is shared by all clones, in this process
and in the worker processes of ``n_jobs``, so the ledger shows what the whole search spent
(sequential composition) and stops it before it overruns. Pass ``error_score="raise"``: with
scikit-learn's default a fit refused for lack of budget becomes a NaN score and the search
silently picks another candidate.

What is and is not covered: every fit is charged to the accountant, so all fitted models
together are (spent epsilon)-DP by sequential composition. The *validation scores* that
GridSearchCV uses to pick the winner are computed on held-out private rows without noise; they
are not covered. Tune on public or synthetic data when the choice itself must be private.
Preprocessing must not look at the data either: the pipeline transforms with public constants,
never with a ``StandardScaler`` fitted on the private data.

Run: python examples/pipeline_gridsearch.py
"""

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from dpreg import BudgetAccountant, ObjectivePerturbationLogistic
from dpreg.demo import BREAST_CANCER_BOUNDS_X
from dpreg.exceptions import BudgetExceededError

X, y = load_breast_cancer(return_X_y=True)
X = X[:, :10]
X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=0, stratify=y)

# A data-independent feature map: log of area/perimeter-like columns (public choice). The
# label set {0, 1} (benign/malignant) is public, like the bounds.
log_cols = [2, 3]


def log_some(Z):
    Z = np.array(Z, dtype=float)
    Z[:, log_cols] = np.log(Z[:, log_cols])
    return Z


lower, upper = (np.array(b, dtype=float) for b in BREAST_CANCER_BOUNDS_X)
lower[log_cols], upper[log_cols] = np.log(lower[log_cols]), np.log(upper[log_cols])

accountant = BudgetAccountant(epsilon=40.0)
pipe = Pipeline(
    [
        ("log", FunctionTransformer(log_some)),
        (
            "clf",
            ObjectivePerturbationLogistic(
                bounds_X=(lower, upper), classes=[0, 1], random_state=0, accountant=accountant
            ),
        ),
    ]
)
grid = GridSearchCV(
    pipe,
    {"clf__epsilon": [0.5, 2.0], "clf__norm": ["linf", "l2"]},
    cv=3,
    n_jobs=2,  # the ledger is a file: fits in the worker processes are charged to it too
    error_score="raise",  # a refused fit stops the search instead of becoming a NaN score
)
grid.fit(X_tr, y_tr)
print("best parameters:", grid.best_params_)
print(f"held-out accuracy of the refitted best model: {grid.score(X_te, y_te):.3f}")
print(f"fits charged: {len(accountant)}, budget spent (epsilon, delta): {accountant.spent}")
print(f"remaining: {accountant.remaining()}")

# The accountant refuses a fit that would overrun the budget, before touching the data.
try:
    ObjectivePerturbationLogistic(
        epsilon=50.0, bounds_X=(lower, upper), classes=[0, 1], accountant=accountant
    ).fit(log_some(X_tr), y_tr)
except BudgetExceededError as exc:
    print("refused:", exc)
