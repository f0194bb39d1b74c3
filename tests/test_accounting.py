"""BudgetAccountant: composition, the SQLite ledger shared across processes, defaults."""

import copy
import gc
import math
import os
import pickle
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, clone

import dpreg
from dpreg import BudgetAccountant
from dpreg.accounting import check_accountant
from dpreg.exceptions import BudgetExceededError, BudgetStoreError


def advanced_eps(eps_list, slack):
    """Kairouz-Oh-Viswanath heterogeneous bound, written out independently."""
    sq = sum(e * e for e in eps_list)
    drift = sum(e * (math.exp(e) - 1) / (math.exp(e) + 1) for e in eps_list)
    return math.sqrt(2 * math.log(1 / slack) * sq) + drift


def test_basic_composition():
    acc = BudgetAccountant(epsilon=2.0, delta=1e-5)
    acc.spend(0.5, 1e-6)
    acc.spend(0.25)
    acc.spend(1.0, 2e-6)
    assert acc.spent == pytest.approx((1.75, 3e-6))
    assert acc.remaining() == pytest.approx((0.25, 7e-6))
    assert len(acc) == 3 and acc.ledger == [(0.5, 1e-6), (0.25, 0.0), (1.0, 2e-6)]
    with pytest.raises(BudgetExceededError, match="exceed"):
        acc.spend(0.3)
    assert len(acc) == 3  # a refused spend is not recorded
    acc.spend(0.25)  # exactly the remainder is allowed
    assert acc.remaining()[0] == pytest.approx(0.0)


def test_delta_budget_is_enforced():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-6)
    with pytest.raises(BudgetExceededError):
        acc.check(0.1, 2e-6)
    assert acc.check(0.1, 1e-6) is True


def test_advanced_composition_numbers():
    slack = 1e-6
    # 100 spends of 0.01: advanced (0.5307...) beats basic (1.0)
    spends = [(0.01, 0.0)] * 100
    eps, delta = BudgetAccountant.compose(spends, slack=slack)
    assert eps == pytest.approx(advanced_eps([0.01] * 100, slack), rel=1e-12)
    assert eps == pytest.approx(0.5307, abs=1e-4)
    assert delta == pytest.approx(slack)
    # 10 spends of 0.1: advanced (1.71) is worse, so basic (1.0) is reported with delta 0
    eps, delta = BudgetAccountant.compose([(0.1, 0.0)] * 10, slack=slack)
    assert eps == pytest.approx(1.0) and delta == 0.0
    assert advanced_eps([0.1] * 10, slack) == pytest.approx(1.7122, abs=1e-4)
    # heterogeneous spends with deltas: the deltas add up, plus the slack
    spends = [(0.01, 1e-8)] * 50 + [(0.02, 0.0)] * 50
    eps, delta = BudgetAccountant.compose(spends, slack=slack)
    assert eps == pytest.approx(advanced_eps([0.01] * 50 + [0.02] * 50, slack))
    assert delta == pytest.approx(50e-8 + slack)
    assert BudgetAccountant.compose([]) == (0.0, 0.0)


def test_a_spend_that_basic_composition_admits_is_not_refused_for_the_slack():
    """Session-21 audit, finding 8: advanced composition pays its slack in delta, so with a
    small delta budget the basic total can fit where the advanced one does not; either
    theorem's total proves the guarantee, so the spend is admitted and ``spent`` reports the
    total that fits (the smaller epsilon when both fit)."""
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5, slack=1e-5)
    for _ in range(50):
        acc.spend(0.1)
    eps, delta = acc.spent  # advanced fits (delta = slack) and has the smaller epsilon
    assert eps == pytest.approx(advanced_eps([0.1] * 50, 1e-5)) and eps < 4.0
    assert delta == pytest.approx(1e-5)
    acc.spend(0.1, 1e-9)  # advanced: delta 1e-5 + 1e-9 > 1e-5; basic: (5.1, 1e-9) fits
    assert acc.spent == pytest.approx((5.1, 1e-9), rel=1e-12)
    assert acc.remaining() == pytest.approx((4.9, 1e-5 - 1e-9), rel=1e-12)
    # the control: without the budget, the smaller epsilon (advanced, over the delta) is given
    eps_free, delta_free = BudgetAccountant.compose(acc.ledger, slack=1e-5)
    assert eps_free < 5.1 and delta_free > 1e-5
    with pytest.raises(BudgetExceededError):  # neither fits: epsilon 10.1 and delta too big
        acc.spend(5.0, 1e-5)
    assert len(acc.ledger) == 51


def test_accountant_with_slack_allows_more_spends():
    basic = BudgetAccountant(epsilon=0.6, delta=1e-5)
    adv = BudgetAccountant(epsilon=0.6, delta=1e-5, slack=1e-6)
    n_basic = n_adv = 0
    while n_basic < 1000:
        try:
            basic.spend(0.01)
            n_basic += 1
        except BudgetExceededError:
            break
    while n_adv < 1000:
        try:
            adv.spend(0.01)
            n_adv += 1
        except BudgetExceededError:
            break
    assert n_basic == 60
    assert n_adv > 100
    assert adv.spent[0] <= 0.6 + 1e-12 and adv.spent[1] == pytest.approx(1e-6)


class _TinyPrivateEstimator(BaseEstimator):
    def __init__(self, epsilon=1.0, accountant=None):
        self.epsilon = epsilon
        self.accountant = accountant

    def fit(self, X, y=None):
        acc = check_accountant(self.accountant)
        if acc is not None:
            acc.check(self.epsilon, 0.0)  # before touching the data
        self.mean_ = float(np.mean(X))
        if acc is not None:
            acc.spend(self.epsilon, 0.0)
        return self


def test_ledger_is_shared_through_clone():
    acc = BudgetAccountant(epsilon=1.0)
    est = _TinyPrivateEstimator(epsilon=0.4, accountant=acc)
    c1, c2 = clone(est), clone(clone(est))
    assert c1.accountant is acc and c2.accountant is acc
    c1.fit(np.ones(3))
    c2.fit(np.ones(3))
    assert acc.spent[0] == pytest.approx(0.8)
    with pytest.raises(BudgetExceededError):
        clone(est).fit(np.ones(3))
    assert acc.spent[0] == pytest.approx(0.8)


def test_validation_of_accountant_and_spends():
    with pytest.raises(ValueError, match="accountant"):
        check_accountant("budget")
    assert check_accountant(None) == BudgetAccountant.default()  # the same ledger
    with pytest.raises(ValueError, match="epsilon"):
        BudgetAccountant(epsilon=-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        BudgetAccountant(epsilon=float("nan"))
    with pytest.raises(ValueError, match="delta"):
        BudgetAccountant(epsilon=1.0, delta=1.5)
    with pytest.raises(ValueError, match="slack"):
        BudgetAccountant(epsilon=1.0, delta=1e-6, slack=1e-5)
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match="non-negative"):
        acc.spend(-0.1)
    assert "BudgetAccountant" in repr(acc)


def test_nan_spend_is_rejected():
    """A NaN spend must not be recorded: NaN comparisons are False, which would disable checks."""
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError):
        acc.spend(float("nan"))
    acc.spend(0.5)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.6)


# ---------------------------------------------------------------------------------------------
# The shared store: processes, persistence, locks, corruption
# ---------------------------------------------------------------------------------------------

ROOT = Path(dpreg.__file__).resolve().parents[1]


def _env():
    path = os.environ.get("PYTHONPATH", "")
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), path])))


def _python(code, *args):
    """Run ``code`` in a fresh interpreter that imports the dpreg under test; return stdout."""
    out = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


_RACER = """
import os, pickle, sys, time
from pathlib import Path
from dpreg.exceptions import BudgetExceededError
acc = pickle.loads(bytes.fromhex(sys.argv[1]))
go, n, eps = Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
Path(sys.argv[5]).touch()  # ready
while not go.exists():
    time.sleep(0.002)
ok = 0
for _ in range(n):
    try:
        acc.spend(eps)
        ok += 1
    except BudgetExceededError:
        pass
print(os.getpid(), ok)
"""


def _race(tmp_path, n_procs, n_spends):
    """``n_procs`` processes race ``n_spends`` spends each on a budget with room for 64."""
    acc = BudgetAccountant(epsilon=10.0)
    acc.spend(9.0)  # nearly exhausted: 1.0 = 64 spends of 2**-6 are left (exact in binary)
    eps = 2.0**-6
    go = tmp_path / "go"
    state = pickle.dumps(acc).hex()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, state, go, str(n_spends), str(eps), tmp_path / f"r{i}"],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n_procs)
    ]
    deadline = time.monotonic() + 300
    while not all((tmp_path / f"r{i}").exists() for i in range(n_procs)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    go.touch()
    reported = {}
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        pid, ok = map(int, out.split())
        reported[pid] = ok
    with sqlite3.connect(acc.path) as conn:
        recorded = dict(conn.execute("SELECT pid, COUNT(*) FROM spends GROUP BY pid").fetchall())
    recorded.pop(os.getpid())  # the 9.0 spent above
    # never overspent, no record lost, none invented: what each process saw is what is stored
    assert sum(reported.values()) == 64 and len(acc) == 65
    assert {pid: ok for pid, ok in reported.items() if ok} == recorded
    assert acc.spent == (10.0, 0.0)


def test_racing_processes_never_overspend_short(tmp_path):
    _race(tmp_path, n_procs=4, n_spends=25)


@pytest.mark.slow
def test_racing_processes_never_overspend_8x50(tmp_path):
    _race(tmp_path, n_procs=8, n_spends=50)


def test_persistence_across_a_restart(tmp_path):
    path = tmp_path / "org-budget.sqlite"
    _python(
        "import sys; from dpreg import BudgetAccountant as B; "
        "B(epsilon=5.0, delta=1e-5, path=sys.argv[1]).spend(2.0, 1e-6)",
        path,
    )
    acc = BudgetAccountant(path=path)  # this process restarts from the file: totals adopted
    assert (acc.epsilon, acc.delta, acc.slack) == (5.0, 1e-5, 0.0)
    assert acc.ledger == [(2.0, 1e-6)]
    acc.spend(2.5)
    assert acc.spent == (4.5, 1e-6)
    assert BudgetAccountant(epsilon=5.0, path=path).spent == (4.5, 1e-6)  # agreeing total
    with pytest.raises(BudgetExceededError):
        acc.spend(0.6)
    with pytest.raises(ValueError, match="fixed when its ledger is created"):
        BudgetAccountant(epsilon=50.0, path=path)
    assert path.exists()  # a ledger with a path is never removed by dpreg
    del acc
    gc.collect()
    assert path.exists()


def test_locked_store_gives_clear_error_and_loses_no_spend(tmp_path):
    acc = BudgetAccountant(epsilon=5.0, path=tmp_path / "l.sqlite", timeout=0.2)
    acc.spend(1.0)
    holder = sqlite3.connect(acc.path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        t0 = time.monotonic()
        with pytest.raises(BudgetStoreError, match="locked"):
            acc.spend(1.0)
        assert time.monotonic() - t0 >= 0.15  # it waited for the lock
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    acc.spend(2.0)
    assert acc.ledger == [(1.0, 0.0), (2.0, 0.0)]


def test_corrupted_or_foreign_files_are_refused_never_reset(tmp_path):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a ledger at all " * 100)
    with pytest.raises(BudgetStoreError, match="corrupted or not a dpreg ledger"):
        BudgetAccountant(epsilon=1.0, path=garbage)
    assert garbage.read_bytes() == b"not a ledger at all " * 100
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(BudgetStoreError, match="not a dpreg ledger"):
        BudgetAccountant(epsilon=1.0, path=foreign)
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with pytest.raises(BudgetStoreError, match="empty"):
        BudgetAccountant(epsilon=1.0, path=empty)
    # a ledger damaged after creation
    path = tmp_path / "ledger.sqlite"
    acc = BudgetAccountant(epsilon=1.0, path=path)
    acc.spend(0.5)
    with open(path, "r+b") as fh:
        fh.write(b"\x00" * 100)  # destroy the SQLite header
    with pytest.raises(BudgetStoreError, match="corrupted"):
        acc.spend(0.1)
    # a ledger replaced by another one at the same path
    path.unlink()
    BudgetAccountant(epsilon=1.0, path=path)
    with pytest.raises(BudgetStoreError, match="different ledger"):
        acc.spend(0.1)


def test_pickled_accountant_in_same_process_shares_the_ledger():
    acc = BudgetAccountant(epsilon=1.0)
    twin = pickle.loads(pickle.dumps(acc))
    assert twin is not acc and twin == acc and twin.path == acc.path
    twin.spend(0.75)
    assert acc.spent == (0.75, 0.0)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.5)
    assert copy.deepcopy(acc) is acc and copy.copy(acc) is acc


def test_accountant_whose_store_is_gone_refuses_loudly(tmp_path):
    acc = BudgetAccountant(epsilon=1.0)
    state = pickle.dumps(acc)
    path = Path(acc.path)
    del acc
    gc.collect()  # the creating accountant removes its temporary ledger
    assert not path.exists()
    orphan = pickle.loads(state)  # unpickling itself never fails ...
    with pytest.raises(BudgetStoreError, match="cannot be reached"):
        orphan.spend(0.1)  # ... its first use does
    with pytest.raises(BudgetStoreError):
        _ = orphan.spent
    # a ledger file that this "machine" cannot see
    moved = BudgetAccountant(epsilon=1.0, path=tmp_path / "there.sqlite")
    state = pickle.dumps(moved)
    (tmp_path / "there.sqlite").rename(tmp_path / "elsewhere.sqlite")
    with pytest.raises(BudgetStoreError, match="cannot be reached"):
        pickle.loads(state).spend(0.1)


# ---------------------------------------------------------------------------------------------
# diffprivlib parity: default accountant, with-block, remaining(k), total()
# ---------------------------------------------------------------------------------------------
def test_default_accountant_and_with_block_resolved_at_fit():
    est = _TinyPrivateEstimator(epsilon=0.5)  # accountant=None
    default = BudgetAccountant.default()
    assert default.epsilon == math.inf and default.delta == 1.0
    before = len(default)
    est.fit(np.ones(3))
    # the global ledger records, never refuses; it is shared by every process of the session
    # (pytest-xdist workers too), so other workers' fits may land in it at the same time
    assert len(default) >= before + 1
    with BudgetAccountant(epsilon=1.0) as acc:
        assert BudgetAccountant.default() is acc
        clone(est).fit(np.ones(3))  # created before the block: resolved at fit
        with BudgetAccountant(epsilon=5.0) as inner:
            est.fit(np.ones(3))
        est.fit(np.ones(3))
        with pytest.raises(BudgetExceededError):
            est.fit(np.ones(3))
    assert acc.spent == (1.0, 0.0) and inner.spent == (0.5, 0.0)
    assert BudgetAccountant.default() == default and est.accountant is None


def test_remaining_k_and_count_and_total():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    acc.spend(0.25, 1e-6)
    assert acc.remaining() == pytest.approx((0.75, 9e-6))
    assert acc.remaining(3) == pytest.approx((0.25, 3e-6))
    assert acc.remaining_count(0.25) == 3 and acc.remaining_count(0.2, 1e-6) == 3
    assert acc.remaining_count(0.0) == math.inf
    assert acc.total() == acc.spent == pytest.approx((0.25, 1e-6))
    assert acc.total([(0.1, 0.0)] * 100, slack=1e-6)[0] == pytest.approx(
        advanced_eps([0.1] * 100, 1e-6)
    )
    # remaining(k) with advanced composition: k spends of that size fit, a bit more does not
    adv = BudgetAccountant(epsilon=1.0, delta=1e-5, slack=1e-6)
    eps_k, delta_k = adv.remaining(200)
    assert eps_k > 1.0 / 200  # advanced composition allows more than the even split
    for _ in range(200):
        adv.spend(eps_k, delta_k)
    with pytest.raises(BudgetExceededError):
        adv.spend(eps_k * 1e-3)
    assert adv.spent[0] <= 1.0 * (1 + 1e-12) and adv.spent[1] <= 1e-5 * (1 + 1e-12)
    with pytest.raises(ValueError, match="k must"):
        acc.remaining(0)


def _tight_epsilon(eps_list, delta):
    """Google dp-accounting's privacy-loss-distribution epsilon at ``delta`` (near-optimal)."""
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import common, privacy_loss_distribution

    total = None
    for e in eps_list:
        pld = privacy_loss_distribution.from_privacy_parameters(
            common.DifferentialPrivacyParameters(e, 0.0), value_discretization_interval=1e-4
        )
        total = pld if total is None else total.compose(pld)
    return total.get_epsilon_for_delta(delta)


@pytest.mark.parametrize(
    "eps_list, slack",
    [
        ([0.01] * 100, 1e-6),
        ([0.02] * 300, 1e-6),
        ([0.05] * 50 + [0.2] * 20, 1e-5),
        ([0.1] * 10, 1e-6),
        ([1.0] * 5, 1e-3),
    ],
)
def test_composition_is_sound_against_dp_accounting(eps_list, slack):
    """Every (epsilon, delta) the ledger reports is at least the near-optimal composition."""
    eps, delta = BudgetAccountant.compose([(e, 0.0) for e in eps_list], slack)
    tight = _tight_epsilon(eps_list, max(delta, 1e-12))
    assert eps >= tight - 1e-6
    # control: a mis-derived bound (sqrt(log) instead of sqrt(2 log)) is caught by the check
    if delta > 0:
        wrong = math.sqrt(math.log(1 / slack) * sum(e * e for e in eps_list)) + sum(
            e * math.tanh(e / 2) for e in eps_list
        )
        assert wrong < tight


@settings(max_examples=25, deadline=None)
@given(
    budget=st.tuples(st.floats(0.0, 5.0), st.sampled_from([0.0, 1e-9, 1e-5])),
    slack=st.sampled_from([0.0, 1e-10, 1e-9]),
    spends=st.lists(
        st.tuples(st.floats(0.0, 2.0), st.sampled_from([0.0, 1e-10, 3e-6])), max_size=25
    ),
)
def test_ledger_admits_exactly_what_composition_allows(budget, slack, spends):
    """Against a plain-Python reference: admitted iff the composed total stays in the budget."""
    eps_total, delta_total = budget
    slack = min(slack, delta_total)
    acc = BudgetAccountant(epsilon=eps_total, delta=delta_total, slack=slack)
    admitted = []

    def in_budget(total):
        return total[0] <= eps_total * (1 + 1e-12) and total[1] <= delta_total * (1 + 1e-12)

    def totals(spent):  # every total a theorem proves, the smaller epsilon first
        basic = (math.fsum(e for e, _ in spent), min(math.fsum(d for _, d in spent), 1.0))
        if slack > 0 and spent and advanced_eps([e for e, _ in spent], slack) < basic[0]:
            return [(advanced_eps([e for e, _ in spent], slack), min(basic[1] + slack, 1.0)), basic]
        return [basic]

    for e, d in spends:
        if any(in_budget(t) for t in totals(admitted + [(e, d)])):
            acc.spend(e, d)
            admitted.append((e, d))
        else:
            with pytest.raises(BudgetExceededError):
                acc.spend(e, d)
    assert acc.ledger == admitted
    expected = [t for t in totals(admitted) if in_budget(t)][0]  # the first one that fits
    assert acc.spent == pytest.approx(expected, rel=1e-9, abs=0)


@pytest.mark.parametrize(
    "make",
    [
        lambda acc: dpreg.FunctionalLinearRegression(accountant=acc),
        lambda acc: dpreg.ObjectivePerturbationLogistic(accountant=acc),
        lambda acc: dpreg.KNGQuantileRegressor(accountant=acc),
        lambda acc: dpreg.PrivateProjectionMedian(delta=1e-5, accountant=acc),
    ],
)
def test_estimators_validate_before_the_reserve(make):
    """NaN data raise before the spend is reserved: a validation error costs nothing."""
    acc = BudgetAccountant(epsilon=100.0, delta=1e-3)
    X = np.ones((20, 2))
    X[3, 1] = np.nan
    y = np.r_[np.zeros(10), np.ones(10)]
    with pytest.raises(ValueError) as info:
        make(acc).fit(X, y)
    assert not isinstance(info.value, BudgetExceededError)
    assert len(acc) == 0


@pytest.mark.parametrize(
    "make",
    [
        lambda acc: dpreg.FunctionalLinearRegression(accountant=acc, bounds_X=(0, 1)),
        lambda acc: dpreg.ObjectivePerturbationLogistic(accountant=acc, bounds_X=(0, 1)),
        lambda acc: dpreg.KNGQuantileRegressor(accountant=acc, bounds_X=(0, 1)),
        lambda acc: dpreg.PrivateProjectionMedian(accountant=acc),
        lambda acc: dpreg.PrivateProjectionMedian(delta=1e-6, accountant=acc),
    ],
)
@pytest.mark.parametrize("container", [np.asarray, lambda a: a.tolist()])
def test_the_budget_is_checked_before_the_data_are_read(make, container):
    """SPEC: the budget is checked before the data are touched, so an exhausted ledger
    refuses whatever the values (the median validated first, and a NaN answered instead)."""
    X = np.ones((20, 2))
    X[3, 1] = np.nan
    y = np.r_[np.zeros(10), np.ones(10)]
    exhausted = BudgetAccountant(epsilon=0.5, delta=1e-3)
    with pytest.raises(BudgetExceededError):
        make(exhausted).fit(container(X), y)
    ample = BudgetAccountant(epsilon=100.0, delta=1e-3)  # the control: the NaN is found
    with pytest.raises(ValueError, match="NaN") as info:
        make(ample).fit(container(X), y)
    assert not isinstance(info.value, BudgetExceededError)
    assert len(exhausted) == len(ample) == 0


def test_the_budget_is_read_only_and_spends_are_checked_against_the_stored_one(tmp_path):
    # audit s21 finding 5: ``acc.epsilon = 5`` on a ledger created with 1.0 was accepted, and
    # spends were admitted against the edited in-memory value (pickled copies carried it too)
    acc = BudgetAccountant(epsilon=1.0, path=tmp_path / "l.sqlite")
    for name, value in [("epsilon", 5.0), ("delta", 0.5), ("slack", 0.1), ("path", "x")]:
        with pytest.raises(AttributeError, match="read-only"):
            setattr(acc, name, value)
    assert acc.epsilon == 1.0 and acc.path.endswith("l.sqlite")
    with pytest.raises(BudgetExceededError):
        acc.spend(3.0)
    state = acc.__getstate__()
    state["budget"] = (5.0, 0.0, 0.0)  # a copy whose budget was edited on the way
    forged = BudgetAccountant.__new__(BudgetAccountant)
    forged.__setstate__(state)
    with pytest.raises(BudgetStoreError, match="carries"):
        forged.spend(3.0)
    assert BudgetAccountant(path=tmp_path / "l.sqlite").spent == (0.0, 0.0)
    acc.spend(1.0)  # the real budget still works
    assert pickle.loads(pickle.dumps(acc)).spent == (1.0, 0.0)


@pytest.mark.parametrize("spend", [(math.nan, 0.0), (-1.0, 0.0), (1.0, 2.0), (1.0, -0.1)])
def test_total_and_compose_validate_the_spends(spend):
    # audit s21 finding 9: these were composed as given, e.g. total([(nan, 0)]) == (nan, 0)
    acc = BudgetAccountant(epsilon=1.0)
    with pytest.raises(ValueError):
        acc.total([(0.1, 0.0), spend])
    with pytest.raises(ValueError):
        BudgetAccountant.compose([spend])


@pytest.mark.parametrize("slack", [math.nan, -1.0, 1.0, 2.0])
def test_compose_validates_the_slack(slack):
    # a NaN or negative slack was silently treated as basic composition
    with pytest.raises(ValueError, match="slack"):
        BudgetAccountant.compose([(0.1, 0.0)] * 100, slack=slack)
    with pytest.raises(ValueError, match="slack"):
        BudgetAccountant(epsilon=1.0).total([(0.1, 0.0)], slack=slack)


def test_refusal_message_does_not_claim_the_data_were_not_read():
    # audit s21 finding 10: transformers, tools and PrivateSearchCV validate the data (tools
    # with bounds=None even compute their range) before the spend is refused, yet the refusal
    # said "no data were read"; what every caller guarantees is that nothing was released
    from dpreg.preprocessing import PrivateStandardScaler
    from dpreg.tools import mean

    acc = BudgetAccountant(epsilon=1.0)
    acc.spend(1.0)
    X = np.random.default_rng(0).uniform(-1, 1, (50, 2))
    refusals = [
        lambda: acc.spend(0.5),
        lambda: PrivateStandardScaler(epsilon=1.0, bounds=(-1, 1), accountant=acc).fit(X),
        lambda: mean(X[:, 0], epsilon=1.0, bounds=(-1, 1), accountant=acc),
    ]
    for refuse in refusals:
        with pytest.raises(BudgetExceededError) as info:
            refuse()
        assert "no data were read" not in str(info.value)
        assert "Nothing was spent; nothing was released." in str(info.value)
    assert acc.spent == (1.0, 0.0)
