"""Noise backend benchmark: error of each mechanism on a box-sensitivity statistic, and speed.

The statistic has sensitivity space [-1, 1]^dim (e.g. a vector of bounded means times n):
Delta_inf = 1, Delta_2 = sqrt(dim), Delta_1 = dim. For dim in {1, 5, 20} and epsilon in
{0.1, 0.5, 1, 2, 5} we report the expected squared l2 norm E||V||_2^2 of

* the l1, l2 and linf K-norm mechanisms (exact: (m+1)(m+2) b^2 tr E[U U^T]), epsilon-DP;
* the analytic Gaussian mechanism (dim * sigma^2) with delta = 1e-6;
* the flipped Huber mechanism with delta = 1e-6 (dim * variance; skipped with a note while
  ``FlippedHuberMechanism`` is not implemented);

checked against a Monte Carlo mean over replicates, with ratios to the Laplace (l1) baseline
measured in the same run. It also times every sampler (draws per second): the
floating-point-safe releases (``sample`` = exact grid release, ``docs/floating_point.md``) next to
the plain float64 samplers they replaced ("old float" rows), with the ratio new / old, and an exact
polytope sampler (the cube as a PolytopeBall, dims where Qhull is feasible) and box rejection
from a membership oracle (the l2 ball as a ConvexBody; infeasible in dim 20).

Run ``python -m benchmarks.noise [--quick | --full]`` from the repository root.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pandas as pd
from tqdm import tqdm

from benchmarks._common import cli_parser, save
from dpreg.noise import (
    ConvexBody,
    GaussianMechanism,
    KNormMechanism,
    L2Ball,
    LaplaceMechanism,
    PolytopeBall,
    _exact,
)

DIMS = (1, 5, 20)
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)
DELTA = 1e-6


def _huber(eps, dim):
    """A FlippedHuberMechanism for the box statistic, or the reason it is unavailable."""
    try:
        from dpreg.noise import FlippedHuberMechanism

        return FlippedHuberMechanism(
            eps,
            DELTA,
            sensitivity=1.0,
            dim=dim,
            l2_sensitivity=math.sqrt(dim),
            l1_sensitivity=float(dim),
            random_state=0,
        ), None
    except NotImplementedError as exc:
        return None, f"flipped Huber skipped: {exc}"


def _huber_sampler(h, dim):
    """Adapt ``h.sample`` to return ``(n, dim)`` whatever convention it uses for ``size``."""
    probe = np.asarray(h.sample(4))
    if probe.shape == (4, dim):
        return lambda n: np.asarray(h.sample(n))
    if probe.shape == (4,) and dim == 1:
        return lambda n: np.asarray(h.sample(n)).reshape(n, 1)
    return lambda n: np.asarray(h.sample((n, dim))).reshape(n, dim)


def _mechanisms(eps, dim):
    """name -> (mechanism, exact E||V||^2 or None, sampler(n, rng) -> (n, dim) array)."""
    out = {}
    seed = 1000 * dim + int(round(100 * eps))
    for name, norm, sens in (("l1", "l1", dim), ("l2", "l2", math.sqrt(dim)), ("linf", "linf", 1)):
        mech = KNormMechanism(norm, dim, float(sens), eps, random_state=seed)
        out[name] = (mech, float(np.trace(mech.covariance())), mech.sample)
    g = GaussianMechanism(eps, DELTA, math.sqrt(dim), random_state=seed)
    out["gaussian"] = (g, dim * g.variance, lambda n, g=g: g.sample((n, dim)))
    h, note = _huber(eps, dim)
    if h is not None:
        out["flipped_huber"] = (h, dim * float(h.variance), _huber_sampler(h, dim))
    return out, note


def _throughput(sampler, n, repeats=3):
    """Draws per second of CPU time (best of ``repeats``).

    CPU time of this process, not wall time: on a shared machine other processes inflate wall
    times at random, which would make the ratios between samplers meaningless.
    """
    best = math.inf
    sampler(min(n, 100))  # warm-up (pilot batches, caches)
    for _ in range(repeats):
        t0 = time.process_time()
        sampler(n)
        best = min(best, time.process_time() - t0)
    return n / best


def _samplers(dim):
    """Extra samplers timed at epsilon = 1 (name -> sampler or a string explaining the skip)."""
    s = {}
    s["l1 (iid Laplace)"] = KNormMechanism("l1", dim, 1.0, 1.0, random_state=0).sample
    s["l1 (polar r*U)"] = KNormMechanism("l1", dim, 1.0, 1.0, 0, method="polar").sample
    s["l2"] = KNormMechanism("l2", dim, 1.0, 1.0, random_state=0).sample
    s["linf"] = KNormMechanism("linf", dim, 1.0, 1.0, random_state=0).sample
    # lp, p not in {1, 2, inf}: the exact generalised-Gaussian rejection release
    s["l1.5"] = KNormMechanism(1.5, dim, 1.0, 1.0, random_state=0).sample
    s["l3"] = KNormMechanism(3, dim, 1.0, 1.0, random_state=0).sample
    lap = LaplaceMechanism(1.0, 1.0, random_state=0)
    s["laplace (scalar mech)"] = lambda n: lap.sample((n, dim))
    g = GaussianMechanism(1.0, DELTA, 1.0, random_state=0)
    s["gaussian"] = lambda n: g.sample((n, dim))
    h, note = _huber(1.0, dim)
    s["flipped_huber"] = _huber_sampler(h, dim) if h is not None else note
    # the plain float64 samplers that the exact grid releases replaced (same laws)
    rng = np.random.default_rng(0)
    s["laplace (old float)"] = lambda n: rng.laplace(0.0, 1.0, (n, dim))
    s["gaussian (old float)"] = lambda n, sd=g.sigma: rng.normal(0.0, sd, (n, dim))
    for name in ("l2", "linf", 1.5, 3):  # the old lp rows: BGMN's float r * U sampler
        ball = KNormMechanism(name, dim, 1.0, 1.0).ball
        name = name if isinstance(name, str) else f"l{name}"
        s[f"{name} (old float)"] = lambda n, b=ball: _exact.float_knorm_sample(b, 1.0, n, rng)
    if h is not None:
        # the old float sampler of the same law (scipy's Laplace when the Laplace limit wins)
        old = getattr(h.distribution, "_float_rvs", h.distribution.rvs)
        s["flipped_huber (old float)"] = lambda n: old(size=(n, dim), random_state=rng)
    if dim <= 8:
        cube = PolytopeBall(vertices=np.array(list(itertools.product([-1.0, 1.0], repeat=dim))))
        s["polytope (cube, cones)"] = KNormMechanism(cube, dim, 1.0, 1.0, random_state=0).sample
    else:
        s["polytope (cube, cones)"] = f"skipped: the cube in dim {dim} has 2*{dim}*{dim - 1}! cones"
    body = ConvexBody(L2Ball(dim).contains, np.ones(dim), max_proposals=10**7)
    try:
        body.sample_uniform(10, random_state=0)
        s["convex body (l2, box rejection)"] = KNormMechanism(body, dim, 1.0, 1.0, 0).sample
    except ValueError:
        s["convex body (l2, box rejection)"] = (
            f"infeasible: acceptance rate {body.acceptance_rate():.2g} in {body.n_pilot} pilot "
            f"proposals (the true rate is vol(l2 ball)/2^{dim} = "
            f"{L2Ball(dim).volume() / 2.0**dim:.2g})"
        )
    return s


def run(quick: bool = False) -> pd.DataFrame:
    """Run the benchmark; returns a long table (metric, mechanism, dim, epsilon, value)."""
    n_mc = 2_000 if quick else 20_000
    n_rep = 3 if quick else 10
    n_speed = 20_000 if quick else 200_000
    rows, notes = [], set()
    settings = list(itertools.product(DIMS, EPSILONS))
    for dim, eps in tqdm(settings, desc="error settings"):
        mechs, note = _mechanisms(eps, dim)
        if note:
            notes.add(note)
        for name, (_, exact, sampler) in mechs.items():
            rng_sums = [float(np.mean(np.sum(sampler(n_mc) ** 2, axis=1))) for _ in range(n_rep)]
            rows.append(("expected_sq_l2", name, dim, eps, exact))
            rows.append(("mc_sq_l2", name, dim, eps, float(np.mean(rng_sums))))
            rows.append(("mc_sq_l2_se", name, dim, eps, float(np.std(rng_sums) / np.sqrt(n_rep))))
    for dim in tqdm(DIMS, desc="throughput"):
        for name, sampler in _samplers(dim).items():
            if isinstance(sampler, str):
                notes.add(sampler if name == "flipped_huber" else f"{name}, dim {dim}: {sampler}")
                rows.append(("draws_per_sec", name, dim, 1.0, np.nan))
                continue
            rows.append(("draws_per_sec", name, dim, 1.0, _throughput(sampler, n_speed)))
    df = pd.DataFrame(rows, columns=["metric", "mechanism", "dim", "epsilon", "value"])

    err = df[df.metric == "expected_sq_l2"].pivot_table(
        index=["dim", "epsilon"], columns="mechanism", values="value"
    )
    mc = df[df.metric == "mc_sq_l2"].pivot_table(
        index=["dim", "epsilon"], columns="mechanism", values="value"
    )
    pd.set_option("display.width", 160)
    print("\nExpected squared l2 norm of the noise, E||V||^2 (box sensitivity, delta = 1e-6):")
    print(err.to_string(float_format=lambda v: f"{v:.4g}"))
    print("\nRatio to the Laplace (l1 K-norm) baseline of the same run:")
    print(err.div(err["l1"], axis=0).to_string(float_format=lambda v: f"{v:.4f}"))
    print("\nMonte Carlo / exact (should be ~1):")
    print((mc / err).to_string(float_format=lambda v: f"{v:.3f}"))
    speed = df[df.metric == "draws_per_sec"].pivot_table(
        index="mechanism", columns="dim", values="value", dropna=False
    )
    print("\nDraws per second (epsilon = 1):")
    print(speed.to_string(float_format=lambda v: f"{v:,.0f}"))
    pairs = {
        "laplace (scalar mech)": "laplace (old float)",
        "gaussian": "gaussian (old float)",
        "l2": "l2 (old float)",
        "linf": "linf (old float)",
        "l1.5": "l1.5 (old float)",
        "l3": "l3 (old float)",
        "flipped_huber": "flipped_huber (old float)",
    }
    ratio = pd.DataFrame(
        {new: speed.loc[new] / speed.loc[old] for new, old in pairs.items() if old in speed.index}
    ).T
    print("\nThroughput of the floating-point-safe release / the old float sampler:")
    print(ratio.to_string(float_format=lambda v: f"{v:.3f}"))
    for note in sorted(notes):
        print("note:", note)

    fig = None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(DIMS) + 1, figsize=(5 * (len(DIMS) + 1), 4))
        for ax, dim in zip(axes, DIMS):
            sub = err.loc[dim]
            for col in sub.columns:
                ax.loglog(sub.index, sub[col], marker="o", label=col)
            ax.set_title(f"dim = {dim}: E||V||² (box sensitivity)")
            ax.set_xlabel("epsilon")
            ax.legend(fontsize=8)
        speed.plot.barh(ax=axes[-1], logx=True)
        axes[-1].set_title("draws per second")
        fig.tight_layout()
    except ImportError:
        print("note: matplotlib missing, no PNG")
    save(df, "noise", fig, quick=quick)
    return df


def main(argv=None):
    parser = cli_parser(__doc__)
    args = parser.parse_args(argv)
    run(quick=args.quick)


if __name__ == "__main__":
    main()
