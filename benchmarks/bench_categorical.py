"""Categorical features on data shaped like product search: forestrank's native categorical
splits against its own encodings, LightGBM's and CatBoost's native categorical rankers.

    python benchmarks/bench_categorical.py [--seeds 5] [--queries 600]

Data (``product_search``, generated here, one set per seed): queries of 30-60 products;
four categorical columns carrying the grade, none of it in the order of their codes —
``brand`` (300 categories, Zipf-distributed), ``category`` (40), ``seller`` (10,000,
Zipf: most sellers hold a few products), ``country`` (10) — and six numeric features
(price, rating and four more, two of them noise). A product's latent relevance is the
sum of its categories' effects (the seller's small), a query-specific preference for
one product category, and its numeric features; five grades by quantiles. 80% of the
queries train, the rest test.

Contenders, 300 iterations, 31 leaves, learning rate 0.05, 20 documents per leaf, two
threads, seed 0 (CatBoost: its YetiRank with its defaults, depth 6, as its users run it):

- forestrank ``LambdaMART`` with ``categorical_features`` (native), the same with
  ``cat_target_statistics=True`` (native + TS: CatBoost's ordered target statistics
  beside the categories), with the codes as numbers (ordinal), and with one-hot columns for the columns of at most 300 categories
  (the seller stays ordinal: 10,000 columns would be the user's last resort);
- ``RFPointRanker`` native and ordinal (500 trees);
- LightGBM's ``LGBMRanker`` with ``categorical_feature`` and CatBoost's ``CatBoostRanker``
  with ``cat_features``.

Reported: test NDCG@10 (gain 2^l - 1, 1/log2(r + 1), no-relevant = 0) pooled over the
seeds' test queries, paired t-tests against LambdaMART native, and fit times with their
ratio to LightGBM's (each fit once per seed, contenders alternated within a seed).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402
from _report import contender_line  # noqa: E402

CATEGORICAL = {"brand": 300, "category": 40, "seller": 10_000, "country": 10}
N_NUMERIC = 6


def product_search(seed: int, n_queries: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X, y, qid): the categorical columns first (integer codes), then the numeric ones."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(30, 61, n_queries)
    qid = np.repeat(np.arange(n_queries), sizes)
    n = len(qid)
    columns, latent = [], np.zeros(n)
    for name, cardinality in CATEGORICAL.items():
        zipf = 1.0 / np.arange(1, cardinality + 1) ** (1.1 if name in ("brand", "seller") else 0.3)
        codes = rng.permutation(cardinality)[rng.choice(cardinality, n, p=zipf / zipf.sum())]
        scale = {"brand": 0.8, "category": 0.6, "seller": 0.4, "country": 0.3}[name]
        latent += scale * rng.normal(size=cardinality)[codes]
        columns.append(codes)
    preferred = rng.integers(0, CATEGORICAL["category"], n_queries)[qid]  # the query's product category
    latent += 1.0 * (columns[1] == preferred)
    numeric = rng.normal(size=(n, N_NUMERIC))
    latent += 0.6 * numeric[:, 0] + 0.4 * numeric[:, 1] - 0.3 * numeric[:, 2] + 0.2 * numeric[:, 3] ** 2
    latent += rng.normal(scale=0.6, size=n)
    y = np.searchsorted(np.quantile(latent, [0.5, 0.75, 0.9, 0.97]), latent).astype(float)
    X = np.column_stack([*columns, numeric]).astype(float)
    return X, y, qid


def one_hot(X: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The categorical columns of at most 300 categories as one column per category of
    ``reference`` (the training rows), the seller kept as its code, then the numeric ones."""
    blocks = []
    for column, (name, cardinality) in enumerate(CATEGORICAL.items()):
        if cardinality > 300:
            blocks.append(X[:, [column]])
            continue
        seen = np.unique(reference[:, column])
        blocks.append((X[:, [column]] == seen[None, :]).astype(float))
    blocks.append(X[:, len(CATEGORICAL) :])
    return np.hstack(blocks)


def contenders(n_jobs: int) -> dict:
    from forestrank import LambdaMART, RFPointRanker

    categorical = list(range(len(CATEGORICAL)))
    boosting = dict(n_estimators=300, learning_rate=0.05, max_leaf_nodes=31, min_samples_leaf=20, n_jobs=n_jobs,
                    random_state=0)  # fmt: skip

    def lightgbm():
        import lightgbm

        return lightgbm.LGBMRanker(n_estimators=300, learning_rate=0.05, num_leaves=31, min_child_samples=20,
                                   n_jobs=n_jobs, random_state=0, verbose=-1)  # fmt: skip

    def catboost():
        import catboost

        return catboost.CatBoostRanker(iterations=300, learning_rate=0.05, loss_function="YetiRank", thread_count=n_jobs,
                                       random_seed=0, verbose=False, cat_features=categorical,
                                       allow_writing_files=False)  # fmt: skip

    return {
        "LambdaMART native": (lambda: LambdaMART(categorical_features=categorical, **boosting), "codes"),
        "LambdaMART native + TS": (
            lambda: LambdaMART(categorical_features=categorical, cat_target_statistics=True, **boosting), "codes"
        ),
        "LambdaMART ordinal": (lambda: LambdaMART(**boosting), "codes"),
        "LambdaMART one-hot": (lambda: LambdaMART(**boosting), "one-hot"),
        "RF-point native": (
            lambda: RFPointRanker(n_estimators=500, categorical_features=categorical, n_jobs=n_jobs, random_state=0),
            "codes",
        ),
        "RF-point ordinal": (lambda: RFPointRanker(n_estimators=500, n_jobs=n_jobs, random_state=0), "codes"),
        "LightGBM native": (lightgbm, "lightgbm"),
        "CatBoost native": (catboost, "catboost"),
    }


def fit(make, kind: str, train: tuple, test: np.ndarray) -> tuple[np.ndarray, float]:
    """(test scores, fit seconds) of one contender."""
    X, y, qid = train
    model = make()
    if kind == "one-hot":
        X_fit, X_test = one_hot(X, X), one_hot(test, X)
    else:
        X_fit, X_test = X, test
    started = time.perf_counter()
    if kind == "lightgbm":
        model.fit(X_fit, y.astype(int), group=np.bincount(qid), categorical_feature=list(range(len(CATEGORICAL))))
    elif kind == "catboost":
        model.fit(_catboost_frame(X_fit), y, group_id=qid)
    else:
        model.fit(X_fit, y, qid)
    seconds = time.perf_counter() - started
    scores = model.predict(_catboost_frame(X_test) if kind == "catboost" else X_test)
    return np.asarray(scores, dtype=float), seconds


def _catboost_frame(X: np.ndarray):
    """CatBoost takes categorical columns as integers or strings: a frame with int codes."""
    import pandas as pd

    frame = pd.DataFrame(X[:, len(CATEGORICAL) :], columns=[f"x{i}" for i in range(N_NUMERIC)])
    for column, name in enumerate(CATEGORICAL):
        frame.insert(column, name, X[:, column].astype(np.int64))
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=600)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--only", nargs="*", help="contender names to run, whole and quoted (default: all)")
    args = parser.parse_args()
    available = contenders(args.n_jobs)
    unknown = [name for name in args.only or [] if name not in available]
    if unknown:
        parser.error(f"--only: no contender named {', '.join(map(repr, unknown))}; the names: {', '.join(map(repr, available))}")
    from forestrank.metrics import ndcg_score

    print(describe_machine())
    chosen = {name: item for name, item in available.items() if not args.only or name in args.only}
    per_query = {name: [] for name in chosen}
    seconds = {name: [] for name in chosen}
    for seed in range(args.seeds):
        X, y, qid = product_search(seed, args.queries)
        train = qid < int(0.8 * args.queries)
        names = list(chosen)
        for name in names[seed % len(names) :] + names[: seed % len(names)]:  # alternated
            make, kind = chosen[name]
            scores, took = fit(make, kind, (X[train], y[train], qid[train]), X[~train])
            per_query[name].append(ndcg_score(y[~train], scores, qid[~train], k=10, per_query=True))
            seconds[name].append(took)
    reference = "LambdaMART native" if "LambdaMART native" in chosen else next(iter(chosen))
    values = {name: np.concatenate(per_query[name]) for name in chosen}
    lightgbm_time = np.median(seconds["LightGBM native"]) if "LightGBM native" in chosen else None
    print(f"product_search, {args.seeds} seeds x {args.queries} queries (80% train), NDCG@10 over the test queries")
    for name in chosen:
        fit_time = np.median(seconds[name])
        ratio = f", {fit_time / lightgbm_time:.2f}x LightGBM" if lightgbm_time else ""
        print(contender_line(name, values[name], values[reference], reference, f"  fit {fit_time:.2f} s{ratio}"))


if __name__ == "__main__":
    main()
