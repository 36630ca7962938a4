"""TreeSHAP on forestrank rankers: additivity, the expected value, missing values."""

import numpy as np
import pytest

from forestrank import BROOF, LambdaMART, PLRank, RFListRanker, RFPointRanker, make_ranking
from forestrank.explain import shap_tree_model

shap = pytest.importorskip("shap", reason="explanations need forestrank[shap]")

ESTIMATORS = {
    "RF-point": lambda: RFPointRanker(n_estimators=6, random_state=0),
    "RF-point three-way": lambda: RFPointRanker(n_estimators=4, missing_direction="separate", random_state=0),
    "RF-list": lambda: RFListRanker(n_estimators=3, random_state=0),
    "LambdaMART": lambda: LambdaMART(n_estimators=15, random_state=0),
    "IGBRT": lambda: LambdaMART(n_estimators=5, objective="mart", init=RFPointRanker(n_estimators=3, random_state=0), random_state=0),
    "PLRank": lambda: PLRank(n_estimators=8, random_state=0),
    "BROOF": lambda: BROOF(n_estimators=2, n_trees=3, random_state=0),
    "LambdaMART symmetric": lambda: LambdaMART(n_estimators=5, grow_policy="symmetric", random_state=0),
    "PLRank symmetric": lambda: PLRank(n_estimators=4, grow_policy="symmetric", random_state=0),
}


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=60, docs_per_query=15, n_features=6, missing_fraction=0.3, random_state=0)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_shap_values_plus_the_expected_value_are_the_prediction(name, data):
    X, y, qid = data
    assert np.isnan(X).any()
    model = ESTIMATORS[name]().fit(X, y, qid=qid)
    explainer = shap.TreeExplainer(shap_tree_model(model))
    values = explainer.shap_values(X)
    np.testing.assert_allclose(values.sum(axis=1) + explainer.expected_value, model.predict(X), rtol=1e-9, atol=1e-9)
    # The expected value is the cover-weighted mean of the leaves (path-dependent TreeSHAP), computed here directly.
    tree_model = shap_tree_model(model)
    expected = tree_model["base_offset"] + sum(
        np.sum(t["values"][:, 0] * t["node_sample_weight"] * (t["children_left"] == -1)) / t["node_sample_weight"][0]
        for t in tree_model["trees"]
    )
    assert explainer.expected_value == pytest.approx(expected, rel=1e-9)


def test_symmetric_trees_have_leaves_no_row_reaches(data):
    """The symmetric models above reach the case shap refused ("the background dataset
    does not cover all the leaves"): leaves of no training weight, explained with a
    positive cover that keeps each the sum of its children's."""
    X, y, qid = data
    model = ESTIMATORS["LambdaMART symmetric"]().fit(X, y, qid=qid)
    assert any((tree.weighted_n_node_samples == 0).any() for tree in model.trees_)
    for tree in shap_tree_model(model)["trees"]:
        covers, left, right = tree["node_sample_weight"], tree["children_left"], tree["children_right"]
        inner = left >= 0
        assert (covers > 0).all()
        np.testing.assert_allclose(covers[inner], covers[left[inner]] + covers[right[inner]], rtol=1e-12)


def test_a_feature_the_model_never_splits_on_gets_no_credit(data):
    X, y, qid = data
    with_constant = np.hstack([X[:, :3], np.ones((len(X), 1))])  # a constant column: no split can use it
    model = LambdaMART(n_estimators=10, random_state=0).fit(with_constant, y, qid=qid)
    assert not any((tree.nodes["feature"] == 3).any() for tree in model.trees_)
    values = shap.TreeExplainer(shap_tree_model(model)).shap_values(with_constant)
    assert np.all(values[:, 3] == 0) and np.abs(values[:, :3]).sum() > 0


def test_models_that_are_no_sum_of_trees_over_x_are_refused_with_the_reason(data):
    X, y, qid = data
    model = LambdaMART(n_estimators=3, objective="mcrank", random_state=0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="not a sum over trees"):
        shap_tree_model(model)
    model = LambdaMART(n_estimators=3, objective="cumulative", random_state=0).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="it cannot be exported or explained by TreeSHAP"):
        shap_tree_model(model)
    codes = np.column_stack([np.arange(len(y)) % 4, X[:, 1]])
    model = LambdaMART(n_estimators=3, categorical_features=[0], cat_target_statistics=True, random_state=0)
    model.fit(codes, y, qid=qid)
    with pytest.raises(ValueError, match="its trees split on each category's target statistic, not on the categories"):
        shap_tree_model(model)  # the message was the exports', which told the user to export to ONNX
