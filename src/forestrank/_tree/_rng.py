"""Per-tree random numbers with explicit state (``docs/design.md``, "Reproducibility").

numba's ``np.random`` keeps one hidden state per thread, so results would depend on
which thread built which tree. Every tree instead carries its own xoroshiro128+
state (Blackman & Vigna, "Scrambled linear pseudorandom number generators", 2018),
seeded from ``numpy.random.SeedSequence`` children of the estimator's
``random_state``.
"""

import numpy as np

from .._numba.jit import jit


def new_state(seed_sequence: np.random.SeedSequence) -> np.ndarray:
    """A fresh generator state (uint64 array of 2, never all zero) from a SeedSequence."""
    state = seed_sequence.generate_state(2, dtype=np.uint64)
    if not state.any():
        state[0] = 1  # pragma: no cover - probability 2**-128
    return state


@jit(inline="always")
def _rotate_left(value, shift):
    return (value << np.uint64(shift)) | (value >> np.uint64(64 - shift))


@jit(inline="always")
def next_uint64(state):
    """Advance ``state`` (uint64[2]) and return 64 random bits (xoroshiro128+)."""
    s0 = state[0]
    s1 = state[1]
    result = s0 + s1
    s1 ^= s0
    state[0] = _rotate_left(s0, 24) ^ s1 ^ (s1 << np.uint64(16))
    state[1] = _rotate_left(s1, 37)
    return result


@jit(inline="always")
def uniform(state):
    """A float64 uniform on [0, 1) from the top 53 bits."""
    return float(next_uint64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@jit(inline="always")
def randint(state, n):
    """An integer uniform on [0, n) (bias below 2**-53 * n)."""
    return int(uniform(state) * n)
