"""LambdaRank's pair gradients and loss (Burges 2010; ``objectives/__init__.py``)."""

import numba
import numpy as np

from .._numba.jit import jit
from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE
from .._ranking import discount_table, fill_inverse_max_dcg, row_gains
from ._base import RankingObjective


@jit
def _softplus(x):
    """``log(1 + exp(x))`` without overflow."""
    return max(x, 0.0) + np.log1p(np.exp(-abs(x)))


@jit(parallel=True)
def _lambdarank_gradients(
    scores, labels, gains, query_boundaries, inverse_max_dcg, discounts, sigma, truncation_level, normalize, gradients,
    hessians, positions, propensities, position_losses, query_losses,
):  # fmt: skip
    """LambdaRank gradients and hessians of every document (module docstring); with
    ``positions``, Unbiased LambdaMART's (Hu et al., WWW 2019, Eq. 9-10).

    Parameters
    ----------
    scores, labels : float64 arrays of shape (n_rows,), rows grouped by query
    gains : float64 array of shape (n_rows,)
        ``G(l)`` of every row (``_ranking.row_gains``; ``2^l - 1`` by default).
    query_boundaries : int64 array of shape (n_queries + 1,)
    inverse_max_dcg : float64 array of shape (n_queries,)
        ``1 / max DCG@truncation_level`` (``_ranking.fill_inverse_max_dcg``).
    discounts : float64 array of shape (largest query size,)
        Discount of every 0-based rank (``_ranking.discount_table``), looked up
        instead of two logarithms per pair.
    sigma : float
        Steepness of the pairwise logistic.
    truncation_level : int
        Pairs count only if their better-ranked document is above this rank.
    normalize : bool
        LightGBM's ``lambdarank_norm``.
    gradients, hessians : float64 arrays of shape (n_rows,)
        Output.
    positions : None or int64 array of shape (n_rows,)
        The 0-based position each document was shown at (click data). None: plain
        LambdaRank (numba drops the branches by type).
    propensities : None or float64 array of shape (2, n_positions)
        ``t+`` (row 0) and ``t-`` (row 1) of every position: a pair (clicked ``i``,
        unclicked ``j``) counts ``1 / (t+[pos_i] t-[pos_j])``.
    position_losses : None or float64 array of shape (n_queries, 2, n_positions)
        Output: per query, the pair costs ``L_ij / t-[pos_j]`` summed at ``pos_i``
        (row 0) and ``L_ij / t+[pos_i]`` summed at ``pos_j`` (row 1), for the
        propensities' update (``LambdaRank.update_propensities``). ``L_ij`` is
        ``|dNDCG_ij| log(1 + exp(sigma (s_i - s_j)))``, XGBoost's cost for the update
        (the logistic cost of the reversed pair); with the pair's own RankNet cost the
        non-click propensities fell with the position and the model got worse
        (``benchmarks/RESULTS.md``, "Learning from clicks").
    query_losses : None or float64 array of shape (n_queries,)
        Output: each query's |dNDCG|-weighted RankNet cost over the pairs counted,
        ``sum |dNDCG_ij| log(1 + exp(-sigma (s_i - s_j)))``, before LightGBM's
        normalisations (``LambdaRank.loss``); None: not computed.
    """
    for q in numba.prange(len(query_boundaries) - 1):
        _query_gradients(
            q, query_boundaries[q], query_boundaries[q + 1], scores, labels, gains, inverse_max_dcg[q], discounts,
            sigma, truncation_level, normalize, gradients, hessians, positions, propensities, position_losses,
            query_losses,
        )  # fmt: skip


@jit(inline="always")
def _query_gradients(
    q, start, end, scores, labels, gains, inverse_max_dcg, discounts, sigma, truncation_level, normalize, gradients,
    hessians, positions, propensities, position_losses, query_losses,
):  # fmt: skip
    """The gradients and hessians of one query's documents, ``start:end`` of the rows
    (``_lambdarank_gradients``, whose arguments these are; ``inverse_max_dcg`` is the
    query's own). Every pair (``i`` better ranked, grades differing) adds
    ``lambda_ij = -sigma |dNDCG_ij| rho_ij`` to the better-graded document's gradient and
    subtracts it from the other's, ``rho_ij = 1 / (1 + exp(sigma (s_high - s_low)))``
    (Burges, MSR-TR-2010-82, Eq. 3 and §4); the hessians take
    ``sigma^2 |dNDCG_ij| rho_ij (1 - rho_ij)`` (§7).
    """
    n = end - start
    for i in range(start, end):
        gradients[i] = 0.0
        hessians[i] = 0.0
    if position_losses is not None:
        position_losses[q] = 0.0
    if query_losses is not None:
        query_losses[q] = 0.0
    if n < 2 or inverse_max_dcg == 0.0:
        return
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
            delta_ndcg = (gains[high] - gains[low]) * abs(discounts[high_rank] - discounts[low_rank]) * inverse_max_dcg
            if query_losses is not None:
                query_losses[q] += delta_ndcg * _softplus(-sigma * score_gap)
            if normalize and spread:
                delta_ndcg /= 0.01 + abs(score_gap)
            rho = 1.0 / (1.0 + np.exp(sigma * score_gap))
            if positions is not None:
                shown_high = positions[high]
                shown_low = positions[low]
                debias = 1.0 / (propensities[0, shown_high] * propensities[1, shown_low])
                # The reversed pair's logistic cost, log(1 + exp(sigma (s_i - s_j))), as
                # XGBoost's lambdarank_unbiased weighs the update (docs/boosting.md).
                pair_loss = delta_ndcg * _softplus(sigma * score_gap)
                position_losses[q, 0, shown_high] += pair_loss / propensities[1, shown_low]
                position_losses[q, 1, shown_low] += pair_loss / propensities[0, shown_high]
                delta_ndcg *= debias
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
    label_gain : {"exp", "linear"} or ndarray of shape (n_grades,), default="exp"
        The gain ``G(l)`` in ``|dNDCG|`` (``_ranking.row_gains``; LightGBM's
        ``label_gain``), validated by ``_input.labels.check_gain``.
    """

    learns_from_positions = True

    def __init__(
        self, sigma: float = 1.0, truncation_level: int = 30, normalize: bool = True, label_gain: object = "exp"
    ) -> None:
        self.sigma = sigma
        self.truncation_level = truncation_level
        self.normalize = normalize
        self.label_gain = label_gain

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        largest = int(np.diff(self.query_boundaries_).max(initial=1))
        self.discounts_ = discount_table(largest)
        self.gains_ = row_gains(self.labels_, self.query_boundaries_, self.label_gain)
        self.inverse_max_dcg_ = np.empty(len(query_boundaries) - 1)
        fill_inverse_max_dcg(
            self.labels_, self.gains_, self.query_boundaries_, self.truncation_level, self.discounts_,
            self.inverse_max_dcg_,
        )  # fmt: skip

    def loss(self, scores: np.ndarray) -> float:
        """The |dNDCG|-weighted RankNet cost of the pairs the gradients count, summed over
        queries (without LightGBM's normalisations, so its derivative is the lambdas'
        direction, not their scale)."""
        scores = np.ascontiguousarray(scores, dtype=FLOAT_DTYPE)
        losses = np.empty(len(self.query_boundaries_) - 1)
        _lambdarank_gradients(
            scores, self.labels_, self.gains_, self.query_boundaries_, self.inverse_max_dcg_, self.discounts_,
            float(self.sigma), int(self.truncation_level), False, np.empty(len(scores)), np.empty(len(scores)), None,
            None, None, losses,
        )  # fmt: skip
        return float(losses.sum())

    def show_positions(self, positions: np.ndarray, regularization: float) -> None:
        """Make the gradients Unbiased LambdaMART's (Hu et al., WWW 2019): labels are
        clicks, ``positions`` (int64, 1 = top, one per grouped row) where each document
        was shown; the propensities start at 1 and follow ``update_propensities``.
        ``regularization`` is the paper's ``p``: the update takes the ``1 / (p + 1)``
        power of the loss ratios."""
        self.positions_ = np.ascontiguousarray(positions - 1, dtype=INDEX_DTYPE)
        n_positions = int(self.positions_.max()) + 1
        self.propensities_ = np.ones((2, n_positions))
        self.regularization = regularization
        self._position_losses = np.zeros((len(self.query_boundaries_) - 1, 2, n_positions))

    def update_propensities(self) -> None:
        """Re-estimate ``t+`` and ``t-`` from the pair losses of the last ``gradients`` call
        (Hu et al., Eqs. 11-12): ``t+[k] = (S+[k] / S+[0]) ** (1 / (p + 1))`` with ``S+[k]``
        the losses of the pairs whose clicked document was at position ``k``, each divided
        by its unclicked document's ``t-``; ``t-`` likewise. A position no pair reached
        keeps its propensity."""
        sums = self._position_losses.sum(axis=0)
        for row in range(2):
            if sums[row, 0] > 0:
                seen = sums[row] > 0
                self.propensities_[row, seen] = (sums[row, seen] / sums[row, 0]) ** (1.0 / (self.regularization + 1.0))

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        unbiased = getattr(self, "positions_", None) is not None
        _lambdarank_gradients(
            scores, self.labels_, self.gains_, self.query_boundaries_, self.inverse_max_dcg_, self.discounts_, float(self.sigma),
            int(self.truncation_level), bool(self.normalize), gradients, hessians,
            self.positions_ if unbiased else None, self.propensities_ if unbiased else None,
            self._position_losses if unbiased else None, None,
        )  # fmt: skip
