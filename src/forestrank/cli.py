"""The ``forestrank`` command line: train, predict, evaluate and compare on LETOR files.

    forestrank train --model lambdamart --train train.txt --valid vali.txt --param n_estimators=500 --output model.skops
    forestrank train --model lambdamart --train train.txt --categorical 3 7 --output model.skops
    forestrank predict --model model.skops test.txt > scores.txt
    forestrank evaluate test.txt --scores scores.txt --metric ndcg@10 map err@10 --convention letor4
    forestrank compare test.txt --scores a.txt b.txt --metric ndcg@10
    forestrank export --model model.skops --format lightgbm --feature-names names.txt model.txt

Files are LETOR/svmlight with ``qid:`` (or a ``<file>.query`` companion, read by
:func:`forestrank.load_letor`), their features numbered from 1, or from 0 with
``--zero-based``. Scores are one number per line, in the file's row order,
as LightGBM's and XGBoost's command lines write them, or RankLib's ``-score`` lines
(query id, document index, score, tab-separated), whose last column is read. A problem
with a file, a ``--param`` or the data ends the command with one line on stderr and exit
status 2 (a command line argparse rejects, with its usage line before the error);
``python -m forestrank`` with no command runs the demo.
"""

import argparse
import ast
import contextlib
import importlib.util
import os
import re
import shutil
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

MODELS = {
    "rfpoint": "RFPointRanker",
    "rflist": "RFListRanker",
    "rfhybrid": "RFHybridRanker",
    "lambdamart": "LambdaMART",
    "plrank": "PLRank",
    "broof": "BROOF",
}
METRICS = ("ndcg", "err", "map", "precision")


class UsageError(Exception):
    """A problem with the command's input, reported as one line."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run a ``forestrank`` command; returns the exit status (0, or 2 on bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        args.run(args)
    except BrokenPipeError:  # the reader stopped early (``forestrank predict ... | head``): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes stdout
        return 0
    except KeyboardInterrupt:  # Ctrl-C: the shell's status for SIGINT, and no traceback
        print(f"forestrank {args.command}: interrupted", file=sys.stderr)
        return 130
    except (UsageError, ValueError, TypeError, OSError, KeyError, ImportError, MemoryError) as error:
        print(f"forestrank {args.command}: error: {_first_line(error)}", file=sys.stderr)
        return 2
    except Exception as error:  # a defect of forestrank's, still one line: the command line shows no traceback
        print(
            f"forestrank {args.command}: internal error: {type(error).__name__}: {_first_line(error)} (please report "
            "it with the command that raised it)",
            file=sys.stderr,
        )
        return 1
    return 0


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def console() -> None:
    """The ``forestrank`` console script."""
    sys.exit(main())


class _SystemsInOrder(argparse.Action):
    """``compare``'s ``--scores`` and ``--models``, kept together in command-line order as
    ``systems``, ``(option, path)`` pairs whose first is the baseline."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.systems = [*namespace.systems, *((self.dest, path) for path in values)]


_ZERO_BASED_HELP = "the files number their features from 0 (as XGBoost's and many svmlight writers do), not from 1 as LETOR's"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="forestrank", description="Learning-to-rank on LETOR files.")
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train", help="fit a ranker on a LETOR file and save it")
    train.add_argument("--model", required=True, choices=sorted(MODELS))
    train.add_argument("--train", required=True, type=Path, help="training file")
    train.add_argument(
        "--valid", type=Path,
        help="validation file: early stopping for lambdamart and plrank (n_iter_no_change=50 unless --param sets it)",
    )  # fmt: skip
    train.add_argument(
        "--param", nargs="*", action="extend", default=[], metavar="NAME=VALUE",
        help="estimator parameters; VALUE is a Python literal (True, None, 0.5, [1, 2], {2: 1}), else a string; "
        "feature indices in them count the columns from 0 (the file's feature 1 is 0), unlike --categorical",
    )
    train.add_argument(
        "--categorical", nargs="+", action="extend", type=_feature_number, metavar="FEATURE",
        help="features holding category codes (integers 0 to 65535), numbered as in the file's FEATURE:value "
        "pairs; a feature absent from a line is code 0 (lambdamart, plrank, rfpoint)",
    )  # fmt: skip
    train.add_argument("--zero-based", action="store_true", help=_ZERO_BASED_HELP)
    train.add_argument(
        "--output", required=True, type=Path,
        help="where to save the fitted model: skops format (safe to load), or pickle for a .joblib/.pkl name",
    )  # fmt: skip
    train.set_defaults(run=_train)

    predict = commands.add_parser("predict", help="score a LETOR file with a saved model, one score per line")
    predict.add_argument("--model", required=True, type=Path)
    predict.add_argument("data", type=Path)
    predict.add_argument("--zero-based", action="store_true", help=_ZERO_BASED_HELP)
    predict.set_defaults(run=_predict)

    # The data file comes first in the usage lines: the values of a list option run to the
    # next option, so a file named after them would be taken as one of them.
    evaluate = commands.add_parser(
        "evaluate", help="ranking metrics of scores or of a model on a LETOR file",
        usage="%(prog)s data (--scores SCORES | --model MODEL) [--metric METRIC [METRIC ...]] "
        "[--convention {letor3,letor4}] [--per-query]",
    )  # fmt: skip
    evaluate.add_argument("data", type=Path)
    source = evaluate.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--scores", type=Path, help="one score per line, in the file's order (or RankLib's -score lines)"
    )
    source.add_argument("--model", type=Path, help="a saved model")
    evaluate.add_argument(
        "--metric", nargs="+", action="extend", help="ndcg@K, err@K, map, precision@K (default ndcg@10)"
    )  # a default list would be extended, not replaced: _evaluate fills it in
    evaluate.add_argument("--convention", choices=["letor3", "letor4"], help="an official LETOR script's conventions")
    evaluate.add_argument("--per-query", action="store_true", help="one line per query")
    evaluate.add_argument("--zero-based", action="store_true", help=_ZERO_BASED_HELP + " (read with --model)")
    evaluate.set_defaults(run=_evaluate)

    compare = commands.add_parser(
        "compare", help="several score files or models on the same data, with paired tests",
        usage="%(prog)s data [--scores [SCORES ...]] [--models [MODELS ...]] [--metric METRIC] [--convention {letor3,letor4}]",
        description="The systems in the order given, the first the baseline the others are tested against.",
    )  # fmt: skip
    compare.add_argument("data", type=Path)
    compare.add_argument("--scores", type=Path, nargs="*", action=_SystemsInOrder, help="score files")
    compare.add_argument("--models", type=Path, nargs="*", action=_SystemsInOrder, help="saved models")
    compare.add_argument("--metric", default="ndcg@10")
    compare.add_argument("--convention", choices=["letor3", "letor4"])
    compare.add_argument("--zero-based", action="store_true", help=_ZERO_BASED_HELP + " (read with --models)")
    compare.set_defaults(run=_compare, systems=[])

    from .export import FORMATS

    export = commands.add_parser(
        "export", help="write a saved model in a serving engine's format",
        epilog="; ".join(f"{name}: {engines}" for name, engines in FORMATS.items()),
    )  # fmt: skip
    export.add_argument("--model", required=True, type=Path)
    export.add_argument("--format", required=True, choices=list(FORMATS))
    export.add_argument(
        "--feature-names", type=Path, metavar="FILE",
        help="one feature name per line, in column order (default: the names the model was fitted with)",
    )  # fmt: skip
    export.add_argument(
        "--name", help="the model's name in Solr's model store or the ONNX graph (default: forestrank); solr and onnx only"
    )
    export.add_argument("--dtype", choices=["float64", "float32"], help="the ONNX model's input type (default float64)")
    export.add_argument("output", type=Path)
    export.set_defaults(run=_export)
    return parser


# --- commands ------------------------------------------------------------------------


def _train(args: argparse.Namespace) -> None:
    import forestrank

    params = _parse_params(args.param)
    _check_output(args.output)  # before the training, not after it
    for flag, data in (("--train", args.train), ("--valid", args.valid)):
        if data is None:
            continue
        if _same_file(args.output, data):
            raise UsageError(f"--output {args.output} is the {flag} file {data}: give the model another name.")
        if _same_file(args.output, Path(f"{data}.query")):  # the query sizes load_letor reads beside it
            raise UsageError(
                f"--output {args.output} is the query file of the {flag} file {data}: give the model another name."
            )
    estimator_class = getattr(forestrank, MODELS[args.model])
    try:
        estimator = estimator_class(**params)
        estimator._validate_params()  # a bad value named before the data is read, as a --param
    except (TypeError, ValueError) as error:
        raise UsageError(f"--param: {error}") from error
    X, y, qid = _load(args.train, zero_based=args.zero_based)
    if args.categorical:
        _set_categorical(estimator, args.model, args.categorical, params, X.shape[1], args.zero_based)
    fit_params = {}
    if args.valid is not None:
        if "eval_set" not in _fit_parameters(estimator):
            raise UsageError(f"--valid applies to lambdamart and plrank; {args.model} has no early stopping.")
        # a file may omit trailing zero features
        fit_params["eval_set"] = [
            _load(args.valid, n_features=X.shape[1], width_of=f"the training file {args.train}", zero_based=args.zero_based)
        ]
        if "n_iter_no_change" not in params:  # an explicit n_iter_no_change=None only evaluates the file
            estimator.set_params(n_iter_no_change=50)
    verbose_for_progress = "verbose" in estimator.get_params() and "verbose" not in params
    if verbose_for_progress:  # progress on stderr for the command; the saved model keeps the estimator's default
        estimator.set_params(verbose=1)
    start = time.perf_counter()
    _progress(f"training {type(estimator).__name__} on {args.train} ({len(y)} documents, {len(np.unique(qid))} queries)")
    with contextlib.redirect_stdout(sys.stderr):  # the estimators' verbose lines are progress too: stdout is for results
        with _in_file_numbers(args.zero_based, args.train, args.valid, "--categorical " if args.categorical else ""):
            estimator.fit(X, y, qid=qid, **fit_params)
    if verbose_for_progress:  # and without the training set's curve that verbose adds (evals_result_)
        estimator.set_params(verbose=estimator_class().verbose)
        getattr(estimator, "evals_result_", {}).pop("train", None)
    _save(estimator, args.output)
    _progress(f"saved {args.output} ({time.perf_counter() - start:.1f} s)")


def _feature_number(text: str) -> int:
    """A ``--categorical`` feature: its number in the file (from 1, or from 0 with
    ``--zero-based``, which ``_set_categorical`` checks)."""
    try:
        number = int(text)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a feature number (1, 2, ... as in FEATURE:value)")
    return number


def _set_categorical(
    estimator: object, model: str, numbers: list, params: dict, n_features: int, zero_based: bool
) -> None:  # fmt: skip
    """``--categorical``: the file's feature numbers as ``categorical_features`` (0-based indices)."""
    if "categorical_features" not in estimator.get_params():
        takes = ", ".join(name for name, cls in MODELS.items() if cls in ("LambdaMART", "PLRank", "RFPointRanker"))
        raise UsageError(f"--categorical applies to {takes}; not to {model}.")
    if "categorical_features" in params:
        raise UsageError("--categorical and --param categorical_features=... say the same thing: give one of them.")
    first = 0 if zero_based else 1
    outside = [number for number in numbers if not first <= number < n_features + first]
    if outside:
        numbering = "" if zero_based else " (0 with --zero-based, for files numbered from 0)"
        raise UsageError(
            f"--categorical {outside[0]}: the training file has features {first} to {n_features - 1 + first}{numbering}."
        )
    estimator.set_params(categorical_features=sorted({number - first for number in numbers}))


@contextlib.contextmanager
def _in_file_numbers(zero_based: bool, source: Path, valid: Path | None = None, flag: str = "") -> Iterator[None]:
    """Name a categorical feature's error raised inside the block in the file's numbering
    (the estimators count features from 0, a LETOR file from 1 unless ``zero_based``), and
    the file: ``source``, or ``valid`` for an ``eval_set``'s error; ``flag`` prefixes the
    feature's number. Other errors pass as they are."""
    try:
        yield
    except ValueError as error:
        bad_code = re.search(r"categorical feature (\d+) of X (.*)", str(error))
        if bad_code is None:
            raise
        number = int(bad_code[1]) + (0 if zero_based else 1)
        file = valid if valid is not None and str(error).startswith("eval_set") else source
        message = f"feature {number} of {file} {bad_code[2]}"
        raise UsageError(f"{flag}{number}: {message}" if flag else message) from error


def _predicted(model: object, data: Path, zero_based: bool) -> np.ndarray:
    """``model``'s scores of the rows of ``data``, read with the model's number of features
    (a file may omit trailing zeros), with the file's query ids where the model reads them."""
    import sklearn

    from .metrics._scorer import predict_with_qid

    X, _, qid = _load(data, n_features=model.n_features_in_, width_of="the model", zero_based=zero_based)
    # qid reaches a model whose predict reads it (a Pipeline's QueryScaler, a
    # CalibratedRanker's ranker) under metadata routing, and no other.
    with _in_file_numbers(zero_based, data), sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
        # A LETOR file numbers its features and names none: its columns are the model's
        # in order, whatever names a model fitted on a DataFrame keeps.
        warnings.filterwarnings("ignore", message="X does not have valid feature names", category=UserWarning)
        return predict_with_qid(model, X, qid)


def _predict(args: argparse.Namespace) -> None:
    model = _load_model(args.model)
    sys.stdout.write("".join(f"{score:.10g}\n" for score in _predicted(model, args.data, args.zero_based)))


def _evaluate(args: argparse.Namespace) -> None:
    args.metric = args.metric or ["ndcg@10"]
    metrics = [_parse_metric(text, args.convention) for text in args.metric]  # before any file is read: fail fast
    _check_read_again(args.data, args.model is not None)
    _, y, qid = _graded(args.data, args.zero_based)
    scores = _scores(args.scores, args.model, args.data, len(y), args.zero_based)
    if args.per_query:
        columns = [_evaluate_metric(metric, y, scores, qid, args.convention, per_query=True) for metric in metrics]
        print("qid\t" + "\t".join(text for text in args.metric))
        for row, query in enumerate(np.unique(qid)):
            print(f"{query}\t" + "\t".join(f"{column[row]:.6f}" for column in columns))
        return
    for text, metric in zip(args.metric, metrics):
        value = _evaluate_metric(metric, y, scores, qid, args.convention)
        print(f"{text}\t{value:.6f}\t{_describe(metric, args.convention, y)}")


def _compare(args: argparse.Namespace) -> None:
    from .stats import paired_tests_of_scored_queries

    metric = _parse_metric(args.metric, args.convention)
    if len(args.systems) < 2:
        raise UsageError("compare needs at least two systems (--scores and/or --models).")
    _check_read_again(args.data, any(option == "models" for option, _ in args.systems))
    _, y, qid = _graded(args.data, args.zero_based)
    systems = [
        (str(path), _scores(path, None, args.data, len(y), args.zero_based) if option == "scores"
         else _scores(None, path, args.data, len(y), args.zero_based))
        for option, path in args.systems
    ]
    values = [_evaluate_metric(metric, y, scores, qid, args.convention, per_query=True) for _, scores in systems]
    width = max(len(name) for name, _ in systems)
    lines = [f"{'system':<{width}}\t{args.metric}\tminus first\tt-test p\tWilcoxon p"]
    for (name, _), per_query in zip(systems, values):
        line = f"{name:<{width}}\t{np.nanmean(per_query):.6f}"
        if per_query is not values[0]:
            try:
                t_test, wilcoxon = paired_tests_of_scored_queries(per_query, values[0])
            except ValueError as error:  # too few queries: said before anything is printed
                raise UsageError(f"{args.data}: {error} (the queries {args.metric} scores for both systems).") from error
            line += f"\t{t_test.mean_difference:+.6f}\t{t_test.pvalue:.3g}\t{wilcoxon.pvalue:.3g}"
        lines.append(line)
    print("\n".join([*lines, _describe(metric, args.convention, y)]))


# --- helpers -------------------------------------------------------------------------


def _export(args: argparse.Namespace) -> None:
    from .serving._export import NAMED_FORMATS, export_model

    _check_writable(args.output, "output")
    if _same_file(args.output, args.model):
        raise UsageError(f"output {args.output} is the model file --model {args.model}: give the export another name.")
    if args.feature_names is not None and _same_file(args.output, args.feature_names):
        raise UsageError(
            f"output {args.output} is the --feature-names file {args.feature_names}: give the export another name."
        )
    if args.dtype is not None and args.format != "onnx":
        raise UsageError(f"--dtype applies to --format onnx; {args.format} has its engine's own number type.")
    if args.name is not None and args.format not in NAMED_FORMATS:
        raise UsageError(f"--name applies to --format {' and '.join(NAMED_FORMATS)}; a {args.format} file carries no name.")
    model = _load_model(args.model)
    names = None
    if args.feature_names is not None:
        _check_readable(args.feature_names, f"--feature-names {args.feature_names}")
        try:
            text = args.feature_names.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as error:
            raise UsageError(
                f"--feature-names {args.feature_names}: not UTF-8 text (byte {error.start}); save it as UTF-8."
            ) from error
        names = [line.strip() for line in text.splitlines() if line.strip()]
    try:
        with _replaced_once_written(args.output) as temporary:
            export_model(model, temporary, format=args.format, feature_names=names, name=args.name, dtype=args.dtype or "float64")
    except ValueError as error:  # export_model names its Python arguments; here they are options
        # (at a message's start or advised in parentheses; the user's names quoted in it stay as given)
        message = re.sub(r"^feature_names\b", "--feature-names", str(error))
        message = message.replace("(give feature_names)", "(give --feature-names)")
        raise UsageError(re.sub(r"^name must\b", "--name must", message)) from error
    _progress(f"exported {type(model).__name__} as {args.format} to {args.output}")


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# load_letor's advice naming its query_file and zero_based arguments, as the command line reads it: the
# query sizes only from the file's .query companion.
_LOADER_ARGUMENTS = {
    ".query or query_file=...)": ".query beside it, one query size per line)",
    "pass it as query_file= to read it": "copy it to a regular file",
    "(pass zero_based=True for 0-based indices)": "(give --zero-based for a file that numbers its features from 0)",
}


def _load(path: Path, n_features: int | None = None, width_of: str = "", zero_based: bool = False) -> tuple:
    """``load_letor(path, zero_based=zero_based)``, read ``n_features`` wide when given: the
    width of ``width_of`` (the model, the training file), which a file wider than it is
    refused by name."""
    from .datasets import load_letor

    _check_readable(path)
    try:
        X, y, qid = load_letor(path, n_features=n_features, zero_based=zero_based)
    except ValueError as error:  # the loader's messages name the file and line, most of them
        message = str(error)
        if width_of and message.endswith(f" but n_features={n_features}."):  # no argument of the command line
            message = message.replace(f" but n_features={n_features}.", f", beyond the {n_features} features of {width_of}.")
        for argument, advice in _LOADER_ARGUMENTS.items():  # nor is query_file
            message = message.replace(argument, advice)
        raise UsageError(message if message.startswith(str(path)) else f"{path}: {message}") from error
    return X, y, qid


def _graded(path: Path, zero_based: bool) -> tuple:
    """``_load(path)`` for a command that reads the labels as grades (``evaluate``,
    ``compare``): a negative one refused naming the file, where the metrics' check would
    name their own ``y_true``. Files only scored keep any placeholder label."""
    X, y, qid = _load(path, zero_based=zero_based)
    negative = np.flatnonzero(y < 0)
    if len(negative):
        raise UsageError(
            f"{path}: document {int(negative[0]) + 1} has the label {y[negative[0]]:g}; relevance labels must be >= 0."
        )
    return X, y, qid


PICKLE_SUFFIXES = (".joblib", ".pkl", ".pickle")


def _check_readable(path: Path, named: str = "") -> None:
    """Refuse a path that names nothing or a folder (``named``: how the message names it,
    the path by default). A pipe, a FIFO or a shell's ``<(...)``, is read like a file."""
    named = named or str(path)
    if not path.exists():
        raise UsageError(f"{named}: no such file.")
    if path.is_dir():
        raise UsageError(f"{named}: is a folder; give a file.")


def _check_read_again(data: Path, by_models: bool) -> None:
    """Refuse a pipe as the data that models read again (``by_models``: each predicts
    from the file, read with its own number of features): a pipe is read once."""
    if by_models and data.exists() and not data.is_file():
        raise UsageError(f"{data}: a pipe is read once, and a model reads the data again to score it: give a file.")


def _check_writable(path: Path, flag: str) -> None:
    """Refuse a file that could not be written: a missing or read-only folder, a folder, or
    something that is no regular file (a device such as /dev/full, a pipe)."""
    folder = path.parent
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; give a file name.")
    if path.exists() and not path.is_file():
        raise UsageError(f"{flag} {path}: not a regular file (a device or a pipe); give a file name.")
    if not folder.is_dir():
        raise UsageError(f"{flag} {path}: the folder {folder} does not exist.")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"{flag} {path}: not writable.")


def _same_file(path: Path, other: Path) -> bool:
    """Whether ``path`` names ``other``: the same path once resolved, or the same file
    through a link."""
    if path.resolve() == other.resolve():
        return True
    try:
        return path.exists() and other.exists() and os.path.samefile(path, other)
    except OSError:
        return False


def _check_output(path: Path) -> None:
    """Refuse an output the model could not be saved to (``_check_writable``), or the skops
    format without skops."""
    _check_writable(path, "--output")
    if path.suffix not in PICKLE_SUFFIXES and importlib.util.find_spec("skops") is None:
        raise UsageError(
            f"--output {path}: the skops format needs skops: pip install \"forestrank[skops]\"; or name the output "
            f"{path.with_suffix('.joblib')} to pickle it."
        )


@contextlib.contextmanager
def _replaced_once_written(path: Path) -> Iterator[Path]:
    """A path beside ``path`` (its suffix kept: it names the format) to write to, moved onto
    ``path`` once written: a write that fails or is interrupted leaves ``path`` as it was,
    a file the user had there included, and no half-written file under its name. A
    symbolic link's target is written, and a file replaced keeps its permissions."""
    target = Path(os.path.realpath(path))
    temporary = target.with_name(f".{target.stem}.{os.getpid()}.partial{target.suffix}")
    try:
        yield temporary
        if target.exists():
            shutil.copymode(target, temporary)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


def _save(model: object, path: Path) -> None:
    """skops (``forestrank.persistence``) unless the name asks for pickle."""
    with _replaced_once_written(path) as temporary:
        if path.suffix in PICKLE_SUFFIXES:
            import joblib

            joblib.dump(model, temporary)
        else:
            from .persistence import save

            save(model, temporary)  # skops is there: _check_output


def _load_model(path: Path) -> object:
    """The model saved at ``path``, read by its name: a pickle only when the name says so
    (``PICKLE_SUFFIXES``, which runs the file's code: the user asked for it), otherwise
    the skops format, which runs none; a file that is not what its name says is refused."""
    import zipfile

    import joblib

    from .persistence import load

    _check_readable(path)
    if not path.is_file():
        raise UsageError(f"{path}: not a file but a pipe or a device; a saved model is read from a file: give its name.")
    if path.suffix not in PICKLE_SUFFIXES and not zipfile.is_zipfile(path):
        raise UsageError(
            f"{path}: not a skops model file. A pickled model is loaded only from a name ending in "
            f"{', '.join(PICKLE_SUFFIXES)} (loading a pickle runs its code: only from a source you trust)."
        )
    from sklearn.exceptions import InconsistentVersionWarning as ScikitLearnVersionWarning

    try:
        with warnings.catch_warnings():  # a file claiming a scikit-learn class: refused below, without its warning
            warnings.simplefilter("ignore", ScikitLearnVersionWarning)
            model = joblib.load(path) if path.suffix in PICKLE_SUFFIXES else load(path)
    except ImportError:
        raise
    except Exception as error:  # a corrupt, foreign or untrusted file: one line, not a traceback
        raise UsageError(f"{path}: not a saved forestrank model ({type(error).__name__}: {error}).") from error
    from sklearn.pipeline import Pipeline

    from .calibration import CalibratedRanker
    from .ensemble._base import BaseRanker

    # What persistence.save writes and the exports take: a ranker, a CalibratedRanker, or
    # a Pipeline (a QueryScaler, say) ending in one of them.
    last = model.steps[-1][1] if isinstance(model, Pipeline) and model.steps else model
    if not isinstance(last, (BaseRanker, CalibratedRanker)) or not hasattr(model, "n_features_in_"):
        raise UsageError(f"{path}: not a fitted forestrank model (it holds a {type(model).__name__}).")
    return model


def _scores(
    scores_path: Path | None, model_path: Path | None, data: Path, n_rows: int, zero_based: bool
) -> np.ndarray:  # fmt: skip
    """A system's scores of ``data``'s rows: read from a file, or predicted by a saved model
    (``data`` then read with the model's number of features: a file may omit trailing zeros;
    numbered from 0 with ``zero_based``)."""
    if model_path is not None:
        return _predicted(_load_model(model_path), data, zero_based)
    _check_readable(scores_path)
    try:
        with warnings.catch_warnings():  # an empty file: the count below says so, without numpy's warning
            warnings.simplefilter("ignore", UserWarning)
            # Two dimensions whatever the file holds: a line is a row, so one RankLib line
            # is one document's three columns, not three scores.
            lines = np.loadtxt(scores_path, dtype=np.float64, ndmin=2)
    except ValueError as error:
        raise UsageError(f"{scores_path}: not one number per line ({error}).") from error
    if lines.shape[1] not in (1, 3):  # RankLib's -score file: query id, the document's index in its query, score
        raise UsageError(
            f"{scores_path}: {lines.shape[1]} columns a line; expected one score a line, or RankLib's three "
            "(query id, document index, score)."
        )
    scores = lines[:, -1]
    if scores.shape != (n_rows,):
        raise UsageError(f"{scores_path}: {scores.size} scores for {n_rows} documents.")
    undefined = np.flatnonzero(np.isnan(scores))
    if len(undefined):
        raise UsageError(
            f"{scores_path}: score {int(undefined[0]) + 1} is nan; scores must order the documents (numbers, or +-inf)."
        )
    return scores


def _parse_params(items: Sequence[str]) -> dict:
    params = {}
    for item in items:
        name, separator, text = item.partition("=")
        if not separator or not name.isidentifier():
            raise UsageError(f"--param {item!r}: expected NAME=VALUE.")
        if name in params:
            raise UsageError(f"--param {name} is given twice; give each parameter once.")
        try:
            params[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            params[name] = text  # a bare word: a string option such as objective=mart
    return params


def _fit_parameters(estimator: object) -> set:
    import inspect

    return set(inspect.signature(estimator.fit).parameters)


def _parse_metric(text: str, convention: str | None) -> tuple[str, int | None]:
    name, at, cutoff = text.lower().partition("@")
    name = {"p": "precision", "prec": "precision"}.get(name, name)
    if name not in METRICS:
        raise UsageError(f"--metric {text!r}: expected ndcg@K, err@K, map or precision@K.")
    k = None
    if at:
        from .metrics._ranking import MAX_CUTOFF

        if not (cutoff.isdecimal() and cutoff.isascii() and 0 < int(cutoff) <= MAX_CUTOFF):  # "ndcg@", "@0", "@²"
            raise UsageError(f"--metric {text!r}: the cutoff must be a positive integer (at most 2**63 - 1).")
        k = int(cutoff)
    if name == "precision" and k is None:
        raise UsageError(f"--metric {text!r}: precision needs a cutoff (precision@K).")
    if name == "err" and convention is not None:
        raise UsageError("--convention applies to ndcg, map and precision; the LETOR scripts have no ERR.")
    return name, k


def _evaluate_metric(metric: tuple, y: np.ndarray, scores: np.ndarray, qid: np.ndarray, convention: str | None, per_query: bool = False):
    from .metrics._ranking import evaluate

    name, k = metric
    return evaluate(
        name, y, scores, qid, k, conventions={"convention": convention}, per_query=per_query,
        k_required=name == "precision", caller=f"forestrank {name}",
    )  # fmt: skip


def _describe(metric: tuple, convention: str | None, y: np.ndarray) -> str:
    from .metrics import describe_metric

    name, k = metric
    if name == "err":
        return describe_metric("err", k) + f", g_max = {y.max():g}"
    return describe_metric(name, k, convention=convention)
