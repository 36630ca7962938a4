"""A node's rows: the partition on several threads is the one-thread partition."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forestrank._tree import _rows


@numba.njit
def _partition(X_binned, rows, start, end, feature, cut_bin, missing_bin, missing_left, left_bins, n_threads):
    if n_threads > 0:
        return _rows.partition_parallel(
            X_binned, rows, start, end, feature, cut_bin, missing_bin, missing_left, left_bins, n_threads
        )
    return _rows.partition(X_binned, rows, start, end, feature, cut_bin, missing_bin, missing_left, left_bins)


@pytest.mark.parametrize("n_threads", [2, 3])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_parallel_partition_moves_the_rows_as_the_serial_one(n_threads, data):
    """Same positions for every row (stable on both sides), same targets and weights
    with them, same first right position and missing count, rows outside the range
    untouched; with chunks of unequal sizes, missing rows on either side, categorical
    splits (a set of bins left, bins past the first bitmap word), one to three target
    columns, weights all equal (which the partitions leave in place), and, with those,
    targets kept by row (``targets_by_row``: left where they are, and the row at each
    position reads the targets the copying partition moved there)."""
    n_rows = data.draw(st.integers(1, 60))
    n_bins = data.draw(st.sampled_from([1, 2, 3, 6, 70, 200]))
    X_binned = np.array(data.draw(st.lists(st.integers(0, n_bins - 1), min_size=n_rows, max_size=n_rows)), np.uint8)[:, None]
    start = data.draw(st.integers(0, n_rows - 1))
    end = data.draw(st.integers(start + 1, n_rows))
    cut_bin = data.draw(st.integers(-1, n_bins - 1))
    missing_bin = data.draw(st.sampled_from([-1, n_bins - 1]))
    missing_left = data.draw(st.booleans())
    left_set = data.draw(st.one_of(st.none(), st.sets(st.integers(0, n_bins - 1))))
    left_bins = np.zeros((n_bins + 63) // 64, dtype=np.uint64)
    for b in left_set or ():
        left_bins[b // 64] |= np.uint64(1) << np.uint64(b % 64)
    if left_set is None:
        left_bins = left_bins[:0]  # a numeric split in a tree with categorical features
    rng = np.random.default_rng(n_rows)
    samples = rng.permutation(n_rows).astype(np.int64)
    targets = rng.normal(size=(n_rows, data.draw(st.integers(1, 3))))
    weights = np.full(n_rows, 2.0) if data.draw(st.booleans()) else rng.uniform(size=n_rows)
    by_row = data.draw(st.booleans()) and weights[0] == 2.0
    results = []
    for threads in (0, n_threads):
        rows = _rows.sorted_rows(samples, targets, weights)
        assert rows.uniform_weights == (len(np.unique(weights)) == 1)
        middle, n_missing = _partition(X_binned, rows, start, end, 0, cut_bin, missing_bin, missing_left, left_bins, threads)
        results.append((middle, n_missing, rows.samples.copy(), rows.targets.copy(), rows.weights.copy()))
        if by_row:  # the targets in row order, as boosting keeps them: read through samples
            kept = _rows.sorted_rows(samples, targets, weights)._replace(targets=targets.copy(), targets_by_row=True)
            found = _partition(X_binned, kept, start, end, 0, cut_bin, missing_bin, missing_left, left_bins, threads)
            assert found == (middle, n_missing)
            np.testing.assert_array_equal(kept.samples, rows.samples)
            np.testing.assert_array_equal(kept.targets, targets)
            np.testing.assert_array_equal(kept.targets[kept.samples], rows.targets)
    serial, parallel = results
    assert serial[:2] == parallel[:2]
    for expected, found in zip(serial[2:], parallel[2:]):
        np.testing.assert_array_equal(found, expected)
    # Every row's targets and weight moved with it (the arrays were gathered by row id).
    np.testing.assert_array_equal(serial[3], targets[serial[2]])
    np.testing.assert_array_equal(serial[4], weights[serial[2]])
    # The serial partition itself: left rows first, each side in its original order.
    bins = X_binned[samples[start:end], 0]
    left = (bins <= cut_bin) | ((bins == missing_bin) & missing_left)
    if left_set is not None:
        left = np.isin(bins, sorted(left_set))
    expected_order = np.concatenate([samples[:start], samples[start:end][left], samples[start:end][~left], samples[end:]])
    np.testing.assert_array_equal(serial[2], expected_order)
    assert serial[0] == start + left.sum()
    assert serial[1] == (bins == missing_bin).sum()


def test_targets_stay_by_row_only_for_a_small_tree_of_every_row_with_equal_weights(monkeypatch):
    """``by_row`` applies to rows ``0..n-1`` in order (positions are rows) with equal weights and targets of at most
    ``TARGETS_BY_ROW_BYTES``; a sample, a permutation, unequal weights or larger targets keep
    the targets moving with their rows."""
    n_rows = 50
    targets = np.arange(2.0 * n_rows).reshape(n_rows, 2)
    every_row = np.arange(n_rows)
    equal = np.ones(n_rows)
    assert _rows.by_row(_rows.sorted_rows(every_row, targets, equal)).targets_by_row
    assert not _rows.sorted_rows(every_row, targets, equal).targets_by_row
    assert not _rows.by_row(_rows.sorted_rows(every_row[::-1].copy(), targets, equal)).targets_by_row
    assert not _rows.by_row(_rows.sorted_rows(every_row[1:], targets, equal)).targets_by_row
    assert not _rows.by_row(_rows.sorted_rows(every_row, targets, np.linspace(1, 2, n_rows))).targets_by_row
    monkeypatch.setattr(_rows, "TARGETS_BY_ROW_BYTES", targets.nbytes - 1)
    assert not _rows.by_row(_rows.sorted_rows(every_row, targets, equal)).targets_by_row
