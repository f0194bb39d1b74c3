"""Randomness for releases: one helper turns ``random_state`` into a generator.

Why a cryptographically secure generator
-----------------------------------------
A differential-privacy proof assumes the noise is independent of everything an attacker can
see. numpy's default PCG64 is a fast statistical generator: its state can be reconstructed
from a modest number of outputs, after which every later draw (and so every later noise
value) is predictable. With ``random_state=None`` we therefore draw from a ChaCha stream
cipher with 20 rounds (``randomgen.ChaCha``, a CSPRNG) keyed from the operating system's
entropy. Every call builds a *fresh* generator, so two fits, or two joblib workers that each
fit an estimator, never share a stream (a forked worker does not inherit a key: the key is
drawn when the estimator's ``fit`` asks for a generator).

A seeded ``random_state`` (an int, a ``RandomState`` or a ``Generator``) stays reproducible,
as scikit-learn users expect; it is meant for tests and examples, **not for releases**: anyone
who knows the seed knows the noise.

What a mechanism keeps
----------------------
A mechanism built with ``random_state=None`` holds its ChaCha generator between releases,
and ChaCha is seekable: whoever has the key can set the counter back to 0 and replay the noise
of every earlier release, hence recover the released statistics exactly (audit s22, F3). The
mechanisms therefore derive from :class:`SecureRngPickling`, which leaves that generator out of
their pickles (and deep copies); the copy draws from a fresh secure generator. A seeded
mechanism pickles its generator as before, so it stays reproducible.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "SecureRngPickling",
    "check_random_state",
    "random_words",
    "release_seed",
    "secure_generator",
]


def secure_generator():
    """A fresh numpy ``Generator`` over ChaCha20 keyed from the operating system's entropy.

    Examples
    --------
    >>> from dpreg._random import secure_generator
    >>> rng = secure_generator()
    >>> 0.0 <= rng.random() < 1.0
    True
    """
    from randomgen import ChaCha

    # SeedSequence() without entropy reads 128 bits from the OS (secrets.randbits);
    # ChaCha derives its 256-bit key from it.
    return np.random.Generator(ChaCha(seed=np.random.SeedSequence(), rounds=20))


def check_random_state(random_state):
    """Turn ``random_state`` into a numpy ``Generator``.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        ``None`` (the default for every estimator and mechanism): a fresh cryptographically
        secure generator keyed from the operating system (:func:`secure_generator`). An int
        seeds numpy's default generator (reproducible: for tests, not for releases). A
        ``RandomState`` seeds a fresh ``Generator`` from its own stream, so repeated calls
        with the same seeded ``RandomState`` are reproducible. A ``Generator`` is used as is.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> from dpreg._random import check_random_state
    >>> float(check_random_state(0).random()) == float(check_random_state(0).random())
    True
    """
    if random_state is None:
        return secure_generator()
    if isinstance(random_state, bool):
        raise ValueError("random_state must be None, an int, a RandomState or a Generator.")
    if isinstance(random_state, (numbers.Integral, np.integer)):
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    raise ValueError(
        f"random_state must be None, an int, a RandomState or a Generator, got {random_state!r}."
    )


class SecureRngPickling:
    """Mixin for objects with ``random_state`` and a generator ``_rng`` from
    :func:`check_random_state`: with ``random_state=None`` the generator (its secret key and
    counter) is not pickled, and unpickling, or ``copy.deepcopy``, gives a fresh secure one.

    A pickle saved next to a release would otherwise carry the key that produced its noise
    (see the module docstring). Seeded objects keep their generator in the pickle.
    """

    def __getstate__(self):
        state = self.__dict__.copy()
        if getattr(self, "random_state", None) is None:
            state.pop("_rng", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "_rng" not in state:
            self._rng = secure_generator()


def random_words(rng, shape):
    """``shape`` independent uniform 64-bit words (``uint64``) from ``rng``'s bit generator.

    The exact samplers of :mod:`dpreg.noise._exact` build their uniforms from these raw bits,
    so that every bit is accounted for (no float conversion in between).
    """
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    words = rng.bit_generator.random_raw(n) if n else np.zeros(0, dtype=np.uint64)
    return np.asarray(words, dtype=np.uint64).reshape(shape)


def release_seed(*parts):
    """A bootstrap seed hashed (SHA-256) from released values: a deterministic function of
    public quantities, so seeding with it is post-processing.

    ``parts`` are arrays or scalars (``None`` hashes as NaN); callers pass released quantities
    only, never private data. With one fixed seed every release reused the same Monte Carlo
    draws, so their error was common to all intervals instead of averaging out: with 250
    draws the fixed seed's draws of the functional mechanism's first slope had kurtosis -0.4
    at every n and epsilon, and its quantile intervals under-covered in every cell
    (docs/inference.md, "One seed per release"). Hashing the release keeps ``conf_int`` a
    deterministic function of it while two releases get independent draws. Used by every
    bootstrap interval (functional, logistic, KNG, projection median).

    Examples
    --------
    >>> import numpy as np
    >>> from dpreg._random import release_seed
    >>> release_seed(np.array([1.0, 2.0]), 100, 0.5) == release_seed([1.0, 2.0], 100, 0.5)
    True
    >>> release_seed([1.0, 2.0], 100, 0.5) == release_seed([1.0, 2.0], 100, 0.25)
    False
    """
    import hashlib  # noqa: PLC0415

    h = hashlib.sha256()
    for part in parts:
        h.update(np.asarray(part if part is not None else np.nan, dtype=float).tobytes())
    return int.from_bytes(h.digest()[:8], "little")
