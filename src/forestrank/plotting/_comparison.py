"""Per-query NDCG of two models against each other, with the paired tests that
``forestrank compare`` prints (scikit-learn's ``Display`` objects)."""

import numpy as np

from ..metrics import describe_metric, ndcg_score
from ..metrics._scorer import predict_with_qid
from ..stats import paired_tests_of_scored_queries
from ._axes import axes_or_new


class QueryComparisonDisplay:
    """Per-query NDCG@k of system B against system A: one point per query, the diagonal
    where they tie, and the paired t-test and Wilcoxon signed-rank test of B - A.

    Build it with :meth:`from_estimators` or :meth:`from_predictions` (or
    :func:`plot_query_comparison`), which compute and draw; ``plot`` draws again.

    Parameters
    ----------
    per_query_a, per_query_b : ndarray of shape (n_queries,)
        NDCG@k of each query (sorted by query id), NaN for a query the convention skips.
    name_a, name_b : str
    metric_name : str
        The metric and its convention (``describe_metric``), for the axes' labels.

    Attributes
    ----------
    t_test, wilcoxon : PairedTestResult
        The paired tests of B against A over the queries both score (``stats.paired_test``).
    ax_, figure_ : matplotlib Axes and Figure, once drawn
    points_ : matplotlib PathCollection, once drawn
        The queries' points (``points_.get_offsets()``: A's values, B's values).
    """

    def __init__(self, per_query_a: np.ndarray, per_query_b: np.ndarray, *, name_a: str, name_b: str, metric_name: str) -> None:
        self.per_query_a = np.asarray(per_query_a, dtype=np.float64)
        self.per_query_b = np.asarray(per_query_b, dtype=np.float64)
        self.name_a, self.name_b, self.metric_name = name_a, name_b, metric_name
        self.t_test, self.wilcoxon = paired_tests_of_scored_queries(self.per_query_b, self.per_query_a)

    @classmethod
    def from_predictions(
        cls, y_true: object, scores_a: object, scores_b: object, qid: object, *, k: int | None = 10,
        names: tuple[str, str] = ("A", "B"), ax: object = None, **conventions: object,
    ) -> "QueryComparisonDisplay":  # fmt: skip
        """Compare two systems' scores of the same documents and draw the comparison.

        Parameters
        ----------
        y_true, scores_a, scores_b, qid : array-like of shape (n_samples,)
        k : int or None, default=10
            The NDCG cutoff; None: whole lists.
        names : (str, str), default=("A", "B")
        ax : matplotlib Axes or None, default=None
        **conventions
            ``gain``, ``ties``, ``no_relevant`` or ``convention`` as ``ndcg_score`` takes them.

        Returns
        -------
        QueryComparisonDisplay
        """
        try:
            name_a, name_b = [] if isinstance(names, str) else names  # any two-item iterable: a tuple, an array
        except (TypeError, ValueError):
            raise ValueError(f"names must be the two systems' names, (name_a, name_b); got {names!r}.") from None
        per_query = [ndcg_score(y_true, scores, qid, k, per_query=True, **conventions) for scores in (scores_a, scores_b)]
        metric_name = describe_metric("ndcg", k, **conventions)
        return cls(*per_query, name_a=name_a, name_b=name_b, metric_name=metric_name).plot(ax=ax)

    @classmethod
    def from_estimators(
        cls, estimator_a: object, estimator_b: object, X: object, y: object, qid: object, *, k: int | None = 10,
        names: tuple[str, str] | None = None, ax: object = None, **conventions: object,
    ) -> "QueryComparisonDisplay":  # fmt: skip
        """Compare two fitted rankers on the same documents (``predict``, given ``qid`` where it
        asks for it under metadata routing, as the scorers give it: a ``Pipeline`` with a
        ``QueryScaler``) and draw the comparison.

        Parameters
        ----------
        estimator_a, estimator_b : fitted rankers
        X : array-like of shape (n_samples, n_features)
        y, qid : array-like of shape (n_samples,)
        k, ax, **conventions : as in :meth:`from_predictions`
        names : (str, str) or None, default=None
            None: the estimators' class names.

        Returns
        -------
        QueryComparisonDisplay
        """
        if names is None:
            names = (type(estimator_a).__name__, type(estimator_b).__name__)
            if names[0] == names[1]:
                names = (f"{names[0]} (A)", f"{names[1]} (B)")
        scores = [predict_with_qid(estimator, X, qid) for estimator in (estimator_a, estimator_b)]  # as a scorer scores
        return cls.from_predictions(y, *scores, qid, k=k, names=names, ax=ax, **conventions)

    def plot(self, ax: object = None) -> "QueryComparisonDisplay":
        """Draw the queries' points, the diagonal and the tests' summary on ``ax`` (None: a new figure).

        Returns
        -------
        self
        """
        ax = axes_or_new(ax, (5.0, 5.0))
        self.points_ = ax.scatter(self.per_query_a, self.per_query_b, s=12, alpha=0.6)
        values = np.concatenate([self.per_query_a, self.per_query_b])
        low, high = np.nanmin(values, initial=0.0), np.nanmax(values, initial=1.0)
        ax.plot([low, high], [low, high], color="grey", linestyle="--", linewidth=1)
        ax.set_xlabel(f"{self.name_a}, mean {np.nanmean(self.per_query_a):.4f}")
        ax.set_ylabel(f"{self.name_b}, mean {np.nanmean(self.per_query_b):.4f}")
        ax.set_title(
            f"{self.metric_name.split(' [')[0]} per query: {self.name_b} - {self.name_a} = "
            f"{self.t_test.mean_difference:+.4f}\npaired t-test p = {self.t_test.pvalue:.3g}, "
            f"Wilcoxon p = {self.wilcoxon.pvalue:.3g}",
            fontsize=9,
        )  # fmt: skip
        ax.set_aspect("equal", adjustable="datalim")
        self.ax_, self.figure_ = ax, ax.figure
        return self


def plot_query_comparison(
    y_true: object, scores_a: object, scores_b: object, qid: object, *, k: int | None = 10,
    names: tuple[str, str] = ("A", "B"), ax: object = None, **conventions: object,
) -> QueryComparisonDisplay:  # fmt: skip
    """Draw the per-query NDCG@k of two systems' scores against each other
    (:meth:`QueryComparisonDisplay.from_predictions`).

    Returns
    -------
    QueryComparisonDisplay
    """
    return QueryComparisonDisplay.from_predictions(y_true, scores_a, scores_b, qid, k=k, names=names, ax=ax, **conventions)
