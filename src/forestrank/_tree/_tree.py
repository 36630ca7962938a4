"""Python container of one fitted tree (plain numpy arrays: picklable, no numba types)."""

from dataclasses import dataclass

import numpy as np

from .._common import FLOAT_DTYPE, INDEX_DTYPE, as_kernel_array
from . import _predictor


@dataclass
class Tree:
    """A fitted tree.

    Attributes
    ----------
    nodes : ndarray of NODE_DTYPE, shape (n_nodes,)
        ``feature`` (-1 for leaves), ``left`` (right child = ``left + 1``),
        ``threshold`` (go left when ``x[feature] <= threshold``; the value for leaves).
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
        """Leaf index of each row of ``X`` (float64, n_rows x n_features)."""
        leaves = np.empty(len(X), dtype=INDEX_DTYPE)
        _predictor.apply_tree(as_kernel_array(X, FLOAT_DTYPE), self.nodes, leaves)
        return leaves

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Leaf value of each row."""
        return self.values[self.apply(X)]
