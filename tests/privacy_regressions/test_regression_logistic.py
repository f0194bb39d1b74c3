"""Issue #10, items 2 and 3: logistic labels leak; objective perturbation released uncertified.

Each test fails on the code before the fix (no ``classes``/``bounds_X`` parameters, a
data-dependent "only one class" error, and a release at wherever L-BFGS stopped).
"""

import numpy as np
import pytest

import dpreg.linear_model.logistic as logistic_module
from dpreg import BudgetAccountant, ObjectivePerturbationLogistic


def _data(n=300, seed=0, p=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, p))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-3 * X[:, 0]))).astype(int)
    return X, y


def _record(monkeypatch):
    """Record every certified point and every noise draw of a fit."""
    log = {"certified": [], "noise": []}
    real_certify, real_mech = logistic_module.certify, logistic_module.KNormMechanism

    def certify(theta0, Z, y, fit_intercept, alpha_l2, l1, gamma, V, tol, L):
        theta, steps = real_certify(theta0, Z, y, fit_intercept, alpha_l2, l1, gamma, V, tol, L)
        log["certified"].append((theta.copy(), Z, y, fit_intercept, alpha_l2, l1, gamma, V))
        return theta, steps

    class Mech(real_mech):
        def sample(self, size=None):
            v = super().sample(size)
            log["noise"].append((self.norm, self.sensitivity, self.epsilon, v.copy()))
            return v

        def randomise(self, value):  # the AMP release: exact grid release of value + W
            out = super().randomise(value)
            log["noise"].append((self.norm, self.sensitivity, self.epsilon, out - value))
            return out

    monkeypatch.setattr(logistic_module, "certify", certify)
    monkeypatch.setattr(logistic_module, "KNormMechanism", Mech)
    return log


def test_regression_logistic_label_set_present_in_data_does_not_change_the_mechanism():
    """Neighbours with labels {0, 1, 7} and {0, 1}: same problems, same budget split."""
    X, y = _data()
    y_a = np.where(y == 1, 1, 0)
    y_a[0] = 7
    y_b = y_a.copy()
    y_b[0] = 1  # replace-one neighbour: label 7 no longer occurs
    # one-vs-rest (budget split over the public classes) and the softmax model that
    # multi_class="auto" takes for three public classes (norm "linf" or "auto")
    for norm, mc, per_problem in (
        ("linf", "ovr", 1.0 / 3),
        ("linf", "auto", 1.0),
        ("auto", "auto", 1.0),
    ):
        kw = dict(epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1, 7], random_state=0, norm=norm)
        kw["multi_class"] = mc
        a = ObjectivePerturbationLogistic(**kw).fit(X, y_a)
        b = ObjectivePerturbationLogistic(**kw).fit(X, y_b)
        attrs = ("classes_", "epsilon_per_problem_", "q_", "gamma_", "amp_epsilon_", "grad_tol_")
        for attr in attrs + ("multi_class_", "norm_", "sensitivity_"):
            np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))
        assert a.theta_.shape == b.theta_.shape == (3, 4)
        assert a.epsilon_per_problem_ == pytest.approx(per_problem)


def test_regression_logistic_single_class_does_not_raise_with_classes():
    """No data-dependent 'only one class' exception once the label set is public."""
    X, _ = _data(n=100)
    acc = BudgetAccountant(epsilon=2.0)
    for y in (np.zeros(100, int), np.ones(100, int)):
        clf = ObjectivePerturbationLogistic(
            epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], accountant=acc, random_state=0
        ).fit(X, y)
        assert clf.theta_.shape == (1, 4) and np.all(np.isfinite(clf.theta_))
        assert list(clf.classes_) == [0, 1]
    assert acc.spent[0] == pytest.approx(2.0)  # both fits charged


def test_regression_logistic_label_outside_classes_is_an_input_error():
    X, y = _data(n=100)
    with pytest.raises(ValueError, match="outside classes"):
        ObjectivePerturbationLogistic(bounds_X=(-1, 1), classes=["a", "b"]).fit(X, y)


@pytest.mark.parametrize(
    "kw",
    [
        dict(max_iter=1),
        dict(max_iter=1, epsilon=200.0),  # tiny gamma: an almost flat objective
        dict(solver="cvxpy"),
        dict(solver="cvxpy", alpha=3.0, l1_ratio=1.0),  # non-smooth: subgradient certificate
    ],
)
def test_regression_logistic_release_is_certified(monkeypatch, kw):
    """Every released point is theta_hat + W with theta_hat certified by the public tol."""
    from dpreg.linear_model._certify import minimal_subgradient  # absent before the fix

    log = _record(monkeypatch)
    X, y = _data(n=400, seed=1)
    X[:, 2] = X[:, 1]  # collinear features make the objective flat in one direction
    clf = ObjectivePerturbationLogistic(
        **{"epsilon": 1.0, "bounds_X": (-1, 1), "classes": [0, 1], "random_state": 3, **kw}
    ).fit(X, y)
    ((theta_hat, *args),) = log["certified"]
    s, err, _ = minimal_subgradient(theta_hat, *args)
    assert np.linalg.norm(s) <= clf.grad_tol_ / 2 and np.linalg.norm(s) + err <= clf.grad_tol_
    # the output noise is the l2 K-norm draw calibrated to 2 tol / mu, and it is added
    norm, sens, eps, W = log["noise"][-1]
    assert norm == "l2" and eps == pytest.approx(clf.amp_epsilon_)
    assert sens == pytest.approx(2 * clf.grad_tol_ / clf.strong_convexity_)
    np.testing.assert_allclose(clf.theta_[0], theta_hat + W, rtol=0, atol=1e-12)
    assert clf.amp_epsilon_ == pytest.approx(0.01 * clf.epsilon_per_problem_)


def _flat_design(n):
    # a constant column at its upper bound is collinear with the intercept: a flat direction
    # where |theta*| reaches |V| / gamma, while the +-1 column keeps margins near 0
    return np.column_stack([np.ones(n), np.tile([1.0, -1.0], n // 2)]), np.tile(
        [1, 0, 0, 1], n // 4
    )


@pytest.mark.parametrize("multinomial", [False, True])
def test_regression_logistic_flat_direction_certifies_at_a_small_q(monkeypatch, multinomial):
    """Session-22 audit F1: with a flat direction, a user q of 0.01 and epsilon 20-60, no float
    point passed the certificate (|theta*| about 1e7, the gradient's float resolution 1e-9
    against a tolerance of 1e-10), so the fit spent and then raised RuntimeError on some
    data sets and not on their neighbours. The float-resolution floor on gamma
    (``_certify.resolution_gamma``) makes a float point always pass. With the cap lowered
    to 200 steps (the old failures ran to any cap), every fit certifies; the control, the
    same fits without the floor, fails."""
    import dpreg.linear_model._certify as certify_module

    monkeypatch.setattr(certify_module, "_MAX_STEPS", 200)
    if multinomial:
        cases = [(6, 40.0, 0.01), (12, 60.0, 0.01)]
        kw = dict(classes=[0, 1, 2], multi_class="multinomial")
    else:
        cases = [(4, 20.0, 0.01), (8, 20.0, 0.003), (40, 20.0, 0.003)]
        kw = dict(classes=[0, 1])

    def failures(seeds):
        count = 0
        for n, eps, q in cases:
            X, y = _flat_design(n)
            if multinomial:
                y = np.tile([0, 1, 2], n // 3)
            for seed in seeds:
                acc = BudgetAccountant()
                model = ObjectivePerturbationLogistic(
                    epsilon=eps, q=q, bounds_X=(-1, 1), random_state=seed, accountant=acc, **kw
                )
                try:
                    model.fit(X, y)
                except RuntimeError:
                    count += 1
                    assert acc.spent[0] == eps  # the old failure came after the spend
        return count

    assert failures(range(15)) == 0
    monkeypatch.setattr(logistic_module, "resolution_gamma", lambda *args: 0.0)
    assert failures(range(15)) > 0  # the control: without the floor the certificate stalls


@pytest.mark.parametrize("seed", range(3))
def test_resolution_gamma_bounds_theta_and_leaves_the_certificate_room(seed):
    """The floor's two public bounds on |theta*| hold for fitted points, and at the floor's
    curvature the loss's float resolution ``RES_MARGIN u L R`` is within the tolerance."""
    import math

    from dpreg.linear_model import _certify as C

    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(2, 10**7))
        dim = int(rng.integers(1, 40))
        grad_scale = math.sqrt(dim) * (1 + 10 ** rng.uniform(-8, 6))
        lip, loss0 = 10 ** rng.uniform(-1, 3), 10 ** rng.uniform(-1, 1)
        gamma = C.resolution_gamma(n, dim, grad_scale, lip, loss0)
        mu = gamma / n
        tol = C.certificate_tol(dim, grad_scale)
        v = C.V_TAIL * (grad_scale - math.sqrt(dim))
        bound = min((math.sqrt(dim) + v) / mu, 2 * v / mu + math.sqrt(2 * loss0 / mu))
        assert C.RES_MARGIN * C._U * lip * bound <= tol * (1 + 1e-9)
        # and it is the smallest such curvature, up to rounding: 1 % less breaks it
        mu2 = 0.99 * mu
        bound2 = min((math.sqrt(dim) + v) / mu2, 2 * v / mu2 + math.sqrt(2 * loss0 / mu2))
        assert C.RES_MARGIN * C._U * lip * bound2 > tol
