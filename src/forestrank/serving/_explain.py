"""Explanations of fitted rankers with SHAP (``shap.TreeExplainer``).

:func:`shap_tree_model` gives a forestrank ranker in shap's custom tree-model format (a
dictionary of trees with their children, default directions, thresholds, values and
covers), so that ``shap.TreeExplainer(shap_tree_model(model))`` computes exact
TreeSHAP values: for every document, the SHAP values plus the expected value equal
``model.predict``. A missing value (NaN) follows each node's learned direction
(``children_default``). The ensemble's combination is folded into the leaf values as in
:mod:`forestrank.export` (forest mean, BROOF's round weights, the boosting baseline as
``base_offset``). McRank's score, the expected grade under a softmax, is not a sum over
trees, so it has no additive TreeSHAP decomposition and is refused.

shap's custom format has thresholds only. A model with categorical splits, or fitted on
a DataFrame's category columns, is handed to shap as the LightGBM booster of its export (:func:`forestrank.export.to_lightgbm`, the
same leaves for every row; a forest's weights folded into its leaves, since LightGBM's
TreeSHAP leaves out ``average_output``'s division), which shap explains with LightGBM's
own TreeSHAP (``pred_contrib``); its covers are the nodes' row counts, LightGBM's,
where the dictionary's are the nodes' training weights: the same for a fit without
sample weights or bootstrap draws (a bootstrap forest's training weight counts each row
as often as its tree drew it), so a model's values may change with the route otherwise.
"""

import numpy as np

from ._lightgbm import lightgbm_text
from ._terms import additive_terms, positive_covers

_LIGHTGBM_HELP = (
    'explaining a model with categorical splits needs LightGBM, whose TreeSHAP tests set membership: '
    'pip install "forestrank[shap]"'
)


def shap_tree_model(model: object) -> object:
    """A fitted forestrank ranker as a tree model ``shap.TreeExplainer`` takes.

    Parameters
    ----------
    model : a fitted forestrank ranker
        Every estimator but McRank and ``objective="cumulative"`` (their scores are no
        sum of trees) and a model fitted with ``cat_target_statistics=True`` (its trees
        read statistics computed from the categories).

    Returns
    -------
    dict or lightgbm.Booster
        Without categorical splits, shap's custom tree model: ``{"trees": [...],
        "base_offset": float, "tree_output": "raw_value", "objective":
        "squared_error", "input_dtype": float64, "internal_dtype": float64}``, each tree
        ``children_left``, ``children_right``, ``children_default``, ``features``,
        ``thresholds``, ``values`` (n_nodes, 1) and ``node_sample_weight`` (the covers,
        each node's training weight). A row goes left when ``x <= threshold``, shap's
        rule as well. With categorical splits or a DataFrame's category columns
        (``frame_categories_``), the ``lightgbm.Booster`` of the model's
        export (module docstring), its features named ``Column_0``, ``Column_1``, ...
        (LightGBM's names for unnamed features): explain it path-dependently (no
        background ``data``; shap's parser of LightGBM's categorical splits, which the
        interventional mode uses, loses code 0), and cast a ``category`` column read by
        value to its values first, as for LightGBM's ``predict`` (``docs/categorical.md``).

    Examples
    --------
    >>> import shap  # doctest: +SKIP
    >>> explainer = shap.TreeExplainer(shap_tree_model(model))  # doctest: +SKIP
    >>> values = explainer.shap_values(X)  # doctest: +SKIP
    """
    if getattr(model, "target_statistics_", None):
        raise ValueError(
            f"this {type(model).__name__} was fitted with cat_target_statistics=True: its trees split on each "
            "category's target statistic, not on the categories, so TreeSHAP's values would credit statistics shap "
            "cannot compute from X. Fit with cat_target_statistics=False to explain the model."
        )
    terms, base, grade_weights = additive_terms(model)
    if grade_weights is not None:
        raise ValueError(
            "McRank (objective='mcrank') scores the expected grade under a softmax of its per-grade trees, "
            "which is not a sum over trees: TreeSHAP has no additive explanation of it."
        )
    # A model fitted on a frame's category columns reads them by value, as the dictionary's
    # float thresholds cannot (shap casts the frame to float64): the booster reads them as
    # the fit did, also where no tree split on them.
    if getattr(model, "frame_categories_", None) or any(tree.has_categories for tree, _, _ in terms):
        try:
            import lightgbm
        except ImportError:
            raise ImportError(_LIGHTGBM_HELP) from None
        # Positional names: shap matches the input's columns by position, and a frame's own
        # names may hold what LightGBM's format cannot ("brand name").
        names = [f"Column_{index}" for index in range(model.n_features_in_)]
        return lightgbm.Booster(model_str=lightgbm_text(model, feature_names=names, average_output=False))
    trees = []
    for tree, weight, _ in terms:
        features = tree.nodes["feature"].astype(np.int64)
        leaf = features < 0
        left = np.where(leaf, -1, tree.nodes["left"]).astype(np.int64)
        right = np.where(leaf, -1, tree.nodes["left"] + 1).astype(np.int64)
        trees.append({
            "children_left": left, "children_right": right,
            "children_default": np.where(tree.missing_left.astype(bool), left, right),
            "features": np.where(leaf, -2, features), "thresholds": np.where(leaf, 0.0, tree.nodes["threshold"]),
            "values": (weight * np.where(leaf, tree.nodes["threshold"], tree.values))[:, None],
            "node_sample_weight": positive_covers(tree)[1],
        })  # fmt: skip
    return {
        "trees": trees, "base_offset": float(base[0]), "tree_output": "raw_value", "objective": "squared_error",
        "input_dtype": np.float64, "internal_dtype": np.float64,
    }  # fmt: skip
