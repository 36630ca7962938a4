"""The NDCG@10 that LightGBM and XGBoost report for their own rankers is forestrank's
``ndcg_score(..., ties="input_order", no_relevant=1)``, CatBoost's ``ties="pessimistic"``:
the conventions the migration guides (``docs/from_*.md``) state. The data has queries
without a relevant document (each library scores them 1) and tied scores."""

import numpy as np
import pytest

from forestrank import make_ranking, ndcg_score

THEIR_CONVENTION = {"ties": "input_order", "no_relevant": 1}


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=120, docs_per_query=(3, 25), n_features=6, random_state=3)
    X = np.round(X, 1)  # coarse features: tied scores within queries
    train, test = qid < 80, qid >= 80
    assert any((y[qid == query] == 0).all() for query in np.unique(qid[test]))
    return X[train], y[train], qid[train], X[test], y[test], qid[test]


def _group_sizes(qid):
    return np.unique(qid, return_counts=True)[1]  # make_ranking's rows are grouped by increasing qid


def test_lightgbm_ndcg_is_input_order_ties_and_one_for_no_relevant(data):
    lightgbm = pytest.importorskip("lightgbm")
    X, y, qid, X_test, y_test, qid_test = data
    model = lightgbm.LGBMRanker(n_estimators=20, min_child_samples=5, verbose=-1)
    model.fit(X, y, group=_group_sizes(qid), eval_X=X_test, eval_y=y_test, eval_group=[_group_sizes(qid_test)], eval_at=[10])
    scores = model.predict(X_test)
    assert len(np.unique(scores)) < len(scores)  # ties
    reported = model.evals_result_["valid_0"]["ndcg@10"][-1]
    assert ndcg_score(y_test, scores, qid_test, 10, **THEIR_CONVENTION) == pytest.approx(reported, abs=1e-12)
    assert ndcg_score(y_test, scores, qid_test, 10) != pytest.approx(reported, abs=1e-6)


def test_xgboost_ndcg_is_input_order_ties_and_one_for_no_relevant(data):
    xgboost = pytest.importorskip("xgboost")
    X, y, qid, X_test, y_test, qid_test = data
    model = xgboost.XGBRanker(n_estimators=20, eval_metric="ndcg@10")
    model.fit(X, y, qid=qid, eval_set=[(X_test, y_test)], eval_qid=[qid_test], verbose=False)
    reported = model.evals_result()["validation_0"]["ndcg@10"][-1]
    scores = model.predict(X_test)
    assert ndcg_score(y_test, scores, qid_test, 10, **THEIR_CONVENTION) == pytest.approx(reported, abs=1e-6)  # float32


@pytest.mark.parametrize(("their_type", "gain"), [("Exp", "exp"), ("Base", "linear")])
def test_catboost_ndcg_is_pessimistic_ties_and_one_for_no_relevant(data, their_type, gain, tmp_path):
    """The guide said input order: the test's model of 20 YetiRank trees scored no two
    documents of a query alike, so it could not tell; two trees of one level do."""
    catboost = pytest.importorskip("catboost")
    X, y, qid, X_test, y_test, qid_test = data
    metric = f"NDCG:top=10;type={their_type}"
    model = catboost.CatBoostRanker(
        iterations=2, depth=1, loss_function="YetiRank", random_seed=0, verbose=False, thread_count=1,
        train_dir=str(tmp_path),
    )  # its files go to the test's temporary folder, not the checkout
    model.fit(catboost.Pool(X, y, group_id=qid))
    pool = catboost.Pool(X_test, y_test, group_id=qid_test)
    reported = model.eval_metrics(pool, [metric], tmp_dir=str(tmp_path))[metric][-1]
    scores = model.predict(X_test)
    assert len(np.unique(scores)) < len(scores)  # ties
    assert ndcg_score(y_test, scores, qid_test, 10, gain=gain, ties="pessimistic", no_relevant=1) == pytest.approx(
        reported, abs=1e-12
    )
    assert ndcg_score(y_test, scores, qid_test, 10, gain=gain, **THEIR_CONVENTION) != pytest.approx(reported, abs=1e-6)
