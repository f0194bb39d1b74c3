r"""Dask path of :class:`~dpreg.FunctionalLinearRegression`: a check, the spend, one pass.

Why two steps and not one
-------------------------
``fit`` must turn bad input (NaN, infinity, wrong shapes) into a ``ValueError`` *before* it
reserves the budget, and after the reserve nothing that depends on the data may raise: an
exception raised after the spend is an output of the fit, and "the data contain a NaN" vs "a
model" is then a release with unbounded privacy loss between neighbouring data sets (one NaN
row). A dask array cannot be checked without reading it, so the dask path is:

1. :func:`prepare` (before the spend): shapes, dtype and known chunk sizes from metadata,
   then one ``dask.compute`` of ``isfinite(X).all() & isfinite(y).all()`` (plus the data's
   min/max when bounds are missing; that path is not private anyway and warns). It raises
   ``ValueError`` exactly like the numpy path's ``validate_data``, with nothing spent.
2. :func:`dask_statistics` (after the spend): ONE pass. Each row block goes through the
   numpy kernel :func:`~dpreg.linear_model.functional._moments` (clip, scale, ``syrk`` in
   sub-chunks) and the per-block moment matrices are summed by dask's tree reduction. The
   kernel is total: ``fmin(fmax(x, lo), hi)`` sends NaN to the lower bound and +-inf to a
   bound, so even if the second read differed from the first (a non-deterministic source
   that produces a NaN only now) every row still lies in the scaled box and the
   sensitivities hold; nothing raises and nothing is NaN. The release therefore stays
   (epsilon, delta)-DP on the *extended* domain (rows with NaN/inf entries), with NaN treated
   as a data-independent constant.

The check in step 1 is a second read of the data. It is the price of the clear pre-spend
error; ``python -m benchmarks.linear`` measures it (section "dask") next to a bare one-pass
``X^T X, X^T y, isfinite`` computation.

Floating point: the moment sum is reordered (per-block sub-chunk sums, then a tree). The
sensitivity inflation of :func:`dpreg.noise._grid.float_sum_error_bound` holds for any
summation order (``docs/floating_point.md``), so the guarantee does not depend on the chunks.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np


@dataclass
class DaskInput:
    """Validated dask input: row-aligned ``X`` (one column chunk) and 1-D ``y``."""

    X: object
    y: object
    n: int
    p: int
    data_X: np.ndarray | None  # (2, p) min/max rows, only when bounds_X is None
    data_y: np.ndarray | None  # (2, 1), only when bounds_y is None


def is_dask(a):
    """Whether ``a`` is a dask collection (without importing dask)."""
    return type(a).__module__.split(".")[0] == "dask"


def _as_dask(a, chunks=None):
    import dask.array as da  # noqa: PLC0415 (optional dependency)

    if is_dask(a):
        return a
    a = np.asarray(a)
    return da.from_array(a, chunks=chunks if chunks is not None else "auto")


def _known(n):
    return isinstance(n, numbers.Integral) and not (isinstance(n, float) and math.isnan(n))


def align(X, y):
    """``X`` (n, p) and ``y`` (n,) as dask arrays with the same row chunks; shapes checked.

    Raises ``ValueError`` for anything that metadata alone can reject (no data read).
    """
    Xd = _as_dask(X, chunks=getattr(y, "chunks", None) and (y.chunks[0], -1))
    if Xd.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {Xd.shape}.")
    n, p = Xd.shape
    if not _known(n) or not _known(p):
        raise ValueError("dask arrays must have known chunk sizes (call X.compute_chunk_sizes()).")
    yd = y if is_dask(y) else np.asarray(y)
    if yd.ndim != 1:
        raise ValueError("with dask input, y must be 1-D (multi-output needs numpy).")
    if not _known(yd.shape[0]) or yd.shape[0] != n:
        raise ValueError(f"X has {n} rows but y has shape {yd.shape}.")
    yd = _as_dask(yd, chunks=(Xd.chunks[0],))
    if n < 1 or p < 1:
        raise ValueError(f"need at least one sample and one feature, got X of shape {(n, p)}.")
    for a, name in ((Xd, "X"), (yd, "y")):
        if a.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric, got dtype {a.dtype}.")
    Xd = Xd.rechunk({1: -1})  # one column chunk: every block holds whole rows
    yd = yd.rechunk((Xd.chunks[0],))  # y's blocks hold the same rows as X's
    return Xd, yd


def prepare(X, y, bounds_X=None, bounds_y=None):
    """Step 1, before the spend: validate the dask input; raises ``ValueError`` on bad data.

    One ``dask.compute`` reads the data once for the finiteness check (and the data's
    extents when a bounds argument is None).
    """
    import dask  # noqa: PLC0415
    import dask.array as da  # noqa: PLC0415

    Xd, yd = align(X, y)
    todo = {"finite": da.isfinite(Xd).all() & da.isfinite(yd).all()}
    if bounds_X is None:
        todo["X"] = da.stack([Xd.min(axis=0), Xd.max(axis=0)])
    if bounds_y is None:
        todo["y"] = da.stack([yd.min(keepdims=True), yd.max(keepdims=True)])
    (out,) = dask.compute(todo)
    if not bool(out["finite"]):
        raise ValueError("Input X or y contains NaN or infinity.")
    n, p = Xd.shape
    return DaskInput(Xd, yd, int(n), int(p), out.get("X"), out.get("y"))


def dask_statistics(inp, bounds_X, bounds_y, fit_intercept, chunk_size=65536):
    """Step 2, after the spend: the sufficient statistics in one pass; never raises on data.

    Every row block is reduced to its moment matrix by the numpy kernel (sub-chunks of
    ``chunk_size`` rows); dask sums the blocks in a tree.
    """
    import dask.array as da  # noqa: PLC0415

    from .functional import _from_moments, _inverse, _moments, _scaling  # noqa: PLC0415

    fi = bool(fit_intercept)
    lo, hi, x_off, x_sc = _scaling(bounds_X, inp.p, inp.data_X, "bounds_X", fi)
    ylo, yhi, y_off, y_sc = _scaling(bounds_y, 1, inp.data_y, "bounds_y", fi)
    maps = (lo, hi, x_off, _inverse(x_sc), ylo, yhi, y_off, _inverse(y_sc))
    K = inp.p + int(fi) + 1

    def block(xb, yb):
        return _moments(xb, yb, maps, fi, chunk_size)[None]

    parts = da.blockwise(
        block,
        "ijk",
        inp.X,
        "il",
        inp.y,
        "i",
        new_axes={"j": K, "k": K},
        adjust_chunks={"i": 1},
        concatenate=True,
        dtype=float,
        meta=np.empty((0, 0, 0)),
    )
    M = np.asarray(parts.sum(axis=0).compute(), dtype=float)
    return _from_moments(M, inp.n, inp.p, fi, x_off, x_sc, y_off, y_sc)
