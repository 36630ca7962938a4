"""The fitted tree's container: sums over its subtrees."""

import numpy as np

from forestrank import RFPointRanker, make_ranking
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
