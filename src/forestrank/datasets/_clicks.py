"""Simulated clicks with known examination probabilities (:func:`simulate_clicks`)."""

import math
from numbers import Real
from typing import NamedTuple

import numpy as np
from sklearn.utils import check_random_state

from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE


class ClickLog(NamedTuple):
    """Simulated clicks (``simulate_clicks``), one entry per document in the caller's row order.

    Attributes
    ----------
    clicks : ndarray of shape (n_samples,), float64
        1 for a clicked document, else 0.
    position : ndarray of shape (n_samples,), int64
        The rank (1 = top) at which the document was shown.
    examination : ndarray of shape (n_samples,), float64
        The probability that the user examined it (``1 / position**eta`` for the
        position model; for the cascade, that the user reached it).
    click_probability : ndarray of shape (n_samples,), float64
        The probability of its click under the model.
    """

    clicks: np.ndarray
    position: np.ndarray
    examination: np.ndarray
    click_probability: np.ndarray


def simulate_clicks(
    y: object,
    qid: object,
    scores: object,
    model: str = "position",
    *,
    eta: float = 1.0,
    noise: float = 0.1,
    max_grade: float | None = None,
    random_state: int | np.random.RandomState | None = None,
) -> ClickLog:
    """Click logs from graded data: each query's documents shown in the order of ``scores``.

    A document of grade ``g`` is attractive with probability ``noise + (1 - noise) (2^g -
    1) / (2^g_max - 1)`` (``noise``: clicks on irrelevant documents; Chapelle et al.,
    "Expected reciprocal rank for graded relevance", CIKM 2009, for the grade mapping).

    - ``model="position"``, the position-based model (Richardson et al. 2007; the
      model of Unbiased LambdaMART, Hu et al., WWW 2019): the user examines rank
      ``k`` with probability ``1 / k**eta`` and clicks an examined, attractive
      document.
    - ``model="cascade"`` (Craswell et al., WSDM 2008): the user scans from the top,
      clicks the first attractive document and stops; ``eta`` does not apply.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        True grades, >= 0.
    qid : array-like of shape (n_samples,)
    scores : array-like of shape (n_samples,)
        The ranking shown (higher first; ties in input order), e.g. a production ranker's.
    model : {"position", "cascade"}, default="position"
    eta : float > 0, default=1.0
    noise : float in [0, 1], default=0.1
    max_grade : float or None
        ``g_max``, a finite number at least the largest grade of ``y``; None: that grade.
    random_state : int, RandomState or None

    Returns
    -------
    ClickLog
    """
    from .._input.queries import group_queries
    from .._input.labels import check_max_grade, check_relevance, check_scores
    from .._ranking import stop_probabilities

    if model not in ("position", "cascade"):
        raise ValueError(f"model must be 'position' or 'cascade'; got {model!r}.")
    if isinstance(eta, bool) or not isinstance(eta, Real) or not eta > 0:
        raise ValueError(f"eta must be a number > 0 (examination 1 / position**eta); got {eta!r}.")
    if isinstance(noise, bool) or not isinstance(noise, Real) or not 0 <= noise <= 1:
        raise ValueError(f"noise must be a number in [0, 1]; got {noise!r}.")
    grades = check_relevance(y, name="y")
    shown = check_scores(scores, n_samples=len(grades), name="scores", against="y")
    top = check_max_grade(max_grade, grades, None)
    groups = group_queries(qid, len(grades), caller="simulate_clicks", against="y")
    rng = check_random_state(random_state)
    g, s = groups.group(grades), groups.group(shown)
    # (2^g - 1) / (2^top - 1): ERR's stop probability over that of grade top, which
    # neither power overflows past grade 1023; 1 - 2^-top through expm1, which keeps its
    # digits for a top grade near 0 (1 - 2^-top cancels to 0 below about 1e-16).
    share = stop_probabilities(g, "exp", top) / -math.expm1(-top * math.log(2.0)) if top > 0 else np.zeros(len(g))
    share = np.minimum(share, 1.0)  # numerator and denominator round apart: the top grade's may be 1 + 1 ulp
    attractive = noise + (1 - noise) * share
    query_of_row = groups.grouped_query_index()
    order = np.lexsort((np.arange(len(s)), -s, query_of_row))  # by query, then by descending score
    starts = groups.query_boundaries[:-1]
    position = np.empty(len(s), dtype=INDEX_DTYPE)
    position[order] = np.arange(len(s)) - np.repeat(starts, np.diff(groups.query_boundaries)) + 1
    draws = rng.random_sample(len(s))
    if model == "position":
        examination = 1.0 / position.astype(FLOAT_DTYPE) ** float(eta)  # an integer power of int64 positions wraps
        probability = examination * attractive
        clicks = (draws < probability).astype(FLOAT_DTYPE)
    else:
        examination = np.empty(len(s))
        clicks = np.zeros(len(s))
        for start, end in zip(starts, groups.query_boundaries[1:]):
            reached = 1.0
            searching = True
            for row in order[start:end]:
                examination[row] = reached
                reached *= 1 - attractive[row]
                if searching and draws[row] < attractive[row]:
                    clicks[row] = 1.0
                    searching = False
        probability = examination * attractive
    return ClickLog(*(groups.ungroup(array) for array in (clicks, position, examination, probability)))
