r"""Multinomial (softmax) objective perturbation: constants, objective and solver.

Parameters are a matrix ``Theta`` of shape (K, m) (one row per class; column 0 is the
intercept when fitted, so ``z = [1, x]``), handled flattened row by row. For one example the
loss is ``l(Theta; z, y) = logsumexp(Theta z) - (Theta z)_y`` and the perturbed mean-form
objective is

    J(Theta) = (1/n) sum_i l(Theta; z_i, y_i) + alpha/(2n) |W|^2 + gamma/(2n) |Theta|^2
               + <V, Theta>/n,

with W the coefficient columns (not the intercept). The whole fit is *one* problem with the
full epsilon (no split over classes).

Sensitivity (``softmax_sensitivity``)
-------------------------------------
The gradient of one example is the rank-one matrix ``G = (p - e_y) z^T`` with
``p = softmax(Theta z)``. Every entry lies in (-1, 1), so the entries of ``G - G'`` lie in
(-2, 2): ``Delta_inf = 2``. For the entrywise lp norm, ``|a b^T|_p = |a|_p |b|_p`` and
``|p - e_y|_p^p = (1 - p_y)^p + sum_{k != y} p_k^p <= 2 (1 - p_y)^p <= 2`` (the p_k, k != y,
sum to ``1 - p_y``), so ``|G|_p <= (2m)^{1/p}`` and ``Delta_p = 2 (2m)^{1/p}`` by the triangle
inequality. This does not grow with K: one example moves all K rows, but its weights
``p - e_y`` have l1 norm at most 2.

Class-wise norm ``"l1_linf"`` (the multinomial noise of ``norm="auto"``)
-----------------------------------------------------------------------
The entrywise norms ignore that all K rows of ``G`` are multiples of the *same* z by the
entries of one vector ``a = p - e_y`` with ``|a|_1 = 2 (1 - p_y) < 2``. The norm
``|M|_{1,inf} = sum_k max_j |M_kj|`` (l1 over the class rows of each row's linf norm) uses it:
``|G|_{1,inf} = sum_k |a_k| |z|_inf <= |a|_1 < 2``, so ``Delta_{1,inf} = 4`` by the triangle
inequality (approached by two examples with opposite sign vectors z and labels whose
probabilities are near 0).

Sampler (``rows_perturbation``). The K-norm density factorises over the class rows,
``exp(-|V|_{1,inf}/s) = prod_k exp(-|V_k|_inf / s)`` with ``s = Delta / epsilon``, so the
rows ``V_k`` are *independent*, each the dim-dimensional linf K-norm noise of scale s:
``V_k = r_k (2 W_k - 1)`` with ``r_k ~ Gamma(dim + 1, s)`` and ``W_k`` uniform in the unit
cube (``|V_k|_inf`` is then Gamma(dim, s), the radial law of ``exp(-|v|_inf/s)`` in dim
dimensions). This is the same law as the polar form ``V = r x``, ``r ~ Gamma(K dim + 1, s)``,
x uniform in the unit ball (the l1-sum of K cubes): its block radii ``r t_k`` with
``(t_1, ..., t_K, 1 - sum t) ~ Dirichlet(dim, ..., dim, 1)`` are i.i.d. Gamma(dim, s) by the
gamma-Dirichlet construction, and within a block the direction is the cone measure of the
cube. The product form needs nothing but the exact linf sampler of
:mod:`dpreg.noise._exact`, so V is an *exact grid release* of the ideal vector on the public
grid of :func:`._certify.perturbation_grid` for the stacked dimension K dim, like every
other perturbation vector (``docs/floating_point.md``, section 5a). Its second moment is
``E|V|_2^2 = (Delta/epsilon)^2 K dim (dim + 1)(dim + 2) / 3`` (K rows of
``E|V_k|_2^2 = (dim + 1)(dim + 2) dim s^2 / 3``), against
``(2/epsilon)^2 (K dim + 1)(K dim + 2) K dim / 3`` for the entrywise linf norm: a ratio
``4 (dim + 1)(dim + 2) / ((K dim + 1)(K dim + 2))``, about ``4/K^2`` (0.62 for iris, 0.04 for
digits). ``|v|_2 <= sqrt(K dim) |v|_{1,inf}``, so the public bounds of :mod:`._certify` hold
unchanged.

Jacobian (``softmax_gamma``)
----------------------------
The Hessian of one example is ``A (x) z z^T`` with ``A = diag(p) - p p^T`` (positive
semi-definite, rank <= K - 1, trace ``1 - |p|^2 <= 1 - 1/K``). With ``C >= gamma I`` (the rest
of the Hessian of J in sum form), ``det(C + H')/det(C + H) <= det(I + H'/gamma) =
prod_i (1 + mu_i |z|^2 / gamma)`` over the eigenvalues mu_i of A. By concavity of log, for at
most K - 1 non-zero eigenvalues summing to at most ``1 - 1/K``, the product is at most
``(1 + |z|^2 / (K gamma))^{K-1} <= (1 + m / (K gamma))^{K-1}``, attained at ``Theta = 0``
(uniform p) and a sign vector z. The Jacobian factor is therefore at most
``exp(epsilon (1 - q))`` when ``gamma = (m/K) / (exp(epsilon (1 - q)/(K - 1)) - 1)``.
The noise factor is at most ``exp(epsilon q)`` as in the binary case, and the certified
release of :mod:`._certify` applies unchanged (J is ``gamma/n``-strongly convex).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize
from scipy.special import logsumexp, softmax

from ._certify import _CHUNK, _U, _margins_accurate, _two_product, _two_sum, perturbation_grid

#: Name of the class-wise norm ``sum_k max_j |M_kj|`` (module docstring).
ROWS = "l1_linf"


def softmax_sensitivity(norm, dim):
    """``Delta_{1,inf} = 4``, ``Delta_inf = 2``, ``Delta_p = 2 (2 dim)^{1/p}`` (module doc)."""
    if norm == ROWS:
        return 4.0
    if norm == "linf":
        return 2.0
    p = {"l1": 1.0, "l2": 2.0}.get(norm, norm)
    return 2.0 * (2.0 * dim) ** (1.0 / float(p))


def softmax_gamma(epsilon, q, dim, n_classes):
    """``(dim / K) / (exp(epsilon (1 - q) / (K - 1)) - 1)`` (module docstring)."""
    expo = epsilon * (1.0 - q) / (n_classes - 1)
    if expo >= 700:
        return float(np.finfo(float).tiny)
    return max((dim / n_classes) / math.expm1(expo), float(np.finfo(float).tiny))


@functools.lru_cache(maxsize=64)
def _unit_noise_second_moment(norm, dim, n_classes):
    """``E|V|_2^2`` of the softmax K-norm noise at epsilon = 1 (scales as ``1/epsilon^2``)."""
    if norm == ROWS:  # closed form (module docstring)
        return softmax_sensitivity(ROWS, dim) ** 2 * n_classes * dim * (dim + 1) * (dim + 2) / 3
    from ..noise import KNormMechanism

    total = n_classes * dim
    mech = KNormMechanism(norm, total, softmax_sensitivity(norm, dim), 1.0, random_state=0)
    return mech.variance * total


def rows_perturbation(n_classes, dim, sensitivity, epsilon, rng):
    """The class-wise perturbation vector: an exact grid release of the ideal K-norm draw.

    The density ``∝ exp(-epsilon |V|_{1,inf} / sensitivity) = prod_k exp(-epsilon |V_k|_inf /
    sensitivity)`` is a *product* over the class rows ``V_k``: the K rows are independent,
    each the ``dim``-dimensional linf K-norm noise of the same scale (module docstring). So
    the ideal V is K independent rows of the exact linf sampler of
    :func:`dpreg.noise._exact.release_knorm` (``r (2W - 1)``, r ~ Gamma(dim + 1, scale)),
    each coordinate rounded exactly to the grid of
    :func:`._certify.perturbation_grid` for the stacked dimension ``K dim`` (whose shift bound
    ``sqrt(K dim) g / 2`` the AMP plan charges, as for the binary b). Returns the (K, dim)
    matrix flattened row by row; every entry is a multiple of the public grid step.
    ``docs/floating_point.md``, section 5a.
    """
    from ..noise._exact import release_knorm  # noqa: PLC0415

    bits = perturbation_grid(n_classes * dim, sensitivity, epsilon).bits
    zeros = np.zeros((n_classes, dim))
    V = release_knorm(zeros, math.inf, dim, sensitivity, epsilon, rng, grid_bits=bits)
    return V.ravel()


def float_rows_noise(n_classes, dim, scale, rng):
    """The former float64 draw of the class-wise noise (``r t_k u_k``, module docstring).

    Exact in law but *not* floating-point safe (the low bits of a float product): kept only
    as the reference ("old") sampler of the tests' controls, like
    :func:`dpreg.noise._exact.float_knorm_sample`.
    """
    r = rng.gamma(n_classes * dim + 1.0, scale)
    t = rng.dirichlet(np.r_[np.full(n_classes, float(dim)), 1.0])[:n_classes]
    w = rng.uniform(-1.0, 1.0, size=(n_classes, dim))
    u = w / np.abs(w).max(axis=1, keepdims=True)
    return (r * t[:, None] * u).ravel()


def choose_softmax_norm(dim, n_classes):
    """``norm="auto"``: the K-norm (l1_linf, linf, l2) with the smallest ``E|V|_2^2``.

    A function of (m, K) only; l1_linf for all but tiny m K (e.g. linf at K = 3, m = 1).
    """
    cands = (ROWS, "linf", "l2")
    return min(cands, key=lambda k: _unit_noise_second_moment(k, dim, n_classes))


def default_q_softmax(epsilon, dim, n_classes, norm="linf", n_samples=10_000, ridge=0.0):
    """Data-independent q for the softmax model (``q="auto"``).

    The parameter-RMSE form of the binary rule (:func:`._logistic_core.nominal_error` with
    full shrinkage credit, the binary default before its classifier proxy; not re-measured
    for the softmax model) adapted to the softmax constants: per class,
    ``sqrt(g^2 R^2 + E|V|^2 / (K (epsilon q n)^2)) / (h + g)`` with
    ``g = (gamma_softmax + ridge) / n`` and the same nominal curvature h and radius R; the
    minimiser over q in {0.30, 0.31, ..., 0.99}. Uses only (epsilon, m, K, norm, n).
    """
    from ._logistic_core import NOMINAL_CURVATURE, NOMINAL_RADIUS

    grid = np.round(np.arange(0.30, 0.995, 0.01), 2)
    h, R = NOMINAL_CURVATURE, NOMINAL_RADIUS
    ev = _unit_noise_second_moment(norm, dim, n_classes)
    cost = []
    for q in grid:
        g = (softmax_gamma(epsilon, q, dim, n_classes) + ridge) / n_samples
        noise_sq = ev / (n_classes * (epsilon * q * n_samples) ** 2)
        cost.append(math.sqrt(g * g * R * R + noise_sq) / (h + g))
    return float(grid[int(np.argmin(cost))])


def _ridge_vector(n_classes, dim, fit_intercept, alpha_l2):
    r = np.full((n_classes, dim), float(alpha_l2))
    if fit_intercept:
        r[:, 0] = 0.0
    return r.ravel()


class SoftmaxProblem:
    """The perturbed multinomial objective, in the interface :func:`certify_problem` uses.

    ``Z1`` is the design with the intercept column (if any) already prepended, ``Y`` the
    one-hot labels (n, K) (all zeros never occurs: labels are indices of the public classes).
    """

    l1 = 0.0

    def __init__(self, Z1, Y, fit_intercept, alpha_l2, gamma, V, sample_weight=None):
        self.Z1, self.Y = Z1, Y
        self.sw = sample_weight  # weights in [0, 1] multiply each example's loss, or None
        self.n, self.dim = Z1.shape
        self.K = Y.shape[1]
        self.ridge = _ridge_vector(self.K, self.dim, fit_intercept, alpha_l2)
        self.gamma, self.V = float(gamma), np.asarray(V, dtype=float)
        self.c = np.zeros(self.K * self.dim)

    def _penalty(self, theta):
        return 0.5 * self.gamma * (theta @ theta) + 0.5 * (self.ridge * theta) @ theta

    def value_and_gradient(self, theta):
        T = self.Z1 @ theta.reshape(self.K, self.dim).T  # (n, K) margins
        lse = logsumexp(T, axis=1)
        if self.sw is None:
            loss = (lse.sum() - np.sum(T * self.Y)) / self.n
        else:
            loss = self.sw @ (lse - np.sum(T * self.Y, axis=1)) / self.n
        R = np.exp(T - lse[:, None]) - self.Y
        if self.sw is not None:
            R *= self.sw[:, None]
        grad = (R.T @ self.Z1).ravel() / self.n
        grad += (self.gamma * theta + self.ridge * theta + self.V) / self.n
        return loss + (self._penalty(theta) + self.V @ theta) / self.n, grad

    def value(self, theta):
        return self.value_and_gradient(theta)[0]

    def gradient(self, theta):
        return self.value_and_gradient(theta)[1]

    def hessian(self, theta):
        K, dim = self.K, self.dim
        P = softmax(self.Z1 @ theta.reshape(K, dim).T, axis=1)
        H = np.empty((K * dim, K * dim))
        for k in range(K):
            for j in range(k, K):
                w = P[:, k] * ((k == j) - P[:, j]) / self.n
                if self.sw is not None:
                    w *= self.sw
                block = self.Z1.T @ (self.Z1 * w[:, None])
                H[k * dim : (k + 1) * dim, j * dim : (j + 1) * dim] = block
                H[j * dim : (j + 1) * dim, k * dim : (k + 1) * dim] = block.T
        H[np.diag_indices_from(H)] += (self.gamma + self.ridge) / self.n
        return H

    def measure(self, theta):
        """Accurate gradient and its rounding bound (same scheme as the binary one).

        Loss terms ``(p_k - y_k) z_j`` are at most 1 in absolute value; softmax costs about
        ``(K + 4) u`` per probability; the margins' rounding ``dim u |theta_k|_1`` reaches p
        through the softmax Jacobian, whose rows have l1 norm at most 1/2 (Dot2 margins when
        that term would exceed 1e-13).
        """
        K, dim, n = self.K, self.dim, self.n
        Th = theta.reshape(K, dim)
        margin_err = dim * _U * float(np.abs(Th).sum(axis=1).max()) / 2.0
        plain = margin_err <= 1e-13
        parts = np.empty((max(1, -(-n // _CHUNK)), K * dim))
        for c, start in enumerate(range(0, n, _CHUNK)):
            Zc = self.Z1[start : start + _CHUNK]
            if plain:
                T = Zc @ Th.T
            else:
                T = np.column_stack([_margins_accurate(Zc, Th[k], 0.0) for k in range(K)])
            R = softmax(T, axis=1) - self.Y[start : start + _CHUNK]
            if self.sw is not None:  # one more rounding per term: + u below
                R *= self.sw[start : start + _CHUNK, None]
            parts[c] = (R.T @ Zc).ravel()
        loss = [math.fsum(parts[:, j]) for j in range(K * dim)]
        p1, e1 = _two_product(np.full_like(theta, self.gamma), theta)
        p2, e2 = _two_product(self.ridge, theta)
        s1, f1 = _two_sum(p1, self.V)
        s2, f2 = _two_sum(s1, p2)
        g = np.array([math.fsum(t) for t in zip(loss, s2, e1, e2, f1, f2)]) / n
        pen_err = 8.0 * _U * _U * ((self.gamma + self.ridge) * np.abs(theta) + np.abs(self.V))
        ulps = _CHUNK + K + 22 + (0 if self.sw is None else 1)
        per_coord = ulps * _U + (margin_err if plain else 0.0)
        err = math.sqrt(K * dim) * per_coord + float(np.linalg.norm(pen_err)) / n
        return g, err, g


def softmax_lipschitz(dim, gamma, ridge, n):
    """``dim/2 + (gamma + ridge)/n``: ``|A| <= 1/2`` and ``|z|^2 <= dim``."""
    return dim / 2.0 + (gamma + ridge) / n


def solve_softmax_lbfgs(problem, max_iter):
    """L-BFGS warm start for :func:`certify_problem` (only a starting point)."""
    res = optimize.minimize(
        problem.value_and_gradient,
        np.zeros(problem.K * problem.dim),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "gtol": 1e-8, "ftol": 1e-16, "maxcor": 20},
    )
    x = res.x if np.all(np.isfinite(res.x)) else np.zeros_like(res.x)
    return x, int(res.nit)
