"""Subnormal scaled data and the exact KNG sampler's float error model (session 10, fpx2).

The box sampler declares a hyperplane fixed on a box only when it is fixed in exact
arithmetic (module docstring of :mod:`dpreg._kng_exact`). Its rounding slack was relative to
``|U_i|_1 max|theta|``; when every product ``U_ij theta_j`` is subnormal (no intercept, scaled
features within ~1e-308 of 0) a product carries an absolute error up to ``2**-1075`` that the
slack did not cover, and a crossing hyperplane was classified as always active.
``test_subnormal_row_is_crossing`` failed on the code before the fix (``gfix = 2**-1074``
with an empty crossing list on ``[0.25, 1.25]``, where ``1{2**-1074 theta >= 2**-1074}`` is 0
below 1 and 1 above). docs/floating_point.md, section 5d.
"""

from fractions import Fraction

import numpy as np
import pytest

from dpreg import KNGQuantileRegressor
from dpreg._kng_exact import BoxSampler
from dpreg.kng import StepGradient
from dpreg.linear_model._quantile_core import FLUSH_BELOW, scale_features
from dpreg.noise.balls import make_ball

TINY = 2.0**-1074


def _exact_side(u, c, lo, hi):
    """+1 if ``u^T theta >= c`` on the whole box, -1 if never, 0 if it crosses (rationals)."""
    low = high = Fraction(0)
    for uj, a, b in zip(u, lo, hi):
        ends = (Fraction(float(uj)) * Fraction(float(a)), Fraction(float(uj)) * Fraction(float(b)))
        low += min(ends)
        high += max(ends)
    cc = Fraction(float(c))
    return 1 if low >= cc else (-1 if high < cc else 0)


def _violations(bs, lists=None):
    """Boxes whose classification is not exact: a record that crosses the box in exact
    arithmetic is missing from its crossing list, or the fixed gradient does not hold the
    jumps of exactly the always-active records (within the sampler's own error bound)."""
    bad = []
    for b in range(bs.n_boxes):
        lst = bs._list(b) if lists is None else lists[b]
        listed = set(lst[:, 0].astype(int).tolist())
        expect = bs._offset.copy()
        for i in range(bs.U.shape[0]):
            side = _exact_side(bs.U[i], bs.c[i], bs.lo[b], bs.hi[b])
            if side == 0 and i not in listed:
                bad.append((b, i, "crossing record declared fixed"))
            if side == 1 and i not in listed:
                expect += bs.V[i]
        if np.any(np.abs(bs.gfix[b] - expect) > bs.err):
            bad.append((b, None, "fixed gradient"))
    return bad


def _sampler(U, c, lower, upper, norm="linf"):
    U = np.asarray(U, dtype=float)
    grad = StepGradient(U, np.asarray(c, dtype=float), offset=-0.5 * U.sum(axis=0))
    return BoxSampler(grad, 1.0, make_ball(norm, U.shape[1]), lower, upper)


def test_subnormal_row_is_crossing():
    """The constructed case: ``U = c = 2**-1074`` on ``[0.25, 1.25]``. At the centre 0.75 the
    float index is ``fl(0.75 * 2**-1074) = 2**-1074``, so ``dev = 0``; the half-width product
    ``fl(0.5 * 2**-1074)`` is 0 (ties to even) and the relative slack underflows to 0, so
    ``dev >= rad`` declared the record always active (before the fix)."""
    bs = _sampler([[TINY]], [TINY], [0.25], [1.25])
    assert _exact_side(bs.U[0], bs.c[0], bs.lo[0], bs.hi[0]) == 0
    assert bs._list(0).shape[0] == 1
    assert _violations(bs) == []
    # control: the checker flags the classification the old slack produced (empty list and
    # the jump in the fixed gradient)
    bs.gfix[0] = bs.gfix[0] + bs.V[0]
    assert len(_violations(bs, lists=[np.empty((0, 3))])) == 2


@pytest.mark.parametrize("norm", ["linf", "l2"])
def test_random_subnormal_rows_exact_after_splits(norm):
    """40 rows of subnormal features (no intercept) whose thresholds put many hyperplanes
    through the box: every box of a partition of 32 boxes (the split updates carry their own
    products) is classified exactly, also after a draw."""
    rng = np.random.default_rng(3)
    U = rng.integers(-40, 41, size=(40, 2)) * TINY
    c = rng.integers(-30, 31, size=40) * TINY
    bs = _sampler(U, c, [-1.0, -1.0], [1.0, 1.0], norm)
    for _ in range(5):  # the density is ~flat (tiny gradients): split every box by hand
        bs._split(np.flatnonzero(bs.splittable))
    assert bs.n_boxes > 1
    assert _violations(bs) == []
    theta, _ = bs.sample(np.random.default_rng(0))
    assert np.all(np.abs(theta) <= 1.0)
    assert _violations(bs) == []


def test_ordinary_rows_keep_the_relative_slack_bit_for_bit():
    """Control for 'ordinary releases are unchanged': rows with normal entries get exactly the
    relative slack of before (the absolute underflow term rounds away)."""
    rng = np.random.default_rng(1)
    U = np.hstack([np.ones((30, 1)), rng.uniform(-1, 1, size=(30, 2))])
    bs = _sampler(U, rng.normal(size=30), [-2.0, -1.0, -1.0], [2.0, 1.0, 1.0])
    d, big = 3, 2.0
    rel = 8.0 * np.finfo(float).eps * np.abs(bs.U).sum(axis=1) * big * (d + 3.0 + 3.0 * 51.0 * d)
    assert np.array_equal(bs._slack, rel)
    assert _violations(bs) == []


def test_scale_features_flushes_only_tiny_values():
    x = np.array(
        [1e-320, -1e-320, 2.0**-501, np.nextafter(FLUSH_BELOW, 0.0), FLUSH_BELOW, -FLUSH_BELOW,
         1e-100, 0.5, 0.0, -0.0]
    )  # fmt: skip
    Z, _, _ = scale_features(x[:, None], [-1.0], [1.0], False)
    want = np.where(np.abs(x) < FLUSH_BELOW, 0.0, x)
    assert np.array_equal(Z[:, 0], want)
    # values at or above the threshold, and zeros with their sign, are the same bits
    keep = np.abs(x) >= FLUSH_BELOW
    assert Z[keep, 0].tobytes() == x[keep].tobytes()
    assert np.signbit(Z[-1, 0]) and not np.signbit(Z[-2, 0])
    # with an intercept: features within 1e-320 of the box centre 0
    Z, _, _ = scale_features(np.array([[1e-320], [-3e-310], [0.25]]), [-1.0], [1.0], True)
    assert Z.ravel().tolist() == [0.0, 0.0, 0.25]


def test_estimator_flushes_subnormal_features(monkeypatch):
    """No intercept, features within 1e-320 of 0: the index vectors that reach the sampler
    have no entry in ``(0, 2**-500)`` (fails without the flush), the release is finite and
    equals the fit on the data with those features set to 0 (same seed)."""
    import dpreg.linear_model.quantile as qmod

    seen = []
    real = qmod.quantile_gradient

    def spy(W, *args, **kwargs):
        seen.append(np.array(W))
        return real(W, *args, **kwargs)

    monkeypatch.setattr(qmod, "quantile_gradient", spy)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 2))
    X[:10, 0] = rng.integers(-50, 50, size=10) * TINY
    X[10:15] = 1e-310
    y = X[:, 1] + 0.1 * rng.normal(size=30)
    y[:10] = TINY * rng.integers(-5, 5, size=10)
    X0 = np.where(np.abs(X) < FLUSH_BELOW, 0.0, X)
    kw = dict(bounds_X=(-1, 1), bounds_y=(-2, 2), fit_intercept=False, random_state=7)
    a = KNGQuantileRegressor(**kw).fit(X, y)
    b = KNGQuantileRegressor(**kw).fit(X0, y)
    assert np.all(np.isfinite(a.coef_))
    W = seen[0]
    assert np.all((W == 0.0) | (np.abs(W) >= FLUSH_BELOW))
    assert np.array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("half_width", [2.0**40, 1.0, 2.0**-400])
def test_line_release_index_exact_for_subnormal_thresholds(half_width):
    """The 1-D line release forms no products; its cell index ``ceil(c / g - 1/2) - L / g``
    uses ``ldexp(c, -e)``, which rounds a subnormal ``c`` when ``g > 1``. The index still
    equals the rational one (``|c / g| < 1/2`` either way)."""
    import math

    from dpreg._kng_grid import grid_box
    from dpreg._kng_line import _segments

    g, L, H = (float(v[0]) for v in grid_box([-half_width], [half_width]))
    cs = [TINY, -TINY, 3 * TINY, -7 * TINY, 2.0**-1022, -(2.0**-1023), 1e-310, 0.0]
    for c in cs:
        starts, _, S, J = _segments(np.array([c]), np.array([1.0]), L, H, g)
        want = math.ceil(Fraction(c) / Fraction(g) - Fraction(L) / Fraction(g) - Fraction(1, 2))
        assert int(starts[S == 1][0]) == want
    # control: a threshold half a cell above the centre moves the index by one
    starts, _, S, _ = _segments(np.array([0.5 * g + 2.0**-30 * g]), np.array([1.0]), L, H, g)
    assert int(starts[S == 1][0]) == math.ceil(-Fraction(L) / Fraction(g)) + 1
