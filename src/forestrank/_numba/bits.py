"""Bit tricks for numba kernels: ``sign_mask(x)``, ``trailing_zeros(word)``, ``pop_lowest_bit(word)``.

A search whose next step depends on a compare of freshly loaded values (the binary
search of ``_tree/_binning._bin_rows``) is written as a select, but LLVM's x86 back
end turns a select fed by a load into a branch in a loop, betting on the branch
being predictable. A search over random values takes each side half the time, so
that branch mispredicts at every other step. ``sign_mask`` reads the sign bit of a
difference with integer operations only (a bit cast and a shift), which numba's LLVM
does not turn into a branch (measured: ``benchmarks/RESULTS.md``, "Engine design
measurements"). ``base += half & sign_mask(cut - value)`` steps exactly when
``cut < value`` for a finite cut that is not -0.0: equal operands then differ by +0.0,
unequal finite ones by a nonzero difference of their order's sign (or an infinity of
it), and an infinite value by an infinity. A -0.0 cut against +0.0 (-0.0) and a -inf
cut against -inf (NaN, whose sign bit x86 sets) would step wrongly:
``BinMapper.transform`` passes +0.0 for -0.0, and its cuts are finite.

``trailing_zeros`` is the index of a word's lowest set bit in one instruction (``tzcnt``):
the leaf a row reaches in the bitvector scorer (``_tree/_quickscorer.py``).
"""

import math

import numba
import numpy as np
from numba import types

from .jit import jit

if numba.config.DISABLE_JIT:

    def sign_mask(x: float) -> int:
        """-1 (every bit set) when the sign bit of ``x`` is set, else 0."""
        return -1 if math.copysign(1.0, x) < 0 else 0

    def trailing_zeros(word: int) -> int:
        """Index of the lowest set bit of a non-zero uint64."""
        word = int(word)
        return (word & -word).bit_length() - 1

else:
    from llvmlite import ir
    from numba.cpython.unsafe import numbers
    from numba.extending import intrinsic

    trailing_zeros = numbers.trailing_zeros

    @intrinsic
    def sign_mask(typingctx, x):
        """-1 (int64, every bit set) when the sign bit of the float64 ``x`` is set, else 0."""
        if x != types.float64:
            return None
        signature = types.int64(types.float64)

        def codegen(context, builder, signature, arguments):
            bits = builder.bitcast(arguments[0], ir.IntType(64))
            return builder.ashr(bits, ir.Constant(ir.IntType(64), 63))

        return signature, codegen


@jit(inline="always")
def pop_lowest_bit(word):
    """Clear the lowest set bit of a non-zero uint64; returns (the rest, that bit's index,
    ``trailing_zeros``: one instruction). Walking a bitmap's words this way visits its set
    bits in increasing order."""
    return word & (word - np.uint64(1)), np.int64(trailing_zeros(word))
