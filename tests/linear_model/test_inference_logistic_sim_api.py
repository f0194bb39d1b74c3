"""One simulation interval across the logistic inference API (issue 15): ``conf_int``, ``bse``
and ``summary`` take the same ``method=`` and read the same draws of one release; the
linearised path (``method="linear"``) is unchanged; the simulation path warns on the same
released-quantity check as the default; a progress bar over the refits shows after 2 s.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from dpreg import ObjectivePerturbationLogistic
from dpreg._random import release_seed
from dpreg.accounting import BudgetAccountant
from dpreg.linear_model import _inference_logistic as inf
from dpreg.linear_model import _inference_logistic_sim as sim
from dpreg.linear_model._inference import basic_interval

BETA = np.array([0.5, 1.5, -1.0])
POOR = "privacy noise of the released Hessian"


def _release(n, eps, seed, bounds=(-1, 1), names=False):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(BETA[0] + X @ BETA[1:])))).astype(int)
    if names:
        X = pd.DataFrame(X, columns=["age", "dose"])
    acc = BudgetAccountant()
    m = ObjectivePerturbationLogistic(
        epsilon=eps, bounds_X=bounds, classes=[0, 1], random_state=rng, accountant=acc
    )
    return m.fit(X, y).release_hessian(X, y, 0.2 * eps, random_state=rng)


def _quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return call(*args, **kwargs)


def _counting(monkeypatch):
    """Count the runs of the simulation (the refits), forwarding to the real code."""
    calls = []
    real = sim.simulation_draws

    def counted(*args, **kwargs):
        calls.append(args[1:])
        return real(*args, **kwargs)

    monkeypatch.setattr(sim, "simulation_draws", counted)
    return calls, real


def test_bse_and_summary_read_conf_ints_simulation_draws(monkeypatch):
    """Non-trivial user units (bounds (-2, 3)) and named features. ``conf_int``, ``bse`` and
    ``summary`` with ``method="simulate"`` run the refits once; ``bse`` is the spread of those
    refits (the released estimate's), computed here from an independent run of the
    release-seeded simulation; the summary's interval columns are ``conf_int``'s, its coef the
    released estimate. Controls: the linearised ``bse`` and interval differ, so each equality
    can fail."""
    m = _release(400, 1.0, 11, bounds=(-2, 3), names=True)
    calls, real = _counting(monkeypatch)
    ci = _quiet(m.conf_int, n_sim=30, method="simulate")
    se = _quiet(m.bse, n_sim=30, method="simulate")
    table = _quiet(m.summary, alpha=0.05, n_sim=30, method="simulate").as_dataframe()
    assert calls == [(30, "posterior mean")]  # one run of the refits for all three

    theta, refits, _ = real(m, 30, "posterior mean")  # recomputed, uncounted: same seed
    expected = inf._user_units(m, refits).std(axis=0, ddof=1)
    np.testing.assert_array_equal(se.to_numpy(), expected)
    assert list(se.index) == ["const", "age", "dose"]
    np.testing.assert_array_equal(table["std err"].to_numpy(), expected)
    np.testing.assert_array_equal(table[["[0.025", "0.975]"]].to_numpy(), ci.to_numpy())
    np.testing.assert_allclose(table["coef"].to_numpy(), np.r_[m.intercept_, m.coef_.ravel()])
    np.testing.assert_allclose(inf._user_units(m, theta[None])[0], table["coef"].to_numpy())
    assert "simulation bootstrap" in str(_quiet(m.summary, n_sim=30, method="simulate"))

    linear_se = _quiet(m.bse, n_boot=30, method="linear")
    linear_ci = _quiet(m.conf_int, n_boot=30, method="linear")
    assert np.max(np.abs(linear_se.to_numpy() - expected)) > 1e-3  # the control
    assert np.max(np.abs(linear_ci.to_numpy() - ci.to_numpy())) > 1e-3
    # the simulation's draws stay cached next to the linear ones: no second run
    _quiet(m.bse, n_sim=30, method="simulate")
    assert len(calls) == 1


def test_same_release_gives_the_same_simulation_bse_and_summary():
    """Another estimator given only the released theta and Hessian release (other data) gets
    the same ``bse`` and summary table: the draws are a function of the release seed. The
    control is its own release, which differs."""
    a, b = _release(300, 1.0, 12), _release(300, 1.0, 13)
    own = _quiet(b.bse, n_sim=20, method="simulate")
    se = _quiet(a.bse, n_sim=20, method="simulate")
    table = _quiet(a.summary, n_sim=20, method="simulate").as_dataframe()
    assert np.max(np.abs(own - se)) > 1e-3
    b.theta_, b.coef_, b.intercept_ = a.theta_, a.coef_, a.intercept_
    b.inference_release_ = a.inference_release_
    np.testing.assert_array_equal(_quiet(b.bse, n_sim=20, method="simulate"), se)
    pd.testing.assert_frame_equal(
        _quiet(b.summary, n_sim=20, method="simulate").as_dataframe(), table
    )


def test_linear_bse_and_summary_are_the_linearised_bootstrap():
    """``bse``/``summary`` with ``method="linear"`` equal the module's release-seeded
    linearised bootstrap recomputed here (the code path before ``method=`` existed); the
    summary's interval columns are ``conf_int``'s. (At n = 1e3, epsilon = 0.25 the default
    ``"auto"`` simulates: ``test_inference_logistic_auto.py``.)"""
    m = _release(1000, 0.25, 14)
    se = _quiet(m.bse, n_boot=200, method="linear")
    table = _quiet(m.summary, alpha=0.1, n_boot=200, method="linear")
    seed = release_seed(*inf.released_values(m, m.inference_release_))
    est, draws = inf.bootstrap(m, 200, random_state=seed)
    np.testing.assert_array_equal(se, draws.std(axis=0, ddof=1))
    frame = table.as_dataframe()
    np.testing.assert_array_equal(frame["coef"].to_numpy(), est)
    np.testing.assert_array_equal(frame["std err"].to_numpy(), se)
    ci = _quiet(m.conf_int, alpha=0.1, n_boot=200, method="linear")
    np.testing.assert_array_equal(frame[["[0.05", "0.95]"]].to_numpy(), ci)
    np.testing.assert_array_equal(ci, basic_interval(est, draws, 0.1))
    assert "(linearised), 200 draws" in str(table)


@pytest.mark.parametrize("method", ["simulation", "linearised", "Auto", None, 1, ["linear"]])
def test_bad_method_raises_before_anything_runs(monkeypatch, method):
    """A bad ``method`` raises a ValueError naming ``method`` before the release is looked up
    or any draw is made: no bootstrap, no refit, no cache; the same on an unfitted model."""

    def fail(*args, **kwargs):
        raise AssertionError("ran before the method was checked")

    monkeypatch.setattr(inf, "bootstrap", fail)
    monkeypatch.setattr(sim, "simulation_draws", fail)
    m = _release(200, 1.0, 15)
    unfitted = ObjectivePerturbationLogistic(epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1])
    for est in (m, unfitted):
        with pytest.raises(ValueError, match="method"):
            est.bse(n_boot=20, method=method)
        with pytest.raises(ValueError, match="method"):
            est.summary(n_boot=20, method=method)
        with pytest.raises(ValueError, match="method"):
            est.conf_int(n_boot=20, method=method)
        assert getattr(est, "_inference_cache", None) is None


def _messages(call, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(*args, **kwargs)
    return [(str(w.message), w.category, w.filename) for w in caught if POOR in str(w.message)]


def test_simulation_path_warns_where_the_default_does():
    """A release whose Hessian noise is large against its smallest eigenvalue (n = 300,
    epsilon = 1) gets the default path's UserWarning from every simulate call too, pointing
    at the caller; a well-determined release (n = 1e3, epsilon = 8: the control) gets it from
    neither path. The check reads the release only: another estimator given the release
    warns the same."""
    poor = _release(300, 1.0, 16)
    assert inf.poorly_determined(poor.inference_release_)
    default = _messages(poor.conf_int, n_boot=20, method="linear")
    assert len(default) == 1 and default[0][1] is UserWarning and default[0][2] == __file__
    # it names the design under which the intervals under-cover and the remedy (session 12)
    assert "off-centre" in default[0][0] and "centre each column" in default[0][0]
    for call in (poor.conf_int, poor.bse, poor.summary):
        assert _messages(call, n_sim=20, method="simulate") == default
    other = _release(300, 1.0, 17)
    other.theta_, other.inference_release_ = poor.theta_, poor.inference_release_
    assert _messages(other.bse, n_sim=20, method="simulate") == default

    good = _release(1000, 8.0, 18)
    assert not inf.poorly_determined(good.inference_release_)
    for method in ("linear", "simulate"):
        for call in (good.conf_int, good.bse, good.summary):
            assert _messages(call, n_boot=20, n_sim=20, method=method) == []


def test_progress_bar_over_the_refits(monkeypatch, capsys):
    """The refits run under a tqdm bar with a 2 s delay (nothing printed for a short job);
    with no delay it shows, and showing it changes no draw."""
    import tqdm.auto

    m = _release(300, 1.0, 19)
    seen = []
    real = tqdm.auto.tqdm

    def recording(iterable, **kwargs):
        seen.append((len(iterable), kwargs))
        return real(iterable, **kwargs)

    monkeypatch.setattr(tqdm.auto, "tqdm", recording)
    quiet = sim.simulation_draws(m, 20, "posterior mean")[1]
    assert seen == [(20, {"delay": 2.0, "desc": "simulation bootstrap", "unit": "fit"})]
    monkeypatch.setattr(sim, "PROGRESS_DELAY", 0.0)
    capsys.readouterr()
    shown = sim.simulation_draws(m, 20, "posterior mean")[1]
    assert "simulation bootstrap" in capsys.readouterr().err
    np.testing.assert_array_equal(shown, quiet)
