"""Adversarial searches against every local-sensitivity bound of PrivateProjectionMedian.

Each bound is computed on one sorted row (one projected direction). The search builds data
sets D'' within k changes of D (and a further neighbour D''') by random replacement from a pool
of adversarial values (far outliers, existing points, points near the median and MAD-interval
ends) plus greedy hill climbing, on skewed (exponential, log-normal), symmetric and tied data.
"""

import zlib

import numpy as np
import pytest

from dpreg.location import _sensitivity as sens


def _sorted(x):
    return np.sort(np.asarray(x, float))[None, :]


def med(x):
    return sens.shifted_median(_sorted(x), 0)[0]


def mad(x):
    return sens.location_scale(_sorted(x), "mad")[1][0]


def iqr(x):
    return sens.location_scale(_sorted(x), "iqr")[1][0]


SCALES = {"mad": mad, "iqr": iqr}


def _data(kind, n, rng):
    if kind == "exp":
        return rng.exponential(size=n)
    if kind == "lognormal":
        return rng.lognormal(sigma=1.2, size=n)
    if kind == "normal":
        return rng.standard_normal(n)
    if kind == "ties":
        return np.round(rng.standard_normal(n) * 2) / 2
    if kind == "two_clusters":  # very different spacings either side of the median
        return np.concatenate([rng.uniform(0, 0.1, n // 2 + 1), rng.uniform(5, 9, n - n // 2 - 1)])
    raise ValueError(kind)


def _pool(x, rng):
    s = np.sort(x)
    m = med(x)
    sc = max(mad(x), 1e-3)
    return np.concatenate(
        [
            [s[0] - 100, s[-1] + 100, m, m - sc, m + sc],
            s,
            0.5 * (s[1:] + s[:-1]),
            rng.uniform(s[0] - 1, s[-1] + 1, 10),
        ]
    )


def _perturb(x, k, pool, rng):
    y = x.copy()
    if k:
        idx = rng.choice(x.size, size=k, replace=False)
        y[idx] = rng.choice(pool, size=k)
    return y


def _window_attacks(s, k):
    """All ways of moving the k interior points of a window near the median to the extremes."""
    n = s.size
    a = (n + 1) // 2
    out = []
    for p in range(max(a - k - 1, 1), a + 1):  # 1-based window start
        inner = np.arange(p, min(p + k, n))  # 0-based indices of x_(p+1)..x_(p+k)
        for below in range(inner.size + 1):
            y = s.copy()
            y[inner[:below]] = s[0] - 50
            y[inner[below:]] = s[-1] + 50
            out.append(y)
    return out


def _search(x, k, objective, rng, n_random=120, n_climb=40):
    """Largest ``objective(D'')`` found over D'' in B_k(D) (random + window + hill climb).

    Candidates are kept aligned with the *sorted* x so that "changed rows" are positions.
    """
    s = np.sort(x)
    pool = _pool(x, rng)
    best_val, best = -np.inf, s
    cands = [_perturb(s, k, pool, rng) for _ in range(n_random)]
    cands += _window_attacks(s, k) if k else []
    for y in cands:
        v = objective(y)
        if v > best_val:
            best_val, best = v, y
    if k == 0:
        return best_val, best
    for _ in range(n_climb):  # greedy: re-place one row, staying within k changes
        y = best.copy()
        changed = np.flatnonzero(y != s)
        i = rng.choice(changed) if changed.size >= k else rng.integers(s.size)
        y[i] = rng.choice(pool)
        if np.count_nonzero(y != s) > k:
            continue
        v = objective(y)
        if v > best_val:
            best_val, best = v, y
    return best_val, best


CASES = [
    (kind, n, k)
    for kind in ("exp", "lognormal", "normal", "ties", "two_clusters")
    for n, k in ((9, 1), (10, 2), (25, 3), (40, 0))
]
FAST = [c for c in CASES if c[0] in ("exp", "two_clusters") and c[1] in (9, 25)]
SLOW = [pytest.param(*c, marks=pytest.mark.slow) for c in CASES if c not in FAST]
ALL = FAST + SLOW


@pytest.mark.parametrize("kind,n,k", ALL)
def test_median_interval_contains_every_k_distant_median(kind, n, k):
    rng = np.random.default_rng(zlib.crc32(repr((kind, n, k)).encode()))
    x = _data(kind, n, rng)
    L, R = sens.median_interval(_sorted(x), k)
    hi, _ = _search(x, k, med, rng)
    lo, _ = _search(x, k, lambda y: -med(y), rng)
    assert hi <= R[0] + 1e-12 and -lo >= L[0] - 1e-12
    # the interval is attained: push k points to one side
    s = np.sort(x)
    assert med(np.concatenate([s[k:], np.full(k, s[-1] + 99)])) == pytest.approx(R[0])


@pytest.mark.parametrize("kind,n,k", ALL)
def test_median_movement_bound(kind, n, k):
    """S_mu(k) bounds |med(D''') - med(D'')|, D'' in B_k(D), D''' a neighbour of D''."""
    rng = np.random.default_rng(1 + zlib.crc32(repr((kind, n, k)).encode()))
    x = _data(kind, n, rng)
    bound = sens.median_movement(_sorted(x), k)[0]
    pool = _pool(x, rng)

    def one_step(y):
        best = 0.0
        for i in range(y.size):
            for v in (y.min() - 100, y.max() + 100):
                z = y.copy()
                z[i] = v
                best = max(best, abs(med(z) - med(y)))
        return best

    found, _ = _search(x, k, one_step, rng, n_random=60, n_climb=20)
    del pool
    assert found <= bound + 1e-12
    if n % 2 == 1 and np.isfinite(bound):
        # for odd n the bound is the exact supremum: the window attack reaches it
        assert found >= bound * (1 - 1e-9)


def test_reference_smaller_spacing_slip_is_unsound_but_ours_holds():
    """The smaller of the two k-spacings (a public reference implementation) is broken."""
    x = np.array([0.0, 0.01, 0.02, 0.03, 0.04, 5.0, 6.0, 7.0, 8.0])  # median 0.04, skewed
    s = np.sort(x)
    q = (x.size + 1) // 2 - 1
    k = 1
    slip = min(s[q + k] - s[q], s[q] - s[q - k])
    y = x.copy()
    y[0] = 100.0  # one replacement below the median, added far above
    moved = abs(med(y) - med(x))
    assert moved > slip  # the reference bound is violated by a single replacement
    assert moved <= sens.median_movement(_sorted(x), 0)[0] + 1e-12


@pytest.mark.parametrize("scale", ["mad", "iqr"])
@pytest.mark.parametrize("kind,n,k", ALL)
def test_scale_bounds_contain_every_k_distant_scale(scale, kind, n, k):
    rng = np.random.default_rng(2 + zlib.crc32(repr((scale, kind, n, k)).encode()))
    x = _data(kind, n, rng)
    f = SCALES[scale]
    lower, upper = sens.scale_bounds(_sorted(x), k, scale)
    hi, _ = _search(x, k, f, rng)
    lo, _ = _search(x, k, lambda y: -f(y), rng)
    assert hi <= upper[0] + 1e-12
    assert -lo >= lower[0] - 1e-12
    assert lower[0] <= f(x) <= upper[0]
    if k == 0:
        assert lower[0] == pytest.approx(f(x)) and upper[0] == pytest.approx(f(x))


@pytest.mark.parametrize("scale", ["mad", "iqr"])
@pytest.mark.parametrize("kind,n,k", ALL)
def test_scale_movement_bound(scale, kind, n, k):
    rng = np.random.default_rng(3 + zlib.crc32(repr((scale, kind, n, k)).encode()))
    x = _data(kind, n, rng)
    f = SCALES[scale]
    bound = sens.scale_movement(_sorted(x), k, scale)[0]
    pool = _pool(x, rng)

    def one_step(y):
        best = 0.0
        for _ in range(10):
            z = y.copy()
            z[rng.integers(y.size)] = rng.choice(pool)
            best = max(best, abs(f(z) - f(y)))
        return best

    found, _ = _search(x, k, one_step, rng, n_random=60, n_climb=20)
    assert found <= bound + 1e-12


def test_scale_bounds_are_reasonably_tight_on_large_samples():
    """Not just sound: on n = 20,001 normal points the k = 3 bounds are within a few spacings."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(20001)
    lower, upper = sens.scale_bounds(_sorted(x), 3, "mad")
    assert upper[0] - lower[0] < 30 / x.size


@pytest.mark.parametrize("kind", ["exp", "normal", "ties", "two_clusters"])
def test_gap_sup_is_exact(kind):
    """G_j(r) is the exact sup of the r-th gap over B_j: random search never exceeds it and
    the window construction attains it."""
    rng = np.random.default_rng(11)
    x = _data(kind, 15, rng)
    for j in (0, 1, 2):
        for r in (5, 8, 10):
            g = sens.gap_sup(_sorted(x), r, j)[0]

            def gap(y, r=r):
                s = np.sort(y)
                return s[r] - s[r - 1]

            found, _ = _search(x, j, gap, rng, n_random=200, n_climb=0)
            assert found <= g + 1e-12
            # construction: window [p, p+j+1] maximal, move its j inner points out
            s = np.sort(x)
            ps = np.arange(r - j, r + 1)
            p = ps[np.argmax(s[ps + j] - s[ps - 1])]
            y = s.copy()
            inner = np.arange(p, p + j)  # 0-based x_(p+1)..x_(p+j)
            y[inner[: r - p]] = s[0] - 1
            y[inner[r - p :]] = s[-1] + 1
            assert gap(y) == pytest.approx(g)


@pytest.mark.parametrize("r", [1, 4, 10, 19, 20])
def test_deviation_stat_matches_brute_force(r):
    rng = np.random.default_rng(r)
    X = rng.standard_normal((6, 20))
    S = np.sort(X, axis=1)
    m = rng.standard_normal(6)
    brute = np.sort(np.abs(X - m[:, None]), axis=1)[:, r - 1]
    np.testing.assert_allclose(sens.deviation_stat(S, r, m), brute)


@pytest.mark.parametrize("r", [1, 11, 20])
def test_centred_deviation_extremes_match_dense_grid(r):
    rng = np.random.default_rng(100 + r)
    X = rng.exponential(size=(5, 21))
    S = np.sort(X, axis=1)
    L = np.median(X, axis=1) - 0.2
    R = L + 0.35
    grid = np.linspace(0, 1, 801)
    vals = np.array([sens.deviation_stat(S, r, L + t * (R - L)) for t in grid])  # (grid, rows)
    lo = sens.min_centred_deviation(S, r, L, R)
    hi = sens.max_centred_deviation(S, r, L, R)
    assert np.all(lo <= vals.min(axis=0) + 1e-12)
    assert np.all(hi >= vals.max(axis=0) - 1e-12)
    np.testing.assert_allclose(lo, vals.min(axis=0), atol=5e-3)
    np.testing.assert_allclose(hi, vals.max(axis=0), atol=5e-3)


def _neighbours(x, rng, count):
    pool = _pool(x, rng)
    return [_perturb(x, 1, pool, rng) for _ in range(count)]


@pytest.mark.parametrize("scale", ["mad", "iqr"])
@pytest.mark.parametrize(
    "kind", ["exp", pytest.param("normal", marks=pytest.mark.slow), "two_clusters"]
)
def test_certificate_blocks_are_monotone(scale, kind):
    """U_{k-1}(D') <= U_k(D) and B_{k-1}(D') >= B_k(D) for neighbours (sensitivity-1 margin)."""
    rng = np.random.default_rng(5)
    x = _data(kind, 31, rng)
    S = _sorted(x)
    for y in _neighbours(x, rng, 12):
        Sy = _sorted(y)
        for k in (1, 2, 3):
            lo, up = sens.scale_bounds(S, k, scale)
            lo2, up2 = sens.scale_bounds(Sy, k - 1, scale)
            assert up2[0] <= up[0] + 1e-12 and lo2[0] >= lo[0] - 1e-12
            L, R = sens.median_interval(S, k)
            L2, R2 = sens.median_interval(Sy, k - 1)
            assert L2[0] >= L[0] and R2[0] <= R[0]
            assert sens.median_movement(Sy, k - 1)[0] <= sens.median_movement(S, k)[0] + 1e-12
            assert (
                sens.scale_movement(Sy, k - 1, scale)[0]
                <= sens.scale_movement(S, k, scale)[0] + 1e-12
            )
            for tau in (0.5, 2.0):
                assert sens.outlyingness_sensitivity(
                    Sy, k - 1, tau, scale
                ) <= sens.outlyingness_sensitivity(S, k, tau, scale) * (1 + 1e-12)


def _outlyingness(z, U, x_rows):
    S = np.sort(U @ x_rows.T, axis=1)
    mu, sig = sens.location_scale(S, "mad")
    return np.max(np.abs(z @ U.T - mu) / sig, axis=-1)


def test_outlyingness_closeness_on_tau_region():
    """|O_D''(x) - O_D'''(x)| <= F_j(D) whenever min(O_D'', O_D''') <= tau (2-D data)."""
    rng = np.random.default_rng(9)
    X = rng.standard_normal((41, 2)) * [1.0, 3.0]
    X[:, 0] = np.exp(X[:, 0])  # skewed first coordinate
    U = rng.standard_normal((7, 2))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    S = np.sort(U @ X.T, axis=1)
    tau, j = 1.5, 1
    F = sens.outlyingness_sensitivity(S, j, tau, "mad")
    worst = 0.0
    zs = rng.standard_normal((200, 2)) * 2
    for _ in range(60):
        Y = X.copy()
        idx = rng.choice(len(X), size=j + 1, replace=False)
        Y[idx[:j]] = rng.standard_normal((j, 2)) * rng.choice([0.1, 1, 50])
        Z = Y.copy()
        Z[idx[j]] = rng.standard_normal(2) * rng.choice([0.1, 1, 50])
        o1, o2 = _outlyingness(zs, U, Y), _outlyingness(zs, U, Z)
        inside = np.minimum(o1, o2) <= tau
        if inside.any():
            worst = max(worst, float(np.max(np.abs(o1 - o2)[inside])))
    assert worst <= F
    assert worst > 0.05 * F  # the search is not vacuous


def test_min_outlyingness_bound_covers_k_distant_data():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((61, 2))
    U = rng.standard_normal((9, 2))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    S = np.sort(U @ X.T, axis=1)
    from dpreg.location._sampler import projection_median_lp

    for k in (1, 2):
        T, _ = sens.min_outlyingness_bound(U, S, k, "mad")
        for _ in range(40):
            Y = X.copy()
            idx = rng.choice(len(X), size=k, replace=False)
            Y[idx] = rng.standard_normal((k, 2)) * rng.choice([1, 30])
            Sy = np.sort(U @ Y.T, axis=1)
            mu, sig = sens.location_scale(Sy, "mad")
            _, o = projection_median_lp(U, mu, sig)
            assert o <= T + 1e-9


def test_lp_point_is_far_within_lp_slack_at_every_scale():
    """The safety-margin ladder assumes the LP's point is within LP_SLACK (1e-6, O units) of
    the optimum. Check against a tight-tolerance solve over scales 1e-12..1e18 (measured:
    at most ~2e-15)."""
    from scipy import optimize

    from dpreg.location import _lp
    from dpreg.location.projection_median import LP_SLACK, make_directions

    rng = np.random.default_rng(1)
    for trial in range(12):
        d, n = int(rng.integers(1, 5)), int(rng.integers(200, 1500))
        X = rng.standard_normal((n, d)) * [1e-12, 1.0, 1e15, 1e18][trial % 4]
        if trial % 3 == 0:
            X[: n // 4] += 5 * X.std()
        U = make_directions("l2", d, 60, rng)
        S = np.sort(U @ X.T, axis=1)
        k = int(rng.integers(1, 15))
        L, R = sens.median_interval(S, k)
        lower, _ = sens.scale_bounds(S, k)
        mid, half = (L + R) / 2, (R - L) / 2
        v = _lp.minimax_value(U, _lp.minimax_point(U, mid, half, lower), mid, half, lower)
        x0, s = _lp.centring_frame(U, mid, lower)
        A = np.block([[U, -(lower / s)[:, None]], [-U, -(lower / s)[:, None]]])
        b = np.concatenate([(mid - U @ x0 - half) / s, -(mid - U @ x0 + half) / s])
        tight = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
        cost = np.r_[np.zeros(d), 1.0]
        res = optimize.linprog(cost, A_ub=A, b_ub=b, bounds=[(None, None)] * (d + 1), options=tight)
        assert res.status == 0
        assert v - res.fun <= LP_SLACK / 100
