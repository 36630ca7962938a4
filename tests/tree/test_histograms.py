"""The histogram pool: pooled scans and the sibling subtraction grow the sweep's trees."""

import dataclasses

import numpy as np
import pytest

from forestrank._tree import _criteria, _frontier, _histograms
from forestrank._tree._grow import TreeParams, grow_tree, histogram_pool

from .helpers import seed, summed_histograms, training_set



# The sorted sweep is a builder specialisation of its own, and exact bins (900 of them,
# uint16 codes) one more for both the pool and the sweep: with the slow tests.
@pytest.mark.slow
@pytest.mark.parametrize("max_bins", [255, None], ids=["255", "exact"])
@pytest.mark.parametrize("expansion", ["best", "breadth"])
@pytest.mark.parametrize("criterion", [_criteria.VARIANCE, _criteria.NEWTON], ids=["variance", "newton"])
def test_pooled_histograms_with_sibling_subtraction_grow_the_sorted_sweep_trees(criterion, expansion, max_bins):
    """Every feature examined + moment criterion = the pooled path; with integer targets
    and weights all sums (and the subtractions) are exact, so the trees must be identical.

    900 distinct values x 25 features, in 255 bins or exact (900 bins: a slot is 0.7 MB);
    besides the default pool, a 4-slot pool is exhausted by either growth order and runs
    the scratch-slot and refill fallbacks, and a pool that grew another tree before
    (boosting reuses one per fit) must change nothing.
    """
    rng = np.random.default_rng(5)
    n_rows, n_features = 3000, 25
    X = rng.integers(0, 900, size=(n_rows, n_features)) / 9.0
    X[:, 7] = 4.0  # one value: the pool never fills it, the sweep finds it constant at every node
    signal = X[:, 0] - X[:, 1] + (X[:, 2] > 50) * 40
    targets = np.column_stack([np.round(signal / 10 + rng.normal(size=n_rows)), rng.integers(1, 4, n_rows)])
    if criterion == _criteria.VARIANCE:
        targets = targets[:, :1]
    weights = rng.integers(1, 3, n_rows).astype(float)
    training, binner = training_set(X, targets, max_bins=max_bins)
    assert binner.n_bins_.max() > (800 if max_bins is None else 250)
    leaf_budget = 40 if expansion == "best" else None

    def params(sweep, n_threads=None):
        return TreeParams(
            criterion, 0, max_features=n_features, expansion=_frontier.EXPANSIONS[expansion], min_samples_leaf=3,
            max_leaf_nodes=-1 if leaf_budget is None else leaf_budget, sorted_sweep=sweep, n_threads=n_threads,
        )

    assert histogram_pool(training, params(True), n_rows) is None
    pool = histogram_pool(training, params(False), n_rows)
    assert pool.shape[1:] == (n_features, binner.n_bins_.max(), _criteria.n_hist_columns(criterion))
    bin_counts = _histograms.BinCounts(training.X_binned, pool.shape[2], pool.dtype)
    owner, _, _ = bin_counts.owners(None, training.binned().missing_bins)
    assert owner[7] == -1 and (np.delete(owner, 7) == 0).all()
    grow_tree(training, weights[::-1].copy(), params(False), seed(9), histograms=pool)  # leaves sums behind
    trees = []
    # Two threads: each fills, subtracts and scans its own runs of features (the constant one is no thread's).
    variants = ((True, None, None), (False, None, None), (False, pool, None), (False, pool[:4], None), (False, pool, 2))
    for sweep, histograms, n_threads in variants:
        row_leaf = np.full(n_rows, -1, dtype=np.int64)
        trees.append(
            grow_tree(training, weights, params(sweep, n_threads), seed(4), row_leaf=row_leaf, histograms=histograms)
        )
        np.testing.assert_array_equal(row_leaf, trees[-1].apply(X))  # the builder's leaf of every row
    assert trees[0].n_leaves == (leaf_budget or trees[0].n_leaves) and trees[0].n_leaves > 30
    for tree in trees[1:]:
        np.testing.assert_array_equal(tree.nodes, trees[0].nodes)
        np.testing.assert_array_equal(tree.values, trees[0].values)


@pytest.mark.parametrize("n_owners", [1, 2, 3, 7])
def test_features_of_one_value_go_to_no_thread_and_the_rest_in_equal_runs(n_owners):
    """``feature_owners`` against a count done here: a feature whose rows all sit in one bin
    other than its missing bin is no thread's; every other feature is one thread's, the
    threads' shares differ by one at most, follow the feature order, and each thread's
    runs cover exactly its features."""
    rng = np.random.default_rng(n_owners)
    n_features, max_bins = 40, 6
    X_binned = rng.integers(0, max_bins, size=(50, n_features)).astype(np.uint8)
    X_binned[:, [0, 9, 10, 11, 30]] = 2  # one value
    X_binned[:, 20] = 5  # one value, the missing bin: a missing-or-not split stays possible elsewhere
    X_binned[:5, 21] = 5  # missing and one value
    X_binned[5:, 21] = 1
    missing_bins = np.full(n_features, -1, dtype=np.int32)
    missing_bins[[20, 21]] = 5
    counts = np.stack([np.bincount(column, minlength=max_bins) for column in X_binned.T]).astype(float)
    owner, runs, n_runs = _histograms.feature_owners(n_features, n_owners, counts, missing_bins)
    dead = [f for f in range(n_features) if len(np.unique(X_binned[:, f])) == 1 and X_binned[0, f] != missing_bins[f]]
    assert dead == [0, 9, 10, 11, 30]
    np.testing.assert_array_equal(np.flatnonzero(owner < 0), dead)
    shares = np.bincount(owner[owner >= 0], minlength=n_owners)
    assert shares.max() - shares.min() <= 1
    assert (np.diff(owner[owner >= 0]) >= 0).all()  # blocks in feature order
    for thread in range(n_owners):
        covered = [f for first, last in runs[thread, : n_runs[thread]] for f in range(first, last)]
        np.testing.assert_array_equal(covered, np.flatnonzero(owner == thread))
        assert (runs[thread, 1 : n_runs[thread], 0] > runs[thread, : n_runs[thread] - 1, 1]).all()  # maximal runs
    unknown, runs, n_runs = _histograms.feature_owners(n_features, 1)
    assert (unknown == 0).all() and n_runs[0] == 1 and tuple(runs[0, 0]) == (0, n_features)


@pytest.mark.slow  # a pool of few slots with three-way splits: a builder specialisation of its own
@pytest.mark.parametrize("n_slots", [2, 3, 5])
def test_a_pool_with_few_slots_grows_the_same_tree_with_three_way_splits(n_slots):
    """With its slots taken, a node's histograms go to the scratch slot or are summed from its
    rows when it is searched: slower, never different. A forced node (the value split below a
    "missing?" test) keeps its slot until its children pair, the scratch slot included."""
    from cluster_helpers import PARAMS, boosting_problem

    from forestrank._tree import _rng, _scans
    from forestrank._tree._grow import TrainingSet

    binned, targets, weights = boosting_problem(integer_targets=False, missing=True)
    params = dataclasses.replace(PARAMS, missing_direction=_scans.SEPARATE, max_leaf_nodes=40)
    data = TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0))
    pool = histogram_pool(data, params, len(weights), sampled_features=True)
    full = grow_tree(data, weights, params, _rng.new_state(np.random.SeedSequence(3)), histograms=pool)
    few = grow_tree(data, weights, params, _rng.new_state(np.random.SeedSequence(3)), histograms=pool[:n_slots].copy())
    assert (full.nodes["threshold"] == -np.inf).sum() > 3  # three-way splits were made
    for name in ("nodes", "missing_left", "values", "n_node_samples", "weighted_n_node_samples"):
        np.testing.assert_array_equal(getattr(few, name), getattr(full, name), err_msg=name)
    # a node's sums filled from its rows or subtracted from its parent's differ in their last bits
    np.testing.assert_allclose(few.feature_gains, full.feature_gains, rtol=1e-12)


def _summed_in_row_order(X_binned, rows, moments, n_bins, dtype):
    """(first, second, count) sums of ``rows`` per bin of each feature, in row order."""
    return summed_histograms(X_binned[rows], [*moments.T, np.ones(len(rows))], n_bins, dtype)


@pytest.mark.slow  # the fill's kernels called apart from a tree: signatures of their own
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_a_node_holding_every_row_copies_its_counts_and_sums_what_counting_sums(dtype):
    """The root of a tree that has every row takes its count column from the bin counts
    counted once (two read-modify-writes per value instead of three); its histograms, and
    those of a node that counts its rows, are the per-row sums in row order, bit for bit."""
    from cluster_helpers import PARAMS, boosting_problem

    from forestrank._tree._partition_rows import PartitionRows

    binned, targets, weights = boosting_problem(integer_targets=dtype == np.int32, missing=True)
    X_binned, n_bins = binned["X_binned"], binned["bin_thresholds"].shape[1]
    counts = _histograms.BinCounts(X_binned, n_bins, dtype).of_rows(len(X_binned))
    np.testing.assert_array_equal(counts, np.stack([np.bincount(column, minlength=n_bins) for column in X_binned.T]))
    assert counts.dtype == dtype

    partition = PartitionRows(X_binned, PARAMS.criterion, n_bins, _criteria.n_hist_columns(PARAMS.criterion), dtype)
    every_row = np.ones(len(X_binned))
    for tree_weights in (every_row, np.where(np.arange(len(X_binned)) % 7 == 3, 0.0, 1.0)):
        partition.start_tree(targets, tree_weights, 3)
        rows = np.flatnonzero(tree_weights > 0)
        root = partition.histograms(0)
        np.testing.assert_array_equal(root, _summed_in_row_order(X_binned, rows, targets[rows], n_bins, dtype))
        n_left, _ = partition.partition(0, 1, 2, 3, -1, 0)
        left_rows = partition.rows.samples[:n_left]
        expected_left = _summed_in_row_order(X_binned, left_rows, targets[left_rows], n_bins, dtype)
        np.testing.assert_array_equal(partition.histograms(1), expected_left)

    # The root copies the kept counts (planted here), a child counts its rows.
    partition.start_tree(targets, every_row, 3)
    kept = partition._bin_counts.of_rows(len(X_binned))
    kept += 1
    np.testing.assert_array_equal(partition.histograms(0)[:, :, _histograms.HIST_COUNT], counts + 1)
    n_left, _ = partition.partition(0, 1, 2, 3, -1, 0)
    left_rows = partition.rows.samples[:n_left]
    expected_left = _summed_in_row_order(X_binned, left_rows, targets[left_rows], n_bins, dtype)
    np.testing.assert_array_equal(partition.histograms(1), expected_left)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("criterion", [_criteria.VARIANCE, _criteria.NEWTON], ids=["variance", "newton"])
def test_in_memory_trees_with_every_row_copy_the_counts_and_grow_the_counting_trees(monkeypatch, criterion, n_threads):
    """``grow_tree`` gives the pool the counts of every training row for a tree that has them
    all (none for a tree that has fewer), and the trees are those grown with every node
    counting its rows, on one thread and on two (each thread copies its block of features)."""
    from cluster_helpers import PARAMS, boosting_problem

    from forestrank._tree import _rng
    from forestrank._tree._grow import TrainingSet, TreeMemory

    binned, targets, weights = boosting_problem(integer_targets=False, missing=True)
    if criterion == _criteria.VARIANCE:
        targets = targets[:, :1]
    data = TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0))
    params = dataclasses.replace(PARAMS, criterion=criterion, n_threads=n_threads)
    new_pool = _histograms.new_pool
    given = []

    def grow(tree_weights, memory, replace=lambda counts: counts):
        def spying(histograms, capacity, counts=None, owners=None, sparse=None):
            given.append(counts)
            return new_pool(histograms, capacity, replace(counts), owners, sparse)

        monkeypatch.setattr(_histograms, "new_pool", spying)
        pool = histogram_pool(data, params, len(tree_weights), sampled_features=True)
        return grow_tree(data, tree_weights, params, _rng.new_state(np.random.SeedSequence(5)), histograms=pool, memory=memory)

    memory = TreeMemory(data, params)
    every_row = np.ones(len(weights))
    for tree_weights in (every_row, weights):  # weights: a tenth of the rows at 0
        copied = grow(tree_weights, memory)
        counted = grow(tree_weights, TreeMemory(data, params), replace=lambda counts: None)
        assert copied.node_count > 30
        for name in ("nodes", "missing_left", "values", "n_node_samples", "weighted_n_node_samples", "feature_gains"):
            np.testing.assert_array_equal(getattr(copied, name), getattr(counted, name), err_msg=name)
    every_row_counts, _, some_rows_counts, _ = given
    n_bins = binned["bin_thresholds"].shape[1]
    expected = np.stack([np.bincount(column, minlength=n_bins) for column in binned["X_binned"].T])
    np.testing.assert_array_equal(every_row_counts, expected)
    # The fill copies what it is given: planted zero counts make every bin of the root look
    # empty, so it finds no split.
    assert grow(every_row, memory, replace=np.zeros_like).node_count == 1
    assert some_rows_counts.shape == (0, n_bins)


def _zero_heavy_problem(integer_targets, seed=3):
    """Binned features where most rows share a value (LETOR's zeros), a constant one among
    them, and a dense one; (g, h) targets and weights as a boosting iteration has them,
    integer-valued for sums that no order changes."""
    from cluster_helpers import binned_features

    rng = np.random.default_rng(seed)
    n_rows, n_features = 1200, 9
    X = rng.integers(1, 60, size=(n_rows, n_features)) * (rng.random((n_rows, n_features)) < 0.35)
    X[:, 4] = 7.0
    X[:, 6] = rng.normal(size=n_rows)
    X = X.astype(float)
    if integer_targets:
        targets = np.column_stack([rng.integers(-8, 9, n_rows), rng.integers(1, 5, n_rows)]).astype(float)
        weights = rng.integers(1, 3, n_rows).astype(float)
    else:
        targets = np.column_stack([rng.normal(size=n_rows) + X[:, 0] / 30, rng.uniform(0.1, 1.0, n_rows)])
        weights = rng.uniform(0.5, 2.0, n_rows)
    return binned_features(X, 255, 0, 1), targets, weights


@pytest.mark.parametrize("n_owners", [1, 2, 3])
def test_sparse_rows_list_each_rows_bins_but_its_features_most_frequent_by_owner(n_owners):
    """``sparse_rows`` against a listing done here: each row's entries of each thread are its
    bins, outside their feature's most frequent one, of the features that thread owns,
    in feature order, as indices into a slot's flat bins; none where the layout would not
    pay (dense data, int32 pools)."""
    binned, _, _ = _zero_heavy_problem(False)
    X_binned, max_bins = binned["X_binned"], binned["bin_thresholds"].shape[1]
    bin_counts = _histograms.BinCounts(X_binned, max_bins, np.float64)
    owner = bin_counts.owners(n_owners, binned["missing_bins"])[0]
    sparse = bin_counts.sparse(n_owners, binned["missing_bins"])
    frequent = np.array([np.bincount(column, minlength=max_bins).argmax() for column in X_binned.T])
    np.testing.assert_array_equal(sparse.frequent_bin, frequent)
    assert owner[4] == -1 and sparse.row_entries.shape == (len(X_binned), n_owners + 1)
    for row in range(len(X_binned)):
        for thread in range(n_owners):
            first, last = sparse.row_entries[row, thread : thread + 2]
            expected = [
                feature * max_bins + X_binned[row, feature]
                for feature in np.flatnonzero(owner == thread)
                if X_binned[row, feature] != frequent[feature]
            ]
            np.testing.assert_array_equal(sparse.entries[first:last], expected)
    assert 0.3 < len(sparse.entries) / (len(X_binned) * (owner >= 0).sum()) < _histograms.SPARSE_FILL_DENSITY

    dense = np.random.default_rng(0).integers(0, max_bins, size=X_binned.shape).astype(np.uint8)
    assert _histograms.BinCounts(dense, max_bins, np.float64).sparse(n_owners, binned["missing_bins"]).row_entries.shape[0] == 0
    assert _histograms.BinCounts(X_binned, max_bins, np.int32).sparse(n_owners, binned["missing_bins"]).row_entries.shape[0] == 0


def test_sparse_rows_give_every_fill_thread_its_entries_when_fewer_features_than_threads_are_filled():
    """With one feature left to deal, one thread owns it and the other none, but both fill
    every node: the layout has an (empty) range per row for each of them, and the trees
    are one thread's."""
    from cluster_helpers import PARAMS

    from forestrank._tree import _rng
    from forestrank._tree._grow import TrainingSet

    binned, targets, weights = _zero_heavy_problem(False)
    X_binned = binned["X_binned"].copy()
    X_binned[:, 1:] = X_binned[0, 1:]
    binned = {**binned, "X_binned": X_binned}
    bin_counts = _histograms.BinCounts(X_binned, binned["bin_thresholds"].shape[1], np.float64)
    assert (bin_counts.owners(2, binned["missing_bins"])[0] == [0] + [-1] * 8).all()
    sparse = bin_counts.sparse(2, binned["missing_bins"])
    assert sparse.row_entries.shape == (len(X_binned), 3)
    np.testing.assert_array_equal(sparse.row_entries[:, 1], sparse.row_entries[:, 2])

    data = TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0))
    trees = []
    for n_threads in (None, 2):
        params = dataclasses.replace(PARAMS, n_threads=n_threads, max_features=X_binned.shape[1], min_samples_leaf=2)
        pool = histogram_pool(data, params, len(weights))
        trees.append(grow_tree(data, weights, params, _rng.new_state(np.random.SeedSequence(5)), histograms=pool))
    assert trees[0].node_count > 10
    for name in ("nodes", "values", "n_node_samples", "weighted_n_node_samples"):
        np.testing.assert_array_equal(getattr(trees[1], name), getattr(trees[0], name), err_msg=name)


@pytest.mark.slow  # the sparse fill called apart from a tree: signatures of its own
@pytest.mark.parametrize("criterion", [_criteria.VARIANCE, _criteria.NEWTON], ids=["variance", "newton"])
def test_a_sparse_fill_restores_the_most_frequent_bins_to_the_row_order_sums(criterion):
    """The sparse fill adds each row to its bins outside the most frequent ones, then sets
    those from the node's totals: with integer-valued moments and weights (exact in any
    order) every bin, count and weight column (variance's fourth) is the row-order sum
    bit for bit; with real ones within rounding. A root holding every row copies its
    counts; a node smaller than the threshold is filled densely."""
    from forestrank._tree._partition_rows import PartitionRows

    n_columns = _criteria.n_hist_columns(criterion)
    for integer_targets in (True, False):
        binned, targets, weights = _zero_heavy_problem(integer_targets)
        X_binned, n_bins = binned["X_binned"], binned["bin_thresholds"].shape[1]
        if criterion == _criteria.VARIANCE:
            targets = targets[:, :1]
        partition = PartitionRows(X_binned, criterion, n_bins, n_columns, np.float64)
        assert partition._bin_counts.sparse(1, partition._no_missing_bins).row_entries.shape[0] > 0
        partition.start_tree(targets, weights, 3)
        n_left, _ = partition.partition(0, 1, 2, 3, -1, 0)  # feature 3 <= bin 3: mostly the frequent bin
        assert n_bins * _histograms.SPARSE_FILL_MIN_ROWS_PER_BIN <= len(X_binned) - n_left < n_left
        for node, rows in ((0, np.arange(len(X_binned))), (1, partition.rows.samples[:n_left]), (2, partition.rows.samples[n_left:])):
            first, second = weights[rows] * targets[rows, 0], weights[rows] * targets[rows, -1]
            if criterion == _criteria.VARIANCE:
                second = weights[rows] * targets[rows, 0] ** 2
            columns = [first, second, np.ones(len(rows)), weights[rows]][:n_columns]
            expected = summed_histograms(X_binned[rows], columns, n_bins)
            if integer_targets:
                np.testing.assert_array_equal(partition.histograms(node), expected)
            else:
                np.testing.assert_allclose(partition.histograms(node), expected, rtol=1e-12, atol=1e-11)


@pytest.mark.parametrize("criterion", [_criteria.VARIANCE, _criteria.NEWTON], ids=["variance", "newton"])
def test_trees_of_sparse_fills_are_the_dense_fills_trees_and_the_same_on_two_threads(monkeypatch, criterion):
    """Grown on sparse fills, a tree is the one grown on dense fills where sums are exact
    (integer-valued moments), and on two threads (each filling its features' entries) the
    one grown on one thread, bit for bit, with real-valued moments too."""
    from forestrank._tree import _rng
    from forestrank._tree._grow import TrainingSet

    def grow(data, tree_weights, n_threads):
        params = dataclasses.replace(PARAMS, criterion=criterion, n_threads=n_threads, max_features=data.X_binned.shape[1])
        pool = histogram_pool(data, params, len(tree_weights))
        return grow_tree(data, tree_weights, params, _rng.new_state(np.random.SeedSequence(5)), histograms=pool)

    from cluster_helpers import PARAMS

    for integer_targets in (True, False):
        binned, targets, weights = _zero_heavy_problem(integer_targets)
        if criterion == _criteria.VARIANCE:
            targets = targets[:, :1]
        data = TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0))
        for tree_weights in (np.ones(len(weights)), weights):
            trees = [grow(data, tree_weights, n_threads) for n_threads in (None, 2)]
            assert trees[0].node_count > 30
            if integer_targets:
                with monkeypatch.context() as patch:
                    patch.setattr(_histograms, "sparse_rows", lambda *args: _histograms.no_sparse_rows())
                    trees.append(grow(data, tree_weights, None))
            for tree in trees[1:]:
                for name in ("nodes", "missing_left", "values", "n_node_samples", "weighted_n_node_samples", "feature_gains"):
                    np.testing.assert_array_equal(getattr(tree, name), getattr(trees[0], name), err_msg=name)


@pytest.mark.parametrize("n_threads", [None, 2], ids=["one-thread", "two-threads"])
@pytest.mark.parametrize("criterion", [_criteria.VARIANCE, _criteria.NEWTON], ids=["variance", "newton"])
def test_nodes_take_the_fills_totals_which_are_their_rows_sums_in_position_order(criterion, n_threads):
    """A node whose histograms are filled, and the larger sibling of a filled node, take
    their totals from the fill (``Pool.node_sums``) instead of summing their rows again.
    Each node's weight must still be its rows' weights summed one by one in position order
    (the partition is stable, so in increasing row order), bit for bit with real weights,
    on sparse fills (large nodes) and dense ones (small nodes), with children too small to
    search (no fill: they sum their rows) and with a pool of 4 slots, whose children are
    filled when searched; a pool that grew another tree first (boosting reuses one) changes
    nothing."""
    from cluster_helpers import PARAMS

    from forestrank._tree import _rng
    from forestrank._tree._grow import TrainingSet

    binned, targets, weights = _zero_heavy_problem(False)
    if criterion == _criteria.VARIANCE:
        targets = targets[:, :1]
    data = TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0))
    for min_samples_leaf, n_slots in ((4, None), (25, None), (4, 4)):
        params = dataclasses.replace(
            PARAMS, criterion=criterion, n_threads=n_threads, max_features=data.X_binned.shape[1], max_leaf_nodes=40,
            min_samples_leaf=min_samples_leaf,
        )  # fmt: skip
        pool = histogram_pool(data, params, len(weights))[:n_slots]
        grow_tree(data, weights[::-1].copy(), params, _rng.new_state(np.random.SeedSequence(1)), histograms=pool)
        row_leaf = np.full(len(weights), -1, dtype=np.int64)
        tree = grow_tree(
            data, weights, params, _rng.new_state(np.random.SeedSequence(5)), row_leaf=row_leaf, histograms=pool
        )  # fmt: skip
        assert tree.node_count > 60 and (row_leaf >= 0).all()

        def rows_of(node):
            left = tree.nodes["left"][node]
            if tree.nodes["feature"][node] < 0:
                return np.flatnonzero(row_leaf == node)
            return np.sort(np.concatenate([rows_of(left), rows_of(left + 1)]))

        sizes = []
        for node in range(tree.node_count):
            rows = rows_of(node)
            expected = 0.0
            for weight in weights[rows]:
                expected += weight
            assert tree.weighted_n_node_samples[node] == expected, (min_samples_leaf, n_slots, node)
            assert tree.n_node_samples[node] == len(rows)
            sizes.append(len(rows))
        # Both fills ran: nodes of at least half the bin axis in rows (sparse) and smaller ones.
        threshold = _histograms.SPARSE_FILL_MIN_ROWS_PER_BIN * pool.shape[2]
        assert min(sizes) < threshold < sorted(sizes)[-3]
        assert min_samples_leaf < 25 or min(sizes) < 2 * min_samples_leaf  # some children were not searched
