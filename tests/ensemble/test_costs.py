"""Cost-aware splits, the free-after-first-use rule, tree costs and early exits (Mohan, ch. 6)."""

import numpy as np
import pytest

import forestrank.ensemble._boosting as boosting_module
import forestrank.ensemble._forest as forest_module
from forestrank import BROOF, AveragedRanker, CalibratedRanker, EarlyExit, LambdaMART, PLRank, RFHybridRanker, RFListRanker, RFPointRanker, make_ranking
from forestrank.ensemble._costs import FeatureCosts, check_feature_costs, features_used, tree_costs
from forestrank.ensemble._broof import default_forest

# A tree with feature penalties is a build_tree specialisation of its own (its
# ``feature_penalty`` an array, not None): after the quick suite, as constrained trees.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=60, docs_per_query=20, n_features=8, random_state=0)


COSTS = np.array([1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 8.0, 16.0])


# --- the penalty in the split criterion --------------------------------------------


def _stump_gain(make, data, penalty):
    """The recorded (scaled) gain of a depth-1 tree's split with every feature costing 1."""
    X, y, qid = data
    model = make(feature_costs=np.ones(X.shape[1]), cost_penalty=penalty).fit(X, y, qid=qid)
    tree = model.trees_[0]
    assert tree.nodes["feature"][0] >= 0, "the stump must split"
    return tree.nodes["feature"][0], tree.feature_gains.sum()


def _entropy(y):
    p = np.bincount(y.astype(int)) / len(y)
    return -np.sum(p[p > 0] * np.log(p[p > 0]))


FOREST = dict(n_estimators=1, max_depth=1, max_features=None, query_subsample=1.0, random_state=0)
BOOSTED = dict(n_estimators=1, max_leaf_nodes=2, objective="mart", learning_rate=1.0, min_samples_leaf=1, random_state=0)


@pytest.mark.parametrize(
    ("name", "make", "unit"),
    [
        # The unit is the root's reducible cost in the criterion's reported units.
        ("entropy", lambda **kw: RFPointRanker(**FOREST, **kw), lambda y: _entropy(y)),
        ("gini", lambda **kw: RFPointRanker(criterion="gini", **FOREST, **kw), lambda y: 1 - np.sum((np.bincount(y.astype(int)) / len(y)) ** 2)),
        ("variance", lambda **kw: RFPointRanker(criterion="variance", **FOREST, **kw), lambda y: np.var(y)),
        ("newton", lambda **kw: LambdaMART(**BOOSTED, **kw), lambda y: len(y) * np.var(y)),
        ("squared", lambda **kw: LambdaMART(split_gain="squared", **BOOSTED, **kw), lambda y: np.var(y)),
        ("listwise", lambda **kw: RFListRanker(**FOREST, ndcg_k=None, max_queries_per_split=None, **kw), lambda y: 1.0),
    ],
)
def test_the_penalised_gain_is_the_gain_less_lambda_times_the_share_of_cost_times_the_root_impurity(name, make, unit, data):
    X, y, _ = data
    lam = 0.01  # every feature costs 1: each carries 1/8 of the cost, the same penalty, so the same split wins
    feature, plain = _stump_gain(make, data, 0.0)
    penalised_feature, penalised = _stump_gain(make, data, lam)
    assert penalised_feature == feature
    assert penalised == pytest.approx(plain - lam / X.shape[1] * unit(y), rel=1e-9, abs=1e-12)


def test_a_penalty_moves_the_split_to_a_cheaper_feature_and_a_large_one_stops_it(data):
    X, y, qid = data
    make = lambda **kw: RFPointRanker(**FOREST, **kw)  # noqa: E731
    best = make().fit(X, y, qid=qid).trees_[0].nodes["feature"][0]
    costs = np.zeros(X.shape[1])
    costs[best] = 1.0  # only the best feature costs anything
    moved = make(feature_costs=costs, cost_penalty=1.0).fit(X, y, qid=qid).trees_[0]
    assert moved.nodes["feature"][0] != best
    everything = make(feature_costs=np.ones(X.shape[1]), cost_penalty=1e6).fit(X, y, qid=qid).trees_[0]
    assert len(everything.nodes) == 1  # no split pays for itself: a single leaf


def test_costs_whose_sum_overflows_keep_their_shares(data):
    """Each feature's penalty is its share of the costs: finite costs whose sum leaves
    float64's range still have shares (the penalty was silently 0 for every feature)."""
    X, y, qid = data
    costs = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 1.0, 2.0, 4.0])[: X.shape[1]]
    make = lambda costs: LambdaMART(n_estimators=5, random_state=0, feature_costs=costs, cost_penalty=0.5)  # noqa: E731
    assert sum((costs * 1e307).tolist()) == np.inf  # each cost finite, their sum not
    scaled, plain = make(costs * 1e307).fit(X, y, qid=qid), make(costs).fit(X, y, qid=qid)
    assert [tree.nodes["feature"].tolist() for tree in scaled.trees_] == [tree.nodes["feature"].tolist() for tree in plain.trees_]
    oblivious = LambdaMART(n_estimators=5, random_state=0).fit(X, y, qid=qid)
    assert not np.array_equal(scaled.predict(X), oblivious.predict(X))


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: RFPointRanker(n_estimators=6, random_state=0, **kw),
        lambda **kw: RFPointRanker(n_estimators=6, criterion="variance", random_state=0, **kw),
        lambda **kw: RFHybridRanker(n_estimators=3, listwise_depth=2, random_state=0, **kw),
        lambda **kw: LambdaMART(n_estimators=5, random_state=0, **kw),
        lambda **kw: PLRank(n_estimators=4, random_state=0, **kw),
        lambda **kw: BROOF(n_estimators=2, n_trees=3, random_state=0, **kw),
    ],
)
def test_lambda_zero_is_bitwise_the_cost_oblivious_model(make, data):
    X, y, qid = data
    plain = make().fit(X, y, qid=qid)
    costed = (
        make(forest=default_forest().set_params(feature_costs=COSTS, cost_penalty=0.0))
        if isinstance(plain, BROOF)
        else make(feature_costs=COSTS, cost_penalty=0.0)
    ).fit(X, y, qid=qid)
    np.testing.assert_array_equal(costed.predict(X), plain.predict(X))


# --- used once, then free ------------------------------------------------------------


def _record_penalties(monkeypatch, module):
    seen = []
    grow = module.grow_tree

    def recording(*args, feature_penalty=None, **kwargs):
        tree = grow(*args, feature_penalty=feature_penalty, **kwargs)
        seen.append((None if feature_penalty is None else feature_penalty.copy(), tree))
        return tree

    monkeypatch.setattr(module, "grow_tree", recording)
    return seen


def test_boosting_pays_for_a_feature_once_then_it_is_free_for_later_iterations(data, monkeypatch):
    X, y, qid = data
    seen = _record_penalties(monkeypatch, boosting_module)
    model = LambdaMART(n_estimators=12, feature_costs=COSTS, cost_penalty=0.05, random_state=0).fit(X, y, qid=qid)
    share = 0.05 * COSTS / COSTS.sum()
    for t, (penalty, _) in enumerate(seen):
        earlier = features_used([tree for _, tree in seen[:t]]) if t else np.zeros(len(COSTS), bool)
        np.testing.assert_array_equal(penalty, np.where(earlier, 0.0, share))
    assert 0 < model.tree_costs_.sum() < COSTS.sum()


def test_forest_waves_see_the_features_of_the_waves_before_them(data, monkeypatch):
    X, y, qid = data
    seen = _record_penalties(monkeypatch, forest_module)
    RFPointRanker(
        n_estimators=9, feature_costs=COSTS, cost_penalty=0.02, cost_wave_size=3, n_jobs=1, random_state=0
    ).fit(X, y, qid=qid)
    share = 0.02 * COSTS / COSTS.sum()
    for t, (penalty, _) in enumerate(seen):
        wave_start = t - t % 3
        earlier = features_used([tree for _, tree in seen[:wave_start]]) if wave_start else np.zeros(len(COSTS), bool)
        np.testing.assert_array_equal(penalty, np.where(earlier, 0.0, share))


def test_with_a_fixed_wave_size_serial_equals_threaded(data):
    X, y, qid = data
    fits = [
        RFPointRanker(n_estimators=8, feature_costs=COSTS, cost_penalty=0.05, cost_wave_size=2, n_jobs=n, random_state=0)
        .fit(X, y, qid=qid)
        .predict(X)
        for n in (1, 2)
    ]
    np.testing.assert_array_equal(*fits)


def test_a_warm_start_that_ends_inside_a_wave_is_the_single_fit():
    """A continuation started its waves at its first new tree, and paid for every earlier
    tree at once: after 4 trees in waves of 3, tree 4 saw tree 3's features, which the
    single fit's tree 4 (tree 3's wave) does not."""
    X, y, qid = make_ranking(n_queries=25, docs_per_query=10, n_features=8, random_state=3)
    costs = [1.0, 2, 4, 8, 16, 32, 3, 5]
    kw = dict(feature_costs=costs, cost_penalty=0.3, cost_wave_size=3, max_features=1, max_depth=1, random_state=7)
    one = RFPointRanker(n_estimators=12, **kw).fit(X, y, qid=qid)
    for first in (4, 5, 6):
        warm = RFPointRanker(n_estimators=first, warm_start=True, **kw).fit(X, y, qid=qid)
        warm.set_params(n_estimators=12).fit(X, y, qid=qid)
        np.testing.assert_array_equal(warm.predict(X), one.predict(X))
        np.testing.assert_array_equal(warm.tree_costs_, one.tree_costs_)


def test_broof_rounds_get_the_features_of_earlier_rounds_free(data):
    X, y, qid = data
    forest = RFPointRanker(criterion="variance", min_samples_leaf=20, feature_costs=COSTS, cost_penalty=0.05)
    model = BROOF(n_estimators=3, n_trees=3, forest=forest, random_state=0).fit(X, y, qid=qid)
    trees = [tree for kept in model.estimators_ for tree in kept.trees_]
    np.testing.assert_array_equal(model.tree_costs_, tree_costs(trees, COSTS))
    assert model.average_cost() == pytest.approx(COSTS[features_used(trees)].sum())


# --- the cost of a model ---------------------------------------------------------------


class _Tree:
    def __init__(self, features):
        self.nodes = np.zeros(len(features), dtype=[("feature", np.int64)])
        self.nodes["feature"] = features
        self.feature_gains = np.zeros(4)


def test_tree_costs_count_each_feature_once_in_tree_order():
    costs = np.array([1.0, 2.0, 4.0, 8.0])
    trees = [_Tree([0, 2, -1, -1, -1]), _Tree([2, -1, -1]), _Tree([1, 0, -1, -1, -1]), _Tree([-1])]
    np.testing.assert_array_equal(tree_costs(trees, costs), [5.0, 0.0, 2.0, 0.0])
    np.testing.assert_array_equal(tree_costs(trees, None), np.zeros(4))
    schedule = FeatureCosts(costs, 2.0, 4)
    schedule.pay_for(trees[:1])
    np.testing.assert_allclose(schedule.penalty(), [0.0, 2 * 2 / 15, 0.0, 2 * 8 / 15])
    assert FeatureCosts(costs, 0.0, 4).penalty() is None and FeatureCosts(np.zeros(4), 1.0, 4).penalty() is None


def test_average_cost_without_and_with_early_exits_by_hand(data):
    X, y, qid = data
    model = LambdaMART(n_estimators=6, feature_costs=COSTS, cost_penalty=0.02, random_state=0).fit(X, y, qid=qid)
    assert model.average_cost() == pytest.approx(model.tree_costs_.sum())
    exit_ = EarlyExit(every=2, fraction=0.5)
    assert model.average_cost(X, qid, early_exit=exit_) == pytest.approx(exit_.document_costs_.mean())
    cumulative = np.concatenate([[0.0], np.cumsum(model.tree_costs_)])
    np.testing.assert_allclose(exit_.document_costs_, cumulative[exit_.trees_passed_])
    # 20 documents per query: 10 exit after 2 iterations, 5 after 4, 5 pass all 6.
    for q in np.unique(qid):
        np.testing.assert_array_equal(np.bincount(exit_.trees_passed_[qid == q], minlength=7)[[2, 4, 6]], [10, 5, 5])


# --- early exits --------------------------------------------------------------------------


# A forest and a boosted model, the two ways early exits sum trees.
each_kind_of_model = pytest.mark.parametrize(
    "make",
    [lambda: RFPointRanker(n_estimators=9, random_state=0), lambda: LambdaMART(n_estimators=9, random_state=0)],
    ids=["forest", "boosting"],
)


@each_kind_of_model
def test_an_early_exit_freezes_exactly_the_bottom_fraction_and_their_scores_stop_changing(make, data):
    X, y, qid = data
    model = make().fit(X, y, qid=qid)
    exit_ = EarlyExit(every=3, fraction=0.25)
    scores = model.predict(X, qid=qid, early_exit=exit_)
    np.testing.assert_array_equal(model.predict(X), make().fit(X, y, qid=qid).predict(X))  # plain predict unchanged
    n_trees = len(model.trees_)
    partial = {
        t: (model._sum_trees(X, slice(0, t)) / t if isinstance(model, RFPointRanker) else model._ranking_scores(model._baseline(X)[:, [0]] + model._sum_trees(X, slice(0, t))[:, None]))
        for t in (3, 6, n_trees)
    }
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        active = rows
        for t in (3, 6):
            order = active[np.lexsort((-active, partial[t][active]))]  # ascending; ties: later rows lower
            n_frozen = int(0.25 * len(active))
            frozen, active = order[:n_frozen], order[n_frozen:]
            assert np.all(exit_.trees_passed_[frozen] == t)
        assert np.all(exit_.trees_passed_[active] == n_trees)
        np.testing.assert_allclose(scores[active], partial[n_trees][active])
        # A frozen document keeps its partial score, shifted below every later exit.
        for t in (3, 6):
            frozen = rows[exit_.trees_passed_[rows] == t]
            later = rows[exit_.trees_passed_[rows] > t]
            assert scores[frozen].max() < scores[later].min()
            shift = scores[frozen] - partial[t][frozen]
            np.testing.assert_allclose(shift, shift[0])


@each_kind_of_model
def test_early_exits_on_sparse_rows_are_those_on_dense_rows(make, data):
    """A forest's early exits on a sparse X died with "sparse array length is ambiguous"."""
    import scipy.sparse

    X, y, qid = data
    model = make().fit(X, y, qid=qid)
    dense, sparse = EarlyExit(every=2, fraction=0.3), EarlyExit(every=2, fraction=0.3)
    expected = model.predict(X, qid=qid, early_exit=dense)
    np.testing.assert_array_equal(model.predict(scipy.sparse.csr_matrix(X), qid=qid, early_exit=sparse), expected)
    np.testing.assert_array_equal(sparse.trees_passed_, dense.trees_passed_)
    assert model.average_cost(scipy.sparse.csr_matrix(X), qid, EarlyExit(2, 0.3)) == model.average_cost(X, qid, EarlyExit(2, 0.3))


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda m, X, q: m.predict(X, early_exit=EarlyExit(2, 0.2)), ValueError, "early_exit needs qid"),
        (lambda m, X, q: m.predict(X, qid=q, early_exit=0.2), TypeError, "early_exit must be an EarlyExit"),
        (lambda m, X, q: EarlyExit(every=0), ValueError, "every must be an integer >= 1"),
        (lambda m, X, q: EarlyExit(fraction=1.0), ValueError, r"fraction must be a number in \[0, 1\)"),
        # set after the exit was made: unchecked, 0 failed in range() and 1.5 froze every document
        (lambda m, X, q: setattr(EarlyExit(), "every", 0), ValueError, "every must be an integer >= 1"),
        (lambda m, X, q: setattr(EarlyExit(), "fraction", 1.5), ValueError, r"fraction must be a number in \[0, 1\)"),
        (lambda m, X, q: m.average_cost(early_exit=EarlyExit()), ValueError, "needs the documents X"),
    ],
)
def test_bad_early_exit_input_is_named(call, error, message, data):
    X, y, qid = data
    model = RFPointRanker(n_estimators=2, random_state=0).fit(X, y, qid=qid)
    with pytest.raises(error, match=message):
        call(model, X, qid)


@pytest.mark.parametrize(
    ("costs", "penalty", "error", "message"),
    [
        (np.ones(7), 1.0, ValueError, r"feature_costs must have shape \(8,\)"),
        (np.r_[np.ones(7), -1.0], 1.0, ValueError, "feature_costs must be >= 0; feature 7 costs -1"),
        (np.r_[np.ones(7), np.nan], 1.0, ValueError, "feature_costs must be finite; feature 7"),
        (np.r_[np.ones(7), np.inf], 1.0, ValueError, "feature_costs must be finite; feature 7"),
        (np.ones(8), -0.5, ValueError, "cost_penalty"),
    ],
)
def test_bad_costs_are_named(costs, penalty, error, message, data):
    X, y, qid = data
    for make in (RFPointRanker, LambdaMART):
        with pytest.raises(error, match=message):
            make(n_estimators=2, feature_costs=costs, cost_penalty=penalty).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="feature_costs must be an array of numbers"):
        check_feature_costs(["a"] * 8, 8)


def _forest(X, y, qid, seed=0):
    return RFPointRanker(n_estimators=2, max_depth=2, random_state=seed).fit(X, y, qid=qid)


@pytest.mark.parametrize(
    "make_init",
    [
        lambda X, y, qid: (forest := _forest(X, y, qid), forest.trees_),
        # models whose trees are not their trees_: each member's, each forest's, an init's init's
        lambda X, y, qid: (
            model := BROOF(n_estimators=2, n_trees=2, forest=RFPointRanker(criterion="variance", max_depth=2), random_state=0).fit(X, y, qid=qid),
            [tree for forest in model.estimators_ for tree in forest.trees_],
        ),
        lambda X, y, qid: (
            model := AveragedRanker(RFPointRanker(n_estimators=2, max_depth=2), n_models=2, random_state=0).fit(X, y, qid=qid),
            [tree for member in model.estimators_ for tree in member.trees_],
        ),
        lambda X, y, qid: (
            inner := _forest(X, y, qid, seed=1),
            model := LambdaMART(n_estimators=1, max_depth=1, init=inner, random_state=0).fit(X, y, qid=qid),
            inner.trees_ + model.trees_,
        )[1:],
        lambda X, y, qid: (
            model := CalibratedRanker(RFPointRanker(n_estimators=2, max_depth=2, random_state=0), cv=2).fit(X, y, qid=qid),
            model.estimator_.trees_,
        ),
    ],
    ids=["forest", "BROOF", "AveragedRanker", "boosted with its own init", "CalibratedRanker"],
)
def test_igbrt_gets_its_initial_models_features_for_free_and_counts_their_cost(data, monkeypatch, make_init):
    """Only an initial model's trees_ were counted: a BROOF's or an AveragedRanker's
    features (and an init's own init's) cost 0 in init_cost_, were charged to the first
    boosted tree and penalised as unpaid."""
    X, y, qid = data
    seen = _record_penalties(monkeypatch, boosting_module)
    init, trees = make_init(X, y, qid)
    model = LambdaMART(n_estimators=3, init=init, feature_costs=COSTS, cost_penalty=0.05, random_state=0).fit(X, y, qid=qid)
    initial = features_used(trees)
    assert 0 < initial.sum() < len(COSTS)
    assert model.init_cost_ == pytest.approx(COSTS[initial].sum())
    np.testing.assert_array_equal(seen[0][0], np.where(initial, 0.0, 0.05 * COSTS / COSTS.sum()))
    np.testing.assert_array_equal(model.tree_costs_, tree_costs(model.trees_, COSTS, paid=initial))
    assert model.average_cost() == pytest.approx(model.init_cost_ + model.tree_costs_.sum())
    exit_ = EarlyExit(every=1, fraction=0.5)
    model.predict(X, qid=qid, early_exit=exit_)
    assert exit_.document_costs_.min() >= model.init_cost_


def test_an_init_whose_members_read_target_statistics_is_refused_by_name(data):
    """Counting an init's trees went through the export's terms, which refuse a member
    fitted with cat_target_statistics: the fit failed with the export's error, with or
    without feature costs. Such an init is refused as one fitted so itself is: its
    trees read columns beside the features."""
    X, y, qid = data
    X = X.copy()
    X[:, 0] = np.floor(np.abs(X[:, 0]) * 3) % 4  # a column of category codes
    member = LambdaMART(n_estimators=2, categorical_features=[0], cat_target_statistics=True, subsample=0.5)
    init = AveragedRanker(member, n_models=2, random_state=0).fit(X, y, qid=qid)
    for costs in (None, COSTS):
        with pytest.raises(ValueError, match="init: this LambdaMART was fitted with cat_target_statistics=True"):
            LambdaMART(n_estimators=2, init=init, feature_costs=costs, random_state=0).fit(X, y, qid=qid)
