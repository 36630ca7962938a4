"""``python -m forestrank``: a ranking job on the embedded synthetic dataset; with a
command (``train``, ``predict``, ``evaluate``, ``compare``), the command line of
:mod:`forestrank.cli`.

Generates graded-relevance data with :func:`forestrank.make_ranking`, holds out a
quarter of the queries, fits a random-forest ranker (RF-point) next to two trivial
baselines and prints test NDCG@10, ERR@10 and MAP with the conventions behind each
number. The numba kernels are compiled (the first run) or loaded from
numba's cache before anything is timed, and that time is printed apart: the fit times
are the rankers' own.
"""

import sys
import time
from collections.abc import Iterable

import numpy as np

from . import __version__

MAX_GRADE = 4


def _columns() -> tuple:
    """The demo's metrics: (name, function of labels, scores and qid)."""
    from .metrics import err_score, map_score, ndcg_score

    return (
        ("NDCG@10", lambda y, s, q: ndcg_score(y, s, q, k=10)),
        ("ERR@10", lambda y, s, q: err_score(y, s, q, k=10, max_grade=MAX_GRADE)),
        ("MAP", lambda y, s, q: map_score(y, s, q)),
        ("NDCG@10 letor4", lambda y, s, q: ndcg_score(y, s, q, k=10, convention="letor4")),
    )


def main() -> None:
    """Fit the demo rankers and print their test metrics."""
    # Imported here, not at the top: a command (``python -m forestrank train ...``) loads
    # only what it uses, so ``--help`` and a bad flag answer without scikit-learn or numba.
    from .datasets import make_ranking
    from .dummy import DummyRanker
    from .ensemble import RFPointRanker
    from .metrics import describe_metric
    from .model_selection import QueryShuffleSplit

    columns = _columns()
    X, y, qid = make_ranking(
        n_queries=600, docs_per_query=(10, 60), n_features=30, n_grades=MAX_GRADE + 1, random_state=0
    )
    train, test = next(QueryShuffleSplit(n_splits=1, test_size=0.25, random_state=0).split(X, qid=qid))
    print(f"forestrank {__version__} demo: make_ranking(n_queries=600, n_features=30, random_state=0)")
    print(
        f"  train {len(set(qid[train]))} queries / {len(train)} documents, "
        f"test {len(set(qid[test]))} queries / {len(test)} documents, grades 0-{MAX_GRADE}\n"
    )
    rankers = {
        "DummyRanker('constant')  (= random order)": DummyRanker(strategy="constant"),
        "DummyRanker('best_feature')": DummyRanker(strategy="best_feature"),
        "RFPointRanker(n_estimators=200)": RFPointRanker(n_estimators=200, n_jobs=-1, random_state=0),
    }
    start = time.perf_counter()
    _compile_kernels(rankers.values(), X[train], y[train], qid[train], columns)
    print(f"numba kernels compiled or loaded from the cache in {time.perf_counter() - start:.1f} s (compiled once)\n")
    name_width = max(map(len, rankers))
    header = f"{'ranker':<{name_width}}  {'fit s':>6}" + "".join(f"  {name:>14}" for name, _ in columns)
    print(header)
    print("-" * len(header))
    for name, ranker in rankers.items():
        start = time.perf_counter()
        ranker.fit(X[train], y[train], qid=qid[train])
        seconds = time.perf_counter() - start
        scores = ranker.predict(X[test])
        values = "".join(f"  {metric(y[test], scores, qid[test]):>14.4f}" for _, metric in columns)
        print(f"{name:<{name_width}}  {seconds:>6.2f}{values}")

    print("\nConventions (test-set mean over queries):")
    print("  " + describe_metric("ndcg", 10))
    print("  " + describe_metric("err", 10) + f", g_max = {MAX_GRADE}")
    print("  " + describe_metric("map"))
    print("  " + describe_metric("ndcg", 10, convention="letor4"))


def _compile_kernels(rankers: Iterable, X: np.ndarray, y: np.ndarray, qid: np.ndarray, columns: tuple) -> None:
    """Fit a two-tree copy of every ranker on a few queries and compute every metric of
    ``columns`` (``_columns``) once, so that numba compiles (or loads) the kernels the
    timed runs call."""
    from sklearn.base import clone

    few = qid < np.sort(np.unique(qid))[min(20, len(np.unique(qid)) - 1)]
    for ranker in rankers:
        small = clone(ranker)
        if "n_estimators" in small.get_params():
            small.set_params(n_estimators=2)
        scores = small.fit(X[few], y[few], qid=qid[few]).predict(X[few])
        for _, metric in columns:
            metric(y[few], scores, qid[few])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        from .cli import main as command_line

        sys.exit(command_line(sys.argv[1:]))
    main()
