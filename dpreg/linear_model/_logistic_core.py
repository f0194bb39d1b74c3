"""Numerical core of :class:`~dpreg.ObjectivePerturbationLogistic`.

Everything here works on *scaled* data: a design matrix ``Z`` whose entries lie in [-1, 1]
(the intercept column, when fitted, is handled implicitly as a column of ones) and labels
``y`` in {0, 1}. The estimator module holds the privacy argument; this module holds the
constants it relies on (sensitivity, Hessian bound, gamma, the default budget share ``q``)
and the two solvers for the perturbed objective

    J(theta) = (1/n) sum_i l(theta; z_i, y_i) + r(theta)/n + gamma/(2n) |theta|_2^2 + V.theta/n,

with ``l(theta; z, y) = log(1 + exp(theta.z)) - y theta.z`` and
``r(theta) = alpha * ((1 - l1_ratio)/2 |w|_2^2 + l1_ratio |w|_1)`` (``w`` = theta without the
intercept).
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings

import numpy as np
from scipy import optimize
from scipy.special import expit
from threadpoolctl import threadpool_limits

# --------------------------------------------------------------------------------------------
# Constants of the privacy proof
# --------------------------------------------------------------------------------------------


def gradient_sensitivity(norm, dim):
    """Bound on ``||grad l(theta; x, y) - grad l(theta; x', y')||_K`` over everything.

    For ``x, x'`` in ``[-1, 1]^dim``, ``y, y'`` in {0, 1} and every ``theta``, the difference is
    ``a x - b x'`` with ``a = sigmoid(theta.x) - y`` and ``b = sigmoid(theta.x') - y'`` both in
    ``(-1, 1)``; every coordinate is therefore in ``(-2, 2)``. Hence the lp-sensitivity is
    ``2 * dim**(1/p)``: 2 for linf, ``2 sqrt(dim)`` for l2 and ``2 dim`` for l1 (all suprema,
    approached as ``|theta| -> inf`` with ``x = -x'`` a sign vector and opposite labels).

    Parameters
    ----------
    norm : {"l1", "l2", "linf"} or float >= 1
    dim : int
        Number of coordinates of theta (features plus the intercept column if fitted).
    """
    if norm == "linf" or (isinstance(norm, numbers.Real) and math.isinf(norm)):
        return 2.0
    p = {"l1": 1.0, "l2": 2.0}.get(norm, norm)
    return 2.0 * float(dim) ** (1.0 / float(p))


def hessian_bound(dim):
    """``lambda = dim / 4``: the largest eigenvalue of ``sigmoid'(t) x x^T`` for x in [-1,1]^dim.

    ``sigmoid'(t) = s(1 - s) <= 1/4`` and ``x x^T`` has the single non-zero eigenvalue
    ``|x|_2^2 <= dim``; equality at ``theta = 0`` and ``x`` a sign vector.
    """
    return float(dim) / 4.0


def gamma_for(epsilon, q, dim, ridge=0.0, n_free=None, lam=None):
    """The smallest ridge gamma the proof allows: ``lambda / (exp(epsilon (1 - q)) - 1)``.

    ``lam``: the bound ``lambda`` on the largest eigenvalue of one example's (rank-one) loss
    Hessian; default :func:`hessian_bound` (the logistic loss). Another loss (e.g. the smoothed
    check loss of :mod:`._op_quantile`) passes its own; the argument below only uses that bound.

    The Jacobian step of the proof needs ``1 + sup z^T C^{-1} z / 4 <= exp(epsilon (1 - q))``
    where ``C >= gamma I + hess r``. By the matrix determinant lemma the changed example adds
    ``1 + s(1-s) z^T C^{-1} z`` to the determinant ratio, and ``z_j^2 <= 1``. Without a user
    ridge this is ``lambda / gamma <= expm1(epsilon (1 - q))``. When ``r`` contains the ridge
    ``ridge/2 |w|^2`` on all but ``n_free`` coordinates (the unpenalised intercept),
    ``C >= diag(gamma, ..., gamma + ridge)`` and the condition relaxes to
    ``(n_free / gamma + (dim - n_free) / (gamma + ridge)) / 4 <= expm1(epsilon (1 - q))``,
    solved here for gamma (the user's ridge already pays part of the Jacobian).

    Any larger value keeps the guarantee. For huge ``epsilon`` the formula underflows; the
    result is floored at the smallest positive normal float so that the objective stays
    strictly convex (raising gamma never hurts privacy).
    """
    lam = hessian_bound(dim) if lam is None else float(lam)
    expo = epsilon * (1.0 - q)
    if expo >= 700:
        return float(np.finfo(float).tiny)
    budget = math.expm1(expo)
    gamma = lam / budget
    if ridge > 0:
        n_free = dim if n_free is None else int(n_free)
        if n_free == 0:
            gamma = lam / budget - ridge
        elif n_free < dim:
            # n_free/g + k/(g + ridge) = 4 B  <=>  4B g^2 + (4B ridge - dim) g - n_free ridge = 0;
            # take the positive root in a cancellation-free form.
            # (the same with lam in place of dim / 4: divide the condition by 4 lam / dim)
            a2, b1, c0 = 4.0 * budget, 4.0 * budget * ridge - dim, n_free * ridge
            a2 *= dim / (4.0 * lam)
            b1 = a2 * ridge - dim
            disc = math.sqrt(b1 * b1 + 4.0 * a2 * c0)
            root = 2.0 * c0 / (b1 + disc) if b1 > 0 else (disc - b1) / (2.0 * a2)
            gamma = min(gamma, root * (1.0 + 1e-9))  # stay on the safe side of the root
    return max(gamma, float(np.finfo(float).tiny))


@functools.lru_cache(maxsize=64)
def _unit_noise_second_moment(norm, dim):
    """``E|V|_2^2`` of the K-norm noise at epsilon = 1 (it scales as ``1/epsilon^2``)."""
    from ..noise import KNormMechanism

    mech = KNormMechanism(norm, dim, gradient_sensitivity(norm, dim), 1.0, random_state=0)
    return mech.variance * dim


#: Nominal curvature of the mean logistic loss: sigmoid'(0) = 1/4 times E[z^2] = 1/3 for a
#: feature spread uniformly over [-1, 1]. A fixed constant, never read from the data.
NOMINAL_CURVATURE = 1.0 / 12.0
#: Nominal Euclidean norm of the scaled coefficient vector (a moderately strong signal).
NOMINAL_RADIUS = 2.0


#: Share of the ridge's shrinkage the classifier proxy credits (0: first order, 1: the
#: isotropic parameter RMSE). Chosen by a paired sweep on five real data sets
#: (``docs/objective_perturbation.md``, "The classifier rule for q"); a public constant.
SHRINKAGE_CREDIT = 0.1


def nominal_error(epsilon, q, dim, norm, n_samples, ridge=0.0, n_free=None, loss=None):
    """Data-independent error proxy for the released theta at budget share ``q``.

    For the logistic loss (``loss=None``) this is the proxy of a *classifier*; for another
    loss (the smoothed check loss of the quantile regressor) it is a parameter RMSE, since a
    regression uses the size of theta, not only its direction (credit 1 below).

    ``loss``: None for the logistic loss, else ``(lam, sensitivity, curvature, radius)`` of
    another loss (its Hessian bound, gradient sensitivity in ``norm``, and the nominal
    curvature and radius of the model below, all public constants).

    Model the mean loss as the quadratic ``h/2 |theta - theta0|^2`` with ``h`` =
    :data:`NOMINAL_CURVATURE` and ``|theta0|_2`` = :data:`NOMINAL_RADIUS`, and let
    ``g = (gamma + ridge) / n``. The perturbed minimiser solves ``(h + g) theta = h theta0 -
    V/n``, so its error is ``(-g theta0 - V/n) / (h + g)`` with root mean square
    ``sqrt(g^2 R^2 + E|V|_2^2 / n^2) / (h + g)`` (the rule's proxy before issue 14's
    classification matrix). That form falls as g grows past h: a huge ridge shrinks both the
    estimate and its noise towards 0, and a parameter RMSE counts the shrinkage as a gain. A
    classifier uses only the direction of theta, which a global rescaling leaves unchanged;
    with the real (anisotropic) curvature the ridge's lasting effect is a direction bias of
    relative size ``g / h_i`` in an eigendirection of curvature ``h_i``. To first order in
    ``g / h`` the error is ``sqrt(g^2 R^2 + E|V|^2 / n^2) / h``, which charges the ridge
    fully. The proxy is

        sqrt(g^2 R^2 + E|V|_2^2 / n^2) / (h + c g),    c = SHRINKAGE_CREDIT = 0.1,

    between the two: at very small ``n epsilon`` a large ridge turns theta towards the mean
    gradient ``h theta0``, itself a usable direction, and a small credit for it was the most
    accurate choice of the measured family (c in {0, 0.1, 0.2, 0.3, 0.5, 1}).
    """
    lam, sens, h, R = (None, None, NOMINAL_CURVATURE, NOMINAL_RADIUS) if loss is None else loss
    g = (gamma_for(epsilon, q, dim, ridge, n_free, lam) + ridge) / n_samples
    noise_sq = _unit_noise_second_moment(norm, dim) / (epsilon * q * n_samples) ** 2
    if sens is not None:  # the noise scales with the sensitivity
        noise_sq *= (sens / gradient_sensitivity(norm, dim)) ** 2
    credit = SHRINKAGE_CREDIT if loss is None else 1.0
    return math.sqrt(g * g * R * R + noise_sq) / (h + credit * g)


#: Largest q the ``q="auto"`` rule may pick. It binds at very small ``n epsilon`` and for
#: l2 and l1 noise in higher dimensions. Past 0.9, q buys at most 1/0.9 - 1 = 11 % less noise (V's
#: scale is 1/q) for a ridge several times larger.
MAX_AUTO_Q = 0.90


def default_q(epsilon, dim, norm="linf", n_samples=10_000, ridge=0.0, n_free=None, loss=None):
    """Data-independent share of the budget spent on the noise vector V (``q="auto"``).

    The minimiser over ``q`` in {0.30, 0.31, ..., 0.90} (:data:`MAX_AUTO_Q`) of
    :func:`nominal_error`, a function of the public quantities ``(epsilon, dim, norm, n)``
    only (n is public under replace-one adjacency), so choosing q costs no privacy. ``loss``
    as in :func:`nominal_error` (None: the logistic loss). Measured on the real-data
    classification matrix, the logistic rule lands near the most accurate fixed q of a paired
    sweep (``docs/objective_perturbation.md``, "The classifier rule for q").
    """
    grid = np.round(np.arange(0.30, MAX_AUTO_Q + 0.005, 0.01), 2)
    cost = [nominal_error(epsilon, q, dim, norm, n_samples, ridge, n_free, loss) for q in grid]
    return float(grid[int(np.argmin(cost))])


# --------------------------------------------------------------------------------------------
# Objective and solvers
# --------------------------------------------------------------------------------------------


def _margins(theta, Z, fit_intercept):
    if fit_intercept:
        t = Z @ theta[1:]
        t += theta[0]
        return t
    return Z @ theta


def objective(theta, Z, y, fit_intercept, alpha_l2, gamma, V, n=None, sample_weight=None):
    """Value and gradient of the smooth perturbed objective ``J`` (mean form).

    ``theta`` is ``[intercept, w]`` when ``fit_intercept`` else ``w``; ``alpha_l2`` is the
    coefficient of ``|w|_2^2 / 2`` in ``r``. ``n`` (default ``len(Z)``) divides the penalty
    and noise terms; passing the full n with a subsample ``Z`` gives the subsample surrogate
    used to warm-start the solver. ``sample_weight`` (weights in [0, 1], or None) multiplies
    each example's loss: ``(1/n) sum_i w_i l_i`` (``docs/objective_perturbation.md``,
    "Sample weights").

    The loss is evaluated stably as ``max(t, 0) + log1p(exp(-|t|)) - y t`` and the sigmoid is
    recovered from the same ``exp(-|t|)`` (one exponential per example).
    """
    n_rows = Z.shape[0]
    n = n_rows if n is None else n
    w = theta[1:] if fit_intercept else theta
    t = _margins(theta, Z, fit_intercept)
    e = np.abs(t)
    np.negative(e, out=e)
    np.exp(e, out=e)  # e = exp(-|t|) in (0, 1]
    if sample_weight is None:
        loss = np.log1p(e).sum() + np.maximum(t, 0.0).sum() - y @ t
    else:
        loss = sample_weight @ (np.log1p(e) + np.maximum(t, 0.0) - y * t)
    np.add(e, 1.0, out=e)
    np.reciprocal(e, out=e)  # e = sigmoid(|t|)
    s = np.where(t >= 0, e, 1.0 - e)  # sigmoid(t)
    s -= y
    if sample_weight is not None:
        s *= sample_weight
    g_w = Z.T @ s
    penalty = 0.5 * alpha_l2 * (w @ w) + 0.5 * gamma * (theta @ theta) + V @ theta
    grad = (gamma * theta + V) / n
    if fit_intercept:
        grad[0] += s.sum() / n_rows
        grad[1:] += g_w / n_rows + (alpha_l2 / n) * w
    else:
        grad += g_w / n_rows + (alpha_l2 / n) * w
    return loss / n_rows + penalty / n, grad


def hessian(theta, Z, fit_intercept, alpha_l2, gamma, n=None, sample_weight=None):
    """Hessian of the smooth perturbed objective (same conventions as :func:`objective`)."""
    n_rows = Z.shape[0]
    n = n_rows if n is None else n
    s = expit(_margins(theta, Z, fit_intercept))
    wts = s * (1.0 - s) / n_rows
    if sample_weight is not None:
        wts *= sample_weight
    Zw = Z * wts[:, None]
    H_ww = Z.T @ Zw + (alpha_l2 / n) * np.eye(Z.shape[1])
    if fit_intercept:
        H = np.empty((Z.shape[1] + 1,) * 2)
        H[0, 0] = wts.sum()
        H[0, 1:] = H[1:, 0] = Zw.sum(axis=0)
        H[1:, 1:] = H_ww
    else:
        H = H_ww
    H[np.diag_indices_from(H)] += gamma / n
    return H


def _lbfgs(fun, x0, args, max_iter, gtol):
    return optimize.minimize(
        fun,
        x0,
        args=args,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "gtol": gtol, "ftol": 1e-16, "maxcor": 20},
    )


class _Preconditioned:
    """``J(theta0 + M u)`` and its gradient ``M^T grad J``, remembering the last evaluation."""

    def __init__(self, theta0, M, Z, y, fit_intercept, alpha_l2, gamma, V, sample_weight=None):
        self.theta0, self.M = theta0, M
        self.args = (Z, y, fit_intercept, alpha_l2, gamma, V, None, sample_weight)
        self._last = None

    def theta(self, u):
        return self.theta0 + self.M @ u

    def grad_theta(self, u):
        return self(u)[2]

    def __call__(self, u):
        if self._last is not None and np.array_equal(self._last[0], u):
            return self._last[1]
        f, g = objective(self.theta(u), *self.args)
        out = (f, self.M.T @ g, g)
        self._last = (np.array(u, copy=True), out)
        return out

    def fun(self, u):
        f, g_u, _ = self(u)
        return f, g_u


def solve_lbfgs(
    Z, y, fit_intercept, alpha_l2, gamma, V, max_iter=1000, gtol=1e-8, n_sub=20000,
    sample_weight=None,
):  # fmt: skip
    """See :func:`_solve_lbfgs`; runs with single-threaded BLAS.

    scipy's L-BFGS-B calls BLAS on tiny (m x maxcor) matrices at every iteration, and a
    multi-threaded BLAS then costs milliseconds per call; the objective's matrix-vector
    products with a tall, thin Z are memory-bound and gain little from threads. Measured at
    n = 2e5 and 1e6 (m = 10) on a 2-core machine, one thread made the whole fit 2-4x faster.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _solve_lbfgs(
            Z, y, fit_intercept, alpha_l2, gamma, V, max_iter, gtol, n_sub, sample_weight
        )


def _solve_lbfgs(
    Z, y, fit_intercept, alpha_l2, gamma, V, max_iter=1000, gtol=1e-8, n_sub=20000,
    sample_weight=None,
):  # fmt: skip
    """Minimise ``J`` with scipy's L-BFGS-B and the analytic gradient.

    To make L-BFGS fast *and* accurate on large n it runs in two stages. (1) L-BFGS on the
    surrogate built from an evenly spaced subsample of at most ``n_sub`` rows (same penalty,
    gamma and V terms) gives ``theta_s``, and the surrogate's Hessian ``H_s = L L^T`` at
    ``theta_s`` a preconditioner. (2) L-BFGS on the full objective in the coordinates
    ``theta = theta_s + c L^{-T} u``, where the Hessian is close to ``c^2 I``. The constant
    ``c = |L^{-1} grad J(theta_s)|_2`` makes L-BFGS-B's first trial step (length
    ``1/|gradient|``) the preconditioned Newton step, so a few iterations reach a tight
    gradient tolerance. The minimiser is unique (strict convexity), so the warm start and the
    change of variables change the path, not the answer.

    Returns ``(theta, n_iter, grad_norm)``: ``n_iter`` counts the iterations of both stages and
    ``grad_norm`` is the sup-norm of the gradient of ``J`` at the returned point, the optimality
    certificate the estimator checks.
    """
    n = Z.shape[0]
    dim = Z.shape[1] + int(fit_intercept)
    step = max(1, n // n_sub)
    Zs, ys = Z[::step], y[::step]
    ws = None if sample_weight is None else sample_weight[::step]
    args = (Zs, ys, fit_intercept, alpha_l2, gamma, V, n, ws)
    # The surrogate only needs statistical accuracy (its error is O(n_sub^{-1/2}) anyway);
    # when it *is* the full data (small n) it is solved to the final tolerance at once.
    res_s = _lbfgs(objective, np.zeros(dim), args, max_iter, gtol if step == 1 else max(gtol, 1e-6))
    theta_s = res_s.x
    if step == 1 and np.max(np.abs(res_s.jac)) <= gtol:
        return theta_s, max(1, int(res_s.nit)), float(np.max(np.abs(res_s.jac)))
    try:
        L = np.linalg.cholesky(hessian(theta_s, Zs, fit_intercept, alpha_l2, gamma, n, ws))
        L_inv_T = np.linalg.inv(L).T
        if not np.all(np.isfinite(L_inv_T)):
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        L, L_inv_T = np.eye(dim), np.eye(dim)
    sw = sample_weight
    fun = _Preconditioned(theta_s, L_inv_T, Z, y, fit_intercept, alpha_l2, gamma, V, sw)
    u0 = np.zeros(dim)
    f0, g0, g0_theta = fun(u0)
    c = float(np.linalg.norm(g0))
    n_iter = 0
    u = u0
    if np.max(np.abs(g0_theta)) > gtol and c > 0:
        fun = _Preconditioned(theta_s, c * L_inv_T, Z, y, fit_intercept, alpha_l2, gamma, V, sw)
        fun._last = (u0.copy(), (f0, c * g0, g0_theta))
        # grad_theta = L grad_u / c, so this tolerance on grad_u keeps |grad_theta|_inf <= gtol.
        gtol_u = gtol * c / max(float(np.abs(L).sum(axis=1).max()), 1e-300)
        res = _lbfgs(fun.fun, u0, (), max_iter, gtol_u)
        u, n_iter = res.x, int(res.nit)
    theta = fun.theta(u)
    grad = fun.grad_theta(u)
    return theta, max(1, int(res_s.nit) + n_iter), float(np.max(np.abs(grad)))


def solve_cvxpy(Z, y, fit_intercept, alpha, l1_ratio, gamma, V, sample_weight=None):
    """Minimise ``J`` (with the full elastic-net ``r``) as an exponential-cone program.

    The program is stated in the sum form ``n J`` (same minimiser, better scaled for the
    interior-point solver). Clarabel is tried first, then Clarabel without equilibration, then
    SCS at high accuracy. Returns ``(theta, n_iter, None)``, with ``theta = None`` when no
    solver produced a finite point. The result is only a warm start: the estimator certifies
    (and if needed polishes) it with :func:`dpreg.linear_model._certify.certify`.
    """
    import cvxpy as cp

    n, p = Z.shape
    dim = p + int(fit_intercept)
    theta = cp.Variable(dim)
    if fit_intercept:
        b, w = theta[0], theta[1:]
        t = Z @ w + b
    else:
        w = theta
        t = Z @ w
    if sample_weight is None:
        expr = cp.sum(cp.logistic(t)) - (y @ Z) @ w
    else:  # sum_i w_i l_i (weights in [0, 1])
        expr = cp.sum(cp.multiply(sample_weight, cp.logistic(t))) - ((sample_weight * y) @ Z) @ w
        y = sample_weight * y  # only y.sum() is used below
    if fit_intercept:
        expr = expr - y.sum() * b
    # gamma/2 |theta|^2 and the ridge part of r as one weighted sum of squares
    ridge = np.full(dim, 0.5 * gamma)
    ridge[int(fit_intercept) :] += 0.5 * alpha * (1.0 - l1_ratio)
    expr = expr + cp.sum_squares(cp.multiply(np.sqrt(ridge), theta)) + V @ theta
    if alpha > 0 and l1_ratio > 0:
        expr = expr + alpha * l1_ratio * cp.norm1(w)
    problem = cp.Problem(cp.Minimize(expr))
    attempts = [
        (cp.CLARABEL, {}),
        (cp.CLARABEL, {"equilibrate_enable": False}),
        (cp.SCS, {"eps": 1e-9, "max_iters": 100_000}),
    ]
    for solver, opts in attempts:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            try:
                problem.solve(solver=solver, **opts)
            except (cp.error.SolverError, ArithmeticError, ValueError):
                continue
        if problem.status == "optimal":
            break
    n_iter = getattr(problem.solver_stats, "num_iters", None) if problem.solver_stats else None
    value = theta.value
    if value is None or not np.all(np.isfinite(value)):
        # No usable point: the caller's certified solver starts from zero instead. Whether
        # cvxpy succeeded depends on the data, so it must not decide anything but the start.
        return None, int(n_iter or 0), None
    return np.asarray(value, float), int(n_iter or 0), None
