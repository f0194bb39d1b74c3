r"""Dask path of :class:`~dpreg.ObjectivePerturbationLogistic`: one pass per solver iteration.

What is the same as in memory
-----------------------------
Everything that makes the release private: the public plan (gamma, q, the tolerance, W's
calibration), the perturbation V and the noise W are drawn by the estimator in the same
order from the same generator, and the released point must pass the *same* certificate,
:func:`dpreg.linear_model._certify.certify_problem` with the same tolerance. Only where the
numbers come from differs: :class:`DaskBinaryProblem` evaluates the gradient (and the Hessian)
block by block.

* The accurate loss gradient: every block returns its per-chunk sums
  (:func:`~dpreg.linear_model._certify.loss_gradient_parts`, chunks of at most ``_CHUNK``
  rows); the chunk sums of all blocks are combined by ``math.fsum`` on the client
  (:func:`~dpreg.linear_model._certify.combine_parts`). That is the in-memory computation with
  the chunks cut at block edges, so :func:`~dpreg.linear_model._certify.rounding_bound`
  bounds its error unchanged and the certificate means the same thing.
* One pass per iteration: a pass at ``theta`` returns the chunk sums *and* the Hessian sum
  at ``theta`` (cached), so the Newton step at an accepted point needs no second pass. A
  Newton iteration whose first trial step is accepted (the rule near the optimum) reads the
  data once.

Warm start (free: the AMP argument uses only the certified distance, never the path): one
pass takes the evenly spaced subsample of at most ``n_sub`` rows that the in-memory solver
uses for its first stage, L-BFGS solves that surrogate in memory, and Newton steps on the
full data finish.

Input checks happen in :func:`prepare`, before the spend: shapes from metadata, then ONE
``dask.compute`` of ``isfinite(X).all()``, of whether every label lies in the public
``classes`` (or of the label set and the data's extents when the user gave none; that path
warns and is not private). After the spend, the per-block scaling is total (NaN -> 0, +-inf
-> a bound), so a source that yields a NaN only on a later read cannot make the solver raise
or loop: every row stays in [-1, 1]^m and the objective stays strongly convex.
"""

from __future__ import annotations

import numpy as np

from ._certify import combine_parts, loss_gradient_parts, minimal_subgradient
from ._dask_stats import align
from ._logistic_core import _lbfgs, hessian, objective

#: Rows of the in-memory warm-start surrogate (same as ``solve_lbfgs``).
N_SUB = 20_000


def prepare(X, y, classes, bounds_given):
    """Validate dask input before the spend; returns ``(X, y, classes, extents)``.

    ``classes`` is the public label set or None (then read from the data). ``extents`` is
    the (2, p) array of column min/max when ``bounds_given`` is False, else None.
    """
    import dask  # noqa: PLC0415 (optional dependency)
    import dask.array as da  # noqa: PLC0415

    Xd, yd = align(X, y)  # also: numeric dtypes (string labels need numpy input)
    todo = {"finite": da.isfinite(Xd).all() & da.isfinite(yd).all()}
    if classes is None:
        todo["labels"] = da.unique(yd)
    else:
        todo["known"] = da.isin(yd, classes).all()
    if not bounds_given:
        todo["extents"] = da.stack([Xd.min(axis=0), Xd.max(axis=0)])
    (out,) = dask.compute(todo)
    if not bool(out["finite"]):
        raise ValueError("Input X or y contains NaN or infinity.")
    if classes is not None and not bool(out["known"]):
        raise ValueError(
            f"y contains labels outside classes={list(classes)!r}; every label must belong to "
            "the public label set."
        )
    return Xd, yd, out.get("labels"), out.get("extents")


def label_index(y, classes):
    """Lazy class indices of a dask ``y`` (labels already checked against ``classes``)."""
    return y.map_blocks(lambda b: np.searchsorted(classes, b), dtype=np.intp)


def scaled(X, scale):
    """Lazily scaled design: ``scale`` per block, then NaN -> 0 (total after the spend)."""

    def block(b):
        Z = scale(b)
        return np.nan_to_num(Z, copy=False, nan=0.0, posinf=1.0, neginf=-1.0)

    return X.map_blocks(block, dtype=float)


def _block_pass(Zb, yb, theta, fit_intercept):
    """Chunk sums of the loss gradient and the sum-form Hessian of the loss on one block."""
    rows = Zb.shape[0]
    parts = loss_gradient_parts(theta, Zb, yb, fit_intercept)
    H = hessian(theta, Zb, fit_intercept, 0.0, 0.0) * rows  # mean over the block -> sum
    return parts, H


class DaskBinaryProblem:
    """The binary perturbed objective on a dask design, as seen by ``certify_problem``.

    Same interface as :class:`dpreg.linear_model._certify.BinaryProblem` (smooth case:
    ``l1 = 0``); every new ``theta`` costs one pass over the data.
    """

    def __init__(self, Z, y, fit_intercept, alpha_l2, gamma, V):
        import dask  # noqa: PLC0415

        self._delayed = dask.delayed(_block_pass, pure=True)
        Z = Z.rechunk({1: -1})
        y = y.rechunk((Z.chunks[0],))
        self.blocks = list(zip(Z.to_delayed().ravel(), y.to_delayed().ravel()))
        self.n = int(Z.shape[0])
        self.fit_intercept = bool(fit_intercept)
        self.alpha_l2, self.gamma, self.V = float(alpha_l2), float(gamma), np.asarray(V)
        self.l1 = 0.0
        self.c = np.zeros(len(V))
        self.passes = 0
        self._last = None  # (theta, loss sum, Hessian of J)

    def _evaluate(self, theta):
        import dask  # noqa: PLC0415

        theta = np.asarray(theta, dtype=float)
        if self._last is not None and np.array_equal(self._last[0], theta):
            return self._last
        tasks = [self._delayed(Zb, yb, theta, self.fit_intercept) for Zb, yb in self.blocks]
        results = dask.compute(*tasks)
        self.passes += 1
        loss = combine_parts(np.vstack([r[0] for r in results]))
        H = sum(r[1] for r in results) / self.n
        # the penalty part of the Hessian, as in _logistic_core.hessian
        o = int(self.fit_intercept)
        H[np.arange(o, len(theta)), np.arange(o, len(theta))] += self.alpha_l2 / self.n
        H[np.diag_indices_from(H)] += self.gamma / self.n
        self._last = (theta.copy(), loss, H)
        return self._last

    def measure(self, theta):
        _, loss, _ = self._evaluate(theta)
        # only the row count of the first argument is read when the loss sum is given
        shape_only = np.empty((self.n, 0))
        return minimal_subgradient(
            theta, shape_only, None, self.fit_intercept, self.alpha_l2, 0.0, self.gamma,
            self.V, loss=loss,
        )  # fmt: skip

    def gradient(self, theta):
        return self.measure(theta)[2]

    def hessian(self, theta):
        return self._evaluate(theta)[2]


def subsample(Z, y_idx, n_sub=N_SUB):
    """The evenly spaced rows ``[::step]`` the in-memory warm start uses, in one pass."""
    import dask  # noqa: PLC0415

    step = max(1, Z.shape[0] // n_sub)
    Zs, ys = dask.compute(Z[::step], y_idx[::step])
    return np.asarray(Zs, dtype=float), np.asarray(ys)


def solve(Z, yk, sub, fit_intercept, alpha_l2, gamma, V, tol, L, max_iter):
    """Warm start on the subsample, then certified Newton on the full dask data.

    ``sub = (Zs, ys)`` is the subsample with this problem's 0/1 labels. Returns
    ``(theta_hat, n_iter, passes)``; ``theta_hat`` passed the public certificate.
    """
    from ._certify import certify_problem  # noqa: PLC0415

    Zs, ys = sub
    n = Z.shape[0]
    dim = Zs.shape[1] + int(fit_intercept)
    res = _lbfgs(objective, np.zeros(dim), (Zs, ys, fit_intercept, alpha_l2, gamma, V, n),
                 max_iter, 1e-8 if len(ys) == n else 1e-6)  # fmt: skip
    theta0 = res.x if np.all(np.isfinite(res.x)) else np.zeros(dim)
    problem = DaskBinaryProblem(Z, yk, fit_intercept, alpha_l2, gamma, V)
    theta, steps = certify_problem(theta0, problem, tol, L)
    return theta, max(1, int(res.nit)) + steps, problem.passes


__all__ = ["DaskBinaryProblem", "prepare", "solve", "subsample"]
