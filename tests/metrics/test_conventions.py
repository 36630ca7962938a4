"""Metric conventions: presets, explicit choices, and the names every number carries."""

from forestrank.metrics import describe_metric, ndcg_score


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
