"""Monotone constraints (``monotonic_cst``): every fitted model is monotone in each constrained feature.

The fits under constraints are slow tests: a tree with constraints is a build_tree
specialisation of its own (``_criteria.candidate_gain``), compiled after the quick suite.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forestrank import LambdaMART, PLRank, RFPointRanker, make_ranking, ndcg_score

ESTIMATORS = {
    "lambdarank": lambda cst: LambdaMART(n_estimators=12, learning_rate=0.3, min_samples_leaf=3, monotonic_cst=cst),
    "mart": lambda cst: LambdaMART(n_estimators=12, objective="mart", min_samples_leaf=3, monotonic_cst=cst),
    "plrank": lambda cst: PLRank(n_estimators=12, learning_rate=0.3, min_samples_leaf=3, monotonic_cst=cst),
    "regression forest": lambda cst: RFPointRanker(
        n_estimators=6, criterion="variance", max_features=None, monotonic_cst=cst
    ),
}


def sweep(model, X, feature, points):
    """Predictions (n_values, n_points) as ``feature`` of every point runs over X's range and beyond."""
    values = np.linspace(np.nanmin(X[:, feature]) - 1.0, np.nanmax(X[:, feature]) + 1.0, 41)
    rows = np.repeat(points[None], len(values), axis=0)
    rows[:, :, feature] = values[:, None]
    return model.predict(rows.reshape(-1, X.shape[1])).reshape(len(values), len(points))


@pytest.mark.slow  # their own build_tree specialisations (monotone constraints): after the quick suite
@pytest.mark.parametrize("name", ESTIMATORS)
@settings(max_examples=8, deadline=None)
@given(constraints=st.lists(st.sampled_from([-1, 0, 1]), min_size=4, max_size=4), seed=st.integers(0, 2**16))
def test_the_model_is_monotone_in_every_constrained_feature(name, constraints, seed):
    X, y, qid = make_ranking(n_queries=30, docs_per_query=(5, 15), n_features=4, random_state=seed)
    X[np.random.default_rng(seed).random(X.shape) < 0.05] = np.nan  # missing values go to a learned side
    model = ESTIMATORS[name](constraints).set_params(random_state=seed).fit(X, y, qid=qid)
    points = np.random.default_rng(seed + 1).normal(size=(25, 4)) * np.nanstd(X, axis=0) + np.nanmean(X, axis=0)
    for feature, sign in enumerate(constraints):
        if sign:
            steps = np.diff(sweep(model, X, feature, points), axis=0) * sign
            assert steps.min() >= -1e-12, (feature, sign, steps.min())


@pytest.mark.parametrize("name", ESTIMATORS)
def test_no_constraint_is_the_unconstrained_model_bitwise(name):
    X, y, qid = make_ranking(n_queries=30, n_features=4, random_state=0)
    free = ESTIMATORS[name](None).set_params(random_state=0).fit(X, y, qid=qid).predict(X)
    zeros = ESTIMATORS[name]([0, 0, 0, 0]).set_params(random_state=0).fit(X, y, qid=qid).predict(X)
    np.testing.assert_array_equal(zeros, free)


@pytest.mark.slow  # as above
def test_a_constraint_the_data_agree_with_costs_little_and_one_against_them_costs_much():
    """Grades that rise with feature 0: constraining it to rise loses little, to fall
    leaves the model nothing to learn from it."""
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(400), 10)
    X = rng.normal(size=(len(qid), 3))
    y = np.clip(np.round(1.5 * X[:, 0] + 0.3 * X[:, 1] + rng.normal(0, 0.5, len(qid)) + 1.5), 0, 4)
    train, test = qid < 300, qid >= 300
    scores = {}
    for label, cst in (("none", None), ("agree", [1, 0, 0]), ("against", [-1, 0, 0])):
        model = LambdaMART(n_estimators=40, monotonic_cst=cst, random_state=0).fit(X[train], y[train], qid=qid[train])
        scores[label] = ndcg_score(y[test], model.predict(X[test]), qid[test], 10)
    assert abs(scores["agree"] - scores["none"]) < 0.01, scores
    assert scores["against"] < scores["agree"] - 0.1, scores


@pytest.mark.slow  # as above
def test_constraints_by_feature_name_are_the_constraints_by_position():
    pandas = pytest.importorskip("pandas")
    X, y, qid = make_ranking(n_queries=30, n_features=4, random_state=0)
    frame = pandas.DataFrame(X, columns=["bm25", "pagerank", "age", "clicks"])
    by_name = LambdaMART(n_estimators=5, monotonic_cst={"pagerank": 1, "age": -1}, random_state=0).fit(frame, y, qid=qid)
    by_index = LambdaMART(n_estimators=5, monotonic_cst={1: 1, 2: -1}, random_state=0).fit(frame, y, qid=qid)
    by_array = LambdaMART(n_estimators=5, monotonic_cst=[0, 1, -1, 0], random_state=0).fit(frame, y, qid=qid)
    np.testing.assert_array_equal(by_name.predict(frame), by_array.predict(frame))
    np.testing.assert_array_equal(by_index.predict(frame), by_array.predict(frame))


@pytest.mark.parametrize(
    ("estimator", "match"),
    [
        (LambdaMART(monotonic_cst=[1, 0]), r"monotonic_cst must have one entry per feature of X, shape \(4,\)"),
        (LambdaMART(monotonic_cst=[1, 0, 2, 0]), "monotonic_cst must hold -1, 0 or 1 per feature; feature 2 has 2"),
        (LambdaMART(monotonic_cst={"age": 1}), "monotonic_cst names 'age', which is not a feature name of X"),
        (LambdaMART(monotonic_cst={7: 1}), r"monotonic_cst's keys are feature names or indices in \[0, 4\)"),
        (LambdaMART(objective="mcrank", monotonic_cst=[1, 0, 0, 0]), "one score per grade"),
        (LambdaMART(quantized_gradients=4, monotonic_cst=[1, 0, 0, 0]), "quantized_gradients"),
        (LambdaMART(split_gain="squared", monotonic_cst=[1, 0, 0, 0]), "split_gain='squared'"),
        (LambdaMART(init=RFPointRanker(n_estimators=2), monotonic_cst=[1, 0, 0, 0]), "init"),
        (LambdaMART(missing_direction="separate", monotonic_cst=[1, 0, 0, 0]), "missing_direction='separate'"),
        (RFPointRanker(monotonic_cst=[1, 0, 0, 0]), "monotonic_cst needs criterion='variance'.*grade counts"),
        (RFPointRanker(criterion="random", monotonic_cst=[1, 0, 0, 0]), "criterion='random', whose cuts are drawn"),
        (LambdaMART(objective="cumulative", monotonic_cst=[1, 0, 0, 0]), "one score per grade"),
        (LambdaMART(grow_policy="symmetric", monotonic_cst=[1, 0, 0, 0]), "grow_policy='symmetric'"),
        (RFPointRanker(criterion="variance", relevance_weights="exp", monotonic_cst=[1, 0, 0, 0]), "mean label"),
    ],
)
def test_bad_constraints_are_refused_by_name(estimator, match):
    X, y, qid = make_ranking(n_queries=10, n_features=4, random_state=0)
    with pytest.raises(ValueError, match=match):
        estimator.set_params(n_estimators=2).fit(X, y, qid=qid)


def test_warm_start_refuses_to_mix_constrained_and_free_trees():
    X, y, qid = make_ranking(n_queries=20, n_features=4, random_state=0)
    forest = RFPointRanker(n_estimators=2, criterion="variance", warm_start=True, random_state=0).fit(X, y, qid=qid)
    forest.set_params(n_estimators=4, monotonic_cst=[1, 0, 0, 0])
    with pytest.raises(ValueError, match="warm_start=True adds trees to a forest grown under other monotonic_cst"):
        forest.fit(X, y, qid=qid)
    forest.set_params(monotonic_cst=None).fit(X, y, qid=qid)
    assert len(forest.trees_) == 4
