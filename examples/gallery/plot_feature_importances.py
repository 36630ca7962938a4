"""
Feature importances of a forest and a boosted model
===================================================

Mean decrease in impurity (``feature_importances_``) of RF-point and LambdaMART on
``make_ranking`` data, of which five features, drawn at random, carry the relevance: on
this draw columns 3, 6, 9, 10 and 13. LambdaMART ranks them first; the forest, whose
deep trees also split on noise, ranks four of them first and column 6 level with
column 5.
"""

import matplotlib.pyplot as plt
import numpy as np

from forestrank import LambdaMART, RFPointRanker, make_ranking

X, y, qid = make_ranking(n_queries=300, docs_per_query=20, n_features=15, n_informative=5, random_state=0)
models = [RFPointRanker(n_estimators=50, random_state=0), LambdaMART(n_estimators=100, random_state=0)]
figure, axis = plt.subplots(figsize=(7, 3.5))
width = 0.4
for offset, model in zip((-width / 2, width / 2), models):
    model.fit(X, y, qid=qid)
    axis.bar(np.arange(X.shape[1]) + offset, model.feature_importances_, width, label=type(model).__name__)
axis.set_xlabel("feature")
axis.set_ylabel("importance")
axis.legend()
plt.show()
