"""Every estimator scores with the bitvector kernel (``_tree/_quickscorer.py``) exactly as the
traversal does: the same trees summed in the same order, on NaN rows, rows on the thresholds,
float32 and sparse input; and the fast path of ``predict``'s validation checks what
scikit-learn's does."""

import pickle

import numpy as np
import pytest
import scipy.sparse

from forestrank import (
    BROOF,
    AveragedRanker,
    LambdaMART,
    PLRank,
    RFHybridRanker,
    RFListRanker,
    RFPointRanker,
    make_ranking,
)
from forestrank._tree import _quickscorer

ESTIMATORS = [
    LambdaMART(n_estimators=15, random_state=0),
    LambdaMART(n_estimators=4, objective="mcrank", random_state=0),
    LambdaMART(n_estimators=5, init=RFPointRanker(n_estimators=3, max_leaf_nodes=20, random_state=0), random_state=0),
    PLRank(n_estimators=5, random_state=0),
    RFPointRanker(n_estimators=4, max_leaf_nodes=40, random_state=0),
    RFListRanker(n_estimators=3, max_leaf_nodes=12, random_state=0),
    RFHybridRanker(n_estimators=3, max_leaf_nodes=12, random_state=0),
    BROOF(n_estimators=3, n_trees=3, forest=RFPointRanker(criterion="variance", max_leaf_nodes=20), random_state=0),
    AveragedRanker(LambdaMART(n_estimators=5, subsample=0.8), n_models=2, random_state=0),
]


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=40, docs_per_query=15, n_features=6, random_state=4)
    X[np.random.default_rng(0).random(X.shape) < 0.15] = np.nan  # missing values learn their side
    return X, y, qid


def _rows_to_score(model, X):
    """NaN rows, rows whose every value sits on a threshold of the model, and the training rows."""
    thresholds = np.unique(np.concatenate([_thresholds(tree_holder) for tree_holder in _ensembles(model)]))
    thresholds = thresholds[np.isfinite(thresholds)]
    on_thresholds = np.resize(thresholds, (len(thresholds) // X.shape[1] + 1) * X.shape[1]).reshape(-1, X.shape[1])
    return np.ascontiguousarray(np.vstack([X, on_thresholds, np.full((2, X.shape[1]), np.nan)]))


def _ensembles(model):
    if hasattr(model, "trees_"):
        yield model
    for member in [getattr(model, "init_", None), *getattr(model, "estimators_", [])]:
        if member is not None:
            yield from _ensembles(member)


def _thresholds(model):
    nodes = model._forest_nodes
    return nodes["threshold"][nodes["feature"] >= 0]


def _walking(model, monkeypatch):
    """``model`` unpickled with the bitvector scorer off: every ensemble in it walks its trees."""
    with monkeypatch.context() as patch:
        patch.setattr(_quickscorer, "MAX_LEAVES", 0)
        walking = pickle.loads(pickle.dumps(model))
    assert not any(ensemble._bitvectors for ensemble in _ensembles(walking))
    return walking


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda estimator: type(estimator).__name__)
def test_bitvector_scores_equal_the_traversal(estimator, data, monkeypatch):
    X, y, qid = data
    model = estimator.fit(X, y, qid=qid)
    assert any(ensemble._bitvectors for ensemble in _ensembles(model))
    walking = _walking(model, monkeypatch)
    rows = _rows_to_score(model, X)
    calls = []
    kernel = _quickscorer.add_bitvector_values
    monkeypatch.setattr(_quickscorer, "add_bitvector_values", lambda *arguments: calls.append(1) or kernel(*arguments))
    for X_test in (rows, rows.astype(np.float32), scipy.sparse.csr_matrix(np.nan_to_num(rows, nan=0.0))):
        np.testing.assert_array_equal(model.predict(X_test), walking.predict(X_test))
    assert calls


def test_the_last_stage_walked_is_the_prediction_scored_by_bitvectors(data):
    """Stages score subsets of the trees, which they walk; the last one is ``predict``."""
    X, y, qid = data
    model = LambdaMART(n_estimators=8, random_state=0).fit(X, y, qid=qid)
    *_, last = model.staged_predict(X)
    np.testing.assert_array_equal(last, model.predict(X))


def test_every_output_of_a_several_output_model_has_its_bitvectors(data):
    X, y, qid = data
    model = LambdaMART(n_estimators=3, objective="mcrank", random_state=0).fit(X, y, qid=qid)
    n_trees = len(model.trees_)
    assert sorted(model._bitvectors) == [(output, n_trees, model.n_outputs_) for output in range(model.n_outputs_)]


def test_fully_grown_forests_walk_their_trees():
    model = RFPointRanker(n_estimators=2, max_leaf_nodes=_quickscorer.MAX_LEAVES + 1, min_samples_leaf=1, random_state=0)
    X, y, qid = make_ranking(n_queries=60, docs_per_query=30, n_features=6, random_state=0)
    model.fit(X, y, qid=qid)
    assert max(tree.node_count for tree in model.trees_) > 2 * _quickscorer.MAX_LEAVES - 1
    assert model._bitvectors == {}


@pytest.mark.parametrize(
    "make_X",
    [
        lambda X: np.asfortranarray(X),
        lambda X: X.astype(np.float16),
        lambda X: X.tolist(),
    ],
    ids=["F order", "float16", "list"],
)
def test_predict_takes_any_layout_and_dtype_to_the_same_scores(make_X, data):
    X, y, qid = data
    model = LambdaMART(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    rows = np.nan_to_num(X[:20]).astype(np.float16).astype(np.float64)  # exact in every dtype tried
    np.testing.assert_array_equal(model.predict(make_X(rows)), model.predict(np.ascontiguousarray(rows)))


def test_read_only_rows_score_as_writeable_ones(data):
    X, y, qid = data
    model = LambdaMART(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    rows = np.ascontiguousarray(X[:20])
    frozen = rows.copy()
    frozen.setflags(write=False)
    np.testing.assert_array_equal(model.predict(frozen), model.predict(rows))


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_predict_refuses_infinity_naming_X_with_or_without_missing_values(value, data):
    X, y, qid = data
    model = LambdaMART(n_estimators=3, random_state=0).fit(X, y, qid=qid)
    for rows in (np.zeros((3, X.shape[1])), np.full((3, X.shape[1]), np.nan)):
        rows[1, 2] = value
        with pytest.raises(ValueError, match="Input X contains infinity"):
            model.predict(rows)


def test_predict_refuses_another_width_and_an_unfitted_model(data):
    X, y, qid = data
    with pytest.raises(Exception, match="not fitted"):
        LambdaMART().predict(np.ascontiguousarray(X))
    model = LambdaMART(n_estimators=3, random_state=0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.zeros((2, X.shape[1] + 1)))


def test_a_model_fitted_on_named_features_still_warns_for_an_array(data):
    pandas = pytest.importorskip("pandas")
    X, y, qid = data
    frame = pandas.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    model = LambdaMART(n_estimators=3, random_state=0).fit(frame, y, qid=qid)
    with pytest.warns(UserWarning, match="feature names"):
        model.predict(np.ascontiguousarray(X))
