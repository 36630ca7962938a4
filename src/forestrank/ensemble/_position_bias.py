"""Position bias in click logs: LambdaMART learning from clicks with known display positions.

Clicks favour the top positions: a relevant document shown at rank 8 is clicked less
than an irrelevant one at rank 1. Two remedies, both estimated jointly with the trees
from ``fit(X, clicks, qid=qid, position=position)``:

- ``"unbiased"``: Unbiased LambdaMART (Hu, Wang, Peng & Li, "Unbiased LambdaMART: An
  Unbiased Pairwise Learning-to-Rank Algorithm", WWW 2019): each pair (clicked at
  ``i``, unclicked at ``j``) is weighted ``1 / (t+_i t-_j)``, and after every iteration
  the position propensities ``t+`` (of a click) and ``t-`` (of a non-click) are
  re-estimated from the pairs' losses (``objectives.LambdaRank.position_loss_sums``),
  relative to position 1; XGBoost's ``lambdarank_unbiased``.
- ``"factor"``: an additive bias per position learned with the trees, the scores the
  gradients see being ``s + b_position`` (LightGBM 4.1's position bias): after every
  iteration each ``b_k`` takes LightGBM's regularised Newton step,
  ``b_k -= learning_rate * (G_k + r n_k b_k) / (|H_k + r n_k| + 0.001)``, ``G_k`` and
  ``H_k`` the summed gradients and hessians of the ``n_k`` documents shown at ``k``
  and ``r`` the regularisation.

``predict`` never needs positions: the bias belongs to the logs, not to the documents.

Each update is a function of sums over the rows (``statistics``), which partitions add
one after another in their order, and one step on those sums (``step``): a fit over
partitions on a cluster computes the statistics where the rows are, takes the step
once and hands every partition the new propensities or factors (``set_learned``).
"""

import numpy as np

from .._numba.dtypes import INDEX_DTYPE
from ._boosting_state import leaf_sums

# LightGBM's floor on a factor's curvature (a position whose documents have no pairs).
_CURVATURE_FLOOR = 1e-3


# The deepest display position a fit takes: the position bias keeps a value (two, for
# "unbiased") per position up to the largest one given, so a stray huge rank, a row id
# passed for a rank, would allocate without bound.
MAX_POSITION = 2**20


def check_positions(position: object, n_samples: int) -> np.ndarray:
    """Display positions as int64 (1 = top), one per row; a clear error otherwise."""
    values = np.asarray(position)
    if values.shape != (n_samples,):
        raise ValueError(f"position must have one entry per row of X ({n_samples}); got shape {values.shape}.")
    if not (np.issubdtype(values.dtype, np.integer) or np.issubdtype(values.dtype, np.floating)):
        raise ValueError(f"position must hold integers (1 = top); got dtype {values.dtype}.")
    if np.issubdtype(values.dtype, np.floating) and not (np.isfinite(values).all() and (values == np.round(values)).all()):
        raise ValueError("position must hold whole numbers (1 = top); got fractions, NaN or inf.")
    if len(values) and values.min() < 1:
        raise ValueError(f"position must be >= 1 (1 = top); got {values.min()}.")
    if len(values) and values.max() > MAX_POSITION:
        raise ValueError(
            f"position must be at most {MAX_POSITION:,} (the position bias keeps a value per position up to the deepest "
            f"one); got {values.max()}: is it a display rank?"
        )
    return values.astype(INDEX_DTYPE)


def check_top_position_shown(mode: str | None, lowest: int | None) -> None:
    """Refuse Unbiased LambdaMART's positions when none is 1 (``lowest``, the smallest
    position of the training rows; None without positions): its propensities are each
    position's relative to position 1 (Hu et al., Eqs. 11-12), and without documents
    there they stayed 1, the fit silently LambdaMART's without the bias."""
    if mode == "unbiased" and lowest is not None and lowest > 1:
        raise ValueError(
            f"position_bias='unbiased' estimates each position's click propensity relative to position 1, and no row "
            f"has position 1 (the smallest is {lowest}): number the positions from 1 (1 = top)."
        )


class PositionBias:
    """The position-bias state of one fit, or of one partition of a fit over partitions
    (the module docstring's two modes).

    Parameters
    ----------
    mode : {"unbiased", "factor"}
    positions : int64 ndarray of shape (n_rows,), or None
        The rows' display positions, grouped by query; None for the state of a fit over
        partitions that only takes the ``step`` (with ``objective`` None).
    objective : objectives.LambdaRank or None
        Prepared on the click labels.
    norm : float
        Unbiased LambdaMART's regularisation exponent ``p``.
    regularization : float
        The factors' L2 regularisation.
    learning_rate : float
        Shrinkage of the factors' Newton steps.
    n_positions : int or None
        The positions modelled: the largest of every partition's rows; None, the largest
        of ``positions``.
    """

    def __init__(
        self, mode: str, positions: np.ndarray, objective: object, norm: float, regularization: float,
        learning_rate: float, n_positions: int | None = None,
    ) -> None:  # fmt: skip
        self.mode = mode
        self.positions = positions
        self.objective = objective
        self.norm = norm
        self.regularization = regularization
        self.learning_rate = learning_rate
        n_positions = int(positions.max()) if n_positions is None else n_positions
        if mode == "unbiased":
            self.values = np.ones((2, n_positions))  # t+ and t-, read by the objective's gradients
            if objective is not None:
                objective.show_positions(positions, self.values)
        else:
            self.values = np.zeros(n_positions)  # the additive factors

    def shown_scores(self, raw: np.ndarray) -> np.ndarray:
        """The scores the gradients see, float64 (n_rows,): the model's, plus the factors."""
        if self.mode == "unbiased":
            return raw
        return raw + self.values[self.positions - 1]

    def update(self, gradients: np.ndarray, hessians: np.ndarray, weights: np.ndarray) -> None:
        """After an iteration's gradients (float64, (n_rows,)): re-estimate the propensities,
        or take the factors' Newton step."""
        self.step(self.statistics(gradients, hessians, weights))

    def statistics(
        self, gradients: np.ndarray, hessians: np.ndarray, weights: np.ndarray, carried: np.ndarray | None = None
    ) -> np.ndarray:  # fmt: skip
        """The row sums an update reads, added row after row to ``carried`` (the sums of
        the partitions before this one): the pair losses by position (unbiased, float64
        (2, n_positions)), or each position's summed ``w g``, ``w h`` and documents
        (factor, float64 (n_positions, 3)). ``gradients``, ``hessians`` and ``weights``:
        float64, (n_rows,)."""
        if self.mode == "unbiased":  # the weights are constant within a query (LambdaMART's fit checks)
            return self.objective.position_loss_sums(weights[self.objective.query_boundaries_[:-1]], carried)
        n_factors = len(self.values)
        return leaf_sums(self.positions - 1, weights * gradients, weights * hessians, np.ones(len(weights)), n_factors, carried)

    def step(self, sums: np.ndarray) -> None:
        """The update from every row's ``statistics``.

        Unbiased (Hu et al., Eqs. 11-12): ``t+[k] = (S+[k] / S+[0]) ** (1 / (p + 1))``,
        ``S+[k]`` the losses of the pairs whose clicked document was at position ``k``,
        each divided by its unclicked document's ``t-``; ``t-`` likewise; a position no
        pair reached keeps its propensity. Factor: LightGBM's regularised Newton step
        (module docstring).
        """
        if self.mode == "unbiased":
            for row in range(2):
                if sums[row, 0] > 0:
                    seen = sums[row] > 0
                    self.values[row, seen] = (sums[row, seen] / sums[row, 0]) ** (1.0 / (self.norm + 1.0))
            return
        penalty = self.regularization * sums[:, 2]  # L2 on each factor, per document shown there
        gradient_sums = sums[:, 0] + self.values * penalty
        hessian_sums = sums[:, 1] + penalty
        self.values -= self.learning_rate * gradient_sums / (np.abs(hessian_sums) + _CURVATURE_FLOOR)

    def set_learned(self, values: np.ndarray) -> None:
        """The propensities (float64, (2, n_positions)) or factors (float64, (n_positions,))
        of the fit's last step, in place (the objective reads the propensities' array)."""
        self.values[...] = values

    def learned(self) -> np.ndarray:
        """``position_bias_``: the estimates ``t+`` relative to position 1 (unbiased; the
        click propensities raised to ``1 / (position_bias_norm + 1)``), or the additive
        factors (factor), one per position."""
        return (self.values[0] if self.mode == "unbiased" else self.values).copy()
