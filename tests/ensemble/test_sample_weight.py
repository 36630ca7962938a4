"""Sample weights of any range: every estimator's model stays finite and informative, and a
fit's memory does not grow with the weights' values (``_input/labels.weight_unit``, the
listwise criterion's weighted gains)."""

import tracemalloc

import numpy as np
import pytest
from sklearn.base import clone

from forestrank import BROOF, LambdaMART, PLRank, RFHybridRanker, RFListRanker, RFPointRanker, make_ranking

ESTIMATORS = [
    RFPointRanker(n_estimators=5, random_state=0),
    RFPointRanker(n_estimators=5, criterion="variance", random_state=0),
    RFListRanker(n_estimators=3, random_state=0),
    RFHybridRanker(n_estimators=3, random_state=0),
    RFListRanker(n_estimators=3, sample_level="document", bootstrap=True, ndcg_k=None, random_state=0),
    LambdaMART(n_estimators=10, random_state=0),
    LambdaMART(n_estimators=10, objective="xendcg", random_state=0),
    LambdaMART(n_estimators=10, objective="mart", random_state=0),
    LambdaMART(n_estimators=10, objective="mcrank", random_state=0),
    LambdaMART(n_estimators=10, objective="cumulative", random_state=0),
    LambdaMART(n_estimators=10, objective="yetirank", grow_policy="symmetric", bagging_temperature=1.0, random_state=0),
    PLRank(n_estimators=10, random_state=0),
    BROOF(n_estimators=3, n_trees=3, random_state=0),
]


@pytest.fixture(scope="module")
def data():
    return make_ranking(30, (5, 15), 8, random_state=0)


def _one_query_weighing(ratio: float, qid: np.ndarray) -> np.ndarray:
    weights = np.ones(len(qid))
    weights[qid == qid[0]] = ratio
    return weights


@pytest.mark.parametrize("ratio", [1e-8, 1e-150, 1e-300])
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_a_query_of_tiny_weight_leaves_the_model_finite_and_informative(estimator, ratio, data):
    """With the lightest weight as the unit, one query weighted 1e-200 made the others
    weigh 1e200: the Newton gains' and the variance criterion's squared sums overflowed,
    and LambdaMART, PLRank, XE-NDCG, BROOF and the regression forest fitted one constant
    (NDCG@10 0.555 where the unit-weight model scores 0.9), silently."""
    X, y, qid = data
    unit = clone(estimator).fit(X, y, qid=qid)
    assert len(np.unique(unit.predict(X))) > 5
    model = clone(estimator).fit(X, y, qid=qid, sample_weight=_one_query_weighing(ratio, qid))
    scores = model.predict(X)
    assert np.isfinite(scores).all()
    assert len(np.unique(scores)) > 5
    assert model.score(X, y, qid=qid) > unit.score(X, y, qid=qid) - 0.1


def _peak_bytes(estimator: object, X: np.ndarray, y: np.ndarray, qid: np.ndarray, weights: np.ndarray) -> int:
    clone(estimator).fit(X, y, qid=qid, sample_weight=weights)  # compiled before the measured fit
    tracemalloc.start()
    try:
        clone(estimator).fit(X, y, qid=qid, sample_weight=weights)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "estimator",
    [
        RFListRanker(n_estimators=2, ndcg_k=None, n_jobs=1, random_state=0),
        RFHybridRanker(n_estimators=2, ndcg_k=None, n_jobs=1, random_state=0),
        RFListRanker(n_estimators=2, sample_level="document", ndcg_k=None, n_jobs=1, random_state=0),
    ],
    ids=repr,
)
def test_a_listwise_fit_takes_the_same_memory_whatever_the_weights(estimator, data):
    """The listwise criterion counted a row of weight w as w copies: its table of
    discounts grew with the copies, so one query weighted 1e-7 made a 306-row fit of two
    trees take 3.7 GB, and 1e-8 asked for 11.2 GiB. Weights now scale gains."""
    X, y, qid = data
    unit = _peak_bytes(estimator, X, y, qid, np.ones(len(y)))
    for ratio in (1e-5, 1e-150):
        assert _peak_bytes(estimator, X, y, qid, _one_query_weighing(ratio, qid)) < 1.5 * unit + 100_000


@pytest.mark.slow  # the exact-value listwise sweep's own kernels: run after the quick suite
@pytest.mark.parametrize("estimator", [RFListRanker, RFHybridRanker])
def test_a_listwise_query_of_uniform_weight_k_counts_as_k_copies_of_the_query(estimator, data):
    """A query whose documents all weigh k has its NDCG (a ratio, which the weighted
    gains leave as it is) counted k times in the mean over queries, and its rows k times
    in the leaves: the forest of k copies of that query under other ids. Every query in
    every tree, exact bins and every feature at every node, so that nothing is drawn."""
    X, y, qid = data
    query, k = qid == qid[0], 3
    X_copied = np.vstack([X] + [X[query]] * (k - 1))
    y_copied = np.concatenate([y] + [y[query]] * (k - 1))
    qid_copied = np.concatenate([qid] + [np.full(query.sum(), qid.max() + 1 + copy) for copy in range(k - 1)])
    params = {"n_estimators": 3, "query_subsample": 1.0, "max_bins": None, "max_features": None, "random_state": 0}
    weighted = estimator(**params).fit(X, y, qid=qid, sample_weight=np.where(query, float(k), 1.0))
    copied = estimator(**params).fit(X_copied, y_copied, qid=qid_copied)
    np.testing.assert_allclose(weighted.predict(X), copied.predict(X), rtol=1e-12, atol=1e-12)
    for weighted_tree, copied_tree in zip(weighted.trees_, copied.trees_, strict=True):
        np.testing.assert_array_equal(weighted_tree.nodes[["feature", "left"]], copied_tree.nodes[["feature", "left"]])
    unweighted = estimator(**params).fit(X, y, qid=qid)
    assert any(len(a.nodes) != len(b.nodes) or (a.nodes != b.nodes).any() for a, b in zip(weighted.trees_, unweighted.trees_))


def test_min_samples_leaf_counts_rows_whatever_their_weight():
    """As LightGBM's ``min_data_in_leaf`` and scikit-learn's ``min_samples_leaf``
    (docs/design.md, "Public contract", said a weight of 2 counted as two rows here): a
    row of weight 2 alone is no leaf of two, and its duplicate is."""
    X, y, qid = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([2.0, 0.0, 1.0, 1.0]), np.zeros(4, dtype=int)
    model = LambdaMART(
        n_estimators=1, objective="mart", min_samples_leaf=2, min_child_weight=0.0, learning_rate=1.0,
        l2_regularization=0.0,
    )  # fmt: skip
    weighted = model.fit(X, y, qid=qid, sample_weight=np.array([2.0, 1.0, 1.0, 1.0]))
    assert weighted.trees_[0].n_node_samples[weighted.trees_[0].nodes["feature"] < 0].min() >= 2
    rows = [0, 0, 1, 2, 3]
    duplicated = LambdaMART(**model.get_params()).fit(X[rows], y[rows], qid=qid[rows])
    assert duplicated.predict(X[:1])[0] == pytest.approx(2.0)  # the two copies of row 0 are a leaf
    assert weighted.predict(X[:1])[0] != pytest.approx(2.0)


@pytest.mark.parametrize("estimator_class", [LambdaMART, PLRank])
@pytest.mark.parametrize("grow_policy", ["lossguide", "symmetric"])
def test_a_subsample_of_zero_weight_rows_alone_grows_one_leaf_under_the_squared_gain(estimator_class, grow_policy):
    """The squared gain is scaled by the tree's total weight: a subsample drawing only
    rows of weight 0 divided by 0 (ZeroDivisionError); the Newton gain grew one leaf."""
    X, y, qid = make_ranking(n_queries=20, docs_per_query=5, n_features=2, random_state=0)
    weights = np.where(qid == qid[0], 1.0, 0.0)  # one query of weight 1: most draws miss it
    params = dict(n_estimators=8, grow_policy=grow_policy, max_depth=2, subsample=0.1, min_samples_leaf=1, random_state=0)
    model = estimator_class(split_gain="squared", **params).fit(X, y, qid=qid, sample_weight=weights)
    newton = estimator_class(split_gain="newton", **params).fit(X, y, qid=qid, sample_weight=weights)
    for squared, other in zip(model.trees_, newton.trees_):
        assert (squared.node_count == 1) == (other.node_count == 1)  # the same draws, without weight alike
    one_leaf = [tree for tree in model.trees_ if tree.node_count == 1]
    assert one_leaf and all(tree.values[0] == 0 for tree in one_leaf)
    assert len(one_leaf) < len(model.trees_) and np.isfinite(model.predict(X)).all()
