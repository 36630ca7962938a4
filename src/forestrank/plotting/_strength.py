"""A forest's tree-strength curve (``diagnostics.tree_strength_curve``)."""

from ..diagnostics import tree_strength_curve
from ._axes import axes_or_new


def plot_tree_strength(
    estimator: object, X: object, y: object, qid: object, *, n_splits: object = None, k: int | None = None,
    label: str | None = None, ax: object = None, figsize: tuple[float, float] | None = None, **line_kwargs: object,
) -> object:  # fmt: skip
    """Draw the mean NDCG of the forest's single trees after each number of splits
    (Ibrahim & Carman §6.3, Fig. 7). Call it on training and on test rows, on the same
    ``ax``, to see the trees fit and generalise.

    Parameters
    ----------
    estimator : fitted RFPointRanker, RFListRanker or RFHybridRanker
    X, y, qid, n_splits, k : as ``forestrank.tree_strength_curve`` takes them
    label : str or None, default=None
        The line's label; None: the estimator's class name.
    ax : matplotlib Axes or None, default=None
    figsize : (float, float) or None, default=None
    **line_kwargs
        Passed to ``Axes.plot`` (``linestyle="--"`` for the test rows, say).

    Returns
    -------
    matplotlib Axes
        With the curve as its last line (``ax.lines[-1].get_data()``: the split
        counts and the NDCG values).
    """
    curve = tree_strength_curve(estimator, X, y, qid, n_splits=n_splits, k=k)
    ax = axes_or_new(ax, figsize)
    ax.plot(curve.n_splits, curve.ndcg, label=type(estimator).__name__ if label is None else label, **line_kwargs)
    ax.set_xlabel("splits per tree")
    ax.set_ylabel(f"mean single-tree expected NDCG{'' if k is None else f'@{k}'}")
    ax.legend(loc="best")
    ax.grid(True, alpha=0.3)
    return ax
