"""Mohan's classification boosting (``objective="cumulative"``) and the relevance weights of
the per-grade objectives (thesis, ch. 3)."""

import numpy as np
import pytest

from forestrank import LambdaMART, make_ranking, ndcg_score
from forestrank.export import to_onnx

import reference


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=120, docs_per_query=(5, 30), n_features=8, random_state=0)


def raw_by_hand(model, X):
    """Each output's baseline plus its own trees, summed tree by tree."""
    raw = np.tile(model.baseline_, (len(X), 1))
    for index, tree in enumerate(model.trees_):
        raw[:, index % model.n_outputs_] += tree.predict(X)
    return raw


def test_each_cumulative_output_is_mart_on_its_indicator(data):
    """The K - 1 regressions do not interact: output c is MART-2 fitted on [y <= c]. Trees
    grown level by level: best-first growth orders leaves of equal gain (common on 0/1
    targets) by each tree's random stream, which differs per output."""
    X, y, qid = data
    settings = dict(n_estimators=15, max_leaf_nodes=None, max_depth=3, random_state=0)
    model = LambdaMART(objective="cumulative", **settings).fit(X, y, qid=qid)
    raw = raw_by_hand(model, X)
    for c, grade in enumerate(model.classes_[:-1]):
        mart = LambdaMART(objective="mart", **settings).fit(X, (y <= grade).astype(float), qid=qid)
        np.testing.assert_allclose(raw[:, c], mart.predict(X), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("relevance_weights", "F"), [("linear", lambda c: c), ("square", lambda c: c**2), ("exp", lambda c: 2.0**c)])
def test_the_score_is_eq_3_1_on_the_corrected_probabilities(data, relevance_weights, F):
    """``sum_c F(c) P(c)``; with ``F(c) = c`` the expected relevance of Eq. 3.4."""
    X, y, qid = data
    model = LambdaMART(objective="cumulative", relevance_weights=relevance_weights, n_estimators=15, random_state=0)
    model.fit(X, y, qid=qid)
    probabilities = np.asarray(reference.cumulative_probabilities(raw_by_hand(model, X)))
    assert probabilities.min() >= 0.0
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.predict_grade_proba(X), probabilities, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.predict(X), probabilities @ F(model.classes_), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(model.relevance_weights_, F(model.classes_))


@pytest.mark.parametrize("objective", ["cumulative", "mcrank"])
def test_fitted_weights_are_least_squares_on_the_training_probabilities(data, objective):
    X, y, qid = data
    model = LambdaMART(objective=objective, relevance_weights="fitted", n_estimators=15, random_state=0).fit(X, y, qid=qid)
    probabilities = model.predict_grade_proba(X)
    expected = np.linalg.lstsq(probabilities, y, rcond=None)[0]
    np.testing.assert_allclose(model.relevance_weights_, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(model.predict(X), probabilities @ expected, rtol=1e-9, atol=1e-9)
    if objective == "cumulative":
        # Eqs. 3.5-3.8: an intercept and the cumulative predictions give the same fitted values.
        cumulative = np.cumsum(probabilities, axis=1)[:, :-1]
        design = np.column_stack([np.ones(len(y)), cumulative])
        np.testing.assert_allclose(model.predict(X), design @ np.linalg.lstsq(design, y, rcond=None)[0], rtol=1e-9, atol=1e-9)


def test_fitted_weights_are_weighted_least_squares_with_sample_weight(data):
    X, y, qid = data
    weight = np.repeat(np.random.default_rng(0).uniform(0.2, 3.0, 120), np.bincount(qid))  # one weight per query
    model = LambdaMART(objective="cumulative", relevance_weights="fitted", n_estimators=10, random_state=0)
    model.fit(X, y, qid=qid, sample_weight=weight)
    root = np.sqrt(weight)
    expected = np.linalg.lstsq(model.predict_grade_proba(X) * root[:, None], y * root, rcond=None)[0]
    np.testing.assert_allclose(model.relevance_weights_, expected, rtol=1e-9, atol=1e-9)
    unweighted = np.linalg.lstsq(model.predict_grade_proba(X), y, rcond=None)[0]
    assert np.abs(model.relevance_weights_ - unweighted).max() > 1e-6


def test_a_fitted_model_reads_its_trees_by_its_fitted_shape_not_its_parameters(data):
    X, y, qid = data
    model = LambdaMART(objective="mcrank", n_estimators=3, random_state=0).fit(X, y, qid=qid)
    before = model.predict(X)
    np.testing.assert_array_equal(model.set_params(objective="cumulative").predict(X), before)
    refit = LambdaMART(objective="cumulative", relevance_weights="fitted", n_estimators=3).fit(X, y, qid=qid)
    refit.set_params(objective="lambdarank", relevance_weights="linear").fit(X, y, qid=qid)
    assert not hasattr(refit, "relevance_weights_")


def test_fitted_weights_follow_the_iterations_early_stopping_keeps(data):
    X, y, qid = data
    valid = qid >= 90
    model = LambdaMART(
        objective="cumulative", relevance_weights="fitted", n_estimators=200, learning_rate=0.5, n_iter_no_change=3,
        random_state=0,
    ).fit(X[~valid], y[~valid], qid=qid[~valid], eval_set=[(X[valid], y[valid], qid[valid])])  # fmt: skip
    assert model.n_iter_ < 200
    expected = np.linalg.lstsq(model.predict_grade_proba(X[~valid]), y[~valid], rcond=None)[0]
    np.testing.assert_allclose(model.relevance_weights_, expected, rtol=1e-9, atol=1e-9)


def test_two_grades_give_one_regression_whose_complement_ranks(data):
    """With grades 0 and 1 the single output estimates P(y <= 0): the score is P(y = 1),
    not the raw output (which would rank the list upside down)."""
    X, y, qid = data
    binary = (y >= 2).astype(float)
    model = LambdaMART(objective="cumulative", n_estimators=10, random_state=0).fit(X, binary, qid=qid)
    assert model.n_outputs_ == 1
    raw = raw_by_hand(model, X)[:, 0]
    np.testing.assert_allclose(model.predict(X), 1.0 - np.clip(raw, 0.0, 1.0), rtol=0, atol=1e-12)
    assert ndcg_score(binary, model.predict(X), qid, k=10) > ndcg_score(binary, raw, qid, k=10)


def test_mcrank_with_its_default_weights_is_the_expected_grade(data):
    X, y, qid = data
    model = LambdaMART(objective="mcrank", n_estimators=5, random_state=0).fit(X, y, qid=qid)
    raw = raw_by_hand(model, X)
    softmax = np.exp(raw - raw.max(axis=1, keepdims=True))
    softmax /= softmax.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict(X), softmax @ model.classes_, rtol=1e-12)


def test_predict_grade_proba_exists_for_the_per_grade_objectives_only(data):
    X, y, qid = data
    assert not hasattr(LambdaMART(), "predict_grade_proba")
    assert not hasattr(LambdaMART(objective="mart"), "predict_grade_proba")
    assert hasattr(LambdaMART(objective="cumulative"), "predict_grade_proba")
    model = LambdaMART(objective="mcrank", n_estimators=3).fit(X, y, qid=qid)
    np.testing.assert_allclose(model.predict_grade_proba(X).sum(axis=1), 1.0)


@pytest.mark.parametrize(
    ("model", "y_scale", "match"),
    [
        *[
            (LambdaMART(objective=objective, relevance_weights="square"), 1, f"objective='{objective}' has none")
            for objective in ("lambdarank", "xendcg", "mart", "c-mart", "cosine", "kl")
        ],
        (LambdaMART(objective="cumulative"), 0.5, "y must hold integer grades|integer"),
        (LambdaMART(objective="cumulative", relevance_weights="exp"), 300, "relevance_weights='exp' weighs grade c by 2\\*\\*c"),
        (LambdaMART(objective="cumulative", relevance_weights="max"), 1, "relevance_weights"),
    ],
)  # fmt: skip
def test_bad_relevance_weights_are_refused_by_name(data, model, y_scale, match):
    X, y, qid = data
    with pytest.raises(ValueError, match=match):
        model.set_params(n_estimators=2).fit(X, y * y_scale, qid=qid)


def test_cumulative_boosting_refuses_export_by_name(data):
    pytest.importorskip("onnx")
    X, y, qid = data
    model = LambdaMART(objective="cumulative", n_estimators=2).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="objective='cumulative'.*cannot be exported"):
        to_onnx(model)
