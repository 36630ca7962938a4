"""Dtypes shared by the numba kernels and the coercion that enforces them.

Every distinct dtype, memory layout or read-only flag reaching a kernel is a new
numba compilation (seconds each: ``docs/design.md``, "Numba rules"), so arrays are
coerced here, at the Python boundary, to exactly one signature per argument.
"""

import numpy as np

FLOAT_DTYPE = np.float64
INDEX_DTYPE = np.int64

# One tree node as the predictor reads it (16 bytes): the split feature (-1 for a
# leaf), the left child (the right child is left + 1, relative to the tree's first
# node) and the raw-value threshold, which holds the value for a leaf, so that a
# traversal touches a single record per level.
NODE_DTYPE = np.dtype([("feature", np.int32), ("left", np.int32), ("threshold", np.float64)])


def as_kernel_array(array: np.ndarray, dtype: type) -> np.ndarray:
    """Return ``array`` as a C-contiguous, writeable array of ``dtype``.

    A copy is made only when needed. Writeability matters because numba types a
    read-only view (memmap, ``np.frombuffer``, broadcast) as a different signature.

    Parameters
    ----------
    array : ndarray
        Any array.
    dtype : numpy dtype
        The dtype the kernel was written for.

    Returns
    -------
    ndarray
        Same shape as ``array``; never a view that the caller could mutate through
        unless ``array`` already had the right dtype and layout.
    """
    array = np.ascontiguousarray(array, dtype=dtype)
    if not array.flags.writeable:
        array = array.copy()
    return array
