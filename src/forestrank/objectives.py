"""Boosting objectives: per-document gradients and hessians of a ranking loss.

An objective is a small picklable object built from the estimator's parameters; at
fit time :meth:`~RankingObjective.prepare` precomputes what depends on the labels
only, and :meth:`~RankingObjective.gradients` fills ``g = dL/ds`` and ``h`` (a
positive curvature) for the current scores ``s``. The numba kernels run ``prange``
over queries (``docs/design.md``, "Parallelism": boosting parallelises inside an iteration; the
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
* :class:`PlackettLuce` — the top-k Plackett-Luce (ListMLE) likelihood of the PLRank
  paper (Xia, Zhai & Wang, "Plackett-Luce model for learning-to-rank task", 2019):
  for a ground-truth permutation ``pi`` (grades descending, ties in random order)
  ``L = -sum_{i<k} [s_pi(i) - log sum_{j>=i} exp s_pi(j)]``; the gradient (Eq. 7) is
  ``g_d = sum_{C ni d} p(d|C) - [d among the top k]`` over the contexts
  ``C_i = {pi(i), pi(i+1), ...}``, ``i < k``, with ``p(d|C) = exp s_d / sum_C exp s``.
  A leaf's Newton step (Eq. 9) needs ``L'' = sum_C p'(1 - p')`` with
  ``p' = sum_{d in leaf and C} p(d|C)``, which couples the leaf's documents
  (:meth:`PlackettLuce.leaf_curvature`); the per-document hessians
  ``sum_C p(1 - p)`` only guide the splits. Several permutations average their
  objectives; their contexts are stored once per distinct set with a multiplicity
  (the paper's Table 3; :func:`distinct_contexts`), since permutations that differ
  only in the order of tied grades share every context that starts at a grade
  boundary. Context sums are log-sum-exps accumulated from the end of the
  permutation and every probability is ``exp(s - log sum)``: scores grow without
  bound and spread widely (a shared ``exp(s - max s)`` underflows to zero sums).
* :class:`Softmax` — McRank (Li, Burges & Wu, "McRank: Learning to Rank Using
  Multiple Classification and Gradient Boosting", NIPS 2007): K-class logistic
  boosting with one raw score per grade (Friedman 2001, Algorithm 6):
  ``p = softmax(F)``, ``g_k = p_k - [y = k]``, ``h_k = K/(K-1) p_k (1 - p_k)`` (the
  ``(K-1)/K`` factor of Friedman's leaf step); documents are ranked by their
  expected relevance ``sum_c c p_c`` (McRank §3; Mohan's thesis, ch. 3).
* :class:`SquaredError` — MART on the grade (``target="grade"``) or on ``2^l - 1``
  (``target="exp_gain"``): ``L = 1/2 sum (s - t)^2``, ``g = s - t``, ``h = 1``
  (Friedman 2001; the PLRank paper §3.4 calls these MART-2 and MART-1).
"""

from abc import ABC, abstractmethod

import numba
import numpy as np

from ._common import FLOAT_DTYPE, INDEX_DTYPE
from ._jit import jit
from .metrics._discount import discount_table, exp_gains


@jit
def _inverse_max_dcg(labels, gains, query_boundaries, cutoff, discounts, out):
    """``1 / max DCG@cutoff`` of every query (0 when the query has no relevant document).

    Parameters
    ----------
    labels : float64 array of shape (n_rows,), rows grouped by query
    gains : float64 array of shape (n_rows,)
        The rows' gains (``metrics._discount.exp_gains``).
    query_boundaries : int64 array of shape (n_queries + 1,)
    cutoff : int
    discounts : float64 array of shape (>= min(cutoff, largest query),)
        Discount of each 0-based rank (``metrics._discount.discount_table``).
    out : float64 array of shape (n_queries,)
        Output.
    """
    for q in range(len(query_boundaries) - 1):
        query_labels = labels[query_boundaries[q] : query_boundaries[q + 1]]
        # The stable argsort the gradients use: np.sort would compile a second sort.
        ideal = np.argsort(-query_labels, kind="mergesort")
        dcg = 0.0
        for rank in range(min(cutoff, len(ideal))):
            dcg += gains[query_boundaries[q] + ideal[rank]] * discounts[rank]
        out[q] = 1.0 / dcg if dcg > 0.0 else 0.0


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
        ``2^l - 1`` of every row.
    query_boundaries : int64 array of shape (n_queries + 1,)
    inverse_max_dcg : float64 array of shape (n_queries,)
        ``1 / max DCG@truncation_level`` (``_inverse_max_dcg``).
    discounts : float64 array of shape (largest query size,)
        Discount of every 0-based rank (``metrics._discount.discount_table``), looked up
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
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        n = end - start
        for i in range(start, end):
            gradients[i] = 0.0
            hessians[i] = 0.0
        if position_losses is not None:
            position_losses[q] = 0.0
        if query_losses is not None:
            query_losses[q] = 0.0
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


@jit(parallel=True)
def _plackett_luce_gradients(scores, permutations, query_boundaries, contexts, context_boundaries, top_share, gradients, hessians):
    """Mean over permutations of the top-k Plackett-Luce gradient and diagonal hessian (module docstring).

    ``g_d = sum_C m_C p(d|C) / P - top_share[d]`` and ``h_d = sum_C m_C p(d|C)
    (1 - p(d|C)) / P`` over the distinct contexts ``C`` holding ``d``, each counted
    ``m_C`` times among the ``P`` permutations; every ``p(d|C) = exp(s_d -
    log_suffix)`` is formed in log space. O(n) per distinct context.

    Parameters
    ----------
    scores : float64 array of shape (n_rows,), rows grouped by query
    permutations : int64 array of shape (n_permutations, n_rows)
        ``permutations[p, start:end]`` lists the rows of the query at ``start:end`` in
        ground-truth order.
    query_boundaries : int64 array of shape (n_queries + 1,)
    contexts : int64 array of shape (n_contexts, 3)
        ``distinct_contexts``: (permutation, position in the query, multiplicity),
        grouped by query, then by permutation.
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
        summed = -1  # permutation whose suffix sums log_suffix holds
        for c in range(context_boundaries[q], context_boundaries[q + 1]):
            p = contexts[c, 0]
            permutation = permutations[p, start:end]
            if p != summed:
                _suffix_log_sums(scores, permutation, log_suffix)
                summed = p
            position = contexts[c, 1]
            share = contexts[c, 2] / n_permutations
            log_sum = log_suffix[position]
            for r in range(position, end - start):
                row = permutation[r]
                probability = np.exp(scores[row] - log_sum)
                gradients[row] += share * probability
                hessians[row] += share * probability * (1.0 - probability)
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
        Output, zeroed here; mean over permutations.
    """
    n_permutations = permutations.shape[0]
    curvature[:] = 0.0
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
    once, with their multiplicity. The objectives then cost O(n) per distinct
    context instead of per permutation and position.

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


def normalized_gains(labels: np.ndarray, query_boundaries: np.ndarray, norm: str) -> np.ndarray:
    """``G(l) = 2^l - 1`` of every grouped row over its query's norm: ``"dcg"`` the DCG
    normaliser ``|G|_D`` (the ideal DCG of the whole list), ``"l2"`` the 2-norm, ``"sum"``
    the total gain. A query without gain gets zeros. float64, shape (n_rows,). The gains
    are scaled per query (``metrics._discount.exp_gains``), which the norm cancels
    exactly, so any grade gives finite targets."""
    gains = exp_gains(labels, query_boundaries)
    sizes = np.diff(query_boundaries)
    if norm == "dcg":
        inverse = np.empty(len(sizes))
        largest = int(sizes.max(initial=1))
        _inverse_max_dcg(labels, gains, query_boundaries, largest, discount_table(largest), inverse)
    else:
        per_query = np.add.reduceat(gains**2 if norm == "l2" else gains, query_boundaries[:-1])
        per_query = np.sqrt(per_query) if norm == "l2" else per_query
        inverse = np.divide(1.0, per_query, out=np.zeros(len(sizes)), where=per_query > 0)
    return gains * np.repeat(inverse, sizes)


def expected_relevance(raw: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """``sum_c classes[c] softmax(raw)_c`` per row; ``raw`` float64 (n_rows, n_classes)."""
    shifted = np.exp(raw - raw.max(axis=1, keepdims=True))
    return (shifted @ classes) / shifted.sum(axis=1)


class RankingObjective(ABC):
    """Interface of the boosting objectives (see the module docstring).

    ``n_outputs`` raw scores per document: 1, or one per grade (``Softmax``), in which
    case ``gradients`` takes and fills arrays of shape (n_rows, n_outputs).
    """

    n_outputs = 1

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        """Precompute label-only quantities; ``labels`` float64 grouped by query."""
        self.labels_ = np.ascontiguousarray(labels, dtype=FLOAT_DTYPE)
        self.query_boundaries_ = np.ascontiguousarray(query_boundaries, dtype=INDEX_DTYPE)

    def initial_score(self) -> float:
        """Constant score the boosting starts from (without ``init``)."""
        return 0.0

    @abstractmethod
    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        """Fill ``gradients`` and ``hessians`` (float64, one per grouped row) at ``scores``."""

    def leaf_curvature(
        self, scores: np.ndarray, row_leaf: np.ndarray, weights: np.ndarray, n_nodes: int
    ) -> np.ndarray | None:
        """Second derivative of the loss along each leaf's value, when it is not the sum of the
        leaf's hessians (None: it is). Arrays float64/int64, one per grouped row."""
        return None


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
        largest = int(np.diff(self.query_boundaries_).max(initial=1))
        self.discounts_ = discount_table(largest)
        self.gains_ = exp_gains(self.labels_, self.query_boundaries_)
        self.inverse_max_dcg_ = np.empty(len(query_boundaries) - 1)
        _inverse_max_dcg(
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


class Softmax(RankingObjective):
    """Multi-class logistic loss over the grades (McRank; module docstring)."""

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        self.classes_ = np.unique(self.labels_)
        if len(self.classes_) < 2:
            raise ValueError(
                f"y has one class ({self.classes_.tolist()}); objective='mcrank' needs at least two distinct grades."
            )
        self.n_outputs = len(self.classes_)
        self.class_index_ = np.searchsorted(self.classes_, self.labels_)

    def initial_score(self) -> np.ndarray:
        """Zero raw scores (uniform class probabilities), Friedman 2001, Algorithm 6."""
        return np.zeros(self.n_outputs)

    def probabilities(self, raw: np.ndarray) -> np.ndarray:
        shifted = np.exp(raw - raw.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

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
_LARGEST_SQUARED_EXP_GRADE = 480


class SquaredError(RankingObjective):
    """Least squares on the grade, on ``G(l) = 2^l - 1`` (MART-2 and MART-1 of the PLRank
    paper, Eqs. 12 and 11), or on ``G(l) / |G|_D`` (c-MART-1, Eq. 10).

    ``|G|_D`` is the query's DCG normaliser, the DCG of its ideal order over the whole
    list (``max_pi sum_i G(l_pi(i)) / log2(1 + i)``). Regressing on ``G / |G|_D`` makes
    the least-squares surrogate NDCG-consistent (Ravikumar, Tewari & Yang, "On NDCG
    Consistency of Listwise Ranking Methods", AISTATS 2011): its minimiser, the
    conditional mean of the normalised gains, orders documents as the Bayes-optimal
    ranking for NDCG does, which the mean of the raw gains need not. A query without
    gain regresses on zeros.

    Parameters
    ----------
    target : {"grade", "exp_gain", "normalized_gain"}, default="grade"
    """

    def __init__(self, target: str = "grade") -> None:
        self.target = target

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        if self.target == "grade":
            self.targets_ = self.labels_
        elif self.target == "exp_gain":
            largest = float(self.labels_.max())
            if largest > _LARGEST_SQUARED_EXP_GRADE:
                raise ValueError(
                    f"target='exp_gain' regresses on 2**y - 1, whose squared loss overflows float64 for grades above "
                    f"{_LARGEST_SQUARED_EXP_GRADE}; y holds {largest:g}. Use target='grade', or objective='c-mart' "
                    "(the gains normalised per query, finite for any grade)."
                )
            self.targets_ = 2.0**self.labels_ - 1.0
        else:
            self.targets_ = normalized_gains(self.labels_, self.query_boundaries_, "dcg")

    def initial_score(self) -> float:
        """The mean target, the constant minimising the loss (Friedman 2001, Algorithm 2)."""
        return float(self.targets_.mean())

    def loss(self, scores: np.ndarray) -> float:
        """``1/2 sum (s - t)^2``."""
        return 0.5 * float(((scores - self.targets_) ** 2).sum())

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        np.subtract(scores, self.targets_, out=gradients)
        hessians[:] = 1.0


class PlackettLuce(RankingObjective):
    """Top-k Plackett-Luce likelihood (PLRank; module docstring).

    Parameters
    ----------
    top_k : int, default=10
        Positions of the ground-truth permutation whose choice is modelled.
    n_permutations : int, default=1
        Ground-truth permutations drawn (ties among equal grades in random order)
        once at ``prepare``; their objectives are averaged, each distinct context
        computed once (``contexts_``, see :func:`distinct_contexts`).
    skip_tied_tail : bool, default=False
        Stop a query's contexts where every remaining document has the query's
        lowest grade: any order of them is equally right, so their choice terms only
        fit the random tie order. Queries with a single grade then contribute nothing.
    random_state : int or None, default=None
        Seed of the permutation draws.
    """

    def __init__(
        self, top_k: int = 10, n_permutations: int = 1, skip_tied_tail: bool = False, random_state: int | None = None
    ) -> None:
        self.top_k = top_k
        self.n_permutations = n_permutations
        self.skip_tied_tail = skip_tied_tail
        self.random_state = random_state

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        n_rows = len(self.labels_)
        query = np.repeat(np.arange(len(self.query_boundaries_) - 1), np.diff(self.query_boundaries_))
        rng = np.random.default_rng(self.random_state)
        self.permutations_ = np.empty((self.n_permutations, n_rows), dtype=INDEX_DTYPE)
        for p in range(self.n_permutations):
            # Query first (keeps every query in its row range), then grade descending, ties at random.
            self.permutations_[p] = np.lexsort((rng.random(n_rows), -self.labels_, query))
        sizes = np.diff(self.query_boundaries_)
        depths = np.minimum(self.top_k, sizes)
        if self.skip_tied_tail:
            lowest = np.minimum.reduceat(self.labels_, self.query_boundaries_[:-1]) if n_rows else np.zeros(0)
            above_lowest = np.bincount(query, weights=self.labels_ > lowest[query], minlength=len(sizes))
            depths = np.minimum(depths, above_lowest.astype(INDEX_DTYPE))
        self.depths_ = np.ascontiguousarray(depths, dtype=INDEX_DTYPE)
        self.contexts_, self.context_boundaries_, self.top_share_ = distinct_contexts(
            self.permutations_, self.query_boundaries_, self.depths_, random_state=rng.integers(2**63)
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
        _plackett_luce_gradients(
            scores, self.permutations_, self.query_boundaries_, self.contexts_, self.context_boundaries_,
            self.top_share_, gradients, hessians,
        )  # fmt: skip

    def leaf_curvature(
        self, scores: np.ndarray, row_leaf: np.ndarray, weights: np.ndarray, n_nodes: int
    ) -> np.ndarray:
        curvature = np.empty(n_nodes)
        _plackett_luce_leaf_curvature(
            scores, self.permutations_, self.query_boundaries_, self.contexts_, self.context_boundaries_, row_leaf,
            weights, curvature,
        )  # fmt: skip
        return curvature


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
    """

    def __init__(self, kind: str = "cosine", consistent: bool = False) -> None:
        self.kind = kind
        self.consistent = consistent

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        norm = "dcg" if self.consistent else ("l2" if self.kind == "cosine" else "sum")
        self.targets_ = normalized_gains(self.labels_, self.query_boundaries_, norm)
        self._kind = COSINE if self.kind == "cosine" else CROSS_ENTROPY

    def initial_score(self) -> float:
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
