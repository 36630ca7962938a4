"""The two-lane update: bit for bit the two scalar ``+=`` it replaces, and nothing else written."""

import numba
import numpy as np
import pytest

from assertions import same_bits
from forestrank._numba.pair_add import add_pair


@numba.njit
def _pairs(array, rows, columns, firsts, seconds):
    for i in range(len(rows)):
        add_pair(array, (rows[i], columns[i]), firsts[i], seconds[i])


@numba.njit
def _scalars(array, rows, columns, firsts, seconds):
    for i in range(len(rows)):
        array[rows[i], columns[i]] += firsts[i]
        array[rows[i], columns[i] + 1] += seconds[i]


@numba.njit
def _pair_in_3d(array, feature, b, first, second):
    add_pair(array, (feature, b, np.int64(0)), first, second)


def _updates(rng, n_rows, n_columns, n, special):
    rows = rng.integers(0, n_rows, n)
    columns = rng.integers(0, n_columns - 1, n)  # the pair's second element stays on the row
    firsts = np.where(rng.random(n) < 0.1, rng.choice(special, n), rng.normal(size=n) * 10.0 ** rng.integers(-12, 12, n))
    seconds = np.where(rng.random(n) < 0.1, rng.choice(special, n), rng.normal(size=n) * 10.0 ** rng.integers(-12, 12, n))
    return rows, columns, firsts, seconds


def test_float64_pairs_are_the_scalar_updates_bit_for_bit():
    rng = np.random.default_rng(0)
    start = rng.normal(size=(7, 5))
    start[0, :] = -0.0  # -0.0 + 0.0 is +0.0 in both
    updates = _updates(rng, 7, 5, 2_000, np.array([0.0, -0.0, 5e-324, 1e300, -1e300, 0.1, 1e-17]))
    paired, scalar = start.copy(), start.copy()
    _pairs(paired, *updates)
    _scalars(scalar, *updates)
    assert same_bits(paired, scalar)
    assert not same_bits(scalar, start)


def test_float64_pairs_carry_infinities_and_nan_as_the_scalar_updates():
    """Where NaN's sign and payload land is not defined (LLVM may swap an addition's
    operands), so NaN is compared as NaN."""
    rng = np.random.default_rng(2)
    start = rng.normal(size=(40, 5))
    updates = _updates(rng, 40, 5, 300, np.array([np.inf, -np.inf, np.nan, 1e308]))
    paired, scalar = start.copy(), start.copy()
    _pairs(paired, *updates)
    _scalars(scalar, *updates)
    assert np.array_equal(paired, scalar, equal_nan=True)
    assert np.isnan(scalar).any() and np.isinf(scalar).any() and np.isfinite(scalar).any()


def test_int32_pairs_truncate_as_the_scalar_updates_do():
    rng = np.random.default_rng(1)
    start = rng.integers(-1000, 1000, size=(6, 4)).astype(np.int32)
    rows = rng.integers(0, 6, 500)
    columns = rng.integers(0, 3, 500)
    firsts = np.round(rng.normal(scale=50, size=500), 1)  # fractions truncate toward zero
    seconds = np.round(rng.normal(scale=300, size=500), 2)
    paired, scalar = start.copy(), start.copy()
    _pairs(paired, rows, columns, firsts, seconds)
    _scalars(scalar, rows, columns, firsts, seconds)
    assert np.array_equal(paired, scalar)
    assert not np.array_equal(scalar, start)


def test_a_pair_writes_its_two_elements_only():
    histogram = np.zeros((3, 4, 3))
    _pair_in_3d(histogram, np.int64(1), np.int64(2), 1.5, -2.5)
    expected = np.zeros((3, 4, 3))
    expected[1, 2, :2] = 1.5, -2.5
    assert np.array_equal(histogram, expected)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="typing errors exist only when compiled")
@pytest.mark.parametrize(
    "array", [np.zeros((4, 4)).T, np.zeros((4, 8))[:, ::2], np.zeros((4, 4), dtype=np.float32)], ids=["F", "strided", "float32"]
)
def test_a_pair_needs_a_c_ordered_float64_or_int32_array(array):
    @numba.njit
    def update(matrix):
        add_pair(matrix, (0, 0), 1.0, 1.0)

    with pytest.raises(numba.core.errors.TypingError):
        update(array)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="typing errors exist only when compiled")
def test_a_pair_refuses_a_read_only_array_and_non_float_addends():
    read_only = np.zeros((2, 2))
    read_only.flags.writeable = False

    @numba.njit
    def update(matrix, first):
        add_pair(matrix, (0, 0), first, 1.0)

    for matrix, first in [(read_only, 1.0), (np.zeros((2, 2), dtype=np.int32), 3), (np.zeros((2, 2)), 1j)]:
        with pytest.raises(numba.core.errors.TypingError):
            update(matrix, first)
