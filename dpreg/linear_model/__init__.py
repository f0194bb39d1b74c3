"""Differentially private linear models."""

from .functional import FunctionalLinearRegression
from .logistic import ObjectivePerturbationLogistic
from .quantile import KNGQuantileRegressor

__all__ = ["FunctionalLinearRegression", "KNGQuantileRegressor", "ObjectivePerturbationLogistic"]
