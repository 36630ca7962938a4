"""Why PLRank trails LambdaMART on LETOR-style data: a controlled experiment on ties.

    python benchmarks/bench_plrank_ties.py

``make_ranking(--rows / docs_per_query queries, docs_per_query, 40 features, 5 grades,
random_state=0)`` with
the grades used as they are (0-4, about half of the documents at grade 0) or merged into
three (0-2 -> 0, 3 -> 1, 4 -> 2: about 88% at the lowest grade, like MQ2008's 81%), with
short (20) or long (100) queries; 80% of the queries train, the rest test. Contenders
(100 iterations, 31 leaves, learning rate 0.05, 20 documents per leaf, seed 0):
LambdaMART; PLRank (top 10, the paper's objective: every context of the ground-truth
permutation down to position 10, the order of tied grades drawn at random); PLRank with
``skip_tied_tail=True`` (no context once only the query's lowest grade is left); PLRank
with ``top_k=3``. Reported: test NDCG@10 (plain: gain 2^l-1, 1/log2(r+1), expected ties,
no-relevant = 0), the differences to LambdaMART with paired t-tests, and the share of
PLRank's top-10 contexts that choose among documents of the query's lowest grade only.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402
from _report import contender_line  # noqa: E402


def _tail_share(y: np.ndarray, qid: np.ndarray, top_k: int) -> float:
    """Share of the top-k contexts (positions 0..k-1 of a grades-descending permutation)
    whose chosen document is of the query's lowest grade: a choice among ties."""
    tail, total = 0, 0
    for q in np.unique(qid):
        grades = np.sort(y[qid == q])[::-1]
        positions = min(top_k, len(grades))
        total += positions
        tail += int((grades[:positions] == grades[-1]).sum())
    return tail / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--rows", type=int, default=150_000, help="rows per set (queries = rows / documents per query)")
    args = parser.parse_args()

    from forestrank import LambdaMART, PLRank, make_ranking, ndcg_score

    common = dict(n_estimators=args.n_estimators, max_leaf_nodes=31, learning_rate=0.05, min_samples_leaf=20, n_jobs=2, random_state=0)
    contenders = {
        "LambdaMART": lambda: LambdaMART(**common),
        "PLRank": lambda: PLRank(top_k=10, n_permutations=1, skip_tied_tail=False, **common),
        "PLRank skip_tied_tail": lambda: PLRank(top_k=10, n_permutations=1, skip_tied_tail=True, **common),
        "PLRank top_k=3": lambda: PLRank(top_k=3, n_permutations=1, skip_tied_tail=False, **common),
    }
    print(f"machine: {describe_machine()}")
    for docs in (20, 100):
        n_queries = args.rows // docs
        X, y5, qid = make_ranking(n_queries=n_queries, docs_per_query=docs, n_features=40, n_grades=5, random_state=0)
        for grades in (5, 3):
            y = y5 if grades == 5 else np.select([y5 <= 2, y5 == 3], [0, 1], 2).astype(float)
            train = qid < int(0.8 * n_queries)
            lowest = np.mean([np.mean(y[qid == q] == y[qid == q].min()) for q in np.unique(qid[train])])
            print(f"{docs} documents per query, {grades} grades: lowest grade {lowest:.0%} of a query's documents, "
                  f"top-10 contexts choosing among the lowest grade {_tail_share(y[train], qid[train], 10):.0%}")
            scores = {}
            for name, make in contenders.items():
                model = make().fit(X[train], y[train], qid=qid[train])
                scores[name] = ndcg_score(y[~train], model.predict(X[~train]), qid[~train], k=10, per_query=True)
                print(contender_line(name, scores[name], scores["LambdaMART"], "LambdaMART"), flush=True)
    print("NDCG@10: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant query = 0")


if __name__ == "__main__":
    main()
