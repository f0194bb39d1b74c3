"""The noise backend: norm balls, K-norm, Laplace, analytic Gaussian and flipped Huber noise.

Every mechanism here states its privacy guarantee and proof sketch in its module docstring.
Estimators draw all their noise from this package and never re-implement a sampler.
"""

from .balls import Ball, L1Ball, L2Ball, LinfBall, LpBall, make_ball
from .choose import choose_norm, log_scaled_volume
from .classic import GaussianMechanism, LaplaceMechanism, analytic_gaussian_sigma
from .huber import FlippedHuber, FlippedHuberMechanism
from .knorm import KNormMechanism
from .linf_coordinate import LinfKNormCoordinate
from .polytope import ConvexBody, PolytopeBall

__all__ = [
    "Ball",
    "ConvexBody",
    "FlippedHuber",
    "FlippedHuberMechanism",
    "GaussianMechanism",
    "KNormMechanism",
    "L1Ball",
    "L2Ball",
    "LaplaceMechanism",
    "LinfBall",
    "LinfKNormCoordinate",
    "LpBall",
    "PolytopeBall",
    "analytic_gaussian_sigma",
    "choose_norm",
    "log_scaled_volume",
    "make_ball",
]
