"""Paired significance tests over per-query metric values."""

import warnings

import numpy as np
import pytest
import scipy.stats

from forestrank import paired_test
from forestrank.stats import paired_tests_of_scored_queries


def test_paired_test_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.random(50), rng.random(50)
    t = paired_test(a, b)
    assert t.pvalue == pytest.approx(scipy.stats.ttest_rel(a, b).pvalue)
    assert t.mean_difference == pytest.approx((a - b).mean()) and t.n_queries == 50
    assert paired_test(a, b, test="wilcoxon").pvalue == pytest.approx(scipy.stats.wilcoxon(a, b).pvalue)


@pytest.mark.parametrize(
    "a, b, test, match",
    [([0.1, 0.2], [0.1], "t", "same queries"), ([0.1, np.nan], [0.1, 0.2], "t", "per_query_a"),
     ([0.1, 0.2], [0.1, 0.3], "sign", "test"), ([[0.1, 0.2]], [[0.1, 0.3]], "t", "1-D"),
     # numpy's "could not convert string to float" named neither argument
     (["x", "y"], [0.1, 0.2], "t", "per_query_a must be numbers, one metric value per query"),
     ([0.1, 0.2], [0.1, "n/a"], "t", "per_query_b must be numbers, one metric value per query")],
)  # fmt: skip
def test_paired_test_rejects_bad_input(a, b, test, match):
    with pytest.raises(ValueError, match=match):
        paired_test(a, b, test=test)


@pytest.mark.parametrize("n_queries", [3, 10, 25, 60])
@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_identical_systems_have_undefined_tests_for_any_number_of_queries(n_queries, test):
    """No pair differs: both tests are undefined (NaN, no warning). scipy's exact Wilcoxon,
    which it uses for few pairs, answered p = 1 below about 20 queries and NaN above."""
    values = np.linspace(0.1, 0.9, n_queries)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = paired_test(values, values.copy(), test=test)
    assert np.isnan(result.statistic) and np.isnan(result.pvalue)
    assert result.mean_difference == 0.0 and result.n_queries == n_queries


@pytest.mark.parametrize(
    "a, b, match",
    [([[0.1, 0.2], [0.3, 0.4]], [[0.2, 0.1], [0.5, 0.3]], r"per_query_a must be one value per query \(1-D\), got shape \(2, 2\)"),
     ([0.1, 0.2, 0.3], [0.1, 0.2], "per_query_a and per_query_b must cover the same queries: 3 vs 2 values")],
)  # fmt: skip
def test_paired_tests_of_scored_queries_check_shapes_before_dropping_nan(a, b, match):
    """Dropping the NaN pairs with a mask flattened 2-D values into one list of queries (a
    test over 4 "queries") and met lengths that differ with numpy's broadcasting error."""
    with pytest.raises(ValueError, match=match):
        paired_tests_of_scored_queries(a, b)
