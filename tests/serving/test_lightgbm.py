"""LightGBM's text model: LightGBM's own predictor on the exported file reaches forestrank's
leaves and gives its scores, on doubles and on their float32 casts."""

import numpy as np
import pytest

from forestrank.export import export_model, to_lightgbm

from .models import ESTIMATORS, at_thresholds, fitted, missing_data, mq2008_fold1, parametrized

lightgbm = pytest.importorskip("lightgbm", reason="the LightGBM parity tests need lightgbm (forestrank[test])")


def assert_lightgbm_equals_forestrank(booster: object, model: object, X: np.ndarray) -> None:
    """Same leaf in every tree (LightGBM numbers a tree's leaves in forestrank's node
    order), and the same score up to the rounding of the folded leaf values: LightGBM
    sums in double."""
    leaves = booster.predict(X, pred_leaf=True).reshape(len(X), -1)
    terms, _, _ = model._additive_terms()
    assert leaves.shape[1] == len(terms)
    for index, (tree, _, _) in enumerate(terms):
        leaf_rank = np.cumsum(tree.nodes["feature"] < 0) - 1
        np.testing.assert_array_equal(leaves[:, index], leaf_rank[tree.apply(X)], err_msg=f"tree {index}")
    expected = model.predict(X)
    np.testing.assert_allclose(booster.predict(X), expected, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize("name", parametrized(ESTIMATORS))
def test_missing_values_and_values_at_thresholds_take_forestranks_branches(name):
    X, _, _ = missing_data()
    model = fitted(name, "missing")
    rows = np.vstack([X, at_thresholds(model, X)])
    assert np.isnan(rows).mean() > 0.2
    booster = lightgbm.Booster(model_str=to_lightgbm(model))
    assert_lightgbm_equals_forestrank(booster, model, rows)  # doubles exactly at the thresholds
    assert_lightgbm_equals_forestrank(booster, model, rows.astype(np.float32))


@pytest.mark.dataset
@pytest.mark.parametrize("name", parametrized(ESTIMATORS))
def test_lightgbm_and_treelite_load_the_file_and_score_mq2008_as_forestrank(name, mq2008, tmp_path):
    model = fitted(name, "mq2008", str(mq2008 / "Fold1"))
    X_test = mq2008_fold1(str(mq2008 / "Fold1"))[1][0]
    path = export_model(model, tmp_path / "model.txt", format="lightgbm")
    booster = lightgbm.Booster(model_file=str(path))
    rows = np.vstack([X_test, at_thresholds(model, X_test)])
    assert_lightgbm_equals_forestrank(booster, model, rows)
    assert_treelite_equals_forestrank(path, model, rows)


@pytest.mark.parametrize("name", ["RF-point", "RF-list", "RF-hybrid"])
def test_a_forest_scores_bitwise_as_forestrank(name):
    """A forest is a mean: written with average_output, LightGBM sums and divides as
    forestrank does, so tied documents stay tied."""
    X, _, _ = missing_data()
    model = fitted(name, "missing")
    text = to_lightgbm(model)
    assert "\naverage_output\n" in text
    np.testing.assert_array_equal(lightgbm.Booster(model_str=text).predict(X), model.predict(X))


def assert_treelite_equals_forestrank(path: object, model: object, rows: np.ndarray) -> None:
    """Treelite's LightGBM reader, and its reference predictor (GTIL), on the doubles and
    their float32 casts: forestrank's scores to LightGBM's tolerance."""
    treelite = pytest.importorskip("treelite", reason="the Treelite parity test needs treelite (forestrank[test])")
    compiled = treelite.frontend.load_lightgbm_model(str(path))
    for values in (rows, rows.astype(np.float32)):
        expected = model.predict(values)
        scores = treelite.gtil.predict(compiled, values).reshape(len(values))
        np.testing.assert_allclose(scores, expected, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize("name", parametrized(ESTIMATORS))
def test_treelite_loads_the_file_and_scores_as_forestrank(name, tmp_path):
    X, _, _ = missing_data()
    model = fitted(name, "missing")
    path = export_model(model, tmp_path / "model.txt", format="lightgbm")
    assert_treelite_equals_forestrank(path, model, np.vstack([X, at_thresholds(model, X)]))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_a_subnormal_threshold_is_written_so_that_treelite_reads_the_file(sign, tmp_path):
    """A cut between 0 and a subnormal value was written as its subnormal repr, which
    Treelite's parser refused ("Range error while converting string to double"). Written
    as the smallest normal double of its sign, it sends every value the same way in
    LightGBM, which reads values within 1e-35 of zero as 0."""
    from forestrank import RFPointRanker

    X = np.array([[0.0], [sign * 1e-310]] * 10)
    y = np.array([0, 2] * 10)
    model = RFPointRanker(n_estimators=3, max_features=None, random_state=0).fit(X, y, qid=np.repeat(np.arange(4), 5))
    assert 0 < abs(model.trees_[0].nodes["threshold"][0]) < np.finfo(np.float64).tiny
    path = export_model(model, tmp_path / "model.txt", format="lightgbm")
    rows = np.array([[0.0], [sign * 1e-310], [sign * 1e-36], [sign * 1e-30], [np.nan]])
    written = lightgbm.Booster(model_file=str(path)).predict(rows)
    np.testing.assert_array_equal(written, lightgbm.Booster(model_str=_subnormal_thresholds(model)).predict(rows))
    np.testing.assert_array_equal(written[[0, 3, 4]], model.predict(rows)[[0, 3, 4]])  # beyond 1e-35 of zero
    treelite = pytest.importorskip("treelite", reason="the Treelite parity test needs treelite (forestrank[test])")
    scores = treelite.gtil.predict(treelite.frontend.load_lightgbm_model(str(path)), rows).reshape(len(rows))
    outside = [0, 2, 3, 4]  # Treelite does not read values near zero as 0: forestrank's, but for the subnormal row
    np.testing.assert_array_equal(scores[outside], model.predict(rows)[outside])


def _subnormal_thresholds(model: object) -> str:
    """The LightGBM file with each threshold written as the tree's own double (subnormal)."""
    text = to_lightgbm(model).splitlines()
    cuts = iter(repr(float(tree.nodes["threshold"][0])) for tree in model.trees_)
    return "\n".join(f"threshold={next(cuts)}" if line.startswith("threshold=") else line for line in text)


def test_feature_names_reach_the_booster():
    model = fitted("LambdaMART lambdarank", "missing")
    names = [f"score_{index}" for index in range(model.n_features_in_)]
    assert lightgbm.Booster(model_str=to_lightgbm(model, feature_names=names)).feature_name() == names
    assert lightgbm.Booster(model_str=to_lightgbm(model)).feature_name()[:2] == ["Column_0", "Column_1"]


@pytest.mark.parametrize("name", ["LambdaMART lambdarank", "RF-point three-way"])
def test_the_boosters_importances_are_forestranks(name):
    """Every split_gain was 0: LightGBM counted no split, its importances were all zero and
    plot_importance raised. Each split carries its share of its tree's gain for its
    feature: the split counts are the trees' and the gains sum to each tree's."""
    model = fitted(name, "missing")
    booster = lightgbm.Booster(model_str=to_lightgbm(model))
    terms, _, _ = model._additive_terms()
    splits = np.zeros(model.n_features_in_, dtype=np.int64)
    gains = np.zeros(model.n_features_in_)
    for tree, _, _ in terms:
        feature = tree.nodes["feature"]
        splits += np.bincount(feature[feature >= 0], minlength=model.n_features_in_)
        gains += tree.feature_gains
    assert splits.sum() > 0
    np.testing.assert_array_equal(booster.feature_importance("split"), np.where(gains > 0, splits, 0))
    np.testing.assert_allclose(booster.feature_importance("gain"), gains, rtol=1e-6)  # LightGBM keeps float32 gains
    if name.startswith("LambdaMART"):  # boosting's importances are the normalised sums
        np.testing.assert_allclose(gains / gains.sum(), model.feature_importances_, rtol=1e-9)


def test_the_booster_dumps_the_learned_missing_directions():
    """``dump_model`` (what Vespa imports) shows each split's NaN direction and missing type NaN."""
    model = fitted("RF-point three-way", "missing")
    tree = lightgbm.Booster(model_str=to_lightgbm(model)).dump_model()["tree_info"][0]["tree_structure"]
    forest_tree = model.trees_[0]
    assert tree["missing_type"] == "NaN"
    assert tree["default_left"] == bool(forest_tree.missing_left[0])
    assert forest_tree.nodes["threshold"][0] == -np.inf  # the three-way split: NaN one way, every value the other
    assert tree["threshold"] == -1e300 and tree["decision_type"] == "<="


def test_only_values_at_or_beyond_the_clamped_bound_leave_forestranks_branch_at_an_infinite_cut():
    """docs/serving.md: LightGBM holds -inf as -1e300, so a finite value at or below -1e300
    goes left there where forestrank sends it right; values above it agree."""
    model = fitted("RF-point three-way", "missing")
    X, _, _ = missing_data()
    cuts = [(tree, node) for tree in model.trees_ for node in np.flatnonzero(tree.nodes["threshold"] == -np.inf)]
    cuts = [(tree, node) for tree, node in cuts if tree.nodes["feature"][node] >= 0]
    assert cuts
    booster = lightgbm.Booster(model_str=to_lightgbm(model))
    feature = int(cuts[0][0].nodes["feature"][cuts[0][1]])
    rows = np.repeat(np.nan_to_num(X[:50], nan=0.5), 4, axis=0)
    rows[:, feature] = np.tile([-1e300, -2e300, -9.99e299, -1e299], 50)
    differs = booster.predict(rows, pred_leaf=True) != np.array(
        [(np.cumsum(tree.nodes["feature"] < 0) - 1)[tree.apply(rows)] for tree in model.trees_]
    ).T
    assert differs[0::4].any() and differs[1::4].any()
    assert not differs[2::4].any() and not differs[3::4].any()
