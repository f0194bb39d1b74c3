"""Second stage of ``PrivateProjectionMedian(trim_scale=...)``: private trimmed means.

One round. Given a *public* centre ``c`` (the released projection median, or the previous
round's release), public per-coordinate scales ``s`` and a public radius ``R``, let
``z_i = (x_i - c) / s`` (elementwise) and keep the rows with ``||z_i||_2 <= R``. The round
releases

    S~ = sum_{kept} z_i + V,    V ~ l2 K-norm noise, sensitivity W = 2 R (1 + g), epsilon 0.9 e,
    N~ = #kept + Lap(1 / (0.1 e)),

and returns ``c + s * P_R(S~ / max(N~, 1))`` (``P_R`` projects onto the ball of radius R: the
mean of kept rows lies in it, so the projection is post-processing that only shortens errors;
the shift is 0 if ``N~ < 1``).

Privacy (replace-one adjacency, n public). The keep rule looks at one row at a time and
``c``, ``s``, ``R`` are fixed, so replacing one row changes only that row's term: the sum of
kept rows moves by at most ``2 R`` in l2 (one vector of norm <= R leaves, one enters) and the
count by at most 1. The K-norm mechanism (``dpreg.noise.KNormMechanism``, exact and
floating-point safe) and the Laplace mechanism make the round (0.9 e + 0.1 e) = e-DP; the
rounds and the first stage compose (basic composition) to the estimator's total (epsilon,
delta). Nothing after the spend can raise on the data: overflowing rows give inf or nan
norms, fail the keep test and are dropped (that is their own row's event).

Floating point. The keep test and the sum use the same computed ``z_i``, so each row's
contribution is a fixed function of that row. A computed norm ``<= R`` means an exact norm
``<= R / (1 - gamma_{d+1})`` (sum of d squares, then a square root; Higham 2002, §3.1), and a
computed sum of n vectors differs from the exact one by at most ``gamma_n sum_i ||z_i||_2`` in
l2 (Higham eq. 3.5 per coordinate, any summation order, then the triangle inequality). Both
are covered by ``g = 2 m gamma_m`` with ``m = n + d + 2``, ``gamma_m = m u / (1 - m u)``,
``u = 2^-53`` (for ``m u <= 1/2``), so two neighbours' computed sums differ by at most ``W``.

Why a ball and not per coordinate. Per-coordinate trimming keeps a row's coordinate whenever
that coordinate is near the centre; with 25 % of rows shifted by +5 in every coordinate and a
radius of 4 scales, a quarter of the shifted coordinates survive and the result is as biased as
the projection median (measured: RMSE 0.84 against 0.015 for the ball, n = 50,000, d = 10).
The ball sees the whole row (a shifted row lies about 5 sqrt(d) away).

Why two rounds. Trimming around a centre that is off by ``e0`` leaks a fraction of ``e0``
into the mean (the window is asymmetric about the true centre); for heavy tails the fraction
is large. The second round starts from the first round's much better centre (measured on iid
Cauchy, d = 10: RMSE ratio to CoinPress 1.03 with one round, 0.84 with two).

Radii that follow the centre's known error (issue 15, session 9)
----------------------------------------------------------------
With a fixed radius ``R0 = trim_radius sqrt(d)`` the stage fails when the starting centre is
off by more than about ``R0`` scales (n = 1,000, epsilon = 4, ``scale="private"``: the
projection median's error at half the budget exceeds ``2 sqrt(d)``, few rows are kept, and the
noisy shift made the release 2-3x worse than the centre alone). When the first stage's noise
law is public (``scale`` an array or ``"private"``), each round's radius is ``R0 + e``, with
``e`` a public bound on the error of that round's centre in trim-scale units:

* round 1, the released projection median (:func:`median_error_bound`). It is a draw from
  ``exp(-c O(x))`` with the public-scale outlyingness ``O(x) = max_u |u^T x - mu_u| / s_u``;
  far from the minimum, ``{O <= o}`` is ``o`` times the polytope
  ``P = {z : |u^T z| <= s_u for all u}`` (around the LP median), so ``O`` is about
  ``Gamma(d, 1 / c)`` (the volume of ``{O <= o}`` grows like ``o^d``). With all unit
  directions P would be the ellipsoid ``||z / s||_2 <= 1``; with the coordinate axes
  (``norm="linf"``) it is the box of half-widths s, whose farthest points have
  ``||z / s||_2 = sqrt(d)``; with the default ``100 d`` or more random directions it is close
  to the ellipsoid. We use the box's ``sqrt(d)``, so
  ``||(x - x*) / t||_2 <= O sqrt(d) max_j (s_j / t_j)``, and ``e`` is that with ``O`` at the
  ``BOUND_LEVEL`` quantile of ``Gamma(d, 1 / c)``. This is a public approximation, not a
  bound: it ignores the (small, data-dependent) minimum outlyingness, and odd user direction
  sets can have a larger P. It steers accuracy only, never the privacy argument.
* round 2, the previous round's release. Its noise is ``V / N~`` with ``||V||_2`` distributed
  as ``Gamma(d, W / epsilon_sum)`` (the l2 K-norm radius law), so ``e`` is the
  ``BOUND_LEVEL`` quantile of that divided by the released count (:func:`shift_noise_bound`).
  (Its trimming bias is not included: with the large first radius it is small.)

A round's output replaces its centre only if its noise bound is below the centre's bound
(the round can then only help), else the round's budget is spent and the centre kept; a
count ``N~ < 1`` also keeps the centre. So with a known first-stage law the stage is never
much worse than the released projection median (at worst: that median).

Privacy of the adaptive radii. Every quantity that sets a radius or decides whether a round's
output is kept is public (n, d, epsilon, c, ``BOUND_LEVEL``, the public or already released
scales) or released (the previous round's ``N~``), so each round is still the fixed-radius
mechanism above, run with a radius chosen from earlier releases: (0.9 e + 0.1 e)-DP for every
value of that radius, and the rounds compose adaptively (Dwork & Roth 2014, Thm. 3.16) to the
stage's epsilon. Keeping or discarding a round's output is post-processing. The largest
radius is ``R0 + e_1`` (later ones are smaller), which ``fit`` checks for overflow before the
spend.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..noise import KNormMechanism, LaplaceMechanism

_U = 2.0**-53
#: Share of one round's epsilon spent on the count (the rest goes to the sum).
COUNT_SHARE = 0.1
#: Number of trimming rounds (each gets an equal share of the trimming budget).
ROUNDS = 2
#: Quantile level of the public error bounds that set the adaptive radii (module docstring).
BOUND_LEVEL = 0.999


def rounding_slack(n, d):
    """``g = 2 m gamma_m``, ``m = n + d + 2``: relative rounding allowance (module docstring)."""
    m = n + d + 2
    mu = m * _U
    return 2.0 * m * mu / (1.0 - mu)


def trimmed_statistic(X, centre, scale, radius):
    """``(sum of kept z_i, number kept)`` with ``z_i = (x_i - centre) / scale``."""
    with np.errstate(over="ignore", invalid="ignore"):
        Z = (X - centre) / scale
        keep = np.linalg.norm(Z, axis=1) <= radius
    return Z[keep].sum(axis=0), float(np.count_nonzero(keep))


def median_error_bound(c, d, ratio):
    """Public bound (in trim-scale units, l2) on the released projection median's error:
    ``sqrt(d) ratio q / c`` with q the ``BOUND_LEVEL`` quantile of ``Gamma(d, 1)``, ``c`` the
    median stage's inverse temperature and ``ratio = max_j s_j / t_j`` (certificate scale over
    trim scale; module docstring). Uses public quantities only."""
    return math.sqrt(d) * ratio * float(stats.gamma.ppf(BOUND_LEVEL, d)) / c


def shift_noise_bound(d, width, eps_sum, noisy_count):
    """``BOUND_LEVEL`` quantile of ``||V||_2 / N~`` with ``||V||_2 ~ Gamma(d, W / eps_sum)``
    (the l2 K-norm radius law) and the released count ``N~``; ``inf`` if ``N~ < 1``.
    Post-processing of the round's release."""
    if not noisy_count >= 1.0:
        return math.inf
    return float(stats.gamma.ppf(BOUND_LEVEL, d)) * width / (eps_sum * noisy_count)


def _norm2(v):
    """``||v||_2`` of a finite vector, total: the plain sum of squares overflows for entries
    above about 1.3e154 (a huge radius in trim-scale units, or a tiny epsilon, makes the noisy
    shift that large), a RuntimeWarning after the spend. Then the norm is taken of ``v / m``,
    ``m = max |v_j|`` (finite, within a few roundings); otherwise the value is the plain one,
    bit for bit. Post-processing of released values."""
    with np.errstate(over="ignore"):
        length = float(np.linalg.norm(v))
    if not np.isfinite(length):
        m = float(np.max(np.abs(v)))
        with np.errstate(over="ignore"):
            length = m * float(np.linalg.norm(v / m))
    return length


def _round(X, centre, scale, radius, epsilon, rng):
    """One round: ``(new centre, public noise bound of its shift)`` (module docstring)."""
    n, d = X.shape
    total, count = trimmed_statistic(X, centre, scale, radius)
    width = 2.0 * radius * (1.0 + rounding_slack(n, d))
    eps_sum, eps_count = (1.0 - COUNT_SHARE) * epsilon, COUNT_SHARE * epsilon
    noisy_total = KNormMechanism("l2", d, width, eps_sum, random_state=rng).randomise(total)
    noisy_count = LaplaceMechanism(eps_count, 1.0, random_state=rng).randomise(count)
    # from here on: post-processing of (noisy_total, noisy_count)
    if not noisy_count >= 1.0:
        return centre, math.inf
    shift = noisy_total / noisy_count
    length = _norm2(shift)
    if length > radius:  # the mean of kept rows lies in the ball
        shift = shift * (radius / length)
    return centre + scale * shift, shift_noise_bound(d, width, eps_sum, noisy_count)


def release_round(X, centre, scale, radius, epsilon, rng):
    """One epsilon-DP trimmed-mean round around the public ``centre`` (module docstring)."""
    return _round(X, centre, scale, radius, epsilon, rng)[0]


def release_trimmed_mean(X, centre, scale, radius, epsilon, rng, rounds=ROUNDS, error=None):
    """``rounds`` trimmed-mean rounds of ``epsilon / rounds`` each; epsilon-DP in total given a
    public starting ``centre``.

    ``error=None`` (the centre's error law is not public, e.g. ``scale="mad"``): every round
    uses ``radius`` and starts from the previous release. Otherwise ``error`` is a public
    bound on the centre's error in scale units (:func:`median_error_bound`): each round uses
    ``radius + error`` and its output is kept only if its own noise bound is smaller, which
    then becomes ``error`` (module docstring, "Radii that follow the centre's known error")."""
    for _ in range(rounds):
        if error is None:
            centre = release_round(X, centre, scale, radius, epsilon / rounds, rng)
            continue
        new, bound = _round(X, centre, scale, radius + error, epsilon / rounds, rng)
        if bound < error:
            centre, error = new, bound
    return centre
