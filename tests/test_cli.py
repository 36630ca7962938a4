"""The ``forestrank`` command line, driven in a subprocess as a user would run it."""

import importlib.util
import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from forestrank import LambdaMART, load_letor, ndcg_score

pytestmark = pytest.mark.dataset


def run(*args, check=True):
    result = subprocess.run([sys.executable, "-m", "forestrank", *map(str, args)], capture_output=True, text=True)
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.mark.parametrize(
    ("args", "status"),
    [(["--help"], 0), (["train", "--help"], 0), (["train", "--model", "rfpoint"], 2), (["export", "--format", "pmml"], 2)],
)
def test_help_and_usage_errors_load_neither_scikit_learn_nor_numba(args, status):
    """The command line answers ``--help`` and a bad flag at once: the demo's imports and the
    models' are made only by what uses them."""
    code = f"""
import runpy, sys
sys.argv = ["forestrank", *{args!r}]
try:
    runpy.run_module("forestrank", run_name="__main__")
except SystemExit as exit:
    status = exit.code
heavy = sorted(name for name in ("sklearn", "numba", "scipy") if name in sys.modules)
print(status, heavy)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.splitlines()[-1:] == [f"{status} []"], result.stdout + result.stderr



@pytest.mark.parametrize(
    "command, options", [("evaluate", ["--model", "m.skops", "--metric", "ndcg@5"]), ("compare", ["--scores", "a.txt", "b.txt"])]
)
def test_a_data_file_after_a_list_option_is_refused_with_a_usage_that_puts_data_first(command, options):
    """``--metric``, ``--scores`` and ``--models`` take every name up to the next option, so a
    data file after them is one of them; the usage line shows where it goes."""
    result = run(command, *options, "test.txt", check=False)
    assert result.returncode == 2
    assert result.stderr.startswith(f"usage: forestrank {command} data ")
    assert "required: data" in result.stderr

@pytest.mark.slow  # a subprocess per command: run after the quick suite
def test_train_predict_evaluate_compare_on_the_lightgbm_example(lambdarank_example, tmp_path):
    train, test = lambdarank_example / "rank.train", lambdarank_example / "rank.test"
    model = tmp_path / "model.skops"  # the safe format by default
    trained = run("train", "--model", "lambdamart", "--train", train, "--valid", test, "--param", "n_estimators=30",
                  "learning_rate=0.1", "random_state=0", "--output", model)  # fmt: skip
    assert "saved" in trained.stderr and model.exists()
    scores = run("predict", "--model", model, test).stdout.split()
    X, y, qid = load_letor(test, n_features=300)
    X_train, y_train, qid_train = load_letor(train, n_features=300)
    reference = LambdaMART(n_estimators=30, learning_rate=0.1, n_iter_no_change=50, random_state=0).fit(
        X_train, y_train, qid=qid_train, eval_set=[(X, y, qid)]
    )
    np.testing.assert_allclose(np.array(scores, dtype=float), reference.predict(X), rtol=1e-9)  # one per row, file order
    score_file = tmp_path / "scores.txt"
    score_file.write_text("\n".join(scores) + "\n")
    evaluated = run("evaluate", test, "--scores", score_file, "--metric", "ndcg@10", "map").stdout.splitlines()
    assert evaluated[0].startswith("ndcg@10\t")
    assert float(evaluated[0].split("\t")[1]) == pytest.approx(ndcg_score(y, reference.predict(X), qid, k=10), abs=1e-6)
    per_query = run("evaluate", test, "--model", model, "--metric", "ndcg@10", "--per-query").stdout.splitlines()
    assert len(per_query) == 1 + len(np.unique(qid))
    other = tmp_path / "reversed.txt"
    other.write_text("\n".join(str(-float(s)) for s in scores) + "\n")
    compared = run("compare", test, "--scores", score_file, other, "--metric", "ndcg@10").stdout.splitlines()
    assert len(compared) == 4 and float(compared[2].split("\t")[2]) < 0  # the reversed ranking is worse
    # A file only scored may carry a placeholder label (-1): predict takes it, only evaluate and compare grade it.
    unlabelled = tmp_path / "unlabelled.txt"
    unlabelled.write_text("".join("-1" + line[line.index(" "):] + "\n" for line in test.read_text().splitlines() if line))
    (tmp_path / "unlabelled.txt.query").write_bytes((lambdarank_example / "rank.test.query").read_bytes())
    placeholder = run("predict", "--model", model, unlabelled).stdout.split()
    np.testing.assert_allclose(np.array(placeholder, dtype=float), np.array(scores, dtype=float), rtol=0)


@pytest.mark.slow  # a subprocess per command: run after the quick suite
def test_train_a_forest_on_mq2008_fold1_and_evaluate_it_under_letor4(mq2008, tmp_path):
    fold = mq2008 / "Fold1"
    model = tmp_path / "forest.joblib"
    run("train", "--model", "rfpoint", "--train", fold / "train.txt", "--param", "n_estimators=20", "random_state=0",
        "--output", model)  # fmt: skip
    lines = run("evaluate", fold / "test.txt", "--model", model, "--metric", "ndcg@10", "map", "--convention", "letor4").stdout
    ndcg = float(lines.splitlines()[0].split("\t")[1])
    assert 0.15 < ndcg < 0.3 and "letor4 preset" in lines


@pytest.mark.slow  # a subprocess per command: run after the quick suite
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["train", "--model", "rfpoint", "--train", "missing.txt", "--output", "m.joblib"], "missing.txt: no such file"),
        (["train", "--model", "rfpoint", "--train", "{train}", "--param", "n_estimators", "--output", "m.joblib"], "expected NAME=VALUE"),
        (["train", "--model", "rfpoint", "--train", "{train}", "--param", "trees=5", "--output", "m.joblib"], "unexpected keyword argument 'trees'"),
        # a bad value was refused by the fit, in scikit-learn's words, naming no option
        (["train", "--model", "rfpoint", "--train", "{train}", "--param", "bootstrap='false'", "--output", "m.joblib"], "--param: The 'bootstrap' parameter of RFPointRanker"),
        # the loader's advice named its zero_based argument, a Python name: the flag is --zero-based
        (["train", "--model", "rfpoint", "--train", "{zero_based}", "--output", "m.joblib"], "give --zero-based for a file that numbers"),
        (["train", "--model", "rfpoint", "--train", "{train}", "--valid", "{train}", "--output", "m.joblib"], "--valid applies to lambdamart and plrank"),
        (["predict", "--model", "{train}", "{train}"], "not a skops model file"),
        (["evaluate", "{train}", "--scores", "{train}"], "not one number per line"),
        (["evaluate", "{train}", "--scores", "{short}"], "2 scores for 3005 documents"),
        # an empty file printed numpy's warning and its source line before the error
        (["evaluate", "{train}", "--scores", "{empty}"], "0 scores for 3005 documents"),
        # a NaN score was reported as the metrics' y_score, no flag of the command line
        (["evaluate", "{short_data}", "--scores", "{nan}"], "{nan}: score 2 is nan"),
        (["compare", "{short_data}", "--scores", "{nan}", "{nan}"], "{nan}: score 2 is nan"),
        (["evaluate", "{train}", "--scores", "{short}", "--metric", "dcg@10"], "expected ndcg@K, err@K, map or precision@K"),
        # "ndcg@0" named the metrics' k, no flag of the command line; "ndcg@" ran without a cutoff
        (["evaluate", "{train}", "--scores", "{short}", "--metric", "ndcg@0"], "--metric 'ndcg@0': the cutoff must be a positive integer"),
        (["evaluate", "{train}", "--scores", "{short}", "--metric", "ndcg@"], "--metric 'ndcg@': the cutoff must be a positive integer"),
        (["evaluate", "{train}", "--scores", "{short}", "--metric", "ndcg@²"], "--metric 'ndcg@²': the cutoff must be a positive integer"),
        (["compare", "{train}", "--scores", "{short}"], "at least two systems"),
        # the first system's line was printed, then the tests' error named no file
        (["compare", "{one_query}", "--scores", "{three}", "{three}"], "{one_query}: A paired test needs at least 2 queries, got 1"),
        # named the metrics' y_true, and no file
        (["evaluate", "{negative}", "--scores", "{three}"], "{negative}: document 2 has the label -1; relevance labels must be >= 0"),
        # past int64: numba's typing error, reported as an internal error
        (["evaluate", "{train}", "--scores", "{short}", "--metric", "ndcg@9223372036854775808"], "the cutoff must be a positive integer (at most 2**63 - 1)"),
        # refused after NDCG@1 was printed
        (["evaluate", "{short_data}", "--scores", "{three}", "--metric", "ndcg@1", "err@1", "--convention", "letor4"], "--convention applies to ndcg, map and precision"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_status_2(args, message, lambdarank_example, tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("1\n2\n")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "nan.txt").write_text("0.5\nnan\n1.5\n")
    (tmp_path / "three.txt").write_text("0.5\n0.2\n1.5\n")
    (tmp_path / "short_data.txt").write_text("1 qid:1 1:0.5\n0 qid:1 1:0.2\n2 qid:2 1:0.9\n")
    (tmp_path / "one_query.txt").write_text("2 qid:1 1:0.5\n0 qid:1 1:0.3\n1 qid:1 1:0.1\n")
    (tmp_path / "negative.txt").write_text("1 qid:1 1:0.5\n-1 qid:1 1:0.3\n0 qid:2 1:0.1\n")
    (tmp_path / "zero_based.txt").write_text("1 qid:1 0:0.5 1:0.2\n0 qid:1 0:0.1 1:0.3\n")
    names = ("empty", "nan", "short_data", "three", "one_query", "negative", "zero_based")
    paths = {name: tmp_path / f"{name}.txt" for name in names}
    filled = [a.format(train=lambdarank_example / "rank.train", short=short, **paths) for a in args]
    result = subprocess.run([sys.executable, "-m", "forestrank", *filled], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert message.format(**paths) in result.stderr and "Traceback" not in result.stderr and "Warning" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if "error" in line]) == 1


@pytest.mark.slow  # a subprocess per command: run after the quick suite
def test_files_that_omit_trailing_features_are_read_with_the_models_width(tmp_path):
    rng = np.random.default_rng(0)
    lines = {"train": [], "valid": [], "test": []}
    for name, n_features in (("train", 5), ("valid", 4), ("test", 4)):  # feature 5 never written in valid/test
        for q in range(20):
            for _ in range(8):
                values = " ".join(f"{j + 1}:{rng.random():.4f}" for j in range(n_features))
                lines[name].append(f"{rng.integers(0, 3)} qid:{q} {values}")
        (tmp_path / f"{name}.txt").write_text("\n".join(lines[name]) + "\n")
    model = tmp_path / "model.skops"
    run("train", "--model", "lambdamart", "--train", tmp_path / "train.txt", "--valid", tmp_path / "valid.txt",
        "--param", "n_estimators=5", "--output", model)  # fmt: skip
    assert run("evaluate", tmp_path / "test.txt", "--model", model).stdout.startswith("ndcg@10\t")
    assert len(run("compare", tmp_path / "test.txt", "--models", model, model).stdout.splitlines()) == 4


@pytest.mark.slow  # a subprocess per command: run after the quick suite
def test_a_file_too_wide_for_memory_is_one_line_not_a_traceback(tmp_path):
    """forestrank train on a file whose dense X cannot fit printed a MemoryError traceback
    with status 1; the loader checks the size before allocating."""
    lines = [f"{i % 3} qid:{i // 20} 1:{i % 7} 5:0.5" for i in range(2000)]
    lines[7] += " 3000000000:1"  # 2,000 x 3e9 float64: 44 TB
    (tmp_path / "wide.txt").write_text("\n".join(lines) + "\n")
    result = run("train", "--model", "rfpoint", "--train", tmp_path / "wide.txt", "--output", tmp_path / "m.skops",
                 check=False)  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "does not fit in memory; load it with sparse=True" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow  # a subprocess per command: run after the quick suite
@pytest.mark.parametrize("name", ["model.skops", "model", "model.txt"])
def test_a_pickle_is_never_unpickled_unless_its_name_says_pickle(tmp_path, name):
    """Any file that was not a zip was unpickled: a pickle named model.skops ran its code."""
    import pickle

    marker = tmp_path / "pwned"
    payload = tmp_path / name
    payload.write_bytes(pickle.dumps(_CreateFile(str(marker))))
    data = tmp_path / "data.txt"
    data.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n")
    for command in (["predict", "--model", payload, data], ["evaluate", data, "--model", payload],
                    ["compare", data, "--models", payload, payload]):  # fmt: skip
        result = run(*command, check=False)
        assert result.returncode == 2 and "not a skops model file" in result.stderr
        assert not marker.exists()


class _CreateFile:
    """A pickle payload: unpickling it creates a file."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _small_file(tmp_path):
    rng = np.random.default_rng(0)
    lines = [f"{rng.integers(0, 3)} qid:{q} 1:{rng.random():.4f} 2:{rng.random():.4f}" for q in range(10) for _ in range(6)]
    path = tmp_path / "small.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_an_interrupt_is_one_line_and_the_status_of_sigint(tmp_path, monkeypatch, capsys):
    """Ctrl-C printed Python's traceback of wherever the command was."""
    from forestrank import cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_train", interrupted)
    status = cli.main(["train", "--model", "rfpoint", "--train", str(_small_file(tmp_path)), "--output", str(tmp_path / "m.joblib")])
    assert status == 130
    assert capsys.readouterr().err == "forestrank train: interrupted\n"


@pytest.mark.parametrize("name", ["m.joblib", "m.skops"])
def test_a_save_interrupted_midway_leaves_the_file_that_was_there(name, tmp_path, monkeypatch):
    """joblib wrote the model into --output as it pickled: Ctrl-C during the save left a
    truncated file that no command could load, in place of the user's earlier model."""
    import joblib

    from forestrank import cli, persistence

    if name.endswith(".skops"):
        pytest.importorskip("skops")
    data, output = _small_file(tmp_path), tmp_path / name
    output.write_bytes(b"the model the user had")

    def half_written(model, path, *args, **kwargs):
        Path(path).write_bytes(b"half a mod")
        raise KeyboardInterrupt

    monkeypatch.setattr(joblib, "dump", half_written)
    monkeypatch.setattr(persistence, "save", half_written)
    arguments = ["train", "--model", "rfpoint", "--train", str(data), "--param", "n_estimators=2", "--output", str(output)]
    assert cli.main(arguments) == 130
    assert output.read_bytes() == b"the model the user had"
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([data.name, name])
    monkeypatch.undo()
    assert cli.main(arguments) == 0
    assert output.read_bytes() != b"the model the user had"
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([data.name, name])


def test_a_saved_model_keeps_the_files_permissions_and_a_links_target(tmp_path):
    """Written beside the output and moved onto it, the model replaced a symbolic link by
    a file and took the umask's permissions in place of the file's own."""
    import os
    import stat

    import joblib

    from forestrank import cli

    data, target = _small_file(tmp_path), tmp_path / "models" / "m.joblib"
    target.parent.mkdir()
    target.write_bytes(b"the model the user had")
    target.chmod(0o600)
    link = tmp_path / "link.joblib"
    link.symlink_to(target)
    assert cli.main(["train", "--model", "rfpoint", "--train", str(data), "--param", "n_estimators=2", "--output", str(link)]) == 0
    assert link.is_symlink() and os.path.realpath(link) == str(target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert joblib.load(target).n_estimators == 2
    assert sorted(path.name for path in target.parent.iterdir()) == ["m.joblib"]


# Models the command line trains once for the tests that only load, export or corrupt them;
# each test works on its own copy.
def _train_small_forest(tmp_path_factory, name):
    """(data, model): ``_small_file`` and a two-tree RF-point model trained on it, saved as ``name``."""
    folder = tmp_path_factory.mktemp("small_forest")
    data, model = _small_file(folder), folder / name
    run("train", "--model", "rfpoint", "--train", data, "--param", "n_estimators=2", "--output", model)
    return data, model


@pytest.fixture(scope="module")
def small_forest(tmp_path_factory):
    """``_train_small_forest`` saved by joblib."""
    return _train_small_forest(tmp_path_factory, "m.joblib")


@pytest.fixture(scope="module")
def small_forest_skops(tmp_path_factory):
    """``_train_small_forest`` saved by skops."""
    pytest.importorskip("skops")
    return _train_small_forest(tmp_path_factory, "m.skops")


@pytest.fixture(scope="module")
def example_forest(lambdarank_example, tmp_path_factory):
    """A two-tree RF-point model of LightGBM's example set's 300 features, saved by joblib."""
    model = tmp_path_factory.mktemp("example_forest") / "model.joblib"
    run("train", "--model", "rfpoint", "--train", lambdarank_example / "rank.test", "--param", "n_estimators=2",
        "--output", model)  # fmt: skip
    return model


@pytest.mark.slow  # a subprocess per command: run after the quick suite
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--param", "n_estimators=3", "--param", "n_estimators=4"], "--param n_estimators is given twice"),
        (["--param", "n_estimators=3", "n_estimators=4"], "--param n_estimators is given twice"),
        (["--output", "{tmp}/missing/m.skops"], "the folder {tmp}/missing does not exist"),
        (["--output", "{tmp}"], "is a folder"),
        (["--output", "/dev/full"], "/dev/full: not a regular file"),
    ],
)
def test_train_refuses_bad_params_and_outputs_before_training(args, message, tmp_path):
    if "--output" not in args:
        args = [*args, "--output", "{tmp}/m.skops"]
    filled = [a.format(tmp=tmp_path) for a in args]
    result = run("train", "--model", "lambdamart", "--train", _small_file(tmp_path), *filled, check=False)
    assert result.returncode == 2 and message.format(tmp=tmp_path) in result.stderr
    assert "training" not in result.stderr  # refused before the training started


@pytest.mark.slow  # a subprocess per command: run after the quick suite
@pytest.mark.parametrize("data", ["--train", "--valid"])
def test_train_refuses_to_write_the_model_over_its_data(data, tmp_path):
    """``train --train t.txt --output t.txt`` replaced the training file with the model and
    exited 0."""
    path = _small_file(tmp_path)
    saved = path.read_bytes()
    other = tmp_path / "other.txt"
    other.write_bytes(saved)
    files = {"--train": path, "--valid": other} if data == "--train" else {"--train": other, "--valid": path}
    link = tmp_path / "link.skops"
    link.symlink_to(path)
    for output in (path, link):
        result = run("train", "--model", "lambdamart", "--train", files["--train"], "--valid", files["--valid"],
                     "--param", "n_estimators=2", "--output", output, check=False)  # fmt: skip
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert f"is the {data} file" in result.stderr and "training" not in result.stderr
        assert path.read_bytes() == saved


@pytest.mark.slow  # a subprocess per command: run after the quick suite
def test_file_errors_name_their_line_and_progress_goes_to_stderr_only(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.2\n1 qid:2 1:inf\n")
    result = run("evaluate", bad, "--scores", bad, check=False)
    assert result.returncode == 2 and f"{bad}:3: feature 1 is inf" in result.stderr
    assert result.stderr.count(str(bad)) == 1  # the path once, not repeated by the command line
    trained = run("train", "--model", "rfpoint", "--train", _small_file(tmp_path), "--param", "n_estimators=3",
                  "verbose=1", "--output", tmp_path / "m.skops")  # fmt: skip
    assert trained.stdout == "" and "RFPointRanker: 3/3 trees" in trained.stderr


@pytest.mark.slow  # a subprocess per command: run after the quick suite
def test_export_writes_files_that_lightgbm_and_the_ltr_engines_take(lambdarank_example, tmp_path):
    """``forestrank export``: the LightGBM file scores as ``forestrank predict``; the Solr
    and plugin files carry the names of --feature-names; the ONNX file takes float32."""
    lightgbm = pytest.importorskip("lightgbm")
    model = tmp_path / "model.joblib"
    run("train", "--model", "lambdamart", "--train", lambdarank_example / "rank.test", "--param", "n_estimators=10",
        "random_state=0", "--output", model)  # fmt: skip
    X, _, _ = load_letor(lambdarank_example / "rank.test", n_features=300)
    scores = np.array(run("predict", "--model", model, lambdarank_example / "rank.test").stdout.split(), dtype=float)
    exported = run("export", "--model", model, "--format", "lightgbm", tmp_path / "model.txt")
    assert "exported LambdaMART as lightgbm" in exported.stderr and exported.stdout == ""
    booster = lightgbm.Booster(model_file=str(tmp_path / "model.txt"))
    np.testing.assert_allclose(booster.predict(X), scores, rtol=1e-9)  # predict prints 10 digits
    names = tmp_path / "names.txt"
    names.write_text("".join(f"feature_{index}\n" for index in range(300)), encoding="utf-8-sig")  # as Notepad saves
    run("export", "--model", model, "--format", "solr", "--feature-names", names, "--name", "ranker", tmp_path / "solr.json")
    solr = json.loads((tmp_path / "solr.json").read_text())
    assert solr["name"] == "ranker" and solr["features"][0] == {"name": "feature_0"} and len(solr["features"]) == 300
    run("export", "--model", model, "--format", "xgboost-ltr", "--feature-names", names, tmp_path / "ltr.json")
    assert json.loads((tmp_path / "ltr.json").read_text())["objective"] == "reg:linear"
    if importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime

        run("export", "--model", model, "--format", "onnx", "--dtype", "float32", tmp_path / "model.onnx")
        session = onnxruntime.InferenceSession(str(tmp_path / "model.onnx"))
        np.testing.assert_allclose(session.run(None, {"X": X.astype(np.float32)})[0], scores, rtol=1e-5, atol=1e-5)


@pytest.mark.slow  # a subprocess per command: run after the quick suite
@pytest.mark.parametrize(
    ("args", "message"),
    [
        # the export's messages named its Python argument feature_names, no option
        (["--format", "solr"], "--feature-names are needed for Solr"),
        (["--format", "lightgbm", "--feature-names", "{short}"], "--feature-names has 2 names; the model has 300 features"),
        (["--format", "lightgbm", "--feature-names", "missing.txt"], "--feature-names missing.txt: no such file"),
        (["--format", "pmml"], "invalid choice: 'pmml'"),
        (["--format", "lightgbm", "--dtype", "float32"], "--dtype applies to --format onnx"),
    ],
)
def test_export_refuses_bad_input_in_one_line(args, message, example_forest, tmp_path):
    model = tmp_path / "model.joblib"
    shutil.copyfile(example_forest, model)
    short = tmp_path / "short.txt"
    short.write_text("a\nb\n")
    filled = [argument.format(short=short) for argument in args]
    result = subprocess.run(
        [sys.executable, "-m", "forestrank", "export", "--model", str(model), *filled, str(tmp_path / "out")],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # a subprocess per command: run after the quick suite
@pytest.mark.parametrize("output", ["same", "dot", "link"])
def test_export_refuses_to_write_over_its_own_model(output, small_forest, tmp_path):
    """``forestrank export --model m.skops --format lightgbm m.skops`` replaced the trained
    model with the export and exited 0."""
    model = tmp_path / "m.joblib"
    shutil.copyfile(small_forest[1], model)
    saved = model.read_bytes()
    target = {"same": model, "dot": tmp_path / "." / "m.joblib", "link": tmp_path / "link.joblib"}[output]
    if output == "link":
        target.symlink_to(model)
    result = run("export", "--model", model, "--format", "lightgbm", target, check=False)
    assert result.returncode == 2 and "is the model file" in result.stderr and "Traceback" not in result.stderr
    assert model.read_bytes() == saved


@pytest.mark.slow  # a subprocess per command: run after the quick suite
def test_export_refuses_to_write_over_its_feature_names(small_forest, tmp_path):
    """The names file was read, then replaced by the export, and the command exited 0."""
    names = tmp_path / "names.txt"
    names.write_text("f0\nf1\n")
    saved = names.read_bytes()
    result = run("export", "--model", small_forest[1], "--format", "lightgbm", "--feature-names", names, names, check=False)
    assert result.returncode == 2 and "is the --feature-names file" in result.stderr and "Traceback" not in result.stderr
    assert names.read_bytes() == saved


def _rewritten_class(model_path, tmp_path):
    """The saved model with its top-level class renamed to scikit-learn's RandomForestRegressor."""
    import zipfile

    with zipfile.ZipFile(model_path) as saved:
        files = {name: saved.read(name) for name in saved.namelist()}
    schema = json.loads(files["schema.json"])
    schema["__class__"], schema["__module__"] = "RandomForestRegressor", "sklearn.ensemble._forest"
    files["schema.json"] = json.dumps(schema).encode()
    crafted = tmp_path / "crafted.skops"
    with zipfile.ZipFile(crafted, "w") as out:
        for name, content in files.items():
            out.writestr(name, content)
    return crafted


def _wider_member(model_path, tmp_path):
    """A BROOF whose last round's forest was fitted on 3 columns (the file's own on 2)."""
    from forestrank import BROOF, make_ranking
    from forestrank.persistence import save

    X, y, qid = make_ranking(20, 6, 3, random_state=0)
    narrow = BROOF(n_estimators=2, n_trees=2, random_state=0).fit(X[:, :2], y, qid=qid)
    narrow.estimators_[-1] = BROOF(n_estimators=2, n_trees=2, random_state=0).fit(X, y, qid=qid).estimators_[-1]
    save(narrow, tmp_path / "crafted.skops")
    return tmp_path / "crafted.skops"


def _not_a_zip(model_path, tmp_path):
    (tmp_path / "crafted.skops").write_bytes(b"PK\x03\x04 but nothing after")
    return tmp_path / "crafted.skops"


@pytest.mark.slow  # a subprocess per command: run after the quick suite
@pytest.mark.parametrize("craft", [_rewritten_class, _wider_member, _not_a_zip])
def test_every_bad_model_file_is_one_line_and_status_2(craft, small_forest_skops, tmp_path):
    """A file whose top-level class was rewritten to RandomForestRegressor loaded, and
    predict ended in a traceback with status 1."""
    data, model = small_forest_skops[0], tmp_path / "m.skops"
    shutil.copyfile(small_forest_skops[1], model)
    crafted = craft(model, tmp_path)
    for command in (["predict", "--model", crafted, data], ["export", "--model", crafted, "--format", "lightgbm", tmp_path / "o.txt"]):
        result = run(*command, check=False)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert f"{crafted}: not" in result.stderr


@pytest.mark.slow  # a subprocess per command: run after the quick suite
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "solr", "--name", "", "--feature-names", "{names}"], "export: error: --name must be a non-empty string"),
        (["--format", "lightgbm", "--feature-names", "{latin1}"], "--feature-names {latin1}: not UTF-8 text"),
        # the option's name replaced the user's own names in the message
        (["--format", "lightgbm", "--feature-names", "{twice}"], "--feature-names must be distinct; 'feature_names' repeats."),
    ],
)
def test_export_refuses_an_empty_name_and_names_that_are_not_utf8_in_one_line(args, message, small_forest, tmp_path):
    model = tmp_path / "m.joblib"
    shutil.copyfile(small_forest[1], model)
    names, latin1, twice = tmp_path / "names.txt", tmp_path / "latin1.txt", tmp_path / "twice.txt"
    names.write_text("a\nb\n", encoding="utf-8")
    latin1.write_bytes("café\nb\n".encode("latin-1"))
    twice.write_text("feature_names\nfeature_names\n", encoding="utf-8")
    filled = [argument.format(names=names, latin1=latin1, twice=twice) for argument in args]
    result = run("export", "--model", model, *filled, tmp_path / "out", check=False)
    assert result.returncode == 2 and message.format(latin1=latin1) in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def _categorical_file(tmp_path):
    """Feature 2 holds codes of 12 categories whose effects are not in code order."""
    rng = np.random.default_rng(0)
    effect = rng.normal(size=12)
    lines = []
    for query in range(40):
        for _ in range(15):
            code, value = rng.integers(0, 12), rng.random()
            grade = int(np.clip(np.round(1.5 + effect[code] + value), 0, 4))
            lines.append(f"{grade} qid:{query} 1:{value:.4f} 2:{code} 3:{rng.random():.4f}")
    path = tmp_path / "categorical.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow  # a subprocess per command: run after the quick suite
def test_train_takes_categorical_features_by_their_number_in_the_file(tmp_path):
    """``--categorical 2`` fits the model that ``categorical_features=[1]`` fits in Python."""
    from forestrank.persistence import load

    path = _categorical_file(tmp_path)
    run("train", "--model", "lambdamart", "--train", path, "--categorical", "2", "--param", "n_estimators=20",
        "random_state=0", "--output", tmp_path / "m.skops")  # fmt: skip
    model = load(tmp_path / "m.skops")
    np.testing.assert_array_equal(model.is_categorical_, [False, True, False])
    X, y, qid = load_letor(path)
    expected = LambdaMART(n_estimators=20, random_state=0, categorical_features=[1]).fit(X, y, qid)
    np.testing.assert_array_equal(model.predict(X), expected.predict(X))


@pytest.mark.slow  # a subprocess per command: run after the quick suite
def test_zero_based_files_are_read_as_the_same_files_numbered_from_1(tmp_path):
    """Without --zero-based a file numbering its features from 0 could not be read at all
    (the loader's advice named a Python argument); with it every command reads it as its
    1-based twin, --categorical numbers included."""
    one_based = _categorical_file(tmp_path)
    zero_based = tmp_path / "zero.txt"
    zero_based.write_text(one_based.read_text().replace(" 1:", " 0:").replace(" 2:", " 1:").replace(" 3:", " 2:"))
    for path, flags, number in ((one_based, [], "2"), (zero_based, ["--zero-based"], "1")):
        run("train", "--model", "lambdamart", "--train", path, *flags, "--categorical", number, "--param", "n_estimators=5",
            "random_state=0", "--output", tmp_path / f"{path.stem}.skops")  # fmt: skip
    scores = [run("predict", "--model", tmp_path / f"{path.stem}.skops", path, *flags).stdout
              for path, flags in ((one_based, []), (zero_based, ["--zero-based"]))]  # fmt: skip
    assert scores[0] == scores[1] and len(scores[0].splitlines()) == 600
    evaluated = [run("evaluate", path, "--model", tmp_path / f"{path.stem}.skops", *flags).stdout
                 for path, flags in ((one_based, []), (zero_based, ["--zero-based"]))]  # fmt: skip
    assert evaluated[0] == evaluated[1]
    compared = run("compare", zero_based, "--models", tmp_path / "zero.skops", tmp_path / "categorical.skops", "--zero-based")
    assert compared.returncode == 0


@pytest.mark.slow  # a subprocess per command: run after the quick suite
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "rflist", "--categorical", "2"], "--categorical applies to rfpoint, lambdamart, plrank; not to rflist"),
        (["--model", "lambdamart", "--categorical", "4"], "--categorical 4: the training file has features 1 to 3"),
        (["--model", "lambdamart", "--categorical", "0"], "--categorical 0: the training file has features 1 to 3 (0 with --zero-based"),
        (["--model", "lambdamart", "--categorical", "-1"], "'-1' is not a feature number"),
        # read from 0, the file's features 1 to 3 are columns 1 to 3 of 0 to 3, and the errors number them so
        (["--model", "lambdamart", "--zero-based", "--categorical", "4"], "--categorical 4: the training file has features 0 to 3."),
        (["--model", "lambdamart", "--zero-based", "--categorical", "3"], "--categorical 3: feature 3 of "),
        (["--model", "lambdamart", "--categorical", "2", "--param", "categorical_features=[1]"], "say the same thing"),
        (["--model", "lambdamart", "--categorical", "1"], "--categorical 1: feature 1 of "),
    ],
)
def test_categorical_flag_errors_are_one_line(args, message, tmp_path):
    result = run("train", "--train", _categorical_file(tmp_path), *args, "--output", tmp_path / "m.skops", check=False)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("param", "expected"), [([], 50), (["n_iter_no_change=None"], None), (["n_iter_no_change=7"], 7)])
def test_valid_sets_early_stopping_only_where_the_user_did_not(param, expected, tmp_path):
    """``--valid`` turned on early stopping even over an explicit ``n_iter_no_change=None``,
    cutting the model the user asked for."""
    from forestrank.cli import main
    from forestrank.persistence import load

    data = _small_file(tmp_path)
    assert main(["train", "--model", "lambdamart", "--train", str(data), "--valid", str(data), "--param",
                 "n_estimators=3", *param, "--output", str(tmp_path / "m.skops")]) == 0  # fmt: skip
    model = load(tmp_path / "m.skops")
    assert model.n_iter_no_change == expected and len(model.evals_result_["valid_0"]["ndcg@10"]) == 3
    assert model.verbose == 0  # the command's progress lines; the saved model keeps the default (it printed on refits)
    assert list(model.evals_result_) == ["valid_0"]  # not the training set's curve, which verbose adds


def test_a_trained_model_is_the_python_fit_without_the_commands_progress(tmp_path):
    """The command fits with verbose=1 for its progress lines; the saved model kept the
    training set's curve that verbose adds to evals_result_, which the same fit in Python
    does not have. With --param verbose=1 it is the user's and stays."""
    from forestrank import LambdaMART, load_letor
    from forestrank.cli import main
    from forestrank.persistence import load

    data = _small_file(tmp_path)
    common = ["train", "--model", "lambdamart", "--train", str(data), "--param", "n_estimators=3"]
    assert main([*common, "--output", str(tmp_path / "m.skops")]) == 0
    assert main([*common, "--param", "verbose=1", "--output", str(tmp_path / "v.skops")]) == 0
    X, y, qid = load_letor(data)[:3]
    in_python = LambdaMART(n_estimators=3).fit(X, y, qid=qid)
    assert load(tmp_path / "m.skops").evals_result_ == in_python.evals_result_ == {}
    assert list(load(tmp_path / "v.skops").evals_result_) == ["train"]


def test_a_bad_param_value_is_refused_before_the_data_is_read(tmp_path, capsys):
    """A bad --param value was refused after the training file was read: a large file was
    parsed first, and a file with its own problem was reported instead."""
    from forestrank.cli import main

    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 0:0.5\n")  # a 0-based file, which the command refuses
    for train in (tmp_path / "missing.txt", bad):
        assert main(["train", "--model", "rfpoint", "--train", str(train), "--param", "bootstrap='false'",
                     "--output", str(tmp_path / "m.skops")]) == 2  # fmt: skip
        assert "--param: The 'bootstrap' parameter of RFPointRanker" in capsys.readouterr().err

def test_a_list_option_given_twice_keeps_both_lists(tmp_path, capsys):
    """``--metric``, ``--scores``, ``--models`` and ``--categorical`` kept only their last
    occurrence: systems dropped out of a comparison and categorical features out of a
    fit without a word (``--param`` already accumulated)."""
    from forestrank.cli import main
    from forestrank.persistence import load

    data = _small_file(tmp_path)
    scores = []
    for seed in range(3):
        scores.append(tmp_path / f"s{seed}.txt")
        scores[-1].write_text("".join(f"{value}\n" for value in np.random.default_rng(seed).random(60)))
    assert main(["evaluate", str(data), "--scores", str(scores[0]), "--metric", "ndcg@10", "--metric", "map", "err@3"]) == 0
    assert [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()] == ["ndcg@10", "map", "err@3"]
    assert main(["compare", str(data), "--scores", str(scores[0]), "--scores", str(scores[1]), str(scores[2])]) == 0
    assert [line.split("\t")[0].strip() for line in capsys.readouterr().out.splitlines()[1:4]] == list(map(str, scores))
    codes = tmp_path / "codes.txt"
    codes.write_text("".join(f"{row % 3} qid:{row // 6} 1:{row % 4} 2:{row % 5} 3:{row / 7:.3f}\n" for row in range(60)))
    assert main(["train", "--model", "rfpoint", "--train", str(codes), "--categorical", "1", "--categorical", "2",
                 "--param", "n_estimators=2", "--output", str(tmp_path / "m.skops")]) == 0  # fmt: skip
    assert load(tmp_path / "m.skops").categorical_features == [0, 1]


def test_train_refuses_to_write_the_model_over_a_data_files_query_file(tmp_path, capsys):
    """``--output data.txt.query`` replaced the query sizes that ``load_letor`` reads beside
    ``data.txt`` with the model's zip file."""
    from forestrank.cli import main

    data = tmp_path / "data.txt"
    data.write_text("".join(f"{row % 3} 1:{row / 7:.3f} 2:{row % 5}\n" for row in range(30)))
    sizes = tmp_path / "data.txt.query"
    sizes.write_text("10\n10\n10\n")
    arguments = ["train", "--model", "rfpoint", "--train", str(data), "--param", "n_estimators=2", "--output", str(sizes)]
    assert main(arguments) == 2
    assert "is the query file of the --train file" in capsys.readouterr().err
    assert sizes.read_text() == "10\n10\n10\n"


def test_a_bad_category_code_at_predict_is_named_in_the_files_numbering(tmp_path, capsys):
    """``predict`` and ``evaluate --model`` said "categorical feature 1 of X" (counted from
    0, no file) where ``train`` says "feature 2 of <file>"."""
    from forestrank.cli import main

    path = _categorical_file(tmp_path)
    model = tmp_path / "m.skops"
    assert main(["train", "--model", "rfpoint", "--train", str(path), "--categorical", "2", "--param", "n_estimators=2",
                 "--output", str(model)]) == 0  # fmt: skip
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:0.5 2:3.5 3:0.1\n0 qid:1 1:0.2 2:1 3:0.3\n")
    for command in (["predict", "--model", str(model), str(bad)], ["evaluate", str(bad), "--model", str(model)]):
        capsys.readouterr()
        assert main(command) == 2
        assert f"error: feature 2 of {bad} holds 3.5" in capsys.readouterr().err


def test_a_file_wider_than_the_model_is_refused_naming_the_model_not_n_features(tmp_path, capsys):
    """``predict`` said "has feature index 3 but n_features=2", an argument the user never gave."""
    from forestrank.cli import main

    data = _small_file(tmp_path)
    model = tmp_path / "m.skops"
    assert main(["train", "--model", "rfpoint", "--train", str(data), "--param", "n_estimators=2", "--output", str(model)]) == 0
    wide = tmp_path / "wide.txt"
    wide.write_text("1 qid:1 1:0.5 3:0.25\n0 qid:1 2:0.1\n")
    capsys.readouterr()
    assert main(["predict", "--model", str(model), str(wide)]) == 2
    assert f"{wide} has feature index 3, beyond the 2 features of the model." in capsys.readouterr().err


def test_a_file_without_query_ids_is_told_of_its_query_companion_not_query_file(tmp_path, capsys):
    """The loader's advice named its query_file= argument, which the command line has no
    option for: the command line reads query sizes from the file's .query companion."""
    from forestrank.cli import main

    data = tmp_path / "rank.test"
    data.write_text("1 1:0.5\n0 1:0.1\n")
    assert main(["evaluate", str(data), "--scores", str(data)]) == 2
    error = capsys.readouterr().err
    assert f"{data} has no qid: fields and no query file ({data}.query beside it, one query size per line)." in error
    assert "query_file" not in error
    (tmp_path / "rank.test.query").write_text("2\n")
    scores = tmp_path / "scores.txt"
    scores.write_text("0.3\n0.1\n")
    assert main(["evaluate", str(data), "--scores", str(scores)]) == 0


def test_scores_in_ranklibs_three_columns_are_read_as_its_last(tmp_path, capsys):
    """The module said RankLib writes one score a line; its ``-score`` file writes the query
    id, the document's index in its query and the score, which was refused as "900 scores
    for 300 documents"."""
    from forestrank.cli import main

    data = _small_file(tmp_path)
    scores = np.random.default_rng(0).random(60)
    plain, ranklib = tmp_path / "plain.txt", tmp_path / "ranklib.txt"
    plain.write_text("".join(f"{value:.17g}\n" for value in scores))
    ranklib.write_text("".join(f"{row // 6}\t{row % 6}\t{value:.17g}\n" for row, value in enumerate(scores)))
    outputs = []
    for path in (plain, ranklib):
        assert main(["evaluate", str(data), "--scores", str(path), "--metric", "ndcg@3", "map"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    two = tmp_path / "two.txt"
    two.write_text("".join(f"{row}\t{value:.17g}\n" for row, value in enumerate(scores)))
    assert main(["evaluate", str(data), "--scores", str(two)]) == 2
    assert "2 columns a line; expected one score a line, or RankLib's three" in capsys.readouterr().err


def test_a_ranklib_score_file_of_one_line_is_one_score(tmp_path, capsys):
    """A single RankLib line was read as three scores: one document's file was refused as
    "3 scores for 1 documents" and three documents took the line's three numbers."""
    from forestrank.cli import main

    line = tmp_path / "line.txt"
    line.write_text("1\t0\t0.5\n")
    one, three = tmp_path / "one.txt", tmp_path / "three.txt"
    one.write_text("2 qid:1 1:0.5\n")
    three.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.2\n2 qid:1 1:0.1\n")
    assert main(["evaluate", str(one), "--scores", str(line), "--metric", "ndcg@1"]) == 0
    assert "1.0000" in capsys.readouterr().out
    assert main(["evaluate", str(three), "--scores", str(line)]) == 2
    assert f"{line}: 1 scores for 3 documents." in capsys.readouterr().err


def test_saved_pipelines_and_calibrated_rankers_predict_and_export_from_the_command_line(tmp_path, capsys):
    """``persistence.save`` writes them and docs/serving.md exports a fitted Pipeline, but the
    command line refused both as "not a fitted forestrank model"."""
    import sklearn
    from sklearn.pipeline import make_pipeline

    from sklearn.preprocessing import StandardScaler

    from forestrank import CalibratedRanker, DummyRanker, QueryScaler
    from forestrank.cli import main
    from forestrank.persistence import save

    data = _small_file(tmp_path)
    X, y, qid = load_letor(data)
    with sklearn.config_context(enable_metadata_routing=True):
        pipeline = make_pipeline(QueryScaler(), LambdaMART(n_estimators=3, random_state=0)).fit(X, y, qid=qid)
        expected = {"pipeline": pipeline.predict(X, qid=qid)}
    calibrated = CalibratedRanker(LambdaMART(n_estimators=3, random_state=0), cv=2).fit(X, y, qid=qid)
    expected["calibrated"] = calibrated.predict(X, qid=qid)
    # no step reads qid at predict: passing it would be refused by the routing
    plain = make_pipeline(StandardScaler(), DummyRanker(strategy="best_feature")).fit(X, y, dummyranker__qid=qid)
    expected["plain"] = plain.predict(X)
    for name, model in (("pipeline", pipeline), ("calibrated", calibrated), ("plain", plain)):
        save(model, tmp_path / f"{name}.skops")
        capsys.readouterr()
        assert main(["predict", "--model", str(tmp_path / f"{name}.skops"), str(data)]) == 0
        scores = np.array(capsys.readouterr().out.split(), dtype=float)
        np.testing.assert_allclose(scores, expected[name], rtol=1e-9)
    assert main(["export", "--model", str(tmp_path / "pipeline.skops"), "--format", "lightgbm", str(tmp_path / "m.txt")]) == 0
    assert (tmp_path / "m.txt").read_text().startswith("tree")


@pytest.fixture
def pipe_of():
    """A function giving a pipe's read end as a path (``/dev/fd/N``, what a shell's
    ``<(...)`` passes), ``text`` already written and the write end closed (it fits a
    pipe's buffer); the read ends are closed after the test."""
    import os

    opened = []

    def pipe(text):
        read, write = os.pipe()
        os.write(write, text.encode())
        os.close(write)
        opened.append(read)
        return f"/dev/fd/{read}"

    yield pipe
    for descriptor in opened:
        os.close(descriptor)


@pytest.mark.skipif(sys.platform != "linux", reason="/dev/fd/N names a pipe's read end on Linux")
def test_data_and_scores_are_read_from_pipes_and_a_folder_is_refused(tmp_path, capsys, pipe_of):
    """``forestrank evaluate <(zcat test.txt.gz) --scores <(...)`` answered "no such file":
    a pipe is no regular file, and numpy's ``fromfile`` asks for a file position."""
    from forestrank.cli import main

    data = _small_file(tmp_path)
    scores = tmp_path / "scores.txt"
    scores.write_text("".join(f"{value}\n" for value in np.random.default_rng(1).random(60)))
    assert main(["evaluate", str(data), "--scores", str(scores), "--metric", "ndcg@10", "map"]) == 0
    expected = capsys.readouterr().out
    assert main(["evaluate", pipe_of(data.read_text()), "--scores", pipe_of(scores.read_text()), "--metric", "ndcg@10",
                 "map"]) == 0  # fmt: skip
    assert capsys.readouterr().out == expected
    assert main(["evaluate", str(tmp_path), "--scores", str(scores)]) == 2
    assert f"{tmp_path}: is a folder; give a file." in capsys.readouterr().err
    # a model reads the data again, which a pipe cannot give twice ("holds no data rows")
    piped = pipe_of(data.read_text())
    assert main(["evaluate", piped, "--model", str(tmp_path / "none.skops")]) == 2
    assert f"{piped}: a pipe is read once, and a model reads the data again to score it: give a file." in capsys.readouterr().err
    # a model given as a pipe or a folder was "no such model file"
    for model, message in [(pipe_of("PK"), "not a file but a pipe or a device"), (str(tmp_path), "is a folder; give a file")]:
        assert main(["evaluate", str(data), "--model", model]) == 2
        assert f"{model}: {message}" in capsys.readouterr().err


def test_predict_of_a_model_fitted_on_a_dataframe_shows_no_feature_names_warning(tmp_path, capsys):
    """A LETOR file names no features: its columns are the model's in order, and
    scikit-learn's "X does not have valid feature names" warning was printed on every run."""
    pandas = pytest.importorskip("pandas")
    from forestrank.cli import main
    from forestrank.persistence import save

    data = _small_file(tmp_path)
    X, y, qid = load_letor(data)
    frame = pandas.DataFrame(X, columns=["bm25", "pagerank"])
    model = LambdaMART(n_estimators=3, random_state=0).fit(frame, y, qid=qid)
    save(model, tmp_path / "m.skops")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*feature names")
        assert main(["predict", "--model", str(tmp_path / "m.skops"), str(data)]) == 0
    np.testing.assert_allclose(np.array(capsys.readouterr().out.split(), dtype=float), model.predict(frame), rtol=1e-9)


@pytest.mark.parametrize("format", ["lightgbm", "xgboost", "xgboost-ltr"])
def test_export_refuses_a_name_the_format_does_not_carry(format, small_forest, tmp_path, capsys):
    """``--name`` was accepted and dropped by the formats without a model name."""
    from forestrank.cli import main

    assert main(["export", "--model", str(small_forest[1]), "--format", format, "--name", "ranker",
                 str(tmp_path / "out")]) == 2  # fmt: skip
    assert f"--name applies to --format solr and onnx; a {format} file carries no name." in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_compare_takes_the_first_system_given_as_its_baseline(small_forest, tmp_path, capsys):
    """Every ``--scores`` came before every ``--models`` whatever the order given, so the
    baseline of "minus first" and of the paired tests was not the first system named."""
    from forestrank.cli import main

    data, model = small_forest
    scores = tmp_path / "s.txt"
    scores.write_text("".join(f"{value}\n" for value in np.random.default_rng(2).random(60)))
    assert main(["compare", str(data), "--models", str(model), "--scores", str(scores)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0].strip() for line in lines[1:3]] == [str(model), str(scores)]
    assert lines[1].count("\t") == 1 and lines[2].count("\t") == 4  # the model is the baseline
