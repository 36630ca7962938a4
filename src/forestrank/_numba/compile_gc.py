"""Python's cyclic garbage collector run less often while numba compiles a forestrank kernel.

A cold compile allocates millions of short-lived Python objects (numba's IR, copied at
every inlined helper, its type constraints, llvmlite's IR). At the interpreter's default
thresholds a collection of the youngest generation starts every 700 net allocations
and every tenth of those a collection of the middle one, which by then holds much of
the compile's IR: a sizeable share of a cold compile goes to collecting. For the length
of a compile the youngest generation's threshold is raised to ``COMPILE_THRESHOLD``, so
collections come more than ten times less often and still free the compile's cycles
as they go (``docs/design.md``, "Numba rules", and ``benchmarks/RESULTS.md``,
"Compilation", give the measurements, and why the collector is not disabled outright).
Nothing else changes.

The thresholds change for the outermost compile of a function of this package, the
compiles nested in it (numba's own helpers, the kernels it calls) included, and are
restored when it ends, even when it fails (numba sends the end event from a
``finally``). A user's own ``numba.njit`` functions compile under the user's thresholds.
"""

import gc
import threading

from numba.core import event

# Net allocations between two collections of the youngest generation during a compile
# (Python's default: 700); a larger value saved no more time.
COMPILE_THRESHOLD = 10_000

_PACKAGE = __name__.split(".", 1)[0]


class _CompileThresholds(event.Listener):
    """Raise the youngest generation's threshold on the start of the outermost compile
    of one of the package's kernels and restore the thresholds when it ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: tuple | None = None

    def on_start(self, ev: event.Event) -> None:
        with self._lock:
            if self._depth == 0:
                if not _is_ours(ev):
                    return
                self._saved = gc.get_threshold()
                gc.set_threshold(max(self._saved[0], COMPILE_THRESHOLD), *self._saved[1:])
            self._depth += 1

    def on_end(self, ev: event.Event) -> None:
        with self._lock:
            if self._depth == 0:
                return  # the end of a compile outside the package's
            self._depth -= 1
            if self._depth == 0:
                gc.set_threshold(*self._saved)
                self._saved = None


def _is_ours(ev: event.Event) -> bool:
    """Whether the compile event is for a function defined in this package."""
    dispatcher = (ev.data or {}).get("dispatcher")
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module == _PACKAGE or module.startswith(_PACKAGE + ".")


_LISTENER = _CompileThresholds()
_INSTALL_LOCK = threading.Lock()
_installed = []  # the listener, once registered


def install() -> None:
    """Register the listener with numba's compile events (once: later calls do nothing)."""
    with _INSTALL_LOCK:
        if not _installed:
            event.register("numba:compile", _LISTENER)
            _installed.append(_LISTENER)
