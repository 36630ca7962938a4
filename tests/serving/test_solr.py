"""Solr's MultipleAdditiveTreesModel: a reference evaluator of Solr's scoring (``engines.py``)
on the exported JSON reaches forestrank's leaves and gives its scores on float32 values."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from forestrank.export import to_solr
from forestrank.serving._solr import SPLIT_SLACK, solr_thresholds
from forestrank.serving._terms import float32_at_most

from .engines import left_first_leaf, solr_scores
from .models import ESTIMATORS, at_thresholds, check_float32_engine, fitted, missing_data, mq2008_fold1


def check_solr(model: object, X: np.ndarray) -> None:
    names = [f"feature_{index}" for index in range(model.n_features_in_)]
    document = json.loads(json.dumps(to_solr(model, feature_names=names)))
    X32 = np.vstack([X, at_thresholds(model, X)]).astype(np.float32)
    scores, leaves = solr_scores(document, X32, names)
    check_float32_engine(scores, leaves, model, X32, left_first_leaf)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_missing_values_and_values_at_thresholds_take_forestranks_branches(name):
    X, _, _ = missing_data()
    check_solr(fitted(name, "missing"), X)


@pytest.mark.dataset
@pytest.mark.parametrize("name", ESTIMATORS)
def test_solr_scores_mq2008_as_forestrank(name, mq2008):
    check_solr(fitted(name, "mq2008", str(mq2008 / "Fold1")), mq2008_fold1(str(mq2008 / "Fold1"))[1][0])


def _solr_cut(written):
    return (written + SPLIT_SLACK).astype(np.float32)


@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_solrs_cut_is_the_highest_reachable_not_above_the_threshold(threshold):
    """Solr's cut (the written float32 plus its slack) is never above the threshold, and
    no written value within 200 float32 steps gives a higher cut that is not above it."""
    written = solr_thresholds(np.array([threshold]))[0]
    cut = _solr_cut(np.array([written]))[0]
    assert float(cut) <= threshold
    steps = np.arange(-200, 201)
    with np.errstate(over="ignore", invalid="ignore"):
        nearby = (written.view(np.int32) + steps).astype(np.int32).view(np.float32)
        cuts = np.append(_solr_cut(nearby[np.isfinite(nearby)]).astype(np.float64), cut)
    assert cuts[cuts <= threshold].max() == cut


@given(st.floats(min_value=1e-5, max_value=1e30) | st.floats(min_value=-1e30, max_value=-64.0))
def test_solrs_cut_is_the_forestrank_cut_away_from_zero_and_binade_edges(threshold):
    written = solr_thresholds(np.array([threshold]))
    assert _solr_cut(written)[0] == float32_at_most(np.array([threshold]))[0]


def test_the_document_is_what_solrs_model_store_takes():
    model = fitted("LambdaMART mart", "missing")  # a non-zero baseline: one more tree, a leaf
    names = [f"feature_{index}" for index in range(model.n_features_in_)]
    document = to_solr(model, name="ranker", feature_names=names, store="letor")
    assert document["class"] == "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"
    assert (document["name"], document["store"]) == ("ranker", "letor")
    assert [feature["name"] for feature in document["features"]] == names
    assert document["params"]["isNullSameAsZero"] is False
    trees = document["params"]["trees"]
    assert len(trees) == len(model.trees_) + 1 and trees[-1]["root"] == {"value": repr(float(np.float32(model.baseline_[0])))}
    assert all(isinstance(tree["weight"], str) for tree in trees)
