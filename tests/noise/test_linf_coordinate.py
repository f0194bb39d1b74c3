"""Quantiles of one coordinate of the l-inf K-norm noise (``LinfKNormCoordinate``)."""

import numpy as np
import pytest

from dpreg.noise.linf_coordinate import LinfKNormCoordinate


@pytest.mark.parametrize("m", [1, 2, 5])
def test_ppf_is_accurate_in_both_tails(m):
    """Audit s22 F5: ppf(p) = isf(1 - p) rounded 1 - p first, so cdf(ppf(1e-12)) was off by
    2.2e-5 relative for every m. The law is symmetric: ppf(p) = -isf(p)."""
    law = LinfKNormCoordinate(m, 1.5)
    for p in [1e-300, 1e-12, 1e-6, 0.01, 0.3]:
        # abs=0: pytest's default absolute tolerance (1e-12) would hide the tail error
        assert float(law.cdf(law.ppf(p))) == pytest.approx(p, rel=1e-9, abs=0)
    for q in [0.5, 0.7, 0.99, 1 - 1e-9]:
        assert float(law.cdf(law.ppf(q))) == pytest.approx(q, rel=1e-12, abs=0)
    assert float(law.ppf(0.5)) == 0.0
    np.testing.assert_allclose(law.ppf([1e-12, 0.5, 0.9]), [law.ppf(1e-12), 0.0, law.ppf(0.9)])
    for bad in [0.0, 1.0, -0.1, np.nan]:
        with pytest.raises(ValueError):
            law.ppf(bad)
