r"""Private validation scores: a bounded per-record loss, averaged, plus Laplace noise.

For a fitted model ``h`` (a function of the *training* rows only) and ``m`` validation rows,
the loss of a row is clipped into ``[0, B]`` with ``B`` public, so the mean loss over the
validation rows has replace-one sensitivity ``B / m`` (``m`` is public). Adding
``Laplace(B / (m epsilon))`` makes it epsilon-DP with respect to the validation rows, for every
fixed ``h``. A prediction that is not finite counts as the largest loss ``B``; a ``predict``
that raises gives the score ``-inf`` (a failed run; see :mod:`._search`).

* ``"accuracy"``: loss ``1{h(x) != y}``, ``B = 1``; the score is ``1 - mean loss``.
* ``"neg_mean_squared_error"``: loss ``min((y - h(x))^2, B)``; score ``-mean loss``.
* ``"neg_mean_absolute_error"``: loss ``min(|y - h(x)|, B)``; score ``-mean loss``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..noise import LaplaceMechanism

SCORINGS = ("accuracy", "neg_mean_squared_error", "neg_mean_absolute_error")


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
        or not math.isfinite(loss_bound)
        or loss_bound <= 0
    ):
        raise ValueError(
            f"scoring={scoring!r} needs a public loss_bound > 0 (the largest per-record loss "
            f"that counts, in the target's squared/absolute units), got {loss_bound!r}."
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
    mech = LaplaceMechanism(epsilon, bound / len(y_val), random_state=rng)
    noisy = float(loss.mean() + mech.sample())
    return 1.0 - noisy if scoring == "accuracy" else -noisy
