"""One partition's share of a tree grown over several partitions (``_remote``).

A ``PartitionRows`` holds a partition's binned rows and, for the tree being grown, its
rows of positive weight in the builder's node order (``_rows.SortedRows``) with every
node's range of them. It answers the exchange's questions about its own rows with
the builder's own kernels (``_builder._summarise``, ``_histograms.fill_histograms``,
``_rows.partition``, ``_builder.root_penalty_sums``), so that with one partition every
sum is the one the builder adds on the same rows, in the same order.
"""

import numpy as np

from .._numba.dtypes import INDEX_DTYPE
from .._numba.jit import jit
from . import _builder, _criteria, _histograms, _rows


@jit(refcounted=False)
def _summarise(criterion, rows, start, end, statistics):
    """``_builder._summarise`` without leaf targets: fills ``statistics``; returns the weight."""
    weight, _ = _builder._summarise(criterion, rows, rows.weights[:0], start, end, statistics)
    return weight


@jit(refcounted=False)
def _fill(X_binned, criterion, rows, start, end, histograms, counts, runs, sparse):
    """``histograms[0]``: ``_histograms.fill_histograms`` of positions ``start:end`` (``histograms``
    of shape (1, n_features, max_bins, n_hist_columns); ``counts``: ``BinCounts.of_rows``;
    ``runs``: the one run of every feature, int64 of shape (1, 2); ``sparse``:
    ``BinCounts.sparse`` of one thread)."""
    _histograms.fill_histograms(
        X_binned, criterion, rows.targets, rows.weights, rows.samples, rows.targets_by_row, start, end, histograms, 0,
        counts, runs, sparse,
    )  # fmt: skip


@jit(refcounted=False)
def _partition(X_binned, rows, start, end, feature, cut_bin, missing_bin, missing_left):
    """``_rows.partition``: returns (first right position, rows in ``missing_bin``)."""
    return _rows.partition(X_binned, rows, start, end, feature, cut_bin, missing_bin, missing_left, None)


@jit(refcounted=False)
def _total_weight(rows):
    return _rows.total_weight(rows)


@jit(refcounted=False)
def _penalty_sums(criterion, rows, statistics, l2_regularization):
    return _builder.root_penalty_sums(criterion, rows, statistics, l2_regularization)


class PartitionRows:
    """A partition's rows for the trees grown over partitions.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), uint8/16/32, C order
        The partition's binned rows (bins of the fit's ``BinMapper``).
    criterion : int
        ``_criteria`` constant of the trees (a moment criterion).
    max_bins : int
        The bin axis of the pool's histograms (``bin_thresholds.shape[1]``).
    n_hist_columns : int
        ``_criteria.n_hist_columns(criterion)``.
    histogram_dtype : dtype
        The pool's: float64, or int32 for quantized targets.
    """

    def __init__(self, X_binned: np.ndarray, criterion: int, max_bins: int, n_hist_columns: int, histogram_dtype: object) -> None:
        self.X_binned = np.ascontiguousarray(X_binned)
        self.criterion = criterion
        self._histogram_shape = (1, X_binned.shape[1], max_bins, n_hist_columns)
        self._histogram_dtype = np.dtype(histogram_dtype)
        self._buffers = None  # the rows' buffers, allocated by the first tree and reused (``_grow.TreeMemory``)
        self._bin_counts = _histograms.BinCounts(self.X_binned, max_bins, histogram_dtype)
        self._every_feature = np.array([[0, X_binned.shape[1]]], dtype=np.int64)  # the driver's pool chooses what it scans
        # One thread fills every feature: which features have a missing bin changes no entry of its sparse rows.
        self._no_missing_bins = np.full(X_binned.shape[1], -1, dtype=np.int32)
        self.rows = None

    def start_tree(self, targets: np.ndarray, weights: np.ndarray, capacity: int) -> None:
        """Begin a tree on the rows of positive ``weights`` (float64, (n_rows,)), whose
        ``targets`` (float64, (n_rows, n_target_columns)) its criterion reads; ``capacity``:
        the tree's most nodes (``_grow.max_nodes``)."""
        samples = np.flatnonzero(weights > 0).astype(INDEX_DTYPE)
        if self._buffers is None or self._buffers.targets.shape[1] != targets.shape[1]:
            self._buffers = _rows.row_buffers(len(self.X_binned), targets.shape[1])
        self.rows = _rows.sorted_rows(samples, targets, weights, self._buffers)
        self.start = np.zeros(capacity, dtype=INDEX_DTYPE)
        self.end = np.zeros(capacity, dtype=INDEX_DTYPE)
        self.end[0] = len(samples)
        self.ahead: dict = {}  # node -> its first right position, for splits made ahead and not yet numbered

    @property
    def n_rows(self) -> int:
        """The tree's rows in this partition."""
        return len(self.rows.samples)

    @property
    def integer_weights(self) -> bool:
        return self.rows.integer_weights

    def tree_summary(self) -> tuple[int, bool, float, int, str]:
        """(rows, whether their weights are integers, their total weight, the criterion, the
        histograms' dtype name) of the tree begun."""
        return self.n_rows, self.integer_weights, float(_total_weight(self.rows)), self.criterion, self._histogram_dtype.name

    def summarise(self, node: int, commits: list = ()) -> tuple[float, np.ndarray]:
        """(weight, statistics) of the partition's rows of ``node`` (after ``commit(commits)``)."""
        self.commit(commits)
        return self._summarise(self.start[node], self.end[node])

    def histograms(self, node: int, commits: list = ()) -> np.ndarray:
        """The histograms of the partition's rows of ``node`` (after ``commit(commits)``), shape
        (n_features, max_bins, n_hist_columns)."""
        self.commit(commits)
        return self._histograms(self.start[node], self.end[node])

    def _summarise(self, start: int, end: int) -> tuple[float, np.ndarray]:
        statistics = np.empty(_criteria.n_statistics(self.criterion, 0))
        weight = _summarise(self.criterion, self.rows, start, end, statistics)
        return float(weight), statistics

    def _histograms(self, start: int, end: int) -> np.ndarray:
        histograms = np.empty(self._histogram_shape, dtype=self._histogram_dtype)
        _fill(
            self.X_binned, self.criterion, self.rows, start, end, histograms, self._bin_counts.of_rows(self.n_rows),
            self._every_feature, self._bin_counts.sparse(1, self._no_missing_bins),
        )
        return histograms[0]

    def commit(self, commits: list) -> None:
        """Number the children of splits made ahead: (node, left child) pairs."""
        for node, left_child in commits:
            middle = self.ahead.pop(node)
            self.start[left_child], self.end[left_child] = self.start[node], middle
            self.start[left_child + 1], self.end[left_child + 1] = middle, self.end[node]

    def partition(self, node: int, left_child: int, feature: int, cut_bin: int, missing_bin: int, missing_left: int) -> tuple[int, int]:
        """Split the partition's rows of ``node`` into ``left_child`` and ``left_child + 1``;
        returns (rows going left, rows in ``missing_bin``)."""
        start, end = self.start[node], self.end[node]
        middle, n_missing = _partition(self.X_binned, self.rows, start, end, feature, cut_bin, missing_bin, missing_left)
        self.start[left_child], self.end[left_child] = start, middle
        self.start[left_child + 1], self.end[left_child + 1] = middle, end
        return int(middle - start), int(n_missing)

    def split(
        self, node: int, left_child: int, feature: int, cut_bin: int, missing_bin: int, missing_left: int,
        fill_child: int = -1, commits: list = (), ahead: tuple | None = None,
    ) -> tuple:  # fmt: skip
        """``partition``, with the two children's ``summarise`` and the ``histograms`` of
        ``fill_child`` (None for -1): one round of a cluster's exchange. First the
        ``commits``; then, given ``ahead`` (node, (feature, cut bin, missing bin, missing
        left), side), that node's split made ahead (``_remote.PartitionsExchange``), whose
        answers, the same five with the histograms of ``side`` (0 left, 1 right, -1 none),
        come last (None without)."""
        self.commit(commits)
        n_left, n_missing = self.partition(node, left_child, feature, cut_bin, missing_bin, missing_left)
        histograms = None if fill_child < 0 else self.histograms(fill_child)
        answers = (n_left, n_missing, self.summarise(left_child), self.summarise(left_child + 1), histograms)
        return (*answers, None if ahead is None else self._split_ahead(*ahead))

    def _split_ahead(self, node: int, split: tuple, side: int) -> tuple:
        """``split`` made on ``node``'s rows before the builder makes it (``commit`` numbers the
        children). If it never does, the node is a leaf whose rows stay left-then-right
        within its range: nothing reads a leaf's rows by position (``row_leaf`` maps rows)."""
        start, end = self.start[node], self.end[node]
        middle, n_missing = _partition(self.X_binned, self.rows, start, end, *split)
        self.ahead[node] = middle
        children = ((start, middle), (middle, end))
        histograms = None if side < 0 else self._histograms(*children[side])
        return int(middle - start), int(n_missing), self._summarise(*children[0]), self._summarise(*children[1]), histograms

    def penalty_sums(self, l2_regularization: float) -> tuple[float, float, np.ndarray]:
        """(root weight, rows' cost, root statistics) of the partition's rows (``_builder.root_penalty_sums``)."""
        statistics = np.empty(_criteria.n_statistics(self.criterion, 0))
        weight, rows_cost = _penalty_sums(self.criterion, self.rows, statistics, l2_regularization)
        return float(weight), float(rows_cost), statistics

    def row_leaf(self, nodes: np.ndarray) -> np.ndarray:
        """Each of the partition's rows' leaf in the finished tree (its ``nodes``, NODE_DTYPE),
        -1 for rows outside the tree (weight 0)."""
        leaves = np.full(len(self.X_binned), -1, dtype=INDEX_DTYPE)
        for node in np.flatnonzero(nodes["feature"] < 0):
            leaves[self.rows.samples[self.start[node] : self.end[node]]] = node
        return leaves

