"""The KNG cells of benchmarks.inference: chunked runs and the asymptotic oracle (issue #15)."""

import numpy as np
import pytest

from benchmarks import _inference_cells as cells_mod
from dpreg.noise.balls import LinfBall


def test_chunks_concatenate_to_the_whole_run():
    """Data set i has its own seed, so chunks of a run give the whole run's arrays."""
    kw = dict(n_boot=20, seed=7, eps_grid=[1.0], full_fits=False)
    whole = cells_mod.kng_cells(200, 3, **kw)
    chunks = [cells_mod.kng_cells(200, 1, start=i, **kw) for i in range(3)]
    merged = cells_mod.concat_cells(chunks)
    for j in range(3):
        np.testing.assert_array_equal(merged[1.0][j], whole[1.0][j])
    assert merged[1.0][0].shape == (3, 3) and merged[1.0][2].size == 0


@pytest.mark.parametrize("n, scale", [(1000, 0.15), (100_000, 0.6)])
def test_asymptotic_oracle_has_the_linear_law_variance(n, scale):
    """Var of coordinate j: s^2 (g_j / 4 + E r^2 / 3) / g_j^2 with g = n (1, 1/3, 1/3),
    s^2 = 2 pi, r ~ Gamma(4, 1 / scale) (E r^2 = 20 / scale^2), U uniform in the cube.
    Control: the same formula without the KNG term is far off at n * scale = 150, so the
    check can tell whether V is in the draws."""
    draws = cells_mod.kng_asymptotic(n, LinfBall(3), scale, 200_000, np.random.default_rng(0))
    g = n * np.array([1.0, 1 / 3, 1 / 3])
    var_v = 20.0 / scale**2 / 3.0
    expected = 2 * np.pi * (g / 4 + var_v) / g**2
    np.testing.assert_allclose(draws.var(axis=0), expected, rtol=0.02)
    assert np.all(np.abs(draws.mean(axis=0) - cells_mod.KNG_BETA) < 4 * np.sqrt(expected / 2e5))
    if n * scale < 1000:
        assert np.all(draws.var(axis=0) > 1.5 * 2 * np.pi / (4 * g))
