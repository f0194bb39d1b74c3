"""Choosing a norm by the volume order (seed 001 section 3).

For K-norm mechanisms with sensitivities Delta_K, the mechanism whose scaled ball
``Delta_K * K`` has the smallest volume has the smallest entropy, and (seed 001) a stochastically
smaller norm in every direction up to a linear change of variables; it is the natural default.
``vol(Delta K) = Delta^m vol(K)``, so we compare ``m log Delta_K + log vol(K)``.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_sensitivity
from .balls import make_ball


def log_scaled_volume(norm, sensitivity, dim):
    """``log vol(sensitivity * K)`` for the ball K of ``norm`` in R^dim."""
    ball = make_ball(norm, dim)
    return ball.dim * np.log(check_sensitivity(sensitivity)) + ball.log_volume()


def choose_norm(candidates, sensitivities, dim=None):
    """Return the candidate norm whose scaled ball ``Delta_K K`` has the smallest volume.

    Parameters
    ----------
    candidates : sequence
        Norms: "l1", "l2", "linf", numbers p >= 1, or ball objects.
    sensitivities : sequence of float
        Sensitivity of the statistic in each candidate norm.
    dim : int, optional
        Dimension; required when a candidate is given by name or p (balls carry their own).

    Returns
    -------
    The chosen element of ``candidates``; candidates whose volumes agree to a relative 1e-9
    count as tied and the first one wins. The volume of a :class:`~dpreg.noise.ConvexBody`
    is a deterministic Monte Carlo estimate (about 0.1-1% relative error for moderate
    acceptance rates), so near-ties with it are decided by that estimate; the choice only
    affects utility, never privacy.

    Examples
    --------
    >>> from dpreg.noise import choose_norm
    >>> m = 5  # a statistic whose sensitivity space is the cube [-1, 1]^5
    >>> choose_norm(["l1", "l2", "linf"], [m, m ** 0.5, 1.0], dim=m)
    'linf'
    """
    candidates, sensitivities = list(candidates), list(sensitivities)
    if not candidates or len(candidates) != len(sensitivities):
        raise ValueError("candidates and sensitivities must be non-empty and of equal length.")
    if dim is None:
        dims = {getattr(c, "dim", None) for c in candidates}
        if None in dims or len(dims) != 1:
            raise ValueError("dim is required when candidates are given by name.")
        dim = dims.pop()
    scores = np.array([log_scaled_volume(c, s, dim) for c, s in zip(candidates, sensitivities)])
    # ties (equal volumes up to round-off, e.g. every lp ball when dim == 1) go to the first
    return candidates[int(np.flatnonzero(scores <= scores.min() + 1e-9)[0])]
