"""Boosting with feature sampling against LightGBM and XGBoost on a small LETOR-shaped set.

    python benchmarks/bench_feature_sampling.py [--rounds 3] [--iterations 300]

A 5,000-row set (``make_ranking(50 queries x 100 documents, 136 features)``), the size
a grid search fits on, 300 iterations, learning rate 0.05, 31 leaves, 20 rows per
leaf, two threads. Three settings per library: no sampling; 80% of the features per
tree (forestrank's ``feature_fraction``, LightGBM's ``colsample_bytree``, XGBoost's
``colsample_bytree``); 80% per node (``max_features``, ``feature_fraction_bynode``,
``colsample_bynode``). Every contender fits once untimed (numba's compile or cache
load), then the contenders fit in turn, ``--rounds`` times; the table gives each one's
fastest fit and its ratio to LightGBM's fit of the same setting. NDCG@10 (plain
convention: gain 2^l-1, 1/log2(r+1), expected ties) is on the training set, a check
that the settings learn, not a quality figure.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

SETTINGS = {
    "no sampling": ({}, {}, {}),
    "80% per tree": ({"feature_fraction": 0.8}, {"colsample_bytree": 0.8}, {"colsample_bytree": 0.8}),
    "80% per node": ({"max_features": 0.8}, {"feature_fraction_bynode": 0.8}, {"colsample_bynode": 0.8}),
}


def _fitter(make_model, grouping: str):
    """fit(X, y, qid, group_sizes) -> training scores, for a model passed ``qid=`` or ``group=``."""

    def fit(X, y, qid, sizes):
        model = make_model()
        model.fit(X, y, **({"qid": qid} if grouping == "qid" else {"group": sizes}))
        return model.predict(X)

    return fit


def contenders(iterations: int) -> dict:
    """(name, setting) -> fit(X, y, qid, group_sizes) -> scores of X."""
    import lightgbm
    import xgboost

    from forestrank import LambdaMART

    common = {"n_estimators": iterations, "learning_rate": 0.05, "n_jobs": 2, "random_state": 0}
    table = {}
    for setting, (ours, lgbm, xgb) in SETTINGS.items():
        table[("forestrank LambdaMART", setting)] = _fitter(
            lambda p=ours: LambdaMART(max_leaf_nodes=31, min_samples_leaf=20, **common, **p), "qid"
        )
        table[("LightGBM LGBMRanker", setting)] = _fitter(
            lambda p=lgbm: lightgbm.LGBMRanker(num_leaves=31, min_child_samples=20, verbose=-1, **common, **p), "group"
        )
        table[("XGBoost XGBRanker hist", setting)] = _fitter(
            lambda p=xgb: xgboost.XGBRanker(
                tree_method="hist", max_leaves=31, max_depth=0, grow_policy="lossguide", objective="rank:ndcg", **common, **p
            ),
            "qid",
        )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=300)
    arguments = parser.parse_args()

    from forestrank import make_ranking
    from forestrank.metrics import ndcg_score

    X, y, qid = make_ranking(n_queries=50, docs_per_query=100, n_features=136, random_state=0)
    sizes = np.unique(qid, return_counts=True)[1]
    fits = contenders(arguments.iterations)
    quality = {key: ndcg_score(y, fit(X, y, qid, sizes), qid, k=10) for key, fit in fits.items()}  # warm-up
    seconds = {key: [] for key in fits}
    for _ in range(arguments.rounds):
        for key, fit in fits.items():
            start = time.perf_counter()
            fit(X, y, qid, sizes)
            seconds[key].append(time.perf_counter() - start)
    print(describe_machine())
    print(f"{X.shape[0]} rows x {X.shape[1]} features, {arguments.iterations} iterations, n_jobs=2, best of {arguments.rounds}")
    print(f"{'contender':<26} {'setting':<14} {'fit s':>8} {'/ LightGBM':>11} {'train NDCG@10':>14}")
    for (name, setting), times in seconds.items():
        reference = min(seconds[("LightGBM LGBMRanker", setting)])
        print(f"{name:<26} {setting:<14} {min(times):8.3f} {min(times) / reference:11.2f} {quality[(name, setting)]:14.4f}")


if __name__ == "__main__":
    main()
