"""MQ2008 5-fold quality of every estimator, this checkout against another source tree: a before/after table.

    git worktree add /tmp/before <commit>
    python benchmarks/bench_quality.py --against /tmp/before/src
    python benchmarks/bench_quality.py --against /tmp/before/src --estimators LambdaMART PLRank

Each estimator is fitted with ``random_state=0`` and ``n_jobs=2`` on every fold's
train.txt and scored on its test.txt, once with this checkout's ``src`` and once with
the other tree's, each in a fresh process with that tree on ``PYTHONPATH``. The
settings are those of ``benchmarks/compare.py`` (500 trees; boosting with learning
rate 0.05; BROOF 10 rounds of 100 trees). The table gives NDCG@10 and MAP under the
official LETOR 4.0 script's convention (``letor4``), means over the 784 test queries,
and the differences; the speed issue holds each within ±0.002. An estimator whose
models did not change gives differences of exactly 0.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

BOOSTING = {"n_estimators": 500, "learning_rate": 0.05, "max_leaf_nodes": 31, "min_samples_leaf": 20}
ESTIMATORS = {
    "RF-point": ("RFPointRanker", {"n_estimators": 500}),
    "RF-list": ("RFListRanker", {"n_estimators": 500}),
    "RF-list exact": ("RFListRanker", {"n_estimators": 500, "ndcg_k": None, "max_queries_per_split": None}),
    "RF-hybrid": ("RFHybridRanker", {"n_estimators": 500}),
    "LambdaMART": ("LambdaMART", BOOSTING),
    "PLRank": ("PLRank", BOOSTING),
    "BROOF": ("BROOF", {"n_estimators": 10, "n_trees": 100}),
}

PROBE = """
import json, sys
import numpy as np
import forestrank
from forestrank import load_letor_fold, map_score, ndcg_score
estimator = getattr(forestrank, sys.argv[1])
params = json.loads(sys.argv[2])
y_all, scores_all, qid_all = [], [], []
for fold in range(1, 6):
    data = load_letor_fold(f"{sys.argv[3]}/Fold{fold}")
    X, y, qid = data.train
    X_test, y_test, qid_test = data.test
    model = estimator(random_state=0, n_jobs=2, **params).fit(X, y, qid=qid)
    y_all.append(y_test)
    scores_all.append(model.predict(X_test))
    qid_all.append(np.char.add(f"{fold}:", np.asarray(qid_test).astype(str)))
y, scores, qid = (np.concatenate(part) for part in (y_all, scores_all, qid_all))
print(json.dumps([ndcg_score(y, scores, qid, 10, convention="letor4"), map_score(y, scores, qid, convention="letor4")]))
"""


def score(source: str, name: str, folder: Path) -> list[float]:
    """NDCG@10 and MAP (letor4) of one estimator over the five folds, with ``source`` on the path."""
    estimator, params = ESTIMATORS[name]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, estimator, json.dumps(params), str(folder)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": source}, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the other source tree (the folder holding forestrank/)")
    parser.add_argument("--estimators", nargs="+", choices=list(ESTIMATORS), default=list(ESTIMATORS))
    parser.add_argument(
        "--datasets", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets",
        help="the folder holding MQ2008/Fold1..Fold5",
    )  # fmt: skip
    args = parser.parse_args()
    here = str(Path(__file__).resolve().parents[1] / "src")
    folder = args.datasets / "MQ2008"
    print(f"machine: {describe_machine()}")
    print(f"this checkout: {here}; against: {args.against}; MQ2008 5 folds, random_state=0, letor4 convention")
    print("| estimator | NDCG@10 before | NDCG@10 after | difference | MAP before | MAP after | difference |")
    print("|---|---|---|---|---|---|---|")
    for name in args.estimators:
        before = score(args.against, name, folder)
        after = score(here, name, folder)
        print(
            f"| {name} | {before[0]:.4f} | {after[0]:.4f} | {after[0] - before[0]:+.4f} | {before[1]:.4f} "
            f"| {after[1]:.4f} | {after[1] - before[1]:+.4f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
