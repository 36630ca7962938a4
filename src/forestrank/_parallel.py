"""Splitting rows across joblib threads for the row-wise ``nogil`` kernels (ARCHITECTURE.md §4)."""

import numpy as np
from joblib import effective_n_jobs


def row_ranges(n_rows: int, n_jobs: int | None, min_rows: int, align: int = 1) -> list[tuple[int, int]]:
    """Contiguous ``(start, stop)`` ranges covering ``range(n_rows)``, one per thread.

    At most ``effective_n_jobs(n_jobs)`` ranges, each of at least ``min_rows`` rows
    (fewer rows give one range: a thread costs more than it saves); every start is a
    multiple of ``align``, so kernels that work in blocks of rows see whole blocks.
    """
    n_ranges = min(effective_n_jobs(n_jobs), max(1, n_rows // min_rows))
    bounds = np.linspace(0, n_rows // align, n_ranges + 1).astype(np.int64) * align
    bounds[-1] = n_rows
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
