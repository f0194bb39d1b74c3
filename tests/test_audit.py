"""Empirical privacy audits: a statistical lower bound on epsilon from many runs.

Method
------
Run a mechanism M many times on two neighbouring inputs D0, D1 and decide "D1" when a scalar
statistic S of the output exceeds a threshold t. If M is (eps, delta)-DP then every test has

    FPR + e^eps FNR >= 1 - delta   and   FNR + e^eps FPR >= 1 - delta,

so eps >= log((1 - delta - FPR) / FNR) and eps >= log((1 - delta - FNR) / FPR). Replacing FPR
and FNR by one-sided Clopper--Pearson upper limits (each at level alpha / 2) gives a lower
confidence bound eps_lo on the true epsilon that holds with probability >= 1 - alpha. The
threshold is chosen on a separate *calibration* sample, so the evaluation counts are fresh
binomials and the confidence statement is valid.

A correct mechanism must give eps_lo <= claimed eps (checked at alpha = 0.01 with fixed seeds,
so the tests are deterministic). The audit can fail: a Laplace mechanism with half the correct
scale is caught (eps_lo > claimed eps). The ``slow`` variants use many more runs and also check
that the audit is *tight* where the optimal test is known (eps_lo close to eps).
"""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpreg.noise import GaussianMechanism, KNormMechanism, LaplaceMechanism, PolytopeBall

ALPHA = 0.01


def cp_upper(k, n, alpha):
    """One-sided Clopper--Pearson upper confidence limit for a binomial proportion."""
    if k >= n:
        return 1.0
    return float(stats.beta.ppf(1.0 - alpha, k + 1, n - k))


def eps_bound(fpr, fnr, delta):
    """The larger of the two DP lower bounds on epsilon implied by one test's error rates."""
    out = 0.0
    if fnr > 0 and 1.0 - delta - fpr > 0:
        out = max(out, math.log((1.0 - delta - fpr) / fnr))
    if fpr > 0 and 1.0 - delta - fnr > 0:
        out = max(out, math.log((1.0 - delta - fnr) / fpr))
    return out


def choose_threshold(s0, s1, delta=0.0, n_candidates=100, alpha=ALPHA):
    """Orientation and threshold with the largest Clopper--Pearson bound on calibration data.

    Returns ``(sign, t)``: the test decides "D1" when ``sign * S > t``. Both orientations are
    tried (a neighbour may move the statistic either way). Maximising the confidence bound,
    not the point estimate, avoids thresholds far in a tail where a handful of counts make the
    point estimate look large.
    """
    best, best_sign, best_t = -1.0, 1.0, np.inf
    for sign in (1.0, -1.0):
        a0, a1 = np.sort(sign * s0), np.sort(sign * s1)
        pooled = np.concatenate([a0, a1])
        pooled = pooled[np.isfinite(pooled)]
        if pooled.size == 0:  # nothing was ever released: every test is the same
            continue
        cands = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_candidates)))
        n0, n1 = len(a0), len(a1)
        for t in cands:
            fp = n0 - np.searchsorted(a0, t, side="right")
            fn = np.searchsorted(a1, t, side="right")
            b = eps_bound(cp_upper(int(fp), n0, alpha / 2), cp_upper(int(fn), n1, alpha / 2), delta)
            if b > best:
                best, best_sign, best_t = b, sign, t
    return best_sign, best_t


def audit(sample0, sample1, n, delta=0.0, alpha=ALPHA):
    """Lower confidence bound on epsilon from ``n`` calibration + ``n`` audit runs per side.

    ``sample0(k)``/``sample1(k)`` return k values of the scalar statistic under D0/D1
    (NaN or -inf for "nothing released"; such outcomes count as below every threshold).
    """

    # Statistics are rounded so that floating-point ties (e.g. a privacy loss that is exactly
    # +-eps on whole regions) cannot be split by round-off, which would leak the input.
    def draw(sampler):
        return np.round(np.nan_to_num(np.asarray(sampler(n), float), nan=-np.inf), 9)

    c0, c1 = draw(sample0), draw(sample1)
    sign, t = choose_threshold(c0, c1, delta, alpha=alpha)
    a0, a1 = sign * draw(sample0), sign * draw(sample1)
    fpr_hi = cp_upper(int(np.sum(a0 > t)), n, alpha / 2)
    fnr_hi = cp_upper(int(np.sum(a1 <= t)), n, alpha / 2)
    return eps_bound(fpr_hi, fnr_hi, delta)


# ----------------------------------------------------------------------------------------------
# the audit itself
# ----------------------------------------------------------------------------------------------


def test_clopper_pearson_matches_exact_binomial_tail():
    # The upper limit p solves P[Bin(n, p) <= k] = alpha.
    for k, n in [(0, 10), (3, 50), (40, 100)]:
        p = cp_upper(k, n, 0.05)
        assert stats.binom.cdf(k, n, p) == pytest.approx(0.05, abs=1e-8)
    assert cp_upper(5, 5, 0.05) == 1.0


def test_clopper_pearson_coverage():
    """Empirical coverage of the one-sided limit is at least the nominal level."""
    rng = np.random.default_rng(0)
    n, p = 60, 0.1
    k = rng.binomial(n, p, size=4000)
    covered = np.mean([cp_upper(int(j), n, 0.05) >= p for j in k])
    assert covered >= 0.95


def _laplace_sampler(scale, shift, seed):
    rng = np.random.default_rng(seed)
    return lambda k: shift + rng.laplace(0.0, scale, size=k)


def test_audit_detects_broken_laplace():
    """Laplace noise at half the correct scale claims eps = 1 but is 2-DP: the audit sees it."""
    eps = 1.0
    bound = audit(
        _laplace_sampler(0.5 / eps, 0.0, 1), _laplace_sampler(0.5 / eps, 1.0, 2), n=20_000
    )
    assert bound > eps


def test_audit_detects_gaussian_without_enough_noise():
    """sigma = 1 on a sensitivity-1 query is not (1, 1e-5)-DP (needs sigma ~ 3.7)."""
    rng0, rng1 = np.random.default_rng(3), np.random.default_rng(4)
    bound = audit(
        lambda k: rng0.normal(0, 1, k), lambda k: 1 + rng1.normal(0, 1, k), n=20_000, delta=1e-5
    )
    assert bound > 1.0


# ----------------------------------------------------------------------------------------------
# noise mechanisms
# ----------------------------------------------------------------------------------------------


def _mechanism_audit(make, shift, statistic, n, delta=0.0):
    """Audit ``make(seed)`` (a mechanism with .sample) on f(D0) = 0, f(D1) = shift."""
    m0, m1 = make(11), make(12)
    shift = np.atleast_1d(np.asarray(shift, dtype=float))

    def s0(k):
        return statistic(np.asarray(m0.sample(size=k), dtype=float).reshape(k, -1))

    def s1(k):
        return statistic(shift + np.asarray(m1.sample(size=k), dtype=float).reshape(k, -1))

    return audit(s0, s1, n, delta=delta)


def _knorm_llr(ball, shift, eps, sens):
    """The Neyman--Pearson statistic: the privacy loss eps/sens (|v|_K - |v - shift|_K)."""
    shift = np.asarray(shift, float)
    return lambda V: eps / sens * (ball.norm(V) - ball.norm(V - shift))


KNORM_CASES = [
    # (norm, dim, shift on the unit sphere of the norm, ball)
    ("l1", 2, [1.0, 0.0], "l1"),
    ("l2", 2, [0.6, 0.8], "l2"),
    ("linf", 2, [1.0, 1.0], "linf"),
    ("l2", 1, [1.0], "l2"),
]


def _ball(name, dim):
    from dpreg.noise import make_ball

    return make_ball(name, dim)


@pytest.mark.parametrize(("norm", "dim", "shift", "ball"), KNORM_CASES)
def test_audit_knorm(norm, dim, shift, ball):
    eps, sens = 1.0, 1.0
    K = _ball(ball, dim)

    def make(seed):
        return KNormMechanism(norm, dim, sens, eps, random_state=seed)

    bound = _mechanism_audit(make, shift, _knorm_llr(K, shift, eps, sens), n=20_000)
    assert bound <= eps
    assert bound > 0.5 * eps  # the optimal test is nearly tight (power check)


def test_audit_knorm_polytope():
    """A hexagon K-norm mechanism, shifted to a vertex of the hexagon."""
    angles = np.arange(6) * np.pi / 3
    hexagon = PolytopeBall(vertices=np.column_stack([np.cos(angles), np.sin(angles)]))
    eps, sens, shift = 1.0, 1.0, [1.0, 0.0]

    def make(seed):
        return KNormMechanism(hexagon, 2, sens, eps, random_state=seed)

    bound = _mechanism_audit(make, shift, _knorm_llr(hexagon, shift, eps, sens), n=20_000)
    assert 0.5 * eps < bound <= eps


def test_audit_laplace():
    eps = 0.7

    def make(seed):
        return LaplaceMechanism(eps, 1.0, random_state=seed)

    bound = _mechanism_audit(make, [1.0], lambda V: V[:, 0], n=20_000)
    assert 0.5 * eps < bound <= eps


def test_audit_gaussian():
    eps, delta = 1.0, 1e-5

    def make(seed):
        return GaussianMechanism(eps, delta, 1.0, random_state=seed)

    bound = _mechanism_audit(make, [1.0], lambda V: V[:, 0], n=20_000, delta=delta)
    assert bound <= eps


def test_audit_flipped_huber():
    from dpreg.noise import FlippedHuberMechanism

    eps, delta = 1.0, 1e-6

    def make(seed):
        return FlippedHuberMechanism(eps, delta, 1.0, random_state=seed)

    bound = _mechanism_audit(make, [1.0], lambda V: V[:, 0], n=20_000, delta=delta)
    assert 0.3 * eps < bound <= eps


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_audit_mechanisms_long(eps):
    """Many more runs: every mechanism stays below its claim, and the Laplace audit is tight."""
    from dpreg.noise import FlippedHuberMechanism

    n = 400_000
    lap = _mechanism_audit(
        lambda s: LaplaceMechanism(eps, 1.0, random_state=s), [1.0], lambda V: V[:, 0], n=n
    )
    assert 0.9 * eps < lap <= eps
    for norm, dim, shift, ball in KNORM_CASES:
        K = _ball(ball, dim)
        b = _mechanism_audit(
            lambda s, nm=norm, d=dim: KNormMechanism(nm, d, 1.0, eps, random_state=s),
            shift,
            _knorm_llr(K, shift, eps, 1.0),
            n=n,
        )
        assert 0.8 * eps < b <= eps, (norm, dim, b)
    for delta in (1e-3, 1e-6):
        g = _mechanism_audit(
            lambda s, d=delta: GaussianMechanism(eps, d, 1.0, random_state=s),
            [1.0],
            lambda V: V[:, 0],
            n=n,
            delta=delta,
        )
        h = _mechanism_audit(
            lambda s, d=delta: FlippedHuberMechanism(eps, d, 1.0, random_state=s),
            [1.0],
            lambda V: V[:, 0],
            n=n,
            delta=delta,
        )
        assert g <= eps and h <= eps
    broken = audit(_laplace_sampler(0.8 / eps, 0.0, 5), _laplace_sampler(0.8 / eps, 1.0, 6), n=n)
    assert broken > eps  # 25% too little noise is already detected


# ----------------------------------------------------------------------------------------------
# estimators on tiny neighbouring data sets
# ----------------------------------------------------------------------------------------------


def _estimator_sampler(make, X, y, attr, seed0):
    """Statistic sampler: refit ``make(seed)`` on (X, y) and read a scalar output."""
    from dpreg.exceptions import PTRTestFailedError

    counter = [seed0]

    def sample(k):
        out = np.empty(k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(k):
                counter[0] += 1
                est = make(counter[0])
                try:
                    est.fit(X) if y is None else est.fit(X, y)
                except PTRTestFailedError:
                    out[i] = np.nan
                    continue
                out[i] = attr(est)
        return out

    return sample


def _neighbours_regression():
    """No-intercept regression on x = +-1: the neighbour flips the target of one row.

    The released statistic (sums of x^2 and x*y) then moves by the full sensitivity 2 in the
    x*y entry, and the slope is nearly a linear function of that entry, so thresholding the
    slope is close to the optimal test.
    """
    X = np.ones((40, 1))
    X[::2] = -1.0
    y0 = 0.5 * X[:, 0]
    y0[0] = -1.0
    y1 = y0.copy()
    y1[0] = 1.0
    return (X, y0), (X.copy(), y1)


def _neighbours_quantile():
    """Smith's private median through the origin: x = 1, one response moves from -1 to 1."""
    X = np.ones((5, 1))
    y0 = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    y1 = y0.copy()
    y1[0] = 1.0
    return (X, y0), (X.copy(), y1)


def _estimator_audit(make, attr, data0, data1, n, delta=0.0):
    s0 = _estimator_sampler(make, *data0, attr, 0)
    s1 = _estimator_sampler(make, *data1, attr, 10**6)
    return audit(s0, s1, n, delta=delta)


def _functional(eps):
    from dpreg import FunctionalLinearRegression

    return lambda s: FunctionalLinearRegression(
        epsilon=eps, bounds_X=(-1, 1), bounds_y=(-1, 1), fit_intercept=False, random_state=s
    )


def _logistic(eps):
    from dpreg import ObjectivePerturbationLogistic

    # q pinned at 0.9 (the q="auto" choice here until the classifier rule, which picks 0.81
    # at n = 6): with less of epsilon on V, 60 seeded runs measured no power (bound 0.0)
    # while the bound <= epsilon check still passed. The guarantee holds for every q.
    return lambda s: ObjectivePerturbationLogistic(
        epsilon=eps, q=0.9, bounds=(-1, 1), random_state=s
    )


def _quantile(eps):
    from dpreg import KNGQuantileRegressor

    return lambda s: KNGQuantileRegressor(
        quantile=0.5,
        epsilon=eps,
        bounds_X=(-1, 1),
        bounds_y=(-1, 1),
        fit_intercept=False,  # one parameter: the KNG draw is exact, so the audit is of eps
        n_chains=1,
        random_state=s,
    )


def _coef(est):
    return float(np.ravel(est.coef_)[0])


def _logistic_data():
    X0 = np.array([[-1.0], [-0.5], [0.5], [1.0], [1.0], [-1.0]])
    y0 = np.array([0, 0, 1, 1, 1, 0])
    X1, y1 = X0.copy(), y0.copy()
    y1[4] = 0  # flip one label at an extreme point
    return (X0, y0), (X1, y1)


ESTIMATOR_CASES = {
    "functional": (_functional, _neighbours_regression, _coef),
    "logistic": (_logistic, _logistic_data, _coef),
    "quantile": (_quantile, _neighbours_quantile, _coef),
}


# Runs per side (calibration + audit each): the fits are fast except the logistic solver.
AUDIT_RUNS = {"functional": 400, "logistic": 60, "quantile": 400}
AUDIT_RUNS_LONG = {"functional": 3000, "logistic": 600, "quantile": 3000}


@pytest.mark.parametrize("name", list(ESTIMATOR_CASES))
def test_audit_estimator(name):
    """No violation of the claimed epsilon; the audit has power (it sees a real difference).

    epsilon = 4 makes neighbouring outputs distinguishable with a few hundred fits.
    """
    factory, data, attr = ESTIMATOR_CASES[name]
    eps = 4.0
    d0, d1 = data()
    bound = _estimator_audit(factory(eps), attr, d0, d1, n=AUDIT_RUNS[name])
    assert bound <= eps
    # power: the seeded logistic audit (60 runs; the certified solver and the AMP noise make a
    # fit slower) measured 0.174 here, the others > 1; a data-blind release gives <= 0
    assert bound > (0.03 if name == "logistic" else 0.25) * eps


def _median_data(n=5000):
    """1-D neighbours for the PTR median: the smallest point is moved far to the right.

    n must be large for the propose-test-release test to pass (eta ~ 1/n); a released value
    and "nothing released" are both outcomes of the audit.
    """
    rng = np.random.default_rng(0)
    X0 = rng.normal(size=(n, 1))
    X1 = X0.copy()
    X1[np.argmin(X0[:, 0])] = 50.0
    return (X0, None), (X1, None)


def _median(eps, delta):
    from dpreg import PrivateProjectionMedian

    return lambda s: PrivateProjectionMedian(epsilon=eps, delta=delta, norm="linf", random_state=s)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ESTIMATOR_CASES))
def test_audit_estimator_long(name):
    factory, data, attr = ESTIMATOR_CASES[name]
    d0, d1 = data()
    for eps in (1.0, 4.0):
        bound = _estimator_audit(factory(eps), attr, d0, d1, n=AUDIT_RUNS_LONG[name])
        assert bound <= eps
        if eps > 1:  # power: at eps = 4 every estimator's neighbours are told apart
            assert bound > 0.1 * eps


@pytest.mark.slow
def test_audit_projection_median_long():
    """Each fit takes most of a second (the PTR safety margin), so this audit is slow-only."""
    eps, delta = 2.0, 1e-3
    d0, d1 = _median_data()
    bound = _estimator_audit(
        _median(eps, delta), lambda e: float(e.location_[0]), d0, d1, n=150, delta=delta
    )
    assert bound <= eps
