"""The KNG cells of ``benchmarks.inference`` in chunks of data sets (for a loaded machine).

``run N START STOP DIR`` computes data sets ``START <= i < STOP`` of the n = N cells (the same
seeds as ``python -m benchmarks.inference --estimators kng``: data set ``i`` of n has the
stream ``default_rng([4000 + N_GRID.index(n), i])``), one pickle per data set, so several
processes can share the work and a run stopped early keeps what it finished. ``merge DIR``
scores every finished data set (``kng_score``) and writes ``inference_kng.csv``/``.png``
(``merge DIR NAME``: ``NAME.csv``/``.png``, for a partial run); when the chunks hold data
sets ``0..reps-1`` of every n, the result is the command's. Each row also gets
``coverage_mc_sd = sqrt(0.05 * 0.95 / reps)``, the Monte Carlo sd of the coverage of a
correct 95 % interval over ``reps`` data sets (the yardstick for a distance from 0.95).

Run: ``python -m benchmarks._inference_kng_chunks run 100000 0 50 /tmp/kng`` (one process per
chunk; a sixth argument such as ``4`` or ``0.25,1`` runs only those epsilons on the same
data sets, with the command's privacy draws only for a leading part of the grid), then
``python -m benchmarks._inference_kng_chunks merge /tmp/kng``. ``merge`` also takes several
folders joined by commas (``merge /tmp/a,/tmp/b``) and scores each epsilon on the data sets
that hold it: the epsilons of one n may then come from different runs and have different
numbers of data sets (each row's ``reps`` says how many).
"""

from __future__ import annotations

import pickle
import sys
import time
from pathlib import Path

from . import _inference_cells as cells_mod
from . import inference as inf
from ._common import results_dir, save


def run(n, start, stop, out, eps_grid=cells_mod.EPS_GRID):
    seed = 4000 + inf.N_GRID.index(n)
    folder = Path(out) / str(n)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(start, stop):
        t = time.process_time()
        cells = cells_mod.kng_cells(
            n, 1, 1000, seed, eps_grid=eps_grid, full_fits=n < 100_000, start=i
        )
        with open(folder / f"{i:04d}.pkl", "wb") as fh:
            pickle.dump(cells, fh)
        print(i, f"cpu s {time.process_time() - t:.1f}", flush=True)


def _ranges(ids):
    """``[0, 1, 2, 5, 6]`` -> ``"0-2, 5-6"``."""
    runs, first = [], ids[0]
    for a, b in zip(ids, ids[1:] + [None]):
        if b != a + 1:
            runs.append(f"{first}-{a}" if a != first else str(a))
            first = b
    return ", ".join(runs)


def _load(dirs, n):
    """``{epsilon: {data set: cells}}`` of n from the chunk folders ``dirs``: a data set's
    epsilons may come from several folders (e.g. a run of ``0.25,1`` and one of ``4``), but
    one (data set, epsilon) from two folders is refused (it would be counted twice)."""
    by_eps = {}
    for d in dirs:
        for f in sorted((Path(d) / str(n)).glob("*.pkl")):
            with open(f, "rb") as fh:
                cells = pickle.load(fh)
            for eps, cell in cells.items():
                if int(f.stem) in by_eps.setdefault(eps, {}):
                    raise SystemExit(f"n={n}, epsilon={eps}: data set {f.stem} twice ({d})")
                by_eps[eps][int(f.stem)] = {eps: cell}
    return by_eps


def merged_rows(dirs, sparsity=cells_mod.NORMAL_SPARSITY):
    """Scored rows of every finished data set in the chunk folders ``dirs`` per n and epsilon
    (``kng_score``; ``sparsity``: the errors', for the asymptotic oracles), each with
    ``coverage_mc_sd``; the epsilons in the grid's order, as the command scores them (the
    asymptotic oracle's draws of an n share one stream)."""
    rows = []
    for n in inf.N_GRID:
        by_eps = _load(dirs, n)
        if not by_eps:
            continue
        seed = 4000 + inf.N_GRID.index(n)
        cells = {}
        for eps in sorted(by_eps):
            ids = sorted(by_eps[eps])
            print(f"n={n}, epsilon={eps:g}: {len(ids)} data sets, {_ranges(ids)}")
            cells.update(cells_mod.concat_cells([by_eps[eps][i] for i in ids]))
        rows += inf.kng_score(n, cells, seed, sparsity=sparsity)
    for r in rows:
        r["coverage_mc_sd"] = (0.05 * 0.95 / r["reps"]) ** 0.5
    return rows


def merge(out, name="inference_kng"):
    """Score the chunks in ``out`` (one folder, or several joined by commas,
    :func:`merged_rows`) and write ``NAME.csv``/``.png``; a single folder gives what it gave
    before."""
    return inf.kng_frame(merged_rows(out.split(",")), name=name)


def splice(*sources, name="inference_kng"):
    """Replace the rows of ``results/NAME.csv`` whose (n, epsilon, param) a source table
    (``results/SOURCE.csv``, e.g. a later ``merge DIR SOURCE`` of some n) holds by the
    source's rows, keep the table's ``interval`` column (what ``method="auto"`` gives in the
    cell, which a re-run does not change), and redraw ``NAME.png``. Session 17 spliced the
    current library's n = 1e3 (session 16) and n = 1e4 (session 17) rows into the committed
    table this way."""
    import pandas as pd  # noqa: PLC0415

    key = ["n", "epsilon", "param"]
    table = pd.read_csv(results_dir() / f"{name}.csv")
    for source in sources:
        new = pd.read_csv(results_dir() / f"{source}.csv")
        new = new.merge(table[key + ["interval"]], on=key, how="left")
        kept = table.merge(new[key], on=key, how="left", indicator=True)._merge == "left_only"
        new = new.reindex(columns=table.columns)  # n = 1e5 runs have no whole-epsilon fits
        table = pd.concat([table[kept.to_numpy()], new], ignore_index=True)
    table = table.sort_values(key, kind="stable").reset_index(drop=True)
    print(inf.summary(table))
    save(table, name, inf._figure(table))
    return table


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:  # optional 6th argument: a comma-separated subset of epsilons
        grid = [float(e) for e in argv[5].split(",")] if len(argv) > 5 else cells_mod.EPS_GRID
        run(int(argv[1]), int(argv[2]), int(argv[3]), argv[4], grid)
    elif argv[:1] == ["merge"]:
        merge(*argv[1:3])
    elif argv[:1] == ["splice"]:
        splice(*argv[1:])
    else:
        raise SystemExit(
            "usage: run N START STOP DIR [EPS,...] | merge DIR[,DIR...] [NAME]"
            " | splice SOURCE [SOURCE...]"
        )


if __name__ == "__main__":
    main()
