"""Prediction: the two traversal kernels, row passes, and a traversal written out in Python."""

import numpy as np

from forestrank import LambdaMART, RFPointRanker, make_ranking
from forestrank._tree import _predictor


def walk(tree, row):
    """The leaf of ``row`` found the slow way: one node at a time, by the documented rule."""
    node = 0
    while tree.nodes["feature"][node] >= 0:
        go_left = row[tree.nodes["feature"][node]] <= tree.nodes["threshold"][node]
        node = tree.nodes["left"][node] + (0 if go_left else 1)
    return node


def test_apply_and_ensemble_sums_equal_a_python_traversal():
    X, y, qid = make_ranking(n_queries=30, docs_per_query=20, n_features=8, random_state=3)
    for model in (
        RFPointRanker(n_estimators=3, random_state=0).fit(X, y, qid=qid),
        LambdaMART(n_estimators=4, random_state=0).fit(X, y, qid=qid),
    ):
        rows = X[::7]
        expected = np.zeros(len(rows))
        for tree in model.trees_:
            leaves = np.array([walk(tree, row) for row in rows])
            np.testing.assert_array_equal(tree.apply(rows), leaves)
            expected += tree.values[leaves]
        np.testing.assert_allclose(model._sum_trees(np.ascontiguousarray(rows)), expected, rtol=1e-12)


def test_forest_prediction_is_the_mean_of_its_trees_over_several_row_passes():
    X, y, qid = make_ranking(n_queries=60, docs_per_query=100, n_features=300, random_state=1)
    forest = RFPointRanker(n_estimators=6, max_features=20, random_state=0, n_jobs=2).fit(X, y, qid=qid)
    # 300 float64 features: the predictor visits ~1.8k rows per pass, so 6,000 rows take several.
    per_tree = np.mean([tree.values[tree.apply(X)] for tree in forest.trees_], axis=0)
    np.testing.assert_allclose(forest.predict(X), per_tree, rtol=1e-12)


def test_passes_blocks_and_missing_values_do_not_change_the_sums():
    """Passes shorter than a block, rows split over passes, blocks with and without a NaN:
    each row's sum is the Python walk's (NaN by each node's ``missing_left``), in tree order."""
    X, y, qid = make_ranking(n_queries=60, docs_per_query=100, n_features=40, random_state=2)
    X[np.random.default_rng(0).random(X.shape) < 0.05] = np.nan
    forest = RFPointRanker(n_estimators=5, random_state=0, n_jobs=2).fit(X, y, qid=qid)
    rows = np.ascontiguousarray(X[:700])
    rows[300:600] = np.nan_to_num(rows[300:600])  # blocks without a missing value
    expected = np.zeros(len(rows))
    for tree in forest.trees_:
        expected += tree.values[[walk_missing(tree, row) for row in rows]]
    for pass_bytes in (_predictor.PASS_BYTES, 4096, 1):
        sums = np.zeros(len(rows))
        _predictor.add_tree_values(
            rows, forest._forest_nodes, forest._forest_missing_left, None, None, forest._tree_offsets, pass_bytes, sums
        )
        np.testing.assert_allclose(sums, expected, rtol=1e-12)
    forest.n_jobs = 1
    np.testing.assert_allclose(forest._sum_trees(rows), expected, rtol=1e-12)


def walk_missing(tree, row):
    """``walk`` with missing values sent by each node's flag."""
    node = 0
    while tree.nodes["feature"][node] >= 0:
        value = row[tree.nodes["feature"][node]]
        go_left = value <= tree.nodes["threshold"][node] or (np.isnan(value) and tree.missing_left[node] == 1)
        node = tree.nodes["left"][node] + (0 if go_left else 1)
    return node
