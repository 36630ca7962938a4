"""Comparisons the tests of several packages share."""

import tracemalloc

import numpy as np


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays hold the same values with the same sign on every zero: for floats
    without NaN, the same bits (``-0.0 == 0.0`` alone would hide a changed order of additions)."""
    return np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))


def run_estimator_check(estimator: object, check: object) -> None:
    """Run one of scikit-learn's estimator checks, whose data passes no ``qid`` (one query:
    the ``MissingQidWarning`` is expected there)."""
    import warnings

    from forestrank import MissingQidWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingQidWarning)
        check(estimator)


def staged_prediction_peak(model: object, rows: np.ndarray) -> int:
    """Peak bytes traced while ``model.staged_predict(rows)`` is consumed, its kernels
    loaded beforehand by a first stage of two rows."""
    next(model.staged_predict(rows[:2]))
    tracemalloc.start()
    for _ in model.staged_predict(rows):
        pass
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak
