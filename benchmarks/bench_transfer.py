"""Transfer learning from a large ranking set to a small one of another population
(Mohan's thesis, ch. 5): the thesis' two experiments on a two-population synthetic set.

    python benchmarks/bench_transfer.py                   # covariate shift
    python benchmarks/bench_transfer.py --shift concept   # and the relevance function differs

Data: ``make_ranking(2,400 queries x 20 documents, 20 features, random_state=0)``,
split into two populations by the query's mean of feature 0: the 20% of queries with
the highest mean are the target (``--target-train`` of them train, the rest test), the
other 80% the source. ``--shift covariate``: the same relevance function, shifted
features (a domain classifier tells the two apart). ``--shift concept``: in the target's
rows features 1-5 and 11-15 trade places, so that half of what the source learned about
them is wrong there. Every model: LambdaMART, 100 iterations, 31 leaves, learning rate
0.1, 20 documents a leaf. Reported: NDCG@10 on the target's test queries (plain
convention: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant = 0), paired t-tests
against the target-only model over those queries, per seed of the target's training
draw and pooled.

- Table 5.1: the target's training set plus the source documents a cross-fitted domain
  classifier (``forestrank.transfer.select_similar``, 5 folds by query) ranks most
  target-like, top P% for P = 10, 25, 50, 100 (100: all of the source).
- Table 5.2: the target's features plus a source model's outputs
  (``forestrank.transfer.ModelFeatures``, Q: its score, P: its grade probabilities, C:
  its cumulative probabilities), the source model being cumulative boosting on the
  whole source set.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target-train", type=int, default=60, help="target queries to train on")
    parser.add_argument("--seeds", type=int, default=3, help="draws of the target's training queries")
    parser.add_argument("--shift", choices=["covariate", "concept"], default="covariate")
    args = parser.parse_args()

    from forestrank import LambdaMART, make_ranking, ndcg_score, paired_test
    from forestrank.transfer import ModelFeatures, select_similar

    X, y, qid = make_ranking(n_queries=2400, docs_per_query=20, n_features=20, random_state=0)
    query_mean = np.bincount(qid, weights=X[:, 0]) / np.bincount(qid)
    target_queries = np.flatnonzero(query_mean >= np.quantile(query_mean, 0.8))
    in_target = np.isin(qid, target_queries)
    if args.shift == "concept":
        swapped = np.r_[np.arange(1, 6), np.arange(11, 16)]
        X[np.ix_(in_target, swapped)] = X[np.ix_(in_target, np.r_[np.arange(11, 16), np.arange(1, 6)])]
    X_source, y_source, qid_source = X[~in_target], y[~in_target], qid[~in_target]

    def ranker() -> LambdaMART:
        return LambdaMART(n_estimators=100, max_leaf_nodes=31, learning_rate=0.1, min_samples_leaf=20, n_jobs=2, random_state=0)

    print(f"machine: {describe_machine()}")
    print(f"{args.shift} shift; source: {len(np.unique(qid_source))} queries; target: {len(target_queries)} queries, {args.target_train} "
          f"of them train; seeds {args.seeds}")  # fmt: skip
    start = time.perf_counter()
    source_model = LambdaMART(objective="cumulative", n_estimators=100, n_jobs=2, random_state=0)
    source_model.fit(X_source, y_source, qid=qid_source)
    print(f"source model (cumulative boosting): {time.perf_counter() - start:.1f} s")

    results: dict[str, list[np.ndarray]] = {}
    for seed in range(args.seeds):
        chosen = np.random.default_rng(seed).choice(target_queries, args.target_train, replace=False)
        train = np.isin(qid, chosen)
        test = in_target & ~train
        X_train, y_train, qid_train = X[train], y[train], qid[train]

        def record(name: str, scores: np.ndarray) -> None:
            results.setdefault(name, []).append(ndcg_score(y[test], scores, qid[test], k=10, per_query=True))

        record("target only", ranker().fit(X_train, y_train, qid=qid_train).predict(X[test]))
        start = time.perf_counter()
        rows, probabilities = select_similar(X_source, X_train, qid_source=qid_source, random_state=seed)
        seconds = time.perf_counter() - start
        if seed == 0:
            print(f"select_similar: {seconds:.1f} s; P(target) of the source rows: top 10% >= {probabilities[len(rows) // 10]:.3f}, "
                  f"median {np.median(probabilities):.3f}")  # fmt: skip
        for percent in (10, 25, 50, 100):
            kept = rows[: len(rows) * percent // 100]
            model = ranker().fit(
                np.vstack([X_train, X_source[kept]]), np.r_[y_train, y_source[kept]], qid=np.r_[qid_train, qid_source[kept]]
            )  # fmt: skip
            record(f"target + top {percent}% of the source by the domain classifier", model.predict(X[test]))
        for kind in ("Q", "P", "C"):
            features = ModelFeatures(source_model, kind=kind).fit(X_train)
            model = ranker().fit(features.transform(X_train), y_train, qid=qid_train)
            record(f"target with the source model's {kind} features", model.predict(features.transform(X[test])))
        record("the source model alone", source_model.predict(X[test]))

    baseline = np.concatenate(results["target only"])
    print("\n| model | NDCG@10 (seeds) | − target only (p) |\n|---|---|---|")
    for name, values in results.items():
        pooled = np.concatenate(values)
        seeds = " ".join(f"{v.mean():.4f}" for v in values)
        versus = "" if name == "target only" else (lambda t: f"{t.mean_difference:+.4f} (p={t.pvalue:.2g})")(paired_test(pooled, baseline))
        print(f"| {name} | {pooled.mean():.4f} ({seeds}) | {versus} |")
    print("NDCG@10: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant query = 0; paired t-tests over the target's test "
          "queries of every seed")  # fmt: skip


if __name__ == "__main__":
    main()
