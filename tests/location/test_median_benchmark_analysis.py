"""The analysis helpers of ``benchmarks.median`` (issue #14 item 3): they must be able to fail."""

import numpy as np
import pytest

from benchmarks.median import _certifiable_sharpening, ratio_interval
from dpreg.location.projection_median import default_delta, make_directions


def test_ratio_interval_brackets_the_estimate_and_is_degenerate_when_equal():
    rng = np.random.default_rng(0)
    a, b = rng.exponential(2.0, 30), rng.exponential(1.0, 30)
    lo, hi = ratio_interval(a, b)
    point = np.sqrt(a.mean() / b.mean())
    assert lo < point < hi
    assert ratio_interval(b, b) == pytest.approx((1.0, 1.0))
    assert all(np.isnan(ratio_interval([1.0], [1.0])))


def _sharpening(n, d, eps, seed=0):
    X = np.random.default_rng(seed).standard_normal((n, d))
    U = make_directions("l2", d, 40, np.random.default_rng(seed))
    S = np.sort(U @ X.T, axis=1)
    return _certifiable_sharpening(U, S, eps, default_delta(n), (1.0, 16.0, 256.0), (0.4, 0.5))


def test_certifiable_sharpening_separates_easy_from_impossible_settings():
    # control: n = 20,000 at eps = 5 is certified by the current F with room to spare
    easy, *_ = _sharpening(20_000, 2, 5.0)
    # the target cell at d = 5 is out of reach even with eta equal to the data's own F
    hard, *_ = _sharpening(1_000, 5, 4.0)
    assert easy < 1.0 < hard
