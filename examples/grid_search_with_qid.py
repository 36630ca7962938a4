"""Tune a ranker with scikit-learn's GridSearchCV, grouped cross-validation and NDCG scoring.

Metadata routing passes ``qid`` to the estimator's ``fit``, to ``QueryKFold.split``
and to the NDCG scorer, so no fold cuts a query and every score is a per-query mean.

    python examples/grid_search_with_qid.py
"""

import sklearn
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from forestrank import DummyRanker, QueryKFold, describe_metric, make_ranking, ndcg_scorer


def main() -> None:
    sklearn.set_config(enable_metadata_routing=True)
    X, y, qid = make_ranking(n_queries=300, n_features=15, random_state=0, shuffle=True)
    # A list of grids: k is the cutoff the best feature is chosen by, which the constant strategy has no use for.
    grid = [
        {"dummyranker__strategy": ["constant"]},
        {"dummyranker__strategy": ["best_feature"], "dummyranker__k": [5, 10, 20]},
    ]
    search = GridSearchCV(
        make_pipeline(StandardScaler(), DummyRanker()), grid, cv=QueryKFold(5), scoring=ndcg_scorer(10)
    )
    search.fit(X, y, qid=qid)
    print(f"scoring: {describe_metric('ndcg', 10)}, 5-fold QueryKFold")
    for params, mean, std in zip(
        search.cv_results_["params"], search.cv_results_["mean_test_score"], search.cv_results_["std_test_score"]
    ):
        print(f"  {params}: {mean:.4f} +/- {std:.4f}")
    print(f"best: {search.best_params_} -> {search.best_score_:.4f}")


if __name__ == "__main__":
    main()
