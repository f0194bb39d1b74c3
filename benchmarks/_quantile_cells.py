"""Capped timing cells for :mod:`benchmarks.quantile`: one fit per child process.

Why a child process per fit: sklearn's ``QuantileRegressor(solver="highs")`` solves an LP with
``2n + 2p`` variables and its time grows much faster than ``n`` (CPU s at d = 2 on this
machine: 4.3 at n = 1e4); at n = 1e6 it does not finish in any useful time, and that is
what hung the uncapped ``timing`` run (three HiGHS fits at n = 1e6 in one process). A thread
cannot be interrupted inside HiGHS or numpy, a process can. The cap is in CPU seconds of the
timed fit (the machine is shared, so wall time says little): after its warm-up the child sets
``RLIMIT_CPU`` to what it has used plus ``cap``, and the kernel ends it with ``SIGXCPU`` when
the fit reaches ``cap`` CPU seconds; the row then says ``"timeout"`` (the fit needs more than
``cap`` CPU seconds). A wall backstop of ``WALL_FACTOR * cap`` (plus start-up) kills a child
that gets too little CPU to reach its limit (``"timeout (wall)"``: a lower bound is then not
known).

Every cell uses the same design (the ``timing`` design of earlier sessions, so numbers stay
comparable): ``rng = default_rng(5)``, ``X ~ U(-1, 1)^(d-1)``,
``y = X beta + N(0, 1)`` with ``beta = (1, -1, 0.5, 0.3)[:d-1]``, tau = 1/2, epsilon = 1,
``bounds_X = (-1, 1)``, ``bounds_y = (-6, 6)``. ``d`` counts parameters (intercept included).
Methods:

* ``"kng"``: ``KNGQuantileRegressor`` with its default (exact) sampler and linf norm;
* ``"op"``: ``ObjectivePerturbationQuantileRegressor`` (exact epsilon-DP, any d);
* ``"highs"``: sklearn ``QuantileRegressor(quantile=0.5, alpha=0, solver="highs")``.

A KNG cell whose ``n`` exceeds the public ``MAX_EXACT_ROWS[d]`` is not run: the estimator
refuses it before spending, and the row says ``"refused"``. Children run with one BLAS/OpenMP
thread (the machine is shared; CPU seconds are then the comparable measure) and at most
``MEMORY_GIB`` of address space. Each child first fits the same method on 200 rows of the same
design (not timed), so import and first-call costs are not billed to the timed fit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np

MEMORY_GIB = 4
WALL_FACTOR = 8  # wall backstop: the machine runs 4-10x slower than alone under load
METHODS = ("kng", "op", "highs")
BETA = np.array([1.0, -1.0, 0.5, 0.3])


def cell_data(d, n):
    """The shared design (see the module docstring)."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(n, d - 1))
    y = X @ BETA[: d - 1] + rng.standard_normal(n)
    return X, y


def _fit(method, X, y, rep):
    """One fit; returns the method's diagnostics (a dict, empty for the non-KNG methods)."""
    from sklearn.linear_model import QuantileRegressor

    from dpreg import KNGQuantileRegressor, ObjectivePerturbationQuantileRegressor

    common = dict(quantile=0.5, epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-6, 6), random_state=rep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "kng":
            info = KNGQuantileRegressor(**common, diagnostics=True).fit(X, y).sampler_diagnostics_
            return {
                k: info[k]
                for k in ("n_boxes", "n_proposals", "acceptance_bound", "n_refine_rounds")
            }
        if method == "op":
            ObjectivePerturbationQuantileRegressor(**common).fit(X, y)
        elif method == "highs":
            QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs").fit(X, y)
        else:
            raise ValueError(f"unknown method {method!r}")
    return {}


def fit_cell(method, d, n, rep, cap=None):
    """Child side: warm up on 200 rows, then time one fit (wall and CPU seconds) that may use
    at most ``cap`` CPU seconds (rounded up to whole seconds by ``RLIMIT_CPU``)."""
    import resource

    Xw, yw = cell_data(d, 200)
    _fit(method, Xw, yw, rep)
    X, y = cell_data(d, n)
    if cap is not None:  # the fit may use ``cap`` more CPU seconds, then SIGXCPU ends it
        used = resource.getrusage(resource.RUSAGE_SELF)
        limit = int(np.ceil(used.ru_utime + used.ru_stime + cap))
        resource.setrlimit(resource.RLIMIT_CPU, (limit, resource.RLIM_INFINITY))
    w0, c0 = time.perf_counter(), time.process_time()
    info = _fit(method, X, y, rep)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return dict(status="ok", cpu_seconds=cpu, wall_seconds=wall, peak_rss_mb=rss, **info)


def _child_setup():
    import resource

    limit = MEMORY_GIB << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def refused(method, d, n):
    """True when the estimator refuses the cell from public inputs (no process is started)."""
    if method != "kng":
        return False
    from dpreg.linear_model.quantile import MAX_EXACT_ROWS

    limit = MAX_EXACT_ROWS.get(d)
    return limit is not None and n > limit


def run_cell(method, d, n, rep, cap):
    """Parent side: one fit in a child process, at most ``cap`` CPU seconds for the fit.

    Returns a row with ``status`` in ``"ok"``, ``"refused"``, ``"timeout"`` (over ``cap`` CPU
    seconds), ``"timeout (wall)"`` (the backstop) or ``"error: ..."`` (e.g. the child went over
    its memory limit)."""
    row = dict(method=method, d=d, n=n, rep=rep, cap=cap)
    if refused(method, d, n):
        return {**row, "status": "refused"}
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    args = [method, str(d), str(n), str(rep), str(cap)]
    cmd = [sys.executable, "-m", "benchmarks._quantile_cells", *args]
    w0 = time.perf_counter()
    try:
        out = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=WALL_FACTOR * cap + 60.0,
            check=True,
            env=env,
            preexec_fn=_child_setup,
        )
        row.update(json.loads(out.stdout.strip().splitlines()[-1]))
    except subprocess.TimeoutExpired:  # subprocess.run kills the child before raising
        row.update(status="timeout (wall)")
    except subprocess.CalledProcessError as err:
        if err.returncode == -signal.SIGXCPU:
            row.update(status="timeout")
            return {**row, "process_wall_seconds": time.perf_counter() - w0}
        tail = (err.stderr or "").strip().splitlines()[-1:] or ["no stderr"]
        row.update(status="error: " + tail[0][:160])
    row["process_wall_seconds"] = time.perf_counter() - w0
    return row


if __name__ == "__main__":
    m, d_, n_, r_, cap_ = sys.argv[1:6]
    print(json.dumps(fit_cell(m, int(d_), int(n_), int(r_), float(cap_))))
