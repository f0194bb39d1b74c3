"""Intervals of PrivateProjectionMedian(scale="private") are calibrated *given the released
scales* (docs/inference.md, PrivateProjectionMedian, "Released scales (session 12)").

Given the released s, the release is exactly ``x~ = mu + s R U`` with ``R ~ Gamma(d + 1,
1/c)`` and c of the median stage, whatever s is: the interval's noise part is that law, so
the scale release's own error does not enter the coverage. The test checks the release in
units of the *released* s against that law, also when the released s is forced far from the
data's spread (5 times 3 MAD), where a law in units of the data's spread is rejected
(control: an interval that used the data's scale instead of the released one would be
miscalibrated and the check catches it)."""

import numpy as np
import pytest
from scipy import stats

from dpreg import PrivateProjectionMedian
from dpreg.location import _inference as inf
from dpreg.location import _private_scale as ps

N, EPS, FITS = 1000, 4.0, 80


@pytest.fixture(scope="module")
def data():
    return np.random.default_rng(12).standard_normal((N, 2)) * [1.0, 10.0] + [3.0, -1.0]


def _noise(X, fits, release=None):
    """``(x~ - sample median)`` of x1 over ``fits`` fits on ``X`` (each fit releases its own
    scales), the released s of x1 and the common c."""
    z, s = [], []
    with pytest.MonkeyPatch.context() as mp:
        if release is not None:
            mp.setattr(ps, "release_scales", release)
        for k in range(fits):
            est = PrivateProjectionMedian(
                epsilon=EPS, norm="linf", scale="private", random_state=k
            ).fit(X)
            z.append(est.location_[0] - np.median(X[:, 0]))
            s.append(est.public_scale_[0])
    return np.array(z), np.array(s), inf.inverse_temperature(est)


def _law_pvalue(z, c, seed=0):
    """KS p-value of ``z`` against ``R U``, ``R ~ Gamma(3, 1/c)``, ``U ~ U[-1, 1]`` (d = 2),
    from 400,000 draws of the law."""
    rng = np.random.default_rng(seed)
    law = rng.gamma(3.0, 1.0 / c, 400_000) * rng.uniform(-1.0, 1.0, 400_000)
    return stats.ks_2samp(z, law).pvalue


def test_release_in_released_scale_units_is_the_intervals_law(data):
    z, s, c = _noise(data, FITS)
    # the sampling sd of the median (0.04) is below 1 % of the noise sd here: z / s is R U
    assert _law_pvalue(z / s, c) > 1e-3


def test_off_released_scale_still_calibrated_and_control(data):
    """A released s far from the data's spread (forced: 5 x 3 MAD) changes the release noise,
    and the interval follows it because it uses the released s. Control: the same releases
    in units of the data's spread (3 MAD of the sample) are rejected."""
    mad = np.median(np.abs(data - np.median(data, axis=0)), axis=0)
    off = 5.0 * ps.SCALE_FACTOR * mad

    original = ps.release_scales

    def release(X, epsilon, rng):
        original(X, epsilon, rng)  # the same draws from the stream, then a forced value
        return off.copy()

    z, s, c = _noise(data, FITS, release)
    assert np.all(s == off[0])
    assert _law_pvalue(z / s, c) > 1e-3
    assert _law_pvalue(z / (ps.SCALE_FACTOR * mad[0]), c) < 1e-6
    # and the interval of one such fit is the law's: its half-width over s matches the
    # law's 97.5 % quantile of |R U_1 + sampling| within the bootstrap's Monte Carlo error
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ps, "release_scales", release)
        est = PrivateProjectionMedian(epsilon=EPS, norm="linf", scale="private", random_state=0)
        est.fit(data).release_scale(data, 0.5, random_state=1)
    ci = est.conf_int(n_boot=4000)
    half = (ci[0, 1] - ci[0, 0]) / 2.0 / off[0]
    rng = np.random.default_rng(1)
    law = np.abs(rng.gamma(3.0, 1.0 / c, 400_000) * rng.uniform(-1.0, 1.0, 400_000))
    assert half == pytest.approx(np.quantile(law, 0.95), rel=0.05)
