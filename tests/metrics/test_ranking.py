"""forestrank.metrics against independent references, scikit-learn, ranx and hand-computed values."""

import functools
import math
import warnings

import numpy as np
import pytest
import sklearn.metrics
from hypothesis import assume, given
from hypothesis import strategies as st

import reference
from forestrank import MissingQidWarning
from forestrank.metrics import (
    average_precision,
    err_score,
    map_score,
    ndcg_score,
    precision_at_k,
)

TIES = ["expected", "input_order", "pessimistic"]


@st.composite
def rankings(draw, min_size=1, max_size=6, max_queries=4, distinct_scores=False):
    """Small multi-query rankings with many tied scores, query ids in random order.

    Returns (queries, query_ids): ``queries[i] = (labels, scores)`` is given the id
    ``query_ids[i]``; rows of a query stay contiguous and in order.
    """
    n_queries = draw(st.integers(1, max_queries))
    queries = []
    for _ in range(n_queries):
        size = draw(st.integers(min_size, max_size))
        labels = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
        if distinct_scores:
            scores = [float(s) for s in draw(st.permutations(range(size)))]
        else:
            scores = [float(s) for s in draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))]
        queries.append((labels, scores))
    query_ids = draw(st.permutations(range(100, 100 + n_queries)))
    return queries, query_ids


def flatten(queries, query_ids):
    y = np.concatenate([labels for labels, _ in queries]).astype(float)
    s = np.concatenate([scores for _, scores in queries])
    q = np.concatenate([[qid] * len(labels) for (labels, _), qid in zip(queries, query_ids)])
    return y, s, q


def reference_per_query(queries, query_ids, function, no_relevant=0.0):
    """Reference values ordered by sorted query id (forestrank's per-query order)."""
    by_id = sorted(zip(query_ids, queries))
    values = [function(labels, scores) for _, (labels, scores) in by_id]
    return np.array([no_relevant if value is None else value for value in values])


# Gain tables (LightGBM's label_gain) for the grades 0-3 of ``rankings``: the exponential
# one, one with ties between grades, one that gives grade 1 nothing.
GAIN_TABLES = [[0, 1, 3, 7], [0, 0.5, 0.5, 4], [0, 0, 2, 5]]


# The cutoffs are looped over inside one drawn example: each (ties, gain, k) is checked
# on as many rankings as a parametrised k would check, for a third of the draws.
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("gain", ["exp", "linear", *GAIN_TABLES])
@given(data=rankings())
def test_ndcg_matches_brute_force_reference(data, ties, gain):
    queries, ids = data
    y, s, q = flatten(queries, ids)
    for k in (None, 1, 3):
        got = ndcg_score(y, s, q, k, gain=gain, ties=ties, per_query=True)
        expected = reference_per_query(queries, ids, lambda l, sc: reference.ndcg(l, sc, k, gain, "log2", ties))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
        assert ndcg_score(y, s, q, k, gain=gain, ties=ties) == pytest.approx(expected.mean(), rel=1e-12)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("max_grade", [None, 5])
@given(data=rankings())
def test_err_matches_brute_force_reference(data, ties, max_grade):
    queries, ids = data
    y, s, q = flatten(queries, ids)
    dataset_max = max(max(labels) for labels, _ in queries)
    grade = dataset_max if max_grade is None else max_grade
    for k in (None, 1, 3):
        got = err_score(y, s, q, k, max_grade=max_grade, ties=ties, per_query=True)
        expected = reference_per_query(queries, ids, lambda l, sc: reference.err(l, sc, k, grade, ties))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("gain", ["linear", *GAIN_TABLES])
@given(data=rankings())
def test_err_with_a_gain_matches_brute_force_reference(data, ties, gain):
    """``R = G(g) / (G(g_max) + 1)`` for a linear gain or a gain table."""
    queries, ids = data
    y, s, q = flatten(queries, ids)
    for k in (None, 3):
        for max_grade in (None, 3):
            got = err_score(y, s, q, k, max_grade=max_grade, gain=gain, ties=ties, per_query=True)
            grade = max(max(labels) for labels, _ in queries) if max_grade is None else max_grade
            expected = reference_per_query(queries, ids, lambda l, sc: reference.err(l, sc, k, grade, ties, gain))
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@given(data=rankings())
def test_the_exponential_gain_table_is_the_exponential_gain_bitwise(data):
    """``gain=[2**g - 1]`` and ``gain="exp"`` agree to the last bit in NDCG (the per-query
    scaling of the exponential gains cancels exactly) and in ERR."""
    queries, ids = data
    y, s, q = flatten(queries, ids)
    table = [2.0**g - 1.0 for g in range(4)]
    for k in (None, 2):
        np.testing.assert_array_equal(
            ndcg_score(y, s, q, k, gain=table, per_query=True), ndcg_score(y, s, q, k, per_query=True)
        )
        np.testing.assert_array_equal(
            err_score(y, s, q, k, gain=table, max_grade=3, per_query=True),
            err_score(y, s, q, k, max_grade=3, per_query=True),
        )


@given(data=rankings())
def test_a_gain_table_or_linear_gain_near_the_largest_float_scores_as_the_same_gains_scaled_down(data):
    """NDCG is a ratio within a query: a gain table scaled by a power of two gives the same
    NDCG bitwise. A table whose sums overflowed scored a perfect ranking 0 (or inf);
    each query's gains are now scaled by a power of two before they are summed."""
    queries, ids = data
    y, s, q = flatten(queries, ids)
    table = np.array([0.0, 1.0, 2.0, 3.0])
    for k in (None, 2):
        expected = ndcg_score(y, s, q, k, gain=table, per_query=True)
        np.testing.assert_array_equal(ndcg_score(y, s, q, k, gain=table * 2.0**1022, per_query=True), expected)
        np.testing.assert_array_equal(ndcg_score(y, s, q, k, gain=table * 2.0**-1000, per_query=True), expected)
        np.testing.assert_array_equal(ndcg_score(y * 2.0**1021, s, q, k, gain="linear", per_query=True), expected)


def test_a_perfect_ranking_scores_one_under_a_gain_table_whose_sum_overflows():
    assert ndcg_score([4, 4, 0], [3.0, 2.0, 1.0], [0, 0, 0], gain=np.array([0, 1, 2, 3, 1.7e308])) == 1.0
    assert ndcg_score([1.7e308, 1.7e308, 0], [3.0, 2.0, 1.0], [0, 0, 0], gain="linear") == 1.0


def test_err_max_grade_must_be_a_grade_of_the_gain_table():
    y, s, q = np.array([1, 0]), np.array([1.0, 0.0]), np.zeros(2)
    assert err_score(y, s, q, gain=[0, 2, 6], max_grade=2) == pytest.approx(2 / 7)
    with pytest.raises(ValueError, match="gain gives gains to the grades 0 to 2; max_grade holds 3"):
        err_score(y, s, q, gain=[0, 2, 6], max_grade=3)


def test_a_cutoff_past_int64_is_refused_by_name():
    """The kernels take the cutoff as an int64: 2**63 raised Python's OverflowError, 10**20
    numba's typing error, and a scorer or ``eval_at`` took it until the search or fit."""
    from forestrank import LambdaMART
    from forestrank.metrics import ndcg_scorer

    y, s, q = [0, 1], [1.0, 2.0], [1, 1]
    assert ndcg_score(y, s, q, k=2**63 - 1) == ndcg_score(y, s, q, k=2)
    for k in (2**63, 10**20):
        with pytest.raises(ValueError, match=r"k must be a positive integer \(at most 2\*\*63 - 1\)"):
            ndcg_score(y, s, q, k=k)
        with pytest.raises(ValueError, match="k must be a positive integer"):
            ndcg_scorer(k)
    with pytest.raises(ValueError, match="eval_at"):
        LambdaMART(eval_at=2**63).fit(np.ones((2, 1)), np.array(y), qid=np.array(q))


@pytest.mark.parametrize("max_grade", [np.nan, np.inf])
def test_err_max_grade_must_be_finite(max_grade):
    """A NaN ``max_grade`` passed the "at least the largest label" check and made every
    query's ERR NaN, then scored as a query without a relevant document."""
    from forestrank.metrics import err_scorer

    with pytest.raises(ValueError, match="max_grade must be a finite number >= the largest label"):
        err_score([0, 3], [1, 2], [1, 1], max_grade=max_grade, no_relevant=1)
    with pytest.raises(ValueError, match="max_grade must be a finite number"):
        err_scorer(max_grade=max_grade)


@pytest.mark.parametrize("max_grade", [np.float32(4), np.float16(4), np.int8(4), 4, 4.0])
def test_err_max_grade_of_any_numeric_type_is_checked_without_a_warning(max_grade):
    """A float32 or float16 max_grade was compared with float64's largest value in its
    own precision: numpy's cast overflowed with a RuntimeWarning (an error under -W error)."""
    from forestrank.metrics import err_scorer

    y, s, q = [2, 1, 0, 0, 1], [0.9, 0.7, 0.7, 0.4, 0.2], [0, 0, 0, 0, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert err_score(y, s, q, max_grade=max_grade) == err_score(y, s, q, max_grade=4.0)
        err_scorer(10, max_grade=max_grade)
    for beyond in (2**1024, -np.float32(1)):
        with pytest.raises(ValueError, match="max_grade must be a finite number >= the largest label"):
            err_score(y, s, q, max_grade=beyond)


@pytest.mark.parametrize("ties", TIES)
@given(data=rankings())
def test_average_precision_matches_brute_force_reference(data, ties):
    queries, ids = data
    y, s, q = flatten(queries, ids)
    for k in (None, 1, 3):
        expected = reference_per_query(queries, ids, lambda l, sc: reference.average_precision(l, sc, k, ties))
        np.testing.assert_allclose(average_precision(y, s, q, k, ties=ties), expected, rtol=1e-12, atol=1e-14)
        assert map_score(y, s, q, k, ties=ties) == pytest.approx(expected.mean(), rel=1e-12)


@pytest.mark.parametrize("ties", TIES)
@given(data=rankings())
def test_precision_matches_brute_force_reference(data, ties):
    queries, ids = data
    y, s, q = flatten(queries, ids)
    for k in (1, 3, 10):
        expected = reference_per_query(queries, ids, lambda l, sc: reference.precision(l, sc, k, ties))
        np.testing.assert_allclose(precision_at_k(y, s, q, k, ties=ties, per_query=True), expected, rtol=1e-12)


@pytest.mark.parametrize("k", [1, 3, 10])
@given(data=rankings(max_size=12))
def test_letor_presets_match_reference_definitions(data, k):
    """letor4: LETOR discount, input order, NDCG@k = 0 below k docs; letor3: P@k = 0 below k docs too."""
    queries, ids = data
    y, s, q = flatten(queries, ids)
    for preset, ndcg_short, precision_short in [("letor4", True, False), ("letor3", True, True)]:
        ndcg_ref = reference_per_query(
            queries, ids, lambda l, sc: reference.ndcg(l, sc, k, "exp", "letor", "input_order", ndcg_short)
        )
        precision_ref = reference_per_query(
            queries, ids, lambda l, sc: reference.precision(l, sc, k, "input_order", precision_short)
        )
        ap_ref = reference_per_query(queries, ids, lambda l, sc: reference.average_precision(l, sc, None, "input_order"))
        np.testing.assert_allclose(ndcg_score(y, s, q, k, convention=preset, per_query=True), ndcg_ref, rtol=1e-12)
        np.testing.assert_allclose(
            precision_at_k(y, s, q, k, convention=preset, per_query=True), precision_ref, rtol=1e-12
        )
        np.testing.assert_allclose(average_precision(y, s, q, convention=preset), ap_ref, rtol=1e-12)


@pytest.mark.parametrize("metric", [ndcg_score, functools.partial(err_score, max_grade=3), map_score])
@given(data=rankings())
def test_pessimistic_is_the_worst_order_of_tied_documents(data, metric):
    queries, ids = data
    y, s, q = flatten(queries, ids)
    pessimistic = metric(y, s, q, 3, ties="pessimistic", per_query=True)
    worst = []
    by_id = sorted(zip(ids, queries))
    for _, (labels, scores) in by_id:
        per_order = []
        for ranked in reference.possible_rankings(labels, scores, "expected"):
            # Scores that reproduce exactly this order without ties.
            distinct = -np.arange(len(ranked), dtype=float)
            per_order.append(metric(np.array(ranked, float), distinct, np.zeros(len(ranked)), 3))
        worst.append(min(per_order))
    np.testing.assert_allclose(pessimistic, worst, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("k", [None, 1, 5])
@given(data=rankings(min_size=2, max_size=8))
def test_expected_ties_equal_sklearn_tie_averaged_ndcg(data, k):
    """sklearn's ndcg_score (McSherry & Najork tie averaging) on 2**l - 1 relevances, query by query."""
    queries, ids = data
    y, s, q = flatten(queries, ids)
    ours = ndcg_score(y, s, q, k, ties="expected", per_query=True)
    theirs = [
        sklearn.metrics.ndcg_score([2.0 ** np.array(labels) - 1.0], [scores], k=k, ignore_ties=False)
        for _, (labels, scores) in sorted(zip(ids, queries))
    ]
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.fixture(scope="module")
def ranx():
    ranx = pytest.importorskip("ranx")
    return ranx


@pytest.mark.slow  # ranx compiles its numba kernels on first use: half a minute on two cores
@given(data=rankings(min_size=2, max_size=10, max_queries=5, distinct_scores=True))
def test_input_order_equals_ranx_on_tie_free_data(ranx, data):
    queries, ids = data
    assume(all(max(labels) > 0 for labels, _ in queries))  # ranx has no convention for them
    y, s, q = flatten(queries, ids)
    by_id = sorted(zip(ids, queries))  # ranx reports queries in qrels order; ours are sorted ids
    qrels = ranx.Qrels({str(i): {f"d{j}": int(l) for j, l in enumerate(labels)} for i, (labels, _) in by_id})
    run = ranx.Run({str(i): {f"d{j}": sc for j, sc in enumerate(scores)} for i, (_, scores) in by_id})
    names = ["ndcg@5", "ndcg_burges@5", "map", "map@3", "precision@3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ranx's own numba type-safety warnings
        theirs = ranx.evaluate(qrels, run, names, return_mean=False)
    ours = {
        "ndcg@5": ndcg_score(y, s, q, 5, gain="linear", ties="input_order", per_query=True),
        "ndcg_burges@5": ndcg_score(y, s, q, 5, gain="exp", ties="input_order", per_query=True),
        "map": map_score(y, s, q, ties="input_order", per_query=True),
        "map@3": map_score(y, s, q, 3, ties="input_order", per_query=True),
        "precision@3": precision_at_k(y, s, q, 3, ties="input_order", per_query=True),
    }
    for name in names:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-12, err_msg=name)


# Hand-computed fixtures ---------------------------------------------------------------
# Query 7: ranked labels 2, 0, 1 (3 documents). Query 9: no relevant document.
FIXTURE_Y = np.array([2, 0, 1, 0, 0])
FIXTURE_SCORE = np.array([0.9, 0.5, 0.1, 0.3, 0.2])
FIXTURE_QID = np.array([7, 7, 7, 9, 9])
LOG2_3 = math.log2(3)


def test_hand_computed_plain_definition():
    dcg = 3 / 1 + 0 + 1 / 2  # gains 3, 0, 1 at discounts 1/log2(2), 1/log2(3), 1/log2(4)
    idcg = 3 / 1 + 1 / LOG2_3
    assert ndcg_score(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 10, per_query=True) == pytest.approx([dcg / idcg, 0.0])
    assert ndcg_score(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 10) == pytest.approx(dcg / idcg / 2)
    assert map_score(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, per_query=True) == pytest.approx([(1 + 2 / 3) / 2, 0])
    err = 3 / 4 + (1 - 3 / 4) * (1 - 0) * (1 / 4) / 3  # g_max = 2: R = 3/4, 0, 1/4
    assert err_score(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, per_query=True) == pytest.approx([err, 0])
    assert precision_at_k(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 2, per_query=True) == pytest.approx([0.5, 0])


def test_hand_computed_letor4():
    """Eval-Score-4.0.pl: ranks 1-2 undiscounted, NDCG@k = 0 when the query has < k docs."""
    per_query = ndcg_score(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 10, convention="letor4", per_query=True)
    assert per_query == pytest.approx([0.0, 0.0])  # 3 < 10 documents; no relevant document
    ndcg2 = (3 + 0) / (3 + 1)  # both ranks undiscounted; ideal order 2, 1
    assert ndcg_score(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 2, convention="letor4") == pytest.approx(ndcg2 / 2)
    ndcg3 = (3 + 0 + 1 / LOG2_3) / (3 + 1 + 0)
    assert ndcg_score(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 3, convention="letor4") == pytest.approx(ndcg3 / 2)
    assert precision_at_k(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 10, convention="letor4") == pytest.approx(0.2 / 2)
    assert map_score(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, convention="letor4") == pytest.approx(5 / 6 / 2)


@pytest.mark.parametrize("convention", ["letor4", "letor3"])
def test_the_letor_presets_extend_the_scripts_rules_to_grades_above_2(convention):
    """The scripts know grades 0-2 (gains 0, 1, 3); the presets give grade 3 the gain
    2**3 - 1 and count it relevant (``docs/metrics.md``), where a script would not."""
    y, s, q = np.array([3, 0, 1]), np.array([0.1, 0.9, 0.5]), np.zeros(3)
    ndcg3 = (0 + 1 + 7 / LOG2_3) / (7 + 1 + 0)
    assert ndcg_score(y, s, q, 3, convention=convention) == pytest.approx(ndcg3)
    assert map_score(y, s, q, convention=convention) == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_hand_computed_letor3():
    """Eval-Score-3.0.pl: NDCG@k and P@k are 0 below k docs (the script fills only the
    positions a query has and divides their sums by every query)."""
    assert ndcg_score(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 10, convention="letor3") == 0.0
    ndcg3 = (3 + 0 + 1 / LOG2_3) / (3 + 1 + 0)
    assert ndcg_score(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 3, convention="letor3") == pytest.approx(ndcg3 / 2)
    assert precision_at_k(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 10, convention="letor3") == 0.0
    assert precision_at_k(FIXTURE_Y, FIXTURE_SCORE, FIXTURE_QID, 3, convention="letor3") == pytest.approx(2 / 3 / 2)


def test_hand_computed_expected_ties():
    """Labels 2 and 0 tied at rank 1-2: each position holds the mean gain 1.5."""
    y, s, q = np.array([2, 0, 1]), np.array([1.0, 1.0, 0.0]), np.zeros(3)
    dcg = 1.5 * (1 + 1 / LOG2_3) + 1 / 2
    assert ndcg_score(y, s, q) == pytest.approx(dcg / (3 + 1 / LOG2_3))
    assert ndcg_score(y, s, q, ties="input_order") == pytest.approx((3 + 0.5) / (3 + 1 / LOG2_3))
    assert ndcg_score(y, s, q, ties="pessimistic") == pytest.approx((3 / LOG2_3 + 0.5) / (3 + 1 / LOG2_3))
    # AP: relevant docs {label 2 (tied), label 1 at rank 3}: orders (2,0,1) -> (1 + 2/3)/2, (0,2,1) -> (1/2 + 2/3)/2.
    assert map_score(y, s, q) == pytest.approx(((1 + 2 / 3) / 2 + (1 / 2 + 2 / 3) / 2) / 2)


def test_no_relevant_conventions():
    kwargs = dict(y_true=FIXTURE_Y, y_score=FIXTURE_SCORE, qid=FIXTURE_QID, k=10)
    first = ndcg_score(**kwargs, per_query=True)[0]
    assert ndcg_score(**kwargs, no_relevant=1.0) == pytest.approx((first + 1) / 2)
    assert ndcg_score(**kwargs, no_relevant="skip") == pytest.approx(first)
    assert np.isnan(ndcg_score(**kwargs, no_relevant="skip", per_query=True)[1])
    with pytest.warns(UserWarning, match="Every query was skipped"):
        assert np.isnan(ndcg_score([0, 0], [1, 2], [1, 1], no_relevant="skip"))


def test_the_metrics_warnings_name_the_callers_line_and_function():
    """"Every query was skipped" pointed into forestrank's own module (a fixed stack level)
    and blamed missing relevant documents for AUC's queries of relevant documents only;
    precision_at_k's missing-qid warning named a ``precision_score`` that does not exist."""
    from forestrank.metrics import auc_score

    for call in (lambda: ndcg_score([0, 0], [1, 2], [1, 1], no_relevant="skip"), lambda: auc_score([1, 2], [0.1, 0.2], [1, 1])):
        with pytest.warns(UserWarning, match="or for AUC a relevant and an irrelevant one") as caught:
            call()
        assert [record.filename for record in caught] == [__file__]
    with pytest.warns(MissingQidWarning, match="precision_at_k got no qid"):
        precision_at_k([0, 1], [1.0, 2.0], None, k=1)


@given(data=rankings(max_size=20, max_queries=6))
def test_properties_bounds_perfect_ranking_and_invariances(data):
    queries, ids = data
    y, s, q = flatten(queries, ids)
    for ties in TIES:
        values = ndcg_score(y, s, q, 5, ties=ties, per_query=True)
        assert np.all((values >= 0) & (values <= 1 + 1e-12))
        has_relevant = np.array([max(labels) > 0 for _, (labels, _) in sorted(zip(ids, queries))])
        perfect = ndcg_score(y, y, q, 5, ties=ties, per_query=True)
        np.testing.assert_allclose(perfect[has_relevant], 1.0, rtol=1e-12)
    # Relabelling queries (to strings, in another order) does not change the mean.
    relabelled = np.array([f"query-{1000 - int(v)}" for v in q])
    for metric in (ndcg_score, err_score, map_score):
        assert metric(y, s, relabelled, 5) == pytest.approx(metric(y, s, q, 5), rel=1e-12)
    # Permuting rows does not change any per-query value under expected ties.
    permutation = np.random.default_rng(len(y)).permutation(len(y))
    for metric in (ndcg_score, err_score, map_score):
        np.testing.assert_allclose(
            metric(y[permutation], s[permutation], q[permutation], 5, per_query=True),
            metric(y, s, q, 5, per_query=True),
            rtol=1e-12,
        )


def test_per_query_order_is_sorted_query_id_for_string_ids():
    y = np.array([1, 0, 0, 1, 2, 0])
    s = np.array([0.1, 0.9, 0.5, 0.4, 0.8, 0.2])
    q = np.array(["b", "a", "b", "a", "c", "c"])
    values = ndcg_score(y, s, q, per_query=True)
    for position, query in enumerate(["a", "b", "c"]):
        rows = q == query
        assert values[position] == ndcg_score(y[rows], s[rows], q[rows])


def test_err_max_grade():
    y, s, q = np.array([1, 0]), np.array([1.0, 0.0]), np.zeros(2)
    assert err_score(y, s, q) == pytest.approx(0.5)  # g_max = 1 from the data: R = 1/2
    assert err_score(y, s, q, max_grade=4) == pytest.approx(1 / 16)
    with pytest.raises(ValueError, match="max_grade"):
        err_score(y, s, q, max_grade=0.5)


def test_missing_qid_warns_and_means_one_query():
    with pytest.warns(MissingQidWarning, match="ONE query"):
        value = ndcg_score(FIXTURE_Y, FIXTURE_SCORE, None)
    assert value == ndcg_score(FIXTURE_Y, FIXTURE_SCORE, np.zeros(5))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(y_true=[1, -1]), ValueError, "y_true contains negative"),
        (dict(y_true=[1, np.nan]), ValueError, "y_true contains non-finite"),
        (dict(y_true=[[1, 0], [0, 1]]), ValueError, "y_true must be 1-D"),
        (dict(y_true=[]), ValueError, "y_true is empty"),
        (dict(y_score=[1.0, np.nan]), ValueError, "y_score contains NaN"),
        (dict(y_score=[1.0]), ValueError, "y_score has 1 entries but y_true has 2"),
        (dict(qid=[1, 1, 1]), ValueError, "qid has 3 entries but y_true has 2"),
        (dict(qid=[1.0, np.nan]), ValueError, "qid contains NaN"),
        (dict(qid=["a", 1]), TypeError, "mixes strings"),
        (dict(qid=np.array(["a", 1], dtype=object)), TypeError, "mutually comparable"),
        (dict(k=0), ValueError, "k must be a positive integer"),
        (dict(k=2.5), ValueError, "k must be a positive integer"),
        (dict(ties="random"), ValueError, "ties must be one of"),
        (dict(gain="log"), ValueError, "gain must be 'exp', 'linear' or an array of gains"),
        (dict(gain=[0, 2, 1]), ValueError, "gain must not decrease"),
        (dict(gain=[0, -1]), ValueError, "gain must hold finite gains >= 0"),
        (dict(gain=[0, np.nan]), ValueError, "gain must hold finite gains >= 0"),
        (dict(gain=[[0, 1]]), ValueError, "gain as an array holds one gain per grade"),
        (dict(gain=[0.0]), ValueError, "gain gives gains to the grades 0 to 0; y_true holds 1"),
        (dict(y_true=[1.5, 0], gain=[0, 1, 3]), ValueError, r"gain is a table of gains by integer grade, and y_true holds 1.5: give integer grades"),
        (dict(no_relevant=2), ValueError, "no_relevant must be"),
        (dict(convention="letor5"), ValueError, "convention must be one of"),
        (dict(convention="letor4", ties="expected"), ValueError, "fixes ties='input_order'"),
    ],
)
def test_bad_input_errors_name_the_argument(kwargs, error, match):
    arguments = dict(y_true=[1, 0], y_score=[0.5, 0.1], qid=np.array([1, 1], dtype=object))
    arguments.update(kwargs)
    with pytest.raises(error, match=match):
        ndcg_score(**arguments)


def test_inputs_are_not_modified():
    y, s, q = np.array([2.0, 0.0, 1.0]), np.array([0.1, 0.1, 0.3]), np.array([3, 1, 3])
    copies = y.copy(), s.copy(), q.copy()
    for metric in (ndcg_score, err_score, map_score):
        metric(y, s, q, 2)
    for original, copy in zip((y, s, q), copies):
        np.testing.assert_array_equal(original, copy)


def test_large_tie_block_err_stays_in_unit_interval_and_matches_sampling():
    """A 200-document tie block: the exact expectation against a Monte-Carlo estimate."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, 200).astype(float)
    s = np.zeros(200)
    q = np.zeros(200)
    exact = err_score(y, s, q, 20, max_grade=4)
    samples = [err_score(y, rng.permutation(200).astype(float), q, 20, max_grade=4) for _ in range(4000)]
    assert 0 <= exact <= 1
    assert exact == pytest.approx(np.mean(samples), abs=4 * np.std(samples) / np.sqrt(len(samples)))


# LightGBM and XGBoost define the same NDCG --------------------------------------------
# Their training-time metrics evaluate init_score / base_margin plus one tree; a tree that
# cannot split adds the same constant to every document, so the ranking (ties included)
# is exactly the scores we pass.


@pytest.fixture(scope="module")
def tie_heavy_ranking():
    from forestrank import make_ranking

    X, y, qid = make_ranking(n_queries=80, docs_per_query=(2, 40), n_features=3, random_state=5)
    scores = np.round(X[:, 0], 1)  # many ties
    return X, y, qid, scores


def test_lightgbm_ndcg_is_input_order_with_no_relevant_one(tie_heavy_ranking):
    lightgbm = pytest.importorskip("lightgbm")
    X, y, qid, scores = tie_heavy_ranking
    sizes = np.unique(qid, return_counts=True)[1]
    data = lightgbm.Dataset(X, y, group=sizes, init_score=scores)
    params = dict(objective="lambdarank", metric="ndcg", eval_at=[1, 5, 10], min_data_in_leaf=10**6, verbose=-1)
    history = {}
    lightgbm.train(params, data, num_boost_round=1, valid_sets=[data], callbacks=[lightgbm.record_evaluation(history)])
    for k in (1, 5, 10):
        ours = ndcg_score(y, scores, qid, k, ties="input_order", no_relevant=1.0)
        assert history["training"][f"ndcg@{k}"][-1] == pytest.approx(ours, rel=1e-9)


def test_weighted_ndcg_weighs_a_query_without_relevant_documents_where_lightgbm_does_not(tie_heavy_ranking):
    """docs/metrics.md: with query weights, LightGBM (and XGBoost) add a query without
    relevant documents to the numerator as 1, not as its weight times 1, while its weight
    joins the denominator; forestrank's mean weighs that query's 1 as any other NDCG. The
    two agree when every query has a relevant document."""
    lightgbm = pytest.importorskip("lightgbm")
    from forestrank.metrics._ranking import evaluate

    X, y, qid, scores = tie_heavy_ranking
    query_ids, sizes = np.unique(qid, return_counts=True)
    query_weights = np.random.default_rng(0).uniform(0.5, 3.0, len(query_ids))
    weights = query_weights[np.searchsorted(query_ids, qid)]
    per_query = ndcg_score(y, scores, qid, 5, ties="input_order", no_relevant=1.0, per_query=True)
    relevant = np.array([y[qid == query].max() > 0 for query in query_ids])
    assert 0 < relevant.sum() < len(query_ids)
    conventions = dict(ties="input_order", no_relevant=1.0)

    def lightgbms(rows):
        data = lightgbm.Dataset(X[rows], y[rows], group=np.unique(qid[rows], return_counts=True)[1], weight=weights[rows])
        data.set_init_score(scores[rows])
        history = {}
        params = dict(objective="lambdarank", metric="ndcg", eval_at=[5], min_data_in_leaf=10**6, verbose=-1)
        lightgbm.train(params, data, num_boost_round=1, valid_sets=[data], callbacks=[lightgbm.record_evaluation(history)])
        return history["training"]["ndcg@5"][-1]

    ours = evaluate("ndcg", y, scores, qid, 5, conventions=conventions, sample_weight=weights)
    assert ours == pytest.approx(np.average(per_query, weights=query_weights), rel=1e-12)
    unweighted_ones = (query_weights[relevant] @ per_query[relevant] + (~relevant).sum()) / query_weights.sum()
    assert lightgbms(np.ones(len(y), bool)) == pytest.approx(unweighted_ones, rel=1e-7)  # its weights are float32
    assert abs(ours - unweighted_ones) > 0.01
    xgboost = pytest.importorskip("xgboost")
    order = np.argsort(qid, kind="stable")
    data = xgboost.DMatrix(X[order], label=y[order], base_margin=scores[order], weight=query_weights)
    data.set_group(sizes)
    history = {}
    params = dict(objective="rank:ndcg", eval_metric="ndcg@5", max_depth=1, min_child_weight=1e9)
    xgboost.train(params, data, num_boost_round=1, evals=[(data, "train")], evals_result=history, verbose_eval=False)
    assert history["train"]["ndcg@5"][-1] == pytest.approx(unweighted_ones, rel=1e-7)
    graded = np.isin(qid, query_ids[relevant])
    both = evaluate("ndcg", y[graded], scores[graded], qid[graded], 5, conventions=conventions, sample_weight=weights[graded])
    assert lightgbms(graded) == pytest.approx(both, rel=1e-7)


@pytest.mark.parametrize("label_gain", [[0, 1, 2, 3, 4], [0, 0.5, 0.5, 6, 10]])
def test_lightgbm_ndcg_with_label_gain_is_a_gain_table(tie_heavy_ranking, label_gain):
    lightgbm = pytest.importorskip("lightgbm")
    X, y, qid, scores = tie_heavy_ranking
    assert y.max() < len(label_gain)
    data = lightgbm.Dataset(X, y, group=np.unique(qid, return_counts=True)[1], init_score=scores)
    params = dict(
        objective="lambdarank", metric="ndcg", eval_at=[5], label_gain=label_gain, min_data_in_leaf=10**6, verbose=-1
    )
    history = {}
    lightgbm.train(params, data, num_boost_round=1, valid_sets=[data], callbacks=[lightgbm.record_evaluation(history)])
    ours = ndcg_score(y, scores, qid, 5, gain=label_gain, ties="input_order", no_relevant=1.0)
    assert history["training"]["ndcg@5"][-1] == pytest.approx(ours, rel=1e-9)


def test_xgboost_linear_gain_ndcg_is_the_linear_gain():
    """XGBoost's ``ndcg_exp_gain=False`` is ``gain="linear"`` (grades above 31 allowed)."""
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(30), 12)
    y = rng.integers(0, 60, len(qid)).astype(float)
    scores = rng.normal(size=len(qid))
    data = xgboost.DMatrix(np.zeros((len(qid), 1)), label=y, base_margin=scores)
    data.set_group(np.full(30, 12))
    history = {}
    params = dict(objective="rank:ndcg", ndcg_exp_gain=False, eval_metric="ndcg@5", max_depth=1, min_child_weight=1e9)
    xgboost.train(params, data, num_boost_round=1, evals=[(data, "train")], evals_result=history)
    ours = ndcg_score(y, scores, qid, 5, gain="linear", ties="input_order", no_relevant=1.0)
    assert history["train"]["ndcg@5"][-1] == pytest.approx(ours, rel=1e-6)


def test_xgboost_ndcg_is_input_order_and_its_minus_variant_zeroes_no_relevant(tie_heavy_ranking):
    xgboost = pytest.importorskip("xgboost")
    X, y, qid, scores = tie_heavy_ranking
    data = xgboost.DMatrix(X, label=y, base_margin=scores)
    data.set_group(np.unique(qid, return_counts=True)[1])
    history = {}
    params = dict(objective="rank:ndcg", eval_metric=["ndcg@5", "ndcg@5-"], max_depth=1, min_child_weight=1e9)
    xgboost.train(params, data, num_boost_round=1, evals=[(data, "train")], evals_result=history)
    assert history["train"]["ndcg@5"][-1] == pytest.approx(ndcg_score(y, scores, qid, 5, ties="input_order", no_relevant=1.0), rel=1e-6)
    assert history["train"]["ndcg@5-"][-1] == pytest.approx(ndcg_score(y, scores, qid, 5, ties="input_order"), rel=1e-6)


def test_err_of_a_query_without_gain_follows_no_relevant():
    y, s, q = np.array([1.0, 0.0, 2.0, 0.0]), np.array([0.2, 0.1, 0.3, 0.4]), np.array([1, 1, 2, 2])
    values = err_score(y, s, q, gain=[0, 0, 3], no_relevant=0.25, per_query=True)
    assert values[0] == 0.25 and 0.0 < values[1] < 1.0
    assert err_score(y, s, q, gain=[0, 0, 3], no_relevant="skip") == values[1]


def test_err_scorer_takes_a_gain():
    from forestrank import LambdaMART, err_scorer, make_ranking

    X, y, qid = make_ranking(n_queries=20, random_state=0)
    model = LambdaMART(n_estimators=3, random_state=0).fit(X, y, qid=qid)
    scorer = err_scorer(10, gain="linear")
    assert scorer(model, X, y, qid=qid) == err_score(y, model.predict(X), qid, 10, gain="linear")



def test_ranking_scorer_weighs_queries_once_asked_and_a_search_must_say():
    """A search routing sample_weight to the fit scored each fold unweighted without a
    word: the scorer now leaves the weights unset (scikit-learn raises until the user
    says), and once requested weighs each query by its rows' mean weight, as score."""
    import sklearn
    from sklearn.exceptions import UnsetMetadataPassedError
    from sklearn.model_selection import cross_validate

    from forestrank import LambdaMART, QueryKFold, make_ranking, ndcg_scorer

    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
    weight = np.repeat(np.random.default_rng(3).integers(0, 5, 30).astype(float), 10)  # zero drops a query
    with sklearn.config_context(enable_metadata_routing=True):
        model = LambdaMART(n_estimators=3, random_state=0).set_fit_request(sample_weight=True)
        params = {"qid": qid, "sample_weight": weight}
        with pytest.raises(UnsetMetadataPassedError, match="set_score_request"):
            cross_validate(model, X, y, cv=QueryKFold(3), scoring=ndcg_scorer(10), params=params)
        scores = {
            request: cross_validate(
                model, X, y, cv=QueryKFold(3), scoring=ndcg_scorer(10).set_score_request(sample_weight=request),
                params=params,
            )["test_score"]
            for request in (True, False)
        }  # fmt: skip
        with pytest.raises(ValueError, match="requests qid and sample_weight only; got groups=True"):
            ndcg_scorer(10).set_score_request(groups=True)
    for fold, (train, test) in enumerate(QueryKFold(3).split(X, y, qid)):
        fitted = LambdaMART(n_estimators=3, random_state=0).fit(X[train], y[train], qid=qid[train], sample_weight=weight[train])
        predicted = fitted.predict(X[test])
        kept = weight[test] > 0
        assert scores[True][fold] == pytest.approx(
            np.average(
                ndcg_score(y[test][kept], predicted[kept], qid[test][kept], 10, per_query=True),
                weights=[weight[test][qid[test] == q][0] for q in np.unique(qid[test][kept])],
            )
        )  # fmt: skip
        assert scores[False][fold] == ndcg_score(y[test], predicted, qid[test], 10)
    assert not np.allclose(scores[True], scores[False])
    with pytest.raises(RuntimeError, match="enable_metadata_routing=True"):
        ndcg_scorer(10).set_score_request(sample_weight=True)


@pytest.mark.slow  # the references walk the query in Python
def test_one_query_of_131075_documents_scores_as_the_reference_does():
    """A query past every 16-bit count and 13x LightGBM's limit: NDCG, ERR and MAP at a
    cut-off and over the whole list, against the plain-Python definitions."""
    rng = np.random.default_rng(0)
    n = 2**17 + 3
    labels = rng.integers(0, 5, n).astype(float)
    scores = rng.permutation(n).astype(float)  # distinct: one ranking
    qid = np.zeros(n, dtype=np.int64)
    as_lists = labels.tolist(), scores.tolist()
    for k in (10, None):
        assert ndcg_score(labels, scores, qid, k=k) == pytest.approx(reference.ndcg(*as_lists, k=k), rel=1e-12)
        assert err_score(labels, scores, qid, k=k) == pytest.approx(reference.err(*as_lists, k=k), rel=1e-12)
        assert map_score(labels, scores, qid, k=k) == pytest.approx(reference.average_precision(*as_lists, k=k), rel=1e-12)


@pytest.mark.parametrize("metric", [ndcg_score, err_score, map_score, precision_at_k])
def test_every_documented_parameter_is_one_the_metric_takes(metric):
    """The shared convention entries are pasted into each docstring: only the ones the
    metric takes (MAP and precision count labels > 0, so they take no gain)."""
    import inspect
    import re

    parameters = inspect.cleandoc(metric.__doc__).split("Parameters\n----------")[1].split("Returns\n-------")[0]
    documented = re.findall(r"^(\w+) :", parameters, flags=re.MULTILINE)
    assert documented == list(inspect.signature(metric).parameters)


def test_per_query_takes_booleans_only():
    """per_query="False" returned the per-query values: any truthy value read as True."""
    from forestrank.metrics import auc_score, partial_auc_score, precision_at_5

    y, s, q = [1, 0, 2, 0], [0.3, 0.1, 0.2, 0.4], [0, 0, 1, 1]
    for metric in (ndcg_score, err_score, map_score, auc_score, partial_auc_score, precision_at_5):
        with pytest.raises(ValueError, match="per_query must be True or False; got 'False'"):
            metric(y, s, q, per_query="False")
        assert np.ndim(metric(y, s, q, per_query=np.bool_(True))) == 1
