"""The window box's width on data it was not chosen on (issue #13 item 1, diagnosis only).

``dpreg._bounds.WINDOW_WIDTH`` (the linear model's one-draw feature box at small n * eps,
:func:`dpreg._bounds.private_window_box_unchecked`) was chosen on raw diabetes. This refits
random subsamples of ``--n`` rows (75/25 split) of two other sets of
``benchmarks.private_bounds`` (the simulated raw-unit set and CPS1988) with
``FunctionalLinearRegression(bounds_X="private", bounds_y="private")`` at the default share,
once with the relative box (``m -/+ RELATIVE_WIDEN |m|``, the release before the window
box) and once per window width, and prints the median R^2 (and the public-bounds fit's).
Subsample ``r`` uses ``numpy.random.default_rng(1000 + r)`` and ``train_test_split``'s
``random_state=r``; the fits use ``random_state=r``.

Run ``python -m benchmarks.private_bounds_window [--n 400] [--repeats 100]
[--widths 0.3 0.4 0.5 0.69]``. Prints only; nothing is saved.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

import dpreg._bounds as bounds_mod
from benchmarks.private_bounds import (
    CPS_BOUNDS_X,
    CPS_BOUNDS_Y,
    _fit_private,
    _fit_public,
    _simulated,
    load_cps1988,
)
from dpreg import FunctionalLinearRegression

SIM_BOUNDS = (([18.0, 0.0, 0.0, 0.0], [80.0, 25.0, 100.0, 300.0]), (-50000.0, 200000.0))


def _relative_instead(X, epsilon, candidate_range, width, rng, scale=None):
    """The relative box in the window box's place (the release before it)."""
    return bounds_mod.private_relative_box_unchecked(
        X, epsilon, candidate_range, bounds_mod.RELATIVE_WIDEN, rng, scale
    )


def run(n_sub=400, repeats=100, widths=(0.3, 0.4, 0.5, 0.69), epsilons=(1.0, 2.0)):
    X, y = _simulated()
    Xc, yc = load_cps1988()
    sets = {"simulated": (X, y, *SIM_BOUNDS), "cps1988": (Xc, yc, CPS_BOUNDS_X, CPS_BOUNDS_Y)}
    lin = FunctionalLinearRegression()
    window, width0 = bounds_mod.private_window_box_unchecked, bounds_mod.WINDOW_WIDTH
    rows = []
    try:
        for name, (X, y, bx, by) in sets.items():
            for eps in epsilons:
                row = {"dataset": name, "n": n_sub, "epsilon": eps}
                for variant in ("relative", *widths):
                    relative = variant == "relative"
                    bounds_mod.private_window_box_unchecked = (
                        _relative_instead if relative else window
                    )
                    bounds_mod.WINDOW_WIDTH = width0 if relative else float(variant)
                    pub, prv = [], []
                    for rep in range(repeats):
                        idx = np.random.default_rng(1000 + rep).choice(len(X), n_sub, False)
                        Xtr, Xte, ytr, yte = train_test_split(
                            X[idx], y[idx], test_size=0.25, random_state=rep
                        )
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            if relative:
                                fit = _fit_public(lin, Xtr, ytr, eps, bx, by, rep)
                                pub.append(fit.score(Xte, yte))
                            fit = _fit_private(lin, Xtr, ytr, eps, True, "auto", rep)
                            prv.append(fit.score(Xte, yte))
                    if relative:
                        row["public"] = float(np.median(pub))
                    key = "relative" if relative else f"window {float(variant):g}"
                    row[key] = float(np.median(prv))
                rows.append(row)
                print(pd.DataFrame([row]).to_string(index=False, float_format="%.3f"), flush=True)
    finally:
        bounds_mod.private_window_box_unchecked = window
        bounds_mod.WINDOW_WIDTH = width0
    return pd.DataFrame(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--widths", type=float, nargs="+", default=[0.3, 0.4, 0.5, 0.69])
    args = parser.parse_args()
    df = run(args.n, args.repeats, tuple(args.widths))
    print(df.to_string(index=False, float_format="%.3f"))
