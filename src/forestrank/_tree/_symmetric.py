"""Symmetric (oblivious) trees: one split per level, shared by every node of the level.

CatBoost grows such trees by default (Prokhorenkova et al., "CatBoost: unbiased
boosting with categorical features", NeurIPS 2018, §5 and appendix): a level chooses
the (feature, cut) whose gain *summed over the level's nodes* is largest, and every
node of the level splits on it. A tree of depth ``d`` then has ``2**d`` leaves, a
row's leaf is the ``d`` bits of its ``d`` comparisons (``_predictor.add_oblivious_values``), and the
tree is a strong regulariser: a split must help the whole level, not one node.

The level's search reads per-node histograms, summed as the engine's pool sums them
(``_histograms``): the smaller child of each pair from its rows, the larger as its
parent's less the smaller. A node's contribution to a candidate is the newton (or
variance) cost decrease of ``_criteria.moment_cost``; a node whose child would hold
fewer than ``min_samples_leaf`` rows or less than ``min_child_weight`` (hessian for
newton) contributes nothing to that candidate. Missing values go left or right by
the level's split (``missing_direction``: learned per level, or fixed).

The tree is written as the engine's binary node table, nodes numbered level by level
(node ``2**l - 1 + k`` is node ``k`` of level ``l``, its children ``2 * node + 1`` and
``2 * node + 2``), so every exporter and predictor reads it unchanged; nodes of a
level no training row reaches still split, and their leaves hold 0.
"""

import numba
import numpy as np

from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE, NODE_DTYPE
from .._numba.jit import jit
from .._numba.bits import pop_lowest_bit, sign_mask
from .._numba.pair_add import add_pair
from . import _criteria, _rng, _scans, _splitter
from ._grow import TrainingSet, TreeParams
from ._tree import Tree, subtree_sums

# The deepest symmetric tree: 2**12 leaves, each with a histogram of every feature.
MAX_DEPTH = 12
# At most this many bytes of histograms (two levels' worth) for one fit's symmetric trees.
MAX_HISTOGRAM_BYTES = 1 << 31

# Columns of a node's histogram bin: the two moments, the row count and the weight (two
# pairs, each added as one vector: ``_numba/pair_add.py``).
_FIRST, _SECOND, _COUNT, _WEIGHT = 0, 1, 2, 3
_N_COLUMNS = 4


@jit(refcounted=False)
def _fill(X_binned, order, start, end, targets, weights, criterion, first_feature, last_feature, histogram):
    """Sum the rows ``order[start:end]`` into ``histogram`` (float64, (n_features, max_bins, 4)),
    features ``first_feature:last_feature`` only (zeroed first).

    ``targets``: float64 (n_rows, 2), the gradients and hessians (or ``y`` twice);
    ``weights``: float64 (n_rows,).
    """
    histogram[first_feature:last_feature] = 0.0
    for position in range(start, end):
        row = order[position]
        weight = weights[row]
        first, second = _criteria.row_moments(criterion, weight, targets[row, 0], targets[row, 1])
        for feature in range(first_feature, last_feature):
            b = np.int64(X_binned[row, feature])
            add_pair(histogram, (feature, b, _FIRST), first, second)
            add_pair(histogram, (feature, b, _COUNT), 1.0, weight)


@jit(parallel=True, cache=False)  # calls a kernel and is linked into grow_levels ("Numba rules")
def fill_level(X_binned, n_bins, order, node_start, targets, weights, criterion, parents, children, n_blocks):
    """The histograms of a new level (``children``) from its parents' (``parents``).

    Parameters
    ----------
    X_binned : uint8/16/32 array of shape (n_rows, n_features)
    n_bins : int32 array of shape (n_features,)
        Each feature's bins (the missing bin included): the larger children's bins beyond
        them are left unwritten, and nothing reads them.
    order : int64 array of shape (n_tree_rows,)
        The tree's rows, grouped by node of the new level.
    node_start : int64 array of shape (n_nodes + 1,)
        Node ``k`` of the new level holds ``order[node_start[k]:node_start[k + 1]]``.
    targets, weights : float64 arrays of shape (n_rows, 2) and (n_rows,)
    criterion : int
        ``_criteria.NEWTON`` or ``VARIANCE``.
    parents : float64 array of shape (>= n_nodes // 2, n_features, max_bins, 4), or of
        shape (0, ...) at the root (one node, filled from its rows)
    children : float64 array of shape (>= n_nodes, n_features, max_bins, 4)
        Written: the smaller child of each pair from its rows, the other as the
        parent's less it.
    n_blocks : int
        Feature blocks run in parallel (each block loops over the rows of its nodes).
    """
    n_nodes = len(node_start) - 1
    n_features = X_binned.shape[1]
    for block in numba.prange(n_blocks):
        first_feature = block * n_features // n_blocks
        last_feature = (block + 1) * n_features // n_blocks
        if len(parents) == 0:
            _fill(X_binned, order, node_start[0], node_start[1], targets, weights, criterion, first_feature, last_feature, children[0])
            continue
        for pair in range(n_nodes // 2):
            left = 2 * pair
            left_rows = node_start[left + 1] - node_start[left]
            right_rows = node_start[left + 2] - node_start[left + 1]
            small = left if left_rows <= right_rows else left + 1
            large = left + 1 if small == left else left
            _fill(
                X_binned, order, node_start[small], node_start[small + 1], targets, weights, criterion, first_feature,
                last_feature, children[small],
            )  # fmt: skip
            for feature in range(first_feature, last_feature):
                for b in range(n_bins[feature]):
                    for column in range(_N_COLUMNS):
                        children[large, feature, b, column] = (
                            parents[pair, feature, b, column] - children[small, feature, b, column]
                        )


@jit(refcounted=False)
def _node_cut_gain(criterion, l2, min_child_weight, min_samples_leaf, parent_cost, first, second, count, weight, left_first, left_second, left_count, left_weight):
    """One node's cost decrease when ``left_*`` of its ``first, second, count, weight`` go
    left; 0 where a child would be too small (the node then only follows the level)."""
    right_count = count - left_count
    if left_count < min_samples_leaf or right_count < min_samples_leaf:
        return 0.0
    right_first = first - left_first
    right_second = second - left_second
    right_weight = weight - left_weight
    if criterion == _criteria.NEWTON:
        if left_second < min_child_weight or right_second < min_child_weight:
            return 0.0
    elif left_weight < min_child_weight or right_weight < min_child_weight:
        return 0.0
    children = _criteria.moment_cost(criterion, left_first, left_second, left_weight, l2) + _criteria.moment_cost(
        criterion, right_first, right_second, right_weight, l2
    )
    return parent_cost - children


@jit(refcounted=False)
def _add_sparse_node_gains(histograms, node, feature, last_occupied, occupied, criterion, l2, min_child_weight, min_samples_leaf, parent_cost, first, second, count, weight, left_first, left_second, left_count, left_weight, gain, gains):
    """Add one node's gain changes at its occupied bins below ``last_occupied`` to ``gains``
    (float64, (max_bins,): one feature and side of ``level_gains``'), the bins found through
    ``occupied`` (uint64 scratch of ``ceil(max_bins / 64)`` words), a bitmap built without
    branches (``_numba/bits.py``); ``left_*`` start as the missing rows' sums or 0, and
    ``gain`` as the node's gain with those alone on the left."""
    occupied[:] = 0
    for b in range(last_occupied):
        is_occupied = sign_mask(0.5 - histograms[node, feature, b, _COUNT]) & 1  # counts are integers
        occupied[b >> 6] |= np.uint64(is_occupied) << np.uint64(b & 63)
    for word_index in range(len(occupied)):
        word = occupied[word_index]
        while word != np.uint64(0):
            word, bit = pop_lowest_bit(word)
            b = word_index * 64 + bit
            left_first += histograms[node, feature, b, _FIRST]
            left_second += histograms[node, feature, b, _SECOND]
            left_count += histograms[node, feature, b, _COUNT]
            left_weight += histograms[node, feature, b, _WEIGHT]
            cut_gain = _node_cut_gain(
                criterion, l2, min_child_weight, min_samples_leaf, parent_cost, first, second, count, weight,
                left_first, left_second, left_count, left_weight,
            )  # fmt: skip
            gains[b] += cut_gain - gain
            gain = cut_gain


@jit(parallel=True, cache=False)  # calls kernels and is linked into grow_levels ("Numba rules")
def level_gains(histograms, node_totals, features, n_bins, missing_bins, criterion, l2, min_child_weight, min_samples_leaf, missing_direction, gains):
    """Every candidate's summed cost decrease over the level's nodes (unscaled).

    Parameters
    ----------
    histograms : float64 array of shape (>= n_nodes, n_features, max_bins, 4)
    node_totals : float64 array of shape (n_nodes, 4)
        Each node's sums over its rows (any feature's histogram summed over its bins):
        read once, not once per feature.
    features : int32 array of shape (n_candidate_features,)
        The features the level may split on.
    n_bins : int32 array of shape (n_features,)
        Each feature's bins, the missing bin included (the histograms' bins read).
    missing_bins : int32 array of shape (n_features,)
        Each feature's missing bin (its last), -1 without one.
    criterion, l2, min_child_weight, min_samples_leaf : the tree's parameters (floats but the
        criterion: one compiled signature whatever the caller passes)
    missing_direction : int
        ``_scans.LEARN``, ``LEFT`` or ``RIGHT``: the sides the missing rows are tried on
        (a feature without a missing bin is tried once, its missing values sent right
        unless ``LEFT``).
    gains : float64 array of shape (n_features, max_bins, 2), written
        ``gains[f, b, side]``: the level's gain of "bin <= b" on feature ``f`` with the
        missing rows right (side 0) or left (side 1); -inf for bins that are no cut
        (empty over the level) and for sides not tried. Where the level holds missing
        rows, the last occupied bin's side 0 and the missing bin's side 1 hold the "is it
        missing?" candidates (``_add_missing_apart_gains``); otherwise -inf.
    """
    n_nodes = len(node_totals)
    for i in numba.prange(len(features)):
        occupied = np.empty((histograms.shape[2] + 63) // 64, dtype=np.uint64)
        feature = features[i]
        max_bins = n_bins[feature]
        missing_bin = missing_bins[feature]
        gains[feature] = -np.inf
        last_occupied = np.int64(-1)
        for b in range(max_bins):
            if b == missing_bin:
                continue
            for node in range(n_nodes):
                if histograms[node, feature, b, _COUNT] > 0.0:
                    last_occupied = b
                    break
        for side in range(2):
            missing_left = side == 1
            if missing_direction == _scans.LEARN and missing_bin >= 0:
                tried = True
            else:  # one side: the fixed one, or the right for a feature without missing rows
                tried = missing_left == (missing_direction == _scans.LEFT)
            if not tried:
                continue
            for b in range(last_occupied):
                gains[feature, b, side] = 0.0
            for node in range(n_nodes):
                first = node_totals[node, _FIRST]
                second = node_totals[node, _SECOND]
                count = node_totals[node, _COUNT]
                weight = node_totals[node, _WEIGHT]
                if count == 0.0:  # a node no row reaches adds nothing to any cut
                    continue
                parent_cost = _criteria.moment_cost(criterion, first, second, weight, l2)
                left_first = 0.0
                left_second = 0.0
                left_count = 0.0
                left_weight = 0.0
                gain = 0.0
                if missing_left and missing_bin >= 0:
                    left_first = histograms[node, feature, missing_bin, _FIRST]
                    left_second = histograms[node, feature, missing_bin, _SECOND]
                    left_count = histograms[node, feature, missing_bin, _COUNT]
                    left_weight = histograms[node, feature, missing_bin, _WEIGHT]
                    gain = _node_cut_gain(
                        criterion, l2, min_child_weight, min_samples_leaf, parent_cost, first, second, count, weight,
                        left_first, left_second, left_count, left_weight,
                    )  # fmt: skip
                    if last_occupied > 0:
                        gains[feature, 0, side] += gain
                # A bin empty in this node moves no row: the node's gain is the previous cut's
                # (before its first row, that of its missing rows alone on the left, or 0: an
                # empty child is below any min_samples_leaf). So the node adds that gain at the
                # first cut and the change of its gain at each of its cuts, and the running
                # sum below makes every cut's total. The cuts stop before the last occupied
                # bin, so below the missing bin (the last).
                if count < 2.0 * max_bins:  # a small node: its few occupied bins, by a bitmap
                    _add_sparse_node_gains(
                        histograms, node, feature, last_occupied, occupied, criterion, l2, min_child_weight,
                        min_samples_leaf, parent_cost, first, second, count, weight, left_first, left_second,
                        left_count, left_weight, gain, gains[feature, :, side],
                    )  # fmt: skip
                else:  # most bins occupied: a walk over the bins, whose test rarely fails
                    for b in range(last_occupied):
                        if histograms[node, feature, b, _COUNT] > 0.0:
                            left_first += histograms[node, feature, b, _FIRST]
                            left_second += histograms[node, feature, b, _SECOND]
                            left_count += histograms[node, feature, b, _COUNT]
                            left_weight += histograms[node, feature, b, _WEIGHT]
                            cut_gain = _node_cut_gain(
                                criterion, l2, min_child_weight, min_samples_leaf, parent_cost, first, second, count,
                                weight, left_first, left_second, left_count, left_weight,
                            )  # fmt: skip
                            gains[feature, b, side] += cut_gain - gain
                            gain = cut_gain
            for b in range(1, last_occupied):
                gains[feature, b, side] += gains[feature, b - 1, side]
        # Bins empty over the whole level are no cut of their own: the cut before them
        # partitions the rows alike.
        for b in range(last_occupied):
            occupied = False
            for node in range(n_nodes):
                occupied = occupied or histograms[node, feature, b, _COUNT] > 0.0
            if not occupied:
                gains[feature, b, 0] = -np.inf
                gains[feature, b, 1] = -np.inf
        if missing_bin >= 0 and last_occupied >= 0:
            _add_missing_apart_gains(
                histograms, node_totals, feature, last_occupied, missing_bin, criterion, l2, min_child_weight,
                min_samples_leaf, missing_direction, gains,
            )  # fmt: skip


@jit(refcounted=False)
def _add_missing_apart_gains(histograms, node_totals, feature, last_occupied, missing_bin, criterion, l2, min_child_weight, min_samples_leaf, missing_direction, gains):
    """The "is it missing?" candidates of ``feature`` in ``level_gains``' ``gains``: every
    present row left and the missing rows right (side 0, at ``last_occupied``, the bin no
    other cut uses), or the missing rows alone left (side 1, at ``missing_bin``, which
    ``grow_levels`` turns into the cut -1), each where ``missing_direction`` tries its
    side, as a best-first node tries them (docs/missing_values.md). None where the level
    holds no missing row of the feature: they would move no row."""
    n_nodes = len(node_totals)
    missing_rows = 0.0
    for node in range(n_nodes):
        missing_rows += histograms[node, feature, missing_bin, _COUNT]
    if missing_rows == 0.0:
        return
    for side in range(2):
        if missing_direction != _scans.LEARN and (side == 1) != (missing_direction == _scans.LEFT):
            continue
        total = 0.0
        for node in range(n_nodes):
            first = node_totals[node, _FIRST]
            second = node_totals[node, _SECOND]
            count = node_totals[node, _COUNT]
            weight = node_totals[node, _WEIGHT]
            if count == 0.0:
                continue
            missing_first = histograms[node, feature, missing_bin, _FIRST]
            missing_second = histograms[node, feature, missing_bin, _SECOND]
            missing_count = histograms[node, feature, missing_bin, _COUNT]
            missing_weight = histograms[node, feature, missing_bin, _WEIGHT]
            if side == 1:
                left = (missing_first, missing_second, missing_count, missing_weight)
            else:
                left = (first - missing_first, second - missing_second, count - missing_count, weight - missing_weight)
            total += _node_cut_gain(
                criterion, l2, min_child_weight, min_samples_leaf, _criteria.moment_cost(criterion, first, second, weight, l2),
                first, second, count, weight, left[0], left[1], left[2], left[3],
            )  # fmt: skip
        gains[feature, last_occupied if side == 0 else missing_bin, side] = total


@jit(refcounted=False)
def split_level(X_binned, order, node_start, feature, cut_bin, missing_bin, missing_left, scratch, new_start):
    """Split every node of a level by one rule, keeping each node's rows in their order.

    ``order`` (int64, (n_tree_rows,)) is regrouped in place: node ``k``'s rows
    ``order[node_start[k]:node_start[k + 1]]`` become nodes ``2k`` (bin <= ``cut_bin``,
    or missing and ``missing_left``) and ``2k + 1``, whose bounds ``new_start`` (int64,
    (2 * n_nodes + 1,)) receives. ``scratch``: int64 of ``order``'s length.
    """
    n_nodes = len(node_start) - 1
    new_start[0] = node_start[0]
    for node in range(n_nodes):
        start = node_start[node]
        end = node_start[node + 1]
        n_left = 0
        n_right = 0
        for position in range(start, end):
            row = order[position]
            b = np.int64(X_binned[row, feature])
            left = (missing_left == 1) if b == missing_bin else b <= cut_bin
            if left:
                order[start + n_left] = row
                n_left += 1
            else:
                scratch[n_right] = row
                n_right += 1
        for i in range(n_right):
            order[start + n_left + i] = scratch[i]
        new_start[2 * node + 1] = start + n_left
        new_start[2 * node + 2] = end


class SymmetricTreeMemory:
    """The buffers of the symmetric trees of one fit, allocated once: two levels' histograms
    (none for pairwise trees), the candidates' gains and the rows' grouping."""

    def __init__(self, n_features: int, max_bins: int, depth: int, histograms: bool = True) -> None:
        self.gains = np.empty((n_features, max_bins, 2), dtype=FLOAT_DTYPE)
        self.n_rows = -1
        self.columns = None  # the pairwise trees' binned matrix by feature (``_pairwise``), made by the first tree
        if not histograms:  # pairwise trees score their levels over pairs
            self.histograms = None
            return
        # The two levels a tree alternates between; the deepest searched one has 2 ** (depth - 1) nodes.
        shape = (2 ** max(depth - 1, 0), n_features, max_bins, _N_COLUMNS)
        needed = 2 * int(np.prod(shape)) * np.dtype(FLOAT_DTYPE).itemsize
        if needed > MAX_HISTOGRAM_BYTES:
            raise ValueError(
                f"symmetric trees of depth {depth} on {n_features} features of {max_bins} bins need {needed / 2**30:.1f} GiB "
                f"of histograms (at most {MAX_HISTOGRAM_BYTES / 2**30:.0f} GiB): lower max_depth or max_bins."
            )
        self.histograms = (np.empty(shape, dtype=FLOAT_DTYPE), np.empty(shape, dtype=FLOAT_DTYPE))

    def reserve(self, n_tree_rows: int) -> None:
        if n_tree_rows > self.n_rows:
            self.n_rows = n_tree_rows
            self.scratch = np.empty(n_tree_rows, dtype=INDEX_DTYPE)


# A level's gain below this fraction of what its nodes explain is rounding, not a cut: the
# cuts that move no row of a node, or leave it a child too small, add exactly 0 for it,
# but the running sums over the nodes' bins (level_gains) leave a residue of the order of
# the nodes' own gains times the float64 epsilon, which differs with the rows' order.
_NEGLIGIBLE_GAIN = 1e-12

# A candidate whose noise-free score is this many deviations below the best one's cannot
# win: both normal draws would have to be over half as many deviations from 0 (probability
# below 1e-17), so such candidates draw no noise.
_NOISE_REACH = 17.0


@jit
def best_candidate(gains, features, missing_bins, explained, noise_sd, rng_state, offset, scale, min_gain):
    """The best candidate of ``gains`` (``level_gains``) among ``features``: (index in
    ``features``, cut bin, side), index -1 when no candidate exists; ``missing_bins``
    (int32, (n_features,)) places each feature's "missing rows alone on the left"
    candidate, at its missing bin, first among its cuts, where the cut isolating an
    imputed value below every present one would be.

    Only the candidates that would make the level draw: those whose gain, less
    ``offset`` and times ``scale`` (> 0), exceeds ``min_gain`` (``min_gain_to_split``)
    by more than ``_NEGLIGIBLE_GAIN`` of ``explained`` (scaled). Noise thus chooses which
    improving cut a level takes, never whether the tree goes on: among many cuts that
    move no row (gain 0), a drawn one would end the tree.

    Without noise (``noise_sd`` 0) the largest gain wins. With it, a candidate scores
    ``sqrt(gain + explained) + noise_sd * z``, ``z`` a standard normal draw from
    ``rng_state`` (uint64, (2,): ``_rng.standard_normal``): the square root of what its children explain
    over the level (``explained``: what the level's nodes explain, ``sum G^2 / (H + l2)``
    for newton), which is CatBoost's cosine score when the hessians are the weights, and
    the scale its ``random_strength`` noise is drawn in. Only candidates within
    ``_NOISE_REACH`` deviations of the best noise-free score draw, in candidate order.
    Ties go to the first feature, bin and side, in that order.
    """
    accepted = (offset, scale, min_gain + _NEGLIGIBLE_GAIN * explained * scale)
    best, best_score = _scan_candidates(gains, features, missing_bins, explained, noise_sd > 0.0, -np.inf, 0.0, rng_state, accepted)
    if noise_sd == 0.0 or best[0] < 0:
        return best
    floor = best_score - _NOISE_REACH * noise_sd
    best, _ = _scan_candidates(gains, features, missing_bins, explained, noise_sd > 0.0, floor, noise_sd, rng_state, accepted)
    return best


@jit
def _scan_candidates(gains, features, missing_bins, explained, rooted, floor, noise_sd, rng_state, accepted):
    """One pass of ``best_candidate`` over the candidates in order: each scores its gain, or
    ``sqrt(gain + explained)`` when ``rooted``; those below ``floor`` are skipped, the others
    add ``noise_sd`` times a standard normal draw when ``noise_sd`` > 0, and the best of
    those that ``accepted`` (offset, scale, min_gain) lets split wins. Every candidate
    above the floor draws, accepted or not, so that which cuts draw does not hang on the
    rounding of gains near the acceptance (a query weighted 2 and its copy draw alike).
    Returns the best candidate (index in ``features``, bin, side; index -1 for none) and
    its score."""
    offset, scale, min_gain = accepted
    best_score = -np.inf
    best = (-1, -1, 0)
    for i in range(len(features)):
        feature = features[i]
        missing_bin = missing_bins[feature]
        for position in range(gains.shape[1] + 1):  # position 0: the missing rows alone on the left
            b = missing_bin if position == 0 else position - 1
            for side in range(2):
                if (position == 0) != (b == missing_bin and side == 1) or b < 0:
                    continue
                gain = gains[feature, b, side]
                if gain == -np.inf:
                    continue
                score = np.sqrt(max(gain + explained, 0.0)) if rooted else gain
                if score < floor:
                    continue
                if noise_sd > 0.0:
                    score += noise_sd * _rng.standard_normal(rng_state)
                if score > best_score and (gain - offset) * scale > min_gain:
                    best_score = score
                    best = (i, b, side)
    return best, best_score


@jit
def _explained(criterion, node_totals, l2):
    """What the values of a level's nodes explain, summed: ``G^2 / (H + l2)`` (newton) or
    ``(sum w y)^2 / W`` (variance), each node's cost without a value less its cost
    (``_criteria.moment_cost``); ``node_totals`` (float64, (n_nodes, 4)) as ``level_gains``
    takes them."""
    total = 0.0
    for node in range(len(node_totals)):
        first, second, weight = node_totals[node, _FIRST], node_totals[node, _SECOND], node_totals[node, _WEIGHT]
        cost = _criteria.moment_cost(criterion, first, second, weight, l2)
        total += (second if criterion == _criteria.VARIANCE else 0.0) - cost
    return total


@jit
def _next_occupied(histograms, n_nodes, feature, cut_bin, n_bins, missing_bin):
    """The first bin after ``cut_bin`` that a row of the level's ``n_nodes`` nodes
    occupies, the missing bin aside (the level's threshold lies between the two); past
    the last occupied one (every present row left, the missing ones right), the missing
    bin, whose threshold is +inf (``_splitter.threshold``)."""
    for b in range(cut_bin + 1, n_bins):
        if b == missing_bin:
            continue
        for node in range(n_nodes):
            if histograms[node, feature, b, _COUNT] > 0.0:
                return b
    return missing_bin if missing_bin >= 0 else cut_bin + 1


@jit
def grow_levels(
    X_binned, n_bins, missing_bins, order, targets, weights, criterion, l2, min_child_weight, min_samples_leaf,
    missing_direction, min_gain_to_split, scale, drawn, noise_sd, rng_state, histograms, gains, scratch, n_blocks,
    node_starts, splits,
):  # fmt: skip
    """The levels of a symmetric tree, each filled, scored, chosen and split in turn.

    Parameters
    ----------
    X_binned, n_bins, missing_bins, order, targets, weights, criterion
        As ``fill_level`` and ``level_gains`` take them; ``order`` (int64, (n_tree_rows,))
        is regrouped by node at every level.
    l2, min_child_weight, min_samples_leaf : float
    missing_direction : int
    min_gain_to_split, scale : float
        A level is made only if its gain times ``scale`` exceeds ``min_gain_to_split``.
    drawn : int32 array of shape (max_depth, n_drawn)
        The candidate features of each level.
    noise_sd : float
    rng_state : uint64 array of shape (2,)
        ``best_candidate``'s noise.
    histograms : tuple of two float64 arrays of shape (2**(max_depth - 1), n_features, max_bins, 4)
        A level's parents and children, in turn.
    gains : float64 array of shape (n_features, max_bins, 2)
    scratch : int64 array of shape (>= n_tree_rows,)
    n_blocks : int
    node_starts : int64 array of shape (max_depth + 1, 2**max_depth + 1)
        Written: row ``l``, the first ``2**l + 1`` entries, groups ``order`` by the nodes
        of level ``l`` (of the rows after the last level's split).
    splits : float64 array of shape (max_depth, 5)
        Written: each level's feature, cut bin, next occupied bin, side (1: missing
        left) and scaled gain.

    Returns
    -------
    int
        The levels made (the tree's depth).
    """
    parents, children = histograms
    node_starts[0, 0] = 0
    node_starts[0, 1] = len(order)
    fill_level(X_binned, n_bins, order, node_starts[0, :2], targets, weights, criterion, parents[:0], children, n_blocks)
    max_depth = len(drawn)
    for level in range(max_depth):
        n_nodes = 1 << level
        features = drawn[level]
        node_totals = np.zeros((n_nodes, _N_COLUMNS))
        for node in range(n_nodes):
            for b in range(n_bins[0]):
                for column in range(_N_COLUMNS):
                    node_totals[node, column] += children[node, 0, b, column]
        level_gains(
            children, node_totals, features, n_bins, missing_bins, criterion, l2, min_child_weight, min_samples_leaf,
            missing_direction, gains,
        )  # fmt: skip
        explained = _explained(criterion, node_totals, l2) if noise_sd > 0.0 else 0.0
        index, cut_bin, side = best_candidate(
            gains, features, missing_bins, explained, noise_sd, rng_state, 0.0, scale, min_gain_to_split
        )  # fmt: skip
        if index < 0:
            return level
        feature = features[index]
        gain = gains[feature, cut_bin, side]
        missing_bin = missing_bins[feature]
        if cut_bin == missing_bin:  # the missing rows alone on the left (_add_missing_apart_gains)
            cut_bin = -1
        next_bin = _next_occupied(children, n_nodes, feature, cut_bin, n_bins[feature], missing_bin)
        split_level(
            X_binned, order, node_starts[level, : n_nodes + 1], feature, cut_bin, missing_bin, side, scratch,
            node_starts[level + 1, : 2 * n_nodes + 1],
        )  # fmt: skip
        splits[level, 0] = feature
        splits[level, 1] = cut_bin
        splits[level, 2] = next_bin
        splits[level, 3] = side
        splits[level, 4] = gain * scale
        if level + 1 < max_depth:
            parents, children = children, parents
            fill_level(
                X_binned, n_bins, order, node_starts[level + 1, : 2 * n_nodes + 1], targets, weights, criterion,
                parents, children, n_blocks,
            )  # fmt: skip
    return max_depth


def level_draws(
    rng: np.random.Generator, params: TreeParams, n_features: int, features: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """A symmetric tree's random draws, made before its levels: the state of its score
    noise's generator (uint64, (2,), ``_rng``; never all zero) and each level's candidate
    features (int32, (max_depth, n_drawn)), ``params.max_features`` of ``features``
    (None: all) drawn per level without replacement, sorted."""
    rng_state = rng.integers(1, 2**63, size=2).astype(np.uint64)
    allowed = np.arange(n_features, dtype=np.int32) if features is None else np.asarray(features, dtype=np.int32)
    drawn = np.empty((params.max_depth, min(params.max_features, len(allowed))), dtype=np.int32)
    for level in range(params.max_depth):
        if params.max_features < len(allowed):
            drawn[level] = np.sort(rng.choice(allowed, params.max_features, replace=False))
        else:
            drawn[level] = allowed
    return rng_state, drawn


def grow_symmetric_tree(
    data: TrainingSet,
    weights: np.ndarray,
    params: TreeParams,
    rng: np.random.Generator,
    row_leaf: np.ndarray,
    memory: SymmetricTreeMemory,
    features: np.ndarray | None = None,
    noise_sd: float = 0.0,
) -> Tree:
    """Grow one symmetric tree of depth ``params.max_depth`` on the rows of positive ``weights``.

    Parameters
    ----------
    data : _grow.TrainingSet
        The binned matrix; ``data.targets`` (float64, (n_rows, 2)) the gradients and
        hessians (or the targets of ``split_gain="squared"``).
    weights : float64 array of shape (n_rows,)
    params : _grow.TreeParams
        ``criterion`` (newton or variance), ``max_depth`` (1 to ``MAX_DEPTH``),
        ``l2_regularization``, ``min_child_weight``, ``min_samples_leaf``,
        ``min_gain_to_split`` (a level is made only if its scaled gain is larger: the
        tree is then shallower), ``max_features`` (candidate features drawn per
        level), ``missing_direction`` (``LEARN``, ``LEFT`` or ``RIGHT``).
    rng : numpy Generator
        The levels' feature draws and the seed of the score noise.
    row_leaf : int64 array of shape (n_rows,)
        Receives the leaf node of every row of positive weight (others untouched).
    memory : SymmetricTreeMemory
    features : int32 array, default=None
        The only features the tree may split on (a per-tree feature fraction).
    noise_sd : float
        Deviation of the normal noise added to every candidate's score (``best_candidate``).

    Returns
    -------
    Tree
        Level-ordered nodes (module docstring); the caller sets the values.
    """
    binned = data.binned()
    X_binned, missing_bins = binned.X_binned, binned.missing_bins
    n_features = X_binned.shape[1]
    order = np.flatnonzero(weights > 0).astype(INDEX_DTYPE)
    memory.reserve(len(order))
    rng_state, drawn = level_draws(rng, params, n_features, features)
    depth = params.max_depth
    node_starts = np.empty((depth + 1, 2**depth + 1), dtype=INDEX_DTYPE)
    splits = np.empty((depth, 5), dtype=FLOAT_DTYPE)
    scale = _criteria.gain_scale(params.criterion, float(weights[order].sum()))
    n_levels = grow_levels(
        X_binned, data.n_bins, missing_bins, order, data.targets, weights, params.criterion, params.l2_regularization,
        float(params.min_child_weight), float(params.min_samples_leaf), params.missing_direction,
        float(params.min_gain_to_split), scale, drawn, float(noise_sd), rng_state, memory.histograms, memory.gains,
        memory.scratch, min(numba.get_num_threads(), n_features), node_starts, splits,
    )  # fmt: skip
    levels = [(int(f), int(b), int(n), int(side), gain) for f, b, n, side, gain in splits[:n_levels]]
    return level_tree(
        data, levels, order, node_starts[n_levels, : 2**n_levels + 1], weights, row_leaf, n_features,
        params.missing_direction,
    )  # fmt: skip


def level_tree(
    data: TrainingSet, splits: list, order: np.ndarray, node_start: np.ndarray, weights: np.ndarray, row_leaf: np.ndarray,
    n_features: int, missing_direction: int,
) -> Tree:  # fmt: skip
    """The node table of a symmetric tree of ``splits`` (feature, cut bin, the next bin occupied
    over the level, side, scaled gain per level), whose leaves hold the rows ``order`` grouped by ``node_start``; ``row_leaf`` filled.

    Every row of the tree passes every level, so a level saw missing values of its feature
    when a row of ``order`` has one. A level that saw none sends them, under
    ``missing_direction`` ``LEARN``, to the side that received more of the level's weight
    (the left on a tie), the rule of a best-first node that saw none (``_builder``), per
    level as the oblivious predictor reads one direction a level; a fixed direction stays.
    """
    depth = len(splits)
    n_nodes = 2 ** (depth + 1) - 1
    first_leaf = 2**depth - 1
    nodes = np.zeros(n_nodes, dtype=NODE_DTYPE)
    nodes["feature"] = -1
    nodes["left"] = -1
    missing_left = np.zeros(n_nodes, dtype=np.uint8)
    feature_gains = np.zeros(n_features, dtype=FLOAT_DTYPE)
    leaf_stats = np.zeros((n_nodes, 2), dtype=FLOAT_DTYPE)
    counts = np.diff(node_start)
    leaf_of_position = np.repeat(np.arange(len(counts)), counts)
    leaf_stats[first_leaf:, 0] = counts
    leaf_stats[first_leaf:, 1] = np.bincount(leaf_of_position, weights=weights[order], minlength=len(counts))
    for level, (feature, cut_bin, next_bin, side, gain) in enumerate(splits):
        level_nodes = np.arange(2**level - 1, 2 ** (level + 1) - 1)
        nodes["feature"][level_nodes] = feature
        nodes["left"][level_nodes] = 2 * level_nodes + 1
        nodes["threshold"][level_nodes] = _splitter.threshold(data.bin_thresholds, data.bin_values, feature, cut_bin, next_bin)
        missing_left[level_nodes] = side
        feature_gains[feature] += gain
    row_leaf[order] = first_leaf + leaf_of_position
    sums = subtree_sums(nodes, leaf_stats)
    if missing_direction == _scans.LEARN:
        for level, (feature, *_) in enumerate(splits):
            missing_bin = -1 if data.missing_bins is None else data.missing_bins[feature]
            if missing_bin >= 0 and (data.X_binned[order, feature] == missing_bin).any():
                continue
            level_nodes = np.arange(2**level - 1, 2 ** (level + 1) - 1)
            heavier_left = sums[2 * level_nodes + 1, 1].sum() >= sums[2 * level_nodes + 2, 1].sum()
            missing_left[level_nodes] = 1 if heavier_left else 0
    return Tree(
        nodes=nodes, missing_left=missing_left, values=np.zeros(n_nodes, dtype=FLOAT_DTYPE),
        n_node_samples=sums[:, 0].astype(INDEX_DTYPE), weighted_n_node_samples=sums[:, 1], feature_gains=feature_gains,
    )  # fmt: skip

