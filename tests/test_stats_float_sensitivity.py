"""The float statistics that ``tools.mean`` / ``tools.var`` (and ``PrivateStandardScaler``)
release move, between neighbouring data sets, by at most the sensitivity they are calibrated
with (audit s21, finding 2). Differences are measured exactly (``Fraction``). Controls: on the
same neighbours the old statistics (the float mean / variance of the raw values) exceed the old
real-arithmetic sensitivities, and the new statistics exceed their real-arithmetic part (so the
float term is needed)."""

from fractions import Fraction

import numpy as np

from dpreg import BudgetAccountant
from dpreg.tools import mean
from dpreg.tools._moments import (
    _centred_terms,
    _mean_statistic,
    _var_statistic,
    mean_sensitivity,
    mean_sum_sensitivity,
    var_sensitivity,
    var_z_sensitivity,
)


def _gap(a, b):
    return abs(Fraction(a) - Fraction(b))


def _new_statistics(x, lo, hi):
    z = _centred_terms(np.asarray(x, dtype=float), lo, hi)
    return _mean_statistic(z), _var_statistic(z)


def _check_pair(D, D2, lo, hi, worst):
    """Update ``worst`` (ratios to the sensitivities) for one neighbouring pair."""
    n = D.size
    (s, v), (s2, v2) = _new_statistics(D, lo, hi), _new_statistics(D2, lo, hi)
    worst["mean"] = max(worst["mean"], _gap(s, s2) / Fraction(mean_sum_sensitivity(n)))
    if n > 1:
        worst["var"] = max(worst["var"], _gap(v, v2) / Fraction(var_z_sensitivity(n)))


def _ends_neighbours(lo, hi, n):
    """D: k values at ``hi``, the rest at ``lo``; D': one more at ``hi`` (the audit's pairs)."""
    for k in range(n):
        D = np.r_[np.full(k, hi), np.full(n - k, lo)]
        D2 = D.copy()
        D2[k] = hi
        yield D, D2


def test_float_neighbours_near_2_to_50_stay_within_the_new_sensitivities():
    lo, hi, n = 2.0**50, 2.0**50 + 1, 1000
    worst = {"mean": Fraction(0), "var": Fraction(0)}
    old_mean = old_var = Fraction(0)
    for D, D2 in _ends_neighbours(lo, hi, n):
        _check_pair(D, D2, lo, hi, worst)
        old_mean = max(old_mean, _gap(D.mean(), D2.mean()) / Fraction(mean_sensitivity(n, lo, hi)))
        old_var = max(old_var, _gap(D.var(), D2.var()) / Fraction(var_sensitivity(n, lo, hi)))
    assert worst["mean"] <= 1 and worst["var"] <= 1
    # control: the raw float mean / variance moved 250 and 132 times the real sensitivity
    assert old_mean > 100 and old_var > 100


BOUNDS = [(0.0, 1.0), (-2.0, 3.0), (1e9, 1e9 + 1), (2.0**50, 2.0**50 + 1), (-1e150, 1e150)]


def test_random_search_over_neighbours_stays_within_the_new_sensitivities():
    rng = np.random.default_rng(0)
    worst = {"mean": Fraction(0), "var": Fraction(0)}
    for lo, hi in BOUNDS:
        w = hi - lo
        for _ in range(150):
            n = int(rng.choice([1, 2, 3, 7, 50, 500]))
            if rng.uniform() < 0.4:  # values at the ends and just inside them
                D = rng.choice([lo, hi, lo + w * 2.0**-30, hi - w * 2.0**-30], size=n)
            else:
                D = lo + w * rng.uniform(size=n)
            D2 = D.copy()
            D2[rng.integers(n)] = rng.choice([lo, hi, lo - w, hi + w, lo + w * rng.uniform()])
            _check_pair(D, D2, lo, hi, worst)
    assert worst["mean"] <= 1 and worst["var"] <= 1
    assert worst["mean"] > 0.99 and worst["var"] > 0.99  # the searches reach the bounds


def test_control_the_computed_statistics_exceed_their_real_sensitivities():
    """On bounds (-1, 1) (where z = x) the computed statistics move by more than the real
    sensitivities 2 and 4 (n - 1) / n^2: the float terms are not decorative."""
    t = 0.6 * 2.0**-51  # fl(2 + t) rounds up, fl(0 + t) is exact
    s, s2 = (_new_statistics(D, -1.0, 1.0)[0] for D in ([1.0, 1.0, t], [1.0, -1.0, t]))
    assert _gap(s, s2) > 2
    exceeded = 0
    for n in range(2, 200):
        D = -np.ones(n)
        D2 = D.copy()
        D2[0] = 1.0
        v, v2 = (_new_statistics(x, -1.0, 1.0)[1] for x in (D, D2))
        exceeded += _gap(v, v2) > Fraction(4 * (n - 1), n * n)
    assert exceeded > 0


def test_neighbours_near_2_to_50_give_overlapping_released_means():
    """End to end (the audit's t4): the old release gave 2**50 on D and 2**50 + 0.25 on D',
    300 times out of 300 each."""
    lo, hi, n = 2.0**50, 2.0**50 + 1, 1000
    D = np.r_[np.full(143, hi), np.full(n - 143, lo)]
    D2 = D.copy()
    D2[143] = hi
    rng = np.random.default_rng(1)
    acc = BudgetAccountant()
    outs = [
        {mean(x, 1.0, (lo, hi), random_state=rng, accountant=acc) for _ in range(100)}
        for x in (D, D2)
    ]
    assert outs[0] & outs[1]
