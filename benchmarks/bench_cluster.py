"""Forests on a dask.distributed LocalCluster against the same forests fitted locally.

    python benchmarks/bench_cluster.py trees
    python benchmarks/bench_cluster.py partitions
    python benchmarks/bench_cluster.py boosting

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

``boosting``: the same MSLR-WEB10K-shaped set (1.2M training rows in 8 partitions of
1,250 queries), ``--iterations`` of LambdaRank boosting with every contender's defaults
where they agree (31 leaves, learning rate 0.1, 255 bins, 20 rows per leaf, truncation
30): ``LambdaMART`` in memory with ``n_jobs=2``; ``LambdaMART`` on the Dask
partitions; ``lightgbm.LGBMRanker`` in memory with ``n_jobs=2`` (what LightGBM's own
cluster fit costs beyond its fit in memory); ``lightgbm.DaskLGBMRanker`` and ``xgboost.dask.DaskXGBRanker`` (``tree_method="hist"``,
``grow_policy="lossguide"``, ``max_leaves=31``, ``rank:ndcg``) on the same partitions;
each cluster contender on its own ``LocalCluster`` of 2 single-threaded worker
processes, every contender in a process of its own, in the order given, forestrank's after an
untimed two-iteration fit that fills numba's cache. Reported: the
fit's wall time (the Dask contenders' from the collections to the fitted model), test
NDCG@10 (plain), forestrank's scheduler rounds and bytes received per tree, and each
worker's peak resident memory during the fit beside its resident memory before the fit
and the partitions it held then. The collections are persisted on the workers before
the clock starts and the memory is read, as data the workers read themselves would be:
every contender starts from its partitions already on its workers (where Dask placed
them; each contender's cluster is its own). With ``--load-on-workers`` the workers load
the training partitions from files inside the fit instead (where Dask places the loads,
nothing persisted), so that what a fit keeps of its input shows in its peak; "before"
is then the worker with the contender's package imported and no data, and each worker
reports the rows it loaded. The
boosting-on-a-cluster issue bounds the Dask fit at 1.5x the in-memory fit and at
LightGBM's time, and a worker's peak at its share of the data plus the model and a
fixed overhead.
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


BOOSTING_CONTENDERS = ("forestrank-memory", "forestrank-dask", "lightgbm-memory", "lightgbm-dask", "xgboost-dask")


def _boosting_data(folder: Path, n_queries: int) -> Path:
    from forestrank import make_ranking

    X, y, qid = make_ranking(n_queries=n_queries + n_queries // 5, docs_per_query=120, n_features=136, random_state=0)
    path = folder / "boosting.npz"
    np.savez(path, X=X.astype(np.float32), y=y, qid=qid, n_train=n_queries * 120)
    return path


def _worker_memory(client) -> dict:
    """Each worker's current and peak resident memory, in MB."""

    def measure():
        # VmHWM, not getrusage's maxrss: writing 5 to clear_refs resets the former only.
        status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
        return int(status["VmRSS"].split()[0]) / 1e3, int(status["VmHWM"].split()[0]) / 1e3

    return client.run(measure)


def _rows_held(client, X_dask) -> dict:
    """The rows of ``X_dask``'s partitions each worker holds (after the persist)."""
    where = client.who_has(X_dask)
    rows = {}
    for key, holders in where.items():
        index = key[1] if isinstance(key, tuple) else 0
        for worker in holders:
            rows[worker] = rows.get(worker, 0) + X_dask.chunks[0][index]
    return rows


def _reset_peaks(client) -> None:
    client.run(lambda: Path("/proc/self/clear_refs").write_text("5"))


# LightGBM's settings spelled out (its defaults, and the shared settings of the module docstring).
_LIGHTGBM_PARAMS = {
    "num_leaves": 31, "learning_rate": 0.1, "max_bin": 255, "min_child_samples": 20, "lambdarank_truncation_level": 30,
    "verbose": -1,
}  # fmt: skip


def _loaded_on_workers(client, folder: Path, X_train: np.ndarray, rows: int):
    """X_train as a Dask array whose partitions the workers load from files inside the fit,
    where Dask places the loads (nothing persisted: the fit holds them); each worker counts
    the rows it loaded (``_rows_loaded``)."""
    import dask
    import dask.array as da

    def load(file: str) -> np.ndarray:
        from distributed import get_worker

        block = np.load(file)
        worker = get_worker()
        worker.rows_loaded = getattr(worker, "rows_loaded", 0) + len(block)
        return block

    blocks = []
    for number, start in enumerate(range(0, len(X_train), rows)):
        file = folder / f"X{number}.npy"
        if not file.exists():
            np.save(file, X_train[start : start + rows])
        blocks.append(da.from_delayed(dask.delayed(load)(str(file)), shape=(rows, X_train.shape[1]), dtype=X_train.dtype))
    return da.concatenate(blocks)


def _rows_loaded(client) -> dict:
    """The rows each worker loaded in ``_loaded_on_workers``' tasks (where they ran)."""
    return client.run(lambda dask_worker: getattr(dask_worker, "rows_loaded", 0))


def _boosting_contender(name: str, path: Path, iterations: int, n_partitions: int, load_on_workers: bool, queue) -> None:
    import dask.array as da
    from distributed import wait

    from forestrank import LambdaMART
    from forestrank.metrics import ndcg_score

    data = np.load(path)
    n_train = int(data["n_train"])
    X, y, qid = data["X"], data["y"], data["qid"]
    X_train, y_train, q_train, X_test, y_test, q_test = X[:n_train], y[:n_train], qid[:n_train], X[n_train:], y[n_train:], qid[n_train:]
    result = {"name": name}
    if name in ("forestrank-memory", "lightgbm-memory"):
        start = time.perf_counter()
        if name == "forestrank-memory":
            model = LambdaMART(iterations, n_jobs=2, random_state=0).fit(X_train, y_train, qid=q_train)
        else:
            import lightgbm

            model = lightgbm.LGBMRanker(**_LIGHTGBM_PARAMS, n_estimators=iterations, n_jobs=2)
            model.fit(X_train, y_train, group=np.unique(q_train, return_counts=True)[1])
        result["fit_s"] = time.perf_counter() - start
        result["ndcg"] = float(ndcg_score(y_test, model.predict(X_test), q_test, k=10))
        queue.put(result)
        return
    cluster, client = _cluster()
    if (n_train // 120) % n_partitions:
        raise SystemExit(f"--queries must be a multiple of --partitions ({n_partitions}): partitions hold whole queries")
    rows = n_train // n_partitions
    chunks = (rows, X_train.shape[1])
    y_dask, q_dask = da.from_array(y_train, chunks=rows), da.from_array(q_train, chunks=rows)
    if load_on_workers:
        X_dask = _loaded_on_workers(client, path.parent, X_train, rows)
        client.run(lambda: __import__("forestrank" if name == "forestrank-dask" else name.split("-")[0]))
    else:
        # The data on the workers before the clock starts, as data read by the workers would be.
        X_dask, y_dask, q_dask = client.persist([da.from_array(X_train, chunks=chunks), y_dask, q_dask])
        wait([X_dask, y_dask, q_dask])
        held = _rows_held(client, X_dask)
    before = _worker_memory(client)
    _reset_peaks(client)
    start = time.perf_counter()
    if name == "forestrank-dask":
        model = LambdaMART(iterations, n_jobs=2, random_state=0).fit(X_dask, y_dask, qid=q_dask)
        result["rounds_per_tree"] = model.cluster_rounds_ / len(model.trees_)
        result["mb_per_tree"] = model.cluster_bytes_ / len(model.trees_) / 1e6
        predict = model.predict
    elif name == "lightgbm-dask":
        import lightgbm

        sizes = [np.unique(q_train[a : a + rows], return_counts=True)[1] for a in range(0, n_train, rows)]
        group = da.from_array(np.concatenate(sizes), chunks=(tuple(len(part) for part in sizes),))
        model = lightgbm.DaskLGBMRanker(**_LIGHTGBM_PARAMS, n_estimators=iterations)
        model.fit(X_dask, y_dask, group=group)
        predict = model.to_local().predict
    else:
        import xgboost.dask

        model = xgboost.dask.DaskXGBRanker(
            n_estimators=iterations, tree_method="hist", grow_policy="lossguide", max_leaves=31, max_depth=0, learning_rate=0.1,
            max_bin=256, min_child_weight=0.001, objective="rank:ndcg", lambdarank_num_pair_per_sample=30, lambdarank_pair_method="topk",
        )  # fmt: skip
        import dask.dataframe as dd

        model.client = client  # a DataFrame: the ranker keeps each query on one worker only for DataFrames
        columns = [f"f{index}" for index in range(X_train.shape[1])]
        model.fit(
            dd.from_dask_array(X_dask, columns=columns), dd.from_dask_array(y_dask, columns="y"),
            qid=dd.from_dask_array(q_dask, columns="qid"),
        )  # fmt: skip
        booster = model.get_booster()
        predict = lambda rows: booster.inplace_predict(rows)  # noqa: E731
    result["fit_s"] = time.perf_counter() - start
    after = _worker_memory(client)
    if load_on_workers:
        held = _rows_loaded(client)
    result["workers"] = [
        {"before_mb": before[w][0], "peak_mb": after[w][1], "share_mb": held.get(w, 0) * X_train.shape[1] * 4 / 1e6, "rows": held.get(w, 0)}
        for w in sorted(after)
    ]
    result["ndcg"] = float(ndcg_score(y_test, predict(X_test), q_test, k=10))
    client.close()
    cluster.close()
    queue.put(result)


def _boosting_in_process(context, name: str, path: Path, iterations: int, args: argparse.Namespace) -> dict | None:
    """One contender's fit in a spawned process of its own: its result, or None if it died."""
    from queue import Empty

    queue = context.Queue()
    process = context.Process(target=_boosting_contender, args=(name, path, iterations, args.partitions, args.load_on_workers, queue))
    process.start()
    result = None
    while result is None:
        try:
            result = queue.get(timeout=5)
        except Empty:
            if not process.is_alive():
                print(f"  {name}: failed (exit code {process.exitcode})", flush=True)
                break
    process.join()
    return result


def boosting(args: argparse.Namespace) -> None:
    import multiprocessing
    import tempfile

    context = multiprocessing.get_context("spawn")
    runs: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        path = _boosting_data(Path(folder), args.queries)
        # Untimed: a fit of two iterations fills numba's cache for the driver's and the workers'
        # kernels, so that no timed fit (the first round's included) pays their compilation.
        for name in args.contenders:
            if name.startswith("forestrank") and _boosting_in_process(context, name, path, 2, args) is not None:
                print(f"  {name}: warm-up fit of 2 iterations done", flush=True)
        for round_index in range(args.rounds):  # the contenders alternate, round after round
            for name in args.contenders:
                if round_index and name not in args.repeated:
                    continue
                result = _boosting_in_process(context, name, path, args.iterations, args)
                print(f"  {name}: {result}", flush=True)
                if result is not None:
                    runs.setdefault(name, []).append(result)
    print(f"machine: {describe_machine()}")
    print(f"{args.queries * 120:,} training rows x 136 features (float32) in {args.partitions} query partitions, "
          f"{args.iterations} iterations; LocalCluster of 2 single-threaded worker processes; fit: the median of the "
          f"rounds a contender ran (all in brackets); NDCG@10, rounds, bytes and memory: its last run")
    fit = {name: statistics.median(result["fit_s"] for result in results) for name, results in runs.items()}
    for name, results in runs.items():
        result = results[-1]
        times = ", ".join(f"{run['fit_s']:.1f}" for run in results)
        line = f"  {name:18s} fit {fit[name]:7.1f} s ({times})   NDCG@10 {result['ndcg']:.4f}"
        if "forestrank-memory" in fit and name != "forestrank-memory":
            line += f"   {fit[name] / fit['forestrank-memory']:.2f}x forestrank in memory"
        if "rounds_per_tree" in result:
            line += f"   {result['rounds_per_tree']:.1f} rounds and {result['mb_per_tree']:.1f} MB per tree"
        print(line)
        for worker in result.get("workers", []):
            held = "loaded by the fit" if args.load_on_workers else "held"
            print(f"      worker: before {worker['before_mb']:.0f} MB (its {worker['rows']:,} rows {held}: {worker['share_mb']:.0f} MB "
                  f"of float32 features), peak {worker['peak_mb']:.0f} MB, peak - before {worker['peak_mb'] - worker['before_mb']:.0f} MB")
    if "forestrank-dask" in fit and "lightgbm-dask" in fit:
        print(f"forestrank-dask / lightgbm-dask: {fit['forestrank-dask'] / fit['lightgbm-dask']:.2f} (bound 1)")
    if "lightgbm-memory" in fit and "lightgbm-dask" in fit:
        print(f"lightgbm-dask / lightgbm-memory: {fit['lightgbm-dask'] / fit['lightgbm-memory']:.2f} (its own cluster cost)")
    if "forestrank-memory" in fit and "lightgbm-memory" in fit:
        print(f"forestrank-memory / lightgbm-memory: {fit['forestrank-memory'] / fit['lightgbm-memory']:.2f}")
    print("NDCG@10 plain: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant = 0")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    trees_parser = commands.add_parser("trees", help="the same forest locally and on a LocalCluster")
    trees_parser.add_argument("--trees", type=int, default=100)
    trees_parser.add_argument("--rounds", type=int, default=3)
    partitions_parser = commands.add_parser("partitions", help="a forest fitted on 8 query partitions vs locally")
    partitions_parser.add_argument("--trees", type=int, default=100)
    boosting_parser = commands.add_parser("boosting", help="LambdaMART on 8 query partitions against LightGBM's and XGBoost's Dask rankers")
    boosting_parser.add_argument("--iterations", type=int, default=100)
    boosting_parser.add_argument("--queries", type=int, default=10_000, help="training queries of 120 documents")
    boosting_parser.add_argument("--partitions", type=int, default=8)
    boosting_parser.add_argument("--contenders", nargs="+", choices=BOOSTING_CONTENDERS, default=list(BOOSTING_CONTENDERS))
    boosting_parser.add_argument("--rounds", type=int, default=1, help="rounds of the contenders, alternated; medians reported")
    boosting_parser.add_argument(
        "--load-on-workers", action="store_true",
        help="the fit loads the training partitions on the workers instead of starting from persisted ones",
    )  # fmt: skip
    boosting_parser.add_argument(
        "--repeated", nargs="+", choices=BOOSTING_CONTENDERS, default=["forestrank-memory", "forestrank-dask", "lightgbm-memory", "lightgbm-dask"],
        help="the contenders run in every round (the others in the first only)",
    )
    args = parser.parse_args()
    {"trees": trees, "partitions": partitions, "boosting": boosting}[args.command](args)


if __name__ == "__main__":
    main()
