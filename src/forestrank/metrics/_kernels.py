"""Numba kernels of the ranking metrics.

One driver, :func:`per_query_metric`, evaluates NDCG, ERR, AP or precision for every
query of rows grouped by ``query_boundaries`` (see ``forestrank._input.queries``); options
are small integers so that a single compiled signature serves every metric and
convention (few kernels, short cold compiles: ``docs/design.md``, "Numba rules").

Tie blocks
----------
Documents of a query are ranked by decreasing score. The ranked list is cut into
*blocks*. Under ``ties="expected"`` a block is a maximal run of equal scores whose
internal order is uniformly random, and every metric is its exact expectation over
those orders (Ibrahim & Carman, "Comparing Pointwise and Listwise Objective Functions
for Random Forest based Learning-to-Rank", Eq. 11-13). Under ``"input_order"`` and
``"pessimistic"`` the order inside equal scores is fixed first (stable sort; worst
labels first) and every document is a block of one, so the same block formulas serve
all conventions. For a block occupying 0-based positions ``a .. a+m-1``:

* NDCG: each position holds the block's mean gain in expectation (linearity), so the
  block adds ``mean_gain * sum_{r=a}^{a+m-1} discount(r)``. O(m).
* AP: with ``c`` relevant documents in the block and ``R_before`` above it, position
  ``a+j`` adds ``[c/m (R_before + 1) + j c(c-1)/(m(m-1))] / (a+j+1)`` (the expectation
  of ``rel * #relevant-so-far``, using P(two given positions both relevant) =
  c(c-1)/(m(m-1))). O(m).
* ERR (Chapelle et al., "Expected Reciprocal Rank for Graded Relevance", CIKM 2009,
  Eq. 4): the probability of reaching the block is the order-free product of
  ``1 - R`` over the blocks above. Inside the block position ``j`` adds
  ``(Q_j - Q_{j+1}) / (a+j+1)`` where ``Q_j`` is the mean of ``prod (1 - R)`` over
  the j-subsets of the block, i.e. ``e_j(1-R) / C(m, j)`` (elementary symmetric
  polynomial). ``Q`` is built with the convex recurrence
  ``Q_j <- (i-j)/i Q_j + j/i (1-R_i) Q_{j-1}`` (values stay in [0, 1]), truncated at
  the cutoff: O(m * min(m, k)) per block.
* Precision: the block holds ``c/m`` relevant documents per position. O(m).

Cost: O(n log n) for the per-query sorts plus the block terms above; linear in rows
for NDCG/AP/precision, and for ERR whenever tie blocks are short or ``k`` is set.
"""

import math

import numpy as np

from .._numba.jit import jit
from .._ranking import exp_gain, gain_shift

METRIC_NDCG = 0
METRIC_ERR = 1
METRIC_AP = 2
METRIC_PRECISION = 3

GAIN_EXP = 0
GAIN_LINEAR = 1
GAIN_TABLE = 2

TIES_EXPECTED = 0
TIES_INPUT_ORDER = 1
TIES_PESSIMISTIC = 2


@jit(inline="always")
def gain(label, gain_id, shift, gain_table):
    """Gain of a relevance label: ``2**label - 1`` (Burges et al. 2005), ``label``, or
    ``gain_table[label]`` (LightGBM's ``label_gain``).

    Parameters
    ----------
    label : float64
    gain_id : int
        ``GAIN_EXP``, ``GAIN_LINEAR`` or ``GAIN_TABLE``.
    shift : float64
        The gain is scaled by ``2**-shift`` (``_ranking``, module docstring: NDCG, a
        ratio within the query, is unchanged and finite for any grade and any table);
        0 gives the unscaled gain.
    gain_table : float64 array of shape (n_grades,)
        Gain of each integer grade (read with ``GAIN_TABLE`` only).

    Returns
    -------
    float64
    """
    if gain_id == GAIN_EXP:
        return exp_gain(label, shift)
    if gain_id == GAIN_TABLE:
        return math.ldexp(gain_table[int(label)], -int(shift))
    return math.ldexp(label, -int(shift))


@jit(inline="always")
def query_shift(largest_label, gain_id, gain_table):
    """The ``shift`` of :func:`gain` for a query whose largest label is ``largest_label``:
    the floor of that grade for the exponential gain, else ``_ranking.gain_shift`` of its
    gain."""
    if gain_id == GAIN_EXP:
        return np.floor(largest_label)
    return gain_shift(gain(largest_label, gain_id, 0.0, gain_table))


@jit(inline="always")
def stop_probability(label, gain_id, max_grade, gain_table):
    """ERR's ``R(g)``, the probability that a document of grade ``g`` satisfies the user:
    ``G(g) / (G(g_max) + 1)``, which is Chapelle et al.'s ``(2**g - 1) / 2**g_max``
    (CIKM 2009, §4) for the exponential gain and keeps ``R < 1`` for any gain that does
    not decrease with the grade (``g / (g_max + 1)`` for the linear one).

    Parameters
    ----------
    label, max_grade : float64
    gain_id : int
    gain_table : float64 array of shape (n_grades,)
        As in :func:`gain`; ``max_grade`` is then a grade of the table.
    """
    if gain_id == GAIN_EXP:
        return exp_gain(label, max_grade)
    return gain(label, gain_id, 0.0, gain_table) / (gain(max_grade, gain_id, 0.0, gain_table) + 1.0)


@jit(inline="always")
def _rank_query(query_labels, query_scores, ties, ranked, block_starts):
    """Rank one query and cut the ranking into tie blocks.

    Parameters
    ----------
    query_labels, query_scores : float64 arrays of shape (m,)
    ties : int
        ``TIES_EXPECTED``, ``TIES_INPUT_ORDER`` or ``TIES_PESSIMISTIC``.
    ranked : float64 array of shape (>= m,)
        Output: labels in ranked order (first ``m`` entries).
    block_starts : int64 array of shape (>= m + 1,)
        Output: block ``b`` spans ranked positions ``block_starts[b]:block_starts[b+1]``.

    Returns
    -------
    int
        Number of blocks.
    """
    size = len(query_labels)
    order = np.argsort(-query_scores, kind="mergesort")  # stable: input order inside ties
    for i in range(size):
        ranked[i] = query_labels[order[i]]
    n_blocks = 0
    i = 0
    while i < size:
        j = i + 1
        while j < size and query_scores[order[j]] == query_scores[order[i]]:
            j += 1
        if ties == TIES_EXPECTED:
            block_starts[n_blocks] = i
            n_blocks += 1
        else:
            if ties == TIES_PESSIMISTIC and j - i > 1:
                ranked[i:j].sort()
            for p in range(i, j):
                block_starts[n_blocks] = p
                n_blocks += 1
        i = j
    block_starts[n_blocks] = size
    return n_blocks


@jit(inline="always")
def _ndcg(ranked, block_starts, n_blocks, sorted_labels, cutoff, gain_id, gain_table, discounts):
    size = len(sorted_labels)
    shift = query_shift(sorted_labels[size - 1], gain_id, gain_table)
    dcg = 0.0
    for b in range(n_blocks):
        start = block_starts[b]
        if start >= cutoff:
            break
        end = block_starts[b + 1]
        block_gain = 0.0
        for p in range(start, end):
            block_gain += gain(ranked[p], gain_id, shift, gain_table)
        block_discount = 0.0
        for p in range(start, min(end, cutoff)):
            block_discount += discounts[p]
        dcg += block_gain / (end - start) * block_discount
    ideal = 0.0
    for r in range(cutoff):
        ideal += gain(sorted_labels[size - 1 - r], gain_id, shift, gain_table) * discounts[r]
    if ideal == 0.0:  # a gain table's zero gains: nothing to rank, as a query without relevant documents
        return np.nan
    return dcg / ideal


@jit(inline="always")
def _err(ranked, block_starts, n_blocks, cutoff, max_grade, gain_id, gain_table):
    if gain_id == GAIN_TABLE:  # only a table can give a relevant grade no gain
        satisfying = False
        for p in range(block_starts[n_blocks]):
            if stop_probability(ranked[p], gain_id, max_grade, gain_table) > 0.0:
                satisfying = True
                break
        if not satisfying:  # nothing to rank, as a query without relevant documents
            return np.nan
    reach = 1.0  # probability that the user reaches the current block
    total = 0.0
    for b in range(n_blocks):
        start = block_starts[b]
        if start >= cutoff:
            break
        end = block_starts[b + 1]
        size = end - start
        if size == 1:
            stop = stop_probability(ranked[start], gain_id, max_grade, gain_table)
            total += reach * stop / (start + 1)
            reach *= 1.0 - stop
            continue
        depth = min(size, cutoff - start)
        subset_mean = np.zeros(depth + 1)  # Q_j, j = 0..depth
        subset_mean[0] = 1.0
        block_continue = 1.0
        for i in range(1, size + 1):
            keep = 1.0 - stop_probability(ranked[start + i - 1], gain_id, max_grade, gain_table)
            block_continue *= keep
            for j in range(min(i, depth), 0, -1):
                subset_mean[j] = ((i - j) * subset_mean[j] + j * keep * subset_mean[j - 1]) / i
        block_total = 0.0
        for j in range(depth):
            block_total += (subset_mean[j] - subset_mean[j + 1]) / (start + j + 1)
        total += reach * block_total
        reach *= block_continue
    return total


@jit(inline="always")
def _relevant_in(ranked, start, end):
    """Number of documents with label > 0 at ranked positions ``start:end`` (float64)."""
    count = 0.0
    for p in range(start, end):
        if ranked[p] > 0.0:
            count += 1.0
    return count


@jit(inline="always")
def _average_precision(ranked, block_starts, n_blocks, cutoff, n_relevant):
    total = 0.0
    relevant_above = 0.0
    for b in range(n_blocks):
        start = block_starts[b]
        if start >= cutoff:
            break
        end = block_starts[b + 1]
        size = end - start
        in_block = _relevant_in(ranked, start, end)
        if in_block > 0.0:
            p_one = in_block / size
            p_two = 0.0
            if size > 1:
                p_two = in_block * (in_block - 1.0) / (size * (size - 1.0))
            for j in range(min(size, cutoff - start)):
                total += (p_one * (relevant_above + 1.0) + j * p_two) / (start + j + 1)
        relevant_above += in_block
    return total / n_relevant


@jit(inline="always")
def _precision(ranked, block_starts, n_blocks, cutoff, denominator):
    hits = 0.0
    for b in range(n_blocks):
        start = block_starts[b]
        if start >= cutoff:
            break
        end = block_starts[b + 1]
        hits += _relevant_in(ranked, start, end) / (end - start) * (min(end, cutoff) - start)
    return hits / denominator


@jit
def per_query_metric(
    labels, scores, query_boundaries, metric, k, gain_id, gain_table, discounts, ties, short_query_zero, max_grade
):
    """Metric value of every query.

    Parameters
    ----------
    labels : float64 array of shape (n_samples,)
        Relevance labels (>= 0), rows grouped by query.
    scores : float64 array of shape (n_samples,)
        Predicted scores, same row order.
    query_boundaries : int64 array of shape (n_queries + 1,)
        Query ``q`` is rows ``query_boundaries[q]:query_boundaries[q+1]``.
    metric : int
        ``METRIC_NDCG``, ``METRIC_ERR``, ``METRIC_AP`` or ``METRIC_PRECISION``.
    k : int
        Cutoff; ``0`` means the whole list.
    gain_id, ties : int
        Gain of NDCG and ERR, and tie handling (module constants).
    gain_table : float64 array of shape (n_grades,)
        Gain of each grade with ``GAIN_TABLE`` (labels are then integers below its
        length); ignored otherwise.
    discounts : float64 array of shape (>= the largest query's size,)
        NDCG discount of each rank (``_discount.discount_table``).
    short_query_zero : bool
        Score 0 for a query with fewer than ``k`` documents (the LETOR scripts' rule).
    max_grade : float64
        ERR's maximum grade ``g_max`` in ``R = G(g) / (G(g_max) + 1)`` (:func:`stop_probability`).

    Returns
    -------
    float64 array of shape (n_queries,)
        NaN for a query without any relevant document (label > 0); the caller
        applies the ``no_relevant`` convention.
    """
    n_queries = len(query_boundaries) - 1
    values = np.empty(n_queries)
    max_size = 0
    for q in range(n_queries):
        max_size = max(max_size, query_boundaries[q + 1] - query_boundaries[q])
    ranked = np.empty(max_size)
    block_starts = np.empty(max_size + 1, dtype=np.int64)

    for q in range(n_queries):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        size = end - start
        query_labels = labels[start:end]
        n_relevant = 0
        for i in range(size):
            if query_labels[i] > 0.0:
                n_relevant += 1
        if n_relevant == 0:
            values[q] = np.nan
            continue
        if short_query_zero and k > 0 and size < k:
            values[q] = 0.0
            continue
        cutoff = size if k <= 0 else min(k, size)
        n_blocks = _rank_query(query_labels, scores[start:end], ties, ranked, block_starts)
        if metric == METRIC_NDCG:
            values[q] = _ndcg(
                ranked, block_starts, n_blocks, np.sort(query_labels), cutoff, gain_id, gain_table, discounts
            )
        elif metric == METRIC_ERR:
            values[q] = _err(ranked, block_starts, n_blocks, cutoff, max_grade, gain_id, gain_table)
        elif metric == METRIC_AP:
            values[q] = _average_precision(ranked, block_starts, n_blocks, cutoff, n_relevant)
        else:
            values[q] = _precision(ranked, block_starts, n_blocks, cutoff, size if k <= 0 else k)
    return values
