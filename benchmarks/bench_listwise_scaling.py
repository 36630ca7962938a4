"""Per-tree fit time of RF-list, RF-hybrid and RF-point as the training set grows.

    python benchmarks/bench_listwise_scaling.py --rows 20000 50000 100000 200000 --trees 2 --cheap-trees 20
    python benchmarks/bench_listwise_scaling.py --letor ../shared/datasets/MQ2008/Fold1/train.txt --trees 20
    python benchmarks/bench_listwise_scaling.py --letor ../shared/datasets/MQ2008/Fold1/train.txt --trees 20 --heuristics
    python benchmarks/bench_listwise_scaling.py --heuristics
    python benchmarks/bench_listwise_scaling.py --forests "RF-list exact$"

Data: ``make_ranking`` with 100 documents per query and 136 features (so the number
of queries grows with the rows), the full 63% query sub-sample per tree, one thread.
Prints seconds per tree and the growth exponent ``b`` of ``time = a * rows**b``
fitted by least squares on the log-log points (the paper's RF-list is quadratic in
the rows of a query set; RF-point is about ``n log n``). With ``--letor``, the
per-tree time on that LETOR file instead (the issue's "RF-list per tree <= 5 x
RF-point on MQ2008 Fold1"): the forests fitted in turn, three rounds, medians. RF-list
and RF-hybrid run with their defaults (the paper's §4.4.2 heuristics: NDCG@10 as the
objective on at most 200 queries per node) and with the exact objective ("exact");
``--heuristics`` adds the exact objective with one heuristic each (queries sampled per
node, NDCG@10 as the objective, fewer bins): what each buys alone. ``--forests`` times
only the forests whose name matches a regular expression (and RF-point, the unit of
the ratios).

A tree's time is the marginal cost of one more tree: a fit of ``1 + trees`` trees
less a fit of one tree (the same first tree: trees are seeded by their index),
divided by ``trees``. A fit also bins the features and checks its input once,
whatever the number of trees (0.22 s at 20k rows and 2.2 s at 200k rows of 136
features, 34 ms on MQ2008 Fold1); dividing a whole fit by a few trees would add
that share to every forest's per-tree time and understate the ratios between them.
"""

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402


def per_tree_seconds(estimator_class, params, X, y, qid, n_trees):
    """Marginal fit seconds of one tree: (fit of ``1 + n_trees`` trees - fit of 1) / ``n_trees``."""
    estimator_class(n_estimators=1, random_state=1, **params).fit(X[:2000], y[:2000], qid=qid[:2000])  # compile
    seconds = []
    for n_estimators in (1, 1 + n_trees):
        start = time.perf_counter()
        estimator_class(n_estimators=n_estimators, random_state=0, n_jobs=1, **params).fit(X, y, qid=qid)
        seconds.append(time.perf_counter() - start)
    return (seconds[1] - seconds[0]) / n_trees


def per_tree_on_letor(models, path, n_trees, width, rounds=3):
    from forestrank.datasets import load_letor

    X, y, qid = load_letor(path)[:3]
    print(
        f"{path}: {len(y)} rows, {len(np.unique(qid))} queries; default parameters unless named, n_jobs=1, "
        f"marginal time of {n_trees} trees after the first"
    )
    seconds = {name: [] for name in models}
    for _ in range(rounds):  # interleaved, so that a slow spell of a shared host hits every forest
        for name, (estimator_class, params) in models.items():
            seconds[name].append(per_tree_seconds(estimator_class, params, X, y, qid, n_trees))
    point = np.median(seconds["RF-point"])
    for name, values in seconds.items():
        runs = ", ".join(f"{1e3 * v:.1f}" for v in values)
        print(f"{name:<{width}}{1e3 * np.median(values):8.1f} ms/tree (runs: {runs})  / RF-point {np.median(values) / point:.2f}")


def main() -> None:
    from forestrank import RFHybridRanker, RFListRanker, RFPointRanker, make_ranking

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[20_000, 50_000, 100_000, 200_000])
    parser.add_argument(
        "--trees", type=int, default=2,
        help="trees timed after the first: RF-list at the largest --rows, scaled up inversely to the rows below "
        "it (so each point fits about as long and a busy spell of a shared host weighs as much); every forest "
        "with --letor",
    )
    parser.add_argument(
        "--cheap-trees", type=int, default=20,
        help="the same for RF-hybrid and RF-point on make_ranking (their trees cost a tenth of RF-list's or less, "
        "so a few of them would be a small difference of two fits dominated by binning)",
    )
    parser.add_argument("--letor", type=Path, help="time the forests on this LETOR file instead")
    parser.add_argument(
        "--heuristics", action="store_true",
        help="also the heuristics of the paper's §4.4.2: with --letor RF-list with 50, 25 or 200 queries per node, "
        "NDCG@10 or 63 bins; on make_ranking RF-list and RF-hybrid with 50 or 200 queries per node or NDCG@10; both "
        "with NDCG@10 and 200 queries per node together",
    )  # fmt: skip
    parser.add_argument(
        "--forests", metavar="REGEX",
        help="time only the forests whose name matches (RF-point, the unit of the ratios, always)",
    )  # fmt: skip
    args = parser.parse_args()
    # The listwise forests' defaults are the paper's §4.4.2 heuristics (NDCG@10 on at most
    # 200 queries per node); "exact" is its full objective, the base of the other heuristics.
    exact = {"ndcg_k": None, "max_queries_per_split": None}
    models = {
        "RF-list": (RFListRanker, {}),
        "RF-hybrid L=6": (RFHybridRanker, {"listwise_depth": 6}),
        "RF-list exact": (RFListRanker, exact),
        "RF-hybrid L=6 exact": (RFHybridRanker, {"listwise_depth": 6, **exact}),
        "RF-point": (RFPointRanker, {}),
    }
    if args.heuristics:
        # A cap of 200 queries binds only in the largest nodes (MQ2008's roots hold about
        # 203-223 scored queries).
        settings = ({"max_queries_per_split": 50}, {"ndcg_k": 10}, {"max_queries_per_split": 200})
        if args.letor is not None:  # RF-list's trees are cheap there: two more settings
            settings += ({"max_queries_per_split": 25}, {"max_bins": 63})
            listwise = ("RF-list exact",)
        else:
            listwise = ("RF-list exact", "RF-hybrid L=6 exact")
        for setting in settings:
            label = " ".join(f"{parameter}={value}" for parameter, value in setting.items())
            for name in listwise:
                estimator_class, params = models[name]
                models[f"{name} {label}"] = (estimator_class, {**params, **setting})
    if args.forests is not None:
        models = {name: model for name, model in models.items() if name == "RF-point" or re.search(args.forests, name)}
    width = max(map(len, models)) + 2  # the name column fits every forest
    print(f"machine: {describe_machine()}")
    if args.letor is not None:
        per_tree_on_letor(models, args.letor, args.trees, width)
        return
    print(
        f"make_ranking, 100 docs/query, 136 features, query_subsample=0.63, n_jobs=1, marginal time of {args.trees} "
        f"(RF-list) or {args.cheap_trees} (others) trees after the first at {max(args.rows)} rows, more below"
    )
    times = {name: [] for name in models}
    for rows in args.rows:
        X, y, qid = make_ranking(n_queries=rows // 100, docs_per_query=100, n_features=136, random_state=0)
        for name, (estimator_class, params) in models.items():
            trees = args.trees if name.startswith("RF-list") else args.cheap_trees
            n_trees = round(trees * max(args.rows) / rows)
            times[name].append(per_tree_seconds(estimator_class, params, X, y, qid, n_trees))
            print(f"  {rows:>7} rows  {name:<{width}}{times[name][-1]:8.3f} s/tree", flush=True)
    print("\n" + "rows".ljust(width) + "".join(f"{rows:>10}" for rows in args.rows) + "   exponent")
    for name, seconds in times.items():
        exponent = np.polyfit(np.log(args.rows), np.log(seconds), 1)[0] if len(seconds) > 1 else np.nan
        print(name.ljust(width) + "".join(f"{s:>10.3f}" for s in seconds) + f"   {exponent:8.2f}")
    for name in (name for name in times if name != "RF-point"):
        ratios = np.array(times[name]) / np.array(times["RF-point"])
        print(f"{name} / RF-point per tree: " + ", ".join(f"{r:.2f}" for r in ratios))


if __name__ == "__main__":
    main()
