"""The class-wise norm ``|M|_{1,inf} = sum_k max_j |M_kj|`` of the multinomial model (issue #16).

Sensitivity (adversarial search and a tight construction), the K-norm sampler (KS tests with
a mis-calibrated control), the exact output-density ratio of neighbouring data sets, and the
estimator's selection and validation of the norm.
"""

import numpy as np
import pytest
from scipy import stats

from dpreg import BudgetAccountant, ObjectivePerturbationLogistic
from dpreg.linear_model._multinomial import (
    ROWS,
    _unit_noise_second_moment,
    choose_softmax_norm,
    float_rows_noise,
    rows_perturbation,
    softmax_gamma,
    softmax_sensitivity,
)


def rows_norm(M):
    return float(np.abs(M).max(axis=1).sum())


def _grad(theta, z, y):
    """One example's gradient (p - e_y) z^T of the softmax loss."""
    t = theta @ z
    p = np.exp(t - t.max())
    p /= p.sum()
    p[y] -= 1.0
    return np.outer(p, z)


@pytest.mark.parametrize("K, m", [(3, 2), (5, 4)])
def test_rows_sensitivity_adversarial_and_tight(K, m):
    """Random search (large |Theta|, sign vectors) never exceeds Delta = 4; a construction
    (a class with probability ~0 for both rows, opposite feature signs) reaches 4 - 1e-6."""
    rng = np.random.default_rng(7 * K + m)
    worst = 0.0
    for _ in range(3000):
        theta = rng.normal(size=(K, m)) * rng.choice([0.1, 3.0, 30.0])
        z1 = np.sign(rng.normal(size=m)) * rng.choice([1.0, rng.uniform()])
        z2 = -z1 if rng.uniform() < 0.5 else np.sign(rng.normal(size=m))
        z1[0] = z2[0] = 1.0  # intercept column
        d = _grad(theta, z1, rng.integers(K)) - _grad(theta, z2, rng.integers(K))
        worst = max(worst, rows_norm(d))
    assert worst <= softmax_sensitivity(ROWS, m) * (1 + 1e-12)  # rounding of the test itself
    assert worst > 0.9 * 4.0
    # tight: only the intercept column is active, so p is the same for both rows
    theta = np.zeros((K, m))
    theta[0, 0] = 40.0
    z = np.ones(m)
    z2 = -z
    z2[0] = 1.0
    d = _grad(theta, z, 1) - _grad(theta, z2, 1)
    assert 4.0 - 1e-6 < rows_norm(d) <= 4.0 * (1 + 1e-12)


@pytest.mark.parametrize("sampler", ["grid", "float"])
def test_rows_sampler_matches_its_density(sampler):
    """|V|_{1,inf} ~ Gamma(Km, scale) and each row's share of it ~ Beta(m, (K - 1) m); a 10%
    mis-scaled sample (the control) is rejected by the same test. Both the shipped exact grid
    release and the float reference have the ideal law (the grid is 2^-35 of the scale)."""
    K, m, sens, eps, n = 3, 4, 4.0, 4.0 / 0.7, 4000
    scale = sens / eps
    rng = np.random.default_rng(11)
    if sampler == "grid":
        draw = [rows_perturbation(K, m, sens, eps, rng) for _ in range(n)]
    else:
        draw = [float_rows_noise(K, m, scale, rng) for _ in range(n)]
    V = np.array(draw).reshape(n, K, m)
    norms = np.abs(V).max(axis=2).sum(axis=1)
    assert stats.kstest(norms, stats.gamma(K * m, scale=scale).cdf).pvalue > 1e-3
    assert stats.kstest(1.1 * norms, stats.gamma(K * m, scale=scale).cdf).pvalue < 1e-6
    share = np.abs(V[:, 0]).max(axis=1) / norms
    assert stats.kstest(share, stats.beta(m, (K - 1) * m).cdf).pvalue > 1e-3
    # within a row, the entries other than the largest are uniform on [-max, max]
    row = V[:, 1]
    top = np.abs(row).max(axis=1, keepdims=True)
    rest = (row / top)[np.abs(row) < top]
    assert stats.kstest(rest, stats.uniform(-1, 2).cdf).pvalue > 1e-3
    # the closed-form second moment used by q="auto" and norm="auto"
    mc = np.mean(np.sum(V**2, axis=(1, 2)))
    exact = _unit_noise_second_moment(ROWS, m, K) * (scale / softmax_sensitivity(ROWS, m)) ** 2
    assert mc == pytest.approx(exact, rel=0.05)


def test_rows_density_ratio_bounded_by_exp_epsilon():
    """Exact output density (change of variables, class-wise noise with Delta = 4) for
    neighbouring data sets, searched over outputs: log ratio <= eps_op, and the search gets
    above half of it."""
    rng = np.random.default_rng(5)
    K, p, n = 3, 1, 6
    m = p + 1
    eps_op, q = 1.5, 0.7
    gamma = softmax_gamma(eps_op, q, m, K)
    delta = softmax_sensitivity(ROWS, m)

    def log_density(a, Z, y):
        V = -(sum(_grad(a, z, yi) for z, yi in zip(Z, y)) + gamma * a)
        H = gamma * np.eye(K * m)
        for z in Z:
            t = a @ z
            pr = np.exp(t - t.max())
            pr /= pr.sum()
            H += np.kron(np.diag(pr) - np.outer(pr, pr), np.outer(z, z))
        return -eps_op * q * rows_norm(V) / delta + np.linalg.slogdet(H)[1]

    worst = -np.inf
    for _ in range(120):
        Z = np.column_stack([np.ones(n), np.sign(rng.normal(size=(n, p)))])
        y = rng.integers(K, size=n)
        Z2, y2 = Z.copy(), y.copy()
        Z2[-1, 1:] = -Z[-1, 1:]
        y2[-1] = (y[-1] + 1 + rng.integers(K - 1)) % K
        for _ in range(5):
            a = rng.normal(size=(K, m)) * rng.choice([0.0, 0.5, 3.0])
            worst = max(worst, log_density(a, Z, y) - log_density(a, Z2, y2))
    assert worst <= eps_op + 1e-9
    assert worst > 0.5 * eps_op


def test_auto_norm_choice_is_public_and_smallest_second_moment():
    for m, K in [(5, 3), (14, 3), (65, 10), (1, 3)]:
        moments = {k: _unit_noise_second_moment(k, m, K) for k in (ROWS, "linf", "l2")}
        assert choose_softmax_norm(m, K) == min(moments, key=moments.get)
    assert choose_softmax_norm(5, 3) == ROWS and choose_softmax_norm(1, 3) == "linf"


def test_estimator_uses_rows_norm_by_default_for_multinomial():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(400, 2))
    y = np.digitize(X[:, 0], [-0.3, 0.3])
    clf = ObjectivePerturbationLogistic(
        epsilon=4.0, bounds_X=(-1, 1), classes=[0, 1, 2], multi_class="multinomial", norm="auto"
    ).fit(X, y)
    assert clf.norm_ == ROWS and clf.sensitivity_ == 4.0
    assert clf.score(X, y) > 0.6


def test_rows_norm_outside_multinomial_is_rejected_before_spending():
    X = np.random.default_rng(0).uniform(-1, 1, size=(50, 2))
    acc = BudgetAccountant(epsilon=10.0)
    y = X[:, 0] > 0
    for classes, mc in (([False, True], "multinomial"), ([False, True], "ovr")):
        with pytest.raises(ValueError, match=ROWS):
            ObjectivePerturbationLogistic(
                bounds_X=(-1, 1), classes=classes, multi_class=mc, norm=ROWS, accountant=acc
            ).fit(X, y)
    assert acc.total() == (0.0, 0.0)


def test_auto_multi_class_rule_follows_public_settings_only():
    """``multi_class="auto"``: the softmax model for 3..LINF_SOFTMAX_MAX_CLASSES classes with
    the default norm, for any K > 2 with the class-wise norm, one-vs-rest otherwise."""
    from dpreg.linear_model.logistic import LINF_SOFTMAX_MAX_CLASSES as k_max

    def chosen(k, dask_input=False, **kw):
        return ObjectivePerturbationLogistic(**kw)._softmax_chosen(k, dask_input)

    assert not chosen(2) and not chosen(2, norm="auto")
    assert all(chosen(k) for k in range(3, k_max + 1))
    assert not chosen(k_max + 1) and chosen(k_max + 1, norm="auto") and chosen(20, norm=ROWS)
    assert not chosen(3, dask_input=True)
    for kw in ({"multi_class": "ovr"}, {"norm": "l2"}, {"norm": "l1"}, {"norm": 3.0},
               {"solver": "cvxpy"}, {"alpha": 1.0, "l1_ratio": 0.5}):  # fmt: skip
        assert not chosen(3, **kw), kw
    assert chosen(3, alpha=1.0) and chosen(20, multi_class="multinomial", norm="l2")

    # a default fit: three public classes -> one softmax problem with the full epsilon
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = np.digitize(X[:, 0], [-0.3, 0.3])
    kw = dict(epsilon=2.0, bounds_X=(-1, 1), random_state=0)
    clf = ObjectivePerturbationLogistic(classes=[0, 1, 2], **kw).fit(X, y)
    assert clf.multi_class_ == "multinomial" and clf.norm_ == "linf"
    assert clf.epsilon_per_problem_ == 2.0 and clf.sensitivity_ == 2.0
    many = list(range(k_max + 1))  # absent classes are fine: the label set is public
    clf = ObjectivePerturbationLogistic(classes=many, **kw).fit(X, y)
    assert clf.multi_class_ == "ovr" and clf.theta_.shape == (k_max + 1, 3)
