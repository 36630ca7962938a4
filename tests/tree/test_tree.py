"""The fitted tree's container: sums over its subtrees, and its leaves of rows."""

import numpy as np
import pytest
import scipy.sparse

from forestrank import LambdaMART, RFPointRanker, make_ranking
from forestrank._tree._tree import subtree_sums


def test_subtree_sums_add_the_leaves_below_every_node_in_one_and_two_dimensions():
    X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=5, random_state=0)
    tree = RFPointRanker(n_estimators=1, max_depth=4, random_state=0).fit(X, y, qid=qid).trees_[0]
    leaves = tree.nodes["feature"] < 0
    rng = np.random.default_rng(0)
    columns = np.where(leaves[:, None], rng.normal(size=(tree.node_count, 3)), np.nan)  # internal entries ignored
    sums = subtree_sums(tree.nodes, columns)
    children = {node: (tree.nodes["left"][node], tree.nodes["left"][node] + 1) for node in np.flatnonzero(~leaves)}

    def below(node):
        return [node] if leaves[node] else below(children[node][0]) + below(children[node][1])

    for node in range(tree.node_count):
        np.testing.assert_allclose(sums[node], columns[below(node)].sum(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(subtree_sums(tree.nodes, columns[:, 1]), sums[:, 1])


def test_apply_refuses_an_x_narrower_than_the_tree_or_not_two_dimensional():
    """The kernel reads a row's features unchecked: a narrower X read the next rows' values
    (one row's leaf changed with other rows), a list or one row failed inside numpy/numba."""
    X, y, qid = make_ranking(n_queries=20, docs_per_query=(8, 15), n_features=6, random_state=0)
    tree = LambdaMART(n_estimators=1, random_state=0).fit(X, y, qid=qid).trees_[0]
    for bad in (X[:, :5], X[0], scipy.sparse.csr_matrix(X[:, :5])):
        with pytest.raises(ValueError, match=r"X must be two-dimensional with at least the tree's 6 features; got shape"):
            tree.apply(bad)
    np.testing.assert_array_equal(tree.apply(X[:3].tolist()), tree.apply(X[:3]))
    np.testing.assert_array_equal(tree.apply(np.hstack([X, X])), tree.apply(X))  # wider: the first columns are read
