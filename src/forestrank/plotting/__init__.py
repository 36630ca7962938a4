"""Plots of fitted rankers on matplotlib (``pip install "forestrank[plot]"``).

Five plots, in the style of LightGBM's ``plot_metric`` / ``plot_importance`` (each
function draws on ``ax`` or a new figure and returns the matplotlib ``Axes``) and of
scikit-learn's ``Display`` objects (:class:`QueryComparisonDisplay`, with
``from_estimators`` / ``from_predictions`` and ``plot``):

- :func:`plot_metric`: the evaluation curve of a boosted model, from ``evals_result_``;
- :func:`plot_importance`: the feature importances;
- :func:`plot_tree`: one tree, drawn;
- :func:`plot_query_comparison`: the per-query NDCG of two models against each other,
  with the paired tests that ``forestrank compare`` prints;
- :func:`plot_tree_strength`: a forest's tree-strength curve (``tree_strength_curve``).

matplotlib is imported when a plot is drawn, not when this module is.
"""

from ._comparison import QueryComparisonDisplay, plot_query_comparison
from ._importance import plot_importance
from ._metric import plot_metric
from ._strength import plot_tree_strength
from ._tree import plot_tree

__all__ = ["QueryComparisonDisplay", "plot_importance", "plot_metric", "plot_query_comparison", "plot_tree", "plot_tree_strength"]
