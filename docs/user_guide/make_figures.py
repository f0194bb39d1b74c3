"""Draw the user-guide figures.

Usage: python docs/user_guide/make_figures.py [linear] [logistic] [quantile] [median]
[intervals] (no argument: all five). Writes docs/user_guide/img/<name>.png. The first four
show cross-validated utility against epsilon, one line per norm, with the same data, public
bounds and evaluation engine as ``dpreg demo``. ``intervals`` draws no new numbers: it maps
the committed coverage tables of ``python -m benchmarks.inference``
(``benchmarks/results/inference*.csv``) onto one grid per estimator.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpreg.compare import DP_FIT, METRIC_LABELS, evaluate  # noqa: E402
from dpreg.demo import demo_tasks  # noqa: E402

IMG = Path(__file__).resolve().parent / "img"
RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
NORMS = {
    "linear": ("l1", "l2", "linf"),
    "logistic": ("l1", "l2", "linf"),
    "quantile": ("l1", "l2", "linf"),
    "median": ("l2", "linf"),
}
MEDIAN_EPSILONS = (2.0, 4.0, 8.0, 16.0)


def figure(model):
    tasks = []
    for norm in NORMS[model]:
        (task,) = demo_tasks(only=[model], norm=norm)
        task.name = f"{task.name} [{norm}]"
        task.private_name = f"{task.private_name} norm={norm}"
        if norm != NORMS[model][0]:
            task.baselines = {}
        tasks.append(task)
    if model == "median":  # propose-test-release rarely passes below eps = 2 on these data
        for task in tasks:
            task.epsilons = MEDIAN_EPSILONS
    rows = evaluate(tasks, EPSILONS, cv=5, repeats=1 if model == "median" else 2, random_state=0)
    fig, ax = plt.subplots(figsize=(6, 4))
    for task, norm in zip(tasks, NORMS[model]):
        priv = [r for r in rows if r["task"] == task.name and r["kind"] == DP_FIT]
        eps = np.array([r["epsilon"] for r in priv])
        mean = np.array([r["mean"] for r in priv])
        std = np.array([r["std"] for r in priv])
        ax.errorbar(eps, mean, yerr=std, marker="o", capsize=3, label=f"private, {norm}")
    for r in rows:
        if r["kind"] == "baseline":
            colour = "grey" if r["model"] == "mean" else "black"
            ax.axhline(r["mean"], ls="--", color=colour, label=f"{r['model']} (non-private)")
    ax.set_xscale("log")
    ticks = sorted({r["epsilon"] for r in rows if r["kind"] == DP_FIT})
    ax.set_xticks(ticks, [f"{e:g}" for e in ticks])
    ax.minorticks_off()
    ax.set_xlabel("epsilon (total budget of one fit)")
    ax.set_ylabel(METRIC_LABELS[tasks[0].metric])
    ax.set_title(tasks[0].name.split(" [")[0] + ", 5-fold CV", fontsize=10)
    if tasks[0].metric == "r2":
        ax.set_ylim(-1.0, 1.0)
    ax.legend(fontsize=8)
    fig.tight_layout()
    IMG.mkdir(exist_ok=True)
    fig.savefig(IMG / f"{model}.png", dpi=100)
    print("wrote", IMG / f"{model}.png")


#: (panel title, csv, row filter): the benchmark's grid for each estimator's default
#: intervals, and the median with a public scale (where its default refuses to run).
INTERVAL_PANELS = [
    ("FunctionalLinearRegression", "inference.csv", {}),
    ("ObjectivePerturbationLogistic", "inference_logistic.csv", {}),
    ("KNGQuantileRegressor (tau = 1/2)", "inference_kng.csv", {}),
    ("PrivateProjectionMedian, default scale", "inference_median.csv", {"scale": "default"}),
    ("PrivateProjectionMedian, public scale", "inference_median.csv", {"scale": "public"}),
]
BAND, WIDTH_TARGET = (0.93, 0.97), 1.3
VERDICT_COLOURS = {
    "in band, width within 1.3x": "#8fd19e",
    "in band, wider than 1.3x": "#ffe08a",
    "over-covers (> 0.97)": "#f6b26b",
    "under-covers (< 0.93)": "#e06666",
    "refused before spending": "#d9d9d9",
}


def interval_verdict(coverages, widths):
    """One cell's colour key from its parameters' coverages and width ratios (NaN: refused)."""
    if np.all(np.isnan(coverages)):
        return "refused before spending"
    if np.nanmin(coverages) < BAND[0]:
        return "under-covers (< 0.93)"
    if np.nanmax(coverages) > BAND[1]:
        return "over-covers (> 0.97)"
    if np.nanmax(widths) > WIDTH_TARGET:
        return "in band, wider than 1.3x"
    return "in band, width within 1.3x"


def intervals_figure():
    fig, axes = plt.subplots(2, 3, figsize=(12, 7.5))
    for ax, (title, csv, where) in zip(axes.flat, INTERVAL_PANELS):
        table = pd.read_csv(RESULTS / csv)
        for column, value in where.items():
            table = table[table[column] == value]
        ns, epsilons = sorted(table["n"].unique()), sorted(table["epsilon"].unique())
        for i, n in enumerate(ns):
            for j, eps in enumerate(epsilons):
                cell = table[(table["n"] == n) & (table["epsilon"] == eps)]
                cov = cell["coverage"].to_numpy(float)
                width = cell["width_ratio"].to_numpy(float)
                verdict = interval_verdict(cov, width)
                ax.add_patch(
                    plt.Rectangle((j, i), 1, 1, color=VERDICT_COLOURS[verdict], ec="white")
                )
                if verdict == "refused before spending":
                    text = "refused\n(nothing spent)"
                else:
                    text = (
                        f"{np.nanmin(cov):.3f}-{np.nanmax(cov):.3f}\n"
                        f"width {np.nanmax(width):.2f}x\n{int(cell['reps'].min())} data sets"
                    )
                ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=8)
        ax.set_xlim(0, len(epsilons))
        ax.set_ylim(0, len(ns))
        ax.set_xticks(np.arange(len(epsilons)) + 0.5, [f"{e:g}" for e in epsilons])
        ax.set_yticks(np.arange(len(ns)) + 0.5, [f"{n:.0e}".replace("+0", "") for n in ns])
        ax.set_xlabel("epsilon (fit + interval release)")
        ax.set_ylabel("n")
        ax.set_title(title, fontsize=10)
    legend = axes.flat[-1]
    legend.axis("off")
    for k, (label, colour) in enumerate(VERDICT_COLOURS.items()):
        legend.add_patch(plt.Rectangle((0.02, 0.82 - 0.14 * k), 0.12, 0.1, color=colour))
        legend.text(0.18, 0.87 - 0.14 * k, label, va="center", fontsize=9)
    legend.text(
        0.02,
        0.02,
        "Each cell: coverage of 95 % intervals (lowest-highest\nover the parameters), the widest "
        "parameter's mean\nwidth over the estimator's simulated spread, and the\nnumber of "
        "data sets. Committed tables of\n'python -m benchmarks.inference'.",
        fontsize=8,
    )
    fig.suptitle("Where dpreg's confidence intervals were measured to hold (simulation)")
    fig.tight_layout()
    IMG.mkdir(exist_ok=True)
    fig.savefig(IMG / "intervals.png", dpi=100)
    print("wrote", IMG / "intervals.png")


if __name__ == "__main__":
    for model in sys.argv[1:] or [*NORMS, "intervals"]:
        if model == "intervals":
            intervals_figure()
        else:
            figure(model)
