"""Python container of one fitted tree (plain numpy arrays: picklable, no numba types)."""

from dataclasses import dataclass

import numpy as np

from .._common import INDEX_DTYPE
from .._features import as_feature_array, dense_blocks
from . import _predictor


@dataclass
class Tree:
    """A fitted tree.

    Attributes
    ----------
    nodes : ndarray of NODE_DTYPE, shape (n_nodes,)
        ``feature`` (-1 for leaves), ``left`` (right child = ``left + 1``),
        ``threshold`` (go left when ``x[feature] <= threshold``; the value for leaves).
    missing_left : ndarray of shape (n_nodes,), uint8
        1 where a missing (NaN) ``x[feature]`` goes left, 0 where it goes right
        (``goes_left``).
    values : ndarray of shape (n_nodes,), float64
        Value of every node, internal ones included.
    n_node_samples : ndarray of shape (n_nodes,), int64
        Training rows that reached each node.
    weighted_n_node_samples : ndarray of shape (n_nodes,), float64
        Their total weight.
    feature_gains : ndarray of shape (n_features,), float64
        Sum of the scaled gains of the splits on each feature.
    """

    nodes: np.ndarray
    missing_left: np.ndarray
    values: np.ndarray
    n_node_samples: np.ndarray
    weighted_n_node_samples: np.ndarray
    feature_gains: np.ndarray

    @property
    def node_count(self) -> int:
        return len(self.nodes)

    @property
    def n_leaves(self) -> int:
        return int((self.nodes["feature"] < 0).sum())

    def node_depths(self) -> np.ndarray:
        """Depth of every node (root = 0), shape (n_nodes,), int64."""
        depth = np.zeros(self.node_count, dtype=INDEX_DTYPE)
        for node in np.flatnonzero(self.nodes["feature"] >= 0):  # parents precede their children
            left = self.nodes["left"][node]
            depth[left] = depth[left + 1] = depth[node] + 1
        return depth

    @property
    def max_depth(self) -> int:
        """Length of the longest root-to-leaf path."""
        return int(self.node_depths().max())

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf index of each row of ``X`` (n_rows x n_features: float64 or float32, dense or
        scipy.sparse; NaN = missing)."""
        X = as_feature_array(X)
        leaves = np.empty(X.shape[0], dtype=INDEX_DTYPE)
        for start, stop, rows in dense_blocks(X):
            _predictor.apply_tree(rows, self.nodes, self.missing_left, leaves[start:stop])
        return leaves

    def goes_left(self, node: np.ndarray, value: np.ndarray) -> np.ndarray:
        """Whether a row with ``value`` of the split feature goes left at internal ``node``
        (an int64 and a float array of one shape): the rule of the predictor's kernels."""
        return (value <= self.nodes["threshold"][node]) | (np.isnan(value) & (self.missing_left[node] == 1))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Leaf value of each row."""
        return self.values[self.apply(X)]
