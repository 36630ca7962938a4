"""Linear-time parser of LETOR / svmlight text (``label qid:Q i:v ... # comment``).

scikit-learn's ``load_svmlight_file`` parses about 13k LETOR rows per second here and
is reported quadratic with ``query_id=True`` on older versions (``docs/design.md``, "Data").
This parser walks the raw bytes once to size the output and once to fill it, a dense
matrix or the arrays of a CSR matrix, all in one numba kernel (``fill=False`` /
``fill=True``, ``to_csr``): a sparse file is never held dense.

Numbers are converted with the exact fast path of Clinger ("How to read floating point
numbers accurately", PLDI 1990): a decimal mantissa ``m <= 2**53`` and a power of ten
``10**e`` with ``|e| <= 22`` are both exact doubles, so one IEEE multiplication or
division gives the correctly rounded value, identical to ``float()``. Any other token
(long mantissas, large exponents, ``nan``, malformed text) is recorded and converted
by Python's ``float`` afterwards, which either parses it exactly or raises with its
line number.
"""

import numpy as np

from .._numba.jit import jit

OK = 0
ERROR_TOKEN = 1
ERROR_INDEX = 2
ERROR_ZERO_INDEX = 3
ERROR_UNSORTED = 4
ERROR_QID = 5
ERROR_COLUMN = 6
ERROR_LABEL = 7
ERROR_WIDTH = 8

ERROR_MESSAGES = {
    ERROR_TOKEN: "expected 'index:value' or 'qid:id'",
    ERROR_INDEX: "feature index is not a non-negative integer",
    ERROR_ZERO_INDEX: "feature index 0 in a 1-based file (pass zero_based=True for 0-based indices)",
    ERROR_UNSORTED: "feature indices must be strictly increasing within a line",
    ERROR_QID: "qid must be an integer of int64 (at most 2**63 - 1), given once, right after the label",
    ERROR_COLUMN: "feature index exceeds n_features",
    ERROR_LABEL: "the line must start with its label (a number), not 'index:value'",
    ERROR_WIDTH: "feature index 2**63 - 1 in a 0-based file: the width it needs, 2**63 columns, exceeds int64",
}
_LARGEST_INDEX = np.iinfo(np.int64).max

# Exact powers of ten (Python parses these literals exactly).
_POWERS_OF_TEN = np.array([10.0**i for i in range(23)])
_MAX_EXACT_MANTISSA = 2**53
_NEWLINE, _HASH, _COLON, _DOT, _MINUS, _PLUS = 10, 35, 58, 46, 45, 43
SLOW_FIELDS = 6  # row, column (-1 = label), token start, token end, line number, CSR entry (-1 = none)


@jit(inline="always")
def _is_space(byte):
    return byte == 32 or byte == 9 or byte == 13 or byte == 11 or byte == 12


@jit(inline="always")
def _skip_spaces(buffer, position, end):
    while position < end and _is_space(buffer[position]):
        position += 1
    return position


@jit(inline="always")
def _token_end(buffer, position, end):
    while position < end and not _is_space(buffer[position]):
        position += 1
    return position


_INT64_MAX = 2**63 - 1


@jit(inline="always")
def _parse_int(buffer, start, end):
    """Parse ``[+-]digits``; returns (value, ok)."""
    negative = False
    if start < end and (buffer[start] == _MINUS or buffer[start] == _PLUS):
        negative = buffer[start] == _MINUS
        start += 1
    if start >= end or end - start > 19:
        return 0, False
    value = 0
    for position in range(start, end):
        # int(): interpreted (NUMBA_DISABLE_JIT) uint8 arithmetic would wrap at 256.
        digit = int(buffer[position]) - 48
        if digit < 0 or digit > 9:
            return 0, False
        if value > (_INT64_MAX - digit) // 10:  # 19 digits may pass int64's largest
            return 0, False
        value = value * 10 + digit
    return (-value if negative else value), True


@jit(inline="always")
def _parse_float(buffer, start, end):
    """Parse a decimal number on the exact fast path; returns (value, ok).

    ``ok`` is False when the token is not a plain decimal or falls outside the exact
    path; the caller then defers it to Python's ``float``.
    """
    position = start
    negative = False
    if position < end and (buffer[position] == _MINUS or buffer[position] == _PLUS):
        negative = buffer[position] == _MINUS
        position += 1
    mantissa = 0
    exponent = 0
    n_digits = 0
    seen_dot = False
    while position < end:
        byte = int(buffer[position])
        if 48 <= byte <= 57:
            if mantissa > _MAX_EXACT_MANTISSA // 10:
                return 0.0, False
            mantissa = mantissa * 10 + (byte - 48)
            n_digits += 1
            if seen_dot:
                exponent -= 1
        elif byte == _DOT and not seen_dot:
            seen_dot = True
        else:
            break
        position += 1
    if n_digits == 0:
        return 0.0, False
    if position < end:
        if buffer[position] != 101 and buffer[position] != 69:  # 'e' / 'E'
            return 0.0, False
        power, ok = _parse_int(buffer, position + 1, end)
        if not ok:
            return 0.0, False
        exponent += power
    if mantissa > _MAX_EXACT_MANTISSA:
        return 0.0, False
    value = float(mantissa)
    if mantissa != 0:
        if 0 <= exponent <= 22:
            value = value * _POWERS_OF_TEN[exponent]
        elif -22 <= exponent < 0:
            value = value / _POWERS_OF_TEN[-exponent]
        else:
            return 0.0, False
    return (-value if negative else value), True


@jit(inline="always")
def _defer(slow, n_slow, row, column, start, end, line, entry):
    """Record a token for Python's ``float``; returns the new count (kept past capacity)."""
    if n_slow < len(slow):
        slow[n_slow, 0] = row
        slow[n_slow, 1] = column
        slow[n_slow, 2] = start
        slow[n_slow, 3] = end
        slow[n_slow, 4] = line
        slow[n_slow, 5] = entry
    return n_slow + 1


@jit(inline="always")
def _line_bounds(buffer, position, n_bytes):
    """The end of the line that starts at ``position`` (its newline, or ``n_bytes``, the
    buffer's end: passed, because numba would read the array's length at every byte)
    and the end of its data (its first ``#``, or the line's end)."""
    line_end = position
    while line_end < n_bytes and buffer[line_end] != _NEWLINE:
        line_end += 1
    data_end = position
    while data_end < line_end and buffer[data_end] != _HASH:
        data_end += 1
    return line_end, data_end


@jit(inline="always")
def _read_label(buffer, cursor, token_end, fill, row, line, y, slow, n_slow):
    """The line's first token, its label, into ``y[row]`` (or deferred); returns
    ``(status, n_slow)``."""
    for label_byte in range(cursor, token_end):
        if buffer[label_byte] == _COLON:
            return ERROR_LABEL, n_slow
    if fill:
        value, ok = _parse_float(buffer, cursor, token_end)
        if ok:
            y[row] = value
        else:
            n_slow = _defer(slow, n_slow, row, -1, cursor, token_end, line, -1)
    return OK, n_slow


@jit(inline="always")
def _read_feature(
    buffer, cursor, colon, token_end, fill, zero_based, row, line, previous_column, X, slow, n_slow, to_csr, indices,
    data, entry,
):  # fmt: skip
    """One ``index:value`` token into ``X[row]`` or CSR entry ``entry`` (or deferred);
    returns ``(status, column, n_slow)``."""
    index, ok = _parse_int(buffer, cursor, colon)
    if not ok or index < 0:
        return ERROR_INDEX, previous_column, n_slow
    column = index if zero_based else index - 1
    if column < 0:
        return ERROR_ZERO_INDEX, previous_column, n_slow
    if column == _LARGEST_INDEX:  # the width, column + 1, would wrap around
        return ERROR_WIDTH, previous_column, n_slow
    if column <= previous_column:
        return ERROR_UNSORTED, previous_column, n_slow
    if fill:
        if not to_csr and column >= X.shape[1]:
            return ERROR_COLUMN, column, n_slow
        value, ok = _parse_float(buffer, colon + 1, token_end)
        if to_csr:
            indices[entry] = column
            data[entry] = value
        elif ok:
            X[row, column] = value
        if not ok:
            n_slow = _defer(slow, n_slow, row, column, colon + 1, token_end, line, entry if to_csr else -1)
    return OK, column, n_slow


@jit(inline="always")
def _is_qid(buffer, cursor, colon):
    """Whether the token's name, ``buffer[cursor:colon]``, is ``qid``."""
    return colon - cursor == 3 and buffer[cursor] == 113 and buffer[cursor + 1] == 105 and buffer[cursor + 2] == 100


@jit(refcounted=False, callable_from_python=False)
def _read_line(
    buffer, cursor, data_end, fill, zero_based, row, line, X, y, qid, slow, n_slow, to_csr, indices, data, entry,
    n_columns,
):  # fmt: skip
    """One data line, from its label at ``cursor`` to ``data_end``: the label, an optional
    ``qid:``, then ``index:value`` tokens with increasing indices.

    Returns
    -------
    status, n_columns, has_qid, n_slow, entry
        ``OK`` or an ``ERROR_*`` code, and the running counts after the line.
    """
    has_qid = False
    token_end = _token_end(buffer, cursor, data_end)
    status, n_slow = _read_label(buffer, cursor, token_end, fill, row, line, y, slow, n_slow)
    if status != OK:
        return status, n_columns, has_qid, n_slow, entry
    cursor = _skip_spaces(buffer, token_end, data_end)
    previous_column = -1
    while cursor < data_end:
        token_end = _token_end(buffer, cursor, data_end)
        colon = cursor
        while colon < token_end and buffer[colon] != _COLON:
            colon += 1
        if colon == token_end:
            return ERROR_TOKEN, n_columns, has_qid, n_slow, entry
        if _is_qid(buffer, cursor, colon):
            query, ok = _parse_int(buffer, colon + 1, token_end)
            if not ok or has_qid or previous_column >= 0:
                return ERROR_QID, n_columns, has_qid, n_slow, entry
            has_qid = True
            if fill:
                qid[row] = query
        else:
            status, previous_column, n_slow = _read_feature(
                buffer, cursor, colon, token_end, fill, zero_based, row, line, previous_column, X, slow, n_slow, to_csr,
                indices, data, entry,
            )  # fmt: skip
            n_columns = max(n_columns, previous_column + 1)
            if status != OK:
                return status, n_columns, has_qid, n_slow, entry
            entry += 1
        cursor = _skip_spaces(buffer, token_end, data_end)
    return OK, n_columns, has_qid, n_slow, entry


@jit
def parse_svmlight(buffer, fill, zero_based, X, y, qid, slow, to_csr, indptr, indices, data):
    """Scan (``fill=False``) or parse (``fill=True``) svmlight text, one line at a time
    (``_read_line``).

    Parameters
    ----------
    buffer : uint8 array of shape (n_bytes,)
        The file's bytes.
    fill : bool
        False: only count rows and find the largest feature index. True: write
        ``X``, ``y`` and ``qid``.
    zero_based : bool
        Feature indices start at 0 (else at 1, the LETOR convention).
    X : float64 or float32 array of shape (n_rows, n_features), zero-initialised
        Output features (ignored when ``fill`` is False or ``to_csr`` is True).
    y : float64 array of shape (n_rows,)
        Output labels.
    qid : int64 array of shape (n_rows,)
        Output query ids (rows without ``qid:`` keep their value).
    slow : int64 array of shape (capacity, 6)
        Output: tokens left to Python as (row, column or -1 for the label, start,
        end, line number, CSR entry or -1).
    to_csr : bool
        Fill ``indptr``, ``indices`` and ``data`` (a CSR matrix, the listed
        entries in file order) instead of ``X``.
    indptr : int64 array of shape (n_rows + 1,)
        Output: row ``r``'s entries are ``indptr[r]:indptr[r + 1]`` (``indptr[0]``,
        0, is left as given).
    indices : int64 array of shape (n_entries,)
        Output: each entry's column.
    data : float64 or float32 array of shape (n_entries,)
        Output: each entry's value.

    Returns
    -------
    status : int
        ``OK`` or an ``ERROR_*`` code.
    line : int
        1-based line of the error (0 when OK).
    n_rows : int
        Data lines (lines that are blank or only a comment do not count).
    n_columns : int
        Largest column index + 1.
    n_qid_rows : int
        Rows that carry a ``qid:``.
    n_slow : int
        Deferred tokens; may exceed ``len(slow)``, in which case the caller retries
        with a larger array.
    n_entries : int
        ``index:value`` tokens.
    """
    n_bytes = len(buffer)
    position = 0
    line = 0
    # The counters handed to ``_read_line`` start as np.int64: a literal 0 would compile
    # it a second time, for Literal[int](0) (``docs/design.md``, "Numba rules").
    row = np.int64(0)
    n_columns = np.int64(0)
    n_qid_rows = 0
    n_slow = np.int64(0)
    entry = np.int64(0)
    while position < n_bytes:
        line += 1
        line_end, data_end = _line_bounds(buffer, position, n_bytes)
        cursor = _skip_spaces(buffer, position, data_end)
        if cursor < data_end:
            status, n_columns, has_qid, n_slow, entry = _read_line(
                buffer, cursor, data_end, fill, zero_based, row, line, X, y, qid, slow, n_slow, to_csr, indices, data,
                entry, n_columns,
            )  # fmt: skip
            if status != OK:
                return status, line, row, n_columns, n_qid_rows, n_slow, entry
            n_qid_rows += has_qid
            row += 1
            if fill and to_csr:
                indptr[row] = entry
        position = line_end + 1
    return OK, 0, row, n_columns, n_qid_rows, n_slow, entry
