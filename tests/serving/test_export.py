"""Exports by name, and the exports a format or a model cannot take, refused by name."""

import json

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import NotFittedError

from forestrank import LambdaMART, RFPointRanker, make_ranking
from forestrank.export import FORMATS, export_model, to_lightgbm, to_onnx, to_solr, to_xgboost, to_xgboost_ltr

from .models import fitted

SUM_OF_TREES_FORMATS = {
    "LightGBM's model format": to_lightgbm, "XGBoost's model": to_xgboost, "XGBoost's model for the LTR plugins": to_xgboost_ltr,
    "Solr's MultipleAdditiveTreesModel": to_solr,
}  # fmt: skip
NAMES = [f"feature_{index}" for index in range(8)]


@pytest.mark.parametrize("format_name", SUM_OF_TREES_FORMATS)
def test_mcrank_is_refused_by_formats_that_score_one_sum_of_trees(format_name):
    with pytest.raises(ValueError, match=f"{format_name}.* cannot express McRank.*to_onnx"):
        SUM_OF_TREES_FORMATS[format_name](fitted("McRank", "missing"), feature_names=NAMES)


@pytest.mark.parametrize("export", [*SUM_OF_TREES_FORMATS.values(), to_onnx])
def test_what_is_not_a_fitted_forestrank_ranker_is_refused(export):
    with pytest.raises(TypeError, match="must be a fitted forestrank ranker"):
        export(RandomForestRegressor())
    with pytest.raises(NotFittedError):
        export(RFPointRanker())


def test_cumulative_and_a_mcrank_init_are_refused():
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
    cumulative = LambdaMART(n_estimators=2, objective="cumulative", random_state=0).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="objective='cumulative'"):
        to_lightgbm(cumulative)
    mcrank = LambdaMART(n_estimators=2, objective="mcrank", random_state=0).fit(X, y, qid=qid)
    model = LambdaMART(n_estimators=2, objective="mart", init=mcrank, random_state=0).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="init is a McRank model"):
        to_onnx(model)


@pytest.mark.parametrize(
    ("names", "error", "message"),
    [
        (NAMES[:-1], ValueError, "feature_names has 7 names; the model has 8 features"),
        (NAMES[:-1] + ["feature_0"], ValueError, "must be distinct; 'feature_0' repeats"),
        (NAMES[:-1] + [""], ValueError, "non-empty"),
        ("feature_0", TypeError, "sequence of 8 strings"),
        (list(range(8)), TypeError, "sequence of 8 strings"),
        (3, TypeError, "sequence of 8 strings"),  # "'int' object is not iterable"
    ],
)
@pytest.mark.parametrize("export", [*SUM_OF_TREES_FORMATS.values()])
def test_bad_feature_names_are_refused_by_name(export, names, error, message):
    with pytest.raises(error, match=message):
        export(fitted("RF-point", "missing"), feature_names=names)


@pytest.mark.parametrize("name", ["two words", 'a"quote', "a,comma", "back\\slash"])
def test_lightgbm_refuses_names_its_names_line_cannot_hold(name):
    names = NAMES[:-1] + [name]
    with pytest.raises(ValueError, match="LightGBM feature names hold no whitespace or '\"'"):
        to_lightgbm(fitted("RF-point", "missing"), feature_names=names)
    assert to_solr(fitted("RF-point", "missing"), feature_names=names)["features"][-1] == {"name": name}


@pytest.mark.parametrize("export", [to_solr, to_xgboost_ltr])
def test_engines_that_find_features_by_name_need_names(export):
    with pytest.raises(ValueError, match="feature_names are needed"):
        export(fitted("RF-point", "missing"))


def test_names_the_model_was_fitted_with_are_used():
    pandas = pytest.importorskip("pandas")
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=3, random_state=0)
    frame = pandas.DataFrame(X, columns=["bm25", "pagerank", "clicks"])
    model = RFPointRanker(n_estimators=2, random_state=0).fit(frame, y, qid=qid)
    assert [feature["name"] for feature in to_solr(model)["features"]] == ["bm25", "pagerank", "clicks"]
    assert "feature_names=bm25 pagerank clicks" in to_lightgbm(model)


@pytest.mark.parametrize("format", FORMATS)
def test_export_model_writes_each_format(format, tmp_path):
    model = fitted("LambdaMART lambdarank", "missing")
    if format == "onnx":
        pytest.importorskip("onnx", reason="ONNX export needs forestrank[onnx]")
    path = export_model(model, tmp_path / "model", format=format, feature_names=NAMES, dtype="float32")
    content = path.read_bytes()
    if format == "onnx":
        import onnx

        onnx_model = onnx.load_from_string(content)
        assert json.loads(onnx_model.metadata_props[0].value) == NAMES
        assert onnx_model.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    elif format == "lightgbm":
        assert content.decode("utf-8") == to_lightgbm(model, feature_names=NAMES)
    else:  # the format's own document, not another's
        documents = {"xgboost": to_xgboost, "xgboost-ltr": to_xgboost_ltr, "solr": to_solr}
        assert json.loads(content) == documents[format](model, feature_names=NAMES)


def test_an_unknown_format_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="format must be one of lightgbm, xgboost, xgboost-ltr, solr, onnx; got 'pmml'"):
        export_model(fitted("RF-point", "missing"), tmp_path / "model", format="pmml")
    assert not (tmp_path / "model").exists()


FLOAT32_FORMATS = {**{name: export for name, export in SUM_OF_TREES_FORMATS.items() if export is not to_lightgbm},
                   "ONNX's TreeEnsembleRegressor": to_onnx}  # fmt: skip


@pytest.mark.parametrize("format_name", FLOAT32_FORMATS)
def test_a_model_whose_scores_overflow_float32_is_refused_by_float32_formats(format_name):
    """Exponential gains of grades up to 134 give finite float64 scores beyond the largest
    float32: ONNX scored every row inf and Solr wrote "Infinity" leaves, without a word."""
    X, y, qid = make_ranking(30, (5, 15), 8, random_state=0)
    y = np.where(y > 0, y + 130, 0)
    model = LambdaMART(n_estimators=5, objective="mart", target="exp_gain", random_state=0).fit(X, y, qid=qid)
    scores = model.predict(X)
    assert np.isfinite(scores).all() and np.abs(scores).max() > np.finfo(np.float32).max
    export = FLOAT32_FORMATS[format_name]
    kwargs = {} if export is to_onnx else {"feature_names": NAMES}
    with pytest.raises(ValueError, match=f"{format_name} holds scores in float32 .* can reach 5.79e\\+39"):
        export(model, **kwargs)
    if format_name == "ONNX's TreeEnsembleRegressor":
        with pytest.raises(ValueError, match="holds scores in float32"):
            export(model, dtype="float32")


def test_solr_refuses_leaves_that_overflow_float32_apart_from_their_tree_weights():
    """A forest of exponential gains with one document of grade 128: every score (a mean of 10
    trees) is below the largest float32, but Solr holds each tree's leaves apart from its
    weight (0.1), and leaves of 2**128 were written as "Infinity", scoring rows inf. ONNX,
    which folds the weights into the leaves, still takes the model."""
    X, y, qid = make_ranking(30, (5, 15), 8, random_state=0)
    y[5] = 128
    model = RFPointRanker(n_estimators=10, relevance_weights="exp", random_state=0).fit(X, y, qid=qid)
    leaves = np.concatenate([tree.nodes["threshold"][tree.nodes["feature"] < 0] for tree in model.trees_])
    assert np.abs(model.predict(X)).max() <= np.finfo(np.float32).max < np.abs(leaves).max()
    with pytest.raises(ValueError, match="Solr's MultipleAdditiveTreesModel holds scores in float32 .*, its leaves too, apart from each tree weight"):
        to_solr(model, feature_names=NAMES)
    to_onnx(model)


def test_a_model_whose_scores_overflow_float32_exports_to_lightgbm_in_doubles():
    lightgbm = pytest.importorskip("lightgbm")
    X, y, qid = make_ranking(30, (5, 15), 8, random_state=0)
    y = np.where(y > 0, y + 130, 0)
    model = LambdaMART(n_estimators=5, objective="mart", target="exp_gain", random_state=0).fit(X, y, qid=qid)
    booster = lightgbm.Booster(model_str=to_lightgbm(model))
    np.testing.assert_allclose(booster.predict(X), model.predict(X), rtol=1e-12)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda model: to_onnx(model, name=123), TypeError, "name must be a string .*ONNX.*got int"),
        (lambda model: to_onnx(model, name=""), ValueError, "name must be a non-empty string"),
        (lambda model: to_solr(model, name="", feature_names=NAMES), ValueError, "name must be a non-empty string"),
        (lambda model: to_solr(model, store="a\0b", feature_names=NAMES), ValueError, "without NUL"),
        (lambda model: to_lightgbm(model, feature_names=["a\0"] + NAMES[1:]), ValueError, "feature_names hold no NUL"),
        (lambda model: to_xgboost(model, feature_names=["a\0"] + NAMES[1:]), ValueError, "feature_names hold no NUL"),
    ],
)
def test_names_the_engines_cannot_hold_are_refused_by_name(call, error, message):
    """ONNX's name=123 raised an opaque TypeError and "" a checker error; Solr took "" and
    every format a NUL inside a feature name."""
    with pytest.raises(error, match=message):
        call(fitted("RF-point", "missing"))


@pytest.mark.parametrize("format", FORMATS)
def test_export_model_checks_dtype_and_name_for_every_format(format, tmp_path):
    """``dtype`` was read by the ONNX export only, so any value passed for the others."""
    model = fitted("RF-point", "missing")
    for dtype in ("int8", None):  # numpy reads None as float64
        with pytest.raises(ValueError, match="dtype must be float64 or float32"):
            export_model(model, tmp_path / "model", format=format, feature_names=NAMES, dtype=dtype)
    # A name is checked where the format carries one, and refused where it carries none
    # (it was accepted and dropped).
    named = format in ("solr", "onnx")
    message = "name must be a non-empty string" if named else f"a {format} file carries none: drop name"
    for name in ("",) if named else ("", "ranker"):
        with pytest.raises(ValueError, match=message):
            export_model(model, tmp_path / "model", format=format, feature_names=NAMES, name=name)
    assert not (tmp_path / "model").exists()


@pytest.mark.slow  # 600 distinct values: exact uint16 bins, a builder of their own
def test_trees_deeper_than_nested_json_holds_are_refused_by_the_nested_formats(tmp_path):
    """A tree 599 levels deep failed the LTR plugins' dump (from about 500 levels) and
    Solr's JSON (from about 1,000) with Python's RecursionError, which the command line
    showed as an internal error; the flat formats write it."""
    n = 600
    x = np.arange(n, dtype=float)[:, None]
    y = np.arange(n) % 2  # alternating grades: every row a split
    model = RFPointRanker(n_estimators=1, bootstrap=False, max_features=1.0, max_bins=None, random_state=0)
    model.fit(x, y, qid=np.zeros(n))
    assert model.trees_[0].node_depths().max() == n - 1
    for format_name in ("solr", "xgboost-ltr"):
        with pytest.raises(ValueError, match="599 levels deep, and .* at most 400 levels are written"):
            export_model(model, tmp_path / f"{format_name}.json", format=format_name, feature_names=["x"])
    export_model(model, tmp_path / "model.txt", format="lightgbm")
    shallow = RFPointRanker(n_estimators=1, bootstrap=False, max_depth=400, max_bins=None, random_state=0).fit(x, y, qid=np.zeros(n))
    json.loads(export_model(shallow, tmp_path / "ltr.json", format="xgboost-ltr", feature_names=["x"]).read_text())


def test_a_calibrated_ranker_exports_its_rankers_scores():
    """CalibratedRanker.predict is its ranker's scores: every format writes that ranker,
    alone or as a QueryScaler pipeline's last step, and LightGBM scores as predict."""
    lightgbm = pytest.importorskip("lightgbm")
    import sklearn
    from sklearn.pipeline import make_pipeline

    from forestrank import CalibratedRanker, QueryScaler

    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=4, random_state=0)
    calibrated = CalibratedRanker(LambdaMART(n_estimators=5, random_state=0), cv=2).fit(X, y, qid=qid)
    for export in [to_lightgbm, to_xgboost, to_xgboost_ltr, to_solr]:
        names = [f"f{index}" for index in range(4)]
        assert export(calibrated, feature_names=names) == export(calibrated.estimator_, feature_names=names)
    booster = lightgbm.Booster(model_str=to_lightgbm(calibrated))
    np.testing.assert_allclose(booster.predict(X), calibrated.predict(X), rtol=1e-12, atol=1e-12)
    with sklearn.config_context(enable_metadata_routing=True):
        ranker = CalibratedRanker(LambdaMART(n_estimators=5, random_state=0).set_fit_request(qid=True), cv=2)
        ranker.set_predict_request(qid=True)
        scaled = make_pipeline(QueryScaler(), ranker).fit(X, y, qid=qid)
        plain = make_pipeline(QueryScaler(), LambdaMART(n_estimators=5, random_state=0)).fit(X, y, qid=qid)
    assert to_lightgbm(scaled) == to_lightgbm(plain)
    with pytest.raises(NotFittedError):
        to_lightgbm(CalibratedRanker(LambdaMART()))


def test_what_reads_a_models_trees_points_a_calibrated_ranker_at_its_ranker():
    from forestrank import CalibratedRanker
    from forestrank.explain import shap_tree_model

    X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=4, random_state=0)
    calibrated = CalibratedRanker(LambdaMART(n_estimators=3, random_state=0), cv=2).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match=r"got CalibratedRanker\. Its trees are its ranker's: pass model\.estimator_\."):
        shap_tree_model(calibrated)
    with pytest.raises(TypeError, match=r"got RandomForestRegressor\.$"):
        shap_tree_model(RandomForestRegressor().fit(X, y))


def test_exported_symmetric_trees_give_treeshap_contributions_that_sum_to_predict():
    """A symmetric tree's leaves that no training row reaches were written with a count
    and cover of 0: LightGBM's contributions came out NaN and XGBoost's TreeSHAP failed."""
    lightgbm = pytest.importorskip("lightgbm")
    xgboost = pytest.importorskip("xgboost")
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=4, random_state=0)
    model = LambdaMART(n_estimators=5, grow_policy="symmetric", max_depth=4, random_state=0).fit(X, y, qid=qid)
    assert any((tree.n_node_samples == 0).any() for tree in model.trees_)  # the case this tests
    contributions = lightgbm.Booster(model_str=to_lightgbm(model)).predict(X, pred_contrib=True)
    np.testing.assert_allclose(contributions.sum(axis=1), model.predict(X), rtol=1e-9, atol=1e-9)
    booster = xgboost.Booster()
    booster.load_model(bytearray(json.dumps(to_xgboost(model)).encode()))
    contributions = booster.predict(xgboost.DMatrix(X), pred_contribs=True)
    np.testing.assert_allclose(contributions.sum(axis=1), model.predict(X), rtol=1e-5, atol=1e-5)
