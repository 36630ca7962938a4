"""Splits of a categorical feature: a set of its bins (categories) goes left.

A node's categories (its occupied bins, the missing bin among them as a category of its
own) are ordered by a key of their statistics (``_criteria.category_key``: the gradient
over the smoothed hessian for newton, the mean target for variance, the mean grade for
the class criteria) and the scan evaluates the cuts of that order: the first ``k``
categories left, the rest right. For a squared loss and for two classes the best of
all cuts is the best of all ``2^(m-1) - 1`` partitions (Fisher 1958, "On grouping for
maximum homogeneity", for the weighted means; Breiman et al. 1984, Theorem 4.5, for two
classes), which is how LightGBM and scikit-learn's histogram gradient boosting split
categories; with more grades the mean-grade order is a heuristic. A node with at most
``max_cat_to_onehot`` categories evaluates each category alone against the rest
instead (LightGBM's one-vs-rest rule for small cardinalities).

Boosting's scan (``pooled_category_scan``) regularises the cuts as LightGBM does, since
a set chosen among thousands of cuts over-fits the gradients of rare categories: only
categories of ``cat_smooth`` rows enter the order, left sets grow from both ends of it
to ``max_cat_threshold`` categories, cuts come every ``min_data_per_group`` rows, and
their gain carries ``cat_l2`` more L2. The forests' row scan (``histogram_category_scan``)
evaluates every cut: their trees are grown deep on bootstrap samples and averaged.

The split found is a bitmap of the bins going left (``CategorySplits.best``, then a row
of ``CategorySplits.sets`` per node), which the partition reads (``_rows.goes_left``)
and ``_tree/_grow.py`` turns into a bitmap of category codes for prediction.
"""

from collections import namedtuple

import numpy as np

from .._numba.bits import pop_lowest_bit
from .._numba.jit import jit
from . import _criteria, _histograms, _scans

CategorySplits = namedtuple("CategorySplits", ["is_categorical", "order", "keys", "best", "sets"])
CategorySplits.__doc__ = """The categorical features of a tree and the scratch of their scans (``new_category_splits``).

is_categorical : uint8 array of shape (n_features,)
order : int64 array of shape (n_features, max_bins)
    Per drawn feature (the feature's row for a pooled node, row 0 for the one loop): its
    occupied bins in key order after a scan, the left set first.
keys : float64 array of shape (n_features, 2, max_bins)
    Their keys and weights (scratch of the sort: ties of the key go to the heavier
    category, then to the smaller bin).
best : uint64 array of shape (n_bin_words,)
    The bins going left of the best categorical split of the node being searched.
sets : uint64 array of shape (node capacity, n_bin_words)
    The bins going left of each node's recorded categorical split.
"""


def new_category_splits(is_categorical: np.ndarray, capacity: int, max_bins: int) -> CategorySplits:
    """``CategorySplits`` for a tree of at most ``capacity`` nodes over features marked by
    ``is_categorical`` (bool, (n_features,))."""
    n_features = len(is_categorical)
    n_words = (max_bins + 63) // 64
    return CategorySplits(
        np.ascontiguousarray(is_categorical, dtype=np.uint8), np.zeros((n_features, max_bins), dtype=np.int64),
        np.zeros((n_features, 2, max_bins)), np.zeros(n_words, dtype=np.uint64),
        np.zeros((capacity, n_words), dtype=np.uint64),
    )  # fmt: skip


@jit(inline="always")
def is_categorical(categories, feature):
    """Whether ``feature`` is categorical (``categories``: CategorySplits or None)."""
    if categories is None:
        return False
    return categories.is_categorical[feature] != 0


@jit(inline="always")
def _sort_by_key(order, keys, n):
    """Sort ``order[:n]`` by ``keys[0, :n]``, ties by decreasing weight ``keys[1, :n]`` (all
    permuted together), then in their current order (increasing bins): insertion sort, in
    place, no allocation (a node has at most ``max_bins`` categories). The weight makes
    the order, and so the split, independent of how the categories are numbered unless
    two share both key and weight."""
    for i in range(1, n):
        key = keys[0, i]
        weight = keys[1, i]
        b = order[i]
        j = i - 1
        while j >= 0 and (keys[0, j] > key or (keys[0, j] == key and keys[1, j] < weight)):
            keys[0, j + 1] = keys[0, j]
            keys[1, j + 1] = keys[1, j]
            order[j + 1] = order[j]
            j -= 1
        keys[0, j + 1] = key
        keys[1, j + 1] = weight
        order[j + 1] = b


@jit(inline="always")
def _order_categories(order, keys, n, max_cat_to_onehot):
    """Sort the ``n`` categories by key, unless they are few enough for one-vs-rest
    splits; returns whether they are (then each category alone is a candidate)."""
    one_vs_rest = n <= max_cat_to_onehot
    if not one_vs_rest:
        _sort_by_key(order, keys, n)
    return one_vs_rest


@jit(inline="always")
def _settle(order, n, best_k, reverse, one_vs_rest, missing_bin, has_missing):
    """(left set size, missing side) of the winning candidate, its left set moved to the
    front of ``order[:n]``: ``best_k`` is the position of the category going left alone
    (one-vs-rest) or the left set's size less one, counted from the end of the order
    when ``reverse``."""
    if one_vs_rest:
        b = order[best_k]
        order[best_k] = order[0]
        order[0] = b
        n_left = 1
    else:
        if reverse:
            for k in range(n // 2):
                b = order[k]
                order[k] = order[n - 1 - k]
                order[n - 1 - k] = b
        n_left = best_k + 1
    missing = _scans.MISSING_RIGHT
    if has_missing:
        for k in range(n_left):
            if order[k] == missing_bin:
                missing = _scans.MISSING_LEFT
    return n_left, missing


@jit(refcounted=False, callable_from_python=False)
def pooled_category_scan(histogram, n_bins, missing_bin, node, params, monotonic_cst, order, keys, best_gain):
    """The best set of categories of one feature from its pooled histogram (moment criteria).

    Up to ``max_cat_to_onehot`` categories in the node: each one alone against the rest.
    More: LightGBM's regularised scan of the key order (``FindBestThresholdCategorical``
    in its ``feature_histogram.hpp``). Only the categories of at least ``cat_smooth`` rows
    are ordered (the others go right with the rest); the left set grows from either end
    of the order to at most ``max_cat_threshold`` categories (and half of them); a cut is
    a candidate only once ``min_data_per_group`` rows joined the left set since the last
    candidate and while the right child holds as many; and the children's gain counts
    ``l2_regularization + cat_l2``. With ``cat_smooth = cat_l2 = 0``, no
    ``max_cat_threshold`` and ``min_data_per_group <= 1`` the scan reaches every cut of
    the order, whose best is the best of all subsets (Fisher 1958).

    Parameters
    ----------
    histogram : float64 or int32 array of shape (max_bins, n_hist_columns)
        ``pool.histograms[slot, feature]``.
    n_bins, missing_bin : int
    node : _scans.Node
    params : _builder.GrowthParams
    monotonic_cst : None or int8 array of shape (n_features,)
        As ``_scans.histogram_scan`` takes it (a categorical feature has no constraint,
        but a monotone split above bounds the node's value).
    order : int64 array of shape (max_bins,)
    keys : float64 array of shape (2, max_bins)
        Scratch; ``order`` holds the node's ordered categories after the scan, the left
        set first.
    best_gain : float

    Returns
    -------
    (is_constant, gain, number of categories going left, 0 when a cut beat ``best_gain``
    else -1, missing side): ``pooled_scan``'s tuple with the left set's size in place of
    the bin.
    """
    criterion = params.criterion
    weighted = histogram.shape[1] > _histograms.HIST_WEIGHT
    n_occupied = 0
    for b in range(n_bins):
        if histogram[b, _histograms.HIST_COUNT] > 0:
            n_occupied += 1
    if n_occupied <= 1:
        return True, best_gain, np.int64(-1), np.int64(-1), _scans.MISSING_RIGHT
    one_vs_rest = n_occupied <= params.max_cat_to_onehot
    n = 0
    for b in range(n_bins):
        count = histogram[b, _histograms.HIST_COUNT]
        if count == 0 or (not one_vs_rest and count < params.cat_smooth):
            continue
        weight = float(histogram[b, _histograms.HIST_WEIGHT]) if weighted else float(count)
        order[n] = b
        keys[0, n] = _criteria.category_key(criterion, histogram[b], weight, params.cat_smooth)
        keys[1, n] = weight
        n += 1
    n_node = node.end - node.start
    if one_vs_rest:
        l2 = params.l2_regularization
        n_candidates = n
        group = 1
    else:
        _sort_by_key(order, keys, n)
        l2 = params.l2_regularization + params.cat_l2
        n_candidates = (n + 1) // 2
        if 0 <= params.max_cat_threshold < n_candidates:
            n_candidates = params.max_cat_threshold
        group = params.min_data_per_group
    best_k = -1
    best_reverse = False
    for reverse in (False, True):
        if reverse and one_vs_rest:
            break
        left_first = 0.0
        left_second = 0.0
        left_weight = 0.0
        left_count = 0
        grouped = 0
        for k in range(n_candidates):
            b = order[n - 1 - k] if reverse else order[k]
            count = int(histogram[b, _histograms.HIST_COUNT])
            weight = float(histogram[b, _histograms.HIST_WEIGHT]) if weighted else 0.0
            if one_vs_rest:  # this category alone on the left
                left_first, left_second, left_weight, left_count = 0.0, 0.0, 0.0, 0
            left_first += histogram[b, _histograms.HIST_FIRST]
            left_second += histogram[b, _histograms.HIST_SECOND]
            left_weight += weight
            left_count += count
            grouped += count
            # As LightGBM: a left child too small is no candidate, and counts no group.
            if left_count < params.min_samples_leaf or (
                criterion == _criteria.NEWTON and left_second < params.min_child_weight
            ):
                continue
            if n_node - left_count < max(group, 1):
                break
            if grouped < group:
                continue
            grouped = 0
            gain = _criteria.candidate_gain(
                criterion, left_count, n_node, left_weight, node.weight, 0.0, 0.0, left_first, left_second,
                node.statistics[0], node.statistics[1], node.cost, l2, np.bool_(False), params.min_samples_leaf,
                params.min_child_weight, node.lower, node.upper, np.int64(0), monotonic_cst,
            )  # fmt: skip
            if gain > best_gain:
                best_gain = gain
                best_k = k
                best_reverse = reverse
    if best_k < 0:
        return False, best_gain, np.int64(-1), np.int64(-1), _scans.MISSING_RIGHT
    has_missing = missing_bin >= 0 and histogram[missing_bin, _histograms.HIST_COUNT] > 0
    n_left, missing = _settle(order, n, best_k, best_reverse, one_vs_rest, missing_bin, has_missing)
    return False, best_gain, np.int64(n_left), np.int64(0), missing


@jit(refcounted=False, callable_from_python=False)
def histogram_category_scan(X_binned, feature, missing_bin, rows, node, params, scratch, monotonic_cst, order, keys, best_gain):
    """The best set of categories of one feature from the node's rows (any criterion): the
    scratch histogram of ``_scans.histogram_scan``, its categories ordered and cut.

    Returns what ``pooled_category_scan`` returns; ``order`` as there. The scratch is
    all zero on entry and is left so.
    """
    criterion = params.criterion
    _scans.fill_scratch(X_binned, feature, rows, node.start, node.end, criterion, scratch)
    histogram = scratch.histogram
    occupied = scratch.occupied
    n = 0
    for word_index in range(len(occupied)):
        word = occupied[word_index]
        occupied[word_index] = np.uint64(0)
        while word != np.uint64(0):
            word, bit = pop_lowest_bit(word)
            b = word_index * 64 + bit
            order[n] = b
            keys[0, n] = _criteria.category_key(criterion, histogram[b], scratch.histogram_weight[b], params.cat_smooth)
            keys[1, n] = scratch.histogram_weight[b]
            n += 1
    best_k = -1
    one_vs_rest = False
    if n > 1:
        one_vs_rest = _order_categories(order, keys, n, params.max_cat_to_onehot)
        integer_weights = rows.integer_weights
        n_node = node.end - node.start
        tolerance = _criteria.screening_tolerance(node.weight)
        left = scratch.left
        right_terms = _criteria.sweep_start(criterion, left, node.statistics, integer_weights)
        left_terms = 0.0
        left_weight = 0.0
        left_count = 0
        for k in range(n if one_vs_rest else n - 1):
            if one_vs_rest:  # this category alone on the left
                right_terms = _criteria.sweep_start(criterion, left, node.statistics, integer_weights)
                left_terms, left_weight, left_count = 0.0, 0.0, 0
            left_terms, right_terms, moved_weight, moved_count = _scans.move_bin(
                scratch, order[k], criterion, node.statistics, integer_weights, left_terms, right_terms, False
            )
            left_weight += moved_weight
            left_count += moved_count
            gain = _criteria.sweep_gain(
                criterion, left_count, n_node, left_weight, node.weight, left_terms, right_terms, left, node.statistics,
                node.cost, params.l2_regularization, integer_weights, params.min_samples_leaf, params.min_child_weight,
                best_gain, tolerance, node.lower, node.upper, np.int64(0), monotonic_cst,
            )  # fmt: skip
            if gain > best_gain:
                best_gain = gain
                best_k = k
    has_missing = missing_bin >= 0 and scratch.histogram_count[missing_bin] > 0
    for k in range(n):  # leave the scratch zero
        b = order[k]
        for s in range(histogram.shape[1]):
            histogram[b, s] = 0.0
        scratch.histogram_weight[b] = 0.0
        scratch.histogram_count[b] = 0
    if n <= 1:
        return True, best_gain, np.int64(-1), np.int64(-1), _scans.MISSING_RIGHT
    if best_k < 0:
        return False, best_gain, np.int64(-1), np.int64(-1), _scans.MISSING_RIGHT
    n_left, missing = _settle(order, n, best_k, False, one_vs_rest, missing_bin, has_missing)
    return False, best_gain, np.int64(n_left), np.int64(0), missing


@jit(inline="always")
def keep_best(categories, order, n_left):
    """Record the first ``n_left`` bins of ``order`` as the best split's left set (``categories.best``)."""
    best = categories.best
    for w in range(len(best)):
        best[w] = np.uint64(0)
    for k in range(n_left):
        b = order[k]
        best[b >> 6] |= np.uint64(1) << np.uint64(b & 63)


@jit(inline="always")
def record_split(categories, node):
    """Copy the best split's left set to ``node``'s row of ``categories.sets``."""
    for w in range(len(categories.best)):
        categories.sets[node, w] = categories.best[w]
