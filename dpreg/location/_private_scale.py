r"""Private per-coordinate scales for :class:`~dpreg.PrivateProjectionMedian` (``scale="private"``).

The public-scale certificate (docs/projection_median.md, section 2b) passes on far less data
than the MAD certificate, but needs per-feature scales ``s``. ``scale="private"`` releases them
from the data being fitted, with a declared share of epsilon, and then runs the public-scale
path with the released ``s`` and the rest of the budget.

Release (the estimators' private bounds helper, reused: ``dpreg._bounds``)
-------------------------------------------------------------------------------
For every coordinate j, :func:`dpreg._bounds.private_median_mad_unchecked` draws the exact KNG
median ``m_j`` of ``x_.j`` and then the exact KNG median ``M_j`` of ``|x_.j - m_j|`` (the MAD;
``m_j`` is public once released), each with ``epsilon_scale / (2 d)`` over the public
candidate range ``(-1e9, 1e9)`` with the asinh base measure. Each draw is an exponential
mechanism with utility sensitivity 1 under replace-one adjacency, so the ``2 d`` draws are
``epsilon_scale``-DP together by basic composition (no delta). The released scale is

    s_j = max(SCALE_FACTOR * M_j, MIN_SCALE),

post-processing of the release: positive and finite whatever the data, so nothing can raise
after the spend.

Why treating s as public in the certificate is valid
----------------------------------------------------
The public-scale certificate is an (epsilon_m, delta)-DP mechanism ``A(D; s)`` for *every*
fixed positive s (its proof never uses how s was chosen, only that s does not depend on which
of two neighbours D, D' is fed in). Given the released s, the second stage is therefore
(epsilon_m, delta)-DP, and the adaptive sequential composition of an epsilon_s-DP release
with a mechanism that is (epsilon_m, delta)-DP for each value of the first output is
(epsilon_s + epsilon_m, delta)-DP (Dwork & Roth 2014, Theorem 3.16 with adaptivity; the
budgets are fixed before the data are read). What s changes is only *whether* the test passes
(a wrong s makes it fail; the failure is part of the mechanism's output) and the noise scale.

Why ``SCALE_FACTOR`` times the MAD, and not 1.4826 MAD (the normal standard deviation)
--------------------------------------------------------------------------------------------
The certificate bounds the projected medians' movement in units of
``s_u = ||s * u||_2``; the movement is ``~ 1 / (n f_u)`` with ``f_u`` the projected density at
the median. For normal data ``1 / f_u = sqrt(2 pi) sd_u`` with ``sd_u = ||sd * u||_2``, but for
heavy tails the projection's spread grows faster than ``||s * u||_2`` (an iid Cauchy vector
projects to scale ``||u||_1``, up to ``sqrt(d) ||u||_2``). ``SCALE_FACTOR`` (3 = about 2 normal
standard deviations) is measured, not derived: see docs/projection_median.md, "Private scale".
A larger scale only makes the test easier to pass and the release noisier (both linear in s).

The share (``scale_share="auto"``) uses public n, d and epsilon only (:func:`scale_epsilon`).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._bounds import (
    DEFAULT_CANDIDATE_RANGE,
    RELIABLE_RANKS,
    check_share,
    private_median_mad_unchecked,
)
from .._validation import shares_within

PRIVATE = "private"
#: s_j = SCALE_FACTOR * private MAD_j (see the module docstring).
SCALE_FACTOR = 3.0
#: positive floor of a released scale (post-processing; a MAD of 0 is a tied column)
MIN_SCALE = 1e-100
#: "auto" share: each of the 2 d draws gets about SCALE_RANKS / n of budget, i.e. a rank
#: error of about 2 n / SCALE_RANKS (2 % of n for 100), within [MIN_SHARE, MAX_SHARE] of epsilon
SCALE_RANKS = 100.0
MIN_SHARE = 0.02
MAX_SHARE = 0.25


def check_scale_share(share):
    """``"auto"`` or a number in (0, 1) (no data needed; the shared share check of the
    bounds helper)."""
    if isinstance(share, str) and share == "auto":
        return share
    try:
        return check_share(share, name="scale_share")
    except ValueError:  # same check; the message also names the "auto" option
        raise ValueError(
            f"scale_share must be 'auto' or a number in (0, 1), got {share!r}."
        ) from None


def scale_epsilon(share, epsilon, n_samples, n_features):
    """``(epsilon_scale, epsilon_rest)`` of a fit with total ``epsilon``.

    ``"auto"``: ``clip(SCALE_RANKS * 2 d / (n epsilon), MIN_SHARE, MAX_SHARE) * epsilon``, so
    every one of the ``2 d`` KNG draws gets ``SCALE_RANKS / n`` when that is at most a quarter
    of epsilon (its rank error is then Laplace-like with scale ``2 n / SCALE_RANKS`` ranks, a
    few percent of the MAD) and at least 2 % of epsilon. The rest is lowered by one float step
    if round-off made the parts exceed ``epsilon``. Public: n (replace-one adjacency), d and
    epsilon only.

    Examples
    --------
    >>> from dpreg.location._private_scale import scale_epsilon
    >>> [round(v, 4) for v in scale_epsilon("auto", 4.0, 1000, 2)]
    [0.4, 3.6]
    >>> [round(v, 4) for v in scale_epsilon("auto", 5.0, 50000, 10)]
    [0.1, 4.9]
    """
    epsilon = float(epsilon)
    if isinstance(share, str):
        share = SCALE_RANKS * 2.0 * n_features / (max(n_samples, 1) * epsilon)
        share = min(max(share, MIN_SHARE), MAX_SHARE)
    eps_s = float(share) * epsilon
    eps_s, rest = shares_within([eps_s, epsilon - eps_s], epsilon, lower=1).tolist()
    return eps_s, rest


def warn_if_unreliable(epsilon_scale, n_samples, n_features):
    """Warn (before the spend, from public n, d and the scale budget only) when each of the
    ``2 d`` scale draws gets less than ``RELIABLE_RANKS / n`` of budget.

    Below that a draw lands outside the interquartile range of its column often enough
    (``docs/private_workflow.md``, "Small data") that a released scale can be orders of
    magnitude off: at n = 1,000, d = 2, epsilon = 0.25 two of four fits released scales
    near 1e8-1e9 and intervals of width 1e10-1e11. The test may still pass (a huge scale
    makes it easy), so the failure is silent without this warning.
    """
    ranks = epsilon_scale / (2.0 * n_features) * n_samples
    if ranks < RELIABLE_RANKS:
        warnings.warn(
            f"scale='private' with n = {n_samples}, d = {n_features} and a scale budget of "
            f"{epsilon_scale:.3g}: each of the {2 * n_features} scale draws gets about "
            f"{ranks:.0f} ranks of budget (reliable from {RELIABLE_RANKS:.0f}), so a released "
            "scale may be far from the data and the median too noisy to use. Give public "
            "scales (scale=array) or a larger epsilon.",
            UserWarning,
            stacklevel=4,
        )


#: 1.4826 / SCALE_FACTOR: a released s = 3 MAD in the normal standard deviation's units
TRIM_FACTOR = 1.4826 / SCALE_FACTOR


def trim_from_scale(s):
    """``trim_scale="private"``: the released scales ``s`` in standard-deviation units
    (``1.4826 MAD`` for normal data), for the trimmed-mean stage.

    Post-processing of the scale release, so the trimmed stage (whose proof in
    :mod:`dpreg.location._trimmed` holds for every fixed positive scale, centre and radius)
    composes with it exactly as with a user's public ``trim_scale`` (same argument as for the
    median stage, docs/projection_median.md section 2d). Positive and finite like ``s``."""
    return np.maximum(np.asarray(s, dtype=float) * TRIM_FACTOR, MIN_SCALE)


def max_trim_scale():
    """Public upper bound of :func:`trim_from_scale` (the candidate range's width times the
    factors): the pre-spend overflow check of the trimmed stage uses it."""
    lo, hi = DEFAULT_CANDIDATE_RANGE
    return SCALE_FACTOR * (hi - lo) * TRIM_FACTOR


def release_scales(X, epsilon, rng):
    """The released per-coordinate scales ``s`` (shape ``(d,)``; module docstring).

    ``X`` is validated (finite, 2-D) and ``epsilon`` already charged by the caller. Total:
    every value is clipped into the public candidate range by the quantile mechanism, and the
    output is floored at ``MIN_SCALE``, so the result is always finite and positive."""
    lower, upper = private_median_mad_unchecked(X, epsilon, DEFAULT_CANDIDATE_RANGE, 1.0, rng)
    half = 0.5 * (upper - lower)  # = M_j (unless clamped into the range: post-processing)
    return np.maximum(SCALE_FACTOR * half, MIN_SCALE)
