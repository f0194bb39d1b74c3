"""Polytope balls and membership-oracle convex bodies: custom K for K-norm noise.

:class:`PolytopeBall` is exact in every respect (gauge, sampling, volume); it is the right
choice when the convex hull of a statistic's sensitivity space is a polytope (seed 001,
section 3.4: the hull gives the optimal K-norm mechanism). :class:`ConvexBody` accepts any
symmetric convex body given by a membership oracle and a bounding box; its sampler is exact
(rejection from the box) but can be slow, and its volume is a Monte Carlo estimate.

Exact uniform sampling in a polytope (cone decomposition)
---------------------------------------------------------
Let K be a polytope with 0 in its interior. Triangulate its boundary into (d-1)-simplices
F_1, ..., F_N with vertices v_{j,1}, ..., v_{j,d}. The cones C_j = conv(0, F_j) are d-simplices
that cover K and overlap only on sets of measure zero, so K is the disjoint union of the C_j
up to a null set, and ``vol(C_j) = |det[v_{j,1}, ..., v_{j,d}]| / d!``. A uniform point of K is
therefore: pick j with probability ``vol(C_j) / vol(K)``, then a uniform point of the simplex
C_j, which is ``sum_i w_i v_{j,i}`` with ``(w_0, w_1, ..., w_d) ~ Dirichlet(1, ..., 1)``
(w_0 is the weight of the apex 0). Dirichlet(1, ..., 1) is drawn as normalised iid Exp(1).
Both steps are exact, so the sampler is exact (up to floating point).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from scipy import optimize
from scipy.spatial import ConvexHull, HalfspaceIntersection, QhullError
from scipy.special import gammaln, logsumexp

from .._validation import check_random_state
from .balls import Ball

_TOL = 1e-9


def _as_float_matrix(x, name):
    try:
        x = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array, got {x!r}.") from None
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite (no NaN or inf).")
    return x


class PolytopeBall(Ball):
    """Unit ball K given by a symmetric, full-dimensional, bounded polytope.

    Give either the vertices (V-representation) or halfspaces ``A x <= b`` (H-representation).

    Parameters
    ----------
    vertices : array-like of shape (n_points, dim), optional
        Points whose convex hull is K. Interior or repeated points are allowed (only the extreme
        points are kept). The hull must be symmetric about 0 (include both v and -v); pass
        ``symmetrize=True`` to use ``conv(V ∪ -V)`` instead, e.g. for one half of a sensitivity
        space (which is always symmetric, so this is safe: the result contains every given
        point and its negation).
    A : array-like of shape (n_halfspaces, dim), optional
        Halfspace normals; K = {x : A x <= b}.
    b : array-like of shape (n_halfspaces,), optional
        Halfspace offsets; must be > 0 (0 must be interior).
    symmetrize : bool, default=False
        Only for ``vertices``: replace V by V ∪ -V.

    Attributes
    ----------
    dim : int
    vertices : ndarray of shape (n_vertices, dim)
        Extreme points of K.
    facet_normals : ndarray of shape (n_facets, dim)
        Rows a_i with K = {x : a_i . x <= 1 for all i}; the gauge is ``max_i a_i . x``.
    simplices : ndarray of shape (n_simplices, dim, dim)
        A triangulation of the boundary of K; the cones conv(0, simplex) partition K.

    Notes
    -----
    The gauge is ``||x||_K = max_i a_i . x`` (with b normalised to 1), exact and vectorised.
    Sampling is exact by cone decomposition (see the module docstring), the volume is exact
    (``sum_j |det S_j| / dim!``) and so is ``coordinate_second_moment`` (a uniform point of the
    simplex conv(0, v_1, ..., v_d) has ``E[X X^T] = (sum_i v_i v_i^T + s s^T) / ((d+1)(d+2))``
    with ``s = sum_i v_i``, averaged over cones with weights proportional to their volumes).

    The vertex/facet enumeration uses Qhull, whose cost grows quickly with the dimension and the
    number of facets (a cube in dim 12 already has 2 * 12 * 11! triangulated boundary simplices;
    a cross-polytope in dim 20 has 2^20 facets). Use it for small dimensions (about <= 8) or
    polytopes with few facets; otherwise use :class:`ConvexBody` or an lp ball.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.noise import PolytopeBall, KNormMechanism
    >>> hexagon = PolytopeBall(vertices=[[1, 0], [0.5, 1], [-0.5, 1]], symmetrize=True)
    >>> round(hexagon.volume(), 6)  # |det| of the six cones: 0.5 * (1 + 1 + 1) * 2
    3.0
    >>> float(hexagon.norm([0.0, 2.0]))
    2.0
    >>> mech = KNormMechanism(hexagon, dim=2, sensitivity=1.0, epsilon=1.0, random_state=0)
    >>> mech.sample(size=4).shape
    (4, 2)
    """

    def __init__(self, vertices=None, A=None, b=None, *, symmetrize=False):
        if vertices is not None and (A is not None or b is not None):
            raise ValueError("Give either vertices or (A, b), not both.")
        if vertices is None and (A is None or b is None):
            raise ValueError("PolytopeBall needs vertices=... or both A=... and b=....")
        if vertices is not None:
            self._init_from_vertices(_as_float_matrix(vertices, "vertices"), symmetrize)
        else:
            if symmetrize:
                raise ValueError("symmetrize=True is only supported with vertices=....")
            self._init_from_halfspaces(A, b)
        self._finish()

    # ------------------------------------------------------------------ construction
    def _init_from_vertices(self, V, symmetrize):
        n, d = V.shape
        self.dim = d
        if symmetrize:
            V = np.vstack([V, -V])
        scale = float(np.max(np.abs(V)))
        if scale == 0 or np.linalg.matrix_rank(V, tol=_TOL * scale * max(V.shape)) < d:
            raise ValueError(
                f"The vertices span a subspace of dimension < {d}: the polytope must be "
                "full-dimensional (drop linearly dependent coordinates of the statistic and "
                "recover them by post-processing)."
            )
        if d == 1:
            h = float(np.max(np.abs(V)))
            if not np.isclose(np.min(V), -h, rtol=_TOL, atol=0):
                raise ValueError(
                    f"The polytope [{np.min(V):g}, {h:g}] is not symmetric about 0; include -v "
                    "for every vertex v or pass symmetrize=True."
                )
            self._set_interval(h)
            return
        try:
            # Qhull's tolerances are absolute: vertices of size 1e-150 (or 1e150) look flat to
            # it. The hull of V / scale is the hull of V shrunk by 1/scale, so build it there.
            hull = ConvexHull(V / scale)
        except QhullError as exc:
            msg = f"Qhull could not build the convex hull of the vertices: {exc}"
            raise ValueError(msg) from None
        normals, offsets = hull.equations[:, :-1], hull.equations[:, -1]  # n.x + c <= 0 inside
        if np.any(offsets >= -_TOL):
            raise ValueError(
                "0 is not an interior point of the convex hull of the vertices; a norm ball must "
                "be symmetric about 0 (include -v for every vertex v, or pass symmetrize=True)."
            )
        self.facet_normals = normals / (-offsets[:, None]) / scale
        self.vertices = V[hull.vertices]
        # symmetric iff every -v lies in the hull
        worst = float(np.max(-self.vertices @ self.facet_normals.T))
        if worst > 1.0 + 1e-7:
            raise ValueError(
                "The polytope is not symmetric about 0: some -v lies outside the hull "
                f"(its gauge is {worst:.4g} > 1). Include -v for every vertex v, or pass "
                "symmetrize=True to use conv(V ∪ -V)."
            )
        self.simplices = V[hull.simplices]
        self._hrep_input = None

    def _init_from_halfspaces(self, A, b):
        A = _as_float_matrix(A, "A")
        b = np.asarray(b, dtype=float).reshape(-1)
        k, d = A.shape
        self.dim = d
        if b.shape != (k,):
            raise ValueError(f"b must have {k} entries (one per row of A), got {b.size}.")
        if not np.all(np.isfinite(b)):
            raise ValueError("b must be finite (no NaN or inf).")
        if np.any(b <= 0):
            raise ValueError(
                "Every b_i must be > 0: 0 must be an interior point of a norm ball "
                "(a symmetric polytope {A x <= b} has b > 0 after dropping empty rows)."
            )
        norms = np.linalg.norm(A, axis=1)
        if np.any(norms == 0):
            raise ValueError("A has a zero row.")
        G = A / b[:, None]  # K = {x : G x <= 1}
        if np.linalg.matrix_rank(G) < d:
            raise ValueError(
                f"The halfspaces A x <= b do not bound a region in R^{d}: A has rank < {d} "
                "(the set is unbounded)."
            )
        # bounded iff max x_j and max -x_j are finite for every j (these are also half-widths)
        hw = np.empty(d)
        for j in range(d):
            for sign in (1.0, -1.0):
                c = np.zeros(d)
                c[j] = -sign
                res = optimize.linprog(
                    c, A_ub=G, b_ub=np.ones(k), bounds=[(None, None)] * d, method="highs"
                )
                if res.status == 3:
                    raise ValueError(
                        "The halfspaces A x <= b do not bound a region: the set is unbounded "
                        f"along coordinate {j}."
                    )
                if res.status != 0:
                    raise ValueError(f"Could not analyse the halfspaces (linprog: {res.message})")
            hw[j] = -res.fun
        if d == 1:
            lo, hi = 1.0 / np.max(-G[:, 0]), 1.0 / np.max(G[:, 0])
            if not np.isclose(lo, hi, rtol=1e-9):
                raise ValueError(f"The polytope [{-lo:g}, {hi:g}] is not symmetric about 0.")
            self._set_interval(hi)
            self._hrep_input = G
            return
        try:
            hs = HalfspaceIntersection(np.hstack([G, -np.ones((k, 1))]), np.zeros(d))
        except QhullError as exc:
            raise ValueError(f"Qhull could not intersect the halfspaces: {exc}") from None
        P = hs.intersections
        if not np.all(np.isfinite(P)):
            raise ValueError("The halfspaces A x <= b do not bound a region.")
        worst = float(np.max(-P @ G.T))
        if worst > 1.0 + 1e-7:
            raise ValueError(
                "The polytope {A x <= b} is not symmetric about 0: the negation of one of its "
                f"vertices violates a constraint (gauge {worst:.4g} > 1)."
            )
        hull = ConvexHull(P)
        self.vertices = P[hull.vertices]
        self.facet_normals = hull.equations[:, :-1] / (-hull.equations[:, -1:])
        self.simplices = P[hull.simplices]
        self._hrep_input = G

    def _set_interval(self, h):
        self.vertices = np.array([[h], [-h]])
        self.facet_normals = np.array([[1.0 / h], [-1.0 / h]])
        self.simplices = np.array([[[h]], [[-h]]])
        self._hrep_input = None

    def _finish(self):
        d = self.dim
        # drop (near) duplicate facet rows produced by the triangulation of non-simplicial facets;
        # compare them relative to their size (an absolute rounding merged every facet into
        # one, a gauge that was 0 on half the space, once the vertices were larger than ~1e10)
        rounded = np.round(self.facet_normals / np.max(np.abs(self.facet_normals)), 10)
        _, keep = np.unique(rounded, axis=0, return_index=True)
        self.facet_normals = self.facet_normals[np.sort(keep)]
        sign, logdet = np.linalg.slogdet(self.simplices)
        logdet = np.where(sign == 0, -np.inf, logdet)
        self._log_cone_volumes = logdet - gammaln(d + 1)
        self._log_volume = float(logsumexp(self._log_cone_volumes))
        self._cone_probs = np.exp(self._log_cone_volumes - self._log_volume)
        self._cone_probs /= self._cone_probs.sum()
        self._half_widths = np.max(np.abs(self.vertices), axis=0)

    def __repr__(self):
        return (
            f"PolytopeBall(dim={self.dim}, n_vertices={len(self.vertices)}, "
            f"n_facets={len(self.facet_normals)})"
        )

    # ------------------------------------------------------------------ Ball API
    def norm(self, x):
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.dim,):
            raise ValueError(f"x must have {self.dim} entries per row, got shape {x.shape}.")
        G = self._hrep_input if self._hrep_input is not None else self.facet_normals
        with np.errstate(invalid="ignore"):
            out = np.maximum(np.max(x @ G.T, axis=-1), 0.0)
        if not np.all(np.isfinite(x)):  # inf * 0 = NaN above; the gauge of an infinite x is inf
            out = np.where(
                np.any(np.isnan(x), axis=-1),
                np.nan,
                np.where(np.all(np.isfinite(x), axis=-1), out, np.inf),
            )
        return out

    def _sample_uniform(self, n, rng):
        d = self.dim
        out = np.empty((n, d))
        cones = rng.choice(len(self.simplices), size=n, p=self._cone_probs)
        e = rng.exponential(1.0, size=(n, d + 1))
        w = e[:, 1:] / e.sum(axis=1, keepdims=True)  # Dirichlet(1,...,1) minus the apex weight
        chunk = max(1, 4_000_000 // (d * d))
        for start in range(0, n, chunk):
            sl = slice(start, start + chunk)
            out[sl] = np.einsum("nj,njk->nk", w[sl], self.simplices[cones[sl]])
        return out

    def log_volume(self):
        return self._log_volume

    @property
    def half_widths(self):
        return self._half_widths.copy()

    def coordinate_second_moment(self):
        S = self.simplices  # (N, d, d): rows are the vertices of each boundary simplex
        d = self.dim
        s = S.sum(axis=1)
        per_cone = np.einsum("nji,njk->nik", S, S) + np.einsum("ni,nk->nik", s, s)
        return np.einsum("n,nik->ik", self._cone_probs, per_cone) / ((d + 1.0) * (d + 2.0))


class ConvexBody(Ball):
    """A symmetric convex body given by a membership oracle and a bounding box.

    Parameters
    ----------
    contains : callable
        ``contains(x)`` returns whether the point x (shape ``(dim,)``) lies in K. If it also
        accepts a 2-D array and returns one boolean per row it is used vectorised (detected
        automatically and cross-checked against row-wise calls).
    half_widths : array-like of shape (dim,)
        K must lie inside the box ``[-h_1, h_1] x ... x [-h_dim, h_dim]``. This is essential:
        sampling is uniform on K ∩ box, so a box that cuts K would silently change the norm.
        A heuristic check (points just outside the box along rays through sampled points must
        be rejected) catches common mistakes.
    max_proposals : int, default=10**7
        Largest number of box proposals one call of ``sample_uniform`` (or the volume estimate)
        may need. Before sampling, the acceptance rate is estimated on a pilot batch (fixed
        seed, ``n_pilot`` proposals); if ``size / rate`` exceeds ``max_proposals`` a
        ``ValueError`` stating the acceptance rate is raised instead of running for hours.
    n_pilot : int, default=20000
        Size of the pilot batch.
    rtol : float, default=1e-10
        Relative accuracy of the gauge computed by bisection.

    Notes
    -----
    *Gauge.* Since K lies in the box, ``||x||_K >= t_lo = max_j |x_j| / h_j``. Starting from
    ``t_hi = t_lo`` we double ``t_hi`` until ``x / t_hi`` is in K, then bisect ``[t_lo, t_hi]``
    until ``t_hi - t_lo <= rtol * t_hi``. The value returned is ``t_hi``, which satisfies
    ``||x||_K <= t_hi <= ||x||_K / (1 - rtol)`` (assuming an exact oracle). It errs on the large
    side, which is the conservative side when the gauge is used to bound a sensitivity.

    *Sampling.* Proposals uniform in the box are kept when ``contains`` accepts them; accepted
    proposals are iid uniform on K, and the first ``size`` of them are returned, so the sampler
    is exact. The expected number of proposals is ``size / rate`` with
    ``rate = vol(K) / vol(box)``; it decays exponentially with the dimension for round bodies
    (the l2 ball in dim 20 has rate ~2.5e-8).

    *Volume.* ``volume()`` is a Monte Carlo estimate ``rate_hat * vol(box)`` from
    ``n_volume`` proposals with a fixed seed (so the result is deterministic), with standard
    error ``vol(box) * sqrt(rate_hat (1 - rate_hat) / n_volume)`` returned by
    :meth:`volume_estimate`. It is only used to *compare* norms (volume order, a utility
    question); privacy never depends on it.

    *Checks.* 0 must be accepted, accepted pilot points' negations must be accepted (symmetry)
    and midpoints of pairs of accepted points must be accepted (convexity). These are sanity
    checks on a sample, not proofs: the privacy guarantee of the K-norm mechanism needs K to be
    a genuine symmetric convex body.

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg.noise import ConvexBody, KNormMechanism
    >>> disk = ConvexBody(lambda x: np.sum(np.square(x), axis=-1) <= 1.0, half_widths=[1, 1])
    >>> round(float(disk.norm([3.0, 4.0])), 6)
    5.0
    >>> vol, se = disk.volume_estimate()
    >>> abs(vol - np.pi) < 5 * se
    True
    >>> KNormMechanism(disk, dim=2, sensitivity=1.0, epsilon=1.0, random_state=0).sample(3).shape
    (3, 2)
    """

    def __init__(self, contains, half_widths, *, max_proposals=10**7, n_pilot=20_000, rtol=1e-10):
        if not callable(contains):
            raise ValueError(f"contains must be a callable membership oracle, got {contains!r}.")
        h = np.asarray(half_widths, dtype=float)
        if h.ndim != 1 or h.size == 0:
            raise ValueError(
                f"half_widths must be a 1-D array with one entry per dimension, "
                f"got shape {h.shape}."
            )
        if not np.all(np.isfinite(h)) or np.any(h <= 0):
            raise ValueError("half_widths must be finite and > 0.")
        for name, val in (("max_proposals", max_proposals), ("n_pilot", n_pilot)):
            if isinstance(val, bool) or not isinstance(val, numbers.Integral) or val < 1:
                raise ValueError(f"{name} must be a positive integer, got {val!r}.")
        if not (isinstance(rtol, numbers.Real) and 0 < rtol < 0.1):
            raise ValueError(f"rtol must be in (0, 0.1), got {rtol!r}.")
        self._oracle = contains
        self._h = h
        self.dim = h.size
        self.max_proposals = int(max_proposals)
        self.n_pilot = int(n_pilot)
        self.rtol = float(rtol)
        self._vectorized = None
        self._rate = None
        self._volume = {}
        if not bool(np.asarray(self._contains_rows(np.zeros((1, self.dim))))[0]):
            raise ValueError("0 must lie in the interior of K, but contains(0) is False.")

    def __repr__(self):
        # short even in high dimension (the hull body of FunctionalLinearRegression has dozens
        # of coordinates): a common half-width once, otherwise at most six entries
        h = self._h
        if np.all(h == h[0]):
            widths = f"[{h[0]:g}]*{self.dim}"
        else:
            widths = np.array2string(
                h, threshold=6, edgeitems=3, separator=", ", formatter={"float_kind": "{:g}".format}
            )
        return f"ConvexBody(dim={self.dim}, half_widths={widths})"

    # ------------------------------------------------------------------ oracle
    def _rowwise(self, X):
        return np.fromiter((bool(self._oracle(x)) for x in X), dtype=bool, count=len(X))

    def _contains_rows(self, X):
        if self._vectorized is None:
            probe = np.random.default_rng(12345).uniform(-1, 1, size=(16, self.dim)) * self._h
            probe[0] = 0.0
            self._vectorized = False
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = np.asarray(self._oracle(probe))
            except Exception:  # noqa: BLE001 - any failure means "not vectorised"
                out = None
            if out is not None and out.shape == (len(probe),):
                if np.array_equal(out.astype(bool), self._rowwise(probe)):
                    self._vectorized = True
                else:
                    raise ValueError(
                        "contains(X) on a 2-D array disagrees with row-by-row calls; make it "
                        "return one boolean per row, or accept only 1-D points."
                    )
        if self._vectorized:
            return np.asarray(self._oracle(X)).astype(bool).reshape(len(X))
        return self._rowwise(X)

    def contains(self, x, tol=0.0):
        """Membership of a point (or each row); ``tol`` is accepted for API compatibility."""
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.dim,):
            raise ValueError(f"x must have {self.dim} entries per row, got shape {x.shape}.")
        flat = x.reshape(-1, self.dim)
        if tol:
            flat = flat / (1.0 + tol)
        out = self._contains_rows(flat)
        return out.reshape(x.shape[:-1]) if x.ndim > 1 else bool(out[0])

    # ------------------------------------------------------------------ gauge
    def norm(self, x):
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.dim,):
            raise ValueError(f"x must have {self.dim} entries per row, got shape {x.shape}.")
        X = x.reshape(-1, self.dim)
        lo = np.max(np.abs(X) / self._h, axis=1)
        out = np.zeros(len(X))
        bad = ~np.isfinite(lo)  # NaN -> NaN, +-inf entries -> inf
        out[bad] = np.where(np.any(np.isnan(X[bad]), axis=1), np.nan, np.inf)
        nz = (lo > 0) & ~bad
        if np.any(nz):
            out[nz] = self._bisect(X[nz], lo[nz])
        return out.reshape(x.shape[:-1]) if x.ndim > 1 else float(out[0])

    def _bisect(self, X, lo):
        hi = lo.copy()
        inside = self._contains_rows(X / hi[:, None])
        for _ in range(200):
            if inside.all():
                break
            hi[~inside] *= 2.0
            lo_idx = ~inside
            inside[lo_idx] = self._contains_rows(X[lo_idx] / hi[lo_idx, None])
        else:
            raise ValueError(
                "0 is not an interior point of K: some x/t is outside K for every "
                "t up to 2^200 times the box gauge."
            )
        lo = np.where(hi > lo, hi / 2.0, lo)
        lo = np.maximum(lo, np.max(np.abs(X) / self._h, axis=1))
        active = hi - lo > self.rtol * hi
        while np.any(active):
            idx = np.flatnonzero(active)
            mid = 0.5 * (lo[idx] + hi[idx])
            ok = self._contains_rows(X[idx] / mid[:, None])
            hi[idx[ok]] = mid[ok]
            lo[idx[~ok]] = mid[~ok]
            active[idx] = hi[idx] - lo[idx] > self.rtol * hi[idx]
        return hi

    # ------------------------------------------------------------------ sampling
    @property
    def half_widths(self):
        return self._h.copy()

    def acceptance_rate(self):
        """Fraction of box proposals in K, estimated once on a fixed-seed pilot batch."""
        if self._rate is None:
            rng = np.random.default_rng(20240601)
            P = rng.uniform(-1.0, 1.0, size=(self.n_pilot, self.dim)) * self._h
            ok = self._contains_rows(P)
            acc = P[ok]
            if len(acc):
                if not np.all(self._contains_rows(-acc)):
                    raise ValueError(
                        "K is not symmetric about 0: contains(u) but not contains(-u) "
                        "for a sampled u."
                    )
                pairs = acc[rng.permutation(len(acc))]
                mids = 0.5 * (acc + pairs)
                if not np.all(self._contains_rows(mids)):
                    raise ValueError(
                        "K is not convex: the midpoint of two accepted points was rejected."
                    )
                # points just outside the box along rays through accepted points must be rejected
                t = np.min(self._h / np.maximum(np.abs(acc), 1e-300), axis=1)
                if np.any(self._contains_rows(acc * (t * (1.0 + 1e-6))[:, None])):
                    raise ValueError(
                        "K is not contained in the box given by half_widths: points "
                        "outside the box are accepted. Enlarge half_widths."
                    )
            self._rate = ok.mean()
            self._n_accepted_pilot = int(ok.sum())
        return float(self._rate)

    def _check_feasible(self, n):
        rate = self.acceptance_rate()
        if self._n_accepted_pilot == 0:
            raise ValueError(
                f"Box rejection is infeasible for this ConvexBody: none of {self.n_pilot} pilot "
                f"proposals were accepted (acceptance rate < {3.0 / self.n_pilot:.2g}). Tighten "
                "half_widths, use a PolytopeBall, or raise n_pilot/max_proposals."
            )
        expected = n / rate
        if expected > self.max_proposals:
            raise ValueError(
                f"Box rejection needs about {expected:.3g} proposals for {n} draws (acceptance "
                f"rate {rate:.3g} estimated from {self.n_pilot} pilot proposals), more than "
                f"max_proposals={self.max_proposals}. Tighten half_widths, use a PolytopeBall or "
                "raise max_proposals."
            )
        return rate

    def _sample_uniform(self, n, rng):
        if n == 0:
            return np.empty((0, self.dim))
        rate = self._check_feasible(n)
        out, got, used = [], 0, 0
        while got < n:
            batch = int(min(max((n - got) / rate * 1.2 + 64, 256), 1_000_000 // self.dim + 1))
            if used + batch > 2 * self.max_proposals:
                raise RuntimeError(
                    f"Box rejection used {used} proposals for {got} of {n} draws; the acceptance "
                    f"rate is far below its pilot estimate {rate:.3g}."
                )
            P = rng.uniform(-1.0, 1.0, size=(batch, self.dim)) * self._h
            acc = P[self._contains_rows(P)]
            used += batch
            out.append(acc[: n - got])
            got += len(out[-1])
        return np.concatenate(out, axis=0)

    # ------------------------------------------------------------------ volume
    def volume_estimate(self, n_volume=200_000, random_state=0):
        """Monte Carlo ``(volume, standard_error)`` from ``n_volume`` box proposals."""
        key = (int(n_volume), random_state if isinstance(random_state, int) else None)
        if key[1] is not None and key in self._volume:
            return self._volume[key]
        rng = check_random_state(random_state)
        self._check_feasible(max(1, int(0.01 * n_volume * self.acceptance_rate())))
        hits, done = 0, 0
        while done < n_volume:
            m = min(n_volume - done, 1_000_000 // self.dim + 1)
            hits += int(self._contains_rows(rng.uniform(-1, 1, size=(m, self.dim)) * self._h).sum())
            done += m
        if hits < 100:
            raise ValueError(
                f"Only {hits} of {n_volume} proposals fell in K; the Monte Carlo volume would be "
                "unreliable. Tighten half_widths or raise n_volume."
            )
        box = float(np.prod(2.0 * self._h))
        rate = hits / n_volume
        res = (rate * box, box * math.sqrt(rate * (1.0 - rate) / n_volume))
        if key[1] is not None:
            self._volume[key] = res
        return res

    def log_volume(self):
        """Log of the approximate (deterministic) Monte Carlo volume (:meth:`volume_estimate`)."""
        return float(np.log(self.volume_estimate()[0]))
