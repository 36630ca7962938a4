"""The benchmark scripts' own logic (``benchmarks/``): what they promise their users about how
contenders are run, checked on small data. Their figures are not tested here."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

from forestrank import make_ranking

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def benchmark(monkeypatch):
    """The script ``benchmarks/<name>.py`` imported as a module, by name (the scripts import
    their siblings, such as ``_machine``, from their own folder)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module


@pytest.fixture
def compare(benchmark):
    return benchmark("compare")


@pytest.mark.slow  # fits of four libraries
@pytest.mark.parametrize(
    "name", ["forestrank LambdaMART", "LightGBM LGBMRanker lambdarank", "XGBoost XGBRanker rank:ndcg", "CatBoost CatBoostRanker YetiRank"]
)
def test_compare_stops_every_boosted_contender_early_on_the_validation_set(compare, name):
    """``--early-stopping`` is promised to every boosted contender: a validation set of
    random grades stops each long before its 200 iterations, the iterations column
    counts the ones the model predicts with, and the time per iteration is over the
    iterations the fit ran, the patience's too."""
    X, y, qid = make_ranking(n_queries=80, docs_per_query=12, n_features=6, random_state=0)
    train, test, validation = qid < 40, (qid >= 40) & (qid < 60), qid >= 60
    noise = np.random.default_rng(0).permutation(y[validation])
    split = (X[train], y[train], qid[train], X[test], y[test], qid[test], (X[validation], noise, qid[validation]))
    contender = next(item for group in compare.CONTENDERS.values() for item in group if item.name == name)
    stopped = compare._fit_and_score(contender, split, 200, seed=0, patience=3)
    full = compare._fit_and_score(contender, split[:-1] + (None,), 200, seed=0, patience=3)
    assert stopped["iterations"] < 100 and full["iterations"] == 200
    ran = stopped["fit s"] / stopped["fit s/iteration"]
    assert ran == pytest.approx(stopped["iterations"] + 3, abs=1)  # the best, then 3 without improvement
    assert full["fit s"] / full["fit s/iteration"] == pytest.approx(200)


@pytest.mark.parametrize(
    "options, message",
    [(["--data", "lightgbm"], "only --data mq2008 has"), (["--alternate", "3"], "drop --early-stopping")],
)
def test_compare_refuses_early_stopping_where_nothing_would_stop(compare, options, message, monkeypatch, capsys):
    """No vali.txt to stop on, or fits alternated at a fixed number of iterations."""
    monkeypatch.setattr(sys, "argv", ["compare.py", "lambdamart", "--early-stopping", "5", *options])
    with pytest.raises(SystemExit):
        compare.main()
    assert message in capsys.readouterr().err


def test_an_only_that_names_no_contender_is_refused_with_the_names(benchmark, compare, monkeypatch, capsys):
    """bench_categorical.py's names are whole phrases ("LambdaMART native"): a part of one
    divided by zero contenders; compare.py's patterns matching nothing printed an empty run."""
    categorical = benchmark("bench_categorical")
    monkeypatch.setattr(sys, "argv", ["bench_categorical.py", "--only", "LambdaMART"])
    with pytest.raises(SystemExit):
        categorical.main()
    assert "no contender named 'LambdaMART'; the names: 'LambdaMART native'" in capsys.readouterr().err
    monkeypatch.setattr(sys, "argv", ["compare.py", "lambdamart", "--data", "synthetic", "--only", "Nothing$"])
    with pytest.raises(SystemExit):
        compare.main()
    assert "no contender of 'lambdamart' matches Nothing$" in capsys.readouterr().err


@pytest.mark.parametrize("script", sorted(path.stem for path in BENCHMARKS.glob("*.py") if not path.stem.startswith("_")))
def test_every_benchmark_answers_help_without_running(script, benchmark, monkeypatch, capsys):
    """``--help`` prints the usage and exits, as users try first: bench_metrics.py read no
    command line and ran its whole benchmark instead."""
    module = benchmark(script)
    monkeypatch.setattr(sys, "argv", [f"{script}.py", "--help"])
    with pytest.raises(SystemExit) as stopped:
        module.main()
    assert stopped.value.code == 0 and capsys.readouterr().out.startswith("usage:")
