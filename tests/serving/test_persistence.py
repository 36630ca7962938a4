"""Saved rankers: the skops round trip for every estimator, refusal of untrusted types, version warnings."""

import pickle
import warnings

import numpy as np
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
import pytest

from forestrank import (
    BROOF,
    AveragedRanker,
    DummyRanker,
    LambdaMART,
    PLRank,
    RFHybridRanker,
    RFListRanker,
    QueryKFold,
    RFPointRanker,
    make_ranking,
)
from forestrank.metrics import CustomMetric
from forestrank.persistence import InconsistentVersionWarning, load, save

skops_io = pytest.importorskip("skops.io", reason="the skops format needs forestrank[skops]")

ESTIMATORS = [
    RFPointRanker(n_estimators=3, random_state=0),
    RFListRanker(n_estimators=2, random_state=0),
    RFHybridRanker(n_estimators=2, random_state=0),
    LambdaMART(n_estimators=4, random_state=0),
    LambdaMART(n_estimators=3, objective="mcrank", random_state=0),
    LambdaMART(n_estimators=3, objective="mart", init=RFPointRanker(n_estimators=2, random_state=0), random_state=0),
    PLRank(n_estimators=3, random_state=0),
    BROOF(n_estimators=2, n_trees=2, random_state=0),
    AveragedRanker(LambdaMART(n_estimators=3), n_models=2, random_state=0),
    DummyRanker(strategy="best_feature"),
]


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=30, docs_per_query=12, n_features=5, missing_fraction=0.1, random_state=0)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: f"{type(e).__name__}")
def test_every_estimator_survives_the_skops_round_trip(estimator, data, tmp_path):
    X, y, qid = data
    model = estimator.fit(X, y, qid=qid)
    save(model, tmp_path / "model.skops")
    with warnings.catch_warnings():
        warnings.simplefilter("error", InconsistentVersionWarning)
        loaded = load(tmp_path / "model.skops")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize(
    "estimator",
    [
        RFPointRanker(n_estimators=3, missing_direction="right", random_state=0),
        LambdaMART(n_estimators=4, missing_direction="right", random_state=0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_split_sending_only_the_missing_rows_right_survives_saving(estimator, data, tmp_path):
    """The cut below the missing bin has the threshold +inf (every present value left);
    loading refused such trees, so these models could not be pickled or saved."""
    X, y, qid = data
    X = X.copy()
    X[y == y.max(), 2] = np.nan  # missing exactly for the most relevant documents
    model = estimator.fit(X, y, qid=qid)
    assert any((tree.nodes["threshold"][tree.nodes["feature"] >= 0] == np.inf).any() for tree in model.trees_)
    save(model, tmp_path / "model.skops")
    for loaded in (pickle.loads(pickle.dumps(model)), load(tmp_path / "model.skops")):
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_numba_objective_or_metric_is_refused_by_name_and_saves_with_joblib(data, tmp_path):
    """skops failed inside its own code ("cannot pickle 'generator' object") on a model
    holding a numba function; the refusal names the parameter and the formats that can."""
    import joblib
    import numba

    @numba.njit
    def squared(labels, scores, gradients, hessians):
        gradients[:] = scores - labels
        hessians[:] = 1.0

    @numba.njit
    def top_score(labels, scores):
        return labels[np.argmax(scores)]

    X, y, qid = data
    model = LambdaMART(n_estimators=2, objective=squared, random_state=0).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match=r"LambdaMART's objective is one: save the model with joblib or pickle"):
        save(model, tmp_path / "m.skops")
    averaged = AveragedRanker(LambdaMART(n_estimators=2, eval_metric=top_score), n_models=2).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match=r"AveragedRanker's estimator__eval_metric is one"):
        save(averaged, tmp_path / "a.skops")
    # Held inside a parameter: skops's walk failed in numba's objects with an AttributeError.
    wrapped = LambdaMART(n_estimators=2, eval_metric=CustomMetric(top_score), random_state=0).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match=r"LambdaMART's eval_metric holds one \(top_score\): save the model with joblib"):
        save(wrapped, tmp_path / "w.skops")
    search = GridSearchCV(LambdaMART(n_estimators=2), {"objective": ["lambdarank", squared]}, cv=QueryKFold(2))
    with pytest.raises(TypeError, match=r"GridSearchCV's param_grid holds one \(squared\)"):
        save(search, tmp_path / "s.skops")
    # A pipeline's steps hold its ranker's function too: the parameter that is one names it.
    pipeline = Pipeline([("scale", StandardScaler()), ("ranker", LambdaMART(objective=squared))])
    with pytest.raises(TypeError, match=r"Pipeline's ranker__objective is one: save"):
        save(pipeline, tmp_path / "p.skops")
    pipeline = Pipeline([("scale", StandardScaler()), ("ranker", LambdaMART(eval_metric=CustomMetric(top_score)))])
    with pytest.raises(TypeError, match=r"Pipeline's ranker__eval_metric holds one \(top_score\): save"):
        save(pipeline, tmp_path / "p.skops")
    stored = LambdaMART(n_estimators=2).fit(X, y, qid=qid)
    stored.note_ = [top_score]  # an attribute of the caller's
    with pytest.raises(TypeError, match=r"LambdaMART's attributes hold top_score"):
        save(stored, tmp_path / "n.skops")
    assert not any(tmp_path.glob("*.skops"))
    joblib.dump(model, tmp_path / "m.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "m.joblib").predict(X), model.predict(X))


def test_a_file_holding_an_untrusted_type_is_refused(tmp_path):
    from skops.io.exceptions import UntrustedTypesFoundException

    from forestrank import EarlyExit  # a forestrank type that a fitted ranker never holds

    skops_io.dump({"model": EarlyExit()}, tmp_path / "other.skops")
    with pytest.raises(UntrustedTypesFoundException):
        load(tmp_path / "other.skops")


def test_a_model_saved_by_another_version_warns(data):
    X, y, qid = data
    model = RFPointRanker(n_estimators=2, random_state=0).fit(X, y, qid=qid)
    state = model.__getstate__()
    assert state["_forestrank_version"]
    state["_forestrank_version"] = "0.0.1"
    other = RFPointRanker.__new__(RFPointRanker)
    with pytest.warns(InconsistentVersionWarning, match="saved by forestrank 0.0.1"):
        other.__setstate__(state)
    np.testing.assert_array_equal(other.predict(X), model.predict(X))
    with warnings.catch_warnings():  # the same version, or an unfitted estimator: silent
        warnings.simplefilter("error", InconsistentVersionWarning)
        pickle.loads(pickle.dumps(model))
        pickle.loads(pickle.dumps(RFPointRanker()))


def _set_feature(tree):
    tree.nodes["feature"][np.flatnonzero(tree.nodes["feature"] >= 0)[0]] = 50_000_000


def _set_child(tree):
    tree.nodes["left"][np.flatnonzero(tree.nodes["feature"] >= 0)[-1]] = 2_000_000_000


def _child_before_parent(tree):
    internal = np.flatnonzero(tree.nodes["feature"] >= 0)
    tree.nodes["left"][internal[-1]] = internal[0]


def _orphaned_subtree(tree):
    tree.nodes["feature"][np.flatnonzero(tree.nodes["feature"] >= 0)[-1]] = -1  # its children reached by no node


def _shared_children(tree):
    internal = np.flatnonzero(tree.nodes["feature"] >= 0)
    tree.nodes["left"][internal[0]] = tree.nodes["left"][internal[-1]]  # two parents; the root's children orphaned


def _nan_threshold(tree):
    tree.nodes["threshold"][0] = np.nan


def _short_values(tree):
    tree.values = tree.values[:-1]


def _wider_tree(tree):
    tree.feature_gains = np.zeros(len(tree.feature_gains) + 3)


def _missing_direction(tree):
    tree.missing_left[np.flatnonzero(tree.nodes["feature"] >= 0)] = 255  # the walks stepped to child 1 - 255


def _node_dtype(tree):
    tree.nodes = tree.nodes.astype([("feature", np.int64), ("left", np.int64), ("threshold", np.float64)])


@pytest.mark.parametrize(
    "craft, match",
    [
        (_set_feature, "splits on a feature beyond its 5 features"),
        (_set_child, "child index before its parent or outside the tree"),
        (_child_before_parent, "child index before its parent or outside the tree"),
        (_orphaned_subtree, "nodes do not form a tree"),
        (_shared_children, "nodes do not form a tree"),
        (_nan_threshold, "NaN threshold"),
        (_short_values, "values has"),
        (_wider_tree, "holds a tree of another width"),
        (_node_dtype, "nodes must be a non-empty array of"),
        (_missing_direction, "missing_left must be 0 or 1"),
    ],
)
@pytest.mark.parametrize(
    "estimator",
    [
        ESTIMATORS[0],
        ESTIMATORS[3],
        LambdaMART(n_estimators=3, grow_policy="symmetric", max_depth=3, random_state=0),
        BROOF(n_estimators=2, n_trees=2, forest=RFPointRanker(criterion="variance", min_samples_leaf=5), random_state=0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_crafted_file_of_trusted_types_is_refused_before_any_tree_is_walked(estimator, craft, match, data, tmp_path):
    """One node's feature set to 50,000,000 (or a child to 2e9) in a saved forest loaded
    silently and predict then read far outside X: a segfault. Nodes reached by no node or by
    two loaded too, and the bitvector scorer wrote past its leaf arrays (a heap corruption)
    or returned uninitialised memory. Every loaded tree is checked."""
    X, y, qid = data
    model = estimator.fit(X, y, qid=qid)
    forest = model.estimators_[0] if hasattr(model, "estimators_") else model
    tree = max(forest.trees_, key=lambda tree: (tree.nodes["feature"] >= 0).sum())
    assert (tree.nodes["feature"] >= 0).sum() >= 2
    craft(tree)
    save(model, tmp_path / "crafted.skops")
    with pytest.raises(ValueError, match=match):
        load(tmp_path / "crafted.skops")
    with pytest.raises(ValueError, match=match):
        pickle.loads(pickle.dumps(model))


def test_the_version_warning_points_at_the_line_that_loads(data, tmp_path, monkeypatch):
    import forestrank._version

    X, y, qid = data
    model = RFPointRanker(n_estimators=2, random_state=0).fit(X, y, qid=qid)
    monkeypatch.setattr(forestrank._version, "__version__", "0.0.1")  # saved by an old version
    pickled = pickle.dumps(model)
    save(model, tmp_path / "m.skops")
    monkeypatch.undo()
    for reload in (lambda: pickle.loads(pickled), lambda: load(tmp_path / "m.skops")):
        with pytest.warns(InconsistentVersionWarning, match="saved by forestrank 0.0.1") as caught:
            reload()
        assert caught[0].filename == __file__


@pytest.mark.parametrize("estimator", [LambdaMART(n_estimators=3, random_state=0), RFPointRanker(n_estimators=2, random_state=0)])
def test_a_model_saved_before_a_parameter_existed_loads_with_its_default(data, tmp_path, monkeypatch, estimator):
    """Models saved by 0.1.0 lacked parameters added since (LambdaMART's
    bagging_temperature, RFPointRanker's categorical_features): pickles loaded without a
    word and raised AttributeError at repr, clone or refit, and persistence.load refused
    skops files as "not a model saved by forestrank.persistence.save". Such a parameter
    takes its default, which keeps the earlier behaviour, and the load warns of the version."""
    import forestrank._version

    X, y, qid = data
    model = clone(estimator).fit(X, y, qid=qid)
    added = "bagging_temperature" if isinstance(model, LambdaMART) else "categorical_features"
    default = model.get_params()[added]
    monkeypatch.setattr(forestrank._version, "__version__", "0.0.1")
    saved_state = type(model).__getstate__  # a version without the parameter saves no value for it
    monkeypatch.setattr(type(model), "__getstate__", lambda self: {k: v for k, v in saved_state(self).items() if k != added})
    pickled = pickle.dumps(model)
    save(model, tmp_path / "m.skops")
    monkeypatch.undo()
    for reload in (lambda: pickle.loads(pickled), lambda: load(tmp_path / "m.skops")):
        with pytest.warns(InconsistentVersionWarning, match="saved by forestrank 0.0.1"):
            loaded = reload()
        assert loaded.get_params()[added] is default and repr(loaded) == repr(estimator)
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
        np.testing.assert_array_equal(clone(loaded).fit(X, y, qid=qid).predict(X), model.predict(X))
    monkeypatch.setattr(type(model), "__getstate__", lambda self: {k: v for k, v in saved_state(self).items() if k != added})
    save(model, tmp_path / "same_version.skops")  # this version's state lacks nothing: a file that does is refused
    with pytest.raises(ValueError, match=f"lacks a parameter of its class .*{added}.*not a model saved by"):
        load(tmp_path / "same_version.skops")


def test_a_lambdamart_started_from_scikit_learn_models_saves_and_loads(data, tmp_path):
    from sklearn.linear_model import Ridge
    from sklearn.tree import DecisionTreeRegressor
    from skops.io.exceptions import UntrustedTypesFoundException

    X, y, qid = data
    X = np.nan_to_num(X)  # Ridge takes no missing values
    linear = LambdaMART(n_estimators=3, objective="mart", init=Ridge().fit(X, y), random_state=0).fit(X, y, qid=qid)
    save(linear, tmp_path / "linear.skops")
    np.testing.assert_array_equal(load(tmp_path / "linear.skops").predict(X), linear.predict(X))
    tree = LambdaMART(n_estimators=3, init=DecisionTreeRegressor(max_depth=3).fit(X, y), random_state=0)
    tree.fit(X, y, qid=qid)
    save(tree, tmp_path / "tree.skops")
    with pytest.raises(UntrustedTypesFoundException, match="sklearn.tree._tree.Tree"):
        load(tmp_path / "tree.skops")  # skops cannot check scikit-learn's node indices: trusted only on request
    loaded = load(tmp_path / "tree.skops", trusted=["sklearn.tree._tree.Tree"])
    np.testing.assert_array_equal(loaded.predict(X), tree.predict(X))


def test_an_unfitted_scikit_learn_init_is_fitted_on_the_rows():
    """init= an unfitted regressor raised TypeError: its fit takes no qid."""
    from sklearn.linear_model import Ridge

    X, y, qid = make_ranking(n_queries=30, docs_per_query=12, n_features=5, random_state=0)
    unfitted = LambdaMART(n_estimators=3, objective="mart", init=Ridge(), random_state=0).fit(X, y, qid=qid)
    fitted = LambdaMART(n_estimators=3, objective="mart", init=Ridge().fit(X, y), random_state=0).fit(X, y, qid=qid)
    np.testing.assert_allclose(unfitted.predict(X), fitted.predict(X), rtol=1e-9)
    np.testing.assert_allclose(unfitted.init_.coef_, Ridge().fit(X, y).coef_, rtol=1e-9)


def _wider_member(model, wide):
    """Replace a nested estimator by one fitted on 12 columns (``wide``: the same kind of model)."""
    if isinstance(model, LambdaMART):
        model.init_ = wide.init_
    else:
        model.estimators_[-1] = wide.estimators_[-1]


def _huge_member(model, wide):
    """A member claiming 20,000,000 features, its trees sharing one zero ``feature_gains``
    array (the file stays small): predict on the container's width read far past each row."""
    member = model.init_ if isinstance(model, LambdaMART) else model.estimators_[-1]
    gains = np.zeros(20_000_000)
    member.n_features_in_ = len(gains)
    for tree in member.trees_:
        tree.feature_gains = gains


@pytest.mark.parametrize("craft", [_wider_member, _huge_member])
@pytest.mark.parametrize(
    "estimator",
    [
        BROOF(n_estimators=2, n_trees=2, random_state=0),
        AveragedRanker(LambdaMART(n_estimators=2), n_models=2, random_state=0),
        LambdaMART(n_estimators=2, objective="mart", init=RFPointRanker(n_estimators=2, random_state=0), random_state=0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_nested_estimator_of_another_width_is_refused_at_load(estimator, craft, data, tmp_path):
    """BROOF checked X against its own width and summed its forests' trees, which load
    checked against each forest's width only: a 100-column member read past 8-column
    rows, and one of 20,000,000 columns crashed predict. Every nested estimator must
    have its container's width."""
    X, y, qid = data
    model = clone(estimator).fit(X, y, qid=qid)
    rng = np.random.default_rng(0)
    wide = clone(estimator).fit(np.hstack([X, rng.random((len(X), 7))]), y, qid=qid)
    craft(model, wide)
    save(model, tmp_path / "crafted.skops")
    with pytest.raises(ValueError, match=f"{type(model).__name__} of 5 features holds .* of (12|20000000) features"):
        load(tmp_path / "crafted.skops")
    with pytest.raises(ValueError, match="features: not a model forestrank saved"):
        pickle.loads(pickle.dumps(model))


def _no_members(model):
    model.estimators_ = []
    if isinstance(model, BROOF):
        model.estimator_weights_ = model.estimator_weights_[:0]
        model.n_estimators_ = 0


def _array_member(model):
    model.estimators_[-1] = np.arange(3)


def _fewer_weights(model):
    model.estimator_weights_ = model.estimator_weights_[:-1]


_BROOF = BROOF(n_estimators=2, n_trees=2, random_state=0)
_AVERAGED = AveragedRanker(LambdaMART(n_estimators=2), n_models=2, random_state=0)


@pytest.mark.parametrize(
    "estimator, craft, match",
    [
        *[(model, _no_members, "estimators_ must be a non-empty list") for model in (_BROOF, _AVERAGED)],
        *[(model, _array_member, "holds .* of type ndarray, which is no estimator") for model in (_BROOF, _AVERAGED)],
        (_BROOF, _fewer_weights, "one estimator_weights_ entry each"),  # an AveragedRanker weighs its members alike
    ],
    ids=lambda value: getattr(value, "__name__", type(value).__name__) if not isinstance(value, str) else "",
)
def test_an_ensemble_of_no_members_or_of_other_objects_is_refused_at_load(estimator, craft, match, data, tmp_path):
    """An AveragedRanker or BROOF whose members were emptied, or replaced by an array (a
    trusted type), loaded silently; predict then returned a scalar NaN or 0, or failed
    inside the ensemble."""
    X, y, qid = data
    model = clone(estimator).fit(X, y, qid=qid)
    craft(model)
    save(model, tmp_path / "crafted.skops")
    with pytest.raises(ValueError, match=match):
        load(tmp_path / "crafted.skops")
    with pytest.raises(ValueError, match=match):
        pickle.loads(pickle.dumps(model))


def test_a_pipeline_of_model_features_and_a_ranker_saves_and_loads(data, tmp_path):
    """The documented transfer recipe (``docs/transfer.md``) saved, but load refused
    ``ModelFeatures`` as an untrusted type."""
    from sklearn.pipeline import make_pipeline

    from forestrank.transfer import ModelFeatures

    X, y, qid = data
    source = LambdaMART(objective="mcrank", n_estimators=3, random_state=0).fit(X, y, qid=qid)
    pipeline = make_pipeline(ModelFeatures(source, kind="C"), LambdaMART(n_estimators=3, random_state=0))
    pipeline.fit(X, y, lambdamart__qid=qid)
    save(pipeline, tmp_path / "pipeline.skops")
    np.testing.assert_array_equal(load(tmp_path / "pipeline.skops").predict(X), pipeline.predict(X))


@pytest.mark.parametrize("kind", ["query scaler", "calibrated"])
def test_forestranks_transformer_and_calibrated_ranker_save_and_load(kind, data, tmp_path):
    """A ``QueryScaler`` pipeline (the getting-started guide's model to serve) and a
    ``CalibratedRanker`` (with its ``QueryKFold``) saved, but load refused their classes
    as untrusted types."""
    import sklearn
    from sklearn.pipeline import make_pipeline

    from forestrank import CalibratedRanker, QueryKFold, QueryScaler

    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        if kind == "query scaler":
            model = make_pipeline(QueryScaler(), LambdaMART(n_estimators=3, random_state=0)).fit(X, y, qid=qid)
        else:
            model = CalibratedRanker(LambdaMART(n_estimators=3, random_state=0), cv=QueryKFold(2)).fit(X, y, qid=qid)
        save(model, tmp_path / "model.skops")
        loaded = load(tmp_path / "model.skops")
        np.testing.assert_array_equal(loaded.predict(X, qid=qid), model.predict(X, qid=qid))


def test_a_file_whose_top_level_class_was_rewritten_is_refused_at_load(data, tmp_path):
    """forestrank's state under scikit-learn's RandomForestRegressor loaded, and failed
    later, inside predict."""
    import json
    import zipfile

    X, y, qid = data
    save(RFPointRanker(n_estimators=2, random_state=0).fit(X, y, qid=qid), tmp_path / "model.skops")
    with zipfile.ZipFile(tmp_path / "model.skops") as saved:
        files = {name: saved.read(name) for name in saved.namelist()}
    schema = json.loads(files["schema.json"])
    schema["__class__"], schema["__module__"] = "RandomForestRegressor", "sklearn.ensemble._forest"
    files["schema.json"] = json.dumps(schema).encode()
    with zipfile.ZipFile(tmp_path / "crafted.skops", "w") as crafted:
        for name, content in files.items():
            crafted.writestr(name, content)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's version warning for the renamed class
        with pytest.raises(ValueError, match="its RandomForestRegressor lacks a parameter of its class"):
            load(tmp_path / "crafted.skops")


def test_metadata_requests_are_saved_and_set_again_on_load(data, tmp_path):
    """``set_fit_request(qid=True)``, which the docs' pipelines use, made skops recurse without
    end (RecursionError): the requests travel as plain dicts and are set again on load."""
    from sklearn.pipeline import make_pipeline

    from forestrank import QueryScaler

    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        scaler = QueryScaler().set_fit_request(qid=True).set_transform_request(qid=True)
        ranker = LambdaMART(n_estimators=3, random_state=0).set_fit_request(qid=True).set_score_request(qid=False)
        pipeline = make_pipeline(scaler, ranker).fit(X, y, qid=qid)
        save(pipeline, tmp_path / "pipeline.skops")
        assert not hasattr(ranker, "_forestrank_metadata_requests")  # the saved model is left as it was
        expected = pipeline.predict(X, qid=qid)
    with sklearn.config_context(enable_metadata_routing=False):
        loaded = load(tmp_path / "pipeline.skops")
    for before, after in zip(pipeline, loaded):
        for method in ("fit", "transform", "score"):
            if hasattr(before._metadata_request, method):
                assert getattr(after._metadata_request, method).requests == getattr(before._metadata_request, method).requests
        assert not hasattr(after, "_forestrank_metadata_requests")
    with sklearn.config_context(enable_metadata_routing=True):
        np.testing.assert_array_equal(loaded.predict(X, qid=qid), expected)


def test_a_search_with_a_requesting_scorer_round_trips(data, tmp_path):
    """A scorer given requests holds them as an estimator does (scikit-learn's
    ``make_scorer(...).set_score_request(qid=True)``): a saved search recursed."""
    skops_io = pytest.importorskip("skops.io")
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GridSearchCV

    from forestrank import QueryKFold, ndcg_score

    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            LambdaMART(n_estimators=2, random_state=0), {"learning_rate": [0.1, 0.3]}, cv=QueryKFold(2),
            scoring=make_scorer(ndcg_score, k=5).set_score_request(qid=True),
        ).fit(X, y, qid=qid)  # fmt: skip
        save(search, tmp_path / "search.skops")
    loaded = load(tmp_path / "search.skops", trusted=skops_io.get_untrusted_types(file=tmp_path / "search.skops"))
    np.testing.assert_array_equal(loaded.predict(X), search.predict(X))
    assert loaded.scorer_._metadata_request.score.requests == search.scorer_._metadata_request.score.requests


@pytest.mark.parametrize("requests", [{"foo": {"qid": True}}, {"fit": ["qid"]}, {"fit": {"no_such_argument": True}}])
def test_metadata_requests_a_model_cannot_make_are_refused_at_load(requests, data, tmp_path):
    """Requests written into a file (a method without a setter, a list for a dict, an
    argument the method does not take) surfaced as scikit-learn's AttributeError or
    TypeError from inside load."""
    X, y, qid = data
    model = LambdaMART(n_estimators=2, random_state=0).fit(X, y, qid=qid)
    model._forestrank_metadata_requests = requests
    save(model, tmp_path / "crafted.skops")
    with pytest.raises(ValueError, match="metadata requests saved with a LambdaMART .* a model saved under another"):
        load(tmp_path / "crafted.skops")


def test_load_refuses_a_string_of_trusted_types(tmp_path):
    """A string was spread into its characters: the type it named stayed untrusted."""
    save(LambdaMART(n_estimators=2), tmp_path / "m.skops")
    with pytest.raises(TypeError, match=r"trusted must be a sequence of type names, such as \['sklearn.tree._tree.Tree'\]"):
        load(tmp_path / "m.skops", trusted="sklearn.tree._tree.Tree")


@pytest.mark.parametrize("content", ["pickle", "cut short"])
def test_a_file_that_is_no_skops_archive_is_refused_by_name(content, data, tmp_path):
    """A pickle, or a saved file cut short, is named as no skops file (not zipfile's error)."""
    X, y, qid = data
    model = LambdaMART(n_estimators=2, random_state=0).fit(X, y, qid=qid)
    path = tmp_path / "model.skops"
    if content == "pickle":
        path.write_bytes(pickle.dumps(model))
    else:
        save(model, path)
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError, match=r"model\.skops: not a skops model file .* joblib\.load or pickle\.load"):
        load(path)
