"""The tree builder: one numba kernel that grows a tree for every estimator (ARCHITECTURE.md §3).

A node owns a contiguous range ``samples[start:end]`` of row indices. When a node is
created the builder sums its statistics, computes its value and looks for its best
split; splittable nodes wait in a frontier. Popping a node partitions its range in
place and creates the two children. The frontier is a binary max-heap, so every
expansion order is a choice of priority (ties go to the older node):

==========  =====================================  ============================
expansion   priority                               order
==========  =====================================  ============================
depth       depth * 2**32 - node id                depth-first, left child first
breadth     -node id                               level by level
best        split gain                             best-first (``max_leaf_nodes``)
random      uniform draw                           random
biggest     number of samples                      largest node first
relevant    node value (mean relevance)            most-relevant first
==========  =====================================  ============================

(Ibrahim & Carman §4.3.3 and appendix A on why the order matters with a leaf budget
or a listwise objective.) Without ``max_leaf_nodes`` every order yields a tree of the
same shape distribution; the order changes which random numbers each node draws. So a
tree with listwise splits and no leaf budget follows ``expansion`` until its last
listwise split and grows its remaining (pointwise) nodes depth-first, the order that
keeps a node's rows in the caches from its parent's partition to its own split.
"""

import numpy as np

from .._jit import jit
from .._prefetch import GATHER_DISTANCE, prefetch
from . import _criteria, _listwise, _rng, _splitter

DEPTH = 0
BREADTH = 1
BEST = 2
RANDOM = 3
BIGGEST = 4
RELEVANT = 5
EXPANSIONS = {"depth": DEPTH, "breadth": BREADTH, "best": BEST, "random": RANDOM, "biggest": BIGGEST, "relevant": RELEVANT}

LEAF_MEAN = 0
LEAF_NEWTON = 1


@jit(inline="always")
def _before(priority, a, b):
    """Heap order: higher priority first, then the older (smaller id) node."""
    return priority[a] > priority[b] or (priority[a] == priority[b] and a < b)


@jit(inline="always")
def _heap_push(heap, size, priority, node):
    position = size
    heap[position] = node
    while position > 0:
        parent = (position - 1) // 2
        if not _before(priority, heap[position], heap[parent]):
            break
        heap[position], heap[parent] = heap[parent], heap[position]
        position = parent
    return size + 1


@jit(inline="always")
def _depth_first_priority(node_depth, node):
    """Priority of ``node`` in depth-first order (the deepest first, then the older)."""
    return node_depth[node] * 4294967296.0 - node


@jit(inline="always")
def _heap_pop(heap, size, priority):
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and _before(priority, heap[child + 1], heap[child]):
            child += 1
        if not _before(priority, heap[child], heap[position]):
            break
        heap[position], heap[child] = heap[child], heap[position]
        position = child
    return top, size


@jit(refcounted=False)
def _partition(X_binned, samples, row_targets, row_weights, start, end, feature, threshold_bin, spill_samples, spill_targets, spill_weights):
    """Stable partition of positions ``start:end``: rows with bin <= ``threshold_bin`` first.

    ``samples``, ``row_targets`` and ``row_weights`` move together. Stability keeps
    every node's rows in increasing row order, so the per-feature gathers of
    ``X_binned`` walk each column forwards (shared cache lines, hardware prefetch);
    measured faster than the in-place two-pointer swap despite the extra copy::

        before   | a1 b1 a2 a3 b2 |        a = goes left, b = goes right
        scan     | a1 a2 a3 .. .. |  spill: b1 b2
        after    | a1 a2 a3 b1 b2 |

    Left rows are compacted in place (the write index never passes the read index);
    right rows wait in the ``spill_*`` scratch and are copied back behind them.
    Returns the first right position.
    """
    n_columns = row_targets.shape[1]
    write = start
    n_spilled = 0
    for read in range(start, end):
        if read + GATHER_DISTANCE < end:
            prefetch(X_binned, (samples[read + GATHER_DISTANCE], feature))
        if X_binned[samples[read], feature] <= threshold_bin:
            samples[write] = samples[read]
            row_weights[write] = row_weights[read]
            for column in range(n_columns):
                row_targets[write, column] = row_targets[read, column]
            write += 1
        else:
            spill_samples[n_spilled] = samples[read]
            spill_weights[n_spilled] = row_weights[read]
            for column in range(n_columns):
                spill_targets[n_spilled, column] = row_targets[read, column]
            n_spilled += 1
    middle = write
    for k in range(n_spilled):
        samples[middle + k] = spill_samples[k]
        row_weights[middle + k] = spill_weights[k]
        for column in range(n_columns):
            row_targets[middle + k, column] = spill_targets[k, column]
    return middle


@jit(inline="always")
def _threshold(bin_thresholds, bin_values, feature, left_bin, right_bin):
    """Raw-value cut between the last bin going left and the first occupied bin going right.

    The midpoint of the two bins' values, as CART places it between the node's
    neighbouring values (Breiman et al. 1984; scikit-learn), kept within
    ``[edge(left_bin), edge(right_bin - 1)]`` so that raw values partition the
    training rows exactly as the bins did. With one bin per distinct value
    (``max_bins=None`` or few values) it is scikit-learn's threshold.
    """
    low = bin_values[feature, left_bin]
    high = bin_values[feature, right_bin]
    middle = (low + high) / 2
    if not middle < high:  # the midpoint of adjacent doubles can round up
        middle = low
    return min(max(middle, bin_thresholds[feature, left_bin]), bin_thresholds[feature, right_bin - 1])


@jit(refcounted=False)
def _node_statistics(
    row_targets, row_weights, leaf_targets, samples, start, end, classes, squared, mean_leaves, statistics
):  # fmt: skip
    """Fill ``statistics`` for positions ``start:end``; returns (weight, sum of w * leaf target).

    The leaf-target sum (a gather by row id) is skipped unless ``mean_leaves``.
    """
    for s in range(len(statistics)):
        statistics[s] = 0.0
    node_weight = 0.0
    target_sum = 0.0
    for position in range(start, end):
        weight = row_weights[position]
        first = row_targets[position, 0]
        if classes:
            statistics[int(first)] += weight
        else:
            statistics[0] += weight * first
            statistics[1] += weight * (first * first if squared else row_targets[position, 1])
        node_weight += weight
        if mean_leaves:
            target_sum += weight * leaf_targets[samples[position]]
    return node_weight, target_sum


@jit(refcounted=False)
def _pointwise_split(
    X_binned, n_bins, bin_values, row_targets, row_weights, samples, start, end, criterion, l2_regularization,
    integer_weights, statistics, node_weight, scale, min_samples_leaf, min_child_weight, min_gain_to_split,
    max_features, features, rng_state, histogram, histogram_weight, histogram_count, bin_class, occupied, sweep_order,
    left, histograms, slot,
):  # fmt: skip
    """Best split of a node for a decomposable (or the random) criterion.

    ``sweep_order``, ``histograms`` and ``slot`` choose the scan (``_splitter.best_split``). Returns
    (feature, bin, next bin, unscaled gain); feature -1 when the node is pure or no
    split passes ``min_gain_to_split``.
    """
    n_stats = len(statistics)
    classes = _criteria.uses_classes(criterion)
    if classes:
        term_sum = 0.0
        n_present = 0
        for c in range(n_stats):
            term_sum += _criteria.class_term(criterion, statistics[c], integer_weights)
            n_present += statistics[c] > 0.0
        node_cost = _criteria.class_cost(criterion, node_weight, term_sum, integer_weights)
        pure = n_present <= 1
    else:
        node_cost = _criteria.moment_cost(criterion, statistics[0], statistics[1], node_weight, l2_regularization)
        pure = criterion == _criteria.VARIANCE and node_cost <= 1e-12 * max(statistics[1], 1e-300)
    if pure:
        return -1, -1, -1, 0.0
    if criterion == _criteria.RANDOM:
        feature, b, after = _splitter.random_split(X_binned, n_bins, bin_values, samples, start, end, features, rng_state)
        gain = 0.0
        if feature >= 0:  # its impurity decrease, for feature importances
            for c in range(n_stats):
                left[c] = 0.0
            left_weight = 0.0
            for position in range(start, end):
                if X_binned[samples[position], feature] <= b:
                    left[int(row_targets[position, 0])] += row_weights[position]
                    left_weight += row_weights[position]
            gain = _splitter.exact_class_gain(criterion, left, statistics, left_weight, node_weight, node_cost, integer_weights)
        return feature, b, after, gain
    feature, b, after, gain = _splitter.best_split(
        X_binned, n_bins, row_targets, row_weights, samples, start, end, criterion, l2_regularization, integer_weights,
        statistics, node_weight, node_cost, min_samples_leaf, min_child_weight, max_features, features, rng_state,
        histogram, histogram_weight, histogram_count, bin_class, occupied, sweep_order, left, histograms, slot,
    )  # fmt: skip
    if feature >= 0 and not gain * scale > min_gain_to_split:
        feature = -1
    return feature, b, after, gain


@jit(inline="always")
def _splittable(count, depth, max_depth, min_samples_split, min_samples_leaf):
    """Whether the size and depth limits allow splitting a node at all."""
    return not ((max_depth >= 0 and depth >= max_depth) or count < min_samples_split or count < 2 * min_samples_leaf)


_FILL_LATER = -2  # node_slot: sum the node's histograms from its rows when it is processed


@jit(refcounted=False)
def _fill(X_binned, row_targets, row_weights, samples, start, end, squared, histograms, slot, n_threads):
    """``fill_histograms``, on ``n_threads`` numba threads when more than one."""
    if n_threads > 1:
        _splitter.fill_histograms_parallel(
            X_binned, row_targets, row_weights, samples, start, end, squared, histograms, slot, n_threads
        )
    else:
        _splitter.fill_histograms(X_binned, row_targets, row_weights, samples, start, end, squared, histograms, slot)


@jit
def _take_slot(free_slots, n_free, scratch):
    """A free pool slot, or the scratch slot (filled and released within one node) if none is left.

    Returns (slot, new n_free).
    """
    if n_free == 0:
        return scratch, 0
    return free_slots[n_free - 1], n_free - 1


@jit
def _release_slot(node_slot, node, free_slots, n_free, scratch):
    """Return the node's pool slot to the free list; returns the new n_free."""
    slot = node_slot[node]
    node_slot[node] = -1
    if slot >= 0 and slot != scratch:
        free_slots[n_free] = slot
        n_free += 1
    return n_free


@jit(refcounted=False)
def _pair_histograms(
    X_binned, row_targets, row_weights, samples, squared, histograms, node_slot, free_slots, n_free, scratch,
    parent, left_child, need_left, need_right, node_start, node_end, n_threads,
):  # fmt: skip
    """Histograms of two new siblings by the subtraction trick.

    The smaller child's histograms are summed from its rows and the larger child's
    are the parent's minus them, computed in the parent's slot (which passes to the
    larger child). Siblings that will not be searched (``need_*`` false) get no
    slot; without a parent slot each needed child is summed when processed.
    Returns the new n_free.
    """
    right_child = left_child + 1
    parent_slot = node_slot[parent]
    node_slot[parent] = -1
    if node_end[left_child] - node_start[left_child] <= node_end[right_child] - node_start[right_child]:
        small, large, need_small, need_large = left_child, right_child, need_left, need_right
    else:
        small, large, need_small, need_large = right_child, left_child, need_right, need_left
    if parent_slot >= 0 and need_large:
        slot = scratch
        if need_small:
            slot, n_free = _take_slot(free_slots, n_free, scratch)
        _fill(X_binned, row_targets, row_weights, samples, node_start[small], node_end[small], squared, histograms, slot, n_threads)
        _splitter.subtract_histograms(histograms, parent_slot, slot)
        node_slot[large] = parent_slot
        node_slot[small] = slot if need_small else -1
        return n_free
    if parent_slot >= 0:
        free_slots[n_free] = parent_slot
        n_free += 1
    node_slot[left_child] = _FILL_LATER if need_left else -1
    node_slot[right_child] = _FILL_LATER if need_right else -1
    return n_free


# Listwise gains below this (in mean expected NDCG) are rounding noise, not a split.
_LISTWISE_GAIN_NOISE = 1e-12


@jit
def build_tree(
    X_binned, n_bins, bin_thresholds, bin_values, targets, leaf_targets, weights, samples, criterion,
    n_classes, l2_regularization, leaf_kind, max_depth, min_samples_split, min_samples_leaf,
    min_child_weight, min_gain_to_split, max_leaf_nodes, max_features, expansion, rng_state, sweep_order,
    histograms, listwise, n_threads, nodes, values, n_node_samples, weighted_n_node_samples, feature_gains, row_leaf,
):  # fmt: skip
    """Grow one tree.

    Parameters
    ----------
    X_binned : uint8/uint16/uint32 array of shape (n_rows, n_features), C order
        Shared read-only by all trees.
    n_bins : int32 array of shape (n_features,)
    bin_thresholds, bin_values : float64 arrays of shape (n_features, max_bins)
        Upper edge and representative value of each bin (``_binning.BinMapper``).
    targets : float64 array of shape (n_rows, n_target_columns)
        Criterion inputs per row (class index, y, or gradient and hessian).
    leaf_targets : float64 array of shape (n_rows,)
        Per-row value averaged into leaf values when ``leaf_kind == LEAF_MEAN``.
    weights : float64 array of shape (n_rows,)
        Weight of each row in this tree (sample weight times sampling count).
    samples : int64 array of shape (n_tree_rows,)
        Rows of this tree (weight > 0) in increasing order; reordered in place.
    criterion, n_classes, l2_regularization : int, int, float
        See ``_criteria``; the criterion of the nodes not split listwise.
    leaf_kind : int
        ``LEAF_MEAN``: weighted mean of ``leaf_targets``; ``LEAF_NEWTON``:
        ``-sum(w g) / (sum(w h) + l2_regularization)``.
    max_depth, max_leaf_nodes : int
        -1 for no limit.
    min_samples_split, min_samples_leaf : int
    min_child_weight : float
        Minimum weight (hessian sum for newton) of each child.
    min_gain_to_split : float
        A split is made only if its scaled gain (``_criteria.gain_scale``; the change
        of mean expected NDCG for listwise splits) is larger.
    max_features : int
        Usable features examined per node.
    expansion : int
        Module constant (``DEPTH`` ... ``RELEVANT``).
    rng_state : uint64 array of shape (2,)
    sweep_order : None or int64 array of shape (>= n_tree_rows, 3)
        None: histogram scans. An array: the sorted sweep (the stateful-criterion
        path; tests), with this scratch.
    histograms : None or float64 array of shape (n_slots >= 2, n_features, max_bins, n_hist_columns)
        The histogram pool of the sibling subtraction (``_grow.histogram_pool``; moment
        criteria examining every feature), overwritten; None: no pool.
    listwise : None or tuple
        None: no listwise split. Otherwise ``(listwise_depth, max_queries,
        query_of_row, query_boundaries, row_gains, copies, query_weights,
        cumulative_discount)``: nodes shallower than ``listwise_depth`` (int > 0) split
        with the listwise criterion (``_listwise``), every node being evaluated when
        it is expanded, against the tree as it is then (Algorithm 4 of Ibrahim &
        Carman), not when created. ``max_queries`` (int) queries are sampled per
        listwise split (-1: all); ``query_of_row`` (int64, (n_rows,)) and
        ``query_boundaries`` (int64, (n_queries + 1,)) give the queries (rows grouped
        by query); ``row_gains`` and ``copies`` (float64, (n_rows,)) are ``2^l - 1``
        and each row's copies in this tree; ``query_weights`` (float64,
        (n_queries,)) each query's weight in the mean expected NDCG;
        ``cumulative_discount`` is ``_listwise.cumulative_discounts``.

    The three optional arguments are None or not per call *type*: numba prunes the
    branches of a None argument before typing (dead branch pruning), so a pointwise
    forest's specialisation compiles neither the listwise criterion, nor the pool,
    nor the sorted sweep (a cold compile of all of them costs ~30 s on two cores,
    against ~12 s for the random forest's path; ``benchmarks/bench_compile.py``).
    n_threads : int
        numba threads summing the pooled histograms; 1 whenever the caller runs
        in a joblib thread (forests), since parallel kernels must not run there.
    nodes : NODE_DTYPE array of shape (>= 2 * n_tree_rows - 1,)
        Output: ``feature`` (-1 for leaves), ``left`` (the right child is
        ``left + 1``), ``threshold`` (raw-value cut, see ``_threshold``; the value
        for leaves).
    values, n_node_samples, weighted_n_node_samples : arrays of the same length
        Output: value, row count and weight of every node.
    feature_gains : float64 array of shape (n_features,)
        Output: accumulated scaled gain of the splits on each feature.
    row_leaf : int64 array of shape (n_rows,) or (0,)
        Output unless empty: the leaf of every row in ``samples`` (others untouched),
        so that boosting updates its training scores without traversing the tree.

    Returns
    -------
    int
        Number of nodes written.
    """
    n_rows = len(samples)
    n_features = X_binned.shape[1]
    n_stats = _criteria.n_statistics(criterion, n_classes)
    classes = _criteria.uses_classes(criterion)
    squared = criterion == _criteria.VARIANCE
    capacity = len(nodes)
    node_start = np.empty(capacity, dtype=np.int64)
    node_end = np.empty(capacity, dtype=np.int64)
    node_depth = np.empty(capacity, dtype=np.int64)
    node_parent = np.empty(capacity, dtype=np.int64)  # written only with a pool or listwise splits
    split_feature = np.empty(capacity, dtype=np.int64)
    split_bin = np.empty(capacity, dtype=np.int64)
    split_threshold = np.empty(capacity, dtype=np.float64)
    split_gain = np.empty(capacity, dtype=np.float64)
    priority = np.empty(capacity, dtype=np.float64)
    heap = np.empty(capacity, dtype=np.int64)

    max_bins = bin_thresholds.shape[1]
    histogram = np.zeros((max_bins, n_stats))  # per-bin scratch, kept all-zero between scans
    histogram_weight = np.zeros(max_bins)
    histogram_count = np.zeros(max_bins, dtype=np.int64)
    bin_class = np.zeros(max_bins, dtype=np.int64)
    occupied = np.zeros((max_bins + 63) // 64, dtype=np.uint64)
    statistics = np.empty(n_stats)
    left = np.empty(n_stats)
    features = np.arange(n_features).astype(np.int32)
    spill_samples = np.empty(n_rows, dtype=np.int64)
    spill_targets = np.empty((n_rows, targets.shape[1]))
    spill_weights = np.empty(n_rows)
    # Not a literal -1 where it is passed: numba would compile _pointwise_split (and
    # everything under it) a second time for the type Literal[int](-1).
    no_slot = np.int64(-1)

    # Histogram pool: each frontier node keeps its all-feature histograms so that its
    # children cost one pass over the smaller child's rows (``_pair_histograms``). The
    # last slot is scratch.
    if histograms is not None:
        scratch = len(histograms) - 1
        free_slots = np.arange(scratch)
        n_free = scratch
        node_slot = np.full(capacity, -1, dtype=np.int64)

    # Listwise state: every query's tie blocks over the tree, and the per-node query
    # structures of ``_listwise.prepare_node``.
    if listwise is not None:
        listwise_depth, max_queries, query_of_row, query_boundaries, row_gains, copies, query_weights, cumulative_discount = listwise  # fmt: skip
        n_list_rows = X_binned.shape[0]
        n_list_queries = len(query_boundaries) - 1
        tree_blocks = np.empty((n_list_rows, _listwise.N_TREE_BLOCK_COLUMNS))
        n_query_blocks = np.zeros(n_list_queries, dtype=np.int64)
        query_scales = np.zeros(n_list_queries)
        query_slot = np.full(n_list_queries, -1, dtype=np.int64)
        slot_values = np.empty((n_list_queries, _listwise.N_SLOT_COLUMNS))
        slot_ints = np.empty((n_list_queries, _listwise.N_SLOT_INT_COLUMNS), dtype=np.int64)
        blocks = np.empty((_listwise.N_BLOCK_FIELDS, n_list_rows))
        event_scores = np.empty(n_list_rows)
        event_blocks = np.empty(n_list_rows, dtype=np.int64)
        spare_scores = np.empty(n_list_rows)
        spare_blocks = np.empty(n_list_rows, dtype=np.int64)  # also the sweeps' kept events (a node has 2+ rows)
        table_scores, table_counts = _listwise.event_sort_table(n_list_rows)
        touched = np.empty(n_list_queries + 1, dtype=np.int64)  # a spare entry: ``_listwise._list_once``
        listed = np.empty(n_list_queries + 1, dtype=np.int64)
        open_slots = np.empty(n_list_queries, dtype=np.int64)
        position_slot = np.empty(n_rows, dtype=np.int64)
        position_values = np.empty((n_rows, _listwise.N_POSITION_COLUMNS))
        order = np.empty((n_rows, 3), dtype=np.int64)
        largest_query = 0
        for q in range(n_list_queries):
            largest_query = max(largest_query, query_boundaries[q + 1] - query_boundaries[q])
        total_query_weight = _listwise.query_scales(
            query_boundaries, row_gains, copies, query_weights, cumulative_discount, query_scales,
            np.empty(largest_query),
        )  # fmt: skip
        listwise_scale = 1.0 / total_query_weight if total_query_weight > 0.0 else 0.0
        horizon = _listwise.discount_horizon(cumulative_discount)

    # Targets and weights in sample order, permuted with ``samples`` by every
    # partition, so that scans read them sequentially instead of by row id.
    row_targets = np.empty((n_rows, targets.shape[1]))
    row_weights = np.empty(n_rows)
    total_weight = 0.0
    n_fractional = 0
    for i in range(n_rows):
        for column in range(targets.shape[1]):
            row_targets[i, column] = targets[samples[i], column]
        row_weights[i] = weights[samples[i]]
        total_weight += row_weights[i]
        n_fractional += row_weights[i] != np.floor(row_weights[i])
    # Not a literal ``True`` updated in the loop: numba would type the splitter calls
    # twice (Literal[bool] and bool) and compile everything below them twice.
    integer_weights = n_fractional == 0
    mean_leaves = leaf_kind == LEAF_MEAN
    scale = _criteria.gain_scale(criterion, total_weight)

    node_start[0] = 0
    node_end[0] = n_rows
    node_depth[0] = 0
    n_nodes = 1
    n_leaves = 1
    heap_size = 0
    # Nodes in the heap that will split listwise. Once none is left and new nodes
    # are too deep to, no listwise evaluation can come (every later node descends
    # from those), so the tie blocks stop being updated: for RF-hybrid the deep,
    # pointwise part of the tree then costs what it costs RF-point.
    listwise_waiting = 0
    current_expansion = expansion
    next_node = 0  # nodes [next_node, n_nodes) still need their value
    while True:
        # New nodes: value; then their best split now, or (listwise) when expanded.
        while next_node < n_nodes:
            node = next_node
            next_node += 1
            start = node_start[node]
            end = node_end[node]
            node_weight, target_sum = _node_statistics(
                row_targets, row_weights, leaf_targets, samples, start, end, classes, squared, mean_leaves, statistics
            )
            if leaf_kind == LEAF_NEWTON:
                curvature = statistics[1] + l2_regularization
                value = -statistics[0] / curvature if curvature > 0.0 else 0.0
            else:
                value = target_sum / node_weight
            nodes[node]["feature"] = -1
            nodes[node]["left"] = -1
            nodes[node]["threshold"] = value
            values[node] = value
            n_node_samples[node] = end - start
            weighted_n_node_samples[node] = node_weight
            if listwise is not None:
                if node == 0:
                    _listwise.start_query_blocks(query_boundaries, row_gains, copies, value, tree_blocks, n_query_blocks)
                elif listwise_waiting > 0 or node_depth[node] < listwise_depth:
                    _listwise.move_to_child(
                        samples, start, end, values[node_parent[node]], value, query_of_row, query_boundaries,
                        row_gains, copies, tree_blocks, n_query_blocks, query_slot, slot_values, slot_ints,
                    )  # fmt: skip

            count = end - start
            budget_left = max_leaf_nodes < 0 or n_leaves < max_leaf_nodes
            splittable = budget_left and _splittable(count, node_depth[node], max_depth, min_samples_split, min_samples_leaf)
            slot = no_slot
            if histograms is not None:
                if node == 0:
                    node_slot[0] = _FILL_LATER if splittable else -1
                elif node == nodes[node_parent[node]]["left"]:
                    sibling = node + 1
                    sibling_splittable = budget_left and _splittable(
                        node_end[sibling] - node_start[sibling], node_depth[sibling], max_depth, min_samples_split,
                        min_samples_leaf,
                    )  # fmt: skip
                    n_free = _pair_histograms(
                        X_binned, row_targets, row_weights, samples, squared, histograms, node_slot, free_slots,
                        n_free, scratch, node_parent[node], node, splittable, sibling_splittable, node_start, node_end,
                        n_threads,
                    )  # fmt: skip
                if node_slot[node] == _FILL_LATER:
                    slot, n_free = _take_slot(free_slots, n_free, scratch)
                    _fill(X_binned, row_targets, row_weights, samples, start, end, squared, histograms, slot, n_threads)
                    node_slot[node] = slot
                slot = node_slot[node]
            if not splittable:
                continue
            gain = 0.0
            if listwise is None:
                feature, b, after, gain = _pointwise_split(
                    X_binned, n_bins, bin_values, row_targets, row_weights, samples, start, end, criterion,
                    l2_regularization, integer_weights, statistics, node_weight, scale, min_samples_leaf,
                    min_child_weight, min_gain_to_split, max_features, features, rng_state, histogram,
                    histogram_weight, histogram_count, bin_class, occupied, sweep_order, left, histograms, slot,
                )  # fmt: skip
                if histograms is not None:
                    if slot >= 0 and (feature < 0 or slot == scratch):
                        n_free = _release_slot(node_slot, node, free_slots, n_free, scratch)
                if feature < 0:
                    continue
                split_feature[node] = feature
                split_bin[node] = b
                split_threshold[node] = _threshold(bin_thresholds, bin_values, feature, b, after)
                split_gain[node] = gain * scale
                if expansion == BEST:
                    priority[node] = gain
            elif expansion == BEST:  # listwise gains are known only at expansion
                priority[node] = -node
            if current_expansion == DEPTH:
                priority[node] = _depth_first_priority(node_depth, node)
            elif current_expansion == BREADTH:
                priority[node] = -node
            elif current_expansion == RANDOM:
                priority[node] = _rng.uniform(rng_state)
            elif current_expansion == BIGGEST:
                priority[node] = count
            elif current_expansion == RELEVANT:
                priority[node] = value
            heap_size = _heap_push(heap, heap_size, priority, node)
            if listwise is not None and node_depth[node] < listwise_depth:
                listwise_waiting += 1

        if heap_size == 0 or (max_leaf_nodes >= 0 and n_leaves >= max_leaf_nodes):
            break
        if listwise is not None and listwise_waiting == 0 and max_leaf_nodes < 0 and current_expansion != DEPTH:
            # The last listwise split is made. Without a leaf budget the order of the
            # pointwise nodes left changes only which random numbers each draws, and
            # depth-first pops a node while the partition that made it is still in
            # the caches: an RF-hybrid tree (``listwise_depth=6``, 200k rows of
            # ``make_ranking``) takes 0.94 s so, against 1.08 s breadth-first to the
            # end. Re-heap the frontier by depth-first priority.
            current_expansion = DEPTH
            for i in range(heap_size):
                priority[heap[i]] = _depth_first_priority(node_depth, heap[i])
            for i in range(heap_size):
                _heap_push(heap, i, priority, heap[i])
        node, heap_size = _heap_pop(heap, heap_size, priority)
        start = node_start[node]
        end = node_end[node]
        if listwise is not None:  # evaluate against the tree as it is now
            node_weight, target_sum = _node_statistics(
                row_targets, row_weights, leaf_targets, samples, start, end, classes, squared, mean_leaves, statistics
            )
            if node_depth[node] < listwise_depth:
                listwise_waiting -= 1
                n_present = 0
                for c in range(n_stats):
                    n_present += statistics[c] > 0.0
                if classes and n_present <= 1:  # one grade: no split changes any score
                    continue
                n_slots, n_events, parent_total = _listwise.prepare_node(
                    samples, start, end, values[node], row_weights, leaf_targets, query_of_row, query_boundaries,
                    tree_blocks, n_query_blocks, row_gains, copies, query_scales, max_queries, rng_state,
                    cumulative_discount, horizon, query_slot, slot_values, slot_ints, blocks, event_scores,
                    event_blocks, spare_scores, spare_blocks, table_scores, table_counts, position_slot,
                    position_values,
                )  # fmt: skip
                feature, b, after, gain = _listwise.best_listwise_split(
                    X_binned, samples, start, end, row_weights, position_slot, position_values, node_weight,
                    target_sum, values[node], min_samples_leaf, min_child_weight, max_features, features, rng_state,
                    cumulative_discount, slot_values, slot_ints, blocks, n_slots, event_scores, event_blocks, n_events,
                    parent_total, histogram_count, occupied, order, touched, listed, open_slots, spare_blocks,
                )  # fmt: skip
                _listwise.release_node(query_slot, slot_ints, n_slots)
                gain *= listwise_scale
                if feature >= 0 and not gain > max(min_gain_to_split, _LISTWISE_GAIN_NOISE):
                    feature = -1
            else:
                feature, b, after, gain = _pointwise_split(
                    X_binned, n_bins, bin_values, row_targets, row_weights, samples, start, end, criterion,
                    l2_regularization, integer_weights, statistics, node_weight, scale, min_samples_leaf,
                    min_child_weight, min_gain_to_split, max_features, features, rng_state, histogram,
                    histogram_weight, histogram_count, bin_class, occupied, sweep_order, left, histograms, no_slot,
                )  # fmt: skip
                gain *= scale
            if feature < 0:
                continue
            split_feature[node] = feature
            split_bin[node] = b
            split_threshold[node] = _threshold(bin_thresholds, bin_values, feature, b, after)
            split_gain[node] = gain
        feature = split_feature[node]
        b = split_bin[node]
        middle = _partition(
            X_binned, samples, row_targets, row_weights, start, end, feature, b, spill_samples, spill_targets,
            spill_weights,
        )  # fmt: skip
        nodes[node]["feature"] = feature
        nodes[node]["left"] = n_nodes
        nodes[node]["threshold"] = split_threshold[node]
        feature_gains[feature] += split_gain[node]
        for child, child_start, child_end in ((n_nodes, start, middle), (n_nodes + 1, middle, end)):
            node_start[child] = child_start
            node_end[child] = child_end
            node_depth[child] = node_depth[node] + 1
            node_parent[child] = node
        n_nodes += 2
        n_leaves += 1
    if len(row_leaf) > 0:
        for node in range(n_nodes):
            if nodes[node]["feature"] < 0:
                for position in range(node_start[node], node_end[node]):
                    row_leaf[samples[position]] = node
    return n_nodes
