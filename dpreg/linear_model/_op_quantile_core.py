r"""Numerical core of :class:`~dpreg.ObjectivePerturbationQuantileRegressor`.

Everything here works on *scaled* data: a design matrix ``W`` whose rows ``w_i`` lie in
``[-1, 1]^m`` (the intercept column of ones included when fitted) and responses ``v_i`` in
``[-1, 1]`` (clipped into the public response box and mapped onto it). The loss is the
Gaussian convolution-smoothed check loss (Fernandes, Guerre & Horta 2021) with a public
bandwidth ``h``:

    l_h(u) = E rho_tau(u + h Z)  (Z standard normal)  = u (tau - Phi(-u/h)) + h phi(u/h),
    l_h'(u) = tau - Phi(-u/h)  in (tau - 1, tau),
    l_h''(u) = phi(u/h) / h    in (0, 1 / (h sqrt(2 pi))],

with ``u = v - w^T theta``. As a function of theta one example contributes the gradient
``(Phi(-u/h) - tau) w`` and the rank-one Hessian ``l_h''(u) w w^T``. The perturbed mean-form
objective is

    J(theta) = (1/n) sum_i l_h(v_i - w_i^T theta) + gamma/(2n) |theta|_2^2 + b.theta/n.

This module holds the loss, its constants (:func:`hessian_bound`, :func:`default_bandwidth`,
:func:`nominal_loss`), a warm-start solver and the :class:`QuantileProblem` that
:func:`dpreg.linear_model._certify.certify_problem` iterates to a certified point. The privacy
argument is in :mod:`dpreg.linear_model.op_quantile` and ``docs/op_quantile_regression.md``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize
from scipy.special import ndtr
from threadpoolctl import threadpool_limits

from ._certify import (
    _CHUNK,
    _U,
    _margins_accurate,
    _smooth_gradient,
    combine_parts,
    rounding_bound,
)

_SQRT_2PI = math.sqrt(2.0 * math.pi)
#: Public floor and cap of the automatic bandwidth (scaled response units, where the response
#: box is [-1, 1]). The floor keeps the curvature bound 1 / (h sqrt(2 pi)) and the rounding
#: error of the certificate (proportional to 1/h) small; the cap keeps the smoothing bias
#: bounded when ``n epsilon`` is tiny.
MIN_BANDWIDTH = 1e-3
MAX_BANDWIDTH = 0.5


def _phi(x):
    return np.exp(-0.5 * x * x) / _SQRT_2PI


def default_bandwidth(n_samples, dim, epsilon):
    """``h = clip(sqrt(dim / (n epsilon)), 1e-3, 0.5)`` in scaled response units (public).

    Why this rate: the ridge the proof needs is ``gamma ~ lambda / epsilon`` with
    ``lambda = m / (h sqrt(2 pi))``, so its shrinkage of the mean-form minimiser is of order
    ``m / (h n epsilon)`` relative to the loss curvature, while smoothing moves the solution by
    ``O(h^2)`` (zero at the median of a symmetric error). ``h ~ sqrt(m / (n epsilon))`` makes
    the ridge bias of order ``sqrt(m / (n epsilon))``, the same order as the noise term
    ``m Delta / (n epsilon)`` for moderate m, and the smoothing bias of order
    ``m / (n epsilon)``. A function of public quantities only (n, m, epsilon).
    """
    h = math.sqrt(float(dim) / (float(n_samples) * float(epsilon)))
    return float(min(max(h, MIN_BANDWIDTH), MAX_BANDWIDTH))


def hessian_bound(row_sq_max, bandwidth):
    """``lambda = sup l_h'' * sup |w|_2^2 = row_sq_max / (h sqrt(2 pi))``.

    One example's Hessian ``l_h''(u) w w^T`` has the single non-zero eigenvalue
    ``l_h''(u) |w|_2^2``; ``l_h'' = phi(u/h)/h`` peaks at ``u = 0``. Both suprema are attained
    together (a row at a vertex of the feature box with ``v = w^T theta``), so the bound is
    tight.
    """
    return float(row_sq_max) / (float(bandwidth) * _SQRT_2PI)


#: Nominal model of the mean smoothed check loss for the ``q="auto"`` rule (public constants,
#: never read from the data): scaled residual density 1.2 at the quantile (a normal error
#: with the response box at +-3 sd) times E[z^2] = 1/3, and a coefficient radius of 1.
NOMINAL_CURVATURE = 0.4
NOMINAL_RADIUS = 1.0


def nominal_loss(row_sq_max, bandwidth, sensitivity):
    """The ``loss`` tuple of :func:`._logistic_core.default_q` for this loss."""
    return (hessian_bound(row_sq_max, bandwidth), sensitivity, NOMINAL_CURVATURE, NOMINAL_RADIUS)


# --------------------------------------------------------------------------------------------
# Objective (plain arithmetic: for the warm start only)
# --------------------------------------------------------------------------------------------


def objective(theta, W, v, tau, h, gamma, V):
    """Value and gradient of the mean-form ``J`` (plain floating point)."""
    n = W.shape[0]
    u = v - W @ theta
    x = u / h
    cdf = ndtr(-x)
    loss = float(u @ (tau - cdf) + h * _phi(x).sum())
    coef = cdf - tau
    grad = (W.T @ coef + gamma * theta + V) / n
    value = loss / n + (0.5 * gamma * (theta @ theta) + V @ theta) / n
    return value, grad


def hessian(theta, W, v, h, gamma):
    """Hessian ``(1/n) sum_i phi(u_i/h)/h w_i w_i^T + gamma/n I`` of ``J``."""
    n = W.shape[0]
    curv = _phi((v - W @ theta) / h) / (h * n)
    H = W.T @ (W * curv[:, None])
    H[np.diag_indices_from(H)] += gamma / n
    return H


def solve_lbfgs(W, v, tau, h, gamma, V, max_iter=1000, gtol=1e-9):
    """Warm start: L-BFGS-B on ``J`` from 0 (single-threaded BLAS, as for the logistic model).

    Only a starting point for :func:`certify_problem`: its path, iteration count and any
    failure never reach the release (the certificate alone decides when to stop).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        res = optimize.minimize(
            objective,
            np.zeros(W.shape[1]),
            args=(W, v, tau, h, gamma, V),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": max_iter, "gtol": gtol, "ftol": 1e-16, "maxcor": 20},
        )
    x = res.x if np.all(np.isfinite(res.x)) else np.zeros(W.shape[1])
    return x, int(res.nit)


# --------------------------------------------------------------------------------------------
# Accurate gradient and its rounding bound (the certificate)
# --------------------------------------------------------------------------------------------


def loss_gradient_parts(theta, W, v, tau, h):
    """Chunk sums of ``sum_i (Phi(-u_i/h) - tau) w_i`` (``_CHUNK`` rows each).

    The margins ``w^T theta`` are computed in twice the working precision (Dot2), so their
    error is about ``u |w^T theta|`` whatever the size of theta; every term
    ``(Phi - tau) w_ij`` is at most 1 in absolute value, as for the logistic loss.
    """
    n = W.shape[0]
    parts = np.empty((max(1, -(-n // _CHUNK)), W.shape[1]))
    for k, start in enumerate(range(0, n, _CHUNK)):
        Wc = W[start : start + _CHUNK]
        t = _margins_accurate(Wc, theta, 0.0)
        r = ndtr((t - v[start : start + _CHUNK]) / h) - tau
        parts[k] = Wc.T @ r
    return parts


def term_error(theta, h):
    r"""Bound on the absolute error of one computed term ``Phi(-u/h) - tau`` beyond the few
    ulps that :func:`._certify.rounding_bound` already charges per term.

    With Dot2, ``|t_hat - t| <= u |t| + gamma_m^2 sum_j |w_j theta_j|`` (``gamma_m = m u /
    (1 - m u)``); the difference ``t - v`` and the division by h add ``u`` relative each, so
    ``|x_hat - x| <= u (|t| + 2 |t - v|) / h + gamma_m^2 |theta|_1 / h`` with ``x = (t - v)/h``.
    With ``|v| <= 1``, ``|t| <= 1 + |t - v|`` and ``Phi' = phi``, the induced error of
    ``Phi(x)`` is at most ``phi(xi) |x_hat - x|`` with xi between the two; as the error is
    relatively tiny, ``phi(xi) <= 1.01 phi(x)`` wherever ``phi(x)`` is not already below
    ``u``, and ``phi(x) (1/h + 3 |x|) <= 1/(h sqrt(2 pi)) + 3 sup_x x phi(x)``
    (``sup x phi(x) = phi(1) < 0.25``). scipy's ``ndtr`` is accurate to a few ulps of its
    value (at most 1): we charge 16 u for it and for the subtraction of tau.
    """
    m = theta.shape[0]
    gm = m * _U / (1.0 - m * _U)
    lin = 1.01 * _U * (1.0 / (h * _SQRT_2PI) + 0.75)
    dot2 = gm * gm * float(np.abs(theta).sum()) / (h * _SQRT_2PI)
    return lin + dot2 + 16.0 * _U


class QuantileProblem:
    """The perturbed smoothed-check-loss objective as seen by :func:`certify_problem`."""

    l1 = 0.0

    def __init__(self, W, v, tau, h, gamma, V):
        self.W, self.v, self.tau, self.h = W, v, float(tau), float(h)
        self.gamma, self.V = float(gamma), np.asarray(V, dtype=float)
        self.c = np.zeros(W.shape[1])

    def measure(self, theta):
        """``(s, rounding bound, g)``: the accurate mean-form gradient (J is smooth: s = g)."""
        W, v = self.W, self.v
        loss = combine_parts(loss_gradient_parts(theta, W, v, self.tau, self.h))
        g = _smooth_gradient(theta, W, None, False, 0.0, self.gamma, self.V, loss=loss)
        err = rounding_bound(theta, W.shape[0], self.gamma, self.V, 0.0, False)
        err += math.sqrt(theta.shape[0]) * term_error(theta, self.h)
        return g, err, g

    def value(self, theta):
        return objective(theta, self.W, self.v, self.tau, self.h, self.gamma, self.V)[0]

    def gradient(self, theta):
        return objective(theta, self.W, self.v, self.tau, self.h, self.gamma, self.V)[1]

    def hessian(self, theta):
        return hessian(theta, self.W, self.v, self.h, self.gamma)


def lipschitz(row_sq_max, bandwidth, gamma, n):
    """Public Lipschitz constant of the mean-form gradient: ``lambda + gamma / n``."""
    return hessian_bound(row_sq_max, bandwidth) + gamma / n
