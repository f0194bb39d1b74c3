r"""Private inference for a binary :class:`~dpreg.ObjectivePerturbationLogistic`.

The released parameter (scaled units, sum form of the objective, module docstring of
``logistic.py``) is ``theta~ = theta^ + W`` with

    theta^ = argmin  sum_i l(theta; z_i, y_i) + gamma/2 |theta|^2 + ridge/2 |w|^2 + V.theta,

V a K-norm draw of known law and W the l2 K-norm output noise of the certified release. A
first-order expansion of the optimality condition around the true ``theta0`` gives

    theta^ - theta0 ~= -H^{-1} (g + P theta0 + V),   g = sum_i grad l(theta0; z_i, y_i),
    H = H_loss + P,  H_loss = sum_i s_i (1 - s_i) z_i z_i^T,  P = gamma I + ridge (w block).

Under the logistic model ``g`` is a sum of independent mean-zero terms with covariance
``H_loss`` (information equality), so ``g ~ N(0, H_loss)`` asymptotically; V and W are
independent of the data and their laws are known exactly. The only unknown besides theta0 is
``H_loss``: it depends on the data and is *not* public, so it is released once, privately and
charged (:func:`release_hessian`), at the released point. Everything after that is
post-processing. Derivation, assumptions and measured coverage: ``docs/inference.md``.

The basic interval of this linearisation has the spread of the estimate, while a valid one
needs that spread stretched by ``(A^{-1})_jj = 1 + (H^{-1} P)_jj``, ``A = (H + P)^{-1} H``
(the fit's shrinkage). ``method="auto"`` (opt-in; the default stays ``"linear"``) reads that
factor off the released Hessian (:func:`missing_shrinkage`) and, where it exceeds
:data:`SHRINKAGE_LIMIT` or the release is not positive definite, uses the simulation
bootstrap of :mod:`._inference_logistic_sim`, whose de-shrunk interval restores it. The
check reads released and public quantities only (post-processing); where it passes the
intervals are the linearised ones, bit for bit. It is not the default because on a design
whose x1 is correlated with the intercept the simulation under-covers at n = 1e3,
epsilon = 1 (0.925 / 0.925 / 0.919 on 160 data sets) where the linearised interval is in the
band (docs/inference.md, "method='auto'").
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from .._random import release_seed
from .._validation import (
    check_epsilon,
    check_fit_rows,
    check_random_state,
    check_release_epsilon,
    warn_if_released_again,
)
from ._inference import (
    Summary,
    check_alpha,
    check_n_boot,
    interval_output,
    param_names,
    se_output,
    summary_frame,
)

DEFAULT_N_BOOT = 1000
#: Per-example bound on every entry of ``s (1 - s) z z^T`` (``s (1 - s) <= 1/4``, ``|z_j| <= 1``).
ENTRY_BOUND = 0.25


@dataclass
class HessianRelease:
    """The private release of the loss Hessian at the released point (scaled units).

    ``hessian`` is the decoded symmetric noisy matrix, ``entry_sd`` the standard deviation of
    its noise entry by entry (public: a function of epsilon and the dimension only).
    ``public_corner`` is True when ``hessian[0, 0]`` is a public value put in without noise
    (the KNG design Gram's ``n``); its noise is then 0 and the others' law is that of a
    linf K-norm draw in one dimension fewer.
    """

    hessian: np.ndarray
    entry_sd: np.ndarray
    sensitivity: float
    epsilon: float
    n: int
    theta: np.ndarray  # the fit's theta_ itself: identifies the fit the release belongs to
    public_corner: bool = False


def _encode(H):
    """Upper triangle of H as a vector, off-diagonal entries halved.

    Halving makes every coordinate's replace-one change at most ``ENTRY_BOUND``: a diagonal
    entry ``a z_j^2`` lies in [0, 1/4] and an off-diagonal ``a z_j z_k`` in [-1/4, 1/4], so the
    change of ``a z_j z_k / 2`` is at most 1/4 as well. The linf sensitivity is therefore 1/4
    (plus the floating-point margin of the sums).
    """
    iu = np.triu_indices(H.shape[0])
    scale = np.where(iu[0] == iu[1], 1.0, 0.5)
    return H[iu] * scale, iu, scale


def _decode(u, iu, scale, m):
    H = np.zeros((m, m))
    H[iu] = u / scale
    return np.triu(H) + np.triu(H, 1).T


#: Range and constant of :func:`hessian_share`.
MIN_HESSIAN_SHARE, MAX_HESSIAN_SHARE, HESSIAN_SHARE_SCALE = 0.1, 0.2, 40.0


def hessian_share(n, epsilon):
    """Suggested share of a total ``epsilon`` for :func:`release_hessian` (the fit gets the rest).

    ``sqrt(40 / (n epsilon))`` clipped to [0.1, 0.2]: a function of the public ``n`` and
    ``epsilon`` only, so choosing the split spends nothing. The relative noise of the released
    Hessian falls like ``1 / (n epsilon share)`` while the fit's noise grows like
    ``1 / (1 - share)``: small ``n epsilon`` needs a larger share. Measured (docs/inference.md):
    with a fixed 0.1 the Hessian's noise alone made the n = 1e3, epsilon <= 1 intervals
    1.5-3.6x the oracle width. The cap is 0.2 because a well-known Hessian exposes the
    linearisation's own under-coverage at ``n epsilon = 250`` (slopes 0.87-0.93 with shares
    0.3-0.5); the rule gives 0.2 / 0.2 / 0.1 at n = 1e3 and epsilon = 0.25 / 1 / 4, and 0.1
    from ``n epsilon = 4000`` on.
    """
    epsilon = check_epsilon(epsilon)
    if int(n) < 1:
        raise ValueError(f"n must be a positive integer; got {n!r}.")
    share = math.sqrt(HESSIAN_SHARE_SCALE / (int(n) * epsilon))
    return min(MAX_HESSIAN_SHARE, max(MIN_HESSIAN_SHARE, share))


def _check_binary(estimator):
    from sklearn.utils.validation import check_is_fitted  # noqa: PLC0415

    check_is_fitted(estimator, "theta_")
    if estimator.theta_.shape[0] != 1:
        raise ValueError("private inference supports binary ObjectivePerturbationLogistic only.")
    if float(estimator.alpha) > 0 and float(estimator.l1_ratio) > 0:
        raise ValueError(
            "private inference needs a smooth objective; an L1 penalty (l1_ratio > 0) is not."
        )


def release_symmetric(M, entry_bound, n, epsilon, rng, theta=None, public_corner=None):
    """epsilon-DP release of a symmetric sum ``M = sum_i a_i z_i z_i^T`` of ``n`` rows.

    The caller guarantees that every per-row diagonal term lies in ``[0, entry_bound]`` and
    every off-diagonal term in ``[-entry_bound, entry_bound]``; then (:func:`_encode`) the
    linf sensitivity of the encoded upper triangle is ``entry_bound``, plus twice the
    floating-point error bound of the sums (``docs/floating_point.md``). The release is the
    exact grid linf K-norm mechanism. Used for the logistic Hessian (``entry_bound = 1/4``)
    and the KNG design Gram (``entry_bound = 1``).

    ``public_corner``: a value the caller guarantees ``M[0, 0]`` equals on *every* data set
    of ``n`` rows (the KNG design Gram with an intercept: ``sum_i 1 = n``). That entry is then
    not released but put in as it is, and the K-norm draw covers the other entries only.
    Why this is still epsilon-DP with the same sensitivity: the released vector is the old
    one without a coordinate whose replace-one change is 0, so its linf change is still at
    most ``entry_bound`` (plus the margin), and the corner is a constant (post-processing).
    Why it helps: a linf K-norm coordinate in dimension d has variance
    ``(d + 1)(d + 2) b^2 / 3``, so dropping one of d = 6 entries (two features and an
    intercept) cuts every other entry's noise sd by ``sqrt(42 / 56) = 0.87``.
    """
    from ..noise import KNormMechanism  # noqa: PLC0415
    from ..noise._grid import float_sum_error_bound  # noqa: PLC0415

    m = M.shape[0]
    sens = entry_bound + 2.0 * float_sum_error_bound(n, entry_bound, products=True)
    u, iu, scale = _encode(M)
    first = 0 if public_corner is None else 1  # iu starts at (0, 0)
    d = u.size - first
    noisy = u.copy()
    if d > 0:
        mech = KNormMechanism("linf", d, sens, epsilon, random_state=rng)
        noisy[first:] = mech.randomise(u[first:])
    sd_entries = np.zeros(u.size)
    # linf K-norm noise r U, r ~ Gamma(d + 1, sens/eps), U ~ U[-1, 1]^d: var = E r^2 / 3
    sd_entries[first:] = math.sqrt((d + 1) * (d + 2) / 3.0) * sens / epsilon
    if public_corner is not None:
        noisy[0] = float(public_corner)
    return HessianRelease(
        hessian=_decode(noisy, iu, scale, m),
        entry_sd=_decode(sd_entries, iu, scale, m),
        sensitivity=sens,
        epsilon=epsilon,
        n=n,
        theta=theta,
        public_corner=public_corner is not None,
    )


def release_hessian(estimator, X, y, epsilon, accountant=None, random_state=None):
    """Release ``H_loss`` at the released point with an epsilon-DP linf K-norm draw.

    Validates everything (fitted binary model, epsilon, X, y, labels) before it reserves
    ``epsilon`` from the accountant (the estimator's own when ``accountant`` is None), and
    only then touches the data. ``random_state`` defaults to fresh entropy: re-using the fit's
    integer seed would correlate this noise with the fit's.
    """
    from sklearn.utils.multiclass import check_classification_targets  # noqa: PLC0415
    from sklearn.utils.validation import validate_data  # noqa: PLC0415

    from ..accounting import check_accountant  # noqa: PLC0415

    _check_binary(estimator)
    epsilon = check_epsilon(epsilon)
    accountant = check_accountant(estimator.accountant if accountant is None else accountant)
    accountant.check(epsilon, 0.0)
    X, y = validate_data(estimator, X, y, reset=False, dtype=np.float64, y_numeric=False)
    check_classification_targets(y)
    _, y_idx = estimator._encode_labels(y, estimator.classes_)  # raises on unknown labels
    del y_idx  # the Hessian of the logistic loss does not depend on the labels
    n = X.shape[0]
    check_fit_rows(getattr(estimator, "n_samples_fit_", None), n, "release_hessian")
    epsilon = check_release_epsilon(epsilon)
    rng = check_random_state(random_state)
    previous = getattr(estimator, "inference_release_", None)
    warn_if_released_again(previous, estimator.theta_, epsilon, "Hessian")
    accountant.spend(epsilon, 0.0)  # reserve before computing anything from the data
    Z = np.clip(estimator._scale(X, *estimator.bounds_), -1.0, 1.0)
    if estimator.fit_intercept:
        Z = np.column_stack([np.ones(n), Z])
    s = expit(Z @ estimator.theta_[0])
    a = np.clip(s * (1.0 - s), 0.0, ENTRY_BOUND)
    estimator.inference_release_ = release_symmetric(
        (Z * a[:, None]).T @ Z, ENTRY_BOUND, n, epsilon, rng, theta=estimator.theta_
    )
    return estimator


def _release(estimator):
    _check_binary(estimator)
    rel = getattr(estimator, "inference_release_", None)
    # the very array of this fit (a refit makes a new one, even with the same seed)
    if rel is None or rel.theta is not estimator.theta_:
        raise ValueError(
            "no Hessian release for this fit: call release_hessian(X, y, epsilon) after fit "
            "(it spends epsilon; the intervals need the curvature of the loss)."
        )
    return rel


def _penalty(estimator, m):
    P = np.full(m, float(estimator.gamma_))
    ridge = float(estimator.alpha) * (1.0 - float(estimator.l1_ratio))
    P[int(estimator.fit_intercept) :] += ridge
    return np.diag(P)


def _psd(H):
    w, Q = np.linalg.eigh(H)
    return (Q * np.maximum(w, 0.0)[..., None, :]) @ np.swapaxes(Q, -1, -2)


def _noise_draws(rel, k, rng):
    """``k`` fresh draws of the Hessian release noise, decoded to symmetric matrices."""
    from ..noise import KNormMechanism  # noqa: PLC0415
    from ..noise._exact import float_knorm_sample  # noqa: PLC0415

    m = rel.hessian.shape[0]
    _, iu, scale = _encode(rel.hessian)
    first = int(rel.public_corner)  # a public corner has no noise (release_symmetric)
    H = np.zeros((k, m, m))
    if len(iu[0]) > first:
        mech = KNormMechanism("linf", len(iu[0]) - first, rel.sensitivity, rel.epsilon)
        E = float_knorm_sample(mech.ball, rel.sensitivity / rel.epsilon, k, rng)
        H[:, iu[0][first:], iu[1][first:]] = E / scale[first:]
    return H + np.triu(H, 1).swapaxes(1, 2)


def feasible(H, n, intercept):
    """Which of the matrices ``H`` (``(k, m, m)``) can be a loss Hessian of ``n`` rows.

    Public facts about ``sum_i a_i z_i z_i^T`` with ``a_i in [0, 1/4]`` and ``|z_ij| <= 1``:
    it is PSD, every entry is at most ``n/4`` in absolute value, and with an intercept
    (``z_i0 = 1``) every diagonal entry is at most the first, ``sum_i a_i``.
    """
    ok = np.linalg.eigvalsh(H)[:, 0] >= 0.0
    ok &= np.all(np.abs(H) <= n * ENTRY_BOUND, axis=(1, 2))
    if intercept:
        ok &= np.all(np.diagonal(H, axis1=1, axis2=2) <= H[:, :1, 0], axis=1)
    return ok


def hessian_draws(rel, n_boot, rng):
    """``PSD(H~ - E*)``: ``n_boot`` fresh noise draws taken off the release, each projected onto
    the PSD cone (used for the KNG design Gram, ``_inference_quantile.py``)."""
    return _psd(rel.hessian[None] - _noise_draws(rel, n_boot, rng))


#: Rejection rounds of :func:`feasible_hessian_draws` (each proposes ``4 n_boot`` draws).
MAX_ROUNDS = 12


def feasible_hessian_draws(rel, n_boot, rng, intercept=True):
    """Plausible values of ``H_loss`` given its release: the flat-prior posterior on the set of
    feasible Hessians (:func:`feasible`), drawn by rejection: ``H~ - E*`` with ``E*`` a fresh
    draw of the release noise, kept when feasible. Drawing H per replicate carries the
    uncertainty of the curvature into the intervals (wider where it is noisy).

    The earlier projection of every ``H~ - E*`` onto the PSD cone piled the posterior mass of
    a noisy release onto singular matrices and so overstated the spread (widths 2-5x the
    oracle at n = 1e3, epsilon <= 1; ``docs/inference.md``). If too few proposals are
    feasible (a release far outside the feasible set), the projection is the fallback.
    """
    kept, tries = [], 0
    while sum(map(len, kept)) < n_boot and tries < MAX_ROUNDS:
        H = rel.hessian[None] - _noise_draws(rel, 4 * n_boot, rng)
        kept.append(H[feasible(H, rel.n, intercept)])
        tries += 1
    H = np.concatenate(kept)[:n_boot]
    if len(H) < n_boot:
        return hessian_draws(rel, n_boot, rng)
    return H


def bootstrap(estimator, n_boot=DEFAULT_N_BOOT, random_state=0):
    """``(estimate, draws)`` in user units, intercept first (see the module docstring)."""
    rel = _release(estimator)
    rng = check_random_state(random_state)
    H_loss = feasible_hessian_draws(rel, n_boot, rng, bool(estimator.fit_intercept))
    return linearised_draws(estimator, H_loss, rng)


def linearised_draws(estimator, H_loss, rng):
    """``(estimate, draws)`` of step 3 given one loss Hessian per replicate (``(B, m, m)``);
    the diagnosis ``benchmarks/_inference_logistic_diagnosis.py`` passes true Hessians."""
    from ..noise import KNormMechanism  # noqa: PLC0415
    from ..noise._exact import float_knorm_sample  # noqa: PLC0415

    theta = estimator.theta_[0]
    n_boot, m = H_loss.shape[:2]
    P = _penalty(estimator, m)
    H_inv = np.linalg.inv(H_loss + P)
    # sampling error of the score: N(0, H_loss), through a batched eigendecomposition
    w, Q = np.linalg.eigh(H_loss)
    xi = rng.standard_normal((n_boot, m)) * np.sqrt(np.maximum(w, 0.0))
    g = np.einsum("bij,bj->bi", Q, xi)
    eps_op = estimator.epsilon_per_problem_ - estimator.amp_epsilon_
    v_mech = KNormMechanism(estimator.norm_, m, estimator.sensitivity_, eps_op * estimator.q_)
    V = float_knorm_sample(v_mech.ball, v_mech.sensitivity / v_mech.epsilon, n_boot, rng)
    w_mech = KNormMechanism("l2", m, estimator.amp_sensitivity_, estimator.amp_epsilon_)
    W = float_knorm_sample(w_mech.ball, w_mech.sensitivity / w_mech.epsilon, n_boot, rng)
    draws = theta - np.einsum("bij,bj->bi", H_inv, g + P @ theta + V) + W
    return _user_units(estimator, theta[None, :])[0], _user_units(estimator, draws)


def _user_units(estimator, thetas):
    coef, intercept = estimator._unscale(thetas, *estimator.bounds_)
    return np.column_stack([intercept, coef]) if estimator.fit_intercept else coef


def poorly_determined(rel):
    """True when the Hessian noise is not small against its smallest eigenvalue."""
    lam = np.linalg.eigvalsh(rel.hessian)[0]
    return bool(lam <= 5.0 * float(np.sqrt(np.sum(rel.entry_sd**2))))


def released_values(estimator, rel):
    """The public quantities that seed the bootstrap: the released parameter ``theta_``, the
    released Hessian with its ``n`` and epsilon, and the fit's public budget.

    A fixed seed (0) made every release reuse the same Monte Carlo draws, so their error was
    common to all intervals instead of averaging out (up to +-5 % width per coordinate at
    B = 1000; docs/inference.md, "One seed per release"). Only released values enter the
    hash, so seeding is post-processing.
    """
    return (
        estimator.theta_,
        rel.hessian,
        rel.n,
        rel.epsilon,
        rel.sensitivity,
        estimator.epsilon_per_problem_,
        estimator.amp_epsilon_,
    )


#: Refits of the simulation bootstrap (``method="simulate"``, or ``"auto"`` where it fires):
#: about 8 ms each at n = 1e3, so about 1.6 CPU-s per release; the measured setting
#: (docs/inference.md, "Simulation bootstrap" and "method='auto'").
DEFAULT_N_SIM = 200
#: ``method="auto"`` simulates where the released shrinkage check exceeds this
#: (:func:`missing_shrinkage`): a 95 % normal interval that is ``1 + f`` times too narrow
#: covers ``2 Phi(1.96 / (1 + f)) - 1``, 0.938 at ``f = 0.05``, just inside the acceptance band
#: [0.93, 0.97] with room for the other approximations.
SHRINKAGE_LIMIT = 0.05


def _check_n_sim(n_sim):
    try:
        return check_n_boot(n_sim)
    except ValueError:
        raise ValueError(f"n_sim must be an integer >= 20, got {n_sim!r}.") from None


def missing_shrinkage(estimator, rel):
    """``max_j (H~^{-1} P)_jj`` from the released Hessian ``H~`` and the public penalty ``P``
    (``inf`` when ``H~`` is not positive definite).

    To first order ``theta~ ~= A theta0 + e`` with ``A = (H + P)^{-1} H``, and an interval that
    covers ``theta0`` needs the spread of ``A^{-1} theta~``: wider than the estimator's own by
    about ``(A^{-1})_jj = 1 + (H^{-1} P)_jj`` in coordinate ``j`` (docs/inference.md, "Why about
    1.27x is a floor"). The linearised (basic) interval has the estimator's own spread, so this
    is the width it misses where the curvature is known; the simulation's de-shrunk interval
    restores it. Released quantities only (``H~``, ``gamma_``, ``alpha``, ``l1_ratio``), so a rule
    that switches on it is post-processing."""
    H = rel.hessian
    if np.linalg.eigvalsh(H)[0] <= 0.0:  # the curvature is not even known to be positive
        return math.inf
    return float(np.max(np.diag(np.linalg.solve(H, _penalty(estimator, H.shape[0])))))


def linear_law_poor(estimator, rel):
    """True when :func:`missing_shrinkage` exceeds :data:`SHRINKAGE_LIMIT` (released
    quantities only): where ``method="auto"`` simulates instead of linearising."""
    return missing_shrinkage(estimator, rel) > SHRINKAGE_LIMIT


def _method(estimator, rel, method):
    """``"linear"`` or ``"simulate"`` (``method`` checked by the caller). ``"auto"``
    simulates where :func:`linear_law_poor` fires, else linearises, so every release whose
    check passes keeps its linearised intervals bit for bit."""
    if method != "auto":
        return method
    return "simulate" if linear_law_poor(estimator, rel) else "linear"


def _draws(estimator, n_boot, method="linear", n_sim=DEFAULT_N_SIM):
    """``(rel, used, draws)``: ``used`` is ``"linear"`` or ``"simulate"`` (``method`` checked by
    the caller; ``"auto"`` resolved by :func:`_method`), ``draws`` cached per release and key.

    ``"linear"``: ``(estimate, draws)`` in user units (:func:`bootstrap`, ``n_boot`` draws).
    ``"simulate"``: ``(theta~, refits, H_s)`` in scaled units
    (:func:`~._inference_logistic_sim.simulation_draws`, ``n_sim`` refits on the
    :data:`SIM_TARGET` design). Both are seeded by the release, so ``conf_int``, ``bse`` and
    ``summary`` of one method read the same draws, computed once. Both warn on the same
    released-quantity check."""
    n_boot, n_sim = check_n_boot(n_boot), _check_n_sim(n_sim)
    rel = _release(estimator)
    used = _method(estimator, rel, method)
    key = n_boot if used == "linear" else (used, n_sim)
    cache = getattr(estimator, "_inference_cache", None)
    if cache is None or cache[0] is not rel:
        cache = (rel, {})
        estimator._inference_cache = cache
    if key not in cache[1]:
        if used == "linear":
            # seeded by the releases: deterministic for one release, independent across releases
            seed = release_seed(*released_values(estimator, rel))
            cache[1][key] = bootstrap(estimator, n_boot, random_state=seed)
        else:
            from ._inference_logistic_sim import simulation_draws  # noqa: PLC0415

            cache[1][key] = simulation_draws(estimator, n_sim, SIM_TARGET)  # release-seeded
    if poorly_determined(rel):  # released quantities only: post-processing
        warnings.warn(
            "The privacy noise of the released Hessian is large against its smallest "
            "eigenvalue (small n * epsilon): the intervals are approximate. They are wide "
            "when each feature is centred within its public bounds, but can under-cover when "
            "a feature sits off-centre in them (the fit's shrinkage is then larger than the "
            "release can show); public bounds that centre each column help. See "
            "docs/inference.md, 'Non-centred designs'.",
            UserWarning,
            stacklevel=4,
        )
    return rel, used, cache[1][key]


def _index(estimator):
    return param_names(estimator, estimator.fit_intercept)


def _maybe_names(estimator):
    return _index(estimator) if getattr(estimator, "feature_names_in_", None) is not None else None


#: ``method=`` of ``conf_int``, ``bse`` and ``summary``: ``"auto"`` (opt-in: the simulation
#: where :func:`linear_law_poor` fires, else the linearised bootstrap), the linearised
#: bootstrap (the default), or the simulation bootstrap that refits the real mechanism ``n_sim``
#: times (:mod:`._inference_logistic_sim`: design matched to the posterior mean of the Hessian,
#: de-shrunk test inversion; measured in docs/inference.md, "Simulation bootstrap").
CONF_INT_METHODS = ("auto", "linear", "simulate")
#: The design target and the interval of ``method="simulate"``.
SIM_TARGET, SIM_INTERVAL = "posterior mean", "deshrunk"


def _check_method(method):
    if not isinstance(method, str) or method not in CONF_INT_METHODS:
        raise ValueError(f"method must be one of {CONF_INT_METHODS}, got {method!r}.")
    return method


def _interval(estimator, out, alpha, method, names):
    if method == "linear":
        est, draws = out
        return interval_output(est, draws, alpha, names)
    from ._inference_logistic_sim import interval_from_draws  # noqa: PLC0415

    return interval_from_draws(estimator, *out, alpha, SIM_INTERVAL, names)


def _estimate_and_spread(estimator, out, method):
    """The released estimate and the draws whose spread is ``bse`` (user units): the
    linearised draws, or the raw refits of the simulation (the spread of the released
    estimate in the synthetic world, not of the de-shrunk one the interval inverts)."""
    if method == "linear":
        return out
    theta, refits, _ = out
    return _user_units(estimator, theta[None])[0], _user_units(estimator, refits)


def conf_int(estimator, alpha=0.05, n_boot=DEFAULT_N_BOOT, method="linear", n_sim=DEFAULT_N_SIM):
    alpha = check_alpha(alpha)
    method = _check_method(method)
    _, used, out = _draws(estimator, n_boot, method, n_sim)
    return _interval(estimator, out, alpha, used, _maybe_names(estimator))


def bse(estimator, n_boot=DEFAULT_N_BOOT, method="linear", n_sim=DEFAULT_N_SIM):
    method = _check_method(method)
    _, used, out = _draws(estimator, n_boot, method, n_sim)
    return se_output(_estimate_and_spread(estimator, out, used)[1], _maybe_names(estimator))


def summary(estimator, alpha=0.05, n_boot=DEFAULT_N_BOOT, method="linear", n_sim=DEFAULT_N_SIM):
    alpha = check_alpha(alpha)
    method = _check_method(method)
    rel, used, out = _draws(estimator, n_boot, method, n_sim)
    est, draws = _estimate_and_spread(estimator, out, used)
    frame = summary_frame(est, draws, alpha, _index(estimator), first="coef")
    if used != "linear":  # the interval columns are conf_int's (the de-shrunk inversion)
        ci = np.asarray(_interval(estimator, out, alpha, used, None))
        frame[f"[{alpha / 2:g}"], frame[f"{1 - alpha / 2:g}]"] = ci[:, 0], ci[:, 1]
    fit_eps = float(estimator.epsilon_per_problem_)
    info = {
        "n": rel.n,
        "epsilon spent": f"{fit_eps + rel.epsilon:g} (fit {fit_eps:g}, Hessian {rel.epsilon:g})",
        "delta spent": "0",
        "mechanism": f"objective perturbation, q={estimator.q_:g}, gamma={estimator.gamma_:.4g}",
        "norm": f"{estimator.norm_} (V), l2 (output noise W), linf (Hessian)",
        "interval": (
            f"basic parametric bootstrap (linearised), {n_boot} draws"
            if used == "linear"
            else f"simulation bootstrap (de-shrunk), {n_sim} certified refits"
        ),
    }
    return Summary(frame, info, title="Private logistic regression (objective perturbation)")
