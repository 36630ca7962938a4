"""LightGBM's text model format: the file ``Booster.save_model`` writes, which
``lightgbm.Booster(model_file=...)`` (or ``model_str=``) loads, and through it Treelite,
TL2cgen and every other LightGBM runtime.

How LightGBM scores a row with these trees (``Tree::NumericalDecision`` in LightGBM's
``tree.h``, version 4):

- features and thresholds are doubles; a row goes left when ``value <= threshold``,
  forestrank's own rule, so the thresholds are written as they are (each the shortest
  text that reads back as the same double, which LightGBM's parser reads exactly),
  but that LightGBM holds thresholds within [-1e300, 1e300] (it clamps what it reads):
  the threshold -inf of a three-way split (every value right, NaN left) is written as
  -1e300 and the threshold +inf of a split that sends every value left as 1e300, so a
  finite value at or below -1e300, or above 1e300, goes the other way there; and LightGBM's predictor reads
  every value within 1e-35 (as a float32, that float32 included) of zero as 0
  (``kZeroThreshold``), so such a value takes the branch of 0 where a threshold lies
  between them (a subnormal threshold is written as the smallest normal double of its
  sign, the same cut for LightGBM, which Treelite's parser reads);
- every split is written with missing type NaN (``decision_type`` 8, or 10 when the
  learned direction is left): a NaN follows the node's default direction. (With missing
  type None, LightGBM would read NaN as 0; with Zero, it would send zeros the default
  way too.) A feature that a serving system leaves out is whatever value it passes: NaN
  is routed as forestrank routes it, 0 is the value 0;
- a categorical split (``decision_type`` 9: categorical, missing type NaN) sends a
  value left when it is a non-negative integer whose bit is set in the node's bitset
  (``cat_threshold`` words of 32 bits, ``Tree::CategoricalDecision``); NaN, negative
  values and codes past the bitset go right. forestrank's split is written in that
  form (``_terms.ExportTree.category_set``): the bitset holds the codes sent away from
  the side of missing values, and the children are swapped where forestrank sends
  missing values left, so unseen and missing categories reach forestrank's leaf;
- the score is the double sum of the leaves reached; ``objective=lambdarank``
  transforms nothing at prediction.

A forest (the mean of its trees, no base) is written as LightGBM writes its random
forests: the leaves as they are and ``average_output``, so that LightGBM sums the trees
in order and divides by their number, forestrank's own arithmetic, and the scores are
bitwise forestrank's (ties between documents stay ties). Otherwise the ensemble's
weights are folded into the leaves and the base into the first tree's leaves, as
LightGBM folds its own initial score. Internal nodes are numbered in
forestrank's node order, leaves too (leaf ``k`` is the ``k``-th leaf in that order).
``feature_infos`` is ``none`` for every feature: LightGBM reads it only for
``dump_model``. A model fitted on a pandas DataFrame's ``category`` columns writes their
categories as ``pandas_categorical``, so that LightGBM's ``predict`` reads a DataFrame's
categories by value as forestrank does. No ``tree_sizes`` line: LightGBM then reads the trees one after another.
"""

import json

import numpy as np

from ._query_scaler import RECORD_KEY, query_normalisation_json, scaled_feature_names, split_query_scaler
from ._terms import folded, resolve_feature_names, scalar_trees

OBJECTIVE = "lambdarank"  # a ranking model, and no output transform
CATEGORICAL_DECISION = 9  # decision_type bits: categorical (1) and missing type NaN (2 << 2)
LARGEST_THRESHOLD = 1e300  # LightGBM clamps thresholds to +-1e300 when it reads them
SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)
# LightGBM refuses these in feature names (they would break its dump_model JSON), and
# the names line is space-separated.
FORBIDDEN_IN_NAMES = '",:[]{}\\'


def to_lightgbm(model: object, *, feature_names: object = None) -> str:
    """The fitted ``model`` in LightGBM's text model format.

    Parameters
    ----------
    model : a fitted forestrank ranker or CalibratedRanker (not McRank), or a Pipeline of a QueryScaler and one
        Behind a ``QueryScaler``, a header line ``forestrank_query_normalisation=<JSON>``
        records the normalisation the features need (LightGBM and Treelite read past it;
        LightGBM does not write it back when it saves the model).
    feature_names : sequence of str or None
        One name per column of ``X``, without whitespace; None: the names the model was
        fitted with, else LightGBM's defaults ``Column_0``, ``Column_1``, ...

    Returns
    -------
    str
        The model file's text: ``lightgbm.Booster(model_str=text).predict(X)`` equals
        ``model.predict(X)``, bitwise for a forest (a mean of trees), else up to the
        rounding of the folded leaf values (an ``AveragedRanker`` of forests, a mean of
        means, within a unit in the last place).
    """
    return lightgbm_text(model, feature_names=feature_names)


def lightgbm_text(model: object, *, feature_names: object = None, average_output: bool = True) -> str:
    """:func:`to_lightgbm`'s text; ``average_output=False`` writes a forest's trees with their
    weights folded into the leaves instead of LightGBM's ``average_output``, whose division
    LightGBM's TreeSHAP (``pred_contrib``) leaves out."""
    scaler, model = split_query_scaler(model)
    trees, base = scalar_trees(model, "LightGBM's model format", keep_weights=True)
    average = average_output and base == 0.0 and all(tree.weight == 1.0 / len(trees) for tree in trees)
    if not average:
        trees = folded(trees, base)
    names = resolve_feature_names(
        model, scaled_feature_names(scaler, feature_names), "LightGBM", default="Column_{}", forbidden=FORBIDDEN_IN_NAMES,
        whitespace=False,
    )
    header = [
        "tree", "version=v4", "num_class=1", "num_tree_per_iteration=1", "label_index=0",
        f"max_feature_idx={len(names) - 1}", f"objective={OBJECTIVE}", *(["average_output"] if average else []),
        "feature_names=" + " ".join(names), "feature_infos=" + " ".join(["none"] * len(names)),
        *([] if scaler is None else [f"{RECORD_KEY}={query_normalisation_json(scaler)}"]), "",
    ]  # fmt: skip
    blocks = [_tree_block(tree, index) for index, tree in enumerate(trees)]
    footer = ["end of trees", "", f"pandas_categorical:{_pandas_categorical(model)}", ""]
    return "\n".join(header + blocks + footer)


def _tree_block(tree: object, index: int) -> str:
    """One ``Tree=`` block, ending in the blank line that closes it."""
    split = np.flatnonzero(~tree.is_leaf)
    leaves = np.flatnonzero(tree.is_leaf)
    # LightGBM keeps internal nodes and leaves in two arrays, a child that is leaf k
    # written ~k; numbering both in forestrank's node order keeps the root at 0.
    child = np.empty(len(tree.feature), dtype=np.int64)
    child[split] = np.arange(len(split))
    child[leaves] = ~np.arange(len(leaves))
    threshold = np.clip(tree.threshold[split], -LARGEST_THRESHOLD, LARGEST_THRESHOLD)
    # A subnormal threshold is written as the normal double nearest zero of its sign:
    # LightGBM reads every value within 1e-35 of zero as 0, so no decision changes, and
    # Treelite's parser refuses subnormal numbers ("Range error").
    subnormal = (threshold != 0) & (np.abs(threshold) < SMALLEST_NORMAL)
    threshold[subnormal] = np.copysign(SMALLEST_NORMAL, threshold[subnormal])
    decision_type = np.where(tree.missing_left[split], 10, 8)
    left, right = child[tree.left[split]], child[tree.right[split]]
    boundaries, bitsets = [0], []
    for position in np.flatnonzero(tree.is_categorical[split]):
        codes, set_child, other_child = tree.category_set(int(split[position]))
        bitset = _bitset(codes)
        threshold[position] = len(boundaries) - 1
        decision_type[position] = CATEGORICAL_DECISION
        left[position], right[position] = child[set_child], child[other_child]
        bitsets.append(bitset)
        boundaries.append(boundaries[-1] + len(bitset))
    lines = [f"Tree={index}", f"num_leaves={len(leaves)}", f"num_cat={len(bitsets)}"]
    if len(split):
        lines += [
            "split_feature=" + _ints(tree.feature[split]),
            "split_gain=" + _doubles(tree.split_gain[split]),
            "threshold=" + _doubles(threshold),
            "decision_type=" + _ints(decision_type),
            "left_child=" + _ints(left),
            "right_child=" + _ints(right),
        ]
    lines += [
        "leaf_value=" + _doubles(tree.value[leaves]),
        "leaf_weight=" + _doubles(tree.cover_weight[leaves]),
        "leaf_count=" + _ints(tree.cover_count[leaves]),
    ]
    if len(split):
        lines += [
            "internal_value=" + _doubles(tree.internal_value[split]),
            "internal_weight=" + _doubles(tree.cover_weight[split]),
            "internal_count=" + _ints(tree.cover_count[split]),
        ]
    if bitsets:
        lines += ["cat_boundaries=" + _ints(boundaries), "cat_threshold=" + _ints(np.concatenate(bitsets))]
    lines += ["is_linear=0", "shrinkage=1", "", ""]
    return "\n".join(lines)


def _pandas_categorical(model: object) -> str:
    """The footer's ``pandas_categorical``: the categories of the DataFrame columns the
    model was fitted on (``frame_categories_``), in column order, as JSON; ``null`` for a
    model fitted on codes. LightGBM's ``predict`` on a pandas DataFrame numbers each
    category column by them, as forestrank's ``predict`` does."""
    categories = getattr(model, "frame_categories_", None)
    if not categories:
        return "null"
    written = [[getattr(value, "item", lambda: value)() for value in categories[feature]] for feature in sorted(categories)]
    for feature, values in zip(sorted(categories), written):
        odd = next((value for value in values if not isinstance(value, str | int | float | bool)), None)
        if odd is not None:
            raise ValueError(
                f"LightGBM's model file keeps a DataFrame's categories as JSON numbers and strings (pandas_categorical), "
                f"and feature {feature}'s are {type(odd).__name__} ({odd!r}): LightGBM could not read them back. Fit "
                "on a column of string or number categories, or on its codes."
            )
    return json.dumps(written)


def _bitset(codes: np.ndarray) -> np.ndarray:
    """LightGBM's bitset of a set of category codes: bit ``c % 32`` of word ``c // 32``,
    as few words as hold the largest (one word for the empty set). uint32 array."""
    n_words = int(codes.max()) // 32 + 1 if len(codes) else 1
    words = np.zeros(n_words, dtype=np.uint32)
    np.bitwise_or.at(words, codes // 32, np.left_shift(np.uint32(1), (codes % 32).astype(np.uint32)))
    return words


def _doubles(values: np.ndarray) -> str:
    """Doubles as LightGBM writes them: each the shortest text that reads back exactly."""
    return " ".join(repr(float(value)) for value in values)


def _ints(values: np.ndarray) -> str:
    """Integers, space-separated."""
    return " ".join(str(int(value)) for value in values)
