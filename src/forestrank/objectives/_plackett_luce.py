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


@jit(refcounted=False)
def _rest_log_sum(scores, start, end, top_slot):
    """``log sum exp s`` over the rows of ``start:end`` outside every permutation's top
    (``top_slot < 0``), -inf where there are none.

    Two passes in row order (the largest score, then the shifted sum): every such row is
    in the tail of every permutation, so this sum is taken once per query instead of
    once per permutation, and read in the rows' order instead of through a permutation.
    """
    largest = -np.inf
    for i in range(start, end):
        if top_slot[i] < 0 and scores[i] > largest:
            largest = scores[i]
    if largest == -np.inf:
        return -np.inf
    total = 0.0
    for i in range(start, end):
        if top_slot[i] < 0:
            total += np.exp(scores[i] - largest)
    return largest + np.log(total)


@jit(inline="always")
def _walk_end(contexts, first, stop):
    """The end of the contexts ``contexts[first:stop]`` of the permutation of
    ``contexts[first]``: one walk along that permutation serves them all."""
    last = first
    while last < stop and contexts[last, 0] == contexts[first, 0]:
        last += 1
    return last


@jit(inline="always")
def _mark_top(permutation_top, top_slot, in_top):
    """``in_top[k]``: whether the query's ``k``-th top row is in this permutation's top."""
    in_top[:] = False
    for r in range(len(permutation_top)):
        in_top[top_slot[permutation_top[r]]] = True


@jit(refcounted=False)
def _top_exponentials(scores, top_rows, largest, out):
    """``out[k] = exp(s - largest)`` of the query's top rows (``out`` float64, (>= n_top,)):
    the linear domain's terms of the rows whose position the permutations change, taken
    once per query."""
    for k in range(len(top_rows)):
        out[k] = np.exp(scores[top_rows[k]] - largest)


@jit(refcounted=False)
def _top_sums(top_exp, permutation_top, top_slot, rest, in_top, sums):
    """``_top_log_sums`` in the linear domain: sums of ``exp(s - largest)`` (``top_exp``,
    ``_top_exponentials``), ``rest`` the query's rest so summed; returns the tail's."""
    m = len(permutation_top)
    _mark_top(permutation_top, top_slot, in_top)
    tail = rest
    for k in range(len(top_exp)):
        if not in_top[k]:
            tail += top_exp[k]
    sums[m] = tail
    for r in range(m - 1, -1, -1):
        sums[r] = sums[r + 1] + top_exp[top_slot[permutation_top[r]]]
    return tail


@jit(refcounted=False)
def _top_log_sums(scores, permutation_top, top_rows, top_slot, rest, in_top, log_sums):
    """The log context sums of one permutation: ``log_sums[r] = log sum_{j >= r} exp
    s_pi(j)`` for the top positions ``r < m`` and the tail's at ``r = m``; returns the tail's.

    The tail (positions ``m`` on) is the rest, shared by every permutation, and the rows
    of the query's top union that this permutation leaves after ``m``; the top positions
    are accumulated from the tail up in log space: exact whatever the spread of the
    scores, where ``exp(s - max s)`` would underflow to a zero context sum.

    Parameters
    ----------
    scores : float64 array of shape (n_rows,)
    permutation_top : int64 array of shape (m,)
        The rows at the permutation's first ``m`` positions.
    top_rows : int64 array of shape (n_top,)
        The query's rows at the first ``m`` positions of any permutation.
    top_slot : int64 array of shape (n_rows,)
        Each row's index in its query's ``top_rows``, -1 outside.
    rest : float
        ``_rest_log_sum`` of the query.
    in_top : bool array of shape (n_top,)
        Scratch; on return, whether each of ``top_rows`` is in this permutation's top.
    log_sums : float64 array of shape (>= m + 1,)
        Output.
    """
    m = len(permutation_top)
    _mark_top(permutation_top, top_slot, in_top)
    tail = rest
    for k in range(len(top_rows)):
        if not in_top[k]:
            tail = _log_add(tail, scores[top_rows[k]])
    log_sums[m] = tail
    for r in range(m - 1, -1, -1):
        log_sums[r] = _log_add(log_sums[r + 1], scores[permutation_top[r]])
    return tail


# The widest span of a query's scores that the kernels sum in the linear domain, as sums
# of exp(s - max s): each at least exp(-300), its square at least exp(-600), both normal
# float64, and their inverses finite. Wider spans are summed in log space.
LINEAR_SPREAD = 300.0


# Not cached, and called from Python through a cached caller, as LambdaRank's kernel is.
@jit(parallel=True, cache=False)
def _plackett_luce_gradients(
    scores, permutations, query_boundaries, contexts, context_boundaries, top_share, depths, top_rows, top_boundaries,
    top_slot, gradients, hessians,
):  # fmt: skip
    """Mean over permutations of the top-k Plackett-Luce gradient and diagonal hessian (module docstring).

    ``g_d = sum_C m_C p(d|C) / P - top_share[d]`` and ``h_d = sum_C m_C p(d|C)
    (1 - p(d|C)) / P`` over the distinct contexts ``C`` holding ``d``, each counted
    ``m_C`` times among the ``P`` permutations. A document at position ``r`` of a
    permutation is in every context of that permutation starting at or before ``r``, and
    with ``L_c`` the log of context ``c``'s sum, ``p(d|c) = q_r exp(L_r - L_c)`` where
    ``q_r = exp(s_d - L_r)``. So ``sum_c m_c p(d|c) / P = q_r a_r`` and ``sum_c m_c
    p(d|c)^2 / P = q_r^2 b_r`` with ``a_r = sum_{c <= r} m_c exp(L_r - L_c) / P`` and
    ``b_r`` the same with the exponent doubled, both carried along the top positions by
    multiplying with ``exp(L_r - L_{r-1}) <= 1`` (suffix sums shrink): no factor exceeds
    1, so nothing overflows whatever the spread of the scores.

    Contexts start only before the query's depth ``m``, so every document of a
    permutation's tail (positions ``m`` on) sees the same ``a_m``, ``b_m`` and tail sum
    ``L_m``: ``q = exp(s_d - L_m)``, one exponential per document, whatever its position.
    The tails of all permutations share the rows outside every permutation's top (the
    rest, log sum ``R``); summed over the permutations, such a row receives ``q G`` and
    ``q G - q^2 H`` with ``q = exp(s_d - R)``, ``G = sum_p a_m exp(R - L_m)`` and ``H =
    sum_p b_m exp(2 (R - L_m))`` (again no factor above 1). The query's cost is then
    O(n) once plus O(m + n_top) per permutation, in the rows' order: a query of a
    million documents costs a few passes over it, not ten walks through permutations.
    A query whose scores span at most ``LINEAR_SPREAD`` is summed in the linear domain
    (``_query_gradients_linear``), any other in log space (``_query_gradients_log``).

    Parameters
    ----------
    scores : float64 array of shape (n_rows,), rows grouped by query
    permutations : int64 array of shape (n_permutations, n_rows)
        ``permutations[p, start:end]`` lists the rows of the query at ``start:end`` in
        ground-truth order (only its first ``depths[q]`` positions are read).
    query_boundaries : int64 array of shape (n_queries + 1,)
    contexts : int64 array of shape (n_contexts, 3)
        ``distinct_contexts``: (permutation, position in the query, multiplicity),
        grouped by query, then by permutation, then by position.
    context_boundaries : int64 array of shape (n_queries + 1,)
        Contexts of query ``q``: ``contexts[context_boundaries[q]:context_boundaries[q + 1]]``.
    top_share : float64 array of shape (n_rows,)
        Fraction of the permutations that place each row among the modelled positions.
    depths : int64 array of shape (n_queries,)
        Positions modelled per query (every context starts before it).
    top_rows, top_boundaries, top_slot :
        ``top_rows_of``: the rows at the modelled positions of any permutation.
    gradients, hessians : float64 arrays of shape (n_rows,)
        Output.
    """
    n_queries = len(query_boundaries) - 1
    most_top, most_depth = _scratch_sizes(top_boundaries, depths)
    for chunk in numba.prange((n_queries + QUERY_CHUNK - 1) // QUERY_CHUNK):
        in_top = np.empty(most_top, dtype=np.bool_)
        sums = np.empty(most_depth + 1)
        top_exp = np.empty(most_top)
        for q in range(chunk * QUERY_CHUNK, min(n_queries, (chunk + 1) * QUERY_CHUNK)):
            start = query_boundaries[q]
            end = query_boundaries[q + 1]
            for i in range(start, end):
                gradients[i] = 0.0
                hessians[i] = 0.0
            largest, smallest = _score_range(scores, start, end)
            if largest - smallest <= LINEAR_SPREAD:
                _query_gradients_linear(
                    q, largest, scores, permutations, query_boundaries, contexts, context_boundaries, depths, top_rows,
                    top_boundaries, top_slot, gradients, hessians, in_top, sums, top_exp,
                )  # fmt: skip
            else:
                _query_gradients_log(
                    q, scores, permutations, query_boundaries, contexts, context_boundaries, depths, top_rows,
                    top_boundaries, top_slot, gradients, hessians, in_top, sums,
                )  # fmt: skip
            for i in range(start, end):
                gradients[i] -= top_share[i]


@jit(refcounted=False)
def _scratch_sizes(top_boundaries, depths):
    """(most top rows, deepest modelled position) over the queries: the sizes of the
    per-query scratch that each chunk of queries allocates once for all of them."""
    most_top = 0
    most_depth = 0
    for q in range(len(depths)):
        most_top = max(most_top, top_boundaries[q + 1] - top_boundaries[q])
        most_depth = max(most_depth, depths[q])
    return most_top, most_depth


@jit(refcounted=False)
def _score_range(scores, start, end):
    """The largest and the smallest of ``scores[start:end]``."""
    largest = -np.inf
    smallest = np.inf
    for i in range(start, end):
        largest = max(largest, scores[i])
        smallest = min(smallest, scores[i])
    return largest, smallest


@jit(refcounted=False)
def _query_gradients_log(
    q, scores, permutations, query_boundaries, contexts, context_boundaries, depths, top_rows, top_boundaries, top_slot,
    gradients, hessians, in_top, log_sums,
):  # fmt: skip
    """Query ``q``'s sums of ``_plackett_luce_gradients`` (before ``top_share``), carried in
    log space: exact whatever the spread of its scores.

    Parameters
    ----------
    q : int
    in_top : bool array of shape (>= the query's top rows,)
    log_sums : float64 array of shape (>= depths[q] + 1,)
        Scratch.
    Others : as in ``_plackett_luce_gradients``; the query's rows of ``gradients`` and
        ``hessians`` (zero on entry) receive the sums.
    """
    n_permutations = permutations.shape[0]
    start = query_boundaries[q]
    end = query_boundaries[q + 1]
    m = depths[q]
    query_top = top_rows[top_boundaries[q] : top_boundaries[q + 1]]
    in_top = in_top[: len(query_top)]
    log_sums = log_sums[: m + 1]
    rest = _rest_log_sum(scores, start, end, top_slot)
    rest_first = 0.0  # G
    rest_second = 0.0  # H
    c = context_boundaries[q]
    while c < context_boundaries[q + 1]:
        # One walk along a permutation's top for its contexts, contexts[c:last].
        last = _walk_end(contexts, c, context_boundaries[q + 1])
        permutation_top = permutations[contexts[c, 0], start : start + m]
        tail = _top_log_sums(scores, permutation_top, query_top, top_slot, rest, in_top, log_sums)
        first = contexts[c, 1]
        a = 0.0
        b = 0.0
        for r in range(first, m + 1):
            if r > first:
                decay = np.exp(log_sums[r] - log_sums[r - 1])
                a *= decay
                b *= decay * decay
            if r == m:
                break
            if c < last and contexts[c, 1] == r:
                share = contexts[c, 2] / n_permutations
                a += share
                b += share
                c += 1
            row = permutation_top[r]
            probability = np.exp(scores[row] - log_sums[r])
            gradients[row] += probability * a
            hessians[row] += probability * a - probability * probability * b
        if tail == -np.inf:
            continue
        for k in range(len(query_top)):
            if not in_top[k]:
                row = query_top[k]
                probability = np.exp(scores[row] - tail)
                gradients[row] += probability * a
                hessians[row] += probability * a - probability * probability * b
        ratio = np.exp(rest - tail)
        rest_first += a * ratio
        rest_second += b * ratio * ratio
    if rest > -np.inf:
        for i in range(start, end):
            if top_slot[i] < 0:
                probability = np.exp(scores[i] - rest)
                gradients[i] = probability * rest_first
                hessians[i] = probability * rest_first - probability * probability * rest_second


@jit(refcounted=False)
def _query_gradients_linear(
    q, largest, scores, permutations, query_boundaries, contexts, context_boundaries, depths, top_rows, top_boundaries,
    top_slot, gradients, hessians, in_top, sums, top_exp,
):  # fmt: skip
    """``_query_gradients_log`` for a query whose scores span at most ``LINEAR_SPREAD``.

    With ``e_d = exp(s_d - largest)`` and ``C_c`` the context sums of ``e``, ``p(d|c) =
    e_d / C_c``, so a document at position ``r`` receives ``e_d a_r`` and ``e_d a_r -
    e_d^2 b_r`` with ``a_r = sum_{c <= r} m_c / (P C_c)`` and ``b_r`` the same over
    ``C_c^2``: sums of inverses, with no exponential per position, and every document of
    the rest the same ``sum_p a_m`` and ``sum_p b_m``. Each ``C_c`` is at least
    ``exp(-LINEAR_SPREAD)``, so neither its square underflows nor an inverse overflows.

    Parameters
    ----------
    q : int
    largest : float
        The query's largest score.
    in_top, sums, top_exp :
        Scratch, as in ``_query_gradients_log`` (``top_exp`` float64, of the size of ``in_top``).
    Others : as in ``_plackett_luce_gradients``; the query's rows of ``gradients`` and
        ``hessians`` (zero on entry) receive the sums.
    """
    n_permutations = permutations.shape[0]
    start = query_boundaries[q]
    end = query_boundaries[q + 1]
    m = depths[q]
    query_top = top_rows[top_boundaries[q] : top_boundaries[q + 1]]
    in_top = in_top[: len(query_top)]
    sums = sums[: m + 1]  # the walked permutation's context sums; the tail's at m
    top_exp = top_exp[: len(query_top)]
    _top_exponentials(scores, query_top, largest, top_exp)
    rest = 0.0
    for i in range(start, end):
        if top_slot[i] < 0:
            e = np.exp(scores[i] - largest)
            rest += e
            gradients[i] = e  # kept until the rest's sums are known: the walks write only top rows
    rest_first = 0.0
    rest_second = 0.0
    c = context_boundaries[q]
    while c < context_boundaries[q + 1]:
        # One walk along a permutation's top for its contexts, contexts[c:last].
        last = _walk_end(contexts, c, context_boundaries[q + 1])
        permutation_top = permutations[contexts[c, 0], start : start + m]
        _top_sums(top_exp, permutation_top, top_slot, rest, in_top, sums)
        a = 0.0
        b = 0.0
        for r in range(contexts[c, 1], m):
            if c < last and contexts[c, 1] == r:
                inverse = 1.0 / sums[r]
                share = contexts[c, 2] / n_permutations * inverse
                a += share
                b += share * inverse
                c += 1
            row = permutation_top[r]
            e = top_exp[top_slot[row]]
            gradients[row] += e * a
            hessians[row] += e * a - e * e * b
        for k in range(len(query_top)):
            if not in_top[k]:
                row = query_top[k]
                gradients[row] += top_exp[k] * a
                hessians[row] += top_exp[k] * a - top_exp[k] * top_exp[k] * b
        rest_first += a
        rest_second += b
    for i in range(start, end):
        if top_slot[i] < 0:
            e = gradients[i]
            gradients[i] = e * rest_first
            hessians[i] = e * rest_first - e * e * rest_second


@jit
def _plackett_luce_loss(
    scores, permutations, query_boundaries, contexts, context_boundaries, top_share, depths, top_rows, top_boundaries,
    top_slot,
):  # fmt: skip
    """Mean over permutations of the top-k negative log-likelihood, summed over queries.

    ``sum_C m_C log sum_{d in C} exp s_d / P - sum_d top_share[d] s_d``; arguments as in
    ``_plackett_luce_gradients``.
    """
    n_permutations = permutations.shape[0]
    total = 0.0
    for q in range(len(query_boundaries) - 1):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        m = depths[q]
        query_top = top_rows[top_boundaries[q] : top_boundaries[q + 1]]
        in_top = np.empty(len(query_top), dtype=np.bool_)
        log_sums = np.empty(m + 1)
        rest = _rest_log_sum(scores, start, end, top_slot)
        summed = -1
        for c in range(context_boundaries[q], context_boundaries[q + 1]):
            p = contexts[c, 0]
            if p != summed:
                _top_log_sums(scores, permutations[p, start : start + m], query_top, top_slot, rest, in_top, log_sums)
                summed = p
            total += contexts[c, 2] / n_permutations * log_sums[contexts[c, 1]]
        for i in range(start, end):
            total -= top_share[i] * scores[i]
    return total


@jit(inline="always")
def _add_to_leaf(row, value, linear, row_leaf, stamp, leaf_stamp, leaf_sum, present, n_present):
    """Adds ``row`` to its leaf's sum for the walk ``stamp`` (``value``, its ``exp(s -
    largest)``, in the linear domain; its score ``s``, as ``exp s`` to a log sum,
    otherwise), listing the leaf in ``present`` when the walk first meets it; returns the
    leaves listed."""
    leaf = row_leaf[row]
    if leaf < 0:
        return n_present
    if leaf_stamp[leaf] != stamp:
        leaf_stamp[leaf] = stamp
        leaf_sum[leaf] = 0.0 if linear else -np.inf
        present[n_present] = leaf
        n_present += 1
    if linear:
        leaf_sum[leaf] += value
    else:
        leaf_sum[leaf] = _log_add(leaf_sum[leaf], value)
    return n_present


@jit(refcounted=False)
def _rest_leaf_sums(scores, start, end, top_slot, row_leaf, linear, largest, rest_largest, rest_sum, leaf_stamp, stamp, rest_present):
    """Each leaf's sum over the query's rest (its rows outside every permutation's top),
    listed in ``rest_present``; returns the leaves listed and the rest's own sum.

    In the linear domain one pass of ``exp(s - largest)``; otherwise log sums, each
    leaf's and the rest's shifted by its largest score (a first pass), as
    ``_rest_log_sum`` takes it.
    """
    n_rest_present = 0
    rest = 0.0
    rest_max = -np.inf
    for i in range(start, end):
        leaf = row_leaf[i]
        if top_slot[i] >= 0:
            continue
        share = np.exp(scores[i] - largest) if linear else 0.0
        rest += share
        rest_max = max(rest_max, scores[i])
        if leaf < 0:
            continue
        if leaf_stamp[leaf] != stamp:
            leaf_stamp[leaf] = stamp
            rest_largest[leaf] = scores[i]
            rest_sum[leaf] = 0.0
            rest_present[n_rest_present] = leaf
            n_rest_present += 1
        elif scores[i] > rest_largest[leaf]:
            rest_largest[leaf] = scores[i]
        rest_sum[leaf] += share
    if linear:
        return n_rest_present, rest
    for i in range(start, end):
        leaf = row_leaf[i]
        if top_slot[i] >= 0:
            continue
        rest += np.exp(scores[i] - rest_max)
        if leaf >= 0:
            rest_sum[leaf] += np.exp(scores[i] - rest_largest[leaf])
    for t in range(n_rest_present):
        leaf = rest_present[t]
        rest_sum[leaf] = rest_largest[leaf] + np.log(rest_sum[leaf])
    return n_rest_present, (rest_max + np.log(rest) if rest_max > -np.inf else -np.inf)


# Queries whose curvature terms are held at once (QUERY_BLOCK x n_nodes floats), and
# queries one thread takes in turn with one set of scratch arrays.
QUERY_BLOCK = 4096
QUERY_CHUNK = 16


# Not cached, and called from Python through a cached caller, as the gradients are.
@jit(parallel=True, cache=False)
def _plackett_luce_leaf_curvature(
    scores, permutations, query_boundaries, contexts, context_boundaries, depths, top_rows, top_boundaries, top_slot,
    row_leaf, weights, curvature,
):  # fmt: skip
    """Coupled second derivative ``sum_C m_C p'(1 - p') / P`` of the loss along each leaf's value (Eq. 9).

    ``p'`` is the probability that context ``C`` chooses one of the leaf's documents:
    ``exp(l_C - L_C)`` with ``l_C`` the log sum over the leaf's documents in ``C``. The
    queries' terms are summed per query on the threads (``_query_leaf_curvature``), and
    the queries' sums added to ``curvature`` in query order: the same numbers whatever
    the threads, and a partition's sums continue those of the partitions before it.

    Parameters
    ----------
    scores : float64 array of shape (n_rows,)
    permutations, query_boundaries, contexts, context_boundaries, depths, top_rows, top_boundaries, top_slot :
        As in ``_plackett_luce_gradients``.
    row_leaf : int64 array of shape (n_rows,)
        Leaf node of each row, -1 for rows outside the tree.
    weights : float64 array of shape (n_rows,)
        Row weights (constant within a query); a context counts with its query's weight.
    curvature : float64 array of shape (n_nodes,)
        Output: each query's share (mean over permutations) is added to it, query after
        query.
    """
    n_queries = len(query_boundaries) - 1
    n_nodes = len(curvature)
    most_top, most_depth = _scratch_sizes(top_boundaries, depths)
    for block_start in range(0, n_queries, QUERY_BLOCK):
        block_size = min(QUERY_BLOCK, n_queries - block_start)
        query_curvature = np.zeros((block_size, n_nodes))
        for chunk in numba.prange((block_size + QUERY_CHUNK - 1) // QUERY_CHUNK):
            rest_largest = np.empty(n_nodes)
            rest_sum = np.empty(n_nodes)
            leaf_sum = np.empty(n_nodes)
            leaf_stamp = np.full(n_nodes, -1, dtype=np.int64)
            present = np.empty(n_nodes, dtype=np.int64)
            rest_present = np.empty(n_nodes, dtype=np.int64)
            in_top = np.empty(most_top, dtype=np.bool_)
            sums = np.empty(most_depth + 1)
            top_exp = np.empty(most_top)
            context_share = np.zeros(most_depth)
            stamp = np.int64(0)  # not a literal: the per-query kernel would compile again for it
            for b in range(chunk * QUERY_CHUNK, min(block_size, (chunk + 1) * QUERY_CHUNK)):
                stamp = _query_leaf_curvature(
                    block_start + b, scores, permutations, query_boundaries, contexts, context_boundaries, depths,
                    top_rows, top_boundaries, top_slot, row_leaf, weights, rest_largest, rest_sum, leaf_sum,
                    leaf_stamp, stamp, query_curvature[b], present, rest_present, in_top, sums, top_exp, context_share,
                )  # fmt: skip
        for b in range(block_size):
            for node in range(n_nodes):
                curvature[node] += query_curvature[b, node]


@jit(refcounted=False)
def _query_leaf_curvature(
    q, scores, permutations, query_boundaries, contexts, context_boundaries, depths, top_rows, top_boundaries, top_slot,
    row_leaf, weights, rest_largest, rest_sum, leaf_sum, leaf_stamp, stamp, query_curvature, present, rest_present,
    in_top, sums, top_exp, context_share,
):  # fmt: skip
    """Query ``q``'s terms of ``_plackett_luce_leaf_curvature``, added to ``query_curvature``.

    Each leaf's sum over the rest (the rows outside every permutation's top) is taken
    once; each permutation adds its other tail rows and then its top positions from the
    last up, the contexts met on the way reading the leaves' sums so far. Where the
    query's scores span at most ``LINEAR_SPREAD`` the sums are of ``exp(s - max s)`` and a
    context's ``p'`` a leaf's sum times the inverse of the context's (one multiplication
    per leaf); otherwise log sums and an exponential per leaf.

    Parameters
    ----------
    q : int
    scores, permutations, query_boundaries, contexts, context_boundaries, depths, top_rows, top_boundaries, top_slot, row_leaf, weights :
        As in ``_plackett_luce_leaf_curvature``.
    rest_largest, rest_sum, leaf_sum : float64 arrays of shape (n_nodes,)
        Scratch.
    leaf_stamp : int64 array of shape (n_nodes,)
        The last walk that met each leaf; ``stamp`` the last walk numbered.
    stamp : int
    query_curvature : float64 array of shape (n_nodes,)
        Output.
    present, rest_present : int64 arrays of shape (n_nodes,)
    in_top, sums, top_exp :
        Scratch, as in ``_query_gradients_linear``.
    context_share : float64 array of shape (>= depths[q],)
        Zeros on entry, zeros again on return (each walk clears what it sets).

    Returns
    -------
    int
        The last walk numbered.
    """
    n_permutations = permutations.shape[0]
    n_nodes = len(query_curvature)
    start = query_boundaries[q]
    end = query_boundaries[q + 1]
    largest, smallest = _score_range(scores, start, end)
    linear = largest - smallest <= LINEAR_SPREAD
    m = depths[q]
    query_top = top_rows[top_boundaries[q] : top_boundaries[q + 1]]
    in_top = in_top[: len(query_top)]
    sums = sums[: m + 1]  # the walked permutation's context sums (or their logs); the tail's at m
    present = present[: min(n_nodes, end - start)]  # leaves met so far in this walk
    rest_present = rest_present[: min(n_nodes, end - start)]  # leaves of the rest
    top_exp = top_exp[: len(query_top)]
    if linear:
        _top_exponentials(scores, query_top, largest, top_exp)
    stamp += 1
    n_rest_present, rest = _rest_leaf_sums(
        scores, start, end, top_slot, row_leaf, linear, largest, rest_largest, rest_sum, leaf_stamp, stamp, rest_present
    )
    context_share = context_share[:m]  # share of the walked permutation's context at each position
    weight = weights[start] if end > start else 0.0
    first = context_boundaries[q]
    while first < context_boundaries[q + 1]:
        # One walk along a permutation's top for its contexts, contexts[first:last].
        last = _walk_end(contexts, first, context_boundaries[q + 1])
        for c in range(first, last):
            context_share[contexts[c, 1]] = contexts[c, 2] / n_permutations
        permutation_top = permutations[contexts[first, 0], start : start + m]
        if linear:
            _top_sums(top_exp, permutation_top, top_slot, rest, in_top, sums)
        else:
            _top_log_sums(scores, permutation_top, query_top, top_slot, rest, in_top, sums)
        stamp += 1
        n_present = 0
        for t in range(n_rest_present):
            leaf = rest_present[t]
            leaf_stamp[leaf] = stamp
            leaf_sum[leaf] = rest_sum[leaf]
            present[n_present] = leaf
            n_present += 1
        for k in range(len(query_top)):
            if not in_top[k]:
                value = top_exp[k] if linear else scores[query_top[k]]
                n_present = _add_to_leaf(query_top[k], value, linear, row_leaf, stamp, leaf_stamp, leaf_sum, present, n_present)
        for r in range(m - 1, contexts[first, 1] - 1, -1):
            row = permutation_top[r]
            value = top_exp[top_slot[row]] if linear else scores[row]
            n_present = _add_to_leaf(row, value, linear, row_leaf, stamp, leaf_stamp, leaf_sum, present, n_present)
            if context_share[r] > 0.0:
                inverse = 1.0 / sums[r] if linear else 0.0
                for t in range(n_present):
                    if linear:
                        share = leaf_sum[present[t]] * inverse
                    else:
                        share = np.exp(leaf_sum[present[t]] - sums[r])
                    query_curvature[present[t]] += weight * context_share[r] * share * (1.0 - share)
                context_share[r] = 0.0
        first = last
    return stamp


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


def top_rows_of(top_share: np.ndarray, query_boundaries: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows at the modelled positions of any permutation, per query: the only rows
    whose position differs between the permutations' contexts (``_plackett_luce_gradients``).

    Parameters
    ----------
    top_share : float64 array of shape (n_rows,)
        ``distinct_contexts``' share of the permutations placing each row among the
        modelled positions: positive exactly for those rows.
    query_boundaries : int64 array of shape (n_queries + 1,)

    Returns
    -------
    top_rows : int64 array of shape (n_top,)
        Ascending, so grouped by query.
    top_boundaries : int64 array of shape (n_queries + 1,)
        Query ``q``'s are ``top_rows[top_boundaries[q]:top_boundaries[q + 1]]``.
    top_slot : int64 array of shape (n_rows,)
        Each row's index among its query's top rows, -1 for the others.
    """
    top_rows = np.flatnonzero(top_share > 0.0).astype(INDEX_DTYPE)
    top_boundaries = np.searchsorted(top_rows, query_boundaries).astype(INDEX_DTYPE)
    query_of_top = np.searchsorted(query_boundaries, top_rows, side="right") - 1
    top_slot = np.full(len(top_share), -1, dtype=INDEX_DTYPE)
    top_slot[top_rows] = np.arange(len(top_rows)) - top_boundaries[query_of_top]
    return top_rows, top_boundaries, top_slot


PlackettLuceState = namedtuple(
    "PlackettLuceState",
    [
        "permutations", "query_boundaries", "contexts", "context_boundaries", "top_share", "depths", "top_rows",
        "top_boundaries", "top_slot",
    ],
)  # fmt: skip
PlackettLuceState.__doc__ = """``PlackettLuce.compiled_state()``: the prepared permutations and contexts its kernels read."""


@jit
def _plackett_luce_gradients_from_python(*arguments):
    """``_plackett_luce_gradients`` for Python, through a cached caller (``_lambdarank``'s)."""
    _plackett_luce_gradients(*arguments)


@register_gradients(PlackettLuceState)
def _plackett_luce_gradients_at(state, scores, gradients, hessians):
    _plackett_luce_gradients(
        scores, state.permutations, state.query_boundaries, state.contexts, state.context_boundaries, state.top_share,
        state.depths, state.top_rows, state.top_boundaries, state.top_slot, gradients, hessians,
    )  # fmt: skip


@jit
def _plackett_luce_leaf_curvature_from_python(*arguments):
    """``_plackett_luce_leaf_curvature`` for Python, through a cached caller."""
    _plackett_luce_leaf_curvature(*arguments)


@register_leaf_curvature(PlackettLuceState)
def _plackett_luce_leaf_curvature_at(state, scores, row_leaf, weights, curvature):
    _plackett_luce_leaf_curvature(
        scores, state.permutations, state.query_boundaries, state.contexts, state.context_boundaries, state.depths,
        state.top_rows, state.top_boundaries, state.top_slot, row_leaf, weights, curvature,
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
    shift_invariant = True

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
        self.top_rows_, self.top_boundaries_, self.top_slot_ = top_rows_of(self.top_share_, self.query_boundaries_)

    def loss(self, scores: np.ndarray) -> float:
        """Mean over permutations of the summed top-k negative log-likelihood."""
        return float(_plackett_luce_loss(scores, *self.compiled_state()))

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        _plackett_luce_gradients_from_python(scores, *self.compiled_state(), gradients, hessians)

    def compiled_state(self) -> PlackettLuceState:
        return PlackettLuceState(
            self.permutations_, self.query_boundaries_, self.contexts_, self.context_boundaries_, self.top_share_,
            self.depths_, self.top_rows_, self.top_boundaries_, self.top_slot_,
        )  # fmt: skip

    def leaf_curvature(
        self, scores: np.ndarray, row_leaf: np.ndarray, weights: np.ndarray, n_nodes: int, carried: np.ndarray | None = None
    ) -> np.ndarray:
        curvature = np.zeros(n_nodes) if carried is None else carried.copy()
        _plackett_luce_leaf_curvature_from_python(
            scores, self.permutations_, self.query_boundaries_, self.contexts_, self.context_boundaries_, self.depths_,
            self.top_rows_, self.top_boundaries_, self.top_slot_, row_leaf, weights, curvature,
        )  # fmt: skip
        return curvature
