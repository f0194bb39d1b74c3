"""Private model selection: :class:`PrivateSearchCV` prices the whole search in epsilon.

Derivation: ``docs/model_selection.md``.
"""

from ._search import PrivateSearchCV, privacy_params

__all__ = ["PrivateSearchCV", "privacy_params"]
