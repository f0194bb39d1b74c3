"""The adaptive ridge's eigenvalue step runs after the spend: it must never raise."""

from unittest import mock

import numpy as np
from scipy import linalg

from dpreg.linear_model._ridge import _smallest_eigenvalue


def test_smallest_eigenvalue_matches_lapack_and_never_raises():
    a = np.random.default_rng(0).normal(size=(60, 6))
    gram = a.T @ a
    assert _smallest_eigenvalue(gram) == np.linalg.eigvalsh(gram)[0]
    calls = []

    def fail_first(*args, **kwargs):  # the default driver fails, bisection answers
        calls.append(kwargs.get("driver"))
        if len(calls) == 1:
            raise linalg.LinAlgError("did not converge")
        return np.linalg.eigvalsh(gram)[:1]

    with mock.patch.object(linalg, "eigh", side_effect=fail_first):
        assert _smallest_eigenvalue(gram) == np.linalg.eigvalsh(gram)[0]
    assert calls == ["evd", "evx"]
    with mock.patch.object(linalg, "eigh", side_effect=linalg.LinAlgError("x")):
        assert _smallest_eigenvalue(gram) == 0.0  # conservative public fallback, no raise
