"""forestrank's JSON dump of the trees, evaluated by a plain-Python reader."""

import json

import numpy as np
import pytest

from forestrank import LambdaMART, make_ranking
from forestrank.export import dump_trees

from .models import fitted, missing_data


def _evaluate_dump(dump, X):
    """An independent evaluator of ``dump_trees`` output in plain Python."""
    raw = np.tile(np.asarray(dump["base"]), (len(X), 1))
    for tree in dump["trees"]:
        nodes = {node["node"]: node for node in tree["nodes"]}
        for row, x in enumerate(X):
            node = nodes[0]
            while "value" not in node:
                value = x[node["feature"]]
                left = value <= float(node["threshold"]) or (np.isnan(value) and node["missing"] == "left")
                node = nodes[node["left"] if left else node["right"]]
            raw[row, tree["target"]] += tree["weight"] * node["value"]
    if dump["grade_weights"] is None:
        return raw[:, 0]
    probabilities = np.exp(raw - raw.max(axis=1, keepdims=True))
    return probabilities @ np.asarray(dump["grade_weights"]) / probabilities.sum(axis=1)


@pytest.mark.parametrize("name", ["RF-point three-way", "IGBRT", "McRank", "BROOF", "AveragedRanker"])
def test_the_json_dump_holds_the_whole_model(name):
    X, _, _ = missing_data()
    model = fitted(name, "missing")
    dump = json.loads(json.dumps(dump_trees(model)))
    np.testing.assert_allclose(_evaluate_dump(dump, X[:300]), model.predict(X[:300]), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["RF-point three-way", "RF-point missing right"])
def test_the_dump_is_strict_json_with_infinite_thresholds_as_strings(name):
    """Splits sending only the missing values one way have infinite thresholds, which the
    dump wrote as -Infinity: not JSON, and refused by strict readers."""
    model = fitted(name, "missing")
    dump = dump_trees(model)
    thresholds = [node["threshold"] for tree in dump["trees"] for node in tree["nodes"] if "threshold" in node]
    assert "-Infinity" in thresholds or "Infinity" in thresholds
    assert all(isinstance(threshold, float) or threshold in ("Infinity", "-Infinity") for threshold in thresholds)
    text = json.dumps(dump, allow_nan=False)
    X, _, _ = missing_data()
    np.testing.assert_allclose(_evaluate_dump(json.loads(text), X[:300]), model.predict(X[:300]), rtol=1e-10, atol=1e-12)


def test_the_dump_and_the_tree_plot_count_the_rows_a_symmetric_tree_holds():
    """The exports' positive covers for TreeSHAP (a leaf no training row reached counted
    one row) reached the dump's and the tree plot's row counts: a root of 300 rows showed
    307."""
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=4, random_state=0)
    model = LambdaMART(n_estimators=5, grow_policy="symmetric", max_depth=4, random_state=0).fit(X, y, qid=qid)
    index = next(i for i, tree in enumerate(model.trees_) if (tree.n_node_samples == 0).any())  # the case this tests
    tree = model.trees_[index]
    nodes = dump_trees(model)["trees"][index]["nodes"]
    assert [node["samples"] for node in nodes] == tree.n_node_samples[[node["node"] for node in nodes]].tolist()
    assert nodes[0]["samples"] == len(X)
    pytest.importorskip("matplotlib")
    from forestrank.plotting import plot_tree

    boxes = [text.get_text() for text in plot_tree(model, index).texts if text.get_gid() is not None]
    assert [int(box.split("rows = ")[1].split("\n")[0]) for box in boxes] == tree.n_node_samples.tolist()
