"""
Scores comparable across queries: CalibratedRanker
==================================================

A ranker's scores order the documents of one query; across queries they mean nothing
(``docs/getting_started.md``, "Scores comparable across queries"). ``CalibratedRanker``
maps them, on queries the ranker did not see, to the probability that a document is
relevant, without changing any ranking. The reliability diagram compares the calibrated
probabilities with the scores min-max scaled within each query, the usual makeshift: a
calibrated model's points lie on the diagonal.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.calibration import calibration_curve

from forestrank import CalibratedRanker, LambdaMART, make_ranking, ndcg_score
from forestrank.calibration import expected_calibration_error

X, y, qid = make_ranking(n_queries=600, docs_per_query=(10, 40), n_features=10, random_state=0)
train, test = qid < 400, qid >= 400
model = CalibratedRanker(LambdaMART(n_estimators=50, random_state=0), cv=3).fit(X[train], y[train], qid=qid[train])

scores = model.predict(X[test])
relevant = (y[test] >= 1).astype(float)
scaled = np.zeros_like(scores)
for q in np.unique(qid[test]):
    rows = qid[test] == q
    low, high = scores[rows].min(), scores[rows].max()
    scaled[rows] = (scores[rows] - low) / (high - low) if high > low else 0.5
calibrated = model.predict_relevance(X[test])
print(f"NDCG@10 of the ranker and of its calibrated values: {model.score(X[test], y[test], qid[test]):.4f}, "
      f"{ndcg_score(y[test], calibrated, qid[test], k=10):.4f} (isotonic steps tie some documents)")
print(f"expected calibration error: calibrated {expected_calibration_error(relevant, calibrated):.3f}, "
      f"min-max per query {expected_calibration_error(relevant, scaled):.3f}")

# %%
# The reliability diagram
# -----------------------

fig, ax = plt.subplots(figsize=(5, 5))
ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfectly calibrated")
for values, label in ((calibrated, "CalibratedRanker (isotonic)"), (scaled, "scores min-max per query")):
    observed, predicted = calibration_curve(relevant, values, n_bins=10)
    ax.plot(predicted, observed, marker="o", label=label)
ax.set_xlabel("predicted probability of relevance")
ax.set_ylabel("observed share of relevant documents")
ax.legend(loc="upper left")
plt.show()
