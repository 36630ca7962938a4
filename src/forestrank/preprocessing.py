"""Feature transformers that know the queries.

LETOR 4.0 ships its features normalised within each query ("QueryLevelNorm": every
feature min-max scaled over the query's documents, Qin & Liu, "Introducing LETOR 4.0
Datasets", 2013, §3), and rankers trained on such features must see them normalised
the same way when they score. A normalisation per query needs ``qid`` at ``fit``,
``transform`` and so at ``predict``: :class:`QueryScaler` requests it through
scikit-learn's metadata routing, so that a ``Pipeline`` of the scaler and a ranker
routes ``qid`` to both (``sklearn.set_config(enable_metadata_routing=True)``).
"""

import numpy as np
import scipy.sparse
import sklearn
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import _check_feature_names_in, _num_samples, check_is_fitted, validate_data

from ._input.categories import check_frame_dtypes, conversion_hint
from ._input.features import take_input_attributes
from ._input.queries import QueryGroups, group_queries
from ._numba.dtypes import FLOAT_DTYPE

QUERY_STATISTICS = ("mean", "max", "min", "std")


class QueryScaler(TransformerMixin, BaseEstimator):
    """Normalise every feature within each query, optionally appending query-level features.

    Parameters
    ----------
    method : {"minmax", "zscore", "rank"}, default="minmax"
        ``"minmax"``: ``(x - min_q) / (max_q - min_q)`` over the query's documents,
        LETOR 4.0's QueryLevelNorm (0 where the query's values are all equal).
        ``"zscore"``: ``(x - mean_q) / std_q`` (population std; 0 where it is 0).
        ``"rank"``: the value's rank within the query scaled to [0, 1], ``(r - 1) /
        (n_q - 1)`` with ties at their mean rank (0 in a one-document query).
        Missing values (NaN) stay missing and are left out of every statistic.
    query_features : tuple of {"mean", "max", "min", "std"}, default=()
        Statistics of each raw feature over the query appended as query-level
        features after the normalised ones (for each statistic, one column per
        feature): what the document's query is like, which a per-query normalisation
        removes.

    Attributes
    ----------
    n_features_in_ : int
        Features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Set when ``X`` has string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from forestrank.preprocessing import QueryScaler
    >>> X = np.array([[1.0], [3.0], [2.0], [10.0], [20.0]])
    >>> QueryScaler().fit_transform(X, qid=[0, 0, 0, 1, 1]).ravel()
    array([0. , 1. , 0.5, 0. , 1. ])
    """

    _parameter_constraints = {
        "method": [StrOptions({"minmax", "zscore", "rank"})],
        "query_features": [tuple, list],
    }
    __metadata_request__fit = {"qid": True}
    __metadata_request__transform = {"qid": True}

    def __init__(self, method: str = "minmax", query_features: tuple = ()) -> None:
        self.method = method
        self.query_features = query_features

    def fit(self, X: object, y: object = None, qid: object = None) -> "QueryScaler":
        """Check ``X`` and the parameters; a per-query normalisation learns nothing else.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        qid : array-like of shape (n_samples,), default=None
            Accepted so that a ``Pipeline`` can route it, and checked (one query id per
            row), though not needed to fit.

        Returns
        -------
        self
        """
        self._check_parameters()
        if qid is not None:  # a wrong qid fails here, not at the transform of other rows; before X sets the width
            group_queries(qid, _num_samples(X), caller="QueryScaler.fit")
        # validated by a clone: scikit-learn sets the feature names before it checks the values
        checked = clone(self)
        checked._check_X(X, reset=True)
        take_input_attributes(self, checked)
        return self

    def transform(self, X: object, qid: object = None) -> np.ndarray:
        """Normalise ``X`` within the queries ``qid``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        qid : array-like of shape (n_samples,)
            Query id of each row, any order. Required.

        Returns
        -------
        ndarray of shape (n_samples, n_features * (1 + len(query_features))), float64
        """
        check_is_fitted(self)
        self._check_parameters()
        X = self._check_X(X, reset=False)
        if qid is None:
            routing = sklearn.get_config()["enable_metadata_routing"]
            raise ValueError(
                "QueryScaler normalises each feature within each query: transform needs qid=<one query id per row> "
                + (
                    "(metadata routing is on: pass qid to fit, predict and score; a fitted search's predict and "
                    "cross_val_predict pass none to predict: call search.best_estimator_.predict(X, qid=qid), or "
                    "predict fold by fold)."
                    if routing else
                    "(in a Pipeline, enable metadata routing: sklearn.set_config(enable_metadata_routing=True), and "
                    "pass qid to fit, predict and score)."
                )
            )  # fmt: skip
        groups = group_queries(qid, len(X), caller="QueryScaler.transform")
        grouped = groups.group(X)
        columns = [_normalised(grouped, groups, self.method)]
        columns += [_repeated(_query_statistic(grouped, groups, name), groups) for name in self.query_features]
        return groups.ungroup(np.hstack(columns))

    def fit_transform(self, X: object, y: object = None, qid: object = None) -> np.ndarray:
        """``fit(X, y, qid)`` then ``transform(X, qid)`` (``qid`` reaches both)."""
        return self.fit(X, y, qid).transform(X, qid)

    def get_feature_names_out(self, input_features: object = None) -> np.ndarray:
        """The normalised features' names, then ``<name>_query_<statistic>`` per statistic."""
        check_is_fitted(self)
        # scikit-learn's rule: the fit's names, or the given ones (checked against them)
        return self._names_out(_check_feature_names_in(self, input_features))

    def _names_out(self, input_names: object) -> np.ndarray:
        """:meth:`get_feature_names_out` of any names of the input columns, unchecked
        against the fit's: an export names a pipeline's features as its engine knows them
        (``serving/_query_scaler.scaled_feature_names``).

        Parameters
        ----------
        input_names : sequence of str of length n_features_in_

        Returns
        -------
        ndarray of shape (n_features_in_ * (1 + len(query_features)),), object
        """
        self._check_parameters()
        names = [str(name) for name in input_names]
        return np.array(names + [f"{name}_query_{statistic}" for statistic in self.query_features for name in names], dtype=object)

    def _check_parameters(self) -> None:
        """Refuse a bad ``method`` or ``query_features`` by name: at fit, and again where
        they are read (transform, the names out), since ``set_params`` may have changed them
        after the fit."""
        self._validate_params()
        unknown = [name for name in self.query_features if name not in QUERY_STATISTICS]
        if unknown:
            raise ValueError(f"query_features holds {unknown}; each must be one of {list(QUERY_STATISTICS)}.")
        repeated = sorted({name for name in self.query_features if list(self.query_features).count(name) > 1})
        if repeated:
            raise ValueError(f"query_features names {repeated} more than once; each statistic adds its columns once.")

    def _check_X(self, X: object, *, reset: bool) -> np.ndarray:
        if scipy.sparse.issparse(X):
            raise TypeError(
                "QueryScaler shifts every feature by a statistic of its query, which makes sparse X dense: pass "
                "X.toarray() (or scale the features that need it and keep the rest sparse)."
            )
        check_frame_dtypes(X)
        try:
            return validate_data(self, X, reset=reset, dtype=FLOAT_DTYPE, ensure_all_finite="allow-nan")
        except ValueError as error:
            hint = conversion_hint(error, X, split_on_categories=None)
            if hint is None:
                raise
            raise ValueError(f"{error}: {hint}.") from error

    def __sklearn_tags__(self):  # noqa: ANN204 (scikit-learn's Tags)
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def _reduce(function: np.ufunc, grouped: np.ndarray, groups: QueryGroups) -> np.ndarray:
    """``function.reduceat`` over each query's rows of ``grouped`` (n_samples, n_features):
    (n_queries, n_features)."""
    return function.reduceat(grouped, groups.query_boundaries[:-1], axis=0)


def _repeated(per_query: np.ndarray, groups: QueryGroups) -> np.ndarray:
    """A per-query (n_queries, n_features) array on every grouped row."""
    return np.repeat(per_query, groups.query_sizes(), axis=0)


def _magnitudes(grouped: np.ndarray, groups: QueryGroups) -> np.ndarray:
    """The binary exponent of each feature's largest absolute value in each query, int
    (n_queries, n_features) (0 where every value is 0 or missing). Values divided by
    ``2**exponent`` are below 1 in magnitude, so that their sums and differences cannot
    overflow; dividing by a power of two is exact (short of underflow), so the
    normalised values and the statistics scaled back are those of the raw values."""
    with np.errstate(invalid="ignore"):
        return np.frexp(np.nan_to_num(_reduce(np.fmax, np.abs(grouped), groups)))[1]


def _query_statistic(grouped: np.ndarray, groups: QueryGroups, name: str) -> np.ndarray:
    """A statistic of each feature over each query's present values (NaN where none is),
    float64 (n_queries, n_features)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if name == "max":
            return _reduce(np.fmax, grouped, groups)
        if name == "min":
            return _reduce(np.fmin, grouped, groups)
        exponents = _magnitudes(grouped, groups)
        return np.ldexp(_moment(np.ldexp(grouped, -_repeated(exponents, groups)), groups, name), exponents)


def _moment(grouped: np.ndarray, groups: QueryGroups, name: str) -> np.ndarray:
    """The mean (``name="mean"``) or the standard deviation of each feature over each
    query's present values, float64 (n_queries, n_features); values below 1 in magnitude
    (``_magnitudes``)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        present = ~np.isnan(grouped)
        counts = _reduce(np.add, present.astype(FLOAT_DTYPE), groups)
        mean = _reduce(np.add, np.where(present, grouped, 0.0), groups) / counts
        if name == "mean":
            return mean
        deviations = np.where(present, grouped - _repeated(mean, groups), 0.0)
        return np.sqrt(_reduce(np.add, deviations**2, groups) / counts)


def _normalised(grouped: np.ndarray, groups: QueryGroups, method: str) -> np.ndarray:
    """The features normalised within each query (``QueryScaler.method``), grouped rows."""
    if method == "rank":
        return _query_ranks(grouped, groups)
    grouped = np.ldexp(grouped, -_repeated(_magnitudes(grouped, groups), groups))  # (x - low) / scale: unchanged
    smallest = _repeated(_query_statistic(grouped, groups, "min"), groups)
    spread = _repeated(_query_statistic(grouped, groups, "max"), groups) - smallest
    if method == "minmax":
        low, scale = smallest, spread
    else:
        low = _repeated(_query_statistic(grouped, groups, "mean"), groups)
        scale = _repeated(_query_statistic(grouped, groups, "std"), groups)
    varies = spread > 0.0  # a constant's std may round to 1e-17, not to 0
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = np.where(varies, (grouped - low) / np.where(varies, scale, 1.0), 0.0)
    return np.where(np.isnan(grouped), np.nan, scaled)


def _query_ranks(grouped: np.ndarray, groups: QueryGroups) -> np.ndarray:
    """Each value's mean rank among its query's present values, scaled to [0, 1]."""
    query = groups.grouped_query_index()
    ranks = np.full(grouped.shape, np.nan)
    for feature in range(grouped.shape[1]):
        values = grouped[:, feature]
        present = np.flatnonzero(~np.isnan(values))
        if len(present) == 0:  # missing everywhere: its ranks stay missing
            continue
        order = present[np.lexsort((values[present], query[present]))]  # by query, then value
        keys_differ = (np.diff(query[order]) != 0) | (np.diff(values[order]) != 0)
        run_starts = np.concatenate(([0], np.flatnonzero(keys_differ) + 1))
        run_sizes = np.diff(np.concatenate((run_starts, [len(order)])))
        sizes = np.bincount(query[present], minlength=groups.n_queries)  # present values per query
        query_start = np.concatenate(([0], np.cumsum(sizes)))[query[order]]
        first_rank = run_starts - query_start[run_starts]  # 0-based rank of a tie run's first value
        mean_rank = np.repeat(first_rank + (run_sizes - 1) / 2.0, run_sizes)
        spread = (sizes[query[order]] - 1).astype(FLOAT_DTYPE)
        ranks[order, feature] = np.divide(mean_rank, spread, out=np.zeros(len(order)), where=spread > 0)
    return ranks
