"""The cap of the automatic bounds share (``dpreg._bounds.auto_share_cap``, issue #13 item 1).

Raw diabetes at total epsilon 4 (331 training rows, 11 private columns) is the benchmark
cell where the two draws of every column need a little more than half of epsilon to be
reliable (32 budget-ranks each: 2.13 of 4); the cap gives them that share (0.532) instead
of 0.5. Everywhere else the old cap stays.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

import dpreg._bounds as B
from dpreg import BudgetAccountant, FunctionalLinearRegression
from dpreg.demo import DIABETES_BOUNDS_X, DIABETES_BOUNDS_Y


def test_cap_has_three_regimes():
    # below: reliable draws need at most half -> the old cap
    assert B.auto_share_cap(8.0, 331, 11) == B.AUTO_MAX_SHARE
    assert B.auto_share_cap(1.0, 21116, 10) == B.AUTO_MAX_SHARE
    # a little more than half makes every draw reliable -> exactly that
    need = B.RELIABLE_RANKS * 2 * 11 / 331
    assert B.auto_share_cap(4.0, 331, 11) == pytest.approx(need / 4.0)
    assert B.AUTO_MAX_SHARE < need / 4.0 <= B.AUTO_SHARE_LIMIT
    # more than the limit would be needed -> no share within it helps: the old cap
    assert B.auto_share_cap(1.0, 331, 11) == B.AUTO_MAX_SHARE  # raw diabetes, eps = 1
    assert B.auto_share_cap(2.0, 331, 11) == B.AUTO_MAX_SHARE
    assert B.auto_share_cap(1.0, 426, 10) == B.AUTO_MAX_SHARE  # breast cancer, eps = 1
    assert B.auto_share_cap(1.0, 176, 2) == B.AUTO_MAX_SHARE  # Engel, eps = 1
    # the boundary of the middle regime is included
    eps_edge = B.RELIABLE_RANKS * 2 * 11 / (331 * B.AUTO_SHARE_LIMIT)
    assert B.auto_share_cap(eps_edge * (1 + 1e-12), 331, 11) == pytest.approx(B.AUTO_SHARE_LIMIT)
    assert B.auto_share_cap(eps_edge * (1 - 1e-9), 331, 11) == B.AUTO_MAX_SHARE


def test_auto_share_stays_in_its_public_range_and_the_split_adds_up():
    rng = np.random.default_rng(0)
    for _ in range(3000):
        eps = float(10 ** rng.uniform(-2, 1.5))
        n = int(10 ** rng.uniform(0, 6))
        units = int(rng.integers(1, 40))
        eps_b = B.bounds_epsilon("auto", eps, n, units)
        # the logistic model plans its smallest model budget with AUTO_SHARE_LIMIT
        assert B.AUTO_MIN_SHARE * eps * (1 - 1e-12) <= eps_b <= B.AUTO_SHARE_LIMIT * eps
        b, m = B.split_budget("auto", eps, n, units)
        assert b == eps_b and m > 0 and b + m <= eps


def test_fit_bounds_spends_the_capped_share_on_raw_diabetes():
    X, y = load_diabetes(return_X_y=True, scaled=False)
    Xtr, ytr = X[:331], y[:331]
    (bx, by), left = B.fit_bounds(
        [Xtr, ytr[:, None]], ["private", "private"], 4.0, "auto",
        np.random.default_rng(0), ("bounds_X", "bounds_y"),
    )  # fmt: skip
    assert left == pytest.approx(4.0 * (1 - B.RELIABLE_RANKS * 22 / (331 * 4.0)))
    assert np.all(bx[1] > bx[0]) and np.all(by[1] > by[0])


def _median_scores(eps, share, splits):
    X, y = load_diabetes(return_X_y=True, scaled=False)
    est = FunctionalLinearRegression()
    pub, prv = [], []
    acc = BudgetAccountant()  # an own ledger: the process-global one slows spends
    for rep in splits:
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=rep)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = clone(est).set_params(
                epsilon=eps, random_state=rep, bounds_X=DIABETES_BOUNDS_X,
                bounds_y=DIABETES_BOUNDS_Y, accountant=acc,
            ).fit(Xtr, ytr)  # fmt: skip
            pub.append(fit.score(Xte, yte))
            fit = clone(est).set_params(
                epsilon=eps, random_state=rep, bounds_X="private", bounds_y="private",
                bounds_share=share, accountant=acc,
            ).fit(Xtr, ytr)  # fmt: skip
            prv.append(fit.score(Xte, yte))
    assert acc.spent[0] == pytest.approx(2 * eps * len(splits))  # each fit spends eps
    return float(np.median(pub)), float(np.median(prv))


@pytest.mark.slow
def test_raw_diabetes_eps4_meets_the_target_on_the_benchmark_splits():
    """The benchmark's cell (its first 100 splits): the capped share reaches 0.9 of the
    public-bounds R^2; the old cap of 0.5 did not (0.264 / 0.296 = 0.89)."""
    pub, prv = _median_scores(4.0, "auto", range(100))
    assert prv >= 0.9 * pub, (prv, pub)


@pytest.mark.slow
def test_raw_diabetes_eps4_cap_meets_public_over_500_splits():
    """500 splits. When the cap was added: public 0.288; private 0.281 at the cap, 0.265 at
    0.5, so the cap beat 0.5. With the later private-bounds changes (the response's two draws
    and the coarse stage, docs/private_workflow.md) both beat the public bounds and the cap's
    edge is gone (session 20: 0.332 at the cap, 0.336 at 0.5, public 0.288); the test now holds
    what is true: the capped share reaches the public bounds' R^2 and costs at most 0.02."""
    pub, capped = _median_scores(4.0, "auto", range(500))
    _, half = _median_scores(4.0, 0.5, range(500))
    assert capped >= 0.95 * pub and capped >= half - 0.02, (capped, half, pub)
