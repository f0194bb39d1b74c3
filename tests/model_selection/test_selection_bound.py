"""Adversarial check of the factor 3 of random stopping, on the exact output law.

For a base run Q with finitely many outcomes (item i has score s_i and probability p_i), the
search that repeats Q a geometric number of times (stop probability gamma after each run) and
keeps the first run with the highest score releases item i with probability

    P(i) = sum_k gamma (1-gamma)^(k-1) sum_{j<=k} q_<^(j-1) p_i q_<=^(k-j)
         = gamma p_i / (q_<= - q_<) * [q_<= / (1 - (1-gamma) q_<=) - q_< / (1 - (1-gamma) q_<)],

with q_< (q_<=) the probability that a run scores below (at most) s_i. A search over pairs of
neighbouring base laws (max |log p'/p| = eps_0) must never find a ratio P'(i)/P(i) above
e^(3 eps_0), the cost PrivateSearchCV charges; and it does find ratios above e^(2 eps_0), so a
factor 2 would under-charge.
"""

import numpy as np

from dpreg.model_selection._search import SELECTION_FACTOR


def release_law(p, scores, gamma):
    out = np.empty(len(p))
    for i in range(len(p)):
        q_lt = p[scores < scores[i]].sum()
        q_le = p[scores <= scores[i]].sum()
        head = q_le / (1 - (1 - gamma) * q_le) - q_lt / (1 - (1 - gamma) * q_lt)
        out[i] = gamma * p[i] * head / (q_le - q_lt)
    return out


def test_release_law_sums_to_one_and_matches_simulation():
    rng = np.random.default_rng(0)
    p, scores, gamma = np.array([0.5, 0.3, 0.2]), np.array([0.0, 2.0, 1.0]), 0.3
    law = release_law(p, scores, gamma)
    assert np.isclose(law.sum(), 1.0)
    counts = np.zeros(3)
    for _ in range(20000):
        best, best_score = None, -np.inf
        while True:
            i = rng.choice(3, p=p)
            if scores[i] > best_score:
                best, best_score = i, scores[i]
            if rng.uniform() < gamma:
                break
        counts[best] += 1
    assert np.allclose(counts / counts.sum(), law, atol=0.015)


def _ratio_over_eps(theta, scores):
    """max_i |log P'(i)/P(i)| / eps_0 for base laws and gamma given by unconstrained theta."""
    m = len(scores)
    p, p2 = np.exp(theta[:m]), np.exp(theta[m : 2 * m])
    p, p2 = p / p.sum(), p2 / p2.sum()
    gamma = 1 / (1 + np.exp(-theta[-1]))
    eps0 = float(np.max(np.abs(np.log(p2 / p))))
    if eps0 < 0.01:
        return 0.0
    law, law2 = release_law(p, scores, gamma), release_law(p2, scores, gamma)
    return float(np.max(np.abs(np.log(law2 / law)))) / eps0


def test_no_neighbouring_base_laws_exceed_three_eps():
    """Hill climbing from random starts over (p, p', gamma), 2 to 4 outcomes."""
    rng = np.random.default_rng(1)
    worst = 0.0
    for start in range(30):
        m = 2 + start % 3
        scores = rng.permutation(m).astype(float)
        theta = np.concatenate([rng.normal(scale=2, size=2 * m), [rng.normal(scale=3)]])
        value = _ratio_over_eps(theta, scores)
        for _ in range(200):
            trial = theta + rng.normal(scale=0.3, size=theta.size)
            trial_value = _ratio_over_eps(trial, scores)
            if trial_value > value:
                theta, value = trial, trial_value
        worst = max(worst, value)
    assert worst <= SELECTION_FACTOR + 1e-9
    assert worst > 2.5  # the factor 3 is needed: a factor 2 would under-charge
