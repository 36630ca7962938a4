"""Loader benchmark: forestrank.load_letor vs sklearn.datasets.load_svmlight_file(query_id=True).

Generates a LETOR-style file (136 dense features with 6 decimals, 100 documents per
query, a trailing ``#docid`` comment, as MSLR-WEB30K/LETOR files look) once under
benchmarks/_data/, then times both loaders on it in the same process and checks that
they return identical arrays.

    python benchmarks/bench_loader.py                  # 200k rows (the issue's comparison)
    python benchmarks/bench_loader.py --rows 700000 --skip-sklearn   # the 60 s bound
    python benchmarks/bench_loader.py --rows 100000 --full-precision  # 17 significant digits

forestrank's first call includes compiling the parser unless the numba cache is warm;
the script reports the compile time separately (parse of a one-line file).
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import sklearn
from sklearn.datasets import load_svmlight_file

import forestrank
from _machine import describe_machine
from forestrank import load_letor

N_FEATURES = 136
DOCS_PER_QUERY = 100


def generate(path: Path, n_rows: int, seed: int = 0, chunk: int = 20_000, full_precision: bool = False) -> None:
    """The file; ``full_precision``: values written with 17 significant digits (as
    ``%.17g`` writes a float64 that reads back the same), mantissas past the parser's
    exact fast path, rather than 6 decimals."""
    rng = np.random.default_rng(seed)
    number = "%.17g" if full_precision else "%.6f"
    template = "%d qid:%d " + " ".join(f"{j + 1}:{number}" for j in range(N_FEATURES)) + " #docid = D%d\n"
    with open(path, "w") as handle:
        for start in range(0, n_rows, chunk):
            rows = np.arange(start, min(start + chunk, n_rows))
            labels = rng.integers(0, 5, len(rows))
            features = rng.random((len(rows), N_FEATURES))
            if not full_precision:
                features = np.round(features, 6)
            features[features < 0.2] = 0.0  # some sparsity, as in real files
            handle.writelines(
                template % (label, row // DOCS_PER_QUERY, *values, row)
                for label, row, values in zip(labels, rows, features)
            )


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--skip-sklearn", action="store_true", help="time forestrank only")
    parser.add_argument("--full-precision", action="store_true", help="17 significant digits, not 6 decimals")
    args = parser.parse_args()

    data_dir = Path(__file__).parent / "_data"
    data_dir.mkdir(exist_ok=True)
    path = data_dir / f"letor_{args.rows}x{N_FEATURES}{'_full' if args.full_precision else ''}.txt"
    if not path.exists():
        seconds, _ = timed(generate, path, args.rows, full_precision=args.full_precision)
        print(f"generated {path} ({path.stat().st_size / 1e6:.0f} MB) in {seconds:.1f} s")

    with tempfile.TemporaryDirectory() as folder:
        tiny = Path(folder, "tiny.txt")
        tiny.write_text("1 qid:1 1:0.5 #docid = x\n")
        compile_seconds, _ = timed(load_letor, tiny)
    ours_seconds, (X, y, qid) = timed(load_letor, path)
    print(f"machine: {describe_machine()}")
    print(f"forestrank {forestrank.__version__}, scikit-learn {sklearn.__version__}, numba cache warm after first call")
    digits = "17 significant digits" if args.full_precision else "6 decimals"
    print(f"file: {args.rows} rows x {N_FEATURES} features ({digits}), {path.stat().st_size / 1e6:.0f} MB")
    print(f"forestrank.load_letor: {ours_seconds:.2f} s (+ {compile_seconds:.2f} s first-call compile/cache load)")
    if args.skip_sklearn:
        return
    theirs_seconds, (X_ref, y_ref, qid_ref) = timed(load_svmlight_file, str(path), query_id=True)
    assert np.array_equal(X, X_ref.toarray()) and np.array_equal(y, y_ref) and np.array_equal(qid, qid_ref)
    print(f"sklearn load_svmlight_file(query_id=True): {theirs_seconds:.2f} s (identical arrays)")
    print(f"ratio forestrank / sklearn: {ours_seconds / theirs_seconds:.3f} ({theirs_seconds / ours_seconds:.1f}x faster)")


if __name__ == "__main__":
    main()
