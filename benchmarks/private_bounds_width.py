"""What-if runs of the private-bounds fit under other box rules (issue #13 item 1, session 11).

For the sets of :mod:`benchmarks.private_bounds` and splits ``start..stop - 1`` (the
benchmark's ``train_test_split(random_state=split)``), prints the median over the splits of

* ``public``: the public-bounds fit at the full ``epsilon`` (the benchmark's denominator);
* ``oracle``: the estimator's ``"private"`` path with every release replaced by its exact
  target (:func:`benchmarks.private_bounds_diagnosis.patched_release`; NOT private), i.e.
  exact boxes at the model's share of ``epsilon``;
* ``private``: the real private-bounds fit;

for each *variant*: a set of overrides ``NAME=VALUE`` of numeric constants of
:mod:`dpreg._bounds` (``base`` = none), applied for the variant's fits only. Diagnosis
only: nothing is saved; the overrides never reach the library.

Run e.g. ``python -m benchmarks.private_bounds_width --sets houseprices caschools
--epsilons 1 2 --splits 0 100 --mode oracle --variant base FIT_WIDEN_TARGET=2``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from contextlib import nullcontext

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

import dpreg._bounds as bounds_mod
from benchmarks.private_bounds import _fit_private, _fit_public, _settings
from benchmarks.private_bounds_diagnosis import patched_release


def parse_variant(text):
    """``"base"`` or ``"NAME=VALUE,NAME=VALUE"`` -> dict of numeric overrides."""
    if text == "base":
        return {}
    out = {}
    for item in text.split(","):
        name, value = item.split("=")
        if not isinstance(getattr(bounds_mod, name), (int, float)):
            raise SystemExit(f"{name} is not a numeric constant of dpreg._bounds")
        out[name] = float(value)
    return out


def _score(fit, oracle):
    """Test score of one private-path fit (exact boxes if ``oracle``)."""
    est, Xtr, ytr, Xte, yte, eps, needs_y, share, rep, extra = fit
    with patched_release(oracle=True) if oracle else nullcontext():
        model = _fit_private(est, Xtr, ytr, eps, needs_y, share, rep, extra)
        return model.score(Xte, yte)


def _with(overrides, fn, *args):
    saved = {name: getattr(bounds_mod, name) for name in overrides}
    try:
        for name, value in overrides.items():
            setattr(bounds_mod, name, value)
        return fn(*args)
    finally:
        for name, value in saved.items():
            setattr(bounds_mod, name, value)


def run(names, epsilons, start, stop, variants, mode="both", share="auto"):
    rows = []
    for name, X, y, est, bx, by, extra in _settings(extra=True, names=names):
        needs_y = by is not None
        for eps in epsilons:
            t0 = time.process_time()
            scores = {"public": []}
            scores.update({(v, k): [] for v in variants for k in ("oracle", "private")})
            for rep in range(start, stop):
                Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=rep)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pub = _fit_public(est, Xtr, ytr, eps, bx, by, rep).score(Xte, yte)
                    scores["public"].append(pub)
                    for v in variants:
                        fit = (est, Xtr, ytr, Xte, yte, eps, needs_y, share, rep, extra)
                        for k in ("oracle", "private"):
                            if mode in (k, "both"):
                                score = _with(parse_variant(v), _score, fit, k == "oracle")
                                scores[(v, k)].append(score)
            cpu = time.process_time() - t0
            pub = float(np.median(scores["public"]))
            for v in variants:
                row = {"dataset": name, "epsilon": eps, "variant": v, "public": pub}
                for k in ("oracle", "private"):
                    if scores[(v, k)]:
                        row[k] = float(np.median(scores[(v, k)]))
                        row[f"{k}_ratio"] = row[k] / pub
                row["splits"] = f"{start}-{stop - 1}"
                row["cpu_s_cell"] = round(cpu, 1)
                rows.append(row)
            print(pd.DataFrame(rows[-len(variants) :]).to_string(index=False, float_format="%.3f"))
    return pd.DataFrame(rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["diabetes", "houseprices", "caschools"])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--splits", type=int, nargs=2, default=[0, 100], metavar=("START", "STOP"))
    parser.add_argument("--mode", choices=("oracle", "private", "both"), default="both")
    parser.add_argument("--share", default="auto")
    parser.add_argument("--variant", nargs="+", default=["base"])
    args = parser.parse_args()
    share = args.share if args.share == "auto" else float(args.share)
    t0 = time.process_time()
    df = run(args.sets, args.epsilons, *args.splits, args.variant, args.mode, share)
    print(df.to_string(index=False, float_format="%.3f"))
    print(f"total CPU {time.process_time() - t0:.1f} s")
