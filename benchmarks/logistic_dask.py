"""ObjectivePerturbationLogistic on a dask array: passes, time, and agreement with numpy.

Data: X uniform on [-1, 1]^p (p = 10), binary labels from a logistic model, persisted in
memory as a dask array in row chunks; public bounds (-1, 1), classes [0, 1], epsilon = 1.
For the same ``random_state`` the in-memory fit and the dask fit are compared by the largest
difference of the released ``theta_`` in units of the release grid (both points pass the
same certificate; that certificate allows ``2 tol / mu``, also reported in grid units).

Passes are counted with a dask callback (one per ``dask.compute``): one validation pass
before the spend, one for the warm-start subsample, then one per Newton iteration (a pass
returns the gradient and the Hessian together) plus any rejected line-search trial. The
time of one bare gradient+Hessian pass is measured alone for reference.

Run: ``python -m benchmarks.logistic_dask [--quick]``.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from dpreg import ObjectivePerturbationLogistic
from dpreg.noise._grid import grid_exponent

from ._common import cli_parser, save


def _data(n, p, chunk, seed=0):
    import dask.array as da  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, p))
    beta = np.linspace(-1.5, 1.5, p)
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(0.3 + X @ beta)))).astype(np.int64)
    Xd = da.from_array(X, chunks=(chunk, p)).persist()
    yd = da.from_array(y, chunks=chunk).persist()
    return X, y, Xd, yd


class _Counter:
    """Counts ``dask.compute`` calls (each is one read of the persisted data)."""

    def __enter__(self):
        from dask.callbacks import Callback  # noqa: PLC0415

        outer = self
        self.n = 0

        class _CB(Callback):
            def _start(self, dsk):
                outer.n += 1

        self._cb = _CB()
        self._cb.__enter__()
        return self

    def __exit__(self, *exc):
        self._cb.__exit__(*exc)


def _bare_pass(Xd, yd):
    """One gradient+Hessian pass at a fixed theta, as the dask solver does per iteration."""
    from dpreg.linear_model._dask_logistic import DaskBinaryProblem  # noqa: PLC0415

    p = Xd.shape[1]
    problem = DaskBinaryProblem(Xd, yd.astype(float), True, 0.0, 1.0, np.zeros(p + 1))
    t0 = time.perf_counter()
    problem.measure(np.full(p + 1, 0.1))
    return time.perf_counter() - t0


def run(quick: bool = False, repeats: int = 2) -> pd.DataFrame:
    n, chunk = (200_000, 50_000) if quick else (2_000_000, 500_000)
    p = 10
    X, y, Xd, yd = _data(n, p, chunk)
    kw = {"epsilon": 1.0, "bounds_X": (-1, 1), "classes": [0, 1], "random_state": 0}
    t_np, t_dk, passes = [], [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        a = ObjectivePerturbationLogistic(**kw).fit(X, y)
        t_np.append(time.perf_counter() - t0)
        with _Counter() as c:
            t0 = time.perf_counter()
            b = ObjectivePerturbationLogistic(**kw).fit(Xd, yd)
            t_dk.append(time.perf_counter() - t0)
        passes = c.n
    t_pass = min(_bare_pass(Xd, yd) for _ in range(repeats))
    grid = 2.0 ** grid_exponent(a.amp_sensitivity_ / a.amp_epsilon_)
    row = {
        "n": n,
        "p": p,
        "chunk_rows": chunk,
        "numpy_fit_seconds": min(t_np),
        "dask_fit_seconds": min(t_dk),
        "dask_passes": passes,
        "bare_pass_seconds": t_pass,
        "max_theta_diff_grid_steps": float(np.max(np.abs(a.theta_ - b.theta_)) / grid),
        "certified_slack_grid_steps": float(a.amp_sensitivity_ / grid),
        "n_iter_numpy": int(a.n_iter_[0]),
        "n_iter_dask": int(b.n_iter_[0]),
    }
    df = pd.DataFrame([row])
    with pd.option_context("display.width", 200):
        print(df.T.to_string(header=False))
    save(df, "logistic_dask", quick=quick)
    return df


def main(argv=None):
    parser = cli_parser(__doc__)
    args = parser.parse_args(argv)
    run(quick=args.quick)


if __name__ == "__main__":
    main()
