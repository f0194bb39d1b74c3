"""Would a weighted lp ball beat the cube for the symmetric-matrix releases? (session 16)

``release_symmetric`` (``dpreg/linear_model/_inference_logistic.py``) adds linf K-norm noise
to the encoded upper triangle of ``sum_i a_i z_i z_i^T``: the logistic Hessian (``a_i`` in
[0, 1/4], six entries with an intercept and two features) and the KNG design Gram (``a_i =
1``, five entries once the public corner is left out). Only lp balls are certified on
floating-point hardware (``docs/floating_point.md``), so the question is whether some lp ball,
stretched per entry by weights w, holds the replace-one differences with less noise than the
cube.

For K = {x : ||x / w||_p <= 1} the sensitivity is R = max over differences D of
||D / w||_p, and coordinate j of the K-norm noise has variance (m + 1)(m + 2) (R w_j / eps)^2
E[U_j^2], U uniform in the unit lp ball (m entries). The differences are taken between all
pairs of rows with a in {0, 1/4} (for fixed rows z, z' the difference is linear in (a, a'), so
the norm's maximum over the box of (a, a') is at a corner) and z on a grid of [-1, 1]^2 (21
values per axis), so R is a lower bound of the true maximum: the comparison is tilted towards
the lp balls.
E[U_j^2] is estimated from 20,000 uniform draws (the generalised-gamma construction). The
weights are all ones plus 79 log-normal draws (sd 0.3); the lowest total variance is kept.

``python -m benchmarks._symmetric_release_balls`` prints, per release and p, the total noise
variance over the cube's and per entry. Seeded; a few CPU-seconds.
"""

from __future__ import annotations

import numpy as np

P_VALUES = (1, 2, 3, 4, 8)
TRIES = 80


def encoded(z, intercept):
    """Encoded upper triangle of z z^T (off-diagonal halved), z = (z1, z2); with an intercept
    the row (1, z1/2, z2/2, ...) of the logistic Hessian, without it the Gram's five entries
    other than the public corner."""
    z1, z2 = z[..., 0], z[..., 1]
    rows = [z1 / 2, z2 / 2, z1**2, z1 * z2 / 2, z2**2]
    if intercept:
        rows.insert(0, np.ones_like(z1))
    return np.stack(rows, -1)


def differences(weights_a, intercept):
    g = np.linspace(-1, 1, 21)
    Z = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    P = (weights_a[:, None, None] * encoded(Z, intercept)[None]).reshape(-1, 5 + intercept)
    return (P[:, None, :] - P[None, :, :]).reshape(-1, P.shape[1])


def coordinate_variance(D, p, w, rng, draws=20_000):
    m = D.shape[1]
    if p == np.inf:
        R, second = np.abs(D / w).max(), np.full(m, 1 / 3)
    else:
        R = ((np.abs(D / w) ** p).sum(1).max()) ** (1 / p)
        G = rng.gamma(1 / p, 1, size=(draws, m)) ** (1 / p) * rng.choice([-1, 1], (draws, m))
        E = rng.exponential(size=(draws, 1))
        U = G / ((np.abs(G) ** p).sum(1, keepdims=True) + E) ** (1 / p)
        second = (U**2).mean(0)
    return (m + 1) * (m + 2) * R**2 * second * w**2


def compare(name, D, rng):
    cube = coordinate_variance(D, np.inf, np.ones(D.shape[1]), rng)
    print(f"{name}: cube per-entry variance x eps^2 = {cube.round(4)}")
    for p in P_VALUES:
        best = None
        for t in range(TRIES):
            w = np.ones(D.shape[1]) if t == 0 else np.exp(rng.normal(0, 0.3, D.shape[1]))
            var = coordinate_variance(D, p, w, rng)
            if best is None or var.sum() < best[0]:
                best = (var.sum(), var)
        ratio = best[0] / cube.sum()
        print(f"  l{p}: total / cube {ratio:.3f}, per entry {(best[1] / cube).round(3)}")


def main():
    rng = np.random.default_rng(16)
    compare("logistic Hessian (6 entries)", differences(np.array([0.0, 0.25]), True), rng)
    compare("KNG Gram without its corner (5 entries)", differences(np.ones(1), False), rng)


if __name__ == "__main__":
    main()
