"""Cross-validated comparison of private estimators with their non-private baselines.

This is the engine behind ``dpreg demo`` and ``dpreg compare``: for each privacy budget
``epsilon`` in a grid it fits a private estimator on the training part of every
cross-validation fold, scores it on the held-out part, and does the same once per fold for a
non-private scikit-learn baseline. The result is a list of plain dictionaries (one per
``(task, model, epsilon)``) holding the mean and standard deviation of the metric over folds,
so neither pandas nor matplotlib is needed to run it; :func:`plot_results` draws the utility
curves when matplotlib is installed.

Privacy accounting
------------------
Every private fit spends its own ``epsilon`` on the training part of one fold. Cross-validation
therefore spends ``n_folds * repeats * epsilon`` per grid point on the data set as a whole
(folds overlap), and the whole grid spends the sum. The fits are differentially private; the
*scores* are not: they are computed without noise on the held-out rows (and so is each row's
``seconds``, the fits' running time). They are an evaluation for the analyst, not a release,
which is why the rows of the private estimator are labelled ``kind="dp_fit"`` and the table
heads them "DP fit; score not private". The comparison is a tool for *choosing* settings on
public or synthetic data similar to the private data; publishing the table computed on
private data is not covered by the per-fit guarantee.
"""

from __future__ import annotations

import csv
import math
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sklearn.metrics import accuracy_score, mean_pinball_loss, r2_score
from sklearn.model_selection import KFold, StratifiedKFold

from .exceptions import PTRTestFailedError

__all__ = [
    "DP_FIT",
    "DP_FIT_LABEL",
    "CoordinateMedian",
    "SampleMean",
    "Task",
    "evaluate",
    "format_results",
    "location_error",
    "plot_results",
    "write_csv",
]


class CoordinateMedian:
    """Non-private coordinate-wise median: the reference location estimator."""

    def fit(self, X, y=None):
        self.location_ = np.median(np.asarray(X, dtype=float), axis=0)
        return self


class SampleMean:
    """Non-private sample mean (not robust: shows what contamination does to a mean)."""

    def fit(self, X, y=None):
        self.location_ = np.mean(np.asarray(X, dtype=float), axis=0)
        return self


def location_error(estimator, X_test):
    """Standardised distance from a fitted ``location_`` to the held-out coordinate median.

    ``sqrt(mean_j ((location_j - median_j) / s_j)^2)`` where ``median_j`` and ``s_j`` (the
    normal-consistent MAD) are computed on the test fold. Lower is better; it measures the
    error in units of a robust standard deviation of the data.
    """
    X_test = np.asarray(X_test, dtype=float)
    med = np.median(X_test, axis=0)
    mad = 1.4826 * np.median(np.abs(X_test - med), axis=0)
    mad = np.where(mad > 0, mad, 1.0)
    diff = (np.asarray(estimator.location_, dtype=float) - med) / mad
    return float(np.sqrt(np.mean(diff**2)))


def _score(metric, quantile=0.5, truth=None):
    """Return ``(scorer(estimator, X, y) -> float, greater_is_better)`` for a metric name."""
    if metric == "r2":
        return (lambda est, X, y: float(r2_score(y, est.predict(X)))), True
    if metric == "accuracy":
        return (lambda est, X, y: float(accuracy_score(y, est.predict(X)))), True
    if metric == "pinball":
        return (
            lambda est, X, y: float(mean_pinball_loss(y, est.predict(X), alpha=quantile))
        ), False
    if metric == "location":
        return (lambda est, X, y: location_error(est, X)), False
    if metric == "centre":
        truth = np.asarray(truth, dtype=float)
        return (
            lambda est, X, y: float(np.linalg.norm(np.asarray(est.location_, float) - truth))
        ), False
    raise ValueError(f"unknown metric {metric!r}")


METRIC_LABELS = {
    "r2": "R^2 (higher is better)",
    "accuracy": "accuracy (higher is better)",
    "pinball": "pinball loss (lower is better)",
    "location": "error vs held-out median, in robust SDs (lower is better)",
    "centre": "distance to the true centre (lower is better)",
}

#: ``kind`` of the result rows of the private estimator: its fits are differentially private,
#: its held-out scores are not (they are exact functions of the held-out rows).
DP_FIT = "dp_fit"
#: How tables and plots label the private estimator's scores.
DP_FIT_LABEL = "DP fit; score not private"


@dataclass
class Task:
    """One comparison: a data set, a private estimator factory and non-private baselines.

    Parameters
    ----------
    name : str
        Label shown in tables and plots.
    X, y : arrays
        The data (``y`` may be None for location estimators).
    make_private : callable ``(epsilon, random_state) -> estimator``
        Builds the private estimator for one fit.
    baselines : dict of name -> callable ``() -> estimator``
        Non-private baselines, each fitted once per fold.
    metric : {"r2", "accuracy", "pinball", "location"}
    private_name : str
        Name of the private estimator (for display).
    quantile : float
        Quantile level of the pinball loss.
    stratify : bool
        Use stratified folds (classification).
    notes : list of str
        Extra lines printed under the table (bounds used, and so on).
    epsilons : tuple of float, optional
        Privacy budgets for this task only (overrides the grid given to :func:`evaluate`).
    truth : array, optional
        The known centre for ``metric="centre"`` (synthetic data).
    feature_names : list of str, optional
        Names of the columns of ``X``, printed with the table.
    """

    name: str
    X: np.ndarray
    y: np.ndarray | None
    make_private: Callable
    baselines: dict
    metric: str
    private_name: str
    quantile: float = 0.5
    stratify: bool = False
    notes: list = field(default_factory=list)
    epsilons: tuple | None = None
    truth: np.ndarray | None = None
    feature_names: list | None = None


def _fit(est, X, y):
    return est.fit(X) if y is None else est.fit(X, y)


def _fit_baseline(est, X, y):
    """Fit a non-private baseline, silencing its convergence chatter (it is only a reference)."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        return _fit(est, X, y)


def _fit_private(est, X, y, seen):
    """Fit a private estimator, recording every warning it emits into ``seen``.

    Nothing is silenced: a private fit's warnings (data-derived bounds, a chain that may not
    have converged, ...) are part of what the user must see. ``seen`` maps the warning category
    to ``[count, first message]``; the table prints one line per category.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return _fit(est, X, y)
        finally:
            first = {}  # one count per category and fit: "in 3 of 5 fits"
            for w in caught:
                first.setdefault(w.category.__name__, str(w.message))
            for category, message in first.items():
                seen.setdefault(category, [0, message])[0] += 1


def _summary(values):
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return math.nan, math.nan
    return float(np.mean(values)), float(np.std(values, ddof=1)) if values.size > 1 else 0.0


def evaluate(tasks, epsilons, cv=5, repeats=1, random_state=0, progress=True, out=None):
    """Cross-validate every task's private estimator over ``epsilons`` and its baselines.

    Parameters
    ----------
    tasks : list of Task
    epsilons : sequence of float
    cv : int
        Number of folds (shuffled, seeded by ``random_state``).
    repeats : int
        Private fits per fold and epsilon (different noise draws).
    random_state : int
    progress : bool
        Show a tqdm progress bar on ``out`` (default: standard error).

    Returns
    -------
    list of dict
        Keys: ``task, model, kind ("dp_fit"/"baseline"), epsilon (nan for baselines), metric,
        mean, std, n_scores, n_failed, seconds, note, warnings``. ``warnings`` lists, per
        category, how many private fits emitted it and the first message (private fits are
        never silenced; baselines' convergence warnings are). The scores of a ``"dp_fit"``
        row come from differentially private fits but are computed without noise on the
        held-out rows, so they are not private; neither is ``seconds`` (wall time, a function
        of the data), which :func:`write_csv` leaves out.
    """
    from tqdm.auto import tqdm

    grid = [float(e) for e in epsilons]

    def task_grid(task):
        return grid if task.epsilons is None else [float(e) for e in task.epsilons]

    total = sum(cv * (len(t.baselines) + len(task_grid(t)) * repeats) for t in tasks)
    out = sys.stderr if out is None else out
    bar = tqdm(total=total, disable=not progress, file=out, desc="fitting", unit="fit")
    rows = []
    try:
        for t_index, task in enumerate(tasks):
            scorer, _ = _score(task.metric, task.quantile, task.truth)
            epsilons = task_grid(task)
            X = np.asarray(task.X, dtype=float)
            y = None if task.y is None else np.asarray(task.y)
            splitter = (StratifiedKFold if task.stratify else KFold)(
                n_splits=cv, shuffle=True, random_state=random_state
            )
            splits = list(splitter.split(X, y) if task.stratify else splitter.split(X))
            base_scores = {name: [] for name in task.baselines}
            base_time = dict.fromkeys(task.baselines, 0.0)
            priv_scores = {e: [] for e in epsilons}
            priv_failed = dict.fromkeys(epsilons, 0)
            priv_time = dict.fromkeys(epsilons, 0.0)
            priv_warnings = {e: {} for e in epsilons}
            for f_index, (train, test) in enumerate(splits):
                X_tr, X_te = X[train], X[test]
                y_tr = None if y is None else y[train]
                y_te = None if y is None else y[test]
                for name, make in task.baselines.items():
                    t0 = time.perf_counter()
                    est = _fit_baseline(make(), X_tr, y_tr)
                    base_scores[name].append(scorer(est, X_te, y_te))
                    base_time[name] += time.perf_counter() - t0
                    bar.update(1)
                for e_index, eps in enumerate(epsilons):
                    for rep in range(repeats):
                        seed = 1_000_003 * t_index + 10_007 * f_index + 101 * e_index + rep
                        t0 = time.perf_counter()
                        try:
                            est = _fit_private(
                                task.make_private(eps, seed), X_tr, y_tr, priv_warnings[eps]
                            )
                        except PTRTestFailedError:
                            priv_failed[eps] += 1
                            priv_time[eps] += time.perf_counter() - t0
                            bar.update(1)
                            continue
                        score = scorer(est, X_te, y_te)
                        priv_time[eps] += time.perf_counter() - t0
                        if np.isfinite(score):
                            priv_scores[eps].append(score)
                        else:
                            priv_failed[eps] += 1
                        bar.update(1)
            for name in task.baselines:
                mean, std = _summary(base_scores[name])
                rows.append(
                    dict(
                        task=task.name,
                        model=name,
                        kind="baseline",
                        epsilon=math.nan,
                        metric=task.metric,
                        mean=mean,
                        std=std,
                        n_scores=len(base_scores[name]),
                        n_failed=0,
                        seconds=base_time[name],
                        note="",
                        warnings="",
                    )
                )
            for eps in epsilons:
                mean, std = _summary(priv_scores[eps])
                note = ""
                if priv_failed[eps]:
                    note = f"{priv_failed[eps]} of {cv * repeats} fits released nothing"
                rows.append(
                    dict(
                        task=task.name,
                        model=task.private_name,
                        kind=DP_FIT,
                        epsilon=eps,
                        metric=task.metric,
                        mean=mean,
                        std=std,
                        n_scores=len(priv_scores[eps]),
                        n_failed=priv_failed[eps],
                        seconds=priv_time[eps],
                        note=note,
                        warnings=" | ".join(
                            f"{cat} in {count} of {cv * repeats} fits: {message}"
                            for cat, (count, message) in priv_warnings[eps].items()
                        ),
                    )
                )
    finally:
        bar.close()
    return rows


def _cell(mean, std):
    if not np.isfinite(mean):
        return "n/a"
    return f"{mean:.3f} ± {std:.3f}"


def format_results(rows, tasks, cv, repeats=1):
    """Render the results as a plain-text table, one block per task."""
    lines = []
    for task in tasks:
        mine = [r for r in rows if r["task"] == task.name]
        base = [r for r in mine if r["kind"] == "baseline"]
        priv = [r for r in mine if r["kind"] == DP_FIT]
        n, p = np.asarray(task.X).shape
        lines.append("")
        lines.append(f"== {task.name}  (n={n}, features={p})")
        if task.feature_names is not None:
            lines.append(f"   features used: {', '.join(task.feature_names)}")
        lines.append(
            f"   metric: {METRIC_LABELS[task.metric]}; {cv}-fold CV, mean ± sd over folds"
            + (f" x {repeats} noise draws" if repeats > 1 else "")
        )
        titles = [f"{task.private_name} ({DP_FIT_LABEL})"]
        titles += [b["model"] + " (non-private)" for b in base]
        widths = [max(len(t), 18) for t in titles]
        lines.append(f"   {'epsilon':>8}" + "".join(f"  {t:<{w}}" for t, w in zip(titles, widths)))
        for r in priv:
            cells = [_cell(r["mean"], r["std"])] + [_cell(b["mean"], b["std"]) for b in base]
            line = f"   {r['epsilon']:>8g}" + "".join(f"  {c:<{w}}" for c, w in zip(cells, widths))
            if r["note"]:
                line += f"  ({r['note']})"
            lines.append(line.rstrip())
        for note in task.notes:
            lines.append(f"   note: {note}")
        for r in priv:
            for item in filter(None, r["warnings"].split(" | ")):
                lines.append(f"   warning (private fit, epsilon={r['epsilon']:g}): {item}")
    return "\n".join(lines)


def write_csv(rows, path):
    """Write result rows to ``path`` as CSV (no pandas needed).

    Every key of the rows but ``seconds``: the fits' running time is a function of the data
    (not private) and says nothing about utility.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = [
        "task",
        "model",
        "kind",
        "epsilon",
        "metric",
        "mean",
        "std",
        "n_scores",
        "n_failed",
        "note",
        "warnings",
    ]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: r[k] for k in keys})
    return path


def _y_limits(values, metric):
    """Axis limits that show every mean ± sd with a margin (R^2 is cut at -1 and says so)."""
    lo, hi = float(np.min(values)), float(np.max(values))
    clipped = metric == "r2" and lo < -1.0
    lo = max(lo, -1.0) if metric == "r2" else lo
    pad = 0.08 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1.0)
    return lo - pad, hi + pad, clipped


def plot_results(rows, tasks, path):
    """Plot utility vs epsilon for every task to ``path`` (PNG).

    Each panel shows the private estimator's mean ± sd over folds at every epsilon and each
    baseline's mean as a dashed line with its ± sd band; the caption states the folds.
    Returns the path, or None when matplotlib is not installed.
    """
    try:
        import matplotlib

        if "matplotlib.pyplot" not in sys.modules:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    n = len(tasks)
    ncols = min(n, 2)
    nrows = int(math.ceil(n / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.0 * ncols, 4.2 * nrows + 0.4), squeeze=False)
    folds = sorted({r["n_scores"] for r in rows if r["kind"] == "baseline"})
    for ax, task in zip(axes.ravel(), tasks):
        mine = [r for r in rows if r["task"] == task.name]
        priv = [r for r in mine if r["kind"] == DP_FIT and np.isfinite(r["mean"])]
        shown = []  # every mean - sd and mean + sd drawn, for the axis limits
        if priv:
            eps = np.array([r["epsilon"] for r in priv])
            mean = np.array([r["mean"] for r in priv])
            std = np.array([r["std"] for r in priv])
            ax.errorbar(
                eps,
                mean,
                yerr=std,
                marker="o",
                capsize=3,
                label=f"{task.private_name} ({DP_FIT_LABEL}), mean ± sd",
            )
            shown += [mean - std, mean + std]
        else:
            ax.text(
                0.5,
                0.5,
                "no private release (every fit failed)",
                ha="center",
                transform=ax.transAxes,
            )
        colours = ["black", "grey", "tab:green"]
        for i, b in enumerate(r for r in mine if r["kind"] == "baseline"):
            c = colours[i % len(colours)]
            ax.axhline(b["mean"], color=c, ls="--", label=f"{b['model']} (non-private)")
            if np.isfinite(b["std"]) and b["std"] > 0:
                ax.axhspan(
                    b["mean"] - b["std"],
                    b["mean"] + b["std"],
                    color=c,
                    alpha=0.12,
                    label=f"{b['model']} ± sd",
                )
            shown += [np.array([b["mean"] - b["std"], b["mean"] + b["std"]])]
        ax.set_xscale("log")
        grid = [r["epsilon"] for r in mine if r["kind"] == DP_FIT and r["epsilon"] > 0]
        if grid:  # explicit limits: a task whose fits all released nothing has no points
            ax.set_xlim(min(grid) / 1.5, max(grid) * 1.5)
            ax.set_xticks(sorted(set(grid)), [f"{e:g}" for e in sorted(set(grid))])
            ax.minorticks_off()
        values = np.concatenate(shown) if shown else np.array([])
        values = values[np.isfinite(values)]
        if values.size:
            lo, hi, clipped = _y_limits(values, task.metric)
            ax.set_ylim(lo, hi)
            if clipped:
                ax.text(
                    0.02,
                    0.02,
                    "values below -1 not shown",
                    transform=ax.transAxes,
                    fontsize=7,
                    color="grey",
                )
        ax.set_xlabel("epsilon (total budget of one fit)")
        ax.set_ylabel(METRIC_LABELS[task.metric])
        ax.set_title(task.name, fontsize=10)
        ax.legend(fontsize=7)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    caption = (
        f"{folds[0]}-fold cross-validation: mean ± sd over folds"
        if len(folds) == 1
        else "cross-validation: mean ± sd over folds"
    )
    fig.suptitle(caption, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ----------------------------------------------------------------------------------------------
# Model factories shared by ``dpreg demo`` and ``dpreg compare``
# ----------------------------------------------------------------------------------------------

MODELS = {
    "linear": ("FunctionalLinearRegression", "r2"),
    "logistic": ("ObjectivePerturbationLogistic", "accuracy"),
    "quantile": ("KNGQuantileRegressor", "pinball"),
    "median": ("PrivateProjectionMedian", "location"),
}


def make_task(
    model,
    X,
    y,
    name,
    bounds_X=None,
    bounds_y=None,
    quantile=0.5,
    norm=None,
    delta=None,
    notes=(),
    metric=None,
    truth=None,
    epsilons=None,
    classes=None,
    feature_names=None,
):
    """Build the :class:`Task` comparing a private ``model`` with its non-private baseline.

    ``model`` is one of ``"linear"`` (FunctionalLinearRegression vs LinearRegression),
    ``"logistic"`` (ObjectivePerturbationLogistic vs standardised LogisticRegression),
    ``"quantile"`` (KNGQuantileRegressor vs QuantileRegressor) or ``"median"``
    (PrivateProjectionMedian vs the coordinate-wise median and the mean). ``metric`` overrides
    the model's default metric (e.g. ``"centre"`` with a known ``truth``); ``epsilons`` gives
    the task its own grid.
    ``bounds_X``/``bounds_y`` are ``(lower, upper)`` pairs passed to the private estimator
    (``bounds_y`` is used by ``"linear"`` and, as the parameter domain, by ``"quantile"``)
    (pass them explicitly: the comparison never reads bounds from the data itself).
    ``classes`` is the public label set of ``"logistic"`` (any labels: numbers or strings,
    two or more classes).
    """
    from sklearn.linear_model import LinearRegression, LogisticRegression, QuantileRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from . import (
        FunctionalLinearRegression,
        KNGQuantileRegressor,
        ObjectivePerturbationLogistic,
        PrivateProjectionMedian,
    )

    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")
    extra = {} if norm is None else {"norm": norm}
    private_name, default_metric = MODELS[model]
    metric = default_metric if metric is None else metric
    if model == "linear":

        def make_private(eps, seed):
            return FunctionalLinearRegression(
                epsilon=eps, bounds_X=bounds_X, bounds_y=bounds_y, random_state=seed, **extra
            )

        baselines = {"LinearRegression": LinearRegression}
    elif model == "logistic":
        labels = _logistic_label_params(ObjectivePerturbationLogistic, bounds_X, classes)

        def make_private(eps, seed):
            return ObjectivePerturbationLogistic(epsilon=eps, random_state=seed, **labels, **extra)

        baselines = {
            "LogisticRegression": lambda: make_pipeline(
                StandardScaler(), LogisticRegression(max_iter=2000)
            )
        }
    elif model == "quantile":

        def make_private(eps, seed):
            return KNGQuantileRegressor(
                quantile=quantile,
                epsilon=eps,
                bounds_X=bounds_X,
                bounds_y=bounds_y,
                n_chains=1,  # only chain 0 is released; the others are diagnostics
                random_state=seed,
                **extra,
            )

        baselines = {
            "QuantileRegressor": lambda: QuantileRegressor(
                quantile=quantile, alpha=0.0, solver="highs"
            )
        }
    else:
        delta_kw = {} if delta is None else {"delta": delta}

        def make_private(eps, seed):
            return PrivateProjectionMedian(epsilon=eps, random_state=seed, **delta_kw, **extra)

        baselines = {"coordinate median": CoordinateMedian, "mean": SampleMean}
    return Task(
        name=name,
        X=X,
        y=y,
        make_private=make_private,
        baselines=baselines,
        metric=metric,
        private_name=private_name,
        quantile=quantile,
        stratify=(model == "logistic"),
        notes=list(notes),
        truth=truth,
        epsilons=None if epsilons is None else tuple(epsilons),
        feature_names=None if feature_names is None else list(feature_names),
    )


def _logistic_label_params(cls, bounds_X, classes):
    """Bounds and public labels in the estimator's own parameter names.

    SPEC section 1 names them ``bounds_X`` (formerly ``bounds``) and ``classes``; the names are
    looked up so that the comparison passes every public input the estimator accepts.
    """
    names = cls().get_params()
    params = {"bounds_X" if "bounds_X" in names else "bounds": bounds_X}
    if "classes" in names and classes is not None:
        params["classes"] = list(classes)
    return params


# ----------------------------------------------------------------------------------------------
# Reading a user's CSV file without pandas
# ----------------------------------------------------------------------------------------------


class InputError(ValueError):
    """A problem with the user's input, reported as one line by the command line."""


def read_csv_columns(path):
    """Read a CSV file with a header row into ``(names, rows)`` of strings.

    Raises :class:`InputError` (one-line message) when the file is missing or malformed.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"file not found: {path}")
    if path.is_dir():
        raise InputError(f"{path} is a directory, not a CSV file")
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            sample = fh.read(65536)
            fh.seek(0)
            try:
                dialect = csv.Sniffer().sniff(sample, delimiters=",;\t")
            except csv.Error:
                dialect = csv.excel
            rows = [r for r in csv.reader(fh, dialect) if any(c.strip() for c in r)]
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a UTF-8 text CSV file") from None
    except csv.Error as exc:
        raise InputError(f"cannot parse {path}: {exc}") from None
    if not rows:
        raise InputError(f"{path} is empty")
    names = [c.strip() for c in rows[0]]
    if len(set(names)) != len(names):
        raise InputError(f"{path}: duplicate column names in the header")
    body = rows[1:]
    if not body:
        raise InputError(f"{path} has a header but no data rows")
    for i, r in enumerate(body, start=2):
        if len(r) != len(names):
            raise InputError(f"{path}, line {i}: {len(r)} fields but the header has {len(names)}")
    return names, body


_MISSING = {"", "na", "nan", "n/a", "null", "none", "?"}


def numeric_column(names, rows, column):
    """Return column ``column`` as a float array, raising :class:`InputError` on bad data."""
    if column not in names:
        raise InputError(f"unknown column {column!r}; columns are: {', '.join(names)}")
    j = names.index(column)
    out = np.empty(len(rows))
    for i, r in enumerate(rows):
        text = r[j].strip()
        if text.lower() in _MISSING:
            raise InputError(
                f"column {column!r} has a missing value (NaN) in data row {i + 1}; "
                "drop or impute missing values first"
            )
        try:
            value = float(text)
        except ValueError:
            raise InputError(
                f"column {column!r} is not numeric (data row {i + 1}: {text!r}); "
                "encode categorical columns as numbers first"
            ) from None
        if not np.isfinite(value):
            raise InputError(f"column {column!r} has a non-finite value in data row {i + 1}")
        out[i] = value
    return out


def label_column(names, rows, column):
    """Return column ``column`` as class labels: numbers when every entry is one, else strings.

    Integer-valued numbers become ints (``1.0`` and ``1`` are one label). Raises
    :class:`InputError` on a missing value.
    """
    if column not in names:
        raise InputError(f"unknown column {column!r}; columns are: {', '.join(names)}")
    j = names.index(column)
    texts = [r[j].strip() for r in rows]
    for i, text in enumerate(texts):
        if text.lower() in _MISSING:
            raise InputError(
                f"column {column!r} has a missing value in data row {i + 1}; "
                "drop or impute missing values first"
            )
    return parse_labels(texts)


def parse_labels(texts):
    """Labels from strings: an int/float array when all parse as finite numbers, else strings."""
    try:
        values = np.array([float(t) for t in texts])
    except ValueError:
        return np.array(texts, dtype=object).astype(str)
    if not np.all(np.isfinite(values)):
        return np.array(texts, dtype=object).astype(str)
    if np.all(values == np.round(values)):
        return values.astype(np.int64)
    return values


def unnamed_index_column(names, rows):
    """True when the first column looks like an index written by ``DataFrame.to_csv()``.

    That is: its header is empty (or pandas' ``"Unnamed: 0"``) and it holds distinct integers.
    Such a column is a row number, not a feature; used as one it silently changes the model.
    """
    if not names or names[0] not in ("", "Unnamed: 0"):
        return False
    try:
        values = np.array([float(r[0]) for r in rows])
    except ValueError:
        return False
    return bool(
        np.all(np.isfinite(values))
        and np.all(values == np.round(values))
        and np.unique(values).size == values.size
    )
