"""A user's own ranking loss over queries (``objectives/__init__.py``).

The gradient-boosting libraries hand a custom objective the labels and scores of all
rows but not the queries they belong to (LightGBM's ``LGBMRanker`` passes no ``group``,
XGBoost no group pointer, CatBoost no group id), so a loss over queries cannot be written
there without side channels. Here the function gets the query structure: the offsets
of each query's rows (the rows grouped by query) and the query ids.

Two forms:

* a Python callable ``function(y, scores, query_boundaries, query_ids) -> (gradients,
  hessians)`` over all rows at once (numpy vectorises it, or it loops over queries);
* a numba-compiled function ``function(y, scores, gradients, hessians)`` over *one*
  query's rows, writing that query's gradients and hessians in place; forestrank runs it
  over the queries in parallel (``_each_query``), so a loss over pairs or lists costs
  what a built-in one does.
"""

import numba
import numpy as np
from numba.core.registry import CPUDispatcher

from .._numba.user_functions import user_function_error, user_function_name
from ._base import RankingObjective


@numba.njit(parallel=True, nogil=True, cache=False)  # takes the user's function: one compile per function
def _each_query(function, labels, scores, query_boundaries, gradients, hessians):
    """Run ``function`` on every query's rows, the queries in parallel."""
    for q in numba.prange(len(query_boundaries) - 1):
        start = query_boundaries[q]
        end = query_boundaries[q + 1]
        function(labels[start:end], scores[start:end], gradients[start:end], hessians[start:end])


class CustomObjective(RankingObjective):
    """A loss given as a function of the grades, the scores and the queries (module docstring).

    Parameters
    ----------
    function : callable or numba-compiled function
        ``function(y, scores, query_boundaries, query_ids)`` returning ``(gradients,
        hessians)`` (float arrays of shape (n_rows,), rows grouped by query: query ``i``
        holds rows ``query_boundaries[i]:query_boundaries[i + 1]``, of id
        ``query_ids[i]``); or an ``@numba.njit`` function ``function(y, scores,
        gradients, hessians)`` of one query's rows, filling its gradients and hessians.
        ``gradients`` are ``dL/ds``, ``hessians`` a positive curvature (the leaf values
        are Newton steps ``-sum g / sum h``).
    """

    takes_query_ids = True

    def __init__(self, function: object) -> None:
        self.function = function

    @property
    def compiled(self) -> bool:
        """Whether ``function`` is a numba function of one query (run by ``_each_query``)."""
        return isinstance(self.function, CPUDispatcher)

    def prepare(self, labels: np.ndarray, query_boundaries: np.ndarray, query_ids: np.ndarray | None = None) -> None:
        super().prepare(labels, query_boundaries)
        n_queries = len(self.query_boundaries_) - 1
        self.query_ids_ = np.arange(n_queries) if query_ids is None else np.asarray(query_ids)

    def gradients(self, scores: np.ndarray, gradients: np.ndarray, hessians: np.ndarray) -> None:
        if self.compiled:
            gradients[:] = np.nan  # rows the function leaves unwritten are caught below
            hessians[:] = np.nan
            try:
                # copies: a function that writes to its inputs must not change the fit's labels or scores
                _each_query(self.function, self.labels_.copy(), scores.copy(), self.query_boundaries_, gradients, hessians)
            except numba.core.errors.TypingError as error:
                raise TypeError(
                    f"the compiled objective {self._name()} must take (y, scores, gradients, hessians) of one query, "
                    "float64 arrays, and fill the last two in place; numba could not call it so (its typing error is "
                    "chained below)."
                ) from error
            except SystemError as error:  # numba's wrapper of an exception the function raised
                raise user_function_error(error, f"the compiled objective {self._name()}") from error.__cause__
        else:
            result = self.function(self.labels_.copy(), scores.copy(), self.query_boundaries_.copy(), self.query_ids_.copy())
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TypeError(
                    f"the objective {self._name()} must return (gradients, hessians); it returned {type(result).__name__}."
                )
            for name, values, out in (("gradients", result[0], gradients), ("hessians", result[1], hessians)):
                values = self._numbers(name, values)
                if values.shape != out.shape:
                    raise ValueError(
                        f"the objective {self._name()} returned {name} of shape {values.shape}; it must return one per "
                        f"row, shape {out.shape}."
                    )
                out[:] = values
        for name, values in (("gradients", gradients), ("hessians", hessians)):
            if not np.isfinite(values).all():
                raise ValueError(
                    f"the objective {self._name()} gave non-finite {name} (NaN or inf) for "
                    f"{int((~np.isfinite(values)).sum())} rows: every row needs a finite value"
                    + (" (a compiled function must write every row of its query)." if self.compiled else ".")
                )
        if (hessians < 0).any():
            raise ValueError(f"the objective {self._name()} gave negative hessians; they must be >= 0 (a curvature).")

    def _numbers(self, name: str, values: object) -> np.ndarray:
        """The function's ``name`` output ("gradients", "hessians") as float64; refused by
        name when it is not real numbers (complex values would lose their imaginary part)."""
        if np.iscomplexobj(values):
            raise ValueError(f"the objective {self._name()} returned complex {name}; they must be real numbers.")
        try:
            return np.asarray(values, dtype=float)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"the objective {self._name()} returned {name} that are not numbers, one per row: {error}"
            ) from error

    def _name(self) -> str:
        return user_function_name(self.function)
