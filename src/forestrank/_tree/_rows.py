"""A tree's rows in node order: every node owns a contiguous range, and splitting a node partitions its range.

The builder keeps the tree's row indices (``samples``) with their targets and
weights copied into the same order, so the scans read them sequentially instead of
gathering them by row id, and every partition moves the three together: on one
thread (``partition``), or, for large nodes of a tree with several, on numba's
threads (``partition_parallel``), with the same result. A small tree of every row
with equal weights (``targets_by_row``) leaves its targets in row order instead, read
through ``samples`` (``target_index``), and its partitions move the row indices alone.
"""

from collections import namedtuple

import numba
import numpy as np

from .._numba.jit import jit
from .._numba.prefetch import GATHER_DISTANCE, prefetch

# Nodes of at least this many rows per thread are partitioned on the tree's threads: the
# parallel partition copies every row twice and starts the threads twice, which pays once
# each thread has a few thousand rows to move. Per thread, so that two threads take the
# nodes of mid-sized collections (whose partitions otherwise run while the other thread
# waits) and sixteen only nodes of 32,768 rows or more, as before
# (``benchmarks/RESULTS.md``, "Boosting speed: where an iteration goes").
PARALLEL_PARTITION_ROWS_PER_THREAD = 1 << 11

# A boosting tree's targets of at most this many bytes stay in row order (``targets_by_row``):
# read through ``samples`` they stay in a core's cache, and a partition that moves the row
# indices alone writes a third of the bytes, which the other threads' fills then read
# from the core that moved them. Larger ones outgrow the cache and are gathered slower
# than they are copied (``benchmarks/RESULTS.md``, "Two threads, where each one waits").
TARGETS_BY_ROW_BYTES = 1 << 19

SortedRows = namedtuple(
    "SortedRows",
    [
        "samples", "targets", "weights", "spill_samples", "spill_targets", "spill_weights", "chunk_counts", "integer_weights",
        "uniform_weights", "targets_by_row",
    ],
)  # fmt: skip
SortedRows.__doc__ = """The rows of one tree in node order.

samples : int64 array of shape (n_tree_rows,)
    Row indices; node ``i`` owns ``samples[node_start[i]:node_end[i]]``.
targets : float64 array of shape (n_tree_rows, n_target_columns)
    The criterion's targets of those rows (class index, y, or gradient and hessian).
weights : float64 array of shape (n_tree_rows,)
    Their weights in this tree.
spill_samples, spill_targets, spill_weights :
    Scratch of ``partition``, shaped as the three above.
chunk_counts : int64 array of shape (numba's most threads + 1, 2)
    Scratch of ``partition_parallel``: one row per chunk.
integer_weights : bool
    Every weight is an integer (``_criteria.x_log_x`` looks its values up).
uniform_weights : bool
    Every weight is the same: the partitions leave ``weights`` as they are, since any
    position holds the one value its row has.
targets_by_row : bool
    ``targets`` stay where the tree started them, row ``samples[position]``'s at that
    row (a tree of every row, in row order, with uniform weights: ``by_row``), and the
    partitions leave them there; readers index them by ``target_index``.
"""


def row_buffers(n_rows: int, n_target_columns: int) -> SortedRows:
    """Uninitialised ``SortedRows`` arrays for trees of up to ``n_rows`` rows."""
    return SortedRows(
        np.empty(n_rows, dtype=np.int64), np.empty((n_rows, n_target_columns)), np.empty(n_rows),
        np.empty(n_rows, dtype=np.int64), np.empty((n_rows, n_target_columns)), np.empty(n_rows),
        np.empty((numba.config.NUMBA_NUM_THREADS + 1, 2), dtype=np.int64), False, False, False,
    )  # fmt: skip


def sorted_rows(samples: np.ndarray, targets: np.ndarray, weights: np.ndarray, buffers: SortedRows | None = None) -> SortedRows:
    """The tree's rows ``samples`` (int64, increasing) with their targets (float64,
    (n_rows, n_target_columns)) and weights (float64, (n_rows,)) gathered in that
    order, in the first ``len(samples)`` entries of ``buffers`` (``row_buffers``;
    new arrays by default), which the builder then reorders."""
    n_tree_rows = len(samples)
    if buffers is None:
        buffers = row_buffers(n_tree_rows, targets.shape[1])
    tree_samples = buffers.samples[:n_tree_rows]
    tree_samples[:] = samples
    row_targets = np.take(targets, samples, axis=0, out=buffers.targets[:n_tree_rows])
    row_weights = np.take(weights, samples, out=buffers.weights[:n_tree_rows])
    return SortedRows(
        tree_samples, row_targets, row_weights, buffers.spill_samples[:n_tree_rows],
        buffers.spill_targets[:n_tree_rows], buffers.spill_weights[:n_tree_rows], buffers.chunk_counts,
        bool(np.all(row_weights == np.floor(row_weights))), bool(np.all(row_weights == row_weights[:1])), False,
    )  # fmt: skip


def by_row(rows: SortedRows) -> SortedRows:
    """``rows`` with ``targets_by_row`` set where it applies: positions that are rows
    (``samples`` is ``0..n_tree_rows-1``, as boosting starts each tree), equal weights (which
    no partition moves) and targets of at most ``TARGETS_BY_ROW_BYTES``."""
    applies = (
        rows.uniform_weights
        and rows.targets.nbytes <= TARGETS_BY_ROW_BYTES
        and bool(np.array_equal(rows.samples, np.arange(len(rows.samples))))
    )
    return rows._replace(targets_by_row=applies)


@jit(inline="always")
def target_index(rows, position):
    """The row of ``rows.targets`` that holds the targets of the row at ``position``
    (``SortedRows.targets_by_row``)."""
    return rows.samples[position] if rows.targets_by_row else position


@jit(inline="always")
def total_weight(rows):
    """Sum of the tree's weights, added in row order (the scale of every gain depends on its last bit)."""
    total = 0.0
    for i in range(len(rows.weights)):
        total += rows.weights[i]
    return total


@jit(inline="always")
def goes_left(row_bin, threshold_bin, missing_bin, missing_left, left_bins):
    """Whether a row in ``row_bin`` goes left of the split "bin <= threshold_bin", its missing
    rows (``missing_bin``, the feature's last bin, or -1) left when ``missing_left``; or, for a
    categorical split, whether ``row_bin`` is one of ``left_bins``.

    ``left_bins`` is None in a tree without categorical features (numba compiles the
    numeric rule alone), else a uint64 bitmap of the bins going left (bin ``b`` is bit
    ``b % 64`` of word ``b // 64``), empty for a numeric split.
    """
    if left_bins is not None:
        if len(left_bins) > 0:
            return (left_bins[row_bin >> 6] >> np.uint64(row_bin & 63)) & np.uint64(1) != np.uint64(0)
    return row_bin <= threshold_bin or (row_bin == missing_bin and missing_left)


@jit(inline="always")
def _move_row(samples, targets, weights, read, to_samples, to_targets, to_weights, to, uniform_weights, targets_by_row):
    """Copy the row at position ``read`` of ``samples``, ``targets`` and ``weights`` to position
    ``to`` of ``to_*``; its weight only when the weights differ (``SortedRows.uniform_weights``),
    its targets only when they follow the positions (``SortedRows.targets_by_row``).

    Two target columns (every boosting criterion's gradient and hessian) are copied as
    two values: a loop over a column count known only at run time made the whole
    partition about 1.5x slower (``benchmarks/RESULTS.md``, "Boosting speed: where an
    iteration goes").
    """
    to_samples[to] = samples[read]
    if not uniform_weights:
        to_weights[to] = weights[read]
    if targets_by_row:
        return
    if targets.shape[1] == 2:
        to_targets[to, 0] = targets[read, 0]
        to_targets[to, 1] = targets[read, 1]
    else:
        for column in range(targets.shape[1]):
            to_targets[to, column] = targets[read, column]


@jit(inline="always")
def _read_side(X_binned, samples, read, end, feature, threshold_bin, missing_bin, missing_left, left_bins):
    """(row, goes left, is missing) of position ``read`` of a node partitioned up to ``end``,
    prefetching the bin of the row ``GATHER_DISTANCE`` positions ahead."""
    if read + GATHER_DISTANCE < end:
        prefetch(X_binned, (samples[read + GATHER_DISTANCE], feature))
    sample = samples[read]
    b = X_binned[sample, feature]
    return sample, goes_left(b, threshold_bin, missing_bin, missing_left, left_bins), b == missing_bin


@jit(refcounted=False, callable_from_python=False)
def partition(X_binned, rows, start, end, feature, threshold_bin, missing_bin, missing_left, left_bins):
    """Stable partition of positions ``start:end``: rows with bin <= ``threshold_bin`` first,
    and those in ``missing_bin`` (-1: none) with them when ``missing_left``; or the rows
    whose bin is one of ``left_bins`` (``goes_left``).

    ``samples``, ``targets`` and ``weights`` move together. Stability keeps every
    node's rows in increasing row order, so the per-feature gathers of ``X_binned``
    walk each column forwards (shared cache lines, hardware prefetch); measured
    faster than the in-place two-pointer swap despite the extra copy::

        before   | a1 b1 a2 a3 b2 |        a = goes left, b = goes right
        scan     | a1 a2 a3 .. .. |  spill: b1 b2
        after    | a1 a2 a3 b1 b2 |

    Left rows are compacted in place (the write index never passes the read index);
    right rows wait in the ``spill_*`` scratch and are copied back behind them. Every
    row is copied to both places and only the index of its side advances: no branch
    on the side, which a split's rows take in no predictable order (the other copy
    lands on a position already read, or beyond the spilled rows, and is overwritten).
    Returns the first right position and the number of rows in ``missing_bin``.
    """
    samples = rows.samples
    targets = rows.targets
    weights = rows.weights
    spill_samples = rows.spill_samples
    spill_targets = rows.spill_targets
    spill_weights = rows.spill_weights
    uniform = rows.uniform_weights
    by_row = rows.targets_by_row
    write = start
    n_spilled = 0
    n_missing = 0
    two_columns = targets.shape[1] == 2
    for read in range(start, end):
        sample, left, missing = _read_side(
            X_binned, samples, read, end, feature, threshold_bin, missing_bin, missing_left, left_bins
        )
        n_missing += missing
        # Each value read once and written to both places: two ``_move_row`` calls would read
        # it again after the first write, which may land on ``read`` itself.
        samples[write] = sample
        spill_samples[n_spilled] = sample
        if not uniform:
            weight = weights[read]
            weights[write] = weight
            spill_weights[n_spilled] = weight
        if two_columns and not by_row:
            first = targets[read, 0]
            second = targets[read, 1]
            targets[write, 0] = first
            targets[write, 1] = second
            spill_targets[n_spilled, 0] = first
            spill_targets[n_spilled, 1] = second
        elif not by_row:
            for column in range(targets.shape[1]):
                target = targets[read, column]
                targets[write, column] = target
                spill_targets[n_spilled, column] = target
        write += left
        n_spilled += not left
    middle = write
    for k in range(n_spilled):
        _move_row(spill_samples, spill_targets, spill_weights, k, samples, targets, weights, middle + k, uniform, by_row)
    return middle, n_missing


@jit(refcounted=False, callable_from_python=False)
def _spill_chunk(X_binned, rows, first, last, spill_start, feature, threshold_bin, missing_bin, missing_left, left_bins):
    """Copy the rows at positions ``first:last`` to ``spill_*[spill_start:spill_start + last - first]``:
    those going left from the front in their order, those going right from the back in
    reverse order. Returns (rows going left, rows in ``missing_bin``)."""
    samples = rows.samples
    n_left = 0
    n_right = 0
    n_missing = 0
    back = spill_start + last - first - 1
    for read in range(first, last):
        _, left, missing = _read_side(X_binned, samples, read, last, feature, threshold_bin, missing_bin, missing_left, left_bins)
        n_missing += missing
        to = spill_start + n_left if left else back - n_right
        _move_row(
            samples, rows.targets, rows.weights, read, rows.spill_samples, rows.spill_targets, rows.spill_weights, to,
            rows.uniform_weights, rows.targets_by_row,
        )  # fmt: skip
        n_left += left
        n_right += not left
    return n_left, n_missing


@jit(refcounted=False, callable_from_python=False)
def _unspill_chunk(rows, spill_start, n_chunk, n_left, left_to, right_to):
    """Copy a chunk spilled by ``_spill_chunk`` back: its left rows to positions
    ``left_to:``, its right rows, back in their order, to ``right_to:``."""
    uniform = rows.uniform_weights
    by_row = rows.targets_by_row
    for k in range(n_left):  # two loops, not one choosing each row's side: no selects per row
        _move_row(
            rows.spill_samples, rows.spill_targets, rows.spill_weights, spill_start + k, rows.samples, rows.targets,
            rows.weights, left_to + k, uniform, by_row,
        )  # fmt: skip
    last = spill_start + n_chunk - 1
    for k in range(n_chunk - n_left):
        _move_row(
            rows.spill_samples, rows.spill_targets, rows.spill_weights, last - k, rows.samples, rows.targets,
            rows.weights, right_to + k, uniform, by_row,
        )  # fmt: skip


@jit(refcounted=False, callable_from_python=False)
def partition_node(X_binned, rows, start, end, feature, threshold_bin, missing_bin, missing_left, left_bins, n_threads):
    """``partition`` of a node, or ``partition_parallel`` on ``n_threads`` numba threads for a
    node of at least ``PARALLEL_PARTITION_ROWS_PER_THREAD`` rows a thread.

    ``n_threads`` None (a tree grown on one thread: ``_builder.GrowthParams``) is a type
    of its own, for which numba drops the parallel branch: a forest's builder then
    compiles no parallel partition (``docs/design.md``, "Optional inputs are None by
    type"). Called, not inlined, so that the test is on an argument.
    """
    if n_threads is not None and n_threads > 1 and end - start >= n_threads * PARALLEL_PARTITION_ROWS_PER_THREAD:
        return partition_parallel(
            X_binned, rows, start, end, feature, threshold_bin, missing_bin, missing_left, left_bins, n_threads
        )
    return partition(X_binned, rows, start, end, feature, threshold_bin, missing_bin, missing_left, left_bins)


@jit(parallel=True, refcounted=False, callable_from_python=False, cache=False)  # docs/design.md, "Numba rules": parallel kernels that call kernels
def partition_parallel(X_binned, rows, start, end, feature, threshold_bin, missing_bin, missing_left, left_bins, n_threads):
    """``partition`` on ``n_threads`` numba threads: the same stable partition.

    The range is cut into one chunk per thread; each thread spills its chunk's rows
    to its own part of the ``spill_*`` scratch, left and right apart, and, once every
    chunk's count of left rows is known, copies them back: chunk ``c``'s left rows after
    the left rows of chunks ``0..c-1``, its right rows after theirs. Every left row
    thus keeps its order, and so does every right row. ``n_threads`` chunks at most
    ``len(rows.chunk_counts)`` (numba's most threads and one more, so tests can cut
    more chunks than the machine has threads). Returns what ``partition`` does.
    """
    n_rows = end - start
    counts = rows.chunk_counts  # per chunk: rows going left, missing rows; then left rows before it
    for chunk in numba.prange(n_threads):
        first = start + chunk * n_rows // n_threads
        last = start + (chunk + 1) * n_rows // n_threads
        n_left, n_missing = _spill_chunk(
            X_binned, rows, first, last, first - start, feature, threshold_bin, missing_bin, missing_left, left_bins
        )
        counts[chunk, 0] = n_left
        counts[chunk, 1] = n_missing
    n_missing = 0
    left_before = 0
    for chunk in range(n_threads):
        n_missing += counts[chunk, 1]
        counts[chunk, 1] = left_before
        left_before += counts[chunk, 0]
    middle = start + left_before
    for chunk in numba.prange(n_threads):
        first = start + chunk * n_rows // n_threads
        last = start + (chunk + 1) * n_rows // n_threads
        right_before = (first - start) - counts[chunk, 1]
        _unspill_chunk(rows, first - start, last - first, counts[chunk, 0], start + counts[chunk, 1], middle + right_before)
    return middle, n_missing
