"""The default accountant, which estimators given ``accountant=None`` spend from.

Resolution order (at ``fit``): the innermost ``with BudgetAccountant(...)`` block of this
process, else the accountant made default by ``set_default``, else the session's global ledger
(``epsilon=inf``, ``delta=1``: it never refuses, it records).

Worker processes (joblib/loky, multiprocessing, subprocesses) must resolve the *same* default,
or a ``with`` block around ``cross_val_score(..., n_jobs=2)`` would be a silent fork of the
budget. The first process of a session that imports dpreg is its *root*: it names a private
session directory in the environment variable ``DPREG_ACCOUNTING_SESSION``, which every process
it starts inherits (whenever it was started: loky reuses workers across calls). The root
publishes its current default there (a small JSON file naming the ledger's path and id,
replaced atomically) and the global ledger lives there, so a worker reads the root's default
at the moment it fits. A ``with`` block inside a worker applies to that worker only.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
import threading
import uuid

from ._store import LedgerStore

ENV = "DPREG_ACCOUNTING_SESSION"
_POINTER = "default.json"
_GLOBAL = "global.sqlite"
_GLOBAL_BUDGET = (float("inf"), 1.0, 0.0)

_lock = threading.RLock()
_stack = []  # accountants of active ``with`` blocks in this process, innermost last
_base = None  # the accountant made default by set_default()
_global = None  # cached global accountant of this session


def _remove_session(directory, owner_pid):
    if os.getpid() == owner_pid:
        shutil.rmtree(directory, ignore_errors=True)


def _start_session():
    if ENV not in os.environ:
        directory = os.path.join(tempfile.gettempdir(), f"dpreg-session-{uuid.uuid4().hex}")
        os.environ[ENV] = f"{os.getpid()}:{directory}"
        atexit.register(_remove_session, directory, os.getpid())


def _session():
    """``(is_root, directory)`` of this process's session."""
    pid, _, directory = os.environ[ENV].partition(":")
    return pid == str(os.getpid()), directory


def _session_dir():
    _, directory = _session()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    return directory


def _from_state(state):
    from ._accountant import BudgetAccountant  # the class imports this module

    acc = BudgetAccountant.__new__(BudgetAccountant)
    acc.__setstate__(state)
    return acc


def _publish():
    """Root only: write the current explicit default for the session's other processes."""
    is_root, _ = _session()
    if not is_root:
        return
    top = _stack[-1] if _stack else _base
    pointer = os.path.join(_session_dir(), _POINTER)
    if top is None:
        if os.path.exists(pointer):
            os.unlink(pointer)
        return
    tmp = f"{pointer}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(top.__getstate__(), fh)
    os.replace(tmp, pointer)  # atomic: a reader sees the old or the new default, never half


def _published():
    _, directory = _session()
    try:
        with open(os.path.join(directory, _POINTER), encoding="utf-8") as fh:
            return _from_state(json.load(fh))
    except FileNotFoundError:
        return None


def _global_accountant():
    global _global
    directory = _session_dir()
    path = os.path.join(directory, _GLOBAL)
    if _global is None or _global.path != path:
        store, budget, _ = LedgerStore.create_or_open(path, _GLOBAL_BUDGET, 30.0, durable=False)
        _global = _from_state(
            {
                "path": store.path,
                "ledger_id": store.ledger_id,
                "timeout": store.timeout,
                "durable": False,
                "budget": budget,
            }
        )
    return _global


def current():
    """The accountant ``accountant=None`` resolves to now."""
    with _lock:
        if _stack:
            return _stack[-1]
        if _base is not None:
            return _base
        is_root, _ = _session()
        if not is_root:
            published = _published()
            if published is not None:
                return published
        return _global_accountant()


def push(acc):
    with _lock:
        _stack.append(acc)
        _publish()


def pop(acc):
    with _lock:
        for i in range(len(_stack) - 1, -1, -1):
            if _stack[i] is acc:
                del _stack[i]
                break
        _publish()


def set_base(acc):
    global _base
    with _lock:
        _base = acc
        _publish()


_start_session()
