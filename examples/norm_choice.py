"""Choosing the noise: K-norm mechanisms, the analytic Gaussian and flipped Huber noise.

For a statistic whose coordinates each move by at most 1 between neighbouring data sets (a
box-shaped sensitivity space), the l-infinity K-norm mechanism adds the least noise among
pure-DP K-norm mechanisms: its scaled ball has the smallest volume (seed 001, section 3).
With delta > 0, the Gaussian and flipped Huber mechanisms are alternatives.

Run: python examples/norm_choice.py   (writes norm_choice.png when matplotlib is installed)
"""

import numpy as np

from dpreg.noise import (
    FlippedHuberMechanism,
    GaussianMechanism,
    KNormMechanism,
    choose_norm,
    log_scaled_volume,
)

m = 10
sens = {"l1": float(m), "l2": float(np.sqrt(m)), "linf": 1.0}
print(f"statistic in R^{m}, each coordinate moves by at most 1: sensitivities {sens}")
for norm, s in sens.items():
    print(f"  log volume of Delta_K * K for {norm:>4}: {log_scaled_volume(norm, s, m):8.3f}")
best = choose_norm(list(sens), list(sens.values()), dim=m)
print("choose_norm picks:", best)

print(f"\nper-coordinate standard deviation of the noise (dim {m})")
print(f"{'eps':>5} {'l1':>9} {'l2':>9} {'linf':>9} {'gauss d=1e-6':>13} {'huber d=1e-6':>13}")
for eps in (0.5, 1.0, 2.0, 5.0):
    row = [np.sqrt(KNormMechanism(n, m, s, eps).variance) for n, s in sens.items()]
    row.append(GaussianMechanism(eps, 1e-6, sens["l2"]).sigma)
    huber = FlippedHuberMechanism(
        eps, 1e-6, sensitivity=1.0, dim=m, l2_sensitivity=sens["l2"], l1_sensitivity=sens["l1"]
    )
    row.append(np.sqrt(huber.variance))
    print(
        f"{eps:>5g} "
        + " ".join(f"{v:>9.3f}" for v in row[:3])
        + "".join(f" {v:>13.3f}" for v in row[3:])
    )

# The empirical error of one release matches the variance formulas.
rng = np.random.default_rng(0)
mech = KNormMechanism("linf", m, 1.0, 1.0, random_state=rng)
draws = mech.sample(20_000)
print(
    f"\nlinf, eps=1: empirical per-coordinate variance {draws.var():.2f} "
    f"vs formula {mech.variance:.2f}"
)

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib not installed: no plot")
else:
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for norm, s in sens.items():
        v = KNormMechanism(norm, m, s, 1.0, random_state=1).sample(20_000)
        ax.hist(np.linalg.norm(v, axis=1), bins=80, histtype="step", density=True, label=norm)
    ax.set_xlabel("Euclidean length of the noise vector (eps = 1)")
    ax.legend(title="K-norm")
    fig.tight_layout()
    fig.savefig("norm_choice.png", dpi=100)
    print("wrote norm_choice.png")
