"""
Coming from LightGBM: the same ranker, the same NDCG
====================================================

``LGBMRanker`` takes ``group`` (the sizes of consecutive queries); forestrank takes
``qid`` (one query id per row, in any order). ``LambdaMART``'s defaults are
``LGBMRanker``'s (LambdaRank, 100 iterations, learning rate 0.1, 31 leaves, 20 rows a
leaf, NDCG's exponential gain, pairs with a document in the top 30). LightGBM scores a
query without relevant documents 1 and keeps tied scores in input order: forestrank's
``ndcg_score(..., ties="input_order", no_relevant=1)`` gives its numbers to the last
digits, where forestrank's default (expected ties, 0 for such a query) is the LETOR
convention (``docs/from_lightgbm.md``).
"""

import lightgbm
import numpy as np

from forestrank import LambdaMART, make_ranking, ndcg_score
from forestrank.plotting import plot_query_comparison

X, y, qid = make_ranking(n_queries=500, docs_per_query=(5, 40), n_features=20, random_state=0)
train, test = qid < 400, qid >= 400


def group_sizes(query_ids):
    """LightGBM's ``group``: the sizes of the runs of equal, consecutive query ids."""
    starts = np.flatnonzero(np.r_[True, query_ids[1:] != query_ids[:-1]])
    return np.diff(np.r_[starts, len(query_ids)])


lgbm = lightgbm.LGBMRanker(random_state=0, verbose=-1)
lgbm.fit(
    X[train], y[train], group=group_sizes(qid[train]),
    eval_X=X[test], eval_y=y[test], eval_group=[group_sizes(qid[test])], eval_at=[10],
)  # fmt: skip
ours = LambdaMART(random_state=0).fit(X[train], y[train], qid=qid[train])

lightgbm_scores, our_scores = lgbm.predict(X[test]), ours.predict(X[test])
convention = {"ties": "input_order", "no_relevant": 1}  # LightGBM's NDCG
print(f"LightGBM's model, NDCG@10 by LightGBM:   {lgbm.evals_result_['valid_0']['ndcg@10'][-1]:.6f}")
print(f"LightGBM's model, NDCG@10 by forestrank: {ndcg_score(y[test], lightgbm_scores, qid[test], 10, **convention):.6f}")
print(f"forestrank's model, NDCG@10, the same:   {ndcg_score(y[test], our_scores, qid[test], 10, **convention):.6f}")

# %%
# The two models query by query, with the paired tests ``forestrank compare`` prints
plot_query_comparison(y[test], lightgbm_scores, our_scores, qid[test], names=("LGBMRanker", "LambdaMART"), **convention)
