"""The collector's thresholds while numba compiles a kernel of the package (``_numba/compile_gc``)."""

import gc

import numba
import numpy as np
import pytest
from numba.core import event

from forestrank._numba import compile_gc
from forestrank._numba.jit import jit  # importing it installs the listener, as for every kernel


@pytest.fixture
def thresholds():
    """Python's thresholds set to known values for the test, and restored after it."""
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def _kernel_of(module_name):
    """A fresh jitted function that numba sees as defined in ``module_name``."""

    def add_one(x):
        return x + 1

    add_one.__module__ = module_name
    return jit(add_one, cache=False)


class _Recorder(event.Listener):
    """The youngest generation's threshold at the start of each compile."""

    def __init__(self):
        self.seen = []

    def on_start(self, ev):
        self.seen.append((ev.data["dispatcher"].py_func.__module__, gc.get_threshold()[0]))

    def on_end(self, ev):
        pass


def test_a_package_kernel_compiles_with_the_raised_threshold_and_restores_it(thresholds):
    recorder = _Recorder()
    with event.install_listener("numba:compile", recorder):
        # registered after the package's listener: it sees the thresholds that one set
        assert _kernel_of("forestrank._tree.probe")(np.int64(1)) == 2
    assert recorder.seen == [("forestrank._tree.probe", compile_gc.COMPILE_THRESHOLD)]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_users_kernel_compiles_with_the_users_thresholds(thresholds):
    recorder = _Recorder()
    with event.install_listener("numba:compile", recorder):
        assert _kernel_of("my_project.kernels")(np.int64(1)) == 2
    assert recorder.seen == [("my_project.kernels", 700)]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_failed_compile_restores_the_thresholds(thresholds):
    def broken(x):
        return x.no_such_attribute

    broken.__module__ = "forestrank._tree.probe"
    recorder = _Recorder()
    with event.install_listener("numba:compile", recorder), pytest.raises(numba.core.errors.TypingError):
        jit(broken, cache=False)(np.int64(1))
    assert recorder.seen == [("forestrank._tree.probe", compile_gc.COMPILE_THRESHOLD)]
    assert gc.get_threshold() == (700, 10, 10)


def _event(kind, module):
    dispatcher = type("Dispatcher", (), {"py_func": type("Function", (), {"__module__": module})})()
    return event.Event("numba:compile", kind, data={"dispatcher": dispatcher})


def test_nested_compiles_keep_the_threshold_until_the_outermost_ends(thresholds):
    """A user's kernel calling a package kernel: the raise starts with the package's
    compile; a package kernel calling numba's helpers: it lasts until the package's
    compile ends. A user's threshold above the raise is kept."""
    listener = compile_gc._CompileThresholds()
    start, end = event.EventStatus.START, event.EventStatus.END
    listener.on_start(_event(start, "my_project"))
    assert gc.get_threshold()[0] == 700
    listener.on_start(_event(start, "forestrank.ensemble"))
    listener.on_start(_event(start, "numba.np.arrayobj"))
    listener.on_end(_event(end, "numba.np.arrayobj"))
    assert gc.get_threshold() == (compile_gc.COMPILE_THRESHOLD, 10, 10)
    listener.on_end(_event(end, "forestrank.ensemble"))
    assert gc.get_threshold() == (700, 10, 10)
    listener.on_end(_event(end, "my_project"))
    assert gc.get_threshold() == (700, 10, 10)
    gc.set_threshold(10 * compile_gc.COMPILE_THRESHOLD, 5, 5)
    listener.on_start(_event(start, "forestrank"))
    assert gc.get_threshold() == (10 * compile_gc.COMPILE_THRESHOLD, 5, 5)
    listener.on_end(_event(end, "forestrank"))
    assert gc.get_threshold() == (10 * compile_gc.COMPILE_THRESHOLD, 5, 5)


def test_install_registers_the_listener_once():
    compile_gc.install()
    compile_gc.install()
    assert event._registered["numba:compile"].count(compile_gc._LISTENER) == 1
