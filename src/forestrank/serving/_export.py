"""Export fitted rankers: ONNX for serving outside Python, and a JSON dump of the trees.

:func:`to_onnx` writes every forestrank estimator as one ``ai.onnx.ml``
``TreeEnsembleRegressor`` (opset 3) whose thresholds, leaf values and base values are
double-precision tensors and whose input is float64: onnxruntime then takes the same
``x <= threshold`` decisions as forestrank on the same doubles, so a value equal to a
threshold goes left in both. (Float32 thresholds, the older attribute, would move a
value that lies between a threshold and its float32 rounding to the other side.) The
operator accumulates its output in float32, so scores agree to float32 rounding of the
sum (about 1e-7 relative), not bitwise. A missing value (NaN) follows each node's
learned direction (``nodes_missing_value_tracks_true``). The ensemble's combination is
folded into the leaf weights:

- forests: the mean of the trees (each leaf weighted ``1 / n_trees``);
- BROOF: ``sum_t a_t`` times each round's forest mean;
- boosting: the baseline plus every tree (IGBRT's forestrank ``init`` forest included);
- McRank: one target per grade, then ``softmax`` and the expected grade (``Softmax``,
  ``MatMul``).

:func:`dump_trees` gives the trees as plain JSON-serialisable dictionaries.
"""

import numpy as np

from .._version import __version__

_ONNX_HELP = 'ONNX export needs the onnx package: pip install "forestrank[onnx]"'


def to_onnx(model: object, *, name: str = "forestrank") -> object:
    """The fitted ``model`` as an ONNX ``ModelProto``: input ``X`` float64 (n_samples,
    n_features), output ``score`` float64 (n_samples,), equal to ``model.predict(X)``.

    Parameters
    ----------
    model : a fitted forestrank ranker
        RFPointRanker, RFListRanker, RFHybridRanker, LambdaMART (every objective;
        ``init`` a forestrank forest or None), PLRank or BROOF.
    name : str
        The graph's name.

    Returns
    -------
    onnx.ModelProto
    """
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as error:
        raise ImportError(_ONNX_HELP) from error

    terms, base, grade_weights = _ensemble(model)
    n_targets = len(base)
    attributes = {name: [] for name in (
        "nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_truenodeids",
        "nodes_falsenodeids", "nodes_missing_value_tracks_true", "target_treeids", "target_nodeids", "target_ids",
    )}  # fmt: skip
    thresholds, weights = [], []
    for tree_id, (tree, weight, target) in enumerate(terms):
        features = tree.nodes["feature"]
        lefts = tree.nodes["left"]
        values = tree.nodes["threshold"]
        for node in range(len(features)):
            attributes["nodes_treeids"].append(tree_id)
            attributes["nodes_nodeids"].append(node)
            if features[node] >= 0:
                attributes["nodes_featureids"].append(int(features[node]))
                attributes["nodes_modes"].append("BRANCH_LEQ")
                attributes["nodes_truenodeids"].append(int(lefts[node]))
                attributes["nodes_falsenodeids"].append(int(lefts[node]) + 1)
                attributes["nodes_missing_value_tracks_true"].append(int(tree.missing_left[node]))
                thresholds.append(float(values[node]))
            else:
                attributes["nodes_featureids"].append(0)
                attributes["nodes_modes"].append("LEAF")
                attributes["nodes_truenodeids"].append(0)
                attributes["nodes_falsenodeids"].append(0)
                attributes["nodes_missing_value_tracks_true"].append(0)
                thresholds.append(0.0)
                attributes["target_treeids"].append(tree_id)
                attributes["target_nodeids"].append(node)
                attributes["target_ids"].append(int(target))
                weights.append(weight * float(values[node]))
    ensemble = helper.make_node(
        "TreeEnsembleRegressor", ["X"], ["raw"], domain="ai.onnx.ml", n_targets=n_targets, aggregate_function="SUM",
        nodes_values_as_tensor=numpy_helper.from_array(np.asarray(thresholds, dtype=np.float64)),
        target_weights_as_tensor=numpy_helper.from_array(np.asarray(weights, dtype=np.float64)),
        base_values_as_tensor=numpy_helper.from_array(np.asarray(base, dtype=np.float64)),
        **attributes,
    )  # fmt: skip
    # The operator sums in float32 whatever its thresholds' type: the sums are cast back to double.
    nodes = [ensemble, helper.make_node("Cast", ["raw"], ["summed"], to=TensorProto.DOUBLE)]
    initializers = [numpy_helper.from_array(np.array([-1], dtype=np.int64), "flat")]
    last = "summed"
    if grade_weights is not None:  # McRank: sum_c F(c) softmax_c of the per-grade scores
        initializers.append(numpy_helper.from_array(np.asarray(grade_weights, dtype=np.float64).reshape(-1, 1), "grades"))
        nodes += [
            helper.make_node("Softmax", ["summed"], ["probabilities"], axis=1),
            helper.make_node("MatMul", ["probabilities", "grades"], ["expected"]),
        ]
        last = "expected"
    nodes.append(helper.make_node("Reshape", [last, "flat"], ["score"]))
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [None, model.n_features_in_])],
        [helper.make_tensor_value_info("score", TensorProto.DOUBLE, [None])], initializers,
    )  # fmt: skip
    onnx_model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)],
        producer_name="forestrank", producer_version=__version__,
    )  # fmt: skip
    onnx.checker.check_model(onnx_model)
    return onnx_model


def dump_trees(model: object) -> dict:
    """The ensemble as plain Python data (for ``json.dumps``): its terms, each tree's nodes
    (feature, threshold, children, where missing values go, value, documents) and how the
    terms combine (``"weight"`` of each tree, ``"target"`` output, ``"base"``; for McRank
    ``"grade_weights"``, the ``F(c)`` its softmax probabilities are weighted by)."""
    terms, base, grade_weights = _ensemble(model)
    trees = []
    for tree, weight, target in terms:
        nodes = []
        for node, record in enumerate(tree.nodes):
            entry = {"node": node, "samples": int(tree.n_node_samples[node])}
            if record["feature"] >= 0:
                entry.update(
                    feature=int(record["feature"]), threshold=float(record["threshold"]), left=int(record["left"]),
                    right=int(record["left"]) + 1, missing="left" if tree.missing_left[node] else "right",
                )  # fmt: skip
            else:
                entry["value"] = float(record["threshold"])
            nodes.append(entry)
        trees.append({"weight": float(weight), "target": int(target), "nodes": nodes})
    return {
        "estimator": type(model).__name__, "forestrank_version": __version__, "n_features": int(model.n_features_in_),
        "base": [float(value) for value in base],
        "grade_weights": None if grade_weights is None else [float(weight) for weight in grade_weights],
        "rule": "a row goes left when x <= threshold; NaN follows 'missing'", "trees": trees,
    }  # fmt: skip


def _ensemble(model: object) -> tuple[list, np.ndarray, np.ndarray | None]:
    """``([(tree, weight, target), ...], base values per target, grade weights or None)``:
    the model's prediction is ``sum weight * leaf value`` per target plus the base, then,
    for McRank, ``sum_c F(c) softmax_c`` of the targets with the grade weights ``F``. Each ensemble gives its
    own (``_additive_terms``)."""
    from sklearn.utils.validation import check_is_fitted

    if not hasattr(model, "_additive_terms"):
        raise TypeError(f"model must be a fitted forestrank ranker with trees; got {type(model).__name__}.")
    check_is_fitted(model)
    return model._additive_terms()
