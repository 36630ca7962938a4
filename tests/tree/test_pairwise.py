"""Symmetric trees scored and valued over pairs (CatBoost's pairwise mode), against linear algebra."""

import numpy as np
import pytest

from forestrank import LambdaMART, make_ranking
from forestrank._tree import _pairwise, _scans
from forestrank._tree._grow import binned_features


@pytest.fixture(scope="module")
def missing_ranking():
    return make_ranking(n_queries=40, docs_per_query=15, n_features=4, missing_fraction=0.2, random_state=5)


def _laplacian(nodes_a, nodes_b, weights, n):
    W = np.zeros((n, n))
    for a, b, w in zip(nodes_a, nodes_b, weights):
        if a != b:
            W[a, a] += w
            W[b, b] += w
            W[a, b] -= w
            W[b, a] -= w
    return W


def _reference_values(W, G, l2, prior):
    """CatBoost's pairwise leaf values with numpy: the regularised system without its
    last leaf, that leaf's value 0, then a zero mean."""
    n = len(G)
    R = prior * (np.eye(n) - np.full((n, n), 1.0 / n)) + l2 * np.eye(n)
    x = np.zeros(n)
    x[:-1] = np.linalg.solve((W + R)[:-1, :-1], G[:-1])
    return x - x.mean()


@pytest.mark.slow  # compiles the pairwise kernels: with the slow tests
@pytest.mark.parametrize(("n", "l2", "prior"), [(2, 0.0, 0.1), (5, 0.0, 0.1), (8, 3.0, 0.1), (8, 1.0, 0.0)])
def test_leaf_values_solve_the_regularised_pair_system(n, l2, prior):
    rng = np.random.default_rng(n)
    a, b = rng.integers(0, n, 40), rng.integers(0, n, 40)
    W = _laplacian(a, b, rng.uniform(0.1, 1.0, 40), n)
    G = rng.normal(size=n)
    values = np.empty(n)
    _pairwise.solve_leaf_values(W, G, n, l2, prior, np.empty((n, n)), values)
    np.testing.assert_allclose(values, _reference_values(W, G, l2, prior), rtol=1e-10, atol=1e-12)


def _brute_force_score(bins, row_node, n_nodes, derivatives, pairs, cut_bin, missing_bin, missing_left, l2, prior):
    """One cut's children built row by row, their system assembled from every pair."""
    left = np.where(bins == missing_bin, missing_left, bins <= cut_bin) if missing_bin >= 0 else bins <= cut_bin
    child = 2 * row_node + (~left).astype(int)
    n = 2 * n_nodes
    G = np.bincount(child, weights=derivatives, minlength=n)
    winners, losers, weights = pairs
    W = _laplacian(child[winners], child[losers], weights, n)
    x = _reference_values(W, G, l2, prior)
    return G @ x - 0.5 * x @ W @ x


@pytest.mark.slow  # compiles the pairwise kernels: with the slow tests
@pytest.mark.parametrize(("n_nodes", "direction"), [(1, "learn"), (2, "learn"), (4, "learn"), (2, "left"), (2, "right")])
def test_every_cuts_score_is_the_solved_systems_score_of_its_children(missing_ranking, n_nodes, direction):
    X, _, _ = missing_ranking
    binned = binned_features(X, 12, 0, 1)
    X_binned, n_bins, missing_bins = binned["X_binned"], binned["n_bins"], binned["missing_bins"]
    n_rows = len(X)
    rng = np.random.default_rng(n_nodes)
    row_node = rng.integers(0, n_nodes, n_rows).astype(np.int64)
    derivatives = rng.normal(size=n_rows)
    winners, losers = rng.integers(0, n_rows, 900), rng.integers(0, n_rows, 900)
    weights = np.where(rng.uniform(size=900) < 0.2, 0.0, rng.uniform(0.1, 1.0, 900))  # some pairs left out
    rows = np.arange(n_rows, dtype=np.int64)
    features = np.arange(X.shape[1], dtype=np.int32)
    scores = np.empty((X.shape[1], n_bins.max(), 2))
    _pairwise.level_scores(
        np.ascontiguousarray(X_binned.T), n_bins, missing_bins, features, rows, row_node, n_nodes, derivatives, winners,
        losers, row_node[winners], row_node[losers], weights, 0.5, 0.1, _scans.MISSING_DIRECTIONS[direction], scores,
    )  # fmt: skip
    checked = 0
    for feature in features:
        bins = X_binned[:, feature].astype(np.int64)
        missing_bin = int(missing_bins[feature])
        present = np.unique(bins[bins != missing_bin])
        for side in (0, 1):
            for cut_bin in range(n_bins.max()):
                # the missing rows alone on the left are kept at the missing bin (cut -1)
                alone = side == 1 and missing_bin >= 0 and cut_bin == missing_bin
                valid = (
                    cut_bin in present[:-1] or (side == 0 and missing_bin >= 0 and cut_bin == present[-1]) or alone
                ) and {"learn": side == 0 or missing_bin >= 0, "left": side == 1, "right": side == 0}[direction]
                if not valid:
                    assert scores[feature, cut_bin, side] == -np.inf, (feature, cut_bin, side)
                    continue
                expected = _brute_force_score(
                    bins, row_node, n_nodes, derivatives, (winners, losers, weights), -1 if alone else cut_bin, missing_bin,
                    side == 1, 0.5, 0.1,
                )  # fmt: skip
                assert scores[feature, cut_bin, side] == pytest.approx(expected, rel=1e-9, abs=1e-12), (feature, cut_bin, side)
                checked += 1
    assert checked > 40


@pytest.mark.slow  # fits compile the pairwise estimator path: with the slow tests
def test_yetirank_pairwise_grows_symmetric_trees_whose_leaves_solve_a_new_draw_of_pairs(missing_ranking):
    X, y, qid = missing_ranking
    settings = dict(n_estimators=4, objective="yetirank_pairwise", grow_policy="symmetric", max_depth=3, random_state=0)
    model = LambdaMART(**settings).fit(X, y, qid=qid)
    again = LambdaMART(**settings).fit(X, y, qid=qid)
    np.testing.assert_array_equal(model.predict(X), again.predict(X))
    for tree in model.trees_:
        levels = [tree.nodes["feature"][2**level - 1 : 2 ** (level + 1) - 1] for level in range(3)]
        assert all(len(set(level)) == 1 for level in levels)
        leaves = tree.nodes["feature"] < 0
        counts = tree.n_node_samples[leaves]
        assert abs(np.dot(tree.values[leaves], counts)) < 1e-9 * np.abs(tree.values).max()  # zero mean over the rows
    with pytest.raises(ValueError, match="objective='yetirank_pairwise'.*needs grow_policy='symmetric'"):
        LambdaMART(objective="yetirank_pairwise").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="max_depth at most 8 .*got max_depth=9"):
        LambdaMART(objective="yetirank_pairwise", grow_policy="symmetric", max_depth=9).fit(X, y, qid=qid)


@pytest.mark.slow  # fits compile the pairwise estimator path: with the slow tests
def test_yetirank_pairwise_learns_and_pair_sampling_changes_the_trees():
    X, y, qid = make_ranking(n_queries=60, docs_per_query=20, n_features=6, random_state=2)
    from forestrank import ndcg_score

    settings = dict(n_estimators=20, objective="yetirank_pairwise", grow_policy="symmetric", max_depth=4, random_state=0)
    model = LambdaMART(**settings).fit(X, y, qid=qid)
    assert ndcg_score(y, model.predict(X), qid, k=10) > 0.8
    sampled = LambdaMART(**settings, subsample=0.5).fit(X, y, qid=qid)
    assert not np.array_equal(sampled.predict(X), model.predict(X))


@pytest.mark.slow  # fits compile the pairwise estimator path: with the slow tests
@pytest.mark.parametrize(("direction", "side"), [("left", 1), ("right", 0)])
def test_a_fixed_missing_direction_holds_at_every_level(missing_ranking, direction, side):
    X, y, qid = missing_ranking
    model = LambdaMART(
        n_estimators=3, objective="yetirank_pairwise", grow_policy="symmetric", max_depth=3, missing_direction=direction,
        random_state=0,
    ).fit(X, y, qid=qid)  # fmt: skip
    for tree in model.trees_:
        internal = tree.nodes["feature"] >= 0
        assert np.all(tree.missing_left[internal] == side)


def test_pairs_weigh_their_rows_mean_weight_and_nothing_with_a_row_out_of_the_tree():
    from forestrank.ensemble._boosting import _pair_row_weights

    weights = np.array([1.0, 3.0, 0.0, 2.0])
    np.testing.assert_array_equal(_pair_row_weights(weights, np.array([0, 1, 2]), np.array([1, 2, 3])), [2.0, 0.0, 0.0])


@pytest.mark.slow  # fits compile the pairwise estimator path: with the slow tests
def test_a_pair_weighs_its_rows_mean_weight_in_the_gradients_too():
    """The quadratic terms weighed a pair by its rows' mean weight, the linear terms each
    row's gradient by its own weight: weights (3, 1), (1, 3) and (2, 2) on two-document
    queries (every pair weighing 2) grew three models, up to 0.47 apart. One loss now."""
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(200), 2)
    X = rng.integers(0, 6, size=(400, 3)).astype(float)
    y = np.clip(np.round(X[:, 0] / 2 + rng.normal(0, 1, 400)), 0, 3)
    settings = dict(
        objective="yetirank_pairwise", grow_policy="symmetric", n_estimators=3, max_depth=2, learning_rate=1.0,
        random_state=0,
    )  # fmt: skip
    predictions = []
    for weights in (np.tile([3.0, 1.0], 200), np.tile([1.0, 3.0], 200), np.full(400, 2.0)):
        weights[-2:] = 1.0  # one query of unit weight: the same unit of weight in the three fits
        predictions.append(LambdaMART(**settings).fit(X, y, qid=qid, sample_weight=weights).predict(X))
    np.testing.assert_array_equal(predictions[0], predictions[2])
    np.testing.assert_array_equal(predictions[1], predictions[2])


@pytest.mark.slow  # fits compile the pairwise estimator path: with the slow tests
def test_queries_without_pairs_and_drawn_pairs_fit():
    X, y, qid = make_ranking(n_queries=20, docs_per_query=8, n_features=4, random_state=0)
    one_grade = np.repeat(np.arange(20) % 2, 8).astype(float)  # every query one grade: no pair anywhere
    model = LambdaMART(
        n_estimators=3, objective="yetirank_pairwise", grow_policy="symmetric", subsample=0.5, random_state=0
    ).fit(X, one_grade, qid=qid)  # fmt: skip
    np.testing.assert_array_equal(model.predict(X), 0.0)


@pytest.mark.parametrize(
    ("name", "value"),
    [("split_gain", "squared"), ("min_samples_leaf", 50), ("min_child_weight", 1e9), ("subsample_level", "document")],
)
def test_options_pairwise_trees_do_not_read_are_refused_by_name(name, value):
    """Each fitted a model bit for bit the default's, without a word."""
    X, y, qid = make_ranking(n_queries=10, docs_per_query=6, n_features=3, random_state=0)
    model = LambdaMART(objective="yetirank_pairwise", grow_policy="symmetric", n_estimators=2, **{name: value})
    with pytest.raises(ValueError, match=rf"{name} shapes the trees of per-row gradients .*yetirank_pairwise.* Got {name}="):
        model.fit(X, y, qid=qid)


@pytest.mark.slow  # fits compile the pairwise estimator path: with the slow tests
@pytest.mark.parametrize("l2_regularization", [0.0, 3.0])
def test_a_level_whose_cut_moves_no_row_is_never_taken(l2_regularization):
    """On binary features (and their mirrors, as one-hot pairs are) a level can repeat an
    earlier level's cut, which moves no row. Its score is the nodes' own up to rounding
    without l2; with l2 an empty last child moves the solve's pinned leaf and the cut
    scores above its nodes. Neither is a gain: no level may leave every node whole."""
    for seed in range(4):
        X, y, qid = make_ranking(n_queries=20, docs_per_query=(5, 15), n_features=4, random_state=seed)
        X = (X > 0).astype(float)
        X = np.hstack([X, 1.0 - X])
        model = LambdaMART(
            objective="yetirank_pairwise", grow_policy="symmetric", n_estimators=5, max_depth=6, random_strength=0,
            l2_regularization=l2_regularization, random_state=0,
        ).fit(X, y, qid=qid)
        for tree in model.trees_:
            for level in range(tree.max_depth):
                nodes = np.arange(2**level - 1, 2 ** (level + 1) - 1)
                children = tree.n_node_samples[2 * nodes + 1], tree.n_node_samples[2 * nodes + 2]
                assert ((children[0] > 0) & (children[1] > 0)).any(), (seed, level)
