"""Position discounts and the gains of grades in DCG: the one owner every NDCG in the package reads.

The metrics, LambdaRank's ``|delta NDCG|`` and the listwise split criterion all weigh
rank ``r`` by a table built here and a grade by :func:`exp_gain` (or, with a linear
gain or a gain table, by :func:`row_gains`), so the three agree to the last bit on the
same convention.

Gains are computed scaled by a power of two per query, ``2**-shift``: for the
exponential gain ``shift`` is the floor of the query's largest grade, for a linear gain
or a gain table the binary exponent of the query's largest gain (:func:`gain_shift`).
NDCG, ``|delta NDCG|`` and every normalised gain are ratios of sums of gains within one
query, and multiplying every operand of a sum or a product by a power of two multiplies
its rounded result by exactly the same power (short of underflow), so the ratios are
bitwise those of the unscaled gains; but the scaled gains never exceed 1, where
``2**l - 1`` overflows float64 from grade 1024 on, and a table's gains near float64's
largest value overflowed a query's DCG. Gains are not scaled up by more than
``2**-LOWEST_GAIN_EXPONENT``: a table of subnormal gains would otherwise take a factor
beyond float64 (``2**1026`` for ``15 * 2**-1030``), and XE-NDCG adds the factor itself to
every gain (its ``phi``), summed over a query's documents.
"""

import math

import numpy as np

from ._input.labels import check_gain, check_grades_for_gain
from ._numba.jit import jit

DISCOUNTS = ("log2", "letor", "log_power", "rank_power")
# 2**960 at most: room for 2**63 documents' sums of a scaled constant below 1.
LOWEST_GAIN_EXPONENT = -960
_LN2 = math.log(2.0)


def discount_table(n_positions: int, discount: str = "log2", power: float = 1.0, cutoff: int | None = None) -> np.ndarray:
    """``D(r)`` for the ranks ``r = 1 .. n_positions``.

    Parameters
    ----------
    n_positions : int
        Number of ranks (>= 0).
    discount : {"log2", "letor", "log_power", "rank_power"}, default="log2"
        ``"log2"``: ``1 / log2(r + 1)`` (Järvelin & Kekäläinen 2002, as used by
        Burges et al. 2005; the RF-list paper's Eq. 8). ``"letor"``: the official
        LETOR 3.0 and 4.0 evaluation scripts, 1 for ranks 1 and 2 and ``1 / log2(r)``
        after. ``"log_power"``: ``1 / log2(r + 1)**power`` and ``"rank_power"``:
        ``1 / r**power`` (the RF-list paper's Eq. 14 and 15).
    power : float, default=1.0
        Exponent of the two power families.
    cutoff : int or None, default=None
        ``D(r) = 0`` for ``r > cutoff`` (NDCG@k as a training objective).

    Returns
    -------
    ndarray of shape (n_positions,), float64
    """
    ranks = np.arange(1, n_positions + 1, dtype=np.float64)
    if discount == "log2":
        table = 1.0 / np.log2(ranks + 1.0)
    elif discount == "letor":
        table = np.ones(n_positions)
        table[2:] = 1.0 / np.log2(ranks[2:])
    elif discount == "log_power":
        table = 1.0 / np.log2(ranks + 1.0) ** power
    elif discount == "rank_power":
        table = 1.0 / ranks**power
    else:
        raise ValueError(f"discount must be one of {DISCOUNTS}, got {discount!r}.")
    if cutoff is not None:
        table[cutoff:] = 0.0
    return table


@jit
def exp_gain(label, shift):
    """The exponential gain ``2**label - 1`` (Burges et al., "Learning to Rank using
    Gradient Descent", ICML 2005) scaled by ``2**-shift``: ``2**(label - shift) - 2**-shift``.

    Parameters
    ----------
    label : float64
        Relevance grade.
    shift : float64
        The floor of the largest grade of the label's query (module docstring); 0
        gives the unscaled gain.

    Returns
    -------
    float64
        Below 2 (at most 1 for integer grades) when ``label < shift + 1``.

    Notes
    -----
    Below grade 1 the difference ``2**label - 1`` is taken as ``expm1(label ln 2)``:
    subtracting 1 from ``2**label`` loses the digits of a small grade, all of them below
    ``2**-53`` (a relevant document read as irrelevant). From grade 1 on the subtraction
    loses at most one bit, and integer grades keep their exact gains.
    """
    if label < 1.0:
        return math.expm1(label * _LN2) * 2.0**-shift
    return 2.0 ** (label - shift) - 2.0**-shift


def exp_gains_of_grades(labels: np.ndarray, shift: float) -> np.ndarray:
    """:func:`exp_gain` of every grade in ``labels`` (float64, shape (n_rows,)) with one
    ``shift``. float64, shape (n_rows,)."""
    out = np.empty(len(labels))
    _fill_shifted_exp_gains(np.ascontiguousarray(labels, dtype=np.float64), float(shift), out)
    return out


@jit
def gain_shift(largest_gain):
    """The binary exponent ``e`` of a query's largest linear or table gain
    (``largest_gain = f * 2**e``, ``0.5 <= f < 1``; 0 for a gain of 0), at least
    ``LOWEST_GAIN_EXPONENT``: its gains divided by ``2**e`` (``math.ldexp``, exact short
    of underflow) are at most 1. For the metrics' kernels; :func:`row_gains` takes the
    same exponents over arrays (``np.frexp``).

    Parameters
    ----------
    largest_gain : float64
        Finite, >= 0.

    Returns
    -------
    float64
    """
    return float(max(math.frexp(largest_gain)[1], LOWEST_GAIN_EXPONENT))


@jit
def _fill_shifted_exp_gains(labels, shift, out):
    """Each row's :func:`exp_gain` under one ``shift``.

    Parameters
    ----------
    labels : float64 array of shape (n_rows,)
    shift : float64
    out : float64 array of shape (n_rows,)
        Output.
    """
    for row in range(len(labels)):
        out[row] = exp_gain(labels[row], shift)


@jit
def _fill_exp_gains(labels, query_boundaries, out):
    """Each grouped row's :func:`exp_gain`, shifted by its query's largest grade.

    Parameters
    ----------
    labels : float64 array of shape (n_rows,), rows grouped by query
    query_boundaries : int64 array of shape (n_queries + 1,)
    out : float64 array of shape (n_rows,)
        Output.
    """
    for q in range(len(query_boundaries) - 1):
        start, end = query_boundaries[q], query_boundaries[q + 1]
        if end == start:
            continue
        _fill_shifted_exp_gains(labels[start:end], np.floor(labels[start:end].max()), out[start:end])


def exp_gains(labels: np.ndarray, query_boundaries: np.ndarray) -> np.ndarray:
    """Exponential gains of grouped rows, each query's scaled by ``2**-floor(its largest grade)``.

    Within a query these are ``2**l - 1`` times one power of two, so every per-query
    ratio (NDCG, ``|delta NDCG|``, a normalised gain) is bitwise that of ``2**l - 1``
    (module docstring), for any grade.

    Parameters
    ----------
    labels : ndarray of shape (n_rows,), float64
        Relevance grades, rows grouped by query.
    query_boundaries : ndarray of shape (n_queries + 1,), int64

    Returns
    -------
    ndarray of shape (n_rows,), float64
        Values in [0, 2); in [0, 1] for integer grades.
    """
    out = np.empty(len(labels))
    _fill_exp_gains(
        np.ascontiguousarray(labels, dtype=np.float64), np.ascontiguousarray(query_boundaries, dtype=np.int64), out
    )
    return out


@jit
def fill_inverse_max_dcg(labels, gains, query_boundaries, cutoff, discounts, out):
    """``1 / max DCG@cutoff`` of every query (0 when the query has no relevant document).

    Parameters
    ----------
    labels : float64 array of shape (n_rows,), rows grouped by query
    gains : float64 array of shape (n_rows,)
        The rows' gains (``exp_gains``).
    query_boundaries : int64 array of shape (n_queries + 1,)
    cutoff : int
    discounts : float64 array of shape (>= min(cutoff, largest query),)
        Discount of each 0-based rank (``discount_table``).
    out : float64 array of shape (n_queries,)
        Output.
    """
    for q in range(len(query_boundaries) - 1):
        query_labels = labels[query_boundaries[q] : query_boundaries[q + 1]]
        # The stable argsort the gradients use: np.sort would compile a second sort.
        ideal = np.argsort(-query_labels, kind="mergesort")
        dcg = 0.0
        for rank in range(min(cutoff, len(ideal))):
            dcg += gains[query_boundaries[q] + ideal[rank]] * discounts[rank]
        out[q] = 1.0 / dcg if dcg > 0.0 else 0.0


def row_gains(labels: np.ndarray, query_boundaries: np.ndarray, gain: str | np.ndarray) -> np.ndarray:
    """The gain ``G(l)`` of every grouped row: ``"exp"`` the exponential gains scaled per
    query (``exp_gains``), ``"linear"`` the grades themselves, a table ``gain[l]``.

    Parameters
    ----------
    labels : ndarray of shape (n_rows,), float64
        Relevance grades, rows grouped by query; integers below ``len(gain)`` for a
        table (``_input.labels.check_grades_for_gain``).
    query_boundaries : ndarray of shape (n_queries + 1,), int64
    gain : {"exp", "linear"} or array-like of shape (n_grades,)
        Checked by ``_input.labels.check_gain`` (and the labels against a table).

    Returns
    -------
    ndarray of shape (n_rows,), float64
        Each query's gains times one power of two per query (module docstring), at most
        1 (below 2 for exponential gains of fractional grades), which every ratio within
        a query (NDCG, ``|delta NDCG|``, a normalised gain) cancels bitwise; the factor
        of each query is :func:`query_gain_scales`'.
    """
    gain = check_gain(gain, name="label_gain")
    if isinstance(gain, str) and gain == "exp":
        return exp_gains(labels, query_boundaries)
    gains = grade_gains(labels, gain)
    return np.ldexp(gains, -np.repeat(_query_gain_exponents(gains, query_boundaries), np.diff(query_boundaries)))


def grade_gains(labels: np.ndarray, gain: str | np.ndarray) -> np.ndarray:
    """The unscaled gain ``G(l)`` of every label for a linear gain or a gain table (a new
    float64 array of the labels' shape): for the uses that are no ratio within a query
    (a regression target, ERR's stop probabilities).

    Parameters
    ----------
    labels : ndarray of shape (n_rows,), float64
        Integers below ``len(gain)`` for a table.
    gain : "linear" or ndarray of shape (n_grades,), float64
        Checked by ``_input.labels.check_gain``.
    """
    if isinstance(gain, np.ndarray):
        check_grades_for_gain(labels, gain, name="y", gain_name="label_gain")
        return gain[labels.astype(np.int64)]
    return np.array(labels, dtype=np.float64)


def query_gain_scales(labels: np.ndarray, query_boundaries: np.ndarray, gain: str | np.ndarray) -> np.ndarray:
    """The power of two by which :func:`row_gains` multiplies each query's gains, float64
    array of shape (n_queries,) (1 for an empty query): for an objective whose formula
    adds a constant to a gain (XE-NDCG's ``phi``), which must be scaled alike."""
    gain = check_gain(gain, name="label_gain")
    if not (isinstance(gain, str) and gain == "exp"):
        return np.ldexp(1.0, -_query_gain_exponents(grade_gains(labels, gain), query_boundaries))
    present = np.diff(query_boundaries) > 0
    scales = np.ones(len(present))
    scales[present] = 2.0 ** -np.floor(np.maximum.reduceat(labels, np.asarray(query_boundaries[:-1])[present]))
    return scales


def _query_gain_exponents(gains: np.ndarray, query_boundaries: np.ndarray) -> np.ndarray:
    """:func:`gain_shift` of each query's largest gain, vectorised: int array of shape
    (n_queries,), 0 for an empty query or a query without gain.

    Parameters
    ----------
    gains : ndarray of shape (n_rows,), float64
        Linear or table gains (:func:`grade_gains`), rows grouped by query, >= 0.
    query_boundaries : ndarray of shape (n_queries + 1,), int64
    """
    present = np.diff(query_boundaries) > 0
    exponents = np.zeros(len(present), dtype=np.int64)
    largest = np.maximum.reduceat(gains, np.asarray(query_boundaries[:-1])[present])
    exponents[present] = np.maximum(np.frexp(largest)[1], LOWEST_GAIN_EXPONENT)
    return exponents


def stop_probabilities(labels: np.ndarray, gain: str | np.ndarray, max_grade: float) -> np.ndarray:
    """ERR's ``R(l)``, the probability that a document of grade ``l`` satisfies the user:
    ``(2**l - 1) / 2**g_max`` (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009, §4) for
    the exponential gain, ``G(l) / (G(g_max) + 1)`` for another (the same formula for
    ``G = 2**l - 1``; ``metrics._kernels.stop_probability`` computes it per ranked label).

    Parameters
    ----------
    labels : ndarray of shape (n_rows,), float64
    gain : {"exp", "linear"} or ndarray of shape (n_grades,), float64
    max_grade : float
        ``g_max``, at least every label; a grade of the table for a gain table.

    Returns
    -------
    ndarray of shape (n_rows,), float64, in [0, 1)
    """
    gain = check_gain(gain, name="label_gain")
    if isinstance(gain, str) and gain == "exp":
        return exp_gains_of_grades(labels, max_grade)
    top = grade_gains(np.array([float(max_grade)]), gain)[0]
    return grade_gains(labels, gain) / (top + 1.0)


def normalized_gains(
    labels: np.ndarray, query_boundaries: np.ndarray, norm: str, gain: str | np.ndarray = "exp"
) -> np.ndarray:
    """``G(l)`` (``row_gains``; ``2^l - 1`` by default) of every grouped row over its query's
    norm: ``"dcg"`` the DCG normaliser ``|G|_D`` (the ideal DCG of the whole list),
    ``"l2"`` the 2-norm, ``"sum"`` the total gain. A query without gain gets zeros.
    float64, shape (n_rows,). Exponential gains are scaled per query (``exp_gains``),
    which the norm cancels exactly, so any grade gives finite targets."""
    gains = row_gains(labels, query_boundaries, gain)
    sizes = np.diff(query_boundaries)
    if norm == "dcg":
        inverse = np.empty(len(sizes))
        largest = int(sizes.max(initial=1))
        fill_inverse_max_dcg(labels, gains, query_boundaries, largest, discount_table(largest), inverse)
    else:
        per_query = np.add.reduceat(gains**2 if norm == "l2" else gains, query_boundaries[:-1])
        per_query = np.sqrt(per_query) if norm == "l2" else per_query
        inverse = np.divide(1.0, per_query, out=np.zeros(len(sizes)), where=per_query > 0)
    return gains * np.repeat(inverse, sizes)
