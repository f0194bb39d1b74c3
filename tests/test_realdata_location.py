"""benchmarks.realdata_location: the goal rule and the CoinPress start ball (no data download)."""

import numpy as np
import pandas as pd

from benchmarks import realdata_location as rl


def _rows(pass_rate, dp, cp):
    base = dict(dataset="s", epsilon=1.0, n=10, N=20, p=2)
    return [
        dict(base, method="dpreg", score=dp, pass_rate=pass_rate),
        dict(base, method=rl.DP_ANCHOR, score=cp, pass_rate=1.0),
        dict(base, method="CoinPress (oracle scale)", score=cp, pass_rate=1.0),
    ]


def test_goal_needs_both_pass_rate_and_error():
    assert rl.goals(pd.DataFrame(_rows(1.0, 0.5, 0.6)))["goal"].item() == "met"
    assert rl.goals(pd.DataFrame(_rows(0.9, 0.5, 0.6)))["goal"].item() == "not met"
    assert rl.goals(pd.DataFrame(_rows(1.0, 0.7, 0.6)))["goal"].item() == "not met"
    never = rl.goals(pd.DataFrame(_rows(0.0, float("nan"), 0.6)))
    assert never["goal"].item() == "not met"
    assert "Goal met in 0 of 1 cells" in rl.summary(_rows(0.0, float("nan"), 0.6))


def test_coinpress_start_ball_holds_the_box_at_any_scale():
    lower, upper = np.array([0.0, -5.0, 100.0]), np.array([1.0, 5.0, 1e6])
    mid, half = (lower + upper) / 2, (upper - lower) / 2
    corners = np.array(np.meshgrid(*zip(lower, upper))).reshape(3, -1).T
    for scale in (half, np.array([0.1, 3.0, 2e3])):
        radius = float(np.linalg.norm(half / scale))
        assert np.all(np.linalg.norm((corners - mid) / scale, axis=1) <= radius * (1 + 1e-12))


def test_coinpress_release_is_in_data_units():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20_000, 2)) * [1.0, 1e4] + [3.0, 5e4]
    box = np.array([-10.0, 0.0]), np.array([10.0, 1e5])
    mid, half = (box[0] + box[1]) / 2, (box[1] - box[0]) / 2
    est = rl._coinpress(X, 4.0, 1e-6, mid, half, half, rng)
    assert np.all(np.abs(est - [3.0, 5e4]) < [0.2, 2e3])
