"""PrivateProjectionMedian (work in progress: see issue 6)."""

from sklearn.base import BaseEstimator


class PrivateProjectionMedian(BaseEstimator):
    def fit(self, X, y=None):
        raise NotImplementedError("PrivateProjectionMedian is being implemented (issue 6).")
