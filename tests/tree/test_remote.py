"""A tree grown over partitions (``_tree/_remote.py``) against the same tree grown in memory."""

import dataclasses

import numpy as np
import pytest

from assertions import same_bits
from cluster_helpers import PARAMS, assert_same_tree, boosting_problem
from forestrank._tree import _criteria, _rng, _scans
from forestrank._tree._grow import TrainingSet, grow_tree, histogram_pool, max_nodes
from forestrank._tree._partition_rows import PartitionRows
from forestrank._tree._remote import PartitionsExchange, in_process, sum_in_order, sum_in_order_into

pytestmark = pytest.mark.slow  # their own build_tree specialisation (trees over partitions): after the quick suite


def new_partitions(binned, bounds, params=PARAMS, dtype=np.float64):
    return [
        PartitionRows(
            binned["X_binned"][start:end], params.criterion, binned["bin_thresholds"].shape[1],
            _criteria.n_hist_columns(params.criterion), dtype,
        )  # fmt: skip
        for start, end in zip(bounds[:-1], bounds[1:])
    ]


def grow_both(binned, targets, weights, bounds, params=PARAMS, dtype=np.float64, partitions=None, **options):
    """The tree grown in memory, its rows' leaves, and the tree grown over the partitions ``bounds``
    (new ones, or ``partitions`` reused) with its partitions' rows' leaves concatenated."""
    data = TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0))
    row_leaf = np.full(len(weights), -1, dtype=np.int64)
    n_rows = int((weights > 0).sum())
    local = grow_tree(
        data, weights, params, _rng.new_state(np.random.SeedSequence(7)), row_leaf=row_leaf,
        histograms=histogram_pool(data, params, n_rows, dtype, sampled_features=True), **options,
    )  # fmt: skip
    if partitions is None:
        partitions = new_partitions(binned, bounds, params, dtype)
    for partition, start, end in zip(partitions, bounds[:-1], bounds[1:]):
        partition.start_tree(targets[start:end], weights[start:end], max_nodes(params, n_rows))
    driver = dataclasses.replace(data, X_binned=binned["X_binned"][:0], targets=np.empty((0, 2)))
    remote = grow_tree(
        driver, None, params, _rng.new_state(np.random.SeedSequence(7)),
        histograms=histogram_pool(data, params, n_rows, dtype, sampled_features=True),
        exchange=PartitionsExchange(in_process(partitions)), **options,
    )  # fmt: skip
    leaves = np.concatenate([partition.row_leaf(remote.nodes) for partition in partitions])
    return local, row_leaf, remote, leaves


@pytest.mark.parametrize("missing", [False, True])
def test_one_partition_grows_the_in_memory_tree_bitwise(missing):
    binned, targets, weights = boosting_problem(integer_targets=False, missing=missing)
    local, row_leaf, remote, leaves = grow_both(binned, targets, weights, [0, len(weights)])
    assert local.node_count > 40
    assert_same_tree(local, remote)
    np.testing.assert_array_equal(leaves, row_leaf)


@pytest.mark.parametrize("missing_direction", ["learn", "separate"])
def test_integer_targets_grow_the_in_memory_tree_bitwise_over_several_partitions(missing_direction):
    binned, targets, weights = boosting_problem(integer_targets=True, missing=True)
    params = dataclasses.replace(PARAMS, missing_direction=_scans.MISSING_DIRECTIONS[missing_direction], max_features=5)
    bounds = [0, 300, 301, 900, len(weights)]  # a partition of one row among them
    local, row_leaf, remote, leaves = grow_both(binned, targets, weights, bounds, params, dtype=np.int32)
    assert local.node_count > 40
    assert_same_tree(local, remote)
    np.testing.assert_array_equal(leaves, row_leaf)


def test_costs_and_monotone_bounds_are_summed_over_partitions():
    binned, targets, weights = boosting_problem(integer_targets=True)
    n_features = binned["X_binned"].shape[1]
    options = dict(
        feature_penalty=np.linspace(0.0, 3.0, n_features), monotonic_cst=np.array([1, -1] + [0] * (n_features - 2), np.int8),
        value_bounds=np.empty((max_nodes(PARAMS, len(weights)), 2)),
    )  # fmt: skip
    local, row_leaf, remote, leaves = grow_both(binned, targets, weights, [0, 500, len(weights)], **options)
    assert_same_tree(local, remote)
    np.testing.assert_array_equal(leaves, row_leaf)


def test_float_targets_over_several_partitions_grow_the_same_tree_up_to_summation_order():
    """Sums added partition by partition differ from the row-order sums in their last bits:
    the same splits, and values and gains within rounding."""
    binned, targets, weights = boosting_problem(integer_targets=False, missing=True)
    local, row_leaf, remote, leaves = grow_both(binned, targets, weights, [0, 400, 800, len(weights)])
    for name in ("feature", "left"):
        np.testing.assert_array_equal(remote.nodes[name], local.nodes[name])
    np.testing.assert_array_equal(remote.missing_left, local.missing_left)
    np.testing.assert_array_equal(remote.n_node_samples, local.n_node_samples)
    np.testing.assert_allclose(remote.nodes["threshold"], local.nodes["threshold"], rtol=1e-12)
    np.testing.assert_allclose(remote.weighted_n_node_samples, local.weighted_n_node_samples, rtol=1e-12)
    np.testing.assert_allclose(remote.feature_gains, local.feature_gains, rtol=1e-9)
    np.testing.assert_array_equal(leaves, row_leaf)


def test_partitions_grow_tree_after_tree_in_their_reused_buffers():
    binned, targets, weights = boosting_problem(integer_targets=True)
    bounds = [0, 700, len(weights)]
    partitions = new_partitions(binned, bounds, dtype=np.int32)
    grow_both(binned, targets, weights, bounds, dtype=np.int32, partitions=partitions)
    other = np.random.default_rng(5)
    targets = np.column_stack([other.integers(-8, 9, len(weights)), other.integers(1, 5, len(weights))]).astype(float)
    weights = (other.random(len(weights)) < 0.7).astype(float)
    local, row_leaf, remote, leaves = grow_both(binned, targets, weights, bounds, dtype=np.int32, partitions=partitions)
    assert_same_tree(local, remote)
    np.testing.assert_array_equal(leaves, row_leaf)


def test_trees_the_exchange_cannot_grow_are_refused_by_name():
    binned, targets, weights = boosting_problem(integer_targets=True)
    data = TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0))
    partitions = new_partitions(binned, [0, len(weights)])
    partitions[0].start_tree(targets, weights, max_nodes(PARAMS, len(weights)))
    driver = dataclasses.replace(data, X_binned=binned["X_binned"][:0], targets=np.empty((0, 2)))
    pool = histogram_pool(data, PARAMS, len(weights), sampled_features=True)
    cases = {
        "no leaf targets": (dataclasses.replace(driver, leaf_targets=np.ones(len(weights))), PARAMS, pool),
        "criterion": (driver, dataclasses.replace(PARAMS, criterion=_criteria.VARIANCE), pool),
        "int32 histograms": (driver, PARAMS, np.empty_like(pool, dtype=np.int32)),
        "a moment criterion": (driver, dataclasses.replace(PARAMS, criterion=_criteria.ENTROPY, n_classes=3), None),
    }
    for need, (data_, params, histograms) in cases.items():
        with pytest.raises(ValueError, match=f"a tree grown over partitions needs .*{need}"):
            grow_tree(
                data_, None, params, _rng.new_state(np.random.SeedSequence(7)), histograms=histograms,
                exchange=PartitionsExchange(in_process(partitions)),
            )  # fmt: skip


def test_a_tree_memory_serves_trees_over_partitions_and_in_memory_in_turn():
    from forestrank._tree._grow import TreeMemory

    binned, targets, weights = boosting_problem(integer_targets=True)
    data = TrainingSet(**binned, targets=targets, leaf_targets=np.zeros(0))
    memory = TreeMemory(data, PARAMS)
    partitions = new_partitions(binned, [0, 800, len(weights)], dtype=np.int32)
    for partition, (start, end) in zip(partitions, [(0, 800), (800, len(weights))]):
        partition.start_tree(targets[start:end], weights[start:end], max_nodes(PARAMS, len(weights)))
    pool = histogram_pool(data, PARAMS, len(weights), np.int32, sampled_features=True)
    driver = dataclasses.replace(data, X_binned=binned["X_binned"][:0], targets=np.empty((0, 2)))
    remote = grow_tree(
        driver, None, PARAMS, _rng.new_state(np.random.SeedSequence(7)), histograms=pool, memory=memory,
        exchange=PartitionsExchange(in_process(partitions)),
    )  # fmt: skip
    local = grow_tree(data, weights, PARAMS, _rng.new_state(np.random.SeedSequence(7)), histograms=pool, memory=memory)
    assert_same_tree(local, remote)


def test_a_split_made_ahead_is_taken_only_as_it_was_made():
    """The builder splits a node it announced as announced (a waiting node's split is fixed);
    were it to split it otherwise, the rows would already be ordered by the other split, so
    the exchange refuses rather than answer with sums of the wrong children."""
    statistics = (2.0, np.zeros(3))
    answers = {
        "tree_summary": [(10, True, 10.0, PARAMS.criterion, "float64")],
        "split": [(4, 0, statistics, statistics, None, (3, 0, statistics, statistics, None))],
    }
    asked = []

    def round(method, arguments):
        asked.append((method, arguments))
        return answers[method]

    exchange = PartitionsExchange(round)
    exchange.announce(5, 2, 7, 255, 0, -1)
    assert exchange.partition(0, 1, 1, 3, 255, 1, -1) == (4, 0)
    assert asked[-1][1][-1] == (5, (2, 7, 255, 0), -1)  # made ahead in the root's round
    assert exchange.partition(5, 3, 2, 7, 255, 0, -1) == (3, 0) and len(asked) == 2  # no round
    exchange.announce(6, 2, 7, 255, 0, -1)
    exchange.partition(1, 7, 1, 3, 255, 1, -1)
    assert asked[-1][1][-2] == [(5, 3)]  # the ahead split's children numbered with the next round
    with pytest.raises(RuntimeError, match=r"node 6 was split ahead as \(2, 7, 255, 0\), but the builder splits it as"):
        exchange.partition(6, 9, 4, 7, 255, 0, -1)


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
@pytest.mark.parametrize("n_answers", [1, 2, 3])
def test_sums_into_a_slot_are_the_sums_in_order_bit_for_bit(dtype, n_answers):
    rng = np.random.default_rng(n_answers)
    shape = (5, 16, 3)
    if dtype == np.float64:  # magnitudes over 12 orders: another order of the additions rounds differently
        answers = [rng.normal(size=shape) * 10.0 ** rng.integers(-6, 6, size=shape) for _ in range(n_answers)]
        answers[0][0, 0, 0] = -0.0  # kept as the first answer's, as sum_in_order keeps it
        for answer in answers[1:]:
            answer[0, 0, 0] = -0.0
    else:
        answers = [rng.integers(-1000, 1000, size=shape).astype(dtype) for _ in range(n_answers)]
    pool = np.full((3, *shape), 7, dtype=dtype)
    sum_in_order_into(answers, pool[1])
    expected = sum_in_order(answers)
    assert pool.dtype == dtype and same_bits(pool[1], expected)
    assert (pool[[0, 2]] == 7).all()
