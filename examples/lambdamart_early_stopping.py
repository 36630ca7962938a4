"""Boost LambdaMART on a LETOR fold, stop on its validation set, compare with PLRank.

    python examples/lambdamart_early_stopping.py ../shared/datasets/MQ2008/Fold1

Each model watches NDCG@10 on vali.txt after every iteration and keeps the trees up
to the best one; the curve stays in ``evals_result_``.
"""

import sys

from forestrank import LambdaMART, PLRank, describe_metric, load_letor_fold, ndcg_score


def main(folder: str) -> None:
    (X, y, qid), validation, (X_test, y_test, qid_test) = load_letor_fold(folder)
    models = {
        "LambdaMART": LambdaMART(n_estimators=1000, learning_rate=0.05, n_iter_no_change=50, random_state=0),
        "PLRank": PLRank(n_estimators=1000, learning_rate=0.05, n_iter_no_change=50, random_state=0),
    }
    print(describe_metric("ndcg", 10, convention="letor4"))
    for name, model in models.items():
        model.fit(X, y, qid=qid, eval_set=[tuple(validation)])
        curve = model.evals_result_["valid_0"]["ndcg@10"]
        test = ndcg_score(y_test, model.predict(X_test), qid_test, 10, convention="letor4")
        print(f"  {name}: best iteration {model.best_iteration_} of {len(curve)} run "
              f"(vali NDCG@10 {max(curve):.4f}, package default convention); test {test:.4f}")  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
