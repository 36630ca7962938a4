"""Feature costs: the penalty of cost-aware splits, the features a model has paid for,
the cost of a model and early exits (Mohan's thesis, chapter 6; ``docs/costs.md``).

- **The penalty (Eq. 6.1).** A split on feature ``f`` is scored by its gain less
  ``lambda * c~(f) * U``: ``c~(f) = c(f) / sum_g c(g)`` is the feature's share of the
  cost of all features and ``U`` the tree's reducible root cost, the gain of
  splitting its root into one leaf per row (``_tree._criteria.penalty_unit``; for a
  listwise split the whole range of the mean expected NDCG). So a split on ``f`` must
  remove at least the fraction ``lambda * c~(f)`` of the impurity its tree started
  from: the same demand whatever the criterion's units, the number of rows or the
  scale of the costs. As with the thesis' loss-unit penalty, a split near the root,
  which removes much, pays for an expensive feature more easily than a deep one.
- **Used once, then free (§6.1).** A feature already used by the model (an earlier
  tree, an earlier wave of a forest, or a split higher in the same tree) costs nothing
  more: computed once for a document, its value serves every later tree.
- **The cost of a model (Eqs. 6.2-6.4).** ``c(h_t)`` is the cost of the features tree
  ``t`` uses that no earlier tree uses; a document that passes the first ``T`` trees
  costs ``sum_{t <= T} c(h_t)``, and the model's cost ``c_H`` is the mean over
  documents: ``sum_t c(h_t)`` without early exits.
- **Early exits.** Every ``every`` trees (iterations, for boosting), the bottom
  ``fraction`` of each query's still-active documents by partial score is frozen:
  those documents keep their partial score and pass no more trees (``EarlyExit``).
"""

from collections.abc import Callable
from numbers import Integral, Real

import numpy as np


def check_feature_costs(feature_costs: object, n_features: int) -> np.ndarray | None:
    """``feature_costs`` as float64 of shape (n_features,), or None; a clear error otherwise."""
    if feature_costs is None:
        return None
    try:
        costs = np.asarray(feature_costs, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"feature_costs must be an array of numbers, one per feature; got {feature_costs!r}.") from error
    if costs.shape != (n_features,):
        raise ValueError(f"feature_costs must have shape ({n_features},), one cost per feature of X; got shape {costs.shape}.")
    if not np.isfinite(costs).all():
        raise ValueError(f"feature_costs must be finite; feature {int(np.flatnonzero(~np.isfinite(costs))[0])} costs {costs[~np.isfinite(costs)][0]}.")
    if (costs < 0).any():
        raise ValueError(f"feature_costs must be >= 0; feature {int(np.flatnonzero(costs < 0)[0])} costs {costs[costs < 0][0]}.")
    return costs


def features_used(trees: list) -> np.ndarray:
    """Bool (n_features,): the features some tree of ``trees`` splits on (needs at least one tree)."""
    used = np.zeros(len(trees[0].feature_gains), dtype=bool)
    for tree in trees:
        features = tree.nodes["feature"]
        used[features[features >= 0]] = True
    return used


class FeatureCosts:
    """A fit's feature costs and the features it has already paid for.

    Parameters
    ----------
    feature_costs : ndarray of shape (n_features,) or None
        Validated costs (``check_feature_costs``).
    cost_penalty : float
        lambda >= 0.
    n_features : int
    """

    def __init__(self, feature_costs: np.ndarray | None, cost_penalty: float, n_features: int) -> None:
        if feature_costs is None and cost_penalty > 0:
            raise ValueError(
                f"cost_penalty={cost_penalty} needs feature_costs, the cost of each feature; without them there is "
                "nothing to penalise (set feature_costs, or cost_penalty=0)."
            )
        self.costs = feature_costs
        self.used = np.zeros(n_features, dtype=bool)
        total = 0.0 if feature_costs is None else float(feature_costs.sum())
        self.active = cost_penalty > 0 and total > 0
        self._penalty = cost_penalty * feature_costs / total if self.active else None

    def penalty(self) -> np.ndarray | None:
        """The next tree's penalty per feature, ``lambda c~(f)``, 0 for features paid for; None when costs are off."""
        if not self.active:
            return None
        return np.where(self.used, 0.0, self._penalty)

    def pay_for(self, trees: list) -> None:
        """Mark the features ``trees`` split on as paid for."""
        if trees:
            self.used |= features_used(trees)


def tree_costs(trees: list, feature_costs: np.ndarray | None, paid: np.ndarray | None = None) -> np.ndarray:
    """``c(h_t)`` (Eq. 6.2) of each tree in order: the cost of the features it uses that
    no earlier tree uses, nor ``paid`` (bool per feature: an initial model's); zeros
    without costs. float64, shape (n_trees,)."""
    costs = np.zeros(len(trees))
    if feature_costs is None or not trees:
        return costs
    paid = np.zeros(len(feature_costs), dtype=bool) if paid is None else paid.copy()
    for t, tree in enumerate(trees):
        new = features_used([tree]) & ~paid
        costs[t] = feature_costs[new].sum()
        paid |= new
    return costs


class EarlyExit:
    """Early exits for ``predict(X, qid=..., early_exit=EarlyExit(...))``.

    Every ``every`` trees (iterations, for boosting), the bottom ``fraction`` of each
    query's still-active documents by partial score, ``floor(fraction * n_active)`` of
    them (ties broken by input order, earlier rows ranking higher), is frozen. A frozen
    document keeps its partial score and passes no more trees; so that it stays below
    every document of its query still active, its returned score is its partial score
    less ``(n_checkpoints - k) * D`` when it was frozen at checkpoint ``k`` of
    ``n_checkpoints``, with ``D`` the spread of all returned scores plus 1 (a shift the
    same for all documents frozen together, which keeps their order).

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
        if isinstance(every, bool) or not isinstance(every, Integral) or every < 1:
            raise ValueError(f"every must be an integer >= 1 (trees between exits); got {every!r}.")
        if isinstance(fraction, bool) or not isinstance(fraction, Real) or not 0 <= fraction < 1:
            raise ValueError(f"fraction must be a number in [0, 1) (the share frozen at each exit); got {fraction!r}.")
        self.every = int(every)
        self.fraction = float(fraction)

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
