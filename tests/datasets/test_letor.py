"""forestrank.datasets: the LETOR/svmlight loader and the synthetic generator."""

import gzip
import os
import tracemalloc
import warnings

import numpy as np
import scipy.sparse
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.datasets import load_svmlight_file

from forestrank import DummyRanker, load_letor, load_letor_fold, make_ranking
from forestrank.datasets import _letor as datasets_module

# Row / query counts of ../shared/datasets/MQ2008 (its README).
MQ2008_COUNTS = {
    1: {"train": (9630, 471), "vali": (2707, 157), "test": (2874, 156)},
    2: {"train": (9404, 471), "vali": (2874, 156), "test": (2933, 157)},
    3: {"train": (8643, 470), "vali": (2933, 157), "test": (3635, 157)},
    4: {"train": (8514, 470), "vali": (3635, 157), "test": (3062, 157)},
    5: {"train": (9442, 470), "vali": (3062, 157), "test": (2707, 157)},
}


@pytest.mark.dataset
def test_mq2008_all_fifteen_files_match_the_published_counts(mq2008):
    test_labels, test_queries = [], []
    for fold, splits in MQ2008_COUNTS.items():
        loaded = load_letor_fold(mq2008 / f"Fold{fold}")
        for split, (n_rows, n_queries) in splits.items():
            X, y, qid = getattr(loaded, split)
            assert X.shape == (n_rows, 46), (fold, split)
            assert len(np.unique(qid)) == n_queries, (fold, split)
            assert set(np.unique(y)) <= {0.0, 1.0, 2.0}
        test_labels.append(loaded.test[1])
        test_queries.append(loaded.test[2])
    # The five test sets partition the collection.
    labels, queries = np.concatenate(test_labels), np.concatenate(test_queries)
    assert len(labels) == 15211 and len(np.unique(queries)) == 784
    assert np.bincount(labels.astype(int)).tolist() == [12279, 2001, 931]
    assert (queries.min(), queries.max()) == (10002, 19997)


@pytest.mark.dataset
def test_mq2008_equals_sklearn_loader(mq2008):
    path = mq2008 / "Fold1" / "vali.txt"
    X, y, qid = load_letor(path)
    X_ref, y_ref, qid_ref = load_svmlight_file(str(path), query_id=True)
    np.testing.assert_array_equal(X, X_ref.toarray())
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(qid, qid_ref)


@pytest.mark.dataset
def test_lambdarank_example_reads_query_sizes_from_companion_file(lambdarank_example):
    X, y, qid = load_letor(lambdarank_example / "rank.train")
    X_ref, y_ref = load_svmlight_file(str(lambdarank_example / "rank.train"))
    assert X.shape[0] == 3005 and len(np.unique(qid)) == 201
    np.testing.assert_array_equal(X[:, : X_ref.shape[1]], X_ref.toarray())
    np.testing.assert_array_equal(y, y_ref)
    sizes = np.loadtxt(lambdarank_example / "rank.train.query", dtype=int)
    np.testing.assert_array_equal(np.unique(qid, return_counts=True)[1], sizes)
    X_test, _, qid_test = load_letor(lambdarank_example / "rank.test", n_features=X.shape[1])
    assert X_test.shape == (768, X.shape[1]) and len(np.unique(qid_test)) == 50


def write(tmp_path, text, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def test_comments_blank_lines_crlf_and_tabs(tmp_path):
    path = write(
        tmp_path,
        "# header comment\r\n2 qid:5 1:0.5 3:-1.25 # docid = a\r\n\r\n   \n0\tqid:5\t2:3e2\n1 qid:7 # only label\n",
    )
    X, y, qid = load_letor(path)
    np.testing.assert_array_equal(X, [[0.5, 0, -1.25], [0, 300.0, 0], [0, 0, 0]])
    np.testing.assert_array_equal(y, [2, 0, 1])
    np.testing.assert_array_equal(qid, [5, 5, 7])


def test_numbers_off_the_fast_path_equal_python_float(tmp_path):
    tokens = ["0.12345678901234567890", "1e-30", "-0.5e+3", "123456789012345678", "7.", ".25", "nan", "1E-400"]
    line = "1 qid:1 " + " ".join(f"{i + 1}:{token}" for i, token in enumerate(tokens))
    X, _, _ = load_letor(write(tmp_path, line + "\n"))
    np.testing.assert_array_equal(X[0], [float(token) for token in tokens])


@pytest.mark.parametrize(
    "text, match",
    [
        ("1 qid:1 1:0.5\n0 qid:1 1:inf\n", r"data.txt:2: feature 1 is inf; it must be finite, or nan"),
        ("1 qid:1 1:0.5\n0 qid:1 2:-1E400\n", r"data.txt:2: feature 2 is -1E400; it must be finite"),
        ("nan qid:1 1:0.5\n", r"data.txt:1: a label is nan; it must be finite"),
        ("1 qid:1 1:0.5\nqid:1 1:0.3\n", r"data.txt:2: the line must start with its label"),
        ("1 qid:1 1:1_000\n", r"data.txt:1: cannot parse '1_000' as a number"),
    ],
)
def test_values_no_estimator_takes_are_refused_with_their_line(tmp_path, text, match):
    with pytest.raises(ValueError, match=match):
        load_letor(write(tmp_path, text))


def test_a_utf8_byte_order_mark_is_skipped_and_query_file_errors_name_their_line(tmp_path):
    path = write(tmp_path, "\ufeff1 qid:1 1:0.5\n0 qid:1 1:0.2\n")
    X, y, _ = load_letor(path)
    np.testing.assert_array_equal(y, [1.0, 0.0])
    no_qid = tmp_path / "plain.txt"
    no_qid.write_text("1 1:0.5\n0 1:0.2\n")
    no_qid.with_name("plain.txt.query").write_text("2\nabc\n")
    with pytest.raises(ValueError, match=r"plain.txt.query:2: expected a query size \(an integer from 1 to the data file's \d+ rows\); got 'abc'"):
        load_letor(no_qid)


def test_more_deferred_numbers_than_the_initial_capacity(tmp_path):
    values = [f"0.{i:020d}1" for i in range(3000)]  # 22 significant digits: all deferred
    path = write(tmp_path, "".join(f"0 qid:1 1:{value}\n" for value in values))
    X, _, _ = load_letor(path)
    np.testing.assert_array_equal(X[:, 0], [float(value) for value in values])


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_full_precision_numbers_are_stored_at_once(tmp_path, monkeypatch, sparse, dtype):
    """A file of Python's repr of floats (17 significant digits, a third of them off the
    exact fast path) went through a per-token loop of numpy scalar checks, 14x slower
    than short numbers: the deferred tokens are converted and stored at once, and only a
    file whose deferred tokens hold an error walks them one by one to name it."""
    from forestrank.datasets import _letor

    rng = np.random.default_rng(0)
    values = rng.random((500, 3)) * 10.0 ** rng.integers(-5, 5, (500, 3))
    labels = [repr(float(value)) for value in rng.random(500) * 4]
    text = "".join(  # an underscore in a comment is no token's
        f"{label} qid:{row // 7} " + " ".join(f"{column + 1}:{value!r}" for column, value in enumerate(row_values))
        + f" #doc_id = {row}\n"
        for row, (label, row_values) in enumerate(zip(labels, values.tolist()))
    )
    path = write(tmp_path, text)

    def refused(*args):
        raise AssertionError("a file of valid numbers walked its deferred tokens one by one")

    with monkeypatch.context() as patched:
        patched.setattr(_letor, "_store_deferred_one_by_one", refused)
        patched.setattr(_letor, "_DEFERRED_CHUNK", 97)  # chunks' ends inside the file
        X, y, _ = load_letor(path, sparse=sparse, dtype=dtype)
    X = X.toarray() if sparse else X
    np.testing.assert_array_equal(X, values.astype(dtype))
    np.testing.assert_array_equal(y, [float(label) for label in labels])
    with pytest.raises(ValueError, match=r"data.txt:501: feature 2 is 1e309; it must be finite"):
        load_letor(write(tmp_path, text + "0 qid:99 1:0.12345678901234567 2:1e309\n"), sparse=sparse, dtype=dtype)


@given(
    X=hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, max_side=8),
        elements=st.floats(allow_nan=False, allow_infinity=False, width=64),
    ),
    data=st.data(),
)
def test_round_trip_of_random_matrices(tmp_path_factory, X, data):
    y = data.draw(hnp.arrays(np.int64, X.shape[0], elements=st.integers(0, 4)))
    qid = np.sort(data.draw(hnp.arrays(np.int64, X.shape[0], elements=st.integers(-5, 5))))
    lines = []
    for row in range(X.shape[0]):
        features = " ".join(f"{j + 1}:{float(X[row, j])!r}" for j in range(X.shape[1]) if X[row, j] != 0)
        lines.append(f"{y[row]} qid:{qid[row]} {features}\n")
    path = tmp_path_factory.mktemp("roundtrip") / "data.txt"
    path.write_text("".join(lines))
    X_read, y_read, qid_read = load_letor(path, n_features=X.shape[1])
    np.testing.assert_array_equal(X_read, X + 0.0)  # -0.0 written as absent
    np.testing.assert_array_equal(y_read, y)
    np.testing.assert_array_equal(qid_read, qid)


@pytest.mark.parametrize(
    ("text", "kwargs", "match"),
    [
        ("1 qid:1 1:0.5 x\n", {}, r"data.txt:1: expected 'index:value'"),
        ("1 qid:1 1:0.5\n1 qid:1 a:0.5\n", {}, r"data.txt:2: feature index is not"),
        ("1 qid:1 0:0.5\n", {}, r"data.txt:1: feature index 0 in a 1-based file"),
        ("1 qid:1 3:0.5 2:0.1\n", {}, r"data.txt:1: feature indices must be strictly increasing"),
        ("1 qid:a 1:0.5\n", {}, r"data.txt:1: qid must be an integer"),
        ("1 1:0.5 qid:3\n", {}, r"data.txt:1: qid must be an integer .*, given once, right after the label"),
        ("1 qid:1 1:0.5\n\n1 qid:1 2:abc\n", {}, r"data.txt:3: cannot parse 'abc' as a number"),
        ("x qid:1 1:0.5\n", {}, r"data.txt:1: cannot parse 'x' as a number"),
        ("1 qid:1 5:0.5\n", {"n_features": 3}, r"feature index 5 but n_features=3"),
        ("1 qid:1 1:0.5\n1 1:0.5\n", {}, r"only 1 of 2 rows carry a qid"),
        ("1 1:0.5\n", {}, r"no qid: fields and no query file"),
        ("# nothing\n\n", {}, r"holds no data rows"),
        ("1 qid:1 1:0.5\n", {"n_features": 0}, r"n_features must be an integer >= 1"),
    ],
)
def test_malformed_files_raise_with_file_and_line(tmp_path, text, kwargs, match):
    with pytest.raises(ValueError, match=match):
        load_letor(write(tmp_path, text), **kwargs)


def test_a_qid_of_nineteen_digits_is_read_up_to_int64s_largest(tmp_path):
    """Query ids of 19 digits were refused though int64 (and scikit-learn's loader) holds them."""
    largest = 2**63 - 1
    _, _, qid = load_letor(write(tmp_path, f"1 qid:1234567890123456789 1:1\n0 qid:{largest} 1:2\n"))
    np.testing.assert_array_equal(qid, [1234567890123456789, largest])
    with pytest.raises(ValueError, match=r"data.txt:1: qid must be an integer of int64 \(at most 2\*\*63 - 1\)"):
        load_letor(write(tmp_path, f"1 qid:{largest + 1} 1:1\n"))


def test_feature_indices_up_to_int64s_largest_width(tmp_path):
    """A 0-based index of 2**63 - 1 needs 2**63 columns: the width wrapped to 0, and
    sparse=True returned a (1, 0) CSR matrix holding that index, which scipy then wrote
    past (the process aborted). Refused by line; a 1-based file's 2**63 - 1 fits."""
    largest = 2**63 - 1
    path = write(tmp_path, f"1 qid:1 {largest}:1.5\n")
    for sparse in (True, False):
        with pytest.raises(ValueError, match=r"data.txt:1: feature index 2\*\*63 - 1 in a 0-based file"):
            load_letor(path, zero_based=True, sparse=sparse)
    X = load_letor(path, sparse=True)[0]
    assert X.shape == (1, largest) and X.indices.tolist() == [largest - 1] and X.data.tolist() == [1.5]
    X = load_letor(write(tmp_path, f"1 qid:1 {largest - 1}:1.5\n"), zero_based=True, sparse=True)[0]
    assert X.shape == (1, largest) and X.indices.tolist() == [largest - 1]


def test_zero_based_indices(tmp_path):
    X, _, _ = load_letor(write(tmp_path, "1 qid:1 0:0.5 2:1.5\n"), zero_based=True)
    np.testing.assert_array_equal(X, [[0.5, 0.0, 1.5]])
    with pytest.raises(ValueError, match="has feature index 3 but n_features=3"):  # it said 4, one past the file's
        load_letor(write(tmp_path, "1 qid:1 0:1 3:2\n"), zero_based=True, n_features=3)
    # a value's error numbers the feature as the file does (it said one past)
    with pytest.raises(ValueError, match="data.txt:1: feature 2 is inf"):
        load_letor(write(tmp_path, "1 qid:1 0:1 2:inf\n"), zero_based=True)
    with pytest.raises(ValueError, match="data.txt:1: feature 0 is 1e39, beyond float32's range"):
        load_letor(write(tmp_path, "1 qid:1 0:1e39\n"), zero_based=True, dtype=np.float32)
    with pytest.raises(ValueError, match="data.txt:1: feature 2 is inf"):
        load_letor(write(tmp_path, "1 qid:1 1:1 2:inf\n"))


def test_query_file_sizes_must_match_rows(tmp_path):
    path = write(tmp_path, "1 1:0.5\n0 1:0.1\n2 2:0.3\n")
    write(tmp_path, "2\n1\n", name="data.txt.query")
    _, _, qid = load_letor(path)
    np.testing.assert_array_equal(qid, [0, 0, 1])
    explicit = write(tmp_path, "1\n1\n", name="sizes.txt")
    with pytest.raises(ValueError, match="sum to the 3 rows"):
        load_letor(path, query_file=explicit)
    # a size of 0 was reported as sizes that "sum to 3" against 3 rows; "1_0" was read as 10
    # (and a size of 20 digits died with numpy's OverflowError)
    for text, line in (("0\n3\n", 1), ("3\n0\n", 2), ("1_0\n", 1), ("-1\n4\n", 1), ("1\n" + "9" * 20 + "\n", 2)):
        with pytest.raises(ValueError, match=rf"sizes.txt:{line}: expected a query size \(an integer from 1 to the data file's 3 rows\)"):
            load_letor(path, query_file=write(tmp_path, text, name="sizes.txt"))
    with_qid = write(tmp_path, "1 qid:4 1:0.5\n", name="with_qid.txt")
    with pytest.raises(ValueError, match="has qid: fields and query_file="):
        load_letor(with_qid, query_file=explicit)


@pytest.mark.parametrize("name", ["data.txt.gz", "DATA.TXT.GZ"])  # capitals: it was parsed as text
def test_gzip_input(tmp_path, name):
    path = tmp_path / name
    with gzip.open(path, "wt") as handle:
        handle.write("2 qid:3 1:0.25\n0 qid:3 2:0.75\n")
    X, y, qid = load_letor(path)
    np.testing.assert_array_equal(X, [[0.25, 0], [0, 0.75]])
    np.testing.assert_array_equal(y, [2, 0])
    np.testing.assert_array_equal(qid, [3, 3])


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="/dev/fd/N names a pipe's read end")
def test_a_pipe_is_read_as_its_file(tmp_path):
    """A pipe (a shell's ``<(...)``, a FIFO) failed in numpy's ``fromfile``, which asks for
    a file position."""
    text = "".join(f"{row % 3} qid:{row // 4} 1:{row / 7:.4f} 3:{row % 5}\n" for row in range(40))
    read, write_end = os.pipe()
    os.write(write_end, text.encode())
    os.close(write_end)
    try:
        piped = load_letor(f"/dev/fd/{read}")
    finally:
        os.close(read)
    for got, expected in zip(piped, load_letor(write(tmp_path, text))):
        np.testing.assert_array_equal(got, expected)


def test_a_pipe_is_never_cached(tmp_path):
    """A pipe's copy was keyed by the pipe's size and time, which say nothing of its
    content: no copy is kept or read for a pipe, given as the data or as its query file;
    a missing file is not called a pipe."""
    texts = ["".join(f"{row % 3} qid:{row // 4} 1:{row / 7 + shift:.4f}\n" for row in range(40)) for shift in (0, 5)]
    for text in texts:
        read, write_end = os.pipe()
        os.write(write_end, text.encode())
        os.close(write_end)
        try:
            with pytest.warns(UserWarning, match="is no regular file .*the parsed copy is neither read nor written"):
                piped = load_letor(f"/dev/fd/{read}", cache=tmp_path)
        finally:
            os.close(read)
        for got, expected in zip(piped, load_letor(write(tmp_path, text))):
            np.testing.assert_array_equal(got, expected)
    sizes = "2\n3\n"
    data = write(tmp_path, "1 1:0.5\n0 1:0.1\n2 1:0.3\n0 1:0.2\n1 1:0.9\n")
    read, write_end = os.pipe()
    os.write(write_end, sizes.encode())
    os.close(write_end)
    try:
        with pytest.warns(UserWarning, match=f"/dev/fd/{read} is no regular file"):
            load_letor(data, query_file=f"/dev/fd/{read}", cache=tmp_path)
    finally:
        os.close(read)
    assert not list(tmp_path.glob("*.forestrank-cache.npz"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(FileNotFoundError):
            load_letor(tmp_path / "missing.txt", cache=True)


def test_a_query_file_that_is_not_utf8_or_a_folder(tmp_path):
    """A ``.query`` file in another encoding was reported as an error of the data file; a
    folder named ``<file>.query`` gave Python's IsADirectoryError."""
    path = write(tmp_path, "1 1:0.5\n0 1:0.1\n")
    folder = tmp_path / "data.txt.query"
    folder.mkdir()
    with pytest.raises(ValueError, match=r"data.txt has no qid: fields and no query file .*data.txt.query is a folder"):
        load_letor(path)
    sizes = tmp_path / "sizes.txt"
    sizes.write_bytes("2\n\u00e9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"sizes.txt: not UTF-8 text \(byte 2\); a query file holds query sizes"):
        load_letor(path, query_file=sizes)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_a_query_companion_that_is_a_pipe_is_named(tmp_path):
    """A ``<file>.query`` that is a pipe is not read unasked (its content is read once), and
    the error said only that there was no query file."""
    path = write(tmp_path, "1 1:0.5\n0 1:0.1\n")
    os.mkfifo(tmp_path / "data.txt.query")
    with pytest.raises(ValueError, match=r"data.txt.query is no regular file \(a pipe\?\): pass it as query_file="):
        load_letor(path, cache=False)


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
@pytest.mark.parametrize("damage", ["truncated", "not compressed", "corrupt"])
def test_a_damaged_compressed_file_is_a_value_error_naming_it(tmp_path, suffix, damage):
    """A truncated file raised EOFError (an "internal error" on the command line) and a
    file that is not gzip data an error without its name."""
    import bz2

    text = "".join(f"{row % 3} qid:{row // 10} 1:{row / 7:.5f} 2:{row % 5}\n" for row in range(2000)).encode()
    packed = bytearray(gzip.compress(text) if suffix == ".gz" else bz2.compress(text))
    if damage == "truncated":
        packed = packed[: len(packed) // 2]
    elif damage == "not compressed":
        packed = bytearray(text[:100])
    else:
        packed[len(packed) // 2] ^= 0xFF
    path = tmp_path / f"data.txt{suffix}"
    path.write_bytes(bytes(packed))
    with pytest.raises(ValueError, match=rf"data.txt{suffix}: not a readable {suffix[1:]} file \("):
        load_letor(path)


@pytest.mark.parametrize("damage", [b"", b"not a zip", "truncated", "pickle"])
def test_a_damaged_parsed_copy_is_parsed_again_and_rewritten(tmp_path, damage):
    """A cut-short or foreign cache file failed every later load (BadZipFile, EOFError)."""
    path = write(tmp_path, "2 qid:3 1:0.25\n0 qid:3 2:0.75\n")
    expected = load_letor(path)
    cache = tmp_path / "data.txt.forestrank-cache.npz"
    load_letor(path, cache=True)
    if damage == "truncated":
        damage = cache.read_bytes()[:100]
    elif damage == "pickle":  # a valid archive of an object array: np.load refuses to unpickle it
        np.savez(cache, key=np.array([object()], dtype=object))
        damage = cache.read_bytes()
    cache.write_bytes(damage)
    for _ in range(2):  # parsed again, then read from the rewritten copy
        for loaded, fresh in zip(load_letor(path, cache=True), expected):
            np.testing.assert_array_equal(loaded, fresh)
    assert cache.read_bytes() != damage


def test_cache_is_reused_only_while_the_file_is_unchanged(tmp_path, monkeypatch):
    path = write(tmp_path, "2 qid:3 1:0.25\n0 qid:3 2:0.75\n")
    first = load_letor(path, cache=True)
    assert (tmp_path / "data.txt.forestrank-cache.npz").exists()

    def parse_forbidden(*args):
        raise AssertionError("the cache should have been used")

    with monkeypatch.context() as patch:
        patch.setattr(datasets_module, "_parse_file", parse_forbidden)
        for cached, fresh in zip(load_letor(path, cache=True), first):
            np.testing.assert_array_equal(cached, fresh)
        with pytest.raises(AssertionError, match="cache should have been used"):
            load_letor(path, n_features=5, cache=True)  # other arguments: other key

    path.write_text("1 qid:4 1:9.5\n")
    os.utime(path, ns=(1, 1))
    X, y, qid = load_letor(path, cache=True)
    np.testing.assert_array_equal(X, [[9.5]])
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    load_letor(path, cache=cache_dir)
    assert len(list(cache_dir.glob("data.txt.*.forestrank-cache.npz"))) == 1


def test_the_cache_tells_apart_query_files_of_the_same_size_and_time(tmp_path):
    """The key held the query file's size and modification time, not its path: a second
    query file unpacked beside the first (the same size and time) got the first's ids."""
    path = write(tmp_path, "1 1:0.5\n0 1:1\n2 1:0.2\n")
    default, other = tmp_path / "data.txt.query", tmp_path / "other.query"
    default.write_text("2\n1\n")
    other.write_text("1\n2\n")
    os.utime(default, ns=(1, 1))
    os.utime(other, ns=(1, 1))
    np.testing.assert_array_equal(load_letor(path, cache=True)[2], [0, 0, 1])
    np.testing.assert_array_equal(load_letor(path, cache=True, query_file=other)[2], [0, 1, 1])
    np.testing.assert_array_equal(load_letor(path, cache=True)[2], [0, 0, 1])


def test_unwritable_cache_location_only_warns(tmp_path):
    """At the caller's line, through load_letor_fold too (it pointed inside the package)."""
    path = write(tmp_path, "2 qid:3 1:0.25\n")
    with pytest.warns(UserWarning, match="Could not write the parsed copy") as record:
        X, _, _ = load_letor(path, cache=tmp_path / "does-not-exist")
    np.testing.assert_array_equal(X, [[0.25]])
    for name in ("train.txt", "vali.txt", "test.txt"):
        write(tmp_path, "2 qid:3 1:0.25\n", name)
    with pytest.warns(UserWarning, match="Could not write the parsed copy") as fold_record:
        load_letor_fold(tmp_path, cache=tmp_path / "does-not-exist")
    assert {warning.filename for warning in [*record, *fold_record]} == {__file__}


def test_a_cache_that_is_no_flag_or_path_is_refused_by_name_and_a_numpy_bool_is_a_flag(tmp_path):
    path = write(tmp_path, "2 qid:3 1:0.25\n")
    for cache in (None, 0, 1.5):  # None reached Path() as a bare TypeError
        with pytest.raises(ValueError, match="cache must be True, False or a directory path; got"):
            load_letor(path, cache=cache)
    load_letor(path, cache=np.True_)
    assert (tmp_path / "data.txt.forestrank-cache.npz").exists()  # beside the file, as cache=True


def test_fold_loader_aligns_feature_counts(tmp_path):
    write(tmp_path, "1 qid:1 1:0.5 4:1\n", name="train.txt")
    write(tmp_path, "1 qid:2 2:0.5\n", name="vali.txt")
    write(tmp_path, "0 qid:3 1:0.1\n", name="test.txt")
    fold = load_letor_fold(tmp_path)
    assert [split[0].shape for split in fold] == [(1, 4), (1, 4), (1, 4)]
    np.testing.assert_array_equal(fold.vali[0], [[0, 0.5, 0, 0]])
    (tmp_path / "vali.txt").unlink()
    with pytest.raises(FileNotFoundError, match="vali.txt"):
        load_letor_fold(tmp_path)


def test_make_ranking_shapes_determinism_and_label_distribution():
    X, y, qid = make_ranking(n_queries=300, docs_per_query=(5, 40), n_features=12, n_grades=5, random_state=3)
    assert X.shape == (len(y), 12) and X.dtype == np.float64
    assert y.dtype == np.int64 and qid.dtype == np.int64
    sizes = np.unique(qid, return_counts=True)[1]
    assert len(sizes) == 300 and sizes.min() >= 5 and sizes.max() <= 40
    counts = np.bincount(y, minlength=5)
    assert counts[0] > counts[1] > counts[2] > counts[3] > counts[4] > 0
    per_query_max = np.array([y[qid == q].max() for q in np.unique(qid)])
    assert (per_query_max == 0).any() and (per_query_max > 0).any()
    again = make_ranking(n_queries=300, docs_per_query=(5, 40), n_features=12, n_grades=5, random_state=3)
    for first, second in zip((X, y, qid), again):
        np.testing.assert_array_equal(first, second)


def test_make_ranking_shuffle_permutes_rows_and_fixed_sizes():
    plain = make_ranking(n_queries=20, docs_per_query=7, random_state=0)
    shuffled = make_ranking(n_queries=20, docs_per_query=7, random_state=0, shuffle=True)
    assert np.bincount(plain[2]).tolist() == [7] * 20
    assert not np.array_equal(plain[2], shuffled[2])
    assert sorted(map(tuple, plain[0])) == sorted(map(tuple, shuffled[0]))


def test_make_ranking_is_learnable_beyond_a_random_order():
    X, y, qid = make_ranking(n_queries=200, n_features=9, random_state=1)
    best = DummyRanker().fit(X, y, qid=qid).score(X, y, qid=qid)
    random_order = DummyRanker(strategy="constant").fit(X, y, qid=qid).score(X, y, qid=qid)
    assert best > random_order + 0.05


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_queries": 0}, "n_queries must be an integer >= 1"),
        ({"docs_per_query": (5, 2)}, "1 <= low <= high"),
        ({"docs_per_query": "many"}, "docs_per_query must be an int or a"),
        ({"n_grades": 1}, "n_grades must be an integer >= 2"),
        ({"n_features": 3, "n_informative": 4}, "n_informative=4 exceeds n_features=3"),
        ({"noise": -1.0}, "noise must be a finite number >= 0"),
        # NaN and inf gave every row one grade; a pair of non-integers was truncated or overflowed.
        ({"noise": np.nan}, "noise must be a finite number >= 0"),
        ({"noise": np.inf}, "noise must be a finite number >= 0"),
        ({"docs_per_query": (2.7, 3.9)}, r"docs_per_query must be an int or a \(low, high\) pair of ints"),
        ({"docs_per_query": ("2", "3")}, r"docs_per_query must be an int or a \(low, high\) pair of ints"),
        ({"docs_per_query": (5, float("inf"))}, r"docs_per_query must be an int or a \(low, high\) pair of ints"),
        ({"docs_per_query": (1, True)}, r"docs_per_query must be an int or a \(low, high\) pair of ints"),
        # the string "False" shuffled
        ({"shuffle": "False"}, "shuffle must be True or False; got 'False'"),
    ],
)
def test_make_ranking_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_ranking(**kwargs)


@pytest.mark.parametrize("missing", ["mcar", "mnar"])
def test_make_ranking_hides_the_asked_fraction_of_the_informative_values(missing):
    X, y, _ = make_ranking(
        n_queries=400, n_features=12, n_informative=4, missing_fraction=0.3, missing=missing, random_state=0
    )
    complete, _, _ = make_ranking(n_queries=400, n_features=12, n_informative=4, random_state=0)
    hidden = np.isnan(X)
    affected = hidden.any(axis=0)
    assert affected.sum() == 4  # the informative features only
    assert hidden[:, affected].mean() == pytest.approx(0.3, abs=0.01)
    np.testing.assert_array_equal(X[~hidden], complete[~hidden])  # the present values are the same
    by_grade = [hidden[y == grade][:, affected].mean() for grade in (0, 3)]
    if missing == "mcar":
        assert by_grade[0] == pytest.approx(by_grade[1], abs=0.05)
    else:  # absent mostly from the less relevant documents
        assert by_grade[0] > 0.4 > 0.1 > by_grade[1]


@pytest.mark.parametrize(
    "kwargs, message",
    [({"missing_fraction": 1.0}, "missing_fraction must be a number in"), ({"missing": "mar"}, "missing must be")],
)
def test_make_ranking_rejects_bad_missing_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_ranking(n_queries=5, **kwargs)


def test_load_letor_absent_features_as_missing_values_and_float32(tmp_path):
    path = write(tmp_path, "2 qid:1 1:0.5 3:0 # a listed zero stays 0\n0 qid:1 2:1.25\n1 qid:2 1:0.1 2:3 3:7\n")
    X, y, qid = load_letor(path)
    X_nan, _, _ = load_letor(path, absent=np.nan, dtype=np.float32, cache=tmp_path)
    assert X_nan.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(X_nan), [[False, True, False], [True, False, True], [False, False, False]])
    present = ~np.isnan(X_nan)
    np.testing.assert_array_equal(X_nan[present], X[present].astype(np.float32))
    # The parsed copy is keyed by the arguments too: the default comes back dense float64, zeros.
    again, _, _ = load_letor(path, cache=tmp_path)
    np.testing.assert_array_equal(again, X)
    assert again.dtype == np.float64


@pytest.mark.parametrize("sparse", [False, True])
def test_a_value_beyond_float32_is_refused_with_its_line_not_stored_as_infinity(tmp_path, sparse):
    largest = float(np.finfo(np.float32).max)
    path = write(tmp_path, f"1 qid:1 1:1 2:{largest!r}\n0 qid:1 1:1e39 2:1\n")
    with pytest.raises(ValueError, match=r"data.txt:2: feature 1 is 1e39, beyond float32's range"):
        load_letor(path, dtype=np.float32, sparse=sparse)
    X, _, _ = load_letor(path, sparse=sparse)  # float64 holds it
    assert X[1, 0] == 1e39


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"absent": 1.0}, "absent must be 0.0 or numpy.nan"),
        ({"dtype": np.int32}, "dtype must be numpy.float64"),
        # scikit-learn's zero_based="auto", or a string, read as True: every column shifted
        ({"zero_based": "auto"}, "zero_based must be True or False; got 'auto'"),
        ({"zero_based": "False"}, "zero_based must be True or False; got 'False'"),
        ({"sparse": "no"}, "sparse must be True or False; got 'no'"),
    ],
)
def test_load_letor_rejects_other_absent_values_and_dtypes(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        load_letor(write(tmp_path, "1 qid:1 1:2\n"), **kwargs)


def test_load_letor_sparse_equals_dense(tmp_path):
    # a blank line, explicit zeros, a number off the parser's exact path (23 digits)
    text = "".join(f"{i % 3} qid:{i // 4} {1 + i % 5}:{i * 0.5} 7:1.2345678901234567890123\n" + ("\n" if i == 4 else "") for i in range(11))
    path = write(tmp_path, text)
    X, y, qid = load_letor(path, dtype=np.float32)
    X_sparse, y_sparse, qid_sparse = load_letor(path, sparse=True, dtype=np.float32, cache=tmp_path)
    assert scipy.sparse.isspmatrix_csr(X_sparse) and X_sparse.dtype == np.float32
    np.testing.assert_array_equal(X_sparse.toarray(), X)
    np.testing.assert_array_equal(y_sparse, y)
    np.testing.assert_array_equal(qid_sparse, qid)
    cached, _, _ = load_letor(path, sparse=True, dtype=np.float32, cache=tmp_path)
    np.testing.assert_array_equal(cached.toarray(), X)
    with pytest.raises(ValueError, match="absent=nan needs a dense X"):
        load_letor(path, sparse=True, absent=np.nan)


def test_load_letor_sparse_reports_the_file_line_of_a_bad_number(tmp_path):
    path = write(tmp_path, "1 qid:1 1:2\n0 qid:1 1:3\n1 qid:2 1:4\n0 qid:2 1:1.2.3\n")
    with pytest.raises(ValueError, match=r"data.txt:4: cannot parse '1.2.3'"):
        load_letor(path, sparse=True)


def test_a_sparse_file_with_a_huge_feature_index_loads_as_its_entries(tmp_path, monkeypatch):
    """sparse=True filled dense blocks of lines: 2,000 lines and one "3000000:1" asked
    for 44.7 GiB. It holds the entries only, as scikit-learn's reader does."""
    lines = [f"{i % 3} qid:{i // 20} 1:{i % 7} 5:0.5" for i in range(2000)]
    lines[1234] += " 3000000:1"
    path = write(tmp_path, "\n".join(lines) + "\n")
    tracemalloc.start()
    X, y, qid = load_letor(path, sparse=True)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 10 * 2**20
    reference, reference_y, reference_qid = load_svmlight_file(str(path), query_id=True)
    assert X.shape == (2000, 3_000_000) == reference.shape
    assert (X != reference).nnz == 0
    np.testing.assert_array_equal(y, reference_y)
    np.testing.assert_array_equal(qid, reference_qid)
    monkeypatch.setattr(datasets_module, "_available_memory", lambda: 16.0 * 2**30)  # checked before allocating
    with pytest.raises(MemoryError, match=r"a dense X of 2000 rows x 3000000 features \(44.7 GiB\).*sparse=True"):
        load_letor(path)


def test_a_dense_x_is_checked_against_the_memory_available_not_the_machines(tmp_path, monkeypatch):
    """The check compared the dense X with the machine's whole memory: one that fits the
    machine but not what is free was allocated lazily, filled page by page, and the
    process was killed instead of the MemoryError that says to load sparse."""
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemFree:          500000 kB\nMemAvailable:       1024 kB\n")
    monkeypatch.setattr(datasets_module, "_MEMINFO", str(meminfo))
    assert datasets_module._available_memory() == 1024 * 1024
    path = write(tmp_path, "1 qid:1 200000:0.5\n0 qid:1 1:1\n")  # 2 x 200,000 float64: 3.1 MB
    with pytest.raises(MemoryError, match=r"a dense X of 2 rows x 200000 features \(0.0 GiB\).*sparse=True"):
        load_letor(path)
    assert load_letor(path, sparse=True)[0].shape == (2, 200000)
    meminfo.write_text("MemTotal: 24000000 kB\n")  # no MemAvailable (an old kernel): the machine's memory
    assert datasets_module._available_memory() >= 2**20 and load_letor(path)[0].shape == (2, 200000)


def test_make_ranking_of_one_document_draws_a_grade_without_a_warning():
    """One document's latent score has no spread: dividing by it warned and made it NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, y, qid = make_ranking(n_queries=1, docs_per_query=1, n_grades=3, random_state=0)
    assert X.shape == (1, 20) and np.isfinite(X).all() and 0 <= y[0] < 3 and qid.tolist() == [0]
