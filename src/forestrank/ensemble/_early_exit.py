"""Early exits at prediction time (Mohan's thesis, chapter 6; ``docs/costs.md``).

Every ``every`` trees (iterations, for boosting), the bottom ``fraction`` of each
query's still-active documents by partial score is frozen: those documents keep
their partial score and pass no more trees (``EarlyExit``).
"""

from collections.abc import Callable
from numbers import Integral, Real

import numpy as np


class EarlyExit:
    """Early exits for ``predict(X, qid=..., early_exit=EarlyExit(...))``.

    Every ``every`` trees (iterations, for boosting), the bottom ``fraction`` of each
    query's still-active documents by partial score, ``floor(fraction * n_active)`` of
    them (ties broken by input order, earlier rows ranking higher), is frozen. A frozen
    document keeps its partial score and passes no more trees; so that it stays below
    every document of its query still active, its returned score is its partial score
    less ``(n_checkpoints - k) * D`` when it was frozen at checkpoint ``k`` of
    ``n_checkpoints``, with ``D`` the spread of all returned scores plus 1 (a shift the
    same for all documents frozen together, which never reverses their order; two of
    them closer than the rounding of the shifted score, about ``|score| * 2**-52``, can
    come out equal and then rank by the metric's rule for ties).

    Parameters
    ----------
    every : int
        Trees (iterations) between checkpoints, >= 1.
    fraction : float in [0, 1)
        Share of the active documents frozen at each checkpoint.

    Attributes
    ----------
    Set by the ``predict`` call that used it, in the caller's row order.

    trees_passed_ : ndarray of shape (n_samples,), int64
        The number of trees each document passed (in the caller's row order).
    document_costs_ : ndarray of shape (n_samples,), float64
        Each document's cost: ``sum_{t < trees_passed_} c(h_t)`` (``tree_costs_``).
    average_cost_ : float
        ``c_H``, the mean of ``document_costs_`` (Eq. 6.4).
    """

    def __init__(self, every: int = 100, fraction: float = 0.2) -> None:
        self.every = every
        self.fraction = fraction

    @property
    def every(self) -> int:
        return self._every

    @every.setter
    def every(self, every: int) -> None:
        # a property: an exit changed after it was made is checked as one made with it
        if isinstance(every, bool) or not isinstance(every, Integral) or every < 1:
            raise ValueError(f"every must be an integer >= 1 (trees between exits); got {every!r}.")
        self._every = int(every)

    @property
    def fraction(self) -> float:
        return self._fraction

    @fraction.setter
    def fraction(self, fraction: float) -> None:
        if isinstance(fraction, bool) or not isinstance(fraction, Real) or not 0 <= fraction < 1:
            raise ValueError(f"fraction must be a number in [0, 1) (the share frozen at each exit); got {fraction!r}.")
        self._fraction = float(fraction)

    def __repr__(self) -> str:
        return f"EarlyExit(every={self.every}, fraction={self.fraction})"

    def run(
        self,
        n_stages: int,
        query_boundaries: np.ndarray,
        start: np.ndarray,
        add_stages: Callable[[np.ndarray, int, int, np.ndarray], None],
        finish: Callable[[np.ndarray], np.ndarray],
        stage_costs: np.ndarray,
        trees_per_stage: int,
        start_cost: float = 0.0,
    ) -> np.ndarray:
        """Scores of rows grouped by query under early exits; records who exited where.

        Parameters
        ----------
        n_stages : int
            Stages (trees, or boosting iterations) of the model.
        query_boundaries : ndarray of shape (n_queries + 1,), int64
            The grouped rows' queries.
        start : ndarray of shape (n_rows, n_outputs), float64
            Raw scores before the first stage (updated in place).
        add_stages : callable
            ``add_stages(rows, first, last, raw)`` adds stages ``first:last`` of the
            grouped rows ``rows`` (int64 indices) to ``raw`` (their rows of ``start``).
        finish : callable
            ``finish(raw, stages)``: raw scores (n, n_outputs) of documents that passed
            ``stages`` stages (an int, or an int64 array of n) to ranking scores (n,);
            a forest divides by the trees passed, boosting ignores them.
        stage_costs : ndarray of shape (n_stages,)
            The cost each stage adds (its trees' ``tree_costs_``).
        trees_per_stage : int
            Trees per stage, for ``trees_passed_``.
        start_cost : float
            What every document pays before the first stage (IGBRT's initial forest).

        Returns
        -------
        ndarray of shape (n_rows,), float64, in the grouped order; ``trees_passed_`` and
        ``document_costs_`` are in the grouped order too until the caller ungroups them.
        """
        raw = start
        n_rows = len(raw)
        query_of_row = np.repeat(np.arange(len(query_boundaries) - 1), np.diff(query_boundaries))
        active = np.arange(n_rows)
        passed = np.full(n_rows, n_stages, dtype=np.int64)
        exit_checkpoint = np.full(n_rows, -1, dtype=np.int64)
        checkpoints = list(range(self.every, n_stages, self.every))
        first = 0
        for number, last in enumerate([*checkpoints, n_stages]):
            block = raw[active]
            add_stages(active, first, last, block)
            raw[active] = block
            first = last
            if last == n_stages or not len(active):
                break
            frozen = self._bottom(finish(raw[active], last), query_of_row[active])
            passed[active[frozen]] = last
            exit_checkpoint[active[frozen]] = number
            active = active[~frozen]
        scores = finish(raw, passed)
        exited = exit_checkpoint >= 0
        if exited.any():
            spread = float(scores.max() - scores.min()) + 1.0
            scores[exited] -= (len(checkpoints) - exit_checkpoint[exited]) * spread
        cumulative = start_cost + np.concatenate([[0.0], np.cumsum(stage_costs)])
        self.trees_passed_ = passed * trees_per_stage
        self.document_costs_ = cumulative[passed]
        self.average_cost_ = float(self.document_costs_.mean()) if n_rows else 0.0
        return scores

    def _bottom(self, scores: np.ndarray, queries: np.ndarray) -> np.ndarray:
        """Bool mask of the ``floor(fraction * n)`` lowest scores of each query (``queries`` sorted)."""
        order = np.lexsort((-np.arange(len(scores)), scores, queries))  # ascending score; ties: later rows lower
        boundaries = np.flatnonzero(np.r_[True, np.diff(queries[order]) != 0, True])
        counts = np.diff(boundaries)
        position = np.arange(len(scores)) - np.repeat(boundaries[:-1], counts)
        frozen = np.zeros(len(scores), dtype=bool)
        frozen[order] = position < np.repeat((self.fraction * counts).astype(np.int64), counts)
        return frozen
