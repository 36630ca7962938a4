"""The interface every boosting objective implements (``objectives/__init__.py``)."""

from abc import ABC, abstractmethod

import numpy as np

from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE
from ._draws import DrawShare


def distinct_grades(labels: np.ndarray, objective: str) -> np.ndarray:
    """The distinct grades of ``labels`` (float64), ascending, for an objective with one
    score per grade; a ValueError naming ``objective`` when there is only one."""
    grades = np.unique(labels)
    if len(grades) < 2:
        raise ValueError(f"y has one class ({grades.tolist()}); objective={objective!r} needs at least two distinct grades.")
    return grades


# Rows whose weighted targets ``weighted_target_sums`` holds at once: its temporaries hold
# this many times (n_columns + 1) doubles, however many rows a fit has.
_SUMMED_ROWS_AT_ONCE = 65536


def weighted_target_sums(targets: np.ndarray, weights: np.ndarray, carried: np.ndarray | None = None) -> np.ndarray:
    """The weighted sums of ``targets`` (float64 of shape (n_rows,) or (n_rows, n_columns))
    and the sum of ``weights`` (float64 of shape (n_rows,)): float64 of shape (n_columns + 1,),
    added row after row onto ``carried`` (the same sums of the rows before, or None), so
    that rows cut into consecutive parts, each carrying the sums of the parts before it,
    give the sums of the whole bit for bit (a fit over partitions)."""
    columns = targets[:, None] if targets.ndim == 1 else targets
    sums = np.zeros(columns.shape[1] + 1) if carried is None else carried
    for start in range(0, len(columns), _SUMMED_ROWS_AT_ONCE):  # the same additions, in row order
        stop = start + _SUMMED_ROWS_AT_ONCE
        rows = np.column_stack([columns[start:stop] * weights[start:stop, None], weights[start:stop]])
        sums = np.cumsum(np.vstack([sums[None, :], rows]), axis=0)[-1]
    return sums.copy() if sums is carried else sums


def expected_grade(probabilities: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_c weights[c] probabilities[:, c]`` per row: float64 (n_rows,), from
    ``probabilities`` (n_rows, n_classes) and ``weights`` (n_classes,).

    Each row is summed on its own, not by a matrix product, whose BLAS kernel depends on
    the number of rows: a document's score does not depend on the batch it came in."""
    return (probabilities * weights).sum(axis=1)


def mean_of_sums(sums: np.ndarray) -> np.ndarray:
    """The weighted means of ``weighted_target_sums``' sums, float64 of shape (n_columns,)."""
    return sums[:-1] / sums[-1]


def mean_target(targets: np.ndarray, sample_weight: np.ndarray | None) -> np.ndarray:
    """The mean of ``targets`` over the rows (axis 0) weighted by ``sample_weight`` (None:
    equal weights), float64 of shape (n_columns,): the constant minimising a least-squares
    loss summed over weighted rows, from ``weighted_target_sums`` (the sums a fit over
    partitions adds in turn)."""
    weights = np.ones(len(targets)) if sample_weight is None else sample_weight
    return mean_of_sums(weighted_target_sums(targets, weights))


class RankingObjective(ABC):
    """Interface of the boosting objectives (see the module docstring).

    ``n_outputs`` raw scores per document: 1, or one per grade (``Softmax``), in which
    case ``gradients`` takes and fills arrays of shape (n_rows, n_outputs). Capabilities
    are class attributes the estimators read, never the objective's type.
    """

    n_outputs = 1
    # Whether the objective can weigh its pairs by where documents were shown (``show_positions``):
    # LambdaMART's ``position_bias`` needs it.
    learns_from_positions = False
    # Whether the objective draws at random from its ``random_state`` (then ``share_draws``
    # needs a seed).
    draws_at_random = False
    # Whether the trees are grown on the objective's pairs (``pairs_`` after each
    # ``gradients`` call) and their leaves solved over a new draw of them (``leaf_pairs``):
    # ``_tree/_pairwise.py``.
    pairwise = False
    # Whether ``prepare`` takes the training queries' ids (``query_ids=``, in grouped order).
    takes_query_ids = False
    # Whether ``initial_score`` is the weighted mean of ``targets_`` (``mean_target``): a fit
    # over partitions adds the partitions' ``weighted_target_sums`` in turn instead.
    starts_from_mean_target = False
    # Whether each query's loss depends on its scores' differences only: one constant added
    # to a query's scores changes neither its loss nor its gradients. A tree that cannot
    # split then steps 0 (``BaseBoostingRanker._store_values``): its step would change no
    # ranking and no gradient, over a curvature that no split bounds.
    shift_invariant = False
    # The rows of a larger fit whose random draws this objective shares (``share_draws``);
    # None: its own rows are the fit.
    draw_share: DrawShare | None = None

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        """Precompute label-only quantities; ``labels`` float64 grouped by query."""
        self.labels_ = np.ascontiguousarray(labels, dtype=FLOAT_DTYPE)
        self.query_boundaries_ = np.ascontiguousarray(query_boundaries, dtype=INDEX_DTYPE)

    def share_draws(self, share: DrawShare) -> None:
        """Before ``prepare``: the objective's rows are ``share``'s part of a larger fit (a
        partition of a partitioned fit), and an objective that draws at random draws their
        share of that fit's draws (``_draws``), so that its gradients are those of the fit in
        memory on every partition's rows."""
        if self.draws_at_random and self.random_state is None:
            raise ValueError(
                f"{type(self).__name__} draws at random and random_state is None: the partitions of a fit would each "
                "draw a stream of their own instead of their share of one; give it a seed."
            )
        self.draw_share = share

    def _share(self) -> DrawShare:
        """``draw_share``, or the objective's own rows once prepared."""
        return self.draw_share or DrawShare.whole(self.labels_, self.query_boundaries_)

    def initial_score(self, sample_weight: np.ndarray | None = None) -> float:
        """Constant score the boosting starts from (without ``init``); ``sample_weight``
        (float64 of shape (n_rows,), or None for equal weights): the rows' weights, which
        the constant of a loss summed over weighted rows depends on."""
        return 0.0

    @abstractmethod
    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        """Fill ``gradients`` and ``hessians`` (float64, one per grouped row) at ``scores``."""

    def compiled_state(self) -> tuple | None:
        """After ``prepare``: what compiled code needs to compute this objective's gradients
        as ``gradients`` does, and its ``leaf_curvature`` where it has one of its own
        (``objectives/_compiled.py``), for the boosting iteration compiled whole; None when
        the objective has no compiled path as configured (its gradients are then computed
        from Python, one iteration at a time)."""
        return None

    def leaf_curvature(
        self, scores: np.ndarray, row_leaf: np.ndarray, weights: np.ndarray, n_nodes: int, carried: np.ndarray | None = None
    ) -> np.ndarray | None:
        """Second derivative of the loss along each leaf's value, when it is not the sum of the
        leaf's hessians (None: it is). Arrays float64/int64, one per grouped row. ``carried``
        (float64, (n_nodes,)): the curvature of the queries before these (another
        partition's), which the queries' terms are added to one after another."""
        return None
