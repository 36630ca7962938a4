"""Checks of relevance labels and scores shared by estimators and metrics.

Each check names the offending argument in its error, copies rather than mutates,
and returns float64 C-contiguous arrays ready for the kernels.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import DataConversionWarning

from .._numba.dtypes import FLOAT_DTYPE, as_kernel_array
from .queries import stacklevel_outside_package


def as_real_array(values: object, name: str) -> np.ndarray:
    """``values`` as a float64 array (any shape), refusing by ``name`` what is not real
    numbers: a complex value would lose its imaginary part in the cast, which numpy only
    warns about."""
    try:
        dtype = getattr(values, "dtype", None)
        if dtype is None:  # a list, or an array-like that only converts (not np.iscomplexobj: no array function)
            values = np.asarray(values)
            dtype = values.dtype
        if not (isinstance(dtype, np.dtype) and dtype.kind == "c"):  # extension dtypes hold no numpy complex
            return np.asarray(values, dtype=FLOAT_DTYPE)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric; converting it to float64 failed: {exc}") from None
    raise ValueError(
        f"Complex data not supported: {name} holds complex values, whose imaginary parts float64 would drop; give real "
        "numbers."
    )


def _as_1d_float(values: object, name: str, warn_column: bool = False, column: bool = True) -> np.ndarray:
    array = as_real_array(values, name)
    if column and array.ndim == 2 and array.shape[1] == 1:
        if warn_column:  # as scikit-learn's single-output estimators warn
            warnings.warn(
                f"A column-vector {name} was passed when a 1d array was expected. Please change the shape of {name} to "
                "(n_samples,), for example using ravel().",
                DataConversionWarning,
                stacklevel=stacklevel_outside_package(),
            )
        array = array[:, 0]
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D with one value per row; got shape {array.shape}.")
    return array


def check_relevance(
    y: object, *, name: str, n_samples: int | None = None, against: str = "X", grades: bool = False,
    warn_column: bool = False,
) -> np.ndarray:
    """Validate relevance labels.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Relevance of each row.
    name : str
        Argument name used in errors (``"y"``, ``"y_true"``).
    n_samples : int, optional
        Required length (that of ``against``).
    against : str
        Name of the array ``y`` must match in length.
    grades : bool
        Also require integer values (graded relevance 0, 1, 2, ...), as estimators
        that count grades do.
    warn_column : bool
        Warn (``DataConversionWarning``) when ``y`` is a column vector, which is
        flattened either way: an estimator's ``fit`` does, as scikit-learn's do.

    Returns
    -------
    ndarray of shape (n_samples,), dtype float64

    Raises
    ------
    ValueError
        Wrong shape or length, empty, non-finite, negative, or (``grades=True``)
        non-integer values.
    """
    labels = _as_1d_float(y, name, warn_column)
    if n_samples is not None and len(labels) != n_samples:
        raise ValueError(f"{name} has {len(labels)} entries but {against} has {n_samples} rows.")
    if len(labels) == 0:
        raise ValueError(f"{name} is empty; at least one row is needed.")
    if not np.isfinite(labels).all():
        raise ValueError(f"{name} contains non-finite values (NaN or inf); relevance labels must be finite.")
    if (labels < 0).any():
        raise ValueError(
            f"{name} contains negative values (min {labels.min():g}); relevance labels must be >= 0."
        )
    if grades and (labels != np.floor(labels)).any():
        raise ValueError(
            f"{name} must hold integer relevance grades (0, 1, 2, ...); "
            f"found non-integer values such as {labels[labels != np.floor(labels)][0]:g}."
        )
    return as_kernel_array(labels, FLOAT_DTYPE)


def check_scores(y_score: object, *, n_samples: int, name: str = "y_score", against: str = "y_true") -> np.ndarray:
    """Validate predicted scores: 1-D, right length, no NaN (±inf are orderable and allowed).

    Returns
    -------
    ndarray of shape (n_samples,), dtype float64
    """
    scores = _as_1d_float(y_score, name)
    if len(scores) != n_samples:
        raise ValueError(f"{name} has {len(scores)} entries but {against} has {n_samples}.")
    if np.isnan(scores).any():
        raise ValueError(f"{name} contains NaN; scores must be orderable.")
    return as_kernel_array(scores, FLOAT_DTYPE)


def holds_two_gains(
    y: np.ndarray, query_starts: np.ndarray, gain: str | np.ndarray, query_weights: np.ndarray | None = None
) -> bool:  # fmt: skip
    """Whether a query of the grouped grades ``y`` (float64, (n_rows,)), whose queries start
    at ``query_starts`` (int64, (n_queries,)), holds two grades of different gain: the only
    queries whose NDCG depends on the ranking. ``gain`` (``check_gain``): ``"exp"`` and
    ``"linear"`` rise with the grade; a table (float64, (n_grades,), the grades checked
    against it) may give two grades one gain. ``query_weights`` (float64, (n_queries,), or
    None): a query of weight 0 does not count, as a weighted mean of NDCG gives it none."""
    if len(query_starts) == 0:
        return False
    if isinstance(gain, np.ndarray):
        y = gain[y.astype(np.int64)]
    spread = np.maximum.reduceat(y, query_starts) > np.minimum.reduceat(y, query_starts)
    if query_weights is not None:
        spread &= query_weights > 0
    return bool(spread.any())


def check_sample_weight(sample_weight: object, *, n_samples: int, against: str = "X", all_zero: bool = False) -> np.ndarray:
    """Validate per-row weights: 1-D, one per row of ``against``, finite, >= 0, not all zero
    (unless ``all_zero``: one partition of a partitioned fit, whose others may weigh).

    Returns
    -------
    ndarray of shape (n_samples,), dtype float64
    """
    # A column of weights is refused, not flattened, as scikit-learn's check refuses it:
    # an (n, 1) array is more often a frame's wrong column than a deliberate shape.
    weights = _as_1d_float(sample_weight, "sample_weight", column=False)
    if len(weights) != n_samples:
        raise ValueError(f"sample_weight has {len(weights)} entries but {against} has {n_samples} rows.")
    if not np.isfinite(weights).all():
        raise ValueError("sample_weight contains non-finite values (NaN or inf).")
    if (weights < 0).any():
        raise ValueError("sample_weight contains negative values; weights must be >= 0.")
    if not all_zero and not weights.any():
        raise ValueError("sample_weight is zero everywhere; at least one row needs a positive weight.")
    return as_kernel_array(weights, FLOAT_DTYPE)


# The widest range of weights, in units of the fit's weight unit: a row at most this many
# units heavy keeps every sum a criterion squares (a Newton gain's gradient sum, the
# variance criterion's weighted sum of targets) far from float64's overflow.
MAX_WEIGHT_UNITS = 2.0**100


def weight_unit(lightest: float, heaviest: float) -> float:
    """The fit's unit of weight: the lightest positive weight, or ``heaviest / 2**100`` when
    the weights span more than ``2**100`` (``MAX_WEIGHT_UNITS``).

    Both bounds combine exactly over partitions (a minimum and a maximum), so a fit over
    partitions gets the unit an in-memory fit gets.

    Parameters
    ----------
    lightest, heaviest : float
        The smallest positive and the largest weight.

    Returns
    -------
    float
    """
    return max(lightest, heaviest / MAX_WEIGHT_UNITS)


def normalize_sample_weight(weights: np.ndarray) -> np.ndarray:
    """Rescale validated weights to the fit's unit of weight (:func:`weight_unit`; a new array).

    The unit is the lightest positive weight: every weight threshold of the estimators
    (``min_child_weight``, ...; ``min_samples_leaf`` counts rows, whatever their weight)
    then counts rows of the lightest weight, whatever unit the weights came in, and
    multiplying all weights by a power of two changes no model (by another constant, the
    weights change by the rounding of the products, which can flip exact ties between
    splits). Weights whose smallest positive
    value is 1 (unit or integer weights, which count as repeated rows) are returned
    unchanged, bit for bit. Weights spanning more than ``2**100`` get the heaviest over
    ``2**100`` as their unit instead, so that no row weighs more than ``2**100`` units and
    a fit's sums, squared by the criteria, stay finite for any weights whose ratio fits in
    a float64; rows lighter than that unit then weigh less than one row.

    Parameters
    ----------
    weights : ndarray of shape (n_samples,), float64
        Finite, >= 0, not all zero (``check_sample_weight``).

    Returns
    -------
    ndarray of shape (n_samples,), float64
    """
    return weights / weight_unit(weights[weights > 0].min(), weights.max())


def check_flag(name: str, value: object) -> bool:
    """``value`` as a bool, or a ValueError naming ``name``: a string such as ``"False"``
    or ``"auto"`` would read as True."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}.")
    return bool(value)


def check_positive_int(name: str, value: object, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``, or a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


GAIN_NAMES = ("exp", "linear")


def check_gain(gain: object, *, name: str) -> str | np.ndarray:
    """Validate a gain of the grades: ``"exp"`` (``2**l - 1``), ``"linear"`` (``l``) or a table.

    A table gives grade ``g`` the gain ``table[g]`` (LightGBM's ``label_gain``): one
    finite gain >= 0 per grade 0, 1, 2, ..., not decreasing with the grade, because
    every ideal ranking in the package orders documents by grade.

    Parameters
    ----------
    gain : str or array-like of shape (n_grades,)
    name : str
        Argument name used in errors (``"label_gain"``, ``"gain"``).

    Returns
    -------
    str or ndarray of shape (n_grades,), float64
        The name, or the table as a new array.
    """
    if isinstance(gain, str):
        if gain not in GAIN_NAMES:
            raise ValueError(f"{name} must be 'exp', 'linear' or an array of gains, one per grade; got {gain!r}.")
        return gain
    if any(isinstance(value, (bool, np.bool_)) for value in np.asarray(gain, dtype=object).ravel()):
        raise ValueError(
            f"{name} must hold numbers, one gain per grade, not booleans (read as gains of 0 and 1); got {gain!r}."
        )
    try:
        table = np.array(gain, dtype=FLOAT_DTYPE)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be 'exp', 'linear' or an array of gains, one per grade; got {gain!r}.") from None
    if table.ndim != 1 or len(table) == 0:
        raise ValueError(f"{name} as an array holds one gain per grade 0, 1, 2, ...; got shape {table.shape}.")
    if not np.isfinite(table).all() or (table < 0).any():
        raise ValueError(f"{name} must hold finite gains >= 0; got {table.tolist()}.")
    if (np.diff(table) < 0).any():
        raise ValueError(
            f"{name} must not decrease with the grade (the ideal rankings order documents by grade); "
            f"got {table.tolist()}."
        )
    return table


def check_grades_for_gain(labels: np.ndarray, gain: str | np.ndarray, *, name: str, gain_name: str) -> None:
    """Refuse labels that a gain table (``check_gain``) has no gain for, naming both arguments.

    Parameters
    ----------
    labels : ndarray of shape (n_samples,), float64
        Validated labels (``check_relevance``).
    gain : str or ndarray
        ``check_gain``'s result; names accept every label.
    name, gain_name : str
        The labels' and the gain's argument names.
    """
    if isinstance(gain, str):
        return
    fractional = labels != np.floor(labels)
    if fractional.any():
        raise ValueError(
            f"{gain_name} is a table of gains by integer grade, and {name} holds {labels[fractional][0]:g}: give "
            f"integer grades, or a gain by name ('exp' or 'linear'), which takes any grade."
        )
    outside = labels >= len(gain)
    if outside.any():
        raise ValueError(
            f"{gain_name} gives gains to the grades 0 to {len(gain) - 1}; {name} holds {labels[outside][0]:g}. "
            f"Give {gain_name} one gain per grade up to the largest in {name}."
        )


_LARGEST_DOUBLE = float(np.finfo(np.float64).max)


def check_max_grade(
    max_grade: object, labels: np.ndarray | None, gain: str | np.ndarray | None, gain_name: str = "gain"
) -> float | None:
    """ERR's largest grade ``g_max``: ``max_grade``, or the largest label when None.

    Parameters
    ----------
    max_grade : float or None
    labels : ndarray of shape (n_samples,), float64, or None
        Validated labels (``check_relevance``); None where they come later (a scorer
        being built), which checks ``max_grade`` against grade 0.
    gain : str, ndarray or None
        ``check_gain``'s result (a table must give ``max_grade`` a gain), or None.
    gain_name : str
        The gain's argument name.

    Returns
    -------
    float, or None when both ``max_grade`` and ``labels`` are None

    Raises
    ------
    ValueError
        ``max_grade`` not a number at least the largest label, or beyond the gain table.
    """
    largest = 0.0 if labels is None else float(labels.max())
    if max_grade is None:
        return None if labels is None else largest
    valid = not isinstance(max_grade, bool) and isinstance(max_grade, Real)
    if valid:
        try:  # as a Python float: numpy compares a float32 with the largest double in float32, which overflows
            valid = largest <= float(max_grade) <= _LARGEST_DOUBLE
        except OverflowError:  # an int beyond float64
            valid = False
    if not valid:
        bound = "0" if labels is None else f"the largest label ({largest:g})"
        raise ValueError(f"max_grade must be a finite number >= {bound}; got {max_grade!r}.")
    if gain is not None:
        check_grades_for_gain(np.array([float(max_grade)]), gain, name="max_grade", gain_name=gain_name)
    return float(max_grade)
