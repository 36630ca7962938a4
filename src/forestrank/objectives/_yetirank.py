"""YetiRank: pair logistic loss over the neighbours of noisy rankings (``objectives/__init__.py``).

Gulin, Kuralenok & Pavlov, "Winning the transfer learning track of Yahoo!'s learning
to rank challenge with YetiRank" (JMLR W&CP 14, 2011), §3: at every iteration each
query is ranked ``n_permutations`` times by its scores plus noise, and every pair of
documents *adjacent* in such a ranking, of different grades, becomes a pair of the
logistic pair loss ``-w log sigma(s_i - s_j)`` (``i`` the better graded), with a weight
that decays down the noisy ranking (their Eq. 3 and 4). The paper leaves the
constants open; CatBoost's ``YetiRank`` fixes them and this follows it: logistic noise
``log(u / (1 - u))`` on each score, the pair weight ``0.15 decay^k |l_i - l_j| /
n_permutations`` for the ``k``-th adjacent pair from the top (``decay = 0.85``), and a
Newton step on ``h = sum w p (1 - p)``.
"""

import numba
import numpy as np

from .._numba.dtypes import FLOAT_DTYPE
from .._numba.jit import jit
from ._base import RankingObjective
from ._draws import RowLines

# CatBoost's factor on every pair weight (its "Classic" mode).
PAIR_WEIGHT = 0.15


@jit
def _noisy_ranking(scores, uniforms, start, end, noisy):
    """The rows ``start:end`` ranked by their scores plus logistic noise ``log(u / (1 - u))``.

    ``uniforms``: float64 (n_rows,), one draw on [0, 1) per row; ``noisy``: float64
    scratch of shape (end - start,). Returns the rows, int64 (end - start,), best first
    (ties in row order).
    """
    for i in range(start, end):
        u = uniforms[i]
        noisy[i - start] = scores[i] + np.log((u + 1e-300) / (1.0 - u))
    return np.argsort(-noisy, kind="mergesort") + start


@jit(parallel=True)
def _yetirank_gradients(scores, labels, query_boundaries, uniforms, decay, gradients, hessians, query_losses):
    """The pair-logistic gradients and hessians of one iteration's noisy rankings (module docstring).

    Parameters
    ----------
    scores, labels : float64 arrays of shape (n_rows,), rows grouped by query
    query_boundaries : int64 array of shape (n_queries + 1,)
    uniforms : float64 array of shape (n_permutations, n_rows)
        The uniform draws on [0, 1) of each ranking's noise, one per row.
    decay : float
        Weight factor from one adjacent pair to the next down a ranking.
    gradients, hessians : float64 arrays of shape (n_rows,)
        Output: ``g = dL/ds`` and the diagonal ``h = d2L/ds2``.
    query_losses : None or float64 array of shape (n_queries,)
        Unless None, receives each query's loss ``sum w log(1 + exp(s_j - s_i))``.
    """
    n_permutations = uniforms.shape[0]
    for q in numba.prange(len(query_boundaries) - 1):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        for i in range(start, end):
            gradients[i] = 0.0
            hessians[i] = 0.0
        if query_losses is not None:
            query_losses[q] = 0.0
        noisy = np.empty(end - start)
        for p in range(n_permutations):
            ranking = _noisy_ranking(scores, uniforms[p], start, end, noisy)
            weight = PAIR_WEIGHT / n_permutations
            for k in range(1, end - start):
                a = ranking[k - 1]
                b = ranking[k]
                difference = labels[a] - labels[b]
                if difference != 0.0:
                    better, worse = (a, b) if difference > 0.0 else (b, a)
                    pair_weight = weight * abs(difference)
                    # p = sigma(s_worse - s_better): the pair's probability of being misordered.
                    margin = scores[better] - scores[worse]
                    misordered = 1.0 / (1.0 + np.exp(margin))
                    if query_losses is not None:  # log(1 + e^-margin), without overflow
                        query_losses[q] += pair_weight * (max(-margin, 0.0) + np.log1p(np.exp(-abs(margin))))
                    gradients[better] -= pair_weight * misordered
                    gradients[worse] += pair_weight * misordered
                    curvature = pair_weight * misordered * (1.0 - misordered)
                    hessians[better] += curvature
                    hessians[worse] += curvature
                weight *= decay


class YetiRank(RankingObjective):
    """YetiRank (Gulin, Kuralenok & Pavlov 2011; CatBoost's ``YetiRank``).

    Parameters
    ----------
    n_permutations : int, default=10
        Noisy rankings of each query per iteration (CatBoost's ``permutations``).
    decay : float, default=0.85
        Weight factor between consecutive adjacent pairs of a ranking (CatBoost's ``decay``).
    random_state : numpy.random.SeedSequence, int or None, default=None
        Seed of the noise; every ``gradients`` call draws the next rankings.
    """

    draws_at_random = True
    shift_invariant = True

    def __init__(self, n_permutations: int = 10, decay: float = 0.85, random_state: object = None) -> None:
        self.n_permutations = n_permutations
        self.decay = decay
        self.random_state = random_state

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        share = self._share()
        self._noise = RowLines(self.random_state, share.n_rows, share.first_row, len(self.labels_))
        self.uniforms_ = np.full((self.n_permutations, len(self.labels_)), 0.5)

    def loss(self, scores: np.ndarray) -> float:
        """The weighted pair loss summed over queries, on the rankings of the last
        ``gradients`` call (before the first: noise-free rankings)."""
        scores = np.ascontiguousarray(scores, dtype=FLOAT_DTYPE)
        losses = np.empty(len(self.query_boundaries_) - 1)
        _yetirank_gradients(
            scores, self.labels_, self.query_boundaries_, self.uniforms_, float(self.decay), np.empty(len(scores)),
            np.empty(len(scores)), losses,
        )  # fmt: skip
        return float(losses.sum())

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        self.uniforms_ = np.stack([self._noise.next_line() for _ in range(self.n_permutations)])
        _yetirank_gradients(
            scores, self.labels_, self.query_boundaries_, self.uniforms_, float(self.decay), gradients, hessians, None
        )


@jit(parallel=True)
def _yetirank_pairs(scores, labels, query_boundaries, uniforms, decay, winners, losers, weights, n_pairs):
    """YetiRank's pairs of one draw of noisy rankings, each distinct pair once.

    Parameters
    ----------
    scores, labels, query_boundaries, uniforms, decay
        As ``_yetirank_gradients`` takes them.
    winners, losers : int64 arrays of shape (n_permutations * (n_rows - n_queries),)
    weights : float64 array of the same shape
        Written: query ``q``'s pairs from slot ``n_permutations * (start_q - q)`` on (the
        better graded row, the other, the summed weight ``0.15 decay^k |dl| / P`` of
        every ranking that put them next to each other), in the order of the pair's
        rows.
    n_pairs : int64 array of shape (n_queries,)
        Written: each query's distinct pairs.
    """
    n_permutations = uniforms.shape[0]
    for q in numba.prange(len(query_boundaries) - 1):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        size = end - start
        first_slot = n_permutations * (start - q)
        keys = np.empty(n_permutations * max(size - 1, 0), dtype=np.int64)
        key_weights = np.empty(len(keys))
        n_keys = 0
        noisy = np.empty(size)
        for p in range(n_permutations):
            ranking = _noisy_ranking(scores, uniforms[p], start, end, noisy)
            weight = PAIR_WEIGHT / n_permutations
            for k in range(1, size):
                a = ranking[k - 1]
                b = ranking[k]
                difference = labels[a] - labels[b]
                if difference != 0.0:
                    better, worse = (a, b) if difference > 0.0 else (b, a)
                    keys[n_keys] = (better - start) * size + (worse - start)
                    key_weights[n_keys] = weight * abs(difference)
                    n_keys += 1
                weight *= decay
        order = np.argsort(keys[:n_keys], kind="mergesort")
        count = 0
        for i in range(n_keys):
            key = keys[order[i]]
            if i > 0 and key == keys[order[i - 1]]:
                weights[first_slot + count - 1] += key_weights[order[i]]
                continue
            winners[first_slot + count] = start + key // size
            losers[first_slot + count] = start + key % size
            weights[first_slot + count] = key_weights[order[i]]
            count += 1
        n_pairs[q] = count


@jit(parallel=True)
def pair_gradients(scores, query_boundaries, pair_boundaries, winners, losers, weights, gradients, hessians):
    """The logistic pair loss's ``g = dL/ds`` and diagonal ``h`` over given pairs.

    ``pair_boundaries`` (int64, (n_queries + 1,)) groups the pairs (``winners``,
    ``losers``, ``weights``) by query; each pair adds ``-w p`` to its winner's gradient
    and ``w p`` to its loser's, ``w p (1 - p)`` to both hessians, ``p = sigma(s_loser -
    s_winner)``. ``gradients`` and ``hessians`` (float64, (n_rows,)) are written.
    """
    for q in numba.prange(len(query_boundaries) - 1):
        for i in range(query_boundaries[q], query_boundaries[q + 1]):
            gradients[i] = 0.0
            hessians[i] = 0.0
        for k in range(pair_boundaries[q], pair_boundaries[q + 1]):
            winner = winners[k]
            loser = losers[k]
            misordered = 1.0 / (1.0 + np.exp(scores[winner] - scores[loser]))
            gradients[winner] -= weights[k] * misordered
            gradients[loser] += weights[k] * misordered
            curvature = weights[k] * misordered * (1.0 - misordered)
            hessians[winner] += curvature
            hessians[loser] += curvature


class YetiRankPairwise(YetiRank):
    """YetiRankPairwise (CatBoost's ``YetiRankPairwise``): YetiRank's pairs, its trees
    grown and their leaves set by a solve over the pairs (``_tree/_pairwise.py``).

    Every ``gradients`` call draws the noisy rankings and keeps their distinct pairs
    (``pairs_``: winners, losers, weights, grouped by query) for the tree's splits; the
    leaves' values come from a second draw at the same scores (``leaf_pairs``), as in
    CatBoost. Parameters as :class:`YetiRank`.
    """

    pairwise = True

    def _draw_pairs(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One draw of the rankings' pairs: winners, losers (int64), weights (float64), and
        the pairs' query boundaries (int64, (n_queries + 1,)); ``uniforms_`` unchanged."""
        uniforms = np.stack([self._noise.next_line() for _ in range(self.n_permutations)])
        boundaries = self.query_boundaries_
        n_slots = self.n_permutations * (len(self.labels_) - (len(boundaries) - 1))
        winners = np.empty(n_slots, dtype=np.int64)
        losers = np.empty(n_slots, dtype=np.int64)
        weights = np.empty(n_slots)
        n_pairs = np.empty(len(boundaries) - 1, dtype=np.int64)
        scores = np.ascontiguousarray(scores, dtype=FLOAT_DTYPE)
        _yetirank_pairs(scores, self.labels_, boundaries, uniforms, float(self.decay), winners, losers, weights, n_pairs)
        self._last_uniforms = uniforms
        first_slots = self.n_permutations * (boundaries[:-1] - np.arange(len(boundaries) - 1))
        pair_boundaries = np.concatenate(([0], np.cumsum(n_pairs))).astype(np.int64)
        kept = np.repeat(first_slots - pair_boundaries[:-1], n_pairs) + np.arange(pair_boundaries[-1])
        return winners[kept], losers[kept], weights[kept], pair_boundaries

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        self.pairs_ = self._draw_pairs(scores)
        self.uniforms_ = self._last_uniforms  # ``loss`` reads the rankings of the tree's pairs
        winners, losers, weights, pair_boundaries = self.pairs_
        pair_gradients(scores, self.query_boundaries_, pair_boundaries, winners, losers, weights, gradients, hessians)

    def weighted_gradients(self, scores: np.ndarray, pairs: tuple, weights: np.ndarray) -> np.ndarray:
        """``g = dL/ds`` (float64, (n_rows,)) at ``scores`` of ``pairs`` (as ``pairs_``), each
        pair weighing ``weights`` (float64, (n_pairs,)) instead of its own weight."""
        winners, losers, _, pair_boundaries = pairs
        gradients = np.empty(len(scores))
        pair_gradients(scores, self.query_boundaries_, pair_boundaries, winners, losers, weights, gradients, np.empty(len(scores)))
        return gradients

    def leaf_pairs(self, scores: np.ndarray) -> tuple[tuple, np.ndarray]:
        """A new draw of pairs at ``scores`` for the leaf values, and its gradients
        (float64, (n_rows,))."""
        pairs = self._draw_pairs(scores)
        gradients = np.empty(len(scores))
        pair_gradients(scores, self.query_boundaries_, pairs[3], *pairs[:3], gradients, np.empty(len(scores)))
        return pairs, gradients
