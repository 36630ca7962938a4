"""Feature importances as horizontal bars (LightGBM's ``plot_importance``)."""

from collections.abc import Sequence
from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._input.labels import check_flag, check_positive_int
from ..serving._terms import resolve_feature_names
from ._axes import axes_or_new


def plot_importance(
    model: object, *, max_num_features: int | None = None, feature_names: Sequence[str] | None = None,
    ignore_zero: bool = True, ax: object = None, title: str | None = "Feature importance",
    xlabel: str = "importance", precision: int = 3,
    figsize: tuple[float, float] | None = None,
) -> object:  # fmt: skip
    """Draw ``feature_importances_`` as horizontal bars, the largest on top.

    Parameters
    ----------
    model : a fitted forestrank ranker with ``feature_importances_``
    max_num_features : int or None, default=None
        Draw the largest ones only; None: all.
    feature_names : sequence of str or None, default=None
        One per feature; None: the names the model was fitted with, else ``feature_<i>``.
    ignore_zero : bool, default=True
        Leave out the features no split used.
    ax : matplotlib Axes or None, default=None
    title, xlabel : str or None
    precision : int, default=3
        Decimals of the value written beside each bar.
    figsize : (float, float) or None, default=None

    Returns
    -------
    matplotlib Axes
        Its bars in ``ax.patches``, bottom to top (smallest to largest), their labels
        the feature names.
    """
    check_is_fitted(model)
    importances = np.asarray(model.feature_importances_, dtype=np.float64)
    names = resolve_feature_names(model, feature_names, "the plot", default="feature_{}")
    order = np.argsort(importances, kind="stable")[::-1]
    check_positive_int("precision", precision, minimum=0)
    if check_flag("ignore_zero", ignore_zero):
        order = order[importances[order] > 0]
    if max_num_features is not None:
        if isinstance(max_num_features, bool) or not isinstance(max_num_features, Integral) or max_num_features < 1:
            raise ValueError(f"max_num_features must be an integer >= 1 or None; got {max_num_features!r}.")
        order = order[:max_num_features]
    if not len(order):
        raise ValueError("no feature has a positive importance: the model made no split (ignore_zero=False draws them).")
    order = order[::-1]  # matplotlib draws the first bar at the bottom
    ax = axes_or_new(ax, figsize)
    positions = np.arange(len(order))
    ax.barh(positions, importances[order], align="center", height=0.6)
    ax.set_yticks(positions, [names[index] for index in order])
    for position, value in zip(positions, importances[order]):
        ax.text(value, position, f" {value:.{precision}f}", va="center")
    ax.set_xlim(0, importances[order].max() * 1.15 or 1.0)  # all zero (ignore_zero=False): a visible, unit axis
    ax.set_xlabel(xlabel)
    if title is not None:
        ax.set_title(title)
    return ax

