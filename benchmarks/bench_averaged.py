"""Averaged k-stochastic boosting (Mohan's thesis §2.3, Table 2.4) against kSGBRT and GBRT.

    python benchmarks/bench_averaged.py --data mq2008
    python benchmarks/bench_averaged.py --data synthetic

GBRT = ``LambdaMART(objective="mart")`` (least squares on the grade, every feature at
every split); kSGBRT = the same with ``max_features=k`` (k = 30% of the features) and
half of the queries per iteration (``subsample=0.5``); Avg kSGBRT = ``AveragedRanker``
of ``b`` kSGBRT models, b in ``--members`` (b = 1 is kSGBRT). Every model: 31 leaves,
learning rate 0.05, 20 documents per leaf, ``--n-estimators`` iterations; members fitted
two at a time in processes, each on one thread. Data: MQ2008 (5 folds, train -> test,
NDCG@10 letor4 and MAP letor4, 5-fold means) or the synthetic set of
``benchmarks/compare.py`` (2,000 queries train, 500 test; NDCG@10 letor4). Paired
t-tests of NDCG@10 against GBRT over the test queries.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402
from _report import versus  # noqa: E402
from compare import load_splits  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["mq2008", "synthetic"], default="mq2008")
    parser.add_argument("--datasets", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    parser.add_argument("--n-estimators", type=int, default=300)
    parser.add_argument("--members", type=int, nargs="+", default=[1, 5, 20])
    args = parser.parse_args()

    from forestrank import AveragedRanker, LambdaMART, map_score, ndcg_score

    common = dict(
        n_estimators=args.n_estimators, objective="mart", max_leaf_nodes=31, learning_rate=0.05, min_samples_leaf=20,
        random_state=0,
    )  # fmt: skip
    contenders = {"GBRT": lambda: LambdaMART(**common, n_jobs=2)}
    for b in args.members:
        member = LambdaMART(**common, max_features=0.3, subsample=0.5, n_jobs=1)
        name = "kSGBRT" if b == 1 else f"Avg kSGBRT b={b}"
        contenders[name] = lambda member=member, b=b: AveragedRanker(member, n_models=b, n_jobs=2, random_state=0)
    splits = load_splits(args.data, Path(args.datasets), [1, 2, 3, 4, 5])
    print(f"machine: {describe_machine()}")
    print(f"data: {args.data} ({len(splits)} split(s)), {args.n_estimators} iterations")
    per_query = {}
    for name, make in contenders.items():
        start = time.perf_counter()
        ndcg, average_precision = [], []
        for X, y, qid, X_test, y_test, qid_test, _ in splits:
            scores = make().fit(X, y, qid=qid).predict(X_test)
            ndcg.append(ndcg_score(y_test, scores, qid_test, k=10, convention="letor4", per_query=True))
            average_precision.append(map_score(y_test, scores, qid_test, convention="letor4", per_query=True))
        per_query[name] = np.concatenate(ndcg)
        line = (
            f"  {name:<18} NDCG@10 {per_query[name].mean():.4f}  MAP {np.concatenate(average_precision).mean():.4f}  "
            f"fit+predict {time.perf_counter() - start:6.1f} s"
        )
        if name != "GBRT":
            line += f"  vs GBRT {versus(per_query[name], per_query['GBRT'])}"
        print(line, flush=True)
    print("NDCG@10 and MAP: letor4 convention (official LETOR 4.0 script), means over the test queries")


if __name__ == "__main__":
    main()
