"""Baseline rankers that ignore all but at most one feature.

Every ranking result needs a floor to be read against. ``DummyRanker`` gives two:
``strategy="constant"`` scores every document the same, which under the default
``ties="expected"`` metric convention is exactly the expected quality of a random
ranking; ``strategy="best_feature"`` ranks by the single feature (and direction)
with the best training NDCG@k, the classic LETOR single-feature baseline (BM25,
PageRank, ...).
"""

import warnings
from numbers import Integral

import numpy as np
import scipy.sparse
from sklearn.utils._param_validation import Interval, StrOptions

from ._numba.dtypes import FLOAT_DTYPE
from ._input.features import dense_column
from ._input.queries import stacklevel_outside_package
from .ensemble._base import BaseRanker, fit_atomically
from .metrics._conventions import resolve_convention
from .metrics._ranking import evaluate_grouped
from .parallel._cluster import is_dask_collection, map_predict


class DummyRanker(BaseRanker):
    """Ranker that uses no feature, or only the most useful single feature.

    Parameters
    ----------
    strategy : {"best_feature", "constant"}, default="best_feature"
        ``"constant"``: every document scores 0. ``"best_feature"``: score by
        ``sign * X[:, j]`` (a missing value, NaN, scores ``-inf``: it ranks last)
        for the feature ``j`` and sign with the highest mean
        training NDCG@k (default convention, queries weighted by the mean
        ``sample_weight`` of their rows, as LightGBM weights queries); ties go to the
        lowest feature index, then to the positive sign.
    k : int, default=10
        Cutoff of the NDCG used to choose the feature (``"best_feature"`` only: with
        ``"constant"`` another value warns that it is ignored).

    Attributes
    ----------
    feature_ : int or None
        Chosen column (``None`` for ``"constant"``).
    feature_sign_ : float or None
        ``+1.0`` or ``-1.0``.
    train_score_ : float or None
        Weighted mean training NDCG@k of the chosen feature.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        Only when ``X`` had string column names.

    Examples
    --------
    >>> from forestrank import DummyRanker, make_ranking
    >>> X, y, qid = make_ranking(n_queries=30, random_state=0)
    >>> ranker = DummyRanker().fit(X, y, qid=qid)
    >>> round(ranker.score(X, y, qid=qid), 3) == round(ranker.train_score_, 3)
    True
    """

    _parameter_constraints = {
        "strategy": [StrOptions({"best_feature", "constant"})],
        "k": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, strategy: str = "best_feature", k: int = 10) -> None:
        self.strategy = strategy
        self.k = k

    @fit_atomically
    def fit(self, X: object, y: object, qid: object = None, sample_weight: object = None) -> "DummyRanker":
        """Choose the scoring rule.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Relevance labels (>= 0).
        qid : array-like of shape (n_samples,), default=None
            Query id of each row, any order; ``None`` means one query (warns).
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights; a query weighs the mean of its rows' weights.

        Returns
        -------
        self
        """
        self._validate_params()
        data = self._validate_training_data(X, y, qid, sample_weight)
        self.feature_ = self.feature_sign_ = self.train_score_ = None
        if self.strategy == "constant":
            if self.k != 10:
                warnings.warn(
                    f"k={self.k} is the cutoff that strategy='best_feature' chooses its feature by; "
                    "strategy='constant' chooses nothing and ignores it.",
                    UserWarning,
                    stacklevel=stacklevel_outside_package(),
                )
            return self

        boundaries = data.groups.query_boundaries
        query_weights = None
        if data.sample_weight is not None:
            query_weights = data.groups.query_means(data.sample_weight)
        convention = resolve_convention("ndcg")
        best = -np.inf
        columns = data.X.tocsc() if scipy.sparse.issparse(data.X) else data.X  # a sparse X read by column
        for feature in range(data.X.shape[1]):
            column = dense_column(columns, feature)
            for sign in (1.0, -1.0):
                values = evaluate_grouped(data.y, _feature_scores(column, sign), boundaries, convention, self.k)
                mean = np.average(values, weights=query_weights)
                if mean > best:
                    best, self.feature_, self.feature_sign_ = mean, feature, sign
        self.train_score_ = float(best)
        return self

    def predict(self, X: object) -> np.ndarray:
        """Score documents (higher ranks first).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,), float64
            For a Dask collection, mapped over its partitions (lazy,
            ``parallel._cluster.map_predict``).
        """
        if is_dask_collection(X):
            return map_predict(self, X)
        X = self._validate_prediction_data(X)
        if self.feature_ is None:  # the fitted strategy, not the parameter: set_params after fit changes nothing
            return np.zeros(X.shape[0])
        return _feature_scores(dense_column(X, self.feature_), self.feature_sign_)


def _feature_scores(column: np.ndarray, sign: float) -> np.ndarray:
    """``sign * column``, with ``-inf`` for a missing value: a document without the feature ranks last."""
    return np.where(np.isnan(column), -np.inf, sign * column.astype(FLOAT_DTYPE))
