"""DP-SGD for logistic regression (Abadi et al. 2016, "Deep learning with differential
privacy", CCS), tuned over a grid with the tuning cost counted.

One run. ``T`` steps; each step draws a uniformly random batch of ``b`` rows *without
replacement*, clips every per-example gradient to l2 norm ``C``, adds ``N(0, sigma^2 I)`` to
their sum and takes a step ``theta -= lr (sum + noise) / b``. Under replace-one adjacency the
clipped sum has l2 sensitivity ``2C``, so the noise multiplier handed to the accountant is
``sigma / (2 C)``. Privacy is accounted with the Renyi-DP bound of the subsampled Gaussian
mechanism for sampling without replacement and replace-one adjacency (Wang, Balle and
Kasiviswanathan 2019, Theorem 27; Google's ``dp_accounting`` implementation), composed over all
steps and converted to (epsilon, delta).

Tuning, counted (our protocol). A grid of G configurations (learning rate x epochs) is trained
on 80% of the training rows; the noise sigma is chosen so that *all* G runs together (their
steps composed in RDP) are (epsilon, delta)-DP. One run is then chosen on the other 20% by the
exponential mechanism with epsilon (utility: number of correct labels, sensitivity 1). The two
parts are disjoint, so the whole (grid and choice) is (epsilon, delta)-DP by parallel
composition. Every public quantity (batch size, number of steps) is computed from a public
lower bound ``n_public`` of the part's size, so one sigma serves every fold (a larger n only
lowers the sampling rate, hence the privacy loss).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize

from ._logistic_common import accuracy, per_example_gradients

#: (learning rate, epochs) of the tuning grid; clipping norm C = 1 in the scaled coordinates.
GRID = ((0.2, 1), (1.0, 1), (0.2, 5), (1.0, 5))
CLIP = 1.0
#: RDP orders (integers are computed exactly); fewer orders only make the bound looser.
ORDERS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 160, 192, 256)


def batch_size(n_public):
    """``min(n, max(64, round(sqrt(n))))``, public."""
    return int(min(n_public, max(64, round(math.sqrt(n_public)))))


def steps(n_public, epochs):
    return int(epochs * math.ceil(n_public / batch_size(n_public)))


def rdp_epsilon(noise_multiplier, n_public, total_steps, delta):
    """(epsilon at delta) of ``total_steps`` subsampled Gaussian steps, replace-one."""
    import dp_accounting as dpa  # noqa: PLC0415
    from dp_accounting.rdp import RdpAccountant  # noqa: PLC0415

    rel = dpa.NeighboringRelation.REPLACE_ONE
    acc = RdpAccountant(orders=list(ORDERS), neighboring_relation=rel)
    step = dpa.SampledWithoutReplacementDpEvent(
        n_public, batch_size(n_public), dpa.GaussianDpEvent(noise_multiplier)
    )
    acc.compose(dpa.SelfComposedDpEvent(step, total_steps))
    return acc.get_epsilon(delta)


@functools.lru_cache(maxsize=256)
def noise_multiplier(epsilon, delta, n_public, total_steps):
    """A noise multiplier within 4% of the smallest with ``rdp_epsilon <= epsilon``."""
    lo, hi = math.log(0.3), math.log(2000.0)
    if rdp_epsilon(math.exp(hi), n_public, total_steps, delta) > epsilon:
        raise ValueError("epsilon too small for the grid")
    f = lambda s: rdp_epsilon(math.exp(s), n_public, total_steps, delta) - epsilon  # noqa: E731
    if f(lo) <= 0:
        return math.exp(lo)
    # brentq stops with f(root) on either side; step up to the side that meets the budget
    s = optimize.brentq(f, lo, hi, xtol=0.02)
    return math.exp(s) if f(s) <= 0 else math.exp(s + 0.02)


def run(Z, y, lr, epochs, sigma, n_public, rng):
    """One DP-SGD run (module docstring); returns the last iterate."""
    n, m = Z.shape
    b = batch_size(n_public)
    theta = np.zeros(m)
    for _ in range(steps(n_public, epochs)):
        idx = rng.choice(n, size=b, replace=False)
        g = per_example_gradients(theta, Z[idx], y[idx])
        norms = np.linalg.norm(g, axis=1, keepdims=True)
        g *= np.minimum(1.0, CLIP / np.maximum(norms, 1e-300))
        noisy = g.sum(axis=0) + rng.normal(0.0, sigma, size=m)
        theta -= lr * noisy / b
    return theta


def fit_tuned(Z, y, epsilon, delta, rng, n_public, grid=GRID):
    """(epsilon, delta)-DP tuned DP-SGD (module docstring); ``n_public <= len(y)``."""
    n = len(y)
    perm = rng.permutation(n)
    n_train_public = int(0.8 * n_public)
    train, hold = perm[: int(0.8 * n)], perm[int(0.8 * n) :]
    total = sum(steps(n_train_public, e) for _, e in grid)
    mult = noise_multiplier(float(epsilon), float(delta), n_train_public, total)
    sigma = mult * 2.0 * CLIP  # replace-one: sensitivity of the clipped sum is 2C
    thetas = [run(Z[train], y[train], lr, e, sigma, n_train_public, rng) for lr, e in grid]
    correct = np.array([len(hold) * accuracy(t, Z[hold], y[hold]) for t in thetas])
    logits = epsilon * correct / 2.0
    p = np.exp(logits - logits.max())
    return thetas[rng.choice(len(grid), p=p / p.sum())], mult
