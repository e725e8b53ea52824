"""numba kernel of Newton–Euler inverse dynamics on a flat model (SKO.md §5, Algorithm 3.1):
the scatter of the node velocities and accelerations, the gather of the node forces.

Each pass has one step, written once for a node of any dimensions (:func:`scatter_step`,
:func:`gather_step`): at a rigid body on a 1-dof hinge (:func:`~sko.engine.rigid_blocks.rigid_step`)
the recursion takes it specialised to ``m = 6, h = 1, m_℘ = 6`` (:func:`~sko.engine.jit.specialised`:
loops of constant length, what it reads held in registers, inlined), at any other node compiled
once and called with the layout's dimensions.

The conventions of every recursion kernel are those of :mod:`sko.engine` (*The recursions*).
"""

from __future__ import annotations

from sko.engine import rigid_blocks as rb
from sko.engine.borrow import borrowed
from sko.engine.layout import Flat
from sko.engine.jit import kernel, specialised

__all__ = ["newton_euler", "scatter_step", "gather_step", "scatter_6_1", "gather_6_1", "scatter_any", "gather_any"]


def scatter_step(layout, data, qdd, qd, V, alpha, f, with_V, j, p, m, h, mp):
    """The scatter at flat node ``j`` (parent ``p``) of node dimension ``m``, hinge dimension
    ``h``, parent node dimension ``mp``: ``α = φ* α(℘) + H* θ̈ + a``, ``f = M α + b``
    (``𝒱 = φ* 𝒱(℘) + H* θ̇`` if ``with_V``). What it reads of the buffers it writes is
    :func:`~sko.engine.rigid_blocks.held` first: in registers for constant dimensions."""
    no, do, wo, ho = layout[j, Flat.NODE], layout[j, Flat.DOF], layout[j, Flat.W], layout[j, Flat.H]
    npo = layout[p, Flat.NODE] if p >= 0 else 0
    t = rb.held(qdd, do, h)
    if p >= 0:
        x = rb.held(alpha, npo, mp)
        for i in range(m):
            s = data[layout[j, Flat.A] + i]
            for r in range(mp):
                s += data[wo + r * m + i] * x[r]
            for c in range(h):
                s += data[ho + c * m + i] * t[c]
            alpha[no + i] = s
    else:
        for i in range(m):
            s = data[layout[j, Flat.A] + i]
            for c in range(h):
                s += data[ho + c * m + i] * t[c]
            alpha[no + i] = s
    if with_V:
        u = rb.held(qd, do, h)
        y = rb.held(V, npo, mp)
        for i in range(m):
            s = 0 * V[no + i]  # zero on entry, in the buffers' scalar type
            if p >= 0:
                for r in range(mp):
                    s += data[wo + r * m + i] * y[r]
            for c in range(h):
                s += data[ho + c * m + i] * u[c]
            V[no + i] = s
    a = rb.held(alpha, no, m)
    mo, bo = layout[j, Flat.M], layout[j, Flat.B]
    for i in range(m):
        s = data[bo + i]
        for c in range(m):
            s += data[mo + i * m + c] * a[c]
        f[no + i] = s


def gather_step(layout, data, f, T, j, p, m, h, mp):
    """The gather at flat node ``j`` (dimensions as in :func:`scatter_step`): ``T(j) = H f(j)``,
    ``f(℘) += φ f(j)``, ``f(j)`` :func:`~sko.engine.rigid_blocks.held` before the first store."""
    no, do, ho = layout[j, Flat.NODE], layout[j, Flat.DOF], layout[j, Flat.H]
    g = rb.held(f, no, m)
    for r in range(h):
        s = T[do + r]
        for c in range(m):
            s += data[ho + r * m + c] * g[c]
        T[do + r] = s
    if p >= 0:
        wo, npo = layout[j, Flat.W], layout[p, Flat.NODE]
        for r in range(mp):
            s = f[npo + r]
            for c in range(m):
                s += data[wo + r * m + c] * g[c]
            f[npo + r] = s


#: the steps at a rigid body on a 1-dof hinge, specialised to its dimensions and inlined into the
#: recursion; and at any other node, compiled once and called
scatter_6_1, gather_6_1 = specialised(scatter_step, m=6, h=1, mp=6), specialised(gather_step, m=6, h=1, mp=6)
scatter_any, gather_any = kernel(scatter_step), kernel(gather_step)


@kernel(entry=True)
def newton_euler(layout, data, qdd, qd, nodes, T, with_V):
    """Algorithm 3.1 with ``a``, ``b`` from the data buffer: ``nodes[0] = 𝒱`` (if ``with_V``),
    ``nodes[1] = α``, ``nodes[2] = f``, ``T = H f``. Outputs are zero on entry."""
    layout, data, qdd, qd, nodes, T = (borrowed(layout), borrowed(data), borrowed(qdd), borrowed(qd), borrowed(nodes),
                                       borrowed(T))
    V, alpha, f = nodes[0], nodes[1], nodes[2]
    n = layout.shape[0]
    for j in range(n):  # scatter: α = φ* α(℘) + H* θ̈ + a, f = M α + b (𝒱 = φ* 𝒱(℘) + H* θ̇)
        p = layout[j, Flat.PARENT]
        if rb.rigid_step(layout, j, p):
            scatter_6_1(layout, data, qdd, qd, V, alpha, f, with_V, j, p)
        else:
            scatter_any(layout, data, qdd, qd, V, alpha, f, with_V, j, p, layout[j, Flat.NODE_DIM],
                        layout[j, Flat.HINGE_DIM], layout[p, Flat.NODE_DIM] if p >= 0 else 0)
    for j in range(n - 1, -1, -1):  # gather: T(j) = H f(j), f(℘) += φ f(j)
        p = layout[j, Flat.PARENT]
        if rb.rigid_step(layout, j, p):
            gather_6_1(layout, data, f, T, j, p)
        else:
            gather_any(layout, data, f, T, j, p, layout[j, Flat.NODE_DIM], layout[j, Flat.HINGE_DIM],
                       layout[p, Flat.NODE_DIM] if p >= 0 else 0)
