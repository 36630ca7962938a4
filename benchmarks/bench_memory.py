"""Memory that ``fit`` adds on web-scale inputs, forestrank against LightGBM, each in its own process.

    python benchmarks/bench_memory.py --shape web10k
    python benchmarks/bench_memory.py --shape yahoo

* ``web10k``: MSLR-WEB10K-shaped, ``make_ranking(10,000 queries x 120 documents, 136
  features)`` = 1.2M rows, float32, dense.
* ``yahoo``: Yahoo! LTR-shaped, ``make_ranking(19,600 queries x 24 documents, 700
  features)`` = 470k rows with 70% of the values removed at random (about 30% density),
  float32 CSR.

The input is generated once and saved; every contender then loads it in a fresh
process, resets the process's peak resident memory (``/proc/self/clear_refs``), fits,
and reports the peak minus the resident memory it had with the input loaded: the memory
the fit itself adds, whatever the input cost. The ratio to LightGBM's is what
``benchmarks/RESULTS.md`` bounds.
"""

import argparse
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

SHAPES = {
    "web10k": {"n_queries": 10_000, "docs_per_query": 120, "n_features": 136, "density": 1.0},
    "yahoo": {"n_queries": 19_600, "docs_per_query": 24, "n_features": 700, "density": 0.3},
}


def _status_kilobytes(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def make_input(shape: str, folder: Path) -> Path:
    """Generate the shape's data once; returns the file the contenders load."""
    import scipy.sparse

    from forestrank import make_ranking

    spec = SHAPES[shape]
    X, y, qid = make_ranking(
        n_queries=spec["n_queries"], docs_per_query=spec["docs_per_query"], n_features=spec["n_features"],
        random_state=0,
    )  # fmt: skip
    X = X.astype(np.float32)
    path = folder / f"{shape}.npz"
    if spec["density"] < 1.0:
        X[np.random.default_rng(0).random(X.shape, dtype=np.float32) >= spec["density"]] = 0.0
        scipy.sparse.save_npz(folder / f"{shape}_X.npz", scipy.sparse.csr_matrix(X), compressed=False)
        np.savez(path, y=y, qid=qid)
    else:
        np.savez(path, X=X, y=y, qid=qid)
    return path


def _load(path: Path):
    import scipy.sparse

    arrays = np.load(path)
    sparse_file = path.with_name(path.stem + "_X.npz")
    X = scipy.sparse.load_npz(sparse_file) if sparse_file.exists() else arrays["X"]
    return X, arrays["y"], arrays["qid"]


def _fit(contender: str, path: Path, n_estimators: int, queue) -> None:
    X, y, qid = _load(path)
    if contender.startswith("LightGBM"):
        import lightgbm

        model = lightgbm.LGBMRanker(
            n_estimators=n_estimators, num_leaves=31, learning_rate=0.05, min_child_samples=20, n_jobs=2, verbose=-1
        )
        fit = lambda: model.fit(X, y, group=np.unique(qid, return_counts=True)[1])  # noqa: E731 (rows are grouped)
    else:
        import forestrank

        if contender == "forestrank LambdaMART":
            model = forestrank.LambdaMART(
                n_estimators=n_estimators, max_leaf_nodes=31, learning_rate=0.05, min_samples_leaf=20, n_jobs=2
            )
        else:
            model = forestrank.RFPointRanker(n_estimators=n_estimators, n_jobs=2, random_state=0)
        small = slice(0, int(np.searchsorted(qid, qid[0] + 50)))
        type(model)(**{**model.get_params(), "n_estimators": 2}).fit(X[small], y[small], qid=qid[small])  # compile
        fit = lambda: model.fit(X, y, qid=qid)  # noqa: E731
    baseline = _status_kilobytes("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) restarts from the current size
    start = time.perf_counter()
    fit()
    seconds = time.perf_counter() - start
    peak = _status_kilobytes("VmHWM")
    queue.put({"added MB": (peak - baseline) / 1024, "input MB": baseline / 1024, "fit s": seconds})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="web10k")
    parser.add_argument("--boosting-iterations", type=int, default=100)
    parser.add_argument("--forest-trees", type=int, default=50, help="0 leaves the forest out (boosting's timings alone)")
    args = parser.parse_args()
    print(f"machine: {describe_machine()}")
    contenders = {
        "LightGBM LGBMRanker lambdarank": args.boosting_iterations,
        "forestrank LambdaMART": args.boosting_iterations,
        "forestrank RFPointRanker": args.forest_trees,
    }
    contenders = {name: n_estimators for name, n_estimators in contenders.items() if n_estimators > 0}
    with tempfile.TemporaryDirectory() as folder:
        path = make_input(args.shape, Path(folder))
        results = {}
        context = multiprocessing.get_context("spawn")
        for contender, n_estimators in contenders.items():
            queue = context.Queue()
            process = context.Process(target=_fit, args=(contender, path, n_estimators, queue))
            process.start()
            results[contender] = queue.get()
            process.join()
            print(f"  done: {contender} ({n_estimators} trees)", flush=True)
    spec = SHAPES[args.shape]
    print(f"shape {args.shape}: {spec}, float32, {'CSR' if spec['density'] < 1 else 'dense'}")
    reference = results["LightGBM LGBMRanker lambdarank"]["added MB"]
    for contender, result in results.items():
        print(
            f"{contender:35s} fit adds {result['added MB']:8.0f} MB ({result['added MB'] / reference:5.2f}x LightGBM)"
            f"  input {result['input MB']:6.0f} MB  fit {result['fit s']:7.1f} s"
        )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
