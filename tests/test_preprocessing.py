"""QueryScaler: every feature normalised within each query, against per-query references."""

import warnings

import numpy as np
import pytest
import scipy.sparse
import sklearn
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from forestrank import LambdaMART, QueryKFold, QueryScaler, load_letor_fold, make_ranking, ndcg_score, ndcg_scorer


@pytest.fixture(scope="module")
def shuffled():
    """Queries of 1 to 12 documents in shuffled row order, ties, a constant feature and NaN."""
    rng = np.random.default_rng(0)
    qid = rng.permutation(np.repeat(np.arange(20), rng.integers(1, 13, 20)))
    X = rng.integers(0, 5, (len(qid), 4)).astype(float)
    X[:, 2] = 7.0
    X[rng.uniform(size=X.shape) < 0.15] = np.nan
    return X, qid


def _by_query(X, qid, per_query):
    out = np.empty_like(X)
    for q in np.unique(qid):
        rows = qid == q
        for feature in range(X.shape[1]):
            out[rows, feature] = per_query(X[rows, feature])
    return out


def _minmax(values):
    present = values[~np.isnan(values)]
    if len(present) == 0 or present.max() == present.min():
        return np.where(np.isnan(values), np.nan, 0.0)
    return (values - present.min()) / (present.max() - present.min())


def _zscore(values):
    present = values[~np.isnan(values)]
    if len(present) == 0 or present.std() == 0:
        return np.where(np.isnan(values), np.nan, 0.0)
    return (values - present.mean()) / present.std()


def _rank(values):
    out = np.full(len(values), np.nan)
    present = ~np.isnan(values)
    n = present.sum()
    out[present] = (rankdata(values[present]) - 1) / (n - 1) if n > 1 else 0.0
    return out


@pytest.mark.parametrize(("method", "reference"), [("minmax", _minmax), ("zscore", _zscore), ("rank", _rank)])
def test_each_method_is_its_per_query_reference(shuffled, method, reference):
    X, qid = shuffled
    scaled = QueryScaler(method=method).fit(X).transform(X, qid=qid)
    np.testing.assert_allclose(scaled, _by_query(X, qid, reference), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.isnan(scaled), np.isnan(X))


def test_a_feature_constant_in_a_query_scales_to_zero_whatever_its_rounding():
    X = np.array([[0.1], [0.1], [0.1], [1.0], [3.0]])  # 0.1's mean rounds above 0.1, its std to 1e-17
    for method in ("minmax", "zscore"):
        np.testing.assert_array_equal(QueryScaler(method=method).fit_transform(X, qid=[0, 0, 0, 1, 1])[:3, 0], 0.0)
    np.testing.assert_array_equal(QueryScaler(method="rank").fit_transform(X, qid=[0, 0, 0, 1, 1])[:3, 0], 0.5)  # tied


@pytest.mark.parametrize("method", ["minmax", "zscore", "rank"])
def test_a_feature_missing_in_every_row_given_stays_missing(shuffled, method):
    """One query at a time, as a serving stage transforms, meets features absent from the
    whole query: "rank" failed with an IndexError on them."""
    X, qid = shuffled
    X = X.copy()
    X[:, 1] = np.nan
    scaler = QueryScaler(method=method).fit(X)
    for q in np.unique(qid)[:5]:
        rows = qid == q
        scaled = scaler.transform(X[rows], qid=qid[rows])
        assert np.isnan(scaled[:, 1]).all()
        np.testing.assert_array_equal(scaled, scaler.transform(X, qid=qid)[rows])


def test_query_features_are_the_raw_features_statistics_over_the_query(shuffled):
    X, qid = shuffled
    scaler = QueryScaler(query_features=("mean", "max", "min", "std"))
    out = scaler.fit_transform(X, qid=qid)
    n = X.shape[1]
    assert out.shape == (len(X), 5 * n)
    for index, statistic in enumerate((np.nanmean, np.nanmax, np.nanmin, np.nanstd)):
        with warnings.catch_warnings():  # numpy warns of the all-missing queries' statistics
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = _by_query(X, qid, lambda v: np.full(len(v), statistic(v)) if (~np.isnan(v)).any() else np.nan)
        np.testing.assert_allclose(out[:, (index + 1) * n : (index + 2) * n], expected, rtol=1e-12, atol=1e-12)
    names = scaler.get_feature_names_out()
    assert list(names[:n]) == ["x0", "x1", "x2", "x3"] and names[n] == "x0_query_mean" and names[-1] == "x3_query_std"


def test_mq2008_features_are_already_query_level_normalised(mq2008):
    """LETOR 4.0 ships QueryLevelNorm features: min-max scaling them again changes nothing
    (the file's six decimals aside)."""
    X, _, qid = load_letor_fold(mq2008 / "Fold1").train
    scaled = QueryScaler().fit_transform(X, qid=qid)
    assert np.abs(scaled - X).max() < 2e-6


def test_bad_input_is_refused_by_name(shuffled):
    X, qid = shuffled
    with pytest.raises(ValueError, match="transform needs qid="):
        QueryScaler().fit(X).transform(X)
    with pytest.raises(TypeError, match="makes sparse X dense: pass X.toarray"):
        QueryScaler().fit(scipy.sparse.csr_matrix(np.nan_to_num(X)))
    with pytest.raises(ValueError, match=r"query_features holds \['median'\]"):
        QueryScaler(query_features=("median",)).fit(X)
    with pytest.raises(ValueError, match="method"):
        QueryScaler(method="l2").fit(X)
    with pytest.raises(ValueError, match=f"qid has {len(X) - 1} entries but X has {len(X)} rows"):
        QueryScaler().fit(X, qid=qid[1:])
    # repeated statistics made repeated output columns
    with pytest.raises(ValueError, match=r"query_features names \['mean'\] more than once"):
        QueryScaler(query_features=("mean", "max", "mean")).fit(X)
    # set after the fit: the bad names were read as the standard deviation, named as given,
    # and a bad method as z-scores
    fitted = QueryScaler().fit(X)
    for parameters, message in [
        ({"query_features": ("median",)}, r"query_features holds \['median'\]"),
        ({"query_features": ("std", "std")}, r"query_features names \['std'\] more than once"),
        ({"method": "l2"}, "'method' parameter of QueryScaler must be"),
    ]:
        fitted.set_params(**{"method": "minmax", "query_features": (), **parameters})
        for read in (lambda: fitted.transform(X, qid=qid), fitted.get_feature_names_out):
            with pytest.raises(ValueError, match=message):
                read()


def test_feature_names_out_checks_input_features_against_the_fits_names(shuffled):
    """Other names than the fit's were taken and used, where scikit-learn's transformers
    refuse them."""
    pandas = pytest.importorskip("pandas")
    X, qid = shuffled
    names = [f"f{index}" for index in range(X.shape[1])]
    scaler = QueryScaler(query_features=("mean",)).fit(pandas.DataFrame(X, columns=names), qid=qid)
    assert list(scaler.get_feature_names_out(names)) == [*names, *(f"{name}_query_mean" for name in names)]
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        scaler.get_feature_names_out([f"g{index}" for index in range(X.shape[1])])
    with pytest.raises(ValueError, match=f"input_features should have length equal to number of features \\({X.shape[1]}\\)"):
        QueryScaler().fit(X).get_feature_names_out(["a"])


def test_a_fit_that_raises_leaves_the_scaler_as_it_was(shuffled):
    """The narrower X set the width before the qid failed: the fitted scaler then refused
    the rows it had been fitted on."""
    X, qid = shuffled
    scaler = QueryScaler().fit(X, qid=qid)
    expected = scaler.transform(X, qid=qid)
    with pytest.raises(ValueError, match="qid has 5 entries"):
        scaler.fit(X[:, :2], qid=qid[:5])
    assert scaler.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(scaler.transform(X, qid=qid), expected)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    named = QueryScaler().fit(frame, qid=qid)
    with pytest.raises(ValueError, match="infinity"):
        named.fit(frame.rename(columns={"f0": "g0"}).assign(g0=np.inf), qid=qid)  # names changed, then values refused
    np.testing.assert_array_equal(named.feature_names_in_, frame.columns)
    assert not hasattr(QueryScaler().fit(frame, qid=qid).fit(X, qid=qid), "feature_names_in_")


@pytest.mark.slow  # a grid search of fits: with the slow tests
def test_a_pipeline_routes_qid_and_grid_search_scores_equal_fits_by_hand():
    X, y, qid = make_ranking(n_queries=90, docs_per_query=(5, 30), n_features=6, random_state=0)
    X = X * np.repeat(np.random.default_rng(1).uniform(1, 100, 90), np.bincount(qid))[:, None]  # queries of other scales
    pipeline = make_pipeline(QueryScaler(), LambdaMART(n_estimators=10, random_state=0))
    grid = {"queryscaler__method": ["minmax", "rank"]}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(pipeline, grid, cv=QueryKFold(3), scoring=ndcg_scorer(10)).fit(X, y, qid=qid)
        scores = search.cv_results_["mean_test_score"]
        assert scores[0] != scores[1]
        for method, score in zip(grid["queryscaler__method"], scores):
            by_hand = []
            for train, test in QueryKFold(3).split(X, y, qid=qid):
                scaler = QueryScaler(method=method).fit(X[train], qid=qid[train])
                model = LambdaMART(n_estimators=10, random_state=0).fit(scaler.transform(X[train], qid[train]), y[train], qid=qid[train])
                by_hand.append(ndcg_score(y[test], model.predict(scaler.transform(X[test], qid[test])), qid[test], k=10))
            assert score == pytest.approx(np.mean(by_hand), abs=1e-12)
        fitted = clone(pipeline).fit(X, y, qid=qid)
        expected = fitted[-1].predict(fitted[0].transform(X, qid=qid))
        np.testing.assert_array_equal(fitted.predict(X, qid=qid), expected)


def test_a_search_over_the_pipeline_is_scored_in_nested_cross_validation():
    """A fitted GridSearchCV routes no qid to predict: nested cross-validation of a search
    over a QueryScaler pipeline raised (the scorer called search.predict(X)), with advice to
    turn on the routing already on. The scorers ask the search's best estimator, as its
    predict does, and the error names what passes no qid."""
    from sklearn.model_selection import cross_val_predict, cross_val_score

    X, y, qid = make_ranking(n_queries=40, docs_per_query=10, n_features=5, random_state=0)
    pipeline = make_pipeline(QueryScaler(), LambdaMART(n_estimators=3, random_state=0))
    search = GridSearchCV(pipeline, {"lambdamart__n_estimators": [2, 3]}, cv=QueryKFold(2), scoring=ndcg_scorer(10))
    with sklearn.config_context(enable_metadata_routing=True):
        nested = cross_val_score(search, X, y, cv=QueryKFold(3), scoring=ndcg_scorer(10), params={"qid": qid}, error_score="raise")
        for fold, (train, test) in enumerate(QueryKFold(3).split(X, y, qid)):
            best = clone(search).fit(X[train], y[train], qid=qid[train]).best_estimator_
            assert nested[fold] == ndcg_score(y[test], best.predict(X[test], qid=qid[test]), qid[test], 10)
        with pytest.raises(ValueError, match=r"metadata routing is on: pass qid to fit, predict and score.*best_estimator_"):
            cross_val_predict(pipeline, X, y, cv=QueryKFold(3), params={"qid": qid})
        # a search refitted without refit keeps the earlier best_estimator_, which it no longer predicts with
        search.set_params(refit=False).fit(X, y, qid=qid)
        with pytest.raises(AttributeError, match="'GridSearchCV' has no attribute 'predict'"):
            ndcg_scorer(10)(search, X, y, qid=qid)


def test_features_near_the_float_limit_are_normalised_without_overflow():
    """``max - min``, the sums of the mean and the squared deviations overflowed: a feature
    spanning -1e308 to 1e308 scaled to NaN, one of +-1e200 z-scored to 0, its std was inf."""
    qid = [0, 0, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        minmax = QueryScaler().fit_transform(np.array([[-1e308], [1e308], [0.0]]), qid=qid)
        big = np.array([[-1e200], [1e200], [0.0]])
        zscore = QueryScaler("zscore", query_features=("mean", "std")).fit_transform(big, qid=qid)
    np.testing.assert_array_equal(minmax.ravel(), [0.0, 1.0, 0.5])
    np.testing.assert_allclose(zscore[:, 0], [-np.sqrt(1.5), np.sqrt(1.5), 0.0], rtol=1e-15)
    np.testing.assert_allclose(zscore[0, 1:], [0.0, 1e200 * np.sqrt(2.0 / 3.0)], rtol=1e-15)
