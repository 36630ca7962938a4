"""Fingerprints of every estimator's model on MQ2008 Fold1: refactors must leave them unchanged.

    python benchmarks/model_hashes.py [--datasets ../shared/datasets] [--only RF-list LambdaMART]

Each estimator is fitted on Fold1's train.txt with ``random_state=0`` and two threads
(the model does not depend on the thread count) and predicts test.txt; the line
prints the first 12 hex digits of the SHA-256 of the predictions (float64 bytes) and
of the trees (every tree's nodes, values and sample weights), and the fit time. A
change of the engine that is meant to change no model must reproduce every line's
hashes; the times are for a rough look only (use the benchmarks that time per tree
for speed claims).
"""

import argparse
import hashlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

from forestrank import BROOF, LambdaMART, PLRank, RFHybridRanker, RFListRanker, RFPointRanker, load_letor_fold  # noqa: E402

FOREST = {"n_estimators": 20, "random_state": 0, "n_jobs": 2}
BOOSTING = {"n_estimators": 50, "random_state": 0, "n_jobs": 2}
ESTIMATORS = {
    "RF-point": lambda: RFPointRanker(**FOREST),
    "RF-point gini exact": lambda: RFPointRanker(criterion="gini", max_bins=None, min_samples_leaf=3, **FOREST),
    "RF-point best-first": lambda: RFPointRanker(
        expansion="best", max_leaf_nodes=64, relevance_weights="exp", bootstrap=True, **FOREST
    ),
    "RF-rand": lambda: RFPointRanker(criterion="random", **FOREST),
    "variance forest": lambda: RFPointRanker(
        criterion="variance", max_features=0.1, bootstrap=True, sample_level="document", **FOREST
    ),
    "variance forest pooled": lambda: RFPointRanker(criterion="variance", max_features=None, min_samples_leaf=5, **FOREST),
    "RF-list exact": lambda: RFListRanker(ndcg_k=None, max_queries_per_split=None, **FOREST),
    "RF-list": lambda: RFListRanker(**FOREST),
    "RF-hybrid exact": lambda: RFHybridRanker(ndcg_k=None, max_queries_per_split=None, **FOREST),
    "RF-hybrid": lambda: RFHybridRanker(**FOREST),
    "RF-hybrid relevant": lambda: RFHybridRanker(listwise_depth=4, expansion="relevant", max_leaf_nodes=200, **FOREST),
    "LambdaMART": lambda: LambdaMART(**BOOSTING),
    "LambdaMART squared": lambda: LambdaMART(split_gain="squared", max_features=0.5, subsample=0.7, **BOOSTING),
    "MART": lambda: LambdaMART(objective="mart", **BOOSTING),
    "McRank": lambda: LambdaMART(objective="mcrank", n_estimators=20, random_state=0, n_jobs=2),
    "PLRank": lambda: PLRank(**BOOSTING),
    "BROOF": lambda: BROOF(n_estimators=3, n_trees=20, random_state=0, n_jobs=2),
}


def fingerprint(arrays: list[np.ndarray]) -> str:
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:12]


def tree_arrays(model: object) -> list[np.ndarray]:
    """Every tree's nodes, values and weighted sample counts (BROOF: of every round's forest)."""
    forests = [model] if hasattr(model, "trees_") else list(model.estimators_)
    return [
        array
        for forest in forests
        for tree in forest.trees_
        for array in (tree.nodes, tree.values, tree.weighted_n_node_samples)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    parser.add_argument("--only", nargs="+", choices=list(ESTIMATORS), help="estimators to fingerprint (all by default)")
    arguments = parser.parse_args()
    (X, y, qid), _, (X_test, _, _) = load_letor_fold(Path(arguments.datasets) / "MQ2008" / "Fold1")
    print(f"machine: {describe_machine()}")
    print("MQ2008 Fold1, random_state=0, n_jobs=2; sha256[:12] of the test predictions and of the trees")
    for name in arguments.only or ESTIMATORS:
        start = time.perf_counter()
        model = ESTIMATORS[name]().fit(X, y, qid=qid)
        seconds = time.perf_counter() - start
        print(
            f"{name:<24} predictions {fingerprint([model.predict(X_test)])}  trees {fingerprint(tree_arrays(model))}"
            f"  fit {seconds:6.2f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
