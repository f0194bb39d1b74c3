"""Privacy budget accounting by sequential composition.

Guarantee
---------
If mechanisms M_1, ..., M_k are (eps_i, delta_i)-DP on the same data (replace-one adjacency),
their joint release is

* (sum eps_i, sum delta_i)-DP (basic composition, Dwork et al. 2006), and
* for any slack delta' > 0, (eps_adv, sum delta_i + delta')-DP with
  eps_adv = sqrt(2 log(1/delta') * sum eps_i^2) + sum eps_i (e^{eps_i} - 1) / (e^{eps_i} + 1)
  (heterogeneous advanced composition, Kairouz, Oh & Viswanath 2015, Thm 3.5; it follows from
  the optimal composition theorem by bounding the privacy-loss random variable with
  Azuma--Hoeffding: each loss has mean at most eps_i (e^{eps_i}-1)/(e^{eps_i}+1) and range
  [-eps_i, eps_i]).

The accountant reports the smaller of the two epsilons, always with the delta that goes with it.
"""

from __future__ import annotations

import math
import numbers

from ._validation import check_delta
from .exceptions import BudgetExceededError


class BudgetAccountant:
    """A shared privacy ledger with a total budget ``(epsilon, delta)``.

    Parameters
    ----------
    epsilon : float, default=inf
        Total epsilon that may be spent.
    delta : float, default=0.0
        Total delta that may be spent.
    slack : float, default=0.0
        The delta' of advanced composition. With ``slack=0`` only basic composition is used.

    Notes
    -----
    Estimators given an accountant call :meth:`check` before they touch the data and
    :meth:`spend` after a successful fit. The ledger is shared by identity: ``copy.deepcopy``
    and :func:`sklearn.base.clone` return the *same* accountant, so every clone made by
    ``GridSearchCV`` or ``cross_val_score`` spends from one budget. (Clones sent to other
    processes with ``n_jobs > 1`` cannot share a Python object; use ``n_jobs=1`` when the
    ledger matters.)

    Examples
    --------
    >>> from dpreg import BudgetAccountant
    >>> acc = BudgetAccountant(epsilon=1.0)
    >>> acc.spend(0.25, 0.0)
    >>> acc.spent
    (0.25, 0.0)
    >>> acc.remaining()
    (0.75, 0.0)
    """

    def __init__(self, epsilon=math.inf, delta=0.0, slack=0.0):
        if (
            isinstance(epsilon, bool)
            or not isinstance(epsilon, numbers.Real)
            or math.isnan(epsilon)
            or epsilon < 0
        ):
            raise ValueError(f"epsilon must be a number >= 0 (inf allowed), got {epsilon!r}.")
        self.epsilon = float(epsilon)
        self.delta = check_delta(delta) if delta != 1 else 1.0
        self.slack = check_delta(slack)
        if self.slack > self.delta:
            raise ValueError("slack must not exceed the total delta.")
        self._ledger = []

    # The ledger is shared by identity through sklearn.base.clone (which deep-copies
    # non-estimator parameters) so that cross-validation cannot silently reset the budget.
    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __repr__(self):
        return (
            f"BudgetAccountant(epsilon={self.epsilon}, delta={self.delta}, slack={self.slack}, "
            f"spent={self.spent})"
        )

    def __len__(self):
        return len(self._ledger)

    @property
    def ledger(self):
        """List of ``(epsilon, delta)`` spends, oldest first."""
        return list(self._ledger)

    @staticmethod
    def compose(spends, slack=0.0):
        """Total ``(epsilon, delta)`` of a list of spends (the tighter of basic and advanced)."""
        spends = list(spends)
        if not spends:
            return 0.0, 0.0
        eps_basic = sum(e for e, _ in spends)
        delta_basic = sum(d for _, d in spends)
        if slack <= 0 or math.isinf(eps_basic):
            return eps_basic, min(delta_basic, 1.0)
        sq = sum(e * e for e, _ in spends)
        drift = sum(e * math.tanh(e / 2.0) for e, _ in spends)  # (e^x-1)/(e^x+1) = tanh(x/2)
        eps_adv = math.sqrt(2.0 * math.log(1.0 / slack) * sq) + drift
        if eps_adv < eps_basic:
            return eps_adv, min(delta_basic + slack, 1.0)
        return eps_basic, min(delta_basic, 1.0)

    @property
    def spent(self):
        """Total ``(epsilon, delta)`` spent so far."""
        return self.compose(self._ledger, self.slack)

    def remaining(self):
        """Budget left, as ``(epsilon, delta)`` under basic composition of what remains."""
        eps, delta = self.spent
        return max(self.epsilon - eps, 0.0), max(self.delta - delta, 0.0)

    @staticmethod
    def _check_spend(epsilon, delta):
        # NaN compares False with everything and would silently disable every later check.
        if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
            raise ValueError(f"A spend's epsilon must be a non-negative number, got {epsilon!r}.")
        if math.isnan(epsilon) or epsilon < 0:
            raise ValueError(f"A spend's epsilon must be a non-negative number, got {epsilon!r}.")
        return float(epsilon), check_delta(delta)

    def check(self, epsilon, delta=0.0):
        """Raise :class:`BudgetExceededError` if spending ``(epsilon, delta)`` would overrun."""
        epsilon, delta = self._check_spend(epsilon, delta)
        eps_new, delta_new = self.compose(
            self._ledger + [(float(epsilon), float(delta))], self.slack
        )
        tol = 1e-12
        if eps_new > self.epsilon + tol or delta_new > self.delta + tol:
            eps_now, delta_now = self.spent
            raise BudgetExceededError(
                f"Privacy budget exceeded: spending (epsilon={epsilon}, delta={delta}) on top of "
                f"(epsilon={eps_now:.6g}, delta={delta_now:.3g}) would exceed the total "
                f"(epsilon={self.epsilon}, delta={self.delta})."
            )
        return True

    def spend(self, epsilon, delta=0.0):
        """Record a spend of ``(epsilon, delta)`` after checking the budget."""
        epsilon, delta = self._check_spend(epsilon, delta)
        self.check(epsilon, delta)
        self._ledger.append((float(epsilon), float(delta)))


def check_accountant(accountant):
    """Return ``accountant`` if it is a :class:`BudgetAccountant` (or None), else raise."""
    if accountant is None or isinstance(accountant, BudgetAccountant):
        return accountant
    raise ValueError(f"accountant must be a BudgetAccountant or None, got {accountant!r}.")
