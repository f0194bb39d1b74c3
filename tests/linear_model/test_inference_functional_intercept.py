"""The functional bootstrap world's design row and truth at small n * epsilon (issue 15).

At n = 1e3, epsilon = 0.25 the intercept's bootstrap sd was 1.12-1.17x its real sd and its
95 % intervals covered 0.983-0.989: the world used the released intercept row ``s~`` (noise
sd ~93 against a true row of ~18) and the released ``b^`` (``E|b^|^2 = |beta|^2 + tr Var``)
as its truth, so the release noise entered twice. Session 8 de-noised both (docs/inference.md,
"The world's design and truth at small n * epsilon"). Session 11: the released intercept's
error contains ``-(s~ - s)^T beta_s / n``, a shift predictable from the released row, so the
interval is built around the de-noised intercept (the intercept equation solved with the
posterior mean ``k^2 s~`` of the row) and its replicates hold that row fixed ("The intercept
given the released row").
"""

import warnings

import numpy as np
import pytest
from _functional_cells import cell_model

from dpreg import BudgetAccountant
from dpreg.linear_model import _inference as inf
from dpreg.linear_model.functional import sufficient_statistics

BETA = np.array([1.0, 2.0, -1.0])


def _data(n, rng):
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, BETA[0] + X @ BETA[1:] + rng.standard_normal(n)


def _stats(n, rng):
    return sufficient_statistics(*_data(n, rng), (-1, 1), (-7, 9))


def _fit(stats_, eps, rng, acc):
    return cell_model(eps, rng, acc).fit_statistics(stats_)


def _former(mp):
    """The world before session 8: raw row, truth b^, the interval around the released b^."""
    mp.setattr(inf, "denoised_intercept_row", lambda ns, _: ns.gram)
    mp.setattr(inf, "denoised_truth", lambda beta, _: beta)
    mp.setattr(inf, "denoised_intercept", lambda ns, beta, m: beta)
    mp.setattr(inf, "conditional_intercept", lambda ns, draws, E, truth, G: draws)


def _bse(model, n_boot, old):
    """Intercept-first bootstrap sds; ``old`` re-runs the former world."""
    ns = model.noisy_statistics_
    seed = inf.release_seed(*inf.released_values(ns))
    if not old:
        return inf.bootstrap(ns, n_boot, random_state=seed)[1].std(axis=0, ddof=1)
    mp = pytest.MonkeyPatch()
    try:
        _former(mp)
        return inf.bootstrap(ns, n_boot, random_state=seed)[1].std(axis=0, ddof=1)
    finally:
        mp.undo()


def test_denoised_row_is_the_posterior_mean():
    """Over releases of one data set (fixed true row s = sum_i x_i; bounds (-1, 1) keep x as
    it is): the world's row is exactly k^2 s~ with k^2 = max(0, 1 - m / |s~|^2). It is much
    closer to s than the raw row (the control, which carries the noise's m: at n * epsilon =
    250 m is ~25x |s|^2), and closer than session 8's k s~."""
    rng, acc = np.random.default_rng(1), BudgetAccountant()
    X, y = _data(1000, rng)
    stats_ = sufficient_statistics(X, y, (-1, 1), (-7, 9))
    s_true = X.sum(axis=0)
    raw, posterior, session8 = [], [], []
    for _ in range(120):
        ns = _fit(stats_, 0.25, rng, acc).noisy_statistics_
        E = inf.noise_draws(ns, 100, rng)[0]
        row = inf.denoised_intercept_row(ns, E)[0, 1:]
        s = ns.gram[0, 1:]
        m = np.mean(np.sum(E[:, 0, 1:] ** 2, axis=1))
        k2 = max(0.0, 1.0 - m / (s @ s))
        np.testing.assert_allclose(row, k2 * s, rtol=1e-12, atol=1e-9)
        raw.append(np.sum((s - s_true) ** 2))
        posterior.append(np.sum((row - s_true) ** 2))
        session8.append(np.sum((np.sqrt(k2) * s - s_true) ** 2))
    assert np.mean(raw) > 10 * np.sum(s_true**2), (np.mean(raw), s_true)
    assert np.mean(posterior) < 0.35 * np.mean(raw), (np.mean(posterior), np.mean(raw))
    assert np.mean(posterior) < np.mean(session8), (np.mean(posterior), np.mean(session8))


def _fits_with_first_equation(n, eps, reps, seed):
    rng, acc = np.random.default_rng(seed), BudgetAccountant()
    X, y = _data(n, rng)
    stats_ = sufficient_statistics(X, y, (-1, 1), (-7, 9))
    return X, [_fit(stats_, eps, rng, acc) for _ in range(reps)]


def test_denoised_intercept_solves_the_intercept_equation_with_the_posterior_row():
    """Where the released solve satisfies its intercept equation (floor not binding there),
    the de-noised intercept is (c~_0 - s^T b^_s) / n with s^ = k^2 s~, in scaled units, and
    the slopes are the released ones; the interval's estimate is it in user units. At n =
    1e4, epsilon = 0.25 the floor rarely binds and k^2 is far from 1 (m ~ 1.7e4 against
    |s|^2 ~ 6.7e3), so the identity is not trivial."""
    _, models = _fits_with_first_equation(10000, 0.25, 20, seed=4)
    checked, shrunk = 0, 0
    for model in models:
        ns = model.noisy_statistics_
        beta = inf._solve(ns, ns.gram, ns.xty)
        if abs(ns.gram[0] @ beta - ns.xty[0]) > 1e-9 * ns.n:
            continue  # the floor moved the intercept equation: the identity does not apply
        checked += 1
        E = inf.noise_draws(ns, 200, np.random.default_rng(0))[0]
        m = inf.row_noise_power(E)
        s = ns.gram[0, 1:]
        k2 = max(0.0, 1.0 - m / (s @ s))
        shrunk += k2 < 0.9
        s_hat = k2 * s
        out = inf.denoised_intercept(ns, beta, m)
        assert out[0] == pytest.approx((ns.xty[0] - s_hat @ beta[1:]) / ns.n, abs=1e-12)
        np.testing.assert_array_equal(out[1:], beta[1:])
        est = inf._draws(model, 200)[1][0]
        np.testing.assert_allclose(est[1:], model.coef_, rtol=1e-12)
    assert checked >= 15 and shrunk >= 10, (checked, shrunk)


def test_denoised_intercept_removes_the_predictable_error():
    """200 releases of one data set at n = 1e3, epsilon = 0.25: the released intercept's error
    is strongly correlated with the released row along the true slopes (the control: about
    -0.6) and the de-noised one is not, and its RMS error is much smaller (measured ~0.78x
    the spread over 1500 data sets)."""
    X, models = _fits_with_first_equation(1000, 0.25, 200, seed=6)
    direction = BETA[1:] / np.linalg.norm(BETA[1:])
    released, denoised, along = [], [], []
    for model in models:
        ns = model.noisy_statistics_
        E = inf.noise_draws(ns, 200, np.random.default_rng(0))[0]
        beta = inf._solve(ns, ns.gram, ns.xty)
        b = inf._to_user_units(inf.denoised_intercept(ns, beta, inf.row_noise_power(E)), ns)[0]
        released.append(model.intercept_ - BETA[0])
        denoised.append(b[0] - BETA[0])
        along.append(ns.gram[0, 1:] @ direction)
    released, denoised = np.array(released), np.array(denoised)
    assert np.corrcoef(released, along)[0, 1] < -0.45
    assert abs(np.corrcoef(denoised, along)[0, 1]) < 0.3
    rms = lambda v: float(np.sqrt(np.mean(np.square(v))))  # noqa: E731
    assert rms(denoised) < 0.85 * rms(released), (rms(denoised), rms(released))


def test_intercept_bootstrap_sd_is_not_inflated_paired():
    """Same 60 releases at n = 1e3, epsilon = 0.25, the same draws: the new world's intercept
    bootstrap sd is at most 0.95x the former one's (measured ~0.91x; 1.117 -> 1.02 against
    the real sd on 3000 data sets), and the slopes' change by less than 6 %."""
    rng, acc = np.random.default_rng(5), BudgetAccountant()
    new, old = [], []
    for _ in range(60):
        model = _fit(_stats(1000, rng), 0.25, rng, acc)
        new.append(_bse(model, 200, old=False))
        old.append(_bse(model, 200, old=True))
    ratio = np.sqrt(np.mean(np.square(new), axis=0) / np.mean(np.square(old), axis=0))
    assert ratio[0] <= 0.95, ratio
    assert np.all(np.abs(ratio[1:] - 1.0) < 0.06), ratio


@pytest.mark.slow
def test_intercept_cell_n_1e3_eps_quarter_in_band():
    """1500 data sets (MC sd 0.0056): the intercept covers in [0.93, 0.97], its mean width is
    at most 0.9x the spread of the released intercepts (the de-noised intercept's own spread
    is ~0.78x; measured 0.81x; since session 12 this holds for the main world's interval, and
    the library's hull with the floor world is held to 1.0x, measured 0.92x), the main world's
    RMS bootstrap sd is within 0.95-1.07x the real sd of the interval's estimate (``bse()``,
    the larger of the two worlds' sds since 91de3fc, is held to 1.35x, measured 1.25x), and
    the coverage does not fall with the released |s~|^2 / m as it did when the interval was
    centred on the released intercept (session 8: 0.987 in the bottom quintile, 0.933 in the
    top; now 0.960 / 0.973). Control: the former world on the same
    releases (RMS bse >= 1.09x the released intercept's sd; it covered 0.983-0.989). About 3
    min on a loaded machine."""
    rng, acc = np.random.default_rng(11), BudgetAccountant()
    est, centre, inside, width, new, old, ratio = [], [], [], [], [], [], []
    main_width, hull_bse = [], []
    for _ in range(1500):
        model = _fit(_stats(1000, rng), 0.25, rng, acc)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ci = model.conf_int(0.05, n_boot=250)
            hull_bse.append(model.bse(n_boot=250))
        ns = model.noisy_statistics_
        centre.append(inf._draws(model, 250)[1][0])
        new.append(inf._draws(model, 250)[1][1].std(axis=0, ddof=1))  # the main world's sd
        main = inf.bias_aware_interval(*inf._draws(model, 250)[1], 0.05)
        main_width.append(main[0, 1] - main[0, 0])
        est.append(np.r_[model.intercept_, model.coef_])
        inside.append((ci[:, 0] <= BETA) & (BETA <= ci[:, 1]))
        width.append(ci[:, 1] - ci[:, 0])
        old.append(_bse(model, 250, old=True))
        E = inf.noise_draws(ns, 250, np.random.default_rng(0))[0]
        ratio.append(ns.gram[0, 1:] @ ns.gram[0, 1:] / inf.row_noise_power(E))
    cov = np.mean(inside, axis=0)
    assert 0.93 <= cov[0] <= 0.97, cov
    assert np.all((cov[1:] >= 0.93) & (cov[1:] <= 0.97)), cov
    lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
    # session 11's interval (the main world alone) is at most 0.9x the released spread;
    # session 12's hull with the floor world (used where a de-noised eigenvalue of G~ is below
    # the floor, ~17 % of these releases) widens it: measured 0.92x, held to 1.0x
    assert np.mean(main_width) <= 0.9 * (hi - lo)[0]
    assert np.mean(width, axis=0)[0] <= 1.0 * (hi - lo)[0]
    rms_new = np.sqrt(np.mean(np.square(new), axis=0))[0]
    assert 0.95 <= rms_new / np.std(centre, axis=0, ddof=1)[0] <= 1.07
    # bse() is the larger of the two worlds' sds where the floor world widens the interval
    # (since 91de3fc, so that +-1.96 bse is not far narrower than conf_int's hull): measured
    # 1.25x the real sd here (0.392 / 0.313), never below the main world's
    rms_hull = np.sqrt(np.mean(np.square(hull_bse), axis=0))[0]
    assert rms_new <= rms_hull <= 1.35 * np.std(centre, axis=0, ddof=1)[0]
    assert np.sqrt(np.mean(np.square(old), axis=0))[0] >= 1.09 * np.std(est, axis=0, ddof=1)[0]
    ratio, cov0 = np.array(ratio), np.array(inside)[:, 0]
    bottom, top = ratio <= np.quantile(ratio, 0.2), ratio >= np.quantile(ratio, 0.8)
    assert abs(cov0[top].mean() - cov0[bottom].mean()) < 0.035, (
        cov0[bottom].mean(),
        cov0[top].mean(),
    )
