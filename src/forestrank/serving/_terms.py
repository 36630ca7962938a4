"""A fitted ranker as the trees every export writes, and the float32 thresholds that keep
a serving engine on forestrank's branches.

Each ensemble describes how it combines its trees (``_additive_terms``): a list of
``(tree, weight, target)``, a base value per target and, for McRank, the grade weights
of its expected grade. The exports to other engines' formats read that description
through :func:`additive_terms` and :func:`scalar_trees`, which give each tree as arrays
in the node order of forestrank's own trees (:class:`ExportTree`), so that every format
numbers its nodes the same way and a test can compare the leaves reached.

forestrank sends a row left when ``x <= threshold`` in double precision (``_tree/_predictor.goes_left``).
An engine that holds its thresholds and features in float32 needs the float32 threshold
that puts every float32 value on the same side: :func:`float32_at_most` for engines that
test ``x <= threshold``, :func:`float32_above` for those that test ``x < threshold``.
"""

from collections.abc import Callable, Iterable
from typing import NamedTuple

import numpy as np


class ExportTree(NamedTuple):
    """One tree of an ensemble as arrays over its nodes, in forestrank's node order
    (the root first, the children of node ``i`` at ``left[i]`` and ``right[i]``).

    Attributes
    ----------
    feature : int64 array of shape (n_nodes,)
        The split feature, -1 at a leaf.
    threshold : float64 array of shape (n_nodes,)
        A row goes left when ``x <= threshold`` (0 at a leaf).
    left, right : int64 arrays of shape (n_nodes,)
        The children, -1 at a leaf.
    missing_left : bool array of shape (n_nodes,)
        Whether a missing value (NaN) goes left (False at a leaf).
    value : float64 array of shape (n_nodes,)
        The leaf values (times ``weight`` and plus the base once :func:`folded`), 0 at
        internal nodes.
    internal_value : float64 array of shape (n_nodes,)
        The training-weighted node means (times ``weight`` once folded).
    n_samples : int64 array of shape (n_nodes,)
        Training rows through each node (0 at a leaf of a symmetric tree that no row
        reached).
    hessian : float64 array of shape (n_nodes,)
        Training weight through each node.
    cover_count, cover_weight : int64 and float64 arrays of shape (n_nodes,)
        ``n_samples`` and ``hessian`` as the formats whose TreeSHAP divides by them
        (LightGBM's counts and weights, XGBoost's ``sum_hessian``) are given them:
        positive everywhere (:func:`positive_covers`).
    depth : int64 array of shape (n_nodes,)
        The root is at depth 0.
    is_leaf : bool array of shape (n_nodes,)
    is_categorical : bool array of shape (n_nodes,)
        The splits on a categorical feature. These two are stored, not derived on each
        reading: the writers read them node by node.
    split_gain : float64 array of shape (n_nodes,)
        Each split's share of its tree's gain for its feature (``Tree.feature_gains``
        divided evenly among the tree's splits on that feature; 0 at a leaf): forestrank
        keeps gains per feature and tree, not per node, so a split's own gain is not
        exported, while the sum over a feature's splits is its gain in the tree, from
        which LightGBM's and XGBoost's importances are computed.
    weight : float
        The term's weight in the ensemble; 1 once folded into ``value``.
    category_left : tuple of (bool array or None), one per node, or None
        At a split on a categorical feature, whether each code ``0 .. 64 w - 1`` goes
        left (``Tree.category_bits``); every other value (a NaN, a negative code, one
        past these) goes the way of ``missing_left``. None at numeric splits and leaves,
        and in place of the tuple in a tree without categorical splits.
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    missing_left: np.ndarray
    value: np.ndarray
    internal_value: np.ndarray
    n_samples: np.ndarray
    hessian: np.ndarray
    cover_count: np.ndarray
    cover_weight: np.ndarray
    depth: np.ndarray
    is_leaf: np.ndarray
    is_categorical: np.ndarray
    split_gain: np.ndarray
    weight: float
    category_left: tuple | None = None

    def category_set(self, node: int) -> tuple[np.ndarray, int, int]:
        """The categorical split at ``node`` as a set test that serving engines share: ``(codes,
        set child, other child)``, where the codes (int64, increasing) are those sent away
        from the side of missing values, to the set child, and every other value (a
        missing one, a code the fit did not see, a negative code) goes to the other child.
        LightGBM's and XGBoost's categorical splits send what is not in their set, missing
        values included, one way: this form is theirs, whichever side forestrank learned."""
        left = self.category_left[node]
        if self.missing_left[node]:
            return np.flatnonzero(~left), int(self.right[node]), int(self.left[node])
        return np.flatnonzero(left), int(self.left[node]), int(self.right[node])


def additive_terms(
    model: object, categories: str | None = None, target_statistics: bool = False
) -> tuple[list, np.ndarray, np.ndarray | None]:
    """``([(tree, weight, target), ...], base values per target, grade weights or None)``:
    the model's prediction is ``sum weight * leaf value`` per target plus the base, then,
    for McRank, ``sum_c F(c) softmax_c`` of the targets with the grade weights ``F``. Each
    ensemble gives its own (``_additive_terms``); anything else is refused by name.

    ``categories``: None where the caller writes categorical splits; else the name of
    the format that cannot, and a model with such splits is refused naming it.
    ``target_statistics``: whether the caller computes the columns of a model fitted with
    ``cat_target_statistics`` (``target_statistics_``); if not, such a model is refused."""
    from sklearn.utils.validation import check_is_fitted

    if not hasattr(model, "_additive_terms"):
        # a CalibratedRanker's scores and trees are its ranker's (the exports take it as that ranker)
        hint = " Its trees are its ranker's: pass model.estimator_." if hasattr(model, "predict_relevance") else ""
        raise TypeError(f"model must be a fitted forestrank ranker with trees; got {type(model).__name__}.{hint}")
    check_is_fitted(model)
    if getattr(model, "target_statistics_", None) and not target_statistics:
        raise ValueError(
            f"this {type(model).__name__} was fitted with cat_target_statistics=True: its trees read each category's "
            "target statistic, which only the ONNX export (float64 input) computes. Export it to ONNX, or fit with "
            "cat_target_statistics=False."
        )
    terms = model._additive_terms()
    if categories is not None and any(tree.has_categories for tree, _, _ in terms[0]):
        raise ValueError(
            f"this {type(model).__name__} splits on categorical features (categorical_features), which {categories} "
            "cannot express: it has no test of a set of categories. Export to LightGBM, XGBoost or ONNX, or fit on "
            "one 0/1 feature per category (docs/categorical.md, docs/serving.md)."
        )
    return terms


FLOAT32_MAX = float(np.finfo(np.float32).max)


def largest_scores(terms: list, base: np.ndarray) -> np.ndarray:
    """A bound on each target's largest score magnitude: ``|base| + sum |weight| * max |leaf|``
    over the target's terms (``additive_terms``' lists), float64 array of shape (n_targets,).
    A row reaches one leaf per tree, so no row's sum, nor any partial sum, exceeds it."""
    bounds = np.abs(np.asarray(base, dtype=np.float64)).copy()
    for tree, weight, target in terms:
        leaves = tree.nodes["threshold"][tree.nodes["feature"] < 0]
        bounds[target] += abs(weight) * np.abs(leaves).max()
    return bounds


def check_float32_scores(terms: list, base: np.ndarray, target_format: str, *, weights_apart: bool = False) -> None:
    """Refuse a model whose scores a float32 engine could not hold.

    Parameters
    ----------
    terms, base : ``additive_terms``' first two values
    target_format : str
        The format's name, for the error.
    weights_apart : bool
        Whether the format holds each tree's weight apart from its leaves (Solr's),
        whose unweighted values must then fit in float32 too.

    Raises
    ------
    ValueError
        When a score bound (:func:`largest_scores`), or with ``weights_apart`` a leaf,
        exceeds the largest float32: the engine's leaves or sums would be infinite where
        forestrank's float64 scores are finite.
    """
    bound = float(largest_scores(terms, base).max())
    if weights_apart:
        leaves = [np.abs(tree.nodes["threshold"][tree.nodes["feature"] < 0]).max() for tree, _, _ in terms]
        bound = max([bound, *map(float, leaves)])
    if not bound <= FLOAT32_MAX:
        raise ValueError(
            f"{target_format} holds scores in float32 (at most {FLOAT32_MAX:.4g})"
            f"{', its leaves too, apart from each tree weight;' if weights_apart else ','} and this model's can reach "
            f"{bound:.4g}: the engine would score rows inf "
            "where forestrank's scores are finite. Export it to LightGBM's format (doubles; "
            "forestrank.export.to_lightgbm, or --format lightgbm), or refit on targets of a smaller range (label_gain, "
            "target)."
        )


def scalar_trees(
    model: object, target_format: str, *, keep_weights: bool = False, float32: bool = False, categories: bool = True
) -> tuple[list, float]:
    """The model as one sum of trees, for a format whose score is a sum of leaf values.

    Parameters
    ----------
    model : a fitted forestrank ranker
    target_format : str
        The format's name, for the refusal of McRank.
    keep_weights : bool
        False: each leaf multiplied by its term's weight (every tree's ``weight`` is 1)
        and the base added to the first tree's leaves, for formats without tree weights
        or a base score. True: the weights kept as each tree's ``weight`` and the base
        returned apart, for formats with both.
    float32 : bool
        Whether the format holds scores in float32: a model whose scores it could not
        hold is refused (:func:`check_float32_scores`).
    categories : bool
        Whether the format has categorical splits: if not, a model with them is refused.

    Returns
    -------
    trees : list of ExportTree
        At least one: a model without trees gives one leaf holding the base.
    base : float
        The base value not in the trees (0.0 unless ``keep_weights``).
    """
    terms, base, grade_weights = additive_terms(model, None if categories else target_format)
    if grade_weights is not None:
        raise ValueError(
            f"{target_format} cannot express McRank (objective='mcrank'): its score is the expected grade under a "
            "softmax of one sum of trees per grade, and the format scores one sum of trees. Export it to ONNX "
            "(forestrank.export.to_onnx, or --format onnx), which computes the softmax."
        )
    if len(base) != 1 or any(target != 0 for _, _, target in terms):
        raise ValueError(f"{target_format} scores one sum of trees; this model has {len(base)} outputs.")
    if float32:
        check_float32_scores(terms, base, target_format, weights_apart=keep_weights)
    trees = [export_tree(tree, weight) for tree, weight, _ in terms]
    base = float(base[0])
    return (trees, base) if keep_weights else (folded(trees, base), 0.0)


def folded(trees: list, base: float) -> list:
    """``trees`` (of :func:`scalar_trees` with ``keep_weights``) with each weight multiplied
    into its tree's values and ``base`` added to the first tree's leaves: one sum of
    trees of weight 1, for formats without tree weights or a base score. No trees: one
    leaf holding the base."""
    if not trees:
        return [constant_tree(base)]
    trees = [
        tree._replace(
            value=np.where(tree.is_leaf, tree.weight * tree.value, 0.0), internal_value=tree.weight * tree.internal_value,
            weight=1.0,
        )  # fmt: skip
        for tree in trees
    ]
    first = trees[0]
    trees[0] = first._replace(value=np.where(first.is_leaf, first.value + base, 0.0))
    return trees


# A share of the root's cover, small against it, and large enough to stay positive
# (not underflow) when summed up a tree of many levels.
_UNREACHED_SHARE = 2.0**-40


def positive_covers(tree: object) -> tuple[np.ndarray, np.ndarray]:
    """Each node's training rows and weight as TreeSHAP reads them (LightGBM's counts,
    XGBoost's ``sum_hessian``, shap's ``node_sample_weight``): int64 and float64 arrays of
    shape (n_nodes,).

    A symmetric tree splits every node of a level at the level's cut, so some of its
    leaves hold no training row; TreeSHAP weighs each branch by its share of its parent's
    cover, and a zero cover makes it NaN (LightGBM) or fail (XGBoost, shap). Where a node
    holds none, every leaf gets a share of the root's weight (``_UNREACHED_SHARE``) and each
    leaf without rows one row, every internal node its leaves' additions: every cover is
    then positive and still the sum of its children's, which keeps the values' sum the
    prediction; trees without such a node are unchanged.
    """
    from .._tree._tree import subtree_sums  # imported where used: the command line's help must not load numba

    counts = np.asarray(tree.n_node_samples, dtype=np.int64)
    weights = np.asarray(tree.weighted_n_node_samples, dtype=np.float64)
    if (weights > 0.0).all() and (counts > 0).all():
        return counts, weights
    leaf = tree.nodes["feature"] < 0
    leaves_under = subtree_sums(tree.nodes, leaf.astype(np.float64))
    empty_leaves_under = subtree_sums(tree.nodes, (leaf & (counts == 0)).astype(np.float64))
    return counts + empty_leaves_under.astype(np.int64), weights + weights[0] * _UNREACHED_SHARE * leaves_under


def export_tree(tree: object, weight: float) -> ExportTree:
    """``tree`` (a ``_tree._tree.Tree``) of a term weighing ``weight`` as an :class:`ExportTree`."""
    feature = tree.nodes["feature"].astype(np.int64)
    leaf = feature < 0
    left = np.where(leaf, -1, tree.nodes["left"]).astype(np.int64)
    category_left = None
    is_categorical = np.zeros(len(feature), dtype=bool)
    if tree.has_categories:
        offsets, bits = tree.category_offsets, tree.category_bits
        category_left = tuple(
            np.unpackbits(bits[offsets[node] : offsets[node + 1]].view(np.uint8), bitorder="little").astype(bool)
            if offsets[node + 1] > offsets[node] else None
            for node in range(len(feature))
        )  # fmt: skip
        is_categorical = np.array([codes is not None for codes in category_left], dtype=bool)
    cover_count, cover_weight = positive_covers(tree)
    return ExportTree(
        feature=np.where(leaf, -1, feature), threshold=np.where(leaf, 0.0, tree.nodes["threshold"]),
        left=left, right=np.where(leaf, -1, left + 1), missing_left=~leaf & (tree.missing_left == 1),
        value=np.where(leaf, tree.nodes["threshold"], 0.0), internal_value=np.asarray(tree.values, dtype=np.float64),
        n_samples=np.asarray(tree.n_node_samples, dtype=np.int64),
        hessian=np.asarray(tree.weighted_n_node_samples, dtype=np.float64), cover_count=cover_count,
        cover_weight=cover_weight, depth=tree.node_depths().astype(np.int64),
        is_leaf=leaf, is_categorical=is_categorical, split_gain=split_gains(feature, tree.feature_gains),
        weight=float(weight), category_left=category_left,
    )  # fmt: skip


def split_gains(feature: np.ndarray, feature_gains: np.ndarray) -> np.ndarray:
    """Each node's share of its tree's gain for the feature it splits on (float64,
    (n_nodes,); 0 at a leaf): ``ExportTree.split_gain``.

    Parameters
    ----------
    feature : int64 array of shape (n_nodes,)
        The split feature, negative at a leaf.
    feature_gains : float64 array of shape (n_features,)
        The tree's total gain of each feature (``Tree.feature_gains``).
    """
    split = feature >= 0
    splits_per_feature = np.bincount(feature[split], minlength=len(feature_gains))
    gains = np.zeros(len(feature))
    gains[split] = feature_gains[feature[split]] / splits_per_feature[feature[split]]
    return gains


# The deepest tree the nested JSON formats write: JSON readers bound nesting (Jackson, under
# the LTR plugins' parsers, at 1,000 levels by default; Python's json module at its
# recursion limit), and the plugins' dump nests two levels (a node and its children's
# list) per tree level.
MAX_NESTED_DEPTH = 400


def nested(
    tree: ExportTree, leaf: Callable[[int], dict], split: Callable[[int, dict, dict], dict], target_format: str
) -> dict:
    """``tree`` as nested node objects, the root's: ``leaf(node)`` for a leaf,
    ``split(node, left, right)`` for a split given its children's objects, built from the
    leaves up (children come after their parent in forestrank's node order). A tree more
    than ``MAX_NESTED_DEPTH`` levels deep is a ValueError naming ``target_format``."""
    depth = int(tree.depth.max())
    if depth > MAX_NESTED_DEPTH:
        raise ValueError(
            f"a tree of the model is {depth} levels deep, and {target_format} nests each level in JSON objects, whose "
            f"readers bound the nesting (Jackson's default: 1,000 levels): at most {MAX_NESTED_DEPTH} levels are "
            "written. Grow shallower trees (max_depth), or export to LightGBM, XGBoost or ONNX, whose trees are flat "
            "arrays."
        )
    built: dict = {}
    for node in reversed(range(len(tree.feature))):
        if tree.is_leaf[node]:
            built[node] = leaf(node)
        else:
            built[node] = split(node, built.pop(int(tree.left[node])), built.pop(int(tree.right[node])))
    return built[0]


def constant_tree(value: float) -> ExportTree:
    """One leaf holding ``value``."""
    return ExportTree(
        feature=np.array([-1]), threshold=np.zeros(1), left=np.array([-1]), right=np.array([-1]),
        missing_left=np.zeros(1, dtype=bool), value=np.array([float(value)]), internal_value=np.array([float(value)]),
        n_samples=np.zeros(1, dtype=np.int64), hessian=np.zeros(1), cover_count=np.zeros(1, dtype=np.int64),
        cover_weight=np.zeros(1), depth=np.zeros(1, dtype=np.int64),
        is_leaf=np.ones(1, dtype=bool), is_categorical=np.zeros(1, dtype=bool), split_gain=np.zeros(1), weight=1.0,
    )  # fmt: skip


def check_model_name(name: object, target_format: str, *, argument: str = "name", meaning: str | None = None) -> str:
    """``name``, the model's name in ``target_format`` (Solr's model store, the ONNX graph)
    or what ``meaning`` says: a non-empty string without NUL, or a ValueError/TypeError
    naming the export's ``argument``."""
    meaning = f"the model's name in {target_format}" if meaning is None else meaning
    if not isinstance(name, str):
        raise TypeError(f"{argument} must be a string ({meaning}); got {type(name).__name__}.")
    if not name or "\0" in name:
        raise ValueError(f"{argument} must be a non-empty string without NUL characters ({meaning}); got {name!r}.")
    return name


def resolve_feature_names(
    model: object, names: object, target_format: str, *, required: bool = False, default: str | None = "f{}",
    forbidden: str = "", whitespace: bool = True,
) -> list[str]:  # fmt: skip
    """The names the export writes for the model's features.

    ``names`` given (a sequence of strings, one per feature) wins; else the names the
    model was fitted with (``feature_names_in_``); else, where the format does not match
    features by name (``required=False``), ``default`` formatted with each index, or no
    names (an empty list) when ``default`` is None.
    Names must be distinct, non-empty strings without the characters ``forbidden`` (those
    of the format's own syntax), nor whitespace where ``whitespace`` is False.
    """
    n_features = int(model.n_features_in_)
    if names is None:
        names = getattr(model, "feature_names_in_", None)
        if names is None:
            if required:
                raise ValueError(
                    f"feature_names are needed for {target_format}: the engine finds each feature by its name in its "
                    f"feature store. Give {n_features} names (the model was fitted without them)."
                )
            return [] if default is None else [default.format(index) for index in range(n_features)]
    if isinstance(names, str) or not isinstance(names, Iterable) or not all(isinstance(name, str) for name in names):
        raise TypeError(f"feature_names must be a sequence of {n_features} strings; got {type(names).__name__}.")
    names = list(names)
    if len(names) != n_features:
        raise ValueError(f"feature_names has {len(names)} names; the model has {n_features} features.")
    if not all(names):
        raise ValueError("feature_names must be non-empty strings; got ''.")
    if any("\0" in name for name in names):
        raise ValueError(f"feature_names hold no NUL character; got {next(name for name in names if chr(0) in name)!r}.")
    bad = [
        name for name in names
        if any((character.isspace() and not whitespace) or character in forbidden for character in name)
    ]  # fmt: skip
    if bad:
        held = " or ".join([*([] if whitespace else ["whitespace"]), *map(repr, forbidden)])
        raise ValueError(f"{target_format} feature names hold no {held}; got {bad[0]!r} (give feature_names).")
    if len(set(names)) != len(names):
        repeated = next(name for name in names if names.count(name) > 1)
        raise ValueError(f"feature_names must be distinct; {repeated!r} repeats.")
    return names


def float32_at_most(threshold: np.ndarray) -> np.ndarray:
    """The largest float32 not above each float64 ``threshold`` (float32 array, same shape).

    For every float32 ``x``: ``x <= float32_at_most(t)`` exactly when ``x <= t``, so an
    engine testing ``x <= threshold`` in float32 takes forestrank's branch. Rounding ``t``
    to the nearest float32 instead would send the values between ``t`` and its rounding
    the other way.
    """
    threshold = np.asarray(threshold, dtype=np.float64)
    # Beyond the largest float32 the cast gives inf, and the step down from inf (to the
    # largest float32, the right answer) raises the overflow flag.
    with np.errstate(over="ignore"):
        rounded = threshold.astype(np.float32)
        above = rounded.astype(np.float64) > threshold
        return np.where(above, np.nextafter(rounded, np.float32(-np.inf)), rounded).astype(np.float32)


def float32_above(threshold: np.ndarray) -> np.ndarray:
    """The smallest float32 above each float64 ``threshold`` (float32 array, same shape).

    For every float32 ``x``: ``x < float32_above(t)`` exactly when ``x <= t``: the
    threshold for engines that test ``x < threshold`` (XGBoost and the formats that copy it).
    """
    with np.errstate(over="ignore"):  # the largest float32's successor is inf: every float32 is below it
        return np.nextafter(float32_at_most(threshold), np.float32(np.inf)).astype(np.float32)


def json_float(value: float) -> float:
    """A float32 value for a JSON model file: the Python float of its exact value, whose
    shortest repr (what ``json.dumps`` writes) parses back to the same float32 whether a
    reader parses it as a double or as a float32. An infinite value, which a JSON number
    cannot hold, is refused."""
    number = float(np.float32(value))
    if not np.isfinite(number):
        raise ValueError(f"a threshold or leaf value of {number} has no JSON number: the format cannot hold it.")
    return number
