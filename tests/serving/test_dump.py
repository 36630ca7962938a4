"""forestrank's JSON dump of the trees, evaluated by a plain-Python reader."""

import json

import numpy as np
import pytest

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
