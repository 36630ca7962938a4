"""AUC, partial AUC and PREC@5 against scikit-learn and hand computations."""

import numpy as np
import pytest
import sklearn
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV

from forestrank import QueryKFold, RFPointRanker, make_ranking
from forestrank.metrics import (
    auc_score,
    auc_scorer,
    partial_auc_score,
    partial_auc_scorer,
    precision_at_5,
    precision_at_5_scorer,
)


@pytest.fixture(scope="module")
def graded():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 600)
    scores = np.round(rng.normal(size=600) + 0.4 * y, 1)  # rounded: many ties
    qid = rng.permutation(np.repeat(np.arange(20), 30))
    return y, scores, qid


def test_auc_per_query_and_pooled_equal_scikit_learn(graded):
    y, scores, qid = graded
    per_query = auc_score(y, scores, qid, relevant_threshold=3, per_query=True)
    expected = [roc_auc_score(y[qid == q] >= 3, scores[qid == q]) for q in range(20)]
    np.testing.assert_allclose(per_query, expected, rtol=0, atol=1e-12)
    assert auc_score(y, scores, qid, relevant_threshold=3) == pytest.approx(np.mean(expected), abs=1e-12)
    pooled = auc_score(y, scores, relevant_threshold=3, average="pooled")
    assert pooled == pytest.approx(roc_auc_score(y >= 3, scores), abs=1e-12)
    assert auc_score(y, scores, qid, relevant_threshold=3, average="pooled") == pooled  # a qid changes no pooled curve


@pytest.mark.parametrize("area", [auc_score, partial_auc_score])
def test_a_pooled_curve_checks_the_qid_it_is_given(graded, area):
    y, scores, _ = graded
    with pytest.raises(ValueError, match="qid has 2 entries but y_true has 600 rows"):
        area(y, scores, qid=[1, 2], average="pooled")


@pytest.mark.parametrize("max_fpr", [0.05, 0.2, 0.7])
def test_partial_auc_converts_to_scikit_learns_standardised_form(graded, max_fpr):
    y, scores, qid = graded
    raw = partial_auc_score(y, scores, relevant_threshold=3, average="pooled", max_fpr=max_fpr)
    mcclish = partial_auc_score(y, scores, relevant_threshold=3, average="pooled", max_fpr=max_fpr, normalization="mcclish")
    expected = roc_auc_score(y >= 3, scores, max_fpr=max_fpr)
    assert mcclish == pytest.approx(expected, abs=1e-12)
    low, high = max_fpr**2 / 2, max_fpr
    assert raw == pytest.approx(low + (2 * expected - 1) * (high - low), abs=1e-12)  # the conversion, inverted
    per_query = partial_auc_score(y, scores, qid, relevant_threshold=3, max_fpr=max_fpr, normalization="mcclish", per_query=True)
    np.testing.assert_allclose(
        per_query, [roc_auc_score(y[qid == q] >= 3, scores[qid == q], max_fpr=max_fpr) for q in range(20)], atol=1e-12
    )


def test_partial_auc_in_the_thesis_normalisation_is_005_perfect_and_000125_random():
    y = np.array([0, 0, 1, 4, 3, 0, 2, 4])
    assert partial_auc_score(y, y.astype(float), relevant_threshold=3, average="pooled") == pytest.approx(0.05)
    assert partial_auc_score(y, np.zeros(8), relevant_threshold=3, average="pooled") == pytest.approx(0.05**2 / 2)
    assert partial_auc_score(y, -y.astype(float), relevant_threshold=3, average="pooled") == 0.0


def test_tie_conventions_bracket_the_expectation():
    y = np.array([1, 0, 1, 0])
    scores = np.array([0.5, 0.5, 0.5, 0.0])  # one relevant/irrelevant pair tied, then a clear one
    # Pairs (relevant, irrelevant): (0, 1) tied, (0, 3) won, (2, 1) tied, (2, 3) won.
    assert auc_score(y, scores, np.zeros(4), ties="expected") == pytest.approx(0.75)
    assert auc_score(y, scores, np.zeros(4), ties="pessimistic") == pytest.approx(0.5)
    # Input order: row 0 above row 1 above row 2: pair (0, 1) won, (2, 1) lost.
    assert auc_score(y, scores, np.zeros(4), ties="input_order") == pytest.approx(0.75)
    assert auc_score(y[[2, 1, 0, 3]], scores, np.zeros(4), ties="input_order") == pytest.approx(0.75)
    assert auc_score([0, 1, 1, 0], scores, np.zeros(4), ties="input_order") == pytest.approx(0.5)


def test_a_query_without_both_kinds_is_left_out_of_the_mean():
    y = np.array([1, 0, 0, 0, 1, 1])
    scores = np.array([0.9, 0.1, 0.5, 0.4, 0.3, 0.2])
    qid = np.array([0, 0, 1, 1, 2, 2])
    np.testing.assert_array_equal(auc_score(y, scores, qid, per_query=True), [1.0, np.nan, np.nan])
    assert auc_score(y, scores, qid) == 1.0


def test_precision_at_5_counts_the_relevant_among_the_top_five_by_hand():
    y = np.array([4, 0, 3, 1, 2, 4, 0, 3])
    scores = np.arange(8.0)[::-1]  # rows in rank order
    # Top 5: grades 4, 0, 3, 1, 2 -> two at or above 3.
    assert precision_at_5(y, scores, np.zeros(8), relevant_threshold=3) == pytest.approx(2 / 5)
    assert precision_at_5(y, scores, np.zeros(8), relevant_threshold=1) == pytest.approx(4 / 5)
    # A query of 3 documents: missing positions count as irrelevant.
    assert precision_at_5([4, 3, 0], [3.0, 2.0, 1.0], [0, 0, 0], relevant_threshold=3) == pytest.approx(2 / 5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: auc_score([0, 1], [0.1, 0.2], [0, 0], relevant_threshold=np.nan), "relevant_threshold must be a finite"),
        (lambda: auc_score([0, 1], [0.1, 0.2], [0, 0], average="macro"), "average must be one of"),
        (lambda: auc_score([0, 1], [0.1, 0.2], [0, 0], ties="random"), "ties must be one of"),
        (lambda: partial_auc_score([0, 1], [0.1, 0.2], max_fpr=0.0, average="pooled"), r"max_fpr must be a number in \(0, 1\]"),
        (lambda: partial_auc_score([0, 1], [0.1, 0.2], normalization="sklearn", average="pooled"), "normalization must be one of"),
        (lambda: auc_score([0, 0], [0.1, 0.2], average="pooled"), "needs relevant and irrelevant"),
        (lambda: auc_score([0, 1], [0.1, np.nan], [0, 0]), "y_score contains NaN"),
        (lambda: auc_scorer(average="macro"), "average must be one of"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_binary_scorers_route_qid_through_grid_search():
    X, y, qid = make_ranking(n_queries=40, docs_per_query=20, n_features=6, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        for scorer, function in [
            (auc_scorer(relevant_threshold=2), lambda t, s, q: auc_score(t, s, q, relevant_threshold=2)),
            (partial_auc_scorer(relevant_threshold=2), lambda t, s, q: partial_auc_score(t, s, q, relevant_threshold=2)),
            (precision_at_5_scorer(relevant_threshold=2), lambda t, s, q: precision_at_5(t, s, q, relevant_threshold=2)),
        ]:
            search = GridSearchCV(
                RFPointRanker(n_estimators=5, random_state=0), {"max_depth": [3]}, cv=QueryKFold(2), scoring=scorer
            ).fit(X, y, qid=qid)
            folds = list(QueryKFold(2).split(X, y, qid))
            expected = []
            for train, test in folds:
                model = RFPointRanker(n_estimators=5, max_depth=3, random_state=0).fit(X[train], y[train], qid=qid[train])
                expected.append(function(y[test], model.predict(X[test]), qid[test]))
            assert search.cv_results_["mean_test_score"][0] == pytest.approx(np.mean(expected))


def test_binary_scorers_refuse_a_weights_request():
    """The binary metrics take no weights: the scorer does not request them and refuses
    being asked to (a search passing weights to the fit only still runs)."""
    X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=4, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(ValueError, match=r"auc_scorer\(.*\) requests qid only; got sample_weight=True \(the binary"):
            auc_scorer().set_score_request(sample_weight=True)
        ranker = RFPointRanker(n_estimators=3, random_state=0).set_fit_request(sample_weight=True)
        search = GridSearchCV(ranker, {"max_depth": [3]}, cv=QueryKFold(2), scoring=auc_scorer(relevant_threshold=2))
        search.fit(X, y, qid=qid, sample_weight=np.ones(len(y)))
        assert np.isfinite(search.cv_results_["mean_test_score"][0])


@pytest.mark.skipif(
    tuple(int(part) for part in sklearn.__version__.split(".")[:2]) < (1, 7),
    reason="scikit-learn asks scorers whether they take sample_weight from 1.7",
)
def test_a_multi_metric_search_with_weights_and_no_routing_runs():
    """scikit-learn asks every scorer of a multi-metric search whether it takes
    sample_weight (routing off): forestrank's scorers had no answer, AttributeError. The
    ranking scorer takes them; the binary one does not, and scikit-learn says so."""
    from forestrank import ndcg_scorer

    X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=4, random_state=0)
    search = GridSearchCV(
        RFPointRanker(n_estimators=3, random_state=0), {"max_depth": [3]}, cv=QueryKFold(2),
        scoring={"ndcg": ndcg_scorer(10), "auc": auc_scorer(relevant_threshold=2)}, refit="ndcg",
    )  # fmt: skip
    with pytest.warns(UserWarning, match=r"The scoring auc=auc_scorer\(.*\) does not support sample_weight"):
        search.fit(X, y, groups=qid, sample_weight=np.ones(len(y)))  # no routing: no qid reaches fit or scorers
    assert np.isfinite(search.cv_results_["mean_test_ndcg"][0]) and np.isfinite(search.cv_results_["mean_test_auc"][0])


def test_pooled_scorers_take_a_threshold_above_the_example_grades():
    """The options were tried on grades 0 and 5 at construction: a pooled AUC scorer with
    relevant_threshold=7 raised that y_true had one kind, though auc_score takes it."""
    X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=4, n_grades=9, random_state=0)
    model = RFPointRanker(n_estimators=3, random_state=0).fit(X, y, qid=qid)
    for scorer, function in [
        (auc_scorer(average="pooled", relevant_threshold=7), lambda t, s, q: auc_score(t, s, q, average="pooled", relevant_threshold=7)),
        (partial_auc_scorer(average="pooled", relevant_threshold=6.5), lambda t, s, q: partial_auc_score(t, s, q, average="pooled", relevant_threshold=6.5)),
    ]:
        assert scorer(model, X, y, qid=qid) == function(y, model.predict(X), qid)
