"""The shared tree engine: binning, split search, criteria, growth orders, prediction."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from forestrank._binning import BinMapper
from forestrank._tree import _builder, _criteria, _frontier, _histograms, _rng, _rows, _scans, _splitter
from forestrank._tree._grow import TrainingSet, TreeParams, grow_tree, histogram_pool
from forestrank.ensemble._boosting import newton_node_values

CLASS_CRITERIA = [_criteria.ENTROPY, _criteria.GINI]


def training_set(X, targets, leaf_targets=None, max_bins=255):
    binner = BinMapper(max_bins).fit(X)
    thresholds, values = binner.padded_tables()
    targets = np.asarray(targets, dtype=float).reshape(len(X), -1)
    leaf = targets[:, 0] if leaf_targets is None else np.asarray(leaf_targets, dtype=float)  # empty: no values
    return TrainingSet(binner.transform(X), binner.n_bins_, thresholds, values, targets, leaf), binner


def seed(value=0):
    return _rng.new_state(np.random.SeedSequence(value))


# --- brute force ---------------------------------------------------------------------


def brute_cost(criterion, targets, weights, l2=0.0, n_classes=3):
    """Node cost straight from the definitions in _criteria's table."""
    total = weights.sum()
    if criterion in CLASS_CRITERIA:
        counts = np.bincount(targets[:, 0].astype(int), weights=weights, minlength=n_classes)
        if criterion == _criteria.ENTROPY:
            nonzero = counts[counts > 0]
            return total * np.log(total) - (nonzero * np.log(nonzero)).sum() if total > 0 else 0.0
        return total - (counts**2).sum() / total if total > 0 else 0.0
    if criterion == _criteria.VARIANCE:
        y = targets[:, 0]
        return (weights * y**2).sum() - (weights * y).sum() ** 2 / total
    g, h = (weights * targets[:, 0]).sum(), (weights * targets[:, 1]).sum()
    return -(g**2) / (h + l2)


def brute_best_split(criterion, X_binned, targets, weights, min_samples_leaf=1, l2=0.0, n_classes=3):
    """Best (gain, feature, bin) over every feature and every cut between occupied bins."""
    parent = brute_cost(criterion, targets, weights, l2, n_classes)
    best = (-np.inf, -1, -1)
    for feature in range(X_binned.shape[1]):
        bins = X_binned[:, feature]
        for b in np.unique(bins)[:-1]:
            left = bins <= b
            if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
                continue
            gain = parent - brute_cost(criterion, targets[left], weights[left], l2, n_classes) - brute_cost(
                criterion, targets[~left], weights[~left], l2, n_classes
            )
            if gain > best[0] + 1e-9:
                best = (gain, feature, int(b))
    return best


# call_best_split's paths: histogram scan of the node's rows; scan of all-feature
# histograms filled beforehand (moment criteria); sorted sweep.
HISTOGRAM, POOLED, SORTED_SWEEP = 0, 1, 2


def statistics_second_moments(criterion, targets, weights):
    """Each row's second moment: ``w y^2`` (variance) or ``w h`` (newton)."""
    return weights * (targets[:, 0] ** 2 if criterion == _criteria.VARIANCE else targets[:, 1])


def call_best_split(data, criterion, weights, path, n_classes=3, min_samples_leaf=1, l2=0.0):
    """Run the numba split search on the whole data set as one node, every feature examined."""
    n_rows, n_features = data.X_binned.shape
    samples = np.arange(n_rows, dtype=np.int64)
    n_stats = _criteria.n_statistics(criterion, n_classes)
    statistics = np.zeros(n_stats)
    targets = np.ascontiguousarray(data.targets)
    if criterion in CLASS_CRITERIA:
        np.add.at(statistics, targets[:, 0].astype(int), weights)
    else:
        statistics[0] = (weights * targets[:, 0]).sum()
        statistics[1] = statistics_second_moments(criterion, targets, weights).sum()
    node = _scans.Node(0, n_rows, weights.sum(), brute_cost(criterion, targets, weights, l2, n_classes), statistics)
    max_bins = data.bin_thresholds.shape[1]
    rows = _rows.sorted_rows(samples, targets, weights)
    pool = None
    slot = -1
    if path == POOLED:  # the node's pooled histograms, summed here independently of the engine's fill
        histograms = np.zeros((1, n_features, max_bins, _criteria.n_hist_columns(criterion)))
        moments = np.column_stack([weights * targets[:, 0], statistics_second_moments(criterion, targets, weights)])
        for feature in range(n_features):
            for column, values in enumerate([*moments.T, np.ones(n_rows), weights][: histograms.shape[3]]):
                np.add.at(histograms[0, feature, :, column], data.X_binned[:, feature], values)
        pool = _histograms.new_pool(histograms, 1)
        slot = 0
    params = TreeParams(criterion, n_classes, max_features=n_features, l2_regularization=l2, min_samples_leaf=min_samples_leaf)
    return _splitter.best_split(
        _builder.Binned(data.X_binned, data.n_bins, data.bin_thresholds, data.bin_values), rows, node,
        params.growth_params(), _scans.new_scratch(max_bins, n_stats), np.arange(n_features, dtype=np.int32), seed(),
        np.empty((n_rows, 3), dtype=np.int64) if path == SORTED_SWEEP else None, pool, slot, None, None,
    )  # fmt: skip


@st.composite
def nodes(draw, criterion):
    n = draw(st.integers(2, 40))
    n_features = draw(st.integers(1, 4))
    X = np.array(draw(st.lists(st.lists(st.integers(0, 6), min_size=n_features, max_size=n_features), min_size=n, max_size=n)), float)
    if criterion in CLASS_CRITERIA:
        targets = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), float)[:, None]
    elif criterion == _criteria.VARIANCE:
        targets = np.array(draw(st.lists(st.floats(-5, 5), min_size=n, max_size=n)))[:, None]
    else:
        gradients = draw(st.lists(st.floats(-2, 2), min_size=n, max_size=n))
        hessians = draw(st.lists(st.floats(0.05, 1), min_size=n, max_size=n))
        targets = np.column_stack([gradients, hessians])
    weights = np.array(draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 0.5]), min_size=n, max_size=n)))
    return X, targets, weights


@pytest.mark.parametrize(
    "criterion", [_criteria.ENTROPY, _criteria.GINI, _criteria.VARIANCE, _criteria.NEWTON], ids=["entropy", "gini", "variance", "newton"]
)
@pytest.mark.parametrize("min_samples_leaf", [1, 3])
@given(data=st.data())
def test_histogram_scan_and_sorted_sweep_find_the_brute_force_best_split(criterion, min_samples_leaf, data):
    X, targets, weights = data.draw(nodes(criterion))
    training, _ = training_set(X, targets)
    l2 = 0.5 if criterion == _criteria.NEWTON else 0.0
    expected_gain, _, _ = brute_best_split(criterion, training.X_binned, targets, weights, min_samples_leaf, l2)
    pure = criterion in CLASS_CRITERIA and len(np.unique(targets[:, 0])) == 1
    paths = (HISTOGRAM, POOLED, SORTED_SWEEP) if criterion in (_criteria.VARIANCE, _criteria.NEWTON) else (HISTOGRAM, SORTED_SWEEP)
    for path in paths:
        feature, b, after, gain = call_best_split(training, criterion, weights, path, min_samples_leaf=min_samples_leaf, l2=l2)
        if expected_gain == -np.inf or (pure and min_samples_leaf == 1):
            # No candidate, or a pure node (the builder never searches those): with
            # boundary points only, a pure node has no candidate left.
            assert feature == -1
            continue
        # The reported gain is that of the chosen split, recomputed from scratch ...
        left = training.X_binned[:, feature] <= b
        recomputed = brute_cost(criterion, targets, weights, l2) - brute_cost(
            criterion, targets[left], weights[left], l2
        ) - brute_cost(criterion, targets[~left], weights[~left], l2)
        assert gain == pytest.approx(recomputed, rel=1e-9, abs=1e-9)
        # ... and no candidate split is better; ``after`` is the first occupied bin right of it.
        assert gain == pytest.approx(expected_gain, rel=1e-9, abs=1e-9)
        assert after == training.X_binned[~left, feature].min()


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
    for criterion in (_criteria.ENTROPY, _criteria.GINI, _criteria.VARIANCE):
        training, _ = training_set(X, y)
        for tree_seed in range(3):
            trees = [
                grow_tree(training, weights, TreeParams(criterion, 3, max_features=max_features, sorted_sweep=sweep), seed(tree_seed))
                for sweep in (False, True)
            ]
            np.testing.assert_array_equal(trees[0].nodes, trees[1].nodes)
            np.testing.assert_array_equal(trees[0].values, trees[1].values)


@pytest.mark.parametrize("expansion", ["best", "breadth"])
@pytest.mark.parametrize("criterion", [_criteria.VARIANCE, _criteria.NEWTON], ids=["variance", "newton"])
def test_pooled_histograms_with_sibling_subtraction_grow_the_sorted_sweep_trees(criterion, expansion):
    """Every feature examined + moment criterion = the pooled path; with integer targets
    and weights all sums (and the subtractions) are exact, so the trees must be identical.

    Exact mode with 900 distinct values x 25 features (a slot is 0.7 MB); besides the
    default pool, a 4-slot pool is exhausted by either growth order and runs the
    scratch-slot and refill fallbacks, and a pool that grew another tree before
    (boosting reuses one per fit) must change nothing.
    """
    rng = np.random.default_rng(5)
    n_rows, n_features = 3000, 25
    X = rng.integers(0, 900, size=(n_rows, n_features)) / 9.0
    signal = X[:, 0] - X[:, 1] + (X[:, 2] > 50) * 40
    targets = np.column_stack([np.round(signal / 10 + rng.normal(size=n_rows)), rng.integers(1, 4, n_rows)])
    if criterion == _criteria.VARIANCE:
        targets = targets[:, :1]
    weights = rng.integers(1, 3, n_rows).astype(float)
    training, binner = training_set(X, targets, max_bins=None)
    assert binner.n_bins_.max() > 800
    leaf_budget = 40 if expansion == "best" else None

    def params(sweep):
        return TreeParams(
            criterion, 0, max_features=n_features, expansion=_frontier.EXPANSIONS[expansion], min_samples_leaf=3,
            max_leaf_nodes=-1 if leaf_budget is None else leaf_budget, sorted_sweep=sweep,
        )

    assert histogram_pool(training, params(True), n_rows) is None
    pool = histogram_pool(training, params(False), n_rows)
    assert pool.shape[1:] == (n_features, binner.n_bins_.max(), _criteria.n_hist_columns(criterion))
    grow_tree(training, weights[::-1].copy(), params(False), seed(9), histograms=pool)  # leaves sums behind
    trees = []
    for sweep, histograms in ((True, None), (False, None), (False, pool), (False, pool[:4])):
        row_leaf = np.full(n_rows, -1, dtype=np.int64)
        trees.append(grow_tree(training, weights, params(sweep), seed(4), row_leaf=row_leaf, histograms=histograms))
        np.testing.assert_array_equal(row_leaf, trees[-1].apply(X))  # the builder's leaf of every row
    assert trees[0].n_leaves == (leaf_budget or trees[0].n_leaves) and trees[0].n_leaves > 30
    for tree in trees[1:]:
        np.testing.assert_array_equal(tree.nodes, trees[0].nodes)
        np.testing.assert_array_equal(tree.values, trees[0].values)


def test_binned_equals_exact_when_features_have_few_values():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 200, size=(2000, 5)).astype(float) / 7.0  # < 255 distinct values per feature
    y = (X[:, 0] + X[:, 1] > 28).astype(float) + (X[:, 2] > 20)
    trees = []
    for max_bins in (255, None):
        training, binner = training_set(X, y, max_bins=max_bins)
        trees.append(grow_tree(training, np.ones(2000), TreeParams(_criteria.ENTROPY, 3, max_features=2), seed(2)))
    np.testing.assert_array_equal(trees[0].nodes, trees[1].nodes)
    np.testing.assert_array_equal(trees[0].predict(X), trees[1].predict(X))


def test_exact_mode_uses_wider_bins_when_needed():
    X = np.arange(1000.0)[:, None]
    binner = BinMapper(max_bins=None).fit(X)
    assert binner.n_bins_[0] == 1000 and binner.bin_dtype_ == np.uint16
    np.testing.assert_array_equal(binner.transform(X)[:, 0], np.arange(1000))
    y = (np.arange(1000) % 7 == 0).astype(float)
    training, _ = training_set(X, y, max_bins=None)
    tree = grow_tree(training, np.ones(1000), TreeParams(_criteria.ENTROPY, 2, max_features=1), seed())
    np.testing.assert_array_equal(tree.predict(X), y)  # fully grown: every row separated


def test_bin_mapper_cuts_and_representatives():
    X = np.array([[0.0, 5.0], [1.0, 5.0], [1.0, 5.0], [4.0, 5.0]])
    binner = BinMapper().fit(X)
    np.testing.assert_array_equal(binner.thresholds_[0], [0.5, 2.5])
    np.testing.assert_array_equal(binner.bin_values_[0], [0.0, 1.0, 4.0])
    assert binner.n_bins_[1] == 1  # constant feature: one bin, no cut
    np.testing.assert_array_equal(binner.transform(np.array([[-1.0, 0], [0.5, 0], [0.6, 9], [9, 9]])), [[0, 0], [0, 0], [1, 0], [2, 0]])
    # Midpoints that would round up to the larger value fall back to the smaller one.
    tight = np.array([[1.0], [np.nextafter(1.0, 2.0)]])
    assert BinMapper().fit(tight).transform(tight)[:, 0].tolist() == [0, 1]
    many = np.random.default_rng(0).random((5000, 1))
    quantiles = BinMapper(max_bins=16).fit(many)
    assert quantiles.n_bins_[0] == 16
    counts = np.bincount(quantiles.transform(many)[:, 0])
    assert counts.min() > 250 and counts.max() < 380  # about 5000 / 16 each


def test_quantile_cuts_without_frequent_values_are_numpy_lower_quantiles():
    values = np.random.default_rng(4).normal(size=3001)  # all distinct
    binner = BinMapper(max_bins=20).fit(values[:, None])
    # Bin j closes at numpy's "lower" j/20-quantile; the cut lies midway to the next value.
    closing = np.quantile(values, np.arange(1, 20) / 20, method="lower")
    ordered = np.sort(values)
    following = ordered[np.searchsorted(ordered, closing, side="right")]
    np.testing.assert_allclose(binner.thresholds_[0], (closing + following) / 2, rtol=0, atol=0)


def test_a_frequent_value_gets_a_bin_of_its_own_and_the_rest_share_the_others():
    rng = np.random.default_rng(5)
    column = np.where(rng.random(10_000) < 0.7, 0.0, rng.random(10_000) + 0.5)  # 70% zeros, as in LETOR
    binner = BinMapper(max_bins=16).fit(column[:, None])
    bins = binner.transform(column[:, None])[:, 0]
    assert binner.n_bins_[0] == 16
    assert set(bins[column == 0.0]) == {0} and np.all(bins[column != 0.0] > 0)
    counts = np.bincount(bins)[1:]  # ~3,000 non-zeros over the 15 other bins
    assert counts.min() > 0.8 * 3000 / 15 and counts.max() < 1.2 * 3000 / 15
    assert binner.bin_values_[0][0] == 0.0  # a one-value bin is represented by its value


def test_runs_between_frequent_values_get_bins_of_equal_counts():
    rng = np.random.default_rng(6)
    column = np.concatenate((rng.random(6000), np.full(2000, 0.25), np.full(2000, 0.75)))
    binner = BinMapper(max_bins=16).fit(column[:, None])
    bins = binner.transform(column[:, None])[:, 0]
    frequent = {bins[6000], bins[8000]}
    light = np.bincount(bins[~np.isin(bins, list(frequent))])
    light = light[light > 0]
    # 2 bins for the frequent values, 14 for the 6,000 others (4 + 6 + 4 over the three runs).
    assert binner.n_bins_[0] == 16 and len(light) == 14
    assert light.min() > 0.8 * 6000 / 14 and light.max() < 1.2 * 6000 / 14


@given(st.lists(st.integers(1, 60), min_size=2, max_size=400), st.integers(2, 40))
def test_frequency_cuts_respect_the_bin_budget(counts, max_bins):
    column = np.repeat(np.arange(len(counts), dtype=float), counts)
    binner = BinMapper(max_bins=max_bins).fit(column[:, None])
    cuts = binner.thresholds_[0]
    bins = binner.transform(column[:, None])[:, 0]
    assert binner.n_bins_[0] <= max_bins and np.all(np.diff(cuts) > 0)
    np.testing.assert_array_equal(np.unique(bins), np.arange(binner.n_bins_[0]))  # no empty bin
    assert np.all(cuts != np.round(cuts))  # every cut lies between two values, never on one
    heavy = np.flatnonzero(np.array(counts) * max_bins >= len(column))
    if len(counts) > max_bins and len(heavy) <= (max_bins - 1) // 2:
        for value in heavy:  # alone in its bin
            assert np.sum(bins == bins[np.searchsorted(column, value)]) == counts[value]


def test_threaded_binning_equals_serial_binning():
    X = np.random.default_rng(3).normal(size=(20_000, 4))  # enough rows for several row ranges
    X[:, 1] = np.round(X[:, 1], 1)  # few distinct values: midpoint cuts
    serial, threaded = BinMapper(max_bins=64, n_jobs=1).fit(X), BinMapper(max_bins=64, n_jobs=2).fit(X)
    for a, b in zip(serial.thresholds_ + serial.bin_values_, threaded.thresholds_ + threaded.bin_values_):
        np.testing.assert_array_equal(a, b)
    binned = threaded.transform(X)
    np.testing.assert_array_equal(serial.transform(X), binned)
    cuts = serial.thresholds_[0]
    np.testing.assert_array_equal(binned[:, 0], np.searchsorted(cuts, X[:, 0], side="left"))  # = #{cuts < x}


def test_newton_criterion_gain_and_boostings_leaf_values():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 3))
    gradients = np.where(X[:, 0] > 0.2, -1.0, 1.0) + 0.1 * rng.normal(size=500)
    hessians = rng.uniform(0.5, 1.0, size=500)
    l2 = 2.0
    training, _ = training_set(X, np.column_stack([gradients, hessians]), leaf_targets=np.zeros(0))
    params = TreeParams(_criteria.NEWTON, 0, max_features=3, l2_regularization=l2, max_depth=1)
    row_leaf = np.full(500, -1, dtype=np.int64)
    tree = grow_tree(training, np.ones(500), params, seed(), row_leaf=row_leaf)
    assert tree.nodes["feature"][0] == 0
    np.testing.assert_array_equal(tree.values, 0.0)  # no leaf targets: boosting computes the values
    values = newton_node_values(tree.nodes, row_leaf, gradients, hessians, l2)
    leaves = tree.apply(X)
    np.testing.assert_array_equal(leaves, row_leaf)
    for node in range(tree.node_count):
        rows = leaves == node if tree.nodes["feature"][node] < 0 else np.ones(500, dtype=bool)
        assert values[node] == pytest.approx(-gradients[rows].sum() / (hessians[rows].sum() + l2))
    G, H = gradients.sum(), hessians.sum()
    left = leaves == tree.nodes["left"][0]
    GL, HL = gradients[left].sum(), hessians[left].sum()
    expected = 0.5 * (GL**2 / (HL + l2) + (G - GL) ** 2 / (H - HL + l2) - G**2 / (H + l2))
    assert tree.feature_gains[0] == pytest.approx(expected)
    heavy = grow_tree(training, np.ones(500), TreeParams(_criteria.NEWTON, 0, max_features=3, min_child_weight=1e6), seed())
    assert heavy.node_count == 1  # no child can reach the hessian minimum


@pytest.mark.parametrize("expansion", list(_frontier.EXPANSIONS))
def test_every_expansion_order_respects_the_leaf_budget(expansion):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(800, 4))
    y = (X[:, 0] > 0).astype(float) + (X[:, 1] > 0.5)
    training, _ = training_set(X, y)
    params = TreeParams(_criteria.ENTROPY, 3, max_features=4, expansion=_frontier.EXPANSIONS[expansion], max_leaf_nodes=7)
    tree = grow_tree(training, np.ones(800), params, seed())
    assert tree.n_leaves == 7


def test_expansion_orders_pick_the_documented_node():
    # Root split separates 600 low-relevance rows (left) from 200 high-relevance rows.
    rng = np.random.default_rng(5)
    X = np.column_stack([np.r_[np.zeros(600), np.ones(200)], rng.normal(size=800)])
    y = np.r_[(rng.random(600) < 0.2).astype(float), 1.0 + (rng.random(200) < 0.5)]
    training, _ = training_set(X, y)

    def second_split_parent(expansion):
        params = TreeParams(_criteria.ENTROPY, 3, max_features=2, expansion=_frontier.EXPANSIONS[expansion], max_leaf_nodes=3)
        tree = grow_tree(training, np.ones(800), params, seed())
        internal = np.flatnonzero(tree.nodes["feature"] >= 0)
        return tree.n_node_samples[internal[1]], tree.values[internal[1]]

    assert second_split_parent("biggest")[0] == 600
    assert second_split_parent("relevant")[1] > 1.0
    assert second_split_parent("breadth")[0] == 600  # the left child is older


def test_breadth_first_finishes_a_level_before_the_next_and_depth_first_dives():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(2000, 5))
    y = (rng.random(2000) < 0.3).astype(float)
    training, _ = training_set(X, y)

    def grow(expansion):
        params = TreeParams(_criteria.GINI, 2, max_features=5, expansion=_frontier.EXPANSIONS[expansion], max_leaf_nodes=40)
        return grow_tree(training, np.ones(2000), params, seed())

    # Children are numbered when their parent is split, so split order shows in the depths.
    assert np.all(np.diff(grow("breadth").node_depths()) >= 0)
    depth_first = grow("depth").node_depths()
    assert np.any(np.diff(depth_first) < 0)
    assert depth_first[:6].tolist() == [0, 1, 1, 2, 2, 3]  # keeps descending into the left child


def test_depth_and_leaf_size_limits():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(1000, 4))
    y = rng.integers(0, 3, 1000).astype(float)
    training, _ = training_set(X, y)
    shallow = grow_tree(training, np.ones(1000), TreeParams(_criteria.ENTROPY, 3, max_features=4, max_depth=3), seed())
    assert shallow.max_depth == 3
    leafy = grow_tree(training, np.ones(1000), TreeParams(_criteria.ENTROPY, 3, max_features=4, min_samples_leaf=25), seed())
    assert leafy.n_node_samples[leafy.nodes["feature"] < 0].min() >= 25
    split = grow_tree(training, np.ones(1000), TreeParams(_criteria.ENTROPY, 3, max_features=4, min_samples_split=100), seed())
    internal = split.nodes["feature"] >= 0
    assert split.n_node_samples[internal].min() >= 100


def test_random_splits_stay_inside_the_node_range_and_separate_it():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(float)
    training, _ = training_set(X, y)
    tree = grow_tree(training, np.ones(400), TreeParams(_criteria.RANDOM, 2, max_features=3), seed())
    np.testing.assert_array_equal(tree.predict(X), y)  # grown until pure
    leaves = tree.apply(X)
    assert len(np.unique(leaves)) == tree.n_leaves  # every leaf holds training rows: cuts inside the range


def test_leaf_value_is_the_weighted_mean_of_leaf_targets():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(600, 3))
    y = rng.integers(0, 3, 600).astype(float)
    weights = rng.integers(1, 4, 600).astype(float)
    training, _ = training_set(X, y, leaf_targets=2.0**y)
    tree = grow_tree(training, weights, TreeParams(_criteria.ENTROPY, 3, max_features=3, min_samples_leaf=40), seed())
    leaves = tree.apply(X)
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        assert tree.values[leaf] == pytest.approx(np.average(2.0 ** y[rows], weights=weights[rows]))
        assert tree.weighted_n_node_samples[leaf] == weights[rows].sum()


def test_compiled_and_interpreted_builders_agree(tmp_path):
    """NUMBA_DISABLE_JIT=1 runs the same builder as Python; its tree must be identical."""
    code = """
import json, numpy as np
from forestrank._binning import BinMapper
from forestrank._tree import _criteria, _rng
from forestrank._tree._grow import TrainingSet, TreeParams, grow_tree
rng = np.random.default_rng(0)
X = rng.normal(size=(120, 3)); y = (X[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(float)
b = BinMapper().fit(X); t, v = b.padded_tables()
data = TrainingSet(b.transform(X), b.n_bins_, t, v, y[:, None], y)
out = {}
newton = TrainingSet(b.transform(X), b.n_bins_, t, v, np.column_stack([0.5 - y, 1 + X[:, 1] ** 2]), y)
for name, criterion, features, training in (
    ("entropy", _criteria.ENTROPY, 2, data), ("variance", _criteria.VARIANCE, 2, data), ("pooled newton", _criteria.NEWTON, 3, newton),
):
    params = TreeParams(criterion, 2, max_features=features, expansion=2, max_leaf_nodes=8, min_samples_leaf=3)
    tree = grow_tree(training, np.ones(120), params, _rng.new_state(np.random.SeedSequence(3)))
    out[name] = [tree.nodes["feature"].tolist(), tree.nodes["threshold"].tolist(), tree.values.tolist()]
print(json.dumps(out))
"""
    environment = dict(os.environ)
    results = []
    for disable in ("0", "1"):
        environment["NUMBA_DISABLE_JIT"] = disable
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=True)
        results.append(json.loads(run.stdout))
    for name in results[0]:
        for compiled, interpreted in zip(results[0][name], results[1][name]):
            np.testing.assert_allclose(compiled, interpreted, rtol=1e-12)
