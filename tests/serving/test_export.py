"""ONNX export against forestrank's own predictions, and the JSON dump of the trees."""

import json

import numpy as np
import pytest

from forestrank import BROOF, LambdaMART, PLRank, RFHybridRanker, RFListRanker, RFPointRanker, load_letor_fold, make_ranking
from forestrank.export import dump_trees, to_onnx

onnxruntime = pytest.importorskip("onnxruntime", reason='ONNX export needs forestrank[onnx]')

ESTIMATORS = {
    "RF-point": lambda: RFPointRanker(n_estimators=10, random_state=0),
    "RF-point three-way": lambda: RFPointRanker(n_estimators=5, missing_direction="separate", random_state=0),
    "RF-list": lambda: RFListRanker(n_estimators=4, random_state=0),
    "RF-hybrid": lambda: RFHybridRanker(n_estimators=4, listwise_depth=3, random_state=0),
    "LambdaMART": lambda: LambdaMART(n_estimators=20, random_state=0),
    "McRank": lambda: LambdaMART(n_estimators=5, objective="mcrank", random_state=0),
    "McRank, fitted grade weights": lambda: LambdaMART(
        n_estimators=5, objective="mcrank", relevance_weights="fitted", random_state=0
    ),
    "IGBRT": lambda: LambdaMART(n_estimators=5, objective="mart", init=RFPointRanker(n_estimators=4, random_state=0), random_state=0),
    "PLRank": lambda: PLRank(n_estimators=10, random_state=0),
    "BROOF": lambda: BROOF(n_estimators=3, n_trees=4, random_state=0),
}


def _onnx_scores(model, X):
    session = onnxruntime.InferenceSession(to_onnx(model).SerializeToString())
    return session.run(None, {"X": np.ascontiguousarray(X, dtype=np.float64)})[0]


@pytest.mark.dataset
@pytest.mark.parametrize("name", ESTIMATORS)
def test_onnxruntime_scores_equal_forestrank_on_mq2008(name, mq2008):
    (X, y, qid), _, (X_test, _, _) = load_letor_fold(mq2008 / "Fold1")
    model = ESTIMATORS[name]().fit(X, y, qid=qid)
    np.testing.assert_allclose(_onnx_scores(model, X_test), model.predict(X_test), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["RF-point", "RF-point three-way", "LambdaMART", "McRank", "BROOF"])
def test_missing_values_follow_the_learned_directions_in_onnx(name):
    X, y, qid = make_ranking(n_queries=80, docs_per_query=20, n_features=8, missing_fraction=0.3, random_state=0)
    model = ESTIMATORS[name]().fit(X, y, qid=qid)
    assert np.isnan(X).mean() > 0.05
    np.testing.assert_allclose(_onnx_scores(model, X), model.predict(X), rtol=1e-5, atol=1e-6)
    # A value exactly at a threshold goes left in both (doubles compared, not float32 roundings).
    tree = model.trees_[0] if hasattr(model, "trees_") else model.estimators_[0].trees_[0]
    split = np.flatnonzero((tree.nodes["feature"] >= 0) & np.isfinite(tree.nodes["threshold"]))[0]
    at_threshold = np.nan_to_num(X[:50].copy())
    at_threshold[:, tree.nodes["feature"][split]] = tree.nodes["threshold"][split]
    np.testing.assert_allclose(_onnx_scores(model, at_threshold), model.predict(at_threshold), rtol=1e-5, atol=1e-6)


def _evaluate_dump(dump, X):
    """An independent evaluator of ``dump_trees`` output in plain Python."""
    raw = np.tile(np.asarray(dump["base"]), (len(X), 1))
    for tree in dump["trees"]:
        nodes = {node["node"]: node for node in tree["nodes"]}
        for row, x in enumerate(X):
            node = nodes[0]
            while "value" not in node:
                value = x[node["feature"]]
                left = value <= node["threshold"] or (np.isnan(value) and node["missing"] == "left")
                node = nodes[node["left"] if left else node["right"]]
            raw[row, tree["target"]] += tree["weight"] * node["value"]
    if dump["grade_weights"] is None:
        return raw[:, 0]
    probabilities = np.exp(raw - raw.max(axis=1, keepdims=True))
    return probabilities @ np.asarray(dump["grade_weights"]) / probabilities.sum(axis=1)


@pytest.mark.parametrize("name", ["RF-point three-way", "IGBRT", "McRank", "BROOF"])
def test_the_json_dump_holds_the_whole_model(name):
    X, y, qid = make_ranking(n_queries=40, docs_per_query=15, n_features=6, missing_fraction=0.2, random_state=1)
    model = ESTIMATORS[name]().fit(X, y, qid=qid)
    dump = json.loads(json.dumps(dump_trees(model)))
    np.testing.assert_allclose(_evaluate_dump(dump, X), model.predict(X), rtol=1e-10, atol=1e-12)


def test_export_refuses_what_is_not_a_fitted_forestrank_ranker():
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.exceptions import NotFittedError

    with pytest.raises(TypeError, match="must be a fitted forestrank ranker"):
        to_onnx(RandomForestRegressor())
    with pytest.raises(NotFittedError):
        to_onnx(RFPointRanker())


def test_an_init_with_one_score_per_grade_is_refused():
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
    mcrank = LambdaMART(n_estimators=2, objective="mcrank", random_state=0).fit(X, y, qid=qid)
    model = LambdaMART(n_estimators=2, objective="mart", init=mcrank, random_state=0).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="init is a McRank model"):
        to_onnx(model)
