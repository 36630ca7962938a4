"""The listwise criterion (RF-list): incremental gains against brute-force expected NDCG."""

import numba
import numpy as np
import pytest
import sklearn.metrics
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from forestrank._tree import _listwise, _scans

MAX_BINS = 8


def expected_ndcg(gains, scores, discount):
    """Tie-averaged NDCG of one query, straight from Eq. 11-13 (every ordering of ties)."""
    order = np.argsort(-scores, kind="stable")
    gains, scores = gains[order], scores[order]
    per_rank = discount(np.arange(1, len(gains) + 1))
    dcg, start = 0.0, 0
    while start < len(gains):
        end = start + 1
        while end < len(gains) and scores[end] == scores[start]:
            end += 1
        dcg += gains[start:end].mean() * per_rank[start:end].sum()
        start = end
    ideal = (np.sort(gains)[::-1] * per_rank).sum()
    return dcg / ideal if ideal > 0 else 0.0


def mean_expected_ndcg(case, scores, discount):
    """Weighted mean over queries, each document repeated ``copies`` times."""
    total = weight = 0.0
    for q, (first, end) in enumerate(zip(case["boundaries"][:-1], case["boundaries"][1:])):
        rows = np.arange(first, end)
        rows = rows[case["copies"][rows] > 0]
        if len(rows) == 0:
            continue
        repeated = np.repeat(rows, case["copies"][rows].astype(int))
        total += case["query_weights"][q] * expected_ndcg(case["gains"][repeated], scores[repeated], discount)
        weight += case["query_weights"][q]
    return total / weight


@st.composite
def node_cases(draw):
    """A tree state: one node (leaf 0) among other leaves whose scores tie with the node's and its children's."""
    n_queries = draw(st.integers(1, 5))
    sizes = draw(st.lists(st.integers(1, 7), min_size=n_queries, max_size=n_queries))
    n_rows = sum(sizes)
    boundaries = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    grades = np.array(draw(st.lists(st.integers(0, 2), min_size=n_rows, max_size=n_rows)), dtype=float)
    copies = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 1.0, 2.0]), min_size=n_rows, max_size=n_rows)))
    query_weights = np.array(draw(st.lists(st.sampled_from([1.0, 2.0]), min_size=n_queries, max_size=n_queries)))
    assume((copies > 0).sum() >= 2)
    in_node = np.array(draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows))) & (copies > 0)
    if in_node.sum() < 2:
        in_node[np.flatnonzero(copies > 0)[:2]] = True
    bins = np.array(draw(st.lists(st.integers(0, 5), min_size=n_rows, max_size=n_rows)), dtype=np.uint8)
    query_of_row = np.repeat(np.arange(n_queries), sizes).astype(np.int64)
    row_weights = copies * query_weights[query_of_row]
    node_rows = np.flatnonzero(in_node)
    node_score = (row_weights[node_rows] * grades[node_rows]).sum() / row_weights[node_rows].sum()
    palette = [0.0, 0.5, 1.0, 2.0, 1.0 / 3.0, node_score]
    row_score = np.array(draw(st.lists(st.sampled_from(palette), min_size=n_rows, max_size=n_rows)))
    row_score[node_rows] = node_score
    row_leaf = np.where(in_node, 0, 1 + np.arange(n_rows))
    return dict(
        boundaries=boundaries, grades=grades, gains=np.exp2(grades) - 1, copies=copies, query_weights=query_weights,
        query_of_row=query_of_row, row_weights=row_weights, node_rows=node_rows.astype(np.int64),
        node_score=node_score, row_score=row_score, row_leaf=row_leaf.astype(np.int64), bins=bins,
    )  # fmt: skip


def tree_blocks_of(case):
    """The builder's per-query blocks for the case's scores, through its own update path:
    every query starts as one block at score 0, then each leaf's rows move to their score."""
    n_rows, n_queries = len(case["grades"]), len(case["query_weights"])
    tree_blocks = np.empty((n_rows, _listwise.N_TREE_BLOCK_COLUMNS))
    n_query_blocks = np.zeros(n_queries, dtype=np.int64)
    start = -7.0  # below every score: no leaf keeps it
    _listwise.start_query_blocks(case["boundaries"], case["gains"], case["copies"], start, tree_blocks, n_query_blocks)
    scratch = (
        np.full(n_queries, -1, dtype=np.int64),
        np.empty((n_queries, _listwise.N_SLOT_COLUMNS)),
        np.empty((n_queries, _listwise.N_SLOT_INT_COLUMNS), dtype=np.int64),
    )
    in_tree = np.flatnonzero(case["copies"] > 0)
    for leaf in np.unique(case["row_leaf"][in_tree]):
        rows = in_tree[case["row_leaf"][in_tree] == leaf].astype(np.int64)
        score = case["row_score"][rows[0]]
        _listwise.move_to_child(
            rows, 0, len(rows), start, score, case["query_of_row"], case["boundaries"], case["gains"], case["copies"],
            tree_blocks, n_query_blocks, *scratch,
        )  # fmt: skip
    for q in range(n_queries):
        rows = np.arange(case["boundaries"][q], case["boundaries"][q + 1])
        rows = rows[case["copies"][rows] > 0]
        first = case["boundaries"][q]
        assert_blocks_of_scores(
            tree_blocks[first : first + n_query_blocks[q]], case["row_score"][rows], case["copies"][rows],
            case["gains"][rows],
        )  # fmt: skip
    return tree_blocks, n_query_blocks


def assert_blocks_of_scores(stored, scores, copies, gains):
    """The stored tree blocks are the documents' distinct scores, decreasing, with their copies and gains."""
    distinct = np.unique(scores)[::-1]
    np.testing.assert_array_equal(stored[:, _listwise.SCORE], distinct)
    for block, score in zip(stored, distinct):
        at = scores == score
        assert block[_listwise.BLOCK_COUNT] == copies[at].sum()
        assert block[_listwise.BLOCK_GAIN] == pytest.approx((copies[at] * gains[at]).sum())


@numba.njit
def prepare_and_sweep(listwise, samples, node_score, weights, leaf_targets, rng_state, candidate_gains, constant):
    """The builder's two kernels on one node (they take the bundle and are callable only from
    compiled code): ``prepare_node``, then ``listwise_sweep`` over ``listwise.order`` unless
    ``constant``. Returns (gain, bin) of the best cut."""
    n = len(samples)
    n_slots, n_events, parent_total = _listwise.prepare_node(
        listwise, samples, 0, n, node_score, weights, leaf_targets, rng_state
    )
    gain, b = -np.inf, -1
    if not constant:
        target_sum = 0.0
        for position in range(n):
            target_sum += weights[position] * leaf_targets[samples[position]]
        lists = _listwise.NodeLists(n_slots, n_events, parent_total, target_sum, node_score)
        gain, b, _ = _listwise.listwise_sweep(listwise, lists, n, -1, weights, weights.sum(), 1, 0.0, -np.inf, candidate_gains)
    _listwise.release_node(listwise.query_slot, listwise.slot_ints, n_slots)
    return gain, b


@numba.njit
def sort_events(listwise, n_slots, n_events):
    """``_sort_events``, callable only from compiled code."""
    _listwise._sort_events(listwise, n_slots, n_events)


def sweep(case, table, max_queries=-1, missing_first=False):
    """prepare_node + listwise_sweep on the case's node.

    With ``missing_first`` the node's rows in its highest bin play the missing rows and
    lead the sweep (``sweep_feature``'s rotation): the cuts are then "bin <= b or
    missing", the first (bin -1) the missing rows alone.

    Returns (is_constant, best gain in mean NDCG, its bin, {bin: gain} of every cut)."""
    samples = case["node_rows"].copy()
    n = len(samples)
    listwise = _listwise.new_listwise(
        1, max_queries, case["query_of_row"], case["boundaries"], case["gains"], case["copies"],
        case["query_weights"], table, n, MAX_BINS,
    )  # fmt: skip
    listwise.tree_blocks[:], listwise.n_query_blocks[:] = tree_blocks_of(case)
    weights = case["row_weights"][samples]
    candidate_gains = np.full(MAX_BINS + 1, np.nan)
    bins = case["bins"][:, None]
    order = listwise.order
    constant = _scans.sort_by_bin(bins, 0, samples, 0, n, np.zeros(MAX_BINS, dtype=np.int64), np.zeros(1, dtype=np.uint64), order) == 1
    if missing_first and not constant:
        missing_bin = bins[samples, 0].max()
        _listwise._rotate_missing(order, n, int((bins[samples, 0] == missing_bin).sum()), True, missing_bin)
    rng_state = np.array([1, 2], dtype=np.uint64)
    gain, b = prepare_and_sweep(
        listwise, samples, case["node_score"], weights, case["grades"], rng_state, candidate_gains, constant
    )
    assert (listwise.query_slot == -1).all()
    every = {int(c) - 1: g * listwise.scale for c, g in enumerate(candidate_gains) if not np.isnan(g)}
    return constant, gain * listwise.scale, b, every


def brute_gains(case, discount, missing_first=False):
    """Change of mean expected NDCG for every cut "bin <= b" of the node (with
    ``missing_first``: "bin <= b or in the highest bin", -1 for that bin alone)."""
    rows = case["node_rows"]
    bins = case["bins"][rows]
    missing = bins == bins.max() if missing_first else np.zeros(len(rows), bool)
    before = mean_expected_ndcg(case, case["row_score"], discount)
    gains = {}
    for b in ([-1] if missing_first else []) + list(np.unique(bins[~missing])[:-1 if not missing_first else None]):
        goes_left = (bins <= b) | missing
        left, right = rows[goes_left], rows[~goes_left]
        if len(right) == 0:
            continue
        scores = case["row_score"].copy()
        for part in (left, right):
            w = case["row_weights"][part]
            scores[part] = (w * case["grades"][part]).sum() / w.sum()
        gains[b] = mean_expected_ndcg(case, scores, discount) - before
    return gains


DISCOUNTS = {
    "log2": (("log2", 1.0), lambda r: 1 / np.log2(r + 1)),
    "log_power": (("log_power", 2.0), lambda r: 1 / np.log2(r + 1) ** 2),
    "rank_power": (("rank_power", 0.5), lambda r: 1 / r**0.5),
}


@pytest.mark.parametrize("discount", list(DISCOUNTS))
@settings(max_examples=150, deadline=None)
@given(case=node_cases())
def test_incremental_gain_equals_brute_force_expected_ndcg(discount, case):
    (name, power), formula = DISCOUNTS[discount]
    table = _listwise.cumulative_discounts(40, name, power)
    constant, gain, b, every = sweep(case, table)
    gains = brute_gains(case, formula)
    assert constant == (len(gains) == 0)
    assert every.keys() == gains.keys()  # min_samples_leaf=1: every cut is a candidate
    for cut, brute in gains.items():  # the running total is exact at every cut, not only the best
        assert every[cut] == pytest.approx(brute, abs=1e-12)
    if gains:
        assert gain == pytest.approx(max(gains.values()), abs=1e-12)
        assert gains[b] == pytest.approx(max(gains.values()), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(case=node_cases())
def test_incremental_gain_equals_brute_force_with_the_missing_rows_leading(case):
    """Missing values: with the missing rows moved left first, every cut's running gain is
    still the brute-force change of mean expected NDCG (the missing-left sweep)."""
    (name, power), formula = DISCOUNTS["log2"]
    table = _listwise.cumulative_discounts(40, name, power)
    constant, gain, b, every = sweep(case, table, missing_first=True)
    gains = brute_gains(case, formula, missing_first=True)
    assume(not constant)
    assert every.keys() == gains.keys()
    for cut, brute in gains.items():
        assert every[cut] == pytest.approx(brute, abs=1e-12)
    assert gain == pytest.approx(max(gains.values()), abs=1e-12)
    assert gains[b] == pytest.approx(max(gains.values()), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(case=node_cases(), cutoff=st.integers(1, 4))
def test_truncated_objective_is_ndcg_at_k(case, cutoff):
    table = _listwise.cumulative_discounts(40, "log2", cutoff=cutoff)
    _, gain, b, every = sweep(case, table)
    gains = brute_gains(case, lambda r: np.where(r <= cutoff, 1 / np.log2(r + 1), 0.0))
    for cut, brute in gains.items():
        assert every[cut] == pytest.approx(brute, abs=1e-12)
    if gains:
        assert gain == pytest.approx(max(gains.values()), abs=1e-12)


@pytest.mark.parametrize("discount", list(DISCOUNTS))
@pytest.mark.parametrize("cutoff", [None, 1, 3, 10])
def test_horizon_is_where_the_cumulative_discount_stops_growing(discount, cutoff):
    """Blocks starting at the horizon are left out as worth 0: it must be the cutoff, and beyond every position
    (the table's last entry) without one."""
    (name, power), _ = DISCOUNTS[discount]
    table = _listwise.cumulative_discounts(12, name, power, cutoff=cutoff)
    horizon = _listwise.discount_horizon(table)
    assert horizon == (len(table) - 1 if cutoff is None else cutoff)
    assert (table[horizon:] == table[-1]).all() and (np.diff(table[: horizon + 1]) > 0).all()


def test_reference_expected_ndcg_agrees_with_sklearn():
    rng = np.random.default_rng(0)
    gains = rng.integers(0, 3, 12).astype(float)
    scores = rng.integers(0, 4, 12).astype(float)  # many ties
    reference = sklearn.metrics.ndcg_score([gains], [scores])
    assert expected_ndcg(gains, scores, lambda r: 1 / np.log2(r + 1)) == pytest.approx(reference)


@pytest.mark.parametrize("discount", list(DISCOUNTS))
def test_cumulative_discount_tables_match_their_formulas(discount):
    (name, power), formula = DISCOUNTS[discount]
    table = _listwise.cumulative_discounts(10, name, power, cutoff=7)
    per_rank = np.where(np.arange(1, 12) <= 7, formula(np.arange(1, 12)), 0.0)
    np.testing.assert_allclose(np.diff(table), per_rank)
    assert table[0] == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), max_size=6), min_size=1, max_size=40))
def test_event_sort_is_a_stable_sort_of_the_blocks(slot_scores):
    """The counting sort lists the blocks like a stable sort by score (equal scores in block order), each with its
    slot; thirds make scores that are not dyadic, and small tables make their hashes collide."""
    scores = [np.unique(values)[::-1] / 3.0 for values in slot_scores]  # one block per score, decreasing
    n_slots, n_events = len(scores), sum(len(values) for values in scores)
    blocks = np.zeros((_listwise.N_BLOCK_FIELDS, n_events))
    slot_ints = np.zeros((n_slots, _listwise.N_SLOT_INT_COLUMNS), dtype=np.int64)
    blocks[_listwise.SCORE] = np.concatenate(scores) if n_events else []
    ends = np.cumsum([len(values) for values in scores])
    slot_ints[:, _listwise.FIRST_BLOCK] = ends - [len(values) for values in scores]
    slot_ints[:, _listwise.END_BLOCK] = ends
    sizes = [len(values) for values in scores]
    listwise = _listwise.new_listwise(
        1, -1, np.repeat(np.arange(n_slots), sizes), np.concatenate(([0], ends)), np.zeros(n_events),
        np.ones(n_events), np.ones(n_slots), _listwise.cumulative_discounts(n_events + 1), n_events, 1,
    )  # fmt: skip
    listwise.blocks[:], listwise.slot_ints[:] = blocks, slot_ints
    listwise.event_scores[:], listwise.event_blocks[:] = np.nan, -99
    sort_events(listwise, n_slots, np.int64(n_events))
    event_scores, event_blocks = listwise.event_scores, listwise.event_blocks
    assert (listwise.table_counts == -1).all()  # the hash table is left empty for the next node
    by_score = np.argsort(blocks[_listwise.SCORE], kind="stable")
    slot_of_block = np.repeat(np.arange(n_slots), [len(values) for values in scores])
    np.testing.assert_array_equal(event_scores, blocks[_listwise.SCORE, by_score])
    np.testing.assert_array_equal(event_blocks & _listwise.EVENT_BLOCK_MASK, by_score)
    np.testing.assert_array_equal(event_blocks >> _listwise.EVENT_SLOT_SHIFT, slot_of_block[by_score])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 8), st.integers(1, 3)), min_size=1, max_size=12),
    st.lists(st.tuples(st.integers(0, 11), st.integers(0, 8)), max_size=30),
)
def test_moving_copies_between_blocks_keeps_the_blocks_of_the_scores(documents, moves):
    """A query's tree blocks after any moves are its distinct scores (decreasing) with their copies and gains:
    moves up and down, into an existing block or a new one, emptying their block or not (an emptied block's place
    is reused by shifting only the blocks in between). The query's blocks start at row 2, after another query's."""
    scores = np.array([score for score, _ in documents], dtype=np.float64) / 3.0
    copies = np.array([count for _, count in documents], dtype=np.float64)
    gains = np.arange(1, len(documents) + 1, dtype=np.float64)
    first = 2
    tree_blocks = np.full((first + len(documents) + 1, _listwise.N_TREE_BLOCK_COLUMNS), np.nan)
    size = 0
    for score in np.unique(scores)[::-1]:
        at = scores == score
        tree_blocks[first + size, : _listwise.BLOCK_GAIN + 1] = score, copies[at].sum(), (copies[at] * gains[at]).sum()
        size += 1
    for document, new_score in moves:
        if document >= len(documents) or new_score / 3.0 == scores[document]:
            continue
        size = _listwise._move_between_blocks(
            tree_blocks, first, size, scores[document], new_score / 3.0, copies[document],
            copies[document] * gains[document],
        )  # fmt: skip
        scores[document] = new_score / 3.0
    assert size == len(np.unique(scores))
    assert np.isnan(tree_blocks[:first]).all()  # the other query's rows are untouched
    assert_blocks_of_scores(tree_blocks[first : first + size], scores, copies, gains)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 12), max_size=30),
    st.lists(st.integers(-1, 13), min_size=2, max_size=8),
)
def test_a_moving_score_crosses_the_events_between_its_values(values, path):
    """Along any path of scores, each move's crossed range is the events with scores between the old and new value
    (both included; none when the score stays) and the equal range is the events at the new score, whatever the
    ties before and after (integers in thirds make many)."""
    event_scores = np.sort(np.array(values, dtype=np.float64)) / 3.0
    n_events = len(event_scores)
    scores = np.array(path, dtype=np.float64) / 3.0
    low = int(np.searchsorted(event_scores, scores[0], "left"))
    high = int(np.searchsorted(event_scores, scores[0], "right"))
    for previous, score in zip(scores[:-1], scores[1:]):
        start, end, low, high = _listwise._move_score(event_scores, n_events, low, high, previous, score)
        between = (event_scores >= min(previous, score)) & (event_scores <= max(previous, score))
        expected = np.flatnonzero(between) if score != previous else np.array([], dtype=np.int64)
        np.testing.assert_array_equal(np.arange(start, end), expected)
        np.testing.assert_array_equal(np.arange(low, high), np.flatnonzero(event_scores == score))
