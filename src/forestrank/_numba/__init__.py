"""Numba plumbing every kernel shares: the compile flags (``jit``), the prefetch
intrinsic (``prefetch``), the two-lane update of neighbouring elements (``pair_add``), the
branch-free sign test (``bits``) and the kernels' dtypes with the coercion to them
(``dtypes``), and the garbage collector's thresholds while a kernel compiles (``compile_gc``)."""
