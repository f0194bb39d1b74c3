"""Shared validators in dpreg._validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpreg._validation import (
    check_bounds,
    check_delta,
    check_dim,
    check_epsilon,
    check_norm,
    check_random_state,
    check_sensitivity,
    scale_to_unit,
    unit_scaling,
)
from dpreg.exceptions import PrivacyLeakWarning
from dpreg.noise import L2Ball


def test_check_epsilon_and_delta_accept_good_values():
    assert check_epsilon(1) == 1.0 and isinstance(check_epsilon(np.float32(0.5)), float)
    assert check_delta(0) == 0.0 and check_delta(0.999) == 0.999
    assert check_delta(1e-9, allow_zero=False) == 1e-9
    with pytest.raises(ValueError, match="delta must be > 0"):
        check_delta(0.0, allow_zero=False)
    assert check_sensitivity(2) == 2.0


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.floats(max_value=0.0),
        st.just(float("inf")),
        st.booleans(),
        st.none(),
        st.text(max_size=2),
        st.lists(st.floats(), min_size=1, max_size=2),
    )
)
def test_check_epsilon_rejects(value):
    with pytest.raises(ValueError, match="my_eps"):
        check_epsilon(value, name="my_eps")


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.floats(max_value=0.0, exclude_max=True),
        st.floats(min_value=1.0),
        st.just(float("nan")),
        st.booleans(),
        st.none(),
        st.text(max_size=2),
    )
)
def test_check_delta_rejects(value):
    with pytest.raises(ValueError, match="delta"):
        check_delta(value)


def test_check_norm_and_dim():
    assert check_norm("L1") == "l1" and check_norm("max") == "linf" and check_norm("inf") == "linf"
    assert check_norm(1) == "l1" and check_norm(2.0) == "l2" and check_norm(np.inf) == "linf"
    assert check_norm(3) == 3.0
    ball = L2Ball(2)
    assert check_norm(ball) is ball
    for bad in ("l3", "", 0.99, float("nan"), True, None, object()):
        with pytest.raises(ValueError, match="norm|p >= 1"):
            check_norm(bad)
    with pytest.raises(ValueError):
        check_norm(3, allow_p=False)
    with pytest.raises(ValueError):
        check_norm(ball, allow_ball=False)
    assert check_dim(np.int64(3)) == 3
    for bad in (0, -1, 2.0, True, "2"):
        with pytest.raises(ValueError, match="dim"):
            check_dim(bad)


def test_check_random_state():
    g = np.random.default_rng(0)
    assert check_random_state(g) is g
    a = check_random_state(5).standard_normal(3)
    assert np.array_equal(a, check_random_state(5).standard_normal(3))
    r1 = check_random_state(np.random.RandomState(2)).standard_normal(3)
    r2 = check_random_state(np.random.RandomState(2)).standard_normal(3)
    assert np.array_equal(r1, r2)
    assert isinstance(check_random_state(None), np.random.Generator)
    for bad in ("seed", 1.5, True):
        with pytest.raises(ValueError, match="random_state"):
            check_random_state(bad)


def test_check_bounds_warns_and_reads_data_when_missing():
    X = np.array([[0.0, -3.0], [2.0, 5.0], [1.0, 1.0]])
    with pytest.warns(PrivacyLeakWarning, match="bounds_X were not given"):
        lo, hi = check_bounds(None, 2, X=X, name="bounds_X")
    assert np.array_equal(lo, [0.0, -3.0]) and np.array_equal(hi, [2.0, 5.0])
    with pytest.warns(PrivacyLeakWarning):
        lo, hi = check_bounds(None, 1, X=np.array([4.0, -1.0]))
    assert lo.tolist() == [-1.0] and hi.tolist() == [4.0]
    with pytest.raises(ValueError, match="must be given"):
        check_bounds(None, 2)


def test_check_bounds_explicit():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no PrivacyLeakWarning with explicit bounds
        lo, hi = check_bounds((-1, 2), 3)
    assert lo.tolist() == [-1.0] * 3 and hi.tolist() == [2.0] * 3
    lo, hi = check_bounds(([0, 1], [1, 3]), 2)
    assert lo.tolist() == [0.0, 1.0] and hi.tolist() == [1.0, 3.0]
    with pytest.raises(ValueError, match="lower bound"):
        check_bounds((1, 0), 2)
    with pytest.raises(ValueError, match="finite"):
        check_bounds((0, np.inf), 2)
    with pytest.raises(ValueError, match="finite"):
        check_bounds((np.nan, 1), 2)
    with pytest.raises(ValueError, match="pair"):
        check_bounds(5, 2)
    with pytest.raises(ValueError, match="pair"):
        check_bounds((0, 1, 2), 2)
    with pytest.raises(ValueError):
        check_bounds(([0, 1, 2], [1, 2, 3]), 2)  # wrong length


def test_scale_to_unit_clips_and_maps_to_cube():
    X = np.array([[-5.0, 0.5, 7.0], [0.0, 1.0, 7.0], [10.0, 2.0, 7.0], [5.0, 1.5, 7.0]])
    lo, hi = np.array([0.0, 0.0, 7.0]), np.array([10.0, 2.0, 7.0])
    Z = scale_to_unit(X, lo, hi)
    assert np.all(Z >= -1) and np.all(Z <= 1)
    assert Z[0, 0] == -1.0  # clipped, not rejected
    assert Z[2, 0] == 1.0 and Z[3, 0] == 0.0
    assert np.allclose(Z[:, 1], [-0.5, 0.0, 1.0, 0.5])
    assert np.all(Z[:, 2] == 0.0)  # constant column
    mid, half = unit_scaling(lo, hi)
    inside = np.clip(X, lo, hi)
    assert np.allclose((mid + half * Z)[:, :2], inside[:, :2])


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20),
    st.floats(-100, 100),
    st.floats(0.001, 100),
)
def test_scale_to_unit_always_in_cube(values, low, width):
    Z = scale_to_unit(np.array(values)[:, None], np.array([low]), np.array([low + width]))
    assert np.all(np.abs(Z) <= 1.0)  # exactly: sensitivity bounds assume it
