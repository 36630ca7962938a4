"""The one place where numba compilation flags are chosen.

Every kernel of the package is compiled with ``nogil=True`` (forests run trees in
joblib threads, see ARCHITECTURE.md §4), ``cache=True`` (a cold compile costs
1.5-4.5 s per kernel on two cores, §7.5) and ``fastmath=False`` (metric values and
split gains must be reproducible bit for bit).

``NUMBA_DISABLE_JIT=1`` is honoured by numba itself: :func:`jit` then returns the
plain Python function, which the test-suite uses to check that the compiled and
interpreted kernels agree.
"""

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

JIT_OPTIONS = {"nogil": True, "cache": True, "fastmath": False}

# ``array[nowrap(i)]``: an index numba need not wrap around. Numba maps a negative
# signed index to ``i + n`` (a compare and a select on every access, which also
# lengthens the dependent chain of a gather); an unsigned one it uses as it is. Only
# for indices known to be non-negative, and only at the index itself: arithmetic
# mixing uint64 with int64 is typed float64 by numba. Measured on the predictor
# (100 fully grown trees x 50k rows, one thread): 0.75 -> 0.54 s.
nowrap = np.uint64


def jit(function: Callable | None = None, *, refcounted: bool = True, **overrides: Any) -> Any:
    """Compile ``function`` in nopython mode with the package's flags.

    Usable bare (``@jit``) or with overrides (``@jit(inline="always")``).

    ``refcounted=False`` compiles the kernel without numba's reference counting
    (numba's ``_nrt`` option). Numba counts a reference each time an inlined helper
    binds an array argument and releases it where that binding dies; when the
    binding dies inside a branch that joins again (an ``if`` without ``else``, a
    short-circuit ``and``), its pruning pass keeps both calls, so every helper call
    of a hot loop costs two out-of-line atomic updates per array (12 ns against
    1.3 ns for a one-line helper, measured). A kernel that only reads and writes
    arrays its caller holds needs no counts; numba refuses to compile an allocation
    in it, so the option cannot leak memory. The per-node and per-feature kernels
    of the tree builder are compiled so; ``build_tree`` itself allocates and is
    not. Measured on MQ2008 Fold1, one thread, same models: RF-list 109 -> 82 ms
    per tree with ``listwise_sweep`` alone uncounted (the counts were a quarter of
    its profile); RF-point 12.9 -> 10.8 ms per tree (the kernels' entry and exit
    counts, per feature of every node).
    """
    options = {**JIT_OPTIONS, **overrides}
    if not refcounted:
        options["_nrt"] = False
    if function is None:
        return numba.njit(**options)
    return numba.njit(function, **options)
