"""The exact KNG sampler's progress bar: a display hook that never changes the draw."""

import numpy as np
import pytest

from dpreg import KNGQuantileRegressor


def _data():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (500, 2))
    y = X @ [1.0, -0.5] + rng.standard_normal(500)
    return X, y


def _fit(progress_bar):
    X, y = _data()
    return KNGQuantileRegressor(
        epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-6, 6), progress_bar=progress_bar, random_state=3
    ).fit(X, y)


def test_bar_shows_boxes_and_leaves_the_seeded_draw_unchanged(capsys):
    quiet = _fit(False)
    assert "KNG exact draw" not in capsys.readouterr().err
    shown = _fit(True)
    assert "KNG exact draw" in capsys.readouterr().err
    np.testing.assert_array_equal(shown.coef_, quiet.coef_)
    assert shown.intercept_ == quiet.intercept_
    assert _fit(None).intercept_ == quiet.intercept_  # short fit: no bar (2 s delay), same draw


def test_a_failing_display_does_not_fail_a_spent_fit(monkeypatch):
    import tqdm.auto

    class Broken:
        def __init__(self, *args, **kwargs):
            pass

        def set_postfix(self, *args, **kwargs):
            raise OSError("stderr closed")

        def update(self, *args):
            raise OSError("stderr closed")

        def close(self):
            raise OSError("stderr closed")

    quiet = _fit(False)
    monkeypatch.setattr(tqdm.auto, "tqdm", Broken)
    broken = _fit(True)
    np.testing.assert_array_equal(broken.coef_, quiet.coef_)


@pytest.mark.parametrize("value", [None, True, False])
def test_progress_bar_is_a_plain_parameter(value):
    est = KNGQuantileRegressor(progress_bar=value)
    assert est.get_params()["progress_bar"] is value
