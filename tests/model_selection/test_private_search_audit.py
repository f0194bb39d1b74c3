"""PrivateSearchCV: the leaks the session-21 audit found around the (sound) selection scheme.

Each test fails on the code before the fix:
* the released model published the integer seed of its own noise (``get_params``);
* ``best_score_`` kept the exact validation loss in its low bits (``mean + sample()``);
* meta-estimators fitting their inner estimator K times were charged once;
* estimator-valued grid entries escaped the rescaling and the one charge;
* the released model kept the run's unlimited throwaway ledger (a refit escaped the ledger);
* candidates their own ``fit`` refuses failed in every run after the spend.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.ensemble import BaggingRegressor
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline

from dpreg import BudgetAccountant, FunctionalLinearRegression, ObjectivePerturbationLogistic
from dpreg.model_selection import PrivateSearchCV
from dpreg.model_selection._scoring import private_score, score_sensitivity
from dpreg.noise import LaplaceMechanism
from dpreg.preprocessing import PrivateMinMaxScaler, PrivateStandardScaler


def _regression(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, X @ np.array([1.0, -2.0, 0.5]) + rng.normal(scale=0.2, size=n)


def _flr(**kw):
    return FunctionalLinearRegression(bounds_X=(-1, 1), bounds_y=(-4, 4), **kw)


class _SeedSpy(RegressorMixin, BaseEstimator):
    """A private-looking estimator that records the random_state each fit got."""

    seen = []

    def __init__(self, epsilon=1.0, accountant=None, random_state=None):
        self.epsilon = epsilon
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X, y):
        from dpreg.accounting import check_accountant

        check_accountant(self.accountant).spend(self.epsilon, 0.0)
        _SeedSpy.seen.append(self.random_state)
        self.mean_ = 0.0
        return self

    def predict(self, X):
        return np.zeros(len(X))


def test_an_unseeded_search_gives_every_run_fresh_secure_randomness():
    X, y = _regression(300)
    _SeedSpy.seen = []
    search = PrivateSearchCV(
        _SeedSpy(random_state=7), [{}], loss_bound=1.0, accountant=BudgetAccountant()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    runs = _SeedSpy.seen  # the dry run before the spend stops at the spend: not recorded
    assert len(runs) == search.n_runs_ and all(
        r is None for r in runs
    )  # None: each fit keys a fresh ChaCha
    # the released model shows the user's value, not a seed of its noise
    assert search.best_estimator_.random_state == 7


def test_a_seeded_search_is_reproducible_and_publishes_no_seed():
    X, y = _regression()
    fits = [
        PrivateSearchCV(
            _flr(), {"postprocess": ["psd", "ridge"]}, loss_bound=4.0, random_state=3
        ).fit(X, y)
        for _ in range(2)
    ]
    assert np.array_equal(fits[0].best_estimator_.coef_, fits[1].best_estimator_.coef_)
    assert fits[0].best_estimator_.random_state is None  # the user's value


def _integral(values, step):
    """Whether each value is a multiple of ``step`` up to a few float ulps (the attack's
    test: the true count leaves a residual of about 1e-17, any other count about 1e-12)."""
    v = np.asarray(values, dtype=float)
    return np.abs(v - step * np.round(v / step)) < 1e-15


def test_the_score_keeps_no_low_bits_of_the_exact_loss():
    """Attack of the audit: ``(1 - score) - k / m`` is a multiple of the noise grid exactly
    for the true number k of errors when the score is ``mean + sample()`` (control); the
    library's score (randomise of the float sum, post-processed) does not keep it."""
    m, k, eps = 161, 30, 1.0
    y = np.zeros(m)
    y[:k] = 1  # a model predicting 0 everywhere makes k errors

    class _Zero:
        def predict(self, X):
            return np.zeros(len(X))

    mech = LaplaceMechanism(eps, 1.0 / m, random_state=0)
    samples = mech.sample(size=2000)
    step = 2.0**0
    while not np.all(_integral(samples, step)):
        step /= 2.0
    rng = np.random.default_rng(1)
    old = np.array([1.0 - (k / m + mech.sample()) for _ in range(300)])
    assert np.all(_integral((1.0 - old) - k / m, step))  # control: the old score leaks k
    new = np.array(
        [private_score(_Zero(), np.zeros((m, 1)), y, "accuracy", 1.0, eps, rng) for _ in range(300)]
    )
    hits = _integral((1.0 - new) - k / m, step).mean()
    assert hits < 0.5
    # and the score is still centred on the truth with the stated noise (Laplace, b = s / m)
    b = score_sensitivity(m, 1.0) / (m * eps)
    assert abs(np.mean(1.0 - new) - k / m) < 4 * b * math.sqrt(2 / 300)
    assert np.std(1.0 - new) == pytest.approx(math.sqrt(2) * b, rel=0.2)


@pytest.mark.parametrize(
    "estimator",
    [
        OneVsRestClassifier(ObjectivePerturbationLogistic(bounds_X=(-1, 1), classes=[0, 1])),
        BaggingRegressor(_flr(), n_estimators=4, bootstrap=False, max_samples=0.5),
    ],
    ids=["one-vs-rest", "bagging"],
)
def test_meta_estimators_are_refused_before_the_spend(estimator):
    X, y = _regression(400)
    if isinstance(estimator, OneVsRestClassifier):
        y = (y > 0).astype(int) + (y > 1).astype(int)
    acc = BudgetAccountant(epsilon=10.0)
    search = PrivateSearchCV(estimator, [{}], loss_bound=4.0, accountant=acc)
    with pytest.raises(ValueError, match="meta-estimator"):
        search.fit(X, y)
    assert acc.spent == (0.0, 0.0)


def test_pipelines_of_dpreg_steps_are_allowed():
    X, y = _regression()
    acc = BudgetAccountant(epsilon=10.0)
    pipe = make_pipeline(PrivateStandardScaler(accountant=acc), _flr(accountant=acc))
    search = PrivateSearchCV(
        pipe, {"functionallinearregression__postprocess": ["psd"]}, loss_bound=4.0, epsilon=3.0
    ).fit(X, y)
    assert acc.ledger == [(3.0, 0.0)]
    assert search.best_estimator_ is not None


def test_estimator_valued_grid_entries_are_refused_before_the_spend():
    X, y = _regression(400)
    acc = BudgetAccountant(epsilon=10.0)
    pipe = make_pipeline("passthrough", _flr(accountant=acc))
    grid = {"passthrough": [PrivateMinMaxScaler(epsilon=5.0)]}
    search = PrivateSearchCV(pipe, grid, loss_bound=4.0)
    with pytest.raises(ValueError, match="may not hold estimators"):
        search.fit(X, y)
    assert acc.spent == (0.0, 0.0)


def test_released_model_is_charged_to_the_users_ledger_when_refitted():
    X, y = _regression()
    acc = BudgetAccountant(epsilon=10.0)
    search = PrivateSearchCV(
        _flr(accountant=acc), {"postprocess": ["psd"]}, loss_bound=4.0, epsilon=3.0
    ).fit(X, y)
    assert search.best_estimator_.accountant is acc
    search.best_estimator_.fit(X, y)
    assert acc.spent[0] == pytest.approx(3.0 + 1.0)


@pytest.mark.parametrize(
    ("grid", "data"),
    [
        ({"postprocess": ["bogus"]}, "regression"),
        ({"ridge_factor": [-1.0]}, "regression"),
        ({"postprocess": ["psd"]}, "labels"),
    ],
    ids=["bad-postprocess", "bad-ridge", "label-outside-classes"],
)
def test_candidates_their_fit_refuses_are_refused_before_the_spend(grid, data):
    X, y = _regression(400)
    acc = BudgetAccountant(epsilon=10.0)
    if data == "labels":
        est = ObjectivePerturbationLogistic(bounds_X=(-1, 1), classes=[0, 1], accountant=acc)
        y = (y > 0).astype(int)
        y[5] = 2  # one record outside the public classes
        grid = {"l1_ratio": [0.0]}
    else:
        est = _flr(accountant=acc)
    search = PrivateSearchCV(est, grid, loss_bound=None if data == "labels" else 4.0)
    with pytest.raises(ValueError, match="refused by its own fit"):
        search.fit(X, y)
    assert acc.spent == (0.0, 0.0)


@pytest.mark.parametrize("bound", [1e-310, 1e-101, 1e101, math.inf])
def test_loss_bound_outside_the_calibrated_range_is_refused(bound):
    X, y = _regression(400)
    acc = BudgetAccountant(epsilon=10.0)
    search = PrivateSearchCV(_flr(accountant=acc), {"postprocess": ["psd"]}, loss_bound=bound)
    with pytest.raises(ValueError, match="loss_bound"):
        search.fit(X, y)
    assert acc.spent == (0.0, 0.0)


def test_released_model_carries_no_solver_diagnostics():
    """``n_iter_`` (the solver's iterations) is a function of the training rows beyond the
    release; the search releases the model without it (the estimators document it as not to
    be published)."""
    X, y = _regression(600)
    y = (y > 0).astype(int)
    est = ObjectivePerturbationLogistic(bounds_X=(-1, 1), classes=[0, 1])
    assert hasattr(est.fit(X, y), "n_iter_")  # control: a plain fit has it
    search = PrivateSearchCV(
        ObjectivePerturbationLogistic(bounds_X=(-1, 1), classes=[0, 1]), {"norm": ["linf"]}
    ).fit(X, y)
    assert not hasattr(search.best_estimator_, "n_iter_")
    assert search.best_estimator_.predict(X).shape == (600,)


def test_score_sensitivity_holds_on_a_search_over_neighbouring_validation_sets():
    """Adversarial check of ``B + 2 E``: the computed float sum of clipped losses, on
    neighbouring validation sets (one row's loss replaced, at the extremes 0 and B, ulps
    inside them, or at random), moves by at most ``score_sensitivity`` (exact fractions);
    a control without the float term (``B``) is exceeded on the same search."""
    from fractions import Fraction

    rng = np.random.default_rng(0)
    worst, over_plain = Fraction(0), 0
    for _ in range(3000):
        m = int(rng.choice([2, 3, 7, 50, 161, 1000]))
        B = float(rng.choice([1.0, 4.0, 175.0, 1e-3, 3.0e5]))
        pool = [0.0, B, np.nextafter(B, 0.0), B * 2.0**-30, B / 3.0]
        loss = rng.choice(pool, size=m) if rng.random() < 0.5 else B * rng.uniform(size=m)
        loss2 = loss.copy()
        loss2[rng.integers(m)] = rng.choice([0.0, B, B * rng.uniform()])
        gap = abs(Fraction(float(loss.sum())) - Fraction(float(loss2.sum())))
        worst = max(worst, gap / Fraction(score_sensitivity(m, B)))
        over_plain += gap > Fraction(B)
    assert worst <= 1
    assert over_plain > 0  # the float term is needed
