"""Scalar-calibrated mechanisms: Laplace and the analytic Gaussian."""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy import optimize, special

from .._random import SecureRngPickling, check_random_state
from .._validation import check_delta, check_epsilon, check_sensitivity
from . import _exact


class LaplaceMechanism(SecureRngPickling):
    """Add iid Laplace(sensitivity / epsilon) noise to each coordinate.

    Guarantee: (epsilon, 0)-DP for a statistic with l1 sensitivity ``sensitivity``
    (the l1 K-norm mechanism; see :class:`~dpreg.noise.KNormMechanism`).

    Examples
    --------
    >>> from dpreg.noise import LaplaceMechanism
    >>> mech = LaplaceMechanism(epsilon=1.0, sensitivity=1.0, random_state=0)
    >>> mech.variance
    2.0
    >>> mech
    LaplaceMechanism(epsilon=1, sensitivity=1, scale=1)
    """

    def __init__(self, epsilon, sensitivity, random_state=None):
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        self.random_state = random_state
        self._rng = check_random_state(random_state)

    def __repr__(self):
        return (
            f"LaplaceMechanism(epsilon={self.epsilon:g}, sensitivity={self.sensitivity:g}, "
            f"scale={self.scale:.6g})"
        )

    @property
    def scale(self):
        return self.sensitivity / self.epsilon

    @property
    def variance(self):
        return 2.0 * self.scale**2

    def sample(self, size=None):
        """Noise alone, on the release grid (``randomise`` of zeros; see ``randomise``)."""
        out = self.randomise(np.zeros(() if size is None else size))
        return float(out) if size is None else out

    def randomise(self, value):
        """``value + Laplace noise``, released exactly on a public power-of-two grid.

        Floating-point safe: the output is the ideal real-valued mechanism's output rounded
        to the grid (``docs/floating_point.md``); ``value`` must be finite.
        """
        return _exact.release_laplace(value, self.sensitivity, self.epsilon, self._rng)

    randomize = randomise

    def privacy_profile(self, epsilon):
        """Tight delta(epsilon') of this mechanism (0 for epsilon' >= epsilon)."""
        eps = np.asarray(epsilon, dtype=float)
        # Hockey-stick divergence of Laplace(0,b) vs Laplace(Delta,b): 1 - exp((eps' - eps)/2)
        return np.where(eps >= self.epsilon, 0.0, -np.expm1((eps - self.epsilon) / 2.0))


def gaussian_delta(sigma, epsilon, sensitivity):
    """delta(epsilon) of the Gaussian mechanism (Balle & Wang 2018, Theorem 8), in floats.

    ``delta = Phi(D/(2 s) - eps s/D) - e^eps Phi(-D/(2 s) - eps s/D)``, evaluated in log space.
    Fast, but not exact: the two terms can cancel (for small epsilon and tiny delta the
    relative error reaches 4e-7), so privacy decisions use :func:`gaussian_delta_exact`.
    """
    a = sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    b = -sensitivity / (2.0 * sigma) - epsilon * sigma / sensitivity
    la, lb = special.log_ndtr(a), epsilon + special.log_ndtr(b)
    return float(np.exp(la) * -np.expm1(lb - la)) if la > lb else 0.0


def _exact_dps(epsilon):
    # The difference Phi(a) - e^eps Phi(b) loses about log10(1/epsilon) + a few digits to
    # cancellation (its terms exceed delta by a factor of order 1/epsilon); 40 spare digits on
    # top leave the result exact far beyond the 1e-15 that a float sigma can express.
    return 50 + max(0, math.ceil(-math.log10(epsilon)))


def gaussian_delta_exact(sigma, epsilon, sensitivity):
    """delta(epsilon) of the Gaussian mechanism with the float ``sigma``, in multiprecision.

    Returns an ``mpmath.mpf`` (the float arguments are converted exactly), accurate to many more
    digits than any double; used for the final check of every calibration.
    """
    with mpmath.workdps(_exact_dps(epsilon)):
        s, e, d = mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.mpf(sensitivity)
        a = d / (2 * s) - e * s / d
        b = -d / (2 * s) - e * s / d
        return +(mpmath.ncdf(a) - mpmath.exp(e) * mpmath.ncdf(b))


# The float delta(sigma) of :func:`gaussian_delta` is a product with exp(log Phi(a)), which
# underflows (to subnormals, then 0) below about 1e-320: the root finder's objective floors it
# there so that its logarithm stays finite.
_DELTA_FLOOR = 1e-320
#: The smallest delta the analytic Gaussian calibration accepts (``check`` before anything is
#: spent). A target below the floor can never be bracketed: the bracket grew until ``exp``
#: overflowed (a RuntimeWarning at ``delta = 5e-324``, before the spend, in session 9). At the
#: floor itself the objective is 0 on a whole half-line, and the root finder returned the end
#: of its first bracket: ``sigma = e^10 = 22026`` at ``delta = 1e-320`` (valid after the exact
#: check; ``38.08`` suffices at ``1.5e-320``). Targets in the normal range with
#: 20 decades to the floor bracket on a strictly decreasing stretch of the objective; 1e-300
#: is also the limit of the projection median's PTR margin (``required_margin``). So the
#: supported range is ``delta >= 1e-300`` (docs/floating_point.md, section 5c).
GAUSSIAN_DELTA_MIN = 1e-300
# log of the largest sigma the bracket may reach (exp(709) = 8.2e307 < float max = 1.8e308):
# a calibration beyond it (epsilon tiny against the sensitivity and delta) has no float sigma,
# and one below -709 would underflow to 0 (then the float delta divides by zero)
_LOG_SIGMA_MAX = 709.0


def analytic_gaussian_sigma(epsilon, delta, sensitivity):
    """Smallest float sigma (up to ~1e-10 relative) with ``delta(sigma) <= delta``, exactly.

    delta(sigma) is continuous and strictly decreasing in sigma, so a bracketing root finder on
    log sigma finds the calibration. The float evaluation of delta is not exact (cancellation,
    see :func:`gaussian_delta`), so the root can sit slightly on the wrong side: without a check
    sigma came out up to 1e-10 too small and delta exceeded its target by up to 2e-7 relative
    (epsilon = 1e-3, delta = 1e-300). The root is therefore verified in multiprecision
    (:func:`gaussian_delta_exact`) and, while delta exceeds the target, sigma is raised by a
    relative step starting at 2^-40 (about 1e-12) and doubling each time (so the loop ends after
    a few dozen steps at most, and overshoots the needed correction by at most a factor of two
    plus 1e-12). The returned sigma always satisfies ``delta(sigma) <= delta`` exactly (as a real
    number, for the float sigma returned); on a grid of 400 settings the correction never
    exceeded 2e-10 relative (``tests/noise/test_classic.py``).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    sensitivity = check_sensitivity(sensitivity)
    if delta < GAUSSIAN_DELTA_MIN:
        raise ValueError(
            f"delta must be at least {GAUSSIAN_DELTA_MIN:g} for the analytic Gaussian "
            f"calibration (near 1e-320 the float delta(sigma) underflows and the calibration "
            f"cannot be bracketed), got {delta!r}."
        )

    def f(log_s):
        return np.log(
            max(gaussian_delta(np.exp(log_s), epsilon, sensitivity), _DELTA_FLOOR)
        ) - np.log(delta)

    def out_of_range():
        return ValueError(
            f"The analytic Gaussian calibration has no float sigma for epsilon={epsilon!r}, "
            f"delta={delta!r}, sensitivity={sensitivity!r}: sigma would lie outside "
            f"[exp(-{_LOG_SIGMA_MAX:g}), exp({_LOG_SIGMA_MAX:g})]. Use a larger epsilon or "
            "delta, or rescale the statistic."
        )

    lo, hi = np.log(sensitivity) - 10.0, np.log(sensitivity) + 10.0
    if not -_LOG_SIGMA_MAX <= lo <= hi <= _LOG_SIGMA_MAX:
        raise out_of_range()
    while f(lo) < 0:
        if lo <= -_LOG_SIGMA_MAX:
            raise out_of_range()
        lo = max(lo - 10.0, -_LOG_SIGMA_MAX)
    while f(hi) > 0:
        if hi >= _LOG_SIGMA_MAX:
            raise out_of_range()
        hi = min(hi + 10.0, _LOG_SIGMA_MAX)
    root = optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-14)
    sigma = float(np.exp(root))
    target = mpmath.mpf(delta)
    step = 2.0**-40
    while gaussian_delta_exact(sigma, epsilon, sensitivity) > target:
        sigma *= 1.0 + step
        step *= 2.0
    return sigma


class GaussianMechanism(SecureRngPickling):
    """Add iid N(0, sigma^2) noise calibrated by the analytic Gaussian mechanism.

    Guarantee: (epsilon, delta)-DP for a statistic with l2 sensitivity ``sensitivity``, for
    any epsilon > 0 (including epsilon > 1), with the smallest such sigma (Balle & Wang 2018).

    Examples
    --------
    >>> from dpreg.noise import GaussianMechanism
    >>> mech = GaussianMechanism(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    >>> round(mech.sigma, 2)
    3.73
    >>> mech
    GaussianMechanism(epsilon=1, delta=1e-05, sensitivity=1, sigma=3.73063)
    >>> bool(mech.privacy_profile(1.0) <= 1e-5)
    True
    """

    def __init__(self, epsilon, delta, sensitivity, random_state=None):
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta, allow_zero=False)
        self.sensitivity = check_sensitivity(sensitivity)
        self.random_state = random_state
        self._rng = check_random_state(random_state)
        self.sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)

    def __repr__(self):
        return (
            f"GaussianMechanism(epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"sensitivity={self.sensitivity:g}, sigma={self.sigma:.6g})"
        )

    @property
    def variance(self):
        return self.sigma**2

    def sample(self, size=None):
        """Noise alone, on the release grid (``randomise`` of zeros; see ``randomise``)."""
        out = self.randomise(np.zeros(() if size is None else size))
        return float(out) if size is None else out

    def randomise(self, value):
        """``value + N(0, sigma^2)``, released exactly on a public power-of-two grid.

        Floating-point safe (``docs/floating_point.md``); ``value`` must be finite.
        """
        return _exact.release_gaussian(value, self.sigma, self._rng)

    randomize = randomise

    def privacy_profile(self, epsilon):
        """Exact delta(epsilon') of this mechanism (multiprecision, rounded to a float)."""
        eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
        out = np.array([float(gaussian_delta_exact(self.sigma, e, self.sensitivity)) for e in eps])
        return out if np.ndim(epsilon) else float(out[0])
