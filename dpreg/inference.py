"""How much of a total budget to give the release that an estimator's intervals need.

Three of the four estimators with confidence intervals need one small extra private release
(the logistic Hessian, the quantile regression's curvature, the median's scales); the
functional linear regression needs a Laplace ``yᵀy`` that its own ``inference_share`` pays
for. Every coverage and width that ``docs/inference.md`` reports was measured with the
shares returned here (``python -m benchmarks.inference``), so a user who wants those numbers
to describe their fit splits a total ``epsilon`` the same way:

>>> from dpreg import KNGQuantileRegressor
>>> from dpreg.inference import interval_share
>>> share = interval_share(KNGQuantileRegressor, n=10_000, epsilon=1.0)
>>> share  # fit with (1 - share) * epsilon, release_curvature with share * epsilon
0.4

**Privacy.** The share is a function of the estimator's type and the public ``n`` and
``epsilon`` only (under replace-one adjacency the number of rows is public), so choosing a
split reads no data and spends nothing; the two releases then compose to the total
``epsilon`` by basic composition (each estimator's ``release_*`` method states its own
guarantee).
"""

from __future__ import annotations

import numbers

from ._validation import check_epsilon
from .linear_model import (
    FunctionalLinearRegression,
    KNGQuantileRegressor,
    ObjectivePerturbationLogistic,
)
from .linear_model._inference_logistic import hessian_share
from .location import PrivateProjectionMedian

#: ``FunctionalLinearRegression(inference_share=...)``: the Laplace ``yᵀy`` that its
#: intervals use. 0.1 in every measured cell (docs/inference.md, "Measured").
FUNCTIONAL_SHARE = 0.1
#: ``KNGQuantileRegressor.release_curvature``: the Gram matrix (0.7 of it) and one residual
#: quantile for the sparsity (0.3). 0.4 against 0.2 at n = 1e3, epsilon = 1 gave width
#: ratios 1.11-1.53 against 3.7-6.0 (docs/inference.md, "Where the width comes from").
KNG_CURVATURE_SHARE = 0.4
#: ``PrivateProjectionMedian.release_scale``: the median pair (and, with a data-derived
#: scale, the quartiles) of every coordinate.
MEDIAN_SCALE_SHARE = 0.1


def interval_share(estimator, n, epsilon):
    """The share of a total ``epsilon`` that the benchmark gave the intervals' release.

    Parameters
    ----------
    estimator : estimator instance or class
        ``FunctionalLinearRegression``, ``ObjectivePerturbationLogistic``,
        ``KNGQuantileRegressor`` or ``PrivateProjectionMedian``.
    n : int
        Number of rows (public under replace-one adjacency).
    epsilon : float
        The total budget of the fit and its interval release together.

    Returns
    -------
    share : float in (0, 1)
        For ``FunctionalLinearRegression`` pass it as ``inference_share`` with the total
        ``epsilon``; for the others fit with ``(1 - share) * epsilon`` and give
        ``share * epsilon`` to ``release_hessian`` / ``release_curvature`` /
        ``release_scale``.

        * logistic: ``sqrt(40 / (n epsilon))`` clipped to [0.1, 0.2]
          (:func:`dpreg.linear_model._inference_logistic.hessian_share`, derived there);
        * KNG quantile regression: :data:`KNG_CURVATURE_SHARE`;
        * functional linear regression: :data:`FUNCTIONAL_SHARE`;
        * projection median: :data:`MEDIAN_SCALE_SHARE`.

    Raises
    ------
    TypeError
        For an estimator without private intervals (e.g.
        ``ObjectivePerturbationQuantileRegressor``).
    ValueError
        For ``n < 1`` or an invalid ``epsilon``.

    Examples
    --------
    >>> from dpreg import ObjectivePerturbationLogistic
    >>> from dpreg.inference import interval_share
    >>> interval_share(ObjectivePerturbationLogistic, n=1_000, epsilon=0.25)
    0.2
    >>> interval_share(ObjectivePerturbationLogistic(), n=100_000, epsilon=1.0)
    0.1
    """
    kind = estimator if isinstance(estimator, type) else type(estimator)
    epsilon = check_epsilon(epsilon)
    if isinstance(n, bool) or not isinstance(n, numbers.Real) or not float(n).is_integer() or n < 1:
        raise ValueError(f"n must be a positive integer; got {n!r}.")
    if issubclass(kind, ObjectivePerturbationLogistic):
        return hessian_share(int(n), epsilon)
    if issubclass(kind, KNGQuantileRegressor):
        return KNG_CURVATURE_SHARE
    if issubclass(kind, FunctionalLinearRegression):
        return FUNCTIONAL_SHARE
    if issubclass(kind, PrivateProjectionMedian):
        return MEDIAN_SCALE_SHARE
    raise TypeError(
        f"{kind.__name__} has no private confidence intervals; those of "
        "FunctionalLinearRegression, ObjectivePerturbationLogistic, KNGQuantileRegressor and "
        "PrivateProjectionMedian do."
    )
