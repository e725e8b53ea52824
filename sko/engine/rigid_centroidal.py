"""Centroidal dynamics of a tree of rigid bodies on ten inertial parameters (CENTROIDAL.md §5):
the kernels the requests ``centroidal_terms``, ``centroidal_momentum_matrix`` and
``centroidal_momentum_matrix_rate`` take for float64 states where
:func:`sko.engine.mass_matrix.applies` (their ``Request.rigid``; the rate's declaration takes
joints of constant ``S`` alone, as for its generic kernel); the generic kernels of
:mod:`sko.engine.centroidal` stay for every other system and for complex128.

Everything is in world axes about the point ``o``, the world position of a base body's frame
(:func:`~sko.engine.centroidal.origin_row`: the first with a positive mass) (CENTROIDAL.md §5: about the world origin, the ten numbers of a body ``|p|`` away carry
terms in ``|p|²`` whose differences the shift to the centre of mass takes, and lose digits as
``|p|²``; about ``o`` they lose them as the system's own size). A scatter (parents first) gives each body
its pose about ``o`` (a base body's from its ``E = ᵏX_0``, a child's from its parent's and its weight,
:func:`~sko.engine.mass_matrix.child_pose`), the world columns ``s`` of its ``H*``
(:func:`~sko.engine.mass_matrix.root_column`) and its inertia about the origin as ten numbers
(:func:`~sko.engine.mass_matrix.root_inertia`), summed into the locked inertia ``I_0`` (Eq. 7),
so the mass and the centre of mass (Eq. 8) are known before the gather. The gather (children
first) sums the composites ``ℛ⁰(k)``, ten additions a body, and writes each column of ``A_G``
at once: ``X_G^* ℛ⁰(k) s`` (Eq. 7, Eq. 4, :func:`~sko.engine.mass_matrix.composite_force`).
The rate adds each body's world velocity ``v_k = v_℘ + Σ s θ̇``, the columns' rates ``v_k × s``
and the rate of its inertia, nine numbers (Eq. 9), gathered like ``ℛ⁰``; a column of ``Ȧ_0`` is
``𝒟⁰(k) s + ℛ⁰(k) (v_k × s)`` (Eq. 10), written at once shifted by Eq. 5 with ``ċ`` from the
scatter's sum of the first moments' rates (Eq. 11).

Buffers (:data:`RigidWork`): :data:`NODE` entries per body (:data:`Node`), :data:`Column`'s per
hinge column, the sums :data:`Total`.
"""

from __future__ import annotations

from sko.engine.borrow import borrowed
from sko.engine.bodies.rigid import motion_cross
from sko.engine.centroidal import Result, origin_row
from sko.engine.fields import columns, offsets
from sko.engine.jit import inline_kernel, kernel, register
from sko.engine.layout import Flat
from sko.engine.mass_matrix import (base_rows, child_pose, composite_force, root_column, root_inertia, ten_parameters,
                                    weight_rows)
from sko.engine.request_views import Header, buffer, fill_arena, request_views
from sko.engine.rigid_blocks import held
from sko.engine.state_kernels import Terms

__all__ = ["Node", "NODE", "Column", "Total", "RigidWork", "rigid_buffers", "inertia_rate", "rigid_centroidal",
           "rigid_centroidal_rate"]

#: Per body: its pose ``R`` (row-major, body axes to world axes) and ``p − o``, its composite
#: inertia ``m``, ``h``, ``Ī_xx, Ī_xy, Ī_xz, Ī_yy, Ī_yz, Ī_zz`` (world axes, about ``o``),
#: then for the rate its world velocity and the composite of its inertia's rate, ``ḣ`` and ``Ī̇``.
Node = offsets("Node", rotation=9, position=3, mass=1, h=3, inertia=6, velocity=6, h_rate=3, inertia_rate=6)
NODE = Node.SIZE
#: Per hinge column: ``s`` in the world, then its rate ``v_k × s``.
Column = offsets("Column", s=6, rate=6)
#: The sums over the bodies: ``I_0``'s ten numbers (Eq. 7), then ``Σ ḣ_k`` (Eq. 11).
Total = offsets("Total", mass=1, h=3, inertia=6, h_rate=3)
#: The workspace of both kernels: the bodies, the hinge columns, the sums.
RigidWork = columns("RigidWork", "NODES", "COLUMNS", "TOTAL")


def rigid_buffers(s) -> tuple:
    """:data:`RigidWork` (``s``: :class:`~sko.engine.requests.Sizes`)."""
    return NODE * s.n, Column.SIZE * max(s.nv, 1), Total.SIZE


@inline_kernel
def inertia_rate(c, v):
    """``(ḣ, Ī̇)`` (three and six numbers, :func:`~sko.engine.mass_matrix.root_inertia`'s order)
    of the rigid inertia of ten numbers ``c`` moving with the spatial velocity ``v = [ω; u]``:
    ``ḣ = ω × h + m u``, ``Ī̇ = ω×Ī − Īω× + 2 (h·u) 1 − u hᵀ − h uᵀ`` (CENTROIDAL.md, Eq. 9)."""
    m, h0, h1, h2, i00, i01, i02, i11, i12, i22 = c
    w0, w1, w2, u0, u1, u2 = v
    a00, a01, a02 = w1 * i02 - w2 * i01, w1 * i12 - w2 * i11, w1 * i22 - w2 * i12  # ω×Ī, row by row
    a10, a11, a12 = w2 * i00 - w0 * i02, w2 * i01 - w0 * i12, w2 * i02 - w0 * i22
    a20, a21, a22 = w0 * i01 - w1 * i00, w0 * i11 - w1 * i01, w0 * i12 - w1 * i02
    hu = h0 * u0 + h1 * u1 + h2 * u2
    return ((w1 * h2 - w2 * h1 + m * u0, w2 * h0 - w0 * h2 + m * u1, w0 * h1 - w1 * h0 + m * u2),
            (2.0 * (a00 + hu - u0 * h0), a01 + a10 - u0 * h1 - h0 * u1, a02 + a20 - u0 * h2 - h0 * u2,
             2.0 * (a11 + hu - u1 * h1), a12 + a21 - u1 * h2 - h1 * u2, 2.0 * (a22 + hu - u2 * h2)))


@register
def _world_pose(rows, layout, data, nodes, j, o):
    """The pose ``(R, p − o)`` of the body of row ``j``, its position about the point ``o``: a
    base body's from its ``E = ᵏX_0 = [[E, 0], [B, E]]`` in the arena (``E`` at ``Row.E`` with its
    strides), a child's from its parent's in ``nodes`` and its weight."""
    p = layout[j, Flat.PARENT]
    if p >= 0:
        po = NODE * p
        return child_pose(held(nodes, po + Node.rotation, 9), held(nodes, po + Node.position, 3),
                          *weight_rows(data, layout[j, Flat.W]))
    e, b = base_rows(rows, data, j)
    zero = 0.0 * e[0]
    one = 1.0 + zero
    R, x = child_pose((one, zero, zero, zero, one, zero, zero, zero, one), (zero, zero, zero), e, b)
    return R, (x[0] - o[0], x[1] - o[1], x[2] - o[2])


@register
def _origin(rows, layout, data, nodes):
    """``o``: the world position of the frame of the base body of
    :func:`~sko.engine.centroidal.origin_row` (the first with a positive mass)."""
    zero = 0.0 * data[0]
    return _world_pose(rows, layout, data, nodes, max(origin_row(layout, data), 0), (zero, zero, zero))[1]


@register
def _put(x, o, values):
    """``x[o + i] = values[i]`` for the numbers of the tuple ``values``."""
    for i in range(len(values)):
        x[o + i] = values[i]


@register
def _add(x, o, values):
    """``x[o + i] += values[i]`` for the numbers of the tuple ``values``."""
    for i in range(len(values)):
        x[o + i] += values[i]


@inline_kernel
def _scatter(rows, layout, data, nodes, S, total, j, o):
    """Body ``j``'s pose about ``o``, hinge columns and ten numbers into ``nodes`` and ``S`` (module
    docstring), the ten summed into ``total``; returns the ten. An inline kernel: both request
    kernels take it, typed once."""
    no, mo = NODE * j, layout[j, Flat.M]
    R, x = _world_pose(rows, layout, data, nodes, j, o)
    _put(nodes, no + Node.rotation, R)
    _put(nodes, no + Node.position, x)
    ho, do = layout[j, Flat.H], layout[j, Flat.DOF]
    for c in range(layout[j, Flat.HINGE_DIM]):
        _put(S, Column.SIZE * (do + c) + Column.s, root_column(R, x, held(data, ho + 6 * c, 6)))
    mass, g, inertia = ten_parameters(data, mo)
    c10 = root_inertia(R, x, mass, g, inertia)
    _put(nodes, no + Node.mass, c10)
    _add(total, Total.mass, c10)
    return c10


@register
def _workspace(rows, layout, arena, ws, at):
    """Both kernels' buffers of :data:`RigidWork` (the sums zeroed) and the point ``o``."""
    nodes, S, total = buffer(ws, at, RigidWork.NODES), buffer(ws, at, RigidWork.COLUMNS), buffer(ws, at, RigidWork.TOTAL)
    for i in range(Total.SIZE):
        total[i] = 0.0
    return nodes, S, total, _origin(rows, layout, arena, nodes)


@register
def _centre(total):
    """``(m, c − o, ċ)`` from the sums about ``o`` (Eq. 8, Eq. 11)."""
    m = total[Total.mass]
    return (m, (total[Total.h] / m, total[Total.h + 1] / m, total[Total.h + 2] / m),
            (total[Total.h_rate] / m, total[Total.h_rate + 1] / m, total[Total.h_rate + 2] / m))


@register
def _shifted(F, c, out, o, stride):
    """``out[o + r·stride] = (X_G^* F)_r``: the force ``F`` about the centre of mass ``c`` (Eq. 4)."""
    c0, c1, c2 = c
    out[o] = F[0] - (c1 * F[5] - c2 * F[4])
    out[o + stride] = F[1] - (c2 * F[3] - c0 * F[5])
    out[o + 2 * stride] = F[2] - (c0 * F[4] - c1 * F[3])
    out[o + 3 * stride], out[o + 4 * stride], out[o + 5 * stride] = F[3], F[4], F[5]


@kernel
def rigid_centroidal(w, x, out):
    """One state's packed ``[A_G | I_G | h_G | (c, m, 0, 0)]``, or ``A_G`` alone for a result of
    ``6 nv`` entries (:func:`sko.engine.centroidal.centroidal`'s results) of a tree of rigid
    bodies by Eq. 7 and Eq. 8 (module docstring)."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.STRUCTURE)
    if status >= 0:
        return status
    nv, n, v0 = words[Header.NV], layout.shape[0], words[Header.V]
    nodes, S, total, o = _workspace(rows, layout, arena, ws, at)
    packed = out.shape[0] > 6 * nv
    width = nv + Result.SIZE if packed else nv
    for j in range(n):  # scatter
        _scatter(rows, layout, arena, nodes, S, total, j, o)
    if not total[Total.mass].real > 0:  # no centre of mass: the reference path names it (of a complex step too)
        return -3
    m, c, _ = _centre(total)
    for k in range(n - 1, -1, -1):  # gather: ℛ⁰(k) complete; A_G(:, col) = X_G^* ℛ⁰(k) s (Eq. 7)
        co, dk = NODE * k + Node.mass, layout[k, Flat.DOF]
        c10 = held(nodes, co, 10)
        for col in range(dk, dk + layout[k, Flat.HINGE_DIM]):
            _shifted(composite_force(c10, held(S, Column.SIZE * col + Column.s, 6)), c, out, col, width)
        p = layout[k, Flat.PARENT]
        if p >= 0:
            _add(nodes, NODE * p + Node.mass, c10)
    if not packed:
        return -1
    h0, h1, h2 = total[Total.h], total[Total.h + 1], total[Total.h + 2]
    i00, i01, i02 = total[Total.inertia], total[Total.inertia + 1], total[Total.inertia + 2]
    i11, i12, i22 = total[Total.inertia + 3], total[Total.inertia + 4], total[Total.inertia + 5]
    g = (h0 * h0 + h1 * h1 + h2 * h2) / m
    I = nv + Result.inertia  # Eq. 8: I_G = [[Ī_0 − ((h·h) 1 − h hᵀ)/m, 0], [0, m 1]]
    for r in range(6):
        for col in range(6):
            out[r * width + I + col] = 0.0
    out[I], out[I + 1], out[I + 2] = i00 - g + h0 * h0 / m, i01 + h0 * h1 / m, i02 + h0 * h2 / m
    out[width + I], out[width + I + 1], out[width + I + 2] = i01 + h0 * h1 / m, i11 - g + h1 * h1 / m, i12 + h1 * h2 / m
    out[2 * width + I], out[2 * width + I + 1] = i02 + h0 * h2 / m, i12 + h1 * h2 / m
    out[2 * width + I + 2] = i22 - g + h2 * h2 / m
    for r in range(3, 6):
        out[r * width + I + r] = m
    h = nv + Result.momentum
    for r in range(6):  # h_G = A_G θ̇
        s = 0.0 * m
        for col in range(nv):
            s += out[r * width + col] * arena[v0 + col]
        out[r * width + h] = s
    at_c = nv + Result.center
    out[at_c], out[width + at_c], out[2 * width + at_c] = c[0] + o[0], c[1] + o[1], c[2] + o[2]
    out[3 * width + at_c] = m
    return -1


@kernel
def rigid_centroidal_rate(w, x, out):
    """``Ȧ_G`` (6 × nv) of a tree of rigid bodies on joints of constant ``S`` by Eq. 9–11 and
    Eq. 5 (module docstring)."""
    w, x, out = borrowed(w), borrowed(x), borrowed(out)
    words, rows, layout, roff, reals, arena, ws, at = request_views(w)
    status = fill_arena(words, rows, reals, arena, Terms.STRUCTURE)
    if status >= 0:
        return status
    nv, n, v0 = words[Header.NV], layout.shape[0], words[Header.V]
    nodes, S, total, o = _workspace(rows, layout, arena, ws, at)
    for j in range(n):  # scatter: v_j = v_℘ + Σ s θ̇, then the columns' rates and the inertia's (Eq. 9)
        c10 = _scatter(rows, layout, arena, nodes, S, total, j, o)
        p, no, do = layout[j, Flat.PARENT], NODE * j, layout[j, Flat.DOF]
        zero = 0.0 * c10[0]
        if p >= 0:
            v = held(nodes, NODE * p + Node.velocity, 6)
        else:
            v = (zero, zero, zero, zero, zero, zero)
        for col in range(do, do + layout[j, Flat.HINGE_DIM]):
            s, rate = held(S, Column.SIZE * col + Column.s, 6), arena[v0 + col]
            v = (v[0] + s[0] * rate, v[1] + s[1] * rate, v[2] + s[2] * rate, v[3] + s[3] * rate,
                 v[4] + s[4] * rate, v[5] + s[5] * rate)
        _put(nodes, no + Node.velocity, v)
        for col in range(do, do + layout[j, Flat.HINGE_DIM]):
            _put(S, Column.SIZE * col + Column.rate, motion_cross(v, held(S, Column.SIZE * col + Column.s, 6)))
        h_rate, inertia_dot = inertia_rate(c10, v)
        _put(nodes, no + Node.h_rate, h_rate)
        _put(nodes, no + Node.inertia_rate, inertia_dot)
        _add(total, Total.h_rate, h_rate)
    if not total[Total.mass].real > 0:  # no centre of mass: the reference path names it
        return -3
    m, c, cd = _centre(total)
    c0, c1, c2 = c
    d0, d1, d2 = cd
    for k in range(n - 1, -1, -1):  # gather: Ȧ_0(:, col) = 𝒟⁰(k) s + ℛ⁰(k)(v_k × s) (Eq. 10), then Eq. 5
        co, dk = NODE * k + Node.mass, layout[k, Flat.DOF]
        c10, d9 = held(nodes, co, 10), held(nodes, NODE * k + Node.h_rate, 9)
        d10 = (0.0 * c10[0],) + d9
        for col in range(dk, dk + layout[k, Flat.HINGE_DIM]):
            s, t = held(S, Column.SIZE * col + Column.s, 6), held(S, Column.SIZE * col + Column.rate, 6)
            F, D, T = composite_force(c10, s), composite_force(d10, s), composite_force(c10, t)
            e0, e1, e2, e3, e4, e5 = D[0] + T[0], D[1] + T[1], D[2] + T[2], D[3] + T[3], D[4] + T[4], D[5] + T[5]
            out[col] = e0 - (c1 * e5 - c2 * e4) - (d1 * F[5] - d2 * F[4])
            out[nv + col] = e1 - (c2 * e3 - c0 * e5) - (d2 * F[3] - d0 * F[5])
            out[2 * nv + col] = e2 - (c0 * e4 - c1 * e3) - (d0 * F[4] - d1 * F[3])
            out[3 * nv + col], out[4 * nv + col], out[5 * nv + col] = e3, e4, e5
        p = layout[k, Flat.PARENT]
        if p >= 0:
            _add(nodes, NODE * p + Node.mass, c10)
            _add(nodes, NODE * p + Node.h_rate, d9)
    return -1
