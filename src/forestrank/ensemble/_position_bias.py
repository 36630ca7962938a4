"""Position bias in click logs: LambdaMART learning from clicks with known display positions.

Clicks favour the top positions: a relevant document shown at rank 8 is clicked less
than an irrelevant one at rank 1. Two remedies, both estimated jointly with the trees
from ``fit(X, clicks, qid=qid, position=position)``:

- ``"unbiased"``: Unbiased LambdaMART (Hu, Wang, Peng & Li, "Unbiased LambdaMART: An
  Unbiased Pairwise Learning-to-Rank Algorithm", WWW 2019): each pair (clicked at
  ``i``, unclicked at ``j``) is weighted ``1 / (t+_i t-_j)``, and after every iteration
  the position propensities ``t+`` (of a click) and ``t-`` (of a non-click) are
  re-estimated from the pairs' losses (``objectives.LambdaRank.update_propensities``),
  relative to position 1; XGBoost's ``lambdarank_unbiased``.
- ``"factor"``: an additive bias per position learned with the trees, the scores the
  gradients see being ``s + b_position`` (LightGBM 4.1's position bias): after every
  iteration each ``b_k`` takes LightGBM's regularised Newton step,
  ``b_k -= learning_rate * (G_k + r n_k b_k) / (|H_k + r n_k| + 0.001)``, ``G_k`` and
  ``H_k`` the summed gradients and hessians of the ``n_k`` documents shown at ``k``
  and ``r`` the regularisation.

``predict`` never needs positions: the bias belongs to the logs, not to the documents.
"""

import numpy as np

from .._numba.dtypes import INDEX_DTYPE

# LightGBM's floor on a factor's curvature (a position whose documents have no pairs).
_CURVATURE_FLOOR = 1e-3


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
    return values.astype(INDEX_DTYPE)


class PositionBias:
    """The position-bias state of one fit (the module docstring's two modes).

    Parameters
    ----------
    mode : {"unbiased", "factor"}
    positions : int64 ndarray of shape (n_rows,)
        The training rows' display positions, grouped by query.
    objective : objectives.LambdaRank
        Prepared on the click labels.
    norm : float
        Unbiased LambdaMART's regularisation exponent ``p``.
    regularization : float
        The factors' L2 regularisation.
    learning_rate : float
        Shrinkage of the factors' Newton steps.
    """

    def __init__(self, mode: str, positions: np.ndarray, objective: object, norm: float, regularization: float, learning_rate: float) -> None:
        self.mode = mode
        self.positions = positions
        self.objective = objective
        self.regularization = regularization
        self.learning_rate = learning_rate
        if mode == "unbiased":
            objective.show_positions(positions, norm)
        else:
            self.factors = np.zeros(int(positions.max()))

    def shown_scores(self, raw: np.ndarray) -> np.ndarray:
        """The scores the gradients see, float64 (n_rows,): the model's, plus the factors."""
        if self.mode == "unbiased":
            return raw
        return raw + self.factors[self.positions - 1]

    def update(self, gradients: np.ndarray, hessians: np.ndarray, weights: np.ndarray) -> None:
        """After an iteration's gradients (float64, (n_rows,)): re-estimate the propensities,
        or take the factors' Newton step."""
        if self.mode == "unbiased":
            self.objective.update_propensities()
            return
        slots = self.positions - 1
        n_factors = len(self.factors)
        shown = np.bincount(slots, minlength=n_factors)
        penalty = self.regularization * shown  # L2 on each factor, per document shown there
        gradient_sums = np.bincount(slots, weights * gradients, minlength=n_factors) + self.factors * penalty
        hessian_sums = np.bincount(slots, weights * hessians, minlength=n_factors) + penalty
        self.factors -= self.learning_rate * gradient_sums / (np.abs(hessian_sums) + _CURVATURE_FLOOR)

    def learned(self) -> np.ndarray:
        """``position_bias_``: the click propensities ``t+`` relative to position 1
        (unbiased), or the additive factors (factor), one per position."""
        if self.mode == "unbiased":
            return self.objective.propensities_[0].copy()
        return self.factors.copy()

