"""Coverage cells of ``benchmarks.inference`` for the logistic, quantile and median estimators.

Each ``*_cells(n, reps, n_boot, seed)`` returns ``{epsilon: (estimates, intervals)}`` with
estimates ``(reps, k)`` and 95% intervals ``(reps, k, 2)``; every interval spends, together
with its fit, exactly the cell's epsilon (the fit gets ``1 - SHARE`` of it, the extra
inference release ``SHARE``; the logistic and KNG cells use their own shares and also return
the estimates of a whole-epsilon fit).
"""

from __future__ import annotations

import warnings

import numpy as np

from dpreg.inference import KNG_CURVATURE_SHARE, MEDIAN_SCALE_SHARE

EPS_GRID = [0.25, 1.0, 4.0]
SHARE = MEDIAN_SCALE_SHARE  # the library's suggestion (dpreg.inference.interval_share)

LOGIT_BETA = np.array([0.5, 1.5, -1.0])  # intercept first
LOGIT_NAMES = ["const", "x1", "x2"]


def simulate_logistic(n, rng):
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    p = 1.0 / (1.0 + np.exp(-(LOGIT_BETA[0] + X @ LOGIT_BETA[1:])))
    return X, (rng.uniform(size=n) < p).astype(int)


def deshrunk(model, X, truth=LOGIT_BETA):
    """``(I + H0^{-1} P) theta~`` in user units: the released estimate with the shrinkage of the
    fit's penalty ``P`` (gamma and the ridge) undone by the loss Hessian ``H0`` of this data
    set at the *true* parameter (known in simulation only).

    Why (docs/inference.md, "Which oracle"): to first order ``theta~ ~ A theta0 + noise`` with
    ``A = (H0 + P)^{-1} H0``, so an interval that covers ``theta0`` must be at least as wide as
    the spread of ``A^{-1} theta~``, i.e. wider than the estimator's own spread by about
    ``(H0 + P) / H0`` per coordinate. The 2.5-97.5% spread of these values over the data sets
    is the width of that linearised oracle (the Neyman interval of an oracle that knows the
    estimator's law as a function of theta0). ``bounds_X = (-1, 1)``: the scaled parameter is
    the user's, so ``truth`` is used as it is."""
    from scipy.special import expit  # noqa: PLC0415

    from dpreg.linear_model import _inference_logistic as il  # noqa: PLC0415

    Z = np.column_stack([np.ones(len(X)), model._scale(X, *model.bounds_)])
    a = expit(Z @ truth)
    H0 = (Z * (a * (1.0 - a))[:, None]).T @ Z
    theta = model.theta_[0]
    P = il._penalty(model, len(theta))
    out = theta + np.linalg.solve(H0, P @ theta)
    return il._user_units(model, out[None])[0]


def logistic_releases(n, reps, seed, eps_grid=EPS_GRID):
    """Yield ``(X, epsilon, model, full)`` in the random stream of :func:`logistic_cells`: per
    data set and epsilon the fit with ``(1 - share) epsilon`` with its ``release_hessian`` at
    ``share epsilon`` (``hessian_share``), then a fit with the whole epsilon. The intervals
    draw nothing from the stream, so a replay without them sees the same releases
    (``benchmarks/_inference_logistic_auto.py`` reads the released check of the committed
    data sets this way)."""
    from dpreg import BudgetAccountant, ObjectivePerturbationLogistic  # noqa: PLC0415
    from dpreg.linear_model._inference_logistic import hessian_share  # noqa: PLC0415

    # its own ledger: thousands of spends on the process-global one make each spend slower
    ledger = BudgetAccountant()

    def fit(X, y, epsilon, rng):
        return ObjectivePerturbationLogistic(
            epsilon=epsilon, bounds_X=(-1, 1), classes=[0, 1], random_state=rng, accountant=ledger
        ).fit(X, y)

    rng = np.random.default_rng(seed)
    for _ in range(reps):
        X, y = simulate_logistic(n, rng)
        for eps in eps_grid:
            share = hessian_share(n, eps)
            model = fit(X, y, (1 - share) * eps, rng)
            model.release_hessian(X, y, share * eps, random_state=rng)
            yield X, eps, model, fit(X, y, eps, rng)


def logistic_cells(n, reps, n_boot, seed, eps_grid=EPS_GRID, method="linear"):
    """``{epsilon: (estimates, intervals, full, deshrunk)}``: fits with ``(1 - share) epsilon``
    and their intervals (``release_hessian`` at ``share epsilon``, ``hessian_share``;
    ``conf_int(method=method)``, the library's default ``"linear"``), the estimates of a fit with
    the whole epsilon on the same data (the equal-budget oracle), and the released estimates
    de-shrunk with the true Hessian (:func:`deshrunk`, the linearised Neyman oracle)."""
    out = {eps: ([], [], [], []) for eps in eps_grid}
    for X, eps, model, full in logistic_releases(n, reps, seed, eps_grid):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ci = model.conf_int(0.05, n_boot=n_boot, method=method)
        est, whole, ds = logistic_estimates_of(X, model, full)
        for dest, value in zip(out[eps], (est, ci, whole, ds)):
            dest.append(value)
    return {eps: tuple(np.array(a) for a in v) for eps, v in out.items()}


def logistic_estimates_of(X, model, full):
    """The three estimates the logistic oracles are spreads of, for one release of
    :func:`logistic_releases`: the released fit's, the whole-epsilon fit's and the released
    one de-shrunk by the true Hessian (:func:`deshrunk`), each ``(const, x1, x2)``."""
    return (
        np.r_[model.intercept_, model.coef_.ravel()],
        np.r_[full.intercept_, full.coef_.ravel()],
        deshrunk(model, X),
    )


def logistic_estimates(n, reps, seed, eps_grid=EPS_GRID):
    """``{epsilon: (estimates, full, deshrunk)}``, each ``(reps, 3)`` (also for ``reps = 0``):
    :func:`logistic_cells` without the intervals, on the same releases
    (:func:`logistic_releases`, which also releases the Hessian, so the stream is the same).
    With a committed run's seed it replays that run's estimates (the intervals draw nothing
    from the stream); with another seed it gives estimate-only data sets for the pooled
    oracle widths of ``benchmarks.inference.run_logistic``."""
    out = {eps: ([], [], []) for eps in eps_grid}
    for X, eps, model, full in logistic_releases(n, reps, seed, eps_grid):
        for dest, value in zip(out[eps], logistic_estimates_of(X, model, full)):
            dest.append(value)
    k = len(LOGIT_BETA)
    return {eps: tuple(np.array(a).reshape(-1, k) for a in v) for eps, v in out.items()}


MEDIAN_TRUTH = np.array([3.0, -1.0])
MEDIAN_NAMES = ["x1", "x2"]
#: The public scale a user who knows the data's standard deviations passes (``scale=``).
MEDIAN_PUBLIC_SCALE = np.array([1.0, 1.0])
#: The two configurations scored in every cell: the default (data-derived MAD) scale and
#: the public scale.
MEDIAN_CONFIGS = ("default", "public")


def median_fit(X, epsilon, config, rng):
    """The fit a user would run for intervals: ``norm="linf"``, default, public or private
    (``scale="private"``) scale."""
    from dpreg import PrivateProjectionMedian  # noqa: PLC0415

    scale = {"default": "mad", "private": "private"}.get(config, MEDIAN_PUBLIC_SCALE)
    return PrivateProjectionMedian(epsilon=epsilon, norm="linf", scale=scale, random_state=rng)


def median_cells(n, reps, n_boot, seed, eps_grid=EPS_GRID, configs=MEDIAN_CONFIGS, start=0):
    """``{(config, epsilon): cell}`` over ``reps`` data sets ``x ~ N((3, -1), I_2)``; data set
    ``i`` has its own stream ``default_rng([seed, i])`` (chunks concatenate). Each config is
    fitted with ``(1 - SHARE) epsilon`` and ``release_scale`` gets ``SHARE epsilon``, so every
    interval spends exactly epsilon. A cell holds the released ``est`` (k, 2) and ``ci``
    (k, 2, 2), the number of data sets tried (``attempts``) and of those whose private test
    failed (``failed``: nothing released, counted and never dropped), of which ``refused``
    were refused before anything was spent (``PTRInfeasibleError``: the public parameters
    make the test fail on every data set), the public inverse temperature ``c`` of the
    release and the released standard errors of the median ``median_sd`` (k, 2)."""
    from dpreg.exceptions import PTRInfeasibleError, PTRTestFailedError  # noqa: PLC0415
    from dpreg.location._inference import inverse_temperature  # noqa: PLC0415

    keys = [(cfg, eps) for cfg in configs for eps in eps_grid]
    out = {
        key: dict(est=[], ci=[], median_sd=[], attempts=reps, failed=0, refused=0, c=None)
        for key in keys
    }
    for i in range(start, start + reps):
        rng = np.random.default_rng([seed, i])
        X = rng.standard_normal((n, 2)) + MEDIAN_TRUTH
        for cfg, eps in keys:
            cell = out[cfg, eps]
            model = median_fit(X, (1 - SHARE) * eps, cfg, rng)
            try:
                model.fit(X)
            except PTRTestFailedError as err:  # includes PTRInfeasibleError
                cell["failed"] += 1
                cell["refused"] += isinstance(err, PTRInfeasibleError)
                continue
            model.release_scale(X, SHARE * eps, random_state=rng)
            cell["c"] = inverse_temperature(model)
            cell["est"].append(model.location_.copy())
            cell["ci"].append(model.conf_int(0.05, n_boot=n_boot))
            cell["median_sd"].append(model.inference_release_.median_sd.copy())
    for cell in out.values():
        cell["est"] = np.array(cell["est"]).reshape(-1, 2)
        cell["ci"] = np.array(cell["ci"]).reshape(-1, 2, 2)
        cell["median_sd"] = np.array(cell["median_sd"]).reshape(-1, 2)
    return out


def median_cells_extended(n, reps, n_boot, seed, eps_grid=EPS_GRID):
    """:func:`median_cells` with more data sets for some configurations: ``reps`` maps each
    configuration to its number of data sets, e.g. ``{"default": 300, "public": 1000}``.

    Data sets ``0 <= i < min(reps)`` are fitted with every configuration, as by
    :func:`median_cells` with that many data sets (so its cells are reproduced exactly);
    each configuration then continues alone on data sets ``min(reps) <= i < reps[config]``.
    Data set ``i`` keeps its stream ``default_rng([seed, i])`` and its data; on an extension
    data set the configuration's privacy draws come first in the stream's remainder (the
    configurations before it were not fitted there), so they are other draws than a run of
    every configuration would make, from the same law and independent across data sets."""
    first = min(reps.values())
    cells = median_cells(n, first, n_boot, seed, eps_grid, configs=tuple(reps))
    for cfg, total in reps.items():
        if total > first:
            more = median_cells(n, total - first, n_boot, seed, eps_grid, (cfg,), start=first)
            for key, cell in more.items():
                cells[key] = concat_median(cells[key], cell)
    return cells


def concat_median(a, b):
    """One cell of :func:`median_cells` from two cells over consecutive data sets."""
    out = {k: np.concatenate([a[k], b[k]]) for k in ("est", "ci", "median_sd")}
    out |= {k: a[k] + b[k] for k in ("attempts", "failed", "refused")}
    return out | {"c": a["c"] if a["c"] is not None else b["c"]}


#: Population values of N(0, 1): the MAD (= the IQR / 2) and the sparsity 1 / f(0).
NORMAL_MAD = 0.6744897501960817
NORMAL_SPARSITY = float(np.sqrt(2.0 * np.pi))


def median_asymptotic(n, c, config, size, rng):
    """``size`` draws of the asymptotic law of the released median on this model:
    ``m + N(0, 2 pi / (4 n)) + sigma * R U``, ``R ~ Gamma(3, 1/c)``, ``U ~ U[-1, 1]^2``
    with the population scale ``sigma`` (MAD of N(0, 1), or the public scale 1). The noise
    part is the exact release law; only the median's normal law is asymptotic. An oracle
    without the Monte Carlo noise of a few hundred data sets."""
    sigma = np.full(2, NORMAL_MAD) if config == "default" else MEDIAN_PUBLIC_SCALE
    if config == "private":  # the population value of the released scale (its noise ignored)
        from dpreg.location._private_scale import SCALE_FACTOR  # noqa: PLC0415

        sigma = np.full(2, SCALE_FACTOR * NORMAL_MAD)
    sd = NORMAL_SPARSITY / (2.0 * np.sqrt(n))
    R = rng.gamma(3.0, 1.0 / c, size=(size, 1))
    U = rng.uniform(-1.0, 1.0, size=(size, 2))
    return MEDIAN_TRUTH + sd * rng.standard_normal((size, 2)) + sigma * R * U


KNG_BETA = np.array([1.0, 2.0, -1.0])  # intercept first; the median of y given x
KNG_NAMES = ["const", "x1", "x2"]
#: The KNG intervals need a larger curvature share than the logistic's Hessian: the Gram
#: matrix (five unknown entries) and the sparsity (docs/inference.md). 0.4 against 0.2 at
#: n = 1e3, epsilon = 1: width ratios 1.11-1.53 in three runs against 3.7-6.0 (session 8,
#: two residual quantiles for the sparsity; session 9 releases one).
KNG_SHARE = KNG_CURVATURE_SHARE


def shifted_x1(X, x1_low):
    """``X`` (drawn ``U[-1, 1]^2``) with its first column mapped affinely onto
    ``U[x1_low, 1]``: the same random stream, a non-centred design for ``x1_low > -1``
    (``benchmarks/_inference_robust.py``); ``x1_low = -1`` returns ``X`` unchanged."""
    if x1_low != -1.0:
        X[:, 0] = x1_low + (1.0 - x1_low) * (X[:, 0] + 1.0) / 2.0
    return X


def kng_errors(rng, n):
    """The KNG cells' errors, N(0, 1) (``_inference_kng_errors.error_law`` swaps in others)."""
    return rng.standard_normal(n)


def kng_data(n, rng, x1_low=-1.0):
    """``(X, y)`` of the KNG cells: ``x ~ U[-1, 1]^2`` (``x1 ~ U[x1_low, 1]``,
    :func:`shifted_x1`), ``y = 1 + 2 x1 - x2 + e`` with ``e`` from :func:`kng_errors`
    (N(0, 1)), drawn first from ``rng``, the design before the errors."""
    X = shifted_x1(rng.uniform(-1.0, 1.0, size=(n, 2)), x1_low)
    return X, KNG_BETA[0] + X @ KNG_BETA[1:] + kng_errors(rng, n)


def kng_fit(X, y, epsilon, rng, bounds_X=(-1, 1), accountant=None, quantile=0.5):
    """The KNG fit of every KNG cell: public ``bounds_X``, ``bounds_y = (-7, 9)``, its privacy
    draws from ``rng`` (the data set's stream). ``accountant``: the ledger it spends from (the
    process-global one by default; a ledger draws nothing, so the release is the same).
    ``quantile``: the level (the cells' 1/2 unless a diagnosis asks for another)."""
    from dpreg import KNGQuantileRegressor  # noqa: PLC0415

    return KNGQuantileRegressor(
        epsilon=epsilon,
        quantile=quantile,
        bounds_X=bounds_X,
        bounds_y=(-7, 9),
        random_state=rng,
        progress_bar=False,
        accountant=accountant,
    ).fit(X, y)


def kng_releases(
    n,
    reps,
    seed,
    eps_grid=EPS_GRID,
    share=KNG_SHARE,
    full_fits=True,
    start=0,
    x1_low=-1.0,
    bounds_X=(-1, 1),
    curvature=True,
    accountant=None,
    quantile=0.5,
):
    """Yield ``(i, X, y, epsilon, model, full)`` in the random stream of :func:`kng_cells`:
    data set ``i`` (``start <= i < start + reps``) from ``default_rng([seed, i])``
    (:func:`kng_data`), then per epsilon of ``eps_grid`` in order the fit at ``(1 - share)
    epsilon``, its ``release_curvature`` at ``share epsilon`` and, with ``full_fits``, the fit
    at the whole epsilon (``full``, else ``None``), all drawing from that stream.

    ``conf_int`` draws nothing from the stream (its bootstrap is seeded by the release,
    ``release_seed``), so this replay without intervals sees :func:`kng_cells`' very
    releases. ``curvature=False`` skips the curvature release (the estimate-only data sets of
    :func:`kng_estimates`): the first fit of a data set is then :func:`kng_cells`' first fit,
    every later draw of the stream goes to other uses (same laws, other values).
    ``accountant``: the ledger of every fit and release, ``quantile`` their level
    (:func:`kng_fit`)."""
    for i in range(start, start + reps):
        rng = np.random.default_rng([seed, i])
        X, y = kng_data(n, rng, x1_low)
        for eps in eps_grid:
            model = kng_fit(X, y, (1 - share) * eps, rng, bounds_X, accountant, quantile)
            if curvature:
                model.release_curvature(X, y, share * eps, random_state=rng)
            full = kng_fit(X, y, eps, rng, bounds_X, accountant, quantile) if full_fits else None
            yield i, X, y, eps, model, full


def kng_estimates(n, reps, seed, eps_grid=EPS_GRID, share=KNG_SHARE, start=0, curvature=False):
    """``{epsilon: (estimates, full)}`` (each ``(reps, 3)``, intercept first) of
    :func:`kng_releases` with ``full_fits``: the released estimator's estimates (fit at
    ``(1 - share) epsilon``) and the whole-epsilon fit's, no intervals. With the default
    ``curvature=False``: estimate-only data sets for the oracles (no curvature release, which
    the estimates do not need); give them a ``seed`` of their own. ``curvature=True`` replays
    a coverage run's estimates (:func:`kng_cells` with the same arguments). The fits spend
    from a ledger of their own (thousands of spends on the process-global one slow each
    spend; the ledger draws nothing)."""
    from dpreg import BudgetAccountant  # noqa: PLC0415

    out = {eps: ([], []) for eps in eps_grid}
    ledger = BudgetAccountant()
    for _, _, _, eps, model, full in kng_releases(
        n, reps, seed, eps_grid, share, True, start, curvature=curvature, accountant=ledger
    ):
        out[eps][0].append(np.r_[model.intercept_, model.coef_])
        out[eps][1].append(np.r_[full.intercept_, full.coef_])
    return {
        eps: (np.array(a).reshape(-1, 3), np.array(b).reshape(-1, 3)) for eps, (a, b) in out.items()
    }


def kng_cells(
    n,
    reps,
    n_boot,
    seed,
    eps_grid=EPS_GRID,
    share=KNG_SHARE,
    full_fits=True,
    start=0,
    x1_low=-1.0,
    bounds_X=(-1, 1),
):
    """Median regression, ``y = 1 + 2 x1 - x2 + N(0, 1)``, ``x ~ U[-1, 1]^2`` (``x1 ~
    U[x1_low, 1]`` when ``x1_low > -1``, :func:`shifted_x1`).

    Returns ``{epsilon: (estimates, intervals, full, law)}``: the estimates of fits with
    ``(1 - share) epsilon`` and their intervals (with ``release_curvature`` at ``share
    epsilon``, so each interval spends exactly epsilon), and ``full``, the estimates of a
    fit with the whole epsilon on the same data set: the oracle at equal total epsilon (an
    oracle that knows the sampling law would not pay for the curvature), and ``law``, the
    public K-norm law ``(ball, scale)`` of the released fit (for :func:`kng_asymptotic`; the
    whole-epsilon fit has the same ball and ``scale / (1 - share)``, as ``scale = epsilon /
    (2 Delta)``). With ``full_fits=False`` ``full`` is empty: at n = 1e5 a fit costs seconds
    and the asymptotic law is then an accurate oracle. Data set ``i`` (``start <= i < start +
    reps``) has its own stream ``default_rng([seed, i])``, so a run can be split into chunks
    and concatenated (:func:`concat_cells`) with the same result. ``bounds_X``: the public
    feature bounds of every fit (the data, their stream and ``bounds_y`` are unchanged; e.g.
    ``((x1_low, -1), (1, 1))`` centres the scaled x1, ``_inference_kng_robust remedy``).
    The fits and releases are :func:`kng_releases`'."""
    out = {eps: ([], [], []) for eps in eps_grid}
    laws = {}
    releases = kng_releases(n, reps, seed, eps_grid, share, full_fits, start, x1_low, bounds_X)
    for _, _, _, eps, model, full in releases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            ci = model.conf_int(0.05, n_boot=n_boot)
        out[eps][0].append(np.r_[model.intercept_, model.coef_])
        out[eps][1].append(ci)
        laws.setdefault(eps, (model.kng_release_.ball, model.kng_release_.scale))
        if full_fits:
            out[eps][2].append(np.r_[full.intercept_, full.coef_])
    return {eps: (*(np.array(a) for a in v), laws[eps]) for eps, v in out.items()}


def concat_cells(chunks):
    """Concatenate the outputs of chunked :func:`kng_cells` calls (in order)."""
    return {
        eps: (
            *(np.concatenate([c[eps][j] for c in chunks]) for j in range(3)),
            chunks[0][eps][3],
        )
        for eps in chunks[0]
    }


def kng_asymptotic(n, ball, scale, size, rng, gram=None, sparsity=NORMAL_SPARSITY):
    """``size`` draws of the asymptotic law of a KNG fit on this model: ``theta0 + s G^{-1}
    (xi + V)`` (docs/inference.md, "The law of the release") with the population Gram matrix
    ``G = n diag(1, 1/3, 1/3)`` of ``x ~ U[-1, 1]^2``, the sparsity ``s = sqrt(2 pi)`` of
    N(0, 1) errors at the median, ``xi ~ N(0, G / 4)`` and ``V`` the fit's K-norm noise
    (density ``∝ exp(-scale ||v||_ball)``). ``bounds_X = (-1, 1)``, so the
    scaled parameters are the user's. A second oracle: as many draws as wanted, no Monte
    Carlo noise from few data sets, but only asymptotic (it ignores the box and the
    non-linearity of the gradient, which matter at small n * epsilon). ``gram``: another
    design's population Gram matrix ``G`` (3, 3), e.g. that of :func:`shifted_x1`'s design
    (``xi ~ N(0, G / 4)`` then via its Cholesky factor and ``G^{-1}`` by a solve).
    ``sparsity``: ``1 / f(0)`` of another error law at its median (``_inference_kng_errors``)."""
    from dpreg.noise._exact import float_knorm_sample  # noqa: PLC0415

    if gram is not None:
        xi = rng.standard_normal((size, 3)) @ np.linalg.cholesky(0.25 * gram).T
        V = float_knorm_sample(ball, 1.0 / scale, size, rng)
        return KNG_BETA + sparsity * np.linalg.solve(gram, (xi + V).T).T
    g = n * np.array([1.0, 1.0 / 3.0, 1.0 / 3.0])
    xi = rng.standard_normal((size, 3)) * np.sqrt(0.25 * g)
    V = float_knorm_sample(ball, 1.0 / scale, size, rng)
    return KNG_BETA + sparsity * (xi + V) / g
