"""Row ranges handed to threads by the row-wise kernels."""

from hypothesis import given
from hypothesis import strategies as st

from forestrank._parallel import row_ranges


@given(
    n_rows=st.integers(0, 5000),
    n_jobs=st.integers(1, 8),
    min_rows=st.integers(1, 600),
    align=st.sampled_from([1, 16, 256]),
)
def test_row_ranges_tile_the_rows_in_aligned_ranges(n_rows, n_jobs, min_rows, align):
    ranges = row_ranges(n_rows, n_jobs, min_rows, align)
    assert 1 <= len(ranges) <= max(1, min(n_jobs, n_rows // min_rows))
    assert ranges[0][0] == 0 and ranges[-1][1] == n_rows
    assert all(stop == start for (_, stop), (start, _) in zip(ranges, ranges[1:]))  # contiguous, no overlap
    assert all(start % align == 0 and start <= stop for start, stop in ranges)
