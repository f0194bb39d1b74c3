"""One streaming pass over the sorted projections: everything the PTR test needs.

The safety margin h (``PrivateProjectionMedian._margin``) needs, per direction, the projected
median and scale, the closeness bounds ``F_j`` (a maximum over directions) and, for every
``k <= h + 1``, the median interval and the scale lower bound (inputs of the LP bound T_k).
All of them are per-direction functions of that direction's sorted projections. So the
directions can be processed in chunks of rows and the sorted projections discarded after each
chunk: peak memory is one chunk (``CHUNK_BYTES``) instead of ``m n`` floats. The values are
computed by the same per-row code as on the whole matrix, so they are identical.

``F_j`` is only needed up to the first j where it exceeds the ladder ``eta_j``: h is then at
most j, whatever the later values are. A chunk therefore stops at the first j where its own
rows already exceed ``eta_j``, and later chunks stop there too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _sensitivity as sens

#: Target size of one chunk of sorted projections (bytes).
CHUNK_BYTES = 64 * 2**20


def sorted_chunks(U, X, chunk_bytes=None):
    """Yield the sorted projections ``sort(U_chunk X^T)`` for consecutive row-chunks of U."""
    n = X.shape[0]
    rows = max(1, int((CHUNK_BYTES if chunk_bytes is None else chunk_bytes) // (8 * n)))
    for start in range(0, U.shape[0], rows):
        S = U[start : start + rows] @ X.T
        S.sort(axis=1)
        yield S


@dataclass
class Summary:
    """Per-direction medians/scales, ``F[j]`` for ``j <= j_stop`` and, for
    ``k = 1..j_stop``, the median intervals ``L[k], R[k]`` and scale lower bounds ``lower[k]``.
    ``F[j]`` for ``j < j_stop`` is the exact maximum over all directions; ``F[j_stop]`` (if
    present) exceeds its ladder value for at least one direction."""

    mu: np.ndarray
    sigma: np.ndarray
    F: list
    j_stop: int
    L: dict = field(default_factory=dict)
    R: dict = field(default_factory=dict)
    lower: dict = field(default_factory=dict)
    public: bool = False


def summarise_public(chunks, s_u, k_cap, eta_ladder):
    """The pass with public direction scales ``s_u``: ``sigma = s_u`` and
    ``F_j = max_u S_mu,u(j) / s_u`` (the median's movement only; no scale bounds, no T_k).

    ``F_j`` is computed up to the first j where it exceeds ``eta_ladder(j)``; ``j_stop`` is
    that j (or ``k_cap``), which is h(D) itself (docs/projection_median.md, section 2b).
    """
    mus, start = [], 0
    F = np.full(k_cap + 1, -np.inf)
    j_stop = k_cap
    for S in chunks:
        s_chunk = s_u[start : start + S.shape[0]]
        start += S.shape[0]
        mus.append(sens.location_scale(S, "mad")[0])
        for j in range(j_stop):
            # a ratio above the float range is +inf: F_j > eta_j, the certificate fails (the
            # safe side; no warning after the spend). s_chunk > 0 (_direction_scales).
            with np.errstate(over="ignore"):
                f = float(np.max(sens.median_movement(S, j) / s_chunk))
            F[j] = max(F[j], f)
            if not f <= eta_ladder(j):
                j_stop = j
                break
    assert start == len(s_u)
    F_known = list(F[: min(j_stop + 1, k_cap)])
    return Summary(np.concatenate(mus), np.asarray(s_u, float), F_known, j_stop, public=True)


def summarise(chunks, tau, scale, k_cap, eta_ladder):
    """Run the pass over ``chunks`` (sorted row blocks); ``eta_ladder(j)`` is F_j's bound."""
    mus, sigmas = [], []
    F = np.full(k_cap + 1, -np.inf)
    parts = {}  # k -> list of (L, R, lower) per chunk
    j_stop = k_cap
    for S in chunks:
        mu, sig = sens.location_scale(S, scale)
        mus.append(mu)
        sigmas.append(sig)
        cache = {}
        j = 0
        while j < j_stop:
            f = sens.outlyingness_sensitivity(S, j, tau, scale, cache)
            F[j] = max(F[j], f)
            if not f <= eta_ladder(j):
                j_stop = j
                break
            j += 1
        for k in range(1, j_stop + 1):
            L, R = sens.median_interval(S, k)
            lower, _ = sens._cached_bounds(S, k, scale, cache)
            parts.setdefault(k, []).append((L, R, lower))
    F_known = list(F[: min(j_stop + 1, k_cap)])
    summary = Summary(np.concatenate(mus), np.concatenate(sigmas), F_known, j_stop)
    for k in range(1, j_stop + 1):
        blocks = parts[k]  # j_stop only decreases: every chunk stored every k <= j_stop
        assert len(blocks) == len(mus)
        summary.L[k] = np.concatenate([b[0] for b in blocks])
        summary.R[k] = np.concatenate([b[1] for b in blocks])
        summary.lower[k] = np.concatenate([b[2] for b in blocks])
    return summary
