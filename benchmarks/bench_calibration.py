"""Scores comparable across queries: the calibration error of CalibratedRanker against two baselines.

    python benchmarks/bench_calibration.py --data mq2008
    python benchmarks/bench_calibration.py --data synthetic --n-estimators 100

On each split's held-out queries, the probability that a document is relevant (grade >= 1)
from: ``CalibratedRanker(LambdaMART)`` (isotonic and Platt, fitted on the training queries'
cross-fitted scores, 5 folds of queries); the ranker's scores min-max scaled within each
query (the usual makeshift); and a logistic regression on the standardised features (a
pointwise classifier, calibrated by its loss). Reported: the expected calibration error
(10 equal-width bins, ``forestrank.calibration.expected_calibration_error``), the Brier
score, and NDCG@10 (letor4) of the ranking, which calibration leaves as it is. LambdaMART:
31 leaves, learning rate 0.05, 20 documents per leaf, ``--n-estimators`` iterations, two
threads. Data: MQ2008 (5 folds, train -> test) or the synthetic set of
``benchmarks/compare.py``.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402
from compare import load_splits  # noqa: E402


def _per_query_minmax(scores: np.ndarray, qid: np.ndarray) -> np.ndarray:
    from forestrank.preprocessing import QueryScaler

    return QueryScaler().fit_transform(scores[:, None], qid=qid)[:, 0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["mq2008", "synthetic"], default="mq2008")
    parser.add_argument("--datasets", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    parser.add_argument("--n-estimators", type=int, default=300)
    args = parser.parse_args()

    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from forestrank import CalibratedRanker, LambdaMART, ndcg_score
    from forestrank.calibration import expected_calibration_error

    ranker = LambdaMART(
        n_estimators=args.n_estimators, learning_rate=0.05, min_samples_leaf=20, n_jobs=2, random_state=0
    )  # fmt: skip
    splits = load_splits(args.data, Path(args.datasets), [1, 2, 3, 4, 5])
    print(f"machine: {describe_machine()}")
    print(f"data: {args.data} ({len(splits)} split(s)), LambdaMART {args.n_estimators} iterations")
    rows = {name: {"ECE": [], "Brier": [], "NDCG@10": []} for name in
            ("CalibratedRanker isotonic", "CalibratedRanker sigmoid", "scores min-max per query", "logistic regression")}  # fmt: skip
    for X, y, qid, X_test, y_test, qid_test, _ in splits:
        relevant = (y_test >= 1).astype(float)
        isotonic = CalibratedRanker(ranker, cv=5).fit(X, y, qid=qid)
        sigmoid = CalibratedRanker(ranker, method="sigmoid", cv=5).fit(X, y, qid=qid)
        scores = isotonic.predict(X_test)
        logistic = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)).fit(np.nan_to_num(X), y >= 1)
        logistic_p = logistic.predict_proba(np.nan_to_num(X_test))[:, 1]
        outputs = {
            "CalibratedRanker isotonic": (isotonic.predict_relevance(X_test), scores),
            "CalibratedRanker sigmoid": (sigmoid.predict_relevance(X_test), scores),
            "scores min-max per query": (_per_query_minmax(scores, qid_test), scores),
            "logistic regression": (logistic_p, logistic_p),
        }
        for name, (probabilities, ranking) in outputs.items():
            rows[name]["ECE"].append(expected_calibration_error(relevant, probabilities))
            rows[name]["Brier"].append(float(np.mean((probabilities - relevant) ** 2)))
            rows[name]["NDCG@10"].append(ndcg_score(y_test, ranking, qid_test, k=10, convention="letor4"))
    print("\n| probability of relevance from | ECE | Brier | NDCG@10 letor4 of its ranking |\n|---|---|---|---|")
    for name, values in rows.items():
        print(f"| {name} | {np.mean(values['ECE']):.4f} | {np.mean(values['Brier']):.4f} | {np.mean(values['NDCG@10']):.4f} |")
    print("(means over splits; the three rows of LambdaMART rank by the same scores)")


if __name__ == "__main__":
    main()
