"""Parallel work under every joblib backend: the same model as the default threads, or an error.

Shared-memory kernels (binning rows, summing trees over rows) must run in threads
whatever backend the caller configured; independent trees may run anywhere, and the
model must not depend on where.
"""

import os
import subprocess
import sys
import threading

import joblib
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from forestrank import BROOF, AveragedRanker, LambdaMART, RFHybridRanker, RFListRanker, RFPointRanker, make_ranking
from forestrank._tree._binning import BinMapper
from forestrank.parallel._local import row_ranges, run_in_threads, thread_count

PROCESS_BACKENDS = ["loky", "multiprocessing"]
LOCAL_BACKENDS = ["threading", "sequential", *PROCESS_BACKENDS]


@given(
    n_rows=st.integers(0, 5000),
    n_jobs=st.integers(1, 8),
    min_rows=st.integers(1, 600),
    align=st.sampled_from([1, 16, 256]),
)
def test_row_ranges_tile_the_rows_in_aligned_ranges(n_rows, n_jobs, min_rows, align):
    ranges = row_ranges(n_rows, n_jobs, min_rows, align)
    assert 1 <= len(ranges) <= max(1, min(n_jobs, n_rows // min_rows))
    assert ranges[0][0] == 0 and ranges[-1][1] == n_rows
    assert all(stop == start for (_, stop), (start, _) in zip(ranges, ranges[1:]))  # contiguous, no overlap
    assert all(start % align == 0 and start <= stop for start, stop in ranges)


@pytest.mark.parametrize("backend", LOCAL_BACKENDS)
def test_one_task_or_one_thread_runs_in_the_calling_thread_and_more_keep_their_order(backend):
    """joblib's round trip polls for results every 10 ms: work that one thread does runs
    without it, under any configured backend; threaded results come back in task order."""
    caller = threading.get_ident()
    with joblib.parallel_config(backend=backend):
        assert run_in_threads([joblib.delayed(threading.get_ident)()], 4) == [caller]
        assert run_in_threads((joblib.delayed(threading.get_ident)() for _ in range(3)), 1) == [caller] * 3
        assert run_in_threads((joblib.delayed(pow)(i, 2) for i in range(7)), 2) == [i * i for i in range(7)]


@pytest.mark.parametrize("backend", LOCAL_BACKENDS)
def test_thread_count_follows_n_jobs_and_the_configured_n_jobs_not_the_backend(backend, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with joblib.parallel_config(backend=backend):
        assert [thread_count(n) for n in (1, 2)] == [1, 2]
        assert thread_count(None) == thread_count(-1) == joblib.cpu_count()  # None: every core
    with joblib.parallel_config(backend=backend, n_jobs=1):
        assert thread_count(None) == 1
    with joblib.parallel_config(backend=backend, n_jobs=2):
        assert thread_count(None) == min(2, joblib.cpu_count())
    with joblib.parallel_config(backend=backend, n_jobs=4096):  # a limit, not a count: every core at most
        assert thread_count(None) == joblib.cpu_count()


@pytest.mark.parametrize("limit, expected", [("1", 1), ("3", 3), ("", None), ("0", None), ("many", None), ("4096", None)])
def test_n_jobs_none_honours_the_thread_limit_of_joblibs_workers(limit, expected, monkeypatch):
    """joblib's process workers get OMP_NUM_THREADS (their share of the cores); n_jobs=None keeps to it,
    an explicit n_jobs does not, and a missing or unusable value means every core, as does a
    limit above the cores (which ran a forest's trees on more threads than cores, and changed
    the model where the threads set the feature-cost waves)."""
    monkeypatch.setenv("OMP_NUM_THREADS", limit)
    assert thread_count(None) == (joblib.cpu_count() if expected is None else min(expected, joblib.cpu_count()))
    assert thread_count(2) == 2


def test_n_jobs_none_runs_boosting_kernels_on_every_core(monkeypatch):
    """The boosting fit's numba thread count under n_jobs=None is every core numba has (and is restored)."""
    import numba

    from forestrank.parallel._local import numba_threads

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = numba.get_num_threads()
    with numba_threads(1):
        assert numba.get_num_threads() == 1
    with numba_threads(None):
        assert numba.get_num_threads() == min(joblib.cpu_count(), numba.config.NUMBA_NUM_THREADS)
    assert numba.get_num_threads() == before


@pytest.fixture(scope="module")
def data():
    # Enough rows for binning and prediction to split them over two threads.
    return make_ranking(n_queries=300, docs_per_query=30, n_features=10, random_state=0)


ESTIMATORS = {
    "RF-point": lambda: RFPointRanker(n_estimators=6, random_state=0, n_jobs=2),
    "RF-list": lambda: RFListRanker(n_estimators=3, max_depth=6, random_state=0, n_jobs=2),
    "RF-hybrid": lambda: RFHybridRanker(n_estimators=3, listwise_depth=2, max_depth=8, random_state=0, n_jobs=2),
    "BROOF": lambda: BROOF(n_estimators=2, n_trees=4, random_state=0, n_jobs=2),
    "LambdaMART": lambda: LambdaMART(n_estimators=5, random_state=0, n_jobs=2),
}


@pytest.fixture(scope="module")
def reference_predictions(data):
    """Each estimator's training-set prediction under joblib's default (threads)."""
    X, y, qid = data
    return {name: make().fit(X, y, qid=qid).predict(X) for name, make in ESTIMATORS.items()}


def _assert_same_models(backend, data, reference_predictions):
    X, y, qid = data
    with joblib.parallel_config(backend=backend):
        binned = BinMapper(255, random_state=0, n_jobs=2).fit(X).transform(X)
        for name, make in ESTIMATORS.items():
            prediction = make().fit(X, y, qid=qid).predict(X)
            np.testing.assert_array_equal(prediction, reference_predictions[name], err_msg=f"{name} under {backend}")
    np.testing.assert_array_equal(binned, BinMapper(255, random_state=0, n_jobs=2).fit(X).transform(X))


@pytest.mark.slow  # processes or a subprocess that compile anew: run after the quick suite
@pytest.mark.parametrize("backend", LOCAL_BACKENDS)
def test_every_local_backend_fits_and_predicts_the_default_model(backend, data, reference_predictions):
    _assert_same_models(backend, data, reference_predictions)


@pytest.mark.slow  # processes or a subprocess that compile anew: run after the quick suite
def test_the_dask_backend_fits_and_predicts_the_default_model(data, reference_predictions):
    distributed = pytest.importorskip("distributed", reason="the dask backend needs forestrank[dask]")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster),
    ):
        _assert_same_models("dask", data, reference_predictions)


_TWO_THREADS = """
import threading
import numpy as np
from forestrank import LambdaMART, PLRank, make_ranking
X, y, q = make_ranking(60, (5, 20), 6, random_state=0)
models = [LambdaMART(n_estimators=6, n_jobs=1, random_state=0), PLRank(n_estimators=6, n_jobs=2, random_state=0)]
threaded = [None, None]
def fit(i):
    threaded[i] = models[i].fit(X, y, qid=q).predict(X)
threads = [threading.Thread(target=fit, args=(i,)) for i in range(2)]
[thread.start() for thread in threads]
[thread.join() for thread in threads]
for model, scores in zip(models, threaded):
    assert np.array_equal(model.fit(X, y, qid=q).predict(X), scores)
import numba
print(numba.threading_layer())
"""


@pytest.mark.slow  # processes or a subprocess that compile anew: run after the quick suite
@pytest.mark.parametrize("layer", ["workqueue", "default"])
def test_boosting_fits_from_two_threads_under_any_threading_layer(layer):
    """Two fits in two threads aborted the process (SIGABRT) under numba's workqueue
    layer, which is not threadsafe: there the fits take turns."""
    environment = {**os.environ, "NUMBA_THREADING_LAYER": layer}
    result = subprocess.run([sys.executable, "-c", _TWO_THREADS], capture_output=True, text=True, env=environment)
    assert result.returncode == 0, result.stderr[-2000:]
    if layer == "workqueue":
        assert result.stdout.strip() == "workqueue"


def test_a_thread_waiting_on_others_releases_the_workqueue_lock(monkeypatch):
    """A fit's driver on an in-process Dask cluster held the workqueue layer's lock through
    each round, while the workers answering it, threads of the same process, waited for
    the lock: the fit hung for ever."""
    from forestrank.parallel import _local

    monkeypatch.setattr(_local, "_threading_layer_is_threadsafe", lambda: False)
    entered = threading.Event()

    def worker():
        with _local.numba_threads(1):
            entered.set()

    with _local.numba_threads(1):
        thread = threading.Thread(target=worker)
        with _local.numba_threads_released():
            thread.start()
            assert entered.wait(10)
            thread.join(10)
        assert not _local._WORKQUEUE_LOCK.acquire(blocking=False)  # taken again
    assert _local._WORKQUEUE_LOCK.acquire(blocking=False)
    _local._WORKQUEUE_LOCK.release()
    with _local.numba_threads_released():  # outside numba_threads it has nothing to release
        assert _local._WORKQUEUE_LOCK.acquire(blocking=False)
        _local._WORKQUEUE_LOCK.release()


_IN_PROCESS_CLUSTER = """
import dask.array as da
from distributed import Client, LocalCluster
from forestrank import LambdaMART, make_ranking
X, y, q = make_ranking(n_queries=60, docs_per_query=(10, 30), n_features=8, random_state=0)
if __name__ == "__main__":
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, Client(cluster):
        parts = [da.from_array(values, chunks=len(q)) for values in (X, y, q)]
        model = LambdaMART(n_estimators=3, random_state=0).fit(*parts[:2], qid=parts[2])
        print(len(model.trees_))
"""


@pytest.mark.slow  # a subprocess that compiles anew, and a cluster: run after the quick suite
def test_boosting_on_an_in_process_cluster_under_the_workqueue_layer(tmp_path):
    """The driver and the in-process workers took turns at the workqueue layer's lock, the
    driver holding it while it waited for them: the fit hung."""
    pytest.importorskip("distributed")
    script = tmp_path / "fit.py"
    script.write_text(_IN_PROCESS_CLUSTER)
    environment = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue"}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=environment, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "3"


_FORKED = """
import multiprocessing
import numba
from forestrank import LambdaMART, make_ranking
from forestrank.parallel import _local
X, y, q = make_ranking(30, 10, 4, random_state=0)
LambdaMART(n_estimators=2, n_jobs=1, random_state=0).fit(X, y, qid=q)
def child(pipe):
    try:
        LambdaMART(n_estimators=2, n_jobs=1, random_state=0).fit(X, y, qid=q)
        pipe.send("fitted")
    except RuntimeError as error:
        pipe.send(str(error))
def child_takes_the_lock(pipe):
    pipe.send(_local._WORKQUEUE_LOCK.acquire(timeout=10))
def grandchild(pipe, n_jobs):
    try:
        LambdaMART(n_estimators=2, n_jobs=n_jobs, random_state=0).fit(X, y, qid=q)
        pipe.send("fitted")
    except RuntimeError as error:
        pipe.send(str(error))
def child_forks(pipe):  # a child that fits nothing forks grandchildren of one and of two threads
    answers = []
    for n_jobs in (1, 2):
        ours, theirs = context.Pipe()
        process = context.Process(target=grandchild, args=(theirs, n_jobs))
        process.start()
        process.join(60)
        answers.append(ours.recv() if ours.poll() else None)
    pipe.send(answers)
context = multiprocessing.get_context("fork")
for target in (child, child_takes_the_lock, child_forks):
    ours, theirs = context.Pipe()
    with _local._WORKQUEUE_LOCK:  # as a boosting fit of another thread holds it at the fork
        process = context.Process(target=target, args=(theirs,))
        process.start()
    process.join(60)
    print(process.exitcode, ours.recv() if ours.poll() else None)
from numba.np.ufunc import omppool
print(numba.threading_layer(), omppool.openmp_vendor if numba.threading_layer() == "omp" else "")
"""


@pytest.mark.slow  # a subprocess that compiles anew: run after the quick suite
@pytest.mark.skipif(sys.platform != "linux", reason="forks a process")
def test_a_child_forked_after_boosting_fails_by_name_and_takes_the_lock():
    """A boosting fit in a child forked after one under GNU OpenMP was killed by OpenMP
    (SIGTERM: a multiprocessing pool waited for ever): it raises a RuntimeError that says
    what to do, as does a grandchild's of two threads, which hung (one thread runs). A
    child forked while a thread held the workqueue lock hung on it."""
    result = subprocess.run([sys.executable, "-c", _FORKED], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    fitted, locked, grandchildren, layer = result.stdout.strip().splitlines()
    assert locked == "0 True"
    if layer == "omp GNU":
        assert fitted.startswith("0 this process was forked from one whose parallel kernels ran on GNU OpenMP")
        assert "'spawn' or 'forkserver'" in fitted and "NUMBA_THREADING_LAYER=forksafe" in fitted
        # a grandchild is not terminated; its OpenMP threads hang, so only one thread runs
        assert grandchildren.startswith("0 ['fitted', \"this process was forked from a descendant of one whose")
    else:
        assert fitted == "0 fitted" and grandchildren == "0 ['fitted', 'fitted']"


@pytest.mark.parametrize("make", [RFPointRanker, LambdaMART, BROOF, lambda **params: AveragedRanker(LambdaMART(), **params)])
def test_n_jobs_zero_is_refused_by_name_whatever_the_size(make):
    """joblib gives 0 no meaning: it was accepted, and fit or predict failed with joblib's
    error only once the work was large enough to reach joblib."""
    X, y, qid = make_ranking(n_queries=5, docs_per_query=4, n_features=3, random_state=0)
    message = r"The 'n_jobs' parameter of \w+ must be an int in the range \(-inf, -1\], an int in the range \[1, inf\)"
    with pytest.raises(ValueError, match=message):
        make(n_jobs=0).fit(X, y, qid=qid)
