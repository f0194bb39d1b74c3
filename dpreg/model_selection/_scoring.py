r"""Private validation scores: a bounded per-record loss, averaged, plus Laplace noise.

For a fitted model ``h`` (a function of the *training* rows only) and ``m`` validation rows,
the loss of a row is clipped into ``[0, B]`` with ``B`` public; each computed loss is a
function of its own row only. Replacing one validation row changes the exact sum of the
computed losses by at most ``B``, and the computed float sum differs from that exact sum by at
most ``E = float_sum_error_bound(m, B)`` in any summation order (``docs/floating_point.md``),
so the computed sum ``S`` has sensitivity ``B + 2 E``. It is released with the exact grid
Laplace mechanism (``LaplaceMechanism(epsilon, B + 2 E).randomise(S)``: epsilon-DP for the
float statistic, for every fixed ``h``), and the score is ``noisy S / m`` (post-processing).
Adding ``mechanism.sample()`` to the float mean instead, as before session 21, kept the low
bits of the exact mean: the noise is a multiple of a public grid step, so ``1 - score`` minus
a grid multiple revealed the number of misclassified validation rows. A prediction that is
not finite counts as the largest loss ``B``; a ``predict`` that raises gives the score
``-inf`` (a failed run; see :mod:`._search`).

``B`` must lie in ``[1e-100, 1e100]``: far below, ``B / (m epsilon)`` falls under the grid's
smallest step and the noise rounds to 0 (the exact mean was released); far above, the noisy
sum can overflow to an infinite score.

* ``"accuracy"``: loss ``1{h(x) != y}``, ``B = 1``; the score is ``1 - mean loss``.
* ``"neg_mean_squared_error"``: loss ``min((y - h(x))^2, B)``; score ``-mean loss``.
* ``"neg_mean_absolute_error"``: loss ``min(|y - h(x)|, B)``; score ``-mean loss``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..noise import LaplaceMechanism
from ..noise._grid import float_sum_error_bound

SCORINGS = ("accuracy", "neg_mean_squared_error", "neg_mean_absolute_error")
#: Public loss bounds the score's noise can be calibrated for (module docstring).
LOSS_BOUND_RANGE = (1e-100, 1e100)


def check_scoring(scoring, loss_bound, classifier):
    """Return ``(scoring, B)``; ``scoring=None`` means accuracy for classifiers, MSE otherwise."""
    if scoring is None:
        scoring = "accuracy" if classifier else "neg_mean_squared_error"
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS} or None, got {scoring!r}.")
    if scoring == "accuracy":
        if loss_bound is not None:
            raise ValueError("loss_bound is fixed to 1 for scoring='accuracy'; leave it None.")
        return scoring, 1.0
    if (
        isinstance(loss_bound, bool)
        or not isinstance(loss_bound, numbers.Real)
        or not LOSS_BOUND_RANGE[0] <= loss_bound <= LOSS_BOUND_RANGE[1]
    ):
        raise ValueError(
            f"scoring={scoring!r} needs a public loss_bound in [{LOSS_BOUND_RANGE[0]:g}, "
            f"{LOSS_BOUND_RANGE[1]:g}] (the largest per-record loss that counts, in the "
            f"target's squared/absolute units), got {loss_bound!r}."
        )
    return scoring, float(loss_bound)


def per_record_loss(pred, y, scoring, bound):
    """Clipped per-record losses in ``[0, bound]`` (non-finite predictions count ``bound``)."""
    pred = np.asarray(pred)
    if scoring == "accuracy":
        return (pred != np.asarray(y)).astype(float)
    err = np.asarray(pred, dtype=float) - np.asarray(y, dtype=float)
    loss = err**2 if scoring == "neg_mean_squared_error" else np.abs(err)
    return np.clip(np.nan_to_num(loss, nan=bound, posinf=bound), 0.0, bound)


def private_score(model, X_val, y_val, scoring, bound, epsilon, rng):
    """The noisy validation score of ``model``; ``-inf`` when ``predict`` fails."""
    try:
        pred = model.predict(X_val)
        loss = per_record_loss(pred, y_val, scoring, bound)
    except Exception:  # noqa: BLE001 - a failure is an output like any other, never a raise
        return -math.inf
    if loss.shape != (len(y_val),):
        return -math.inf
    m = len(y_val)
    mech = LaplaceMechanism(epsilon, score_sensitivity(m, bound), random_state=rng)
    with np.errstate(over="ignore", invalid="ignore"):  # after the spend: nothing may raise
        noisy = float(mech.randomise(float(loss.sum()))) / m
    return 1.0 - noisy if scoring == "accuracy" else -noisy


def score_sensitivity(m, bound):
    """Sensitivity of the computed float sum of ``m`` losses in ``[0, bound]``: ``B + 2 E``."""
    return bound + 2.0 * float_sum_error_bound(m, bound)
