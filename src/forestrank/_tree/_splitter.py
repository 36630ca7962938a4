"""Best split of one node: candidate features, and two equivalent scans per feature.

For a feature, the candidate splits are "bin <= b" between consecutive occupied bins
of the node. Two scans find the best one and visit the same candidates in the same
increasing-bin order (strict ``>`` keeps the first of equal gains), so they agree
(tested):

* histogram scan (decomposable criteria): accumulate per-bin statistics, then walk
  the occupied bins, found through an occupancy bitmap of 64-bit words, so a node
  costs O(n_node + occupied bins) whatever the number of bins (ARCHITECTURE.md §3).
  No comparison sort: measured, its mispredicted branches dominated deep nodes;
* sorted sweep (stateful criteria, and tests): a counting sort by bin over the same
  bitmap, then the ``move`` protocol shifts samples to the left child one by one.

For entropy and gini only boundary points are evaluated
(``_criteria.boundary_points_suffice``), identically in both scans.

Sibling subtraction needs both siblings' histograms over the same features, so it
applies when every feature is examined (boosting; ``max_features`` = all) with a
moment criterion: ``fill_histograms`` then sums all features of a node in one pass
over its rows (each row's bins are contiguous in the C-ordered ``X_binned``), the
larger child's histograms are the parent's minus the smaller child's
(``subtract_histograms``), and ``_pooled_scan`` reads a feature's candidates from
them. Random forests draw a new feature subset at every node and use the
per-feature scans.

Candidate features are drawn without replacement per node (partial Fisher-Yates on a
per-tree permutation); features constant in the node do not count towards
``max_features``, so the search continues until ``max_features`` usable features
were evaluated or none is left (scikit-learn's rule).

The loops index their arrays themselves and call only scalar helpers (see
``_criteria``: array arguments cost reference counting in per-sample loops).
"""

import numba
import numpy as np

from .._jit import jit
from .._prefetch import GATHER_DISTANCE, prefetch
from . import _criteria, _rng

# 64-bit de Bruijn sequence and table: index of the lowest set bit without a loop
# (Leiserson, Prokop & Randall, "Using de Bruijn sequences to index a 1 in a
# computer word", 1998).
_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DE_BRUIJN_INDEX = np.array(
    [0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24,
     18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25,
     14, 19, 9, 13, 8, 7, 6],
    dtype=np.int64,
)  # fmt: skip


@jit(inline="always")
def _pop_lowest_bit(word):
    """Clear the lowest set bit of a non-zero uint64; returns (the rest, that bit's index)."""
    isolated = word & (~word + np.uint64(1))
    return word ^ isolated, _DE_BRUIJN_INDEX[int((isolated * _DE_BRUIJN) >> np.uint64(58))]


@jit(inline="always")
def draw_feature(features, i, rng_state):
    """Step ``i`` of a partial Fisher-Yates shuffle of ``features``: the ``i``-th candidate."""
    j = i + _rng.randint(rng_state, len(features) - i)
    feature = features[j]
    features[j] = features[i]
    features[i] = feature
    return feature


@jit(inline="always")
def _candidate_gain(
    criterion, left_count, n_node, left_weight, node_weight, left_terms, right_terms, left_first, left_second,
    node_first, node_second, node_cost, l2, integer_weights, min_samples_leaf, min_child_weight,
):  # fmt: skip
    """Cost decrease of the split at the current sweep position, or -inf if a child is too small.

    Class criteria use the sweep sums ``left_terms``/``right_terms`` (``A_L``, ``A_R``);
    moment criteria use the left child's moments and the node's.
    """
    if left_count < min_samples_leaf or n_node - left_count < min_samples_leaf:
        return -np.inf
    right_weight = node_weight - left_weight
    if _criteria.uses_classes(criterion):
        if left_weight < min_child_weight or right_weight < min_child_weight:
            return -np.inf
        children = _criteria.class_cost(criterion, left_weight, left_terms, integer_weights) + _criteria.class_cost(
            criterion, right_weight, right_terms, integer_weights
        )
    else:
        right_first = node_first - left_first
        right_second = node_second - left_second
        if criterion == _criteria.NEWTON:  # LightGBM's min_sum_hessian_in_leaf
            if left_second < min_child_weight or right_second < min_child_weight:
                return -np.inf
        elif left_weight < min_child_weight or right_weight < min_child_weight:
            return -np.inf
        children = _criteria.moment_cost(criterion, left_first, left_second, left_weight, l2) + _criteria.moment_cost(
            criterion, right_first, right_second, right_weight, l2
        )
    return node_cost - children


@jit(inline="always")
def _screening_tolerance(node_weight):
    """Slack of the incremental class sums: bound of their rounding drift over a scan.

    The sums ``A_L``, ``A_R`` are of size about ``W ln W`` and drift by a few ulps per
    move; 1e-9 relative covers any scan with margin.
    """
    return 1e-9 * node_weight * (1.0 + np.log(node_weight + 1.0))


@jit
def exact_class_gain(criterion, left, node_statistics, left_weight, node_weight, node_cost, integer_weights):
    """Gain of a class-criterion candidate recomputed from its left counts.

    Candidates are screened with the incremental sums, but compared on this value:
    with integer weights the counts are exact, so the histogram scan and the sorted
    sweep (whose incremental sums round differently) make identical choices, ties
    included. Called only for candidates within the screening tolerance of the best.
    """
    left_terms = 0.0
    right_terms = 0.0
    for c in range(len(left)):
        left_terms += _criteria.class_term(criterion, left[c], integer_weights)
        right_terms += _criteria.class_term(criterion, node_statistics[c] - left[c], integer_weights)
    return node_cost - (
        _criteria.class_cost(criterion, left_weight, left_terms, integer_weights)
        + _criteria.class_cost(criterion, node_weight - left_weight, right_terms, integer_weights)
    )


@jit(inline="always")
def _sweep_start(criterion, left, node_statistics, integer_weights):
    """Empty the left child; returns ``A_R = sum_c f(p_c)`` (0 for moment criteria).

    Once per scan, so taking arrays costs nothing measurable here.
    """
    right_terms = 0.0
    for s in range(len(left)):
        left[s] = 0.0
        if _criteria.uses_classes(criterion):
            right_terms += _criteria.class_term(criterion, node_statistics[s], integer_weights)
    return right_terms


@jit(refcounted=False)
def _histogram_scan(
    X_binned, feature, row_targets, row_weights, samples, start, end, criterion, l2, integer_weights,
    node_statistics, node_weight, node_cost, min_samples_leaf, min_child_weight, histogram, histogram_weight,
    histogram_count, bin_class, occupied, left, best_gain,
):  # fmt: skip
    """Best "bin <= b" of ``feature`` from per-bin sums; returns (is_constant, gain, bin, next bin).

    ``next bin`` is the first occupied bin right of the cut (for the threshold).

    ``gain`` is the cost decrease, kept only when it beats ``best_gain``. The
    per-bin buffers and the bitmap are all zero on entry and are left so.
    """
    classes = _criteria.uses_classes(criterion)
    if classes:
        for position in range(start, end):
            if position + GATHER_DISTANCE < end:
                prefetch(X_binned, (samples[position + GATHER_DISTANCE], feature))
            b = X_binned[samples[position], feature]
            weight = row_weights[position]
            c = int(row_targets[position, 0])
            histogram[b, c] += weight
            histogram_weight[b] += weight
            histogram_count[b] += 1
            bin_class[b] = c  # the bin's class when it holds a single sample
            occupied[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    else:
        squared = criterion == _criteria.VARIANCE
        for position in range(start, end):
            if position + GATHER_DISTANCE < end:
                prefetch(X_binned, (samples[position + GATHER_DISTANCE], feature))
            b = X_binned[samples[position], feature]
            weight = row_weights[position]
            first = row_targets[position, 0]
            histogram[b, 0] += weight * first
            histogram[b, 1] += weight * (first * first if squared else row_targets[position, 1])
            histogram_weight[b] += weight
            histogram_count[b] += 1
            occupied[b >> 6] |= np.uint64(1) << np.uint64(b & 63)

    n_node = end - start
    n_classes = histogram.shape[1]
    boundaries_only = _criteria.boundary_points_suffice(criterion, min_samples_leaf, min_child_weight)
    tolerance = _screening_tolerance(node_weight)
    left_terms = 0.0
    right_terms = _sweep_start(criterion, left, node_statistics, integer_weights)
    left_weight = 0.0
    left_count = 0
    previous = -1  # last bin moved left: the candidate "bin <= previous" is pending
    previous_class = -1
    n_occupied = 0
    best_bin = -1
    best_next = -1
    for word_index in range(len(occupied)):
        word = occupied[word_index]
        occupied[word_index] = np.uint64(0)
        while word != np.uint64(0):
            word, bit = _pop_lowest_bit(word)
            b = word_index * 64 + bit
            n_occupied += 1
            count = histogram_count[b]
            current_class = -1
            if boundaries_only:
                if count == 1:
                    current_class = bin_class[b]
                else:
                    for c in range(n_classes):
                        if histogram[b, c] > 0.0:
                            current_class = c if current_class == -1 else -2
                    current_class = max(current_class, -1)
            if previous >= 0 and not (current_class >= 0 and current_class == previous_class):
                gain = _candidate_gain(
                    criterion, left_count, n_node, left_weight, node_weight, left_terms, right_terms, left[0],
                    0.0 if classes else left[1], node_statistics[0], 0.0 if classes else node_statistics[1],
                    node_cost, l2, integer_weights, min_samples_leaf, min_child_weight,
                )  # fmt: skip
                if classes and gain > best_gain - tolerance:
                    gain = exact_class_gain(criterion, left, node_statistics, left_weight, node_weight, node_cost, integer_weights)
                if gain > best_gain:
                    best_gain = gain
                    best_bin = previous
                    best_next = b
            # Move bin b to the left child and clear it.
            if classes:
                # A one-sample bin holds its known class only: skip the class loop.
                first_class = bin_class[b] if count == 1 else 0
                last_class = first_class + 1 if count == 1 else n_classes
                for c in range(first_class, last_class):
                    moved = histogram[b, c]
                    if moved != 0.0:
                        delta_left, delta_right = _criteria.class_move(
                            criterion, left[c], moved, node_statistics[c], integer_weights
                        )
                        left[c] += moved
                        left_terms += delta_left
                        right_terms += delta_right
                        histogram[b, c] = 0.0
            else:
                left[0] += histogram[b, 0]
                left[1] += histogram[b, 1]
                histogram[b, 0] = 0.0
                histogram[b, 1] = 0.0
            left_weight += histogram_weight[b]
            left_count += count
            histogram_weight[b] = 0.0
            histogram_count[b] = 0
            previous = b
            previous_class = current_class
    return n_occupied == 1, best_gain, best_bin, best_next


# Columns of one bin of a pooled histogram. The newton criterion never reads the
# weight (its child minimum is on the hessian), so its histograms have 3 columns:
# 24 instead of 32 bytes per bin measured 54 vs 70 ms per 200k x 136 rows filled.
HIST_FIRST = 0  # sum of w * g (newton) or w * y (variance)
HIST_SECOND = 1  # sum of w * h, or w * y^2
HIST_COUNT = 2
HIST_WEIGHT = 3  # variance only


@jit(inline="always")
def n_hist_columns(criterion):
    """Columns of a pooled histogram bin for a moment criterion."""
    return 3 if criterion == _criteria.NEWTON else 4


@jit(inline="always")
def _fill_feature_range(X_binned, row_targets, row_weights, samples, start, end, squared, histogram, first_feature, last_feature):
    """Add the node's rows to the histograms of features ``first_feature:last_feature``."""
    for position in range(start, end):
        if position + GATHER_DISTANCE < end and first_feature < last_feature:  # every line of the row's range ahead
            ahead = samples[position + GATHER_DISTANCE]
            for column in range(first_feature, last_feature, 64 // X_binned.itemsize):
                prefetch(X_binned, (ahead, column))
            prefetch(X_binned, (ahead, last_feature - 1))
        row = samples[position]
        weight = row_weights[position]
        first = row_targets[position, 0]
        weighted_first = weight * first
        weighted_second = weight * (first * first if squared else row_targets[position, 1])
        for feature in range(first_feature, last_feature):
            b = X_binned[row, feature]
            histogram[feature, b, HIST_FIRST] += weighted_first
            histogram[feature, b, HIST_SECOND] += weighted_second
            histogram[feature, b, HIST_COUNT] += 1.0
            if squared:
                histogram[feature, b, HIST_WEIGHT] += weight


@jit(refcounted=False)
def fill_histograms(X_binned, row_targets, row_weights, samples, start, end, squared, histograms, slot):
    """Per-bin sums of every feature for the node ``samples[start:end]``, in one pass over its rows.

    Row by row, because a row's bins are contiguous in the C-ordered ``X_binned``.

    Parameters
    ----------
    X_binned : uint8/uint16/uint32 array of shape (n_rows, n_features), C order
    row_targets : float64 array of shape (n_tree_rows, n_target_columns)
        In the order of ``samples``: y (variance) or g and h (newton).
    row_weights : float64 array of shape (n_tree_rows,)
    samples : int64 array of shape (n_tree_rows,)
    squared : bool
        Second moment ``w * y^2`` (variance) instead of ``w * h`` (newton).
    histograms : float64 array of shape (n_slots, n_features, max_bins, n_hist_columns)
        ``histograms[slot]`` is overwritten.
    """
    histogram = histograms[slot]
    histogram[:] = 0.0
    _fill_feature_range(X_binned, row_targets, row_weights, samples, start, end, squared, histogram, 0, X_binned.shape[1])


@jit(parallel=True)
def fill_histograms_parallel(X_binned, row_targets, row_weights, samples, start, end, squared, histograms, slot, n_threads):
    """``fill_histograms`` with the features split into ``n_threads`` blocks run by numba's threads.

    Each thread owns whole features, so no two threads write the same bins and the
    sums are added in the serial order (identical results). Only the boosting loop
    calls it, from the main thread (ARCHITECTURE.md §4: never from joblib threads).
    """
    n_features = X_binned.shape[1]
    for block in numba.prange(n_threads):
        first_feature = block * n_features // n_threads
        last_feature = (block + 1) * n_features // n_threads
        histograms[slot, first_feature:last_feature] = 0.0
        _fill_feature_range(
            X_binned, row_targets, row_weights, samples, start, end, squared, histograms[slot], first_feature,
            last_feature,
        )  # fmt: skip


@jit(refcounted=False)
def subtract_histograms(histograms, parent_slot, child_slot):
    """``histograms[parent_slot] -= histograms[child_slot]``: the parent's slot becomes the sibling's.

    Counts stay exact (integers below 2^53); sums carry one extra rounding.
    """
    parent = histograms[parent_slot]
    child = histograms[child_slot]
    for feature in range(parent.shape[0]):
        for b in range(parent.shape[1]):
            for column in range(parent.shape[2]):
                parent[feature, b, column] -= child[feature, b, column]


@jit(refcounted=False)
def _pooled_scan(
    histograms, slot, feature, n_bins, criterion, l2, node_statistics, node_weight, node_cost, n_node,
    min_samples_leaf, min_child_weight, best_gain,
):  # fmt: skip
    """``_histogram_scan`` for a moment criterion, reading the bins of ``histograms[slot, feature]``.

    Same candidates in the same order (between consecutive occupied bins), same
    return values: (is_constant, gain, bin, next bin).
    """
    histogram = histograms[slot, feature]
    left_first = 0.0
    left_second = 0.0
    left_weight = 0.0
    left_count = 0
    previous = -1
    n_occupied = 0
    best_bin = -1
    best_next = -1
    for b in range(n_bins):
        count = int(histogram[b, HIST_COUNT])
        if count == 0:
            continue
        n_occupied += 1
        if previous >= 0:
            gain = _candidate_gain(
                criterion, left_count, n_node, left_weight, node_weight, 0.0, 0.0, left_first, left_second,
                node_statistics[0], node_statistics[1], node_cost, l2, False, min_samples_leaf, min_child_weight,
            )  # fmt: skip
            if gain > best_gain:
                best_gain = gain
                best_bin = previous
                best_next = b
        left_first += histogram[b, HIST_FIRST]
        left_second += histogram[b, HIST_SECOND]
        if histogram.shape[1] > HIST_WEIGHT:
            left_weight += histogram[b, HIST_WEIGHT]
        left_count += count
        previous = b
        if left_count == n_node:
            break
    return n_occupied == 1, best_gain, best_bin, best_next


@jit(refcounted=False)
def sort_by_bin(X_binned, feature, samples, start, end, histogram_count, occupied, order):
    """Counting sort of the node's positions by bin of ``feature``.

    Writes ``order[r, 0]``, the position of rank ``r``, and ``order[r, 1]``, its bin,
    for ``r < n_node`` (the sweeps then read bins sequentially instead of gathering
    them from ``X_binned``); ``order[position, 2]`` keeps each position's bin, so
    ``X_binned`` (row-major: a cache line per row) is gathered once, not once per
    pass. O(n_node + occupied bins) through the occupancy bitmap; stable, so equal
    bins keep increasing positions. ``histogram_count`` and ``occupied`` are all
    zero on entry and are left so. Returns the number of distinct bins; when it is
    1 (the feature is constant in the node, which the callers skip) ``order`` is
    not written.
    """
    for position in range(start, end):
        if position + GATHER_DISTANCE < end:
            prefetch(X_binned, (samples[position + GATHER_DISTANCE], feature))
        b = X_binned[samples[position], feature]
        order[position, 2] = b
        histogram_count[b] += 1
        occupied[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    # Exclusive prefix sums over the occupied bins turn counts into output offsets.
    offset = 0
    n_runs = 0
    for word_index in range(len(occupied)):
        word = occupied[word_index]
        occupied[word_index] = np.uint64(0)
        while word != np.uint64(0):
            word, bit = _pop_lowest_bit(word)
            b = word_index * 64 + bit
            count = histogram_count[b]
            histogram_count[b] = offset
            offset += count
            n_runs += 1
    if n_runs == 1:  # a constant feature (a quarter of the sweeps on MQ2008): its single bin's offset is 0 already
        return n_runs
    for position in range(start, end):  # ranks are below n_node: column 2 is not overwritten
        b = order[position, 2]
        rank = histogram_count[b]
        order[rank, 0] = position
        order[rank, 1] = b
        histogram_count[b] = rank + 1
    for rank in range(end - start):
        histogram_count[order[rank, 1]] = 0
    return n_runs


@jit(refcounted=False)
def _sorted_sweep(
    X_binned, feature, row_targets, row_weights, samples, start, end, criterion, l2, integer_weights,
    node_statistics, node_weight, node_cost, min_samples_leaf, min_child_weight, histogram_count, occupied, order,
    left, best_gain,
):  # fmt: skip
    """Best "bin <= b" of ``feature`` by moving samples one at a time in bin order.

    ``sort_by_bin`` orders the node's positions; the ``move`` protocol then shifts
    samples to the left child and every end of a run of equal bins is a candidate. Stateful criteria
    need this path; for decomposable ones it must agree with the histogram scan.
    """
    n_node = end - start
    if sort_by_bin(X_binned, feature, samples, start, end, histogram_count, occupied, order) == 1:
        return True, best_gain, -1, -1

    classes = _criteria.uses_classes(criterion)
    squared = criterion == _criteria.VARIANCE
    boundaries_only = _criteria.boundary_points_suffice(criterion, min_samples_leaf, min_child_weight)
    tolerance = _screening_tolerance(node_weight)
    left_terms = 0.0
    right_terms = _sweep_start(criterion, left, node_statistics, integer_weights)
    left_weight = 0.0
    best_bin = -1
    best_next = -1
    run_class = -2  # class shared by the current run of equal bins so far (-1: mixed, -2: empty)
    for rank in range(n_node - 1):
        position = order[rank, 0]
        weight = row_weights[position]
        if classes:
            c = int(row_targets[position, 0])
            delta_left, delta_right = _criteria.class_move(criterion, left[c], weight, node_statistics[c], integer_weights)
            left[c] += weight
            left_terms += delta_left
            right_terms += delta_right
            if boundaries_only:
                run_class = c if run_class == -2 or run_class == c else -1
        else:
            first = row_targets[position, 0]
            left[0] += weight * first
            left[1] += weight * (first * first if squared else row_targets[position, 1])
        left_weight += weight
        b = order[rank, 1]
        next_bin = order[rank + 1, 1]
        if next_bin == b:
            continue  # not a boundary between bins
        skip = False
        if boundaries_only and run_class >= 0:  # skip when the next run holds run_class only, too
            skip = True
            for ahead in range(rank + 1, n_node):
                if order[ahead, 1] != next_bin:
                    break
                if int(row_targets[order[ahead, 0], 0]) != run_class:
                    skip = False
                    break
        run_class = -2
        if skip:
            continue
        gain = _candidate_gain(
            criterion, rank + 1, n_node, left_weight, node_weight, left_terms, right_terms, left[0],
            0.0 if classes else left[1], node_statistics[0], 0.0 if classes else node_statistics[1], node_cost, l2,
            integer_weights, min_samples_leaf, min_child_weight,
        )  # fmt: skip
        if classes and gain > best_gain - tolerance:
            gain = exact_class_gain(criterion, left, node_statistics, left_weight, node_weight, node_cost, integer_weights)
        if gain > best_gain:
            best_gain = gain
            best_bin = b
            best_next = next_bin
    return False, best_gain, best_bin, best_next


@jit(refcounted=False)
def best_split(
    X_binned, n_bins, row_targets, row_weights, samples, start, end, criterion, l2, integer_weights,
    node_statistics, node_weight, node_cost, min_samples_leaf, min_child_weight, max_features, features, rng_state,
    histogram, histogram_weight, histogram_count, bin_class, occupied, sweep_order, left, histograms, slot,
):  # fmt: skip
    """Best split of the node ``samples[start:end]`` over up to ``max_features`` usable features.

    Parameters
    ----------
    X_binned : uint8/uint16/uint32 array of shape (n_rows, n_features), C order
    n_bins : int32 array of shape (n_features,)
    row_targets : float64 array of shape (n_tree_rows, n_target_columns)
        Criterion inputs in the order of ``samples``: the class index (class
        criteria), ``y`` (variance), or the gradient and hessian (newton).
    row_weights : float64 array of shape (n_tree_rows,)
        Weights in the order of ``samples``.
    samples : int64 array of shape (n_tree_rows,)
        Row indices; the node owns positions ``start:end``.
    integer_weights : bool
        All weights are integers (``x ln x`` is looked up).
    node_statistics : float64 array of shape (n_statistics,)
        Per-class weights, or the two moments, of the node.
    node_weight, node_cost : float64
    features : int32 array of shape (n_features,)
        Per-tree permutation, partially reshuffled at every node.
    rng_state : uint64 array of shape (2,)
    histogram, histogram_weight, histogram_count, bin_class, occupied :
        Zeroed per-bin scratch: (max_bins, n_statistics) float64, (max_bins,) float64,
        (max_bins,) int64, (max_bins,) int64, (ceil(max_bins / 64),) uint64.
    sweep_order : None or int64 array of shape (>= n_tree_rows, 3)
        None: histogram scans; an array: the sorted sweep (the stateful-criterion
        path, for tests), with this scratch.
    left :
        Scratch: (n_statistics,) float64.
    histograms : None or float64 array of shape (n_slots, n_features, max_bins, n_hist_columns)
    slot : int
        When ``histograms`` is given and ``slot >= 0``, ``histograms[slot]`` holds
        the node's sums (``fill_histograms``) and the scans read them instead of the
        rows (moment criteria only).

    A None ``sweep_order`` or ``histograms`` removes its scan from the compiled
    specialisation (numba prunes branches on None arguments before typing).

    Returns
    -------
    feature : int
        -1 when no valid split exists.
    bin : int
        Largest bin going left.
    next_bin : int
        Smallest occupied bin going right.
    gain : float64
        Cost decrease of the split (unscaled).
    """
    n_features = len(features)
    best_gain = -np.inf
    best_feature = -1
    best_bin = -1
    best_next = -1
    n_usable = 0
    for i in range(n_features):
        if n_usable >= max_features:
            break
        feature = draw_feature(features, i, rng_state)
        if histograms is not None and slot >= 0:
            constant, gain, b, after = _pooled_scan(
                histograms, slot, feature, n_bins[feature], criterion, l2, node_statistics, node_weight, node_cost,
                end - start, min_samples_leaf, min_child_weight, best_gain,
            )  # fmt: skip
        elif sweep_order is not None:
            constant, gain, b, after = _sorted_sweep(
                X_binned, feature, row_targets, row_weights, samples, start, end, criterion, l2, integer_weights,
                node_statistics, node_weight, node_cost, min_samples_leaf, min_child_weight, histogram_count,
                occupied, sweep_order, left, best_gain,
            )  # fmt: skip
        else:
            constant, gain, b, after = _histogram_scan(
                X_binned, feature, row_targets, row_weights, samples, start, end, criterion, l2, integer_weights,
                node_statistics, node_weight, node_cost, min_samples_leaf, min_child_weight, histogram,
                histogram_weight, histogram_count, bin_class, occupied, left, best_gain,
            )  # fmt: skip
        if constant:
            continue
        n_usable += 1
        if b >= 0:
            best_gain = gain
            best_feature = feature
            best_bin = b
            best_next = after
    return best_feature, best_bin, best_next, best_gain


@jit(refcounted=False)
def random_split(X_binned, n_bins, bin_values, samples, start, end, features, rng_state):
    """RF-rand split (Ibrahim & Carman §6.1.1): a random usable feature, a uniform cut.

    The cut ``t`` is uniform between the node's smallest and largest value of the
    feature (bin representatives); samples whose bin value is ``<= t`` go left. The
    builder places the threshold between that bin and the next, which partitions
    the training rows exactly as ``t`` does.

    Returns
    -------
    feature : int
        -1 when every feature is constant in the node.
    bin : int
        Largest bin going left.
    next_bin : int
        Smallest bin going right whose value exceeds the cut.
    """
    n_features = len(features)
    for i in range(n_features):
        feature = draw_feature(features, i, rng_state)
        lowest = n_bins[feature]
        highest = -1
        for position in range(start, end):
            b = X_binned[samples[position], feature]
            lowest = min(lowest, b)
            highest = max(highest, b)
        if lowest == highest:
            continue
        low_value = bin_values[feature, lowest]
        threshold = low_value + _rng.uniform(rng_state) * (bin_values[feature, highest] - low_value)
        b = lowest
        while b + 1 < highest and bin_values[feature, b + 1] <= threshold:
            b += 1
        return feature, b, b + 1
    return -1, -1, -1
