"""Seed 001, Figure 4 (Algorithm 4), regenerated with a line for dpreg's private intervals.

Seed 001's Figure 4 plots, against epsilon, how often the DP estimate of each slope falls
inside the non-private OLS 95% interval (l1-mech and linf-mech, the paper's joint release
with ``pinv``), next to the share of OLS intervals that contain the true slope (~0.95). The new
line is the share of dpreg's private 95% intervals (``FunctionalLinearRegression`` with
``inference_share=0.1`` at the *same total* epsilon, ``conf_int``) that contain the true
slope: the quantity a user of the private intervals relies on.

Setting as in ``benchmarks.linear`` (p = 5, ``beta = (0, -1.5, ..., 1.5)``, ``x ~ U[-1, 1]^5``,
``y ~ N(x beta, 1)``, bounds (-1, 1) and (-7.5, 7.5)); fewer epsilons and replicates than the
paper's 200 to fit a 2-core machine (see ``REPS``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from dpreg import FunctionalLinearRegression
from dpreg.linear_model.functional import sufficient_statistics

from ._common import save
from .linear import BETA, BOUNDS_X, BOUNDS_Y, ols_with_ci, simulate

EPS = [1 / 16, 1 / 4, 1.0, 4.0]
REPS = {"quick": {10_000: 8}, "full": {10_000: 50, 1_000_000: 20}}
N_BOOT = 200
PAPER = {"l1-mech (paper)": "l1", "linf-mech (paper)": "linf"}


def _rows(n, reps, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for rep in range(reps):
        X, y = simulate(n, rng)
        b_ols, lo, hi = ols_with_ci(X, y)
        st = sufficient_statistics(X, y, BOUNDS_X, BOUNDS_Y)
        truth_in = np.mean((lo[1:] <= BETA[1:]) & (BETA[1:] <= hi[1:]))
        rows.append(
            dict(n=n, epsilon=np.nan, method="true beta in OLS CI", rep=rep, share=truth_in)
        )
        for eps in EPS:
            for name, norm in PAPER.items():
                m = FunctionalLinearRegression(
                    epsilon=eps,
                    norm=norm,
                    release="joint",
                    postprocess="none",
                    bounds_X=BOUNDS_X,
                    bounds_y=BOUNDS_Y,
                    random_state=rng,
                ).fit_statistics(st)
                inside = (lo[1:] <= m.coef_) & (m.coef_ <= hi[1:])
                rows.append(dict(n=n, epsilon=eps, method=name, rep=rep, share=inside.mean()))
            m = FunctionalLinearRegression(
                epsilon=eps,
                bounds_X=BOUNDS_X,
                bounds_y=BOUNDS_Y,
                inference_share=0.1,
                random_state=rng,
            ).fit_statistics(st)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                ci = m.conf_int(0.05, n_boot=N_BOOT)[1:]
            inside = (ci[:, 0] <= BETA[1:]) & (BETA[1:] <= ci[:, 1])
            rows.append(
                dict(
                    n=n,
                    epsilon=eps,
                    method="dpreg private CI covers true beta",
                    rep=rep,
                    share=inside.mean(),
                )
            )
    return rows


def run(quick: bool = False) -> pd.DataFrame:
    reps = REPS["quick" if quick else "full"]
    rows = []
    for i, (n, r) in enumerate(reps.items()):
        rows += _rows(n, r, seed=4000 + i)
    raw = pd.DataFrame(rows)
    table = (
        raw.groupby(["n", "method", "epsilon"], dropna=False)
        .agg(share=("share", "mean"), reps=("rep", "nunique"))
        .reset_index()
    )
    print(table.to_string(index=False))
    save(table, "inference_figure4", _figure(table), quick=quick)
    return table


def _figure(table):
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    sizes = sorted(table.n.unique())
    fig, axes = plt.subplots(len(sizes), 1, figsize=(6, 3.2 * len(sizes)), squeeze=False)
    for ax, n in zip(axes[:, 0], sizes, strict=True):
        g = table[table.n == n]
        for method, h in g.dropna(subset=["epsilon"]).groupby("method"):
            style = "s-" if method.startswith("dpreg") else "o--"
            ax.plot(h.epsilon, h.share, style, ms=4, label=method)
        ref = g[g.epsilon.isna()].share
        if len(ref):
            ax.axhline(float(ref.iloc[0]), color="k", lw=1, label="true beta in OLS CI")
        ax.set(
            xscale="log",
            ylim=(0, 1.02),
            xlabel="epsilon",
            ylabel="proportion",
            title=f"seed 001 Figure 4 (p = 5, n = {n:.0e})",
        )
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
