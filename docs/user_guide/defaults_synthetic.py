"""The l_inf block defaults against the previous ones on the design of ``benchmarks.linear``.

Usage: python docs/user_guide/defaults_synthetic.py
Seed 001's simulation (p = 5, X uniform on [-1, 1], y ~ N(X beta, 1)), 20 data sets per n:
median ``||beta_DP - beta_OLS||_2`` (intercept and slopes) of today's default
(``GRAM_WEIGHT = 0.25`` split, floor factor 1.5) and of the previous default (worst-case
split weight, ``ridge_factor=3``), for each epsilon of ``benchmarks.linear``. Quoted in
``docs/functional_linear_regression.md`` (section 6).
"""

import warnings

import numpy as np

from benchmarks.linear import EPS_GRID, P, variant_errors
from dpreg import BudgetAccountant
from dpreg.linear_model._functional_sensitivity import Layout
from dpreg.linear_model.functional import split_for_weight


def previous_split(p):
    """``default_split`` with the worst-case weight 1 / (p + 1) (before issue 14's tuning)."""
    return split_for_weight(Layout(p, True), 1.0 / (p + 1.0))


warnings.simplefilter("ignore")
acc = BudgetAccountant()  # a throwaway ledger: this is a simulation, not one analysis
rng = np.random.default_rng(0)
previous = {"split": previous_split(P), "ridge_factor": 3.0}
for n in (1_000, 10_000, 100_000):
    errs = variant_errors(n, 20, {"default": {}, "previous": previous}, rng, acc)
    for eps in EPS_GRID:
        d, o = (np.median(errs[(eps, k)]) for k in ("default", "previous"))
        print(f"n={n:.0e} eps={eps:g} default {d:.4f} previous {o:.4f} ratio {d / o:.3f}")
