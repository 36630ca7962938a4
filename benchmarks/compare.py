"""Compare a forestrank ranker with the references users compare it to, in one run, on the same data.

    python benchmarks/compare.py rfpoint --data mq2008 --n-estimators 500 --seeds 3
    python benchmarks/compare.py rfpoint --data synthetic --n-estimators 100 --thread-scaling
    python benchmarks/compare.py rflist --data mq2008 --n-estimators 500
    python benchmarks/compare.py rflist --data mq2008 --n-estimators 500 --seeds 3 --only RFListRanker RFPointRanker --versus "RFListRanker bootstrap"
    python benchmarks/compare.py rflist-heuristics --data mq2008 --n-estimators 500 --seeds 3
    python benchmarks/compare.py rflist --data mq2008 --n-estimators 500 --folds 1 --only 'RFListRanker$' 'RFPointRanker$'
    python benchmarks/compare.py lambdamart --data mq2008 --n-estimators 500
    python benchmarks/compare.py lambdamart --data mq2008 --n-estimators 500 --seeds 10 --shuffle-queries
    python benchmarks/compare.py lambdamart --data mq2008 --n-estimators 500 --seeds 10 --shuffle-documents
    python benchmarks/compare.py lambdamart --data synthetic --n-estimators 100
    python benchmarks/compare.py plrank --data mq2008 --n-estimators 500
    python benchmarks/compare.py plrank --data mq2008 --folds 1 --n-estimators 500 --only 'PLRank$' 'LambdaMART$' --alternate 6
    python benchmarks/compare.py broof --data mq2008 --n-estimators 500 --versus RFPointRanker
    python benchmarks/compare.py missing --data missing --n-estimators 200

Each contender fits and predicts in its own process (so its peak memory is its own)
after an untimed warm-up fit and predict (numba's cache load is neither fit nor
predict time; predict time is the median of ``PREDICT_REPEATS`` predictions); one that runs past
``--time-limit`` seconds on a fit is killed and listed as dropped. ``--alternate ROUNDS``
times speed alone: the contenders' fits of the first split in this one process, warm,
one fit each in turn per round, against the machine's drift. Data:

* ``mq2008``: the 5 LETOR 4.0 folds in ``--datasets`` (or those given to
  ``--folds``); fit on train.txt, score on test.txt; the table reports means over
  the folds.
* ``synthetic``: ``make_ranking(2500 queries x 100 documents, 136 features,
  random_state=0)``; the first 2,000 queries (200k rows) train, the last 500 test.
* ``uniform``: the same rows and grades with every feature uniform on [0, 1] in
  float32: each value standardised by the features' variance (1.25: the query's
  offset and the document's noise) and mapped through the normal CDF, a monotone map
  that keeps each feature's order (up to float32 rounding) and so what it says about
  the grades.
* ``missing``: ``make_ranking(1250 queries x 100 documents, 40 features, 10 of them
  informative, missing_fraction=0.3, missing="mnar", random_state=0)``: 30% of the
  informative features' values missing, more often in the less relevant documents;
  the first 1,000 queries (100k rows) train, the last 250 test.

Metrics (test mean over queries), each with its convention: NDCG@10 under the
official LETOR 4.0 script (``letor4``) and the plain definition (gain 2^l-1,
1/log2(r+1), expectation over tied scores, no-relevant = 0), MAP (letor4), ERR@10
(expected ties, g_max = the data's maximum grade). Ratios are ours / reference.
The first contender is "ours"; a paired t-test and a Wilcoxon signed-rank test over
all test queries (per-query NDCG@10, letor4; seeds averaged per query) compare it
with each other contender.
"""

import argparse
import functools
import multiprocessing
import resource
from queue import Empty
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

METRIC_NAMES = ("NDCG@10 letor4", "NDCG@10 plain", "MAP letor4", "ERR@10")
# Predict time is the median of this many predictions of the test set: on a shared host one
# prediction moved by up to 2x from run to run (benchmarks/RESULTS.md, "RFPointRanker").
PREDICT_REPEATS = 3


@dataclass
class Contender:
    """A model to fit: ``build(n_estimators, X.shape, seed)`` returns an object with fit/predict."""

    name: str
    build: object
    # "qid" (forestrank), "group" (LightGBM), "sorted qid" (XGBoost), "group_id" (CatBoost), "classifier" (scored by
    # expected relevance), "regressor"
    fit_kind: str


def _rf_point(n_estimators, shape, seed, n_jobs=2, **params):
    from forestrank import RFPointRanker

    return RFPointRanker(n_estimators=n_estimators, n_jobs=n_jobs, random_state=seed, **params)


def _sklearn_forest(n_estimators, shape, seed):
    from sklearn.ensemble import RandomForestClassifier

    from forestrank.ensemble._sampling import resolve_max_features

    return RandomForestClassifier(
        n_estimators=n_estimators, criterion="entropy", max_features=resolve_max_features("log2+1", shape[1]),
        max_samples=0.63, n_jobs=2, random_state=seed,
    )  # fmt: skip


def _lightgbm_forest(n_estimators, shape, seed):
    import lightgbm

    from forestrank.ensemble._sampling import resolve_max_features

    # "Fully grown": as many leaves as sampled rows allow. LightGBM preallocates a
    # histogram per possible leaf, so its histogram cache is capped (measured: 24 GB
    # and an OOM kill on MQ2008 with 131k leaves and no cap).
    return lightgbm.LGBMRegressor(
        boosting_type="rf", objective="regression", n_estimators=n_estimators, subsample=0.63, subsample_freq=1,
        colsample_bynode=resolve_max_features("log2+1", shape[1]) / shape[1], num_leaves=int(0.63 * shape[0]),
        min_child_samples=1, min_child_weight=1e-9, histogram_pool_size=2048, n_jobs=2, random_state=seed, verbose=-1,
    )  # fmt: skip


def _rf_list(n_estimators, shape, seed, **params):
    from forestrank import RFListRanker

    return RFListRanker(n_estimators=n_estimators, n_jobs=2, random_state=seed, **params)


# The listwise forests' exact objective; their defaults are the paper's §4.4.2
# heuristics, NDCG@10 on at most 200 queries per node (docs/listwise.md).
EXACT = {"ndcg_k": None, "max_queries_per_split": None}
_rf_list_exact = functools.partial(_rf_list, **EXACT)


def _rf_hybrid(n_estimators, shape, seed, listwise_depth=6):
    from forestrank import RFHybridRanker

    return RFHybridRanker(n_estimators=n_estimators, listwise_depth=listwise_depth, n_jobs=2, random_state=seed)


def _lightgbm_lambdarank(n_estimators, shape, seed, **params):
    import lightgbm

    # The boosting issue's reference settings: 31 leaves, learning rate 0.05, 20 documents per leaf.
    return lightgbm.LGBMRanker(
        n_estimators=n_estimators, **{"num_leaves": 31, "learning_rate": 0.05, "min_child_samples": 20, "n_jobs": 2, **params},
        random_state=seed, verbose=-1,
    )  # fmt: skip


def _lambdamart(n_estimators, shape, seed, **params):
    from forestrank import LambdaMART

    # Same settings as _lightgbm_lambdarank.
    return LambdaMART(
        n_estimators=n_estimators, **{"max_leaf_nodes": 31, "learning_rate": 0.05, "min_samples_leaf": 20, "n_jobs": 2, **params},
        random_state=seed,
    )  # fmt: skip


def _lambdamart_bm25_rising(n_estimators, shape, seed):
    # LETOR 4.0's features 21-25 are BM25 of body, anchor, title, URL and whole document:
    # the score may only rise with them.
    constraints = np.zeros(shape[1], dtype=int)
    constraints[20:25] = 1
    return _lambdamart(n_estimators, shape, seed, monotonic_cst=constraints)


def _igbrt(n_estimators, shape, seed):
    from forestrank import RFPointRanker

    # Mohan's IGBRT (thesis §2.4): a random forest's predictions start gradient boosting of the squared loss.
    return _lambdamart(n_estimators, shape, seed, objective="mart", init=RFPointRanker(n_estimators, n_jobs=2, random_state=seed))


def _plrank(n_estimators, shape, seed, **params):
    from forestrank import PLRank

    return PLRank(
        n_estimators=n_estimators, **{"max_leaf_nodes": 31, "learning_rate": 0.05, "min_samples_leaf": 20, **params}, n_jobs=2,
        random_state=seed,
    )  # fmt: skip


def _broof(n_estimators, shape, seed, **params):
    from forestrank import BROOF

    # 10 rounds of n_estimators / 5 trees: twice the trees of the RFPointRanker contender.
    return BROOF(n_estimators=10, n_trees=max(1, n_estimators // 5), n_jobs=2, random_state=seed, **params)


def _broof_weak_learner(n_estimators, shape, seed):
    from forestrank.ensemble._broof import default_forest

    # BROOF's default weak learner alone, with BROOF's whole tree budget: what the boosting rounds add.
    return default_forest().set_params(n_estimators=2 * n_estimators, n_jobs=2, random_state=seed)


def _xgboost_ranker(n_estimators, shape, seed, objective="rank:ndcg", **params):
    import xgboost

    # The same tree budget: 31 leaves grown loss-guided on histograms, learning rate 0.05.
    return xgboost.XGBRanker(
        n_estimators=n_estimators, objective=objective, tree_method="hist", grow_policy="lossguide",
        max_leaves=31, max_depth=0, learning_rate=0.05, n_jobs=2, random_state=seed, **params,
    )  # fmt: skip


def _catboost_ranker(n_estimators, shape, seed, loss_function="YetiRank", **params):
    import catboost

    # CatBoost's defaults (depth-6 symmetric trees, its bootstrap and score noise) at the
    # harness's iterations and learning rate 0.05; two threads, no files written.
    return catboost.CatBoostRanker(
        iterations=n_estimators, loss_function=loss_function, learning_rate=0.05, thread_count=2, random_seed=seed,
        verbose=0, allow_writing_files=False, **params,
    )  # fmt: skip


# The ablation's starting point: symmetric trees of depth 6 with CatBoost's split noise and
# Bayesian bagging, an L2 prior on the leaves, no per-leaf row minimum (CatBoost's symmetric
# trees have none); each setting is then taken away in turn.
SYMMETRIC = {"grow_policy": "symmetric", "min_samples_leaf": 1, "random_strength": 1.0, "bagging_temperature": 1.0, "l2_regularization": 3.0}


def _imputer(kind, seed):
    """The imputation step of a missing-value strategy (Mohan's thesis, §2.2)."""
    import importlib

    from sklearn.ensemble import RandomForestRegressor

    importlib.import_module("sklearn.experimental.enable_iterative_imputer")  # IterativeImputer is experimental
    from sklearn.impute import IterativeImputer, SimpleImputer

    if kind == "iterative":  # Algorithm 2: each feature predicted by a forest of the others, in turns
        forest = RandomForestRegressor(n_estimators=10, max_depth=12, n_jobs=2, random_state=seed)
        return IterativeImputer(estimator=forest, max_iter=3, random_state=seed)
    if kind == "zero":
        return SimpleImputer(strategy="constant", fill_value=0.0)
    return SimpleImputer(strategy=kind)


def _imputed(n_estimators, shape, seed, kind, ranker):
    """``Pipeline(imputer, ranker)`` with ``qid`` routed to the ranker (the documented recipe)."""
    import sklearn
    from sklearn.pipeline import make_pipeline

    sklearn.set_config(enable_metadata_routing=True)
    return make_pipeline(_imputer(kind, seed), ranker(n_estimators, shape, seed).set_fit_request(qid=True))


# RF-point trained on the queries with a relevant document only (issue 3); also the
# reference of the listwise forests with the same option.
RF_POINT_SKIPPING = Contender(
    "forestrank RFPointRanker skip_queries_without_relevance=True",
    functools.partial(_rf_point, skip_queries_without_relevance=True), "qid",
)  # fmt: skip
CONTENDERS = {
    "rfpoint": [
        Contender("forestrank RFPointRanker", _rf_point, "qid"),
        Contender("sklearn RandomForestClassifier", _sklearn_forest, "classifier"),
        Contender("LightGBM rf (regression)", _lightgbm_forest, "regressor"),
        RF_POINT_SKIPPING,
        Contender("forestrank RFPointRanker criterion=hellinger", functools.partial(_rf_point, criterion="hellinger"), "qid"),
        *(
            Contender(f"forestrank RFPointRanker relevance_weights={weights}", functools.partial(_rf_point, relevance_weights=weights), "qid")
            for weights in ("square", "exp", "fitted")  # Mohan's Table 3.2 scorings of the class probabilities
        ),
    ],
}
CONTENDERS["rflist"] = [
    Contender("forestrank RFListRanker", _rf_list, "qid"),
    Contender("forestrank RFPointRanker", _rf_point, "qid"),
    Contender("forestrank RFHybridRanker L=6", _rf_hybrid, "qid"),
    Contender("LightGBM LGBMRanker lambdarank", _lightgbm_lambdarank, "group"),
    Contender("forestrank RFListRanker exact", _rf_list_exact, "qid"),
    Contender("forestrank RFListRanker exact bootstrap=True", functools.partial(_rf_list_exact, bootstrap=True), "qid"),
    Contender("forestrank RFPointRanker bootstrap=True", functools.partial(_rf_point, bootstrap=True), "qid"),
    Contender("forestrank RFListRanker exact max_bins=None", functools.partial(_rf_list_exact, max_bins=None), "qid"),
    Contender(
        "forestrank RFListRanker exact skip_queries_without_relevance=True",
        functools.partial(_rf_list_exact, skip_queries_without_relevance=True), "qid",
    ),  # fmt: skip
    Contender(
        "forestrank RFListRanker skip_queries_without_relevance=True",
        functools.partial(_rf_list, skip_queries_without_relevance=True), "qid",
    ),  # fmt: skip
    RF_POINT_SKIPPING,
]
# The scalability heuristics of the paper's §4.4.2 against the exact objective: what each
# costs in quality and saves in time (the "fit s/iteration" column), RF-point as the unit.
CONTENDERS["rflist-heuristics"] = [
    Contender("forestrank RFListRanker exact", _rf_list_exact, "qid"),
    Contender("forestrank RFPointRanker", _rf_point, "qid"),
    Contender(
        "forestrank RFListRanker max_queries_per_split=50",
        functools.partial(_rf_list_exact, max_queries_per_split=50), "qid",
    ),  # fmt: skip
    Contender(
        "forestrank RFListRanker max_queries_per_split=25",
        functools.partial(_rf_list_exact, max_queries_per_split=25), "qid",
    ),  # fmt: skip
    Contender("forestrank RFListRanker ndcg_k=10", functools.partial(_rf_list_exact, ndcg_k=10), "qid"),
    Contender("forestrank RFListRanker max_bins=63", functools.partial(_rf_list_exact, max_bins=63), "qid"),
    # A cap that binds only in the largest nodes (MQ2008's roots hold about 203-223
    # scored queries) bounds the growth with the rows; with the NDCG@10 objective (the
    # default pair) it meets every speed bound (benchmarks/RESULTS.md).
    Contender(
        "forestrank RFListRanker max_queries_per_split=200",
        functools.partial(_rf_list_exact, max_queries_per_split=200), "qid",
    ),  # fmt: skip
    Contender("forestrank RFListRanker ndcg_k=10 max_queries_per_split=200 (default)", _rf_list, "qid"),
    Contender(
        "forestrank RFListRanker ndcg_k=10 max_queries_per_split=200 skip_queries_without_relevance=True",
        functools.partial(_rf_list, skip_queries_without_relevance=True), "qid",
    ),  # fmt: skip
    RF_POINT_SKIPPING,
]
# The PLRank paper's objective with one ground-truth permutation (the defaults before they were chosen on real data).
PLRANK_PAPER = {"top_k": 10, "n_permutations": 1, "skip_tied_tail": False}
CONTENDERS["plrank"] = [
    Contender("forestrank PLRank", _plrank, "qid"),
    Contender("forestrank LambdaMART", _lambdamart, "qid"),
    Contender("forestrank PLRank n_permutations=3", functools.partial(_plrank, n_permutations=3), "qid"),
    Contender("forestrank PLRank n_permutations=10", functools.partial(_plrank, n_permutations=10), "qid"),
    Contender("forestrank PLRank paper top_k=10", functools.partial(_plrank, **PLRANK_PAPER), "qid"),
    Contender(
        "forestrank PLRank paper top_k=10 n_permutations=20", functools.partial(_plrank, **{**PLRANK_PAPER, "n_permutations": 20}), "qid"
    ),
]
CONTENDERS["lambdamart"] = [
    Contender("forestrank LambdaMART", _lambdamart, "qid"),
    Contender("LightGBM LGBMRanker lambdarank", _lightgbm_lambdarank, "group"),
    Contender("XGBoost XGBRanker rank:ndcg", _xgboost_ranker, "sorted qid"),
    Contender("forestrank IGBRT (RFPointRanker init, mart)", _igbrt, "qid"),
    Contender("forestrank RFPointRanker", _rf_point, "qid"),
    Contender("forestrank McRank", functools.partial(_lambdamart, objective="mcrank"), "qid"),
    Contender("forestrank MART", functools.partial(_lambdamart, objective="mart"), "qid"),
    *[
        Contender(
            f"forestrank cumulative relevance_weights={weights}",
            functools.partial(_lambdamart, objective="cumulative", relevance_weights=weights), "qid",
        )
        for weights in ("linear", "square", "exp", "fitted")
    ],
    Contender("forestrank LambdaMART xendcg", functools.partial(_lambdamart, objective="xendcg"), "qid"),
    Contender("forestrank LambdaMART monotonic_cst BM25 rising", _lambdamart_bm25_rising, "qid"),
    Contender("forestrank LambdaMART interaction_cst=pairwise", functools.partial(_lambdamart, interaction_cst="pairwise"), "qid"),
    Contender(
        "forestrank LambdaMART interaction_cst=no_interactions",
        functools.partial(_lambdamart, interaction_cst="no_interactions"), "qid",
    ),
    Contender("forestrank LambdaMART lambdarank_metric=map", functools.partial(_lambdamart, lambdarank_metric="map"), "qid"),
    Contender("forestrank LambdaMART lambdarank_metric=err", functools.partial(_lambdamart, lambdarank_metric="err"), "qid"),
    Contender(
        "forestrank LambdaMART lambdarank_pair_method=mean",
        functools.partial(_lambdamart, lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=8), "qid",
    ),
    Contender(
        "XGBoost XGBRanker rank:ndcg lambdarank_pair_method=mean",
        functools.partial(_xgboost_ranker, lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=8), "sorted qid",
    ),
    Contender("LightGBM LGBMRanker rank_xendcg", functools.partial(_lightgbm_lambdarank, objective="rank_xendcg"), "group"),
    Contender("forestrank LambdaMART quantized_gradients=4", functools.partial(_lambdamart, quantized_gradients=4), "qid"),
    Contender(
        "LightGBM LGBMRanker lambdarank use_quantized_grad", functools.partial(_lightgbm_lambdarank, use_quantized_grad=True),
        "group",
    ),
    # One thread each: the thread scaling of the two (alternated: --alternate).
    Contender("forestrank LambdaMART n_jobs=1", functools.partial(_lambdamart, n_jobs=1), "qid"),
    Contender("LightGBM LGBMRanker lambdarank n_jobs=1", functools.partial(_lightgbm_lambdarank, n_jobs=1), "group"),
]
CONTENDERS["catboost"] = [
    # One call each: symmetric trees bring their regularisers (l2_regularization and random_strength "auto").
    Contender("forestrank LambdaMART symmetric", functools.partial(_lambdamart, grow_policy="symmetric"), "qid"),
    Contender("forestrank LambdaMART yetirank symmetric", functools.partial(_lambdamart, objective="yetirank", grow_policy="symmetric"), "qid"),
    # CatBoost's YetiRankPairwise settings: 32 bins (its border_count there), half the pairs per tree.
    Contender(
        "forestrank LambdaMART yetirank_pairwise symmetric",
        functools.partial(_lambdamart, objective="yetirank_pairwise", grow_policy="symmetric", max_bins=32, subsample=0.5), "qid",
    ),
    Contender("forestrank LambdaMART queryrmse symmetric", functools.partial(_lambdamart, objective="queryrmse", grow_policy="symmetric"), "qid"),
    # YetiRank with CatBoost's own regularisers for its rankers (l2_leaf_reg about 0, random_strength 1).
    Contender(
        "forestrank LambdaMART yetirank symmetric l2_regularization=0",
        functools.partial(_lambdamart, objective="yetirank", grow_policy="symmetric", l2_regularization=0.0), "qid",
    ),
    Contender("forestrank LambdaMART", _lambdamart, "qid"),
    Contender("forestrank LambdaMART yetirank", functools.partial(_lambdamart, objective="yetirank"), "qid"),
    Contender("forestrank PLRank symmetric", functools.partial(_plrank, grow_policy="symmetric"), "qid"),
    Contender("CatBoost CatBoostRanker YetiRank", _catboost_ranker, "group_id"),
    Contender("CatBoost CatBoostRanker YetiRankPairwise", functools.partial(_catboost_ranker, loss_function="YetiRankPairwise"), "group_id"),
    Contender("CatBoost CatBoostRanker LambdaMart", functools.partial(_catboost_ranker, loss_function="LambdaMart"), "group_id"),
    Contender("CatBoost CatBoostRanker QueryRMSE", functools.partial(_catboost_ranker, loss_function="QueryRMSE"), "group_id"),
    Contender("LightGBM LGBMRanker lambdarank", _lightgbm_lambdarank, "group"),
    Contender("XGBoost XGBRanker rank:ndcg", _xgboost_ranker, "sorted qid"),
]
# Each of the CatBoost-like settings taken away in turn (the ablation of CatBoost, on our trees).
CONTENDERS["catboost-ablation"] = [
    Contender("forestrank LambdaMART symmetric", functools.partial(_lambdamart, **SYMMETRIC), "qid"),
    *(
        Contender(f"forestrank LambdaMART symmetric {name}={value}", functools.partial(_lambdamart, **{**SYMMETRIC, name: value}), "qid")
        for name, value in (("l2_regularization", 0.0), ("random_strength", 0.0), ("bagging_temperature", 0.0), ("min_samples_leaf", 20))
    ),
    Contender("forestrank LambdaMART yetirank symmetric", functools.partial(_lambdamart, objective="yetirank", **SYMMETRIC), "qid"),
    Contender(
        "forestrank LambdaMART yetirank symmetric min_samples_leaf=20",
        functools.partial(_lambdamart, objective="yetirank", **{**SYMMETRIC, "min_samples_leaf": 20}), "qid",
    ),
]
CONTENDERS["broof"] = [
    Contender("forestrank BROOF gradient", _broof, "qid"),
    Contender("LightGBM LGBMRanker lambdarank", _lightgbm_lambdarank, "group"),
    Contender("forestrank RFPointRanker", _rf_point, "qid"),
    Contender("forestrank BROOF absolute", functools.partial(_broof, variant="absolute"), "qid"),
    Contender("forestrank BROOF median", functools.partial(_broof, variant="median"), "qid"),
    Contender("forestrank BROOF height", functools.partial(_broof, variant="height"), "qid"),
    Contender("forestrank BROOF's weak learner alone", _broof_weak_learner, "qid"),
]
CONTENDERS["missing"] = [
    Contender("forestrank LambdaMART", _lambdamart, "qid"),
    Contender("LightGBM LGBMRanker lambdarank", _lightgbm_lambdarank, "group"),
    Contender("forestrank LambdaMART zero-imputed", functools.partial(_imputed, kind="zero", ranker=_lambdamart), "qid"),
    Contender("forestrank RFPointRanker", _rf_point, "qid"),
    Contender("sklearn RandomForestClassifier", _sklearn_forest, "classifier"),
    Contender("forestrank RFPointRanker missing_direction=left", functools.partial(_rf_point, missing_direction="left"), "qid"),
    Contender(
        "forestrank RFPointRanker missing_direction=right", functools.partial(_rf_point, missing_direction="right"), "qid"
    ),
    Contender(
        "forestrank RFPointRanker missing_direction=separate",
        functools.partial(_rf_point, missing_direction="separate"), "qid",
    ),  # fmt: skip
    Contender(
        "forestrank LambdaMART missing_direction=separate", functools.partial(_lambdamart, missing_direction="separate"),
        "qid",
    ),  # fmt: skip
    Contender("forestrank RFPointRanker mean-imputed", functools.partial(_imputed, kind="mean", ranker=_rf_point), "qid"),
    Contender(
        "forestrank RFPointRanker median-imputed", functools.partial(_imputed, kind="median", ranker=_rf_point), "qid"
    ),
    Contender(
        "forestrank RFPointRanker iteratively imputed", functools.partial(_imputed, kind="iterative", ranker=_rf_point),
        "qid",
    ),  # fmt: skip
    Contender("forestrank RFPointRanker zero-imputed", functools.partial(_imputed, kind="zero", ranker=_rf_point), "qid"),
]
SINGLE_THREAD = Contender("forestrank RFPointRanker n_jobs=1", functools.partial(_rf_point, n_jobs=1), "qid")


def load_splits(data: str, datasets: Path, folds: list[int]) -> list[tuple]:
    from forestrank import load_letor_fold, make_ranking

    if data == "mq2008":
        splits = []
        for fold in folds:
            (X, y, qid), validation, (X_test, y_test, qid_test) = load_letor_fold(datasets / "MQ2008" / f"Fold{fold}")
            splits.append((X, y, qid, X_test, y_test, qid_test, tuple(validation)))
        return splits
    if data == "lightgbm":  # LightGBM's lambdarank example: rank.train -> rank.test, query sizes in .query files
        from forestrank import load_letor

        folder = datasets / "LightGBM-lambdarank-example"
        (X, y, qid), (X_test, y_test, qid_test) = (load_letor(folder / f"rank.{part}", n_features=300) for part in ("train", "test"))
        return [(X, y, qid, X_test, y_test, qid_test, None)]
    if data == "longlists":  # a small collection of long queries, three grades, many ties: 5 folds of 50 test queries
        X, y, qid = make_ranking(
            n_queries=250, docs_per_query=(100, 200), n_features=46, n_grades=3, noise=1.0, random_state=0
        )
        folds_of_query = np.arange(250) % 5
        splits = []
        for fold in folds:
            test = folds_of_query[qid] == fold - 1
            splits.append((X[~test], y[~test], qid[~test], X[test], y[test], qid[test], None))
        return splits
    if data == "missing":
        X, y, qid = make_ranking(
            n_queries=1250, docs_per_query=100, n_features=40, n_informative=10, missing_fraction=0.3, missing="mnar",
            random_state=0,
        )  # fmt: skip
        train = qid < 1000
        return [(X[train], y[train], qid[train], X[~train], y[~train], qid[~train], None)]
    X, y, qid = make_ranking(n_queries=2500, docs_per_query=100, n_features=136, random_state=0)
    if data == "uniform":
        from scipy.special import ndtr

        X = ndtr(X / np.sqrt(1.25)).astype(np.float32)
    train = qid < 2000
    return [(X[train], y[train], qid[train], X[~train], y[~train], qid[~train], None)]


def relabel_queries(split: tuple, seed: int) -> tuple:
    """``split`` with its training query ids replaced by a random bijection drawn from ``seed``.

    Every contender groups the training rows by sorted query id (LightGBM and XGBoost
    are handed them so), so new ids present the same queries, with the same rows, in
    another order. Our boosted models depend on that order through the summation
    order of their float64 histograms (near-equal splits go either way; MAP moves by
    about ±0.001 on MQ2008), LightGBM's do not (the same metrics for every order,
    benchmarks/RESULTS.md, "LambdaMART and PLRank"); averaging over several orders measures a
    deterministic contender's spread.
    """
    X, y, qid, *rest = split
    queries, inverse = np.unique(qid, return_inverse=True)
    new_ids = np.random.default_rng(seed).permutation(len(queries))
    return (X, y, new_ids[inverse], *rest)


def shuffle_documents(split: tuple, seed: int) -> tuple:
    """``split`` with the training rows of each query in a random order drawn from ``seed``.

    Queries keep their ids and the order in which they first appear. LightGBM's
    LambdaRank and ours rank the tied scores of the first iteration (all zero) in
    input order, so the |dNDCG| weights of the first trees, and through them the
    whole model, depend on the order of the documents in the file: on
    MQ2008, LightGBM's 5-fold MAP moves between 0.4689 and 0.4758 over ten orders
    (benchmarks/RESULTS.md, "LambdaMART and PLRank"). Averaging over orders compares the
    algorithms rather than one draw of that order.
    """
    X, y, qid, *rest = split
    _, first_row, inverse = np.unique(qid, return_index=True, return_inverse=True)
    random_keys = np.random.default_rng([seed, 1]).random(len(qid))
    order = np.lexsort((random_keys, first_row[inverse]))
    return (X[order], y[order], qid[order], *rest)


def _fit_and_score(contender: Contender, split: tuple, n_estimators: int, seed: int, patience: int = 0) -> dict:
    """Run in a child process: warm up, time fit and predict, score, report peak memory.

    With ``patience`` > 0 the boosted contenders stop early on the split's validation
    set (NDCG@10, each library's own): forestrank's ``n_iter_no_change``, LightGBM's
    ``early_stopping``, XGBoost's and CatBoost's ``early_stopping_rounds``, each model
    predicting with its best iteration.
    """
    from forestrank import err_score, map_score, ndcg_score

    X, y, qid, X_test, y_test, qid_test, validation = split
    model = contender.build(n_estimators, X.shape, seed)
    stops_early = patience > 0 and validation is not None
    if stops_early:  # grouped by query, as LightGBM, XGBoost and CatBoost take their rows
        X_val, y_val, qid_val = (part[np.argsort(validation[2], kind="stable")] for part in validation)
    extra = {}

    def fit(estimator, rows):
        stopping = stops_early and rows == slice(None)  # the warm-up fit runs without
        if contender.fit_kind == "qid":
            if stopping and "n_iter_no_change" in estimator.get_params():
                estimator.set_params(n_iter_no_change=patience)
                extra["eval_set"] = [validation]
            estimator.fit(X[rows], y[rows], qid=qid[rows], **extra)
        elif contender.fit_kind == "group":  # LightGBM: rows grouped by query, group sizes
            _, sizes = np.unique(qid[rows], return_counts=True)
            order = np.argsort(qid[rows], kind="stable")
            if stopping:
                import lightgbm

                extra.update(
                    eval_X=(X_val,), eval_y=(y_val,), eval_group=[np.unique(qid_val, return_counts=True)[1]], eval_at=[10],
                    callbacks=[lightgbm.early_stopping(patience, first_metric_only=True, verbose=False)],
                )  # fmt: skip
            estimator.fit(X[rows][order], y[rows][order], group=sizes, **extra)
        elif contender.fit_kind == "sorted qid":  # XGBoost: rows sorted by query id
            order = np.argsort(qid[rows], kind="stable")
            if stopping:
                estimator.set_params(early_stopping_rounds=patience, eval_metric="ndcg@10")
                extra.update(eval_set=[(X_val, y_val)], eval_qid=[qid_val], verbose=False)
            estimator.fit(X[rows][order], y[rows][order], qid=qid[rows][order], **extra)
        elif contender.fit_kind == "group_id":  # CatBoost: rows grouped by query, a group id per row
            order = np.argsort(qid[rows], kind="stable")
            if stopping:
                import catboost

                estimator.set_params(early_stopping_rounds=patience, eval_metric="NDCG:top=10;type=Exp")
                extra["eval_set"] = catboost.Pool(X_val, y_val, group_id=qid_val)
            estimator.fit(X[rows][order], y[rows][order], group_id=qid[rows][order], **extra)
        else:
            estimator.fit(X[rows], y[rows])

    warm_up = contender.build(2, X.shape, seed)
    fit(warm_up, np.flatnonzero(qid == qid[0]).tolist() + np.flatnonzero(qid == qid[-1]).tolist())
    if contender.fit_kind != "classifier":
        warm_up.predict(X_test[:32])  # the predictor's numba cache load is not predict time either
    start = time.perf_counter()
    fit(model, slice(None))
    fit_seconds = time.perf_counter() - start
    predict_times = []
    for _ in range(PREDICT_REPEATS):
        start = time.perf_counter()
        if contender.fit_kind == "classifier":
            scores = model.predict_proba(X_test) @ model.classes_
        else:
            scores = model.predict(X_test)
        predict_times.append(time.perf_counter() - start)
    predict_seconds = float(np.median(predict_times))
    iterations = float(_iterations_used(model, contender.fit_kind, n_estimators))
    trained = _iterations_trained(model, contender.fit_kind, iterations)
    max_grade = float(max(y.max(), y_test.max()))
    return {
        "NDCG@10 letor4": ndcg_score(y_test, scores, qid_test, 10, convention="letor4"),
        "per query": ndcg_score(y_test, scores, qid_test, 10, convention="letor4", per_query=True),
        "NDCG@10 plain": ndcg_score(y_test, scores, qid_test, 10),
        "MAP letor4": map_score(y_test, scores, qid_test, convention="letor4"),
        "ERR@10": err_score(y_test, scores, qid_test, 10, max_grade=max_grade),
        "fit s": fit_seconds,
        "iterations": iterations,
        "fit s/iteration": fit_seconds / trained,
        "predict s": predict_seconds,
        "peak MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _iterations_used(model: object, fit_kind: str, n_estimators: int) -> int:
    """The iterations a fitted ``model`` predicts with: after early stopping XGBoost keeps
    its later trees but predicts with the best ones (its ``best_iteration`` counts from 0);
    CatBoost keeps the best ones alone (``tree_count_``); ours and LightGBM's
    ``best_iteration_`` count them from 1; BROOF's ``n_estimators_`` its rounds kept."""
    if fit_kind == "sorted qid":
        return getattr(model, "best_iteration", n_estimators - 1) + 1
    if fit_kind == "group_id":
        return model.tree_count_
    return (
        getattr(model, "best_iteration_", 0) or getattr(model, "n_iter_", 0) or getattr(model, "n_estimators_", 0)
        or n_estimators
    )  # fmt: skip


def _iterations_trained(model: object, fit_kind: str, used: float) -> float:
    """The iterations a fit ran, ``used`` and the ones early stopping then discarded (its
    patience), as each library records them (ours and LightGBM's by their evaluation
    curves): a fit's time is theirs."""
    if fit_kind == "sorted qid":
        return float(model.get_booster().num_boosted_rounds())
    if fit_kind == "group_id":
        return float(max((len(values) for metrics in model.get_evals_result().values() for values in metrics.values()), default=used))
    curves = [values for metrics in getattr(model, "evals_result_", {}).values() for values in metrics.values()]
    return float(max(map(len, curves), default=used))


def _child(contender, split, n_estimators, seed, patience, queue):
    queue.put(_fit_and_score(contender, split, n_estimators, seed, patience))


def run_in_child(
    contender: Contender, split: tuple, n_estimators: int, seed: int, time_limit: float, patience: int = 0
) -> dict | None:
    """Results of one fit in a fresh process; None when it ran past ``time_limit`` seconds (then killed)."""
    context = multiprocessing.get_context("spawn")  # fork after OpenBLAS started threads can hang
    queue = context.Queue()
    process = context.Process(target=_child, args=(contender, split, n_estimators, seed, patience, queue))
    start = time.monotonic()
    process.start()
    while True:  # a child killed (e.g. out of memory) never reports: do not wait forever
        try:
            result = queue.get(timeout=5)
            break
        except Empty:
            if not process.is_alive():
                raise RuntimeError(f"{contender.name} died (exit code {process.exitcode}) without a result") from None
            if time.monotonic() - start > time_limit:
                process.kill()
                process.join()
                return None
    process.join()
    return result


def alternate(contenders: list, split: tuple, n_estimators: int, rounds: int) -> dict:
    """Every contender's fit of ``split`` in this process, each warmed by one fit first,
    then ``rounds`` rounds of one fit each in turn (the order reversed every other round,
    seed = round), so that the machine's drift reaches all alike: {name: [fit s, ...]}."""
    for contender in contenders:
        _fit_and_score(contender, split, n_estimators, 0)
    times = {contender.name: [] for contender in contenders}
    for round_ in range(rounds):
        for contender in contenders if round_ % 2 == 0 else contenders[::-1]:
            times[contender.name].append(_fit_and_score(contender, split, n_estimators, round_)["fit s"])
    return times


def print_alternated(times: dict) -> None:
    """Each contender's fit times, then each other's ratio to the first per round and of the medians."""
    width = max(map(len, times)) + 2
    for name, seconds in times.items():
        print(name.ljust(width) + " ".join(f"{value:7.3f}" for value in seconds) + f"   median {np.median(seconds):.3f} s")
    ours, *others = times
    for name in others:
        ratios = np.array(times[ours]) / np.array(times[name])
        print(f"{ours} / {name}: per round " + " ".join(f"{ratio:.3f}" for ratio in ratios)
              + f"; median {np.median(ratios):.3f}; ratio of medians {np.median(times[ours]) / np.median(times[name]):.3f}")  # fmt: skip


@dataclass
class Summary:
    """Results of one contender: one dict per (seed, split), seeds outermost."""

    n_seeds: int
    runs: list = field(default_factory=list)

    def mean(self, key: str) -> tuple[float, float]:
        """Per seed: mean over splits (times: sum); then mean and std over seeds."""
        values = np.array([run[key] for run in self.runs]).reshape(self.n_seeds, -1)
        per_seed = values.sum(axis=1) if key in ("fit s", "predict s") else values.mean(axis=1)
        return float(per_seed.mean()), float(per_seed.std())


def _paired_tests(ours: Summary, other: Summary) -> str:
    from forestrank.stats import paired_test

    def per_query(summary):  # every split's test queries, averaged over seeds (runs are seed-major)
        n_splits = len(summary.runs) // summary.n_seeds
        seeds = [summary.runs[i * n_splits : (i + 1) * n_splits] for i in range(summary.n_seeds)]
        return np.mean([np.concatenate([run["per query"] for run in runs]) for runs in seeds], axis=0)

    a, b = per_query(ours), per_query(other)
    t = paired_test(a, b, test="t")
    w = paired_test(a, b, test="wilcoxon")
    return (f"{len(a)} queries, mean difference {t.mean_difference:+.4f}, t-test p={t.pvalue:.3g}, "
            f"Wilcoxon p={w.pvalue:.3g}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("estimator", choices=sorted(CONTENDERS))
    parser.add_argument("--data", choices=["mq2008", "lightgbm", "longlists", "synthetic", "uniform", "missing"], default="mq2008")
    parser.add_argument("--datasets", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets")
    parser.add_argument("--n-estimators", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=1, help="repeat with random_state 0..seeds-1")
    parser.add_argument(
        "--folds", type=int, nargs="+", choices=range(1, 6), metavar="FOLD",
        help="the MQ2008 folds to fit and score (default all five; e.g. '--folds 1' times Fold1 alone)",
    )  # fmt: skip
    parser.add_argument(
        "--early-stopping", type=int, default=0, metavar="PATIENCE",
        help="boosted contenders stop when NDCG@10 on the fold's vali.txt has not improved for PATIENCE iterations",
    )  # fmt: skip
    parser.add_argument(
        "--shuffle-queries", action="store_true",
        help="seed s also presents the training queries in a random order drawn from s (the same for every contender)",
    )  # fmt: skip
    parser.add_argument(
        "--shuffle-documents", action="store_true",
        help="seed s also presents each training query's documents in a random order drawn from s (the same for "
        "every contender)",
    )  # fmt: skip
    parser.add_argument("--thread-scaling", action="store_true", help="also fit ours with n_jobs=1")
    parser.add_argument(
        "--only", nargs="*",
        help="the contenders to run, by regular expressions searched in their names (a plain word matches every name "
        "that contains it; 'RFListRanker$' only the default); the first stays ours",
    )  # fmt: skip
    parser.add_argument(
        "--versus", metavar="NAME",
        help="also compare every other contender with the one whose name contains NAME (metric differences, paired tests)",
    )  # fmt: skip
    parser.add_argument(
        "--time-limit", type=float, default=1800, help="seconds per fit; a contender past it is dropped (and said so)"
    )
    parser.add_argument(
        "--alternate", type=int, default=0, metavar="ROUNDS",
        help="time the contenders' fits of the first split in this process instead, warm, ROUNDS rounds in turn; "
        "print each fit's seconds and the ratios to the first contender",
    )  # fmt: skip
    args = parser.parse_args()
    if args.folds and args.data not in ("mq2008", "longlists"):
        parser.error(f"--folds selects the folds of MQ2008 or the long lists; --data {args.data} has a single split")
    if args.early_stopping < 0:
        parser.error(f"--early-stopping takes a number of iterations, 1 or more; got {args.early_stopping}")
    if args.early_stopping and args.alternate:
        parser.error("--alternate times fits of a fixed number of iterations; drop --early-stopping")
    if args.early_stopping and args.data != "mq2008":
        parser.error(f"--early-stopping stops on each fold's vali.txt, which only --data mq2008 has; --data {args.data} has none")

    contenders = list(CONTENDERS[args.estimator]) + ([SINGLE_THREAD] if args.thread_scaling else [])
    if args.only:
        contenders = [c for c in contenders if any(re.search(part, c.name) for part in args.only)]
        if not contenders:
            parser.error(f"--only: no contender of {args.estimator!r} matches {' '.join(args.only)}")
    splits = load_splits(args.data, args.datasets, args.folds or [1, 2, 3, 4, 5])
    print(f"machine: {describe_machine()}")
    print(f"data: {args.data} ({len(splits)} split(s), {sum(len(s[1]) for s in splits)} training rows in total), "
          f"n_estimators={args.n_estimators}, seeds={args.seeds}, times summed over splits"
          + (", training queries in a random order per seed" if args.shuffle_queries else "")
          + (", each query's training documents in a random order per seed" if args.shuffle_documents else ""))

    if args.alternate:
        print(f"fits of the first split alternated in one process, warm, {args.alternate} rounds")
        print_alternated(alternate(contenders, splits[0], args.n_estimators, args.alternate))
        return

    def presented(split, seed):
        if args.shuffle_queries:
            split = relabel_queries(split, seed)
        return shuffle_documents(split, seed) if args.shuffle_documents else split

    summaries = {}
    for contender in contenders:
        summary = Summary(n_seeds=args.seeds)
        runs = (run_in_child(contender, presented(split, seed), args.n_estimators, seed, args.time_limit,
                             args.early_stopping)
                for seed in range(args.seeds) for split in splits)  # fmt: skip
        for result in runs:
            if result is None:
                print(f"  dropped: {contender.name} (one fit and predict took over {args.time_limit:.0f} s)", flush=True)
                break
            summary.runs.append(result)
        else:
            summaries[contender.name] = summary
            print(f"  done: {contender.name}", flush=True)

    columns = (*METRIC_NAMES, "fit s", "predict s", "iterations", "fit s/iteration", "peak MB")
    width = max(map(len, summaries)) + 2
    print("\n" + "contender".ljust(width) + "".join(f"{c:>20}" for c in columns))
    for name, summary in summaries.items():
        cells = []
        for column in columns:
            if column == "peak MB":
                cells.append(f"{max(run['peak MB'] for run in summary.runs):>20.0f}")
            else:
                mean, std = summary.mean(column)
                cells.append(f"{mean:>12.4f} ± {std:<6.4f}" if args.seeds > 1 else f"{mean:>20.4f}")
        print(name.ljust(width) + "".join(cells))
    ours = summaries.get(contenders[0].name)
    for name, summary in list(summaries.items())[1:] if ours else []:
        parts = []
        for column in ("fit s", "predict s", "fit s/iteration"):
            parts.append(f"{column} ratio {ours.mean(column)[0] / summary.mean(column)[0]:.3f}")
        for column in METRIC_NAMES:
            parts.append(f"{column} {ours.mean(column)[0] - summary.mean(column)[0]:+.4f}")
        print(f"ours vs {name}: " + ", ".join(parts))
        print(f"  paired over test queries: {_paired_tests(ours, summary)}")
    reference = next((name for name in summaries if args.versus and args.versus in name), None)
    for name, summary in summaries.items() if reference else []:
        if name != reference:
            other = summaries[reference]
            differences = ", ".join(f"{c} {summary.mean(c)[0] - other.mean(c)[0]:+.4f}" for c in METRIC_NAMES)
            print(f"{name} vs {reference}: {differences}")
            print(f"  paired over test queries: {_paired_tests(summary, other)}")
    print(
        "\nconventions: NDCG@10 letor4 = official LETOR 4.0 script (gain 2^l-1, ranks 1-2 undiscounted then "
        "1/log2(r), input-order ties, no-relevant = 0, 0 below 10 docs); NDCG@10 plain = gain 2^l-1, "
        "1/log2(r+1), expected ties, no-relevant = 0; MAP letor4; ERR@10 expected ties, g_max = data max."
    )


if __name__ == "__main__":
    main()
