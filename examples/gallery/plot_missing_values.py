"""
Missing values: learned directions against imputation
======================================================

Half of the informative features' values are missing, more often for less relevant
documents (``missing="mnar"``): LambdaMART learns where each split sends them, sets them
apart (``missing_direction="separate"``), or sees imputed zeros.
"""

import matplotlib.pyplot as plt
import numpy as np

from forestrank import LambdaMART, make_ranking, ndcg_score

X, y, qid = make_ranking(n_queries=400, docs_per_query=20, n_features=15, missing_fraction=0.5, missing="mnar", random_state=0)
train = qid < 300
variants = {
    "learned direction": (LambdaMART(n_estimators=80, random_state=0), X),
    "three-way split": (LambdaMART(n_estimators=80, missing_direction="separate", random_state=0), X),
    "zero-imputed": (LambdaMART(n_estimators=80, random_state=0), np.nan_to_num(X)),
}
results = {}
for name, (model, data) in variants.items():
    model.fit(data[train], y[train], qid=qid[train])
    results[name] = ndcg_score(y[~train], model.predict(data[~train]), qid[~train], k=10)
figure, axis = plt.subplots(figsize=(6, 3.5))
axis.bar(list(results), list(results.values()))
axis.set_ylim(min(results.values()) - 0.05, max(results.values()) + 0.02)
axis.set_ylabel("test NDCG@10")
plt.show()
