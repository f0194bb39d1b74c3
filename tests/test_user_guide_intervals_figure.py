"""The user guide's interval figure: its colour key, and that it redraws from the committed
coverage tables (``python docs/user_guide/make_figures.py intervals``)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "make_figures.py"


@pytest.fixture(scope="module")
def figures():
    spec = importlib.util.spec_from_file_location("make_figures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("coverage", "width", "verdict"),
    [
        ([0.95, 0.94, 0.96], [1.0, 1.1, 1.2], "in band, width within 1.3x"),
        ([0.95, 0.94, 0.96], [1.0, 1.4, 1.2], "in band, wider than 1.3x"),
        ([0.95, 0.975, 0.96], [1.0, 1.0, 1.0], "over-covers (> 0.97)"),
        ([0.95, 0.92, 0.99], [1.0, 1.0, 1.0], "under-covers (< 0.93)"),  # under wins
        ([np.nan, np.nan], [np.nan, np.nan], "refused before spending"),
    ],
)
def test_verdict(figures, coverage, width, verdict):
    assert figures.interval_verdict(np.array(coverage), np.array(width)) == verdict


def test_figure_redraws_from_the_committed_tables(figures, tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "IMG", tmp_path)
    figures.intervals_figure()
    assert (tmp_path / "intervals.png").stat().st_size > 10_000
