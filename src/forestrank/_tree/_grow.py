"""Python side of tree growing: resolved parameters, shared data, one call per tree."""

from dataclasses import dataclass, field

import numpy as np

from .._binning import BinMapper
from .._common import FLOAT_DTYPE, INDEX_DTYPE, NODE_DTYPE
from . import _builder, _criteria, _frontier, _histograms, _listwise, _rows, _scans
from ._tree import Tree


@dataclass(frozen=True)
class TreeParams:
    """Integer-coded growth parameters, as the builder takes them (-1 = no limit).

    ``sorted_sweep`` replaces the histogram scans by the sorted sweep (the stateful
    criteria's path; tests compare the two).
    """

    criterion: int
    n_classes: int
    max_features: int
    expansion: int = _frontier.DEPTH
    l2_regularization: float = 0.0
    max_depth: int = -1
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    min_child_weight: float = 0.0
    min_gain_to_split: float = 0.0
    max_leaf_nodes: int = -1
    sorted_sweep: bool = False
    listwise_depth: int = 0
    max_queries: int = -1
    n_threads: int = 1
    missing_direction: int = _scans.LEARN

    def growth_params(self) -> "_builder.GrowthParams":
        """The builder's bundle, every field with the type its compiled signature has."""
        return _builder.GrowthParams(
            int(self.criterion), int(self.n_classes), float(self.l2_regularization), int(self.max_depth),
            int(self.min_samples_split), int(self.min_samples_leaf), float(self.min_child_weight),
            float(self.min_gain_to_split), int(self.max_leaf_nodes), int(self.max_features), int(self.expansion),
            int(self.n_threads), int(self.missing_direction),
        )  # fmt: skip


@dataclass(frozen=True)
class TrainingSet:
    """Data shared read-only by every tree of one fit.

    Attributes
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8/16/32, C order
    n_bins : ndarray of shape (n_features,), int32
    bin_thresholds, bin_values : ndarray of shape (n_features, max_bins), float64
    targets : ndarray of shape (n_rows, n_target_columns), float64
    leaf_targets : ndarray of shape (n_rows,) or (0,), float64
        The values averaged into node values; empty when the caller computes its
        own (boosting).
    query_of_row : ndarray of shape (n_rows,), int64
    query_boundaries : ndarray of shape (n_queries + 1,), int64
    row_gains : ndarray of shape (n_rows,), float64
        ``2^l - 1`` per row (listwise criterion; empty otherwise).
    missing_bins : ndarray of shape (n_features,), int32, or None
        Each feature's missing bin or -1 (``BinMapper.missing_bins_``); None: no
        feature has one.
    """

    X_binned: np.ndarray
    n_bins: np.ndarray
    bin_thresholds: np.ndarray
    bin_values: np.ndarray
    targets: np.ndarray
    leaf_targets: np.ndarray
    query_of_row: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=INDEX_DTYPE))
    query_boundaries: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=INDEX_DTYPE))
    row_gains: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=FLOAT_DTYPE))
    missing_bins: np.ndarray | None = None

    def binned(self) -> "_builder.Binned":
        """The builder's view of the binned matrix."""
        missing_bins = self.missing_bins
        if missing_bins is None:
            missing_bins = np.full(self.X_binned.shape[1], -1, dtype=np.int32)
        return _builder.Binned(self.X_binned, self.n_bins, missing_bins, self.bin_thresholds, self.bin_values)


def binned_features(
    X: np.ndarray, max_bins: int | None, seed: int, n_jobs: int | None, fit_rows: np.ndarray | None = None
) -> dict:
    """Bin ``X`` once for a fit: the ``TrainingSet`` fields (binned matrix, bin counts,
    missing bins, thresholds, bin values).

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64
    max_bins, n_jobs : as in ``BinMapper``
    seed : int
        ``BinMapper``'s random state (its quantile sub-sample).
    fit_rows : bool ndarray of shape (n_rows,), default=None
        The rows the bins are computed from (e.g. those of positive weight); all by
        default. Every row is binned.
    """
    binner = BinMapper(max_bins, random_state=seed, n_jobs=n_jobs)
    binner.fit(X if fit_rows is None or fit_rows.all() else X[fit_rows])
    thresholds, bin_values = binner.padded_tables()
    return {
        "X_binned": binner.transform(X), "n_bins": binner.n_bins_, "missing_bins": binner.missing_bins_,
        "bin_thresholds": thresholds, "bin_values": bin_values,
    }  # fmt: skip


def max_nodes(params: TreeParams, n_tree_rows: int) -> int:
    """Most nodes a tree can have: every row a leaf, or fewer by ``max_leaf_nodes`` and
    ``max_depth`` (boosting's trees allocate for their 31 leaves, not their rows).

    A tree is binary, so it has twice its leaves less one nodes; a level of three-way
    splits (``SEPARATE``) triples the leaves of the one above.
    """
    capacity = max(1, 2 * n_tree_rows - 1)
    if params.max_leaf_nodes > 0:
        capacity = min(capacity, 2 * params.max_leaf_nodes - 1)
    if 0 <= params.max_depth < 40:
        fan_out = 3 if params.missing_direction == _scans.SEPARATE else 2
        capacity = min(capacity, 2 * fan_out**params.max_depth - 1)
    return capacity


def histogram_pool(data: TrainingSet, params: TreeParams, n_tree_rows: int) -> np.ndarray | None:
    """The tree's histogram pool (``_histograms.histogram_pool``), or None where it does not apply.

    Listwise trees and the sorted sweep search without one; a pool serves every tree
    of a fit grown one at a time (boosting).
    """
    if params.listwise_depth > 0 or params.sorted_sweep:
        return None
    max_frontier = params.max_leaf_nodes if params.max_leaf_nodes > 0 else n_tree_rows
    return _histograms.histogram_pool(
        params.criterion, data.X_binned.shape[1], data.bin_thresholds.shape[1], params.max_features, max_frontier
    )


def grow_tree(
    data: TrainingSet,
    weights: np.ndarray,
    params: TreeParams,
    rng_state: np.ndarray,
    copies: np.ndarray | None = None,
    query_weights: np.ndarray | None = None,
    cumulative_discount: np.ndarray | None = None,
    row_leaf: np.ndarray | None = None,
    histograms: np.ndarray | None = None,
) -> Tree:
    """Grow one tree on the rows with positive ``weights`` (float64, one per row).

    ``copies`` (per row) and ``query_weights`` (per query), float64, are what the
    listwise criterion counts (``params.listwise_depth > 0``): each document's copies
    within its query, and each query's weight in the mean expected NDCG;
    ``cumulative_discount`` is ``_listwise.cumulative_discounts`` for those copies.
    ``row_leaf`` (int64, one per row), when given, receives the leaf node of every
    row with positive weight. ``histograms`` is a ``histogram_pool`` to reuse
    (trees grown one after another); by default the tree allocates its own where one
    applies.
    """
    if row_leaf is None:
        row_leaf = np.zeros(0, dtype=INDEX_DTYPE)
    samples = np.flatnonzero(weights > 0).astype(INDEX_DTYPE)
    if histograms is None:
        histograms = histogram_pool(data, params, len(samples))
    capacity = max_nodes(params, len(samples))
    listwise = None
    if params.listwise_depth > 0:
        listwise = _listwise.new_listwise(
            params.listwise_depth, params.max_queries, data.query_of_row, data.query_boundaries, data.row_gains,
            copies, query_weights, cumulative_discount, len(samples), data.bin_thresholds.shape[1],
        )  # fmt: skip
    n_features = data.X_binned.shape[1]
    output = _builder.TreeOutput(
        np.empty(capacity, dtype=NODE_DTYPE), np.empty(capacity, dtype=np.uint8), np.empty(capacity, dtype=FLOAT_DTYPE), np.empty(capacity, dtype=INDEX_DTYPE),
        np.empty(capacity, dtype=FLOAT_DTYPE), np.zeros(n_features, dtype=FLOAT_DTYPE), row_leaf,
    )  # fmt: skip
    n_nodes = _builder.build_tree(
        data.binned(),
        _rows.sorted_rows(samples, data.targets, weights), data.leaf_targets, params.growth_params(),
        _builder.new_workspace(
            capacity, n_features, data.bin_thresholds.shape[1], _criteria.n_statistics(params.criterion, params.n_classes),
            params.missing_direction,
        ),
        rng_state, np.empty((len(samples), 3), dtype=INDEX_DTYPE) if params.sorted_sweep else None,
        None if histograms is None else _histograms.new_pool(histograms, capacity), listwise, output,
    )  # fmt: skip
    return Tree(
        nodes=output.nodes[:n_nodes].copy(),
        missing_left=output.missing_left[:n_nodes].copy(),
        values=output.values[:n_nodes].copy(),
        n_node_samples=output.n_node_samples[:n_nodes].copy(),
        weighted_n_node_samples=output.weighted_n_node_samples[:n_nodes].copy(),
        feature_gains=output.feature_gains,
    )
