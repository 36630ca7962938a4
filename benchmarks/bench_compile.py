"""Compilation cost of a first fit: cold numba cache vs warm cache, each in a fresh process.

    python benchmarks/bench_compile.py

The overhead is the first fit's time minus an identical second fit's time in the same
process (imports excluded). "cold" uses an empty NUMBA_CACHE_DIR (a fresh install);
"warm" reuses it in a new process (every later run). Bounds (issue 3): cold <= 20 s,
warm <= 1 s.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

PROBE = """
import json, time
from forestrank import RFPointRanker, make_ranking
X, y, qid = make_ranking(n_queries=40, random_state=0)
times = []
for _ in range(2):
    start = time.perf_counter()
    model = RFPointRanker(n_estimators=4, random_state=0).fit(X, y, qid=qid)
    times.append(time.perf_counter() - start)
start = time.perf_counter(); model.predict(X); first_predict = time.perf_counter() - start
start = time.perf_counter(); model.predict(X); second_predict = time.perf_counter() - start
print(json.dumps({"fit": times[0] - times[1], "predict": first_predict - second_predict}))
"""


def probe(cache_dir: str) -> dict:
    environment = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=environment, check=True)
    return json.loads(run.stdout)


def main() -> None:
    print(f"machine: {describe_machine()}")
    with tempfile.TemporaryDirectory() as cache_dir:
        cold = probe(cache_dir)
        warm = probe(cache_dir)
    print(f"first fit, cold cache: {cold['fit']:.2f} s of compilation (bound 20 s); first predict +{cold['predict']:.2f} s")
    print(f"first fit, warm cache: {warm['fit']:.2f} s of overhead (bound 1 s); first predict +{warm['predict']:.2f} s")


if __name__ == "__main__":
    main()
