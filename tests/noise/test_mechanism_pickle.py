"""A pickled mechanism must not let anyone replay its noise (audit s22, F3).

With ``random_state=None`` the mechanism's ChaCha generator used to be pickled with it; ChaCha
is seekable, so setting the counter back to 0 replayed the noise of every earlier release and
gave the released statistic exactly. The attack below is the audit's: rewind the unpickled
generator to a fresh stream's state and release again.
"""

import copy
import pickle

import numpy as np
import pytest

from dpreg.noise import (
    FlippedHuberMechanism,
    GaussianMechanism,
    KNormMechanism,
    LaplaceMechanism,
)

MAKERS = {
    "laplace": lambda rs: LaplaceMechanism(1.0, 1.0, random_state=rs),
    "gaussian": lambda rs: GaussianMechanism(1.0, 1e-6, 1.0, random_state=rs),
    "knorm_l2": lambda rs: KNormMechanism("l2", 3, 1.0, 1.0, random_state=rs),
    "flipped_huber": lambda rs: FlippedHuberMechanism(1.0, 1e-6, 1.0, random_state=rs),
}


def _rewound(mech):
    """The unpickled mechanism with its generator set back to the start of its stream (what a
    fresh ChaCha looks like: counter 0, no buffered words)."""
    st = mech._rng.bit_generator.state
    st = {**st, "state": {**st["state"], "ctr": np.zeros_like(st["state"]["ctr"])}}
    for key in ("has_uint32", "uinteger"):
        if key in st:
            st[key] = 0
    mech._rng.bit_generator.state = st
    return mech


def _value(mech):
    return np.zeros(mech.dim) if getattr(mech, "dim", 1) > 1 else 0.0


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_unpickled_unseeded_mechanism_cannot_replay_the_noise(kind):
    mech = MAKERS[kind](None)
    value = _value(mech)
    released = mech.randomise(value)
    blob = pickle.dumps(mech)
    for copied in (pickle.loads(blob), copy.deepcopy(mech)):
        assert copied.random_state is None
        # the copy still releases (a fresh secure generator) ...
        assert np.all(np.isfinite(copied.randomise(value)))
        # ... but rewinding it does not reproduce the earlier noise
        replay = _rewound(copied).randomise(value)
        assert not np.array_equal(replay, released)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_seeded_mechanism_pickles_its_stream(kind):
    """Control: a seeded mechanism is reproducible, through pickling too."""
    mech = MAKERS[kind](7)
    value = _value(mech)
    first = mech.randomise(value)
    copied = pickle.loads(pickle.dumps(mech))
    np.testing.assert_array_equal(copied.randomise(value), mech.randomise(value))
    # and the same seed gives the same first release
    np.testing.assert_array_equal(MAKERS[kind](7).randomise(value), first)
