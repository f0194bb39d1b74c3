"""FunctionalLinearRegression (work in progress: see issue 3)."""

from sklearn.base import BaseEstimator


class FunctionalLinearRegression(BaseEstimator):
    def fit(self, X, y=None):
        raise NotImplementedError("FunctionalLinearRegression is being implemented (issue 3).")
