"""The simulated oracles of ``inference_kng.csv`` from more data sets (session 13).

The committed KNG table divides each mean width by the 2.5-97.5 % spread of the released
estimates over the cell's data sets (``oracle_width``) and of a whole-epsilon fit's on the same
data sets (``oracle_width_full``): 600 data sets at n = 1e3, 400 at n = 1e4
(``benchmarks._inference_kng_chunks``; at n = 1e3, epsilon = 0.25 only data sets 0-99 have
intervals, but all 600 have estimates). At n = 1e3, epsilon = 0.25 the law is a narrow core
plus a plateau over the parameter box (docs/inference.md, "The law at this cell"), so its 2.5
and 97.5 % quantiles sit where the density is low and 600 estimates place them badly.

* ``run replay N START STOP DIR``: the committed run's estimates of data sets ``START <= i <
  STOP`` of n (stream ``default_rng([4000 + N_GRID.index(N), i])``, fits and curvature
  releases in ``kng_cells``' order: ``_inference_cells.kng_estimates(..., curvature=True)``;
  its intervals draw nothing from the stream, so none are computed). Since session 16 the
  curvature release draws five linf coordinates instead of six (the public corner is not
  noised), so the stream after the first curvature release differs: the replay reproduces
  the committed estimates at epsilon = 0.25 (the first draw of each data set) and draws new
  ones of the same law at epsilon = 1 and 4, which ``rescore DIR`` refuses. ``rescore`` on
  the committed ``inference_kng_oracle_estimates.npz`` is unaffected;
* ``run extra N START STOP DIR``: estimate-only data sets from the stream of their own
  (``inference.KNG_ORACLE_SEEDS``, ``kng_estimates`` without curvature release);
* ``rescore DIR``: checks that the replayed estimates give the committed ``oracle_width`` and
  ``oracle_width_full`` (to 1e-9; it stops if not; on a table it wrote, that the pooled
  estimates give them, so a second rescore changes nothing), pools the extra estimates with them and
  rewrites ``inference_kng.csv``/``.png`` with the new ``oracle_width``, ``width_ratio``,
  ``oracle_width_full``, ``width_ratio_full`` and ``oracle_reps`` (every other column as
  committed: the intervals are not re-run). It prints per cell and parameter the bootstrap
  sd (``BOOT`` resamples of the data sets) of the committed and of the pooled oracle widths,
  and saves the estimates to ``inference_kng_oracle_estimates.npz`` (``rescore`` on that
  file instead of ``DIR`` needs no fit).
* ``noise N REPS``: the relative Monte Carlo sd of a ``REPS``-data-set oracle under the
  asymptotic law (:func:`asym_noise`), for the cells whose estimates were not replayed.

Each ``run`` writes one ``.npz`` per call into ``DIR`` (split a run into calls for a loaded
machine; one process at a time); ``rescore`` concatenates them in data-set order and refuses
gaps and overlaps. n = 1e5 is left alone: it has no simulated whole-epsilon oracle and its
reference there is the asymptotic law (the ``_asym`` columns).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from . import _inference_cells as cells_mod
from . import inference as inf
from ._common import save

RESULTS = Path(__file__).parent / "results"
#: data sets of the committed table per n (``benchmarks._inference_kng_chunks`` runs)
COMMITTED_REPS = {1000: 600, 10000: 400}
#: bootstrap resamples for the Monte Carlo sd of an oracle width
BOOT = 200
ESTIMATES = RESULTS / "inference_kng_oracle_estimates.npz"
KINDS = ("replay", "extra")


def seed_of(kind, n):
    """The stream seed of ``kind`` at n: the committed run's, or the estimate-only one's."""
    if kind == "replay":
        return 4000 + inf.N_GRID.index(n)
    return inf.KNG_ORACLE_SEEDS[n]


def run(kind, n, start, stop, out):
    """Estimates of data sets ``start <= i < stop`` of ``kind`` at n into ``out``."""
    t = time.process_time()
    est = cells_mod.kng_estimates(
        n, stop - start, seed_of(kind, n), start=start, curvature=kind == "replay"
    )
    arrays = {
        f"{key}_{eps:g}": v for eps, pair in est.items() for key, v in zip(("est", "full"), pair)
    }
    Path(out).mkdir(parents=True, exist_ok=True)
    np.savez(Path(out) / f"{kind}_{n}_{start:05d}_{stop:05d}.npz", **arrays)
    cpu = time.process_time() - t
    print(f"{kind} n={n} data sets {start}-{stop - 1}: cpu s {cpu:.1f}", flush=True)


def load(out, kind, n):
    """``{epsilon: (est, full)}`` of ``kind`` at n from the ``.npz`` files in ``out``, in
    data-set order from 0 (``None`` when there are none); gaps and overlaps are refused."""
    files = sorted(Path(out).glob(f"{kind}_{n}_*.npz"))
    if not files:
        return None
    spans = [tuple(int(v) for v in f.stem.split("_")[2:]) for f in files]
    ends = [0] + [b for _, b in spans[:-1]]
    if [a for a, _ in spans] != ends:
        raise SystemExit(f"{kind} n={n}: data sets {spans} do not follow each other from 0")
    data = [np.load(f) for f in files]
    return {
        eps: tuple(np.concatenate([d[f"{key}_{eps:g}"] for d in data]) for key in ("est", "full"))
        for eps in cells_mod.EPS_GRID
    }


#: the oracle width per parameter and its bootstrap sd (one helper, ``benchmarks.inference``)
spread, boot_sd = inf.oracle_spread, inf.oracle_spread_sd


def rescore(table, replay, extra, rng, tol=1e-9):
    """``(new table, report)``: ``table`` (the committed KNG table) with the n, epsilon rows
    of ``replay`` rescored against the oracles of ``replay`` pooled with ``extra`` (same keys;
    ``extra[n]`` may be ``None``).

    Refuses (SystemExit) unless the table's oracles are reproduced to ``tol`` (relative):
    by the replayed estimates alone when its ``oracle_reps`` is their number (the chunked
    run's table), by the pooled ones when it is the pooled number (a table this function
    wrote: rescoring it again changes nothing). ``report``: one row per cell and parameter
    with the replayed ("old") and pooled ("new") oracle widths, ratios and bootstrap sds
    (:func:`boot_sd`) and whether the cell meets coverage in [0.93, 0.97] and width <= 1.3x
    the oracle."""
    table = table.copy()
    report = []
    for n, by_eps in replay.items():
        for eps, (est, full) in by_eps.items():
            cell = (table.n == n) & (table.epsilon == eps)
            rows = table[cell].to_dict("records")
            more = extra.get(n)
            pooled = est if more is None else np.vstack([est, more[eps][0]])
            pooled_full = full if more is None else np.vstack([full, more[eps][1]])
            reps = {int(r["oracle_reps"]) for r in rows}
            ref = {len(est): (est, full), len(pooled): (pooled, pooled_full)}.get(reps.pop())
            if ref is None or reps:
                raise SystemExit(f"n={n}, eps={eps:g}: oracle_reps {rows[0]['oracle_reps']}")
            for key, got in zip(("oracle_width", "oracle_width_full"), map(spread, ref)):
                want = np.array([r[key] for r in rows])
                if not np.allclose(got, want, rtol=tol, atol=0.0):
                    raise SystemExit(f"n={n}, eps={eps:g}: replayed {key} {got} != {want}")
            old = {"": spread(est), "_full": spread(full)}
            new = inf.kng_pooled_oracles(rows, pooled, pooled_full)
            sd = [boot_sd(a, rng) for a in (est, pooled, full, pooled_full)]
            for j, r in enumerate(new):
                report.append(
                    dict(
                        n=n,
                        epsilon=eps,
                        param=r["param"],
                        reps=r["reps"],
                        coverage=r["coverage"],
                        old_reps=len(est),
                        new_reps=len(pooled),
                        old_oracle=old[""][j],
                        old_oracle_sd=sd[0][j],
                        new_oracle=r["oracle_width"],
                        new_oracle_sd=sd[1][j],
                        old_ratio=r["mean_width"] / old[""][j],
                        new_ratio=r["width_ratio"],
                        old_full=old["_full"][j],
                        old_full_sd=sd[2][j],
                        new_full=r["oracle_width_full"],
                        new_full_sd=sd[3][j],
                        old_ratio_full=r["mean_width"] / old["_full"][j],
                        new_ratio_full=r["width_ratio_full"],
                    )
                )
            pooled = ("oracle_reps", "oracle_width", "width_ratio")
            for col in pooled + ("oracle_width_full", "width_ratio_full"):
                table.loc[cell, col] = [r[col] for r in new]
    report = pd.DataFrame(report)
    band = report.coverage.between(0.93, 0.97)
    report["meets_old"] = band & (report.old_ratio <= 1.3)
    report["meets_new"] = band & (report.new_ratio <= 1.3)
    return table, report


def asym_noise(n, reps, draws=BOOT, seed=0, eps_grid=cells_mod.EPS_GRID):
    """``{epsilon: (rel_sd, rel_sd_full)}``: the relative Monte Carlo sd per parameter of a
    simulated oracle of ``reps`` data sets if the estimates followed the asymptotic law
    (``_inference_cells.kng_asymptotic`` of the released fit and of the whole-epsilon fit):
    the sd over ``draws`` samples of ``reps`` draws of their 2.5-97.5 % spread, over the
    spread of 200,000 draws. A yardstick where the law is close to asymptotic (n = 1e4, whose
    ratios to the asymptotic law are 0.99-1.01) without refitting the data sets; the public
    law ``(ball, scale)`` comes from one fit of data set 0 of the committed stream."""
    rng = np.random.default_rng(seed)
    out = {}
    for eps in eps_grid:
        _, _, _, _, model, _ = next(cells_mod.kng_releases(n, 1, seed_of("replay", n), [eps]))
        ball, scale = model.kng_release_.ball, model.kng_release_.scale
        res = []
        for sc in (scale, scale / (1.0 - cells_mod.KNG_SHARE)):
            ref = spread(cells_mod.kng_asymptotic(n, ball, sc, 200_000, rng))
            sample = [
                spread(cells_mod.kng_asymptotic(n, ball, sc, reps, rng)) for _ in range(draws)
            ]
            res.append(np.std(sample, axis=0, ddof=1) / ref)
        out[eps] = tuple(res)
    return out


def estimates_from(out):
    """``(replay, extra)``: ``{n: {epsilon: (est, full)}}`` from the run folder ``out`` or
    from a saved ``.npz`` (:data:`ESTIMATES`)."""
    replay, extra = {}, {}
    if Path(out).is_file():
        data = np.load(out)
        for n in COMMITTED_REPS:
            for kind, into in (("replay", replay), ("extra", extra)):
                keys = [
                    f"{kind}_{n}_{k}_{e:g}" for e in cells_mod.EPS_GRID for k in ("est", "full")
                ]
                if all(k in data for k in keys):
                    into[n] = {
                        e: (data[f"{kind}_{n}_est_{e:g}"], data[f"{kind}_{n}_full_{e:g}"])
                        for e in cells_mod.EPS_GRID
                    }
        return replay, extra
    for n, reps in COMMITTED_REPS.items():
        got = load(out, "replay", n)
        if got is None:
            continue
        if len(got[cells_mod.EPS_GRID[0]][0]) != reps:
            raise SystemExit(f"replay n={n}: {len(got[cells_mod.EPS_GRID[0]][0])} of {reps}")
        replay[n] = got
        extra[n] = load(out, "extra", n)
    return replay, extra


def save_estimates(replay, extra, path=ESTIMATES):
    arrays = {}
    for kind, by_n in (("replay", replay), ("extra", extra)):
        for n, by_eps in by_n.items():
            for eps, (est, full) in (by_eps or {}).items():
                arrays[f"{kind}_{n}_est_{eps:g}"] = est
                arrays[f"{kind}_{n}_full_{eps:g}"] = full
    np.savez_compressed(path, **arrays)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"] and len(argv) == 6 and argv[1] in KINDS:
        run(argv[1], int(argv[2]), int(argv[3]), int(argv[4]), argv[5])
    elif argv[:1] == ["noise"] and len(argv) == 3:
        n, reps = int(argv[1]), int(argv[2])
        for eps, (rel, full) in asym_noise(n, reps).items():
            print(
                f"n={n} eps={eps:g} {reps} data sets, relative sd of the oracle width "
                f"const/x1/x2: {' / '.join(f'{v:.3f}' for v in rel)}; "
                f"whole-eps: {' / '.join(f'{v:.3f}' for v in full)}"
            )
    elif argv[:1] == ["rescore"] and len(argv) == 2:
        replay, extra = estimates_from(argv[1])
        if not replay:
            raise SystemExit(f"no replayed estimates in {argv[1]}")
        committed = pd.read_csv(RESULTS / "inference_kng.csv")
        table, report = rescore(committed, replay, extra, np.random.default_rng(13))
        with pd.option_context("display.width", 250, "display.max_columns", 30):
            print(report.round(4).to_string(index=False))
        if not Path(argv[1]).is_file():
            save_estimates(replay, extra)
        fig = inf._figure(table)
        pooled = ", ".join(
            f"n={n:.0e}: {int(g.oracle_reps.max())}" for n, g in table.groupby("n") if n in replay
        )
        fig.suptitle(
            "KNG, default conf_int (n=1e3, eps=0.25 simulates on data sets 0-99, every other cell "
            f"linearised); simulated oracles from {pooled} data sets",
            fontsize=8,
        )
        save(table, "inference_kng", fig)
    else:
        raise SystemExit(
            "usage: run replay|extra N START STOP DIR | rescore DIR|FILE.npz | noise N REPS"
        )


if __name__ == "__main__":
    main()
