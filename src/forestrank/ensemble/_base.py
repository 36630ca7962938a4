"""The ranking contract every forestrank estimator follows (ARCHITECTURE.md §1).

``fit(X, y, qid=None, sample_weight=None)`` takes rows in any order with one query id
per row; :meth:`BaseRanker._validate_training_data` validates everything once and
hands the estimator the rows grouped by query (stable sort) together with the
:class:`~forestrank._queries.QueryGroups` needed to map results back to the caller's
order. ``predict`` scores rows independently; ``score`` is mean NDCG@10 under the
package's default convention.

The class attributes ``__metadata_request__fit/score = {"qid": True}`` make
scikit-learn's metadata routing pass ``qid`` to ``fit`` and ``score`` inside
Pipelines, ``cross_validate`` and ``GridSearchCV`` without ``set_*_request`` calls.
"""

from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from .._common import FLOAT_DTYPE
from .._queries import QueryGroups, group_queries
from .._validation import check_relevance, check_sample_weight
from ..metrics._ranking import evaluate


class RankingData(NamedTuple):
    """Validated training data with rows grouped by query.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), float64
        Relevance labels (integer-valued when the estimator requires grades).
    sample_weight : ndarray of shape (n_samples,), float64, or None
    groups : QueryGroups
        Query layout; ``groups.ungroup`` restores the caller's row order.
    """

    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray | None
    groups: QueryGroups


class BaseRanker(BaseEstimator):
    """Base class of forestrank rankers: validation, query grouping and scoring.

    Subclasses implement ``fit`` (calling :meth:`_validate_training_data`) and
    ``predict`` (calling :meth:`_validate_prediction_data`). Set
    ``_requires_grades = True`` when the estimator counts integer grades.
    """

    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}
    _requires_grades = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.target_tags.positive_only = True
        return tags

    def _validate_training_data(
        self, X: object, y: object, qid: object, sample_weight: object
    ) -> RankingData:
        """Validate fit inputs, set ``n_features_in_`` (and ``feature_names_in_``), group rows by query.

        Inputs are never modified; grouped arrays are copies unless the rows were
        already grouped.
        """
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        X = validate_data(self, X, reset=True, dtype=FLOAT_DTYPE)
        n_samples = X.shape[0]
        labels = check_relevance(y, name="y", n_samples=n_samples, grades=self._requires_grades)
        weights = None if sample_weight is None else check_sample_weight(sample_weight, n_samples=n_samples)
        groups = group_queries(qid, n_samples, caller=f"{type(self).__name__}.fit")
        return RankingData(
            X=groups.group(X),
            y=groups.group(labels),
            sample_weight=None if weights is None else groups.group(weights),
            groups=groups,
        )

    def _validate_prediction_data(self, X: object) -> np.ndarray:
        """Check the estimator is fitted and ``X`` matches the training features."""
        check_is_fitted(self)
        return validate_data(self, X, reset=False, dtype=FLOAT_DTYPE)

    def score(self, X: object, y: object, qid: object = None) -> float:
        """Mean NDCG@10 of ``predict(X)`` over the queries in ``qid``.

        Default convention: gain ``2**y - 1``, discount ``1/log2(rank + 1)``,
        expectation over tied scores, 0 for queries without a relevant document
        (see ``docs/metrics.md``). Warns when ``qid`` is None.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Relevance labels.
        qid : array-like of shape (n_samples,), default=None
            Query id of each row.

        Returns
        -------
        float
        """
        scores = self.predict(X)
        labels = check_relevance(y, name="y", n_samples=len(scores))
        return evaluate("ndcg", labels, scores, qid, 10, conventions={}, caller=f"{type(self).__name__}.score")
