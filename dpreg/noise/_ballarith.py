"""Ball arithmetic for the exact grid releases (``dpreg.noise._exact``).

A ball is a midpoint and a radius that together *enclose* a real number. Two backends run the
same sampler code:

* ``_FloatBackend``: numpy float64 arrays of balls (the vectorised fast path). The radii cover
  the width of the uniforms' dyadic intervals and every rounding error: ``+ - * /`` and
  ``sqrt`` are correctly rounded (IEEE 754), so one rounding is at most ``2**-53`` relative
  (we charge ``_OP = 2**-50``, and ``_GROW`` for the roundings made while computing a
  radius); for ``np.log`` and ``np.power`` (relative) and ``np.cos``/``np.sin`` (absolute) we
  *assume* an error below ``_LIBM_REL = 2**-44`` -- numpy is within a few ulp; the assumption
  is checked against arb by ``tests/noise/test_floating_point.py`` (log, cos, sin) and
  ``tests/noise/test_floating_point_lp.py`` (power) on every machine the suite runs on.
* ``_ArbBackend``: numpy object arrays of python-flint ``arb`` balls (rigorous by
  construction), used by the slow path at any precision.

Non-finite midpoints or radii make a ball useless (an undecided cell), never wrong.
"""

from __future__ import annotations

import math

import numpy as np

_LIBM_REL = 2.0**-44  # assumed error of np.log, np.power (relative), np.cos/np.sin (absolute)
_OP = 2.0**-50  # > one rounding (2**-53 relative) of a correctly rounded operation
_GROW = 1.0 + 2.0**-46  # covers the roundings made while computing a radius
_TINY = 2.0**-1000  # absolute slack for underflow (a normal number: subnormals are slow)
_TWO_PI = 2.0 * math.pi


# ---------------------------------------------------------------------------------------------
# float64 ball arithmetic (fast path)
# ---------------------------------------------------------------------------------------------
def _grow(r, m):
    """Radius after one rounded operation with result ``m``: old radius plus one rounding.

    ``r`` must be a fresh temporary (it is updated in place to save allocations).
    """
    t = np.abs(m)
    t *= _OP
    t += _TINY
    if isinstance(r, np.ndarray) and r.shape == t.shape and r.dtype == t.dtype:
        r *= _GROW
        r += t
        return r
    return r * _GROW + t


class _Ball:
    """Arrays of real balls ``[m - r, m + r]``; every operation returns a rigorous enclosure.

    Operands are balls or *exact* floats/float arrays (constants and signs). Non-finite
    midpoints or radii simply make a ball useless (an undecided cell), never wrong.
    """

    __slots__ = ("m", "r")

    def __init__(self, m, r):
        self.m, self.r = m, r

    def __getitem__(self, idx):
        return _Ball(self.m[idx], self.r[idx])

    def __neg__(self):
        return _Ball(-self.m, self.r)

    def __add__(self, other):
        if isinstance(other, _Ball):
            m = self.m + other.m
            return _Ball(m, _grow(self.r + other.r, m))
        m = self.m + other
        return _Ball(m, _grow(self.r * 1.0, m))

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if isinstance(other, _Ball):
            m = self.m * other.m
            r = np.abs(self.m) * other.r + np.abs(other.m) * self.r + self.r * other.r
            return _Ball(m, _grow(r, m))
        m = self.m * other
        return _Ball(m, _grow(self.r * np.abs(other), m))

    __rmul__ = __mul__

    def __truediv__(self, other):
        if not isinstance(other, _Ball):
            inv = 1.0 / other  # exact for a power of two, else within one rounding
            return self * inv if _is_pow2(other) else self * _Ball(inv, np.abs(inv) * _OP)
        # a/o - am/om = (alpha - (am/om) beta)/(om + beta) with |alpha| <= ra, |beta| <= ro
        m = self.m / other.m
        den = np.abs(other.m) - other.r * _GROW
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(den > 0, (self.r + np.abs(m) * other.r) / den, np.inf)
        return _Ball(m, _grow(r * _GROW, m))


def _is_pow2(x):
    return np.ndim(x) == 0 and x > 0 and math.frexp(float(x))[0] == 0.5


_LN2 = math.log(2.0)  # fl(ln 2): |_LN2 - ln 2| < 2^-54


def _neglog_split(x, log=np.log):
    """``-log x`` for floats ``0 < x <= 1``, within ``2^-44.4 + |result| 2^-51`` (0 gives inf).

    (With ``log`` of relative error ``lam`` instead of libm's: ``lam ln 2 + |result| 2^-51``.)

    Why not ``-np.log(x)``: libm's error is relative to the result (``2^-44``, the stated
    assumption), so a Gamma sum near 20 would carry a radius of ``2^-39.7``. Splitting ``x =
    mant 2^E`` exactly (``frexp``, ``1/2 <= mant < 1``) gives ``-log x = L - E ln 2`` with ``L =
    -log(mant)`` in ``[0, ln 2]``: libm errs by at most ``ln 2 2^-44 < 2^-44.5`` there. The
    float ``fl(E _LN2)`` is within ``|E| (2^-54 + 2^-53 ln 2) <= |E| 1.21 2^-53`` of ``E ln
    2`` (the constant's error and one rounding), i.e. within ``v 1.75 2^-53`` as ``v = -log x
    >= |E| ln 2``; the final sum rounds by at most ``v 2^-53``. Total: ``2^-44.5 + v 2^-51.5``,
    below the stated bound.
    """
    mant, e = np.frexp(x)
    out = log(mant)  # -L, in [-ln 2, 0]
    out += e * _LN2  # log x (e <= 0)
    np.negative(out, out=out)
    return out


class _FloatBackend:
    """Uniform handles are float arrays of ``k`` (the interval ``[k, k + 1] * 2**-53``)."""

    @staticmethod
    def neglog(k):
        # -log U for U in [k, k+1] 2^-53 lies in [-log((k+1) 2^-53), that + log(1 + 1/k)]
        # and log(1 + 1/k) <= 1/k: one log per uniform.
        with np.errstate(divide="ignore"):
            m0 = -np.log((k + 1.0) * 2.0**-53)
            half = 0.5 / k
        m = m0 + half
        r = half * _GROW + np.abs(m0) * _LIBM_REL + np.abs(m) * _OP + _TINY
        return _Ball(m, r)

    @staticmethod
    def nlog(x):
        """Ball of ``-log x`` for a ball x > 0: ``|d log| <= r / (m - r)`` plus the libm error
        (relative ``_LIBM_REL``) and a rounding; undecided (infinite) when the ball reaches 0."""
        with np.errstate(divide="ignore", invalid="ignore"):
            m = -np.log(x.m)
            lo = x.m - x.r * _GROW
            r = np.where(lo > 0, x.r / lo, np.inf)
        return _Ball(m, r * _GROW + np.abs(m) * (_LIBM_REL + _OP) + _TINY)

    @classmethod
    def gaussian_pairs(cls, kA, kB):
        """Ball of the Box--Muller pairs (``_gaussian_pairs``) with fewer passes.

        s = sqrt(2 E), E = -log A: |s - s_m| <= min(sqrt(2 r_E), 2 r_E / s_m) plus a rounding;
        |s c - s_m c_m| <= |s - s_m| |c| + s_m |c - c_m| <= r_s (1 + 2^-43) + s_m 2^-43 for
        c = cos or sin (|c| <= 1, libm and argument error <= 2^-43), plus the product's rounding.
        """
        e = cls.neglog(kA)
        s_m = np.sqrt(2.0 * e.m)
        with np.errstate(divide="ignore", invalid="ignore"):
            r_s = np.minimum(np.sqrt(2.0 * e.r), (2.0 * e.r) / s_m)
        common = (r_s * ((1.0 + 2.0**-42) * _GROW) + s_m * (_OP + 2.0**-43)) * _GROW + _TINY
        t = _TWO_PI * (kB * 2.0**-53)
        m = np.concatenate([s_m * np.cos(t), s_m * np.sin(t)], axis=1)
        r = np.abs(m)
        r *= _OP
        r += np.concatenate([common, common], axis=1)
        return _Ball(m, r)

    @staticmethod
    def gamma_sum(k, log=np.log, lam=_LIBM_REL):
        """``-sum_j log U_j`` over the last axis (a Gamma(q) variable) with only two logs.

        prod U_j lies in [prod k_j, prod (k_j + 1)] 2^(-53 q); each of the q products is one
        rounding (relative 2^-53), so the lower (upper) float product times (1 -+ q 2^-51)
        is a rigorous bound (it stays normal for q < 600, far above the dims used here).
        ``log`` (relative error ``lam``) defaults to libm's; the radius charges ``1.2 lam ln
        2`` for it (``_neglog_split``; ``2^-44.3`` for the libm assumption).
        """
        q = k.shape[-1]
        slack = q * 2.0**-51
        # reduce along the first axis of a C-contiguous (q, rows) copy: numpy's reductions
        # over a short last axis are slow
        a = np.ascontiguousarray(k.T)
        a *= 2.0**-53  # exact
        lo = np.prod(a, axis=0)[:, None]
        a += 2.0**-53  # exact: (k + 1) 2^-53, at most 1
        hi = np.prod(a, axis=0)[:, None]
        lo *= 1.0 - slack
        lo = np.where(lo < 2.0**-1000, 0.0, lo)  # near underflow: give up (slow path)
        hi *= 1.0 + slack
        with np.errstate(divide="ignore", invalid="ignore"):
            a, b = _neglog_split(hi, log), _neglog_split(lo, log)
        m = 0.5 * (a + b)
        r = 0.5 * (b - a) * _GROW + (np.abs(b) * 2.0**-50.9 + 1.2 * _LN2 * lam)
        r += np.abs(m) * _OP + _TINY
        return _Ball(m, r)

    @staticmethod
    def centred(k):
        # 2U - 1 in [k 2^-52 - 1, (k+1) 2^-52 - 1]; the midpoint is exact (multiple of 2^-53)
        return _Ball((k * 2.0**-52 - 1.0) + 2.0**-53, np.full(np.shape(k), 2.0**-53))

    @staticmethod
    def _trig(fun, k):
        # |d/dU f(2 pi U)| <= 2 pi, width 2^-53; the argument fl(fl(2 pi) k 2^-53) is off by
        # at most 2 pi 2^-52; plus the libm error: all below 2^-43.
        return _Ball(fun(_TWO_PI * (k * 2.0**-53)), np.full(np.shape(k), 2.0**-43))

    @classmethod
    def cos2pi(cls, k):
        return cls._trig(np.cos, k)

    @classmethod
    def sin2pi(cls, k):
        return cls._trig(np.sin, k)

    @staticmethod
    def sqrt(x):
        # |sqrt(y) - sqrt(m)| <= min(sqrt(r), r / sqrt(m)) for y >= 0, |y - m| <= r
        m = np.sqrt(np.maximum(x.m, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.minimum(np.sqrt(x.r + np.maximum(-x.m, 0.0)), x.r / m)
        return _Ball(m, _grow(r * _GROW, m))

    @staticmethod
    def pow(x, t):
        """Ball of ``y**t`` for every ``y`` in a ball x > 0 and a public float ``t > 0``.

        With ``rho = x.r / x.m <= 2^-20 / max(t, 1)``, the mean value theorem gives ``|y^t -
        m^t| <= t xi^(t-1) r`` for some ``xi`` within r of m, and ``xi^(t-1) <= m^(t-1) (1 +
        2^-19)``: for ``t >= 1``, ``(1 + rho)^(t-1) <= exp(2^-20)``; for ``t < 1``, ``(1 -
        rho)^(t-1) <= 1 / (1 - rho) <= 1 + 2 rho``. ``a = np.power(m, t)`` is within ``a
        2^-44`` of ``m^t`` (the stated libm assumption; ``m^(t-1) = a / m`` up to that and
        one rounding, covered by taking ``1 + 2^-18``). A larger rho, ``m <= 0``, an infinite
        radius or NaN gives an infinite radius (undecided, never wrong).
        """
        with np.errstate(all="ignore"):
            a = np.power(x.m, t)
            d = x.r * (t * (1.0 + 2.0**-18))
            d *= a
            d /= x.m
            d *= _GROW
            d += a * (_LIBM_REL + _OP)
            d += _TINY
            ok = (x.r * max(t, 1.0) <= x.m * 2.0**-20) & np.isfinite(x.r)  # False for NaN
        return _Ball(a, np.where(ok, d, np.inf))

    @staticmethod
    def abs(x):
        return _Ball(np.abs(x.m), x.r)

    @staticmethod
    def minimum(x, c):
        return _Ball(np.minimum(x.m, c), x.r)  # 1-Lipschitz, exact

    @staticmethod
    def maximum(x, c):
        return _Ball(np.maximum(x.m, c), x.r)

    @staticmethod
    def sum(x, axis):
        """Sum over the last axis of 2-D balls (``axis`` must be 1 or -1), kept as a column.

        Reduced over a contiguous copy of the transpose: numpy's reductions over a short last
        axis are slow. Any summation order: |error| <= gamma_{k-1} sum |x_i| (Higham, 4.4).
        """
        if x.m.ndim != 2 or axis not in (1, -1):
            raise ValueError("_FloatBackend.sum sums the last axis of 2-D balls only.")

        def total(a):
            return np.ascontiguousarray(a.T).sum(axis=0)[:, None]

        k = x.m.shape[1]
        m = total(x.m)
        err = (k * 2.0**-52) * total(np.abs(x.m))
        return _Ball(m, _grow(total(x.r) * _GROW + err, m))

    @staticmethod
    def concat(parts, axis):
        return _Ball(
            np.concatenate([p.m for p in parts], axis=axis),
            np.concatenate([p.r for p in parts], axis=axis),
        )


# ---------------------------------------------------------------------------------------------
# arb ball arithmetic (slow path): object arrays of python-flint arb balls
# ---------------------------------------------------------------------------------------------
def _vec(fun):
    return np.frompyfunc(fun, 1, 1)


class _ArbBackend:
    """Uniform handles are object arrays of arb balls that contain the uniforms exactly."""

    _log = _vec(lambda u: -u.log())
    _sqrt = _vec(lambda x: x.nonnegative_part().sqrt())
    _abs = _vec(abs)

    @classmethod
    def neglog(cls, u):
        return cls._log(u)

    @classmethod
    def nlog(cls, x):
        return cls._log(x)

    @classmethod
    def gaussian_pairs(cls, A, B):
        rad = cls.sqrt(cls.neglog(A) * 2.0)
        return cls.concat([rad * cls.cos2pi(B), rad * cls.sin2pi(B)], axis=1)

    @classmethod
    def gamma_sum(cls, u):
        return cls._log(np.prod(u, axis=-1, keepdims=True))

    @staticmethod
    def centred(u):
        return 2 * u - 1

    @staticmethod
    def cos2pi(u):
        return _vec(lambda v: (2 * v).cos_pi())(u)

    @staticmethod
    def sin2pi(u):
        return _vec(lambda v: (2 * v).sin_pi())(u)

    @classmethod
    def sqrt(cls, x):
        return cls._sqrt(x)

    @classmethod
    def abs(cls, x):
        return cls._abs(x)

    @staticmethod
    def pow(x, t):
        """``y**t`` for balls y > 0 (arb: NaN, i.e. undecided, when a ball reaches 0)."""
        from flint import arb  # noqa: PLC0415 (the slow path only)

        t = arb(t)
        return _vec(lambda v: v**t)(x)

    @staticmethod
    def minimum(x, c):
        return _vec(lambda v: v.min(c))(x)

    @staticmethod
    def maximum(x, c):
        return _vec(lambda v: v.max(c))(x)

    @staticmethod
    def sum(x, axis):
        return x.sum(axis=axis, keepdims=True)

    @staticmethod
    def concat(parts, axis):
        return np.concatenate(parts, axis=axis)
