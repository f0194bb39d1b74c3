"""Finite values above 2^1023 times the grid release normally (audit s22, F2).

The exact release computes the integer N of the output cell and returns N * g. For
``|value| > 2^1023 g`` (about 1e301 at scale 1) ``float(N)`` raised OverflowError: an
exception that depended on the private value and came after the random words were drawn.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from dpreg.noise import (
    FlippedHuberMechanism,
    GaussianMechanism,
    KNormMechanism,
    LaplaceMechanism,
)
from dpreg.noise._exact import _grid_values

MAKERS = {
    "laplace": lambda: LaplaceMechanism(1.0, 1.0, random_state=0),
    "gaussian": lambda: GaussianMechanism(1.0, 1e-6, 1.0, random_state=0),
    "flipped_huber": lambda: FlippedHuberMechanism(1.0, 1e-6, 1.0, random_state=0),
    "knorm_l1": lambda: KNormMechanism("l1", 3, 1.0, 1.0, random_state=0),
    "knorm_l2": lambda: KNormMechanism("l2", 3, 1.0, 1.0, random_state=0),
    "knorm_linf": lambda: KNormMechanism("linf", 3, 1.0, 1.0, random_state=0),
    "knorm_l3": lambda: KNormMechanism(3, 3, 1.0, 1.0, random_state=0),
}


@pytest.mark.parametrize("kind", sorted(MAKERS))
@pytest.mark.parametrize("v", [1e302, -1e302, 1.7e308])
def test_huge_finite_values_release(kind, v):
    mech = MAKERS[kind]()
    dim = getattr(mech, "dim", 1)
    value = np.array([v, 0.5, -2.0])[:dim] if dim > 1 else v
    out = np.atleast_1d(mech.randomise(value))
    # noise of scale ~1 is far below an ulp of v (2^955 at 1e302)
    assert out[0] == v
    assert np.all(np.isfinite(out))


def test_grid_values_round_correctly_and_overflow_to_inf():
    g = 2.0**-24
    n = 2**1030 + 1  # float(n) overflows, n * g (about 2^1006) does not
    exact = float(Fraction(n) * Fraction(g))
    assert _grid_values([n, -n], g).tolist() == [exact, -exact]
    assert _grid_values([2**1100, -(2**1100)], 1.0).tolist() == [math.inf, -math.inf]
    assert _grid_values([3, -5, 0], 0.25).tolist() == [0.75, -1.25, 0.0]
