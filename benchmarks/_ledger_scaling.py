"""Cost of an accountant spend against the size of the ledger it spends from.

``python -m benchmarks._ledger_scaling [--sizes 0 10000 50000] [--spends 1000] [--profile N]``

For each size it writes a ledger of that many spends in the *version-1* format (the one before
the running totals; written directly with SQL in that format's schema, because filling it
through an O(n)-per-spend accountant would itself cost O(n^2)), opens it with the
:class:`~dpreg.BudgetAccountant` under test (a current dpreg migrates it once, an old one uses
it as is), then times ``--spends`` spends, each preceded by a ``check`` as in an estimator's
``fit``, on a ledger without fsync like the session's default ledger (``--durable``: with
fsync, as a ledger given a ``path``). It prints the process CPU seconds of the opening, of
the spends and of opening the ledger again afterwards.
``--profile N`` instead runs cProfile on the spends into a ledger of N entries and prints the
top of the profile.

The numbers are CPU seconds of this process (``time.process_time``): SQLite's own work is in
the process, and CPU time is less disturbed than wall time by other jobs on the machine.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sqlite3
import tempfile
import time
import uuid

V1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE spends (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    eps_sq REAL NOT NULL,
    drift REAL NOT NULL,
    pid INTEGER NOT NULL,
    time REAL NOT NULL
);
"""


def write_v1_ledger(path, spends, budget=(float("inf"), 1.0, 0.0)):
    """Write a version-1 ledger file (no running totals) holding ``spends`` = [(eps, delta)].

    The per-spend terms are computed as version 1 computed them (eps^2, eps tanh(eps/2)).
    """
    import math

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.executescript(V1_SCHEMA)
        meta = {
            "format": "dpreg-ledger",
            "version": "1",
            "ledger_id": uuid.uuid4().hex,
            "epsilon": repr(budget[0]),
            "delta": repr(budget[1]),
            "slack": repr(budget[2]),
            "created": repr(time.time()),
        }
        conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO spends (epsilon, delta, eps_sq, drift, pid, time) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            ((e, d, e * e, e * math.tanh(e / 2.0), os.getpid(), time.time()) for e, d in spends),
        )
        conn.execute("COMMIT")
    finally:
        conn.close()


def _spend_loop(acc, n):
    for _ in range(n):
        acc.check(1e-3, 0.0)
        acc.spend(1e-3, 0.0)


def measure(size, n_spends, directory, durable=False):
    from dpreg import BudgetAccountant

    path = os.path.join(directory, f"ledger-{size}.sqlite")
    write_v1_ledger(path, [(1e-3, 0.0)] * size)
    t0 = time.process_time()
    acc = BudgetAccountant(path=path)
    t_open = time.process_time() - t0
    acc._store.durable = durable  # False: no fsync, as the session's default ledger
    t0 = time.process_time()
    _spend_loop(acc, n_spends)
    t_spend = time.process_time() - t0
    assert len(acc) == size + n_spends
    t0 = time.process_time()
    BudgetAccountant(path=path)  # opening an existing ledger re-sums its rows once
    t_reopen = time.process_time() - t0
    return t_open, t_spend, t_reopen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 10_000, 50_000])
    parser.add_argument("--spends", type=int, default=1000)
    parser.add_argument("--profile", type=int, default=None)
    parser.add_argument("--durable", action="store_true", help="fsync every spend (path ledgers)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        if args.profile is not None:
            from dpreg import BudgetAccountant

            path = os.path.join(directory, "ledger.sqlite")
            write_v1_ledger(path, [(1e-3, 0.0)] * args.profile)
            acc = BudgetAccountant(path=path)
            acc._store.durable = args.durable
            prof = cProfile.Profile()
            prof.runcall(_spend_loop, acc, args.spends)
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
            return
        print("entries  open_cpu_s  spends  spend_cpu_s  ms_per_spend  reopen_cpu_s")
        for size in args.sizes:
            t_open, t_spend, t_reopen = measure(size, args.spends, directory, args.durable)
            print(
                f"{size:7d}  {t_open:10.3f}  {args.spends:6d}  {t_spend:11.3f}"
                f"  {1e3 * t_spend / args.spends:12.3f}  {t_reopen:12.3f}"
            )


if __name__ == "__main__":
    main()
