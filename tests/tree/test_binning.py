"""Feature binning: cuts, representatives, the exact mode, threads."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from forestrank._tree._binning import _PARALLEL_SORT_ROWS, QUANTILE_SUBSAMPLE, BinMapper
from forestrank._tree import _criteria
from forestrank._tree._grow import TreeParams, grow_tree

from .helpers import seed, training_set



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


def test_columns_sorted_in_threads_give_the_cuts_of_one_thread():
    """From ``_PARALLEL_SORT_ROWS`` rows the columns' cuts come from threads, below it
    from the calling thread: the tables are the same either way."""
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(_PARALLEL_SORT_ROWS + 1, 6)), 2)
    X[::9, 2] = np.nan
    for rows in (X, X[:100]):
        one, two = (BinMapper(max_bins=64, n_jobs=n_jobs).fit(rows) for n_jobs in (1, 2))
        for a, b in zip(one.padded_tables(), two.padded_tables()):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(one.transform(rows), two.transform(rows))


@pytest.mark.slow  # uint16 bins: a builder of their own
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


def _searched_bins(binner, X):
    """The bins by ``np.searchsorted`` of each value among its feature's cuts (``#{cuts < x}``),
    the missing bin for a NaN: the definition of what ``transform`` computes."""
    bins = np.empty(X.shape, dtype=np.int64)
    for feature, cuts in enumerate(binner.thresholds_):
        column = X[:, feature].astype(np.float64)
        bins[:, feature] = np.searchsorted(cuts, column, side="left")
        bins[np.isnan(column), feature] = max(binner.missing_bins_[feature], 0)
    return bins


@given(seed=st.integers(0, 2**32 - 1), max_bins=st.sampled_from([2, 3, 16, 255, None]), single=st.booleans())
def test_transform_counts_the_cuts_below_each_value(seed, max_bins, single):
    rng = np.random.default_rng(seed)
    n_rows = int(rng.integers(1, 700))  # several row blocks, and a last one cut short
    largest = float(np.finfo(np.float32 if single else np.float64).max)
    X = np.column_stack([
        rng.normal(size=n_rows), rng.integers(-3, 4, size=n_rows) * 0.5, np.full(n_rows, 2.5),
        rng.uniform(-1, 1, size=n_rows) * largest,  # cut - value overflows to an infinity of the right sign
    ])  # fmt: skip
    X[rng.random(X.shape) < 0.1] = np.nan
    binner = BinMapper(max_bins, random_state=0).fit(X)
    # The values searched: the fitted ones, every cut itself, its neighbours, both zeros,
    # the largest finite values, both infinities and NaN.
    probes = np.concatenate([c for cuts in binner.thresholds_ for c in (cuts, np.nextafter(cuts, -np.inf), np.nextafter(cuts, np.inf))])
    probes = np.concatenate([probes, [0.0, -0.0, np.inf, -np.inf, np.nan, largest, -largest]])
    searched = np.vstack([X, np.repeat(probes[:, None], X.shape[1], axis=1)])
    if single:
        searched = searched.astype(np.float32)  # as float32 features are binned (no copy to float64)
    np.testing.assert_array_equal(binner.transform(searched), _searched_bins(binner, searched))


def test_a_cut_of_negative_zero_compares_as_zero():
    """A cut of -0.0 counts below no value that compares equal to it (+0.0 included)."""
    binner = BinMapper(255).fit(np.array([[-1.0], [1.0]]))
    binner.thresholds_ = [np.array([-1.0, -0.0, 1.0])]
    binner.bin_values_ = [np.array([-2.0, -0.5, 0.5, 2.0])]
    binner.n_value_bins_ = binner.n_bins_ = np.array([4], dtype=np.int32)
    values = np.array([[-0.0], [0.0], [-1e-300], [1e-300], [5e-324]])
    np.testing.assert_array_equal(binner.transform(values)[:, 0], [1, 1, 1, 2, 2])  # = #{cuts < x}


def test_missing_values_get_the_last_bin_and_leave_the_cuts_of_the_present_values():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    X[:, 1] = rng.integers(0, 5, size=3000)
    with_missing = X.copy()
    missing = rng.random(X.shape) < 0.3
    missing[:, 2] = False
    with_missing[missing] = np.nan
    complete = BinMapper(255).fit(X[~missing.any(axis=1)])
    binner = BinMapper(255).fit(with_missing)
    np.testing.assert_array_equal(binner.missing_bins_, [binner.n_bins_[0] - 1, binner.n_bins_[1] - 1, -1])
    np.testing.assert_array_equal(binner.n_bins_, binner.n_value_bins_ + [1, 1, 0])
    # The cuts come from the present values alone: those of a feature with few values
    # are its midpoints whatever is missing.
    np.testing.assert_array_equal(binner.thresholds_[1], complete.thresholds_[1])
    binned = binner.transform(with_missing)
    for feature in (0, 1):
        assert (binned[missing[:, feature], feature] == binner.missing_bins_[feature]).all()
        assert (binned[~missing[:, feature], feature] < binner.n_value_bins_[feature]).all()
    np.testing.assert_array_equal(binned[:, 2], binner.transform(X)[:, 2])


def test_a_missing_value_outside_the_quantile_subsample_still_gets_the_missing_bin():
    X = np.arange(QUANTILE_SUBSAMPLE + 1, dtype=float)[:, None]
    X[QUANTILE_SUBSAMPLE // 2] = np.nan  # one row: the sub-sample misses it at this seed or another
    for random_state in range(3):
        binner = BinMapper(255, random_state=random_state).fit(X)
        assert binner.missing_bins_[0] == binner.n_bins_[0] - 1
        assert binner.transform(X)[QUANTILE_SUBSAMPLE // 2, 0] == binner.missing_bins_[0]


def test_a_feature_missing_everywhere_has_an_empty_value_bin_and_the_missing_bin():
    X = np.column_stack([np.full(10, np.nan), np.arange(10.0)])
    binner = BinMapper(255).fit(X)
    np.testing.assert_array_equal(binner.n_bins_, [2, 10])
    assert (binner.transform(X)[:, 0] == 1).all()
