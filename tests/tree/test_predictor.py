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


def test_both_predictor_kernels_give_the_same_sums(monkeypatch):
    """The prefetching kernel for trees beyond the caches and the plain one add the same
    leaf values in the same order; the estimator picks by mean tree size."""
    X, y, qid = make_ranking(n_queries=60, docs_per_query=100, n_features=40, random_state=2)
    forest = RFPointRanker(n_estimators=5, random_state=0, n_jobs=2).fit(X, y, qid=qid)
    assert not forest._deep_trees  # ~70 KB trees
    nodes, offsets = forest._forest_nodes, forest._tree_offsets
    for pass_bytes in (_predictor.PASS_BYTES, 4096):  # one pass, and passes of 12 rows (< a block)
        plain, deep = np.zeros(len(X)), np.zeros(len(X))
        _predictor.add_tree_values(X, nodes, forest._forest_missing_left, offsets, pass_bytes, plain)
        _predictor.add_deep_tree_values(X, nodes, forest._forest_missing_left, offsets, pass_bytes, deep)
        np.testing.assert_array_equal(plain, deep)
    expected = forest.predict(X)
    monkeypatch.setattr(_predictor, "DEEP_TREE_BYTES", 1024)
    forest._index_trees()
    assert forest._deep_trees
    np.testing.assert_array_equal(forest.predict(X), expected)
    forest.n_jobs = 1
    np.testing.assert_array_equal(forest.predict(X[:77]), expected[:77])
