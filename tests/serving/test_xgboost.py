"""XGBoost's model JSON and tree dump: XGBoost's predictor, and reference evaluators of the
Elasticsearch / OpenSearch LTR plugins' two XGBoost formats (``engines.py``), reach
forestrank's leaves and give its scores on float32 values."""

import json
import re

import numpy as np
import pytest

from forestrank.export import export_model, to_xgboost, to_xgboost_ltr

from .engines import left_first_leaf, ltr_plugin_raw_scores, ltr_plugin_scores
from .models import ESTIMATORS, at_thresholds, check_float32_engine, fitted, missing_data, mq2008_fold1, parametrized

xgboost = pytest.importorskip("xgboost", reason="the XGBoost parity tests need xgboost (forestrank[test])")


def _scored_rows(model, X):
    return np.vstack([X, at_thresholds(model, X)]).astype(np.float32)


def check_all_xgboost_formats(model: object, X32: np.ndarray, tmp_path) -> None:
    names = [f"feature_{index}" for index in range(model.n_features_in_)]
    path = export_model(model, tmp_path / "model.json", format="xgboost")
    booster = xgboost.Booster()
    booster.load_model(str(path))
    matrix = xgboost.DMatrix(X32)
    leaves = booster.predict(matrix, pred_leaf=True).reshape(len(X32), -1).astype(np.int64)
    check_float32_engine(booster.predict(matrix), leaves, model, X32, lambda tree, nodes: nodes)
    raw = json.loads(json.dumps(to_xgboost(model, feature_names=names)))
    check_float32_engine(*ltr_plugin_raw_scores(raw, X32, names), model, X32, left_first_leaf)
    dump = json.loads(json.dumps(to_xgboost_ltr(model, feature_names=names)))
    check_float32_engine(*ltr_plugin_scores(dump, X32, names), model, X32, left_first_leaf)


@pytest.mark.parametrize("name", parametrized(ESTIMATORS))
def test_missing_values_and_values_at_thresholds_take_forestranks_branches(name, tmp_path):
    X, _, _ = missing_data()
    model = fitted(name, "missing")
    check_all_xgboost_formats(model, _scored_rows(model, X), tmp_path)


@pytest.mark.dataset
@pytest.mark.parametrize("name", parametrized(ESTIMATORS))
def test_xgboost_and_the_ltr_plugins_score_mq2008_as_forestrank(name, mq2008, tmp_path):
    model = fitted(name, "mq2008", str(mq2008 / "Fold1"))
    X_test = mq2008_fold1(str(mq2008 / "Fold1"))[1][0]
    check_all_xgboost_formats(model, _scored_rows(model, X_test), tmp_path)


def test_the_model_file_carries_the_feature_names_and_no_base_score():
    model = fitted("IGBRT", "missing")
    names = [f"feature_{index}" for index in range(model.n_features_in_)]
    booster = xgboost.Booster()
    booster.load_model(bytearray(json.dumps(to_xgboost(model, feature_names=names)).encode()))
    assert booster.feature_names == names
    config = json.loads(booster.save_config())["learner"]["learner_model_param"]
    assert float(config["base_score"].strip("[]")) == 0.0  # the baseline is in the first tree: the plugins have no base


def test_the_boosters_gain_importance_is_forestranks():
    """Every loss_change was 0: XGBoost's gain and total_gain importances were all zero."""
    model = fitted("LambdaMART lambdarank", "missing")
    names = [f"f{index}" for index in range(model.n_features_in_)]
    booster = xgboost.Booster()
    booster.load_model(bytearray(json.dumps(to_xgboost(model, feature_names=names)).encode()))
    total = booster.get_score(importance_type="total_gain")
    gains = np.sum([tree.feature_gains for tree in model.trees_], axis=0)
    np.testing.assert_allclose([total.get(name, 0.0) for name in names], gains, rtol=1e-6)


def test_the_plugins_dump_holds_only_the_fields_their_parser_accepts():
    model = fitted("RF-point three-way", "missing")
    names = [f"feature_{index}" for index in range(model.n_features_in_)]
    definition = to_xgboost_ltr(model, feature_names=names)
    assert definition["objective"] == "reg:linear"
    stack = list(definition["splits"])
    while stack:
        node = stack.pop()
        if "leaf" in node:
            assert set(node) == {"nodeid", "leaf"}
        else:
            assert set(node) == {"nodeid", "depth", "split", "split_condition", "yes", "no", "missing", "children"}
            stack += node["children"]


@pytest.mark.parametrize("format", ["xgboost", "xgboost-ltr", "solr"])
def test_non_ascii_feature_names_are_written_as_utf8(format, tmp_path):
    """The file held "caf\\u00e9", which XGBoost keeps as those characters: predicting a
    DataFrame with the column "café" failed with "feature_names mismatch"."""
    pandas = pytest.importorskip("pandas")
    from forestrank import LambdaMART, make_ranking

    X, y, qid = make_ranking(30, (5, 15), 3, random_state=0)
    frame = pandas.DataFrame(X, columns=["café", "naïve", "日本"])
    model = LambdaMART(n_estimators=5, random_state=0).fit(frame, y, qid=qid)
    path = export_model(model, tmp_path / "model.json", format=format)
    text = path.read_text(encoding="utf-8")
    assert "café" in text and "日本" in text and "\\u" not in text
    if format == "xgboost":
        booster = xgboost.Booster()
        booster.load_model(str(path))
        assert booster.feature_names == ["café", "naïve", "日本"]
        np.testing.assert_allclose(booster.predict(xgboost.DMatrix(frame)), model.predict(frame), rtol=1e-5, atol=1e-6)


def test_names_xgboost_refuses_are_refused_and_spaces_kept():
    """XGBoost refuses feature names holding "[", "]" or "<" when it reads a DMatrix with
    names (the way to score a model with them): the file was written all the same. A
    space, which XGBoost takes, is kept."""
    xgboost = pytest.importorskip("xgboost")
    model = fitted("RF-point", "missing")
    X = missing_data()[0]
    names = [f"feature {index}" for index in range(model.n_features_in_)]
    booster = xgboost.Booster()
    booster.load_model(bytearray(json.dumps(to_xgboost(model, feature_names=names)).encode()))
    scores = booster.predict(xgboost.DMatrix(X, feature_names=names, missing=np.nan))
    np.testing.assert_allclose(scores, model.predict(X), rtol=1e-5, atol=1e-6)
    for bad in ("price<10", "title[0]"):
        with pytest.raises(ValueError, match=re.escape(f"XGBoost feature names hold no '[' or ']' or '<'; got {bad!r}")):
            to_xgboost(model, feature_names=[bad, *names[1:]])


def test_a_sparse_matrix_reads_absent_entries_as_missing_in_xgboost_as_the_page_says(tmp_path):
    """docs/serving.md ("XGBoost"): forestrank reads an absent sparse entry as 0, XGBoost
    as missing, so sparse rows score otherwise there and their dense form as forestrank."""
    import scipy.sparse as sp

    from forestrank import LambdaMART

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    X[rng.random(X.shape) < 0.4] = 0.0
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0], nan=-5.0) > 0).astype(int) + (X[:, 1] == 0)
    model = LambdaMART(n_estimators=5, random_state=0).fit(X, y, qid=np.repeat(np.arange(30), 20))
    sparse = sp.csr_matrix(np.nan_to_num(X[:50]))
    booster = xgboost.Booster()
    booster.load_model(str(export_model(model, tmp_path / "model.json", format="xgboost")))
    expected = model.predict(sparse)
    np.testing.assert_allclose(booster.predict(xgboost.DMatrix(sparse.toarray())), expected, rtol=0, atol=1e-5)
    assert np.abs(booster.predict(xgboost.DMatrix(sparse)) - expected).max() > 0.1
