"""A new node's pooled histograms: its slot, the fill that sums them, and the scans that fill may run.

A left child pairs itself with its right sibling (``node_histograms``): the smaller
child's rows are summed into a slot and the larger child's histograms are the
parent's minus them, in the parent's slot (``_histograms``). On several threads the
fill runs in one parallel region whose threads own whole features
(``_histograms.feature_owners``); there each thread also scans, for the children the
builder will search, the features it has just summed and subtracted
(``fill_histograms_parallel``): one region per split for the fill and both
children's scans, and no thread waits for another between them. The children's
searches then compare those scans (``_splitter.best_split``). LightGBM likewise
searches both children of a split in one parallel loop over the features.

The scans need each child's ``Node``: its totals, which every thread sums for itself
in position order (the same bits on every thread, and the ones the builder reads from
``Pool.node_sums``), its cost and its bounds.
"""

import numba
import numpy as np

from .._numba.jit import jit
from . import _categories, _criteria, _remote, _scans
from ._histograms import (
    FILL_LATER,
    _fill_slot,
    _position_totals,
    free_slot,
    marks_bins,
    subtract_histograms,
    take_slot,
)


@jit(inline="always")
def record_pooled_scan(histograms, slot_bins, slot_marked, slot, feature, n_bins, missing_bins, node, params, monotonic_cst, present, gains, cuts, categories, feature_owner, prefix):
    """``_scans.pooled_scan`` (or, for a categorical feature, ``_categories.pooled_category_scan``,
    its categories in ``categories.order[feature]``) of a drawn ``feature`` against no floor,
    into ``gains[feature]`` and ``cuts[feature]``: indexed by the feature, not by its
    draw, so that each thread of a parallel region writes cache lines of its own.
    A feature no thread fills (``feature_owner`` -1: one value in every row) is constant,
    as its sweep would find it, without reading its histograms. ``prefix``: the calling
    thread's row of ``_histograms.Pool.sweep_prefix``."""
    if feature_owner[feature] < 0:
        constant, gain, b, after, missing = True, -np.inf, -1, -1, _scans.MISSING_RIGHT
    elif _categories.is_categorical(categories, feature):
        constant, gain, b, after, missing = _categories.pooled_category_scan(
            histograms[slot, feature], n_bins[feature], missing_bins[feature], node, params, monotonic_cst,
            categories.order[feature], categories.keys[feature], -np.inf,
        )  # fmt: skip
    else:
        constant, gain, b, after, missing = _scans.pooled_scan(
            histograms, slot_bins, slot_marked, slot, feature, n_bins[feature], missing_bins[feature],
            _scans.for_feature(node, monotonic_cst, feature), params, present, monotonic_cst, -np.inf, prefix,
        )  # fmt: skip
    gains[feature] = gain
    cuts[feature, 0] = constant
    cuts[feature, 1] = b
    cuts[feature, 2] = after
    cuts[feature, 3] = missing


@jit(refcounted=False, callable_from_python=False)
def _scan_children(owner, histograms, slot_bins, slot_marked, feature_owner, gains, cuts, child_statistics, sweep_prefix, table, node, sibling, slot, parent_slot, totals, sibling_totals, scan_left, scan_right, features, n_bins, missing_bins, params, monotonic_cst, integer_weights):
    """Thread ``owner``'s scans of the tree's ``features`` it owns (and, for thread 0, of those no
    thread fills) for the children of a split it has just filled and subtracted: ``node`` (the
    smaller, in ``slot``) and ``sibling`` (in ``parent_slot``), the left child's into row 0
    of ``gains`` and ``cuts`` (``Pool.scan_gains``, ``Pool.scan_cuts``) if ``scan_left``, the
    right child's into row 1 if ``scan_right``; a pure child is not scanned (its search
    stops before the scans). The other arrays are the pool's of the same names.

    Each child's ``Node`` is built as ``_splitter.pointwise_split`` builds it, from the
    thread's own copy of its moments (``Pool.child_statistics``): the totals of its
    positions (``_histograms._position_totals``), the bits ``_builder._open_node`` reads.
    A kernel of its own, like ``_histograms._fill_slot``: the region holds one call.
    """
    left = min(node, sibling)
    for row in range(2):
        if not (scan_left if row == 0 else scan_right):
            continue
        child = left + row
        first, second, weight = totals if child == node else sibling_totals
        statistics = child_statistics[owner, row]
        statistics[0] = first
        statistics[1] = second
        cost, pure = _criteria.node_cost(params.criterion, statistics, weight, params.l2_regularization, integer_weights)
        if pure:
            continue
        child_node = _scans.Node(
            table.start[child], table.end[child], weight, cost, statistics, table.lower[child], table.upper[child],
            np.int64(0),
        )  # fmt: skip
        child_slot = slot if child == node else parent_slot
        for i in range(len(features)):
            feature = features[i]
            if max(feature_owner[feature], 0) == owner:
                record_pooled_scan(
                    histograms, slot_bins, slot_marked, child_slot, feature, n_bins, missing_bins, child_node, params,
                    monotonic_cst, None, gains[row], cuts[row], None, feature_owner, sweep_prefix[owner],
                )  # fmt: skip


@jit(parallel=True, refcounted=False, callable_from_python=False, cache=False)  # docs/design.md, "Numba rules": parallel kernels that call kernels
def fill_histograms_parallel(
    X_binned, rows, start, end, histograms, slot, parent_slot, counts, owned_runs, n_runs, sparse, node_sums, slot_bins,
    slot_marked, was_marked, marks, node, sibling, table, scan_left, scan_right, features, n_bins, missing_bins, params,
    monotonic_cst, feature_owner, gains, cuts, child_statistics, sweep_prefix,
):  # fmt: skip
    """``_histograms._fill_slot`` with each thread ``t`` of numba's filling its features
    ``owned_runs[t, :n_runs[t]]`` (``_histograms.feature_owners``), and, when
    ``parent_slot >= 0``, subtracting them from the parent's as soon as they are summed,
    then scanning them for the children ``scan_left`` and ``scan_right`` ask for
    (``_scan_children``): a feature's sums stay with one core, which scans them too.

    The first thread writes the node's totals to ``node_sums[node]`` and, with a
    parent, those of the sibling's positions to ``node_sums[sibling]``
    (``_histograms._position_totals``); a thread that scans the children sums the
    sibling's for itself. Without scans the others do not: the first thread ends its
    features first on the machines measured, and the builder would otherwise sum both
    children's rows on one thread between the parallel kernels
    (``benchmarks/RESULTS.md``, "Two threads: the nodes' totals in the fill").

    Each thread owns whole features, so no two threads write the same bins and the
    sums are added in the serial order (identical results). Only the boosting loop
    calls it, from the main thread: a parallel kernel must not run in joblib's
    threads (``docs/design.md``, "Parallelism"). The pool's arrays come one by one
    (``fill_node``): numba's parallel regions take no namedtuple holding another.
    """
    criterion = params.criterion
    sibling_start = table.start[sibling]
    sibling_end = table.end[sibling]
    scans = scan_left or scan_right
    for owner in numba.prange(len(n_runs)):
        runs = owned_runs[owner, : n_runs[owner]]
        totals = _fill_slot(
            X_binned, criterion, rows.targets, rows.weights, rows.samples, rows.targets_by_row, start, end, histograms,
            slot, parent_slot, counts, runs, sparse, owner, slot_bins, was_marked, marks,
        )  # fmt: skip
        sibling_totals = totals
        if parent_slot >= 0 and (owner == 0 or scans):
            sibling_totals = _position_totals(
                criterion, rows.targets, rows.weights, rows.samples, rows.targets_by_row, sibling_start, sibling_end
            )  # fmt: skip
        if owner == 0:
            _record_totals(node_sums, node, totals)
            if parent_slot >= 0:
                _record_totals(node_sums, sibling, sibling_totals)
        if scans:
            _scan_children(
                owner, histograms, slot_bins, slot_marked, feature_owner, gains, cuts, child_statistics, sweep_prefix,
                table, node, sibling, slot, parent_slot, totals, sibling_totals, scan_left, scan_right, features, n_bins,
                missing_bins, params, monotonic_cst, rows.integer_weights,
            )  # fmt: skip


@jit(inline="always")
def _record_totals(node_sums, node, totals):
    """Write a node's totals (``_histograms._position_totals``) to its row of ``Pool.node_sums``."""
    node_sums[node, 0], node_sums[node, 1], node_sums[node, 2] = totals


@jit(refcounted=False, callable_from_python=False)
def fill_node(binned, rows, start, end, pool, slot, parent_slot, node, sibling, table, scan_left, scan_right, features, params, n_threads, monotonic_cst):
    """``_histograms._fill_slot`` of positions ``start:end`` of ``rows`` into ``pool``'s ``slot``,
    then, when ``parent_slot >= 0``, the same features subtracted from the parent's; both by
    ``fill_histograms_parallel`` on ``n_threads`` numba threads when more than one (the
    pool's owners), which also scans the children ``scan_left`` and ``scan_right`` ask
    for. A fill of few rows marks the slot's bins (``Pool.slot_marked``). ``n_threads``
    None: a tree grown on one thread, whose specialisation compiles no parallel fill
    (``_rows.partition_node``). Writes the totals of ``node`` and, with a parent, of
    ``sibling`` to ``Pool.node_sums``.

    Parameters
    ----------
    binned : _builder.Binned
    rows : _rows.SortedRows
    start, end : int
        ``node``'s positions.
    pool : _histograms.Pool
    slot, parent_slot : int
        The slot filled, and the parent's (-1: none, no subtraction), which becomes
        ``sibling``'s.
    node, sibling : int
    table : _builder.NodeTable
        The nodes' positions and the bounds of their values.
    scan_left, scan_right : bool
        Whether to scan the left and the right child of the pair (``node`` and ``sibling``)
        into rows 0 and 1 of the pool's scans; only with a parent and ``max_features``
        drawing every feature (``_builder._scans_children``).
    features : int32 array of shape (n_tree_features,)
        The features the tree may split on (``_builder.Workspace.features``), those scanned.
    params : _builder.GrowthParams
    n_threads : int or None
        ``params.n_threads``, an argument of its own so that numba prunes the parallel fill.
    monotonic_cst : None or int8 array of shape (n_features,)

    Returns
    -------
    bool
        Whether the children asked for were scanned: on several threads only.
    """
    histograms = pool.histograms
    was_marked = pool.slot_marked[slot]
    marks = marks_bins(end - start, histograms.shape[2])
    pool.slot_marked[slot] = marks
    if n_threads is not None and n_threads > 1:
        fill_histograms_parallel(
            binned.X_binned, rows, start, end, histograms, slot, parent_slot, pool.bin_counts, pool.owned_runs,
            pool.n_runs, pool.sparse, pool.node_sums, pool.slot_bins, pool.slot_marked, was_marked, marks, node, sibling,
            table, scan_left, scan_right, features, binned.n_bins, binned.missing_bins, params, monotonic_cst,
            pool.feature_owner, pool.scan_gains, pool.scan_cuts, pool.child_statistics, pool.sweep_prefix,
        )  # fmt: skip
        return scan_left or scan_right
    criterion = params.criterion
    totals = _fill_slot(
        binned.X_binned, criterion, rows.targets, rows.weights, rows.samples, rows.targets_by_row, start, end, histograms,
        slot, parent_slot, pool.bin_counts, pool.owned_runs[0, : pool.n_runs[0]], pool.sparse, np.int64(0),
        pool.slot_bins, was_marked, marks,
    )  # fmt: skip
    _record_totals(pool.node_sums, node, totals)
    if parent_slot >= 0:
        _record_totals(
            pool.node_sums, sibling,
            _position_totals(
                criterion, rows.targets, rows.weights, rows.samples, rows.targets_by_row, table.start[sibling],
                table.end[sibling],
            ),
        )  # fmt: skip
    return False


@jit(inline="always")
def _fill(binned, rows, pool, slot, parent_slot, node, sibling, table, scan_left, scan_right, features, params, monotonic_cst, remote):
    """``fill_node`` of ``node``'s rows (``_rows.SortedRows``) into ``pool``'s ``slot``, then,
    when ``parent_slot >= 0``, ``subtract_histograms`` from the parent's, whose slot becomes
    ``sibling``'s. Marks which of the two nodes have their totals in ``Pool.node_sums`` and
    which have their scans in the pool's rows (``Pool.scanned``). With a ``remote`` tree
    (``_remote``), the fill is ``node``'s histograms summed over its partitions, and
    neither has either."""
    histograms = pool.histograms
    if remote is not None:
        _remote.fill(remote, node, histograms, slot)
        pool.slot_marked[slot] = False
        if parent_slot >= 0:
            subtract_histograms(histograms, parent_slot, slot)
        return
    scanned = fill_node(
        binned, rows, table.start[node], table.end[node], pool, slot, parent_slot, node, sibling, table, scan_left,
        scan_right, features, params, params.n_threads, monotonic_cst,
    )  # fmt: skip
    pool.node_summed[node] = True
    if parent_slot >= 0:
        pool.node_summed[sibling] = True
    if scanned:
        left = min(node, sibling)
        pool.scanned[0] = left if scan_left else -1
        pool.scanned[1] = left + 1 if scan_right else -1


@jit(inline="always")
def _pair_histograms(binned, rows, pool, table, left_child, need_left, need_right, scans, features, params, monotonic_cst, remote):
    """Histograms of two new siblings by the subtraction trick.

    The smaller child's histograms are summed from its rows and the larger child's
    are the parent's minus them, computed in the parent's slot (which passes to the
    larger child). Siblings that will not be searched (``need_*`` false) get no
    slot; without a parent slot each needed child is summed when searched. With
    ``scans``, the fill scans the children searched when opened (not forced).
    """
    right_child = left_child + 1
    parent = table.parent[left_child]
    parent_slot = pool.node_slot[parent]
    pool.node_slot[parent] = -1
    if parent_slot == pool.scratch:
        # A forced node, paired when no slot was free, kept the scratch slot: the fill below
        # would overwrite its sums (and freeing it would list the scratch slot as free).
        parent_slot = -1
    pool.node_summed[left_child] = False
    pool.node_summed[right_child] = False
    if table.end[left_child] - table.start[left_child] <= table.end[right_child] - table.start[right_child]:
        small, large, need_small, need_large = left_child, right_child, need_left, need_right
    else:
        small, large, need_small, need_large = right_child, left_child, need_right, need_left
    if parent_slot >= 0 and need_large:
        slot = pool.scratch
        if need_small:
            slot = take_slot(pool)
        _fill(
            binned, rows, pool, slot, parent_slot, small, large, table,
            scans and need_left and table.forced[left_child] == 0, scans and need_right and table.forced[right_child] == 0,
            features, params, monotonic_cst, remote,
        )  # fmt: skip
        pool.node_slot[large] = parent_slot
        pool.node_slot[small] = slot if need_small else -1
        return
    if parent_slot >= 0:
        free_slot(pool, parent_slot)
    pool.node_slot[left_child] = FILL_LATER if need_left else -1
    pool.node_slot[right_child] = FILL_LATER if need_right else -1


@jit(refcounted=False, callable_from_python=False)
def node_histograms(binned, rows, pool, table, node, is_left_child, searched, sibling_searched, scans, features, params, monotonic_cst, remote):
    """The slot holding a new node's histograms (-1 when it will not be searched).

    The root's are summed when it is searched; a left child pairs itself with its
    right sibling (created together) by ``_pair_histograms``, so the right child
    finds its slot assigned. ``Pool.node_summed[node]`` then says whether a fill wrote
    the node's totals (``Pool.node_sums``), and ``_histograms.scanned_row`` whether it
    scanned the node (``scans``: the builder lets a pair's fill scan the children it
    searches, ``_builder._scans_children``).

    Parameters
    ----------
    binned : _builder.Binned
    rows : _rows.SortedRows
    pool : _histograms.Pool
    table : _builder.NodeTable
    node : int
    is_left_child, searched, sibling_searched, scans : bool
    features : int32 array of shape (n_tree_features,)
        The features the tree may split on (``_builder.Workspace.features``).
    params : _builder.GrowthParams
    monotonic_cst : None or int8 array of shape (n_features,)
    remote : None or int64 array of shape (2,)
        A tree over partitions (``_remote``): its fills are summed there, and scan nothing.
    """
    if node == 0:
        pool.node_slot[0] = FILL_LATER if searched else -1
        pool.node_summed[0] = False
    elif is_left_child:
        _pair_histograms(
            binned, rows, pool, table, node, searched, sibling_searched, scans, features, params, monotonic_cst, remote
        )  # fmt: skip
    if pool.node_slot[node] == FILL_LATER:
        slot = take_slot(pool)
        _fill(
            binned, rows, pool, slot, np.int64(-1), node, node, table, np.bool_(False), np.bool_(False), features, params,
            monotonic_cst, remote,
        )  # fmt: skip
        pool.node_slot[node] = slot
    return pool.node_slot[node]
