"""Sample weights of any range: every estimator's model stays finite and informative
(``_input/labels.weight_unit``)."""

import numpy as np
import pytest
from sklearn.base import clone

from forestrank import BROOF, LambdaMART, PLRank, RFPointRanker, make_ranking

ESTIMATORS = [
    RFPointRanker(n_estimators=5, random_state=0),
    RFPointRanker(n_estimators=5, criterion="variance", random_state=0),
    LambdaMART(n_estimators=10, random_state=0),
    LambdaMART(n_estimators=10, objective="xendcg", random_state=0),
    LambdaMART(n_estimators=10, objective="mart", random_state=0),
    LambdaMART(n_estimators=10, objective="mcrank", random_state=0),
    LambdaMART(n_estimators=10, objective="cumulative", random_state=0),
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
