"""ONNX: one ``ai.onnx.ml`` ``TreeEnsembleRegressor`` (opset 3), for onnxruntime and
every runtime that implements the operator.

:func:`to_onnx` writes the model for float64 input (the default) or float32 input, the
dtype ONNX converters and most serving stacks use:

- float64: thresholds, leaf values and base values are double-precision tensors, so
  onnxruntime takes the same ``x <= threshold`` decisions as forestrank on the same
  doubles (a value equal to a threshold goes left in both);
- float32: each threshold is the largest float32 not above forestrank's double
  threshold (``_terms.float32_at_most``), so a float32 feature value takes exactly
  forestrank's branch for the same value; rounding the threshold to the nearest float32
  instead would move the values between it and its rounding to the other side. Behind
  a ``QueryScaler`` the graph normalises in double and the trees compare those doubles
  with double thresholds, as for float64 input: normalised values are not float32
  values, and rounding them would move those next to a threshold across it.

A categorical split becomes a chain of ``BRANCH_EQ`` tests, one per code of the set it
sends away from the side of missing values (``_terms.ExportTree.category_set``), each
test's false branch the next test, the last one's that side: opset 3 has no test of
set membership (``BRANCH_MEMBER`` came with ``ai.onnx.ml`` opset 5, which fewer
runtimes implement). A missing value fails every test (``missing_value_tracks_true``
0), as does a code the fit did not see, and both reach forestrank's leaf; a
non-integer value, which forestrank refuses, fails them too. A set of ``k`` codes costs
``k`` comparisons where forestrank reads one bit.

onnxruntime sums the leaves in double for float64 input (and behind a ``QueryScaler``)
and in float32 for float32 input; the operator's output is float32 either way, so scores agree to float32
rounding (about 1e-7 relative, and the float32 sum's rounding for float32 input), not
bitwise. A missing value (NaN)
follows each node's learned direction (``nodes_missing_value_tracks_true``); a runtime
that feeds an absent feature as NaN routes it as forestrank does. The ensemble's
combination is folded into the leaf weights:

- forests: the mean of the trees (each leaf weighted ``1 / n_trees``);
- BROOF: ``sum_t a_t`` times each round's forest mean;
- boosting: the baseline plus every tree (IGBRT's forestrank ``init`` forest included);
- McRank: one target per grade, then ``softmax`` and the expected grade (``Softmax``,
  ``MatMul``), the one export that expresses it;
- ``cat_target_statistics``: the statistics' columns computed from the codes before the
  trees (``_target_statistics_nodes``), the one export that does; float64 input only.
"""

import numpy as np

from .._version import __version__
from ._query_scaler import RECORD_KEY, query_normalisation_json, query_scaler_nodes, split_query_scaler
from ._terms import additive_terms, check_float32_scores, check_model_name, export_tree, float32_at_most

_ONNX_HELP = 'ONNX export needs the onnx package: pip install "forestrank[onnx]"'


def to_onnx(model: object, *, name: str = "forestrank", dtype: object = np.float64) -> object:
    """The fitted ``model`` as an ONNX ``ModelProto``: input ``X`` of ``dtype``
    (n_samples, n_features), output ``score`` of ``dtype`` (n_samples,), equal to
    ``model.predict(X)`` on the same values.

    Parameters
    ----------
    model : a fitted forestrank ranker or CalibratedRanker (its ranker), or a Pipeline of a QueryScaler and one
        RFPointRanker, RFListRanker, RFHybridRanker, LambdaMART (every objective but
        ``cumulative``; ``init`` a forestrank forest or None), PLRank, BROOF or
        AveragedRanker of those. Behind a ``QueryScaler`` the graph normalises its
        input as one query's documents (``_query_scaler.query_scaler_nodes``) and
        records the normalisation in the metadata (``forestrank_query_normalisation``).
    name : str
        The graph's name.
    dtype : numpy.float64 or numpy.float32 (or their names)
        The input's and output's type.

    Returns
    -------
    onnx.ModelProto
    """
    dtype = resolve_dtype(dtype)
    name = check_model_name(name, "ONNX")
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as error:
        raise ImportError(_ONNX_HELP) from error

    scaler, model = split_query_scaler(model)
    terms, base, grade_weights = additive_terms(model, target_statistics=True)
    tables = getattr(model, "target_statistics_", None)
    if tables and dtype != np.float64:
        raise ValueError(
            "a model fitted with cat_target_statistics=True is exported for float64 input only (dtype='float64'): its "
            "trees compare the statistics in double, which a float32 graph would round."
        )
    check_float32_scores(terms, base, "ONNX's TreeEnsembleRegressor")
    n_targets = len(base)
    attributes = {name: [] for name in (
        "nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_truenodeids",
        "nodes_falsenodeids", "nodes_missing_value_tracks_true", "target_treeids", "target_nodeids", "target_ids",
    )}  # fmt: skip
    thresholds, weights = [], []

    def add_node(tree_id, node, feature, mode, true_node, false_node, missing_true, threshold):
        for key, value in (
            ("nodes_treeids", tree_id), ("nodes_nodeids", node), ("nodes_featureids", feature), ("nodes_modes", mode),
            ("nodes_truenodeids", true_node), ("nodes_falsenodeids", false_node),
            ("nodes_missing_value_tracks_true", missing_true),
        ):  # fmt: skip
            attributes[key].append(value)
        thresholds.append(threshold)

    for tree_id, (term_tree, weight, target) in enumerate(terms):
        tree = export_tree(term_tree, weight)
        next_id = len(tree.feature)  # the ids of the equality tests a categorical split adds
        for node in range(len(tree.feature)):
            if tree.is_leaf[node]:
                add_node(tree_id, node, 0, "LEAF", 0, 0, 0, 0.0)
                attributes["target_treeids"].append(tree_id)
                attributes["target_nodeids"].append(node)
                attributes["target_ids"].append(int(target))
                weights.append(tree.weight * float(tree.value[node]))
            elif tree.is_categorical[node]:
                # One BRANCH_EQ per code of the set, chained by their false branches: a NaN
                # fails every test and, like an unseen code, ends at the other child.
                codes, set_child, other_child = tree.category_set(node)
                codes = codes if len(codes) else np.array([-1])  # an empty set: one test no value passes
                chain = [node] + list(range(next_id, next_id + len(codes) - 1)) + [other_child]
                next_id += len(codes) - 1
                for test, code in enumerate(codes):
                    add_node(tree_id, chain[test], int(tree.feature[node]), "BRANCH_EQ", set_child, chain[test + 1], 0, float(code))
            else:
                add_node(
                    tree_id, node, int(tree.feature[node]), "BRANCH_LEQ", int(tree.left[node]), int(tree.right[node]),
                    int(tree.missing_left[node]), float(tree.threshold[node]),
                )  # fmt: skip
    # Behind a QueryScaler the trees read the normalised doubles whatever the input's type:
    # rounded to float32 by a Cast, a value within float32 rounding above a threshold
    # would fall on the float32 threshold below it and take the other branch.
    if dtype == np.float64 or scaler is not None:
        numbers = {
            "nodes_values_as_tensor": numpy_helper.from_array(np.asarray(thresholds, dtype=np.float64)),
            "target_weights_as_tensor": numpy_helper.from_array(np.asarray(weights, dtype=np.float64)),
            "base_values_as_tensor": numpy_helper.from_array(np.asarray(base, dtype=np.float64)),
        }
    else:  # onnxruntime compares float32 input with float32 thresholds only
        numbers = {
            "nodes_values": float32_at_most(np.asarray(thresholds)).tolist(),
            "target_weights": np.asarray(weights, dtype=np.float32).tolist(),
            "base_values": np.asarray(base, dtype=np.float32).tolist(),
        }
    element = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    nodes, initializers, features, n_inputs = [], [], "X", model.n_features_in_
    if scaler is not None:  # normalised in double, as QueryScaler does, and given to the trees in double
        n_inputs, scaled = scaler.n_features_in_, "X"
        if dtype == np.float32:
            nodes.append(helper.make_node("Cast", ["X"], ["X_double"], to=TensorProto.DOUBLE))
            scaled = "X_double"
        scaler_nodes, initializers = query_scaler_nodes(scaler, scaled, "normalised")
        nodes += scaler_nodes
        features = "normalised"
    if tables:
        statistics_nodes, statistics_initializers = _target_statistics_nodes(model, tables, features, "with_statistics")
        nodes += statistics_nodes
        initializers += statistics_initializers
        features = "with_statistics"
    ensemble = helper.make_node(
        "TreeEnsembleRegressor", [features], ["raw"], domain="ai.onnx.ml", n_targets=n_targets, aggregate_function="SUM",
        **numbers, **attributes,
    )  # fmt: skip
    # The operator's output is float32 whatever its thresholds' type: cast to the input's type.
    nodes += [ensemble, helper.make_node("Cast", ["raw"], ["summed"], to=element)]
    initializers.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), "flat"))
    last = "summed"
    if grade_weights is not None:  # McRank: sum_c F(c) softmax_c of the per-grade scores
        initializers.append(numpy_helper.from_array(np.asarray(grade_weights, dtype=dtype).reshape(-1, 1), "grades"))
        nodes += [
            helper.make_node("Softmax", ["summed"], ["probabilities"], axis=1),
            helper.make_node("MatMul", ["probabilities", "grades"], ["expected"]),
        ]
        last = "expected"
    nodes.append(helper.make_node("Reshape", [last, "flat"], ["score"]))
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("X", element, [None, n_inputs])],
        [helper.make_tensor_value_info("score", element, [None])], initializers,
    )  # fmt: skip
    onnx_model = helper.make_model(
        # LabelEncoder takes double tables from ai.onnx.ml 4, whose TreeEnsembleRegressor is opset 3's.
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 4 if tables else 3)],
        producer_name="forestrank", producer_version=__version__,
    )  # fmt: skip
    if scaler is not None:
        onnx_model.metadata_props.add(key=RECORD_KEY, value=query_normalisation_json(scaler))
    onnx.checker.check_model(onnx_model)
    return onnx_model


def _target_statistics_nodes(model: object, tables: list, features: str, output: str) -> tuple[list, list]:
    """The nodes that append a ``cat_target_statistics`` model's columns to ``features``
    (float64, (n, n_features)) as ``output``: per categorical feature, a ``LabelEncoder``
    from its codes to their statistics (the prior for any other value), NaN where the code
    is NaN or negative (``_input/target_statistics.target_statistics_columns``). Returns
    (nodes, initializers)."""
    from onnx import helper, numpy_helper

    nodes, initializers, columns = [], [numpy_helper.from_array(np.array(np.nan), "nan"),
                                         numpy_helper.from_array(np.array(0.0), "zero")], [features]  # fmt: skip
    for column, (feature, (codes, values, prior)) in enumerate(zip(np.flatnonzero(model.is_categorical_), tables)):
        name = f"statistic_{column}"
        initializers.append(numpy_helper.from_array(np.array([feature], dtype=np.int64), f"{name}_feature"))
        nodes += [
            helper.make_node("Gather", [features, f"{name}_feature"], [f"{name}_code"], axis=1),
            helper.make_node(
                "LabelEncoder", [f"{name}_code"], [f"{name}_mapped"], domain="ai.onnx.ml",
                keys_tensor=numpy_helper.from_array(np.asarray(codes, dtype=np.float64)),
                values_tensor=numpy_helper.from_array(np.asarray(values, dtype=np.float64)),
                default_tensor=numpy_helper.from_array(np.array([prior], dtype=np.float64)),
            ),  # fmt: skip
            helper.make_node("IsNaN", [f"{name}_code"], [f"{name}_nan"]),
            helper.make_node("Less", [f"{name}_code", "zero"], [f"{name}_negative"]),
            helper.make_node("Or", [f"{name}_nan", f"{name}_negative"], [f"{name}_missing"]),
            helper.make_node("Where", [f"{name}_missing", "nan", f"{name}_mapped"], [name]),
        ]
        columns.append(name)
    nodes.append(helper.make_node("Concat", columns, [output], axis=1))
    return nodes, initializers


def resolve_dtype(dtype: object) -> type:
    """numpy.float64 or numpy.float32 from a dtype or its name; anything else refused by name."""
    try:
        resolved = None if dtype is None else np.dtype(dtype).type  # numpy reads None as float64
    except TypeError:
        resolved = None
    if resolved not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32 (the input ONNX runtimes take); got {dtype!r}.")
    return resolved
