r"""Private hyperparameter search by random stopping (Liu & Talwar 2019).

Mechanism
---------
Let ``Q`` be one *run*: pick a candidate from the grid uniformly at random (independently of
the data), fit it on the training rows with budget ``epsilon_0`` and compute its private score
on the validation rows with budget ``epsilon_0`` (:mod:`._scoring`). The training and
validation rows are a random split drawn independently of the data values (``n`` is public),
so every record is in exactly one part and, by parallel composition, ``Q`` -- which outputs
(candidate, fitted model, noisy score) -- is ``epsilon_0``-DP.

The split is drawn once; conditional on it the runs are independent draws of one
``epsilon_0``-DP mechanism, and a data-independent mixture over splits keeps the guarantee.

The search repeats ``Q``; after every run it stops with probability ``gamma``; it releases the
run with the highest noisy score (and nothing about the other runs). The number of runs is
geometric with mean ``1 / gamma`` and independent of the data. Liu & Talwar (STOC 2019,
"Private selection from private candidates", section 3, the random-stopping algorithm) prove
that this is ``3 epsilon_0``-DP whatever ``gamma`` is; Papernot & Steinke (ICLR 2022,
"Hyperparameter tuning with Renyi differential privacy", Theorem 2, whose Renyi bound for a
truncated negative binomial number of runs of shape ``eta`` tends to ``(2 + eta) epsilon_0`` as
the orders grow) give the same ``3 epsilon_0`` for the geometric law ``eta = 1``. The search
therefore sets ``epsilon_0 = epsilon / 3`` and charges the accountant ``(epsilon, 0)`` once,
after validating the input and before reading the data (derivation of the factor 3 in
``docs/model_selection.md``).
The tests cross-check this against Google's ``dp_accounting`` (its ``RepeatAndSelectDpEvent``,
whose Renyi bound tends to ``3 epsilon_0`` as the order grows).

What the user must guarantee, and what is enforced
--------------------------------------------------
* A candidate's fit is ``epsilon_0``-DP when the ``epsilon`` parameters of all its (nested)
  steps sum to ``epsilon_0`` and each step is fitted once: the search rescales them so
  (their given values only fix the split between steps), refuses meta-estimators that refit
  an inner estimator (:func:`_check_composition`), replaces nested accountants by a per-run
  throwaway ledger capped at ``epsilon_0`` (the search's own accountant is charged once; the
  released model gets the user's accountants back), and requires every ``delta`` parameter
  to be 0 (pure DP only). A non-private step in the estimator (e.g. sklearn's
  ``StandardScaler``) voids the guarantee and cannot be detected.
* Grid keys may not set ``epsilon``, ``delta``, ``accountant`` or ``random_state``, and grid
  values may not be estimators.
* With ``random_state=None`` each run's steps get ``random_state=None`` (fresh secure
  generators); the released model never carries a seed of its noise
  (:meth:`PrivateSearchCV._run_randomness`).
* Before the spend, a dry run lets every candidate's own ``fit`` validate its parameters and
  the data (:meth:`PrivateSearchCV._dry_run`).
* A run whose fit or predict raises gets the score ``-inf`` instead of raising (an exception
  after the data are read would leak). If every run fails, ``best_estimator_`` is None.
* Warnings emitted inside the runs are captured and dropped (a convergence warning of a run
  that is not released would tell something about it), except
  :class:`~dpreg.exceptions.PrivacyLeakWarning`, which flags a non-private configuration: each
  distinct message is re-emitted once after the search, under the caller's warning filters (so
  ``-W error::dpreg.exceptions.PrivacyLeakWarning`` still stops the program).
* Only the best run's candidate, noisy score and model are released; per-run scores are not
  stored. The list of tried candidates and the number of runs are data-independent.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import ParameterGrid
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_epsilon, check_random_state
from ..accounting import BudgetAccountant, check_accountant
from ..exceptions import BudgetExceededError, PrivacyLeakWarning
from ._scoring import check_scoring, private_score

SELECTION_FACTOR = 3.0  # Liu & Talwar random stopping: the search is 3 * epsilon_0-DP
_RESERVED = ("epsilon", "delta", "accountant", "random_state")


def _is_param(key, name):
    return key == name or key.endswith("__" + name)


def privacy_params(estimator):
    """The nested ``epsilon``/``delta``/``accountant``/``random_state`` parameters of ``estimator``.

    Returns a dict ``{name: {key: value}}``; raises ``ValueError`` when no ``epsilon`` is found
    or a ``delta`` is not 0.
    """
    params = estimator.get_params(deep=True)
    found = {name: {} for name in ("epsilon", "delta", "accountant", "random_state")}
    for key, value in params.items():
        for name in found:
            if _is_param(key, name):
                found[name][key] = value
    eps = found["epsilon"]
    if not eps:
        raise ValueError(
            "The estimator has no 'epsilon' parameter, so it is not a private estimator; "
            "PrivateSearchCV only tunes dpreg estimators and pipelines of them."
        )
    for key, value in eps.items():
        check_epsilon(value, name=key)
    for key, value in found["delta"].items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != 0:
            raise ValueError(
                f"{key}={value!r}: PrivateSearchCV supports pure epsilon-DP candidates only "
                "(set every delta to 0)."
            )
    return found


def _check_grid(param_grid):
    grid = ParameterGrid(param_grid)  # validates the structure (ValueError / TypeError)
    candidates = list(grid)
    if not candidates:
        raise ValueError("param_grid has no candidate.")
    for cand in candidates:
        for key, value in cand.items():
            if any(_is_param(key, name) for name in _RESERVED):
                raise ValueError(
                    f"param_grid may not set {key!r}: the search fixes the budget and the "
                    "randomness of every run."
                )
            if hasattr(value, "get_params"):
                # its epsilon would escape the rescaling, its accountant the one charge, and
                # one grid object would be refitted by every run (the released pipeline could
                # pair the best run's model with another run's step)
                raise ValueError(
                    f"param_grid may not hold estimators ({key!r}={value!r}): search over their "
                    "parameters instead (e.g. 'step__param'), or over 'passthrough'."
                )
    return candidates


def _check_composition(estimator, where="estimator"):
    """Refuse meta-estimators whose fit spends its inner epsilon more than once.

    The search rescales the nested ``epsilon`` parameters to sum to one run's budget, which is
    the run's cost only when every private step is fitted once: a dpreg estimator, or a
    pipeline (or other container) of them. A meta-estimator such as ``OneVsRestClassifier`` or
    ``BaggingRegressor`` clones its inner estimator and fits it K times on the same rows, so a
    run would cost K times its share (measured: 3x and 4x) while the search charged it once.
    Rule (public, before the spend): an estimator-valued parameter is allowed only on
    containers whose steps are fitted once each -- sklearn's ``Pipeline``, ``FeatureUnion``
    and ``ColumnTransformer`` -- and inside dpreg's own classes; anywhere else it is refused.
    """
    from sklearn.compose import ColumnTransformer  # noqa: PLC0415
    from sklearn.pipeline import FeatureUnion, Pipeline  # noqa: PLC0415

    containers = (Pipeline, FeatureUnion, ColumnTransformer)
    own = type(estimator).__module__.startswith("dpreg.")
    for key, value in estimator.get_params(deep=False).items():
        inner = []
        if hasattr(value, "get_params"):
            inner = [value]
        elif isinstance(value, (list, tuple)):  # Pipeline.steps, ColumnTransformer.transformers
            inner = [v for item in value for v in (item if isinstance(item, tuple) else (item,))]
            inner = [v for v in inner if hasattr(v, "get_params")]
        for child in inner:
            if not (own or isinstance(estimator, containers)):
                raise ValueError(
                    f"{where} is a meta-estimator ({type(estimator).__name__}) that may fit "
                    f"its inner estimator several times on the same rows ({key!r}); its "
                    "privacy cost is not known to the search. Tune a dpreg estimator or a "
                    "Pipeline of dpreg steps."
                )
            _check_composition(child, f"{where}.{key}")


def _check_fraction(value):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or not 0 < value < 1
    ):
        raise ValueError(f"validation_fraction must be in (0, 1), got {value!r}.")
    return float(value)


def _check_stop(value, n_candidates):
    if isinstance(value, str) and value == "auto":
        return 1.0 / (2.0 * n_candidates)
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or not 0 < value <= 1
    ):
        raise ValueError(f"stop_probability must be 'auto' or in (0, 1], got {value!r}.")
    return float(value)


#: Fitted attributes that are functions of the private rows beyond the DP release (solver
#: iterations, sampler diagnostics); each estimator documents them as "do not publish".
NON_PRIVATE_ATTRIBUTES = ("n_iter_", "sampler_diagnostics_", "diagnostics_")


def _strip_diagnostics(model):
    """Delete the non-private diagnostics from the released model and its nested steps: the
    search releases the best run's model, and nothing about the runs beyond the DP outputs."""
    # a Pipeline's (fitted) steps are among its deep parameters
    nested = [v for v in model.get_params(deep=True).values() if hasattr(v, "get_params")]
    for est in [model, *nested]:
        for name in NON_PRIVATE_ATTRIBUTES:
            if name in getattr(est, "__dict__", {}):
                delattr(est, name)


class _DryRunLedger(BudgetAccountant):
    """The ledger of the dry run: every ``check`` passes (estimators look at the budget
    before they validate the rest, so a ledger that refused there would stop the dry run
    before the checks it exists for) and every ``spend`` is refused, before any data are
    used for a release."""

    def check(self, epsilon, delta=0.0):
        return True

    def spend(self, epsilon, delta=0.0):
        raise _DryRunStop("dry run: validated, nothing spent")


class _DryRunStop(BudgetExceededError):
    """Raised by :class:`_DryRunLedger` at the first spend."""


class PrivateSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Differentially private hyperparameter search with a stated total epsilon.

    Random stopping (Liu & Talwar 2019): runs of "fit a random candidate with ``epsilon / 3``,
    score it privately with ``epsilon / 3`` on held-out rows" are repeated until a coin with
    probability ``stop_probability`` says stop, and the best run is released. The whole search
    -- every fit, every score and the selection -- is ``epsilon``-DP (see the module docstring
    for the proof and the conditions) and is charged to ``accountant`` once.

    Parameters
    ----------
    estimator : estimator
        A dpreg estimator or a pipeline of dpreg steps (every private step has ``epsilon``).
    param_grid : dict or list of dicts
        As for ``GridSearchCV``; may not set ``epsilon``, ``delta`` or ``accountant``.
    epsilon : float, default=1.0
        Total budget of the search.
    scoring : {"accuracy", "neg_mean_squared_error", "neg_mean_absolute_error"}, optional
        Default: accuracy for classifiers, negative MSE for regressors.
    loss_bound : float, optional
        Public bound ``B`` of the per-record loss (required for the regression scores).
    stop_probability : "auto" or float in (0, 1], default="auto"
        ``gamma``; the expected number of runs is ``1 / gamma`` (``"auto"``: twice the grid
        size). It does not change the privacy cost.
    validation_fraction : float in (0, 1), default=0.4
        Share of the rows held out for scoring (a data-independent random split). The
        default 0.4 (0.25 before) was measured on the benchmark
        (``docs/model_selection.md``): a run's score noise falls as ``1 / (fraction n)``
        while its fit loses less than that from the smaller training part (diabetes at
        total epsilon 1 / 3: test R^2 -0.085 / 0.038 with 0.25, -0.020 / 0.082 with 0.4;
        breast cancer unchanged or better).
    random_state : None, int, RandomState or Generator
        ``None`` (the default) for a release: the split, the schedule and every run's noise
        come from fresh cryptographically secure generators. A seed makes the whole search
        reproducible, including the noise of the released model: for tests and examples
        only (anyone who knows the seed knows the noise).
    accountant : BudgetAccountant, optional
        Charged ``(epsilon, 0)`` once per ``fit``. If None, the (single) accountant found in
        the estimator's parameters is used.

    Attributes
    ----------
    best_estimator_ : estimator or None
        The released model (trained on the training rows of the best run); None if every run
        failed.
    best_params_ : dict or None
    best_score_ : float
        Its noisy validation score (a private release).
    n_runs_ : int
        Number of runs (geometric, data-independent).
    candidates_tried_ : list of dict
        The candidates of all runs, in order (data-independent; scores are not released).
    epsilon_run_ : float
        ``epsilon / 3``, the budget of one run.
    scoring_, loss_bound_, stop_probability_ : the resolved settings

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg import BudgetAccountant, FunctionalLinearRegression
    >>> from dpreg.model_selection import PrivateSearchCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(20000, 2))
    >>> y = X @ [1.0, -1.0] + rng.normal(scale=0.1, size=20000)
    >>> acc = BudgetAccountant(epsilon=3.0)
    >>> est = FunctionalLinearRegression(bounds_X=(-1, 1), bounds_y=(-3, 3))
    >>> search = PrivateSearchCV(est, {"postprocess": ["psd", "ridge"]}, epsilon=3.0,
    ...                          loss_bound=4.0, random_state=0, accountant=acc).fit(X, y)
    >>> acc.spent
    (3.0, 0.0)
    >>> bool(search.score(X, y) > 0.9)
    True
    """

    def __init__(
        self,
        estimator,
        param_grid,
        epsilon=1.0,
        scoring=None,
        loss_bound=None,
        stop_probability="auto",
        validation_fraction=0.4,
        random_state=None,
        accountant=None,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.scoring = scoring
        self.loss_bound = loss_bound
        self.stop_probability = stop_probability
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.accountant = accountant

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        return tags

    # ------------------------------------------------------------------ validation
    def _resolve_accountant(self, inner):
        if self.accountant is not None:
            return check_accountant(self.accountant)
        found = {id(a): a for a in inner.values() if isinstance(a, BudgetAccountant)}
        if len(found) > 1:
            raise ValueError(
                "The estimator's steps use different accountants; pass accountant= to the search."
            )
        if found:
            return next(iter(found.values()))
        return check_accountant(None)  # the default accountant (a with-block or the global one)

    def _check(self):
        epsilon = check_epsilon(self.epsilon)
        candidates = _check_grid(self.param_grid)
        base = clone(self.estimator)
        _check_composition(base)
        found = privacy_params(base)
        for cand in candidates:  # every candidate must be settable (fails fast on typos)
            clone(base).set_params(**self._fixed(found, 1.0), **cand)
        scoring, bound = check_scoring(self.scoring, self.loss_bound, is_classifier(base))
        gamma = _check_stop(self.stop_probability, len(candidates))
        frac = _check_fraction(self.validation_fraction)
        acc = self._resolve_accountant(found["accountant"])
        return epsilon, candidates, base, found, scoring, bound, gamma, frac, acc

    @staticmethod
    def _fixed(found, eps_run):
        """The nested epsilons rescaled to sum to ``eps_run``; nested accountants replaced."""
        total = sum(float(v) for v in found["epsilon"].values())
        fixed = {k: eps_run * float(v) / total for k, v in found["epsilon"].items()}
        # The search itself is charged once; the runs inside it must not be charged again
        # (an accountant=None step would resolve to the default ledger and double-count), so
        # each run records into its own throwaway ledger, capped at the run's budget (with
        # room for the rounding of the rescaled shares): a step that spent more than its
        # share -- a composition _check_composition did not foresee -- is refused before it
        # reads the data again, instead of silently costing more than was charged.
        if found["accountant"]:
            scratch = BudgetAccountant(epsilon=eps_run * (1.0 + 1e-9))
            fixed.update({k: scratch for k in found["accountant"]})
        return fixed

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Run the private search (spends ``epsilon`` once).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite values (checked before anything is spent).
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        epsilon, candidates, base, found, scoring, bound, gamma, frac, acc = self._check()
        classifier = is_classifier(base)
        X, y = validate_data(
            self, X, y, ensure_all_finite=True, y_numeric=not classifier, dtype=np.float64
        )
        n = X.shape[0]
        n_val = max(1, int(math.ceil(frac * n)))
        if n - n_val < 1:
            raise ValueError(f"{n} samples are too few to hold out {frac:.0%} for validation.")
        eps_run = epsilon / SELECTION_FACTOR
        self._dry_run(base, found, candidates, X, y, eps_run)
        rng = check_random_state(self.random_state)
        if hasattr(self, "classes_"):
            del self.classes_  # a refit that releases nothing must not keep the old classes
        if acc is not None:
            acc.spend(epsilon, 0.0)
        # ---- after the spend: no data-dependent exception may escape ----
        perm = rng.permutation(n)
        val, train = perm[:n_val], perm[n_val:]
        best = (-math.inf, None, None)
        tried, leaks = [], {}
        while True:
            cand = candidates[int(rng.integers(len(candidates)))]
            tried.append(cand)
            params = {**self._run_randomness(found, rng), **self._fixed(found, eps_run), **cand}
            score, model, leaked = self._run(
                base, params, X[train], y[train], X[val], y[val], scoring, bound, eps_run, rng
            )
            leaks.update(dict.fromkeys(leaked))
            if score > best[0]:
                best = (score, cand, model)
            if rng.uniform() < gamma:
                break
        score, cand, model = best
        if model is not None:
            # the released model carries the user's accountant and random_state parameters:
            # not the run's capped throwaway ledger (a refit would escape the user's ledger)
            # and not the run's randomness (with a seeded search, the seed of its noise)
            own = model.get_params(deep=True)
            restore = {**found["accountant"], **found["random_state"]}
            model.set_params(**{k: v for k, v in restore.items() if k in own})
            _strip_diagnostics(model)
        self.best_score_, self.best_params_, self.best_estimator_ = score, cand, model
        self.n_runs_ = len(tried)
        self.candidates_tried_ = tried
        self.epsilon_run_ = eps_run
        self.scoring_, self.loss_bound_, self.stop_probability_ = scoring, bound, gamma
        for message in leaks:  # configuration warnings, re-emitted under the caller's filters
            warnings.warn(message, PrivacyLeakWarning, stacklevel=2)
        if self.best_estimator_ is None:
            warnings.warn("Every run of the private search failed; nothing was released.")
        elif classifier and hasattr(self.best_estimator_, "classes_"):
            self.classes_ = self.best_estimator_.classes_
        return self

    def _dry_run(self, base, found, candidates, X, y, eps_run):
        """Before the spend: let every candidate validate its parameters and the data.

        Each candidate is fitted with every nested accountant replaced by a
        :class:`_DryRunLedger`, whose ``check`` passes and whose ``spend`` refuses. A dpreg
        step validates everything and then asks its accountant to spend, so the refusal
        (``_DryRunStop``) means the candidate passed; any other exception is a setting
        (or input, e.g. a label outside a public ``classes``) that its own ``fit`` refuses,
        and the search refuses it now, with nothing spent. Without this, such a candidate
        failed in every run AFTER the search was charged, and where one record decided the
        failure, whether anything was released depended on where that record fell. In a
        pipeline only the steps up to the first private one are checked (that step stops the
        dry run). Nothing here is released: warnings are dropped (the runs re-emit the
        configuration warnings).
        """
        if not found["accountant"]:
            return  # no ledger to stop the dry run before the data are used: skip it
        for cand in candidates:
            nothing = _DryRunLedger()
            params = {**self._fixed(found, eps_run), **cand}
            params.update(dict.fromkeys(found["accountant"], nothing))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    clone(base).set_params(**params).fit(X, y)
                except _DryRunStop:
                    continue  # validated, then stopped at the spend: as intended
                except Exception as exc:
                    raise ValueError(
                        f"PrivateSearchCV: candidate {cand!r} is refused by its own fit, so "
                        f"every run would fail after the search's spend; nothing was spent. "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
            raise ValueError(
                f"PrivateSearchCV: candidate {cand!r} fitted without spending from its "
                "accountant: it is not a dpreg estimator, or a step ignores its ledger; its "
                "privacy cost is not known to the search."
            )

    def _run_randomness(self, found, rng):
        """The nested ``random_state`` values of one run.

        With ``random_state=None`` (a release) every run's steps get ``None``: each fit keys a
        fresh cryptographically secure generator from the operating system
        (:func:`dpreg._random.check_random_state`), so nothing about a run's noise is known
        to anyone. Before session 21 the runs got integer seeds drawn from the search's
        stream, and the released model published its own seed in ``get_params()``: refitting
        the released configuration with it reproduced the noise, and the exact statistic
        followed. A seeded search (tests and examples, not releases) derives integer seeds
        from its seeded stream, so the whole search is reproducible.
        """
        if self.random_state is None:
            return dict.fromkeys(found["random_state"])
        return {k: int(rng.integers(2**31 - 1)) for k in found["random_state"]}

    @staticmethod
    def _run(base, params, X_tr, y_tr, X_val, y_val, scoring, bound, eps_run, rng):
        """One run: ``(noisy score, model, PrivacyLeakWarning messages)``.

        Every warning a run emits is captured: warnings of the runs that are not released
        (e.g. a convergence warning) would tell something about them. Only the
        PrivacyLeakWarning messages, which flag a non-private configuration, are returned and
        re-emitted once after the search.
        """
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model = clone(base).set_params(**params)
                model.fit(X_tr, y_tr)
                score = private_score(model, X_val, y_val, scoring, bound, eps_run, rng)
            except BudgetExceededError:
                raise  # a nested ledger the search could not strip: misconfiguration
            except Exception:  # noqa: BLE001 - a failed run is an output, never a raise
                score, model = -math.inf, None
        leaks = [str(w.message) for w in caught if issubclass(w.category, PrivacyLeakWarning)]
        return score, model, leaks

    # ------------------------------------------------------------------ delegation
    def _released(self):
        check_is_fitted(self, "n_runs_")
        if self.best_estimator_ is None:
            raise NotFittedError("Every run of the private search failed; no model to use.")
        return self.best_estimator_

    def predict(self, X):
        """Predict with the released model."""
        return self._released().predict(X)

    def predict_proba(self, X):
        """Class probabilities from the released model (when it has them)."""
        return self._released().predict_proba(X)

    def decision_function(self, X):
        """Decision function of the released model (when it has one)."""
        return self._released().decision_function(X)

    def transform(self, X):
        """Transform with the released model (when it is a transformer)."""
        return self._released().transform(X)

    def score(self, X, y):
        """The released model's own ``score`` (on data you may look at, e.g. public test data)."""
        return self._released().score(X, y)
