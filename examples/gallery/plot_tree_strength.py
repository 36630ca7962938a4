"""
Tree strength, split by split: RF-point against RF-list
========================================================

The mean expected NDCG@10 of the forests' single trees after each number of splits
(Ibrahim & Carman §6.3, Fig. 7), on training and test queries: RF-list's listwise
splits make strong trees from the first splits on.
"""

import matplotlib.pyplot as plt
import numpy as np

from forestrank import RFListRanker, RFPointRanker, make_ranking, tree_strength_curve

X, y, qid = make_ranking(n_queries=300, docs_per_query=20, n_features=20, random_state=0)
train = qid < 220
forests = {
    "RF-point": RFPointRanker(n_estimators=10, expansion="breadth", random_state=0),
    "RF-list": RFListRanker(n_estimators=10, random_state=0),
}
figure, axis = plt.subplots(figsize=(6, 4))
for name, forest in forests.items():
    forest.fit(X[train], y[train], qid=qid[train])
    for rows, style, label in ((train, "-", "train"), (~train, "--", "test")):
        curve = tree_strength_curve(forest, X[rows], y[rows], qid[rows], n_splits=np.arange(61), k=10)
        axis.plot(curve.n_splits, curve.ndcg, style, label=f"{name}, {label}")
axis.set_xlabel("splits per tree")
axis.set_ylabel("mean single-tree expected NDCG@10")
axis.legend()
plt.show()
