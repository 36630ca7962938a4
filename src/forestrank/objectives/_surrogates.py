"""The PLRank paper's list-wise surrogates (cosine and KL, consistent or not; ``objectives/__init__.py``)."""

import numba
import numpy as np

from .._numba.dtypes import FLOAT_DTYPE
from .._numba.jit import jit
from .._ranking import normalized_gains
from ._base import RankingObjective


COSINE = 0
CROSS_ENTROPY = 1


@jit(parallel=True)
def _surrogate_gradients(scores, targets, query_boundaries, kind, gradients, hessians, losses):
    """Gradients, hessians and per-query losses of the cosine and cross-entropy surrogates.

    Parameters
    ----------
    scores : float64 array of shape (n_rows,), rows grouped by query
    targets : float64 array of shape (n_rows,)
        Each document's target weight ``t`` (``ListwiseSurrogate``): its gain over the
        query's 2-norm or total gain (inconsistent), or over its max DCG (consistent).
    query_boundaries : int64 array of shape (n_queries + 1,)
    kind : int
        ``COSINE``: ``L = 1/2 (1 - <s / |s|_2, t>)``, ``g = -(t - <s_hat, t> s_hat) / (2 |s|_2)``,
        ``h = 1 / (2 |s|_2^2)`` (a positive curvature on the loss' scale: the step
        ``-g/h`` moves ``s`` by ``|s|_2 (t - <s_hat, t> s_hat)``).
        ``CROSS_ENTROPY``: ``L = -sum_i t_i log p_i``, ``p = softmax(s)``,
        ``g = T p - t``, ``h = T p (1 - p)``, ``T = sum_i t_i``.
    gradients, hessians : float64 arrays of shape (n_rows,)
        Output; 0 for a query without gain (no target).
    losses : float64 array of shape (n_queries,)
        Output: each query's loss (0 without gain).
    """
    for q in numba.prange(len(query_boundaries) - 1):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        total = 0.0
        for i in range(start, end):
            gradients[i] = 0.0
            hessians[i] = 0.0
            total += targets[i]
        losses[q] = 0.0
        if total <= 0.0:
            continue
        if kind == COSINE:
            norm = 0.0
            inner = 0.0
            for i in range(start, end):
                norm += scores[i] * scores[i]
                inner += scores[i] * targets[i]
            norm = np.sqrt(norm)
            if norm <= 0.0:  # no direction to turn: start the scores away from 0 (initial_score)
                continue
            cosine = inner / norm
            losses[q] = 0.5 * (1.0 - cosine)
            for i in range(start, end):
                gradients[i] = -(targets[i] - cosine * scores[i] / norm) / (2.0 * norm)
                hessians[i] = 1.0 / (2.0 * norm * norm)
        else:
            largest = scores[start]
            for i in range(start, end):
                largest = max(largest, scores[i])
            normaliser = 0.0
            for i in range(start, end):
                normaliser += np.exp(scores[i] - largest)
            log_normaliser = largest + np.log(normaliser)
            for i in range(start, end):
                probability = np.exp(scores[i] - log_normaliser)
                losses[q] -= targets[i] * (scores[i] - log_normaliser)
                gradients[i] = total * probability - targets[i]
                hessians[i] = total * probability * (1.0 - probability)


class ListwiseSurrogate(RankingObjective):
    """The cosine and KL listwise surrogates, inconsistent or NDCG-consistent (the PLRank
    paper's CosMART, c-CosMART, KLMART and c-KLMART, §3.4 and Table 1).

    With ``G = 2^l - 1`` per query and ``t`` its target weights, both losses are
    Ravikumar, Tewari & Yang's (AISTATS 2011) forms:

    * cosine (RankCosine, Qin et al. 2008): ``L_q = 1/2 (1 - <s, t> / |s|_2)`` with
      ``t = G / |G|_2`` (``consistent=False``: the cosine between scores and gains) or
      ``t = G / |G|_D`` (``consistent=True``);
    * KL (ListNet's top-one cross entropy, Cao et al. 2007): ``L_q = -sum_i t_i log
      softmax(s)_i`` with ``t = G / sum G`` (``consistent=False``: the KL divergence from
      the gains' top-one distribution, up to a constant of the labels) or ``t = G / |G|_D``.

    ``|G|_D`` is the ideal DCG of the whole list. Normalising by it is what makes each
    surrogate NDCG-consistent: the minimiser of the expected loss then orders documents
    by the conditional mean of ``G / |G|_D``, which is the Bayes-optimal order for NDCG;
    normalising by ``|G|_2`` or ``sum G``, which vary with the labels differently from
    ``|G|_D``, does not. Queries without gain have no target and contribute nothing.
    Gradients and hessians: ``_surrogate_gradients``.

    Parameters
    ----------
    kind : {"cosine", "kl"}
    consistent : bool
    label_gain : {"exp", "linear"} or ndarray of shape (n_grades,), default="exp"
        ``G(l)``: ``2^l - 1``, ``l`` or a table (``_ranking.row_gains``).
    """

    @property
    def shift_invariant(self) -> bool:
        """The cross entropy of a softmax is; the cosine, of the scores' direction from 0, is not."""
        return self.kind == "kl"

    def __init__(self, kind: str = "cosine", consistent: bool = False, label_gain: object = "exp") -> None:
        self.kind = kind
        self.consistent = consistent
        self.label_gain = label_gain

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        norm = "dcg" if self.consistent else ("l2" if self.kind == "cosine" else "sum")
        self.targets_ = normalized_gains(self.labels_, self.query_boundaries_, norm, self.label_gain)
        self._kind = COSINE if self.kind == "cosine" else CROSS_ENTROPY

    def initial_score(self, sample_weight: np.ndarray | None = None) -> float:
        """1 for the cosine (scores of norm 0 have no direction), 0 for KL."""
        return 1.0 if self.kind == "cosine" else 0.0

    def _evaluate(self, scores: np.ndarray) -> tuple:
        """(gradients, hessians, per-query losses) at ``scores``."""
        gradients = np.empty(len(scores))
        hessians = np.empty(len(scores))
        losses = np.empty(len(self.query_boundaries_) - 1)
        _surrogate_gradients(
            np.ascontiguousarray(scores, dtype=FLOAT_DTYPE), self.targets_, self.query_boundaries_, self._kind,
            gradients, hessians, losses,
        )  # fmt: skip
        return gradients, hessians, losses

    def loss(self, scores: np.ndarray) -> float:
        """The surrogate summed over queries."""
        return float(self._evaluate(scores)[2].sum())

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        _surrogate_gradients(
            scores, self.targets_, self.query_boundaries_, self._kind, gradients, hessians,
            np.empty(len(self.query_boundaries_) - 1),
        )  # fmt: skip
