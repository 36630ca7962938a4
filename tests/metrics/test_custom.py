"""Custom evaluation metrics over queries: NDCG written as a callable records the built-in
values; the compiled per-query form equals its Python form; the queries' ids arrive; the
metric decides early stopping; bad output is refused by name."""

import numba
import numpy as np
import pytest

from forestrank import LambdaMART, PLRank, make_ranking, ndcg_score
from forestrank.metrics import CustomMetric


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=80, docs_per_query=(3, 25), n_features=6, random_state=2)
    qid = qid * 7 + 3  # ids that are not positions
    train = qid < np.unique(qid)[60]
    return X[train], y[train], qid[train], (X[~train], y[~train], qid[~train])


def ndcg_at_10(labels, scores, query_boundaries, query_ids):
    """NDCG@10 under the package's default convention, from the metrics module."""
    return ndcg_score(labels, scores, np.repeat(query_ids, np.diff(query_boundaries)), 10)


@numba.njit
def top_grade_compiled(labels, scores):
    """The grade of a query's best-scored document, relative to its best grade (NaN without grades)."""
    best = labels.max()
    return np.nan if best == 0 else labels[np.argmax(scores)] / best


def top_grade_python(labels, scores, query_boundaries, query_ids):
    values = [top_grade_compiled.py_func(labels[a:b], scores[a:b]) for a, b in zip(query_boundaries[:-1], query_boundaries[1:])]
    return float(np.nanmean(values))


@pytest.mark.parametrize("Ranker", [LambdaMART, PLRank])
def test_ndcg_as_a_callable_records_the_builtin_values(data, Ranker):
    X, y, qid, valid = data
    builtin = Ranker(n_estimators=6, random_state=0, verbose=2).fit(X, y, qid=qid, eval_set=[valid])
    custom = Ranker(n_estimators=6, random_state=0, verbose=2, eval_metric=ndcg_at_10).fit(X, y, qid=qid, eval_set=[valid])
    for name in ("valid_0", "train"):
        np.testing.assert_allclose(custom.evals_result_[name]["ndcg_at_10"], builtin.evals_result_[name]["ndcg@10"], rtol=1e-12)
    np.testing.assert_array_equal(custom.predict(valid[0]), builtin.predict(valid[0]))  # it only watches


def test_a_compiled_metric_equals_its_python_form(data):
    X, y, qid, valid = data
    compiled = LambdaMART(n_estimators=5, eval_metric=top_grade_compiled, random_state=0).fit(X, y, qid=qid, eval_set=[valid])
    python = LambdaMART(n_estimators=5, eval_metric=top_grade_python, random_state=0).fit(X, y, qid=qid, eval_set=[valid])
    values = compiled.evals_result_["valid_0"]["top_grade_compiled"]
    np.testing.assert_allclose(values, python.evals_result_["valid_0"]["top_grade_python"], rtol=1e-12)
    assert len(values) == 5 and 0 < min(values) <= max(values) <= 1


def test_a_compiled_metric_weighs_the_training_queries_by_sample_weight(data):
    """A metric of one query is averaged over the training rows' queries weighted by their
    mean sample_weight, as NDCG is there; a function of the whole set sees no weights."""
    X, y, qid, _ = data
    weight = np.random.default_rng(0).integers(0, 3, qid.max() + 1).astype(float)[qid]
    model = LambdaMART(n_estimators=3, eval_metric=top_grade_compiled, verbose=100, random_state=0)
    model.fit(X, y, qid=qid, sample_weight=weight)
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])  # the queries are in order of id
    values = np.array([top_grade_compiled(y[a:b], s) for a, b, s in zip(starts, np.r_[starts[1:], len(y)], np.split(model.predict(X), starts[1:]))])
    kept = ~np.isnan(values)
    expected = np.average(values[kept], weights=weight[starts][kept])
    assert model.evals_result_["train"]["top_grade_compiled"][-1] == pytest.approx(expected, rel=1e-12)
    assert expected != pytest.approx(np.nanmean(values), rel=1e-6)


def test_the_metric_gets_each_sets_query_ids(data):
    X, y, qid, valid = data
    seen = []

    def record(labels, scores, query_boundaries, query_ids):
        seen.append((len(labels), query_boundaries[-1], np.array(query_ids)))
        return 0.0

    LambdaMART(n_estimators=1, eval_metric=record, random_state=0).fit(X, y, qid=qid, eval_set=[valid])
    n_rows, last_boundary, ids = seen[0]
    assert n_rows == last_boundary == len(valid[1])
    np.testing.assert_array_equal(ids, np.unique(valid[2]))
    seen.clear()
    LambdaMART(n_estimators=1, eval_metric=record, n_iter_no_change=3, random_state=0).fit(X, y, qid=qid)
    held = seen[0][2]  # the queries held out for early stopping, by their own ids
    assert 0 < len(held) < len(np.unique(qid)) and np.isin(held, qid).all()


def test_the_metric_decides_early_stopping(data):
    X, y, qid, valid = data
    # A metric that never improves after the first iteration: the fit stops n_iter_no_change later and keeps one.
    model = LambdaMART(n_estimators=30, eval_metric=lambda *args: 1.0, n_iter_no_change=4, random_state=0)
    model.fit(X, y, qid=qid, eval_set=[valid])
    assert model.best_iteration_ == 1 and model.n_iter_ == 1
    assert len(model.evals_result_["valid_0"]["<lambda>"]) == 5


def test_a_metric_of_minus_infinity_keeps_the_first_iteration(data):
    """A score of -inf never beat the starting best of -inf: every tree was dropped and the
    fit failed deep in the engine (a TypeError). The first iteration is the best so far."""
    X, y, qid, valid = data
    model = LambdaMART(n_estimators=10, eval_metric=lambda *args: -np.inf, n_iter_no_change=2, random_state=0)
    model.fit(X, y, qid=qid, eval_set=[valid])
    assert model.best_iteration_ == 1 and model.n_iter_ == 1 and len(model.trees_) == 1
    np.testing.assert_array_equal(model.predict(X), LambdaMART(n_estimators=1, random_state=0).fit(X, y, qid=qid).predict(X))


def test_early_stopping_on_a_metric_that_is_nan_is_refused_by_name(data):
    """A NaN never beats the best score: every tree was dropped and the fit failed deep in
    the engine (a TypeError). Without early stopping the NaN is only recorded."""
    X, y, qid, valid = data

    def undefined(labels, scores, query_boundaries, query_ids):
        return float("nan")

    model = LambdaMART(n_estimators=4, eval_metric=undefined, n_iter_no_change=2)
    with pytest.raises(ValueError, match=r"compares the eval_metric undefined on the set 'valid_0' .* NaN at iteration 1"):
        model.fit(X, y, qid=qid, eval_set=[valid])
    assert not hasattr(model, "trees_")
    X_valid, y_valid, qid_valid = valid  # the per-query form: NaN for every query without grades
    with pytest.raises(ValueError, match=r"eval_metric top_grade_compiled on the set 'valid_0' .* is NaN"):
        model.set_params(eval_metric=top_grade_compiled).fit(X, y, qid=qid, eval_set=[(X_valid, 0 * y_valid, qid_valid)])
    recorded = LambdaMART(n_estimators=2, eval_metric=undefined).fit(X, y, qid=qid, eval_set=[valid])
    assert len(recorded.trees_) == 2 and np.isnan(recorded.evals_result_["valid_0"]["undefined"]).all()


@pytest.mark.parametrize("result", [None, "0.5", np.array([0.1, 0.2]), True])
def test_a_metric_that_returns_no_number_is_refused_by_name(data, result):
    X, y, qid, valid = data

    def bad_metric(labels, scores, query_boundaries, query_ids):
        return result

    with pytest.raises(TypeError, match="eval_metric bad_metric must return a real number"):
        LambdaMART(n_estimators=1, eval_metric=bad_metric).fit(X, y, qid=qid, eval_set=[valid])


def test_a_numpy_scalar_is_a_number():
    boundaries, ids = np.array([0, 2, 4]), np.array([5, 9])
    metric = CustomMetric(lambda labels, scores, b, q: np.float32(0.25))
    assert metric(np.zeros(4), np.zeros(4), boundaries, ids) == 0.25 and metric.name == "<lambda>"


def test_eval_metric_is_refused_on_dask_collections(data):
    da = pytest.importorskip("dask.array", reason="the dask backend needs forestrank[dask]")
    X, y, qid, _ = data
    with pytest.raises(ValueError, match="eval_metric is called with a whole evaluation set"):
        LambdaMART(eval_metric=ndcg_at_10).fit(da.from_array(X), da.from_array(y), qid=da.from_array(qid))


def test_a_compiled_metric_of_the_wrong_form_is_refused_by_name(data):
    """A compiled metric of the whole-set form, or one returning an array, failed with
    numba's TypingError about forestrank's own kernel."""
    X, y, qid, _ = data

    @numba.njit
    def whole_set(y, scores, query_boundaries, query_ids):
        return 1.0

    @numba.njit
    def not_a_number(y, scores):
        return scores

    with pytest.raises(TypeError, match="eval_metric whole_set is a numba function, which must take one query's"):
        LambdaMART(n_estimators=2, eval_metric=whole_set).fit(X, y, qid=qid, eval_set=[(X, y, qid)])
    with pytest.raises(TypeError, match="eval_metric not_a_number must return a float for one query's"):
        LambdaMART(n_estimators=2, eval_metric=not_a_number).fit(X, y, qid=qid, eval_set=[(X, y, qid)])


def test_a_metric_that_writes_to_its_inputs_changes_nothing_and_one_that_raises_is_named(data):
    """A compiled metric was given the caller's eval-set labels (and, with verbose, the
    training labels): writing to them changed the caller's y and the model. One that
    raised gave numba's SystemError naming forestrank's kernel."""
    X, y, qid, (X_test, y_test, qid_test) = data
    y, y_test = y.astype(np.float64), y_test.astype(np.float64)
    given, given_test = y.copy(), y_test.copy()

    @numba.njit
    def top_grade(labels, scores):
        return labels[np.argmax(scores)]

    @numba.njit
    def top_grade_writing_its_inputs(labels, scores):
        value = labels[np.argmax(scores)]
        labels[:] = 0.0
        scores[:] = 0.0
        return value

    results = []
    for metric in (top_grade, top_grade_writing_its_inputs):
        model = LambdaMART(n_estimators=4, eval_metric=metric, verbose=1, random_state=0)
        model.fit(X, y, qid=qid, eval_set=[(X, y, qid), (X_test, y_test, qid_test)])
        results.append((model.predict(X_test), [list(values.values())[0] for values in model.evals_result_.values()]))
    np.testing.assert_array_equal(y, given)
    np.testing.assert_array_equal(y_test, given_test)
    np.testing.assert_array_equal(results[1][0], results[0][0])
    assert results[1][1] == results[0][1]

    @numba.njit
    def raises(labels, scores):
        if len(labels):
            raise ValueError("no value here")
        return 0.0

    with pytest.raises(ValueError, match="eval_metric raises raised: no value here"):
        LambdaMART(n_estimators=2, eval_metric=raises).fit(X, y, qid=qid, eval_set=[(X, y, qid)])
    ids = []

    def writes_ids(labels, scores, query_boundaries, query_ids):
        ids.append(query_ids.copy())
        query_ids[:] = -1
        return 0.0

    LambdaMART(n_estimators=3, eval_metric=writes_ids).fit(X, y, qid=qid, eval_set=[(X_test, y_test, qid_test)])
    assert all(np.array_equal(seen, ids[0]) for seen in ids) and (ids[0] >= 0).all()


def test_a_metric_given_wrapped_keeps_its_name_and_its_compiled_form(data):
    """``eval_metric=CustomMetric(f)`` was wrapped again: its values were keyed
    "CustomMetric", not ``f``'s name."""
    X, y, qid, valid = data

    @numba.njit
    def top_grade(labels, scores):
        return labels[np.argmax(scores)]

    results = [
        LambdaMART(n_estimators=3, eval_metric=metric, random_state=0).fit(X, y, qid=qid, eval_set=[valid]).evals_result_
        for metric in (top_grade, CustomMetric(top_grade))
    ]
    assert list(results[1]["valid_0"]) == ["top_grade"]
    assert results[1] == results[0]
