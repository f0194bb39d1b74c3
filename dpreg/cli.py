"""The ``dpreg`` command line.

* ``dpreg demo`` -- fit every private estimator on offline data over a grid of epsilon, next to
  its non-private scikit-learn baseline, print a table and write a PNG of utility vs epsilon.
* ``dpreg compare FILE --target COL --model MODEL`` -- the same comparison on your own CSV.
  The fits are differentially private; the held-out scores are not (both commands say so under
  the table and print the total epsilon and delta their fits spent).
* ``dpreg noise`` -- per-coordinate noise of the K-norm and Gaussian mechanisms.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from . import __version__

PROG = "dpreg"


def _noise_demo(out=None):
    """Per-coordinate noise standard deviation of each mechanism for a box sensitivity space.

    The statistic moves by at most 1 in every coordinate between neighbours, so its
    sensitivities are Delta_inf = 1, Delta_2 = sqrt(m), Delta_1 = m.
    """
    from .noise import GaussianMechanism, KNormMechanism

    out = sys.stdout if out is None else out
    delta = 1e-6
    print(
        "Noise backend: per-coordinate std for a statistic in a unit box (delta=1e-6 for Gaussian)",
        file=out,
    )
    header = f"{'dim':>4} {'eps':>5} {'l1':>10} {'l2':>10} {'linf':>10} {'gauss':>10}"
    print(header, file=out)
    for m in (1, 5, 20):
        for eps in (0.5, 1.0, 2.0):
            row = []
            for norm, sens in (("l1", m), ("l2", np.sqrt(m)), ("linf", 1.0)):
                row.append(np.sqrt(KNormMechanism(norm, m, sens, eps).variance))
            row.append(GaussianMechanism(eps, delta, np.sqrt(m)).sigma)
            print(f"{m:>4} {eps:>5g} " + " ".join(f"{v:>10.3f}" for v in row), file=out)


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not np.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number > 0")
    return value


def _int_at_least(text, minimum, message):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(message)
    return value


def _positive_int(text):
    return _int_at_least(text, 1, f"{text!r} must be an integer >= 1")


def _folds(text):
    return _int_at_least(text, 2, "--cv needs at least 2 folds")


def _outputs(out, default_stem):
    """Turn ``--out`` (a directory, or a path ending in .csv/.png) into (csv, png) paths."""
    out = Path(out)
    if out.suffix.lower() in (".csv", ".png"):
        stem = out.with_suffix("")
    elif out.exists() and not out.is_dir():
        stem = out
    else:
        stem = out / default_stem
    return stem.with_suffix(".csv"), stem.with_suffix(".png")


def _report_outputs(rows, tasks, csv_path, png_path, no_plot, out=None):
    out = sys.stdout if out is None else out
    from .compare import plot_results, write_csv

    write_csv(rows, csv_path)
    print(f"\nwrote {csv_path}", file=out)
    if no_plot:
        return
    if plot_results(rows, tasks, png_path) is None:
        print(
            "note: matplotlib is not installed, so no plot was written (pip install matplotlib)",
            file=out,
        )
    else:
        print(f"wrote {png_path}", file=out)


def _evaluate_charged(tasks, epsilons, cv, args):
    """Run :func:`~dpreg.compare.evaluate` and return ``(rows, n_spends, (epsilon, delta))``.

    The private fits are given ``accountant=None``, so each is charged to the default
    accountant (the session's global ledger, or a budget the caller made default). The spends
    this run recorded in that ledger are composed as the ledger composes them.
    """
    from .accounting import BudgetAccountant
    from .compare import evaluate

    ledger = BudgetAccountant.default()
    before = len(ledger)
    rows = evaluate(
        tasks,
        epsilons,
        cv=cv,
        repeats=args.repeats,
        random_state=args.seed,
        progress=not args.no_progress,
    )
    spends = ledger.ledger[before:]
    return rows, len(spends), ledger.total(spends)


def _print_reading(n_spends, spent, public_data, out):
    """What the table is and what it cost: the caveat of ``dpreg demo`` and ``dpreg compare``."""
    print(
        "\nReading the table: every cell is the held-out metric averaged over folds (± its sd). "
        "Each private fit is\n(epsilon, delta)-DP for its training fold, but the scores are "
        "computed without noise on the held-out\nrows: they are an evaluation for the analyst "
        "to read, not a private release. Running the whole grid\nwith cross-validation spends "
        "much more than one fit:",
        file=out,
    )
    print(
        f"privacy spent by this run: epsilon={spent[0]:.6g}, delta={spent[1]:.3g} "
        f"({n_spends} private fits, composed in the default accountant's ledger).",
        file=out,
    )
    if public_data:
        print(
            "That is fine on public demo data but not on private data (see docs/accounting.md).",
            file=out,
        )
    else:
        print(
            "warning: these scores are not private. On private data, do not publish the table, "
            "the CSV or the plot;\nchoose settings on public or synthetic data like yours, then "
            "fit once (see docs/accounting.md).",
            file=out,
        )


# ----------------------------------------------------------------------------------------------
# dpreg demo
# ----------------------------------------------------------------------------------------------


def run_demo(args, out=None):
    out = sys.stdout if out is None else out
    from .compare import format_results
    from .demo import DEMO_EPSILONS, demo_tasks

    epsilons = args.epsilon or (DEMO_EPSILONS[1::2] if args.quick else DEMO_EPSILONS)
    cv = args.cv or (3 if args.quick else 5)
    tasks = demo_tasks(only=args.only)
    print(
        "dpreg demo: each private estimator vs its non-private scikit-learn baseline,\n"
        f"epsilon in {', '.join(f'{e:g}' for e in epsilons)} (each the total budget of one "
        f"fit), {cv}-fold cross-validation.",
        file=out,
    )
    t0 = time.perf_counter()
    rows, n_spends, spent = _evaluate_charged(tasks, epsilons, cv, args)
    print(format_results(rows, tasks, cv, args.repeats), file=out)
    _print_reading(n_spends, spent, public_data=True, out=out)
    csv_path, png_path = _outputs(args.out, "dpreg-demo")
    _report_outputs(rows, tasks, csv_path, png_path, args.no_plot, out=out)
    if not args.quick:
        print("", file=out)
        _noise_demo(out=out)
    print(f"\ndone in {time.perf_counter() - t0:.0f} s", file=out)
    return 0


# ----------------------------------------------------------------------------------------------
# dpreg compare
# ----------------------------------------------------------------------------------------------


def _parse_bounds(spec, features, option):
    """``--bounds LO HI`` (every feature) or ``--bounds COL=LO:HI ...`` (one per feature)."""
    from .compare import InputError

    if spec is None:
        return None
    if len(spec) == 2 and all("=" not in s for s in spec):
        try:
            lo, hi = float(spec[0]), float(spec[1])
        except ValueError:
            raise InputError(f"{option} expects two numbers LOW HIGH or COL=LOW:HIGH") from None
        lower, upper = np.full(len(features), lo), np.full(len(features), hi)
    else:
        given = {}
        for item in spec:
            try:
                col, rng = item.split("=", 1)
                lo, hi = (float(v) for v in rng.split(":"))
            except ValueError:
                raise InputError(
                    f"{option}: cannot parse {item!r}; use COL=LOW:HIGH (or two numbers)"
                ) from None
            if col not in features:
                raise InputError(f"{option}: {col!r} is not a feature column")
            given[col] = (lo, hi)
        missing = [c for c in features if c not in given]
        if missing:
            raise InputError(f"{option}: no bounds for column(s) {', '.join(missing)}")
        lower = np.array([given[c][0] for c in features])
        upper = np.array([given[c][1] for c in features])
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise InputError(f"{option}: bounds must be finite")
    if np.any(lower >= upper):
        raise InputError(f"{option}: every lower bound must be < its upper bound")
    return lower, upper


def _warn_read_from_data(what, err):
    print(
        f"{PROG} compare: warning: no {what} given, so it is read from the data. "
        "This is NOT differentially private: pass values fixed in advance to get the stated "
        "guarantee.",
        file=err,
    )


def _load_compare_task(args, err=None):
    err = sys.stderr if err is None else err
    from .compare import (
        InputError,
        label_column,
        make_task,
        numeric_column,
        parse_labels,
        read_csv_columns,
        unnamed_index_column,
    )

    names, rows = read_csv_columns(args.file)
    notes = []
    if unnamed_index_column(names, rows):
        names, rows = names[1:], [r[1:] for r in rows]
        notes.append(
            "the first column has no name and holds distinct integers (an index written by "
            "DataFrame.to_csv()): dropped, not used as a feature"
        )
        print(f"{PROG} compare: note: {notes[-1]}", file=err)
    if args.model != "median" and args.target is None:
        raise InputError(f"--target is required for --model {args.model}")
    if args.target is not None and args.target not in names:
        raise InputError(f"unknown column {args.target!r}; columns are: {', '.join(names)}")
    if args.features:
        features = list(args.features)
        for col in features:
            if col not in names:
                raise InputError(f"unknown column {col!r}; columns are: {', '.join(names)}")
        if args.target in features:
            raise InputError(f"the target {args.target!r} cannot also be a feature")
    else:
        features = [c for c in names if c != args.target]
    if not features:
        raise InputError("no feature columns left (the file has only the target column)")
    X = np.column_stack([numeric_column(names, rows, c) for c in features])
    y = None
    if args.model == "logistic":
        y = label_column(names, rows, args.target)
    elif args.target is not None and args.model != "median":
        y = numeric_column(names, rows, args.target)
    n = X.shape[0]
    if n < 2 * args.cv:
        raise InputError(f"{n} rows are too few for {args.cv}-fold cross-validation")
    bounds_X = _parse_bounds(args.bounds, features, "--bounds")
    if bounds_X is None and args.model != "median":
        _warn_read_from_data("--bounds", err)
        lo, hi = X.min(axis=0), X.max(axis=0)
        hi = np.where(hi > lo, hi, lo + 1.0)
        bounds_X = (lo, hi)
        notes.append("feature bounds were read from the data: NOT differentially private")
    bounds_y = None
    if args.model in ("linear", "quantile"):
        if args.target_bounds is not None:
            lo, hi = args.target_bounds
            if not (np.isfinite(lo) and np.isfinite(hi)) or lo >= hi:
                raise InputError("--target-bounds: need finite LOW < HIGH")
            bounds_y = (lo, hi)
        else:
            _warn_read_from_data("--target-bounds", err)
            lo, hi = float(y.min()), float(y.max())
            bounds_y = (lo, hi if hi > lo else lo + 1.0)
            notes.append("target bounds were read from the data: NOT differentially private")
    classes = None
    if args.model == "logistic":
        present = np.unique(y)
        if args.classes is not None:
            classes = np.unique(parse_labels(args.classes))
            text = (classes.dtype.kind == "U", present.dtype.kind == "U")
            unknown = present if text[0] != text[1] else np.setdiff1d(present, classes)
            if unknown.size:
                raise InputError(
                    f"column {args.target!r} has label(s) not in --classes: "
                    + ", ".join(map(str, unknown[:5]))
                )
        else:
            _warn_read_from_data("--classes (the public label set)", err)
            classes = present
            notes.append("the label set was read from the data: NOT differentially private")
        if classes.size < 2:
            raise InputError(f"--model logistic needs at least 2 classes, got {classes.size}")
        counts = np.array([np.sum(y == c) for c in present])
        if present.size < 2 or np.min(counts) < args.cv:
            raise InputError(
                f"every class present in {args.target!r} needs at least {args.cv} rows for "
                f"{args.cv}-fold stratified cross-validation (--cv {args.cv})"
            )
    if args.model == "median" and bounds_X is not None:
        # The median estimator needs no bounds; given bounds are used to clip.
        X = np.clip(X, bounds_X[0], bounds_X[1])
    if not 0 < args.quantile < 1:
        raise InputError("--quantile must lie strictly between 0 and 1")
    name = f"{Path(args.file).name}: {args.model}"
    if args.model != "median":
        name += f" of {args.target!r}"
    return make_task(
        args.model,
        X,
        y,
        name,
        bounds_X=bounds_X,
        bounds_y=bounds_y,
        quantile=args.quantile,
        norm=args.norm,
        delta=args.delta,
        notes=notes,
        classes=classes,
        feature_names=features,
    )


def run_compare(args, out=None, err=None):
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    from .compare import format_results

    task = _load_compare_task(args, err=err)
    epsilons = args.epsilon or [0.5, 1.0, 2.0, 4.0]
    rows, n_spends, spent = _evaluate_charged([task], epsilons, args.cv, args)
    print(format_results(rows, [task], args.cv, args.repeats), file=out)
    _print_reading(n_spends, spent, public_data=False, out=out)
    csv_path, png_path = _outputs(args.out, "dpreg-compare")
    _report_outputs(rows, [task], csv_path, png_path, args.no_plot, out=out)
    return 0


# ----------------------------------------------------------------------------------------------
# argument parsing
# ----------------------------------------------------------------------------------------------


def build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p, default_out):
        p.add_argument(
            "--epsilon",
            nargs="+",
            type=_positive_float,
            metavar="EPS",
            help="privacy budgets to compare (each the total epsilon of one fit)",
        )
        p.add_argument(
            "--repeats",
            type=_positive_int,
            default=1,
            help="private fits per fold and epsilon, at least 1 (default 1)",
        )
        p.add_argument("--seed", type=int, default=0, help="seed of folds and noise")
        p.add_argument(
            "--out",
            default=default_out,
            help="directory, or a path ending in .csv/.png, for the results "
            "(default: current directory)",
        )
        p.add_argument("--no-plot", action="store_true", help="do not write the PNG")
        p.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    demo = sub.add_parser(
        "demo",
        help="fit every private estimator next to its non-private "
        "baseline on offline data (minutes; it prints its own time)",
    )
    common(demo, ".")
    demo.add_argument("--cv", type=_folds, default=None, help="number of folds (default 5)")
    demo.add_argument(
        "--quick", action="store_true", help="2 epsilons and 3 folds (about half the work)"
    )
    demo.add_argument(
        "--only",
        nargs="+",
        choices=["linear", "logistic", "quantile", "median"],
        help="run only these models",
    )

    comp = sub.add_parser(
        "compare", help="compare a private estimator with its non-private baseline on your CSV file"
    )
    comp.add_argument(
        "file",
        help="CSV file with a header row; numeric features (the target of --model logistic "
        "may be text)",
    )
    comp.add_argument("--target", help="target column (not needed for --model median)")
    comp.add_argument(
        "--model", required=True, choices=["linear", "logistic", "quantile", "median"]
    )
    comp.add_argument(
        "--features",
        nargs="+",
        metavar="COL",
        help="feature columns (default: every column except the target)",
    )
    comp.add_argument(
        "--bounds",
        nargs="+",
        metavar="B",
        help="public feature bounds: LOW HIGH for every feature, or COL=LOW:HIGH "
        "for each; without them bounds are read from the data (warned)",
    )
    comp.add_argument(
        "--target-bounds",
        nargs=2,
        type=float,
        metavar=("LOW", "HIGH"),
        help="public bounds of the target (--model linear; for --model quantile they only set "
        "the parameter domain, y is not clipped)",
    )
    comp.add_argument(
        "--classes",
        nargs="+",
        metavar="LABEL",
        help="public label set of --model logistic (two or more labels, numbers or text); "
        "without it the labels are read from the data (warned)",
    )
    comp.add_argument("--quantile", type=float, default=0.5, help="quantile level (default 0.5)")
    comp.add_argument("--norm", default=None, help="norm of the private estimator's noise")
    comp.add_argument(
        "--delta",
        type=float,
        default=None,
        help="delta of --model median (default: the estimator's default)",
    )
    comp.add_argument("--cv", type=_folds, default=5, help="number of folds (default 5)")
    common(comp, ".")

    sub.add_parser("noise", help="per-coordinate noise of the K-norm and Gaussian mechanisms")
    return parser


def main(argv=None):
    from .compare import InputError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return run_demo(args)
        if args.command == "compare":
            return run_compare(args)
        _noise_demo()
        return 0
    except (InputError, ValueError, OSError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"{PROG} {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
