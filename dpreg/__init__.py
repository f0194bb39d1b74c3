"""dpreg: differentially private regression and location estimators for scikit-learn.

>>> from dpreg import FunctionalLinearRegression, BudgetAccountant
"""

from .accounting import BudgetAccountant
from .linear_model import (
    FunctionalLinearRegression,
    KNGQuantileRegressor,
    ObjectivePerturbationLogistic,
    ObjectivePerturbationQuantileRegressor,
)
from .location import PrivateProjectionMedian

__version__ = "0.1.0"

__all__ = [
    "BudgetAccountant",
    "FunctionalLinearRegression",
    "KNGQuantileRegressor",
    "ObjectivePerturbationLogistic",
    "ObjectivePerturbationQuantileRegressor",
    "PrivateProjectionMedian",
    "__version__",
]
