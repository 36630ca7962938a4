"""Transfer learning between ranking populations: the cross-fitted domain classifier
(``select_similar``) and a source model's predictions as features (``ModelFeatures``)."""

import numpy as np
import pytest
import sklearn
from scipy.stats import spearmanr
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

from forestrank import LambdaMART, QueryKFold, RFPointRanker, make_ranking, ndcg_scorer
from forestrank.transfer import ModelFeatures, select_similar


@pytest.fixture(scope="module")
def populations():
    """Source rows with feature 0 around 0, target rows around 2: a shift the classifier can see."""
    rng = np.random.default_rng(0)
    source = rng.normal(size=(600, 4))
    target = rng.normal(size=(150, 4))
    target[:, 0] += 2.0
    qid_source = np.repeat(np.arange(60), 10)
    return source, target, qid_source


def test_rows_are_a_permutation_ranked_by_the_probability(populations):
    source, target, _ = populations
    rows, probabilities = select_similar(source, target)
    np.testing.assert_array_equal(np.sort(rows), np.arange(len(source)))
    assert np.all(np.diff(probabilities) <= 0) and 0 <= probabilities.min() and probabilities.max() <= 1
    # The shifted feature is what makes a source row look like the target.
    assert spearmanr(source[rows, 0], probabilities)[0] > 0.7
    assert source[rows[:60], 0].mean() > source[rows[-60:], 0].mean() + 1.5


@pytest.mark.parametrize("by_query", [False, True])
def test_each_source_row_is_scored_by_a_classifier_that_did_not_see_it(populations, by_query):
    """The cross-fitting by hand: fold by fold, a logistic regression on the target rows and
    the other folds' source rows, the two populations weighted equally."""
    source, target, qid_source = populations
    rows, probabilities = select_similar(
        source, target, classifier=LogisticRegression(), qid_source=qid_source if by_query else None, random_state=3
    )  # fmt: skip
    folds = GroupKFold(5).split(source, groups=qid_source) if by_query else KFold(5, shuffle=True, random_state=3).split(source)
    expected = np.empty(len(source))
    for train, held in folds:
        X = np.vstack([source[train], target])
        y = np.r_[np.zeros(len(train)), np.ones(len(target))]
        weight = np.r_[np.full(len(train), len(y) / (2 * len(train))), np.full(len(target), len(y) / (2 * len(target)))]
        expected[held] = LogisticRegression().fit(X, y, sample_weight=weight).predict_proba(source[held])[:, 1]
    np.testing.assert_allclose(probabilities, expected[rows], rtol=1e-12)
    np.testing.assert_array_equal(rows, np.argsort(-expected, kind="stable"))


@pytest.mark.parametrize(
    ("arguments", "match"),
    [
        (dict(X_target=np.zeros((5, 3))), "X_source and X_target must have the same features"),
        (dict(n_splits=1), "n_splits must be an integer >= 2"),
        (dict(classifier=LinearRegression()), "classifier must be a scikit-learn classifier"),
        # It passed the check and failed in fit with a TypeError naming no argument of select_similar.
        (dict(classifier=KNeighborsClassifier()), "classifier must be .* whose fit takes sample_weight"),
        # fit(**params) passes the check; without routing the Pipeline refused the weights in scikit-learn's words
        (dict(classifier=make_pipeline(LogisticRegression())), "classifier must take sample_weight in fit .* Pipeline.fit refused it"),
        (dict(qid_source=np.repeat(np.arange(3), 200)), "qid_source has 3 queries"),
        (dict(X_source=np.full((600, 4), np.inf)), "X_source"),
        # check_qid's message called it qid, which select_similar does not take
        (dict(qid_source=np.arange(599)), "qid_source has 599 entries but X_source has 600 rows"),
    ],
)
def test_bad_arguments_are_refused_by_name(populations, arguments, match):
    source, target, _ = populations
    call = dict(X_source=source, X_target=target) | arguments
    with pytest.raises(ValueError, match=match):
        select_similar(call.pop("X_source"), call.pop("X_target"), **call)


def test_frames_of_the_same_columns_in_another_order_are_refused(populations):
    """Two frames of the same columns in another order were read by position: the
    classifier told the populations apart by features that were not the same."""
    pandas = pytest.importorskip("pandas")
    source, target, _ = populations
    columns = ["a", "b", "c", "d"]
    X_source, X_target = pandas.DataFrame(source, columns=columns), pandas.DataFrame(target, columns=columns)
    with pytest.raises(ValueError, match=r"X_source has the columns \['a', 'b', 'c', 'd'\] and X_target \['d', 'c', 'b', 'a'\]"):
        select_similar(X_source, X_target[columns[::-1]])
    # integer or mixed names: scikit-learn's feature names ignore the one, refuse the other
    numbered_source, numbered_target = pandas.DataFrame(source), pandas.DataFrame(target)
    with pytest.raises(ValueError, match=r"X_source has the columns \[0, 1, 2, 3\] and X_target \[3, 2, 1, 0\]"):
        select_similar(numbered_source, numbered_target[[3, 2, 1, 0]])
    mixed = [0, "b", "c", "d"]
    rows, probabilities = select_similar(X_source.set_axis(mixed, axis=1), X_target.set_axis(mixed, axis=1), classifier=LogisticRegression())
    expected = select_similar(source, target, classifier=LogisticRegression())
    np.testing.assert_array_equal(rows, expected[0])
    rows, probabilities = select_similar(X_source, X_target, classifier=LogisticRegression())
    np.testing.assert_array_equal(rows, expected[0])
    np.testing.assert_array_equal(probabilities, expected[1])


@pytest.fixture(scope="module")
def ranking():
    X, y, qid = make_ranking(n_queries=120, docs_per_query=15, n_features=6, random_state=1)
    source = qid < 80
    model = LambdaMART(objective="cumulative", n_estimators=10, random_state=0).fit(X[source], y[source], qid=qid[source])
    return X[~source], y[~source], qid[~source], model


def test_the_appended_columns_are_the_models_outputs(ranking):
    X, _, _, model = ranking
    np.testing.assert_array_equal(ModelFeatures(model, kind="Q").fit(X).transform(X), np.column_stack([X, model.predict(X)]))
    probabilities = model.predict_grade_proba(X)
    np.testing.assert_array_equal(ModelFeatures(model, kind="P").fit(X).transform(X), np.column_stack([X, probabilities]))
    cumulative = ModelFeatures(model, kind="C").fit(X).transform(X)[:, X.shape[1] :]
    np.testing.assert_allclose(cumulative[:, 0], probabilities[:, 0])
    np.testing.assert_allclose(cumulative[:, -1], 1.0 - probabilities[:, -1])
    assert cumulative.shape[1] == len(model.classes_) - 1


def test_grid_search_tunes_the_kind_in_a_pipeline_with_the_source_model_fitted(ranking):
    X, y, qid, model = ranking
    with sklearn.config_context(enable_metadata_routing=True):
        pipeline = make_pipeline(ModelFeatures(model), LambdaMART(n_estimators=5, random_state=0))
        search = GridSearchCV(pipeline, {"modelfeatures__kind": ["Q", "P", "C"]}, cv=QueryKFold(3), scoring=ndcg_scorer(10))
        search.fit(X, y, qid=qid)
    scores = search.cv_results_["mean_test_score"]
    assert len(set(np.round(scores, 12))) == 3  # each candidate appended its own columns
    assert clone(ModelFeatures(model)).model is model


def test_the_models_own_parameters_are_not_set_through_it(ranking):
    """A search over ``modelfeatures__model__learning_rate`` set it on the caller's fitted
    model, which was never refitted: every candidate scored alike, and the caller's model
    then reported a learning rate its trees were not fitted with."""
    X, y, qid, model = ranking
    pipeline = make_pipeline(ModelFeatures(model), LambdaMART(n_estimators=5, random_state=0))
    assert not any(key.startswith("modelfeatures__model__") for key in pipeline.get_params())
    search = GridSearchCV(pipeline, {"modelfeatures__model__learning_rate": [0.5, 0.9]}, cv=GroupKFold(3), error_score="raise")
    with pytest.raises(ValueError, match=r"uses its model as fitted, so the model's parameters cannot be set through it \(model__learning_rate\)"):
        search.fit(X, y, groups=qid)
    assert model.learning_rate == 0.1
    other = clone(model).set_params(n_estimators=3).fit(X, y, qid=qid)
    assert ModelFeatures(model).set_params(model=other, kind="P").model is other


def test_a_clone_keeps_the_output_container(ranking):
    """The clone dropped ``set_output``: a pipeline's search got arrays where the direct fit
    got frames (and a column selector by name failed under ``cross_validate``)."""
    pd = pytest.importorskip("pandas")
    X, _, _, model = ranking
    twin = clone(ModelFeatures(model).set_output(transform="pandas"))
    assert twin.model is model
    assert isinstance(twin.fit(X).transform(X), pd.DataFrame)


def test_a_kind_the_model_cannot_give_is_refused_by_name(ranking):
    X, y, qid, _ = ranking
    forest = RFPointRanker(n_estimators=3).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="kind='P' appends its grade probabilities"):
        ModelFeatures(forest, kind="P").fit(X)
    with pytest.raises(NotFittedError):
        ModelFeatures(LambdaMART()).fit(X)
    with pytest.raises(ValueError, match="kind"):
        ModelFeatures(forest, kind="Z").fit(X)


def test_feature_names_and_widths(ranking):
    X, _, _, model = ranking
    import pandas as pd

    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    transformer = ModelFeatures(model, kind="C").fit(frame)
    assert list(transformer.get_feature_names_out())[-5:] == ["f5", "model_C0", "model_C1", "model_C2", "model_C3"]
    assert transformer.n_added_ == len(model.classes_) - 1 == 4
    with pytest.raises(ValueError, match="feature names"):
        transformer.transform(frame.iloc[:, :3])


def test_a_source_fitted_on_a_frame_reads_the_columns_by_name():
    """The source model got ``transform``'s rows as an array, by position: a frame of its
    columns in another order was misread without a word, and the same order warned on
    every call that X had no feature names (as a boosting ``init`` did)."""
    import warnings

    pd = pytest.importorskip("pandas")
    X, y, qid = make_ranking(n_queries=20, docs_per_query=8, n_features=4, random_state=0)
    frame = pd.DataFrame(X, columns=list("abcd"))
    source = LambdaMART(n_estimators=3, random_state=0).fit(frame, y, qid=qid)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        added = ModelFeatures(source).fit(frame).transform(frame)
    np.testing.assert_array_equal(added[:, -1], source.predict(frame))
    with pytest.raises(ValueError, match="model was fitted on the columns .* give X the model's columns"):
        ModelFeatures(source).fit(frame[list("dcba")])
    # a refused refit leaves the fitted transformer as it was (it kept the refused names)
    fitted = ModelFeatures(source).fit(frame)
    with pytest.raises(ValueError, match="model was fitted on the columns"):
        fitted.fit(frame[list("dcba")])
    assert list(fitted.feature_names_in_) == list("abcd")
    np.testing.assert_array_equal(fitted.transform(frame), added)


def test_a_source_with_category_columns_reads_them_by_value_and_text_is_refused_by_name():
    """The source got the frame as float codes' positions: a category column of the values
    10-40 was read as codes past its categories (unseen, so missing), and a column of
    strings failed with numpy's bare conversion error."""
    pd = pytest.importorskip("pandas")
    X, y, qid = make_ranking(n_queries=30, docs_per_query=8, n_features=3, random_state=0)
    brand = np.random.default_rng(0).integers(0, 4, len(y))
    y = np.where(brand >= 2, np.minimum(y + 2, 4), y)
    frame = pd.DataFrame(X, columns=list("abc"))
    frame["brand"] = pd.Categorical(brand * 10 + 10)
    source = LambdaMART(n_estimators=5, categorical_features="from_dtype", random_state=0).fit(frame, y, qid=qid)
    added = ModelFeatures(source).fit(frame).transform(frame)
    np.testing.assert_array_equal(added[:, -1], source.predict(frame))
    np.testing.assert_array_equal(added[:, -2], brand * 10 + 10)
    frame["brand"] = pd.Categorical(np.array(["acme", "bolt", "crux", "dyne"])[brand])
    named = LambdaMART(n_estimators=5, categorical_features="from_dtype", random_state=0).fit(frame, y, qid=qid)
    with pytest.raises(ValueError, match="ModelFeatures returns X and the model's outputs as one float64 array"):
        ModelFeatures(named).fit(frame)
