"""The bit intrinsics, compiled as interpreted: the sign bit of a float64 as 0 or -1, and a word's
lowest set bit."""

import numba
import numpy as np
import pytest

from forestrank._numba.bits import sign_mask, trailing_zeros


@numba.njit
def _masks(values):
    out = np.empty(len(values), dtype=np.int64)
    for i in range(len(values)):
        out[i] = sign_mask(values[i])
    return out


def test_sign_mask_is_every_bit_of_a_set_sign():
    values = np.array([-2.5, -1e-320, -0.0, 0.0, 5e-324, 3.0, -np.inf, np.inf, np.nan, -np.nan])
    expected = np.where(np.signbit(values), -1, 0)
    np.testing.assert_array_equal(_masks(values), expected)
    assert (_masks(np.array([-7.0]))[0] & 37) == 37 and (_masks(np.array([7.0]))[0] & 37) == 0


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="typing errors exist only when compiled")
def test_sign_mask_takes_float64_only():
    @numba.njit
    def wrong(value):
        return sign_mask(value)

    with pytest.raises(numba.core.errors.TypingError):
        wrong(np.float32(1.0))


@numba.njit
def _lowest_bits(words):
    out = np.empty(len(words), dtype=np.int64)
    for i in range(len(words)):
        out[i] = trailing_zeros(words[i])
    return out


def test_trailing_zeros_is_the_index_of_the_lowest_set_bit():
    bits = np.arange(64, dtype=np.uint64)
    words = np.concatenate([np.uint64(1) << bits, (np.uint64(1) << bits) | np.uint64(1 << 63), [np.uint64(0xFFFFFFFFFFFFFFFF)]])
    expected = np.concatenate([np.arange(64), np.arange(64), [0]])
    np.testing.assert_array_equal(_lowest_bits(words.astype(np.uint64)), expected)
