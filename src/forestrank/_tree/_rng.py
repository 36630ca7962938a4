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


def _ziggurat_tables(n_layers: int = 128, tail: float = 3.442619855899, area: float = 9.91256303526217e-3) -> tuple:
    """Marsaglia and Tsang's tables for ``standard_normal`` ("The ziggurat method for generating
    random variables", J. Stat. Softw. 5(8), 2000, §2 and the code of its RNOR): the layers'
    integer bounds ``k`` (uint32 magnitudes below which a draw is inside its layer's
    rectangle), widths ``w`` per integer unit and densities ``f`` at their edges."""
    scale = 2.0**31
    k = np.zeros(n_layers, dtype=np.int64)
    w = np.zeros(n_layers)
    f = np.zeros(n_layers)
    edge = previous = tail
    q = area / np.exp(-0.5 * edge * edge)
    k[0] = int(edge / q * scale)
    w[0] = q / scale
    w[-1] = edge / scale
    f[0] = 1.0
    f[-1] = np.exp(-0.5 * edge * edge)
    for i in range(n_layers - 2, 0, -1):
        edge = np.sqrt(-2.0 * np.log(area / edge + np.exp(-0.5 * edge * edge)))
        k[i + 1] = int(edge / previous * scale)
        previous = edge
        f[i] = np.exp(-0.5 * edge * edge)
        w[i] = edge / scale
    return k, w, f, tail


_ZIGGURAT_K, _ZIGGURAT_W, _ZIGGURAT_F, _ZIGGURAT_TAIL = _ziggurat_tables()


@jit
def standard_normal(state):
    """A standard normal draw by the ziggurat method (``_ziggurat_tables``): a signed 32-bit
    draw picks a layer and a point in it, accepted at once inside the layer's rectangle
    (about 99% of draws); otherwise the wedge is tested against the density, and the base
    layer samples the tail beyond ``_ZIGGURAT_TAIL`` by Marsaglia's exponential method."""
    while True:
        bits = np.int64(np.int32(next_uint64(state) >> np.uint64(32)))
        layer = bits & 127
        if abs(bits) < _ZIGGURAT_K[layer]:
            return bits * _ZIGGURAT_W[layer]
        x = bits * _ZIGGURAT_W[layer]
        if layer == 0:
            while True:
                tail_x = -np.log(1.0 - uniform(state)) / _ZIGGURAT_TAIL
                tail_y = -np.log(1.0 - uniform(state))
                if tail_y + tail_y >= tail_x * tail_x:
                    break
            return _ZIGGURAT_TAIL + tail_x if bits > 0 else -_ZIGGURAT_TAIL - tail_x
        if _ZIGGURAT_F[layer] + uniform(state) * (_ZIGGURAT_F[layer - 1] - _ZIGGURAT_F[layer]) < np.exp(-0.5 * x * x):
            return x
