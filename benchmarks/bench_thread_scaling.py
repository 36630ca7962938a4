"""LambdaMART's thread scaling against LightGBM's, for a machine of 16 cores or more.

    python benchmarks/bench_thread_scaling.py
    python benchmarks/bench_thread_scaling.py --sets

Default: the 200k-row synthetic set (``make_ranking(2,000 queries x 100 documents, 136
features)``). For ``n_jobs`` 1, 2, 4, 8, 16 each library fits 10 and 40 iterations
(the marginal iteration is the difference over 30), then 100 iterations with 16
threads; one fit each, the libraries alternated; the first fit, with an empty numba
cache, is timed as the cold compile. Writes ``scale16.json``.

``--sets``: 16 threads on the 5,000-row set of ``bench_feature_sampling.py`` (300
iterations, its three sampling settings, best of two) and on the 1.2M-row set of
``bench_memory.py --shape web10k`` (float32, 100 iterations, one fit each). Writes
``more16.json``.

Settings as the other boosting benchmarks: 31 leaves, learning rate 0.05, 20 rows per
leaf. The JSON goes to ``$OUT`` (or the current folder); ours / LightGBM's ratios are
printed. A speed benchmark: no quality metric is computed.
"""

import argparse
import json
import os
import time

import numpy as np

SAMPLING = {
    "no sampling": ({}, {}),
    "80% per tree": ({"feature_fraction": 0.8}, {"colsample_bytree": 0.8}),
    "80% per node": ({"max_features": 0.8}, {"feature_fraction_bynode": 0.8}),
}


def _fitters(X, y, qid):
    """(ours, LightGBM's): fit(n_jobs, iterations, **params) -> seconds."""
    import lightgbm

    from forestrank import LambdaMART

    sizes = np.unique(qid, return_counts=True)[1]

    def ours(n_jobs, iterations, **params):
        start = time.perf_counter()
        LambdaMART(
            n_estimators=iterations, max_leaf_nodes=31, learning_rate=0.05, min_samples_leaf=20, n_jobs=n_jobs,
            random_state=0, **params,
        ).fit(X, y, qid=qid)  # fmt: skip
        return time.perf_counter() - start

    def lightgbms(n_jobs, iterations, **params):
        start = time.perf_counter()
        lightgbm.LGBMRanker(
            n_estimators=iterations, num_leaves=31, learning_rate=0.05, min_child_samples=20, n_jobs=n_jobs,
            random_state=0, verbose=-1, **params,
        ).fit(X, y, group=sizes)  # fmt: skip
        return time.perf_counter() - start

    return ours, lightgbms


def scaling() -> dict:
    from forestrank import make_ranking

    X, y, qid = make_ranking(n_queries=2000, docs_per_query=100, n_features=136, random_state=0)
    ours, lightgbms = _fitters(X, y, qid)
    results = {"cpus": os.cpu_count(), "cold compile s": round(ours(16, 2), 1)}
    for n_jobs in (1, 2, 4, 8, 16):
        marginal = {}
        for name, fit in (("forestrank", ours), ("lightgbm", lightgbms)):
            ten, forty = fit(n_jobs, 10), fit(n_jobs, 40)
            marginal[name] = (forty - ten) / 30
            results[f"{name} n_jobs={n_jobs}"] = {"fit 10": round(ten, 2), "fit 40": round(forty, 2), "marginal iteration": round(marginal[name], 4)}
        print(f"n_jobs={n_jobs}: marginal iteration {marginal['forestrank']:.4f} / {marginal['lightgbm']:.4f} s = {marginal['forestrank'] / marginal['lightgbm']:.2f}")
    whole = {name: fit(16, 100) for name, fit in (("forestrank", ours), ("lightgbm", lightgbms))}
    results["100 iterations, n_jobs=16"] = {name: round(seconds, 2) for name, seconds in whole.items()}
    print(f"100 iterations, 16 threads: {whole['forestrank']:.2f} / {whole['lightgbm']:.2f} s = {whole['forestrank'] / whole['lightgbm']:.2f}")
    return results


def sets() -> dict:
    from forestrank import make_ranking

    results = {}
    X, y, qid = make_ranking(n_queries=50, docs_per_query=100, n_features=136, random_state=0)
    ours, lightgbms = _fitters(X, y, qid)
    ours(16, 2)  # numba's compile or cache load
    for setting, (ours_params, lightgbm_params) in SAMPLING.items():
        best = {"forestrank": np.inf, "lightgbm": np.inf}
        for _ in range(2):
            best["forestrank"] = min(best["forestrank"], ours(16, 300, **ours_params))
            best["lightgbm"] = min(best["lightgbm"], lightgbms(16, 300, **lightgbm_params))
        results[f"5,000 rows, {setting}"] = {name: round(seconds, 3) for name, seconds in best.items()}
        print(f"5,000 rows, {setting}: {best['forestrank']:.3f} / {best['lightgbm']:.3f} s = {best['forestrank'] / best['lightgbm']:.2f}")
    X, y, qid = make_ranking(n_queries=10_000, docs_per_query=120, n_features=136, random_state=0)
    ours, lightgbms = _fitters(X.astype(np.float32), y, qid)
    whole = {"forestrank": ours(16, 100), "lightgbm": lightgbms(16, 100)}
    results["1.2M rows, 100 iterations"] = {name: round(seconds, 2) for name, seconds in whole.items()}
    print(f"1.2M rows, 100 iterations: {whole['forestrank']:.2f} / {whole['lightgbm']:.2f} s = {whole['forestrank'] / whole['lightgbm']:.2f}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", action="store_true", help="16 threads on the 5,000-row and 1.2M-row sets instead")
    args = parser.parse_args()
    results = sets() if args.sets else scaling()
    name = "more16.json" if args.sets else "scale16.json"
    with open(os.path.join(os.environ.get("OUT", "."), name), "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
