"""One tree of a fitted ranker, drawn with matplotlib (no graphviz needed)."""

from collections.abc import Sequence
from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._input.labels import check_positive_int
from ..serving._terms import additive_terms, export_tree, resolve_feature_names
from ._axes import axes_or_new

MAX_CODES_SHOWN = 6  # a categorical split's box lists this many of its codes


def plot_tree(
    model: object, tree_index: int = 0, *, feature_names: Sequence[str] | None = None, max_depth: int | None = None,
    precision: int = 3, ax: object = None, fontsize: float = 8.0, figsize: tuple[float, float] | None = None,
) -> object:  # fmt: skip
    """Draw tree ``tree_index`` of the model: splits ``feature <= threshold`` (categorical
    ones ``feature in {codes}`` or ``not in``) with the side missing values take, leaves
    with their value and training rows.

    The trees are numbered as the exports number them (``forestrank.export``: an
    ``init`` model's trees first, then the ensemble's in order; a McRank model's trees
    cycle through the grades, as a cumulative model's, which no export takes, cycle
    through its grade thresholds; an ``init`` whose trees no export lists, of another
    library or of one score per grade, is left out and the boosted trees are numbered
    from 0), and a leaf's value is the one the tree stores, before the ensemble's weight
    (a forest's ``1 / n_trees``) multiplies it.

    Parameters
    ----------
    model : a fitted forestrank ranker with trees
    tree_index : int, default=0
    feature_names : sequence of str or None, default=None
        One per feature; None: the names the model was fitted with, else ``feature_<i>``.
    max_depth : int or None, default=None
        Draw the nodes down to this depth; a split below it is drawn as ``...``.
    precision : int, default=3
        Significant digits of thresholds and values.
    ax : matplotlib Axes or None, default=None
    fontsize : float, default=8.0
    figsize : (float, float) or None, default=None

    Returns
    -------
    matplotlib Axes
        Its ``texts`` hold each edge's line (an empty annotation) and its "yes" or "no",
        then one box per node drawn, in forestrank's node order, each with the ``gid``
        ``"node <i>"``.
    """
    if getattr(model, "_cumulative_outputs", False) and not getattr(model, "target_statistics_", None):
        check_is_fitted(model)  # no sum of trees to export: its trees in order
        trees = list(model.trees_)
    else:
        try:
            trees = [tree for tree, _, _ in additive_terms(model)[0]]
        except TypeError:  # an init of another library or of one score per grade: no sum of trees to list
            if getattr(model, "init_", None) is None:
                raise
            trees = list(model.trees_)
    if isinstance(tree_index, bool) or not isinstance(tree_index, Integral):
        raise TypeError(f"tree_index must be an integer; got {tree_index!r}.")
    if not -len(trees) <= tree_index < len(trees):
        raise IndexError(f"tree_index {tree_index} is out of range: the model has {len(trees)} trees.")
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, Integral) or max_depth < 0):
        raise ValueError(f"max_depth must be an integer >= 0 or None; got {max_depth!r}.")
    check_positive_int("precision", precision, minimum=0)
    tree = export_tree(trees[tree_index], 1.0)
    names = resolve_feature_names(model, feature_names, "the plot", default="feature_{}")
    shown = tree.depth <= (tree.depth.max() if max_depth is None else max_depth)
    x = _leaf_order_positions(tree, shown)
    ax = axes_or_new(ax, figsize)
    ax.set_axis_off()
    for node in np.flatnonzero(shown):
        if not tree.is_leaf[node] and shown[tree.left[node]]:
            for child, side in ((tree.left[node], "yes"), (tree.right[node], "no")):
                ax.annotate(
                    "", xy=(x[child], -tree.depth[child]), xytext=(x[node], -tree.depth[node]),
                    arrowprops={"arrowstyle": "-", "color": "grey"},
                )  # fmt: skip
                ax.text(
                    (x[node] + x[child]) / 2, -(tree.depth[node] + tree.depth[child]) / 2, side, fontsize=fontsize * 0.8,
                    ha="center", va="center", color="grey",
                )  # fmt: skip
    for node in np.flatnonzero(shown):
        ax.text(
            x[node], -tree.depth[node], _node_text(tree, node, names, precision, shown), ha="center", va="center",
            fontsize=fontsize, bbox={"boxstyle": "round", "facecolor": "white" if tree.is_leaf[node] else "#e8eef7"},
            gid=f"node {node}",
        )  # fmt: skip
    ax.set_xlim(x[shown].min() - 0.7, x[shown].max() + 0.7)
    ax.set_ylim(-tree.depth[shown].max() - 0.6, 0.6)
    return ax


def _leaf_order_positions(tree: object, shown: np.ndarray) -> np.ndarray:
    """Horizontal positions: the drawn leaves (and cut-off splits) 0, 1, 2, ... from left
    to right, each split above the middle of its children. float64 (n_nodes,)."""
    x = np.zeros(len(tree.feature))
    next_slot = 0.0
    stack = [(0, False)]
    while stack:  # depth-first, left before right; a node is placed after its children
        node, children_placed = stack.pop()
        is_end = tree.is_leaf[node] or not shown[tree.left[node]]
        if is_end:
            x[node], next_slot = next_slot, next_slot + 1.0
        elif children_placed:
            x[node] = (x[tree.left[node]] + x[tree.right[node]]) / 2
        else:
            stack += [(node, True), (int(tree.right[node]), False), (int(tree.left[node]), False)]
    return x


def _node_text(tree: object, node: int, names: list[str], precision: int, shown: np.ndarray) -> str:
    """A node's box: its test and missing side, or its value; and its training rows."""
    rows = f"rows = {tree.n_samples[node]}"
    if tree.is_leaf[node]:
        return f"value = {tree.value[node]:.{precision}g}\n{rows}"
    if not shown[tree.left[node]]:
        return f"...\n{rows}"
    missing = "missing: yes" if tree.missing_left[node] else "missing: no"
    if tree.is_categorical[node]:  # the codes that do not follow the missing values
        codes, set_child, _ = tree.category_set(node)
        listed = ", ".join(str(code) for code in codes[:MAX_CODES_SHOWN]) + (", ..." if len(codes) > MAX_CODES_SHOWN else "")
        member = "in" if set_child == tree.left[node] else "not in"
        return f"{names[tree.feature[node]]} {member} {{{listed}}}\n{missing}, {rows}"
    return f"{names[tree.feature[node]]} <= {tree.threshold[node]:.{precision}g}\n{missing}, {rows}"
