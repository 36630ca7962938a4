"""Forests on a dask.distributed LocalCluster against the same forests fitted locally.

    python benchmarks/bench_cluster.py trees
    python benchmarks/bench_cluster.py partitions

``trees``: the synthetic set of ``benchmarks/compare.py`` (``make_ranking(2500 x 100,
136 features, random_state=0)``, the first 200k rows), ``RFPointRanker(100 trees)``
fitted locally with ``n_jobs=2`` and under ``joblib.parallel_config(backend="dask")``
on a ``LocalCluster`` of 2 single-threaded worker processes, in turn for ``--rounds``
rounds after one warm-up fit of each (the workers load the numba cache then); the
figure is the median of the rounds. Reported with it: whether the two models are
bitwise equal, and the bytes the fit sends to the workers (every scattered payload
times its replicas) and the bytes of the trees that come back. The cluster issue
bounds the ratio at 1.2.

``partitions``: an MSLR-WEB10K-shaped set (``make_ranking(12,000 queries x 120
documents, 136 features, random_state=0)``, float32; the first 10,000 queries, 1.2M
rows, train, the last 2,000 test), ``RFPointRanker(--trees, query_subsample=0.05)``
fitted on 8 Dask partitions of 1,250 queries each (each tree draws its 500 queries from
one partition) and locally (500 queries drawn from all 10,000), compared on test
NDCG@10 (plain: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant = 0) with a paired
test over the test queries. The cluster issue bounds the difference at 0.005.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402


def _cluster():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    return cluster, Client(cluster)


def _count_bytes(client) -> dict:
    """Wrap ``client.scatter`` so that every payload's bytes times its replicas are added up."""
    from dask.sizeof import sizeof

    counts = {"sent": 0}
    scatter = client.scatter

    def counting(data, *args, broadcast=False, **kwargs):
        replicas = len(client.nthreads()) if broadcast else 1
        counts["sent"] += sizeof(data) * replicas
        return scatter(data, *args, broadcast=broadcast, **kwargs)

    client.scatter = counting
    return counts


def trees(args: argparse.Namespace) -> None:
    import joblib

    from forestrank import RFPointRanker, make_ranking

    X, y, qid = make_ranking(n_queries=2500, docs_per_query=100, n_features=136, random_state=0)
    X, y, qid = X[:200_000], y[:200_000], qid[:200_000]
    make = lambda: RFPointRanker(n_estimators=args.trees, n_jobs=2, random_state=0)  # noqa: E731
    cluster, client = _cluster()
    counts = _count_bytes(client)

    def local():
        return make().fit(X, y, qid=qid)

    def on_cluster():
        with joblib.parallel_config(backend="dask"):
            return make().fit(X, y, qid=qid)

    RFPointRanker(n_estimators=4, n_jobs=2, random_state=0).fit(X[:20_000], y[:20_000], qid=qid[:20_000])
    with joblib.parallel_config(backend="dask"):
        RFPointRanker(n_estimators=4, n_jobs=2, random_state=0).fit(X[:20_000], y[:20_000], qid=qid[:20_000])
    times = {"local": [], "cluster": []}
    models = {}
    for round_number in range(args.rounds):
        for name, fit in (("local", local), ("cluster", on_cluster)):
            counts["sent"] = 0
            start = time.perf_counter()
            models[name] = fit()
            times[name].append(time.perf_counter() - start)
            print(f"  round {round_number + 1}: {name} {times[name][-1]:.2f} s", flush=True)
    sent = counts["sent"]
    returned = sum(
        sum(array.nbytes for array in (tree.nodes, tree.missing_left, tree.values, tree.n_node_samples, tree.weighted_n_node_samples))
        for tree in models["cluster"].trees_
    )
    equal = all(np.array_equal(a.nodes, b.nodes) and np.array_equal(a.values, b.values) for a, b in zip(models["local"].trees_, models["cluster"].trees_))
    local_s, cluster_s = statistics.median(times["local"]), statistics.median(times["cluster"])
    print(f"machine: {describe_machine()}")
    print(f"200k rows x 136 features, RFPointRanker({args.trees} trees); median of {args.rounds} alternated rounds")
    print(f"  local, n_jobs=2 (threads):                   {local_s:.2f} s")
    print(f"  LocalCluster, 2 single-threaded processes:   {cluster_s:.2f} s")
    print(f"cluster / local: {cluster_s / local_s:.3f} (bound 1.2); bitwise the same trees: {equal}")
    print(f"sent to the workers: {sent / 1e6:.1f} MB (binned matrix {X.shape[0] * X.shape[1] / 1e6:.1f} MB, 2 workers); "
          f"trees returned: {returned / 1e6:.1f} MB")
    client.close()
    cluster.close()


def partitions(args: argparse.Namespace) -> None:
    import dask.array as da

    from forestrank import RFPointRanker, make_ranking, paired_test
    from forestrank.metrics import ndcg_score

    X, y, qid = make_ranking(n_queries=12_000, docs_per_query=120, n_features=136, random_state=0)
    X = X.astype(np.float32)
    n_train = 10_000 * 120
    X_train, y_train, q_train = X[:n_train], y[:n_train], qid[:n_train]
    X_test, y_test, q_test = X[n_train:], y[n_train:], qid[n_train:]
    make = lambda: RFPointRanker(n_estimators=args.trees, query_subsample=0.05, n_jobs=2, random_state=0)  # noqa: E731
    start = time.perf_counter()
    local = make().fit(X_train, y_train, qid=q_train)
    local_s = time.perf_counter() - start
    del X
    cluster, client = _cluster()
    rows = n_train // 8
    start = time.perf_counter()
    distributed_model = make().fit(
        da.from_array(X_train, chunks=(rows, X_train.shape[1])), da.from_array(y_train, chunks=rows),
        qid=da.from_array(q_train, chunks=rows),
    )  # fmt: skip
    cluster_s = time.perf_counter() - start
    client.close()
    cluster.close()
    scores = {}
    for name, model in (("local", local), ("distributed", distributed_model)):
        scores[name] = ndcg_score(y_test, model.predict(X_test), q_test, k=10, per_query=True)
    difference = scores["distributed"].mean() - scores["local"].mean()
    test = paired_test(scores["distributed"], scores["local"])
    print(f"machine: {describe_machine()}")
    print(f"1.2M rows x 136 features (float32), 10,000 training queries; RFPointRanker({args.trees} trees, "
          "query_subsample=0.05: 500 queries per tree)")
    print(f"  local (queries from all 10,000):            NDCG@10 {scores['local'].mean():.4f}, fit {local_s:.1f} s")
    print(f"  8 partitions of 1,250 queries, LocalCluster: NDCG@10 {scores['distributed'].mean():.4f}, fit {cluster_s:.1f} s")
    print(f"distributed - local: {difference:+.4f} (bound 0.005); paired over {len(scores['local'])} test queries: "
          f"t-test p={test.pvalue:.2g}")
    print(f"trees per partition: {np.bincount(distributed_model.tree_partitions_, minlength=8).tolist()}")
    print("NDCG@10 plain: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant = 0")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    trees_parser = commands.add_parser("trees", help="the same forest locally and on a LocalCluster")
    trees_parser.add_argument("--trees", type=int, default=100)
    trees_parser.add_argument("--rounds", type=int, default=3)
    partitions_parser = commands.add_parser("partitions", help="a forest fitted on 8 query partitions vs locally")
    partitions_parser.add_argument("--trees", type=int, default=100)
    args = parser.parse_args()
    {"trees": trees, "partitions": partitions}[args.command](args)


if __name__ == "__main__":
    main()
