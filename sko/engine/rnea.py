"""numba kernel of Newton–Euler inverse dynamics on a flat model (SKO.md §5, Algorithm 3.1):
the scatter of the node velocities and accelerations, the gather of the node forces.

The conventions of every recursion kernel are those of :mod:`sko.engine` (*The recursions*).
"""

from __future__ import annotations

from sko.engine import blocks as bl
from sko.engine import rigid_blocks as rb
from sko.engine.borrow import borrowed
from sko.engine.layout import Flat
from sko.engine.jit import kernel

__all__ = ["newton_euler"]


@kernel(entry=True)
def newton_euler(layout, data, qdd, qd, nodes, T, with_V):
    """Algorithm 3.1 with ``a``, ``b`` from the data buffer: ``nodes[0] = 𝒱`` (if ``with_V``),
    ``nodes[1] = α``, ``nodes[2] = f``, ``T = H f``. Outputs are zero on entry."""
    layout, data, qdd, qd, nodes, T = (borrowed(layout), borrowed(data), borrowed(qdd), borrowed(qd), borrowed(nodes),
                                       borrowed(T))
    V, alpha, f = nodes[0], nodes[1], nodes[2]
    n = layout.shape[0]
    for j in range(n):  # scatter: α = φ* α(℘) + H* θ̈ + a, f = M α + b (𝒱 = φ* 𝒱(℘) + H* θ̇)
        p, m, h, no, do = (layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM],
                           layout[j, Flat.NODE], layout[j, Flat.DOF])
        if not with_V and rb.rigid_step(layout, j, p):
            rb.newton_euler_scatter_6_1(layout, data, qdd, alpha, f, j, p)
            continue
        if p >= 0:
            mp, npo = layout[p, Flat.NODE_DIM], layout[p, Flat.NODE]
            bl.mtv(data, layout[j, Flat.W], mp, m, alpha, npo, alpha, no)
            if with_V:
                bl.mtv(data, layout[j, Flat.W], mp, m, V, npo, V, no)
        bl.mtv(data, layout[j, Flat.H], h, m, qdd, do, alpha, no)
        if with_V:
            bl.mtv(data, layout[j, Flat.H], h, m, qd, do, V, no)
        ao, bo = layout[j, Flat.A], layout[j, Flat.B]
        for i in range(m):
            alpha[no + i] += data[ao + i]
            f[no + i] = data[bo + i]
        bl.mv(data, layout[j, Flat.M], m, m, alpha, no, f, no)
    for j in range(n - 1, -1, -1):  # gather: T(j) = H f(j), f(℘) += φ f(j)
        p, m, no = layout[j, Flat.PARENT], layout[j, Flat.NODE_DIM], layout[j, Flat.NODE]
        if rb.rigid_step(layout, j, p):  # f(j) in registers
            f0, f1, f2, f3, f4, f5 = f[no], f[no + 1], f[no + 2], f[no + 3], f[no + 4], f[no + 5]
            T[layout[j, Flat.DOF]] += rb.dot6(data, layout[j, Flat.H], 1, f0, f1, f2, f3, f4, f5)
            if p >= 0:
                y, npo = rb.times(data, layout[j, Flat.W], (f0, f1, f2, f3, f4, f5)), layout[p, Flat.NODE]
                for i in range(6):
                    f[npo + i] += y[i]
            continue
        bl.mv(data, layout[j, Flat.H], layout[j, Flat.HINGE_DIM], m, f, no, T, layout[j, Flat.DOF])
        if p >= 0:
            bl.mv(data, layout[j, Flat.W], layout[p, Flat.NODE_DIM], m, f, no, f, layout[p, Flat.NODE])
