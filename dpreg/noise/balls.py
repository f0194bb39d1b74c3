"""Unit balls of norms: the shapes K that K-norm noise is drawn from.

Every ball is a convex body symmetric about 0 with 0 in its interior; its gauge
``||x||_K = inf{t > 0 : x in tK}`` is a norm. Each ball offers ``dim``, a vectorised ``norm``
(rows of a 2-D array), ``contains``, an *exact* ``sample_uniform`` and ``volume``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, logsumexp

from .._validation import check_dim, check_norm, check_random_state


def _open_uniform(rng, size):
    """Uniform draws on (0, 1]: ``Generator.random`` can return exactly 0, whose log is -inf
    and whose root is an exact 0 (a degenerate radius or coordinate)."""
    return 1.0 - rng.random(size)


def log_gamma_variates(rng, shape, size):
    """``log G`` for ``G ~ Gamma(shape, 1)``, finite even when G itself underflows.

    For a small shape ``a`` much of the mass of Gamma(a) sits below the smallest double:
    ``P(G < 5e-324) ~ exp(-744 a) / Gamma(a + 1)``, about 0.48 at a = 1e-3 and 1 - 7e-4 at
    a = 1e-6, and those draws come back as exact zeros (``log`` -inf). The identity
    ``G = G' U^{1/a}`` with ``G' ~ Gamma(a + 1)`` and ``U ~ Uniform(0, 1]`` independent
    (Stuart 1962; the boost used by Marsaglia & Tsang 2000) gives
    ``log G = log G' + log(U) / a``, where every term is finite.
    """
    return np.log(rng.gamma(shape + 1.0, 1.0, size=size)) + np.log(_open_uniform(rng, size)) / shape


def _size_shape(size, dim):
    if size is None:
        return (dim,), 1
    if isinstance(size, (int, np.integer)):
        return (int(size), dim), int(size)
    size = tuple(int(s) for s in size)
    return size + (dim,), int(np.prod(size))


class Ball:
    """Base class of the unit ball K of a norm on R^dim."""

    dim: int

    def norm(self, x):
        """Gauge ``||x||_K`` of a vector, or of each row of a 2-D array."""
        raise NotImplementedError

    def contains(self, x, tol=1e-12):
        """Whether ``x`` (or each row) lies in K."""
        return self.norm(x) <= 1.0 + tol

    def sample_uniform(self, size=None, random_state=None):
        """Exact uniform draws on K, of shape ``(dim,)`` (size None) or ``size + (dim,)``."""
        rng = check_random_state(random_state)
        shape, n = _size_shape(size, self.dim)
        return self._sample_uniform(n, rng).reshape(shape)

    def _sample_uniform(self, n, rng):
        raise NotImplementedError

    def log_volume(self):
        """Natural log of the Lebesgue volume of K."""
        raise NotImplementedError

    def volume(self):
        """Lebesgue volume of K."""
        return float(np.exp(self.log_volume()))

    @property
    def half_widths(self):
        """Half-widths of the smallest axis-aligned box containing K."""
        raise NotImplementedError

    def coordinate_second_moment(self):
        """``E[U U^T]`` for U uniform on K (used for noise variances); Monte Carlo by default."""
        U = self.sample_uniform(200_000, random_state=0)
        return U.T @ U / U.shape[0]


class LpBall(Ball):
    """Unit ball of the lp norm in R^dim, ``1 <= p <= inf``.

    Sampling uses Barthe, Guedon, Mendelson & Naor (2005): with g_i iid of density
    proportional to exp(-|t|^p) and E ~ Exp(1) independent, ``g / (sum |g_i|^p + E)^{1/p}`` is
    uniform in the ball. (|g_i|^p ~ Gamma(1/p), so |g_i| = Gamma(1/p)^{1/p} with a random sign.)
    The whole computation is done in log space: for large p the Gamma(1/p) draw underflows to
    an exact 0 (84 % of rows with a zero coordinate at p = 1000, dim = 3), although the
    coordinate it stands for, ``(G_i / S)^{1/p}``, is of order 1 (the ball tends to the cube).
    ``log G_i`` comes from :func:`log_gamma_variates`, ``log S`` from ``logsumexp``, and only
    ``exp((log G_i - log S) / p)`` is formed, so no coordinate is 0 or non-finite for any
    ``1 <= p < inf`` (tested up to p = 1e6).
    The gauge is evaluated as ``max|x_i| * ||x / max|x_i|||_p`` so that ``|x_i|^p`` neither
    overflows nor underflows.

    Examples
    --------
    >>> from dpreg.noise import LpBall
    >>> ball = LpBall(3, dim=2)
    >>> round(ball.volume(), 4)
    3.5333
    >>> bool(ball.contains([0.5, 0.5]))
    True
    """

    #: Largest finite exponent accepted. The log-space sampler forms ``log(U) * p``, which must
    #: stay finite; above 1e300 the lp ball and the cube coincide in double precision anyway
    #: (``dim ** (1 / p) - 1 < 1e-297``), and l-inf noise calibrated to the lp sensitivity is
    #: private for the lp sensitivity (``||d||_inf <= ||d||_p``).
    P_MAX = 1e300

    def __init__(self, p, dim):
        canon = check_norm(p, allow_ball=False)
        self.p = {"l1": 1.0, "l2": 2.0, "linf": np.inf}.get(canon, canon)
        if np.isfinite(self.p) and self.p > self.P_MAX:
            raise ValueError(
                f"p={self.p:g} is above the largest supported finite exponent {self.P_MAX:g}; "
                "for such p the lp ball equals the cube in double precision: use 'linf'."
            )
        self.dim = check_dim(dim)

    def __repr__(self):
        return f"LpBall(p={self.p:g}, dim={self.dim})"

    def norm(self, x):
        x = np.asarray(x, dtype=float)
        if self.p in (1.0, np.inf):  # no powers: nothing can overflow or underflow
            return np.linalg.norm(x, ord=self.p, axis=-1)
        # |x_i|^p overflows for |x_i| > 1 (and underflows for small x_i) once p is large:
        # factor out the largest entry, so every ratio is <= 1 and the largest is exactly 1.
        a = np.abs(x)
        big = np.max(a, axis=-1, keepdims=True) if a.shape[-1] else np.zeros(a.shape[:-1] + (1,))
        ok = np.isfinite(big) & (big > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(ok, a / np.where(ok, big, 1.0), 0.0)
            scaled = big[..., 0] * np.linalg.norm(ratio, ord=self.p, axis=-1)
        # 0 stays 0; an inf entry gives inf; a NaN entry gives NaN
        out = np.where(ok[..., 0], scaled, big[..., 0])
        return np.where(np.any(np.isnan(x), axis=-1), np.nan, out)

    def _sample_uniform(self, n, rng):
        m, p = self.dim, self.p
        if np.isinf(p):
            return rng.uniform(-1.0, 1.0, size=(n, m))
        if p == 2.0:
            g = rng.standard_normal((n, m))
            direction = g / np.linalg.norm(g, axis=1, keepdims=True)
            radius = _open_uniform(rng, (n, 1)) ** (1.0 / m)
            return direction * radius
        log_mags = log_gamma_variates(rng, 1.0 / p, (n, m))  # log |g_i|^p
        signs = rng.choice(np.array([-1.0, 1.0]), size=(n, m))
        log_e = np.log(rng.exponential(1.0, size=(n, 1)))
        log_total = logsumexp(np.concatenate([log_mags, log_e], axis=1), axis=1, keepdims=True)
        return signs * np.exp((log_mags - log_total) / p)

    def log_volume(self):
        m, p = self.dim, self.p
        if np.isinf(p):
            return m * np.log(2.0)
        # seed 001 Prop. 3.21: 2^m Gamma(1 + 1/p)^m / Gamma(1 + m/p)
        return m * np.log(2.0) + m * gammaln(1.0 + 1.0 / p) - gammaln(1.0 + m / p)

    @property
    def half_widths(self):
        return np.ones(self.dim)

    def coordinate_second_moment(self):
        # U = R * theta with theta ~ cone measure, R ~ Beta(m, 1) (density m r^{m-1}):
        # E R^2 = m/(m+2). theta_i = g_i/||g||_p (Schechtman--Zinn), independent of ||g||_p,
        # E g_i^2 = Gamma(3/p)/Gamma(1/p), E||g||_p^2 = Gamma((m+2)/p)/Gamma(m/p).
        m, p = self.dim, self.p
        if np.isinf(p):
            return np.eye(m) / 3.0
        log_theta2 = (gammaln(3 / p) - gammaln(1 / p)) - (gammaln((m + 2) / p) - gammaln(m / p))
        return np.eye(m) * (m / (m + 2.0)) * np.exp(log_theta2)


class L1Ball(LpBall):
    """Unit l1 ball (cross-polytope)."""

    def __init__(self, dim):
        super().__init__(1, dim)

    def __repr__(self):
        return f"L1Ball(dim={self.dim})"


class L2Ball(LpBall):
    """Unit Euclidean ball."""

    def __init__(self, dim):
        super().__init__(2, dim)

    def __repr__(self):
        return f"L2Ball(dim={self.dim})"


class LinfBall(LpBall):
    """Unit cube [-1, 1]^dim."""

    def __init__(self, dim):
        super().__init__(np.inf, dim)

    def __repr__(self):
        return f"LinfBall(dim={self.dim})"


def make_ball(norm, dim):
    """Turn a ``norm=`` argument ("l1", "l2", "linf", p >= 1, or a ball) into a ball of ``dim``."""
    canon = check_norm(norm)
    dim = check_dim(dim)
    if isinstance(canon, Ball) or not isinstance(canon, (str, float)):
        if canon.dim != dim:
            raise ValueError(f"The ball has dim={canon.dim} but dim={dim} was requested.")
        return canon
    if canon == "l1":
        return L1Ball(dim)
    if canon == "l2":
        return L2Ball(dim)
    if canon == "linf":
        return LinfBall(dim)
    return LpBall(canon, dim)
