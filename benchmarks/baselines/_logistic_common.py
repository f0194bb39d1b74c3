"""Shared pieces of the logistic anchors: the public-box design and the logistic gradient.

Every anchor works in the coordinates of :class:`dpreg.ObjectivePerturbationLogistic`: each
feature is clipped into its public box and mapped affinely onto [-1, 1], and a leading column
of ones carries the intercept, so a design row ``z`` has ``|z|_2 <= sqrt(m)`` (m = p + 1).
Labels are 0/1. Adjacency is replace-one (n public).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit


def design(X, lower, upper, clip=True):
    """``[1, z]`` with ``z = (x - mid) / half``; rows clipped into the box when ``clip``."""
    X = np.asarray(X, dtype=float)
    lower = np.broadcast_to(np.asarray(lower, dtype=float), X.shape[1:])
    upper = np.broadcast_to(np.asarray(upper, dtype=float), X.shape[1:])
    if clip:
        X = np.clip(X, lower, upper)
    mid, half = (upper + lower) / 2.0, (upper - lower) / 2.0
    Z = (X - mid) / np.where(half > 0, half, 1.0)
    return np.column_stack([np.ones(len(Z)), Z])


def per_example_gradients(theta, Z, y):
    """Rows ``(sigmoid(theta.z) - y) z`` of the mean logistic loss's summands."""
    return (expit(Z @ theta) - y)[:, None] * Z


def accuracy(theta, Z, y):
    """Share of rows whose sign of ``theta.z`` matches the 0/1 label."""
    return float(np.mean((Z @ theta > 0) == (y == 1)))
