"""Ordered target statistics (``_input/target_statistics.py``): each training row's value
from the rows before it in its feature's random order, found by walking that order; the
tables of later rows; what a saved model's tables must be."""

import numpy as np
import pytest

from forestrank._input.target_statistics import check_tables, ordered_target_statistics, target_statistics_columns


def _data(seed=0, n=80):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 6, n), rng.normal(size=n), rng.integers(0, 3, n) * 7]).astype(float)
    X[::9, 0] = np.nan
    return X, rng.integers(0, 5, n).astype(float), rng.uniform(0.5, 2.0, n)


def test_each_row_sees_only_the_rows_before_it_in_its_features_order():
    """A walk over each feature's order (drawn from a twin generator), adding each row to its
    category's sums after reading them, gives every training row's statistic."""
    X, y, weight = _data()
    mask = np.array([True, False, True])
    columns, tables = ordered_target_statistics(X, mask, y, weight, 2.0, np.random.default_rng(7))
    twin = np.random.default_rng(7)
    prior = np.sum(weight * y) / np.sum(weight)
    for column, feature in enumerate((0, 2)):
        sums, weights, expected = {}, {}, np.full(len(y), np.nan)
        for row in np.argsort(twin.permutation(len(y))):  # rows by their place in the order
            code = X[row, feature]
            if np.isnan(code):
                continue
            expected[row] = (sums.get(code, 0.0) + 2.0 * prior) / (weights.get(code, 0.0) + 2.0)
            sums[code] = sums.get(code, 0.0) + weight[row] * y[row]
            weights[code] = weights.get(code, 0.0) + weight[row]
        np.testing.assert_allclose(columns[:, column], expected, rtol=1e-12)
        codes, values, table_prior = tables[column]
        np.testing.assert_array_equal(codes, sorted(sums))
        np.testing.assert_allclose(values, [(sums[c] + 2.0 * prior) / (weights[c] + 2.0) for c in codes], rtol=1e-12)
        assert table_prior == pytest.approx(prior, rel=1e-12)


def test_later_rows_read_the_tables_unseen_codes_the_prior_and_missing_ones_nan():
    X, y, weight = _data(1)
    mask = np.array([True, False, True])
    _, tables = ordered_target_statistics(X, mask, y, weight, 1.0, np.random.default_rng(0))
    rows = np.array([[2.0, 0.0, 14.0], [4.5, 0.0, 3.0], [np.nan, 0.0, -1.0], [99.0, 5.0, 0.0]])
    columns = target_statistics_columns(rows, mask, tables)
    codes, values, prior = tables[0]
    assert columns[0, 0] == values[list(codes).index(2.0)]
    assert columns[1, 0] == prior and columns[3, 0] == prior  # a code between the seen ones, one past them
    assert np.isnan(columns[2, 0]) and np.isnan(columns[2, 1])  # NaN and a negative code are missing
    assert columns[1, 1] == tables[1][2]


@pytest.mark.parametrize(
    "tables",
    [
        [],
        [(np.array([1.0, 0.0]), np.array([0.5, 0.5]), 0.5)],
        [(np.array([0.0, 1.0]), np.array([0.5]), 0.5)],
        [(np.array([0.0, 1.0]), np.array([0.5, np.inf]), 0.5)],
        [(np.array([0.0]), np.array([0.5]), float("nan"))],
        [[np.array([0.0]), np.array([0.5]), 0.5]],
    ],
)
def test_tables_that_no_fit_writes_are_refused(tables):
    with pytest.raises(ValueError, match="not a model forestrank saved"):
        check_tables(tables, 1)
