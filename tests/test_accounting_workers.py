"""The default accountant in worker processes: fork, forkserver, and fork-safety."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dpreg

ROOT = Path(dpreg.__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(os.name != "posix", reason="fork and forkserver are POSIX-only")


def _run_script(tmp_path, code, *args):
    """Run ``code`` as a script file (forkserver workers re-import ``__main__`` from it)."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    path = os.environ.get("PYTHONPATH", "")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), path])))
    env.pop("DPREG_ACCOUNTING_SESSION", None)  # a fresh process tree, not pytest's session
    # ... and not a child of this (registered) pytest process either: the registry would hand
    # the script this session, whose global ledger the other pytest-xdist worker charges
    # concurrently (it counted 3 global spends for 2). An intermediate interpreter that never
    # imports dpreg has no registry entry, so the script starts a session of its own.
    relay = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"
    out = subprocess.run(
        [sys.executable, "-c", relay, sys.executable, str(script), *map(str, args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


_FORK_POOL = """
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

from dpreg import BudgetAccountant


def spend(_):
    BudgetAccountant.default().spend(1.0)


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    with BudgetAccountant(epsilon=100.0) as A:
        pool = ctx.Pool(2)  # forked inside block A: the workers hold copies of its stack
        pool.map(spend, range(2), chunksize=1)
    with BudgetAccountant(epsilon=100.0) as B:
        pool.map(spend, range(2), chunksize=1)
    glob = BudgetAccountant.default()
    before = len(glob)
    pool.map(spend, range(2), chunksize=1)
    pool.close()
    pool.join()
    print(A.spent[0], B.spent[0], len(glob) - before)
    C = BudgetAccountant(epsilon=100.0).set_default()
    with ProcessPoolExecutor(2, mp_context=ctx) as ex:
        list(ex.map(spend, range(2)))
        D = BudgetAccountant(epsilon=100.0).set_default()
        list(ex.map(spend, range(2)))
    print(C.spent[0], D.spent[0])
"""


def test_forked_pool_follows_the_parents_current_default(tmp_path):
    # audit s21 finding 1: workers forked inside ``with A`` (or after A.set_default()) kept
    # charging A; a later block B or set_default(D) in the parent never reached them.
    first, second = _run_script(tmp_path, _FORK_POOL).split("\n")[:2]
    assert first.split() == ["2.0", "2.0", "2"]  # A: its own 2 fits; B: 2; global: 2
    assert second.split() == ["2.0", "2.0"]  # C then D: 2 fits each


_FORKSERVER_EARLY = """
import multiprocessing as mp
import os
import sys


def spend(_):
    from dpreg import BudgetAccountant
    from dpreg.exceptions import BudgetStoreError

    try:
        BudgetAccountant.default().spend(1.0)
    except BudgetStoreError as exc:
        return "refused: " + str(exc)
    return "spent"


def nested(_):
    # a plain os.fork() in a worker: the grandchild follows the worker's block, not main's
    from dpreg import BudgetAccountant

    with BudgetAccountant(epsilon=10.0) as W:
        pid = os.fork()
        if pid == 0:
            BudgetAccountant.default().spend(1.0)
            os._exit(0)
        os.waitpid(pid, 0)
    return W.spent[0]


if __name__ == "__main__":
    ctx = mp.get_context("forkserver")
    pool = ctx.Pool(2)  # the fork server starts before dpreg is imported
    pool.map(len, ["a", "b"])
    if sys.argv[1] == "unusable":  # a registry dpreg must not trust (group/world access)
        registry = os.path.join(os.environ["TMPDIR"], f"dpreg-sessions-{os.getuid()}")
        os.mkdir(registry)
        os.chmod(registry, 0o755)
    from dpreg import BudgetAccountant

    with BudgetAccountant(epsilon=5.0) as acc:
        results = pool.map(spend, range(2), chunksize=1)
        nested_spent = pool.apply(nested, (0,))
    pool.close()
    pool.join()
    print(acc.spent[0], nested_spent)
    for r in results:
        print(r)
"""


@pytest.mark.parametrize("registry", ["usable", "unusable"])
def test_forkserver_started_before_import_follows_or_refuses(tmp_path, monkeypatch, registry):
    # audit s21 finding 2: the workers of a fork server started before `import dpreg` had no
    # variable and no registry entry from their OS parent (the fork server) and silently
    # charged a private ledger with epsilon=inf; the with-block recorded nothing.
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # a registry of this test's own
    out = _run_script(tmp_path, _FORKSERVER_EARLY, registry).splitlines()
    spent, nested_spent = map(float, out[0].split())
    assert nested_spent == 1.0
    if registry == "usable":  # found through multiprocessing.parent_process()
        assert spent == 2.0 and out[1:] == ["spent", "spent"]
    else:  # cannot be found: refused loudly, nothing charged anywhere
        assert spent == 0.0 and len(out[1:]) == 2
        assert all(r.startswith("refused: ") and "Import dpreg before" in r for r in out[1:])


_FORK_WHILE_LOCKED = """
import os
import signal
import threading

from dpreg import BudgetAccountant
from dpreg.accounting import _default

held, release = threading.Event(), threading.Event()


def hold():
    with _default._lock:  # as a thread resolving the default (file I/O) would
        held.set()
        release.wait()


glob = BudgetAccountant.default()  # shared with whoever else follows the same session
before = len(glob)
threading.Thread(target=hold, daemon=True).start()
held.wait()
pid = os.fork()
if pid == 0:
    signal.alarm(10)  # a child deadlocked on the copied lock is killed, not left hanging
    BudgetAccountant.default().spend(0.5)
    os._exit(0)
_, status = os.waitpid(pid, 0)
release.set()
print("ok" if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else f"hung {status}")
print(len(glob) - before)
"""


def test_fork_while_another_thread_holds_the_lock(tmp_path):
    # audit s21 finding 4: the child inherited the module lock held by a thread that does not
    # exist in it, and its first default lookup blocked forever
    assert _run_script(tmp_path, _FORK_WHILE_LOCKED).split() == ["ok", "1"]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="start times from /proc")
def test_a_registry_entry_of_an_earlier_process_with_the_same_pid_is_ignored(tmp_path, monkeypatch):
    # audit s21 finding 6: entries are keyed by pid, which the system reuses; a process that
    # got a dead session's pid led its children to that session's ledger. An entry carries its
    # writer's start time and is followed only while the process at that pid has it.
    from dpreg.accounting import _default

    registry = tmp_path / "registry"
    registry.mkdir(mode=0o700)
    parent = os.getppid()
    monkeypatch.setattr(_default, "_registry", lambda: str(registry))
    monkeypatch.setattr(_default, "_parent_pids", lambda: [parent])
    started = _default._start_time(parent)
    assert started is not None and started == _default._start_time(parent)
    entry = registry / str(parent)
    entry.write_text(f"{started}\n/some/session")
    assert _default._parent_registered() == "/some/session"  # the control: followed
    entry.write_text(f"{int(started) - 1}\n/dead/session")  # same pid, earlier process
    assert _default._parent_registered() is None
    entry.write_text("\n/unstamped/session")  # a writer without /proc: no check possible
    assert _default._parent_registered() == "/unstamped/session"


_OUTLIVING_CHILD = """
import os
import sys
import time

from dpreg import BudgetAccountant

out, parent = sys.argv[1], int(sys.argv[2])
BudgetAccountant.default().spend(1.0)  # the parent's global ledger
with open(out + ".ready", "w") as fh:
    fh.write("ready")
while os.getppid() == parent:
    time.sleep(0.05)
try:
    BudgetAccountant.default().spend(1.0)
    result = "spent"
except Exception as exc:
    result = f"{type(exc).__name__}: {exc}"
with open(out + ".tmp", "w") as fh:
    fh.write(result)
os.replace(out + ".tmp", out)
"""

_OUTLIVED_PARENT = """
import os
import subprocess
import sys
import time

import dpreg

child, out = sys.argv[1], sys.argv[2]
subprocess.Popen([sys.executable, child, out, str(os.getpid())])
deadline = time.monotonic() + 60
while not os.path.exists(out + ".ready") and time.monotonic() < deadline:
    time.sleep(0.05)
print(dpreg.BudgetAccountant.default().spent[0])
"""


def test_a_child_that_outlives_its_parent_refuses_clearly(tmp_path, monkeypatch):
    # audit s21 finding 7: the child's default is the parent's; once the parent has exited its
    # session is gone and the child cannot know what the parent's default was (perhaps a
    # `with` block), so it refuses with a clear message instead of an unclear store error,
    # and never re-creates the dead session.
    import time

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # sessions and registry of this test's own
    child = tmp_path / "child.py"
    child.write_text(textwrap.dedent(_OUTLIVING_CHILD))
    out = tmp_path / "child.out"
    spent = _run_script(tmp_path, _OUTLIVED_PARENT, child, out)
    assert float(spent) == 1.0  # the control: while the parent lived, its ledger was charged
    deadline = time.monotonic() + 60
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    result = out.read_text()
    assert result.startswith("BudgetStoreError") and "has exited" in result, result
    assert "nothing was spent" in result
    assert not list(tmp_path.glob("dpreg-session-*"))  # no dead session re-created


def test_a_removed_own_session_is_named_as_such(tmp_path):
    # a temp cleaner removing a live process's own session: the refusal must not claim that a
    # parent exited (the message of a followed session that is gone)
    code = """
import shutil
from dpreg import BudgetAccountant
from dpreg.accounting import _default
BudgetAccountant.default().spend(1.0)
shutil.rmtree(_default._own)
try:
    BudgetAccountant.default().spend(1.0)
    print("spent")
except Exception as exc:
    print(type(exc).__name__, exc)
"""
    out = _run_script(tmp_path, code).strip()
    assert out.startswith("BudgetStoreError") and "was removed while the process runs" in out
