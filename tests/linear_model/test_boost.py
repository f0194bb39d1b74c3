"""``boost_rounds``: boosting rounds on fresh clipped residuals (dpreg/linear_model/_boost.py).

Behaviour, validation and accuracy; the privacy of a round (sensitivity search, audit) is in
``test_boost_privacy.py``.
"""

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg.linear_model import _boost
from dpreg.linear_model.functional import sufficient_statistics

BOX_X, BOX_Y = (-1, 1), (-6, 6)


def _data(n, seed, collinear=False, noise=1.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    if collinear:  # a small eigenvalue, where the PSD floor biases the one-shot solve
        X[:, 2] = np.clip(X[:, 1] + 0.1 * rng.normal(size=n), -1, 1)
    y = 0.5 + X @ np.array([1.0, 2.0, -1.0]) + noise * rng.normal(size=n)
    return X, y


def _model(**kw):
    return FunctionalLinearRegression(bounds_X=BOX_X, bounds_y=BOX_Y, **kw)


# "auto" fails only what the default estimator fails (test_functional.py)
AUTO_FAILS = dict.fromkeys(
    [
        "check_sample_weights_list",
        "check_sample_weights_not_overwritten",
        "check_sample_weight_equivalence_on_dense_data",
    ],
    "sample_weight must lie in [0, 1]",
)


@parametrize_with_checks(
    [
        _model(epsilon=1e4, boost_rounds=2, random_state=0),
        _model(epsilon=1e4, boost_rounds="auto", random_state=0),  # falls back where needed
    ],
    expected_failed_checks=lambda est: (
        AUTO_FAILS
        if est.boost_rounds == "auto"
        else {
            **dict.fromkeys(
                [
                    "check_sample_weights_list",
                    "check_sample_weights_not_overwritten",
                    "check_sample_weight_equivalence_on_dense_data",
                    "check_sample_weights_shape",
                    "check_sample_weights_pandas_series",
                    "check_sample_weights_not_an_array",
                ],
                "boost_rounds > 0 refuses sample_weight (the rounds' sensitivity is derived "
                "for unit weights)",
            ),
            "check_regressor_multioutput": "boost_rounds > 0 refuses a 2-D y (one output only)",
        }
    ),
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (dict(boost_rounds=-1), "boost_rounds"),
        (dict(boost_rounds=1.5), "boost_rounds"),
        (dict(boost_rounds=True), "boost_rounds"),
        (dict(boost_rounds=2, boost_share=0.0), "boost_share"),
        (dict(boost_rounds=2, boost_share=1.0), "boost_share"),
        (dict(boost_rounds=2, boost_clip=0.0), "boost_clip"),
        (dict(boost_rounds=2, boost_clip=1.5), "boost_clip"),
        (dict(boost_rounds=2, boost_clip="fixed"), "boost_clip"),
        (dict(boost_rounds=2, boost_clip=float("nan")), "boost_clip"),
        (dict(boost_rounds=2, inference_share=0.1), "inference_share"),
        (dict(boost_rounds=2, boost_share=0.9, ridge="adaptive", ridge_share=0.1), "< 1"),
    ],
)
def test_bad_options_raise_before_spending(params, match):
    X, y = _data(200, 0)
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError, match=match):
        _model(epsilon=1.0, accountant=acc, **params).fit(X, y)
    assert acc.spent == (0.0, 0.0)


def test_unsupported_inputs_raise_before_spending():
    """The rounds need the rows, one output and unit weights: each refusal spends nothing."""
    X, y = _data(300, 1)
    acc = BudgetAccountant(epsilon=5.0)
    model = _model(epsilon=1.0, accountant=acc, boost_rounds=2)
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit(X, y, sample_weight=np.full(len(y), 0.5))
    with pytest.raises(ValueError, match="one output"):
        model.set_params(bounds_y=([-6, -6], [6, 6])).fit(X, np.column_stack([y, y]))
    stats = sufficient_statistics(X, y, BOX_X, BOX_Y)
    with pytest.raises(ValueError, match="rows"):
        _model(epsilon=1.0, accountant=acc, boost_rounds=2).fit_statistics(stats)
    assert acc.spent == (0.0, 0.0)
    # control: the same model without boosting accepts all three
    plain = _model(epsilon=1.0, accountant=acc)
    plain.fit(X, y, sample_weight=np.full(len(y), 0.5))
    plain.fit_statistics(stats)
    assert acc.spent[0] == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("params", "shares"),
    [
        (dict(boost_rounds=2), (0.4, 0.05)),
        (dict(boost_rounds=3, boost_clip=0.5, boost_share=0.3), (0.3, 0.0)),
        (dict(boost_rounds=2, ridge="adaptive", delta=1e-6), (0.4, 0.05)),
    ],
)
def test_budget_parts_sum_to_epsilon_and_one_ledger_entry(monkeypatch, params, shares):
    """Every mechanism the fit builds is recorded: the epsilons add up to the fit's epsilon
    (basic composition), the rounds get ``boost_share * epsilon / T`` each, and the ledger
    is charged once."""
    from dpreg import noise

    spent = []

    def recording(cls):
        class Recorded(cls):
            def __init__(self, *args, **kw):
                super().__init__(*args, **kw)
                spent.append((cls.__name__, float(self.epsilon)))

        return Recorded

    for name in ("KNormMechanism", "LaplaceMechanism", "GaussianMechanism"):
        monkeypatch.setattr(noise, name, recording(getattr(noise, name)))
    X, y = _data(2000, 2)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5)
    eps = 1.3
    model = _model(epsilon=eps, accountant=acc, random_state=0, **params).fit(X, y)
    rounds = params["boost_rounds"]
    # the rounds are the last `rounds` K-norm mechanisms, of dimension p + 1
    round_eps = [e for name, e in spent if name == "KNormMechanism"][-rounds:]
    assert round_eps == pytest.approx([shares[0] * eps / rounds] * rounds)
    assert sum(e for _, e in spent) <= eps
    assert sum(e for _, e in spent) == pytest.approx(eps, rel=1e-12)
    assert acc.spent == pytest.approx((eps, params.get("delta", 0.0)))
    assert (model.boost_clip_ == params["boost_clip"]) if "boost_clip" in params else True


def test_rounds_zero_is_the_one_shot_fit_and_seeded_fits_repeat():
    X, y = _data(3000, 3)
    base = _model(epsilon=1.0, random_state=5).fit(X, y)
    zero = _model(epsilon=1.0, random_state=5, boost_rounds=0).fit(X, y)
    np.testing.assert_array_equal(base.coef_, zero.coef_)
    assert zero.boost_clip_ is None
    a = _model(epsilon=1.0, random_state=5, boost_rounds=2).fit(X, y)
    b = _model(epsilon=1.0, random_state=5, boost_rounds=2).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, base.coef_)
    c = _model(epsilon=1.0, random_state=5, boost_rounds=2).fit(X.astype(np.float32), y)
    assert c.coef_.dtype == np.float32
    assert np.all(np.isfinite(c.coef_))


def test_intervals_refuse_a_boosted_fit():
    X, y = _data(2000, 4)
    model = _model(epsilon=1.0, random_state=0, boost_rounds=2).fit(X, y)
    with pytest.raises(NotImplementedError, match="boost_rounds"):
        model.conf_int()


def test_auto_clip_from_released_values():
    """``c = 2 sigma~`` limited to [CLIP_MIN, 1]; a non-finite residual estimate gives 1."""
    G = np.eye(2) * 100.0
    b = np.array([10.0, 0.0])
    theta = np.array([0.1, 0.0])
    # rss = yty - 2 b.theta + theta G theta = yty - 1; n = 100
    assert _boost.auto_clip(1.0 + 0.04 * 100, G, b, theta, 100) == pytest.approx(0.4)
    assert _boost.auto_clip(1.0, G, b, theta, 100) == _boost.CLIP_MIN  # rss 0
    assert _boost.auto_clip(1e6, G, b, theta, 100) == 1.0
    assert _boost.auto_clip(np.inf, G, b, theta, 100) == 1.0


def test_boosting_removes_the_floor_bias():
    """Large n * epsilon, a near-collinear pair: the one-shot solve is biased by the PSD floor
    on the small eigenvalue; two rounds on fresh residuals bring the coefficients closer to
    least squares on the clipped data (median over seeds; the control is the one-shot fit)."""
    errs = {0: [], 2: []}
    for seed in range(6):
        X, y = _data(20_000, 10 + seed, collinear=True, noise=0.5)
        ols = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0]
        for r in errs:
            m = _model(epsilon=2.0, random_state=seed, boost_rounds=r).fit(X, y)
            errs[r].append(np.linalg.norm(np.r_[m.intercept_, m.coef_] - ols))
    assert np.median(errs[2]) < 0.8 * np.median(errs[0])


def test_auto_rounds_follow_n_epsilon_and_fall_back_where_rounds_do_not_apply():
    """``"auto"``: 2 rounds when n * epsilon >= 2000, else the one-shot fit (same release);
    where rounds do not apply (weights, 2-D y, statistics, intervals) it fits without them
    instead of refusing."""
    X, y = _data(2500, 6)
    small = _model(epsilon=0.5, random_state=1, boost_rounds="auto").fit(X, y)  # 1250
    plain = _model(epsilon=0.5, random_state=1).fit(X, y)
    assert small.boost_rounds_ == 0
    np.testing.assert_array_equal(small.coef_, plain.coef_)
    big = _model(epsilon=1.0, random_state=1, boost_rounds="auto").fit(X, y)  # 2500
    assert big.boost_rounds_ == _boost.AUTO_ROUNDS == 2
    assert big.boost_clip_ is not None
    auto = _model(epsilon=1.0, random_state=1, boost_rounds="auto")
    assert auto.fit(X, y, sample_weight=np.full(len(y), 0.5)).boost_rounds_ == 0
    Y = np.column_stack([y, y])
    assert auto.set_params(bounds_y=([-6, -6], [6, 6])).fit(X, Y).boost_rounds_ == 0
    stats = sufficient_statistics(X, y, BOX_X, BOX_Y)
    assert _model(epsilon=1.0, boost_rounds="auto").fit_statistics(stats).boost_rounds_ == 0
    m = _model(epsilon=1.0, boost_rounds="auto", inference_share=0.1, random_state=0).fit(X, y)
    assert m.boost_rounds_ == 0
    assert m.conf_int().shape == (4, 2)  # the intervals still work for the one-shot fit


def test_boosted_floor_is_half_the_one_shot_floor_and_auto_stays_pure_epsilon():
    """``ridge_factor="auto"``: 0.75 for the block release, 1.5 for a joint (delta > 0)
    release; ``"auto"`` runs no rounds on the (epsilon, delta) path, an explicit number does."""
    X, y = _data(5000, 7)
    blocks = _model(epsilon=1.0, random_state=0, boost_rounds=2).fit(X, y)
    assert blocks.release_ == "blocks" and blocks.ridge_factor_ == pytest.approx(0.75)
    gauss = dict(epsilon=1.0, delta=1e-6, mechanism="gaussian", random_state=0)
    joint = _model(boost_rounds=2, **gauss).fit(X, y)
    assert joint.release_ == "joint" and joint.ridge_factor_ == pytest.approx(1.5)
    assert joint.boost_rounds_ == 2
    one_shot = _model(**gauss).fit(X, y)
    assert one_shot.ridge_factor_ == pytest.approx(3.0)
    auto = _model(boost_rounds="auto", **gauss).fit(X, y)
    assert auto.boost_rounds_ == 0  # n * epsilon = 5000, but delta > 0
    np.testing.assert_array_equal(auto.coef_, one_shot.coef_)


def test_noise_free_limit_is_two_clipped_refinement_steps():
    """At a huge epsilon the noise vanishes and a boosted fit is exactly two steps of
    ``theta <- theta + (G~ v lam)^{-1} Z^T clip(w - Z theta, -c, c)`` from the one-shot solve
    (the update the docs derive). Its fixed point solves ``Z^T psi_c(w - Z theta) = 0`` (a
    Huber-type equation), so it is close to, not equal to, least squares: the control shows
    the one-shot fit converging to OLS far more tightly."""
    from dpreg.linear_model.functional import (
        _data_maps,
        scaled_chunks,
        solve_normal_equations,
    )

    X, y = _data(4000, 8, noise=0.5)
    model = _model(epsilon=1e7, random_state=0, boost_rounds=2).fit(X, y)
    ns, c = model.noisy_statistics_, model.boost_clip_
    theta = solve_normal_equations(ns.gram, ns.xty, "psd", ns.lam, True)
    maps, _ = _data_maps(X, y, BOX_X, BOX_Y, True)
    for _ in range(2):
        s = _boost.residual_scores(scaled_chunks(X, y, maps), theta, c, True)
        theta = theta + solve_normal_equations(ns.gram, s, "psd", ns.lam, True)
    ref = FunctionalLinearRegression()
    ref._set_coefficients(theta, sufficient_statistics(X, y, BOX_X, BOX_Y))
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-7)  # measured 2e-9
    ols = np.linalg.lstsq(np.column_stack([np.ones(len(y)), X]), y, rcond=None)[0]
    boosted = np.linalg.norm(np.r_[model.intercept_, model.coef_] - ols)
    one_shot = _model(epsilon=1e7, random_state=0).fit(X, y)
    plain = np.linalg.norm(np.r_[one_shot.intercept_, one_shot.coef_] - ols)
    assert plain < 1e-5 < boosted < 0.01  # sampling-level difference (OLS se ~ 0.01 here)
