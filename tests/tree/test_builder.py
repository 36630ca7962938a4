"""The tree builder: expansion orders, limits, leaf values, RF-rand, compiled == interpreted."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from forestrank._tree import _criteria, _frontier, _scans
from forestrank._tree._grow import NodeStore, TreeMemory, TreeParams, grow_tree

from .helpers import seed, training_set



@pytest.mark.parametrize("expansion", list(_frontier.EXPANSIONS))
def test_every_expansion_order_respects_the_leaf_budget(expansion):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(800, 4))
    y = (X[:, 0] > 0).astype(float) + (X[:, 1] > 0.5)
    training, _ = training_set(X, y)
    params = TreeParams(_criteria.ENTROPY, 3, max_features=4, expansion=_frontier.EXPANSIONS[expansion], max_leaf_nodes=7)
    tree = grow_tree(training, np.ones(800), params, seed())
    assert tree.n_leaves == 7


def test_expansion_orders_pick_the_documented_node():
    # Root split separates 600 low-relevance rows (left) from 200 high-relevance rows.
    rng = np.random.default_rng(5)
    X = np.column_stack([np.r_[np.zeros(600), np.ones(200)], rng.normal(size=800)])
    y = np.r_[(rng.random(600) < 0.2).astype(float), 1.0 + (rng.random(200) < 0.5)]
    training, _ = training_set(X, y)

    def second_split_parent(expansion):
        params = TreeParams(_criteria.ENTROPY, 3, max_features=2, expansion=_frontier.EXPANSIONS[expansion], max_leaf_nodes=3)
        tree = grow_tree(training, np.ones(800), params, seed())
        internal = np.flatnonzero(tree.nodes["feature"] >= 0)
        return tree.n_node_samples[internal[1]], tree.values[internal[1]]

    assert second_split_parent("biggest")[0] == 600
    assert second_split_parent("relevant")[1] > 1.0
    assert second_split_parent("breadth")[0] == 600  # the left child is older


def test_breadth_first_finishes_a_level_before_the_next_and_depth_first_dives():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(2000, 5))
    y = (rng.random(2000) < 0.3).astype(float)
    training, _ = training_set(X, y)

    def grow(expansion):
        params = TreeParams(_criteria.GINI, 2, max_features=5, expansion=_frontier.EXPANSIONS[expansion], max_leaf_nodes=40)
        return grow_tree(training, np.ones(2000), params, seed())

    # Children are numbered when their parent is split, so split order shows in the depths.
    assert np.all(np.diff(grow("breadth").node_depths()) >= 0)
    depth_first = grow("depth").node_depths()
    assert np.any(np.diff(depth_first) < 0)
    assert depth_first[:6].tolist() == [0, 1, 1, 2, 2, 3]  # keeps descending into the left child


def test_depth_and_leaf_size_limits():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(1000, 4))
    y = rng.integers(0, 3, 1000).astype(float)
    training, _ = training_set(X, y)
    shallow = grow_tree(training, np.ones(1000), TreeParams(_criteria.ENTROPY, 3, max_features=4, max_depth=3), seed())
    assert shallow.max_depth == 3
    leafy = grow_tree(training, np.ones(1000), TreeParams(_criteria.ENTROPY, 3, max_features=4, min_samples_leaf=25), seed())
    assert leafy.n_node_samples[leafy.nodes["feature"] < 0].min() >= 25
    split = grow_tree(training, np.ones(1000), TreeParams(_criteria.ENTROPY, 3, max_features=4, min_samples_split=100), seed())
    internal = split.nodes["feature"] >= 0
    assert split.n_node_samples[internal].min() >= 100


def test_random_splits_stay_inside_the_node_range_and_separate_it():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(float)
    training, _ = training_set(X, y)
    tree = grow_tree(training, np.ones(400), TreeParams(_criteria.RANDOM, 2, max_features=3), seed())
    np.testing.assert_array_equal(tree.predict(X), y)  # grown until pure
    leaves = tree.apply(X)
    assert len(np.unique(leaves)) == tree.n_leaves  # every leaf holds training rows: cuts inside the range


@pytest.mark.parametrize("missing_direction", ["right", "left"])
def test_random_splits_keep_min_samples_leaf_rows_on_each_side(missing_direction):
    """RF-rand's drawn cut ignored ``min_samples_leaf`` (leaves of one row under
    ``min_samples_leaf=25``); a cut leaving a side too few rows is dropped for the next
    drawn feature, as scikit-learn's ExtraTrees do, and a node with no such cut is a leaf."""
    from forestrank.ensemble import RFPointRanker

    rng = np.random.default_rng(10)
    X = rng.exponential(size=(900, 4))  # skewed: uniform cuts often isolate a few large values
    X[rng.random(900) < 0.2, 1] = np.nan
    y = rng.integers(0, 3, 900).astype(float)
    qid = np.repeat(np.arange(60), 15)
    for leaf in (25, 0.03):
        model = RFPointRanker(
            n_estimators=4, criterion="random", min_samples_leaf=leaf, missing_direction=missing_direction, random_state=0
        ).fit(X, y, qid=qid)
        smallest = min(tree.n_node_samples[tree.nodes["feature"] < 0].min() for tree in model.trees_)
        assert smallest >= (leaf if leaf > 1 else np.ceil(leaf * 900))
        assert all(tree.n_leaves > 4 for tree in model.trees_)


def test_leaf_value_is_the_weighted_mean_of_leaf_targets():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(600, 3))
    y = rng.integers(0, 3, 600).astype(float)
    weights = rng.integers(1, 4, 600).astype(float)
    training, _ = training_set(X, y, leaf_targets=2.0**y)
    tree = grow_tree(training, weights, TreeParams(_criteria.ENTROPY, 3, max_features=3, min_samples_leaf=40), seed())
    leaves = tree.apply(X)
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        assert tree.values[leaf] == pytest.approx(np.average(2.0 ** y[rows], weights=weights[rows]))
        assert tree.weighted_n_node_samples[leaf] == weights[rows].sum()


def test_compiled_and_interpreted_builders_agree(tmp_path):
    """NUMBA_DISABLE_JIT=1 runs the same builder as Python; its tree must be identical."""
    code = """
import json, numpy as np
from forestrank._tree._binning import BinMapper
from forestrank._tree import _criteria, _rng
from forestrank._tree._grow import TrainingSet, TreeParams, grow_tree
rng = np.random.default_rng(0)
X = rng.normal(size=(120, 3)); y = (X[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(float)
b = BinMapper().fit(X); t, v = b.padded_tables()
data = TrainingSet(b.transform(X), b.n_bins_, t, v, y[:, None], y)
out = {}
newton = TrainingSet(b.transform(X), b.n_bins_, t, v, np.column_stack([0.5 - y, 1 + X[:, 1] ** 2]), y)
for name, criterion, features, training in (
    ("entropy", _criteria.ENTROPY, 2, data), ("variance", _criteria.VARIANCE, 2, data), ("pooled newton", _criteria.NEWTON, 3, newton),
):
    params = TreeParams(criterion, 2, max_features=features, expansion=2, max_leaf_nodes=8, min_samples_leaf=3)
    tree = grow_tree(training, np.ones(120), params, _rng.new_state(np.random.SeedSequence(3)))
    out[name] = [tree.nodes["feature"].tolist(), tree.nodes["threshold"].tolist(), tree.values.tolist()]
print(json.dumps(out))
"""
    environment = dict(os.environ)
    results = []
    for disable in ("0", "1"):
        environment["NUMBA_DISABLE_JIT"] = disable
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=True)
        results.append(json.loads(run.stdout))
    for name in results[0]:
        for compiled, interpreted in zip(results[0][name], results[1][name]):
            np.testing.assert_allclose(compiled, interpreted, rtol=1e-12)


@pytest.mark.parametrize(
    "params",
    [
        TreeParams(_criteria.ENTROPY, 3, max_features=2),
        TreeParams(_criteria.VARIANCE, 3, max_features=3, expansion=_frontier.BEST, max_leaf_nodes=9),
        TreeParams(_criteria.ENTROPY, 3, max_features=4, max_depth=3, missing_direction=_scans.SEPARATE),
    ],
    ids=["fully grown", "leaf budget", "three-way"],
)
def test_trees_grown_in_reused_memory_equal_trees_grown_in_new_memory(params):
    """One ``TreeMemory`` for trees of different samples, in the order a forest grows
    them: each tree is the tree grown alone. The leaf budget leaves nodes waiting in the
    frontier, and a shuffled feature permutation, for the next tree to reset."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(500, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.sin(np.nan_to_num(X[:, 1])) > 0.3).astype(float) + np.isnan(X[:, 2])
    training, _ = training_set(X, y)
    memory = TreeMemory(training, params)
    store = NodeStore()
    for tree_seed in range(4):
        weights = rng.integers(0, 3, len(y)).astype(float)
        reused = grow_tree(training, weights, params, seed(tree_seed), memory=memory, node_store=store)
        alone = grow_tree(training, weights, params, seed(tree_seed))
        for field in ("nodes", "missing_left", "values", "n_node_samples", "weighted_n_node_samples", "feature_gains"):
            np.testing.assert_array_equal(getattr(reused, field), getattr(alone, field))


def test_a_large_forest_keeps_its_nodes_in_blocks_and_then_once(monkeypatch):
    """Trees keep their nodes in the ``NodeStore``'s blocks while a forest that could
    fill one grows (a block of 64 nodes here), and the model is the one grown without;
    once indexed, every tree's nodes are a view of the forest's single array."""
    from forestrank import RFPointRanker, make_ranking

    X, y, qid = make_ranking(n_queries=30, docs_per_query=20, n_features=5, random_state=0)
    plain = RFPointRanker(n_estimators=6, max_depth=4, n_jobs=2, random_state=0).fit(X, y, qid=qid)
    monkeypatch.setattr(NodeStore, "BLOCK_NODES", 64)
    kept = []
    original_keep = NodeStore.keep
    monkeypatch.setattr(NodeStore, "keep", lambda store, nodes: kept.append(len(nodes)) or original_keep(store, nodes))
    model = RFPointRanker(n_estimators=6, max_depth=4, n_jobs=2, random_state=0).fit(X, y, qid=qid)
    assert len(kept) == 6
    for tree, twin, offset in zip(model.trees_, plain.trees_, model._tree_offsets):
        np.testing.assert_array_equal(tree.nodes, twin.nodes)
        assert tree.nodes.base is model._forest_nodes
        assert np.shares_memory(tree.nodes, model._forest_nodes[offset : offset + tree.node_count])


@pytest.mark.slow  # their own build_tree specialisations (monotone constraints): after the quick suite
@pytest.mark.parametrize(
    "criterion, max_features", [(_criteria.NEWTON, 4), (_criteria.VARIANCE, 4), (_criteria.VARIANCE, 2)],
    ids=["newton", "variance", "variance, 2 features a node"],
)  # fmt: skip
def test_constraints_all_free_grow_the_tree_no_constraints_grow_bitwise(criterion, max_features):
    """``monotonic_cst`` of zeros compiles the scans with the clipped gains
    (``_criteria._clipped_gain``), None without: both must grow the same tree."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(700, 4))
    X[rng.random(X.shape) < 0.05] = np.nan
    signal = np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    if criterion == _criteria.NEWTON:
        training, _ = training_set(X, np.column_stack([-signal, rng.uniform(0.5, 1.0, 700)]), leaf_targets=np.zeros(0))
    else:
        training, _ = training_set(X, signal + rng.normal(0, 0.3, 700))
    params = TreeParams(criterion, 0, max_features=max_features, l2_regularization=1.0, max_leaf_nodes=20)

    def grow(monotonic_cst):
        return grow_tree(training, np.ones(700), params, seed(3), monotonic_cst=monotonic_cst)

    free, zeros = grow(None), grow(np.zeros(4, dtype=np.int8))
    assert free.n_leaves == 20
    np.testing.assert_array_equal(zeros.nodes, free.nodes)
    np.testing.assert_array_equal(zeros.values, free.values)
    np.testing.assert_array_equal(zeros.feature_gains, free.feature_gains)


@pytest.mark.slow  # a tree with penalties is a builder specialisation of its own (docs/design.md)
@pytest.mark.parametrize("criterion", [_criteria.ENTROPY, _criteria.VARIANCE], ids=["entropy", "variance"])
def test_penalties_all_zero_grow_the_tree_no_penalties_grow_bitwise(criterion):
    """``feature_penalty`` of zeros compiles the penalty code (``_builder._penalty_units``,
    ``_splitter._penalty``), None without: both must grow the same tree, and a penalty
    that is not zero must change it (the argument is read)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(600, 5))
    signal = X[:, 0] + 0.5 * X[:, 1] * X[:, 2]
    if criterion == _criteria.ENTROPY:
        training, _ = training_set(X, np.digitize(signal, [-0.5, 0.5]).astype(float))
    else:
        training, _ = training_set(X, signal + rng.normal(0, 0.3, 600))
    params = TreeParams(criterion, 3 if criterion == _criteria.ENTROPY else 0, max_features=5, max_leaf_nodes=16)

    def grow(feature_penalty):
        return grow_tree(training, np.ones(600), params, seed(4), feature_penalty=feature_penalty)

    free, zeros = grow(None), grow(np.zeros(5))
    np.testing.assert_array_equal(zeros.nodes, free.nodes)
    np.testing.assert_array_equal(zeros.values, free.values)
    np.testing.assert_array_equal(zeros.feature_gains, free.feature_gains)
    costly = grow(np.array([10.0, 0.0, 0.0, 0.0, 0.0]))
    assert free.feature_gains[0] > 0.0 and costly.feature_gains[0] == 0.0


def test_constraints_of_another_length_than_the_features_are_refused_by_name():
    training, _ = training_set(np.random.default_rng(0).normal(size=(50, 3)), np.arange(50.0))
    with pytest.raises(ValueError, match=r"monotonic_cst must hold one constraint per feature, shape \(3,\); got shape \(2,\)"):
        grow_tree(training, np.ones(50), TreeParams(_criteria.VARIANCE, 0, max_features=3), seed(), monotonic_cst=[1, 0])
