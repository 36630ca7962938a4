"""Symmetric (oblivious) trees: one split per level, its gain summed over the level's nodes."""

import numpy as np
import pytest

from forestrank import LambdaMART, PLRank, make_ranking
from forestrank._tree import _criteria, _scans, _symmetric
from forestrank._tree._grow import binned_features


@pytest.fixture(scope="module")
def missing_ranking():
    return make_ranking(n_queries=60, docs_per_query=20, n_features=6, missing_fraction=0.2, random_state=3)


def _levels(tree):
    """Each level's node ids of a level-ordered tree, and the tree's depth."""
    depth = int(np.log2(tree.node_count + 1)) - 1
    return [np.arange(2**level - 1, 2 ** (level + 1) - 1) for level in range(depth)], depth


def test_every_level_shares_one_split_and_a_rows_leaf_is_the_bits_of_its_comparisons(missing_ranking):
    X, y, qid = missing_ranking
    model = LambdaMART(n_estimators=8, grow_policy="symmetric", max_depth=4, random_state=0).fit(X, y, qid=qid)
    for tree in model.trees_:
        levels, depth = _levels(tree)
        assert tree.node_count == 2 ** (depth + 1) - 1 and tree.n_leaves == 2**depth
        leaf_bits = np.zeros(len(X), dtype=np.int64)
        for nodes in levels:
            for field in ("feature", "threshold"):
                assert len(np.unique(tree.nodes[field][nodes])) == 1
            assert len(np.unique(tree.missing_left[nodes])) == 1
            node = nodes[0]
            column = X[:, tree.nodes["feature"][node]]
            right = ~tree.goes_left(np.full(len(X), node), column)
            leaf_bits = 2 * leaf_bits + right
        np.testing.assert_array_equal(tree.apply(X), 2**depth - 1 + leaf_bits)
        # Children come right after their level: node k's children are 2k + 1 and 2k + 2.
        internal = np.flatnonzero(tree.nodes["feature"] >= 0)
        np.testing.assert_array_equal(tree.nodes["left"][internal], 2 * internal + 1)


# best_candidate's missing bins of four features without one.
NO_MISSING = np.full(4, -1, dtype=np.int32)


def _brute_force_level_gains(X_binned, targets, weights, node_of_row, n_nodes, missing_bins, l2, min_child_weight, min_leaf):
    """``level_gains`` by enumeration: every feature, cut and side, every node's rows split by a mask."""
    n_features = X_binned.shape[1]
    max_bins = int(X_binned.max()) + 1
    gains = np.full((n_features, max_bins, 2), -np.inf)

    def cost(mask):
        g = (weights[mask] * targets[mask, 0]).sum()
        h = (weights[mask] * targets[mask, 1]).sum()
        return -(g * g) / (h + l2) if h + l2 > 0 else 0.0

    def level_gain(goes_left):
        """The level's gain when the rows ``goes_left`` marks go left, each node's own."""
        total = 0.0
        for node in range(n_nodes):
            rows = node_of_row == node
            left = rows & goes_left
            right = rows & ~left
            h_left = (weights[left] * targets[left, 1]).sum()
            h_right = (weights[right] * targets[right, 1]).sum()
            if left.sum() < min_leaf or right.sum() < min_leaf or h_left < min_child_weight or h_right < min_child_weight:
                continue
            total += cost(rows) - cost(left) - cost(right)
        return total

    for feature in range(n_features):
        column = X_binned[:, feature]
        missing = column == missing_bins[feature]
        present_bins = np.unique(column[~missing])
        for b in present_bins[:-1]:  # a cut leaves rows on both sides of the level
            for side in (0, 1):
                gains[feature, b, side] = level_gain(np.where(missing, side == 1, column <= b))
        if missing.any():  # "is it missing?": every present row left (side 0), or the missing rows alone left (side 1)
            gains[feature, present_bins[-1], 0] = level_gain(~missing)
            gains[feature, missing_bins[feature], 1] = level_gain(missing)
    return gains


@pytest.mark.parametrize("shifted", [False, True])
@pytest.mark.parametrize(("l2", "min_child_weight", "min_leaf"), [(0.0, 0.0, 1), (2.0, 0.5, 3)])
def test_level_gains_are_the_sum_over_the_nodes_of_each_nodes_gain(l2, min_child_weight, min_leaf, shifted):
    """Every cut, side and "is it missing?" candidate against enumeration. ``shifted``: each
    node's values start higher, so a node holds none of the level's lowest bins, where its
    gain with the missing rows left is that of the missing rows alone (it was taken as 0)."""
    rng = np.random.default_rng(0)
    node_of_row = rng.integers(0, 4, 120)
    X = rng.integers(0, 5, size=(120, 4)).astype(float) + (2 * node_of_row[:, None] if shifted else 0)
    X[rng.random(X.shape) < 0.15] = np.nan
    binned = binned_features(X, 255, 0, 1)
    X_binned, missing_bins = binned["X_binned"], binned["missing_bins"]
    targets = np.column_stack([rng.normal(size=120), rng.uniform(0.1, 1.0, 120)])
    weights = rng.uniform(0.5, 2.0, 120)
    order = np.argsort(node_of_row, kind="stable").astype(np.int64)
    node_start = np.searchsorted(node_of_row[order], np.arange(5)).astype(np.int64)
    n_features, max_bins = X_binned.shape[1], binned["bin_thresholds"].shape[1]
    histograms = np.empty((4, n_features, max_bins, 4))
    for node in range(4):
        _symmetric._fill(X_binned, order, node_start[node], node_start[node + 1], targets, weights, _criteria.NEWTON, 0, n_features, histograms[node])
    gains = np.empty((n_features, max_bins, 2))
    _symmetric.level_gains(
        histograms, histograms[:, 0].sum(axis=1), np.arange(n_features, dtype=np.int32), binned["n_bins"], missing_bins,
        _criteria.NEWTON, l2, min_child_weight,
        float(min_leaf), _scans.LEARN, gains,
    )  # fmt: skip
    expected = _brute_force_level_gains(X_binned, targets, weights, node_of_row, 4, missing_bins, l2, min_child_weight, min_leaf)
    np.testing.assert_allclose(gains[:, : expected.shape[1]], expected, rtol=1e-9, atol=1e-12)
    assert np.all(gains[:, expected.shape[1] :] == -np.inf)


def test_a_levels_histograms_by_subtraction_are_those_of_its_rows():
    rng = np.random.default_rng(1)
    X_binned = rng.integers(0, 7, size=(200, 5)).astype(np.uint8)
    targets = np.column_stack([rng.normal(size=200), rng.uniform(size=200)])
    weights = rng.uniform(size=200)
    order = rng.permutation(200).astype(np.int64)
    parent_start = np.array([0, 90, 200], dtype=np.int64)
    child_start = np.array([0, 30, 90, 170, 200], dtype=np.int64)  # a smaller left, then a smaller right child
    parents = np.empty((2, 5, 7, 4))
    children = np.empty((4, 5, 7, 4))
    direct = np.empty((4, 5, 7, 4))
    for node in range(2):
        _symmetric._fill(X_binned, order, parent_start[node], parent_start[node + 1], targets, weights, _criteria.NEWTON, 0, 5, parents[node])
    for node in range(4):
        _symmetric._fill(X_binned, order, child_start[node], child_start[node + 1], targets, weights, _criteria.NEWTON, 0, 5, direct[node])
    for n_blocks in (1, 3):
        n_bins = np.full(5, 7, dtype=np.int32)
        _symmetric.fill_level(X_binned, n_bins, order, child_start, targets, weights, _criteria.NEWTON, parents, children, n_blocks)
        np.testing.assert_allclose(children, direct, atol=1e-12)


def test_split_level_keeps_each_nodes_rows_in_order_left_rows_first():
    X_binned = np.array([[0], [3], [1], [2], [3], [0], [2]], dtype=np.uint8)  # bin 3: missing
    order = np.arange(7, dtype=np.int64)
    node_start = np.array([0, 4, 7], dtype=np.int64)
    new_start = np.empty(5, dtype=np.int64)
    _symmetric.split_level(X_binned, order, node_start, 0, 1, 3, 1, np.empty(7, dtype=np.int64), new_start)
    np.testing.assert_array_equal(order, [0, 1, 2, 3, 4, 5, 6])  # rows 0-2 and 4-5 go left
    np.testing.assert_array_equal(new_start, [0, 3, 4, 6, 7])
    _symmetric.split_level(X_binned, order, node_start, 0, 1, 3, 0, np.empty(7, dtype=np.int64), new_start)
    np.testing.assert_array_equal(order, [0, 2, 1, 3, 5, 4, 6])
    np.testing.assert_array_equal(new_start, [0, 2, 4, 5, 7])


def test_a_symmetric_stump_is_the_best_first_stump():
    X, y, qid = make_ranking(n_queries=40, docs_per_query=15, n_features=5, random_state=1)
    settings = dict(n_estimators=5, l2_regularization=1.0, min_samples_leaf=5, random_state=0)
    stump = LambdaMART(max_depth=1, grow_policy="symmetric", random_strength=0.0, **settings).fit(X, y, qid=qid)
    best_first = LambdaMART(max_leaf_nodes=2, **settings).fit(X, y, qid=qid)
    for a, b in zip(stump.trees_, best_first.trees_):
        np.testing.assert_array_equal(a.nodes, b.nodes)
        np.testing.assert_array_equal(a.values, b.values)
        np.testing.assert_allclose(a.feature_gains, b.feature_gains, rtol=1e-12)
    np.testing.assert_array_equal(stump.predict(X), best_first.predict(X))


def test_no_useful_level_stops_the_tree_and_unreached_leaves_hold_zero():
    X = np.array([[0.0], [0.0], [1.0], [1.0]] * 10)
    y = np.array([0, 0, 1, 1] * 10, dtype=float)
    qid = np.repeat(np.arange(10), 4)
    settings = dict(n_estimators=1, grow_policy="symmetric", min_samples_leaf=1, l2_regularization=0.0, random_strength=0.0, random_state=0)
    model = LambdaMART(max_depth=3, **settings).fit(X, y, qid=qid)
    tree = model.trees_[0]
    assert tree.node_count == 3  # one feature of two values: the second level has no cut
    assert tree.values[1] < 0 < tree.values[2]
    deep = LambdaMART(max_depth=2, **settings)
    X2 = np.column_stack([X[:, 0], np.tile([0.0, 1.0, 0.0, 0.0], 10)])  # the right node's rows all have 0
    y2 = np.array([0, 1, 2, 2] * 10, dtype=float)  # the second feature orders the left node's rows
    tree = deep.fit(X2, y2, qid=qid).trees_[0]
    assert tree.node_count == 7
    empty = np.flatnonzero((tree.n_node_samples == 0) & (tree.nodes["feature"] < 0))
    assert len(empty) == 1 and tree.values[empty[0]] == 0.0


def test_symmetric_fits_are_reproducible_and_the_same_on_one_thread_or_two(missing_ranking):
    X, y, qid = missing_ranking
    settings = dict(n_estimators=10, grow_policy="symmetric", random_strength=2.0, bagging_temperature=1.0, max_features=0.5, random_state=4)
    one = LambdaMART(n_jobs=1, **settings).fit(X, y, qid=qid)
    two = LambdaMART(n_jobs=2, **settings).fit(X, y, qid=qid)
    again = LambdaMART(n_jobs=1, **settings).fit(X, y, qid=qid)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))
    np.testing.assert_array_equal(one.predict(X), again.predict(X))
    plain = LambdaMART(n_jobs=1, **{**settings, "random_strength": 0.0, "bagging_temperature": 0.0}).fit(X, y, qid=qid)
    assert not np.array_equal(plain.predict(X), one.predict(X))


def test_plrank_grows_symmetric_trees(missing_ranking):
    X, y, qid = missing_ranking
    model = PLRank(n_estimators=3, grow_policy="symmetric", max_depth=3, random_state=0).fit(X, y, qid=qid)
    assert all(tree.node_count == 15 for tree in model.trees_)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"monotonic_cst": [1, 0, 0, 0, 0, 0]}, "monotonic_cst cannot be combined with grow_policy='symmetric'"),
        ({"interaction_cst": "pairwise"}, "grow_policy='symmetric' cannot be combined with interaction_cst"),
        ({"feature_costs": np.ones(6), "cost_penalty": 1.0}, "cannot be combined with feature_costs"),
        ({"quantized_gradients": 4}, "cannot be combined with quantized_gradients"),
        ({"missing_direction": "separate"}, "cannot be combined with missing_direction='separate'"),
        ({"max_depth": 13}, "max_depth=13 is deeper than grow_policy='symmetric' grows"),
    ],
)
def test_what_symmetric_trees_do_not_combine_with_is_refused_by_name(missing_ranking, settings, message):
    X, y, qid = missing_ranking
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        LambdaMART(n_estimators=2, grow_policy="symmetric", **settings).fit(X, y, qid=qid)


@pytest.mark.parametrize(
    "settings",
    # quantized trees compile a builder of their own (int32 pools): after the quick suite
    [pytest.param({"quantized_gradients": 4}, marks=pytest.mark.slow), {"interaction_cst": "pairwise"}],
)
def test_a_refusal_under_yetirank_pairwise_advises_settings_that_fit(missing_ranking, settings):
    """The other objectives are advised best-first trees, which yetirank_pairwise refuses:
    it is advised YetiRank on best-first trees, which takes the option."""
    X, y, qid = missing_ranking
    with pytest.raises(ValueError) as refusal:
        LambdaMART(n_estimators=2, objective="yetirank_pairwise", grow_policy="symmetric", **settings).fit(X, y, qid=qid)
    assert "grows symmetric trees only: use objective='yetirank' with grow_policy='lossguide'" in str(refusal.value)
    LambdaMART(n_estimators=2, objective="yetirank", grow_policy="lossguide", **settings).fit(X, y, qid=qid)


def test_random_strength_needs_symmetric_trees(missing_ranking):
    X, y, qid = missing_ranking
    with pytest.raises(ValueError, match="random_strength perturbs the split scores of grow_policy='symmetric'"):
        LambdaMART(n_estimators=2, random_strength=1.0).fit(X, y, qid=qid)


def test_depthwise_trees_grow_level_by_level(missing_ranking):
    X, y, qid = missing_ranking
    model = LambdaMART(n_estimators=3, grow_policy="depthwise", max_depth=3, max_leaf_nodes=None, min_samples_leaf=1, random_state=0)
    depths = [tree.max_depth for tree in model.fit(X, y, qid=qid).trees_]
    assert depths == [3, 3, 3]
    # With a leaf budget, breadth-first order fills the shallow levels first: 5 leaves of depth at most 3.
    budget = LambdaMART(n_estimators=1, grow_policy="depthwise", max_leaf_nodes=5, min_samples_leaf=1, random_state=0)
    tree = budget.fit(X, y, qid=qid).trees_[0]
    assert tree.n_leaves == 5 and tree.max_depth == 3


def test_the_noisy_choice_scores_the_square_root_of_what_the_children_explain():
    from forestrank._tree import _rng

    rng = np.random.default_rng(2)
    gains = rng.uniform(0.0, 5.0, size=(4, 6, 2))
    gains[1, 3:] = -np.inf  # no cut there
    features = np.array([3, 1, 0], dtype=np.int32)
    state = np.array([12345, 678], dtype=np.uint64)
    every = (0.0, 1.0, -np.inf)  # every candidate may split
    assert _symmetric.best_candidate(gains, features, NO_MISSING, 0.0, 0.0, state.copy(), *every) == tuple(
        [int(i) for i in np.unravel_index(np.argmax(gains[features]), (3, 6, 2))]
    )
    explained, noise_sd = 7.5, 0.3
    # The same draws, in candidate order, from a copy of the generator: every candidate is
    # within reach of the best at this deviation.
    copy = state.copy()
    draws = np.array([_rng.standard_normal(copy) for _ in range(int(np.isfinite(gains[features]).sum()))])
    finite = np.isfinite(gains[features])
    scores = np.full(gains[features].shape, -np.inf)
    scores[finite] = np.sqrt(gains[features][finite] + explained) + noise_sd * draws
    expected = tuple(int(i) for i in np.unravel_index(np.argmax(scores), scores.shape))
    assert _symmetric.best_candidate(gains, features, NO_MISSING, explained, noise_sd, state.copy(), *every) == expected
    assert _symmetric.best_candidate(np.full((4, 6, 2), -np.inf), features, NO_MISSING, 0.0, 0.0, state.copy(), *every)[0] == -1
    # What a level's nodes explain: G^2 / (H + l2) each (newton), (sum w y)^2 / W (variance).
    totals = np.array([[2.0, 3.0, 5.0, 4.0], [-1.0, 1.0, 2.0, 2.0]])
    assert _symmetric._explained(_criteria.NEWTON, totals, 1.0) == pytest.approx(4 / 4 + 1 / 2)
    assert _symmetric._explained(_criteria.VARIANCE, totals, 0.0) == pytest.approx(4 / 4 + 1 / 2)


def test_the_noise_draws_among_the_cuts_that_would_split_only():
    """One cut of gain 0.5 among 79 that move no row (gain 0): noise drew one of those
    nearly every time, and a level of gain 0 ends the tree."""
    gains = np.zeros((4, 10, 2))
    gains[2, 6, 1] = 0.5
    features = np.arange(4, dtype=np.int32)
    state = np.array([12345, 678], dtype=np.uint64)
    picks = {_symmetric.best_candidate(gains, features, NO_MISSING, 10.0, 0.1, state, 0.0, 2.0, 0.0) for _ in range(200)}
    assert picks == {(2, 6, 1)}
    assert _symmetric.best_candidate(gains, features, NO_MISSING, 10.0, 0.1, state, 0.0, 2.0, 1.0)[0] == -1  # 0.5 * 2 <= 1
    assert _symmetric.best_candidate(gains, features, NO_MISSING, 10.0, 0.1, state, 0.4, 1.0, 0.0) == (2, 6, 1)  # 0.5 - 0.4 > 0
    assert _symmetric.best_candidate(gains, features, NO_MISSING, 10.0, 0.1, state, 0.5, 1.0, 0.0)[0] == -1


@pytest.mark.parametrize("objective", ["lambdarank", "yetirank"])
def test_noise_does_not_end_symmetric_trees(objective):
    """``random_strength`` perturbs which cut a level takes, not whether the tree goes on:
    with it, most trees of these fits ended after one to three of their six levels (2 to
    8 leaves), where nearly every noise-free tree has all six. A tree ends early only
    when no cut of a level gains (with the L2 prior, a cut can lose)."""
    X, y, qid = make_ranking(n_queries=50, docs_per_query=10, random_state=0)
    make = lambda **params: LambdaMART(  # noqa: E731
        n_estimators=10, objective=objective, grow_policy="symmetric", random_state=0, **params
    )
    noisy, noise_free = make().fit(X, y, qid=qid), make(random_strength=0.0).fit(X, y, qid=qid)
    assert noisy.get_params()["random_strength"] == "auto"  # 1 on symmetric trees
    for model in (noisy, noise_free):
        leaves = [tree.n_leaves for tree in model.trees_]
        assert leaves.count(2**6) >= 8 and min(leaves) >= 2**5, leaves


def test_the_oblivious_predictor_sums_what_the_node_walk_sums_bit_for_bit(missing_ranking):
    import scipy.sparse

    from forestrank._tree import _predictor

    X, y, qid = missing_ranking
    model = LambdaMART(n_estimators=12, grow_policy="symmetric", max_depth=5, random_state=0).fit(X, y, qid=qid)
    assert model._oblivious is not None
    X_new = np.vstack([X, np.full((3, X.shape[1]), np.nan), X[:5] * 1.5])
    walked = np.zeros(len(X_new))
    _predictor.add_tree_values(
        X_new, model._forest_nodes, model._forest_missing_left, None, None, model._tree_offsets, model._predict_pass_bytes,
        walked,
    )
    np.testing.assert_array_equal(model._sum_trees(X_new), walked)
    staged = list(model.staged_predict(X_new))
    np.testing.assert_array_equal(staged[-1], model.predict(X_new))
    dense = np.nan_to_num(X_new, nan=0.0)
    np.testing.assert_array_equal(model.predict(scipy.sparse.csr_matrix(dense)), model.predict(dense))
    # One tree that is not symmetric and the ensemble walks its nodes.
    assert _predictor.symmetric_levels(LambdaMART(n_estimators=3, random_state=0).fit(X, y, qid=qid).trees_) is None


def test_a_query_of_weight_two_grows_the_trees_of_that_query_twice(missing_ranking):
    """LambdaRank's gradients are per query: a query weighted 2 adds twice its gradients and
    hessians to every histogram, as a copy of it under another query id does. Without
    score noise: its deviation follows the gradients' second moment (``_score_noise``),
    ``(2 g)**2`` for the weighted query against ``2 g**2`` for the two copies."""
    X, y, qid = missing_ranking
    X = np.round(X, 1)  # under 255 values a feature: one bin per value, whatever rows are copied
    settings = dict(
        n_estimators=5, grow_policy="symmetric", min_samples_leaf=1, min_child_weight=0.0, random_strength=0.0,
        random_state=0,
    )  # fmt: skip
    first = qid == qid[0]
    weights = np.where(first, 2.0, 1.0)
    weighted = LambdaMART(**settings).fit(X, y, qid=qid, sample_weight=weights)
    copied = LambdaMART(**settings).fit(
        np.vstack([X, X[first]]), np.concatenate([y, y[first]]), qid=np.concatenate([qid, np.full(first.sum(), qid.max() + 1)])
    )
    for a, b in zip(weighted.trees_, copied.trees_):
        np.testing.assert_array_equal(a.nodes["feature"], b.nodes["feature"])
        np.testing.assert_array_equal(a.nodes["threshold"][a.nodes["feature"] >= 0], b.nodes["threshold"][b.nodes["feature"] >= 0])
    np.testing.assert_allclose(weighted.predict(X), copied.predict(X), rtol=1e-9, atol=1e-12)


def test_histograms_beyond_the_memory_bound_are_refused_before_any_allocation():
    with pytest.raises(ValueError, match=r"symmetric trees of depth 12 on 700 features of 256 bins need 21\.9 GiB"):
        _symmetric.SymmetricTreeMemory(700, 256, 12)


@pytest.mark.slow  # two fits per setting: with the slow tests
@pytest.mark.parametrize(
    ("settings", "resolved"),
    [
        ({"grow_policy": "symmetric"}, {"l2_regularization": 3.0, "random_strength": 1.0}),
        pytest.param(  # compiles the pairwise estimator path: with the slow tests
            {"grow_policy": "symmetric", "objective": "yetirank_pairwise"}, {"l2_regularization": 0.0, "random_strength": 0.0},
            marks=pytest.mark.slow,
        ),
        ({"grow_policy": "lossguide"}, {"l2_regularization": 0.0, "random_strength": 0.0}),
        ({"grow_policy": "depthwise", "max_depth": 3}, {"l2_regularization": 0.0, "random_strength": 0.0}),
    ],
)
def test_auto_regularisers_resolve_to_the_chosen_values_for_each_tree_and_loss(missing_ranking, settings, resolved):
    X, y, qid = missing_ranking
    auto = LambdaMART(n_estimators=4, random_state=0, **settings).fit(X, y, qid=qid)
    assert auto.get_params()["l2_regularization"] == "auto" and auto.get_params()["random_strength"] == "auto"
    explicit = LambdaMART(n_estimators=4, random_state=0, **settings, **resolved).fit(X, y, qid=qid)
    np.testing.assert_array_equal(auto.predict(X), explicit.predict(X))


# yetirank_pairwise compiles its level solve: after the quick suite
@pytest.mark.parametrize("objective", ["lambdarank", pytest.param("yetirank_pairwise", marks=pytest.mark.slow)])
def test_a_level_that_saw_no_missing_value_sends_it_to_its_heavier_side(objective):
    """Levels without missing rows sent missing values right, the lighter side of most
    levels, where a best-first node sends them to its heavier child (docs/missing_values.md);
    a fixed direction stays fixed."""
    X, y, qid = make_ranking(n_queries=40, docs_per_query=15, n_features=5, random_state=0)
    for direction in ("learn", "right"):
        model = LambdaMART(
            n_estimators=4, grow_policy="symmetric", objective=objective, missing_direction=direction, random_state=0
        ).fit(X, y, qid=qid)
        for tree in model.trees_:
            levels, _ = _levels(tree)
            for nodes in levels:
                left = tree.weighted_n_node_samples[2 * nodes + 1].sum()
                right = tree.weighted_n_node_samples[2 * nodes + 2].sum()
                expected = int(left >= right) if direction == "learn" else 0
                assert (tree.missing_left[nodes] == expected).all()
        assert model._oblivious is not None  # one direction a level: the oblivious kernel still reads the trees


@pytest.mark.parametrize(
    ("objective", "direction"),
    [
        ("lambdarank", "learn"),
        ("lambdarank", "left"),
        ("lambdarank", "right"),
        pytest.param("yetirank_pairwise", "learn", marks=pytest.mark.slow),  # its level solve: after the quick suite
    ],
)
def test_a_level_can_split_the_missing_rows_from_the_present_ones(objective, direction):
    """The "is it missing?" candidate (docs/missing_values.md) was never tried by a level:
    a feature missing exactly on the relevant documents was not split on."""
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(40), 10)
    y = rng.integers(0, 2, 400).astype(float)
    X = np.column_stack([np.where(y > 0, np.nan, 1.0), rng.normal(size=400)])
    model = LambdaMART(
        n_estimators=1, grow_policy="symmetric", objective=objective, max_depth=1, random_strength=0.0,
        missing_direction=direction, random_state=0,
    ).fit(X, y, qid=qid)  # fmt: skip
    tree = model.trees_[0]
    assert tree.nodes["feature"][0] == 0 and np.isinf(tree.nodes["threshold"][0])
    assert model.score(X, y, qid=qid) == 1.0


@pytest.mark.parametrize(("direction", "imputed"), [("left", -1e3), ("right", 1e3)])
def test_a_fixed_missing_direction_grows_the_trees_of_an_imputed_value_beyond_every_present_one(direction, imputed):
    """docs/missing_values.md: ``missing_direction="left"`` partitions the rows as imputing a
    value below every present one would. Symmetric trees grew other trees: a node without
    rows in the level's lowest bins counted 0 for the cuts below them, not the gain of its
    missing rows alone on the left, and the missing rows alone were no candidate."""
    X, y, qid = make_ranking(n_queries=60, docs_per_query=15, n_features=5, random_state=0)
    X[np.random.default_rng(1).random(X.shape) < 0.2] = np.nan
    settings = dict(
        n_estimators=6, grow_policy="symmetric", random_strength=0.0, missing_direction=direction, max_bins=None,
        random_state=0,
    )  # fmt: skip
    with_missing = LambdaMART(**settings).fit(X, y, qid=qid)
    filled = np.where(np.isnan(X), imputed, X)
    with_imputed = LambdaMART(**settings).fit(filled, y, qid=qid)
    np.testing.assert_array_equal(with_missing.predict(X), with_imputed.predict(filled))
