"""Differentially private location estimators."""

from .projection_median import PrivateProjectionMedian

__all__ = ["PrivateProjectionMedian"]
