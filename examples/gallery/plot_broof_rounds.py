"""
BROOF's boosting rounds
=======================

Test NDCG@10 after each round of forests (``staged_predict``) next to each round's
weighted out-of-bag error (``estimator_errors_``).
"""

import matplotlib.pyplot as plt
import numpy as np

from forestrank import BROOF, make_ranking, ndcg_score

X, y, qid = make_ranking(n_queries=300, docs_per_query=20, n_features=20, random_state=0)
train = qid < 220
model = BROOF(n_estimators=8, n_trees=20, random_state=0).fit(X[train], y[train], qid=qid[train])
ndcg = [ndcg_score(y[~train], scores, qid[~train], k=10) for scores in model.staged_predict(X[~train])]
figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
left.plot(np.arange(1, len(ndcg) + 1), ndcg, marker="o")
left.set_xlabel("rounds kept")
left.set_ylabel("test NDCG@10")
right.bar(np.arange(1, len(model.estimator_errors_) + 1), model.estimator_errors_)
right.set_xlabel("round")
right.set_ylabel("weighted out-of-bag error")
plt.tight_layout()
plt.show()
