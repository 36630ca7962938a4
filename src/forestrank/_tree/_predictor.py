"""Tree traversal on raw feature values.

Trees of an ensemble are stored back to back in one ``NODE_DTYPE`` array; each tree's
child indices are relative to its first node (``tree_offsets``). Rows are processed
in passes of about ``PASS_BYTES`` of X; a pass runs tree by tree, and within a tree blocks of
``ROW_BLOCK`` rows descend together, level by level. Each row sums its trees in tree
order, so the result does not depend on how rows are split across threads.
"""

import numpy as np

from .._jit import jit
from .._prefetch import prefetch

# Rows descending together. Each level is two sweeps over them (prefetch their feature
# values, then compare and prefetch their next nodes), so a block keeps up to
# ROW_BLOCK cache misses in flight. Measured on 50k rows x 100 fully grown trees
# (benchmarks/RESULTS.md, "Prediction experiments"): 32 rows with both prefetches
# beat 16 and 32 rows with the node prefetch alone, and the plain descent.
ROW_BLOCK = 32
# Bytes of X visited by every tree before the next tree: a fully grown tree on 126k
# rows holds ~1 MB of nodes, so its deep levels stay cached while a pass of rows
# reuses them, and the pass's rows stay in the last-level cache across trees.
# Measured on 50k rows x 136 float64 features x 100 such trees: 0.84 s with 4096-row
# passes (4.5 MB), vs 1.04-1.17 s one block at a time and 1.15-1.6 s at 16k+ rows.
PASS_BYTES = 4096 * 136 * 8


@jit
def add_tree_values(X, nodes, tree_offsets, pass_bytes, out):
    """``out[i] += sum over trees of the leaf value reached by row i``.

    A block of rows descends each tree together, one level per round of two sweeps:
    the first prefetches every unfinished row's feature value at its node, the second
    compares it with the threshold, moves the row to a child and prefetches that
    child. The loads of different rows are independent, so their cache misses
    overlap instead of each row waiting for its own chain of dependent loads.

    Parameters
    ----------
    X : float64 array of shape (n_rows, n_features), C order
    nodes : NODE_DTYPE array
        All trees, back to back.
    tree_offsets : int64 array of shape (n_trees,)
        First node of each tree.
    pass_bytes : int
        Bytes of X per pass (``PASS_BYTES`` for forests; see ``pass_bytes_for``).
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
                    current[j] = offset
                active = block_size
                while active > 0:
                    for j in range(block_size):
                        feature = nodes[current[j]]["feature"]
                        if feature >= 0:
                            prefetch(X, (block_start + j, feature))
                    active = 0
                    for j in range(block_size):
                        node = current[j]
                        feature = nodes[node]["feature"]
                        if feature >= 0:
                            active += 1
                            if X[block_start + j, feature] <= nodes[node]["threshold"]:
                                child = offset + nodes[node]["left"]
                            else:
                                child = offset + nodes[node]["left"] + 1
                            current[j] = child
                            prefetch(nodes, (child,))
                for j in range(block_size):
                    out[block_start + j] += nodes[current[j]]["threshold"]


@jit
def apply_tree(X, nodes, out):
    """Index of the leaf reached by each row in one tree.

    Parameters
    ----------
    X : float64 array of shape (n_rows, n_features), C order
    nodes : NODE_DTYPE array of one tree
    out : int64 array of shape (n_rows,)
        Output leaf indices.
    """
    for i in range(X.shape[0]):
        node = 0
        while nodes[node]["feature"] >= 0:
            if X[i, nodes[node]["feature"]] <= nodes[node]["threshold"]:
                node = nodes[node]["left"]
            else:
                node = nodes[node]["left"] + 1
        out[i] = node
