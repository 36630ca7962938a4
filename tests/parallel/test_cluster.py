"""Forests on a dask.distributed cluster: the local model, the data sent once, faults survived.

Every test runs a ``LocalCluster`` of two single-threaded worker processes, the set-up
of the cluster issue's acceptance; the models are compared bitwise with the default
(threads) fit.
"""

import contextlib
import os
import signal
import threading
import time

import joblib
import numpy as np
import pytest

from forestrank import BROOF, RFHybridRanker, RFListRanker, RFPointRanker

distributed = pytest.importorskip("distributed", reason="the dask backend needs forestrank[dask]")

from cluster_helpers import assert_same_trees, forest_trees  # noqa: E402

pytestmark = pytest.mark.slow  # a LocalCluster of worker processes: run after the quick suite (.ci/run)

ESTIMATORS = {
    "RF-point": lambda: RFPointRanker(n_estimators=12, random_state=0),
    "RF-list": lambda: RFListRanker(n_estimators=4, max_depth=6, random_state=0),
    "RF-hybrid": lambda: RFHybridRanker(n_estimators=4, listwise_depth=2, random_state=0),
    "BROOF": lambda: BROOF(n_estimators=3, n_trees=4, random_state=0),
}


@pytest.mark.parametrize("name", ESTIMATORS)
def test_a_forest_grown_on_the_cluster_is_the_local_forest(name, cluster_data, dask_client, monkeypatch):
    X, y, qid = cluster_data
    reference = ESTIMATORS[name]().fit(X, y, qid=qid)
    scattered, submitted = [], []
    monkeypatch.setattr(dask_client, "scatter", _recording(dask_client.scatter, scattered))
    monkeypatch.setattr(dask_client, "submit", _recording(dask_client.submit, submitted))
    with joblib.parallel_config(backend="dask"):
        model = ESTIMATORS[name]().fit(X, y, qid=qid)
    assert_same_trees(model, reference)
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))
    # The binned matrix travels once per fit (BROOF's rounds share it), the per-row
    # arrays once per forest, and each task grows a batch of trees.
    n_forests = len(reference.estimators_) if name == "BROOF" else 1
    assert len(scattered) == 1 + n_forests
    binned = [args[0][0] for args, _ in scattered if isinstance(args[0][0], np.ndarray)]
    assert len(binned) == 1 and binned[0].dtype == np.uint8 and binned[0].shape == X.shape
    assert len(submitted) == n_forests * min(len(forest_trees(reference)) // n_forests, 2 * 2)


def _recording(method, calls):
    def record(*args, **kwargs):
        calls.append((args, kwargs))
        return method(*args, **kwargs)

    return record


def test_a_worker_killed_during_the_fit_costs_a_retry_not_a_tree(cluster_data, dask_client):
    X, y, qid = cluster_data
    make = lambda: RFListRanker(n_estimators=16, max_queries_per_split=None, ndcg_k=None, random_state=0)  # noqa: E731
    reference = make().fit(X, y, qid=qid)
    pids = dask_client.run(os.getpid)
    outcome = {}

    def fit():
        with joblib.parallel_config(backend="dask"):
            outcome["model"] = make().fit(X, y, qid=qid)

    fitting = threading.Thread(target=fit)
    fitting.start()
    victim = None
    deadline = time.monotonic() + 60
    while victim is None and time.monotonic() < deadline:
        busy = [address for address, keys in dask_client.processing().items() if any("grow_batch" in k for k in keys)]
        victim = busy[0] if busy else None
        time.sleep(0.01)
    assert victim is not None, "no batch of trees was seen running"
    os.kill(pids[victim], signal.SIGKILL)
    assert fitting.is_alive(), "the fit ended before the worker was killed: make its trees slower"
    fitting.join(timeout=120)
    assert not fitting.is_alive()
    assert_same_trees(outcome["model"], reference)
    np.testing.assert_array_equal(outcome["model"].predict(X), reference.predict(X))
    dask_client.wait_for_workers(2, timeout=60)
    assert pids[victim] not in dask_client.run(os.getpid).values()  # the nanny started a new worker


@pytest.mark.parametrize("when", ["before", "during"])
def test_a_scheduler_that_went_away_ends_the_fit_with_a_clear_error(when, cluster_data):
    X, y, qid = cluster_data
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0")
    with distributed.Client(cluster, timeout="5s") as client, joblib.parallel_config(backend="dask"):
        if when == "before":
            cluster.close()
        else:
            threading.Thread(target=_close_when_busy, args=(cluster, client)).start()
        with pytest.raises(ConnectionError, match="dask scheduler"):
            RFListRanker(n_estimators=400, ndcg_k=None, max_queries_per_split=None, random_state=0).fit(X, y, qid=qid)
    with contextlib.suppress(TimeoutError):  # its worker keeps looking for the scheduler; no need to wait
        cluster.close(timeout=2)


def _close_when_busy(cluster, client):
    """Close the scheduler once a batch of trees runs."""
    deadline = time.monotonic() + 60
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.01)
    cluster.sync(cluster.scheduler.close)


def test_rebalance_moves_to_a_busy_worker_wait_for_it(dask_client):
    """The receiving worker's one thread is busy while the other, holding the results,
    is idle: Dask's work stealing would hand it a copy free to run anywhere, undoing the
    move. The copies wait for their worker."""
    first, second, values, futures = _results_on_the_first_worker(dask_client)
    with _busy(dask_client, second) as release:
        moving = _in_thread(_rebalance, dask_client, futures, [len(value) for value in values])
        time.sleep(2)  # the scheduler tries to steal every 100 ms
        release()
        moving.join(60)
    assert not moving.is_alive()
    where = dask_client.who_has(moving.result)
    loads = {first: 0, second: 0}
    for future, value in zip(moving.result, values):
        (holder,) = where[future.key]
        loads[holder] += len(value)
    assert loads == {first: 500, second: 500}


def test_rebalance_moves_to_a_worker_gone_go_to_another():
    """The receiving worker dies before its copies run (the nanny restarts it at another
    address): ``rebalance`` copies them to a worker still there and returns the results."""
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster) as client,
    ):
        first, second, values, futures = _results_on_the_first_worker(client)
        with _busy(client, second):
            moving = _in_thread(_rebalance, client, futures, [len(value) for value in values])
            _until_processing(client, second, 3)  # the blocking task and the two copies
            assert len(client.processing()[second]) == 3
            client.run(lambda: os._exit(1), workers=[second], on_error="ignore")
            moving.join(60)
        assert not moving.is_alive()
        assert all(future.status == "finished" for future in moving.result)
        for result, value in zip(client.gather(moving.result), values):
            np.testing.assert_array_equal(result, value)
        assert second not in {holder for holders in client.who_has(moving.result).values() for holder in holders}


def test_rebalance_moves_a_cancelled_copy_again(dask_client):
    """The scheduler may drop a copy bound to a worker that dies ("already forgotten"):
    here the copies queued on the busy receiver are cancelled. ``rebalance`` copies
    them again and returns every result."""
    first, second, values, futures = _results_on_the_first_worker(dask_client)
    with _busy(dask_client, second) as release:
        moving = _in_thread(_rebalance, dask_client, futures, [len(value) for value in values])
        _until_processing(dask_client, second, 3)  # the blocking task and the two copies
        copies = [key for key in dask_client.processing()[second] if str(key).startswith("_same-")]
        assert len(copies) == 2
        dask_client.cancel([distributed.Future(key, dask_client) for key in copies])
        release()
        moving.join(60)
    assert not moving.is_alive()
    assert all(future.status == "finished" for future in moving.result)
    for result, value in zip(dask_client.gather(moving.result), values):
        np.testing.assert_array_equal(result, value)


def _results_on_the_first_worker(client):
    """Four results of 400, 300, 200 and 100 rows, all held by the first of two workers:
    (first, second, the values, their futures)."""
    first, second = sorted(client.scheduler_info()["workers"])
    values = [np.full(size, index, dtype=np.int64) for index, size in enumerate([400, 300, 200, 100])]
    futures = client.scatter(values, workers=[first], hash=False)
    distributed.wait(futures)
    return first, second, values, futures


def _until_processing(client, worker, count):
    """Wait (up to 30 s) until ``worker`` is processing ``count`` tasks or more."""
    deadline = time.monotonic() + 30
    while len(client.processing().get(worker, ())) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def _rebalance(client, futures, sizes):
    from forestrank.parallel._cluster import rebalance

    return rebalance(client, futures, sizes)


def _in_thread(function, *args):
    """``function(*args)`` started in a thread whose ``result`` attribute receives its value."""
    thread = threading.Thread(target=lambda: setattr(thread, "result", function(*args)), daemon=True)
    thread.start()
    return thread


@contextlib.contextmanager
def _busy(client, worker):
    """The single-threaded ``worker`` runs a task that waits until the yielded function is
    called or the block ends."""
    name = f"busy-{worker}-{time.monotonic()}"
    event = distributed.Event(name, client=client)
    blocker = client.submit(lambda name: distributed.Event(name).wait(60), name, workers=[worker], pure=False)
    _until_processing(client, worker, 1)
    try:
        yield event.set
    finally:
        event.set()
        blocker.cancel()


@pytest.mark.parametrize(
    ("sizes", "holders", "threads", "placement"),
    [
        ([150] * 8, "aaaaabbb", {"a": 1, "b": 1}, "aaaabbbb"),  # the partition next to b's moves: two runs
        ([150] * 8, "aaaaaaaa", {"a": 1, "b": 1, "c": 1}, "ccaaabbb"),  # three runs
        ([10, 500, 20], "aab", {"a": 1, "b": 1}, "bab"),  # moving the big one cannot help
        ([100, 100], "ab", {"a": 1, "b": 1, "c": 1}, "ab"),  # nothing to gain: nothing moves
        ([100] * 6, "aaaaaa", {"a": 1, "b": 2}, "aabbbb"),  # rows per thread: two threads take twice the rows
    ],
)
def test_balanced_placement_evens_rows_per_thread_and_keeps_runs(sizes, holders, threads, placement):
    from forestrank.parallel._cluster import balanced_placement

    assert "".join(balanced_placement(sizes, list(holders), threads)) == placement


def test_rebalance_moves_results_to_the_idle_worker_and_keeps_their_order(dask_client):
    """Four results on one worker: two move to the other, the futures keep their order and
    values, and the results are in place when ``rebalance`` returns."""
    import distributed

    from forestrank.parallel._cluster import rebalance

    first, second = sorted(dask_client.scheduler_info()["workers"])
    values = [np.full(size, index, dtype=np.int64) for index, size in enumerate([400, 300, 200, 100])]
    futures = dask_client.scatter(values, workers=[first], hash=False)  # keys of their own (test_cluster_exchange)
    distributed.wait(futures)
    moved = rebalance(dask_client, futures, [len(value) for value in values])
    where = dask_client.who_has(moved)
    loads = {first: 0, second: 0}
    for future, value in zip(moved, values):
        assert future.status == "finished"
        (holder,) = where[future.key]
        loads[holder] += len(value)
    assert loads == {first: 500, second: 500}
    for result, value in zip(dask_client.gather(moved), values):
        np.testing.assert_array_equal(result, value)
    released = {future.key for future in futures} - {future.key for future in moved}
    del futures
    # The scheduler releases a forgotten key asynchronously, later when the machine is busy.
    deadline = time.monotonic() + 30
    while released & set(dask_client.has_what()[first]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not released & set(dask_client.has_what()[first])
