"""Layout and exact sensitivities of the released statistic of :class:`FunctionalLinearRegression`.

The statistic
-------------
After scaling, each row contributes ``x in [-1, 1]^p`` and ``y in [-1, 1]``. With an intercept
the design row is ``(1, x)`` and the released vector ``T = sum_i t(x_i, y_i)`` stacks the unique,
non-constant entries of ``X^T X`` and ``X^T y``:

========  ================  ==========================================
block     entries           per-row contribution
========  ================  ==========================================
Gram      ``L_j`` (p)       ``x_j``              (only with intercept)
Gram      ``S_j`` (p)       ``2 x_j^2``          (squares doubled)
Gram      ``C_jk`` (p(p-1)/2)  ``x_j x_k``, j < k
target    ``Y`` (1)         ``y``                (only with intercept)
target    ``P_j`` (p)       ``x_j y``
========  ================  ==========================================

so ``d = (p+1)(p+2)/2 - 1 + (p+1)`` with an intercept and ``d = p(p+1)/2 + p`` without. Under
replace-one adjacency ``T(D) - T(D') = t(x, y) - t(x', y')`` for one pair of rows, so every
sensitivity below is ``sup ||t(x, y) - t(x', y')||`` over ``x, x' in [-1,1]^p``,
``y, y' in [-1,1]``.

l_inf sensitivity: every entry of t lies in an interval of length 2 (``[-1, 1]`` or, for the
doubled squares, ``[0, 2]``), and 2 is attained, so ``Delta_inf = 2``.

Exact l1 sensitivity
--------------------
**With intercept:** ``Delta_1 = p(p-1)/2 + 4p + 2``, attained at ``x = 1, y = 1, x' = 0,
y' = -1``.

*Proof.* The objective is a sum of absolute values of affine functions of ``y'`` (and of
``y``), hence convex in each, so its maximum has ``y, y' in {-1, 1}``; flipping the signs of
``y`` and ``y'`` together leaves every term unchanged, so take ``y = 1``. Flipping the signs of
``x_j`` and ``x'_j`` together also leaves every term unchanged, so take ``x_j = a_j >= 0``,
``x'_j = tau_j b_j`` with ``b_j >= 0``, ``tau_j = +-1``; let ``M_j = max(a_j, b_j)`` and
``m_j = min(a_j, b_j)``. For the product terms one checks, case by case on which of ``a, b``
is larger, ``|a_j a_k - b_j b_k| <= M_j M_k - m_j m_k`` and ``a_j a_k + b_j b_k <= M_j M_k +
m_j m_k``; the first applies when ``tau_j = tau_k``, the second otherwise, so
``sum_{j<k} |x_j x_k - x'_j x'_k| <= sum_{j<k} M_j M_k - (S^2 - sum m_j^2) / 2`` with
``S = sum tau_j m_j``.

* ``y' = -1``: ``|x_j - x'_j| + |x_j + x'_j| = 2 M_j``, so the per-coordinate terms sum to
  ``sum (2 M_j + 2 M_j^2 - 2 m_j^2)``, plus 2 from ``y``.
* ``y' = 1``: ``|x_j - x'_j| + |x_j y - x'_j y'| = 2 |a_j - tau_j b_j| <= 2 M_j - 2 tau_j m_j``.

Every bound is increasing in each ``M_j``, so put ``M_j = 1``. Then the total is at most
``2 + 4p + p(p-1)/2 - 1.5 sum m_j^2 - S^2/2`` (case ``y' = -1``) or
``4p + p(p-1)/2 - 2S - S^2/2 - 1.5 sum m_j^2 <= 2 + 4p + p(p-1)/2 - 1.5 sum m_j^2`` (case
``y' = 1``, as ``-2S - S^2/2 <= 2``). Both are ``<= p(p-1)/2 + 4p + 2``. QED.

**Without intercept:** ``Delta_1 = p(p-1)/2 + 3p + p / (2(p+3))``, attained at ``x = 1, y = 1,
x' = t 1, y' = -1`` with ``t = 1/(p+3)`` (for p = 1 this is 3.125, the number of seed 001,
Example 2.10). *Proof:* the same reductions give per-coordinate terms ``2(M^2 - m^2) + M +-
m`` (sign ``+`` when ``tau_j = +1``), so the total is at most ``3p + p(p-1)/2 + S - S^2/2 -
1.5 sum m_j^2`` with ``S = sum tau_j m_j <= sqrt(p sum m_j^2)``; maximising
``S - S^2/2 - 1.5 S^2/p`` over S gives ``p / (2(p+3))`` at ``S = p/(p+3)``, which the stated
point attains.

l2 sensitivity
--------------
**With intercept:** ``Delta_2^2 <= 4 + max(p^2/2 + 5.5p, p^2 + 4p)``, i.e. ``sqrt(10)``,
``sqrt(17)``, ``5`` for p = 1, 2, 3 and ``p + 2`` for p >= 3. Exact for p <= 3 and every even
p; for odd p >= 5 the exact value lies in ``[sqrt((p+2)^2 - 1), p + 2]`` (we use the upper
end, which over-states the l2 noise by less than ``1 / (2 (p+2)^2)`` relatively).

*Proof.* Again ``y = 1, y' = +-1`` (the square of the objective is a convex quadratic in
``y'``), ``x_j = a_j >= 0, x'_j = tau_j b_j``. Write ``alpha_j = a_j^2, beta_j = b_j^2``,
``A = sum alpha_j, B = sum beta_j`` and ``S = sum tau_j a_j b_j``. Expanding,
``sum_{j<k} (x_j x_k - x'_j x'_k)^2 = (A^2 + B^2)/2 - sum (alpha_j - beta_j)^2 / 2 - S^2``, and
the squared norm equals ``G(alpha, beta) + c(S)`` with
``G = sum_j [2 alpha_j + 2 beta_j + 3.5 (alpha_j - beta_j)^2] + (A^2 + B^2)/2`` and
``c(S) = 4 - S^2`` (``y' = -1``) or ``-4S - S^2`` (``y' = 1``); both are ``<= 4``. G is convex
on ``[0,1]^{2p}``, so its maximum is at a vertex; with ``u`` coordinates of type ``(1, 0)``,
``w`` of type ``(0, 1)`` and ``r`` of type ``(1, 1)``, ``G = 5.5(u+w) + 4r + ((u+r)^2 +
(w+r)^2)/2``, a convex function maximised at ``u = p`` or ``r = p``. Attainment: ``u = p`` is
``x = 1, x' = 0, y' = -1`` (``S = 0``); ``r = p`` is ``x = 1, x' = tau`` with
``sum tau = 0`` (needs p even) and ``y' = -1``; for odd p the best vertex has ``|S| = 1`` and
loses exactly 1.

**Without intercept:** ``Delta_2^2 <= 1 + max(p^2/2 + 4.5p, p^2 + 2p)`` by the same argument
(``G = sum [alpha + beta + 3.5 (alpha - beta)^2] + (A^2+B^2)/2`` and ``c(S) = -S^2 +- 2S <= 1``);
exact, ``= p + 1``, for odd p >= 5 (``x = 1, x' = tau`` with ``sum tau = -1``); for other p it
over-states the exact value by at most 1 in the square.

Several outputs
---------------
With a 2-D target ``Y`` (k columns, each scaled into [-1, 1] with its own bounds) the target
block holds ``Y_m = sum y_m`` (with an intercept) and ``P_jm = sum x_j y_m`` for every output
m, stored after the Gram block in the order ``Y_1..Y_k, P_11, P_12, .., P_1k, P_21, ..``; for
k = 1 this is the layout above. ``Y^T Y`` is never released. The dimension is
``d = d_gram + (p + 1) k`` (``d_gram + p k`` without intercept). ``Delta_inf = 2`` as before.

**Exact l1 sensitivity.** The objective is a sum of absolute values of affine functions of
each ``y_m`` and ``y'_m``, hence convex in each, so its maximum has ``y_m, y'_m in {-1, 1}``;
flipping the signs of ``(y_m, y'_m)`` together changes only output m's entries, and only
their signs, so take ``y_m = 1``. Let ``k_+`` outputs have ``y'_m = 1`` and ``k_- = k - k_+``
have ``y'_m = -1``. With the notation of the one-output proof (``x_j = a_j >= 0``,
``x'_j = tau_j b_j``, ``M_j, m_j``) the per-feature linear terms are
``|x_j - x'_j| = M_j - tau_j m_j`` (counted ``k_+`` times, plus once for ``L_j`` with an
intercept) and ``|x_j + x'_j| = M_j + tau_j m_j`` (``k_-`` times), the ``Y_m`` entries give
``2 k_-`` (intercept only), the squares ``2 (M_j^2 - m_j^2)`` and the products the bound of
the one-output proof. Every bound increases in ``M_j``; with ``M_j = 1``, ``S = sum tau_j
m_j`` and ``sum m_j^2 >= S^2 / p`` (Cauchy-Schwarz):

* with intercept, ``Delta_1 <= p(p-1)/2 + (k + 3) p + max_{k_+} [2 k_- + g(k_- - k_+ - 1)]``;
* without, ``Delta_1 <= p(p-1)/2 + (k + 2) p + max_{k_+} g(k_- - k_+) = .. + g(k)``;

where ``g(c) = max_{|S| <= p} (c S - S^2 (p + 3) / (2 p))`` equals ``c^2 p / (2 (p + 3))``
for ``|c| <= p + 3`` and ``|c| p - p (p + 3) / 2`` beyond (``|S| <= sum m_j <= p``). Every
inequality is an equality at ``x = 1``, ``x' = (S*/p) 1`` (all ``m_j`` equal, ``tau_j`` the
sign of the maximiser ``S*``) with the maximising ``k_+`` (:func:`l1_attaining_pair`), so
the bound is exact. For k = 1 it is the one-output formula (``k_+ = 0``, ``g(0) = 0`` with an
intercept; ``g(1) = p / (2(p+3))`` without). For k >= 2 the maximiser is interior
(``x' != 0``): e.g. p = 1, k = 2 with an intercept gives 9.125, not the vertex value 9.

**l2 bound.** The squared norm is ``F_1(x, x', y_1, y'_1) + sum_{m >= 2} B_m`` where
``F_1`` is the squared norm of the one-output statistic (output 1) and ``B_m`` the squared
entries of output m's block. A sup of a sum is at most the sum of the sups, and
``B_m = (y_m - y'_m)^2 + sum_j (x_j y_m - x'_j y'_m)^2 <= 4 + 4p`` (``4p`` without
intercept; attained at ``x = x' = 1, y_m = -y'_m = 1``), so
``Delta_2^2 <= Delta_2(k=1)^2 + (k - 1) 4 (p + 1)`` (``(k - 1) 4 p`` without intercept). It
is not exact for k >= 2 (the two sups are reached at different rows); the adversarial search
reaches at least 0.88 of it for p <= 3, k <= 4 (see the tests and the docs page).

lr norms (``1 < r < inf``)
--------------------------
``r -> log ||v||_r^r`` is convex in ``1/r`` (Holder), which gives
``||v||_r^r <= ||v||_inf^(r-1) ||v||_1`` and, for ``r >= 2``,
``||v||_r^r <= ||v||_inf^(r-2) ||v||_2^2``, and for ``1 < r < 2``
``||v||_r <= ||v||_1^theta ||v||_2^(1-theta)`` with ``theta = 2/r - 1``. Taking sups of each
factor separately, ``Delta_r`` is at most the smallest of these bounds evaluated at
``Delta_1, Delta_2, Delta_inf`` (:func:`lp_sensitivity`); it lies between ``Delta_inf`` and
``Delta_1``. It is an upper bound (not exact); the search reaches at least 0.96 of it for
``r = 7`` in the tested shapes.

Every bound is checked by an adversarial search over pairs of rows in the test suite
(``tests/linear_model/test_functional_sensitivity.py`` and ``test_functional_multioutput.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class Layout:
    """Index map of the released vector T (see the module docstring)."""

    p: int
    fit_intercept: bool
    n_outputs: int = 1

    @property
    def n_pairs(self):
        return self.p * (self.p - 1) // 2

    @property
    def pairs(self):
        """``(I, J)``: the feature pairs j < k of the cross-product entries, in order."""
        return np.triu_indices(self.p, 1)

    @property
    def lin(self):
        return np.arange(self.p) if self.fit_intercept else np.arange(0)

    @property
    def sq(self):
        return len(self.lin) + np.arange(self.p)

    @property
    def cross(self):
        return len(self.lin) + self.p + np.arange(self.n_pairs)

    @property
    def d_gram(self):
        """Number of entries of the Gram block."""
        return len(self.lin) + self.p + self.n_pairs

    @property
    def ysum(self):
        """Indices of the target sums ``Y_m`` (one per output; only with an intercept)."""
        k = self.n_outputs if self.fit_intercept else 0
        return self.d_gram + np.arange(k)

    @property
    def xy(self):
        """Indices of ``P_jm``, row-major in (feature j, output m)."""
        return self.d_gram + len(self.ysum) + np.arange(self.p * self.n_outputs)

    @property
    def d_target(self):
        return len(self.ysum) + self.p * self.n_outputs

    @property
    def dim(self):
        return self.d_gram + self.d_target

    def pack(self, gram, xty):
        """T from the full moment matrices ``gram = Z^T Z`` and ``xty = Z^T W``.

        ``Z`` carries the intercept column first when ``fit_intercept``; the constant ``n`` is
        dropped and squares are doubled. ``xty`` has shape ``(q,)`` or ``(q, n_outputs)``.
        """
        xty = np.asarray(xty, dtype=float).reshape(len(gram), self.n_outputs)
        o = 1 if self.fit_intercept else 0
        I, J = self.pairs
        diag = np.diag(gram)[o:]
        parts = []
        if self.fit_intercept:
            parts.append(gram[0, 1:])
        parts += [2.0 * diag, gram[o + I, o + J]]
        if self.fit_intercept:
            parts.append(xty[0])
        parts.append(xty[o:].ravel())
        return np.concatenate(parts)

    def unpack(self, T, n):
        """Inverse of :meth:`pack`: ``(gram, xty)`` (squares halved, ``n`` in the corner).

        ``xty`` has shape ``(q,)`` for one output (as before multi-output support) and
        ``(q, n_outputs)`` otherwise.
        """
        T = np.asarray(T, dtype=float)
        o = 1 if self.fit_intercept else 0
        q = self.p + o
        gram = np.empty((q, q))
        if self.fit_intercept:
            gram[0, 0] = n
            gram[0, 1:] = gram[1:, 0] = T[self.lin]
        idx = np.arange(o, q)
        gram[idx, idx] = T[self.sq] / 2.0
        I, J = self.pairs
        gram[o + I, o + J] = T[self.cross]
        gram[o + J, o + I] = T[self.cross]
        k = self.n_outputs
        xty = np.empty((q, k))
        if self.fit_intercept:
            xty[0] = T[self.ysum]
        xty[o:] = T[self.xy].reshape(self.p, k)
        return gram, (xty[:, 0] if k == 1 else xty)

    def contributions(self, x, y):
        """Per-row contributions ``t(x, y)`` for rows of ``x`` (m, p) and ``y`` (m,) or (m, k)."""
        x = np.atleast_2d(np.asarray(x, dtype=float))
        y = np.asarray(y, dtype=float).reshape(len(x), self.n_outputs)
        I, J = self.pairs
        parts = []
        if self.fit_intercept:
            parts.append(x)
        parts += [2.0 * x**2, x[:, I] * x[:, J]]
        if self.fit_intercept:
            parts.append(y)
        parts.append((x[:, :, None] * y[:, None, :]).reshape(len(x), -1))
        return np.concatenate(parts, axis=1)


def linf_sensitivity(p, fit_intercept=True, n_outputs=1):
    """``Delta_inf`` of T: 2 (each entry ranges over an interval of length 2)."""
    return 2.0


def _l1_gain(c, p):
    """``max over |S| <= p`` of ``c S - S^2 (p + 3) / (2 p)`` (see "Several outputs")."""
    c = abs(c)
    if c <= p + 3:
        return c * c * p / (2.0 * (p + 3.0))
    return c * p - p * (p + 3.0) / 2.0


def _l1_best_split(p, fit_intercept, n_outputs):
    """``(k_plus, S)``: the maximising number of outputs with ``y' = y`` and the sum ``S``."""
    k = n_outputs

    def value(kp):
        if fit_intercept:
            return 2.0 * (k - kp) + _l1_gain(k - 1 - 2 * kp, p)
        return _l1_gain(k - 2 * kp, p)

    kp = max(range(k + 1), key=value)
    c = (k - 1 - 2 * kp) if fit_intercept else (k - 2 * kp)
    S = float(np.clip(c * p / (p + 3.0), -p, p))
    return kp, S, value(kp)


def l1_sensitivity(p, fit_intercept=True, n_outputs=1):
    """Exact ``Delta_1`` of T (derivation in the module docstring)."""
    base = p * (p - 1) / 2.0 + (2.0 + n_outputs) * p + (p if fit_intercept else 0.0)
    return base + _l1_best_split(p, fit_intercept, n_outputs)[2]


def l2_sensitivity(p, fit_intercept=True, n_outputs=1):
    """``Delta_2`` of T (exact for one output except odd p >= 5; see the module docstring)."""
    if fit_intercept:
        one = 4.0 + max(0.5 * p * p + 5.5 * p, p * p + 4.0 * p)
        block = 4.0 * (p + 1.0)  # sup of one extra target block, squared
    else:
        one = 1.0 + max(0.5 * p * p + 4.5 * p, p * p + 2.0 * p)
        block = 4.0 * p
    return math.sqrt(one + (n_outputs - 1) * block)


def lp_sensitivity(r, p, fit_intercept=True, n_outputs=1):
    """An upper bound on ``Delta_r`` of T for the lr norm, ``1 < r < inf`` (module docstring).

    By log-convexity of ``r -> ||v||_r`` (Holder), ``||v||_r^r <= ||v||_inf^(r-1) ||v||_1``
    and, for ``r >= 2``, ``||v||_r^r <= ||v||_inf^(r-2) ||v||_2^2``; for ``1 < r < 2``,
    ``||v||_r <= ||v||_1^theta ||v||_2^(1-theta)`` with ``theta = 2/r - 1``. The sup of a
    product is at most the product of the sups, so each gives a bound; we take the smallest.
    """
    r = float(r)
    d1 = l1_sensitivity(p, fit_intercept, n_outputs)
    d2 = l2_sensitivity(p, fit_intercept, n_outputs)
    dinf = linf_sensitivity(p, fit_intercept, n_outputs)
    bounds = [(dinf ** (r - 1.0) * d1) ** (1.0 / r)]
    if r >= 2.0:
        bounds.append((dinf ** (r - 2.0) * d2 * d2) ** (1.0 / r))
    else:
        theta = 2.0 / r - 1.0
        bounds.append(d1**theta * d2 ** (1.0 - theta))
    return min(bounds)


def sensitivity(norm, p, fit_intercept=True, n_outputs=1):
    """``Delta`` of T in a named norm (``"l1"``, ``"l2"``, ``"linf"``) or the lr norm ``r``."""
    named = {"l1": l1_sensitivity, "l2": l2_sensitivity, "linf": linf_sensitivity}
    if isinstance(norm, str):
        return named[norm](p, fit_intercept, n_outputs)
    return lp_sensitivity(norm, p, fit_intercept, n_outputs)


def l1_attaining_pair(p, fit_intercept=True, n_outputs=1):
    """A pair of rows ``((x, y), (x', y'))`` that attains :func:`l1_sensitivity`.

    ``x = 1``, ``x' = (S / p) 1``, ``y = 1`` and ``y'_m = -1`` except for the last ``k_plus``
    outputs, where ``y'_m = 1`` (one output: ``y`` and ``y'`` are scalars).
    """
    kp, S, _ = _l1_best_split(p, fit_intercept, n_outputs)
    x, xp = np.ones(p), np.full(p, S / p)
    y = np.ones(n_outputs)
    yp = np.where(np.arange(n_outputs) >= n_outputs - kp, 1.0, -1.0)
    if n_outputs == 1:
        return (x, 1.0), (xp, float(yp[0]))
    return (x, y), (xp, yp)


def l2_lower_pair(p, fit_intercept=True):
    """The best vertex pair of the l2 proof (attains :func:`l2_sensitivity` when exact)."""
    x = np.ones(p)
    tau = np.where(np.arange(p) < p // 2, 1.0, -1.0)  # sum tau = 0 (p even) or -1 (p odd)
    if fit_intercept:
        if 0.5 * p * p + 5.5 * p >= p * p + 4.0 * p:
            return (x, 1.0), (np.zeros(p), -1.0)
        return (x, 1.0), (tau, -1.0)
    if 0.5 * p * p + 4.5 * p > p * p + 2.0 * p or (p % 2 == 0 and p <= 5):
        return (x, 1.0), (np.zeros(p), -1.0)
    return (x, 1.0), (tau, 1.0 if p % 2 else -1.0)


# ---------------------------------------------------------------------------------------------
# The hull body of SPEC section 4 (seed 001 section 5.1)


def hull_contains(U, layout):
    """Membership oracle of the hull body K for rows of ``U`` (shape ``(m, d)`` or ``(d,)``).

    ``u`` is in K when, for every feature j, ``(u_{L_j}, u_{S_j})`` lies in
    ``K2 = {|u1| <= 2, |u2| <= 2, |u2| <= 2 - 2 (|u1| - 1)^2 if |u1| > 1}``, and every triple
    ``(u_{L_j}, u_{L_k}, u_{C_jk})`` and ``(u_Y, u_{L_j}, u_{P_j})`` lies in
    ``K3 = {|u_i| <= 2, |u_1| + |u_2| + |u_3| <= 4}``. K contains the sensitivity space of T
    (each constraint is the convex hull of the sensitivity space of a sub-vector of T, and a
    difference vector projects into each of them), is symmetric, convex (an intersection of
    symmetric convex cylinders) and bounded (every coordinate is bounded by 2), so it is the
    unit ball of a norm in which T has sensitivity 1.
    """
    U = np.asarray(U, dtype=float)
    single = U.ndim == 1
    U = np.atleast_2d(U)
    A = np.abs(U)
    if np.any(~np.isfinite(A)):
        A = np.where(np.isfinite(A), A, np.inf)
    a = A[:, layout.lin]
    s = A[:, layout.sq]
    c = A[:, layout.cross]
    yy = A[:, layout.ysum[0]]
    pxy = A[:, layout.xy]
    ok = np.all(A <= 2.0, axis=1)
    excess = np.maximum(a - 1.0, 0.0)
    ok &= np.all(s <= 2.0 - 2.0 * excess**2, axis=1)
    I, J = layout.pairs
    if len(I):
        ok &= np.all(a[:, I] + a[:, J] + c <= 4.0, axis=1)
    ok &= np.all(yy[:, None] + a + pxy <= 4.0, axis=1)
    return bool(ok[0]) if single else ok


@lru_cache(maxsize=16)
def hull_body(p):
    """The hull body for p features (with intercept) as a :class:`~dpreg.noise.ConvexBody`.

    Raises ``ValueError`` (from the body's feasibility check, at first use) when box rejection
    is infeasible; the caller turns this into an error naming a norm that works.
    """
    from ..noise import ConvexBody

    layout = Layout(int(p), True)
    body = ConvexBody(lambda U: hull_contains(U, layout), half_widths=np.full(layout.dim, 2.0))
    return body
