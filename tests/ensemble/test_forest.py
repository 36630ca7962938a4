"""RFPointRanker: the random-forest ranker on the shared engine."""

import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

from forestrank import (
    DummyRanker,
    LambdaMART,
    MissingQidWarning,
    QueryKFold,
    QueryShuffleSplit,
    RFHybridRanker,
    RFListRanker,
    RFPointRanker,
    make_ranking,
    ndcg_score,
    ndcg_scorer,
)
from forestrank.ensemble._sampling import draw_counts
from assertions import run_estimator_check
from forestrank.estimator_checks import expected_failed_checks


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=120, docs_per_query=(5, 40), n_features=10, random_state=0)


@parametrize_with_checks([RFPointRanker(n_estimators=5, random_state=0)], expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    run_estimator_check(estimator, check)


@pytest.mark.slow  # the other configurations' checks: run after the quick suite
@parametrize_with_checks(
    [
        RFPointRanker(n_estimators=5, criterion="variance", bootstrap=True, sample_level="document", random_state=0),
        RFPointRanker(n_estimators=5, criterion="random", random_state=0),
        RFPointRanker(n_estimators=5, criterion="hellinger", random_state=0),
        RFPointRanker(n_estimators=5, bootstrap=True, random_state=0),  # queries drawn whole: passes the weight checks
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_estimator_checks_of_other_configurations(estimator, check):
    run_estimator_check(estimator, check)


def test_the_weight_checks_a_forest_is_expected_to_fail_follow_its_document_draws():
    """``bootstrap=True`` at the query level was listed as failing the weight checks, which
    it passes: the checks' rows form one query, drawn whole with its repeated row."""
    weight_checks = {"check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data"}
    for passing in ({"bootstrap": True}, {"query_subsample": 0.5}, {"sample_level": "document", "query_subsample": 1.0}):
        assert expected_failed_checks(RFPointRanker(**passing)) == {}, passing
    for failing in ({"sample_level": "document"}, {"sample_level": "document", "bootstrap": True, "query_subsample": 1.0}):
        assert set(expected_failed_checks(RFPointRanker(**failing))) == weight_checks, failing


def test_serial_and_threaded_fits_are_bitwise_identical(data):
    X, y, qid = data
    serial = RFPointRanker(n_estimators=12, random_state=3, n_jobs=1).fit(X, y, qid=qid)
    threaded = RFPointRanker(n_estimators=12, random_state=3, n_jobs=2).fit(X, y, qid=qid)
    for a, b in zip(serial.trees_, threaded.trees_):
        np.testing.assert_array_equal(a.nodes, b.nodes)
    np.testing.assert_array_equal(serial.predict(X), threaded.predict(X))
    threaded.n_jobs = 1
    Xbig = np.repeat(X, 30, axis=0)  # enough rows for the threaded predictor to split them
    serial.n_jobs = 2
    np.testing.assert_array_equal(serial.predict(Xbig), threaded.predict(Xbig))


def test_random_state_controls_the_model(data):
    X, y, qid = data
    first = RFPointRanker(n_estimators=5, random_state=1).fit(X, y, qid=qid).predict(X)
    again = RFPointRanker(n_estimators=5, random_state=1).fit(X, y, qid=qid).predict(X)
    other = RFPointRanker(n_estimators=5, random_state=2).fit(X, y, qid=qid).predict(X)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_warm_start_continues_the_same_forest(data):
    X, y, qid = data
    whole = RFPointRanker(n_estimators=10, random_state=5).fit(X, y, qid=qid)
    grown = RFPointRanker(n_estimators=4, random_state=5, warm_start=True).fit(X, y, qid=qid)
    grown.set_params(n_estimators=7).fit(X, y, qid=qid)
    grown.set_params(n_estimators=10, random_state=6).fit(X, y, qid=qid)  # read at the first fit only (documented)
    assert grown.n_trees_ == 10
    np.testing.assert_array_equal(whole.predict(X), grown.predict(X))
    with pytest.raises(ValueError, match="must be >= the 10 trees already fitted"):
        grown.set_params(n_estimators=3).fit(X, y, qid=qid)
    with pytest.warns(UserWarning, match="no tree is grown") as record:  # at this line, not inside the package
        grown.set_params(n_estimators=10).fit(X, y, qid=qid)
    assert record[0].filename == __file__


@pytest.mark.parametrize("estimator", ["RFPointRanker", "RFListRanker"])
def test_a_warm_start_on_reordered_columns_is_refused(data, estimator):
    """A warm start took a frame with its columns reordered: the earlier trees read them by
    position, and the forest scored 0.97 then 0.66 without a word."""
    pd = pytest.importorskip("pandas")
    import forestrank

    X, y, qid = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    model = getattr(forestrank, estimator)(n_estimators=3, warm_start=True, random_state=0).fit(frame, y, qid=qid)
    with pytest.raises(ValueError, match="which read the columns by position: give X those columns in that order"):
        model.set_params(n_estimators=4).fit(frame[frame.columns[::-1]], y, qid=qid)
    assert model.n_trees_ == 3 and list(model.feature_names_in_) == list(frame.columns)
    model.fit(frame, y, qid=qid)
    assert model.n_trees_ == 4


@pytest.mark.parametrize("estimator", ["RFPointRanker", "RFListRanker", "RFHybridRanker", "BROOF"])
def test_importances_of_an_unfitted_model_raise_not_fitted_error(estimator):
    """They raised a bare AttributeError naming ``trees_`` (``estimator_weights_`` for BROOF)."""
    import forestrank
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="is not fitted yet"):
        getattr(forestrank, estimator)().feature_importances_


def test_a_fraction_of_min_samples_leaf_is_of_the_fits_rows_not_a_trees_sample(data):
    """The docstring said a tree's rows; scikit-learn's convention, the code's, is the fit's."""
    X, y, qid = data
    model = RFPointRanker(n_estimators=4, min_samples_leaf=0.05, random_state=0).fit(X, y, qid=qid)
    smallest = min(tree.n_node_samples[tree.nodes["feature"] < 0].min() for tree in model.trees_)
    assert smallest >= np.ceil(0.05 * len(y)) > np.ceil(0.05 * model.trees_[0].n_node_samples[0])


def test_pickle_and_clone_round_trip(data):
    X, y, qid = data
    ranker = RFPointRanker(n_estimators=6, random_state=0).fit(X, y, qid=qid)
    expected = ranker.predict(X)
    restored = pickle.loads(pickle.dumps(ranker))
    np.testing.assert_array_equal(restored.predict(X), expected)
    fresh = clone(ranker)
    assert fresh.get_params() == ranker.get_params() and not hasattr(fresh, "trees_")


def test_architecture_gridsearch_recipe(data):
    X, y, qid = data
    grid = {"rfpointranker__n_estimators": [5, 15], "rfpointranker__max_features": ["log2+1", 0.5]}
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("error", MissingQidWarning)
        search = GridSearchCV(
            make_pipeline(StandardScaler(), RFPointRanker(random_state=0)), grid, cv=QueryKFold(3), scoring=ndcg_scorer(10)
        )
        search.fit(X, y, qid=qid)
    assert len(search.cv_results_["params"]) == 4
    assert 0.0 < search.best_score_ <= 1.0


@pytest.mark.parametrize("criterion", ["entropy", "hellinger"])
def test_quality_beats_the_single_feature_baseline(data, criterion):
    X, y, qid = data
    train, test = next(QueryShuffleSplit(1, test_size=0.3, random_state=0).split(X, qid=qid))
    forest = RFPointRanker(n_estimators=60, criterion=criterion, random_state=0, n_jobs=2)
    forest.fit(X[train], y[train], qid=qid[train])
    baseline = DummyRanker().fit(X[train], y[train], qid=qid[train])
    assert forest.score(X[test], y[test], qid[test]) > baseline.score(X[test], y[test], qid[test]) + 0.05


@pytest.mark.parametrize(
    ("max_bins", "step"),
    # Exact mode on 400 distinct values bins into uint16: the entropy criterion's uint16 kernels, which no other
    # quick test compiles.
    [pytest.param(None, 0.0, marks=pytest.mark.slow), (255, 1 / 32)],
)
def test_single_tree_equals_sklearn_decision_tree(max_bins, step):
    """One tree on all rows and features, one bin per value, is CART: scikit-learn's tree, cut for cut.

    Exact mode on continuous features, and the default binning on features with
    fewer than 255 values (multiples of ``step``). Values are float32-representable
    because scikit-learn's trees split and predict on float32.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5)).astype(np.float32).astype(np.float64)
    if step:
        X = np.round(X / step) * step
    y = (X[:, 0] + X[:, 1] ** 2 + 0.5 * rng.normal(size=400) > 1).astype(int) + (X[:, 2] > 1)
    X_new = rng.normal(size=(300, 5)).astype(np.float32).astype(np.float64)
    # Leaves of >= 5 rows: in smaller nodes splits on different features often isolate
    # the same rows, and equal gains are broken by each library's own feature order.
    shape = dict(max_depth=3, min_samples_leaf=5)
    common = dict(n_estimators=1, query_subsample=1.0, max_features=None, max_bins=max_bins, random_state=0, **shape)
    ours = RFPointRanker(criterion="entropy", **common).fit(X, y, qid=np.zeros(400))
    cart = DecisionTreeClassifier(criterion="entropy", random_state=0, **shape).fit(X, y)
    for rows in (X, X_new):
        np.testing.assert_allclose(ours.predict(rows), cart.predict_proba(rows) @ cart.classes_, rtol=1e-12)
    target = np.exp(X[:, 3] + X[:, 4])
    regression = RFPointRanker(criterion="variance", **common).fit(X, target, qid=np.zeros(400))
    cart_regression = DecisionTreeRegressor(random_state=0, **shape).fit(X, target)
    for rows in (X, X_new):
        np.testing.assert_allclose(regression.predict(rows), cart_regression.predict(rows), rtol=1e-12)


def test_min_gain_to_split_is_sklearns_min_impurity_decrease_with_entropy_in_nats():
    """Entropy is counted in nats (natural logarithms), scikit-learn's in bits: its
    ``min_impurity_decrease`` times ln 2 prunes the same splits (gini and variance need no
    conversion)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4)).round(2)
    y = np.clip((X[:, 0] + rng.normal(size=300)).round() + 1, 0, 3).astype(int)
    common = dict(n_estimators=1, query_subsample=1.0, max_features=None, random_state=0)

    def fit(threshold):
        return RFPointRanker(criterion="entropy", min_gain_to_split=threshold, **common).fit(X, y, qid=np.zeros(300))

    for threshold in (0.02, 0.05):  # trees of 24 and 4 leaves: deeper ones differ by equal gains' order
        cart = DecisionTreeClassifier(criterion="entropy", min_impurity_decrease=threshold, random_state=0).fit(X, y)
        ours = fit(threshold * np.log(2))
        assert ours.trees_[0].n_leaves == cart.get_n_leaves()
        np.testing.assert_allclose(ours.predict(X), cart.predict_proba(X) @ cart.classes_, rtol=1e-12)
    assert fit(0.02).trees_[0].n_leaves < 24  # the same number in nats prunes more


def test_query_level_sampling_takes_whole_queries(data):
    X, y, qid = data
    ranker = RFPointRanker(n_estimators=3, query_subsample=0.5, random_state=0).fit(X, y, qid=qid)
    query_of_row = np.unique(qid, return_inverse=True)[1]  # data is grouped by increasing qid
    for index in range(3):
        counts = ranker._sample_counts(index, query_of_row)
        sampled = np.unique(query_of_row[counts > 0])
        assert len(sampled) == 60  # half of 120 queries
        assert np.all(counts[np.isin(query_of_row, sampled)] == 1)
        assert ranker.trees_[index].n_node_samples[0] == (counts > 0).sum()
    bootstrap = RFPointRanker(n_estimators=2, bootstrap=True, random_state=0).fit(X, y, qid=qid)
    counts = bootstrap._sample_counts(0, query_of_row)
    per_query = np.array([np.unique(counts[query_of_row == q]) for q in range(120)], dtype=object)
    assert all(len(values) == 1 for values in per_query) and counts.max() >= 2
    documents = RFPointRanker(n_estimators=2, sample_level="document", random_state=0).fit(X, y, qid=qid)
    counts = documents._sample_counts(0, query_of_row)
    assert counts.sum() == round(0.63 * len(y))


def without_relevance(data, n_queries=30):
    """``data`` with every label of its first ``n_queries`` queries set to 0, and the
    mask of the rows whose query keeps a positive label."""
    X, y, qid = data
    y = np.where(np.isin(qid, np.unique(qid)[:n_queries]), 0.0, y)
    return X, y, qid, np.isin(qid, np.unique(qid[y > 0]))


@pytest.mark.parametrize("bootstrap", [False, True])
@pytest.mark.parametrize("by_query", [False, True])
def test_a_pool_restricts_the_draw_to_its_units(bootstrap, by_query):
    query_of_row = np.repeat(np.arange(40), 3)
    n_units = 40 if by_query else 120
    pool = np.random.default_rng(1).random(n_units) < 0.5
    for seed in range(5):
        counts = draw_counts(np.random.default_rng(seed), query_of_row, 0.6, by_query, bootstrap, pool)
        per_unit = counts[::3] if by_query else counts
        assert per_unit[~pool].sum() == 0
        assert per_unit.sum() == round(0.6 * pool.sum())
        assert bootstrap or per_unit.max() == 1
    everything = draw_counts(np.random.default_rng(0), query_of_row, 0.6, by_query, bootstrap)
    np.testing.assert_array_equal(
        everything, draw_counts(np.random.default_rng(0), query_of_row, 0.6, by_query, bootstrap, np.ones(n_units, bool))
    )


@pytest.mark.parametrize(
    "params", [{}, {"bootstrap": True}, {"sample_level": "document"}, {"criterion": "variance", "min_samples_leaf": 0.01}]
)
def test_skipping_queries_without_relevance_equals_dropping_them(data, params):
    X, y, qid, kept = without_relevance(data)
    skipping = RFPointRanker(n_estimators=6, skip_queries_without_relevance=True, random_state=0, **params)
    skipping.fit(X, y, qid=qid)
    dropped = RFPointRanker(n_estimators=6, random_state=0, **params).fit(X[kept], y[kept], qid=qid[kept])
    np.testing.assert_array_equal(skipping.predict(X), dropped.predict(X))
    every_query = RFPointRanker(n_estimators=6, random_state=0, **params).fit(X, y, qid=qid)
    assert not np.array_equal(every_query.predict(X), skipping.predict(X))


@pytest.mark.parametrize("params", [{}, {"sample_level": "document"}])
def test_a_query_whose_relevant_documents_weigh_nothing_is_skipped(data, params):
    """Relevant documents of zero weight made their query count as relevant: it stayed in
    the pool, its other documents in the trees, unlike the fit without the weightless rows."""
    X, y, qid = data
    weight = np.ones(len(y))
    for query in np.unique(qid)[::3]:
        weight[(qid == query) & (y > 0)] = 0.0
    kept = weight > 0
    make = lambda: RFPointRanker(n_estimators=6, skip_queries_without_relevance=True, random_state=0, **params)  # noqa: E731
    weighted = make().fit(X, y, qid=qid, sample_weight=weight)
    dropped = make().fit(X[kept], y[kept], qid=qid[kept])
    np.testing.assert_array_equal(weighted.predict(X), dropped.predict(X))


def test_skipped_queries_are_out_of_every_trees_bag(data):
    X, y, qid, kept = without_relevance(data)
    ranker = RFPointRanker(n_estimators=6, skip_queries_without_relevance=True, oob_score=True, random_state=0)
    ranker.fit(X, y, qid=qid)
    np.testing.assert_allclose(ranker.oob_prediction_[~kept], ranker.predict(X[~kept]), rtol=1e-12)


def test_the_out_of_bag_score_leaves_out_the_rows_the_fit_leaves_out(data):
    """Skipped queries and rows of zero weight are out of every tree's bag, but not in the
    data the forest learns from: the out-of-bag NDCG is the one of the fit without them
    (it scored the skipped queries' NDCG of 0 and the zero-weight rows in full)."""
    X, y, qid, kept = without_relevance(data)
    make = lambda **params: RFPointRanker(n_estimators=6, oob_score=True, random_state=0, **params)  # noqa: E731
    dropped = make().fit(X[kept], y[kept], qid=qid[kept])
    skipping = make(skip_queries_without_relevance=True).fit(X, y, qid=qid)
    np.testing.assert_array_equal(skipping.predict(X), dropped.predict(X))
    assert skipping.oob_score_ == dropped.oob_score_
    weighted = make().fit(X, y, qid=qid, sample_weight=kept.astype(float))
    np.testing.assert_array_equal(weighted.predict(X), dropped.predict(X))
    assert weighted.oob_score_ == dropped.oob_score_


def test_skipping_every_query_is_refused(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="skip_queries_without_relevance=True skips every query"):
        RFPointRanker(n_estimators=2, skip_queries_without_relevance=True).fit(X, np.zeros_like(y), qid=qid)


def test_out_of_bag_predictions_use_only_trees_that_did_not_see_the_row(data):
    X, y, qid = data
    ranker = RFPointRanker(n_estimators=8, oob_score=True, random_state=0).fit(X, y, qid=qid)
    query_of_row = np.unique(qid, return_inverse=True)[1]
    totals, seen = np.zeros(len(y)), np.zeros(len(y))
    for index, tree in enumerate(ranker.trees_):
        out = ranker._sample_counts(index, query_of_row) == 0
        totals[out] += tree.predict(X[out])
        seen[out] += 1
    expected = np.where(seen > 0, totals / np.maximum(seen, 1), np.nan)
    np.testing.assert_allclose(ranker.oob_prediction_, expected, rtol=1e-12, equal_nan=True)
    for q in np.unique(qid):  # whole queries are in or out of a tree
        assert len(np.unique(np.isnan(ranker.oob_prediction_[qid == q]))) == 1
    scored = ~np.isnan(expected)
    assert ranker.oob_score_ == pytest.approx(ndcg_score(y[scored], expected[scored], qid[scored], 10))


def test_oob_prediction_is_returned_in_the_callers_row_order(data):
    X, y, qid = data
    permutation = np.random.default_rng(0).permutation(len(y))
    ordered = RFPointRanker(n_estimators=6, oob_score=True, random_state=0).fit(X, y, qid=qid)
    shuffled = RFPointRanker(n_estimators=6, oob_score=True, random_state=0).fit(X[permutation], y[permutation], qid=qid[permutation])
    np.testing.assert_allclose(shuffled.oob_prediction_, ordered.oob_prediction_[permutation], equal_nan=True)


@pytest.mark.parametrize(("weights", "transform"), [("linear", lambda g: g), ("square", lambda g: g**2), ("exp", lambda g: 2.0**g)])
def test_leaves_score_expected_relevance_with_relevance_weights(data, weights, transform):
    X, y, qid = data
    ranker = RFPointRanker(n_estimators=1, query_subsample=1.0, min_samples_leaf=30, relevance_weights=weights, random_state=0)
    ranker.fit(X, y, qid=qid)
    tree = ranker.trees_[0]
    leaves = tree.apply(X)
    for leaf in np.unique(leaves):
        assert tree.values[leaf] == pytest.approx(transform(y[leaves == leaf]).mean())
    mean = RFPointRanker(n_estimators=1, query_subsample=1.0, min_samples_leaf=30, leaf_score="mean", random_state=0)
    np.testing.assert_allclose(mean.fit(X, y, qid=qid).predict(X), RFPointRanker(**{**mean.get_params(), "relevance_weights": "linear"}).fit(X, y, qid=qid).predict(X))


@pytest.mark.parametrize("sampling", ["queries", "bootstrap with sample weights"])
def test_fitted_relevance_weights_are_least_squares_on_out_of_bag_grade_probabilities(data, sampling):
    """Mohan's fitted weights (thesis Eqs. 3.5-3.8) for a classification forest, recomputed by
    hand: every leaf's grade distribution over its tree's in-bag rows (weighted by their
    draws and sample weights), each row's mean over the trees that left it out, numpy's
    weighted least squares of the labels on those."""
    X, y, qid = data
    assert np.all(np.diff(qid) >= 0)  # grouped already: the forest's row order is the input's
    params = dict(n_estimators=8, min_samples_leaf=5, random_state=0)
    sample_weight = np.ones(len(y))
    if sampling != "queries":
        params["bootstrap"] = True
        sample_weight = np.random.default_rng(1).integers(1, 4, len(y)).astype(float)
    fitted = RFPointRanker(relevance_weights="fitted", **params).fit(X, y, qid=qid, sample_weight=sample_weight)
    linear = RFPointRanker(relevance_weights="linear", **params).fit(X, y, qid=qid, sample_weight=sample_weight)
    classes = np.unique(y)
    query_of_row = np.searchsorted(np.unique(qid), qid)
    totals, seen_by, distributions = np.zeros((len(y), len(classes))), np.zeros(len(y)), []
    for index, (tree, same) in enumerate(zip(fitted.trees_, linear.trees_)):
        internal = tree.nodes["feature"] >= 0
        np.testing.assert_array_equal(tree.nodes[internal], same.nodes[internal])  # the weights move no split
        weights = fitted._sample_counts(index, query_of_row) * sample_weight
        leaves = tree.apply(X)
        distribution = {}
        for leaf in np.unique(leaves[weights > 0]):
            here = (weights > 0) & (leaves == leaf)
            distribution[leaf] = np.array([weights[here & (y == c)].sum() for c in classes]) / weights[here].sum()
            assert same.values[leaf] == pytest.approx(distribution[leaf] @ classes)  # Eq. 9 with F(c) = c
        for row in np.flatnonzero(weights == 0):
            totals[row] += distribution[leaves[row]]
            seen_by[row] += 1
        distributions.append(distribution)
    scored = seen_by > 0
    root = np.sqrt(sample_weight[scored])
    design = totals[scored] / seen_by[scored, None]
    expected = np.linalg.lstsq(design * root[:, None], y[scored] * root, rcond=None)[0]
    np.testing.assert_allclose(fitted.relevance_weights_, expected, rtol=1e-10)
    for tree, distribution in zip(fitted.trees_, distributions):
        for leaf, probabilities in distribution.items():
            assert tree.values[leaf] == pytest.approx(probabilities @ expected, rel=1e-10)
    mean_of_leaves = np.mean([tree.values[tree.apply(X)] for tree in fitted.trees_], axis=0)
    np.testing.assert_allclose(fitted.predict(X), mean_of_leaves, rtol=1e-12)  # the predictor reads the new values
    assert not hasattr(linear, "relevance_weights_")


def test_warm_start_refuses_a_forest_scored_with_other_relevance_weights(data):
    X, y, qid = data
    forest = RFPointRanker(n_estimators=3, relevance_weights="fitted", warm_start=True, random_state=0).fit(X, y, qid=qid)
    before = forest.predict(X)
    forest.set_params(n_estimators=5, relevance_weights="linear")
    with pytest.raises(ValueError, match="leaves were scored with"):
        forest.fit(X, y, qid=qid)
    np.testing.assert_array_equal(forest.predict(X), before)  # the failed fit left the forest as it was
    forest.set_params(relevance_weights="fitted").fit(X, y, qid=qid)
    assert len(forest.trees_) == 5


@pytest.mark.parametrize("estimator", [RFPointRanker, RFListRanker])
@pytest.mark.parametrize(
    "change",
    [
        {"query_subsample": 0.3}, {"bootstrap": True}, {"sample_level": "document"},
        {"skip_queries_without_relevance": True},
    ],
)
def test_out_of_bag_rows_of_a_warm_start_need_every_tree_drawn_as_this_fit_draws(data, estimator, change):
    """Out-of-bag rows redraw each tree's sample under the current settings: trees drawn
    otherwise were judged on rows they were grown on. Without out-of-bag rows (or fitted
    relevance weights) the forest may grow on, but not compute them later."""
    X, y, qid = data
    forest = estimator(n_estimators=3, query_subsample=0.9, oob_score=True, warm_start=True, random_state=0)
    before = forest.fit(X, y, qid=qid).oob_prediction_.copy()
    with pytest.raises(ValueError, match="redraw every tree's sample .* the fitted trees drew theirs with"):
        forest.set_params(n_estimators=5, **change).fit(X, y, qid=qid)
    np.testing.assert_array_equal(forest.oob_prediction_, before)
    assert len(forest.trees_) == 3
    forest.set_params(oob_score=False).fit(X, y, qid=qid)
    assert len(forest.trees_) == 5
    with pytest.raises(ValueError, match="the fitted trees drew theirs several ways"):
        forest.set_params(n_estimators=6, oob_score=True).fit(X, y, qid=qid)
    fresh = estimator(n_estimators=3, oob_score=True, random_state=0, **{"query_subsample": 0.9, **change})
    assert fresh.fit(X, y, qid=qid).oob_score_ is not None  # the settings themselves are fine


def test_out_of_bag_rows_of_a_warm_start_need_the_rows_the_trees_were_drawn_from(data):
    """A warm start over other rows redrew the fitted trees' samples over them: rows a tree
    was grown on were scored as out of its bag (oob_score_ 0.86 against a straight fit's
    0.70). Refused; the rows of the first fit warm-start as before, also when the first
    fit computed no out-of-bag rows."""
    X, y, qid = data
    settings = {"oob_score": True}
    first = qid < np.unique(qid)[len(np.unique(qid)) // 2]
    forest = RFPointRanker(n_estimators=3, query_subsample=0.5, warm_start=True, random_state=0, **settings)
    forest.fit(X[first], y[first], qid=qid[first])
    with pytest.raises(ValueError, match=r"drew theirs from other rows \(another X, y, qid or sample_weight\)"):
        forest.set_params(n_estimators=5).fit(X, y, qid=qid)
    assert len(forest.trees_) == 3
    same_rows = forest.set_params(n_estimators=5).fit(X[first], y[first], qid=qid[first])
    straight = RFPointRanker(n_estimators=5, query_subsample=0.5, random_state=0, **settings).fit(X[first], y[first], qid=qid[first])
    np.testing.assert_array_equal(same_rows.predict(X), straight.predict(X))
    without = RFPointRanker(n_estimators=3, query_subsample=0.5, warm_start=True, random_state=0)
    without.fit(X[first], y[first], qid=qid[first]).set_params(n_estimators=5, oob_score=True).fit(X[first], y[first], qid=qid[first])
    assert without.oob_score_ == straight.oob_score_  # the first fit computed none: its rows are still known
    without.set_params(n_estimators=6, oob_score=False).fit(X, y, qid=qid)  # other rows, nothing redrawn: grows on ...
    with pytest.raises(ValueError, match="from other rows"):  # ... and its trees' rows are then several sets
        without.set_params(n_estimators=7, oob_score=True).fit(X, y, qid=qid)

@pytest.mark.parametrize("spread", ["independent", 0.0, 1e-14])
def test_relevance_weights_from_stacked_qr_factors_are_the_least_squares_of_all_rows(spread):
    """TSQR: the factors of blocks of rows, stacked, solve the rows' least squares. With every
    row's probabilities the same, or the same but for rounding-sized differences (trees that
    barely split), the same minimum-norm solution: the cutoff of small singular values is
    the one of all the rows, not of the few stacked ones (with that, the near case's
    weights were off by 1e12)."""
    from forestrank.ensemble._forest import fitted_relevance_weights, relevance_factor, relevance_weights_from_factors

    rng = np.random.default_rng(0)
    n_rows, n_grades = 1000, 5
    if spread == "independent":
        probabilities = rng.dirichlet(np.ones(n_grades), size=n_rows)
    else:
        probabilities = rng.dirichlet(np.ones(n_grades)) + spread * rng.standard_normal((n_rows, n_grades))
    y, weights = rng.integers(0, n_grades, n_rows).astype(float), rng.uniform(0.0, 2.0, n_rows)
    expected = fitted_relevance_weights(probabilities, y, weights)
    blocks = [slice(0, 3), slice(3, 400), slice(400, n_rows)]  # the first has fewer rows than columns
    factors = [relevance_factor(probabilities[rows], y[rows], weights[rows]) for rows in blocks]
    assert factors[0].shape == (3, n_grades + 1)
    np.testing.assert_allclose(relevance_weights_from_factors(factors, n_rows), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"criterion": "variance"}, "a class criterion"),
        ({"leaf_score": "mean"}, "leaf_score='expected'"),
        ({"query_subsample": 1.0}, "rows left out of the trees"),
    ],
)
def test_fitted_relevance_weights_refuse_forests_they_cannot_weigh(data, params, message):
    X, y, qid = data
    with pytest.raises(ValueError, match=message):
        RFPointRanker(n_estimators=2, relevance_weights="fitted", **params).fit(X, y, qid=qid)


def test_fitted_relevance_weights_of_a_warm_start_on_other_rows_are_finite(data):
    """The earlier trees' nodes that none of the new rows reaches had a grade distribution
    of 0 / 0, whose NaN made the least squares fail ("SVD did not converge"); such a node
    takes its parent's distribution, so every node value stays a weighted mean of the
    fitted weights."""
    X, y, qid = data
    first, second = qid < np.median(qid), qid >= np.median(qid)
    model = RFPointRanker(n_estimators=4, relevance_weights="fitted", warm_start=True, random_state=0)
    model.fit(X[first], y[first], qid=qid[first])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model.set_params(n_estimators=8).fit(X[second], y[second], qid=qid[second])
    values = np.concatenate([tree.values for tree in model.trees_])
    weights = model.relevance_weights_
    assert np.isfinite(values).all() and np.isfinite(weights).all()
    assert weights.min() - 1e-9 <= values.min() and values.max() <= weights.max() + 1e-9


def test_a_refit_without_a_class_criterion_drops_the_earlier_fits_classes(data):
    """classes_ of an entropy fit survived a refit with criterion='variance' on other
    grades, which a fresh variance fit does not have."""
    X, y, qid = data
    model = RFPointRanker(n_estimators=2, random_state=0).fit(X, y, qid=qid)
    assert hasattr(model, "classes_")
    model.set_params(criterion="variance").fit(X, np.minimum(y, 1), qid=qid)
    assert not hasattr(model, "classes_")

def test_regression_forest_accepts_real_labels_and_class_criteria_require_grades(data):
    X, y, qid = data
    real = y + 0.25
    RFPointRanker(n_estimators=3, criterion="variance", max_features=0.1, bootstrap=True, sample_level="document").fit(X, real, qid=qid)
    with pytest.raises(ValueError, match="y must hold integer relevance grades"):
        RFPointRanker(n_estimators=3).fit(X, real, qid=qid)


def test_feature_importances(data):
    X, y, qid = data
    ranker = RFPointRanker(n_estimators=20, random_state=0).fit(X, y, qid=qid)
    importances = ranker.feature_importances_
    assert importances.shape == (10,) and importances.sum() == pytest.approx(1.0) and (importances >= 0).all()
    noise = np.column_stack([X, np.random.default_rng(0).normal(size=len(y))])
    with_noise = RFPointRanker(n_estimators=20, random_state=0).fit(noise, y, qid=qid).feature_importances_
    assert with_noise[-1] < with_noise[:-1].max()


def test_leaf_budget_and_depth_parameters(data):
    X, y, qid = data
    ranker = RFPointRanker(n_estimators=4, max_leaf_nodes=9, expansion="best", max_depth=6, random_state=0).fit(X, y, qid=qid)
    assert all(tree.n_leaves <= 9 and tree.max_depth <= 6 for tree in ranker.trees_)
    fractions = RFPointRanker(n_estimators=2, min_samples_leaf=0.05, min_samples_split=0.2, random_state=0).fit(X, y, qid=qid)
    tree = fractions.trees_[0]
    n_rows = tree.n_node_samples[0]
    assert tree.n_node_samples[tree.nodes["feature"] < 0].min() >= np.ceil(0.05 * n_rows)


def test_verbose_reports_progress(data, capsys):
    X, y, qid = data
    RFPointRanker(n_estimators=10, verbose=1, random_state=0).fit(X, y, qid=qid)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith("RFPointRanker: 10/10 trees")


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"criterion": "mse"}, "'criterion' parameter of RFPointRanker"),
        ({"max_features": "all"}, "'max_features' parameter of RFPointRanker"),
        ({"query_subsample": 0.0}, "'query_subsample' parameter of RFPointRanker"),
        ({"expansion": "deepest"}, "'expansion' parameter of RFPointRanker"),
        ({"max_bins": 256}, "'max_bins' parameter of RFPointRanker"),
        ({"n_estimators": 0}, "'n_estimators' parameter of RFPointRanker"),
        ({"oob_score": True, "query_subsample": 1.0}, "oob_score=True needs rows left out of trees"),
        ({"max_features": 11}, "max_features=11 is more than the 10 features of X"),
        ({"cost_penalty": 0.5}, "cost_penalty=0.5 needs feature_costs"),
    ],
)
def test_bad_parameters_name_themselves(data, params, match):
    X, y, qid = data
    with pytest.raises(ValueError, match=match):
        RFPointRanker(**params).fit(X, y, qid=qid)


@pytest.mark.parametrize("estimator", [RFPointRanker, RFListRanker, RFHybridRanker], ids=lambda e: e.__name__)
@pytest.mark.parametrize("params", [{}, {"bootstrap": True}, {"sample_level": "document"}])
def test_rows_of_zero_weight_are_as_if_absent(estimator, params):
    """A tree drew its sample among every query, so one of zero-weight queries only had no
    weighted row and the fit raised ZeroDivisionError in half of the seeds."""
    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    kept = q < 4
    for seed in range(6):
        weighted = estimator(n_estimators=5, random_state=seed, **params)
        weighted.fit(X, y, qid=q, sample_weight=kept.astype(float))
        dropped = estimator(n_estimators=5, random_state=seed, **params).fit(X[kept], y[kept], qid=q[kept])
        np.testing.assert_array_equal(weighted.predict(X), dropped.predict(X))
    only_one = estimator(n_estimators=5, random_state=0, **params).fit(X, y, qid=q, sample_weight=(q == 0) * 1.0)
    assert all(tree.weighted_n_node_samples[0] > 0 for tree in only_one.trees_)


@pytest.mark.parametrize(
    "estimator",
    [
        RFPointRanker(n_estimators=5, random_state=0),
        RFPointRanker(n_estimators=5, criterion="variance", min_samples_leaf=4, random_state=0),
        RFListRanker(n_estimators=5, random_state=0),
        RFHybridRanker(n_estimators=5, random_state=0),
        LambdaMART(n_estimators=5, random_state=0),
    ],
    ids=repr,
)
def test_scaling_every_weight_by_a_constant_changes_no_model(estimator):
    """Weight thresholds were in absolute units: weights 1/n gave constant listwise forests,
    and weights near 1e300 overflowed. The weights and scales here are exact in float64
    (small integers, powers of two), so the rescaled weights are bitwise equal."""
    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    n = len(y)
    unit = clone(estimator).fit(X, y, qid=q).predict(X)
    np.testing.assert_array_equal(clone(estimator).fit(X, y, qid=q, sample_weight=np.full(n, 1 / n)).predict(X), unit)
    assert len(np.unique(unit)) > 20
    weights = np.random.default_rng(0).integers(1, 5, n).astype(float)
    reference = clone(estimator).fit(X, y, qid=q, sample_weight=weights).predict(X)
    assert not np.array_equal(reference, unit)
    for scale in (2.0**-1000, 3.0, 7.0, 2.0**1000):
        scaled = clone(estimator).fit(X, y, qid=q, sample_weight=weights * scale).predict(X)
        np.testing.assert_array_equal(scaled, reference)


def test_a_warm_start_with_no_more_trees_warns_and_changes_nothing(data):
    X, y, qid = data
    forest = RFPointRanker(n_estimators=3, warm_start=True, random_state=0).fit(X, y, qid=qid)
    trees = list(forest.trees_)
    with pytest.warns(UserWarning, match="warm_start=True with n_estimators=3, the number of trees already fitted"):
        forest.fit(X, y, qid=qid)
    assert all(a is b for a, b in zip(forest.trees_, trees, strict=True))


@pytest.mark.parametrize("setting", [{"oob_score": True}, {"relevance_weights": "fitted"}])
def test_out_of_bag_needs_on_a_single_query_point_to_document_sampling(setting):
    """With one query every query draw takes it: the errors advised lowering
    query_subsample or bootstrapping, which change nothing; sampling documents works."""
    X, y, qid = make_ranking(n_queries=1, random_state=0)
    for tried in ({}, {"query_subsample": 0.01}, {"bootstrap": True}):
        with pytest.raises(ValueError, match=r"with a single query, which every query draw takes, sample documents: sample_level='document'"):
            RFPointRanker(n_estimators=5, random_state=0, **setting, **tried).fit(X, y, qid=qid)
    RFPointRanker(n_estimators=5, sample_level="document", random_state=0, **setting).fit(X, y, qid=qid)


def test_random_cuts_are_drawn_alike_on_a_feature_spanning_past_float64s_largest():
    """RF-rand's cut ``low + u (high - low)``: a range past float64's largest made it inf,
    and every tree peeled the top value off. Scaled by a power of two the draws are the same."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-15, 15, size=(200, 1))
    y, qid = rng.integers(0, 3, 200), np.repeat(np.arange(20), 10)
    sides = []
    for scale in (1.0, 2.0**1020):  # the scaled values are finite; their range is not
        forest = RFPointRanker(n_estimators=20, criterion="random", random_state=0).fit(X * scale, y, qid=qid)
        sides.append([int((X[:, 0] * scale > tree.nodes["threshold"][0]).sum()) for tree in forest.trees_])
    assert sides[0] == sides[1]


def test_random_cuts_must_beat_a_positive_min_gain_to_split(data):
    """RF-rand returned its drawn cut before the floor was read: min_gain_to_split=1e6 grew
    the same trees as 0. A positive floor prunes the drawn cuts as the searched ones; at 0
    every drawn cut stands, as RF-rand's."""
    X, y, qid = data
    nodes = {
        floor: [tree.node_count for tree in RFPointRanker(
            n_estimators=3, criterion="random", min_gain_to_split=floor, random_state=0
        ).fit(X, y, qid=qid).trees_]
        for floor in (0.0, 1e-3, 1e6)
    }  # fmt: skip
    assert nodes[1e6] == [1, 1, 1]
    assert all(a > b > 1 for a, b in zip(nodes[0.0], nodes[1e-3])), nodes
    searched = RFPointRanker(n_estimators=3, criterion="entropy", min_gain_to_split=1e6, random_state=0).fit(X, y, qid=qid)
    assert [tree.node_count for tree in searched.trees_] == nodes[1e6]


def test_random_cuts_send_missing_values_as_the_docs_say(data):
    """RF-rand's docs said its splits send missing values right unless 'left'; under 'learn'
    a node without missing training rows sends them to its heavier child, as the docs now
    say, and 'right' always sends them right."""
    X, y, qid = data
    X = X.copy()
    X[np.random.default_rng(0).random(X.shape) < 0.02] = np.nan
    for direction in ("learn", "right"):
        tree = RFPointRanker(
            n_estimators=1, criterion="random", missing_direction=direction, query_subsample=1.0, random_state=0
        ).fit(X, y, qid=qid).trees_[0]  # every row trains the tree
        feature, left = tree.nodes["feature"], tree.nodes["left"]
        rows_at = {0: np.arange(len(X))}
        missing_seen = {}
        for node in np.flatnonzero(feature >= 0):  # a parent comes before its children
            values = X[rows_at[node], feature[node]]
            missing_seen[node] = bool(np.isnan(values).any())
            goes_left = tree.goes_left(node, values)
            rows_at[left[node]], rows_at[left[node] + 1] = rows_at[node][goes_left], rows_at[node][~goes_left]
        for node, seen in missing_seen.items():
            heavier_left = tree.weighted_n_node_samples[left[node]] >= tree.weighted_n_node_samples[left[node] + 1]
            expected = 0 if direction == "right" or seen else int(heavier_left)
            assert tree.missing_left[node] == expected, (direction, node, seen)
        assert any(missing_seen.values()) and not all(missing_seen.values())


@pytest.mark.parametrize("relevance_weights", ["square", "exp", "fitted"])
def test_relevance_weights_beside_mean_leaves_are_refused_by_name(data, relevance_weights):
    """A 'mean' leaf averages the labels: 'square' and 'exp' were accepted and changed
    nothing (and a warm start switching them was refused for scales the leaves never had)."""
    X, y, qid = data
    model = RFPointRanker(n_estimators=2, leaf_score="mean", relevance_weights=relevance_weights, random_state=0)
    with pytest.raises(ValueError, match=rf"relevance_weights='{relevance_weights}' weighs the grades of leaf_score='expected' leaves"):
        model.fit(X, y, qid=qid)
    RFPointRanker(n_estimators=2, leaf_score="expected", relevance_weights=relevance_weights, bootstrap=True, random_state=0).fit(X, y, qid=qid)
