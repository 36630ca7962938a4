"""What the cluster tests share: a dask.distributed LocalCluster, the data, and the
comparison of two models' trees (``parallel/test_cluster.py``, ``ensemble/test_partitioned.py``)."""

import numpy as np
import pytest

from forestrank import BROOF, make_ranking


def cluster_data():
    """The data of the cluster tests: 200 queries of 30 documents, 20 features."""
    return make_ranking(n_queries=200, docs_per_query=30, n_features=20, random_state=0)


def local_cluster_client():
    """A client of a ``LocalCluster`` of two single-threaded worker processes (a generator
    for a fixture), the set-up of the cluster issue's acceptance."""
    distributed = pytest.importorskip("distributed", reason="the dask backend needs forestrank[dask]")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


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
