"""Choosing a norm by the volume order (seed 001 section 3).

For K-norm mechanisms with sensitivities Delta_K, the mechanism whose scaled ball
``Delta_K * K`` has the smallest volume has the smallest entropy, and (seed 001) a stochastically
smaller norm in every direction up to a linear change of variables; it is the natural default.
``vol(Delta K) = Delta^m vol(K)``, so we compare ``m log Delta_K + log vol(K)``.

Floating point comes first: only the lp balls (any ``1 <= p <= inf``) have an exact grid
release (``KNormMechanism.floating_point_safe``; ``docs/floating_point.md``). Polytope and
membership-oracle balls are snapped to the grid but not certified, so by default the volume
order only decides among the hardened candidates, and a non-hardened one is chosen only when
no candidate is hardened (or when the caller opts out with
``prefer_floating_point_safe=False``).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_sensitivity
from ._exact import hardened_p
from .balls import make_ball


def log_scaled_volume(norm, sensitivity, dim):
    """``log vol(sensitivity * K)`` for the ball K of ``norm`` in R^dim."""
    ball = make_ball(norm, dim)
    return ball.dim * np.log(check_sensitivity(sensitivity)) + ball.log_volume()


def choose_norm(candidates, sensitivities, dim=None, prefer_floating_point_safe=True):
    """Return the candidate norm whose scaled ball ``Delta_K K`` has the smallest volume.

    By default only among the floating-point-safe candidates (lp balls) when there is one.

    Parameters
    ----------
    candidates : sequence
        Norms: "l1", "l2", "linf", numbers p >= 1, or ball objects.
    sensitivities : sequence of float
        Sensitivity of the statistic in each candidate norm.
    dim : int, optional
        Dimension; required when a candidate is given by name or p (balls carry their own).
    prefer_floating_point_safe : bool, default=True
        If any candidate is an lp ball, ``1 <= p <= inf`` (an exact, certified grid release),
        choose among those only: a polytope or membership-oracle ball may have a smaller
        volume but its release is not certified on real hardware (``docs/floating_point.md``).
        ``False`` applies the volume order to every candidate.

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
    >>> choose_norm(["l2", 1.5], [1.0, 0.5], dim=2)  # every lp ball is hardened
    1.5
    >>> import numpy as np
    >>> from dpreg.noise import PolytopeBall
    >>> square = PolytopeBall(vertices=np.array([[-1, -1], [-1, 1], [1, -1], [1, 1]]))
    >>> choose_norm(["l2", square], [1.0, 0.5], dim=2)  # the square is smaller, not hardened
    'l2'
    >>> choose_norm(["l2", square], [1.0, 0.5], dim=2, prefer_floating_point_safe=False) is square
    True
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
    safe = np.array([hardened_p(make_ball(c, dim)) is not None for c in candidates])
    if prefer_floating_point_safe and safe.any():
        scores = np.where(safe, scores, np.inf)  # non-hardened candidates drop out
    # ties (equal volumes up to round-off, e.g. every lp ball when dim == 1) go to the first
    return candidates[int(np.flatnonzero(scores <= scores.min() + 1e-9)[0])]
