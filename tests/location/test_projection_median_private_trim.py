"""``trim_scale="private"``: the trimmed means reuse the scales released by
``scale="private"`` (post-processing of a paid-for release; docs/projection_median.md §2d)."""

import numpy as np
import pytest

from dpreg import BudgetAccountant, PrivateProjectionMedian
from dpreg.location import _private_scale as ps
from dpreg.location import _trimmed
from dpreg.location import projection_median as pm


def _data(n=4000, d=2, seed=0):
    return np.random.default_rng(seed).normal(3.0, 2.0, size=(n, d))


@pytest.mark.parametrize("scale", ["mad", "iqr", np.ones(2)])
def test_private_trim_needs_private_scale_and_is_refused_before_the_spend(scale):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = PrivateProjectionMedian(epsilon=4.0, scale=scale, trim_scale="private", accountant=acc)
    with pytest.raises(ValueError, match="needs scale='private'"):
        est.fit(_data())
    assert acc.spent == (0.0, 0.0)


def test_other_strings_are_refused_with_a_clear_message():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = PrivateProjectionMedian(
        epsilon=4.0, scale="private", trim_scale="mad", accountant=acc, norm="linf"
    )
    with pytest.raises(ValueError, match="trim_scale must be None, 'private'"):
        est.fit(_data())
    assert acc.spent == (0.0, 0.0)


def test_trimmed_stage_gets_the_released_scales_and_its_share(monkeypatch):
    """A spy on the trimmed stage: its scales are trim_from_scale(public_scale_) and its
    budget is trim_fraction of what the scale release leaves; one ledger entry of exactly
    (epsilon, delta)."""
    seen = {}
    real = pm.release_trimmed_mean

    def spy(X, centre, scale, radius, eps, rng, error=None):
        seen.update(scale=np.array(scale), eps=eps, centre=np.array(centre), error=error)
        return real(X, centre, scale, radius, eps, rng, error=error)

    monkeypatch.setattr(pm, "release_trimmed_mean", spy)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = PrivateProjectionMedian(
        epsilon=4.0,
        delta=1e-5,
        norm="linf",
        scale="private",
        trim_scale="private",
        trim_fraction=0.5,
        random_state=1,
        accountant=acc,
        diagnostics=True,
    ).fit(_data())
    np.testing.assert_array_equal(seen["scale"], ps.trim_from_scale(est.public_scale_))
    assert seen["eps"] == pytest.approx(0.5 * (4.0 - est.scale_epsilon_), rel=1e-12)
    np.testing.assert_array_equal(seen["centre"], est.median_location_)
    assert acc.spent == pytest.approx((4.0, 1e-5)) and len(acc) == 1
    # the first radius grows by the median's public error bound: c and s / t = 3 / 1.4826
    ratio = 1.0 / ps.TRIM_FACTOR
    assert seen["error"] == pytest.approx(
        _trimmed.median_error_bound(est.diagnostics_["c"], 2, ratio), rel=1e-12
    )
    # the released s = 3 MAD; in sd units about the data's sd 2 (1.4826 MAD for normal data)
    assert np.all(np.abs(seen["scale"] - 2.0) < 0.5)
    assert np.all(np.abs(est.location_ - 3.0) < 0.5)


def test_trim_from_scale_is_positive_finite_and_bounded_by_its_public_cap():
    s = np.array([1e-300, 0.0, 1.0, 3 * 2e9])
    t = ps.trim_from_scale(s)
    assert np.all(np.isfinite(t)) and np.all(t > 0)
    assert np.all(t <= ps.max_trim_scale())
    np.testing.assert_allclose(ps.trim_from_scale([3.0]), [1.4826])
