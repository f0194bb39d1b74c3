"""Issue 10, item 1: the budget ledger across processes.

Each test fails on the pre-ledger code (a per-process Python list, checked before and spent
after the fit) and passes with the shared SQLite ledger. Worker processes are joblib/loky
workers, which import dpreg from ``PYTHONPATH``: the fixture makes them import this tree.
"""

import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from joblib import Parallel, delayed
from joblib.externals.loky import get_reusable_executor
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate

import dpreg
from dpreg import BudgetAccountant, FunctionalLinearRegression, PrivateProjectionMedian
from dpreg.exceptions import BudgetExceededError

ROOT = Path(dpreg.__file__).resolve().parents[1]


@pytest.fixture
def workers_import_this_tree(monkeypatch):
    """Make loky workers import the dpreg under test (restart them if they were not)."""
    path = os.environ.get("PYTHONPATH", "")
    if str(ROOT) not in path.split(os.pathsep):
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), path])))
        get_reusable_executor(kill_workers=True).shutdown(wait=True)
    files = Parallel(n_jobs=2, backend="loky")(
        delayed(lambda: __import__("dpreg").__file__)() for _ in range(4)
    )
    assert {Path(f).resolve().parents[1] for f in files} == {ROOT}


def _readme_model(acc):
    return FunctionalLinearRegression(
        epsilon=2.0, bounds_X=(-0.2, 0.2), bounds_y=(25, 350), random_state=0, accountant=acc
    )


def test_item1_readme_pattern_with_n_jobs_counts_every_fit(workers_import_this_tree):
    X, y = load_diabetes(return_X_y=True)
    acc = BudgetAccountant(epsilon=10.0)
    cross_val_score(_readme_model(acc), X, y, cv=5, n_jobs=2)
    assert acc.spent == (10.0, 0.0) and len(acc) == 5  # old code: (0.0, 0.0)

    # the budget of 3: one fit of 2 fits, the other four are refused in the workers
    acc = BudgetAccountant(epsilon=3.0)
    with pytest.raises(BudgetExceededError, match='error_score="raise"'):
        cross_val_score(_readme_model(acc), X, y, cv=5, n_jobs=2, error_score="raise")
    assert acc.spent[0] <= 3.0 and len(acc) == 1


def test_item1_grid_search_n_jobs_counts_every_fit(workers_import_this_tree):
    X, y = load_diabetes(return_X_y=True)
    acc = BudgetAccountant(epsilon=100.0)
    gs = GridSearchCV(_readme_model(acc), {"epsilon": [1.0, 2.0]}, cv=3, n_jobs=2)
    gs.fit(X, y)
    # 3 folds x (1 + 2) in the workers + the refit in this process (old code: the refit only)
    assert acc.spent[0] == pytest.approx(9.0 + gs.best_params_["epsilon"])
    assert len(acc) == 7


def test_item1_pickled_estimator_shares_the_ledger():
    X, y = load_diabetes(return_X_y=True)
    acc = BudgetAccountant(epsilon=3.0)
    copy = pickle.loads(pickle.dumps(_readme_model(acc)))  # old code: a fresh budget of 3
    copy.fit(X, y)
    with pytest.raises(BudgetExceededError):
        clone(_readme_model(acc)).fit(X, y)
    assert acc.spent == (2.0, 0.0)


def test_item1_default_accountant_delta_message():
    X = np.random.default_rng(0).standard_normal((50, 2))
    with pytest.raises(BudgetExceededError) as info:
        PrivateProjectionMedian(epsilon=1.0, accountant=BudgetAccountant()).fit(X)
    text = str(info.value)
    assert "needs delta > 0" in text and "BudgetAccountant(epsilon=..., delta=...)" in text
    assert 'error_score="raise"' in text


def test_item1_failed_workers_fits_are_still_refused_without_raise(workers_import_this_tree):
    """With the default error_score=nan the refused fits become NaN scores, never extra spends."""
    X, y = load_diabetes(return_X_y=True)
    acc = BudgetAccountant(epsilon=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = cross_val_score(_readme_model(acc), X, y, cv=5, n_jobs=2)
    assert np.isnan(scores).sum() == 4 and acc.spent == (2.0, 0.0)


def test_item1_cross_validate_and_with_block_default_reach_workers(workers_import_this_tree):
    """Estimators without an accountant charge the ``with`` block's ledger from workers too."""
    X, y = load_diabetes(return_X_y=True)
    model = _readme_model(None).set_params(epsilon=0.5)
    with BudgetAccountant(epsilon=10.0) as acc:
        cross_val_score(model, X, y, cv=4, n_jobs=2)
        cross_validate(clone(model), X, y, cv=4, n_jobs=2)
    assert acc.spent == (4.0, 0.0) and len(acc) == 8
    explicit = BudgetAccountant(epsilon=10.0)
    cross_validate(_readme_model(explicit), X, y, cv=4, n_jobs=2)
    assert explicit.spent == (8.0, 0.0) and len(explicit) == 4


_NOTEBOOK = """
import os, warnings
from joblib import Parallel, delayed
Parallel(n_jobs=2)(delayed(os.getpid)() for _ in range(2))  # loky workers start before dpreg
from sklearn.datasets import load_diabetes
from sklearn.model_selection import cross_val_score
from dpreg import BudgetAccountant, FunctionalLinearRegression
X, y = load_diabetes(return_X_y=True)
m = FunctionalLinearRegression(epsilon=2.0, bounds_X=(-0.2, 0.2), bounds_y=(25, 350))
cross_val_score(m, X, y, cv=2, n_jobs=2)  # the workers import dpreg before any with block
warnings.simplefilter("ignore")
with BudgetAccountant(epsilon=3.0) as acc:
    scores = cross_val_score(m, X, y, cv=5, n_jobs=2)
print(int(sum(s != s for s in scores)), *acc.spent)
"""


def test_item1_with_block_reaches_workers_started_before_it():
    """A notebook whose loky workers predate dpreg's import and the ``with`` block: no fork."""
    env = {k: v for k, v in os.environ.items() if k != "DPREG_ACCOUNTING_SESSION"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    out = subprocess.run(
        [sys.executable, "-c", _NOTEBOOK], env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["4", "2.0", "0.0"]  # one fit admitted, four refused
