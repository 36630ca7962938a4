"""Tree traversal on raw feature values.

Trees of an ensemble are stored back to back in one ``NODE_DTYPE`` array; each tree's
child indices are relative to its first node (``tree_offsets``). Rows are processed
in passes of about ``PASS_BYTES`` of X; a pass runs tree by tree, and within a tree blocks of
``ROW_BLOCK`` rows descend together, level by level. Each row sums its trees in tree
order, so the result does not depend on how rows are split across threads, nor on
which of the two kernels runs:

* ``add_tree_values`` for trees that fit the caches (boosting's, shallow forests'),
* ``add_deep_tree_values`` for trees larger than ``DEEP_TREE_BYTES`` (fully grown
  forests on large data): it prefetches the nodes and feature values that a block
  of rows is about to read, so their cache misses overlap. On trees that fit the
  caches the prefetches and the bookkeeping only cost time.

A missing value (NaN) fails every ``<=`` test, so it goes right unless the node's
``missing_left`` flag says left (``goes_left``); the flags are read only for NaN, so
data without missing values pays one comparison more on right turns, no memory.

Every array index in these loops goes through ``nowrap`` (``_numba/jit.py``), which made
both kernels faster with bitwise-equal sums. The block sizes and pass lengths below
were chosen by measurement (``docs/design.md``, "Prediction"; the figures are in
``benchmarks/RESULTS.md``, "Engine design measurements").
"""

import numpy as np

from .._numba.jit import jit, nowrap
from .._numba.prefetch import prefetch

ROW_BLOCK = 16  # rows descending together (measured: larger blocks were slower)
# Bytes of X visited by every tree before the next tree: a fully grown tree on a large
# training set holds about a megabyte of nodes, so its deep levels stay cached while a
# pass of rows reuses them, and the pass's rows stay in the last-level cache across
# trees (measured against one block at a time and against longer passes).
PASS_BYTES = 4096 * 136 * 8
# Mean bytes of nodes per tree above which ``add_deep_tree_values`` runs: it wins on
# trees of a megabyte and loses on trees that fit L2; the switch sits between the
# measured sizes, at half of a typical 512 KiB L2.
DEEP_TREE_BYTES = 256 * 1024
# Rows descending together in ``add_deep_tree_values`` (measured: smaller blocks were slower).
DEEP_ROW_BLOCK = 128


@jit(inline="always")
def goes_left(value, threshold, missing_left, node):
    """Whether ``value`` goes left at ``node``: ``value <= threshold``, or NaN and ``missing_left[node]``."""
    return value <= threshold or (value != value and missing_left[nowrap(node)] == 1)


@jit
def add_tree_values(X, nodes, missing_left, tree_offsets, pass_bytes, out):
    """``out[i] += sum over trees of the leaf value reached by row i``.

    A block of rows descends each tree together, one level per sweep: the node loads
    of different rows are independent, so the processor overlaps their cache misses
    instead of waiting for one row's chain of dependent loads at a time.

    Parameters
    ----------
    X : float64 or float32 array of shape (n_rows, n_features), C order
    nodes : NODE_DTYPE array
        All trees, back to back.
    missing_left : uint8 array of the length of ``nodes``
        Where missing values go (``Tree.missing_left``).
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
    current = np.empty(ROW_BLOCK, dtype=np.int64)
    for pass_start in range(0, n_rows, rows_per_pass):
        pass_end = min(pass_start + rows_per_pass, n_rows)
        for t in range(len(tree_offsets)):
            offset = tree_offsets[t]
            for block_start in range(pass_start, pass_end, ROW_BLOCK):
                block_size = min(ROW_BLOCK, pass_end - block_start)
                for j in range(block_size):
                    current[nowrap(j)] = offset
                active = block_size
                while active > 0:
                    active = 0
                    for j in range(block_size):
                        index = current[nowrap(j)]
                        node = nodes[nowrap(index)]
                        feature = node["feature"]
                        if feature >= 0:
                            active += 1
                            if goes_left(X[nowrap(block_start + j), nowrap(feature)], node["threshold"], missing_left, index):
                                current[nowrap(j)] = offset + node["left"]
                            else:
                                current[nowrap(j)] = offset + node["left"] + 1
                for j in range(block_size):
                    out[nowrap(block_start + j)] += nodes[nowrap(current[nowrap(j)])]["threshold"]


@jit
def add_deep_tree_values(X, nodes, missing_left, tree_offsets, pass_bytes, out):
    """``add_tree_values`` for trees too large for the caches, with software prefetches.

    A block of rows descends each tree together, one level per round of two sweeps
    over the rows not yet at a leaf: the first drops the rows that reached one and
    prefetches the others' feature values, the second compares them with the
    thresholds, moves the rows to a child and prefetches those children. The loads of
    different rows are independent, so their cache misses overlap instead of each row
    waiting for its own chain of dependent loads. A row's finishing is seen only in
    the next round, when its prefetched node has arrived.

    Parameters
    ----------
    X : float64 or float32 array of shape (n_rows, n_features), C order
    nodes : NODE_DTYPE array
        All trees, back to back.
    missing_left : uint8 array of the length of ``nodes``
    tree_offsets : int64 array of shape (n_trees,)
        First node of each tree.
    pass_bytes : int
        Bytes of X per pass.
    out : float64 array of shape (n_rows,)
        Accumulator, updated in place.
    """
    n_rows = X.shape[0]
    rows_per_pass = max(DEEP_ROW_BLOCK, pass_bytes // (X.shape[1] * X.itemsize) // DEEP_ROW_BLOCK * DEEP_ROW_BLOCK)
    current = np.empty(DEEP_ROW_BLOCK, dtype=np.int64)  # node of each row of the block
    inside = np.empty(DEEP_ROW_BLOCK, dtype=np.int64)  # rows of the block not yet at a leaf
    for pass_start in range(0, n_rows, rows_per_pass):
        pass_end = min(pass_start + rows_per_pass, n_rows)
        for t in range(len(tree_offsets)):
            offset = tree_offsets[t]
            for block_start in range(pass_start, pass_end, DEEP_ROW_BLOCK):
                block_size = min(DEEP_ROW_BLOCK, pass_end - block_start)
                for j in range(block_size):
                    current[nowrap(j)] = offset
                    inside[nowrap(j)] = j
                n_inside = block_size
                while n_inside > 0:
                    kept = 0
                    for k in range(n_inside):
                        j = inside[nowrap(k)]
                        feature = nodes[nowrap(current[nowrap(j)])]["feature"]
                        if feature >= 0:
                            prefetch(X, (block_start + j, feature))
                            inside[nowrap(kept)] = j
                            kept += 1
                    n_inside = kept
                    for k in range(n_inside):
                        j = inside[nowrap(k)]
                        index = current[nowrap(j)]
                        node = nodes[nowrap(index)]
                        if goes_left(X[nowrap(block_start + j), nowrap(node["feature"])], node["threshold"], missing_left, index):
                            child = offset + node["left"]
                        else:
                            child = offset + node["left"] + 1
                        current[nowrap(j)] = child
                        prefetch(nodes, (child,))
                for j in range(block_size):
                    out[nowrap(block_start + j)] += nodes[nowrap(current[nowrap(j)])]["threshold"]


@jit
def apply_tree(X, nodes, missing_left, out):
    """Index of the leaf reached by each row in one tree.

    Parameters
    ----------
    X : float64 or float32 array of shape (n_rows, n_features), C order
    nodes : NODE_DTYPE array of one tree
    missing_left : uint8 array of shape (n_nodes,)
    out : int64 array of shape (n_rows,)
        Output leaf indices.
    """
    for i in range(X.shape[0]):
        node = 0
        while nodes[nowrap(node)]["feature"] >= 0:
            record = nodes[nowrap(node)]
            if goes_left(X[i, nowrap(record["feature"])], record["threshold"], missing_left, node):
                node = record["left"]
            else:
                node = record["left"] + 1
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
        total = out[nowrap(row)]
        for i in range(len(trees)):
            t = trees[nowrap(i)]
            leaf = 0
            for level in range(depths[nowrap(t)]):
                value = X[nowrap(row), nowrap(features[nowrap(t), nowrap(level)])]
                left = value <= thresholds[nowrap(t), nowrap(level)] or (
                    value != value and missing_left[nowrap(t), nowrap(level)] == 1
                )
                leaf = 2 * leaf + (0 if left else 1)
            total += leaf_values[nowrap(leaf_offsets[nowrap(t)] + leaf)]
        out[nowrap(row)] = total


def symmetric_levels(trees: list) -> tuple | None:
    """The arrays of ``add_oblivious_values`` for ``trees`` (``Tree`` objects), or None when one
    of them is not a level-ordered symmetric tree (``_tree/_symmetric.py``): a tree of depth
    ``d`` with ``2 ** (d + 1) - 1`` nodes, node ``k``'s children ``2k + 1`` and ``2k + 2``, and
    one feature, threshold and missing direction per level."""
    if not trees:
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
