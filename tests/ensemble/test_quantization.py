"""Quantized gradients: the rounding, the rescaled thresholds, and the boosted models they give."""

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.utils._param_validation import InvalidParameterError

from forestrank import LambdaMART, PLRank, make_ranking
from forestrank.ensemble._quantization import check_quantized_sums, quantize_gradients

pytestmark = pytest.mark.slow  # their own build_tree specialisation (int32 pools): after the quick suite


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=150, docs_per_query=(5, 40), n_features=10, random_state=0)


def test_rounding_is_unbiased_and_stays_on_its_levels():
    rng = np.random.default_rng(0)
    gradients = rng.normal(size=50)
    hessians = rng.uniform(0.0, 3.0, size=50)
    out = np.empty((50, 2))
    draws = []
    for _ in range(4000):
        g_scale, h_scale = quantize_gradients(gradients, hessians, 4, rng, out)
        assert np.array_equal(out, np.round(out))
        assert out[:, 0].min() >= -2 and out[:, 0].max() <= 2
        assert out[:, 1].min() >= 0 and out[:, 1].max() <= 4
        draws.append(out * (g_scale, h_scale))
    assert g_scale == pytest.approx(np.abs(gradients).max() / 2)
    assert h_scale == pytest.approx(hessians.max() / 4)
    mean = np.mean(draws, axis=0)
    # Each draw is within one level of its value, so 4000 draws put the mean within
    # a few standard errors (<= level / (2 sqrt(4000))) of it.
    np.testing.assert_allclose(mean[:, 0], gradients, atol=6 * g_scale / (2 * np.sqrt(4000)))
    np.testing.assert_allclose(mean[:, 1], hessians, atol=6 * h_scale / (2 * np.sqrt(4000)))


def test_values_on_the_levels_are_kept_exactly():
    gradients = np.array([-3.0, -1.5, 0.0, 1.5, 3.0])
    hessians = np.array([0.0, 0.75, 1.5, 2.25, 3.0])
    out = np.empty((5, 2))
    assert quantize_gradients(gradients, hessians, 4, np.random.default_rng(0), out) == (1.5, 0.75)
    np.testing.assert_array_equal(out, [[-2, 0], [-1, 1], [0, 2], [1, 3], [2, 4]])


def test_quantized_tree_equals_the_exact_tree_when_the_gradients_lie_on_the_levels(data):
    """From zero scores MART's gradients are -y and its hessians 1: with 2 max(y) levels
    both are quantized exactly, so the rescaled thresholds must give the exact tree."""
    X, y, qid = data
    zero = DummyRegressor(strategy="constant", constant=0.0).fit(X, y)
    levels = int(2 * y.max())
    trees = [
        LambdaMART(n_estimators=1, objective="mart", init=zero, quantized_gradients=q, min_child_weight=5.0)
        .fit(X, y, qid=qid)
        .trees_[0]
        for q in (None, levels)
    ]
    exact, quantized = trees
    assert exact.node_count > 20
    np.testing.assert_array_equal(quantized.nodes, exact.nodes)
    np.testing.assert_array_equal(quantized.values, exact.values)
    np.testing.assert_array_equal(quantized.n_node_samples, exact.n_node_samples)
    np.testing.assert_allclose(quantized.weighted_n_node_samples, exact.weighted_n_node_samples)
    np.testing.assert_allclose(quantized.feature_gains, exact.feature_gains, rtol=1e-9)


def test_min_gain_to_split_keeps_its_meaning(data):
    """The gain threshold is rescaled with the gains: a threshold between two of the exact
    tree's split gains stops both models at the same split."""
    X, y, qid = data
    zero = DummyRegressor(strategy="constant", constant=0.0).fit(X, y)
    levels = int(2 * y.max())
    full = LambdaMART(n_estimators=1, objective="mart", init=zero).fit(X, y, qid=qid).trees_[0]
    threshold = 0.5 * full.feature_gains[full.feature_gains > 0].min()
    trees = [
        LambdaMART(n_estimators=1, objective="mart", init=zero, quantized_gradients=q, min_gain_to_split=threshold)
        .fit(X, y, qid=qid)
        .trees_[0]
        for q in (None, levels)
    ]
    np.testing.assert_array_equal(trees[1].nodes, trees[0].nodes)


@pytest.mark.parametrize("min_gain_to_split", [0.0, 1e-3])
def test_gradients_too_small_to_square_give_the_exact_model(min_gain_to_split):
    """The gain threshold's units divided by delta_g**2, which is 0 once the tree's weighted
    gradients are all below 1e-162 (weights spanning more than 2**100 are documented):
    ZeroDivisionError. Such a tree cannot split, quantized or not."""
    X = np.array([[0.0], [1.0], [0.0], [1.0]])
    y = np.array([0, 0, 0, 1])
    qid = np.array([1, 1, 2, 2])
    weights = np.array([1.0, 1.0, 1e-200, 1e-200])  # only the tiny query has an order to learn
    params = dict(n_estimators=2, min_samples_leaf=1, min_gain_to_split=min_gain_to_split, random_state=0)
    exact = LambdaMART(**params).fit(X, y, qid=qid, sample_weight=weights)
    quantized = LambdaMART(quantized_gradients=4, **params).fit(X, y, qid=qid, sample_weight=weights)
    assert [tree.node_count for tree in quantized.trees_] == [tree.node_count for tree in exact.trees_] == [1, 1]
    np.testing.assert_array_equal(quantized.predict(X), exact.predict(X))


def test_weighted_counts_and_importances_are_in_the_exact_units(data):
    X, y, qid = data
    weights = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    model = LambdaMART(n_estimators=3, quantized_gradients=16, random_state=0).fit(X, y, qid=qid, sample_weight=weights)
    exact = LambdaMART(n_estimators=3, random_state=0).fit(X, y, qid=qid, sample_weight=weights)
    for tree in model.trees_:  # weights count in units of the lightest row (docs/design.md, "Public contract")
        assert tree.weighted_n_node_samples[0] == pytest.approx(weights.sum() / weights.min())
        internal = np.flatnonzero(tree.nodes["feature"] >= 0)
        left = tree.nodes["left"][internal]
        np.testing.assert_allclose(
            tree.weighted_n_node_samples[internal],
            tree.weighted_n_node_samples[left] + tree.weighted_n_node_samples[left + 1],
        )
    # the same data and weights: gains of the same order as the exact model's
    ratio = model.trees_[0].feature_gains.sum() / exact.trees_[0].feature_gains.sum()
    assert 0.8 < ratio < 1.25


@pytest.mark.parametrize("estimator", [LambdaMART, PLRank])
def test_quantized_fit_is_reproducible_and_thread_count_independent(data, estimator):
    X, y, qid = data
    predictions = [
        estimator(n_estimators=8, quantized_gradients=4, random_state=5, n_jobs=n_jobs).fit(X, y, qid=qid).predict(X)
        for n_jobs in (1, 2, 2)
    ]
    np.testing.assert_array_equal(predictions[0], predictions[1])
    np.testing.assert_array_equal(predictions[1], predictions[2])


def test_many_levels_approach_the_exact_model(data):
    X, y, qid = data
    exact = LambdaMART(n_estimators=20, random_state=0).fit(X, y, qid=qid)
    fine = LambdaMART(n_estimators=20, quantized_gradients=254, random_state=0).fit(X, y, qid=qid)
    coarse = LambdaMART(n_estimators=20, quantized_gradients=2, random_state=0).fit(X, y, qid=qid)
    fine_corr = np.corrcoef(exact.predict(X), fine.predict(X))[0, 1]
    coarse_corr = np.corrcoef(exact.predict(X), coarse.predict(X))[0, 1]
    # Near-tied splits still flip between models over 20 iterations: 0.986 against 0.921 when written.
    assert fine_corr > 0.97
    assert fine_corr > coarse_corr + 0.03
    assert coarse.score(X, y, qid=qid) > 0.9 * exact.score(X, y, qid=qid)


def test_bad_settings_are_refused_with_the_argument_named(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="quantized_gradients applies to split_gain='newton'"):
        LambdaMART(n_estimators=2, quantized_gradients=4, split_gain="squared").fit(X, y, qid=qid)
    with pytest.raises(InvalidParameterError, match="quantized_gradients"):
        LambdaMART(n_estimators=2, quantized_gradients=1).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="quantized_gradients=64 with 40000000 training rows"):
        check_quantized_sums(64, 40_000_000)
    check_quantized_sums(64, 30_000_000)
    # the penalty's unit would be read from rounded hessians: at B=4 a penalty of 0.2 acted as none
    with pytest.raises(ValueError, match="quantized_gradients cannot be combined with cost_penalty=0.2"):
        LambdaMART(n_estimators=2, quantized_gradients=4, feature_costs=np.ones(X.shape[1]), cost_penalty=0.2).fit(X, y, qid=qid)
    costed = LambdaMART(n_estimators=2, quantized_gradients=4, feature_costs=np.ones(X.shape[1]), cost_penalty=0.0, random_state=0)
    plain = LambdaMART(n_estimators=2, quantized_gradients=4, random_state=0)
    np.testing.assert_array_equal(costed.fit(X, y, qid=qid).predict(X), plain.fit(X, y, qid=qid).predict(X))
