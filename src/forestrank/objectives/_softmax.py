"""McRank's multi-class logistic boosting (``objectives/__init__.py``)."""

import numpy as np

from ._base import RankingObjective, distinct_grades, expected_grade


def expected_relevance(raw: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_c weights[c] softmax(raw)_c`` per row; ``raw`` float64 (n_rows, n_classes),
    ``weights`` float64 (n_classes,), the grades for McRank's expected relevance."""
    shifted = np.exp(raw - raw.max(axis=1, keepdims=True))
    return expected_grade(shifted, weights) / shifted.sum(axis=1)


def softmax_probabilities(raw: np.ndarray) -> np.ndarray:
    """``softmax(raw)`` per row, float64 (n_rows, n_classes)."""
    shifted = np.exp(raw - raw.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


class Softmax(RankingObjective):
    """Multi-class logistic loss over the grades (McRank; module docstring).

    Parameters
    ----------
    grades : float64 ndarray of shape (n_grades,), sorted, or None
        The grades modelled; None: the distinct labels (a partition of a partitioned fit
        is given every partition's, which its own labels may not all hold).
    """

    def __init__(self, grades: np.ndarray | None = None) -> None:
        self.grades = grades

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        self.classes_ = distinct_grades(self.labels_, "mcrank") if self.grades is None else self.grades
        self.n_outputs = len(self.classes_)
        self.class_index_ = np.searchsorted(self.classes_, self.labels_)

    def initial_score(self, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Zero raw scores (uniform class probabilities), Friedman 2001, Algorithm 6."""
        return np.zeros(self.n_outputs)

    def probabilities(self, raw: np.ndarray) -> np.ndarray:
        return softmax_probabilities(raw)

    def loss(self, raw: np.ndarray) -> float:
        """``-sum log p_y`` over documents; ``raw`` of shape (n_rows, n_outputs)."""
        log_normaliser = np.log(np.exp(raw - raw.max(axis=1, keepdims=True)).sum(axis=1)) + raw.max(axis=1)
        return float((log_normaliser - raw[np.arange(len(raw)), self.class_index_]).sum())

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        probability = self.probabilities(scores)
        np.copyto(gradients, probability)
        gradients[np.arange(len(gradients)), self.class_index_] -= 1.0
        np.multiply(probability, 1.0 - probability, out=hessians)
        hessians *= self.n_outputs / (self.n_outputs - 1.0)


# (2**y - 1)**2 summed over a billion rows stays below float64's 2**1024 up to this grade.
