"""The data behind ``dpreg demo``: four offline data sets with public (not private) bounds.

* **diabetes** (scikit-learn, 442 patients, 10 raw clinical features) -- linear regression of
  disease progression: :class:`~dpreg.FunctionalLinearRegression` vs ``LinearRegression``.
* **breast cancer** (scikit-learn, 569 tumours, the ten "mean" features) -- classification:
  :class:`~dpreg.ObjectivePerturbationLogistic` vs ``LogisticRegression``.
* **Engel** (bundled, 235 households) -- median regression of food expenditure on income:
  :class:`~dpreg.KNGQuantileRegressor` vs ``QuantileRegressor``.
* **synthetic contaminated data** (12 500 draws of N(0, I) in 2-D, 10% moved to (+5, +5)) --
  a private robust centre: :class:`~dpreg.PrivateProjectionMedian` vs the coordinate-wise
  median and the mean, scored by the distance to the bulk's true centre. Propose-test-release
  needs many rows, which none of the small offline data sets has.

The bounds below are constants written into this file from the data sets' documentation and
clinical/economic plausibility, rounded outward; they were *not* chosen privately. A real
deployment must fix them before seeing the data (the comparison itself never reads bounds from
the data).
"""

from __future__ import annotations

import numpy as np

from .compare import make_task
from .datasets import load_engel

__all__ = ["DEMO_EPSILONS", "demo_tasks"]

#: Default privacy budgets of the demo (each is the total epsilon of one fit).
DEMO_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)

# Diabetes (Efron et al. 2004), raw units: age [years], sex [1/2], BMI [kg/m^2], mean blood
# pressure [mm Hg], six blood serum measurements, and a disease-progression score.
DIABETES_BOUNDS_X = (
    [18.0, 1.0, 15.0, 60.0, 90.0, 40.0, 20.0, 2.0, 3.0, 55.0],
    [80.0, 2.0, 45.0, 140.0, 310.0, 250.0, 100.0, 10.0, 6.5, 125.0],
)
DIABETES_BOUNDS_Y = (0.0, 350.0)

# Wisconsin breast cancer, the ten "mean" features: radius, texture, perimeter, area,
# smoothness, compactness, concavity, concave points, symmetry, fractal dimension.
BREAST_CANCER_BOUNDS_X = (
    [5.0, 5.0, 40.0, 100.0, 0.05, 0.0, 0.0, 0.0, 0.1, 0.04],
    [30.0, 40.0, 200.0, 2600.0, 0.17, 0.35, 0.45, 0.21, 0.31, 0.1],
)

# The public label set: 0 = malignant, 1 = benign (scikit-learn's documented encoding).
BREAST_CANCER_CLASSES = (0, 1)

# Engel: annual household income in Belgian francs.
ENGEL_BOUNDS_X = ([0.0], [5000.0])
# Engel: annual food expenditure in Belgian francs. Quantile regression does not clip y; this
# range only sets the (public) parameter domain of the KNG density. Food expenditure cannot
# exceed income, so income's range is a public range of y. (A narrower guess such as
# [0, 2500] would exclude the true slope, about 0.6 per franc, from the domain: the default
# domain holds only lines that stay within bounds_y over the whole income range.)
ENGEL_BOUNDS_Y = (0.0, 5000.0)

BOUNDS_NOTE = (
    "bounds are fixed public constants (see dpreg/demo.py), not computed privately; "
    "privacy holds for each fit given those bounds"
)


#: The median task's own grid: its propose-test-release test rarely passes below eps = 2 here.
MEDIAN_EPSILONS = (2.0, 4.0, 8.0)


def contaminated_sample(n=12_500, dim=2, fraction=0.1, shift=5.0, seed=0):
    """N(0, I) data with a ``fraction`` of the rows moved by ``+shift`` in every coordinate.

    Returns ``(X, centre)`` where ``centre`` (zeros) is the centre of the uncontaminated bulk.
    """
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, dim))
    X[rng.random(n) < fraction] += shift
    return X, np.zeros(dim)


def demo_tasks(only=None, norm=None):
    """Return the list of :class:`~dpreg.compare.Task` objects the demo runs.

    Parameters
    ----------
    only : iterable of {"linear", "logistic", "quantile", "median"}, optional
        Restrict the demo to these models.
    norm : str, optional
        Norm passed to every private estimator (default: each estimator's own default).
    """
    from sklearn.datasets import load_breast_cancer, load_diabetes

    wanted = set(only) if only else {"linear", "logistic", "quantile", "median"}
    tasks = []
    if "linear" in wanted:
        data = load_diabetes(scaled=False)
        tasks.append(
            make_task(
                "linear",
                data.data,
                data.target,
                "diabetes: linear regression",
                bounds_X=DIABETES_BOUNDS_X,
                bounds_y=DIABETES_BOUNDS_Y,
                norm=norm,
                notes=[BOUNDS_NOTE],
            )
        )
    if "logistic" in wanted:
        data = load_breast_cancer()
        tasks.append(
            make_task(
                "logistic",
                data.data[:, :10],
                data.target,
                "breast cancer: logistic regression",
                bounds_X=BREAST_CANCER_BOUNDS_X,
                classes=BREAST_CANCER_CLASSES,
                norm=norm,
                notes=[BOUNDS_NOTE],
            )
        )
    if "quantile" in wanted:
        X, y, _ = load_engel()
        tasks.append(
            make_task(
                "quantile",
                X,
                y,
                "Engel: median regression of food expenditure",
                bounds_X=ENGEL_BOUNDS_X,
                bounds_y=ENGEL_BOUNDS_Y,
                quantile=0.5,
                norm=norm,
                notes=[
                    "income bounded in [0, 5000]; y is not clipped, its public range "
                    "[0, 5000] (food spending <= income) only sets the parameter domain"
                ],
            )
        )
    if "median" in wanted:
        X, centre = contaminated_sample()
        tasks.append(
            make_task(
                "median",
                X,
                None,
                "synthetic 2-D data, 10% outliers: private robust centre",
                norm=norm,
                notes=[
                    f"n={len(X)} draws of N(0, I) with 10% moved to (+5, +5) (seed 0); "
                    "the bulk's centre is 0",
                    "eps < 2 is not shown: propose-test-release needs n * eps large to pass",
                ],
                metric="centre",
                truth=centre,
                epsilons=MEDIAN_EPSILONS,
            )
        )
    return tasks
