"""The PSD floor where boosting does not run (n * epsilon < 2000): fixed factors and a risk rule.

A diagnosis for issue 14 item 2 (``docs/functional_linear_regression.md``, section 5d), not a
method of the library. For every real-data cell with ``n_train * epsilon < 2000`` (where
``boost_rounds="auto"`` is the one-shot release) the *same* released statistics are solved
with the floor ``f * sqrt(p + 1) * sigma_G`` for each ``f`` of :data:`FACTORS` (post-processing,
so the columns differ only by the floor), and with ``f`` chosen per release by the risk rule
below. Folds, seeds and runs are those of ``python -m benchmarks.realdata`` (20 draws per fold
for n < 1000, 10 otherwise), so the ``1.5`` column is the matrix's ``dpreg`` column.

The risk rule (rejected). For a floor ``lam`` the solve is ``theta = M^{-1} b~`` with ``M`` the
noisy Gram ``G~`` floored at ``lam``; the in-sample risk up to a constant is
``theta^T G theta - 2 theta^T b``. Because ``theta`` is linear in ``b~`` and the target noise
``e`` has uncorrelated coordinates of variance ``sigma_y^2`` (the l_inf K-norm noise is
sign-symmetric) independent of ``M``, ``E[theta^T e | M] = sigma_y^2 tr(M^{-1})`` exactly. The
Gram term is corrected to first order in the Gram noise ``E`` on the unfloored eigenspace
(``P``): ``E[theta^T E theta] ~ -2 E[theta_P^T E M_P^{-1} E theta_P]``, with the entrywise
variances of ``E`` (``sigma_G^2`` off the diagonal, ``sigma_G^2 / 4`` on it, 0 at the intercept
corner). The rule picks the factor of :data:`RISK_GRID` with the smallest estimate, from
released values only. It chose too small floors (the first-order correction misses most of the
Gram noise's effect near the noise level) and lost to the fixed 1.5 on most cells.

Run: ``python -m benchmarks.realdata_floor [--quick]``; writes ``realdata_floor.md`` to
``benchmarks/results/`` (``results/quick/`` with ``--quick``: 1 draw per fold).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold

from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg.linear_model._boost import AUTO_MIN_N_EPS
from dpreg.linear_model.functional import solve_normal_equations, sufficient_statistics

from . import _realdata_sets as sets
from ._common import cli_parser, pipe_table, results_dir
from .realdata import EPS_GRID, median_se, reps_for

FACTORS = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
RISK_GRID = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def _variances(q, sigma_g):
    v = np.full((q, q), sigma_g**2)
    np.fill_diagonal(v, sigma_g**2 / 4.0)  # squares are released doubled
    v[0, 0] = 0.0  # n, public
    return v


def risk_estimate(gram, xty, lam, variances, sigma_y):
    """The risk rule's estimate for the floor ``lam`` (module docstring)."""
    g = 0.5 * (gram + gram.T)
    w, U = np.linalg.eigh(g)
    m = np.maximum(w, lam)
    theta = U @ ((U.T @ xty) / m)
    free = w > lam
    Mp = (U[:, free] / m[free]) @ U[:, free].T
    tp = U[:, free] @ (U[:, free].T @ theta)
    corr = np.sum(tp**2 * (variances @ np.diag(Mp))) + tp @ (variances * Mp) @ tp
    return theta @ g @ theta + 2.0 * corr - 2.0 * theta @ xty + 2.0 * sigma_y**2 * np.sum(1.0 / m)


def _cells(name, quick):
    data = sets.load(name)
    folds = list(KFold(5, shuffle=True, random_state=0).split(data.X))
    reps = reps_for(len(data.y), quick)
    acc = BudgetAccountant(epsilon=float("inf"), delta=0.5)
    stats = [
        sufficient_statistics(data.X[tr], data.y[tr], data.bounds_X, data.bounds_y)
        for tr, _ in folds
    ]
    rows = []
    for eps in EPS_GRID:
        if len(folds[0][0]) * eps >= AUTO_MIN_N_EPS:
            continue
        res = {}
        for f, (_, test) in enumerate(folds):
            st = stats[f]
            for rep in range(reps):
                rs = 100 * f + 7919 * rep + int(1000 * eps)  # the matrix's seeds
                model = FunctionalLinearRegression(epsilon=eps, random_state=rs, accountant=acc)
                ns = model.fit_statistics(st).noisy_statistics_
                unit = ns.lam / model.ridge_factor_
                v = _variances(len(ns.gram), ns.plan.gram_std)
                risks = [
                    risk_estimate(ns.gram, ns.xty, f_ * unit, v, ns.plan.target_std)
                    for f_ in RISK_GRID
                ]
                choice = RISK_GRID[int(np.argmin(risks))]
                for label, fac in [*((str(x), x) for x in FACTORS), ("risk rule", choice)]:
                    beta = solve_normal_equations(ns.gram, ns.xty, "psd", fac * unit, True)
                    model._set_coefficients(beta, st)
                    r2 = r2_score(data.y[test], model.predict(data.X[test]))
                    res.setdefault(label, []).append(r2)
        row = dict(dataset=name, epsilon=eps, n_eps=round(len(folds[0][0]) * eps))
        for label, v in res.items():
            row[label] = round(float(np.median(v)), 3)
        row["se (1.5)"] = round(median_se(res["1.5"]), 3)
        rows.append(row)
    return rows


def run(quick=False):
    t0 = time.perf_counter()
    rows = []
    for name in sets.LOADERS:
        rows += _cells(name, quick)
    df = pd.DataFrame(rows)
    cmd = "python -m benchmarks.realdata_floor" + (" --quick" if quick else "")
    took = f"{time.perf_counter() - t0:.0f} s wall time on a shared, loaded 2-core machine"
    text = (
        f"# PSD floor factor where n * epsilon < 2000\n\nProduced by `{cmd}` ({took}). Median"
        " held-out R^2 over folds x draws; columns are floor factors (times sqrt(p + 1)"
        " sigma_G) on the same releases; 1.5 is the default.\n\n" + pipe_table(df) + "\n"
    )
    print(text)
    (results_dir(quick) / "realdata_floor.md").write_text(text)
    return df


def main(argv=None):
    args = cli_parser(__doc__).parse_args(argv)
    run(quick=args.quick)


if __name__ == "__main__":
    main()
