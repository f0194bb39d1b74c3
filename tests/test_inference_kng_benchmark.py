"""The KNG cells of benchmarks.inference: chunked runs and the asymptotic oracle (issue #15)."""

import numpy as np
import pandas as pd
import pytest

from benchmarks import _inference_cells as cells_mod
from dpreg.noise.balls import LinfBall


def test_chunks_concatenate_to_the_whole_run():
    """Data set i has its own seed, so chunks of a run give the whole run's arrays.

    n = 1000 at epsilon = 1: the released check of the linearisation passes there, so the
    intervals are the fast linearised ones (at n = 200 the default simulates: 40+ s)."""
    kw = dict(n_boot=20, seed=7, eps_grid=[1.0], full_fits=False)
    whole = cells_mod.kng_cells(1000, 3, **kw)
    chunks = [cells_mod.kng_cells(1000, 1, start=i, **kw) for i in range(3)]
    merged = cells_mod.concat_cells(chunks)
    for j in range(3):
        np.testing.assert_array_equal(merged[1.0][j], whole[1.0][j])
    assert merged[1.0][0].shape == (3, 3) and merged[1.0][2].size == 0


@pytest.mark.parametrize("n, scale", [(1000, 0.15), (100_000, 0.6)])
def test_asymptotic_oracle_has_the_linear_law_variance(n, scale):
    """Var of coordinate j: s^2 (g_j / 4 + E r^2 / 3) / g_j^2 with g = n (1, 1/3, 1/3),
    s^2 = 2 pi, r ~ Gamma(4, 1 / scale) (E r^2 = 20 / scale^2), U uniform in the cube.
    Control: the same formula without the KNG term is far off at n * scale = 150, so the
    check can tell whether V is in the draws."""
    draws = cells_mod.kng_asymptotic(n, LinfBall(3), scale, 200_000, np.random.default_rng(0))
    g = n * np.array([1.0, 1 / 3, 1 / 3])
    var_v = 20.0 / scale**2 / 3.0
    expected = 2 * np.pi * (g / 4 + var_v) / g**2
    np.testing.assert_allclose(draws.var(axis=0), expected, rtol=0.02)
    assert np.all(np.abs(draws.mean(axis=0) - cells_mod.KNG_BETA) < 4 * np.sqrt(expected / 2e5))
    if n * scale < 1000:
        assert np.all(draws.var(axis=0) > 1.5 * 2 * np.pi / (4 * g))


def test_asymptotic_oracle_with_a_correlated_design_gram():
    """``gram=G``: Cov = s^2 G^-1 (G / 4 + E r^2 / 3 I) G^-1 (the K-norm noise is isotropic
    in the cube), for the Gram of x1 ~ U[-0.3, 1] (benchmarks/_inference_robust.py), whose
    intercept and slope are correlated. Control: the diagonal default's law is far off."""
    from benchmarks._inference_robust import POP_GRAM  # noqa: PLC0415

    n, scale = 1000, 0.15
    G = n * POP_GRAM
    rng = np.random.default_rng(0)
    draws = cells_mod.kng_asymptotic(n, LinfBall(3), scale, 200_000, rng, gram=G)
    Gi = np.linalg.inv(G)
    expected = 2 * np.pi * Gi @ (G / 4 + 20.0 / scale**2 / 3.0 * np.eye(3)) @ Gi
    cov = np.cov(draws.T)
    np.testing.assert_allclose(np.diag(cov), np.diag(expected), rtol=0.02)
    corr = cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1])
    assert abs(corr - expected[0, 1] / np.sqrt(expected[0, 0] * expected[1, 1])) < 0.01
    assert corr < -0.5
    default = cells_mod.kng_asymptotic(n, LinfBall(3), scale, 200_000, rng)
    assert default.var(axis=0)[1] < 0.5 * cov[1, 1]


def test_shifted_x1_maps_the_stream_onto_the_shifted_design():
    X = np.random.default_rng(1).uniform(-1.0, 1.0, size=(100_000, 2))
    same = cells_mod.shifted_x1(X.copy(), -1.0)
    np.testing.assert_array_equal(same, X)
    Y = cells_mod.shifted_x1(X.copy(), -0.3)
    np.testing.assert_array_equal(Y[:, 1], X[:, 1])
    assert -0.3 <= Y[:, 0].min() and Y[:, 0].max() <= 1.0
    assert abs(Y[:, 0].mean() - 0.35) < 0.01 and abs(Y[:, 0].var() - 1.3**2 / 12) < 0.005


@pytest.mark.slow  # ~2.5 min on a loaded 2-core machine; the two tests above are the short form
def test_widths_match_the_asymptotic_oracle_where_the_noise_dominates(monkeypatch):
    """n = 1e4, epsilon = 0.25 (0.6 to the fit, 0.4 to the curvature): the KNG noise is more
    than half the estimator's variance. The mean interval width is close to the width of the
    asymptotic law of the released estimator (no Monte Carlo noise in that oracle). Control:
    a bootstrap that forgets V (the privacy noise) gives clearly narrower slope intervals
    (0.53-0.62 of the real ones when written), so the check can fail."""
    from dpreg.linear_model import _inference_quantile as inf

    def ratio():
        cells = cells_mod.kng_cells(10_000, 6, 400, seed=21, eps_grid=[0.25], full_fits=False)
        _, ci, _, (ball, scale) = cells[0.25]
        draws = cells_mod.kng_asymptotic(10_000, ball, scale, 100_000, np.random.default_rng(1))
        lo, hi = np.quantile(draws, [0.025, 0.975], axis=0)
        return (ci[:, :, 1] - ci[:, :, 0]).mean(axis=0) / (hi - lo)

    real = ratio()
    assert np.all((real > 0.85) & (real < 1.4)), real
    bootstrap = inf.bootstrap

    def no_v(estimator, n_boot=1000, random_state=0):
        fit = estimator.kng_release_
        old, fit.scale = fit.scale, 1e12  # V* ~ 0 in the bootstrap world only
        try:
            return bootstrap(estimator, n_boot, random_state)
        finally:
            fit.scale = old

    monkeypatch.setattr(inf, "bootstrap", no_v)
    # slopes: V is ~60% of their variance (about a third of the intercept's, G_00 = n)
    assert np.all(ratio()[1:] < 0.8 * real[1:])


def test_merge_joins_epsilons_from_several_folders_and_refuses_a_repeat(tmp_path):
    """A data set's epsilons may come from two runs (``0.25,1`` and ``4``); the same data set
    and epsilon in two folders is refused, as it would be counted twice."""
    import pickle

    from benchmarks._inference_kng_chunks import _load

    def write(folder, i, eps_list):
        (tmp_path / folder / "100").mkdir(parents=True, exist_ok=True)
        cells = {e: (np.full((1, 3), i), np.zeros((1, 3, 2)), np.empty(0), None) for e in eps_list}
        with open(tmp_path / folder / "100" / f"{i:04d}.pkl", "wb") as fh:
            pickle.dump(cells, fh)

    for i in range(3):
        write("a", i, [0.25, 1.0])
    for i in range(2):
        write("b", i, [4.0])
    by_eps = _load([tmp_path / "a", tmp_path / "b"], 100)
    assert {e: sorted(v) for e, v in by_eps.items()} == {
        0.25: [0, 1, 2],
        1.0: [0, 1, 2],
        4.0: [0, 1],
    }
    assert by_eps[4.0][1][4.0][0][0, 0] == 1
    write("c", 1, [1.0])
    with pytest.raises(SystemExit, match="data set 0001 twice"):
        _load([tmp_path / "a", tmp_path / "c"], 100)


def test_replay_and_estimate_only_data_sets_follow_the_coverage_stream():
    """``kng_estimates(curvature=True)`` replays ``kng_cells``' estimates and whole-epsilon
    fits without intervals (``conf_int`` draws nothing from the data set's stream). Without
    the curvature release (the estimate-only data sets) the first fit of a data set is still
    ``kng_cells``' first fit; control: the whole-epsilon fit is then another draw, since
    ``release_curvature`` takes draws from the stream before it."""
    kw = dict(seed=7, eps_grid=[1.0, 4.0])
    cells = cells_mod.kng_cells(1000, 2, 20, full_fits=True, **kw)
    replay = cells_mod.kng_estimates(1000, 2, curvature=True, **kw)
    for eps in kw["eps_grid"]:
        np.testing.assert_array_equal(replay[eps][0], cells[eps][0])
        np.testing.assert_array_equal(replay[eps][1], cells[eps][2])
    own = cells_mod.kng_estimates(1000, 1, **kw)
    np.testing.assert_array_equal(own[1.0][0][0], cells[1.0][0][0])
    assert not np.array_equal(own[1.0][1][0], cells[1.0][2][0])


def test_pooled_oracle_without_extra_data_sets_is_the_committed_one():
    """``_inference_kng_oracle.rescore`` with no estimate-only data sets keeps every oracle
    width and ratio; with extra data sets it is the spread of the pooled estimates (and
    rescoring that table again changes nothing), and a replay that does not reproduce the
    committed oracle is refused (control)."""
    from benchmarks import _inference_kng_oracle as oracle_mod
    from benchmarks import inference as inf

    rng = np.random.default_rng(3)
    est, full = rng.standard_normal((50, 3)), 0.5 * rng.standard_normal((50, 3))
    base = [
        dict(n=1000, epsilon=1.0, param=p, reps=50, coverage=0.95, mean_width=4.0)
        for p in cells_mod.KNG_NAMES
    ]
    table = pd.DataFrame(inf.kng_pooled_oracles(base, est, full))
    replay = {1000: {1.0: (est, full)}}
    same, report = oracle_mod.rescore(table, replay, {1000: None}, rng)
    pd.testing.assert_frame_equal(same, table)
    assert report.old_oracle.tolist() == report.new_oracle.tolist()
    more = (rng.standard_normal((30, 3)), rng.standard_normal((30, 3)))
    pooled, _ = oracle_mod.rescore(table, replay, {1000: {1.0: more}}, rng)
    np.testing.assert_allclose(pooled.oracle_width, oracle_mod.spread(np.vstack([est, more[0]])))
    np.testing.assert_allclose(
        pooled.oracle_width_full, oracle_mod.spread(np.vstack([full, more[1]]))
    )
    np.testing.assert_allclose(pooled.width_ratio, 4.0 / pooled.oracle_width)
    assert (pooled.oracle_reps == 80).all()
    again, _ = oracle_mod.rescore(pooled, replay, {1000: {1.0: more}}, rng)
    pd.testing.assert_frame_equal(again, pooled)  # a rescored table rescores to itself
    with pytest.raises(SystemExit, match="replayed oracle_width"):
        oracle_mod.rescore(table, {1000: {1.0: (1.001 * est, full)}}, {1000: None}, rng)


def test_kng_score_pools_extra_estimates_into_both_simulated_oracles():
    """``kng_score(extra=...)`` (``run_kng``'s path): the simulated oracles are the spreads of
    the cell's estimates stacked with the extra ones; the asymptotic columns do not change.
    Control: without ``extra`` the oracle is the cell's alone, and it differs."""
    from benchmarks import _inference_kng_oracle as oracle_mod
    from benchmarks import inference as inf

    rng = np.random.default_rng(5)
    est, full = rng.standard_normal((40, 3)), rng.standard_normal((40, 3))
    ci = np.stack([est - 2.0, est + 2.0], axis=2)
    cells = {1.0: (est, ci, full, (LinfBall(3), 0.3))}
    more = (3.0 * rng.standard_normal((60, 3)), 3.0 * rng.standard_normal((60, 3)))
    alone = pd.DataFrame(inf.kng_score(1000, cells, 11, n_asym=2000))
    pooled = pd.DataFrame(inf.kng_score(1000, cells, 11, n_asym=2000, extra={1.0: more}))
    np.testing.assert_allclose(pooled.oracle_width, oracle_mod.spread(np.vstack([est, more[0]])))
    np.testing.assert_allclose(
        pooled.oracle_width_full, oracle_mod.spread(np.vstack([full, more[1]]))
    )
    np.testing.assert_allclose(alone.oracle_width, oracle_mod.spread(est))
    assert (pooled.oracle_reps == 100).all() and (alone.oracle_reps == 40).all()
    assert (pooled.oracle_width > 1.5 * alone.oracle_width).all()
    for col in ("coverage", "mean_width", "oracle_width_asym", "oracle_width_full_asym"):
        np.testing.assert_array_equal(pooled[col], alone[col])


def test_sim_default_interval_is_the_librarys_window():
    """``_inference_kng_sim.intervals(..., "default")`` (what ``_inference_default_rows``
    splices into the committed table) is the library's ``simulated_interval`` of one world:
    the draws' own shortest window; the control, the pivot's interval, is another."""
    from benchmarks import _inference_kng_sim as kng_sim
    from dpreg.linear_model import _inference_quantile as iq

    rng = np.random.default_rng(0)
    est = np.zeros(3)
    draws = np.column_stack([rng.exponential(size=400), rng.normal(size=400), rng.normal(size=400)])
    box = np.array([[-9.0, 9.0]] * 3)
    ci = kng_sim.intervals(box, est, draws, "default")
    np.testing.assert_array_equal(ci, iq.simulated_interval(est, draws, 0.05, box))
    assert ci[0, 0] >= -1e-12  # the skewed draws' side
    assert np.abs(kng_sim.intervals(box, est, draws, "shortest") - ci).max() > 0.5


def test_tau_score_counts_one_sided_misses(tmp_path):
    """``_inference_kng_tau.score`` reads every interval kind of a run and counts coverage and
    the misses on each side against the true quantile coefficients."""
    from benchmarks import _inference_kng_tau as tau_mod

    truth = tau_mod.TRUTH
    hit = np.column_stack([truth - 1.0, truth + 1.0])
    high = np.column_stack([truth + 0.5, truth + 2.0])  # every interval above the truth
    for i, ci in enumerate([hit, hit, hit, high]):
        kinds = dict(pivot=high, mirror=ci, default=hit, true_s=ci)
        np.savez(tmp_path / f"centred_{i:04d}.npz", estimate=truth, sparsity=3.0, **kinds)
    df = tau_mod.score(tmp_path).set_index(["interval", "param"])
    assert df.loc[("default", "const"), "coverage"] == 1.0
    assert df.loc[("mirror", "x1"), "coverage"] == 0.75
    assert df.loc[("mirror", "x1"), "below"] == 0.25 and df.loc[("mirror", "x1"), "above"] == 0
    assert df.loc[("pivot", "x2"), "coverage"] == 0.0


def test_tau_score_reads_the_stored_level(tmp_path):
    """A run at another level (``run ... --tau``) stores it, and ``score`` checks against
    that level's truth; a ``--default-only`` run has no ``pivot`` / ``true_s`` to score, and
    runs at two levels in one directory are refused."""
    from benchmarks import _inference_kng_tau as tau_mod

    truth = tau_mod.truth(0.9)
    assert truth[0] == pytest.approx(1.0 + 1.2815515655446004)
    hit = np.column_stack([truth - 0.1, truth + 0.1])
    # covers the level-0.9 truth, misses the level-1/4 one (1 - 0.674 = 0.326)
    assert not (hit[0, 0] <= tau_mod.TRUTH[0] <= hit[0, 1])
    for i in range(3):
        np.savez(tmp_path / f"centred_{i:04d}.npz", estimate=truth, sparsity=3.0, tau=0.9,
                 mirror=hit, default=hit)  # fmt: skip
    df = tau_mod.score(tmp_path)
    assert set(df["interval"]) == {"mirror", "default"} and set(df["tau"]) == {0.9}
    assert (df["coverage"] == 1.0).all()
    np.savez(tmp_path / "centred_0003.npz", estimate=truth, sparsity=3.0, mirror=hit, default=hit)
    with pytest.raises(ValueError, match="several levels"):
        tau_mod.score(tmp_path)


def test_tau_score_cells_reads_each_cell(tmp_path):
    """``score-cells``: one row per parameter and cell, the truth at the stored level, the
    width over the spread of the run's own estimates; two cells in one directory refused."""
    from benchmarks import _inference_kng_tau as tau_mod

    truth = tau_mod.truth(0.25)
    rng = np.random.default_rng(0)
    cell = tmp_path / "a"
    cell.mkdir()
    for i in range(40):
        est = truth + rng.normal(size=3)
        ci = np.column_stack([est - 2.0, est + 2.0])  # covers iff |est - truth| <= 2
        np.savez(cell / f"centred_{i:04d}.npz", estimate=est, sparsity=3.0, tau=0.25,
                 n=1000, epsilon=1.0, method="linear", default=ci)  # fmt: skip
    df = tau_mod.score_cells([cell]).set_index("param")
    est = np.array([np.load(f)["estimate"] for f in sorted(cell.glob("*.npz"))])
    expected = (np.abs(est - truth) <= 2.0).mean(axis=0)
    np.testing.assert_allclose(df["coverage"].to_numpy(), expected)
    lo, hi = np.quantile(est, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(df["width_over_spread"].to_numpy(), 4.0 / (hi - lo))
    assert (df["linear"] == 40).all() and (df["n"] == 1000).all()
    np.savez(cell / "centred_0040.npz", estimate=truth, sparsity=3.0, tau=0.25, n=10000,
             epsilon=1.0, method="linear", default=np.column_stack([truth, truth]))  # fmt: skip
    with pytest.raises(ValueError, match="several cells"):
        tau_mod.score_cells([cell])


def test_corner_rescore_pools_three_thousand_estimates_per_cell():
    """benchmarks._inference_kng_corner: a cell re-run on data sets 0..k-1 is pooled with the
    committed replay of data sets k..599 and the 2,400 estimate-only ones, so its oracle has
    3,000 estimates as in the committed table; a full 600-set cell takes no replay."""
    from benchmarks import _inference_kng_corner as corner

    fake = lambda k: (np.zeros((k, 3)), None, np.zeros((k, 3)), None)  # noqa: E731
    extra = corner.pooled_extra({0.25: fake(100), 1.0: fake(600)})
    assert extra[0.25][0].shape == (2900, 3) and extra[0.25][1].shape == (2900, 3)
    assert extra[1.0][0].shape == (2400, 3)
    z = np.load(corner.RESULTS / "inference_kng_oracle_estimates.npz")
    np.testing.assert_array_equal(extra[0.25][0][:500], z["replay_1000_est_0.25"][100:])


def test_splice_replaces_only_the_sources_cells(tmp_path, monkeypatch):
    """``_inference_kng_chunks.splice`` swaps in the rows of the source's (n, epsilon, param)
    cells, keeps every other row and the table's ``interval`` column, and takes a source
    without the whole-epsilon columns (an n = 1e5 run) with those left empty. On the
    committed table and the session-18 n = 1e5 source; a source that replaced the wrong rows
    or dropped a column would fail."""
    import shutil

    import pandas as pd

    from benchmarks import _common
    from benchmarks import _inference_kng_chunks as chunks

    for name in ("inference_kng", "inference_kng_s18_n1e5"):
        shutil.copy(_common.RESULTS / f"{name}.csv", tmp_path / f"{name}.csv")
    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    before = pd.read_csv(tmp_path / "inference_kng.csv")
    source = pd.read_csv(tmp_path / "inference_kng_s18_n1e5.csv")
    chunks.splice("inference_kng_s18_n1e5")
    after = pd.read_csv(tmp_path / "inference_kng.csv")
    assert list(after.columns) == list(before.columns) and len(after) == len(before)
    key = ["n", "epsilon", "param"]
    others = before.n != 100_000
    pd.testing.assert_frame_equal(
        after[others.to_numpy()].reset_index(drop=True), before[others].reset_index(drop=True)
    )
    spliced = after[after.n == 100_000].merge(source, on=key, suffixes=("", "_src"))
    assert len(spliced) == 9
    np.testing.assert_array_equal(spliced.coverage, spliced.coverage_src)
    np.testing.assert_array_equal(spliced.mean_width, spliced.mean_width_src)
    assert spliced.width_ratio_full.isna().all()
    old = before[before.n == 100_000].set_index(key).interval
    assert (spliced.set_index(key).interval == old.reindex(spliced.set_index(key).index)).all()
