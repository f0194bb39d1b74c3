"""Output perturbation for L2-regularised logistic regression (Chaudhuri, Monteleoni and
Sarwate 2011, "Differentially private empirical risk minimization", JMLR 12, Algorithm 1 and
the parameter tuning of section 6).

Mechanism. ``theta* = argmin (1/n) sum_i l(theta; z_i, y_i) + (Lambda/2) |theta|^2`` with the
logistic loss, which is ``R``-Lipschitz in theta for ``|z|_2 <= R = sqrt(m)``. Replacing one
example moves ``theta*`` by at most ``2 R / (n Lambda)`` in l2 (their Corollary 8 with the
feature radius R instead of 1; the intercept column is regularised too, which the strong
convexity argument needs). The release is ``theta* + b`` with density ``∝ exp(-epsilon |b|_2 /
Delta)``: ``|b|_2 ~ Gamma(m, Delta / epsilon)`` times a uniform direction. epsilon-DP.

Lambda. ``Lambda`` must not depend on the data. Two honest choices are offered:

* :func:`fit_fixed`: ``Lambda = max(2 m^{1.5} / (n epsilon), 1e-6)``, the value at which the
  noise's mean norm ``m Delta / epsilon`` equals 1 in the scaled coordinates (a public rule of
  ours; the paper leaves Lambda to the user);
* :func:`fit_tuned`: the paper's private tuning (section 6): split the data into k + 1 equal
  parts, fit part i with ``Lambda_i`` (each epsilon-DP, disjoint data), count the errors of each
  output on the last part and pick one with the exponential mechanism ``∝ exp(-epsilon
  errors / 2)`` (sensitivity 1). Each example is in one part only, so the whole is epsilon-DP.

The minimiser is computed by L-BFGS to a gradient norm of 1e-9, at most 1000 iterations (the
paper assumes the exact minimiser; this is the usual practice for this baseline).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize
from scipy.special import log_expit

from ._logistic_common import accuracy


def _objective(theta, Z, y, lam):
    t = Z @ theta
    # mean of log(1 + e^t) - y t, stably
    loss = np.mean(-log_expit(t) + (1.0 - y) * t)
    grad = Z.T @ (np.exp(log_expit(t)) - y) / len(y) + lam * theta
    return loss + 0.5 * lam * (theta @ theta), grad


def regularised_minimiser(Z, y, lam):
    res = optimize.minimize(
        _objective,
        np.zeros(Z.shape[1]),
        args=(Z, y, lam),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 1000, "gtol": 1e-9, "ftol": 1e-15},
    )
    return res.x


def l2_knorm_noise(dim, scale, rng):
    """Density ``∝ exp(-|b|_2 / scale)`` on R^dim."""
    u = rng.standard_normal(dim)
    return rng.gamma(dim, scale) * u / np.linalg.norm(u)


def public_lambda(m, n, epsilon):
    """``max(2 m^{1.5} / (n epsilon), 1e-6)``: noise of mean norm 1 (module docstring)."""
    return max(2.0 * m**1.5 / (n * epsilon), 1e-6)


def fit_fixed(Z, y, epsilon, rng, lam=None):
    """epsilon-DP output perturbation with a public Lambda; returns theta (intercept first)."""
    n, m = Z.shape
    lam = public_lambda(m, n, epsilon) if lam is None else lam
    sensitivity = 2.0 * np.sqrt(m) / (n * lam)
    return regularised_minimiser(Z, y, lam) + l2_knorm_noise(m, sensitivity / epsilon, rng)


def fit_tuned(Z, y, epsilon, rng, factors=(0.1, 1.0, 10.0)):
    """The paper's private choice of Lambda among ``factors`` times :func:`public_lambda`."""
    n, m = Z.shape
    k = len(factors)
    parts = np.array_split(rng.permutation(n), k + 1)
    holdout = parts[-1]
    thetas, errors = [], []
    for f, part in zip(factors, parts[:-1]):
        lam = f * public_lambda(m, len(part), epsilon)
        theta = fit_fixed(Z[part], y[part], epsilon, rng, lam)
        thetas.append(theta)
        errors.append(len(holdout) * (1.0 - accuracy(theta, Z[holdout], y[holdout])))
    logits = -epsilon * np.asarray(errors) / 2.0
    p = np.exp(logits - logits.max())
    return thetas[rng.choice(k, p=p / p.sum())]
