"""What every private transformer shares: parameter checks, validation, the single spend, and
the bounds (private or public) that everything else clips into."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._bounds import (
    PRIVATE,
    PublicBox,
    check_private_bounds_params,
    check_share,
    clip,
    private_bounds_unchecked,
)
from .._validation import check_random_state, shares_within
from ..accounting import check_accountant
from ..tools._common import check_release_epsilon, check_shares
from ..tools._moments import _check_var_width


class PrivateTransformerBase(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Base class: ``fit`` validates everything, spends ``epsilon`` once, then learns bounds.

    A transformer that releases nothing (public bounds and ``_spends_rest`` false) is not
    charged.

    Subclasses implement ``_fit_private(X, lower, upper, epsilon_left, rng)`` (called after the
    spend; it must not raise) and ``_transform(X)``.
    """

    _spends_rest = True  # whether anything is left for _fit_private after the bounds

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        tags.requires_fit = True
        return tags

    def _check_params(self):
        epsilon = check_release_epsilon(self.epsilon)
        accountant = check_accountant(self.accountant)
        levels, candidate_range = check_private_bounds_params(
            self.levels, self.candidate_range, 1.0, self.widen
        )
        private = isinstance(self.bounds, str)
        if private and self.bounds != PRIVATE:
            raise ValueError(f"bounds must be 'private' or (lower, upper), got {self.bounds!r}.")
        share = 1.0
        if private and self._spends_rest:
            share = check_share(self.bounds_share)
        return epsilon, accountant, levels, candidate_range, private, share

    def fit(self, X, y=None):
        """Learn the private statistics of ``X`` (spends ``epsilon`` once).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite values; NaN or infinity raise a ``ValueError`` before anything is spent.
        y : ignored

        Returns
        -------
        self
        """
        # a refit that is refused (bad input, budget exceeded) must not leave the previous
        # fit's statistics next to the new n_features_in_: forget the old fit first
        self._forget_fit()
        epsilon, accountant, levels, candidate_range, private, share = self._check_params()
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=True)
        p = X.shape[1]
        lower, upper = self._checked_bounds(private, p, candidate_range)
        # the budget split, computed once: checked here and used as is after the spend
        eps_bounds = share * epsilon if private else 0.0
        # exactly within epsilon (basic composition): the rounded difference could add up
        # to one float step more
        eps_bounds, eps_left = shares_within([eps_bounds, epsilon - eps_bounds], epsilon, lower=1)
        if private:
            check_shares([eps_bounds / (2 * p)])  # the share of private_bounds_unchecked
        self._check_shares(eps_left, X.shape[0], p)
        rng = check_random_state(self.random_state)
        # public bounds and nothing else to learn: nothing is released, so nothing is charged
        # (the documented "public bounds cost nothing")
        releases = private or self._spends_rest
        if accountant is not None and releases:
            accountant.spend(epsilon, 0.0)
        # ---- everything below runs after the spend and must not raise on any data ----
        if private:
            lower, upper = private_bounds_unchecked(
                X, eps_bounds, levels, candidate_range, 1.0, self.widen, rng
            )
            lower, upper = self._usable_bounds(lower, upper, candidate_range)
        self.lower_, self.upper_ = lower, upper
        self.epsilon_bounds_ = epsilon - eps_left
        self._fit_private(clip(X, lower, upper), lower, upper, eps_left, rng)
        return self

    def _forget_fit(self):
        """Delete every fitted attribute (public names ending in ``_``)."""
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
            delattr(self, name)

    def _checked_bounds(self, private, p, candidate_range):
        """Before the spend: the public bounds ``(lower, upper)``, validated for this
        transformer, or (private bounds) ``(None, None)`` after the candidate range's checks."""
        if not private:  # public bounds: validated before the spend, cost nothing
            box = PublicBox.validated(self.bounds, p, name="bounds")
            if self._spends_rest:  # the variance needs a finite (upper - lower)^2
                for lo, hi in zip(box.lower, box.upper):
                    _check_var_width(float(lo), float(hi))
            self._check_public_bounds(box.lower, box.upper)
            return box.lower, box.upper
        self._check_candidate_range(candidate_range)
        if self._spends_rest:  # the private bounds lie in candidate_range: same rule there
            try:
                _check_var_width(*candidate_range)
            except ValueError:
                raise ValueError(
                    "candidate_range is too wide for the variance: its width squared must be "
                    f"finite (width <= 1.3e154), got {self.candidate_range!r}."
                ) from None
        return None, None

    def _check_candidate_range(self, candidate_range):
        """Refuse a candidate range the transformer cannot use (before the spend; none)."""

    def _usable_bounds(self, lower, upper, candidate_range):
        """Post-process released bounds into ones the transformer can use (unchanged here)."""
        return lower, upper

    def _check_shares(self, epsilon, n, p):
        """Refuse a budget ``_fit_private`` cannot release with (before the spend; none)."""

    def _check_public_bounds(self, lower, upper):
        """Refuse public bounds the transformer's map cannot use (before the spend; none)."""

    def _fit_private(self, X, lower, upper, epsilon, rng):
        """Learn what the transformer needs beyond the bounds (nothing by default)."""

    def transform(self, X):
        """Transform ``X`` (clipped into ``[lower_, upper_]`` first); costs no privacy."""
        check_is_fitted(self, "lower_")
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)
        return self._transform(clip(X, self.lower_, self.upper_))
