"""FunctionalLinearRegression: what the release needs is checked before the spend (s22 audit).

* F1: ``mechanism="huber"`` was planned before the spend at the raw sensitivities and the fit's
  epsilon, then recalibrated for the release at the float-inflated sensitivities and the
  release's epsilon; that calibration failed with a ``RuntimeError`` after the ledger entry.
* F4: the doubled squares of T carry twice the per-coordinate float error of the other
  entries; the sensitivity inflation must use that error for every coordinate.
"""

import numpy as np
import pytest

from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg import noise as noise_module
from dpreg.linear_model._functional_sensitivity import (
    Layout,
    l2_sensitivity,
    linf_sensitivity,
)
from dpreg.linear_model.functional import make_plan, privatize_statistic
from dpreg.noise import L2Ball, LinfBall
from dpreg.noise._grid import float_sum_error_bound, inflate_sensitivity

# the report's run (p=5, eps=1, delta=1e-3, n=200) and the settings its grid found failing
# after the spend (p, epsilon, delta, inference_share)
HUBER_CASES = [
    (5, 1.0, 1e-3, 0.0),
    (4, 3.0, 1e-3, 0.0),
    (6, 3.0, 1e-3, 0.5),
    (4, 0.05, 1e-9, 0.5),
]


@pytest.mark.parametrize(("p", "eps", "delta", "share"), HUBER_CASES)
def test_huber_fails_before_the_spend_or_fits(p, eps, delta, share):
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (200, p)), rng.uniform(-1, 1, 200)
    acc = BudgetAccountant(epsilon=10, delta=0.01)
    model = FunctionalLinearRegression(
        epsilon=eps,
        delta=delta,
        mechanism="huber",
        inference_share=share,
        bounds_X=(-1, 1),
        bounds_y=(-1, 1),
        accountant=acc,
        random_state=0,
    )
    try:
        model.fit(X, y)
    except ValueError:
        assert acc.ledger == []  # refused before anything was spent
    else:
        assert model.mechanism_ == "huber" and np.all(np.isfinite(model.coef_))
        assert len(acc.ledger) == 1


def test_huber_plan_calibrates_like_the_release(monkeypatch):
    # the plan made with the release's n builds the very mechanism the release draws from
    built = []
    real = noise_module.FlippedHuberMechanism

    def spy(*args, **kwargs):
        built.append((args, {k: v for k, v in kwargs.items() if k != "random_state"}))
        return real(*args, **kwargs)

    monkeypatch.setattr(noise_module, "FlippedHuberMechanism", spy)
    layout, n = Layout(3, True), 10**6
    plan = make_plan(layout, 1.0, 1e-3, mechanism="huber", n=n)
    privatize_statistic(np.zeros(layout.dim), layout, plan, 1.0, 1e-3, 0, n=n)
    assert len(built) == 2 and built[0] == built[1]


def test_huber_calibration_failure_is_a_value_error(monkeypatch):
    # a calibration that fails (here: forced) is refused as a ValueError before the spend
    def failing(*args, **kwargs):
        raise RuntimeError("flipped Huber calibration failed its final privacy check")

    monkeypatch.setattr(noise_module, "FlippedHuberMechanism", failing)
    rng = np.random.default_rng(1)
    X, y = rng.uniform(-1, 1, (50, 2)), rng.uniform(-1, 1, 50)
    acc = BudgetAccountant(epsilon=10, delta=0.01)
    model = FunctionalLinearRegression(
        epsilon=1.0, delta=1e-3, mechanism="huber", bounds_X=(-1, 1), bounds_y=(-1, 1),
        accountant=acc, random_state=0,
    )  # fmt: skip
    with pytest.raises(ValueError, match="cannot be calibrated"):
        model.fit(X, y)
    assert acc.ledger == []
    stats_model = FunctionalLinearRegression(
        epsilon=1.0, delta=1e-3, mechanism="huber", accountant=acc, random_state=0
    )
    from dpreg.linear_model.functional import sufficient_statistics  # noqa: PLC0415

    stats = sufficient_statistics(X, y, (-1, 1), (-1, 1))
    with pytest.raises(ValueError, match="cannot be calibrated"):
        stats_model.fit_statistics(stats)
    assert acc.ledger == []


def _captured_sensitivities(monkeypatch, plan_kw, n):
    """The sensitivities privatize_statistic hands to the mechanisms for ``n`` roundings."""
    seen = []
    for name in ("GaussianMechanism", "KNormMechanism"):
        real = getattr(noise_module, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            seen.append((_name, args))
            return _real(*args, **kwargs)

        monkeypatch.setattr(noise_module, name, spy)
    layout = Layout(2, True)
    plan = make_plan(layout, 1.0, **plan_kw)
    privatize_statistic(np.zeros(layout.dim), layout, plan, 1.0, plan_kw.get("delta", 0.0), 0, n=n)
    return layout, seen


def test_doubled_squares_error_in_the_inflation(monkeypatch):
    # every coordinate of the computed T, the doubled squares S_j = 2 fl(sum z_j^2) included,
    # is within E = 2 float_sum_error_bound(n, 1, products=True) of the exact value; the
    # sensitivity must be inflated by at least that (the old code used half of it)
    n = 10**7
    E = 2.0 * float_sum_error_bound(n, 1.0, products=True)
    layout, seen = _captured_sensitivities(monkeypatch, {"delta": 1e-6, "mechanism": "gaussian"}, n)
    (name, args), d = seen[0], layout.dim
    assert name == "GaussianMechanism"
    assert args[2] >= inflate_sensitivity(l2_sensitivity(2, True), E, L2Ball(d))
    layout, seen = _captured_sensitivities(monkeypatch, {"release": "blocks"}, n)
    gram_sens = seen[0][1][2]
    g = layout.d_gram
    assert gram_sens >= inflate_sensitivity(linf_sensitivity(2, True), E, LinfBall(g))
