"""The DCG discount table, and the three users that read it agreeing on the same ranking."""

import math
from fractions import Fraction

import numpy as np
import pytest
import sklearn.metrics

from forestrank import err_score, ndcg_score
from forestrank._tree import _listwise
from forestrank._ranking import DISCOUNTS, discount_table, exp_gains, exp_gains_of_grades
from forestrank.objectives import LambdaRank


@pytest.mark.parametrize(
    "discount, power, formula",
    [
        ("log2", 1.0, lambda r: 1 / np.log2(r + 1)),
        ("letor", 1.0, lambda r: 1.0 if r <= 2 else 1 / np.log2(r)),
        ("log_power", 2.0, lambda r: 1 / np.log2(r + 1) ** 2),
        ("rank_power", 0.5, lambda r: 1 / r**0.5),
    ],
)
def test_each_discount_is_its_formula_and_a_cutoff_zeroes_the_tail(discount, power, formula):
    table = discount_table(12, discount, power)
    np.testing.assert_allclose(table, [formula(r) for r in range(1, 13)], rtol=1e-15)
    cut = discount_table(12, discount, power, cutoff=5)
    np.testing.assert_array_equal(cut[:5], table[:5])
    assert not cut[5:].any()
    assert discount_table(0, discount, power).shape == (0,)


def test_an_unknown_discount_is_refused_by_name():
    with pytest.raises(ValueError, match="discount must be one of"):
        discount_table(3, "log10")
    assert set(DISCOUNTS) == {"log2", "letor", "log_power", "rank_power"}


def test_metrics_lambdarank_and_the_listwise_criterion_read_the_same_discounts():
    """NDCG of a tie-free ranking, LambdaRank's ideal DCG and the listwise cumulative
    discounts all follow from one table."""
    labels = np.array([2.0, 0.0, 1.0, 3.0, 0.0, 1.0])
    scores = np.array([0.9, 0.8, 0.1, 0.3, 0.5, 0.2])
    table = discount_table(len(labels))
    gains = 2.0**labels - 1.0
    ideal = (np.sort(gains)[::-1] * table).sum()
    dcg = (gains[np.argsort(-scores)] * table).sum()
    assert ndcg_score(labels, scores, np.zeros(6), ties="input_order") == pytest.approx(dcg / ideal, rel=1e-15)
    objective = LambdaRank(truncation_level=6)
    objective.prepare(labels, np.array([0, 6]))
    # LambdaRank's gains are scaled by 2**-3 (the query's largest grade; exp_gains): so is its DCG.
    assert objective.query_scales_[0] == 1.0 / (ideal * 2.0**-3)
    np.testing.assert_array_equal(objective.discounts_, table)
    np.testing.assert_array_equal(_listwise.cumulative_discounts(5), np.concatenate(([0.0], np.cumsum(table))))


def test_exp_gains_are_each_querys_gains_scaled_by_one_power_of_two():
    labels = np.array([0.0, 3.0, 1.0, 2.0, 2.0, 0.0, 40.0])
    boundaries = np.array([0, 3, 5, 7])
    shifts = np.repeat([3.0, 2.0, 40.0], [3, 2, 2])
    np.testing.assert_array_equal(exp_gains(labels, boundaries), (2.0**labels - 1.0) * 2.0**-shifts)


def test_exp_gains_of_small_grades_keep_their_digits():
    """Below grade 1, ``2**l - 1`` is ``expm1(l ln 2)``: ``2.0**l - 1.0`` read a grade below
    ``2**-53`` as 0 (irrelevant) and kept few digits of small ones. The reference is the
    first two terms of ``expm1``'s series, ``x + x**2 / 2`` for ``x = l ln 2``: the third is
    below float64's resolution for these grades."""
    labels = np.array([1e-20, 3e-9, 0.0, 2.0**-60, 0.5, 1.0, 3.0])
    x = labels * math.log(2.0)
    expected = x + x * x / 2.0
    expected[4:] = [math.sqrt(2.0) - 1.0, 1.0, 7.0]
    gains = exp_gains(labels, np.array([0, len(labels)]))
    np.testing.assert_allclose(gains[:6] * 8.0, expected[:6], rtol=1e-15, atol=0.0)  # scaled by 2**-3
    assert gains[-1] * 8.0 == 7.0
    np.testing.assert_array_equal(exp_gains_of_grades(labels, 3.0), gains)


def test_a_query_whose_only_relevant_grade_is_tiny_is_ranked_not_skipped():
    assert ndcg_score([1e-20, 0.0], [1.0, 0.0], [0, 0]) == 1.0
    assert ndcg_score([1e-20, 0.0], [0.0, 1.0], [0, 0]) == pytest.approx(1.0 / math.log2(3.0), rel=1e-15)
    gains = np.expm1(np.array([3e-9, 1e-9, 2e-9]) * math.log(2.0))
    expected = sklearn.metrics.ndcg_score([gains], [[3.0, 2.0, 1.0]])
    assert ndcg_score([3e-9, 1e-9, 2e-9], [3.0, 2.0, 1.0], [0, 0, 0]) == pytest.approx(expected, rel=1e-14)
    assert err_score([1e-20, 0.0], [1.0, 0.0], [0, 0]) > 0.0


def _exact_ndcg(labels, order, k):
    """NDCG@k in rational arithmetic: integer gains 2**l - 1, the float discounts taken exactly."""
    table = [Fraction(float(value)) for value in discount_table(len(labels))]
    gains = [2 ** int(label) - 1 for label in labels]
    dcg = sum(gains[row] * table[rank] for rank, row in enumerate(order[:k]))
    ideal = sum(gain * table[rank] for rank, gain in enumerate(sorted(gains, reverse=True)[:k]))
    return dcg / ideal


@pytest.mark.parametrize("top", [1023, 1024, 1100, 5000])
def test_ndcg_and_err_of_grades_past_float64s_exponent_are_exact(top):
    """2**l - 1 overflows float64 from l = 1024 (and a DCG before that): the metrics must not."""
    assert ndcg_score([top, 0, 0], [3, 2, 1], [0, 0, 0], k=10) == 1.0
    assert err_score([top, 0, 0], [3, 2, 1], [0, 0, 0], k=10) == 1.0
    labels = np.array([top - 1, top, 0, top - 3, top])
    scores = np.array([0.9, 0.5, 0.7, 0.1, 0.3])
    order = list(np.argsort(-scores))
    for k in (2, 5):
        expected = float(_exact_ndcg(labels, order, k))
        assert ndcg_score(labels, scores, np.zeros(5), k=k, ties="input_order") == pytest.approx(expected, rel=1e-13)
    # ERR's stopping probability of grade g is (2**g - 1) / 2**max_grade: 1/2 for top - 1.
    assert err_score([top - 1, 0], [2, 1], [0, 0], max_grade=top) == pytest.approx(0.5, rel=1e-15)
