r"""Differentially private logistic regression by extended objective perturbation.

Seed 001 (Awan & Slavković), section 4, Algorithm 2, with the sign of gamma corrected
(SPEC section 3); built on Chaudhuri, Monteleoni & Sarwate (2011) and Kifer, Smith & Thakurta
(2012).

Mechanism
---------
Features are clipped into the user's ``bounds_X`` and mapped affinely onto [-1, 1] (symmetric
scaling, which keeps the origin, when ``fit_intercept=False``); when an intercept is fitted a
constant column of ones is prepended, so every scaled row ``z`` lies in [-1, 1]^m, m counting
the intercept column. Labels are mapped to y in {0, 1} from the public ``classes``. For
``l(theta; z, y) = log(1 + exp(theta.z)) - y theta.z``, a convex regulariser ``r`` and
a share ``0 < q < 1`` of the budget, the released parameter is

    theta_DP = argmin_theta  (1/n) sum_i l(theta; z_i, y_i) + r(theta)/n
                             + gamma/(2n) |theta|_2^2 + V.theta / n,

    V ~ density ∝ exp(-epsilon q |V|_K / Delta_K),    gamma = lambda / (exp(epsilon (1-q)) - 1),

with ``lambda = m/4`` and ``Delta_inf = 2, Delta_2 = 2 sqrt(m), Delta_1 = 2m`` (``Delta_p =
2 m^{1/p}``). The objective is the paper's (its L-hat is the *mean* loss); multiplying it by n
gives the sum form ``sum_i l_i + r + gamma/2 |theta|^2 + V.theta`` used in the proof, with the
same minimiser. V is therefore *not* divided by any further n: its scale ``Delta/(epsilon q)``
is calibrated to the sensitivity of one example's gradient.

Guarantee (epsilon-DP, replace-one adjacency)
---------------------------------------------
Proof sketch, following Kifer et al. (2012) as adapted in seed 001, appendix:

1. *Bijection.* For ``gamma > 0`` the objective is strictly convex and coercive, so the
   minimiser ``a`` is unique. When ``r`` is twice differentiable, the first-order condition
   gives ``V = V(a; D) = -(sum_i grad l(a; z_i) + grad r(a) + gamma a)``: V and a determine
   each other, and the density of the output is ``f_V(V(a; D)) |det grad_a V(a; D)|``.
2. *Noise factor.* If D and D' differ in the n-th example, ``V(a; D) - V(a; D') =
   grad l(a; z'_n) - grad l(a; z_n)``. For every ``theta`` each coordinate of
   ``(sigmoid(theta.z) - y) z`` lies in (-1, 1), so each coordinate of the difference lies in
   (-2, 2) and its lp norm is at most ``2 m^{1/p}`` = Delta. By the triangle inequality for the
   K-norm, ``f_V(V(a; D)) / f_V(V(a; D')) <= exp(epsilon q)``.
3. *Jacobian factor.* ``-grad_a V(a; D) = C + H_n`` with ``C = sum_{i<n} H_i + hess r(a) +
   gamma I`` and ``H_i = s_i (1 - s_i) z_i z_i^T``. Both the loss and r are convex, so
   ``C >= gamma I``. ``H_n`` and ``H'_n`` are positive semi-definite of rank one with
   eigenvalue ``s(1-s)|z|_2^2 <= m/4 = lambda``. Hence
   ``det(C + H'_n)/det(C + H_n) <= det(I + C^{-1} H'_n) <= 1 + lambda/gamma =
   exp(epsilon (1 - q))``.
4. Multiplying, the density ratio is at most ``exp(epsilon q) exp(epsilon (1 - q)) =
   exp(epsilon)``.

Non-smooth convex ``r`` (the L1 part of an elastic net) is covered by Kifer et al. (2012),
Theorem 1 and appendix C: approximate ``r`` by smooth convex functions, each approximation
gives an epsilon-DP output, and the outputs converge in distribution to the non-smooth one.
The argument needs only convexity of r, which is why ``alpha >= 0`` and ``0 <= l1_ratio <= 1``
are enforced.

One-vs-rest (``multi_class="ovr"``) solves K > 2 classes as K binary problems, each with budget
``epsilon / K`` (a changed example may change its features, so it touches every binary problem),
and basic composition gives epsilon in total. Two classes use one binary problem and the full
epsilon. K is the number of *public* classes (``classes=``), so the number of problems and the
budget split never depend on which labels occur in the data; a class absent from the data is a
problem whose labels are all 0.

``multi_class="multinomial"`` (and the default ``"auto"`` with the lbfgs solver, a ridge
penalty and numpy input, for 3 to 6 classes with the default norm and for any K > 2 with
``norm="auto"``: where it was measured ahead, see
``ObjectivePerturbationLogistic._softmax_chosen``) fits K > 2 classes as one softmax problem
with the full epsilon; its sensitivity, class-wise noise norm and gamma are derived in
:mod:`dpreg.linear_model._multinomial`.

Certified release (approximate minima perturbation)
---------------------------------------------------
The steps above hold for the exact minimiser ``theta*``. Each problem's budget is split into
``epsilon_op = (1 - AMP_SHARE) epsilon_problem`` for the objective perturbation (V and gamma)
and ``epsilon_amp = AMP_SHARE epsilon_problem`` for an output noise W. The solver iterates
until the minimal subgradient of the mean-form objective has l2 norm at most a public ``tol``
(there is no give-up exit), which by ``mu``-strong convexity (``mu`` public, at least gamma/n)
puts the point within ``tol/mu`` of ``theta*`` for every data set; ``theta_hat + W`` with W
l2 K-norm noise calibrated to ``2 tol / mu`` is then ``epsilon_problem``-DP in total. Proof,
floating-point margin and budget split: :mod:`dpreg.linear_model._certify` and
``docs/objective_perturbation.md``.

Where each assumption is enforced
---------------------------------
* rows in [-1, 1]^m (bounded gradient and Hessian): data are clipped into ``bounds_X`` and
  scaled (``dpreg._bounds.PublicBox``); the intercept column is exactly 1;
* labels in {0, 1}: mapped from the public ``classes``, never taken from the user as
  numbers; a label outside ``classes`` is rejected by a ValueError during input validation,
  before anything is spent (like NaN: the guarantee is stated for data sets whose labels lie
  in the declared label set);
* convex loss: the loss is fixed (logistic); convex r: ``alpha >= 0``, ``l1_ratio`` in [0, 1];
* strong convexity: gamma is computed from (epsilon, q, m) and is always > 0; there is no
  parameter to lower it. A user ridge (``alpha``, ``l1_ratio < 1``) adds
  ``alpha (1 - l1_ratio) I`` to C on the coefficients (not the intercept), so step 3 only needs
  ``(n_free/gamma + (m - n_free)/(gamma + ridge))/4 <= exp(epsilon (1 - q)) - 1`` and gamma
  is solved from that (``_logistic_core.gamma_for``): the user's ridge pays part of the
  Jacobian;
* ``0 < q < 1`` is validated; Delta and lambda are functions of m and the norm only;
* exact minimiser: replaced by the certified release above; every released point passed the
  public certificate, whatever ``max_iter`` or the solver.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from scipy.special import log_expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._bounds import (
    AUTO_SHARE_LIMIT,
    DEFAULT_BOUNDS_SHARE,
    PublicBox,
    check_bounds_param,
    check_fit_share,
    clip_released,
    fit_bounds,
)
from .._validation import (
    check_bounds,
    check_epsilon,
    check_norm,
    check_random_state,
    check_unit_sample_weight,
    equal_share,
    shares_within,
)
from ..accounting import check_accountant
from ..exceptions import PrivacyLeakWarning
from ..noise import KNormMechanism, choose_norm
from . import _dask_logistic
from ._certify import (
    AMP_SHARE,
    MIN_CURVATURE,
    amp_plan,
    certify,
    certify_problem,
    lipschitz,
    noise_scale,
    perturbation_grid,
    resolution_gamma,
    strong_convexity,
)
from ._dask_stats import is_dask as _is_dask
from ._logistic_core import (
    default_q,
    gamma_for,
    gradient_sensitivity,
    hessian_bound,
    solve_cvxpy,
    solve_lbfgs,
)
from ._multinomial import (
    ROWS,
    SoftmaxProblem,
    choose_softmax_norm,
    default_q_softmax,
    rows_perturbation,
    softmax_gamma,
    softmax_lipschitz,
    softmax_sensitivity,
    solve_softmax_lbfgs,
)

#: ``multi_class="auto"`` with ``norm="linf"`` fits the softmax model for 3 to this many
#: classes, one-vs-rest beyond (measured: ``docs/objective_perturbation.md``, section 2b).
LINF_SOFTMAX_MAX_CLASSES = 6

#: Smallest epsilon accepted: below it the certificate's arithmetic would overflow.
_MIN_EPSILON = 1e-50


def _perturbation(norm, dim, sensitivity, epsilon, rng):
    """The objective-perturbation vector b: an exact grid release of the ideal K-norm vector.

    ``b = g round(b_ideal / g)`` with ``b_ideal`` the real-valued K-norm draw (density
    ``∝ exp(-epsilon |b|_K / sensitivity)``) and g the public grid of
    :func:`._certify.perturbation_grid`, whose shift bound the AMP plan charges: the released
    point is certified against the exact minimiser for ``b_ideal``, so the proof's continuous
    change of variables applies to the ideal b (``docs/floating_point.md``, section 5).

    An lp norm with p not in {1, 2, inf} (``norm`` a float p) goes through the exact lp
    release (:mod:`dpreg.noise._exact_lp`: generalised-Gaussian coordinates by exact
    rejection), on the same grid with the same charged shift.
    """
    from ..noise._exact import release_knorm  # noqa: PLC0415

    p = {"l1": 1, "l2": 2, "linf": np.inf}.get(norm, norm)
    bits = perturbation_grid(dim, sensitivity, epsilon).bits
    return release_knorm(np.zeros(dim), p, dim, sensitivity, epsilon, rng, grid_bits=bits)


class ObjectivePerturbationLogistic(ClassifierMixin, BaseEstimator):
    """Logistic regression, epsilon-DP by extended objective perturbation (K-norm noise).

    Minimises the mean logistic loss plus a convex regulariser, a ridge ``gamma/(2n)|theta|^2``
    and a random linear term ``V.theta/n`` whose K-norm noise V is calibrated to the
    per-example gradient sensitivity (seed 001, Algorithm 2). See the module docstring for the
    privacy proof and ``docs/objective_perturbation.md`` for the choice of ``q``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of one ``fit`` (pure epsilon-DP, delta = 0).
    norm : {"linf", "auto", "l2", "l1", "l1_linf"} or float >= 1, default="linf"
        K-norm of the noise V. For the binary and one-vs-rest problems ``"auto"`` picks the
        norm whose scaled ball ``Delta_K K`` has the smallest volume
        (:func:`dpreg.noise.choose_norm`), which is ``"linf"``. For the multinomial model
        ``"linf"``, ``"l2"`` and ``"l1"`` are the entrywise norms of the stacked (K, m)
        parameter, and ``"auto"`` picks the smallest noise second moment among ``"l1_linf"``
        (the class-wise norm ``sum_k max_j |V_kj|`` of :mod:`dpreg.linear_model._multinomial`,
        the choice unless m K is tiny), ``"linf"`` and ``"l2"``; ``"l1_linf"`` is accepted
        only there. Every norm (named, or a float p >= 1) draws V as an exact grid release
        (``docs/floating_point.md``, section 5a). With K > 2 classes ``norm="auto"`` is the
        more accurate choice (the class-wise noise; measured ahead of the default on iris,
        wine, glass and digits, ``docs/objective_perturbation.md``, section 2b); the default
        stays ``"linf"`` (the fixed API).
    q : float in (0, 1) or "auto", default="auto"
        Share of epsilon spent on the noise V; the rest pays for the Jacobian through gamma.
        ``"auto"`` minimises, over q in [0.30, 0.90], a data-independent error proxy of the
        public (epsilon per problem, m, norm, n), see
        :func:`dpreg.linear_model._logistic_core.default_q`; it costs no privacy. ``q=0.5`` is
        Kifer et al.'s choice.
    alpha : float >= 0, default=0.0
        Strength of the user's regulariser ``r(w) = alpha ((1 - l1_ratio)/2 |w|_2^2 +
        l1_ratio |w|_1)`` on the coefficients of the *scaled* features (not the intercept). In
        the sum form of the objective this is scikit-learn's ``C = 1 / alpha``.
    l1_ratio : float in [0, 1], default=0.0
        Elastic-net mixing; anything above 0 needs ``solver="cvxpy"``.
    fit_intercept : bool, default=True
        Fit an intercept (it counts in m, the dimension of the noise).
    bounds_X : tuple (lower, upper), "private" or None, default=None
        Data-independent feature bounds (scalars or arrays of length n_features). Data outside
        are clipped. ``"private"`` releases them from the data with ``bounds_share`` of
        ``epsilon`` (see ``docs/private_workflow.md``; at small ``n * epsilon`` one symmetric
        box ``-/+ 2 median |x_j|`` per feature, :func:`dpreg._bounds.scale_only_rule`).
        ``None`` reads them from the data with a
        :class:`~dpreg.exceptions.PrivacyLeakWarning` (not private).
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set (at least two distinct labels). One binary problem is fitted for
        two classes; for more, one softmax problem or one problem per class (see
        ``multi_class``), whether or not a class occurs in ``y``, so the model and the budget
        split never depend on the data. A label of ``y`` outside ``classes`` is an
        input error: a ``ValueError`` at validation, before anything is spent (like NaN).
        ``None`` reads the labels from the data with a
        :class:`~dpreg.exceptions.PrivacyLeakWarning` (which labels occur is then revealed).
    solver : {"lbfgs", "cvxpy"}, default="lbfgs"
        ``"lbfgs"``: scipy L-BFGS-B with the analytic gradient (fast). ``"cvxpy"``: an
        exponential-cone program (slow, needed for L1 and elastic-net penalties). Both return
        the same minimiser.
    multi_class : {"auto", "ovr", "multinomial", "binary"}, default="auto"
        ``"auto"``: ``"multinomial"`` for K > 2 classes with the solver ``"lbfgs"``, a ridge
        penalty (``alpha == 0`` or ``l1_ratio == 0``) and numpy input, when ``norm`` is
        ``"auto"`` or ``"l1_linf"`` (any K), or ``norm="linf"`` (the default) and
        K <= 6 (:data:`LINF_SOFTMAX_MAX_CLASSES`); ``"ovr"`` otherwise; a function of public
        settings only. The rule follows the measurement in
        ``docs/objective_perturbation.md`` (section 2b): with the class-wise noise the
        multinomial model was ahead of one-vs-rest at every epsilon in {0.5, ..., 8} on
        every data set; with the stacked linf noise it was ahead or tied up to 6 classes and
        behind on the 10 digits at epsilon <= 2.
        ``"ovr"``: K > 2 classes are fitted one-vs-rest with ``epsilon / K`` each.
        ``"multinomial"``: K > 2 classes are fitted as one softmax problem with the full
        epsilon (solver ``"lbfgs"``, ridge penalty only; see
        :mod:`dpreg.linear_model._multinomial`); two classes use the binary model.
        ``"binary"``: raise a ``ValueError`` if y has more than two classes.
    max_iter : int, default=1000
        Iteration cap of the L-BFGS warm start only. The release is always certified: Newton
        steps continue from wherever L-BFGS stopped until the public tolerance is met, so
        ``max_iter`` changes the running time, never the guarantee.
    bounds : tuple (lower, upper), optional
        Deprecated name of ``bounds_X`` (a ``FutureWarning``).
    random_state : None, int, RandomState or Generator, default=None
        Seed of the noise V.
    accountant : BudgetAccountant or None, default=None
        Checked for ``epsilon`` before the data are touched and charged after a successful fit.
    bounds_share : "auto" or float in (0, 1), default="auto"
        Share of ``epsilon`` spent on ``bounds_X="private"``
        (:func:`dpreg._bounds.fit_bounds`); the model gets the rest, so the fit still costs
        ``epsilon``, reserved once. Unused with public bounds.
        ``"auto"`` grows with the number of private columns and falls with n (between 0.05 and
        0.5, up to 0.6 when small data need it; :func:`dpreg._bounds.bounds_epsilon`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients on the original feature scale. Same floating dtype as the ``X`` given to
        ``fit`` (float32 stays float32, as in scikit-learn); the privacy calibration, the
        solver and the certificate always run in float64.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Same dtype as ``coef_``.
    theta_ : ndarray of shape (n_problems, m)
        Released parameters in the scaled space, intercept first when fitted (float64).
    norm_ : str or float
        The norm used (after resolving ``"auto"``).
    q_ : float
        The budget share used (after resolving ``"auto"``).
    epsilon_per_problem_ : float
        ``epsilon / n_problems``.
    sensitivity_ : float
        Delta_K of the per-example gradient.
    hessian_bound_ : float
        lambda = m / 4, the bound on the per-example Hessian.
    gamma_ : float
        The ridge gamma of the proof (reduced when the user's ridge pays part of it).
    n_iter_ : ndarray of shape (n_problems,)
        L-BFGS (or cvxpy) iterations plus certification steps. A function of the data (the
        release is ``theta_``, not the path to it): do not publish it.
    n_samples_fit_ : int
        The number of rows of the fit (public: neighbouring data sets have the same n);
        ``release_hessian`` refuses data with another number of rows before it spends.
    multi_class_ : {"binary", "ovr", "multinomial"}
        The model fitted.
    sample_weighted_ : bool
        Whether ``fit`` got ``sample_weight`` (then ``release_hessian``/``conf_int`` refuse).
    bounds_ : tuple of ndarray
        The (lower, upper) bounds used.
    predict_bounds_ : tuple of ndarray or None
        The released box that :meth:`decision_function` clips ``X`` into (``bounds_X=
        "private"`` only; None otherwise).
    amp_epsilon_ : float
        The part of ``epsilon_per_problem_`` spent on the output noise W.
    grad_tol_ : float
        Public tolerance on the l2 norm of the minimal subgradient of the mean-form objective.
    strong_convexity_ : float
        Public strong convexity ``mu`` of the mean-form objective.
    amp_sensitivity_ : float
        ``2 grad_tol_ / strong_convexity_``: the l2 sensitivity W is calibrated to.
    n_features_in_ : int
    feature_names_in_ : ndarray, only when X has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg import ObjectivePerturbationLogistic
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 3))
    >>> y = (rng.uniform(size=2000) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    >>> clf = ObjectivePerturbationLogistic(
    ...     epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], random_state=0
    ... )
    >>> clf = clf.fit(X, y)
    >>> clf.coef_.shape, clf.predict_proba(X[:2]).shape
    ((1, 3), (2, 2))
    >>> bool(clf.score(X, y) > 0.6)
    True
    """

    def __init__(
        self,
        epsilon=1.0,
        norm="linf",
        q="auto",
        alpha=0.0,
        l1_ratio=0.0,
        fit_intercept=True,
        bounds_X=None,
        classes=None,
        solver="lbfgs",
        multi_class="auto",
        max_iter=1000,
        random_state=None,
        accountant=None,
        bounds="deprecated",
        bounds_share=DEFAULT_BOUNDS_SHARE,
    ):
        self.epsilon = epsilon
        self.norm = norm
        self.q = q
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.bounds_X = bounds_X
        self.classes = classes
        self.solver = solver
        self.multi_class = multi_class
        self.max_iter = max_iter
        self.random_state = random_state
        self.accountant = accountant
        self.bounds = bounds
        self.bounds_share = bounds_share

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.non_deterministic = self.random_state is None
        return tags

    # ------------------------------------------------------------------ validation
    def _check_params(self):
        epsilon = check_epsilon(self.epsilon)
        if epsilon < _MIN_EPSILON:
            # Public check before the data: the noise (scale ~ 1/epsilon) and gamma would
            # overflow double precision in the certificate, and the release would be noise.
            raise ValueError(
                f"epsilon must be at least {_MIN_EPSILON:g} for this estimator, got {epsilon!r}."
            )
        norm = check_norm(self.norm, allowed=("l1", "l2", "linf", "auto", ROWS), allow_ball=False)
        if not (isinstance(self.q, str) and self.q == "auto"):
            if isinstance(self.q, bool) or not isinstance(self.q, numbers.Real):
                raise ValueError(f"q must be a number in (0, 1) or 'auto', got {self.q!r}.")
            if not 0.0 < float(self.q) < 1.0:
                raise ValueError(f"q must lie strictly between 0 and 1, got {self.q!r}.")
        if (
            isinstance(self.alpha, bool)
            or not isinstance(self.alpha, numbers.Real)
            or not np.isfinite(self.alpha)
            or self.alpha < 0
        ):
            raise ValueError(
                f"alpha must be a finite number >= 0 (r must be convex), got {self.alpha!r}."
            )
        if (
            isinstance(self.l1_ratio, bool)
            or not isinstance(self.l1_ratio, numbers.Real)
            or not 0.0 <= self.l1_ratio <= 1.0
        ):
            raise ValueError(f"l1_ratio must lie in [0, 1], got {self.l1_ratio!r}.")
        if self.solver not in ("lbfgs", "cvxpy"):
            raise ValueError(f"solver must be 'lbfgs' or 'cvxpy', got {self.solver!r}.")
        if self.solver == "lbfgs" and self.alpha > 0 and self.l1_ratio > 0:
            raise ValueError(
                "An L1 or elastic-net penalty (l1_ratio > 0) is not smooth; use solver='cvxpy'."
            )
        if self.multi_class not in ("auto", "ovr", "binary", "multinomial"):
            raise ValueError(
                "multi_class must be 'auto', 'ovr', 'multinomial' or 'binary', got "
                f"{self.multi_class!r}."
            )
        if self.multi_class == "multinomial" and (
            self.solver != "lbfgs" or (self.alpha > 0 and self.l1_ratio > 0)
        ):
            raise ValueError(
                "multi_class='multinomial' supports solver='lbfgs' with a ridge penalty only "
                "(l1_ratio=0)."
            )
        if (
            isinstance(self.max_iter, bool)
            or not isinstance(self.max_iter, numbers.Integral)
            or self.max_iter < 1
        ):
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}.")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be a bool, got {self.fit_intercept!r}.")
        accountant = check_accountant(self.accountant)
        classes = self._check_classes()
        if classes is not None and len(classes) > 2 and self.multi_class == "binary":
            raise ValueError(
                f"multi_class='binary' but classes has {len(classes)} labels; use "
                "multi_class='ovr'."
            )
        bounds_X = self._bounds_X()
        share_b = check_fit_share(self.bounds_share)
        share_b = AUTO_SHARE_LIMIT if isinstance(share_b, str) else share_b  # largest "auto"
        private = check_bounds_param(bounds_X, 1, "bounds_X") if isinstance(bounds_X, str) else 0
        # Public: the smallest budget that reaches a noise scale or gamma (both ~ 1/budget).
        per_problem = epsilon * (1.0 - share_b) if private else epsilon
        if classes is not None and len(classes) > 2 and not self._softmax_chosen(len(classes)):
            per_problem = per_problem / len(classes)
        share = 0.01 if isinstance(self.q, str) else min(float(self.q), 1.0 - float(self.q))
        if per_problem * share * (1.0 - AMP_SHARE) < _MIN_EPSILON:
            raise ValueError(
                "epsilon per problem times min(q, 1 - q) must be at least "
                f"{_MIN_EPSILON:g} (double precision overflows below), got epsilon="
                f"{epsilon!r}, q={self.q!r}."
            )
        return epsilon, norm, accountant, classes, bounds_X

    def _softmax_chosen(self, n_classes, dask_input=False):
        """Whether ``n_classes > 2`` classes are fitted as one softmax problem (public settings
        only: the public class count, norm, solver, penalty and input type).

        ``multi_class="auto"`` takes the softmax model with the lbfgs solver, a ridge penalty
        and numpy input when ``norm`` is ``"auto"`` or ``"l1_linf"`` (the class-wise noise was
        ahead of one-vs-rest in every measured cell) or when ``norm="linf"`` (the default) and
        K is at most :data:`LINF_SOFTMAX_MAX_CLASSES` (the stacked linf noise was ahead or
        tied there and behind one-vs-rest at more classes; ``docs/objective_perturbation.md``,
        section 2b). Otherwise one-vs-rest.
        """
        if self.multi_class != "auto":
            return self.multi_class == "multinomial" and n_classes > 2
        if n_classes <= 2 or dask_input or self.solver != "lbfgs":
            return False
        if self.alpha > 0 and self.l1_ratio > 0:
            return False
        if not isinstance(self.norm, str):
            return False
        if self.norm in ("auto", ROWS):
            return True
        return self.norm == "linf" and n_classes <= LINF_SOFTMAX_MAX_CLASSES

    def _bounds_X(self):
        """``bounds_X``, or the deprecated ``bounds`` with a FutureWarning."""
        if isinstance(self.bounds, str) and self.bounds == "deprecated":
            return self.bounds_X
        if self.bounds_X is not None:
            raise ValueError("Pass bounds_X only; bounds is its deprecated name.")
        warnings.warn(
            "ObjectivePerturbationLogistic(bounds=...) is deprecated; use bounds_X=... "
            "(same meaning).",
            FutureWarning,
            stacklevel=4,
        )
        return self.bounds

    def _check_classes(self):
        """The public label set as a sorted array, or None (labels read from the data)."""
        if self.classes is None:
            return None
        try:
            raw = np.asarray(self.classes)
            classes = np.unique(raw)
        except TypeError:
            raise ValueError(
                f"classes must be an array of comparable labels, got {self.classes!r}."
            ) from None
        if raw.ndim != 1 or len(classes) != len(raw) or len(classes) < 2:
            raise ValueError(
                f"classes must be a 1-D list of at least two distinct labels, got {self.classes!r}."
            )
        return classes

    def _encode_labels(self, y, classes):
        """Label set and class indices of y; with public ``classes`` nothing depends on y.

        A label outside ``classes`` raises a ValueError here, during input validation and
        before anything is spent: like a NaN, it is an input outside the domain the guarantee
        is stated for (label sets contained in ``classes``), not an event of the mechanism.
        """
        if classes is None:
            warnings.warn(
                "classes were not given, so the label set is read from the data. This leaks "
                "which labels occur (and, through their number, the model fitted: one binary "
                "problem, one-vs-rest problems with their budget split, or the multinomial "
                "model): pass classes=[...] to get the stated guarantee.",
                PrivacyLeakWarning,
                stacklevel=3,
            )
            classes, y_idx = np.unique(y, return_inverse=True)
            if len(classes) < 2:
                raise ValueError(
                    "ObjectivePerturbationLogistic needs samples of at least 2 classes, but "
                    f"the data contain only one class: {classes[0]!r}. Pass classes=[...] "
                    "to fit a public label set."
                )
            if len(classes) > 2 and self.multi_class == "binary":
                raise ValueError(
                    f"multi_class='binary' but y has {len(classes)} classes; use multi_class='ovr'."
                )
            return classes, y_idx
        try:
            known = np.isin(y, classes)
        except TypeError:
            known = np.zeros(len(y), dtype=bool)
        if not np.all(known):
            # the count, not a value: a label of y is a private record (s22 audit F3)
            raise ValueError(
                f"y contains labels outside classes={list(classes)!r} ({int(np.sum(~known))} of "
                f"{len(y)} labels); every label must belong to the public label set."
            )
        return classes, np.searchsorted(classes, y)

    def _prepare_dask(self, X, y, public_classes, bounds_X):
        """Dask input: metadata checks and one data pass, all before the spend."""
        softmax = self.multi_class == "multinomial" and (
            public_classes is None or len(public_classes) > 2
        )
        if softmax or self.solver != "lbfgs":
            raise ValueError(
                "dask input supports solver='lbfgs' with multi_class 'ovr' or 'binary' (ridge "
                "penalty only); use numpy input for the multinomial model or cvxpy."
            )
        X, y, labels, extents = _dask_logistic.prepare(X, y, public_classes, bounds_X is not None)
        self.n_features_in_ = int(X.shape[1])
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if public_classes is None:
            classes = self._encode_labels(labels, None)[0]  # warns; checks >= 2 classes
        else:
            classes = public_classes
        lower, upper = check_bounds(bounds_X, X.shape[1], X=extents, name="bounds_X")
        return X, y, classes, lower, upper

    def _box(self, lower, upper):
        """The public box (dpreg._bounds.PublicBox; symmetric map without intercept)."""
        return PublicBox(lower, upper, symmetric=not self.fit_intercept)

    def _scale(self, X, lower, upper):
        """Clip into the bounds and map onto [-1, 1] (symmetric map without intercept)."""
        return self._box(lower, upper).to_unit(X)

    def _unscale(self, theta, lower, upper, dtype=np.float64):
        """Map scaled-space parameters to (coef, intercept) on the original feature scale,
        computed in float64 and then cast to ``dtype`` (X's floating dtype)."""
        box = self._box(lower, upper)
        if self.fit_intercept:
            coef, intercept = box.unscale(theta[:, 1:], theta[:, 0])
        else:
            coef, intercept = box.unscale(theta)
        return coef.astype(dtype), intercept.astype(dtype)

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Fit the private model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Public-range weights in [0, 1] (numpy input). The weight is part of the record:
            example i contributes ``w_i`` times its loss to the (mean-form, divided by the
            public n) objective, so one record's gradient is ``w_i`` times an unweighted one
            and its Hessian ``w_i`` times a rank-one term bounded by ``m/4``; the sensitivity,
            gamma and the certificate are unchanged (``docs/objective_perturbation.md``,
            "Sample weights"). Weights outside [0, 1], NaN, all zero or a wrong shape raise a
            ``ValueError`` before anything is spent.

        Returns
        -------
        self : ObjectivePerturbationLogistic
        """
        epsilon, norm, accountant, public_classes, bounds_X = self._check_params()
        if accountant is not None:
            accountant.check(epsilon, 0.0)
        dask_input = _is_dask(X) or _is_dask(y)
        if dask_input:  # one validation pass before the spend (dpreg.linear_model._dask_logistic)
            if isinstance(bounds_X, str):
                raise ValueError("'private' bounds need numpy input (not dask arrays).")
            if sample_weight is not None:
                raise ValueError("sample_weight needs numpy input (not dask arrays).")
            X, y, classes, lower, upper = self._prepare_dask(X, y, public_classes, bounds_X)
            y_idx = _dask_logistic.label_index(y, classes)
            private = False
            out_dtype = np.dtype(np.float64)
        else:
            X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], y_numeric=False)
            # sklearn's convention: coef_/intercept_ take X's floating dtype; everything that
            # calibrates or certifies the release is computed in float64 from a float64 copy.
            out_dtype = X.dtype
            X = X.astype(np.float64, copy=False)
            check_classification_targets(y)
            classes, y_idx = self._encode_labels(y, public_classes)
            if sample_weight is not None:
                sample_weight = check_unit_sample_weight(sample_weight, X.shape[0])
            private = check_bounds_param(bounds_X, X.shape[1], "bounds_X")
            if not private:
                lower, upper = check_bounds(bounds_X, X.shape[1], X=X, name="bounds_X")
        n_samples, n_features = X.shape
        multinomial = self._softmax_chosen(len(classes), dask_input)
        if norm == ROWS and not multinomial:
            raise ValueError(
                f"norm={ROWS!r} is the class-wise norm of the multinomial model; it needs "
                "the multinomial model (multi_class='multinomial' or 'auto', solver='lbfgs', "
                "ridge penalty, numpy input) and more than two classes."
            )
        # one stream for the bounds and the model; built before the spend, because a bad
        # random_state raised here after the charge (session-21 audit)
        rng = check_random_state(self.random_state)
        accountant.spend(epsilon, 0.0)  # atomic reserve, after validation, before computing
        self.sample_weighted_ = sample_weight is not None  # the caller's (public) choice
        if private:  # bounds_share of epsilon on the bounds, the rest on the model
            ((lower, upper),), epsilon = fit_bounds(
                [X],
                [bounds_X],
                epsilon,
                self.bounds_share,
                rng,
                ("bounds_X",),
                scale_only_features=True,  # one release per feature at small n * eps
            )
        # a released ("private") box is applied again in decision_function
        self.predict_bounds_ = (lower, upper) if private else None
        if multinomial:
            return self._fit_multinomial(
                X, y_idx, classes, epsilon, norm, (lower, upper), out_dtype, rng, sample_weight
            )
        # Everything below up to the loop is a function of public quantities only.
        dim = n_features + int(self.fit_intercept)
        sens = {k: gradient_sensitivity(k, dim) for k in ("l1", "l2", "linf")}
        if norm == "auto":
            norm = choose_norm(list(sens), list(sens.values()), dim=dim)
        sensitivity = gradient_sensitivity(norm, dim)
        n_problems = 1 if len(classes) == 2 else len(classes)
        # every split exactly within its total (basic composition; float round-off could
        # add a float step: dpreg._validation.shares_within)
        eps_problem = equal_share(epsilon, n_problems)
        eps_amp, eps_op = shares_within(
            [AMP_SHARE * eps_problem, eps_problem - AMP_SHARE * eps_problem], eps_problem, lower=1
        ).tolist()
        alpha, l1_ratio = float(self.alpha), float(self.l1_ratio)
        ridge, n_free = alpha * (1.0 - l1_ratio), int(self.fit_intercept)
        l1 = alpha * l1_ratio
        if isinstance(self.q, str):
            q = default_q(eps_op, dim, norm, n_samples, ridge, n_free)
        else:
            q = float(self.q)
        # Raising gamma never hurts privacy; the floor keeps the certified distance public
        # and finite when the formula underflows at large epsilon.
        grad_scale = noise_scale(dim, sensitivity, eps_op * q, n_samples)
        gamma = max(
            gamma_for(eps_op, q, dim, ridge, n_free),
            MIN_CURVATURE * n_samples,
            resolution_gamma(  # a float point always passes the certificate
                n_samples, dim, grad_scale, lipschitz(dim, 0.0, ridge, n_samples),
                math.log(2.0), ridge if n_free == 0 else 0.0,
            ),
        )  # fmt: skip
        plan = amp_plan(
            eps_amp,
            dim,
            strong_convexity(gamma, ridge, n_free, n_samples),
            grad_scale,
            perturbation_grid(dim, sensitivity, eps_op * q).shift / n_samples,
        )
        lip = lipschitz(dim, gamma, ridge, n_samples)

        if dask_input:
            Z = _dask_logistic.scaled(X, lambda b: self._scale(b, lower, upper))
            sub = _dask_logistic.subsample(Z, y_idx)  # the warm start's rows, one pass
        else:
            Z = self._scale(X, lower, upper)
        thetas, n_iter = [], []
        targets = [1] if n_problems == 1 else range(len(classes))
        for k in targets:
            yk = (y_idx == k).astype(np.float64)
            V = _perturbation(norm, dim, sensitivity, eps_op * q, rng)
            if dask_input:  # same plan, same draws, same certificate; one pass per iteration
                theta_hat, it, _ = _dask_logistic.solve(
                    Z, yk, (sub[0], (sub[1] == k).astype(np.float64)), self.fit_intercept,
                    ridge, gamma, V, plan.tol, lip, self.max_iter,
                )  # fmt: skip
                steps = 0
            elif self.solver == "lbfgs":
                theta0, it, _ = solve_lbfgs(
                    Z, yk, self.fit_intercept, ridge, gamma, V, max_iter=self.max_iter,
                    sample_weight=sample_weight,
                )  # fmt: skip
            else:
                theta0, it, _ = solve_cvxpy(
                    Z, yk, self.fit_intercept, alpha, l1_ratio, gamma, V, sample_weight
                )
                if theta0 is None:
                    theta0 = np.zeros(dim)
            if not dask_input:
                weights = () if sample_weight is None else (sample_weight,)
                theta_hat, steps = certify(
                    theta0, Z, yk, self.fit_intercept, ridge, l1, gamma, V, plan.tol, lip, *weights
                )
            W = KNormMechanism("l2", dim, plan.sensitivity, plan.epsilon, random_state=rng)
            # exact grid release of theta_hat + W (floating-point safe: docs/floating_point.md)
            thetas.append(W.randomise(theta_hat))
            n_iter.append(it + steps)

        self.classes_ = classes
        self.theta_ = np.vstack(thetas)
        self.n_samples_fit_ = int(n_samples)  # public (replace-one adjacency)
        self.coef_, self.intercept_ = self._unscale(self.theta_, lower, upper, out_dtype)
        self.norm_ = norm
        self.q_ = q
        self.epsilon_per_problem_ = eps_problem
        self.sensitivity_ = sensitivity
        self.hessian_bound_ = hessian_bound(dim)
        self.gamma_ = gamma
        self.amp_epsilon_ = plan.epsilon
        self.grad_tol_ = plan.tol
        self.strong_convexity_ = plan.mu
        self.amp_sensitivity_ = plan.sensitivity
        self.n_iter_ = np.asarray(n_iter)
        self.bounds_ = (lower, upper)
        self.multi_class_ = "ovr" if n_problems > 1 else "binary"
        return self

    def _fit_multinomial(
        self, X, y_idx, classes, epsilon, norm, bounds, out_dtype, rng, sample_weight=None
    ):
        """One softmax problem with the full epsilon (see :mod:`._multinomial`)."""
        lower, upper = bounds
        n_samples, n_features = X.shape
        K, dim = len(classes), n_features + int(self.fit_intercept)
        if norm == "auto":
            norm = choose_softmax_norm(dim, K)
        sensitivity = softmax_sensitivity(norm, dim)
        eps_amp, eps_op = shares_within(
            [AMP_SHARE * epsilon, epsilon - AMP_SHARE * epsilon], epsilon, lower=1
        ).tolist()
        ridge, n_free = float(self.alpha), int(self.fit_intercept)
        if isinstance(self.q, str):
            q = default_q_softmax(eps_op, dim, K, norm, n_samples, ridge)
        else:
            q = float(self.q)
        # the user's ridge only adds curvature here (no relief on gamma: conservative)
        grad_scale = noise_scale(K * dim, sensitivity, eps_op * q, n_samples)
        gamma = max(
            softmax_gamma(eps_op, q, dim, K),
            MIN_CURVATURE * n_samples,
            resolution_gamma(  # a float point always passes the certificate
                n_samples, K * dim, grad_scale, softmax_lipschitz(dim, 0.0, ridge, n_samples),
                math.log(K), ridge if n_free == 0 else 0.0,
            ),
        )  # fmt: skip
        plan = amp_plan(
            eps_amp,
            K * dim,
            strong_convexity(gamma, ridge, n_free, n_samples),
            grad_scale,
            perturbation_grid(K * dim, sensitivity, eps_op * q).shift / n_samples,
        )
        lip = softmax_lipschitz(dim, gamma, ridge, n_samples)

        Z = self._scale(X, lower, upper)
        Z1 = np.column_stack([np.ones(n_samples), Z]) if self.fit_intercept else Z
        Y = np.zeros((n_samples, K))
        Y[np.arange(n_samples), y_idx] = 1.0
        if norm == ROWS:  # exact grid release too (rows_perturbation)
            V = rows_perturbation(K, dim, sensitivity, eps_op * q, rng)
        else:
            V = _perturbation(norm, K * dim, sensitivity, eps_op * q, rng)
        problem = SoftmaxProblem(Z1, Y, self.fit_intercept, ridge, gamma, V, sample_weight)
        theta0, it = solve_softmax_lbfgs(problem, self.max_iter)
        theta_hat, steps = certify_problem(theta0, problem, plan.tol, lip)
        W = KNormMechanism("l2", K * dim, plan.sensitivity, plan.epsilon, random_state=rng)
        released = W.randomise(theta_hat).reshape(K, dim)  # exact grid release

        self.classes_ = classes
        self.theta_ = released
        self.n_samples_fit_ = int(n_samples)  # public (replace-one adjacency)
        self.coef_, self.intercept_ = self._unscale(self.theta_, lower, upper, out_dtype)
        self.norm_ = norm
        self.q_ = q
        self.epsilon_per_problem_ = epsilon
        self.sensitivity_ = sensitivity
        self.hessian_bound_ = dim / 2.0
        self.gamma_ = gamma
        self.amp_epsilon_ = plan.epsilon
        self.grad_tol_ = plan.tol
        self.strong_convexity_ = plan.mu
        self.amp_sensitivity_ = plan.sensitivity
        self.n_iter_ = np.asarray([it + steps])
        self.bounds_ = (lower, upper)
        self.multi_class_ = "multinomial"
        return self

    # ------------------------------------------------------------------ predict
    def decision_function(self, X):
        """Signed scores ``X coef_^T + intercept_``: shape (n,) for two classes, else (n, K).

        Public bounds are the user's domain: rows outside them are scored unclipped. A box
        released by ``bounds_X="private"`` (``predict_bounds_``) is applied to ``X`` first,
        the same clip the model was fitted through (post-processing of a released value), so
        a feature whose released box came out narrow is not extrapolated.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        X = clip_released(X, getattr(self, "predict_bounds_", None))
        # float32 only when both X and the coefficients are float32 (numpy promotion, as in
        # scikit-learn's LogisticRegression)
        scores = X @ self.coef_.T + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Class labels: the positive class when the score is > 0, else the top OvR score."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_proba(self, X):
        """Probabilities: softmax of the scores for a multinomial fit; one-vs-rest sigmoids
        normalised to sum to one for K > 2 otherwise."""
        return np.exp(self.predict_log_proba(X))

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba` (computed stably)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return np.column_stack([log_expit(-scores), log_expit(scores)])
        if self.multi_class_ == "multinomial":
            return scores - np.logaddexp.reduce(scores, axis=1, keepdims=True)
        logp = log_expit(scores)
        return logp - np.logaddexp.reduce(logp, axis=1, keepdims=True)

    # ------------------------------------------------------------------ private inference
    # Thin hooks; the derivation and code live in _inference_logistic (docs/inference.md).
    def release_hessian(self, X, y, epsilon, accountant=None, random_state=None):
        """Spend ``epsilon`` (charged before any computation) on a private release of the
        loss Hessian at the released point, which :meth:`conf_int` needs (binary only).

        ``accountant=None`` uses the estimator's accountant; returns ``self``.
        """
        from ._inference_logistic import release_hessian  # noqa: PLC0415

        if getattr(self, "sample_weighted_", False):  # checked before anything is spent
            raise NotImplementedError(
                "release_hessian/conf_int are derived for unweighted fits only; this model "
                "was fitted with sample_weight."
            )
        return release_hessian(self, X, y, epsilon, accountant, random_state)

    def conf_int(self, alpha=0.05, n_boot=1000, method="linear", n_sim=200):
        """``(n_params, 2)`` intervals, intercept first (a DataFrame for named features);
        needs :meth:`release_hessian`. ``method="linear"`` (default) linearises the fit
        (``n_boot`` bootstrap draws); ``method="simulate"`` refits the real mechanism ``n_sim``
        times on synthetic data (a progress bar shows after 2 s); ``"auto"`` simulates where a
        check of the released Hessian says the linearised interval misses the fit's
        shrinkage, else linearises. All are post-processing. See ``docs/inference.md``."""
        from ._inference_logistic import conf_int  # noqa: PLC0415

        return conf_int(self, alpha, n_boot, method, n_sim)

    def bse(self, n_boot=1000, method="linear", n_sim=200):
        """Standard errors of ``[intercept, coef...]`` (privacy noise included), from the
        draws of :meth:`conf_int` with the same ``n_boot``, ``method`` and ``n_sim``."""
        from ._inference_logistic import bse  # noqa: PLC0415

        return bse(self, n_boot, method, n_sim)

    def summary(self, alpha=0.05, n_boot=1000, method="linear", n_sim=200):
        """statsmodels-style table; ``.as_dataframe()`` gives a DataFrame. Its interval
        columns are :meth:`conf_int`'s and its std err :meth:`bse`'s (same ``method``)."""
        from ._inference_logistic import summary  # noqa: PLC0415

        return summary(self, alpha, n_boot, method, n_sim)
