"""KNGQuantileRegressor (work in progress: see issue 5)."""

from sklearn.base import BaseEstimator


class KNGQuantileRegressor(BaseEstimator):
    def fit(self, X, y=None):
        raise NotImplementedError("KNGQuantileRegressor is being implemented (issue 5).")
