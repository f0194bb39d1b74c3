r"""Private histogram with public bin edges (Laplace mechanism).

Under replace-one adjacency one value moves from one bin to another (or into/out of the range
covered by the edges), so the vector of counts changes by at most 1 in two coordinates: its
l1 sensitivity is 2. Adding iid Laplace(2 / epsilon) noise to every count is epsilon-DP
(:class:`dpreg.noise.LaplaceMechanism`). The counts go through the mechanism's ``randomise``,
which releases ``count + noise`` exactly on a public grid; adding ``sample()`` (grid noise) to
the counts instead would keep ``count mod g`` whenever the grid step ``g`` exceeds 1 (epsilon
below about 2**-24), revealing the counts (``docs/floating_point.md``, section 4). Values
outside the edges are dropped, as in :func:`numpy.histogram`; this does not change the
sensitivity. The edges must not depend on the data: ``bins`` as an integer needs ``range``.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_random_state
from ..noise import LaplaceMechanism
from ._common import check_interval, check_values, spend

HISTOGRAM_SENSITIVITY = 2.0


def _check_edges(bins, range, values):
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError(f"bins must be a positive integer or an array of edges, got {bins}.")
        lo, hi = check_interval(range, values, name="range")
        return np.linspace(lo, hi, int(bins) + 1)
    try:
        edges = np.asarray(bins, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("bins must be a positive integer or an array of edges.") from None
    if edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges)):
        raise ValueError("bins as edges must be a 1-D finite array with at least 2 entries.")
    if not np.all(edges[1:] > edges[:-1]):  # no subtraction: it could overflow
        raise ValueError("bin edges must be strictly increasing.")
    return edges


def histogram(a, bins=10, range=None, epsilon=1.0, *, random_state=None, accountant=None):
    """Differentially private histogram of ``a`` (flattened) with public edges.

    Parameters
    ----------
    a : array-like
        Finite values.
    bins : int or array of edges, default=10
        Number of equal-width bins over ``range``, or the edges themselves.
    range : (lower, upper), optional
        Needed with an integer ``bins``; ``None`` reads it from the data with a
        :class:`~dpreg.exceptions.PrivacyLeakWarning`.
    epsilon : float, default=1.0
    random_state : None, int, RandomState or Generator
    accountant : BudgetAccountant, optional
        Charged ``(epsilon, 0)`` after validation, before the data are used.

    Returns
    -------
    counts : ndarray of float
        Noisy counts (unbiased; may be negative or fractional; round or clip as you like,
        which is post-processing).
    edges : ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.tools import histogram
    >>> counts, edges = histogram(np.zeros(1000), bins=2, range=(-1, 1), epsilon=1.0,
    ...                           random_state=0)
    >>> bool(abs(counts[1] - 1000) < 20), edges.tolist()
    (True, [-1.0, 0.0, 1.0])
    """
    values = check_values(a)
    edges = _check_edges(bins, range, values)
    rng = check_random_state(random_state)
    epsilon = spend(accountant, epsilon, sensitivity=HISTOGRAM_SENSITIVITY)
    counts, _ = np.histogram(values, bins=edges)
    mech = LaplaceMechanism(epsilon, HISTOGRAM_SENSITIVITY, random_state=rng)
    # randomise, never counts + sample(): see the module docstring
    return mech.randomise(counts.astype(float)), edges
