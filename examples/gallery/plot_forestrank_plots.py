"""
The five plots of ``forestrank.plotting``
=========================================

A boosted model's evaluation curve, its feature importances, one of its trees, the
per-query NDCG of two models against each other with their paired tests, and a
forest's tree-strength curve, on ``make_ranking`` data (``pip install
"forestrank[plot]"``).
"""

import matplotlib.pyplot as plt

from forestrank import LambdaMART, RFListRanker, make_ranking
from forestrank.plotting import (
    QueryComparisonDisplay,
    plot_importance,
    plot_metric,
    plot_tree,
    plot_tree_strength,
)

X, y, qid = make_ranking(n_queries=400, docs_per_query=(10, 30), n_features=12, n_informative=5, random_state=0)
train, test = qid < 300, qid >= 300
boosted = LambdaMART(n_estimators=300, learning_rate=0.05, n_iter_no_change=30, random_state=0)
boosted.fit(X[train], y[train], qid=qid[train], eval_set=[(X[test], y[test], qid[test])])
forest = RFListRanker(n_estimators=50, random_state=0).fit(X[train], y[train], qid=qid[train])

# %%
# The evaluation curve, with the iteration early stopping kept
plot_metric(boosted)

# %%
# Feature importances: the informative features lead
plot_importance(boosted, max_num_features=8)

# %%
# The first tree of the boosted model, down to depth 3
plot_tree(boosted, 0, max_depth=3, figsize=(11, 5))

# %%
# Per-query NDCG@10 of the two models on the test queries, with the paired tests
QueryComparisonDisplay.from_estimators(forest, boosted, X[test], y[test], qid[test])

# %%
# How strong the forest's single trees are after each number of splits
ax = plot_tree_strength(forest, X[train], y[train], qid[train], k=10, label="training queries")
plot_tree_strength(forest, X[test], y[test], qid[test], k=10, label="test queries", linestyle="--", ax=ax)
plt.show()
