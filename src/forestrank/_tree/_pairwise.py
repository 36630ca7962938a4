"""Symmetric trees for pair losses: splits scored and leaves set by a solve over the pairs.

A pair loss couples its documents: moving one leaf's value changes the pairs it shares
with every other leaf. CatBoost's pairwise mode (its ``YetiRankPairwise`` and
``PairLogitPairwise``) fits the leaves jointly over the pairs, where the pointwise mode
sums each document's own curvature: a quadratic model whose curvature between two
leaves is the weight of the pairs joining them (the pairs' weights, not the logistic
curvature ``w p (1 - p)``: a gradient-style fit, as CatBoost's). For leaves ``1..n`` with
derivative sums ``G`` (``-dL/dv``, the ascent direction, summed over each leaf's
documents) and the Laplacian ``W`` of the pairs between leaves (a pair of weight ``w``
between leaves ``i != j`` adds ``w`` to ``W_ii`` and ``W_jj`` and ``-w`` to ``W_ij`` and
``W_ji``; a pair inside one leaf adds nothing), the leaf values are

    x = (W + R)^-1 G,   R = prior (I - J / n) + l2 I,

solved with the last leaf's value fixed at 0 (``R`` without that row and column) and
then shifted to a zero mean; ``prior`` is CatBoost's ``bayesian_matrix_reg`` (a
Bayesian prior that shrinks leaf values towards each other) and ``l2`` its
``l2_leaf_reg``. A candidate split of a symmetric tree's level is scored by what its
``2n`` children explain of the loss's quadratic model, ``G'x - 1/2 x'Wx`` at their
solved values (``W`` without ``R``); the level takes the best over every feature and
cut. The statistics of one feature are each node's derivative sums per bin and, per
ordered pair of nodes, the pair weights by the bin of the pair's lower document
(``smaller``) and of its upper one (``greater``): at a cut ``t`` a pair is wholly left
when its upper bin is at most ``t`` (the running sum of ``greater``), wholly right when
its lower bin is above ``t`` (the total less the running sum of ``smaller``), and split
otherwise, so every cut of a feature is scored from one pass over its pairs.

Rows are the documents of positive weight; missing values go left or right by the
level's choice when the feature has any (``missing_direction="learn"``), in the bin
order as the other symmetric trees place them (``_symmetric``). The node table,
prediction and every exporter are those of ``_symmetric`` (level-ordered nodes).
"""

import numba
import numpy as np

from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE
from .._numba.jit import jit
from . import _scans
from ._grow import TrainingSet, TreeParams
from ._symmetric import _NEGLIGIBLE_GAIN, SymmetricTreeMemory, best_candidate, level_draws, level_tree, split_level
from ._tree import Tree, subtree_sums

# The deepest pairwise tree: a cut of its last level solves for 2**MAX_DEPTH children, and
# each thread holds two (2**(MAX_DEPTH - 1))**2 x n_bins tables of pair weights.
MAX_DEPTH = 8
# CatBoost's default ``bayesian_matrix_reg``: the prior that pulls the leaf values of a
# pairwise solve towards each other (module docstring).
BAYESIAN_MATRIX_REG = 0.1


@jit
def add_pair_weight(laplacian, i, j, weight):
    """Add a pair of ``weight`` between leaves ``i`` and ``j`` to ``laplacian`` (float64,
    (n, n)); nothing when ``i == j``."""
    if i == j:
        return
    laplacian[i, i] += weight
    laplacian[j, j] += weight
    laplacian[i, j] -= weight
    laplacian[j, i] -= weight


@jit
def solve_leaf_values(laplacian, derivatives, n, l2, prior, work, values):
    """The pairwise leaf values ``x = (W + R)^-1 G`` of the module docstring, the last leaf's
    fixed at 0 before the shift to a zero mean.

    Parameters
    ----------
    laplacian : float64 array of shape (>= n, >= n)
        ``W``, its top-left ``n x n`` block read (not modified).
    derivatives : float64 array of shape (>= n,)
        ``G``: each leaf's summed ``-dL/ds``.
    n : int
        Leaves.
    l2, prior : float
        The diagonal regulariser and the Bayesian prior (``R``).
    work : float64 array of shape (>= n, >= n)
        Scratch: the Cholesky factor.
    values : float64 array of shape (>= n,)
        Written: the first ``n`` entries.
    """
    m = n - 1
    for i in range(m):
        for j in range(m):
            work[i, j] = laplacian[i, j] - prior / n
        work[i, i] = laplacian[i, i] + prior * (1.0 - 1.0 / n) + l2
    # Cholesky factor L L' of the m x m block, in the lower triangle of work.
    for j in range(m):
        diagonal = work[j, j]
        for k in range(j):
            diagonal -= work[j, k] * work[j, k]
        if diagonal <= 0.0:  # not positive definite: only without both regularisers; no step
            for i in range(n):
                values[i] = 0.0
            return
        diagonal = np.sqrt(diagonal)
        work[j, j] = diagonal
        for i in range(j + 1, m):
            total = work[i, j]
            for k in range(j):
                total -= work[i, k] * work[j, k]
            work[i, j] = total / diagonal
    for i in range(m):  # forward: L y = G
        total = derivatives[i]
        for k in range(i):
            total -= work[i, k] * values[k]
        values[i] = total / work[i, i]
    for i in range(m - 1, -1, -1):  # backward: L' x = y
        total = values[i]
        for k in range(i + 1, m):
            total -= work[k, i] * values[k]
        values[i] = total / work[i, i]
    values[m] = 0.0
    mean = 0.0
    for i in range(n):
        mean += values[i]
    mean /= n
    for i in range(n):
        values[i] -= mean


@jit
def _explained(laplacian, derivatives, n, values):
    """``G'x - 1/2 x'Wx``: what leaf values ``x`` explain of the quadratic model."""
    total = 0.0
    for i in range(n):
        quadratic = 0.0
        for j in range(n):
            quadratic += laplacian[i, j] * values[j]
        total += values[i] * (derivatives[i] - 0.5 * quadratic)
    return total


@jit
def _children_laplacian(below_greater, below_smaller, totals, laplacian):
    """The Laplacian of a level's ``2 n`` children at one cut (float64, (2n, 2n), written),
    from the pair weights between ordered node pairs ``(i, j)`` (float64, (n, n)) whose
    upper row is below the cut (``below_greater``: both go left), whose lower row is
    (``below_smaller``), and in all (``totals``): child ``2i`` is node ``i``'s left."""
    n = len(totals)
    for i in range(n):
        for j in range(n):
            both_left = below_greater[i, j] + below_greater[j, i]
            both_right = (totals[i, j] - below_smaller[i, j]) + (totals[j, i] - below_smaller[j, i])
            laplacian[2 * i, 2 * j] = -both_left
            laplacian[2 * i + 1, 2 * j + 1] = -both_right
            # The lower row left in node i, the upper right in node j.
            laplacian[2 * i, 2 * j + 1] = -(below_smaller[i, j] - below_greater[i, j])
            laplacian[2 * j + 1, 2 * i] = laplacian[2 * i, 2 * j + 1]
    for child in range(2 * n):  # a pair within one child is no edge; the diagonal sums the rest
        laplacian[child, child] = 0.0
        total = 0.0
        for other in range(2 * n):
            total -= laplacian[child, other]
        laplacian[child, child] = total


@jit
def _position(b, missing_bin, missing_left):
    """Where bin ``b`` sorts when the missing bin goes first (``missing_left``) or stays last."""
    if not missing_left:
        return b
    return 0 if b == missing_bin else b + 1


@jit(parallel=True)  # called from Python only, so cached ("Numba rules", docs/design.md)
def level_scores(
    columns, n_bins, missing_bins, features, rows, row_node, n_nodes, derivatives, winners, losers, winner_nodes,
    loser_nodes, pair_weights, l2, prior, missing_direction, scores,
):  # fmt: skip
    """Score every cut of ``features`` for the next level of a pairwise symmetric tree.

    Parameters
    ----------
    columns : uint8/16/32 array of shape (n_features, n_rows)
        The binned matrix feature by feature (a pair's two rows are then read from one
        feature's row, which stays in cache).
    n_bins, missing_bins : int32 arrays of shape (n_features,)
        Each feature's bins (the missing bin included) and its missing bin (-1: none).
    features : int32 array of shape (n_candidates,)
    rows : int64 array of shape (n_tree_rows,)
        The tree's rows.
    row_node : int64 array of shape (n_rows,)
        Each tree row's node of the current level (0 to ``n_nodes - 1``).
    n_nodes : int
    derivatives : float64 array of shape (n_rows,)
        ``-dL/ds`` of every row.
    winners, losers, pair_weights : int64, int64 and float64 arrays of shape (n_pairs,)
        The pairs (rows of the tree) and their weights; pairs of weight 0 are skipped.
    winner_nodes, loser_nodes : int64 arrays of shape (n_pairs,)
        ``row_node`` of each pair's rows (looked up once per level, not per feature).
    l2, prior : float
        ``solve_leaf_values``' regularisers.
    missing_direction : int
        ``_scans.LEARN`` (both sides where the tree has missing rows), ``LEFT`` or
        ``RIGHT`` (that side only), as the pointwise symmetric trees take it.
    scores : float64 array of shape (n_features, max_bins, 2)
        Written for ``features``: ``[feature, cut_bin, side]`` the children's
        ``G'x - 1/2 x'Wx`` when the bins up to ``cut_bin`` go left, with the missing bin
        (side 1) or not (side 0); ``[feature, missing_bin, 1]`` the missing rows alone on
        the left (``_symmetric.best_candidate``'s place for it); ``-inf`` where the cut
        leaves a side empty or repeats a lower cut.
    """
    n_children = 2 * n_nodes
    for index in numba.prange(len(features)):
        feature = features[index]
        column = columns[feature]
        n_feature_bins = n_bins[feature]
        missing_bin = missing_bins[feature]
        scores[feature, :, :] = -np.inf
        # One position more than bins: with the missing rows first, a feature without a
        # missing bin shifts every bin up by one.
        n_positions = n_feature_bins + 1
        node_bins = np.empty((n_nodes, n_positions))
        occupied = np.empty(n_positions, dtype=np.bool_)
        smaller = np.empty((n_positions, n_nodes, n_nodes))
        greater = np.empty((n_positions, n_nodes, n_nodes))
        laplacian = np.empty((n_children, n_children))
        work = np.empty((n_children, n_children))
        child_derivatives = np.empty(n_children)
        values = np.empty(n_children)
        has_missing_rows = False
        for side in range(2):
            missing_left = side == 1
            if missing_direction == _scans.LEARN:
                if missing_left and not has_missing_rows:
                    continue  # no missing row: the other side says it all
            elif missing_left != (missing_direction == _scans.LEFT):
                continue
            node_bins[:] = 0.0
            occupied[:] = False
            for row in rows:
                b = np.int64(column[row])
                has_missing_rows |= b == missing_bin
                position = _position(b, missing_bin, missing_left)
                node_bins[row_node[row], position] += derivatives[row]
                occupied[position] = True
            smaller[:] = 0.0
            greater[:] = 0.0
            for k in range(len(winners)):
                weight = pair_weights[k]
                if weight == 0.0:
                    continue
                a = winners[k]
                b = losers[k]
                position_a = _position(np.int64(column[a]), missing_bin, missing_left)
                position_b = _position(np.int64(column[b]), missing_bin, missing_left)
                node_a = winner_nodes[k]
                node_b = loser_nodes[k]
                if position_a <= position_b:
                    smaller[position_a, node_a, node_b] += weight
                    greater[position_b, node_a, node_b] += weight
                else:
                    smaller[position_b, node_b, node_a] += weight
                    greater[position_a, node_b, node_a] += weight
            totals = smaller.sum(axis=0)
            node_totals = node_bins.sum(axis=1)
            below_smaller = np.zeros((n_nodes, n_nodes))
            below_greater = np.zeros((n_nodes, n_nodes))
            below = np.zeros(n_nodes)
            highest = -1
            for position in range(n_positions):
                if occupied[position]:
                    highest = position
            for position in range(highest):  # a cut at the highest occupied position sends nothing right
                below_smaller += smaller[position]
                below_greater += greater[position]
                below += node_bins[:, position]
                if not occupied[position]:
                    continue  # the same children as the last occupied position's cut
                cut_bin = position - 1 if missing_left else position
                if cut_bin < 0:  # the missing rows alone on the left: kept at the missing bin (best_candidate)
                    if missing_bin < 0:
                        continue
                    cut_bin = missing_bin
                for i in range(n_nodes):
                    child_derivatives[2 * i] = below[i]
                    child_derivatives[2 * i + 1] = node_totals[i] - below[i]
                _children_laplacian(below_greater, below_smaller, totals, laplacian)
                solve_leaf_values(laplacian, child_derivatives, n_children, l2, prior, work, values)
                scores[feature, cut_bin, side] = _explained(laplacian, child_derivatives, n_children, values)


@jit
def node_system(row_node, n_nodes, rows, derivatives, winners, losers, pair_weights):
    """The nodes' derivative sums ``G`` (float64, (n_nodes,)) and pair Laplacian ``W``
    (float64, (n_nodes, n_nodes)); ``row_node`` (int64, (n_rows,)) places the tree's
    ``rows`` (int64), and pairs of weight 0 are skipped."""
    sums = np.zeros(n_nodes)
    laplacian = np.zeros((n_nodes, n_nodes))
    for row in rows:
        sums[row_node[row]] += derivatives[row]
    for k in range(len(winners)):
        if pair_weights[k] != 0.0:
            add_pair_weight(laplacian, row_node[winners[k]], row_node[losers[k]], pair_weights[k])
    return sums, laplacian


def _explained_by_nodes(row_node, n_nodes, rows, derivatives, pairs, l2, prior):
    """``G'x - 1/2 x'Wx`` of the current nodes at their solved values (a level's score
    before its split)."""
    sums, laplacian = node_system(row_node, n_nodes, rows, derivatives, *pairs)
    values = np.empty(n_nodes)
    if n_nodes > 1:
        solve_leaf_values(laplacian, sums, n_nodes, l2, prior, np.empty((n_nodes, n_nodes)), values)
        return float(_explained(laplacian, sums, n_nodes, values))
    return 0.0  # one node: its value is shifted to a zero mean, it explains nothing


def grow_pairwise_tree(
    data: TrainingSet,
    weights: np.ndarray,
    params: TreeParams,
    rng: np.random.Generator,
    row_leaf: np.ndarray,
    memory: SymmetricTreeMemory,
    derivatives: np.ndarray,
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray],
    prior: float,
    features: np.ndarray | None = None,
    noise_sd: float = 0.0,
) -> Tree:
    """Grow one symmetric tree of depth ``params.max_depth`` whose levels are scored over pairs.

    Parameters
    ----------
    data : _grow.TrainingSet
        The binned matrix (its targets are not read).
    weights : float64 array of shape (n_rows,)
        The tree's rows are those of positive weight.
    params : _grow.TreeParams
        ``max_depth``, ``l2_regularization``, ``max_features``, ``min_gain_to_split``
        (a level is made only if it explains more than this); the row minimums of the
        pointwise trees do not apply (as in CatBoost's pairwise mode).
    rng : numpy Generator
        The levels' feature draws and the seed of the score noise.
    row_leaf : int64 array of shape (n_rows,)
        Receives the leaf node of every tree row.
    memory : _symmetric.SymmetricTreeMemory
        Its ``gains`` hold each level's scores; its ``scratch`` the rows' regrouping.
    derivatives : float64 array of shape (n_rows,)
        ``-dL/ds`` of every row (sample weights in).
    pairs : (winners, losers, weights)
        int64, int64 and float64 arrays of shape (n_pairs,): the pairs the levels are
        scored on (weight 0: left out of this tree; a pair with a row of weight 0 must
        weigh 0).
    prior : float
        The Bayesian prior of ``solve_leaf_values``.
    features : int32 array, default=None
        The only features the tree may split on.
    noise_sd : float
        Deviation of the normal noise on every candidate's ``sqrt`` score
        (``_symmetric.best_candidate``).

    Returns
    -------
    Tree
        Level-ordered nodes (``_symmetric``); the caller sets the values
        (``pairwise_leaf_values``).
    """
    binned = data.binned()
    X_binned, missing_bins = binned.X_binned, binned.missing_bins
    order = np.flatnonzero(weights > 0).astype(INDEX_DTYPE)
    memory.reserve(len(order))
    rng_state, drawn = level_draws(rng, params, X_binned.shape[1], features)
    if memory.columns is None:  # the binned matrix feature by feature, once per fit
        memory.columns = np.ascontiguousarray(X_binned.T)
    columns = memory.columns
    row_node = np.zeros(len(weights), dtype=INDEX_DTYPE)
    node_start = np.array([0, len(order)], dtype=INDEX_DTYPE)
    drawn_pairs = pairs[2] != 0.0  # the pairs of this tree's splits, once
    winners, losers, pair_weights = (array[drawn_pairs] for array in pairs)
    l2 = float(params.l2_regularization)
    splits = []
    for level in range(params.max_depth):
        n_nodes = 2**level
        level_scores(
            columns, data.n_bins, missing_bins, drawn[level], order, row_node, n_nodes, derivatives, winners, losers,
            row_node[winners], row_node[losers], pair_weights, l2, prior, params.missing_direction, memory.gains,
        )  # fmt: skip
        nodes_explain = _explained_by_nodes(row_node, n_nodes, order, derivatives, (winners, losers, pair_weights), l2, prior)
        # A cut that moves no row scores what the nodes explain up to the solves' rounding:
        # it must not pass as a gain (best_candidate's tolerance, in the level's scores' units).
        scores = memory.gains[drawn[level]]
        scores = np.abs(scores[np.isfinite(scores)])
        magnitude = max(abs(nodes_explain), float(scores.max()) if len(scores) else 0.0)
        while True:
            index, cut_bin, side = best_candidate(
                memory.gains, drawn[level], missing_bins, 0.0, float(noise_sd), rng_state, nodes_explain, 1.0,
                float(params.min_gain_to_split) + _NEGLIGIBLE_GAIN * magnitude,
            )  # fmt: skip
            if index < 0:
                break
            feature = int(drawn[level][index])
            scored_bin = cut_bin
            gain = memory.gains[feature, cut_bin, side] - nodes_explain
            missing_bin = int(missing_bins[feature])
            if cut_bin == missing_bin:  # the missing rows alone on the left
                cut_bin = -1
            new_start = np.empty(2 * n_nodes + 1, dtype=INDEX_DTYPE)
            split_level(X_binned, order, node_start, feature, cut_bin, missing_bin, side, memory.scratch, new_start)
            if (np.diff(new_start).reshape(n_nodes, 2) > 0).all(axis=1).any():
                break
            # A cut that divides no node (an earlier level's again) left the rows in place,
            # yet it can score above its nodes: the solve fixes the last leaf at 0, and an
            # empty last child moves that pin onto a leaf without rows. Not a gain.
            memory.gains[feature, scored_bin, side] = -np.inf
        if index < 0:
            break
        bins = X_binned[order, feature].astype(np.int64)
        above = bins[(bins > cut_bin) & (bins != missing_bin)]
        # Past the last present bin (every present row left, the missing ones right) the
        # missing bin: a threshold of +inf, as _symmetric._next_occupied gives.
        next_bin = int(above.min()) if len(above) else (missing_bin if missing_bin >= 0 else cut_bin + 1)
        node_start = new_start
        row_node[order] = np.repeat(np.arange(2 * n_nodes), np.diff(node_start))
        splits.append((feature, int(cut_bin), next_bin, int(side), float(gain)))
    return level_tree(data, splits, order, node_start, weights, row_leaf, X_binned.shape[1], params.missing_direction)


def pairwise_leaf_values(
    tree: Tree, row_leaf: np.ndarray, rows: np.ndarray, derivatives: np.ndarray, pairs: tuple, l2: float, prior: float
) -> np.ndarray:
    """Every node's value (float64, (n_nodes,)) from a solve over ``pairs`` (CatBoost's
    pairwise leaves): the leaves' ``solve_leaf_values`` shifted so that their mean over
    the ``rows`` is 0, a leaf without rows 0, an internal node the rows' mean of the
    leaves below it.

    ``row_leaf`` (int64, (n_rows,)) holds each of ``rows``' leaf node; ``derivatives``
    (float64, (n_rows,)) ``-dL/ds``; ``pairs`` (winners, losers, weights) as
    ``grow_pairwise_tree`` takes them.
    """
    leaves = np.flatnonzero(tree.nodes["feature"] < 0)
    first_leaf = int(leaves[0])
    n_leaves = len(leaves)
    leaf_of_row = np.zeros(len(row_leaf), dtype=INDEX_DTYPE)
    leaf_of_row[rows] = row_leaf[rows] - first_leaf
    sums, laplacian = node_system(leaf_of_row, n_leaves, rows, derivatives, *pairs)
    values = np.zeros(n_leaves)
    if n_leaves > 1:
        solve_leaf_values(laplacian, sums, n_leaves, l2, prior, np.empty((n_leaves, n_leaves)), values)
    counts = np.bincount(leaf_of_row[rows], minlength=n_leaves).astype(FLOAT_DTYPE)
    values -= np.dot(values, counts) / counts.sum()
    values[counts == 0] = 0.0
    node_values = np.zeros(tree.node_count)
    node_values[leaves] = values
    below = subtree_sums(tree.nodes, node_values * tree.n_node_samples)  # read at the leaves only
    rows_below = subtree_sums(tree.nodes, tree.n_node_samples.astype(FLOAT_DTYPE))
    np.divide(below, rows_below, out=node_values, where=(tree.nodes["feature"] >= 0) & (rows_below > 0))
    return node_values
