"""Exceptions and warnings raised by dpreg."""


class PrivacyLeakWarning(UserWarning):
    """Warned when a choice made from the data (e.g. bounds) weakens the privacy guarantee.

    Reading feature bounds from the private data is not differentially private: the bounds
    themselves leak information. Pass explicit, data-independent bounds to silence this warning.
    """


class BudgetExceededError(ValueError):
    """Raised by :class:`dpreg.BudgetAccountant` *before* a mechanism touches the data when the
    requested (epsilon, delta) would exceed the remaining privacy budget."""


class PTRTestFailedError(RuntimeError):
    """Raised when a propose-test-release test fails: nothing is released, the budget is spent."""


class PTRInfeasibleError(PTRTestFailedError, ValueError):
    """Raised *before* anything is spent when public parameters alone (n, d, epsilon, delta
    and the public tuning) make a propose-test-release test fail on every data set, except
    through its delta-probability event. Nothing is read beyond the data's shape, nothing is
    released and nothing is spent. A subclass of :class:`PTRTestFailedError` (code that
    handles a failed test handles it) and of ``ValueError`` (the parameters are the cause)."""


class BudgetStoreError(RuntimeError):
    """Raised when a :class:`dpreg.BudgetAccountant` cannot use its ledger store: the file is
    gone or unreachable (e.g. an accountant unpickled on another machine), locked for longer
    than the accountant's timeout, corrupted, or not a dpreg ledger. It is raised before
    anything is recorded or any data are read, and no spend is lost."""
