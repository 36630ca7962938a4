"""The comparison of two models' trees that the cluster tests share (``parallel/test_cluster.py``,
``ensemble/test_partitioned.py``; their ``cluster_data`` and ``dask_client`` fixtures are in
``conftest.py``)."""

import numpy as np

from forestrank import BROOF


def forest_trees(model):
    """Every tree of a forest, or of every round of a BROOF."""
    forests = model.estimators_ if isinstance(model, BROOF) else [model]
    return [tree for forest in forests for tree in forest.trees_]


def assert_same_trees(model, reference):
    trees, expected = forest_trees(model), forest_trees(reference)
    assert len(trees) == len(expected)
    for tree, other in zip(trees, expected):
        np.testing.assert_array_equal(tree.nodes, other.nodes)
        np.testing.assert_array_equal(tree.values, other.values)
