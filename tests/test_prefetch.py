"""The prefetch intrinsic: compiles for the arrays the predictor uses and changes nothing."""

import numba
import numpy as np
import pytest

from forestrank._numba.dtypes import NODE_DTYPE
from forestrank._numba.prefetch import prefetch


@numba.njit
def _sum_with_prefetches(matrix, nodes, columns):
    total = 0.0
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            prefetch(matrix, (i, columns[j]))  # int64 row, int32 column, as in the predictor
            total += matrix[i, columns[j]]
    for k in range(len(nodes)):
        prefetch(nodes, (k,))
        total += nodes[k]["threshold"]
    return total


def test_prefetch_changes_no_result():
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(7, 5))
    nodes = np.zeros(4, dtype=NODE_DTYPE)
    nodes["threshold"] = rng.normal(size=4)
    columns = np.arange(5, dtype=np.int32)[::-1].copy()
    expected = matrix.sum() + nodes["threshold"].sum()
    assert _sum_with_prefetches(matrix, nodes, columns) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="typing errors exist only when compiled")
def test_prefetch_needs_one_integer_index_per_dimension():
    @numba.njit
    def wrong(matrix):
        prefetch(matrix, (0,))

    with pytest.raises(numba.core.errors.TypingError):
        wrong(np.zeros((2, 2)))
