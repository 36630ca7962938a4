"""Load a LETOR fold and report a baseline's test metrics under two conventions.

    python examples/evaluate_letor_fold.py ../shared/datasets/MQ2008/Fold1

The same ranking scores about half as much NDCG@10 under the official LETOR 4.0
script's convention as under the plain definition (see docs/metrics.md): always
name the convention next to a number.
"""

import sys

from forestrank import DummyRanker, describe_metric, load_letor_fold, map_score, ndcg_score


def main(folder: str) -> None:
    (X, y, qid), _, (X_test, y_test, qid_test) = load_letor_fold(folder)
    ranker = DummyRanker(strategy="best_feature").fit(X, y, qid=qid)
    scores = ranker.predict(X_test)
    print(f"{folder}: best single feature = column {ranker.feature_ + 1} (1-based), sign {ranker.feature_sign_:+.0f}")
    for convention in ("letor4", None):
        ndcg = ndcg_score(y_test, scores, qid_test, 10, convention=convention)
        mean_ap = map_score(y_test, scores, qid_test, convention=convention)
        print(f"  {ndcg:.4f}  {describe_metric('ndcg', 10, convention=convention)}")
        print(f"  {mean_ap:.4f}  {describe_metric('map', convention=convention)}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
