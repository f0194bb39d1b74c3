"""The ``dpreg`` command line: demo, compare (including bad input) and the evaluation engine."""

import csv
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from dpreg.cli import main
from dpreg.compare import (
    CoordinateMedian,
    InputError,
    Task,
    evaluate,
    format_results,
    location_error,
    numeric_column,
    read_csv_columns,
    write_csv,
)
from dpreg.datasets import load_engel


@pytest.fixture
def linear_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    X = rng.uniform(-1, 1, size=(n, 2))
    y = 0.5 * X[:, 0] - 0.3 * X[:, 1] + 0.1 * rng.normal(size=n)
    path = tmp_path / "data.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "b", "y", "label"])
        for row, target in zip(X, y):
            w.writerow([f"{row[0]:.5f}", f"{row[1]:.5f}", f"{target:.5f}", int(target > 0)])
    return path


def _error_line(capsys, argv):
    rc = main(argv)
    captured = capsys.readouterr()
    assert rc == 2
    lines = [ln for ln in captured.err.strip().splitlines() if ln.strip()]
    assert lines, "no error message"
    assert lines[-1].startswith("dpreg compare: error: ")
    assert "Traceback" not in captured.err
    return lines[-1]


# ----------------------------------------------------------------------------------------------
# bad input: one line, exit code 2, never a traceback
# ----------------------------------------------------------------------------------------------


def test_compare_missing_file(capsys, tmp_path):
    line = _error_line(
        capsys, ["compare", str(tmp_path / "nope.csv"), "--target", "y", "--model", "linear"]
    )
    assert "file not found" in line


def test_compare_unknown_column(capsys, linear_csv):
    line = _error_line(capsys, ["compare", str(linear_csv), "--target", "zz", "--model", "linear"])
    assert "unknown column 'zz'" in line


def test_compare_unknown_feature(capsys, linear_csv):
    line = _error_line(
        capsys,
        [
            "compare",
            str(linear_csv),
            "--target",
            "y",
            "--model",
            "linear",
            "--features",
            "a",
            "nope",
        ],
    )
    assert "unknown column 'nope'" in line


@pytest.mark.parametrize(
    ("value", "expect"),
    [
        ("abc", "not numeric"),
        ("", "missing value"),
        ("NaN", "missing value"),
        ("inf", "non-finite"),
    ],
)
def test_compare_bad_values(capsys, linear_csv, value, expect):
    lines = linear_csv.read_text().splitlines()
    fields = lines[5].split(",")
    fields[1] = value
    lines[5] = ",".join(fields)
    linear_csv.write_text("\n".join(lines) + "\n")
    line = _error_line(
        capsys,
        [
            "compare",
            str(linear_csv),
            "--target",
            "y",
            "--model",
            "linear",
            "--bounds",
            "-1",
            "1",
            "--target-bounds",
            "-2",
            "2",
        ],
    )
    assert expect in line and "'b'" in line


def test_compare_ragged_and_empty(capsys, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert "empty" in _error_line(
        capsys, ["compare", str(empty), "--target", "y", "--model", "linear"]
    )
    header_only = tmp_path / "h.csv"
    header_only.write_text("x,y\n")
    assert "no data rows" in _error_line(
        capsys, ["compare", str(header_only), "--target", "y", "--model", "linear"]
    )
    ragged = tmp_path / "r.csv"
    ragged.write_text("x,y\n1,2\n3\n")
    assert "fields" in _error_line(
        capsys, ["compare", str(ragged), "--target", "y", "--model", "linear"]
    )


def test_compare_binary_file(capsys, tmp_path):
    path = tmp_path / "bin.csv"
    path.write_bytes(bytes(range(256)) * 4)
    _error_line(capsys, ["compare", str(path), "--target", "y", "--model", "linear"])


@pytest.mark.parametrize(
    ("bounds", "expect"),
    [
        (["1", "-1"], "lower bound"),
        (["a=0:1"], "no bounds for column"),
        (["a=0:1", "b=zero:1"], "cannot parse"),
        (["q=0:1", "b=0:1"], "not a feature"),
        (["x", "y"], "two numbers"),
    ],
)
def test_compare_bad_bounds(capsys, linear_csv, bounds, expect):
    line = _error_line(
        capsys,
        [
            "compare",
            str(linear_csv),
            "--target",
            "y",
            "--model",
            "linear",
            "--features",
            "a",
            "b",
            "--bounds",
            *bounds,
        ],
    )
    assert expect in line


def test_compare_logistic_rejects_labels_outside_classes(capsys, linear_csv):
    line = _error_line(
        capsys,
        [
            "compare",
            str(linear_csv),
            "--target",
            "label",
            "--model",
            "logistic",
            "--bounds",
            "-1",
            "1",
            "--classes",
            "0",
            "7",
        ],
    )
    assert "label(s) not in --classes: 1" in line


def test_compare_needs_target_and_rows(capsys, linear_csv, tmp_path):
    assert "--target is required" in _error_line(
        capsys, ["compare", str(linear_csv), "--model", "linear"]
    )
    small = tmp_path / "small.csv"
    small.write_text("x,y\n1,2\n3,4\n5,6\n")
    assert "too few" in _error_line(
        capsys,
        ["compare", str(small), "--target", "y", "--model", "quantile", "--bounds", "0", "10"],
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "f.csv", "--model", "ridge"],
        ["compare", "f.csv", "--model", "linear", "--epsilon", "0"],
        ["compare", "f.csv", "--model", "linear", "--epsilon", "nan"],
        ["demo", "--cv", "1"],
        ["compare", "f.csv", "--model", "linear", "--repeats", "0"],
        ["compare", "f.csv", "--model", "linear", "--repeats", "-2"],
        ["compare", "f.csv", "--model", "linear", "--repeats", "1.5"],
        ["demo", "--repeats", "0"],
    ],
)
def test_bad_arguments_exit_2_without_traceback(capsys, argv):
    """argparse errors (unknown model, epsilon <= 0, one fold, repeats < 1) exit 2 with a
    usage line, before any file is read or any fit runs (audit s21 finding 11: --repeats 0
    printed a table of n/a and exited 0)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err
    if "--repeats" in argv:
        assert "argument --repeats" in err
        assert "must be an integer >= 1" in err or "is not an integer" in err


def test_console_script_error_is_one_line(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpreg.cli",
            "compare",
            str(tmp_path / "missing.csv"),
            "--target",
            "y",
            "--model",
            "quantile",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert proc.stderr.startswith("dpreg compare: error: file not found")


# ----------------------------------------------------------------------------------------------
# CSV parsing helpers
# ----------------------------------------------------------------------------------------------


def test_read_csv_semicolons_and_bom(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("\ufeffx;y\n1;2\n3;4\n", encoding="utf-8")
    names, rows = read_csv_columns(path)
    assert names == ["x", "y"]
    np.testing.assert_array_equal(numeric_column(names, rows, "y"), [2.0, 4.0])
    with pytest.raises(InputError, match="unknown column"):
        numeric_column(names, rows, "z")


# ----------------------------------------------------------------------------------------------
# the evaluation engine
# ----------------------------------------------------------------------------------------------


class _NoisyMedian:
    """A toy 'private' location estimator: the median plus noise of scale 1/epsilon."""

    def __init__(self, epsilon, random_state):
        self.epsilon, self.random_state = epsilon, random_state

    def fit(self, X, y=None):
        rng = np.random.default_rng(self.random_state)
        X = np.asarray(X, float)
        self.location_ = np.median(X, axis=0) + rng.laplace(0, 1 / self.epsilon, X.shape[1])
        return self


def test_evaluate_error_shrinks_with_epsilon():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    task = Task(
        "toy",
        X,
        None,
        lambda e, s: _NoisyMedian(e, s),
        {"median": CoordinateMedian},
        "location",
        "NoisyMedian",
    )
    rows = evaluate([task], [0.1, 100.0], cv=4, repeats=3, progress=False)
    priv = {r["epsilon"]: r for r in rows if r["kind"] == "dp_fit"}
    base = [r for r in rows if r["kind"] == "baseline"][0]
    assert priv[0.1]["n_scores"] == 12 and base["n_scores"] == 4
    assert priv[0.1]["mean"] > 3 * priv[100.0]["mean"]
    assert priv[100.0]["mean"] == pytest.approx(base["mean"], rel=0.2)
    text = format_results(rows, [task], cv=4, repeats=3)
    assert "NoisyMedian (DP fit; score not private)" in text and "median (non-private)" in text


def test_evaluate_shows_warnings_of_private_fits_and_hides_none():
    """Issue 10 item 8: the old engine silenced a private fit's warnings; now each is counted
    and printed under the table. A baseline's convergence chatter stays quiet."""
    import warnings as w

    class Warns(_NoisyMedian):
        def fit(self, X, y=None):
            w.warn("chain may not have converged", UserWarning)
            return super().fit(X)

    X = np.random.default_rng(0).normal(size=(60, 2))
    task = Task("toy", X, None, lambda e, s: Warns(e, s), {"m": CoordinateMedian}, "location", "W")
    rows = evaluate([task], [1.0], cv=3, progress=False)
    priv = [r for r in rows if r["kind"] == "dp_fit"][0]
    assert priv["warnings"] == "UserWarning in 3 of 3 fits: chain may not have converged"
    text = format_results(rows, [task], cv=3)
    assert "warning (private fit, epsilon=1): UserWarning in 3 of 3 fits" in text


def test_evaluate_does_not_hide_construction_errors():
    """A TypeError while building the private estimator is a bug: it propagates (the stub-era
    handler turned it into a "not available" note)."""

    def broken(eps, seed):
        raise TypeError("unexpected keyword argument 'bounds'")

    X = np.random.default_rng(0).normal(size=(50, 2))
    task = Task("toy", X, None, broken, {"median": CoordinateMedian}, "location", "Soon")
    with pytest.raises(TypeError, match="unexpected keyword"):
        evaluate([task], [1.0], cv=2, progress=False)


def test_location_error_units():
    X = np.random.default_rng(0).normal(size=(10_000, 2)) * [1.0, 10.0]
    est = CoordinateMedian().fit(X)
    est.location_ = est.location_ + np.array([1.0, 10.0])  # one robust SD off in each coord
    assert location_error(est, X) == pytest.approx(1.0, rel=0.05)


def test_write_csv_roundtrip(tmp_path):
    rows = [
        dict(
            task="t",
            model="m",
            kind="dp_fit",
            epsilon=1.0,
            metric="r2",
            mean=0.5,
            std=0.1,
            n_scores=5,
            n_failed=0,
            seconds=0.1,
            note="",
            warnings="",
        )
    ]
    path = write_csv(rows, tmp_path / "sub" / "r.csv")
    with open(path) as fh:
        back = list(csv.DictReader(fh))
    assert back[0]["model"] == "m" and float(back[0]["mean"]) == 0.5


def test_engel_bundled():
    X, y, names = load_engel()
    assert X.shape == (235, 1) and names == ["income"]
    assert 350 < X.min() < X.max() < 5000 and np.all(y > 0)
    assert np.corrcoef(X[:, 0], y)[0, 1] > 0.9


# ----------------------------------------------------------------------------------------------
# end-to-end runs
# ----------------------------------------------------------------------------------------------


def test_version(capsys):
    from dpreg import __version__

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"dpreg {__version__}"


@pytest.fixture
def iris_csv(tmp_path):
    """Iris with text labels, written by ``DataFrame.to_csv()`` (an unnamed index column)."""
    pd = pytest.importorskip("pandas")
    from sklearn.datasets import load_iris

    data = load_iris()
    frame = pd.DataFrame(data.data[:, :2], columns=["sepal length", "sepal width"])
    frame["species"] = data.target_names[data.target]
    frame = frame.sample(frac=1.0, random_state=0)  # a shuffled, non-consecutive index
    path = tmp_path / "iris.csv"
    frame.to_csv(path)
    return path


def test_compare_multiclass_text_labels_and_index_column(capsys, iris_csv, tmp_path):
    """Issue 16: --model logistic takes multiclass text labels; an unnamed integer index
    column is dropped with a note, and the features used are printed."""
    argv = ["compare", str(iris_csv), "--target", "species", "--model", "logistic"]
    argv += ["--bounds", "4", "8", "--classes", "setosa", "versicolor", "virginica"]
    argv += ["--epsilon", "8", "--cv", "3", "--no-progress", "--out", str(tmp_path / "r.csv")]
    rc = main(argv)
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "features used: sepal length, sepal width" in captured.out
    assert "(an index written by DataFrame.to_csv()): dropped" in captured.err
    assert "NOT differentially private" not in captured.err + captured.out
    with open(tmp_path / "r.csv") as fh:
        rows = {r["kind"]: r for r in csv.DictReader(fh)}
    assert float(rows["baseline"]["mean"]) > 0.7  # sepal features alone: about 0.8
    assert 1 / 3 - 0.2 < float(rows["dp_fit"]["mean"]) <= 1.0


def test_compare_labels_from_data_are_warned(capsys, iris_csv, tmp_path):
    argv = ["compare", str(iris_csv), "--target", "species", "--model", "logistic"]
    argv += ["--bounds", "4", "8", "--epsilon", "8", "--cv", "2", "--no-progress", "--no-plot"]
    rc = main(argv + ["--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "no --classes (the public label set) given" in captured.err
    assert "label set was read from the data: NOT differentially private" in captured.out


def test_named_first_column_is_kept(capsys, linear_csv):
    from dpreg.compare import unnamed_index_column

    names, rows = read_csv_columns(linear_csv)
    assert not unnamed_index_column(names, rows)
    assert unnamed_index_column(["", "x"], [["3", "1.5"], ["0", "2.5"]])
    assert not unnamed_index_column(["", "x"], [["3", "1.5"], ["3", "2.5"]])  # repeated
    assert not unnamed_index_column(["", "x"], [["0.5", "1.5"], ["1", "2.5"]])  # not integer


def test_plot_limits_show_every_error_bar():
    from dpreg.compare import _y_limits

    lo, hi, clipped = _y_limits(np.array([0.3, 0.95, 0.62, 1.02]), "accuracy")
    assert lo < 0.3 and hi > 1.02 and not clipped
    lo, hi, clipped = _y_limits(np.array([-4.0, 0.2, 0.5]), "r2")
    assert -1.2 < lo < -1.0 and hi > 0.5 and clipped


def test_noise_subcommand(capsys):
    assert main(["noise"]) == 0
    out = capsys.readouterr().out
    assert "linf" in out and "gauss" in out


@pytest.mark.parametrize("model", ["linear", "logistic", "quantile", "median"])
def test_compare_runs_each_model(capsys, linear_csv, tmp_path, model):
    argv = [
        "compare",
        str(linear_csv),
        "--model",
        model,
        "--epsilon",
        "1",
        "8",
        "--cv",
        "3",
        "--no-progress",
        "--out",
        str(tmp_path / "res.csv"),
    ]
    if model == "median":
        argv += ["--features", "a", "b", "--epsilon", "8"]
    else:
        target = "label" if model == "logistic" else "y"
        argv += ["--target", target, "--features", "a", "b", "--bounds", "-1", "1"]
    if model == "logistic":
        argv += ["--classes", "0", "1"]
    if model in ("linear", "quantile"):
        argv += ["--target-bounds", "-2", "2"]
    if model == "quantile":  # the two-parameter KNG sampler runs many sweeps: keep it short
        argv += ["--epsilon", "8", "--cv", "2"]
    rc = main(argv)
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "(DP fit; score not private)" in captured.out and "(non-private)" in captured.out
    assert "NOT differentially private" not in captured.err
    with open(tmp_path / "res.csv") as fh:
        rows = list(csv.DictReader(fh))
    priv = [r for r in rows if r["kind"] == "dp_fit"]
    assert priv and all(r["note"] == "" or "released nothing" in r["note"] for r in priv)
    assert (tmp_path / "res.png").stat().st_size > 1000


def test_compare_warns_when_bounds_come_from_data(capsys, linear_csv, tmp_path):
    rc = main(
        [
            "compare",
            str(linear_csv),
            "--target",
            "y",
            "--model",
            "quantile",
            "--features",
            "a",
            "b",
            "--epsilon",
            "2",
            "--cv",
            "2",
            "--no-progress",
            "--no-plot",
            "--out",
            str(tmp_path),
        ]
    )
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "warning: no --bounds given" in captured.err
    assert "NOT differentially private" in captured.out  # repeated under the table
    assert (tmp_path / "dpreg-compare.csv").exists()


def _linear_compare_argv(linear_csv, out):
    argv = ["compare", str(linear_csv), "--target", "y", "--model", "linear"]
    argv += ["--features", "a", "b", "--bounds", "-1", "1", "--target-bounds", "-2", "2"]
    return argv + ["--cv", "3", "--no-progress", "--no-plot", "--out", str(out)]


def test_compare_says_its_scores_are_not_private_and_prints_the_spend(capsys, linear_csv, tmp_path):
    """Audit s21 finding 3: on the user's own (private) CSV the held-out scores are exact,
    yet they were headed "(private)", the CSV said kind=private and kept each fit's running
    time (a function of the data), no caveat was printed and no total spend. Now the heading
    and the CSV say "DP fit; score not private", a warning follows the table, and the total
    (epsilon, delta) the run's fits charged to the ledger is printed."""
    from dpreg import BudgetAccountant

    argv = _linear_compare_argv(linear_csv, tmp_path / "r.csv") + ["--epsilon", "1", "2"]
    # a with-block makes this test's ledger the default: the session's global ledger is
    # shared with the other pytest-xdist worker, whose spends would land in between
    with BudgetAccountant() as ledger:
        before = len(ledger)
        rc = main(argv + ["--repeats", "2"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    charged = ledger.total(ledger.ledger[before:])
    assert len(ledger) - before == 3 * 2 * 2  # folds x repeats x epsilons
    assert charged == pytest.approx((3 * 2 * (1 + 2), 0.0))
    out = captured.out
    assert "(private)" not in out
    assert "FunctionalLinearRegression (DP fit; score not private)" in out
    assert "LinearRegression (non-private)" in out
    assert "warning: these scores are not private" in out
    assert "not a private release" in out
    assert "privacy spent by this run: epsilon=18, delta=0 (12 private fits" in out
    with open(tmp_path / "r.csv") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    assert "seconds" not in reader.fieldnames
    assert {r["kind"] for r in rows} == {"dp_fit", "baseline"}


def test_demo_and_compare_share_the_reading_of_the_table(capsys, linear_csv, tmp_path):
    """One caveat, worded once: the demo prints the same reading of the table and its spend,
    and adds that spending so much is fine on its public data."""
    from dpreg import BudgetAccountant

    with BudgetAccountant():  # this test's own default ledger (see the test above)
        rc = main(_linear_compare_argv(linear_csv, tmp_path / "c.csv") + ["--epsilon", "1"])
    compare_out = capsys.readouterr().out
    assert rc == 0
    argv = ["demo", "--only", "linear", "--epsilon", "1", "--cv", "2", "--quick"]
    with BudgetAccountant():
        rc = main(argv + ["--no-progress", "--no-plot", "--out", str(tmp_path / "d.csv")])
    demo_out = capsys.readouterr().out
    assert rc == 0
    reading = compare_out[compare_out.index("Reading the table") :]
    reading = reading[: reading.index("privacy spent by this run")]
    assert reading in demo_out
    assert "privacy spent by this run: epsilon=2, delta=0 (2 private fits" in demo_out
    assert "public demo data" in demo_out and "public demo data" not in compare_out
    assert "warning: these scores are not private" not in demo_out


def test_demo_quick_prints_table_and_writes_plot(tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run(
        [sys.executable, "-m", "dpreg.cli", "demo", "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for name in (
        "diabetes: linear regression",
        "breast cancer: logistic regression",
        "Engel: median regression",
        "private robust centre",
    ):
        assert name in proc.stdout
    assert "fitting" in proc.stderr  # the tqdm progress bar
    with open(tmp_path / "dpreg-demo.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["model"] for r in rows} >= {
        "FunctionalLinearRegression",
        "ObjectivePerturbationLogistic",
        "KNGQuantileRegressor",
        "PrivateProjectionMedian",
        "LinearRegression",
        "LogisticRegression",
    }
    for r in rows:
        if r["kind"] == "dp_fit":
            assert math.isfinite(float(r["mean"])), r
    assert (tmp_path / "dpreg-demo.png").stat().st_size > 5000
