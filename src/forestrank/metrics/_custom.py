"""A user's own evaluation metric over queries, for boosting's ``eval_metric``.

The same two forms as a custom objective (``objectives/_custom.py``):

* a Python callable ``metric(y, scores, query_boundaries, query_ids) -> float`` over all
  rows of a set at once, the rows grouped by query;
* a numba-compiled function ``metric(y, scores) -> float`` of *one* query's rows; the
  set's value is the mean over its queries (those returning NaN left out, as the
  built-in metrics leave out queries without a relevant document), the queries run in
  parallel (``_each_query_value``).

Larger is better, as for scikit-learn's scorers: to stop on a loss, return its negative.
"""

import inspect

import numba
import numpy as np
from numba.core.errors import TypingError
from numba.core.registry import CPUDispatcher

from .._numba.user_functions import user_function_error, user_function_name
from ._ranking import mean_over_queries


@numba.njit(parallel=True, nogil=True, cache=False)  # takes the user's function: one compile per function
def _each_query_value(function, labels, scores, query_boundaries, values):
    """``values[q] = function(labels, scores)`` of every query's rows, the queries in parallel."""
    for q in numba.prange(len(query_boundaries) - 1):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        values[q] = function(labels[start:end], scores[start:end])


class CustomMetric:
    """An evaluation metric given as a function of the grades, the scores and the queries
    (module docstring).

    Parameters
    ----------
    function : callable or numba-compiled function
        ``function(y, scores, query_boundaries, query_ids)`` returning a real number (``y``
        and ``scores`` float64 arrays of shape (n_rows,), rows grouped by query: query
        ``i`` holds rows ``query_boundaries[i]:query_boundaries[i + 1]`` (int64, shape
        (n_queries + 1,)), of id ``query_ids[i]``); or an ``@numba.njit`` function
        ``function(y, scores)`` of one query's rows returning a float.

    Attributes
    ----------
    name : str
        The function's ``__name__``: the key of the values in ``evals_result_``.
    """

    def __init__(self, function: object) -> None:
        self.function = function
        self.name = user_function_name(function)
        if self.compiled and len(inspect.signature(function.py_func).parameters) != 2:
            raise TypeError(
                f"eval_metric {self.name} is a numba function, which must take one query's (y, scores) and return a "
                "float; the whole-set form (y, scores, query_boundaries, query_ids) is a plain Python function."
            )

    @property
    def compiled(self) -> bool:
        """Whether ``function`` is a numba function of one query (averaged over the queries)."""
        return isinstance(self.function, CPUDispatcher)

    def __call__(
        self, y: np.ndarray, scores: np.ndarray, query_boundaries: np.ndarray, query_ids: np.ndarray,
        query_weights: np.ndarray | None = None,
    ) -> float:  # fmt: skip
        """The metric of one set (float64 ``y`` and ``scores`` of shape (n_rows,), grouped by
        query); a function of one query is averaged over the queries weighted by
        ``query_weights`` (float64, (n_queries,)) when given, a function of the whole set
        sees no weights."""
        y = np.ascontiguousarray(y, dtype=np.float64)
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        if self.compiled:
            values = np.empty(len(query_boundaries) - 1)
            try:
                # copies: a function that writes to its inputs must not change the caller's labels or scores
                _each_query_value(self.function, y.copy(), scores.copy(), np.asarray(query_boundaries, dtype=np.int64), values)
            except TypingError as error:  # numba's words name its own kernel, not the caller's function
                raise TypeError(
                    f"eval_metric {self.name} must return a float for one query's (y, scores), float64 arrays; numba "
                    f"could not compile it so: {str(error).splitlines()[0]}"
                ) from error
            except SystemError as error:  # numba's wrapper of an exception the function raised
                raise user_function_error(error, f"eval_metric {self.name}") from error.__cause__
            value = mean_over_queries(values, query_weights)
        else:
            value = self.function(y.copy(), scores.copy(), np.array(query_boundaries, dtype=np.int64), np.array(query_ids))
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise TypeError(f"eval_metric {self.name} must return a real number; it returned {type(value).__name__}.")
        return float(value)
