"""Interaction constraints (``interaction_cst``): every branch of every tree stays within one group."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forestrank import BROOF, LambdaMART, PLRank, RFPointRanker, make_ranking

ESTIMATORS = {
    "lambdarank": lambda cst: LambdaMART(n_estimators=8, min_samples_leaf=3, interaction_cst=cst),
    "plrank": lambda cst: PLRank(n_estimators=8, min_samples_leaf=3, interaction_cst=cst),
    "rf-point": lambda cst: RFPointRanker(n_estimators=4, max_depth=6, interaction_cst=cst),
}


def branch_features(tree):
    """The set of features split on along every root-to-leaf branch of ``tree``."""
    nodes, branches = tree.nodes, []
    stack = [(0, frozenset())]
    while stack:
        node, above = stack.pop()
        feature = nodes["feature"][node]
        if feature < 0:
            branches.append(above)
            continue
        left = nodes["left"][node]
        stack += [(left, above | {int(feature)}), (left + 1, above | {int(feature)})]
    return branches


@pytest.mark.parametrize("name", ESTIMATORS)
@settings(max_examples=10, deadline=None)
@given(
    groups=st.lists(st.sets(st.integers(0, 5), min_size=1, max_size=3), min_size=1, max_size=3),
    seed=st.integers(0, 2**16),
)
def test_every_branch_uses_the_features_of_one_group(name, groups, seed):
    X, y, qid = make_ranking(n_queries=30, docs_per_query=(5, 15), n_features=6, random_state=seed)
    cst = [sorted(group) for group in groups]
    model = ESTIMATORS[name](cst).set_params(random_state=seed).fit(X, y, qid=qid)
    allowed = [set(group) for group in groups] + [set(range(6)) - set().union(*groups)]
    for tree in model.trees_:
        for branch in branch_features(tree):
            assert any(branch <= group for group in allowed), (branch, allowed)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_no_interactions_grows_an_additive_model(name):
    """Each tree splits on one feature along every branch, so the score is a sum of one
    function per feature: swapping two features between two documents leaves the sum of
    their scores unchanged."""
    X, y, qid = make_ranking(n_queries=40, n_features=4, random_state=0)
    model = ESTIMATORS[name]("no_interactions").set_params(random_state=0).fit(X, y, qid=qid)
    rng = np.random.default_rng(1)
    a, b = X[rng.integers(0, len(X), 50)], X[rng.integers(0, len(X), 50)]
    mixed_a, mixed_b = a.copy(), b.copy()
    mixed_a[:, 0], mixed_b[:, 0] = b[:, 0], a[:, 0]
    np.testing.assert_allclose(
        model.predict(a) + model.predict(b), model.predict(mixed_a) + model.predict(mixed_b), rtol=1e-10, atol=1e-10
    )


@pytest.mark.parametrize("name", ESTIMATORS)
def test_one_group_of_every_feature_is_the_unconstrained_model_bitwise(name):
    X, y, qid = make_ranking(n_queries=30, n_features=4, random_state=0)
    free = ESTIMATORS[name](None).set_params(random_state=0).fit(X, y, qid=qid).predict(X)
    whole = ESTIMATORS[name]([[0, 1, 2, 3]]).set_params(random_state=0).fit(X, y, qid=qid).predict(X)
    np.testing.assert_array_equal(whole, free)


def test_pairwise_lets_a_branch_use_two_features_at_most():
    X, y, qid = make_ranking(n_queries=40, n_features=5, random_state=0)
    model = LambdaMART(n_estimators=10, interaction_cst="pairwise", random_state=0).fit(X, y, qid=qid)
    widest = max(len(branch) for tree in model.trees_ for branch in branch_features(tree))
    assert widest == 2


@pytest.mark.parametrize(
    ("estimator", "match"),
    [
        (LambdaMART(interaction_cst="triples"), "interaction_cst"),
        (LambdaMART(interaction_cst=[[0, 7]]), r"interaction_cst's groups hold feature indices in \[0, 4\); got 7"),
        (LambdaMART(interaction_cst=[[0, "a"]]), "interaction_cst's groups hold feature indices"),
        (BROOF(forest=RFPointRanker(interaction_cst=[[0, 1]])), "forest.interaction_cst is not supported by BROOF"),
    ],
)
def test_bad_interaction_constraints_are_refused_by_name(estimator, match):
    X, y, qid = make_ranking(n_queries=10, n_features=4, random_state=0)
    with pytest.raises(ValueError, match=match):
        estimator.set_params(n_estimators=2).fit(X, y, qid=qid)
