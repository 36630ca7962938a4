"""joblib for the package: threads for shared-memory kernels, the user's backend for trees.

Two kinds of parallel work, under whatever ``joblib.parallel_config`` the caller set:

- Kernels that write into one output array from several tasks (binning rows,
  summing trees over rows) only work where the tasks share the process's memory.
  ``prefer="threads"`` is a hint that a configured backend (loky, multiprocessing,
  dask) overrides, and the writes then land in a worker's copy of the array while
  the caller's array stays as allocated: a silently wrong result. They run through
  :func:`run_in_threads` (``require="sharedmem"``), which joblib always honours.
- Independent tasks that return their result (trees) follow the configured backend,
  so a forest can grow its trees in other processes or on a cluster
  (:func:`ordered_parallel`).
"""

import contextlib
import multiprocessing
import os
import threading
from collections.abc import Iterable, Iterator
from numbers import Integral

import joblib.parallel
import numba
import numpy as np
from joblib import Parallel, cpu_count, effective_n_jobs, parallel_config
from joblib.parallel import get_active_backend
from sklearn.utils._param_validation import Interval
from sklearn.utils.parallel import Parallel as SklearnParallel


# An estimator's n_jobs as scikit-learn's parameter validation takes it: joblib's meanings,
# where 0 has none (joblib refuses it, and only once a fit or a predict is large enough
# to reach joblib).
N_JOBS_CONSTRAINT = [Interval(Integral, None, -1, closed="right"), Interval(Integral, 1, None, closed="left"), None]


def resolve_n_jobs(n_jobs: int | None) -> int:
    """What an estimator's ``n_jobs`` asks for, in joblib's terms (-1: every core).

    ``None`` means every core, as scikit-learn's histogram gradient boosting, LightGBM
    and XGBoost use by default, with two limits a user or a caller sets: the
    ``n_jobs`` of ``joblib.parallel_config``, and ``OMP_NUM_THREADS``, which joblib
    sets in its process workers (a grid search's fits then share the cores instead of
    each taking all of them) and which OpenMP programs honour. A limit above the number
    of cores leaves every core (boosting's threads are numba's, at most one a core).
    """
    if n_jobs is not None:
        return n_jobs
    _, configured = get_active_backend()
    if configured is None:
        limit = os.environ.get("OMP_NUM_THREADS", "")
        configured = int(limit) if limit.isdigit() and int(limit) > 0 else -1
    return min(configured, cpu_count()) if configured > 0 else configured


def thread_count(n_jobs: int | None) -> int:
    """Threads a shared-memory ``Parallel(n_jobs)`` runs (``resolve_n_jobs``).

    Negative values count back from the number of cores (joblib's convention), and a
    configured process or cluster backend does not change the count.
    """
    with parallel_config(backend="threading"):
        return effective_n_jobs(resolve_n_jobs(n_jobs))


def run_in_threads(tasks: Iterable, n_jobs: int | None) -> list:
    """Run joblib ``delayed`` tasks in ``thread_count(n_jobs)`` threads of this process, whatever the backend.

    One task or one thread runs in the calling thread: joblib's round trip polls for
    results with a 10 ms sleep, which a small fit would pay at every call. One task runs
    without counting the threads (joblib's configuration lookup).
    """
    tasks = list(tasks)
    n_threads = 1 if len(tasks) <= 1 else thread_count(n_jobs)
    if n_threads == 1:
        return [function(*arguments, **keywords) for function, arguments, keywords in tasks]
    return Parallel(n_jobs=n_threads, require="sharedmem")(tasks)


def ordered_parallel(n_jobs: int | None) -> Parallel:
    """A ``Parallel`` over independent tasks that follows the configured backend (threads by default).

    Its results come in task order, as a generator where the backend can stream them
    (so progress can be reported as they arrive) and as a list where it cannot
    (joblib's multiprocessing backend).
    """
    backend, _ = get_active_backend(prefer="threads")
    return_as = "generator" if getattr(backend, "supports_return_generator", False) else "list"
    return Parallel(n_jobs=resolve_n_jobs(n_jobs), prefer="threads", return_as=return_as)


def row_ranges(n_rows: int, n_jobs: int | None, min_rows: int, align: int = 1) -> list[tuple[int, int]]:
    """Contiguous ``(start, stop)`` ranges covering ``range(n_rows)``, one per thread.

    At most ``thread_count(n_jobs)`` ranges, each of at least ``min_rows`` rows
    (fewer rows give one range: a thread costs more than it saves); every start is a
    multiple of ``align``, so kernels that work in blocks of rows see whole blocks.
    """
    if n_rows < 2 * min_rows:  # one range whatever the threads: spare counting them
        return [(0, n_rows)]
    n_ranges = min(thread_count(n_jobs), n_rows // min_rows)
    bounds = np.linspace(0, n_rows // align, n_ranges + 1).astype(np.int64) * align
    bounds[-1] = n_rows
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def process_parallel(n_jobs: int | None) -> SklearnParallel:
    """A ``Parallel`` over whole fits whose kernels may be numba-parallel (``prange``):
    scikit-learn's, which hands its workers the caller's configuration and warnings
    filters (its tasks are made with ``sklearn.utils.parallel.delayed``).

    Processes (loky by default, or the configured process backend): numba's workqueue
    threading layer aborts when parallel kernels run in several threads of one process,
    so under a thread backend, or a cluster backend whose workers may run several tasks
    in threads, the fits run one after another. So they do under joblib's
    multiprocessing backend once numba's OpenMP layer has run a kernel here: that
    backend forks, and GNU OpenMP terminates a child forked from a process using it.
    """
    backend, _ = get_active_backend(prefer="processes")
    name = type(backend).__name__
    one_after_another = (
        getattr(backend, "uses_threads", False)
        or name == "DaskDistributedBackend"
        or (name == "MultiprocessingBackend" and _forks_after_openmp())
    )
    if one_after_another:
        return SklearnParallel(n_jobs=1)
    return SklearnParallel(n_jobs=n_jobs, prefer="processes")


def _forks_after_openmp() -> bool:
    """Whether a new process would be forked from this one after numba's OpenMP threads ran."""
    context = joblib.parallel.DEFAULT_MP_CONTEXT or multiprocessing.get_context()  # JOBLIB_START_METHOD first
    return _ran_gnu_openmp() and context.get_start_method() == "fork"


def _ran_gnu_openmp() -> bool:
    """Whether numba's parallel kernels have run here on GNU OpenMP, which terminates a
    child process forked after them as soon as the child launches one (numba's
    "Threading layer" documentation)."""
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet
        return False
    if layer != "omp":
        return False
    from numba.np.ufunc import omppool  # loaded with the layer

    return omppool.openmp_vendor == "GNU"


# Held by a boosting fit's parallel kernels under numba's workqueue threading layer.
_WORKQUEUE_LOCK = threading.Lock()
# The workqueue lock the current thread holds in numba_threads, if any (numba_threads_released).
_HELD = threading.local()
# The process whose kernels ran on GNU OpenMP before this one was forked from it or from
# a descendant of it (_after_fork); None when this process's kernels may run.
_OPENMP_ANCESTOR: int | None = None


def _after_fork() -> None:
    """In a forked child: a new workqueue lock (a thread of the parent may have held the
    old one at the fork, and no thread here would release it), and which ancestor ran GNU
    OpenMP, if any (``numba_threads``)."""
    global _WORKQUEUE_LOCK, _OPENMP_ANCESTOR
    _WORKQUEUE_LOCK = threading.Lock()
    if _OPENMP_ANCESTOR is None and _ran_gnu_openmp():
        _OPENMP_ANCESTOR = os.getppid()


def _check_not_forked_after_openmp(n_threads: int) -> None:
    """A RuntimeError where GNU OpenMP would stop this process at its first kernel: a child
    forked from the process that ran it is terminated (numba checks the parent), and a
    later descendant's OpenMP threads wait for ever, unless the kernel runs on one."""
    if _OPENMP_ANCESTOR is None:
        return
    layer = "GNU OpenMP (numba's 'omp' threading layer)"
    if os.getppid() == _OPENMP_ANCESTOR:
        fate = f"forked from one whose parallel kernels ran on {layer}, and OpenMP terminates such a child as soon as it runs one"
    elif n_threads > 1:
        fate = f"forked from a descendant of one whose parallel kernels ran on {layer}, where OpenMP's threads wait for ever (n_jobs=1 runs)"
    else:
        return
    raise RuntimeError(
        f"this process was {fate}. Start worker processes with the 'spawn' or 'forkserver' method "
        "(multiprocessing.get_context('spawn'); joblib's default loky backend does), or set "
        "NUMBA_THREADING_LAYER=forksafe in the environment before Python starts."
    )


os.register_at_fork(after_in_child=_after_fork)


def _threading_layer_is_threadsafe() -> bool:
    """Whether numba's threading layer may launch parallel kernels from two threads at once.

    The tbb and omp layers may; workqueue, which numba falls back to where neither
    library is found (or when ``NUMBA_THREADING_LAYER=workqueue``), aborts the process
    (numba's "Threading layer" documentation). The layer is chosen at the process's
    first parallel launch: before it, the answer is no, so that first fits are safe.
    """
    try:
        return numba.threading_layer() != "workqueue"
    except ValueError:  # no parallel kernel has run yet
        return False


@contextlib.contextmanager
def numba_threads(n_jobs: int | None) -> Iterator[None]:
    """Run the block, which launches numba-parallel kernels, with numba's thread count set
    from ``n_jobs`` (restored after); one block at a time in the process where the
    threading layer is not threadsafe (boosting fits from several threads take turns).
    A RuntimeError in a process forked after GNU OpenMP ran, which OpenMP would stop at
    the block's first kernel (``_check_not_forked_after_openmp``)."""
    n_threads = max(1, min(thread_count(n_jobs), numba.config.NUMBA_NUM_THREADS))
    _check_not_forked_after_openmp(n_threads)
    lock = None if _threading_layer_is_threadsafe() else _WORKQUEUE_LOCK
    with lock or contextlib.nullcontext():
        held, _HELD.lock = getattr(_HELD, "lock", None), lock
        previous = numba.get_num_threads()
        numba.set_num_threads(n_threads)
        try:
            yield
        finally:
            numba.set_num_threads(previous)
            _HELD.lock = held


@contextlib.contextmanager
def numba_threads_released() -> Iterator[None]:
    """Inside ``numba_threads``, a block that waits on other threads of this process which
    launch kernels themselves (the Dask workers of an in-process cluster answering a
    fit's rounds): the workqueue lock this thread holds is released for the block and
    taken again after it, where holding it through the wait would deadlock."""
    lock = getattr(_HELD, "lock", None)
    if lock is None:
        yield
        return
    lock.release()
    try:
        yield
    finally:
        lock.acquire()
