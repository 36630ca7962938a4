"""
Staged NDCG and early stopping: LambdaMART and PLRank
======================================================

Validation NDCG@10 after every iteration (``evals_result_``), with early stopping
(``n_iter_no_change``) marking the kept iteration.
"""

import matplotlib.pyplot as plt

from forestrank import LambdaMART, PLRank, make_ranking

X, y, qid = make_ranking(n_queries=400, docs_per_query=20, n_features=20, random_state=0)
train, valid = qid < 300, qid >= 300
figure, axis = plt.subplots(figsize=(6, 4))
for model in (LambdaMART(n_estimators=150, n_iter_no_change=20, random_state=0),
              PLRank(n_estimators=150, n_iter_no_change=20, random_state=0)):
    model.fit(X[train], y[train], qid=qid[train], eval_set=[(X[valid], y[valid], qid[valid])])
    curve = model.evals_result_["valid_0"]["ndcg@10"]
    line, = axis.plot(range(1, len(curve) + 1), curve, label=type(model).__name__)
    axis.axvline(model.best_iteration_, color=line.get_color(), linestyle=":")
axis.set_xlabel("iteration")
axis.set_ylabel("validation NDCG@10")
axis.legend()
plt.show()
