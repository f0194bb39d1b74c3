"""The 1-D flipped Huber calibration meets small delta targets for the floats it releases.

At the optimum the Laplace plateau of the privacy loss, ``b D = b Delta / gamma``, sits at
epsilon to within round-off. An excess of a few ulps costs ``delta ~ 1e-16`` whatever delta
was asked for; the float privacy check used to pick the wrong segment of the loss and missed
it, so targets below about 1e-13 were not met (audit s22, F1: ``delta = 4.6e-16`` for a
target of 1e-50). The reference here is independent of the library: the closed-form CDF in
mpmath at 400 digits, the crossing point by bisection on the raw loss of the released floats
(``b = fl(alpha / gamma)``, ``gamma``, ``Delta``), and the plateau's side decided exactly in
rationals.
"""

from fractions import Fraction

import mpmath
import pytest

from dpreg.noise import FlippedHuberMechanism
from dpreg.noise import _huber_calibration as hc

DPS = 400  # absolute error ~1e-390: far below the smallest target (1e-300)


def _sf_std(s, b):
    """P(S > s) for S of density proportional to exp(-rho_b(s)) (closed form)."""

    def q(x):
        return mpmath.erfc(x / mpmath.sqrt(2)) / 2

    tail = mpmath.exp(-b * b / 2) * mpmath.sqrt(2 * mpmath.pi)
    z = 2 * (-mpmath.expm1(-b * b)) / b + 2 * tail * q(b)
    a = abs(s)
    r = (
        tail * q(a) / z
        if a > b
        else ((mpmath.exp(-b * a) - mpmath.exp(-b * b)) / b + tail * q(b)) / z
    )
    return r if s >= 0 else 1 - r


def _exact_delta(eps, b, gamma, sens):
    """delta(eps) of FH with the float shape b and scale gamma against a shift sens."""
    with mpmath.workdps(DPS):
        b, g, d, e = (mpmath.mpf(x) for x in (b, gamma, sens, eps))

        def rho(s):
            return b * abs(s) if abs(s) <= b else (s * s + b * b) / 2

        def loss(t):  # log g(t) - log g(t - Delta), nonincreasing in t
            return rho((t - d) / g) - rho(t / g)

        lo, hi = -mpmath.mpf(1), mpmath.mpf(1)
        while loss(lo) <= e:
            lo *= 2
        while loss(hi) > e:
            hi *= 2
        for _ in range(1500):  # 2^-1500: below the working precision
            mid = (lo + hi) / 2
            if loss(mid) > e:
                lo = mid
            else:
                hi = mid
        t = (lo + hi) / 2
        # G(x) = P(g S <= x) = P(S > -x / g) by symmetry (no cancellation in the left tail)
        return _sf_std(-t / g, b) - mpmath.exp(e) * _sf_std(-(t - d) / g, b)


@pytest.mark.parametrize("delta", [1e-6, 1e-14, 1e-20, 1e-50, 1e-300])
@pytest.mark.parametrize("eps,sens", [(1.0, 1.0), (0.1, 1.0), (0.5, 3.0), (1e-3, 1e5)])
def test_released_floats_meet_small_delta_exactly(eps, sens, delta):
    mech = FlippedHuberMechanism(eps, delta, sens)
    b, gamma = mech.distribution.b, mech.gamma
    assert b == mech.alpha / mech.gamma  # the shape the sampler uses
    exact = _exact_delta(eps, b, gamma, sens)
    assert exact <= delta, f"exact delta {mpmath.nstr(exact, 6)} above the target {delta:g}"
    # the library's own multiprecision route agrees with this one
    with mpmath.workdps(60):
        lib = hc.exact_delta_mp(eps, b, gamma, sens, delta)
        assert abs(lib - exact) <= delta * 1e-20 + abs(exact) * mpmath.mpf(10) ** -30
    # and the released plateau is where the target needs it: an excess b D - eps > 0 would
    # cost about half the excess in delta, far more than a target below 1e-16 allows
    if delta < 1e-16:
        assert Fraction(b) * Fraction(sens) / Fraction(gamma) <= Fraction(eps)


def test_centred_loss_inverse_stops_before_the_first_breakpoint_above_eps():
    """The audit's trace (eps = 1, delta = 1e-50, b ~ 11.61, D ~ 0.086): the float loss at the
    breakpoint u = h is eps + 8.9e-16 (the plateau b D) and exactly eps at u = b - h, so the
    last breakpoint with loss <= eps lies past the first one above it. u* must stay below
    u = h, in the segment where the two ends of the shifted pair straddle 0."""
    b, gamma, eps = 11.611396060818675, 11.611396060818665, 1.0  # the old release at 1e-50
    D = 1.0 / gamma
    h = D / 2
    assert b * D > eps
    u = hc.centred_loss_inverse(eps, b, h)
    assert u <= h
    assert u == pytest.approx(eps / (2 * b))
