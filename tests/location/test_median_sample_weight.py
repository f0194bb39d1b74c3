"""PrivateProjectionMedian refuses sample_weight with a clear error, before any spend."""

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpreg import BudgetAccountant, PrivateProjectionMedian


def test_sample_weight_is_refused_before_spending():
    X = np.random.default_rng(0).normal(size=(200, 2))
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = PrivateProjectionMedian(epsilon=1.0, delta=1e-5, accountant=acc)
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(X, sample_weight=np.ones(200))
    pipe = make_pipeline(FunctionTransformer(), est)
    with pytest.raises(ValueError, match="unweighted"):
        pipe.fit(X, privateprojectionmedian__sample_weight=np.ones(200))
    with pytest.raises(TypeError, match="unexpected"):
        est.fit(X, weights=np.ones(200))
    assert acc.ledger == []
