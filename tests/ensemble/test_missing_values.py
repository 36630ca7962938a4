"""Missing values (NaN) through every estimator: fit, predict, pickle, and where they go."""

import importlib
import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from forestrank import (
    BROOF, DummyRanker, LambdaMART, MissingQidWarning, PLRank, QueryKFold, RFHybridRanker, RFListRanker, RFPointRanker,
    make_ranking, ndcg_scorer,
)  # fmt: skip

importlib.import_module("sklearn.experimental.enable_iterative_imputer")  # IterativeImputer is experimental
from sklearn.impute import IterativeImputer, SimpleImputer  # noqa: E402

ESTIMATORS = [
    RFPointRanker(n_estimators=4, random_state=0),
    RFPointRanker(criterion="random", n_estimators=4, random_state=0),
    RFPointRanker(criterion="variance", n_estimators=4, random_state=0),
    RFPointRanker(missing_direction="separate", n_estimators=4, random_state=0),
    RFListRanker(n_estimators=2, random_state=0),
    RFHybridRanker(n_estimators=2, listwise_depth=2, random_state=0),
    LambdaMART(n_estimators=5, random_state=0),
    LambdaMART(objective="mart", n_estimators=5, random_state=0),
    # boosting with missing_direction="separate" compiles a builder and an iteration of its own: after the quick suite
    pytest.param(LambdaMART(missing_direction="separate", n_estimators=5, random_state=0), marks=pytest.mark.slow),
    PLRank(n_estimators=5, random_state=0),
    pytest.param(PLRank(missing_direction="separate", n_estimators=5, random_state=0), marks=pytest.mark.slow),
    BROOF(n_estimators=2, random_state=0),
    BROOF(n_estimators=2, forest=RFPointRanker(criterion="variance", missing_direction="separate"), random_state=0),
]


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=40, docs_per_query=(5, 25), n_features=6, random_state=0)
    X = X.copy()
    X[np.random.default_rng(0).random(X.shape) < 0.25] = np.nan
    return X, y, qid


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: repr(e))
def test_fit_and_predict_with_missing_values_and_pickle_round_trip(estimator, data):
    X, y, qid = data
    model = estimator.fit(X, y, qid=qid)
    scores = model.predict(X)
    assert np.isfinite(scores).all()
    assert len(np.unique(scores)) > 1
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), scores)


def _one_tree(**params):
    """A single fully grown tree on every row: its leaves are the training rows' own."""
    return RFPointRanker(n_estimators=1, max_features=None, query_subsample=1.0, random_state=0, **params)


def test_missing_rows_all_relevant_go_to_the_relevant_side():
    """x < 0.5 is relevant, x >= 0.5 irrelevant; the missing rows are all relevant, so
    the learned direction sends them left, with the low values, in training and at
    predict time."""
    x = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9, np.nan, np.nan, np.nan])
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1])
    model = _one_tree().fit(x[:, None], y, qid=np.zeros(len(y)))
    tree = model.trees_[0]
    assert tree.nodes["feature"][0] == 0 and 0.4 < tree.nodes["threshold"][0] < 0.6
    assert tree.missing_left[0] == 1
    assert tree.node_count == 3  # one split separates the grades exactly
    np.testing.assert_array_equal(model.predict(np.array([[np.nan], [0.05], [0.95]])), [1.0, 1.0, 0.0])


def test_a_node_without_missing_rows_in_training_sends_them_to_its_heavier_child():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0.7).astype(float)
    model = RFPointRanker(n_estimators=3, max_depth=4, random_state=0).fit(X, y, qid=np.repeat(np.arange(20), 20))
    for tree in model.trees_:
        inner = np.flatnonzero(tree.nodes["feature"] >= 0)
        left = tree.nodes["left"][inner]
        heavier_left = tree.weighted_n_node_samples[left] >= tree.weighted_n_node_samples[left + 1]
        np.testing.assert_array_equal(tree.missing_left[inner], heavier_left.astype(np.uint8))
        # Prediction follows the flags: a row missing every feature ends where they lead.
        node = 0
        while tree.nodes["feature"][node] >= 0:
            node = tree.nodes["left"][node] + (1 - tree.missing_left[node])
        np.testing.assert_array_equal(tree.apply(np.full((1, 3), np.nan)), [node])


def _three_groups():
    """Low values irrelevant, high values very relevant, missing values in between: no
    two-way split separates the three grades."""
    x = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9, np.nan, np.nan, np.nan])
    y = np.array([0, 0, 0, 0, 2, 2, 2, 2, 1, 1, 1])
    return x[:, None], y, np.zeros(len(y))


# With the variance criterion the forest's pool holds three-way splits: a builder of its own
@pytest.mark.parametrize("criterion", ["entropy", pytest.param("variance", marks=pytest.mark.slow)])
def test_separate_gives_the_missing_rows_a_child_of_their_own(criterion):
    """Mohan's strategy 6: one three-way split (one level of ``max_depth``) puts each
    grade in its own leaf, stored as a "missing?" test above the value split; a
    two-way split at that depth cannot."""
    X, y, qid = _three_groups()
    model = _one_tree(criterion=criterion, max_depth=1, missing_direction="separate").fit(X, y, qid=qid)
    tree = model.trees_[0]
    assert tree.node_count == 5
    assert tree.nodes["feature"][0] == 0 and tree.nodes["threshold"][0] == -np.inf and tree.missing_left[0] == 1
    present = tree.nodes["left"][0] + 1
    assert tree.nodes["feature"][present] == 0 and 0.4 < tree.nodes["threshold"][present] < 0.6
    np.testing.assert_array_equal(model.predict(np.array([[np.nan], [0.05], [0.95]])), [1.0, 0.0, 2.0])
    two_way = _one_tree(criterion=criterion, max_depth=1).fit(X, y, qid=qid)
    assert two_way.trees_[0].node_count == 3
    assert len(np.unique(two_way.predict(np.array([[np.nan], [0.05], [0.95]])))) == 2


def test_separate_is_chosen_by_the_gain_of_the_three_way_partition():
    """A feature whose present values say little but whose missingness says much wins
    the three-way split over a feature that splits the present rows a little better."""
    rng = np.random.default_rng(6)
    n = 600
    X = rng.normal(size=(n, 2))
    y = (X[:, 1] > 0).astype(float)  # feature 1 alone separates the grades ...
    absent = rng.random(n) < 0.3
    X[absent, 0] = np.nan
    y[absent] = 2.0  # ... but feature 0's missingness marks the most relevant rows
    qid = np.repeat(np.arange(30), 20)
    model = _one_tree(max_depth=1, missing_direction="separate").fit(X, y, qid=qid)
    tree = model.trees_[0]
    assert tree.nodes["feature"][0] == 0 and tree.nodes["threshold"][0] == -np.inf
    assert tree.node_count == 5


@pytest.mark.slow  # its own builder and iteration (missing_direction="separate" in boosting)
def test_separate_keeps_the_leaf_budget_of_boosting():
    X, y, qid = make_ranking(n_queries=60, docs_per_query=20, n_features=6, random_state=1)
    X = X.copy()
    X[np.random.default_rng(1).random(X.shape) < 0.3] = np.nan
    model = LambdaMART(n_estimators=10, max_leaf_nodes=7, missing_direction="separate", random_state=0).fit(X, y, qid=qid)
    leaves = [(tree.nodes["feature"] < 0).sum() for tree in model.trees_]
    assert max(leaves) == 7
    apart = [(tree.nodes["threshold"] == -np.inf).sum() for tree in model.trees_]
    assert sum(apart) > 0


@pytest.mark.parametrize("estimator", [RFListRanker(), RFHybridRanker()], ids=repr)
def test_separate_is_refused_for_listwise_splits_naming_the_parameter(estimator):
    X, y, qid = _three_groups()
    with pytest.raises(ValueError, match="missing_direction"):
        clone(estimator).set_params(missing_direction="separate").fit(X, y, qid=qid)


@pytest.mark.parametrize("criterion", ["entropy", "variance"])
def test_binned_and_exact_thresholds_grow_the_same_trees_with_missing_values(criterion):
    """Fewer distinct values than bins: the binned mode is the exact mode, missing bin included."""
    rng = np.random.default_rng(2)
    X = rng.integers(0, 30, size=(600, 4)).astype(float)
    X[rng.random(X.shape) < 0.2] = np.nan
    y = ((np.nan_to_num(X[:, 0], nan=40) + X[:, 1] % 7) > 25).astype(float) + (np.isnan(X[:, 2]))
    qid = np.repeat(np.arange(30), 20)
    binned, exact = (
        RFPointRanker(criterion=criterion, n_estimators=3, max_bins=max_bins, random_state=0).fit(X, y, qid=qid)
        for max_bins in (255, None)
    )
    for a, b in zip(binned.trees_, exact.trees_):
        np.testing.assert_array_equal(a.nodes, b.nodes)
        np.testing.assert_array_equal(a.missing_left, b.missing_left)
    np.testing.assert_array_equal(binned.predict(X), exact.predict(X))


def test_missing_values_carry_information_the_trees_use():
    """Missingness not at random: the rows whose feature is missing are the relevant ones.
    The forest ranks them first; zero-filling the same data hides them among the zeros."""
    rng = np.random.default_rng(3)
    n = 2000
    X = rng.normal(size=(n, 3))
    y = rng.random(n) < 0.3
    X[y, 0] = np.nan
    X[~y, 0] = np.where(rng.random((~y).sum()) < 0.3, 0.0, X[~y, 0])
    qid = np.repeat(np.arange(100), 20)
    learned = RFPointRanker(n_estimators=10, random_state=0).fit(X, y, qid=qid)
    assert learned.score(X, y, qid=qid) > 0.99
    zero_filled = RFPointRanker(n_estimators=10, random_state=0).fit(np.nan_to_num(X), y, qid=qid)
    assert zero_filled.score(np.nan_to_num(X), y, qid=qid) < learned.score(X, y, qid=qid)


@pytest.mark.parametrize("estimator", [RFPointRanker(n_estimators=2), LambdaMART(n_estimators=2)], ids=repr)
def test_infinite_values_are_an_error_that_names_X(estimator, data):
    X, y, qid = data
    X = X.copy()
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        estimator.fit(X, y, qid=qid)
    model = estimator.fit(np.nan_to_num(X, posinf=0.0), y, qid=qid)
    with pytest.raises(ValueError, match="Input X contains infinity"):
        model.predict(X)


def test_the_single_feature_baseline_ranks_documents_missing_its_feature_last():
    X = np.array([[3.0], [np.nan], [1.0], [2.0]])
    model = DummyRanker().fit(X, [2, 0, 0, 1], qid=[0, 0, 0, 0])
    assert model.feature_sign_ == 1.0 and model.train_score_ == 1.0
    np.testing.assert_array_equal(model.predict(X), [3.0, -np.inf, 1.0, 2.0])


@pytest.mark.parametrize("direction, imputed", [("left", -1e6), ("right", 1e6)])
@pytest.mark.parametrize(
    "estimator",
    [RFPointRanker(n_estimators=3, random_state=0), RFPointRanker(criterion="variance", n_estimators=3, random_state=0),
     LambdaMART(n_estimators=5, random_state=0), PLRank(n_estimators=3, random_state=0)],
    ids=repr,
)  # fmt: skip
def test_a_fixed_direction_is_imputing_a_value_below_or_above_every_other(estimator, direction, imputed):
    """Mohan's strategies 1 and 2 (0 / -inf, 1 / +inf): with exact bins, the model that sends
    missing values left (right) partitions its training rows as the model trained on the
    data with a value below (above) every present one, and scores any row as that model
    scores it imputed, values that no node around them saw included (a node cutting its
    present rows from the missing ones on the right sent the values between its largest
    and the next bin's up with the missing ones)."""
    rng = np.random.default_rng(4)
    X = rng.integers(0, 40, size=(800, 4)).astype(float)
    X[rng.random(X.shape) < 0.25] = np.nan
    y = rng.integers(0, 3, size=800) * (np.nan_to_num(X[:, 0], nan=20) > 15)
    qid = np.repeat(np.arange(40), 20)
    fixed = clone(estimator).set_params(missing_direction=direction).fit(X, y, qid=qid)
    X_imputed = np.where(np.isnan(X), imputed, X)
    reference = clone(estimator).fit(X_imputed, y, qid=qid)
    # The same trees but for the thresholds, which differ between a value the model
    # never saw and the missing rows (-inf against a cut below the present values).
    for tree, twin in zip(fixed.trees_, reference.trees_):
        for field in ("feature", "left"):
            np.testing.assert_array_equal(tree.nodes[field], twin.nodes[field])
        np.testing.assert_array_equal(tree.values, twin.values)
        np.testing.assert_array_equal(tree.n_node_samples, twin.n_node_samples)
    flags = np.concatenate([tree.missing_left[tree.nodes["feature"] >= 0] for tree in fixed.trees_])
    assert (flags == (direction == "left")).all()
    rows = rng.integers(0, 80, size=(2000, 4)) / 2.0 - 0.25  # between and beyond the training values
    rows[rng.random(rows.shape) < 0.25] = np.nan
    np.testing.assert_array_equal(fixed.predict(rows), reference.predict(np.where(np.isnan(rows), imputed, rows)))


def test_mean_and_median_imputation_recipe_tunes_through_gridsearch_with_qid_routed(data):
    """Mohan's strategies 3 and 4: SimpleImputer in a Pipeline, the strategy a grid parameter."""
    X, y, qid = data
    grid = {"simpleimputer__strategy": ["mean", "median"]}
    with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        warnings.simplefilter("error", MissingQidWarning)
        pipeline = make_pipeline(SimpleImputer(), RFPointRanker(n_estimators=5, random_state=0))
        search = GridSearchCV(pipeline, grid, cv=QueryKFold(3), scoring=ndcg_scorer(10)).fit(X, y, qid=qid)
        # The refitted recipe is the two steps done by hand.
        strategy = search.best_params_["simpleimputer__strategy"]
        imputed = SimpleImputer(strategy=strategy).fit_transform(X)
        by_hand = RFPointRanker(n_estimators=5, random_state=0).fit(imputed, y, qid=qid)
    assert len(search.cv_results_["params"]) == 2
    np.testing.assert_array_equal(search.predict(X), by_hand.predict(imputed))


@pytest.mark.filterwarnings("ignore", category=ConvergenceWarning)  # two rounds, not convergence, are the recipe here
def test_iterative_imputation_recipe_with_a_forest_predicting_each_feature(data):
    """Mohan's strategy 5 (Algorithm 2): IterativeImputer with a random forest as its estimator."""
    X, y, qid = data
    imputer = IterativeImputer(estimator=RandomForestRegressor(n_estimators=5, random_state=0), max_iter=2, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        pipeline = make_pipeline(clone(imputer), RFPointRanker(n_estimators=5, random_state=0).set_fit_request(qid=True))
        pipeline.fit(X, y, qid=qid)
    imputed = clone(imputer).fit_transform(X)
    assert not np.isnan(imputed).any()
    by_hand = RFPointRanker(n_estimators=5, random_state=0).fit(imputed, y, qid=qid)
    np.testing.assert_array_equal(pipeline.predict(X), by_hand.predict(imputed))


def test_separate_is_refused_for_drawn_splits_naming_the_parameter():
    """RF-rand took missing_direction='separate' and grew bit for bit the trees of 'learn'
    (its cuts are drawn, not chosen by a gain); so did a BROOF of RF-rand forests."""
    X, y, qid = _three_groups()
    forest = RFPointRanker(n_estimators=2, criterion="random", missing_direction="separate", random_state=0)
    with pytest.raises(ValueError, match="missing_direction='separate' cannot be combined with criterion='random'"):
        forest.fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="missing_direction='separate' cannot be combined with criterion='random'"):
        BROOF(n_estimators=2, n_trees=2, forest=forest, variant="absolute", random_state=0).fit(X, y, qid=qid)
