"""Label, score and weight checks: each error names the argument; inputs are copied, never changed."""

import numpy as np
import pytest

from forestrank._input.labels import check_relevance, check_sample_weight, check_scores, normalize_sample_weight, weight_unit


@pytest.mark.parametrize(
    "y, kwargs, match",
    [
        ([[0, 1], [1, 0]], {}, "y_true must be 1-D"),
        (["a", "b"], {}, "y_true must be numeric"),
        ([1, 0], {"n_samples": 3}, "y_true has 2 entries but X has 3 rows"),
        ([], {}, "y_true is empty"),
        ([1, np.nan], {}, "non-finite"),
        ([1, -1], {}, "negative values"),
        ([1, 0.5], {"grades": True}, "integer relevance grades"),
    ],
)
def test_bad_labels_are_refused_by_name(y, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_relevance(y, name="y_true", **kwargs)


def test_labels_come_back_as_a_float64_copy_and_columns_are_flattened():
    y = np.array([[2], [0], [1]], dtype=np.int32)
    checked = check_relevance(y, name="y", n_samples=3, grades=True)
    assert checked.dtype == np.float64 and checked.flags.c_contiguous and checked.shape == (3,)
    checked[0] = 7
    assert y[0, 0] == 2
    readonly = np.array([1.0, 0.5])
    readonly.flags.writeable = False
    assert check_relevance(readonly, name="y").flags.writeable  # a kernel-ready copy


@pytest.mark.parametrize(
    "scores, match",
    [([0.1], "y_score has 1 entries but y_true has 2"), ([0.1, np.nan], "NaN"), ([[0.1, 0.2]], "1-D")],
)
def test_bad_scores_are_refused_by_name(scores, match):
    with pytest.raises(ValueError, match=match):
        check_scores(scores, n_samples=2)


def test_infinite_scores_are_orderable_and_kept():
    np.testing.assert_array_equal(check_scores([np.inf, -np.inf], n_samples=2), [np.inf, -np.inf])


@pytest.mark.parametrize(
    "weights, match",
    [
        ([1.0], "sample_weight has 1 entries but X has 2 rows"),
        ([1.0, np.inf], "non-finite"),
        ([1.0, -1.0], "negative"),
        ([0.0, 0.0], "zero everywhere"),
        ([[1.0], [2.0]], r"sample_weight must be 1-D with one value per row; got shape \(2, 1\)"),
    ],
)
def test_bad_weights_are_refused_by_name(weights, match):
    with pytest.raises(ValueError, match=match):
        check_sample_weight(weights, n_samples=2)


def test_weights_are_rescaled_so_that_the_lightest_weighted_row_weighs_one():
    weights = np.array([0.0, 0.25, 1.0, 0.5])
    np.testing.assert_array_equal(normalize_sample_weight(weights), [0.0, 1.0, 4.0, 2.0])
    integers = np.array([1.0, 3.0, 0.0, 2.0])
    assert normalize_sample_weight(integers) is not integers
    np.testing.assert_array_equal(normalize_sample_weight(integers), integers)
    np.testing.assert_array_equal(normalize_sample_weight(integers * 1e300), integers)


def test_weights_spanning_more_than_two_to_the_hundred_are_rescaled_so_that_the_heaviest_weighs_that():
    """With the lightest as the unit, a ratio of 1e200 made rows of 1e200 units, whose
    squared sums overflowed in the criteria: the models were constant."""
    np.testing.assert_array_equal(normalize_sample_weight(np.array([1.0, 2.0**100, 0.0])), [1.0, 2.0**100, 0.0])
    for lightest in (1e-150, 1e-300, 5e-324):
        rescaled = normalize_sample_weight(np.array([lightest, 1.0, 0.5, 1e300 * lightest]))
        assert rescaled.max() == 2.0**100 and (rescaled[rescaled > 0] > 0).all() and np.isfinite(rescaled.sum())
    assert weight_unit(1e-300, 1e300) == 1e300 / 2.0**100 and weight_unit(1.0, 4.0) == 1.0


@pytest.mark.parametrize(
    "values",
    [np.array([1 + 1j, 0]), [np.complex128(1 + 1j), 0.0], np.array([[1 + 0j], [0]])],
    ids=["array", "list of numpy scalars", "column"],
)
def test_complex_values_are_refused_rather_than_cut_to_their_real_parts(values):
    """numpy casts complex to float64 with a warning only, dropping the imaginary part."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused before any cast: no ComplexWarning
        with pytest.raises(ValueError, match="Complex data not supported: y_true holds complex values"):
            check_relevance(values, name="y_true")
        with pytest.raises(ValueError, match="Complex data not supported: y_score holds complex values"):
            check_scores(values, n_samples=2)
        with pytest.raises(ValueError, match="Complex data not supported: sample_weight holds complex values"):
            check_sample_weight(values, n_samples=2)
