"""Compilation cost of a first fit: cold numba cache vs warm cache, each in a fresh process.

    python benchmarks/bench_compile.py [--estimators RFPointRanker RFListRanker LambdaMART]

The overhead is the first fit's time minus an identical second fit's time in the same
process (imports excluded). "cold" uses an empty NUMBA_CACHE_DIR (a fresh install);
"warm" reuses it in a new process (every later run). Each estimator gets its own empty
cache, so each line is what a user of that estimator alone pays. Bounds (issue 3, for
RFPointRanker): cold <= 20 s, warm <= 1 s.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

PROBE = """
import json, sys, time
import forestrank
from forestrank import make_ranking
X, y, qid = make_ranking(n_queries=40, random_state=0)
estimator = getattr(forestrank, sys.argv[1])
times = []
for _ in range(2):
    start = time.perf_counter()
    model = estimator(n_estimators=4, random_state=0).fit(X, y, qid=qid)
    times.append(time.perf_counter() - start)
start = time.perf_counter(); model.predict(X); first_predict = time.perf_counter() - start
start = time.perf_counter(); model.predict(X); second_predict = time.perf_counter() - start
print(json.dumps({"fit": times[0] - times[1], "predict": first_predict - second_predict}))
"""


def probe(estimator: str, cache_dir: str) -> dict:
    environment = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    command = [sys.executable, "-c", PROBE, estimator]
    run = subprocess.run(command, capture_output=True, text=True, env=environment, check=True)
    return json.loads(run.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--estimators", nargs="+", default=["RFPointRanker"], help="forestrank estimator names")
    arguments = parser.parse_args()
    print(f"machine: {describe_machine()}")
    print("bounds (issue 3, RFPointRanker): cold <= 20 s, warm <= 1 s")
    for estimator in arguments.estimators:
        with tempfile.TemporaryDirectory() as cache_dir:
            cold = probe(estimator, cache_dir)
            warm = probe(estimator, cache_dir)
        print(f"{estimator}, first fit, cold cache: {cold['fit']:.2f} s of compilation; first predict +{cold['predict']:.2f} s")
        print(f"{estimator}, first fit, warm cache: {warm['fit']:.2f} s of overhead; first predict +{warm['predict']:.2f} s")


if __name__ == "__main__":
    main()
