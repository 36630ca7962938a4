"""The split of one node: candidate features, the one feature loop, the best split.

Candidate features are drawn without replacement per node (partial Fisher-Yates on a
per-tree permutation); features constant in the node do not count towards
``max_features``, so the search continues until ``max_features`` usable features
were evaluated or none is left (scikit-learn's rule). One loop (``best_split``)
serves every split path; per feature it runs the scan the node calls for:

* the listwise sweep (``_listwise``) for a listwise node;
* the sorted sweep when the caller asks for it (tests compare it with the scans);
* the histogram scan otherwise.

A node with pooled histograms (``_histograms``) scans its drawn features together
instead, on several threads where the tree has them (``_pooled_best_split``), and
compares them in the loop's order: the same split.

The optional arguments (``sweep_order``, ``pool``, the listwise ones,
``categories``, ``monotonic_cst``, ``feature_penalty``, ``drawn``) are None or not
per call *type*: numba prunes the branches of a None argument before typing, so each
tree kind compiles only the scans it uses.
"""

import numba
import numpy as np

from .._numba.jit import jit
from . import _categories, _criteria, _listwise, _pooled_fill, _rows, _scans

# Listwise gains below this (in mean expected NDCG) are rounding noise, not a split.
_LISTWISE_GAIN_NOISE = 1e-12

@jit(inline="always")
def _scan_feature(binned, feature, rows, node, params, monotonic_cst, scratch, best_gain, sweep_order, listwise, lists, categories):
    """(is_constant, gain, bin, next bin, missing) of ``feature`` by the scan the node calls for
    (a categorical feature's: the size of its left set, in ``categories.order[0]``, for the bin).

    A listwise node comes without ``scratch``: its None type, unlike a listwise
    argument's, lets numba drop the pointwise scans from the listwise specialisation.
    """
    missing_bin = binned.missing_bins[feature]
    if scratch is not None:
        if _categories.is_categorical(categories, feature):
            return _categories.histogram_category_scan(
                binned.X_binned, feature, missing_bin, rows, node, params, scratch, monotonic_cst, categories.order[0],
                categories.keys[0], best_gain,
            )  # fmt: skip
        if sweep_order is not None:
            return _scans.sorted_sweep(
                binned.X_binned, feature, missing_bin, rows, node, params, scratch, scratch.present, monotonic_cst,
                sweep_order, best_gain,
            )  # fmt: skip
        return _scans.histogram_scan(
            binned.X_binned, feature, missing_bin, rows, node, params, scratch, scratch.present, monotonic_cst, best_gain
        )
    if listwise is not None:
        return _listwise.sweep_feature(binned.X_binned, feature, missing_bin, rows, node, params, listwise, lists, best_gain)
    return True, best_gain, np.int64(-1), np.int64(-1), _scans.MISSING_RIGHT


@jit(inline="always")
def _penalty(feature_penalty, feature, penalty_unit):
    """The gain a split on ``feature`` must pay for it: 0 without penalties (``feature_penalty`` None)."""
    return 0.0 if feature_penalty is None else feature_penalty[feature] * penalty_unit


@jit(inline="always")
def _no_split():
    """(gain, feature, bin, next bin, missing) before any feature is examined: no split."""
    return -np.inf, -1, -1, -1, _scans.MISSING_RIGHT


@jit(parallel=True, refcounted=False, callable_from_python=False, cache=False)  # docs/design.md, "Numba rules": parallel kernels that call kernels
def _pooled_scans_parallel(histograms, slot_bins, slot_marked, slot, features, first, last, n_bins, missing_bins, node, params, monotonic_cst, gains, cuts, categories, feature_owner, sweep_prefix, n_owners):
    """``pooled_scans`` of features ``first:last`` on numba's threads, each writing its own
    entries. Thread ``t`` scans the drawn features it fills and subtracts
    (``feature_owner``; ``_pooled_fill.fill_histograms_parallel``), so that a feature's
    histograms are read by the core that wrote them (``docs/design.md``,
    "Parallelism"); thread 0 also records the features no thread fills."""
    for owner in numba.prange(n_owners):
        for i in range(first, last):
            feature = features[i]
            if max(feature_owner[feature], 0) == owner:
                _pooled_fill.record_pooled_scan(
                    histograms, slot_bins, slot_marked, slot, feature, n_bins, missing_bins, node, params,
                    monotonic_cst, None, gains, cuts, categories, feature_owner, sweep_prefix[owner],
                )  # fmt: skip


@jit(refcounted=False, callable_from_python=False)
def on_several_threads(n_threads):
    """Whether the pooled scans may run on several threads (``pooled_scans``,
    ``_pooled_fill.fill_histograms_parallel``): ``params.n_threads`` (int, or None for a
    tree grown on one thread) as an argument of its own, which numba prunes."""
    return n_threads is not None and n_threads > 1


@jit(refcounted=False, callable_from_python=False)
def pooled_scans(histograms, slot_bins, slot_marked, slot, features, first, last, n_bins, missing_bins, node, params, monotonic_cst, present, gains, cuts, categories, feature_owner, sweep_prefix, n_threads):
    """Every drawn feature ``features[first:last]`` of a node scanned in its pooled histograms.

    Each scan looks for its feature's best cut against no floor, so that the scans are
    independent: the caller compares them in draw order (``_splitter``), which gives
    the split the one loop over features would, on one thread or ``params.n_threads``
    (a node's features are summed in its histograms already; LightGBM searches its
    features in parallel likewise). The three-way split (``present``) shares its
    scratch and scans on one thread.

    Parameters
    ----------
    histograms : float64 or int32 array of shape (n_slots, n_features, max_bins, n_hist_columns)
    slot_bins, slot_marked : uint64 array of shape (n_slots, n_features, ceil(max_bins / 64)), bool array of shape (n_slots,)
        The pool's marks of the bins its fills touched (``_histograms.Pool``).
    slot : int
    features : int32 array of shape (n_features,)
        The node's drawn features first.
    first, last : int
    n_bins, missing_bins : int32 arrays of shape (n_features,)
    node : Node
    params : _builder.GrowthParams
    monotonic_cst : None or int8 array of shape (n_features,)
        Each feature's monotone constraint (``for_feature``); None: no constraint, and
        no clipped gain compiled (``_scans.histogram_scan``).
    present : float64 array of shape (n_statistics,) or None
        ``ScanScratch.present``.
    gains : float64 array of shape (n_features,)
    cuts : int64 array of shape (n_features, 4)
        Written at the drawn features ``features[first:last]`` (rows indexed by feature):
        each scan's gain (-inf: no valid cut) and its
        (is_constant, bin, next bin, missing) as ``pooled_scan`` returns them (for a
        categorical feature, the size of its left set in place of the bin).
    categories : _categories.CategorySplits or None
        The tree's categorical features; None: none.
    feature_owner : int64 array of shape (n_features,)
        ``Pool.feature_owner``: the thread that fills each feature, -1 for none.
    sweep_prefix : float64 array of shape (n_owners, N_PREFIX_ROWS, max_bins)
        ``Pool.sweep_prefix``: each thread's scratch for its sweeps.
    n_threads : int or None
        ``params.n_threads``, an argument of its own: None (a tree grown on one thread)
        compiles no parallel scan (``_rows.partition_node``).
    """
    if present is None and n_threads is not None and n_threads > 1 and last - first > 1:
        _pooled_scans_parallel(
            histograms, slot_bins, slot_marked, slot, features, first, last, n_bins, missing_bins, node, params,
            monotonic_cst, gains, cuts, categories, feature_owner, sweep_prefix, n_threads,
        )  # fmt: skip
        return
    for i in range(first, last):
        _pooled_fill.record_pooled_scan(
            histograms, slot_bins, slot_marked, slot, features[i], n_bins, missing_bins, node, params,
            monotonic_cst, present, gains, cuts, categories, feature_owner, sweep_prefix[0],
        )  # fmt: skip


@jit(inline="always")
def _pooled_best_split(binned, node, params, present, features, rng_state, pool, slot, feature_penalty, penalty_unit, monotonic_cst, categories, scanned_row):
    """``best_split`` of a node with pooled histograms: the drawn features scanned together.

    The features are drawn in batches of as many as are still to be examined, each
    batch scanned at once (``pooled_scans``, on several threads) and compared
    in draw order. A batch holds exactly the features the one loop would examine
    next, so the draws, the features examined and the split are the loop's.

    A node whose fill scanned it already (``scanned_row`` of at least 0: every feature,
    ``_pooled_fill.fill_histograms_parallel``) draws its features and compares the
    scans found in that row of the pool's: the same draws and the same scans, so the
    same split.
    """
    gains = pool.scan_gains[max(scanned_row, 0)]
    cuts = pool.scan_cuts[max(scanned_row, 0)]
    best_gain, best_feature, best_bin, best_next, best_missing = _no_split()
    n_usable = 0
    drawn = np.int64(0)
    while n_usable < params.max_features and drawn < len(features):
        first = drawn
        drawn = min(first + params.max_features - n_usable, len(features))
        for i in range(first, drawn):
            _scans.draw_feature(features, i, rng_state)
        if scanned_row < 0:
            pooled_scans(
                pool.histograms, pool.slot_bins, pool.slot_marked, slot, features, first, drawn, binned.n_bins,
                binned.missing_bins, node, params, monotonic_cst, present, gains, cuts, categories, pool.feature_owner,
                pool.sweep_prefix, params.n_threads,
            )  # fmt: skip
        for i in range(first, drawn):
            feature = features[i]
            if cuts[feature, 0]:
                continue
            n_usable += 1
            penalty = _penalty(feature_penalty, feature, penalty_unit)
            if cuts[feature, 2] >= 0 and gains[feature] > best_gain + penalty:  # the loop's comparison (best_split)
                best_gain = gains[feature] - penalty
                best_feature = feature
                best_bin = cuts[feature, 1]
                best_next = cuts[feature, 2]
                best_missing = cuts[feature, 3]
                if _categories.is_categorical(categories, feature):
                    _categories.keep_best(categories, categories.order[feature], best_bin)
    return best_feature, best_bin, best_next, best_gain, best_missing


@jit(inline="always")
def best_split(binned, rows, node, params, scratch, features, rng_state, sweep_order, pool, slot, listwise, lists, feature_penalty, penalty_unit, monotonic_cst, categories, scanned_row):
    """Best split of ``node`` over up to ``max_features`` usable features, each feature's
    gain less its cost penalty (Mohan's thesis, Eq. 6.1).

    Parameters
    ----------
    binned : _builder.Binned
    rows : _rows.SortedRows
    node : _scans.Node
    params : _builder.GrowthParams
    scratch : _scans.ScanScratch or None
        None for a listwise node (its sweeps have their own scratch).
    features : int32 array of shape (n_features,)
        Per-tree permutation, partially reshuffled at every node.
    rng_state : uint64 array of shape (2,)
    sweep_order : None or int64 array of shape (>= n_tree_rows, 3)
        An array: the sorted sweep (the stateful-criterion path, for tests), with this
        scratch. None: histogram scans.
    pool : None or _histograms.Pool
    slot : int
        When ``pool`` is given and ``slot >= 0``, ``pool.histograms[slot]`` holds the
        node's sums and the scans read them instead of the rows.
    listwise : None or _listwise.Listwise
    lists : None or _listwise.NodeLists
        A listwise node: its sweeps (``open_node`` prepared it); None: pointwise.
    feature_penalty : None or float64 array of shape (n_features,)
        ``lambda * c(f)`` of each feature not yet free (``docs/costs.md``), 0 otherwise;
        None in a tree without penalties, which then compiles none.
    penalty_unit : float
        Unscaled gain that a penalty of 1 stands for (``_criteria.penalty_unit``): a
        split on ``f`` is scored by its gain less ``feature_penalty[f] * penalty_unit``.
    monotonic_cst : None or int8 array of shape (n_features,)
        Each feature's monotone constraint (-1, 0, 1), seen by the scans through
        ``_scans.for_feature``; None for a tree without constraints, whose type keeps
        the clipped gains out of its compiled scans (``_criteria.candidate_gain``).
    categories : _categories.CategorySplits or None
        The tree's categorical features (None: none): a split on one is a set of its
        bins, left in ``categories.best``.
    scanned_row : int
        The row of the pool's scans (``_histograms.Pool.scan_gains``) that holds the node's
        scans of every feature already (``_histograms.scanned_row``); -1: none.

    Returns
    -------
    feature : int
        -1 when no split is valid.
    bin : int
        Largest bin going left (-1: no present value goes left, only the missing ones);
        for a categorical feature, the number of its bins going left.
    next_bin : int
        Smallest occupied bin going right.
    gain : float
        Cost decrease of the split (unscaled), or the change of ``sum_q w_q E[DCG_q] /
        IDCG_q`` for a listwise node, less the feature's penalty.
    missing : int
        Where the node's rows with a missing value of ``feature`` go: ``_scans.MISSING_RIGHT``,
        ``MISSING_LEFT``, or ``MISSING_APART`` (a child of their own, above the cut ``bin``).
    """
    if pool is not None:
        if slot >= 0:
            return _pooled_best_split(
                binned, node, params, scratch.present, features, rng_state, pool, slot, feature_penalty, penalty_unit,
                monotonic_cst, categories, scanned_row,
            )  # fmt: skip
    best_gain, best_feature, best_bin, best_next, best_missing = _no_split()
    n_usable = 0
    for i in range(len(features)):
        if n_usable >= params.max_features:
            break
        feature = _scans.draw_feature(features, i, rng_state)
        # The scans look for a gain above their threshold: the best penalised gain so
        # far plus this feature's penalty (0 when costs are off: the same comparisons).
        penalty = _penalty(feature_penalty, feature, penalty_unit)
        constant, gain, b, after, missing = _scan_feature(
            binned, feature, rows, _scans.for_feature(node, monotonic_cst, feature), params, monotonic_cst, scratch,
            best_gain + penalty, sweep_order, listwise, lists, categories,
        )  # fmt: skip
        if constant:
            continue
        n_usable += 1
        if after >= 0:
            best_gain = gain - penalty
            best_feature = feature
            best_bin = b
            best_next = after
            best_missing = missing
            if _categories.is_categorical(categories, feature):
                _categories.keep_best(categories, categories.order[0], b)
    return best_feature, best_bin, best_next, best_gain, best_missing


@jit(inline="always")
def threshold(bin_thresholds, bin_values, feature, left_bin, right_bin):
    """Raw-value cut between the last bin going left and the first occupied bin going right.

    The midpoint of the two bins' values, as CART places it between the node's
    neighbouring values (Breiman et al. 1984; scikit-learn), kept within
    ``[edge(left_bin), edge(right_bin - 1)]`` so that raw values partition the
    training rows exactly as the bins did. With one bin per distinct value
    (``max_bins=None`` or few values) it is scikit-learn's threshold. ``left_bin`` -1
    (the missing rows alone on the left) gives -inf: every present value goes right;
    ``right_bin`` the missing bin (its value +inf: the missing rows alone on the right)
    gives +inf, every present value left, as imputing +inf would.
    """
    if left_bin < 0:
        return -np.inf
    low = bin_values[feature, left_bin]
    high = bin_values[feature, right_bin]
    if high == np.inf:  # the midpoint's guard below would pull it down to the left bin's edge
        return np.inf
    middle = (low + high) / 2
    if not middle < high:  # the midpoint of adjacent doubles can round up
        middle = low
    return min(max(middle, bin_thresholds[feature, left_bin]), bin_thresholds[feature, right_bin - 1])


@jit(inline="always")
def _random_split(binned, rows, node, params, scratch, features, rng_state):
    """RF-rand's drawn split and its impurity decrease (for feature importances).

    The missing rows go left only when ``missing_direction`` is ``LEFT``: a drawn cut
    learns nothing, so it follows the ``RIGHT`` rule otherwise. Each side keeps at least
    ``min_samples_leaf`` rows (``_scans.random_split``)."""
    missing = int(params.missing_direction == _scans.LEFT)
    feature, b, after = _scans.random_split(
        binned.X_binned, binned.n_bins, binned.missing_bins, binned.bin_values, rows.samples, node.start, node.end,
        features, rng_state, params.min_samples_leaf, missing,
    )  # fmt: skip
    gain = 0.0
    if feature >= 0:
        missing_bin = binned.missing_bins[feature]
        left = scratch.left
        for c in range(len(left)):
            left[c] = 0.0
        left_weight = 0.0
        for position in range(node.start, node.end):
            if _rows.goes_left(binned.X_binned[rows.samples[position], feature], b, missing_bin, missing, None):
                left[int(rows.targets[_rows.target_index(rows, position), 0])] += rows.weights[position]
                left_weight += rows.weights[position]
        gain = _criteria.exact_class_gain(
            params.criterion, left, node.statistics, left_weight, node.weight, node.cost, rows.integer_weights
        )
    return feature, b, after, gain, missing


@jit(refcounted=False, callable_from_python=False)
def pointwise_split(binned, rows, start, end, node_weight, statistics, params, scale, scratch, features, rng_state, sweep_order, pool, slot, feature_penalty, penalty_unit, monotonic_cst, lower, upper, categories, drawn, scanned_row):
    """Best split of the node ``rows.samples[start:end]`` by the tree's (pointwise) criterion.

    Parameters
    ----------
    binned : _builder.Binned
    rows : _rows.SortedRows
    start, end : int
    node_weight : float
    statistics : float64 array of shape (n_statistics,)
        The node's statistics (``_criteria.accumulate``).
    params : _builder.GrowthParams
    scale : float
        ``_criteria.gain_scale`` of the tree: a split is made only if its scaled gain
        exceeds ``params.min_gain_to_split``.
    scratch, features, rng_state, sweep_order, pool, slot, feature_penalty, penalty_unit, monotonic_cst, categories :
        As in ``best_split``; ``scratch`` None (a tree that splits listwise only) finds
        no split. RF-rand's drawn split pays no penalty: it chooses nothing.
    lower, upper : float
        Bounds of the node's value set by monotone splits above it (-inf, inf: none).
    drawn : True or None
        ``Workspace.drawn``: True, RF-rand's drawn split; None, the search. A separate
        argument: numba drops the drawn split from the searched trees.
    scanned_row : int
        As in ``best_split``.

    Returns
    -------
    feature : int
        -1 when the node is pure or no split passes ``min_gain_to_split``.
    bin : int
        Largest bin going left.
    next_bin : int
        Smallest occupied bin going right.
    gain : float
        Cost decrease of the split (unscaled).
    missing : int
        As in ``best_split``.
    """
    if scratch is None:  # a tree that splits listwise only never gets here: compile nothing more
        return -1, -1, -1, 0.0, _scans.MISSING_RIGHT
    cost, pure = _criteria.node_cost(params.criterion, statistics, node_weight, params.l2_regularization, rows.integer_weights)
    if pure:
        return -1, -1, -1, 0.0, _scans.MISSING_RIGHT
    node = _scans.Node(start, end, node_weight, cost, statistics, lower, upper, np.int64(0))
    if drawn is not None:  # at the default floor of 0 a drawn cut is kept whatever its gain, as in RF-rand
        feature, b, after, gain, missing = _random_split(binned, rows, node, params, scratch, features, rng_state)
        if feature >= 0 and params.min_gain_to_split > 0.0 and not gain * scale > params.min_gain_to_split:
            feature = -1
        return feature, b, after, gain, missing
    feature, b, after, gain, missing = best_split(
        binned, rows, node, params, scratch, features, rng_state, sweep_order, pool, slot, None, None, feature_penalty,
        penalty_unit, monotonic_cst, categories, scanned_row,
    )  # fmt: skip
    if feature >= 0 and not gain * scale > params.min_gain_to_split:
        feature = -1
    return feature, b, after, gain, missing


@jit(refcounted=False, callable_from_python=False)
def listwise_split(binned, rows, start, end, node_weight, statistics, params, features, rng_state, listwise, target_sum, score, leaf_targets, feature_penalty, penalty_unit, monotonic_cst):
    """Best split of a node by the listwise criterion (``_listwise``), evaluated against the tree as it is now.

    ``target_sum`` and ``score`` are the node's ``sum w * leaf_target`` and value,
    ``listwise`` the tree's ``_listwise.Listwise``; the rest as in ``pointwise_split``.
    Returns (feature, bin, next bin, gain, missing) with the gain the change of
    the mean expected NDCG; feature -1 when no split passes ``min_gain_to_split``.
    """
    if _listwise.single_grade(statistics):  # no split changes any score
        return -1, -1, -1, 0.0, _scans.MISSING_RIGHT
    lists = _listwise.open_node(listwise, rows, start, end, score, target_sum, leaf_targets, rng_state)
    node = _scans.Node(start, end, node_weight, 0.0, statistics, -np.inf, np.inf, np.int64(0))  # no pointwise cost
    feature, b, after, gain, missing = best_split(
        binned, rows, node, params, None, features, rng_state, None, None, np.int64(-1), listwise, lists,
        feature_penalty, penalty_unit, monotonic_cst, None, np.int64(-1),
    )  # fmt: skip
    _listwise.release_node(listwise.query_slot, listwise.slot_ints, lists.n_slots)
    gain *= listwise.scale
    if feature >= 0 and not gain > max(params.min_gain_to_split, _LISTWISE_GAIN_NOISE):
        feature = -1
    return feature, b, after, gain, missing
