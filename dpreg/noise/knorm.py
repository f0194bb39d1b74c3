"""The K-norm mechanism (Hardt & Talwar 2010; seed 001 sections 2 and 7.1).

Guarantee
---------
Let T be a statistic with ``||T(D) - T(D')||_K <= Delta`` for all neighbours D, D'. Releasing
``T(D) + V`` with V of density ``f(v) = c * exp(-epsilon * ||v||_K / Delta)`` is epsilon-DP.

Proof sketch: for any output t, f(t - T(D)) / f(t - T(D')) =
exp(epsilon (||t - T(D')||_K - ||t - T(D)||_K) / Delta) <= exp(epsilon ||T(D) - T(D')||_K / Delta)
<= e^epsilon by the triangle inequality for the gauge.

Sampling (exact)
----------------
Write b = Delta / epsilon and m = dim. In polar form with respect to K, the volume of
{||v||_K <= r} is r^m vol(K), so ``R = ||V||_K`` has density proportional to r^{m-1} e^{-r/b}:
``R ~ Gamma(m, scale=b)``, and V/R follows the cone measure on the boundary of K. Equivalently,
and simpler to draw: ``V = r U`` with ``r ~ Gamma(m + 1, scale=b)`` and U uniform *inside* K
(the extra power of r absorbs the law of ||U||_K, which is Beta(m, 1)). Drawing
``Gamma(m)`` with a point *inside* K would be wrong.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from .._random import SecureRngPickling, check_random_state
from .._validation import check_dim, check_epsilon, check_sensitivity
from ..exceptions import PrivacyLeakWarning
from . import _exact
from .balls import _size_shape, make_ball


class KNormMechanism(SecureRngPickling):
    """Add noise with density proportional to ``exp(-epsilon * ||v||_K / sensitivity)``.

    Parameters
    ----------
    norm : {"l1", "l2", "linf"}, float >= 1 or Ball
        The norm whose unit ball is K: a name, p for the lp norm, or a ball object such as
        :class:`~dpreg.noise.PolytopeBall` or :class:`~dpreg.noise.ConvexBody` (anything with
        ``dim``, ``norm`` and an *exact* uniform sampler ``sample_uniform``; the guarantee
        holds only if that sampler is exactly uniform on the ball whose gauge is ``norm``).
    dim : int
        Dimension of the released statistic.
    sensitivity : float
        Bound on ``||T(D) - T(D')||_K`` over neighbouring data sets (in the same norm).
    epsilon : float
        Privacy parameter; the release is (epsilon, 0)-DP.
    random_state : None, int, RandomState or Generator
        Seed or generator for reproducible noise.
    method : {"auto", "polar"}, default="auto"
        ``"auto"`` uses the fastest exact sampler (iid Laplace for the l1 ball); ``"polar"``
        always uses the generic ``r * U`` sampler (same law; exposed so tests can compare them).

    Examples
    --------
    >>> from dpreg.noise import KNormMechanism
    >>> mech = KNormMechanism("linf", dim=3, sensitivity=2.0, epsilon=1.0, random_state=0)
    >>> mech.sample().shape
    (3,)
    >>> mech.sample(size=5).shape
    (5, 3)
    """

    def __init__(self, norm, dim, sensitivity, epsilon, random_state=None, method="auto"):
        if method not in ("auto", "polar"):
            raise ValueError(f"method must be 'auto' or 'polar', got {method!r}.")
        self.method = method
        self.dim = check_dim(dim)
        self.ball = make_ball(norm, self.dim)
        self.norm = norm
        self.sensitivity = check_sensitivity(sensitivity)
        self.epsilon = check_epsilon(epsilon)
        self.random_state = random_state
        self._rng = check_random_state(random_state)

    def __repr__(self):
        return (
            f"KNormMechanism(ball={self.ball!r}, sensitivity={self.sensitivity:g}, "
            f"epsilon={self.epsilon:g})"
        )

    @property
    def scale(self):
        """``b = sensitivity / epsilon``: ``||V||_K ~ Gamma(dim, scale=b)``."""
        return self.sensitivity / self.epsilon

    def norm_distribution(self):
        """The exact law of ``||V||_K`` as a frozen scipy distribution (for tests and users)."""
        return stats.gamma(a=self.dim, scale=self.scale)

    @property
    def floating_point_safe(self):
        """Whether ``randomise`` is certified on real hardware (every lp ball, 1 <= p <= inf).

        Other balls are snapped to the same grid but not certified (``randomise`` warns with
        ``PrivacyLeakWarning``): see
        ``docs/floating_point.md``.
        """
        return _exact.hardened_p(self.ball) is not None

    def sample(self, size=None):
        """Noise of shape ``(dim,)`` (``size=None``) or ``size + (dim,)``: ``randomise`` of 0."""
        shape, _ = _size_shape(size, self.dim)
        return self.randomise(np.zeros(shape))

    def randomise(self, value):
        """Return ``value + noise`` (``value`` has ``dim`` entries) on a public grid.

        For lp balls (any p) the output is exactly the ideal mechanism's output
        rounded to a power-of-two grid (floating-point safe, ``docs/floating_point.md``);
        ``value`` must be finite. l1 uses iid Laplace coordinates (same law) unless
        ``method="polar"``.
        """
        value = np.asarray(value, dtype=float)
        if value.shape[-1:] != (self.dim,) and not (self.dim == 1 and value.ndim == 0):
            raise ValueError(f"value must have {self.dim} entries, got shape {value.shape}.")
        if not self.floating_point_safe:
            # Said at use, not only in the docs: a polytope or membership-oracle ball is exact in
            # law but its float release is not certified, so the stated epsilon is not proven on
            # real hardware (docs/floating_point.md).
            warnings.warn(
                f"{type(self.ball).__name__}: the K-norm release is exact in law and snapped to "
                "a public grid, but only lp balls are certified on floating-point hardware; "
                "the epsilon guarantee of this release is not proven there "
                "(docs/floating_point.md). Use an lp norm for a certified release.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        return _exact.release_knorm_ball(
            value, self.ball, self.sensitivity, self.epsilon, self._rng, self.method == "polar"
        )

    randomize = randomise

    def covariance(self):
        """``E[V V^T] = E[r^2] E[U U^T]`` with ``E[r^2] = (m+1)(m+2) b^2``."""
        m = self.dim
        return (m + 1.0) * (m + 2.0) * self.scale**2 * self.ball.coordinate_second_moment()

    @property
    def variance(self):
        """Mean per-coordinate variance ``E||V||_2^2 / dim``."""
        return float(np.trace(self.covariance()) / self.dim)
