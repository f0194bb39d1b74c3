"""Sequential composition of (epsilon, delta) spends.

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

Both bounds depend on the spends only through four sums (sum eps_i, sum delta_i, sum eps_i^2,
sum eps_i tanh(eps_i / 2)), so the ledger store keeps the per-spend terms and exact running
totals of them (:mod:`dpreg.accounting._totals`), and composes from those: a check never has
to replay the history.

The accountant reports the smaller of the two epsilons that fits its budget (or the smaller of
the two if neither fits), always with the delta that goes with it; a spend is admitted when either
theorem's total fits.
"""

from __future__ import annotations

import math
from typing import NamedTuple

# A spend fits when the composed total exceeds the budget by at most this *relative* amount, so
# that spending exactly the remainder (e.g. 0.1 + 0.2 + 0.7 of 1.0) is not refused by rounding.
# It is relative so that a tiny delta budget (1e-10) is not loosened by an absolute slack.
TOLERANCE = 1e-12


class Sums(NamedTuple):
    """The sufficient statistics of a list of spends for both composition theorems."""

    count: int = 0
    epsilon: float = 0.0
    delta: float = 0.0
    eps_sq: float = 0.0
    drift: float = 0.0

    def plus(self, epsilon, delta, times=1):
        """The sums after ``times`` more spends of ``(epsilon, delta)``."""
        sq, drift = spend_terms(epsilon)
        return Sums(
            self.count + times,
            self.epsilon + times * epsilon,
            self.delta + times * delta,
            self.eps_sq + times * sq,
            self.drift + times * drift,
        )


def spend_terms(epsilon):
    """Per-spend terms of advanced composition: eps^2 and eps (e^eps - 1)/(e^eps + 1)."""
    return epsilon * epsilon, epsilon * math.tanh(epsilon / 2.0)  # (e^x-1)/(e^x+1) = tanh(x/2)


def sums_of(spends):
    """:class:`Sums` of an iterable of ``(epsilon, delta)`` pairs."""
    total = Sums()
    for eps, delta in spends:
        total = total.plus(float(eps), float(delta))
    return total


def candidate_totals(sums, slack=0.0):
    """Every ``(epsilon, delta)`` total that the two theorems prove for ``sums``.

    Basic composition always; advanced composition too when ``slack > 0`` and it gives the
    smaller epsilon (it always costs more delta, so otherwise it proves nothing new)."""
    if sums.count == 0:
        return [(0.0, 0.0)]
    basic = (sums.epsilon, min(sums.delta, 1.0))
    if slack <= 0 or math.isinf(sums.epsilon):
        return [basic]
    eps_adv = math.sqrt(2.0 * math.log(1.0 / slack) * sums.eps_sq) + sums.drift
    if eps_adv < sums.epsilon:
        return [(eps_adv, min(sums.delta + slack, 1.0)), basic]
    return [basic]


def _fits(total, epsilon_total, delta_total, tolerance):
    eps, delta = total
    return eps <= epsilon_total * (1 + tolerance) and delta <= delta_total * (1 + tolerance)


def compose_sums(sums, slack=0.0, budget=None):
    """Total ``(epsilon, delta)`` of the spends summarised by ``sums`` (the tighter bound).

    Both totals are valid guarantees for the same spends. Without ``budget`` the one with the
    smaller epsilon is reported; with ``budget = (epsilon_total, delta_total)`` the one with
    the smaller epsilon among those that fit the budget (advanced composition pays its slack
    in delta, so with a small delta budget the basic total may be the one that fits)."""
    totals = candidate_totals(sums, slack)
    if budget is not None:
        fitting = [t for t in totals if _fits(t, *budget, TOLERANCE)]
        if fitting:
            return fitting[0]
    return totals[0]


def within(sums, slack, epsilon_total, delta_total, tolerance=TOLERANCE):
    """Whether the composed spends fit in the budget ``(epsilon_total, delta_total)``:
    whether either theorem proves a total inside it (session-21 audit, finding 8: testing
    only the smaller epsilon refused spends that basic composition admits)."""
    return any(
        _fits(t, epsilon_total, delta_total, tolerance) for t in candidate_totals(sums, slack)
    )
