"""QueryKFold and QueryShuffleSplit: splits that never cut a query; GridSearchCV over the
rankers' knobs."""

import numpy as np
import pytest
import sklearn
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, ShuffleSplit

from forestrank import LambdaMART, QueryKFold, QueryShuffleSplit, RFPointRanker, make_ranking, ndcg_score, ndcg_scorer


@given(
    qid=hnp.arrays(np.int64, st.integers(10, 80), elements=st.integers(0, 15)),
    n_splits=st.integers(2, 5),
    shuffle=st.booleans(),
)
def test_kfold_keeps_queries_whole_and_partitions_rows(qid, n_splits, shuffle):
    n_queries = len(np.unique(qid))
    if n_queries < n_splits:
        with pytest.raises(ValueError, match=f"needs at least {n_splits} queries; got {n_queries}"):
            list(QueryKFold(n_splits).split(np.zeros((len(qid), 1)), qid=qid))
        return
    X = np.zeros((len(qid), 2))
    splits = list(QueryKFold(n_splits, shuffle=shuffle, random_state=0 if shuffle else None).split(X, qid=qid))
    assert len(splits) == n_splits
    tested = np.concatenate([test for _, test in splits])
    np.testing.assert_array_equal(np.sort(tested), np.arange(len(qid)))
    queries_per_fold = []
    for train, test in splits:
        assert set(qid[train]).isdisjoint(qid[test])
        np.testing.assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(len(qid)))
        queries_per_fold.append(len(np.unique(qid[test])))
    assert max(queries_per_fold) - min(queries_per_fold) <= 1


def test_kfold_without_shuffle_takes_consecutive_sorted_queries_and_is_deterministic():
    qid = np.array([5, 1, 1, 3, 9, 7, 5, 9])
    folds = [sorted(set(qid[test])) for _, test in QueryKFold(2).split(qid.reshape(-1, 1), qid=qid)]
    assert folds == [[1, 3, 5], [7, 9]]
    shuffled = [
        [test.tolist() for _, test in QueryKFold(2, shuffle=True, random_state=seed).split(qid.reshape(-1, 1), qid=qid)]
        for seed in (0, 0)
    ]
    assert shuffled[0] == shuffled[1]


def test_groups_is_an_alias_for_qid_without_routing():
    qid = np.repeat(np.arange(6), 3)
    X = np.zeros((len(qid), 1))
    via_qid = [test.tolist() for _, test in QueryKFold(3).split(X, qid=qid)]
    via_groups = [test.tolist() for _, test in QueryKFold(3).split(X, None, qid)]
    assert via_qid == via_groups
    assert [t.tolist() for _, t in QueryKFold(3).split(X, groups=qid, qid=qid)] == via_qid
    with pytest.raises(ValueError, match="got both qid and groups and they differ"):
        list(QueryKFold(3).split(X, groups=qid[::-1], qid=qid))
    with pytest.raises(ValueError, match="QueryKFold.split needs the query id of each row"):
        list(QueryKFold(3).split(X))


def test_kfold_parameters_are_validated():
    with pytest.raises(ValueError, match="n_splits must be an integer >= 2"):
        QueryKFold(1)
    with pytest.raises(ValueError, match="random_state has no effect since shuffle is False"):
        list(QueryKFold(2, random_state=0).split(np.zeros((4, 1)), qid=[1, 1, 2, 2]))
    assert QueryKFold(4).get_n_splits() == 4
    assert repr(QueryKFold(3, shuffle=True, random_state=1)) == "QueryKFold(n_splits=3, random_state=1, shuffle=True)"


def test_shuffle_split_sizes_count_queries():
    qid = np.repeat(np.arange(20), np.arange(1, 21))  # very unequal query sizes
    X = np.zeros((len(qid), 1))
    splitter = QueryShuffleSplit(n_splits=4, test_size=0.25, random_state=0)
    splits = list(splitter.split(X, qid=qid))
    assert len(splits) == splitter.get_n_splits() == 4
    for train, test in splits:
        assert len(np.unique(qid[test])) == 5 and len(np.unique(qid[train])) == 15
        assert set(qid[train]).isdisjoint(qid[test])
    again = [test.tolist() for _, test in QueryShuffleSplit(n_splits=4, test_size=0.25, random_state=0).split(X, qid=qid)]
    assert again == [test.tolist() for _, test in splits]
    default = next(QueryShuffleSplit(random_state=0).split(X, qid=qid))[1]
    assert len(np.unique(qid[default])) == 4  # default test_size: 20% of the queries
    # scikit-learn's message spoke of 20 "samples" where X has 210 rows; n_splits=0 gave no
    # split, and cross_validate a bare IndexError.
    with pytest.raises(ValueError, match="QueryShuffleSplit splits queries, not rows: .* number of queries, 20"):
        next(QueryShuffleSplit(test_size=25).split(X, qid=qid))
    for n_splits in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n_splits must be an integer >= 1"):
            QueryShuffleSplit(n_splits=n_splits)


def test_shuffle_split_takes_train_size_with_test_size():
    """With both sizes given, the training rows were every query outside the test set:
    train_size was ignored. Each split's queries are ShuffleSplit's of the queries."""
    qid = np.repeat(np.arange(10) * 3 + 1, 4)
    X = np.zeros((len(qid), 1))
    splitter = QueryShuffleSplit(n_splits=3, train_size=0.3, test_size=0.2, random_state=0)
    reference = ShuffleSplit(n_splits=3, train_size=0.3, test_size=0.2, random_state=0).split(np.zeros((10, 1)))
    ids = np.unique(qid)
    for (train, test), (train_queries, test_queries) in zip(splitter.split(X, qid=qid), reference):
        assert set(qid[train]) == set(ids[train_queries]) and len(train) == 3 * 4
        assert set(qid[test]) == set(ids[test_queries]) and len(test) == 2 * 4


@pytest.mark.parametrize(
    "base, name, values",
    [
        (LambdaMART(n_estimators=5, random_state=0), "objective", ["lambdarank", "xendcg"]),
        pytest.param(  # a build_tree specialisation of its own (monotone constraints): after the quick suite
            LambdaMART(n_estimators=5, random_state=0), "monotonic_cst", [None, [1] + [0] * 9], marks=pytest.mark.slow
        ),
        (LambdaMART(n_estimators=5, random_state=0), "interaction_cst", [None, "no_interactions"]),
        pytest.param(
            RFPointRanker(n_estimators=5, criterion="variance", random_state=0), "monotonic_cst", [None, [1] + [0] * 9],
            marks=pytest.mark.slow,
        ),
        (RFPointRanker(n_estimators=5, random_state=0), "interaction_cst", [None, "no_interactions"]),
    ],
    ids=["objective", "boosting monotonic_cst", "boosting interaction_cst", "forest monotonic_cst", "forest interaction_cst"],
)
def test_grid_search_fits_each_candidate_with_its_own_value(base, name, values):
    """The cross-validated scores of the candidates differ, and each equals fits of its
    value by hand on the same folds (a value dropped on the way would give equal scores)."""
    X, y, qid = make_ranking(n_queries=150, docs_per_query=(5, 40), n_features=10, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(base, {name: values}, cv=QueryKFold(3), scoring=ndcg_scorer(10)).fit(X, y, qid=qid)
    scores = search.cv_results_["mean_test_score"]
    assert scores[0] != scores[1]
    for value, score in zip(values, scores):
        by_hand = []
        for train, test in QueryKFold(3).split(X, y, qid=qid):
            model = clone(base).set_params(**{name: value}).fit(X[train], y[train], qid=qid[train])
            by_hand.append(ndcg_score(y[test], model.predict(X[test]), qid[test], k=10))
        assert score == pytest.approx(np.mean(by_hand), abs=1e-12)
