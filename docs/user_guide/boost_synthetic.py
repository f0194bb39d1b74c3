"""Boosting rounds against the one-shot default on the design of ``benchmarks.linear``.

Usage: python docs/user_guide/boost_synthetic.py
Seed 001's simulation (p = 5, X uniform on [-1, 1], y ~ N(X beta, 1)), 20 data sets per n:
median ``||beta_DP - beta_OLS||_2`` (intercept and slopes) of the default, of
``boost_rounds="auto"`` (two rounds where n * epsilon >= 2000) and of ``boost_rounds=2``,
for each epsilon of ``benchmarks.linear``; the ratios are to the default. Boosting needs the
rows, so every variant is fitted by ``fit(X, y)`` (same seed, same data). Quoted in
``docs/functional_linear_regression.md`` (section 5c).
"""

import warnings

import numpy as np

from benchmarks.linear import BOUNDS_X, BOUNDS_Y, EPS_GRID, ols_with_ci, simulate
from dpreg import BudgetAccountant, FunctionalLinearRegression

VARIANTS = {"default": {}, "auto": {"boost_rounds": "auto"}, "two": {"boost_rounds": 2}}

warnings.simplefilter("ignore")
acc = BudgetAccountant()  # a throwaway ledger: this is a simulation, not one analysis
rng = np.random.default_rng(0)
for n in (1_000, 10_000, 100_000):
    errs = {}
    for rep in range(20):
        X, y = simulate(n, rng)
        b, _, _ = ols_with_ci(X, y)
        for eps in EPS_GRID:
            for label, kw in VARIANTS.items():
                m = FunctionalLinearRegression(
                    epsilon=eps, bounds_X=BOUNDS_X, bounds_y=BOUNDS_Y, random_state=rep,
                    accountant=acc, **kw,
                ).fit(X, y)  # fmt: skip
                err = np.linalg.norm(np.r_[m.intercept_, m.coef_] - b)
                errs.setdefault((eps, label), []).append(err)
    for eps in EPS_GRID:
        d, a, t = (np.median(errs[(eps, k)]) for k in VARIANTS)
        print(
            f"n={n:.0e} eps={eps:g} default {d:.4f} auto {a:.4f} ({a / d:.3f})"
            f" two {t:.4f} ({t / d:.3f})"
        )
