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
"""

from __future__ import annotations

import numpy as np

from ..noise import KNormMechanism, LaplaceMechanism

_U = 2.0**-53
#: Share of one round's epsilon spent on the count (the rest goes to the sum).
COUNT_SHARE = 0.1
#: Number of trimming rounds (each gets an equal share of the trimming budget).
ROUNDS = 2


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


def release_round(X, centre, scale, radius, epsilon, rng):
    """One epsilon-DP trimmed-mean round around the public ``centre`` (module docstring)."""
    n, d = X.shape
    total, count = trimmed_statistic(X, centre, scale, radius)
    width = 2.0 * radius * (1.0 + rounding_slack(n, d))
    eps_sum, eps_count = (1.0 - COUNT_SHARE) * epsilon, COUNT_SHARE * epsilon
    noisy_total = KNormMechanism("l2", d, width, eps_sum, random_state=rng).randomise(total)
    noisy_count = LaplaceMechanism(eps_count, 1.0, random_state=rng).randomise(count)
    if not noisy_count >= 1.0:
        return centre
    shift = noisy_total / noisy_count
    length = float(np.linalg.norm(shift))
    if length > radius:  # the mean of kept rows lies in the ball
        shift = shift * (radius / length)
    return centre + scale * shift


def release_trimmed_mean(X, centre, scale, radius, epsilon, rng, rounds=ROUNDS):
    """``rounds`` trimmed-mean rounds of ``epsilon / rounds`` each, every one centred on the
    previous release; epsilon-DP in total given a public starting ``centre``."""
    for _ in range(rounds):
        centre = release_round(X, centre, scale, radius, epsilon / rounds, rng)
    return centre
