"""Issue 10, items 8 ("what users see") and 9 (packaging and compatibility), one test each.

Each test failed on the code the issue was filed against and passes now. The examples and
docs snippets themselves are executed (with PrivacyLeakWarning as an error and their numbers
checked) by tests/test_examples.py and tests/test_docs_snippets.py; the tests here pin the
specific defects the issue reported.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpreg import BudgetAccountant, FunctionalLinearRegression, KNGQuantileRegressor
from dpreg.compare import Task, evaluate, format_results

ROOT = Path(__file__).resolve().parents[2]


def _requirement_floor(requirements, name):
    for req in requirements:
        match = re.fullmatch(rf"{re.escape(name)}(?:\[[^\]]*\])?>=([\d.]+)(?:,.*)?", req)
        if match:
            return tuple(int(p) for p in match.group(1).split("."))
    raise AssertionError(f"no floor declared for {name}")


# -- item 8 -------------------------------------------------------------------------------------


def test_quickstart_gives_bounds_for_y_and_no_privacy_warning():
    """The quickstart's median regression omitted bounds_y and said "only X needs bounds":
    it warned (PrivacyLeakWarning) and printed a slope of -0.134 against 0.604."""
    source = (ROOT / "examples" / "quickstart.py").read_text(encoding="utf-8")
    assert "only X needs bounds" not in source
    kng_call = source[source.index("KNGQuantileRegressor(") :].split(").fit", 1)[0]
    assert "bounds_y=" in kng_call and "bounds_X=" in kng_call


def test_engel_public_range_of_y_contains_the_true_slope():
    """Behind the quickstart's wrong slope: with y's range [0, 2500] the default parameter box
    excluded Engel's median slope (about 0.6 per franc over incomes up to 5000)."""
    from dpreg.datasets import load_engel
    from dpreg.demo import ENGEL_BOUNDS_X, ENGEL_BOUNDS_Y

    X, y, _ = load_engel()
    model = KNGQuantileRegressor(
        epsilon=1.0, bounds_X=ENGEL_BOUNDS_X, bounds_y=ENGEL_BOUNDS_Y, n_chains=1, n_sweeps=20
    ).fit(X, y)
    lower, upper = model.coef_bounds_
    half_width = (ENGEL_BOUNDS_X[1][0] - ENGEL_BOUNDS_X[0][0]) / 2
    # the slope of the scaled parameterisation is (slope per franc) * half_width, in units of y
    assert lower[1] < 0.604 * half_width < upper[1]


def test_compare_shows_warnings_of_private_fits():
    """``_fit_quietly`` ignored UserWarning, RuntimeWarning and ConvergenceWarning of private
    fits, so ``dpreg compare``/``demo`` never showed them."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (120, 2))
    y = X @ [1.0, -1.0] + 0.1 * rng.standard_normal(120)

    def unbounded(eps, seed):  # a private fit that warns: bounds read from the data
        return FunctionalLinearRegression(epsilon=eps, random_state=seed)

    task = Task("t", X, y, unbounded, {}, "r2", "FunctionalLinearRegression")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # evaluate must record, not raise or drop
        rows = evaluate([task], [1.0], cv=2, progress=False)
    text = format_results(rows, [task], cv=2)
    assert "PrivacyLeakWarning in 2 of 2 fits" in text


def test_readme_says_cross_validation_scores_are_not_private():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    assert "acc.spent" in quickstart
    assert "**The scores are not private.**" in quickstart


def test_docs_state_guarantee_is_for_finite_inputs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for text in (readme, index):
        assert "The guarantee is for finite inputs." in text
    # and it is true: NaN/inf raise a ValueError before anything is spent
    acc = BudgetAccountant(epsilon=5.0)
    X = np.ones((10, 2))
    X[3, 1] = np.nan
    for bad in (X, np.where(np.isnan(X), np.inf, X)):
        model = FunctionalLinearRegression(bounds_X=(0, 2), bounds_y=(0, 1), accountant=acc)
        with pytest.raises(ValueError):
            model.fit(bad, np.zeros(10))
    assert acc.spent == (0.0, 0.0)


# -- item 9 -------------------------------------------------------------------------------------


def test_declared_floors_install_together_and_ci_tests_them():
    """``scipy>=1.11`` cannot be installed with ``numpy>=2.0`` (scipy's numpy-2 wheels start
    at 1.13). The floors are the versions .ci/run installs into its second venv and tests."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    deps = project["dependencies"]
    assert _requirement_floor(deps, "numpy") >= (2, 0)
    assert _requirement_floor(deps, "scipy") >= (1, 13)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    pins = dict(re.findall(r"'([a-z-]+)==([\d.]+)\.?\*?'", ci))
    assert pins, "the floor run must pin the floor versions"
    for name, version in pins.items():
        floor = _requirement_floor(deps, name)
        assert tuple(int(p) for p in version.split(".")[: len(floor)]) == floor, name


def test_bounds_of_wrong_length_name_the_parameter_and_lengths():
    """Wrong-length bounds raised numpy's "operands could not be broadcast" error."""
    X, y = np.random.default_rng(0).random((30, 3)), np.random.default_rng(1).random(30)
    acc = BudgetAccountant(epsilon=5.0)
    cases = [
        (FunctionalLinearRegression, dict(bounds_X=([0, 0], [1, 1]), bounds_y=(0, 1)), "bounds_X"),
        (FunctionalLinearRegression, dict(bounds_X=(0, 1), bounds_y=([0, 0], 1)), "bounds_y"),
        (KNGQuantileRegressor, dict(bounds_X=(0, [1, 1, 1, 1]), bounds_y=(0, 1)), "bounds_X"),
    ]
    for cls, params, name in cases:
        with pytest.raises(ValueError, match=rf"^{name}\[[01]\] .*shape \(\d\,\).* length \d"):
            cls(accountant=acc, **params).fit(X, y)
    assert acc.spent == (0.0, 0.0)


def test_docs_home_and_readme_show_the_same_two_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert '--8<-- "README.md:two-commands"' in index  # included, not copied
    assert "pip install -e ." not in index
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "pymdownx.snippets" in mkdocs and "check_paths: true" in mkdocs
    assert "[start:two-commands]" in readme and "[end:two-commands]" in readme
