"""Borrowed arrays: views a kernel uses without counting references.

numba keeps every array alive by a reference count in its *meminfo*, changed with an atomic
instruction each time an array is bound to a variable, passed to a function (inlined or not)
or unpacked from a tuple. Compiler passes remove such pairs only within simple control flow; in
the per-body loops of the kernels, with their branches on body kinds and block shapes, dozens
of atomic pairs per body remained, and they took most of the time of a recursion on a small
model (the state building of a 6-body arm ran 3× faster without them).

:func:`borrowed` gives a view of the same data with no meminfo: binding or passing it counts
nothing. It is safe exactly when the array's owner outlives every use of the view. The kernels
borrow only their *arguments*, which the caller holds for the whole call; a kernel never
borrows an array it allocates (numba may free a local as soon as its last use has passed), and
a borrowed view is never returned or stored.
"""

from __future__ import annotations

from numba.extending import intrinsic
from numba.np.arrayobj import populate_array

__all__ = ["borrowed"]


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
