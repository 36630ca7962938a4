"""A loss of your own over queries: RankNet as a compiled per-query function, against the built-ins.

    python benchmarks/bench_custom_objective.py [--early-stopping PATIENCE]

MQ2008, 5 folds (train -> test), NDCG@10 letor4 (5-fold means) and fit seconds summed
over the folds (two threads, warm: one untimed fit first): ``LambdaMART(objective=ranknet)``
with RankNet (Burges et al., ICML 2005, every pair of different grades) written as a
``numba.njit`` function of one query's rows; the same loss as a Python function over all
rows (numpy per query); the built-in LambdaRank; and the best single feature
(``DummyRanker``), the floor a learned model must beat. 500 iterations, 31 leaves,
learning rate 0.05, 20 documents per leaf; with ``--early-stopping`` the boosted models
stop when NDCG@10 on the fold's vali.txt has not improved for PATIENCE iterations (LETOR's
protocol: the validation file chooses the model) and keep their best iteration.
"""

import argparse
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402
from compare import load_splits  # noqa: E402


@numba.njit
def ranknet(labels, scores, gradients, hessians):
    """RankNet's pair logistic loss over one query's rows: gradients and hessians in place."""
    gradients[:] = 0.0
    hessians[:] = 0.0
    for i in range(len(labels)):
        for j in range(len(labels)):
            if labels[i] > labels[j]:
                p = 1.0 / (1.0 + np.exp(scores[i] - scores[j]))
                gradients[i] -= p
                gradients[j] += p
                hessians[i] += p * (1.0 - p)
                hessians[j] += p * (1.0 - p)


def ranknet_numpy(labels, scores, query_boundaries, query_ids):
    """The same loss over all rows, a numpy matrix per query."""
    gradients, hessians = np.zeros(len(scores)), np.zeros(len(scores))
    for start, end in zip(query_boundaries[:-1], query_boundaries[1:]):
        y, s = labels[start:end], scores[start:end]
        better = y[:, None] > y[None, :]
        p = np.where(better, 1.0 / (1.0 + np.exp(s[:, None] - s[None, :])), 0.0)
        gradients[start:end] = -p.sum(axis=1) + p.sum(axis=0)
        curvature = p * (1.0 - p)
        hessians[start:end] = curvature.sum(axis=1) + curvature.sum(axis=0)
    return gradients, hessians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    parser.add_argument("--n-estimators", type=int, default=500)
    parser.add_argument("--early-stopping", type=int, metavar="PATIENCE", help="stop on each fold's vali.txt")
    args = parser.parse_args()

    from forestrank import DummyRanker, LambdaMART, ndcg_score

    settings = dict(
        n_estimators=args.n_estimators, learning_rate=0.05, min_samples_leaf=20, n_jobs=2, random_state=0,
        n_iter_no_change=args.early_stopping,
    )  # fmt: skip
    contenders = {
        "LambdaMART(objective=ranknet), numba per query": lambda: LambdaMART(objective=ranknet, **settings),
        "LambdaMART(objective=ranknet_numpy), Python over all rows": lambda: LambdaMART(objective=ranknet_numpy, **settings),
        "LambdaMART (built-in LambdaRank)": lambda: LambdaMART(**settings),
        "DummyRanker (best single feature)": lambda: DummyRanker(),
    }
    splits = load_splits("mq2008", Path(args.datasets), [1, 2, 3, 4, 5])
    print(f"machine: {describe_machine()}")
    stopping = "" if args.early_stopping is None else f", early stopping on vali.txt after {args.early_stopping}"
    print(f"data: MQ2008, 5 folds, {args.n_estimators} iterations{stopping}")
    print("\n| model | NDCG@10 letor4 | fit s (5 folds) |\n|---|---|---|")
    for name, make in contenders.items():
        validated = name.startswith("LambdaMART") and args.early_stopping is not None  # vali.txt only to stop on
        X, y, qid = splits[0][:3]
        make().fit(X, y, qid=qid, **({"eval_set": [splits[0][6]]} if validated else {}))  # compiles the kernels: not timed
        fit_seconds, ndcg = 0.0, []
        for X, y, qid, X_test, y_test, qid_test, validation in splits:
            start = time.perf_counter()
            model = make().fit(X, y, qid=qid, **({"eval_set": [validation]} if validated else {}))
            fit_seconds += time.perf_counter() - start
            ndcg.append(ndcg_score(y_test, model.predict(X_test), qid_test, k=10, convention="letor4"))
        print(f"| {name} | {np.mean(ndcg):.4f} | {fit_seconds:.2f} |", flush=True)


if __name__ == "__main__":
    main()
