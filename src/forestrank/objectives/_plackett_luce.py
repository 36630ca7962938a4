"""The top-k Plackett-Luce likelihood of PLRank (``objectives/__init__.py``)."""

from collections import namedtuple

import numba
import numpy as np

from .._numba.dtypes import INDEX_DTYPE
from .._numba.jit import jit
from ._base import RankingObjective
from ._compiled import register_gradients, register_leaf_curvature
from ._draws import RowLines


@jit(inline="always")
def _log_add(a, b):
    """``log(exp a + exp b)`` without overflow or underflow."""
    if a < b:
        a, b = b, a
    if b == -np.inf:
        return a
    return a + np.log1p(np.exp(b - a))


@jit
def _suffix_log_sums(scores, permutation, log_suffix):
    """``log_suffix[r] = log sum_{j >= r} exp s_pi(j)``, the log of context ``C_r``'s sum.

    Accumulated from the end in log space: exact whatever the spread of the scores,
    where ``exp(s - max s)`` would underflow to a zero context sum.
    """
    total = -np.inf
    for r in range(len(permutation) - 1, -1, -1):
        total = _log_add(total, scores[permutation[r]])
        log_suffix[r] = total


# Not cached, and called from Python through a cached caller, as LambdaRank's kernel is.
@jit(parallel=True, cache=False)
def _plackett_luce_gradients(scores, permutations, query_boundaries, contexts, context_boundaries, top_share, gradients, hessians):
    """Mean over permutations of the top-k Plackett-Luce gradient and diagonal hessian (module docstring).

    ``g_d = sum_C m_C p(d|C) / P - top_share[d]`` and ``h_d = sum_C m_C p(d|C)
    (1 - p(d|C)) / P`` over the distinct contexts ``C`` holding ``d``, each counted
    ``m_C`` times among the ``P`` permutations. O(n) per permutation, however many of
    its contexts are modelled: a document at position ``r`` of a permutation is in
    every context of that permutation starting at or before ``r``, and with ``L_c``
    the log of context ``c``'s sum, ``p(d|c) = q_r exp(L_r - L_c)`` where ``q_r =
    exp(s_d - L_r)``. So ``sum_c m_c p(d|c) / P = q_r a_r`` and ``sum_c m_c p(d|c)^2 /
    P = q_r^2 b_r`` with ``a_r = sum_{c <= r} m_c exp(L_r - L_c) / P`` and ``b_r`` the
    same with the exponent doubled, both carried along the permutation by multiplying
    with ``exp(L_r - L_{r-1}) <= 1`` (suffix sums shrink): no factor exceeds 1, so
    nothing overflows whatever the spread of the scores.

    Parameters
    ----------
    scores : float64 array of shape (n_rows,), rows grouped by query
    permutations : int64 array of shape (n_permutations, n_rows)
        ``permutations[p, start:end]`` lists the rows of the query at ``start:end`` in
        ground-truth order.
    query_boundaries : int64 array of shape (n_queries + 1,)
    contexts : int64 array of shape (n_contexts, 3)
        ``distinct_contexts``: (permutation, position in the query, multiplicity),
        grouped by query, then by permutation, then by position.
    context_boundaries : int64 array of shape (n_queries + 1,)
        Contexts of query ``q``: ``contexts[context_boundaries[q]:context_boundaries[q + 1]]``.
    top_share : float64 array of shape (n_rows,)
        Fraction of the permutations that place each row among the modelled positions.
    gradients, hessians : float64 arrays of shape (n_rows,)
        Output.
    """
    n_permutations = permutations.shape[0]
    for q in numba.prange(len(query_boundaries) - 1):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        for i in range(start, end):
            gradients[i] = 0.0
            hessians[i] = 0.0
        log_suffix = np.empty(end - start)
        c = context_boundaries[q]
        while c < context_boundaries[q + 1]:
            # One walk along permutation p, whose contexts are contexts[c:last].
            p = contexts[c, 0]
            last = c
            while last < context_boundaries[q + 1] and contexts[last, 0] == p:
                last += 1
            permutation = permutations[p, start:end]
            _suffix_log_sums(scores, permutation, log_suffix)
            first = contexts[c, 1]
            a = 0.0
            b = 0.0
            for r in range(first, end - start):
                if r > first:
                    decay = np.exp(log_suffix[r] - log_suffix[r - 1])
                    a *= decay
                    b *= decay * decay
                if c < last and contexts[c, 1] == r:
                    share = contexts[c, 2] / n_permutations
                    a += share
                    b += share
                    c += 1
                row = permutation[r]
                probability = np.exp(scores[row] - log_suffix[r])
                gradients[row] += probability * a
                hessians[row] += probability * a - probability * probability * b
        for i in range(start, end):
            gradients[i] -= top_share[i]


@jit
def _plackett_luce_loss(scores, permutations, query_boundaries, contexts, context_boundaries, top_share):
    """Mean over permutations of the top-k negative log-likelihood, summed over queries.

    ``sum_C m_C log sum_{d in C} exp s_d / P - sum_d top_share[d] s_d``; arguments as in
    ``_plackett_luce_gradients``.
    """
    n_permutations = permutations.shape[0]
    total = 0.0
    for q in range(len(query_boundaries) - 1):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        log_suffix = np.empty(end - start)
        summed = -1
        for c in range(context_boundaries[q], context_boundaries[q + 1]):
            p = contexts[c, 0]
            if p != summed:
                _suffix_log_sums(scores, permutations[p, start:end], log_suffix)
                summed = p
            total += contexts[c, 2] / n_permutations * log_suffix[contexts[c, 1]]
        for i in range(start, end):
            total -= top_share[i] * scores[i]
    return total


@jit
def _plackett_luce_leaf_curvature(
    scores, permutations, query_boundaries, contexts, context_boundaries, row_leaf, weights, curvature
):  # fmt: skip
    """Coupled second derivative ``sum_C m_C p'(1 - p') / P`` of the loss along each leaf's value (Eq. 9).

    Parameters
    ----------
    scores : float64 array of shape (n_rows,)
    permutations, query_boundaries, contexts, context_boundaries :
        As in ``_plackett_luce_gradients``.
    row_leaf : int64 array of shape (n_rows,)
        Leaf node of each row, -1 for rows outside the tree.
    weights : float64 array of shape (n_rows,)
        Row weights (constant within a query); a context counts with its query's weight.
    curvature : float64 array of shape (n_nodes,)
        Output: each query's share (mean over permutations) is added to it, query after
        query, so that a partition's sums continue those of the partitions before it.
    """
    n_permutations = permutations.shape[0]
    leaf_log_sum = np.full(len(curvature), -np.inf)  # log sum of exp s over a leaf's rows at positions >= r
    leaf_stamp = np.full(len(curvature), -1, dtype=np.int64)  # last walk that met the leaf
    stamp = 0
    for q in range(len(query_boundaries) - 1):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        n = end - start
        log_suffix = np.empty(n)
        present = np.empty(n, dtype=np.int64)  # leaves met so far in this walk
        context_share = np.zeros(n)  # share of the walked permutation's context at each position
        first = context_boundaries[q]
        while first < context_boundaries[q + 1]:
            # One walk per permutation holding contexts: its contexts are contexts[first:last].
            p = contexts[first, 0]
            last = first
            while last < context_boundaries[q + 1] and contexts[last, 0] == p:
                context_share[contexts[last, 1]] = contexts[last, 2] / n_permutations
                last += 1
            permutation = permutations[p, start:end]
            _suffix_log_sums(scores, permutation, log_suffix)
            weight = weights[permutation[0]]
            n_present = 0
            stamp += 1
            for r in range(n - 1, contexts[first, 1] - 1, -1):
                leaf = row_leaf[permutation[r]]
                if leaf >= 0:
                    if leaf_stamp[leaf] != stamp:
                        leaf_stamp[leaf] = stamp
                        leaf_log_sum[leaf] = -np.inf
                        present[n_present] = leaf
                        n_present += 1
                    leaf_log_sum[leaf] = _log_add(leaf_log_sum[leaf], scores[permutation[r]])
                if context_share[r] > 0.0:
                    for t in range(n_present):
                        share = np.exp(leaf_log_sum[present[t]] - log_suffix[r])
                        curvature[present[t]] += weight * context_share[r] * share * (1.0 - share)
                    context_share[r] = 0.0
            first = last


def distinct_contexts(
    permutations: np.ndarray, query_boundaries: np.ndarray, depths: np.ndarray, random_state: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct Plackett-Luce contexts of several ground-truth permutations (PLRank paper, Table 3).

    Context ``i`` of a permutation is the set of its documents from position ``i``
    on; the permutations differ only in the order of tied grades, so wherever the
    documents before ``i`` form the same set (always at the start of a grade, and
    often inside small tie groups) their contexts are the same set and are stored
    once, with their multiplicity. The loss then costs O(1) per distinct context
    (after O(n) per permutation), and the gradients O(n) per permutation.

    Equal prefix sets are found by Zobrist hashing (XOR of a random 64-bit key per
    row): equal sets have equal hashes; two different sets collide with probability
    2^-64.

    Parameters
    ----------
    permutations : int64 array of shape (n_permutations, n_rows)
        Rows of each query in ground-truth order, within the query's row range.
    query_boundaries : int64 array of shape (n_queries + 1,)
    depths : int64 array of shape (n_queries,)
        Positions modelled per query.
    random_state : int or None
        Seed of the hash keys.

    Returns
    -------
    contexts : int64 array of shape (n_contexts, 3)
        (permutation, position in the query, multiplicity) of each distinct context,
        its first permutation standing for all; grouped by query, then permutation,
        then position.
    context_boundaries : int64 array of shape (n_queries + 1,)
    top_share : float64 array of shape (n_rows,)
        Fraction of the permutations placing each row before its query's depth.
    """
    n_permutations, n_rows = permutations.shape
    starts = query_boundaries[:-1]
    n_instances = int(depths.sum())
    query_of_instance = np.repeat(np.arange(len(depths)), depths)
    position = np.arange(n_instances) - np.repeat(np.cumsum(depths) - depths, depths)
    absolute = starts[query_of_instance] + position
    keys = np.random.default_rng(random_state).integers(0, np.iinfo(np.uint64).max, n_rows, dtype=np.uint64, endpoint=True)
    hashes = np.empty((n_permutations, n_instances), dtype=np.uint64)
    top_share = np.zeros(n_rows)
    query_of_row = np.repeat(np.arange(len(depths)), np.diff(query_boundaries))
    modelled = np.arange(n_rows) - starts[query_of_row] < depths[query_of_row]
    for p in range(n_permutations):
        ordered_keys = keys[permutations[p]]
        exclusive = np.bitwise_xor.accumulate(ordered_keys) ^ ordered_keys  # XOR of the keys before each position
        hashes[p] = exclusive[absolute] ^ exclusive[starts[query_of_instance]]
        top_share[permutations[p][modelled]] += 1.0 / n_permutations
    # Per instance (query, position): group the permutations by hash.
    instance = np.tile(np.arange(n_instances), n_permutations)
    permutation = np.repeat(np.arange(n_permutations), n_instances)
    flat_hashes = hashes.reshape(-1)
    order = np.lexsort((permutation, flat_hashes, instance))
    instance, permutation, flat_hashes = instance[order], permutation[order], flat_hashes[order]
    new_group = np.ones(len(order), dtype=bool)
    new_group[1:] = (instance[1:] != instance[:-1]) | (flat_hashes[1:] != flat_hashes[:-1])
    group_starts = np.flatnonzero(new_group)
    multiplicity = np.diff(np.append(group_starts, len(order)))
    kept_instance = instance[group_starts]
    contexts = np.column_stack((permutation[group_starts], position[kept_instance], multiplicity)).astype(INDEX_DTYPE)
    query = query_of_instance[kept_instance]
    regroup = np.lexsort((contexts[:, 1], contexts[:, 0], query))
    contexts = np.ascontiguousarray(contexts[regroup])
    context_boundaries = np.searchsorted(query[regroup], np.arange(len(depths) + 1)).astype(INDEX_DTYPE)
    return contexts, context_boundaries, top_share


PlackettLuceState = namedtuple(
    "PlackettLuceState", ["permutations", "query_boundaries", "contexts", "context_boundaries", "top_share"]
)
PlackettLuceState.__doc__ = """``PlackettLuce.compiled_state()``: the prepared permutations and contexts its kernels read."""


@jit
def _plackett_luce_gradients_from_python(*arguments):
    """``_plackett_luce_gradients`` for Python, through a cached caller (``_lambdarank``'s)."""
    _plackett_luce_gradients(*arguments)


@register_gradients(PlackettLuceState)
def _plackett_luce_gradients_at(state, scores, gradients, hessians):
    _plackett_luce_gradients(
        scores, state.permutations, state.query_boundaries, state.contexts, state.context_boundaries, state.top_share,
        gradients, hessians,
    )  # fmt: skip


@register_leaf_curvature(PlackettLuceState)
def _plackett_luce_leaf_curvature_at(state, scores, row_leaf, weights, curvature):
    _plackett_luce_leaf_curvature(
        scores, state.permutations, state.query_boundaries, state.contexts, state.context_boundaries, row_leaf, weights,
        curvature,
    )  # fmt: skip
    return True


class PlackettLuce(RankingObjective):
    """Top-k Plackett-Luce likelihood (PLRank; module docstring).

    Parameters
    ----------
    top_k : int, default=30
        Positions of the ground-truth permutation whose choice is modelled.
    n_permutations : int, default=3
        Ground-truth permutations drawn (ties among equal grades in random order)
        once at ``prepare``; their objectives are averaged, each distinct context
        computed once (``contexts_``, see :func:`distinct_contexts`).
    skip_tied_tail : bool, default=True
        Stop a query's contexts where every remaining document has the query's
        lowest grade: any order of them is equally right, so their choice terms only
        fit the random tie order. Queries with a single grade then contribute nothing.
    random_state : int or None, default=None
        Seed of the permutation draws.
    """

    draws_at_random = True

    def __init__(
        self, top_k: int = 30, n_permutations: int = 3, skip_tied_tail: bool = True, random_state: int | None = None
    ) -> None:
        self.top_k = top_k
        self.n_permutations = n_permutations
        self.skip_tied_tail = skip_tied_tail
        self.random_state = random_state

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        n_rows = len(self.labels_)
        query = np.repeat(np.arange(len(self.query_boundaries_) - 1), np.diff(self.query_boundaries_))
        share = self._share()
        lines = RowLines(self.random_state, share.n_rows, share.first_row, n_rows)
        self.permutations_ = np.empty((self.n_permutations, n_rows), dtype=INDEX_DTYPE)
        for p in range(self.n_permutations):
            # Query first (keeps every query in its row range), then grade descending, ties at random.
            self.permutations_[p] = np.lexsort((lines.next_line(), -self.labels_, query))
        sizes = np.diff(self.query_boundaries_)
        depths = np.minimum(self.top_k, sizes)
        if self.skip_tied_tail:
            lowest = np.minimum.reduceat(self.labels_, self.query_boundaries_[:-1]) if n_rows else np.zeros(0)
            above_lowest = np.bincount(query, weights=self.labels_ > lowest[query], minlength=len(sizes))
            depths = np.minimum(depths, above_lowest.astype(INDEX_DTYPE))
        self.depths_ = np.ascontiguousarray(depths, dtype=INDEX_DTYPE)
        self.contexts_, self.context_boundaries_, self.top_share_ = distinct_contexts(
            self.permutations_, self.query_boundaries_, self.depths_, random_state=lines.following().integers(2**63)
        )

    def loss(self, scores: np.ndarray) -> float:
        """Mean over permutations of the summed top-k negative log-likelihood."""
        return float(
            _plackett_luce_loss(
                scores, self.permutations_, self.query_boundaries_, self.contexts_, self.context_boundaries_,
                self.top_share_,
            )
        )  # fmt: skip

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        _plackett_luce_gradients_from_python(
            scores, self.permutations_, self.query_boundaries_, self.contexts_, self.context_boundaries_,
            self.top_share_, gradients, hessians,
        )  # fmt: skip

    def compiled_state(self) -> PlackettLuceState:
        return PlackettLuceState(
            self.permutations_, self.query_boundaries_, self.contexts_, self.context_boundaries_, self.top_share_
        )

    def leaf_curvature(
        self, scores: np.ndarray, row_leaf: np.ndarray, weights: np.ndarray, n_nodes: int, carried: np.ndarray | None = None
    ) -> np.ndarray:
        curvature = np.zeros(n_nodes) if carried is None else carried.copy()
        _plackett_luce_leaf_curvature(
            scores, self.permutations_, self.query_boundaries_, self.contexts_, self.context_boundaries_, row_leaf,
            weights, curvature,
        )  # fmt: skip
        return curvature
