"""The ledger's running totals (format version 2): exact, O(1) per spend, migrated, checked."""

import math
import multiprocessing
import pickle
import sqlite3
import subprocess
import sys
import threading
import time
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_accounting import _RACER, _env  # the multiprocess racer of the ledger tests

from benchmarks._ledger_scaling import write_v1_ledger
from dpreg import BudgetAccountant
from dpreg.accounting._compose import TOLERANCE, spend_terms
from dpreg.accounting._store import LedgerStore
from dpreg.accounting._totals import encode, to_double, units
from dpreg.exceptions import BudgetExceededError, BudgetStoreError

TERMS = ("epsilon", "delta", "eps_sq", "drift")


def _rows(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT seq, epsilon, delta, eps_sq, drift FROM spends").fetchall()


def _exact_from_rows(path):
    """Reference: the count and exact Fraction sums of the stored rows (inf if a term is)."""
    rows = _rows(path)
    columns = list(zip(*rows))[1:] if rows else [()] * 4
    return len(rows), [
        math.inf if math.inf in col else sum(map(Fraction, col), Fraction(0)) for col in columns
    ]


def _assert_totals_exact(acc):
    count, exact = _exact_from_rows(acc.path)
    totals = acc._store.totals()
    assert totals.count == count == len(acc)
    for name, stored, ref in zip(TERMS, totals[2:], exact):
        if ref == math.inf:
            assert stored == math.inf, name
        else:
            assert Fraction(stored, 2**1074) == ref, name
            # what is reported is the exact sum rounded once, to nearest
            assert getattr(acc._store.sums(), name) == _nearest(ref), name


def _nearest(fraction):
    try:
        return float(fraction)
    except OverflowError:  # the exact sum is past the largest double
        return math.inf


def _sql(path, *statements):
    with sqlite3.connect(path, isolation_level=None) as conn:
        for statement in statements:
            conn.execute(*statement) if isinstance(statement, tuple) else conn.execute(statement)


ADVERSARIAL = [
    [1.0] + [1e-16] * 200,  # each 1e-16 is below half an ulp of 1: a float sum stays at 1.0
    [5e-324] * 50 + [2.2250738585072014e-308, 1e-300],  # subnormals and the normal boundary
    [1e300, 1e-300, 1e200, 3.0],  # eps^2 overflows to inf; the epsilon sum stays finite
    [0.1, 0.2, 0.7, 0.0, 1 / 3, 2 / 3],
    [1.7976931348623157e308, 1.7976931348623157e308],  # the exact sum exceeds every double
]


@pytest.mark.parametrize(
    "spends", ADVERSARIAL, ids=["1+tiny", "subnormal", "huge", "decimal", "over"]
)
def test_totals_are_the_exact_sum_of_the_rows(spends):
    acc = BudgetAccountant(epsilon=math.inf, delta=1.0)
    for i, eps in enumerate(spends):
        acc.spend(eps, 1e-9 if i % 3 == 0 else 0.0)
    _assert_totals_exact(acc)
    if spends[0] == 1.0:  # the sum that SQLite's TOTAL (format 1) rounded to 1.0
        assert acc.spent[0] == float(1 + 200 * Fraction(1e-16)) > 1.0


@settings(max_examples=10, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(0.0, 10.0),
            st.floats(0.0, 1e-300),
            st.floats(1e150, 1e160),  # eps^2 near and past the overflow
            st.sampled_from([1.0, 1e-16, 5e-324]),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_totals_are_exact_for_any_spends(spends):
    acc = BudgetAccountant(epsilon=math.inf)
    for eps in spends:
        acc.spend(eps)
    _assert_totals_exact(acc)


def test_rounding_helpers_round_once_to_nearest_or_up():
    for x in (0.0, 5e-324, 1e-16, 0.1, 1.0, 1e300, 1.7976931348623157e308):
        assert to_double(units(x)) == x and to_double(units(x), up=True) == x
    above_one = units(1.0) + 1  # 1 + 2^-1074: nearest is 1.0, up is the next double
    assert to_double(above_one) == 1.0
    assert to_double(above_one, up=True) == math.nextafter(1.0, 2.0)
    assert to_double(2 * units(1.7976931348623157e308)) == math.inf


def test_a_spend_just_past_the_exact_threshold_is_refused():
    """Admission is on the exact sum: after a spend of exactly the threshold, 5e-324 is refused.

    Format 1 summed in floating point: threshold + 5e-324 rounds back to the threshold, and
    such spends were admitted for ever.
    """
    for budget in (1.0, 0.3, 7.25e-5):
        threshold = budget * (1 + TOLERANCE)  # the double that within() compares against
        acc = BudgetAccountant(epsilon=budget, delta=1e-6)
        acc.spend(threshold)
        with pytest.raises(BudgetExceededError):
            acc.check(5e-324)
        with pytest.raises(BudgetExceededError):
            acc.spend(5e-324)
        acc.spend(0.0, 1e-6 * (1 + TOLERANCE))  # the delta side, likewise
        with pytest.raises(BudgetExceededError):
            acc.spend(0.0, 5e-324)
        assert len(acc) == 2


def test_tiny_spends_cannot_creep_past_the_budget_of_a_large_ledger(tmp_path):
    """1.0 then 10,050 spends of 1e-16: exactly 1 + 1.005e-12 > 1.0 (1 + 1e-12) is spent.

    Format 1 summed the rows in SQLite to exactly 1.0 (each 1e-16 is below half an ulp), so a
    ledger like this admitted spends of 1e-16 for ever. The ledger is written in format 1 and
    migrated (exact sums), which is much faster than 10,051 spends.
    """
    path = tmp_path / "ledger.sqlite"
    write_v1_ledger(path, [(1.0, 0.0)] + [(1e-16, 0.0)] * 10_050, budget=(1.0, 0.0, 0.0))
    acc = BudgetAccountant(path=path)
    assert acc.spent[0] > 1.0 * (1 + TOLERANCE)
    with pytest.raises(BudgetExceededError):
        acc.spend(1e-16)
    assert len(acc) == 10_051


@pytest.mark.slow
def test_tiny_spends_cannot_creep_past_the_budget_slow():
    """The same through the accountant only: 1.0 then spends of 1e-16 until refused."""
    acc = BudgetAccountant(epsilon=1.0)
    acc.spend(1.0)
    admitted = 0
    with pytest.raises(BudgetExceededError):
        for _ in range(20_000):
            acc.spend(1e-16)
            admitted += 1
    # refused exactly when the exact sum would pass the threshold
    threshold = Fraction(1.0 * (1 + TOLERANCE))
    assert 1 + admitted * Fraction(1e-16) <= threshold < 1 + (admitted + 1) * Fraction(1e-16)


def _forked_spender(state, go, n, eps, ready):
    acc = pickle.loads(state)
    ready.touch()
    while not go.exists():
        time.sleep(0.002)
    for _ in range(n):
        acc.spend(eps)


def _start(tmp_path, state, go, i, eps, n, fork):
    ready = tmp_path / f"r{i}"
    if fork:  # a forked copy of this process: no interpreter start-up
        proc = multiprocessing.get_context("fork").Process(
            target=_forked_spender, args=(state, go, n, eps, ready)
        )
        proc.start()
        return proc
    return subprocess.Popen(
        [sys.executable, "-c", _RACER, state.hex(), go, str(n), repr(eps), ready],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _race_exact(tmp_path, eps, n, fork):
    """Processes race ``n`` spends each of the magnitudes ``eps``; every one is in the totals."""
    acc = BudgetAccountant(epsilon=math.inf)
    state, go = pickle.dumps(acc), tmp_path / "go"
    procs = [_start(tmp_path, state, go, i, e, n, fork) for i, e in enumerate(eps)]
    alive = (lambda p: p.is_alive()) if fork else (lambda p: p.poll() is None)
    deadline = time.monotonic() + 300
    while not all((tmp_path / f"r{i}").exists() for i in range(len(eps))):
        assert time.monotonic() < deadline and all(map(alive, procs))
        time.sleep(0.01)
    go.touch()
    for p in procs:
        if fork:
            p.join(300)
            assert p.exitcode == 0
        else:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0 and int(out.split()[1]) == n, err
    _assert_totals_exact(acc)
    assert acc._store.totals().last_seq == len(eps) * n
    assert acc.spent[0] == float(sum(n * Fraction(e) for e in eps))


def test_concurrent_processes_keep_the_totals_exact(tmp_path):
    _race_exact(tmp_path, [1e-16, 1.0, 5e-324, 1 / 3], 25, fork=True)


@pytest.mark.slow
def test_concurrent_interpreters_keep_the_totals_exact(tmp_path):
    """The same with fresh interpreters (the ledger tests' racer), 8 processes x 50 spends."""
    _race_exact(tmp_path, [1e-16, 1.0, 5e-324, 1 / 3, 0.1, 1e300, 2.0**-6, 7.0], 50, fork=False)


# --------------------------------------------------------------------------- migration
def _version(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0]


def test_a_version_1_ledger_is_migrated_with_exact_totals(tmp_path):
    path = tmp_path / "v1.sqlite"
    spends = [(1.0, 1e-7)] + [(1e-16, 0.0)] * 300 + [(1e300, 0.0), (0.25, 2e-8)]
    write_v1_ledger(path, spends, budget=(math.inf, 1e-5, 1e-6))
    with sqlite3.connect(path) as conn:
        old_id = conn.execute("SELECT value FROM meta WHERE key = 'ledger_id'").fetchone()[0]
    acc = BudgetAccountant(path=path)
    assert _version(path) == "2" and acc.ledger_id == old_id
    assert (acc.epsilon, acc.delta, acc.slack) == (math.inf, 1e-5, 1e-6)
    assert acc.ledger == spends
    _assert_totals_exact(acc)
    acc.spend(0.5, 1e-8)
    _assert_totals_exact(acc)
    assert BudgetAccountant(path=path).ledger == spends + [(0.5, 1e-8)]  # reopens as version 2


def test_a_version_1_ledger_met_through_a_pickled_accountant_is_migrated(tmp_path):
    """A store that never went through create_or_open (unpickled) migrates at first use."""
    path = tmp_path / "v1.sqlite"
    write_v1_ledger(path, [(0.5, 0.0)] * 3, budget=(2.0, 0.0, 0.0))
    with sqlite3.connect(path) as conn:
        ledger_id = conn.execute("SELECT value FROM meta WHERE key = 'ledger_id'").fetchone()[0]
    acc = BudgetAccountant.__new__(BudgetAccountant)
    acc.__setstate__(
        {"path": str(path), "ledger_id": ledger_id, "timeout": 5.0, "durable": True,
         "budget": (2.0, 0.0, 0.0)}
    )  # fmt: skip
    assert len(acc) == 3 and _version(path) == "2"  # a read migrates (under the write lock)
    acc.spend(0.5)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.1)


def test_migration_waits_for_an_old_version_spend_and_counts_it(tmp_path):
    """An old process holding the write lock mid-spend: the migration waits, then sums it.

    The old process is simulated by its protocol: BEGIN IMMEDIATE, check the version, insert.
    After the migration, the same protocol sees version 2 and refuses, so an old process can
    never record a spend that the totals miss.
    """
    path = tmp_path / "v1.sqlite"
    write_v1_ledger(path, [(1.0, 0.0)], budget=(10.0, 0.0, 0.0))
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("BEGIN IMMEDIATE")
    assert old.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0] == "1"
    terms = spend_terms(2.0)
    old.execute(
        "INSERT INTO spends (epsilon, delta, eps_sq, drift, pid, time) VALUES (?, 0, ?, ?, 0, 0)",
        (2.0, *terms),
    )
    opened = {}
    thread = threading.Thread(target=lambda: opened.update(acc=BudgetAccountant(path=path)))
    thread.start()
    time.sleep(0.3)
    assert "acc" not in opened  # blocked on the old process's write lock
    old.execute("COMMIT")
    thread.join(30)
    acc = opened["acc"]
    assert acc.spent == (3.0, 0.0) and len(acc) == 2
    _assert_totals_exact(acc)
    old.execute("BEGIN IMMEDIATE")  # the old protocol now refuses: the version has changed
    assert old.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0] == "2"
    old.execute("ROLLBACK")
    old.close()


def test_a_damaged_version_1_ledger_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "v1.sqlite"
    write_v1_ledger(path, [(1.0, 0.0), (0.5, 0.0)])
    _sql(path, "UPDATE spends SET epsilon = -0.5 WHERE seq = 2")
    before = path.read_bytes()
    with pytest.raises(BudgetStoreError, match="damaged spend"):
        BudgetAccountant(path=path)
    assert path.read_bytes() == before and _version(path) == "1"


# --------------------------------------------------------------------------- damaged totals
def _ledger(tmp_path, spends=(0.5, 0.25)):
    path = tmp_path / "ledger.sqlite"
    acc = BudgetAccountant(epsilon=10.0, path=path)
    for eps in spends:
        acc.spend(eps)
    return acc, path


def test_totals_that_disagree_with_the_rows_are_refused_at_opening(tmp_path):
    acc, path = _ledger(tmp_path)
    _sql(path, ("UPDATE totals SET epsilon = ?", (encode(units(0.25)),)))  # "forget" a spend
    with pytest.raises(BudgetStoreError, match="disagree"):
        BudgetAccountant(path=path)
    _sql(path, ("UPDATE totals SET epsilon = ?", (encode(units(0.75)),)))
    _sql(path, "UPDATE spends SET eps_sq = 0 WHERE seq = 1")
    with pytest.raises(BudgetStoreError, match="disagree"):
        BudgetAccountant(path=path)


def test_a_spend_recorded_without_the_totals_is_refused_at_every_use(tmp_path):
    """A row added behind the totals' back (not by dpreg) is seen in O(log n) by any spend."""
    acc, path = _ledger(tmp_path)
    _sql(
        path,
        "INSERT INTO spends (epsilon, delta, eps_sq, drift, pid, time) VALUES (9, 0, 81, 9, 0, 0)",
    )
    for use in (lambda: acc.spend(0.1), lambda: acc.check(0.1), lambda: acc.spent, acc.__len__):
        with pytest.raises(BudgetStoreError, match="do not count"):
            use()
    with pytest.raises(BudgetStoreError):
        BudgetAccountant(path=path)
    _sql(path, "DELETE FROM spends WHERE seq = 3")  # the foreign row removed: usable again
    acc.spend(0.1)
    _sql(path, "DELETE FROM spends WHERE seq = (SELECT MAX(seq) FROM spends)")  # newest removed
    with pytest.raises(BudgetStoreError, match="do not count"):
        acc.spend(0.1)


@pytest.mark.parametrize(
    "damage",
    [
        "DELETE FROM totals",
        "UPDATE totals SET epsilon = 'xyz'",
        "UPDATE totals SET epsilon = ''",
        "UPDATE totals SET epsilon = '0x1f'",
        "UPDATE totals SET delta = '-5'",
        "UPDATE totals SET eps_sq = '1.5'",
        "DROP TABLE totals",
    ],
)
def test_missing_or_damaged_totals_are_refused(tmp_path, damage):
    acc, path = _ledger(tmp_path)
    _sql(path, damage)
    before = path.read_bytes()
    with pytest.raises(BudgetStoreError):
        acc.spend(0.1)
    with pytest.raises(BudgetStoreError):
        BudgetAccountant(path=path)
    assert path.read_bytes() == before  # never repaired, re-created or reset


def test_a_ledger_of_a_newer_format_is_refused(tmp_path):
    acc, path = _ledger(tmp_path)
    _sql(path, "UPDATE meta SET value = '3' WHERE key = 'version'")
    with pytest.raises(BudgetStoreError, match="version '3'"):
        acc.spend(0.1)
    with pytest.raises(BudgetStoreError, match="version '3'"):
        BudgetAccountant(path=path)


# --------------------------------------------------------------------------- scaling
def _cpu_per_spend(acc, n):
    t0 = time.process_time()
    for _ in range(n):
        acc.spend(1e-3)
    return (time.process_time() - t0) / n


def test_a_spend_costs_the_same_in_a_large_ledger(tmp_path):
    """200 spends into a 30,000-entry ledger cost no more than 2x 200 into an empty one.

    Format 1 summed every row at each spend: ~10x slower at this size. CPU time, best of two
    interleaved rounds, so that load from other processes does not decide it.
    """
    path = tmp_path / "big.sqlite"
    write_v1_ledger(path, [(1e-3, 0.0)] * 30_000)
    big = BudgetAccountant(path=path)
    big._store.durable = False  # as a fresh accountant: no fsync, to compare like with like
    small = BudgetAccountant(epsilon=math.inf)
    t_small, t_big = math.inf, math.inf
    for _ in range(2):
        t_small = min(t_small, _cpu_per_spend(small, 100))
        t_big = min(t_big, _cpu_per_spend(big, 100))
    assert t_big <= 2 * t_small, (t_big, t_small)


@pytest.mark.slow
def test_the_last_of_3000_spends_cost_as_much_as_the_first():
    acc = BudgetAccountant(epsilon=math.inf)
    first = _cpu_per_spend(acc, 500)
    _cpu_per_spend(acc, 2000)
    last = _cpu_per_spend(acc, 500)
    assert last <= 2 * first, (first, last)


def test_opening_resums_more_rows_than_one_chunk_exactly(tmp_path):
    """Opening re-sums every row: a ledger with more rows than one chunk sums exactly."""
    path = tmp_path / "v1.sqlite"
    spends = [(float(i % 7) * 1e-3 + 1e-17, 0.0) for i in range(9_000)]
    write_v1_ledger(path, spends)
    BudgetAccountant(path=path)  # migration
    store, _, created = LedgerStore.create_or_open(path, (math.inf, 1.0, 0.0), 5.0)
    assert not created
    count, exact = _exact_from_rows(path)
    assert store.totals().count == count == 9_000
    assert Fraction(store.totals().epsilon, 2**1074) == exact[0]
