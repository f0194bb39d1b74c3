"""Privacy budget accounting: a ledger shared by every process, composition, defaults.

``from dpreg.accounting import BudgetAccountant, check_accountant``; see
:class:`BudgetAccountant` and ``docs/accounting.md``.
"""

from ._accountant import BudgetAccountant, check_accountant

__all__ = ["BudgetAccountant", "check_accountant"]
