"""forestrank's own JSON dump of a fitted ensemble: every tree's nodes and how the terms
combine, as plain Python data for ``json.dumps``, in forestrank's rule (``x <= threshold``
in double precision, NaN following each split's learned direction).

The dump is strict JSON (``json.dumps(..., allow_nan=False)`` takes it): a split whose
threshold is infinite (``-inf`` sends every present value right, ``+inf`` every present
value left: ``_tree/_tree.Tree.check``) writes it as the string ``"-Infinity"`` or
``"Infinity"``, which ``float()`` in Python, ``Double.parseDouble`` in Java and
``Number()`` in JavaScript read back; a JSON number cannot be infinite.

A split on a categorical feature has no threshold but ``"categories"``: the codes it
sends away from the side of missing values (``_terms.ExportTree.category_set``), so that
a code the fit did not see, like a missing value, follows ``"missing"``.
"""

import math

from .._version import __version__
from ._query_scaler import query_normalisation, split_query_scaler
from ._terms import additive_terms, export_tree


RULE = (
    "a row goes left when x <= threshold; NaN follows 'missing'. At a split with 'categories' (a categorical "
    "feature's codes), a row whose value is one of them goes to the side that 'missing' does not name, and any "
    "other value (another code, a negative one, NaN) goes to 'missing'"
)


def _json_threshold(threshold: float) -> float | str:
    """A threshold as a JSON value: the number, or the string of an infinite one."""
    if math.isinf(threshold):
        return "Infinity" if threshold > 0 else "-Infinity"
    return threshold


def dump_trees(model: object) -> dict:
    """The ensemble as plain Python data (for ``json.dumps``): its terms, each tree's nodes
    (feature, threshold, children, where missing values go, value, documents) and how the
    terms combine (``"weight"`` of each tree, ``"target"`` output, ``"base"``; for McRank
    ``"grade_weights"``, the ``F(c)`` its softmax probabilities are weighted by). An
    infinite threshold is the string ``"Infinity"`` or ``"-Infinity"`` (module docstring).
    Of a Pipeline of a QueryScaler and a ranker, the ranker's trees and, under
    ``"query_normalisation"``, what its features need (``_query_scaler.query_normalisation``)."""
    scaler, model = split_query_scaler(model)
    terms, base, grade_weights = additive_terms(model)
    trees = []
    for term_tree, weight, target in terms:
        tree = export_tree(term_tree, weight)
        nodes = []
        for node in range(len(tree.feature)):
            entry = {"node": node, "samples": int(tree.n_samples[node])}
            if tree.is_leaf[node]:
                entry["value"] = float(tree.value[node])
            else:
                entry.update(
                    feature=int(tree.feature[node]), threshold=_json_threshold(float(tree.threshold[node])),
                    left=int(tree.left[node]),
                    right=int(tree.right[node]), missing="left" if tree.missing_left[node] else "right",
                )  # fmt: skip
                if tree.is_categorical[node]:
                    del entry["threshold"]
                    entry["categories"] = tree.category_set(node)[0].tolist()
            nodes.append(entry)
        trees.append({"weight": float(weight), "target": int(target), "nodes": nodes})
    dump = {
        "estimator": type(model).__name__, "forestrank_version": __version__, "n_features": int(model.n_features_in_),
        "base": [float(value) for value in base],
        "grade_weights": None if grade_weights is None else [float(weight) for weight in grade_weights],
        "rule": RULE, "trees": trees,
    }  # fmt: skip
    if scaler is not None:
        dump["query_normalisation"] = query_normalisation(scaler)
    return dump
