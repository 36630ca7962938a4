"""Split search: the scans find the brute-force best cut, and agree with each other."""

import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forestrank._tree import _criteria, _histograms, _listwise, _pooled_fill, _rows, _scans, _splitter
from forestrank._tree._builder import new_workspace
from forestrank._tree._grow import TreeParams, grow_tree

from .test_criteria import hellinger_reference
from .helpers import (
    CLASS_CRITERIA, HISTOGRAM, POOLED, SORTED_SWEEP, brute_best_split, brute_cost, call_best_split, nodes,
    seed, split_children, summed_histograms, training_set,
)



@pytest.mark.parametrize(
    "criterion", [_criteria.ENTROPY, _criteria.GINI, _criteria.VARIANCE, _criteria.NEWTON], ids=["entropy", "gini", "variance", "newton"]
)
@pytest.mark.parametrize("min_samples_leaf", [1, 3])
@pytest.mark.parametrize(
    "missing, direction",
    [(False, _scans.LEARN), (True, _scans.LEARN), (True, _scans.LEFT), (True, _scans.RIGHT), (True, _scans.SEPARATE)],
    ids=["complete", "missing-learn", "missing-left", "missing-right", "missing-separate"],
)
# Forty parametrisations of a brute-force search: 40 draws each (1,600 in all) rather than
# the suite's 150, which made this the suite's slowest test.
@settings(max_examples=40)
@given(data=st.data())
def test_histogram_scan_and_sorted_sweep_find_the_brute_force_best_split(criterion, min_samples_leaf, missing, direction, data):
    """With missing values, every cut is tried with the missing rows on the sides the
    direction allows (both when learned), or in a third child (separate)."""
    _assert_scans_find_the_brute_force_best_split(criterion, min_samples_leaf, direction, *data.draw(nodes(criterion, missing)))


@pytest.mark.parametrize("criterion", [_criteria.VARIANCE, _criteria.NEWTON], ids=["variance", "newton"])
@pytest.mark.parametrize("direction", [_scans.LEARN, _scans.LEFT, _scans.SEPARATE], ids=["learn", "left", "separate"])
@settings(max_examples=25)
@given(data=st.data())
def test_scans_of_more_bins_than_a_word_find_the_brute_force_best_split(criterion, direction, data):
    """Features of up to 200 bins and a missing bin after them: the pooled sweep walks its
    occupied bins 64 at a time (``_scans._pooled_sweep``), so cuts across a word's end and
    a missing bin in a later word are searched too."""
    X, targets, weights = data.draw(nodes(criterion, missing=True, n_values=200, max_rows=300))
    _assert_scans_find_the_brute_force_best_split(criterion, 3, direction, X, targets, weights)


def _assert_scans_find_the_brute_force_best_split(criterion, min_samples_leaf, direction, X, targets, weights):
    training, _ = training_set(X, targets)
    l2 = 0.5 if criterion == _criteria.NEWTON else 0.0
    expected_gain, _, _ = brute_best_split(
        criterion, training.X_binned, targets, weights, min_samples_leaf, l2, missing_bins=training.missing_bins,
        missing_direction=direction,
    )  # fmt: skip
    pure = criterion in CLASS_CRITERIA and len(np.unique(targets[:, 0])) == 1
    paths = (HISTOGRAM, POOLED, SORTED_SWEEP) if criterion in (_criteria.VARIANCE, _criteria.NEWTON) else (HISTOGRAM, SORTED_SWEEP)
    for path in paths:
        feature, b, after, gain, missing_side = call_best_split(
            training, criterion, weights, path, min_samples_leaf=min_samples_leaf, l2=l2, missing_direction=direction
        )
        if expected_gain == -np.inf or (pure and min_samples_leaf == 1):
            # No candidate, or a pure node (the builder never searches those): with
            # boundary points only, a pure node has no candidate left.
            assert feature == -1
            continue
        # The reported gain is that of the chosen split, recomputed from scratch ...
        children = split_children(training, feature, b, missing_side)
        recomputed = brute_cost(criterion, targets, weights, l2) - sum(
            brute_cost(criterion, targets[child], weights[child], l2) for child in children
        )
        assert gain == pytest.approx(recomputed, rel=1e-9, abs=1e-9)
        # ... and no candidate split is better; ``after`` is the first occupied bin right of it.
        assert gain == pytest.approx(expected_gain, rel=1e-9, abs=1e-9)
        assert after == training.X_binned[children[-1], feature].min()
        has_missing = (training.X_binned[:, feature] == training.missing_bins[feature]).any()
        if has_missing and direction != _scans.LEARN:
            expected_side = {_scans.LEFT: _scans.MISSING_LEFT, _scans.RIGHT: _scans.MISSING_RIGHT}.get(direction)
            if direction == _scans.SEPARATE:  # apart, or alone against the present rows
                expected_side = _scans.MISSING_APART if len(children) == 3 else _scans.MISSING_LEFT
                assert len(children) == 3 or b == -1
            assert missing_side == expected_side


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("direction", [_scans.LEARN, _scans.SEPARATE], ids=["learn", "separate"])
@given(data=st.data())
def test_pooled_search_draws_examines_and_splits_as_the_one_loop(n_threads, direction, data):
    """The pooled search scans its drawn features together (on two threads too) and
    compares them afterwards: with sums exact in any order (integer gradients and
    hessians, unit weights) it draws the same features, skips the same constant ones
    and finds the same split, gain and missing side as the histogram scans' loop, with
    per-node sampling and feature penalties."""
    X, _, _ = data.draw(nodes(_criteria.NEWTON, missing=True))
    # A feature of one value, which no thread fills: the search must find it constant.
    X = np.insert(X, data.draw(st.integers(0, X.shape[1])), 2.5, axis=1)
    n_rows, n_features = X.shape
    integers = st.lists(st.integers(-3, 3), min_size=n_rows, max_size=n_rows)
    targets = np.column_stack(
        [data.draw(integers), data.draw(st.lists(st.integers(1, 3), min_size=n_rows, max_size=n_rows))]
    ).astype(float)
    weights = np.ones(n_rows)
    training, _ = training_set(X, targets)
    max_features = data.draw(st.integers(1, n_features))
    penalty = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.5, 2.0]), min_size=n_features, max_size=n_features)))
    found = []
    for path, threads in ((HISTOGRAM, 1), (POOLED, n_threads)):
        state = seed(7)
        split = call_best_split(
            training, _criteria.NEWTON, weights, path, min_samples_leaf=2, l2=0.5, missing_direction=direction,
            feature_penalty=penalty, penalty_unit=1.0, max_features=max_features, n_threads=threads, rng_state=state,
        )  # fmt: skip
        found.append((split, tuple(state)))
    assert found[0] == found[1]


@numba.njit
def _pair_fill(binned, rows, pool, table, searched, sibling_searched, features, params, monotonic_cst):
    """The builder's call for a new left child (node 1) whose sibling is node 2."""
    return _pooled_fill.node_histograms(
        binned, rows, pool, table, np.int64(1), np.bool_(True), searched, sibling_searched, np.bool_(True), features,
        params, monotonic_cst, None,
    )  # fmt: skip


@pytest.mark.slow  # a pair's fill compiled apart from a tree, with its searches: kernels of their own
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("value", [0, 1, 2])
@pytest.mark.parametrize(
    "n_left, right_searched", [(25, True), (35, True), (35, False)], ids=["left-smaller", "right-smaller", "right-alone-unsearched"]
)
@pytest.mark.parametrize("n_tree_features", [6, 4])
def test_a_pairs_fill_scans_the_children_it_searches_as_their_own_searches_would(n_threads, value, n_left, right_searched, n_tree_features):
    """On two threads a split's fill scans both children in its region, the left into
    row 0 and the right into row 1 of the pool's scans (``Pool.scanned``), the smaller
    from its own slot and totals, the larger from the parent's; each child's search then
    draws its features and compares those scans: the same split, gain and draws as its
    own scans of the same histograms, under monotone constraints and the right child's
    bounds. A child not searched is not scanned (here the smaller: without the larger
    the pair is not filled), nor is anything on one thread. Every feature the tree may
    split on is scanned (planted winners elsewhere would be chosen)."""
    rng = np.random.default_rng(value)
    n_rows, n_features = 60, 6
    X = rng.integers(0, 6, size=(n_rows, n_features)).astype(float)
    X[:, 2] = 1.0  # one value in every row: no thread fills it
    X[rng.random(size=X.shape) < 0.1] = np.nan
    targets = np.column_stack([rng.normal(size=n_rows), rng.uniform(0.1, 1.0, size=n_rows)])
    weights = np.ones(n_rows)
    training, _ = training_set(X, targets)
    binned = training.binned()
    max_bins = training.bin_thresholds.shape[1]
    columns = [weights * targets[:, 0], targets[:, 1], np.ones(n_rows)]
    histograms = np.zeros((3, n_features, max_bins, 3))  # the parent's slot, the smaller child's, the scratch slot
    histograms[0] = summed_histograms(training.X_binned, columns, max_bins)
    owners = _histograms.feature_owners(n_features, n_threads, histograms[0, :, :, 2], training.missing_bins)
    histograms[:, owners[0] < 0] = 0.0
    params = TreeParams(
        _criteria.NEWTON, 0, max_features=n_features, l2_regularization=0.5, min_samples_leaf=3, n_threads=n_threads
    ).growth_params()
    rows = _rows.sorted_rows(np.arange(n_rows, dtype=np.int64), np.ascontiguousarray(targets), weights)
    scratch = _scans.new_scratch(max_bins, 2, _scans.LEARN)
    monotonic_cst = np.array([1, -1, 0, 1, 0, 0], dtype=np.int8)
    table = new_workspace(3, n_features, max_bins, 2, _scans.LEARN).table
    for node, start, end, parent in ((0, 0, n_rows, 0), (1, 0, n_left, 0), (2, n_left, n_rows, 0)):
        table.start[node], table.end[node], table.parent[node] = start, end, parent
    table.forced[:] = 0
    table.lower[:] = -np.inf
    table.upper[:] = np.inf
    table.lower[2], table.upper[2] = -0.05, 0.05  # bounds a monotone split above would set: they clip its candidates
    pool = _histograms.new_pool(histograms, 3, owners=owners)
    pool.node_slot[0] = 0  # the parent's slot; slot 1 is the one free
    pool.free_slots[0] = 1
    pool.n_free[0] = 1
    pool.scan_gains[:] = np.inf  # a planted winner: a feature the fill left unscanned would be chosen
    pool.scan_cuts[:] = 0
    features = np.arange(n_tree_features, dtype=np.int32)
    _pair_fill(binned, rows, pool, table, np.bool_(True), np.bool_(right_searched), features, params, monotonic_cst)
    scanned = n_threads > 1
    assert list(pool.scanned) == [1 if scanned else -1, 2 if scanned and right_searched else -1]
    if not right_searched:
        assert np.isposinf(pool.scan_gains[1]).all()  # the unsearched child's row untouched

    def search(node, scanned_row, state):
        moments = pool.node_sums[node]
        statistics = moments[:2].copy()
        cost, _ = _criteria.node_cost(_criteria.NEWTON, statistics, moments[2], 0.5, True)
        found = _splitter.best_split(
            binned, rows,
            _scans.Node(table.start[node], table.end[node], moments[2], cost, statistics, table.lower[node], table.upper[node], 0),
            params, scratch, features.copy(), state, None, pool, pool.node_slot[node], None, None,
            np.zeros(n_features), 0.0, monotonic_cst, None, scanned_row,
        )  # fmt: skip
        return found, tuple(state)

    searches = [node for node in (1, 2) if node == 1 or right_searched]
    read = {node: search(node, _histograms.scanned_row(pool, node), seed(node)) for node in searches}
    assert list(pool.scanned) == [-1, -1]  # each search takes its row once
    for node in searches:
        assert read[node] == search(node, -1, seed(node))  # its own scans, into row 0
        assert read[node][0][0] in range(n_tree_features)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_a_pooled_sweep_that_ends_early_still_finds_a_varying_feature_not_constant(n_threads):
    """The pooled sweep ends once fewer than ``min_samples_leaf`` rows are right of the cut
    (``_scans._pooled_sweep``). A feature whose lowest bin holds all rows but one ends its
    sweep at that bin; it varies, so a search drawing it must not skip it as constant and
    draw another: with one feature drawn a node, the seeds drawing it first find no split
    (its one cut leaves a single row), the others the second feature's, as the histogram
    scans do."""
    rng = np.random.default_rng(0)
    n_rows = 30
    X = np.column_stack([np.r_[np.zeros(n_rows - 1), 1.0], rng.normal(size=n_rows)])
    # Integer gradients and hessians: sums exact in any order, so both paths' gains agree bitwise.
    targets = np.column_stack([np.round(2 * X[:, 1]), np.ones(n_rows)])
    weights = np.ones(n_rows)
    training, _ = training_set(X, targets)
    chosen = set()
    for value in range(8):
        found = []
        for path, threads in ((HISTOGRAM, 1), (POOLED, n_threads)):
            state = seed(value)
            split = call_best_split(
                training, _criteria.NEWTON, weights, path, min_samples_leaf=5, l2=0.5, max_features=1,
                n_threads=threads, rng_state=state,
            )  # fmt: skip
            found.append((split, tuple(state)))
        assert found[0] == found[1]
        chosen.add(found[0][0][0])
    assert chosen == {-1, 1}


# The kernels a tree's builder calls per node or per split: numba compiles a kernel that
# leaves reference counting unset with the flags of the first caller that compiles it, and
# its cache then serves that code to every caller of the signature (docs/design.md, "Numba
# rules": a kernel declares its reference counting).
BUILDER_KERNELS = (
    _splitter.pooled_scans, _splitter._pooled_scans_parallel, _pooled_fill.fill_node,
    _pooled_fill.fill_histograms_parallel, _pooled_fill._scan_children, _pooled_fill.node_histograms, _rows.partition_node, _rows.partition_parallel, _criteria.exact_class_gain,
    _criteria._ordinal_hellinger_distance, _listwise.start_query_blocks,
)  # fmt: skip


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="numba's options exist only when compiled")
@pytest.mark.parametrize("kernel", BUILDER_KERNELS, ids=lambda kernel: getattr(kernel, "py_func", kernel).__name__)
def test_the_builders_kernels_declare_no_reference_counting(kernel):
    """Each declares it: the builder counts no references, and a test calling one of them
    from Python, first, would otherwise compile and cache a counting version for the builder
    (``benchmarks/RESULTS.md``, "Two threads at b71908b": fits 3.5% slower)."""
    assert kernel.targetoptions.get("_nrt") is False


@pytest.mark.slow
@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="numba's flags exist only when compiled")
def test_the_scans_compiled_first_from_python_count_no_references(tmp_path):
    """``best_split`` called from Python counts references; the scans it compiles, first, on
    an empty cache (a process of its own), count none, as the builder's own call compiles
    them (their symbols carry the flags they were compiled with)."""
    code = """
import sys
import numpy as np
from numba.core.compiler import Flags
sys.path.insert(0, sys.argv[1])
from tree.helpers import POOLED, call_best_split, training_set
from forestrank._tree import _criteria, _splitter
rng = np.random.default_rng(0)
X = rng.normal(size=(30, 2))
training, _ = training_set(X, np.column_stack([np.round(2 * X[:, 1]), np.ones(30)]))
call_best_split(training, _criteria.NEWTON, np.ones(30), POOLED, n_threads=2)
for kernel in (_splitter.pooled_scans, _splitter._pooled_scans_parallel):
    for compiled in kernel.overloads.values():
        print(kernel.py_func.__name__, all("nrt=True" not in Flags.demangle(tag) for tag in compiled.fndesc.abi_tags))
"""
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    tests_folder = str(Path(__file__).resolve().parents[1])
    run = subprocess.run([sys.executable, "-c", code, tests_folder], capture_output=True, text=True, env=environment)
    assert run.returncode == 0, run.stderr
    assert sorted(run.stdout.split()) == sorted(["pooled_scans", "True", "_pooled_scans_parallel", "True"]), run.stdout


@pytest.mark.slow  # the sorted sweep is a builder specialisation of its own
@pytest.mark.parametrize("max_features", [1, 3, 6])
def test_histogram_scan_and_sorted_sweep_grow_identical_trees(max_features):
    """Bit-identical trees wherever sums are exact: class counts, integer-valued targets.

    (With real-valued targets the two scans add in different orders; the per-node
    property test above covers them up to rounding.)
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    y = (X[:, 0] + np.sin(3 * X[:, 1]) + 0.3 * rng.normal(size=3000) > 0.5).astype(float) + (X[:, 2] > 1)
    weights = rng.integers(1, 3, 3000).astype(float)
    for criterion in (_criteria.ENTROPY, _criteria.GINI, _criteria.HELLINGER, _criteria.VARIANCE):
        training, _ = training_set(X, y)
        for tree_seed in range(3):
            trees = [
                grow_tree(training, weights, TreeParams(criterion, 3, max_features=max_features, sorted_sweep=sweep), seed(tree_seed))
                for sweep in (False, True)
            ]
            np.testing.assert_array_equal(trees[0].nodes, trees[1].nodes)
            np.testing.assert_array_equal(trees[0].values, trees[1].values)


@pytest.mark.parametrize("min_samples_leaf", [1, 3])
@given(data=st.data())
def test_hellinger_scans_find_the_cut_of_largest_ordinal_hellinger_distance(min_samples_leaf, data):
    X, targets, weights = data.draw(nodes(_criteria.ENTROPY))
    training, _ = training_set(X, targets)
    counts = lambda rows: np.bincount(targets[rows, 0].astype(int), weights=weights[rows], minlength=3)
    node = counts(np.ones(len(weights), dtype=bool))
    best = -np.inf
    for feature in range(training.X_binned.shape[1]):
        bins = training.X_binned[:, feature]
        for b in np.unique(bins)[:-1]:
            left = bins <= b
            if min(left.sum(), (~left).sum()) >= min_samples_leaf:
                best = max(best, hellinger_reference(counts(left), node))
    for path in (HISTOGRAM, SORTED_SWEEP):
        feature, b, _, gain, _ = call_best_split(training, _criteria.HELLINGER, weights, path, min_samples_leaf=min_samples_leaf)
        if best == -np.inf:
            assert feature == -1
            continue
        left = training.X_binned[:, feature] <= b
        assert gain == pytest.approx(hellinger_reference(counts(left), node), rel=1e-9, abs=1e-12)
        assert gain == pytest.approx(best, rel=1e-9, abs=1e-12)
