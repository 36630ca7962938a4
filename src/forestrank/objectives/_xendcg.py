"""XE-NDCG: the cross entropy between the scores' softmax and noisy gains (``objectives/__init__.py``).

Bruch, Wang, Bendersky & Najork, "An Alternative Cross Entropy Loss for
Learning-to-Rank" (WWW 2020; arXiv 1911.09798), §4: for one query with scores ``s``,
``rho = softmax(s)`` and the target distribution ``p_i = phi_i / sum_j phi_j`` with
``phi_i = 2^{l_i} - gamma_i``, ``gamma_i ~ U(0, 1)`` drawn anew at every iteration,
the loss is ``-sum_i p_i log rho_i`` (Eq. 9-10), a bound on NDCG whose noise breaks the
ties between documents of one grade. Its gradient is ``g = rho - p``; its Hessian
``H = diag(rho) - rho rho^T`` couples every pair of the query's documents, so the
boosting step, which divides leaf sums of gradients by leaf sums of a diagonal
curvature, is fed ``d * (x_0 + x_1 + x_2)`` with ``d = rho (1 - rho)`` the diagonal of
``H`` and ``x_0 + x_1 + x_2`` the first three terms of the Neumann series of
``H^{-1} g`` around that diagonal — the approximate inverse Hessian of LightGBM's
``rank_xendcg``, which the paper's experiments ran. With a gain other than the
exponential (``label_gain``), ``phi_i = G(l_i) + 1 - gamma_i``, which is the paper's for
``G = 2^l - 1``.
"""

import numba
import numpy as np

from .._numba.jit import jit
from .._numba.dtypes import FLOAT_DTYPE
from .._ranking import query_gain_scales, row_gains
from ._base import RankingObjective
from ._draws import RowLines


@jit(parallel=True)
def _xendcg_gradients(scores, phi, query_boundaries, gradients, hessians, query_losses):
    """XE-NDCG's corrected gradients and diagonal hessians of every document (module docstring).

    Parameters
    ----------
    scores : float64 array of shape (n_rows,), rows grouped by query
    phi : float64 array of shape (n_rows,)
        ``phi_i`` of every row at this iteration's noise, each query's scaled by one
        positive factor (which ``p`` cancels).
    query_boundaries : int64 array of shape (n_queries + 1,)
    gradients, hessians : float64 arrays of shape (n_rows,)
        Output.
    query_losses : None or float64 array of shape (n_queries,)
        Output: each query's cross entropy ``-sum_i p_i log rho_i``; None: not computed.
    """
    for q in numba.prange(len(query_boundaries) - 1):
        _query_xendcg(
            q, query_boundaries[q], query_boundaries[q + 1], scores, phi, gradients, hessians, query_losses
        )  # fmt: skip


@jit(inline="always")
def _query_xendcg(q, start, end, scores, phi, gradients, hessians, query_losses):
    """The gradients and hessians of one query's documents, ``start:end`` of the rows
    (``_xendcg_gradients``, whose arguments these are). A query of one document has
    none. ``hessians`` holds the series' intermediate terms until its last pass."""
    if query_losses is not None:
        query_losses[q] = 0.0
    if end - start < 2:
        for i in range(start, end):
            gradients[i] = 0.0
            hessians[i] = 0.0
        return
    largest = scores[start]
    phi_sum = 0.0
    for i in range(start, end):
        largest = max(largest, scores[i])
        phi_sum += phi[i]
    normaliser = 0.0
    for i in range(start, end):
        normaliser += np.exp(scores[i] - largest)
    log_normaliser = np.log(normaliser)
    rho = np.empty(end - start)
    # x_0 = g / d: its scaled terms g_i / (1 - rho_i) go to the scratch (hessians).
    first_sum = 0.0
    for i in range(start, end):
        r = np.exp(scores[i] - largest - log_normaliser)
        rho[i - start] = r
        target = phi[i] / phi_sum
        gradients[i] = r - target
        if query_losses is not None:
            query_losses[q] -= target * (scores[i] - largest - log_normaliser)
        hessians[i] = _over_complement(gradients[i], r)
        first_sum += hessians[i]
    # d x_1 = rho_i sum_{j != i} g_j / (1 - rho_j); then x_1's scaled terms.
    second_sum = 0.0
    for i in range(start, end):
        r = rho[i - start]
        term = r * (first_sum - hessians[i])
        gradients[i] += term
        hessians[i] = _over_complement(term, r)
        second_sum += hessians[i]
    # d x_2 = rho_i sum_{j != i} rho_j x_1j; then the diagonal of H.
    for i in range(start, end):
        r = rho[i - start]
        gradients[i] += r * (second_sum - hessians[i])
        hessians[i] = r * (1.0 - r)


@jit(inline="always")
def _over_complement(value, rho):
    """``value / (1 - rho)``; 0 for a document that holds all of the softmax's mass in
    float64 (``rho == 1``), whose series terms vanish with its ``d``."""
    complement = 1.0 - rho
    return value / complement if complement > 0.0 else 0.0


class XENDCG(RankingObjective):
    """XE-NDCG (Bruch, Wang, Bendersky & Najork 2020; LightGBM's ``rank_xendcg``).

    Parameters
    ----------
    label_gain : {"exp", "linear"} or ndarray of shape (n_grades,), default="exp"
        ``G(l)`` in ``phi = G(l) + 1 - gamma`` (``_ranking.row_gains``).
    random_state : numpy.random.SeedSequence, int or None, default=None
        Seed of the noise ``gamma``; every ``gradients`` call draws the next noise.
    """

    draws_at_random = True
    shift_invariant = True

    def __init__(self, label_gain: object = "exp", random_state: object = None) -> None:
        self.label_gain = label_gain
        self.random_state = random_state

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        self.gains_ = row_gains(self.labels_, self.query_boundaries_, self.label_gain)
        # phi's "1 - gamma" in the units of each query's gains, which row_gains scales by
        # a power of two per query.
        scales = query_gain_scales(self.labels_, self.query_boundaries_, self.label_gain)
        self.units_ = np.repeat(scales, np.diff(self.query_boundaries_))
        share = self._share()
        self._noise = RowLines(self.random_state, share.n_rows, share.first_row, len(self.labels_))
        self.gammas_ = np.full(len(self.labels_), 0.5)

    def _phi(self) -> np.ndarray:
        return self.gains_ + self.units_ * (1.0 - self.gammas_)

    def loss(self, scores: np.ndarray) -> float:
        """The cross entropy ``-sum_i p_i log rho_i`` summed over queries, at the noise of the
        last ``gradients`` call (``gamma = 1/2`` before the first)."""
        scores = np.ascontiguousarray(scores, dtype=FLOAT_DTYPE)
        losses = np.empty(len(self.query_boundaries_) - 1)
        _xendcg_gradients(
            scores, self._phi(), self.query_boundaries_, np.empty(len(scores)), np.empty(len(scores)), losses
        )
        return float(losses.sum())

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        self.gammas_ = self._noise.next_line()
        _xendcg_gradients(scores, self._phi(), self.query_boundaries_, gradients, hessians, None)
