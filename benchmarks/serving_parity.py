"""Exported models against forestrank on MQ2008 Fold1: how far each serving runtime's
scores are from ``model.predict``, whether it reaches the same leaves, and the NDCG@10
of its scores.

    python benchmarks/serving_parity.py [--datasets ../shared/datasets]

Each estimator is fitted on Fold1's train.txt (random_state=0) at a realistic size and
exported with ``forestrank.export``. The runtimes score test.txt: LightGBM on the float64
values (it compares and sums in double); XGBoost and onnxruntime with float32 input on
the float32 casts, against ``model.predict`` of the same casts; onnxruntime with float64
input on the float64 values. A line gives the largest ``|runtime - forestrank|``
divided by the largest ``|forestrank|`` score, the share of (row, tree) pairs on the
same leaf where the runtime reports leaves, the NDCG@10 difference (plain definition:
gain 2^l - 1, discount 1/log2(r + 1), expected over ties, 0 for a query without
relevant documents) and its largest change in one query, and the share of forestrank's
tied pairs (two documents of a query with equal scores) that the runtime unties.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

from forestrank import BROOF, LambdaMART, PLRank, RFListRanker, RFPointRanker, load_letor_fold, ndcg_score  # noqa: E402
from forestrank.export import to_lightgbm, to_onnx, to_xgboost  # noqa: E402

ESTIMATORS = {
    "RF-point, 100 trees": lambda: RFPointRanker(n_estimators=100, random_state=0, n_jobs=2),
    "RF-list, 20 trees": lambda: RFListRanker(n_estimators=20, random_state=0, n_jobs=2),
    "LambdaMART, 500 trees": lambda: LambdaMART(n_estimators=500, learning_rate=0.05, random_state=0, n_jobs=2),
    "MART, 300 trees": lambda: LambdaMART(n_estimators=300, objective="mart", random_state=0, n_jobs=2),
    "IGBRT, 100 + 100 trees": lambda: LambdaMART(
        n_estimators=100, objective="mart", init=RFPointRanker(n_estimators=100, random_state=0), random_state=0, n_jobs=2
    ),
    "PLRank, 200 trees": lambda: PLRank(n_estimators=200, random_state=0, n_jobs=2),
    "BROOF, 10 x 10 trees": lambda: BROOF(n_estimators=10, n_trees=10, random_state=0, n_jobs=2),
}


def leaf_share(engine_leaves: np.ndarray, expected: np.ndarray) -> float:
    return float(np.mean(engine_leaves == expected))


def tied_pairs(scores: np.ndarray, qid: np.ndarray, against: np.ndarray) -> tuple[int, int]:
    """The pairs of documents of one query that ``against`` scores equal, and how many of
    them ``scores`` scores apart."""
    tied = untied = 0
    for query in np.unique(qid):
        rows = np.flatnonzero(qid == query)
        first, second = np.triu_indices(len(rows), 1)
        equal = against[rows[first]] == against[rows[second]]
        tied += int(equal.sum())
        untied += int((equal & (scores[rows[first]] != scores[rows[second]])).sum())
    return tied, untied


def main() -> None:
    import lightgbm
    import onnxruntime
    import xgboost

    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets")
    args = parser.parse_args()
    (X, y, qid), _, (X_test, y_test, qid_test) = load_letor_fold(args.datasets / "MQ2008" / "Fold1")
    X32 = X_test.astype(np.float32)
    print(describe_machine())
    print(f"MQ2008 Fold1 test: {len(X_test)} rows; lightgbm {lightgbm.__version__}, xgboost {xgboost.__version__}, "
          f"onnxruntime {onnxruntime.__version__}")  # fmt: skip
    print("estimator | runtime | max |diff| / max |score| | same leaf | NDCG@10 difference | largest in a query | ties untied")
    for name, make in ESTIMATORS.items():
        model = make().fit(X, y, qid=qid)
        terms, _, _ = model._additive_terms()
        expected64, expected32 = model.predict(X_test), model.predict(X32)
        scale64, scale32 = np.abs(expected64).max(), np.abs(expected32).max()

        booster = lightgbm.Booster(model_str=to_lightgbm(model))
        leaves = booster.predict(X_test, pred_leaf=True).reshape(len(X_test), -1)
        ranks = [(np.cumsum(tree.nodes["feature"] < 0) - 1)[tree.apply(X_test)] for tree, _, _ in terms]
        rows = [("LightGBM, float64", booster.predict(X_test), expected64, scale64, leaf_share(leaves, np.array(ranks).T))]

        xgb = xgboost.Booster()
        xgb.load_model(bytearray(json.dumps(to_xgboost(model)).encode()))
        matrix = xgboost.DMatrix(X32)
        leaves = xgb.predict(matrix, pred_leaf=True).reshape(len(X32), -1)
        nodes = np.array([tree.apply(X32) for tree, _, _ in terms]).T
        rows.append(("XGBoost, float32", xgb.predict(matrix), expected32, scale32, leaf_share(leaves, nodes)))

        for dtype, values, expected, scale in ((np.float32, X32, expected32, scale32), (np.float64, X_test, expected64, scale64)):
            session = onnxruntime.InferenceSession(to_onnx(model, dtype=dtype).SerializeToString())
            scores = session.run(None, {"X": values})[0]
            rows.append((f"onnxruntime, {np.dtype(dtype).name}", scores, expected, scale, None))

        for runtime, scores, expected, scale, same_leaf in rows:
            scores = scores.astype(np.float64)
            error = np.abs(scores - expected).max() / scale
            per_query = ndcg_score(y_test, scores, qid_test, k=10, per_query=True)
            reference = ndcg_score(y_test, expected, qid_test, k=10, per_query=True)
            ndcg, largest = np.mean(per_query) - np.mean(reference), np.abs(per_query - reference).max()
            tied, untied = tied_pairs(scores, qid_test, expected)
            leaf_text = "-" if same_leaf is None else f"{same_leaf:.6f}"
            print(
                f"{name} | {runtime} | {error:.2e} | {leaf_text} | {ndcg:+.1e} | {largest:.3f} | {untied} of {tied}",
                flush=True,
            )


if __name__ == "__main__":
    main()
