"""Boosting objectives: per-document gradients and hessians of a ranking loss.

An objective is a small picklable object built from the estimator's parameters; at
fit time :meth:`~RankingObjective.prepare` precomputes what depends on the labels
only, and :meth:`~RankingObjective.gradients` fills ``g = dL/ds`` and ``h`` (a
positive curvature) for the current scores ``s``. The numba kernels run ``prange``
over queries (ARCHITECTURE.md §4: boosting parallelises inside an iteration; the
thread count is set by the estimator from ``n_jobs``).

* :class:`LambdaRank` — Burges, "From RankNet to LambdaRank to LambdaMART: An
  Overview" (MSR-TR-2010-82), Eq. 3 and §7: for each pair ``(i, j)`` with
  ``l_i > l_j``, ``lambda_ij = -sigma |dNDCG_ij| / (1 + exp(sigma (s_i - s_j)))``;
  the document that should rank higher gets ``+lambda_ij``, the other
  ``-lambda_ij``; ``h`` is ``sigma^2 |dNDCG_ij| rho (1 - rho)``. With LightGBM's
  defaults (``lambdarank_norm``): ``|dNDCG|`` is divided by ``0.01 + |s_i - s_j|``
  and each query's lambdas are scaled by ``log2(1 + S) / S`` (``S`` = sum of
  ``|lambda|``), and only pairs with a document ranked above the truncation level
  count.
* :class:`SquaredError` — MART on the grade (``target="grade"``) or on ``2^l - 1``
  (``target="exp_gain"``): ``L = 1/2 sum (s - t)^2``, ``g = s - t``, ``h = 1``
  (Friedman 2001; the PLRank paper §3.4 calls these MART-2 and MART-1).
"""

import numba
import numpy as np

from ._common import FLOAT_DTYPE, INDEX_DTYPE
from ._jit import jit


@jit(inline="always")
def _discount(rank):
    """``1 / log2(rank + 2)`` for a 0-based rank."""
    return 1.0 / np.log2(rank + 2.0)


@jit
def _inverse_max_dcg(labels, query_boundaries, cutoff, out):
    """``1 / max DCG@cutoff`` of every query (0 when the query has no relevant document).

    Parameters
    ----------
    labels : float64 array of shape (n_rows,), rows grouped by query
    query_boundaries : int64 array of shape (n_queries + 1,)
    cutoff : int
    out : float64 array of shape (n_queries,)
        Output.
    """
    for q in range(len(query_boundaries) - 1):
        ideal = -np.sort(-labels[query_boundaries[q] : query_boundaries[q + 1]])
        dcg = 0.0
        for rank in range(min(cutoff, len(ideal))):
            dcg += (2.0 ** ideal[rank] - 1.0) * _discount(rank)
        out[q] = 1.0 / dcg if dcg > 0.0 else 0.0


@jit(parallel=True)
def _lambdarank_gradients(
    scores, labels, gains, query_boundaries, inverse_max_dcg, discounts, sigma, truncation_level, normalize, gradients,
    hessians,
):  # fmt: skip
    """LambdaRank gradients and hessians of every document (module docstring).

    Parameters
    ----------
    scores, labels : float64 arrays of shape (n_rows,), rows grouped by query
    gains : float64 array of shape (n_rows,)
        ``2^l - 1`` of every row.
    query_boundaries : int64 array of shape (n_queries + 1,)
    inverse_max_dcg : float64 array of shape (n_queries,)
        ``1 / max DCG@truncation_level`` (``_inverse_max_dcg``).
    discounts : float64 array of shape (largest query size,)
        ``_discount`` of every rank, looked up instead of two logarithms per pair.
    sigma : float
        Steepness of the pairwise logistic.
    truncation_level : int
        Pairs count only if their better-ranked document is above this rank.
    normalize : bool
        LightGBM's ``lambdarank_norm``.
    gradients, hessians : float64 arrays of shape (n_rows,)
        Output.
    """
    for q in numba.prange(len(query_boundaries) - 1):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        n = end - start
        for i in range(start, end):
            gradients[i] = 0.0
            hessians[i] = 0.0
        if n < 2 or inverse_max_dcg[q] == 0.0:
            continue
        # Current ranking, ties in input order (stable), as LightGBM ranks them.
        order = np.argsort(-scores[start:end], kind="mergesort") + start
        spread = scores[order[0]] != scores[order[n - 1]]
        total = 0.0
        for i in range(min(n - 1, truncation_level)):
            a = order[i]
            for j in range(i + 1, n):
                b = order[j]
                if labels[a] == labels[b]:
                    continue
                if labels[a] > labels[b]:
                    high, low, high_rank, low_rank = a, b, i, j
                else:
                    high, low, high_rank, low_rank = b, a, j, i
                score_gap = scores[high] - scores[low]
                delta_ndcg = (
                    (gains[high] - gains[low])
                    * abs(discounts[high_rank] - discounts[low_rank])
                    * inverse_max_dcg[q]
                )
                if normalize and spread:
                    delta_ndcg /= 0.01 + abs(score_gap)
                rho = 1.0 / (1.0 + np.exp(sigma * score_gap))
                lambda_ = -sigma * delta_ndcg * rho
                curvature = sigma * sigma * delta_ndcg * rho * (1.0 - rho)
                gradients[high] += lambda_
                gradients[low] -= lambda_
                hessians[high] += curvature
                hessians[low] += curvature
                total -= 2.0 * lambda_
        if normalize and total > 0.0:
            factor = np.log2(1.0 + total) / total
            for i in range(start, end):
                gradients[i] *= factor
                hessians[i] *= factor


class RankingObjective:
    """Interface of the boosting objectives (see the module docstring)."""

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        """Precompute label-only quantities; ``labels`` float64 grouped by query."""
        self.labels_ = np.ascontiguousarray(labels, dtype=FLOAT_DTYPE)
        self.query_boundaries_ = np.ascontiguousarray(query_boundaries, dtype=INDEX_DTYPE)

    def initial_score(self) -> float:
        """Constant score the boosting starts from (without ``init``)."""
        return 0.0

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        """Fill ``gradients`` and ``hessians`` (float64, one per grouped row) at ``scores``."""
        raise NotImplementedError


class LambdaRank(RankingObjective):
    """LambdaRank-NDCG pair gradients (Burges 2010), LightGBM's ``lambdarank``.

    Parameters
    ----------
    sigma : float, default=1.0
    truncation_level : int, default=30
        Pairs whose better-ranked document is below this rank are skipped; the
        ideal DCG is taken at this cutoff.
    normalize : bool, default=True
        Divide ``|dNDCG|`` by ``0.01 + |s_i - s_j|`` and scale each query's lambdas
        by ``log2(1 + S) / S`` (LightGBM's ``lambdarank_norm``).
    """

    def __init__(self, sigma: float = 1.0, truncation_level: int = 30, normalize: bool = True) -> None:
        self.sigma = sigma
        self.truncation_level = truncation_level
        self.normalize = normalize

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        self.inverse_max_dcg_ = np.empty(len(query_boundaries) - 1)
        _inverse_max_dcg(self.labels_, self.query_boundaries_, self.truncation_level, self.inverse_max_dcg_)
        largest = int(np.diff(self.query_boundaries_).max(initial=1))
        self.discounts_ = 1.0 / np.log2(np.arange(largest) + 2.0)
        self.gains_ = 2.0**self.labels_ - 1.0

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        _lambdarank_gradients(
            scores, self.labels_, self.gains_, self.query_boundaries_, self.inverse_max_dcg_, self.discounts_, float(self.sigma),
            int(self.truncation_level), bool(self.normalize), gradients, hessians,
        )  # fmt: skip


class SquaredError(RankingObjective):
    """Least squares on the grade or on ``2^l - 1`` (MART).

    Parameters
    ----------
    target : {"grade", "exp_gain"}, default="grade"
    """

    def __init__(self, target: str = "grade") -> None:
        self.target = target

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        self.targets_ = self.labels_ if self.target == "grade" else 2.0**self.labels_ - 1.0

    def initial_score(self) -> float:
        """The mean target, the constant minimising the loss (Friedman 2001, Algorithm 2)."""
        return float(self.targets_.mean())

    def loss(self, scores: np.ndarray) -> float:
        """``1/2 sum (s - t)^2``."""
        return 0.5 * float(((scores - self.targets_) ** 2).sum())

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        np.subtract(scores, self.targets_, out=gradients)
        hessians[:] = 1.0
