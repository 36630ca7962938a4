"""A Pipeline of QueryScaler and a ranker exported: the normalisation recorded where the
format can hold it, computed by the ONNX graph one query at a time, refused by name where
the engine cannot apply it."""

import json

import numpy as np
import pytest
import sklearn
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from forestrank import LambdaMART, QueryScaler, make_ranking
from forestrank.export import dump_trees, export_model, to_lightgbm, to_onnx, to_solr, to_xgboost, to_xgboost_ltr

from .models import float32_sum_bound

STATISTICS = ("mean", "max", "min", "std")


@pytest.fixture(scope="module")
def data():
    """Queries of 25 documents with missing values, a feature missing in a whole query, one
    constant in a query and one with ties."""
    X, y, qid = make_ranking(n_queries=24, docs_per_query=25, n_features=5, random_state=0)
    X[np.random.default_rng(1).random(X.shape) < 0.1] = np.nan
    X[:25, 2] = np.nan
    X[25:50, 3] = 1.5
    X[50:75, 1] = np.round(X[50:75, 1])
    return X, y, qid


def pipeline(data, method="minmax", query_features=()):
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        scaler = QueryScaler(method=method, query_features=query_features)
        return make_pipeline(scaler, LambdaMART(n_estimators=8, random_state=0)).fit(X, y, qid=qid)


def each_query(qid):
    for query in np.unique(qid):
        yield qid == query


@pytest.mark.parametrize("query_features", [(), STATISTICS])
@pytest.mark.parametrize("method", ["minmax", "zscore", "rank"])
def test_the_onnx_graph_normalises_each_query_as_the_scaler_does(data, method, query_features):
    """The graph's normalised features (exposed as an output here) are the scaler's for
    each query given alone, missing values where they were; its scores are the pipeline's
    on the same input values up to the float32 rounding of the operator's output: the
    trees compare the normalised doubles, whatever the input's type."""
    onnxruntime = pytest.importorskip("onnxruntime", reason="ONNX export needs forestrank[onnx]")
    from onnx import TensorProto, helper

    X, _, qid = data
    model = pipeline(data, method, query_features)
    for dtype in (np.float64, np.float32):
        graph = to_onnx(model, dtype=dtype)
        graph.graph.output.append(helper.make_tensor_value_info("normalised", TensorProto.DOUBLE, None))
        session = onnxruntime.InferenceSession(graph.SerializeToString())
        for rows in each_query(qid):
            features = X[rows].astype(dtype)
            scores, normalised = session.run(None, {"X": features})
            expected = model[0].transform(features, qid=qid[rows])
            np.testing.assert_allclose(normalised, expected, rtol=1e-12, atol=1e-15)
            np.testing.assert_array_equal(np.isnan(normalised), np.isnan(expected))
            with sklearn.config_context(enable_metadata_routing=True):
                pipeline_scores = model.predict(features, qid=qid[rows])
            error = np.abs(scores.astype(np.float64) - pipeline_scores)
            assert np.all(error <= float32_sum_bound(model[-1], expected) + 2.0**-24 * np.abs(scores)), error.max()
        assert json.loads(graph.metadata_props[-1].value)["method"] == method


@pytest.mark.parametrize("scale", [1e200, 1e-170, 1e300, 1e-300])
@pytest.mark.parametrize(("method", "query_features"), [("zscore", ()), ("minmax", STATISTICS), ("rank", ("std", "mean"))])
def test_the_graph_normalises_values_whose_squares_or_sums_leave_float64(data, scale, method, query_features):
    """The graph squared the raw deviations and summed the raw values: past 1.3e154 the
    standard deviation was inf (z-scores of 0, an inf query feature), below 1e-162 it was
    0 (z-scores of inf), near 1e308 sums and spreads overflowed. QueryScaler scales each
    feature by a power of two first (preprocessing._magnitudes): so does the graph now."""
    onnxruntime = pytest.importorskip("onnxruntime", reason="ONNX export needs forestrank[onnx]")
    from onnx import TensorProto, helper

    X, _, qid = data
    model = pipeline(data, method, query_features)
    graph = to_onnx(model)
    graph.graph.output.append(helper.make_tensor_value_info("normalised", TensorProto.DOUBLE, None))
    session = onnxruntime.InferenceSession(graph.SerializeToString())
    for rows in list(each_query(qid))[:4]:
        features = X[rows] / np.nanmax(np.abs(X[rows])) * scale  # values within a factor of 2**64 of the scale
        scores, normalised = session.run(None, {"X": features})
        expected = model[0].transform(features, qid=qid[rows])
        assert np.isfinite(expected[~np.isnan(expected)]).all()
        width = X.shape[1]  # the normalised columns, then the statistics, in the features' unit
        np.testing.assert_allclose(normalised[:, :width], expected[:, :width], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(normalised[:, width:], expected[:, width:], rtol=1e-12, atol=1e-15 * scale)
        np.testing.assert_array_equal(np.isnan(normalised), np.isnan(expected))
        for position, name in enumerate(query_features, start=1):  # the extremes are the raw values, exactly
            if name in ("min", "max"):
                columns = slice(position * width, (position + 1) * width)
                np.testing.assert_array_equal(normalised[:, columns], expected[:, columns])
    if "min" in query_features:
        spanning = X[next(each_query(qid))].copy()
        spanning[:, 0] = np.abs(spanning[:, 0]) * 1e300 + 1e299
        spanning[1, 0] = 2e-301  # the minimum, which scaled by 2**-996 underflows: it is taken unscaled
        minimum = slice((query_features.index("min") + 1) * width, (query_features.index("min") + 2) * width)
        graph_minimum = session.run(None, {"X": spanning})[1][:, minimum]
        np.testing.assert_array_equal(graph_minimum, model[0].transform(spanning, qid=np.zeros(len(spanning)))[:, minimum])


def test_a_float32_graph_takes_the_pipelines_branches_at_normalised_values_next_to_a_threshold():
    """Rounded features give z-scores that recur across queries, one a double's last bit
    above a threshold the fit took from another query: cast to float32 by nearest rounding
    before the trees, it fell on the threshold and went left, where the pipeline goes
    right (scores 0.28 apart)."""
    onnxruntime = pytest.importorskip("onnxruntime", reason="ONNX export needs forestrank[onnx]")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    X[rng.random((300, 3)) < 0.2] = np.nan
    X[:, 2] = np.round(X[:, 2])
    X = X.astype(np.float32).astype(np.float64)  # values a float32 input holds exactly
    y, qid = rng.integers(0, 3, 300), rng.integers(0, 30, 300)
    with sklearn.config_context(enable_metadata_routing=True):
        model = make_pipeline(
            QueryScaler(method="zscore", query_features=("max",)), LambdaMART(5, min_samples_leaf=5, random_state=0)
        ).fit(X, y, qid=qid)
        session = onnxruntime.InferenceSession(to_onnx(model, dtype=np.float32).SerializeToString())
        rounded_apart = 0.0  # how far the trees score the normalised values rounded to float32
        for rows in each_query(qid):
            (scores,) = session.run(None, {"X": X[rows].astype(np.float32)})
            expected = model.predict(X[rows], qid=qid[rows])
            normalised = model[0].transform(X[rows], qid=qid[rows])
            bound = float32_sum_bound(model[-1], normalised) + 2.0**-24 * np.abs(scores)
            assert np.all(np.abs(scores - expected) <= bound), np.abs(scores - expected).max()
            rounded = model[-1].predict(normalised.astype(np.float32).astype(np.float64))
            rounded_apart = max(rounded_apart, float(np.abs(rounded - expected).max()))
    assert rounded_apart > 0.1  # the set still holds a value that rounding moves across a threshold


def test_an_export_renames_the_features_of_a_pipeline_fitted_on_a_dataframe(data):
    """An engine's feature store may name the columns otherwise than the frame did: the
    export takes other names, which ``get_feature_names_out`` (scikit-learn's rule) refuses."""
    pandas = pytest.importorskip("pandas")
    X, y, qid = data
    frame = pandas.DataFrame(X, columns=list("vwxyz"))
    with sklearn.config_context(enable_metadata_routing=True):
        model = make_pipeline(QueryScaler(query_features=("mean",)), LambdaMART(n_estimators=3, random_state=0))
        model.fit(frame, y, qid=qid)
    assert "feature_names=v w x y z v_query_mean" in to_lightgbm(model)
    assert "feature_names=a b c d e a_query_mean" in to_lightgbm(model, feature_names=list("abcde"))
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        model[0].get_feature_names_out(list("abcde"))


def test_lightgbm_and_xgboost_files_record_the_normalisation_and_score_normalised_features(data):
    lightgbm = pytest.importorskip("lightgbm", reason="the LightGBM export is checked with lightgbm")
    xgboost = pytest.importorskip("xgboost", reason="the XGBoost export is checked with xgboost")
    X, _, qid = data
    model = pipeline(data, "zscore", ("mean", "max"))
    normalised = model[0].transform(X, qid=qid)
    expected = {"method": "zscore", "query_features": ["mean", "max"], "n_features_in": 5}

    text = to_lightgbm(model, feature_names=list("abcde"))
    (line,) = [line for line in text.splitlines() if line.startswith("forestrank_query_normalisation=")]
    assert json.loads(line.partition("=")[2]).items() >= expected.items()
    assert "feature_names=a b c d e a_query_mean b_query_mean c_query_mean d_query_mean e_query_mean" in text
    np.testing.assert_array_equal(lightgbm.Booster(model_str=text).predict(normalised), model[-1].predict(normalised))

    booster = xgboost.Booster()
    booster.load_model(bytearray(json.dumps(to_xgboost(model)).encode()))
    assert json.loads(booster.attr("forestrank_query_normalisation")).items() >= expected.items()
    scores = booster.predict(xgboost.DMatrix(normalised.astype(np.float32)))
    error = np.abs(scores - model[-1].predict(normalised.astype(np.float32)))
    assert np.all(error <= float32_sum_bound(model[-1], normalised.astype(np.float32))), error.max()

    dump = dump_trees(model)
    assert dump["query_normalisation"].items() >= expected.items()
    assert dump["trees"] == dump_trees(model[-1])["trees"]


def test_export_model_names_the_onnx_input_by_the_raw_columns(data, tmp_path):
    pytest.importorskip("onnx", reason="ONNX export needs forestrank[onnx]")
    import onnx

    model = pipeline(data, "minmax", ("mean",))
    path = export_model(model, tmp_path / "model.onnx", format="onnx", feature_names=list("abcde"))
    metadata = {entry.key: entry.value for entry in onnx.load(path).metadata_props}
    assert json.loads(metadata["feature_names"]) == list("abcde")
    assert json.loads(metadata["forestrank_query_normalisation"])["query_features"] == ["mean"]


def test_engines_without_a_view_of_the_query_and_other_pipelines_are_refused_by_name(data):
    X, y, qid = data
    model = pipeline(data)
    names = list("abcde")
    with pytest.raises(ValueError, match="Solr's MultipleAdditiveTreesModel scores each document on its own"):
        to_solr(model, feature_names=names)
    with pytest.raises(ValueError, match="XGBoost's model for the LTR plugins scores each document on its own"):
        to_xgboost_ltr(model, feature_names=names)
    with pytest.raises(ValueError, match="feature_names name the pipeline's input columns: 5 names; got 4"):
        to_lightgbm(model, feature_names=names[:4])
    with sklearn.config_context(enable_metadata_routing=True):
        other = make_pipeline(StandardScaler(), LambdaMART(n_estimators=2, random_state=0)).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match=r"transformers are: standardscaler \(StandardScaler\)"):
        to_lightgbm(other)
