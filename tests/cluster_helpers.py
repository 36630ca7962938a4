"""What the cluster tests share: the comparison of two models' trees (``parallel/test_cluster.py``,
``ensemble/test_partitioned.py``; their ``cluster_data`` and ``dask_client`` fixtures are in
``conftest.py``), and a boosting iteration's tree problem grown over partitions
(``tree/test_remote.py``, ``ensemble/test_cluster_exchange.py``)."""

import numpy as np

from forestrank import BROOF, make_ranking
from forestrank._tree import _criteria, _frontier, _scans
from forestrank._tree._grow import TreeParams, binned_features


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


def boosting_problem(integer_targets, missing=False, seed=0):
    """Binned features, per-row (g, h) targets and weights, as a boosting iteration has them."""
    X, _, _ = make_ranking(n_queries=60, docs_per_query=(10, 40), n_features=12, random_state=seed)
    rng = np.random.default_rng(seed)
    if missing:
        X[rng.random(X.shape) < 0.2] = np.nan
    targets = np.empty((len(X), 2))
    if integer_targets:  # quantized gradients: every sum exact in any order
        targets[:, 0] = rng.integers(-8, 9, len(X))
        targets[:, 1] = rng.integers(1, 5, len(X))
        weights = (rng.random(len(X)) < 0.9).astype(float)
    else:
        targets[:, 0] = rng.normal(size=len(X)) + np.nan_to_num(X[:, 0])
        targets[:, 1] = rng.uniform(0.1, 1.0, len(X))
        weights = rng.uniform(0.5, 2.0, len(X)) * (rng.random(len(X)) < 0.9)
    return binned_features(X, 255, 0, 1), targets, weights


PARAMS = TreeParams(
    criterion=_criteria.NEWTON, n_classes=0, max_features=12, expansion=_frontier.BEST, l2_regularization=0.5,
    min_samples_leaf=8, min_child_weight=1e-3, max_leaf_nodes=31, missing_direction=_scans.LEARN,
)  # fmt: skip


def assert_same_tree(local, remote):
    for name in ("nodes", "missing_left", "values", "n_node_samples", "weighted_n_node_samples", "feature_gains"):
        np.testing.assert_array_equal(getattr(remote, name), getattr(local, name), err_msg=name)
