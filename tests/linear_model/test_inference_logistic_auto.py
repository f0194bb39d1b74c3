"""The opt-in ``method="auto"`` of the logistic intervals (issue 15, docs/inference.md,
"method='auto'"; the default stays ``"linear"``).

``auto`` simulates where the released check ``linear_law_poor`` fires (the released Hessian
says the linearised interval misses more than ``SHRINKAGE_LIMIT`` of the fit's shrinkage, or
is not positive definite) and linearises otherwise, bit for bit. The check reads released
and public quantities only; neither path spends anything; both warn as before.
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


def _release(n, eps, seed, acc=None, share=0.2):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(BETA[0] + X @ BETA[1:])))).astype(int)
    m = ObjectivePerturbationLogistic(
        epsilon=(1 - share) * eps,
        bounds_X=(-1, 1),
        classes=[0, 1],
        random_state=rng,
        accountant=acc or BudgetAccountant(),
    )
    return m.fit(X, y).release_hessian(X, y, share * eps, random_state=rng)


def _quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return call(*args, **kwargs)


def _with_hessian(m, H):
    """``m`` with a constructed release of ``H`` (the fit's own noise scale and theta)."""
    rel = m.inference_release_
    m.inference_release_ = inf.HessianRelease(
        hessian=np.asarray(H, dtype=float),
        entry_sd=rel.entry_sd,
        sensitivity=rel.sensitivity,
        epsilon=rel.epsilon,
        n=rel.n,
        theta=m.theta_,
    )
    return m


def test_check_on_constructed_releases():
    """The check is ``max_j (H~^{-1} P)_jj > SHRINKAGE_LIMIT`` or ``H~`` not positive definite:
    a diagonal release just above / below ``P_jj / SHRINKAGE_LIMIT`` on one coordinate does
    not / does fire; a correlated slope block with the same diagonal fires (the inverse's
    diagonal grows); an indefinite release fires; the user's ridge enters ``P``."""
    m = _release(1000, 4.0, 1)
    gamma = m.gamma_
    edge = gamma / inf.SHRINKAGE_LIMIT  # the curvature at which the missing factor is 1.05
    big = 100.0 * edge

    def fires(H):
        _with_hessian(m, H)
        return inf.linear_law_poor(m, m.inference_release_)

    assert not fires(np.diag([big, big, big]))
    assert not fires(np.diag([big, 1.01 * edge, big]))
    assert fires(np.diag([big, 0.99 * edge, big]))
    assert fires(np.diag([0.99 * edge, big, big]))  # the intercept counts too (P = gamma I)
    assert inf.missing_shrinkage(m, m.inference_release_) == pytest.approx(gamma / (0.99 * edge))
    corr = np.array([[big, 0, 0], [0, 2 * edge, 1.9 * edge], [0, 1.9 * edge, 2 * edge]])
    assert not fires(np.diag(np.diag(corr))) and fires(corr)
    indefinite = np.array([[big, 0, 0], [0, big, 1.01 * big], [0, 1.01 * big, big]])
    assert fires(indefinite)
    assert inf.missing_shrinkage(m, m.inference_release_) == np.inf
    assert inf._method(m, m.inference_release_, "auto") == "simulate"
    assert inf._method(m, m.inference_release_, "linear") == "linear"
    _with_hessian(m, np.diag([big, big, big]))
    assert inf._method(m, m.inference_release_, "auto") == "linear"
    assert inf._method(m, m.inference_release_, "simulate") == "simulate"

    ridge = 0.02 * edge  # alpha enters P on the slopes: gamma + alpha > 1.05 edge's limit
    m.alpha = ridge
    assert fires(np.diag([big, 1.01 * edge, big]))


def test_auto_is_the_linear_path_bit_for_bit_where_the_check_passes(monkeypatch):
    """n = 1e3, epsilon = 4 (check passes on this release): ``conf_int``, ``bse`` and
    ``summary`` with ``method="auto"`` equal the default (``"linear"``) and the
    release-seeded bootstrap recomputed here, and no refit runs. The control (the same
    release with the check forced to fire) gives a different interval."""
    m = _release(1000, 4.0, 2)
    assert not inf.linear_law_poor(m, m.inference_release_)

    def fail(*args, **kwargs):
        raise AssertionError("a refit ran where the check passes")

    monkeypatch.setattr(sim, "simulation_draws", fail)
    auto = {"n_boot": 200, "method": "auto"}
    ci, se = _quiet(m.conf_int, **auto), _quiet(m.bse, **auto)
    table = _quiet(m.summary, alpha=0.1, **auto)
    seed = release_seed(*inf.released_values(m, m.inference_release_))
    est, draws = inf.bootstrap(m, 200, random_state=seed)
    np.testing.assert_array_equal(ci, basic_interval(est, draws, 0.05))
    np.testing.assert_array_equal(se, draws.std(axis=0, ddof=1))
    m._inference_cache = None
    np.testing.assert_array_equal(_quiet(m.conf_int, n_boot=200), ci)
    linear = _quiet(m.summary, alpha=0.1, n_boot=200)
    pd.testing.assert_frame_equal(linear.as_dataframe(), table.as_dataframe())
    assert str(linear) == str(table) and "(linearised), 200 draws" in str(table)

    monkeypatch.undo()
    monkeypatch.setattr(inf, "linear_law_poor", lambda est, rel: True)
    m._inference_cache = None
    forced = _quiet(m.conf_int, n_sim=20, **auto)
    assert np.max(np.abs(forced - ci)) > 1e-3


def test_auto_simulates_where_the_check_fires():
    """n = 300, epsilon = 1 (check fires): ``method="auto"`` is ``method="simulate"`` with
    ``n_sim`` refits in ``conf_int``, ``bse`` and ``summary`` (one run, cached); the
    linearised interval (the control, and still the default) differs."""
    m = _release(300, 1.0, 3)
    assert inf.linear_law_poor(m, m.inference_release_)
    ci = _quiet(m.conf_int, n_sim=20, method="auto")
    se = _quiet(m.bse, n_sim=20, method="auto")
    table = _quiet(m.summary, n_sim=20, method="auto")
    other = _release(300, 1.0, 3)  # the same release on a fresh object: no shared cache
    np.testing.assert_array_equal(_quiet(other.conf_int, method="simulate", n_sim=20), ci)
    np.testing.assert_array_equal(_quiet(other.bse, method="simulate", n_sim=20), se)
    pd.testing.assert_frame_equal(
        _quiet(other.summary, method="simulate", n_sim=20).as_dataframe(), table.as_dataframe()
    )
    assert "simulation bootstrap (de-shrunk), 20 certified refits" in str(table)
    assert np.max(np.abs(_quiet(m.conf_int) - ci)) > 1e-3
    np.testing.assert_array_equal(_quiet(m.conf_int), _quiet(m.conf_int, method="linear"))


def test_no_extra_spend():
    """The user's ledger holds the fit and the Hessian release only, before and after every
    call on both paths (the simulation's refits spend on a throwaway ledger)."""
    for n, eps, fires in ((300, 1.0, True), (1000, 4.0, False)):
        acc = BudgetAccountant()
        m = _release(n, eps, 4, acc)
        assert inf.linear_law_poor(m, m.inference_release_) is fires
        before = acc.spent
        assert before == pytest.approx((eps, 0.0))
        for method in ("auto", "linear", "simulate"):
            _quiet(m.conf_int, n_boot=100, n_sim=20, method=method)
            _quiet(m.bse, n_boot=100, n_sim=20, method=method)
            _quiet(m.summary, n_boot=100, n_sim=20, method=method)
        assert acc.spent == before


def _messages(call, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(**kwargs)
    return [(str(w.message), w.category, w.filename) for w in caught if POOR in str(w.message)]


@pytest.mark.parametrize("n, eps, share", [(300, 1.0, 0.2), (1000, 4.0, 0.1), (5000, 4.0, 0.2)])
def test_warnings_as_before(n, eps, share):
    """Every call warns exactly when the released Hessian is poorly determined
    (``poorly_determined``, unchanged), with the message of the linear path, pointing at the
    caller, whichever path ``auto`` takes. The cases: check fires and warns (n = 300), check
    passes but warns (n = 1e3, epsilon = 4, the benchmark's Hessian share 0.1), neither
    (n = 5e3, epsilon = 4)."""
    m = _release(n, eps, 5, share=share)
    warn = inf.poorly_determined(m.inference_release_)
    expected = _messages(m.conf_int, n_boot=50, method="linear")
    assert len(expected) == int(warn)
    assert all(w[1] is UserWarning and w[2] == __file__ for w in expected)
    for call in (m.conf_int, m.bse, m.summary):
        for method in ("auto", "simulate"):
            assert _messages(call, n_boot=50, n_sim=20, method=method) == expected
    cases = {(300, 1.0): (True, True), (1000, 4.0): (False, True), (5000, 4.0): (False, False)}
    assert (inf.linear_law_poor(m, m.inference_release_), warn) == cases[(n, eps)]


@pytest.mark.parametrize("n_sim", [5, 0, 2.5, "200"])
def test_bad_n_sim_raises_before_anything_runs(monkeypatch, n_sim):
    def fail(*args, **kwargs):
        raise AssertionError("ran before n_sim was checked")

    monkeypatch.setattr(inf, "bootstrap", fail)
    monkeypatch.setattr(sim, "simulation_draws", fail)
    m = _release(300, 1.0, 6)
    for call in (m.conf_int, m.bse, m.summary):
        with pytest.raises(ValueError, match="n_sim"):
            call(n_sim=n_sim, method="auto")
    assert getattr(m, "_inference_cache", None) is None
