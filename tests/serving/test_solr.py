"""Solr's MultipleAdditiveTreesModel: a reference evaluator of Solr's scoring (``engines.py``)
on the exported JSON reaches forestrank's leaves and gives its scores on float32 values."""

import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from forestrank.export import to_solr
from forestrank.serving._solr import SPLIT_SLACK, solr_thresholds
from forestrank.serving._terms import float32_at_most

from .engines import left_first_leaf, solr_scores
from .models import ESTIMATORS, at_thresholds, check_float32_engine, fitted, missing_data, mq2008_fold1, parametrized


def check_solr(model: object, X: np.ndarray) -> None:
    names = [f"feature_{index}" for index in range(model.n_features_in_)]
    document = json.loads(json.dumps(to_solr(model, feature_names=names)))
    X32 = np.vstack([X, at_thresholds(model, X)]).astype(np.float32)
    scores, leaves = solr_scores(document, X32, names)
    check_float32_engine(scores, leaves, model, X32, left_first_leaf)


@pytest.mark.parametrize("name", parametrized(ESTIMATORS))
def test_missing_values_and_values_at_thresholds_take_forestranks_branches(name):
    X, _, _ = missing_data()
    check_solr(fitted(name, "missing"), X)


@pytest.mark.dataset
@pytest.mark.parametrize("name", parametrized(ESTIMATORS))
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


def test_solr_misses_a_cut_only_where_docs_serving_says_and_by_at_most_what_it_says():
    """docs/serving.md said "within about 1e-6 of zero"; the misses reach 3.8e-6 and, at
    the powers of two down to -32, far from zero. Every float32 near each power of two
    (both signs, 2**-60 to 2**29) and a sample inside each binade: a cut that Solr's
    slack cannot reach lies in (-2**-17, 2**-18], where Solr's cut is below by at most
    5e-13, or within 1e-6 above -2**k for -17 <= k <= 5, where it is below by at most
    one float32 step at 2**k, 2**(k - 23)."""
    rng = np.random.default_rng(0)
    cuts = []
    for k in range(-60, 30):
        edge = np.array([2.0**k], dtype=np.float32).view(np.int32)[0]
        window = np.arange(edge - 300, edge + 300, dtype=np.int32).view(np.float32)
        inside = ((rng.random(300) + 1) * 2.0**k).astype(np.float32)
        cuts += [window, -window, inside, -inside]
    cuts = np.unique(np.concatenate(cuts))
    reached = _solr_cut(solr_thresholds(cuts.astype(np.float64)))
    missed = reached != cuts
    near_zero = (cuts > -(2.0**-17)) & (cuts <= 2.0**-18)
    edge = 2.0 ** np.ceil(np.log2(np.abs(cuts.astype(np.float64))))
    above_edge = (cuts < 0) & (cuts + edge <= 1e-6) & (edge >= 2.0**-17) & (edge <= 32.0)
    assert missed.sum() > 1000 and (missed[near_zero].mean() > 0.5)
    assert not (missed & ~near_zero & ~above_edge).any(), cuts[missed & ~near_zero & ~above_edge][:5]
    assert (cuts - reached)[missed & near_zero].max() <= 5e-13
    assert ((cuts - reached) <= edge * 2.0**-23)[missed & above_edge].all()
    assert (cuts - reached)[missed].max() == 2.0**-18  # at -32.0


@pytest.mark.parametrize(
    "arguments, error",
    [({"name": ""}, "name must be a non-empty string without NUL characters (the model's name in Solr's model store)"),
     ({"store": ""}, "store must be a non-empty string without NUL characters (the Solr feature store of the model's"),
     ({"store": 3}, "store must be a string (the Solr feature store of the model's features); got int")],
)  # fmt: skip
def test_a_bad_name_or_store_is_refused_naming_the_argument(arguments, error):
    """An empty ``store`` was refused as a bad "name", the other argument."""
    model = fitted("RF-point", "missing")
    names = [f"feature_{index}" for index in range(model.n_features_in_)]
    with pytest.raises((ValueError, TypeError), match=re.escape(error)):
        to_solr(model, feature_names=names, **arguments)


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
