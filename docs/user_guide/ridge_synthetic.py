"""ridge="adaptive" against the default on the synthetic design of ``benchmarks.linear``.

Usage: python docs/user_guide/ridge_synthetic.py
Seed 001's simulation (p = 5, X uniform on [-1, 1], y ~ N(X beta, 1)): median over data sets
(20 at n = 10^4, 5 at n = 10^6) of ``||beta_DP - beta_OLS||_2`` (intercept and slopes) for each
epsilon of ``benchmarks.linear``. Quoted in ``docs/functional_linear_regression.md`` (5a).
"""

import warnings

import numpy as np

from benchmarks.linear import EPS_GRID, variant_errors
from dpreg import BudgetAccountant

warnings.simplefilter("ignore")
acc = BudgetAccountant()  # a throwaway ledger: this is a simulation, not one analysis
rng = np.random.default_rng(0)
for n in (10_000, 1_000_000):
    variants = {"default": {}, "adaptive": {"ridge": "adaptive"}}
    errs = variant_errors(n, 20 if n == 10_000 else 5, variants, rng, acc)
    for eps in EPS_GRID:
        d, a = (np.median(errs[(eps, k)]) for k in ("default", "adaptive"))
        print(f"n={n:.0e} eps={eps:g} default {d:.4f} adaptive {a:.4f} ratio {a / d:.3f}")
