"""The default (linearised) logistic interval on a non-centred design (docs/inference.md,
"Non-centred designs (session 12)").

The control design of ``_inference_logistic_sim`` (``X1_LOW``: x1 ~ U[-0.3, 1], so x1 is
correlated with the intercept; the benchmark's model and Hessian share, seed 41, data set
``i`` from ``default_rng([41, i])``: the very releases of the committed control runs). On
every data set the library's ``conf_int(method="linear")`` is recomputed (and checked against
the committed control arrays where they exist), and its bootstrap is re-run on the same
release with one plug-in replaced at a time by the truth (a diagnosis may read it):

* ``library``: the released Hessian's feasible posterior, the basic interval (the default);
* ``basic, true H at theta~`` / ``basic, true H at theta0``: the same linearised draws with the
  data set's true loss Hessian (at the released point / at the truth) in every replicate;
* ``basic, posterior mean``: the mean of the feasible posterior, fixed (no curvature spread);
* ``deshrunk, true H at theta0``: the oracle pivot: the draws of the row above mapped by
  ``phi = I + H0^{-1} P`` (the simulation's de-shrunk inversion, ``_inference_logistic_sim``),
  the Neyman interval of the linear law when the curvature is known;
* ``deshrunk, posterior mean``: the library's draws mapped by ``phi`` of the posterior mean
  (released values only: a candidate fix).

It also records per data set x1's curvature after the intercept and x2 (the Schur complement
``1 / (H^{-1})_11``) and the shrinkage ``(H^{-1} P)_jj`` of the true Hessian, of the released
``H~`` and of the posterior mean, and the share of posterior draws above the truth.

Run: ``python -m benchmarks._inference_logistic_nc decompose EPS REPS START [X1_LOW [SEED
[SHARE]]]`` writes ``benchmarks/results/inference_logistic_nc_EPS_SEED_START_x1lowX1_LOW.npz``
(``SHARE`` overrides the Hessian share and adds ``_shareSHARE`` to the name) and prints
the table; ``... table FILES`` prints the table of the concatenated files. ``... support EPS
REPS START``: the user-side remedy (``bounds_X`` = x1's support) on the same data sets.
``... committed N REPS SEED``: the library and the candidate ``HULL`` on the stream of the
committed ``benchmarks/results/inference_logistic.csv`` (seed 2000 at n = 1e3). ``... csv``
re-scores the arrays into ``benchmarks/results/inference_logistic_nc.csv``.

The Hessian share with candidate (b) on fresh streams (session 12, ``share_sweep``):
``... share N EPS REPS START X1_LOW SHARES [SEED]`` (``SHARES`` comma-separated, ``rule`` =
``hessian_share(N, EPS)``; the stream is ``SEED``, default ``SHARE_SEEDS[X1_LOW, N]``) writes
``inference_logistic_share_N_EPS_SEED_START_x1lowX1_LOW.npz`` and prints its table;
``... share-table FILES`` prints the table of concatenated chunks and ``... share-csv``
re-scores every cell of ``SHARE_CELLS`` into ``benchmarks/results/inference_logistic_share.csv``.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ._inference_cells import LOGIT_BETA, deshrunk
from ._inference_logistic_diagnosis import loss_hessian
from ._inference_logistic_sim import release, table

RESULTS = Path(__file__).parent / "results"
N, B = 1000, 1000
#: The candidate fix measured on the committed centred cells (``committed``).
HULL = "hull: library and deshrunk fixed, median precision"
KEYS = (
    "library",
    "basic, true H at theta~",
    "basic, true H at theta0",
    "basic, posterior mean",
    "deshrunk, true H at theta0",
    "deshrunk, posterior mean",
    "deshrunk fixed, posterior mean",
    "hull: library and deshrunk fixed, posterior mean",
    "deshrunk fixed, median precision",
    HULL,
)


def _schur(H):
    """``1 / diag(H^{-1})`` per coordinate (``(k, m, m)`` or ``(m, m)``): the curvature of one
    coordinate after the others are profiled out; ``nan`` where ``H`` is singular."""
    with np.errstate(all="ignore"):
        try:
            return 1.0 / np.diagonal(np.linalg.inv(H), axis1=-2, axis2=-1)
        except np.linalg.LinAlgError:
            return np.full(H.shape[:-1], np.nan)


def deshrunk_interval(theta, draws, phi, alpha=0.05):
    """``phi theta~ - [q_hi, q_lo]`` of ``phi theta* - theta~`` (scaled units; ``phi`` the
    matrix ``I + H^{-1} P``): ``_inference_logistic_sim.interval_from_draws``'s inversion,
    applied to any draws."""
    est = phi @ theta
    lo, hi = np.quantile(draws @ phi.T - theta, [alpha / 2, 1 - alpha / 2], axis=0)
    return np.column_stack([est - hi, est - lo])


def median_precision(Hpost):
    """The inverse of the elementwise posterior median of ``H^{-1}`` (symmetrised; ``pinv`` for
    the singular draws of the PSD fallback): a curvature point estimate from released values
    without the posterior mean's Jensen gap (the profiled curvature ``1 / (H^{-1})_jj`` is
    concave in ``H``, so the mean matrix overstates it)."""
    Hmed = np.linalg.pinv(np.median(np.linalg.pinv(Hpost, hermitian=True), axis=0))
    return (Hmed + Hmed.T) / 2


def _hull(a, b):
    return np.column_stack([np.minimum(a[:, 0], b[:, 0]), np.maximum(a[:, 1], b[:, 1])])


def library_and_candidates(m, n_boot=B, fixed=("posterior mean", "median precision")):
    """The library's interval replayed step by step (``_inference_logistic.bootstrap`` with
    the release seed; asserted equal to ``conf_int(method="linear")`` by the callers) and the
    candidate fixes, all from released values (scaled = user units, ``bounds_X = (-1, 1)``).
    Returns ``(posterior draws, {key: interval})`` with keys

    * ``library``: the default, basic interval of the posterior-mixture draws;
    * ``deshrunk, posterior mean``: the library's draws mapped by ``phi`` of the posterior mean;
    * ``deshrunk fixed, X`` (``X`` = ``posterior mean`` or ``median precision``, a fixed
      curvature point estimate, :func:`median_precision`): the de-shrunk interval of
      linearised draws at that fixed Hessian, with the library's normals, V and W (the
      generator state after the posterior draws: common random numbers);
    * ``hull: library and deshrunk fixed, X``: the hull of ``library`` and that interval (never
      narrower than the default).

    ``fixed`` limits the fixed point estimates computed (``share`` needs only the posterior
    mean: candidate (b)); the intervals computed do not depend on it (common random numbers).
    """
    from dpreg._random import release_seed  # noqa: PLC0415
    from dpreg.linear_model import _inference_logistic as il  # noqa: PLC0415
    from dpreg.linear_model._inference import basic_interval  # noqa: PLC0415

    rel, theta = m.inference_release_, m.theta_[0]
    P = il._penalty(m, len(theta))
    rng = np.random.default_rng(release_seed(*il.released_values(m, rel)))
    Hpost = il.feasible_hessian_draws(rel, n_boot, rng, True)
    state = rng.bit_generator.state
    centre, draws = il.linearised_draws(m, Hpost, rng)
    out = {"library": basic_interval(centre, draws, 0.05)}
    Hbar = Hpost.mean(axis=0)
    out["deshrunk, posterior mean"] = deshrunk_interval(
        theta, draws, np.eye(3) + np.linalg.solve(Hbar, P)
    )
    points = {"posterior mean": lambda: Hbar, "median precision": lambda: median_precision(Hpost)}
    for name in fixed:
        H = points[name]()
        if np.linalg.eigvalsh(H)[0] <= 0:  # nothing bounds the de-shrinking
            ci = np.column_stack([np.full(3, -np.inf), np.full(3, np.inf)])
        else:
            rng.bit_generator.state = state
            _, d = il.linearised_draws(m, np.broadcast_to(H, (n_boot, 3, 3)), rng)
            ci = deshrunk_interval(theta, d, np.eye(3) + np.linalg.solve(H, P))
        out[f"deshrunk fixed, {name}"] = ci
        out[f"hull: library and deshrunk fixed, {name}"] = _hull(out["library"], ci)
    return Hpost, out


def committed(n, reps, seed):
    """Library and hull on the committed stream of ``benchmarks.inference`` (seed ``2000 + i``
    for the i-th n: ``_inference_cells.logistic_releases``), per epsilon."""
    from ._inference_cells import logistic_releases  # noqa: PLC0415

    t = time.process_time()
    out = {}
    keys = ("library", HULL)
    for X, eps, m, _ in logistic_releases(n, reps, seed):
        ci = library_and_candidates(m)[1]
        o = out.setdefault(eps, {k: [] for k in ("est", "deshrunk", *keys)})
        o["est"].append(np.r_[m.intercept_, m.coef_.ravel()])
        o["deshrunk"].append(deshrunk(m, X))
        for k in keys:
            o[k].append(ci[k])
    print(f"n = {n}, {reps} data sets, seed {seed}: {time.process_time() - t:.0f} CPU-s")
    for eps, o in out.items():
        o = {_key(k): np.array(v) for k, v in o.items()}
        np.savez(RESULTS / f"inference_logistic_nc_committed_{n}_{eps:g}_{seed}.npz", **o)
        print(f"eps = {eps:g}")
        print(table(o["est"], o["deshrunk"], {k: o[_key(k)] for k in keys}))


def support(eps, reps, start=0, x1_low=-0.3, seed=41):
    """The user-side remedy: the same data sets with ``bounds_X`` = x1's support
    ``([x1_low, -1], [1, 1])``, so the scaled design is centred again; the library's interval
    (``method="linear"``) scored against the truth in the user's units. The de-shrunk oracle is
    computed in scaled units at the scaled truth (``_inference_cells.deshrunk``)."""
    from dpreg import BudgetAccountant  # noqa: PLC0415
    from dpreg.linear_model import _inference_logistic as il  # noqa: PLC0415

    lower, upper = np.array([x1_low, -1.0]), np.array([1.0, 1.0])
    mid, half = (upper + lower) / 2, (upper - lower) / 2
    scaled = np.r_[LOGIT_BETA[0] + LOGIT_BETA[1:] @ mid, LOGIT_BETA[1:] * half]
    ledger, share, t = BudgetAccountant(), il.hessian_share(N, eps), time.process_time()
    est, ds, ci = [], [], []
    for i in range(start, start + reps):
        m, X, y, _ = release(N, eps, seed, i, ledger, share, x1_low, (lower, upper))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ci.append(m.conf_int(method="linear"))
        est.append(np.r_[m.intercept_, m.coef_.ravel()])
        ds.append(deshrunk(m, X, truth=scaled))
    cpu = time.process_time() - t
    est, ds, ci = np.array(est), np.array(ds), np.array(ci)
    path = RESULTS / f"inference_logistic_nc_support_{eps:g}_{seed}_{start}_x1low{x1_low:g}.npz"
    np.savez(path, est=est, deshrunk=ds, library=ci)
    print(f"eps = {eps:g}, data sets {start}-{start + reps - 1}, bounds = support: {cpu:.0f} CPU-s")
    print(table(est, ds, {"library, bounds = support": ci}))


def decompose(eps, reps, start=0, x1_low=-0.3, seed=41, share=None):
    """The table of the module docstring on data sets ``start ...``; ``share`` overrides the
    library's ``hessian_share(n, eps)`` (the same data sets, other fits and releases)."""
    from dpreg import BudgetAccountant  # noqa: PLC0415
    from dpreg.linear_model import _inference_logistic as il  # noqa: PLC0415
    from dpreg.linear_model._inference import basic_interval  # noqa: PLC0415

    tag = "" if share is None else f"_share{share:g}"
    share = il.hessian_share(N, eps) if share is None else share
    ledger, t = BudgetAccountant(), time.process_time()
    cis = {k: [] for k in KEYS}
    est, ds, curv, shrink, above = [], [], [], [], []
    for i in range(start, start + reps):
        m, X, y, _ = release(N, eps, seed, i, ledger, share, x1_low)
        rel, theta = m.inference_release_, m.theta_[0]
        P = il._penalty(m, 3)
        Hpost, released = library_and_candidates(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            assert np.array_equal(released["library"], m.conf_int(method="linear"))
        H_fit, H0 = loss_hessian(X, theta), loss_hessian(X, LOGIT_BETA)
        drng = np.random.default_rng([seed, i, 1])  # the diagnosis's own draws
        fixed = {"true H at theta~": H_fit, "true H at theta0": H0, "posterior mean": Hpost.mean(0)}
        for key, H in fixed.items():
            c, d = il.linearised_draws(m, np.broadcast_to(H, (B, 3, 3)), drng)
            cis[f"basic, {key}"].append(basic_interval(c, d, 0.05))
            if key == "true H at theta0":
                phi0 = np.eye(3) + np.linalg.solve(H0, P)
                cis["deshrunk, true H at theta0"].append(deshrunk_interval(theta, d, phi0))
        for k, ci in released.items():
            cis[k].append(ci)
        s0 = _schur(H0)
        Hbar = Hpost.mean(axis=0)
        with warnings.catch_warnings():  # PSD-fallback draws can be singular (nan)
            warnings.simplefilter("ignore", RuntimeWarning)
            post = np.nanmedian(_schur(Hpost), 0)
        curv.append([s0, _schur(rel.hessian), _schur(Hbar), post])
        shrink.append([np.diag(np.linalg.solve(H, P)) for H in (H0, rel.hessian, Hbar)])
        above.append(np.mean(_schur(Hpost) > s0, axis=0))
        est.append(np.r_[m.intercept_, m.coef_.ravel()])
        ds.append(deshrunk(m, X))
    cpu = time.process_time() - t
    path = RESULTS / f"inference_logistic_nc_{eps:g}_{seed}_{start}_x1low{x1_low:g}{tag}.npz"
    arrays = {_key(k): np.array(v) for k, v in cis.items()}
    np.savez(
        path,
        est=np.array(est),
        deshrunk=np.array(ds),
        curvature=np.array(curv),
        shrinkage=np.array(shrink),
        above=np.array(above),
        **arrays,
    )
    print(
        f"eps = {eps:g}, data sets {start}-{start + reps - 1}, x1 ~ U[{x1_low:g}, 1], "
        f"Hessian share {share:g}: "
        f"{cpu:.0f} CPU-s"
    )
    print_table([path])


#: Candidate (b) of the module's table, the interval ``share`` scores against the default.
CANDIDATE = "deshrunk fixed, posterior mean"
#: The fresh streams of ``share`` (session 12, chosen before any run; not 41, 31 or 2000):
#: the non-centred design, the centred design at n = 1e3 and at n = 1e4.
SHARE_SEEDS = {(-0.3, 1000): 1201, (-1.0, 1000): 1202, (-1.0, 10000): 1203}


def _share_name(n, eps, seed, start, x1_low):
    return RESULTS / f"inference_logistic_share_{n}_{eps:g}_{seed}_{start}_x1low{x1_low:g}.npz"


def share_sweep(n, eps, reps, start, x1_low, shares, seed=None):
    """The default (``library``, ``method="linear"``) and candidate (b) (:data:`CANDIDATE`,
    the de-shrunk interval at the fixed posterior mean of H) at each Hessian share in
    ``shares`` (``"rule"`` = ``hessian_share(n, eps)``), on data sets ``start ...`` of the
    fresh stream ``seed`` (default ``SHARE_SEEDS[x1_low, n]``). Per data set the data are the
    same for every share (``release`` draws them first); the fit gets ``(1 - share) eps`` and
    the Hessian ``share eps``, so every interval spends exactly ``eps``. A fit with the whole
    ``eps`` on the same data (its own generator ``default_rng([seed, i, 2])``) gives the
    equal-budget oracle. The replayed library interval is asserted equal to
    ``conf_int(method="linear")`` on the first data set of every share (the replay is
    :func:`library_and_candidates`)."""
    from dpreg import BudgetAccountant, ObjectivePerturbationLogistic  # noqa: PLC0415
    from dpreg.linear_model import _inference_logistic as il  # noqa: PLC0415

    seed = SHARE_SEEDS[x1_low, n] if seed is None else seed
    values = [il.hessian_share(n, eps) if s == "rule" else float(s) for s in shares]
    values = list({f"{v:g}": v for v in values}.values())  # the rule's share may be listed
    ledger, t = BudgetAccountant(), time.process_time()
    out = {f"{k}_{v:g}": [] for v in values for k in ("est", "deshrunk", "library", "b")}
    out["full"] = []
    for i in range(start, start + reps):
        for v in values:
            m, X, y, _ = release(n, eps, seed, i, ledger, v, x1_low)
            ci = library_and_candidates(m, fixed=("posterior mean",))[1]
            if i == start:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    assert np.array_equal(ci["library"], m.conf_int(method="linear"))
            out[f"est_{v:g}"].append(np.r_[m.intercept_, m.coef_.ravel()])
            out[f"deshrunk_{v:g}"].append(deshrunk(m, X))
            out[f"library_{v:g}"].append(ci["library"])
            out[f"b_{v:g}"].append(ci[CANDIDATE])
        full = ObjectivePerturbationLogistic(
            epsilon=eps,
            bounds_X=(-1, 1),
            classes=[0, 1],
            random_state=np.random.default_rng([seed, i, 2]),
            accountant=ledger,
        ).fit(X, y)
        out["full"].append(np.r_[full.intercept_, full.coef_.ravel()])
    cpu = time.process_time() - t
    path = _share_name(n, eps, seed, start, x1_low)
    np.savez(path, rule=il.hessian_share(n, eps), **{k: np.array(v) for k, v in out.items()})
    print(
        f"n = {n}, eps = {eps:g}, x1 ~ U[{x1_low:g}, 1], seed {seed}, data sets "
        f"{start}-{start + reps - 1}, shares {values}: {cpu:.0f} CPU-s"
    )
    print(share_table([path]))


def _share_load(paths):
    parts = [np.load(p) for p in paths]
    rule = float(parts[0]["rule"])
    keys = [k for k in parts[0].files if k != "rule"]
    return rule, {k: np.concatenate([p[k] for p in parts]) for k in keys}


def _spread(a):
    lo, hi = np.quantile(a, [0.025, 0.975], axis=0)
    return hi - lo


def share_rows(paths):
    """One row per (share, interval, coordinate) of the concatenated ``share_sweep`` files:
    coverage and its Monte Carlo sd, mean width over (i) the released estimator's own spread
    at that share, (ii) the whole-eps fit's spread (the equal-budget oracle: the same for
    every share) and (iii) the de-shrunk oracle at that share, and over the default's mean
    width (the library at the rule's share, same data sets); ``own_over_full`` is the
    estimator's own spread at that share over the whole-eps fit's (what the share costs the
    estimate itself)."""
    from ._inference_cells import LOGIT_NAMES  # noqa: PLC0415

    rule, d = _share_load(paths)
    rule = f"{rule:g}"
    full = _spread(d["full"])
    default_w = d[f"library_{rule}"][:, :, 1] - d[f"library_{rule}"][:, :, 0]
    rows = []
    for share in sorted({k.split("_")[1] for k in d if k.startswith("est_")}, key=float):
        own, de = _spread(d[f"est_{share}"]), _spread(d[f"deshrunk_{share}"])
        for name, label in (("library", "library (default)"), ("b", "(b) " + CANDIDATE)):
            ci = d[f"{name}_{share}"]
            w = ci[:, :, 1] - ci[:, :, 0]
            hit = (ci[:, :, 0] <= LOGIT_BETA) & (LOGIT_BETA <= ci[:, :, 1])
            for j, param in enumerate(LOGIT_NAMES):
                c = hit[:, j].mean()
                rows.append(
                    dict(
                        share=float(share),
                        rule_share=share == rule,
                        interval=label,
                        param=param,
                        reps=len(ci),
                        coverage=c,
                        coverage_mc_sd=np.sqrt(c * (1 - c) / len(ci)),
                        width_over_own=w[:, j].mean() / own[j],
                        width_over_full=w[:, j].mean() / full[j],
                        width_over_deshrunk=w[:, j].mean() / de[j],
                        width_over_default=w[:, j].mean() / default_w[:, j].mean(),
                        own_over_full=own[j] / full[j],
                        infinite=int(np.sum(~np.isfinite(w[:, j]))),
                    )
                )
    return rows


def share_table(paths):
    rows = share_rows(paths)
    lines = [
        f"{rows[0]['reps']} data sets; widths are means over data sets",
        "| share | interval | coverage const / x1 / x2 (MC sd) | width / own | width / whole-eps "
        "| width / de-shrunk | width / default | own / whole-eps |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in range(0, len(rows), 3):
        g = rows[r : r + 3]

        def f(k, p=2, g=g):
            return " / ".join(f"{x[k]:.{p}f}" for x in g)

        sd = max(x["coverage_mc_sd"] for x in g)
        share = f"{g[0]['share']:g}" + (" (rule)" if g[0]["rule_share"] else "")
        lines.append(
            f"| {share} | {g[0]['interval']} | {f('coverage', 3)} ({sd:.3f}) "
            f"| {f('width_over_own')} | {f('width_over_full')} | {f('width_over_deshrunk')} "
            f"| {f('width_over_default')} | {f('own_over_full')} |"
        )
    return "\n".join(lines)


#: The cells of ``share-csv``: (n, epsilon, x1_low, seed): the brief of session 12 on the
#: streams of :data:`SHARE_SEEDS`, then the confirmation of the n * eps = 250 cell on two more
#: fresh streams (1211, 1212), run after the first results suggested the uncapped share.
SHARE_CELLS = (
    (1000, 0.25, -0.3, 1201),
    (1000, 1.0, -0.3, 1201),
    (1000, 0.25, -1.0, 1202),
    (1000, 1.0, -1.0, 1202),
    (1000, 4.0, -1.0, 1202),
    (10000, 0.25, -1.0, 1203),
    (10000, 1.0, -1.0, 1203),
    (1000, 0.25, -0.3, 1211),
    (1000, 0.25, -1.0, 1212),
)


def write_share_csv():
    """``benchmarks/results/inference_logistic_share.csv`` from every ``share`` array of the
    cells :data:`SHARE_CELLS` (chunks concatenated; a re-scoring, no fits)."""
    import pandas as pd  # noqa: PLC0415

    rows = []
    for n, eps, x1_low, seed in SHARE_CELLS:
        paths = sorted(RESULTS.glob(_share_name(n, eps, seed, "*", x1_low).name))
        design = "centred" if x1_low == -1 else f"x1 ~ U[{x1_low:g}, 1]"
        for r in share_rows(paths):
            rows.append(dict(design=design, n=n, epsilon=eps, seed=seed, **r))
    df = pd.DataFrame(rows)
    df.to_csv(RESULTS / "inference_logistic_share.csv", index=False, float_format="%.4f")
    print(df.round(3).to_string(index=False))


def _key(k):
    return k.replace(" ", "_").replace(",", "").replace(":", "")


def print_table(paths):
    parts = [np.load(p) for p in paths]
    cat = lambda k: np.concatenate([p[k] for p in parts])  # noqa: E731
    cis = {k: cat(_key(k)) for k in KEYS}
    print(table(cat("est"), cat("deshrunk"), cis))
    curv, shrink, above = cat("curvature"), cat("shrinkage"), cat("above")
    print("curvature after the other coordinates 1/(H^-1)_jj, median over data sets:")
    for k, name in enumerate(("true H0", "released H~", "posterior mean", "posterior draws")):
        print(f"  {name:16s} {np.round(np.nanmedian(curv[:, k], 0), 1)}")
    print("shrinkage (H^-1 P)_jj, median over data sets:")
    for k, name in enumerate(("true H0", "released H~", "posterior mean")):
        print(f"  {name:16s} {np.round(np.median(shrink[:, k], 0), 3)}")
    print(
        "share of posterior draws whose curvature exceeds the truth, mean",
        np.round(above.mean(0), 3),
    )


def _rows(design, eps, seed, est, ds, cis):
    """One row per interval and coordinate: coverage, mean width over the estimates' own
    spread and over the de-shrunk oracle's, z mean and sd (``_inference_logistic_sim.table``)."""
    from ._inference_cells import LOGIT_NAMES  # noqa: PLC0415

    def spread(a):
        lo, hi = np.quantile(a, [0.025, 0.975], axis=0)
        return hi - lo

    own, de = spread(est), spread(ds)
    rows = []
    for k, ci in cis.items():
        w = ci[:, :, 1] - ci[:, :, 0]
        hit = (ci[:, :, 0] <= LOGIT_BETA) & (LOGIT_BETA <= ci[:, :, 1])
        z = (LOGIT_BETA - ci.mean(axis=2)) / (w / 3.92)
        for j, name in enumerate(LOGIT_NAMES):
            rows.append(
                dict(
                    design=design,
                    n=N,
                    epsilon=eps,
                    seed=seed,
                    reps=len(est),
                    interval=k,
                    param=name,
                    coverage=hit[:, j].mean(),
                    width_ratio=w[:, j].mean() / own[j],
                    median_width_ratio=np.median(w[:, j]) / own[j],
                    width_ratio_deshrunk=w[:, j].mean() / de[j],
                    z_mean=z[:, j].mean(),
                    z_sd=z[:, j].std(),
                )
            )
    return rows


def write_csv():
    """``inference_logistic_nc.csv`` from the committed arrays of ``decompose`` (the
    non-centred design, seed 41, and the centred one, seed 31; the rule's Hessian share and
    0.3, 0.4), ``support`` and ``committed`` (no fits: a re-scoring)."""
    import pandas as pd  # noqa: PLC0415

    rows = []
    for x1_low, seed, design in ((-0.3, 41, "x1 ~ U[-0.3, 1]"), (-1, 31, "centred")):
        for eps in (0.25, 1):
            for share in ("", "_share0.3", "_share0.4"):  # the rule's share, then the others
                name = f"inference_logistic_nc_{eps:g}_{seed}_0_x1low{x1_low:g}{share}.npz"
                d = np.load(RESULTS / name)
                cis = {k: d[_key(k)] for k in KEYS}
                label = design + (f", Hessian share {share[6:]}" if share else "")
                rows += _rows(label, eps, seed, d["est"], d["deshrunk"], cis)
    for eps in (0.25, 1):
        d = np.load(RESULTS / f"inference_logistic_nc_support_{eps:g}_41_0_x1low-0.3.npz")
        cis = {"library, bounds_X = x1's support": d["library"]}
        rows += _rows("x1 ~ U[-0.3, 1]", eps, 41, d["est"], d["deshrunk"], cis)
    for eps in (0.25, 1, 4):
        d = np.load(RESULTS / f"inference_logistic_nc_committed_{N}_{eps:g}_2000.npz")
        cis = {k: d[_key(k)] for k in ("library", HULL)}
        rows += _rows("centred (committed stream)", eps, 2000, d["est"], d["deshrunk"], cis)
    df = pd.DataFrame(rows)
    df.to_csv(RESULTS / "inference_logistic_nc.csv", index=False, float_format="%.4f")
    print(df.round(3).to_string(index=False))


def main(argv):
    if argv[0] == "decompose":
        eps, reps, start = float(argv[1]), int(argv[2]), int(argv[3])
        x1_low = float(argv[4]) if len(argv) > 4 else -0.3
        seed = int(argv[5]) if len(argv) > 5 else 41
        share = float(argv[6]) if len(argv) > 6 else None
        decompose(eps, reps, start, x1_low, seed, share)
    elif argv[0] == "support":
        support(float(argv[1]), int(argv[2]), int(argv[3]))
    elif argv[0] == "committed":
        committed(int(argv[1]), int(argv[2]), int(argv[3]))
    elif argv[0] == "share":
        n, eps, reps, start = int(argv[1]), float(argv[2]), int(argv[3]), int(argv[4])
        seed = int(argv[7]) if len(argv) > 7 else None
        share_sweep(n, eps, reps, start, float(argv[5]), argv[6].split(","), seed)
    elif argv[0] == "share-table":
        print(share_table(argv[1:]))
    elif argv[0] == "share-csv":
        write_share_csv()
    elif argv[0] == "csv":
        write_csv()
    elif argv[0] == "table":
        print_table(argv[1:])
    else:
        raise SystemExit(f"unknown command {argv[0]!r}: decompose or table")


if __name__ == "__main__":
    main(sys.argv[1:])
