"""Budget splits add up, in exact arithmetic, to at most what is charged (basic composition).

The session-21 audits found float splits exceeding the charge by about 1e-16 relative (1265
of 4000 random private-bounds fits, 7235 of 20000 scaler splits). Sums here are exact
(``fractions.Fraction``). Controls: the plain float splits the library used before do exceed.
"""

import signal
from fractions import Fraction

import numpy as np
import pytest

import dpreg._bounds as B
from dpreg._validation import equal_share, shares_within


def test_shares_within_and_equal_share_are_exact():
    rng = np.random.default_rng(0)
    naive_over = 0
    for _ in range(3000):
        eps = float(rng.uniform(0.01, 10))
        k = int(rng.integers(2, 25))
        naive_over += k * Fraction(eps / k) > Fraction(eps)  # control
        assert k * Fraction(equal_share(eps, k)) <= Fraction(eps)
        share = float(rng.uniform(0.01, 0.99))
        parts = shares_within([share * eps, eps - share * eps], eps, lower=1)
        assert sum(map(Fraction, parts)) <= Fraction(eps)
        assert parts[0] == share * eps  # only the named part moves
    assert naive_over > 100


def _within_seconds(func, *args, seconds=5):
    """Call ``func``; a hang (the old helpers looped forever) becomes a test failure."""

    def on_alarm(signum, frame):
        raise TimeoutError(f"{func.__name__}{args!r} did not return")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        return func(*args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize(
    "func,args",
    [
        (shares_within, ([0.0], -1.0)),  # nextafter towards 0 stalls at 0: looped forever
        (shares_within, ([0.5], -1.0)),
        (shares_within, ([0.5, 0.2], [0.3, -0.1])),
        (shares_within, ([float("nan"), 0.5], 1.0)),  # NaN parts were returned unchecked
        (shares_within, ([0.5, 0.5], float("nan"))),
        (shares_within, ([0.5, 0.5], float("inf"))),
        (shares_within, ([float("inf")], 1.0)),
        (shares_within, ([0.0, 0.5], 0.25, 0)),  # the named part is 0 and the sum exceeds
        (equal_share, (-1.0, 3)),  # a negative share moved up: looped forever
        (equal_share, (float("nan"), 3)),  # NaN share returned
        (equal_share, (float("inf"), 3)),
        (equal_share, (1.0, 0)),  # ZeroDivisionError
        (equal_share, (1.0, -2)),
        (equal_share, (1.0, 2.5)),
        (equal_share, (1.0, True)),
    ],
)
def test_budget_helpers_refuse_bad_totals_and_counts(func, args):
    """Audit s22 F5: the helpers are total (a ValueError) on public nonsense."""
    with pytest.raises(ValueError):
        _within_seconds(func, *args)
    # and stay as before on good input, including a zero total
    assert shares_within([0.0, 0.0], 0.0).tolist() == [0.0, 0.0]
    assert equal_share(0.0, 4) == 0.0


def _fit_bounds_spent(monkeypatch, n, p, eps, share, kind):
    rec = []

    def fake_q(values, levels, e, lo, hi, measure, s, rng):
        rec.append((e, np.size(values)))
        return np.full(len(levels), 1.0)

    def fake_w(values, e, lo, hi, width, s, rng):
        rec.append((e, np.size(values)))
        return 0.5

    monkeypatch.setattr(B, "private_quantile_draws", fake_q)
    monkeypatch.setattr(B, "window_draw", fake_w)
    kw = [
        {"relative_features": True, "window_features": True},
        {"scale_only_features": True},
        {"scale_only_targets": True, "relative_features": True},
    ][kind]
    X, y = np.zeros((n, p)), np.zeros((n, 1))
    _, left = B.fit_bounds(
        [X, y], ["private", "private"], eps, share, None, ("bounds_X", "bounds_y"), **kw
    )
    # a draw over m values of n rows has sensitivity m / n: its cost is e * m / n
    return sum((Fraction(e) * Fraction(m, n) for e, m in rec), Fraction(0)) + Fraction(left)


def test_private_bounds_draws_and_the_fit_stay_within_epsilon(monkeypatch):
    rng = np.random.default_rng(1)
    for _ in range(400):
        n, p = int(rng.integers(1, 3000)), int(rng.integers(1, 12))
        eps = float(rng.choice([rng.uniform(0.01, 10), 1 / 3, 0.7, 2.9]))
        share = B.AUTO if rng.random() < 0.6 else float(rng.uniform(0.01, 0.99))
        kind = int(rng.integers(3))
        assert _fit_bounds_spent(monkeypatch, n, p, eps, share, kind) <= Fraction(eps)
