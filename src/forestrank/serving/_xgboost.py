"""XGBoost's model files: the JSON that ``Booster.save_model`` writes, and the tree dump
(``Booster.get_dump(dump_format="json")``) that the Elasticsearch and OpenSearch
Learning-to-Rank plugins take.

How XGBoost scores a row with these trees (``predict_fn.h`` and ``tree_model.cc`` in
XGBoost 2 and 3, and the plugins' ``NaiveAdditiveDecisionTree``, which copies it):

- features, thresholds and leaf values are float32; a row goes to the ``yes`` (left)
  child when ``value < threshold``, to the right child otherwise;
- a missing value (NaN) goes to the node's default child (``default_left``; ``missing``
  in the dump);
- a categorical split (``split_type`` 1, XGBoost's ``common::Decision``) sends a
  present value right when it is a code in the node's set (``categories``), and left
  otherwise: another code, a negative one, one past the set. forestrank's split is
  written in that form (``_terms.ExportTree.category_set``): the set holds the codes
  sent away from the side of missing values, the left child is that side's, missing
  values go left (``default_left``), so unseen and missing categories reach
  forestrank's leaf; the feature's type is ``"c"``. Where that side is forestrank's
  right child, the two children trade node ids (XGBoost's predictor takes the right
  child to be ``left + 1`` at every split), the one departure from forestrank's order;
- the score is the float32 sum of the leaves reached, plus ``base_score`` in XGBoost's
  own predictor (the plugins have no base score); the objective written here,
  ``rank:pairwise`` for the model file and ``reg:linear`` for the dump, transforms
  nothing.

forestrank's ``x <= t`` in double precision becomes ``x < float32_above(t)``
(``_terms.float32_above``): a float32 feature value takes forestrank's branch (but the
largest float32, 3.4028235e38, at a split whose threshold is +inf or beyond that float32:
``_thresholds``). The
base (the boosting baseline) is folded into the first tree's leaves, so the model file
and the dump score alike in XGBoost and in the plugins. Nodes keep forestrank's order,
whose right child is always ``left + 1``, the layout XGBoost's predictor assumes for
numeric splits (its categorical ones name both children).

What a plugin does with a feature that did not match a document: Elasticsearch's LTR
plugin from 1.5.9 and OpenSearch's from 3.8 pass NaN, which follows ``missing`` in the
dump; earlier releases pass 0, read as the value 0. The plugins read the model file
(``model/xgboost+json+raw``) with ``default_left`` honoured from Elasticsearch LTR 1.5.12.
"""

import numpy as np

from ._query_scaler import RECORD_KEY, query_normalisation_json, refuse_query_scaler, scaled_feature_names, split_query_scaler
from ._terms import FLOAT32_MAX, float32_above, json_float, nested, resolve_feature_names, scalar_trees

FORBIDDEN_IN_NAMES = "[]<"  # XGBoost's Booster and DMatrix refuse feature names holding them
ROOT_PARENT = 2147483647  # what XGBoost writes as the root's parent
FILE_VERSION = [2, 1, 0]  # the schema followed: XGBoost 2.1's, which later releases read
DUMP_OBJECTIVE = "reg:linear"  # accepted by both plugins, no output transform
MODEL_OBJECTIVE = "rank:pairwise"  # XGBoost's and the plugins' raw reader: no output transform


def to_xgboost(model: object, *, feature_names: object = None) -> dict:
    """The fitted ``model`` as XGBoost's JSON model (``Booster.save_model`` schema), a
    JSON-serialisable dict that ``xgboost.Booster().load_model`` reads and the LTR
    plugins take as ``model/xgboost+json+raw``.

    Parameters
    ----------
    model : a fitted forestrank ranker or CalibratedRanker (not McRank), or a Pipeline of a QueryScaler and one
        Behind a ``QueryScaler``, the learner's attribute ``forestrank_query_normalisation``
        (``Booster.attr``) records the normalisation the features need.
    feature_names : sequence of str or None
        One name per column of ``X``, none holding ``[``, ``]`` or ``<`` (XGBoost
        refuses them); None: the names the model was fitted with, or none (XGBoost's
        default; the LTR plugins need names).

    Returns
    -------
    dict
        ``{"learner": {...}, "version": [2, 1, 0]}``: ``rank:pairwise``, ``base_score`` 0
        (the base folded into the first tree), one tree per term. Write it with
        ``json.dump(document, file, ensure_ascii=False)`` (as ``export_model`` does) where a
        feature name is not ASCII: XGBoost's reader keeps an escape such as ``\\u00e9`` as
        its six characters, and the names would no longer match a DataFrame's columns.
    """
    scaler, model = split_query_scaler(model)
    trees, _ = scalar_trees(model, "XGBoost's model", float32=True)
    names = resolve_feature_names(
        model, scaled_feature_names(scaler, feature_names), "XGBoost", default=None, forbidden=FORBIDDEN_IN_NAMES
    )
    n_features = int(model.n_features_in_)
    categorical = np.zeros(n_features, dtype=bool)
    for tree in trees:
        categorical[tree.feature[tree.is_categorical]] = True
    types = ["c" if flag else "float" for flag in categorical] if categorical.any() or names else []
    return {
        "learner": {
            "attributes": {} if scaler is None else {RECORD_KEY: query_normalisation_json(scaler)},
            "feature_names": names,
            "feature_types": types,
            "gradient_booster": {
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(len(trees))},
                    "iteration_indptr": list(range(len(trees) + 1)),
                    "tree_info": [0] * len(trees),
                    "trees": [_model_tree(tree, index, n_features) for index, tree in enumerate(trees)],
                },
                "name": "gbtree",
            },
            "learner_model_param": {
                "base_score": "0",
                "boost_from_average": "0",
                "num_class": "0",
                "num_feature": str(n_features),
                "num_target": "1",
            },
            "objective": {"name": MODEL_OBJECTIVE},
        },
        "version": FILE_VERSION,
    }


def to_xgboost_ltr(model: object, *, feature_names: object = None) -> dict:
    """The fitted ``model`` as the definition of a ``model/xgboost+json`` model of the
    Elasticsearch / OpenSearch LTR plugins: ``{"objective": "reg:linear", "splits":
    [tree, ...]}``, each tree in ``Booster.get_dump(dump_format="json")``'s nested form.

    Parameters
    ----------
    model : a fitted forestrank ranker or CalibratedRanker (every estimator but McRank)
    feature_names : sequence of str or None
        The features' names in the plugin's feature set, one per column of ``X``;
        None: the names the model was fitted with (required: the plugin finds features
        by name).

    Returns
    -------
    dict
        Split nodes ``{"nodeid", "depth", "split", "split_condition", "yes", "no",
        "missing", "children"}``, leaves ``{"nodeid", "leaf"}``: the fields the plugins'
        parser accepts, ``missing`` on every split (the plugins refuse a split without it).
    """
    scaler, model = split_query_scaler(model)
    refuse_query_scaler(scaler, "XGBoost's model for the LTR plugins")
    trees, _ = scalar_trees(model, "XGBoost's model for the LTR plugins", float32=True, categories=False)
    names = resolve_feature_names(model, feature_names, "the LTR plugins' XGBoost model", required=True)
    return {"objective": DUMP_OBJECTIVE, "splits": [_dump_tree(tree, names) for tree in trees]}


def _thresholds(tree: object) -> np.ndarray:
    """``float32_above`` of each threshold, capped at the largest float32: a JSON number
    cannot be inf, the threshold of a split that sends every value left (with
    ``missing_direction="right"``) or of a finite cut above the largest float32 (between
    two values beyond 3.4e38), and only the value 3.4028235e38 itself then goes the other
    way."""
    return np.minimum(float32_above(tree.threshold), FLOAT32_MAX)


def _model_tree(tree: object, index: int, n_features: int) -> dict:
    """One tree in the ``save_model`` schema: arrays over the nodes, the leaf value in
    ``split_conditions`` (where XGBoost reads it) and in ``base_weights`` (where the
    plugins' raw reader does)."""
    n_nodes = len(tree.feature)
    split = ~tree.is_leaf
    categorical = tree.is_categorical
    first, second = tree.left.copy(), tree.right.copy()  # XGBoost's left and right child, forestrank's ids
    default_left = tree.missing_left.astype(int)
    position = np.arange(n_nodes)  # the id written for each node
    sets = {}
    for node in np.flatnonzero(categorical):
        sets[node], second[node], first[node] = tree.category_set(int(node))
        default_left[node] = 1
        if first[node] != tree.left[node]:  # XGBoost's predictor takes the right child to be left + 1
            position[first[node]], position[second[node]] = position[second[node]], position[first[node]]
    parents = np.full(n_nodes, -1, dtype=np.int64)
    parents[tree.left[split]] = parents[tree.right[split]] = np.flatnonzero(split)
    written = np.argsort(position)  # the node at each id

    def ids(nodes: np.ndarray, empty: int) -> list:
        return np.where(nodes >= 0, position[nodes], empty)[written].tolist()

    conditions = np.where(split & ~categorical, _thresholds(tree), np.where(split, 0.0, tree.value))
    weights = np.where(split, tree.internal_value, tree.value)
    categorical_nodes = sorted(sets, key=lambda node: position[node])
    sizes = [len(sets[node]) for node in categorical_nodes]
    return {
        "base_weights": [json_float(value) for value in weights[written]],
        "categories": [int(code) for node in categorical_nodes for code in sets[node]],
        "categories_nodes": [int(position[node]) for node in categorical_nodes],
        "categories_segments": np.cumsum([0] + sizes[:-1]).tolist() if sizes else [],
        "categories_sizes": sizes,
        "default_left": default_left[written].tolist(),
        "id": index,
        "left_children": ids(np.where(split, first, -1), -1),
        "loss_changes": [json_float(value) for value in tree.split_gain[written]],
        "parents": ids(parents, ROOT_PARENT),
        "right_children": ids(np.where(split, second, -1), -1),
        "split_conditions": [json_float(value) for value in conditions[written]],
        "split_indices": np.maximum(tree.feature, 0)[written].tolist(),
        "split_type": categorical.astype(int)[written].tolist(),
        "sum_hessian": [float(value) for value in tree.cover_weight[written]],
        "tree_param": {"num_deleted": "0", "num_feature": str(n_features), "num_nodes": str(n_nodes), "size_leaf_vector": "1"},
    }


def _dump_tree(tree: object, names: list[str]) -> dict:
    """One tree in the dump's nested form."""
    thresholds = _thresholds(tree)
    return nested(
        tree, lambda node: {"nodeid": node, "leaf": json_float(tree.value[node])},
        lambda node, left, right: {
            "nodeid": node, "depth": int(tree.depth[node]), "split": names[tree.feature[node]],
            "split_condition": json_float(thresholds[node]), "yes": int(tree.left[node]), "no": int(tree.right[node]),
            "missing": int(tree.left[node] if tree.missing_left[node] else tree.right[node]), "children": [left, right],
        },
        "the LTR plugins' XGBoost dump",
    )  # fmt: skip
