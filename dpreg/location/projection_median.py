"""Differentially private projection-depth median (Ramsay & Spicker; seed 004), exactly sampled.

Mechanism
---------
Directions ``U = {u_1..u_m}`` are fixed before the data are seen (``norm=``, ``random_state``).
With ``mu_u`` the median and ``sigma_u`` the MAD (or IQR) of the projections ``u^T x_i``, the
outlyingness is ``O_D(x) = max_u |u^T x - mu_u| / sigma_u`` and the release is one draw from
``p_D(x) ∝ exp(-c O_D(x))``. Because O has no finite global sensitivity, the release is guarded
by propose-test-release (PTR) on a lower bound of the distance to "unsafe" data sets.

Privacy guarantee: (epsilon, delta)-DP, replace-one adjacency, n public
------------------------------------------------------------------------
Budget split: the test uses ``epsilon_t = f epsilon`` and the release ``epsilon_r = (1-f)
epsilon`` with a data-independent f (``test_fraction``; SPEC's 0.5, or the noise-minimising
"auto" choice of :func:`choose_split`). Both use the full delta (the two deltas do not add,
see step 4).

1. *Pairwise closeness.* For neighbours D, D' and x with ``O_D(x) <= tau``, per direction
   ``|t - mu'|/s' - |t - mu|/s <= (tau |s - s'| + |mu - mu'|) / s'`` (triangle inequality with
   ``|t - mu| <= tau s``). So ``O_D' - O_D <= eta`` on ``{O_D <= tau}`` and symmetrically,
   whenever ``max_u (tau |Δsigma_u| + |Δmu_u|) / min(sigma_u, sigma'_u) <= eta``.
2. *Tail.* If additionally ``P_D(O_D > tau) <= g`` and ``P_D'(O_D' > tau) <= g``, then for every
   event A: ``P_D(A) <= e^{2 c eta} / (1 - g) P_D'(A) + g`` (split A by ``{O_D <= tau}``; bound
   the ratio of normalising constants on ``{O_D' <= tau}``). With
   ``c = (epsilon_r - log(1/(1-delta))) / (2 eta)`` and ``g = delta`` the release is
   (epsilon_r, delta)-indistinguishable on such pairs. (SPEC's ``c = epsilon / (4 eta)``
   ignores the ``1/(1-g)`` factor; we subtract it exactly, a relative change of order delta.)
   ``P_D(O > tau)`` is bounded through the minimum ``o = min O_D`` only (``tail_log_bound``).
3. *Safety margin.* D is *safe* if 1-2 hold for D and every neighbour. Certificate ``C_j(D)``:
   ``F_j(D) <= eta`` and ``T_{j+1}(D) <= o_max`` where F_j bounds the pairwise closeness over all
   pairs (D'', D''') with D'' within j changes of D (order-statistic bounds, ``_sensitivity``)
   and ``T_{j+1}`` bounds ``min O`` over all data sets within j+1 changes; ``o_max`` is the
   largest o whose tail bound is ``<= delta``. ``C_j(D)`` implies every data set within j
   changes of D is safe. ``h(D) = max{k : C_0(D), ..., C_{k-1}(D)}`` (capped), so ``h(D) = 0``
   when D is unsafe. Every bound is monotone (``C_j(D)`` implies ``C_{j-1}(D')`` for neighbours
   D'), hence ``|h(D) - h(D')| <= 1``: h has global sensitivity 1.
4. *Test.* Pass iff ``h(D) + Lap(1/epsilon_t) > log(1/(2 delta)) / epsilon_t``: epsilon_t-DP,
   and an unsafe D passes with probability ``<= delta``. PTR composition (case D safe: the release
   step contributes delta; case D unsafe: the pass event contributes delta; never both) gives
   ``P(PTR(D) in A) <= e^{epsilon} P(PTR(D') in A) + delta``.

A failed test raises :class:`~dpreg.exceptions.PTRTestFailedError` (nothing released, budget
spent). The exact sampler (``_sampler.ExactSampler``) makes step 2 hold for the actual output;
``sampler="hit_and_run"`` is approximate and warns.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_delta, check_epsilon, check_random_state
from ..accounting import check_accountant
from ..exceptions import PrivacyLeakWarning, PTRInfeasibleError, PTRTestFailedError
from ..noise import LaplaceMechanism
from . import _certificate, _private_scale, _trimmed
from . import _sensitivity as sens
from ._grid_release import round_relative
from ._sampler import ExactSampler, hit_and_run, projection_median_lp
from ._trimmed import release_trimmed_mean

#: Calibrated constants ``(kappa_inf, kappa_1)`` of the default eta (see ``default_eta``).
ETA_CONSTANTS = {"mad": (9.5, 13.0), "iqr": (6.0, 6.0), "public": (10.0, 0.0)}
#: Largest dimension in which the exact sampler is used with general (non-axis) directions.
MAX_EXACT_DIM = 10
#: Target probability that the test fails on well-behaved data, used by the default eta.
TARGET_FAILURE = 0.01
#: Relative ladder step of the certified closeness (absorbs rounding in F_j; see _safety_margin).
FLOAT_SLACK = 1e-6
#: Ladder step of the min-O allowance (absorbs an LP point at most this far above the optimum).
LP_SLACK = 1e-6
#: Default number of projected values (directions x rows) per fit (see default_n_directions).
DIRECTION_BUDGET = 5e7
#: ``tau="auto"`` picks the smallest tau whose certified ``min O`` allowance reaches this.
AUTO_TAU_TARGET = 0.4


def _row_count(X):
    """The number of rows of an array-like without reading its values (None if unknown)."""
    shape = getattr(X, "shape", None)
    try:
        if shape is not None:  # (a lazy array's unknown length is NaN: None then)
            return int(shape[0]) if len(shape) else None
        return len(X)
    except (TypeError, ValueError):
        return None


def default_delta(n):
    """Default delta: ``min(1e-5, n^{-3/2})``, well below ``1/n``."""
    return min(1e-5, float(n) ** -1.5)


def ptr_threshold(epsilon, delta, test_fraction=0.5):
    """The PTR threshold ``log(1/(2 delta)) / epsilon_test``, ``epsilon_test = f * epsilon``."""
    return math.log(1.0 / (2.0 * delta)) / (test_fraction * epsilon)


def required_margin(epsilon, delta, beta=TARGET_FAILURE, test_fraction=0.5):
    """Smallest integer safety margin that passes the test with probability >= 1 - beta."""
    slack = math.log(1.0 / (2.0 * beta)) / (test_fraction * epsilon)
    margin = ptr_threshold(epsilon, delta, test_fraction) + slack
    if not math.isfinite(margin):  # public inputs only (delta 1e-320: log(1 / 2 delta) = inf)
        raise ValueError(
            "delta (or epsilon) is too small for the PTR test: its margin "
            "log(1 / (2 delta)) / (test_fraction epsilon) must be finite; use delta >= 1e-300, "
            f"got epsilon={epsilon!r}, delta={delta!r}."
        )
    return max(1, math.ceil(margin))


def default_eta(n, epsilon, delta, tau, scale="mad", test_fraction=0.5):
    """Data-independent default ``eta = kappa(k) (tau + 1) (k + 1) / n``,
    ``kappa(k) = kappa_inf + kappa_1 / k``, with k from :func:`required_margin`.

    The certificate's sensitivity bound ``F_j`` grows like ``(tau + 1)(j + 1) / (n f sigma)`` on
    data whose projected density f is bounded away from 0 near the median and the MAD
    interval ends; ``kappa`` (``ETA_CONSTANTS``) was calibrated on N(0, I), 25%-contaminated
    and Cauchy samples (n = 50,000, d from 2 to 20, up to 1,000 directions) so that
    ``F_{k-1} <= eta`` in all draws we made (see docs/projection_median.md).
    """
    k = required_margin(epsilon, delta, test_fraction=test_fraction)
    k_inf, k_1 = ETA_CONSTANTS[scale]
    return (k_inf + k_1 / k) * (tau + 1.0) * (k + 1.0) / n


def release_inverse_temperature(epsilon, delta, eta, test_fraction=0.5):
    """``c = (epsilon_release - log(1/(1-delta))) / (2 eta)`` (module docstring, step 2)."""
    return ((1.0 - test_fraction) * epsilon + math.log1p(-delta)) / (2.0 * eta)


def auto_tau(
    n, dim, epsilon, delta, scale="mad", eta=None, target=AUTO_TAU_TARGET, test_fraction=0.5
):
    """Data-independent tau: the smallest value on a geometric grid in [0.25, 20] whose
    tail allowance ``o_max`` (largest certified ``min O``) reaches ``target``; if none does,
    the grid value with the largest allowance."""
    if scale == "public":  # no tail certificate: O's closeness holds everywhere (tau unused)
        return 0.0
    best, best_o = None, -np.inf
    for tau in 0.25 * 1.1 ** np.arange(47):
        e = default_eta(n, epsilon, delta, tau, scale, test_fraction) if eta is None else eta
        c = release_inverse_temperature(epsilon, delta, e, test_fraction)
        if c <= 0:
            break
        o = sens.max_min_outlyingness(c, tau, dim, delta)
        if o >= target:
            return float(tau)
        if o > best_o:
            best, best_o = float(tau), o
    return best if best is not None else 1.0


def choose_split(n, dim, epsilon, delta, scale="mad", tau="auto", eta=None):
    """Data-independent budget split ``(test_fraction, tau, eta)``.

    With the default eta, the release noise scales like ``1 / c = 2 eta / epsilon_release``,
    and eta jumps with the integer margin k, so the fraction of epsilon spent on the test is
    chosen on a grid in [0.4, 0.6] (where kappa was calibrated) to minimise
    ``eta / epsilon_release`` (0.5 when eta is given). Only (n, d, epsilon, delta) enter: the
    split is public.
    """
    fractions = np.round(np.arange(0.40, 0.6001, 0.01), 2) if eta is None else [0.5]
    best = None
    for f in fractions:
        t = auto_tau(n, dim, epsilon, delta, scale, eta, test_fraction=f) if tau == "auto" else tau
        e = default_eta(n, epsilon, delta, t, scale, f) if eta is None else eta
        if release_inverse_temperature(epsilon, delta, e, f) <= 0:
            continue
        score = e / ((1.0 - f) * epsilon)
        if best is None or score < best[0] - 1e-12:
            best = (score, float(f), t, e)
    if best is None:
        return 0.5, (1.0 if tau == "auto" else tau), eta
    return best[1:]


def default_n_directions(n_features, n_samples=None):
    """``min(1000, max(200, 100 d))``, capped at ``max(20 d, DIRECTION_BUDGET / n)`` for large n.

    A fit sorts ``m n`` projections and runs the certificates on each of the m rows, so its
    cost is proportional to ``m n``; the cap keeps that near ``DIRECTION_BUDGET`` (it binds only
    above n = 250,000 at d = 2, and 50,000 at d = 10). Public: n and d only.
    """
    d = int(n_features)
    m = int(min(1000, max(200, 100 * d)))
    if n_samples is not None:
        m = min(m, max(20 * d, math.ceil(DIRECTION_BUDGET / max(int(n_samples), 1))))
    return m


def make_directions(norm, n_features, n_directions, rng, n_samples=None):
    """The data-independent direction set U (rows normalised to unit l2 length)."""
    d = n_features
    if isinstance(norm, str):
        key = norm.lower()
        if key == "linf":
            return np.eye(d)
        m = n_directions if n_directions is not None else default_n_directions(d, n_samples)
        if key == "l2":
            if d == 1:
                return np.ones((1, 1))
            U = rng.standard_normal((m, d))
        elif key == "l1":
            if d == 1:
                U = np.ones((1, 1))
            elif d <= 20 and 2 ** (d - 1) <= m:
                grid = np.array(np.meshgrid(*[[1.0, -1.0]] * (d - 1), indexing="ij"))
                U = np.column_stack([np.ones(2 ** (d - 1)), grid.reshape(d - 1, -1).T])
            else:
                U = rng.choice([-1.0, 1.0], size=(m, d))
        else:
            raise ValueError(
                f"norm must be 'l1', 'l2', 'linf' or an array of directions, got {norm!r}."
            )
    else:
        U = np.asarray(norm, dtype=float)
        if U.ndim != 2 or U.shape[1] != d or U.shape[0] < 1:
            raise ValueError(f"directions passed as norm= must have shape (m, {d}), got {U.shape}.")
        if not np.all(np.isfinite(U)):
            raise ValueError("directions must be finite.")
    lengths = np.linalg.norm(U, axis=1)
    if np.any(lengths == 0):
        raise ValueError("directions must be non-zero.")
    U = U / lengths[:, None]
    if np.linalg.matrix_rank(U) < d:
        raise ValueError("the directions must span R^d (otherwise exp(-c O) is not integrable).")
    return U


class PrivateProjectionMedian(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Differentially private projection-depth median (propose-test-release + exponential
    mechanism, exactly sampled).

    ``fit(X)`` releases one (epsilon, delta)-DP draw ``location_`` from
    ``∝ exp(-c O(x))`` around the projection-depth median of X, provided the private test
    passes; ``transform(X)`` returns ``X - location_`` (private robust centring for pipelines).
    The full privacy proof sketch is in the module docstring and ``docs/projection_median.md``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total epsilon of one fit (split between the test and the release, ``test_fraction``).
    delta : float or None, default=None
        Total delta of one fit. ``None`` uses ``min(1e-5, n^{-3/2})``.
    norm : {"l2", "linf", "l1"} or array of shape (m, n_features), default="l2"
        Direction set: random unit vectors ("l2", drawn from ``random_state``), the coordinate
        axes ("linf"; O is then a scaled l-infinity distance), sign vectors ("l1"; all of them
        when ``2^(d-1) <= n_directions``, else a random subset), or explicit directions.
        Directions never depend on the data.
    n_directions : int or None, default=None
        Number of directions for "l2"/"l1" (default ``min(1000, max(200, 100 d))``, capped
        at ``max(20 d, 5e7 / n_samples)`` so that large data sets stay fast; see
        :func:`default_n_directions`).
    location : {"median"}, default="median"
        Projected location estimator.
    scale : {"mad", "iqr", "private"} or array-like of shape (n_features,), default="mad"
        Projected scale estimator (median absolute deviation, or interquartile range
        ``x_(n+1-r) - x_(r)`` with ``r = ceil(n/4)``), both unnormalised; or **public**
        per-feature scales s (e.g. known standard deviations, never computed from the data
        being fitted). With public scales direction u uses ``s_u = ||s * u||_2``, the PTR test
        certifies only the projected medians' movement (no tau, no tail certificate; tau is
        set to 0 and the default eta is ``10 (k + 1) / n``), and it passes from far fewer rows
        (n = 1000 at epsilon = 4, where the MAD version is refused). If s understates the
        data's spread, the test fails (budget spent, nothing released).
        ``"private"`` releases s from the data being fitted: ``s_j = 3 * MAD_j`` with the
        exact private median and MAD of each feature (the estimators' private-bounds helper,
        ``scale_share`` of epsilon), then runs the public-scale path with the released s and
        the rest of epsilon (sequential composition, one ledger entry; derivation in
        ``dpreg/location/_private_scale.py`` and docs/projection_median.md, section 2d). The
        released s is stored as ``public_scale_`` and is public (it is a DP release), so
        :meth:`conf_int` works as for a public scale.
    tau : float or "auto", default="auto"
        Outlyingness radius on which the closeness of neighbouring outlyingness functions is
        certified (SPEC's tau). "auto" (:func:`auto_tau`) picks, from (n, d, epsilon, delta)
        only, the smallest tau whose tail allowance still certifies data with
        ``min O <= 0.4``; our sharper tail bound makes this far smaller than the paper's 5
        (typically 0.45-1.3), which cuts eta and the release noise by up to 3x.
    eta : float or None, default=None
        Certified closeness; ``None`` uses :func:`default_eta` (data-independent, ~1/n).
    test_fraction : float in (0, 1) or "auto", default="auto"
        Share of epsilon spent on the test (the release gets the rest). "auto"
        (:func:`choose_split`) minimises the predicted release noise over [0.4, 0.6] from
        (n, d, epsilon, delta) only; SPEC's split is 0.5.
    sampler : {"exact", "hit_and_run"}, default="exact"
        "exact" is an exact rejection sampler; "hit_and_run" is approximate (warns).
    n_steps : int or None, default=None
        Hit-and-run steps (default ``50 * n_features``); ignored by the exact sampler.
    max_proposals : int or None, default=None
        None (the default) lets the exact sampler run until it accepts, so its output never
        depends on the data through a give-up event. An int makes it raise ``RuntimeError``
        after that many proposals; **privacy caution:** whether it gives up depends on the data
        (its acceptance rate does), and that event is *not* covered by the (epsilon, delta)
        guarantee; treat such an error as a release. Feasibility is instead decided from
        public information: with general directions the exact sampler is refused (before the
        data are used) when ``n_features > MAX_EXACT_DIM`` (10; measured acceptance at d = 10
        is 8e-5 to 1e-3, and at d = 15 none in 3e6 proposals).
    random_state : None, int, RandomState or Generator, default=None
        Seeds the directions, the test noise and the sampler.
    accountant : BudgetAccountant or None, default=None
        Charged ``(epsilon, delta)`` once per fit, also when the test fails.
    diagnostics : bool, default=False
        Store ``diagnostics_`` (raw safety margin, acceptance rate, ...). These are
        data-dependent and NOT differentially private; never publish them.
    trim_scale : array-like of shape (n_features,), "private" or None, default=None
        Public per-feature scales (e.g. known standard deviations; never computed from the
        data being fitted), or ``"private"`` (only with ``scale="private"``) to reuse the
        released private scales, converted to standard-deviation units
        (``_private_scale.trim_from_scale``; no extra budget: they are public once released).
        When given, the fit has a second stage: the projection median is
        released with ``(1 - trim_fraction) epsilon`` and then refined by two private trimmed
        means (``dpreg/location/_trimmed.py``), each averaging the rows whose scaled distance
        ``||(x - centre) / trim_scale||_2`` to the previous release is at most
        ``trim_radius * sqrt(n_features)``. On clean data this is as accurate as a private
        mean; far outliers are dropped, so it keeps the median's robustness to them. With
        ``scale`` an array or ``"private"`` the median's noise law is public, and the radii
        grow by public bounds on each round's starting error (the first from the median
        stage's temperature, the second from the first round's released count); a round's
        output is kept only if its own noise bound is smaller (``_trimmed.py``, "Radii that
        follow the centre's known error"). ``None`` (the default) releases the projection
        median alone.
    trim_radius : float, default=2.0
        Trimming radius per ``sqrt(n_features)``, in units of ``trim_scale``.
    trim_fraction : float in (0, 1), default=0.5
        Share of epsilon spent on the trimmed means (split equally over the two rounds);
        delta goes to the projection-median stage. With ``scale="private"`` it is a share of
        what the scale release leaves.
    scale_share : float in (0, 1) or "auto", default="auto"
        Only with ``scale="private"``: share of epsilon spent on the scales (pure epsilon, no
        delta). "auto" is ``clip(200 d / (n epsilon), 0.02, 0.25)``, about 100 ranks of
        budget for each of the ``2 d`` private medians
        (:func:`~dpreg.location._private_scale.scale_epsilon`); public n, d, epsilon only.

    Attributes
    ----------
    location_ : ndarray of shape (n_features,)
        The private median (float64 whatever the dtype of ``X``: the mechanism and its
        calibration run in float64). ``transform`` and ``inverse_transform`` return X's
        floating dtype (float32 stays float32, as scikit-learn's scalers do).
    directions_ : ndarray of shape (n_directions_, n_features)
        The (public) unit directions.
    n_samples_fit_ : int
        The number of rows of the fit (public: neighbouring data sets have the same n);
        ``release_scale`` refuses data with another number of rows before it spends.
    n_directions_ : int
    epsilon_, delta_, eta_, tau_ : float
        The parameters actually used.
    ptr_threshold_ : float
        ``log(1/(2 delta)) / epsilon_test``.
    test_fraction_ : float
        Share of the projection-median stage's epsilon (``median_epsilon_``) spent on the test.
    noisy_safety_margin_ : float
        ``h(D) + Lap(1/epsilon_test)``, the (epsilon_test-DP) test statistic; the test passed.
    median_epsilon_ : float
        Epsilon of the projection-median stage (``epsilon_`` unless ``trim_scale`` is set).
    median_location_ : ndarray of shape (n_features,)
        Only with ``trim_scale``: the released projection median the trimming started from.
    scale_epsilon_ : float
        Epsilon spent on the private scales (0 unless ``scale="private"``).
    public_scale_ : ndarray of shape (n_features,)
        The per-feature scales of the certificate when ``scale`` is an array or "private"
        (then the released private scales, set also when the test then fails: they were
        paid for and are a differentially private release).
    n_features_in_ : int
    feature_names_in_ : ndarray of str (only when X has string feature names)

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg import PrivateProjectionMedian
    >>> X = np.random.default_rng(0).standard_normal((20000, 2)) + [3.0, -1.0]
    >>> est = PrivateProjectionMedian(epsilon=5.0, random_state=0).fit(X)
    >>> np.round(est.location_, 1)
    array([ 3., -1.])
    >>> est.transform(X).shape
    (20000, 2)

    With no scale known, ``scale="private"`` releases one and passes the test on less data:

    >>> X = np.random.default_rng(1).standard_normal((1000, 2)) * [1.0, 50.0]
    >>> est = PrivateProjectionMedian(epsilon=4.0, scale="private", random_state=0).fit(X)
    >>> est.scale_epsilon_, est.median_epsilon_
    (0.4, 3.6)
    >>> bool(np.all((est.public_scale_ > [1.0, 50.0]) & (est.public_scale_ < [4.0, 200.0])))
    True
    """

    def __init__(
        self,
        epsilon=1.0,
        delta=None,
        norm="l2",
        n_directions=None,
        location="median",
        scale="mad",
        tau="auto",
        eta=None,
        test_fraction="auto",
        sampler="exact",
        n_steps=None,
        max_proposals=None,
        random_state=None,
        accountant=None,
        diagnostics=False,
        trim_scale=None,
        trim_radius=2.0,
        trim_fraction=0.5,
        scale_share="auto",
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.norm = norm
        self.n_directions = n_directions
        self.location = location
        self.scale = scale
        self.tau = tau
        self.eta = eta
        self.test_fraction = test_fraction
        self.sampler = sampler
        self.n_steps = n_steps
        self.max_proposals = max_proposals
        self.random_state = random_state
        self.accountant = accountant
        self.diagnostics = diagnostics
        self.trim_scale = trim_scale
        self.trim_radius = trim_radius
        self.trim_fraction = trim_fraction
        self.scale_share = scale_share

    def __sklearn_tags__(self):
        # Checks that need a fit on 10-30 rows cannot pass at a sane budget: they are declared
        # with reasons by ``sklearn_expected_failed_checks`` (scikit-learn >= 1.6 has no tag
        # for expected failures).
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.non_deterministic = self.random_state is None
        if tags.transformer_tags is not None:  # transform keeps float32 (like StandardScaler)
            tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # ------------------------------------------------------------------ validation
    def _scale_kind(self, d):
        """``("mad" | "iqr", None)``, ``("private", None)`` (scales released in ``fit``) or
        ``("public", s)`` with the validated public scales s."""
        if isinstance(self.scale, str):
            if self.scale not in ("mad", "iqr", _private_scale.PRIVATE):
                raise ValueError(
                    f"scale must be 'mad', 'iqr', 'private' or an array, got {self.scale!r}."
                )
            return self.scale, None
        s = np.asarray(self.scale, dtype=float)
        if s.shape != (d,) or not np.all(np.isfinite(s)) or not np.all(s > 0):
            raise ValueError(
                f"scale must be 'mad', 'iqr', 'private' or {d} finite positive public scales, "
                f"got {self.scale!r}."
            )
        if np.min(s) < np.finfo(float).tiny:  # s_u > 0 needs it (see _direction_scales)
            raise ValueError(
                f"public scales must be normal floats (>= {np.finfo(float).tiny:.4g}), got "
                f"{self.scale!r}; rescale the data (and the scales) first."
            )
        with np.errstate(over="ignore"):
            norm = np.linalg.norm(s)
        if not np.isfinite(norm):
            raise ValueError("public scales are too large (their norm overflows).")
        return "public", s

    def _check_trim(self, n, d):
        """Validated ``(scale, radius, fraction)`` of the trimmed-mean stage, or None."""
        if self.trim_scale is None:
            return None
        if isinstance(self.trim_scale, str) and self.trim_scale == _private_scale.PRIVATE:
            if not (isinstance(self.scale, str) and self.scale == _private_scale.PRIVATE):
                raise ValueError(
                    "trim_scale='private' reuses the scales released by scale='private'; "
                    f"it needs scale='private', got scale={self.scale!r}."
                )
            # the released scales are not known yet: validate with their public upper bound
            # (the trimmed stage itself uses trim_from_scale of the released ones, in fit)
            scale = np.full(d, _private_scale.max_trim_scale())
        elif isinstance(self.trim_scale, str):
            raise ValueError(
                f"trim_scale must be None, 'private' or {d} finite positive public scales "
                f"(one per feature), got {self.trim_scale!r}."
            )
        else:
            scale = np.asarray(self.trim_scale, dtype=float)
        if scale.shape != (d,) or not np.all(np.isfinite(scale)) or not np.all(scale > 0):
            raise ValueError(
                f"trim_scale must be None, 'private' or {d} finite positive public scales "
                f"(one per feature), got {self.trim_scale!r}."
            )
        # the same rule as for the public scales (_scale_kind): a subnormal trim scale gives
        # a ratio scale / trim_scale that overflows (1 / 1e-310 = 1e310) in the public error
        # bound, and (x - centre) / trim_scale loses its relative precision (docs/
        # floating_point.md, section 5c)
        if np.min(scale) < np.finfo(float).tiny:
            raise ValueError(
                f"public trim scales must be normal floats (>= {np.finfo(float).tiny:.4g}), "
                f"got {self.trim_scale!r}; rescale the data (and the scales) first."
            )
        radius = check_epsilon(self.trim_radius, name="trim_radius")
        frac = check_epsilon(self.trim_fraction, name="trim_fraction")
        if frac >= 1:
            raise ValueError(f"trim_fraction must lie in (0, 1), got {frac!r}.")
        radius *= math.sqrt(d)
        # the mechanisms' parameters must be valid before anything is spent, and no sum of
        # n kept rows (each of norm <= radius) or shift (scale * radius) may overflow
        with np.errstate(over="ignore"):
            too_big = not np.isfinite(4.0 * radius * max(n, 1) * (1.0 + np.linalg.norm(scale)))
        if too_big:
            raise ValueError(
                f"trim_radius or trim_scale is too large (got {self.trim_radius!r}): sums of "
                "trimmed rows could overflow."
            )
        check_epsilon(frac * check_epsilon(self.epsilon) * _trimmed.COUNT_SHARE / _trimmed.ROUNDS)
        return scale, radius, frac

    def _trim_error(self, d, c, public_scale, trim_scale):
        """Public bound on the released projection median's error in ``trim_scale`` units
        (``_trimmed.median_error_bound``), or None with ``scale="mad"``/``"iqr"`` (the median's
        noise law then depends on the data's projected MADs, which are not released).

        Inputs: the median stage's inverse temperature c (public n, d, epsilon, delta), the
        certificate's scales (public, or released by ``scale="private"``; before that release
        their public cap) and the trim scales (public, or a function of the released scales).
        """
        kind, _ = self._scale_kind(d)
        if kind in ("mad", "iqr"):
            return None
        trim_private = isinstance(self.trim_scale, str)
        if trim_private:  # t = max(TRIM_FACTOR s, MIN_SCALE) >= TRIM_FACTOR s
            ratio = 1.0 / _private_scale.TRIM_FACTOR
        else:
            s = public_scale
            if s is None:  # scale="private", not released yet: its public cap
                s = np.full(d, _private_scale.max_trim_scale() / _private_scale.TRIM_FACTOR)
            # public inputs: a ratio past the float range is +inf (no warning), and the
            # caller's overflow check (_check_trim_overflow) then refuses before the spend
            with np.errstate(over="ignore"):
                ratio = float(np.max(np.asarray(s, dtype=float) / trim_scale))
        return _trimmed.median_error_bound(c, d, ratio)

    @staticmethod
    def _check_magnitude(X):
        """Before the spend: the data must be small enough to be projected and differenced in
        float64. A projection ``u^T x`` (``||u||_2 = 1``) is at most ``sqrt(d) max|x|`` in size,
        and the certificates subtract two projections and scale the result, so entries near
        1.8e308 (e.g. 1.7e308) would overflow to inf after the spend, with a RuntimeWarning
        that becomes an exception, charged and data-dependent, for users who turn warnings
        into errors. Like the finiteness check, this is validation of the input before
        anything is spent; the remedy (rescaling X by a public factor) is the user's."""
        d = X.shape[1]
        limit = np.finfo(np.float64).max / (16.0 * math.sqrt(d))
        with np.errstate(all="ignore"):
            largest = float(np.max(np.abs(X))) if X.size else 0.0
        if not largest <= limit:
            # the limit (public: d only), never a data value: the refusal is validation, the
            # size of the largest entry is not needed to act on it
            raise ValueError(
                f"X has entries of magnitude above {limit:.3g}: PrivateProjectionMedian "
                f"needs max |x| <= {limit:.3g} (float64 max / (16 sqrt(n_features))) so that "
                "projections and their differences cannot overflow. Rescale X by a public "
                "factor first."
            )

    @staticmethod
    def _check_trim_overflow(n, trim, error):
        """Before the spend: no sum of n kept rows (each of norm <= the largest radius) or
        shift may overflow, with the adaptive first radius ``radius + error``."""
        scale, radius, _ = trim
        largest = radius + (0.0 if error is None else error)
        with np.errstate(over="ignore"):
            ok = np.isfinite(4.0 * largest * max(n, 1) * (1.0 + np.linalg.norm(scale)))
        if not ok:
            raise ValueError(
                "trim_scale, trim_radius or the scales are too large for this epsilon: sums "
                "of trimmed rows could overflow with the first round's radius."
            )

    def _check_params(self, n, d):
        """Validated ``(epsilon, delta, tau, eta, c)`` of the projection-median stage: with
        ``scale="private"`` epsilon is what the scale release leaves
        (:func:`~dpreg.location._private_scale.scale_epsilon`, stored in ``_scale_epsilon``);
        with ``trim_scale`` set, that stage's share ``(1 - trim_fraction)`` of it."""
        epsilon = check_epsilon(self.epsilon)
        kind, _ = self._scale_kind(d)
        self._scale_epsilon = 0.0
        if kind == _private_scale.PRIVATE:
            share = _private_scale.check_scale_share(self.scale_share)
            self._scale_epsilon, epsilon = _private_scale.scale_epsilon(share, epsilon, n, d)
            check_epsilon(self._scale_epsilon / (2 * d), name="epsilon of one scale draw")
            _private_scale.warn_if_unreliable(self._scale_epsilon, n, d)
            kind = "public"  # the median stage is the public-scale path with the released s
        trim = self._check_trim(n, d)
        if trim is not None:
            epsilon *= 1.0 - trim[2]
        delta = default_delta(n) if self.delta is None else check_delta(self.delta)
        if delta <= 0:
            raise ValueError("PrivateProjectionMedian needs delta > 0 (PTR is (eps, delta)-DP).")
        if self.location != "median":
            raise ValueError(f"location must be 'median', got {self.location!r}.")
        if isinstance(self.tau, str) and self.tau == "auto":
            tau = "auto"
        else:
            tau = check_epsilon(self.tau, name="tau")
        eta = None if self.eta is None else check_epsilon(self.eta, name="eta")
        if kind == "public":  # tau belongs to the tail certificate, which a public scale drops
            tau = 0.0
        if self.test_fraction == "auto":
            frac, tau, eta = choose_split(n, d, epsilon, delta, kind, tau, eta)
            if eta is None:  # no split has a positive temperature: the check below refuses
                eta = default_eta(n, epsilon, delta, tau, kind, frac)  # (was a TypeError)
        else:
            frac = check_epsilon(self.test_fraction, name="test_fraction")
            if frac >= 1:
                raise ValueError(f"test_fraction must lie in (0, 1), got {frac!r}.")
            if tau == "auto":
                tau = auto_tau(n, d, epsilon, delta, kind, eta, test_fraction=frac)
            if eta is None:
                eta = default_eta(n, epsilon, delta, tau, kind, frac)
        if self.sampler not in ("exact", "hit_and_run"):
            raise ValueError(f"sampler must be 'exact' or 'hit_and_run', got {self.sampler!r}.")
        if self.n_directions is not None and (
            isinstance(self.n_directions, bool)
            or not isinstance(self.n_directions, numbers.Integral)
            or self.n_directions < 1
        ):
            raise ValueError(f"n_directions must be a positive int, got {self.n_directions!r}.")
        if isinstance(self.norm, str) and self.norm.lower() not in ("l1", "l2", "linf"):
            raise ValueError(
                f"norm must be 'l1', 'l2', 'linf' or an array of directions, got {self.norm!r}."
            )
        c = release_inverse_temperature(epsilon, delta, eta, frac)
        if c <= 0:
            raise ValueError(
                "epsilon is too small for this delta (need eps_release > -log(1-delta))."
            )
        self._test_fraction = frac
        return epsilon, delta, tau, eta, c

    def _refuse_certain_failure(self, n, d, epsilon, delta, tau, eta, c):
        """Certain failure from public parameters: if even ``min O = 0`` leaves the tail bound
        above delta, no certificate C_0 holds on any data set, h(D) = 0 everywhere and the
        test passes only through its delta-probability event. Refuse before spending."""
        if not sens.max_min_outlyingness(c, tau, d, delta) >= 0.0:
            raise PTRInfeasibleError(
                f"The private test cannot pass with (n, d) = ({n}, {d}) at "
                f"epsilon={epsilon:g}, delta={delta:g} (tau={tau:g}, eta={eta:g}): the release "
                "temperature is too low to certify the tail on any data set, so the test would "
                "fail on every input (except with probability delta). Nothing was spent. Use "
                "more data, a larger epsilon or delta, or a smaller eta." + self._scale_hint()
            )

    def _scale_hint(self):
        """A pointer to the routes that pass from far fewer rows, for the data-derived scales
        (public parameters only)."""
        if isinstance(self.scale, str) and self.scale in ("mad", "iqr"):
            return (
                " With a data-derived scale the test needs many rows: public per-feature "
                "scales (scale=array of known standard deviations) or scale='private' pass "
                "from far fewer (docs/projection_median.md)."
            )
        return ""

    # ------------------------------------------------------------------ PTR
    def _safety_margin(self, U, S, eta, tau, c, delta, k_cap, x_star=None):
        """``h(D)`` from the whole sorted matrix ``S`` (or an iterable of sorted row-chunks),
        plus diagnostics; ``fit`` streams chunks through the same code (``_margin``)."""
        chunks = [S] if isinstance(S, np.ndarray) else S
        s_u = self._direction_scales(U)
        summary = self._summarise(chunks, eta, tau, k_cap, s_u)
        return self._margin(U, summary, c, tau, delta, x_star)

    def _direction_scales(self, U, s=None):
        """Public ``s_u = ||s * u||_2`` per direction when ``scale`` is an array (or ``s`` the
        released private scales), else None: the spread of ``u^T x`` if the features were
        uncorrelated with standard deviations s.

        The plain ``sqrt(sum (u_j s_j)^2)`` loses precision (subnormal squares) or underflows
        to 0 for s below about 1e-154 (then ``F_j`` was divided by 0 after the spend); rows
        with ``r = max_j |u_j s_j| < 2**-500`` are computed as ``r ||(u s) / r||_2``. With
        every ``s_j`` a normal float (``_scale_kind``; released scales are floored at 1e-100)
        and ``|u_j| >= 1/sqrt(d)`` for the largest coordinate of a unit u,
        ``r >= 2**-1022 / sqrt(d) > 0``, so ``s_u > 0``. Only s and U enter: they are public."""
        if s is None:
            kind, s = self._scale_kind(U.shape[1])
            if kind != "public":
                return None
        V = U * s
        r = np.max(np.abs(V), axis=1)
        low = r < 2.0**-500
        with np.errstate(under="ignore"):
            s_u = np.linalg.norm(V, axis=1)  # unchanged for every row at a usual scale
            if np.any(low):
                s_u[low] = r[low] * np.linalg.norm(V[low] / r[low, None], axis=1)
        return s_u

    def _summarise(self, chunks, eta, tau, k_cap, public=None):
        """The one pass over the sorted projections, with F_j's ladder ``eta (1 - j slack)``;
        ``public`` holds the directions' public scales ``s_u`` when ``scale`` is an array."""
        ladder = lambda j: eta * (1.0 - j * FLOAT_SLACK)  # noqa: E731
        if public is not None:
            return _certificate.summarise_public(chunks, public, k_cap, ladder)
        return _certificate.summarise(chunks, tau, self.scale, k_cap, ladder)

    def _margin(self, U, summary, c, tau, delta, x_star):
        """``h(D)`` of the module docstring (capped at ``k_cap``), plus diagnostics.

        h is the length of the *consecutive* run of certificates ``C_0, C_1, ...`` that hold,
        each one evaluated (never inferred from a neighbouring k by monotonicity: computed
        bounds can break monotonicity in k, and h would then jump). ``C_j`` is
        ``F_j <= eta_j`` and ``T_{j+1} <= theta_j`` with the slightly stricter ladders
        ``eta_j = eta (1 - j FLOAT_SLACK)`` and ``theta_j = o_max - j LP_SLACK``: they absorb
        floating-point rounding in F and a sub-optimal LP point in T (at most ``LP_SLACK`` above
        the true minimum of the rescaled LP) so that the computed ``C_j(D)`` still implies the
        computed ``C_{j-1}(D')`` for every neighbour D' (docs/projection_median.md, section 2),
        i.e. h has sensitivity 1 as computed, not only in exact arithmetic. ``summary``
        (``_certificate.summarise``) holds F_j for every j before the first one that fails.
        """
        d = U.shape[1]
        if summary.public:  # C_j is F_j <= eta_j alone: no tail certificate (docs, section 2b)
            return summary.j_stop, {"F": summary.F, "T_certified": [], "o_max": np.inf}
        o_max = sens.max_min_outlyingness(c, tau, d, delta)
        t_values = []
        z_last = None
        h = 0
        while h < summary.j_stop:  # F_0..F_{j_stop - 1} hold
            k = h + 1
            val, z = sens.min_outlyingness_from_bounds(
                U,
                summary.L[k],
                summary.R[k],
                summary.lower[k],
                (z_last, x_star),
                accept=o_max - h * LP_SLACK,
            )
            ok = val <= o_max - h * LP_SLACK
            t_values.append(ok)
            if not ok:
                break
            z_last = z
            h += 1
        return h, {"F": summary.F, "T_certified": t_values, "o_max": o_max}

    # ------------------------------------------------------------------ API
    def fit(self, X, y=None, **fit_params):
        """Release a private projection-depth median of ``X``.

        ``sample_weight`` (passed by a Pipeline or ``cross_validate``) is not supported: a
        ``ValueError`` before anything is spent. The PTR certificate rests on order-statistic
        bounds of the projected medians and MADs under the change of one unweighted record
        (``_sensitivity``); weighted order statistics need their own derivation, not done.
        (It is not a named parameter, so scikit-learn does not advertise weight support.)

        Raises
        ------
        PTRInfeasibleError
            Before anything is spent, if the public parameters (n, d, epsilon, delta, tau,
            eta) make the test fail on every data set (a subclass of both
            ``PTRTestFailedError`` and ``ValueError``).
        PTRTestFailedError
            If the private test fails (the budget is still spent).
        """
        unknown = sorted(set(fit_params) - {"sample_weight"})
        if unknown:
            raise TypeError(f"fit() got unexpected keyword arguments {unknown}.")
        if fit_params.get("sample_weight") is not None:
            raise ValueError(
                "PrivateProjectionMedian does not support sample_weight: its PTR sensitivity "
                "bounds are derived for unweighted records only."
            )
        accountant = check_accountant(self.accountant)
        rows = _row_count(X)
        if rows is not None:
            # The budget before the data, as the regression models do (SPEC 1): whether a fit
            # is refused must not depend on the values (a NaN check would otherwise answer
            # first). The row count, all the default delta needs, is public.
            delta = default_delta(max(rows, 1)) if self.delta is None else self.delta
            accountant.check(check_epsilon(self.epsilon), check_delta(delta))
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
        n, d = X.shape
        if n < 3:
            raise ValueError(
                f"PrivateProjectionMedian needs at least 3 samples, got n_samples = {n}."
            )
        self._check_magnitude(X)
        epsilon, delta, tau, eta, c = self._check_params(n, d)
        trim = self._check_trim(n, d)
        total_epsilon = check_epsilon(self.epsilon)
        if rows is None:  # an input without a row count: checked as soon as n is known
            accountant.check(total_epsilon, delta)
        kind, public_scale = self._scale_kind(d)
        if trim is not None:  # largest adaptive radius, from public caps: overflow check
            self._check_trim_overflow(n, trim, self._trim_error(d, c, public_scale, trim[0]))
        if kind in ("mad", "iqr"):  # the tail certificate does not exist with a public scale
            self._refuse_certain_failure(n, d, epsilon, delta, tau, eta, c)
        if (
            self.sampler == "exact"
            and d > MAX_EXACT_DIM
            and not (isinstance(self.norm, str) and self.norm.lower() == "linf")
        ):
            raise ValueError(
                f"The exact sampler is impractical with general directions in "
                f"n_features={d} > {MAX_EXACT_DIM} dimensions (its acceptance rate collapses). "
                "Use norm='linf' (coordinate axes; exact in closed form) or the approximate, "
                "opt-in sampler='hit_and_run'."
            )
        if self.sampler == "hit_and_run":  # public: warn before the spend, so that a user
            # with warnings as errors gets the exception without being charged
            warnings.warn(
                "sampler='hit_and_run' draws from exp(-c O) only approximately (finite Markov "
                "chain); the (epsilon, delta) guarantee then holds only approximately. Its "
                "float state is rounded to the exact sampler's public relative grid, which is "
                "not a floating-point certificate either (docs/floating_point.md).",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        rng = check_random_state(self.random_state)  # before the spend: a bad value raises
        # public: bad directions (shape, finiteness, rank, n_directions < d) raise before the
        # spend. The directions are the first draw from rng whether built before or after
        # the spend, so a seeded fit's stream (and output) is as when they came after it.
        U = make_directions(self.norm, d, self.n_directions, rng, n_samples=n)
        accountant.spend(total_epsilon, delta)  # atomic reserve, after validation, before computing
        if kind == _private_scale.PRIVATE:  # sequential composition: scales, then median
            public_scale = _private_scale.release_scales(X, self._scale_epsilon, rng)

        frac = self._test_fraction
        eps_test = frac * epsilon
        threshold = ptr_threshold(epsilon, delta, frac)
        k_cap = math.ceil(threshold + math.log(1.0 / (2.0 * 1e-12)) / eps_test)
        # one pass over chunks of sorted projections (the only data summary used)
        s_u = self._direction_scales(U, public_scale)
        summary = self._summarise(_certificate.sorted_chunks(U, X), eta, tau, k_cap, s_u)
        mu, sigma = summary.mu, summary.sigma
        x_star = o_star = None
        if np.all(sigma > 0):
            try:  # only a starting point for the certificates and the sampler
                x_star, o_star = projection_median_lp(U, mu, sigma)
            except RuntimeError:
                x_star = o_star = None
        h, info = self._margin(U, summary, c, tau, delta, x_star)
        # floating-point safe: the exact Laplace release on a public grid (h is an integer)
        noisy = LaplaceMechanism(eps_test, 1.0, random_state=rng).randomise(float(h))

        for stale in ("location_", "noisy_safety_margin_", "median_location_", "public_scale_"):
            if hasattr(self, stale):
                delattr(self, stale)
        self.directions_ = U
        self.n_directions_ = U.shape[0]
        self.epsilon_, self.delta_, self.eta_, self.tau_ = total_epsilon, delta, eta, tau
        self.median_epsilon_ = epsilon
        self.scale_epsilon_ = self._scale_epsilon
        if public_scale is not None:
            self.public_scale_ = public_scale
        self.ptr_threshold_ = threshold
        self.test_fraction_ = frac
        diag = {
            "safety_margin": h,
            "noisy_safety_margin": float(noisy),
            "x_star": x_star,
            "o_star": o_star,
            "c": c,
            **info,
        }
        if self.diagnostics:
            self.diagnostics_ = diag
        if not noisy > threshold:
            raise self._failure(total_epsilon, delta)
        # Past this point a failure must look exactly like a failed test (same type, same
        # message, no value): a zero projected scale means D is unsafe (h = 0), so we get here
        # with probability <= delta; the sampler itself has LP-free fallbacks.
        if not np.all(sigma > 0):
            raise self._failure(total_epsilon, delta)
        if self.sampler == "exact":
            try:
                smp = ExactSampler(U, mu, sigma, c, rng, x_star=x_star, o_star=o_star)
            except (RuntimeError, ValueError, ArithmeticError, np.linalg.LinAlgError):
                raise self._failure(total_epsilon, delta) from None
            location = smp.sample(1, max_proposals=self.max_proposals)[0]
            diag["acceptance_rate"] = smp.acceptance_rate
            diag["n_proposals"] = smp.n_proposals
        else:  # warned before the spend (a public parameter)
            steps = 50 * d if self.n_steps is None else int(self.n_steps)
            start = x_star if x_star is not None else np.linalg.lstsq(U, mu, rcond=None)[0]
            # same public output set as the exact sampler; certifies nothing about the law
            location = round_relative(hit_and_run(U, mu, sigma, c, rng, start, steps))
        if not np.all(np.isfinite(location)):
            raise self._failure(total_epsilon, delta)
        if trim is not None:  # released centre is public: trimmed means around it
            self.median_location_ = location
            scale, radius, frac = trim
            if isinstance(self.trim_scale, str):  # "private": the released scales (public now)
                scale = _private_scale.trim_from_scale(public_scale)
            eps_trim = frac * (total_epsilon - self._scale_epsilon)
            error = self._trim_error(d, c, public_scale, scale)  # public / released inputs
            location = release_trimmed_mean(X, location, scale, radius, eps_trim, rng, error=error)
        self.location_ = location
        self.n_samples_fit_ = int(n)  # public (replace-one adjacency)
        self.noisy_safety_margin_ = float(noisy)
        return self

    @staticmethod
    def _failure(epsilon, delta):
        """The one failure the caller sees: it never carries a data-dependent value."""
        return PTRTestFailedError(
            "The private propose-test-release test failed; nothing was released and "
            f"(epsilon={epsilon:g}, delta={delta:g}) was spent. Use more data, a larger "
            "epsilon or a larger eta."
        )

    def transform(self, X):
        """Return ``X - location_`` in X's floating dtype (float32 stays float32)."""
        check_is_fitted(self, "location_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return (X - self.location_).astype(X.dtype, copy=False)

    def inverse_transform(self, X):
        """Return ``X + location_`` in X's floating dtype (float32 stays float32)."""
        check_is_fitted(self, "location_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return (X + self.location_).astype(X.dtype, copy=False)

    # ------------------------------------------------------------------ private inference
    # Thin hooks; derivation and code in dpreg/location/_inference.py (docs/inference.md).
    def release_scale(self, X, epsilon, accountant=None, random_state=None):
        """Spend ``epsilon`` (charged before any computation) on private per-coordinate
        quantiles that :meth:`conf_int` needs (``norm="linf"`` only); returns ``self``."""
        from ._inference import release_scale  # noqa: PLC0415

        return release_scale(self, X, epsilon, accountant, random_state)

    def conf_int(self, alpha=0.05, n_boot=None):
        """``(n_features, 2)`` intervals for the location; needs :meth:`release_scale`.

        ``n_boot=None`` (default) computes the quantiles of the interval's plug-in law
        exactly (the release's noise law in closed form, convolved with the median's normal
        law by quadrature: docs/inference.md); an integer draws that many bootstrap draws
        of the same law instead (the method before session 15)."""
        from ._inference import conf_int  # noqa: PLC0415

        return conf_int(self, alpha, n_boot)

    def bse(self, n_boot=None):
        """Standard errors of ``location_`` (privacy noise included); ``n_boot`` as in
        :meth:`conf_int` (``None``: in closed form)."""
        from ._inference import bse  # noqa: PLC0415

        return bse(self, n_boot)

    def summary(self, alpha=0.05, n_boot=None):
        """statsmodels-style table; ``.as_dataframe()`` gives a DataFrame; ``n_boot`` as in
        :meth:`conf_int`."""
        from ._inference import summary  # noqa: PLC0415

        return summary(self, alpha, n_boot)


#: scikit-learn checks that need a successful ``fit`` on their small toy data (10-30 rows).
_CHECKS_NEEDING_A_FIT = (
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_dtype_object",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_fit_score_takes_y",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
    "check_transformer_data_not_an_array",
    "check_transformer_general",
    "check_transformer_preserve_dtypes",
)
#: Rows of the toy data most of those checks fit on (10 to 30; ``make_blobs`` uses 30).
_CHECK_ROWS = 30


def sklearn_expected_failed_checks(estimator):
    """scikit-learn checks that ``estimator`` cannot pass, with the reason (for
    ``parametrize_with_checks(..., expected_failed_checks=...)`` / ``check_estimator``).

    These checks need a successful ``fit`` on toy data of 10-30 rows. Any data set of n rows
    has a safety margin ``h <= n // 2 + 1``: after that many replacements every projected
    MAD can be 0, so F is infinite. When the PTR threshold ``log(1/(2 delta)) / epsilon_test``
    at n = 30 exceeds that bound, the test passes only when the Laplace noise alone exceeds
    the gap. ``fit`` then raises ``PTRTestFailedError``. That is the correct private outcome:
    no private median of 30 points exists at epsilon = 1. The decision uses public parameters
    only. It returns ``{}`` when the parameters allow a pass, as with the huge epsilon of our
    own test-suite instance. Our test-suite checks that the list is exact: every listed check
    fails, and only through ``PTRTestFailedError``.
    """
    p = estimator.get_params()
    n = _CHECK_ROWS
    try:
        epsilon = check_epsilon(p["epsilon"])
        delta = default_delta(n) if p["delta"] is None else check_delta(p["delta"])
        f = p["test_fraction"]
        fractions = [0.6] if f == "auto" else [check_epsilon(f, name="test_fraction")]
    except (TypeError, ValueError):
        return {}
    if not 0 < delta < 1 or min(ptr_threshold(epsilon, delta, fr) for fr in fractions) <= (
        n // 2 + 1
    ):
        return {}
    reason = (
        "needs a successful fit on 10-30 rows: at this epsilon/delta the propose-test-release "
        "threshold exceeds the largest safety margin such data can have, so fit raises "
        "PTRTestFailedError, or its subclass PTRInfeasibleError before spending when the "
        "parameters alone decide it (the correct private outcome, not a bug)"
    )
    return dict.fromkeys(_CHECKS_NEEDING_A_FIT, reason)


def projection_median(X, directions, scale="mad"):
    """Non-private projection-depth median of ``X`` over ``directions`` (for comparisons)."""
    X = np.asarray(X, dtype=float)
    U = np.asarray(directions, dtype=float)
    U = U / np.linalg.norm(U, axis=1, keepdims=True)
    S = np.sort(U @ X.T, axis=1)
    mu, sigma = sens.location_scale(S, scale)
    return projection_median_lp(U, mu, sigma)[0]
