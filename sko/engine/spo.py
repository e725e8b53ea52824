"""numba kernels of the SPO products on a flat model: ``φ x``, ``φ* x`` and their ``φ̃``
forms (SKO.md §4, Lemmas 1, 2), and the joint map ``H`` and ``H*``.

The conventions of every recursion kernel are those of :mod:`sko.engine` (*The recursions*).
"""

from __future__ import annotations

from sko.engine import blocks as bl
from sko.engine.borrow import borrowed
from sko.engine.layout import Flat
from sko.engine.jit import kernel

__all__ = ["spo", "joint_map"]


@kernel(entry=True)
def spo(layout, wdata, woff, x, y, star, tilde):
    """``y = φ x`` (gather), ``φ* x`` (scatter), ``φ̃ x``, ``φ̃* x`` (Lemmas 1, 2, Cor. 3.1) for the
    weights at offsets ``woff`` of ``wdata``. ``y`` is zero on entry."""
    layout, wdata, woff, x, y = borrowed(layout), borrowed(wdata), borrowed(woff), borrowed(x), borrowed(y)
    n = layout.shape[0]
    if not tilde:
        for i in range(x.shape[0]):
            y[i] = x[i]
    if not star:
        for j in range(n - 1, -1, -1):  # gather: y(℘(j)) += φ(℘(j), j) [y(j) (+ x(j))]
            p = layout[j, Flat.PARENT]
            if p >= 0:
                mp, m, o = layout[p, Flat.NODE_DIM], layout[j, Flat.NODE_DIM], woff[j]
                bl.mv(wdata, o, mp, m, y, layout[j, Flat.NODE], y, layout[p, Flat.NODE])
                if tilde:
                    bl.mv(wdata, o, mp, m, x, layout[j, Flat.NODE], y, layout[p, Flat.NODE])
    else:
        for j in range(n):  # scatter: y(j) (+)= φ*(℘(j), j) [y(℘(j)) (+ x(℘(j)))]
            p = layout[j, Flat.PARENT]
            if p >= 0:
                mp, m, o = layout[p, Flat.NODE_DIM], layout[j, Flat.NODE_DIM], woff[j]
                bl.mtv(wdata, o, mp, m, y, layout[p, Flat.NODE], y, layout[j, Flat.NODE])
                if tilde:
                    bl.mtv(wdata, o, mp, m, x, layout[p, Flat.NODE], y, layout[j, Flat.NODE])


@kernel(entry=True)
def joint_map(layout, data, x, y, star):
    """``y = H x`` (node → hinge) or ``y = H* x`` (hinge → node); ``y`` zero on entry."""
    layout, data, x, y = borrowed(layout), borrowed(data), borrowed(x), borrowed(y)
    for j in range(layout.shape[0]):
        h, m = layout[j, Flat.HINGE_DIM], layout[j, Flat.NODE_DIM]
        if star:
            bl.mtv(data, layout[j, Flat.H], h, m, x, layout[j, Flat.DOF], y, layout[j, Flat.NODE])
        else:
            bl.mv(data, layout[j, Flat.H], h, m, x, layout[j, Flat.NODE], y, layout[j, Flat.DOF])
