"""The Examples sections of the workflow modules run and give what they show."""

import doctest
import importlib

import pytest

MODULES = [
    "dpreg._bounds",
    "dpreg.tools._quantile",
    "dpreg.tools._moments",
    "dpreg.tools._histogram",
    "dpreg.preprocessing._transformers",
    "dpreg.model_selection._search",
    "dpreg.inference",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
