"""The CDF of a piecewise-constant density, shared by the private-bounds tests.

Each of those tests derives its release's exact law (edges and log-weights) by itself,
independently of the sampler; only this last, law-agnostic step is common to them.
"""

import numpy as np


def piecewise_cdf(edges, logw, log_z):
    """CDF of the density ``exp(logw[k] - log_z)`` on ``[edges[k], edges[k + 1])``."""
    mass = np.exp(logw - log_z) * np.diff(edges)
    cum = np.concatenate([[0.0], np.cumsum(mass)])

    def cdf(u):
        u = np.asarray(u, dtype=float)
        k = np.clip(np.searchsorted(edges, u, side="right") - 1, 0, len(mass) - 1)
        part = np.clip(u - edges[k], 0.0, np.diff(edges)[k]) * np.exp(logw[k] - log_z)
        return np.clip(cum[k] + part, 0.0, 1.0)

    return cdf
