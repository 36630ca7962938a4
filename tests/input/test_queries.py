"""forestrank._input.queries: grouping rows by query id."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from forestrank import MissingQidWarning
from forestrank._input.queries import boundaries_of_grouped, check_qid, group_queries


@given(qid=hnp.arrays(np.int64, st.integers(1, 60), elements=st.integers(-3, 6)))
def test_grouping_is_a_stable_sort_and_ungroup_inverts_it(qid):
    groups = group_queries(qid, len(qid), caller="test")
    rows = np.arange(len(qid))
    grouped_rows = groups.group(rows)
    np.testing.assert_array_equal(groups.query_ids, np.unique(qid))
    for position, query in enumerate(groups.query_ids):
        block = grouped_rows[groups.query_boundaries[position] : groups.query_boundaries[position + 1]]
        np.testing.assert_array_equal(block, np.flatnonzero(qid == query))  # contiguous, input order kept
    np.testing.assert_array_equal(groups.ungroup(grouped_rows), rows)
    np.testing.assert_array_equal(groups.query_ids[groups.query_index()], qid)
    assert groups.query_sizes().sum() == len(qid) == groups.n_samples


def test_already_grouped_increasing_ids_need_no_reordering():
    groups = group_queries(np.array([3, 3, 5, 9, 9, 9]), 6, caller="test")
    assert groups.order is None
    np.testing.assert_array_equal(groups.query_boundaries, [0, 2, 3, 6])
    values = np.arange(6.0)
    assert groups.group(values) is values and groups.ungroup(values) is values


def test_contiguous_but_decreasing_ids_are_reordered_by_id():
    groups = group_queries(np.array([9, 9, 3]), 3, caller="test")
    np.testing.assert_array_equal(groups.query_ids, [3, 9])
    np.testing.assert_array_equal(groups.order, [2, 0, 1])


@pytest.mark.parametrize(
    "qid",
    [
        np.array(["b", "a", "b"]),
        np.array(["b", "a", "b"], dtype=object),
        pd.Series(["b", "a", "b"]),
        pd.Series(pd.Categorical(["b", "a", "b"])),
        [b"b", b"a", b"b"],
    ],
)
def test_string_like_query_ids(qid):
    groups = group_queries(qid, 3, caller="test")
    np.testing.assert_array_equal(groups.order, [1, 0, 2])
    np.testing.assert_array_equal(groups.query_boundaries, [0, 1, 3])


def test_missing_qid_is_one_query_with_a_warning_naming_the_caller():
    with pytest.warns(MissingQidWarning, match="SomeRanker.fit got no qid: all 4 rows are treated as ONE query"):
        groups = group_queries(None, 4, caller="SomeRanker.fit")
    np.testing.assert_array_equal(groups.query_boundaries, [0, 4])


@pytest.mark.parametrize(
    ("qid", "error", "match"),
    [
        (np.zeros((3, 1)), ValueError, r"qid must be a 1-D array"),
        (np.zeros(2), ValueError, r"qid has 2 entries but X has 3 rows"),
        (np.array([1.0, np.nan, 1.0]), ValueError, "qid contains NaN"),
        (np.array([1, "a", 2.5], dtype=object), TypeError, "mutually comparable"),
        (np.array([1, np.nan, 2], dtype=object), ValueError, r"qid contains a missing value \(nan at row 1\)"),
        (np.array(["a", "b", None], dtype=object), ValueError, r"qid contains a missing value \(None at row 2\)"),
        (pd.Series([1, 2, pd.NA], dtype=object), ValueError, r"qid contains a missing value \(<NA> at row 2\)"),
        ([1, "a", 2], TypeError, "mixes strings with other types"),
        # as floats 2**60 and 2**60 + 1 are one id: two queries merged without a word
        ([2**60, 2**60 + 1, 0.5], TypeError, r"mixes floats with integers that no float holds exactly \(such as 1152921504606846977\)"),
        ([np.int64(2**60), np.int64(2**60 + 1), 0.5], TypeError, "mixes floats with integers that no float holds"),
        (pd.to_datetime(["2020-01-01", None, "2020-01-01"]), ValueError, r"qid contains NaT \(a missing value, at row 1\)"),
        (np.array(["NaT", "1", "1"], dtype="timedelta64[s]"), ValueError, r"qid contains NaT \(a missing value, at row 0\)"),
        (np.array([1, 1j * np.nan, 1]), ValueError, "qid contains NaN"),
    ],
)
def test_bad_query_ids(qid, error, match):
    with pytest.raises(error, match=match):
        group_queries(qid, 3, caller="test")


def test_integers_a_float_holds_mix_with_floats():
    """Small integers, bools and integral floats beside floats keep their ids as floats."""
    np.testing.assert_array_equal(check_qid([1, 2.5, True, 2**53], 4), [1.0, 2.5, 1.0, 2.0**53])


def test_missing_qid_warnings_point_at_the_callers_line():
    from forestrank import DummyRanker, ndcg_score

    with pytest.warns(MissingQidWarning) as metric_record:
        ndcg_score([1, 0], [0.3, 0.1], None)
    with pytest.warns(MissingQidWarning) as fit_record:
        DummyRanker().fit(np.eye(3), [1, 0, 0])
    assert metric_record[0].filename == fit_record[0].filename == __file__


def test_boundaries_of_grouped_rows_skip_absent_queries():
    np.testing.assert_array_equal(boundaries_of_grouped(np.array([0, 0, 2, 2, 2, 5])), [0, 2, 5, 6])
    assert boundaries_of_grouped(np.array([3, 3])).dtype == np.int64


def test_a_nan_among_object_query_ids_is_refused_not_made_a_query_of_its_own():
    """An object qid with a NaN was accepted, and after shuffling the NaN rows formed
    queries of their own (np.unique does not merge NaNs of an object array)."""
    from forestrank import make_ranking, ndcg_score

    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    qid = q.astype(object)
    qid[5] = np.nan
    order = np.random.default_rng(0).permutation(len(y))
    with pytest.raises(ValueError, match="qid contains a missing value"):
        ndcg_score(y[order], X[order, 0], qid[order], per_query=True)
