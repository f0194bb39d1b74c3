"""A private workflow end to end: no bound given by hand, private preprocessing, private model
selection, one ledger.

The data are in raw units (ages in years, income in dollars); nothing below looks at them
outside a private mechanism:

1. private bounds of the target (exact KNG quantiles over the public range (-1e9, 1e9));
2. a pipeline ``PrivateStandardScaler -> FunctionalLinearRegression``: the scaler learns private
   bounds, mean and scale and clips its output into [-3, 3], which is therefore the public
   ``bounds_X`` of the regression;
3. ``PrivateSearchCV`` picks the regression's ridge factor; the whole search (every fit, every
   noisy score, the selection) costs its stated epsilon;
4. one accountant holds every spend; its total is printed and asserted, and the private model is
   compared with the non-private pipeline (StandardScaler -> LinearRegression) on a test split.

Why simulated data: on the real diabetes data (n = 442, 10 features) this workflow is not useful
at a total epsilon of 3 to 30 (test R^2 about 0 against 0.36 without privacy, measured): with a
few hundred rows the 2 x 10 private quantiles of the bounds and the 77 noisy moments of the
regression get too little budget each. The workflow pays off from a few thousand rows.

Run: python examples/private_workflow.py
"""

import warnings

import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.model_selection import PrivateSearchCV
from dpreg.preprocessing import PrivateStandardScaler, private_bounds

warnings.simplefilter("error", PrivacyLeakWarning)  # any non-private shortcut stops the script

# ---- raw data: income (dollars) from age, education, hours worked, commute (km) ----
rng = np.random.default_rng(0)
n = 20000
age = rng.uniform(18, 80, n)
education = np.clip(rng.normal(13, 3, n), 0, 25)
hours = np.clip(rng.normal(38, 10, n), 0, 100)
commute = rng.lognormal(2.5, 0.8, n)
X = np.column_stack([age, education, hours, commute])
y = 4000 + 300 * age + 2500 * education + 400 * hours - 50 * commute + rng.normal(0, 8000, n)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

TOTAL_EPSILON = 3.0
accountant = BudgetAccountant(epsilon=TOTAL_EPSILON)

# 1. private bounds of the target: 10 % of the budget
y_lo, y_hi = private_bounds(y_train, 0.1 * TOTAL_EPSILON, random_state=1, accountant=accountant)
y_lo, y_hi = float(y_lo[0]), float(y_hi[0])
print(f"private target bounds: ({y_lo:,.0f}, {y_hi:,.0f})")

# 2. the private pipeline; the epsilons only fix the split between the two steps (1:1),
#    PrivateSearchCV rescales them so one run costs a third of its budget
pipe = make_pipeline(
    PrivateStandardScaler(epsilon=1.0, clip=3.0),
    FunctionalLinearRegression(epsilon=1.0, bounds_X=(-3, 3), bounds_y=(y_lo, y_hi)),
)

# 3. private model selection with the remaining 90 %
search = PrivateSearchCV(
    pipe,
    {"functionallinearregression__ridge_factor": [0.3, 1.0, 3.0, 10.0]},
    epsilon=0.9 * TOTAL_EPSILON,
    loss_bound=(y_hi - y_lo) ** 2,  # squared error is clipped at the private range's square
    random_state=2,
    accountant=accountant,
)
search.fit(X_train, y_train)
print(f"best parameters: {search.best_params_} after {search.n_runs_} runs")

# 4. one ledger, and the comparison with the non-private pipeline
spent_epsilon, spent_delta = accountant.spent
print(f"ledger: {accountant.ledger}")
print(f"total epsilon spent: {spent_epsilon:.6f} (delta {spent_delta})")
assert abs(spent_epsilon - TOTAL_EPSILON) < 1e-9 and spent_delta == 0.0

r2_private = search.score(X_test, y_test)
baseline = make_pipeline(StandardScaler(), LinearRegression()).fit(X_train, y_train)
r2_public = baseline.score(X_test, y_test)
print(f"test R^2 private workflow: {r2_private:.4f}")
print(f"test R^2 non-private pipeline: {r2_public:.4f}")
assert r2_private > 0.8 * r2_public
