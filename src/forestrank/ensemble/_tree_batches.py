"""Batches of a forest's trees grown in one task: the unit of work on a cluster."""

import dataclasses

import numpy as np

from .._tree._grow import TreeMemoryPool
from .._tree._tree import Tree


def grow_batch(shared: dict, per_forest: tuple, feature_penalty: np.ndarray | None, indices: list[int]) -> list[Tree]:
    """A cluster task (``parallel._cluster.grow_on_cluster``): trees ``indices`` of one forest.

    Parameters
    ----------
    shared : dict
        ``{"X_binned": ndarray of shape (n_rows, n_features)}``, the scattered binned
        matrix, or ``{}`` when ``per_forest``'s training set holds its own.
    per_forest : tuple
        ``(grower, training, base_weight, query_of_row, params)``: the forest's
        ``_tree_grower()``, its ``TrainingSet`` without the binned matrix, the row
        weights (float64, n_rows), the query of each row (int64, n_rows) and the
        ``TreeParams``.
    feature_penalty : ndarray of shape (n_features,) or None
        The cost penalty of the trees' wave (``_costs.FeatureCosts.penalty``).
    indices : list of int
        The trees to grow, one after another in one set of tree buffers.

    Returns
    -------
    list of Tree, in the order of ``indices``
    """
    grower, training, base_weight, query_of_row, params = per_forest
    if "X_binned" in shared:
        training = dataclasses.replace(training, X_binned=shared["X_binned"])
    memory_pool = TreeMemoryPool(training, params, int((base_weight > 0).sum()), len(indices))
    return [
        grower._grow(index, training, base_weight, query_of_row, params, memory_pool, feature_penalty)
        for index in indices
    ]
