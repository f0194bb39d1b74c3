"""The response's budget floor of the median / MAD box (``MEDIAN_TARGET_LOG_ODDS``).

``column_epsilons`` gives a median / MAD target at least ``8 L / n`` of the bounds' budget,
``L = MEDIAN_TARGET_LOG_ODDS``; a scale-only target keeps ``TARGET_LOG_ODDS`` per draw. The
split is a function of public quantities and adds up to the bounds' budget, so the privacy
argument is unchanged (basic composition); these tests check the split, the spend, and that
the floor does what it is for: the response's median draw lands in the data's bulk for a
level far from 0 (a control at the old floor shows the test can fail).
"""

import numpy as np
import pytest

import dpreg._bounds as B
from dpreg.tools._quantile import private_quantile_draws


def test_floor_of_a_median_mad_target():
    for n, m, eps_b in [(409, 12, 2.0), (315, 7, 1.0), (331, 11, 0.5), (3124, 12, 0.5)]:
        t = [False] * (m - 1) + [True]
        w = B.column_epsilons(eps_b, n, t)
        floor = 8.0 * B.MEDIAN_TARGET_LOG_ODDS / n
        assert w[-1] == pytest.approx(min(max(eps_b / m, floor), eps_b / 2))
        assert w.sum() == pytest.approx(eps_b, rel=1e-12) and np.all(w > 0)
        # the per-release split with two draws everywhere is the same rule
        np.testing.assert_allclose(B.column_epsilons(eps_b, n, t, [2] * m), w, rtol=1e-12)
    # HousePrices at eps = 4 (409 training rows, 12 columns): 0.235 instead of 0.167
    w = B.column_epsilons(2.0, 409, [False] * 11 + [True])
    assert w[-1] == pytest.approx(96 / 409) and w[0] == pytest.approx((2.0 - 96 / 409) / 11)


def test_scale_only_target_keeps_its_floor():
    # Engel-like (KNG): one scale-only draw for the response, 4 TARGET_LOG_ODDS / n per draw
    n, eps_b = 176, 0.5
    w = B.column_epsilons(eps_b, n, [False, True], [2, 1])
    a = min(max(eps_b / 3, 4.0 * B.TARGET_LOG_ODDS / n), eps_b / 2)
    assert w[-1] == pytest.approx(a) and w.sum() == pytest.approx(eps_b, rel=1e-12)
    assert B.TARGET_LOG_ODDS == 8.0 < B.MEDIAN_TARGET_LOG_ODDS


def test_fit_bounds_spends_the_floor_on_the_response(monkeypatch):
    """The response's two draws get 0.6 / 0.4 of its floor (TARGET_MEDIAN_FRACTION, derived
    in test_private_bounds_target_split.py), each feature's two draws half of its part; all
    draws add up to eps_b and never exceed it."""
    calls = []
    original = B.private_quantile_draws

    def spy(values, levels, eps_each, *args):
        calls.append(float(eps_each) * len(levels))
        return original(values, levels, eps_each, *args)

    monkeypatch.setattr(B, "private_quantile_draws", spy)
    rng = np.random.default_rng(3)
    n = 400
    X = rng.normal(50, 5, (n, 7))
    y = rng.normal(11, 0.3, n)
    (_, by), left = B.fit_bounds([X, y], ["private", "private"], 2.0, "auto",
                                 np.random.default_rng(0), ("bounds_X", "bounds_y"))  # fmt: skip
    eb, eps_model = B.split_budget("auto", 2.0, n, 8)
    assert left == eps_model
    w = B.column_epsilons(eb, n, [False] * 7 + [True])
    assert w[-1] == pytest.approx(8.0 * B.MEDIAN_TARGET_LOG_ODDS / n)
    assert w[-1] > eb / 8  # the floor is active
    assert len(calls) == 16 and sum(calls) == pytest.approx(eb, rel=1e-12)
    assert sum(calls) <= eb * (1 + 1e-15)
    np.testing.assert_allclose(calls[:14], np.repeat(w[:7] / 2, 2), rtol=1e-12)  # features 1:1
    f = B.TARGET_MEDIAN_FRACTION
    np.testing.assert_allclose(calls[-2:], [f * w[-1], (1 - f) * w[-1]], rtol=1e-12)  # last
    assert by[0][0] < 11 < by[1][0]


def test_floor_puts_the_response_median_in_the_bulk():
    """A response that is a level far from 0 (mean 11, sd 0.37, as log house prices), n = 400:
    the median draw at the floor lands in the interquartile range in about 96 % of draws
    (exact law), against about 40 % at the old floor (the control: TARGET_LOG_ODDS)."""
    y = np.random.default_rng(0).normal(11.0, 0.37, 400)
    q25, q75 = np.quantile(y, [0.25, 0.75])
    lo, hi = B.DEFAULT_CANDIDATE_RANGE

    def hits(odds, draws=200, seed=1):
        eps_draw = 8.0 * odds / y.size / 2  # the median's half of the target's floor
        rng = np.random.default_rng(seed)
        got = [
            private_quantile_draws(y, [0.5], eps_draw, lo, hi, "asinh", B.FIT_ASINH_SCALE, rng)[0]
            for _ in range(draws)
        ]
        return float(np.mean((np.asarray(got) >= q25) & (np.asarray(got) <= q75)))

    assert hits(B.MEDIAN_TARGET_LOG_ODDS) >= 0.85  # exact 0.96; binomial sd 0.014
    assert hits(B.TARGET_LOG_ODDS) <= 0.6  # exact 0.40; sd 0.035: the control
