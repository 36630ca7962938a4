"""Binary ranking metrics of Mohan's thesis §6.2: AUC, partial AUC and PREC@k.

Graded labels become binary with ``relevant_threshold``: a document is relevant when
its grade is at least the threshold (the thesis counts grades 3 and 4 of 0-4 as
relevant: ``relevant_threshold=3``). Ties between scores are handled under the names
of the other metrics (``docs/metrics.md``):

- ``"expected"`` (default): the expectation over the orders of tied documents. For
  AUC a tied relevant/irrelevant pair counts 1/2 (the Mann-Whitney statistic,
  scikit-learn's ``roc_auc_score``); the ROC curve crosses a block of tied scores on
  the straight line between its ends (scikit-learn's interpolation), which is what
  partial AUC integrates.
- ``"input_order"``: tied documents ranked in the order they were given.
- ``"pessimistic"``: tied relevant documents ranked below tied irrelevant ones.

``average="query"`` (default) averages over the queries that have both relevant and
irrelevant documents (the others have no ROC curve); ``average="pooled"`` computes one
curve over all documents, ignoring ``qid``.
"""

from numbers import Real

import numpy as np

from .._input.queries import group_queries
from .._input.labels import check_flag, check_relevance, check_scores
from ._conventions import TIES
from ._ranking import evaluate, mean_over_queries

_AVERAGES = ("query", "pooled")
_NORMALISATIONS = ("thesis", "mcclish")


def auc_score(
    y_true: object,
    y_score: object,
    qid: object = None,
    *,
    relevant_threshold: float = 1,
    average: str = "query",
    ties: str = "expected",
    per_query: bool = False,
) -> float | np.ndarray:
    """Area under the ROC curve of relevant (grade >= ``relevant_threshold``) against
    irrelevant documents (Mohan's thesis, §6.2).

    ``AUC = P(s(relevant) > s(irrelevant))``, a tie counting by ``ties``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Grades, finite and >= 0.
    y_score : array-like of shape (n_samples,)
        Predicted scores.
    qid : array-like of shape (n_samples,), default=None
        Query id of each document; needed with ``average="query"``.
    relevant_threshold : float, default=1
        Grades at or above it are relevant (the thesis: 3 on 0-4 grades).
    average : {"query", "pooled"}, default="query"
        Mean over queries with both kinds of documents, or one curve over all.
    ties : {"expected", "input_order", "pessimistic"}, default="expected"
    per_query : bool, default=False
        Return each query's AUC (sorted by query id; NaN for a query without both
        kinds of documents) instead of the mean.

    Returns
    -------
    float or ndarray of shape (n_queries,)
    """
    values = _areas("auc_score", y_true, y_score, qid, relevant_threshold, average, ties, 1.0)
    return _summarise(values, average, per_query)


def partial_auc_score(
    y_true: object,
    y_score: object,
    qid: object = None,
    *,
    max_fpr: float = 0.05,
    normalization: str = "thesis",
    relevant_threshold: float = 1,
    average: str = "query",
    ties: str = "expected",
    per_query: bool = False,
) -> float | np.ndarray:
    """Area under the ROC curve over false-positive rates ``[0, max_fpr]`` (Mohan's thesis, §6.2).

    Parameters
    ----------
    max_fpr : float in (0, 1], default=0.05
    normalization : {"thesis", "mcclish"}, default="thesis"
        ``"thesis"``: the raw area, between 0 and ``max_fpr`` (a perfect ranking scores
        ``max_fpr`` = 0.05, a random one ``max_fpr**2 / 2`` = 0.00125).
        ``"mcclish"``: McClish's standardised area, ``(1 + (A - min) / (max - min)) /
        2`` with ``min = max_fpr**2 / 2`` and ``max = max_fpr`` (0.5 for random, 1
        for perfect; scikit-learn's ``roc_auc_score(max_fpr=...)``).
    y_true, y_score, qid, relevant_threshold, average, ties, per_query :
        As in :func:`auc_score`.

    Returns
    -------
    float or ndarray of shape (n_queries,)
    """
    if isinstance(max_fpr, bool) or not isinstance(max_fpr, Real) or not 0 < max_fpr <= 1:
        raise ValueError(f"max_fpr must be a number in (0, 1]; got {max_fpr!r}.")
    if normalization not in _NORMALISATIONS:
        raise ValueError(f"normalization must be one of {list(_NORMALISATIONS)}; got {normalization!r}.")
    values = _areas("partial_auc_score", y_true, y_score, qid, relevant_threshold, average, ties, float(max_fpr))
    if normalization == "mcclish":
        low, high = max_fpr**2 / 2, max_fpr
        values = 0.5 * (1 + (values - low) / (high - low))
    return _summarise(values, average, per_query)


def precision_at_5(
    y_true: object,
    y_score: object,
    qid: object,
    *,
    relevant_threshold: float = 1,
    ties: str = "expected",
    per_query: bool = False,
) -> float | np.ndarray:
    """PREC@5 (Mohan's thesis, Eq. 6.5): the share of relevant documents (grade >=
    ``relevant_threshold``) among each query's top 5, averaged over queries.

    A query with fewer than 5 documents counts its missing positions as irrelevant
    and one without a relevant document scores 0 (:func:`precision_at_k`, ``k=5``, on
    the binarised grades).
    """
    relevant = _binarise(y_true, relevant_threshold)
    return evaluate(
        "precision", relevant, y_score, qid, 5, conventions={"ties": ties}, per_query=per_query, k_required=True,
        caller="precision_at_5",
    )  # fmt: skip


def _binarise(y_true: object, relevant_threshold: object) -> np.ndarray:
    if isinstance(relevant_threshold, bool) or not isinstance(relevant_threshold, Real) or not np.isfinite(relevant_threshold):
        raise ValueError(f"relevant_threshold must be a finite number (grades at or above it are relevant); got {relevant_threshold!r}.")
    labels = check_relevance(y_true, name="y_true")
    return (labels >= relevant_threshold).astype(np.float64)


def _areas(caller, y_true, y_score, qid, relevant_threshold, average, ties, max_fpr) -> np.ndarray:
    """Validated inputs' area under the ROC curve up to ``max_fpr``: per query, or one pooled value."""
    if average not in _AVERAGES:
        raise ValueError(f"average must be one of {list(_AVERAGES)}; got {average!r}.")
    if ties not in TIES:
        raise ValueError(f"ties must be one of {sorted(TIES)}; got {ties!r}.")
    relevant = _binarise(y_true, relevant_threshold)
    scores = check_scores(y_score, n_samples=len(relevant))
    if average == "pooled":
        if qid is not None:  # one curve reads no query, but a qid given is checked as everywhere
            group_queries(qid, len(relevant), caller=caller, against="y_true")
        return _roc_areas(relevant, scores, np.array([0, len(relevant)]), ties, max_fpr)
    groups = group_queries(qid, len(relevant), caller=caller, against="y_true")
    return _roc_areas(groups.group(relevant), groups.group(scores), groups.query_boundaries, ties, max_fpr)


def _summarise(values: np.ndarray, average: str, per_query: bool) -> float | np.ndarray:
    per_query = check_flag("per_query", per_query)
    if average == "pooled":
        if per_query:
            raise ValueError("per_query=True needs average='query'.")
        if np.isnan(values[0]):
            raise ValueError("the ROC curve needs relevant and irrelevant documents; y_true has only one kind.")
        return float(values[0])
    return values if per_query else mean_over_queries(values)


def _roc_areas(relevant: np.ndarray, scores: np.ndarray, boundaries: np.ndarray, ties: str, max_fpr: float) -> np.ndarray:
    """Area under each query's ROC curve over FPR ``[0, max_fpr]`` (NaN without both kinds).

    The curve walks each query's documents by decreasing score; a block of tied
    scores is one straight segment (``"expected"``), a horizontal then a vertical one
    (``"pessimistic"``: its irrelevant documents first), or one step per document
    (``"input_order"``).
    """
    n_queries = len(boundaries) - 1
    query = np.repeat(np.arange(n_queries), np.diff(boundaries))
    position = np.arange(len(scores))
    order = np.lexsort((position, -scores, query))  # decreasing score; ties in input order
    relevant, scores, query = relevant[order], scores[order], query[order]
    if ties == "input_order":
        new_block = np.ones(len(scores), dtype=bool)
    else:
        new_block = np.r_[True, (scores[1:] != scores[:-1]) | (query[1:] != query[:-1])]
    block = np.cumsum(new_block) - 1
    block_query = query[new_block]
    positives = np.bincount(block, weights=relevant)
    negatives = np.bincount(block, weights=1.0 - relevant)
    n_positive = np.bincount(block_query, weights=positives, minlength=n_queries)
    n_negative = np.bincount(block_query, weights=negatives, minlength=n_queries)
    first_block = np.searchsorted(block_query, np.arange(n_queries))
    cumulative_positive = np.cumsum(positives)
    cumulative_negative = np.cumsum(negatives)
    before_positive = cumulative_positive - positives - np.r_[0.0, cumulative_positive][first_block][block_query]
    before_negative = cumulative_negative - negatives - np.r_[0.0, cumulative_negative][first_block][block_query]
    with np.errstate(invalid="ignore", divide="ignore"):
        x0 = before_negative / n_negative[block_query]
        x1 = (before_negative + negatives) / n_negative[block_query]
        y0 = before_positive / n_positive[block_query]
        y1 = (before_positive + positives) / n_positive[block_query]
    a, b = np.minimum(x0, max_fpr), np.minimum(x1, max_fpr)
    if ties == "pessimistic":  # across the block at height y0, then up
        area = (b - a) * y0
    else:
        width = x1 - x0
        with np.errstate(invalid="ignore", divide="ignore"):
            slope = np.where(width > 0, (y1 - y0) / np.where(width > 0, width, 1.0), 0.0)
        area = (b - a) * (y0 + slope * ((a + b) / 2 - x0))
    values = np.bincount(block_query, weights=np.nan_to_num(area), minlength=n_queries)
    values[(n_positive == 0) | (n_negative == 0)] = np.nan
    return values
