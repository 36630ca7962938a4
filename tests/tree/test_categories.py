"""Categorical splits in the engine: the best set of categories equals the best of all
subsets found by brute force (Fisher's and Breiman's orders), the one-vs-rest path the best
single category, the regularised scan LightGBM's split, and the binning of categorical
columns."""

import itertools

import numpy as np
import pytest

from forestrank._tree import _criteria, _rows
from forestrank._tree._binning import BinMapper
from forestrank._tree._grow import TrainingSet, TreeParams, binned_features, grow_tree, histogram_pool


def _stump(codes, targets, weights, criterion, n_classes=0, **params):
    """A depth-one tree on one categorical feature (codes, NaN missing)."""
    X = codes[:, None].astype(float)
    binned = binned_features(X, 255, 0, 1, categorical=np.array([True]))
    leaf_targets = np.zeros(0) if criterion == _criteria.NEWTON else targets[:, 0].astype(float)
    data = TrainingSet(**binned, targets=targets, leaf_targets=leaf_targets)
    tree_params = TreeParams(criterion=criterion, n_classes=n_classes, max_features=1, max_depth=1, **params)
    pool = histogram_pool(data, tree_params, len(codes)) if criterion == _criteria.NEWTON else None
    tree = grow_tree(data, weights, tree_params, np.array([1, 2], dtype=np.uint64), histograms=pool)
    assert tree.node_count == 3, "the stump did not split"
    return tree, tree.apply(X) == tree.nodes["left"][0]


def _partition_gains(codes, cost):
    """{left set: cost decrease} over every partition of the categories present (NaN as -1)."""
    labels = np.where(np.isnan(codes), -1, codes).astype(int)
    categories = sorted(set(labels))
    parent = cost(np.ones(len(labels), dtype=bool))
    gains = {}
    for size in range(1, len(categories)):
        for subset in itertools.combinations(categories, size):
            left = np.isin(labels, subset)
            gains[subset] = parent - cost(left) - cost(~left)
    return labels, gains


def _newton_cost(g, h):
    return lambda rows: -g[rows].sum() ** 2 / h[rows].sum()


def _sse(y, w):
    def cost(rows):
        mean = np.average(y[rows], weights=w[rows])
        return float((w[rows] * (y[rows] - mean) ** 2).sum())

    return cost


def _gini(c, w):
    def cost(rows):
        total = w[rows].sum()
        shares = np.array([w[rows][c[rows] == k].sum() for k in (0, 1)]) / total
        return float(total * (1.0 - (shares**2).sum()))

    return cost


def _data(seed, n=240, n_categories=6, missing=True):
    rng = np.random.default_rng(seed)
    codes = rng.choice(np.arange(0, 3 * n_categories, 3), n).astype(float)  # codes with gaps
    if missing:
        codes[rng.random(n) < 0.1] = np.nan
    effect = dict(zip(np.unique(codes[~np.isnan(codes)]), rng.normal(size=n_categories)))
    signal = np.array([0.4 if np.isnan(c) else effect[c] for c in codes])
    return rng, codes, signal


@pytest.mark.parametrize("seed", range(4))
def test_newton_split_is_the_best_subset(seed):
    """Gradients with hessians of varying size: the stump's left set scores the largest
    ``G_L^2/H_L + G_R^2/H_R`` over all 2^(m-1) - 1 partitions (the missing rows one more
    category), found by enumeration."""
    rng, codes, signal = _data(seed)
    g = signal + rng.normal(scale=0.3, size=len(codes))
    h = rng.uniform(0.2, 2.0, size=len(codes))
    tree, left = _stump(codes, np.column_stack([g, h]), np.ones(len(codes)), _criteria.NEWTON)
    labels, gains = _partition_gains(codes, _newton_cost(g, h))
    found = tuple(sorted(set(labels[left])))
    best = max(gains.values())
    assert found in gains and gains[found] == pytest.approx(best, rel=1e-10)
    assert np.unique(tree.apply(codes[:, None])).size == 2


def test_a_large_node_partitions_its_categorical_split_alike_on_two_threads():
    """A node of ``_rows.PARALLEL_PARTITION_ROWS_PER_THREAD`` rows or more per thread is
    partitioned on numba's threads: its children hold the rows whose categories the split sends left, as the
    predictor routes them, and the stump is the one-thread stump. (The left set once reached
    the parallel partition as an optional array, which numba's parallel loop read as None:
    the categorical split was cut as a numeric one at its set's size.)"""
    rng, codes, signal = _data(0, n=2 * _rows.PARALLEL_PARTITION_ROWS_PER_THREAD + 5_000, n_categories=40)
    targets = np.column_stack([signal + rng.normal(scale=0.3, size=len(codes)), np.ones(len(codes))])
    stumps = []
    for n_threads in (1, 2):
        tree, left = _stump(codes, targets, np.ones(len(codes)), _criteria.NEWTON, n_threads=n_threads)
        assert tree.n_node_samples[tree.nodes["left"][0]] == left.sum()
        stumps.append(tree)
    for name in ("nodes", "values", "n_node_samples", "missing_left", "category_bits"):
        np.testing.assert_array_equal(getattr(stumps[1], name), getattr(stumps[0], name))


@pytest.mark.parametrize("seed", range(3))
def test_variance_and_gini_splits_are_the_best_subset(seed):
    """The forests' criteria: weighted squared error (Fisher) and two-class Gini
    (Breiman's theorem) reach the best of all subsets by their category orders."""
    rng, codes, signal = _data(seed, missing=seed != 0)
    w = rng.integers(1, 4, size=len(codes)).astype(float)
    y = signal + rng.normal(scale=0.5, size=len(codes))
    _, left = _stump(codes, y[:, None], w, _criteria.VARIANCE)
    labels, gains = _partition_gains(codes, _sse(y, w))
    assert gains[tuple(sorted(set(labels[left])))] == pytest.approx(max(gains.values()), rel=1e-10)
    c = (signal + rng.normal(scale=0.7, size=len(codes)) > 0).astype(float)
    _, left = _stump(codes, c[:, None], w, _criteria.GINI, n_classes=2)
    labels, gains = _partition_gains(codes, _gini(c, w))
    assert gains[tuple(sorted(set(labels[left])))] == pytest.approx(max(gains.values()), rel=1e-10)


def test_one_vs_rest_below_max_cat_to_onehot():
    """With at most ``max_cat_to_onehot`` categories a single category goes left: the best
    single category by brute force, though a pair would score higher."""
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 4, 400).astype(float)
    g = np.array([-1.0, -0.9, 1.0, 1.1])[codes.astype(int)] + rng.normal(scale=0.1, size=400)
    h = np.ones(400)
    tree, left = _stump(codes, np.column_stack([g, h]), h, _criteria.NEWTON, max_cat_to_onehot=4)
    labels, gains = _partition_gains(codes, _newton_cost(g, h))
    singles = {subset: gain for subset, gain in gains.items() if len(subset) == 1}
    found = tuple(sorted(set(labels[left])))
    complement = tuple(sorted(set(labels[~left])))
    assert len(found) == 1 or len(complement) == 1
    assert gains[found] == pytest.approx(max(singles.values()), rel=1e-10)
    assert max(gains.values()) > max(singles.values()) * 1.5
    _, left = _stump(codes, np.column_stack([g, h]), h, _criteria.NEWTON, max_cat_to_onehot=3)
    assert sorted(set(labels[left])) in ([0, 1], [2, 3])


@pytest.mark.parametrize(
    "regularisers",
    [
        dict(cat_smooth=10.0, cat_l2=10.0, max_cat_threshold=32, min_data_per_group=100),  # LightGBM's defaults
        dict(cat_smooth=50.0, cat_l2=0.0, max_cat_threshold=5, min_data_per_group=300),
        dict(cat_smooth=0.0, cat_l2=5.0, max_cat_threshold=3, min_data_per_group=1),
    ],
)
@pytest.mark.parametrize("min_leaf", [1, 60])
@pytest.mark.parametrize("hessian", [1.0, 0.02])
@pytest.mark.parametrize("seed", range(3))
def test_regularised_scan_splits_as_lightgbm(seed, hessian, regularisers, min_leaf):
    """The pooled scan's regularisers (categories under ``cat_smooth`` rows out of the order,
    left sets grown from either end up to ``max_cat_threshold``, ``min_data_per_group``
    rows between cuts and on the right, ``cat_l2`` in the gain) choose the rows LightGBM's
    categorical split sends apart, given the same gradients and a constant hessian (LightGBM
    counts a category's rows by its hessian; small, ``cat_l2`` weighs more) on a stump
    of 40 categories of skewed sizes, with and without a least leaf size (a left child too
    small counts no group of rows)."""
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(seed)
    n_categories, n = 40, 4000
    codes = rng.choice(n_categories, n, p=rng.dirichlet(np.full(n_categories, 0.7))).astype(float)
    g = rng.normal(size=n_categories)[codes.astype(int)] + rng.normal(size=n)
    h = np.full(n, hessian)
    _, left = _stump(
        codes, np.column_stack([g, h]), np.ones(n), _criteria.NEWTON, max_cat_to_onehot=4, min_samples_leaf=min_leaf,
        **regularisers,
    )  # fmt: skip
    params = dict(
        objective=lambda scores, data: (g, h), num_leaves=2, learning_rate=1.0, min_data_in_leaf=min_leaf,
        min_sum_hessian_in_leaf=0.0, lambda_l2=0.0, max_cat_to_onehot=4, boost_from_average=False,
        min_data_in_bin=1, num_threads=1, verbose=-1, **regularisers,
    )  # fmt: skip
    booster = lightgbm.train(params, lightgbm.Dataset(codes[:, None], categorical_feature=[0]), num_boost_round=1)
    lightgbm_left = booster.predict(codes[:, None], pred_leaf=True).ravel() == 0
    assert 0 < left.sum() < n
    assert np.array_equal(left, lightgbm_left) or np.array_equal(left, ~lightgbm_left)


def test_a_left_child_too_small_counts_no_group_of_rows():
    """Ten categories of 60 rows, at least 150 rows a leaf: the cuts after one and two
    categories are too small and, as in LightGBM, do not start a new group of
    ``min_data_per_group`` rows, so the cut after three is a candidate (and the best)."""
    lightgbm = pytest.importorskip("lightgbm")
    codes = np.repeat(np.arange(10), 60).astype(float)
    effects = np.array([-3.0, -2.9, -2.8, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6])
    g = effects[codes.astype(int)] + np.random.default_rng(0).normal(scale=0.01, size=600)
    h = np.ones(600)
    regularisers = dict(cat_smooth=10.0, cat_l2=10.0, max_cat_threshold=32, min_data_per_group=100)
    _, left = _stump(codes, np.column_stack([g, h]), h, _criteria.NEWTON, min_samples_leaf=150, max_cat_to_onehot=4,
                     **regularisers)  # fmt: skip
    assert sorted(set(codes[left])) == [0.0, 1.0, 2.0]
    params = dict(
        objective=lambda scores, data: (g, h), num_leaves=2, learning_rate=1.0, min_data_in_leaf=150,
        min_sum_hessian_in_leaf=0.0, lambda_l2=0.0, max_cat_to_onehot=4, boost_from_average=False, min_data_in_bin=1,
        num_threads=1, verbose=-1, **regularisers,
    )  # fmt: skip
    booster = lightgbm.train(params, lightgbm.Dataset(codes[:, None], categorical_feature=[0]), num_boost_round=1)
    lightgbm_left = booster.predict(codes[:, None], pred_leaf=True).ravel() == 0
    assert np.array_equal(lightgbm_left, left) or np.array_equal(lightgbm_left, ~left)


def test_unseen_and_missing_categories_follow_the_missing_direction():
    """A code the fit never saw, a negative one, one past every bitmap word and NaN reach the
    child that the training rows with a missing value reached."""
    rng, codes, signal = _data(1)
    g = signal + rng.normal(scale=0.3, size=len(codes))
    tree, left = _stump(codes, np.column_stack([g, np.ones(len(codes))]), np.ones(len(codes)), _criteria.NEWTON)
    missing_leaf = tree.apply(np.array([[np.nan]]))[0]
    assert missing_leaf == tree.apply(codes[np.isnan(codes)][:1, None])[0]
    for unseen in (1.0, 2.0, 17.0, -3.0, -0.5, 640.0, 1e9):
        assert tree.apply(np.array([[unseen]]))[0] == missing_leaf
    values = np.array([np.nan, 1.0, 640.0, -0.5, -3.0])
    assert tree.goes_left(np.zeros(5, dtype=np.int64), values).tolist() == [bool(tree.missing_left[0])] * 5


def test_goes_left_reads_a_value_between_minus_one_and_zero_as_the_kernel_does():
    """A value in (-1, 0) is no category (the kernel sends it the missing way); goes_left
    truncated it to code 0, a seen category that goes the other way here."""
    rng, codes, signal = _data(6)
    g = signal + rng.normal(scale=0.3, size=len(codes))
    tree, _ = _stump(codes, np.column_stack([g, np.ones(len(codes))]), np.ones(len(codes)), _criteria.NEWTON)
    node = np.zeros(1, dtype=np.int64)
    assert tree.goes_left(node, np.array([0.0]))[0] != bool(tree.missing_left[0])  # code 0 is a seen category
    for value in (-0.5, -1e-300):
        assert tree.goes_left(node, np.array([value]))[0] == bool(tree.missing_left[0])
        assert tree.apply(np.array([[value]]))[0] == tree.apply(np.array([[np.nan]]))[0]


def test_binning_keeps_the_frequent_categories_and_lumps_the_rest():
    """Up to ``max_bins`` codes get a bin each in code order; beyond, the ``max_bins - 1``
    most frequent (ties to the smaller code) and one "other" bin, then the missing bin."""
    column = np.array([5, 5, 5, 9, 9, 2, 2, 7, 11, np.nan, 5, 9])
    mapper = BinMapper(max_bins=4, categorical=np.array([True])).fit(column[:, None])
    np.testing.assert_array_equal(mapper.category_codes_[0], [2, 5, 9, -1])
    np.testing.assert_array_equal(mapper.other_codes_[0], [7, 11])
    np.testing.assert_array_equal(mapper.transform(column[:, None])[:, 0], [1, 1, 1, 2, 2, 0, 0, 3, 3, 4, 1, 2])
    np.testing.assert_array_equal(mapper.category_bins_[0], [-1, -1, 0, -1, -1, 1, -1, 3, -1, 2, -1, 3])
    np.testing.assert_array_equal(mapper.transform(np.array([[13.0], [4.0], [11.0]]))[:, 0], [4, 4, 3])  # unseen: missing
    exact = BinMapper(max_bins=None, categorical=np.array([True])).fit(column[:, None])
    np.testing.assert_array_equal(exact.category_codes_[0], [2, 5, 7, 9, 11])
