"""Exact draws from a KNG density with a step gradient, by adaptive rejection with box envelopes.

Target
------
``f(theta) ∝ exp(-s ||g(theta)||_K)`` on a public box ``Theta``, with the step gradient
``g(theta) = b + sum_i V_i 1{U_i^T theta >= c_i}`` (:class:`dpreg.kng.StepGradient`) and
``s = epsilon / (2 Delta)``.

Envelope on a box
-----------------
On a box ``B = [lo, hi]`` the index ``U_i^T theta`` ranges over the interval
``U_i^T m ± |U_i|^T h`` (``m`` the centre, ``h`` the half-widths). If the interval lies above
``c_i`` the indicator is 1 on all of ``B``, if below it is 0; otherwise hyperplane ``i``
*crosses* ``B``. So on ``B``, ``g = g_B + sum_{i crossing} V_i delta_i`` with ``g_B`` fixed and
unknown ``delta_i in {0, 1}``: every coordinate ``g_j`` lies in
``[g_Bj + sum_i min(V_ij, 0), g_Bj + sum_i max(V_ij, 0)]``. An lp norm is monotone in the
absolute values of the coordinates, so the norm over that box of gradients is at least the
norm of the per-coordinate distances of the intervals to 0 and at most the norm of their
per-coordinate largest absolute values. This gives ``m_B <= f <= M_B`` on ``B``. (For a
general ball ``K`` contained in the box of half-widths ``r``: ``||v||_K >= max_j |v_j| / r_j``,
and the gauge is convex, so its maximum over the box of gradients is at one of its vertices.)

Loss-gap bound
--------------
When the jumps equal the index vectors (``V = U``, the quantile loss), ``g`` is a
subgradient of the convex loss ``L(theta) = offset^T theta + sum_i a_i (U_i^T theta - c_i)_+``
(``a_i`` = how many rows were merged into row ``i``). For any point ``q`` and ``theta`` in
``B``, convexity gives ``g(theta)^T (theta - q) >= L(theta) - L(q)``, and
``g^T v <= ||g||_K ||v||_{K*}`` (``K*`` the dual norm, ``sup_{k in K} k^T v``), so

    ||g(theta)||_K >= (min_B L - L(q)) / max_{theta in B} ||theta - q||_{K*}

whenever the numerator is positive. This bound sees what the interval bound cannot: a large
box far from the minimiser, crossed by most hyperplanes, still has a large gradient norm.
``min_B L`` is bounded below by dropping the crossing hinges (``>= 0``): the rest is linear on
``B`` (slope ``g_B``, constant ``-sum_{always active} a_i c_i``), minimised exactly at a vertex.
``q`` is the centre of the box with the smallest certified upper bound on ``L`` seen so far
(``L`` at a centre is the linear part plus the crossing hinges at the centre); any ``q``
gives a valid bound, so this only steers the running time. Float error: one absolute bound
``eL`` (:meth:`BoxSampler._loss_setup`) on every loss value, the dual norm rounded up, and the
gradient's own error subtracted as for the pattern bounds.

Algorithm (adaptive rejection sampling on a grid)
-------------------------------------------------
The box ``Theta`` is widened to a public power-of-two grid (:func:`dpreg._kng_grid.grid_box`)
and every box of the partition is a union of grid cells. Propose: pick box ``B`` with
probability ``W_B / sum W`` (integers ``W_B >= vol(B) M_B`` rescaled, so the envelope ``M'_B``
they define is known exactly), a cell ``k`` of ``B`` uniformly (exact integer draws), and
accept its centre ``c_k`` with probability ``f(c_k) / M'_B``, decided exactly for a real uniform
(:func:`dpreg._kng_grid.accept`; immediately when it lies below ``m_B / M'_B``). A rejected
proposal's box is split on the grid line nearest its midpoint along the coordinate that carries
most of the width of the crossing hyperplanes' index intervals. Before proposing, boxes with the
largest ``vol(B)(M_B - m_B)`` are split until ``sum vol m / sum vol M`` (a lower bound on the
acceptance rate) is not too small; then refinement rounds alternate with batches of proposals.
Past a box budget the partition is frozen and plain rejection continues (it never gives up).
Crossing lists are a cache under a public memory guard: when more than ``list_entries``
are stored, the lists of the boxes with the smallest proposal weight are dropped, and a box
without a list gets it recomputed from all rows when it is split or proposed. Every limit (box
budget, stored entries, entries gathered by one split, entries whose temporaries exist at
once) comes from :func:`memory_plan`, a function of public ``(n, d, memory budget)`` whose
``bound`` covers the sampler's whole working set; a budget that cannot hold the rows is
refused before anything is drawn.

Why the law is exact whatever the splitting: at every proposal, conditionally on everything
that happened before (which fixes the current envelope ``E(k) = M'_B`` for the cells of ``B``),
the proposal picks cell ``k`` with probability ``E(k) / sum E`` and accepts it with
probability ``f(c_k) / E(k)``, so ``P(accept, cell k | past) = f(c_k) / sum E``: given
acceptance the cell has probability ``f(c_k) / sum f`` for every history, hence
unconditionally. The data steer the partition, and so the running time, but not the law of
the output (the running time is a timing side channel, outside the guarantee).

Floating point
--------------
Classification of a hyperplane against a box uses the index interval widened by a rounding
slack (relative to ``|U_i|_1 max|theta|``, plus ``2**-1074`` per product that can underflow:
docs/floating_point.md, section 5d), so a hyperplane is only declared fixed when it is fixed
in exact arithmetic; the indicators of the crossing records at a centre are decided exactly
(:func:`dpreg._kng_grid.indicators_at`). Gradients are sums of up to ``n`` terms; the envelope
bounds are moved outwards by an absolute error bound ``(4 n + 1000) u sum_i |V_ij|`` per
coordinate (``u`` the machine epsilon) and a relative ``1e-12`` on the norm, so
``m_B <= f <= M_B`` holds for the density as evaluated in floating point. What that float
evaluation costs in privacy, and how it is paid for, is :func:`dpreg._kng_grid.float_scale`.
"""

from __future__ import annotations

import itertools

import numpy as np

from ._kng_grid import accept, accept_fast, grid_box, indicators_at
from .noise.balls import LpBall

__all__ = ["MIN_BOX_WIDTH", "BoxSampler"]

_EPS = np.finfo(float).eps
# boxes crossed by at most this many hyperplanes get bounds by enumerating on/off patterns
_ENUMERATE = 6
# the directional bound is computed for boxes crossed by at most this many records
_DIRECTIONAL_MAX = 4096
# ... and only from this many parameters on (a public rule; the law is exact either way)
_DIRECTIONAL_MIN_DIM = 5
_PATTERNS = np.array(list(itertools.product((0.0, 1.0), repeat=_ENUMERATE)))
# the largest absolute error of one float product whose exact value is subnormal (half the
# smallest subnormal, rounded up to it): addition and subtraction never add such an error
_UNDERFLOW = 2.0**-1074
#: The narrowest box side the sampler's float error model covers (docs/floating_point.md,
#: section 5c). Its rounding slacks are *relative* (``u |U_i|_1 max|theta|`` per index,
#: ``u`` the unit roundoff), which is valid while the box's numbers are normal floats: a
#: subnormal carries an absolute error up to ``2**-1075`` instead. With every side at least
#: ``2**-450``: the grid step ``g >= 2**-483`` (:func:`dpreg._kng_grid.grid_box`: ``width *
#: 2**-33 < g``) is never clamped at ``2**-1070``; every distance the bounds form from box
#: corners and centres is at least ``g / 2 >= 2**-484``, so its square (the l2 dual norm) is
#: at least ``2**-968``, normal with 54 binades to spare; and the index slack, at least
#: ``8 u max|theta| >= 2**-501`` with an intercept, dwarfs any underflow of the products.
#: A 1e-320-wide response box (a parameter box 1e-320 wide) overflowed a division after the
#: spend. :class:`~dpreg.KNGQuantileRegressor` refuses narrower public domains before the
#: spend and widens a narrower *released* one (post-processing); other callers must pass a
#: box this wide.
MIN_BOX_WIDTH = 2.0**-450


def _run_sums(M, rows, starts):
    """``sum_{r in run b} M[rows[r]]`` for the consecutive runs of ``rows`` that begin at
    ``starts`` (non-decreasing; empty runs give 0)."""
    out = np.zeros((starts.size, M.shape[1]))
    if rows.size == 0:
        return out
    full = np.diff(np.r_[starts, rows.size]) > 0
    out[full] = np.add.reduceat(M[rows], starts[full], axis=0)
    return out


def _merge_duplicates(U, c, V):
    """Rows ``(U_i, c_i)`` made unique, with the jumps ``V_i`` of equal rows added, and the
    number of rows merged into each.

    One lexicographic sort of the key columns (much faster than ``np.unique(axis=0)``); the
    order of the merged rows does not matter to the sampler. Exact: equal rows switch at the
    same points, so their jumps can be summed (in floating point, covered by the error bound).
    """
    keys = np.column_stack([U, c])
    order = np.lexsort(keys.T[::-1])
    sk = keys[order]
    new = np.empty(sk.shape[0], dtype=bool)
    new[:1] = True
    np.any(sk[1:] != sk[:-1], axis=1, out=new[1:])
    starts = np.flatnonzero(new)
    Vs = np.asarray(V, dtype=float)[order]
    Vm = Vs[starts] if starts.size == sk.shape[0] else np.add.reduceat(Vs, starts, axis=0)
    Uu = np.ascontiguousarray(sk[starts, :-1])
    mult = np.diff(np.r_[starts, sk.shape[0]]).astype(float)
    return Uu, np.ascontiguousarray(sk[starts, -1]), np.ascontiguousarray(Vm), mult


#: Public memory guard of the box sampler (see ``memory_plan``): at most this many
#: crossing-list entries are stored (24 bytes each: about 0.4 GB) ...
MAX_LIST_ENTRIES = 2**24
#: ... one split call gathers at most about this many parent entries ...
MAX_SPLIT_ENTRIES = 2**20
#: ... and its temporaries are built for at most this many of them at a time (a *piece*).
MAX_PIECE_ENTRIES = 2**18
#: Default memory budget (bytes) of one box sampler when none is given: 2 GiB, or the
#: per-row part of :func:`memory_plan` plus 1 GiB if that is larger (public: n and d only).
DEFAULT_MEMORY = 2**31

# Bytes charged per unit by :func:`memory_plan` (upper bounds of what the code allocates;
# the derivation is in the docstring there and in docs/kng_quantile_regression.md).
_ROW_BYTES = (80, 272)  # per row: 80 d + 272
_BOX_BYTES = (144, 400)  # per box: 144 d + 400
_PIECE_BYTES = (112, 450)  # per piece entry: 112 d + 450
_CHUNK_BYTES = 144  # per gathered parent entry
_ENTRY_BYTES = 32  # per stored list entry (24 data + the list's array header, amortised)
_ENUM_CHUNK = 2048


def _default_budget(n, d):
    return max(DEFAULT_MEMORY, _fixed_bytes(n, d) + 2**30)


def _fixed_bytes(n, d):
    # rows, plus the pattern enumeration's chunk (64 patterns, four arrays) and 16 MiB slack
    # for the small per-call arrays (a batch of 4096 proposals and the like)
    return n * (_ROW_BYTES[0] * d + _ROW_BYTES[1]) + _ENUM_CHUNK * 64 * d * 32 + 2**24


def memory_plan(n, d, budget=None, max_boxes=200_000):
    """The box sampler's memory plan: limits derived from public ``(n, d, budget, max_boxes)``.

    Returns a dict with ``max_boxes`` (box budget), ``split_entries`` (parent entries one
    split gathers), ``piece_entries`` (entries whose temporaries exist at once),
    ``list_entries`` (stored crossing-list entries) and ``bound``: an upper bound, in bytes,
    of the sampler's working set (everything :class:`BoxSampler` allocates, the gradient's
    arrays included; not the interpreter nor the caller's own copies of the data), at most
    ``budget``. Raises ``ValueError`` when ``budget`` cannot hold what ``n`` rows need at all
    (call it before spending).

    The working set is the sum of

    * rows: ``n (80 d + 272)`` bytes. The merged rows ``U, V`` (and the gradient's own), ``|U|``,
      the signed jump parts (``2 d``), the constants per row (threshold, slack, multiplicity,
      ``a c``) are ``8 n (6 d + 6)``; the duplicate merge's sort keys and copies, a crossing
      list recomputed from all rows (its pieces and their concatenation, ``48 n``) and one
      density evaluation's gathered rows (``8 n (2 d + 4)``) add at most ``8 n (4 d + 12)``
      at a time; one split gathers at most ``split_entries + n`` parent entries and holds
      them with the children's lists and their pieces (``144`` bytes each, the ``n`` part
      charged here);
    * boxes: ``max_boxes (144 d + 400)``: fourteen per-box arrays (``5 d + 9`` floats, doubled
      while a split appends to them), the list slot and array header, and the refinement's
      and the directional bound's per-box temporaries (``8 d`` floats);
    * one piece: ``piece_entries (112 d + 450)``: the two children's candidate records
      (index, deviation, radius, the step along the split coordinate), the classification's
      masks and gathered jumps (``V`` and its signed parts: ``48 d`` per child record), the
      kept records and their copies, and the per-child sums (at most one child pair per
      parent entry);
    * gathered parent entries: ``144 split_entries``;
    * stored lists: ``32 list_entries``.

    Examples
    --------
    >>> from dpreg._kng_exact import memory_plan
    >>> plan = memory_plan(10_000, 3, budget=2**30)
    >>> plan["bound"] <= 2**30, plan["max_boxes"]
    (True, 200000)
    """
    n, d = int(n), int(d)
    budget = _default_budget(n, d) if budget is None else int(budget)
    fixed = _fixed_bytes(n, d)
    avail = budget - fixed
    per_box = _BOX_BYTES[0] * d + _BOX_BYTES[1]
    per_piece = _PIECE_BYTES[0] * d + _PIECE_BYTES[1]
    plan = {
        "max_boxes": int(min(max_boxes, max(avail, 0) // 4 // per_box)),
        "split_entries": int(min(MAX_SPLIT_ENTRIES, max(avail, 0) // 8 // _CHUNK_BYTES)),
        "piece_entries": int(min(MAX_PIECE_ENTRIES, max(avail, 0) // 8 // per_piece)),
        "list_entries": int(min(MAX_LIST_ENTRIES, max(avail, 0) // 2 // _ENTRY_BYTES)),
    }
    # the least that is worth running: 1000 boxes and pieces of 1024 records (or the caps)
    if plan["max_boxes"] < min(max_boxes, 1000) or plan["piece_entries"] < min(
        MAX_PIECE_ENTRIES, 1024
    ):
        need = fixed + 4 * per_box * min(max_boxes, 1000) + 8 * per_piece * 1024
        raise ValueError(
            f"The exact KNG sampler needs at least {need / 2**20:.0f} MiB for {n} rows and "
            f"{d} parameters (memory budget {budget / 2**20:.0f} MiB). Raise the memory "
            "budget or use fewer rows."
        )
    plan["bound"] = int(
        fixed
        + plan["max_boxes"] * per_box
        + plan["piece_entries"] * per_piece
        + plan["split_entries"] * _CHUNK_BYTES
        + plan["list_entries"] * _ENTRY_BYTES
    )
    return plan


class _NormBounds:
    """Lower and upper bounds of ``||g||_K`` over boxes ``[glo, ghi]`` of gradients (rows)."""

    def __init__(self, ball):
        self.ball = ball
        self.lp = isinstance(ball, LpBall)
        if not self.lp:
            self.r = np.asarray(ball.half_widths, dtype=float)
            self.signs = np.array(list(itertools.product((0, 1), repeat=ball.dim)), dtype=bool)

    def lower(self, dist):
        if self.lp:
            return self.ball.norm(dist)
        return np.max(dist / self.r, axis=1)

    def upper(self, glo, ghi):
        if self.lp:
            return self.ball.norm(np.maximum(np.abs(glo), np.abs(ghi)))
        verts = np.where(self.signs[None, :, :], ghi[:, None, :], glo[:, None, :])
        return self.ball.norm(verts.reshape(-1, glo.shape[1])).reshape(glo.shape[0], -1).max(1)


class BoxSampler:
    """Adaptive-rejection sampler for ``exp(-scale ||g(theta)||_K)`` on a box (module docstring).

    Parameters
    ----------
    gradient : dpreg.kng.StepGradient
    scale : float
        ``s = epsilon / (2 Delta)``.
    ball : dpreg.noise.balls.Ball
        Unit ball of the norm ``K``.
    lower, upper : arrays of shape (d,)
        The box ``Theta`` (finite, ``lower < upper``, ``upper - lower`` finite).
    max_boxes : int
        Box budget; beyond it the partition is frozen (the law stays exact).
    min_acceptance : float, optional
        Default 0.001, or 1e-5 from ``d = 5`` on (public). Proposals start once the
        acceptance lower bound ``sum vol m / sum vol M`` reaches this value (before that,
        only refinement rounds).
    eval_budget : int
        Work (records examined) of one batch of proposals before the next refinement round.
    memory_budget : int, optional
        Bytes; the limits of :func:`memory_plan` (box budget, list store, split and piece
        sizes) keep the sampler's working set below it. Default: ``DEFAULT_MEMORY`` or the
        rows' need plus 1 GiB. Raises ``ValueError`` (before any draw) if it cannot fit.
    """

    def __init__(
        self,
        gradient,
        scale,
        ball,
        lower,
        upper,
        max_boxes=200_000,
        min_acceptance=None,
        eval_budget=20_000,
        memory_budget=None,
    ):
        # every limit comes from public (n, d, budget): raises before anything else is built
        plan = memory_plan(
            np.shape(gradient.U)[0], np.shape(gradient.U)[1], memory_budget, max_boxes
        )
        self.memory = plan
        # Records with the same index vector and threshold switch together: merge them (their
        # jumps add up). Exact, and it keeps crossing counts small for duplicated rows.
        self.U, self.c, self.V, mult = _merge_duplicates(gradient.U, gradient.c, gradient.V)
        # V = U: g is a subgradient of the convex L (module docstring, "Loss-gap bound")
        self.convex = gradient.V is gradient.U or np.array_equal(gradient.V, gradient.U)
        self._Vpn = np.hstack([np.maximum(self.V, 0.0), np.minimum(self.V, 0.0)])
        self.scale = float(scale)
        self.ball = ball
        self.bounds = _NormBounds(ball)
        self.max_boxes = plan["max_boxes"]
        # d >= 5 (public): directional bounds and proposals from a lower acceptance bound
        # (measured: at d <= 4 the extra pass costs more time than the boxes it saves)
        self._use_dir = self.U.shape[1] >= _DIRECTIONAL_MIN_DIM
        if min_acceptance is None:
            min_acceptance = 1e-5 if self._use_dir else 1e-3
        self.min_acceptance = float(min_acceptance)
        self.eval_budget = int(eval_budget)
        n, d = self.U.shape
        self.d = d
        total = np.abs(gradient.V).sum(axis=0) + np.abs(gradient.offset)
        self.err = (4.0 * n + 1000.0) * _EPS * total
        # the public release grid and the grid-aligned root box (module docstring)
        self.g, L, H = grid_box(np.reshape(lower, d), np.reshape(upper, d))
        self.L = L
        # copies: the box arrays are later overwritten in place
        lo = L.reshape(1, d).copy()
        hi = H.reshape(1, d).copy()
        # Rounding of the cached index intervals: the centre, half-widths and every update
        # (one per split, at most 51 d splits deep: a box of one grid cell is not split, and
        # the root has fewer than 2**51 cells per coordinate) err by at most
        # ~u ||U_i||_1 max|theta| each. The slack covers all of them from the start, so the
        # cached radius ``rad + slack`` needs no per-depth update.
        big = max(float(np.max(np.abs(lo))), float(np.max(np.abs(hi))))
        depth_max = 51.0 * d
        slack = 8.0 * _EPS * np.abs(self.U).sum(axis=1) * big * (d + 3.0 + 3.0 * depth_max)
        # ... plus the *absolute* error of products that underflow (docs/floating_point.md,
        # section 5d): ``fl(a b) = a b (1 + delta) + eta`` with ``|eta| <= 2**-1075``, and only
        # products with ``U_ij != 0`` can round (``0 * theta_j`` is exact). The root interval
        # has at most ``2 nnz_i`` such products, each split one more on each of its two edges;
        # ``nnz_i (d + 3 + 3 depth_max) 2**-1074`` covers them. The relative term above is
        # relative to ``|U_i|_1 max|theta|``, which misses this when every ``U_ij theta_j`` is
        # subnormal (no intercept, scaled features within ~1e-308 of 0): a hyperplane that
        # crosses the box was declared always active. A row with an entry ``|U_ij| >= 2**-500``
        # in a box at least MIN_BOX_WIDTH wide (``big >= 2**-451``) has a relative term
        # ``>= 2**-993``, and the absolute one is below half its ulp (``< 2**-1046`` for
        # ``d <= 1000``): the sum rounds back to it, so such rows are bit for bit unchanged.
        nnz = np.count_nonzero(self.U, axis=1).astype(float)
        slack = slack + nnz * ((d + 3.0 + 3.0 * depth_max) * _UNDERFLOW)
        self._root_width = hi - lo
        self._absU = np.abs(self.U)
        self._slack = slack
        self._offset = np.asarray(gradient.offset, dtype=float).reshape(d).copy()
        self._loss_setup(mult, slack, big, total, gradient.U.shape[0])
        self.n_rounds = 0
        self.n_splits = 0
        acc = self._classify_rows(lo[0], hi[0])
        gfix0 = self._offset.reshape(1, d)
        w0 = (np.zeros((1, d)),) * 2  # no direction yet for the directional bound
        new = self._finish(lo, hi, gfix0, np.zeros(1), acc, np.zeros(1, int), w0)
        for f in self._FIELDS:
            setattr(self, f, new[f])
        self.lists = new["lists"]
        self._refresh(None)
        self.n_entries = int(sum(lst.shape[0] for lst in self.lists))

    # ---------------------------------------------------------------------------- boxes
    _FIELDS = (
        "lo", "hi", "gfix", "cfix", "lmin", "low", "logM", "logm", "logvol", "split_dim",
        "splittable", "depth", "wdir", "wstep",
    )  # fmt: skip

    def _loss_setup(self, mult, slack, big, total, n_rows):
        """Constants of the loss-gap bound (module docstring): the hinge weights ``a_i``
        (multiplicities of the merged rows), ``a_i c_i``, and one absolute bound ``eL`` on the
        float error of every loss value computed from the boxes' sums."""
        d = self.d
        self._a = mult
        with np.errstate(over="ignore", invalid="ignore"):
            ac = mult * self.c
            T = float(np.sum(np.abs(ac))) + 2.0 * big * float(np.sum(total))
        if not np.isfinite(T):  # e.g. responses near the float limit: no loss-gap bound
            self.convex = False
        self._ac = (ac if self.convex else np.zeros_like(ac)).reshape(-1, 1)
        self._q, self._Lq = None, np.inf
        self._changed = False
        self._gmargin = float(np.sum(self.err * self.ball.norm(np.eye(d))))
        if isinstance(self.ball, LpBall):  # the dual norm (loss-gap and directional bounds)
            p = self.ball.p
            self._dual_ord = 1.0 if p == np.inf else (np.inf if p == 1.0 else p / (p - 1.0))
        else:
            self._dual_ord = None
        if not self.convex:
            self._eL = np.inf
            return
        # loss values are sums of at most n_rows + 2d terms whose absolute values add up to at
        # most T; each sum errs by at most (4 n + 1000) u T (any order, as for ``err``), four
        # of them enter one comparison. The stored index deviations err by at most the slack
        # (so the hinge part of L at a centre by sum a_i slack_i), and the fixed gradient by
        # ``err`` per coordinate (so a linear part by sum_j err_j max|theta_j|).
        slack_sum = float(np.sum(mult * slack))
        T += slack_sum
        # Products that underflow: a loss value has at most d products ``gfix_j theta_j`` (the
        # hinges' come through the index deviations, inside the slack), each off by at most
        # ``2**-1075`` absolute: ``4 d 2**-1074`` for the four values of one comparison.
        self._eL = (
            4.0 * (4.0 * n_rows + 1000.0) * _EPS * T
            + slack_sum
            + big * float(np.sum(self.err))
            + 4.0 * d * _UNDERFLOW
        )

    def _dual_upper(self, v):
        """Upper bound of the dual norm ``sup_{k in K} k^T v`` of rows ``v >= 0``.

        An lq norm with ``1 < q < inf`` sums ``v_j**q``, which underflows (to subnormals, then
        0) or overflows when ``q |log2 max_j v_j|`` leaves the float exponent range: the l2
        dual of distances below about 1e-154, or any distance below 1e-3 when q = 101 (the
        dual of p = 1.01), gave a dual norm too small -- a loss-gap bound too large -- or 0
        and a division by zero. Such rows are scaled by ``2**-e`` (``2**e`` the row's largest
        entry rounded up to a power of two), which is exact, and the norm is scaled back;
        other rows keep the plain value bit for bit."""
        q = self._dual_ord
        if q is not None and 1.0 < q < np.inf:
            e = np.frexp(np.max(v, axis=1))[1]  # max_j v_j in [2**(e-1), 2**e)
            risky = np.abs(e) * q > 900.0
            if np.any(risky):
                v = np.array(v, dtype=float)
                v[risky] = np.ldexp(v[risky], -e[risky, None])
            out = np.linalg.norm(v, ord=q, axis=1)
            out[risky] = np.ldexp(out[risky], e[risky])
        elif q is not None:
            out = np.linalg.norm(v, ord=q, axis=1)
        else:  # K inside the box of half-widths r
            out = v @ np.asarray(self.ball.half_widths, dtype=float)
        return out * (1.0 + 1e-10)

    def _loss_low(self, boxes):
        """Loss-gap lower bound of ``||g||_K`` on ``boxes`` (0 where it says nothing)."""
        if self._q is None or not np.isfinite(self._eL):
            return np.zeros(np.size(boxes))
        num = self.lmin[boxes] - self._Lq - self._eL
        far = np.maximum(np.abs(self.lo[boxes] - self._q), np.abs(self.hi[boxes] - self._q))
        den = self._dual_upper(far)
        # divide only where the bound says something (num > 0): elsewhere a large negative
        # num over a tiny den overflowed, a RuntimeWarning after the spend (a 1e-320-wide
        # box, session 9). Where num > 0, num / den <= ||g||_K <= G is finite (module
        # docstring), so that quotient never overflows.
        ratio = np.divide(num, den, out=np.zeros_like(num), where=num > 0.0)
        low = ratio * (1.0 - 1e-12) - self._gmargin
        return np.maximum(low, 0.0)

    def _refresh(self, boxes):
        """``log M_B`` of ``boxes`` (None: all) from the interval / pattern bound and the
        loss-gap bound with the current reference point."""
        idx = slice(None) if boxes is None else boxes
        low = np.maximum(self.low[idx], self._loss_low(idx))
        self.logM[idx] = -self.scale * low * (1.0 - 1e-12)

    def _offer_reference(self, lo, hi, lcen):
        """Keep the box centre with the smallest certified upper bound on ``L`` as the
        reference point ``q`` of the loss-gap bound; True when it changed."""
        if not self.convex or lcen.size == 0:
            return False
        i = int(np.argmin(lcen))
        upper = float(lcen[i]) + self._eL
        if upper < self._Lq:
            self._Lq = upper
            self._q = 0.5 * lo[i] + 0.5 * hi[i]
            return True
        return False

    def _accumulators(self, nb):
        """Per-box sums of :meth:`_tally` for ``nb`` boxes, all zero."""
        d = self.d
        return dict(
            gadd=np.zeros((nb, d)), cadd=np.zeros(nb), pn=np.zeros((nb, 2 * d)),
            cnt=np.zeros(nb, dtype=np.intp), hsum=np.zeros(nb), parts=[[] for _ in range(nb)],
        )  # fmt: skip

    def _tally(self, rec, dev, rad, counts, acc):
        """Add one piece of candidate records to the per-box sums ``acc``.

        The records ``rec`` come in consecutive runs of lengths ``counts`` (one run per box,
        possibly empty), ``c_i + dev +- rad`` a rigorous enclosure of each record's index
        interval over its box (``rad`` includes the rounding slack). A record is always
        active, crossing or never active on the box; the sums are those of the newly always
        active records (gradient and ``a c``), of the crossing records' positive and negative
        jumps and of their hinges at the centre, and the crossing records themselves. Sums
        over pieces add up, so a box's records may arrive in any number of pieces (the
        memory plan bounds a piece's temporaries)."""
        active = dev >= rad
        cross = ~active & (dev + rad >= 0.0)
        starts = np.r_[0, np.cumsum(counts)[:-1]]
        ia = np.flatnonzero(active)
        at_a = np.searchsorted(ia, starts)
        ra = rec[ia]
        acc["gadd"] += _run_sums(self.V, ra, at_a)
        acc["cadd"] += _run_sums(self._ac, ra, at_a)[:, 0]
        del ra, ia, active
        ic = np.flatnonzero(cross)
        at = np.searchsorted(ic, starts)
        rc = rec[ic]
        acc["pn"] += _run_sums(self._Vpn, rc, at)
        cnt = np.diff(np.r_[at, ic.size])
        acc["cnt"] += cnt
        if self.convex:
            hinge = self._a[rc] * np.maximum(dev[ic], 0.0)
            acc["hsum"] += _run_sums(hinge.reshape(-1, 1), np.arange(hinge.size), at)[:, 0]
        keep = np.empty((ic.size, 3))
        keep[:, 0] = rc
        keep[:, 1] = dev[ic]
        keep[:, 2] = rad[ic]
        # own copies, not views of ``keep``: a dropped list must free its memory (a view would
        # keep the whole ``keep`` of its piece alive, outside the guard's count)
        for k in np.flatnonzero(cnt):
            acc["parts"][k].append(keep[at[k] : at[k] + cnt[k]].copy())

    def _classify_rows(self, lo, hi):
        """:meth:`_tally` of all rows against one box ``[lo, hi]``, a piece at a time."""
        n = self.U.shape[0]
        ctr, half = 0.5 * lo + 0.5 * hi, 0.5 * hi - 0.5 * lo
        acc = self._accumulators(1)
        step = self.memory["piece_entries"]
        for s0 in range(0, n, step):
            sl = slice(s0, min(n, s0 + step))
            dev = self.U[sl] @ ctr - self.c[sl]  # index minus threshold at the centre
            rad = self._absU[sl] @ half + self._slack[sl]
            rec = np.arange(sl.start, sl.stop)
            self._tally(rec, dev, rad, np.array([rec.size]), acc)
        return acc

    def _finish(self, lo, hi, gfix_parent, cfix_parent, acc, depth, wdir_parent):
        """Boxes ``[lo, hi]`` (rows) from their parents' fixed sums and the tallied records:
        fixed part of the gradient, crossing lists and bounds (``wdir_parent``: the parents'
        best directions and steps of the directional bound, :meth:`_directional`)."""
        nb, d = lo.shape
        gfix = gfix_parent + acc["gadd"]
        cfix = cfix_parent + acc["cadd"]
        pos, neg = acc["pn"][:, :d], acc["pn"][:, d:]
        cnt = acc["cnt"]
        empty = np.empty((0, 3))  # shared by the boxes without crossings (never written)
        lists = [
            empty if not p else p[0] if len(p) == 1 else np.concatenate(p) for p in acc["parts"]
        ]
        acc["parts"] = None
        glo, ghi = gfix + neg, gfix + pos
        dist = np.maximum(np.maximum(glo, -ghi), 0.0)
        dist = np.maximum(dist - self.err, 0.0)
        top = np.maximum(np.abs(glo), np.abs(ghi)) + self.err
        low = self.bounds.lower(dist)
        high = self.bounds.upper(-top, top)
        few = np.flatnonzero((cnt > 0) & (cnt <= _ENUMERATE))
        if few.size:
            low[few], high[few] = self._enumerate(few, gfix, lists)
        wdir, wstep = (np.array(w, dtype=float, copy=True) for w in wdir_parent)
        # boxes crossed by very many records are coarse and split soon anyway: the pass over
        # their records would cost more than the bound saves
        many = np.flatnonzero((cnt > _ENUMERATE) & (cnt <= _DIRECTIONAL_MAX) & self._use_dir)
        if many.size:
            mid = gfix[many] + 0.5 * (pos[many] + neg[many])  # centre of the gradients' zonotope
            dlow, wdir[many], wstep[many] = self._directional(
                gfix[many], [lists[b] for b in many], cnt[many], wdir[many], wstep[many], mid
            )
            low[many] = np.maximum(low[many], dlow)
        logM = np.zeros(nb)  # set by _refresh (needs the reference point)
        logm = -self.scale * high * (1.0 + 1e-12)
        # the loss L(theta) = sum_j gfix_j theta_j - cfix + sum_crossing a_i (U_i^T theta - c_i)_+
        # (module docstring): its minimum over the box without the crossing hinges (>= 0) ...
        lmin = np.sum(np.minimum(gfix * lo, gfix * hi), axis=1) - cfix
        # ... and its value at the centre, a candidate reference point
        if self.convex:
            lcen = np.sum(gfix * (0.5 * lo + 0.5 * hi), axis=1) - cfix + acc["hsum"]
            self._changed = self._offer_reference(lo, hi, lcen) or self._changed
        can = (hi - lo) >= 2.0 * self.g  # at least two grid cells: a split gives two boxes
        # split where the crossing records' jumps (= their index-interval widths for the
        # quantile loss, where V = U) are widest
        score = np.where(can, (pos - neg) * (hi - lo), -1.0)
        split_dim = np.argmax(score, axis=1)
        splittable = (cnt > 0) & can[np.arange(nb), split_dim]
        # volume relative to the root box (= ratio of cell counts, exact before the log)
        logvol = np.log((hi - lo) / self._root_width).sum(axis=1)
        return dict(
            lo=lo, hi=hi, gfix=gfix, cfix=cfix, lmin=lmin, low=low, lists=lists, logM=logM,
            logm=logm, logvol=logvol, split_dim=split_dim, splittable=splittable, depth=depth,
            wdir=wdir, wstep=wstep,
        )  # fmt: skip

    def _entry_pieces(self, lists):
        """``(pos, cnts, rec)`` over the crossing records of ``lists``, at most
        ``piece_entries`` at a time: the positions of the lists in the piece (increasing),
        their numbers of records in it (> 0) and the records, list after list."""
        step = self.memory["piece_entries"]
        pos, cnts, recs, size = [], [], [], 0
        for k, lst in enumerate(lists):
            for a in range(0, lst.shape[0], step):
                part = lst[a : a + step, 0].astype(np.intp)
                pos.append(k)
                cnts.append(part.size)
                recs.append(part)
                size += part.size
                if size >= step:
                    yield np.array(pos), np.array(cnts), np.concatenate(recs)
                    pos, cnts, recs, size = [], [], [], 0
        if size:
            yield np.array(pos), np.array(cnts), np.concatenate(recs)

    def _directional(self, gfix, lists, cnt, wdir, wstep, mid):
        """Directional lower bounds of ``||g||_K`` on boxes with crossing ``lists``.

        On a box every gradient is ``g = gfix + sum_{i crossing} V_i delta_i`` with
        ``delta_i in {0, 1}`` (a point of the zonotope ``Z_B``). For any direction ``w != 0``,
        ``||g||_K >= w^T g / ||w||_{K*}`` (``K*`` the dual norm) and
        ``w^T g >= phi(w) = w^T gfix + sum_i min(0, w^T V_i)``, so
        ``||g||_K >= phi(w) / ||w||_{K*}`` on the whole box. The best ``w`` gives the minimum of
        the norm over ``Z_B`` (LP duality), much tighter than the per-coordinate interval hull
        (the case ``w = +-e_j``) because one ``delta_i`` moves all coordinates at once.

        Any ``w`` is valid, so its choice only steers the running time. Three candidates, one
        pass over the records: the parent's best direction ``wdir``, that direction moved one
        supergradient step ``wstep`` (the parent's zonotope point ``gfix + sum_{w^T V_i < 0}
        V_i`` minimising ``w^T g``, normalised), and the zonotope's centre ``mid``. The best
        one and its own supergradient are handed to the children, so the ascent continues
        down the tree at the cost of one pass per split.

        Float error: ``phi`` is a float sum of ``k + 1`` dot products of ``d`` terms, so it errs
        by at most ``(4 (k + d) + 1000) u (|w|^T |gfix| + sum_i |w|^T |V_i|)``; ``gfix`` differs
        from its exact value, and the float gradient ``g~`` from the exact one, by at most
        ``err`` per coordinate each (module docstring), so ``2 |w|^T err`` more is subtracted.
        The dual norm is rounded up (:meth:`_dual_upper`). Memory: per piece entry the gathered
        ``V`` rows, the repeated candidates and their products (``< 112 d + 100`` bytes), inside
        the piece charge of :func:`memory_plan`.

        Returns the bounds, each box's best direction (dual norm 1) and its unit step.
        """
        nb, d = gfix.shape
        size = np.linalg.norm(wdir, axis=1, keepdims=True)
        cand = np.stack([wdir, wdir + 0.3 * size * wstep, mid], axis=1)  # (nb, 3, d)
        phi, absum, z = self._phi(gfix, lists, cand)
        absw = np.abs(cand)
        gam = (4.0 * (cnt[:, None] + d) + 1000.0) * _EPS * (
            np.einsum("bmd,bd->bm", absw, np.abs(gfix)) + absum
        ) + 2.0 * (absw @ self.err)
        # absolute underflow of the ``(k + 1) d`` products in ``phi`` (2**-1075 each, section 5d
        # of docs/floating_point.md); below half an ulp of ``gam`` whenever the relative part
        # is not itself near the underflow range
        gam = gam + (2.0 * d) * (cnt[:, None] + 1.0) * _UNDERFLOW
        dual = self._dual_upper(absw.reshape(-1, d)).reshape(nb, -1)
        safe = np.where(dual > 0.0, dual, 1.0)
        val = np.where(dual > 0.0, (phi - gam) / safe * (1.0 - 1e-12), 0.0)
        val = np.maximum(val, 0.0)
        top = np.argmax(val, axis=1)
        rows = np.arange(nb)
        best_w = (cand / safe[:, :, None])[rows, top]
        zt = z[rows, top]
        zn = np.linalg.norm(zt, axis=1, keepdims=True)
        step = np.where(zn > 0.0, zt / np.where(zn > 0.0, zn, 1.0), 0.0)
        return val[rows, top], best_w, step

    def _phi(self, gfix, lists, cand):
        """``phi(w)`` of :meth:`_directional` for candidate directions ``cand`` (nb, m, d), the
        sums ``sum_i |w|^T |V_i|`` and the zonotope points minimising ``w^T g``."""
        phi = np.einsum("bmd,bd->bm", cand, gfix)
        absum = np.zeros(phi.shape)
        z = np.repeat(gfix[:, None, :], cand.shape[1], axis=1)
        absw = np.abs(cand)
        for pos, cnts, rec in self._entry_pieces(lists):
            Vp = self.V[rec][:, None, :]
            C = np.repeat(cand[pos], cnts, axis=0)  # (entries, m, d)
            s = np.sum(Vp * C, axis=2)
            starts = np.r_[0, np.cumsum(cnts)[:-1]]
            phi[pos] += np.add.reduceat(np.minimum(s, 0.0), starts, axis=0)
            np.abs(C, out=C)
            absum[pos] += np.add.reduceat(np.sum(np.abs(Vp) * C, axis=2), starts, axis=0)
            np.multiply(Vp, (s < 0.0)[:, :, None], out=C)
            z[pos] += np.add.reduceat(C, starts, axis=0)
        del absw
        return phi, absum, z

    def _enumerate(self, boxes, gfix, lists):
        """Bounds of ``||g||_K`` on boxes crossed by at most ``_ENUMERATE`` hyperplanes: the
        minimum and maximum over all ``2^k`` on/off patterns of the crossing records (a
        superset of the patterns that occur in the box, so the bounds stay valid). Much tighter
        than the interval bound when jumps are large or cancel."""
        d, K = self.d, _ENUMERATE
        low = np.empty(boxes.size)
        high = np.empty(boxes.size)
        # ||g - g~||_K <= sum_j |err_j| ||e_j||_K for any norm (triangle inequality)
        margin = float(np.sum(self.err * self.ball.norm(np.eye(d))))
        for start in range(0, boxes.size, 2048):
            chunk = boxes[start : start + 2048]
            jumps = np.zeros((chunk.size, K, d))
            for row, b in enumerate(chunk):
                rec = lists[b][:, 0].astype(np.intp)
                jumps[row, : rec.size] = self.V[rec]
            G = gfix[chunk][:, None, :] + np.einsum("pk,bkd->bpd", _PATTERNS, jumps)
            norms = self.ball.norm(G.reshape(-1, d)).reshape(chunk.size, -1)
            low[start : start + chunk.size] = np.maximum(norms.min(axis=1) - margin, 0.0)
            high[start : start + chunk.size] = norms.max(axis=1) + margin
        return low, high

    # ------------------------------------------------------------------ crossing lists
    # Memory guard (public limits only, from ``memory_plan``). A crossing list is a cache: a
    # box whose list is not stored (``None``) gets it recomputed from all rows when it is split
    # or proposed (:meth:`_materialise`). After every split the lists of the boxes with the
    # smallest proposal weight are dropped until at most ``list_entries`` entries are stored;
    # one split gathers about ``split_entries`` parent entries and builds its temporaries
    # ``piece_entries`` at a time. Any partition gives the same exact law, so the guard
    # changes time and memory only.

    def _list_size(self, b):
        lst = self.lists[b]
        return self.U.shape[0] if lst is None else lst.shape[0]

    def _materialise(self, b):
        """The crossing list of box ``b`` recomputed from all rows, with its fixed sums.

        The fresh classification is a rigorous enclosure too, so a record it calls fixed is
        fixed on the box in exact arithmetic; ``gfix`` and ``cfix`` are recomputed with it, so
        that gradient and loss are the same functions as before up to the summation error
        that the bounds already allow for (any order of at most ``n`` terms)."""
        acc = self._classify_rows(self.lo[b], self.hi[b])
        self.gfix[b] = self._offset + acc["gadd"][0]
        self.cfix[b] = acc["cadd"][0]
        parts = acc["parts"][0]
        return (
            np.empty((0, 3))
            if not parts
            else parts[0]
            if len(parts) == 1
            else np.concatenate(parts)
        )

    def _list(self, b, store=True):
        """The crossing list of box ``b`` (recomputed if it is not stored)."""
        lst = self.lists[b]
        if lst is None:
            lst = self._materialise(b)
            if store and self.n_entries + lst.shape[0] <= self.memory["list_entries"]:
                self.lists[b] = lst
                self.n_entries += lst.shape[0]
        return lst

    def _evict(self):
        """Drop the stored lists of the lightest boxes until the store fits the guard."""
        cap = self.memory["list_entries"]
        if self.n_entries <= cap:
            return
        sizes = np.array([0 if lst is None else lst.shape[0] for lst in self.lists])
        weight = np.where(sizes > 0, self.logvol + self.logM, np.inf)
        order = np.argsort(weight, kind="stable")
        target = self.n_entries - cap // 2
        k = int(np.searchsorted(np.cumsum(sizes[order]), target)) + 1
        for b in order[:k]:
            if self.lists[b] is not None:
                self.n_entries -= self.lists[b].shape[0]
                self.lists[b] = None

    def _split(self, parents):
        """Split boxes ``parents`` at their midpoints along ``split_dim``, a chunk of about
        ``split_entries`` parent entries at a time (memory guard above)."""
        parents = np.asarray(parents, dtype=np.intp)
        chunk, size = [], 0
        for p in parents:
            chunk.append(int(p))
            size += self._list_size(p)
            if size >= self.memory["split_entries"]:
                self._split_chunk(np.asarray(chunk, dtype=np.intp))
                chunk, size = [], 0
        if chunk:
            self._split_chunk(np.asarray(chunk, dtype=np.intp))

    def _split_chunk(self, parents):
        P = parents.size
        plists = [self._list(p, store=False) for p in parents]
        j = self.split_dim[parents]
        lo, hi = self.lo[parents], self.hi[parents]
        rows = np.arange(P)
        # split on the grid line nearest the midpoint (exact: multiples of g below 2**50 g)
        g = self.g[j]
        lo_j, hi_j = lo[rows, j], hi[rows, j]
        mid = lo_j + np.floor((hi_j - lo_j) / g * 0.5) * g
        hi_left, lo_right = hi.copy(), lo.copy()
        hi_left[rows, j] = mid
        lo_right[rows, j] = mid
        counts = np.array([lst.shape[0] for lst in plists], dtype=np.intp)
        parts = np.concatenate(plists) if plists else np.empty((0, 3))
        del plists  # recomputed parent lists are freed here (stored ones stay in the cache)
        ends = np.cumsum(counts)
        begins = ends - counts
        # the left child's centre moves by (mid - hi) / 2 along j, the right one's by
        # (mid - lo) / 2: every index moves by U_ij times that, and its radius shrinks by the
        # same amount in absolute value (the child's half-width is the parent's minus it)
        move_l, move_r = 0.5 * (mid - hi_j), 0.5 * (mid - lo_j)
        acc = self._accumulators(2 * P)
        step = self.memory["piece_entries"]
        for a in range(0, parts.shape[0], step):
            b = min(parts.shape[0], a + step)
            cnt = np.clip(ends, a, b) - np.clip(begins, a, b)  # each parent's part of the piece
            rec = parts[a:b, 0].astype(np.intp)
            dev, rad = parts[a:b, 1], parts[a:b, 2]
            owner = np.repeat(rows, cnt)
            u_j = self.U[rec, j[owner]]
            step_l = u_j * move_l[owner]
            step_r = u_j * move_r[owner]
            del owner, u_j
            self._tally(
                np.concatenate([rec, rec]),
                np.concatenate([dev + step_l, dev + step_r]),
                # stays >= the slack: |step| <= the exact radius
                np.concatenate([rad - np.abs(step_l), rad - np.abs(step_r)]),
                np.concatenate([cnt, cnt]),
                acc,
            )
        del parts
        self._changed = False
        new = self._finish(
            np.vstack([lo, lo_right]),
            np.vstack([hi_left, hi]),
            np.vstack([self.gfix[parents]] * 2),
            np.concatenate([self.cfix[parents]] * 2),
            acc,
            np.concatenate([self.depth[parents] + 1] * 2),
            (np.vstack([self.wdir[parents]] * 2), np.vstack([self.wstep[parents]] * 2)),
        )
        n_old = self.n_boxes
        for f in self._FIELDS:
            arr = getattr(self, f)
            arr[parents] = new[f][:P]
            setattr(self, f, np.concatenate([arr, new[f][P:]]))
        freed = sum(0 if self.lists[p] is None else self.lists[p].shape[0] for p in parents)
        for i, p in enumerate(parents):
            self.lists[p] = new["lists"][i]
        self.lists.extend(new["lists"][P:])
        # a better reference point tightens every box; otherwise only the new ones need bounds
        self._refresh(None if self._changed else np.r_[parents, np.arange(n_old, self.n_boxes)])
        self.n_entries += sum(lst.shape[0] for lst in new["lists"]) - freed
        self.n_splits += P
        self._evict()

    @property
    def n_boxes(self):
        return self.lo.shape[0]

    def _weights(self):
        lw = self.logvol + self.logM
        top = np.max(lw)
        wM = np.exp(lw - top)
        wm = np.exp(self.logvol + self.logm - top)
        return wM, wm

    def acceptance_bound(self):
        """``sum vol m / sum vol M``: a lower bound on the acceptance probability."""
        wM, wm = self._weights()
        return float(wm.sum() / wM.sum())

    def refine_round(self, fraction=0.5):
        """Split the boxes with the largest ``vol (M - m)`` that carry ``fraction`` of the total
        gap (one round). Returns False when nothing can be split."""
        if self.n_boxes >= self.max_boxes:
            return False
        wM, wm = self._weights()
        gap = np.where(self.splittable, wM - wm, 0.0)
        total = gap.sum()
        if not total > 0.0:
            return False
        order = np.argsort(-gap)
        k = int(np.searchsorted(np.cumsum(gap[order]), fraction * total)) + 1
        k = min(k, self.max_boxes - self.n_boxes, int(np.count_nonzero(gap)))
        self._split(order[:k])
        self.n_rounds += 1
        return True

    # ---------------------------------------------------------------------------- draws
    def log_density(self, theta, box):
        """``fl(-s ||g~(theta)||_K)`` from the fixed part and crossing list of ``box``; the
        crossing records' indicators are decided exactly (:func:`dpreg._kng_grid.indicators_at`)
        so that the gradient is the same function of ``theta`` in every box."""
        idx = self._list(box)[:, 0].astype(np.intp)
        g = self.gfix[box].copy()
        if idx.size:
            on = indicators_at(self.U[idx], self.c[idx], theta)
            g += on.astype(float) @ self.V[idx]
        return -self.scale * float(self.ball.norm(g))

    def _int_weights(self):
        """Integer proposal weights ``W_B >= vol(B) M_B 2**40 / max`` (at least 1) and the log
        of the envelope they define, ``log M'_B = log(W_B 2**-40) + top - log vol(B)``."""
        lw = self.logvol + self.logM
        top = float(np.max(lw))
        W = np.floor(np.exp(lw - top) * (2.0**40 * (1.0 + 2.0**-30))).astype(np.int64) + 1
        logMp = np.log(W.astype(float)) - 40.0 * np.log(2.0) + top - self.logvol
        return W, logMp

    def sample(self, rng, progress=None):
        """One exact draw of a grid cell; returns ``(centre, info)``.

        ``progress``: an optional callable ``progress(n_boxes, n_proposals)`` called after
        every refinement round and proposal batch (a display hook: it draws no randomness,
        so the law and a seeded draw are the same with or without it).

        Alternates refinement rounds with batches of proposals. A proposal picks box ``B``
        with probability ``W_B / sum W`` (exact integer draw), a grid cell of ``B`` uniformly
        (exact integer draws) and accepts with probability ``f~(c_k) / M'_B`` decided exactly
        (:func:`dpreg._kng_grid.accept`; immediately when ``U <= m_B / M'_B``, which implies
        it). A batch is evaluated in order and stops at the first acceptance, or when its
        evaluation work exceeds a budget (the proposals left over are discarded unseen:
        whether a proposal is examined depends only on earlier rejections, so every examined
        proposal is a fresh rejection trial).
        """
        n_prop = n_eval = 0
        bound0 = None
        while True:
            wM, wm = self._weights()
            acc = float(wm.sum() / wM.sum())
            can_refine = self.n_boxes < self.max_boxes and bool(np.any(self.splittable & (wM > wm)))
            if acc >= self.min_acceptance or not can_refine:
                if bound0 is None:
                    bound0 = acc
                W, logMp = self._int_weights()
                cum = np.cumsum(W)
                k = int(min(max(4.0 / max(acc, 1e-3), 16), 4096))
                b = np.searchsorted(cum, rng.integers(0, cum[-1], size=k), side="right")
                ncell = np.rint((self.hi[b] - self.lo[b]) / self.g).astype(np.int64)
                cell = rng.integers(0, ncell)  # exact uniform cell of the box, per coordinate
                theta = self.lo[b] + (cell + 0.5) * self.g  # the cell centre (exact)
                u = rng.random(k)  # k 2**-53: the top 53 bits of a real uniform U
                rejected = []
                work = 0
                for i in range(k):
                    if work > self.eval_budget and can_refine:
                        break
                    n_prop += 1
                    bi = int(b[i])
                    # squeeze: U <= m_B / M'_B implies acceptance without evaluating f
                    if accept_fast(float(u[i]), float(self.logm[bi]), float(logMp[bi])):
                        return theta[i], self._info(bound0, n_prop, n_eval)
                    n_eval += 1
                    work += self._list_size(bi) + 32
                    if accept(float(u[i]), self.log_density(theta[i], bi), float(logMp[bi]), rng):
                        return theta[i], self._info(bound0, n_prop, n_eval)
                    rejected.append(bi)
                if rejected and self.n_boxes < self.max_boxes:
                    cand = np.unique(np.asarray(rejected, dtype=np.intp))
                    cand = cand[self.splittable[cand]][: self.max_boxes - self.n_boxes]
                    self._split(cand)
            if can_refine:
                self.refine_round()
            if progress is not None:
                progress(int(self.n_boxes), int(n_prop))

    def _info(self, bound0, n_prop, n_eval):
        return {
            "n_boxes": int(self.n_boxes),
            "n_refine_rounds": int(self.n_rounds),
            "acceptance_bound": bound0,
            "n_proposals": int(n_prop),
            "n_density_evaluations": int(n_eval),
        }
