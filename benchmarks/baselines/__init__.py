"""Regression anchors re-implemented from their papers, for the real-data matrix.

Every anchor works in the same coordinates as :class:`dpreg.FunctionalLinearRegression`: each
feature is clipped into its public box and mapped affinely onto [-1, 1], a leading column of
ones carries the intercept, and the target is mapped onto [-1, 1] through its public bounds.
Adjacency is replace-one (n public) throughout, so every sensitivity below is the replace-one
one. The anchors return the scaled coefficients ``beta`` (intercept first); :class:`Box`
turns them into predictions in the user's units.

* :mod:`.adassp` -- AdaSSP (Wang 2018) and BoostedAdaSSP (Tang et al. 2024), Gaussian noise.
* :mod:`.tukeyem` -- the Tukey-depth exponential mechanism with propose-test-release
  (Amin, Joseph, Ribero and Vassilvitskii 2022).
* :mod:`.coinpress` -- CoinPress (Biswas et al. 2020), the multivariate-mean anchor of the
  median benchmarks.
* :mod:`.dpsgd`, :mod:`.output_perturbation` -- the logistic anchors of
  ``benchmarks.realdata_logistic`` (Abadi et al. 2016; Chaudhuri et al. 2011).
* :func:`ols` -- the non-private least-squares fit (raw data, no clipping).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Box:
    """Public bounds of the features and the target, and the affine map onto [-1, 1]."""

    lower: np.ndarray
    upper: np.ndarray
    y_lower: float
    y_upper: float

    @classmethod
    def from_bounds(cls, bounds_X, bounds_y, p):
        lo = np.broadcast_to(np.asarray(bounds_X[0], dtype=float), (p,)).copy()
        hi = np.broadcast_to(np.asarray(bounds_X[1], dtype=float), (p,)).copy()
        return cls(lo, hi, float(bounds_y[0]), float(bounds_y[1]))

    def design(self, X, clip=True):
        """``[1, z]`` with ``z = (x - mid) / half``; rows clipped into the box when ``clip``."""
        X = np.asarray(X, dtype=float)
        if clip:
            X = np.clip(X, self.lower, self.upper)
        mid, half = (self.upper + self.lower) / 2, (self.upper - self.lower) / 2
        Z = (X - mid) / np.where(half > 0, half, 1.0)
        return np.column_stack([np.ones(len(Z)), Z])

    def target(self, y):
        y = np.clip(np.asarray(y, dtype=float), self.y_lower, self.y_upper)
        return (y - (self.y_upper + self.y_lower) / 2) / ((self.y_upper - self.y_lower) / 2)

    def predict(self, beta, X):
        """Predictions in the user's units (the test rows are not clipped, as in dpreg)."""
        w = self.design(X, clip=False) @ np.asarray(beta, dtype=float)
        return (self.y_upper + self.y_lower) / 2 + w * (self.y_upper - self.y_lower) / 2


def ols(X, y):
    """Non-private least squares on the raw data: ``(intercept, coef)``."""
    Z = np.column_stack([np.ones(len(X)), np.asarray(X, dtype=float)])
    beta = np.linalg.lstsq(Z, np.asarray(y, dtype=float), rcond=None)[0]
    return beta[0], beta[1:]


__all__ = ["Box", "ols"]
