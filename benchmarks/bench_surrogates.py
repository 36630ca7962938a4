"""The PLRank paper's Table 1 analogue: list-wise surrogates, consistent and not, as boosted trees.

    python benchmarks/bench_surrogates.py
    python benchmarks/bench_surrogates.py --data lightgbm --n-estimators 300

Contenders (all ``LambdaMART``/``PLRank`` with 31 leaves, learning rate 0.05, 20
documents per leaf, ``n_jobs=2``, seed 0): LambdaMART (LambdaRank), McRank, MART-1
(least squares on ``2^l - 1``), MART-2 (on the grade), c-MART-1, CosMART, c-CosMART,
KLMART, c-KLMART and PLRank (top 10). Data: ``synthetic`` is the graded 0-4 set of
``benchmarks/compare.py`` (``make_ranking(2500 x 100, 136 features, random_state=0)``,
2,000 queries train, 500 test), shaped like the paper's data (five grades, many
relevant documents); ``lightgbm`` is LightGBM's lambdarank example
(``../shared/datasets/LightGBM-lambdarank-example``, 201 / 50 queries).

Metrics: NDCG@1, @3, @10 (gain 2^l-1, discount 1/log2(r+1), expected ties, a query
without relevant documents scores 0) and ERR@10 (expected ties, g_max = the data's
maximum grade), means over the test queries; paired t-tests of NDCG@10 against
LambdaMART over the test queries. The paper's finding checked at the end: each
consistent surrogate at least its inconsistent counterpart, and none of them ahead of
LambdaMART, McRank and PLRank.
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

PAIRS = [("c-MART-1", "MART-1"), ("c-CosMART", "CosMART"), ("c-KLMART", "KLMART")]


def contenders(n_estimators: int) -> dict:
    from forestrank import LambdaMART, PLRank

    common = dict(n_estimators=n_estimators, max_leaf_nodes=31, learning_rate=0.05, min_samples_leaf=20, n_jobs=2, random_state=0)
    boosted = {
        "LambdaMART": dict(objective="lambdarank"),
        "McRank": dict(objective="mcrank"),
        "MART-1": dict(objective="mart", target="exp_gain"),
        "MART-2": dict(objective="mart", target="grade"),
        "c-MART-1": dict(objective="c-mart"),
        "CosMART": dict(objective="cosine"),
        "c-CosMART": dict(objective="c-cosine"),
        "KLMART": dict(objective="kl"),
        "c-KLMART": dict(objective="c-kl"),
    }
    models = {name: (lambda params=params: LambdaMART(**common, **params)) for name, params in boosted.items()}
    models["PLRank"] = lambda: PLRank(top_k=10, n_permutations=1, skip_tied_tail=False, **common)
    return models


def _verdict(a: np.ndarray, b: np.ndarray) -> str:
    """Whether ``a >= b`` holds on the paired NDCG@10 differences of two systems."""
    from forestrank import paired_test

    test = paired_test(a, b)
    if test.mean_difference >= 0:
        outcome = "holds"
    elif test.pvalue >= 0.05:
        outcome = "not significantly contradicted"
    else:
        outcome = "does not hold"
    return f"{versus(a, b)}: {outcome}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=["synthetic", "lightgbm"], default="synthetic")
    parser.add_argument("--datasets", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets"))
    parser.add_argument("--n-estimators", type=int, default=100)
    args = parser.parse_args()

    from forestrank import err_score, ndcg_score

    X, y, qid, X_test, y_test, qid_test, _ = load_splits(args.data, Path(args.datasets), [1])[0]
    print(f"machine: {describe_machine()}")
    print(f"data: {args.data}, {len(y)} training rows, {len(np.unique(qid_test))} test queries, "
          f"{args.n_estimators} iterations")
    print(f"{'contender':<12} {'NDCG@1':>8} {'NDCG@3':>8} {'NDCG@10':>8} {'ERR@10':>8} {'fit s':>7}  NDCG@10 - LambdaMART")
    per_query = {}
    max_grade = float(max(y.max(), y_test.max()))
    for name, make in contenders(args.n_estimators).items():
        start = time.perf_counter()
        model = make().fit(X, y, qid=qid)
        seconds = time.perf_counter() - start
        scores = model.predict(X_test)
        per_query[name] = ndcg_score(y_test, scores, qid_test, k=10, per_query=True)
        line = (
            f"{name:<12} {ndcg_score(y_test, scores, qid_test, k=1):8.4f} {ndcg_score(y_test, scores, qid_test, k=3):8.4f} "
            f"{per_query[name].mean():8.4f} {err_score(y_test, scores, qid_test, 10, max_grade=max_grade):8.4f} {seconds:7.1f}"
        )
        if name != "LambdaMART":
            line += f"  {versus(per_query[name], per_query['LambdaMART'])}"
        print(line, flush=True)
    print("the paper's finding:")
    for consistent, plain in PAIRS:
        print(f"  {consistent} >= {plain}: {_verdict(per_query[consistent], per_query[plain])}")
    best = max(("LambdaMART", "McRank", "PLRank"), key=lambda name: per_query[name].mean())
    for name in ("MART-1", "MART-2", "c-MART-1", "CosMART", "c-CosMART", "KLMART", "c-KLMART"):
        print(f"  {best} >= {name}: {_verdict(per_query[best], per_query[name])}")
    print("NDCG: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant query = 0; ERR@10: expected ties, g_max = data max")


if __name__ == "__main__":
    main()
