"""Forest trees on a dask.distributed cluster, under ``joblib.parallel_config(backend="dask")``.

A forest's trees are independent tasks on data that every tree reads whole. joblib's
own dask backend would pickle the bound method that grows a tree, with its estimator
and arguments, into every task; here the cluster receives the data once:

- the binned matrix and its bin tables are scattered to every worker once per array
  (``scatter_once``: BROOF's rounds share one binned matrix, so it travels once per
  fit, not once per round);
- the per-row arrays of one forest (targets, weights, query index, listwise inputs)
  and the estimator that draws each tree's sample are scattered once per forest;
- each task grows a contiguous batch of trees in one reused set of tree buffers, and
  returns the finished trees (a few arrays each);
- the trees are put back in index order, so the model is the local fit's: a tree's
  random state depends on ``random_state`` and its index only (``docs/design.md``,
  "Reproducibility").

A worker that dies mid-fit loses its running tasks, not the data: every worker holds
a replica, the scheduler runs the lost batches again elsewhere (or on the restarted
worker) and the batch, a pure function of the data and the tree indices, returns the
same trees. A scheduler that goes away ends the fit with a ``ConnectionError``.

Forest trees are grown on one thread (``TreeParams.n_threads`` None: their builders
compile no parallel kernel), so a task never enters a ``parallel=True`` kernel: the parallel histogram fill and the
gradient kernels belong to boosting, which runs on the caller's machine.
"""

import sys
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager

import numpy as np
from joblib.parallel import get_active_backend

# Tasks per worker thread: enough for the last batches to balance the load, few enough
# that scheduling stays small against growing a tree.
BATCHES_PER_THREAD = 2
# How often ``rebalance`` looks for a worker gone before its copy ran.
_LOST_TARGET_CHECK_SECONDS = 1.0

_scattered: dict = {}


def dask_client() -> object | None:
    """The ``distributed.Client`` of the active joblib backend, or None for any other backend."""
    dask_backend = sys.modules.get("joblib._dask")  # imported by joblib only when the dask backend is used
    if dask_backend is None:
        return None
    backend, _ = get_active_backend()
    return backend.client if isinstance(backend, dask_backend.DaskDistributedBackend) else None


def running_client() -> object | None:
    """The current ``distributed.Client``, or None when dask.distributed is not installed or
    no client runs (a Dask collection is then computed by its own scheduler)."""
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None


def is_dask_collection(value: object) -> bool:
    """Whether ``value`` is a Dask array, DataFrame or Series (dask is imported only if it is one)."""
    if not type(value).__module__.startswith("dask"):
        return False
    import dask

    return dask.is_dask_collection(value)


def map_predict(
    estimator: object, X: object, qid: object = None, early_exit: object = None, *, method: str = "predict"
) -> object:
    """``estimator.predict`` (or another ``method`` of one value per row) mapped over the
    row partitions of a Dask array or DataFrame (lazy).

    Returns a Dask array of shape (n_samples,) for an array (rechunked to one block of
    columns), a Dask Series with X's index for a DataFrame; an empty partition gives
    no scores. Early exits rank documents within their query across the whole
    collection, so they are refused here (``qid`` with them).
    """
    if early_exit is not None or qid is not None:
        raise ValueError(
            "early_exit (and qid) apply to in-memory X: compute the Dask collection first, or predict without them."
        )
    check_two_dimensional(X)

    def scores(block: object) -> np.ndarray:
        return getattr(estimator, method)(block) if block.shape[0] else np.zeros(0)  # len() of a scipy.sparse block fails

    if hasattr(X, "chunks"):  # a Dask array
        return X.rechunk({1: -1}).map_blocks(scores, drop_axis=1, dtype=np.float64)
    import pandas as pd

    return X.map_partitions(lambda part: pd.Series(scores(part), index=part.index, dtype=np.float64), meta=(None, "f8"))


def check_two_dimensional(X: object) -> None:
    """Refuse a Dask collection of features that is not 2-D (``predict``'s ``X``)."""
    if getattr(X, "ndim", None) != 2:
        raise ValueError(f"X must be a 2-D Dask array or a Dask DataFrame, got {type(X).__name__} of {X.ndim} dimension(s).")


def scatter_to_all(client: object, value: object) -> object:
    """A future of ``value`` replicated on every worker (sent once, used by many tasks)."""
    with scheduler_errors(client):
        return client.scatter([value], broadcast=True, hash=False)[0]


def scatter_once(client: object, array: object) -> object:
    """A future of ``array`` replicated on every worker of ``client``, scattered on first use.

    The future is kept while ``array`` lives (a weak reference drops it), so the same
    array passed again, for example BROOF's binned matrix in every round, is not sent
    again.
    """
    key = (id(client), id(array))
    future = _scattered.get(key)
    if future is None or future.status != "finished":
        future = client.scatter([array], broadcast=True, hash=False)[0]
        _scattered[key] = future
        weakref.finalize(array, _scattered.pop, key, None)
    return future


def grow_on_cluster(
    client: object,
    grow_batch: Callable,
    shared: dict,
    per_forest: object,
    indices: Sequence[int],
    on_tree: Callable[[int], None] | None = None,
    feature_penalty: object = None,
) -> list:
    """Grow the trees ``indices`` on the cluster of ``client``, in batches; the trees in index order.

    Parameters
    ----------
    client : distributed.Client
    grow_batch : callable
        ``grow_batch(shared, per_forest, feature_penalty, batch_indices) -> list of
        trees``, importable on the workers (a module-level function).
    shared : dict of str to ndarray
        Arrays scattered once per array (``scatter_once``); the task receives the dict
        with the arrays in it.
    per_forest : distributed.Future
        The forest's own data, already on every worker (``scatter_to_all``, once per
        forest however many waves it grows in), passed to every task.
    indices : sequence of int
        The tree indices to grow.
    on_tree : callable, optional
        Called with the number of trees finished so far, as batches complete.
    feature_penalty : ndarray of shape (n_features,) or None
        Passed to every task (the trees' cost penalty, small).

    Returns
    -------
    list of the trees of ``indices``, in order

    Raises
    ------
    ConnectionError
        The scheduler went away or the cluster has no worker.
    """
    indices = list(indices)
    if not indices:
        return []
    with scheduler_errors(client):
        shared_futures = {name: scatter_once(client, array) for name, array in shared.items()}
        count = n_batches(client, len(indices))
    tasks = [(grow_batch, (shared_futures, per_forest, feature_penalty), batch) for batch in batches(indices, count)]
    return run_batches(client, tasks, on_tree)


def n_batches(client: object, n_trees: int) -> int:
    """Tasks for ``n_trees`` trees: ``BATCHES_PER_THREAD`` per worker thread, at most one per tree."""
    n_threads = sum(client.nthreads().values())
    if n_threads == 0:
        raise NoWorkerError(f"the dask cluster of {client} has no worker to grow trees on.")
    return min(n_trees, BATCHES_PER_THREAD * n_threads)


def batches(indices: Sequence[int], count: int) -> list[list[int]]:
    """``indices`` cut into ``count`` contiguous batches whose sizes differ by at most one."""
    bounds = [len(indices) * b // count for b in range(count + 1)]
    return [list(indices[a:b]) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def run_batches(client: object, tasks: list, on_tree: Callable[[int], None] | None = None) -> list:
    """Run ``(function, arguments, indices)`` tasks, each returning the trees of its
    ``indices``; all the trees, ordered by index.

    The arguments may hold futures (the cluster resolves them on the worker that runs
    the task). ``on_tree`` is called with the number of trees finished so far. A task
    that fails raises its own error here.
    """
    from distributed import as_completed

    trees: dict = {}
    task_error = None
    with scheduler_errors(client):
        futures = [client.submit(function, *arguments, indices, pure=False) for function, arguments, indices in tasks]
        indices_of = {future.key: indices for future, (_, _, indices) in zip(futures, tasks)}
        for future in as_completed(futures):
            if future.status == "error":
                task_error = future.exception()
                break
            trees.update(zip(indices_of[future.key], future.result()))  # CancelledError when the scheduler is gone
            if on_tree is not None:
                on_tree(len(trees))
    if task_error is not None:
        raise task_error
    return [trees[index] for index in sorted(trees)]


class NoWorkerError(ConnectionError):
    """The cluster has no worker."""


def check_scheduler(client: object) -> None:
    """Raise ``ConnectionError`` if ``client`` has lost its scheduler."""
    if client.status != "running":
        raise ConnectionError(f"the dask scheduler of {client} went away or cannot be reached (client status {client.status!r}).")


@contextmanager
def scheduler_errors(client: object) -> Iterator[None]:
    """Turn the ways a lost scheduler shows itself into one ``ConnectionError``."""
    check_scheduler(client)
    try:
        yield
    except NoWorkerError:
        raise
    except (OSError, CancelledError, TimeoutError) as error:
        raise ConnectionError(
            f"the dask scheduler of {client} went away or cannot be reached while growing trees "
            f"({type(error).__name__}: {error}); the fit is incomplete."
        ) from error


def balanced_placement(sizes: Sequence[int], held_by: Sequence[str], threads: dict) -> list[str]:
    """Where each partition should live so that the largest load of a worker is small.

    A worker's load is its rows per thread. Partitions move one at a time from the most
    loaded worker to the least loaded one: the largest partition whose move leaves the
    receiver below the giver's load and lowers the sum of ``rows**2 / threads`` (so that
    the moves end), preferring among equal sizes one next to the receiver's partitions,
    then one at either end of the sequence, then one at the edge of the giver's run, so
    that consecutive partitions stay on one worker
    (quantized leaf sums take one round per run of them). A partition stays where it is
    otherwise: as little data as possible travels.

    Parameters
    ----------
    sizes : sequence of int, shape (n_partitions,)
        Each partition's rows.
    held_by : sequence of str, shape (n_partitions,)
        The worker holding each partition now.
    threads : dict of str to int
        Every worker that may hold partitions (those without any included), and its threads.

    Returns
    -------
    list of str, shape (n_partitions,)
        The worker each partition should be on.
    """
    placement = list(held_by)
    rows = {worker: 0 for worker in threads}
    for size, holder in zip(sizes, placement):
        rows[holder] += size

    def load(worker: str) -> float:
        return rows[worker] / threads[worker]

    def next_to(p: int, worker: str) -> bool:
        return any(0 <= q < len(placement) and placement[q] == worker for q in (p - 1, p + 1))

    while True:
        giver, receiver = max(rows, key=load), min(rows, key=load)
        movable = [
            p for p, holder in enumerate(placement)
            if holder == giver and sizes[p] > 0 and (rows[receiver] + sizes[p]) / threads[receiver] < load(giver)
            and (rows[receiver] + sizes[p]) ** 2 / threads[receiver] + (rows[giver] - sizes[p]) ** 2 / threads[giver]
            < rows[receiver] ** 2 / threads[receiver] + rows[giver] ** 2 / threads[giver]
        ]  # fmt: skip
        if not movable:
            return placement
        moved = max(movable, key=lambda p: (sizes[p], next_to(p, receiver), p in (0, len(placement) - 1), not all(
            0 <= q < len(placement) and placement[q] == giver for q in (p - 1, p + 1)), p))
        placement[moved] = receiver
        rows[giver] -= sizes[moved]
        rows[receiver] += sizes[moved]


def holders(client: object, futures: list) -> list:
    """The worker holding each future's result (the first by address where Dask copied
    it), None where none holds it; list of str or None, shape (n_futures,)."""
    where = client.who_has(futures)
    return [min(where.get(future.key, ()), default=None) for future in futures]


def rebalance(client: object, futures: list, sizes: Sequence[int]) -> list:
    """The ``futures`` with results moved so that the workers' rows per thread are even.

    A fit that waits for its slowest worker every round then waits for a share of the
    rows, not for wherever Dask happened to compute the partitions
    (:func:`balanced_placement`). A moved result is copied to its new worker (or, should
    that worker be gone before the copy or the scheduler drop the copy, to any) and
    released from the old one once the returned futures replace the given ones. Returns
    once every result is in place; raises a copy's error if one free to run anywhere fails.

    Parameters
    ----------
    client : distributed.Client
    futures : list of Future, shape (n_partitions,)
        Finished futures, one per partition.
    sizes : sequence of int, shape (n_partitions,)
        Each partition's rows.

    Returns
    -------
    list of Future, shape (n_partitions,)
        In the order of ``futures``: the same future where nothing moved.
    """
    from distributed import wait

    held_by = holders(client, futures)
    threads = client.nthreads()  # every worker (scheduler_info lists only some in some releases)
    if None in held_by or len(threads) < 2 or not set(held_by) <= set(threads):
        return list(futures)
    placement = balanced_placement(sizes, held_by, threads)
    # Each copy is bound to its worker: one that may run elsewhere is one Dask's work
    # stealing hands to the idle worker already holding the result, undoing the move.
    moves = [p for p, (holder, target) in enumerate(zip(held_by, placement)) if target != holder]
    moved = list(futures)
    for p in moves:
        moved[p] = client.submit(_same, futures[p], workers=[placement[p]], pure=False)
    bound = set(moves)
    while True:  # the callers place work by where results are: they must be there
        try:
            wait(moved, timeout=_LOST_TARGET_CHECK_SECONDS)
        except (TimeoutError, CancelledError):
            pass  # a copy still waiting, or one the scheduler dropped: both handled below
        workers = client.nthreads()
        for p in moves:
            # A copy bound to a worker that is gone would wait for ever, and the scheduler
            # may drop one whose worker died ("already forgotten"): copied again, to any
            # worker. A copy free to run anywhere that fails too raises its error.
            status = moved[p].status
            lost = status in ("cancelled", "error") or (
                p in bound and status == "pending" and placement[p] not in workers
            )
            if not lost:
                continue
            if p not in bound:
                moved[p].result()
            moved[p] = client.submit(_same, futures[p], pure=False)
            bound.discard(p)
        if all(moved[p].status == "finished" for p in moves):
            return moved


def _same(value: object) -> object:
    return value
