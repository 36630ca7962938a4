"""Cost-aware trees and early exits (Mohan's thesis, chapter 6) against cost-oblivious models.

    python benchmarks/bench_costs.py
    python benchmarks/bench_costs.py --data lightgbm --iterations 300

The thesis' set-up: graded 0-4 data, the features split into five groups of
exponentially increasing cost (1, 2, 4, 8, 16; the groups drawn at random with a fixed
seed), binary labels for grades 3 and 4 (trained on and evaluated with), and

* SGBRT: ``LambdaMART(objective="mart", learning_rate=0.1, max_features=0.1)`` (the
  thesis' alpha = 0.1 and k = 0.1 f), cost-oblivious and with ``cost_penalty`` lambda;
* the same with early exits, the bottom 20% of each query's active documents frozen
  every 100 iterations (``EarlyExit(every=100, fraction=0.2)``);
* RF: ``RFPointRanker(--forest-trees)``, cost-oblivious and cost-aware.

Data: ``synthetic`` (default) is ``make_ranking(3,000 queries x 24 documents, 136
features, grades 0-4, random_state=0)``, Yahoo-shaped (24 documents per query), the
first 2,500 queries train and the last 500 test; ``lightgbm`` is LightGBM's lambdarank
example (``../shared/datasets/LightGBM-lambdarank-example``, train 201 / test 50
queries, 300 sparse features).

Metrics (``forestrank.metrics``, ``relevant_threshold=3``, expected ties), each averaged
over the test queries (an early exit orders documents within their query only): AUC,
partial AUC over false-positive rates [0, 0.05] in the thesis' normalisation (perfect
0.05, random 0.00125; over the queries with both kinds of documents), PREC@5,
and the average cost of scoring a document ``c_H`` (``average_cost``). Paired
t-tests over the test queries for PREC@5. Bounds (cost issue): cost-aware SGBRT
within 0.005 of the cost-oblivious AUC and PREC@5 at no more than a third of its cost;
with early exits PREC@5 within 0.005 at a lower cost still.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402
from _report import versus  # noqa: E402
from compare import load_splits  # noqa: E402


def _data(name: str, datasets: Path):
    from forestrank import make_ranking

    if name == "synthetic":  # Yahoo-shaped: 24 documents per query, unlike compare.py's synthetic set
        X, y, qid = make_ranking(n_queries=3000, docs_per_query=24, n_features=136, n_grades=5, random_state=0)
        train = qid < 2500
        return X[train], y[train], qid[train], X[~train], y[~train], qid[~train]
    return load_splits("lightgbm", datasets, [1])[0][:6]


def _costs(n_features: int) -> np.ndarray:
    groups = np.random.default_rng(0).permutation(np.arange(n_features) % 5)
    return 2.0 ** groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["synthetic", "lightgbm"], default="synthetic")
    parser.add_argument("--datasets", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--forest-trees", type=int, default=100)
    parser.add_argument("--penalties", type=float, nargs="+", default=[1.0])
    args = parser.parse_args()

    from forestrank import EarlyExit, LambdaMART, RFPointRanker
    from forestrank.metrics import auc_score, partial_auc_score, precision_at_5

    X, y, qid, X_test, y_test, qid_test = _data(args.data, Path(args.datasets))
    binary, binary_test = (y >= 3).astype(float), (y_test >= 3).astype(float)
    costs = _costs(X.shape[1])
    print(f"machine: {describe_machine()}")
    print(f"data: {args.data}, {len(y)} training rows, {X.shape[1]} features, {len(np.unique(qid_test))} test queries; "
          f"relevant = grades 3-4 ({binary.mean():.1%} of training rows); costs 1/2/4/8/16, all features {costs.sum():.0f}")

    def evaluate(name, model, early_exit=None):
        scores = model.predict(X_test, qid=qid_test, early_exit=early_exit) if early_exit else model.predict(X_test)
        cost = early_exit.average_cost_ if early_exit else model.average_cost()
        row = {
            "name": name,
            "auc": auc_score(binary_test, scores, qid_test, relevant_threshold=1),
            "pauc": partial_auc_score(binary_test, scores, qid_test, relevant_threshold=1),
            "prec5": precision_at_5(binary_test, scores, qid_test, relevant_threshold=1, per_query=True),
            "cost": cost,
        }
        print(f"  {name:<46} AUC {row['auc']:.4f}  PAUC@0.05 {row['pauc']:.5f}  PREC@5 {row['prec5'].mean():.4f}  "
              f"cost {cost:8.1f}", flush=True)
        return row

    def compare(row, reference):
        print(f"    vs {reference['name']}: AUC {row['auc'] - reference['auc']:+.4f}, PREC@5 "
              f"{versus(row['prec5'], reference['prec5'])}, cost ratio "
              f"{row['cost'] / reference['cost']:.3f}, PAUC {row['pauc'] - reference['pauc']:+.5f}")

    sgbrt = dict(n_estimators=args.iterations, objective="mart", learning_rate=0.1, max_features=0.1, n_jobs=2, random_state=0)
    start = time.perf_counter()
    # lambda = 0 is the cost-oblivious model (bitwise); the costs only price its trees.
    oblivious = evaluate("SGBRT, cost-oblivious", LambdaMART(**sgbrt, feature_costs=costs).fit(X, binary, qid=qid))
    for penalty in args.penalties:
        aware_model = LambdaMART(**sgbrt, feature_costs=costs, cost_penalty=penalty).fit(X, binary, qid=qid)
        aware = evaluate(f"SGBRT, cost-aware (lambda={penalty:g})", aware_model)
        compare(aware, oblivious)
        exits = evaluate(
            f"SGBRT, cost-aware (lambda={penalty:g}), early exits", aware_model, EarlyExit(every=100, fraction=0.2)
        )
        compare(exits, oblivious)
        compare(exits, aware)
    forest = dict(n_estimators=args.forest_trees, n_jobs=2, random_state=0)
    rf = evaluate("RF, cost-oblivious", RFPointRanker(**forest, feature_costs=costs).fit(X, binary, qid=qid))
    for penalty in args.penalties:
        rf_aware = evaluate(
            f"RF, cost-aware (lambda={penalty:g})",
            RFPointRanker(**forest, feature_costs=costs, cost_penalty=penalty).fit(X, binary, qid=qid),
        )
        compare(rf_aware, rf)
    print(f"total {time.perf_counter() - start:.0f} s; metrics: relevant = grades 3-4, expected ties, each averaged "
          "over the test queries (AUC and PAUC over those with relevant and irrelevant documents; PAUC in the "
          "thesis' normalisation)")


if __name__ == "__main__":
    main()
