"""Significance tests over per-query metric values, as learning-to-rank papers report them.

Two rankers evaluated on the same queries give paired samples (one metric value per
query each); the RF-LTR papers (Ibrahim & Carman) report paired tests over the test
queries. ``ndcg_score(..., per_query=True)`` and friends give the inputs.
"""

import warnings
from typing import NamedTuple

import numpy as np


class PairedTestResult(NamedTuple):
    """Outcome of :func:`paired_test`.

    Attributes
    ----------
    statistic : float
        t statistic (``test="t"``) or Wilcoxon's W.
    pvalue : float
        Two-sided p-value.
    mean_difference : float
        Mean of ``a - b`` over the queries.
    n_queries : int
    """

    statistic: float
    pvalue: float
    mean_difference: float
    n_queries: int


def paired_test(per_query_a: object, per_query_b: object, test: str = "t") -> PairedTestResult:
    """Two-sided paired test of ``a`` against ``b`` over the same queries.

    Parameters
    ----------
    per_query_a, per_query_b : array-like of shape (n_queries,)
        One metric value per query, the same queries in the same order.
    test : {"t", "wilcoxon"}, default="t"
        Student's paired t-test (``scipy.stats.ttest_rel``) or the Wilcoxon
        signed-rank test (``scipy.stats.wilcoxon``; queries with equal values are
        dropped, its ``zero_method="wilcox"``).

    Returns
    -------
    PairedTestResult
        For identical systems (every pair equal) the statistic and p-value are NaN.

    Examples
    --------
    >>> from forestrank.stats import paired_test
    >>> result = paired_test([0.5, 0.7, 0.9, 0.4], [0.4, 0.6, 0.7, 0.45])
    >>> round(result.mean_difference, 4)
    0.0875
    """
    from scipy import stats

    a, b = _paired_values(per_query_a, per_query_b)
    for name, values in (("per_query_a", a), ("per_query_b", b)):
        if not np.isfinite(values).all():
            raise ValueError(f"{name} contains NaN or infinite values.")
    if len(a) < 2:
        raise ValueError(f"A paired test needs at least 2 queries, got {len(a)}.")
    if test not in ("t", "wilcoxon"):
        raise ValueError(f"test must be 't' or 'wilcoxon', got {test!r}.")
    if np.array_equal(a, b):
        # No difference to test: both tests are undefined, whatever the number of queries
        # (scipy's exact Wilcoxon, used for few queries, would answer p = 1 on no pairs).
        return PairedTestResult(float("nan"), float("nan"), 0.0, len(a))
    if test == "t":
        result = stats.ttest_rel(a, b)
    else:
        result = stats.wilcoxon(a, b, zero_method="wilcox")
    return PairedTestResult(float(result.statistic), float(result.pvalue), float(np.mean(a - b)), len(a))


def paired_tests_of_scored_queries(
    per_query_a: object, per_query_b: object
) -> tuple[PairedTestResult, PairedTestResult]:  # fmt: skip
    """The paired t-test and Wilcoxon signed-rank test of ``a`` against ``b`` over the
    queries both score (a NaN, a query the metric's convention skips, drops the pair),
    as ``forestrank compare`` prints them and ``plotting.QueryComparisonDisplay`` draws them.

    Parameters
    ----------
    per_query_a, per_query_b : array-like of shape (n_queries,)
        One metric value per query or NaN, the same queries in the same order.

    Returns
    -------
    (PairedTestResult, PairedTestResult)
        :func:`paired_test` with ``test="t"`` and with ``test="wilcoxon"``; for identical
        systems their statistics are NaN, without scipy's warning.
    """
    a, b = _paired_values(per_query_a, per_query_b)  # before the mask, which would flatten them
    kept = ~(np.isnan(a) | np.isnan(b))
    with warnings.catch_warnings():  # differences all alike: scipy warns of its precision, the answer stands
        warnings.simplefilter("ignore", RuntimeWarning)
        return paired_test(a[kept], b[kept]), paired_test(a[kept], b[kept], test="wilcoxon")


def _paired_values(per_query_a: object, per_query_b: object) -> tuple[np.ndarray, np.ndarray]:
    """Both systems' per-query values as float64 arrays, refused by name unless each is
    1-D and both cover as many queries."""
    a, b = _per_query(per_query_a, "per_query_a"), _per_query(per_query_b, "per_query_b")
    for name, values in (("per_query_a", a), ("per_query_b", b)):
        if values.ndim != 1:
            raise ValueError(f"{name} must be one value per query (1-D), got shape {values.shape}.")
    if a.shape != b.shape:
        raise ValueError(f"per_query_a and per_query_b must cover the same queries: {len(a)} vs {len(b)} values.")
    return a, b


def _per_query(values: object, name: str) -> np.ndarray:
    """``values`` as float64 (any shape; the callers check it), refused by ``name`` when
    they are not numbers."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numbers, one metric value per query; converting it failed: {error}") from None
