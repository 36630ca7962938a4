"""The listwise criterion: splits that maximise the tree's mean expected NDCG (RF-list).

Ibrahim & Carman, "Comparing Pointwise and Listwise Objective Functions for Random
Forest based Learning-to-Rank", §4.3 and Algorithm 4. Every leaf scores its training
documents with their pooled expected relevance (Eq. 9); the tree's objective is the
mean over its training queries of the expected NDCG (Eq. 11-13), where documents of a
query with equal scores (from any leaves) form a tie block and every position of a
block gets the block's mean gain ``2^l - 1``:

    E[DCG_q] = sum_B (G_B / n_B) * (CD(a_B + n_B) - CD(a_B)),   CD(r) = sum_{i<=r} D(i)

with ``a_B`` the number of documents ranked above block ``B`` and ``D`` the discount
(``cumulative_discounts``). A split's gain is the change of
``sum_q w_q E[DCG_q] / IDCG_q`` (``w_q`` the query's sampling weight), reported
divided by ``sum_q w_q`` — the change of the mean expected NDCG.

Incremental evaluation (what makes RF-list scale; the paper's algorithm costs
O(Q N) per candidate). The builder keeps every query's tie blocks over the whole
tree (score, copies, gain; scores decreasing), updated when a split moves documents
into the children (``move_to_child``, O(n_child + m_q) per query with ``m_q`` blocks).
Only the queries with documents in the node can change. For each of them
``prepare_node`` takes, once per node, its blocks OUTSIDE the node (its tree blocks
less the node's documents, all of which sit in the block of the node's score) and
adds start positions and prefix sums of their contributions, unshifted and shifted
down by the query's node-document count ``n_q``.
A candidate split places the query's node documents in two parts, left at the left
child's score ``s_L`` and right at ``s_R``; blocks above both parts keep their
positions, blocks below both move down by ``n_q`` whatever the split, so with the
prefix sums one query's E[DCG] costs O(log m_q + b_q): two binary searches among its
``m_q`` blocks plus the ``b_q`` blocks that lie *between* ``s_L`` and ``s_R`` (they
move by the upper part's size). The sweep keeps the total ``sum_q`` up to date and,
between two consecutive candidates, changes only the queries whose value can have
changed:

* queries with a document that moved left (their part sizes changed) are
  re-evaluated;
* a block whose score lies between the previous and the new ``s_L`` (or ``s_R``),
  inclusive, of a query with a part on that side, is found in the node's sorted
  array of all block scores by galloping from the previous score's place
  (``_cross_blocks`` through ``_move_score``, logarithmic in the blocks crossed;
  nothing when the score did not move; each event carries its block's slot, whose
  state word says whether it is listed already and which children hold its parts,
  so a crossing that changes nothing costs one load). The part and the block swap
  places (or tie, or part), and only their two contributions change: with the block's
  outside copies above it and the other part's copies when that part is above
  both, it is an O(1) update (``_crossing_change``). These updates use positions
  that do not depend on where the part is, so the crossings of one query
  telescope in any order. When the crossed blocks outnumber four times the
  queries that have a left part (for ``s_L``) or a right part (for ``s_R``),
  those queries are re-evaluated instead — the early moves make ``s_L`` jump
  across most blocks, the last ones ``s_R``;
* where ``s_L`` moving reaches or leaves the previous ``s_R``, or ``s_R`` moving
  reaches or leaves the new ``s_L``, the queries that have both a left and a
  right part are re-evaluated (their parts swap places, merge or part, which the
  block updates do not cover); a query with one part does not see the other
  child's score, and in deep nodes most queries have one document there.

Documents without gain (grade 0, most of LETOR) prune this further; each rule below
is exact, and ``tests/tree/test_listwise.py`` checks the running total against a
brute-force recomputation at every candidate:

* a query whose node documents all lack gain keeps only its relevant outside
  blocks (blocks without gain are worth 0 wherever the parts go, and move nothing
  else): fewer blocks to search, fewer crossings;
* such a query is not re-evaluated when none of its blocks lies within the span of
  both children's scores at this candidate and the previous one
  (``_cannot_change``): every block then has all of the node's copies above it,
  or none, at both candidates;
* a part without gain crossing a block without gain changes nothing.

With a cutoff (``ndcg_k``) the same holds of the outside blocks starting at or past
it: the node's parts can only push them further down, so they are worth 0 and are
left out like the blocks without gain (their copies still count in the positions).

On MQ2008 these rules leave fewer than half of the re-evaluations, and the O(1)
crossing updates replace a further sixth (``docs/design.md``, "The listwise
criterion", has the counts).

Per node: O(n + sum_q m_q + D log D) to build the blocks and the sorted array of
their ``M`` scores, ``D`` of them distinct (a counting sort, ``_sort_events``); per
feature: O(n + Q_node + sum over re-evaluations of (log m + b)) plus O(1) per
crossing, where the re-evaluations number at most the moves plus, per candidate
where a score jumps across more than four blocks per query on its side, those
queries, plus, where the parts pass each other, the queries split in two. The
crossings are the cost of exactness: each query whose order with respect to a child
changes must be updated, so a candidate costs up to O(Q_node log m). With a fixed
number of documents per query, Q_node of a node of given size grows with the number
of queries, and so the time per tree grows faster than the rows
(``benchmarks/bench_listwise_scaling.py``; exponent in ``benchmarks/RESULTS.md``);
the cost per event stays flat as the data grows, so that growth is the one of
``sum_q m_q`` per node, not of cache misses.

A document's copies are the times its tree drew it (a document sampled twice is two
identical documents); its sample weight is not a count of copies but a factor of its
gain, which the estimator folds into ``row_gains`` (``ensemble/_listwise_forest.py``),
so that positions, and the memory of ``CD``, do not depend on the weights' values.
``CD`` is still read at real positions, linear between integers. Scores are compared
exactly: with integer weights and grades the sweep's means are the very doubles the
builder stores in the children, so ties are detected exactly.
"""

from collections import namedtuple

import numpy as np

from .._numba.jit import jit, nowrap
from .._numba.prefetch import GATHER_DISTANCE, prefetch
from .._ranking import discount_table
from . import _rng, _scans

# Columns of the per-query ("slot") float table.
COUNT = 0  # node documents of the query (copies)
GAIN = 1  # their total gain
LEFT_COUNT = 2
LEFT_GAIN = 3
VALUE = 4  # w_q / IDCG_q * E[DCG_q] for the current candidate
PARENT = 5  # the same before the split
SCALE = 6  # w_q / IDCG_q
OTHERS = 7  # copies outside the node
TOTAL = 8  # sum of the outside blocks' contributions, unshifted
TOTAL_SHIFTED = 9  # the same with every block moved down by COUNT
N_SLOT_COLUMNS = 10
# Columns of the per-query int table.
QUERY = 0
FIRST_BLOCK = 1
END_BLOCK = 2
STATE = 3  # (last candidate for which the query was listed) << LISTED_SHIFT | LEFT_PART | RIGHT_PART
OPEN_INDEX = 4  # position in the list of queries that still have documents on the right
N_SLOT_INT_COLUMNS = 5
# Bits of ``STATE``: which children hold some of the query's node documents. One
# word answers both questions a crossing asks first (listed already? a part on
# this side?), and most crossings stop there.
LEFT_PART = 1
RIGHT_PART = 2
LISTED_SHIFT = 2
# Fields of a block. The tree's blocks (``start_query_blocks``) are rows of a
# table with the first three as columns. The node's blocks (``prepare_node``) are
# columns of a field-major table, ``blocks[field, block]``: a query's scores are
# then contiguous, so its binary searches read one or two cache lines, not one
# per probe (on large data the re-evaluations miss the caches).
SCORE = 0
BLOCK_COUNT = 1
BLOCK_GAIN = 2
N_TREE_BLOCK_COLUMNS = 3
POSITION = 3  # copies ranked above the block
BEFORE = 4  # prefix sum of the query's earlier blocks' contributions
BEFORE_SHIFTED = 5
BLOCK_MEAN = 6  # BLOCK_GAIN / BLOCK_COUNT, the mean gain of the block's positions (Eq. 12)
N_BLOCK_FIELDS = 7
# An event (an outside block in the node's score order) packs the block's slot and
# its row in ``blocks`` into one int64, so a crossing learns whose block it is without
# reading the block's row (most crossings are skipped on the slot's state alone).
EVENT_SLOT_SHIFT = 32
EVENT_BLOCK_MASK = (1 << EVENT_SLOT_SHIFT) - 1
# Columns of the per-position table (the node's rows in the builder's sample order).
COPIES_AT = 0
GAIN_AT = 1  # copies * gain
TARGET_AT = 2  # weight * leaf target
N_POSITION_COLUMNS = 3

def cumulative_discounts(n_positions: int, discount: str = "log2", power: float = 1.0, cutoff: int | None = None) -> np.ndarray:
    """``CD[r] = sum_{i=1}^{r} D(i)`` for ``r = 0 .. n_positions + 1``.

    Parameters
    ----------
    n_positions : int
        Largest position needed (the most copies in one query).
    discount, power, cutoff :
        ``D`` (``_ranking.discount_table``): ``"log2"`` (Eq. 8),
        ``"log_power"`` (Eq. 14), ``"rank_power"`` (Eq. 15); a cutoff is NDCG@k
        (heuristic 6 of §4.4.2).

    Returns
    -------
    ndarray of shape (n_positions + 2,), float64
    """
    return np.concatenate(([0.0], np.cumsum(discount_table(n_positions + 1, discount, power, cutoff))))


@jit(inline="always")
def _cumulative(cumulative_discount, position):
    """``CD`` at a real position, linear between integers (integer weights never interpolate)."""
    last = len(cumulative_discount) - 1
    if position >= last:
        return cumulative_discount[nowrap(last)]
    whole = int(position)
    low = cumulative_discount[nowrap(whole)]
    return low + (position - whole) * (cumulative_discount[nowrap(whole + 1)] - low)


@jit
def discount_horizon(cumulative_discount: np.ndarray) -> int:
    """First position from which ``CD`` stays flat: ``ndcg_k`` with a cutoff, past the
    longest query (never reached) without. A block starting there is worth 0."""
    horizon = len(cumulative_discount) - 1
    while horizon > 0 and cumulative_discount[nowrap(horizon - 1)] == cumulative_discount[nowrap(horizon)]:
        horizon -= 1
    return horizon


@jit(inline="always")
def _spread_value(mean, discount_at_start, discount_at_end):
    """Expected DCG of a tie block: its mean gain times the discounts of its positions (``CD`` at its ends)."""
    return mean * (discount_at_end - discount_at_start)


@jit(inline="always")
def _mean_block_value(cumulative_discount, start, count, mean):
    """Expected DCG of a tie block of ``count`` copies with mean gain ``mean`` after ``start`` copies."""
    return _spread_value(mean, _cumulative(cumulative_discount, start), _cumulative(cumulative_discount, start + count))


@jit(inline="always")
def _block_value(cumulative_discount, start, count, gain):
    """Expected DCG of a tie block of ``count`` copies with total ``gain`` after ``start`` copies."""
    if count <= 0.0:
        return 0.0
    return _mean_block_value(cumulative_discount, start, count, gain / count)


@jit(inline="always")
def _first_not_above(scores, first, end, score):
    """First index in ``[first, end)`` of ``scores`` (decreasing there) whose value is ``<= score``."""
    low = first
    high = end
    while low < high:
        middle = (low + high) // 2
        if scores[nowrap(middle)] > score:
            low = middle + 1
        else:
            high = middle
    return low


@jit(inline="always")
def _part_value(blocks, cumulative_discount, j, end, others, shift, count, gain, score):
    """A part of the node's documents inserted before block ``j`` (merged with it on a tie).

    Returns the part's expected DCG and the first block after it.
    """
    start = (blocks[POSITION, nowrap(j)] if j < end else others) + shift
    if j < end and blocks[SCORE, nowrap(j)] == score:
        count += blocks[BLOCK_COUNT, nowrap(j)]
        gain += blocks[BLOCK_GAIN, nowrap(j)]
        j += 1
    return _block_value(cumulative_discount, start, count, gain), j


@jit(refcounted=False, callable_from_python=False)
def query_dcg(
    blocks, cumulative_discount, first, end, others, total, total_shifted, count_a, gain_a, score_a, count_b, gain_b,
    score_b,
):  # fmt: skip
    """Expected DCG of one query with its node documents split into parts a and b.

    The query's outside blocks are ``blocks[first:end]``, holding ``others`` copies;
    ``total``/``total_shifted`` are their summed contributions, in place and moved
    down by the node's copies. A part with no copies is absent; parts with equal
    scores are one block.

    A kernel of its own, not inlined: numba copied its IR into both callers (a slot's
    value before the split, the sweep's re-evaluations), and those copies were a large
    share of the listwise estimators' cold compile; called, it costs no time per tree
    (``docs/design.md``, "Numba rules").
    """
    if count_a <= 0.0 or count_b <= 0.0 or score_a == score_b:
        count = count_a + count_b
        gain = gain_a + gain_b
        score = score_a if count_a > 0.0 else score_b
        j = _first_not_above(blocks[SCORE], first, end, score)
        value = blocks[BEFORE, nowrap(j)] if j < end else total
        part, j = _part_value(blocks, cumulative_discount, j, end, others, 0.0, count, gain, score)
        return value + part + total_shifted - (blocks[BEFORE_SHIFTED, nowrap(j)] if j < end else total_shifted)
    if score_a > score_b:
        upper_count, upper_gain, upper_score = count_a, gain_a, score_a
        lower_count, lower_gain, lower_score = count_b, gain_b, score_b
    else:
        upper_count, upper_gain, upper_score = count_b, gain_b, score_b
        lower_count, lower_gain, lower_score = count_a, gain_a, score_a
    j = _first_not_above(blocks[SCORE], first, end, upper_score)
    value = blocks[BEFORE, nowrap(j)] if j < end else total
    part, j = _part_value(blocks, cumulative_discount, j, end, others, 0.0, upper_count, upper_gain, upper_score)
    value += part
    k = _first_not_above(blocks[SCORE], j, end, lower_score)
    for between in range(j, k):  # blocks between the parts move down by the upper part
        value += _mean_block_value(
            cumulative_discount, blocks[POSITION, nowrap(between)] + upper_count, blocks[BLOCK_COUNT, nowrap(between)],
            blocks[BLOCK_MEAN, nowrap(between)],
        )  # fmt: skip
    part, k = _part_value(blocks, cumulative_discount, k, end, others, upper_count, lower_count, lower_gain, lower_score)
    return value + part + total_shifted - (blocks[BEFORE_SHIFTED, nowrap(k)] if k < end else total_shifted)


@jit
def query_scales(query_boundaries, row_gains, copies, query_weights, cumulative_discount, scales, order_scratch):
    """``w_q / IDCG_q`` of every query (0 when it has no relevant copy in the tree).

    Parameters
    ----------
    query_boundaries : int64 array of shape (n_queries + 1,)
        Rows of query ``q`` are ``query_boundaries[q]:query_boundaries[q + 1]``.
    row_gains : float64 array of shape (n_rows,)
        ``2^l - 1`` of every row.
    copies : float64 array of shape (n_rows,)
        Copies of each row in this tree (0: not in the tree).
    query_weights : float64 array of shape (n_queries,)
        Weight of each query in the mean (its sampling count).
    cumulative_discount : float64 array, see ``cumulative_discounts``
    scales : float64 array of shape (n_queries,)
        Output.
    order_scratch : float64 array of shape (largest query,)

    Returns
    -------
    float
        ``sum_q w_q`` over the queries in the tree: the denominator of the mean.
    """
    total_weight = 0.0
    for q in range(len(query_boundaries) - 1):
        scales[q] = 0.0
        first = query_boundaries[q]
        size = query_boundaries[q + 1] - first
        present = 0.0
        for i in range(size):
            present += copies[first + i]
        if present <= 0.0 or query_weights[q] <= 0.0:
            continue
        total_weight += query_weights[q]
        for i in range(size):
            order_scratch[i] = -row_gains[first + i] if copies[first + i] > 0.0 else np.inf
        ranked = np.argsort(order_scratch[:size], kind="mergesort")
        ideal = 0.0
        position = 0.0
        for i in ranked:
            count = copies[first + i]
            if count <= 0.0:
                break
            ideal += _block_value(cumulative_discount, position, count, count * row_gains[first + i])
            position += count
        if ideal > 0.0:
            scales[q] = query_weights[q] / ideal
    return total_weight


@jit(refcounted=False)
def start_query_blocks(query_boundaries, row_gains, copies, root_score, tree_blocks, n_query_blocks):
    """Every query of the tree as one block at the root's score.

    Parameters
    ----------
    query_boundaries : int64 array of shape (n_queries + 1,)
    row_gains, copies : float64 arrays of shape (n_rows,)
    root_score : float
    tree_blocks : float64 array of shape (n_rows, N_TREE_BLOCK_COLUMNS)
        Output: query ``q``'s blocks at rows ``query_boundaries[q]`` onwards
        (``SCORE``, ``BLOCK_COUNT``, ``BLOCK_GAIN``), scores decreasing; a query
        has at most one block per document, so its rows are room enough.
    n_query_blocks : int64 array of shape (n_queries,)
        Output: blocks of each query.
    """
    for q in range(len(query_boundaries) - 1):
        first = query_boundaries[q]
        count = 0.0
        gain = 0.0
        for row in range(first, query_boundaries[q + 1]):
            count += copies[row]
            gain += copies[row] * row_gains[row]
        n_query_blocks[q] = 0
        if count > 0.0:
            tree_blocks[first, SCORE] = root_score
            tree_blocks[first, BLOCK_COUNT] = count
            tree_blocks[first, BLOCK_GAIN] = gain
            n_query_blocks[q] = 1


@jit(inline="always")
def _copy_block(tree_blocks, target, source):
    """``tree_blocks[target] = tree_blocks[source]``."""
    for column in range(N_TREE_BLOCK_COLUMNS):
        tree_blocks[target, column] = tree_blocks[source, column]


@jit(refcounted=False)
def _move_between_blocks(tree_blocks, first, size, from_score, to_score, count, gain):
    """Move ``count`` copies of total ``gain`` from the block at ``from_score`` to ``to_score``.

    Blocks are ``tree_blocks[first:first + size]``; a block left empty is deleted
    and a missing one inserted, keeping scores decreasing. Returns the new size.
    When the emptied block's place is taken by the new one, only the blocks between
    the two places shift, by one (a node's queries have ``m_q`` blocks, and most
    moves empty the parent's block: its other part went to the sibling):

        emptied j, new score between blocks k-1 and k (k > j):
            [ .. | j | j+1 .. k-1 | k .. ]  ->  [ .. | j .. k-2 | new | k .. ]
    """
    end = first + size
    j = _first_not_above(tree_blocks[:, SCORE], first, end, from_score)
    remaining = tree_blocks[j, BLOCK_COUNT] - count
    emptied = remaining <= 1e-9 * tree_blocks[j, BLOCK_COUNT]  # up to fractional-weight rounding
    k = _first_not_above(tree_blocks[:, SCORE], first, end, to_score)
    if k < end and tree_blocks[k, SCORE] == to_score:  # an existing block takes the copies
        tree_blocks[k, BLOCK_COUNT] += count
        tree_blocks[k, BLOCK_GAIN] += gain
        if not emptied:
            tree_blocks[j, BLOCK_COUNT] = remaining
            tree_blocks[j, BLOCK_GAIN] -= gain
            return size
        for i in range(j, end - 1):
            _copy_block(tree_blocks, i, i + 1)
        return size - 1
    if emptied:
        if k > j:  # the new score is lower: the blocks in between move up one place
            for i in range(j, k - 1):
                _copy_block(tree_blocks, i, i + 1)
            k -= 1
        else:
            for i in range(j, k, -1):
                _copy_block(tree_blocks, i, i - 1)
    else:
        tree_blocks[j, BLOCK_COUNT] = remaining
        tree_blocks[j, BLOCK_GAIN] -= gain
        for i in range(end, k, -1):
            _copy_block(tree_blocks, i, i - 1)
        size += 1
    tree_blocks[k, SCORE] = to_score
    tree_blocks[k, BLOCK_COUNT] = count
    tree_blocks[k, BLOCK_GAIN] = gain
    return size


@jit(refcounted=False)
def move_to_child(
    samples, start, end, parent_score, child_score, query_of_row, query_boundaries, row_gains, copies, tree_blocks,
    n_query_blocks, query_slot, slot_values, slot_ints,
):  # fmt: skip
    """Update the tree blocks when the rows ``samples[start:end]`` get their new leaf's score.

    O(n_child + sum of the touched queries' blocks). ``query_slot``, ``slot_values``
    and ``slot_ints`` are the scratch of ``prepare_node`` (free between nodes).
    """
    if child_score == parent_score:
        return
    n_slots = 0
    for position in range(start, end):
        row = nowrap(samples[position])
        q = query_of_row[row]
        s = query_slot[nowrap(q)]
        if s < 0:
            s = n_slots
            query_slot[q] = s
            slot_ints[s, QUERY] = q
            slot_values[s, COUNT] = 0.0
            slot_values[s, GAIN] = 0.0
            n_slots += 1
        slot_values[nowrap(s), COUNT] += copies[row]
        slot_values[nowrap(s), GAIN] += copies[row] * row_gains[row]
    for s in range(n_slots):
        q = slot_ints[s, QUERY]
        query_slot[q] = -1
        if slot_values[s, COUNT] > 0.0:
            n_query_blocks[q] = _move_between_blocks(
                tree_blocks, query_boundaries[q], n_query_blocks[q], parent_score, child_score, slot_values[s, COUNT],
                slot_values[s, GAIN],
            )  # fmt: skip


@jit(refcounted=False, callable_from_python=False)
def prepare_node(listwise, samples, start, end, node_score, row_weights, leaf_targets, rng_state):
    """Per-query structures of one node for the listwise sweeps over its features: its
    scored queries (slots), their outside blocks and those blocks' events in score order.

    Parameters
    ----------
    listwise : Listwise
        The tree's listwise bundle (``new_listwise``). ``query_slot`` is -1 on entry
        for every query and holds the slot of each of the node's queries on return
        (``release_node`` resets it); ``slot_values``, ``slot_ints``, ``blocks``,
        ``event_scores``, ``event_blocks``, ``position_slot`` and ``position_values``
        are written (see ``_collect_queries``, ``_fill_positions``,
        ``_outside_blocks``, ``_sort_events``).
    samples : int64 array
        The node's rows are ``samples[start:end]``.
    node_score : float
        The node's current score (its leaf value).
    row_weights : float64 array of shape (n_tree_rows,)
        Weights in the order of ``samples``.
    leaf_targets : float64 array of shape (n_rows,)
        The value averaged into leaf scores.
    rng_state : uint64 array of shape (2,)
        Draws the queries kept when ``listwise.max_queries`` is smaller than their number.

    Returns
    -------
    n_slots : int
    n_events : int
    parent_total : float
        ``sum over slots of w_q / IDCG_q * E[DCG_q]`` before the split.
    """
    n_slots = _collect_queries(listwise, samples, start, end)
    if 0 <= listwise.max_queries < n_slots:
        n_slots = _sample_queries(listwise, n_slots, rng_state)
    _fill_positions(listwise, samples, start, end, row_weights, leaf_targets, n_slots)
    n_events = np.int64(0)  # not a literal 0: ``_sort_events`` would compile for Literal[int](0) too
    parent_total = 0.0
    for s in range(n_slots):
        n_events, value = _outside_blocks(listwise, s, node_score, n_events)
        parent_total += value
    _sort_events(listwise, n_slots, n_events)
    return n_slots, n_events, parent_total


@jit(inline="always")
def _collect_queries(listwise, samples, start, end):
    """Give every query with scored documents (``query_scales > 0``) among
    ``samples[start:end]`` a slot, in order of first appearance: ``query_slot[q]`` and
    ``slot_ints[slot, QUERY]``. Returns their number."""
    query_of_row, query_slot, slot_ints = listwise.query_of_row, listwise.query_slot, listwise.slot_ints
    n_slots = 0
    for position in range(start, end):
        q = nowrap(query_of_row[nowrap(samples[position])])
        if listwise.query_scales[q] > 0.0 and query_slot[q] < 0:
            query_slot[q] = n_slots
            slot_ints[n_slots, QUERY] = q
            n_slots += 1
    return n_slots


@jit(inline="always")
def _sample_queries(listwise, n_slots, rng_state):
    """Keep ``max_queries`` of the ``n_slots`` queries, drawn uniformly without
    replacement (a partial Fisher-Yates shuffle of the slots; §4.4.2, heuristic 1); the
    others leave their slots (``query_slot`` -1). Returns the number kept."""
    slot_ints, max_queries = listwise.slot_ints, listwise.max_queries
    for i in range(max_queries):
        j = i + _rng.randint(rng_state, n_slots - i)
        kept = slot_ints[j, QUERY]
        slot_ints[j, QUERY] = slot_ints[i, QUERY]
        slot_ints[i, QUERY] = kept
    for i in range(n_slots):
        listwise.query_slot[slot_ints[i, QUERY]] = i if i < max_queries else -1
    return max_queries


@jit(inline="always")
def _fill_positions(listwise, samples, start, end, row_weights, leaf_targets, n_slots):
    """Each slot's scale and node copies and gain (``slot_values``), and at every position
    of the node the slot of its row's query (-1 when not scored) and the row's copies,
    copies * gain and weight * leaf target (``position_slot``, ``position_values``), so
    the sweeps read no per-row array through ``samples``."""
    slot_values, slot_ints = listwise.slot_values, listwise.slot_ints
    copies, row_gains = listwise.copies, listwise.row_gains
    position_slot, position_values = listwise.position_slot, listwise.position_values
    for s in range(n_slots):
        for column in range(N_SLOT_COLUMNS):
            slot_values[s, column] = 0.0
        slot_values[s, SCALE] = listwise.query_scales[slot_ints[s, QUERY]]
    for position in range(start, end):
        row = nowrap(samples[position])
        s = listwise.query_slot[nowrap(listwise.query_of_row[row])]
        position_slot[position] = s
        position_values[position, COPIES_AT] = copies[row]
        position_values[position, GAIN_AT] = copies[row] * row_gains[row]
        position_values[position, TARGET_AT] = row_weights[position] * leaf_targets[row]
        if s >= 0:
            slot_values[nowrap(s), COUNT] += copies[row]
            slot_values[nowrap(s), GAIN] += copies[row] * row_gains[row]


@jit(inline="always")
def _outside_blocks(listwise, s, node_score, n_blocks):
    """Slot ``s``'s blocks outside the node, appended to ``blocks`` from row ``n_blocks``:
    its tree blocks less the node's documents, each with its position and the prefix
    sums of the contributions before it, unshifted and shifted down by the node's
    copies of the query; the slot's totals and its value before the split. Returns
    (the next free row of ``blocks``, the slot's value)."""
    blocks, slot_values, slot_ints = listwise.blocks, listwise.slot_values, listwise.slot_ints
    tree_blocks, cumulative_discount, horizon = listwise.tree_blocks, listwise.cumulative_discount, listwise.horizon
    q = slot_ints[s, QUERY]
    node_count = slot_values[s, COUNT]
    first = n_blocks
    position = 0.0
    contribution = 0.0
    shifted = 0.0
    relevant_only = slot_values[s, GAIN] == 0.0
    # CD at the block's start, unshifted and shifted: a kept block's end is the
    # next block's start, so each block looks up two values instead of four.
    start_value = start_shifted = 0.0
    fresh = False
    first_tree_block = listwise.query_boundaries[q]
    for k in range(first_tree_block, first_tree_block + listwise.n_query_blocks[q]):
        count = tree_blocks[k, BLOCK_COUNT]
        gain = tree_blocks[k, BLOCK_GAIN]
        if tree_blocks[k, SCORE] == node_score:  # the node's documents are not outside
            gain -= slot_values[s, GAIN]
            if count - node_count <= 1e-9 * count:
                continue
            count -= node_count
        # Worth 0 wherever the node's parts go: a block without gain when the parts
        # have none either, and a block starting at or past the NDCG@k cutoff (the
        # parts can only push it down, and its copies still count in ``position``
        # and ``OTHERS``, so the parts and blocks above keep their positions).
        if (relevant_only and gain == 0.0) or position >= horizon:
            position += count
            fresh = False
            continue
        blocks[SCORE, n_blocks] = tree_blocks[k, SCORE]
        blocks[BLOCK_COUNT, n_blocks] = count
        blocks[BLOCK_GAIN, n_blocks] = gain
        blocks[POSITION, n_blocks] = position
        blocks[BEFORE, n_blocks] = contribution
        blocks[BEFORE_SHIFTED, n_blocks] = shifted
        mean = gain / count
        blocks[BLOCK_MEAN, n_blocks] = mean
        if not fresh:
            start_value = _cumulative(cumulative_discount, position)
            start_shifted = _cumulative(cumulative_discount, position + node_count)
        end_value = _cumulative(cumulative_discount, position + count)
        end_shifted = _cumulative(cumulative_discount, position + node_count + count)
        contribution += _spread_value(mean, start_value, end_value)
        shifted += _spread_value(mean, start_shifted, end_shifted)
        start_value = end_value
        start_shifted = end_shifted
        fresh = True
        position += count
        n_blocks += 1
    slot_ints[s, FIRST_BLOCK] = first
    slot_ints[s, END_BLOCK] = n_blocks
    slot_values[s, OTHERS] = position
    slot_values[s, TOTAL] = contribution
    slot_values[s, TOTAL_SHIFTED] = shifted
    value = slot_values[s, SCALE] * query_dcg(
        blocks, cumulative_discount, first, n_blocks, position, contribution, shifted, node_count,
        slot_values[s, GAIN], node_score, 0.0, 0.0, node_score,
    )  # fmt: skip
    slot_values[s, PARENT] = value
    return n_blocks, value


@jit(inline="always")
def _merge_runs(source, target, low, middle, high):
    """Merge of the increasing runs ``source[low:middle]`` and ``source[middle:high]`` into ``target[low:high]``."""
    i = low
    j = middle
    for k in range(low, high):
        if j >= high or (i < middle and source[nowrap(i)] <= source[nowrap(j)]):
            target[nowrap(k)] = source[nowrap(i)]
            i += 1
        else:
            target[nowrap(k)] = source[nowrap(j)]
            j += 1


def event_sort_table(n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """The empty hash table of ``_sort_events`` for up to ``n_rows`` events.

    Returns
    -------
    table_scores : ndarray of shape (4 n_rows + 2,), float64
    table_counts : ndarray of shape (4 n_rows + 2,), int64
        All -1 (empty). The size holds the power of two >= 2 x the events that the
        sort uses (less than 4 x), and its 2 slots when there are none.
    """
    return np.empty(4 * n_rows + 2), np.full(4 * n_rows + 2, -1, dtype=np.int64)


@jit(inline="always")
def _table_slot(table_scores, table_counts, bits, score):
    """Slot of ``score`` in the open-addressing table of ``2**bits`` slots: its own, or
    the empty one (count -1) where it goes. Multiplicative hashing (Knuth, TAOCP 3,
    §6.4) of the score in units of 2^-20, linear probing."""
    key = np.uint64(int(min(score, 1e12) * 1048576.0))  # capped: the conversion stays defined
    slot = (key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits)
    mask = np.uint64((1 << bits) - 1)
    while table_counts[slot] >= 0 and table_scores[slot] != score:
        slot = (slot + np.uint64(1)) & mask
    return slot


@jit(refcounted=False, callable_from_python=False)
def _sort_events(listwise, n_slots, n_events):
    """Every outside block's score and event (slot and row in ``blocks``), scores increasing:
    ``event_scores`` and ``event_blocks`` of ``listwise``.

    A counting sort by distinct score: a node's blocks share few scores (a leaf's
    score recurs in every query with documents in it: three to five blocks per
    distinct score on MQ2008 and ``make_ranking``), so the ``D`` distinct
    scores are collected in a hash table (``table_*``, all counts -1 on entry and on
    return; ``2**bits >= 2 n_events`` slots are used; ``spare_blocks[b]`` keeps
    block ``b``'s table slot, so each block is hashed once), sorted by a bottom-up
    merge (O(D log D), ``spare_scores`` and ``event_scores`` as its two buffers),
    and turned into output offsets; then every block is placed at its score's next
    offset. O(n_events + D log D) against the O(n_events log n_slots) of merging
    the slots' runs. The blocks are placed slot by slot, each slot's (decreasing)
    blocks read backwards, so equal scores stay in slot order, as a stable sort of
    the blocks would leave them.
    """
    blocks, slot_ints = listwise.blocks, listwise.slot_ints
    event_scores, event_blocks = listwise.event_scores, listwise.event_blocks
    spare_scores, spare_blocks = listwise.spare_scores, listwise.spare_blocks
    table_scores, table_counts = listwise.table_scores, listwise.table_counts
    bits = 1
    while (1 << bits) < 2 * n_events:
        bits += 1
    n_distinct = 0
    for b in range(n_events):
        score = blocks[SCORE, b]
        slot = _table_slot(table_scores, table_counts, bits, score)
        if table_counts[slot] < 0:
            table_scores[slot] = score
            table_counts[slot] = 0
            spare_scores[n_distinct] = score
            n_distinct += 1
        table_counts[slot] += 1
        spare_blocks[b] = slot
    source, target = spare_scores, event_scores
    width = 1
    while width < n_distinct:
        for low in range(0, n_distinct, 2 * width):
            _merge_runs(source, target, low, min(low + width, n_distinct), min(low + 2 * width, n_distinct))
        source, target = target, source
        width *= 2
    offset = 0
    for d in range(n_distinct):  # counts -> first output position of each score (``source``: sorted)
        slot = _table_slot(table_scores, table_counts, bits, source[d])
        count = table_counts[slot]
        table_counts[slot] = offset
        offset += count
    for s in range(n_slots):
        first = slot_ints[s, FIRST_BLOCK]
        for b in range(slot_ints[s, END_BLOCK] - 1, first - 1, -1):
            slot = nowrap(spare_blocks[b])
            k = table_counts[slot]
            table_counts[slot] = k + 1
            event_scores[k] = blocks[SCORE, b]
            event_blocks[k] = (s << EVENT_SLOT_SHIFT) | b
    for b in range(n_events):
        table_counts[nowrap(spare_blocks[b])] = -1


@jit(refcounted=False)
def release_node(query_slot, slot_ints, n_slots):
    """Reset ``query_slot`` to -1 for the node's queries."""
    for s in range(n_slots):
        query_slot[slot_ints[s, QUERY]] = -1


@jit(inline="always")
def _first_at_least(sorted_scores, low, high, score):
    """First index of ``sorted_scores[low:high]`` (increasing) whose value is ``>= score`` (``high`` if none)."""
    while low < high:
        middle = (low + high) // 2
        if sorted_scores[nowrap(middle)] < score:
            low = middle + 1
        else:
            high = middle
    return low


@jit(inline="always")
def _first_above(sorted_scores, low, high, score):
    """First index of ``sorted_scores[low:high]`` (increasing) whose value is ``> score`` (``high`` if none)."""
    while low < high:
        middle = (low + high) // 2
        if sorted_scores[nowrap(middle)] <= score:
            low = middle + 1
        else:
            high = middle
    return low


@jit(inline="always")
def _move_score(event_scores, n_events, low, high, previous, score):
    """Events crossed when a child's score moves from ``previous`` to ``score``.

    ``[low, high)`` are the events equal to ``previous``. Returns the crossed range
    ``[start, end)`` (scores between the two values, both included; empty when the
    score did not move, since then no block changes sides) and the new equal range.
    The far end is found by galloping from the old one (steps 1, 2, 4, ...), then
    bisection, so the cost is logarithmic in the number of events crossed.
    """
    if score == previous:
        return low, low, low, high
    if score > previous:
        reached = high  # every event before ``reached`` is <= score
        step = 1
        while reached + step <= n_events and event_scores[reached + step - 1] <= score:
            reached += step
            step *= 2
        new_high = _first_above(event_scores, reached, min(reached + step, n_events), score)
        if new_high == low or event_scores[new_high - 1] < score:  # most new scores tie no block
            return low, new_high, new_high, new_high
        return low, new_high, _first_at_least(event_scores, low, new_high, score), new_high
    reached = low  # every event from ``reached`` on (up to ``high``) is >= score
    step = 1
    while reached - step >= 0 and event_scores[reached - step] >= score:
        reached -= step
        step *= 2
    new_low = _first_at_least(event_scores, max(reached - step, 0), reached, score)
    if new_low == high or event_scores[new_low] > score:
        return new_low, high, new_low, new_low
    return new_low, high, new_low, _first_above(event_scores, new_low, high, score)


@jit(inline="always")
def _cannot_change(blocks, slot_values, slot_ints, s, span_low, span_high):
    """Whether slot ``s`` keeps its value: a query whose node documents have no gain
    and no outside block scored within ``[span_low, span_high]``.

    Such a query's value is the sum over its relevant outside blocks (the only ones
    ``prepare_node`` keeps for it) of terms that depend only on whether each part
    lies above or below the block, or ties with it. With the span covering both
    children's scores at this candidate and at the previous one, no block of the
    query is between or tied with a part at either, so every block has all of the
    node's copies above it, or none, at both candidates.
    """
    if slot_values[s, GAIN] != 0.0:
        return False
    first = slot_ints[s, FIRST_BLOCK]
    end = slot_ints[s, END_BLOCK]
    # Most such queries have every relevant block above the span (their relevant
    # documents sit in high-scoring leaves; on MQ2008 most of those that cannot
    # change): the lowest block decides without a search.
    if first == end or blocks[SCORE, nowrap(end - 1)] > span_high or blocks[SCORE, nowrap(first)] < span_low:
        return True
    j = _first_not_above(blocks[SCORE], first, end, span_high)
    return j == end or blocks[SCORE, nowrap(j)] < span_low


@jit(inline="always")
def _list_once(slot_ints, s, stamp, listed, n_listed):
    """Append slot ``s`` to ``listed`` unless already listed for candidate ``stamp``; returns the new length.

    Without a branch: whether a query is listed already is a coin toss in the sweep,
    so ``s`` is always written at ``listed[n_listed]`` (``listed`` has one spare
    entry) and the length grows only when it was not listed.
    """
    state = slot_ints[s, STATE]
    slot_ints[s, STATE] = (stamp << LISTED_SHIFT) | (state & (LEFT_PART | RIGHT_PART))
    listed[n_listed] = s
    return n_listed + int(state >> LISTED_SHIFT != stamp)


@jit(inline="always")
def _crossing_change(cumulative_discount, above, count, gain, block_count, block_gain, block_mean, was, becomes):
    """Change of a query's expected DCG when a part of ``count`` copies (total ``gain``)
    goes from relation ``was`` to ``becomes`` with an adjacent block (1 above it, 0
    tied, -1 below; the two differ; its mean gain ``block_mean``), ``above`` copies
    ranked over both.

    Only the two change: a block further away keeps its position, since the part
    and the block swap positions among themselves. With ``a = above``, ``c`` the
    part's copies and ``n`` the block's, the pair is worth (Eq. 12, means ``m``)

        part above:  m_part (CD(a+c) - CD(a)) + m_block (CD(a+c+n) - CD(a+c))
        block above: m_block (CD(a+n) - CD(a)) + m_part (CD(a+c+n) - CD(a+n))
        tied:        m_pair (CD(a+c+n) - CD(a))

    and a swap, the difference of the first two, is
    ``(m_part - m_block) (CD(a+c) + CD(a+n) - CD(a) - CD(a+c+n))``.
    """
    start = _cumulative(cumulative_discount, above)
    end = _cumulative(cumulative_discount, above + count + block_count)
    part_mean = gain / count
    if was != 0 and becomes != 0:
        swap = (part_mean - block_mean) * (
            _cumulative(cumulative_discount, above + count)
            + _cumulative(cumulative_discount, above + block_count)
            - start
            - end
        )
        return swap if becomes > 0 else -swap
    if was + becomes > 0:  # the relation other than the tie: part above
        middle = _cumulative(cumulative_discount, above + count)
        apart = _spread_value(part_mean, start, middle) + _spread_value(block_mean, middle, end)
    else:
        middle = _cumulative(cumulative_discount, above + block_count)
        apart = _spread_value(block_mean, start, middle) + _spread_value(part_mean, middle, end)
    tied = _spread_value((gain + block_gain) / (count + block_count), start, end)
    return apart - tied if becomes != 0 else tied - apart


@jit(inline="always")
def _relation(score, block_score):
    """1 when a part at ``score`` ranks above a block at ``block_score``, -1 below, 0 tied."""
    return int(score > block_score) - int(score < block_score)


@jit(inline="always")
def _cross_blocks(listwise, n_events, low, high, previous, score, other_score, side_slots, n_side, left_side, stamp, n_listed):
    """Move one child's score from ``previous`` to ``score`` across the node's blocks.

    ``[low, high)`` are the events equal to ``previous`` (``_move_score``); the other
    child's score is ``other_score`` meanwhile. For every block crossed (or tied,
    or untied) the query's value changes by the swap of the part and the block
    alone (``_crossing_change``); the copies above both are the block's outside
    copies above plus the other part when it is above (it is not between them: the
    sweep re-evaluates the queries whose two parts pass each other). A query
    already listed for this candidate is skipped (it is re-evaluated whole), as is
    a query without a part on this side (``left_side``: a left part, else a right
    part) and a part without gain crossing a block without gain. When the crossed
    blocks outnumber four times the queries with a part on this side
    (``side_slots[:n_side]``), those queries are listed instead: an update costs a
    fraction of a re-evaluation (the factor 4 was the fastest of 1 to 8 tried on
    ``make_ranking``; ``docs/design.md``, "The listwise criterion"). The events kept
    for an update are gathered in ``spare_blocks``, free during the sweeps.

    Returns the change of the running total, the new length of ``listed`` and the
    events equal to ``score``.
    """
    event_scores, event_blocks, blocks = listwise.event_scores, listwise.event_blocks, listwise.blocks
    slot_values, slot_ints, listed = listwise.slot_values, listwise.slot_ints, listwise.listed
    kept_events = listwise.spare_blocks
    crossed_start, crossed_end, low, high = _move_score(event_scores, n_events, low, high, previous, score)
    side = LEFT_PART if left_side else RIGHT_PART
    change = 0.0
    if crossed_end - crossed_start > 4 * n_side:
        for k in range(n_side):
            n_listed = _list_once(slot_ints, side_slots[k], stamp, listed, n_listed)
        return change, n_listed, low, high
    # Whether a crossing matters is a coin toss per event (half are skipped on
    # MQ2008), so the events that do are gathered first without a branch.
    n_kept = 0
    for k in range(crossed_start, crossed_end):
        state = slot_ints[nowrap(event_blocks[k] >> EVENT_SLOT_SHIFT), STATE]
        kept_events[n_kept] = k
        n_kept += int(state >> LISTED_SHIFT != stamp) & int(state & side != 0)
    for i in range(n_kept):
        k = kept_events[i]
        event = event_blocks[k]
        s = nowrap(event >> EVENT_SLOT_SHIFT)
        left_count = slot_values[s, LEFT_COUNT]
        if left_side:
            count = left_count
            gain = slot_values[s, LEFT_GAIN]
        else:
            count = slot_values[s, COUNT] - left_count
            gain = slot_values[s, GAIN] - slot_values[s, LEFT_GAIN]
        b = nowrap(event & EVENT_BLOCK_MASK)
        block_gain = blocks[BLOCK_GAIN, b]
        if gain == 0.0 and block_gain == 0.0:
            continue
        block_score = event_scores[k]
        above = blocks[POSITION, b]
        if other_score > block_score:
            above += slot_values[s, COUNT] - count
        value_change = slot_values[s, SCALE] * _crossing_change(
            listwise.cumulative_discount, above, count, gain, blocks[BLOCK_COUNT, b], block_gain, blocks[BLOCK_MEAN, b],
            _relation(previous, block_score), _relation(score, block_score),
        )  # fmt: skip
        slot_values[s, VALUE] += value_change
        change += value_change
    return change, n_listed, low, high


@jit(inline="always")
def _reaches(previous, score, other):
    """Whether a score moving from ``previous`` to ``score`` reaches or leaves ``other``."""
    return previous != score and min(previous, score) <= other <= max(previous, score)


@jit(refcounted=False, callable_from_python=False)
def listwise_sweep(
    listwise, lists, n_node, skip_bin, row_weights, node_weight, min_samples_leaf, min_child_weight, best_gain,
    candidate_gains,
):  # fmt: skip
    """Best "bin <= b" of a feature for the listwise criterion (after ``prepare_node``).

    Samples move to the left child in the order of ``listwise.order`` (the node's
    positions and their bins, ``order[:n_node]``, sorted by bin: ``_scans.sort_by_bin``,
    or with the missing rows first, their bin -1: ``sweep_feature``); at each end of a
    run of equal bins the children's scores are the running weighted means of
    ``leaf_targets`` and only the queries listed in the module docstring are
    re-evaluated. The cut before ``skip_bin`` (-1: none) is not evaluated. Returns
    (gain, bin, next bin) of the best cut that beats ``best_gain`` (next bin -1 if
    none); ``gain`` is the change of ``sum_q w_q E[DCG_q] / IDCG_q``.

    Parameters
    ----------
    listwise : Listwise
        The tree's bundle, its node structures from ``prepare_node``; ``touched``,
        ``listed``, ``open_slots`` and ``spare_blocks`` are the sweep's scratch.
    lists : NodeLists
        The node ``open_node`` prepared.
    n_node : int
    skip_bin : int
    row_weights : float64 array of shape (n_tree_rows,)
        Weights in the order of ``samples`` (for the children's scores and
        ``min_child_weight``).
    node_weight : float
        The node's weight.
    min_samples_leaf, min_child_weight, best_gain :
        See ``_scans.histogram_scan``.
    candidate_gains : None or float64 array of shape (n_bins + 1,)
        When given, receives the gain of every evaluated cut at its bin + 1 (tests
        compare each with a brute-force recomputation); None compiles it away.
    """
    order, position_slot, position_values = listwise.order, listwise.position_slot, listwise.position_values
    n_slots, n_events, node_score, parent_total = lists.n_slots, lists.n_events, lists.score, lists.parent_total
    _reset_slots(listwise, n_slots)
    n_open = n_slots
    total = parent_total
    n_touched = 0
    n_listed = 0
    stamp = 0  # id of the next evaluated candidate
    left_weight = 0.0
    left_sum = 0.0
    previous_left = previous_right = node_score  # every query's right part starts as the whole node
    # Events with a score equal to the previous left / right score: [low, high).
    right_low = left_low = _first_at_least(listwise.event_scores, 0, n_events, node_score)
    right_high = left_high = _first_above(listwise.event_scores, 0, n_events, node_score)
    best_bin = -1
    best_next = -1
    for rank in range(n_node - 1):
        # Bin order visits the node's positions at random: in the large nodes of big
        # data sets their rows miss the caches, so they are requested a few rows early.
        if rank + GATHER_DISTANCE < n_node:
            ahead = order[rank + GATHER_DISTANCE, 0]
            prefetch(position_values, (ahead, 0))
            prefetch(position_slot, (ahead,))
            prefetch(row_weights, (ahead,))
        position = nowrap(order[rank, 0])
        left_weight += row_weights[position]
        left_sum += position_values[position, TARGET_AT]
        if position_slot[position] >= 0:
            n_touched, n_open, n_listed = _move_left(listwise, position, stamp, n_touched, n_open, n_listed)
        b = order[rank, 1]
        next_bin = order[rank + 1, 1]
        if next_bin == b or next_bin == skip_bin:
            continue
        right_weight = node_weight - left_weight
        # A right part of rows far lighter than the left's can cancel to no weight.
        if (
            rank + 1 < min_samples_leaf
            or n_node - rank - 1 < min_samples_leaf
            or left_weight < min_child_weight
            or right_weight < min_child_weight
            or right_weight <= 0.0
        ):
            continue
        left_score = left_sum / left_weight
        right_score = (lists.target_sum - left_sum) / right_weight
        # The left score moves first, then the right one. Where a moving score
        # reaches or leaves the other's, the queries with both parts see their
        # parts swap, merge or part: those are re-evaluated (a query with one part
        # is blind to the other child's score).
        if stamp > 0 and (
            _reaches(previous_left, left_score, previous_right) or _reaches(previous_right, right_score, left_score)
        ):
            n_listed = _list_both_parts(listwise, n_touched, stamp, n_listed)
        # Blocks crossed by the left score (at the first candidate every query with
        # a left part is listed already, as moved), then by the right score. One call
        # site in a loop: the crossing code is inlined once (inlined twice it costs
        # compile time, called it costs time per tree: benchmarks/RESULTS.md, "Engine
        # design measurements").
        for side in range(2):
            left_side = side == 0
            if left_side:
                low, high, previous, score, other = left_low, left_high, previous_left, left_score, previous_right
                side_slots, n_side = listwise.touched, n_touched
            else:
                low, high, previous, score, other = right_low, right_high, previous_right, right_score, left_score
                side_slots, n_side = listwise.open_slots, n_open
            change, n_listed, low, high = _cross_blocks(
                listwise, n_events, low, high, previous, score, other, side_slots, n_side, left_side, stamp, n_listed
            )
            if left_side:
                left_low, left_high = low, high
            else:
                right_low, right_high = low, high
            total += change
        span_low = min(left_score, right_score, previous_left, previous_right)
        span_high = max(left_score, right_score, previous_left, previous_right)
        total = _reevaluate_listed(listwise, n_listed, left_score, right_score, span_low, span_high, total)
        n_listed = 0
        previous_left = left_score
        previous_right = right_score
        stamp += 1
        gain = total - parent_total
        if candidate_gains is not None:
            candidate_gains[b + 1] = gain
        if gain > best_gain:
            best_gain = gain
            best_bin = b
            best_next = next_bin
    return best_gain, best_bin, best_next


@jit(inline="always")
def _reset_slots(listwise, n_slots):
    """Every slot before the first move: nothing on the left, its value the parent's, not
    listed, all of its documents on the right (so every slot is open)."""
    slot_values, slot_ints = listwise.slot_values, listwise.slot_ints
    for s in range(n_slots):
        slot_values[s, LEFT_COUNT] = 0.0
        slot_values[s, LEFT_GAIN] = 0.0
        slot_values[s, VALUE] = slot_values[s, PARENT]
        slot_ints[s, STATE] = (-1 << LISTED_SHIFT) | RIGHT_PART  # listed for no candidate; all on the right
        slot_ints[s, OPEN_INDEX] = s
        listwise.open_slots[s] = s


@jit(inline="always")
def _move_left(listwise, position, stamp, n_touched, n_open, n_listed):
    """Move the document at ``position`` (of a scored query) to the left child: its slot's
    left part grows, the slot joins ``touched`` at its first move and leaves the open
    slots at its last, and is listed for re-evaluation. Returns the new lengths of
    ``touched``, the open slots and ``listed``."""
    slot_values, slot_ints, open_slots = listwise.slot_values, listwise.slot_ints, listwise.open_slots
    s = nowrap(listwise.position_slot[position])
    left_count = slot_values[s, LEFT_COUNT]
    listwise.touched[n_touched] = s  # kept only for the query's first move (no branch: ``_list_once``)
    n_touched += int(left_count == 0.0)
    left_count += listwise.position_values[position, COPIES_AT]
    slot_values[s, LEFT_COUNT] = left_count
    slot_values[s, LEFT_GAIN] += listwise.position_values[position, GAIN_AT]
    slot_ints[s, STATE] |= LEFT_PART * int(left_count > 0.0)
    if left_count >= slot_values[s, COUNT]:  # no right part left: swap-remove
        slot_ints[s, STATE] &= ~RIGHT_PART
        n_open -= 1
        last = open_slots[n_open]
        open_slots[slot_ints[s, OPEN_INDEX]] = last
        slot_ints[last, OPEN_INDEX] = slot_ints[s, OPEN_INDEX]
    n_listed = _list_once(slot_ints, s, stamp, listwise.listed, n_listed)
    return n_touched, n_open, n_listed


@jit(inline="always")
def _list_both_parts(listwise, n_touched, stamp, n_listed):
    """List the touched queries that still have a right part (both children hold some of
    their documents); returns the new length of ``listed``."""
    for k in range(n_touched):
        s = nowrap(listwise.touched[k])
        if listwise.slot_ints[s, STATE] & RIGHT_PART:  # a right part too: a lone part is blind to the other score
            n_listed = _list_once(listwise.slot_ints, s, stamp, listwise.listed, n_listed)
    return n_listed


@jit(inline="always")
def _reevaluate_listed(listwise, n_listed, left_score, right_score, span_low, span_high, total):
    """Recompute the value of every listed query that can change (``_cannot_change``) at
    the children's scores ``left_score`` and ``right_score``; returns ``total`` with the
    changes added one by one."""
    slot_values, slot_ints, blocks, listed = listwise.slot_values, listwise.slot_ints, listwise.blocks, listwise.listed
    for k in range(n_listed):
        if k + 4 < n_listed:  # listed queries are scattered over the slots: ask for one ahead
            ahead = listed[k + 4]
            prefetch(slot_values, (ahead, 0))
            prefetch(blocks, (SCORE, (slot_ints[ahead, FIRST_BLOCK] + slot_ints[ahead, END_BLOCK]) >> 1))
        s = nowrap(listed[k])
        if _cannot_change(blocks, slot_values, slot_ints, s, span_low, span_high):
            continue
        left_count = slot_values[s, LEFT_COUNT]
        left_gain = slot_values[s, LEFT_GAIN]
        value = slot_values[s, SCALE] * query_dcg(
            blocks, listwise.cumulative_discount, slot_ints[s, FIRST_BLOCK], slot_ints[s, END_BLOCK],
            slot_values[s, OTHERS], slot_values[s, TOTAL], slot_values[s, TOTAL_SHIFTED], left_count, left_gain,
            left_score, slot_values[s, COUNT] - left_count, slot_values[s, GAIN] - left_gain, right_score,
        )  # fmt: skip
        total += value - slot_values[s, VALUE]
        slot_values[s, VALUE] = value
    return total


# --- the interface the builder and the splitter use ------------------------------------

Listwise = namedtuple(
    "Listwise",
    [
        "depth", "max_queries", "query_of_row", "query_boundaries", "row_gains", "copies", "cumulative_discount",
        "query_scales", "scale", "horizon", "tree_blocks", "n_query_blocks", "query_slot", "slot_values", "slot_ints",
        "blocks", "event_scores", "event_blocks", "spare_scores", "spare_blocks", "table_scores", "table_counts",
        "touched", "listed", "open_slots", "position_slot", "position_values", "order", "histogram_count", "occupied",
    ],
)  # fmt: skip
Listwise.__doc__ = """What one tree's listwise splits read and the scratch they write (``new_listwise``).

depth : int
    Nodes shallower than this (root = 0) split listwise (> 0).
max_queries : int
    Queries sampled per listwise split (-1: all; §4.4.2, heuristic 1).
query_of_row : int64 array of shape (n_rows,)
query_boundaries : int64 array of shape (n_queries + 1,)
    The queries (rows grouped by query).
row_gains, copies : float64 arrays of shape (n_rows,)
    ``2^l - 1`` of every row, and its copies in this tree (0: not in the tree).
cumulative_discount : float64 array
    ``cumulative_discounts`` for those copies.
query_scales : float64 array of shape (n_queries,)
    ``w_q / IDCG_q`` (``query_scales``).
scale : float
    ``1 / sum_q w_q``: a gain times this is the change of the mean expected NDCG.
horizon : int
    ``discount_horizon(cumulative_discount)``.
The rest : every query's tie blocks over the tree (``start_query_blocks``) and the
    scratch of ``prepare_node`` and ``listwise_sweep`` (the last two, all zero
    between sweeps, that of ``_scans.sort_by_bin``).
"""

NodeLists = namedtuple("NodeLists", ["n_slots", "n_events", "parent_total", "target_sum", "score"])
NodeLists.__doc__ = """A listwise node after ``open_node``: its scored queries (slots), outside
blocks (events) and ``sum_q w_q E[DCG_q] / IDCG_q`` before the split; its
``sum w * leaf_target`` and score."""


def new_listwise(
    depth: int,
    max_queries: int,
    query_of_row: np.ndarray,
    query_boundaries: np.ndarray,
    row_gains: np.ndarray,
    copies: np.ndarray,
    query_weights: np.ndarray,
    cumulative_discount: np.ndarray,
    n_tree_rows: int,
    max_bins: int,
) -> Listwise:
    """A tree's ``Listwise``: its queries' scales and the scratch of every node evaluation.

    ``query_weights`` (float64, (n_queries,)) is each query's weight in the mean
    expected NDCG; ``n_tree_rows`` the rows of the tree (weight > 0); ``max_bins``
    the widest feature's bins. The other arguments are the fields of the same names.
    """
    n_rows = len(query_of_row)
    n_queries = len(query_boundaries) - 1
    scales = np.zeros(n_queries)
    largest_query = int(np.diff(query_boundaries).max(initial=0))
    total_query_weight = query_scales(
        query_boundaries, row_gains, copies, query_weights, cumulative_discount, scales, np.empty(largest_query)
    )
    table_scores, table_counts = event_sort_table(n_rows)
    return Listwise(
        int(depth), int(max_queries), query_of_row, query_boundaries, row_gains, copies, cumulative_discount, scales,
        1.0 / total_query_weight if total_query_weight > 0.0 else 0.0, int(discount_horizon(cumulative_discount)),
        np.empty((n_rows, N_TREE_BLOCK_COLUMNS)), np.zeros(n_queries, dtype=np.int64), np.full(n_queries, -1, dtype=np.int64),
        np.empty((n_queries, N_SLOT_COLUMNS)), np.empty((n_queries, N_SLOT_INT_COLUMNS), dtype=np.int64),
        np.empty((N_BLOCK_FIELDS, n_rows)), np.empty(n_rows), np.empty(n_rows, dtype=np.int64), np.empty(n_rows),
        np.empty(n_rows, dtype=np.int64),  # spare_blocks: also the sweeps' kept events (a node has 2+ rows)
        table_scores, table_counts,
        np.empty(n_queries + 1, dtype=np.int64),  # touched and listed: a spare entry each (``_list_once``)
        np.empty(n_queries + 1, dtype=np.int64), np.empty(n_queries, dtype=np.int64),
        np.empty(n_tree_rows, dtype=np.int64), np.empty((n_tree_rows, N_POSITION_COLUMNS)),
        np.empty((n_tree_rows, 3), dtype=np.int64), np.zeros(max_bins, dtype=np.int64),
        np.zeros((max_bins + 63) // 64, dtype=np.uint64),
    )  # fmt: skip


@jit(inline="always")
def place_node(listwise, samples, start, end, is_root, parent_score, score):
    """Give the rows ``samples[start:end]`` of a new node its score in the tree's blocks."""
    if is_root:
        start_query_blocks(
            listwise.query_boundaries, listwise.row_gains, listwise.copies, score, listwise.tree_blocks,
            listwise.n_query_blocks,
        )  # fmt: skip
    else:
        move_to_child(
            samples, start, end, parent_score, score, listwise.query_of_row, listwise.query_boundaries,
            listwise.row_gains, listwise.copies, listwise.tree_blocks, listwise.n_query_blocks, listwise.query_slot,
            listwise.slot_values, listwise.slot_ints,
        )  # fmt: skip


@jit(inline="always")
def single_grade(statistics):
    """Whether a node's documents all have one grade (``statistics``: float64, the weight of
    each grade); then every split leaves every query's expected DCG as it is."""
    n_present = 0
    for c in range(len(statistics)):
        n_present += statistics[c] > 0.0
    return n_present <= 1


@jit(inline="always")
def open_node(listwise, rows, start, end, score, target_sum, leaf_targets, rng_state):
    """``prepare_node`` for the node ``rows.samples[start:end]`` of score ``score``; the sweeps follow."""
    n_slots, n_events, parent_total = prepare_node(
        listwise, rows.samples, start, end, score, rows.weights, leaf_targets, rng_state
    )
    return NodeLists(n_slots, n_events, parent_total, target_sum, score)


@jit(inline="always")
def sweep_feature(X_binned, feature, missing_bin, rows, node, params, listwise, lists, best_gain):
    """``listwise_sweep`` of ``feature`` in the node ``open_node`` prepared: (is_constant, gain, bin, next bin,
    missing), ``missing`` an ``_scans`` ``MISSING_*`` constant.

    The node's rows in ``missing_bin`` sort last; the sweeps ``params.missing_direction``
    asks for (``_scans.missing_sweeps``) see them first (rotated to the front, bin -1:
    the first cut leaves them alone on the left), last, or both, as the pointwise scans
    (the listwise criterion does not set them apart: ``SEPARATE`` is refused for it).
    """
    order = listwise.order
    n_node = node.end - node.start
    if _scans.sort_by_bin(
        X_binned, feature, rows.samples, node.start, node.end, listwise.histogram_count, listwise.occupied, order
    ) == 1:
        return True, best_gain, -1, -1, _scans.MISSING_RIGHT
    n_missing = _scans.trailing_missing(order, n_node, missing_bin)
    missing_first, missing_last, cut_before_missing = _scans.missing_sweeps(params.missing_direction, n_missing > 0)
    best_bin = -1
    best_next = -1
    missing = _scans.MISSING_RIGHT
    for sweep in range(int(missing_first) + int(missing_last)):  # one call site, as in _scans.histogram_scan
        leading = missing_first and sweep == 0
        if leading or sweep == 1:  # missing rows to the front (bin -1), or back to the end
            _rotate_missing(order, n_node, n_missing, leading, missing_bin)
        skip_bin = missing_bin if not (leading or cut_before_missing) else -1
        gain, b, after = listwise_sweep(
            listwise, lists, n_node, skip_bin, rows.weights, node.weight, params.min_samples_leaf,
            params.min_child_weight, best_gain, None,
        )  # fmt: skip
        if after >= 0:
            best_gain, best_bin, best_next, missing = gain, b, after, int(leading)
    return False, best_gain, best_bin, best_next, missing


@jit(inline="always")
def _rotate_missing(order, n_node, n_missing, to_front, missing_bin):
    """Move the ``n_missing`` rows of ``order[:n_node]`` in the missing bin from its end to its
    front (``to_front``, their bin -1) or back (their bin ``missing_bin``), keeping the
    order within both parts: three reversals, no scratch."""
    split = n_node - n_missing if to_front else n_missing
    for low, high in ((0, split), (split, n_node), (0, n_node)):
        high -= 1
        while low < high:
            for column in range(2):
                order[low, column], order[high, column] = order[high, column], order[low, column]
            low += 1
            high -= 1
    first = 0 if to_front else n_node - n_missing
    for rank in range(first, first + n_missing):
        order[rank, 1] = -1 if to_front else missing_bin
