"""Metric conventions: presets, explicit choices, and the names every number carries."""

import pytest

from forestrank.metrics import RankingScorer, describe_metric, ndcg_score


def test_preset_accepts_an_agreeing_explicit_option():
    assert ndcg_score([1, 0], [0.5, 0.1], [1, 1], convention="letor4", ties="input_order") == 1.0


def test_describe_metric_names_every_convention():
    assert describe_metric("ndcg", 10) == (
        "NDCG@10 [gain 2^l-1, discount 1/log2(r+1), ties: expectation over tied orders, no-relevant query = 0]"
    )
    text = describe_metric("ndcg", 10, convention="letor4")
    assert "letor4" in text and "ties: input order" in text and "< 10 docs" in text
    assert describe_metric("map", no_relevant="skip") == (
        "MAP [ties: expectation over tied orders, queries without relevant docs skipped]"
    )


def test_describe_metric_names_a_gain_table_and_the_gain_of_err():
    assert describe_metric("ndcg", 5, gain=[0, 1, 3]).startswith("NDCG@5 [gains [0.0, 1.0, 3.0], discount 1/log2(r+1)")
    assert describe_metric("err", 10, gain="linear").startswith("ERR@10 [gain l, ties")
    assert describe_metric("err", 10) == "ERR@10 [ties: expectation over tied orders, no-relevant query = 0]"


def test_a_preset_refuses_a_gain_table():
    with pytest.raises(ValueError, match="fixes gain='exp'"):
        ndcg_score([1, 0], [0.5, 0.1], [1, 1], convention="letor4", gain=[0, 1])


@pytest.mark.parametrize("metric", ["map", "precision"])
@pytest.mark.parametrize("gain", ["exp", "linear", [0, 5, 100]])
def test_a_metric_without_a_gain_refuses_one(metric, gain):
    """MAP and precision count relevant documents: a gain was taken, checked against the
    labels and ignored, and ``describe_metric`` did not name it."""
    with pytest.raises(ValueError, match=f"gain weighs grades in ndcg and err; {metric} .* takes no gain"):
        describe_metric(metric, 5, gain=gain)
    if metric == "map":  # the scorers' metrics
        with pytest.raises(ValueError, match="takes no gain"):
            RankingScorer(metric, 5, gain=gain)
