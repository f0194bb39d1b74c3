"""CoinPress private mean estimation with known covariance (Biswas, Dong, Kamath & Ullman 2020).

The anchor of the median benchmark (``python -m benchmarks.median --sota``), written from the
paper's description (Algorithm 1, identity covariance). It is rho-zCDP; :func:`zcdp_rho`
converts an (epsilon, delta) budget into the largest rho that implies it.
"""

from __future__ import annotations

import numpy as np


def zcdp_rho(epsilon, delta):
    """Largest rho with rho-zCDP => (epsilon, delta)-DP via ``eps = rho + 2 sqrt(rho log(1/delta))``
    (Bun & Steinke 2016, Prop. 1.3)."""
    lg = np.log(1.0 / delta)
    return float((np.sqrt(lg + epsilon) - np.sqrt(lg)) ** 2)


def coinpress_mean(X, rho, radius, rng, steps=4, beta=0.01):
    """CoinPress mean estimate of the rows of ``X`` (identity covariance); rho-zCDP.

    Starts from the public ball ``B(0, radius)``. Each of ``steps - 1`` refinement steps
    spends ``rho / (4 (steps - 1))``; the last step spends ``3 rho / 4`` (the paper's split).
    A step clips the rows to ``B(c, r + gamma)`` (gamma: a high-probability bound on the
    norm of a N(0, I) row), adds Gaussian noise to their mean (sensitivity ``2 (r + gamma) / n``
    under replace-one) and shrinks the ball to a high-probability bound on the new error.
    """
    n, d = X.shape
    rhos = [rho / (4.0 * (steps - 1))] * (steps - 1) + [0.75 * rho] if steps > 1 else [rho]
    c, r = np.zeros(d), float(radius)
    lg = np.log(n / beta)
    gamma = np.sqrt(d + 2.0 * np.sqrt(d * lg) + 2.0 * lg)
    lg1 = np.log(1.0 / beta)
    gamma1 = np.sqrt(d + 2.0 * np.sqrt(d * lg1) + 2.0 * lg1)
    for rho_t in rhos:
        diff = X - c
        norms = np.linalg.norm(diff, axis=1)
        cap = r + gamma
        scale = np.minimum(1.0, cap / np.maximum(norms, 1e-300))
        clipped_mean = c + (diff * scale[:, None]).mean(axis=0)
        sigma = 2.0 * cap / (n * np.sqrt(2.0 * rho_t))
        c = clipped_mean + sigma * rng.standard_normal(d)
        r = gamma1 * np.sqrt(1.0 / n + sigma**2)
    return c
