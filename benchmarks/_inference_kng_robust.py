"""Why ``KNGQuantileRegressor``'s default intervals under-cover on a non-centred design (issue
15; docs/inference.md, "A non-centred design: the plateau and the box").

The cell is session 11's (``benchmarks/_inference_robust.py kng``): n = 1e3, epsilon = 0.25,
``x1 ~ U[-0.3, 1]``, ``x2 ~ U[-1, 1]``, ``bounds_X = (-1, 1)`` (so the scaled parameters are the
user's), ``y = 1 + 2 x1 - x2 + N(0, 1)``, the fit at 0.6 epsilon and ``release_curvature`` at
0.4 epsilon, data set ``i`` drawn from ``default_rng([SEED, i])`` as in
``_inference_cells.kng_cells`` (:func:`releases` replays the very releases: ``conf_int`` draws
nothing from the stream, and the whole-epsilon fit comes after the releases).

A diagnosis: it reads the truth and the data. On the same releases and with the same
synthetic-fit seeds (the release's own seed, as the library's ``simulate``), the simulation
bootstrap's synthetic fits are run in several worlds (:data:`WORLDS`):

* ``exact``: the data set's own design, the true theta0 and the true N(0, 1) errors: the
  exact law of the pivot ``theta~ - theta0`` given the design (the interval's roots are
  ``theta* - theta0``), so its shortest interval covers 0.95 up to Monte Carlo error: the
  control;
* ``own_x``: the same world centred at the release ``theta~`` instead of theta0 (what the
  library does): the difference to ``exact`` is only where the world's truth sits in the
  public parameter box;
* ``true_g``: the library's synthetic design (``_inference_quantile.synthetic_data``) with the
  data set's own Gram matrix and the true sparsity sqrt(2 pi), centred at ``theta~``
  (``_inference_kng_sim``'s ``true`` variant);
* ``library``: the library's own synthetic fits (released ``G~`` and sparsity; ``conf_int``'s
  draws, ``_inference_kng_sim``'s ``simulate`` variant). Every run also stores session 11's
  default interval of the data set (``ci11``, from its chunks: :func:`library_intervals`);
  ``score`` checks that the replayed library draws give it.

The worlds are passed to the library's own refit loop (``_inference_quantile.simulate_from``,
with its seeds, throw-away ledger and law check) by swapping its data generator for the
duration of the call (:func:`world`); nothing else changes.

``run START STOP DIR [WORLDS] [IDS]``: the draws of the worlds (comma-separated, default
``exact,own_x,true_g``) per data set (``DIR/NNNN.npz``); ``IDS`` (a comma-separated list)
replaces ``START..STOP``. ``score DIR[,DIR2...] [NAME]`` (folders merged by data set): per
world and orientation (:func:`interval`) the coverage, the mean width, the share of draws on
the plateau (farther than ``PLATEAU`` from the world's truth along the design's weak
direction), split by whether the release itself is on the plateau, and where each release
sits in the box along that direction; with ``NAME`` writes ``benchmarks/results/NAME.csv``.
``far [CENTRED_DIR]``: how many releases lie on the plateau (:func:`far_releases`).
``centred CENTRED_DIR``: both orientations on the committed centred cell (:func:`centred`).
``edge``: theta~'s distance to the box edge along the released weak direction
(:func:`edge_distances`).
``remedy START STOP DIR``: the user-side remedy (session 12): the same cell and data sets with
public bounds that centre x1 (:data:`REMEDY_BOUNDS`), chunked into ``DIR``
(:func:`remedy_run`); ``remedy-score DIR [NAME [FILE]]`` (``NAME`` empty: no CSV): its
coverage and widths against five oracles, paired with session 11's intervals of the same
data sets (:func:`remedy_score`);
``remedy-oracle COUNT [FILE]``: both cells' released estimates of ``COUNT`` data sets for
the pooled oracle (:func:`remedy_oracle`; ``remedy-score`` reads ``FILE``, default
:data:`POOL`).
The CPU seconds of the run are printed.
"""

from __future__ import annotations

import contextlib
import pickle
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from dpreg._random import release_seed
from dpreg.linear_model import _inference_quantile as iq

from . import _inference_cells as cells_mod
from ._inference_kng_sim import N_SIM, _variant
from ._inference_kng_sim import release as kng_release
from ._inference_robust import POP_GRAM, X1_LOW, kng_chunk

N, EPS, SEED = 1000, 0.25, 15025
#: session 11's chunks of this cell (``_inference_robust kng 0.25 START 5 15025 DIR``)
CHUNKS = "/tmp/robust11/kng"
WORLDS = ("exact", "own_x", "true_g")
#: a draw (or release) is on the plateau when it is this far from the core's centre along the
#: weak direction (the core's sd there is about 0.6 with the true Gram matrix)
PLATEAU = 3.0
RESULTS = Path(__file__).parent / "results"
#: the user-side remedy (:func:`remedy_run`): public bounds of x1 at its support, so the scaled
#: x1 is U[-1, 1]; x2's bounds as before
REMEDY_BOUNDS = ((X1_LOW, -1.0), (1.0, 1.0))
#: data sets per chunk file of a remedy run (session 11's chunks of this cell held 5)
REMEDY_CHUNK = 5


def weak_direction():
    """The unit eigenvector of the population Gram matrix's smallest eigenvalue, signed so
    that its x1 component is positive (along it the intercept falls as x1 rises)."""
    lam, Q = np.linalg.eigh(POP_GRAM)
    v = Q[:, 0]
    return v * np.sign(v[1]), float(lam[0])


def box_reach(point, v, lo, hi):
    """How far ``point + t v`` stays in the box ``[lo, hi]``: ``(t_min, t_max)``."""
    with np.errstate(divide="ignore"):
        a, b = (lo - point) / v, (hi - point) / v
    t = np.where(np.isfinite(a), np.minimum(a, b), -np.inf)
    u = np.where(np.isfinite(b), np.maximum(a, b), np.inf)
    return float(t.max()), float(u.min())


def releases(ids, seed=SEED, n=N, eps=EPS, x1_low=X1_LOW, bounds_X=(-1, 1)):
    """Yield ``(i, X, y, model)``: data set ``i`` of ``kng_cells(..., x1_low=x1_low,
    bounds_X=bounds_X)`` with its fit and curvature release (``_inference_kng_sim.release``:
    the same draws, the stream consumed in the same order). ``x1_low = -1`` with ``seed = 4000
    + N_GRID.index(n)``: the committed centred cell's releases (``_inference_kng_sim run``)."""
    for i in ids:
        yield (i, *kng_release(n, eps, seed, i, x1_low, bounds_X))


@contextlib.contextmanager
def world(X, truth):
    """Within the block, ``simulate_from``'s synthetic data are the design ``X`` (user units)
    with ``y = truth_0 + X truth_1: + N(0, 1)`` (the cell's true error law), whatever Gram
    matrix and sparsity it is passed. ``bounds_X = (-1, 1)``: scaled = user units."""
    inner = iq.synthetic_data

    def exact_world(fit, gram, sparsity, rng, mirror=False):
        if not (np.all(fit.mid == 0.0) and np.all(fit.half == 1.0)):
            raise ValueError("the exact world assumes bounds_X = (-1, 1)")
        if mirror:  # the cells are at quantile 1/2, whose world is not mirrored
            raise ValueError("the exact world is the quantile-1/2 cells' world")
        return X, truth[0] + X @ truth[1:] + rng.standard_normal(len(X))

    iq.synthetic_data = exact_world
    try:
        yield
    finally:
        iq.synthetic_data = inner


def world_draws(model, X, name):
    """``(estimate, draws)`` of world ``name`` (the library's seed for this release)."""
    if name == "true_g":
        return _variant(model, X, "true")
    if name == "library":
        return _variant(model, X, "simulate")
    fit, rel = iq._release(model)
    rng = np.random.default_rng(release_seed(*iq.released_values(fit, rel)))
    truth = cells_mod.KNG_BETA if name == "exact" else np.asarray(fit.theta, float)
    d = len(fit.theta)
    with world(X, truth), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return iq.simulate_from(model, np.zeros((N_SIM, d, d)), np.ones(N_SIM), rng)


def load_chunks(folder=CHUNKS, eps=EPS):
    """The chunks of an ``_inference_robust kng`` (or :func:`remedy_run`) folder:
    ``((est, ci, full, law), chosen, ids)``, ``kng_cells``' cell, the method ``auto`` chose per
    interval and the data sets' numbers, in data-set order."""
    chunks, chosen, ids = [], [], []
    for p in sorted(Path(folder).glob(f"kng_{eps:g}_*.pkl")):
        with open(p, "rb") as f:
            cells, log = pickle.load(f)
        chunks.append(cells)
        chosen += log
        start = int(p.stem.rsplit("_", 1)[1])
        ids += range(start, start + len(cells[eps][0]))
    return cells_mod.concat_cells(chunks)[eps], chosen, np.array(ids)


def library_intervals(folder=CHUNKS, eps=EPS):
    """Session 11's default (``auto``) intervals and released estimates of this cell."""
    (est, ci, _, _), _, ids = load_chunks(folder, eps)
    if not np.array_equal(ids, np.arange(len(ids))):
        raise SystemExit(f"{folder}: data sets {ids}, not 0 .. {len(ids) - 1}")
    return est, ci


def run(ids, out, worlds=WORLDS):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    est11, ci11 = library_intervals()
    for i, X, _, model in releases(ids):
        t = time.process_time()
        est = np.r_[model.intercept_, model.coef_]
        if not np.array_equal(est, est11[i]):
            raise SystemExit(f"data set {i}: not session 11's release")
        fit, rel = iq._release(model)
        W = np.column_stack([np.ones(len(X)), X])
        res = dict(
            estimate=est,
            box=iq.box_ranges(fit),
            ci11=ci11[i],
            lam_true=np.linalg.eigvalsh(W.T @ W)[0],
            lam_released=np.linalg.eigvalsh(iq.public_gram(fit, rel.gram.hessian))[0],
            sparsity_released=2.0 * rel.radius / rel.level,
        )
        for name in worlds:
            res[name] = world_draws(model, X, name)[1]
        np.savez(out / f"{i:04d}.npz", **res)
        print(i, f"cpu s {time.process_time() - t:.1f}", flush=True)


def interval(name, est, draws, box, orientation="pivot", alpha=0.05):
    """The shortest interval of world ``name``'s draws (``conf_int``'s
    :func:`~dpreg.linear_model._inference_quantile.shortest_interval`).

    ``orientation="pivot"`` (the library's): ``[theta~ - u, theta~ - l]`` with ``[l, u]`` the
    shortest window of the roots ``theta* - theta~`` (in the exact world ``theta* - theta0``).
    ``"direct"``: ``[theta~ + l, theta~ + u]``, the shortest window of the draws themselves
    (the roots not reflected; session 10's "percentile" orientation)."""
    if name == "exact":
        draws = draws - cells_mod.KNG_BETA + est
    if orientation == "direct":
        draws = 2.0 * est - draws
    return iq.shortest_interval(est, draws, alpha, box)


def load(folders):
    """The per-data-set records of one or more run folders (comma-separated), merged by data
    set (each must hold the same release)."""
    merged = {}
    for folder in folders.split(","):
        for f in sorted(Path(folder).glob("*.npz")):
            d = dict(np.load(f))
            if d.get("library", np.empty(0)).shape == (3, 2):  # first runs: session 11's interval
                d["ci11"] = d.pop("library")
            have = merged.setdefault(int(f.stem), d)
            if have is not d:
                if not np.array_equal(have["estimate"], d["estimate"]):
                    raise SystemExit(f"{f}: another release")
                have.update(d)
    ids = sorted(merged)
    return ids, [merged[i] for i in ids]


#: (world, orientation) pairs scored; ``session11``: the data set's default interval as session
#: 11 stored it (every data set; ``library`` where the replayed draws are in the folders)
SCORED = (
    ("session11", "pivot"),
    ("library", "pivot"),
    ("library", "direct"),
    ("exact", "pivot"),
    ("own_x", "pivot"),
    ("own_x", "direct"),
    ("true_g", "pivot"),
    ("true_g", "direct"),
)


def score(folders, name=None):
    v, lam_pop = weak_direction()
    truth = cells_mod.KNG_BETA
    ids, data = load(folders)
    lo, hi = np.array([-7.0, -8.0, -8.0]), np.array([9.0, 8.0, 8.0])  # the fit's box
    est = np.array([d["estimate"] for d in data])
    t_rel = (est - truth) @ v  # the release's offset along the weak direction
    on_plateau = np.abs(t_rel) > PLATEAU
    lib = [d for d in data if "library" in d]  # replayed library draws: session 11's intervals?
    same = [
        np.allclose(interval("library", d["estimate"], d["library"], d["box"]), d["ci11"])
        for d in lib
    ]
    print(f"library draws reproduce session 11's intervals: {sum(same)} of {len(same)}")
    rows = []
    for w, orient in SCORED:
        have = np.array([w in d for d in data]) if w != "session11" else np.ones(len(data), bool)
        if not have.any():
            continue
        ci = np.full((len(data), 3, 2), np.nan)
        share = np.full(len(data), np.nan)
        for k, d in enumerate(data):
            if w == "session11":
                ci[k] = d["ci11"]
            elif have[k]:
                ci[k] = interval(w, d["estimate"], d[w], d["box"], orient)
                centre = truth if w == "exact" else d["estimate"]
                share[k] = np.mean(np.abs((d[w] - centre) @ v) > PLATEAU)
        subsets = (("all", have), ("plateau", have & on_plateau), ("core", have & ~on_plateau))
        cover = (ci[:, :, 0] <= truth) & (truth <= ci[:, :, 1])
        width = ci[:, :, 1] - ci[:, :, 0]
        for j, param in enumerate(cells_mod.KNG_NAMES):
            for subset, k in subsets:
                if not k.any():
                    continue
                rows.append(
                    dict(
                        world=w,
                        orientation=orient,
                        param=param,
                        releases=subset,
                        data_sets=int(k.sum()),
                        coverage=cover[k, j].mean(),
                        truth_below=(truth[j] < ci[k, j, 0]).mean(),
                        truth_above=(truth[j] > ci[k, j, 1]).mean(),
                        mean_width=width[k, j].mean(),
                        plateau_share_of_draws=share[k].mean(),
                    )
                )
    df = pd.DataFrame(rows)
    print(f"data sets {ids}")
    print(f"weak direction {np.round(v, 3)} (population eigenvalue {lam_pop:.3f} n)")
    reach0 = box_reach(truth, v, lo, hi)
    print(f"theta0's box reach along it: {reach0[0]:.2f} .. {reach0[1]:.2f}")
    for i, d, t in zip(ids, data, t_rel, strict=True):
        r = box_reach(d["estimate"], v, lo, hi)
        print(
            f"{i:4d} theta~ offset {t:+6.2f}, reach {r[0]:+6.2f} .. {r[1]:+6.2f}; "
            f"lambda_min true {float(d['lam_true']):.0f} released {float(d['lam_released']):.0f}; "
            f"s~ {float(d['sparsity_released']):.2f}"
        )
    print(f"releases on the plateau (|offset| > {PLATEAU:g}): {on_plateau.sum()} of {len(data)}")
    print(df.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    if name:
        df.to_csv(RESULTS / f"{name}.csv", index=False, float_format="%.6g")
    return df


def far_releases(centred=None):
    """How many released estimates lie farther than ``PLATEAU`` from the truth: session 11's
    60 releases of this cell (along the weak direction, and in their largest coordinate) and,
    given ``centred`` (a ``_inference_kng_sim run`` folder of the committed centred cell, e.g.
    ``/tmp/kngsim_main``), the centred design's releases (largest coordinate)."""
    v, _ = weak_direction()
    est, _ = library_intervals()
    err = est - cells_mod.KNG_BETA
    print(
        f"non-centred, {len(est)} releases: {np.sum(np.abs(err @ v) > PLATEAU)} farther than "
        f"{PLATEAU:g} along the weak direction, {np.sum(np.abs(err).max(1) > PLATEAU)} in their "
        "largest coordinate"
    )
    if centred:
        from ._inference_kng_sim import _load  # noqa: PLC0415

        data, _ = _load(centred, N, EPS)
        far = [np.abs(d["estimate"] - cells_mod.KNG_BETA).max() > PLATEAU for d in data]
        print(f"centred, {len(far)} releases: {sum(far)} farther in their largest coordinate")


def centred(folder, alpha=0.05):
    """The committed centred cell (n = 1e3, epsilon = 0.25) re-scored from its stored library
    draws (``_inference_kng_sim run`` folder, e.g. ``/tmp/kngsim_main``; no refits): coverage
    and mean width over the committed oracle (``benchmarks/results/inference_kng.csv``) of
    both orientations (:func:`interval`), and the mean share of the draws farther than
    ``PLATEAU`` from theta~ in some coordinate."""
    from ._inference_kng_sim import _load  # noqa: PLC0415

    ref = pd.read_csv(RESULTS / "inference_kng.csv")
    oracle = (
        ref[(ref.n == N) & (ref.epsilon == EPS)]
        .set_index("param")
        .loc[cells_mod.KNG_NAMES, "oracle_width"]
    )
    data, _ = _load(folder, N, EPS)
    truth = cells_mod.KNG_BETA
    for orient in ("pivot", "direct"):
        ci = np.array([interval("library", *d["simulate"], d["box"], orient) for d in data])
        cover = ((ci[:, :, 0] <= truth) & (truth <= ci[:, :, 1])).mean(0)
        ratio = (ci[:, :, 1] - ci[:, :, 0]).mean(0) / oracle.to_numpy()
        print(
            f"centred, {len(data)} data sets, {orient}: coverage {np.round(cover, 3)}, "
            f"width / oracle {np.round(ratio, 3)}"
        )
    far = [np.mean(np.abs(d["simulate"][1] - d["estimate"]).max(1) > PLATEAU) for d in data]
    print(
        f"library world's draws farther than {PLATEAU:g} in some coordinate: "
        f"mean {np.mean(far):.3f}"
    )


def edge_distances(n_centred=100):
    """A released-value signal, measured (no rule built on it): the distance from theta~ to the
    box edge along the released Gram matrix's smallest eigenvector (public corner restored),
    the nearer of the two sides, for session 11's 60 non-centred releases and the committed
    centred cell's first ``n_centred``, split by whether the release lies farther than
    ``PLATEAU`` from theta0 in some coordinate (a diagnosis: that split reads the truth)."""
    from .inference import N_GRID  # noqa: PLC0415

    lo, hi = np.array([-7.0, -8.0, -8.0]), np.array([9.0, 8.0, 8.0])  # the fit's box
    cases = (
        ("non-centred", range(60), SEED, X1_LOW),
        ("centred", range(n_centred), 4000 + N_GRID.index(N), -1.0),
    )
    for label, ids, seed, x1_low in cases:
        dist, far = [], []
        for _, _, _, model in releases(ids, seed, x1_low=x1_low):
            fit, rel = iq._release(model)
            u = np.linalg.eigh(iq.public_gram(fit, rel.gram.hessian))[1][:, 0]
            theta = np.r_[model.intercept_, model.coef_]
            t_min, t_max = box_reach(theta, u, lo, hi)
            dist.append(min(-t_min, t_max))
            far.append(np.abs(theta - cells_mod.KNG_BETA).max() > PLATEAU)
        dist, far = np.array(dist), np.array(far)
        print(
            f"{label}: far releases {far.sum()}, "
            f"their edge distances {np.round(np.sort(dist[far]), 2)}; "
            f"the other {(~far).sum()}: min {dist[~far].min():.2f}, "
            f"5 / 50 % quantiles {np.round(np.quantile(dist[~far], [0.05, 0.5]), 2)}"
        )


def remedy_run(start, stop, folder):
    """The user-side remedy on session 11's data sets ``start .. stop - 1`` (issue 15): the
    same cell (``_inference_robust.kng_chunk``: same stream ``SEED``, data, ``bounds_y``, budget
    split and ``conf_int(0.05, n_boot=1000)`` with ``method="auto"``, whole-epsilon fits) with
    the public feature bounds :data:`REMEDY_BOUNDS`; chunks of :data:`REMEDY_CHUNK` data sets
    pickled to ``folder`` with the method ``auto`` chose per interval."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    for first in range(start, stop, REMEDY_CHUNK):
        t = time.process_time()
        count = min(REMEDY_CHUNK, stop - first)
        path = kng_chunk(EPS, first, count, SEED, folder, bounds_X=REMEDY_BOUNDS)
        print(path, f"cpu s {time.process_time() - t:.1f}", flush=True)


def _to_user(bounds_X):
    """Scaled parameters (rows) to user units under public feature bounds ``bounds_X`` (the
    library's map, ``_inference_quantile._user_units``, given the public scaling only)."""
    lo, hi = (np.asarray(b, float) for b in bounds_X)
    scaling = SimpleNamespace(
        fit_intercept=True, active=np.arange(lo.size), mid=(lo + hi) / 2.0, half=(hi - lo) / 2.0
    )
    return lambda thetas: iq._user_units(scaling, thetas)


def scaled_pop_gram(bounds_X):
    """The population Gram matrix per row of the *scaled* design ``(1, (x - mid) / half)``
    under public feature bounds ``bounds_X`` (``x1 ~ U[X1_LOW, 1]``, ``x2 ~ U[-1, 1]``):
    ``T POP_GRAM T^T`` with the scaled row ``T (1, x1, x2)``. ``(-1, 1)``: ``POP_GRAM``;
    :data:`REMEDY_BOUNDS`: ``diag(1, 1/3, 1/3)``, the committed centred design's."""
    lo, hi = (np.asarray(b, float) for b in bounds_X)
    half, mid = (hi - lo) / 2.0, (hi + lo) / 2.0
    T = np.eye(3)
    T[1:, 0], T[1:, 1:] = -mid / half, np.diag(1.0 / half)
    return T @ POP_GRAM @ T.T


def remedy_rows(label, bounds_X, cell, chosen, ids, rng, pool=None, n_asym=200_000):
    """Scored rows (``benchmarks.inference.score``) of data sets ``ids`` of one cell
    (``load_chunks``): coverage with its Monte Carlo sd, where the truth falls outside, the
    mean width against the oracles of ``benchmarks.inference.kng_score``: the spread of
    this cell's released fits (``width_ratio``: few data sets, noisy; ``_pool``: of the
    released estimates ``pool`` of many data sets, :func:`remedy_oracle`), of its
    whole-epsilon fits (``_full``), and the asymptotic laws of both (``_asym``, ``_full_asym``:
    ``kng_asymptotic`` with the population Gram matrix of the *scaled* design, mapped to user
    units by :func:`_to_user`; with ``bounds_X = (-1, 1)`` that is ``POP_GRAM``, with
    :data:`REMEDY_BOUNDS` the centred ``diag(1, 1/3, 1/3)``). Also the methods ``auto`` chose
    and how many releases lie farther than ``PLATEAU`` from theta0 along the weak direction of
    the (user-unit) design (``plateau_releases``) and farther than ``PLATEAU`` from theta0 in
    some *scaled* coordinate (``far_scaled``; the committed centred cell: 3 of 100)."""
    from .inference import score, with_full_oracle  # noqa: PLC0415

    est, ci, full, (ball, scale) = cell
    est, ci, full, used = est[ids], ci[ids], full[ids], np.asarray(chosen)[ids]
    truth = cells_mod.KNG_BETA
    rows = score(N, EPS, est, ci, truth, cells_mod.KNG_NAMES, "kng")
    to_user = _to_user(bounds_X)
    to_scaled = lambda u: np.linalg.solve(to_user(np.eye(3)).T, u.T).T  # noqa: E731
    lo, hi = (np.asarray(b, float) for b in bounds_X)
    gram = N * scaled_pop_gram(bounds_X)
    full_scale = scale / (1.0 - cells_mod.KNG_SHARE)  # scale = epsilon / (2 Delta)
    refs = {"full": full} if pool is None else {"pool": pool, "full": full}
    for key, sc in (("asym", scale), ("full_asym", full_scale)):
        refs[key] = to_user(cells_mod.kng_asymptotic(N, ball, sc, n_asym, rng, gram=gram))
    for key, draws in refs.items():
        with_full_oracle(rows, draws, key)
    v, _ = weak_direction()
    methods = ",".join(f"{m}:{np.sum(used == m)}" for m in sorted(set(used)))
    for j, r in enumerate(rows):
        p = r["coverage"]
        r.update(
            interval=label,
            bounds_x1=f"({lo[0]:g}, {hi[0]:g})",
            design=f"x1~U[{X1_LOW:g},1]",
            seed=SEED,
            data_sets=f"{ids[0]}-{ids[-1]}",
            coverage_mc_sd=float(np.sqrt(0.05 * 0.95 / len(ids))),
            coverage_se_observed=float(np.sqrt(p * (1.0 - p) / len(ids))),
            truth_below=float((truth[j] < ci[:, j, 0]).mean()),
            truth_above=float((truth[j] > ci[:, j, 1]).mean()),
            methods=methods,
            plateau_releases=int(np.sum(np.abs((est - truth) @ v) > PLATEAU)),
            far_scaled=int(np.sum(np.abs(to_scaled(est - truth)).max(1) > PLATEAU)),
            oracle_reps_pool=0 if pool is None else len(pool),
        )
    cover = (ci[:, :, 0] <= truth) & (truth <= ci[:, :, 1])
    return rows, cover, np.abs((est - truth) @ v) > PLATEAU


#: the oracles of :func:`remedy_rows` (column suffixes)
ORACLES = ("", "_pool", "_full", "_asym", "_full_asym")
#: ``remedy_oracle``'s file: the released estimates of both bounds on many data sets
POOL = "/tmp/kngremedy/pool.npz"


def remedy_oracle(count, path=POOL):
    """The released estimates (fit and curvature release, no interval: :func:`releases`) of
    data sets ``0 .. count - 1`` under session 11's bounds (``s11``) and the remedy's
    (``remedy``), saved to ``path``: the pooled oracle of both cells (as the committed cell's
    600-data-set spread); the first data sets replay the coverage runs' releases
    (:func:`remedy_score` checks that)."""
    out = {}
    for key, bounds in (("s11", (-1, 1)), ("remedy", REMEDY_BOUNDS)):
        rows = releases(range(count), bounds_X=bounds)
        out[key] = np.array([np.r_[m.intercept_, m.coef_] for _, _, _, m in rows])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **out)


def remedy_score(folder, name=None, pool=POOL):
    """Score a :func:`remedy_run` folder against session 11's intervals of the *same* data sets
    (paired: the same data, other privacy draws; ``CHUNKS``) and print per data set which of
    the two covers; with ``name`` writes ``benchmarks/results/NAME.csv``."""
    cell, chosen, ids = load_chunks(folder)  # ids increasing (chunk files sorted by start)
    cell11, chosen11, ids11 = load_chunks(CHUNKS)
    if not np.array_equal(ids11, np.arange(len(ids11))):
        raise SystemExit(f"{CHUNKS}: data sets {ids11}")
    pooled = dict(np.load(pool)) if Path(pool).exists() else {}
    for key, c, at in (("s11", cell11, ids), ("remedy", cell, np.arange(len(ids)))):
        k = ids < len(pooled.get(key, []))
        if k.any() and not np.array_equal(pooled[key][ids[k]], c[0][at[k]]):
            raise SystemExit(f"{pool}: {key} does not replay the coverage run's releases")
        print(f"{pool}: {key} replays the run's releases of {k.sum()} data sets")
    print(f"pooled oracle: {len(pooled.get('s11', []))} data sets ({pool})")
    rng = np.random.default_rng(SEED + 10**6)
    at = np.arange(len(ids))  # the remedy cell holds only data sets ids, in order
    rows, cover, far = remedy_rows(
        "remedy", REMEDY_BOUNDS, cell, chosen, at, rng, pooled.get("remedy")
    )
    bounds11 = (-np.ones(2), np.ones(2))
    rows11, cover11, far11 = remedy_rows(
        "session 11", bounds11, cell11, chosen11, ids, rng, pooled.get("s11")
    )
    for r in rows:
        r["data_sets"] = ",".join(map(str, ids)) if len(ids) < 10 else f"{ids[0]}-{ids[-1]}"
    df = pd.DataFrame(rows11 + rows)
    keys = ["interval", "param", "reps", "coverage", "coverage_se_observed"]
    widths = ["mean_width", *(f"oracle_width{k}" for k in ORACLES)]
    widths += [f"width_ratio{k}" for k in ORACLES]
    more = ["truth_below", "truth_above", "methods", "plateau_releases", "far_scaled"]
    for cols in (keys + more, keys[:2] + [c for c in widths if c in df]):
        print(df[cols].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    mark = lambda c: "".join("+" if x else "-" for x in c)  # noqa: E731
    for k, i in enumerate(ids):
        print(
            f"{i:3d} session 11 {mark(cover11[k])}{' plateau' if far11[k] else '        '}  "
            f"remedy {mark(cover[k])}{' plateau' if far[k] else ''}"
        )
    both = [(cover11[:, j] & ~cover[:, j]).sum() for j in range(3)]
    gained = [(~cover11[:, j] & cover[:, j]).sum() for j in range(3)]
    print(f"paired: covered by session 11 only {both}, by the remedy only {gained}")
    if name:
        df.to_csv(RESULTS / f"{name}.csv", index=False, float_format="%.6g")
    return df


def main(argv):
    t = time.process_time()
    if argv[0] == "run":
        ids = range(int(argv[1]), int(argv[2]))
        worlds = argv[4].split(",") if len(argv) > 4 else WORLDS
        if len(argv) > 5:
            ids = [int(i) for i in argv[5].split(",")]
        run(ids, argv[3], worlds)
    elif argv[0] == "remedy":
        remedy_run(int(argv[1]), int(argv[2]), argv[3])
    elif argv[0] == "remedy-oracle":
        remedy_oracle(int(argv[1]), argv[2] if len(argv) > 2 else POOL)
    elif argv[0] == "remedy-score":
        remedy_score(argv[1], argv[2] if len(argv) > 2 else None, *argv[3:4])
    elif argv[0] == "far":
        far_releases(argv[1] if len(argv) > 1 else None)
    elif argv[0] == "edge":
        edge_distances()
    elif argv[0] == "centred":
        centred(argv[1])
    elif argv[0] == "score":
        score(argv[1], argv[2] if len(argv) > 2 else None)
    else:
        raise SystemExit(__doc__)
    print(f"{time.process_time() - t:.1f} CPU-s (this process)")


if __name__ == "__main__":
    main(sys.argv[1:])
