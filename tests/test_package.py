"""Packaging-level properties: lazy import, no eager compilation, jit == Python, the demo and examples run."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import forestrank
from forestrank import load_letor, make_ranking

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str, **environment: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **environment}, check=True
    )
    return result.stdout


def test_import_loads_neither_numba_nor_sklearn():
    loaded = json.loads(
        run_python("import sys, json, forestrank; print(json.dumps(['numba' in sys.modules, 'sklearn' in sys.modules]))")
    )
    assert loaded == [False, False]


def test_public_names_resolve_and_unknown_names_raise():
    """Every public name is the object of its module, under its own name; the public
    modules of the serving layer re-export its functions."""
    import importlib

    for name in forestrank.__all__:
        value = getattr(forestrank, name)
        if name != "__version__":
            assert value is getattr(importlib.import_module(forestrank._PUBLIC[name]), name)
            assert value.__name__ == name
    from forestrank import explain, export, persistence
    from forestrank.serving import _dump, _explain, _export, _lightgbm, _onnx, _persistence, _solr, _xgboost

    assert (export.to_onnx, export.dump_trees, export.export_model) == (_onnx.to_onnx, _dump.dump_trees, _export.export_model)
    assert (export.to_lightgbm, export.to_solr) == (_lightgbm.to_lightgbm, _solr.to_solr)
    assert (export.to_xgboost, export.to_xgboost_ltr) == (_xgboost.to_xgboost, _xgboost.to_xgboost_ltr)
    assert explain.shap_tree_model is _explain.shap_tree_model
    assert (persistence.save, persistence.load) == (_persistence.save, _persistence.load)
    assert set(forestrank.__all__) <= set(dir(forestrank))
    with pytest.raises(AttributeError, match="no attribute 'RandomForest'"):
        forestrank.RandomForest  # noqa: B018


def test_every_public_estimator_constrains_exactly_its_parameters():
    """scikit-learn's check_param_validation (not among the checks parametrize_with_checks
    runs) asks _parameter_constraints to name the parameters of get_params, no more:
    PLRank's listed LambdaMART's subsample_level, a class attribute of its own."""
    from sklearn.base import BaseEstimator

    from forestrank import LambdaMART

    estimators = [getattr(forestrank, name) for name in forestrank.__all__ if name != "__version__"]
    estimators = [cls for cls in estimators if isinstance(cls, type) and issubclass(cls, BaseEstimator)]
    assert len(estimators) >= 9
    for cls in estimators:
        estimator = cls(LambdaMART()) if cls.__name__ == "CalibratedRanker" else cls()
        assert set(estimator._parameter_constraints) == set(estimator.get_params(deep=False)), cls.__name__


def test_importing_everything_compiles_no_kernel():
    code = """
import importlib, json, pkgutil, forestrank
from numba.core.registry import CPUDispatcher
for name in forestrank.__all__:
    getattr(forestrank, name)
modules = [
    importlib.import_module(info.name)
    for info in pkgutil.walk_packages(forestrank.__path__, "forestrank.")
    if info.name.rpartition(".")[2] not in ("__main__", "cli")
]
compiled = {
    f"{module.__name__}.{attribute}": len(value.signatures)
    for module in modules
    for attribute, value in vars(module).items()
    if isinstance(value, CPUDispatcher)
}
print(json.dumps(compiled))
"""
    compiled = json.loads(run_python(code))
    assert len(compiled) > 50, "too few numba dispatchers found: the check would be vacuous"
    assert set(compiled.values()) == {0}


# One cold start in a process of its own (numba's events and the compiled code are only
# seen where they compile), read by the tests below: first two forests, whose kernels
# compile before any other fit's, then four fits' kernels, then the boosting fit whose
# cache the cached-threaded-kernel test starts from. One process compiles what three did.
COLD_START = """
import importlib, inspect, json, pkgutil, re, sys
import numpy as np
from numba.core import event
from numba.core import types
from numba.core.compiler import Flags
from numba.core.registry import CPUDispatcher
import forestrank
from forestrank import LambdaMART, PLRank, RFPointRanker, load_letor, make_ranking, ndcg_score
from forestrank._tree import _scans
literal = []
compiled_names = []
class Listener(event.Listener):
    def on_start(self, data):
        arguments = str(data.data.get("args"))
        if "Literal" in arguments:
            literal.append(str(data.data.get("dispatcher")) + arguments)
        compiled_names.append(data.data["dispatcher"].py_func.__name__)
    def on_end(self, data):
        pass
event.register("numba:compile", Listener())
load_letor(sys.argv[1])
load_letor(sys.argv[1], dtype=np.float32)
X, y, qid = make_ranking(n_queries=20, docs_per_query=15, n_features=4, random_state=0)
from forestrank._tree import _builder, _histograms, _pooled_fill, _rows, _splitter
tree_kernels = [_builder, _histograms, _pooled_fill, _rows, _scans, _splitter]
compiled_before_forests = sorted(
    name for module in tree_kernels for name, value in vars(module).items() if isinstance(value, CPUDispatcher) and value.signatures
)
del compiled_names[:]
RFPointRanker(n_estimators=2, n_jobs=2).fit(X, y, qid=qid)
RFPointRanker(n_estimators=2, n_jobs=2, criterion="variance", max_features=None).fit(X, y, qid=qid)
def monotone_types(scan):
    position = list(inspect.signature(scan.py_func).parameters).index("monotonic_cst")
    return sorted({str(signature[position]) for signature in scan.signatures})
forest = {
    "compiled_before": compiled_before_forests,
    "compiled": list(compiled_names),
    "histogram_scan_monotone": monotone_types(_scans.histogram_scan),
    "pooled_scan_monotone": monotone_types(_scans.pooled_scan),
}
X[::5, 1] = np.nan
ndcg_score(y, np.round(X[:, 0], 1), qid, ties="pessimistic")
LambdaMART(n_estimators=2).fit(X, y, qid=qid)
LambdaMART(n_estimators=2, grow_policy="symmetric").fit(X, y, qid=qid)
PLRank(n_estimators=2).fit(X, y, qid=qid)
RFPointRanker(n_estimators=2, criterion="entropy", missing_direction="separate").fit(X, y, qid=qid)
X, y, qid = make_ranking(n_queries=20, docs_per_query=10, n_features=4, random_state=0)
LambdaMART(n_estimators=2, n_jobs=2, random_state=0).fit(X, y, qid=qid)
overloads = {}
calls = []
for info in pkgutil.walk_packages(forestrank.__path__, "forestrank."):
    if info.name.rpartition(".")[2] in ("__main__", "cli"):
        continue
    for value in vars(importlib.import_module(info.name)).values():
        if isinstance(value, CPUDispatcher):
            for compiled in value.overloads.values():
                counting = any("nrt=True" in Flags.demangle(tag) for tag in compiled.fndesc.abi_tags)
                overloads[compiled.fndesc.mangled_name] = (value.py_func.__qualname__, counting, compiled.library.get_llvm_str())
                if not counting:  # the kernels it calls, those of its inlined helpers included
                    for kind in compiled.type_annotation.typemap.values():
                        if isinstance(kind, types.Dispatcher):
                            options = kind.dispatcher.targetoptions
                            if options.get("inline") != "always" and options.get("_nrt") is not False:
                                calls.append(value.py_func.__qualname__ + " -> " + kind.dispatcher.py_func.__qualname__)
symbol = re.compile(r'@"?(_Z[\\w.$]+)"?')
counts = re.compile(r"call\\s[^\\n]*@NRT_(incref|decref)")
linked = []
for name, (kernel, counting, code) in overloads.items():
    for callee in set(symbol.findall(code)) - {name}:
        if callee in overloads and overloads[callee][1] and not counting:
            linked.append(kernel + " -> " + overloads[callee][0])
print(json.dumps({
    "forest": forest,
    "literal": literal,
    "calls": sorted(set(calls)),
    "linked": sorted(set(linked)),
    "counting_code": sorted({kernel for kernel, counting, code in overloads.values() if counts.search(code) and not counting}),
    "uncounted": sum(not counting for _, counting, _ in overloads.values()),
    "counted_with_code": sum(counting and bool(counts.search(code)) for _, counting, code in overloads.values()),
}))
"""


@pytest.fixture(scope="module")
def cold_start(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cold_start")
    path = folder / "data.txt"
    path.write_text("2 qid:1 1:0.5 3:1.5\n0 qid:1 2:0.25\n1 qid:2 1:1 2:2 3:3\n0 qid:2 1:0.5\n")
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache"), "NUMBA_NUM_THREADS": "2"}
    run = subprocess.run([sys.executable, "-c", COLD_START, str(path)], capture_output=True, text=True, env=environment)
    assert run.returncode == 0, run.stderr
    return {**json.loads(run.stdout), "cache": folder / "cache"}


@pytest.mark.slow  # a cold compile of seven fits' kernels
def test_no_kernel_is_compiled_for_a_literal_argument(cold_start):
    """A literal handed to a jitted callee (``0``, ``-1``, ``False``) compiles it a second
    time, for ``Literal[int](0)`` beside ``int64`` (``docs/design.md``, "Numba rules").
    Every compilation of a cold start, nested ones included, must see plain types."""
    assert cold_start["literal"] == []


@pytest.mark.slow  # the same cold start
def test_no_kernel_declared_without_reference_counts_runs_counting_code(cold_start):
    """A kernel compiled without reference counts (``refcounted=False``) calls no kernel
    declared with them (its typing, the calls of its inlined helpers included), links none
    compiled with them (the symbols carry the flags) and holds no counts in its code: each
    kernel's flags are its declaration, not its first caller's, so a callee it reaches
    must declare the same (``docs/design.md``, "Numba rules": a kernel declares its
    reference counting). The counting kernels' own code shows that the pattern finds the
    counts."""
    assert cold_start["uncounted"] > 20 and cold_start["counted_with_code"] > 0, cold_start
    assert cold_start["calls"] == []
    assert cold_start["linked"] == []
    assert cold_start["counting_code"] == []


@pytest.mark.slow  # the same cold start
def test_a_forest_compiles_no_parallel_kernel_no_monotone_gain_and_no_penalty(cold_start):
    """Forests grow each tree on one thread (in joblib's threads, where numba's parallel
    kernels must not run), so their builders, the pooled one included, compile no
    parallel partition, fill or scan: ``n_threads`` None is a type numba drops those
    branches for (``_rows.partition_node``), which took a sixth of RF-point's cold
    compile. The serial partition compiled beside them shows the events are seen.
    Likewise a tree without monotone constraints hands its scans ``monotonic_cst``
    None, so that no clipped gain is compiled into them (``_criteria.candidate_gain``),
    another tenth; and a tree without feature costs hands its builder
    ``feature_penalty`` None, which compiles no penalty sums (``_builder._penalty_units``),
    and a searched tree compiles no drawn split (``Workspace.drawn`` None). The forests
    are the cold start's first fits: what they compile is theirs."""
    forest = cold_start["forest"]
    assert forest["compiled_before"] == []  # nothing the forests use was compiled, unseen, before them
    compiled = set(forest["compiled"])
    assert {"partition", "fill_node", "pooled_scans"} <= compiled
    assert [name for name in compiled if name.endswith("_parallel")] == []
    assert forest["histogram_scan_monotone"] == forest["pooled_scan_monotone"] == ["none"]
    assert "_clipped_gain" not in compiled
    assert "root_penalty_sums" not in compiled
    assert "random_split" not in compiled


# Two fresh processes on a copy of the cold start's cache, which holds the builder's
# kernels of a boosting fit (among them ``pooled_scans``, the one cached caller of the
# parallel scans): the first compiles ``best_split`` for Python on that cached
# ``pooled_scans``, the second loads that ``best_split`` from the cache and runs it
# first. Each imports the tests' conftest, as a test process does.
_CACHED_THREADED_KERNEL = """
import sys
sys.path.insert(0, sys.argv[1])
import conftest
import numpy as np
from tree.helpers import POOLED, call_best_split, training_set
from forestrank._tree import _criteria, _splitter
rng = np.random.default_rng(0)
X = rng.normal(size=(30, 2))
training, _ = training_set(X, np.column_stack([np.round(2 * X[:, 1]), np.ones(30)]))
print(call_best_split(training, _criteria.NEWTON, np.ones(30), POOLED, n_threads=2)[0])
print("loaded" if sum(_splitter.best_split.stats.cache_hits.values()) else "compiled")
print(sum(_splitter.pooled_scans.stats.cache_hits.values()))  # 0 where best_split's cached code holds it
"""


@pytest.mark.slow  # the same cold start
def test_a_test_process_runs_a_cached_kernel_that_links_parallel_code_first(cold_start, tmp_path):
    """Numba launches its threads for a parallel kernel it compiles or loads, but a cached
    caller compiled on that kernel's cached code carries no launch: run first in a process,
    it crashed it. The tests' conftest launches numba's threads, as the package's
    ``parallel.numba_threads`` does around every threaded fit."""
    cache = tmp_path / "cache"
    shutil.copytree(cold_start["cache"], cache)
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    outputs = []
    for step in ("compile", "load"):
        run = subprocess.run(
            [sys.executable, "-c", _CACHED_THREADED_KERNEL, str(ROOT / "tests")],
            capture_output=True, text=True, env=environment,
        )  # fmt: skip
        assert run.returncode == 0, (step, run.returncode, run.stderr[-2000:])
        outputs.append(run.stdout.split())
    # the first compiles ``best_split`` on the cached ``pooled_scans``; the second loads it
    assert outputs == [["1", "compiled", "1"], ["1", "loaded", "0"]]


def test_jitted_and_interpreted_kernels_agree(tmp_path):
    """NUMBA_DISABLE_JIT=1 runs the same kernels as plain Python; the results must match."""
    X, y, qid = make_ranking(n_queries=40, n_features=4, random_state=0)
    path = tmp_path / "data.txt"
    path.write_text(
        "".join(f"{label} qid:{q} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(map(float, row))) + "\n"
                for label, q, row in zip(y, qid, X))
    )  # fmt: skip
    code = f"""
import json, numpy as np
from forestrank import load_letor, ndcg_score, err_score, map_score, precision_at_k
X, y, qid = load_letor({str(path)!r})
s = np.round(X[:, 0], 1)  # rounding creates ties
values = [f(y, s, qid, 5, ties=t, per_query=True).tolist() for f in (ndcg_score, err_score, map_score, precision_at_k)
          for t in ("expected", "input_order", "pessimistic")]
values.append(ndcg_score(y, s, qid, 10, convention="letor4", per_query=True).tolist())
print(json.dumps({{"X": X.tolist(), "qid": qid.tolist(), "values": values}}))
"""
    interpreted = json.loads(run_python(code, NUMBA_DISABLE_JIT="1"))
    compiled = json.loads(run_python(code))
    np.testing.assert_array_equal(interpreted["X"], compiled["X"])
    np.testing.assert_array_equal(interpreted["qid"], compiled["qid"])
    np.testing.assert_array_equal(load_letor(path)[0], X)
    for python_values, jit_values in zip(interpreted["values"], compiled["values"]):
        np.testing.assert_allclose(python_values, jit_values, rtol=1e-12)


def test_demo_runs_and_names_its_conventions():
    output = subprocess.run(
        [sys.executable, "-m", "forestrank"], capture_output=True, text=True, check=True
    ).stdout
    assert "DummyRanker('best_feature')" in output and "RFPointRanker(n_estimators=200)" in output
    assert "NDCG@10 [gain 2^l-1, discount 1/log2(r+1)" in output
    assert "letor4 preset" in output
    # compiling is timed apart, before the fits: a cold first fit printed 22 s for 1.5 s of work
    assert output.index("numba kernels compiled or loaded from the cache in") < output.index("fit s")


def run_example(name: str, *arguments: str, options: tuple = ()) -> str:
    """Standard output of ``examples/<name>`` run in a fresh interpreter with the interpreter
    ``options`` (fails on a non-zero exit)."""
    return subprocess.run(
        [sys.executable, *options, str(ROOT / "examples" / name), *arguments], capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.slow  # an example in a subprocess: run after the quick suite
def test_grid_search_example_runs_without_a_warning():
    """Its grid tried k with the constant strategy, which reads no k: 24 warnings a run."""
    output = run_example("grid_search_with_qid.py", options=("-W", "error::UserWarning"))
    assert "best: {'dummyranker__k'" in output and "'dummyranker__strategy': 'constant'}" in output


@pytest.mark.slow  # an example in a subprocess: run after the quick suite
@pytest.mark.dataset
def test_letor_example_runs(mq2008):
    output = run_example("evaluate_letor_fold.py", str(mq2008 / "Fold1"))
    assert "letor4 preset" in output and "best single feature" in output


@pytest.mark.slow  # an example in a subprocess: run after the quick suite
@pytest.mark.dataset
def test_early_stopping_example_runs(mq2008):
    output = run_example("lambdamart_early_stopping.py", str(mq2008 / "Fold1"))
    lines = output.strip().splitlines()
    assert "letor4 preset" in lines[0] and len(lines) == 3
    for line in lines[1:]:  # the run went on for the patience (50) past the best iteration
        best, run = map(int, line.split("best iteration ")[1].split(" run")[0].split(" of "))
        assert run == best + 50
