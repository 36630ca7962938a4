"""Scores comparable across queries: a ranker's scores mapped to a probability of relevance.

A ranker's score only orders the documents of one query: a score of 2.3 may be the best
of one query and the worst of another, so no threshold on it means "a good match"
everywhere. Calibration fits, on queries the ranker did not see, a monotone map from its
score to the probability that a document is relevant (Platt, "Probabilistic outputs for
support vector machines", 1999: a logistic function of the score; Zadrozny & Elkan,
"Transforming classifier scores into accurate multiclass probability estimates", KDD
2002: isotonic regression) or to its expected grade. The map is non-decreasing, so the
calibrated values never reverse two documents; ``predict`` keeps the ranker's own scores,
so every ranking, and every ranking metric, stays exactly as it was.
"""

import inspect
import warnings
from collections.abc import Iterator
from numbers import Integral, Real

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.utils import _safe_indexing, get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import _num_samples, check_is_fitted

from ._input.features import rows_for
from ._input.labels import as_real_array, check_relevance
from ._input.queries import check_qid, stacklevel_outside_package
from .ensemble._base import check_in_memory, fit_atomically, ranker_gain, refuse_bool_numbers
from .metrics._ranking import evaluate
from .metrics._scorer import predict_with_qid
from .model_selection import QueryKFold
from .parallel._cluster import is_dask_collection, map_predict


class CalibratedRanker(MetaEstimatorMixin, BaseEstimator):
    """A ranker whose scores also map to the probability of relevance or the expected grade.

    ``fit`` scores every training query with a copy of ``estimator`` fitted without
    it (cross-fitting over ``cv`` folds of queries), fits the calibration map from those
    held-out scores to the labels, then fits ``estimator`` on all the queries.

    Parameters
    ----------
    estimator : ranker
        Any ranker with ``fit(X, y, qid=...)`` and ``predict(X)``, or a ``Pipeline``
        ending in one (with metadata routing on, ``qid`` reaches its steps).
    method : {"isotonic", "sigmoid"}, default="isotonic"
        ``"isotonic"``: a non-decreasing step function (Zadrozny & Elkan 2002), for
        enough held-out documents (a few thousand); ``"sigmoid"``: Platt's logistic
        function of the score (Platt 1999, with his smoothed targets), two
        parameters, for little data and ``target="probability"`` only.
    target : {"probability", "grade"}, default="probability"
        ``"probability"``: ``P(y >= relevant_grade)``; ``"grade"``: the expected
        grade.
    relevant_grade : float, default=1
        The lowest grade that counts as relevant for ``target="probability"``: a
        finite number. ``target="grade"`` does not use it (another value warns).
    cv : int or splitter, default=5
        Folds of queries for the held-out scores: an int is ``QueryKFold(cv)``, or a
        splitter that keeps queries whole, given the query ids as ``qid`` or, where its
        ``split`` takes ``groups`` instead (``GroupKFold``), as ``groups``; a fold that
        splits a query is refused.

    Attributes
    ----------
    estimator_ : ranker
        ``estimator`` fitted on every training query.
    calibrator_ : IsotonicRegression or LogisticRegression
        The map from scores to the calibrated values.
    score_range_ : tuple of two floats
        The smallest and the largest finite held-out score. An infinite score (a
        ``DummyRanker``'s for a missing value, ranked last) is read as the one at its end
        of this range, when the map is fitted and when it is applied.
    n_features_in_ : int
        Features of ``estimator_``.
    feature_names_in_ : ndarray of shape (n_features,), object
        Its feature names, when it was fitted on a DataFrame.

    Examples
    --------
    >>> from forestrank import CalibratedRanker, LambdaMART, make_ranking
    >>> X, y, qid = make_ranking(n_queries=60, random_state=0)
    >>> model = CalibratedRanker(LambdaMART(n_estimators=10), cv=3).fit(X, y, qid=qid)
    >>> probabilities = model.predict_relevance(X[:3])  # P(grade >= 1), comparable across queries
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"])],
        "method": [StrOptions({"isotonic", "sigmoid"})],
        "target": [StrOptions({"probability", "grade"})],
        "relevant_grade": [Interval(Real, None, None, closed="neither")],
        "cv": [Interval(Integral, 2, None, closed="left"), HasMethods(["split"])],
    }
    __metadata_request__fit = {"qid": True}
    __metadata_request__predict = {"qid": True}
    __metadata_request__score = {"qid": True}

    def __init__(
        self, estimator: object, *, method: str = "isotonic", target: str = "probability", relevant_grade: float = 1,
        cv: object = 5,
    ) -> None:  # fmt: skip
        self.estimator = estimator
        self.method = method
        self.target = target
        self.relevant_grade = relevant_grade
        self.cv = cv

    def __sklearn_tags__(self):
        # the rows go to the ranker as given: it says what input it takes
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator).input_tags
        tags.target_tags.required = True
        tags.target_tags.positive_only = True
        tags.input_tags.allow_nan = inner.allow_nan
        tags.input_tags.sparse = inner.sparse
        return tags

    @fit_atomically
    def fit(self, X: object, y: object, qid: object = None) -> "CalibratedRanker":
        """Cross-fit held-out scores, fit the calibration map on them, fit the ranker on all rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Relevance grades.
        qid : array-like of shape (n_samples,)
            Query id of each row (required: the folds keep queries whole).

        Returns
        -------
        self
        """
        self._validate_params()
        refuse_bool_numbers(self)
        check_in_memory(self, X)  # its folds index rows in memory
        if self.method == "sigmoid" and self.target == "grade":
            raise ValueError(
                "method='sigmoid' (Platt) maps scores to a probability; target='grade' needs method='isotonic'."
            )
        if self.target == "grade" and self.relevant_grade != 1:
            warnings.warn(
                f"relevant_grade={self.relevant_grade!r} is used only with target='probability'; target='grade' "
                "calibrates the expected grade and ignores it.",
                UserWarning,
                stacklevel=stacklevel_outside_package(),
            )
        if scipy.sparse.issparse(X) and X.format not in ("csr", "csc"):  # the folds index rows, which COO, DIA, BSR cannot
            X = X.tocsr()
        n_samples = _num_samples(X)
        if qid is None:
            raise ValueError("CalibratedRanker.fit needs qid=<one query id per row>: its folds keep queries whole.")
        qid = check_qid(qid, n_samples)
        y = check_relevance(y, name="y", n_samples=n_samples, warn_column=True)
        relevant = y >= self.relevant_grade
        if self.target == "probability" and (relevant.all() or not relevant.any()):
            raise ValueError(
                f"relevant_grade={self.relevant_grade!r} makes every row {'relevant' if relevant.all() else 'irrelevant'} "
                f"(y holds grades {y.min():g} to {y.max():g}): a probability of relevance needs rows on both sides; "
                "give a grade above the lowest and at most the highest."
            )
        splitter = QueryKFold(self.cv) if isinstance(self.cv, Integral) else self.cv
        held_out = np.full(n_samples, np.nan)
        times_tested = np.zeros(n_samples, dtype=np.int64)
        for train, test in _query_folds(splitter, X, y, qid):
            np.add.at(times_tested, test, 1)
            if times_tested.max() > 1:  # a later fold's score would replace an earlier one's
                raise ValueError(
                    "cv put some rows in the test rows of two folds; every row needs one held-out score: give a "
                    "splitter whose test folds partition the rows (QueryKFold, GroupKFold)."
                )
            member = clone(self.estimator).fit(_safe_indexing(X, train), y[train], qid=qid[train])
            held_out[test] = predict_with_qid(member, _safe_indexing(X, test), qid[test])
        if (times_tested == 0).any():
            raise ValueError("cv left some rows out of every test fold; every row needs a held-out score.")
        if np.isnan(held_out).any():
            raise ValueError("the ranker's held-out scores hold NaN; a ranker's scores are numbers (-inf ranks last).")
        finite = held_out[np.isfinite(held_out)]
        if not len(finite):
            raise ValueError("every held-out score of the ranker is infinite: there is no scale to calibrate.")
        self.score_range_ = (float(finite.min()), float(finite.max()))
        targets = y if self.target == "grade" else relevant.astype(float)
        self.calibrator_ = self._calibrator(self._finite(held_out), targets)
        self.estimator_ = clone(self.estimator).fit(X, y, qid=qid)
        self.n_features_in_ = getattr(self.estimator_, "n_features_in_", None)
        vars(self).pop("feature_names_in_", None)  # a refit on an array has none
        if hasattr(self.estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.estimator_.feature_names_in_
        return self

    def _nested_estimators(self) -> list[tuple[str, object]]:
        """The fitted ranker whose scores ``predict`` returns (``ensemble/_costs.nested_models``:
        as a boosted model's ``init``, its trees' features are paid for)."""
        return [("estimator_", self.estimator_)] if hasattr(self, "estimator_") else []

    def _finite(self, scores: np.ndarray) -> np.ndarray:
        """``scores`` (float64, 1-D) with each infinity replaced by its end of
        ``score_range_``; finite scores as they are."""
        low, high = self.score_range_
        return np.where(np.isneginf(scores), low, np.where(np.isposinf(scores), high, scores))

    def _calibrator(self, scores: np.ndarray, targets: np.ndarray) -> object:
        if self.method == "sigmoid":
            return _platt(scores, targets)
        low, high = float(targets.min()), float(targets.max())
        return IsotonicRegression(y_min=low, y_max=high, out_of_bounds="clip").fit(scores, targets)

    def predict(self, X: object, qid: object = None) -> np.ndarray:
        """The ranker's own scores (the ranking, unchanged), float64 of shape (n_samples,);
        ``qid`` reaches the ranker's ``predict`` where it asks for it (a ``Pipeline`` with a
        ``QueryScaler``, under metadata routing)."""
        check_is_fitted(self)
        return predict_with_qid(self.estimator_, rows_for(self.estimator_, X), qid)

    def predict_relevance(self, X: object, qid: object = None) -> np.ndarray:
        """The calibrated values: ``P(y >= relevant_grade)`` or the expected grade,
        comparable across queries; float64 of shape (n_samples,). For a Dask collection,
        mapped over its partitions (lazy, as ``predict``)."""
        if is_dask_collection(X):
            return map_predict(self, X, qid, method="predict_relevance")
        return self.calibrate(self.predict(X, qid))

    def calibrate(self, scores: np.ndarray) -> np.ndarray:
        """The calibration map applied to scores of ``estimator_`` (a served model's, say)."""
        check_is_fitted(self)
        scores = as_real_array(scores, "scores")
        if scores.ndim != 1:
            raise ValueError(f"scores must be one score per document (1-D); got shape {scores.shape}.")
        if np.isnan(scores).any():
            raise ValueError("scores hold NaN; a ranker's scores are numbers (-inf ranks last).")
        scores = self._finite(scores)
        if self.method == "sigmoid":
            return self.calibrator_.predict_proba(scores[:, None])[:, 1]
        return self.calibrator_.predict(scores)

    def score(self, X: object, y: object, qid: object = None, sample_weight: object = None) -> float:
        """Mean NDCG@10 of ``predict(X)`` over the queries (the ranker's ranking, under its
        ``label_gain`` where it has one), each query weighted by the mean ``sample_weight`` of its rows when given, as the
        rankers' ``score``. Under metadata routing a ``Pipeline`` ending here routes
        ``sample_weight`` to it, which needs its ``score`` to take one."""
        scores = self.predict(X, qid)
        labels = check_relevance(y, name="y", n_samples=len(scores))
        gain = ranker_gain(self.estimator_)  # a forestrank ranker's label_gain, as its score uses it
        return evaluate(
            "ndcg", labels, scores, qid, 10, conventions={} if gain is None else {"gain": gain},
            caller="CalibratedRanker.score", sample_weight=sample_weight, against="X",
        )  # fmt: skip


def _query_folds(splitter: object, X: object, y: np.ndarray, qid: np.ndarray) -> Iterator[tuple]:
    """``splitter``'s (train, test) row indices, given the query ids as ``qid`` (forestrank's
    splitters) or as ``groups`` (scikit-learn's group splitters); refused when a fold puts
    a query's rows on both sides, or when ``split`` takes neither."""
    parameters = inspect.signature(splitter.split).parameters
    takes_any = any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values())
    if "qid" in parameters or takes_any:
        folds = splitter.split(X, y, qid=qid)
    elif "groups" in parameters:
        folds = splitter.split(X, y, groups=qid)
    else:
        raise ValueError(
            f"cv: {type(splitter).__name__}.split takes neither qid nor groups, so its folds cannot keep queries "
            "whole; give QueryKFold (or GroupKFold, which is given qid as its groups)."
        )
    for train, test in folds:
        if np.isin(qid[test], qid[train]).any():
            raise ValueError(
                f"cv: {type(splitter).__name__} put rows of one query in both a fold's training and test rows; give "
                "a splitter that keeps queries whole: QueryKFold, or GroupKFold (given qid as its groups)."
            )
        yield train, test


def _platt(scores: np.ndarray, targets: np.ndarray) -> LogisticRegression:
    """Platt's sigmoid of the scores (Platt 1999, §2.2): a logistic fit to the smoothed
    targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``, which keep its slope finite when
    the scores separate the two kinds; the soft targets enter as weights of each row
    counted once as relevant and once not.

    The solver sees the scores standardised: on scores of another scale or offset
    (1e-8 apart, or all near 1e8) its stopping rule met the tolerance at a flat start and
    returned a constant. The fitted slope and intercept are then put back on the scores'
    own scale, so that ``calibrator_`` reads the ranker's scores as they are.
    """
    n_relevant = float(targets.sum())
    n_other = len(targets) - n_relevant
    soft = np.where(targets > 0, (n_relevant + 1.0) / (n_relevant + 2.0), 1.0 / (n_other + 2.0))
    low, high = float(scores.min()), float(scores.max())
    center, half_range = low / 2 + high / 2, (high / 2 - low / 2) or 1.0  # halves: no overflow near float64's limit
    unit = (scores - center) / half_range
    mean, spread = float(unit.mean()), float(unit.std()) or 1.0
    standard = (unit - mean) / spread
    doubled = np.concatenate((standard, standard))[:, None]
    labels = np.concatenate((np.ones(len(scores)), np.zeros(len(scores))))
    platt = LogisticRegression(C=np.inf, tol=1e-12, max_iter=1000)  # two parameters: solve them to the end
    platt.fit(doubled, labels, sample_weight=np.concatenate((soft, 1.0 - soft)))
    weight = float(platt.coef_[0, 0])
    slope = weight / (half_range * spread)
    platt.coef_ = np.array([[slope]])
    platt.intercept_ = platt.intercept_ - slope * center - weight * mean / spread
    return platt


def expected_calibration_error(y_true: object, probabilities: object, n_bins: int = 10) -> float:
    """The expected calibration error: over ``n_bins`` equal-width bins of the predicted
    probability, the mean ``|mean prediction - observed frequency|`` weighted by the bin's
    share of the documents (Naeini, Cooper & Hauskrecht, AAAI 2015, Eq. 3).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        1 for a relevant document, 0 otherwise.
    probabilities : array-like of shape (n_samples,)
        Predicted probabilities, in [0, 1].
    n_bins : int, default=10

    Returns
    -------
    float
    """
    if isinstance(n_bins, bool) or not (isinstance(n_bins, Integral) and n_bins >= 1):
        raise ValueError(f"n_bins must be an integer >= 1; got {n_bins!r}.")
    y_true = np.asarray(y_true, dtype=float)
    probabilities = np.asarray(probabilities, dtype=float)
    for name, values in (("y_true", y_true), ("probabilities", probabilities)):
        if values.ndim != 1:
            raise ValueError(f"{name} must be one value per document (1-D); got shape {values.shape}.")
    if not np.isin(y_true, (0.0, 1.0)).all():
        raise ValueError("y_true must hold 1 for a relevant document and 0 otherwise; it holds other values.")
    if not np.isfinite(probabilities).all():
        raise ValueError("probabilities must be finite numbers in [0, 1]; they hold NaN or inf.")
    if len(y_true) != len(probabilities):
        raise ValueError(f"y_true has {len(y_true)} entries and probabilities {len(probabilities)}; they must match.")
    if len(probabilities) and (probabilities.min() < 0.0 or probabilities.max() > 1.0):
        raise ValueError("probabilities must lie in [0, 1].")
    bins = np.minimum((probabilities * n_bins).astype(int), n_bins - 1)
    predicted = np.bincount(bins, weights=probabilities, minlength=n_bins)
    observed = np.bincount(bins, weights=y_true, minlength=n_bins)
    return float(np.abs(predicted - observed).sum() / max(len(y_true), 1))
