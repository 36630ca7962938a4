"""LambdaMART's thread scaling against LightGBM's on the 200k-row synthetic set.

    python benchmarks/bench_thread_scaling.py

``make_ranking(2,000 queries x 100 documents, 136 features)``, 31 leaves, learning rate
0.05, 20 rows per leaf. For ``n_jobs`` 1, 2, 4, 8, 16 each library fits 10 and 40
iterations (the marginal iteration is the difference over 30), then 100 iterations
with 16 threads; one fit each, the libraries alternated. Writes ``scale16.json`` under
``$OUT`` (or the current folder) and prints ours / LightGBM's ratios. Meant for a
machine of 16 cores or more. A speed benchmark: no quality metric is computed.
"""
import json
import os
import time

import numpy as np
from forestrank import LambdaMART, make_ranking
try:
    import lightgbm
except Exception as e:  # keep timing ours
    lightgbm = None; print("no lightgbm:", e)
out = os.environ.get("OUT", ".")
res = {"cpus": os.cpu_count()}
t = time.perf_counter()
X, y, qid = make_ranking(n_queries=2000, docs_per_query=100, n_features=136, random_state=0)
sizes = np.unique(qid, return_counts=True)[1]
print("data", X.shape, round(time.perf_counter() - t, 1), flush=True)
def ours(nj, it):
    return LambdaMART(n_estimators=it, max_leaf_nodes=31, learning_rate=0.05, min_samples_leaf=20, n_jobs=nj, random_state=0).fit(X, y, qid=qid)
def lgb(nj, it):
    return lightgbm.LGBMRanker(n_estimators=it, num_leaves=31, learning_rate=0.05, min_child_samples=20, n_jobs=nj, random_state=0, verbose=-1).fit(X, y, group=sizes)
t = time.perf_counter(); ours(16, 2); res["cold_compile_s"] = round(time.perf_counter() - t, 1); print("cold", res["cold_compile_s"], flush=True)
def timed(f, nj, it):
    t = time.perf_counter(); f(nj, it); return round(time.perf_counter() - t, 2)
for nj in (1, 2, 4, 8, 16):
    for name, f in (("forestrank", ours), ("lightgbm", lgb)):
        if f is lgb and lightgbm is None:
            continue
        a = timed(f, nj, 10); b = timed(f, nj, 40)
        res[f"{name} n_jobs={nj}"] = {"fit10": a, "fit40": b, "marginal_iteration": round((b - a) / 30, 4)}
        print(name, nj, a, b, flush=True)
for name, f in (("forestrank", ours), ("lightgbm", lgb)):
    if f is lgb and lightgbm is None:
        continue
    res[f"{name} 100 iterations n_jobs=16"] = timed(f, 16, 100)
    print(name, "100 it", res[f"{name} 100 iterations n_jobs=16"], flush=True)
if lightgbm is not None:  # ours / LightGBM's
    for nj in (1, 2, 4, 8, 16):
        ratio = res[f"forestrank n_jobs={nj}"]["marginal_iteration"] / res[f"lightgbm n_jobs={nj}"]["marginal_iteration"]
        print(f"n_jobs={nj}: marginal iteration, ours / LightGBM {ratio:.2f}")
    print(f"100 iterations, 16 threads: ours / LightGBM {res['forestrank 100 iterations n_jobs=16'] / res['lightgbm 100 iterations n_jobs=16']:.2f}")
json.dump(res, open(os.path.join(out, "scale16.json"), "w"), indent=1)
print(json.dumps(res))
