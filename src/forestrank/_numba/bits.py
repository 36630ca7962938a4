"""Branch-free comparisons for numba kernels: ``sign_mask(x)``.

A search whose next step depends on a compare of freshly loaded values (the binary
search of ``_tree/_binning._bin_rows``) is written as a select, but LLVM's x86 back
end turns a select fed by a load into a branch in a loop, betting on the branch
being predictable. A search over random values takes each side half the time, so
that branch mispredicts at every other step. ``sign_mask`` reads the sign bit of a
difference with integer operations only (a bit cast and a shift), which no pass
turns into a branch: ``base += half & sign_mask(cut - value)`` steps exactly when
``cut < value``, whenever ``cut - value`` cannot be -0.0 for equal operands (a cut of
-0.0 against +0.0; ``BinMapper.transform`` passes +0.0 cuts only).
"""

import math

import numba
from numba import types

if numba.config.DISABLE_JIT:

    def sign_mask(x: float) -> int:
        """-1 (every bit set) when the sign bit of ``x`` is set, else 0."""
        return -1 if math.copysign(1.0, x) < 0 else 0

else:
    from llvmlite import ir
    from numba.extending import intrinsic

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
