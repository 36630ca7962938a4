"""Python side of tree growing: resolved parameters, shared data, one call per tree."""

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ._binning import BinMapper
from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE, NODE_DTYPE
from . import _builder, _categories, _criteria, _frontier, _histograms, _listwise, _remote, _rows, _scans
from ._tree import Tree


@dataclass(frozen=True)
class TreeParams:
    """Integer-coded growth parameters, as the builder takes them (-1 = no limit).

    ``sorted_sweep`` replaces the histogram scans by the sorted sweep (the stateful
    criteria's path; tests compare the two). ``n_threads``: the numba threads of a tree
    grown in the caller's thread (boosting); None, a tree on one thread, compiled
    without parallel kernels (forests, whose trees run in joblib's threads).
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
    n_threads: int | None = None
    missing_direction: int = _scans.LEARN
    cat_smooth: float = 0.0
    max_cat_to_onehot: int = 0
    max_cat_threshold: int = -1
    min_data_per_group: int = 0
    cat_l2: float = 0.0

    def growth_params(self) -> "_builder.GrowthParams":
        """The builder's bundle, every field with the type its compiled signature has."""
        return _builder.GrowthParams(
            int(self.criterion), int(self.n_classes), float(self.l2_regularization), int(self.max_depth),
            int(self.min_samples_split), int(self.min_samples_leaf), float(self.min_child_weight),
            float(self.min_gain_to_split), int(self.max_leaf_nodes), int(self.max_features), int(self.expansion),
            None if self.n_threads is None else int(self.n_threads), int(self.missing_direction), float(self.cat_smooth), int(self.max_cat_to_onehot),
            int(self.max_cat_threshold), int(self.min_data_per_group), float(self.cat_l2),
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
    is_categorical : ndarray of shape (n_features,), bool, or None
        The categorical features (``_categories``); None: none.
    category_bins : dict of int to ndarray of int64
        For each categorical feature, the bin of each code from 0 to the largest the
        fit saw, -1 for a code it did not see (``BinMapper.category_bins_``).
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
    is_categorical: np.ndarray | None = None
    category_bins: dict = field(default_factory=dict)

    def binned(self) -> "_builder.Binned":
        """The builder's view of the binned matrix."""
        missing_bins = self.missing_bins
        if missing_bins is None:
            missing_bins = np.full(self.X_binned.shape[1], -1, dtype=np.int32)
        return _builder.Binned(self.X_binned, self.n_bins, missing_bins, self.bin_thresholds, self.bin_values)


def binned_features(
    X: np.ndarray, max_bins: int | None, seed: int, n_jobs: int | None, fit_rows: np.ndarray | None = None,
    categorical: np.ndarray | None = None,
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
    categorical : bool ndarray of shape (n_features,), default=None
        The categorical features (``BinMapper``); None: none.
    """
    binner = BinMapper(max_bins, random_state=seed, n_jobs=n_jobs, categorical=categorical)
    binner.fit(X if fit_rows is None or fit_rows.all() else X[fit_rows])
    return binned_with(binner, X)


def binned_with(binner: BinMapper, X: np.ndarray) -> dict:
    """``binned_features`` of ``X`` with the bins of a fitted ``binner`` (shared by the
    partitions of a partitioned fit; ``X`` may have no rows, for a driver that holds none)."""
    thresholds, bin_values = binner.padded_tables()
    binned = {
        "X_binned": binner.transform(X), "n_bins": binner.n_bins_, "missing_bins": binner.missing_bins_,
        "bin_thresholds": thresholds, "bin_values": bin_values,
    }  # fmt: skip
    if binner.category_codes_:
        binned["is_categorical"] = np.asarray(binner.categorical, dtype=bool)
        binned["category_bins"] = binner.category_bins_
    return binned


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


def histogram_pool(
    data: TrainingSet, params: TreeParams, n_tree_rows: int, dtype: type = FLOAT_DTYPE, sampled_features: bool = False
) -> np.ndarray | None:
    """The tree's histogram pool (``_histograms.histogram_pool``), or None where it does not apply.

    Listwise trees and the sorted sweep search without one, and so do trees whose nodes
    sample features unless ``sampled_features``; a pool serves every tree of a fit
    grown one at a time (boosting). ``sampled_features``: pool even when the
    nodes sample features (``max_features``) or the tree uses a subset of them: every
    feature's histograms are summed, those a node does not draw are never read, and
    the sibling subtraction still halves the fills. Boosting asks for it, as LightGBM
    keeps its histograms under ``feature_fraction`` and ``feature_fraction_bynode``;
    forests, whose trees each sample their own rows, do not.
    """
    n_features = data.X_binned.shape[1]
    if params.listwise_depth > 0 or params.sorted_sweep or (params.max_features < n_features and not sampled_features):
        return None
    max_frontier = params.max_leaf_nodes if params.max_leaf_nodes > 0 else n_tree_rows
    return _histograms.histogram_pool(params.criterion, n_features, data.bin_thresholds.shape[1], max_frontier, dtype)


class TreeMemory:
    """The buffers a tree grows in: its rows, the builder's workspace and the node
    arrays it writes, sized for the most nodes a tree of the largest sample so far
    can have (``max_nodes``; ``reserve`` grows them).

    Trees grown one after another in the same buffers (``grow_tree(memory=...)``)
    allocate them once: buffers allocated anew for every tree are freed between the
    long-lived trees, where the memory allocator keeps them instead of giving them
    back (``benchmarks/RESULTS.md``, "Memory at web scale"). Buffers are written before they are read, so a tree grown in
    reused memory is the tree grown in new memory (tested).
    """

    def __init__(self, data: TrainingSet, params: TreeParams) -> None:
        self._data = data
        self._params = params
        self.n_rows = -1
        self._with_rows = True
        self._bin_counts = None

    def bin_counts(self, X_binned: np.ndarray, histograms: np.ndarray) -> _histograms.BinCounts:
        """The bin counts (``_histograms.BinCounts``) of ``X_binned`` (uint8/16/32, shape
        (n_rows, n_features)) for the pool ``histograms`` (shape (n_slots, n_features,
        max_bins, n_hist_columns)), kept for the trees after."""
        if self._bin_counts is None or not self._bin_counts.fits(X_binned, histograms):
            self._bin_counts = _histograms.BinCounts(X_binned, histograms.shape[2], histograms.dtype)
        return self._bin_counts

    def reserve(self, n_tree_rows: int, with_rows: bool = True) -> None:
        """Make room for a tree of ``n_tree_rows`` rows (new buffers if the current are smaller);
        without buffers for the rows themselves when they live in partitions elsewhere
        (``with_rows=False``, ``grow_tree(exchange=...)``)."""
        if n_tree_rows <= self.n_rows and with_rows == self._with_rows:
            return
        data, params = self._data, self._params
        self.n_rows = n_tree_rows
        self._with_rows = with_rows
        self.capacity = max_nodes(params, n_tree_rows)
        self.rows = _rows.row_buffers(n_tree_rows if with_rows else 0, data.targets.shape[1])
        self.nodes = np.empty(self.capacity, dtype=NODE_DTYPE)
        self.missing_left = np.empty(self.capacity, dtype=np.uint8)
        self.values = np.empty(self.capacity, dtype=FLOAT_DTYPE)
        self.n_node_samples = np.empty(self.capacity, dtype=INDEX_DTYPE)
        self.weighted_n_node_samples = np.empty(self.capacity, dtype=FLOAT_DTYPE)
        # Nodes split pointwise below the listwise depth, if a tree can reach it.
        deepest_split = params.max_depth - 1 if params.max_depth >= 0 else n_tree_rows
        pointwise = params.listwise_depth == 0 or params.listwise_depth <= deepest_split
        self.workspace = _builder.new_workspace(
            self.capacity, data.X_binned.shape[1], data.bin_thresholds.shape[1],
            _criteria.n_statistics(params.criterion, params.n_classes), params.missing_direction, pointwise,
            _criteria.draws_split(params.criterion),
        )  # fmt: skip
        self.categories = None
        if data.is_categorical is not None:
            self.categories = _categories.new_category_splits(
                data.is_categorical, self.capacity, data.bin_thresholds.shape[1]
            )

    def fresh_workspace(self) -> "_builder.Workspace":
        """The workspace, reset where a tree reads before it writes: an empty frontier and
        the identity permutation the splitter draws features from."""
        work = self.workspace
        work.frontier.size[0] = 0
        work.features[:] = np.arange(len(work.features), dtype=work.features.dtype)
        return work


class NodeStore:
    """Where the finished trees of a forest keep their nodes: views into shared blocks.

    An ensemble puts all its trees' nodes back to back for the predictor
    (``TreeEnsembleMixin._index_trees``), copying them tree by tree. Nodes kept in
    blocks of ``BLOCK_NODES`` (64 MB, more than glibc's largest threshold for serving
    an allocation by its own memory map) go back to the system as soon as the last
    tree of a block is copied, so the forest's nodes never exist twice in memory;
    nodes kept in arrays of their own would return to the allocator's heap, which
    keeps them. Worth it only for forests whose nodes could fill a block
    (``TreeMemoryPool``). Thread-safe.
    """

    BLOCK_NODES = 1 << 22

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._block = np.empty(0, dtype=NODE_DTYPE)
        self._used = 0

    def keep(self, nodes: np.ndarray) -> np.ndarray:
        """A stored copy of ``nodes`` (NODE_DTYPE array)."""
        size = len(nodes)
        if size > self.BLOCK_NODES // 4:  # large enough to be mapped alone
            return nodes.copy()
        with self._lock:
            if self._used + size > len(self._block):
                self._block = np.empty(self.BLOCK_NODES, dtype=NODE_DTYPE)
                self._used = 0
            block, start = self._block, self._used
            self._used += size
        kept = block[start : start + size]
        kept[:] = nodes
        return kept


class TreeMemoryPool:
    """``TreeMemory`` for the trees of one fit grown in threads: a tree takes one
    (``memory``) and gives it back, so a forest allocates one per thread; and, when
    the trees' nodes could fill a ``NodeStore`` block, the store they keep them in
    (None otherwise).

    Pickled (for a joblib backend of processes) it travels empty: each process then
    allocates its own.
    """

    def __init__(self, data: TrainingSet, params: TreeParams, n_rows: int, n_trees: int) -> None:
        self._data = data
        self._params = params
        self._n_rows = n_rows
        self._n_trees = n_trees
        self._free: queue.SimpleQueue = queue.SimpleQueue()
        large = n_trees * max_nodes(params, n_rows) > NodeStore.BLOCK_NODES
        self.node_store = NodeStore() if large else None

    def __reduce__(self) -> tuple:
        return type(self), (self._data, self._params, self._n_rows, self._n_trees)

    @contextmanager
    def memory(self) -> Iterator[TreeMemory]:
        """A free ``TreeMemory`` (new if none is free), given back on exit."""
        try:
            memory = self._free.get_nowait()
        except queue.Empty:
            memory = TreeMemory(self._data, self._params)
        try:
            yield memory
        finally:
            self._free.put(memory)


def _check_exchange(exchange: object, data: TrainingSet, params: TreeParams, histograms: np.ndarray | None) -> None:
    """Refuse a tree the builder cannot grow over partitions (``_remote``): it needs a moment
    criterion searched on a histogram pool, no listwise split or sorted sweep, no leaf targets
    (a remote node's value is the caller's), and partitions of the tree's criterion and dtype."""
    problems = {
        "a moment criterion with a histogram pool": histograms is None or not _criteria.pools_histograms(params.criterion),
        "no listwise splits and no sorted sweep": params.listwise_depth > 0 or params.sorted_sweep,
        "no leaf targets (the caller sets the values)": len(data.leaf_targets) > 0,
        f"partitions of the tree's criterion {params.criterion} (they have {exchange.criterion})": (
            exchange.criterion != params.criterion
        ),
    }
    if histograms is not None:
        problems[f"partitions summing {histograms.dtype.name} histograms (they sum {exchange.histogram_dtype})"] = (
            exchange.histogram_dtype != histograms.dtype.name
        )
    for need, missing in problems.items():
        if missing:
            raise ValueError(f"a tree grown over partitions needs {need}.")


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
    memory: TreeMemory | None = None,
    node_store: NodeStore | None = None,
    feature_penalty: np.ndarray | None = None,
    features: np.ndarray | None = None,
    monotonic_cst: np.ndarray | None = None,
    value_bounds: np.ndarray | None = None,
    interaction_groups: np.ndarray | None = None,
    exchange: object = None,
) -> Tree:
    """Grow one tree on the rows with positive ``weights`` (float64, one per row).

    ``copies`` (per row) and ``query_weights`` (per query), float64, are what the
    listwise criterion counts (``params.listwise_depth > 0``): each document's copies
    within its query, and each query's weight in the mean expected NDCG;
    ``cumulative_discount`` is ``_listwise.cumulative_discounts`` for those copies.
    ``row_leaf`` (int64, one per row), when given, receives the leaf node of every
    row with positive weight. ``histograms`` is a ``histogram_pool`` and ``memory`` a
    ``TreeMemory`` to reuse (trees grown one after another); by default the tree
    allocates its own. ``node_store`` keeps the
    finished tree's nodes (a forest's ``NodeStore``); by default an array of their own.
    ``feature_penalty`` (float64, one per feature) is ``lambda * c(f)`` of each feature
    the tree does not get for free (``docs/costs.md``); None: no cost. ``features``
    (int, distinct) are the only features the tree may split on (a per-tree feature
    fraction); None: all. Each node then draws its ``max_features`` among them.
    ``monotonic_cst`` (int8, one per feature: -1, 0, +1) constrains the tree's value to
    fall, be free, or rise with each feature (moment criteria only; None: free); the
    nodes' values are kept within the bounds it sets (``_builder._bound_children``),
    which ``value_bounds`` (float64, shape (>= n_nodes, 2)), when given, receives for a
    caller that sets the values itself (boosting's Newton steps).
    ``interaction_groups`` (uint64, shape (n_groups, ceil(n_features / 64)), the
    features of each group as bits: ``_input.features.check_interaction_cst``) lets a
    node split only on features of a group that holds every feature split on above it;
    None: free.

    ``exchange`` (``_remote``): the rows live in partitions elsewhere, each started on
    the tree (``_partition_rows.PartitionRows.start_tree``), and the exchange sums
    their row operations; ``data`` then holds the bins and no rows, ``weights`` and
    ``row_leaf`` are unused (each partition knows its rows' leaves), and the tree is
    pointwise with a histogram pool (boosting's).
    """
    if row_leaf is None or exchange is not None:
        row_leaf = np.zeros(0, dtype=INDEX_DTYPE)
    if exchange is None:
        samples = np.flatnonzero(weights > 0).astype(INDEX_DTYPE)
        n_tree_rows = len(samples)
    else:
        n_tree_rows = exchange.n_rows
    if histograms is None:
        histograms = histogram_pool(data, params, n_tree_rows)
    if exchange is not None:
        _check_exchange(exchange, data, params, histograms)
    if memory is None:
        memory = TreeMemory(data, params)
    memory.reserve(n_tree_rows, with_rows=exchange is None)
    capacity = memory.capacity
    work = memory.fresh_workspace()
    if features is not None:  # a view of the workspace's own array: the builder's signature stays the same
        work.features[: len(features)] = features
        work = work._replace(features=work.features[: len(features)])
    penalty = None  # the builder's argument: the workspace's copy, which the tree zeroes as it pays
    if feature_penalty is not None:
        work.feature_penalty[:] = feature_penalty
        penalty = work.feature_penalty
    if monotonic_cst is not None:
        monotonic_cst = np.ascontiguousarray(monotonic_cst, dtype=np.int8)
        if monotonic_cst.shape != (data.X_binned.shape[1],):
            raise ValueError(
                f"monotonic_cst must hold one constraint per feature, shape ({data.X_binned.shape[1]},); "
                f"got shape {monotonic_cst.shape}."
            )
    if interaction_groups is not None:
        work = work._replace(interaction_groups=interaction_groups)
    listwise = None
    if params.listwise_depth > 0:
        listwise = _listwise.new_listwise(
            params.listwise_depth, params.max_queries, data.query_of_row, data.query_boundaries, data.row_gains,
            copies, query_weights, cumulative_discount, n_tree_rows, data.bin_thresholds.shape[1],
        )  # fmt: skip
    output = _builder.TreeOutput(
        memory.nodes, memory.missing_left, memory.values, memory.n_node_samples, memory.weighted_n_node_samples,
        np.zeros(data.X_binned.shape[1], dtype=FLOAT_DTYPE), row_leaf,
    )  # fmt: skip
    binned = data.binned()
    pool = None
    if histograms is not None:
        if exchange is None:
            bin_counts = memory.bin_counts(data.X_binned, histograms)
            pool = bin_counts.pool(histograms, capacity, n_tree_rows, params.n_threads, binned.missing_bins)
        else:  # the driver fills no histogram: each worker's block of rows copies its own counts and fills every feature
            pool = _histograms.new_pool(histograms, capacity)
    if exchange is None:
        n_nodes = _builder.build_tree(
            binned,
            _rows.sorted_rows(samples, data.targets, weights, memory.rows), data.leaf_targets, params.growth_params(),
            work,
            rng_state, np.empty((n_tree_rows, 3), dtype=INDEX_DTYPE) if params.sorted_sweep else None, pool, listwise,
            output, None, memory.categories, monotonic_cst, penalty,
        )  # fmt: skip
    else:
        no_rows = memory.rows._replace(integer_weights=exchange.integer_weights)
        with _remote.register(exchange) as remote:
            n_nodes = _builder.build_tree(
                binned, no_rows, data.leaf_targets, params.growth_params(), work, rng_state, None, pool, None,
                output, remote, None, monotonic_cst, penalty,
            )  # fmt: skip
        exchange.finish()
    if value_bounds is not None:
        value_bounds[:n_nodes, 0] = work.table.lower[:n_nodes]
        value_bounds[:n_nodes, 1] = work.table.upper[:n_nodes]
    category_offsets, category_bits = category_bitmaps(data, memory.categories, output.nodes, output.missing_left, n_nodes)
    return Tree(
        nodes=output.nodes[:n_nodes].copy() if node_store is None else node_store.keep(output.nodes[:n_nodes]),
        missing_left=output.missing_left[:n_nodes].copy(),
        values=output.values[:n_nodes].copy(),
        n_node_samples=output.n_node_samples[:n_nodes].copy(),
        weighted_n_node_samples=output.weighted_n_node_samples[:n_nodes].copy(),
        feature_gains=output.feature_gains,
        category_offsets=category_offsets,
        category_bits=category_bits,
    )


def category_bitmaps(
    data: TrainingSet, categories: "_categories.CategorySplits | None", nodes: np.ndarray, missing_left: np.ndarray,
    n_nodes: int,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The codes each categorical split of a grown tree sends left, as ``Tree`` keeps them
    (``category_offsets``, ``category_bits``), or (None, None) in a tree without one.

    The split's set of bins becomes a bitmap of codes ``0 .. 64 w - 1`` (``w`` words, enough
    for every code the fit saw): a code goes where its bin goes, and a code the fit did
    not see, like a missing value, where the node sends missing values.
    """
    if categories is None:
        return None, None
    feature = nodes["feature"][:n_nodes]
    split = np.flatnonzero(feature >= 0)
    split = split[data.is_categorical[feature[split]]]
    if len(split) == 0:
        return None, None
    offsets = np.zeros(n_nodes + 1, dtype=INDEX_DTYPE)
    words = []
    for node in split:
        bins_of_codes = data.category_bins[int(feature[node])]
        n_words = max((len(bins_of_codes) + 63) // 64, 1)
        bin_left = np.unpackbits(categories.sets[node].view(np.uint8), bitorder="little").astype(bool)
        code_left = np.full(64 * n_words, bool(missing_left[node]))
        seen = bins_of_codes >= 0
        code_left[: len(bins_of_codes)][seen] = bin_left[bins_of_codes[seen]]
        words.append(np.packbits(code_left, bitorder="little").view(np.uint64))
        offsets[node + 1] = n_words
    return np.cumsum(offsets), np.concatenate(words)
