"""Metric throughput: forestrank.metrics vs scikit-learn and ranx on 1M documents / 10k queries.

Every query has 100 documents (scikit-learn's ndcg_score needs a dense
queries x documents matrix), grades 0-4. Two score sets: continuous (no ties) and
rounded to one decimal (heavy ties, which exercises the exact tie expectation).
Timings are warm (numba compiled and cached before timing); each line names its
metric convention, and cross-library values are checked for agreement.

    python benchmarks/bench_metrics.py
"""

import argparse
import time
import warnings

import numpy as np
import sklearn
import sklearn.metrics

import forestrank
from _machine import describe_machine
from forestrank import describe_metric, err_score, map_score, ndcg_score

N_QUERIES = 10_000
DOCS_PER_QUERY = 100


def best_of(repeats, function, *args, **kwargs):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()  # no options: --help, and typos refused
    rng = np.random.default_rng(0)
    n = N_QUERIES * DOCS_PER_QUERY
    y = np.minimum(rng.geometric(0.5, n) - 1, 4).astype(float)
    qid = np.repeat(np.arange(N_QUERIES), DOCS_PER_QUERY)
    continuous = rng.random(n) + 0.3 * y
    tied = np.round(continuous, 1)
    print(f"machine: {describe_machine()}")
    print(f"forestrank {forestrank.__version__}, scikit-learn {sklearn.__version__}; {n:,} rows, {N_QUERIES:,} queries")
    ndcg_score(y[:200], continuous[:200], qid[:200], 10)  # compile / load the numba cache

    rows = []
    for label, scores in (("continuous scores", continuous), ("scores rounded to 0.1 (ties)", tied)):
        for metric, function, kwargs in (
            ("ndcg", ndcg_score, {"k": 10}),
            ("ndcg", ndcg_score, {"k": 10, "ties": "input_order"}),
            ("err", err_score, {"k": 10, "max_grade": 4}),
            ("map", map_score, {}),
        ):
            seconds, value = best_of(3, function, y, scores, qid, **kwargs)
            conventions = {key: value for key, value in kwargs.items() if key == "ties"}
            rows.append((label, describe_metric(metric, kwargs.get("k"), **conventions), seconds, value))
    for label, name, seconds, value in rows:
        print(f"  forestrank {seconds:6.3f} s  {value:.6f}  {name}  ({label})")

    y_matrix = y.reshape(N_QUERIES, DOCS_PER_QUERY)
    for label, scores in (("continuous scores", continuous), ("scores rounded to 0.1 (ties)", tied)):
        ours_seconds, ours = best_of(3, ndcg_score, y, scores, qid, 10)
        theirs_seconds, theirs = best_of(
            3, sklearn.metrics.ndcg_score, 2**y_matrix - 1, scores.reshape(N_QUERIES, DOCS_PER_QUERY), k=10
        )
        assert abs(ours - theirs) < 1e-10, (ours, theirs)
        print(
            f"  sklearn.metrics.ndcg_score(2**y-1, k=10, tie-averaged) {theirs_seconds:.3f} s vs forestrank "
            f"{ours_seconds:.3f} s: ratio {ours_seconds / theirs_seconds:.3f} ({label}; values agree to 1e-10)"
        )
    try:
        import ranx
    except ImportError:
        print("  ranx not installed: skipped")
        return
    qrels = ranx.Qrels.from_dict(
        {str(q): {f"d{j}": int(y[q * DOCS_PER_QUERY + j]) for j in range(DOCS_PER_QUERY)} for q in range(N_QUERIES)}
    )
    run = ranx.Run.from_dict(
        {str(q): {f"d{j}": float(continuous[q * DOCS_PER_QUERY + j]) for j in range(DOCS_PER_QUERY)}
         for q in range(N_QUERIES)}
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranx.evaluate(qrels, run, "ndcg_burges@10")  # compile
        theirs_seconds, theirs = best_of(3, ranx.evaluate, qrels, run, "ndcg_burges@10")
    ours_seconds, ours = best_of(3, ndcg_score, y, continuous, qid, 10, ties="input_order")
    assert abs(ours - theirs) < 1e-10, (ours, theirs)
    print(
        f"  ranx.evaluate(ndcg_burges@10) {theirs_seconds:.3f} s (Qrels/Run already built) vs forestrank "
        f"{ours_seconds:.3f} s from raw arrays: ratio {ours_seconds / theirs_seconds:.3f}"
    )


if __name__ == "__main__":
    main()
