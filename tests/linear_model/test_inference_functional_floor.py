"""The functional intervals where the PSD floor binds in the truth (issue 15, session 12).

On a design that is not centred within its public bounds (x1 ~ U[-0.3, 1], bounds (-1, 1))
the smallest eigenvalue of the scaled ``Z^T Z`` (~123 at n = 1e3) is below the solve's floor
(241 at epsilon = 0.25), so the release is shrunk along that direction; the main bootstrap
world (design floored at the same value, truth the shrunk release) cannot show it and the
intervals of the intercept and x1 covered ~0.85. ``_inference.floor_bootstrap`` adds a world
with de-noised eigenvalues and a de-shrunk estimate whose replicates apply the same rule
(docs/inference.md, "The floor on non-centred designs (session 12)").
"""

import numpy as np
import pytest
from _functional_cells import cell_model

from dpreg import BudgetAccountant
from dpreg.linear_model import _inference as inf
from dpreg.linear_model.functional import solve_normal_equations

BETA = np.array([1.0, 2.0, -1.0])


def _data(n, rng, x1_low):
    X = rng.uniform(-1, 1, size=(n, 2))
    X[:, 0] = x1_low + (1.0 - x1_low) * (X[:, 0] + 1.0) / 2.0
    return X, BETA[0] + X @ BETA[1:] + rng.standard_normal(n)


def _fit(X, y, eps, rng, acc):
    return cell_model(eps, rng, acc).fit(X, y)


def _intervals(model, n_boot=200):
    """(old, new): the main world's bias-aware interval alone (before session 12, the
    control) and the library's interval, from the same draws."""
    ns = model.noisy_statistics_
    seed = inf.release_seed(*inf.released_values(ns))
    main, floor = inf.bootstrap_with_floor(ns, n_boot, random_state=seed)
    return inf.bias_aware_interval(*main, 0.05), inf.interval((main, floor), 0.05), floor


def test_deconvolved_solve_undoes_the_floor_on_noiseless_statistics():
    """With no noise (shift 0) the de-shrunk solve is OLS where the floor binds in the truth;
    the estimator's floored solve (control) is not."""
    rng = np.random.default_rng(0)
    X, y = _data(1000, rng, -0.3)
    Z = np.column_stack([np.ones(1000), X])
    G, c = Z.T @ Z, Z.T @ ((y - 1.0) / 8.0)  # scaled: bounds_y (-7, 9)
    lam = 241.0
    assert np.linalg.eigvalsh(G)[0] < lam  # the floor binds in the truth
    ols = np.linalg.solve(G, c)
    floored = solve_normal_equations(G, c, "psd", lam, True)
    assert np.max(np.abs(floored - ols)) > 0.05  # control: the release's solve is shrunk
    desh = inf.deconvolved_solve(G, c, lam, np.zeros(3), 10.0)
    np.testing.assert_allclose(desh, ols, rtol=1e-10)


def test_eigenvalue_shift_de_noises_the_smallest_eigenvalue():
    """Over releases of one data set the de-noised smallest eigenvalue is centred near the
    true one (116 here: 112, standard error 10), the raw one (control) 35 below it."""
    rng, acc = np.random.default_rng(1), BudgetAccountant()
    X, y = _data(1000, rng, -0.3)
    Z = np.column_stack([np.ones(1000), X])  # bounds (-1, 1): the scaled design is X
    true = np.linalg.eigvalsh(Z.T @ Z)[0]
    raw, den = [], []
    for _ in range(60):
        ns = _fit(X, y, 0.25, rng, acc).noisy_statistics_
        E = inf.noise_draws(ns, 200, rng)[0]
        w = np.linalg.eigvalsh(ns.gram)
        raw.append(w[0])
        den.append((w - inf.eigenvalue_shift(ns.gram, E))[0])
    assert np.mean(raw) < true - 20.0  # control
    assert abs(np.mean(den) - true) < 20.0


def test_floor_interval_covers_what_the_main_world_missed():
    """200 data sets of the non-centred design at n = 1e3, epsilon = 0.25: the main world's
    interval (control) misses the intercept and x1 (~0.85 measured), the library's covers;
    its interval always contains the main one (a hull)."""
    rng, acc = np.random.default_rng(1), BudgetAccountant()
    old, new = [], []
    for _ in range(200):
        X, y = _data(1000, rng, -0.3)
        o, n_, _ = _intervals(_fit(X, y, 0.25, rng, acc))
        assert np.all(n_[:, 0] <= o[:, 0]) and np.all(o[:, 1] <= n_[:, 1])
        old.append((o[:, 0] <= BETA) & (BETA <= o[:, 1]))
        new.append((n_[:, 0] <= BETA) & (BETA <= n_[:, 1]))
    old, new = np.mean(old, axis=0), np.mean(new, axis=0)
    assert np.all(old[:2] <= 0.90), old  # the control fails
    assert np.all(new >= 0.91), new


def test_floor_world_is_not_used_where_the_floor_cannot_bind():
    """Centred design at n = 1e4: no de-noised eigenvalue is near the floor, so the interval
    is the main world's, bit for bit (conf_int too)."""
    rng, acc = np.random.default_rng(2), BudgetAccountant()
    X, y = _data(10_000, rng, -1.0)
    model = _fit(X, y, 0.25, rng, acc)
    old, new, floor = _intervals(model)
    assert floor is None
    np.testing.assert_array_equal(old, new)
    ns = model.noisy_statistics_
    est, draws = inf.bootstrap(ns, 1000, random_state=inf.release_seed(*inf.released_values(ns)))
    np.testing.assert_array_equal(model.conf_int(), inf.bias_aware_interval(est, draws, 0.05))


@pytest.mark.filterwarnings("ignore:The privacy noise is large")
def test_summary_shows_the_hull_and_says_so():
    """summary()'s interval columns are conf_int's (the hull) and its header says the floor
    may bind; a release where it cannot bind (n = 1e4) has no such line."""
    rng, acc = np.random.default_rng(3), BudgetAccountant()
    model = _fit(*_data(1000, rng, -0.3), 0.25, rng, acc)
    _, hull, floor = _intervals(model, n_boot=1000)
    assert floor is not None
    table = model.summary()
    np.testing.assert_array_equal(table.as_dataframe().iloc[:, 2:4].to_numpy(), hull)
    np.testing.assert_array_equal(model.conf_int(), hull)
    assert "PSD floor" in table.info
    far = _fit(*_data(10_000, rng, -1.0), 0.25, rng, acc)
    assert "PSD floor" not in far.summary().info


@pytest.mark.filterwarnings("ignore:The privacy noise is large")
def test_bse_is_the_larger_world_sd_where_the_floor_may_bind():
    """Where the floor world is used, bse() (and summary's std err) is the larger of the two
    worlds' replicate sds per parameter, so +-1.96 bse is not falsely narrow next to the hull;
    control: there the main world's sd alone (the former bse) is smaller for some parameter.
    Where the floor cannot bind (n = 1e4) bse is the main world's sd, bit for bit."""
    rng, acc = np.random.default_rng(3), BudgetAccountant()
    model = _fit(*_data(1000, rng, -0.3), 0.25, rng, acc)
    ns = model.noisy_statistics_
    seed = inf.release_seed(*inf.released_values(ns))
    (_, main), floor = inf.bootstrap_with_floor(ns, 1000, random_state=seed)
    assert floor is not None
    sd_main, sd_floor = main.std(axis=0, ddof=1), floor[1].std(axis=0, ddof=1)
    assert np.any(sd_floor > sd_main)  # control: the former bse was narrower there
    se = model.bse()
    np.testing.assert_array_equal(se, np.maximum(sd_main, sd_floor))
    np.testing.assert_array_equal(model.summary().as_dataframe()["std err"].to_numpy(), se)
    far = _fit(*_data(10_000, rng, -1.0), 0.25, rng, acc)
    ns = far.noisy_statistics_
    _, draws = inf.bootstrap(ns, 1000, random_state=inf.release_seed(*inf.released_values(ns)))
    np.testing.assert_array_equal(far.bse(), draws.std(axis=0, ddof=1))
