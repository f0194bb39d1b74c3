"""AdaSSP and BoostedAdaSSP: sufficient-statistic perturbation with an adaptive ridge.

* AdaSSP: Y.-X. Wang, "Revisiting differentially private linear regression: optimal and
  adaptive prediction & estimation in unbounded domain", UAI 2018, Algorithm 2.
* BoostedAdaSSP: S. Tang, S. Aydore, M. Kearns, S. Rho, A. Roth, Y. Wang, Y.-X. Wang and
  Z. S. Wu, "Improved differentially private regression via gradient boosting", SaTML 2024
  (arXiv:2303.03451), Algorithm 1: one noisy ridge-regularised Gram matrix, then T rounds that
  each fit the clipped residuals through a fresh noisy ``X^T r``.

Own implementation. Both are (epsilon, delta)-DP through Gaussian DP (Dong, Roth and Su 2022):
the three (or 2 + T) Gaussian releases compose exactly to ``mu = sqrt(sum mu_i^2)`` and ``mu``
is the largest value whose trade-off curve gives ``delta(epsilon) <= delta``:
``delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``. This accounting is tighter
than the papers' per-release (epsilon/3, delta/3) split, so the anchors are, if anything,
stronger than published.

Replace-one sensitivities for rows ``x = [1, z]`` with ``z`` in [-1, 1]^p (so
``||x||^2 <= q = p + 1``) and ``|w| <= 1`` (see :class:`benchmarks.baselines.Box`):

* ``lambda_min(X^T X)``: the change ``x' x'^T - x x^T`` has eigenvalues in ``[-q, q]``, so by
  Weyl's inequality ``lambda_min`` moves by at most ``q``;
* ``X^T X`` (upper triangle, noise mirrored): ``||x x^T - x' x'^T||_F <= sqrt(2) q``;
* ``X^T w`` and ``X^T r`` with ``|r| <= 1``: ``||x w - x' w'||_2 <= 2 sqrt(q)``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats


def gdp_mu(epsilon, delta):
    """Largest ``mu`` such that mu-GDP implies (epsilon, delta)-DP (Dong-Roth-Su, Cor. 2.13)."""

    def excess(mu):
        d = stats.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * stats.norm.cdf(
            -epsilon / mu - mu / 2
        )
        return d - delta

    hi = 1.0
    while excess(hi) < 0:
        hi *= 2
    return optimize.brentq(excess, 1e-8, hi, xtol=1e-12) * (1 - 1e-9)


def _sym_noise(rng, q, sigma):
    E = np.triu(rng.standard_normal((q, q)))
    return sigma * (E + np.triu(E, 1).T)


def _adaptive_ridge(gram, rng, sigma_lam, sigma_gram, rho):
    """AdaSSP's ridge: a private lower confidence bound on ``lambda_min`` and the target level.

    ``lambda_tilde`` is the noisy smallest eigenvalue shifted down by its ``1 - rho/3``
    quantile (a lower bound with probability ``1 - rho/3``); the ridge is the amount that lifts
    ``lambda_tilde`` to the high-probability bound ``sigma_G sqrt(q log(2 q^2 / rho))`` of the
    operator norm of the symmetric Gram noise (Wang 2018, Algorithm 2, lines 2-3).
    """
    q = len(gram)
    lam_min = max(float(np.linalg.eigvalsh(gram)[0]), 0.0)
    shift = sigma_lam * stats.norm.ppf(1 - rho / 3)
    lam_tilde = max(lam_min + sigma_lam * rng.standard_normal() - shift, 0.0)
    return max(0.0, sigma_gram * math.sqrt(q * math.log(2 * q * q / rho)) - lam_tilde)


def adassp(Z, w, epsilon, delta, rng=None, rho=0.05):
    """AdaSSP on the scaled design ``Z`` (intercept column first) and target ``w``.

    Three Gaussian releases with ``mu / sqrt(3)`` each: ``lambda_min``, ``Z^T Z``, ``Z^T w``.
    Returns the scaled coefficients.
    """
    rng = np.random.default_rng(rng)
    q = Z.shape[1]
    mu1 = gdp_mu(epsilon, delta) / math.sqrt(3)
    s_lam, s_gram, s_y = q / mu1, math.sqrt(2) * q / mu1, 2 * math.sqrt(q) / mu1
    G = Z.T @ Z
    lam = _adaptive_ridge(G, rng, s_lam, s_gram, rho)
    G_noisy = G + _sym_noise(rng, q, s_gram)
    b_noisy = Z.T @ w + s_y * rng.standard_normal(q)
    return np.linalg.pinv(G_noisy + lam * np.eye(q), hermitian=True) @ b_noisy


def boosted_adassp(Z, w, epsilon, delta, rng=None, rounds=3, rho=0.05):
    """BoostedAdaSSP with ``rounds`` boosting rounds (T = 3 in the matrix).

    Budget (GDP): ``mu / sqrt(3)`` each for ``lambda_min`` and ``Z^T Z``, and ``mu / sqrt(3T)``
    for each round's ``Z^T r_t``, where ``r_t = clip(w - Z theta_{t-1}, -1, 1)`` (the paper's
    residual clipping at 1). ``theta_t = theta_{t-1} + (G~ + lambda I)^+ (Z^T r_t)~``.
    """
    rng = np.random.default_rng(rng)
    q = Z.shape[1]
    mu = gdp_mu(epsilon, delta)
    mu1, mu_t = mu / math.sqrt(3), mu / math.sqrt(3 * rounds)
    s_lam, s_gram, s_r = q / mu1, math.sqrt(2) * q / mu1, 2 * math.sqrt(q) / mu_t
    G = Z.T @ Z
    lam = _adaptive_ridge(G, rng, s_lam, s_gram, rho)
    inv = np.linalg.pinv(G + _sym_noise(rng, q, s_gram) + lam * np.eye(q), hermitian=True)
    theta = np.zeros(q)
    for _ in range(rounds):
        r = np.clip(w - Z @ theta, -1.0, 1.0)
        theta = theta + inv @ (Z.T @ r + s_r * rng.standard_normal(q))
    return theta


__all__ = ["adassp", "boosted_adassp", "gdp_mu"]
