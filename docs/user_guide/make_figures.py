"""Draw the user-guide figures: cross-validated utility against epsilon, one line per norm.

Usage: python docs/user_guide/make_figures.py [linear] [logistic] [quantile] [median]
(no argument: all four). Writes docs/user_guide/img/<name>.png. Uses the same data, public
bounds and evaluation engine as ``dpreg demo``.
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dpreg.compare import METRIC_LABELS, evaluate  # noqa: E402
from dpreg.demo import demo_tasks  # noqa: E402

IMG = Path(__file__).resolve().parent / "img"
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
        priv = [r for r in rows if r["task"] == task.name and r["kind"] == "private"]
        eps = np.array([r["epsilon"] for r in priv])
        mean = np.array([r["mean"] for r in priv])
        std = np.array([r["std"] for r in priv])
        ax.errorbar(eps, mean, yerr=std, marker="o", capsize=3, label=f"private, {norm}")
    for r in rows:
        if r["kind"] == "baseline":
            colour = "grey" if r["model"] == "mean" else "black"
            ax.axhline(r["mean"], ls="--", color=colour, label=f"{r['model']} (non-private)")
    ax.set_xscale("log")
    ticks = sorted({r["epsilon"] for r in rows if r["kind"] == "private"})
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


if __name__ == "__main__":
    for model in sys.argv[1:] or list(NORMS):
        figure(model)
