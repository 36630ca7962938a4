"""The one place where numba compilation flags are chosen.

Every kernel of the package is compiled with ``nogil=True`` (forests run trees in
joblib threads), ``cache=True`` (a cold compile costs seconds per kernel) and
``fastmath=False`` (metric values and split gains must be reproducible bit for bit);
``docs/design.md``, "Numba rules", gives the measurements behind each rule.

``NUMBA_DISABLE_JIT=1`` is honoured by numba itself: :func:`jit` then returns the
plain Python function, which the test-suite uses to check that the compiled and
interpreted kernels agree.
"""

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from . import compile_gc

# Before any kernel of the package compiles: the collector's thresholds during compiles.
compile_gc.install()

# ``_nrt`` (reference counting) is always given, here for the ``@overload`` implementations
# that take these options too: left unset, numba compiles a kernel with its first caller's.
JIT_OPTIONS = {"nogil": True, "cache": True, "fastmath": False, "_nrt": True}

# ``array[nowrap(i)]``: an index numba need not wrap around. Numba maps a negative
# signed index to ``i + n`` (a compare and a select on every access, which also
# lengthens the dependent chain of a gather); an unsigned one it uses as it is. Only
# for indices known to be non-negative, and only at the index itself: arithmetic
# mixing uint64 with int64 is typed float64 by numba.
nowrap = np.uint64


def jit(
    function: Callable | None = None, *, refcounted: bool = True, callable_from_python: bool = True, **overrides: Any
) -> Any:
    """Compile ``function`` in nopython mode with the package's flags.

    Usable bare (``@jit``) or with overrides (``@jit(inline="always")``).

    ``refcounted=False`` compiles the kernel without numba's reference counting
    (numba's ``_nrt`` option). Numba counts a reference each time a kernel binds an
    array (an argument of an inlined helper, a field of a bundle) and releases it
    where that binding dies: two out-of-line atomic updates per array, so a per-row
    or per-node loop that touches bundles pays them at every step. A kernel that
    only reads and writes arrays its caller holds needs no counts; numba refuses to
    compile an allocation in it, so the option cannot leak memory. ``build_tree``
    and its per-node and per-feature kernels are compiled so: the Python side
    allocates a tree's memory. The option is always handed to numba: a kernel that left
    it unset would compile with the flags of its first caller, and its cache would serve
    that code to every caller, so a kernel called from one without counts declares
    ``refcounted=False`` too.

    ``callable_from_python=False`` compiles no CPython wrapper (numba's
    ``no_cpython_wrapper``): the kernel can only be called from other kernels. The
    wrapper unboxes every argument, and for the engine's kernels, whose arguments
    are bundles of arrays, it is a sizeable share of a cold compile.

    ``docs/design.md``, "Numba rules", gives the measurements behind both.
    """
    options = {**JIT_OPTIONS, **overrides, "_nrt": refcounted}
    if not callable_from_python:
        options["no_cpython_wrapper"] = True
    if function is None:
        return numba.njit(**options)
    return numba.njit(function, **options)
