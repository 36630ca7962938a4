"""Per-document errors of one BROOF round, each in [0, 1].

A round's weak learner (a random forest) is judged on its validation rows: the rows
with an out-of-bag prediction, or every training row (``BROOF(validation=...)``).
Each function takes the learner's target ``z`` and validation prediction ``p`` of
those rows and returns one error per row in [0, 1]; the round's error is their
weighted mean (de Sá, "Optimizing Ensembles of Boosted Additive Bagged Trees for
Learning-to-Rank", 2016, Algorithm 1; AdaBoost.R2, Drucker 1997, steps 3-4).
"""

import numpy as np

from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE
from .._numba.jit import jit


def absolute_errors(target: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    """Drucker's linear loss ``|z_i - p_i| / max_j |z_j - p_j|`` (AdaBoost.R2, step 4).

    Parameters
    ----------
    target, prediction : ndarray of shape (n_rows,), float64

    Returns
    -------
    ndarray of shape (n_rows,), float64
        All zeros when every prediction is exact.
    """
    residual = np.abs(target - prediction)
    largest = residual.max(initial=0.0)
    return residual / largest if largest > 0 else np.zeros_like(residual)


def median_region_errors(target: np.ndarray, prediction: np.ndarray) -> np.ndarray:
    """Error beyond the median region: ``max(0, r_i - m) / (max_j r_j - m)``.

    ``r_i = |z_i - p_i|`` and ``m`` is the median of the ``r``. Documents whose error
    is within the median (the region where half of them lie) count as correct; the
    others are in error in proportion to how far beyond it they are, reaching 1 at
    the worst document. Unlike the linear loss, one outlying document does not make
    every other error small.

    Parameters
    ----------
    target, prediction : ndarray of shape (n_rows,), float64

    Returns
    -------
    ndarray of shape (n_rows,), float64
    """
    residual = np.abs(target - prediction)
    if len(residual) == 0:
        return residual
    median = np.median(residual)
    spread = residual.max() - median
    if spread <= 0:
        return np.zeros_like(residual)
    return np.maximum(residual - median, 0.0) / spread


@jit
def _misordered_fractions(target, prediction, query_boundaries, errors):
    """Fill ``errors`` with each document's fraction of mis-ordered partners in its query.

    Parameters
    ----------
    target, prediction : float64 arrays of shape (n_rows,), grouped by query
    query_boundaries : int64 array of shape (n_queries + 1,)
    errors : float64 array of shape (n_rows,), output
    """
    for query in range(len(query_boundaries) - 1):
        start, stop = query_boundaries[query], query_boundaries[query + 1]
        for i in range(start, stop):
            partners = 0
            misordered = 0.0
            for j in range(start, stop):
                if target[j] == target[i]:
                    continue
                partners += 1
                if prediction[j] == prediction[i]:
                    misordered += 0.5
                elif (target[j] > target[i]) != (prediction[j] > prediction[i]):
                    misordered += 1.0
            errors[i] = misordered / partners if partners > 0 else 0.0


def height_errors(target: np.ndarray, prediction: np.ndarray, query_boundaries: np.ndarray) -> np.ndarray:
    """Ranking ("height") error of each document within its query.

    For a document, its partners are the documents of its query with a different
    target; the error is the fraction of them on the wrong side of it: less relevant
    documents scored above it, more relevant ones scored below it, a tied score
    counting one half (the expectation over the tied orderings). With binary
    relevance this is the number of irrelevant documents above a relevant one (its
    "height", Rudin 2009) or of relevant ones below an irrelevant one, divided by how
    many there could be. A document without partners has error 0. Cost: the sum over
    queries of the squared query sizes.

    Parameters
    ----------
    target, prediction : ndarray of shape (n_rows,), float64, grouped by query
    query_boundaries : ndarray of shape (n_queries + 1,), int64
        Offsets of the queries in the rows.

    Returns
    -------
    ndarray of shape (n_rows,), float64
    """
    errors = np.empty(len(target), dtype=FLOAT_DTYPE)
    _misordered_fractions(
        np.ascontiguousarray(target, dtype=FLOAT_DTYPE),
        np.ascontiguousarray(prediction, dtype=FLOAT_DTYPE),
        np.ascontiguousarray(query_boundaries, dtype=INDEX_DTYPE),
        errors,
    )
    return errors
