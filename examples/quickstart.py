"""Quickstart: private linear, logistic and median regression next to scikit-learn.

Every private estimator takes a total budget ``epsilon`` for one ``fit`` and public,
data-independent bounds: for the features always, for y in linear regression (y is clipped)
and, in quantile regression, a public range of y that only sets the parameter domain (y is not
clipped there). The bounds here are round numbers from the data sets' documentation, fixed
before looking at the data; no ``PrivacyLeakWarning`` is raised.

Run: python examples/quickstart.py
"""

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LinearRegression, LogisticRegression, QuantileRegressor
from sklearn.metrics import mean_pinball_loss
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from dpreg import FunctionalLinearRegression, KNGQuantileRegressor, ObjectivePerturbationLogistic
from dpreg.datasets import load_engel
from dpreg.demo import (
    BREAST_CANCER_BOUNDS_X,
    DIABETES_BOUNDS_X,
    DIABETES_BOUNDS_Y,
    ENGEL_BOUNDS_X,
    ENGEL_BOUNDS_Y,
)

# 1. Linear regression on the diabetes data (raw clinical units).
X, y = load_diabetes(return_X_y=True, scaled=False)
X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=0)
private = FunctionalLinearRegression(
    epsilon=5.0, bounds_X=DIABETES_BOUNDS_X, bounds_y=DIABETES_BOUNDS_Y, random_state=0
).fit(X_tr, y_tr)
public = LinearRegression().fit(X_tr, y_tr)
print(
    f"diabetes R^2: private (eps=5) {private.score(X_te, y_te):.3f}, "
    f"non-private {public.score(X_te, y_te):.3f}"
)

# 2. Logistic regression on the ten "mean" features of the breast cancer data. The label set
#    {0, 1} is public, like the bounds.
X, y = load_breast_cancer(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X[:, :10], y, random_state=0, stratify=y)
clf = ObjectivePerturbationLogistic(
    epsilon=1.0, bounds_X=BREAST_CANCER_BOUNDS_X, classes=[0, 1], random_state=0
).fit(X_tr, y_tr)
base = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_tr, y_tr)
print(
    f"breast cancer accuracy: private (eps=1) {clf.score(X_te, y_te):.3f}, "
    f"non-private {base.score(X_te, y_te):.3f}"
)

# 3. Median regression on Engel's food expenditure data. Income is bounded in [0, 5000]; y is
#    not clipped, and its public range [0, 5000] (food expenditure cannot exceed income) only
#    sets the box of parameters the private slope is drawn from. With only 176 training rows,
#    eps = 1 gives a slope within 0.3 of the non-private one in about 6 fits out of 10; eps = 2
#    in about 59 out of 60 (seeds 0-59).
X, y, _ = load_engel()
X_tr, X_te, y_tr, y_te = train_test_split(X, y, random_state=0)
kng = KNGQuantileRegressor(
    quantile=0.5, epsilon=2.0, bounds_X=ENGEL_BOUNDS_X, bounds_y=ENGEL_BOUNDS_Y, random_state=0
).fit(X_tr, y_tr)
qr = QuantileRegressor(quantile=0.5, alpha=0.0).fit(X_tr, y_tr)
for name, model in (("private (eps=2)", kng), ("non-private", qr)):
    loss = mean_pinball_loss(y_te, model.predict(X_te), alpha=0.5)
    print(
        f"Engel median regression, {name}: slope {np.ravel(model.coef_)[0]:.3f}, "
        f"pinball loss {loss:.1f}"
    )
