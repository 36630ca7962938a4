"""The arithmetic of one boosted tree's leaves (``ensemble/_boosting_state.py``)."""

import numpy as np
import pytest

from assertions import same_bits
from forestrank.ensemble._boosting_state import add_leaf_values, leaf_sums


def _bincount_sums(row_leaf, gradients, hessians, weights, n_nodes, carried):
    """The reference: ``numpy.bincount`` over the rows inside the tree, the carried sums first."""
    inside = row_leaf >= 0
    leaves = np.concatenate([np.arange(n_nodes), row_leaf[inside]])
    columns = [np.concatenate([carried[:, k], column[inside]]) for k, column in enumerate((gradients, hessians, weights))]
    return np.stack([np.bincount(leaves, weights=column, minlength=n_nodes) for column in columns], axis=1)


def test_leaf_sums_are_the_bincount_sums_of_the_rows_inside_the_tree_bit_for_bit():
    rng = np.random.default_rng(0)
    n_rows, n_nodes = 20_000, 9
    row_leaf = rng.integers(-1, n_nodes, size=n_rows)  # -1: rows outside the tree
    row_leaf[row_leaf == 4] = 5  # a node without rows keeps the carried sum
    # Magnitudes over 12 orders, so that any other order of the additions rounds differently.
    gradients, hessians, weights = (rng.normal(size=n_rows) * 10.0 ** rng.integers(-6, 6, size=n_rows) for _ in range(3))
    carried = rng.normal(size=(n_nodes, 3))
    carried[4] = -0.0  # bincount starts at +0.0: 0.0 + -0.0 is +0.0
    sums = leaf_sums(row_leaf, gradients, hessians, weights, n_nodes, carried)
    assert same_bits(sums, _bincount_sums(row_leaf, gradients, hessians, weights, n_nodes, carried))
    assert not np.signbit(sums[4]).any()
    assert same_bits(
        leaf_sums(row_leaf, gradients, hessians, weights, n_nodes),
        _bincount_sums(row_leaf, gradients, hessians, weights, n_nodes, np.zeros((n_nodes, 3))),
    )
    # Strided columns, as the fit passes a column of its (n_rows, n_outputs) gradients.
    stacked = np.column_stack([gradients, hessians])
    assert same_bits(leaf_sums(row_leaf, stacked[:, 0], stacked[:, 1], weights, n_nodes), leaf_sums(row_leaf, gradients, hessians, weights, n_nodes))


def test_leaf_sums_refuse_a_leaf_beyond_the_nodes():
    with pytest.raises(ValueError, match="leaf 3, but there are 3 nodes"):
        leaf_sums(np.array([0, 3]), np.ones(2), np.ones(2), np.ones(2), 3)


def test_add_leaf_values_adds_each_row_its_leafs_value_and_leaves_the_rows_outside():
    rng = np.random.default_rng(1)
    n_rows = 5_000
    raw = rng.normal(size=(n_rows, 3))
    row_leaf = rng.integers(-1, 7, size=n_rows)
    values = rng.normal(size=7)
    expected = raw.copy()
    inside = row_leaf >= 0
    expected[inside, 1] += values[row_leaf[inside]]
    assert add_leaf_values(raw[:, 1], row_leaf, values) == np.count_nonzero(~inside)
    assert same_bits(raw, expected)
