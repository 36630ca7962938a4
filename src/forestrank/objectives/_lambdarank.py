"""LambdaRank's pair gradients and loss (Burges 2010; ``objectives/__init__.py``)."""

from collections import namedtuple

import numba
import numpy as np

from .._numba.jit import jit, nowrap
from .._tree._rng import randint
from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE
from .._ranking import discount_table, fill_inverse_max_dcg, row_gains, stop_probabilities
from .._input.labels import check_max_grade
from ._base import RankingObjective
from ._compiled import register_gradients
from ._plackett_luce import LINEAR_SPREAD, QUERY_CHUNK


# Which metric's change weighs a pair (``LambdaRank.metric``).
METRIC_NDCG, METRIC_MAP, METRIC_ERR = 0, 1, 2
METRICS = {"ndcg": METRIC_NDCG, "map": METRIC_MAP, "err": METRIC_ERR}


# One query's rows in rank order, each its own allocation: the vectorised pair loop
# (``_add_rank_pairs``) writes two of them while reading the others, and the compiler
# proves rows of one allocation apart no more than it does overlapping arrays.
_RankedRows = namedtuple(
    "_RankedRows",
    [
        "scores", "labels", "gains", "discounts", "exponentials", "gradients", "hessians", "pair_lambdas",
        "pair_curvatures",
    ],
)  # fmt: skip
_RankedRows.__doc__ = """Scratch rows of ``_query_gradients``, float64 of the size of the chunk's
largest query plus ``_PAIR_BLOCK``: the query's scores, grades, gains and discounts in
rank order, ``exp(sigma (s - s_top))`` of each rank, the gradients and hessians being
summed, and one rank's pairs' lambdas and curvatures before ``_add_rank_pairs`` sums
them."""

# ``_add_rank_pairs`` takes a rank's pairs in whole blocks of this many, past the query's
# last rank into padding whose terms are never read: the compiler's vector loop then takes
# every pair, and its scalar remainder loop, with a division per pair, none. A multiple
# of the widest vector's float64 lanes (eight).
_PAIR_BLOCK = 8


@jit
def _add_queries_in_order(position_losses, query_weights, total):
    """``total += query_weights[q] * position_losses[q]`` for q = 0, 1, ... in order (the
    order fixes the float sums): ``position_losses`` float64 (n_queries, 2, n_positions),
    ``query_weights`` float64 (n_queries,), ``total`` float64 (2, n_positions), in place."""
    for q in range(position_losses.shape[0]):
        for row in range(position_losses.shape[1]):
            for position in range(position_losses.shape[2]):
                total[row, position] += query_weights[q] * position_losses[q, row, position]


@jit
def _softplus(x):
    """``log(1 + exp(x))`` without overflow."""
    return max(x, 0.0) + np.log1p(np.exp(-abs(x)))


# Not cached: the compiled boosting loop links it, and a cached parallel kernel that calls
# kernels may not be linked into a caller compiled in a later process (docs/design.md,
# "Numba rules"); Python calls it through a cached caller, _lambdarank_gradients_from_python.
@jit(parallel=True, cache=False)
def _lambdarank_gradients(
    scores, labels, gains, query_boundaries, query_scales, discounts, metric, stop_probabilities, sigma,
    truncation_level, normalize, pairs_per_document, pair_states, gradients, hessians, positions, propensities,
    position_losses, query_losses, rankings,
):  # fmt: skip
    """LambdaRank gradients and hessians of every document (module docstring); with
    ``positions``, Unbiased LambdaMART's (Hu et al., WWW 2019, Eq. 9-10).

    Each optional array below is None or an array, empty when not given: the compiled
    boosting loop passes None, and numba drops the code that reads it by type; Python
    passes empty arrays (``LambdaRank._kernel``), so that its calls, whatever they ask
    for, compile one signature instead of one per combination, and the kernel tests
    their lengths once per query.

    Parameters
    ----------
    scores, labels : float64 arrays of shape (n_rows,), rows grouped by query
    gains : float64 array of shape (n_rows,)
        ``G(l)`` of every row (``_ranking.row_gains``; ``2^l - 1`` by default).
    query_boundaries : int64 array of shape (n_queries + 1,)
    query_scales : float64 array of shape (n_queries,)
        What a pair's change of the query's metric is multiplied by: ``1 / max DCG``
        at the pairs' cutoff for NDCG (``_ranking.fill_inverse_max_dcg``), ``1 / R``
        (``R`` relevant documents) for MAP, ``1 / ERR`` of the ideal order for ERR;
        0 leaves the query out.
    discounts : float64 array of shape (largest query size,)
        Discount of every 0-based rank (``_ranking.discount_table``), looked up
        instead of two logarithms per pair.
    metric : int
        ``METRIC_NDCG``, ``METRIC_MAP`` or ``METRIC_ERR``: whose change weighs a pair
        (``_metric_change``).
    stop_probabilities : None or float64 array of shape (n_rows,)
        ERR's ``R(l)`` of every row (``_ranking.stop_probabilities``); read only for MAP
        and ERR (empty for MAP), None or empty for NDCG.
    sigma : float
        Steepness of the pairwise logistic.
    truncation_level : int
        Top-k pairs: a pair counts if its better-ranked document is above this rank.
    normalize : bool
        LightGBM's ``lambdarank_norm`` (with sampled pairs, XGBoost's: each query's
        lambdas over ``pairs_per_document``).
    pairs_per_document : int
        Sampled pairs (``pair_states`` given): the pairs each document draws.
    pair_states : None or uint64 array of shape (n_queries, 2) or (0, 2)
        None or empty: top-k pairs. Otherwise each query's generator state (``_tree._rng``),
        advanced in place: every document draws ``pairs_per_document`` partners among
        the query's documents of other grades (XGBoost's ``lambdarank_pair_method="mean"``).
    gradients, hessians : float64 arrays of shape (n_rows,)
        Output.
    positions : None or int64 array of shape (n_rows,) or (0,)
        The 0-based position each document was shown at (click data). None or empty:
        plain LambdaRank.
    propensities : None or float64 array of shape (2, n_positions)
        ``t+`` (row 0) and ``t-`` (row 1) of every position: a pair (clicked ``i``,
        unclicked ``j``) counts ``1 / (t+[pos_i] t-[pos_j])``.
    position_losses : None or float64 array of shape (n_queries, 2, n_positions), given with ``positions``
        Output: per query, the pair costs ``L_ij / t-[pos_j]`` summed at ``pos_i``
        (row 0) and ``L_ij / t+[pos_i]`` summed at ``pos_j`` (row 1), for the
        propensities' update (``LambdaRank.position_loss_sums``). ``L_ij`` is
        ``|dNDCG_ij| log(1 + exp(sigma (s_i - s_j)))``, XGBoost's cost for the update
        (the logistic cost of the reversed pair); with the pair's own RankNet cost the
        non-click propensities fell with the position and the model got worse
        (``benchmarks/RESULTS.md``, "Learning from clicks").
    query_losses : None or float64 array of shape (n_queries,) or (0,)
        Output: each query's |dNDCG|-weighted RankNet cost over the pairs counted,
        ``sum |dNDCG_ij| log(1 + exp(-sigma (s_i - s_j)))``, before LightGBM's
        normalisations (``LambdaRank.loss``); None or empty: not computed.
    rankings : int64 array of shape (n_rows,)
        Each query's rows in the order of the scores of the last call (any order of the
        query's own rows at first), re-sorted in place for these scores
        (``_rank_by_score``).
    """
    no_statistics = np.empty((3, 0))  # NDCG's: nothing ranked to precompute, nothing allocated per query
    n_queries = len(query_boundaries) - 1
    # A thread takes QUERY_CHUNK queries in turn with one set of rank-ordered rows: a query
    # of a few documents costs its allocations more than its pairs.
    for chunk in numba.prange((n_queries + QUERY_CHUNK - 1) // QUERY_CHUNK):
        first, stop = chunk * QUERY_CHUNK, min(n_queries, (chunk + 1) * QUERY_CHUNK)
        largest = 0
        for q in range(first, stop):
            largest = max(largest, query_boundaries[q + 1] - query_boundaries[q])
        padded = largest + _PAIR_BLOCK
        ranked = _RankedRows(
            np.empty(padded), np.empty(padded), np.empty(padded), np.empty(padded), np.empty(padded),
            np.empty(padded), np.empty(padded), np.empty(padded), np.empty(padded),
        )  # fmt: skip
        for q in range(first, stop):
            _query_gradients(
                q, query_boundaries[q], query_boundaries[q + 1], scores, labels, gains, query_scales[q], discounts,
                metric, stop_probabilities, sigma, truncation_level, normalize, pairs_per_document, pair_states,
                gradients, hessians, positions, propensities, position_losses, query_losses, no_statistics, rankings,
                ranked,
            )  # fmt: skip


# The empty arrays Python passes for optional arguments not given (``LambdaRank._kernel``);
# the kernel writes to none of them.
_NO_ROWS = np.empty(0)
_NO_PAIR_STATES = np.empty((0, 2), dtype=np.uint64)
_NO_POSITIONS = np.empty(0, dtype=INDEX_DTYPE)
_NO_PROPENSITIES = np.empty((2, 0))
_NO_POSITION_LOSSES = np.empty((0, 2, 0))


LambdaRankState = namedtuple(
    "LambdaRankState",
    [
        "labels", "gains", "query_boundaries", "query_scales", "discounts", "metric", "stop_probabilities", "sigma",
        "truncation_level", "normalize", "pairs_per_document", "rankings",
    ],
)  # fmt: skip
LambdaRankState.__doc__ = """``LambdaRank.compiled_state()``: the arguments of ``_lambdarank_gradients``
for top-k pairs without positions, with the objective's arrays (``rankings`` re-sorted in place)."""


@jit
def _lambdarank_gradients_from_python(*arguments):
    """``_lambdarank_gradients`` for Python: this cached caller keeps the kernel's code in its
    own cache entry, so a process calling it compiles nothing."""
    _lambdarank_gradients(*arguments)


@register_gradients(LambdaRankState)
def _lambdarank_gradients_at(state, scores, gradients, hessians):
    _lambdarank_gradients(
        scores, state.labels, state.gains, state.query_boundaries, state.query_scales, state.discounts, state.metric,
        state.stop_probabilities, state.sigma, state.truncation_level, state.normalize, state.pairs_per_document, None, gradients,
        hessians, None, None, None, None, state.rankings,
    )  # fmt: skip


@jit(inline="always")
def _query_gradients(
    q, start, end, scores, labels, gains, query_scale, discounts, metric, stop_probabilities, sigma,
    truncation_level, normalize, pairs_per_document, pair_states, gradients, hessians, positions, propensities,
    position_losses, query_losses, no_statistics, rankings, ranked_rows,
):  # fmt: skip
    """The gradients and hessians of one query's documents, ``start:end`` of the rows
    (``_lambdarank_gradients``, whose arguments these are; ``query_scale`` is the
    query's own; ``no_statistics`` the empty ``_ranked_statistics`` of NDCG;
    ``ranked_rows`` a ``_RankedRows`` at least the query's size): the pairs of the top
    ``truncation_level`` ranks with every document below them, or each document's
    sampled pairs; then the query's normalisation.

    The pairs read the query's scores, grades and gains copied in rank order and add to
    gradients and hessians kept in rank order, written back (normalised) at the end: the
    inner loop walks contiguous arrays instead of looking every document up through the
    ranking. LambdaRank-NDCG's top-k pairs (no positions, no loss asked for) whose
    scores span at most ``LINEAR_SPREAD / |sigma|`` go through ``_add_rank_pairs``, a
    rank's pairs at a time, without an exponential per pair; every other pair through
    ``_add_pair``.
    """
    n = end - start
    # Each optional array is None (the compiled boosting loop: numba drops its code by
    # type) or an array, empty when not asked for (Python's calls: one compiled signature
    # for every combination); ``stop_probabilities`` is read for MAP and ERR only.
    debiased = positions is not None and len(positions) > 0
    losses_wanted = query_losses is not None and len(query_losses) > 0
    sampled = pair_states is not None and len(pair_states) > 0
    by_metric = stop_probabilities is not None and metric != METRIC_NDCG
    if position_losses is not None and debiased:
        position_losses[q] = 0.0
    if query_losses is not None and losses_wanted:
        query_losses[q] = 0.0
    if n < 2 or query_scale == 0.0:
        for i in range(start, end):
            gradients[i] = 0.0
            hessians[i] = 0.0
        return
    order = rankings[start:end]
    _rank_by_score(scores, order, start)
    spread = scores[order[0]] != scores[order[n - 1]]
    ranked = no_statistics
    if stop_probabilities is not None and by_metric:
        ranked = _ranked_statistics(order, labels, stop_probabilities, metric)
    ranked_scores, ranked_labels, ranked_gains = ranked_rows.scores[:n], ranked_rows.labels[:n], ranked_rows.gains[:n]
    ranked_gradients, ranked_hessians = ranked_rows.gradients[:n], ranked_rows.hessians[:n]
    for r in range(n):
        ranked_scores[r] = scores[order[r]]
        ranked_labels[r] = labels[order[r]]
        ranked_gains[r] = gains[order[r]]
        ranked_gradients[r] = 0.0
        ranked_hessians[r] = 0.0
    total = 0.0
    # NaN scores rank last and fail the comparison: their pairs take _add_pair.
    by_rank = abs(sigma) * (ranked_scores[0] - ranked_scores[n - 1]) <= LINEAR_SPREAD
    if not (sampled or by_metric or debiased or losses_wanted) and by_rank:
        _fill_rank_terms(n, discounts, sigma, ranked_rows)
        offset, slope = (0.01, 1.0) if normalize and spread else (1.0, 0.0)
        # The ranks from the last run of one grade on have no pair of two grades below them.
        tail = n - 1
        while tail > 0 and ranked_labels[tail - 1] == ranked_labels[n - 1]:
            tail -= 1
        for i in range(min(tail, truncation_level)):
            total += _add_rank_pairs(i, n, query_scale, sigma, offset, slope, ranked_rows)
    elif pair_states is None or not sampled:
        for i in range(min(n - 1, truncation_level)):
            for j in range(i + 1, n):
                total += _add_pair(
                    q, order, i, j, ranked_scores, ranked_labels, ranked_gains, query_scale, discounts, metric,
                    stop_probabilities, by_metric, ranked, sigma, normalize, spread, ranked_gradients, ranked_hessians,
                    positions, debiased, propensities, position_losses, query_losses, losses_wanted,
                )  # fmt: skip
    else:
        # Ranks grouped by grade, best first: each document of a grade draws its partners
        # uniformly among the ranks outside its grade (XGBoost's "mean" pairs).
        by_grade = np.argsort(-ranked_labels, kind="mergesort")
        state = pair_states[q]
        first = 0
        while first < n:
            stop = first + 1
            while stop < n and ranked_labels[by_grade[stop]] == ranked_labels[by_grade[first]]:
                stop += 1
            outside = n - (stop - first)
            for _ in range(pairs_per_document if outside > 0 else 0):
                for k in range(first, stop):
                    other = randint(state, outside)
                    if other >= first:
                        other += stop - first
                    total += _add_pair(
                        q, order, by_grade[k], by_grade[other], ranked_scores, ranked_labels, ranked_gains, query_scale,
                        discounts, metric, stop_probabilities, by_metric, ranked, sigma, normalize, spread,
                        ranked_gradients, ranked_hessians, positions, debiased, propensities, position_losses, query_losses,
                        losses_wanted,
                    )  # fmt: skip
            first = stop
    factor = 1.0
    if normalize and sampled:
        factor = 1.0 / pairs_per_document
    elif normalize and total > 0.0:
        factor = np.log2(1.0 + total) / total
    for r in range(n):
        gradients[order[r]] = ranked_gradients[r] * factor  # times 1.0 is exact: no branch needed
        hessians[order[r]] = ranked_hessians[r] * factor


@jit(inline="always")
def _rank_by_score(scores, order, start):
    """Sort ``order`` (int64, one query's rows ``start:``) by descending ``scores`` (float64,
    every row), ties in row order and NaN last: the stable order of ``-scores``, as LightGBM
    ranks a query, and as ``np.argsort(-scores, kind="mergesort")`` gives it.

    ``order`` holds the query's ranking at the last scores, which boosting changes little
    from one iteration to the next: an insertion sort from it moves few rows. One that
    would move more than ``8 n`` (scores unrelated to the last ones) gives way to the merge
    sort, so a large query never costs ``n^2``; the order is the same either way, since
    (score, row) ranks the rows without ties.
    """
    n = len(order)
    budget = 8 * n
    for i in range(1, n):
        row = order[i]
        score = scores[row]
        j = i - 1
        while j >= 0 and _ranks_above(score, row, scores[order[j]], order[j]):
            order[j + 1] = order[j]
            j -= 1
            budget -= 1
        order[j + 1] = row
        if budget < 0:
            order[:] = np.argsort(-scores[start : start + n], kind="mergesort") + start
            return


@jit(inline="always")
def _ranks_above(score, row, other_score, other_row):
    """Whether (``score``, ``row``) ranks above (``other_score``, ``other_row``) in
    ``_rank_by_score``'s order: the higher score, a number above NaN, on a tie the lower row."""
    if score != score:
        return other_score != other_score and row < other_row
    if other_score != other_score:
        return True
    return score > other_score or (score == other_score and row < other_row)


@jit(inline="always")
def _add_pair(
    q, order, rank_a, rank_b, ranked_scores, ranked_labels, ranked_gains, query_scale, discounts, metric, stop_probabilities,
    by_metric, ranked, sigma, normalize, spread, ranked_gradients, ranked_hessians, positions, debiased, propensities,
    position_losses, query_losses, losses_wanted,
):  # fmt: skip
    """Add the pair of the documents at ranks ``rank_a`` and ``rank_b`` (0-based, ``order``
    the query's ranking) to their gradients and hessians; return the pair's
    ``2 |lambda_ij|`` (0 for documents of one grade). ``by_metric``, ``debiased`` and
    ``losses_wanted`` say which of the optional arrays are given (``_query_gradients``).

    ``ranked_*`` are the query's scores, grades, gains, gradients and hessians in rank
    order (``_query_gradients``). The better-graded document gets
    ``lambda_ij = -sigma |dM_ij| rho_ij`` and the other ``-lambda_ij``,
    ``rho_ij = 1 / (1 + exp(sigma (s_high - s_low)))``, ``|dM_ij|`` the change of the
    metric were the two swapped (Burges, MSR-TR-2010-82, Eq. 3 and §4, §6 for other
    metrics than NDCG); both hessians take ``sigma^2 |dM_ij| rho_ij (1 - rho_ij)`` (§7).
    """
    if ranked_labels[rank_a] == ranked_labels[rank_b]:
        return 0.0
    a_higher = ranked_labels[rank_a] > ranked_labels[rank_b]
    high_rank = rank_a if a_higher else rank_b
    low_rank = rank_b if a_higher else rank_a
    score_gap = ranked_scores[high_rank] - ranked_scores[low_rank]
    if stop_probabilities is None or not by_metric:  # NDCG
        gain_gap = ranked_gains[high_rank] - ranked_gains[low_rank]
        delta_ndcg = gain_gap * abs(discounts[high_rank] - discounts[low_rank]) * query_scale
    else:
        delta_ndcg = abs(_metric_change(metric, ranked, rank_a, rank_b)) * query_scale
    if query_losses is not None and losses_wanted:
        query_losses[q] += delta_ndcg * _softplus(-sigma * score_gap)
    if normalize and spread:
        delta_ndcg /= 0.01 + abs(score_gap)
    rho = 1.0 / (1.0 + np.exp(sigma * score_gap))
    if positions is not None and debiased:
        shown_high = positions[order[high_rank]]
        shown_low = positions[order[low_rank]]
        debias = 1.0 / (propensities[0, shown_high] * propensities[1, shown_low])
        # The reversed pair's logistic cost, log(1 + exp(sigma (s_i - s_j))), as
        # XGBoost's lambdarank_unbiased weighs the update (docs/boosting.md).
        pair_loss = delta_ndcg * _softplus(sigma * score_gap)
        position_losses[q, 0, shown_high] += pair_loss / propensities[1, shown_low]
        position_losses[q, 1, shown_low] += pair_loss / propensities[0, shown_high]
        delta_ndcg *= debias
    lambda_ = -sigma * delta_ndcg * rho
    curvature = sigma * sigma * delta_ndcg * rho * (1.0 - rho)
    ranked_gradients[high_rank] += lambda_
    ranked_gradients[low_rank] -= lambda_
    ranked_hessians[high_rank] += curvature
    ranked_hessians[low_rank] += curvature
    return -2.0 * lambda_


@jit(refcounted=False)
def _fill_rank_terms(n, discounts, sigma, ranked_rows):
    """What ``_add_rank_pairs`` reads besides the scores, grades and gains of a query of
    ``n`` documents in ``ranked_rows`` (a ``_RankedRows``): each rank's discount and
    ``exp(sigma (s - s_top))``, and the ``_PAIR_BLOCK`` ranks past the last one filled
    with finite terms (the top's score, grade 0, the last discount), so that the padding's
    pairs compute no NaN nor subnormal number, and gradients and hessians of 0 there."""
    for r in range(n):
        ranked_rows.discounts[r] = discounts[r]
        ranked_rows.exponentials[r] = np.exp(sigma * (ranked_rows.scores[r] - ranked_rows.scores[0]))
    for r in range(n, n + _PAIR_BLOCK):
        ranked_rows.scores[r] = ranked_rows.scores[0]
        ranked_rows.labels[r] = 0.0
        ranked_rows.gains[r] = 0.0
        ranked_rows.discounts[r] = discounts[n - 1]
        ranked_rows.exponentials[r] = 1.0
        ranked_rows.gradients[r] = 0.0
        ranked_rows.hessians[r] = 0.0


@jit(refcounted=False, error_model="numpy")
def _add_rank_pairs(i, n, query_scale, sigma, offset, slope, ranked_rows):
    """Add the NDCG pairs of the document at rank ``i`` with every document below it to
    their gradients and hessians in ``ranked_rows`` (a ``_RankedRows`` filled by
    ``_query_gradients``); return the pairs' sum of ``2 |lambda_ij|``.

    ``_add_pair``'s lambdas and curvatures (Burges, MSR-TR-2010-82, Eq. 3, §4 and §7)
    for NDCG, written with each rank's ``e_r = exp(sigma (s_r - s_top))``:
    ``rho_ij = 1 / (1 + exp(sigma (s_high - s_low))) = e_low / (e_low + e_high)`` and
    ``1 - rho_ij = e_high / (e_low + e_high)``, exact up to rounding. With
    ``w = 1 / (d (e_low + e_high))``, ``d = offset + slope |s_i - s_j|`` (``(0.01, 1)``
    for LightGBM's normalisation of ``|dNDCG|``, ``(1, 0)`` without it), ``lambda_ij =
    sigma |dNDCG| e_low w`` and the curvature ``sigma lambda_ij e_high w d``: one division
    and no exponential per pair, and a loop over ``j`` without a call or a branch, which
    the compiler vectorises (``error_model="numpy"`` drops its division-by-zero test;
    the caller keeps ``sigma (s_top - s_j)`` at most ``LINEAR_SPREAD``, so every ``e``,
    their products and ``w`` are normal numbers). The loop runs in whole blocks of
    ``_PAIR_BLOCK`` pairs, into the query's padding, so that no pair is left to the
    scalar remainder loop. A pair of one grade has equal gains, so it adds zeros. Rank
    ``i``'s own terms are kept per pair and summed in rank order after the loop: a
    running sum in the loop would be a reduction, which the compiler vectorises only by
    reordering the additions.

    Parameters
    ----------
    i, n : int
        The rank and the query's size.
    query_scale : float
        ``1 / max DCG`` at the pairs' cutoff.
    sigma, offset, slope : float
    ranked_rows : _RankedRows
        Ranks ``:n`` hold the query and the next ``_PAIR_BLOCK`` its padding
        (``_fill_rank_terms``); ``gradients`` and ``hessians`` are added to,
        ``pair_lambdas`` and ``pair_curvatures`` overwritten.
    """
    scores, labels, gains, discounts = ranked_rows.scores, ranked_rows.labels, ranked_rows.gains, ranked_rows.discounts
    exponentials, gradients, hessians = ranked_rows.exponentials, ranked_rows.gradients, ranked_rows.hessians
    pair_lambdas, pair_curvatures = ranked_rows.pair_lambdas, ranked_rows.pair_curvatures
    score_i, label_i, gain_i, discount_i, exponential_i = scores[i], labels[i], gains[i], discounts[i], exponentials[i]
    stop = i + 1 + (n - i - 1 + _PAIR_BLOCK - 1) // _PAIR_BLOCK * _PAIR_BLOCK
    for rank in range(i + 1, stop):
        j = nowrap(rank)
        i_higher = label_i > labels[j]
        sign = 1.0 if i_higher else -1.0
        score_gap = sign * (score_i - scores[j])
        delta_ndcg = sign * (gain_i - gains[j]) * abs(discount_i - discounts[j]) * query_scale
        exponential_high = exponential_i if i_higher else exponentials[j]
        exponential_low = exponentials[j] if i_higher else exponential_i
        normaliser = offset + slope * abs(score_gap)
        weight = 1.0 / (normaliser * (exponential_low + exponential_high))
        lambda_ = sigma * delta_ndcg * exponential_low * weight
        curvature = sigma * lambda_ * (exponential_high * weight * normaliser)
        pair_lambdas[j] = sign * lambda_
        pair_curvatures[j] = curvature
        gradients[j] += sign * lambda_
        hessians[j] += curvature
    lambda_sum = curvature_sum = total = 0.0
    for rank in range(i + 1, n):
        lambda_sum += pair_lambdas[rank]
        curvature_sum += pair_curvatures[rank]
        total += abs(pair_lambdas[rank])
    gradients[i] -= lambda_sum
    hessians[i] += curvature_sum
    return 2.0 * total


@jit(inline="always")
def _ranked_statistics(order, labels, stop_probabilities, metric):
    """What ``_metric_change`` reads of a query's current ranking, float64 (3, n): for MAP
    the relevant documents (grade > 0) at or above each rank and the prefix sums of
    ``1 / (rank + 1)`` over the relevant ones; for ERR each rank's stop probability
    ``R``, the probability of reaching it ``prod_{k<r} (1 - R_k)`` and the suffix sums of
    ``reach R / (rank + 1)`` from each rank down.

    Suffix, not prefix, sums: a swap's ranks in between hold terms as small as the
    probability of reaching them, which behind a document of ``R`` near 1 is far below
    the rounding of a prefix sum near 1, and their difference would be noise (then scaled
    by ``1 / (1 - R)``); a suffix sum there is of that size itself."""
    n = len(order)
    ranked = np.empty((3, n))
    relevant = 0.0
    accumulated = 0.0
    reach = 1.0
    for r in range(n):
        if metric == METRIC_MAP:
            if labels[order[r]] > 0.0:
                relevant += 1.0
                accumulated += 1.0 / (r + 1.0)
            ranked[0, r] = relevant
            ranked[1, r] = accumulated
        else:
            stop = stop_probabilities[order[r]]
            ranked[0, r] = stop
            ranked[1, r] = reach
            ranked[2, r] = reach * stop / (r + 1.0)
            reach *= 1.0 - stop
    if metric != METRIC_MAP:
        for r in range(n - 2, -1, -1):
            ranked[2, r] += ranked[2, r + 1]
    return ranked


@jit(inline="always")
def _metric_change(metric, ranked, rank_a, rank_b):
    """The change of a query's AP times ``R``, or of its ERR, when the documents at ranks
    ``rank_a`` and ``rank_b`` swap (``ranked``: ``_ranked_statistics``), in O(1).

    AP (``R`` relevant documents; ``n_r`` those at or above rank ``r``; ``A`` the sums of
    ``1 / (r + 1)`` over relevant ranks), a relevant document at ``a`` swapped with an
    irrelevant one at ``b > a``: it moves from contributing ``n_a / (a + 1)`` to
    ``n_b / (b + 1)``, and each relevant document between loses one relevant document
    above it, ``A_{b-1} - A_a``; the reverse swap is the negative of the mirrored case
    (Donmez, Svore & Burges, "On the Local Optimality of LambdaRank", SIGIR 2009, use
    the same swap). ERR (``p_r`` the probability of reaching ``r``, ``S`` the suffix sums
    of ``p_r R_r / (r + 1)``), documents ``x`` at ``a`` and ``y`` at ``b > a``: rank ``a``
    changes by ``p_a (R_y - R_x) / (a + 1)``, the ranks between scale by
    ``(1 - R_y) / (1 - R_x)``, and rank ``b`` goes from ``p_b R_y`` to
    ``p_b (1 - R_y) R_x / (1 - R_x)``, over ``b + 1``.
    """
    a = min(rank_a, rank_b)
    b = max(rank_a, rank_b)
    if metric == METRIC_MAP:
        relevant_above_a = ranked[0, a - 1] if a > 0 else 0.0
        relevant_a = ranked[0, a] > relevant_above_a
        relevant_b = ranked[0, b] > ranked[0, b - 1]
        if relevant_a == relevant_b:
            return 0.0
        between = ranked[1, b - 1] - ranked[1, a]
        if relevant_a:
            return ranked[0, b] / (b + 1.0) - ranked[0, a] / (a + 1.0) - between
        return (relevant_above_a + 1.0) / (a + 1.0) - ranked[0, b] / (b + 1.0) + between
    stop_x = ranked[0, a]
    stop_y = ranked[0, b]
    between = ranked[2, a + 1] - ranked[2, b]
    scale = (1.0 - stop_y) / (1.0 - stop_x)
    return (
        ranked[1, a] * (stop_y - stop_x) / (a + 1.0)
        + (scale - 1.0) * between
        + ranked[1, b] * (scale * stop_x - stop_y) / (b + 1.0)
    )


@jit
def _fill_query_scales(labels, stops, query_boundaries, metric, out):
    """``query_scales`` of ``_lambdarank_gradients`` for MAP (``1 / R``) and ERR (``1 /`` the
    ERR of the query's documents ordered by grade), 0 for a query without a relevant
    document (grade > 0).

    Parameters
    ----------
    labels, stops : float64 arrays of shape (n_rows,), rows grouped by query
        Grades and ERR's stop probabilities.
    query_boundaries : int64 array of shape (n_queries + 1,)
    metric : int
        ``METRIC_MAP`` or ``METRIC_ERR``.
    out : float64 array of shape (n_queries,)
        Output.
    """
    for q in range(len(query_boundaries) - 1):
        start, end = query_boundaries[q], query_boundaries[q + 1]
        relevant = 0.0
        for row in range(start, end):
            if labels[row] > 0.0:
                relevant += 1.0
        out[q] = 0.0
        if relevant == 0.0:
            continue
        if metric == METRIC_MAP:
            out[q] = 1.0 / relevant
            continue
        ideal = np.argsort(-labels[start:end], kind="mergesort") + start
        err = _ranked_statistics(ideal, labels, stops, metric)[2, 0]  # the ideal order's ERR: the whole suffix sum
        out[q] = 1.0 / err if err > 0.0 else 0.0  # a gain table can give every present grade 0


class LambdaRank(RankingObjective):
    """LambdaRank-NDCG pair gradients (Burges 2010), LightGBM's ``lambdarank``.

    Parameters
    ----------
    sigma : float, default=1.0
    truncation_level : int, default=30
        Top-k pairs: pairs whose better-ranked document is below this rank are
        skipped; the ideal DCG is taken at this cutoff.
    normalize : bool, default=True
        Divide ``|dNDCG|`` by ``0.01 + |s_i - s_j|`` and scale each query's lambdas
        by ``log2(1 + S) / S`` (LightGBM's ``lambdarank_norm``); with sampled pairs
        by ``1 / pairs_per_document`` instead (XGBoost's ``lambdarank_normalization``).
    label_gain : {"exp", "linear"} or ndarray of shape (n_grades,), default="exp"
        The gain ``G(l)`` in ``|dNDCG|`` (``_ranking.row_gains``; LightGBM's
        ``label_gain``), validated by ``_input.labels.check_gain``.
    pair_method : {"topk", "mean"}, default="topk"
        ``"topk"``: every pair with a document in the top ``truncation_level`` ranks
        (LightGBM's pairs, XGBoost's ``"topk"``). ``"mean"``: at every iteration
        each document draws ``pairs_per_document`` partners uniformly among the
        query's documents of other grades, and the ideal DCG is the whole list's
        (XGBoost's ``"mean"``).
    pairs_per_document : int, default=1
        The partners each document draws with ``pair_method="mean"``.
    random_state : numpy.random.SeedSequence, int or None, default=None
        Seed of the sampled pairs; every ``gradients`` call draws new ones.
    metric : {"ndcg", "map", "err"}, default="ndcg"
        Whose change when two documents swap weighs their pair (Burges 2010, §6;
        XGBoost's ``rank:map``): NDCG's; AP's (relevant: grade > 0) over the query's
        ``R``; ERR's (``_ranking.stop_probabilities`` of ``label_gain``, ``g_max`` the
        largest grade of the data) over the ideal order's ERR. The change is of the
        whole ranking; ``truncation_level`` still selects the top-k pairs.
    max_grade : float or None, default=None
        ERR's ``g_max``, the largest grade of the fit; None: the largest of the labels
        ``prepare`` is given (a partition of a partitioned fit is given the fit's).
    """

    learns_from_positions = True
    shift_invariant = True

    @property
    def draws_at_random(self) -> bool:
        """Sampled pairs are drawn; top-k pairs are not."""
        return self.pair_method == "mean"

    def __init__(
        self, sigma: float = 1.0, truncation_level: int = 30, normalize: bool = True, label_gain: object = "exp",
        pair_method: str = "topk", pairs_per_document: int = 1, random_state: object = None, metric: str = "ndcg",
        max_grade: float | None = None,
    ) -> None:  # fmt: skip
        self.sigma = sigma
        self.truncation_level = truncation_level
        self.normalize = normalize
        self.label_gain = label_gain
        self.pair_method = pair_method
        self.pairs_per_document = pairs_per_document
        self.random_state = random_state
        self.metric = metric
        self.max_grade = max_grade

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray) -> None:
        super().prepare(labels, query_boundaries)
        largest = int(np.diff(self.query_boundaries_).max(initial=1))
        self.discounts_ = discount_table(largest)
        self.gains_ = row_gains(self.labels_, self.query_boundaries_, self.label_gain)
        self.query_scales_ = np.empty(len(query_boundaries) - 1)
        sampled = self.pair_method == "mean"
        self._metric = METRICS[self.metric]
        self.stop_probabilities_ = None if self._metric == METRIC_NDCG else np.zeros(0)
        if self._metric == METRIC_NDCG:
            fill_inverse_max_dcg(
                self.labels_, self.gains_, self.query_boundaries_, largest if sampled else self.truncation_level,
                self.discounts_, self.query_scales_,
            )  # fmt: skip
        else:
            if self._metric == METRIC_ERR:
                # Below 1: a swap delta divides by 1 - R, which the exponential gain
                # rounds to 0 from 53 grades above the others on.
                largest = check_max_grade(self.max_grade, self.labels_, self.label_gain, gain_name="label_gain")
                stops = stop_probabilities(self.labels_, self.label_gain, largest)
                self.stop_probabilities_ = np.minimum(stops, np.nextafter(1.0, 0.0))
            _fill_query_scales(
                self.labels_, self.stop_probabilities_, self.query_boundaries_, self._metric, self.query_scales_
            )
        self._pair_seeds = np.random.default_rng(self.random_state) if sampled else None
        self.pair_states_ = self._draw_pair_states()
        # Each query's ranking at the last gradients, which the next call re-sorts (_rank_by_score):
        # one objective serves one fit at a time, as each fit makes its own.
        self._rankings = np.arange(len(self.labels_), dtype=INDEX_DTYPE)

    def _draw_pair_states(self) -> np.ndarray | None:
        """Each query's generator state for the next sampled pairs (``_tree._rng``); None for top-k."""
        if self._pair_seeds is None:
            return None
        share, n_queries = self._share(), len(self.query_boundaries_) - 1
        # Every query's states, then this objective's: a bounded draw may reject an output,
        # so the stream cannot be advanced past the other queries' states, as RowLines
        # advances past other rows.
        every = self._pair_seeds.integers(1, np.iinfo(np.uint64).max, size=(share.n_queries, 2), dtype=np.uint64)
        return every[share.first_query : share.first_query + n_queries]

    def _kernel(self, scores, normalize, gradients, hessians, positions, propensities, position_losses, losses, rankings):
        """``_lambdarank_gradients`` with this objective's settings, the current pair states
        (a copy: the kernel advances the states it is given) and ``rankings`` (re-sorted in
        place). Every optional array not given (None) is passed empty, so that Python's
        calls, whatever they ask for, share one compiled signature."""
        states = _NO_PAIR_STATES if self.pair_states_ is None else self.pair_states_.copy()
        stops = _NO_ROWS if self.stop_probabilities_ is None else self.stop_probabilities_
        if positions is None:
            positions, propensities, position_losses = _NO_POSITIONS, _NO_PROPENSITIES, _NO_POSITION_LOSSES
        _lambdarank_gradients_from_python(
            scores, self.labels_, self.gains_, self.query_boundaries_, self.query_scales_, self.discounts_,
            self._metric, stops, float(self.sigma), int(self.truncation_level), normalize, int(self.pairs_per_document),
            states, gradients, hessians, positions, propensities, position_losses, _NO_ROWS if losses is None else losses,
            rankings,
        )  # fmt: skip

    def loss(self, scores: np.ndarray) -> float:
        """The |dNDCG|-weighted RankNet cost of the pairs the gradients count, summed over
        queries (without the normalisations, so its derivative is the lambdas'
        direction, not their scale); sampled pairs: those of the last ``gradients`` call."""
        scores = np.ascontiguousarray(scores, dtype=FLOAT_DTYPE)
        losses = np.empty(len(self.query_boundaries_) - 1)
        # Rankings of its own: the loss of other scores leaves the gradients' rankings as they are.
        rankings = np.arange(len(scores), dtype=INDEX_DTYPE)
        self._kernel(scores, False, np.empty(len(scores)), np.empty(len(scores)), None, None, None, losses, rankings)
        return float(losses.sum())

    def show_positions(self, positions: np.ndarray, propensities: np.ndarray) -> None:
        """Make the gradients Unbiased LambdaMART's (Hu et al., WWW 2019): labels are
        clicks, ``positions`` (int64, 1 = top, one per grouped row) where each document
        was shown, ``propensities`` (float64, (2, n_positions), ``n_positions`` at least
        the largest position) the ``t+`` and ``t-`` the pairs are weighted by, read at
        every ``gradients`` call: their owner (``ensemble/_position_bias.PositionBias``)
        updates them in place from ``position_loss_sums``."""
        self.positions_ = np.ascontiguousarray(positions - 1, dtype=INDEX_DTYPE)
        self.propensities_ = propensities
        self._position_losses = np.zeros((len(self.query_boundaries_) - 1, 2, propensities.shape[1]))

    def position_loss_sums(self, query_weights: np.ndarray, carried: np.ndarray | None = None) -> np.ndarray:
        """The pair losses of the last ``gradients`` call summed by position (the kernel's
        ``position_losses`` summed over the queries), float64 of shape (2, n_positions):
        row 0 by the clicked document's position, row 1 by the unclicked one's (Hu et al.,
        Eqs. 11-12), each query's weighted by ``query_weights`` (float64, (n_queries,)):
        a query weighed ``w`` counts as ``w`` copies of it, one of weight 0 as none. The
        queries are added one after another in their order, to ``carried`` when given
        (the sums of the queries before these, in another partition), so that partitions
        summed one after another give the sums over their concatenated queries."""
        total = np.zeros(self._position_losses.shape[1:]) if carried is None else carried.copy()
        _add_queries_in_order(self._position_losses, np.ascontiguousarray(query_weights, dtype=FLOAT_DTYPE), total)
        return total

    def compiled_state(self) -> LambdaRankState | None:
        """Top-k pairs without positions (sampled pairs draw their states from Python at every call)."""
        if self._pair_seeds is not None or getattr(self, "positions_", None) is not None:
            return None
        return LambdaRankState(
            self.labels_, self.gains_, self.query_boundaries_, self.query_scales_, self.discounts_, self._metric,
            self.stop_probabilities_, float(self.sigma), int(self.truncation_level), bool(self.normalize), int(self.pairs_per_document),
            self._rankings,
        )  # fmt: skip

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        if self._pair_seeds is not None:
            self.pair_states_ = self._draw_pair_states()
        unbiased = getattr(self, "positions_", None) is not None
        self._kernel(
            scores, bool(self.normalize), gradients, hessians, self.positions_ if unbiased else None,
            self.propensities_ if unbiased else None, self._position_losses if unbiased else None, None, self._rankings,
        )  # fmt: skip
