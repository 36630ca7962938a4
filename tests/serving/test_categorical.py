"""Categorical splits served: LightGBM's and XGBoost's predictors, Treelite and onnxruntime,
on the exported files, reach forestrank's leaves and give its scores on rows with seen, unseen,
negative and missing categories; the JSON dump and the tree plot write the sets; the
formats without a test of set membership refuse such models by name."""

import json
import re

import numpy as np
import pytest

from forestrank import LambdaMART, RFPointRanker
from forestrank.export import dump_trees, to_lightgbm, to_onnx, to_solr, to_xgboost, to_xgboost_ltr
from forestrank.serving._terms import export_tree

from .models import check_float32_engine, float32_sum_bound

CARDINALITIES = (150, 5)  # the first column's codes need three bitmap words, the second one-vs-rest splits


def _data(seed=0, n_queries=80, size=30):
    """Two categorical columns (codes with gaps, some missing) and two numeric ones."""
    rng = np.random.default_rng(seed)
    n = n_queries * size
    qid = np.repeat(np.arange(n_queries), size)
    columns = []
    latent = rng.normal(size=n)
    for cardinality in CARDINALITIES:
        codes = 2 * rng.integers(0, cardinality // 2, n).astype(float)  # the odd codes are never seen
        latent += rng.normal(size=cardinality)[codes.astype(int)]
        codes[rng.random(n) < 0.08] = np.nan
        columns.append(codes)
    X = np.column_stack([*columns, latent + rng.normal(scale=0.5, size=n), rng.normal(size=n)])
    y = np.digitize(latent, np.quantile(latent, [0.5, 0.8, 0.95])).astype(float)
    return X, y, qid


def _served_rows(X):
    """The training rows, then each categorical column at unseen codes (between the seen
    ones and past the largest), negative codes and NaN."""
    rng = np.random.default_rng(1)
    rows = [X]
    for column in range(len(CARDINALITIES)):
        for value in (1.0, 3.0, 151.0, 1000.0, 65_535.0, -1.0, -7.0, np.nan):
            changed = X[rng.choice(len(X), 40, replace=False)].copy()
            changed[:, column] = value
            rows.append(changed)
    return np.vstack(rows)


MODELS = {
    "LambdaMART": lambda: LambdaMART(
        n_estimators=25, max_leaf_nodes=15, categorical_features=[0, 1], min_data_per_group=20, random_state=0
    ),
    "RFPointRanker": lambda: RFPointRanker(n_estimators=8, categorical_features=[0, 1], random_state=0),
}


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request):
    X, y, qid = _data()
    return MODELS[request.param]().fit(X, y, qid)


def test_the_models_split_on_categories_with_missing_values_on_either_side(model):
    """The fixtures exercise both forms of the exported set test: missing values on
    forestrank's left child and on its right child, sets of more than one word."""
    trees = [export_tree(tree, weight) for tree, weight, _ in model._additive_terms()[0]]
    categorical = [(tree, node) for tree in trees for node in np.flatnonzero(tree.is_categorical)]
    sides = {bool(tree.missing_left[node]) for tree, node in categorical}
    assert sides == {False, True}
    assert max(len(tree.category_left[node]) for tree, node in categorical) > 64


def test_lightgbm_reaches_forestranks_leaves(model):
    """LightGBM numbers a tree's leaves in forestrank's node order: the same leaf in
    every tree, and the score to the rounding of the folded leaves (bitwise for a forest)."""
    lightgbm = pytest.importorskip("lightgbm")
    X = _served_rows(_data()[0])
    booster = lightgbm.Booster(model_str=to_lightgbm(model))
    leaves = booster.predict(X, pred_leaf=True).reshape(len(X), -1)
    for index, (tree, _, _) in enumerate(model._additive_terms()[0]):
        leaf_rank = np.cumsum(tree.nodes["feature"] < 0) - 1
        np.testing.assert_array_equal(leaves[:, index], leaf_rank[tree.apply(X)], err_msg=f"tree {index}")
    np.testing.assert_allclose(booster.predict(X), model.predict(X), rtol=1e-9, atol=1e-12)


def test_treelite_scores_the_lightgbm_file_as_forestrank(model, tmp_path):
    from .test_lightgbm import assert_treelite_equals_forestrank

    path = tmp_path / "model.txt"
    path.write_text(to_lightgbm(model))
    assert_treelite_equals_forestrank(path, model, _served_rows(_data()[0]))


def _xgboost_ids(tree, nodes):
    """XGBoost's ids of forestrank's nodes: forestrank's own, but that the two children of a
    categorical split whose missing values go right trade ids (XGBoost's left child is the
    side of values not in the set, and its right child is always ``left + 1``)."""
    exported = export_tree(tree, 1.0)
    ids = np.arange(len(exported.feature))
    for node in np.flatnonzero(exported.is_categorical & ~exported.missing_left):
        left = exported.left[node]
        ids[left], ids[left + 1] = left + 1, left
    return ids[nodes]


def test_xgboost_reaches_forestranks_leaves(model):
    """XGBoost's predictor on float32 rows: the leaf of every tree and the float32 sum."""
    xgboost = pytest.importorskip("xgboost")
    X32 = _served_rows(_data()[0]).astype(np.float32)
    booster = xgboost.Booster()
    booster.load_model(bytearray(json.dumps(to_xgboost(model)).encode()))
    matrix = xgboost.DMatrix(X32)
    leaves = booster.predict(matrix, pred_leaf=True).reshape(len(X32), -1).astype(np.int64)
    check_float32_engine(booster.predict(matrix), leaves, model, X32, _xgboost_ids)
    assert json.loads(booster.save_config())  # loads, and keeps the feature types
    assert booster.feature_types == ["c", "c", "float", "float"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_onnxruntime_scores_as_forestrank(model, dtype):
    """The chains of equality tests give forestrank's scores, within the float32 sum's rounding."""
    onnxruntime = pytest.importorskip("onnxruntime")
    X = _served_rows(_data()[0]).astype(dtype)
    session = onnxruntime.InferenceSession(to_onnx(model, dtype=dtype).SerializeToString())
    scores = session.run(None, {"X": X})[0].astype(np.float64)
    assert np.all(np.abs(scores - model.predict(X)) <= float32_sum_bound(model, X))


def test_the_dump_sends_the_listed_codes_away_from_missing_values(model):
    """An evaluator of the dump's rule, written from its ``"rule"`` text, scores as forestrank."""
    dump = json.loads(json.dumps(dump_trees(model), allow_nan=False))
    X = _served_rows(_data()[0])

    def leaf(nodes, row):
        node = nodes[0]
        while "value" not in node:
            value = row[node["feature"]]
            missing = nodes[node[node["missing"]]]
            other = nodes[node["right" if node["missing"] == "left" else "left"]]
            if "categories" in node:
                node = other if value == value and value in node["categories"] else missing
            elif value != value:
                node = missing
            else:
                node = nodes[node["left"]] if value <= float(node["threshold"]) else nodes[node["right"]]
        return node["value"]

    scores = np.full(len(X), dump["base"][0])
    for tree in dump["trees"]:
        scores += tree["weight"] * np.array([leaf(tree["nodes"], row) for row in X])
    np.testing.assert_allclose(scores, model.predict(X), rtol=1e-12, atol=1e-12)
    assert any("categories" in node for tree in dump["trees"] for node in tree["nodes"])


def test_the_tree_plot_lists_the_set():
    """The root's box of a stump names the codes that do not follow missing values, found by
    sending a row of each seen code, and a missing one, through the fitted tree."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from forestrank.plotting import plot_tree

    X, y, qid = _data()
    model = LambdaMART(n_estimators=1, max_leaf_nodes=2, categorical_features=[0, 1], min_data_per_group=20).fit(
        X[:, :2], y, qid
    )
    tree = model.trees_[0]
    feature = int(tree.nodes["feature"][0])
    assert tree.has_categories and feature >= 0, "the stump splits on a category"
    seen = np.unique(X[~np.isnan(X[:, feature]), feature])
    rows = np.zeros((len(seen) + 1, 2))
    rows[:-1, feature], rows[-1, feature] = seen, np.nan
    leaves = tree.apply(rows)
    away = seen[leaves[:-1] != leaves[-1]].astype(int)  # the codes that leave the missing values' side
    member = "not in" if leaves[-1] == tree.nodes["left"][0] else "in"
    text = next(text for text in plot_tree(model).texts if text.get_gid() == "node 0").get_text()
    listed = ", ".join(map(str, away[:6])) + (", ..." if len(away) > 6 else "")
    assert text.startswith(f"feature_{feature} {member} {{{listed}}}\nmissing: {'yes' if member == 'not in' else 'no'}")


@pytest.mark.parametrize(
    "export",
    [
        lambda model: to_solr(model, feature_names=["a", "b", "c", "d"]),
        lambda model: to_xgboost_ltr(model, feature_names=["a", "b", "c", "d"]),
    ],
    ids=["solr", "ltr-plugins"],
)
def test_formats_without_set_tests_refuse_by_name(model, export):
    """The refusal names the format mid-sentence: the LTR plugins' read "which The LTR
    plugins' XGBoost model cannot express"."""
    with pytest.raises(ValueError, match="categorical features.*one 0/1 feature per category") as refusal:
        export(model)
    assert re.search(r"which (Solr's MultipleAdditiveTreesModel|XGBoost's model for the LTR plugins) cannot express",
                     str(refusal.value))


def _routed_left(tree, node, value):
    """Whether ``value`` goes left at ``node`` of ``tree`` (an ``ExportTree``), from the
    documented rules: a category by its bit, a missing value, a negative code or one past
    the bits by ``missing_left``; a number when ``x <= threshold``."""
    if np.isnan(value):
        return bool(tree.missing_left[node])
    if tree.is_categorical[node]:
        bits = tree.category_left[node]
        return bool(bits[int(value)]) if 0 <= value < len(bits) else bool(tree.missing_left[node])
    return bool(value <= tree.threshold[node])


def _expected_given(tree, x, known, node=0):
    """Path-dependent TreeSHAP's value of a coalition (Lundberg, Erion & Lee 2018,
    Algorithm 1): the tree's output when the features in ``known`` take ``x``'s values and
    the others are averaged over the training rows through each node (its row count,
    LightGBM's cover)."""
    if tree.is_leaf[node]:
        return tree.value[node]
    left, right = tree.left[node], tree.right[node]
    if tree.feature[node] in known:
        return _expected_given(tree, x, known, left if _routed_left(tree, node, x[tree.feature[node]]) else right)
    return (
        tree.n_samples[left] * _expected_given(tree, x, known, left)
        + tree.n_samples[right] * _expected_given(tree, x, known, right)
    ) / tree.n_samples[node]


def test_shap_explains_categorical_splits_with_the_brute_force_shapley_values(model):
    """shap explains a model with categorical splits exactly: its values are the Shapley
    values of path-dependent TreeSHAP's coalition game computed by brute force over every
    coalition of the four features from the model's own trees, on rows with seen, unseen,
    negative and missing categories, and they add up to forestrank's prediction."""
    shap = pytest.importorskip("shap")
    from itertools import combinations
    from math import factorial

    from forestrank.explain import shap_tree_model
    from forestrank.serving._terms import scalar_trees

    X = _served_rows(_data()[0])[::23]
    explainer = shap.TreeExplainer(shap_tree_model(model))
    values = explainer.shap_values(X)
    np.testing.assert_allclose(values.sum(axis=1) + explainer.expected_value, model.predict(X), rtol=1e-9, atol=1e-9)
    trees, _ = scalar_trees(model, "a test")
    n_features = X.shape[1]

    def game(x, known):
        return sum(_expected_given(tree, x, set(known)) for tree in trees)

    expected = np.zeros_like(values)
    for row, x in enumerate(X):
        for feature in range(n_features):
            others = [f for f in range(n_features) if f != feature]
            for size in range(n_features):
                share = factorial(size) * factorial(n_features - size - 1) / factorial(n_features)
                for known in combinations(others, size):
                    expected[row, feature] += share * (game(x, known + (feature,)) - game(x, known))
    assert np.isnan(X[:, :2]).any() and (X[:, :2] < 0).any()
    np.testing.assert_allclose(values, expected, rtol=1e-9, atol=1e-12)
    assert explainer.expected_value == pytest.approx(game(X[0], ()), rel=1e-9)


def test_lightgbm_reads_a_dataframe_by_its_categories():
    """A model fitted on a pandas frame's ``category`` columns: LightGBM's predict on a frame
    whose categories come in another order, with an unseen and a missing one, scores as
    forestrank (the file's ``pandas_categorical`` holds the fitted categories)."""
    lightgbm = pytest.importorskip("lightgbm")
    pd = pytest.importorskip("pandas")
    X, y, qid = _data()
    names = np.array([f"brand {code:03d}" for code in range(CARDINALITIES[0])])
    codes = np.where(np.isnan(X[:, 0]), -1, X[:, 0]).astype(int)
    frame = pd.DataFrame({
        "brand": pd.Categorical.from_codes(codes, categories=names), "kind": pd.Categorical(np.nan_to_num(X[:, 1], nan=9)),
        "a": X[:, 2], "b": X[:, 3],
    })  # fmt: skip
    model = LambdaMART(n_estimators=10, categorical_features="from_dtype", min_data_per_group=20, random_state=0)
    model.fit(frame, y, qid)
    scored = frame.iloc[:60].copy()
    scored["brand"] = scored["brand"].cat.add_categories(["zeta"]).cat.reorder_categories(["zeta", *names[::-1]])
    scored.loc[scored.index[:5], "brand"] = "zeta"
    scored.loc[scored.index[5:10], "brand"] = np.nan
    booster = lightgbm.Booster(model_str=to_lightgbm(model))
    np.testing.assert_allclose(booster.predict(scored), model.predict(scored), rtol=1e-9, atol=1e-12)


def test_lightgbm_needs_a_category_column_read_by_value_cast_to_its_values():
    """docs/categorical.md ("Serving"): forestrank reads a ``category`` column left out of
    ``categorical_features`` by its values, LightGBM turns every ``category`` column into
    codes: it refuses the fitted frame, and scores it as forestrank once that column is
    cast to its values."""
    lightgbm = pytest.importorskip("lightgbm")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    brand, size = rng.choice(list("abcdef"), 600), rng.choice([10.0, 20.0, 35.0], 600)
    frame = pd.DataFrame({"brand": pd.Categorical(brand), "size": pd.Categorical(size)})
    y = (brand == "a") + (size > 15)
    model = LambdaMART(n_estimators=3, categorical_features=[0], min_data_per_group=5, random_state=0)
    model.fit(frame, y, qid=np.repeat(np.arange(30), 20))
    booster = lightgbm.Booster(model_str=to_lightgbm(model))
    with pytest.raises(ValueError, match="categorical_feature do not match"):
        booster.predict(frame)
    cast = frame.astype({"size": float})
    np.testing.assert_allclose(booster.predict(cast), model.predict(frame), rtol=1e-9, atol=1e-12)


def test_onnx_computes_the_target_statistics():
    """A model fitted with ``cat_target_statistics``: the graph maps each code to its
    statistic (the prior for unseen codes, NaN for missing and negative ones) and scores as
    forestrank on float64 input; float32 input and the other formats are refused."""
    onnxruntime = pytest.importorskip("onnxruntime")
    X, y, qid = _data()
    model = LambdaMART(
        n_estimators=25, max_leaf_nodes=15, categorical_features=[0, 1], min_data_per_group=20,
        cat_target_statistics=True, random_state=0,
    ).fit(X, y, qid)  # fmt: skip
    gains = np.sum([tree.feature_gains for tree in model.trees_], axis=0)
    assert gains[4:].all(), "the trees split on both statistics"
    rows = _served_rows(X)
    session = onnxruntime.InferenceSession(to_onnx(model).SerializeToString())
    scores = session.run(None, {"X": rows})[0].astype(np.float64)
    assert np.all(np.abs(scores - model.predict(rows)) <= float32_sum_bound(model, rows))
    with pytest.raises(ValueError, match="float64 input only"):
        to_onnx(model, dtype=np.float32)
    for export in (to_lightgbm, to_xgboost):
        with pytest.raises(ValueError, match="only the ONNX export"):
            export(model)



def test_a_combination_of_models_with_target_statistics_is_refused_by_every_export():
    """An average of models fitted with ``cat_target_statistics``: their trees read the
    statistics' columns, which each member's ``predict`` computes and no export of the
    average did (LightGBM's, XGBoost's and the dump's files were written, scoring other
    columns; the ONNX graph failed in onnxruntime)."""
    from forestrank import AveragedRanker
    from forestrank.explain import shap_tree_model

    X, y, qid = _data(n_queries=30)
    member = LambdaMART(n_estimators=2, categorical_features=[0, 1], cat_target_statistics=True, max_features=0.7)
    model = AveragedRanker(member, n_models=2, random_state=0).fit(X, y, qid)
    assert np.isfinite(model.predict(X)).all()
    for export in (to_lightgbm, to_xgboost, to_onnx, dump_trees, shap_tree_model):
        with pytest.raises(ValueError, match="member LambdaMART was fitted with cat_target_statistics=True"):
            export(model)


def test_lightgbm_reads_a_dataframe_by_the_categories_of_an_averaged_ranker():
    """An average of models fitted on a frame's ``category`` column: the file's
    ``pandas_categorical`` was null, so LightGBM numbered a frame whose categories come in
    another order by that order and scored it differently from forestrank."""
    from forestrank import AveragedRanker

    lightgbm = pytest.importorskip("lightgbm")
    pd = pytest.importorskip("pandas")
    X, y, qid = _data(n_queries=40)
    codes = np.where(np.isnan(X[:, 1]), -1, X[:, 1]).astype(int)
    names = np.array([f"kind {code}" for code in range(CARDINALITIES[1])])
    frame = pd.DataFrame({"kind": pd.Categorical.from_codes(codes, categories=names), "a": X[:, 2], "b": X[:, 3]})
    member = LambdaMART(n_estimators=5, categorical_features="from_dtype", min_data_per_group=20, max_features=0.7)
    model = AveragedRanker(member, n_models=2, random_state=0).fit(frame, y, qid)
    assert model.frame_categories_ == model.estimators_[0].frame_categories_
    scored = frame.copy()
    scored["kind"] = scored["kind"].cat.reorder_categories(names[::-1])
    booster = lightgbm.Booster(model_str=to_lightgbm(model))
    np.testing.assert_allclose(booster.predict(scored), model.predict(scored), rtol=1e-9, atol=1e-12)


def test_shap_explains_a_categorical_model_whose_frame_names_lightgbm_cannot_hold():
    """A frame's column named "brand name": the LightGBM export shap is handed refused its
    whitespace, and ``shap_tree_model`` takes no names to give instead."""
    shap = pytest.importorskip("shap")
    pd = pytest.importorskip("pandas")
    from forestrank.explain import shap_tree_model

    X, y, qid = _data(n_queries=40)
    codes = np.where(np.isnan(X[:, 1]), -1, X[:, 1]).astype(int)
    frame = pd.DataFrame({"brand name": pd.Categorical.from_codes(codes, categories=list("abcde")), "a b": X[:, 2]})
    model = LambdaMART(n_estimators=5, categorical_features="from_dtype", min_data_per_group=20, random_state=0)
    model.fit(frame, y, qid)
    explainer = shap.TreeExplainer(shap_tree_model(model))
    values = explainer.shap_values(frame)
    np.testing.assert_allclose(values.sum(axis=1) + explainer.expected_value, model.predict(frame), rtol=1e-9, atol=1e-9)


def test_shap_explains_a_model_of_text_categories_that_no_tree_split_on():
    """Stumps on two numeric columns beside a column of text categories no tree split on:
    shap was handed the dictionary of thresholds and failed casting the frame's text to
    float64."""
    shap = pytest.importorskip("shap")
    pd = pytest.importorskip("pandas")
    from forestrank.explain import shap_tree_model

    X, y, qid = _data(n_queries=40)
    frame = pd.DataFrame(X[:, 2:4], columns=list("ab"))
    frame["brand"] = pd.Categorical(np.array(["acme", "bolt", "crux"])[np.arange(len(X)) % 3])
    model = LambdaMART(n_estimators=3, max_leaf_nodes=2, categorical_features="from_dtype", random_state=0)
    model.fit(frame, y, qid)
    assert not any(tree.has_categories for tree in model.trees_)
    explainer = shap.TreeExplainer(shap_tree_model(model))
    values = explainer.shap_values(frame)
    np.testing.assert_allclose(values.sum(axis=1) + explainer.expected_value, model.predict(frame), rtol=1e-9, atol=1e-9)
    assert np.all(values[:, 2] == 0)


def test_lightgbm_refuses_categories_json_cannot_hold_by_name():
    """A frame's categories of dates: the export died with json's "Object of type Timestamp
    is not JSON serializable"."""
    pd = pytest.importorskip("pandas")
    X, y, qid = _data(n_queries=30)
    days = pd.to_datetime(["2024-01-01", "2024-02-01", "2024-03-01"])
    frame = pd.DataFrame({"a": X[:, 2], "day": pd.Categorical(days[np.arange(len(X)) % 3])})
    model = LambdaMART(n_estimators=3, categorical_features="from_dtype", min_data_per_group=20).fit(frame, y, qid)
    with pytest.raises(ValueError, match="feature 1's are Timestamp"):
        to_lightgbm(model)
