"""Exact running totals of a ledger's spends, and how they are rounded for a decision.

Why running totals
------------------
Both composition theorems need only four sums over the spends (:mod:`._compose`). The store
keeps them in a one-row table updated in the same transaction as each recorded spend, so a
spend reads O(1) data instead of summing the whole ledger (version 1 of the ledger format did
the latter: each spend cost O(number of recorded spends)).

Why exact
---------
Every recorded term (epsilon, delta, fl(eps^2), fl(eps tanh(eps/2))) is a non-negative double,
i.e. an integer multiple of 2^-1074 (the smallest subnormal). A total is kept as that integer
(:data:`UNIT` = 2^-1074 units, arbitrary precision), so it is the exact sum of the recorded
terms, whatever their number and magnitudes (1 + 1e-17 + 1e-17 + ... loses nothing); a total
with an infinite term is ``inf``. It is rounded to a double only when read.

Rounding and the tolerance (why admission is never looser than the exact sum)
-----------------------------------------------------------------------------
Write u = 2^-53 and, for a real x >= 0, ceil(x) for the least double >= x (``inf`` above the
largest double). For a new spend the accountant is given, for each of the four sums, ceil(S)
of the *exact* sum S of the recorded terms and the new one (:meth:`Totals.plus` then
:meth:`Totals.rounded` with ``up=True``), and admits when
:func:`~dpreg.accounting._compose.within` holds against the double thresholds
T = fl(total * fl(1 + TOLERANCE)).

* **Basic composition.** For a double T and a real x, ceil(x) <= T if and only if x <= T
  (ceil(x) is the least double >= x). So the admitted ledger's exact sum of epsilons (and of
  deltas, since min(ceil(D), 1) = ceil(min(D, 1)) as 1 is a double) is at most T: the
  decision is the decision on the exact sums, with no summation error at all, for any number
  of spends. The epsilons and deltas are the spends themselves, so nothing else is rounded.
* **Advanced composition.** ceil(Q) >= Q and ceil(R) >= R for Q = sum fl(eps_i^2) and
  R = sum fl(eps_i tanh(eps_i/2)). What remains is a fixed handful of floating-point steps,
  the same as in version 1: fl(log(fl(1/slack))) (relative error <= 3u when slack <= 1/e, so
  that the log is >= 1), one product, sqrt (which halves a relative error), one sum, and the
  per-term roundings of fl(eps_i^2) and of ``tanh`` (a few u each; a sum of non-negative
  terms has at most the relative error of its worst term). The computed epsilon is therefore
  >= the exact formula times (1 - c u) with c < 8, and an admitted ledger's exact advanced
  epsilon is at most T (1 + 8u) -- beyond the tolerance's 1e-12 by less than 1e-15 relative,
  independently of the ledger's size. The delta side adds the slack once (one rounding).
  (A slack above 1/e, i.e. a delta above 0.37, protects nothing; there the log's relative
  error grows like u / log(1/slack), as it did in version 1.)

Version 1 summed in SQLite (``TOTAL``, a left-to-right double sum in the SQLite 3.40 that
Python ships with here), whose relative error bound is (n - 1) u for n non-negative terms
(Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, Sec. 4.2): it reaches the
whole tolerance 1e-12 at n ~ 9,000 spends, and a further float addition of the new spend
followed. The values reported to users (``spent``, ``remaining``, error messages) are the
exact totals rounded to nearest (:meth:`Totals.rounded`), so they are never less accurate
than version 1's either.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from ._compose import Sums, spend_terms

UNIT_EXPONENT = 1074  # a total is an integer number of 2^-1074, the smallest subnormal double
_SCALE = 1 << UNIT_EXPONENT
TERMS = ("epsilon", "delta", "eps_sq", "drift")


def units(x):
    """The double ``x`` >= 0 as an exact integer number of 2^-1074 (``inf`` stays ``inf``)."""
    if math.isinf(x):
        return math.inf
    num, den = float(x).as_integer_ratio()  # den is a power of two, at most 2^1074
    return num << (UNIT_EXPONENT + 1 - den.bit_length())


def to_double(total, up=False):
    """A total (integer units or ``inf``) as a double: nearest, or the least double >= it."""
    if isinstance(total, float):  # inf
        return total
    try:
        x = total / _SCALE  # int / int is correctly rounded (to nearest) in CPython
    except OverflowError:
        return math.inf
    if up and units(x) < total:
        x = math.nextafter(x, math.inf)
    return x


def add(total, term_units):
    """Exact sum of a total and a term (both integer units or ``inf``)."""
    if isinstance(total, float) or isinstance(term_units, float):
        return math.inf
    return total + term_units


_HEX = re.compile("[0-9a-f]+")  # int(text, 16) alone would also take "0x..", "-..", " .."


def encode(total):
    """Text stored in the ledger for a total: the integer of units in hexadecimal, or ``inf``.

    Hexadecimal because converting a ~2,100-bit integer to and from it is linear-time (decimal
    is not), and it is done at every spend.
    """
    return "inf" if isinstance(total, float) else format(total, "x")


def decode(text):
    """Inverse of :func:`encode`; raises ``ValueError`` on anything else."""
    if text == "inf":
        return math.inf
    if not isinstance(text, str) or not _HEX.fullmatch(text):
        raise ValueError(f"not a ledger total: {text!r}")
    return int(text, 16)


class Totals(NamedTuple):
    """Exact sums of a ledger's spends, its count and the ``seq`` of its newest spend."""

    count: int = 0
    last_seq: int = 0
    epsilon: int | float = 0
    delta: int | float = 0
    eps_sq: int | float = 0
    drift: int | float = 0

    def plus(self, epsilon, delta, seq=None):
        """Exact totals after one more spend of ``(epsilon, delta)`` recorded as ``seq``."""
        sq, drift = spend_terms(epsilon)
        return Totals(
            self.count + 1,
            self.last_seq if seq is None else seq,
            *(add(t, units(x)) for t, x in zip(self[2:], (epsilon, delta, sq, drift))),
        )

    def rounded(self, up=False):
        """The :class:`Sums` as doubles: to nearest, or ``up`` (each >= the exact sum)."""
        return Sums(self.count, *(to_double(t, up) for t in self[2:]))


def totals_of_rows(cursor):
    """Exact :class:`Totals` of the ``(seq, epsilon, delta, eps_sq, drift)`` rows of ``cursor``.

    Rows must come oldest first. Raises ``ValueError`` if a value is not a non-negative
    double (a damaged ledger). Reads in chunks: memory stays bounded for any ledger size.
    """
    count, last, sums = 0, 0, [0, 0, 0, 0]
    while chunk := cursor.fetchmany(4096):
        seqs, *columns = zip(*chunk)
        for i, column in enumerate(columns):
            for x in column:
                if type(x) is not float or not x >= 0:  # version 1 wrote doubles only
                    raise ValueError(f"a spend has {TERMS[i]}={x!r}")
            # inf is checked first: a huge int plus a float inf would not convert
            sums[i] = add(sums[i], math.inf if math.inf in column else sum(map(units, column)))
        count, last = count + len(chunk), seqs[-1]
    return Totals(count, last, *sums)
