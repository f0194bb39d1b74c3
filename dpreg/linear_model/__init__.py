"""Differentially private linear models."""

from .functional import FunctionalLinearRegression
from .logistic import ObjectivePerturbationLogistic
from .op_quantile import ObjectivePerturbationQuantileRegressor
from .quantile import KNGQuantileRegressor

__all__ = [
    "FunctionalLinearRegression",
    "KNGQuantileRegressor",
    "ObjectivePerturbationLogistic",
    "ObjectivePerturbationQuantileRegressor",
]
