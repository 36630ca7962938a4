"""Two neighbouring elements updated as one vector: ``add_pair(array, indices, first, second)``.

``array[indices] += first`` and ``+= second`` on the element after it along the last
axis, as one two-lane load, add and store. A histogram fill adds a row's gradient and
hessian to two neighbouring columns of one bin for every feature; LLVM's SLP vectoriser
left those two read-modify-writes scalar in the builds measured. Each lane computes what the scalar update does
(for int32: widen to float64, add, truncate back, as numba's ``+=`` of a float into an
int32 element), so results are the same bit for bit; only the number of memory
operations per value falls (``benchmarks/RESULTS.md``, "Boosting speed: where an
iteration goes"). Under ``NUMBA_DISABLE_JIT=1`` it is the two scalar updates.
"""

import numba
from numba import types

if numba.config.DISABLE_JIT:

    def add_pair(array: object, indices: tuple, first: float, second: float) -> None:
        """The two scalar updates, in interpreted mode."""
        array[indices] += first
        array[(*indices[:-1], indices[-1] + 1)] += second

else:
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic

    # A pair starts at any element, not on the vector's natural 16- or 8-byte boundary,
    # so the load and store promise only the element's alignment.
    _ELEMENT_ALIGNMENT = {types.float64: 8, types.int32: 4}

    @intrinsic
    def add_pair(typingctx, array, indices, first, second):
        """Add ``first`` to ``array[indices]`` and ``second`` to the next element of the last axis.

        Parameters
        ----------
        array : float64 or int32 array of shape (..., n), C order, writable
            Updated in place.
        indices : tuple of integers, one per dimension
            Non-negative and within the shape, with ``indices[-1] + 1 < n``: unlike
            ``array[indices]`` there is no wraparound and no bounds check.
        first, second : float
            Cast to float64, as numba's ``+=`` of a float into either dtype.
        """
        if not isinstance(array, types.Array) or array.layout != "C" or array.dtype not in _ELEMENT_ALIGNMENT:
            return None
        if not array.mutable or not array.aligned:
            return None
        if not isinstance(indices, types.BaseTuple) or len(indices) != array.ndim:
            return None
        if not all(isinstance(t, types.Integer) for t in indices):
            return None
        if not isinstance(first, types.Float) or not isinstance(second, types.Float):
            return None
        signature = types.void(array, indices, first, second)

        def codegen(context, builder, signature, arguments):
            array_type, index_types, first_type, second_type = signature.args
            array_value, index_tuple, first_value, second_value = arguments
            array_struct = context.make_array(array_type)(context, builder, array_value)
            positions = [
                context.cast(builder, builder.extract_value(index_tuple, k), index_types[k], types.intp)
                for k in range(len(index_types))
            ]
            pointer = cgutils.get_item_pointer(context, builder, array_type, array_struct, positions)
            wide = ir.VectorType(ir.DoubleType(), 2)
            addend = ir.Constant(wide, ir.Undefined)
            for lane, (value, value_type) in enumerate(((first_value, first_type), (second_value, second_type))):
                lane_value = context.cast(builder, value, value_type, types.float64)
                addend = builder.insert_element(addend, lane_value, ir.Constant(ir.IntType(32), lane))
            lanes = ir.VectorType(context.get_data_type(array_type.dtype), 2)
            lanes_pointer = builder.bitcast(pointer, lanes.as_pointer())
            alignment = _ELEMENT_ALIGNMENT[array_type.dtype]
            old = builder.load(lanes_pointer, align=alignment)
            if array_type.dtype == types.float64:
                new = builder.fadd(old, addend)
            else:
                new = builder.fptosi(builder.fadd(builder.sitofp(old, wide), addend), lanes)
            builder.store(new, lanes_pointer, align=alignment)
            return context.get_dummy_value()

        return signature, codegen
