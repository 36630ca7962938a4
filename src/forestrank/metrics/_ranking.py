"""Ranking metrics over queries: NDCG, ERR, MAP and precision.

Every function takes ``(y_true, y_score, qid)`` with one entry per document, rows in
any order, and explicit conventions (see :mod:`forestrank.metrics._conventions` and
``docs/metrics.md``). The mean is over queries; ``per_query=True`` returns the value
of each query instead, ordered by sorted query id, which is what paired significance
tests need.
"""

import inspect
import re
import textwrap
import warnings
from numbers import Integral

import numpy as np

from .._numba.dtypes import FLOAT_DTYPE, as_kernel_array
from .._input.queries import group_queries, stacklevel_outside_package
from .._input.labels import (
    check_flag,
    check_grades_for_gain,
    check_max_grade,
    check_relevance,
    check_sample_weight,
    check_scores,
    normalize_sample_weight,
)
from . import _kernels
from ._conventions import METRICS, TIES, Convention, resolve_convention
from .._ranking import discount_table


# The largest cutoff: the kernels take it as an int64 (a larger one cuts no list anyway).
MAX_CUTOFF = np.iinfo(np.int64).max


def _check_cutoff(k: object, *, allow_none: bool = True) -> int | None:
    if k is None and allow_none:
        return None
    if isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= k <= MAX_CUTOFF:
        raise ValueError(f"k must be a positive integer (at most 2**63 - 1){' or None' if allow_none else ''}; got {k!r}.")
    return int(k)


def evaluate_grouped(
    labels: np.ndarray,
    scores: np.ndarray,
    query_boundaries: np.ndarray,
    convention: Convention,
    k: int | None,
    max_grade: float = 0.0,
) -> np.ndarray:
    """Per-query metric values for rows already grouped by query.

    Parameters
    ----------
    labels, scores : ndarray of shape (n_samples,), float64
        Validated labels and scores, rows grouped by query.
    query_boundaries : ndarray of shape (n_queries + 1,), int64
    convention : Convention
    k : int or None
        Cutoff.
    max_grade : float
        ERR's ``g_max``.

    Returns
    -------
    ndarray of shape (n_queries,), float64
        NaN marks a query skipped under ``no_relevant="skip"``.
    """
    gain_id, gain_table = convention.gain_arguments()
    values = _kernels.per_query_metric(
        as_kernel_array(labels, FLOAT_DTYPE),
        as_kernel_array(scores, FLOAT_DTYPE),
        query_boundaries,
        METRICS[convention.metric],
        0 if k is None else k,
        gain_id,
        gain_table,
        discount_table(int(np.diff(query_boundaries).max(initial=0)), convention.discount),
        TIES[convention.ties],
        convention.short_query_zero,
        float(max_grade),
    )
    if convention.no_relevant != "skip":
        values[np.isnan(values)] = convention.no_relevant
    return values


def mean_over_queries(values: np.ndarray, query_weights: np.ndarray | None = None) -> float:
    """Mean of per-query values, leaving out queries skipped as NaN; weighted by
    ``query_weights`` (float64, one per query) when given. Weights all alike weigh
    nothing: their mean is the plain mean, bit for bit."""
    kept = ~np.isnan(values)
    if not kept.any() or (query_weights is not None and not query_weights[kept].any()):
        warnings.warn(
            "Every query was skipped (none has what the metric needs: a relevant document, or for AUC a relevant "
            "and an irrelevant one; or every query that has it has zero weight); the mean is NaN.",
            UserWarning,
            stacklevel=stacklevel_outside_package(),
        )
        return float("nan")
    if query_weights is None or (query_weights == query_weights[0]).all():
        return float(values[kept].mean())
    return float(np.average(values[kept], weights=query_weights[kept]))


def evaluate(
    metric: str,
    y_true: object,
    y_score: object,
    qid: object,
    k: object,
    *,
    conventions: dict,
    per_query: bool = False,
    max_grade: object = None,
    k_required: bool = False,
    caller: str | None = None,
    sample_weight: object = None,
    against: str = "y_true",
) -> float | np.ndarray:
    """Validate inputs, group by query and evaluate ``metric`` (the public functions' body).

    ``caller`` names the function in the warning emitted when ``qid`` is None, and
    ``against`` the argument whose rows ``qid`` and ``sample_weight`` must match (an
    estimator's ``score`` takes ``X``). With
    ``sample_weight`` (one per row) the mean weighs each query by the mean weight of
    its rows, a weight per query as LightGBM's and XGBoost's ranking metrics take it
    (which leave the 1 of a query without relevant documents unweighted, ``docs/metrics.md``).
    """
    convention = resolve_convention(metric, **conventions)
    k = _check_cutoff(k, allow_none=not k_required)
    labels = check_relevance(y_true, name="y_true")
    scores = check_scores(y_score, n_samples=len(labels))
    table = None if isinstance(convention.gain, str) else np.array(convention.gain)
    if table is not None:
        check_grades_for_gain(labels, table, name="y_true", gain_name="gain")
    grade = 0.0
    if metric == "err":
        grade = check_max_grade(max_grade, labels, table)
    groups = group_queries(qid, len(labels), caller=caller or f"{metric}_score", against=against)
    values = evaluate_grouped(
        groups.group(labels), groups.group(scores), groups.query_boundaries, convention, k, grade
    )
    if check_flag("per_query", per_query):
        return values
    if sample_weight is None:
        return mean_over_queries(values)
    # in the fit's unit of weight, so that sums of weights near float64's largest stay finite
    weights = normalize_sample_weight(check_sample_weight(sample_weight, n_samples=len(labels), against=against))
    return mean_over_queries(values, groups.query_means(groups.group(weights)))


_GAIN_DOC = """
    gain : {'exp', 'linear'} or array-like of shape (n_grades,), default='exp'
        ``2**l - 1``, ``l``, or the gain of each grade 0, 1, 2, ... (LightGBM's
        ``label_gain``: finite, >= 0, not decreasing; ``y_true`` then holds integer
        grades below its length). A query whose gains are all 0 counts as one
        without relevant documents."""

_CONVENTION_DOC = """
    ties : {'expected', 'input_order', 'pessimistic'}, default='expected'
        Documents with equal scores: exact expectation over their orders (RF-list
        paper Eq. 11-13), the order they were given in (LightGBM, XGBoost, ranx,
        the LETOR scripts), or the worst order.
    no_relevant : float in [0, 1] or 'skip', default=0.0
        Value of a query without any relevant document (label > 0), or 'skip' to
        leave it out of the mean.
    convention : {'letor4', 'letor3'}, default=None
        Reproduce an official LETOR evaluation script on grades 0-2 (higher grades
        follow the same rules, where the scripts would count them irrelevant); fixes
        the options above (an explicit option that contradicts it raises). See
        ``docs/metrics.md``.
    per_query : bool, default=False
        Return the value of each query (sorted by query id; NaN for skipped queries)
        instead of the mean."""


def _shared_doc(function):
    """Put the shared entries of the metrics' conventions into ``function``'s docstring, at
    the indentation of its ``{conventions}`` line (Python 3.13 strips docstrings' common
    indentation; ``python -OO`` strips the docstrings): ``gain`` only where the function
    takes it (MAP and precision count labels > 0)."""
    if function.__doc__ is None:
        return function
    entries = (_GAIN_DOC if "gain" in inspect.signature(function).parameters else "") + _CONVENTION_DOC
    placeholder = re.search(r"^([ \t]*)\{conventions\}$", function.__doc__, flags=re.MULTILINE)
    text = textwrap.indent(textwrap.dedent(entries).strip("\n"), placeholder.group(1))
    function.__doc__ = function.__doc__.replace(placeholder.group(0), text)
    return function


@_shared_doc
def ndcg_score(
    y_true: object,
    y_score: object,
    qid: object,
    k: int | None = None,
    *,
    gain: object = None,
    ties: str | None = None,
    no_relevant: float | str | None = None,
    convention: str | None = None,
    per_query: bool = False,
) -> float | np.ndarray:
    """Normalised discounted cumulative gain, averaged over queries.

    ``NDCG@k = DCG@k / IDCG@k`` with ``DCG@k = sum_{r<=k} gain(l_r) * discount(r)``
    (Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", 2002;
    exponential gain as in Burges et al. 2005) and IDCG the DCG of the ideal order.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance of each document, finite and >= 0.
    y_score : array-like of shape (n_samples,)
        Predicted score of each document; higher ranks first.
    qid : array-like of shape (n_samples,) or None
        Query id of each document, any order and any comparable type. ``None``
        treats all rows as one query and warns.
    k : int, default=None
        Cutoff; ``None`` uses whole lists.
    {conventions}

    Returns
    -------
    float or ndarray of shape (n_queries,)
        Mean NDCG over queries, or per-query values.

    Notes
    -----
    Unlike :func:`sklearn.metrics.ndcg_score`, which takes one row per query of a
    dense matrix and linear gains, this function takes the LTR long format
    ``(y_true, y_score, qid)``. With ``ties="expected"`` it equals scikit-learn's
    tie-averaged NDCG of ``2**y_true - 1`` computed query by query.
    """
    conventions = dict(gain=gain, ties=ties, no_relevant=no_relevant, convention=convention)
    return evaluate("ndcg", y_true, y_score, qid, k, conventions=conventions, per_query=per_query)


@_shared_doc
def err_score(
    y_true: object,
    y_score: object,
    qid: object,
    k: int | None = None,
    *,
    max_grade: float | None = None,
    gain: object = None,
    ties: str | None = None,
    no_relevant: float | str | None = None,
    convention: str | None = None,
    per_query: bool = False,
) -> float | np.ndarray:
    """Expected reciprocal rank, averaged over queries.

    ``ERR@k = sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i)`` with
    ``R = (2**g - 1) / 2**g_max`` (Chapelle, Metzler, Zhang & Grinspan, "Expected
    Reciprocal Rank for Graded Relevance", CIKM 2009, Eq. 4 and §4; the TREC
    ``gdeval.pl`` definition); with another ``gain`` ``G``,
    ``R = G(g) / (G(g_max) + 1)``, which is the same formula for ``G = 2**g - 1``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance grades, finite and >= 0.
    y_score : array-like of shape (n_samples,)
        Predicted scores.
    qid : array-like of shape (n_samples,) or None
        Query id of each document.
    k : int, default=None
        Cutoff; ``None`` uses whole lists.
    max_grade : float, default=None
        ``g_max``; ``None`` takes the largest label in ``y_true``. Pass the dataset's
        maximum (4 for 0-4 data) when evaluating a subset; with a gain table, a
        grade of the table.
    {conventions}

    Returns
    -------
    float or ndarray of shape (n_queries,)

    Notes
    -----
    With ``ties="expected"`` the cost is O(m * min(m, k)) per tie
    block of m documents.
    """
    conventions = dict(gain=gain, ties=ties, no_relevant=no_relevant, convention=convention)
    return evaluate(
        "err", y_true, y_score, qid, k, conventions=conventions, per_query=per_query, max_grade=max_grade
    )


@_shared_doc
def map_score(
    y_true: object,
    y_score: object,
    qid: object,
    k: int | None = None,
    *,
    ties: str | None = None,
    no_relevant: float | str | None = None,
    convention: str | None = None,
    per_query: bool = False,
) -> float | np.ndarray:
    """Mean average precision over queries.

    ``AP = (1/R) sum_{r: l_r > 0} P@r`` with ``R`` the number of relevant documents
    (label > 0) of the query, as in the LETOR scripts and trec_eval. With a cutoff
    ``k`` only ranks ``r <= k`` contribute and the denominator stays ``R``
    (trec_eval's ``map_cut``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance labels, finite and >= 0; label > 0 counts as relevant.
    y_score : array-like of shape (n_samples,)
        Predicted scores.
    qid : array-like of shape (n_samples,) or None
        Query id of each document.
    k : int, default=None
        Cutoff.
    {conventions}

    Returns
    -------
    float or ndarray of shape (n_queries,)
    """
    conventions = dict(ties=ties, no_relevant=no_relevant, convention=convention)
    return evaluate("map", y_true, y_score, qid, k, conventions=conventions, per_query=per_query)


def average_precision(
    y_true: object,
    y_score: object,
    qid: object,
    k: int | None = None,
    *,
    ties: str | None = None,
    no_relevant: float | str | None = None,
    convention: str | None = None,
) -> np.ndarray:
    """Average precision of each query: the values :func:`map_score` averages.

    The parameters of :func:`map_score` but ``per_query`` (the values are per query).
    Returns an ndarray of shape (n_queries,), ordered by sorted query id (NaN for queries
    skipped by ``no_relevant="skip"``).
    """
    conventions = dict(ties=ties, no_relevant=no_relevant, convention=convention)
    return evaluate("map", y_true, y_score, qid, k, conventions=conventions, per_query=True, caller="average_precision")


@_shared_doc
def precision_at_k(
    y_true: object,
    y_score: object,
    qid: object,
    k: int = 10,
    *,
    ties: str | None = None,
    no_relevant: float | str | None = None,
    convention: str | None = None,
    per_query: bool = False,
) -> float | np.ndarray:
    """Precision at ``k``: the fraction of relevant documents (label > 0) in the top ``k``.

    The denominator is ``k`` even when a query has fewer documents (missing positions
    count as irrelevant, as in trec_eval and Eval-Score-4.0.pl); under
    ``convention="letor3"`` such a query scores 0, as in Eval-Score-3.0.pl.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance labels, finite and >= 0.
    y_score : array-like of shape (n_samples,)
        Predicted scores.
    qid : array-like of shape (n_samples,) or None
        Query id of each document.
    k : int, default=10
        Cutoff.
    {conventions}

    Returns
    -------
    float or ndarray of shape (n_queries,)
    """
    conventions = dict(ties=ties, no_relevant=no_relevant, convention=convention)
    return evaluate(
        "precision", y_true, y_score, qid, k, conventions=conventions, per_query=per_query, k_required=True,
        caller="precision_at_k",
    )


def describe_metric(
    metric: str,
    k: int | None = None,
    *,
    convention: str | None = None,
    gain: object = None,
    ties: str | None = None,
    no_relevant: float | str | None = None,
) -> str:
    """Name a metric with all its conventions, for tables and logs.

    >>> describe_metric("ndcg", 10, convention="letor4")  # doctest: +ELLIPSIS
    'NDCG@10 [letor4 preset, gain 2^l-1, discount 1 at r<=2, 1/log2(r) after, ...]'
    """
    resolved = resolve_convention(metric, convention=convention, gain=gain, ties=ties, no_relevant=no_relevant)
    return resolved.describe(_check_cutoff(k))
