"""The package's compilation flags (``_numba/jit``): a kernel's reference counting is its own;
and a cached kernel that links parallel code runs where numba's threads are launched."""

import os
import subprocess
import sys
from pathlib import Path

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


# Three fresh processes on one empty cache: the first caches the builder's kernels (among
# them ``pooled_scans``, the one cached caller of the parallel scans), the second compiles
# ``best_split`` for Python on that cached ``pooled_scans``, the third loads that
# ``best_split`` from the cache and runs it first. Each imports the tests' conftest, as a
# test process does.
_CACHED_THREADED_KERNEL = """
import sys
sys.path.insert(0, sys.argv[1])
import conftest
import numpy as np
if sys.argv[2] == "fit":
    from forestrank import LambdaMART, make_ranking
    X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=4, random_state=0)
    LambdaMART(n_estimators=2, n_jobs=2, random_state=0).fit(X, y, qid=qid)
else:
    from tree.helpers import POOLED, call_best_split, training_set
    from forestrank._tree import _criteria, _splitter
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    training, _ = training_set(X, np.column_stack([np.round(2 * X[:, 1]), np.ones(30)]))
    print(call_best_split(training, _criteria.NEWTON, np.ones(30), POOLED, n_threads=2)[0])
    print("loaded" if sum(_splitter.best_split.stats.cache_hits.values()) else "compiled")
"""


@pytest.mark.slow
def test_a_test_process_runs_a_cached_kernel_that_links_parallel_code_first(tmp_path):
    """Numba launches its threads for a parallel kernel it compiles or loads, but a cached
    caller compiled on that kernel's cached code carries no launch: run first in a process,
    it crashed it. The tests' conftest launches numba's threads, as the package's
    ``parallel.numba_threads`` does around every threaded fit."""
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    tests_folder = str(Path(__file__).resolve().parent)
    for step in ("fit", "compile", "load"):
        run = subprocess.run(
            [sys.executable, "-c", _CACHED_THREADED_KERNEL, tests_folder, step],
            capture_output=True, text=True, env=environment,
        )  # fmt: skip
        assert run.returncode == 0, (step, run.returncode, run.stderr[-2000:])
    assert run.stdout.split() == ["1", "loaded"]
