"""AveragedRanker: Mohan's averaged k-stochastic boosting (thesis §2.3)."""

import sys
import warnings

import numpy as np
import pytest
import sklearn
import sklearn.dummy
from sklearn.base import clone

from forestrank import AveragedRanker, LambdaMART, RFPointRanker, make_ranking
from assertions import staged_prediction_peak


def test_averaged_ranker_is_the_mean_of_members_that_differ_only_by_their_seed():
    import joblib

    from forestrank import AveragedRanker

    X, y, qid = make_ranking(n_queries=40, docs_per_query=12, n_features=6, random_state=0)
    member = LambdaMART(n_estimators=8, max_features=0.5, subsample=0.7, random_state=None)
    model = AveragedRanker(member, n_models=3, random_state=0).fit(X, y, qid=qid)
    seeds = np.random.SeedSequence(0).generate_state(3)
    alone = [clone(member).set_params(random_state=int(seed)).fit(X, y, qid=qid).predict(X) for seed in seeds]
    np.testing.assert_array_equal(model.predict(X), np.mean(alone, axis=0))
    assert len({tuple(p[:5]) for p in alone}) == 3  # the members differ
    staged = list(model.staged_predict(X))
    assert len(staged) == 8
    np.testing.assert_allclose(staged[-1], model.predict(X))
    with joblib.parallel_config(backend="threading"):  # members are then fitted one after another
        threaded = AveragedRanker(member, n_models=3, n_jobs=2, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(threaded.predict(X), model.predict(X))
    in_processes = AveragedRanker(member, n_models=3, n_jobs=2, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(in_processes.predict(X), model.predict(X))


def test_staged_predict_steps_the_members_together():
    """Every stage of every member was listed before the first was averaged: memory in
    members times stages times rows for a generator."""
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
    model = AveragedRanker(LambdaMART(n_estimators=60, max_features=0.5), n_models=4, random_state=0).fit(X, y, qid=qid)
    rows = np.tile(X, (20, 1))
    stages = list(model.staged_predict(X))
    np.testing.assert_allclose(stages[-1], model.predict(X), rtol=1e-12)
    members = [list(member.staged_predict(X)) for member in model.estimators_]
    for index in (0, 17, 59):
        np.testing.assert_array_equal(stages[index], np.mean([member[index] for member in members], axis=0))
    peak = staged_prediction_peak(model, rows)
    assert peak < 6 * 4 * rows.shape[0] * 8 + rows.nbytes  # a few arrays a member, not its sixty stages


def test_staged_predictions_leave_the_callers_feature_name_checks_on():
    """The generator yielded inside the context that spares its members the name check:
    between two stages the caller's own predictions skipped it, and two generators
    interleaved (train and test curves) left it off for good."""
    pd = pytest.importorskip("pandas")
    X, y, qid = make_ranking(n_queries=20, docs_per_query=6, n_features=4, random_state=0)
    frame = pd.DataFrame(X, columns=list("abcd"))
    model = AveragedRanker(LambdaMART(n_estimators=3, max_features=0.5), n_models=2, random_state=0).fit(frame, y, qid=qid)
    other = LambdaMART(n_estimators=2, random_state=0).fit(frame, y, qid=qid)
    reordered = frame[list("dcba")]
    for _ in zip(model.staged_predict(frame), model.staged_predict(frame)):
        with pytest.raises(ValueError, match="feature names"):
            other.predict(reordered)
    with pytest.raises(ValueError, match="feature names"):
        other.predict(reordered)


def test_averaged_ranker_early_stopping_and_staged_prediction_work_per_member():
    from forestrank import AveragedRanker

    X, y, qid = make_ranking(n_queries=60, docs_per_query=12, n_features=6, random_state=1)
    valid = make_ranking(n_queries=20, docs_per_query=12, n_features=6, random_state=2)
    member = LambdaMART(n_estimators=60, max_features=0.5, subsample=0.7, n_iter_no_change=3)
    model = AveragedRanker(member, n_models=3, random_state=0).fit(X, y, qid=qid, eval_set=[valid])
    iterations = [m.n_iter_ for m in model.estimators_]
    assert all(0 < n <= 60 for n in iterations)
    staged = list(model.staged_predict(X))
    assert len(staged) == max(iterations)
    np.testing.assert_allclose(staged[-1], model.predict(X))
    with pytest.raises(ValueError, match="must have a random_state"):
        AveragedRanker(sklearn.dummy.DummyRegressor()).fit(X, y, qid=qid)


def test_an_estimator_whose_fit_takes_no_queries_is_refused_by_name():
    """A scikit-learn regressor was accepted and failed inside the members' fits with
    "fit() got an unexpected keyword argument 'qid'", with or without a qid."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y, qid = make_ranking(n_queries=10, docs_per_query=5, n_features=3, random_state=0)
    message = r"estimator must be a ranker whose fit takes qid and sample_weight .*; HistGradientBoostingRegressor.fit takes no qid\."
    for arguments in ({"qid": qid}, {}):
        with pytest.raises(ValueError, match=message):
            AveragedRanker(HistGradientBoostingRegressor(max_iter=2), n_models=2).fit(X, y, **arguments)


def test_members_that_draw_nothing_at_random_warn_that_they_are_copies():
    """LambdaMART with no sampling fits the same model whatever its random_state: the
    average of n_models such members is one model fitted n_models times, silently."""
    X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
    with pytest.warns(UserWarning, match="the first two of the 3 members of AveragedRanker score the training rows identically: LambdaMART") as caught:
        AveragedRanker(LambdaMART(n_estimators=3), n_models=3, n_jobs=1, random_state=0).fit(X, y, qid=qid)
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        AveragedRanker(LambdaMART(n_estimators=3, subsample=0.5), n_models=3, n_jobs=1, random_state=0).fit(X, y, qid=qid)


def test_a_refit_on_an_array_forgets_the_frames_names_and_categories():
    """``feature_names_in_`` of a fit on a DataFrame survived a refit on an array of another
    width, and the exports then refused the model ("feature_names has 6 names; the model
    has 4 features")."""
    pd = pytest.importorskip("pandas")
    from forestrank import RFPointRanker
    from forestrank.export import to_lightgbm

    X, y, qid = make_ranking(n_queries=20, docs_per_query=8, n_features=6, random_state=0)
    frame = pd.DataFrame(X, columns=list("abcdef")).assign(kind=pd.Categorical(qid % 3))
    model = AveragedRanker(RFPointRanker(n_estimators=2, categorical_features="from_dtype"), n_models=2, random_state=0)
    model.fit(frame, y, qid=qid)
    assert list(model.feature_names_in_) == [*"abcdef", "kind"] and model.frame_categories_
    model.fit(X[:, :4], y, qid=qid)
    assert model.n_features_in_ == 4
    assert not hasattr(model, "feature_names_in_") and model.frame_categories_ == {}
    assert to_lightgbm(model)


def test_names_and_width_are_checked_once_by_the_ensemble_not_by_every_member():
    """An array given to an ensemble fitted on a frame (or the reverse) warned once per
    member, naming the member's class; scikit-learn's check runs once, naming the
    ensemble, and columns in another order are refused."""
    pd = pytest.importorskip("pandas")
    X, y, qid = make_ranking(n_queries=20, docs_per_query=8, n_features=4, random_state=0)
    frame = pd.DataFrame(X, columns=list("abcd"))
    for fitted_on, given, message in [(frame, X, "does not have valid"), (X, frame, "has feature names, but")]:
        model = AveragedRanker(LambdaMART(n_estimators=2, subsample=0.5), n_models=3, random_state=0).fit(fitted_on, y, qid=qid)
        for method in (model.predict, lambda rows: list(model.staged_predict(rows))[-1]):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                np.testing.assert_array_equal(method(given), model.predict(fitted_on))
            named = [str(w.message) for w in caught if "feature names" in str(w.message)]
            assert len(named) == 1 and message in named[0] and "but AveragedRanker was fitted" in named[0], named
    with pytest.raises(ValueError, match="Feature names must be in the same order"):
        model.fit(frame, y, qid=qid).predict(frame[list("bacd")])
    # the width too: its error named a member's class, LambdaMART
    for method in (model.predict, lambda rows: list(model.staged_predict(rows))):
        with pytest.raises(ValueError, match="X has 3 features, but AveragedRanker is expecting 4 features as input"):
            method(X[:, :3])
    # a single row given 1-D: scikit-learn's error saying to reshape it (the width check
    # read it as an X of no features)
    for method in (model.predict, lambda rows: list(model.staged_predict(rows))):
        with pytest.raises(ValueError, match="Reshape your data"):
            method(X[0])
        with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\) .* required by AveragedRanker"):
            method(X[:0])


@pytest.mark.slow  # a subprocess, so that a hang is a timeout rather than a stuck suite
def test_the_multiprocessing_backend_fits_the_members_after_openmp_ran():
    """joblib's multiprocessing backend forks; after a fit had run numba's OpenMP threads,
    GNU OpenMP terminated every forked member ("fork() called from a process already
    using GNU OpenMP") and the fit hung. The members are then fitted one after another."""
    import os
    import subprocess
    import sys

    script = """
import numba, numpy as np
from joblib import parallel_config
from forestrank import AveragedRanker, LambdaMART, make_ranking
X, y, qid = make_ranking(n_queries=30, docs_per_query=10, n_features=5, random_state=0)
LambdaMART(n_estimators=2).fit(X, y, qid=qid)
member = LambdaMART(n_estimators=3, subsample=0.5)
alone = AveragedRanker(member, n_models=2, n_jobs=1, random_state=0).fit(X, y, qid=qid).predict(X)
with parallel_config(backend="multiprocessing"):
    forked = AveragedRanker(member, n_models=2, n_jobs=2, random_state=0).fit(X, y, qid=qid).predict(X)
assert np.array_equal(alone, forked)
print(numba.threading_layer())
"""
    environment = {**os.environ, "NUMBA_THREADING_LAYER": "omp"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=environment)
    if result.returncode != 0 and "No threading layer could be loaded" in result.stderr:
        pytest.skip("numba's OpenMP threading layer is not available here")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "omp"


def test_staged_predict_exists_only_for_members_with_stages():
    """A forest has no stages: ``hasattr(model, "staged_predict")`` was True and the call
    failed inside the average on the members' missing method."""
    X, y, qid = make_ranking(n_queries=20, docs_per_query=8, n_features=4, random_state=0)
    assert hasattr(AveragedRanker(), "staged_predict")
    assert not hasattr(AveragedRanker(RFPointRanker()), "staged_predict")
    model = AveragedRanker(RFPointRanker(n_estimators=3), n_models=2, random_state=0).fit(X, y, qid=qid)
    assert not hasattr(model, "staged_predict")
    with pytest.raises(AttributeError) as raised:
        model.staged_predict(X)
    assert "RFPointRanker has none" in str(raised.value.__cause__)


def test_members_are_kept_from_repeating_warnings_without_touching_the_warning_filters(monkeypatch):
    """The members' predictions ran inside warnings.catch_warnings, which before Python
    3.14 is not thread-safe: predicting from several threads left the ensemble's "ignore"
    filters in the process for good, silencing scikit-learn's feature-name warnings for
    the caller too. The prediction paths now change no filter; the warnings still come
    once, from the ensemble. (Fit runs its members through scikit-learn's Parallel, which
    enters catch_warnings around every task itself: the members' warnings are recorded
    inside it, test_a_warning_every_member_gives_reaches_the_caller_once.)"""
    pd = pytest.importorskip("pandas")
    entered = []

    class Counting(warnings.catch_warnings):
        def __enter__(self):  # by forestrank's code (scikit-learn's check_array enters its own)
            entered.append(sys._getframe(1).f_globals["__name__"])
            return super().__enter__()

    X, y, qid = make_ranking(n_queries=20, docs_per_query=8, n_features=4, random_state=0)
    frame = pd.DataFrame(X, columns=list("abcd"))
    model = AveragedRanker(LambdaMART(n_estimators=2, subsample=0.5), n_models=3, n_jobs=1, random_state=0)
    model.fit(frame, y, qid=qid)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        monkeypatch.setattr(warnings, "catch_warnings", Counting)
        model.predict(X)
        list(model.staged_predict(X))
        monkeypatch.undo()
        model.fit(X, y)  # no qid: the ensemble warns, its members do not
    assert not [name for name in entered if name.startswith("forestrank")], entered
    assert entered  # the spy saw scikit-learn's
    messages = [str(w.message) for w in caught]
    assert sum("does not have valid feature names" in m for m in messages) == 2, messages
    assert sum("got no qid" in m for m in messages) == 1, messages


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_warning_every_member_gives_reaches_the_caller_once(n_jobs):
    """Each member's fit warned alike from inside joblib (scikit-learn's Parallel resets
    the filters for every task, and with them the registry that shows a warning once):
    n_models copies, pointing at a line of scikit-learn. Now once, at the caller's line,
    under the caller's filters."""
    X, y, _ = make_ranking(n_queries=10, docs_per_query=5, n_features=3, random_state=0)
    rows_as_queries = np.arange(len(y))  # every query one document: each member warns
    ensemble = AveragedRanker(LambdaMART(n_estimators=2, subsample=0.5), n_models=3, n_jobs=n_jobs, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ensemble.fit(X, y, qid=rows_as_queries)
    single = [warning for warning in caught if "holds a single document" in str(warning.message)]
    assert len(single) == 1, [str(warning.message) for warning in caught]
    assert single[0].filename == __file__ and single[0].category is UserWarning
    assert str(single[0].message).startswith("LambdaMART.fit: every one of the 50 queries")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with warnings.catch_warnings(record=True) as caught_inside:
            ensemble.fit(X, y, qid=rows_as_queries)
    assert not caught_inside


class KeywordsOnlyWarning(UserWarning):
    """A warning whose class cannot be rebuilt from its arguments, as plain pickling does
    (some versions of scikit-learn's InconsistentVersionWarning)."""

    def __init__(self, *, detail: str) -> None:
        super().__init__(f"detail {detail}")


def test_a_members_warning_that_cannot_be_pickled_back_reaches_the_caller_by_its_text(monkeypatch):
    """A warning class whose __init__ takes keywords only cannot be rebuilt when a worker
    process sends it back: it comes as a UserWarning naming its class, and the fit stands.
    (Whether it can depends on the process: tblib, which dask loads, registers picklers
    for every exception class; plain pickle's failure is made certain here.)"""
    import pickle

    from forestrank.ensemble import _averaged

    loads = pickle.loads

    def plain_loads(data):
        loaded = loads(data)
        if isinstance(loaded, KeywordsOnlyWarning):
            KeywordsOnlyWarning(*loaded.args)  # what plain pickle calls: TypeError
        return loaded

    monkeypatch.setattr(_averaged.pickle, "loads", plain_loads)
    portable = _averaged._portable(KeywordsOnlyWarning(detail="x"))
    assert type(portable) is UserWarning and str(portable) == "KeywordsOnlyWarning: detail x"
    plain = _averaged._portable(UserWarning("plain"))
    assert type(plain) is UserWarning and str(plain) == "plain"


def test_a_fit_without_qid_warns_once_at_the_callers_line():
    """Each member warned, naming its own class, from a line inside joblib: n_models
    warnings, none pointing at the caller. The members fit the one query."""
    from forestrank import MissingQidWarning

    X, y, _ = make_ranking(n_queries=4, docs_per_query=10, random_state=0)
    ensemble = AveragedRanker(LambdaMART(n_estimators=2, max_features=0.5, min_samples_leaf=2), n_models=3, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ensemble.fit(X, y)
    missing = [warning for warning in caught if issubclass(warning.category, MissingQidWarning)]
    assert len(missing) == 1 and str(missing[0].message).startswith("AveragedRanker.fit got no qid: all 40 rows")
    assert missing[0].filename == __file__
    one_query = AveragedRanker(LambdaMART(n_estimators=2, max_features=0.5, min_samples_leaf=2), n_models=3, random_state=0)
    np.testing.assert_array_equal(ensemble.predict(X), one_query.fit(X, y, qid=np.zeros(len(y))).predict(X))


def test_the_callers_warnings_filters_reach_members_fitted_in_processes():
    """Members fitted in joblib's worker processes warned whatever the caller's filters
    said: even warnings.simplefilter('ignore') printed them (and 'error' did not raise)."""
    X, y, qid = make_ranking(n_queries=10, docs_per_query=5, n_features=3, random_state=0)
    rows_as_queries = np.arange(len(y))  # every query one document: the members warn
    for n_jobs in (1, 2):
        ensemble = AveragedRanker(LambdaMART(n_estimators=2, subsample=0.5), n_models=2, n_jobs=n_jobs, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(UserWarning, match="holds a single document"):
                ensemble.fit(X, y, qid=rows_as_queries)


def test_a_fit_parameter_its_members_do_not_take_is_refused_before_any_warning():
    """LightGBM's group= warned that every row was one query, then failed naming
    BaseBoostingRanker.fit."""
    from forestrank import MissingQidWarning

    X, y, qid = make_ranking(n_queries=4, docs_per_query=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingQidWarning)
        with pytest.raises(TypeError, match=r"AveragedRanker.fit got 'group', which its members' fit \(LambdaMART.fit\)"):
            AveragedRanker(LambdaMART(n_estimators=2), n_models=2).fit(X, y, group=np.bincount(qid))


def test_another_librarys_member_gets_its_queries_its_own_way():
    """An XGBRanker member given group= in fit_params got the one-query ids the ensemble
    made up for a missing qid (and XGBoost refused both), with a warning that was false."""
    xgboost = pytest.importorskip("xgboost")
    from forestrank import MissingQidWarning

    X, y, qid = make_ranking(n_queries=6, docs_per_query=10, random_state=0)
    ensemble = AveragedRanker(xgboost.XGBRanker(n_estimators=2, subsample=0.5), n_models=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MissingQidWarning)
        ensemble.fit(X, y, group=np.bincount(qid))
    single = xgboost.XGBRanker(n_estimators=2, subsample=0.5, random_state=ensemble.estimators_[0].random_state)
    np.testing.assert_allclose(ensemble.estimators_[0].predict(X), single.fit(X, y, group=np.bincount(qid)).predict(X))


def test_a_members_fit_requests_are_routed_to_every_member():
    """Only qid and sample_weight were routed: an averaged click model (LambdaMART's
    position) could not be cross-validated, nor an eval_set requested on the member."""
    from sklearn.model_selection import cross_validate

    from forestrank import QueryKFold

    X, y, qid = make_ranking(n_queries=30, docs_per_query=8, n_features=4, random_state=0)
    position = np.tile(np.arange(1, 9), 30)
    member = LambdaMART(n_estimators=3, position_bias="unbiased", subsample=0.5, random_state=0)
    model = AveragedRanker(member, n_models=2, n_jobs=1, random_state=0)
    folds = list(QueryKFold(2).split(X, y, qid=qid))
    with sklearn.config_context(enable_metadata_routing=True):
        scores = cross_validate(model, X, y, params={"qid": qid, "position": position}, cv=folds)["test_score"]
    for (train, test), score in zip(folds, scores):
        fitted = clone(model).fit(X[train], y[train], qid=qid[train], position=position[train])
        assert score == fitted.score(X[test], y[test], qid=qid[test])
    eval_set = [(X[folds[0][1]], y[folds[0][1]], qid[folds[0][1]])]
    with sklearn.config_context(enable_metadata_routing=True):
        stopping = LambdaMART(n_estimators=50, n_iter_no_change=1, subsample=0.5, random_state=0).set_fit_request(eval_set=True)
        averaged = AveragedRanker(stopping, n_models=2, n_jobs=1, random_state=0)
        fitted = cross_validate(averaged, X, y, params={"qid": qid, "eval_set": eval_set}, cv=folds, return_estimator=True)
    assert all(member.n_iter_ < 50 for model in fitted["estimator"] for member in model.estimators_)


def test_a_members_fit_requests_under_an_alias_reach_it_under_their_names():
    """A member requesting position or sample_weight under another name got it under that
    name: LambdaMART.fit() got an unexpected keyword argument."""
    from sklearn.pipeline import Pipeline

    X, y, qid = make_ranking(n_queries=30, docs_per_query=8, n_features=4, random_state=0)
    position = np.tile(np.arange(1, 9), 30)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, 30)[qid]  # one weight a query, as position_bias needs
    member = LambdaMART(n_estimators=3, position_bias="unbiased", subsample=0.5, random_state=0)
    expected = AveragedRanker(member, n_models=2, n_jobs=1, random_state=0).fit(
        X, y, qid=qid, sample_weight=weights, position=position
    )
    with sklearn.config_context(enable_metadata_routing=True):
        aliased = clone(member).set_fit_request(position="pos", sample_weight="w")
        pipeline = Pipeline([("averaged", AveragedRanker(aliased, n_models=2, n_jobs=1, random_state=0))])
        pipeline.fit(X, y, qid=qid, pos=position, w=weights)
        # what the member does not request is still passed as given, as without routing
        stopping = AveragedRanker(LambdaMART(n_estimators=20, n_iter_no_change=1, subsample=0.5), n_models=2, n_jobs=1)
        stopped = stopping.fit(X, y, qid=qid, eval_set=[(X, y, qid)])
    np.testing.assert_array_equal(pipeline.predict(X), expected.predict(X))
    assert all(member.n_iter_ < 20 for member in stopped.estimators_)


def test_dask_collections_are_refused_by_name_before_any_member_fits():
    """A Dask X, y and qid were half converted: y read on this machine and handed with the
    Dask X to the members, which said y must be a Dask array."""
    da = pytest.importorskip("dask.array")
    X, y, qid = make_ranking(n_queries=10, docs_per_query=5, n_features=3, random_state=0)
    collections = [da.from_array(values, chunks=(25,) + values.shape[1:]) for values in (X, y, qid)]
    with pytest.raises(TypeError, match="AveragedRanker fits arrays in memory and X is a Dask collection: call X.compute"):
        AveragedRanker(LambdaMART(n_estimators=2), n_models=2).fit(collections[0], collections[1], qid=collections[2])


def test_its_input_tags_are_its_members():
    """BaseRanker's tags claimed NaN and sparse input whatever the member takes."""
    from sklearn.base import BaseEstimator
    from sklearn.utils import get_tags

    class DenseOnly(BaseEstimator):  # another library's ranker: scikit-learn's default tags
        def __init__(self, random_state=None):
            self.random_state = random_state

        def fit(self, X, y, qid=None, sample_weight=None):
            return self

    for member, expected in ((LambdaMART(), True), (None, True), (DenseOnly(), False)):
        tags = get_tags(AveragedRanker(member)).input_tags
        assert (tags.allow_nan, tags.sparse) == (expected, expected)
