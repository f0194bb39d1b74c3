r"""Certified release of objective perturbation (approximate minima perturbation).

The objective perturbation proof covers the *exact* minimiser ``theta*`` of the perturbed
objective; a solver only returns an approximation. This module turns any approximation into a
release whose guarantee holds exactly, following the approximate minima perturbation (AMP) of
Iyengar et al. (2019, "Towards practical differentially private convex optimization"; see also
Kifer, Smith & Thakurta 2012, section 4):

1. The mean-form objective ``J = f + h`` (``f`` smooth, ``h`` the L1 part of ``r``, possibly
   0) is ``mu``-strongly convex with a *public* ``mu = (gamma + ridge_on_every_coordinate)/n``
   (the ridge gamma is always in J; the loss and ``r`` are convex).
2. :func:`certify` iterates (L-BFGS warm start from the caller, then Newton or proximal Newton
   steps) until the minimal-norm subgradient ``s`` of J at the current point ``theta_hat``
   satisfies ``||s||_2 <= tol / 2``, a *public* tolerance. Strong convexity gives
   ``||theta_hat - theta*||_2 <= ||s||_2 / mu <= tol / mu`` for every data set. There is no
   give-up exit: the loop stops only on the certificate.
3. The estimator releases ``theta_hat + W`` with W drawn from the l2 K-norm mechanism (pure
   epsilon, density ∝ exp(-epsilon_amp ||w||_2 / Delta)) with ``Delta = 2 tol / mu`` (plus
   the public shift of the grid-rounded perturbation vector, :func:`perturbation_grid`).

Why 3 is (epsilon_op + epsilon_amp)-DP: consider the pair ``(theta*, theta_hat + W)``. The
first part is epsilon_op-DP (objective perturbation). Given ``theta* = a``, the second has
density ``E[f_W(t - theta_hat) | theta* = a]`` and ``||theta_hat - a|| <= Delta / 2`` on that
event, for D and for its neighbour D' alike, so both conditional densities lie within
``exp(+-epsilon_amp / 2) f_W(t - a)``: their ratio is at most ``exp(epsilon_amp)``. The joint
density ratio is at most ``exp(epsilon_op + epsilon_amp)``, and the release is the second
coordinate (post-processing). The argument uses only the public bound ``Delta / 2`` on the
distance, never how the solver got there, so warm starts, iteration counts and the path are
free; what matters is that the stopping rule certifies a *public* bound for every data set.

Floating point: the certificate is computed in double precision. The margins are computed
in twice the working precision (Dot2), the loss part of the gradient is summed in chunks of
``_CHUNK`` rows by BLAS and the chunk sums are combined with ``math.fsum``, so the rounding
error per coordinate of the mean-form gradient is at most about ``(_CHUNK + 16) u``
(``u`` = 2^-53; every term of the sum is at most 1 in absolute value) plus the error of the
penalty terms. :func:`rounding_bound` evaluates this
bound a posteriori, and the certificate requires both ``||s|| <= tol/2`` and
``||s|| + rounding_bound <= tol``. With the public ``tol = TOL * sqrt(m)`` the bound is two
orders of magnitude below ``tol / 2`` (about 5e-13 sqrt(m) against 5e-11 sqrt(m)),
so the margin ``tol / 2`` is what certifies ``||s_exact|| <= tol``: the half of the tolerance
kept in reserve absorbs the rounding error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.special import expit

from ..noise._grid import GRID_BITS, grid_exponent
from ._logistic_core import hessian, objective

#: Share of each problem's epsilon spent on the output noise W.
AMP_SHARE = 0.01
#: Public floor on the strong convexity of the mean-form objective: gamma >= MIN_CURVATURE n.
MIN_CURVATURE = 1e-7
#: Public mean-form tolerance, times sqrt(m): two orders above the rounding error bound.
TOL = 1e-10
#: Resolution factor: the tolerance is at least RES u grad_scale sqrt(m), far above the
#: gradient change mu u |theta| caused by rounding theta itself (see :func:`amp_plan`).
RES = 1e4
#: Float-resolution floor on the curvature (:func:`resolution_gamma`): the best float near
#: theta* must have a gradient at least this many times below the tolerance ...
RES_MARGIN = 8.0
#: ... for |V| up to this many times its public mean bound (the convention of RES).
V_TAIL = 1e3
_CHUNK = 4096
#: Plain BLAS margins are used when their rounding effect is below this (else Dot2).
_PLAIN_MARGIN_ERR = 1e-13
_U = np.finfo(float).eps / 2.0
#: Guard against an implementation bug only: the convergence argument in the docs shows that
#: Newton steps reach the tolerance in a few iterations from any start.
_MAX_STEPS = 10_000


@dataclass(frozen=True)
class AmpPlan:
    """Public parameters of the certified release of one problem.

    Attributes
    ----------
    epsilon : float
        Budget of the output noise W.
    mu : float
        Strong convexity of the mean-form perturbed objective.
    tol : float
        Public bound on the l2 norm of the minimal subgradient at the released point.
    sensitivity : float
        ``2 tol / mu``, the l2 sensitivity that W is calibrated to.
    """

    epsilon: float
    mu: float
    tol: float
    sensitivity: float


@dataclass(frozen=True)
class PerturbationGrid:
    """Public grid of the objective-perturbation vector b (see :func:`perturbation_grid`).

    Attributes
    ----------
    bits : int
        ``g = 2**grid_exponent(scale, bits)`` is the grid step of every coordinate of b.
    step : float
        The grid step g.
    shift : float
        Public bound on ``||b_grid - b_ideal||_2``: ``sqrt(dim) g / 2``, rounded up.
    """

    bits: int
    step: float
    shift: float


def perturbation_grid(dim, sensitivity, epsilon):
    r"""Grid of the perturbation vector b and the public bound on its rounding shift.

    b is drawn as an *exact* grid release of the ideal real K-norm vector ``b_ideal``
    (:func:`dpreg.noise._exact.release_knorm`): ``b_grid = g round(b_ideal / g)``, so
    ``|b_grid - b_ideal|_i <= g / 2`` and ``||b_grid - b_ideal||_2 <= sqrt(dim) g / 2``.
    The solver and the certificate use ``b_grid``; the mean-form gradients of the two
    objectives differ by ``(b_grid - b_ideal) / n``, so a point certified with
    ``||s(b_grid)||_2 <= tol`` has ``||s(b_ideal)||_2 <= tol + shift / n`` and lies within
    ``(tol + shift / n) / mu`` of the exact minimiser for the ideal b; :func:`amp_plan`
    calibrates W to that distance. The grid is finer than the release grid (b is never
    released): ``bits = 43 - ceil(log2(dim + 1))`` (at least ``GRID_BITS``) keeps the shift
    far below ``tol`` while ``N = b_grid / g`` stays below ``2**53`` (so ``b_grid`` is an
    exact float; ``g > scale 2**-(bits + 1)``) unless a coordinate of b exceeds
    ``2**(52 - bits) >= 512 (dim + 1)`` noise scales, an event of probability below
    ``exp(-1000)`` for ``dim < 2**19`` (``docs/floating_point.md``, section 5a).
    """
    dim = int(dim)
    scale = float(np.nextafter(sensitivity / epsilon, np.inf))  # as release_knorm rounds it
    bits = max(GRID_BITS, 43 - math.ceil(math.log2(dim + 1)))
    step = 2.0 ** grid_exponent(scale, bits)
    shift = math.sqrt(dim) * step / 2.0 * (1.0 + 1e-12)  # rounded up generously
    return PerturbationGrid(bits, step, shift)


def amp_plan(epsilon_amp, dim, mu, grad_scale, grad_shift=0.0):
    """Tolerance and output-noise calibration from public quantities only.

    ``tol = sqrt(dim) max(TOL, RES u grad_scale)``: as small as the floating-point
    certificate allows with a wide margin, because W's scale ``Delta / epsilon_amp =
    2 tol / (mu epsilon_amp)`` is proportional to it (``E|W|_2 = dim Delta / epsilon_amp``,
    since ``|W|_2`` follows Gamma(dim, Delta / epsilon_amp)). ``TOL`` stays above the
    rounding error of the gradient. The second term stays above the gradient's change over
    one ulp of theta, ``mu u |theta|``: strong convexity gives ``mu |theta*| <= |grad J(0)|
    <= sqrt(dim) + |V|/n``, and ``grad_scale`` is that bound with |V| replaced by a public
    bound on its mean (:func:`noise_scale`), so a representable point always passes unless
    |V| exceeds its mean by a factor of about RES/10 (a tail event of the noise alone).

    ``grad_shift`` is a public bound on how far the mean-form gradient the certificate
    evaluates may be from the one of the ideal objective (``PerturbationGrid.shift / n``: b is
    used on a grid); the certified distance to the ideal minimiser is then
    ``(tol + grad_shift) / mu`` and W is calibrated to twice it.
    """
    tol = certificate_tol(dim, grad_scale)
    radius = (tol + float(grad_shift)) * (1.0 + 1e-12) / mu
    return AmpPlan(float(epsilon_amp), float(mu), float(tol), 2.0 * radius)


def certificate_tol(dim, grad_scale):
    """The public tolerance ``sqrt(dim) max(TOL, RES u grad_scale)`` (:func:`amp_plan`)."""
    return math.sqrt(dim) * max(TOL, RES * _U * grad_scale)


def resolution_gamma(n, dim, grad_scale, lip_data, loss_at_zero, ridge_all=0.0):
    r"""Smallest ``gamma`` for which a floating-point point always passes the certificate.

    The certificate needs a representable ``theta`` with ``|s(theta)| <= tol / 2``. Rounding
    ``theta*`` to the nearest floats moves each coordinate by at most ``u |theta*_j|``, which
    moves the gradient by up to ``(lip_data + gamma / n) u |theta*|_2``. :func:`amp_plan`'s
    ``RES`` term covers the penalty's part ``mu u |theta*| <= u G`` (at most ``tol / 10``
    for ``|V|`` up to ``V_TAIL`` times its mean bound), but not the loss's part
    ``lip_data u |theta*|``: where the data leave a direction flat, ``|theta*|`` reaches
    about ``|V| / gamma`` (1e7 at a tiny ``q`` and large epsilon) while rows with margins
    near 0 keep their curvature, and no float passed (session-22 audit: a ``RuntimeError``
    after the spend on some data sets and not on their neighbours).

    Two public bounds on ``|theta*|_2`` hold for every data set, with ``v = V_TAIL
    (grad_scale - sqrt(dim))`` bounding ``|V|_2 / n`` (``grad_scale`` bounds it by its mean):

    * strong convexity, ``mu |theta*| <= |grad J(0)| <= sqrt(dim) + v``;
    * the objective at ``theta*`` is at most its value at 0, where every row's loss is at
      most ``loss_at_zero`` (the loss is non-negative): ``mu |theta*|^2 / 2 - v |theta*|
      <= loss_at_zero``, so ``|theta*| <= 2 v / mu + sqrt(2 loss_at_zero / mu)``.

    ``mu`` is chosen as the smallest value at which either bound ``R`` gives
    ``RES_MARGIN u lip_data R <= tol``: the loss's part stays below ``tol / RES_MARGIN``,
    both parts together below ``0.23 tol``, so the float nearest ``theta*`` passes ``tol / 2``
    with room, as does a Newton step's float result (within about ``1.5 u |theta*|`` of
    ``theta*``: the step's own rounding plus ``theta*``'s). ``lip_data`` is the gradient's
    Lipschitz constant without gamma (the loss and the user's ridge); ``mu = (gamma +
    ridge_all) / n``. Public quantities only (raising gamma never hurts privacy). Measured, it binds
    with a small user ``q`` (0.1, 0.01), never with ``q="auto"`` on the grid of
    docs/objective_perturbation.md ("The float-resolution floor on γ").
    """
    tol = certificate_tol(dim, grad_scale)
    v = V_TAIL * max(grad_scale - math.sqrt(dim), 0.0)
    c = RES_MARGIN * _U * float(lip_data)
    if c == 0.0:
        return 0.0
    room = tol / c  # the largest |theta*| the certificate resolves
    mu_gradient = (math.sqrt(dim) + v) / room
    # 2 v x^2 + sqrt(2 B) x <= room with x = mu^(-1/2); the stable root of the quadratic
    b = math.sqrt(2.0 * float(loss_at_zero))
    x = 2.0 * room / (b + math.sqrt(b * b + 8.0 * v * room))
    mu_min = min(mu_gradient, 1.0 / (x * x))
    return max(mu_min * n - ridge_all, 0.0)


def noise_scale(dim, sensitivity, epsilon_noise, n):
    """``sqrt(dim) + dim^1.5 Delta / (epsilon n)``: a public bound on ``|grad J(0)|`` with
    ``|V|_2`` replaced by a bound on its mean (``E|V|_K = dim Delta / epsilon`` and
    ``|v|_2 <= sqrt(dim) |v|_K`` for every lp norm)."""
    return math.sqrt(dim) + dim**1.5 * sensitivity / (epsilon_noise * n)


def strong_convexity(gamma, ridge, n_free, n):
    """Public strong convexity of the mean-form objective.

    ``gamma/2 |theta|^2`` covers every coordinate; the user's ridge covers all of them only
    when there is no unpenalised intercept (``n_free == 0``).
    """
    return (gamma + (ridge if n_free == 0 else 0.0)) / n


_SPLIT = 2.0**27 + 1.0


def _two_sum(a, b):
    """Knuth's error-free sum: ``a + b = s + e`` exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(a, b):
    """Dekker's error-free product (Veltkamp splitting): ``a b = p + e`` exactly."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    a_hi = ca - (ca - a)
    b_hi = cb - (cb - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _margins_accurate(Zc, w, b):
    """``Zc @ w + b`` in twice the working precision (Ogita, Rump & Oishi's Dot2).

    The error is about ``u |t| + m^2 u^2 sum_j |z_j w_j|``, so the margins stay accurate
    even where ``|w|`` is huge in directions the data barely use (flat directions at large
    epsilon), which a plain dot product (error ``m u sum_j |z_j w_j|``) would not.
    """
    s = np.full(Zc.shape[0], float(b))
    c = np.zeros(Zc.shape[0])
    for j in range(Zc.shape[1]):
        p, e = _two_product(Zc[:, j], w[j])
        s, f = _two_sum(s, p)
        c += e + f
    return s + c


def _plain_margin_error(theta):
    """Bound on the effect of rounding in a plain ``z.theta`` on ``sigmoid(t) - y``.

    A dot product of length m (plus the intercept) errs by at most ``m u |theta|_1`` for rows
    in [-1, 1]^m, and ``sigmoid' <= 1/4``.
    """
    return theta.shape[0] * _U * float(np.abs(theta).sum()) / 4.0


def _loss_gradient_sum(theta, Z, y, fit_intercept, sample_weight=None):
    """``sum_i w_i (sigmoid(t_i) - y_i) [1, z_i]`` with chunked BLAS sums combined by fsum.

    The margins use a plain BLAS product when its rounding effect is below
    ``_PLAIN_MARGIN_ERR`` (the usual case), else Dot2. ``w_i = 1`` without ``sample_weight``.
    """
    return combine_parts(loss_gradient_parts(theta, Z, y, fit_intercept, sample_weight))


def combine_parts(parts):
    """Exactly rounded column sums (``math.fsum``) of the chunk sums of
    :func:`loss_gradient_parts`, from one array or from several stacked (dask blocks)."""
    parts = np.asarray(parts)
    return np.array([math.fsum(parts[:, j]) for j in range(parts.shape[1])])


def loss_gradient_parts(theta, Z, y, fit_intercept, sample_weight=None):
    """The per-chunk sums behind :func:`_loss_gradient_sum`, one row per ``_CHUNK`` rows.

    A row block of the data (e.g. one dask block) gives its own chunk sums; stacking the
    blocks' parts and combining them with :func:`combine_parts` has the same error bound as
    the in-memory sum (every chunk still has at most ``_CHUNK`` rows, and the combination is
    exactly rounded), so :func:`rounding_bound` covers it unchanged.
    """
    n, p = Z.shape
    dim = p + int(fit_intercept)
    w = theta[1:] if fit_intercept else theta
    b = theta[0] if fit_intercept else 0.0
    parts = np.empty((max(1, -(-n // _CHUNK)), dim))
    plain = _plain_margin_error(theta) <= _PLAIN_MARGIN_ERR
    for k, start in enumerate(range(0, n, _CHUNK)):
        Zc = Z[start : start + _CHUNK]
        t = Zc @ w + b if plain else _margins_accurate(Zc, w, b)
        r = expit(t) - y[start : start + _CHUNK]
        if sample_weight is not None:  # one more rounding per term (rounding_bound: weighted)
            r *= sample_weight[start : start + _CHUNK]
        if fit_intercept:
            parts[k, 0] = r.sum()
            parts[k, 1:] = Zc.T @ r
        else:
            parts[k] = Zc.T @ r
    return parts


def _smooth_gradient(theta, Z, y, fit_intercept, alpha_l2, gamma, V, loss=None, sw=None):
    """Accurate mean-form gradient of the smooth part f of J.

    ``loss``: the loss sum :func:`_loss_gradient_sum` if the caller already has it (the dask
    path computes it block by block); only ``Z.shape[0]`` is read from ``Z`` then.

    The penalty part ``gamma theta + V + alpha_l2 w`` is formed with error-free products and
    sums and added to the loss sum with ``math.fsum``: near the optimum its terms cancel to
    the size of the loss sum (at most n), so a plain evaluation would lose
    ``u (|gamma theta| + |V|)`` where V is large (small n epsilon).
    """
    n = Z.shape[0]
    ridge = np.full(theta.shape[0], float(alpha_l2))
    if fit_intercept:
        ridge[0] = 0.0
    p1, e1 = _two_product(np.full_like(theta, gamma), theta)
    p2, e2 = _two_product(ridge, theta)
    s1, f1 = _two_sum(p1, np.asarray(V, dtype=float))
    s2, f2 = _two_sum(s1, p2)
    if loss is None:
        loss = _loss_gradient_sum(theta, Z, y, fit_intercept, sw)
    total = [math.fsum(t) for t in zip(loss, s2, e1, e2, f1, f2)]
    return np.asarray(total) / n


def rounding_bound(theta, n, gamma, V, alpha_l2, fit_intercept, weighted=False):
    """A posteriori bound on the l2 rounding error of :func:`minimal_subgradient`.

    Per coordinate of the mean-form gradient: ``(_CHUNK + 16) u`` for the loss part (its
    terms are at most 1 in absolute value; blocked summation within chunks of ``_CHUNK``
    rows, an exactly rounded combination of the chunk sums, a few ulps for ``sigmoid(t) - y``
    including the Dot2 margins, whose error ``~u|t|`` is damped by ``sigmoid'(t) |t| < 1/4``,
    and the division by n); ``8 u^2 (|gamma theta| + |V| + ridge |w|) / n`` for the penalty
    term (error-free transformations leave only the second-order error of Dekker's product
    with the splitting) and ``2 u`` times the result for the final sum and division; plus
    :func:`_plain_margin_error` when the margins were computed by a plain dot product.
    ``weighted``: each loss term ``fl(w_i fl(sigmoid(t_i) - y_i))`` has one more relative
    rounding (``w_i`` in [0, 1], so the term stays at most 1), i.e. at most ``u`` more per
    coordinate of the mean-form gradient: one more ``u`` is charged.
    """
    dim = theta.shape[0]
    ridge = np.full(dim, float(alpha_l2))
    if fit_intercept:
        ridge[0] = 0.0
    pen_err = 8.0 * _U * _U * (gamma * np.abs(theta) + np.abs(V) + ridge * np.abs(theta)) / n
    margin_err = _plain_margin_error(theta)
    margin_err = margin_err if margin_err <= _PLAIN_MARGIN_ERR else 0.0  # Dot2: in the chunk term
    chunk_ulps = _CHUNK + 18 + (1 if weighted else 0)
    return float(math.sqrt(dim) * (chunk_ulps * _U + margin_err) + np.linalg.norm(pen_err))


def _l1_weights(dim, fit_intercept, l1):
    c = np.full(dim, float(l1))
    if fit_intercept:
        c[0] = 0.0
    return c


def minimal_subgradient(theta, Z, y, fit_intercept, alpha_l2, l1, gamma, V, loss=None, sw=None):
    """Minimal-norm subgradient of the mean-form ``J = f + (l1/n)|w|_1`` at ``theta``.

    ``l1`` is the coefficient of ``|w|_1`` in the *sum* form (``alpha * l1_ratio``). Returns
    ``(s, rounding_error_bound, g)`` with g the gradient of f. For ``l1 == 0``, ``s = g``.
    ``loss`` as in :func:`_smooth_gradient`; ``sw``: sample weights in [0, 1] or None.
    """
    n = Z.shape[0]
    g = _smooth_gradient(theta, Z, y, fit_intercept, alpha_l2, gamma, V, loss, sw)
    if l1 > 0:
        c = _l1_weights(theta.shape[0], fit_intercept, l1) / n
        at_zero = theta == 0.0
        s = np.where(at_zero, np.sign(g) * np.maximum(np.abs(g) - c, 0.0), g + c * np.sign(theta))
    else:
        s = g
    err = rounding_bound(theta, n, gamma, V, alpha_l2, fit_intercept, sw is not None)
    return s, err, g


def is_certified(s, err, tol):
    """The public stopping rule: ``|s| <= tol/2`` and ``|s| + rounding bound <= tol``."""
    s_norm = float(np.linalg.norm(s))
    return s_norm <= tol / 2.0 and s_norm + err <= tol


def lipschitz(dim, gamma, ridge, n):
    """Public Lipschitz constant of the mean-form gradient of f: ``m/4 + (gamma + ridge)/n``.

    ``sigmoid' <= 1/4`` and ``|z|_2^2 <= m`` for rows in [-1, 1]^m (intercept included).
    """
    return dim / 4.0 + (gamma + ridge) / n


def _soft(x, c):
    return np.sign(x) * np.maximum(np.abs(x) - c, 0.0)


def _prox_newton_direction(theta, g, H, c):
    """Minimise ``g.d + d^T H d / 2 + c.|theta + d|`` over d by coordinate descent.

    ``H`` is positive definite (its diagonal is at least mu), so every coordinate problem has
    a closed-form soft-threshold solution. Inexactness only slows the outer loop down; the
    certificate decides when to stop.
    """
    x = theta.copy()
    r = np.zeros_like(theta)  # H (x - theta)
    diag = np.diag(H)
    for _ in range(200):
        change = 0.0
        for j in range(theta.shape[0]):
            q = g[j] + r[j]
            new = _soft(x[j] - q / diag[j], c[j] / diag[j])
            delta = new - x[j]
            if delta != 0.0:
                r += H[:, j] * delta
                x[j] = new
                change = max(change, abs(delta))
        if change <= 1e-15 * (1.0 + float(np.abs(x).max())):
            break
    return x - theta


class BinaryProblem:
    """The binary perturbed objective of :mod:`._logistic_core` as seen by :func:`certify`."""

    def __init__(self, Z, y, fit_intercept, alpha_l2, l1, gamma, V, sample_weight=None):
        self.args = (Z, y, fit_intercept, alpha_l2, gamma, V)
        self.sw = sample_weight
        self.l1 = float(l1)
        self.c = _l1_weights(len(V), fit_intercept, l1) / Z.shape[0]

    def measure(self, theta):
        Z, y, fit_intercept, alpha_l2, gamma, V = self.args
        return minimal_subgradient(
            theta, Z, y, fit_intercept, alpha_l2, self.l1, gamma, V, sw=self.sw
        )

    def value(self, theta):
        f = objective(theta, *self.args, sample_weight=self.sw)[0]
        return f + float(self.c @ np.abs(theta))

    def gradient(self, theta):
        return objective(theta, *self.args, sample_weight=self.sw)[1]

    def hessian(self, theta):
        Z, _, fit_intercept, alpha_l2, gamma, _ = self.args
        return hessian(theta, Z, fit_intercept, alpha_l2, gamma, sample_weight=self.sw)


def certify(theta0, Z, y, fit_intercept, alpha_l2, l1, gamma, V, tol, L, sample_weight=None):
    """:func:`certify_problem` for the binary objective; returns ``(theta, steps)``."""
    problem = BinaryProblem(Z, y, fit_intercept, alpha_l2, l1, gamma, V, sample_weight)
    return certify_problem(theta0, problem, tol, L)


#: Most Newton steps taken after the certificate holds (see :func:`_polish`).
_POLISH_STEPS = 3
#: The polish stops once ``|s| <= _POLISH_FLOOR tol`` (a Newton step from a point with
#: ``|s|`` near tol lands there; the rounding floor is lower still). Only a speed choice.
_POLISH_FLOOR = 1e-4


def _polish(theta, problem, s, g, tol):
    """Newton steps past the certificate, down to the floating-point floor (smooth J only).

    Any certified point may be released; the certificate alone leaves ``tol / mu`` of
    freedom, so two correct solvers (numpy and dask, different warm starts) would release
    points many release-grid steps apart. A Newton step from a certified point converges
    quadratically, so each step is kept only while it at least halves ``|s|`` *and* the new
    point passes the certificate; at most :data:`_POLISH_STEPS`. The released point is
    still a certified point (the guarantee is unchanged); measured, the numpy and the dask
    paths then release the same grid point. Returns ``(theta, steps taken)``.
    """
    for extra in range(_POLISH_STEPS):
        if float(s @ s) <= (_POLISH_FLOOR * tol) ** 2:  # already there: spare the evaluation
            return theta, extra
        try:
            d = -linalg.cho_solve(linalg.cho_factor(problem.hessian(theta)), g)
        except (linalg.LinAlgError, ValueError):
            return theta, extra
        out = problem.measure(theta + d)
        if not (is_certified(out[0], out[1], tol) and out[0] @ out[0] <= 0.25 * (s @ s)):
            return theta, extra
        theta, (s, _, g) = theta + d, out
    return theta, _POLISH_STEPS


def certify_problem(theta0, problem, tol, L):
    """Iterate from ``theta0`` until the public certificate holds; return ``(theta, steps)``.

    Smooth J (``problem.l1 == 0``): damped Newton steps with a backtracking (Armijo) search
    on the merit ``|grad J|^2``, for which the Newton direction is a descent direction
    (``d(|g|^2/2)/dt = g^T H d = -|g|^2``); the Hessian is uniformly positive definite
    (>= mu) and Lipschitz, so the iteration converges from any start, quadratically near the
    minimiser; once certified, :func:`_polish` takes the point to the floating-point floor.
    With an L1 term: proximal Newton steps (coordinate-descent inner solve) with an
    Armijo search on J, accepting also a decrease of the minimal subgradient. If the search
    fails, a proximal gradient step with the public step ``1/L`` is taken. Nothing ends the
    loop except the certificate (``_MAX_STEPS`` guards against a bug only).
    """
    c, l1 = problem.c, problem.l1
    theta = np.asarray(theta0, dtype=float).copy()
    if l1 > 0:  # start from a point with exact zeros
        theta = _soft(theta - problem.gradient(theta) / L, c / L)
    s, err, g = problem.measure(theta)
    for step in range(_MAX_STEPS):
        if is_certified(s, err, tol):
            if l1 > 0:
                return theta, step
            theta, extra = _polish(theta, problem, s, g, tol)
            return theta, step + extra
        # the accurate gradient g drives the step: near the optimum the plain one may be too
        # imprecise for the certificate (huge |theta| in flat directions)
        H = problem.hessian(theta)
        s_sq = float(s @ s)
        if l1 > 0:
            d = _prox_newton_direction(theta, g, H, c)
            decrease = float(g @ d + c @ (np.abs(theta + d) - np.abs(theta)))
            F = problem.value(theta)
        else:
            try:
                d = -linalg.cho_solve(linalg.cho_factor(H), g)
            except (linalg.LinAlgError, ValueError):  # not positive definite / not finite
                d = -g / L
        t, accepted = 1.0, None
        for _ in range(40):
            cand = theta + t * d
            out = problem.measure(cand)
            s_c_sq = float(out[0] @ out[0])
            if l1 > 0:
                ok = s_c_sq < s_sq or problem.value(cand) <= F + 1e-4 * t * decrease
            else:
                ok = s_c_sq <= (1.0 - 2e-4 * t) * s_sq
            if ok:
                accepted = (cand, out)
                break
            t *= 0.5
        if accepted is None:
            cand = _soft(theta - g / L, c / L)
            accepted = (cand, problem.measure(cand))
        theta, (s, err, g) = accepted
    raise RuntimeError(  # pragma: no cover - unreachable by the convergence argument
        "internal error: the certified solver did not converge; please report this."
    )
