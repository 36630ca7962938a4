"""Query ids to contiguous query blocks: the one place ``qid`` becomes ``query_boundaries``.

Users pass one query id per row, in any order and of any comparable type (integers,
strings). Kernels want rows of a query to be contiguous and described by int64
offsets ``query_boundaries`` (``n_queries + 1`` entries). :func:`group_queries` builds
that layout with a stable sort, so rows of a query keep their input order (the
``ties="input_order"`` metric convention depends on it), and
:meth:`QueryGroups.ungroup` puts per-row results back in the caller's order.

Queries are always ordered by sorted query id, so per-query outputs of two calls on
the same ``qid`` values line up (paired significance tests rely on this).
"""

import contextlib
import contextvars
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path

import numpy as np

from .._numba.dtypes import INDEX_DTYPE


_PACKAGE_DIR = str(Path(__file__).resolve().parents[1])  # forestrank/
# True inside missing_qid_warned(). A context variable rather than a warnings filter: the
# filters are the whole process's, and threads restoring them around their own blocks
# (before Python 3.14) leave each other's filters in place for good.
_MISSING_QID_WARNED = contextvars.ContextVar("forestrank_missing_qid_warned", default=False)


@contextlib.contextmanager
def missing_qid_warned() -> Iterator[None]:
    """Inside the block, :func:`group_queries` given no ``qid`` does not warn: an outer
    estimator has warned its caller once (``AveragedRanker``'s members)."""
    token = _MISSING_QID_WARNED.set(True)
    try:
        yield
    finally:
        _MISSING_QID_WARNED.reset(token)


def stacklevel_outside_package(through: tuple[str, ...] = ()) -> int:
    """``stacklevel`` that makes a warning point at the first caller outside forestrank.

    The depth differs per entry point (a metric, ``fit``, ``score``, a scorer, a
    splitter), so it is counted rather than fixed. ``through`` names the top-level
    packages that call forestrank back on the user's behalf (``"skops"``, ``"joblib"``
    when they load a model), whose frames are passed over too.
    """
    frame = sys._getframe(1)
    level = 1
    while frame is not None and (
        str(Path(frame.f_code.co_filename).resolve()).startswith(_PACKAGE_DIR)
        or frame.f_globals.get("__name__", "").partition(".")[0] in through
    ):
        frame = frame.f_back
        level += 1
    return level


class MissingQidWarning(UserWarning):
    """Emitted when no ``qid`` is given and all rows are treated as a single query."""


@dataclass(frozen=True)
class QueryGroups:
    """Rows grouped by query.

    Attributes
    ----------
    query_ids : ndarray of shape (n_queries,)
        The distinct query ids, sorted; dtype as given by the caller.
    query_boundaries : ndarray of shape (n_queries + 1,), dtype int64
        Query ``i`` occupies grouped rows ``query_boundaries[i]:query_boundaries[i+1]``.
    order : ndarray of shape (n_samples,), dtype int64, or None
        ``rows[order]`` is the grouped layout; ``None`` when the input was already
        grouped with increasing query ids (no copy is needed then).
    """

    query_ids: np.ndarray
    query_boundaries: np.ndarray
    order: np.ndarray | None

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def n_samples(self) -> int:
        return int(self.query_boundaries[-1])

    def group(self, array: np.ndarray) -> np.ndarray:
        """Rows of ``array`` (first axis) in grouped order; a new array unless already grouped."""
        return array if self.order is None else array[self.order]

    def ungroup(self, values: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`group`: per-row ``values`` back in the caller's row order."""
        if self.order is None:
            return values
        restored = np.empty_like(values)
        restored[self.order] = values
        return restored

    def grouped_query_index(self) -> np.ndarray:
        """Position (0 .. n_queries-1) of each row's query, rows in grouped order; int64."""
        return np.repeat(np.arange(self.n_queries, dtype=INDEX_DTYPE), self.query_sizes())

    def query_index(self) -> np.ndarray:
        """Position (0 .. n_queries-1) of each row's query, in the caller's row order; int64."""
        return self.ungroup(self.grouped_query_index())

    def query_sizes(self) -> np.ndarray:
        """Number of rows of each query, shape (n_queries,), int64."""
        return np.diff(self.query_boundaries)

    def query_means(self, grouped_values: np.ndarray) -> np.ndarray:
        """Mean of per-row values over each query (a query's weight from its rows' weights).

        Parameters
        ----------
        grouped_values : ndarray of shape (n_samples,), float64, rows in grouped order

        Returns
        -------
        ndarray of shape (n_queries,), float64
        """
        return mean_per_query(grouped_values, self.query_boundaries)


def mean_per_query(grouped_values: np.ndarray, query_boundaries: np.ndarray) -> np.ndarray:
    """Mean of per-row values over each query of rows grouped by query; a query whose rows
    hold one value gets that value exactly (a sum divided by the count may round off it),
    so that weights alike over a set stay alike per query (``mean_over_queries``).

    Parameters
    ----------
    grouped_values : ndarray of shape (n_samples,), float64
    query_boundaries : ndarray of shape (n_queries + 1,), int64
        Each query's first row, then ``n_samples``; no query empty.

    Returns
    -------
    ndarray of shape (n_queries,), float64
    """
    starts = query_boundaries[:-1]
    first = grouped_values[starts]
    alike = np.minimum.reduceat(grouped_values, starts) == np.maximum.reduceat(grouped_values, starts)
    return np.where(alike, first, np.add.reduceat(grouped_values, starts) / np.diff(query_boundaries))


def boundaries_of_grouped(query_of_row: np.ndarray) -> np.ndarray:
    """``query_boundaries`` (int64, n_present_queries + 1) of rows grouped by query.

    ``query_of_row`` (int, non-decreasing) is each row's query position; positions
    with no row (e.g. after selecting a subset of the rows) get no query.
    """
    sizes = np.unique(query_of_row, return_counts=True)[1]
    return np.concatenate(([0], np.cumsum(sizes))).astype(INDEX_DTYPE)


def check_qid(qid: object, n_samples: int, *, against: str = "X", name: str = "qid") -> np.ndarray:
    """Validate a query-id vector and return it as a 1-D ndarray; errors call it ``name``.

    Raises
    ------
    ValueError
        If ``qid`` is not 1-D, its length differs from ``n_samples`` (the length of
        ``against``) or it holds NaN, NaT or another missing value.
    TypeError
        If a list mixes strings with other types.
    """
    array = np.asarray(qid)
    if array.dtype.kind in "US" and not isinstance(qid, np.ndarray):
        # numpy turns ["a", 1] into ["a", "1"], silently merging query 1 with query "1".
        text_type = str if array.dtype.kind == "U" else bytes
        if not all(isinstance(value, text_type) for value in qid):
            raise TypeError(f"{name} mixes strings with other types; use one type for all query ids.")
    if array.dtype.kind == "f" and array.ndim == 1 and isinstance(qid, list | tuple):
        # numpy turns [2**60, 2**60 + 1, 0.5] into floats, silently merging the two integer ids;
        # only ids of 2**53 or more can be integers a float does not hold.
        beyond = np.flatnonzero(np.abs(array) >= 2.0**53).tolist()
        inexact = next((qid[row] for row in beyond if _integer_beyond_float(qid[row])), None)
        if inexact is not None:
            raise TypeError(
                f"{name} mixes floats with integers that no float holds exactly (such as {int(inexact)}): as floats, "
                "distinct query ids would merge. Use one type for all query ids."
            )
    qid = array
    if qid.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array with one query id per row; got shape {qid.shape}.")
    if len(qid) != n_samples:
        raise ValueError(
            f"{name} has {len(qid)} entries but {against} has {n_samples} rows; "
            "pass one query id per row."
        )
    if qid.dtype.kind in "fc" and np.isnan(qid).any():
        raise ValueError(f"{name} contains NaN; every row needs a query id.")
    if qid.dtype.kind in "mM" and np.isnat(qid).any():
        raise ValueError(
            f"{name} contains NaT (a missing value, at row {int(np.flatnonzero(np.isnat(qid))[0])}); every row needs a query id."
        )
    if qid.dtype.kind == "O":
        missing = next((row for row, value in enumerate(qid) if _is_missing(value)), None)
        if missing is not None:
            raise ValueError(
                f"{name} contains a missing value ({qid[missing]!r} at row {missing}); every row needs a query id."
            )
    return qid


def _integer_beyond_float(value: object) -> bool:
    """Whether ``value`` is an integer (not a bool) that float64 rounds to another value."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Integral):
        return False
    return int(float(value)) != int(value)


def _is_missing(value: object) -> bool:
    """None, a float NaN, or pandas' NA / NaT (which raise on comparison or are unequal to themselves)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:  # pandas.NA: its truth value is ambiguous
        return True


def group_queries(qid: object, n_samples: int, *, caller: str, against: str = "X") -> QueryGroups:
    """Group rows by query id with a stable sort.

    Parameters
    ----------
    qid : array-like of shape (n_samples,) or None
        Query id of each row, in any order. ``None`` treats all rows as one query and
        emits :class:`MissingQidWarning` naming ``caller`` (not inside
        :func:`missing_qid_warned`).
    n_samples : int
        Number of rows.
    caller : str
        Name used in the warning, e.g. ``"RFPointRanker.fit"``.
    against : str
        Name of the array whose length ``qid`` must match, used in errors.

    Returns
    -------
    QueryGroups

    Raises
    ------
    TypeError
        If the ids cannot be ordered (for instance a mix of strings and numbers).
    """
    if qid is None:
        if not _MISSING_QID_WARNED.get():
            warnings.warn(
                f"{caller} got no qid: all {n_samples} rows are treated as ONE query. "
                "Pass qid=<one query id per row> (with scikit-learn metadata routing: "
                "sklearn.set_config(enable_metadata_routing=True)).",
                MissingQidWarning,
                stacklevel=stacklevel_outside_package(),
            )
        return QueryGroups(
            query_ids=np.zeros(1, dtype=INDEX_DTYPE),
            query_boundaries=np.array([0, n_samples], dtype=INDEX_DTYPE),
            order=None,
        )
    qid = check_qid(qid, n_samples, against=against)
    if n_samples == 0:
        return QueryGroups(qid[:0], np.zeros(1, dtype=INDEX_DTYPE), None)
    try:
        return _group_sorted(qid)
    except TypeError as exc:
        raise TypeError(
            "qid values must be mutually comparable (all integers or all strings); "
            f"ordering them failed: {exc}"
        ) from None


def _group_sorted(qid: np.ndarray) -> QueryGroups:
    n_samples = len(qid)
    # Fast path: rows already contiguous per query with increasing ids (LETOR files).
    run_starts = np.flatnonzero(qid[1:] != qid[:-1]) + 1
    run_ids = qid[np.concatenate(([0], run_starts))]
    if np.all(run_ids[1:] > run_ids[:-1]):
        boundaries = np.concatenate(([0], run_starts, [n_samples])).astype(INDEX_DTYPE)
        return QueryGroups(run_ids, boundaries, None)

    query_ids, inverse = np.unique(qid, return_inverse=True)
    order = np.argsort(inverse, kind="stable").astype(INDEX_DTYPE, copy=False)
    counts = np.bincount(inverse, minlength=len(query_ids))
    boundaries = np.zeros(len(query_ids) + 1, dtype=INDEX_DTYPE)
    np.cumsum(counts, out=boundaries[1:])
    return QueryGroups(query_ids, boundaries, order)
