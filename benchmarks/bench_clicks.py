"""Learning from position-biased clicks: naive, Unbiased LambdaMART and position factors,
against XGBoost's naive and ``lambdarank_unbiased`` models and LightGBM's position bias,
over several logging rankers and examination models, in one run.

    python benchmarks/bench_clicks.py                       # every logger x examination, 5 seeds
    python benchmarks/bench_clicks.py --logger noisy --examination position --seeds 1

Data, per seed ``s``: ``make_ranking(--queries + 500 queries x --docs-per-query
documents, 40 features, random_state=s)`` and one more feature drawn from N(0, 1),
unrelated to the grades; the first ``--queries`` queries train, the last 500 test with
their true grades. A logging ranker orders every training query:

- ``weak``: feature 0 alone;
- ``noisy``: the grade plus N(0, 1) noise plus the unrelated feature (the documents the
  logger puts on top are partly chosen by a feature a naive model then learns);
- ``production``: LambdaMART, 20 iterations, trained on the true grades of 5% of the
  training queries;
- ``near-optimal``: the grade plus N(0, 0.25) noise.

``forestrank.datasets.simulate_clicks`` draws ``--sessions`` click sessions per query
under the position-based model (examination ``1 / rank``) or the cascade model, click
noise 0.1; each session is a query of the click log. Every contender: ``--n-estimators``
iterations, 31 leaves, 20 documents per leaf (forestrank and LightGBM; XGBoost has no
count limit, its ``min_child_weight`` is 1e-3), XGBoost's
learning rate 0.1 and forestrank's and LightGBM's 0.05 (``--step matched``: XGBoost's
LambdaRank hessian is twice theirs, so these are the same Newton steps; XGBoost without
its depth limit and leaf L2, as the others) or 0.1 as well (``--step nominal``: the same
number, steps twice XGBoost's; XGBoost's max_depth 6 and L2 1); XGBoost's "topk" pairs are its default (truncation 32, every pair of a
25-document query, as forestrank's default truncation 30). Reported per logger and
examination model: test NDCG@10 on the true grades (gain 2^l-1, 1/log2(r+1), expected
ties, no-relevant query = 0) averaged over the seeds, and paired t-tests over the test
queries of every seed; under the position-based model, the Spearman correlation of each
learned position effect with the true examination over positions 1-10 (objectives issue:
at least 0.9). Bounds (knobs issue): naive LambdaMART within 0.005 of XGBoost's
naive model with the same pair method; ``position_bias="unbiased"`` at or above
``lambdarank_unbiased``, never below our naive model beyond noise, and above it wherever
XGBoost's is above its naive model.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402

LOGGERS = ("weak", "noisy", "production", "near-optimal")
EXAMINATIONS = ("position", "cascade")
CONTENDERS = (
    "forestrank naive",
    "forestrank naive, mean pairs (8)",
    "forestrank unbiased",
    "forestrank factor",
    "XGBoost naive",
    "XGBoost naive, mean pairs (8)",
    "XGBoost lambdarank_unbiased",
    "LightGBM naive",
    "LightGBM position",
)
# XGBoost's LambdaRank hessian is twice LightGBM's and ours (src/objective/lambdarank_obj.h in
# XGBoost: the pair's curvature along s_i - s_j), so its Newton step at learning rate r is ours
# at r / 2: the same step is XGBoost's learning rate times this.
XGBOOST_STEP = 2.0
# (contender, the contender it is compared with, the bound): the paired comparisons the issue sets.
COMPARISONS = (
    ("forestrank naive", "XGBoost naive", "within 0.005"),
    ("forestrank naive, mean pairs (8)", "XGBoost naive, mean pairs (8)", "within 0.005"),
    ("forestrank unbiased", "XGBoost lambdarank_unbiased", ">= 0"),
    ("forestrank unbiased", "forestrank naive", "not below beyond noise; > 0 where XGBoost's is"),
    ("XGBoost lambdarank_unbiased", "XGBoost naive", "(reference)"),
    ("forestrank factor", "forestrank naive", "(reference)"),
    ("forestrank naive", "LightGBM naive", "(reference: the same Newton step)"),
    ("LightGBM position", "forestrank naive", "(reference)"),
)


def click_log(logger: str, examination: str, seed: int, args: argparse.Namespace) -> dict:
    """One seed's training click log and test set with true grades."""
    from forestrank import LambdaMART, make_ranking, simulate_clicks

    rng = np.random.RandomState(seed)
    X, y, qid = make_ranking(n_queries=args.queries + 500, docs_per_query=args.docs_per_query, n_features=40, random_state=seed)
    X = np.column_stack([X, rng.normal(size=len(y))])  # the feature unrelated to the grades
    train = qid < args.queries
    X_test, y_test, qid_test = X[~train], y[~train], qid[~train]
    X, y, qid = X[train], y[train], qid[train]
    if logger == "weak":
        shown = X[:, 0]
    elif logger == "noisy":
        shown = y + rng.normal(size=len(y)) + X[:, -1]
    elif logger == "near-optimal":
        shown = y + rng.normal(scale=0.25, size=len(y))
    else:
        seed_queries = qid < args.queries // 20
        production = LambdaMART(n_estimators=20, random_state=seed).fit(X[seed_queries], y[seed_queries], qid=qid[seed_queries])
        shown = production.predict(X)
    sessions = [
        simulate_clicks(y, qid, shown, examination, noise=0.1, random_state=seed * 1000 + s) for s in range(args.sessions)
    ]  # fmt: skip
    return dict(
        X=np.vstack([X] * args.sessions),
        qid=np.concatenate([qid + (qid.max() + 1) * s for s in range(args.sessions)]),
        clicks=np.concatenate([log.clicks for log in sessions]),
        position=np.concatenate([log.position for log in sessions]),
        X_test=X_test, y_test=y_test, qid_test=qid_test,
    )  # fmt: skip


def fit_predict(name: str, log: dict, seed: int, n_estimators: int, learning_rate: float, xgboost: dict) -> tuple:
    """Fit contender ``name`` on the click log (``learning_rate``: forestrank's and LightGBM's;
    ``xgboost``: XGBoost's learning rate and tree limits); return its scores of the test rows
    and the position effect it learned (None for a naive model or LightGBM's, which keeps it
    inside the booster)."""
    X, clicks, qid, position = log["X"], log["clicks"], log["qid"], log["position"]
    mean_pairs = dict(lambdarank_pair_method="mean", lambdarank_num_pair_per_sample=8)
    if name.startswith("forestrank"):
        from forestrank import LambdaMART

        model = LambdaMART(
            n_estimators=n_estimators, max_leaf_nodes=31, learning_rate=learning_rate, min_samples_leaf=20, n_jobs=2, random_state=seed,
            position_bias={"forestrank unbiased": "unbiased", "forestrank factor": "factor"}.get(name),
            **(mean_pairs if "mean pairs" in name else {}),
        )  # fmt: skip
        routed = {"position": position} if model.position_bias is not None else {}
        model.fit(X, clicks, qid=qid, **routed)
        return model.predict(log["X_test"]), getattr(model, "position_bias_", None)
    # XGBoost reads the display position from the row order inside each query.
    order = np.lexsort((position, qid))
    if name.startswith("XGBoost"):
        from xgboost import XGBRanker

        ranker = XGBRanker(
            objective="rank:ndcg", tree_method="hist", grow_policy="lossguide", max_leaves=31,
            n_estimators=n_estimators, min_child_weight=1e-3, n_jobs=2, random_state=seed,
            lambdarank_unbiased="unbiased" in name, **xgboost, **(mean_pairs if "mean pairs" in name else {}),
        )  # fmt: skip
        ranker.fit(X[order], clicks[order], qid=qid[order])
        objective = json.loads(ranker.get_booster().save_config())["learner"]["objective"]
        effect = np.asarray(objective["ti+"], dtype=float) if "ti+" in objective else None
        return ranker.predict(log["X_test"]), effect
    import lightgbm

    # LightGBM takes positions on its Dataset only (0-based position ids).
    sizes = np.diff(np.flatnonzero(np.r_[True, qid[order][1:] != qid[order][:-1], True]))
    shown = {"position": position[order] - 1} if name == "LightGBM position" else {}
    booster = lightgbm.train(
        dict(objective="lambdarank", num_leaves=31, learning_rate=learning_rate, min_data_in_leaf=20, num_threads=2, seed=seed, verbose=-1),
        lightgbm.Dataset(X[order], clicks[order], group=sizes, **shown),
        num_boost_round=n_estimators,
    )  # fmt: skip
    return booster.predict(log["X_test"]), None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logger", nargs="+", choices=LOGGERS, default=list(LOGGERS))
    parser.add_argument("--examination", nargs="+", choices=EXAMINATIONS, default=list(EXAMINATIONS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=1500, help="training queries")
    parser.add_argument("--docs-per-query", type=int, default=25)
    parser.add_argument("--sessions", type=int, default=2, help="click sessions per training query")
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument(
        "--step", choices=["nominal", "matched"], default="matched",
        help="nominal: every library at learning rate 0.1; matched: forestrank and LightGBM at 0.05, XGBoost at 0.1 (the same Newton step)",
    )  # fmt: skip
    parser.add_argument("--only", nargs="+", choices=CONTENDERS, default=list(CONTENDERS))
    args = parser.parse_args()

    from scipy.stats import spearmanr

    from forestrank import ndcg_score, paired_test

    learning_rate = 0.1 if args.step == "nominal" else 0.1 / XGBOOST_STEP
    # Matched: no depth limit and no L2 on the leaves, as forestrank's and LightGBM's defaults.
    xgboost = dict(learning_rate=0.1) if args.step == "nominal" else dict(learning_rate=0.1, max_depth=0, reg_lambda=0.0)
    print(f"machine: {describe_machine()}")
    print(f"{args.queries} training queries x {args.docs_per_query} documents, {args.sessions} sessions each, "
          f"{args.n_estimators} iterations, learning rate {learning_rate:g} (XGBoost {xgboost}), seeds 0-{args.seeds - 1}")  # fmt: skip
    summary = []
    for logger in args.logger:
        for examination in args.examination:
            scores = {name: [] for name in args.only}
            correlations = {name: [] for name in args.only}
            seconds = {name: 0.0 for name in args.only}
            click_rate = []
            for seed in range(args.seeds):
                log = click_log(logger, examination, seed, args)
                click_rate.append(log["clicks"].mean())
                for name in args.only:
                    start = time.perf_counter()
                    predicted, effect = fit_predict(name, log, seed, args.n_estimators, learning_rate, xgboost)
                    seconds[name] += time.perf_counter() - start
                    if effect is not None and examination == "position":
                        correlations[name].append(spearmanr(effect[:10], 1.0 / np.arange(1, 11))[0])
                    scores[name].append(ndcg_score(log["y_test"], predicted, log["qid_test"], k=10, per_query=True))
            print(f"\nlogger {logger}, examination {examination}: click rate {np.mean(click_rate):.3f}", flush=True)
            per_query = {name: np.concatenate(values) for name, values in scores.items()}
            for name in args.only:
                seeds = " ".join(f"{values.mean():.4f}" for values in scores[name])
                effect = f"  position effect rank correlation {np.mean(correlations[name]):.3f}" if correlations[name] else ""
                print(f"  {name:<34} NDCG@10 {per_query[name].mean():.4f}  (seeds {seeds})  fit {seconds[name] / args.seeds:5.1f} s{effect}")
            for a, b, bound in COMPARISONS:
                if a in per_query and b in per_query:
                    test = paired_test(per_query[a], per_query[b])
                    print(f"  {a} - {b}: {test.mean_difference:+.4f} (p={test.pvalue:.2g})  bound: {bound}")
                    summary.append((logger, examination, a, b, test.mean_difference, test.pvalue, bound))
    print("\n| logger | examination | comparison | difference (p) | bound |\n|---|---|---|---|---|")
    for logger, examination, a, b, difference, pvalue, bound in summary:
        print(f"| {logger} | {examination} | {a} − {b} | {difference:+.4f} (p={pvalue:.2g}) | {bound} |")
    print("NDCG@10: gain 2^l-1, 1/log2(r+1), expected ties, no-relevant query = 0, on the true grades; "
          "paired t-tests over the test queries of every seed")  # fmt: skip


if __name__ == "__main__":
    main()
