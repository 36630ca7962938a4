"""Check forestrank's ``convention="letor4"`` against the official LETOR 4.0 script.

Trains LightGBM's LGBMRanker on each MQ2008 fold, scores the test file with the
official ``Eval-Score-4.0.pl`` (you provide it: it is Microsoft's, not ours) and
with ``forestrank.metrics``, and reports the largest per-query difference for
NDCG@1..10, P@1..10 and MAP. It also prints the 5-fold means under the letor4
convention and under forestrank's default (plain) definition, the two numbers
docs/metrics.md quotes.

    python benchmarks/verify_letor_eval.py --script Eval-Score-4.0.pl \
        --data ../shared/datasets/MQ2008

Needs perl and ``pip install -e ".[bench]"``. The script prints 4 decimals per query;
replace ``%.4f`` by ``%.12f`` in a private copy to compare to 1e-12.
"""

import argparse
import subprocess
import tempfile
from pathlib import Path

import lightgbm
import numpy as np

from forestrank import load_letor_fold, map_score, ndcg_score, precision_at_k


def official_per_query(script: Path, test_file: Path, scores: np.ndarray) -> dict[str, np.ndarray]:
    """Run the official script; per-query rows sorted by numeric qid, as it prints them."""
    with tempfile.TemporaryDirectory() as folder:
        predictions, output = Path(folder, "pred.txt"), Path(folder, "out.txt")
        np.savetxt(predictions, scores, fmt="%.17g")
        subprocess.run(["perl", str(script), str(test_file), str(predictions), str(output), "1"], check=True)
        lines = output.read_text().splitlines()
    ndcg_header = next(i for i, line in enumerate(lines) if line.startswith("qid\tNDCG"))
    precision_rows = [line.split("\t") for line in lines[1:ndcg_header] if line and not line.startswith("Average")]
    ndcg_rows = [line.split("\t") for line in lines[ndcg_header + 1 :] if line and not line.startswith("Average")]
    precision = np.array([[float(v) for v in row[1:12]] for row in precision_rows])
    ndcg = np.array([[float(v) for v in row[1:11]] for row in ndcg_rows])
    return {"precision": precision[:, :10], "map": precision[:, 10], "ndcg": ndcg}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", type=Path, required=True, help="path to the official Eval-Score-4.0.pl")
    parser.add_argument("--data", type=Path, default=Path("../shared/datasets/MQ2008"))
    parser.add_argument("--folds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    args = parser.parse_args()

    worst = {"ndcg": 0.0, "precision": 0.0, "map": 0.0}
    means = {"letor4": [], "plain": []}
    for fold in args.folds:
        (X, y, qid), _, (X_test, y_test, qid_test) = load_letor_fold(args.data / f"Fold{fold}")
        ranker = lightgbm.LGBMRanker(
            n_estimators=500, num_leaves=31, learning_rate=0.05, min_child_samples=20,
            random_state=0, n_jobs=2, verbose=-1,
        )  # fmt: skip
        ranker.fit(X, y, group=np.unique(qid, return_counts=True)[1])
        scores = ranker.predict(X_test)
        official = official_per_query(args.script, args.data / f"Fold{fold}" / "test.txt", scores)
        ours = {
            "ndcg": np.column_stack(
                [ndcg_score(y_test, scores, qid_test, k, convention="letor4", per_query=True) for k in range(1, 11)]
            ),
            "precision": np.column_stack(
                [precision_at_k(y_test, scores, qid_test, k, convention="letor4", per_query=True) for k in range(1, 11)]
            ),
            "map": map_score(y_test, scores, qid_test, convention="letor4", per_query=True),
        }
        for name in worst:
            worst[name] = max(worst[name], float(np.abs(ours[name] - official[name]).max()))
        means["letor4"].append(ndcg_score(y_test, scores, qid_test, 10, convention="letor4"))
        means["plain"].append(ndcg_score(y_test, scores, qid_test, 10))
        print(
            f"Fold{fold}: {len(official['map'])} queries; NDCG@10 letor4 {means['letor4'][-1]:.4f}, "
            f"plain {means['plain'][-1]:.4f}"
        )
    print("largest |forestrank - official| per query:", ", ".join(f"{k} {v:.2e}" for k, v in worst.items()))
    print(
        f"{len(args.folds)}-fold mean NDCG@10 of LGBMRanker: letor4 {np.mean(means['letor4']):.4f}, "
        f"plain (exp gain, log2(r+1), expected ties) {np.mean(means['plain']):.4f}"
    )


if __name__ == "__main__":
    main()
