"""Private preprocessing: transformers whose ``fit`` is differentially private.

:class:`PrivateBounds`, :class:`PrivateMinMaxScaler` and :class:`PrivateStandardScaler` learn
their statistics under a stated ``epsilon`` (charged to an optional accountant) and clip their
output into a public range, so the next step of a pipeline can be given public bounds.
:func:`private_bounds` is the function behind them (e.g. for a target's bounds).
Derivations: ``docs/private_workflow.md``.
"""

from .._bounds import private_bounds
from ._transformers import PrivateBounds, PrivateMinMaxScaler, PrivateStandardScaler

__all__ = ["PrivateBounds", "PrivateMinMaxScaler", "PrivateStandardScaler", "private_bounds"]
