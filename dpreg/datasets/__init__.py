"""Small public data sets that ship with dpreg (so the demo runs offline).

* :func:`load_engel` -- Engel's food expenditure data (235 Belgian working-class households,
  1857): household income and food expenditure, both in Belgian francs. It is the classic
  quantile-regression example of Koenker and Bassett (1982); public domain, as distributed with
  R's ``quantreg`` and ``statsmodels.datasets.engel``.
"""

from __future__ import annotations

import csv
import io
from importlib import resources

import numpy as np

__all__ = ["load_engel"]


def load_engel():
    """Return Engel's data as ``(X, y, feature_names)``.

    ``X`` has one column (``income``), ``y`` is ``foodexp``; both are float arrays.

    Examples
    --------
    >>> from dpreg.datasets import load_engel
    >>> X, y, names = load_engel()
    >>> X.shape, y.shape, names
    ((235, 1), (235,), ['income'])
    """
    text = resources.files(__name__).joinpath("engel.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], np.array(rows[1:], dtype=float)
    return body[:, [0]], body[:, 1], [header[0]]
