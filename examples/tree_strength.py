"""Single-tree strength, split by split: RF-point against RF-list (Ibrahim & Carman §6.3, Fig. 7).

    python examples/tree_strength.py [--datasets ../shared/datasets]

Fits both forests breadth-first on MQ2008 Fold1 (or on ``make_ranking`` data when the
LETOR folder is absent) and plots the mean expected NDCG of their single trees after
each number of splits, on training and test queries, into ``tree_strength.png`` in the
current folder. Needs matplotlib (optional); without it the curves are printed.
"""

import argparse
from pathlib import Path

import numpy as np

from forestrank import RFListRanker, RFPointRanker, load_letor_fold, make_ranking, tree_strength_curve


def load(datasets: Path):
    fold = datasets / "MQ2008" / "Fold1"
    if fold.exists():
        (X, y, qid), _, (X_test, y_test, qid_test) = load_letor_fold(fold)
        return X, y, qid, X_test, y_test, qid_test, "MQ2008 Fold1"
    X, y, qid = make_ranking(n_queries=400, random_state=0)
    train = qid < 300
    return X[train], y[train], qid[train], X[~train], y[~train], qid[~train], "make_ranking (400 queries)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets")
    parser.add_argument("--n-estimators", type=int, default=20)
    args = parser.parse_args()
    X, y, qid, X_test, y_test, qid_test, name = load(args.datasets)
    forests = {
        "RF-point": RFPointRanker(n_estimators=args.n_estimators, expansion="breadth", n_jobs=-1, random_state=0),
        "RF-list": RFListRanker(n_estimators=args.n_estimators, n_jobs=-1, random_state=0),
    }
    splits = np.unique(np.geomspace(1, 2000, 30).astype(int))
    curves = {}
    for label, forest in forests.items():
        forest.fit(X, y, qid=qid)
        curves[label, "train"] = tree_strength_curve(forest, X, y, qid, n_splits=splits)
        curves[label, "test"] = tree_strength_curve(forest, X_test, y_test, qid_test, n_splits=splits)
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        for (label, part), curve in curves.items():
            print(label, part, " ".join(f"{s}:{v:.4f}" for s, v in zip(curve.n_splits, curve.ndcg)))
        return
    for (label, part), curve in curves.items():
        plt.semilogx(np.maximum(curve.n_splits, 1), curve.ndcg, "-" if part == "train" else "--", label=f"{label} {part}")
    plt.xlabel("splits per tree")
    plt.ylabel("expected NDCG of a single tree (mean over trees)")
    plt.title(f"Tree strength, {name}")
    plt.legend()
    plt.savefig("tree_strength.png", dpi=120)
    print("wrote tree_strength.png")


if __name__ == "__main__":
    main()
