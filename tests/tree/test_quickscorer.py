"""The bitvector scorer against the traversal kernels, on random and crafted trees."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forestrank._numba.dtypes import NODE_DTYPE
from forestrank._tree import _predictor, _quickscorer

# Few distinct values, so that rows often sit exactly on a threshold; -inf as a threshold
# sends every present value right (a split that puts only the missing rows left).
_CUTS = [-np.inf, -2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0]
_VALUES = [-np.inf, -3.0, -2.5, -1.0, -0.0, 0.0, 0.25, 0.5, 1.0, 2.0, 3.0, np.inf, np.nan]


@st.composite
def trees(draw, n_features, max_leaves):
    """(nodes, missing_left) of a random tree: leaves split one at a time, children appended in
    pairs after their parent, as the builders store them."""
    n_leaves = draw(st.integers(1, max_leaves))
    features = [-1]
    lefts = [0]
    leaves = [0]
    for _ in range(n_leaves - 1):
        node = leaves.pop(draw(st.integers(0, len(leaves) - 1)))
        features[node] = draw(st.integers(0, n_features - 1))
        lefts[node] = len(features)
        leaves += [len(features), len(features) + 1]
        features += [-1, -1]
        lefts += [0, 0]
    nodes = np.zeros(len(features), dtype=NODE_DTYPE)
    nodes["feature"] = features
    nodes["left"] = lefts
    for node, feature in enumerate(features):
        if feature >= 0:
            nodes["threshold"][node] = draw(st.sampled_from(_CUTS))
        else:
            nodes["threshold"][node] = draw(st.floats(-10, 10, allow_nan=False))
    missing_left = np.array(draw(st.lists(st.integers(0, 1), min_size=len(nodes), max_size=len(nodes))), dtype=np.uint8)
    return nodes, missing_left


@st.composite
def ensembles(draw, max_leaves=_quickscorer.MAX_LEAVES):
    n_features = draw(st.integers(1, 5))
    forest = draw(st.lists(trees(n_features, max_leaves), min_size=1, max_size=6))
    sizes = np.array([len(nodes) for nodes, _ in forest], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    nodes = np.concatenate([nodes for nodes, _ in forest])
    missing_left = np.concatenate([flags for _, flags in forest])
    n_rows = draw(st.integers(1, 30))
    X = np.array(draw(st.lists(st.sampled_from(_VALUES), min_size=n_rows * n_features, max_size=n_rows * n_features)))
    return nodes, missing_left, offsets, sizes, X.reshape(n_rows, n_features)


def _walked(X, nodes, missing_left, offsets):
    out = np.zeros(len(X))
    _predictor.add_tree_values(X, nodes, missing_left, None, None, offsets, _predictor.PASS_BYTES, out)
    return out


def _scored(X, nodes, missing_left, offsets, sizes):
    model = _quickscorer.bitvector_model(nodes, missing_left, offsets, sizes, X.shape[1])
    out = np.zeros(len(X))
    _quickscorer.add_bitvector_values(X, model, out)
    return out


@settings(max_examples=300, deadline=None)
@given(ensembles())
def test_bitvector_scores_equal_the_traversal_bit_for_bit(ensemble):
    """Trees of 1 to 64 leaves; NaN either way, values on thresholds, infinities, -0.0 against
    0.0: the same leaves, summed in the same order, in float64 and float32."""
    nodes, missing_left, offsets, sizes, X = ensemble
    np.testing.assert_array_equal(_scored(X, nodes, missing_left, offsets, sizes), _walked(X, nodes, missing_left, offsets))
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(
        _scored(X32, nodes, missing_left, offsets, sizes), _walked(X32, nodes, missing_left, offsets)
    )


def _chain(n_leaves, leftward):
    """A tree whose every split has one leaf child: the deepest subtree left (``leftward``) or right."""
    nodes = np.zeros(2 * n_leaves - 1, dtype=NODE_DTYPE)
    node = 0
    for depth in range(n_leaves - 1):
        nodes[node] = (0, 2 * depth + 1, float(n_leaves - depth if leftward else depth))
        nodes[2 * depth + 1 + int(leftward)] = (-1, 0, float(depth))  # the leaf child
        node = 2 * depth + 1 + int(not leftward)
    nodes[node] = (-1, 0, -1.0)
    return nodes


@pytest.mark.parametrize("leftward", [True, False])
def test_trees_of_a_whole_word_of_leaves(leftward):
    """Chains of 64 leaves: leftward, the root's left subtree holds 63 leaves, which its mask
    clears; rightward, the last leaf is bit 63. Every row reaches the leaf its value selects."""
    nodes = _chain(_quickscorer.MAX_LEAVES, leftward)
    missing_left = np.zeros(len(nodes), dtype=np.uint8)
    offsets, sizes = np.array([0]), np.array([len(nodes)])
    X = np.arange(-1.0, 66.0).reshape(-1, 1)
    expected = _walked(X, nodes, missing_left, offsets)
    assert len(np.unique(expected)) == _quickscorer.MAX_LEAVES
    np.testing.assert_array_equal(_scored(X, nodes, missing_left, offsets, sizes), expected)


def test_trees_of_more_leaves_are_refused():
    nodes = _chain(_quickscorer.MAX_LEAVES + 1, True)
    with pytest.raises(ValueError, match="at most 64 leaves; got 65"):
        _quickscorer.bitvector_model(nodes, np.zeros(len(nodes), dtype=np.uint8), np.array([0]), np.array([len(nodes)]), 1)


def test_single_leaf_trees_and_unused_features():
    """Trees that are one leaf add their value; features no tree tests are not read."""
    leaf = np.array([(-1, 0, 2.5)], dtype=NODE_DTYPE)
    stump = np.array([(2, 1, 0.0), (-1, 0, -1.0), (-1, 0, 1.0)], dtype=NODE_DTYPE)
    nodes = np.concatenate([leaf, stump, leaf])
    missing_left = np.zeros(len(nodes), dtype=np.uint8)
    offsets, sizes = np.array([0, 1, 4]), np.array([1, 3, 1])
    X = np.array([[np.inf, np.nan, -1.0], [0.0, 0.0, 1.0], [0.0, 0.0, np.nan]])
    np.testing.assert_array_equal(_scored(X, nodes, missing_left, offsets, sizes), [4.0, 6.0, 6.0])
    np.testing.assert_array_equal(_scored(X, nodes, missing_left, offsets, sizes), _walked(X, nodes, missing_left, offsets))


def _full_tree(depth):
    """A balanced tree of ``2 ** depth`` leaves, level by level."""
    n_internal = 2**depth - 1
    nodes = np.zeros(2 * n_internal + 1, dtype=NODE_DTYPE)
    nodes["feature"][:n_internal] = 0
    nodes["feature"][n_internal:] = -1
    nodes["left"][:n_internal] = 2 * np.arange(n_internal) + 1
    return nodes


def test_bitvectors_are_chosen_for_trees_deep_for_their_nodes():
    """A chain of 64 leaves has 63 internal nodes over a mean leaf depth of about 32: bitvectors;
    a balanced tree of 64 leaves has 63 over a depth of 6: walked; 65 leaves: walked."""
    one = (np.array([0]),)

    def prefers(nodes):
        return _quickscorer.prefers_bitvectors(nodes, *one, np.array([len(nodes)]))

    assert prefers(_chain(_quickscorer.MAX_LEAVES, True))
    assert not prefers(_full_tree(6))
    assert prefers(_full_tree(2))  # 3 internal nodes over a depth of 2
    assert not prefers(_chain(_quickscorer.MAX_LEAVES + 1, True))
