"""How BROOF's defaults were chosen: staged NDCG@10 over the rounds on the MQ2008 validation folds.

    python benchmarks/broof_tuning.py gradient --min-samples-leaf 50 100 200 400 800 --learning-rate 0.1 0.3 1.0
    python benchmarks/broof_tuning.py absolute height median --min-samples-leaf 200 --learning-rate 0.1 1.0

For every variant, weak-learner ``min_samples_leaf`` and ``learning_rate``: fit
``BROOF(n_estimators=10, n_trees=100, random_state=0)`` on each fold's train.txt and
print, after every round (``staged_predict``), the 5-fold mean NDCG@10 on vali.txt
(the selection criterion) and on test.txt, and MAP on test.txt, all under the
official LETOR 4.0 evaluation (``letor4``). A fold whose boosting stopped early keeps
its last model for the later rounds.
"""

import argparse
import itertools
import time
from pathlib import Path

import numpy as np

from forestrank import BROOF, RFPointRanker, load_letor_fold, map_score, ndcg_score

ROUNDS = 10


def staged(model: BROOF, X: np.ndarray, y: np.ndarray, qid: np.ndarray, metric) -> list[float]:
    values = [metric(y, scores, qid) for scores in model.staged_predict(X)]
    return values + [values[-1]] * (ROUNDS - len(values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="+", choices=["gradient", "absolute", "median", "height"])
    parser.add_argument("--min-samples-leaf", type=int, nargs="+", default=[200])
    parser.add_argument("--learning-rate", type=float, nargs="+", default=[None])
    parser.add_argument("--datasets", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets")
    args = parser.parse_args()

    def ndcg(y, scores, qid):
        return ndcg_score(y, scores, qid, 10, convention="letor4")

    def average_precision(y, scores, qid):
        return map_score(y, scores, qid, convention="letor4")

    folds = [load_letor_fold(args.datasets / "MQ2008" / f"Fold{fold}") for fold in range(1, 6)]
    print("rounds:".ljust(24) + " ".join(f"{r:>6}" for r in range(1, ROUNDS + 1)))
    for variant, leaf, rate in itertools.product(args.variants, args.min_samples_leaf, args.learning_rate):
        start = time.perf_counter()
        curves = {"vali NDCG@10": [], "test NDCG@10": [], "test MAP": []}
        for (X, y, qid), (X_val, y_val, qid_val), (X_test, y_test, qid_test) in folds:
            forest = RFPointRanker(criterion="variance", min_samples_leaf=leaf)
            model = BROOF(ROUNDS, variant=variant, n_trees=100, learning_rate=rate, forest=forest, n_jobs=2, random_state=0)
            model.fit(X, y, qid=qid)
            curves["vali NDCG@10"].append(staged(model, X_val, y_val, qid_val, ndcg))
            curves["test NDCG@10"].append(staged(model, X_test, y_test, qid_test, ndcg))
            curves["test MAP"].append(staged(model, X_test, y_test, qid_test, average_precision))
        print(f"{variant}, min_samples_leaf={leaf}, learning_rate={model.learning_rate_} ({time.perf_counter() - start:.0f} s)")
        for name, values in curves.items():
            print(f"  {name}".ljust(24) + " ".join(f"{v:.4f}" for v in np.mean(values, axis=0)))


if __name__ == "__main__":
    main()
