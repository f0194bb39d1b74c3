"""The CDF of a piecewise-constant density, shared by the private-bounds tests, and the exact
law of the private-bounds median draw.

Each of those tests derives its release's exact law (edges and log-weights) independently of
the sampler; the median's law (:func:`asinh_median_law`) is used by two of them.
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


def asinh_median_law(values, eps, scale, lo, hi):
    """``(edges, logw, log_z)`` of the exact KNG median draw with budget ``eps`` in ``u =
    asinh(m / scale)`` over the candidate range ``[lo, hi]``, derived here independently of
    the sampler: the density is ``exp(-eps / 2 |#{asinh(x_i / scale) <= u} - n / 2|)`` on the
    pieces between the sorted transformed values, normalised by ``exp(log_z)``."""
    u_lo, u_hi = np.arcsinh(lo / scale), np.arcsinh(hi / scale)
    c = np.sort(np.arcsinh(np.asarray(values, dtype=float) / scale))
    n = c.size
    edges = np.concatenate([[u_lo], np.clip(c, u_lo, u_hi), [u_hi]])
    logw = -eps / 2 * np.abs(np.arange(n + 1) - n / 2)
    log_z = np.logaddexp.reduce(logw + np.log(np.maximum(np.diff(edges), 1e-300)))
    return edges, logw, log_z
