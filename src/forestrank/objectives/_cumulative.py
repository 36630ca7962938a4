"""Mohan's classification boosting: one least-squares regression per cumulative grade
(``objectives/__init__.py``)."""

import numpy as np

from ._base import RankingObjective, distinct_grades, mean_target


def cumulative_probabilities(raw: np.ndarray) -> np.ndarray:
    """Grade probabilities from the regressions on ``[y <= c]``.

    Each regression estimates ``P(y <= c)``, but nothing keeps the estimates in [0, 1]
    or rising with ``c``. The monotone correction clips each to [0, 1] and takes the
    running maximum over ``c``, so that ``P(y = c) = P(y <= c) - P(y <= c - 1)``
    (Mohan's thesis, Eqs. 3.2-3.3, with ``P(y <= c_max) = 1``) is non-negative and the
    probabilities of a row sum to 1.

    Parameters
    ----------
    raw : float64 ndarray of shape (n_rows, n_grades - 1)
        The regressions' predictions, one column per grade below the largest, grades
        ascending.

    Returns
    -------
    float64 ndarray of shape (n_rows, n_grades)
    """
    cumulative = np.maximum.accumulate(np.clip(raw, 0.0, 1.0), axis=1)
    n_rows = len(raw)
    bounded = np.hstack([np.zeros((n_rows, 1)), cumulative, np.ones((n_rows, 1))])
    return np.diff(bounded, axis=1)


class CumulativeSquaredError(RankingObjective):
    """Least squares on ``r_c = [y <= c]`` for every grade ``c`` below the largest, one raw
    score (one tree per iteration) per ``c``: Mohan's classification boosting (thesis,
    ch. 3, Algorithm 5; Mohan, Chen & Weinberger, "Web-Search Ranking with Initialized
    Gradient Boosted Regression Trees", JMLR W&CP 14, 2011, §4). Each output is MART on
    a binary target, ``g = s_c - r_c``, ``h = 1``; the grade probabilities are
    :func:`cumulative_probabilities` of the outputs. Grades are the distinct values of
    ``y`` (``classes_``), which need not be integers.

    Parameters
    ----------
    grades : float64 ndarray of shape (n_grades,), sorted, or None
        As ``Softmax``'s.
    """

    starts_from_mean_target = True

    def __init__(self, grades: np.ndarray | None = None) -> None:
        self.grades = grades

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        self.classes_ = distinct_grades(self.labels_, "cumulative") if self.grades is None else self.grades
        self.n_outputs = len(self.classes_) - 1
        self.targets_ = (self.labels_[:, None] <= self.classes_[None, :-1]).astype(np.float64)

    def initial_score(self, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The share of rows at or below each grade, weighted by ``sample_weight``: the
        constants minimising each weighted loss."""
        return mean_target(self.targets_, sample_weight)

    def loss(self, raw: np.ndarray) -> float:
        """``1/2 sum_c sum (s_c - r_c)^2``; ``raw`` of shape (n_rows, n_outputs) (or (n_rows,)
        with one output)."""
        return 0.5 * float(((np.reshape(raw, self.targets_.shape) - self.targets_) ** 2).sum())

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        """``scores``, ``gradients`` and ``hessians`` of shape (n_rows, n_outputs), or (n_rows,)
        with two grades (one output, passed flat as every single-output objective's)."""
        np.subtract(scores, self.targets_.reshape(scores.shape), out=gradients)
        hessians[:] = 1.0
