"""
Tuning with GridSearchCV and grouped folds
==========================================

Metadata routing hands ``qid`` to the ranker's ``fit``, to ``QueryKFold`` (no fold cuts
a query) and to the NDCG scorer.
"""

import matplotlib.pyplot as plt
import sklearn
from sklearn.model_selection import GridSearchCV

from forestrank import LambdaMART, QueryKFold, make_ranking, ndcg_scorer

sklearn.set_config(enable_metadata_routing=True)
X, y, qid = make_ranking(n_queries=200, docs_per_query=20, n_features=15, random_state=0, shuffle=True)
grid = {"max_leaf_nodes": [4, 15, 31], "learning_rate": [0.05, 0.2]}
search = GridSearchCV(LambdaMART(n_estimators=40, random_state=0), grid, cv=QueryKFold(3), scoring=ndcg_scorer(10))
search.fit(X, y, qid=qid)
figure, axis = plt.subplots(figsize=(6, 3.5))
for rate in grid["learning_rate"]:
    rows = [i for i, params in enumerate(search.cv_results_["params"]) if params["learning_rate"] == rate]
    axis.plot(grid["max_leaf_nodes"], search.cv_results_["mean_test_score"][rows], marker="o", label=f"learning_rate={rate}")
axis.set_xlabel("max_leaf_nodes")
axis.set_ylabel("mean NDCG@10 over 3 grouped folds")
axis.legend()
plt.show()
print("best:", search.best_params_)
