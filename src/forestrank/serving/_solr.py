"""Apache Solr's Learning-to-Rank module: the ``MultipleAdditiveTreesModel`` JSON that
Solr's model store takes (``PUT /solr/<collection>/schema/model-store``).

How Solr scores a document with it (``MultipleAdditiveTreesModel`` in Solr's ``ltr``
module, 9.2 and later for missing values):

- each feature value is a float32 (after the feature's ``norm``, identity by default);
- a node sends the value left when ``value <= threshold + 1e-6``, threshold and sum in
  float32 (Solr adds that slack, ``NODE_SPLIT_SLACK``, to every threshold it parses);
- the score is the float32 sum over trees of ``weight * leaf value``; there is no base
  score, so a non-zero base is one more tree, a single leaf;
- a feature that does not match a document takes its ``defaultValue`` (0 unless the
  feature store says otherwise). With ``isNullSameAsZero`` false and a feature's
  ``defaultValue`` "NaN", the missing value follows each node's ``missing`` ("left" or
  "right"); with ``isNullSameAsZero`` true (Solr's default) a NaN goes right at every node.

The export writes ``isNullSameAsZero: false`` and the learned direction on every split,
so a feature stored with ``"defaultValue": "NaN"`` is routed as forestrank routes NaN;
a feature left at ``defaultValue`` 0 is read as the value 0, as Solr documents.
Each threshold is written so that, after Solr's slack, the float32 cut is the largest
float32 not above forestrank's threshold (:func:`solr_thresholds`): a float32 feature
value takes forestrank's branch. Values are written as strings, the form Solr's setters
take for floats.
"""

import numpy as np

from ._query_scaler import refuse_query_scaler, split_query_scaler
from ._terms import check_model_name, float32_at_most, nested, resolve_feature_names, scalar_trees

SPLIT_SLACK = np.float32(1e-6)  # added by Solr to every threshold it parses
_FIXUP_STEPS = 8  # float32 steps tried around the first guess; one or two suffice


def to_solr(model: object, *, name: str = "forestrank", feature_names: object = None, store: str | None = None) -> dict:
    """The fitted ``model`` as Solr's ``MultipleAdditiveTreesModel`` (a JSON-serialisable dict).

    Parameters
    ----------
    model : a fitted forestrank ranker or CalibratedRanker (every estimator but McRank)
    name : str
        The model's name in Solr's model store.
    feature_names : sequence of str or None
        The features' names in Solr's feature store, one per column of ``X``; None: the
        names the model was fitted with (required: Solr finds features by name).
    store : str or None
        The feature store the features live in; None: Solr's default store.

    Returns
    -------
    dict
        ``{"class", "name", ["store"], "features": [{"name"}...], "params":
        {"isNullSameAsZero": False, "trees": [{"weight", "root"}...]}}``; each tree keeps
        its ensemble weight (a forest's ``1 / n_trees``, BROOF's round weight over its
        trees, 1 for boosting) and a non-zero base is a last tree of one leaf.
    """
    name = check_model_name(name, "Solr's model store")
    if store is not None:
        store = check_model_name(store, "Solr", argument="store", meaning="the Solr feature store of the model's features")
    scaler, model = split_query_scaler(model)
    refuse_query_scaler(scaler, "Solr's MultipleAdditiveTreesModel")
    trees, base = scalar_trees(
        model, "Solr's MultipleAdditiveTreesModel", keep_weights=True, float32=True, categories=False
    )
    names = resolve_feature_names(model, feature_names, "Solr", required=True)
    written = [{"weight": _text(tree.weight), "root": _nodes(tree, names)} for tree in trees]
    if base != 0.0:
        written.append({"weight": "1.0", "root": {"value": _text(base)}})
    document = {"class": "org.apache.solr.ltr.model.MultipleAdditiveTreesModel", "name": name}
    if store is not None:
        document["store"] = store
    document["features"] = [{"name": feature} for feature in names]
    document["params"] = {"isNullSameAsZero": False, "trees": written}
    return document


def solr_thresholds(threshold: np.ndarray) -> np.ndarray:
    """The float32 to write for each float64 ``threshold`` so that Solr's cut,
    ``float32(written) + 1e-6`` rounded to float32, is the largest float32 not above it.

    Where no float32 reaches that cut exactly, the largest written value whose cut lies
    below it is returned, and float32 values between the two cuts go right where
    forestrank sends them left. That happens where the sum's float32 rounding steps over
    the cut: cuts between -2**-17 and 2**-18 (finer float32 steps than the written value
    has) and negative cuts within 1e-6 above a power of two from -2**-17 to -32, such
    as -1.0 (the sums step from -1.0000001 to -0.99999994); docs/serving.md gives the
    gaps.

    Parameters
    ----------
    threshold : float64 array of shape (n,)

    Returns
    -------
    float32 array of shape (n,)
    """
    cut = float32_at_most(threshold)
    written = (cut - SPLIT_SLACK).astype(np.float32)
    for _ in range(_FIXUP_STEPS):
        over = (written + SPLIT_SLACK).astype(np.float32) > cut
        # Steps between the largest float32 and inf raise the overflow flag: the step down
        # from inf is the right cut, the step up to inf never fits.
        with np.errstate(over="ignore"):
            written = np.where(over, np.nextafter(written, np.float32(-np.inf)), written).astype(np.float32)
            higher = np.nextafter(written, np.float32(np.inf)).astype(np.float32)
        fits = ~over & ((higher + SPLIT_SLACK).astype(np.float32) <= cut) & np.isfinite(cut)
        written = np.where(fits, higher, written).astype(np.float32)
    return written


def _nodes(tree: object, names: list[str]) -> dict:
    """The nested node objects of one tree."""
    thresholds = solr_thresholds(tree.threshold)
    return nested(
        tree, lambda node: {"value": _text(tree.value[node])},
        lambda node, left, right: {
            "feature": names[tree.feature[node]], "threshold": _text(thresholds[node]),
            "missing": "left" if tree.missing_left[node] else "right", "left": left, "right": right,
        },
        "Solr's MultipleAdditiveTreesModel",
    )  # fmt: skip


def _text(value: float) -> str:
    """A float as Solr's setters take it: a string that Java's ``Float.parseFloat`` reads
    back as the same float32 (the shortest repr of a float32's exact double is within a
    double's rounding of it)."""
    number = float(np.float32(value))
    if np.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return repr(number)
