"""ObjectivePerturbationLogistic (work in progress: see issue 4)."""

from sklearn.base import BaseEstimator


class ObjectivePerturbationLogistic(BaseEstimator):
    def fit(self, X, y=None):
        raise NotImplementedError("ObjectivePerturbationLogistic is being implemented (issue 4).")
