"""The trimmed-mean stage of PrivateProjectionMedian (``trim_scale``; ``_trimmed.py``)."""

import numpy as np
import pytest
from scipy import stats

from dpreg import BudgetAccountant, PrivateProjectionMedian
from dpreg.location import _trimmed
from dpreg.location._trimmed import release_round, rounding_slack, trimmed_statistic


def _neighbour_search(X, centre, scale, radius, rng, n_tries=400):
    """Largest ||sum(D) - sum(D')||_2 and |count(D) - count(D')| over replace-one neighbours.

    Candidates for the replaced row: rows of D itself (kept ones near the ball's boundary give
    the largest change), and for the new row points on, just inside and just outside the
    boundary in the opposite direction, the centre, far points and non-finite-overflow points.
    """
    n, d = X.shape
    base_sum, base_count = trimmed_statistic(X, centre, scale, radius)
    Z = (X - centre) / scale
    norms = np.linalg.norm(Z, axis=1)
    kept = np.flatnonzero(norms <= radius)
    edge = kept[np.argsort(-norms[kept])[:20]]  # kept rows nearest the boundary
    worst_sum = worst_count = 0.0
    for t in range(n_tries):
        i = int(edge[t % len(edge)]) if t % 3 else int(rng.integers(n))
        z_old = Z[i]
        direction = -z_old / max(np.linalg.norm(z_old), 1e-300)
        choice = (t // 3) % 6
        if choice == 0:
            z_new = direction * radius  # on the boundary, opposite: the worst case
        elif choice == 1:
            z_new = direction * radius * (1 - 1e-12)
        elif choice == 2:
            z_new = direction * radius * (1 + 1e-12)  # just outside: dropped
        elif choice == 3:
            z_new = rng.standard_normal(d) * radius
        elif choice == 4:
            z_new = np.zeros(d)
        else:
            z_new = np.full(d, 1e300)
        Y = X.copy()
        with np.errstate(over="ignore"):
            Y[i] = centre + scale * z_new
        s, c = trimmed_statistic(Y, centre, scale, radius)
        worst_sum = max(worst_sum, float(np.linalg.norm(s - base_sum)))
        worst_count = max(worst_count, abs(c - base_count))
    return worst_sum, worst_count


@pytest.mark.parametrize("dist", ["normal", "cauchy", "contaminated"])
def test_trimmed_statistic_sensitivity_is_reached_and_never_exceeded(dist):
    """Adversarial neighbours: the sum moves by <= 2R (and gets within 1e-6 of it), the count
    by <= 1. Control: a calibration with sensitivity R (forgetting that the replaced row both
    leaves and enters) is broken by the same search."""
    rng = np.random.default_rng(0)
    n, d = 500, 3
    X = rng.standard_normal((n, d)) if dist != "cauchy" else rng.standard_cauchy((n, d))
    if dist == "contaminated":
        X[: n // 4] += 5.0
    centre = np.array([0.2, -0.1, 0.05])
    scale = np.array([1.0, 2.0, 0.5])
    radius = 2.0 * np.sqrt(d)
    X[1] = centre + scale * np.array([radius * (1 - 1e-9), 0.0, 0.0])  # kept, at the boundary
    worst_sum, worst_count = _neighbour_search(X, centre, scale, radius, rng)
    width = 2.0 * radius * (1.0 + rounding_slack(n, d))
    assert worst_sum <= width
    assert worst_sum >= 2.0 * radius * (1.0 - 1e-6)  # the bound is attained
    assert worst_count == 1.0
    assert worst_sum > radius  # control: a sensitivity of R would be broken


def test_round_uses_the_derived_calibration(monkeypatch):
    """The round's mechanisms get sensitivity 2R(1+g) at 0.9 e (sum) and 1 at 0.1 e (count)."""
    seen = []

    class SpyKNorm(_trimmed.KNormMechanism):
        def __init__(self, norm, dim, sensitivity, epsilon, random_state=None):
            seen.append(("knorm", norm, dim, sensitivity, epsilon))
            super().__init__(norm, dim, sensitivity, epsilon, random_state=random_state)

    class SpyLaplace(_trimmed.LaplaceMechanism):
        def __init__(self, epsilon, sensitivity, random_state=None):
            seen.append(("laplace", epsilon, sensitivity))
            super().__init__(epsilon, sensitivity, random_state=random_state)

    monkeypatch.setattr(_trimmed, "KNormMechanism", SpyKNorm)
    monkeypatch.setattr(_trimmed, "LaplaceMechanism", SpyLaplace)
    X = np.random.default_rng(1).standard_normal((300, 2))
    release_round(X, np.zeros(2), np.ones(2), 3.0, 2.0, np.random.default_rng(0))
    g = rounding_slack(300, 2)
    assert seen[0] == ("knorm", "l2", 2, pytest.approx(6.0 * (1 + g), rel=1e-15), 1.8)
    assert seen[1] == ("laplace", pytest.approx(0.2), 1.0)


def test_round_noise_law_matches_the_l2_k_norm_and_catches_a_miscalibration():
    """All rows at the centre: sum 0, count n. With a huge n the count noise is negligible, so
    ||shift|| * n follows Gamma(d, W / (0.9 e)), the K-norm radius law (the projection onto
    the ball never acts: the shift is ~1e-8). KS test, and the same
    sample is rejected against the law of half the sensitivity (control)."""
    n, d, eps = 10**9, 2, 1.0
    X = np.zeros((4, d))
    radius = 5.0

    # the statistic of n rows at the centre, without materialising them
    def stat(X_, centre, scale, r):
        return np.zeros(d), float(n)

    rng = np.random.default_rng(3)
    W = 2.0 * radius * (1.0 + rounding_slack(4, d))
    norms = []
    mp = pytest.MonkeyPatch()
    mp.setattr(_trimmed, "trimmed_statistic", stat)
    try:
        for _ in range(600):
            out = release_round(X, np.zeros(d), np.ones(d), radius, eps, rng)
            norms.append(np.linalg.norm(out) * n)
    finally:
        mp.undo()
    norms = np.array(norms)
    law = stats.gamma(d, scale=W / (0.9 * eps))
    assert stats.kstest(norms, law.cdf).pvalue > 1e-3
    wrong = stats.gamma(d, scale=0.5 * W / (0.9 * eps))
    assert stats.kstest(norms, wrong.cdf).pvalue < 1e-6


def test_trimmed_fit_is_accurate_and_robust():
    rng = np.random.default_rng(0)
    n, d = 20000, 3
    X = rng.standard_normal((n, d)) + [3.0, -1.0, 2.0]
    X_bad = X.copy()
    X_bad[: n // 4] += 5.0
    kw = {"epsilon": 5.0, "random_state": 0, "trim_scale": np.ones(d)}
    clean = PrivateProjectionMedian(**kw).fit(X)
    bad = PrivateProjectionMedian(**kw).fit(X_bad)
    plain_bad = PrivateProjectionMedian(epsilon=5.0, random_state=0).fit(X_bad)
    truth = np.array([3.0, -1.0, 2.0])
    assert np.linalg.norm(clean.location_ - truth) < 0.05  # sampling error ~0.012
    assert np.linalg.norm(clean.location_ - X.mean(0)) < 0.03
    # the shifted rows (about 5 sqrt(3) away) are dropped: far better than the median
    assert np.linalg.norm(bad.location_ - truth) < 0.1
    assert np.linalg.norm(plain_bad.location_ - truth) > 0.3
    assert clean.median_epsilon_ == 2.5 and clean.epsilon_ == 5.0
    assert not hasattr(plain_bad, "median_location_")


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"trim_scale": [1.0]}, "trim_scale"),
        ({"trim_scale": [1.0, -1.0]}, "trim_scale"),
        ({"trim_scale": [1.0, np.nan]}, "trim_scale"),
        ({"trim_scale": [1.0, 1.0], "trim_radius": 0.0}, "trim_radius"),
        ({"trim_scale": [1.0, 1.0], "trim_radius": 1e308}, "trim_radius"),
        ({"trim_scale": [1e300, 1e300], "trim_radius": 1e5}, "trim_scale"),
        ({"trim_scale": [1.0, 1.0], "trim_fraction": 1.0}, "trim_fraction"),
    ],
)
def test_invalid_trim_parameters_raise_before_spending(params, match):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    X = np.random.default_rng(0).standard_normal((2000, 2))
    with pytest.raises(ValueError, match=match):
        PrivateProjectionMedian(epsilon=5.0, accountant=acc, **params).fit(X)
    assert acc.spent == (0.0, 0.0)


def test_accountant_charged_the_total_once_and_inference_refused():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    X = np.random.default_rng(0).standard_normal((5000, 2))
    est = PrivateProjectionMedian(
        epsilon=5.0, norm="linf", accountant=acc, random_state=0, trim_scale=[1.0, 1.0]
    ).fit(X)
    assert acc.spent == (5.0, est.delta_) and len(acc) == 1
    with pytest.raises(ValueError, match="trim_scale"):
        est.release_scale(X, 1.0)
    assert len(acc) == 1  # refused before spending
