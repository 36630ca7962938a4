"""Scoring by leaf bitvectors: QuickScorer (Lucchese et al., SIGIR 2015, Algorithm 1).

Instead of walking each tree node by node, a row visits the ensemble feature by
feature. Every tree keeps one bit per leaf, leaves numbered left to right. An internal
node whose test a row fails (``x > threshold``: the row goes right) rules out every
leaf of its left subtree, so its *mask* clears their bits. After the masks of all the
failed nodes of all trees are applied, each tree's lowest remaining bit is the leaf the
row reaches (the paper's Theorem 1: a failed node off the row's path only clears
leaves of a subtree the row never entered, and every leaf left of the exit leaf sits
in the left subtree of a failed node on the path).

The failed nodes are found without visiting the others: the nodes testing one feature
are sorted by threshold, so those a value fails are a prefix of that list, scanned
until the first threshold at or above the value. The work per row is the number of
failed nodes plus one exit per tree, with no chain of dependent loads; a traversal
pays a dependent load per level of every tree (``_predictor.add_tree_values``).

A tree's bitvector is one 64-bit word: trees of more leaves are walked
(``_predictor.add_tree_values``), which scores trees of 127 leaves faster than
bitvectors of two words would (``MAX_LEAVES``). A missing value (NaN) fails the nodes
that send it right (``Tree.missing_left`` 0), listed apart per feature. Each row sums
its trees' leaf values in tree order, as the traversal does, so the scores are the same
bit for bit.
"""

from collections import namedtuple

import numpy as np

from .._numba.bits import trailing_zeros
from .._numba.jit import jit, nowrap

# The leaves of a tree scored by bitvectors: one word. The traversal catches up near
# there, and is faster from 127 leaves on ("Scoring speed" in benchmarks/RESULTS.md).
MAX_LEAVES = 64
# A row pays a bitvector ensemble about the nodes it fails, a fraction of each tree's
# internal nodes, and a traversal the depth of its leaf: bitvectors are chosen while a
# tree has at most this many internal nodes per level of its mean leaf depth, between
# the leaf-wise trees of 63 leaves that bitvectors score faster and the symmetric trees
# of 63 leaves that they score slower ("Scoring speed" in benchmarks/RESULTS.md).
NODES_PER_LEVEL = 9.0
_ALL_LEAVES = np.uint64(0xFFFFFFFFFFFFFFFF)

BitvectorModel = namedtuple(
    "BitvectorModel",
    ["features", "thresholds", "trees", "masks", "feature_starts", "missing_entries", "missing_starts",
     "leaf_values", "leaf_offsets"],
)  # fmt: skip
BitvectorModel.__doc__ = """An ensemble laid out for ``add_bitvector_values``.

features : int64 array of shape (n_tested_features,)
    The features some node tests, increasing: a row reads only those.
thresholds : float64 array of shape (n_internal_nodes,)
    Each internal node's threshold; the nodes testing feature ``f`` are
    ``feature_starts[f]:feature_starts[f + 1]``, by increasing threshold.
trees : int64 array of shape (n_internal_nodes,)
    The tree of each node: the word of the row's bitvectors that its mask clears bits of.
masks : uint64 array of shape (n_internal_nodes,)
    Every bit set but those of the node's left-subtree leaves; leaf ``k`` of a tree
    (left to right) is bit ``k``.
feature_starts : int64 array of shape (n_features + 1,)
missing_entries, missing_starts : int64 arrays of shapes (n_missing_right,), (n_features + 1,)
    The nodes that send a missing value right, feature ``f``'s at
    ``missing_entries[missing_starts[f]:missing_starts[f + 1]]``.
leaf_values : float64 array of shape (n_leaves,)
    Every tree's leaf values left to right, tree ``t``'s from ``leaf_offsets[t]``.
leaf_offsets : int64 array of shape (n_trees,)
"""


@jit
def _leaf_ranges(features, lefts, tree_offsets, tree_sizes):
    """Each node's first leaf (left to right) and number of leaves below it, per tree.

    Parameters
    ----------
    features, lefts : int32 arrays of shape (n_nodes,)
        ``NODE_DTYPE`` fields of all trees back to back; children come after their parent.
    tree_offsets, tree_sizes : int64 arrays of shape (n_trees,)

    Returns
    -------
    first_leaf, n_leaves, depth : int64 arrays of shape (n_nodes,)
        Entries of nodes outside the trees are 0, 1 and 0.
    """
    first_leaf = np.zeros(len(features), dtype=np.int64)
    n_leaves = np.ones(len(features), dtype=np.int64)
    depth = np.zeros(len(features), dtype=np.int64)
    for t in range(len(tree_offsets)):
        offset = tree_offsets[t]
        for node in range(offset + tree_sizes[t] - 1, offset - 1, -1):
            if features[node] >= 0:
                left = offset + lefts[node]
                n_leaves[node] = n_leaves[left] + n_leaves[left + 1]
        for node in range(offset, offset + tree_sizes[t]):
            if features[node] >= 0:
                left = offset + lefts[node]
                first_leaf[left] = first_leaf[node]
                first_leaf[left + 1] = first_leaf[node] + n_leaves[left]
                depth[left] = depth[left + 1] = depth[node] + 1
    return first_leaf, n_leaves, depth


def _node_indices(tree_offsets: np.ndarray, tree_sizes: np.ndarray) -> np.ndarray:
    """The indices of the trees' nodes, tree after tree, int64."""
    return np.repeat(tree_offsets - np.cumsum(tree_sizes) + tree_sizes, tree_sizes) + np.arange(tree_sizes.sum())


def prefers_bitvectors(nodes: np.ndarray, tree_offsets: np.ndarray, tree_sizes: np.ndarray) -> bool:
    """Whether the trees ``nodes[tree_offsets[t]:tree_offsets[t] + tree_sizes[t]]`` score faster by
    bitvectors than walked: every tree of at most ``MAX_LEAVES`` leaves, and at most
    ``NODES_PER_LEVEL`` internal nodes per tree for each level of the mean leaf depth."""
    features = np.ascontiguousarray(nodes["feature"])
    _, n_leaves, depth = _leaf_ranges(features, np.ascontiguousarray(nodes["left"]), tree_offsets, tree_sizes)
    if len(tree_offsets) == 0 or n_leaves[tree_offsets].max() > MAX_LEAVES:
        return False
    scored = _node_indices(tree_offsets, tree_sizes)
    leaves = scored[features[scored] < 0]
    return bool(np.sum(features[scored] >= 0) / len(tree_offsets) <= NODES_PER_LEVEL * depth[leaves].mean())


@jit
def _masks(features, lefts, tree_offsets, tree_sizes, first_leaf, n_leaves):
    """The mask of every internal node, tree by tree: every bit but those of its left
    subtree's leaves. Arguments as ``_leaf_ranges``'s, with its results; uint64 array of
    shape (n_internal_nodes,)."""
    n_internal = 0
    for t in range(len(tree_offsets)):
        n_internal += np.sum(features[tree_offsets[t] : tree_offsets[t] + tree_sizes[t]] >= 0)
    masks = np.empty(n_internal, dtype=np.uint64)
    i = 0
    for t in range(len(tree_offsets)):
        offset = tree_offsets[t]
        for node in range(offset, offset + tree_sizes[t]):
            if features[node] >= 0:
                left = offset + lefts[node]
                subtree = (np.uint64(1) << np.uint64(n_leaves[left])) - np.uint64(1)  # at most 63 leaves: no overflow
                masks[i] = ~(subtree << np.uint64(first_leaf[left]))
                i += 1
    return masks


@jit
def _leaf_values(features, thresholds, tree_offsets, tree_sizes, first_leaf, leaf_offsets, n_leaves):
    """``BitvectorModel.leaf_values``: each tree's leaf values (their ``threshold``) left to right."""
    values = np.empty(n_leaves)
    for t in range(len(tree_offsets)):
        for node in range(tree_offsets[t], tree_offsets[t] + tree_sizes[t]):
            if features[node] < 0:
                values[leaf_offsets[t] + first_leaf[node]] = thresholds[node]
    return values


def bitvector_model(
    nodes: np.ndarray, missing_left: np.ndarray, tree_offsets: np.ndarray, tree_sizes: np.ndarray, n_features: int
) -> BitvectorModel:
    """``BitvectorModel`` of the trees ``nodes[tree_offsets[t]:tree_offsets[t] + tree_sizes[t]]``, in that order.

    Parameters
    ----------
    nodes : NODE_DTYPE array of shape (n_nodes,)
        Trees stored back to back, child indices relative to each tree's first node.
    missing_left : uint8 array of shape (n_nodes,)
    tree_offsets, tree_sizes : int64 arrays of shape (n_trees,)
        First node and number of nodes of each tree scored.
    n_features : int
        Columns of the rows to score; at least one more than every feature the trees test.

    Returns
    -------
    BitvectorModel
    """
    features = np.ascontiguousarray(nodes["feature"])
    lefts = np.ascontiguousarray(nodes["left"])
    node_thresholds = np.ascontiguousarray(nodes["threshold"])
    first_leaf, n_leaves, _ = _leaf_ranges(features, lefts, tree_offsets, tree_sizes)
    tree_leaves = n_leaves[tree_offsets]
    if tree_leaves.max(initial=1) > MAX_LEAVES:
        raise ValueError(f"bitvector scoring takes trees of at most {MAX_LEAVES} leaves; got {tree_leaves.max()}.")
    nodes_scored = _node_indices(tree_offsets, tree_sizes)
    is_internal = features[nodes_scored] >= 0
    internal = nodes_scored[is_internal]
    trees = np.repeat(np.arange(len(tree_offsets)), tree_sizes)[is_internal]  # the tree of each internal node
    order = np.lexsort((node_thresholds[internal], features[internal]))
    entry_features = features[internal][order]
    missing_entries = np.flatnonzero(missing_left[internal][order] == 0).astype(np.int64)
    feature_range = np.arange(n_features + 1)
    leaf_offsets = np.concatenate(([0], np.cumsum(tree_leaves)[:-1])).astype(np.int64)
    return BitvectorModel(
        np.unique(entry_features).astype(np.int64), node_thresholds[internal][order], trees[order].astype(np.int64),
        _masks(features, lefts, tree_offsets, tree_sizes, first_leaf, n_leaves)[order],
        np.searchsorted(entry_features, feature_range).astype(np.int64), missing_entries,
        np.searchsorted(entry_features[missing_entries], feature_range).astype(np.int64),
        _leaf_values(features, node_thresholds, tree_offsets, tree_sizes, first_leaf, leaf_offsets, int(tree_leaves.sum())),
        leaf_offsets,
    )  # fmt: skip


@jit
def add_bitvector_values(X, model, out):
    """``out[i] += sum over trees of the leaf value reached by row i``, by leaf bitvectors.

    Parameters
    ----------
    X : float64 or float32 array of shape (n_rows, n_features), C order
    model : BitvectorModel
    out : float64 array of shape (n_rows,)
        Accumulator, updated in place; each row's trees are added in tree order.
    """
    features, thresholds, trees, masks = model.features, model.thresholds, model.trees, model.masks
    feature_starts, missing_entries, missing_starts = model.feature_starts, model.missing_entries, model.missing_starts
    leaf_values, leaf_offsets = model.leaf_values, model.leaf_offsets
    bits = np.empty(len(leaf_offsets), dtype=np.uint64)
    for row in range(X.shape[0]):
        for t in range(len(bits)):
            bits[nowrap(t)] = _ALL_LEAVES
        for i in range(len(features)):
            feature = features[nowrap(i)]
            value = np.float64(X[nowrap(row), nowrap(feature)])
            if value != value:
                for k in range(missing_starts[nowrap(feature)], missing_starts[nowrap(feature + 1)]):
                    entry = missing_entries[nowrap(k)]
                    bits[nowrap(trees[nowrap(entry)])] &= masks[nowrap(entry)]
                continue
            entry = feature_starts[nowrap(feature)]
            end = feature_starts[nowrap(feature + 1)]
            while entry < end and thresholds[nowrap(entry)] < value:
                bits[nowrap(trees[nowrap(entry)])] &= masks[nowrap(entry)]
                entry += 1
        total = out[nowrap(row)]
        for t in range(len(bits)):
            total += leaf_values[nowrap(leaf_offsets[nowrap(t)] + trailing_zeros(bits[nowrap(t)]))]
        out[nowrap(row)] = total
