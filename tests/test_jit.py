"""The package's compilation flags (``_numba/jit``): a kernel's reference counting is its own.
(A cached kernel that links parallel code, run first in a process: ``tests/test_package.py``,
on its cold start's cache.)"""

import numba
import numpy as np
import pytest
from numba.core.compiler import Flags

from forestrank._numba.jit import jit

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="numba's flags exist only when compiled")


def _counts_references(kernel):
    """Whether every compiled version of ``kernel`` counts references (its symbols carry the flags)."""
    flags = [any("nrt=True" in Flags.demangle(tag) for tag in compiled.fndesc.abi_tags) for compiled in kernel.overloads.values()]
    assert flags, "the kernel was not compiled"
    assert len(set(flags)) == 1
    return flags[0]


def _pair(caller_refcounted, callee_refcounted):
    """A fresh callee and a caller that calls it, each with its declaration; not cached."""

    @jit(refcounted=callee_refcounted, cache=False)
    def total(values):
        return values.sum()

    @jit(refcounted=caller_refcounted, cache=False)
    def call_total(values):
        return total(values) + 1.0

    return call_total, total


@pytest.mark.parametrize("caller_refcounted", [True, False])
@pytest.mark.parametrize("callee_refcounted", [True, False])
def test_a_kernel_compiled_first_by_a_caller_keeps_its_own_reference_counting(caller_refcounted, callee_refcounted):
    """Numba compiles a kernel that leaves reference counting unset with the flags of its first
    caller, and caches that code for every caller of the signature: a test calling a builder's
    kernel from Python, first, gave the builder a counting scan (``docs/design.md``, "Numba
    rules"). Whoever compiles it first, each kernel keeps its declaration."""
    caller, callee = _pair(caller_refcounted, callee_refcounted)
    values = np.arange(4.0)
    assert caller(values) == 7.0
    assert _counts_references(caller) is caller_refcounted
    assert _counts_references(callee) is callee_refcounted
