"""This checkout's engine against another source tree: cold compile and marginal tree time, side by side.

    git worktree add /tmp/before <commit>
    python benchmarks/bench_engine.py --against /tmp/before/src compile --rounds 3
    python benchmarks/bench_engine.py --against /tmp/before/src trees --data fold1 --trees 20 --rounds 3
    python benchmarks/bench_engine.py --against /tmp/before/src trees --data synthetic --trees 16 --rounds 3 \\
        --estimators RF-point LambdaMART

For engine changes that mean to change no model (benchmarks/model_hashes.py checks
that) and must not cost compile time or speed. Every measurement runs in a fresh
process, alternating between the two source trees, and reports the minimum and the
median over rounds of CPU seconds (``time.process_time``), which a busy host disturbs
less than wall time.

* ``compile``: CPU seconds of a first fit minus an identical second fit on
  ``make_ranking(n_queries=40)`` with 4 trees, each process with an empty
  ``NUMBA_CACHE_DIR`` (what ``benchmarks/bench_compile.py`` calls "cold").
* ``trees``: the marginal cost of one tree (iteration for boosting): a fit of
  ``1 + trees`` less a fit of one, divided by ``trees``, one thread, after an
  untimed warm-up fit that loads or compiles the kernels. ``fold1`` is MQ2008
  Fold1's train.txt; ``synthetic`` is ``make_ranking(2000 queries x 100 documents, 136
  features, random_state=0)`` (200k rows). ``--fresh-cache`` compiles in every process
  instead of loading the cache: the two can differ by tens of percent on one build,
  because the machine code lands at other addresses (see benchmarks/RESULTS.md,
  "Engine design measurements").
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

ESTIMATORS = {
    "RF-point": ("RFPointRanker", {}),
    "RF-list": ("RFListRanker", {}),
    "RF-hybrid": ("RFHybridRanker", {}),
    "variance forest": (
        "RFPointRanker", {"criterion": "variance", "max_features": 0.1, "bootstrap": True, "sample_level": "document"}
    ),
    "LambdaMART": ("LambdaMART", {}),
    "PLRank": ("PLRank", {}),
    "BROOF": ("BROOF", {}),
}

COMPILE_PROBE = """
import json, sys, time
import forestrank
from forestrank import make_ranking
X, y, qid = make_ranking(n_queries=40, random_state=0)
estimator = getattr(forestrank, sys.argv[1])
params = json.loads(sys.argv[2])
seconds = []
for _ in range(2):
    start = time.process_time()
    estimator(n_estimators=4, random_state=0, **params).fit(X, y, qid=qid)
    seconds.append(time.process_time() - start)
print(json.dumps(seconds[0] - seconds[1]))
"""

TREE_PROBE = """
import json, sys, time
import forestrank
from forestrank import load_letor, make_ranking
name, params, data, n_trees = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
if data == "synthetic":
    X, y, qid = make_ranking(n_queries=2000, docs_per_query=100, n_features=136, random_state=0)
else:
    X, y, qid = load_letor(data)[:3]
estimator = getattr(forestrank, name)
estimator(n_estimators=1, random_state=1, n_jobs=1, **params).fit(X[:3000], y[:3000], qid=qid[:3000])
seconds = []
for n_estimators in (1, 1 + n_trees):
    start = time.process_time()
    estimator(n_estimators=n_estimators, random_state=0, n_jobs=1, **params).fit(X, y, qid=qid)
    seconds.append(time.process_time() - start)
print(json.dumps((seconds[1] - seconds[0]) / n_trees))
"""


def run(probe: str, arguments: list[str], source: str, fresh_cache: bool) -> float:
    environment = {**os.environ, "PYTHONPATH": source}
    with tempfile.TemporaryDirectory() as cache:
        if fresh_cache:
            environment["NUMBA_CACHE_DIR"] = cache
        done = subprocess.run(
            [sys.executable, "-c", probe, *arguments], capture_output=True, text=True, env=environment, check=True
        )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the other source tree (the folder holding forestrank/)")
    parser.add_argument("what", choices=["compile", "trees"])
    parser.add_argument("--estimators", nargs="+", choices=list(ESTIMATORS), default=list(ESTIMATORS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", default="fold1", help="fold1, synthetic, or a LETOR file (trees only)")
    parser.add_argument("--trees", type=int, default=20, help="trees (iterations) timed after the first")
    parser.add_argument("--fresh-cache", action="store_true", help="trees: compile in every process")
    parser.add_argument("--datasets", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    arguments = parser.parse_args()
    sources = {"this checkout": str(Path(__file__).resolve().parents[1] / "src"), "against": arguments.against}
    data = str(Path(arguments.datasets) / "MQ2008" / "Fold1" / "train.txt") if arguments.data == "fold1" else arguments.data
    print(f"machine: {describe_machine()}")
    print(f"{arguments.what}: CPU seconds, min and median of {arguments.rounds} rounds; against = {arguments.against}")
    results = {}
    for _ in range(arguments.rounds):
        for name in arguments.estimators:
            class_name, params = ESTIMATORS[name]
            for label, source in sources.items():
                if arguments.what == "compile":
                    value = run(COMPILE_PROBE, [class_name, json.dumps(params)], source, fresh_cache=True)
                else:
                    probe_arguments = [class_name, json.dumps(params), data, str(arguments.trees)]
                    value = run(TREE_PROBE, probe_arguments, source, arguments.fresh_cache)
                results.setdefault((name, label), []).append(value)
    unit, scale = ("s", 1.0) if arguments.what == "compile" else ("ms per tree", 1000.0)
    for name in arguments.estimators:
        ours, theirs = results[(name, "this checkout")], results[(name, "against")]
        print(
            f"{name:<16} this checkout {min(ours) * scale:9.2f} {unit} (median {statistics.median(ours) * scale:9.2f})"
            f"   against {min(theirs) * scale:9.2f} (median {statistics.median(theirs) * scale:9.2f})"
            f"   ratio of minima {min(ours) / min(theirs):.3f}, of medians "
            f"{statistics.median(ours) / statistics.median(theirs):.3f}"
        )


if __name__ == "__main__":
    main()
