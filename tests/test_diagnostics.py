"""Tree strength curves: the NDCG of trees cut after their first splits."""

import numpy as np
import pytest

from forestrank import RFListRanker, RFPointRanker, make_ranking, ndcg_score, tree_strength_curve


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=60, docs_per_query=(5, 30), n_features=8, random_state=1)


def test_strength_curve_starts_tied_ends_at_the_trees_and_climbs_on_training_data(data):
    X, y, qid = data
    forest = RFListRanker(n_estimators=3, query_subsample=1.0, random_state=0).fit(X, y, qid=qid)
    curve = tree_strength_curve(forest, X, y, qid)
    assert curve.n_splits[0] == 0
    assert curve.ndcg[0] == pytest.approx(ndcg_score(y, np.zeros(len(y)), qid, ties="expected"))
    full = np.mean([ndcg_score(y, tree.predict(X), qid, ties="expected") for tree in forest.trees_])
    assert curve.ndcg[-1] == pytest.approx(full)
    assert (np.diff(curve.ndcg) >= -1e-12).all()  # every listwise split raised the training objective


def test_strength_curve_at_chosen_split_counts(data):
    X, y, qid = data
    forest = RFPointRanker(n_estimators=2, expansion="breadth", random_state=0).fit(X, y, qid=qid)
    tree = forest.trees_[0]
    one_split = tree.values[np.where(X[:, tree.nodes["feature"][0]] <= tree.nodes["threshold"][0], 1, 2)]
    single = RFPointRanker(n_estimators=1, expansion="breadth", random_state=0).fit(X, y, qid=qid)
    single.trees_ = [tree]
    curve = tree_strength_curve(single, X, y, qid, n_splits=[1], k=10)
    assert curve.ndcg[0] == pytest.approx(ndcg_score(y, one_split, qid, 10, ties="expected"))


def test_tree_strength_curve_takes_sparse_input_and_agrees_with_dense():
    import scipy.sparse

    from forestrank import RFPointRanker, make_ranking
    from forestrank.diagnostics import tree_strength_curve

    X, y, qid = make_ranking(n_queries=30, n_features=6, random_state=2)
    X[X < 0.3] = 0.0
    forest = RFPointRanker(n_estimators=3, random_state=0).fit(X, y, qid=qid)
    dense = tree_strength_curve(forest, X, y, qid)
    sparse = tree_strength_curve(forest, scipy.sparse.csr_matrix(X), y, qid)
    np.testing.assert_array_equal(sparse.ndcg, dense.ndcg)


def test_a_boosted_model_is_refused_by_name():
    from forestrank import LambdaMART

    X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=4, random_state=0)
    model = LambdaMART(n_estimators=3).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="RFPointRanker, RFListRanker or RFHybridRanker.*LambdaMART"):
        tree_strength_curve(model, X, y, qid)


def test_bad_labels_and_split_counts_are_refused_by_their_names():
    """A negative label was reported as the metrics' y_true; a split count of another type
    failed in int() or was truncated (1.9 counted as 1 split) without a word."""
    X, y, qid = make_ranking(n_queries=10, docs_per_query=8, n_features=4, random_state=1)
    forest = RFListRanker(n_estimators=2, random_state=0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="y contains negative values"):
        tree_strength_curve(forest, X, -y - 1.0, qid)
    with pytest.raises(ValueError, match="y has 79 entries but X has 80 rows"):
        tree_strength_curve(forest, X, y[1:], qid)
    assert len(tree_strength_curve(forest, X, y, qid, n_splits=[]).ndcg) == 0  # an empty list: no count, no point
    for counts in (["a"], [1.9, 2.7], [True], [[1, 2]], [-1]):
        with pytest.raises(ValueError, match="n_splits must be a 1-D array of non-negative integer split counts"):
            tree_strength_curve(forest, X, y, qid, n_splits=counts)
    # a count near int64's limit overflowed 2 * s to a negative id: no node kept, a wrong
    # score; counts beyond the largest tree keep the whole tree
    largest = max((tree.node_count - 1) // 2 for tree in forest.trees_)
    whole = tree_strength_curve(forest, X, y, qid, n_splits=[largest]).ndcg
    huge = [largest + 1, 2**62, 2**63 - 1, np.uint64(2**63 - 1)]
    curve = tree_strength_curve(forest, X, y, qid, n_splits=np.array(huge, dtype=np.uint64))
    np.testing.assert_array_equal(curve.n_splits, np.array(huge, dtype=np.int64))
    np.testing.assert_array_equal(curve.ndcg, np.repeat(whole, 4))
    with pytest.raises(ValueError, match=r"n_splits must be split counts of at most 2\*\*63 - 1"):
        tree_strength_curve(forest, X, y, qid, n_splits=np.array([2**63], dtype=np.uint64))
