"""
One ranking, two NDCG@10 conventions
=====================================

The official LETOR 4.0 script scores a query without a relevant document 0, a query of
fewer than ten documents 0, and ranks tied scores in input order; the plain convention
gives short queries their NDCG over the documents they have and averages over tied
orders. On short, sparsely relevant queries (like MQ2008's) the same ranking reads very
differently (``docs/metrics.md``).
"""

import matplotlib.pyplot as plt

from forestrank import RFPointRanker, describe_metric, make_ranking, ndcg_score

X, y, qid = make_ranking(n_queries=400, docs_per_query=(5, 15), n_features=15, random_state=0)
y = (y >= 3).astype(float) + (y >= 4)  # sparse relevance: most documents irrelevant
train = qid < 300
model = RFPointRanker(n_estimators=50, random_state=0).fit(X[train], y[train], qid=qid[train])
scores = model.predict(X[~train])
values = {
    "plain": ndcg_score(y[~train], scores, qid[~train], k=10),
    "letor4": ndcg_score(y[~train], scores, qid[~train], k=10, convention="letor4"),
}
figure, axis = plt.subplots(figsize=(5, 3.5))
axis.bar(list(values), list(values.values()))
axis.set_ylabel("NDCG@10 of the same ranking")
plt.show()
for convention in (None, "letor4"):
    print(describe_metric("ndcg", 10, convention=convention))
