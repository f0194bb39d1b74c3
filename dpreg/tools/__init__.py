"""Small differentially private statistics with public bounds and an optional accountant.

The functions mirror ``diffprivlib.tools``: :func:`quantile`, :func:`median`, :func:`mean`,
:func:`var`, :func:`std`, :func:`histogram`. Each validates everything (finite values, bounds,
epsilon, accountant) first, then charges the accountant, then reads the data. The quantiles use
the exact intercept-only KNG sampler of :mod:`dpreg.kng` (one code path with
:class:`~dpreg.KNGQuantileRegressor`). Derivations: ``docs/private_statistics.md``.
"""

from ._histogram import histogram
from ._moments import mean, std, var
from ._quantile import median, quantile

__all__ = ["histogram", "mean", "median", "quantile", "std", "var"]
