"""Prediction time against the references, the models timed alternately in one process.

    python benchmarks/bench_predict.py
    python benchmarks/bench_predict.py --forest-trees 100 --boosting-iterations 100 --rounds 7

The synthetic set of ``benchmarks/compare.py`` (``make_ranking(2500 x 100, 136
features, random_state=0)``): the first 200k rows train, the last 50k are predicted.
Pairs: ``RFPointRanker`` against scikit-learn's ``RandomForestClassifier`` (entropy,
⌊log2 M⌋+1 features, 63% samples; scored by expected relevance, as ``compare.py``
scores it) and ``LambdaMART`` against LightGBM's ``LGBMRanker`` (31 leaves, learning
rate 0.05, 20 documents per leaf). Every model is fitted once with ``n_jobs=2``, one
warm-up prediction each, then ``--rounds`` rounds predict the 50k rows with each model
in turn (so a busy spell of the host falls on both); the figure is the median of the
rounds and the ratio is ours over the reference's. The speed issue bounds forests at
0.5 and boosted models at 1.0.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402
from compare import _lambdamart, _lightgbm_lambdarank, _rf_point, _sklearn_forest  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forest-trees", type=int, default=100)
    parser.add_argument("--boosting-iterations", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    from forestrank import make_ranking

    X_all, y_all, qid_all = make_ranking(n_queries=2500, docs_per_query=100, n_features=136, random_state=0)
    X, y, qid, X_test = X_all[:200_000], y_all[:200_000], qid_all[:200_000], X_all[200_000:]
    shape = X.shape
    forest = _rf_point(args.forest_trees, shape, 0).fit(X, y, qid=qid)
    sklearn_forest = _sklearn_forest(args.forest_trees, shape, 0).fit(X, y)
    boosted = _lambdamart(args.boosting_iterations, shape, 0).fit(X, y, qid=qid)
    lightgbm = _lightgbm_lambdarank(args.boosting_iterations, shape, 0).fit(
        X, y, group=np.unique(qid, return_counts=True)[1]
    )  # rows are grouped by query
    predictors = {
        "forestrank RFPointRanker": forest.predict,
        "scikit-learn RandomForestClassifier": lambda rows: sklearn_forest.predict_proba(rows) @ sklearn_forest.classes_,
        "forestrank LambdaMART": boosted.predict,
        "LightGBM LGBMRanker": lightgbm.predict,
    }
    seconds = {name: [] for name in predictors}
    for predict in predictors.values():
        predict(X_test)
    for _ in range(args.rounds):
        for name, predict in predictors.items():
            start = time.perf_counter()
            predict(X_test)
            seconds[name].append(time.perf_counter() - start)
    median = {name: statistics.median(times) for name, times in seconds.items()}
    print(f"machine: {describe_machine()}")
    print(
        f"predicting {len(X_test)} rows; forests {args.forest_trees} trees, boosting {args.boosting_iterations} "
        f"iterations, n_jobs=2; median (min-max) of {args.rounds} alternating rounds"
    )
    for name, times in seconds.items():
        print(f"  {name:38s} {median[name]:.4f} s ({min(times):.4f}-{max(times):.4f})")
    forests = median["forestrank RFPointRanker"] / median["scikit-learn RandomForestClassifier"]
    boosting = median["forestrank LambdaMART"] / median["LightGBM LGBMRanker"]
    print(f"forest / scikit-learn: {forests:.3f} (bound 0.5); boosted / LightGBM: {boosting:.3f} (bound 1.0)")


if __name__ == "__main__":
    main()
