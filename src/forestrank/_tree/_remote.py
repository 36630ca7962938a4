"""A tree whose rows live in partitions elsewhere: the builder's row operations as exchanges.

The builder (``_builder.build_tree``) reads a tree's rows in five places: the tree's
total weight (the scale of every gain), a node's statistics, a node's histograms, the
partition of a node's rows by its split, and the cost penalty's root sums. Everything
else it decides (the split search on pooled histograms, the frontier, the bounds of
monotone splits, the feature draws) reads only those sums. Called with a ``remote``
handle instead of ``None``, the builder asks an *exchange* for the five, and the
exchange sums them over the partitions that hold the rows
(``_tree/_partition_rows.PartitionRows``, one per partition, wherever it lives): the
driver never sees a row, every partition applies the same splits, and the tree is the
one the builder grows on the concatenated rows, up to the order in which
floating-point sums are added (exactly the same with one partition, or with integer
targets and weights: ``docs/design.md``, "Parallelism").

The driver's node table keeps *virtual* row ranges: the root owns ``0:n_rows`` (all
partitions' rows) and a split puts the left child's global count first, so a node's
``end - start`` is its global count, which is all the builder reads of a range.

The exchange is a Python object reached from the compiled builder through
``numba.objmode``; ``remote`` is an int64 array holding its key in the registry and
the tree's rows over all partitions (``register``), so that a tree grown on a cluster and one grown in memory
compile to different specialisations and the in-memory one carries no exchange code
(``docs/design.md``, "Numba rules": optional arguments are None or not per call type).

An exchange implements:

- ``n_rows``: the tree's rows (positive weight) over all partitions;
- ``total_weight() -> float``;
- ``summarise(node, statistics) -> (weight, 0.0)``: fills ``statistics`` (float64,
  (n_statistics,)) with the node's summed moments;
- ``fill(node, histograms, slot)``: ``histograms[slot]`` (float64 or int32, (n_features,
  max_bins, n_hist_columns)) becomes the node's summed histograms;
- ``partition(node, left_child, feature, cut_bin, missing_bin, missing_left,
  fill_child) -> (n_left, n_missing)``: every partition splits its rows of ``node``,
  the left ones becoming ``left_child``'s and the others ``left_child + 1``'s; returns
  the global counts of the left child and of the node's rows in ``missing_bin``. The
  builder names the child whose histograms it will ask for next
  (``_histograms.smaller_child``; -1: unknown), which an exchange may sum in the same
  round; a split the exchange made ahead (``announce``) is answered without a round;
- ``announce(node, feature, cut_bin, missing_bin, missing_left, side)``: before each
  split that another will follow, a few waiting nodes' splits (``side``: 0 or 1, the
  child whose histograms the builder will fill; -1: unknown), which the exchange may
  make ahead; an exchange may ignore them;
- ``penalty_sums(statistics, l2_regularization) -> (weight, rows_cost)``: the root's
  summed moments into ``statistics`` and the sum of the rows' costs
  (``_criteria.row_cost``);
- ``finish()``: called once the tree is grown (``_grow.grow_tree``), so that every node
  of the tree has its rows' range in the partitions.
"""

import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numba
import numpy as np

from .._numba.jit import jit

_exchanges: dict = {}
_keys = itertools.count()
_lock = threading.Lock()


@contextmanager
def register(exchange: object) -> Iterator[np.ndarray]:
    """``exchange`` reachable from the builder while the block runs; yields its ``remote`` handle
    for ``_builder.build_tree``: int64 array of shape (2,), its key and ``exchange.n_rows``."""
    with _lock:
        key = next(_keys)
        _exchanges[key] = exchange
    try:
        yield np.array([key, exchange.n_rows], dtype=np.int64)
    finally:
        with _lock:
            del _exchanges[key]


def _exchange(remote: np.ndarray) -> object:
    return _exchanges[int(remote[0])]


# The kernels that reach the exchange: in object mode (``numba.objmode``) they hold the GIL,
# and only the builder, which counts no references, calls them.
_exchange_kernel = jit(refcounted=False, callable_from_python=False, nogil=False)


@_exchange_kernel
def total_weight(remote):
    """The tree's total weight over every partition."""
    with numba.objmode(total="float64"):
        total = _exchange(remote).total_weight()
    return total


@_exchange_kernel
def summarise(remote, node, statistics):
    """``_builder._summarise`` of ``node`` over every partition: fills ``statistics``;
    returns (weight, 0.0), a remote tree having no leaf targets."""
    with numba.objmode(weight="float64"):
        weight = _exchange(remote).summarise(node, statistics)
    return weight, 0.0


@_exchange_kernel
def fill(remote, node, histograms, slot):
    """``histograms[slot]``: the summed histograms of ``node``'s rows in every partition."""
    with numba.objmode():
        _exchange(remote).fill(node, histograms, slot)


@_exchange_kernel
def partition(remote, node, left_child, feature, cut_bin, missing_bin, missing_left, fill_child):
    """Split ``node``'s rows in every partition (or take the split the exchange made ahead),
    with the histograms of child ``fill_child`` (-1: none); returns the global (left count,
    missing count)."""
    with numba.objmode(n_left="int64", n_missing="int64"):
        n_left, n_missing = _exchange(remote).partition(node, left_child, feature, cut_bin, missing_bin, missing_left, fill_child)
    return n_left, n_missing


@_exchange_kernel
def announce(remote, node, feature, cut_bin, missing_bin, missing_left, side):
    """The split of the frontier's next node, which the exchange may make ahead (``side``: the
    child whose histograms the builder will fill, 0 left, 1 right, -1 unknown)."""
    with numba.objmode():
        _exchange(remote).announce(node, feature, cut_bin, missing_bin, missing_left, side)


@_exchange_kernel
def penalty_sums(remote, statistics, l2_regularization):
    """The root's summed moments (into ``statistics``) and rows' costs over every partition:
    returns (root weight, sum of the rows' costs)."""
    with numba.objmode(weight="float64", rows_cost="float64"):
        weight, rows_cost = _exchange(remote).penalty_sums(statistics, l2_regularization)
    return weight, rows_cost


class PartitionsExchange:
    """The exchange over partitions, each asked through ``round``.

    ``round(method, arguments)`` calls ``method`` of every partition's
    ``_partition_rows.PartitionRows`` (``arguments``: one tuple for all, or a list of
    one tuple per partition) and returns the answers in partition order: in this
    process (``in_process``) or on the workers that hold them (a cluster's rounds,
    ``ensemble/_cluster_exchange.py``). The answers are summed in partition order
    (``sum_in_order``), so every round function grows the same tree; a split's round
    brings the children's statistics back with their counts and the histograms of the
    child the builder names (``PartitionRows.split``), and the builder's next questions
    about them are answered without another round.

    The same round also splits the node the builder announces as the frontier's next
    (``announce``), ahead: a waiting node's split is fixed, and a partition splits a
    node's rows in place within the node's range, so an ahead split the builder never
    makes leaves the node's rows where its leaf reads them, and one it makes is the split
    it would have made (the same rows in the same order). When the builder splits that
    node, its counts, statistics and histograms are here already; the children's numbers,
    which the builder gives only then, travel with the next round (``commits``) or with
    ``finish``. Best-first growth mostly splits the announced node next, so a tree takes
    about half the rounds.

    One exchange per tree: it reads the tree's summary when it is made.

    Parameters
    ----------
    round : callable
        Every partition started on the tree (``PartitionRows.start_tree``).
    opening : list or None
        Answers already given to the tree's first questions, one (``tree_summary``,
        ``summarise(0)``, ``histograms(0)``) tuple per answerer, which a round function
        may bring back with the round that starts the tree
        (``ensemble/_cluster_exchange.WorkerPartitions.opening``); None: the exchange
        asks for them.

    Attributes
    ----------
    n_rows, integer_weights :
        The tree's rows over all partitions, and whether all their weights are integers.
    criterion, histogram_dtype :
        The partitions' criterion and histogram dtype name (``grow_tree`` checks them
        against the tree's).
    made_ahead, taken_ahead, finish_rounds : int
        Splits made ahead, those of them the builder then made (each a round spared), and
        the rounds ``finish`` made (0 or 1).
    """

    def __init__(self, round: Callable[[str, tuple | list], list], opening: list | None = None) -> None:
        self._round = round
        self._children: dict = {}
        self._histograms: dict = {}  # node -> its histograms, one array per answerer, summed by ``fill``
        self._announced: tuple | None = None  # (node, split, side) to make ahead in the next split round
        self._fresh_announcements = True  # the next announce starts a new list of candidates
        self._ahead: dict = {}  # node -> (split, its answers, side): splits made ahead, not yet the builder's
        self._commits: list = []  # (node, left child) of ahead splits the partitions have yet to number
        self.made_ahead = self.taken_ahead = self.finish_rounds = 0
        if opening is None:
            summaries = round("tree_summary", ())
        else:
            summaries, self._children[0], root_histograms = (list(answers) for answers in zip(*opening))
            self._histograms[0] = root_histograms
        n_rows, integer_weights, total_weights, criteria, dtypes = zip(*summaries)
        if len(set(criteria)) > 1 or len(set(dtypes)) > 1:
            raise ValueError(f"the partitions disagree on the criterion ({set(criteria)}) or histogram dtype ({set(dtypes)}).")
        self.n_rows = sum(n_rows)
        self.integer_weights = all(integer_weights)
        self._total_weight = sum_in_order(total_weights)
        self.criterion, self.histogram_dtype = criteria[0], dtypes[0]

    def total_weight(self) -> float:
        return self._total_weight

    def summarise(self, node: int, statistics: np.ndarray) -> float:
        answers = self._children.get(node)  # node ids are not reused within a tree
        if answers is None:
            answers = self._round("summarise", (node, self._take_commits()))
        weight, statistics[:] = sum_each(answers)
        return weight

    def fill(self, node: int, histograms: np.ndarray, slot: int) -> None:
        answers = self._histograms.pop(node, None)
        if answers is None:
            answers = self._round("histograms", (node, self._take_commits()))
        sum_in_order_into(answers, histograms[slot])

    def announce(self, node: int, feature: int, cut_bin: int, missing_bin: int, missing_left: int, side: int) -> None:
        """The builder's candidates for a split made ahead, the frontier's top first, before each
        split: the first not made ahead yet is kept."""
        if self._fresh_announcements:
            self._announced, self._fresh_announcements = None, False
        if self._announced is None and node not in self._ahead:
            self._announced = (node, (feature, cut_bin, missing_bin, missing_left), side)

    def partition(
        self, node: int, left_child: int, feature: int, cut_bin: int, missing_bin: int, missing_left: int, fill_child: int
    ) -> tuple[int, int]:  # fmt: skip
        split = (feature, cut_bin, missing_bin, missing_left)
        announced = None if self._fresh_announcements else self._announced  # announced for this split
        self._announced, self._fresh_announcements = None, True
        if node in self._ahead:
            made, (n_left, n_missing, left, right, histograms), side = self._ahead.pop(node)
            if made != split:
                raise RuntimeError(f"node {node} was split ahead as {made}, but the builder splits it as {split}.")
            self._commits.append((node, left_child))
            self.taken_ahead += 1
        else:
            answers = self._round(
                "split", (node, left_child, *split, fill_child, self._take_commits(), announced)
            )  # fmt: skip
            *mine, early = zip(*answers)
            n_left, n_missing, left, right, histograms = sum_split(*mine, sum_histograms=False)
            if announced is not None:
                ahead_node, made, ahead_side = announced
                self._ahead[ahead_node] = (made, sum_split(*zip(*early), sum_histograms=False), ahead_side)
                self.made_ahead += 1
            side = fill_child - left_child
        self._children[left_child], self._children[left_child + 1] = [left], [right]  # summed: one answer each
        if fill_child >= 0 and histograms is not None and fill_child - left_child == side:
            self._histograms[fill_child] = histograms
        return n_left, n_missing

    def finish(self) -> None:
        """Number the children of the last ahead splits in the partitions (a round, when any is
        left): every node of the grown tree then has its rows' range there."""
        if self._commits:
            self._round("commit", (self._take_commits(),))
            self.finish_rounds += 1

    def _take_commits(self) -> list:
        commits, self._commits = self._commits, []
        return commits

    def penalty_sums(self, statistics: np.ndarray, l2_regularization: float) -> tuple[float, float]:
        weight, rows_cost, statistics[:] = sum_each(self._round("penalty_sums", (l2_regularization,)))
        return weight, rows_cost


def in_process(partitions: list) -> Callable[[str, tuple | list], list]:
    """The round function of ``partitions`` (``PartitionRows``) held by this process."""

    def round(method: str, arguments: tuple | list) -> list:
        per_partition = arguments if isinstance(arguments, list) else [arguments] * len(partitions)
        return [getattr(partition, method)(*args) for partition, args in zip(partitions, per_partition)]

    return round


def sum_split(
    n_left: tuple, n_missing: tuple, left: tuple, right: tuple, histograms: tuple, sum_histograms: bool = True
) -> tuple:  # fmt: skip
    """A split's answers (``PartitionRows.split``'s first five) of several partitions, each
    added in partition order: the counts, the children's (weight, statistics), and the
    filled child's histograms (None when none was filled). Without ``sum_histograms``, the
    histograms stay one array per partition, which ``sum_in_order_into`` then adds into a
    pool's slot."""
    summed = histograms
    if histograms[0] is None:
        summed = None
    elif sum_histograms:
        summed = sum_in_order(histograms)
    return sum(n_left), sum(n_missing), sum_each(left), sum_each(right), summed


def sum_each(answers: Sequence[tuple]) -> tuple:
    """The partitions' answers (tuples of numbers and arrays) added element by element, each
    element in partition order (``sum_in_order``)."""
    return tuple(sum_in_order(column) for column in zip(*answers))


def sum_in_order(values: Sequence) -> object:
    """``values[0] + values[1] + ...``, added from the first (not from 0, which would turn a
    -0.0 of a single partition into 0.0): with one partition, that partition's value."""
    total = values[0]
    for value in values[1:]:
        total = total + value
    return total


def sum_in_order_into(values: Sequence[np.ndarray], out: np.ndarray) -> None:
    """``sum_in_order(values)`` written into ``out`` (the arrays' shape), without the temporary
    sums: the same additions in the same order, so the same values bit for bit."""
    np.copyto(out, values[0])
    for value in values[1:]:
        out += value
