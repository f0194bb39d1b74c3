r"""epsilon-DP linear quantile regression by objective perturbation of a smoothed check loss.

An exact alternative to :class:`~dpreg.KNGQuantileRegressor` for models with more parameters
than its exact sampler handles quickly (the exact KNG sampler's time grows steeply with d:
``docs/kng_quantile_regression.md``). Derivations: ``docs/op_quantile_regression.md``.

Mechanism
---------
Features are clipped into the public ``bounds_X`` and mapped onto ``[-1, 1]`` (design rows
``w = (1, z)``), responses are clipped into the public ``bounds_y`` and mapped onto
``[-1, 1]`` (``v``). Clipping is a per-record map, so it costs no privacy, and it changes no
conditional quantile that lies inside ``bounds_y`` (clipping is monotone: the tau-quantile of
``clip(y)`` is ``clip`` of the tau-quantile of ``y``). With the smoothed check loss ``l_h``
(:mod:`._op_quantile_core`), public bandwidth h, budget split ``epsilon = eps_op + eps_amp``
(``eps_amp = 0.01 epsilon``) and share q, the estimator releases

    theta_hat + W,   theta_hat certified within (tol + shift/n)/mu of
    theta* = argmin (1/n) sum_i l_h(v_i - w_i^T theta) + gamma/(2n) |theta|^2 + b.theta/n,
    b ~ exp(-eps_op q |b|_K / Delta),   gamma = lambda / (exp(eps_op (1 - q)) - 1),
    W ~ exp(-eps_amp |W|_2 / Delta_amp).

Constants
---------
* **Sensitivity** ``Delta``: one example's gradient is ``a w`` with ``a = Phi(-u/h) - tau`` in
  ``[-tau, 1 - tau]``. Replacing ``(w, v)`` by ``(w', v')`` changes the sum-form gradient at any
  theta by ``a w - a' w'``; its K-norm is convex in ``(a, a')`` for fixed rows and in
  ``(w, w')`` for fixed ``a, a'`` (not jointly: ``a w`` is bilinear), so its supremum over the
  product of boxes of admissible values is attained at a product of vertices: ``a, a'`` in
  ``{-tau, 1 - tau}`` and rows at vertices of the feature box. That is exactly the KNG
  gradient's sensitivity (:func:`._quantile_core.quantile_sensitivity`, derived there),
  e.g. ``2 max(tau, 1 - tau)`` for linf with an intercept. It is approached for every theta
  as the responses move far from the fit (``a -> -tau`` or ``1 - tau``), so it is tight
  (tested adversarially).
* **Curvature** ``lambda``: one example's Hessian is ``phi(u/h)/h w w^T``, rank one with
  eigenvalue at most ``sup|w|_2^2 / (h sqrt(2 pi))`` (``= m / (h sqrt(2 pi))`` with an
  intercept and ``m`` parameters).

Privacy (replace-one, pure epsilon)
-----------------------------------
``l_h`` is convex and infinitely differentiable, so the objective is strictly convex
(``gamma > 0``) and the map ``theta* -> b = -(sum_i grad l_i(theta*) + gamma theta*)`` is a
bijection. The density of ``theta*`` is ``f_b(b(theta*; D)) |det grad_theta b(theta*; D)|``.
(i) For neighbours, ``|b(theta; D) - b(theta; D')|_K <= Delta`` at every theta, so the K-norm
density ratio is at most ``exp(eps_op q)``. (ii) The Jacobian is ``A + H_i`` against
``A + H_i'`` with ``A >= gamma I`` the common part and ``H_i, H_i'`` PSD rank one; by the
matrix determinant lemma the ratio is at most ``1 + lambda/gamma = exp(eps_op (1 - q))``.
So ``theta*`` is eps_op-DP (Chaudhuri, Monteleoni & Sarwate 2011; Kifer, Smith & Thakurta
2012, Theorem 1, with K-norm noise as in seed 001, Algorithm 2). The solver's point is
certified by a public stopping rule (:mod:`._certify`: strong convexity ``mu = gamma/n``,
gradient tolerance ``tol``, rounding error bounded a posteriori) and released with the
output noise W calibrated to twice the certified distance, which costs ``eps_amp``
(approximate minima perturbation); b is an exact grid release whose rounding shift the
certificate charges. All of ``h``, ``q``, ``gamma``, ``tol`` and both noise scales are
functions of public quantities (n, m, tau, epsilon, the norm) only.

What is *not* part of the guarantee: the running time (the solver's iteration count depends
on the data), as for every estimator here.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._bounds import (
    DEFAULT_BOUNDS_SHARE,
    PublicBox,
    check_bounds_param,
    check_fit_share,
    fit_bounds,
    split_budget,
    unscale_coefficients,
)
from .._validation import check_bounds, check_epsilon, check_random_state, shares_within
from ..accounting import check_accountant
from ..noise import KNormMechanism, choose_norm
from ._certify import (
    AMP_SHARE,
    MIN_CURVATURE,
    amp_plan,
    certify_problem,
    noise_scale,
    perturbation_grid,
    resolution_gamma,
)
from ._logistic_core import default_q, gamma_for
from ._op_quantile_core import (
    QuantileProblem,
    default_bandwidth,
    hessian_bound,
    lipschitz,
    nominal_loss,
    solve_lbfgs,
)
from ._quantile_core import check_quantile, design, quantile_sensitivity, scale_features
from .logistic import _perturbation

__all__ = ["ObjectivePerturbationQuantileRegressor"]

_NORMS = ("l1", "l2", "linf")
#: Smallest epsilon accepted: below it the certificate's arithmetic would overflow.
_MIN_EPSILON = 1e-50


class ObjectivePerturbationQuantileRegressor(RegressorMixin, BaseEstimator):
    """epsilon-DP linear quantile regression by objective perturbation (smoothed check loss).

    Minimises the mean Gaussian-smoothed check loss (Fernandes, Guerre & Horta 2021) of the
    clipped and scaled data plus a ridge ``gamma/(2n)|theta|^2`` and a random linear term
    ``b.theta/n`` with K-norm noise b, certifies the solver's point and releases it with a
    small output noise (module docstring and ``docs/op_quantile_regression.md``: the privacy
    proof and every constant). Pure epsilon-DP, replace-one adjacency. Unlike
    :class:`~dpreg.KNGQuantileRegressor` (exact sampler, time growing steeply with the number
    of parameters) its cost is a convex optimisation, about linear in ``n`` for any
    dimension.

    Parameters
    ----------
    quantile : float in (0, 1), default=0.5
        The quantile ``tau`` to estimate.
    epsilon : float, default=1.0
        Total privacy budget of one ``fit``.
    norm : {"linf", "l1", "l2", "auto"}, default="linf"
        The norm K of the perturbation b. ``"auto"`` picks the smallest-volume scaled ball
        (:func:`dpreg.noise.choose_norm`); a function of ``tau`` and the dimension only.
    bounds_X : tuple (lower, upper), "private" or None, default=None
        Public feature bounds (scalars or arrays of length ``n_features``); data are clipped
        into them. ``"private"`` releases them from the data with ``bounds_share`` of
        ``epsilon`` (:func:`dpreg._bounds.fit_bounds`, ``docs/private_workflow.md``; needs
        ``fit_intercept=True``). None reads them from the data with a
        :class:`~dpreg.exceptions.PrivacyLeakWarning` (not private).
    bounds_y : tuple (lower, upper), "private" or None, default=None
        Public response bounds (scalars); responses are clipped into them (this changes no
        conditional quantile inside the box). They also set the unit of ``bandwidth``.
        ``"private"`` and None as for ``bounds_X``.
    fit_intercept : bool, default=True
        Fit an intercept. Without one, features and responses are only divided by
        ``max(|lower|, |upper|)`` (the model stays a line through the origin).
    bandwidth : "auto" or float > 0, default="auto"
        Smoothing bandwidth h in scaled response units (the response box is ``[-1, 1]``).
        ``"auto"``: ``clip(sqrt(m / (n epsilon)), 1e-3, 0.5)`` with m parameters
        (:func:`dpreg.linear_model._op_quantile_core.default_bandwidth`). The privacy
        guarantee holds for every public h; it must not be tuned on the private data.
    q : "auto" or float in (0, 1), default="auto"
        Share of the objective-perturbation budget spent on b (the rest pays for the
        Jacobian through gamma). ``"auto"`` minimises a data-independent error proxy
        (:func:`dpreg.linear_model._logistic_core.default_q` with this loss's constants).
    max_iter : int, default=1000
        Iterations of the L-BFGS warm start (the certified Newton phase that follows runs
        until its public stopping rule holds).
    random_state : None, int, RandomState or Generator, default=None
        Seeds the noise; a fixed value reproduces the fit exactly.
    accountant : BudgetAccountant, default=None
        Spends ``epsilon`` once per fit (checked before the data are read).
    bounds_share : "auto" or float in (0, 1), default="auto"
        With ``"private"`` bounds, the part of ``epsilon`` spent on them
        (:func:`dpreg._bounds.bounds_epsilon`); the regression gets the rest, so the fit
        still costs ``epsilon`` in total. Unused with public bounds.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Private coefficients in the units of ``X`` and ``y`` (0 for constant features).
    intercept_ : float
        Private intercept (0.0 when ``fit_intercept=False``).
    theta_ : ndarray
        The released parameter in the scaled parameterisation (intercept first).
    quantile_ : float
    norm_ : str
        The norm of b (resolves ``"auto"``).
    sensitivity_ : float
        ``Delta``, the K-norm sensitivity of one example's gradient.
    bandwidth_ : float
        The bandwidth h used (scaled response units).
    hessian_bound_ : float
        ``lambda = sup |w|_2^2 / (h sqrt(2 pi))``.
    q_ : float
    gamma_ : float
        The ridge of the sum-form objective the proof needs.
    amp_epsilon_ : float
        Budget of the output noise W.
    grad_tol_ : float
        Public certificate tolerance on the mean-form gradient.
    strong_convexity_ : float
        ``gamma / n``.
    amp_sensitivity_ : float
        l2 sensitivity W is calibrated to.
    bounds_X_, bounds_y_ : tuple of ndarray
        The bounds used (released ones with ``"private"``).
    n_iter_ : int
        Solver iterations (warm start plus certified steps). A function of the data: do not
        publish it.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg import ObjectivePerturbationQuantileRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, size=(20000, 5))
    >>> y = 1.0 + X @ [2.0, -1.0, 0.5, 0.0, 1.0] + rng.standard_normal(20000)
    >>> model = ObjectivePerturbationQuantileRegressor(
    ...     quantile=0.5, epsilon=1.0, bounds_X=(0, 10), bounds_y=(-30, 60), random_state=0
    ... ).fit(X, y)
    >>> np.round(model.coef_, 1)
    array([ 2. , -1. ,  0.5,  0. ,  1. ])
    >>> model.predict(X[:2]).shape
    (2,)
    """

    def __init__(
        self,
        quantile=0.5,
        epsilon=1.0,
        norm="linf",
        bounds_X=None,
        bounds_y=None,
        fit_intercept=True,
        bandwidth="auto",
        q="auto",
        max_iter=1000,
        random_state=None,
        accountant=None,
        bounds_share=DEFAULT_BOUNDS_SHARE,
    ):
        self.quantile = quantile
        self.epsilon = epsilon
        self.norm = norm
        self.bounds_X = bounds_X
        self.bounds_y = bounds_y
        self.fit_intercept = fit_intercept
        self.bandwidth = bandwidth
        self.q = q
        self.max_iter = max_iter
        self.random_state = random_state
        self.accountant = accountant
        self.bounds_share = bounds_share

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True
        tags.target_tags.required = True
        return tags

    def _check_params(self):
        tau = check_quantile(self.quantile)
        epsilon = check_epsilon(self.epsilon)
        if epsilon < _MIN_EPSILON:
            raise ValueError(f"epsilon must be at least {_MIN_EPSILON:g}, got {epsilon!r}.")
        norm = self.norm
        if not (isinstance(norm, str) and norm in (*_NORMS, "auto")):
            raise ValueError(f"norm must be one of 'l1', 'l2', 'linf', 'auto'; got {norm!r}.")
        h = self.bandwidth
        if not (isinstance(h, str) and h == "auto"):
            if (
                isinstance(h, bool)
                or not isinstance(h, numbers.Real)
                or not (np.isfinite(h) and h > 0)
            ):
                raise ValueError(f"bandwidth must be 'auto' or a positive number, got {h!r}.")
        q = self.q
        if not (isinstance(q, str) and q == "auto"):
            if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0.0 < q < 1.0:
                raise ValueError(f"q must be 'auto' or a number in (0, 1), got {q!r}.")
        mi = self.max_iter
        if isinstance(mi, bool) or not isinstance(mi, numbers.Integral) or mi < 1:
            raise ValueError(f"max_iter must be a positive integer, got {mi!r}.")
        # the seed is checked here too: a bad one must not fail after the spend
        rng = check_random_state(self.random_state)
        return tau, epsilon, check_accountant(self.accountant), rng

    def fit(self, X, y):
        """Fit the private quantile regression (spends ``epsilon`` once).

        Every input is validated before the spend; after it nothing raises on the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        tau, epsilon, accountant, rng = self._check_params()
        accountant.check(epsilon, 0.0)
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        n, n_features = X.shape
        private = [
            check_bounds_param(self.bounds_X, n_features, "bounds_X"),
            check_bounds_param(self.bounds_y, 1, "bounds_y"),
        ]
        if any(private):
            return self._fit_private_bounds(X, y, private, tau, epsilon, accountant, rng)
        lo, hi = check_bounds(self.bounds_X, n_features, X, name="bounds_X")
        y_lo, y_hi = check_bounds(self.bounds_y, 1, y, name="bounds_y")
        if self.bounds_y is None and not y_hi[0] > y_lo[0]:  # constant data: pad by one unit
            y_lo, y_hi = y_lo - 1.0, y_hi + 1.0
        if not y_hi[0] > y_lo[0]:
            raise ValueError("bounds_y need lower < upper.")
        y_box = PublicBox(y_lo, y_hi, symmetric=not self.fit_intercept)
        if not y_box.half[0] > np.finfo(float).tiny:
            raise ValueError("bounds_y are too narrow to scale the response.")
        Z, mid, half = scale_features(X, lo, hi, self.fit_intercept)
        active = half > np.finfo(float).tiny  # constant features get coefficient 0
        box = None
        if not self.fit_intercept:  # scaled features fill [lo / half, hi / half]
            box = (lo[active] / half[active], hi[active] / half[active])
        plan = self._public_plan(tau, epsilon, n, int(active.sum()), box)
        accountant.spend(epsilon, 0.0)  # atomic reserve, after every check, before computing
        return self._release(plan, Z, y, y_box, (lo, hi, mid, half, active), rng)

    def _fit_private_bounds(self, X, y, private, tau, epsilon, accountant, rng):
        """``fit`` with ``"private"`` bounds: every check that can fail runs before the spend.

        The public plan depends on ``(tau, n, n_features, the regression's budget)`` only: a
        released box has positive width (:func:`dpreg._bounds.fit_bounds`), so every feature
        is active and the model has ``n_features + 1`` parameters whatever the data. The
        regression's budget from :func:`dpreg._bounds.split_budget` is the one ``fit_bounds``
        leaves (the same function of public quantities), so the plan
        made before the spend is the plan used after it. After the spend the only
        data-dependent steps are the bounds release, the clipping and scaling, and the
        certified fit: none of them raises.
        """
        n, n_features = X.shape
        if not self.fit_intercept:
            raise ValueError(
                "'private' bounds need fit_intercept=True (without an intercept the "
                "sensitivity depends on the released box)."
            )
        check_fit_share(self.bounds_share)
        n_private = n_features * private[0] + private[1]
        _, eps_fit = split_budget(self.bounds_share, epsilon, n, n_private)
        plan = self._public_plan(tau, eps_fit, n, n_features, None)
        params = [self.bounds_X, self.bounds_y]
        if not private[0]:
            params[0] = check_bounds(self.bounds_X, n_features, X, name="bounds_X")
        if not private[1]:
            params[1] = check_bounds(self.bounds_y, 1, y, name="bounds_y")
            if not (params[1][1][0] - params[1][0][0]) / 2.0 > np.finfo(float).tiny:
                raise ValueError("bounds_y are too narrow to scale the response.")
        accountant.spend(epsilon, 0.0)  # atomic reserve, after every check, before any release
        (bx, by), _ = fit_bounds(
            [X, y], params, epsilon, self.bounds_share, rng, ("bounds_X", "bounds_y")
        )
        lo, hi = bx
        y_box = PublicBox(by[0], by[1], symmetric=False)
        Z, mid, half = scale_features(X, lo, hi, True)
        active = np.ones(n_features, dtype=bool)  # released widths are positive
        return self._release(plan, Z, y, y_box, (lo, hi, mid, half, active), rng)

    def _public_plan(self, tau, epsilon, n, p, box):
        """Every constant of the release from public quantities: ``tau``, ``epsilon``, ``n``,
        the number ``p`` of active features and (without an intercept) the scaled feature
        ``box``. Raises ``ValueError`` (before the spend) where no release can be calibrated.
        """
        dim = p + int(bool(self.fit_intercept))
        if dim == 0:
            raise ValueError("The model has no parameter (no intercept and no varying feature).")
        cands = list(_NORMS) if self.norm == "auto" else [self.norm]
        sens_all = [quantile_sensitivity(tau, p, c, self.fit_intercept, box) for c in cands]
        norm = choose_norm(cands, sens_all, dim=dim) if len(cands) > 1 else cands[0]
        sensitivity = sens_all[cands.index(norm)]
        row_sq = float(dim) if box is None else float(np.sum(np.maximum(box[0] ** 2, box[1] ** 2)))
        eps_amp, eps_op = shares_within(
            [AMP_SHARE * epsilon, epsilon - AMP_SHARE * epsilon], epsilon, lower=1
        ).tolist()  # exactly within epsilon
        h = default_bandwidth(n, dim, eps_op) if self.bandwidth == "auto" else float(self.bandwidth)
        lam = hessian_bound(row_sq, h)
        if isinstance(self.q, str):
            q = default_q(eps_op, dim, norm, n, loss=nominal_loss(row_sq, h, sensitivity))
        else:
            q = float(self.q)
        grad_scale = noise_scale(dim, sensitivity, eps_op * q, n)
        gamma = max(
            gamma_for(eps_op, q, dim, lam=lam),
            MIN_CURVATURE * n,
            # a float point always passes; each row's loss at 0 is at most 1 + h / sqrt(2 pi)
            resolution_gamma(n, dim, grad_scale, lam, 1.0 + h / math.sqrt(2.0 * math.pi)),
        )
        grid = perturbation_grid(dim, sensitivity, eps_op * q)
        amp = amp_plan(eps_amp, dim, gamma / n, grad_scale, grid.shift / n)
        if not np.isfinite(amp.sensitivity):
            raise ValueError("epsilon is too small for the certified release to be calibrated.")
        return dict(
            tau=tau, dim=dim, norm=norm, sensitivity=sensitivity, h=h, lam=lam, q=q,
            gamma=gamma, eps_op=eps_op, amp=amp, lip=lipschitz(row_sq, h, gamma, n),
        )  # fmt: skip

    def _release(self, plan, Z, y, y_box, scaling, rng):
        """The certified release and the fitted attributes (after the spend; never raises)."""
        lo, hi, mid, half, active = scaling
        tau, dim, norm, sensitivity = plan["tau"], plan["dim"], plan["norm"], plan["sensitivity"]
        h, gamma, amp = plan["h"], plan["gamma"], plan["amp"]
        W = design(Z[:, active], self.fit_intercept)
        v = y_box.to_unit(y[:, None])[:, 0]  # clipped into bounds_y, scaled onto [-1, 1]
        b = _perturbation(norm, dim, sensitivity, plan["eps_op"] * plan["q"], rng)
        problem = QuantileProblem(W, v, tau, h, gamma, b)
        theta0, it = solve_lbfgs(W, v, tau, h, gamma, b, max_iter=int(self.max_iter))
        theta_hat, steps = certify_problem(theta0, problem, amp.tol, plan["lip"])
        out = KNormMechanism("l2", dim, amp.sensitivity, amp.epsilon, random_state=rng)
        theta = out.randomise(theta_hat)  # exact grid release (docs/floating_point.md)

        offset = int(bool(self.fit_intercept))
        coef_unit = np.zeros((1, Z.shape[1]))
        coef_unit[0, active] = theta[offset:]
        y_map = (y_box.mid[0], y_box.half[0])
        coef, intercept = unscale_coefficients(
            coef_unit, theta[:1] if self.fit_intercept else None, mid, half, y_map
        )
        self.coef_ = coef[0]
        self.intercept_ = float(intercept[0])
        self.theta_ = theta
        self.quantile_ = tau
        self.norm_ = norm
        self.sensitivity_ = float(sensitivity)
        self.bandwidth_ = h
        self.hessian_bound_ = plan["lam"]
        self.q_ = plan["q"]
        self.gamma_ = gamma
        self.amp_epsilon_ = amp.epsilon
        self.grad_tol_ = amp.tol
        self.strong_convexity_ = amp.mu
        self.amp_sensitivity_ = amp.sensitivity
        self.bounds_X_ = (lo, hi)
        self.bounds_y_ = (y_box.lower, y_box.upper)
        self.n_iter_ = it + steps
        return self

    def predict(self, X):
        """Predicted ``tau``-quantiles ``X @ coef_ + intercept_`` (rows are not clipped)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_
