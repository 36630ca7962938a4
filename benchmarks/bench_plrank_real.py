"""PLRank against LambdaMART on real data and on data shaped like the two held-out sets of
the source-papers issue, with the knobs that move the gap, in one run.

    python benchmarks/bench_plrank_real.py

Data:

- ``mq2008``: LETOR 4.0 MQ2008, 5 folds (three grades, about 19 documents a query);
- ``lightgbm``: LightGBM's lambdarank example, ``rank.train`` -> ``rank.test`` (real, five
  grades, 15 documents a query, 50 test queries);
- ``three-long``: ``make_ranking(400 queries x 150 documents, 40 features, 5 grades)``
  with the grades merged into three (0-2 -> 0, 3 -> 1, 4 -> 2: most documents at the
  lowest grade), like the issue's first held-out set;
- ``five-web``: ``make_ranking(600 queries x 50-200 documents, 136 features, 5 grades)``,
  shaped like an MSLR-WEB sample (the issue's second).

The synthetic sets train on 80% of their queries and test on the rest. Contenders (300
iterations, 31 leaves, learning rate 0.05, 20 documents per leaf, seed 0): LambdaMART;
PLRank with its defaults (``top_k=30``, ten ground-truth permutations,
``skip_tied_tail=True``); the paper's objective with one permutation (``top_k=10``) and
with one knob changed at a time (``top_k=30``, ``n_permutations=3``, the paper's
recommended ``obj=3``, ``skip_tied_tail=True``); and pairs and longer horizons of them
(``--variants`` picks).
Reported: test NDCG@10 (plain: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant = 0)
over every test query of the set (all folds pooled), the differences to LambdaMART with
paired t-tests, and, per set, the compression of ``n`` ground-truth permutations (the
paper's Table 3): distinct contexts over ``n`` times the contexts of one permutation.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402
from _report import contender_line  # noqa: E402
from compare import load_splits  # noqa: E402

SETS = ("mq2008", "lightgbm", "three-long", "five-web")
PAPER = {"top_k": 10, "n_permutations": 1, "skip_tied_tail": False}  # the paper's objective, one permutation
VARIANTS = {
    "PLRank defaults": {},
    "PLRank n_permutations=3": {"n_permutations": 3},
    "PLRank paper (top_k=10)": PAPER,
    "PLRank paper top_k=30": {**PAPER, "top_k": 30},
    "PLRank paper n_permutations=3": {**PAPER, "n_permutations": 3},
    "PLRank paper skip_tied_tail": {**PAPER, "skip_tied_tail": True},
    "PLRank top_k=30 skip_tied_tail": {**PAPER, "top_k": 30, "skip_tied_tail": True},
    "PLRank top_k=30 n_permutations=3": {**PAPER, "top_k": 30, "n_permutations": 3},
    "PLRank top_k=100 skip_tied_tail": {**PAPER, "top_k": 100, "skip_tied_tail": True},
    "PLRank top_k=100 skip_tied_tail n_permutations=3": {**PAPER, "top_k": 100, "skip_tied_tail": True, "n_permutations": 3},
}


def splits_of(name: str, datasets: Path) -> list[tuple]:
    """``[(X, y, qid, X_test, y_test, qid_test), ...]`` of one set."""
    if name in ("mq2008", "lightgbm"):
        return [split[:6] for split in load_splits(name, datasets, [1, 2, 3, 4, 5])]
    from forestrank import make_ranking

    if name == "three-long":
        X, y, qid = make_ranking(n_queries=400, docs_per_query=150, n_features=40, n_grades=5, random_state=0)
        y = np.select([y <= 2, y == 3], [0.0, 1.0], 2.0)
    else:
        X, y, qid = make_ranking(n_queries=600, docs_per_query=(50, 200), n_features=136, n_grades=5, random_state=0)
    train = qid < int(0.8 * qid.max())
    return [(X[train], y[train], qid[train], X[~train], y[~train], qid[~train])]


def compression(y: np.ndarray, qid: np.ndarray, n_permutations: int, **settings: object) -> float:
    """Distinct Plackett-Luce contexts of ``n_permutations`` ground-truth permutations over
    ``n_permutations`` times those of one (PLRank paper, Table 3), with the objective's
    other ``settings`` (``top_k``, ``skip_tied_tail``)."""
    from forestrank.objectives import PlackettLuce

    order = np.argsort(qid, kind="stable")
    boundaries = np.r_[0, np.cumsum(np.unique(qid[order], return_counts=True)[1])]
    one = PlackettLuce(n_permutations=1, random_state=0, **settings)
    several = PlackettLuce(n_permutations=n_permutations, random_state=0, **settings)
    one.prepare(y[order], boundaries)
    several.prepare(y[order], boundaries)
    return len(several.contexts_) / (n_permutations * len(one.contexts_))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    parser.add_argument("--datasets", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "datasets")
    parser.add_argument("--n-estimators", type=int, default=300)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS), help="PLRank settings to run beside LambdaMART")
    args = parser.parse_args()

    from forestrank import LambdaMART, PLRank, ndcg_score

    common = dict(n_estimators=args.n_estimators, learning_rate=0.05, max_leaf_nodes=31, min_samples_leaf=20, n_jobs=2, random_state=0)
    print(f"machine: {describe_machine()}")
    for name in args.sets:
        splits = splits_of(name, args.datasets)
        scores = {"LambdaMART": [], **{variant: [] for variant in args.variants}}
        seconds = dict.fromkeys(scores, 0.0)
        for X, y, qid, X_test, y_test, qid_test in splits:
            for contender in scores:
                model = LambdaMART(**common) if contender == "LambdaMART" else PLRank(**common, **VARIANTS[contender])
                start = time.perf_counter()
                model.fit(X, y, qid=qid)
                seconds[contender] += time.perf_counter() - start
                scores[contender].append(ndcg_score(y_test, model.predict(X_test), qid_test, k=10, per_query=True))
        X, y, qid = splits[0][:3]
        paper = {key: PAPER[key] for key in ("top_k", "skip_tied_tail")}
        ratios = ", ".join(
            f"{label} n={n}: {compression(y, qid, n, **settings):.3f}"
            for label, settings in (("paper's objective", paper), ("defaults", {})) for n in (3, 10)
        )  # fmt: skip
        grades = np.unique(np.concatenate([split[1] for split in splits]), return_counts=True)
        print(f"\n{name}: {sum(len(np.unique(split[5])) for split in splits)} test queries; grade shares "
              f"{np.round(grades[1] / grades[1].sum(), 3).tolist()}; distinct contexts per permutation (first split) {ratios}")  # fmt: skip
        reference = np.concatenate(scores["LambdaMART"])
        for contender, values in scores.items():
            extra = f"  fit {seconds[contender]:6.1f} s"
            print(contender_line(contender, np.concatenate(values), reference, "LambdaMART", extra), flush=True)
    print("\nNDCG@10: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant query = 0; paired t-tests over the test queries")


if __name__ == "__main__":
    main()
