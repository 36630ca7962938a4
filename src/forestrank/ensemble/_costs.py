"""Feature costs: the penalty of cost-aware splits, the features a model has paid for
and the cost of a model (Mohan's thesis, chapter 6; ``docs/costs.md``).

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

Early exits at prediction time are ``_early_exit.EarlyExit``.
"""

from collections.abc import Iterator

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


def nested_models(model: object) -> Iterator[object]:
    """``model`` and every model it predicts through, at any depth
    (``_nested_estimators``: a BROOF's forests, an AveragedRanker's members, a boosted
    model's ``init_``)."""
    yield model
    for _, part in model._nested_estimators() if hasattr(model, "_nested_estimators") else []:
        yield from nested_models(part)


def model_trees(model: object) -> list:
    """Every tree whose features ``model`` computes for a document: the ``trees_`` of
    ``nested_models(model)``; none for a model of no forestrank trees."""
    return [tree for part in nested_models(model) for tree in getattr(part, "trees_", [])]


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
        self.paid_by_init = None
        with np.errstate(over="ignore"):  # a sum past float64's range: shares of scaled costs below
            total = 0.0 if feature_costs is None else float(feature_costs.sum())
        self.active = cost_penalty > 0 and total > 0
        self._penalty = None
        if self.active:
            shares = feature_costs
            if not np.isfinite(total):  # finite costs whose sum overflows: their shares from costs scaled down
                shares = feature_costs / feature_costs.max()
                total = float(shares.sum())
            self._penalty = cost_penalty * shares / total

    def penalty(self) -> np.ndarray | None:
        """The next tree's penalty per feature, ``lambda c~(f)``, 0 for features paid for; None when costs are off."""
        if not self.active:
            return None
        return np.where(self.used, 0.0, self._penalty)

    def pay_for(self, trees: list) -> None:
        """Mark the features ``trees`` split on as paid for."""
        if trees:
            self.used |= features_used(trees)

    def pay_for_init(self, model: object) -> None:
        """Mark the features of an initial model's trees (``model_trees``) as paid for and keep
        them as ``paid_by_init`` (bool per feature, None when it has no forestrank trees),
        which ``tree_costs`` leaves out of the boosted trees' costs."""
        trees = model_trees(model)
        self.pay_for(trees)
        self.paid_by_init = self.used.copy() if trees else None


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
