"""The ledger's shared store: one SQLite file per ledger, reached by every process.

Why SQLite: it gives cross-process transactions on a plain file through the standard library.
``BEGIN IMMEDIATE`` takes the file's write lock before the ledger is read, so reading the
spends, composing them with a new spend and recording it is one atomic step: two processes
can never both see the same remainder and jointly overspend it.

A file is a ledger only if its ``meta`` table says so; anything else (another SQLite database,
garbage, an empty file, a file replaced by another ledger) is refused with
:class:`~dpreg.exceptions.BudgetStoreError` -- a store is never silently re-created, because
that would reset the budget.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import time
import urllib.parse
import uuid

from ..exceptions import BudgetStoreError
from ._compose import Sums, spend_terms

FORMAT = "dpreg-ledger"
VERSION = "1"

_SCHEMA = """
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


def _budget_from_meta(meta):
    return float(meta["epsilon"]), float(meta["delta"]), float(meta["slack"])


class LedgerStore:
    """Connection details of one ledger file; every operation opens its own connection.

    A connection per operation keeps the store usable after ``fork`` and from any thread,
    and lets every operation re-check that the file is still *this* ledger (``ledger_id``).
    """

    def __init__(self, path, ledger_id, timeout, durable=True):
        self.path = path
        self.ledger_id = ledger_id
        self.timeout = timeout
        self.durable = durable

    # ------------------------------------------------------------------ creation / opening
    @classmethod
    def create_or_open(cls, path, budget, timeout, durable=True):
        """Create a ledger at ``path`` with ``budget`` = (eps, delta, slack), or open it.

        Returns ``(store, stored_budget, created)``. Creation is atomic: the ledger is built
        in a temporary file next to ``path`` and hard-linked into place, which fails if
        ``path`` exists, so concurrent creators agree on one ledger and no process ever sees
        a half-written one.
        """
        path = os.path.abspath(os.fspath(path))
        directory = os.path.dirname(path)
        if not os.path.isdir(directory):
            raise BudgetStoreError(f"The ledger's directory {directory!r} does not exist.")
        if not os.path.exists(path):
            ledger_id = uuid.uuid4().hex
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".dpreg-ledger-", suffix=".tmp")
            os.close(fd)
            try:
                conn = sqlite3.connect(tmp, isolation_level=None)
                try:
                    conn.executescript(_SCHEMA)
                    meta = {
                        "format": FORMAT,
                        "version": VERSION,
                        "ledger_id": ledger_id,
                        "epsilon": repr(budget[0]),
                        "delta": repr(budget[1]),
                        "slack": repr(budget[2]),
                        "created": repr(time.time()),
                    }
                    conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                finally:
                    conn.close()
                try:
                    os.link(tmp, path)
                    return cls(path, ledger_id, timeout, durable), budget, True
                except FileExistsError:
                    pass  # another process created it first: open theirs below
                except OSError as exc:
                    raise BudgetStoreError(
                        f"Cannot create the ledger file {path!r}: {exc}. (The ledger is "
                        "created atomically with a hard link; use a local directory.)"
                    ) from exc
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        meta = cls._read_meta(path, timeout)
        store = cls(path, meta["ledger_id"], timeout, durable)
        return store, _budget_from_meta(meta), False

    @staticmethod
    def _read_meta(path, timeout):
        if os.path.getsize(path) == 0:
            raise BudgetStoreError(
                f"{path!r} exists but is empty, not a dpreg ledger; refusing to overwrite it "
                "(a ledger is never silently reset). Remove it or choose another path."
            )
        store = LedgerStore(path, None, timeout)
        with store._connection() as conn:
            return store._meta(conn)

    # ------------------------------------------------------------------ low level
    @contextlib.contextmanager
    def _connection(self):
        if not os.path.exists(self.path):
            raise BudgetStoreError(
                f"The ledger store {self.path!r} cannot be reached (deleted, or this process "
                "runs on another machine). Refusing to spend: a new ledger would silently "
                "fork the budget. Pass an accountant whose file every process can reach."
            )
        uri = "file:" + urllib.parse.quote(self.path) + "?mode=rw"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise BudgetStoreError(f"Cannot open the ledger store {self.path!r}: {exc}") from exc
        try:
            if not self.durable:  # temporary ledgers need no fsync: they die with the session
                conn.execute("PRAGMA synchronous = OFF")
            yield conn
        except sqlite3.OperationalError as exc:
            text = str(exc).lower()
            if "locked" in text or "busy" in text:
                raise BudgetStoreError(
                    f"The ledger store {self.path!r} stayed locked by another process for "
                    f"{self.timeout} s. Nothing was recorded and no data were read; retry, "
                    "or raise the accountant's timeout."
                ) from exc
            raise BudgetStoreError(f"Ledger store {self.path!r} failed: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise BudgetStoreError(
                f"{self.path!r} is corrupted or not a dpreg ledger ({exc}); refusing to use "
                "or reset it."
            ) from exc
        finally:
            conn.close()

    def _meta(self, conn):
        try:
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            meta = {}
        if meta.get("format") != FORMAT:
            raise BudgetStoreError(
                f"{self.path!r} is not a dpreg ledger (no ledger header); refusing to use it."
            )
        if meta.get("version") != VERSION:
            raise BudgetStoreError(
                f"{self.path!r} is a dpreg ledger of format version {meta.get('version')!r}; "
                f"this dpreg reads version {VERSION}."
            )
        if self.ledger_id is not None and meta["ledger_id"] != self.ledger_id:
            raise BudgetStoreError(
                f"{self.path!r} now holds a different ledger than the one this accountant "
                "was connected to (the file was replaced). Refusing to spend."
            )
        return meta

    @staticmethod
    def _sums(conn):
        row = conn.execute(
            "SELECT COUNT(*), TOTAL(epsilon), TOTAL(delta), TOTAL(eps_sq), TOTAL(drift) FROM spends"
        ).fetchone()
        return Sums(int(row[0]), *map(float, row[1:]))

    # ------------------------------------------------------------------ operations
    def sums(self):
        """:class:`Sums` of every recorded spend."""
        with self._connection() as conn:
            self._meta(conn)
            return self._sums(conn)

    def spends(self):
        """Every recorded ``(epsilon, delta)``, oldest first."""
        with self._connection() as conn:
            self._meta(conn)
            rows = conn.execute("SELECT epsilon, delta FROM spends ORDER BY seq").fetchall()
        return [(float(e), float(d)) for e, d in rows]

    def reserve(self, epsilon, delta, admissible):
        """Record ``(epsilon, delta)`` if ``admissible(sums_after)``, in one transaction.

        Returns ``(recorded, sums_before)``.
        """
        with self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE")  # the write lock, before the ledger is read
            try:
                self._meta(conn)
                before = self._sums(conn)
                if not admissible(before.plus(epsilon, delta)):
                    conn.execute("ROLLBACK")
                    return False, before
                sq, drift = spend_terms(epsilon)
                conn.execute(
                    "INSERT INTO spends (epsilon, delta, eps_sq, drift, pid, time) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (epsilon, delta, sq, drift, os.getpid(), time.time()),
                )
                conn.execute("COMMIT")
                return True, before
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
