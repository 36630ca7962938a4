"""LambdaMART and PLRank: the boosting loop, early stopping, the scikit-learn contract."""

import pickle
import re
import warnings

import numpy as np
import pytest
import scipy.stats
import sklearn
import sklearn.dummy
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from forestrank import (
    AveragedRanker,
    LambdaMART,
    MissingQidWarning,
    PLRank,
    QueryKFold,
    QueryShuffleSplit,
    RFPointRanker,
    make_ranking,
    ndcg_score,
    ndcg_scorer,
)
from assertions import run_estimator_check
from forestrank.estimator_checks import expected_failed_checks


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=150, docs_per_query=(5, 40), n_features=10, random_state=0)


def boundaries_of(qid):
    return np.concatenate(([0], np.cumsum(np.unique(qid, return_counts=True)[1]))).astype(np.int64)


def test_newton_and_squared_split_gains_grow_the_same_trees_for_the_squared_loss(data):
    """Theorem 2 of the OLE paper: with h = 1 the Newton gain and the least-squares fit of
    the residuals rank every split identically, so the boosted models coincide."""
    X, y, qid = data
    models = [
        LambdaMART(n_estimators=15, objective="mart", split_gain=gain, random_state=0).fit(X, y, qid=qid)
        for gain in ("newton", "squared")
    ]
    for a, b in zip(models[0].trees_, models[1].trees_):
        np.testing.assert_array_equal(a.nodes["feature"], b.nodes["feature"])
        np.testing.assert_array_equal(a.nodes["left"], b.nodes["left"])
    np.testing.assert_allclose(models[0].predict(X), models[1].predict(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("objective", ["mart", "cumulative"])
def test_the_starting_constant_minimises_the_weighted_loss(data, objective):
    """With ``sample_weight`` the constant the boosting starts from is the weighted mean
    target (LightGBM's ``boost_from_average``, scikit-learn's least squares): a query of
    weight 2 starts the fit where the query given twice does. It was the unweighted mean."""
    X, y, qid = data
    heavy = qid < np.unique(qid)[len(np.unique(qid)) // 3]
    weights = np.where(heavy, 2.0, 1.0)
    weighted = LambdaMART(n_estimators=1, objective=objective, random_state=0).fit(X, y, qid=qid, sample_weight=weights)
    twice = LambdaMART(n_estimators=1, objective=objective, random_state=0).fit(
        np.vstack([X, X[heavy]]), np.concatenate([y, y[heavy]]), qid=np.concatenate([qid, qid[heavy] + qid.max() + 1])
    )  # fmt: skip
    np.testing.assert_allclose(weighted.baseline_, twice.baseline_, rtol=1e-12)
    if objective == "mart":
        assert weighted.baseline_[0] == pytest.approx(np.average(y, weights=weights), rel=1e-12)
        assert weighted.baseline_[0] != pytest.approx(y.mean(), rel=1e-6)
    else:  # the weighted share of rows at or below each grade
        grades = np.unique(y)[:-1]
        np.testing.assert_allclose(weighted.baseline_, [np.average(y <= grade, weights=weights) for grade in grades], rtol=1e-12)


def test_the_weight_checks_mart_is_expected_to_fail_follow_its_sampling():
    """With the weighted start, MART passes scikit-learn's sample-weight equivalence checks
    (rows alike with weight 2 and repeated); drawing documents one by one draws a repeated
    row apart from its copy, so it is expected to fail them then."""
    weight_checks = {"check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data"}
    assert expected_failed_checks(LambdaMART(objective="mart", subsample=0.5)) == {}
    for sampled in ({"subsample": 0.5}, {"bagging_temperature": 1.0}):
        failures = expected_failed_checks(LambdaMART(objective="mart", subsample_level="document", **sampled))
        assert set(failures) == weight_checks and "sub-sampling draws a repeated row" in failures[min(weight_checks)]


def test_mart_first_tree_is_a_least_squares_fit_of_the_grades(data):
    X, y, qid = data
    model = LambdaMART(n_estimators=1, objective="mart", learning_rate=1.0, random_state=0).fit(X, y, qid=qid)
    assert model.baseline_[0] == pytest.approx(y.mean())
    leaves = model.trees_[0].apply(X)
    for leaf in np.unique(leaves):  # learning rate 1: each leaf predicts its rows' mean grade
        rows = leaves == leaf
        assert model.predict(X[rows][:1])[0] == pytest.approx(y[rows].mean())


@pytest.mark.parametrize(("objective", "lightgbm_objective"), [("lambdarank", "lambdarank"), ("xendcg", "rank_xendcg")])
def test_lambdamart_matches_lightgbm_quality(data, objective, lightgbm_objective):
    lightgbm = pytest.importorskip("lightgbm")
    X, y, qid = make_ranking(n_queries=400, docs_per_query=(10, 40), n_features=20, random_state=1)
    train, test = next(QueryShuffleSplit(1, test_size=0.3, random_state=0).split(X, qid=qid))
    ours = LambdaMART(n_estimators=60, objective=objective, learning_rate=0.1, random_state=0)
    ours.fit(X[train], y[train], qid=qid[train])
    order = np.argsort(qid[train], kind="stable")
    theirs = lightgbm.LGBMRanker(
        objective=lightgbm_objective, n_estimators=60, learning_rate=0.1, verbose=-1, random_state=0
    ).fit(X[train][order], y[train][order], group=np.unique(qid[train], return_counts=True)[1])
    ours_scores, theirs_scores = ours.predict(X[test]), theirs.predict(X[test])
    ours_ndcg = ndcg_score(y[test], ours_scores, qid=qid[test], k=10)
    theirs_ndcg = ndcg_score(y[test], theirs_scores, qid=qid[test], k=10)
    assert abs(ours_ndcg - theirs_ndcg) < 0.02, (ours_ndcg, theirs_ndcg)
    # The same loss ranks the test documents alike: least squares (objective="mart") comes
    # within the NDCG tolerance too, but its scores' rank correlation with either of
    # LightGBM's models is 0.94 where the matching objective's is 0.97.
    assert scipy.stats.spearmanr(ours_scores, theirs_scores)[0] > 0.96


def test_plrank_fits_and_lowers_its_likelihood_loss(data):
    X, y, qid = data
    model = PLRank(n_estimators=30, top_k=5, random_state=0).fit(X, y, qid=qid)
    objective = model._make_objective()
    objective.prepare(y, boundaries_of(qid))
    order = np.argsort(qid, kind="stable")
    assert np.array_equal(order, np.arange(len(qid)))  # make_ranking rows are grouped
    losses = [objective.loss(stage) for stage in model.staged_predict(X)]
    assert losses[-1] < 0.9 * objective.loss(np.zeros(len(y)))
    assert all(b <= a + 1e-9 for a, b in zip(losses, losses[1:]))  # Newton steps of shrunk size descend
    with pytest.raises(ValueError, match="sample_weight constant within each query"):
        PLRank(n_estimators=2).fit(X, y, qid=qid, sample_weight=np.arange(len(y)) % 2 + 1.0)


def test_mcrank_grows_one_tree_per_grade_and_ranks_by_expected_relevance(data):
    X, y, qid = data
    grades = np.unique(y)
    model = LambdaMART(n_estimators=8, objective="mcrank", random_state=0).fit(X, y, qid=qid)
    assert model.n_outputs_ == len(grades) and len(model.trees_) == 8 * len(grades) and model.n_iter_ == 8
    np.testing.assert_array_equal(model.classes_, grades)
    prediction = model.predict(X)
    raw = np.column_stack([sum(tree.predict(X) for tree in model.trees_[k :: len(grades)]) for k in range(len(grades))])
    probabilities = np.exp(raw) / np.exp(raw).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(prediction, probabilities @ grades, rtol=1e-10)
    stages = list(model.staged_predict(X))
    assert len(stages) == 8
    np.testing.assert_allclose(stages[-1], prediction, rtol=1e-12)
    assert ndcg_score(y, prediction, qid=qid, k=10) > ndcg_score(y, stages[0], qid=qid, k=10)
    stopped = LambdaMART(n_estimators=300, objective="mcrank", learning_rate=0.5, n_iter_no_change=3, random_state=0)
    stopped.fit(X, y, qid=qid)
    assert len(stopped.trees_) == stopped.best_iteration_ * len(grades) < 300 * len(grades)
    with pytest.raises(ValueError, match="init is not supported"):
        LambdaMART(objective="mcrank", init=RFPointRanker(n_estimators=2)).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="integer"):
        LambdaMART(objective="mcrank").fit(X, y + 0.5, qid=qid)


@pytest.mark.parametrize("objective", ["mcrank", "cumulative"])
def test_an_expected_grade_does_not_depend_on_the_batch_its_document_came_in(data, objective):
    """The expected grade was a matrix product, whose BLAS kernel rounds differently for
    one row and for many: a document scored alone and in a batch differed in the last
    bit for about one document in six."""
    X, y, qid = data
    model = LambdaMART(n_estimators=20, objective=objective, random_state=0).fit(X, y, qid=qid)
    batch = model.predict(X)[:300]
    alone = np.concatenate([model.predict(X[row : row + 1]) for row in range(300)])
    np.testing.assert_array_equal(alone, batch)


@pytest.mark.parametrize(
    "params",
    [
        {"objective": "cumulative"}, {"objective": "mcrank"}, {"objective": "mart"},
        {"objective": "mart", "init": RFPointRanker(n_estimators=3, random_state=0)}, {},
    ],
    ids=["cumulative", "mcrank", "mart", "mart-init", "lambdarank"],
)
def test_the_last_stage_is_predict_bit_for_bit(data, params):
    """staged_predict added the trees to the baseline one by one, predict added their sum:
    cumulative boosting's last stage differed from predict by 1e-15."""
    X, y, qid = data
    model = LambdaMART(n_estimators=7, random_state=0, **params).fit(X, y, qid=qid)
    np.testing.assert_array_equal(list(model.staged_predict(X))[-1], model.predict(X))


def test_staged_predict_and_evals_result_are_consistent(data):
    X, y, qid = data
    train, test = next(QueryShuffleSplit(1, test_size=0.3, random_state=0).split(X, qid=qid))
    model = LambdaMART(n_estimators=12, random_state=0).fit(
        X[train], y[train], qid=qid[train], eval_set=[(X[test], y[test], qid[test])]
    )
    stages = list(model.staged_predict(X[test]))
    assert len(stages) == model.n_iter_ == 12
    np.testing.assert_allclose(stages[-1], model.predict(X[test]), rtol=1e-12)
    curve = [ndcg_score(y[test], stage, qid=qid[test], k=10) for stage in stages]
    np.testing.assert_allclose(model.evals_result_["valid_0"]["ndcg@10"], curve, rtol=1e-12)


@pytest.mark.parametrize("subsample", [1.0, 0.5])
def test_the_training_scores_are_the_predictions_also_for_the_rows_a_tree_left_out(data, subsample):
    """Every tree is added to the training scores: its leaf values to the rows it was grown on,
    its predictions to the rows ``subsample`` left out. The training NDCG, read from those
    scores when verbose, then equals the NDCG of the training rows scored as an eval set."""
    X, y, qid = data
    model = LambdaMART(n_estimators=6, subsample=subsample, verbose=100, random_state=0).fit(
        X, y, qid=qid, eval_set=[(X, y, qid)]
    )  # fmt: skip
    assert model.evals_result_["train"]["ndcg@10"] == model.evals_result_["valid_0"]["ndcg@10"]


def test_early_stopping_stops_and_keeps_the_best_iteration(data):
    X, y, qid = data
    model = LambdaMART(
        n_estimators=400, learning_rate=0.5, n_iter_no_change=5, validation_fraction=0.3, random_state=0
    ).fit(X, y, qid=qid)
    curve = model.evals_result_["validation"]["ndcg@10"]
    assert model.n_iter_ == model.best_iteration_ < 400
    assert len(curve) == model.best_iteration_ + 5
    assert max(curve) == curve[model.best_iteration_ - 1]
    assert len(model.trees_) == model.best_iteration_


@pytest.mark.parametrize("grade", [0, 2])
def test_early_stopping_on_a_set_ndcg_cannot_rank_is_refused(data, grade):
    """Queries whose documents share one grade have NDCG 1 (or the no-relevant value)
    under any ranking: stopping on them kept the first tree silently."""
    X, y, qid = data
    flat = np.full(len(y), grade)
    model = LambdaMART(n_estimators=30, n_iter_no_change=3)
    with pytest.raises(ValueError, match=r"none of whose \d+ queries holds two grades of different gain.*n_iter_no_change=None"):
        model.fit(X, y, qid=qid, eval_set=[(X, y, qid), (X, flat, qid)])
    with pytest.raises(ValueError, match="the validation_fraction hold-out"):
        PLRank(n_estimators=30, n_iter_no_change=3).fit(X, flat, qid=qid)
    # Only the deciding (last) set must rank; one graded query in it is enough.
    one_graded = np.where(qid == qid[0], y, grade)
    model.fit(X, y, qid=qid, eval_set=[(X, flat, qid), (X, one_graded, qid)])
    assert model.n_iter_ >= 1 and len(model.evals_result_["valid_1"]["ndcg@10"]) > model.n_iter_


def test_early_stopping_on_a_set_whose_graded_queries_weigh_nothing_is_refused(data, held_out_queries):
    """Queries of weight 0 count for nothing in the set's NDCG: with weight only on queries
    of one grade, early stopping kept one tree without a word; a hold-out drawn among
    queries of weight 0 alone failed after the first tree, calling NDCG a NaN metric."""
    X, y, qid = data
    graded = np.array([len(np.unique(y[qid == q])) > 1 for q in qid])
    assert graded.any() and not graded.all()
    model = LambdaMART(n_estimators=30, n_iter_no_change=3, random_state=0)
    with pytest.raises(ValueError, match=r"none of whose \d+ queries holds two grades of different gain and a positive "
                       r"sample_weight.*relevant and non-relevant documents of positive weight"):
        model.fit(X, y, qid=qid, eval_set=[(X, y, qid, np.where(graded, 0.0, 1.0))])
    model.fit(X, y, qid=qid, eval_set=[(X, y, qid, np.where(graded, 1.0, 0.0))])
    assert len(model.evals_result_["valid_0"]["ndcg@10"]) > 1
    held = LambdaMART(n_estimators=2, n_iter_no_change=3, validation_fraction=0.2, random_state=0)
    held.fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="zero everywhere on the queries the validation_fraction hold-out draws"):
        held.fit(X, y, qid=qid, sample_weight=np.where(np.isin(qid, held_out_queries[0]), 0.0, 1.0))


def test_early_stopping_on_grades_label_gain_gives_one_gain_is_refused(data):
    """Grades 0 and 1 of gain 0 each (``label_gain=[0, 0, 1]``) rank nothing: NDCG was 0 at
    every iteration and early stopping kept the first tree silently."""
    X, y, qid = data
    y = np.minimum(y, 2)
    model = LambdaMART(n_estimators=30, label_gain=[0, 0, 1], n_iter_no_change=3, random_state=0)
    with pytest.raises(ValueError, match=r"none of whose \d+ queries holds two grades of different gain"):
        model.fit(X, y, qid=qid, eval_set=[(X, np.minimum(y, 1), qid)])
    model.fit(X, y, qid=qid, eval_set=[(X, y, qid)])  # grade 2 gains
    assert len(model.evals_result_["valid_0"]["ndcg@10"]) > 1


def test_serial_and_threaded_fits_are_bitwise_identical(data):
    X, y, qid = data
    predictions = [
        LambdaMART(n_estimators=10, subsample=0.7, random_state=3, n_jobs=n_jobs).fit(X, y, qid=qid).predict(X)
        for n_jobs in (1, 2)
    ]
    np.testing.assert_array_equal(predictions[0], predictions[1])


def test_subsampling_and_feature_sampling_change_the_model_reproducibly(data):
    """Each tree grows on the sample drawn for its iteration (half of the queries, or of
    the rows) or examines half of the features at a node, reproducibly."""
    X, y, qid = data
    query_sizes = np.unique(qid, return_counts=True)[1]
    plain = LambdaMART(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    for params in ({"subsample": 0.5}, {"subsample": 0.5, "subsample_level": "document"}, {"max_features": 0.5}):
        first = LambdaMART(n_estimators=5, random_state=0, **params).fit(X, y, qid=qid)
        again = LambdaMART(n_estimators=5, random_state=0, **params).fit(X, y, qid=qid)
        np.testing.assert_array_equal(first.predict(X), again.predict(X))
        assert not np.allclose(first.predict(X), plain.predict(X))
        roots = [tree.n_node_samples[0] for tree in first.trees_]
        if "subsample" not in params:
            assert roots == [len(y)] * 5
        elif params.get("subsample_level") == "document":
            assert roots == [round(0.5 * len(y))] * 5
        else:  # whole queries: every root holds some 75 of the 150 queries, and not always the same ones
            query_of_row = np.repeat(np.arange(len(query_sizes)), query_sizes)
            masks = [first._subsample_mask(iteration, query_of_row) > 0 for iteration in range(5)]
            assert roots == [int(mask.sum()) for mask in masks]
            assert all(len(np.unique(query_of_row[mask])) == 75 for mask in masks)
            assert len({roots[0], *roots}) > 1


def test_init_model_starts_the_boosting(data):
    """IGBRT (Mohan §2.4): predictions are the forest's plus the boosted trees'."""
    X, y, qid = data
    forest = RFPointRanker(n_estimators=10, random_state=0).fit(X, y, qid=qid)
    model = LambdaMART(n_estimators=5, init=forest, random_state=0).fit(X, y, qid=qid)
    assert model.init_ is forest
    trees_only = sum(tree.predict(X) for tree in model.trees_)
    np.testing.assert_allclose(model.predict(X), forest.predict(X) + trees_only, rtol=1e-12)
    unfitted = RFPointRanker(n_estimators=10, random_state=0)
    refit = LambdaMART(n_estimators=5, init=unfitted, random_state=0).fit(X, y, qid=qid)
    assert not hasattr(unfitted, "trees_") and hasattr(refit.init_, "trees_")
    np.testing.assert_allclose(refit.predict(X), model.predict(X), rtol=1e-12)


def test_an_init_fitted_on_a_frame_reads_the_fits_columns_by_name(data):
    """An init fitted on a DataFrame got the fit's rows as an array, by position: a frame of
    the same columns in another order was misread without a word (scores off by 2 here),
    and the same order warned on every fit and predict that X had no feature names."""
    pd = pytest.importorskip("pandas")
    X, y, qid = data
    frame = pd.DataFrame(X, columns=[f"f{index}" for index in range(X.shape[1])])
    forest = RFPointRanker(n_estimators=5, random_state=0).fit(frame, y, qid=qid)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = LambdaMART(n_estimators=3, init=forest, random_state=0).fit(frame, y, qid=qid)
        trees_only = sum(tree.predict(X) for tree in model.trees_)
        np.testing.assert_allclose(model.predict(frame), forest.predict(frame) + trees_only, rtol=1e-12)
        # another library's init, without a warnings filter (not thread-safe): handed a frame of its names
        from sklearn.linear_model import Ridge

        ridge = Ridge().fit(frame, y)
        model = LambdaMART(n_estimators=3, init=ridge, random_state=0).fit(frame, y, qid=qid)
        trees_only = sum(tree.predict(X) for tree in model.trees_)
        np.testing.assert_allclose(model.predict(frame), ridge.predict(frame) + trees_only, rtol=1e-12)
        # ... and one wrapped in forestrank's: the wrapper hands it a frame of its names too
        from sklearn.base import BaseEstimator
        from sklearn.utils.validation import validate_data

        from forestrank import CalibratedRanker

        class LeastSquares(BaseEstimator):  # another library's ranker: its own name check
            def fit(self, X, y, qid=None):
                X, y = validate_data(self, X, y)
                self.coef_ = np.linalg.lstsq(X, y, rcond=None)[0]
                return self

            def predict(self, X):
                return validate_data(self, X, reset=False) @ self.coef_

        wrapped = CalibratedRanker(LeastSquares(), cv=2).fit(frame, y, qid=qid)
        model = LambdaMART(n_estimators=3, init=wrapped, random_state=0).fit(frame, y, qid=qid)
        trees_only = sum(tree.predict(X) for tree in model.trees_)
        np.testing.assert_allclose(model.predict(frame), wrapped.predict(frame) + trees_only, rtol=1e-12)
    with pytest.raises(ValueError, match="init was fitted on the columns .* give X the init's columns in the init's order"):
        LambdaMART(n_estimators=3, init=forest).fit(frame[frame.columns[::-1]], y, qid=qid)


def test_an_unfitted_init_is_fitted_with_the_sample_weight(data):
    """scikit-learn's gradient boosting fits its ``init`` with the rows' weights as given
    (not rescaled to the fit's unit of weight, whose scale a ridge's penalty reads); an
    init whose ``fit`` takes none is refused when weights are given, not fitted without them."""
    from sklearn.linear_model import Ridge
    from sklearn.neighbors import KNeighborsRegressor
    from sklearn.tree import DecisionTreeRegressor

    X, y, qid = data
    assert np.all(np.diff(qid) >= 0)  # rows grouped by query already: the fit keeps their order
    weights = np.random.default_rng(0).uniform(0.5, 4.0, len(y))  # the lightest is no power of two
    inits = (DecisionTreeRegressor(max_depth=3, random_state=0), Ridge(alpha=100.0), RFPointRanker(n_estimators=4, random_state=0))
    for init in inits:
        model = LambdaMART(n_estimators=2, init=init, random_state=0).fit(X, y, qid=qid, sample_weight=weights)
        takes_qid = {"qid": qid} if isinstance(init, RFPointRanker) else {}
        expected = clone(init).fit(X, y, sample_weight=weights, **takes_qid)
        unweighted = clone(init).fit(X, y, **takes_qid)
        assert not np.array_equal(expected.predict(X), unweighted.predict(X))  # the weights matter to this init
        np.testing.assert_array_equal(model.init_.predict(X), expected.predict(X))
    LambdaMART(n_estimators=2, init=KNeighborsRegressor()).fit(X, y, qid=qid)  # no weights: nothing to pass
    with pytest.raises(ValueError, match=r"init: KNeighborsRegressor's fit takes no sample_weight"):
        LambdaMART(n_estimators=2, init=KNeighborsRegressor()).fit(X, y, qid=qid, sample_weight=weights)


def test_an_unfitted_init_is_fitted_with_the_callers_query_ids():
    """It was handed each query's position (0, 1, ...), not its id: an objective of the ids
    (or any init that reads them) saw other queries than a fit of its own."""
    X, y, qid = make_ranking(n_queries=5, docs_per_query=8, n_features=3, random_state=0)
    qid = (qid * 100 + 7)[::-1]  # ids far from positions, rows not grouped
    seen = []

    def squared_error(labels, scores, query_boundaries, query_ids):
        seen.append(np.asarray(query_ids).copy())
        return scores - labels, np.ones(len(scores))

    init = LambdaMART(n_estimators=1, objective=squared_error, random_state=0)
    LambdaMART(n_estimators=1, init=init, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(seen[0], np.unique(qid))



def test_a_pipeline_init_gets_the_query_ids_and_weights_its_steps_request(data):
    """A Pipeline init was fitted without qid (its ranker took every row as one query)
    even under metadata routing, and given sample_weight without it (scikit-learn's
    error, naming no init)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        pipeline = make_pipeline(StandardScaler(), RFPointRanker(n_estimators=3, random_state=0).set_fit_request(qid=True))
        model = LambdaMART(n_estimators=2, init=pipeline, random_state=0).fit(X, y, qid=qid)
        expected = clone(pipeline).fit(X, y, qid=qid)
    np.testing.assert_array_equal(model.init_.predict(X), expected.predict(X))
    weights = np.random.default_rng(0).uniform(0.5, 4.0, len(y))
    with pytest.raises(ValueError, match=r"init: Pipeline's fit takes no sample_weight"):
        LambdaMART(n_estimators=2, init=make_pipeline(StandardScaler(), RFPointRanker(n_estimators=3))).fit(
            X, y, qid=qid, sample_weight=weights
        )


def test_an_unfitted_init_that_debiases_clicks_is_refused_by_name(data):
    """Its fit needs the positions, which an init is not given: the error said the outer
    fit had no position although it was given one."""
    X, y, qid = data
    position = np.concatenate([np.arange(1, n + 1) for n in np.unique(qid, return_counts=True)[1]])
    init = LambdaMART(n_estimators=2, position_bias="unbiased")
    with pytest.raises(ValueError, match=r"init: this LambdaMART has position_bias='unbiased'.*pass it fitted"):
        LambdaMART(n_estimators=2, init=init).fit(X, y, qid=qid)
    fitted = clone(init).fit(X, y, qid=qid, position=position)
    LambdaMART(n_estimators=2, init=fitted).fit(X, y, qid=qid)

@pytest.mark.parametrize("kind", ["two columns", "nan", "inf"])
def test_an_init_whose_predictions_are_no_finite_score_per_row_is_refused_by_name(data, kind):
    """Two columns a row were read as twice the rows (the compiled loop crashed); NaN or
    inf were blamed on learning_rate as diverged scores."""
    from sklearn.linear_model import LinearRegression

    X, y, qid = data
    if kind == "two columns":
        init = LinearRegression().fit(X, np.column_stack([y, -y]))
        match = r"init: LinearRegression.predict returned scores of shape \(\d+, 2\)"
    else:
        init = LinearRegression().fit(X, y)
        init.intercept_ = np.nan if kind == "nan" else np.inf
        match = r"init: LinearRegression.predict returned NaN or inf for \d+ of \d+ rows"
    for objective in ("mart", "lambdarank"):
        with pytest.raises(ValueError, match=match):
            LambdaMART(n_estimators=2, objective=objective, init=init).fit(X, y, qid=qid)


def test_pickle_and_clone_round_trip(data):
    X, y, qid = data
    model = LambdaMART(n_estimators=6, random_state=0).fit(X, y, qid=qid)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    fresh = clone(model)
    assert fresh.get_params() == model.get_params() and not hasattr(fresh, "trees_")


def test_gridsearch_over_learning_rate(data):
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("error", MissingQidWarning)
        search = GridSearchCV(
            LambdaMART(n_estimators=10, random_state=0), {"learning_rate": [0.05, 0.3]}, cv=QueryKFold(3),
            scoring=ndcg_scorer(10),
        )  # fmt: skip
        search.fit(X, y, qid=qid)
    assert len(search.cv_results_["params"]) == 2
    assert 0.0 < search.best_score_ <= 1.0


def test_bad_arguments_name_themselves(data):
    X, y, qid = data
    # LightGBM's (X, y) with eval_group apart: the message said "must be ... tuples; got tuple"
    with pytest.raises(ValueError, match=r"eval_set \(valid_0\): each item must be \(X, y, qid\) or \(X, y, qid, sample_weight\).* got a tuple of 2 item"):
        LambdaMART(n_estimators=2).fit(X, y, qid=qid, eval_set=[(X, y)])
    with pytest.raises(ValueError, match=r"eval_set \(valid_1\): eval_set is a list of \(X, y, qid\) tuples, one per set; its item is a ndarray"):
        LambdaMART(n_estimators=2).fit(X, y, qid=qid, eval_set=[(X, y, qid), X])
    # its qid's length was reported as the training qid's
    with pytest.raises(ValueError, match=r"eval_set \(valid_0\): qid has \d+ entries but X has \d+ rows"):
        LambdaMART(n_estimators=2).fit(X, y, qid=qid, eval_set=[(X, y, qid[:-1])])
    with pytest.raises(ValueError, match=r"eval_set \(valid_0\): X has 3 features"):
        LambdaMART(n_estimators=2).fit(X, y, qid=qid, eval_set=[(X[:, :3], y, qid)])
    with pytest.raises(ValueError, match="validation_fraction"):
        LambdaMART(n_estimators=2, n_iter_no_change=2, validation_fraction=0.001).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="objective"):
        LambdaMART(objective="listnet").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="split_gain"):
        LambdaMART(split_gain="gini").fit(X, y, qid=qid)


def test_the_training_and_hold_out_ndcg_weigh_queries_by_sample_weight(data, held_out_queries):
    """The verbose training NDCG and the validation_fraction hold-out's counted every query
    alike, those the fit weighted 0 too: each query weighs by its rows' mean weight now, as
    in score (and a whole query's weight equal on its rows gives the weighted mean by hand)."""
    X, y, qid = data
    weight = np.random.default_rng(5).integers(0, 4, qid.max() + 1).astype(float)[qid]
    weight[qid == qid[0]] = 1.0  # some query weighs, whichever the hold-out draws
    weight[qid == qid[-1]] = 1.0
    model = LambdaMART(n_estimators=5, verbose=100, n_iter_no_change=50, validation_fraction=0.3, random_state=0)
    model.fit(X, y, qid=qid, sample_weight=weight)
    held = np.isin(qid, held_out_queries[0])

    def weighted_ndcg(rows, scores):
        values = ndcg_score(y[rows], scores, qid[rows], 10, per_query=True)  # queries in order of id, as qid's
        query_weight = weight[rows][np.unique(qid[rows], return_index=True)[1]]
        kept = ~np.isnan(values)
        return np.average(values[kept], weights=query_weight[kept])

    for name, rows in (("train", ~held), ("validation", held)):
        for recorded, scores in zip(model.evals_result_[name]["ndcg@10"], model.staged_predict(X[rows])):
            assert recorded == pytest.approx(weighted_ndcg(rows, scores), rel=1e-12)
        last = model.evals_result_[name]["ndcg@10"][-1]
        assert last != pytest.approx(ndcg_score(y[rows], model.predict(X[rows]), qid[rows], 10), rel=1e-6)
    unweighted = LambdaMART(n_estimators=5, verbose=100, random_state=0).fit(X, y, qid=qid, sample_weight=np.full(len(y), 3.0))
    assert unweighted.evals_result_["train"]["ndcg@10"][-1] == ndcg_score(y, unweighted.predict(X), qid, 10)


def test_an_eval_sets_sample_weight_weighs_its_queries(data):
    """LightGBM's eval_sample_weight: an eval_set item's fourth member weighs each of its
    queries by its rows' mean weight, in evals_result_ and so in early stopping; weights
    all alike record what no weights record, and bad ones are refused naming the item."""
    X, y, qid = data
    valid = qid >= 100
    weight = np.random.default_rng(2).integers(0, 4, qid.max() + 1).astype(float)[qid[valid]]
    weight[qid[valid] == qid[valid][0]] = 1.0  # some query weighs
    model = LambdaMART(n_estimators=4, random_state=0).fit(
        X[~valid], y[~valid], qid=qid[~valid], eval_set=[(X[valid], y[valid], qid[valid], weight)]
    )  # fmt: skip
    for recorded, scores in zip(model.evals_result_["valid_0"]["ndcg@10"], model.staged_predict(X[valid])):
        values = ndcg_score(y[valid], scores, qid[valid], 10, per_query=True)
        query_weight = weight[np.unique(qid[valid], return_index=True)[1]]
        kept = ~np.isnan(values)
        assert recorded == pytest.approx(np.average(values[kept], weights=query_weight[kept]), rel=1e-12)
        assert recorded != pytest.approx(np.nanmean(values), rel=1e-6)
    plain = LambdaMART(n_estimators=4, random_state=0).fit(
        X[~valid], y[~valid], qid=qid[~valid], eval_set=[(X[valid], y[valid], qid[valid]), (X[valid], y[valid], qid[valid], np.full(valid.sum(), 0.1))]
    )  # fmt: skip
    assert plain.evals_result_["valid_0"]["ndcg@10"] == plain.evals_result_["valid_1"]["ndcg@10"]
    for bad, message in [
        (-weight, r"eval_set \(valid_0\): sample_weight contains negative values"),
        (weight[:-1], r"eval_set \(valid_0\): sample_weight has \d+ entries but X has \d+ rows"),
        (0 * weight, r"eval_set \(valid_0\): sample_weight is zero everywhere"),
    ]:
        with pytest.raises(ValueError, match=message):
            LambdaMART(n_estimators=2).fit(X[~valid], y[~valid], qid=qid[~valid], eval_set=[(X[valid], y[valid], qid[valid], bad)])


def test_verbose_prints_train_and_validation_ndcg(data, capsys):
    X, y, qid = data
    LambdaMART(n_estimators=20, verbose=1, n_iter_no_change=50, random_state=0).fit(X, y, qid=qid)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and "train ndcg@10" in lines[0] and "validation ndcg@10" in lines[0] and lines[0].endswith(" s")


def test_verbose_says_when_early_stopping_ends_the_fit_and_what_it_keeps(data, capsys):
    """The iteration that stopped the fit was printed only if its period fell on it, and
    nothing said the fit stopped nor which iteration was kept (LightGBM's early stopping
    says both); a stop before iteration 10 printed nothing at all."""
    X, y, qid = data
    train, valid = qid < qid[len(qid) // 2], qid >= qid[len(qid) // 2]
    model = LambdaMART(n_estimators=200, n_iter_no_change=3, learning_rate=0.5, verbose=1, random_state=0)
    model.fit(X[train], y[train], qid=qid[train], eval_set=[(X[valid], y[valid], qid[valid])])
    curve = model.evals_result_["valid_0"]["ndcg@10"]
    assert len(curve) < 200 and len(curve) % 10  # stopped early, between two printed lines
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(curve) // 10 + 2
    assert lines[-2].startswith(f"[{len(curve):>5}] train ndcg@10") and f"valid_0 ndcg@10 {curve[-1]:.4f}" in lines[-2]
    best = model.best_iteration_
    assert lines[-1] == (
        "early stopping: valid_0 ndcg@10 did not beat its best by more than tol=1e-07 in 3 iterations; the model "
        f"keeps the iterations up to its best, [{best}] (valid_0 ndcg@10 {curve[best - 1]:.4f})"
    )
    model.set_params(verbose=0).fit(X[train], y[train], qid=qid[train], eval_set=[(X[valid], y[valid], qid[valid])])
    assert capsys.readouterr().out == ""


@parametrize_with_checks([LambdaMART(n_estimators=5, random_state=0)], expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    run_estimator_check(estimator, check)


@pytest.mark.slow  # the other configurations' checks: run after the quick suite
@parametrize_with_checks(
    [
        LambdaMART(n_estimators=5, objective="mart", subsample=0.5, split_gain="squared", random_state=0),
        PLRank(n_estimators=5, n_permutations=2, random_state=0),
        LambdaMART(n_estimators=3, objective="mcrank", random_state=0),
        LambdaMART(n_estimators=3, objective="cumulative", relevance_weights="fitted", random_state=0),
        AveragedRanker(LambdaMART(n_estimators=3, subsample=0.5), n_models=2, n_jobs=1, random_state=0),
        AveragedRanker(RFPointRanker(n_estimators=3), n_models=2, random_state=0),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_estimator_checks_of_other_configurations(estimator, check):
    run_estimator_check(estimator, check)


def test_scores_that_diverge_are_an_error_not_a_nan_model():
    """objective='mart' with a huge learning rate fitted a model predicting NaN everywhere."""
    X, y, qid = make_ranking(30, (5, 15), 8, random_state=0)
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(ValueError, match=r"diverged to inf or NaN at iteration \d+: learning_rate=1e\+200"):
            LambdaMART(objective="mart", learning_rate=1e200, n_estimators=20).fit(X, y, qid=qid)


def test_cost_penalty_without_feature_costs_is_refused():
    X, y, qid = make_ranking(10, (5, 8), 4, random_state=0)
    with pytest.raises(ValueError, match="cost_penalty=0.1 needs feature_costs"):
        LambdaMART(n_estimators=2, cost_penalty=0.1).fit(X, y, qid=qid)


@pytest.mark.parametrize("estimator", [LambdaMART, PLRank])
@pytest.mark.parametrize("fraction", [0.2, 0.5])
def test_feature_fraction_trees_split_only_on_their_iterations_features(data, estimator, fraction):
    """Each iteration's trees split only on the features drawn for it, the draws differ
    between iterations, and the model does not depend on the thread count."""
    from forestrank.ensemble._sampling import TREE_FEATURES, stream

    X, y, qid = data
    model = estimator(n_estimators=6, feature_fraction=fraction, random_state=3, n_jobs=1).fit(X, y, qid=qid)
    n_drawn = max(1, int(fraction * X.shape[1]))  # a fraction of the features counts as max_features does
    draws = []
    for iteration, tree in enumerate(model.trees_):
        drawn = set(stream(model._entropy, (iteration, TREE_FEATURES)).choice(X.shape[1], n_drawn, replace=False).tolist())
        split_on = set(tree.nodes["feature"][tree.nodes["feature"] >= 0].tolist())
        assert split_on and split_on <= drawn
        draws.append(frozenset(drawn))
    assert len(set(draws)) > 1
    threaded = estimator(n_estimators=6, feature_fraction=fraction, random_state=3, n_jobs=2).fit(X, y, qid=qid)
    np.testing.assert_array_equal(threaded.predict(X), model.predict(X))


@pytest.mark.slow
def test_the_model_does_not_depend_on_the_thread_count_under_constraints_costs_and_missing_values(data):
    """On two threads a split's fill scans both children in its region
    (``_pooled_fill.fill_histograms_parallel``), their bounds, cost penalties and missing
    bins included: the one-thread model, bit for bit."""
    X, y, qid = data
    X = X.copy()
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    constraints = np.zeros(X.shape[1], dtype=int)
    constraints[:2] = (1, -1)
    params = {
        "n_estimators": 5, "monotonic_cst": constraints, "feature_costs": np.linspace(0.0, 1.0, X.shape[1]),
        "cost_penalty": 0.01, "random_state": 0,
    }  # fmt: skip
    serial, threaded = (LambdaMART(n_jobs=n_jobs, **params).fit(X, y, qid=qid) for n_jobs in (1, 2))
    assert all((tree.nodes["feature"] >= 0).sum() > 5 for tree in serial.trees_)
    np.testing.assert_array_equal(threaded.predict(X), serial.predict(X))


def test_feature_fraction_one_is_the_unsampled_model_and_bad_values_are_refused(data):
    X, y, qid = data
    plain = LambdaMART(n_estimators=4, random_state=0).fit(X, y, qid=qid)
    whole = LambdaMART(n_estimators=4, feature_fraction=1.0, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(whole.predict(X), plain.predict(X))
    for bad in (0.0, 1.5, "half"):
        with pytest.raises(ValueError, match="feature_fraction"):
            LambdaMART(n_estimators=2, feature_fraction=bad).fit(X, y, qid=qid)


@pytest.mark.slow  # the unpooled boosting tree is a builder of its own
def test_node_feature_sampling_pools_histograms_and_matches_the_unpooled_search(data):
    """With max_features < n_features the boosting fit keeps its histogram pool (sibling
    subtraction); every node draws and searches the same features as without the pool, so
    the trees split on the same features at the same bins up to the subtraction's rounding."""
    from forestrank._tree import _grow

    X, y, qid = data
    model = LambdaMART(n_estimators=3, max_features=0.5, random_state=0, n_jobs=1)
    original = _grow.histogram_pool
    unpooled = []

    def without_pool(*args, **kwargs):
        kwargs["sampled_features"] = False
        unpooled.append(original(*args, **kwargs))
        return unpooled[-1]

    pooled = clone(model).fit(X, y, qid=qid)
    import forestrank.ensemble._boosting as boosting

    boosting.histogram_pool, saved = without_pool, boosting.histogram_pool
    try:
        reference = clone(model).fit(X, y, qid=qid)
    finally:
        boosting.histogram_pool = saved
    assert unpooled == [None]  # the reference really searched without a pool
    for a, b in zip(pooled.trees_, reference.trees_):
        np.testing.assert_array_equal(a.nodes["feature"], b.nodes["feature"])
        np.testing.assert_allclose(a.nodes["threshold"], b.nodes["threshold"], rtol=1e-9, atol=1e-12)


# --- label_gain: the gain of a grade wherever one appears ----------------------------

EXPONENTIAL_TABLE = [2.0**grade - 1.0 for grade in range(5)]


@pytest.mark.parametrize("objective", ["lambdarank", "c-mart", "c-kl"])
def test_the_exponential_gain_table_fits_the_default_model(data, objective):
    """``label_gain=[2**l - 1]`` (LightGBM's default table) is the default exponential gain:
    the same model, to rounding (the default scales each query's gains by a power of two)."""
    X, y, qid = data
    default = LambdaMART(n_estimators=15, objective=objective, random_state=0).fit(X, y, qid=qid)
    table = LambdaMART(n_estimators=15, objective=objective, label_gain=EXPONENTIAL_TABLE, random_state=0)
    np.testing.assert_allclose(table.fit(X, y, qid=qid).predict(X), default.predict(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("objective", ["lambdarank", "c-mart"])
def test_a_gain_table_near_the_largest_float_fits_the_model_of_the_same_table_scaled_down(data, objective):
    """Only ratios of a query's gains enter these objectives and NDCG: a table times a
    power of two is the same model, bitwise. ``label_gain=[0] + [1e308] * 4`` scored inf
    in ``score`` and ``evals_result_``: a query's DCG overflowed."""
    X, y, qid = data
    table = np.array([0.0, 1.0, 3.0, 7.0, 15.0])
    small = LambdaMART(n_estimators=10, objective=objective, label_gain=table, random_state=0).fit(X, y, qid=qid)
    huge = LambdaMART(n_estimators=10, objective=objective, label_gain=table * 2.0**1019, random_state=0)
    huge.fit(X, y, qid=qid, eval_set=[(X, y, qid)])
    np.testing.assert_array_equal(huge.predict(X), small.predict(X))
    assert huge.evals_result_["valid_0"]["ndcg@10"][-1] == small.score(X, y, qid) == huge.score(X, y, qid)
    flat = LambdaMART(n_estimators=5, objective=objective, label_gain=[0] + [1e308] * 4, random_state=0).fit(X, y, qid=qid)
    assert 0.0 < flat.score(X, y, qid) <= 1.0


def test_a_linear_gain_changes_the_model_and_scores_its_metric(data):
    X, y, qid = data
    X_val, y_val, qid_val = make_ranking(n_queries=40, docs_per_query=(5, 40), n_features=10, random_state=1)
    exponential = LambdaMART(n_estimators=15, random_state=0).fit(X, y, qid=qid)
    linear = LambdaMART(n_estimators=15, label_gain="linear", random_state=0)
    linear.fit(X, y, qid=qid, eval_set=[(X_val, y_val, qid_val)])
    assert not np.allclose(linear.predict(X), exponential.predict(X))
    assert linear.evals_result_["valid_0"]["ndcg@10"][-1] == pytest.approx(
        ndcg_score(y_val, linear.predict(X_val), qid_val, 10, gain="linear"), rel=1e-12
    )
    assert linear.score(X_val, y_val, qid_val) == ndcg_score(y_val, linear.predict(X_val), qid_val, 10, gain="linear")
    assert linear.score(X_val, y_val, qid_val) != ndcg_score(y_val, linear.predict(X_val), qid_val, 10)


def test_mart_on_the_linear_gain_is_mart_on_the_grade(data):
    X, y, qid = data
    grade = LambdaMART(n_estimators=10, objective="mart", target="grade", random_state=0).fit(X, y, qid=qid)
    gain = LambdaMART(n_estimators=10, objective="mart", target="exp_gain", label_gain="linear", random_state=0)
    np.testing.assert_array_equal(gain.fit(X, y, qid=qid).predict(X), grade.predict(X))


def test_query_rmse_on_one_query_is_mart_less_its_starting_mean(data):
    # On one query MART's residuals sum to zero at every iteration (its start is the mean
    # target and each leaf's Newton step zeroes its residuals' sum), so QueryRMSE's
    # offset is 0 and the two fit the same trees; only MART's starting score differs.
    X, y, _ = data
    one_query = np.zeros(len(y))
    mart = LambdaMART(n_estimators=10, objective="mart", random_state=0).fit(X, y, qid=one_query)
    query_rmse = LambdaMART(n_estimators=10, objective="queryrmse", random_state=0).fit(X, y, qid=one_query)
    np.testing.assert_allclose(query_rmse.predict(X) + y.mean(), mart.predict(X), rtol=0, atol=1e-9)


def test_query_rmse_differs_from_mart_when_queries_have_other_means(data):
    X, y, qid = data
    shifted = y + (qid % 2) * 3.0  # every other query's grades lifted: its order unchanged
    query_rmse = LambdaMART(n_estimators=10, objective="queryrmse", random_state=0)
    np.testing.assert_allclose(
        query_rmse.fit(X, shifted, qid=qid).predict(X), query_rmse.fit(X, y, qid=qid).predict(X), rtol=0, atol=1e-9
    )
    mart = LambdaMART(n_estimators=10, objective="mart", random_state=0)
    assert not np.allclose(mart.fit(X, shifted, qid=qid).predict(X), mart.fit(X, y, qid=qid).predict(X))


def test_query_rmse_refuses_weights_that_vary_within_a_query(data):
    """Each query's offset is its unweighted mean residual: CatBoost's QueryRMSE, whose
    offset is the weighted mean, only with a weight per query. Other weights were taken
    and gave other leaves than CatBoost's."""
    X, y, qid = data
    per_query = np.asarray(qid, dtype=float) % 3 + 1.0
    LambdaMART(n_estimators=2, objective="queryrmse").fit(X, y, qid=qid, sample_weight=per_query)
    per_row = per_query.copy()
    per_row[0] += 1.0
    with pytest.raises(ValueError, match="objective='queryrmse' needs sample_weight constant within each query"):
        LambdaMART(n_estimators=2, objective="queryrmse").fit(X, y, qid=qid, sample_weight=per_row)


@pytest.mark.parametrize(
    ("label_gain", "eval_y", "match"),
    [
        ([0, 1, 3], None, r"label_gain gives gains to the grades 0 to 2; y holds [34]"),
        ([0, 1, 3, 7, 9, 11], 7, r"label_gain gives gains to the grades 0 to 5; eval_set \(valid_0\) y holds 7"),
        ([0, 4, 2, 6, 8], None, "label_gain must not decrease with the grade"),
        ([0, np.inf, 1, 1, 1], None, "label_gain must hold finite gains >= 0"),
        # booleans were taken as gains of 0 and 1
        ([False, True, True, True, True], None, "label_gain must hold numbers, one gain per grade, not booleans"),
        (np.array([0, 1, 1, 1, 1], dtype=bool), None, "label_gain must hold numbers, one gain per grade, not booleans"),
    ],
)
def test_bad_label_gain_is_refused_by_name(data, label_gain, eval_y, match):
    X, y, qid = data
    eval_set = None if eval_y is None else [(X[:20], np.full(20, eval_y), qid[:20])]
    with pytest.raises(ValueError, match=match):
        LambdaMART(n_estimators=2, label_gain=label_gain).fit(X, y, qid=qid, eval_set=eval_set)


def test_a_column_vector_eval_set_y_warns_as_the_training_y_does(data):
    """The training y warns as scikit-learn's estimators do; an eval_set's was raveled
    without a word."""
    X, y, qid = data
    with pytest.warns(UserWarning, match=r"A column-vector eval_set \(valid_0\) y was passed when a 1d array was expected"):
        LambdaMART(n_estimators=2).fit(X, y, qid=qid, eval_set=[(X[:20], y[:20, None], qid[:20])])

def test_grid_search_tunes_label_gain(data):
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            LambdaMART(n_estimators=5, random_state=0), {"label_gain": ["exp", "linear", EXPONENTIAL_TABLE]},
            cv=QueryKFold(3), scoring=ndcg_scorer(10),
        )  # fmt: skip
        search.fit(X, y, qid=qid)
    assert [params["label_gain"] for params in search.cv_results_["params"]] == ["exp", "linear", EXPONENTIAL_TABLE]
    scores = search.cv_results_["mean_test_score"]
    assert scores[0] == pytest.approx(scores[2], abs=1e-9)  # the table is the exponential gain


@pytest.mark.parametrize("label_gain", [[0, 1, 2, 5, 9], [0, 3, 4, 10, 30]])
def test_the_first_tree_with_label_gain_is_lightgbms(label_gain):
    """One three-leaf tree on integer features (the two libraries bin them alike): the
    LambdaRank gradients with LightGBM's ``label_gain`` give LightGBM's tree and leaves.
    Neither table is the exponential gain, whose tree differs (a table ignored fails)."""
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(60), 15)
    X = rng.integers(0, 10, (len(qid), 3)).astype(float)
    y = np.clip(np.round(X[:, 0] / 2 + rng.normal(0, 1, len(qid))), 0, 4)
    ours = LambdaMART(n_estimators=1, learning_rate=1.0, max_leaf_nodes=3, label_gain=label_gain).fit(X, y, qid=qid)
    theirs = lightgbm.LGBMRanker(
        n_estimators=1, learning_rate=1.0, num_leaves=3, label_gain=label_gain, verbose=-1
    ).fit(X, y, group=np.full(60, 15))
    expected = theirs.predict(X)
    assert len(np.unique(expected)) == 3
    np.testing.assert_allclose(ours.predict(X), expected, rtol=0, atol=1e-6 * np.abs(expected).max())


@pytest.mark.parametrize("min_gain_to_split", [5.0, 8.0])
def test_min_gain_to_split_is_lightgbms(min_gain_to_split):
    """The same threshold prunes the same splits as LightGBM's ``min_split_gain``: both
    compare it with the whole Newton gain ``G_L^2/H_L + G_R^2/H_R - G^2/H``, and
    the gains summed per feature are LightGBM's gain importances. (Between 2 and 4 the
    trees differ by LightGBM's shortcut: a feature that cannot split a node under the
    threshold is not tried on its children.)"""
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(60), 15)
    X = rng.integers(0, 10, (len(qid), 3)).astype(float)
    y = np.clip(np.round(X[:, 0] / 2 + X[:, 1] / 4 + rng.normal(0, 1, len(qid))), 0, 4)
    ours = LambdaMART(n_estimators=1, max_leaf_nodes=8, min_gain_to_split=min_gain_to_split, n_jobs=1)
    ours.fit(X, y, qid=qid)
    theirs = lightgbm.LGBMRanker(
        n_estimators=1, num_leaves=8, min_split_gain=min_gain_to_split, verbose=-1, n_jobs=1, importance_type="gain"
    ).fit(X, y, group=np.full(60, 15))
    expected = theirs.predict(X)
    assert 2 < len(np.unique(expected)) < 8  # the threshold pruned some splits, not all
    np.testing.assert_allclose(ours.predict(X), expected, rtol=0, atol=1e-6 * np.abs(expected).max())
    gains = ours.trees_[0].feature_gains
    np.testing.assert_allclose(gains, theirs.feature_importances_, rtol=1e-6)


def _integer_features_data():
    """Integer features (LightGBM and XGBoost bin them as forestrank does), 60 queries of 15."""
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(60), 15)
    X = rng.integers(0, 10, (len(qid), 3)).astype(float)
    y = np.clip(np.round(X[:, 0] / 2 + X[:, 1] / 4 + rng.normal(0, 1, len(qid))), 0, 4)
    return X, y, qid


@pytest.mark.parametrize(("reg_lambda", "min_child_weight", "gamma"), [(1.0, 1.0, 0.0), (10.0, 6.0, 0.0), (1.0, 1.0, 0.5)])
def test_xgboosts_tree_is_ours_at_half_its_step_l2_and_hessian_floor_and_twice_its_gamma(reg_lambda, min_child_weight, gamma):
    """docs/from_xgboost.md: XGBoost's LambdaRank hessians are twice ours, so its leaf
    ``-G / (2H + lambda)`` at step ``r`` is ours at ``r / 2`` with ``lambda / 2``, its
    hessian floor is ours halved and its gains are half ours (the guide mapped lambda and
    the floor one to one: 12 leaves where XGBoost grew 21)."""
    xgboost = pytest.importorskip("xgboost")
    X, y, qid = _integer_features_data()
    theirs = xgboost.XGBRanker(
        n_estimators=1, learning_rate=1.0, base_score=0.0, reg_lambda=reg_lambda, min_child_weight=min_child_weight,
        gamma=gamma, n_jobs=1,
    ).fit(X, y, qid=qid)  # fmt: skip
    ours = LambdaMART(
        n_estimators=1, learning_rate=0.5, max_depth=6, max_leaf_nodes=None, min_samples_leaf=1,
        l2_regularization=reg_lambda / 2, min_child_weight=min_child_weight / 2, min_gain_to_split=2 * gamma,
        lambdarank_truncation_level=32, n_jobs=1,
    ).fit(X, y, qid=qid)  # fmt: skip
    expected = theirs.predict(X)
    assert len(np.unique(expected)) > 2
    np.testing.assert_allclose(ours.predict(X), expected, rtol=0, atol=1e-6 * np.abs(expected).max())
    if gamma:  # XGBoost's gamma at face value prunes otherwise (16 leaves against its 9)
        ours.set_params(min_gain_to_split=gamma).fit(X, y, qid=qid)
        assert not np.allclose(ours.predict(X), expected, rtol=0, atol=1e-6 * np.abs(expected).max())


def test_xgboosts_pairs_reach_the_top_32_documents_of_a_query():
    """docs/from_xgboost.md: XGBoost's "topk" pairs default to the top 32 documents, ours
    to LightGBM's 30; the guide left the cutoff out, and on queries longer than 30
    documents its translation grew another tree."""
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(20), 40)
    X = rng.integers(0, 10, (len(qid), 3)).astype(float)
    y = np.clip(np.round(X[:, 0] / 2 + X[:, 1] / 4 + rng.normal(0, 1, len(qid))), 0, 4)
    expected = xgboost.XGBRanker(n_estimators=1, learning_rate=1.0, base_score=0.0, n_jobs=1).fit(X, y, qid=qid).predict(X)
    translated = LambdaMART(
        n_estimators=1, learning_rate=0.5, max_depth=6, max_leaf_nodes=None, min_samples_leaf=1, l2_regularization=0.5,
        min_child_weight=0.5, n_jobs=1,
    )  # fmt: skip
    tolerance = 1e-6 * np.abs(expected).max()
    np.testing.assert_allclose(translated.set_params(lambdarank_truncation_level=32).fit(X, y, qid=qid).predict(X), expected, atol=tolerance)
    assert np.abs(translated.set_params(lambdarank_truncation_level=30).fit(X, y, qid=qid).predict(X) - expected).max() > 100 * tolerance


def test_lightgbms_l2_floor_and_gain_threshold_are_ours_divided_by_the_lightest_weight():
    """docs/from_lightgbm.md: forestrank rescales the weights so that the lightest weighs 1,
    LightGBM takes them as given; with every weight 0.5, LightGBM's ``reg_lambda``,
    ``min_child_weight`` and ``min_split_gain`` are ours at twice the value."""
    lightgbm = pytest.importorskip("lightgbm")
    X, y, qid = _integer_features_data()
    weights = np.full(len(y), 0.5)
    for theirs_params, ours_params in [
        ({"reg_lambda": 2.5}, {"l2_regularization": 5.0}),
        ({"min_child_weight": 2.0}, {"min_child_weight": 4.0}),
        ({"min_split_gain": 4.0}, {"min_gain_to_split": 8.0}),
    ]:
        theirs = lightgbm.LGBMRanker(
            n_estimators=1, learning_rate=1.0, num_leaves=6, min_child_samples=1, verbose=-1, n_jobs=1, **theirs_params
        ).fit(X, y, group=np.full(60, 15), sample_weight=weights)  # fmt: skip
        ours = LambdaMART(n_estimators=1, learning_rate=1.0, max_leaf_nodes=6, min_samples_leaf=1, n_jobs=1, **ours_params)
        expected = theirs.predict(X)
        np.testing.assert_allclose(
            ours.fit(X, y, qid=qid, sample_weight=weights).predict(X), expected, rtol=0, atol=1e-6 * np.abs(expected).max()
        )  # fmt: skip


def test_lightgbms_min_data_in_leaf_estimates_rows_from_hessians_where_ours_counts_them():
    """docs/from_lightgbm.md: LightGBM compares ``min_data_in_leaf`` with rows estimated
    from each side's hessian share, so where the minimum binds its leaves can hold fewer
    rows than it and the trees differ; with a minimum of 1 they are the same."""
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(100), 20)
    X = rng.integers(0, 50, (len(qid), 4)).astype(float)
    y = np.clip(np.round(X[:, 0] / 12 + X[:, 1] / 25 + rng.normal(0, 1, len(qid))), 0, 4)
    for minimum in (20, 1):
        theirs = lightgbm.LGBMRanker(n_estimators=1, learning_rate=1.0, min_child_samples=minimum, verbose=-1, n_jobs=1)
        theirs.fit(X, y, group=np.full(100, 20))
        ours = LambdaMART(n_estimators=1, learning_rate=1.0, min_samples_leaf=minimum, n_jobs=1).fit(X, y, qid=qid)
        assert np.allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-6) == (minimum == 1)
        their_rows = np.unique(theirs.predict(X, pred_leaf=True), return_counts=True)[1]
        tree = ours.trees_[0]
        our_rows = tree.n_node_samples[tree.nodes["feature"] < 0]
        assert our_rows.min() >= minimum and (their_rows.min() < minimum) == (minimum == 20)


@pytest.mark.parametrize("label_gain", ["exp", "linear"])
def test_grades_above_31_fit_with_either_gain(data, label_gain):
    """Grades up to 1200: LightGBM's default table stops at 31, and 2**g overflows float64
    from 1024; the exponential gain here is scaled per query, so it stays finite and the
    fit ranks the documents in their grades' order as a fit on grades 0-4 does, and the
    linear gain never grows fast."""
    X, y, qid = data
    large = y * 300.0
    model = LambdaMART(n_estimators=5, label_gain=label_gain, random_state=0).fit(X, large, qid=qid)
    assert np.isfinite(model.predict(X)).all()
    assert model.score(X, large, qid) > 0.9 and model.score(X, y, qid) > 0.85


def test_xendcg_is_reproducible_and_thread_count_free(data):
    """Its noise comes from the fit's seed, one draw per iteration in Python: the same seed
    gives the same model on one thread or two, another seed another model."""
    X, y, qid = data
    fit = lambda seed, n_jobs: LambdaMART(  # noqa: E731
        n_estimators=8, objective="xendcg", random_state=seed, n_jobs=n_jobs
    ).fit(X, y, qid=qid).predict(X)
    one = fit(3, 1)
    np.testing.assert_array_equal(fit(3, 2), one)
    assert not np.array_equal(fit(4, 1), one)


@pytest.mark.slow  # fits that compile LambdaRank kernels of their own: the quick suite's time
def test_sampled_pairs_fit_reproducibly_on_any_thread_count(data):
    X, y, qid = data
    fit = lambda seed, n_jobs, **params: LambdaMART(  # noqa: E731
        n_estimators=8, lambdarank_pair_method="mean", random_state=seed, n_jobs=n_jobs, **params
    ).fit(X, y, qid=qid).predict(X)
    one = fit(3, 1)
    np.testing.assert_array_equal(fit(3, 2), one)
    assert not np.array_equal(fit(4, 1), one)
    assert not np.array_equal(fit(3, 1, lambdarank_num_pair_per_sample=8), one)
    assert ndcg_score(y, fit(3, 2, lambdarank_num_pair_per_sample=8), qid, 10) > ndcg_score(y, np.zeros(len(y)), qid, 10)


def test_topk_pairs_refuse_a_number_of_pairs_per_document(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="lambdarank_num_pair_per_sample is the pairs each document draws"):
        LambdaMART(n_estimators=2, lambdarank_num_pair_per_sample=4).fit(X, y, qid=qid)


def test_a_number_of_pairs_per_document_above_the_stated_bound_is_refused(data):
    """10**9 partners per document was accepted and ran for hours."""
    X, y, qid = data
    for pairs in (10**9, 10_001):
        with pytest.raises(ValueError, match=r"lambdarank_num_pair_per_sample.* in the range \[1, 10000\]"):
            LambdaMART(n_estimators=1, lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=pairs).fit(X, y, qid=qid)
    LambdaMART(n_estimators=1, lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=10_000).fit(X[:200], y[:200], qid=qid[:200])


def test_grid_search_tunes_the_pair_method(data):
    X, y, qid = data
    grid = [{"lambdarank_pair_method": ["topk"]}, {"lambdarank_pair_method": ["mean"], "lambdarank_num_pair_per_sample": [1, 4]}]
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(LambdaMART(n_estimators=5, random_state=0), grid, cv=QueryKFold(3), scoring=ndcg_scorer(10))
        search.fit(X, y, qid=qid)
    assert len(search.cv_results_["params"]) == 3 and np.isfinite(search.cv_results_["mean_test_score"]).all()


@pytest.mark.slow  # fits that compile LambdaRank kernels of their own: the quick suite's time
@pytest.mark.parametrize("metric", ["map", "err"])
def test_lambdarank_on_map_and_err_learns_its_metric(data, metric):
    from forestrank.metrics import err_score, map_score

    X, y, qid = data
    score = map_score if metric == "map" else err_score
    model = LambdaMART(n_estimators=20, lambdarank_metric=metric, random_state=0).fit(X, y, qid=qid)
    ndcg_model = LambdaMART(n_estimators=20, random_state=0).fit(X, y, qid=qid)
    assert not np.array_equal(model.predict(X), ndcg_model.predict(X))
    assert score(y, model.predict(X), qid) > score(y, LambdaMART(n_estimators=1, random_state=0).fit(X, y, qid=qid).predict(X), qid)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            LambdaMART(n_estimators=3), {"lambdarank_metric": ["ndcg", metric]}, cv=QueryKFold(2), scoring=ndcg_scorer(10)
        ).fit(X, y, qid=qid)
    assert [params["lambdarank_metric"] for params in search.cv_results_["params"]] == ["ndcg", metric]


def test_lambdarank_options_are_refused_with_other_objectives(data):
    X, y, qid = data
    for option in ({"lambdarank_metric": "map"}, {"lambdarank_pair_method": "mean"}):
        with pytest.raises(ValueError, match=f"{next(iter(option))} chooses LambdaRank's pairs and weights"):
            LambdaMART(n_estimators=2, objective="mart", **option).fit(X, y, qid=qid)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"objective": "xendcg", "sigma": 5.0}, "sigma shapes LambdaRank's pairwise logistic; objective='xendcg' has none"),
        ({"objective": "yetirank", "lambdarank_norm": False}, "lambdarank_norm shapes LambdaRank's pairwise logistic"),
        ({"objective": "mart", "lambdarank_truncation_level": 2}, "lambdarank_truncation_level chooses LambdaRank's pairs"),
        (
            {"lambdarank_pair_method": "mean", "lambdarank_truncation_level": 3},
            "lambdarank_truncation_level sets the pairs of lambdarank_pair_method='topk'; 'mean' draws",
        ),
        ({"position_bias": "factor", "position_bias_norm": 3.0}, "position_bias_norm is Unbiased LambdaMART's exponent"),
        ({"position_bias_norm": 3.0}, "position_bias_norm is Unbiased LambdaMART's exponent; position_bias=None"),
        (
            {"position_bias": "unbiased", "position_bias_regularization": 5.0},
            "position_bias_regularization regularises the 'factor' biases; position_bias='unbiased' has none",
        ),
    ],
)
def test_options_that_the_setting_does_not_read_are_refused(data, params, message):
    """Each was accepted and changed nothing (the same model bit for bit), where the other
    options of another objective or mode are refused by name."""
    X, y, qid = data
    position = {"position": np.arange(len(y)) % 10 + 1} if params.get("position_bias") else {}
    with pytest.raises(ValueError, match=re.escape(message)):
        LambdaMART(n_estimators=2, **params).fit(X, y, qid=qid, **position)


def test_averaged_rankers_score_with_their_members_gain(data):
    X, y, qid = data
    model = AveragedRanker(LambdaMART(n_estimators=3, label_gain="linear"), n_models=2, random_state=0).fit(X, y, qid=qid)
    assert model.score(X, y, qid) == ndcg_score(y, model.predict(X), qid, 10, gain="linear")


@pytest.mark.parametrize("objective", ["xendcg", "lambdarank", "c-mart", "mcrank"])
def test_a_regression_target_for_another_objective_than_mart_is_refused(data, objective):
    """``target="exp_gain"`` with ``objective="xendcg"`` was ignored silently."""
    X, y, qid = data
    with pytest.raises(ValueError, match=f"target chooses what objective='mart' or 'queryrmse' regresses on; objective='{objective}'"):
        LambdaMART(n_estimators=1, objective=objective, target="exp_gain").fit(X, y, qid=qid)


def test_predict_grade_proba_says_which_objectives_have_it(data):
    """Unfitted, the ``objective`` parameter says; fitted, the model's trees do: a LambdaRank
    model after ``set_params(objective="mcrank")`` gave one "probability" of 1 per row, and
    a McRank model after ``set_params(objective="lambdarank")`` lost the method."""
    X, y, qid = data
    assert not hasattr(LambdaMART(), "predict_grade_proba")
    with pytest.raises(AttributeError) as raised:
        LambdaMART().predict_grade_proba(X)
    assert "objective='lambdarank' scores documents only" in str(raised.value.__cause__)
    model = LambdaMART(n_estimators=1, random_state=0).fit(X, y, qid=qid).set_params(objective="mcrank")
    assert not hasattr(model, "predict_grade_proba")
    with pytest.raises(AttributeError) as raised:
        model.predict_grade_proba(X)
    assert "needs a model fitted with objective='mcrank' or 'cumulative'" in str(raised.value.__cause__)
    assert "this model's trees score documents only" in str(raised.value.__cause__)
    graded = LambdaMART(n_estimators=1, objective="mcrank", random_state=0).fit(X, y, qid=qid)
    expected = graded.predict_grade_proba(X)
    np.testing.assert_array_equal(graded.set_params(objective="lambdarank").predict_grade_proba(X), expected)


# --- Bayesian bagging (CatBoost's bagging_temperature) ------------------------------------


def test_bayesian_weights_are_exponential_at_temperature_one_and_powers_of_it_otherwise():
    from scipy import stats

    from forestrank.ensemble._sampling import bayesian_weights

    one = bayesian_weights(np.random.default_rng(0), 20000, 1.0)
    assert stats.kstest(one, "expon").pvalue > 1e-3
    np.testing.assert_allclose(bayesian_weights(np.random.default_rng(0), 20000, 2.5), one**2.5)
    np.testing.assert_array_equal(bayesian_weights(np.random.default_rng(0), 50, 0.0), np.ones(50))
    assert np.isfinite(one).all() and (one >= 0).all()


@pytest.mark.parametrize(("temperature", "n_units", "seed"), [(300.0, 10000, 0), (1e6, 10000, 0), (1e4, 3, 6)])
def test_bayesian_weights_past_float64s_range_are_the_powers_up_to_a_common_factor(temperature, n_units, seed):
    """Powers that overflow (or all underflow: the last case's three draws are below 1)
    are taken relative to the largest: finite, the largest 1, in the ratios of the powers."""
    from forestrank.ensemble._sampling import bayesian_weights

    weights = bayesian_weights(np.random.default_rng(seed), n_units, temperature)
    assert np.isfinite(weights).all() and weights.max() == 1.0
    exponential = -np.log1p(-np.random.default_rng(seed).random(n_units))
    order = np.argsort(exponential)
    assert (np.diff(weights[order]) >= 0).all()
    kept = weights > 1e-300
    np.testing.assert_allclose(
        np.log(weights[kept]), temperature * (np.log(exponential[kept]) - np.log(exponential.max())), rtol=1e-9, atol=1e-6
    )


def test_bagging_temperature_is_bounded_where_the_split_gains_stay_finite():
    """At 100 a few units outweigh the rest by orders of magnitude, yet the trees split;
    above, the squared weights can overflow the gains (at 300 on 30 queries some trees
    were single leaves; higher, the fit failed blaming learning_rate)."""
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=8, random_state=0)
    model = LambdaMART(n_estimators=5, bagging_temperature=100.0, min_samples_leaf=1, random_state=0).fit(X, y, qid=qid)
    assert all(tree.node_count > 1 for tree in model.trees_)
    with pytest.raises(ValueError, match="bagging_temperature"):
        LambdaMART(bagging_temperature=101.0).fit(X, y, qid=qid)


@pytest.mark.parametrize("level", ["query", "document"])
def test_bagging_temperature_weighs_each_unit_of_subsample_level(level):
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
    model = LambdaMART(n_estimators=2, bagging_temperature=1.0, subsample_level=level, random_state=0).fit(X, y, qid=qid)
    query_of_row = np.repeat(np.arange(30), 10)
    weights = model._subsample_mask(0, query_of_row)
    per_query = [np.unique(weights[query_of_row == q]) for q in range(30)]
    assert all(len(values) == 1 for values in per_query) == (level == "query")
    assert len(np.unique(weights)) > 10
    np.testing.assert_array_equal(weights, model._subsample_mask(0, query_of_row))  # one stream per iteration
    assert not np.array_equal(weights, model._subsample_mask(1, query_of_row))
    plain = LambdaMART(n_estimators=2, bagging_temperature=0.0, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(plain._subsample_mask(0, query_of_row), np.ones(300))
    np.testing.assert_array_equal(plain.predict(X), LambdaMART(n_estimators=2, random_state=0).fit(X, y, qid=qid).predict(X))


def test_yetirank_models_are_reproducible_and_its_parameters_refused_elsewhere():
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
    settings = dict(n_estimators=5, objective="yetirank", random_state=2)
    first = LambdaMART(**settings).fit(X, y, qid=qid).predict(X)
    np.testing.assert_array_equal(first, LambdaMART(**settings).fit(X, y, qid=qid).predict(X))
    assert not np.array_equal(first, LambdaMART(**{**settings, "yetirank_permutations": 3}).fit(X, y, qid=qid).predict(X))
    with pytest.raises(ValueError, match="yetirank_decay sets YetiRank's noisy rankings; objective='lambdarank' has none"):
        LambdaMART(yetirank_decay=0.5).fit(X, y, qid=qid)

    def squared_error(labels, scores, query_boundaries, query_ids):
        return scores - labels, np.ones(len(scores))

    for objective in ("mart", "queryrmse", "c-mart", "cosine", "mcrank", "cumulative", "xendcg", squared_error):
        for name, value in (("yetirank_decay", 0.5), ("yetirank_permutations", 3)):
            with pytest.raises(ValueError, match=f"{name} sets YetiRank's noisy rankings; objective=.* has none"):
                LambdaMART(objective=objective, **{name: value}).fit(X, y, qid=qid)


def test_the_weights_of_the_hold_out_change_no_tree(data, held_out_queries):
    """The unit of weight (the lightest row) was taken over every row before the
    ``validation_fraction`` queries were held out: lighter held-out rows made every training
    row heavier against ``min_child_weight``, and other trees grew."""
    X, y, qid = data
    held = held_out_queries
    params = dict(n_estimators=4, n_iter_no_change=50, validation_fraction=0.2, min_child_weight=20.0, random_state=0)
    weights = np.full(len(y), 3.0)
    model = LambdaMART(**params).fit(X, y, qid=qid, sample_weight=weights)
    in_hold_out = np.isin(qid, held[0])
    weights[in_hold_out] = 0.5
    other = LambdaMART(**params).fit(X, y, qid=qid, sample_weight=weights)
    assert [len(tree.nodes) for tree in other.trees_] == [len(tree.nodes) for tree in model.trees_]
    np.testing.assert_array_equal(other.predict(X), model.predict(X))
    weights[~in_hold_out] = 0.0
    with pytest.raises(ValueError, match="zero everywhere on the queries the validation_fraction hold-out leaves"):
        LambdaMART(**params).fit(X, y, qid=qid, sample_weight=weights)


@pytest.mark.parametrize("objective", ["xendcg", "lambdarank", "yetirank"])
def test_a_tree_that_cannot_split_changes_no_score_of_a_shift_invariant_objective(objective):
    """XE-NDCG's softmax saturates as a query's scores spread: at learning_rate=1.0 a root of
    hessian sum near 1e-35 stepped -G / H of rounding noise, about 1e34 for every document,
    and the later steps were lost against it: the ranking collapsed to ties. A one-leaf
    tree's step moves a query's scores alike, which changes no ranking of such an
    objective: it steps 0, and the ranking stays learnt. (XE-NDCG is the regression; on
    these two-document queries LambdaRank's and YetiRank's gradients sum to exactly 0,
    so their cases guard the rule without having failed before it.)"""
    X = np.array([[0.0], [1.0]] * 3)
    y = np.array([0, 1] * 3)
    qid = np.repeat([1, 2, 3], 2)
    model = LambdaMART(objective=objective, n_estimators=6, learning_rate=1.0, min_samples_leaf=1, random_state=0)
    model.fit(X, y, qid=qid)
    one_leaf = [tree for tree in model.trees_ if tree.node_count == 1]
    assert one_leaf and all(tree.values[0] == 0.0 for tree in one_leaf)
    assert ndcg_score(y, model.predict(X), qid) == 1.0 and np.abs(model.predict(X)).max() < 100


def test_a_tree_that_cannot_split_still_steps_where_the_objective_is_not_shift_invariant():
    """The cosine surrogate measures the scores' direction from 0: a constant moves it, and a
    one-leaf tree keeps its Newton step, which moves every prediction by its value."""
    X = np.zeros((6, 1))
    y = np.array([0, 1, 2, 0, 1, 3])
    model = LambdaMART(objective="cosine", n_estimators=1, learning_rate=0.5, random_state=0)
    model.fit(X, y, qid=np.repeat([1, 2], 3))
    tree = model.trees_[0]
    assert tree.node_count == 1 and tree.values[0] != 0.0
    np.testing.assert_array_equal(model.predict(X), 1.0 + tree.values[0])
