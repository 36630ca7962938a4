"""The boosting iteration compiled whole (``ensemble/_compiled_boosting.py``) against the
per-iteration path it replaces: the same trees and scores, bit for bit."""

import numpy as np
import pytest

from forestrank import LambdaMART, PLRank, make_ranking
from forestrank.ensemble import _boosting
from forestrank.ensemble._boosting import _next_chunk
from forestrank.ensemble._compiled_boosting import CompiledBoosting


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=60, docs_per_query=(5, 30), n_features=8, random_state=0)


class GrowCalls:
    """Counts the calls of ``CompiledBoosting.grow`` and the iterations they boost."""

    def __init__(self, monkeypatch):
        self.iterations = []
        grow = CompiledBoosting.grow

        def counted(compiled, rng_states):
            self.iterations.append(len(rng_states))
            return grow(compiled, rng_states)

        monkeypatch.setattr(CompiledBoosting, "grow", counted)


def per_iteration_fit(monkeypatch, estimator, *args, **kwargs):
    """``estimator`` fitted with every iteration run from Python (no compiled loop)."""
    with monkeypatch.context() as patch:
        patch.setattr(_boosting.BaseBoostingRanker, "_compiled_boosting", lambda self, *arguments: None)
        return estimator.fit(*args, **kwargs)


def assert_same_models(compiled, reference, X):
    assert len(compiled.trees_) == len(reference.trees_)
    for a, b in zip(compiled.trees_, reference.trees_):
        for name in ("nodes", "missing_left", "values", "n_node_samples", "weighted_n_node_samples", "feature_gains"):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
        assert a.has_categories == b.has_categories
        if a.has_categories:
            assert a.category_offsets.tobytes() == b.category_offsets.tobytes()
            assert a.category_bits.tobytes() == b.category_bits.tobytes()
    assert compiled.predict(X).tobytes() == reference.predict(X).tobytes()
    assert compiled.evals_result_ == reference.evals_result_


def check_same_fit(monkeypatch, data, expected_calls, fit_kwargs=None, estimator=LambdaMART, **parameters):
    X, y, qid = data
    fit_kwargs = fit_kwargs or {}
    calls = GrowCalls(monkeypatch)
    compiled = estimator(n_estimators=12, random_state=0, **parameters).fit(X, y, qid=qid, **fit_kwargs)
    if expected_calls == "chunks":  # unobserved: one iteration first, then as many as take a quarter second
        assert calls.iterations[0] == 1 and sum(calls.iterations) == 12
    else:
        assert calls.iterations == expected_calls
    reference = per_iteration_fit(monkeypatch, estimator(n_estimators=12, random_state=0, **parameters), X, y, qid=qid, **fit_kwargs)
    assert_same_models(compiled, reference, X)
    return compiled.trees_


def test_a_compiled_fit_returns_to_python_in_chunks_of_about_a_quarter_second():
    assert _next_chunk(1, 1e-5) == 8  # at most eight times the last call
    assert _next_chunk(64, 64 * 0.01) == 25
    assert _next_chunk(4, 10.0) == 1


def test_a_default_fit_runs_in_compiled_chunks_with_the_per_iteration_trees(monkeypatch, data):
    check_same_fit(monkeypatch, data, "chunks")


@pytest.mark.slow
def test_evaluation_sets_return_to_python_after_every_iteration(monkeypatch, data):
    X, y, qid = data
    check_same_fit(monkeypatch, data, [1] * 12, fit_kwargs={"eval_set": [(X[:200], y[:200], qid[:200])]})


@pytest.mark.slow
@pytest.mark.parametrize(
    "parameters",
    [
        {"split_gain": "squared", "max_features": 0.5},
        {"interaction_cst": "pairwise", "n_jobs": 1},
        {"grow_policy": "depthwise", "max_depth": 3, "l2_regularization": 1.0, "min_child_weight": 0.5},
        {"max_leaf_nodes": 5, "min_samples_leaf": 4, "missing_direction": "left", "n_jobs": 2},
        {"lambdarank_metric": "err", "learning_rate": 0.3},
        {"objective": "mart"},
        {"objective": "c-mart", "learning_rate": 0.5},
    ],
)
def test_the_compiled_loop_grows_the_per_iteration_trees(monkeypatch, data, parameters):
    check_same_fit(monkeypatch, data, "chunks", **parameters)


@pytest.mark.parametrize("estimator", [LambdaMART, PLRank])
def test_trees_that_cannot_split_step_zero_in_both_loops_for_a_shift_invariant_objective(monkeypatch, data, estimator):
    """No split meets min_child_weight: every tree is one leaf, whose step would move each
    query's scores alike (BaseBoostingRanker._store_values); both loops give it 0. (With
    l2_regularization=1: PLRank's curvature along such a step is 0, which without it left
    the step at 0 before the rule too.)"""
    trees = check_same_fit(monkeypatch, data, "chunks", estimator=estimator, min_child_weight=1e12, l2_regularization=1.0)
    assert all(tree.node_count == 1 and tree.values[0] == 0.0 for tree in trees)


def test_categorical_splits_through_the_compiled_loop(monkeypatch, data):
    """Two columns of codes (one with missing values), split by the regularised scan and by
    one-vs-rest: the per-iteration trees, their category bitmaps and scores."""
    X, y, qid = data
    rng = np.random.default_rng(0)
    X = X.copy()
    X[:, 0] = (rng.integers(0, 90, len(y)) + 30 * y) % 100  # a hundred codes carrying the grade
    X[:, 1] = rng.integers(0, 3, len(y))
    X[rng.random(len(y)) < 0.1, 0] = np.nan
    trees = check_same_fit(monkeypatch, (X, y, qid), "chunks", categorical_features=[0, 1], min_data_per_group=10)
    assert sum(tree.has_categories for tree in trees) >= 6


@pytest.mark.slow
def test_plrank_through_the_compiled_loop_with_its_leaves_curvature(monkeypatch, data):
    check_same_fit(monkeypatch, data, "chunks", estimator=PLRank)


@pytest.mark.slow
def test_plrank_variants_through_the_compiled_loop(monkeypatch, data):
    check_same_fit(monkeypatch, data, "chunks", estimator=PLRank, top_k=5, n_permutations=2, max_leaf_nodes=8)


@pytest.mark.slow
def test_sample_weights_and_early_stopping_through_the_compiled_loop(monkeypatch, data):
    X, y, qid = data
    weights = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    X = X.copy()
    X[::7, 2] = np.nan
    check_same_fit(
        monkeypatch, (X, y, qid), [1] * 12, fit_kwargs={"sample_weight": weights}, n_iter_no_change=50,
        validation_fraction=0.2,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    "parameters",
    [
        {"subsample": 0.5},
        {"feature_fraction": 0.5},
        {"objective": "queryrmse"},
        {"objective": "xendcg"},
        {"grow_policy": "symmetric"},
        {"quantized_gradients": 4},
        {"lambdarank_pair_method": "mean"},
    ],
)
def test_per_iteration_draws_and_objectives_without_a_compiled_path_stay_in_python(monkeypatch, data, parameters):
    X, y, qid = data
    calls = GrowCalls(monkeypatch)
    LambdaMART(n_estimators=2, random_state=0, **parameters).fit(X, y, qid=qid)
    assert calls.iterations == []


def test_rows_of_zero_weight_stay_in_python(monkeypatch, data):
    X, y, qid = data
    calls = GrowCalls(monkeypatch)
    weights = np.ones(len(y))
    weights[:5] = 0.0
    LambdaMART(n_estimators=2, random_state=0).fit(X, y, qid=qid, sample_weight=weights)
    assert calls.iterations == []


@pytest.mark.slow
def test_scores_that_diverge_in_the_compiled_loop_are_refused_at_the_same_iteration(monkeypatch, data):
    X, y, qid = data
    calls = GrowCalls(monkeypatch)
    messages = []
    with np.errstate(over="ignore", invalid="ignore"):
        for fit in (LambdaMART(learning_rate=1e308, n_estimators=50, random_state=0).fit, None):
            with pytest.raises(ValueError, match=r"diverged to inf or NaN at iteration \d+") as error:
                if fit is not None:
                    fit(X, y, qid=qid)
                else:
                    per_iteration_fit(monkeypatch, LambdaMART(learning_rate=1e308, n_estimators=50, random_state=0), X, y, qid=qid)
            messages.append(str(error.value))
    assert calls.iterations  # the compiled loop grew the trees it refused
    assert messages[0] == messages[1]
