"""The ``dpreg`` command line: ``dpreg demo`` (and more subcommands as they land)."""

from __future__ import annotations

import argparse
import sys

import numpy as np


def _noise_demo(out=sys.stdout):
    """Per-coordinate noise standard deviation of each mechanism for a box sensitivity space.

    The statistic moves by at most 1 in every coordinate between neighbours, so its
    sensitivities are Delta_inf = 1, Delta_2 = sqrt(m), Delta_1 = m.
    """
    from .noise import GaussianMechanism, KNormMechanism

    delta = 1e-6
    print("Noise backend: per-coordinate std for a statistic in a unit box (delta=1e-6 for "
          "Gaussian)", file=out)
    header = f"{'dim':>4} {'eps':>5} {'l1':>10} {'l2':>10} {'linf':>10} {'gauss':>10}"
    print(header, file=out)
    for m in (1, 5, 20):
        for eps in (0.5, 1.0, 2.0):
            row = []
            for norm, sens in (("l1", m), ("l2", np.sqrt(m)), ("linf", 1.0)):
                row.append(np.sqrt(KNormMechanism(norm, m, sens, eps).variance))
            row.append(GaussianMechanism(eps, delta, np.sqrt(m)).sigma)
            print(f"{m:>4} {eps:>5g} " + " ".join(f"{v:>10.3f}" for v in row), file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="dpreg", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="fit every private estimator next to its non-private baseline")
    args = parser.parse_args(argv)
    if args.command == "demo":
        _noise_demo()
    return 0


if __name__ == "__main__":
    sys.exit(main())
