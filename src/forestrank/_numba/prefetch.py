"""Software prefetch for numba kernels: ``prefetch(array, indices)``.

Asks the processor to start loading the cache line of ``array[indices]`` without
waiting for it (LLVM's ``llvm.prefetch``: a read, kept in all cache levels). Kernels
that chase pointers through arrays too large for the caches (tree traversal) issue
the loads of a whole group of independent walks first, so their misses overlap
instead of being waited for one at a time. It never changes a result; under
``NUMBA_DISABLE_JIT=1`` it is a Python no-op.
"""

import numba
from numba import types

# Positions ahead that the tree builder's gathers ``X_binned[samples[p], ...]``
# prefetch. Below the root a node's rows are scattered over ``X_binned``, so each
# gather misses the caches at an address the hardware prefetcher cannot guess, while
# ``samples`` tells it 16 positions early. The prefetches roughly halved the cycles of
# the scattered histogram fills, with bitwise-equal models (``docs/design.md``,
# "Numba rules").
GATHER_DISTANCE = 16

if numba.config.DISABLE_JIT:

    def prefetch(array: object, indices: tuple) -> None:
        """No-op in interpreted mode."""

else:
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def prefetch(typingctx, array, indices):
        """Prefetch the element ``array[indices]`` (``indices``: a tuple of integers, one per dimension)."""
        if not isinstance(array, types.Array) or not isinstance(indices, types.BaseTuple):
            return None
        if len(indices) != array.ndim or not all(isinstance(t, types.Integer) for t in indices):
            return None
        signature = types.void(array, indices)

        def codegen(context, builder, signature, arguments):
            array_type, index_types = signature.args
            array_value, index_tuple = arguments
            array_struct = context.make_array(array_type)(context, builder, array_value)
            positions = [
                context.cast(builder, builder.extract_value(index_tuple, k), index_types[k], types.intp)
                for k in range(len(index_types))
            ]
            pointer = cgutils.get_item_pointer(context, builder, array_type, array_struct, positions)
            byte_pointer = ir.IntType(8).as_pointer()
            int32 = ir.IntType(32)
            function_type = ir.FunctionType(ir.VoidType(), [byte_pointer, int32, int32, int32])
            function = cgutils.get_or_insert_function(builder.module, function_type, "llvm.prefetch.p0i8")
            # read (0), keep in every cache level (locality 3), data cache (1)
            builder.call(function, [builder.bitcast(pointer, byte_pointer), int32(0), int32(3), int32(1)])
            return context.get_dummy_value()

        return signature, codegen
