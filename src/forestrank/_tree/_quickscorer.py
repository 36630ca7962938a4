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

A tree of more than 64 leaves keeps several words; a node whose left subtree spans
words has one entry per word it touches. A missing value (NaN) fails the nodes that
send it right (``Tree.missing_left`` 0), listed apart per feature. Each row sums its
trees' leaf values in tree order, as the traversal kernels do, so the scores are the
same bit for bit.
"""

from collections import namedtuple

import numpy as np

from .._numba.bits import trailing_zeros
from .._numba.jit import jit, nowrap

# Trees of more leaves are walked instead (``_predictor``): at 255 leaves the two kernels
# score equally fast ("Scoring speed" in benchmarks/RESULTS.md), and a bitvector per tree
# grows with its leaves.
MAX_LEAVES = 256
_ALL_LEAVES = np.uint64(0xFFFFFFFFFFFFFFFF)

BitvectorModel = namedtuple(
    "BitvectorModel",
    ["thresholds", "words", "masks", "feature_starts", "missing_entries", "missing_starts", "word_offsets",
     "leaf_values", "leaf_offsets"],
)  # fmt: skip
BitvectorModel.__doc__ = """An ensemble laid out for ``add_bitvector_values``.

thresholds : float64 array of shape (n_entries,)
    Each entry's node threshold; the entries of feature ``f`` are
    ``feature_starts[f]:feature_starts[f + 1]``, by increasing threshold.
words : int64 array of shape (n_entries,)
    The word of the row's bitvector that the entry's mask clears bits of.
masks : uint64 array of shape (n_entries,)
    Every bit set but those of the node's left-subtree leaves in that word.
feature_starts : int64 array of shape (n_features + 1,)
missing_entries, missing_starts : int64 arrays of shapes (n_missing_entries,), (n_features + 1,)
    The entries of the nodes that send a missing value right, feature ``f``'s at
    ``missing_entries[missing_starts[f]:missing_starts[f + 1]]``.
word_offsets : int64 array of shape (n_trees + 1,)
    Tree ``t``'s words are ``word_offsets[t]:word_offsets[t + 1]``, its leaf ``k`` (left
    to right) bit ``k % 64`` of word ``word_offsets[t] + k // 64``.
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
    first_leaf, n_leaves : int64 arrays of shape (n_nodes,)
    """
    first_leaf = np.zeros(len(features), dtype=np.int64)
    n_leaves = np.ones(len(features), dtype=np.int64)
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
    return first_leaf, n_leaves


@jit
def _entries(features, lefts, thresholds, missing_left, tree_offsets, tree_sizes, first_leaf, n_leaves, word_offsets):
    """The (feature, threshold, word, mask, missing goes right) of every entry, tree by tree.

    An internal node with left subtree leaves ``[a, b)`` gives one entry per word from
    ``a // 64`` to ``(b - 1) // 64``, whose mask clears the bits of ``[a, b)`` in that word.
    Arguments as ``_leaf_ranges``'s, with its results and ``BitvectorModel.word_offsets``.
    """
    n_entries = 0
    for t in range(len(tree_offsets)):
        for node in range(tree_offsets[t], tree_offsets[t] + tree_sizes[t]):
            if features[node] >= 0:
                left = tree_offsets[t] + lefts[node]
                n_entries += (first_leaf[left] + n_leaves[left] - 1) // 64 - first_leaf[left] // 64 + 1
    entry_features = np.empty(n_entries, dtype=np.int64)
    entry_thresholds = np.empty(n_entries)
    entry_words = np.empty(n_entries, dtype=np.int64)
    entry_masks = np.empty(n_entries, dtype=np.uint64)
    entry_missing_right = np.empty(n_entries, dtype=np.bool_)
    e = 0
    for t in range(len(tree_offsets)):
        offset = tree_offsets[t]
        for node in range(offset, offset + tree_sizes[t]):
            if features[node] < 0:
                continue
            left = offset + lefts[node]
            a = first_leaf[left]
            b = a + n_leaves[left]
            for word in range(a // 64, (b - 1) // 64 + 1):
                low = max(a, 64 * word) - 64 * word
                high = min(b, 64 * word + 64) - 64 * word
                span = _ALL_LEAVES if high - low == 64 else ((np.uint64(1) << np.uint64(high - low)) - np.uint64(1))
                entry_features[e] = features[node]
                entry_thresholds[e] = thresholds[node]
                entry_words[e] = word_offsets[t] + word
                entry_masks[e] = ~(span << np.uint64(low))
                entry_missing_right[e] = missing_left[node] == 0
                e += 1
    return entry_features, entry_thresholds, entry_words, entry_masks, entry_missing_right


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
    first_leaf, n_leaves = _leaf_ranges(features, lefts, tree_offsets, tree_sizes)
    tree_leaves = n_leaves[tree_offsets]
    word_offsets = np.concatenate(([0], np.cumsum((tree_leaves + 63) // 64))).astype(np.int64)
    entry_features, thresholds, words, masks, missing_right = _entries(
        features, lefts, node_thresholds, missing_left, tree_offsets, tree_sizes, first_leaf, n_leaves, word_offsets
    )
    order = np.lexsort((thresholds, entry_features))
    entry_features = entry_features[order]
    missing_entries = np.flatnonzero(missing_right[order]).astype(np.int64)
    feature_range = np.arange(n_features + 1)
    leaf_offsets = np.concatenate(([0], np.cumsum(tree_leaves)[:-1])).astype(np.int64)
    return BitvectorModel(
        thresholds[order], words[order], masks[order], np.searchsorted(entry_features, feature_range).astype(np.int64),
        missing_entries, np.searchsorted(entry_features[missing_entries], feature_range).astype(np.int64),
        word_offsets, _leaf_values(features, node_thresholds, tree_offsets, tree_sizes, first_leaf, leaf_offsets,
        int(tree_leaves.sum())), leaf_offsets,
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
    thresholds, words, masks = model.thresholds, model.words, model.masks
    feature_starts, missing_entries, missing_starts = model.feature_starts, model.missing_entries, model.missing_starts
    word_offsets, leaf_values, leaf_offsets = model.word_offsets, model.leaf_values, model.leaf_offsets
    n_trees = len(leaf_offsets)
    bits = np.empty(word_offsets[n_trees], dtype=np.uint64)
    for row in range(X.shape[0]):
        for w in range(len(bits)):
            bits[nowrap(w)] = _ALL_LEAVES
        for feature in range(len(feature_starts) - 1):
            value = np.float64(X[nowrap(row), nowrap(feature)])
            if value != value:
                for k in range(missing_starts[nowrap(feature)], missing_starts[nowrap(feature + 1)]):
                    entry = missing_entries[nowrap(k)]
                    bits[nowrap(words[nowrap(entry)])] &= masks[nowrap(entry)]
                continue
            entry = feature_starts[nowrap(feature)]
            end = feature_starts[nowrap(feature + 1)]
            while entry < end and thresholds[nowrap(entry)] < value:
                bits[nowrap(words[nowrap(entry)])] &= masks[nowrap(entry)]
                entry += 1
        total = out[nowrap(row)]
        for t in range(n_trees):
            w = word_offsets[nowrap(t)]
            while bits[nowrap(w)] == 0:
                w += 1
            leaf = (w - word_offsets[nowrap(t)]) * 64 + trailing_zeros(bits[nowrap(w)])
            total += leaf_values[nowrap(leaf_offsets[nowrap(t)] + leaf)]
        out[nowrap(row)] = total
