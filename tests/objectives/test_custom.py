"""Custom objectives over queries: the built-in losses through the callable interface give
the built-in models; a compiled per-query loss equals its Python form; bad output is refused."""

import warnings

import numba
import numpy as np
import pytest

from forestrank import LambdaMART, make_ranking
from forestrank.ensemble._sampling import GAIN_NOISE, seed_entropy, seed_sequence
from forestrank.objectives import XENDCG, LambdaRank


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=60, docs_per_query=(3, 25), n_features=6, random_state=1)


def _through_the_interface(objective):
    """A built-in objective as a user's callable of the labels, scores and queries."""

    def function(labels, scores, query_boundaries, query_ids):
        if not hasattr(objective, "labels_"):
            objective.prepare(labels, query_boundaries)
        function.query_ids = query_ids
        g, h = np.empty(len(scores)), np.empty(len(scores))
        objective.gradients(scores, g, h)
        return g, h

    return function


@pytest.mark.slow  # two fits per loss: with the slow tests
@pytest.mark.parametrize("name", ["lambdarank", "xendcg"])
def test_a_builtin_loss_written_as_a_callable_grows_the_builtin_model(data, name):
    X, y, qid = data
    # XE-NDCG's noise as the estimator seeds it for random_state=0.
    objective = LambdaRank() if name == "lambdarank" else XENDCG("exp", seed_sequence(seed_entropy(0), GAIN_NOISE))
    function = _through_the_interface(objective)
    custom = LambdaMART(n_estimators=8, objective=function, random_state=0).fit(X, y, qid=qid)
    builtin = LambdaMART(n_estimators=8, objective=name, random_state=0).fit(X, y, qid=qid)
    for a, b in zip(custom.trees_, builtin.trees_):
        np.testing.assert_array_equal(a.nodes["feature"], b.nodes["feature"])
    np.testing.assert_allclose(custom.predict(X), builtin.predict(X), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(function.query_ids, np.unique(qid))


@numba.njit
def ranknet_one_query(labels, scores, gradients, hessians):
    """RankNet (Burges et al., ICML 2005): the logistic loss of every pair of different grades."""
    gradients[:] = 0.0
    hessians[:] = 0.0
    for i in range(len(labels)):
        for j in range(len(labels)):
            if labels[i] > labels[j]:
                p = 1.0 / (1.0 + np.exp(scores[i] - scores[j]))  # the pair's probability of being misordered
                gradients[i] -= p
                gradients[j] += p
                hessians[i] += p * (1.0 - p)
                hessians[j] += p * (1.0 - p)


def ranknet_all_queries(labels, scores, query_boundaries, query_ids):
    g, h = np.empty(len(scores)), np.empty(len(scores))
    for start, end in zip(query_boundaries[:-1], query_boundaries[1:]):
        ranknet_one_query.py_func(labels[start:end], scores[start:end], g[start:end], h[start:end])
    return g, h


@pytest.mark.slow  # compiles the driver for its function: with the slow tests
def test_a_compiled_per_query_loss_equals_its_python_form_on_one_thread_or_two(data):
    X, y, qid = data
    compiled = LambdaMART(n_estimators=8, objective=ranknet_one_query, n_jobs=2, random_state=0).fit(X, y, qid=qid)
    python = LambdaMART(n_estimators=8, objective=ranknet_all_queries, n_jobs=1, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_allclose(compiled.predict(X), python.predict(X), rtol=0, atol=1e-12)
    assert compiled.score(X, y, qid) > 0.8


@numba.njit
def writes_nothing(labels, scores, gradients, hessians):
    pass


@pytest.mark.parametrize(
    ("function", "error", "match"),
    [
        (lambda y, s, b, ids: s - y, TypeError, "must return \\(gradients, hessians\\); it returned ndarray"),
        (lambda y, s, b, ids: (s[:-1], np.ones(len(s) - 1)), ValueError, "returned gradients of shape"),
        (lambda y, s, b, ids: (s * np.nan, np.ones(len(s))), ValueError, "non-finite gradients"),
        (lambda y, s, b, ids: (s - y, -np.ones(len(s))), ValueError, "negative hessians"),
        # numpy's own errors, and complex values cast to real with only numpy's warning
        (lambda y, s, b, ids: (np.array(["a"] * len(s)), np.ones(len(s))), ValueError, "returned gradients that are not numbers"),
        (lambda y, s, b, ids: (s - y, {}), ValueError, "returned hessians that are not numbers"),
        (lambda y, s, b, ids: (s - y + 1j, np.ones(len(s))), ValueError, "returned complex gradients; they must be real"),
        pytest.param(  # compiles the driver for its function: with the slow tests
            writes_nothing, ValueError, "a compiled function must write every row of its query", marks=pytest.mark.slow
        ),
    ],
)
def test_bad_output_is_refused_by_name(data, function, error, match):
    X, y, qid = data
    with pytest.raises(error, match=match):
        LambdaMART(n_estimators=2, objective=function).fit(X, y, qid=qid)


def test_a_callable_objective_is_refused_on_dask_collections(data):
    da = pytest.importorskip("dask.array", reason="the dask backend needs forestrank[dask]")
    X, y, qid = data
    with pytest.raises(ValueError, match="a callable objective is called with the whole fit's queries"):
        LambdaMART(objective=ranknet_all_queries).fit(da.from_array(X), da.from_array(y), qid=da.from_array(qid))


def test_a_compiled_function_of_the_wrong_form_or_that_raises_is_named(data):
    """A compiled objective of the wrong arity surfaced numba's TypingError about
    forestrank's own kernel, and one that raised a SystemError; both name the function."""
    X, y, qid = data

    @numba.njit
    def three_arguments(labels, scores, gradients):
        gradients[:] = scores - labels

    @numba.njit
    def raises(labels, scores, gradients, hessians):
        raise ValueError("no gradient here")

    with pytest.raises(TypeError, match=r"the compiled objective three_arguments must take \(y, scores, gradients, hessians\)"):
        LambdaMART(n_estimators=2, objective=three_arguments).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="the compiled objective raises raised: no gradient here"):
        LambdaMART(n_estimators=2, objective=raises).fit(X, y, qid=qid)


@numba.njit
def _squared_error(labels, scores, gradients, hessians):
    for row in range(len(labels)):
        gradients[row] = scores[row] - labels[row]
        hessians[row] = 1.0


@numba.njit
def _squared_error_writing_its_inputs(labels, scores, gradients, hessians):
    _squared_error(labels, scores, gradients, hessians)
    labels[:] = 0.0
    scores[:] = 100.0


def test_a_function_that_writes_to_its_inputs_changes_neither_the_callers_y_nor_the_fit(data):
    """A compiled objective was given the fit's labels (the caller's own y, when sorted
    float64) and training scores: writing to them zeroed the caller's y and changed the
    model. The Python form's query ids were shared by every call too."""
    X, y, qid = data
    order = np.argsort(qid, kind="stable")
    X, y, qid = X[order], y[order].astype(np.float64), qid[order]
    given = y.copy()
    model = LambdaMART(n_estimators=5, objective=_squared_error_writing_its_inputs, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(y, given)
    reference = LambdaMART(n_estimators=5, objective=_squared_error, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))
    seen = []

    def squared_error_writing_ids(labels, scores, query_boundaries, query_ids):
        seen.append(query_ids.copy())
        query_ids[:] = -1
        return scores - labels, np.ones(len(scores))

    LambdaMART(n_estimators=3, objective=squared_error_writing_ids).fit(X, y, qid=qid)
    assert all(np.array_equal(ids, seen[0]) for ids in seen) and (seen[0] >= 0).all()


def test_steps_that_diverge_on_tiny_hessians_name_the_objective_not_only_the_learning_rate(data):
    """Hessians of 1e-300 make Newton steps of 1e300 at any learning rate, and the error
    said only to lower learning_rate."""
    X, y, qid = data

    def tiny_curvature(labels, scores, query_boundaries, query_ids):
        return scores - labels + 1.0, np.full(len(scores), 1e-300)

    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(ValueError, match=r"Newton steps -G / H of the objective tiny_curvature's .*hessians near 0"):
            LambdaMART(n_estimators=5, objective=tiny_curvature).fit(X, y, qid=qid)


@numba.njit
def _squared_error_without_curvature(labels, scores, gradients, hessians):
    gradients[:] = scores - labels
    hessians[:] = 0.0


def test_hessians_of_zero_warn_when_no_tree_splits(data):
    """A first-order loss returning hessians of 0 took leaves of 0 without a word (every
    score stayed 0); with l2_regularization, min_child_weight let no node split (every
    tree one leaf: one score for all rows). The squared split gain with l2 learns from the
    same gradients, and a loss whose curvature vanishes only later does not warn."""
    X, y, qid = data

    def squared_error(labels, scores, query_boundaries, query_ids):
        return scores - labels, np.zeros(len(scores))

    def curvature_at_the_start_only(labels, scores, query_boundaries, query_ids):
        return scores - labels, np.full(len(scores), float(not scores.any()))

    warning = r"returned hessians of 0 for every row, and no tree of the fit split: the model scores every document"
    for function in (squared_error, _squared_error_without_curvature):
        for settings, score_count in (({}, 1), ({"l2_regularization": 1.0}, 1)):
            with pytest.warns(UserWarning, match=rf"the objective {function.__name__} {warning}"):
                model = LambdaMART(n_estimators=3, objective=function, **settings).fit(X, y, qid=qid)
            assert len(np.unique(model.predict(X))) == score_count and model.predict(X).any() == bool(settings)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            learned = LambdaMART(n_estimators=3, objective=function, split_gain="squared", l2_regularization=1.0)
            assert len(np.unique(learned.fit(X, y, qid=qid).predict(X))) > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        learned = LambdaMART(n_estimators=3, objective=curvature_at_the_start_only).fit(X, y, qid=qid)
    assert len(np.unique(learned.predict(X))) > 1
