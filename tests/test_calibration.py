"""CalibratedRanker: a monotone map of held-out scores, fitted as by hand, that keeps every ranking."""

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from scipy.optimize import minimize

from forestrank import CalibratedRanker, DummyRanker, LambdaMART, QueryKFold, make_ranking, ndcg_score
from forestrank.calibration import expected_calibration_error


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_ranking(n_queries=240, docs_per_query=(10, 30), n_features=8, random_state=0)
    train = qid < 160
    return (X[train], y[train], qid[train]), (X[~train], y[~train], qid[~train])


def _held_out_scores(X, y, qid, folds):
    scores = np.empty(len(y))
    for train, test in QueryKFold(folds).split(X, y, qid=qid):
        scores[test] = LambdaMART(n_estimators=15, random_state=0).fit(X[train], y[train], qid=qid[train]).predict(X[test])
    return scores


@pytest.mark.slow  # cross-fitted LambdaMART fits: with the slow tests
@pytest.mark.parametrize(("method", "target"), [("isotonic", "probability"), ("sigmoid", "probability"), ("isotonic", "grade")])
def test_the_map_is_fitted_on_held_out_scores_and_keeps_every_ranking(data, method, target):
    (X, y, qid), (X_test, y_test, qid_test) = data
    model = CalibratedRanker(LambdaMART(n_estimators=15, random_state=0), method=method, target=target, cv=3)
    model.fit(X, y, qid=qid)
    scores = model.predict(X_test)
    np.testing.assert_array_equal(scores, LambdaMART(n_estimators=15, random_state=0).fit(X, y, qid=qid).predict(X_test))
    held_out = _held_out_scores(X, y, qid, 3)
    labels = y if target == "grade" else (y >= 1).astype(float)
    if method == "sigmoid":  # Platt's smoothed targets, his cross entropy minimised directly
        n_relevant, n_other = labels.sum(), len(labels) - labels.sum()
        soft = np.where(labels > 0, (n_relevant + 1) / (n_relevant + 2), 1 / (n_other + 2))

        def cross_entropy(ab):
            z = ab[0] * held_out + ab[1]
            return np.sum(np.logaddexp(0, -z) * soft + np.logaddexp(0, z) * (1 - soft))

        a, b = minimize(cross_entropy, [1.0, 0.0], method="BFGS", options={"gtol": 1e-10}).x
        expected = 1 / (1 + np.exp(-(a * scores + b)))
    else:
        expected = IsotonicRegression(y_min=labels.min(), y_max=labels.max(), out_of_bounds="clip").fit(held_out, labels).predict(scores)
    values = model.predict_relevance(X_test)
    np.testing.assert_allclose(values, expected, rtol=1e-6 if method == "sigmoid" else 1e-10, atol=1e-8 if method == "sigmoid" else 1e-12)
    order = np.argsort(scores, kind="stable")
    assert np.all(np.diff(values[order]) >= -1e-12)  # never reverses two documents
    assert model.score(X_test, y_test, qid_test) == ndcg_score(y_test, scores, qid_test, k=10)


@pytest.mark.slow  # cross-fitted LambdaMART fits: with the slow tests
def test_calibrated_probabilities_beat_scores_scaled_per_query(data):
    (X, y, qid), (X_test, y_test, qid_test) = data
    model = CalibratedRanker(LambdaMART(n_estimators=15, random_state=0), cv=3).fit(X, y, qid=qid)
    relevant = (y_test >= 1).astype(float)
    scores = model.predict(X_test)
    scaled = np.empty_like(scores)
    for q in np.unique(qid_test):
        rows = qid_test == q
        span = scores[rows].max() - scores[rows].min()
        scaled[rows] = (scores[rows] - scores[rows].min()) / span if span > 0 else 0.5
    calibrated = expected_calibration_error(relevant, model.predict_relevance(X_test))
    assert calibrated < 0.05 < expected_calibration_error(relevant, scaled)


def test_expected_calibration_error_weighs_each_bins_gap_by_its_share():
    y = np.array([1, 0, 0, 1, 1, 1])
    p = np.array([0.05, 0.05, 0.15, 0.95, 0.95, 0.55])
    # bins: [0.0, 0.1): p 0.05, 0.05 against 1 of 2; [0.1, 0.2): 0.15 against 0; [0.5, 0.6): 0.55 against 1; [0.9, 1]: 0.95, 0.95 against 2
    expected = (abs(0.1 - 1) + abs(0.15 - 0) + abs(0.55 - 1) + abs(1.9 - 2)) / 6
    assert expected_calibration_error(y, p) == pytest.approx(expected, abs=1e-15)
    with pytest.raises(ValueError, match=r"probabilities must lie in \[0, 1\]"):
        expected_calibration_error(y, p * 2)
    with pytest.raises(ValueError, match="must be finite"):
        expected_calibration_error(y, p * np.nan)
    with pytest.raises(ValueError, match="n_bins must be an integer >= 1; got 0"):
        expected_calibration_error(y, p, n_bins=0)
    # unchecked: grades or NaN in y_true gave a number or NaN, 2-D input numpy's error, True a TypeError
    for labels in (np.array([1, 0, 0, 2, 1, 1]), np.array([1, 0, 0, np.nan, 1, 1])):
        with pytest.raises(ValueError, match="y_true must hold 1 for a relevant document and 0 otherwise"):
            expected_calibration_error(labels, p)
    with pytest.raises(ValueError, match=r"y_true must be one value per document \(1-D\); got shape \(1, 6\)"):
        expected_calibration_error(y[None], p[None])
    with pytest.raises(ValueError, match="n_bins must be an integer >= 1; got True"):
        expected_calibration_error(y, p, n_bins=True)
    assert expected_calibration_error(y.astype(bool), p) == expected_calibration_error(y, p)


def test_bad_settings_are_refused_by_name(data):
    (X, y, qid), _ = data
    with pytest.raises(ValueError, match="method='sigmoid' .*target='grade' needs method='isotonic'"):
        CalibratedRanker(LambdaMART(), method="sigmoid", target="grade").fit(X, y, qid=qid)
    # relevant_grade does nothing for target='grade': said, rather than silently ignored
    with pytest.warns(UserWarning, match="relevant_grade=2 is used only with target='probability'") as caught:
        CalibratedRanker(DummyRanker(), target="grade", relevant_grade=2, cv=2).fit(X, y, qid=qid)
    assert caught[0].filename == __file__
    with pytest.raises(ValueError, match="needs qid="):
        CalibratedRanker(LambdaMART()).fit(X, y)
    # True is an Integral to Python: it would have counted as grade 1; NaN would have made every target 0.
    with pytest.raises(ValueError, match="'relevant_grade' parameter of CalibratedRanker must be a number, not a bool"):
        CalibratedRanker(LambdaMART(), relevant_grade=True).fit(X, y, qid=qid)
    for grade in (np.nan, np.inf):
        with pytest.raises(ValueError, match="'relevant_grade' parameter of CalibratedRanker must be a float in"):
            CalibratedRanker(LambdaMART(), relevant_grade=grade).fit(X, y, qid=qid)
    # a grade that leaves one class fitted a constant map (Platt's smoothed targets hid it)
    for method in ("isotonic", "sigmoid"):
        for grade, side in ((0, "relevant"), (float(y.max()) + 1, "irrelevant")):
            with pytest.raises(ValueError, match=rf"relevant_grade={grade!r} makes every row {side} \(y holds grades 0 to"):
                CalibratedRanker(DummyRanker(), method=method, relevant_grade=grade, cv=2).fit(X, y, qid=qid)


@pytest.mark.slow  # cross-fitted LambdaMART fits: with the slow tests
def test_group_splitters_are_given_qid_as_groups_and_a_fold_splitting_a_query_is_refused(data):
    """``cv=GroupKFold(3)`` failed with "split() got an unexpected keyword argument 'qid'"."""
    from sklearn.model_selection import GroupKFold, KFold

    (X, y, qid), _ = data
    model = CalibratedRanker(LambdaMART(n_estimators=3, random_state=0), cv=GroupKFold(3)).fit(X, y, qid=qid)
    held_out = np.empty(len(y))
    for train, test in GroupKFold(3).split(X, y, groups=qid):
        held_out[test] = LambdaMART(n_estimators=3, random_state=0).fit(X[train], y[train], qid=qid[train]).predict(X[test])
    expected = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(held_out, (y >= 1).astype(float))
    np.testing.assert_array_equal(model.calibrator_.predict(held_out), expected.predict(held_out))
    with pytest.raises(ValueError, match="cv: KFold put rows of one query in both a fold's training and test rows"):
        CalibratedRanker(LambdaMART(n_estimators=3), cv=KFold(3)).fit(X, y, qid=qid)

    class RowHalves:
        def split(self, X, y):
            yield np.arange(0, len(y), 2), np.arange(1, len(y), 2)

    with pytest.raises(ValueError, match="cv: RowHalves.split takes neither qid nor groups"):
        CalibratedRanker(LambdaMART(n_estimators=3), cv=RowHalves()).fit(X, y, qid=qid)

    class ByKeyword:  # a splitter of metadata by keyword is given qid
        def split(self, X, y, **metadata):
            yield from QueryKFold(3).split(X, y, qid=metadata["qid"])

    by_keyword = CalibratedRanker(LambdaMART(n_estimators=3, random_state=0), cv=ByKeyword()).fit(X, y, qid=qid)
    by_name = CalibratedRanker(LambdaMART(n_estimators=3, random_state=0), cv=QueryKFold(3)).fit(X, y, qid=qid)
    np.testing.assert_array_equal(by_keyword.predict_relevance(X), by_name.predict_relevance(X))

    class Overlapping:  # test folds sharing queries: the last fold's scores silently replaced the first's
        def split(self, X, y, groups):
            queries = np.unique(groups)
            for tested in (queries[: 2 * len(queries) // 3], queries[len(queries) // 3 :]):
                test = np.isin(groups, tested)
                yield np.flatnonzero(~test), np.flatnonzero(test)

    with pytest.raises(ValueError, match="cv put some rows in the test rows of two folds"):
        CalibratedRanker(LambdaMART(n_estimators=3), cv=Overlapping()).fit(X, y, qid=qid)


def test_feature_names_are_the_rankers_and_a_refit_on_an_array_drops_them(data):
    pd = pytest.importorskip("pandas")
    (X, y, qid), _ = data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    model = CalibratedRanker(LambdaMART(n_estimators=2, random_state=0), cv=2).fit(frame, y, qid=qid)
    np.testing.assert_array_equal(model.feature_names_in_, frame.columns)
    assert not hasattr(model.fit(X, y, qid=qid), "feature_names_in_")


def test_a_pipeline_with_a_query_scaler_gets_qid_at_every_step(data):
    import sklearn
    from sklearn.pipeline import make_pipeline

    from forestrank import QueryScaler

    (X, y, qid), (X_test, _, qid_test) = data
    pipeline = make_pipeline(QueryScaler(), LambdaMART(n_estimators=10, random_state=0))
    with sklearn.config_context(enable_metadata_routing=True):
        model = CalibratedRanker(pipeline, cv=3).fit(X, y, qid=qid)
        by_hand = make_pipeline(QueryScaler(), LambdaMART(n_estimators=10, random_state=0)).fit(X, y, qid=qid)
        np.testing.assert_array_equal(model.predict(X_test, qid=qid_test), by_hand.predict(X_test, qid=qid_test))
        assert model.predict_relevance(X_test, qid=qid_test).shape == (len(X_test),)


def test_a_pipeline_ending_in_it_scores_with_routed_metadata(data):
    """scikit-learn's ``Pipeline.score`` routes ``sample_weight`` (None when not given) to
    the last step, whose ``score`` took none: scoring the pipeline, and ``cross_validate``'s
    default scoring, raised a TypeError. Its score weighs queries as the rankers' does."""
    import sklearn
    from sklearn.pipeline import make_pipeline

    from forestrank import QueryScaler

    (X, y, qid), (X_test, y_test, qid_test) = data
    weights = np.where(qid_test % 2 == 0, 3.0, 1.0)
    with sklearn.config_context(enable_metadata_routing=True):
        pipeline = make_pipeline(QueryScaler(), CalibratedRanker(LambdaMART(n_estimators=5, random_state=0), cv=2))
        pipeline.fit(X, y, qid=qid)
        scores = pipeline.predict(X_test, qid=qid_test)
        assert pipeline.score(X_test, y_test, qid=qid_test) == pytest.approx(ndcg_score(y_test, scores, qid_test, 10))
        per_query = ndcg_score(y_test, scores, qid_test, 10, per_query=True)
        query_weights = np.where(np.unique(qid_test) % 2 == 0, 3.0, 1.0)
        calibrated = pipeline[-1]
        weighted = calibrated.score(pipeline[0].transform(X_test, qid=qid_test), y_test, qid=qid_test, sample_weight=weights)
        assert weighted == pytest.approx(np.average(per_query, weights=query_weights))


def test_score_uses_the_rankers_label_gain_as_the_rankers_score_does(data):
    (X, y, qid), (X_test, y_test, qid_test) = data
    gain = [0.0, 1.0, 10.0, 11.0, 12.0]
    ranker = LambdaMART(n_estimators=5, label_gain=gain, random_state=0)
    model = CalibratedRanker(ranker, cv=2).fit(X, y, qid=qid)
    scores = model.predict(X_test, qid=qid_test)
    expected = ndcg_score(y_test, scores, qid_test, 10, gain=np.asarray(gain))
    assert expected != pytest.approx(ndcg_score(y_test, scores, qid_test, 10))
    assert model.score(X_test, y_test, qid=qid_test) == pytest.approx(expected)
    assert model.score(X_test, y_test, qid=qid_test) == pytest.approx(model.estimator_.score(X_test, y_test, qid=qid_test))
    # a Pipeline ending in the ranker: its final step's gains, as Pipeline.score uses them
    import sklearn
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    with sklearn.config_context(enable_metadata_routing=True):
        piped = CalibratedRanker(make_pipeline(StandardScaler(), ranker), cv=2).fit(X, y, qid=qid)
        scores = piped.predict(X_test, qid=qid_test)
        assert piped.score(X_test, y_test, qid=qid_test) == pytest.approx(
            ndcg_score(y_test, scores, qid_test, 10, gain=np.asarray(gain))
        )


def test_score_names_its_own_arguments(data):
    """Its errors named ``ndcg_score``'s ``y_true``, an argument ``score`` does not take."""
    (X, y, qid), (X_test, y_test, qid_test) = data
    model = CalibratedRanker(LambdaMART(n_estimators=3, random_state=0), cv=2).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="^y has 3 entries but X has"):
        model.score(X_test, y_test[:3], qid=qid_test)
    with pytest.raises(ValueError, match="sample_weight has 3 entries but X has"):
        model.score(X_test, y_test, qid=qid_test, sample_weight=np.ones(3))


def test_a_bad_y_is_refused_by_name_and_a_column_warns_as_a_rankers_fit_does(data):
    """``fit`` took ``y`` as it came: a short one died with an IndexError inside the folds."""
    from sklearn.exceptions import DataConversionWarning

    (X, y, qid), _ = data
    model = CalibratedRanker(LambdaMART(n_estimators=2, random_state=0), cv=2)
    with pytest.raises(ValueError, match=f"y has {len(y) - 1} entries but X has {len(y)} rows"):
        model.fit(X, y[:-1], qid=qid)
    with pytest.raises(ValueError, match="y contains negative values"):
        model.fit(X, -y - 1, qid=qid)
    with pytest.warns(DataConversionWarning, match="A column-vector y was passed"):
        column = model.fit(X, y[:, None], qid=qid).predict(X, qid=qid)
    np.testing.assert_array_equal(column, model.fit(X, y, qid=qid).predict(X, qid=qid))


@pytest.mark.parametrize("method", ["isotonic", "sigmoid"])
def test_infinite_scores_are_calibrated_as_the_held_out_extremes(method):
    """A DummyRanker scores a missing value -inf (ranked last), which scikit-learn's
    calibrators refused: fit failed, and a model fitted on complete rows failed to
    calibrate such a row."""
    X, y, qid = make_ranking(n_queries=30, random_state=0)
    feature = DummyRanker().fit(X, y, qid=qid).feature_
    holes = X.copy()
    holes[::7, feature] = np.nan
    model = CalibratedRanker(DummyRanker(), cv=3, method=method).fit(holes, y, qid=qid)
    low, high = model.score_range_
    assert np.isfinite([low, high]).all() and low < high
    np.testing.assert_array_equal(model.calibrate([-np.inf, np.inf]), model.calibrate([low, high]))
    relevance = model.predict_relevance(holes)
    assert relevance[::7].max() == relevance.min()  # missing values: the lowest calibrated value
    for scores, message in (
        ([[0.1, 0.2]], r"scores must be one score per document \(1-D\); got shape \(1, 2\)"),
        (0.5, r"scores must be one score per document \(1-D\); got shape \(\)"),
        ([0.1, np.nan], "scores hold NaN"),
        (np.array([0.1, 0.2 + 1j]), "Complex data not supported: scores holds complex values"),
    ):
        with pytest.raises(ValueError, match=message):
            model.calibrate(scores)


def test_platts_sigmoid_does_not_depend_on_the_scores_scale_or_offset():
    """The solver met its tolerance at a flat start on scores 1e-8 apart or all near 1e8
    and returned a constant (0.48 for every document); scores of any affine scale give
    one calibration. Platt's cross entropy, minimised by hand on standardised scores, is
    the reference."""
    X, y, qid = make_ranking(n_queries=40, random_state=0)
    reference = None
    for scale, shift in [(1.0, 0.0), (1e-8, 0.0), (1.0, 1e8), (1e8, 0.0), (1e-300, 0.0)]:
        Z = X * scale + shift
        model = CalibratedRanker(DummyRanker(), method="sigmoid", cv=3).fit(Z, y, qid=qid)
        values = model.predict_relevance(Z)
        if reference is None:
            scores = model.predict(Z)
            labels = (y >= 1).astype(float)
            n_relevant, n_other = labels.sum(), len(labels) - labels.sum()
            soft = np.where(labels > 0, (n_relevant + 1) / (n_relevant + 2), 1 / (n_other + 2))
            held_out = np.empty(len(y))
            for train, test in QueryKFold(3).split(Z, y, qid=qid):
                held_out[test] = DummyRanker().fit(Z[train], y[train], qid=qid[train]).predict(Z[test])
            center, spread = held_out.mean(), held_out.std()

            def cross_entropy(ab):
                z = ab[0] * (held_out - center) / spread + ab[1]
                return np.sum(np.logaddexp(0, -z) * soft + np.logaddexp(0, z) * (1 - soft))

            a, b = minimize(cross_entropy, [1.0, 0.0], method="BFGS", options={"gtol": 1e-10}).x
            reference = 1 / (1 + np.exp(-(a * (scores - center) / spread + b)))
            assert np.ptp(reference) > 0.5
        np.testing.assert_allclose(values, reference, rtol=1e-6, atol=1e-8, err_msg=f"scores * {scale} + {shift}")


def test_a_refit_that_fails_leaves_the_fitted_model_as_it_was(data):
    """The map and score range were replaced before the ranker's final fit: when that fit
    raised, the old ranker's scores went through the new map (of grades reversed here)."""
    X, y, qid = data[0]

    class FailsOnAllRows(LambdaMART):
        def fit(self, X, y, qid=None, sample_weight=None, **fit_params):
            if len(y) == len(data[0][1]):
                raise MemoryError("the final fit on every row")
            return super().fit(X, y, qid=qid, sample_weight=sample_weight, **fit_params)

    small = qid < np.unique(qid)[len(np.unique(qid)) // 2]
    model = CalibratedRanker(FailsOnAllRows(n_estimators=3, random_state=0), cv=2).fit(X[small], y[small], qid=qid[small])
    state = dict(vars(model))
    before = model.predict_relevance(X[:20])
    with pytest.raises(MemoryError, match="the final fit on every row"):
        model.fit(X, y.max() - y, qid=qid)
    assert all(vars(model)[name] is value for name, value in state.items()) and vars(model).keys() == state.keys()
    np.testing.assert_array_equal(model.predict_relevance(X[:20]), before)


@pytest.mark.filterwarnings("ignore:Constructing a DIA matrix")  # the test's matrix, built only to be read
@pytest.mark.parametrize("format", ["coo", "dia", "bsr", "lil"])
def test_every_sparse_format_is_taken_as_the_rankers_take_it(data, format):
    """The folds indexed X by rows, which COO, DIA and BSR matrices refuse (scipy's
    TypeError or NotImplementedError); the rankers take every format."""
    import scipy.sparse

    X, y, qid = data[0]
    sparse = scipy.sparse.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X)).asformat(format)
    model = CalibratedRanker(LambdaMART(n_estimators=3, random_state=0), cv=2).fit(sparse, y, qid=qid)
    reference = CalibratedRanker(LambdaMART(n_estimators=3, random_state=0), cv=2).fit(sparse.tocsr(), y, qid=qid)
    np.testing.assert_array_equal(model.predict_relevance(sparse.tocsr()), reference.predict_relevance(sparse.tocsr()))


def test_dask_collections_are_refused_by_name():
    """A Dask X, y and qid were half converted (y and qid read on this machine) and the
    ranker said y must be a Dask array."""
    da = pytest.importorskip("dask.array")
    X, y, qid = make_ranking(n_queries=10, docs_per_query=5, n_features=3, random_state=0)
    collections = [da.from_array(values, chunks=(25,) + values.shape[1:]) for values in (X, y, qid)]
    with pytest.raises(TypeError, match="CalibratedRanker fits arrays in memory and X is a Dask collection: call X.compute"):
        CalibratedRanker(DummyRanker()).fit(collections[0], collections[1], qid=collections[2])


def test_its_tags_are_its_rankers(data):
    """The tags were scikit-learn's defaults (no NaN, no sparse input, no target needed),
    though the ranker gets the rows as given: SelectFromModel refused a NaN the fit takes."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.utils import get_tags

    for estimator in (LambdaMART(), make_pipeline(StandardScaler(), LambdaMART())):
        tags, inner = get_tags(CalibratedRanker(estimator)), get_tags(estimator)
        assert tags.target_tags.required and tags.target_tags.positive_only
        assert (tags.input_tags.allow_nan, tags.input_tags.sparse) == (inner.input_tags.allow_nan, inner.input_tags.sparse)
    assert get_tags(CalibratedRanker(LambdaMART())).input_tags.allow_nan
