"""Issue #14 item 5 (dask scale-out): the privacy order of the dask paths."""

import threading
import warnings

import numpy as np
import pytest

from dpreg import BudgetAccountant, FunctionalLinearRegression

da = pytest.importorskip("dask.array")

BOUNDS = {"bounds_X": (-2.0, 3.0), "bounds_y": (-15.0, 15.0)}


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 3, size=(n, 3))
    return X, 0.7 + X @ np.array([1.0, -1.0, 2.0]) + rng.normal(scale=0.5, size=n)


def _nan_on_second_read(X, chunks):
    """A dask array whose block (0, 0) has X[0, 0] = NaN from its second read on: a source
    that changes between passes (a file rewritten, a non-deterministic loader)."""
    seen, lock = set(), threading.Lock()

    def block(b, block_info=None):
        loc = block_info[None]["chunk-location"]
        with lock:
            again = loc in seen
            seen.add(loc)
        b = b.copy()
        if again and loc == (0, 0):
            b[0, 0] = np.nan
        return b

    return da.from_array(X, chunks=chunks).map_blocks(block, dtype=X.dtype)


def test_dask_nan_found_before_the_reserve():
    # old code: the dask path spent the budget, then found the NaN while streaming and raised
    X, y = _data()
    X[1234, 1] = np.nan
    acc = BudgetAccountant(epsilon=3.0)
    with pytest.raises(ValueError, match="NaN"):
        FunctionalLinearRegression(accountant=acc, random_state=0, **BOUNDS).fit(
            da.from_array(X, chunks=(500, 3)), da.from_array(y, chunks=500)
        )
    assert acc.spent == (0.0, 0.0) and len(acc) == 0


def test_dask_nan_after_the_reserve_is_data_independent():
    # after the spend nothing may depend on a NaN: it is mapped to the lower bound (a fixed
    # point of the box), no warning, no exception, no NaN model (old code: NaN moments, a
    # RuntimeWarning and coefficients silently set to 0)
    X, y = _data()
    Xd = _nan_on_second_read(X, (500, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = FunctionalLinearRegression(random_state=3, **BOUNDS).fit(Xd, y)
    X_lo = X.copy()
    X_lo[0, 0] = BOUNDS["bounds_X"][0]
    ref = FunctionalLinearRegression(random_state=3, **BOUNDS).fit(X_lo, y)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=1e-9)
    assert np.isfinite(got.intercept_)
