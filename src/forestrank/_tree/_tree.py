"""Python container of one fitted tree (plain numpy arrays: picklable, no numba types) and sums over its subtrees."""

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse

from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE, NODE_DTYPE
from .._numba.jit import jit
from .._input.features import as_feature_array, dense_blocks
from . import _predictor


def subtree_sums(tree_nodes: np.ndarray, leaf_sums: np.ndarray) -> np.ndarray:
    """Every node's sum of ``leaf_sums`` over the leaves below it.

    Parameters
    ----------
    tree_nodes : NODE_DTYPE array of shape (n_nodes,)
    leaf_sums : float array of shape (n_nodes,) or (n_nodes, n_columns)
        A value (or a row of values) per leaf; internal nodes' entries are ignored.

    Returns
    -------
    ndarray of leaf_sums' shape, float64
        A new array: the leaves' values, and each internal node the sum of its children's.
    """
    sums = leaf_sums.astype(FLOAT_DTYPE)
    add_children(tree_nodes["feature"], tree_nodes["left"], sums.reshape(len(sums), -1))
    return sums


@jit(refcounted=False)
def add_children(features, lefts, sums):
    """``sums[node] = sums[left] + sums[left + 1]`` for every internal node, deepest first
    (children come after their parent). ``features``, ``lefts``: int arrays of shape
    (n_nodes,), -1 feature at leaves; ``sums``: float64 array of shape (n_nodes, n_columns)."""
    for node in range(len(features) - 1, -1, -1):
        if features[node] >= 0:
            left = lefts[node]
            for column in range(sums.shape[1]):
                sums[node, column] = sums[left, column] + sums[left + 1, column]


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
    category_offsets : ndarray of shape (n_nodes + 1,), int64, or None
        Categorical splits (``docs/categorical.md``): node ``i``'s bitmap of category
        codes is ``category_bits[category_offsets[i]:category_offsets[i + 1]]``, empty for
        a numeric split and a leaf. None: the tree has no categorical split.
    category_bits : ndarray of shape (n_words,), uint64, or None
        The bitmaps: code ``c`` goes left when bit ``c % 64`` of word ``c // 64`` is set; a
        NaN, a negative code or one past the bitmap goes where ``missing_left`` says. A
        categorical node's ``threshold`` is +inf and is not read.
    """

    nodes: np.ndarray
    missing_left: np.ndarray
    values: np.ndarray
    n_node_samples: np.ndarray
    weighted_n_node_samples: np.ndarray
    feature_gains: np.ndarray
    category_offsets: np.ndarray | None = field(default=None)
    category_bits: np.ndarray | None = field(default=None)

    def __setstate__(self, state: dict) -> None:
        """Unpickling and skops loading: the predictor's kernels trust node indices, so a
        tree read from a file is checked first (``check``). A tree saved before categorical
        splits existed has none."""
        self.__dict__.update({"category_offsets": None, "category_bits": None, **state})
        self.check()

    @property
    def has_categories(self) -> bool:
        """Whether the tree holds a categorical split."""
        return self.category_offsets is not None

    def check(self) -> None:
        """Refuse a tree the predictor could not walk safely.

        Raises
        ------
        ValueError
            Arrays of the wrong type or shape; a split on a feature outside
            ``feature_gains``' width; a child that does not come after its parent or lies
            outside the tree; a node other than the root that is not the child of exactly
            one node; a missing direction other than 0 or 1; a NaN threshold or a
            NaN value. A split threshold may be
            infinite: ``-inf`` sends every present value right (the "missing?" test of a
            three-way split, or the missing rows alone on the left) and ``+inf`` every
            present value left (the missing rows alone on the right: the cut below the
            missing bin, ``_binning.padded_tables``).
        """
        arrays = {name: getattr(self, name, None) for name in self.__dataclass_fields__}
        if (self.category_offsets is None) != (self.category_bits is None):
            raise ValueError("a tree's category_offsets and category_bits must be given together.")
        if self.category_offsets is None:
            del arrays["category_offsets"], arrays["category_bits"]
        if not all(isinstance(array, np.ndarray) and array.ndim == 1 for array in arrays.values()):
            raise ValueError("a tree's arrays must all be 1-D numpy arrays.")
        if self.nodes.dtype != NODE_DTYPE or len(self.nodes) == 0:
            raise ValueError(f"a tree's nodes must be a non-empty array of {NODE_DTYPE}; got {self.nodes.dtype}.")
        n_nodes = len(self.nodes)
        for name in ("missing_left", "values", "n_node_samples", "weighted_n_node_samples"):
            if len(arrays[name]) != n_nodes:
                raise ValueError(f"a tree's {name} has {len(arrays[name])} entries for {n_nodes} nodes.")
        if self.missing_left.dtype != np.uint8 or self.values.dtype != np.float64:
            raise ValueError("a tree's missing_left must be uint8 and its values float64.")
        if (self.missing_left > 1).any():  # the walks step to child 1 - missing_left
            raise ValueError("a tree's missing_left must be 0 or 1 at every node.")
        feature, left, threshold = self.nodes["feature"], self.nodes["left"], self.nodes["threshold"]
        internal = np.flatnonzero(feature >= 0)
        if (feature[internal] >= len(self.feature_gains)).any():
            raise ValueError(f"a tree splits on a feature beyond its {len(self.feature_gains)} features.")
        children = left[internal].astype(INDEX_DTYPE)
        if ((children <= internal) | (children + 1 >= n_nodes)).any():
            raise ValueError("a tree has a child index before its parent or outside the tree.")
        # The bitvector scorer lays out the leaves reached from the root and writes one
        # value per leaf it counts, so a node without a parent or with two would take it
        # outside its arrays.
        if not np.array_equal(np.sort(np.concatenate([children, children + 1])), np.arange(1, n_nodes)):
            raise ValueError("a tree's nodes do not form a tree: every node but the root must be the child of exactly one node.")
        if np.isnan(threshold).any() or np.isnan(self.values).any():
            raise ValueError("a tree has a NaN threshold or a NaN value.")
        if self.category_offsets is not None:
            self._check_categories(internal)

    def _check_categories(self, internal: np.ndarray) -> None:
        """Refuse category bitmaps the predictor could read past: offsets of the wrong type
        or length, decreasing, beyond ``category_bits``, or on a leaf."""
        offsets, bits = self.category_offsets, self.category_bits
        if offsets.dtype != np.int64 or bits.dtype != np.uint64 or len(offsets) != len(self.nodes) + 1:
            raise ValueError(
                f"a tree's category_offsets must be int64 of {len(self.nodes) + 1} entries and its category_bits uint64."
            )
        sizes = np.diff(offsets)
        if offsets[0] != 0 or (sizes < 0).any() or offsets[-1] != len(bits):
            raise ValueError("a tree's category_offsets must rise from 0 to the length of category_bits.")
        leaves = np.ones(len(self.nodes), dtype=bool)
        leaves[internal] = False
        if (sizes[leaves] > 0).any():
            raise ValueError("a tree has a category bitmap on a leaf.")

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
        scipy.sparse; NaN = missing).

        Raises
        ------
        ValueError
            When ``X`` is not two-dimensional or narrower than the tree's features: the
            kernel reads a row's features unchecked, and would read the next row's.
        """
        if not scipy.sparse.issparse(X):
            X = np.asarray(X)
        width = len(self.feature_gains)
        if X.ndim != 2 or X.shape[1] < width:
            raise ValueError(f"X must be two-dimensional with at least the tree's {width} features; got shape {X.shape}.")
        X = as_feature_array(X)
        leaves = np.empty(X.shape[0], dtype=INDEX_DTYPE)
        for start, stop, rows in dense_blocks(X):
            _predictor.apply_tree(
                rows, self.nodes, self.missing_left, leaves[start:stop], self.category_offsets, self.category_bits
            )
        return leaves

    def goes_left(self, node: np.ndarray, value: np.ndarray) -> np.ndarray:
        """Whether a row with ``value`` of the split feature goes left at internal ``node``
        (an int64 and a float array of one shape): the rule of the predictor's kernels."""
        node, value = np.broadcast_arrays(np.asarray(node), np.asarray(value, dtype=np.float64))
        missing_left = self.missing_left[node] == 1
        left = (value <= self.nodes["threshold"][node]) | (np.isnan(value) & missing_left)
        if self.category_offsets is not None:
            first, last = self.category_offsets[node], self.category_offsets[node + 1]
            categorical = last > first
            # the kernels test the float (a value in (-1, 0) is no code 0) before taking its code
            inside = categorical & (value >= 0) & (value < 64 * (last - first))
            code = np.where(inside, value, 0).astype(np.int64)
            word = self.category_bits[np.where(inside, first + code // 64, 0)] if len(self.category_bits) else 0
            bit = (np.asarray(word, dtype=np.uint64) >> np.where(inside, code % 64, 0).astype(np.uint64)) & np.uint64(1)
            left = np.where(categorical, np.where(inside, bit == 1, missing_left), left)
        return left

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Leaf value of each row."""
        return self.values[self.apply(X)]
