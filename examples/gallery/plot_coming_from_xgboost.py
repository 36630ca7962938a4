"""
Coming from XGBoost: the same ranker, the same NDCG
===================================================

``XGBRanker`` takes ``qid`` as forestrank does (XGBoost wants its rows sorted by it;
forestrank sorts them itself). Its default ranker grows depth-6 trees with an L2 term
and a minimum hessian of 1, on its hessians' scale, which is twice LightGBM's and ours:
at the same ``learning_rate`` its LambdaRank steps are half forestrank's, and
``LambdaMART(learning_rate=r / 2, max_depth=6, max_leaf_nodes=None, min_samples_leaf=1,
min_child_weight=0.5, l2_regularization=0.5, lambdarank_truncation_level=32)`` is
``XGBRanker(learning_rate=r)``'s configuration (``docs/from_xgboost.md``: XGBoost's pairs
reach the top 32 documents of a query, ours by default the top 30). XGBoost's
``ndcg@10`` scores a query without relevant documents 1 and keeps tied scores in input
order: ``ndcg_score(..., ties="input_order", no_relevant=1)``.
"""

import xgboost

from forestrank import LambdaMART, make_ranking, ndcg_score
from forestrank.plotting import plot_query_comparison

X, y, qid = make_ranking(n_queries=500, docs_per_query=(5, 40), n_features=20, random_state=0)
train, test = qid < 400, qid >= 400

xgb = xgboost.XGBRanker(n_estimators=100, learning_rate=0.3, eval_metric="ndcg@10", random_state=0)
xgb.fit(X[train], y[train], qid=qid[train], eval_set=[(X[test], y[test])], eval_qid=[qid[test]], verbose=False)
ours = LambdaMART(
    n_estimators=100, learning_rate=0.15, max_depth=6, max_leaf_nodes=None, min_samples_leaf=1, min_child_weight=0.5,
    l2_regularization=0.5, lambdarank_truncation_level=32, random_state=0,
).fit(X[train], y[train], qid=qid[train])  # fmt: skip

xgboost_scores, our_scores = xgb.predict(X[test]), ours.predict(X[test])
convention = {"ties": "input_order", "no_relevant": 1}  # XGBoost's ndcg@10
print(f"XGBoost's model, NDCG@10 by XGBoost:     {xgb.evals_result()['validation_0']['ndcg@10'][-1]:.6f}")
print(f"XGBoost's model, NDCG@10 by forestrank:  {ndcg_score(y[test], xgboost_scores, qid[test], 10, **convention):.6f}")
print(f"forestrank's model, NDCG@10, the same:   {ndcg_score(y[test], our_scores, qid[test], 10, **convention):.6f}")

# %%
# The two models query by query
plot_query_comparison(y[test], xgboost_scores, our_scores, qid[test], names=("XGBRanker", "LambdaMART"), **convention)
