"""Seed 002 Figure 2 and beyond: KNG quantile regression vs non-private and exponential mechanism.

Experiments (all ``epsilon``-DP fits use public bounds only; ``y`` is never rescaled by its
data range, unlike the paper's simulation):

* ``figure2``: tau = 1/2, theta = (0, -1), x = (1, U(-1, 1)), e ~ N(0, 1), epsilon = 1,
  n = 10 .. 10^5, 100 replicates (full). Euclidean error of KNG (``KNGQuantileRegressor``,
  linf norm, one chain), the non-private estimator (statsmodels ``QuantReg``) and the
  exponential mechanism with the pinball loss as utility (the paper's baseline, sampled with the
  same exact-line Gibbs machinery of :mod:`dpreg.kng`). Both private methods use the public range
  ``|y| <= 4`` for their parameter box (intercept and slope in [-4, 4]); the exponential
  mechanism also needs ``y`` clipped into it, KNG does not.
* ``heteroscedastic``: tau = 0.1 and 0.9, x ~ U(-1, 1)^2,
  y = 1 + x1 - x2 + (1.5 + x1) e, whose tau-quantile is linear with
  theta_tau = (1 + 1.5 z, 1 + z, -1), z = Phi^{-1}(tau).
* ``engel``: statsmodels' Engel food-expenditure data (n = 235), tau in {0.1, 0.5, 0.9},
  epsilon in {1, 10}; error = distance of (intercept, slope * 1000) to the non-private fit.
* ``timing``: the default (exact) fit at n = 10^4 with d = 3 and 4 parameters (and n = 10^6,
  d = 2 in the full run) vs sklearn ``QuantileRegressor(solver="highs", alpha=0)`` on the same
  data, same run; wall and CPU seconds.

Targets (issues 5 and 12): at n = 10^4, epsilon = 1, tau = 1/2, mean error <= 1.3x the
non-private estimator's; fit time at n = 10^4, d = 3 <= 2 s and <= 0.1x HiGHS; n = 10^6,
d = 2 <= 10 s.

Run ``python -m benchmarks.quantile`` (full, tens of minutes) or ``--quick`` (< 2 min);
``--timing`` runs only the timing experiment at full size (``results/quantile_timing.csv``),
``--accuracy`` only the Fig. 2 / tau = 0.1, 0.9 accuracy check at n = 10^4 and ``--scaling``
the box-count / time table for d = 2..5.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats
from tqdm import tqdm

from dpreg import KNGQuantileRegressor
from dpreg.kng import run_chains
from dpreg.linear_model._quantile_core import default_coef_bounds, design, quantile_gradient

try:
    from ._common import cli_parser, save
except ImportError:  # pragma: no cover - run as a script
    from benchmarks._common import cli_parser, save

Y_RANGE = 4.0  # public |y| bound of the figure-2 design (|x theta| <= 1, N(0,1) errors)


# ----------------------------------------------------------------------------------------------
# Exponential mechanism baseline (pinball loss as utility), on the KNG line sampler
# ----------------------------------------------------------------------------------------------
class PinballExponentialMechanism:
    """Density ∝ exp(-epsilon / (2 Delta_l) * sum_i rho_tau(y_i - w_i^T theta)) on a box.

    With ``y`` clipped into ``[-C, C]`` and ``|w|_inf <= 1``, each loss term lies in
    ``[0, m (C + R)]`` on the box, ``m = max(tau, 1 - tau)``, ``R = max ||theta||_1`` over the
    box; both terms of a replaced record are non-negative, so the loss changes by at most
    ``Delta_l = m (C + R)`` (the paper's ``2 m (1 + B)`` carries an unneeded factor 2).
    Along a line the loss is piecewise linear with the breakpoints of its (step) gradient and
    slope ``u^T g`` on each segment, so the conditional is drawn exactly
    (:func:`dpreg.kng.sample_piecewise_exponential`), reusing
    :meth:`dpreg.kng.StepGradient.along_line`.
    """

    def __init__(self, W, y, tau, epsilon, lower, upper, y_bound):
        self.y = np.clip(np.asarray(y, float), -y_bound, y_bound)
        self.tau = tau
        self.gradient = quantile_gradient(W, self.y, tau)
        self.lower, self.upper = np.asarray(lower, float), np.asarray(upper, float)
        radius = float(np.sum(np.maximum(np.abs(self.lower), np.abs(self.upper))))
        self.sensitivity = max(tau, 1 - tau) * (y_bound + radius)
        self.scale = epsilon / (2.0 * self.sensitivity)

    @property
    def dim(self):
        return self.gradient.dim

    def start_cache(self, theta):
        return self.gradient.U @ theta

    def line(self, theta, cache, u, t_lo, t_hi):
        Uu = self.gradient.U @ u
        edges, G = self.gradient.along_line(cache, Uu, t_lo, t_hi)
        r0 = self.y - cache - t_lo * Uu
        loss0 = float(np.sum(np.where(r0 > 0, self.tau * r0, (self.tau - 1.0) * r0)))
        dloss = G @ u  # derivative of the loss in t on every segment
        at_edges = loss0 + np.concatenate(([0.0], np.cumsum(dloss * np.diff(edges))[:-1]))
        return edges, -self.scale * at_edges, -self.scale * dloss, Uu


def exponential_mechanism_fit(X, y, tau, epsilon, lower, upper, y_bound, n_sweeps, seed):
    W = design(X, True)
    target = PinballExponentialMechanism(W, y, tau, epsilon, lower, upper, y_bound)
    res = run_chains(target, n_sweeps, n_chains=1, n_random=W.shape[1], random_state=seed)
    return res.final[0]


def nonprivate_fit(X, y, tau):
    import statsmodels.api as sm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm.QuantReg(y, design(X, True)).fit(q=tau, max_iter=5000, p_tol=1e-10)
    return np.asarray(res.params)


def kng_fit(X, y, tau, epsilon, bounds_X, bounds_y, seed, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning is summarised separately
        m = KNGQuantileRegressor(
            quantile=tau,
            epsilon=epsilon,
            bounds_X=bounds_X,
            bounds_y=bounds_y,
            random_state=seed,
            **kw,
        ).fit(X, y)
    return np.r_[m.intercept_, m.coef_], m


# ----------------------------------------------------------------------------------------------
# Experiments
# ----------------------------------------------------------------------------------------------
def figure2(quick):
    ns = [10, 100, 1000, 10_000] if quick else [10, 100, 1000, 10_000, 100_000]
    reps = 6 if quick else 100
    theta = np.array([0.0, -1.0])
    lower, upper = default_coef_bounds((-Y_RANGE, Y_RANGE), 1, True)
    rows = []
    for n in ns:
        for rep in tqdm(range(reps), desc=f"figure2 n={n}", leave=False):
            rng = np.random.default_rng([2, n, rep])
            X = rng.uniform(-1, 1, size=(n, 1))
            y = theta[0] + theta[1] * X[:, 0] + rng.standard_normal(n)
            t0 = time.perf_counter()
            est = nonprivate_fit(X, y, 0.5)
            t1 = time.perf_counter()
            kng, model = kng_fit(X, y, 0.5, 1.0, (-1, 1), (-Y_RANGE, Y_RANGE), rep, n_chains=1)
            t2 = time.perf_counter()
            em = exponential_mechanism_fit(
                X, y, 0.5, 1.0, lower, upper, Y_RANGE, n_sweeps=50, seed=10_000 + rep
            )
            t3 = time.perf_counter()
            for method, value, sec in (
                ("non-private", est, t1 - t0),
                ("KNG", kng, t2 - t1),
                ("exponential mechanism", em, t3 - t2),
            ):
                rows.append(
                    dict(
                        experiment="figure2",
                        method=method,
                        tau=0.5,
                        epsilon=1.0,
                        n=n,
                        replicate=rep,
                        error=float(np.linalg.norm(value - theta)),
                        seconds=sec,
                    )
                )
    return rows


def heteroscedastic(quick):
    ns = [1000, 10_000]
    reps = 3 if quick else 30
    rows = []
    for tau in (0.1, 0.9):
        z = stats.norm.ppf(tau)
        theta = np.array([1.0 + 1.5 * z, 1.0 + z, -1.0])
        for n in ns:
            for rep in tqdm(range(reps), desc=f"hetero tau={tau} n={n}", leave=False):
                rng = np.random.default_rng([3, int(100 * tau), n, rep])
                X = rng.uniform(-1, 1, size=(n, 2))
                y = 1 + X[:, 0] - X[:, 1] + (1.5 + X[:, 0]) * rng.standard_normal(n)
                est = nonprivate_fit(X, y, tau)
                kng, model = kng_fit(X, y, tau, 1.0, (-1, 1), (-12, 12), rep, n_chains=2)
                for method, value in (("non-private", est), ("KNG", kng)):
                    rows.append(
                        dict(
                            experiment="heteroscedastic",
                            method=method,
                            tau=tau,
                            epsilon=1.0,
                            n=n,
                            replicate=rep,
                            error=float(np.linalg.norm(value - theta)),
                            max_rhat=model.sampler_diagnostics_.get("max_rhat", np.nan)
                            if method == "KNG"
                            else np.nan,
                        )
                    )
    return rows


def engel(quick):
    import statsmodels.api as sm

    data = sm.datasets.engel.load_pandas().data
    X, y = data[["income"]].to_numpy(), data["foodexp"].to_numpy()
    reps = 3 if quick else 30
    rows = []
    for tau in (0.1, 0.5, 0.9):
        ref = nonprivate_fit(X, y, tau)
        for eps in (1.0, 10.0):
            for rep in tqdm(range(reps), desc=f"engel tau={tau} eps={eps}", leave=False):
                kng, _ = kng_fit(X, y, tau, eps, (0, 6000), (0, 5000), rep, n_chains=1)
                diff = (kng - ref) * np.array([1.0, 1000.0])  # slope per 1000 francs
                rows.append(
                    dict(
                        experiment="engel",
                        method="KNG",
                        tau=tau,
                        epsilon=eps,
                        n=len(y),
                        replicate=rep,
                        error=float(np.linalg.norm(diff)),
                        intercept=kng[0],
                        slope=kng[1],
                        ref_intercept=ref[0],
                        ref_slope=ref[1],
                    )
                )
    return rows


def timing(quick):
    """Fit times of the exact KNG sampler vs HiGHS on the same data (wall and CPU seconds).

    ``d`` counts parameters (intercept included): d = 3 is two features. Both fits are
    single-threaded, so CPU time is the fairer measure on a shared machine.
    """
    from sklearn.linear_model import QuantileRegressor

    configs = [(10_000, 3), (10_000, 4)] + ([] if quick else [(1_000_000, 2)])
    reps = 1 if quick else 3
    rows = []
    for n, d in configs:
        rng = np.random.default_rng(5)
        X = rng.uniform(-1, 1, size=(n, d - 1))
        y = X @ np.array([1.0, -1.0, 0.5])[: d - 1] + rng.standard_normal(n)
        times = {"sklearn highs": [], "KNG exact": []}
        for rep in range(reps):
            for method in times:
                w0, c0 = time.perf_counter(), time.process_time()
                if method == "KNG exact":
                    kng_fit(X, y, 0.5, 1.0, (-1, 1), (-6, 6), rep)
                else:
                    QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs").fit(X, y)
                times[method].append((time.perf_counter() - w0, time.process_time() - c0))
        for method, ts in times.items():
            ts = np.array(ts)
            rows.append(
                dict(
                    experiment="timing",
                    method=method,
                    tau=0.5,
                    epsilon=1.0,
                    n=n,
                    d=d,
                    replicate=0,
                    seconds=float(np.median(ts[:, 0])),
                    cpu_seconds=float(np.median(ts[:, 1])),
                )
            )
    return rows


# ----------------------------------------------------------------------------------------------
def summary(df):
    """Markdown with the headline numbers (used by ``python -m benchmarks``)."""
    lines = []
    fig = df[df.experiment == "figure2"]
    if len(fig):
        for agg in ("mean", "median"):
            tab = fig.pivot_table(index="n", columns="method", values="error", aggfunc=agg)
            tab["KNG / non-private"] = tab["KNG"] / tab["non-private"]
            tab["EM / non-private"] = tab["exponential mechanism"] / tab["non-private"]
            lines.append(f"\nFigure 2 (tau = 1/2, epsilon = 1): {agg} Euclidean error\n")
            lines.append(tab.to_string(float_format=lambda v: f"{v:.4g}"))
    het = df[df.experiment == "heteroscedastic"]
    if len(het):
        for agg in ("mean", "median"):
            tab = het.pivot_table(index=["tau", "n"], columns="method", values="error", aggfunc=agg)
            tab["KNG / non-private"] = tab["KNG"] / tab["non-private"]
            lines.append(f"\nHeteroscedastic design (epsilon = 1): {agg} error\n")
            lines.append(tab.to_string(float_format=lambda v: f"{v:.4g}"))
    eng = df[df.experiment == "engel"]
    if len(eng):
        tab = eng.groupby(["tau", "epsilon"]).agg(
            error=("error", "mean"),
            median_slope=("slope", "median"),
            ref_slope=("ref_slope", "first"),
        )
        lines.append("\nEngel data (n = 235): distance to the non-private fit\n")
        lines.append(tab.to_string(float_format=lambda v: f"{v:.4g}"))
    tim = df[df.experiment == "timing"]
    if len(tim):
        for (n, d), grp in tim.groupby(["n", "d"]):
            t = grp.set_index("method")
            k, h = t.loc["KNG exact"], t.loc["sklearn highs"]
            lines.append(
                f"\nTiming n = {int(n)}, d = {int(d)} parameters: KNG {k.seconds:.3f} s wall "
                f"({k.cpu_seconds:.3f} s CPU), HiGHS {h.seconds:.3f} s ({h.cpu_seconds:.3f} s "
                f"CPU), ratio {k.seconds / h.seconds:.3f} wall, "
                f"{k.cpu_seconds / h.cpu_seconds:.3f} CPU"
            )
    return "\n".join(lines)


def plot(df):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    fig2 = df[df.experiment == "figure2"]
    for method, marker in (("non-private", "o"), ("KNG", "s"), ("exponential mechanism", "^")):
        sub = fig2[fig2.method == method].groupby("n")["error"].mean()
        if len(sub):
            axes[0].plot(np.log10(sub.index), np.log10(sub.values), marker=marker, label=method)
    axes[0].set_xlabel("log10 n")
    axes[0].set_ylabel("log10 mean error")
    axes[0].set_title("Seed 002 Fig. 2: tau = 1/2, epsilon = 1")
    axes[0].legend()
    het = df[df.experiment == "heteroscedastic"]
    for (tau, method), sub in het.groupby(["tau", "method"]):
        g = sub.groupby("n")["error"].mean()
        axes[1].plot(
            np.log10(g.index),
            np.log10(g.values),
            marker="o",
            linestyle="-" if method == "KNG" else "--",
            label=f"{method}, tau={tau}",
        )
    axes[1].set_xlabel("log10 n")
    axes[1].set_title("Heteroscedastic design, epsilon = 1")
    axes[1].legend(fontsize=8)
    eng = df[df.experiment == "engel"]
    if len(eng):
        labels, data = [], []
        for (tau, eps), sub in eng.groupby(["tau", "epsilon"]):
            labels.append(f"tau={tau}\neps={eps:g}")
            data.append(sub["slope"].to_numpy() * 1000)
        axes[2].boxplot(data, tick_labels=labels)
        for i, (_, sub) in enumerate(eng.groupby(["tau", "epsilon"])):
            ref = sub["ref_slope"].iloc[0] * 1000
            axes[2].plot([i + 0.7, i + 1.3], [ref, ref], color="red")
        axes[2].set_ylabel("slope (food per 1000 francs income)")
        axes[2].set_title("Engel: KNG slopes (red: non-private)")
    fig.tight_layout()
    return fig


def run(quick: bool) -> pd.DataFrame:
    rows = []
    for experiment in (figure2, heteroscedastic, engel, timing):
        rows += experiment(quick)
    df = pd.DataFrame(rows)
    print(summary(df))
    save(df, "quantile", plot(df), quick=quick)
    return df


SCALING_D = (2, 3, 4, 5)
SCALING_N = (1_000, 10_000, 100_000, 1_000_000)


def scaling_cell(d, n, rep):
    """One default fit of the scaling design (run in a child process by :func:`scaling`):
    CPU seconds, sampler statistics and the peak resident memory of the process."""
    import resource

    from dpreg._kng_exact import memory_plan

    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(n, d - 1))
    y = X @ np.array([1.0, -1.0, 0.5, 0.3])[: d - 1] + rng.standard_normal(n)
    c0 = time.process_time()
    _, m = kng_fit(X, y, 0.5, 1.0, (-1, 1), (-6, 6), rep)
    info = m.sampler_diagnostics_
    return dict(
        d=d,
        n=n,
        rep=rep,
        status="ok",
        cpu_seconds=time.process_time() - c0,
        n_boxes=info["n_boxes"],
        n_proposals=info["n_proposals"],
        acceptance_bound=info["acceptance_bound"],
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        plan_bound_mb=memory_plan(n, d)["bound"] / 2**20,
    )


def _limit_memory(gib=4):
    """Child processes of :func:`scaling` get at most ``gib`` GiB of address space (the
    machine is shared: a runaway fit fails instead of taking everyone's memory)."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))


def scaling(cap=600.0, reps_small=2, reps_large=1):
    """Box counts, proposals per draw, CPU seconds and peak memory of the exact sampler for
    every cell d = 2..5 x n = 1e3..1e6 (epsilon = 1, tau = 1/2, linf; the timing design).

    Each fit runs in its own child process, killed after ``cap`` wall seconds for the whole
    cell (its row then says "> cap"); cells run one at a time. ``reps_small`` fits per cell
    for n <= 1e4, ``reps_large`` above."""
    import json
    import subprocess
    import sys

    rows = []
    for d in SCALING_D:
        for n in SCALING_N:
            reps = reps_small if n <= 10_000 else reps_large
            w0 = time.perf_counter()
            for rep in range(reps):
                left = cap - (time.perf_counter() - w0)
                cmd = [sys.executable, "-m", "benchmarks.quantile", "--scaling-cell"]
                try:
                    out = subprocess.run(
                        cmd + [str(d), str(n), str(rep)],
                        capture_output=True,
                        text=True,
                        timeout=max(left, 1.0),
                        check=True,
                        preexec_fn=_limit_memory,
                    )
                    row = json.loads(out.stdout.strip().splitlines()[-1])
                except subprocess.TimeoutExpired:
                    row = dict(d=d, n=n, rep=rep, status=f"> {cap:g} s wall")
                except subprocess.CalledProcessError as err:  # e.g. over the memory limit
                    row = dict(d=d, n=n, rep=rep, status="error: " + err.stderr[-200:])
                row["wall_seconds"] = time.perf_counter() - w0
                rows.append(row)
                print(row, flush=True)
                if row["status"] != "ok":
                    break
    df = pd.DataFrame(rows)
    save(df, "quantile_scaling", scaling_plot(df), quick=False)
    md = scaling_table(df, cap)
    from ._common import results_dir

    (results_dir(False) / "quantile_scaling.md").write_text(md + "\n")
    print(md)
    return df


def scaling_table(df, cap):
    """Markdown: one row per (d, n); medians over the fits, "> cap" if a fit did not finish."""
    lines = [
        "| d | n | fits | CPU s (median) | boxes | proposals per draw | peak RSS MB "
        "| sampler bound MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (d, n), g in df.groupby(["d", "n"], sort=True):
        ok = g[g.status == "ok"]
        if len(ok) < len(g):
            why = g[g.status != "ok"].status.iloc[0].strip().splitlines()[-1][:90]
            lines.append(f"| {d} | {n:.0e} | {len(ok)} of {len(g)} done | {why} | | | | |")
            continue
        lines.append(
            f"| {d} | {n:.0e} | {len(ok)} | {ok.cpu_seconds.median():.3g} | "
            f"{ok.n_boxes.median():,.0f} | {ok.n_proposals.mean():.3g} | "
            f"{ok.peak_rss_mb.max():.0f} | {ok.plan_bound_mb.max():.0f} |"
        )
    return "\n".join(lines)


def scaling_plot(df):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ok = df[df.status == "ok"]
    for d, g in ok.groupby("d"):
        med = g.groupby("n").agg(cpu=("cpu_seconds", "median"), boxes=("n_boxes", "median"))
        axes[0].loglog(med.index, med.cpu, marker="o", label=f"d = {d}")
        axes[1].loglog(med.index, med.boxes, marker="o", label=f"d = {d}")
    axes[0].set_xlabel("n")
    axes[0].set_ylabel("CPU seconds per fit")
    axes[1].set_xlabel("n")
    axes[1].set_ylabel("boxes")
    axes[0].legend()
    axes[0].set_title("Exact KNG fit (loaded 2-core machine)")
    fig.tight_layout()
    return fig


def accuracy_check(reps=100, n=10_000):
    """Issue 12's no-regression check at ``n``: seed 002 Figure 2 (tau = 1/2, the data of
    :func:`figure2`) and the heteroscedastic design at tau = 0.1 and 0.9 (the data of
    :func:`heteroscedastic`); mean Euclidean error of the default KNG fit and of the
    non-private fit on the same data sets, and their ratio. Seeds 0..reps-1."""
    rows = []
    for rep in range(reps):
        rng = np.random.default_rng([2, n, rep])
        X = rng.uniform(-1, 1, size=(n, 1))
        theta = np.array([0.0, -1.0])
        y = theta[0] + theta[1] * X[:, 0] + rng.standard_normal(n)
        kng, _ = kng_fit(X, y, 0.5, 1.0, (-1, 1), (-Y_RANGE, Y_RANGE), rep, n_chains=1)
        for method, value in (("KNG", kng), ("non-private", nonprivate_fit(X, y, 0.5))):
            err = float(np.linalg.norm(value - theta))
            rows.append(dict(case="figure2", method=method, rep=rep, error=err))
    for tau in (0.1, 0.9):
        z = stats.norm.ppf(tau)
        theta = np.array([1.0 + 1.5 * z, 1.0 + z, -1.0])
        for rep in range(reps):
            rng = np.random.default_rng([3, int(100 * tau), n, rep])
            X = rng.uniform(-1, 1, size=(n, 2))
            y = 1 + X[:, 0] - X[:, 1] + (1.5 + X[:, 0]) * rng.standard_normal(n)
            kng, _ = kng_fit(X, y, tau, 1.0, (-1, 1), (-12, 12), rep)
            for method, value in (("KNG", kng), ("non-private", nonprivate_fit(X, y, tau))):
                err = float(np.linalg.norm(value - theta))
                rows.append(dict(case=f"tau={tau}", method=method, rep=rep, error=err))
    df = pd.DataFrame(rows)
    g = df.groupby(["case", "method"]).error
    table = pd.DataFrame({"mean": g.mean(), "se": g.std() / np.sqrt(g.count())}).unstack()
    table["ratio KNG / non-private"] = table[("mean", "KNG")] / table[("mean", "non-private")]
    print(table.to_string())
    save(df, "quantile_accuracy", quick=False)
    from ._common import results_dir

    (results_dir(False) / "quantile_accuracy.md").write_text(
        f"Run: `python -m benchmarks.quantile --accuracy` (n = {n}, epsilon = 1, {reps} "
        "replicates; mean Euclidean error, its standard error, and the ratio)\n\n```\n"
        + table.to_string(float_format=lambda v: f"{v:.4g}")
        + "\n```\n"
    )
    return df


def argparse_suppress():
    import argparse

    return argparse.SUPPRESS


def main(argv=None):
    parser = cli_parser(__doc__)
    parser.add_argument(
        "--scaling", action="store_true", help="only the box-count / time table for d = 2..5"
    )
    parser.add_argument(
        "--accuracy", action="store_true", help="only the tau = 0.1 / 0.9 accuracy check"
    )
    parser.add_argument(
        "--timing", action="store_true", help="only the KNG vs HiGHS timing (full sizes)"
    )
    parser.add_argument("--cap", type=float, default=600.0, help="--scaling: wall s per cell")
    parser.add_argument("--scaling-cell", nargs=3, type=int, help=argparse_suppress())
    args = parser.parse_args(argv)
    if args.scaling_cell:
        import json

        print(json.dumps(scaling_cell(*args.scaling_cell)))
        return
    if args.accuracy:
        accuracy_check()
        return
    if args.timing:
        df = pd.DataFrame(timing(quick=False))
        print(summary(df))
        save(df, "quantile_timing", quick=False)
        return
    if args.scaling:
        scaling(cap=args.cap)
        return
    run(quick=args.quick)


if __name__ == "__main__":
    main()
