"""RFListRanker and RFHybridRanker: the listwise forests, their diagnostics and statistics."""

import pickle

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from forestrank import (
    QueryKFold,
    RFHybridRanker,
    RFListRanker,
    RFPointRanker,
    make_ranking,
    ndcg_score,
    ndcg_scorer,
)
from assertions import run_estimator_check
from forestrank.estimator_checks import expected_failed_checks

from .test_forest import without_relevance


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=60, docs_per_query=(5, 30), n_features=8, random_state=1)


@parametrize_with_checks([RFListRanker(n_estimators=3, random_state=0)], expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    run_estimator_check(estimator, check)


@pytest.mark.slow  # the other configurations' checks: run after the quick suite
@parametrize_with_checks(
    [
        RFHybridRanker(n_estimators=3, listwise_depth=2, random_state=0),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_estimator_checks_of_other_configurations(estimator, check):
    run_estimator_check(estimator, check)


def test_serial_and_threaded_fits_are_bitwise_identical(data):
    X, y, qid = data
    serial = RFListRanker(n_estimators=6, random_state=3, n_jobs=1).fit(X, y, qid=qid)
    threaded = RFListRanker(n_estimators=6, random_state=3, n_jobs=2).fit(X, y, qid=qid)
    np.testing.assert_array_equal(serial.predict(X), threaded.predict(X))


@pytest.mark.parametrize(
    "forest",
    [
        RFListRanker(n_estimators=4, random_state=2),
        RFListRanker(n_estimators=4, sample_level="document", bootstrap=True, random_state=2),
        RFHybridRanker(n_estimators=4, listwise_depth=3, random_state=2),
    ],
)
def test_skipping_queries_without_relevance_equals_dropping_them(data, forest):
    """The skipped queries are outside the objective either way; their documents still
    shape the leaf scores (and so the listwise gains) unless skipped."""
    X, y, qid, kept = without_relevance(data, n_queries=20)
    skipping = clone(forest).set_params(skip_queries_without_relevance=True).fit(X, y, qid=qid)
    dropped = clone(forest).fit(X[kept], y[kept], qid=qid[kept])
    np.testing.assert_array_equal(skipping.predict(X), dropped.predict(X))
    assert not np.array_equal(clone(forest).fit(X, y, qid=qid).predict(X), skipping.predict(X))


@pytest.mark.parametrize("k", [None, 10], ids=["exact objective", "default NDCG@10"])
def test_sum_of_split_gains_is_the_trees_expected_ndcg(data, k):
    """Each gain is measured on the tree as it stands, so the gains add up to its
    objective: the full expected NDCG, or the default's NDCG@10 (its cap of 200
    queries per node does not bind on these)."""
    X, y, qid = data
    assert len(np.unique(qid)) <= 200
    params = {} if k == 10 else {"ndcg_k": None, "max_queries_per_split": None}
    forest = RFListRanker(n_estimators=2, query_subsample=1.0, random_state=0, **params).fit(X, y, qid=qid)
    all_tied = ndcg_score(y, np.zeros(len(y)), qid, k, ties="expected")
    for tree in forest.trees_:
        grown = ndcg_score(y, tree.predict(X), qid, k, ties="expected")
        assert grown > all_tied
        assert all_tied + tree.feature_gains.sum() == pytest.approx(grown, abs=1e-10)


def test_split_gains_sum_to_the_weighted_expected_ndcg_with_a_fractional_weight_per_query(data):
    """docs/listwise.md: exact with a weight per query, fractional or not (with fractional
    weights varying within a query, ties between leaves can be missed by rounding)."""
    X, y, qid = data
    query_weight = np.random.default_rng(0).uniform(0.2, 3.0, int(qid.max()) + 1)
    params = dict(n_estimators=2, query_subsample=1.0, ndcg_k=None, max_queries_per_split=None, random_state=0)
    forest = RFListRanker(**params).fit(X, y, qid=qid, sample_weight=query_weight[qid])

    def weighted_ndcg(scores):
        return np.average(ndcg_score(y, scores, qid, ties="expected", per_query=True), weights=query_weight[np.unique(qid)])

    all_tied = weighted_ndcg(np.zeros(len(y)))
    for tree in forest.trees_:
        assert all_tied + tree.feature_gains.sum() == pytest.approx(weighted_ndcg(tree.predict(X)), abs=1e-10)


@pytest.mark.parametrize("expansion", ["depth", "breadth", "random", "biggest", "relevant"])
def test_hybrid_listwise_gains_see_the_tree_as_it_stands(data, expansion):
    """Depth 2 leaves are below the listwise depth, yet later listwise splits must
    see their scores: with every split listwise and none deeper, the gains still add
    up to the tree's expected NDCG whatever the expansion order."""
    X, y, qid = data
    hybrid = RFHybridRanker(
        listwise_depth=2, max_depth=2, expansion=expansion, n_estimators=3, query_subsample=1.0, ndcg_k=None,
        max_queries_per_split=None, random_state=0,
    ).fit(X, y, qid=qid)  # fmt: skip
    all_tied = ndcg_score(y, np.zeros(len(y)), qid, ties="expected")
    for tree in hybrid.trees_:
        assert tree.node_count == 7
        grown = ndcg_score(y, tree.predict(X), qid, ties="expected")
        assert all_tied + tree.feature_gains.sum() == pytest.approx(grown, abs=1e-10)


def test_truncated_and_bootstrapped_objectives_also_sum_to_the_metric(data):
    X, y, qid = data
    forest = RFListRanker(n_estimators=1, query_subsample=1.0, ndcg_k=5, random_state=0).fit(X, y, qid=qid)
    tree = forest.trees_[0]
    start = ndcg_score(y, np.zeros(len(y)), qid, 5, ties="expected")
    assert start + tree.feature_gains.sum() == pytest.approx(ndcg_score(y, tree.predict(X), qid, 5, ties="expected"))


def test_hybrid_interpolates_between_point_and_list(data):
    X, y, qid = data
    shared = dict(n_estimators=4, expansion="breadth", random_state=5)
    point = RFPointRanker(**shared).fit(X, y, qid=qid)
    hybrid_zero = RFHybridRanker(listwise_depth=0, **shared).fit(X, y, qid=qid)
    np.testing.assert_array_equal(hybrid_zero.predict(X), point.predict(X))
    listwise = RFListRanker(**shared).fit(X, y, qid=qid)
    hybrid_deep = RFHybridRanker(listwise_depth=10_000, **shared).fit(X, y, qid=qid)
    np.testing.assert_array_equal(hybrid_deep.predict(X), listwise.predict(X))
    hybrid = RFHybridRanker(listwise_depth=2, **shared).fit(X, y, qid=qid)
    assert not np.array_equal(hybrid.predict(X), listwise.predict(X))
    assert not np.array_equal(hybrid.predict(X), point.predict(X))


def test_hybrid_grows_its_pointwise_nodes_after_its_last_listwise_split(data):
    """Without a leaf budget the hybrid grows the nodes left after its last listwise
    split depth-first (faster; the order changes only their random draws). The
    listwise splits must not see any of them: they and the nodes they make are those
    of a tree grown breadth-first to the end, which a budget too large to bind keeps."""
    X, y, qid = data
    shared = dict(listwise_depth=3, n_estimators=4, random_state=2)
    switched = RFHybridRanker(**shared).fit(X, y, qid=qid)
    breadth_first = RFHybridRanker(max_leaf_nodes=len(y), **shared).fit(X, y, qid=qid)
    for tree, reference in zip(switched.trees_, breadth_first.trees_):
        depths = reference.node_depths()
        assert (np.diff(depths) >= 0).all()  # split level by level throughout (what tree_strength_curve needs)
        listwise = np.flatnonzero(depths < 3)
        made = np.flatnonzero(depths <= 3)  # breadth-first ids: these come first in both trees
        np.testing.assert_array_equal(made, np.arange(len(made)))
        np.testing.assert_array_equal(tree.nodes[listwise], reference.nodes[listwise])
        np.testing.assert_array_equal(tree.values[made], reference.values[made])
        np.testing.assert_array_equal(tree.node_depths()[made], depths[made])
        assert (np.diff(tree.node_depths()) < 0).any()  # below them, depth-first: a subtree ends, a shallower node follows


def test_listwise_forest_ranks_held_out_queries(data):
    X, y, qid = data
    train = qid < 45
    forest = RFListRanker(n_estimators=30, random_state=0, n_jobs=2).fit(X[train], y[train], qid=qid[train])
    random_order = ndcg_score(y[~train], np.zeros((~train).sum()), qid[~train], 10)
    assert ndcg_score(y[~train], forest.predict(X[~train]), qid[~train], 10) > random_order + 0.1


def test_query_sampling_per_split_and_discounts_change_the_model(data):
    X, y, qid = data
    base = RFListRanker(n_estimators=2, random_state=0).fit(X, y, qid=qid).predict(X)
    for params in ({"max_queries_per_split": 3}, {"discount": ("rank_power", 1.0)}, {"ndcg_k": 3}):
        first = RFListRanker(n_estimators=2, random_state=0, **params).fit(X, y, qid=qid).predict(X)
        again = RFListRanker(n_estimators=2, random_state=0, **params).fit(X, y, qid=qid).predict(X)
        np.testing.assert_array_equal(first, again)
        assert not np.array_equal(first, base), params


def test_pickle_and_clone_round_trip(data):
    X, y, qid = data
    ranker = RFHybridRanker(n_estimators=3, listwise_depth=3, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(ranker)).predict(X), ranker.predict(X))
    assert clone(ranker).get_params() == ranker.get_params()


def test_gridsearch_over_listwise_depth(data):
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            RFHybridRanker(n_estimators=4, random_state=0), {"listwise_depth": [0, 2, 4]}, cv=QueryKFold(3),
            scoring=ndcg_scorer(10),
        )  # fmt: skip
        search.fit(X, y, qid=qid)
    assert len(search.cv_results_["params"]) == 3 and 0.0 < search.best_score_ <= 1.0


@pytest.mark.parametrize(
    "params, match",
    [
        ({"discount": "log10"}, "discount"),
        ({"discount": ("log_power", -1.0)}, "discount"),
        ({"expansion": "best"}, "expansion"),
        ({"ndcg_k": 0}, "ndcg_k"),
        ({"max_queries_per_split": 0}, "max_queries_per_split"),
    ],
)
def test_bad_parameters_name_themselves(data, params, match):
    X, y, qid = data
    with pytest.raises(ValueError, match=match):
        RFListRanker(n_estimators=2, **params).fit(X, y, qid=qid)


def test_listwise_forests_require_grades(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="y"):
        RFListRanker(n_estimators=2).fit(X, y + 0.5, qid=qid)


@pytest.mark.parametrize("Forest", [RFListRanker, RFHybridRanker])
def test_label_gain_weighs_the_listwise_objective(data, Forest):
    """The exponential table grows the default forest; a linear gain another one; a table
    without the data's grades is refused by name."""
    X, y, qid = data
    settings = dict(n_estimators=4, max_depth=4, random_state=0)
    default = Forest(**settings).fit(X, y, qid=qid)
    table = Forest(**settings, label_gain=[2.0**g - 1 for g in range(int(y.max()) + 1)]).fit(X, y, qid=qid)
    linear = Forest(**settings, label_gain="linear").fit(X, y, qid=qid)
    np.testing.assert_allclose(table.predict(X), default.predict(X), rtol=1e-12)
    assert not np.array_equal(linear.predict(X), default.predict(X))
    assert linear.score(X, y, qid) == ndcg_score(y, linear.predict(X), qid, 10, gain="linear")
    with pytest.raises(ValueError, match="label_gain gives gains to the grades 0 to 1; y holds"):
        Forest(**settings, label_gain=[0, 1]).fit(X, y, qid=qid)


def test_a_gain_table_near_the_largest_float_grows_the_forest_of_the_same_table_scaled_down(data):
    """The expected NDCG is a ratio within each query: a table times a power of two grows
    the same trees, where one near float64's largest value overflowed the ideal DCGs."""
    X, y, qid = data
    table = np.array([0.0, 1.0, 3.0, 7.0, 15.0])
    small = RFListRanker(n_estimators=3, label_gain=table, random_state=0).fit(X, y, qid=qid)
    huge = RFListRanker(n_estimators=3, label_gain=table * 2.0**1019, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(huge.predict(X), small.predict(X))
    assert huge.score(X, y, qid) == small.score(X, y, qid)


@pytest.mark.parametrize("estimator_class", [RFListRanker, RFHybridRanker])
@pytest.mark.parametrize(("weights", "transform"), [("square", lambda g: g**2), ("exp", lambda g: 2.0**g)])
def test_leaves_score_the_weighted_grades(data, estimator_class, weights, transform):
    """relevance_weights other than 'linear' failed every fit (a check only RFPointRanker
    defines). A leaf scores sum_c P(c | leaf) F(c): the mean of its rows' weighted grades."""
    X, y, qid = data
    tree = estimator_class(n_estimators=1, query_subsample=1.0, min_samples_leaf=30, relevance_weights=weights, random_state=0)
    tree = tree.fit(X, y, qid=qid).trees_[0]
    leaves = tree.apply(X)
    for leaf in np.unique(leaves):
        assert tree.values[leaf] == pytest.approx(transform(y[leaves == leaf]).mean())
