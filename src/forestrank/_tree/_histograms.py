"""The histogram pool: per-bin sums of every feature kept per frontier node, and the sibling subtraction.

A moment criterion examining every feature at every node (boosting) can keep each
frontier node's all-feature histograms: a split then costs one pass over the
*smaller* child's rows, and the larger child's histograms are the parent's minus
the smaller child's (``_pooled_fill.node_histograms``, which keeps the slots and runs
the fills; scikit-learn's ``histogram.pyx`` and LightGBM do the same). ``_fill_features`` sums a node's features in one pass over its
rows, since a row's bins are contiguous in the C-ordered ``X_binned``; on several
threads each sums the features it owns for the fit (``feature_owners``), and the split
search reads a feature's candidates from a slot (``_scans.pooled_scan``).
Random forests draw a new feature subset at every node and class criteria have
per-class statistics, so neither uses the pool (``histogram_pool`` returns None).

The pool is an array of slots, ``histograms[slot, feature, bin, column]``: float64, or
int32 when boosting quantizes its gradients to integers (``ensemble/_quantization.py``;
the same kernels, compiled for that type). Each node holds at most one slot; the last
slot is scratch, filled and released within one node when no slot is free (slower,
never different).
"""

from collections import namedtuple

import numpy as np

from .._numba.bits import pop_lowest_bit
from .._numba.dtypes import FLOAT_DTYPE
from .._numba.jit import jit, nowrap
from .._numba.pair_add import add_pair
from .._numba.prefetch import GATHER_DISTANCE, prefetch
from . import _criteria, _rows

# Columns of one bin of a pooled histogram (``_criteria.n_hist_columns`` of them).
HIST_FIRST = 0  # sum of the first moment (w * g, or w * y)
HIST_SECOND = 1  # sum of the second moment (w * h, or w * y^2); next to the first: the fill adds both as one pair
HIST_COUNT = 2
HIST_WEIGHT = 3  # only where the child minimum is on the weight

# Rows of a dense sweep's scratch (``_scans.dense_sweep``, ``Pool.sweep_prefix``): the left
# child's first and second moments and its weight at each cut, and the cut's gain.
PREFIX_FIRST, PREFIX_SECOND, PREFIX_WEIGHT, PREFIX_GAIN = 0, 1, 2, 3
N_PREFIX_ROWS = 4

# At most this many bytes of pooled histograms per tree.
POOL_BYTES = 1 << 27

FILL_LATER = -2  # a node's slot: sum its histograms from its rows when it is searched

Pool = namedtuple(
    "Pool",
    [
        "histograms", "node_slot", "free_slots", "n_free", "scratch", "scan_gains", "scan_cuts", "bin_counts",
        "feature_owner", "owned_runs", "n_runs", "sparse", "node_sums", "node_summed", "slot_bins", "slot_marked",
        "scanned", "child_statistics", "sweep_prefix",
    ],
)  # fmt: skip
Pool.__doc__ = """A tree's histograms, their bookkeeping and the results of a node's scans (``new_pool``).

histograms : float64 or int32 array of shape (n_slots, n_features, max_bins, n_hist_columns)
node_slot : int64 array of shape (n_nodes capacity,)
    Each node's slot, -1 for none, ``FILL_LATER`` for one to fill when searched.
free_slots : int64 array of shape (n_slots - 1,)
    A stack of the free slots; ``n_free[0]`` of them.
n_free : int64 array of shape (1,)
scratch : int
    The last slot.
scan_gains : float64 array of shape (2, n_features)
scan_cuts : int64 array of shape (2, n_features, 4)
    A node's scan of each drawn feature, at the feature's row (``_splitter.pooled_scans``):
    its best gain, and whether it is constant, its bin, next bin and missing direction;
    in row 0 the node being searched, or a split's two children, the left in row 0 and
    the right in row 1, where their fill's parallel region scanned them (``scanned``).
bin_counts : float64 or int32 array of shape (n_features, max_bins) or (0, max_bins), the histograms' dtype
    The rows of ``X_binned`` in each bin of each feature (``BinCounts``), which a node
    holding every row copies instead of counting them (``_fill_features``); of shape
    (0, max_bins): every node counts its rows.
feature_owner, owned_runs, n_runs : int64 arrays of shape (n_features,), (n_owners, n_features, 2), (n_owners,)
    Which thread fills, subtracts and scans each feature's histograms, and each
    thread's features as runs (``feature_owners``); -1: a feature with one value in
    every row, never filled and scanned as constant.
sparse : SparseRows
    The rows' bins other than their feature's most frequent one, by owner
    (``sparse_rows``), which the fill adds instead of every bin; no rows: every bin.
node_sums : float64 array of shape (n_nodes capacity, 3)
    A node's totals of the first and second moments and of the weights, in position
    order (``_position_totals``), written by the fill of the node or of its smaller
    sibling; ``node_summed`` (bool, of shape (n_nodes capacity,)) marks the nodes whose
    row holds them (``_pooled_fill.node_histograms`` sets both before the builder reads them).
slot_bins : uint64 array of shape (n_slots, n_features, ceil(max_bins / 64))
    Each slot's bins that the rows of its last fill fell in, by feature, as bits; every
    other bin of the slot is zero where ``slot_marked[slot]`` (bool, of shape (n_slots,)).
    A fill of few rows marks them (``marks_bins``), and then the slot's next fill clears
    those bins only, the subtraction subtracts those only and the sweep walks those only
    (``_scans._pooled_sweep``). A subtraction leaves the mark of the parent's slot true:
    the larger child's rows fall in bins its parent's did. Kept across the trees that
    share one pool (the compiled boosting loop's); False: a slot whose bins are not
    known, which the next fill clears whole.
scanned : int64 array of shape (2,)
    The node whose scans each row of ``scan_gains`` and ``scan_cuts`` holds for its
    search, -1 for none (``_pooled_fill.node_histograms``, ``scanned_row``).
child_statistics : float64 array of shape (n_owners, 2, 2)
    Each thread's copy of the two moments of the children it scans in their fill's
    region (``_pooled_fill.fill_histograms_parallel``), the statistics of their ``Node``.
sweep_prefix : float64 array of shape (n_owners, N_PREFIX_ROWS, max_bins)
    Each thread's scratch for the sweeps of its features (``_scans.dense_sweep``).
"""

SparseRows = namedtuple("SparseRows", ["row_entries", "entries", "frequent_bin"])
SparseRows.__doc__ = """Each row's bins other than its feature's most frequent bin, row-wise and by owner (``sparse_rows``).

LightGBM's sparse and multi-value bins leave each feature's most frequent bin out of
the fill and restore it from the node's totals afterwards (its ``FixHistogram``): on
data where many rows share a value (zeros in LETOR's features), most of a fill's
additions go to that bin.

row_entries : uint32 array of shape (n_rows, n_owners + 1), or (0, 2) for no layout
    The entries of row ``r`` filled by thread ``t`` (``Pool.feature_owner``) are
    ``entries[row_entries[r, t] : row_entries[r, t + 1]]``, in feature order. With
    ``entries``, the layout takes ``4 (n_owners + 1)`` bytes a row and 2 an entry.
entries : uint16 array of shape (n_entries,)
    ``feature * max_bins + b``: the bin's index in one slot's histograms seen as a flat
    array of bins.
frequent_bin : int64 array of shape (n_features,)
    Each feature's most frequent bin over every row, the one its entries leave out.
"""

# The sparse fill applies when the rows' bins other than their feature's most frequent one
# are at most this share of all bins: as the share nears 1, reading an entry's index costs
# more than the additions it saves. Set above MQ2008's 0.60, where a node's fill took a third
# less (``benchmarks/RESULTS.md``, "Boosting speed: where an iteration goes"); the break-even
# share itself was not measured.
SPARSE_FILL_DENSITY = 0.75

# Nodes of fewer rows than this share of a feature's bins are filled densely: restoring the
# most frequent bins reads every bin of the node's features once, more than their rows
# save. These nodes also mark the bins their rows fall in (``marks_bins``).
SPARSE_FILL_MIN_ROWS_PER_BIN = 0.5


def histogram_pool(
    criterion: int, n_features: int, max_bins: int, max_frontier: int, dtype: type = FLOAT_DTYPE
) -> np.ndarray | None:
    """The pooled all-feature histograms of a tree, or None where the pool does not apply.

    It applies to moment criteria (``_criteria.pools_histograms``) with histogram scans
    (``_grow.histogram_pool`` decides for the tree's sampling, listwise splits and the
    sorted sweep). It holds at most ``POOL_BYTES`` and never more slots than the tree
    can have frontier nodes (``max_frontier``) plus scratch; fewer than two slots is no
    pool.

    Returns
    -------
    ndarray of shape (n_slots, n_features, max_bins, n_hist_columns), ``dtype``, or None
        Uninitialised: a slot is overwritten before it is read, so one pool serves
        every tree of a fit grown one at a time (boosting).
    """
    if not _criteria.pools_histograms(criterion):
        return None
    n_columns = _criteria.n_hist_columns(criterion)
    slot_bytes = max(n_features * max_bins * n_columns * np.dtype(dtype).itemsize, 1)
    n_slots = min(POOL_BYTES // slot_bytes, max_frontier + 2)
    if n_slots < 2:
        return None
    return np.empty((n_slots, n_features, max_bins, n_columns), dtype=dtype)


def feature_owners(
    n_features: int, n_owners: int, counts: np.ndarray | None = None, missing_bins: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deal the features to ``n_owners`` threads: ``Pool``'s ``feature_owner``, ``owned_runs``
    and ``n_runs``.

    A feature whose rows all fall in one bin that is not its missing bin splits no node:
    no thread fills it, and its scan reports it constant without reading it, as the
    sweep would find it in any node (``_pooled_fill.record_pooled_scan``). The others are
    cut, in index order, into ``n_owners`` blocks of as many features as can be (the
    fill's cost is the same for each), each held as runs of consecutive features: the
    fill's loop over a range is tighter than one over a list.

    Parameters
    ----------
    n_features, n_owners : int
    counts : None or array of shape (n_features, max_bins)
        The bin counts of every row of ``X_binned`` (``BinCounts.every_row``); None: not
        known, every feature is filled.
    missing_bins : None or int32 array of shape (n_features,)
        Each feature's missing bin (-1: none); with ``counts``.

    Returns
    -------
    feature_owner : int64 array of shape (n_features,)
        Each feature's thread, -1 for a feature of one value.
    owned_runs : int64 array of shape (n_owners, n_features, 2)
        Thread ``t``'s features as ranges ``first:last``, increasing, in its first
        ``n_runs[t]`` rows.
    n_runs : int64 array of shape (n_owners,)
    """
    live = np.ones(n_features, dtype=bool)
    if counts is not None:
        missing = np.asarray(missing_bins)
        in_missing = np.where(missing >= 0, counts[np.arange(n_features), np.maximum(missing, 0)], 0)
        live = ~(((counts > 0).sum(axis=1) == 1) & (in_missing == 0))
    feature_owner = np.full(n_features, -1, dtype=np.int64)
    live_features = np.flatnonzero(live)
    feature_owner[live_features] = np.arange(len(live_features)) * n_owners // max(len(live_features), 1)
    owned_runs = np.zeros((n_owners, n_features, 2), dtype=np.int64)
    n_runs = np.zeros(n_owners, dtype=np.int64)
    for owner in range(n_owners):
        mine = np.flatnonzero(feature_owner == owner)
        starts = mine[np.r_[True, np.diff(mine) > 1]] if len(mine) else mine
        ends = mine[np.r_[np.diff(mine) > 1, True]] + 1 if len(mine) else mine
        n_runs[owner] = len(starts)
        owned_runs[owner, : len(starts), 0] = starts
        owned_runs[owner, : len(starts), 1] = ends
    return feature_owner, owned_runs, n_runs


def new_pool(
    histograms: np.ndarray,
    capacity: int,
    counts: np.ndarray | None = None,
    owners: tuple | None = None,
    sparse: SparseRows | None = None,
) -> Pool:
    """Bookkeeping of ``histograms`` (``histogram_pool``) for a tree of at most ``capacity`` nodes, every slot free.

    ``counts`` (``BinCounts.of_rows``: shape (n_features, max_bins) or (0, max_bins), the
    histograms' dtype) are the bin counts of every row of the ``X_binned`` the tree is
    grown on; None: not known, every node counts its rows. ``owners``: ``feature_owners``
    of the tree's threads; None: one thread filling every feature. ``sparse``:
    ``sparse_rows`` for those owners; None: every fill adds every bin.
    """
    scratch = len(histograms) - 1
    n_features, max_bins = histograms.shape[1:3]
    if counts is None:
        counts = np.zeros((0, max_bins), dtype=histograms.dtype)
    if counts.shape not in ((0, max_bins), (n_features, max_bins)) or counts.dtype != histograms.dtype:
        raise ValueError(
            f"counts of shape {counts.shape} and dtype {counts.dtype} do not fit histograms of shape {histograms.shape} "
            f"and dtype {histograms.dtype}: expected (0 or {n_features}, {max_bins}) of the same dtype."
        )
    if owners is None:
        owners = feature_owners(n_features, 1)
    if sparse is None:
        sparse = no_sparse_rows()
    return Pool(
        histograms, np.full(capacity, -1, dtype=np.int64), np.arange(scratch, dtype=np.int64), np.array([scratch]),
        scratch, np.empty((2, n_features)), np.empty((2, n_features, 4), dtype=np.int64), counts, *owners, sparse,
        np.empty((capacity, 3)), np.zeros(capacity, dtype=np.bool_),
        np.zeros((len(histograms), n_features, (max_bins + 63) // 64), dtype=np.uint64),
        np.zeros(len(histograms), dtype=np.bool_), np.full(2, -1, dtype=np.int64), np.empty((len(owners[2]), 2, 2)),
        np.empty((len(owners[2]), N_PREFIX_ROWS, max_bins)),
    )  # fmt: skip


def no_sparse_rows() -> SparseRows:
    """A ``SparseRows`` without rows: every fill adds every bin."""
    return SparseRows(np.zeros((0, 2), dtype=np.uint32), np.zeros(0, dtype=np.uint16), np.zeros(0, dtype=np.int64))


def sparse_rows(
    X_binned: np.ndarray, counts: np.ndarray, feature_owner: np.ndarray, n_owners: int, max_bins: int
) -> SparseRows:
    """The ``SparseRows`` of ``X_binned`` for ``n_owners`` threads owning ``feature_owner`` (``feature_owners``), or
    ``no_sparse_rows()`` where they would not pay: more than ``SPARSE_FILL_DENSITY`` of the
    filled features' bins outside their most frequent one, more bins in a slot than a
    uint16 entry indexes, or more entries than a uint32 offset counts.

    Parameters
    ----------
    X_binned : uint8/uint16/uint32 array of shape (n_rows, n_features), C order
    counts : array of shape (n_features, max_bins)
        The bin counts of every row (``BinCounts.every_row``).
    feature_owner : int64 array of shape (n_features,)
        -1 for a feature no thread fills: its rows all share one bin, so it has no entry.
    n_owners : int
        The fill's threads, each of which reads its entries of every row: more than own a
        feature when there are fewer features than threads.
    max_bins : int
        The histograms' bin axis.
    """
    n_rows, n_features = X_binned.shape
    filled = feature_owner >= 0
    frequent_bin = np.argmax(counts, axis=1).astype(np.int64)
    n_values = n_rows * int(filled.sum())
    n_entries = n_values - int(counts[filled, frequent_bin[filled]].sum())
    if (
        n_features * max_bins > np.iinfo(np.uint16).max + 1
        or n_entries > SPARSE_FILL_DENSITY * n_values
        or n_entries > np.iinfo(np.uint32).max
    ):
        return no_sparse_rows()
    row_entries = np.empty((n_rows, n_owners + 1), dtype=np.uint32)
    entries = np.empty(n_entries, dtype=np.uint16)
    _list_sparse_rows(X_binned, frequent_bin, feature_owner, max_bins, row_entries, entries)
    return SparseRows(row_entries, entries, frequent_bin)


@jit(refcounted=False)
def _list_sparse_rows(X_binned, frequent_bin, feature_owner, max_bins, row_entries, entries):
    """Fill ``row_entries`` and ``entries`` of ``SparseRows`` (shapes there): row by row, owner by
    owner, the row's bins other than their feature's ``frequent_bin``."""
    n_owners = row_entries.shape[1] - 1
    n_entries = 0
    for row in range(X_binned.shape[0]):
        for owner in range(n_owners):
            row_entries[row, owner] = n_entries
            for feature in range(X_binned.shape[1]):
                b = X_binned[row, feature]
                if feature_owner[feature] == owner and b != frequent_bin[feature]:
                    entries[n_entries] = feature * max_bins + b
                    n_entries += 1
        row_entries[row, n_owners] = n_entries


@jit(refcounted=False)
def bin_counts(X_binned, counts):
    """``counts[feature, b]``: the rows of ``X_binned`` in bin ``b`` of ``feature``.

    Parameters
    ----------
    X_binned : uint8/uint16/uint32 array of shape (n_rows, n_features), C order
    counts : float64 or int32 array of shape (n_features, max_bins)
        Overwritten; the dtype of the pool whose count column it stands for.
    """
    counts[:] = 0
    for row in range(X_binned.shape[0]):
        for feature in range(X_binned.shape[1]):
            counts[feature, X_binned[row, feature]] += 1


class BinCounts:
    """The bin counts of every row of one ``X_binned`` (``bin_counts``), counted when a tree
    first holds every row and kept for the next: boosting's trees without ``subsample`` or
    zero weights all do, and their roots copy the counts (``_fill_features``).

    Parameters
    ----------
    X_binned : uint8/uint16/uint32 array of shape (n_rows, n_features), C order
    max_bins : int
        The bin axis of the histograms the counts go to.
    dtype : dtype
        The histograms' (float64, or int32 for quantized gradients).
    """

    def __init__(self, X_binned: np.ndarray, max_bins: int, dtype: np.dtype) -> None:
        self.X_binned = X_binned
        self.dtype = np.dtype(dtype)
        self.no_counts = np.zeros((0, max_bins), dtype=self.dtype)
        self._counts = None
        self._owners = {}
        self._sparse = {}

    def fits(self, X_binned: np.ndarray, histograms: np.ndarray) -> bool:
        """Whether these are the counts of ``X_binned`` for ``histograms`` (the pool's bin axis and dtype)."""
        return X_binned is self.X_binned and histograms.shape[2] == self.no_counts.shape[1] and histograms.dtype == self.dtype

    def every_row(self) -> np.ndarray:
        """The counts of every row, shape (n_features, max_bins)."""
        if self._counts is None:
            self._counts = np.empty((self.X_binned.shape[1], self.no_counts.shape[1]), dtype=self.dtype)
            bin_counts(self.X_binned, self._counts)
        return self._counts

    def of_rows(self, n_tree_rows: int) -> np.ndarray:
        """For a tree of ``n_tree_rows`` distinct rows of ``X_binned``: the counts, shape
        (n_features, max_bins), when they are every row; otherwise shape (0, max_bins)."""
        if n_tree_rows != self.X_binned.shape[0]:
            return self.no_counts
        return self.every_row()

    def owners(self, n_threads: int | None, missing_bins: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``feature_owners`` of the features of ``X_binned`` for ``n_threads`` (None: one), with
        ``missing_bins`` (int32, (n_features,)) as ``_builder.Binned`` has them; dealt once per
        thread count."""
        n_owners = max(n_threads or 1, 1)
        if n_owners not in self._owners:
            self._owners[n_owners] = feature_owners(self.X_binned.shape[1], n_owners, self.every_row(), missing_bins)
        return self._owners[n_owners]

    def sparse(self, n_threads: int | None, missing_bins: np.ndarray) -> SparseRows:
        """``sparse_rows`` of ``X_binned`` for the ``owners`` of ``n_threads``; built once per
        thread count, and only for float64 histograms: an int32 bin truncates each
        addition, so its most frequent bin restored from the totals could differ from the
        one summed row by row."""
        n_owners = max(n_threads or 1, 1)
        if n_owners not in self._sparse:
            feature_owner = self.owners(n_threads, missing_bins)[0]
            self._sparse[n_owners] = (
                sparse_rows(self.X_binned, self.every_row(), feature_owner, n_owners, self.no_counts.shape[1])
                if self.dtype == np.float64
                else no_sparse_rows()
            )
        return self._sparse[n_owners]

    def pool(
        self, histograms: np.ndarray, capacity: int, n_tree_rows: int, n_threads: int | None, missing_bins: np.ndarray
    ) -> Pool:
        """``new_pool`` of ``histograms`` for a tree of ``n_tree_rows`` distinct rows of ``X_binned``
        grown on ``n_threads``: its counts, owners and sparse rows."""
        return new_pool(
            histograms, capacity, self.of_rows(n_tree_rows), self.owners(n_threads, missing_bins),
            self.sparse(n_threads, missing_bins),
        )  # fmt: skip


@jit(inline="always")
def _position_moments(criterion, row_targets, row_weights, samples, by_row, position):
    """The row at ``position`` of a node (``samples[position]``), its weight and its weighted
    first and second moments (``_criteria.row_moments``), its targets read at its row
    when ``by_row`` (``_rows.SortedRows.targets_by_row``), at ``position`` otherwise."""
    row = samples[position]
    weight = row_weights[position]
    at = row if by_row else position
    weighted_first, weighted_second = _criteria.row_moments(
        criterion, weight, row_targets[at, 0], row_targets[at, row_targets.shape[1] - 1]
    )
    return row, weight, weighted_first, weighted_second


@jit(inline="always")
def _add_to_bin(histogram, bin_index, weighted_first, weighted_second, weight, count_rows, weighted):
    """Add one row to the bin ``histogram[bin_index]`` (every index but the column's): its two
    moments as one pair (``add_pair``), its count when ``count_rows``, its weight when
    ``weighted``. Both flags are constants at each call site."""
    add_pair(histogram, bin_index + (HIST_FIRST,), weighted_first, weighted_second)
    if count_rows:
        histogram[bin_index + (HIST_COUNT,)] += 1.0
    if weighted:
        histogram[bin_index + (HIST_WEIGHT,)] += weight


@jit(inline="always")
def _position_totals(criterion, row_targets, row_weights, samples, by_row, start, end):
    """The totals of the rows at positions ``start:end``: their weighted first and second
    moments and their weights, each summed in position order, as ``_builder._summarise``
    sums them (the same additions in the same order: the same bits)."""
    first_total = 0.0
    second_total = 0.0
    weight_total = 0.0
    for position in range(start, end):
        _, weight, weighted_first, weighted_second = _position_moments(
            criterion, row_targets, row_weights, samples, by_row, position
        )
        first_total += weighted_first
        second_total += weighted_second
        weight_total += weight
    return first_total, second_total, weight_total


@jit(inline="always")
def _fill_feature_runs(X_binned, criterion, row_targets, row_weights, samples, by_row, start, end, histogram, runs, count_rows):
    """Add the node's rows to the histograms of the features of ``runs`` (int64, (n_runs, 2):
    increasing ranges ``first:last``), their targets at their rows when ``by_row``
    (``_rows.SortedRows.targets_by_row``); their count column too when ``count_rows``. It is a
    constant at each call site, so that each inlined copy compiles its own loop: tested
    per value at run time, the children's fills took 10-15% longer. Runs, not a list of
    features: the loop over a range is the fill's tightest, a feature read from a list
    cost a quarter more per value (``benchmarks/RESULTS.md``, "Boosting speed: where an
    iteration goes"). Returns the node's totals as ``_position_totals``."""
    weighted = histogram.shape[2] > HIST_WEIGHT
    n_runs = len(runs)
    first_total = 0.0
    second_total = 0.0
    weight_total = 0.0
    for position in range(start, end):
        if position + GATHER_DISTANCE < end and n_runs > 0:  # every line of the row's range ahead
            ahead = samples[position + GATHER_DISTANCE]
            for column in range(runs[0, 0], runs[n_runs - 1, 1], 64 // X_binned.itemsize):
                prefetch(X_binned, (ahead, column))
            prefetch(X_binned, (ahead, runs[n_runs - 1, 1] - 1))
        row, weight, weighted_first, weighted_second = _position_moments(
            criterion, row_targets, row_weights, samples, by_row, position
        )
        first_total += weighted_first
        second_total += weighted_second
        weight_total += weight
        for run in range(n_runs):
            # Unsigned: an index starting at a value read from ``runs`` would be tested for
            # a negative value at every use, a quarter of the fill's time.
            for feature in range(np.uint64(runs[run, 0]), np.uint64(runs[run, 1])):
                _add_to_bin(
                    histogram, (feature, X_binned[row, feature]), weighted_first, weighted_second, weight, count_rows,
                    weighted,
                )  # fmt: skip
    return first_total, second_total, weight_total


@jit(inline="always")
def _fill_sparse_rows(sparse, owner, criterion, row_targets, row_weights, samples, by_row, start, end, histogram, count_rows):
    """``_fill_feature_runs`` of thread ``owner``'s entries of ``sparse`` (``SparseRows``): the
    node's rows added to every bin but their features' most frequent ones, which
    ``_restore_frequent_bins`` completes. Returns the node's totals as ``_position_totals``."""
    weighted = histogram.shape[2] > HIST_WEIGHT
    bins = histogram.reshape((-1, histogram.shape[2]))
    row_entries = sparse.row_entries
    entries = sparse.entries
    first_total = 0.0
    second_total = 0.0
    weight_total = 0.0
    for position in range(start, end):
        if position + GATHER_DISTANCE < end:
            prefetch(entries, (row_entries[samples[position + GATHER_DISTANCE], owner],))
        row, weight, weighted_first, weighted_second = _position_moments(
            criterion, row_targets, row_weights, samples, by_row, position
        )
        first_total += weighted_first
        second_total += weighted_second
        weight_total += weight
        for entry in range(np.uint64(row_entries[row, owner]), np.uint64(row_entries[row, owner + 1])):
            _add_to_bin(bins, (entries[entry],), weighted_first, weighted_second, weight, count_rows, weighted)
    return first_total, second_total, weight_total


@jit(inline="always")
def _column_sum(histogram, feature, column):
    """The sum of ``histogram[feature, :, column]`` in four interleaved partial sums: one sum's
    additions wait for each other, four fill the adder's pipeline. The bins are read at
    unsigned indices (``nowrap``): at signed ones numba tested every read for a negative
    index, six instructions a bin where the addition is one, and the restore took about
    15% of the fill's samples (``benchmarks/RESULTS.md``, "One thread against LightGBM's
    profile at 2043182")."""
    feature_histogram = histogram[nowrap(feature)]
    n_bins = feature_histogram.shape[0]
    sum0 = 0.0
    sum1 = 0.0
    sum2 = 0.0
    sum3 = 0.0
    for b in range(0, n_bins - 3, 4):
        sum0 += feature_histogram[nowrap(b), column]
        sum1 += feature_histogram[nowrap(b + 1), column]
        sum2 += feature_histogram[nowrap(b + 2), column]
        sum3 += feature_histogram[nowrap(b + 3), column]
    for b in range(n_bins - n_bins % 4, n_bins):
        sum0 += feature_histogram[nowrap(b), column]
    return (sum0 + sum1) + (sum2 + sum3)


@jit(inline="always")
def _restore_frequent_bins(histogram, runs, frequent_bin, totals, n_rows, count_rows):
    """Each feature of ``runs``'s most frequent bin after ``_fill_sparse_rows``: the node's
    ``totals`` (its first and second moments and weight) less the feature's other bins
    (LightGBM's ``FixHistogram``); its count too when ``count_rows``, exact as counts are
    integers."""
    first_total, second_total, weight_total = totals
    weighted = histogram.shape[2] > HIST_WEIGHT
    for run in range(len(runs)):
        for feature in range(runs[run, 0], runs[run, 1]):
            frequent = frequent_bin[feature]
            histogram[feature, frequent, HIST_FIRST] += first_total - _column_sum(histogram, feature, HIST_FIRST)
            histogram[feature, frequent, HIST_SECOND] += second_total - _column_sum(histogram, feature, HIST_SECOND)
            if count_rows:
                histogram[feature, frequent, HIST_COUNT] += n_rows - _column_sum(histogram, feature, HIST_COUNT)
            if weighted:
                histogram[feature, frequent, HIST_WEIGHT] += weight_total - _column_sum(histogram, feature, HIST_WEIGHT)


@jit(inline="always")
def _clear_runs(histogram, runs):
    """Zero the histograms of the features of ``runs``."""
    for run in range(len(runs)):
        histogram[runs[run, 0] : runs[run, 1]] = 0.0


@jit(inline="always")
def _fill_features(X_binned, criterion, row_targets, row_weights, samples, by_row, start, end, histogram, runs, counts, sparse, owner):
    """Add the node's rows to the histograms of the features of ``runs``, all zero:
    ``_fill_feature_runs``, or, with ``sparse`` rows (``SparseRows``) and a node of enough
    rows, ``_fill_sparse_rows`` as thread ``owner`` and ``_restore_frequent_bins``; their
    count column a node holding every row of ``X_binned`` copies from ``counts``
    (``Pool.bin_counts``, when known) instead of adding one per row and feature: two
    read-modify-writes per value in place of three (``benchmarks/RESULTS.md``, "Boosting
    speed: where an iteration goes"). Counts are integers, so the copy is the sum the rows
    would add. Returns the node's totals (``_position_totals``)."""
    count_rows = counts.shape[0] == 0 or end - start != X_binned.shape[0]
    if sparse.row_entries.shape[0] > 0 and end - start >= SPARSE_FILL_MIN_ROWS_PER_BIN * histogram.shape[1]:
        if count_rows:
            totals = _fill_sparse_rows(
                sparse, owner, criterion, row_targets, row_weights, samples, by_row, start, end, histogram, True
            )
        else:
            totals = _fill_sparse_rows(
                sparse, owner, criterion, row_targets, row_weights, samples, by_row, start, end, histogram, False
            )
        _restore_frequent_bins(histogram, runs, sparse.frequent_bin, totals, end - start, count_rows)
    elif count_rows:
        totals = _fill_feature_runs(
            X_binned, criterion, row_targets, row_weights, samples, by_row, start, end, histogram, runs, True
        )
    else:
        totals = _fill_feature_runs(
            X_binned, criterion, row_targets, row_weights, samples, by_row, start, end, histogram, runs, False
        )
    if not count_rows:
        for run in range(len(runs)):
            for feature in range(runs[run, 0], runs[run, 1]):
                for b in range(histogram.shape[1]):
                    histogram[feature, b, HIST_COUNT] = counts[feature, b]
    return totals


@jit(refcounted=False, callable_from_python=False)
def fill_histograms(
    X_binned, criterion, row_targets, row_weights, samples, by_row, start, end, histograms, slot, counts, runs, sparse,
):  # fmt: skip
    """Per-bin sums of the features of ``runs`` for the node ``samples[start:end]``, in one pass over its rows.

    Parameters
    ----------
    X_binned : uint8/uint16/uint32 array of shape (n_rows, n_features), C order
    criterion : int
        A moment criterion (``_criteria.row_moments``).
    row_targets : float64 array of shape (n_tree_rows, n_target_columns)
        In the order of ``samples``, or of the rows when ``by_row``: y (variance) or g and
        h (newton).
    row_weights : float64 array of shape (n_tree_rows,)
    samples : int64 array of shape (n_tree_rows,)
    by_row : bool
        ``_rows.SortedRows.targets_by_row``.
    histograms : float64 or int32 array of shape (n_slots, n_features, max_bins, n_hist_columns)
        The features' ``histograms[slot]`` are overwritten. An int32 pool takes integer-valued
        moments (quantized gradients), which it sums exactly.
    counts : array of shape (n_features, max_bins) or (0, max_bins), the histograms' dtype
        ``Pool.bin_counts``: copied into the count column of a node holding every row
        of ``X_binned``.
    runs : int64 array of shape (n_runs, 2)
        The features to fill, as increasing ranges ``first:last`` (``Pool.owned_runs``;
        every feature on a cluster's worker).
    sparse : SparseRows
        ``Pool.sparse`` of one owner, whose entries are those of ``runs``.

    Returns
    -------
    first_total, second_total, weight_total : float
        The node's totals (``_position_totals``).
    """
    _clear_runs(histograms[slot], runs)
    return _fill_features(
        X_binned, criterion, row_targets, row_weights, samples, by_row, start, end, histograms[slot], runs, counts, sparse, 0
    )  # fmt: skip


@jit(inline="always")
def marks_bins(n_rows, max_bins):
    """Whether a fill of ``n_rows`` rows marks the bins they fall in (``Pool.slot_bins``): the
    nodes filled densely (``SPARSE_FILL_MIN_ROWS_PER_BIN``), whose rows touch at most half
    of each feature's bins, so that clearing, subtracting and sweeping every bin costs more
    than their own additions (``benchmarks/RESULTS.md``, "Two threads: a small node's
    bins"). Only those: a sparse fill's restored most frequent bin may keep a rounding
    remainder where no row fell, which a mark would miss."""
    return n_rows < SPARSE_FILL_MIN_ROWS_PER_BIN * max_bins


@jit(inline="always")
def _clear_marked(histogram, bins, runs):
    """Zero the bins of the features of ``runs`` marked in ``bins`` (uint64, (n_features,
    n_words): ``Pool.slot_bins`` of the slot ``histogram``), and their marks."""
    for run in range(len(runs)):
        for feature in range(runs[run, 0], runs[run, 1]):
            for word_index in range(bins.shape[1]):
                word = bins[feature, word_index]
                bins[feature, word_index] = np.uint64(0)
                while word != np.uint64(0):
                    word, bit = pop_lowest_bit(word)
                    histogram[feature, nowrap(word_index * 64 + bit)] = 0.0


@jit(inline="always")
def _mark_bins(X_binned, samples, start, end, runs, bins):
    """Set in ``bins`` (uint64, (n_features, n_words)) the bin of each feature of ``runs``
    that each row at positions ``start:end`` falls in."""
    for position in range(start, end):
        row = samples[position]
        for run in range(len(runs)):
            for feature in range(np.uint64(runs[run, 0]), np.uint64(runs[run, 1])):
                b = np.uint64(X_binned[row, feature])
                bins[feature, b >> np.uint64(6)] |= np.uint64(1) << (b & np.uint64(63))


@jit(inline="always")
def _subtract_marked(histograms, parent_slot, child_slot, runs, bins):
    """``_subtract_runs`` of the bins marked in ``bins`` (the child's ``Pool.slot_bins``): the
    child's other bins are zero, and ``x - 0`` is ``x``, so the parent's slot holds what
    the whole subtraction leaves, bit for bit."""
    n_columns = histograms.shape[3]
    for run in range(len(runs)):
        for feature in range(runs[run, 0], runs[run, 1]):
            parent = histograms[nowrap(parent_slot), nowrap(feature)]
            child = histograms[nowrap(child_slot), nowrap(feature)]
            for word_index in range(bins.shape[1]):
                word = bins[feature, word_index]
                while word != np.uint64(0):
                    word, bit = pop_lowest_bit(word)
                    b = nowrap(word_index * 64 + bit)
                    for column in range(n_columns):
                        parent[b, nowrap(column)] -= child[b, nowrap(column)]


@jit(refcounted=False, callable_from_python=False)
def _fill_slot(
    X_binned, criterion, row_targets, row_weights, samples, by_row, start, end, histograms, slot, parent_slot, counts,
    runs, sparse, owner, slot_bins, was_marked, marks,
):  # fmt: skip
    """Clear the features of ``runs`` in ``slot`` (the bins marked there if ``was_marked``,
    all otherwise), ``_fill_features`` them, mark the bins of their rows if ``marks``
    (``marks_bins``), and, when ``parent_slot >= 0``, subtract them from the parent's
    (the marked bins only if ``marks``). Returns the node's totals (``_position_totals``).

    A kernel of its own, called by ``_pooled_fill.fill_node`` and by each thread of
    ``_pooled_fill.fill_histograms_parallel``: inlined in that region, its loops went through numba's
    parallel pass at every cold compile, a sizeable share of LambdaMART's, and the fit
    was no faster (``benchmarks/RESULTS.md``, "Two threads: a small node's bins")."""
    histogram = histograms[slot]
    bins = slot_bins[slot]
    if was_marked:
        _clear_marked(histogram, bins, runs)
    else:
        _clear_runs(histogram, runs)
        if marks:
            for run in range(len(runs)):
                bins[runs[run, 0] : runs[run, 1]] = np.uint64(0)
    totals = _fill_features(
        X_binned, criterion, row_targets, row_weights, samples, by_row, start, end, histogram, runs, counts, sparse, owner
    )  # fmt: skip
    if marks:
        _mark_bins(X_binned, samples, start, end, runs, bins)
        if parent_slot >= 0:
            _subtract_marked(histograms, parent_slot, slot, runs, bins)
    elif parent_slot >= 0:
        _subtract_runs(histograms, parent_slot, slot, runs)
    return totals


@jit(inline="always")
def _subtract_flat(parent, child):
    """``parent -= child`` over C-contiguous blocks of equal shape, as one flat loop."""
    parent = parent.reshape(-1)
    child = child.reshape(-1)
    for i in range(len(parent)):
        parent[i] -= child[i]


@jit(inline="always")
def _subtract_runs(histograms, parent_slot, child_slot, runs):
    """``subtract_histograms`` for the features of ``runs`` (int64, (n_runs, 2)): one flat loop
    per run of consecutive features, none over a feature no thread fills."""
    for run in range(len(runs)):
        first, last = runs[run, 0], runs[run, 1]
        _subtract_flat(histograms[parent_slot, first:last], histograms[child_slot, first:last])


@jit(refcounted=False, callable_from_python=False)
def subtract_histograms(histograms, parent_slot, child_slot):
    """``histograms[parent_slot] -= histograms[child_slot]``: the parent's slot becomes the sibling's.

    Counts stay exact (integers below 2^53); sums carry one extra rounding. One flat
    loop over the slot's contiguous values, which numba vectorises, unlike a nested
    loop over (feature, bin, column) whose innermost runs 3 or 4 long
    (``benchmarks/RESULTS.md``, "Engine design measurements").
    """
    _subtract_flat(histograms[parent_slot], histograms[child_slot])


@jit(inline="always")
def take_slot(pool):
    """A free slot, or the scratch slot (filled and released within one node) if none is left."""
    n_free = pool.n_free[0]
    if n_free == 0:
        return pool.scratch
    pool.n_free[0] = n_free - 1
    return pool.free_slots[n_free - 1]


@jit(inline="always")
def free_slot(pool, slot):
    """Return ``slot`` to the free list."""
    pool.free_slots[pool.n_free[0]] = slot
    pool.n_free[0] += 1


@jit(inline="always")
def release_slot(pool, node):
    """Return the node's slot to the free list (the scratch slot needs no return)."""
    slot = pool.node_slot[node]
    pool.node_slot[node] = -1
    if slot >= 0 and slot != pool.scratch:
        free_slot(pool, slot)


@jit(inline="always")
def smaller_child(pool, node, left_child, feature, threshold_bin, missing_bin, missing_left, left_bins):
    """The child of ``node``'s split whose histograms ``_pooled_fill.node_histograms`` will sum from its
    rows (the one with fewer rows, the left on a tie), as the counts of ``node``'s pooled
    histograms predict them, or -1 without them (no slot, or the scratch slot, whose sums
    the children's fill overwrites). A remote tree's split asks for that child's
    histograms in the same round (``_remote.partition``); the counts are exact, and the
    exchange answers only the fill the builder then asks for, so a wrong guess would only
    cost a round."""
    slot = pool.node_slot[node]
    if slot < 0 or slot == pool.scratch:
        return np.int64(-1)
    counts = pool.histograms[slot, feature, :, HIST_COUNT]
    n_left = 0.0
    n_rows = 0.0
    for b in range(len(counts)):
        n_rows += counts[b]
        if _rows.goes_left(b, threshold_bin, missing_bin, missing_left, left_bins):
            n_left += counts[b]
    return np.int64(left_child if n_left <= n_rows - n_left else left_child + 1)


@jit(inline="always")
def release_searched(pool, node, slot, found):
    """After a node's search: its slot waits for its children only if it splits and is not scratch."""
    if slot >= 0 and (not found or slot == pool.scratch):
        release_slot(pool, node)


@jit(inline="always")
def scanned_row(pool, node):
    """The row of ``Pool.scan_gains`` and ``Pool.scan_cuts`` holding ``node``'s scans, taken
    from ``Pool.scanned`` (its search reads them once), -1 for none."""
    for row in range(2):
        if pool.scanned[row] == node:
            pool.scanned[row] = -1
            return np.int64(row)
    return np.int64(-1)
