"""The default accountant, which estimators given ``accountant=None`` spend from.

Resolution order (at ``fit``): the innermost ``with BudgetAccountant(...)`` block of this
process, else the accountant made default by ``set_default``, else the default of the process
that started this one (recursively), else the session's global ledger (``epsilon=inf``,
``delta=1``: it never refuses, it records).

Worker processes (joblib/loky, multiprocessing, subprocesses) must resolve the same default as
the process that started them, or a ``with`` block around ``cross_val_score(..., n_jobs=2)``
would be a silent fork of the budget. The mechanism:

* A *session* is a private directory. The process that owns it publishes its current default
  there (``default.json``, replaced atomically): the ledger's path and id, or "defer to the
  session of my parent", or nothing (then the session's ``global.sqlite`` is the default).
* The first dpreg process of a tree owns a session; so does any process that enters a ``with``
  block or calls ``set_default`` (its own blocks must reach *its* workers). Every other process
  follows the session of its parent.
* Children find their parent's session through the environment variable
  ``DPREG_ACCOUNTING_SESSION`` (inherited by processes started after it was set) and through a
  per-user registry keyed by process id (``dpreg-sessions-<uid>`` in the temporary directory,
  mode 0700, ignored if owned by someone else), which also reaches workers started *before*
  their parent imported dpreg or entered a ``with`` block (loky keeps its workers across calls).
  A multiprocessing worker looks up the process that started it
  (``multiprocessing.parent_process()``) before its OS parent: with the forkserver start
  method the OS parent is the fork server, which may predate ``import dpreg`` and then has
  neither an entry nor the variable.
* A multiprocessing worker that finds neither the variable nor a usable registry cannot know
  its parent's default: its ``accountant=None`` fits raise ``BudgetStoreError`` rather than
  charge a ledger of its own.

Processes on other machines cannot reach any of this: give them an accountant with a ``path``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import multiprocessing.process
import os
import shutil
import tempfile
import threading
import uuid

from ..exceptions import BudgetStoreError
from ._store import LedgerStore

ENV = "DPREG_ACCOUNTING_SESSION"
_POINTER = "default.json"
_GLOBAL = "global.sqlite"
_GLOBAL_BUDGET = (float("inf"), 1.0, 0.0)
_MAX_HOPS = 64

_lock = threading.RLock()
_stack = []  # accountants of active ``with`` blocks in this process, innermost last
_base = None  # the accountant made default by set_default()
_pid = None  # the process the state below belongs to (a forked child inherits a copy)
_own = None  # the session directory this process owns, or None
_inherited = None  # the session directory of the parent, or None
_globals = {}  # session directory -> its global accountant (cache)
_unknown = False  # a multiprocessing worker that cannot find its parent's session
_stale_mp_parent = None  # multiprocessing's parent record inherited through a plain os.fork()


# ------------------------------------------------------------------ the per-user registry
def _registry():
    uid = os.getuid() if hasattr(os, "getuid") else "user"  # Windows: %TEMP% is per user
    return os.path.join(tempfile.gettempdir(), f"dpreg-sessions-{uid}")


def _registry_is_ours(directory):
    if not hasattr(os, "getuid"):
        return os.path.isdir(directory)
    try:
        st = os.stat(directory)
    except OSError:
        return False
    # another user could plant a directory here to redirect our workers to their ledger
    return st.st_uid == os.getuid() and not st.st_mode & 0o077


def _start_time(pid):
    """The kernel's start time of process ``pid`` (Linux ``/proc``), or None where unknown.

    A registry entry is keyed by pid, and pids are reused: the entry carries its writer's
    start time, and a follower ignores it when the process now at that pid started at another
    time (session-21 audit, finding 6: an unrelated process that got a dead session's pid led
    its children to that session's ledger)."""
    try:
        with open(f"/proc/{int(pid)}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except (OSError, ValueError):
        return None
    # field 2 (the command) is in parentheses and may hold spaces: count after its last ")"
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None  # field 22 of proc(5), in clock ticks


def _register():
    """Record, under this pid, the session this process's children must follow."""
    directory = _registry()
    with contextlib.suppress(OSError):  # read-only temp dir: children rely on the variable
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not _registry_is_ours(directory):
            return
        _prune(directory)
        entry = os.path.join(directory, str(os.getpid()))
        tmp = f"{entry}.{uuid.uuid4().hex}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(f"{_start_time(os.getpid()) or ''}\n{_child_session()}")
        os.replace(tmp, entry)
        atexit.register(_remove, entry, os.getpid(), False)


def _prune(directory):
    """Drop entries of dead processes (workers killed at shutdown skip their atexit), so that
    a reused pid does not lead its children to a dead session."""
    if os.name != "posix":  # os.kill(pid, 0) probes only on POSIX (it terminates on Windows)
        return
    for name in os.listdir(directory):
        if not name.isdigit():
            continue
        try:
            os.kill(int(name), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, name))
        except OSError:  # alive but not ours to signal
            pass


def _mp_parent():
    """The pid of the process that started this multiprocessing worker, or None."""
    parent = multiprocessing.process.parent_process()
    # After a plain os.fork() in a worker the child still holds the worker's record, which
    # names the worker's parent, not the worker: the OS parent is the right one then.
    if parent is None or parent is _stale_mp_parent:
        return None
    return parent.pid


def _parent_pids():
    # The multiprocessing parent first: with the forkserver start method the OS parent is the
    # fork server, whose entry (if it imported dpreg) is never updated after it started.
    pids = [_mp_parent(), os.getppid()]
    return [pid for i, pid in enumerate(pids) if pid is not None and pid not in pids[:i]]


def _parent_registered():
    directory = _registry()
    if not _registry_is_ours(directory):
        return None
    for pid in _parent_pids():
        try:
            with open(os.path.join(directory, str(pid)), encoding="utf-8") as fh:
                started, _, entry = fh.read().partition("\n")
        except OSError:
            continue
        if started and started != _start_time(pid):
            continue  # written by an earlier process that had this pid: not our parent
        if entry:
            return entry
    return None


def _cannot_know():
    """A multiprocessing worker with neither the variable nor a usable registry: its parent
    may be a dpreg process inside a ``with`` block (a forkserver started before ``import
    dpreg`` hands its workers no variable), so a default of its own could escape the budget.
    With a usable registry, a parent without an entry has not imported dpreg (yet): it has no
    budget to escape, and the per-fit re-check follows it once it registers."""
    if _mp_parent() is None:
        return False
    directory = _registry()
    return os.path.lexists(directory) and not _registry_is_ours(directory)


def _unknown_error():
    return BudgetStoreError(
        "This worker process cannot find the default accountant of the process that started "
        f"it: the {ENV} variable is not set (a forkserver started before `import dpreg` does "
        f"not pass it on) and the session registry {_registry()!r} is not usable (it must be "
        "a directory owned by you with mode 0700). Rather than charge a ledger of its own, an "
        "estimator given accountant=None refuses here; nothing was spent. Import dpreg before "
        "creating the process pool, or give the estimator an explicit accountant= (one with a "
        "path every process can reach)."
    )


def _remove(path, owner_pid, is_dir):
    if os.getpid() != owner_pid:
        return
    if is_dir:
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


# ------------------------------------------------------------------ sessions
def _child_session():
    return _own or _inherited


def _new_session():
    global _own
    _own = os.path.join(tempfile.gettempdir(), f"dpreg-session-{uuid.uuid4().hex}")
    os.makedirs(_own, mode=0o700)
    atexit.register(_remove, _own, os.getpid(), True)
    os.environ[ENV] = _own
    _register()
    _publish()


def _sync():
    """Bring this process's view of its sessions up to date (fork, late parent import)."""
    global _pid, _own, _inherited, _base, _unknown
    if _pid != os.getpid():  # first call, or a forked child holding its parent's state
        env = os.environ.get(ENV)
        _pid, _own = os.getpid(), None
        # A forked child holds copies of the parent's ``with`` stack and set_default()
        # accountant as they were at fork time. Returning them would charge that ledger for
        # the child's whole life (a fork pool outlives the block it was created in) while the
        # parent's later blocks never reach it. Drop them: the child follows the default the
        # parent publishes in its session, read at each fit, as spawned workers do.
        _stack.clear()
        _base = None
        _inherited = _parent_registered() or env
        _unknown = _inherited is None and _cannot_know()
        if _unknown:
            return  # current() refuses; a ``with`` block here still makes a session
        if _inherited is None:
            _new_session()
        else:
            os.environ[ENV] = _inherited
            _register()
        return
    parent = _parent_registered()
    if parent is not None and parent != _own and parent != _inherited:
        _inherited = parent  # the parent imported dpreg or entered a ``with`` after we started
        _unknown = False
        if _own is None:
            os.environ[ENV] = parent
            _register()
        else:
            _publish()


def _publish():
    """Owner only: write what this session's followers must use now."""
    pointer = os.path.join(_own, _POINTER)
    top = _stack[-1] if _stack else _base
    if top is not None:
        record = {"state": top.__getstate__()}
    elif _inherited is not None:
        record = {"defer": _inherited}
    elif _unknown:
        record = {"unknown": True}  # this worker's own children cannot know it either
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(pointer)
        return
    tmp = f"{pointer}.{uuid.uuid4().hex}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    os.replace(tmp, pointer)  # atomic: a reader sees the old or the new default, never half


def _from_state(state):
    from ._accountant import BudgetAccountant  # the class imports this module

    acc = BudgetAccountant.__new__(BudgetAccountant)
    acc.__setstate__(state)
    return acc


def _global_accountant(session):
    if session not in _globals:
        if not os.path.isdir(session):  # never re-create a session whose owner exited
            raise _gone_error(session)
        path = os.path.join(session, _GLOBAL)
        store, budget, _ = LedgerStore.create_or_open(path, _GLOBAL_BUDGET, 30.0, durable=False)
        state = {
            "path": store.path,
            "ledger_id": store.ledger_id,
            "timeout": store.timeout,
            "durable": False,
            "budget": budget,
        }
        _globals[session] = _from_state(state)
    return _globals[session]


def _gone_error(session):
    if session == _own:  # alive, so its own directory was removed from outside
        return BudgetStoreError(
            f"This process's accounting session {session!r} was removed while the process "
            "runs (a temporary-directory cleaner?). Its global ledger and the default it "
            "publishes to its workers are gone, so an estimator given accountant=None refuses "
            "rather than start a new ledger; nothing was spent. Pass an explicit accountant= "
            "(one with a path), or restart the process."
        )
    return BudgetStoreError(
        f"The session {session!r} that this process's default accountant comes from is gone: "
        "the process that owned it (the one that started this process, or an ancestor) has "
        "exited. Its default may have been a `with BudgetAccountant(...)` block, so charging "
        "a ledger of this process's own could escape that budget; an estimator given "
        "accountant=None refuses instead, and nothing was spent. Pass an explicit accountant= "
        "(one with a path) to processes that outlive their parent."
    )


def _follow(session):
    for _ in range(_MAX_HOPS):
        # A missing directory is a session whose owner exited (atexit removed it): refuse,
        # rather than re-create it and charge its global ledger (session-21 audit, finding 7
        # found the cached ledger failing with an unclear store error).
        if not os.path.isdir(session):
            raise _gone_error(session)
        try:
            with open(os.path.join(session, _POINTER), encoding="utf-8") as fh:
                record = json.load(fh)
        except FileNotFoundError:
            return _global_accountant(session)
        if "state" in record:
            return _from_state(record["state"])
        if "unknown" in record:
            raise _unknown_error()
        session = record["defer"]
    raise BudgetStoreError("The default accountant's sessions form a cycle; pass an accountant.")


# ------------------------------------------------------------------ public helpers
def current():
    """The accountant ``accountant=None`` resolves to now."""
    with _lock:
        _sync()
        if _stack:
            return _stack[-1]
        if _base is not None:
            return _base
        if _own is None and _inherited is None:  # only when _unknown
            raise _unknown_error()
        return _follow(_own or _inherited)


def _changed():
    _sync()
    if _own is None:  # this process's own default must reach the workers it starts
        _new_session()
    else:
        _publish()


def push(acc):
    with _lock:
        _stack.append(acc)
        _changed()


def pop(acc):
    with _lock:
        for i in range(len(_stack) - 1, -1, -1):
            if _stack[i] is acc:
                del _stack[i]
                break
        _changed()


def set_base(acc):
    global _base
    with _lock:
        _base = acc
        _changed()


def _after_fork_in_child():
    global _lock, _stale_mp_parent
    # The child has only the forking thread: a lock another thread held at the fork (it is
    # held during file I/O) would never be released, and every default lookup would hang.
    # The state it guards is re-derived in the child anyway (_sync on the new pid).
    _lock = threading.RLock()
    # Runs before multiprocessing's bootstrap replaces the record in a worker it forks: what
    # is still there afterwards was inherited through a plain os.fork() (see _mp_parent).
    _stale_mp_parent = multiprocessing.process.parent_process()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

with _lock:
    _sync()
