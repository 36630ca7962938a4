"""BROOF: per-document errors, the five extension points, early stopping, scikit-learn contract."""

import pickle

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from forestrank import (
    BROOF,
    QueryKFold,
    RFListRanker,
    RFPointRanker,
    load_letor_fold,
    make_ranking,
    map_score,
    ndcg_score,
    ndcg_scorer,
)
from forestrank.ensemble import _broof
from forestrank.ensemble._broof_errors import absolute_errors, height_errors, median_region_errors
from assertions import run_estimator_check, staged_prediction_peak
from forestrank.estimator_checks import expected_failed_checks


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_queries=80, docs_per_query=(5, 30), n_features=8, random_state=0)


@pytest.fixture(scope="module")
def memorised():
    """Unique feature values and distinct targets: a fully grown variance tree isolates every
    row it was grown on, so it predicts that row's target exactly, and any other value for
    a row it did not see."""
    rng = np.random.default_rng(0)
    n = 120
    X = np.column_stack([np.arange(n, dtype=float), rng.normal(size=n)])
    y = rng.permutation(n).astype(float)
    qid = np.repeat(np.arange(24), 5)
    return X, y, qid


def memorising_forest(**params):
    return RFPointRanker(criterion="variance", max_features=None, min_samples_leaf=1, **params)


# --- per-document errors ---------------------------------------------------------------------


def test_absolute_errors_are_drucker_linear_loss():
    errors = absolute_errors(np.array([0.0, 1.0, 2.0, 2.0]), np.array([0.5, 1.0, 0.0, 3.0]))
    np.testing.assert_allclose(errors, [0.25, 0.0, 1.0, 0.5])
    assert not absolute_errors(np.ones(3), np.ones(3)).any()


def test_median_region_errors_start_beyond_the_median():
    # residuals 0, 1, 2, 3, 5: median 2, largest 5 -> (r - 2) / 3 beyond the median, else 0
    errors = median_region_errors(np.zeros(5), np.array([0.0, -1.0, 2.0, 3.0, -5.0]))
    np.testing.assert_allclose(errors, [0.0, 0.0, 0.0, 1 / 3, 1.0])
    assert not median_region_errors(np.zeros(4), np.full(4, 2.0)).any()


def brute_force_height(target, prediction, qid):
    errors = np.zeros(len(target))
    for i in range(len(target)):
        partners = [j for j in range(len(target)) if qid[j] == qid[i] and target[j] != target[i]]
        wrong = 0.0
        for j in partners:
            if prediction[j] == prediction[i]:
                wrong += 0.5
            elif (target[j] - target[i]) * (prediction[j] - prediction[i]) < 0:
                wrong += 1
        errors[i] = wrong / len(partners) if partners else 0.0
    return errors


def test_height_errors_count_misordered_partners():
    # one query: relevant doc (label 1) scored below two of three irrelevant ones -> height 2 of 3
    target = np.array([1.0, 0.0, 0.0, 0.0])
    prediction = np.array([0.5, 0.9, 0.7, 0.1])
    np.testing.assert_allclose(height_errors(target, prediction, np.array([0, 4])), [2 / 3, 1, 1, 0])
    rng = np.random.default_rng(1)
    for _ in range(20):
        sizes = rng.integers(1, 9, size=5)
        qid = np.repeat(np.arange(5), sizes)
        target = rng.integers(0, 3, size=len(qid)).astype(float)
        prediction = rng.integers(0, 4, size=len(qid)).astype(float)  # many ties
        boundaries = np.concatenate(([0], np.cumsum(sizes)))
        np.testing.assert_allclose(height_errors(target, prediction, boundaries), brute_force_height(target, prediction, qid))


# --- the rounds ------------------------------------------------------------------------------


def independent_oob(forest, X, y):
    """Out-of-bag predictions of a forest of memorising trees, found without its sampler: a
    tree saw a row exactly when it predicts the row's own target."""
    per_tree = np.array([tree.predict(np.ascontiguousarray(X)) for tree in forest.trees_])
    unseen = per_tree != y
    with np.errstate(invalid="ignore"):
        return np.where(unseen.any(axis=0), (per_tree * unseen).sum(axis=0) / unseen.sum(axis=0), np.nan)


def test_validation_uses_only_trees_that_did_not_see_the_document(memorised):
    X, y, qid = memorised
    model = BROOF(n_estimators=1, variant="absolute", n_trees=4, forest=memorising_forest(), random_state=0)
    model.fit(X, y, qid=qid)
    oob = independent_oob(model.estimators_[0], X, y)
    seen_by_all = np.isnan(oob)
    assert 0 < (~seen_by_all).sum() < len(y)
    for q in np.unique(qid):  # whole queries are in or out of a tree
        assert len(np.unique(np.isnan(oob[qid == q]))) == 1
    errors = absolute_errors(y[~seen_by_all], oob[~seen_by_all])
    assert model.estimator_errors_[0] == pytest.approx(errors.mean(), rel=1e-12)
    assert model.estimator_errors_[0] > 0.05  # the memorised training predictions would give 0
    train = BROOF(n_estimators=3, variant="absolute", validation="train", n_trees=4, forest=memorising_forest(), random_state=0)
    train.fit(X, y, qid=qid)
    # each tree predicts the rows it saw exactly and the others roughly: the training error is not 0 ...
    assert 0 < train.estimator_errors_[0] < model.estimator_errors_[0]


@pytest.mark.parametrize("learner_weight", ["absolute", "median", "height"])
def test_weights_after_one_round(data, learner_weight):
    X, y, qid = data
    eta = 0.7
    model = BROOF(n_estimators=1, variant=learner_weight, n_trees=6, learning_rate=eta, random_state=1)
    model.fit(X, y, qid=qid)
    forest = model.estimators_[0]
    query_of_row = np.unique(qid, return_inverse=True)[1]  # make_ranking rows are grouped by increasing qid
    oob = forest._oob_prediction(np.ascontiguousarray(X), np.ones(len(y)), query_of_row)
    rows = ~np.isnan(oob)
    if learner_weight == "height":
        errors = brute_force_height(y[rows], oob[rows], qid[rows])
    else:
        errors = {"absolute": absolute_errors, "median": median_region_errors}[learner_weight](y[rows], oob[rows])
    epsilon = errors.mean()
    beta = eta * epsilon / (1 - epsilon)
    assert model.estimator_errors_[0] == pytest.approx(epsilon, rel=1e-12)
    assert model.estimator_betas_[0] == pytest.approx(beta, rel=1e-12)
    expected = np.ones(len(y))
    expected[rows] = beta ** (1 - errors)
    expected *= len(y) / expected.sum()
    np.testing.assert_allclose(model.example_weights_, expected, rtol=1e-12)
    assert np.all(np.diff(model.example_weights_[rows][np.argsort(errors, kind="stable")]) >= 0)  # worse, heavier


def test_update_weights_choose_the_rows(memorised):
    X, y, qid = memorised
    # two trees drawing 90% of the queries: some queries are in both, so they have no out-of-bag prediction
    forest = memorising_forest(query_subsample=0.9)
    common = dict(n_estimators=1, variant="absolute", validation="train", n_trees=2, forest=forest, random_state=0)
    oob_only = BROOF(update_weights="oob", **common).fit(X, y, qid=qid)
    every_row = BROOF(update_weights="train", **common).fit(X, y, qid=qid)
    never = BROOF(update_weights="constant", **common).fit(X, y, qid=qid)
    in_every_tree = np.isnan(independent_oob(oob_only.estimators_[0], X, y))
    assert in_every_tree.any() and not in_every_tree.all()
    beta = oob_only.estimator_betas_[0]
    errors = absolute_errors(y, oob_only.estimators_[0].predict(X))
    unscaled = np.where(in_every_tree, 1.0, beta ** (1 - errors))
    np.testing.assert_allclose(oob_only.example_weights_, unscaled * len(y) / unscaled.sum(), rtol=1e-12)
    unscaled = beta ** (1 - errors)
    np.testing.assert_allclose(every_row.example_weights_, unscaled * len(y) / unscaled.sum(), rtol=1e-12)
    np.testing.assert_array_equal(never.example_weights_, np.ones(len(y)))


def test_learner_weight_constant_is_the_learning_rate(data):
    X, y, qid = data
    model = BROOF(n_estimators=3, variant="absolute", learner_weight="constant", learning_rate=0.4, n_trees=5, random_state=0)
    model.fit(X, y, qid=qid)
    np.testing.assert_array_equal(model.estimator_betas_, [0.4, 0.4, 0.4])
    np.testing.assert_allclose(model.estimator_weights_, [1 / 3] * 3)  # identity rounds: plain mean


def test_residue_rounds_fit_what_is_left(memorised):
    """A forest of identical memorising trees predicts its training targets exactly: round 1
    predicts y, round 2 is fitted to y - eta*y, and the model is eta*y + eta*(1 - eta)*y."""
    X, y, qid = memorised
    eta = 0.3
    exact = memorising_forest(query_subsample=1.0)
    model = BROOF(
        n_estimators=2, variant="gradient", validation="train", learning_rate=eta, n_trees=3, forest=exact, random_state=0
    ).fit(X, y, qid=qid)
    np.testing.assert_allclose(model.estimators_[1].predict(X), (1 - eta) * y, rtol=1e-12)
    np.testing.assert_allclose(model.predict(X), eta * y + eta * (1 - eta) * y, rtol=1e-12)
    identity = BROOF(
        n_estimators=2, variant="gradient", update_examples="identity", validation="train", n_trees=3, forest=exact, random_state=0
    ).fit(X, y, qid=qid)
    np.testing.assert_allclose(identity.estimators_[1].predict(X), y, rtol=1e-12)


def test_gradient_variant_uses_out_of_bag_residues(memorised):
    X, y, qid = memorised
    eta = 0.5
    model = BROOF(n_estimators=2, learning_rate=eta, n_trees=15, forest=memorising_forest(), random_state=0).fit(X, y, qid=qid)
    assert model.strategy_ == dict(zip(_broof.STRATEGIES, _broof.VARIANTS["gradient"]))
    first = model.estimators_[0]
    oob = independent_oob(first, X, y)
    residue = y - eta * np.where(np.isnan(oob), first.predict(X), oob)
    independent = independent_oob(model.estimators_[1], X, residue)
    rows = ~np.isnan(independent)
    # the second forest memorised the residues: its trees reproduce them on the rows they saw
    per_tree = np.array([tree.predict(np.ascontiguousarray(X)) for tree in model.estimators_[1].trees_])
    assert ((per_tree == residue).sum(axis=0) > 0).mean() > 0.5
    errors = absolute_errors(residue[rows], independent[rows])
    assert model.estimator_errors_[1] == pytest.approx(errors.mean(), rel=1e-12)


def test_random_initial_weights(data):
    X, y, qid = data
    common = dict(n_estimators=2, variant="absolute", update_weights="constant", n_trees=5, random_state=0)
    uniform = BROOF(**common).fit(X, y, qid=qid)
    random = BROOF(init_weights="random", **common).fit(X, y, qid=qid)
    weights = random.example_weights_
    assert np.all((weights > 0) & (weights <= 1)) and weights.std() > 0.2
    np.testing.assert_array_equal(weights, BROOF(init_weights="random", **common).fit(X, y, qid=qid).example_weights_)
    assert not np.allclose(uniform.predict(X), random.predict(X))
    # sample_weight multiplies the initial weights, rescaled so that the lightest weighs 1
    # (docs/design.md, "Public contract"): a constant changes nothing.
    scaled = BROOF(init_weights="random", **common).fit(X, y, qid=qid, sample_weight=np.full(len(y), 2.0))
    np.testing.assert_array_equal(scaled.example_weights_, weights)
    uneven = np.where(np.asarray(qid) % 2 == 0, 2.0, 6.0)
    weighted = BROOF(init_weights="random", **common).fit(X, y, qid=qid, sample_weight=uneven)
    np.testing.assert_allclose(weighted.example_weights_, weights * uneven / 2.0, rtol=1e-14)


def with_errors(monkeypatch, epsilons):
    """Make round t's per-document errors all equal ``epsilons[t]``."""
    rounds = iter(epsilons)
    monkeypatch.setattr(BROOF, "_errors", staticmethod(lambda kind, target, prediction, query: np.full(len(target), next(rounds))))


def test_boosting_stops_when_the_error_reaches_one_half(data, monkeypatch):
    X, y, qid = data
    with_errors(monkeypatch, [0.2, 0.3, 0.5, 0.1])
    model = BROOF(n_estimators=4, variant="absolute", learning_rate=1.0, n_trees=3, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_allclose(model.estimator_errors_, [0.2, 0.3, 0.5])  # the third round ran, then stopped
    assert model.n_estimators_ == 2 and len(model.estimators_) == 2  # and was dropped
    betas = np.array([0.2 / 0.8, 0.3 / 0.7])
    np.testing.assert_allclose(model.estimator_betas_, betas)
    alphas = np.log(1 / betas)
    np.testing.assert_allclose(model.estimator_weights_, alphas / alphas.sum())
    expected = sum(a * forest.predict(X) for a, forest in zip(alphas / alphas.sum(), model.estimators_))
    np.testing.assert_allclose(model.predict(X), expected, rtol=1e-12)


def test_a_bad_first_round_is_kept_alone(data, monkeypatch):
    X, y, qid = data
    with_errors(monkeypatch, [0.6, 0.1])
    model = BROOF(n_estimators=3, variant="height", n_trees=3, random_state=0).fit(X, y, qid=qid)
    assert model.n_estimators_ == 1 and list(model.estimator_weights_) == [1.0]
    np.testing.assert_array_equal(model.example_weights_, np.ones(len(y)))


def test_a_perfect_round_ends_boosting_and_predicts_alone(data, monkeypatch):
    X, y, qid = data
    with_errors(monkeypatch, [0.2, 0.0, 0.1])
    model = BROOF(n_estimators=3, variant="median", n_trees=3, random_state=0).fit(X, y, qid=qid)
    assert model.n_estimators_ == 2
    np.testing.assert_array_equal(model.estimator_weights_, [0.0, 1.0])
    np.testing.assert_allclose(model.predict(X), model.estimators_[1].predict(X))


def test_staged_predict_ends_at_predict(data):
    X, y, qid = data
    for variant in ("gradient", "absolute"):
        model = BROOF(n_estimators=3, variant=variant, n_trees=4, random_state=0).fit(X, y, qid=qid)
        stages = list(model.staged_predict(X))
        assert len(stages) == model.n_estimators_
        np.testing.assert_allclose(stages[-1], model.predict(X), rtol=1e-12)
        first_weight = model.learning_rate_ if variant == "gradient" else 1.0  # shrunk residue forest; sole forest
        np.testing.assert_allclose(stages[0], first_weight * model.estimators_[0].predict(X), rtol=1e-12)


@pytest.mark.parametrize("variant", ["gradient", "absolute", "height"])
def test_staged_predict_holds_one_prediction_at_a_time(data, variant):
    """Each stage re-summed every earlier round's kept prediction: time in rounds squared
    and memory in rounds times rows. The stages are the first ``t`` forests combined with
    ``_combination``'s coefficients of those ``t`` rounds."""
    X, y, qid = data
    model = BROOF(n_estimators=30, variant=variant, n_trees=2, random_state=0).fit(X, y, qid=qid)
    forests = [forest.predict(X) for forest in model.estimators_]
    for rounds, stage in enumerate(model.staged_predict(X), start=1):
        weights = model._combination(model.estimator_betas_[:rounds])
        expected = sum(a * prediction for a, prediction in zip(weights, forests[:rounds]))
        if variant == "gradient":
            np.testing.assert_array_equal(stage, expected)
        np.testing.assert_allclose(stage, expected, rtol=1e-12, atol=1e-15)
    rows = np.tile(X, (40, 1))
    peak = staged_prediction_peak(model, rows)
    assert model.n_estimators_ >= 20 and peak < 10 * rows.shape[0] * 8  # a few rows of scores, not one a round


def test_listwise_forests_as_weak_learners(data):
    X, y, qid = data
    model = BROOF(n_estimators=2, variant="height", n_trees=4, forest=RFListRanker(max_depth=4), random_state=0)
    model.fit(X, y, qid=qid)
    assert all(isinstance(forest, RFListRanker) for forest in model.estimators_)
    assert model.score(X, y, qid) > 0.5


# --- scikit-learn contract -----------------------------------------------------------------


def test_serial_and_threaded_fits_are_bitwise_identical(data):
    X, y, qid = data
    for variant in ("gradient", "height"):
        serial = BROOF(n_estimators=3, variant=variant, n_trees=6, random_state=5, n_jobs=1).fit(X, y, qid=qid)
        threaded = BROOF(n_estimators=3, variant=variant, n_trees=6, random_state=5, n_jobs=2).fit(X, y, qid=qid)
        np.testing.assert_array_equal(serial.predict(X), threaded.predict(X))
        np.testing.assert_array_equal(serial.example_weights_, threaded.example_weights_)


@pytest.mark.slow  # feature costs: a builder of their own
def test_serial_and_threaded_fits_with_feature_costs_are_identical_in_fixed_waves(data):
    """With feature costs a forest's waves are its threads unless cost_wave_size is set
    (BROOF's n_jobs docstring)."""
    X, y, qid = data
    costly = dict(criterion="variance", min_samples_leaf=0.02, feature_costs=2.0 ** np.arange(8), cost_penalty=0.5)
    fits = [
        BROOF(3, n_trees=6, forest=RFPointRanker(cost_wave_size=2, **costly), n_jobs=n_jobs, random_state=0).fit(X, y, qid=qid)
        for n_jobs in (1, 2)
    ]
    np.testing.assert_array_equal(fits[0].predict(X), fits[1].predict(X))
    waves_of_threads = [
        BROOF(3, n_trees=6, forest=RFPointRanker(**costly), n_jobs=n_jobs, random_state=0).fit(X, y, qid=qid).predict(X)
        for n_jobs in (1, 2)
    ]
    assert not np.array_equal(*waves_of_threads)


def test_pickle_and_clone_round_trip(data):
    X, y, qid = data
    model = BROOF(n_estimators=2, n_trees=4, variant="absolute", random_state=0).fit(X, y, qid=qid)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
    fresh = clone(model)
    assert not hasattr(fresh, "estimators_") and fresh.get_params() == model.get_params()
    np.testing.assert_array_equal(fresh.fit(X, y, qid=qid).predict(X), model.predict(X))


def test_rows_in_any_order_give_the_same_model(data):
    X, y, qid = data
    permutation = np.random.default_rng(0).permutation(len(y))
    ordered = BROOF(n_estimators=2, n_trees=4, variant="height", random_state=0).fit(X, y, qid=qid)
    shuffled = BROOF(n_estimators=2, n_trees=4, variant="height", random_state=0).fit(X[permutation], y[permutation], qid=qid[permutation])
    np.testing.assert_allclose(shuffled.predict(X), ordered.predict(X), rtol=1e-12)
    np.testing.assert_allclose(shuffled.example_weights_, ordered.example_weights_[permutation], rtol=1e-12)


def test_grid_search_over_variant(data):
    X, y, qid = data
    grid = {"variant": ["gradient", "absolute", "median", "height"], "forest__min_samples_leaf": [5]}
    with sklearn.config_context(enable_metadata_routing=True):
        broof = BROOF(n_estimators=2, n_trees=4, forest=RFPointRanker(criterion="variance"), random_state=0)
        search = GridSearchCV(broof, grid, cv=QueryKFold(3), scoring=ndcg_scorer(10))
        search.fit(X, y, qid=qid)
    assert search.best_params_["variant"] in grid["variant"]
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_estimator_.estimators_[0].min_samples_leaf == 5


def test_bad_arguments_name_themselves(data):
    X, y, qid = data
    with pytest.raises(ValueError, match="forest must be a regression forest"):
        BROOF(forest=RFPointRanker(criterion="entropy")).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="forest leaves no row out"):
        BROOF(forest=RFPointRanker(criterion="variance", query_subsample=1.0)).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="forest.relevance_weights='fitted' is not supported"):
        BROOF(variant="absolute", forest=RFPointRanker(criterion="entropy", relevance_weights="fitted")).fit(X, y, qid=qid)
    # the rounds grow without the forest's fit, which refuses grade weights beside mean leaves
    mean_leaves = RFPointRanker(criterion="variance", leaf_score="mean", relevance_weights="exp")
    with pytest.raises(ValueError, match=r"forest=RFPointRanker\(...\): relevance_weights='exp' weighs the grades"):
        BROOF(forest=mean_leaves).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="forest.skip_queries_without_relevance=True is not supported"):
        BROOF(forest=RFPointRanker(criterion="variance", skip_queries_without_relevance=True)).fit(X, y, qid=qid)
    # set to False without a word: forest_ showed False, the rounds computed no oob_score_
    for name in ("oob_score", "warm_start"):
        with pytest.raises(ValueError, match=f"forest.{name}=True is not supported by BROOF"):
            BROOF(forest=RFPointRanker(criterion="variance", **{name: True})).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="variant"):
        BROOF(variant="adaboost").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="learning_rate"):
        BROOF(learning_rate=1.5).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="forest"):
        BROOF(forest="rf").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="sample_weight"):
        BROOF().fit(X, y, qid=qid, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError, match="grades|integer"):
        BROOF(variant="height", forest=RFPointRanker()).fit(X, y + 0.5, qid=qid)
    model = BROOF(variant="absolute", update_weights="constant", validation="train", n_trees=2, n_estimators=1,
                  forest=RFPointRanker(criterion="variance", query_subsample=1.0))  # fmt: skip
    assert model.fit(X, y, qid=qid).n_estimators_ == 1  # no out-of-bag rows needed


@pytest.mark.parametrize(
    "setting, name",
    [({"leaf_score": "bogus"}, "leaf_score"), ({"max_depth": -5}, "max_depth"), ({"max_bins": 1}, "max_bins"),
     ({"max_features": "bogus"}, "max_features")],
)  # fmt: skip
def test_the_forests_parameters_are_checked_as_its_own_fit_checks_them(data, setting, name):
    """The rounds grow trees without the forest's fit: BROOF checks the template's
    parameters itself, rather than ignoring a bad value or failing inside the engine."""
    X, y, qid = data
    forest = RFPointRanker(criterion="variance", **setting)
    with pytest.raises(ValueError, match=rf"forest=RFPointRanker\(\.\.\.\): The '{name}' parameter of RFPointRanker"):
        BROOF(forest=forest, n_estimators=2, n_trees=3, random_state=0).fit(X, y, qid=qid)
    combination = RFPointRanker(criterion="random", missing_direction="separate")
    with pytest.raises(ValueError, match=r"forest=RFPointRanker\(\.\.\.\): missing_direction='separate' cannot"):
        BROOF(forest=combination, n_estimators=2, n_trees=3, random_state=0).fit(X, y, qid=qid)

# scikit-learn's checks pass no qid (one query): out-of-bag rows need document-level sampling there.
DOCUMENT_SAMPLING = RFPointRanker(criterion="variance", sample_level="document", min_samples_leaf=5)


@parametrize_with_checks([BROOF(n_estimators=3, n_trees=4, forest=DOCUMENT_SAMPLING, random_state=0)], expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    run_estimator_check(estimator, check)


@pytest.mark.slow  # the other configurations' checks: run after the quick suite
@parametrize_with_checks(
    [
        BROOF(n_estimators=2, n_trees=4, variant="height", forest=DOCUMENT_SAMPLING, random_state=0),
        BROOF(n_estimators=3, n_trees=10, random_state=0),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_estimator_checks_of_other_configurations(estimator, check):
    run_estimator_check(estimator, check)


# --- real data -------------------------------------------------------------------------------


def test_mq2008_fold1_gradient_variant_beats_a_random_forest(mq2008):
    (X, y, qid), _, (X_test, y_test, qid_test) = load_letor_fold(mq2008 / "Fold1")
    broof = BROOF(n_estimators=4, n_trees=50, n_jobs=2, random_state=0).fit(X, y, qid=qid)
    forest = RFPointRanker(n_estimators=200, n_jobs=2, random_state=0).fit(X, y, qid=qid)
    ours = broof.predict(X_test)
    theirs = forest.predict(X_test)
    assert ndcg_score(y_test, ours, qid_test, 10, convention="letor4") > ndcg_score(y_test, theirs, qid_test, 10, convention="letor4")
    assert map_score(y_test, ours, qid_test, convention="letor4") > map_score(y_test, theirs, qid_test, convention="letor4")


def test_rows_of_zero_weight_are_never_a_trees_whole_sample():
    """Every tree drew among all queries, so one drawing only zero-weight queries had no
    weighted row: a bare ZeroDivisionError in half of the seeds."""
    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    weights = (q < 8).astype(float)
    for seed in range(6):
        model = BROOF(n_estimators=2, n_trees=5, random_state=seed).fit(X, y, qid=q, sample_weight=weights)
        assert all(tree.weighted_n_node_samples[0] > 0 for forest in model.estimators_ for tree in forest.trees_)
        assert model.example_weights_[~(q < 8)].max() == 0.0
    with pytest.raises(ValueError, match=r"every row of positive weight \(10\) is in every tree"):
        BROOF(n_estimators=2, n_trees=5, random_state=0).fit(X, y, qid=q, sample_weight=(q == 0) * 1.0)


def test_the_default_weak_learner_splits_on_small_data():
    """min_samples_leaf=200 rows made every tree of BROOF() a single leaf below about 600
    rows; the default is now 2% of the rows (200 on MQ2008's folds of about 9,000)."""
    X, y, q = make_ranking(30, (5, 15), 8, random_state=0)
    model = BROOF(n_estimators=2, n_trees=5, random_state=0).fit(X, y, qid=q)
    assert len(np.unique(model.predict(X))) > 100
    assert _broof.default_forest().min_samples_leaf == 0.02


@pytest.mark.parametrize("variant", ["gradient", "absolute", "median", "height"])
def test_a_document_of_zero_weight_is_an_absent_document(variant):
    """Zero-weight documents inside queries were left out of every tree and so had an
    out-of-bag prediction, which entered the absolute errors' normaliser, the median
    regions and the height errors' partner counts: the model differed from the fit without
    them from the first round on. The reweighting's totals are over the weighted rows, so
    the two fits are the same bit for bit."""
    X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=6, random_state=1)
    absent = np.zeros(len(y), bool)
    absent[[3, 27, 55, 101]] = True
    weighted = BROOF(3, n_trees=10, variant=variant, random_state=0).fit(X, y, qid=qid, sample_weight=(~absent) * 1.0)
    dropped = BROOF(3, n_trees=10, variant=variant, random_state=0).fit(X[~absent], y[~absent], qid=qid[~absent])
    np.testing.assert_array_equal(weighted.estimator_errors_, dropped.estimator_errors_)
    np.testing.assert_array_equal(weighted.predict(X), dropped.predict(X))


@pytest.mark.parametrize("relevance_weights", ["linear", "square", "exp"])
def test_errors_compare_the_forest_with_the_target_on_its_leaves_scale(relevance_weights):
    """Forests grown on every row to single-row leaves reproduce their leaf targets F(y)
    exactly: the round's error is 0 and boosting stops after it. The errors compared the
    forest's F(y) with y, so a square or exp forest counted the most relevant documents
    as its worst errors and ran on."""
    X, y, qid = make_ranking(n_queries=30, docs_per_query=8, n_features=6, random_state=3)
    forest = RFPointRanker(relevance_weights=relevance_weights, query_subsample=1.0, max_features=None)
    for variant in ("absolute", "median"):
        model = BROOF(3, n_trees=5, variant=variant, validation="train", update_weights="train", forest=forest, random_state=0)
        model.fit(X, y, qid=qid)
        np.testing.assert_array_equal(model.estimators_[0].predict(X), forest._leaf_targets(y.astype(float)))
        assert model.estimator_errors_.tolist() == [0.0] and model.n_estimators_ == 1


def test_score_uses_the_forests_label_gain():
    """BROOF has no label_gain of its own: score used the exp gain where its forest grew
    with another (AveragedRanker took its member's)."""
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
    forest = RFListRanker(label_gain="linear", query_subsample=0.7)
    model = BROOF(n_estimators=2, n_trees=5, variant="absolute", random_state=0, forest=forest).fit(X, y, qid=qid)
    expected = ndcg_score(y, model.predict(X), qid, k=10, gain="linear")
    assert expected != ndcg_score(y, model.predict(X), qid, k=10)
    assert model.score(X, y, qid) == pytest.approx(expected, rel=1e-15)


def test_verbose_prints_the_round_that_stops_boosting(capsys):
    """The round whose error reached 0.5 ends boosting and is recorded in
    estimator_errors_, but printed no line: the output ended a round early, without a reason."""
    X, y, qid = make_ranking(n_queries=40, random_state=0)
    noise = np.random.default_rng(0).permutation(y)  # nothing to learn: a later round's error reaches 0.5
    model = BROOF(n_estimators=6, n_trees=5, variant="gradient", learner_weight="height", random_state=0, verbose=1)
    model.fit(X, noise, qid=qid)
    lines = capsys.readouterr().out.strip().splitlines()
    assert model.n_estimators_ < len(model.estimator_errors_) < 6
    assert len(lines) == len(model.estimator_errors_)
    stop = len(model.estimator_errors_)
    assert lines[-1].startswith(
        f"BROOF round {stop}/6: error {model.estimator_errors_[-1]:.4f} >= 0.5, not kept: boosting stops with "
        f"{model.n_estimators_} rounds"
    )
