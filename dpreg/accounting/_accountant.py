"""The :class:`BudgetAccountant`: a privacy budget whose ledger is shared by every process.

The composition theorems are in :mod:`dpreg.accounting._compose`, the shared SQLite store in
:mod:`dpreg.accounting._store`, the default accountant in :mod:`dpreg.accounting._default`.
"""

from __future__ import annotations

import math
import numbers
import os
import shutil
import tempfile
import weakref

from .._validation import check_delta
from ..exceptions import BudgetExceededError
from . import _default
from ._compose import TOLERANCE, Sums, compose_sums, sums_of, within
from ._store import LedgerStore

_SEARCH_HINT = (
    'With GridSearchCV, cross_val_score or cross_validate pass error_score="raise": otherwise '
    "a refused fit silently becomes a NaN score and the search picks another candidate."
)


def _check_total(value, name, upper):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or math.isnan(value)
        or value < 0
        or value > upper
    ):
        limit = "inf allowed" if math.isinf(upper) else f"at most {upper}"
        raise ValueError(f"{name} must be a number >= 0 ({limit}), got {value!r}.")
    return float(value)


def _check_spend(epsilon, delta):
    # NaN compares False with everything and would silently disable every later check.
    if (
        isinstance(epsilon, bool)
        or not isinstance(epsilon, numbers.Real)
        or math.isnan(epsilon)
        or epsilon < 0
    ):
        raise ValueError(f"A spend's epsilon must be a non-negative number, got {epsilon!r}.")
    return float(epsilon), check_delta(delta)


def _checked_sums(spends):
    return sums_of(_check_spend(epsilon, delta) for epsilon, delta in spends)


def _remove_private_dir(directory, owner_pid):
    # weakref.finalize also runs in a forked child that drops its copy: only the creator
    # may remove the store, or a child would pull the ledger from under its parent.
    if os.getpid() == owner_pid:
        shutil.rmtree(directory, ignore_errors=True)


class BudgetAccountant:
    """A privacy budget ``(epsilon, delta)`` with a ledger shared by every process.

    Parameters
    ----------
    epsilon : float or None, default=None
        Total epsilon that may be spent (``inf`` allowed). None means ``inf`` for a new
        ledger and the stored total for an existing ``path``.
    delta : float or None, default=None
        Total delta that may be spent, in [0, 1]. None means 0 for a new ledger and the
        stored total for an existing ``path``.
    slack : float or None, default=None
        The delta' of advanced composition (0: basic composition only). None means 0 for a
        new ledger and the stored value for an existing ``path``.
    path : str, path-like or None, default=None
        A file that holds the ledger. If it does not exist it is created; if it does, the
        accountant connects to the ledger in it: totals given explicitly must agree with the
        stored ones (``ValueError`` otherwise -- a budget is fixed when its ledger is
        created), totals left as None are adopted. Use it for a budget that outlives the
        Python session (an organisation's budget on a data set). With ``path=None`` the
        ledger lives in a private temporary file that worker processes on this machine can
        reach, removed when this accountant is garbage collected or Python exits.
    timeout : float, default=30.0
        Seconds to wait for a ledger file locked by another process before raising
        :class:`~dpreg.exceptions.BudgetStoreError`.

    Attributes
    ----------
    path : str
        Absolute path of the ledger file.
    ledger_id : str
        Identifier of the ledger; a file replaced by another ledger is refused.

    Notes
    -----
    **Atomic spends.** :meth:`spend` composes the ledger with the new spend and records it in
    one transaction under the file's write lock, and raises
    :class:`~dpreg.exceptions.BudgetExceededError` (recording nothing) if the total would
    exceed the budget. Concurrent fits in any number of processes can therefore never jointly
    exceed it. dpreg's estimators validate their parameters and the data's shape and values
    first (those errors cost nothing), then spend, then compute: the spend stays recorded
    even if the fit fails afterwards. :meth:`check` only looks; another process may spend
    between a check and a later spend.

    **Sharing.** ``copy.deepcopy`` and :func:`sklearn.base.clone` return the *same*
    accountant, so every clone made by ``GridSearchCV`` or ``cross_val_score`` spends from one
    budget. Pickling (``n_jobs > 1`` workers, ``joblib.dump``) carries only the path and the
    ledger id: the unpickled accountant reconnects to the same ledger at its first use, and if
    the file cannot be reached (another machine, the creating session has ended and removed
    its temporary ledger) it raises :class:`~dpreg.exceptions.BudgetStoreError` -- it never
    starts a fresh budget.

    **Default accountant.** Estimators given ``accountant=None`` spend from the default
    accountant, resolved when ``fit`` runs (so :func:`sklearn.base.clone` is unaffected):
    the innermost ``with BudgetAccountant(...) as acc:`` block (or :meth:`set_default`),
    else a global ledger with an infinite budget that records every fit (see
    :meth:`default`). Worker processes started from this session resolve the same default
    (a ``multiprocessing`` worker that cannot find it raises
    :class:`~dpreg.exceptions.BudgetStoreError` rather than charge a ledger of its own).

    Examples
    --------
    >>> from dpreg import BudgetAccountant
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> acc.spend(0.25, 0.0)
    >>> acc.spent
    (0.25, 0.0)
    >>> acc.remaining()
    (0.75, 0.0)
    >>> acc.remaining(3)  # the largest equal spends for 3 more fits
    (0.25, 0.0)
    >>> acc.remaining_count(0.2)  # how many more fits of epsilon=0.2 fit
    3
    """

    def __init__(self, epsilon=None, delta=None, slack=None, path=None, timeout=30.0):
        given = (
            None if epsilon is None else _check_total(epsilon, "epsilon", math.inf),
            None if delta is None else _check_total(delta, "delta", 1.0),
            None if slack is None else _check_total(slack, "slack", 1.0),
        )
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, numbers.Real)
            or not (0 < timeout < math.inf)
        ):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}.")
        new = (
            math.inf if given[0] is None else given[0],
            0.0 if given[1] is None else given[1],
            0.0 if given[2] is None else given[2],
        )
        if new[2] >= 1.0 or new[2] > new[1]:
            raise ValueError("slack must lie in [0, 1) and must not exceed the total delta.")
        if path is None:
            directory = tempfile.mkdtemp(prefix="dpreg-ledger-")
            store, budget, _ = LedgerStore.create_or_open(
                os.path.join(directory, "ledger.sqlite"), new, float(timeout), durable=False
            )
            self._finalizer = weakref.finalize(self, _remove_private_dir, directory, os.getpid())
        else:
            store, budget, created = LedgerStore.create_or_open(path, new, float(timeout))
            if not created:
                names = ("epsilon", "delta", "slack")
                for name, value, stored in zip(names, given, budget):
                    if value is not None and value != stored:
                        raise ValueError(
                            f"The ledger {store.path!r} has {name}={stored}, not {value}: a "
                            "budget is fixed when its ledger is created. Leave the totals as "
                            "None to adopt the stored ones."
                        )
        self._attach(store, budget)

    def _attach(self, store, budget):
        self._store = store
        self._budget = tuple(float(b) for b in budget)

    # Read-only: a budget is fixed when its ledger is created. An assignable ``epsilon`` let
    # ``acc.epsilon = 5`` admit spends past the stored budget and travel with pickled copies.
    epsilon = property(lambda self: self._budget[0], doc="Total epsilon of the budget.")
    delta = property(lambda self: self._budget[1], doc="Total delta of the budget.")
    slack = property(lambda self: self._budget[2], doc="The delta' of advanced composition.")
    path = property(lambda self: self._store.path, doc="Absolute path of the ledger file.")
    ledger_id = property(lambda self: self._store.ledger_id, doc="Identifier of the ledger.")
    timeout = property(lambda self: self._store.timeout, doc="Seconds to wait for a lock.")

    def __setattr__(self, name, value):
        if name in ("epsilon", "delta", "slack", "path", "ledger_id", "timeout"):
            raise AttributeError(
                f"BudgetAccountant.{name} is read-only: a budget and its ledger are fixed when "
                "the ledger is created. Create a new BudgetAccountant (with another path) for "
                "another budget."
            )
        super().__setattr__(name, value)

    # -------------------------------------------------------------- sharing and pickling
    # clone() deep-copies non-estimator parameters: returning self keeps one ledger.
    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __getstate__(self):
        s = self._store
        return {
            "path": s.path,
            "ledger_id": s.ledger_id,
            "timeout": s.timeout,
            "durable": s.durable,
            "budget": (self.epsilon, self.delta, self.slack),
        }

    def __setstate__(self, state):
        # Reconnect lazily: unpickling never fails, the first use refuses if the store is gone.
        store = LedgerStore(state["path"], state["ledger_id"], state["timeout"], state["durable"])
        self._attach(store, tuple(state["budget"]))

    def __eq__(self, other):
        return isinstance(other, BudgetAccountant) and other.ledger_id == self.ledger_id

    def __hash__(self):
        return hash(self.ledger_id)

    def __repr__(self):
        return (
            f"BudgetAccountant(epsilon={self.epsilon}, delta={self.delta}, slack={self.slack}, "
            f"path={self.path!r})"
        )

    def __len__(self):
        return self._store.sums().count

    def __bool__(self):  # an empty ledger is still an accountant, not a missing one
        return True

    # -------------------------------------------------------------- the default accountant
    def __enter__(self):
        _default.push(self)
        return self

    def __exit__(self, *exc_info):
        _default.pop(self)
        return False

    def set_default(self):
        """Make this accountant the default for estimators given ``accountant=None``."""
        _default.set_base(self)
        return self

    @staticmethod
    def default():
        """The accountant that ``accountant=None`` resolves to now.

        The innermost active ``with`` block, else the one made default by
        :meth:`set_default`, else the session's global ledger: ``epsilon=inf``, ``delta=1``
        (it never refuses, as diffprivlib's default) that records every fit of this Python
        session and of the worker processes it starts.
        """
        return _default.current()

    # -------------------------------------------------------------- reading the ledger
    @property
    def ledger(self):
        """List of ``(epsilon, delta)`` spends, oldest first, from every process."""
        return self._store.spends()

    @staticmethod
    def compose(spends, slack=0.0):
        """Total ``(epsilon, delta)`` of a list of spends (the tighter of basic and advanced)."""
        # the same checks as spend(): a NaN compares False with everything, and a negative
        # slack or spend would silently pass for basic composition or a smaller total
        return compose_sums(_checked_sums(spends), check_delta(slack, "slack"))

    @property
    def spent(self):
        """Total ``(epsilon, delta)`` spent so far, by every process."""
        return compose_sums(self._store.sums(), self.slack, (self.epsilon, self.delta))

    def total(self, spent_budget=None, slack=None):
        """Total ``(epsilon, delta)`` of ``spent_budget`` (default: this ledger's spends).

        ``slack`` defaults to the accountant's. As ``diffprivlib``'s ``total``.
        """
        slack = self.slack if slack is None else check_delta(slack, "slack")
        sums = self._store.sums() if spent_budget is None else _checked_sums(spent_budget)
        return compose_sums(sums, slack)

    def _fits(self, sums, tolerance=TOLERANCE):
        return within(sums, self.slack, self.epsilon, self.delta, tolerance)

    def remaining(self, k=None):
        """Budget left.

        Without ``k``: ``(epsilon, delta)`` left under basic composition of what remains
        (total minus spent). With ``k``: the largest ``(epsilon, delta)`` such that ``k``
        more spends of that size all fit (as diffprivlib's ``remaining(k)``); with a slack
        this accounts for advanced composition, and reserves the slack in the delta.
        """
        sums = self._store.sums()
        if k is None:
            eps, delta = compose_sums(sums, self.slack, (self.epsilon, self.delta))
            return max(self.epsilon - eps, 0.0), max(self.delta - delta, 0.0)
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}.")
        reserve = self.slack if self.slack > 0 else 0.0
        delta_k = max(self.delta - sums.delta - reserve, 0.0) / k
        if not self._fits(sums.plus(0.0, delta_k, k)):
            return 0.0, 0.0
        if math.isinf(self.epsilon):
            return math.inf, delta_k
        if self.slack == 0:  # basic composition is additive: split what is left evenly
            return max(self.epsilon - sums.epsilon, 0.0) / k, delta_k
        lo, hi = 0.0, self.epsilon
        if self._fits(sums.plus(hi, delta_k, k)):
            return hi, delta_k
        for _ in range(200):  # bisection: the composed epsilon grows with each spend's epsilon
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi):
                break
            # no tolerance here: k separate spends round differently from k * mid
            lo, hi = (mid, hi) if self._fits(sums.plus(mid, delta_k, k), 0.0) else (lo, mid)
        return lo, delta_k

    def remaining_count(self, epsilon, delta=0.0):
        """How many more spends of ``(epsilon, delta)`` (e.g. fits of one estimator) fit.

        Returns ``math.inf`` when the budget can never run out at that cost.
        """
        epsilon, delta = _check_spend(epsilon, delta)
        sums = self._store.sums()
        lo, hi = 0, 1
        while self._fits(sums.plus(epsilon, delta, hi)):
            lo, hi = hi, 2 * hi
            if hi > 2**53:
                return math.inf
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self._fits(sums.plus(epsilon, delta, mid)) else (lo, mid)
        return lo

    # -------------------------------------------------------------- spending
    def _refusal(self, epsilon, delta, before):
        eps_now, delta_now = compose_sums(before, self.slack, (self.epsilon, self.delta))
        if delta > 0 and self.delta == 0:
            return BudgetExceededError(
                f"This fit needs delta > 0 (it is (epsilon, delta)-DP, e.g. "
                f"PrivateProjectionMedian; requested delta={delta:.3g}), but the accountant's "
                "total delta is 0, the default of BudgetAccountant(). Give the accountant a "
                "delta budget: BudgetAccountant(epsilon=..., delta=...). Nothing was spent. "
                + _SEARCH_HINT
            )
        return BudgetExceededError(
            f"Privacy budget exceeded: spending (epsilon={epsilon:.6g}, delta={delta:.3g}) on "
            f"top of the (epsilon={eps_now:.6g}, delta={delta_now:.3g}) already spent would "
            f"exceed the total (epsilon={self.epsilon}, delta={self.delta}) of the ledger "
            # Not "no data were read": spend() is called after the data were validated (and
            # transformers, tools and PrivateSearchCV check the budget only there); what
            # every caller guarantees is that nothing was computed from them for release.
            f"{self.path!r}. Nothing was spent; nothing was released. " + _SEARCH_HINT
        )

    def check(self, epsilon, delta=0.0):
        """Raise :class:`BudgetExceededError` if spending ``(epsilon, delta)`` would overrun.

        Only a look: another process may spend in between. Use :meth:`spend` to reserve.
        """
        epsilon, delta = _check_spend(epsilon, delta)
        before = self._store.totals()
        # the same decision as spend(): on the exact sums, rounded up (see _totals)
        if not self._fits(before.plus(epsilon, delta).rounded(up=True)):
            raise self._refusal(epsilon, delta, before.rounded())
        return True

    def spend(self, epsilon, delta=0.0):
        """Atomically check the budget and record a spend of ``(epsilon, delta)``.

        Raises :class:`BudgetExceededError` (recording nothing) if it would overrun, and
        :class:`~dpreg.exceptions.BudgetStoreError` if the ledger store cannot be used.
        """
        epsilon, delta = _check_spend(epsilon, delta)
        recorded, before = self._store.reserve(epsilon, delta, self._fits, self._budget)
        if not recorded:
            raise self._refusal(epsilon, delta, before)


def check_accountant(accountant):
    """Resolve an estimator's ``accountant`` parameter at ``fit``.

    A :class:`BudgetAccountant` is returned as is; None resolves to
    :meth:`BudgetAccountant.default` (now, not at ``__init__``, so that ``clone`` and the
    ``with`` block both work); anything else raises ``ValueError``.
    """
    if accountant is None:
        return _default.current()
    if isinstance(accountant, BudgetAccountant):
        return accountant
    raise ValueError(f"accountant must be a BudgetAccountant or None, got {accountant!r}.")


__all__ = ["BudgetAccountant", "Sums", "check_accountant"]
