"""The K-norm gradient mechanism (KNG) and an exact-conditional line sampler for it.

KNG (Reimherr & Awan, seed 002, section 3) releases one draw from the density

    f_D(theta)  proportional to  exp( -epsilon / (2 Delta) * || grad l_n(theta; D) ||_K )

on a **data-independent** parameter domain ``Theta``, where ``Delta`` bounds the K-norm
sensitivity of the gradient: ``|| grad l_n(theta; D) - grad l_n(theta; D') ||_K <= Delta`` for
all neighbouring ``D, D'`` and (almost) all ``theta`` in ``Theta``.

Privacy (proof sketch)
----------------------
Write ``g_D = grad l_n(.; D)`` and ``s = epsilon / (2 Delta)``. For neighbours ``D, D'`` and any
``theta``, the reverse triangle inequality gives
``| ||g_D(theta)||_K - ||g_D'(theta)||_K | <= ||g_D(theta) - g_D'(theta)||_K <= Delta``, so the
*unnormalised* densities satisfy ``q_D(theta) <= exp(epsilon / 2) q_D'(theta)``. Integrating
over ``Theta`` gives the same bound for the normalising constants,
``c_D' <= exp(epsilon / 2) c_D``. Hence
``f_D(theta) / f_D'(theta) = (q_D / q_D') (c_D' / c_D) <= exp(epsilon)``: the mechanism is
epsilon-DP. Half of the budget pays for the change of the exponent, the other half for the change
of the normalising constant; this is where the factor 2 in ``epsilon / (2 Delta)`` comes from.
The argument needs only that ``Theta`` (or a base measure) does not depend on the data and that
the density is integrable; restricting the density to a data-independent box keeps the
guarantee. A bounded gradient (as in quantile regression) makes ``exp(-s ||g||)`` *not*
integrable on R^d, which is why a domain is required.

Structure exploited by the sampler
----------------------------------
Many robust objectives (quantile/median/LAD regression, hinge loss) have a gradient that is a
sum of step functions of linear indices::

    g(theta) = b + sum_i V_i * 1{ U_i^T theta >= c_i }          (:class:`StepGradient`)

Along any line ``theta + t u`` the indicator of record ``i`` flips once, at
``t_i = (c_i - U_i^T theta) / (U_i^T u)``, so ``g`` is piecewise constant in ``t`` with
breakpoints ``t_i``. Sorting the breakpoints and taking cumulative sums of the jumps
``sign(U_i^T u) V_i`` gives ``g`` on every segment, hence the exact one-dimensional conditional
law of the KNG density (piecewise constant), drawn by picking a segment with probability
proportional to length times density and then a uniform point inside it
(:func:`sample_piecewise_exponential`). Cycling such exact line updates over a set of directions
is a Gibbs / hit-and-run sampler with no step size to tune (:func:`run_chains`): fixed
directions (coordinate axes), fresh uniformly random directions, and optional *radial* moves
along the line through a fixed anchor, drawn with the polar Jacobian ``|r|^(d-1)``
(:func:`sample_piecewise_radial`); each leaves the target invariant. Each line update
costs ``O(n d)`` for the matrix-vector products and cumulative sums plus ``O(n log n)`` for the
sort, so a sweep over ``k`` directions costs ``O(k n (d + log n))``, fully vectorised.

The same machinery draws from any density whose logarithm is piecewise *affine* along lines
with these breakpoints: the exponential mechanism with the objective itself as utility has
log-density ``-s' l_n(theta + t u)``, whose slope on a segment is ``-s' u^T g`` (used by the
exponential-mechanism baseline of ``benchmarks/quantile.py``).

Exact draws and the approximate chain
-------------------------------------
:meth:`KNG.sample_exact` is an **exact** draw for every ``d`` of a cell of a public
power-of-two grid (the cell centre ``c_k`` with probability ``∝ exp(-s ||g(c_k)||_K)``): for
``d == 1`` with unit index vectors and integer jumps (the private quantiles of
:mod:`dpreg.tools`) a segment-then-cell draw with exact integer gradients
(:mod:`dpreg._kng_line`); otherwise adaptive rejection sampling with box envelopes
(:mod:`dpreg._kng_exact`, :mod:`dpreg._kng_grid`; the running time depends on the data, the
law does not). The float line draws of :func:`sample_piecewise_exponential` and
:func:`sample_piecewise_radial` serve only the chains below. The chains
of :func:`run_chains` are approximate: their law converges to the target but after finitely
many sweeps it is only close to it; if the law of the release is within total variation
``gamma`` of the KNG density for every data set, the release is
``(epsilon, gamma (1 + e^epsilon))``-DP. No bound on ``gamma`` is computed. Convergence
diagnostics computed from several chains are functions of the data and are **not** private.
"""

from __future__ import annotations

import numbers

import numpy as np
from joblib import Parallel, delayed

from ._kng_line import line_release_applies, sample_line_grid, scale_down
from ._validation import check_epsilon, check_random_state, check_sensitivity
from .noise.balls import make_ball

__all__ = [
    "KNG",
    "ChainResult",
    "StepGradient",
    "run_chains",
    "sample_piecewise_exponential",
    "sample_piecewise_radial",
    "split_rhat",
]


# --------------------------------------------------------------------------------------------
# Gradient structure
# --------------------------------------------------------------------------------------------
class StepGradient:
    """A gradient ``g(theta) = offset + sum_i V_i 1{U_i^T theta >= c_i}``.

    Parameters
    ----------
    U : array of shape (n, d)
        Index vectors.
    c : array of shape (n,)
        Thresholds.
    V : array of shape (n, d), optional
        Jumps (default ``U``).
    offset : array of shape (d,), optional
        Constant part (default 0).

    Examples
    --------
    The gradient of the tau-quantile (check) loss ``sum_i rho_tau(y_i - x_i^T theta)`` is
    ``sum_i x_i (1{x_i^T theta >= y_i} - tau)``:

    >>> import numpy as np
    >>> from dpreg.kng import StepGradient
    >>> X, y = np.ones((4, 1)), np.array([0.0, 1.0, 2.0, 3.0])
    >>> g = StepGradient(X, y, offset=-0.5 * X.sum(axis=0))
    >>> g(np.array([1.5]))
    array([0.])
    """

    def __init__(self, U, c, V=None, offset=None):
        self.U = np.ascontiguousarray(np.asarray(U, dtype=float))
        if self.U.ndim != 2:
            raise ValueError("U must be a 2-D array.")
        n, d = self.U.shape
        self.c = np.asarray(c, dtype=float).reshape(n)
        self.V = self.U if V is None else np.ascontiguousarray(np.asarray(V, dtype=float))
        if self.V.shape != (n, d):
            raise ValueError("V must have the shape of U.")
        self.offset = np.zeros(d) if offset is None else np.asarray(offset, float).reshape(d)
        self._Vt = np.ascontiguousarray(self.V.T)

    @property
    def dim(self):
        return self.U.shape[1]

    def __call__(self, theta, chunk=4096):
        """Gradient at ``theta`` (shape ``(d,)``) or at each row of ``theta`` (``(m, d)``)."""
        theta = np.asarray(theta, dtype=float)
        single = theta.ndim == 1
        T = np.atleast_2d(theta)
        out = np.empty((T.shape[0], self.dim))
        for start in range(0, T.shape[0], chunk):
            block = T[start : start + chunk]
            active = (block @ self.U.T) >= self.c
            out[start : start + chunk] = active @ self.V + self.offset
        return out[0] if single else out

    def along_line(self, Utheta, Uu, t_lo, t_hi):
        """The gradient on ``theta + t u`` as a step function of ``t`` in ``[t_lo, t_hi]``.

        Parameters
        ----------
        Utheta, Uu : arrays of shape (n,)
            ``U @ theta`` and ``U @ u``.
        t_lo, t_hi : float
            The segment of the line to describe (finite, ``t_lo < t_hi``).

        Returns
        -------
        edges : array of shape (k + 1,)
            ``t_lo``, the sorted breakpoints inside ``(t_lo, t_hi)``, ``t_hi``.
        G : array of shape (k, d)
            The gradient on each of the ``k`` segments (a transposed view of a contiguous
            ``(d, k)`` array).
        """
        with np.errstate(over="ignore"):  # past 1.8e308: +-inf, on the same side of every t
            r = self.c - Utheta  # record i is active iff t * Uu_i >= r_i
        G0 = self._Vt @ ((t_lo * Uu) >= r).astype(float) + self.offset
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            bp = r / Uu  # +-inf or nan where Uu_i == 0 (or beyond 1.8e308): never switch
        idx = np.flatnonzero((bp > t_lo) & (bp < t_hi))
        idx = idx[np.argsort(bp[idx])]  # ties have probability zero and do not matter
        bp = bp[idx]
        # crossing t_i upwards switches record i on when Uu_i > 0 and off when Uu_i < 0;
        # work in the (d, k) layout: contiguous rows make gather and cumsum fast
        Gt = np.empty((self.dim, bp.size + 1))
        Gt[:, 0] = G0
        np.cumsum(np.take(self._Vt, idx, axis=1) * np.sign(Uu[idx]), axis=1, out=Gt[:, 1:])
        Gt[:, 1:] += G0[:, None]
        G = Gt.T
        edges = np.concatenate(([t_lo], bp, [t_hi]))
        return edges, G


# --------------------------------------------------------------------------------------------
# One-dimensional exact draws
# --------------------------------------------------------------------------------------------
def _log_segment_integral(length, slope):
    """``log int_0^length exp(slope * s) ds`` (vectorised, stable)."""
    length = np.asarray(length, dtype=float)
    slope = np.asarray(slope, dtype=float)
    a = np.abs(slope) * length
    small = a < 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        general = np.maximum(slope * length, 0.0) + np.log(-np.expm1(-a)) - np.log(np.abs(slope))
        flat = np.log(length)
    return np.where(small, flat, general)


def _pick_segment(logw, rng):
    """Index ``k`` with probability proportional to ``exp(logw[k])`` (one uniform)."""
    top = np.max(logw)
    if not np.isfinite(top):
        raise ValueError("The density has no mass on the given segments.")
    cum = np.cumsum(np.exp(logw - top))
    k = int(np.searchsorted(cum, rng.uniform() * cum[-1], side="right"))
    k = min(k, logw.size - 1)
    while not np.isfinite(logw[k]):  # only reachable through round-off at a zero-mass end
        k -= 1
    return k


def sample_piecewise_exponential(edges, log_level, slope=None, rng=None):
    """Exact draw from the density ``∝ exp(log_level[k] + slope[k] (t - edges[k]))`` on
    ``[edges[k], edges[k+1])``.

    Parameters
    ----------
    edges : array of shape (k + 1,)
        Non-decreasing segment edges (zero-length segments get no mass).
    log_level : array of shape (k,)
        Log-density at the left edge of each segment.
    slope : array of shape (k,), optional
        Slope of the log-density on each segment (default 0: piecewise constant).
    rng : numpy Generator or seed

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.kng import sample_piecewise_exponential
    >>> t = sample_piecewise_exponential(np.array([0.0, 1.0, 3.0]), np.log([1.0, 0.5]), rng=0)
    >>> 0.0 <= t <= 3.0
    True
    """
    rng = check_random_state(rng)
    edges = np.asarray(edges, dtype=float)
    lengths = np.diff(edges)
    log_level = np.asarray(log_level, dtype=float)
    with np.errstate(divide="ignore"):
        if slope is None:
            logw = log_level + np.log(lengths)
        else:
            slope = np.asarray(slope, dtype=float)
            logw = log_level + _log_segment_integral(lengths, slope)
    k = _pick_segment(np.where(lengths > 0, logw, -np.inf), rng)
    L, v = lengths[k], rng.uniform()
    b = 0.0 if slope is None else slope[k]
    if abs(b) * L < 1e-12:
        s = v * L
    elif b > 0:
        s = L + np.log(v + (1.0 - v) * np.exp(-b * L)) / b
    else:
        s = np.log1p(v * np.expm1(b * L)) / b
    return float(edges[k] + min(max(s, 0.0), L))


def sample_piecewise_radial(edges, log_level, power, rng=None):
    """Exact draw from the density ``∝ exp(log_level[k]) |r|^power`` on ``[edges[k], edges[k+1])``.

    This is the conditional law of a target along a line through a fixed centre in polar
    coordinates (``power = d - 1``), used by the radial moves of :func:`run_chains`.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.kng import sample_piecewise_radial
    >>> r = sample_piecewise_radial(np.array([-1.0, 2.0]), np.zeros(1), power=2, rng=0)
    >>> -1.0 <= r <= 2.0
    True
    """
    rng = check_random_state(rng)
    edges = np.asarray(edges, dtype=float)
    log_level = np.asarray(log_level, dtype=float)
    if edges[0] < 0 < edges[-1]:  # split the segment that contains the centre
        j = int(np.searchsorted(edges, 0.0, side="right"))
        if edges[j - 1] != 0.0:
            edges = np.insert(edges, j, 0.0)
            log_level = np.insert(log_level, j, log_level[j - 1])
    a, b = edges[:-1], edges[1:]
    lo = np.minimum(np.abs(a), np.abs(b))
    hi = np.maximum(np.abs(a), np.abs(b))
    q = float(power) + 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = q * (np.log(lo) - np.log(hi))  # log (lo/hi)^q, -inf when lo == 0
        logw = log_level + q * np.log(hi) + np.log(-np.expm1(log_ratio)) - np.log(q)
    logw = np.where(hi > lo, logw, -np.inf)
    k = _pick_segment(logw, rng)
    rho = np.exp(log_ratio[k])
    radius = hi[k] * (rho + rng.uniform() * (1.0 - rho)) ** (1.0 / q)
    radius = min(max(radius, lo[k]), hi[k])
    return float(radius if b[k] > 0 else -radius)


# --------------------------------------------------------------------------------------------
# The mechanism
# --------------------------------------------------------------------------------------------
class KNG:
    """The K-norm gradient mechanism on a box, for a :class:`StepGradient`.

    Parameters
    ----------
    gradient : StepGradient
        Gradient of the objective (data enter only here).
    epsilon : float
        Privacy budget of one release.
    sensitivity : float
        ``Delta``: bound on ``||g_D(theta) - g_D'(theta)||_K`` over neighbours and the domain.
        It is the caller's responsibility to derive it (see the module docstring).
    norm : "l1", "l2", "linf", float p >= 1 or a ball
        The norm ``K``.
    lower, upper : arrays of shape (d,)
        The data-independent box ``Theta`` on which the density lives.

    Examples
    --------
    Smith's private median of ``y`` (intercept-only quantile regression, exact sampler):

    >>> import numpy as np
    >>> from dpreg.kng import KNG, StepGradient
    >>> y = np.arange(101.0)
    >>> g = StepGradient(np.ones((101, 1)), y, offset=[-0.5 * 101])
    >>> mech = KNG(g, epsilon=1.0, sensitivity=1.0, lower=[-1000.0], upper=[1000.0])
    >>> theta = mech.sample_exact(random_state=0)
    >>> bool(abs(theta[0] - 50) < 25)
    True
    """

    def __init__(self, gradient, epsilon, sensitivity, norm="linf", lower=None, upper=None):
        self.gradient = gradient
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        d = gradient.dim
        self.ball = make_ball(norm, d)
        self.lower = np.broadcast_to(np.asarray(lower, dtype=float), (d,)).copy()
        self.upper = np.broadcast_to(np.asarray(upper, dtype=float), (d,)).copy()
        if not (np.all(np.isfinite(self.lower)) and np.all(np.isfinite(self.upper))):
            raise ValueError("The KNG domain must be a bounded box (finite lower/upper).")
        if np.any(self.lower >= self.upper):
            raise ValueError("The KNG domain needs lower < upper in every coordinate.")
        if not np.all(np.isfinite(self.upper - self.lower)):
            raise ValueError("The KNG domain is too wide: upper - lower overflows.")
        self.scale = self.epsilon / (2.0 * self.sensitivity)

    @property
    def dim(self):
        return self.gradient.dim

    def log_density(self, theta):
        """Unnormalised log-density (``-inf`` outside the box); rows of ``theta`` allowed."""
        theta = np.asarray(theta, dtype=float)
        logq = -self.scale * self.ball.norm(self.gradient(theta))
        inside = np.all((theta >= self.lower) & (theta <= self.upper), axis=-1)
        return np.where(inside, logq, -np.inf)

    # -- the line-target protocol used by run_chains ------------------------------------
    def start_cache(self, theta):
        return self.gradient.U @ theta

    def line(self, theta, cache, u, t_lo, t_hi):
        """Piecewise description of the log-density on ``theta + t u``, ``t in [t_lo, t_hi]``.

        Returns ``(edges, log_level, slope, Uu)``; ``slope`` is None (piecewise constant).
        """
        Uu = self.gradient.U @ u
        edges, G = self.gradient.along_line(cache, Uu, t_lo, t_hi)
        return edges, -self.scale * self.ball.norm(G), None, Uu

    def sample_exact(
        self, random_state=None, max_boxes=200_000, return_info=False, jump_bound=None,
        rounding_rows=None, progress=None, memory_budget=None,
    ):  # fmt: skip
        """One exact draw from the KNG density.

        ``d > 1``, or any ``d`` with ``jump_bound``: adaptive rejection sampling with box
        envelopes (:class:`dpreg._kng_exact.BoxSampler`; exact law, data-dependent running
        time) that releases the centre of a cell of a public power-of-two grid, drawn with
        probability proportional to the density at the centre (``docs/
        kng_quantile_regression.md``, "Floating point"). ``d == 1`` without ``jump_bound``,
        unit index vectors and integer jumps (Smith's private quantile, :mod:`dpreg.tools`):
        the same grid law drawn segment by segment with exact integer gradients and the scale
        rounded down, so nothing is left to charge (:mod:`dpreg._kng_line`,
        ``docs/floating_point.md``); other ``d == 1`` gradients use the box sampler.

        Parameters
        ----------
        random_state : None, int, RandomState or Generator
        max_boxes : int, default=200_000
            Box budget of the box sampler (memory); beyond it the envelope is frozen and
            plain rejection continues, so the law stays exact.
        return_info : bool, default=False
            Also return a dict of sampler statistics (box count, proposals, acceptance
            bound). **They depend on the data and are not private.**
        jump_bound : array of shape (d,), optional
            Public bounds ``|V_ij| <= b_j`` on the gradient's jumps (and ``|offset_j| <= n
            b_j``). When given, the density scale is lowered just enough to pay for the float
            error of the gradient sums (:func:`dpreg._kng_grid.float_scale`), so the grid
            release is epsilon-DP as computed; without it that error is not charged.
        rounding_rows : int, optional
            The ``n`` charged by ``float_scale`` (default: the gradient's rows). A weighted
            gradient, whose jumps ``fl(w_i x_ij)`` carry one more rounding each, passes
            ``n + 1`` (``docs/kng_quantile_regression.md``, "Sample weights").
        progress : callable, optional
            Display hook of :meth:`dpreg._kng_exact.BoxSampler.sample`.
        memory_budget : int, optional
            Bytes for the box sampler's working set (:func:`dpreg._kng_exact.memory_plan`,
            which also gives the default); a budget too small for the rows raises
            ``ValueError`` before the draw starts.
        """
        rng = check_random_state(random_state)
        scale = self.scale
        if jump_bound is not None:
            from ._kng_grid import float_scale

            n = self.gradient.U.shape[0] if rounding_rows is None else int(rounding_rows)
            scale = float_scale(self.epsilon, self.sensitivity, self.ball, n, jump_bound)
        if self.dim == 1 and jump_bound is None and line_release_applies(self.gradient, self.ball):
            # exact segment-then-cell draw of the same grid law (dpreg._kng_line)
            s = scale_down(self.epsilon, self.sensitivity)
            t, info = sample_line_grid(
                self.gradient, s, self.lower[0], self.upper[0], rng, return_info=True
            )
            theta = np.array([t])
            info = {"n_boxes": 0, "acceptance_bound": 1.0, **info}
        else:
            from ._kng_exact import BoxSampler

            sampler = BoxSampler(
                self.gradient, scale, self.ball, self.lower, self.upper, max_boxes,
                memory_budget=memory_budget,
            )  # fmt: skip
            theta, info = sampler.sample(rng, progress=progress)
            # a deterministic function of the released cell (post-processing)
            theta = np.clip(theta, self.lower, self.upper)
        return (theta, info) if return_info else theta


def _line_range(theta, u, lower, upper):
    """The interval of ``t`` with ``theta + t u`` inside the box."""
    nz = u != 0
    a = (lower[nz] - theta[nz]) / u[nz]
    b = (upper[nz] - theta[nz]) / u[nz]
    return float(np.max(np.minimum(a, b))), float(np.min(np.maximum(a, b)))


def _line_update(target, theta, cache, u, rng):
    t_lo, t_hi = _line_range(theta, u, target.lower, target.upper)
    if not t_hi > t_lo:
        return theta, cache
    edges, log_level, slope, Uu = target.line(theta, cache, u, t_lo, t_hi)
    t = sample_piecewise_exponential(edges, log_level, slope, rng)
    theta = np.clip(theta + t * u, target.lower, target.upper)
    return theta, cache + t * Uu


# --------------------------------------------------------------------------------------------
# Chains
# --------------------------------------------------------------------------------------------
class ChainResult:
    """Output of :func:`run_chains`.

    Attributes
    ----------
    final : array of shape (n_chains, d)
        Last state of every chain (``final[0]`` is the one an estimator releases).
    traces : array of shape (n_chains, n_sweeps + 1, d)
        States after every sweep (row 0 is the data-independent start).
    """

    def __init__(self, traces):
        self.traces = traces
        self.final = traces[:, -1, :].copy()

    def rhat(self):
        """Split-R-hat of every coordinate on the second half of the traces (not private)."""
        return split_rhat(self.traces)


def _radial_update(target, theta, cache, anchor, anchor_cache, rng):
    """Exact conditional move along the line through ``anchor`` and ``theta``.

    In polar coordinates around the fixed ``anchor`` the target restricted to that line has
    density ``∝ f(anchor + r w) |r|^(d-1)``; drawing ``r`` from it leaves ``f`` invariant
    whatever the anchor is (the anchor only affects how fast the chain mixes).
    """
    w = theta - anchor
    norm_w = np.linalg.norm(w)
    if not norm_w > 1e-12 * (1.0 + np.linalg.norm(anchor)):
        w = rng.standard_normal(theta.size)
        norm_w = np.linalg.norm(w)
    w = w / norm_w
    r_lo, r_hi = _line_range(anchor, w, target.lower, target.upper)
    if not r_hi > r_lo:
        return theta, cache
    edges, log_level, slope, Uw = target.line(anchor, anchor_cache, w, r_lo, r_hi)
    if slope is not None:
        raise ValueError("Radial moves need a piecewise-constant line law.")
    r = sample_piecewise_radial(edges, log_level, theta.size - 1, rng)
    theta = np.clip(anchor + r * w, target.lower, target.upper)
    return theta, anchor_cache + r * Uw


def _run_one_chain(
    target, start, directions, n_sweeps, seed, anchor=None, n_random=0, progress=None
):
    rng = np.random.default_rng(seed)
    theta = np.array(start, dtype=float)
    cache = target.start_cache(theta)
    anchor_cache = None if anchor is None else target.start_cache(anchor)
    trace = np.empty((n_sweeps + 1, theta.size))
    trace[0] = theta
    for sweep in range(n_sweeps):
        if anchor is not None:
            theta, cache = _radial_update(target, theta, cache, anchor, anchor_cache, rng)
        for u in directions:
            theta, cache = _line_update(target, theta, cache, u, rng)
        for _ in range(n_random):  # hit-and-run: a uniformly random direction
            u = rng.standard_normal(theta.size)
            theta, cache = _line_update(target, theta, cache, u / np.linalg.norm(u), rng)
        # recompute the cache once per sweep so round-off cannot accumulate
        cache = target.start_cache(theta)
        trace[sweep + 1] = theta
        if progress is not None:
            progress.update(1)
    return trace


def _check_directions(directions, d):
    if directions is None:
        return np.eye(d)
    D = np.asarray(directions, dtype=float)
    if D.ndim != 2 or D.shape[1] != d or D.shape[0] < d:
        raise ValueError(f"directions must be an array of shape (k >= {d}, {d}).")
    if np.linalg.matrix_rank(D) < d:
        raise ValueError("directions must span R^d, or the chain cannot reach the target.")
    return D / np.linalg.norm(D, axis=1, keepdims=True)


def run_chains(
    target,
    n_sweeps,
    n_chains=1,
    directions=None,
    anchor=None,
    n_random=0,
    starts=None,
    random_state=None,
    n_jobs=None,
    progress_bar=False,
):
    """Run Gibbs chains with exact one-dimensional conditional updates.

    Each sweep updates the state along every direction in turn, drawing the exact conditional
    law of the target on that line (restricted to the box). The target is any object with
    ``dim``, ``lower``, ``upper``, ``start_cache(theta)`` and
    ``line(theta, cache, u, t_lo, t_hi) -> (edges, log_level, slope, dcache)`` (e.g.
    :class:`KNG`).

    Parameters
    ----------
    target : KNG or compatible
    n_sweeps : int
        Sweeps per chain (one sweep = one update along every direction).
    n_chains : int, default=1
        Independent chains; chain ``k`` uses the ``k``-th child of ``random_state``'s seed
        sequence, so results do not depend on ``n_jobs``.
    directions : array of shape (k, d), optional
        Update directions (must span R^d); default the coordinate axes.
    anchor : array of shape (d,), optional
        When given, every sweep starts with a radial move: an exact conditional draw along the
        line through ``anchor`` and the current state (with the polar Jacobian
        ``|r|^(d-1)``). This leaves the target invariant for *any* fixed anchor and lets a
        chain jump from a far-away local mode to the main mode in one move when the anchor
        is near the latter. Piecewise-constant targets (KNG) only.
    n_random : int, default=0
        Extra hit-and-run moves per sweep, each along a fresh uniformly random direction
        (independent of the state, so the target stays invariant). They help chains leave
        the many small local modes a sharply peaked KNG density has (large ``epsilon n``).
    starts : array of shape (n_chains, d), optional
        Starting states; default uniform in the box (data-independent, over-dispersed).
    random_state : None, int, RandomState or Generator
    n_jobs : int, optional
        joblib workers across chains.
    progress_bar : bool
        Show a tqdm bar (over sweeps, or over chains when ``n_jobs`` is not 1).

    Returns
    -------
    ChainResult
    """
    if not isinstance(n_sweeps, numbers.Integral) or n_sweeps < 1:
        raise ValueError(f"n_sweeps must be a positive integer, got {n_sweeps!r}.")
    if not isinstance(n_chains, numbers.Integral) or n_chains < 1:
        raise ValueError(f"n_chains must be a positive integer, got {n_chains!r}.")
    rng = check_random_state(random_state)
    d = target.dim
    D = _check_directions(directions, d)
    if anchor is not None:
        anchor = np.clip(np.asarray(anchor, dtype=float).reshape(d), target.lower, target.upper)
    if starts is None:
        starts = rng.uniform(target.lower, target.upper, size=(n_chains, d))
    starts = np.asarray(starts, dtype=float).reshape(n_chains, d)
    seeds = [int(s) for s in rng.integers(0, 2**63 - 1, size=n_chains)]
    parallel = n_jobs not in (None, 1) and n_chains > 1
    if not parallel:
        bar = None
        if progress_bar:
            from tqdm.auto import tqdm

            bar = tqdm(total=n_sweeps * n_chains, desc="KNG sweeps", leave=False)
        try:
            traces = [
                _run_one_chain(
                    target, starts[k], D, int(n_sweeps), seeds[k], anchor, int(n_random), bar
                )
                for k in range(n_chains)
            ]
        finally:
            if bar is not None:
                bar.close()
    else:
        jobs = (
            delayed(_run_one_chain)(
                target, starts[k], D, int(n_sweeps), seeds[k], anchor, int(n_random)
            )
            for k in range(n_chains)
        )
        out = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
        if progress_bar:
            from tqdm.auto import tqdm

            out = tqdm(out, total=n_chains, desc="KNG chains", leave=False)
        traces = list(out)
    return ChainResult(np.stack(traces))


def split_rhat(traces):
    """Split-R-hat (Gelman et al.) per coordinate from traces ``(n_chains, n_draws, d)``.

    The first half of every trace is discarded as burn-in and the rest split in two halves,
    giving ``2 n_chains`` sequences. Values near 1 (say < 1.05) are consistent with
    convergence. Returns NaN for coordinates that never moved. **Not private**: R-hat is a
    function of the data.
    """
    traces = np.asarray(traces, dtype=float)
    n_draws = traces.shape[1]
    keep = traces[:, n_draws // 2 :, :]
    half = keep.shape[1] // 2
    if half < 2:
        return np.full(traces.shape[2], np.nan)
    seqs = np.concatenate([keep[:, :half], keep[:, half : 2 * half]], axis=0)
    means = seqs.mean(axis=1)
    W = seqs.var(axis=1, ddof=1).mean(axis=0)
    B = half * means.var(axis=0, ddof=1)
    var_plus = (half - 1) / half * W + B / half
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(var_plus / W)
    return np.where(W > 0, r, np.nan)
