"""What-if: a data-dependent window width for the linear model's feature boxes (issue #13 item 1).

Session 11's measurements of idea (b) of the issue's notes: at small ``n * eps`` the linear
model's features get one window of the public width ``WINDOW_WIDTH = 0.4`` (in ``u =
asinh(x / 0.01)``) each; raw diabetes wants that width, CASchools' percentage columns want
about 1.5 (``benchmarks.private_bounds_width``). This module measures three ways to let the
data choose the width, on the benchmark's splits:

* ``--rule column-oracle`` (NOT private, the ceiling): per column, the smallest width of
  ``GRID`` whose densest window holds at least ``q n`` values (``--params q``), exact; every
  other release (coarse range, median / MAD) exact too.
* ``--rule column``: per column, ONE joint exponential-mechanism draw of (width index ``k``,
  left end ``t``) with utility ``min(#values in (t, t + w_k], Q) - D k`` (``Q = q n``, ``D =
  d n``; ``--params q/d``), sensitivity 1, base measure ``dt / w_k`` on segment ``k`` (or
  Lebesgue with ``--lebesgue``), the column's whole window budget.
* ``--rule pooled`` / ``pooled-oracle``: ONE width for all features (``GRID_POOLED``: 0.4 or
  1.5), chosen before the windows by an exponential mechanism over the two with utility
  ``S - T`` for 0.4 and 0 for 1.5, ``S = sum_j`` (most values of column ``j`` in a window of
  width 0.4), ``T = q n p`` (``--params q/phi``): sensitivity ``p`` (one row changes each
  column's maximum by at most 1), budget ``phi`` of the features' part, taken from the coarse
  stage's share (``COARSE_FRACTION`` is raised by ``phi`` for the run).

MEASUREMENT ONLY. The draws here use numpy's generator on the exact piecewise-constant (or
discrete) law, not the library's exact sampler, and nothing here is a release of the
library: none of these rules was adopted (``docs/private_workflow.md``, "Session 11: the
window's width"). Run e.g. ``python -m benchmarks.private_bounds_width_choice --rule column
--params 0.7/0.05 --sets diabetes caschools --epsilons 2 --splits 0 50``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split

import dpreg._bounds as bm
from benchmarks.private_bounds import _fit_private, _fit_public, _settings
from benchmarks.private_bounds_diagnosis import exact_coarse_range, exact_median_mad

GRID = np.array([0.2, 0.4, 0.8, 1.6, 3.2])
GRID_POOLED = np.array([0.4, 1.5])


def _most(u, width):
    """Most sorted values ``u`` in one window ``(t, t + width]`` (at a value's left end)."""
    return int((np.searchsorted(u, u + width, side="right") - np.arange(u.size)).max())


def _column_oracle(q):
    def release(X, epsilon, candidate_range, width, rng, scale=None):
        X = np.asarray(X, float).reshape(len(X), -1)
        s = bm.FIT_ASINH_SCALE
        lo, hi = np.empty(X.shape[1]), np.empty(X.shape[1])
        for j in range(X.shape[1]):
            u = np.sort(np.arcsinh(X[:, j] / s))
            held = np.array([_most(u, w) for w in GRID]) / u.size
            k = int(np.argmax(held >= q)) if np.any(held >= q) else GRID.size - 1
            counts = np.searchsorted(u, u + GRID[k], side="right") - np.arange(u.size)
            t = u[int(np.argmax(counts))]
            lo[j], hi[j] = s * np.sinh(t), s * np.sinh(t + GRID[k])
        return np.clip(lo, *candidate_range), np.clip(hi, *candidate_range)

    return release


def _joint_draw(x, eps, lo, hi, rng, s, q, d, grid, lebesgue):
    u = np.sort(np.arcsinh(np.asarray(x, float) / s))
    n = u.size
    cap, step = round(q * n), round(d * n)
    u_lo, u_hi = np.arcsinh(lo / s), np.arcsinh(hi / s)
    logw, segs = [], []
    for k, w in enumerate(grid):
        top = u_hi - w
        if top <= u_lo:
            continue
        e = np.unique(np.clip(np.concatenate([[u_lo, top], u, u - w]), u_lo, top))
        a, b = e[:-1], e[1:]
        mid = (a + b) / 2
        c = np.searchsorted(u, mid + w, side="right") - np.searchsorted(u, mid, side="right")
        loss = cap - np.minimum(c, cap) + step * k
        size = np.maximum(b - a, 1e-300) / (1.0 if lebesgue else w)
        logw.append(-eps / 2 * loss + np.log(size))
        segs.append((w, a, b))
    logp = np.concatenate(logw)
    p = np.exp(logp - logp.max())
    i = int(rng.choice(p.size, p=p / p.sum()))
    for w, a, b in segs:
        if i < a.size:
            return rng.uniform(a[i], b[i]), w
        i -= a.size
    raise AssertionError


def _column_private(q, d, grid, lebesgue):
    def release(X, epsilon, candidate_range, width, rng, scale=None):
        X, p, eps_col, _, s = bm._per_column(X, epsilon, 1.0, scale)
        lo, hi = np.empty(p), np.empty(p)
        for j in range(p):
            t, w = _joint_draw(X[:, j], float(eps_col[j]), *candidate_range, rng, s, q, d,
                               grid, lebesgue)  # fmt: skip
            lo[j], hi[j] = s * np.sinh(t), s * np.sinh(t + w)
        return np.clip(lo, *candidate_range), np.clip(hi, *candidate_range)

    return release


def _pooled(q, phi, oracle, state, coarse_release, window_release):
    def coarse(X, epsilon, candidate_range, width, rng, scale=None):
        X = np.asarray(X, float).reshape(X.shape[0], -1)
        n, p = X.shape
        eps_c = epsilon * (bm.COARSE_FRACTION - phi) / bm.COARSE_FRACTION
        eps_w = epsilon - eps_c
        s = bm.FIT_ASINH_SCALE
        total = sum(_most(np.sort(np.arcsinh(X[:, j] / s)), GRID_POOLED[0]) for j in range(p))
        utility = np.array([total - round(q * n * p), 0.0])
        if oracle:
            k = int(np.argmax(utility))
        else:
            logp = eps_w / p / 2 * utility
            prob = np.exp(logp - logp.max())
            k = int(rng.choice(2, p=prob / prob.sum()))
        state["w"] = GRID_POOLED[k]
        return coarse_release(X, eps_c, candidate_range, width, rng, scale)

    def window(X, epsilon, candidate_range, width, rng, scale=None):
        return window_release(X, epsilon, candidate_range, state.get("w", width), rng, scale)

    return coarse, window


def run(rule, params, names, epsilons, start, stop, lebesgue=False, grid=GRID):
    names_patched = ("private_window_box_unchecked", "private_coarse_range_unchecked",
                     "private_median_mad_unchecked", "COARSE_FRACTION")  # fmt: skip
    saved = {name: getattr(bm, name) for name in names_patched}
    state = {}
    patches = {}
    if rule == "column-oracle":
        patches = {"private_window_box_unchecked": _column_oracle(float(params[0])),
                   "private_coarse_range_unchecked": exact_coarse_range,
                   "private_median_mad_unchecked": exact_median_mad}  # fmt: skip
    elif rule == "column":
        q, d = (float(v) for v in params)
        patches = {"private_window_box_unchecked": _column_private(q, d, grid, lebesgue)}
    elif rule in ("pooled", "pooled-oracle"):
        q, phi = (float(v) for v in params)
        coarse, window = _pooled(q, phi, rule == "pooled-oracle", state,
                                 saved["private_coarse_range_unchecked"],
                                 saved["private_window_box_unchecked"])  # fmt: skip
        patches = {"private_coarse_range_unchecked": coarse,
                   "private_window_box_unchecked": window,
                   "COARSE_FRACTION": saved["COARSE_FRACTION"] + phi}  # fmt: skip
    for name, X, y, est, bx, by, extra in _settings(extra=True, names=names):
        for eps in epsilons:
            t0 = time.process_time()
            pub, base, var, widths = [], [], [], []
            for rep in range(start, stop):
                Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=rep)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pub.append(_fit_public(est, Xtr, ytr, eps, bx, by, rep).score(Xte, yte))
                    fit = (est, Xtr, ytr, eps, by is not None, "auto", rep, extra)
                    base.append(_fit_private(*fit).score(Xte, yte))
                    state.clear()
                    try:
                        for attr, value in patches.items():
                            setattr(bm, attr, value)
                        var.append(_fit_private(*fit).score(Xte, yte))
                    finally:
                        for attr, value in saved.items():
                            setattr(bm, attr, value)
                    widths.append(state.get("w", np.nan))
            p = float(np.median(pub))
            b, v = float(np.median(base)), float(np.median(var))
            line = (f"{name} eps={eps:g} splits {start}-{stop - 1}: public {p:.3f}, "
                    f"committed {b:.3f} ({b / p:.2f}), {rule} {'/'.join(params)} {v:.3f} "
                    f"({v / p:.2f})")  # fmt: skip
            w = np.asarray(widths)
            if np.any(~np.isnan(w)):
                line += f", P(width 1.5) {np.mean(w[~np.isnan(w)] == GRID_POOLED[1]):.2f}"
            print(line + f", CPU {time.process_time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rule", required=True,
                        choices=("column-oracle", "column", "pooled", "pooled-oracle"))  # fmt: skip
    parser.add_argument("--params", required=True, help="q (column-oracle), q/d, or q/phi")
    parser.add_argument("--sets", nargs="+", default=["diabetes", "houseprices", "caschools"])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--splits", type=int, nargs=2, default=[0, 100])
    parser.add_argument("--lebesgue", action="store_true", help="column: base measure dt")
    parser.add_argument("--grid", type=float, nargs="+", default=list(GRID))
    parser.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE",
                        help="override numeric constants of dpreg._bounds for the run, e.g. "
                        "TARGET_MEDIAN_FRACTION=0.5 (the split before session 11)")  # fmt: skip
    args = parser.parse_args()
    for item in args.set:
        name, value = item.split("=")
        if not isinstance(getattr(bm, name), (int, float)):
            raise SystemExit(f"--set: {name} is not a numeric constant of dpreg._bounds")
        setattr(bm, name, float(value))
    run(args.rule, args.params.split("/"), args.sets, args.epsilons, *args.splits,
        lebesgue=args.lebesgue, grid=np.array(args.grid))  # fmt: skip
