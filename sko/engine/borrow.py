"""Borrowed arrays: views a kernel uses without counting references.

numba keeps every array alive by a reference count in its *meminfo*, changed with an atomic
instruction each time an array is bound to a variable, passed to a function or unpacked from a
tuple; compiler passes remove such pairs only within simple control flow, and in the per-body
loops of the kernels, with their branches on block shapes, many remain.

:func:`borrowed` gives a view of the same data with no meminfo: binding or passing it counts
nothing. It is safe exactly when the array's owner outlives every use of the view. The kernels
borrow only their *arguments*, which the caller holds for the whole call; a kernel never
borrows an array it allocates (numba may free a local as soon as its last use has passed), and
a borrowed view is never stored. A carving helper (a request vector's tables and workspace) may
return views of a borrowed argument to the caller that owns it.

:func:`matrix_view` carves a 2-D view out of a 1-D buffer by offset without numba's ``reshape``
(whose shape check compiles error formatting into every kernel that calls it);
:func:`strided_view` does the same with any strides (a transposed block); :func:`flat_view` is the
converse, the entries of a C-ordered 2-D array as one 1-D buffer.
"""

from __future__ import annotations

from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

__all__ = ["borrowed", "matrix_view", "strided_view", "flat_view"]


@intrinsic
def borrowed(typingctx, array):
    """A view of ``array`` (same type, data, shape and strides) without a meminfo (module
    docstring: only for arrays the caller owns for the whole call)."""

    def codegen(context, builder, signature, args):
        source = context.make_array(array)(context, builder, args[0])
        view = context.make_array(array)(context, builder)
        populate_array(view, data=source.data, shape=source.shape, strides=source.strides,
                       itemsize=source.itemsize, meminfo=None)
        return view._getvalue()

    return array(array), codegen


@intrinsic
def matrix_view(typingctx, a, start, rows, cols):
    """``a[start: start + rows·cols]`` as a C-ordered ``rows × cols`` view of the 1-D C-ordered
    ``a``, which must hold those entries (callers carve by offsets they packed themselves)."""
    if not (isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C"):
        return None
    view_type = a.copy(ndim=2, layout="C")

    def codegen(context, builder, sig, args):
        source = make_array(sig.args[0])(context, builder, args[0])
        first, r, c = (context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], sig.args[1:]))
        view = make_array(view_type)(context, builder)
        populate_array(view, data=builder.gep(source.data, [first]), shape=cgutils.pack_array(builder, [r, c]),
                       strides=cgutils.pack_array(builder, [builder.mul(c, source.itemsize), source.itemsize]),
                       itemsize=source.itemsize, meminfo=source.meminfo, parent=source.parent)
        return impl_ret_borrowed(context, builder, view_type, view._getvalue())

    return view_type(a, start, rows, cols), codegen


@intrinsic
def strided_view(typingctx, a, start, rows, cols, row_step, col_step):
    """The ``rows × cols`` view of the 1-D C-ordered ``a`` whose entry ``(i, j)`` is
    ``a[start + i·row_step + j·col_step]`` (any layout, so ``(row_step, col_step) = (1, rows)``
    is the transpose of a row-major block), which ``a`` must hold."""
    if not (isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C"):
        return None
    view_type = a.copy(ndim=2, layout="A")

    def codegen(context, builder, sig, args):
        source = make_array(sig.args[0])(context, builder, args[0])
        first, r, c, rs, cs = (context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], sig.args[1:]))
        view = make_array(view_type)(context, builder)
        populate_array(view, data=builder.gep(source.data, [first]), shape=cgutils.pack_array(builder, [r, c]),
                       strides=cgutils.pack_array(builder, [builder.mul(rs, source.itemsize),
                                                            builder.mul(cs, source.itemsize)]),
                       itemsize=source.itemsize, meminfo=source.meminfo, parent=source.parent)
        return impl_ret_borrowed(context, builder, view_type, view._getvalue())

    return view_type(a, start, rows, cols, row_step, col_step), codegen


@intrinsic
def flat_view(typingctx, a):
    """The entries of the C-ordered ``a`` (of any dimensions) as a 1-D C-ordered view, borrowed
    (module docstring): a one-column block read by offsets (``z[no + i, 0]`` as ``flat_view(z)[no + i]``),
    a result written flat (numba's ``ravel`` calls a C function to find that it needs no copy)."""
    if not (isinstance(a, types.Array) and a.ndim >= 1 and a.layout == "C"):
        return None
    view_type = a.copy(ndim=1, layout="C")

    def codegen(context, builder, sig, args):
        source = make_array(sig.args[0])(context, builder, args[0])
        extents = cgutils.unpack_tuple(builder, source.shape, sig.args[0].ndim)
        size = extents[0]
        for extent in extents[1:]:
            size = builder.mul(size, extent)
        view = make_array(view_type)(context, builder)
        populate_array(view, data=source.data, shape=cgutils.pack_array(builder, [size]),
                       strides=cgutils.pack_array(builder, [source.itemsize]), itemsize=source.itemsize, meminfo=None)
        return view._getvalue()

    return view_type(a), codegen
