"""Where does a private-bounds fit lose accuracy on the small sets? (issue #13 item 1)

For each small data set of ``benchmarks.private_bounds`` (diabetes, breast cancer, Engel) and
total ``epsilon``, over the same 75/25 splits, at a budget share ``share`` of the bounds
(``"auto"`` = the estimators' default rule, or a number):

* ``public``: the public-bounds fit at the full ``epsilon`` (the benchmark's denominator);
* ``public_rest``: the public-bounds fit at ``(1 - share) epsilon`` (c): the loss from the
  budget the bounds take, with the hand-written bounds;
* ``oracle``: the estimator's own ``"private"`` path with the released boxes replaced by the
  exact targets of the release (per column median -/+ widen * MAD, or -/+ widen * median |x|
  for a scale-only column, median -/+ widen * |median| for a relative one, the densest
  window for a window one; the same clipping in ``predict``), fitted at
  ``(1 - share) epsilon`` (a). NOT private: it
  separates "the share is too big" from "the released bounds are bad";
* ``private``: the real private-bounds fit;
* bound quality (b): for every released column, ``log(released half-width / target
  half-width)`` and ``|released centre - target centre| / target half-width``, summarised as
  medians over columns and splits (0 and 0 are perfect).

Run ``python -m benchmarks.private_bounds_diagnosis [--repeats 20] [--shares auto 0.2 0.1]``.
Prints a table (medians over splits); diagnosis only, nothing is saved.

``--per-release`` adds, for every release of a fit (in the order ``fit_bounds`` makes them:
the coarse pooled range first where ``coarse_rule`` switches, then scale-only units,
then one-draw relative or window units, then median / MAD units, each in column order), the
share of splits where its box is off (width off by more than a factor
2 or centre by more than half a width), and how often the private fit fails (score below
``--fail-below``) when that box is off and when every box is good. ``--set NAME=VALUE``
overrides a numeric constant of
:mod:`dpreg._bounds` for the run (e.g. ``FIT_WIDEN=3``): a what-if, diagnosis only.

``--reliability`` prints instead, for a few real columns, the probability that one private
median draw (asinh scale ``FIT_ASINH_SCALE``, range ``DEFAULT_CANDIDATE_RANGE``) lands in
the column's interquartile range, as a function of the draw's budget times n, computed from
the mechanism's exact piecewise-constant law (no sampling); and, for the ten raw diabetes
features, the probability that one window draw (``WINDOW_WIDTH``) holds at least half of what
the best window holds, with the default candidate range and a 3.7 times shorter one.
"""

from __future__ import annotations

import argparse
import warnings
from contextlib import contextmanager

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import train_test_split

import dpreg._bounds as bounds_mod
from benchmarks.private_bounds import _fit_private, _fit_public, _settings


def exact_median_mad(X, epsilon, candidate_range, widen, rng, scale=None, median_fraction=0.5):
    """The targets of :func:`dpreg._bounds.private_median_mad_unchecked` (no noise)."""
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    m = np.median(X, axis=0)
    s = np.median(np.abs(X - m), axis=0)
    widen = np.broadcast_to(np.asarray(widen, dtype=float), m.shape)
    return np.clip(m - widen * s, *candidate_range), np.clip(m + widen * s, *candidate_range)


def exact_abs_scale(X, epsilon, candidate_range, widen, rng, scale=None):
    """The targets of :func:`dpreg._bounds.private_abs_scale_unchecked` (no noise)."""
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    half = np.asarray(widen, dtype=float) * np.median(np.abs(X), axis=0)
    return np.clip(-half, *candidate_range), np.clip(half, *candidate_range)


def exact_relative_box(X, epsilon, candidate_range, widen, rng, scale=None):
    """The targets of :func:`dpreg._bounds.private_relative_box_unchecked` (no noise)."""
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    m = np.median(X, axis=0)
    half = np.asarray(widen, dtype=float) * np.abs(m)
    return np.clip(m - half, *candidate_range), np.clip(m + half, *candidate_range)


def exact_window_box(X, epsilon, candidate_range, width, rng, scale=None):
    """The target of :func:`dpreg._bounds.private_window_box_unchecked` (no noise): per
    column, the window ``[u_i, u_i + width]`` in ``u = asinh(x / s)`` that holds the most
    values (the first such ``u_i``)."""
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    s = bounds_mod.FIT_ASINH_SCALE if scale is None else scale
    lower, upper = np.empty(X.shape[1]), np.empty(X.shape[1])
    for j in range(X.shape[1]):
        u = np.sort(np.arcsinh(X[:, j] / s))
        counts = np.searchsorted(u, u + width, side="right") - np.arange(u.size)
        t = u[int(np.argmax(counts))]
        lower[j], upper[j] = s * np.sinh(t), s * np.sinh(t + width)
    return np.clip(lower, *candidate_range), np.clip(upper, *candidate_range)


def exact_coarse_range(X, epsilon, candidate_range, width, rng, scale=None):
    """The target of :func:`dpreg._bounds.private_coarse_range_unchecked` (no noise): the
    window of width ``width`` in ``u`` holding the most pooled values of ``X``."""
    s = bounds_mod.FIT_ASINH_SCALE if scale is None else scale
    u = np.sort(np.arcsinh(np.asarray(X, dtype=float).ravel() / s))
    counts = np.searchsorted(u, u + width, side="right") - np.arange(u.size)
    t = u[int(np.argmax(counts))]
    lo, hi = s * np.sinh(t), s * np.sinh(t + width)
    return float(np.clip(lo, *candidate_range)), float(np.clip(hi, *candidate_range))


RELEASES = {
    "private_coarse_range_unchecked": exact_coarse_range,
    "private_median_mad_unchecked": exact_median_mad,
    "private_abs_scale_unchecked": exact_abs_scale,
    "private_relative_box_unchecked": exact_relative_box,
    "private_window_box_unchecked": exact_window_box,
}


@contextmanager
def patched_release(oracle=False, record=None):
    """Replace the releases used by ``fit_bounds`` by their exact targets (``oracle``), or
    wrap them to record (released, exact) boxes."""
    originals = {name: getattr(bounds_mod, name) for name in RELEASES}

    def recording(name):
        def release(*args, **kwargs):
            out = originals[name](*args, **kwargs)
            record.append((out, RELEASES[name](*args, **kwargs)))
            return out

        return release

    for name, exact in RELEASES.items():
        setattr(bounds_mod, name, exact if oracle else recording(name))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(bounds_mod, name, original)


def _share_value(share, eps, n, n_cols):
    return bounds_mod.bounds_epsilon(share, eps, n, n_cols) / eps


def bound_quality(record):
    """Median log width ratio and centre offset (in target half-widths) over all columns."""
    logw, off = [], []
    for (lo, hi), (tlo, thi) in record:
        if np.ndim(lo) == 0:  # the coarse range: not a box of a column
            continue
        half, thalf = (hi - lo) / 2, (thi - tlo) / 2
        ok = thalf > 0
        logw.extend(np.log(half[ok] / thalf[ok]))
        off.extend(np.abs((hi + lo) / 2 - (thi + tlo) / 2)[ok] / thalf[ok])
    logw, off = np.asarray(logw), np.asarray(off)
    return {
        "med_abs_logw": float(np.median(np.abs(logw))),
        "p90_abs_logw": float(np.quantile(np.abs(logw), 0.9)),
        "med_offset": float(np.median(off)),
        "frac_bad": float(np.mean((np.abs(logw) > np.log(2)) | (off > 0.5))),
    }


def _off(released, exact):
    (lo, hi), (tlo, thi) = released, exact
    half, thalf = (hi - lo) / 2, (thi - tlo) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        logw = np.abs(np.log(half / thalf))
        off = np.abs((hi + lo) / 2 - (thi + tlo) / 2) / thalf
    return bool(np.any((logw > np.log(2)) | (off > 0.5)))


def per_release_table(per_fit, scores, fail_below):
    """One row per release index: P(box off), P(fail | that box off), P(fail | all good)."""
    off = np.array([[_off(*call) for call in fit] for fit in per_fit])
    fail = np.asarray(scores) < fail_below
    good = ~off.any(axis=1)
    rows = []
    for i in range(off.shape[1]):
        rows.append(
            {
                "release": i,
                "p_off": off[:, i].mean(),
                "p_fail_if_off": fail[off[:, i]].mean() if off[:, i].any() else np.nan,
                "n_off": int(off[:, i].sum()),
            }
        )
    out = pd.DataFrame(rows)
    out["p_fail_all_good"] = fail[good].mean() if good.any() else np.nan
    out["n_all_good"] = int(good.sum())
    return out


def run(repeats=20, epsilons=(1.0, 2.0), shares=("auto",), names=None, per_release=None):
    """The table above; ``per_release`` (a fail threshold) also prints the per-release one."""
    rows = []
    names = names or ("diabetes", "breast_cancer", "engel")
    for name, X, y, est, bx, by, x in _settings(extra=True, names=names):
        if "progress_bar" in est.get_params():
            est = clone(est).set_params(progress_bar=False)
        n_cols = X.shape[1] + (by is not None)
        for eps in epsilons:
            for share in shares:
                res = {"public": [], "public_rest": [], "oracle": [], "private": []}
                record, per_fit = [], []
                n_tr = None
                for rep in range(repeats):
                    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=rep)
                    n_tr = len(Xtr)
                    s = _share_value(share, eps, n_tr, n_cols)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        pub = _fit_public(est, Xtr, ytr, eps, bx, by, rep)
                        res["public"].append(pub.score(Xte, yte))
                        rest = (1 - s) * eps
                        res["public_rest"].append(
                            _fit_public(clone(est), Xtr, ytr, rest, bx, by, rep).score(Xte, yte)
                        )
                        with patched_release(oracle=True):
                            fit = _fit_private(est, Xtr, ytr, eps, by is not None, share, rep, x)
                            res["oracle"].append(fit.score(Xte, yte))
                        start = len(record)
                        with patched_release(record=record):
                            fit = _fit_private(est, Xtr, ytr, eps, by is not None, share, rep, x)
                            res["private"].append(fit.score(Xte, yte))
                        per_fit.append(record[start:])
                med = {k: float(np.median(v)) for k, v in res.items()}
                row = {
                    "dataset": name,
                    "epsilon": eps,
                    "share": str(share),
                    "n_train": n_tr,
                    "share_value": round(_share_value(share, eps, n_tr, n_cols), 3),
                    **med,
                }
                for k in ("public_rest", "oracle", "private"):
                    row[f"ratio_{k}"] = med[k] / med["public"]
                row.update(bound_quality(record))
                rows.append(row)
                print(pd.DataFrame([row]).to_string(index=False, float_format="%.3f"), flush=True)
                if per_release is not None:
                    table = per_release_table(per_fit, res["private"], per_release)
                    print(table.to_string(index=False, float_format="%.3f"), flush=True)
    return pd.DataFrame(rows)


def prob_in_iqr(values, epsilon):
    """P(the exact KNG median draw lies in [q25, q75] of ``values``), from its exact law."""
    s, (lo, hi) = bounds_mod.FIT_ASINH_SCALE, bounds_mod.DEFAULT_CANDIDATE_RANGE
    u = np.sort(np.arcsinh(np.asarray(values, dtype=float) / s))
    n = u.size
    edges = np.concatenate([[np.arcsinh(lo / s)], u, [np.arcsinh(hi / s)]])
    counts = np.arange(n + 1)  # #{u_i <= theta} on each piece
    logw = -epsilon / 2 * np.abs(counts - n / 2) + np.log(np.maximum(np.diff(edges), 1e-300))
    w = np.exp(logw - logw.max())
    w /= w.sum()
    return float(w[(counts >= n // 4) & (counts <= 3 * n // 4)].sum())


def prob_window_good(values, epsilon, lower=None, upper=None, share=0.5):
    """P(the exact window draw of :func:`dpreg._bounds.private_window_box_unchecked` holds at
    least ``share`` of the most values any window holds), from its exact law (no sampling).
    ``lower, upper``: the candidate range (default ``DEFAULT_CANDIDATE_RANGE``)."""
    s, w = bounds_mod.FIT_ASINH_SCALE, bounds_mod.WINDOW_WIDTH
    c_lo, c_hi = bounds_mod.DEFAULT_CANDIDATE_RANGE
    u_lo = np.arcsinh((c_lo if lower is None else lower) / s)
    top = np.arcsinh((c_hi if upper is None else upper) / s) - w
    u = np.arcsinh(np.asarray(values, dtype=float) / s)
    edges = np.unique(np.clip(np.concatenate([[u_lo, top], u, u - w]), u_lo, top))
    mids = (edges[:-1] + edges[1:]) / 2
    inside = ((u[None, :] > mids[:, None]) & (u[None, :] <= mids[:, None] + w)).sum(axis=1)
    logw = -epsilon / 2 * (u.size - inside) + np.log(np.diff(edges))
    prob = np.exp(logw - logw.max())
    return float(prob[inside >= share * inside.max()].sum() / prob.sum())


def window_reliability_table(budget_ranks=(8, 10, 13, 16, 20)):
    """:func:`prob_window_good` on the ten raw diabetes features (first 331 rows), as the
    range over the columns, with the default candidate range and with one 3.7 times shorter
    in ``u`` (``[0.05, 5e4]``: what a free coarse first stage could give at best)."""
    from sklearn.datasets import load_diabetes

    X, _ = load_diabetes(return_X_y=True, scaled=False)
    X = X[:331]
    rows = {}
    for r in budget_ranks:
        full = [prob_window_good(X[:, j], r / 331) for j in range(X.shape[1])]
        short = [prob_window_good(X[:, j], r / 331, 0.05, 5e4) for j in range(X.shape[1])]
        rows[r] = {
            "default range": f"{min(full):.2f}-{max(full):.2f}",
            "range [0.05, 5e4]": f"{min(short):.2f}-{max(short):.2f}",
        }
    return pd.DataFrame(rows).T.rename_axis("eps_draw * n")


def reliability_table(budget_ranks=(8, 12, 16, 24, 32, 48)):
    from sklearn.datasets import load_breast_cancer, load_diabetes

    X, y = load_diabetes(return_X_y=True, scaled=False)
    Xb, _ = load_breast_cancer(return_X_y=True)
    columns = {
        "diabetes age": X[:331, 0],
        "diabetes s1": X[:331, 4],
        "diabetes s5": X[:331, 8],
        "diabetes y": y[:331],
        "breast cancer smoothness": Xb[:426, 4],
        "breast cancer area": Xb[:426, 3],
    }
    rows = {
        name: {r: prob_in_iqr(col, r / col.size) for r in budget_ranks}
        for name, col in columns.items()
    }
    return pd.DataFrame(rows).T.rename_axis("column (P in IQR) / eps_draw * n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--shares", nargs="+", default=["auto"])
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument("--reliability", action="store_true")
    parser.add_argument("--per-release", action="store_true")
    parser.add_argument("--fail-below", type=float, default=0.5)
    parser.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    for item in args.set:
        name, value = item.split("=")
        if not isinstance(getattr(bounds_mod, name), (int, float)):
            raise SystemExit(f"--set: {name} is not a numeric constant of dpreg._bounds")
        setattr(bounds_mod, name, float(value))
    if args.reliability:
        print(reliability_table().to_string(float_format="%.2f"))
        print(window_reliability_table().to_string())
        raise SystemExit
    shares = [s if s == "auto" else float(s) for s in args.shares]
    fail = args.fail_below if args.per_release else None
    df = run(args.repeats, tuple(args.epsilons), shares, args.datasets, fail)
    print(df.to_string(index=False, float_format="%.3f"))
