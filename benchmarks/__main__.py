"""Run every benchmark and write a Markdown summary: ``python -m benchmarks [--quick]``.

Each module ``benchmarks/<name>.py`` (names not starting with ``_``) exposes
``run(quick: bool) -> pandas.DataFrame`` and writes ``benchmarks/results/<name>.csv`` and
``<name>.png`` itself. This runner calls them one after the other, records the wall time and
status of each, and writes

* ``benchmarks/results/suite.csv``: one row per benchmark (status, seconds, rows, error);
* ``benchmarks/results/SUMMARY.md``: per benchmark, the headline ratios (from the module's own
  ``summary(df) -> str`` when it defines one, otherwise from a summariser below that knows the
  module's table, otherwise every column whose name contains "ratio").

A benchmark that fails is reported in the summary and the runner exits with status 1 after
running the others.
"""

from __future__ import annotations

import argparse
import importlib
import math
import pkgutil
import sys
import time
import traceback
from pathlib import Path

import pandas as pd

from ._common import results_dir, save

PACKAGE = Path(__file__).resolve().parent


def discover():
    """Names of the benchmark modules, in alphabetical order."""
    return sorted(
        m.name
        for m in pkgutil.iter_modules([str(PACKAGE)])
        if not m.name.startswith("_") and not m.ispkg  # packages (baselines/) are helpers
    )


# ----------------------------------------------------------------------------------------------
# Markdown helpers (no tabulate dependency)
# ----------------------------------------------------------------------------------------------


def _fmt(v):
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
            return f"{v:.3g}"
        return f"{v:.4g}"
    return str(v)


def markdown_table(df, index=True):
    """Render a DataFrame as a GitHub Markdown table."""
    if index:
        df = df.reset_index()
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v) for v in row) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# Summarisers for modules that do not define summary(df)
# ----------------------------------------------------------------------------------------------


def _summary_noise(df):
    err = df[df.metric == "expected_sq_l2"].pivot_table(
        index=["dim", "epsilon"], columns="mechanism", values="value"
    )
    ratio = err.div(err["l1"], axis=0)
    ratio.columns = [f"{c} / l1" for c in ratio.columns]
    return (
        "Expected squared l2 error E||V||^2 of each mechanism divided by that of the Laplace "
        "(l1 K-norm) baseline of the same run, box sensitivity (lower is better):\n\n"
        + markdown_table(ratio)
    )


def _summary_huber(df):
    keys = [c for c in ("setting", "dim", "epsilon", "delta") if c in df.columns]
    cols = [c for c in ("flipped_huber", "gaussian", "laplace", "paper_table2") if c in df]
    ratios = [c for c in df.columns if "_over_" in str(c)]
    return (
        "Variance of the flipped Huber mechanism (Delta = 1) next to the Gaussian and Laplace "
        "variances of the same run, and their ratios (below 1: flipped Huber is better):\n\n"
        + markdown_table(df[keys + cols + ratios], index=False)
    )


def _summary_logistic(df):
    err = df.dropna(subset=["median_error"]).pivot_table(
        index="method", columns="epsilon", values="median_error"
    )
    err = err[~err.index.astype(str).str.startswith("ratio")]  # derived rows of the module
    err.columns = [f"eps={c:g}" for c in err.columns]
    parts = ["Median coefficient error (lower is better):\n\n" + markdown_table(err)]
    for base in ("l1 q=0.5", "diffprivlib"):
        if base in err.index:
            ratio = err.div(err.loc[base], axis=1)
            parts.append(f"Ratio to `{base}` of the same run:\n\n" + markdown_table(ratio))
    return "\n\n".join(parts)


def _summary_median(df):
    keys = [c for c in ("dist", "n", "d", "epsilon") if c in df.columns]
    priv = df[df["method"] == "private_projection_median"]
    ref = df[df["method"] == "nonprivate_projection_median"].set_index(
        [k for k in keys if k != "epsilon"]
    )["rmse"]
    out = priv[keys + ["rmse", "pass_rate"]].copy()
    out["rmse / non-private"] = [
        r.rmse / ref.get(tuple(getattr(r, k) for k in keys if k != "epsilon"), float("nan"))
        for r in out.itertuples()
    ]
    return (
        "RMSE of the private projection median, PTR pass rate, and the ratio to the "
        "non-private projection median of the same data:\n\n" + markdown_table(out, index=False)
    )


def _summary_generic(df):
    ratio_cols = [c for c in df.columns if "ratio" in str(c).lower() or "_over_" in str(c)]
    if ratio_cols:
        keys = [c for c in df.columns if c not in ratio_cols and df[c].dtype == object]
        table = df.groupby(keys)[ratio_cols].mean() if keys else df[ratio_cols].describe()
        return markdown_table(table)
    if {"metric", "value"} <= set(df.columns):
        mask = df["metric"].astype(str).str.contains("ratio", case=False)
        if mask.any():
            return markdown_table(df[mask], index=False)
    return "(no ratio columns; first rows of the table)\n\n" + markdown_table(
        df.head(20), index=False
    )


SUMMARISERS = {
    "noise": _summary_noise,
    "huber": _summary_huber,
    "logistic": _summary_logistic,
    "median": _summary_median,
}


def summarise(name, module, df):
    if hasattr(module, "summary"):
        return str(module.summary(df))
    try:
        return SUMMARISERS.get(name, _summary_generic)(df)
    except (KeyError, ValueError, AttributeError, TypeError) as exc:  # the table changed shape
        return f"(summariser failed: {exc!r})\n\n" + _summary_generic(df)


# ----------------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="small sizes (a few minutes)")
    group.add_argument("--full", action="store_true", help="full settings (default)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these benchmarks")
    parser.add_argument("--skip", nargs="+", metavar="NAME", default=[], help="skip these")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args(argv)

    names = discover()
    if args.list:
        print("\n".join(names))
        return 0
    if args.only:
        unknown = sorted(set(args.only) - set(names))
        if unknown:
            parser.error(f"unknown benchmark(s): {', '.join(unknown)}; have {', '.join(names)}")
        names = [n for n in names if n in args.only]
    names = [n for n in names if n not in args.skip]

    quick = bool(args.quick)
    RESULTS = results_dir(quick)
    RESULTS.mkdir(parents=True, exist_ok=True)
    status, sections = [], []
    for name in names:
        print(f"\n===== benchmarks.{name} ({'quick' if quick else 'full'}) =====", flush=True)
        t0 = time.perf_counter()
        started = time.time()
        df = None
        try:
            module = importlib.import_module(f"benchmarks.{name}")
            df = module.run(quick=quick)
            if isinstance(df, list):  # row-list modules (realdata_logistic) feed realdata too
                df = pd.DataFrame(df)
            if not isinstance(df, pd.DataFrame):
                raise TypeError(f"run() returned {type(df).__name__}, not a DataFrame")
            body = summarise(name, module, df)
            seconds = time.perf_counter() - t0
            status.append(
                dict(benchmark=name, status="ok", seconds=seconds, rows=len(df), error="")
            )
        except Exception as exc:  # noqa: BLE001 - report and continue with the others
            seconds = time.perf_counter() - t0
            traceback.print_exc()
            body = f"**FAILED**: `{type(exc).__name__}: {exc}`"
            status.append(
                dict(
                    benchmark=name,
                    status="failed",
                    seconds=seconds,
                    rows=0,
                    error=f"{type(exc).__name__}: {exc}",
                )
            )
        # Everything this benchmark wrote (some write under another name, or only from main()).
        files = sorted(
            f"`results/{f.name}`"
            for f in RESULTS.iterdir()
            if f.suffix in (".csv", ".png") and f.stat().st_mtime >= started
        )
        if not files and isinstance(df, pd.DataFrame):  # run() saved nothing: keep its table
            save(df, name, quick=quick)
            files = [f"`results/{name}.csv`"]
        sections.append(
            f"## {name}\n\n{seconds:.0f} s; output: {', '.join(files) or 'none'}; "
            f"reproduce with `python -m benchmarks.{name}{' --quick' if quick else ''}`.\n\n"
            f"{body}\n"
        )

    suite = pd.DataFrame(status, columns=["benchmark", "status", "seconds", "rows", "error"])
    suite.to_csv(RESULTS / "suite.csv", index=False)
    header = (
        "# Benchmark summary\n\n"
        f"Generated by `python -m benchmarks{' --quick' if quick else ''}` "
        f"({'quick' if quick else 'full'} settings) on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"Python {sys.version.split()[0]}. Ratios compare each method with a baseline measured in "
        "the same run.\n\n" + markdown_table(suite, index=False) + "\n"
    )
    (RESULTS / "SUMMARY.md").write_text(header + "\n" + "\n".join(sections), encoding="utf-8")
    print(f"\nwrote {RESULTS / 'SUMMARY.md'} and {RESULTS / 'suite.csv'}")
    return 0 if all(s["status"] == "ok" for s in status) else 1


if __name__ == "__main__":
    sys.exit(main())
