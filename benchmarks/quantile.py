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
``--timing`` runs only the timing experiment at full size (``results/quantile_timing.{csv,md}``),
``--accuracy`` only the Fig. 2 / tau = 0.1, 0.9 accuracy check at n = 10^4 and ``--scaling``
the box-count / time table for d = 2..5 with OP and HiGHS beside each cell
(``results/quantile_scaling.{csv,md,png}``). Timing and scaling fits run one per child process
and stop at ``--cap`` CPU seconds (default 120; :mod:`benchmarks._quantile_cells`): HiGHS
needs minutes at n = 10^5 and far more at 10^6, which is what made an uncapped run hang.
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
    from ._quantile_cells import WALL_FACTOR
except ImportError:  # pragma: no cover - run as a script
    from benchmarks._quantile_cells import WALL_FACTOR

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
            diagnostics=True,  # the benchmark reports R-hat (not private; never published)
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


def timing(quick, cap=120.0):
    """Fit times of the exact KNG sampler vs HiGHS on the same data (wall and CPU seconds).

    ``d`` counts parameters (intercept included): d = 3 is two features. Every fit runs in
    its own child process with one BLAS thread and is ended when it reaches ``cap`` CPU
    seconds (:mod:`benchmarks._quantile_cells`; an uncapped HiGHS fit at n = 1e6 hung this run);
    a timed-out method is not repeated in that cell. CPU time is the fairer measure on a
    shared machine. Ratio = KNG median / HiGHS median on the same data, same run.
    """
    from ._quantile_cells import run_cell

    configs = [(10_000, 3), (10_000, 4)] + ([] if quick else [(1_000_000, 2)])
    reps = 1 if quick else 3
    rows = []
    for n, d in configs:
        for method, label in (("kng", "KNG exact"), ("highs", "sklearn highs")):
            for rep in range(reps):
                row = run_cell(method, d, n, rep, cap)
                print(row, flush=True)
                rows.append(
                    dict(
                        experiment="timing",
                        method=label,
                        tau=0.5,
                        epsilon=1.0,
                        n=n,
                        d=d,
                        replicate=rep,
                        status=row["status"],
                        cap=cap,
                        seconds=row.get("wall_seconds", np.nan),
                        cpu_seconds=row.get("cpu_seconds", np.nan),
                        n_boxes=row.get("n_boxes", np.nan),
                        n_proposals=row.get("n_proposals", np.nan),
                    )
                )
                if row["status"] != "ok":
                    break
    return rows


# ----------------------------------------------------------------------------------------------
def _median_or_status(grp, column):
    """Median of ``column`` over the finished fits and the count "k of m", or (NaN, status of
    the first unfinished fit) when none finished, e.g. "timeout > 120 CPU s"."""
    ok = grp[grp.status == "ok"]
    if len(ok):
        return float(ok[column].median()), f"{len(ok)} of {len(grp)}"
    bad = grp.status.iloc[0]
    cap = grp.cap.iloc[0] if "cap" in grp else np.nan
    if bad == "timeout":
        return np.nan, f"timeout > {cap:g} CPU s"
    if bad == "timeout (wall)":
        return np.nan, f"timeout > {WALL_FACTOR * cap:g} s wall"
    return np.nan, bad


def timing_lines(tim):
    """Markdown lines of the timing experiment: medians, fit counts and the two ratios."""
    lines = []
    for (n, d), grp in tim.groupby(["n", "d"]):
        k_grp, h_grp = grp[grp.method == "KNG exact"], grp[grp.method == "sklearn highs"]
        kw, kc = _median_or_status(k_grp, "seconds")[0], _median_or_status(k_grp, "cpu_seconds")
        hw, hc = _median_or_status(h_grp, "seconds")[0], _median_or_status(h_grp, "cpu_seconds")
        text = (
            f"\nTiming n = {int(n)}, d = {int(d)} parameters: KNG {kw:.3f} s wall, "
            f"{kc[0]:.3f} s CPU ({kc[1]} fits); HiGHS "
        )
        if np.isnan(hc[0]) and hc[1].endswith("CPU s"):  # HiGHS needs more than cap CPU s
            text += f"{hc[1]}: ratio < {kc[0] / h_grp.cap.iloc[0]:.3g} CPU"
        elif np.isnan(hc[0]):
            text += hc[1]
        else:
            text += (
                f"{hw:.3f} s wall, {hc[0]:.3f} s CPU ({hc[1]} fits): ratio {kw / hw:.3f} wall, "
                f"{kc[0] / hc[0]:.3f} CPU"
            )
        lines.append(text)
    return "\n".join(lines)


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
        lines.append(timing_lines(tim))
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


def scaling(cap=120.0, reps_small=2, reps_large=1, methods=("kng", "op", "highs")):
    """Box counts, proposals per draw and CPU seconds of the exact KNG sampler for every cell
    d = 2..5 x n = 1e3..1e6 (epsilon = 1, tau = 1/2, linf; the timing design), with the
    times of ``ObjectivePerturbationQuantileRegressor`` and of HiGHS on the same data.

    Cells run smallest ``n`` first, one fit at a time, each in a child process ended when the
    fit reaches ``cap`` CPU seconds (:func:`benchmarks._quantile_cells.run_cell`): a row then
    says "timeout"; KNG cells beyond the public ``MAX_EXACT_ROWS`` say "refused". ``reps_small``
    fits per cell for n <= 1e4, ``reps_large`` above; a method that did not finish a fit is
    not repeated in that cell, nor run at larger ``n`` for the same ``d`` (every method's cost
    grows with ``n``; such rows say "not run (over the cap at a smaller n)")."""
    from ._common import results_dir
    from ._quantile_cells import run_cell

    rows = []
    timed_out = set()  # (method, d) that hit the cap at a smaller n: not run at larger n
    for n in SCALING_N:
        for d in SCALING_D:
            reps = reps_small if n <= 10_000 else reps_large
            for method in methods:
                if (method, d) in timed_out:
                    status = "not run (over the cap at a smaller n)"
                    rows.append(dict(method=method, d=d, n=n, rep=0, cap=cap, status=status))
                    continue
                for rep in range(reps):
                    row = run_cell(method, d, n, rep, cap)
                    if row["status"].startswith("timeout"):
                        timed_out.add((method, d))
                    rows.append(row)
                    print(row, flush=True)
                    if row["status"] != "ok":
                        break
            # written after every cell: an interrupted run keeps what it measured
            pd.DataFrame(rows).to_csv(results_dir(False) / "quantile_scaling.csv", index=False)
    df = pd.DataFrame(rows)
    save(df, "quantile_scaling", scaling_plot(df), quick=False)
    md = scaling_table(df)
    (results_dir(False) / "quantile_scaling.md").write_text(md + "\n")
    print(md)
    return df


def _show(value, note):
    """A median with its fit count ("0.52 (2)"), or the status when no fit finished."""
    return f"{value:.3g} ({note.split(' of ')[0]})" if not np.isnan(value) else note


def scaling_table(df):
    """Markdown: one row per (d, n); medians over the finished fits of each method."""
    lines = [
        "| d | n | KNG CPU s | KNG wall s | boxes | proposals per draw | acceptance bound "
        "| OP CPU s | HiGHS CPU s | KNG / HiGHS (CPU) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (d, n), g in df.groupby(["d", "n"], sort=True):
        cells = {}
        for method in ("kng", "op", "highs"):
            m = g[g.method == method]
            if not len(m):
                cells[method] = (np.nan, "not run")
                continue
            cells[method] = _median_or_status(m, "cpu_seconds")
        k = g[(g.method == "kng") & (g.status == "ok")]
        show = {m: _show(*cells[m]) for m in cells}
        if len(k):
            kng = [
                show["kng"],
                f"{k.wall_seconds.median():.3g}",
                f"{k.n_boxes.median():,.0f}",
                f"{k.n_proposals.median():.3g}",
                f"{k.acceptance_bound.median():.2g}",
            ]
        else:
            kng = [show["kng"], "", "", "", ""]
        ratio = cells["kng"][0] / cells["highs"][0]
        highs_over_cap = cells["highs"][1].endswith("CPU s")
        if np.isnan(ratio) and not np.isnan(cells["kng"][0]) and highs_over_cap:
            ratio_s = f"< {cells['kng'][0] / g.cap.iloc[0]:.2g}"
        else:
            ratio_s = "" if np.isnan(ratio) else f"{ratio:.3g}"
        lines.append(
            f"| {d} | {n:.0e} | " + " | ".join(kng + [show["op"], show["highs"], ratio_s]) + " |"
        )
    return "\n".join(lines)


def scaling_plot(df):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ok = df[(df.status == "ok") & (df.method == "kng")]
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
    parser.add_argument("--cap", type=float, default=None, help="CPU s per fit (default 120)")
    args = parser.parse_args(argv)
    if args.accuracy:
        accuracy_check()
        return
    if args.timing:
        df = pd.DataFrame(timing(quick=False, cap=args.cap or 120.0))
        md = summary(df)
        print(md)
        save(df, "quantile_timing", quick=False)
        from ._common import results_dir

        (results_dir(False) / "quantile_timing.md").write_text(md.strip() + "\n")
        return
    if args.scaling:
        scaling(cap=args.cap or 120.0)
        return
    run(quick=args.quick)


if __name__ == "__main__":
    main()
