"""The ledger's shared store: one SQLite file per ledger, reached by every process.

Why SQLite: it gives cross-process transactions on a plain file through the standard library.
``BEGIN IMMEDIATE`` takes the file's write lock before the ledger is read, so reading the
spends, composing them with a new spend and recording it is one atomic step: two processes
can never both see the same remainder and jointly overspend it.

A file is a ledger only if its ``meta`` table says so; anything else (another SQLite database,
garbage, an empty file, a file replaced by another ledger) is refused with
:class:`~dpreg.exceptions.BudgetStoreError` -- a store is never silently re-created, because
that would reset the budget.

Format (version 2)
------------------
* ``meta``: key/value text -- ``format``, ``version``, ``ledger_id``, the budget, ``created``.
* ``spends``: one row per recorded spend (``seq`` increasing from 1, the spend's epsilon and
  delta, its advanced-composition terms eps^2 and eps tanh(eps/2), pid, time).
* ``totals``: one row -- the count, the ``seq`` of the newest spend and the exact sums of the
  four terms (:mod:`dpreg.accounting._totals`: hexadecimal integers of 2^-1074, or ``inf``).
  Updated in the same ``BEGIN IMMEDIATE`` transaction as each insert, so that a spend costs
  O(1) in the ledger's size instead of summing every row.

**Checks.** Every operation checks, in its transaction, that the newest row's ``seq`` is the
one the totals record (an O(log n) index look-up): a row added or removed at the end behind
the totals' back is refused. Opening an existing ledger (:meth:`LedgerStore.create_or_open`)
re-sums every row exactly, once, and refuses the file if the totals disagree (an edited or
damaged ledger). A ledger whose totals were edited together with consistent rows cannot be
told from a real one -- whoever can write the file can also delete it; the store guards
against damage and mistakes, not against its owner.

**Version 1** (no ``totals`` table) is migrated in place, under the write lock: in one
``BEGIN IMMEDIATE`` transaction the rows are summed exactly, the totals written and the
version set to 2. A process running an older dpreg checks the version inside its own write
transaction before it records a spend, so its spend is either committed before the migration
(and summed by it) or sees version 2 and is refused ("format version '2'") -- it can never
record a spend that the totals miss. The price is that older dpreg can no longer use a
migrated file (loudly); a ledger is never re-created or reset.
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
from ._compose import spend_terms
from ._totals import Totals, decode, encode, totals_of_rows

FORMAT = "dpreg-ledger"
VERSION = "2"
_V1 = "1"  # the version without running totals, migrated when met

_SPENDS = """
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
_TOTALS = """
CREATE TABLE totals (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    count INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    epsilon TEXT NOT NULL,
    delta TEXT NOT NULL,
    eps_sq TEXT NOT NULL,
    drift TEXT NOT NULL
);
"""
_SCHEMA = ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)", _SPENDS, _TOTALS)


def _budget_from_meta(meta):
    return float(meta["epsilon"]), float(meta["delta"]), float(meta["slack"])


def _write_totals(conn, totals, create=False):
    row = (totals.count, totals.last_seq, *map(encode, totals[2:]))
    if create:
        conn.execute("INSERT INTO totals VALUES (0, ?, ?, ?, ?, ?, ?)", row)
        return
    cur = conn.execute(
        "UPDATE totals SET count = ?, last_seq = ?, epsilon = ?, delta = ?, eps_sq = ?, "
        "drift = ? WHERE id = 0",
        row,
    )
    if cur.rowcount != 1:  # _totals() read the row in this very transaction
        raise BudgetStoreError("The ledger's totals row vanished during a spend.")


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
        a half-written one. Opening an existing ledger migrates a version-1 file or checks
        the totals against every row (O(n), once per opening; not twice after a migration).
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
                    conn.execute("BEGIN")  # one transaction: one sync instead of one per table
                    for statement in _SCHEMA:
                        conn.execute(statement)
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
                    _write_totals(conn, Totals(), create=True)
                    conn.execute("COMMIT")
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
        if os.path.getsize(path) == 0:
            raise BudgetStoreError(
                f"{path!r} exists but is empty, not a dpreg ledger; refusing to overwrite it "
                "(a ledger is never silently reset). Remove it or choose another path."
            )
        store = cls(path, None, timeout, durable)
        with store._transaction() as (conn, meta, totals):
            # a file migrated in this transaction has totals summed from its rows just now
            if not meta.get("migrated") and store._row_totals(conn) != totals:
                raise BudgetStoreError(
                    f"The totals stored in the ledger {path!r} disagree with its recorded "
                    "spends (the file was edited or damaged); refusing to use it."
                )
        store.ledger_id = meta["ledger_id"]
        return store, _budget_from_meta(meta), False

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
                    f"{self.timeout} s. Nothing was recorded; nothing was released. Retry, "
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

    @contextlib.contextmanager
    def _transaction(self, write=False):
        """Yield ``(conn, meta, totals)`` inside one transaction, committed on normal exit.

        ``write`` takes the file's write lock first (``BEGIN IMMEDIATE``), before anything is
        read. A read that meets a version-1 ledger restarts as a write to migrate it.
        """
        with self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                meta = self._meta(conn)
                if meta["version"] == _V1 and not write:
                    conn.execute("ROLLBACK")
                    conn.execute("BEGIN IMMEDIATE")
                    meta = self._meta(conn)  # another process may have migrated it meanwhile
                if meta["version"] == _V1:
                    self._migrate(conn)
                    meta["version"] = VERSION
                    meta["migrated"] = True  # local flag: the totals were just summed from the rows
                yield conn, meta, self._totals(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

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
        if meta.get("version") not in (_V1, VERSION):
            raise BudgetStoreError(
                f"{self.path!r} is a dpreg ledger of format version {meta.get('version')!r}; "
                f"this dpreg reads versions {_V1} and {VERSION} (a newer dpreg wrote it?)."
            )
        if self.ledger_id is not None and meta["ledger_id"] != self.ledger_id:
            raise BudgetStoreError(
                f"{self.path!r} now holds a different ledger than the one this accountant "
                "was connected to (the file was replaced). Refusing to spend."
            )
        return meta

    def _migrate(self, conn):
        """Version 1 -> 2 inside the caller's write transaction: exact totals of the rows."""
        totals = self._row_totals(conn)
        conn.execute(_TOTALS)
        _write_totals(conn, totals, create=True)
        conn.execute("UPDATE meta SET value = ? WHERE key = 'version'", (VERSION,))

    def _row_totals(self, conn):
        """Exact totals re-summed from every row (O(n)): to migrate, or to check at opening."""
        rows = conn.execute("SELECT seq, epsilon, delta, eps_sq, drift FROM spends ORDER BY seq")
        try:
            return totals_of_rows(rows)
        except ValueError as exc:
            raise BudgetStoreError(
                f"The ledger {self.path!r} holds a damaged spend ({exc}); refusing to use it."
            ) from exc

    def _totals(self, conn):
        """The stored :class:`Totals`, checked against the newest row (O(log n))."""
        rows = conn.execute(
            "SELECT (SELECT MAX(seq) FROM spends), count, last_seq, epsilon, delta, eps_sq, "
            "drift FROM totals WHERE id = 0"
        ).fetchall()
        try:
            ((newest, *row),) = rows
            totals = Totals(int(row[0]), int(row[1]), *map(decode, row[2:]))
        except (ValueError, TypeError) as exc:
            raise BudgetStoreError(
                f"The totals of the ledger {self.path!r} are missing or damaged ({exc}); "
                "refusing to use it."
            ) from exc
        if (newest or 0) != totals.last_seq or not 0 <= totals.count <= totals.last_seq:
            raise BudgetStoreError(
                f"The ledger {self.path!r} has spends that its totals do not count (newest "
                f"recorded spend {newest}, totals up to {totals.last_seq}): it was written "
                "without dpreg or damaged; refusing to use it."
            )
        return totals

    # ------------------------------------------------------------------ operations
    def totals(self):
        """Exact :class:`~dpreg.accounting._totals.Totals` of every recorded spend."""
        with self._transaction() as (_, _, totals):
            return totals

    def sums(self):
        """:class:`Sums` of every recorded spend, each rounded to nearest."""
        return self.totals().rounded()

    def spends(self):
        """Every recorded ``(epsilon, delta)``, oldest first."""
        with self._transaction() as (conn, _, _):
            rows = conn.execute("SELECT epsilon, delta FROM spends ORDER BY seq").fetchall()
        return [(float(e), float(d)) for e, d in rows]

    def reserve(self, epsilon, delta, admissible, budget):
        """Record ``(epsilon, delta)`` if ``admissible(sums_after)``, in one transaction.

        ``sums_after`` are the exact sums with the new spend, each rounded *up*
        (:mod:`dpreg.accounting._totals` derives why the decision is then never looser than
        on the exact sums). ``budget`` is the ``(epsilon, delta, slack)`` that ``admissible``
        tests against; it must be the one stored in the ledger. Returns
        ``(recorded, sums_before)``, the latter to nearest.
        """
        with self._transaction(write=True) as (conn, meta, before):
            stored = _budget_from_meta(meta)
            if tuple(budget) != stored:
                # e.g. an accountant unpickled from an edited state: the ledger's own budget
                # is the authority, never a copy carried by the caller
                raise BudgetStoreError(
                    f"The ledger {self.path!r} has the budget (epsilon, delta, slack) = "
                    f"{stored}, but this accountant carries {tuple(budget)}. Refusing to "
                    "spend; nothing was recorded."
                )
            if not admissible(before.plus(epsilon, delta).rounded(up=True)):
                return False, before.rounded()  # commits nothing but a migration, if any
            cur = conn.execute(
                "INSERT INTO spends (epsilon, delta, eps_sq, drift, pid, time) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (epsilon, delta, *spend_terms(epsilon), os.getpid(), time.time()),
            )
            _write_totals(conn, before.plus(epsilon, delta, seq=cur.lastrowid))
        return True, before.rounded()
