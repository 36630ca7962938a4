"""One query far longer than other libraries take (LightGBM refuses more than 10,000
documents a query, CatBoost's GPU more than 1,023): every ranker fits it and learns from
it. How the time grows with the query's length is a benchmark (``bench_huge_query.py``,
RESULTS "One query of a million documents"), not a test."""

import numpy as np
import pytest

from forestrank import BROOF, LambdaMART, PLRank, RFHybridRanker, RFListRanker, RFPointRanker, make_ranking, ndcg_score
from forestrank.serving._terms import additive_terms

# Past every 16-bit count and index, and 13x LightGBM's limit.
N_DOCUMENTS = 2**17 + 3

RANKERS = {
    "LambdaMART": lambda: LambdaMART(n_estimators=10, random_state=0),
    "PLRank": lambda: PLRank(n_estimators=10, random_state=0),
    "RF-point": lambda: RFPointRanker(n_estimators=4, random_state=0),
    "RF-list": lambda: RFListRanker(n_estimators=4, random_state=0),
    "RF-hybrid": lambda: RFHybridRanker(n_estimators=4, random_state=0),
    # One query: the weak forests must sample documents to leave rows out of bag.
    "BROOF": lambda: BROOF(
        n_estimators=2, n_trees=3, forest=RFPointRanker(criterion="variance", sample_level="document"), random_state=0
    ),
}


@pytest.fixture(scope="module")
def huge_query():
    X, y, qid = make_ranking(n_queries=1, docs_per_query=N_DOCUMENTS, n_features=8, random_state=0)
    assert len(np.unique(qid)) == 1
    return X, y, qid


@pytest.mark.slow  # six fits of 131,075 rows
@pytest.mark.parametrize("name", list(RANKERS))
def test_every_ranker_fits_one_query_of_131075_documents_and_learns_from_it(name, huge_query):
    """Every tree's root holds the query's rows (BROOF's weak forests a sample of its
    documents), each of them reaching one leaf, and the fitted model ranks the query
    better than its best single feature does."""
    X, y, qid = huge_query
    model = RANKERS[name]().fit(X, y, qid=qid)
    for tree, _, _ in additive_terms(model)[0]:
        rows = tree.n_node_samples[0]
        if name == "BROOF":
            assert 0.5 * N_DOCUMENTS < rows < 0.8 * N_DOCUMENTS  # about 1 - 1/e of them drawn
        else:
            assert rows == N_DOCUMENTS
        assert tree.n_node_samples[tree.nodes["feature"] < 0].sum() == rows
    scores = model.predict(X)
    assert scores.shape == (N_DOCUMENTS,) and np.isfinite(scores).all()
    best_feature = max(max(ndcg_score(y, sign * X[:, j], qid, k=10) for sign in (1, -1)) for j in range(X.shape[1]))
    assert ndcg_score(y, scores, qid, k=10) > best_feature
