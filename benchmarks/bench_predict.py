"""Scoring speed: forestrank's ``predict`` against every runtime its models can be served by.

    python benchmarks/bench_predict.py                          # every model; 1, 100 and 10,000 rows a call
    python benchmarks/bench_predict.py --models lambdamart-1000x31 rf-point-100 --batches 100 10000
    python benchmarks/bench_predict.py --models lambdamart-1x31 --batches 1      # the cost of a call
    python benchmarks/bench_predict.py --scaling --models lambdamart-100x31 --batches 1000000

Each model is fitted once on ``make_ranking(--train-queries x 100, 136 features)`` (pickled
under ``--cache``, so that later runs only score) and exported with ``forestrank.export``;
every runtime then scores the same trees:

* forestrank ``predict``, float64 and float32 rows;
* LightGBM's ``Booster.predict`` on the exported text model, and ``lleaves`` (that text
  compiled by LLVM) where it installs;
* XGBoost's ``inplace_predict`` on float32 rows, from the exported JSON model;
* onnxruntime on the exported ONNX model, float32 and float64;
* the model compiled to C by TL2cgen (through treelite) where it installs;
* for ``rf-point-100``, scikit-learn's ``RandomForestClassifier`` fitted alike (scored by
  expected relevance; not the same trees, the speed issue's reference for forests).

Everything runs on one thread (``n_jobs=1``, ``num_threads=1``, ``nthread=1``, one
intra-op thread). Per model and batch size, ``--rounds`` rounds alternate the contenders;
in a round a contender scores consecutive slices of the test rows for at least
``--seconds``; the figure is the best round's time per call (and per row), and each line
gives forestrank's float64 ``predict`` time over its own (``ours / it``: below 1, ours is
faster).
``--scaling`` times forestrank alone at ``n_jobs=1`` and ``n_jobs=2`` instead.

Models: ``lambdamart-{100,1000}x{31,255}`` (iterations x leaves, learning rate 0.05, 20 rows
a leaf), ``lambdamart-1x31`` (one tree: the cost of a call), ``rf-point-100`` (100 fully
grown trees, the defaults), ``rf-list-100`` (100 trees, the defaults).
"""

import argparse
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _machine import describe_machine  # noqa: E402
from compare import _sklearn_forest  # noqa: E402

N_FEATURES = 136
MODELS = ["lambdamart-1x31", "lambdamart-100x31", "lambdamart-1000x31", "lambdamart-100x255", "lambdamart-1000x255",
          "rf-point-100", "rf-list-100"]  # fmt: skip
# TL2cgen writes a model as C code for gcc, whose compile time grows with the nodes: minutes beyond this.
MAX_COMPILED_NODES = 300_000


def fit_model(name: str, X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> object:
    """The forestrank model ``name`` fitted on two threads."""
    from forestrank import LambdaMART, RFListRanker, RFPointRanker

    if name.startswith("lambdamart-"):
        iterations, leaves = (int(part) for part in name.removeprefix("lambdamart-").split("x"))
        model = LambdaMART(
            n_estimators=iterations, max_leaf_nodes=leaves, learning_rate=0.05, min_samples_leaf=20, n_jobs=2,
            random_state=0,
        )  # fmt: skip
    elif name == "rf-point-100":
        model = RFPointRanker(n_estimators=100, n_jobs=2, random_state=0)
    elif name == "rf-list-100":
        model = RFListRanker(n_estimators=100, n_jobs=2, random_state=0)
    else:
        raise SystemExit(f"--models takes {', '.join(MODELS)}; got {name!r}")
    return model.fit(X, y, qid=qid)


def cached_model(name: str, cache: Path, train_queries: int) -> object:
    path = cache / f"{name}-{train_queries}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    from forestrank import make_ranking

    X, y, qid = make_ranking(n_queries=train_queries, docs_per_query=100, n_features=N_FEATURES, random_state=0)
    start = time.perf_counter()
    model = fit_model(name, X, y, qid)
    print(f"  fitted {name} in {time.perf_counter() - start:.1f} s", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(model))
    return model


def contenders(name: str, model: object, cache: Path, train_queries: int) -> dict:
    """Name -> function scoring a float64 batch, each on one thread."""
    from forestrank.export import to_lightgbm, to_onnx, to_xgboost

    model.set_params(n_jobs=1)
    scorers = {
        "forestrank float64": model.predict,
        "forestrank float32": lambda rows: model.predict(rows.astype(np.float32)),
    }
    import lightgbm

    lightgbm_text = to_lightgbm(model)
    booster = lightgbm.Booster(model_str=lightgbm_text)
    scorers["LightGBM predict"] = lambda rows: booster.predict(rows, num_threads=1)
    try:
        import lleaves

        # LightGBM's own text, with the tree sizes lleaves reads; lleaves takes a feature whose
        # range is not written ("none": forestrank keeps no training ranges) for a categorical one.
        text = booster.model_to_string()
        start = text.index("feature_infos=")
        end = text.index("\n", start)
        infos = " ".join("[-inf:inf]" if info == "none" else info for info in text[start:end].split("=")[1].split())
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as file:
            file.write(text[:start] + "feature_infos=" + infos + text[end:])
        compiled = lleaves.Model(model_file=file.name)
        compiled.compile(cache=str(cache / f"{name}-{train_queries}.lleaves.o"))
        scorers["lleaves"] = lambda rows: compiled.predict(rows, n_jobs=1)
    except Exception as error:  # not installed, or built for another llvmlite than numba's
        print(f"  lleaves: {type(error).__name__}: {error}")
    import xgboost

    xgb = xgboost.Booster()
    xgb.load_model(bytearray(json.dumps(to_xgboost(model)).encode()))
    xgb.set_param({"nthread": 1})
    scorers["XGBoost inplace_predict float32"] = lambda rows: xgb.inplace_predict(rows.astype(np.float32))
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    for dtype in (np.float32, np.float64):
        session = onnxruntime.InferenceSession(to_onnx(model, dtype=dtype).SerializeToString(), options)
        input_name = session.get_inputs()[0].name
        scorers[f"onnxruntime {np.dtype(dtype).name}"] = (
            lambda rows, session=session, input_name=input_name, dtype=dtype: session.run(
                None, {input_name: rows.astype(dtype)}
            )[0]
        )
    n_nodes = sum(tree.node_count for tree in model.trees_)
    try:
        import tl2cgen
        import treelite

        if n_nodes > MAX_COMPILED_NODES:
            raise ImportError(f"skipped: {n_nodes:,} nodes, more than gcc compiles in minutes")
        library = cache / f"{name}-{train_queries}.tl2cgen.so"
        if not library.exists():
            start = time.perf_counter()
            tl2cgen.export_lib(
                treelite.frontend.from_lightgbm(booster), toolchain="gcc", libpath=str(library),
                params={"parallel_comp": 8}, nthread=2,
            )  # fmt: skip
            print(f"  TL2cgen compiled {name} in {time.perf_counter() - start:.1f} s", flush=True)
        predictor = tl2cgen.Predictor(str(library), nthread=1)
        scorers["TL2cgen"] = lambda rows: predictor.predict(tl2cgen.DMatrix(rows))
    except ImportError as error:
        print(f"  TL2cgen: {error}")
    if name == "rf-point-100":
        from forestrank import make_ranking

        X, y, _ = make_ranking(n_queries=train_queries, docs_per_query=100, n_features=N_FEATURES, random_state=0)
        forest = _sklearn_forest(100, X.shape, 0).fit(X, y).set_params(n_jobs=1)
        scorers["scikit-learn RandomForestClassifier"] = lambda rows: forest.predict_proba(rows) @ forest.classes_
    return scorers


def time_per_call(score: object, X: np.ndarray, batch: int, seconds: float) -> float:
    """Seconds per call of ``score`` on consecutive ``batch``-row slices of ``X``, over at least ``seconds``."""
    n_calls = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds or n_calls == 0:
        first = (n_calls * batch) % max(len(X) - batch + 1, 1)
        score(X[first : first + batch])
        n_calls += 1
        elapsed = time.perf_counter() - start
    return elapsed / n_calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 100, 10_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=0.3, help="time a contender scores in a round")
    parser.add_argument("--train-queries", type=int, default=600)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "forestrank-bench-predict")
    parser.add_argument("--scaling", action="store_true", help="forestrank alone, n_jobs=1 against n_jobs=2")
    args = parser.parse_args()
    from forestrank import make_ranking

    n_rows = max(max(args.batches), 10_000)
    X, _, _ = make_ranking(n_queries=-(-n_rows // 100), docs_per_query=100, n_features=N_FEATURES, random_state=1)
    X = np.ascontiguousarray(X[:n_rows])
    print(f"machine: {describe_machine()}")
    threads = "forestrank at n_jobs=1 and 2" if args.scaling else "one thread each"
    print(f"{threads}; best of {args.rounds} alternating rounds of >= {args.seconds} s; rows of "
          f"make_ranking(random_state=1), {N_FEATURES} features; models fitted on {args.train_queries} x 100 rows")  # fmt: skip
    for name in args.models:
        model = cached_model(name, args.cache, args.train_queries)
        n_leaves = max((tree.node_count + 1) // 2 for tree in model.trees_)
        print(f"\n{name}: {len(model.trees_)} trees, at most {n_leaves} leaves", flush=True)
        if args.scaling:
            scorers = {
                f"forestrank n_jobs={n_jobs}": (lambda rows, n_jobs=n_jobs: model.set_params(n_jobs=n_jobs).predict(rows))
                for n_jobs in (1, 2)
            }  # fmt: skip
        else:
            scorers = contenders(name, model, args.cache, args.train_queries)
        reference = model.set_params(n_jobs=1).predict(X[:1000])
        for contender, score in scorers.items():
            gap = np.max(np.abs(np.ravel(score(X[:1000])) - reference))
            if gap > 1e-4 * max(np.max(np.abs(reference)), 1.0) and "scikit-learn" not in contender:
                print(f"  {contender}: scores differ from forestrank's by {gap:.3g}", flush=True)
        for batch in args.batches:
            best = {contender: np.inf for contender in scorers}
            for _ in range(args.rounds):
                for contender, score in scorers.items():
                    best[contender] = min(best[contender], time_per_call(score, X, batch, args.seconds))
            ours = best[next(iter(scorers))]
            print(f"  {batch:>9,d} rows a call")
            for contender, seconds in best.items():
                print(f"    {contender:38s} {seconds * 1e6:12.1f} us a call {seconds / batch * 1e6:9.2f} us a row"
                      f"   ours / it {ours / seconds:6.2f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
