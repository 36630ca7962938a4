"""Learning from position-biased clicks: naive, Unbiased LambdaMART and position factors,
against XGBoost's ``lambdarank_unbiased`` and LightGBM's position bias, in one run.

    python benchmarks/bench_clicks.py

Data: ``make_ranking(3,000 queries x 30 documents, 40 features, random_state=0)``; the
first 2,500 queries train, the last 500 test with their true grades. A production-like
ranker (LambdaMART, 20 iterations, trained on the true grades of 5% of the training
queries; or ``--production feature``, one feature alone) orders every training query; ``forestrank.datasets.simulate_clicks`` then
draws ``--sessions`` click sessions per query under the position-based model
(examination ``1 / rank**eta``, ``eta = 1``, click noise 0.1), each session a query of
the click log. Every contender: 100 iterations, 31 leaves, learning rate 0.1, 20
documents per leaf (LightGBM and XGBoost alike). Reported: test NDCG@10 on the true
grades (gain 2^l-1, 1/log2(r+1), expected ties, no-relevant = 0), paired t-tests against
naive LambdaMART, and the Spearman correlation of each model's learned position effect
with the true examination probabilities over the top ``--positions`` positions. Bounds
(objectives issue): both debiased modes beat naive LambdaMART (p < 0.01), and the
estimated propensities' rank correlation with the true ones is at least 0.9.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402
from _report import versus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--eta", type=float, default=1.0)
    parser.add_argument("--positions", type=int, default=10)
    parser.add_argument(
        "--production", choices=["lambdamart", "feature"], default="lambdamart",
        help="the ranking shown: LambdaMART on 5%% of the queries' grades, or one feature (X[:, 0]) alone",
    )  # fmt: skip
    args = parser.parse_args()

    import lightgbm
    import xgboost
    from scipy.stats import spearmanr

    from forestrank import LambdaMART, make_ranking, ndcg_score, simulate_clicks

    X, y, qid = make_ranking(n_queries=3000, docs_per_query=30, n_features=40, random_state=0)
    train = qid < 2500
    X_test, y_test, qid_test = X[~train], y[~train], qid[~train]
    X, y, qid = X[train], y[train], qid[train]
    if args.production == "feature":
        shown = X[:, 0]
    else:
        seed_queries = qid < 125
        production = LambdaMART(n_estimators=20, random_state=0).fit(X[seed_queries], y[seed_queries], qid=qid[seed_queries])
        shown = production.predict(X)
    sessions = [simulate_clicks(y, qid, shown, eta=args.eta, noise=0.1, random_state=s) for s in range(args.sessions)]
    X_log = np.vstack([X] * args.sessions)
    qid_log = np.concatenate([qid + 10_000 * s for s in range(args.sessions)])
    clicks = np.concatenate([log.clicks for log in sessions])
    position = np.concatenate([log.position for log in sessions])
    true_examination = 1.0 / np.arange(1, args.positions + 1) ** args.eta
    print(f"machine: {describe_machine()}")
    print(f"production ranking: {args.production}; click log: {len(clicks)} impressions in {len(np.unique(qid_log))} sessions, click rate {clicks.mean():.3f}, "
          f"position-based model eta={args.eta}, noise 0.1; test: {len(np.unique(qid_test))} queries with true grades")

    results = {}

    def report(name, scores, effect=None, seconds=0.0):
        results[name] = ndcg_score(y_test, scores, qid_test, k=10, per_query=True)
        line = f"  {name:<44} NDCG@10 {results[name].mean():.4f}  fit {seconds:5.1f} s"
        if name != "forestrank LambdaMART, naive" and "forestrank LambdaMART, naive" in results:
            line += f"  vs naive {versus(results[name], results['forestrank LambdaMART, naive'])}"
        if effect is not None:
            line += f"  position effect rank correlation {spearmanr(effect[: args.positions], true_examination)[0]:.3f}"
        print(line, flush=True)

    common = dict(n_estimators=100, max_leaf_nodes=31, learning_rate=0.1, min_samples_leaf=20, n_jobs=2, random_state=0)
    start = time.perf_counter()
    oracle = LambdaMART(**common).fit(X, y, qid=qid)
    report("forestrank LambdaMART on the true grades", oracle.predict(X_test), seconds=time.perf_counter() - start)
    for mode in (None, "unbiased", "factor"):
        start = time.perf_counter()
        routed = {} if mode is None else {"position": position}
        model = LambdaMART(**common, position_bias=mode).fit(X_log, clicks, qid=qid_log, **routed)
        name = f"forestrank LambdaMART, {mode or 'naive'}"
        report(name, model.predict(X_test), getattr(model, "position_bias_", None), time.perf_counter() - start)

    # The naive models with XGBoost's pair selection on both sides ("mean", 8 pairs a document).
    start = time.perf_counter()
    model = LambdaMART(**common, lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=8).fit(X_log, clicks, qid=qid_log)
    report("forestrank LambdaMART, naive, mean pairs (8)", model.predict(X_test), None, time.perf_counter() - start)

    # XGBoost reads the display position from the row order inside each query.
    order = np.lexsort((position, qid_log))
    xgboost_common = dict(
        objective="rank:ndcg", tree_method="hist", grow_policy="lossguide", max_leaves=31, learning_rate=0.1,
        n_estimators=100, min_child_weight=1e-3, n_jobs=2, random_state=0,
    )  # fmt: skip
    for name, pairs in (("naive", {}), ("naive, mean pairs (8)", dict(lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=8))):
        start = time.perf_counter()
        naive = xgboost.XGBRanker(**xgboost_common, **pairs).fit(X_log[order], clicks[order], qid=qid_log[order])
        report(f"XGBoost XGBRanker {name}", naive.predict(X_test), None, time.perf_counter() - start)
    start = time.perf_counter()
    ranker = xgboost.XGBRanker(
        objective="rank:ndcg", lambdarank_unbiased=True, tree_method="hist", grow_policy="lossguide", max_leaves=31,
        learning_rate=0.1, n_estimators=100, min_child_weight=1e-3, n_jobs=2, random_state=0,
    )  # fmt: skip
    ranker.fit(X_log[order], clicks[order], qid=qid_log[order])
    effect = None
    config = ranker.get_booster().save_config()
    if '"ti+"' in config:
        import json

        effect = np.asarray(json.loads(config)["learner"]["objective"]["ti+"], dtype=float)
    report("XGBoost XGBRanker lambdarank_unbiased", ranker.predict(X_test), effect, time.perf_counter() - start)

    # LightGBM takes positions on its Dataset only (0-based position ids).
    sizes = np.diff(np.flatnonzero(np.r_[True, qid_log[order][1:] != qid_log[order][:-1], True]))
    start = time.perf_counter()
    booster = lightgbm.train(
        dict(objective="lambdarank", num_leaves=31, learning_rate=0.1, min_data_in_leaf=20, num_threads=2, seed=0, verbose=-1),
        lightgbm.Dataset(X_log[order], clicks[order], group=sizes, position=position[order] - 1),
        num_boost_round=100,
    )  # fmt: skip
    report("LightGBM lambdarank with position bias", booster.predict(X_test), None, time.perf_counter() - start)
    print("NDCG@10: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant query = 0, on the true grades")


if __name__ == "__main__":
    main()
