"""
Coming from CatBoost: the same NDCG
===================================

``CatBoostRanker`` takes ``group_id`` (one id per row, each query's rows together);
forestrank takes ``qid`` (one id per row, in any order). CatBoost's ``NDCG:top=10;type=Exp``
scores a query without relevant documents 1 and ranks tied scores worst first:
``ndcg_score(..., ties="pessimistic", no_relevant=1)`` gives its number.
``type=Base``, CatBoost's default NDCG, is the linear gain: ``gain="linear"``.
forestrank's nearest model to CatBoost's ``LambdaMart`` loss is ``LambdaMART`` on
symmetric trees, which bring CatBoost's L2 prior and split noise with them
(``docs/from_catboost.md``).
"""

import catboost

from forestrank import LambdaMART, make_ranking, ndcg_score
from forestrank.plotting import plot_query_comparison

X, y, qid = make_ranking(n_queries=500, docs_per_query=(5, 40), n_features=20, random_state=0)
train, test = qid < 400, qid >= 400
metric = "NDCG:top=10;type=Exp"

cat = catboost.CatBoostRanker(
    iterations=300, learning_rate=0.1, loss_function="LambdaMart", eval_metric=metric, use_best_model=False,
    random_seed=0, verbose=False, thread_count=2, allow_writing_files=False,
)  # fmt: skip
cat.fit(catboost.Pool(X[train], y[train], group_id=qid[train]), eval_set=catboost.Pool(X[test], y[test], group_id=qid[test]))
ours = LambdaMART(n_estimators=300, learning_rate=0.1, grow_policy="symmetric", random_state=0).fit(X[train], y[train], qid=qid[train])

catboost_scores, our_scores = cat.predict(X[test]), ours.predict(X[test])
convention = {"ties": "pessimistic", "no_relevant": 1}  # CatBoost's NDCG
print(f"CatBoost's model, {metric} by CatBoost:   {cat.get_evals_result()['validation'][metric][-1]:.6f}")
print(f"CatBoost's model, NDCG@10 by forestrank:  {ndcg_score(y[test], catboost_scores, qid[test], 10, **convention):.6f}")
print(f"forestrank's model, NDCG@10, the same:    {ndcg_score(y[test], our_scores, qid[test], 10, **convention):.6f}")

# %%
# The two models query by query
plot_query_comparison(y[test], catboost_scores, our_scores, qid[test], names=("CatBoostRanker", "LambdaMART"), **convention)
