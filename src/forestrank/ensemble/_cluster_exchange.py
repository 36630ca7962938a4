"""Rounds of a tree grown over partitions that live on a Dask cluster's workers.

Each partition's rows stay on the worker that holds them; one Dask actor per worker
(``WorkerPartitions``) holds that worker's partitions (``_tree/_partition_rows.PartitionRows``)
and answers for all of them at once, their sums added on the worker. The builder runs
on the caller's machine and asks its exchange (``_tree/_remote.PartitionsExchange``) for
row sums, each question one *round*: the same method called on every actor at once, the
answers gathered in worker order. Summing on the workers first sends one histogram per
worker and round instead of one per partition; the sums are then added in (worker,
partition) order, a different order than partition order only for floating-point sums
of several partitions (``docs/design.md``, "Parallelism").

Per split the exchange makes at most one round: the split decision out; the children's
counts and statistics, and the smaller child's histograms (``n_features x max_bins x
n_hist_columns`` sums from every worker), back; the same round makes a waiting node's
split ahead (``_remote.PartitionsExchange``), so that its own split needs none. A
tree's summary, the root's statistics and the root's histograms come back in one round
(``opening``), which boosting folds into the round that starts the tree.
``ActorRounds`` counts the rounds and the bytes the actors send back.

A round's calls go over a direct channel to each actor (``parallel/_channel.py``)
where the workers talk plain TCP, and as Dask actor calls otherwise (TLS, UCX, a
worker the driver cannot connect to): the same methods and answers, each round cheaper
over the channels (``benchmarks/RESULTS.md``, "Boosting on a cluster").

An actor lost with its worker loses its partitions' tree state: the round raises
``LostPartitionsError`` naming the partitions whose actor did not answer.
"""

import warnings

import numpy as np

from .._input.queries import stacklevel_outside_package
from .._tree._partition_rows import PartitionRows
from .._tree._remote import sum_each, sum_in_order, sum_split
from ..parallel._channel import CONNECT_TIMEOUT, Channel, serve_on_worker
from ..parallel._cluster import check_scheduler, holders, scheduler_errors
from ..parallel._local import numba_threads_released


class LostPartitionsError(RuntimeError):
    """Partitions whose actors (and rows) were lost with their workers."""


class ChannelBroken(RuntimeError):
    """A worker's channel broke while its actor, and the partitions' state, are still there."""


class WorkerPartitions:
    """The partitions one worker holds, answering the exchange's rounds for all of them.

    Every method takes one argument tuple per partition where the partitions differ
    (``start_tree``) and the same arguments otherwise; sums are added over the partitions
    in their order (``_remote.sum_in_order``), per-partition answers (``row_leaf``) come
    back as a list.

    Parameters
    ----------
    X_binned : list of ndarray
        The worker's partitions' binned rows, in partition order.
    criterion, max_bins, n_hist_columns, histogram_dtype :
        As in ``PartitionRows``.
    """

    def __init__(self, X_binned: list, criterion: int, max_bins: int, n_hist_columns: int, histogram_dtype: str) -> None:
        self.partitions = [PartitionRows(rows, criterion, max_bins, n_hist_columns, histogram_dtype) for rows in X_binned]

    def start_tree(self, per_partition: list) -> None:
        for partition, arguments in zip(self.partitions, per_partition):
            partition.start_tree(*arguments)

    def ping(self) -> bool:
        """True: the actor, and the partitions' tree state with it, is still there."""
        return True

    def open_channel(self) -> tuple | None:
        """Where the driver reaches this actor directly (``parallel/_channel.serve_on_worker``), or None."""
        return serve_on_worker(self)

    def tree_summary(self) -> tuple[int, bool, float, int, str]:
        n_rows, integer_weights, totals, criteria, dtypes = zip(*(partition.tree_summary() for partition in self.partitions))
        return sum(n_rows), all(integer_weights), sum_in_order(totals), criteria[0], dtypes[0]

    def summarise(self, node: int, commits: list = ()) -> tuple[float, np.ndarray]:
        return sum_each([partition.summarise(node, commits) for partition in self.partitions])

    def histograms(self, node: int, commits: list = ()) -> np.ndarray:
        return sum_in_order([partition.histograms(node, commits) for partition in self.partitions])

    def commit(self, commits: list) -> None:
        for partition in self.partitions:
            partition.commit(commits)

    def split(
        self, node: int, left_child: int, feature: int, cut_bin: int, missing_bin: int, missing_left: int, fill_child: int,
        commits: list = (), ahead: tuple | None = None,
    ) -> tuple:  # fmt: skip
        answers = [
            partition.split(node, left_child, feature, cut_bin, missing_bin, missing_left, fill_child, commits, ahead)
            for partition in self.partitions
        ]
        *mine, early = zip(*answers)
        return (*sum_split(*mine), None if ahead is None else sum_split(*zip(*early)))

    def opening(self) -> tuple:
        """The answers to a tree's first questions (``tree_summary``, the root's ``summarise``
        and ``histograms``), which a round that starts a tree may bring back
        (``_remote.PartitionsExchange``'s ``opening``)."""
        return self.tree_summary(), self.summarise(0), self.histograms(0)

    def penalty_sums(self, l2_regularization: float) -> tuple[float, float, np.ndarray]:
        return sum_each([partition.penalty_sums(l2_regularization) for partition in self.partitions])

    def row_leaf(self, nodes: np.ndarray) -> list:
        return [partition.row_leaf(nodes) for partition in self.partitions]


def start_actors(client: object, X_binned: list, criterion: int, max_bins: int, n_hist_columns: int, histogram_dtype: str) -> tuple[list, list]:
    """One ``WorkerPartitions`` actor per worker holding partitions, on that worker.

    Parameters
    ----------
    client : distributed.Client
    X_binned : list of distributed.Future
        Each partition's binned rows (uint8/16/32, (n_rows, n_features)), on its worker.
    criterion, max_bins, n_hist_columns, histogram_dtype :
        As in ``PartitionRows`` (the dtype by name).

    Returns
    -------
    actors : list of distributed.Actor
    partitions : list of list of int
        The partitions each actor holds, in partition order.
    """
    with scheduler_errors(client):
        by_worker: dict = {}
        for number, worker in enumerate(holders(client, X_binned)):
            by_worker.setdefault(worker, []).append(number)
        futures = [
            client.submit(
                WorkerPartitions, [X_binned[number] for number in numbers], criterion, max_bins, n_hist_columns,
                histogram_dtype, actor=True, workers=None if worker is None else [worker], allow_other_workers=worker is None,
            )  # fmt: skip
            for worker, numbers in by_worker.items()
        ]
        return [future.result() for future in futures], list(by_worker.values())


class ActorRounds:
    """The round function (``_remote.PartitionsExchange``) of ``PartitionRows`` actors.

    Parameters
    ----------
    client : distributed.Client
    actors : list of distributed.Actor
        ``WorkerPartitions`` actors (``start_actors``).
    partitions : list of list of int
        The partitions each actor holds, named in the errors of a lost actor.
    direct : bool, default=True
        Make the rounds over a channel to each actor (``parallel/_channel.py``) where every
        actor opens one and the driver connects to it; otherwise, or False, as Dask actor
        calls.

    Attributes
    ----------
    rounds : int
        Rounds made so far.
    bytes_received : int
        Bytes of the arrays and numbers the actors sent back.
    channels : list of parallel._channel.Channel, or None
        One per actor, or None where the rounds are Dask actor calls.
    """

    def __init__(self, client: object, actors: list, partitions: list, direct: bool = True) -> None:
        self.client = client
        self.actors = actors
        self.partitions = partitions
        self.rounds = 0
        self.bytes_received = 0
        self.interrupted = False
        self.channels = self._open_channels() if direct else None

    def _open_channels(self) -> list | None:
        """A channel to every actor, or None (the channels opened are closed) where one is not to be
        had: the rounds are then actor calls, which also report an actor lost meanwhile. Workers
        that open no channel (TLS, UCX) fall back silently; a channel that fails to open warns."""
        channels: list = []
        try:
            pending = [actor.open_channel() for actor in self.actors]
            addresses = [future.result(timeout=CONNECT_TIMEOUT) for future in pending]
            if any(address is None for address in addresses):
                return None
            for index, address in enumerate(addresses):
                channels.append(Channel(address, alive=lambda index=index: self._listed(index)))
        except BaseException as error:
            for channel in channels:
                channel.close()
            if not isinstance(error, Exception):
                raise
            warnings.warn(
                f"boosting's rounds go through Dask's actor calls, which are slower: the direct channel to a worker "
                f"could not be opened ({type(error).__name__}: {error}).",
                RuntimeWarning,
                stacklevel=stacklevel_outside_package(),
            )
            return None
        return channels

    def close(self) -> None:
        """Close the channels; the actors' threads that answered them end, and later rounds are
        actor calls (unless a round was interrupted, which ends the rounds)."""
        for channel in self.channels or ():
            channel.close()
        self.channels = None

    def __call__(self, method: str, arguments: tuple | list, only: int | None = None) -> list:
        """``method`` called on every actor at once (``arguments``: one tuple for all, or a list of
        one tuple per actor), or on actor ``only`` alone; the answers in actor order."""
        if self.interrupted:
            raise RuntimeError("a round of these actors was interrupted and their channels closed: start the fit again.")
        asked = range(len(self.actors)) if only is None else [only]
        per_actor = arguments if isinstance(arguments, list) else [arguments] * len(asked)
        with scheduler_errors(self.client):
            try:
                with numba_threads_released():  # the workers may share this process
                    answers, lost, failed = self._round(method, asked, per_actor)
            except BaseException:
                # Requests may be left unanswered on some channels: no later round could tell
                # their answers from its own.
                self.interrupted = self.channels is not None
                self.close()
                raise
        if lost:
            self.close()
            check_scheduler(self.client)  # a scheduler gone, rather than the workers, is a ConnectionError
            raise LostPartitionsError(
                f"partition(s) {'; '.join(lost)} did not answer {method!r}: their rows and tree state were lost with "
                "their worker, and the tree is incomplete."
            )
        if failed:
            raise failed[0]
        self.rounds += 1
        self.bytes_received += sum(_nbytes(answer) for answer in answers)
        return answers

    def _round(self, method: str, asked: range | list, per_actor: list) -> tuple[list, list, list]:
        """Ask every actor in ``asked``, then read their answers in order: the answers, the actors
        lost (their partitions, described) and the errors of the methods themselves."""
        if self.channels is None:
            pending = [self._ask(self.actors[index], method, args) for index, args in zip(asked, per_actor)]
        else:
            pending = [self._send(self.channels[index], method, args) for index, args in zip(asked, per_actor)]
        answers, lost, failed = [], [], []
        for index, future in zip(asked, pending):
            try:
                if isinstance(future, Exception):
                    raise future
                if self.channels is None:
                    answers.append(future.result())
                    continue
                ok, answer = future.reply()
                (answers if ok else failed).append(answer)
            except Exception as error:
                # A channel's own errors are its transport's, an actor call's may be the method's:
                # either way the worker is lost only if its actor no longer answers Dask.
                partitions = ", ".join(map(str, self.partitions[index]))
                if (self.channels is None or isinstance(error, OSError)) and not self._alive(self.actors[index]):
                    lost.append(f"{partitions} ({type(error).__name__}: {error})")
                elif self.channels is not None and isinstance(error, OSError):
                    raise ChannelBroken(
                        f"the channel to the worker holding partition(s) {partitions} broke ({type(error).__name__}: "
                        f"{error}); the worker and its partitions are still there, but this round is incomplete."
                    ) from error
                else:
                    failed.append(error)  # an error of the method itself, on partitions still there
        return answers, lost, failed

    def _listed(self, index: int) -> bool:
        """Whether actor ``index``'s worker is still in the cluster, as the scheduler knows it (a
        channel's wait asks: a worker cut off by the network closes no socket)."""
        if self.client.status != "running":
            return False
        try:
            try:
                workers = self.client.scheduler_info(n_workers=-1)["workers"]  # some releases list 5 by default
            except TypeError:  # releases without the argument list them all
                workers = self.client.scheduler_info()["workers"]
            return self.actors[index]._address in workers
        except Exception:  # the scheduler did not answer this time: the status above decides
            return self.client.status == "running"

    @staticmethod
    def _send(channel: Channel, method: str, arguments: tuple) -> object:
        """``channel`` with the request ``method(*arguments)`` sent, or the error raised on sending."""
        try:
            channel.ask(method, arguments)
            return channel
        except OSError as error:
            return error

    @staticmethod
    def _ask(actor: object, method: str, arguments: tuple) -> object:
        """The future of ``actor.method(*arguments)``, or the error raised on asking (an actor
        whose worker is known to be lost refuses at once)."""
        try:
            return getattr(actor, method)(*arguments)
        except Exception as error:
            return error

    @staticmethod
    def _alive(actor: object) -> bool:
        """Whether ``actor`` still answers (a worker restarted at the same address has none of its
        state and does not)."""
        try:
            return actor.ping().result() is True
        except Exception:
            return False


def _nbytes(answer: object) -> int:
    """The bytes of the arrays and numbers in one actor's answer."""
    if isinstance(answer, np.ndarray):
        return answer.nbytes
    if isinstance(answer, (tuple, list)):
        return sum(_nbytes(item) for item in answer)
    return 8
