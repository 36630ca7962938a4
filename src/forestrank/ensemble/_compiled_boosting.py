"""The boosting iteration compiled whole: the objective's gradients, the tree, its Newton
leaves and the training scores of as many iterations as no one observes, in one kernel.

``BaseBoostingRanker.fit`` grows its trees here when the fit's configuration has a
compiled path (``_boosting.BaseBoostingRanker._compiled_boosting``): a single-output
objective that offers ``compiled_state()`` (with its leaves' curvature where it has one
of its own), best-first or depth-wise trees on every row
with the histogram pool (categorical features too), and none of the per-iteration draws and updates that live in
Python (``subsample``, ``feature_fraction``, feature costs, quantized gradients,
monotone constraints, position bias). Python returns where a user can observe the fit:
after every iteration when evaluation sets are scored, when verbose or stopping early;
otherwise after chunks of about a quarter second, so that Ctrl-C is seen. The kernel runs the same named steps as the per-iteration
path (``_boosting.BaseBoostingRanker._boost_output``) on the same arrays, so its trees
and scores are that path's bit for bit (tested).
"""

from collections import namedtuple

import numba
import numpy as np

from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE, NODE_DTYPE
from .._numba.jit import jit
from .._tree import _builder
from .._tree._grow import TrainingSet, TreeMemory, TreeParams, category_bitmaps
from .._tree._rows import by_row, sorted_rows
from .._tree._tree import Tree, add_children
from ..objectives._compiled import gradients_at, leaf_curvature_at

GrownTrees = namedtuple(
    "GrownTrees",
    ["nodes", "missing_left", "values", "n_node_samples", "weighted_n_node_samples", "feature_gains", "node_count",
     "category_sets"],
)  # fmt: skip
GrownTrees.__doc__ = """The trees of the iterations of one call, one row per iteration.

nodes, missing_left, values, n_node_samples, weighted_n_node_samples :
    Arrays of shape (n_iterations, node capacity): ``_builder.TreeOutput``'s node arrays
    (NODE_DTYPE, uint8, float64, int64, float64), ``values`` the shrunk Newton steps.
feature_gains : float64 array of shape (n_iterations, n_features)
node_count : int64 array of shape (n_iterations,)
category_sets : uint64 array of shape (n_iterations, node capacity, n_bin_words)
    Each tree's ``_categories.CategorySplits.sets`` (empty without categorical features).
"""

Iteration = namedtuple("Iteration", ["learning_rate", "l2_regularization", "squared", "shift_invariant"])
Iteration.__doc__ = """The leaves' and targets' settings: ``learning_rate`` and ``l2_regularization`` (float64)
of the Newton steps; ``squared`` (bool): the trees split on ``-g`` (``split_gain="squared"``);
``shift_invariant`` (bool): the objective's, whose trees that cannot split step 0
(``BaseBoostingRanker._store_values``)."""


@jit(parallel=True, callable_from_python=False)
def _start_rows(gradients, hessians, base_weight, squared, samples, targets, weights):
    """The tree's rows in row order with their targets (``exact_targets``) and weights
    (``_rows.sorted_rows``: ``samples``, ``targets`` and ``weights`` of a ``SortedRows``, apart:
    numba's parallel loops do not write through a tuple's arrays), on numba's threads, each
    writing an equal block of rows, as the root's parallel partition then reads them
    (``_rows.partition_parallel``): the rows a thread moves are in its own cache."""
    for row in numba.prange(len(gradients)):
        samples[row] = row
        targets[row, 0] = -gradients[row] if squared else gradients[row]
        targets[row, 1] = hessians[row]
        weights[row] = base_weight[row]


@jit(inline="always")
def _start_tree(gradients, hessians, base_weight, squared, rows, work, pool):
    """``_start_rows``, and the workspace and pool as ``_grow.TreeMemory.fresh_workspace`` and
    ``_histograms.new_pool`` leave them."""
    _start_rows(gradients, hessians, base_weight, squared, rows.samples, rows.targets, rows.weights)
    work.frontier.size[0] = 0
    for f in range(len(work.features)):
        work.features[f] = f
    for node in range(len(pool.node_slot)):
        pool.node_slot[node] = -1
    for slot in range(len(pool.free_slots)):
        pool.free_slots[slot] = slot
    pool.n_free[0] = pool.scratch
    pool.scanned[0] = -1
    pool.scanned[1] = -1


@jit(parallel=True, callable_from_python=False)
def _place_rows(n_nodes, nodes, node_start, node_end, samples, gradients, hessians, base_weight, row_leaf, sums, n_blocks):
    """Each leaf's rows' ``row_leaf`` and its sums of ``w * g``, ``w * h`` and ``w`` into
    ``sums[leaf]`` (``_boosting_state.leaf_sums``), on ``n_blocks`` numba threads, each taking
    the leaves whose rows start in its block of positions (equal blocks, as numba's parallel
    loops cut a range).

    Parameters
    ----------
    n_nodes : int
    nodes : NODE_DTYPE array of shape (>= n_nodes,)
        The tree (``feature`` -1 at leaves).
    node_start, node_end : int64 arrays of shape (>= n_nodes,)
        Each node's positions in ``samples`` (``_builder.NodeTable``).
    samples : int64 array of shape (n_rows,)
        The tree's rows in node order (``_rows.SortedRows``), every row in one leaf.
    gradients, hessians, base_weight : float64 arrays of shape (n_rows,)
    row_leaf : int64 array of shape (n_rows,)
        Written: each row's leaf.
    sums : float64 array of shape (>= n_nodes, 3)
        Written at the leaves.

    A leaf's rows sit in increasing row order (``_start_rows`` places them so, and every
    partition is stable: ``_rows.partition``), so each leaf's sums add its rows in the
    order of one pass over all rows: the same bits on any number of threads.
    """
    n_rows = len(samples)
    for block in numba.prange(n_blocks):
        first = block * n_rows // n_blocks
        last = (block + 1) * n_rows // n_blocks
        for node in range(n_nodes):
            start = node_start[node]
            if nodes[node]["feature"] >= 0 or start < first or start >= last:
                continue
            gradient_sum = 0.0
            hessian_sum = 0.0
            weight_sum = 0.0
            for position in range(start, node_end[node]):
                row = samples[position]
                weight = base_weight[row]
                gradient_sum += weight * gradients[row]
                hessian_sum += weight * hessians[row]
                weight_sum += weight
                row_leaf[row] = node
            sums[node, 0] = gradient_sum
            sums[node, 1] = hessian_sum
            sums[node, 2] = weight_sum


@jit(parallel=True, callable_from_python=False)
def _add_values(raw, row_leaf, values):
    """``_boosting_state.add_leaf_values`` of a tree holding every row, on numba's threads;
    returns whether every score stayed finite."""
    n_infinite = 0
    for row in numba.prange(len(raw)):
        score = raw[row] + values[row_leaf[row]]
        raw[row] = score
        n_infinite += not np.isfinite(score)
    return n_infinite == 0


@jit(inline="always")
def _set_leaves(n_nodes, nodes, sums, own_curvature, curvature, settings, values):
    """Each node's shrunk Newton step into ``values`` and each leaf's into its ``threshold``
    (``_boosting_state.leaf_sums``, ``newton_steps`` and ``_store_values``) from the leaves'
    ``sums`` (``_place_rows``; ``add_children`` writes the internal nodes'), over the leaves'
    ``curvature`` instead of their hessian sums when the objective has its own; a tree
    that could not split steps 0 where the objective is shift-invariant."""
    if own_curvature:
        for node in range(n_nodes):
            sums[node, 1] = curvature[node]
    add_children(nodes[:n_nodes]["feature"], nodes[:n_nodes]["left"], sums[:n_nodes])
    for node in range(n_nodes):
        denominator = sums[node, 1] + settings.l2_regularization
        stepping = denominator > 0.0 and (n_nodes > 1 or not settings.shift_invariant)
        step = -sums[node, 0] / denominator if stepping else 0.0
        values[node] = settings.learning_rate * step
        if nodes[node]["feature"] < 0:
            nodes[node]["threshold"] = values[node]


@jit(inline="always")
def _keep_tree(iteration, n_nodes, output, categories, trees):
    """Copy the tree of ``iteration`` from the builder's buffers, and its categorical splits'
    sets of bins, into ``trees`` (its values are there already: ``_set_leaves`` writes
    them into its row)."""
    for node in range(n_nodes):
        trees.nodes[iteration, node] = output.nodes[node]
        trees.missing_left[iteration, node] = output.missing_left[node]
        trees.n_node_samples[iteration, node] = output.n_node_samples[node]
        trees.weighted_n_node_samples[iteration, node] = output.weighted_n_node_samples[node]
        if categories is not None:
            for word in range(categories.sets.shape[1]):
                trees.category_sets[iteration, node, word] = categories.sets[node, word]
    trees.node_count[iteration] = n_nodes


@jit  # counts references: numba compiles the objective's kernel, which allocates, under its caller's flags
def boost_trees(objective_state, raw, gradients, hessians, base_weight, settings, binned, rows, params, work, pool, categories, rng_states, output, sums, curvature, trees):
    """Boost one tree per row of ``rng_states``; returns how many were grown and whether the
    scores stayed finite (when not, the last one grown made them diverge and no more were).

    Parameters
    ----------
    objective_state : namedtuple
        The objective's ``compiled_state()`` (``objectives/_compiled.gradients_at``).
    raw, gradients, hessians : float64 arrays of shape (n_rows,)
        The training scores, updated in place, and the derivatives' buffers.
    base_weight : float64 array of shape (n_rows,)
        Every row's weight, all positive.
    settings : Iteration
    binned : _builder.Binned
    rows : _rows.SortedRows
        Buffers of ``n_rows`` rows (``integer_weights`` that of ``base_weight``).
    params : _builder.GrowthParams
    work : _builder.Workspace
        Its trees have no feature penalty and no monotone constraint (``build_tree``
        gets None for both).
    pool : _histograms.Pool
    categories : _categories.CategorySplits or None
        The categorical features' scratch, None without them (``_grow.TreeMemory``).
    rng_states : uint64 array of shape (n_iterations, 2)
        Each tree's generator state (``_tree._rng``), advanced in place.
    output : _builder.TreeOutput
        The builder's node buffers and ``row_leaf`` (int64, (n_rows,)); its
        ``feature_gains`` are unused (each tree writes its row of ``trees``).
    sums : float64 array of shape (node capacity, 3)
        Scratch of the leaves' sums.
    curvature : float64 array of shape (node capacity,)
        Scratch of the leaves' curvature (``objectives/_compiled.leaf_curvature_at``).
    trees : GrownTrees
        Output, rows ``0:returned``.
    """
    leaf_targets = raw[:0]
    n_blocks = max(params.n_threads, 1)
    for iteration in range(len(rng_states)):
        gradients_at(objective_state, raw, gradients, hessians)
        _start_tree(gradients, hessians, base_weight, settings.squared, rows, work, pool)
        gains = trees.feature_gains[iteration]
        for feature in range(len(gains)):
            gains[feature] = 0.0
        tree_output = _builder.TreeOutput(
            output.nodes, output.missing_left, output.values, output.n_node_samples, output.weighted_n_node_samples,
            gains, output.row_leaf[:0],  # the rows are placed in their leaves on the threads, with the leaves' sums
        )  # fmt: skip
        n_nodes = _builder.build_tree(
            binned, rows, leaf_targets, params, work, rng_states[iteration], None, pool, None, tree_output, None,
            categories, None, None,
        )
        _place_rows(
            n_nodes, output.nodes, work.table.start, work.table.end, rows.samples, gradients, hessians, base_weight,
            output.row_leaf, sums, n_blocks,
        )  # fmt: skip
        leaf_curvature = curvature[:n_nodes]
        for node in range(n_nodes):
            leaf_curvature[node] = 0.0
        own_curvature = leaf_curvature_at(objective_state, raw, output.row_leaf, base_weight, leaf_curvature)
        values = trees.values[iteration]
        _set_leaves(n_nodes, output.nodes, sums, own_curvature, leaf_curvature, settings, values)
        _keep_tree(iteration, n_nodes, output, categories, trees)
        if not _add_values(raw, output.row_leaf, values):  # every row has a leaf
            return iteration + 1, False  # the per-iteration path refuses the fit here too
    return len(rng_states), True


class CompiledBoosting:
    """The buffers and settings of ``boost_trees`` for one fit, made once: ``grow`` then boosts
    any number of iterations at a time.

    Parameters
    ----------
    training : TrainingSet
    params : TreeParams
    histograms : ndarray
        The fit's histogram pool (``_grow.histogram_pool``), float64.
    memory : TreeMemory
        The fit's tree memory.
    objective_state : namedtuple
        ``RankingObjective.compiled_state()``.
    raw, gradients, hessians : float64 arrays of shape (n_rows, 1)
        The fit's scores and derivatives (``BoostingState``).
    base_weight : float64 array of shape (n_rows,), all positive
    row_leaf : int64 array of shape (n_rows,)
    settings : Iteration
    interaction_groups : uint64 array or None
        As ``_grow.grow_tree`` takes it.
    """

    def __init__(
        self, training: TrainingSet, params: TreeParams, histograms: np.ndarray, memory: TreeMemory,
        objective_state: tuple, raw: np.ndarray, gradients: np.ndarray, hessians: np.ndarray, base_weight: np.ndarray,
        row_leaf: np.ndarray, settings: Iteration, interaction_groups: np.ndarray | None,
    ) -> None:  # fmt: skip
        n_rows = len(base_weight)
        memory.reserve(n_rows)
        work = memory.fresh_workspace()
        if interaction_groups is not None:
            work = work._replace(interaction_groups=interaction_groups)
        bin_counts = memory.bin_counts(training.X_binned, histograms)
        binned = training.binned()
        pool = bin_counts.pool(histograms, memory.capacity, n_rows, params.n_threads, binned.missing_bins)
        self._arguments = (
            objective_state, raw.reshape(-1), gradients.reshape(-1), hessians.reshape(-1), base_weight, settings,
            binned, by_row(sorted_rows(np.arange(n_rows, dtype=INDEX_DTYPE), training.targets, base_weight, memory.rows)),
            params.growth_params(), work, pool, memory.categories,
        )  # fmt: skip
        self._training = training
        self._categories = memory.categories
        self._output = _builder.TreeOutput(
            memory.nodes, memory.missing_left, memory.values, memory.n_node_samples, memory.weighted_n_node_samples,
            np.zeros(0), row_leaf,
        )  # fmt: skip
        self._sums = np.empty((memory.capacity, 3))
        self._curvature = np.empty(memory.capacity)
        self._capacity = memory.capacity
        self._n_features = training.X_binned.shape[1]

    def grow(self, rng_states: np.ndarray) -> tuple[list[Tree], bool]:
        """Boost one tree per generator state (uint64, (n_iterations, 2)); returns the trees
        and whether the scores stayed finite (when not, the trees up to the one that made
        them diverge)."""
        n_iterations = len(rng_states)
        trees = GrownTrees(
            np.empty((n_iterations, self._capacity), dtype=NODE_DTYPE), np.empty((n_iterations, self._capacity), dtype=np.uint8),
            np.empty((n_iterations, self._capacity), dtype=FLOAT_DTYPE),
            np.empty((n_iterations, self._capacity), dtype=INDEX_DTYPE),
            np.empty((n_iterations, self._capacity), dtype=FLOAT_DTYPE), np.empty((n_iterations, self._n_features)),
            np.empty(n_iterations, dtype=INDEX_DTYPE),
            np.empty((n_iterations, *(self._categories.sets.shape if self._categories is not None else (0, 0))), dtype=np.uint64),
        )  # fmt: skip
        grown, finite = boost_trees(*self._arguments, rng_states, self._output, self._sums, self._curvature, trees)
        kept = []
        for i, n in enumerate(trees.node_count[:grown]):
            categories = None if self._categories is None else self._categories._replace(sets=trees.category_sets[i])
            category_offsets, category_bits = category_bitmaps(
                self._training, categories, trees.nodes[i], trees.missing_left[i], n
            )
            kept.append(
                Tree(
                    nodes=trees.nodes[i, :n].copy(), missing_left=trees.missing_left[i, :n].copy(),
                    values=trees.values[i, :n].copy(), n_node_samples=trees.n_node_samples[i, :n].copy(),
                    weighted_n_node_samples=trees.weighted_n_node_samples[i, :n].copy(),
                    feature_gains=trees.feature_gains[i].copy(), category_offsets=category_offsets,
                    category_bits=category_bits,
                )  # fmt: skip
            )
        return kept, bool(finite)
