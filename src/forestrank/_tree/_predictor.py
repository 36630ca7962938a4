"""Tree traversal on raw feature values.

Trees of an ensemble are stored back to back in one ``NODE_DTYPE`` array; each tree's
child indices are relative to its first node (``tree_offsets``). Rows are processed in
passes of about ``pass_bytes`` of X; a pass runs tree by tree, and within a tree blocks
of ``ROW_BLOCK`` rows descend together, level by level (``add_tree_values``). Each row
sums its trees in tree order, so the result does not depend on how rows are split
across passes or threads.

A level is two sweeps over the rows of the block not yet at a leaf: the first drops
the rows that reached one and prefetches the others' feature values, the second
compares them with the thresholds, moves the rows to a child and prefetches those
children. The loads of different rows are independent, so their cache misses overlap
instead of each row waiting for its own chain of dependent loads.

Neither sweep branches on data. A row steps to its child as the left child's index
plus the test's outcome as an integer: the outcome of a test is a coin flip for the
processor's branch predictor, and a mispredicted branch at every level cost more than
the loads themselves (``benchmarks/RESULTS.md``, "Scoring speed"). A missing value (NaN) fails every ``<=`` test, so it goes right unless the
node's ``missing_left`` flag says left (``goes_left``); the flags are read only in
blocks of rows that hold a NaN (``missing_blocks``), so data without missing values
pays no test for them. The step is written out in the loop: numba's inlining of it as
a helper compiled a branch again (measured, same section).

Every array index in these loops goes through ``nowrap`` (``_numba/jit.py``), which made
the kernel faster with bitwise-equal sums. The block size and pass lengths below were
chosen by measurement (``docs/design.md``, "Prediction"; the figures are in
``benchmarks/RESULTS.md``, "Engine design measurements" and "Scoring speed").
"""

import numpy as np

from .._numba.jit import jit, nowrap
from .._numba.prefetch import prefetch

# Bytes of X visited by every tree before the next tree: a fully grown tree on a large
# training set holds about a megabyte of nodes, so its deep levels stay cached while a
# pass of rows reuses them, and the pass's rows stay in the last-level cache across
# trees (measured against one block at a time and against longer passes).
PASS_BYTES = 4096 * 136 * 8
# Rows descending together (measured: smaller blocks were slower).
ROW_BLOCK = 128


@jit(inline="always")
def goes_left(value, threshold, missing_left, node):
    """Whether ``value`` goes left at ``node``: ``value <= threshold``, or NaN and ``missing_left[node]``."""
    return value <= threshold or (value != value and missing_left[nowrap(node)] == 1)


@jit(inline="always")
def categorical_right(value, index, category_offsets, category_bits, missing_left):
    """At node ``index`` of a categorical split, 1 when it sends ``value`` right, else 0; -1 at
    a numeric split (no bitmap). Code ``c`` goes by bit ``c % 64`` of the node's word ``c // 64``
    (set: left); a NaN, a negative code or one past the node's words by ``missing_left[index]``
    (``Tree.category_bits``)."""
    first_word = category_offsets[nowrap(index)]
    n_words = category_offsets[nowrap(index + 1)] - first_word
    if n_words == 0:
        return np.int64(-1)
    if value >= 0.0 and value < 64.0 * n_words:  # a NaN fails both
        code = np.int64(value)
        word = category_bits[nowrap(first_word + (code >> 6))]
        return np.int64(1) - np.int64((word >> np.uint64(code & 63)) & np.uint64(1))
    return np.int64(1) - np.int64(missing_left[nowrap(index)])


@jit(inline="always")
def has_missing(X, row):
    """Whether ``X[row]`` holds a NaN."""
    seen = False
    for feature in range(X.shape[1]):
        value = X[nowrap(row), nowrap(feature)]
        seen |= value != value
    return seen


@jit(inline="always")
def missing_blocks(X, start, end, block):
    """Whether each block of ``block`` rows of ``X[start:end]`` holds a NaN, bool array."""
    flags = np.zeros((end - start + block - 1) // block, dtype=np.bool_)
    for row in range(start, end):
        flags[nowrap((row - start) // block)] |= has_missing(X, row)
    return flags


@jit
def add_tree_values(X, nodes, missing_left, category_offsets, category_bits, tree_offsets, pass_bytes, out):
    """``out[i] += sum over trees of the leaf value reached by row i``.

    Parameters
    ----------
    X : float64 or float32 array of shape (n_rows, n_features), C order
    nodes : NODE_DTYPE array
        All trees, back to back.
    missing_left : uint8 array of the length of ``nodes``
        Where missing values go (``Tree.missing_left``).
    category_offsets, category_bits : None, or int64 array of the length of ``nodes`` + 1
        and uint64 array
        The categorical splits' bitmaps of all trees (``Tree.category_offsets`` with every
        tree's bitmaps back to back); None for trees without one, which numba then
        compiles without the test.
    tree_offsets : int64 array of shape (n_trees,)
        First node of each tree.
    pass_bytes : int
        Bytes of X per pass: ``PASS_BYTES`` for forests, less for boosting's small trees
        (the estimators' ``_predict_pass_bytes``).
    out : float64 array of shape (n_rows,)
        Accumulator, updated in place.
    """
    n_rows = X.shape[0]
    rows_per_pass = max(ROW_BLOCK, pass_bytes // (X.shape[1] * X.itemsize) // ROW_BLOCK * ROW_BLOCK)
    current = np.empty(ROW_BLOCK, dtype=np.int64)  # node of each row of the block
    inside = np.empty(ROW_BLOCK, dtype=np.int64)  # rows of the block not yet at a leaf
    for pass_start in range(0, n_rows, rows_per_pass):
        pass_end = min(pass_start + rows_per_pass, n_rows)
        missing = missing_blocks(X, pass_start, pass_end, ROW_BLOCK)
        for t in range(len(tree_offsets)):
            offset = tree_offsets[t]
            for block_start in range(pass_start, pass_end, ROW_BLOCK):
                block_size = min(ROW_BLOCK, pass_end - block_start)
                block_missing = missing[nowrap((block_start - pass_start) // ROW_BLOCK)]
                for j in range(block_size):
                    current[nowrap(j)] = offset
                    inside[nowrap(j)] = j
                n_inside = block_size
                while n_inside > 0:
                    kept = 0
                    for k in range(n_inside):
                        j = inside[nowrap(k)]
                        feature = nodes[nowrap(current[nowrap(j)])]["feature"]
                        inside[nowrap(kept)] = j
                        kept += np.int64(feature >= 0)
                        if feature >= 0:
                            prefetch(X, (block_start + j, feature))
                    n_inside = kept
                    for k in range(n_inside):
                        j = inside[nowrap(k)]
                        index = current[nowrap(j)]
                        node = nodes[nowrap(index)]
                        value = X[nowrap(block_start + j), nowrap(node["feature"])]
                        right = np.int64(not (value <= node["threshold"]))
                        if block_missing and value != value:
                            right = np.int64(1 - missing_left[nowrap(index)])
                        if category_offsets is not None:
                            side = categorical_right(value, index, category_offsets, category_bits, missing_left)
                            if side >= 0:
                                right = side
                        next_index = offset + node["left"] + right
                        current[nowrap(j)] = next_index
                        prefetch(nodes, (next_index,))
                for j in range(block_size):
                    out[nowrap(block_start + j)] += nodes[nowrap(current[nowrap(j)])]["threshold"]


@jit
def apply_tree(X, nodes, missing_left, out, category_offsets, category_bits):
    """Index of the leaf reached by each row in one tree.

    Parameters
    ----------
    X : float64 or float32 array of shape (n_rows, n_features), C order
    nodes : NODE_DTYPE array of one tree
    missing_left : uint8 array of shape (n_nodes,)
    out : int64 array of shape (n_rows,)
        Output leaf indices.
    category_offsets, category_bits : None, or the tree's ``Tree.category_offsets`` and
        ``Tree.category_bits``
    """
    for i in range(X.shape[0]):
        node = 0
        while nodes[nowrap(node)]["feature"] >= 0:
            record = nodes[nowrap(node)]
            value = X[i, nowrap(record["feature"])]
            left = goes_left(value, record["threshold"], missing_left, node)
            if category_offsets is not None:
                side = categorical_right(value, node, category_offsets, category_bits, missing_left)
                if side >= 0:
                    left = side == 0
            node = record["left"] if left else record["left"] + 1
        out[i] = node


@jit
def add_oblivious_values(X, features, thresholds, missing_left, depths, leaf_values, leaf_offsets, trees, out):
    """``add_tree_values`` for symmetric (oblivious) trees: a row's leaf is the bits of its
    ``depth`` comparisons, one per level, with no node to load between them.

    Each row sums its trees in the order of ``trees``, as ``add_tree_values`` does, so the
    two kernels' sums are equal bit for bit.

    Parameters
    ----------
    X : float64 or float32 array of shape (n_rows, n_features), C order
    features, thresholds, missing_left : arrays of shape (n_all_trees, max_depth)
        int32, float64 and uint8: each level's split (``symmetric_levels``).
    depths : int64 array of shape (n_all_trees,)
    leaf_values : float64 array
        Every tree's ``2 ** depth`` leaf values, back to back, in leaf order (level-ordered
        leaf ``k`` is the row whose comparisons spell ``k``, first level highest).
    leaf_offsets : int64 array of shape (n_all_trees,)
        First leaf value of each tree.
    trees : int64 array of shape (n_trees,)
        The trees summed.
    out : float64 array of shape (n_rows,)
        Accumulator, updated in place.
    """
    for row in range(X.shape[0]):
        row_missing = has_missing(X, row)
        total = out[nowrap(row)]
        for i in range(len(trees)):
            t = trees[nowrap(i)]
            leaf = 0
            for level in range(depths[nowrap(t)]):
                # Without a branch on the comparison, as in ``add_tree_values``.
                value = X[nowrap(row), nowrap(features[nowrap(t), nowrap(level)])]
                right = np.int64(not (value <= thresholds[nowrap(t), nowrap(level)]))
                if row_missing and value != value:
                    right = np.int64(1 - missing_left[nowrap(t), nowrap(level)])
                leaf = 2 * leaf + right
            total += leaf_values[nowrap(leaf_offsets[nowrap(t)] + leaf)]
        out[nowrap(row)] = total


def symmetric_levels(trees: list) -> tuple | None:
    """The arrays of ``add_oblivious_values`` for ``trees`` (``Tree`` objects), or None when one
    of them is not a level-ordered symmetric tree (``_tree/_symmetric.py``): a tree of depth
    ``d`` with ``2 ** (d + 1) - 1`` nodes, node ``k``'s children ``2k + 1`` and ``2k + 2``, and
    one feature, threshold and missing direction per level; none of them categorical."""
    if not trees or any(tree.has_categories for tree in trees):
        return None
    depths = np.empty(len(trees), dtype=np.int64)
    for i, tree in enumerate(trees):
        n_nodes = tree.node_count
        depth = int(np.log2(n_nodes + 1)) - 1
        internal = np.arange(2**depth - 1)
        nodes = tree.nodes
        if 2 ** (depth + 1) - 1 != n_nodes or (nodes["feature"][internal] < 0).any() or (nodes["feature"][2**depth - 1 :] >= 0).any():
            return None
        if not np.array_equal(nodes["left"][internal], 2 * internal + 1):
            return None
        for level in range(depth):
            level_nodes = slice(2**level - 1, 2 ** (level + 1) - 1)
            for column in (nodes["feature"][level_nodes], nodes["threshold"][level_nodes], tree.missing_left[level_nodes]):
                if (column != column[0]).any():
                    return None
        depths[i] = depth
    max_depth = max(int(depths.max()), 1)
    features = np.zeros((len(trees), max_depth), dtype=np.int32)
    thresholds = np.zeros((len(trees), max_depth))
    missing_left = np.zeros((len(trees), max_depth), dtype=np.uint8)
    leaf_offsets = np.concatenate(([0], np.cumsum(2**depths)[:-1])).astype(np.int64)
    leaf_values = np.empty(int((2**depths).sum()))
    for i, (tree, depth) in enumerate(zip(trees, depths)):
        first_nodes = 2 ** np.arange(depth) - 1
        features[i, :depth] = tree.nodes["feature"][first_nodes]
        thresholds[i, :depth] = tree.nodes["threshold"][first_nodes]
        missing_left[i, :depth] = tree.missing_left[first_nodes]
        leaf_values[leaf_offsets[i] : leaf_offsets[i] + 2**depth] = tree.nodes["threshold"][2**depth - 1 :]
    return features, thresholds, missing_left, depths, leaf_values, leaf_offsets
