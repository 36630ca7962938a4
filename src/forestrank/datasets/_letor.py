"""LETOR/svmlight files with query ids.

:func:`load_letor` reads ``label qid:Q 1:v1 2:v2 ... # comment`` files (LETOR 3.0/4.0,
MSLR-WEB, Istella, Yahoo! LTR) in time linear in the file size, and the svmlight
variant without ``qid:`` whose query sizes sit in a ``<file>.query`` companion (one
group size per line, the LightGBM/RankLib convention); the parser is
``_svmlight.parse_svmlight``.
"""

import bz2
import gzip
import hashlib
import os
import warnings
import zipfile
import zlib
from numbers import Real
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse

from .._input.features import FEATURE_DTYPES
from .._input.labels import check_flag, check_positive_int
from .._input.queries import stacklevel_outside_package
from .._numba.dtypes import FLOAT_DTYPE, INDEX_DTYPE
from . import _svmlight

_CACHE_FORMAT = 3
_MEMINFO = "/proc/meminfo"
_INITIAL_SLOW_CAPACITY = 1024
# Deferred tokens converted a chunk at a time (_store_deferred): a bound on the memory
# their Python objects take beside the file.
_DEFERRED_CHUNK = 1 << 20

PathLike = str | os.PathLike


class LetorFold(NamedTuple):
    """The three splits of a LETOR fold, each a ``(X, y, qid)`` tuple."""

    train: tuple[np.ndarray, np.ndarray, np.ndarray]
    vali: tuple[np.ndarray, np.ndarray, np.ndarray]
    test: tuple[np.ndarray, np.ndarray, np.ndarray]


_BYTE_ORDER_MARK = b"\xef\xbb\xbf"


def _read_bytes(path: Path) -> np.ndarray:
    """The file's bytes (gzip and bz2 decompressed), without a leading UTF-8 byte order mark.
    A pipe (a shell's process substitution, a FIFO) is read as a stream: numpy's
    ``fromfile`` asks for a file position, which a pipe has not."""
    suffix = path.suffix.lower()  # DATA.TXT.GZ from a case-insensitive file system
    if suffix in (".gz", ".bz2"):
        opener = gzip.open if suffix == ".gz" else bz2.open
        try:
            with opener(path, "rb") as handle:
                buffer = np.frombuffer(bytearray(handle.read()), dtype=np.uint8)
        except (EOFError, OSError, ValueError, zlib.error) as error:  # truncated or corrupt: each module its own error
            if isinstance(error, OSError) and error.errno is not None:  # the system's: a missing file, a disk error
                raise
            raise ValueError(f"{path}: not a readable {suffix[1:]} file ({error}).") from None
    elif path.is_file():
        buffer = np.fromfile(path, dtype=np.uint8)
    else:
        with open(path, "rb") as handle:
            buffer = np.frombuffer(bytearray(handle.read()), dtype=np.uint8)
    if buffer[: len(_BYTE_ORDER_MARK)].tobytes() == _BYTE_ORDER_MARK:
        return buffer[len(_BYTE_ORDER_MARK) :]
    return buffer


def _parse(path: Path, buffer: np.ndarray, zero_based: bool, slow: np.ndarray, outputs: tuple | None = None):
    """Run the parser kernel: a counting scan when ``outputs`` is None, else fill them:
    ``(X, y, qid)`` for a dense ``X``, ``(indptr, indices, data, y, qid)`` for a CSR one."""
    no_index = np.zeros(0, dtype=INDEX_DTYPE)
    if outputs is None:
        fill, to_csr = False, False
        X, y, qid, indptr, indices, data = np.zeros((0, 0)), np.zeros(0), no_index, no_index, no_index, np.zeros(0)
    elif len(outputs) == 3:
        fill, to_csr = True, False
        X, y, qid = outputs
        indptr, indices, data = no_index, no_index, np.zeros(0, dtype=X.dtype)
    else:
        fill, to_csr = True, True
        indptr, indices, data, y, qid = outputs
        X = np.zeros((0, 0), dtype=data.dtype)
    status, line, n_rows, n_columns, n_qid_rows, n_slow, n_entries = _svmlight.parse_svmlight(
        buffer, fill, zero_based, X, y, qid, slow, to_csr, indptr, indices, data
    )
    if status != _svmlight.OK:
        raise ValueError(f"{path}:{line}: {_svmlight.ERROR_MESSAGES[status]}.")
    return n_rows, n_columns, n_qid_rows, n_slow, n_entries


def _parse_file(
    path: Path, n_features: int | None, zero_based: bool, absent: float = 0.0, dtype: type = FLOAT_DTYPE,
    sparse: bool = False,
) -> tuple[np.ndarray | scipy.sparse.csr_matrix, np.ndarray, np.ndarray | None]:  # fmt: skip
    buffer = _read_bytes(path)
    no_slow = np.zeros((0, _svmlight.SLOW_FIELDS), dtype=INDEX_DTYPE)
    n_rows, n_columns, n_qid_rows, _, n_entries = _parse(path, buffer, zero_based, no_slow)
    if n_rows == 0:
        raise ValueError(f"{path} holds no data rows.")
    if n_features is not None and n_columns > n_features:
        largest = n_columns - 1 if zero_based else n_columns  # the index as the file writes it
        raise ValueError(f"{path} has feature index {largest} but n_features={n_features}.")
    if 0 < n_qid_rows < n_rows:
        raise ValueError(f"{path}: only {n_qid_rows} of {n_rows} rows carry a qid:; either all or none must.")
    width = n_columns if n_features is None else n_features
    y = np.zeros(n_rows, dtype=FLOAT_DTYPE)
    qid = np.zeros(n_rows, dtype=INDEX_DTYPE)
    if sparse:  # the listed entries only: never a dense copy of the file
        indptr = np.zeros(n_rows + 1, dtype=INDEX_DTYPE)
        indices = np.empty(n_entries, dtype=INDEX_DTYPE)
        data = np.empty(n_entries, dtype=dtype)
        _fill(path, buffer, zero_based, (indptr, indices, data, y, qid))
        X = scipy.sparse.csr_matrix((data, indices, indptr), shape=(n_rows, width))
        X.eliminate_zeros()  # "i:0" tokens are absent entries, as in a dense X
    else:
        X = _dense_features(path, n_rows, width, absent, dtype)
        _fill(path, buffer, zero_based, (X, y, qid))
    return X, y, (qid if n_qid_rows else None)


def _dense_features(path: Path, n_rows: int, width: int, absent: float, dtype: type) -> np.ndarray:
    """``X`` full of ``absent``, or a MemoryError saying to load sparse when it cannot fit.

    Checked against the memory available before allocating: an allocation the system
    grants lazily would be filled page by page until the process is killed.
    """
    size = n_rows * width * np.dtype(dtype).itemsize
    message = (
        f"{path}: a dense X of {n_rows} rows x {width} features ({size / 2**30:.1f} GiB) does not fit in memory; "
        "load it with sparse=True (the file's entries only)."
    )
    if size > _available_memory():
        raise MemoryError(message)
    try:
        return np.full((n_rows, width), absent, dtype=dtype)
    except MemoryError:
        raise MemoryError(message) from None


def _available_memory() -> float:
    """Bytes of memory a new allocation can have: Linux's ``MemAvailable`` (free memory and
    the cache it can reclaim), else the machine's memory, inf where the system says neither."""
    try:
        with open(_MEMINFO) as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024  # in kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return float("inf")


def _fill(path: Path, buffer: np.ndarray, zero_based: bool, outputs: tuple) -> None:
    """Parse ``buffer`` into ``outputs`` (``_parse``'s), the tokens off the parser's exact
    fast path converted by Python's ``float``."""
    slow = np.zeros((_INITIAL_SLOW_CAPACITY, _svmlight.SLOW_FIELDS), dtype=INDEX_DTYPE)
    n_slow = _parse(path, buffer, zero_based, slow, outputs)[3]
    if n_slow > len(slow):  # numbers off the exact fast path: a file of 17-digit floats holds many
        slow = np.zeros((n_slow, _svmlight.SLOW_FIELDS), dtype=INDEX_DTYPE)
        _parse(path, buffer, zero_based, slow, outputs)
    if n_slow and not _store_deferred(buffer, slow[:n_slow], outputs):
        _store_deferred_one_by_one(path, buffer, zero_based, slow[:n_slow], outputs)


def _store_deferred(buffer: np.ndarray, slow: np.ndarray, outputs: tuple) -> bool:
    """The deferred tokens (``slow``: ``_svmlight.SLOW_FIELDS`` per token) converted by
    Python's ``float`` and stored at once; False, nothing stored, where one of them is
    not to be stored (not a number, infinite, a NaN label, past float32's range), for
    ``_store_deferred_one_by_one`` to say which."""
    view = memoryview(buffer)  # a slice of it copies the token alone, and costs less than a numpy slice
    values = np.empty(len(slow))
    for first in range(0, len(slow), _DEFERRED_CHUNK):  # Python's objects for a chunk of tokens at a time
        chunk = slow[first : first + _DEFERRED_CHUNK]
        tokens = [bytes(view[start:end]) for start, end in zip(chunk[:, 2].tolist(), chunk[:, 3].tolist())]
        if b"_" in b"".join(tokens):  # Python's float reads "1_000"; no LETOR tool does
            return False
        try:
            values[first : first + len(chunk)] = np.fromiter(map(float, tokens), dtype=np.float64, count=len(tokens))
        except ValueError:
            return False
    rows, columns, entries = slow[:, 0], slow[:, 1], slow[:, 5]
    labels = columns < 0
    features = outputs[2] if len(outputs) == 5 else outputs[0]
    if np.isinf(values).any() or np.isnan(values[labels]).any():
        return False
    if features.dtype == np.float32:
        with np.errstate(over="ignore"):
            if np.isinf(values[~labels].astype(np.float32)).any():
                return False
    outputs[-2][rows[labels]] = values[labels]
    in_csr, in_dense = ~labels & (entries >= 0), ~labels & (entries < 0)
    if in_csr.any():
        outputs[2][entries[in_csr]] = values[in_csr]
    if in_dense.any():
        outputs[0][rows[in_dense], columns[in_dense]] = values[in_dense]
    return True


def _store_deferred_one_by_one(path: Path, buffer: np.ndarray, zero_based: bool, slow: np.ndarray, outputs: tuple) -> None:
    """``_store_deferred`` token by token, raising at the first token that is not to be stored."""
    y = outputs[-2]
    features = outputs[2] if len(outputs) == 5 else outputs[0]
    for row, column, start, end, line, entry in slow:
        text = buffer[start:end].tobytes()
        try:
            if b"_" in text:  # Python's float reads "1_000"; no LETOR tool does
                raise ValueError
            value = float(text)
        except ValueError:
            raise ValueError(f"{path}:{line}: cannot parse {text.decode(errors='replace')!r} as a number.") from None
        index = column if zero_based else column + 1  # as the file numbers it
        if np.isinf(value) or (column < 0 and np.isnan(value)):
            what = "a label" if column < 0 else f"feature {index}"
            allowed = "finite" if column < 0 else "finite, or nan for a missing value"
            raise ValueError(f"{path}:{line}: {what} is {text.decode()}; it must be {allowed}.")
        # The exact fast path reads at most 2**53 * 10**22, inside float32's range: only a
        # deferred token can round to float32's infinity.
        if column >= 0 and features.dtype == np.float32 and _overflows_float32(value):
            raise ValueError(
                f"{path}:{line}: feature {index} is {text.decode()}, beyond float32's range; load the file with "
                "dtype=numpy.float64."
            )
        if column < 0:
            y[row] = value
        elif entry >= 0:
            outputs[2][entry] = value
        else:
            outputs[0][row, column] = value


def _overflows_float32(value: float) -> bool:
    with np.errstate(over="ignore"):
        return bool(np.isinf(np.float32(value)))


def _read_query_sizes(query_file: Path, n_rows: int) -> np.ndarray:
    """Each row's query position from a ``.query`` file of query sizes, one per line."""
    try:
        text = query_file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{query_file}: not UTF-8 text (byte {error.start}); a query file holds query sizes.") from None
    sizes = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        size = line.strip()
        if not size:
            continue
        if not (size.isascii() and size.isdigit()) or not 1 <= int(size) <= n_rows:  # int() would take "1_0", "+3"
            raise ValueError(
                f"{query_file}:{line_number}: expected a query size (an integer from 1 to the data file's {n_rows} rows); "
                f"got {line!r}."
            )
        sizes.append(int(size))
    counts = np.array(sizes, dtype=INDEX_DTYPE)
    if counts.sum() != n_rows:
        raise ValueError(
            f"{query_file}: query sizes must sum to the {n_rows} rows of the data file; they sum to {counts.sum()}."
        )
    return np.repeat(np.arange(len(counts), dtype=INDEX_DTYPE), counts)


def _read_cache(cache_file: Path, key: np.ndarray, sparse: bool) -> tuple | None:
    """The parsed copy's ``(X, y, qid)`` when it exists and was made from the same file
    and arguments (``key``), else None; a damaged copy (a write cut short, say) is None
    too: it is disposable, and the file is parsed again and the copy rewritten."""
    if not cache_file.exists():
        return None
    try:
        with np.load(cache_file) as stored:
            if not np.array_equal(stored["key"], key):
                return None
            if sparse:
                parts = (stored["data"], stored["indices"], stored["indptr"])
                return scipy.sparse.csr_matrix(parts, shape=tuple(stored["shape"])), stored["y"], stored["qid"]
            return stored["X"], stored["y"], stored["qid"]
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, zlib.error):
        return None


def _cache_file(path: Path, cache: bool | PathLike) -> Path:
    if cache is True:
        return path.with_name(path.name + ".forestrank-cache.npz")
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    return Path(cache) / f"{path.name}.{digest}.forestrank-cache.npz"


def _cache_key(
    path: Path, query_file: Path | None, n_features: int | None, zero_based: bool, absent: float, dtype: type
) -> np.ndarray:
    """What the parsed copy of ``path`` was made from: the format, the files' sizes and
    modification times, the query file's path (two query files unpacked together share
    their size and time) and the parsing arguments; int64 (10,)."""
    stat = path.stat()
    query_stat = query_file.stat() if query_file is not None else None
    # 7 bytes of the path's digest: a non-negative int64
    query_path = -1 if query_file is None else int.from_bytes(hashlib.sha1(str(query_file.resolve()).encode()).digest()[:7], "big")
    return np.array(
        [
            _CACHE_FORMAT,
            query_path,
            stat.st_size,
            stat.st_mtime_ns,
            -1 if n_features is None else n_features,
            int(zero_based),
            -1 if query_stat is None else query_stat.st_size,
            -1 if query_stat is None else query_stat.st_mtime_ns,
            int(np.isnan(absent)),
            np.dtype(dtype).itemsize,
        ],
        dtype=INDEX_DTYPE,
    )


def load_letor(
    path: PathLike,
    n_features: int | None = None,
    *,
    query_file: PathLike | None = None,
    zero_based: bool = False,
    cache: bool | PathLike = False,
    absent: float = 0.0,
    dtype: type = np.float64,
    sparse: bool = False,
) -> tuple[np.ndarray | scipy.sparse.csr_matrix, np.ndarray, np.ndarray]:
    """Load a LETOR / svmlight ranking file.

    Parameters
    ----------
    path : str or path-like
        Text file (optionally ``.gz`` or ``.bz2``, the suffix in any case), or a pipe
        (a FIFO, a shell's ``<(...)``) of plain text, with lines
        ``label [qid:Q] index:value ... [# comment]``; blank and comment-only lines
        are ignored; indices must increase within a line.
    n_features : int, default=None
        Number of columns of ``X``; ``None`` uses the largest index in the file.
        Give it to align files whose last features are all zero.
    query_file : str or path-like, default=None
        Group sizes, one per line, in file order, for files without ``qid:`` (an
        error for files with them). ``None`` uses ``<path>.query`` when the file
        has no ``qid:``.
    zero_based : bool, default=False
        Feature indices start at 0. LETOR and svmlight files are 1-based.
    cache : bool or path-like, default=False
        Keep a parsed ``.npz`` copy: ``True`` beside the file, or in the given
        directory. The copy is reused only while the file's size and modification
        time, the query file's path, size and time, and the arguments are unchanged
        (one copy per file: another query file replaces it); an unwritable location only warns,
        and so does a pipe, which is read without a copy.
    absent : {0.0, nan}, default=0.0
        The value of a feature a line does not list: 0 (svmlight's meaning), or NaN,
        a missing value the rankers learn a direction for (``docs/missing_values.md``).
        A feature listed with the value 0 is 0 either way.
    dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        Of ``X``; float32 halves its memory and the rankers use it as it is.
    sparse : bool, default=False
        Return ``X`` as a ``scipy.sparse.csr_matrix`` (the unlisted features are its
        absent entries, so ``absent`` must be 0), never holding the whole file dense.

    Returns
    -------
    X : ndarray or csr_matrix of shape (n_samples, n_features), float64 or float32
        The features; unlisted entries are ``absent``.
    y : ndarray of shape (n_samples,), float64
        Relevance labels.
    qid : ndarray of shape (n_samples,), int64
        Query id of each row (``0 .. n_groups-1`` when taken from a ``.query`` file).

    Raises
    ------
    ValueError
        Malformed lines (with file and line number), an index beyond
        ``n_features``, missing query information, query sizes that do not
        match the rows, or a ``.gz`` / ``.bz2`` file that is truncated or corrupt.
    """
    path = Path(path)
    if n_features is not None:
        n_features = check_positive_int("n_features", n_features)
    absent, dtype = _check_absent_and_dtype(absent, dtype)
    zero_based, sparse = check_flag("zero_based", zero_based), check_flag("sparse", sparse)
    if isinstance(cache, (bool, np.bool_)):
        cache = bool(cache)
    elif not isinstance(cache, (str, os.PathLike)):
        raise ValueError(f"cache must be True, False or a directory path; got {cache!r}.")
    if sparse and np.isnan(absent):
        raise ValueError("absent=nan needs a dense X: a sparse matrix's absent entries are 0; pass sparse=False.")
    explicit_query_file = query_file is not None
    companion = Path(str(path) + ".query")
    if query_file is None and companion.is_file():
        query_file = companion
    query_file = None if query_file is None else Path(query_file)

    cache_file = None
    piped = [file for file in (path, query_file) if file is not None and file.exists() and not file.is_file()]
    if cache is not False and piped:
        warnings.warn(
            f"{piped[0]} is no regular file (a pipe, say): the parsed copy is neither read nor written, since the copy "
            "is recognised by the files' sizes and modification times, which a pipe's content does not change.",
            UserWarning,
            stacklevel=stacklevel_outside_package(),
        )
    elif cache is not False:
        cache_file = _cache_file(path, cache)
        key = np.append(_cache_key(path, query_file, n_features, zero_based, absent, dtype), int(sparse))
        cached = _read_cache(cache_file, key, sparse)
        if cached is not None:
            return cached

    X, y, qid = _parse_file(path, n_features, zero_based, absent, dtype, sparse)
    if qid is not None and explicit_query_file:
        raise ValueError(f"{path} has qid: fields and query_file={str(query_file)!r} was also given; pass one of them.")
    if qid is None:
        if query_file is None:
            found = ""
            if companion.is_dir():
                found = f"; {companion} is a folder, not a file of query sizes"
            elif companion.exists():  # read only when asked for: a pipe's content is read once
                found = f"; {companion} is no regular file (a pipe?): pass it as query_file= to read it"
            raise ValueError(f"{path} has no qid: fields and no query file ({path}.query or query_file=...){found}.")
        qid = _read_query_sizes(query_file, len(y))

    if cache_file is not None:
        try:
            temporary = cache_file.with_name(cache_file.name + ".tmp.npz")
            if sparse:
                np.savez(
                    temporary, key=key, data=X.data, indices=X.indices, indptr=X.indptr, shape=X.shape, y=y, qid=qid
                )
            else:
                np.savez(temporary, key=key, X=X, y=y, qid=qid)
            os.replace(temporary, cache_file)
        except OSError as exc:
            warnings.warn(
                f"Could not write the parsed copy {cache_file}: {exc}", UserWarning, stacklevel=stacklevel_outside_package()
            )
    return X, y, qid


def load_letor_fold(
    folder: PathLike,
    n_features: int | None = None,
    *,
    cache: bool | PathLike = False,
    absent: float = 0.0,
    dtype: type = np.float64,
) -> LetorFold:
    """Load ``train.txt``, ``vali.txt`` and ``test.txt`` of a LETOR fold folder.

    The three matrices get the same number of columns (the largest index over the
    three files unless ``n_features`` is given).

    Parameters
    ----------
    folder : str or path-like
        E.g. ``.../MQ2008/Fold1``.
    n_features : int, default=None
        Number of columns.
    cache, absent, dtype :
        See :func:`load_letor`.

    Returns
    -------
    LetorFold
        Named tuple ``(train, vali, test)`` of ``(X, y, qid)`` tuples.
    """
    folder = Path(folder)
    paths = [folder / f"{split}.txt" for split in LetorFold._fields]
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        raise FileNotFoundError(f"LETOR fold files not found: {', '.join(missing)}")
    splits = [load_letor(path, n_features, cache=cache, absent=absent, dtype=dtype) for path in paths]
    width = max(X.shape[1] for X, _, _ in splits)
    padded = [(np.pad(X, ((0, 0), (0, width - X.shape[1])), constant_values=absent), y, qid) for X, y, qid in splits]
    return LetorFold(*padded)


def _check_absent_and_dtype(absent: object, dtype: object) -> tuple[float, type]:
    """``absent`` as 0.0 or NaN and ``dtype`` as np.float64 or np.float32, or a ValueError naming the argument."""
    if isinstance(absent, bool) or not isinstance(absent, Real) or not (absent == 0 or np.isnan(absent)):
        raise ValueError(f"absent must be 0.0 or numpy.nan; got {absent!r}.")
    try:
        kind = np.dtype(dtype).type
    except TypeError:
        kind = None
    if kind not in FEATURE_DTYPES:
        raise ValueError(f"dtype must be numpy.float64 or numpy.float32; got {dtype!r}.")
    return float(absent), kind
