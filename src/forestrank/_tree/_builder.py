"""The tree builder: one numba kernel that grows a tree for every estimator.

A node owns a contiguous range of the tree's rows (``_rows``). When a node is
created the builder sums its statistics and value, places it in the listwise
blocks and the histogram pool where those apply, and looks for its best split
(``_splitter``); splittable nodes wait in the frontier (``_frontier``), whose
priority is the expansion order. Popping a node partitions its range and creates
its two children.

A three-way split (``missing_direction="separate"``: the node's missing rows set
apart, Mohan's Eq. 2.1) is stored as two binary nodes: a "missing?" test (threshold
-inf, missing rows left) whose right child is *forced* to split at the value cut the
scan chose. The forced node is expanded right after its parent, without a search, and
its children have its depth: the three-way split counts as one level for
``max_depth``.

A tree with listwise splits evaluates each node when it is expanded, against the
tree as it is then (Algorithm 4 of Ibrahim & Carman), not when it is created.
Without ``max_leaf_nodes`` every expansion order yields a tree of the same shape
distribution (the order changes which random numbers each node draws), so such a
tree follows ``expansion`` until its last listwise split and grows its remaining
(pointwise) nodes depth-first, the order that keeps a node's rows in the caches
from its parent's partition to its own split.

Node values are the weighted mean of ``leaf_targets`` over the node's rows; a caller
that computes its own (boosting's Newton steps) passes none and gets 0.
"""

from collections import namedtuple

import numpy as np

from .._numba.jit import jit
from . import _categories, _criteria, _frontier, _histograms, _listwise, _pooled_fill, _remote, _rows, _scans, _splitter

# ``TreeOutput.missing_left`` of a split node that had no missing rows, until settled.
_UNSEEN = 2

Binned = namedtuple("Binned", ["X_binned", "n_bins", "missing_bins", "bin_thresholds", "bin_values"])
Binned.__doc__ = """The binned training matrix, shared read-only by every tree of a fit.

X_binned : uint8/uint16/uint32 array of shape (n_rows, n_features), C order
n_bins : int32 array of shape (n_features,)
    Bins per feature, the missing bin included.
missing_bins : int32 array of shape (n_features,)
    Each feature's missing bin (its last), -1 when it has none.
bin_thresholds, bin_values : float64 arrays of shape (n_features, max_bins)
    Upper edge and representative value of each bin (``_tree._binning.BinMapper``).
"""

GrowthParams = namedtuple(
    "GrowthParams",
    [
        "criterion", "n_classes", "l2_regularization", "max_depth", "min_samples_split", "min_samples_leaf",
        "min_child_weight", "min_gain_to_split", "max_leaf_nodes", "max_features", "expansion", "n_threads",
        "missing_direction", "cat_smooth", "max_cat_to_onehot", "max_cat_threshold", "min_data_per_group", "cat_l2",
    ],
)  # fmt: skip
GrowthParams.__doc__ = """Integer-coded growth parameters (ints as int64, the rest float64; -1 = no limit).

criterion, n_classes, l2_regularization :
    See ``_criteria``; the criterion of the nodes not split listwise.
max_depth, max_leaf_nodes : int
min_samples_split, min_samples_leaf : int
min_child_weight : float
    Minimum weight (hessian sum for newton) of each child.
min_gain_to_split : float
    A split is made only if its scaled gain (``_criteria.gain_scale``; the change of
    mean expected NDCG for listwise splits) is larger.
max_features : int
    Usable features examined per node.
expansion : int
    ``_frontier`` constant (``DEPTH`` ... ``RELEVANT``).
n_threads : int or None
    numba threads summing the pooled histograms, scanning them and partitioning
    large nodes (boosting); None for trees that run on one thread (forests, which
    grow their trees in joblib's threads, where parallel kernels must not run):
    their specialisations then compile no parallel kernel (``_rows.partition_node``,
    ``_pooled_fill.fill_node``, ``_splitter.pooled_scans``).
missing_direction : int
    ``_scans`` constant (``LEARN``, ``LEFT``, ``RIGHT``, ``SEPARATE``): where splits send
    missing values (of numeric features: a categorical feature's missing values are a
    category of their own, placed by its split).
cat_smooth : float
    Added to a category's hessian in the key that orders a node's categories
    (``_criteria.category_key``, newton only); in the pooled scan also the fewest rows
    of a category taken into the order (``_categories.pooled_category_scan``; not at
    a one-vs-rest node).
max_cat_to_onehot : int
    A node with at most this many categories of a feature splits one category from
    the rest (``_categories``).
max_cat_threshold, min_data_per_group : int
    The pooled scan's most categories in a left set grown from either end of the order
    (-1: half of them), and its fewest rows between two candidate cuts and in the
    right child.
cat_l2 : float
    Added to ``l2_regularization`` in the gain of the pooled scan's ordered cuts.
"""

TreeOutput = namedtuple(
    "TreeOutput", ["nodes", "missing_left", "values", "n_node_samples", "weighted_n_node_samples", "feature_gains", "row_leaf"]
)
TreeOutput.__doc__ = """Where ``build_tree`` writes the tree.

nodes : NODE_DTYPE array of shape (>= the tree's most nodes, ``_grow.max_nodes``)
    ``feature`` (-1 for leaves), ``left`` (the right child is ``left + 1``),
    ``threshold`` (raw-value cut, ``_splitter.threshold``; the value for leaves).
missing_left : uint8 array of the same length
    1 where a missing value of the node's feature goes left: the split's learned
    direction when the node had missing rows in training, else towards the child of
    more training weight (the left one on a tie). 0 for leaves.
values, n_node_samples, weighted_n_node_samples : arrays of the same length
    Value, row count and weight of every node.
feature_gains : float64 array of shape (n_features,)
    Accumulated scaled gain of the splits on each feature.
row_leaf : int64 array of shape (n_rows,) or (0,)
    Unless empty: the leaf of every row of the tree (others untouched), so that
    boosting updates its training scores without traversing the tree.
"""

NodeTable = namedtuple(
    "NodeTable",
    [
        "start", "end", "depth", "parent", "split_feature", "split_bin", "split_missing", "forced", "split_threshold",
        "split_gain", "lower", "upper",
    ],
)  # fmt: skip
NodeTable.__doc__ = """Per-node bookkeeping, arrays of the node capacity: the row range (int64), depth and
parent (int64), the split found for the node (feature, bin, where its missing rows go
as an ``_scans`` ``MISSING_*`` constant: int64; raw threshold and scaled gain:
float64), whether the split was decided by the parent's three-way split
(``forced``, int64: 1 or 0), and the bounds of the node's value that monotone splits
above it set (float64; -inf and inf without: ``_bound_children``)."""

Workspace = namedtuple(
    "Workspace",
    [
        "table", "frontier", "scratch", "features", "statistics", "feature_penalty", "interaction_groups",
        "path_words", "allowed_words", "drawn",
    ],
)  # fmt: skip
Workspace.__doc__ = """The builder's working memory for one tree (``new_workspace``).

table : NodeTable
frontier : _frontier.Frontier
scratch : _scans.ScanScratch, or None
    None for a tree whose every split is listwise (RF-list): numba then compiles no
    pointwise scan into it.
features : int32 array of shape (n_features,)
    The permutation the splitter draws candidate features from.
statistics : float64 array of shape (n_statistics,)
    The statistics of the node being opened or searched.
feature_penalty : float64 array of shape (n_features,)
    The tree's cost penalty of each feature, ``lambda * c(f)`` for features it does
    not get for free (``_splitter.best_split``). ``build_tree`` takes it as an
    argument of its own, None when no feature carries a penalty.
interaction_groups : uint64 array of shape (n_groups, n_feature_words)
    Interaction constraints (scikit-learn's ``interaction_cst``): each row the set of
    features one group lets interact, as bits (feature ``f`` is bit ``f % 64`` of
    word ``f // 64``). A node may split on the features of the groups that hold
    every feature its ancestors split on (``_allowed_features``). No rows: free.
path_words, allowed_words : uint64 arrays of shape (n_feature_words,)
    Scratch of ``_allowed_features``.
drawn : True, or None
    True when the tree's splits are drawn (RF-rand, ``_criteria.draws_split``), None
    when they are searched: ``_splitter.pointwise_split`` takes it as an argument of
    its own, so that numba compiles the drawn split into RF-rand's trees only.
"""


def new_workspace(
    capacity: int, n_features: int, max_bins: int, n_statistics: int, missing_direction: int, pointwise: bool = True,
    drawn: bool = False,
) -> Workspace:
    """Working memory for a tree of at most ``capacity`` nodes (``pointwise``: whether
    some of its nodes may split by a pointwise criterion; ``drawn``: whether those
    splits are drawn, not searched)."""
    table = NodeTable(*(np.empty(capacity, dtype=np.int64) for _ in range(8)), *(np.empty(capacity) for _ in range(4)))
    return Workspace(
        table, _frontier.new_frontier(capacity), _scans.new_scratch(max_bins, n_statistics, missing_direction) if pointwise else None,
        np.arange(n_features, dtype=np.int32), np.empty(n_statistics), np.zeros(n_features),
        np.zeros((0, (n_features + 63) // 64), dtype=np.uint64),
        np.zeros((n_features + 63) // 64, dtype=np.uint64), np.zeros((n_features + 63) // 64, dtype=np.uint64),
        True if drawn else None,
    )  # fmt: skip


@jit(refcounted=False, callable_from_python=False)
def _summarise(criterion, rows, leaf_targets, start, end, statistics):
    """Fill ``statistics`` for positions ``start:end``; returns (weight, sum of w * leaf target).

    The leaf-target sum (a gather by row id) is skipped without leaf targets. A moment
    criterion's two sums are kept in registers over the loop and stored once (the same
    additions in the same order): added in place, each row's sums would go through
    memory that the compiler cannot prove the rows do not share.
    """
    for s in range(len(statistics)):
        statistics[s] = 0.0
    moments = not _criteria.uses_classes(criterion)
    mean_leaves = len(leaf_targets) > 0
    last_column = rows.targets.shape[1] - 1
    node_weight = 0.0
    target_sum = 0.0
    first_sum = 0.0
    second_sum = 0.0
    for position in range(start, end):
        weight = rows.weights[position]
        at = _rows.target_index(rows, position)
        target = rows.targets[at, 0]
        if moments:
            first, second = _criteria.row_moments(criterion, weight, target, rows.targets[at, last_column])
            first_sum += first
            second_sum += second
        else:
            _criteria.accumulate(criterion, statistics, weight, target, target)
        node_weight += weight
        if mean_leaves:
            target_sum += weight * leaf_targets[rows.samples[position]]
    if moments:
        statistics[0] = first_sum
        statistics[1] = second_sum
    return node_weight, target_sum


@jit(inline="always")
def _node_summary(criterion, rows, leaf_targets, node, start, end, statistics, remote):
    """``_summarise`` of ``node``'s rows, here or summed over the partitions of ``remote`` (``_remote``)."""
    if remote is None:
        return _summarise(criterion, rows, leaf_targets, start, end, statistics)
    return _remote.summarise(remote, node, statistics)


@jit(inline="always")
def _filled_summary(pool, node, statistics):
    """``_summarise`` of a node whose histograms' fill wrote its totals (``_histograms.Pool.node_sums``):
    the same sums, so the node's rows are not read again. The fills run in parallel, and
    the first thread sums the larger child's rows while the others finish theirs (every
    thread does where the fill scans the children, ``_pooled_fill``); summed here, both
    children's rows were read on one thread between the parallel kernels."""
    for s in range(len(statistics)):
        statistics[s] = 0.0
    statistics[0] = pool.node_sums[node, 0]
    statistics[1] = pool.node_sums[node, 1]
    return pool.node_sums[node, 2], 0.0


@jit(inline="always")
def _splittable(count, depth, params):
    """Whether the size and depth limits allow splitting a node at all."""
    return not (
        (params.max_depth >= 0 and depth >= params.max_depth)
        or count < params.min_samples_split
        or count < 2 * params.min_samples_leaf
    )


@jit(inline="always")
def _may_split(table, node, budget_left, params):
    """Whether a new node may split: a forced one always (within the leaf budget)."""
    count = table.end[node] - table.start[node]
    return budget_left and (table.forced[node] == 1 or _splittable(count, table.depth[node], params))


@jit(inline="always")
def _allowed_features(node, work):
    """The features ``node`` may split on, first in ``work.features``: all of them without
    interaction constraints or at the root; otherwise those of every group that holds
    all the features split on above the node (scikit-learn's ``interaction_cst``),
    moved to the front. Returns that front (a view).
    """
    features = work.features
    groups = work.interaction_groups
    if len(groups) == 0 or node == 0:
        return features
    table = work.table
    path = work.path_words
    allowed = work.allowed_words
    path[:] = 0
    allowed[:] = 0
    child = node
    while child > 0:
        feature = table.split_feature[table.parent[child]]
        path[feature >> 6] |= np.uint64(1) << np.uint64(feature & 63)
        child = table.parent[child]
    for g in range(len(groups)):
        holds_path = True
        for w in range(len(path)):
            if path[w] & ~groups[g, w] != np.uint64(0):
                holds_path = False
                break
        if holds_path:
            for w in range(len(path)):
                allowed[w] |= groups[g, w]
    front = 0
    for i in range(len(features)):
        feature = features[i]
        if allowed[feature >> 6] & (np.uint64(1) << np.uint64(feature & 63)) != np.uint64(0):
            features[i] = features[front]
            features[front] = feature
            front += 1
    return features[:front]


@jit(inline="always")
def _scans_children(params, work, categories, remote):
    """Whether a split's fill scans the children searched when opened
    (``_pooled_fill.fill_histograms_parallel``): where every feature is drawn in one
    batch (no interaction constraints, ``max_features`` of every feature), on several
    threads, with neither a categorical feature (whose scans share scratch per
    feature), nor the three-way missing split (whose scans share
    ``ScanScratch.present``, on one thread), nor a remote tree. Called for pointwise
    trees with a pool. Tested apart: in one chain, numba's pruned ``is None`` tests would
    type the answer as an integer, a second specialisation of every kernel it reaches."""
    if categories is not None:
        return False
    if remote is not None:
        return False
    return (
        params.max_features >= len(work.features) and len(work.interaction_groups) == 0
        and work.scratch.present is None and _splitter.on_several_threads(params.n_threads)
    )  # fmt: skip


@jit(inline="always")
def _record_split(table, binned, node, feature, b, after, gain, missing, categories):
    """Record the split found for ``node``: a categorical one keeps its set of bins
    (``_categories.record_split``) and the threshold +inf, which no reader of a
    categorical node uses (``_tree/_tree.py``)."""
    table.split_feature[node] = feature
    table.split_bin[node] = b
    table.split_missing[node] = missing
    if _categories.is_categorical(categories, feature):
        _categories.record_split(categories, node)
        table.split_threshold[node] = np.inf
    else:
        table.split_threshold[node] = _splitter.threshold(binned.bin_thresholds, binned.bin_values, feature, b, after)
    table.split_gain[node] = gain


@jit(inline="always")
def _open_node(node, binned, rows, leaf_targets, params, work, output, rng_state, scale, expansion, budget_left, sweep_order, pool, listwise, feature_penalty, penalty_unit, remote, categories, monotonic_cst):
    """Record a new node (value, size, leaf) and queue it if it may split.

    Pointwise trees search its split now; listwise trees when it is expanded; a forced
    node has its split and is queued first. Returns whether the node waits for a
    listwise split.
    """
    table = work.table
    start = table.start[node]
    end = table.end[node]
    depth = table.depth[node]
    count = end - start
    splittable = _may_split(table, node, budget_left, params)
    scanned_row = np.int64(-1)
    if pool is not None:
        is_left_child = node > 0 and node == output.nodes[table.parent[node]]["left"]
        sibling_splittable = is_left_child and _may_split(table, node + 1, budget_left, params)
        scans = False
        if listwise is None:
            scans = _scans_children(params, work, categories, remote)
        slot = _pooled_fill.node_histograms(
            binned, rows, pool, table, node, is_left_child, splittable, sibling_splittable, scans, work.features, params,
            monotonic_cst, remote,
        )  # fmt: skip
        scanned_row = _histograms.scanned_row(pool, node)
    else:
        slot = np.int64(-1)
    if pool is not None and len(leaf_targets) == 0 and pool.node_summed[node]:
        node_weight, target_sum = _filled_summary(pool, node, work.statistics)
    else:
        node_weight, target_sum = _node_summary(params.criterion, rows, leaf_targets, node, start, end, work.statistics, remote)
    value = target_sum / node_weight if len(leaf_targets) > 0 else 0.0
    value = min(max(value, table.lower[node]), table.upper[node])  # the bounds of monotone splits above
    output.nodes[node]["feature"] = -1
    output.nodes[node]["left"] = -1
    output.nodes[node]["threshold"] = value
    output.missing_left[node] = 0
    output.values[node] = value
    output.n_node_samples[node] = count
    output.weighted_n_node_samples[node] = node_weight
    if not splittable:
        return False
    frontier = work.frontier
    if table.forced[node] == 1:
        frontier.priority[node] = np.inf
        _frontier.push(frontier, node)
        return False
    best_priority = -float(node)  # listwise gains are known only at expansion
    if listwise is None:
        feature, b, after, gain, missing = _splitter.pointwise_split(
            binned, rows, start, end, node_weight, work.statistics, params, scale, work.scratch,
            _allowed_features(node, work), rng_state, sweep_order, pool, slot, feature_penalty, penalty_unit,
            monotonic_cst, table.lower[node], table.upper[node], categories, work.drawn, scanned_row,
        )  # fmt: skip
        if pool is not None:
            _histograms.release_searched(pool, node, slot, feature >= 0)
        if feature < 0:
            return False
        _record_split(table, binned, node, feature, b, after, gain * scale, missing, categories)
        best_priority = gain
    frontier.priority[node] = _frontier.order_priority(expansion, node, depth, count, value, rng_state, best_priority)
    _frontier.push(frontier, node)
    return listwise is not None and depth < listwise.depth


@jit(inline="always")
def _search_expanded_node(node, binned, rows, leaf_targets, params, work, output, rng_state, scale, sweep_order, listwise, feature_penalty, penalty_units, categories, monotonic_cst):
    """Search the split of an expanded node of a listwise tree; returns whether one was found."""
    table = work.table
    start = table.start[node]
    end = table.end[node]
    node_weight, target_sum = _summarise(params.criterion, rows, leaf_targets, start, end, work.statistics)
    if table.depth[node] < listwise.depth:
        feature, b, after, gain, missing = _splitter.listwise_split(
            binned, rows, start, end, node_weight, work.statistics, params, _allowed_features(node, work), rng_state,
            listwise,
            target_sum, output.values[node], leaf_targets, feature_penalty, penalty_units[1], monotonic_cst,
        )  # fmt: skip
    else:
        feature, b, after, gain, missing = _splitter.pointwise_split(
            binned, rows, start, end, node_weight, work.statistics, params, scale, work.scratch,
            _allowed_features(node, work), rng_state, sweep_order, None, np.int64(-1), feature_penalty,
            penalty_units[0], monotonic_cst, table.lower[node], table.upper[node], categories, work.drawn, np.int64(-1),
        )  # fmt: skip
        gain *= scale
    if feature < 0:
        return False
    _record_split(table, binned, node, feature, b, after, gain, missing, categories)
    return True


@jit(inline="always")
def _bounded_value(node, rows, params, work, lower, upper, remote):
    """The value of ``node``'s moments within ``[lower, upper]`` (``_criteria.bounded_moment_value``)."""
    table = work.table
    weight, _ = _node_summary(
        params.criterion, rows, rows.weights[:0], node, table.start[node], table.end[node], work.statistics, remote
    )
    statistics = work.statistics
    return _criteria.bounded_moment_value(
        params.criterion, statistics[0], statistics[1], weight, params.l2_regularization, lower, upper
    )


@jit(inline="always")
def _bound_children(node, n_nodes, rows, params, work, remote, monotonic_cst):
    """The value bounds of the children ``n_nodes``, ``n_nodes + 1`` of ``node`` (rows
    partitioned): the node's own; a split on a feature of monotone constraint ``c``
    puts the children's values, each clipped to the node's bounds, on either side of
    their midpoint (``c = +1``: the left child's values at most, the right one's at
    least the midpoint; ``c = -1`` the reverse), so that every leaf below the left
    child stays on its side of every leaf below the right child (scikit-learn's
    histogram gradient boosting bounds them so)."""
    table = work.table
    lower = table.lower[node]
    upper = table.upper[node]
    for child in (n_nodes, n_nodes + 1):
        table.lower[child] = lower
        table.upper[child] = upper
    if monotonic_cst is None:
        return
    constraint = monotonic_cst[table.split_feature[node]]
    if constraint == 0:
        return
    middle = (
        _bounded_value(n_nodes, rows, params, work, lower, upper, remote)
        + _bounded_value(n_nodes + 1, rows, params, work, lower, upper, remote)
    ) / 2.0
    if constraint > 0:
        table.upper[n_nodes] = middle
        table.lower[n_nodes + 1] = middle
    else:
        table.lower[n_nodes] = middle
        table.upper[n_nodes + 1] = middle


@jit(inline="always")
def _category_bins(node, feature, categories):
    """The bins a node's split sends left, as ``_rows.goes_left`` takes them in a tree with
    categorical features (``categories`` not None): the node's set for a categorical
    split, else empty. A tree without them passes None in its place, from a branch of
    its own: one function returning None or an array would return an optional array
    (``docs/design.md``, "Numba rules"), which numba's parallel loops read as None, so
    ``_rows.partition_parallel`` would cut a categorical split as a numeric one."""
    sets = categories.sets
    return sets[node] if categories.is_categorical[feature] != 0 else sets[node, :0]


@jit(inline="always")
def _split_decision(node, binned, table):
    """The node's recorded split as the partition of its rows reads it: (feature, cut bin,
    missing bin, whether the missing rows go left, whether the split is three-way)."""
    feature = table.split_feature[node]
    apart = table.split_missing[node] == _scans.MISSING_APART
    missing_left = 1 if apart else table.split_missing[node]
    cut_bin = -1 if apart else table.split_bin[node]
    return feature, cut_bin, binned.missing_bins[feature], missing_left, apart


@jit(inline="always")
def _announce_next(node, binned, table, pool, remote, categories):
    """Name the split of a waiting node to the exchange, which may make it in the round of the
    split being made (``_remote.PartitionsExchange.announce``): a pointwise node's split is
    fixed once it waits (only listwise nodes are searched again when popped, and a tree
    over partitions is pointwise: ``_grow.grow_tree``), and its side of the histograms is
    the one ``_split`` will ask for (its pool slot does not change while it waits)."""
    feature, cut_bin, missing_bin, missing_left, _ = _split_decision(node, binned, table)
    side = np.int64(-1)
    if pool is not None:
        if categories is None:
            side = _histograms.smaller_child(pool, node, np.int64(0), feature, cut_bin, missing_bin, missing_left, None)
        else:
            side = _histograms.smaller_child(
                pool, node, np.int64(0), feature, cut_bin, missing_bin, missing_left,
                _category_bins(node, feature, categories),
            )  # fmt: skip
    _remote.announce(remote, node, feature, cut_bin, missing_bin, missing_left, side)


@jit(inline="always")
def _partition_node(node, n_nodes, binned, rows, params, pool, remote, start, end, feature, cut_bin, missing_bin, missing_left, left_bins):
    """Partition the rows of ``node`` (positions ``start:end``) by its split, sending those in
    ``left_bins`` left for a categorical split (``_category_bins``; None in a tree without
    categorical features): on one thread, on ``params.n_threads`` for a large node, or over
    a remote tree's partitions. Returns the first right position and the missing rows."""
    if remote is not None:  # every partition splits its rows; the left child's global count comes first
        fill_child = np.int64(-1)
        if pool is not None:
            fill_child = _histograms.smaller_child(
                pool, node, n_nodes, feature, cut_bin, missing_bin, missing_left, left_bins
            )
        n_left, n_missing = _remote.partition(remote, node, n_nodes, feature, cut_bin, missing_bin, missing_left, fill_child)
        return start + n_left, n_missing
    return _rows.partition_node(
        binned.X_binned, rows, start, end, feature, cut_bin, missing_bin, missing_left, left_bins, params.n_threads
    )


@jit(inline="always")
def _split(node, n_nodes, binned, rows, params, output, table, pool, remote, categories):
    """Partition the node's rows by its recorded split and create its two children ``n_nodes``, ``n_nodes + 1``.

    A three-way split becomes the "missing?" test: the missing rows alone go left, and
    the right child is forced to split at the recorded cut.
    """
    start = table.start[node]
    end = table.end[node]
    feature, cut_bin, missing_bin, missing_left, apart = _split_decision(node, binned, table)
    if categories is None:
        middle, n_missing = _partition_node(
            node, n_nodes, binned, rows, params, pool, remote, start, end, feature, cut_bin, missing_bin, missing_left,
            None,
        )  # fmt: skip
    else:
        middle, n_missing = _partition_node(
            node, n_nodes, binned, rows, params, pool, remote, start, end, feature, cut_bin, missing_bin, missing_left,
            _category_bins(node, feature, categories),
        )  # fmt: skip
    output.nodes[node]["feature"] = feature
    output.nodes[node]["left"] = n_nodes
    output.nodes[node]["threshold"] = -np.inf if apart else table.split_threshold[node]
    # Without missing rows here, a fixed direction applies, or the learned one is
    # settled once the children's weights are known (the end of build_tree). A fixed side
    # is "below/above every value", which categories, having no order, do not have: an
    # unseen or missing category goes to the heavier child (docs/categorical.md).
    if n_missing == 0:
        direction = params.missing_direction
        missing_left = int(direction == _scans.LEFT) if direction == _scans.LEFT or direction == _scans.RIGHT else _UNSEEN
        if categories is not None:
            if categories.is_categorical[feature] != 0:
                missing_left = _UNSEEN
    output.missing_left[node] = missing_left
    output.feature_gains[feature] += table.split_gain[node]
    depth = table.depth[node] + 1 - table.forced[node]
    for child, child_start, child_end in ((n_nodes, start, middle), (n_nodes + 1, middle, end)):
        table.start[child] = child_start
        table.end[child] = child_end
        table.depth[child] = depth
        table.parent[child] = node
        table.forced[child] = 0
    if apart:
        present = n_nodes + 1
        table.forced[present] = 1
        table.split_feature[present] = feature
        table.split_bin[present] = table.split_bin[node]
        table.split_missing[present] = _scans.MISSING_RIGHT  # it has no missing rows
        table.split_threshold[present] = table.split_threshold[node]
        table.split_gain[present] = 0.0  # the parent carries the three-way gain


@jit(refcounted=False, callable_from_python=False)
def root_penalty_sums(criterion, rows, statistics, l2_regularization):
    """The tree's summed moments (into ``statistics``, float64 of shape (n_statistics,)) and the
    sum of its rows' costs (``_criteria.row_cost``): returns (weight, rows' cost), added in
    row order over ``rows`` (``_rows.SortedRows``)."""
    for s in range(len(statistics)):
        statistics[s] = 0.0
    last_column = rows.targets.shape[1] - 1
    root_weight = 0.0
    rows_cost = 0.0
    for position in range(len(rows.samples)):
        weight = rows.weights[position]
        at = _rows.target_index(rows, position)
        target = rows.targets[at, 0]
        last_target = rows.targets[at, last_column]
        _criteria.accumulate(criterion, statistics, weight, target, last_target)
        root_weight += weight
        rows_cost += _criteria.row_cost(criterion, weight, target, last_target, l2_regularization)
    return root_weight, rows_cost


@jit(refcounted=False, callable_from_python=False)
def _penalty_units(params, rows, work, listwise, remote, feature_penalty):
    """(pointwise, listwise) unscaled gain that a feature penalty of 1 stands for
    (``_criteria.penalty_unit``; the listwise unit is the whole range of the mean
    expected NDCG); zeros when no feature carries a penalty."""
    if feature_penalty is None:
        return 0.0, 0.0
    penalised = False
    for penalty in feature_penalty:
        penalised = penalised or penalty > 0.0
    if not penalised:
        return 0.0, 0.0
    statistics = work.statistics
    if remote is None:
        root_weight, rows_cost = root_penalty_sums(params.criterion, rows, statistics, params.l2_regularization)
    else:
        root_weight, rows_cost = _remote.penalty_sums(remote, statistics, params.l2_regularization)
    root_cost, _ = _criteria.node_cost(params.criterion, statistics, root_weight, params.l2_regularization, rows.integer_weights)
    listwise_unit = 0.0
    if listwise is not None and listwise.scale > 0.0:
        listwise_unit = 1.0 / listwise.scale
    return _criteria.penalty_unit(params.criterion, root_cost, rows_cost), listwise_unit


@jit(refcounted=False)
def build_tree(binned, rows, leaf_targets, params, work, rng_state, sweep_order, pool, listwise, output, remote, categories, monotonic_cst, feature_penalty):
    """Grow one tree; returns the number of nodes written to ``output``.

    Parameters
    ----------
    binned : Binned
    rows : _rows.SortedRows
        The tree's rows (weight > 0), reordered in place.
    leaf_targets : float64 array of shape (n_rows,) or (0,)
        Per-row value averaged into node values (none: values are 0).
    params : GrowthParams
    work : Workspace
    rng_state : uint64 array of shape (2,)
    sweep_order : None or int64 array of shape (>= n_tree_rows, 3)
        None: histogram scans. An array: the sorted sweep (tests), with this scratch.
    pool : None or _histograms.Pool
        The histogram pool of the sibling subtraction; None: no pool.
    listwise : None or _listwise.Listwise
        None: no listwise split. Otherwise nodes shallower than ``listwise.depth``
        split with the listwise criterion, each when it is expanded.
    output : TreeOutput
    remote : None or int64 array of shape (2,)
        None: ``rows`` are the tree's rows. Otherwise the handle of an exchange
        (``_remote.register``: its key and the tree's rows over all partitions) that
        sums every row operation over the partitions holding the rows: ``rows`` then
        holds none (its ``integer_weights`` says whether every partition's weights
        are integers), ``output.row_leaf`` is empty, and the tree is pointwise with a
        ``pool``.
    categories : None or _categories.CategorySplits
        None: no feature is categorical. Otherwise the tree's categorical features,
        the scratch of their scans and the bins each categorical split sends left.
    monotonic_cst : None or int8 array of shape (n_features,)
        None: no constraint. Otherwise each feature's monotone constraint: +1 the
        tree's value may only rise with the feature, -1 only fall, 0 free
        (scikit-learn's ``monotonic_cst``). Only moment criteria (newton, variance)
        take constraints.
    feature_penalty : None or float64 array of shape (n_features,)
        None: no feature carries a penalty. Otherwise each feature's penalty
        (``work.feature_penalty``, a copy the tree sets to 0 for a feature once it
        splits on it: ``_splitter.best_split``).

    The seven optional arguments are None or not per call *type*, so a pointwise
    forest's specialisation compiles neither the listwise criterion, nor the pool,
    nor the sorted sweep, nor the exchange, nor categorical splits, nor the clipped
    gains of monotone constraints, nor the feature penalties (``docs/design.md``,
    "Numba rules").
    """
    table = work.table
    if remote is None:
        total = _rows.total_weight(rows)
        n_rows = np.int64(len(rows.samples))
    else:
        total = _remote.total_weight(remote)
        n_rows = np.int64(remote[1])
    scale = _criteria.gain_scale(params.criterion, total)
    penalty_units = _penalty_units(params, rows, work, listwise, remote, feature_penalty)
    table.start[0] = 0
    table.end[0] = n_rows
    table.depth[0] = 0
    table.forced[0] = 0
    table.lower[0] = -np.inf
    table.upper[0] = np.inf
    # Counters start as np.int64, not literals: numba would compile every function
    # they are passed to a second time, for the literal type (Literal[int](1)).
    n_nodes = np.int64(1)
    n_leaves = np.int64(1)
    # Nodes in the frontier that will split listwise. Once none is left and new nodes
    # are too deep to, no listwise evaluation can come (every later node descends
    # from those), so the tie blocks stop being updated: for RF-hybrid the deep,
    # pointwise part of the tree then costs what it costs RF-point.
    listwise_waiting = np.int64(0)
    expansion = params.expansion
    next_node = np.int64(0)  # nodes [next_node, n_nodes) are still to be opened
    while True:
        budget_left = params.max_leaf_nodes < 0 or n_leaves < params.max_leaf_nodes
        while next_node < n_nodes:
            waits = _open_node(
                next_node, binned, rows, leaf_targets, params, work, output, rng_state, scale, expansion, budget_left,
                sweep_order, pool, listwise, feature_penalty, penalty_units[0], remote, categories, monotonic_cst,
            )  # fmt: skip
            if listwise is not None:  # the tie blocks need the node's value
                if next_node == 0 or listwise_waiting > 0 or table.depth[next_node] < listwise.depth:
                    _listwise.place_node(
                        listwise, rows.samples, table.start[next_node], table.end[next_node], next_node == 0,
                        output.values[table.parent[next_node]] if next_node > 0 else 0.0, output.values[next_node],
                    )  # fmt: skip
            listwise_waiting += waits
            next_node += 1
        if work.frontier.size[0] == 0 or not budget_left:
            break
        if listwise is not None and listwise_waiting == 0 and params.max_leaf_nodes < 0 and expansion != _frontier.DEPTH:
            expansion = _frontier.DEPTH  # the last listwise split is made: no order matters now but the caches'
            _frontier.reorder_depth_first(work.frontier, table.depth)
        node = _frontier.pop(work.frontier)
        if listwise is not None and table.forced[node] == 0:
            listwise_waiting -= table.depth[node] < listwise.depth
            if not _search_expanded_node(
                node, binned, rows, leaf_targets, params, work, output, rng_state, scale, sweep_order, listwise,
                feature_penalty, penalty_units, categories, monotonic_cst,
            ):  # fmt: skip
                continue
        if remote is not None and (params.max_leaf_nodes < 0 or n_leaves + 1 < params.max_leaf_nodes):
            # Another split follows this one: the heap's first three entries (its top, the
            # next to pop unless the new children outrank it, and the two below it), of
            # which the exchange makes one ahead.
            for position in range(min(3, work.frontier.size[0])):
                _announce_next(work.frontier.heap[position], binned, table, pool, remote, categories)
        _split(node, n_nodes, binned, rows, params, output, table, pool, remote, categories)
        _bound_children(node, n_nodes, rows, params, work, remote, monotonic_cst)
        if feature_penalty is not None:
            feature_penalty[table.split_feature[node]] = 0.0  # paid for: free for the rest of the tree
        n_nodes += 2
        n_leaves += 1
    for node in range(n_nodes):
        if output.missing_left[node] == _UNSEEN:
            left = output.nodes[node]["left"]
            heavier_left = output.weighted_n_node_samples[left] >= output.weighted_n_node_samples[left + 1]
            output.missing_left[node] = 1 if heavier_left else 0
    if len(output.row_leaf) > 0:
        for node in range(n_nodes):
            if output.nodes[node]["feature"] < 0:
                for position in range(table.start[node], table.end[node]):
                    output.row_leaf[rows.samples[position]] = node
    return n_nodes
