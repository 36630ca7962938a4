"""Reference evaluators of the JSON formats no runtime in the test environment loads,
written from the engines' own scoring code (named in each docstring), not from
forestrank's exporters: they read the files as the engine does, by feature name, in
float32, with the engine's comparison and missing-value rule.

Each returns ``(scores, leaves)``: the float32 scores, and per tree the leaf each row
reached, as the index of that leaf in the order a left-first walk of the tree meets
its leaves (the leaf order :func:`leaf_order` gives for a forestrank tree).
"""

import numpy as np

F32 = np.float32


def solr_scores(document: dict, X: np.ndarray, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Solr's ``MultipleAdditiveTreesModel`` (solr/modules/ltr, ``MultipleAdditiveTreesModel.java``,
    Solr 9.2+): each threshold parsed as a float plus ``NODE_SPLIT_SLACK`` (1e-6f); a value
    goes left when ``value <= threshold``; with ``isNullSameAsZero`` false a NaN follows
    the node's ``missing`` ("left", anything else right), with it true (the default) NaN
    fails the test and goes right; the score is the float sum of ``weight * leaf``.

    ``X``'s columns are the feature store's features ``columns``; the model's
    ``features`` list picks and orders them, as Solr builds the feature vector.
    """
    vector = _feature_vector(X, columns, [feature["name"] for feature in document["features"]])
    names = [feature["name"] for feature in document["features"]]
    null_same_as_zero = document["params"].get("isNullSameAsZero", True)
    assert isinstance(null_same_as_zero, bool), "Solr's setter takes a JSON boolean"

    def goes_left(values, node):
        threshold = F32(F32(float(node["threshold"])) + F32(1e-6))
        if null_same_as_zero:
            return values <= threshold
        return np.where(np.isnan(values), node.get("missing") == "left", values <= threshold)

    def split(node):
        if "value" in node:
            return None
        return names.index(node["feature"]), goes_left, node["left"], node["right"]

    scores = np.zeros(len(X), dtype=F32)
    leaves = []
    for tree in document["params"]["trees"]:
        reached_values, reached = _descend(tree["root"], vector, split, lambda node: F32(float(node["value"])))
        scores = (scores + F32(float(tree["weight"])) * reached_values).astype(F32)
        leaves.append(reached)
    return scores, np.array(leaves).T


def ltr_plugin_scores(definition: dict, X: np.ndarray, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The Elasticsearch / OpenSearch LTR plugins' ``model/xgboost+json`` (``XGBoostJsonParser``
    and ``NaiveAdditiveDecisionTree``): ``split`` names a feature of the feature set,
    ``split_condition`` is a float and a value goes to ``yes`` when ``value <
    split_condition``, else to ``no``; a NaN (a feature that did not match, from
    Elasticsearch LTR 1.5.9 and OpenSearch 3.8) goes to ``missing``; the score is the
    float sum of the leaves, then the objective's transform (none for ``reg:linear``,
    ``rank:pairwise``, ``binary:logitraw``; a sigmoid for ``binary:logistic`` and ``reg:logistic``).
    """
    assert definition["objective"] in {"reg:linear", "rank:pairwise", "rank:ndcg", "rank:map", "binary:logitraw"}

    def goes_left(values, node):
        missing_left = node["missing"] == node["yes"]
        return np.where(np.isnan(values), missing_left, values < F32(node["split_condition"]))

    def split(node):
        if "leaf" in node:
            return None
        left, right = node["children"]
        assert (left["nodeid"], right["nodeid"]) == (node["yes"], node["no"]), "children in yes, no order"
        assert node["missing"] in (node["yes"], node["no"])
        return columns.index(node["split"]), goes_left, left, right

    scores = np.zeros(len(X), dtype=F32)
    leaves = []
    for root in definition["splits"]:
        reached_values, reached = _descend(root, np.asarray(X, dtype=F32), split, lambda node: F32(node["leaf"]))
        scores = (scores + reached_values).astype(F32)
        leaves.append(reached)
    return scores, np.array(leaves).T


def ltr_plugin_raw_scores(model: dict, X: np.ndarray, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The plugins' ``model/xgboost+json+raw`` (``XGBoostRawJsonParser``): XGBoost's model
    JSON read by ``learner.feature_names`` (each ``"float"``), leaf values from
    ``base_weights``, ``value < split_conditions[node]`` to ``left_children``, NaN by
    ``default_left`` (Elasticsearch LTR 1.5.12+); no base score; the objective's transform."""
    learner = model["learner"]
    assert learner["objective"]["name"] in {"reg:linear", "rank:pairwise", "rank:ndcg", "rank:map", "binary:logitraw"}
    assert set(learner["feature_types"]) <= {"float"}
    vector = _feature_vector(X, columns, learner["feature_names"])
    scores = np.zeros(len(X), dtype=F32)
    leaves = []
    for tree in learner["gradient_booster"]["model"]["trees"]:

        def goes_left(values, node, tree=tree):
            left = np.asarray(values < F32(tree["split_conditions"][node]))
            return np.where(np.isnan(values), bool(tree["default_left"][node]), left)

        def split(node, tree=tree):
            if tree["left_children"][node] == -1:
                return None
            return tree["split_indices"][node], goes_left, tree["left_children"][node], tree["right_children"][node]

        reached_values, reached = _descend(0, vector, split, lambda node, tree=tree: F32(tree["base_weights"][node]))
        scores = (scores + reached_values).astype(F32)
        leaves.append(reached)
    return scores, np.array(leaves).T


def leaf_order(tree: object) -> np.ndarray:
    """For a forestrank tree (children of ``i`` at ``left[i]`` and ``left[i] + 1``): the
    position of each leaf node in a left-first walk, -1 at internal nodes (int64 array of
    shape (n_nodes,))."""
    order = np.full(tree.node_count, -1, dtype=np.int64)
    stack, seen = [0], 0
    while stack:
        node = stack.pop()
        if tree.nodes["feature"][node] < 0:
            order[node] = seen
            seen += 1
        else:
            stack += [tree.nodes["left"][node] + 1, tree.nodes["left"][node]]
    return order


def left_first_leaf(tree: object, nodes: np.ndarray) -> np.ndarray:
    """The left-first positions (:func:`leaf_order`) of forestrank leaf ``nodes`` of ``tree``,
    the ids the reference evaluators give the leaves they reach."""
    return leaf_order(tree)[nodes]


def _feature_vector(X: np.ndarray, columns: list[str], names: list[str]) -> np.ndarray:
    """The model's features, by name, out of ``X``'s columns, as float32."""
    return np.asarray(X, dtype=F32)[:, [columns.index(name) for name in names]]


def _descend(root, vector, split, leaf_value):
    """Every row from ``root`` to a leaf: ``split(node)`` gives ``(column, goes_left, left,
    right)`` or None at a leaf. Returns the leaves' values and their left-first positions."""
    values = np.zeros(len(vector), dtype=F32)
    positions = np.zeros(len(vector), dtype=np.int64)
    stack = [(root, np.arange(len(vector)))]
    seen = 0
    while stack:  # left-first: the right child waits below the left one
        node, rows = stack.pop()
        rule = split(node)
        if rule is None:
            values[rows] = leaf_value(node)
            positions[rows] = seen
            seen += 1
            continue
        column, goes_left, left, right = rule
        to_left = np.asarray(goes_left(vector[rows, column], node), dtype=bool)
        stack += [(right, rows[~to_left]), (left, rows[to_left])]
    return values, positions
