"""Scikit-learn scorers for ranking metrics that request ``qid`` through metadata routing.

With ``sklearn.set_config(enable_metadata_routing=True)``, ``GridSearchCV`` and
``cross_validate`` hand each scorer the ``qid`` of the rows it scores, because the
scorer declares ``qid`` as requested in :meth:`RankingScorer.get_metadata_routing`
(no ``set_score_request`` call needed). Without routing the scorer receives no
``qid``, treats the whole fold as one query and says so with a
:class:`~forestrank.MissingQidWarning`.

With routing on, ``sample_weight`` is left unrequested, as scikit-learn leaves it for its
own scorers: a search handed weights raises ``UnsetMetadataPassedError`` until the scorer
says whether it weighs queries by them (``set_score_request(sample_weight=True)``, as
``score`` does) or not (``False``). Without routing a search of scikit-learn 1.7 or
later hands the ranking scorers the weights given to its ``fit`` (and no ``qid``). The
binary metrics take no weights and refuse the request.
"""

import warnings
from collections.abc import Callable
from numbers import Real

import numpy as np
import sklearn
from sklearn.utils.metadata_routing import MetadataRequest, get_routing_for_object

from ._binary import auc_score, partial_auc_score, precision_at_5
from ._conventions import resolve_convention
from .._input.labels import check_max_grade
from ._ranking import _check_cutoff, evaluate

_SCORABLE = ("ndcg", "err", "map")


def predict_with_qid(estimator: object, X: object, qid: object) -> np.ndarray:
    """``estimator.predict(X)``, with ``qid=qid`` when metadata routing is on and the
    estimator's ``predict`` consumes ``qid`` (a step that normalises within queries). A
    fitted scikit-learn search, whose ``predict`` routes no metadata, has its
    ``best_estimator_`` (what its ``predict`` calls) predict with ``qid`` where that one
    consumes it: a search over a ``QueryScaler`` pipeline, scored in nested
    cross-validation."""
    if qid is not None and sklearn.get_config()["enable_metadata_routing"]:
        if _predict_consumes_qid(estimator):
            return estimator.predict(X, qid=qid)
        best = getattr(estimator, "best_estimator_", None)  # a search without refit has no predict
        if best is not None and hasattr(estimator, "predict") and _predict_consumes_qid(best):
            return best.predict(X, qid=qid)
    return estimator.predict(X)


def _predict_consumes_qid(estimator: object) -> bool:
    return "qid" in get_routing_for_object(estimator).consumes("predict", ["qid"])


class _QidScorer:
    """A scorer that requests ``qid`` through scikit-learn's metadata routing, and
    ``sample_weight`` where its metric weighs queries (``takes_sample_weight``) and the
    user asks for it."""

    takes_sample_weight = False

    def set_score_request(self, **requests: bool | str | None) -> "_QidScorer":
        """Set which metadata the scorer requests (scikit-learn metadata routing).

        Parameters
        ----------
        **requests : bool, str or None
            ``qid=`` and ``sample_weight=``: True (requested), False (not requested),
            None (unset: a search passing it raises) or an alias, as in scikit-learn's
            ``set_score_request``; each call sets the requests it names and keeps the
            others (``qid`` stays requested).

        Returns
        -------
        self
        """
        if not sklearn.get_config()["enable_metadata_routing"]:
            raise RuntimeError(
                "set_score_request is only available when metadata routing is enabled: "
                "sklearn.set_config(enable_metadata_routing=True)."
            )
        accepted = ("qid", "sample_weight") if self.takes_sample_weight else ("qid",)
        for param, alias in requests.items():
            if param not in accepted:
                raise ValueError(
                    f"{self!r} requests {' and '.join(accepted)} only; got {param}={alias!r}"
                    + (" (the binary metrics take no weights)." if param == "sample_weight" else ".")
                )
            MetadataRequest(owner=self).score.add_request(param=param, alias=alias)  # scikit-learn checks the alias
        self._requests = {**self._score_requests(), **requests}
        return self

    def _accept_sample_weight(self) -> bool:
        """Whether the scorer takes ``sample_weight`` (asked by scikit-learn's searches and
        multi-metric scoring of every scorer when routing is off)."""
        return self.takes_sample_weight

    def _score_requests(self) -> dict:
        """The requested metadata and their aliases: ``qid`` requested, ``sample_weight``
        unset, until ``set_score_request`` says otherwise."""
        defaults = {"qid": True, "sample_weight": None} if self.takes_sample_weight else {"qid": True}
        return getattr(self, "_requests", defaults)

    def get_metadata_routing(self) -> MetadataRequest:
        """Request ``qid`` (and, once set, ``sample_weight``) for scoring (scikit-learn
        metadata routing)."""
        request = MetadataRequest(owner=self)
        for param, alias in self._score_requests().items():
            request.score.add_request(param=param, alias=alias)
        return request


class RankingScorer(_QidScorer):
    """Callable ``scorer(estimator, X, y_true, qid=None, sample_weight=None)`` for a
    ranking metric.

    Build it with :func:`ndcg_scorer`, :func:`err_scorer` or :func:`map_scorer`. With
    ``sample_weight`` each query weighs in the mean by its rows' mean weight, as in the
    rankers' ``score``; under metadata routing a search hands it the weights after
    ``set_score_request(sample_weight=True)``.

    Parameters
    ----------
    metric : {"ndcg", "err", "map"}
        The metric.
    k : int or None
        Cutoff.
    max_grade : float or None
        ERR's ``g_max`` (ERR only).
    **conventions
        ``convention``, ``gain``, ``ties``, ``no_relevant`` as in the metric functions;
        ``None`` means the metric's default.
    """

    def __init__(self, metric: str, k: int | None, *, max_grade: float | None = None, **conventions: object) -> None:
        if metric not in _SCORABLE:
            raise ValueError(f"metric must be one of {list(_SCORABLE)}; got {metric!r}.")
        if max_grade is not None and metric != "err":
            raise ValueError(f"max_grade applies to ERR only; got it for {metric!r}.")
        check_max_grade(max_grade, None, None)  # the labels come later
        resolve_convention(metric, **conventions)  # fail now on bad options, not in the middle of a search
        self.metric = metric
        self.k = _check_cutoff(k)
        self.max_grade = max_grade
        self.conventions = {name: value for name, value in conventions.items() if value is not None}

    takes_sample_weight = True

    def __call__(
        self, estimator: object, X: object, y_true: object, qid: object = None, sample_weight: object = None
    ) -> float:  # fmt: skip
        """Score ``estimator.predict(X)`` against ``y_true``, grouped by ``qid`` (which
        ``predict`` also gets where it asks for it: a ``Pipeline`` with a ``QueryScaler``),
        each query weighted by the mean of its rows' ``sample_weight`` when given."""
        return evaluate(
            self.metric,
            y_true,
            predict_with_qid(estimator, X, qid),
            qid,
            self.k,
            conventions=self.conventions,
            max_grade=self.max_grade,
            caller=repr(self),
            sample_weight=sample_weight,
        )

    def __repr__(self) -> str:
        options = dict(self.conventions)
        if self.max_grade is not None:
            options["max_grade"] = self.max_grade
        text = "".join(f", {name}={value!r}" for name, value in options.items())
        return f"{self.metric}_scorer(k={self.k!r}{text})"


def ndcg_scorer(
    k: int | None = 10,
    *,
    gain: object = None,
    ties: str | None = None,
    no_relevant: float | str | None = None,
    convention: str | None = None,
) -> RankingScorer:
    """Scorer for mean NDCG@k (see :func:`forestrank.metrics.ndcg_score` for the options)."""
    return RankingScorer("ndcg", k, gain=gain, ties=ties, no_relevant=no_relevant, convention=convention)


def err_scorer(
    k: int | None = 10,
    *,
    max_grade: float | None = None,
    gain: object = None,
    ties: str | None = None,
    no_relevant: float | str | None = None,
    convention: str | None = None,
) -> RankingScorer:
    """Scorer for mean ERR@k (see :func:`forestrank.metrics.err_score`).

    Pass the dataset's ``max_grade``: each test fold's own maximum label can differ.
    """
    return RankingScorer(
        "err", k, max_grade=max_grade, gain=gain, ties=ties, no_relevant=no_relevant, convention=convention
    )


def map_scorer(
    k: int | None = None,
    *,
    ties: str | None = None,
    no_relevant: float | str | None = None,
    convention: str | None = None,
) -> RankingScorer:
    """Scorer for MAP (see :func:`forestrank.metrics.map_score`)."""
    return RankingScorer("map", k, ties=ties, no_relevant=no_relevant, convention=convention)


class BinaryScorer(_QidScorer):
    """Callable ``scorer(estimator, X, y_true, qid=None)`` for a binary metric of
    ``forestrank.metrics`` (AUC, partial AUC, PREC@5; Mohan's thesis §6.2).

    Build it with :func:`auc_scorer`, :func:`partial_auc_scorer` or
    :func:`precision_at_5_scorer`; the options are checked on a tiny example at
    construction, so a bad one fails before a search starts. The binary metrics take no
    ``sample_weight``: the scorer does not request it.
    """

    def __init__(self, function: Callable, **options: object) -> None:
        threshold = options.get("relevant_threshold", 1)
        grades = np.array([0.0, 5.0])  # an irrelevant and a relevant grade, whatever a numeric threshold
        if isinstance(threshold, Real) and not isinstance(threshold, bool) and 0 < threshold < np.inf:
            grades = np.array([max(0.0, threshold - 1), max(5.0, threshold)])
        with warnings.catch_warnings():  # a threshold at or below 0 leaves no query to average
            warnings.simplefilter("ignore")
            function(grades, np.array([0.0, 1.0]), np.array([0, 0]), **options)
        self.function = function
        self.options = options

    def __call__(self, estimator: object, X: object, y_true: object, qid: object = None) -> float:
        """Score ``estimator.predict(X)`` against ``y_true``, grouped by ``qid`` (which
        ``predict`` also gets where it asks for it)."""
        return self.function(y_true, predict_with_qid(estimator, X, qid), qid, **self.options)

    def __repr__(self) -> str:
        text = ", ".join(f"{name}={value!r}" for name, value in self.options.items())
        return f"{self.function.__name__.removesuffix('_score')}_scorer({text})"


def auc_scorer(*, relevant_threshold: float = 1, average: str = "query", ties: str = "expected") -> BinaryScorer:
    """Scorer for AUC (see :func:`forestrank.metrics.auc_score`)."""
    return BinaryScorer(auc_score, relevant_threshold=relevant_threshold, average=average, ties=ties)


def partial_auc_scorer(
    *, max_fpr: float = 0.05, normalization: str = "thesis", relevant_threshold: float = 1, average: str = "query",
    ties: str = "expected",
) -> BinaryScorer:  # fmt: skip
    """Scorer for partial AUC (see :func:`forestrank.metrics.partial_auc_score`)."""
    return BinaryScorer(
        partial_auc_score, max_fpr=max_fpr, normalization=normalization, relevant_threshold=relevant_threshold,
        average=average, ties=ties,
    )  # fmt: skip


def precision_at_5_scorer(*, relevant_threshold: float = 1, ties: str = "expected") -> BinaryScorer:
    """Scorer for PREC@5 (see :func:`forestrank.metrics.precision_at_5`)."""
    return BinaryScorer(precision_at_5, relevant_threshold=relevant_threshold, ties=ties)
