"""KNG simulated intervals at a quantile other than 1/2 (issue 15, session 13; a diagnosis).

Since session 13 the default simulated interval at tau = 1/2 is the synthetic draws' own
shortest window (``_inference_quantile.simulated_interval``); at tau != 1/2 it stays the
shortest interval of the pivot, because the world's law is not symmetric there
(docs/inference.md, "The direct orientation at tau = 1/2"). Replacing the errors e by -e maps
the quantile-tau gradient at delta to minus the quantile-(1 - tau) gradient at -delta, so the
analogue of the draws' own window at tau is the window of a *mirrored* world: the same
synthetic design and truth theta~, errors -e (their (1 - tau)-quantile is 0) and synthetic
fits at level 1 - tau. This module measures, at tau = ``TAU``, n = 1e3, epsilon = 0.25 (the
fit 0.15, the curvature 0.1, as in the cells), on the centred and the non-centred design
(``x1 ~ U[-0.3, 1]``, bounds (-1, 1)) of ``_inference_kng_robust``:

* ``pivot``: the shortest interval of the pivot of the unmirrored world's draws (the default
  of sessions 11-12; ``_inference_quantile.simulate(..., mirror=False)``, the same seeds);
* ``mirror``: the mirrored world's own shortest window at the released sparsity, the
  library's default of session 13 (the first world of ``conf_int``'s simulation; the
  non-centred rows were first measured with the same world built by swapping the library's
  synthetic data and level for the call, and the library reproduces those intervals exactly
  on data sets 0 and 1);
* ``default``: the library's ``conf_int`` since session 14: the hull of the windows of two
  mirrored worlds, at the released sparsity and at 1/``SPARSITY_SPAN`` of it
  (``_inference_quantile.world_sparsities``);
* ``true_s``: a diagnosis, not an interval anyone can compute: the mirrored world's window at
  the true sparsity ``1 / phi(Phi^-1(TAU))`` of the N(0, 1) errors (it reads the truth).

It reads the truth (coverage, ``true_s``) and nothing else of the data; the worlds use
released values.

``run DESIGN START STOP DIR [--tau T] [--default-only]``: per data set the intervals, the
released sparsity and the level (``DIR/DESIGN_NNNN.npz``; ``--tau`` another level than
``TAU``, to check the span where it was not chosen; ``--default-only`` skips ``pivot`` and
``true_s``, which cost two of the four worlds); ``score DIR [NAME]``: coverage and mean widths
per design of the kinds each run stored, against the truth at the stored level (``NAME``: CSV
in ``benchmarks/results``). ``cell DESIGN START STOP DIR [--tau T] [--n N] [--eps E]``:
the library's default interval alone (linearised where its check passes), the method it
took and the estimate, at any ``n`` and ``epsilon``; ``score-cells DIR... [--name NAME]``:
one table over such runs (one directory per cell). ``spans DESIGN START STOP DIR K1,K2,...``: how
the span was chosen: per data set the mirrored world's window at the released sparsity
divided by each ``K`` (``DIR/spans_DESIGN_NNNN.npz``, keys ``dK``), and ``score-spans DIR``
the coverage of each and of the hull with the released sparsity's window (``mirror`` of a
``run`` in the same ``DIR``). The CPU seconds are printed.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

from dpreg._random import release_seed
from dpreg.linear_model import _inference_quantile as iq

from . import _inference_cells as cells_mod

TAU = 0.25
N, EPS = 1000, 0.25
#: the designs: ``x1``'s lower end and the data sets' stream (non-centred: session 11's seed)
DESIGNS = {"centred": (-1.0, 4000), "noncentred": (-0.3, 15025)}
RESULTS = Path(__file__).parent / "results"
KINDS = ("pivot", "mirror", "default", "true_s")


def truth(tau):
    """The true quantile-``tau`` coefficients of y = 1 + 2 x1 - x2 + N(0, 1)."""
    return cells_mod.KNG_BETA + np.array([norm.ppf(tau), 0.0, 0.0])


def true_sparsity(tau):
    """The true sparsity of the N(0, 1) errors at their ``tau``-quantile (``true_s``)."""
    return 1.0 / norm.pdf(norm.ppf(tau))


TRUTH = truth(TAU)
TRUE_SPARSITY = true_sparsity(TAU)


def intervals(model, default_only=False):
    """The intervals of one release (module docstring), with the same seeds: ``default``
    (the library's ``conf_int``), ``mirror`` (its first world's window), ``pivot`` (the
    unmirrored world's pivot) and ``true_s`` (the mirrored world at the true sparsity of the
    model's level), with the estimate and the released sparsity; ``default_only``: the first
    two."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        default = model.conf_int()
    assert model._inference_cache[1][0] == "simulate", "the check did not fire"
    est, worlds = model._inference_cache[2]
    fit, rel = iq._release(model)
    box = iq.box_ranges(fit)
    seed = release_seed(*iq.released_values(fit, rel))
    out = dict(default=default, mirror=iq.simulated_interval(est, worlds[0], 0.05, box))
    if default_only:
        return est, iq.world_sparsities(fit, rel)[0], out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _, draws = iq.simulate(model, iq.DEFAULT_N_SIM, random_state=seed, mirror=False)
        out["pivot"] = iq.shortest_interval(est, draws, 0.05, box)
        _, draws = iq.simulate(
            model, iq.DEFAULT_N_SIM, random_state=seed, sparsity=true_sparsity(model.quantile)
        )
        out["true_s"] = iq.simulated_interval(est, draws, 0.05, box)
    return est, iq.world_sparsities(fit, rel)[0], out


def releases_of(design, start, stop, out, tau=TAU, n=N, eps=EPS):
    """The releases of data sets ``start..stop`` of ``design`` at ``tau``, ``n`` and ``eps``
    (``out`` created)."""
    x1_low, seed = DESIGNS[design]
    Path(out).mkdir(parents=True, exist_ok=True)
    return cells_mod.kng_releases(
        n, stop - start, seed, [eps], full_fits=False, start=start, x1_low=x1_low, quantile=tau
    )


def run(design, start, stop, out, tau=TAU, default_only=False):
    for i, _, _, _, model, _ in releases_of(design, start, stop, out, tau):
        t = time.process_time()
        est, s_hat, cis = intervals(model, default_only)
        np.savez(Path(out) / f"{design}_{i:04d}.npz", estimate=est, sparsity=s_hat, tau=tau, **cis)
        print(design, i, f"cpu s {time.process_time() - t:.1f}", flush=True)


def run_cell(design, start, stop, out, tau, n, eps):
    """The library's default interval alone, at any ``n`` and ``epsilon`` (``cell``
    subcommand): where the released check passes this is the linearised interval, which no
    other run measures at ``tau != 1/2``. Stores the method ``conf_int`` took."""
    for i, _, _, _, model, _ in releases_of(design, start, stop, out, tau, n, eps):
        t = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            default = model.conf_int()
        fit, rel = iq._release(model)
        np.savez(
            Path(out) / f"{design}_{i:04d}.npz",
            estimate=model._inference_cache[2][0],
            sparsity=iq.world_sparsities(fit, rel)[0],
            tau=tau,
            n=n,
            epsilon=eps,
            # the cache key: ("simulate", n_sim) or the linearised bootstrap's n_boot
            method="simulate" if isinstance(model._inference_cache[1], tuple) else "linear",
            default=default,
        )
        print(design, i, f"cpu s {time.process_time() - t:.1f}", flush=True)


def score_cells(dirs, name=None):
    """One row per parameter of each ``cell`` run directory (``n``, ``epsilon`` and the level
    read from its files): coverage with the misses on each side, the mean width, the
    2.5-97.5 % spread of the run's own estimates (an oracle with the Monte Carlo error of a
    few hundred estimates) and the width over it, and how many releases took each method."""
    rows = []
    for out in dirs:
        for design in DESIGNS:
            data = [dict(np.load(f)) for f in sorted(Path(out).glob(f"{design}_*.npz"))]
            if not data:
                continue
            (n, eps, tau), *rest = {
                (int(d["n"]), float(d["epsilon"]), float(d["tau"])) for d in data
            }
            if rest:
                raise ValueError(f"{out}: several cells in one directory; score them apart")
            beta = truth(tau)
            ci = np.array([d["default"] for d in data])
            est = np.array([d["estimate"] for d in data])
            lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
            methods = [str(d["method"]) for d in data]
            for j, param in enumerate(cells_mod.KNG_NAMES):
                stats = coverage_stats(ci, beta, j)
                rows.append(
                    dict(design=design, tau=tau, n=n, epsilon=eps, param=param,
                         data_sets=len(data), linear=methods.count("linear"), **stats,
                         estimate_spread=hi[j] - lo[j],
                         width_over_spread=stats["mean_width"] / (hi[j] - lo[j]))
                )  # fmt: skip
    return report(rows, name)


def coverage_stats(ci, beta, j):
    """Parameter ``j``'s coverage of ``beta`` by the intervals ``ci`` (data sets, params, 2),
    the misses on each side (``below``: the interval above the truth) and the mean width."""
    lo, hi = ci[:, j, 0], ci[:, j, 1]
    return dict(
        coverage=np.mean((lo <= beta[j]) & (beta[j] <= hi)),
        below=np.mean(beta[j] < lo),
        above=np.mean(beta[j] > hi),
        mean_width=np.mean(hi - lo),
    )


def report(rows, name=None):
    """The rows as a printed table, and as ``benchmarks/results/NAME.csv`` when named."""
    df = pd.DataFrame(rows)
    print(df.to_string(index=False))
    if name:
        df.to_csv(RESULTS / f"{name}.csv", index=False)
    return df


def spans(design, start, stop, out, divisors):
    """The span's measurement (module docstring): windows at ``s^ / K`` per data set."""
    for i, _, _, _, model, _ in releases_of(design, start, stop, out):
        t = time.process_time()
        fit, rel = iq._release(model)
        s_hat = iq.world_sparsities(fit, rel)[0]
        seed_i = release_seed(*iq.released_values(fit, rel))
        cis = {}
        for k in divisors:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                est, draws = iq.simulate(model, random_state=seed_i, sparsity=s_hat / k)
            cis[f"d{k:g}"] = iq.simulated_interval(est, draws, 0.05, iq.box_ranges(fit))
        np.savez(Path(out) / f"spans_{design}_{i:04d}.npz", **cis)
        print(design, i, f"cpu s {time.process_time() - t:.1f}", flush=True)


def score_spans(out):
    """Coverage and mean width of each ``s^ / K`` window alone and of its hull with the
    released sparsity's window (``mirror``), on the data sets that have both."""
    rows = []
    for design in DESIGNS:
        files = sorted(Path(out).glob(f"spans_{design}_*.npz"))
        pairs = [(dict(np.load(f)), Path(out) / f.name.removeprefix("spans_")) for f in files]
        pairs = [(d, dict(np.load(g))) for d, g in pairs if g.exists()]
        if not pairs:
            continue
        for key in [k for k in pairs[0][0] if k.startswith("d")]:
            for kind in ("alone", "hull"):
                ci = np.array([d[key] for d, _ in pairs])
                if kind == "hull":
                    base = np.array([r["mirror"] for _, r in pairs])
                    ci = np.stack([np.minimum(ci[..., 0], base[..., 0]),
                                   np.maximum(ci[..., 1], base[..., 1])], axis=-1)  # fmt: skip
                cover = ((ci[:, :, 0] <= TRUTH) & (TRUTH <= ci[:, :, 1])).mean(axis=0)
                width = (ci[..., 1] - ci[..., 0]).mean(axis=0)
                row = dict(design=design, span=key, kind=kind, data_sets=len(pairs))
                for j, p in enumerate(cells_mod.KNG_NAMES):
                    row[f"coverage_{p}"], row[f"width_{p}"] = cover[j], width[j]
                rows.append(row)
    df = pd.DataFrame(rows)
    print(df.round(3).to_string(index=False))
    return df


def score(out, name=None):
    rows = []
    for design in DESIGNS:
        files = sorted(Path(out).glob(f"{design}_*.npz"))
        if not files:
            continue
        data = [dict(np.load(f)) for f in files]
        # runs before the level was stored are at TAU
        taus = {float(d.get("tau", TAU)) for d in data}
        if len(taus) > 1:
            raise ValueError(f"{out}: runs at several levels {sorted(taus)}; score them apart")
        (tau,) = taus
        beta = truth(tau)
        for kind in [k for k in KINDS if all(k in d for d in data)]:
            ci = np.array([d[kind] for d in data])
            for j, param in enumerate(cells_mod.KNG_NAMES):
                rows.append(
                    dict(design=design, interval=kind, param=param, tau=tau,
                         data_sets=len(data), **coverage_stats(ci, beta, j))
                )  # fmt: skip
        s_hat = np.array([d["sparsity"] for d in data]) / true_sparsity(tau)
        print(design, "released / true sparsity, quantiles 0 / 0.5 / 1:",
              np.round(np.quantile(s_hat, [0, 0.5, 1]), 2))  # fmt: skip
    return report(rows, name)


def main(argv):
    t = time.process_time()
    if argv[0] == "run":
        tau = float(argv[argv.index("--tau") + 1]) if "--tau" in argv else TAU
        run(argv[1], int(argv[2]), int(argv[3]), argv[4], tau, "--default-only" in argv)
    elif argv[0] == "cell":
        opt = dict(zip(argv[5::2], argv[6::2], strict=True))
        run_cell(argv[1], int(argv[2]), int(argv[3]), argv[4], float(opt.get("--tau", TAU)),
                 int(opt.get("--n", N)), float(opt.get("--eps", EPS)))  # fmt: skip
    elif argv[0] == "score-cells":
        name = argv[argv.index("--name") + 1] if "--name" in argv else None
        score_cells([a for a in argv[1:] if a != "--name" and a != name], name)
    elif argv[0] == "score":
        score(argv[1], argv[2] if len(argv) > 2 else None)
    elif argv[0] == "spans":
        divisors = [float(k) for k in argv[5].split(",")]
        spans(argv[1], int(argv[2]), int(argv[3]), argv[4], divisors)
    elif argv[0] == "score-spans":
        score_spans(argv[1])
    else:
        raise SystemExit(__doc__)
    print(f"{time.process_time() - t:.1f} CPU-s (this process)")


if __name__ == "__main__":
    main(sys.argv[1:])
