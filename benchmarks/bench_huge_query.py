"""One query of up to 1,000,000 documents: every ranker fits and scores it, every metric evaluates it.

    python benchmarks/bench_huge_query.py
    python benchmarks/bench_huge_query.py --sizes 10000 100000 --estimators LambdaMART PLRank

A recommender that ranks a user's whole catalogue has one query of that size; LightGBM refuses
more than 10,000 documents a query, CatBoost's GPU ranking losses 1,023. Each (ranker, size)
runs in a process of its own on ``make_ranking(n_queries=1, docs_per_query=size,
n_features=--features)``: fit (two threads), predict, NDCG@10, and the process's peak
resident memory; then NDCG@10, ERR@10 and MAP are timed on the query. The table gives each
fit's time per document and its growth against the previous size (1.0: linear in the
documents), and LightGBM's answer to the largest query.
"""

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

ESTIMATORS = ["LambdaMART", "PLRank", "RF-point", "RF-list", "BROOF"]


def make_estimator(name: str) -> object:
    """The ranker ``name`` at a size a test of scale can afford: 20 iterations, 10 trees."""
    from forestrank import BROOF, LambdaMART, PLRank, RFListRanker, RFPointRanker

    return {
        "LambdaMART": lambda: LambdaMART(n_estimators=20, n_jobs=2, random_state=0),
        "PLRank": lambda: PLRank(n_estimators=20, n_jobs=2, random_state=0),
        "RF-point": lambda: RFPointRanker(n_estimators=10, n_jobs=2, random_state=0),
        "RF-list": lambda: RFListRanker(n_estimators=10, n_jobs=2, random_state=0),
        # One query: the weak forests must sample documents to leave rows out of bag.
        "BROOF": lambda: BROOF(
            n_estimators=3, n_trees=5, forest=RFPointRanker(criterion="variance", sample_level="document"), n_jobs=2,
            random_state=0,
        ),
    }[name]()  # fmt: skip


def run_one(name: str, size: int, n_features: int) -> dict:
    """Fit, predict and evaluate ``name`` on one query of ``size`` documents, in this process."""
    from forestrank import make_ranking, ndcg_score

    X, y, qid = make_ranking(n_queries=1, docs_per_query=size, n_features=n_features, random_state=0)
    data_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    model = make_estimator(name)
    start = time.perf_counter()
    model.fit(X, y, qid=qid)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    scores = model.predict(X)
    predict = time.perf_counter() - start
    return {
        "fit": fit, "predict": predict, "ndcg": ndcg_score(y, scores, qid, k=10), "data_mb": data_mb,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }  # fmt: skip


def time_metrics(size: int) -> dict:
    from forestrank import make_ranking
    from forestrank.metrics import err_score, map_score, ndcg_score

    _, y, qid = make_ranking(n_queries=1, docs_per_query=size, n_features=1, random_state=0)
    scores = np.random.default_rng(0).random(size)
    seconds = {}
    for metric, function in (("NDCG@10", lambda: ndcg_score(y, scores, qid, k=10)),
                             ("ERR@10", lambda: err_score(y, scores, qid, k=10)),
                             ("MAP", lambda: map_score(y, scores, qid))):  # fmt: skip
        function()
        start = time.perf_counter()
        function()
        seconds[metric] = time.perf_counter() - start
    return seconds


def lightgbm_answer(size: int, n_features: int) -> str:
    import lightgbm

    from forestrank import make_ranking

    X, y, _ = make_ranking(n_queries=1, docs_per_query=size, n_features=n_features, random_state=0)
    try:
        lightgbm.LGBMRanker(n_estimators=1, verbose=-1).fit(X, y, group=[size])
    except Exception as error:  # LightGBM raises its own LightGBMError
        return f"refused: {str(error).splitlines()[0]}"
    return "fitted"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--estimators", nargs="+", default=ESTIMATORS, choices=ESTIMATORS)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--worker", nargs=2, metavar=("ESTIMATOR", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_one(args.worker[0], int(args.worker[1]), args.features)))
        return
    print(f"machine: {describe_machine()}")
    print(f"one query of make_ranking(docs_per_query=size, {args.features} features); fit on two threads, "
          "each (ranker, size) in a process of its own")  # fmt: skip
    for name in args.estimators:
        previous = None
        for size in args.sizes:
            command = [sys.executable, __file__, "--worker", name, str(size), "--features", str(args.features)]
            result = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
            growth = "" if previous is None else f"  growth {result['fit'] / previous['fit'] / (size / previous['size']):.2f}"
            print(f"  {name:10s} {size:>9,d} documents: fit {result['fit']:8.2f} s ({result['fit'] / size * 1e6:6.2f} µs a "
                  f"document){growth}, predict {result['predict']:6.2f} s, NDCG@10 {result['ndcg']:.3f}, peak "
                  f"{result['peak_mb']:,.0f} MB ({result['data_mb']:,.0f} MB after the data)", flush=True)  # fmt: skip
            previous = {**result, "size": size}
    for size in args.sizes:
        seconds = time_metrics(size)
        print(f"  metrics on {size:,d} documents: " + ", ".join(f"{m} {s * 1e3:.1f} ms" for m, s in seconds.items()))
    print(f"  LightGBM LGBMRanker on one query of {args.sizes[-1]:,d} documents: {lightgbm_answer(args.sizes[-1], args.features)}")


if __name__ == "__main__":
    main()
