"""The ranking contract (docs/design.md, "Public contract"), exercised through DummyRanker."""

import functools
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from forestrank import (
    BROOF,
    AveragedRanker,
    DummyRanker,
    LambdaMART,
    MissingQidWarning,
    PLRank,
    QueryKFold,
    RFHybridRanker,
    RFListRanker,
    RFPointRanker,
    make_ranking,
    ndcg_score,
    ndcg_scorer,
)
from forestrank.ensemble import BaseRanker
from assertions import run_estimator_check
from forestrank.estimator_checks import expected_failed_checks

@parametrize_with_checks(
    [DummyRanker(), DummyRanker(strategy="constant")], expected_failed_checks=expected_failed_checks
)
def test_sklearn_estimator_checks(estimator, check):
    run_estimator_check(estimator, check)


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=60, docs_per_query=(5, 30), n_features=8, random_state=0)


def test_query_ids_in_any_order_and_type_give_the_same_model(data):
    X, y, qid = data
    reference = DummyRanker().fit(X, y, qid=qid)
    permutation = np.random.default_rng(0).permutation(len(y))
    string_ids = np.array([f"q{value:03d}" for value in qid])
    shuffled = DummyRanker().fit(X[permutation], y[permutation], qid=string_ids[permutation])
    assert (shuffled.feature_, shuffled.feature_sign_) == (reference.feature_, reference.feature_sign_)
    assert shuffled.train_score_ == pytest.approx(reference.train_score_, rel=1e-12)
    np.testing.assert_array_equal(shuffled.predict(X[permutation]), reference.predict(X)[permutation])


def test_score_is_mean_ndcg_at_10_under_the_default_convention(data):
    X, y, qid = data
    ranker = DummyRanker().fit(X, y, qid=qid)
    assert ranker.score(X, y, qid=qid) == ndcg_score(y, ranker.predict(X), qid, 10)
    with pytest.warns(MissingQidWarning, match="DummyRanker.score got no qid"):
        assert ranker.score(X, y) == ndcg_score(y, ranker.predict(X), np.zeros(len(y)), 10)


def test_missing_qid_in_fit_warns_and_uses_one_query(data):
    X, y, _ = data
    with pytest.warns(MissingQidWarning, match="DummyRanker.fit got no qid"):
        DummyRanker().fit(X, y)


@pytest.mark.parametrize("ranker", [LambdaMART(n_estimators=2), RFPointRanker(n_estimators=2)], ids=repr)
def test_a_qid_given_to_predict_is_checked_where_it_is_not_read(ranker, data):
    """Without early_exit, predict's qid went unread and unchecked: a routed qid of the
    wrong rows, NaN or a string passed without a word."""
    X, y, qid = data
    model = clone(ranker).set_params(random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(model.predict(X, qid=qid), model.predict(X))
    with pytest.raises(ValueError, match=rf"qid has 3 entries but X has {len(y)} rows"):
        model.predict(X, qid=np.arange(3))
    with pytest.raises(ValueError, match="qid contains NaN"):
        model.predict(X, qid=np.full(len(y), np.nan))


def test_metadata_routing_requests_qid_by_default():
    routing = DummyRanker().get_metadata_routing()
    assert routing.fit.requests["qid"] is True
    assert routing.score.requests["qid"] is True
    assert routing.fit.requests["sample_weight"] is None  # sklearn's default: opt-in


def test_architecture_gridsearch_recipe_routes_qid_everywhere(data):
    X, y, qid = data
    grid = {"dummyranker__strategy": ["constant", "best_feature"], "dummyranker__k": [5, 10]}
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("error", MissingQidWarning)  # qid must reach fit, split and score
        search = GridSearchCV(
            make_pipeline(StandardScaler(), DummyRanker()), grid, cv=QueryKFold(5), scoring=ndcg_scorer(10)
        )
        search.fit(X, y, qid=qid)
    assert search.best_params_["dummyranker__strategy"] == "best_feature"
    # Each fold's score is the per-query mean NDCG@10 of that fold's test queries.
    best = search.best_index_
    for fold, (train, test) in enumerate(QueryKFold(5).split(X, qid=qid)):
        model = make_pipeline(StandardScaler(), DummyRanker(k=search.best_params_["dummyranker__k"]))
        model.fit(X[train], y[train], dummyranker__qid=qid[train])
        expected = ndcg_score(y[test], model.predict(X[test]), qid[test], 10)
        assert search.cv_results_[f"split{fold}_test_score"][best] == pytest.approx(expected, rel=1e-12)


def test_cross_validate_with_routing(data):
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        result = cross_validate(
            DummyRanker(), X, y, params={"qid": qid}, cv=QueryKFold(3), scoring={"ndcg": ndcg_scorer(10)}
        )
    assert len(result["test_ndcg"]) == 3 and np.all(result["test_ndcg"] > 0)


def test_scorer_without_routing_warns_loudly(data):
    X, y, qid = data
    search = GridSearchCV(DummyRanker(), {"k": [10]}, cv=QueryKFold(3), scoring=ndcg_scorer(10))
    with pytest.warns(MissingQidWarning, match=r"ndcg_scorer\(k=10\) got no qid"):
        search.fit(X, y, groups=qid, qid=qid)


def test_pickle_and_clone_round_trip(data):
    X, y, qid = data
    ranker = DummyRanker(k=5).fit(X, y, qid=qid)
    restored = pickle.loads(pickle.dumps(ranker))
    np.testing.assert_array_equal(restored.predict(X), ranker.predict(X))
    fresh = clone(ranker)
    assert fresh.get_params() == ranker.get_params() and not hasattr(fresh, "feature_")
    scorer = pickle.loads(pickle.dumps(ndcg_scorer(5, convention="letor4")))
    assert repr(scorer) == "ndcg_scorer(k=5, convention='letor4')"
    assert scorer(ranker, X, y, qid) == ndcg_score(y, ranker.predict(X), qid, 5, convention="letor4")


def test_pandas_input_records_feature_names(data):
    X, y, qid = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    ranker = DummyRanker().fit(frame, pd.Series(y), qid=pd.Series(qid))
    np.testing.assert_array_equal(ranker.feature_names_in_, frame.columns)
    with pytest.warns(UserWarning, match="feature names"):
        ranker.predict(X)


def test_inputs_are_never_modified_and_read_only_inputs_work(data):
    X, y, qid = data
    permutation = np.random.default_rng(1).permutation(len(y))
    arrays = [X[permutation], y[permutation].astype(float), qid[permutation], np.linspace(0.5, 2, len(y))]
    copies = [array.copy() for array in arrays]
    for array in arrays:
        array.setflags(write=False)
    ranker = DummyRanker().fit(arrays[0], arrays[1], qid=arrays[2], sample_weight=arrays[3])
    ranker.predict(arrays[0])
    ranker.score(arrays[0], arrays[1], qid=arrays[2])
    for array, copy in zip(arrays, copies):
        np.testing.assert_array_equal(array, copy)


def test_sample_weight_weighs_queries():
    # Feature 0 ranks query 1 perfectly and query 2 backwards; feature 1 the opposite.
    X = np.array([[1, 0], [0, 1], [0, 1], [1, 0]], dtype=float)
    y = np.array([1, 0, 1, 0])
    qid = np.array([1, 1, 2, 2])
    heavy_first = DummyRanker().fit(X, y, qid=qid, sample_weight=[3, 3, 1, 1])
    heavy_second = DummyRanker().fit(X, y, qid=qid, sample_weight=[1, 1, 3, 3])
    assert (heavy_first.feature_, heavy_first.feature_sign_) == (0, 1.0)
    assert heavy_second.feature_sign_ * X[:, heavy_second.feature_] @ [0, 0, 1, -1] > 0


class GradedRanker(BaseRanker):
    """Minimal ranker that needs integer grades, to test the grade checks of the base class."""

    _requires_grades = True

    def fit(self, X, y, qid=None, sample_weight=None):
        self.data_ = self._validate_training_data(X, y, qid, sample_weight)
        return self


@pytest.mark.parametrize(
    ("estimator", "change", "error", "match"),
    [
        (DummyRanker(), dict(y=np.arange(5)), ValueError, "y has 5 entries but X has 6 rows"),
        (DummyRanker(), dict(qid=np.zeros(5)), ValueError, "qid has 5 entries but X has 6 rows"),
        (DummyRanker(), dict(sample_weight=np.ones(5)), ValueError, "sample_weight has 5 entries but X has 6"),
        (DummyRanker(), dict(sample_weight=-np.ones(6)), ValueError, "sample_weight contains negative"),
        (DummyRanker(), dict(sample_weight=np.zeros(6)), ValueError, "sample_weight is zero everywhere"),
        (DummyRanker(), dict(sample_weight=np.full(6, np.nan)), ValueError, "sample_weight contains non-finite"),
        (DummyRanker(), dict(y=[0, 1, np.inf, 0, 1, 0]), ValueError, "y contains non-finite"),
        (DummyRanker(), dict(y=[0, 1, -1, 0, 1, 0]), ValueError, "y contains negative"),
        (DummyRanker(), dict(y=None), ValueError, "requires y to be passed"),
        (GradedRanker(), dict(y=[0, 1, 0.5, 0, 1, 0]), ValueError, "y must hold integer relevance grades"),
        (DummyRanker(), dict(X=np.full((6, 2), np.inf)), ValueError, "Input X contains infinity"),
        (DummyRanker(), dict(X=np.zeros((6, 2, 1))), ValueError, "Found array with dim 3"),
        (DummyRanker(), dict(X=np.zeros((0, 2)), y=[], qid=[]), ValueError, "0 sample"),
        (DummyRanker(strategy="random"), {}, ValueError, "'strategy' parameter of DummyRanker"),
        (DummyRanker(k=0), {}, ValueError, "'k' parameter of DummyRanker"),
    ],
)
def test_bad_input_gets_an_error_naming_the_argument(estimator, change, error, match):
    arguments = dict(X=np.arange(12.0).reshape(6, 2), y=[0, 1, 2, 0, 1, 0], qid=[1, 1, 1, 2, 2, 2])
    arguments.update(change)
    with pytest.raises(error, match=match):
        estimator.fit(**arguments)


@pytest.mark.parametrize(
    ("estimator", "name"),
    [
        (PLRank(), "n_permutations"),  # reached numpy as a bool: "an integer is required"
        (AveragedRanker(LambdaMART()), "n_models"),  # SeedSequence refused the bool
        (LambdaMART(grow_policy="symmetric"), "max_depth"),
        (LambdaMART(objective="yetirank"), "yetirank_permutations"),
        (LambdaMART(), "n_estimators"),  # fitted one tree
        (RFPointRanker(), "max_features"),  # drew one feature
        (LambdaMART(), "learning_rate"),
        (LambdaMART(), "n_jobs"),  # a type constraint (Integral), not an interval
        (DummyRanker(), "k"),
    ],
)
def test_a_count_given_as_a_bool_is_refused_by_name(estimator, name):
    X, y, qid = np.arange(12.0).reshape(6, 2), [0, 1, 2, 0, 1, 0], [1, 1, 1, 2, 2, 2]
    with pytest.raises(ValueError, match=f"The '{name}' parameter of {type(estimator).__name__} must be a number, not a bool"):
        clone(estimator).set_params(**{name: True}).fit(X, y, qid=qid)


def test_a_flag_given_as_a_bool_stays_a_flag():
    X, y, qid = np.arange(12.0).reshape(6, 2), [0, 1, 2, 0, 1, 0], [1, 1, 1, 2, 2, 2]
    RFPointRanker(n_estimators=2, bootstrap=np.True_, oob_score=False, random_state=0).fit(X, y, qid=qid)


@pytest.mark.parametrize(
    "estimator",
    [DummyRanker(), RFPointRanker(n_estimators=3), RFListRanker(n_estimators=2), LambdaMART(n_estimators=3),
     PLRank(n_estimators=3), BROOF(
        n_estimators=2, n_trees=3, forest=RFPointRanker(criterion="variance", sample_level="document")
     ), AveragedRanker(LambdaMART(n_estimators=2), n_models=2)],
    ids=lambda estimator: type(estimator).__name__,
)  # fmt: skip
def test_a_column_vector_y_warns_as_scikit_learn_estimators_do(estimator):
    """scikit-learn's own check: the same predictions, and its DataConversionWarning (the
    column was flattened without a word), once for an ensemble of rankers."""
    from sklearn.exceptions import DataConversionWarning
    from sklearn.utils.estimator_checks import check_supervised_y_2d

    run_estimator_check(estimator, functools.partial(check_supervised_y_2d, type(estimator).__name__))
    X, y, qid = make_ranking(n_queries=5, docs_per_query=6, n_features=3, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clone(estimator).fit(X, y[:, None], qid=qid)
    assert [type(w.message) for w in caught].count(DataConversionWarning) == 1


def test_grades_are_accepted_as_integer_valued_floats():
    ranker = GradedRanker().fit(np.zeros((3, 1)), np.array([0.0, 2.0, 1.0]), qid=[1, 1, 1])
    np.testing.assert_array_equal(ranker.data_.y, [0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="integer relevance grades"):
        GradedRanker().fit(np.zeros((3, 1)), np.array([0.0, 2.5, 1.0]), qid=[1, 1, 1])


def test_predict_checks_fitted_and_feature_count(data):
    X, y, qid = data
    with pytest.raises(sklearn.exceptions.NotFittedError):
        DummyRanker().predict(X)
    ranker = DummyRanker().fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="X has 3 features, but DummyRanker is expecting 8 features"):
        ranker.predict(X[:, :3])


@pytest.mark.parametrize(
    "estimator",
    [
        LambdaMART(n_estimators=8, random_state=0),
        LambdaMART(n_estimators=8, objective="c-kl", random_state=0),
        RFListRanker(n_estimators=4, random_state=0),
        RFHybridRanker(n_estimators=4, random_state=0),
    ],
    ids=repr,
)
def test_grades_past_float64s_exponent_fit_the_model_of_large_grades(estimator):
    """Past grade 53, 2**l - 1 rounds to 2**l, so grades shifted by 100 or by 1000 have
    proportional gains in every query and must give the same trees; 2**1000 - 1 and its
    sums overflowed float64 and fitted constant models."""
    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    near = clone(estimator).fit(X, y + 100, qid=q).predict(X)
    far = clone(estimator).fit(X, y + 1000, qid=q).predict(X)
    assert len(np.unique(far)) > 20
    # The same trees: forests' leaves average the grades, so their values move by 900.
    np.testing.assert_allclose(far - far.mean(), near - near.mean(), rtol=0, atol=1e-10)


def test_exponential_targets_that_overflow_are_refused_by_name():
    X, y, q = make_ranking(10, (5, 8), 4, random_state=0)
    with pytest.raises(ValueError, match="target='exp_gain'.*grades above 480"):
        LambdaMART(n_estimators=2, objective="mart", target="exp_gain").fit(X, y + 1100, qid=q)
    with pytest.raises(ValueError, match="relevance_weights='exp'"):
        RFPointRanker(n_estimators=2, relevance_weights="exp").fit(X, y + 1100, qid=q)


@pytest.mark.parametrize(
    "estimator",
    [
        RFPointRanker(n_estimators=3, random_state=0),
        RFListRanker(n_estimators=3, random_state=0),
        LambdaMART(n_estimators=3, random_state=0),
        PLRank(n_estimators=3, random_state=0),
        BROOF(n_estimators=2, n_trees=4, random_state=0),
        DummyRanker(strategy="best_feature"),
        AveragedRanker(LambdaMART(n_estimators=2), n_models=2, n_jobs=1, random_state=0),
    ],
    ids=lambda estimator: type(estimator).__name__,
)
def test_a_fit_that_raises_leaves_the_model_as_it_was(estimator):
    """A re-fit on 5 columns that failed on a NaN label had already set n_features_in_ = 5,
    and predict then read the old trees' columns 5-7 from outside each row."""
    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    model = clone(estimator).fit(X, y, qid=q)
    before = model.predict(X)
    state = sorted(name for name in vars(model))
    y_nan = y.astype(float)
    y_nan[3] = np.nan
    with pytest.raises(ValueError, match="y contains non-finite values"):
        model.fit(X[:, :5], y_nan, qid=q)
    assert model.n_features_in_ == 8 and sorted(vars(model)) == state
    np.testing.assert_array_equal(model.predict(X), before)
    with pytest.raises(ValueError, match="X has 5 features"):
        model.predict(X[:, :5])


def test_a_warm_start_on_another_width_is_refused_by_name_and_changes_nothing():
    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    forest = RFPointRanker(n_estimators=3, warm_start=True, random_state=0).fit(X, y, qid=q)
    before = forest.predict(X)
    forest.set_params(n_estimators=5)
    with pytest.raises(ValueError, match="X has 5 features, but RFPointRanker continues .* fitted on 8 features"):
        forest.fit(X[:, :5], y, qid=q)
    assert forest.n_features_in_ == 8 and len(forest.trees_) == 3
    np.testing.assert_array_equal(forest.predict(X), before)


@pytest.mark.parametrize("subsample", [1.0, 0.9])
def test_an_interrupted_fit_leaves_the_model_as_it_was(monkeypatch, subsample):
    """Ctrl-C during the trees, raised by the second call that grows them: of the compiled
    loop (``subsample=1``, which returns to Python between its calls so that Ctrl-C is
    seen), or of the tree grower on the per-iteration path (``subsample < 1``)."""
    from forestrank.ensemble import _boosting
    from forestrank.ensemble._compiled_boosting import CompiledBoosting

    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    model = LambdaMART(n_estimators=4, subsample=subsample, random_state=0).fit(X, y, qid=q)
    before = model.predict(X)
    owner, name = (CompiledBoosting, "grow") if subsample == 1.0 else (_boosting, "grow_tree")
    grow, calls = getattr(owner, name), []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return grow(*args, **kwargs)

    monkeypatch.setattr(owner, name, interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.set_params(n_estimators=6).fit(X[:, :6], y, qid=q)
    assert model.n_features_in_ == 8 and model.n_iter_ == 4
    np.testing.assert_array_equal(model.predict(X), before)



def test_pipeline_score_and_a_search_without_scoring_work_under_metadata_routing():
    """Pipeline.score passes sample_weight to the last step's score; without that
    parameter it raised under routing and GridSearchCV's best_score_ was NaN."""
    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    pipe = make_pipeline(StandardScaler(), DummyRanker(strategy="best_feature"))
    with sklearn.config_context(enable_metadata_routing=True):
        pipe.fit(X, y, qid=q)
        assert pipe.score(X, y, qid=q) == ndcg_score(y, pipe.predict(X), q, k=10)
        search = GridSearchCV(pipe, {"dummyranker__strategy": ["best_feature", "constant"]}, cv=QueryKFold(3))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a failed score is only a warning in the search
            search.fit(X, y, qid=q)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


def test_score_weighs_each_query_by_the_mean_weight_of_its_rows():
    X, y, q = make_ranking(12, (3, 9), 5, random_state=1)
    model = DummyRanker(strategy="best_feature").fit(X, y, qid=q)
    weights = np.random.default_rng(0).uniform(0, 3, len(y))
    per_query = ndcg_score(y, model.predict(X), q, k=10, per_query=True)
    query_weight = np.array([weights[q == query].mean() for query in np.unique(q)])
    expected = (per_query * query_weight).sum() / query_weight.sum()
    assert model.score(X, y, qid=q, sample_weight=weights) == pytest.approx(expected, rel=1e-14)
    assert model.score(X, y, qid=q, sample_weight=np.ones(len(y))) == pytest.approx(model.score(X, y, qid=q), rel=1e-15)
    # the weights of score's rows are checked against X (they named ndcg_score's y_true)
    with pytest.raises(ValueError, match="sample_weight has 3 entries but X has"):
        model.score(X, y, qid=q, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="qid has 3 entries but X has"):
        model.score(X, y, qid=q[:3])
    # weights near float64's largest summed to inf, and the mean was NaN
    huge = model.score(X, y, qid=q, sample_weight=weights / weights.max() * 1e308)
    assert huge == pytest.approx(expected, rel=1e-14)
    assert model.score(X, y, qid=q, sample_weight=np.full(len(y), 1e308)) == pytest.approx(model.score(X, y, qid=q), rel=1e-15)


def test_score_names_label_gain_for_a_grade_beyond_it():
    """The error named evaluate's ``gain`` and ``y_true``, which score does not take."""
    X, y, q = make_ranking(12, (3, 9), 5, n_grades=4, random_state=1)
    model = LambdaMART(n_estimators=2, label_gain=[0, 1, 3, 7]).fit(X, y, qid=q)
    with pytest.raises(ValueError, match="^label_gain gives gains to the grades 0 to 3; y holds 4"):
        model.score(X, np.where(y == 3, 4, y), qid=q)


@pytest.mark.parametrize(
    "estimator",
    [
        DummyRanker(strategy="best_feature"),
        RFPointRanker(n_estimators=3, random_state=0),
        RFListRanker(n_estimators=2, random_state=0),
        LambdaMART(n_estimators=3, random_state=0),
        PLRank(n_estimators=3, random_state=0),
    ],
    ids=lambda estimator: type(estimator).__name__,
)
def test_values_and_weights_near_float64s_limit_fit_without_warnings(estimator):
    """Feature values near 1.7e308 gave overflow warnings (bin midpoints, scikit-learn's
    finiteness sum); weights near it overflowed the dummy ranker's mean to -inf."""
    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    huge = X / np.abs(X).max() * 1.7e308
    weights = np.random.default_rng(0).integers(1, 4, q.max() + 1)[q] * 5e307  # one weight per query (PLRank's)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = clone(estimator).fit(huge, y, qid=q)
        scores = model.predict(huge)
        weighted = clone(estimator).fit(X, y, qid=q, sample_weight=weights)
    assert np.isfinite(scores).all() and len(np.unique(scores)) > 5
    assert np.isfinite(weighted.predict(X)).all()
    reference = clone(estimator).fit(X, y, qid=q, sample_weight=weights / 5e307).predict(X)
    np.testing.assert_array_equal(weighted.predict(X), reference)


def test_one_document_per_query_warns_at_the_callers_line():
    """qid = the row index by mistake fitted a constant model silently."""
    X, y, _ = make_ranking(10, (5, 8), 4, random_state=0)
    with pytest.warns(UserWarning, match="every one of the .* queries in qid holds a single document") as caught:
        LambdaMART(n_estimators=2).fit(X, y, qid=np.arange(len(y)))
    assert caught[0].filename == __file__


@pytest.mark.parametrize(
    "estimator",
    [
        RFPointRanker(n_estimators=2, random_state=0),
        RFListRanker(n_estimators=2, random_state=0),
        RFHybridRanker(n_estimators=2, random_state=0),
        LambdaMART(n_estimators=2, random_state=0),
        LambdaMART(n_estimators=2, objective="mcrank", random_state=0),
        LambdaMART(n_estimators=2, objective="c-mart", random_state=0),
        PLRank(n_estimators=2, random_state=0),
        BROOF(n_estimators=2, n_trees=2, random_state=0),
        AveragedRanker(LambdaMART(n_estimators=2), n_models=2, random_state=0),
        DummyRanker(),
    ],
    ids=lambda estimator: f"{type(estimator).__name__}({getattr(estimator, 'objective', '')})",
)
def test_dir_lists_what_can_be_read_before_and_after_the_fit(estimator, data):
    """``dir()`` (tab completion, ``inspect``, ``help``) works on unfitted and fitted models:
    scikit-learn's ``__dir__`` keeps the names ``hasattr`` accepts, so a property that raises
    anything but AttributeError (a fitted LambdaRank model's grade properties did) breaks it."""
    X, y, qid = data
    for model in (clone(estimator), clone(estimator).fit(X, y, qid=qid)):
        for name in dir(model):
            getattr(model, name, None)


def test_a_dummys_predictions_follow_its_fit_not_parameters_set_after_it(data):
    """``DummyRanker.predict`` read ``strategy`` from the parameters: set after the fit, it
    changed the predictions, or (a constant fit asked for the best feature) raised."""
    X, y, qid = data
    best = DummyRanker(strategy="best_feature").fit(X, y, qid=qid)
    expected = best.predict(X)
    np.testing.assert_array_equal(best.set_params(strategy="constant").predict(X), expected)
    constant = DummyRanker(strategy="constant").fit(X, y, qid=qid)
    np.testing.assert_array_equal(constant.set_params(strategy="best_feature").predict(X), np.zeros(len(X)))


def test_a_constant_dummy_says_it_ignores_k(data):
    """k chooses best_feature's feature: with strategy='constant' it was taken and ignored."""
    X, y, qid = data
    with pytest.warns(UserWarning, match="k=3 is the cutoff that strategy='best_feature' chooses its feature by") as caught:
        DummyRanker(strategy="constant", k=3).fit(X, y, qid=qid)
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DummyRanker(strategy="constant").fit(X, y, qid=qid)
        DummyRanker(strategy="best_feature", k=3).fit(X, y, qid=qid)
