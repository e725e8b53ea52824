"""The mass matrix of a tree of rigid bodies by the composite-rigid-body algorithm on ten inertial
parameters (RIGID.md, *The SKO model in body coordinates*; SKO.md, Algorithms 4.1 and 4.2).

Where every body is a :class:`~sko.bodies.rigid.RigidBody` (:func:`applies`), every node is 6-
dimensional, every weight ``φ(℘(k), k) = (ᵏX_℘)*`` a rigid transform and every ``M(k)`` the
spatial inertia ``[[Ī, h×], [h×*, m 1]]`` of a rigid body: ten numbers, ``m``, the first moment
``h`` and six of the rotational inertia ``Ī`` about the body frame's origin. :func:`rigid_mass_matrix`
then computes each tree in the frame of its root body (an inertial frame for the computation:
``ℳ`` does not depend on the frame it is computed in), where every weight is the identity:

* a scatter (parents first) gives each body's pose ``(R, p)`` in its root's frame
  (``R_k = R_℘ Eᵀ``, ``p_k = p_℘ + R_℘ r`` for ``ᵏX_℘ = rot(E) xlt(r)``: a body on an axis
  computes ``(E, r)`` from ``q`` in registers, and after the first call its state is not
  filled; another reads its weight), the columns
  ``s = [R s_ω; R s_v + p × R s_ω]`` of its ``H* = S`` and its inertia about the root's origin
  (``Ī ← R Ī Rᵀ``, ``h ← R h``, then the parallel-axis shift
  ``Ī + 2 (h·p) 1 − p hᵀ − h pᵀ + m ((p·p) 1 − p pᵀ)``, ``h + m p``) as ten numbers; a root's
  pose is the identity, so its columns and inertia are its own, and a revolute or prismatic
  joint's column, with a zero half, costs a cross product or a rotation;
* a gather (children first) sums the composite inertias ``ℛ(k)``, ten numbers each, into the
  parents with no transform; at ``k`` each column ``F = ℛ(k) s = [Ī ω + h × v; m v − h × ω]`` is
  held in registers and dotted with the columns of ``k`` and of its ancestors:
  ``ℳ(j, k) = s_jᵀ F`` — one triangle, written with its mirror.

An entry costs six products, where carrying ``F = ℛ(k) H*(k)`` up by ``φ`` (Algorithm 4.2) costs 27
a level, and a composite inertia ten additions, where the congruence ``φ ℛ φ*`` costs 216 products.
The steps on numbers (:func:`child_pose`, :func:`root_column`, :func:`root_inertia`,
:func:`composite_force`) are inline kernels, written once for a number and for a lane number: the
batches of :mod:`sko.engine.lanes` take them on four states at once, so a state's ℳ in a batch
equals its single call's to rounding. The generic kernels (:func:`~sko.engine.crba.composite_inertias`,
:func:`~sko.engine.crba.mass_matrix`) carry 6 × 6 congruences and 6 × 6 transforms
of the columns at every step; they stay for every other body type.
"""

from __future__ import annotations

import numpy as np

from sko.engine.bodies.rigid import RIGID, RigidConstants, axis_joint, free_pose_only, on_an_axis
from sko.engine.borrow import borrowed
from sko.engine.fields import offsets
from sko.engine.layout import Flat
from sko.engine.jit import inline_kernel, kernel, register
from sko.engine.rigid_blocks import dot, held
from sko.engine.state_kernels import Row, Terms, fill_states

__all__ = ["Node", "POSE", "COMPOSITE", "NODE", "applies", "rigid_mass_matrix", "weight_rows", "base_rows",
           "ten_parameters",
           "child_pose", "composed_pose", "root_column", "axis_root_column", "root_inertia", "composite_force"]

#: Per body in the node buffer: its pose ``R`` (row-major, body axes to root axes) and ``p``, then
#: its composite inertia ``m``, ``h``, ``Ī_xx, Ī_xy, Ī_xz, Ī_yy, Ī_yz, Ī_zz`` (root frame).
Node = offsets("Node", rotation=9, position=3, mass=1, h=3, inertia=6)
POSE, COMPOSITE, NODE = Node.rotation, Node.mass, Node.SIZE


def applies(layout) -> bool:
    """Whether :func:`rigid_mass_matrix` takes the system of ``layout`` (a
    :class:`~sko.engine.state_layout.StateLayout`): every body compiled by the library's rigid
    body kernel, whose ``M`` is its constant spatial inertia and a child hangs from its parent's
    own frame (``Γ = I``), and every inertia the one of its ten parameters to rounding (a body's
    inertia is checked physical only to a relative 1e-9: one further off takes the generic
    kernels, which read all 36 entries)."""
    if not layout.bodies or not all(c is not None and c.kernel is RIGID for c in layout.compiled):
        return False
    o = int(RigidConstants.inertia)
    return all(_ten_parameters(np.asarray(c.constants[o: o + 36], dtype=float).reshape(6, 6)) for c in layout.compiled)


def _ten_parameters(M: np.ndarray) -> bool:
    """Whether the 6 × 6 ``M`` equals, to a few units of rounding, the rigid inertia
    ``[[Ī, h×], [h×*, m 1]]`` of the ten numbers :func:`rigid_mass_matrix` reads from it."""
    m, h, inertia = M[5, 5], np.array([M[2, 4], M[0, 5], M[1, 3]]), np.triu(M[:3, :3])
    inertia = inertia + np.triu(inertia, 1).T
    cross = np.array([[0.0, -h[2], h[1]], [h[2], 0.0, -h[0]], [-h[1], h[0], 0.0]])
    ten = np.block([[inertia, cross], [cross.T, m * np.eye(3)]])
    return bool(np.abs(ten - M).max() <= 8 * np.finfo(float).eps * np.abs(M).max(initial=0.0))


@inline_kernel
def weight_rows(data, wo):
    """The rows of ``Eᵀ`` and of ``Bᵀ`` (nine numbers each) of the rigid weight
    ``φ = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` row-major at ``data[wo]``, as :func:`child_pose` takes them."""
    return (held(data, wo, 3) + held(data, wo + 6, 3) + held(data, wo + 12, 3),
            held(data, wo + 3, 3) + held(data, wo + 9, 3) + held(data, wo + 15, 3))


@inline_kernel
def base_rows(rows, data, j):
    """The rows of ``Eᵀ`` and of ``Bᵀ`` (as :func:`weight_rows` gives a weight's) of the
    ``E = ᵏX_0 = [[E, 0], [B, E]]`` of the base body of state row ``j``, in the arena ``data``
    at ``Row.E`` with its strides."""
    eo, er, ec = rows[j, Row.E], rows[j, Row.E_ROW], rows[j, Row.E_COLUMN]
    bo = eo + 3 * er
    return ((data[eo], data[eo + er], data[eo + 2 * er], data[eo + ec], data[eo + er + ec], data[eo + 2 * er + ec],
             data[eo + 2 * ec], data[eo + er + 2 * ec], data[eo + 2 * er + 2 * ec]),
            (data[bo], data[bo + er], data[bo + 2 * er], data[bo + ec], data[bo + er + ec], data[bo + 2 * er + ec],
             data[bo + 2 * ec], data[bo + er + 2 * ec], data[bo + 2 * er + 2 * ec]))


@inline_kernel
def ten_parameters(data, mo):
    """``(m, h, (Ī_xx, Ī_xy, Ī_xz, Ī_yy, Ī_yz, Ī_zz))`` of the rigid inertia
    ``M = [[Ī, h×], [h×*, m 1]]`` row-major at ``data[mo]``, as :func:`root_inertia` takes them:
    ``h = (M₂₄, M₀₅, M₁₃)``."""
    return (data[mo + 35], (data[mo + 16], data[mo + 5], data[mo + 9]),
            (data[mo], data[mo + 1], data[mo + 2], data[mo + 7], data[mo + 8], data[mo + 14]))


@inline_kernel
def composed_pose(a, q, E, r):
    """The pose ``(R, p)`` in the root's frame (``R`` nine numbers row by row, ``p`` three) of a
    body whose parent's is ``(a, q)``, from its ``ᵏX_℘ = rot(E) xlt(r)`` (``E`` as three rows):
    ``R = R_℘ Eᵀ``, ``p = p_℘ + R_℘ r`` (RIGID.md, *The SKO model in body coordinates*)."""
    a00, a01, a02, a10, a11, a12, a20, a21, a22 = a
    (e00, e01, e02), (e10, e11, e12), (e20, e21, e22) = E
    r0, r1, r2 = r
    p = (q[0] + a00 * r0 + a01 * r1 + a02 * r2, q[1] + a10 * r0 + a11 * r1 + a12 * r2,
         q[2] + a20 * r0 + a21 * r1 + a22 * r2)
    R = (a00 * e00 + a01 * e01 + a02 * e02, a00 * e10 + a01 * e11 + a02 * e12, a00 * e20 + a01 * e21 + a02 * e22,
         a10 * e00 + a11 * e01 + a12 * e02, a10 * e10 + a11 * e11 + a12 * e12, a10 * e20 + a11 * e21 + a12 * e22,
         a20 * e00 + a21 * e01 + a22 * e02, a20 * e10 + a21 * e11 + a22 * e12, a20 * e20 + a21 * e21 + a22 * e22)
    return R, p


@inline_kernel
def child_pose(a, q, e, b):
    """:func:`composed_pose` from the child's weight ``φ = [[Eᵀ, Bᵀ], [0, Eᵀ]]`` (``B = −E r×``;
    ``e``, ``b``: the rows of ``Eᵀ`` and ``Bᵀ``, nine numbers each), ``r`` from ``Eᵀ B = −r×``."""
    e00, e01, e02, e10, e11, e12, e20, e21, e22 = e
    b00, b01, b02, b10, b11, b12, b20, b21, b22 = b
    r = (0.0 - (e20 * b10 + e21 * b11 + e22 * b12), 0.0 - (e00 * b20 + e01 * b21 + e02 * b22),
         0.0 - (e10 * b00 + e11 * b01 + e12 * b02))
    return composed_pose(a, q, ((e00, e10, e20), (e01, e11, e21), (e02, e12, e22)), r)


@register
def fill_off_axis(rows, reals, arena) -> int:
    """The states of the bodies :func:`rigid_mass_matrix` reads from the arena, at
    ``Terms.STRUCTURE``, with the constants written before: all but those on an axis
    (:func:`~sko.engine.bodies.rigid.on_an_axis`) and the roots on a free joint with a quaternion
    it takes (:func:`~sko.engine.bodies.rigid.free_pose_only`), of which it reads the constant
    ``H = I`` alone. −1, or the row that rejected its state."""
    for j in range(rows.shape[0]):
        row = rows[j]
        if not (on_an_axis(reals, row[Row.CONSTANTS]) or row[Row.PARENT] < 0 and free_pose_only(arena, row, reals)):
            status = fill_states(rows, reals, arena, Terms.STRUCTURE, False, j, j + 1)
            if status >= 0:
                return status
    return -1


@inline_kernel
def root_column(R, p, x):
    """The hinge column ``x = [s_ω; s_v]`` (six numbers, body axes) of a body at pose ``(R, p)``
    in the root's frame: ``[R s_ω; R s_v + p × R s_ω]``."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
    p0, p1, p2 = p
    x0, x1, x2, y0, y1, y2 = x
    w0, w1, w2 = r00 * x0 + r01 * x1 + r02 * x2, r10 * x0 + r11 * x1 + r12 * x2, r20 * x0 + r21 * x1 + r22 * x2
    return (w0, w1, w2, r00 * y0 + r01 * y1 + r02 * y2 + p1 * w2 - p2 * w1,
            r10 * y0 + r11 * y1 + r12 * y2 + p2 * w0 - p0 * w2, r20 * y0 + r21 * y1 + r22 * y2 + p0 * w1 - p1 * w0)


@inline_kernel
def axis_root_column(R, p, x):
    """:func:`root_column` of a joint's single column ``x = [s_ω; s_v]`` with a zero half, as a
    revolute joint's (``s_v = 0``: ``[w; p × w]``) or a prismatic joint's (``s_ω = 0``: ``[0; R s_v]``),
    or with neither; ``w = R s_ω`` about a coordinate axis ``s_ω = ±e_k`` a column of ``R``: the
    products by the zero entries left out."""
    x0, x1, x2, y0, y1, y2 = x
    if not (y0 == 0 and y1 == 0 and y2 == 0):
        return root_column(R, p, x)
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
    p0, p1, p2 = p
    if x1 == 0 and x2 == 0:
        w0, w1, w2 = r00 * x0, r10 * x0, r20 * x0
    elif x2 == 0 and x0 == 0:
        w0, w1, w2 = r01 * x1, r11 * x1, r21 * x1
    elif x0 == 0 and x1 == 0:
        w0, w1, w2 = r02 * x2, r12 * x2, r22 * x2
    else:
        w0, w1, w2 = r00 * x0 + r01 * x1 + r02 * x2, r10 * x0 + r11 * x1 + r12 * x2, r20 * x0 + r21 * x1 + r22 * x2
    return (w0, w1, w2, p1 * w2 - p2 * w1, p2 * w0 - p0 * w2, p0 * w1 - p1 * w0)


@inline_kernel
def root_inertia(R, p, m, g, i):
    """The ten parameters ``(m, h, Ī_xx, Ī_xy, Ī_xz, Ī_yy, Ī_yz, Ī_zz)`` (the order of
    :data:`Node` from ``mass``) in the root's frame of a body at pose ``(R, p)`` of mass ``m``,
    first moment ``g`` and rotational inertia ``i`` (``Ī_xx, Ī_xy, Ī_xz, Ī_yy, Ī_yz, Ī_zz``) in its
    own: ``Ī ← R Ī Rᵀ``, ``h ← R h``, then the parallel-axis shift to the root's origin,
    ``Ī + 2 (h·p) 1 − p hᵀ − h pᵀ + m ((p·p) 1 − p pᵀ)`` and ``h + m p``."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
    p0, p1, p2 = p
    g0, g1, g2 = g
    i00, i01, i02, i11, i12, i22 = i
    h0, h1, h2 = r00 * g0 + r01 * g1 + r02 * g2, r10 * g0 + r11 * g1 + r12 * g2, r20 * g0 + r21 * g1 + r22 * g2
    u00, u01, u02 = r00 * i00 + r01 * i01 + r02 * i02, r00 * i01 + r01 * i11 + r02 * i12, r00 * i02 + r01 * i12 + r02 * i22
    u10, u11, u12 = r10 * i00 + r11 * i01 + r12 * i02, r10 * i01 + r11 * i11 + r12 * i12, r10 * i02 + r11 * i12 + r12 * i22
    u20, u21, u22 = r20 * i00 + r21 * i01 + r22 * i02, r20 * i01 + r21 * i11 + r22 * i12, r20 * i02 + r21 * i12 + r22 * i22
    diagonal = 2.0 * (h0 * p0 + h1 * p1 + h2 * p2) + m * (p0 * p0 + p1 * p1 + p2 * p2)
    return (m, h0 + m * p0, h1 + m * p1, h2 + m * p2,
            u00 * r00 + u01 * r01 + u02 * r02 - 2.0 * p0 * h0 - m * p0 * p0 + diagonal,
            u00 * r10 + u01 * r11 + u02 * r12 - p0 * h1 - h0 * p1 - m * p0 * p1,
            u00 * r20 + u01 * r21 + u02 * r22 - p0 * h2 - h0 * p2 - m * p0 * p2,
            u10 * r10 + u11 * r11 + u12 * r12 - 2.0 * p1 * h1 - m * p1 * p1 + diagonal,
            u10 * r20 + u11 * r21 + u12 * r22 - p1 * h2 - h1 * p2 - m * p1 * p2,
            u20 * r20 + u21 * r21 + u22 * r22 - 2.0 * p2 * h2 - m * p2 * p2 + diagonal)


@inline_kernel
def composite_force(c, s):
    """``F = ℛ s = [Ī ω + h × v; m v − h × ω]`` for the composite inertia ``c`` (ten numbers,
    :func:`root_inertia`'s order) and the column ``s = [ω; v]``."""
    m, h0, h1, h2, i00, i01, i02, i11, i12, i22 = c
    w0, w1, w2, v0, v1, v2 = s
    return (i00 * w0 + i01 * w1 + i02 * w2 + h1 * v2 - h2 * v1, i01 * w0 + i11 * w1 + i12 * w2 + h2 * v0 - h0 * v2,
            i02 * w0 + i12 * w1 + i22 * w2 + h0 * v1 - h1 * v0, m * v0 - (h1 * w2 - h2 * w1),
            m * v1 - (h2 * w0 - h0 * w2), m * v2 - (h0 * w1 - h1 * w0))


@register
def _gather_column(layout, S, out, c10, k, column):
    """Column ``column`` of body ``k``'s (composite inertia ``c10``): ``F = ℛ(k) s`` dotted with
    the columns of k's ancestors and of k up to ``column`` itself, by runs of contiguous columns
    (``Flat.RUN``): first the run down to ``column``, then the others (none in a chain numbered
    from its root)."""
    F = composite_force(c10, held(S, 6 * column, 6))
    u = layout[k, Flat.RUN]
    _column_entries(S, F, out, column, layout[u, Flat.DOF], column + 1)
    a = layout[u, Flat.PARENT]
    while a >= 0:
        u = layout[a, Flat.RUN]
        _column_entries(S, F, out, column, layout[u, Flat.DOF], layout[a, Flat.DOF] + layout[a, Flat.HINGE_DIM])
        a = layout[u, Flat.PARENT]


@register
def _column_entries(S, F, out, column, lo, hi):
    """``ℳ(i, column) = ℳ(column, i) = s_iᵀ F`` for the columns ``i = lo … hi − 1`` (``S``: six
    numbers per column)."""
    for i in range(lo, hi):
        x = dot(held(S, 6 * i, 6), F)
        out[i, column] = x
        out[column, i] = x


@kernel(entry=True)
def rigid_mass_matrix(layout, data, nodes, S, out, rows, reals):
    """``ℳ`` (``out``, nv × nv, zero on entry) of a tree of rigid bodies (module docstring) from
    the flat ``layout`` and the arena ``data`` the call filled from ``q`` (weights, ``H``, ``M``);
    ``nodes`` holds :data:`NODE` entries per body, ``S`` six per hinge column. A body on an axis
    (:func:`~sko.engine.bodies.rigid.on_an_axis`; ``rows``, ``reals``: the state table) computes
    its ``ᵏX_℘ = rot(E) xlt(r)`` at the arena's ``q`` in registers
    (:func:`~sko.engine.bodies.rigid.axis_joint`) and composes its pose from it
    (:func:`composed_pose`): its weight need not be filled (:func:`fill_off_axis`)."""
    layout, data, nodes, S, out = borrowed(layout), borrowed(data), borrowed(nodes), borrowed(S), borrowed(out)
    rows, reals = borrowed(rows), borrowed(reals)
    n = layout.shape[0]
    for j in range(n):  # scatter: poses, columns, inertias in the root's frame
        p, no, mo = layout[j, Flat.PARENT], NODE * j, layout[j, Flat.M]
        ho, do = layout[j, Flat.H], layout[j, Flat.DOF]
        if p < 0:  # the root's own frame: its columns and inertia as they are
            zero = 0.0 * data[mo]
            one = 1.0 + zero
            R, x = (one, zero, zero, zero, one, zero, zero, zero, one), (zero, zero, zero)
            for c in range(6 * layout[j, Flat.HINGE_DIM]):
                S[6 * do + c] = data[ho + c]
            mass, g, inertia = ten_parameters(data, mo)
            c10 = (mass,) + g + inertia
        else:
            po = NODE * p + POSE
            if on_an_axis(reals, rows[j, Row.CONSTANTS]):  # its ᵏX_℘ from q in registers
                E, r0, r1, r2, column = axis_joint(data, rows[j], reals)
                if layout[p, Flat.PARENT] < 0:  # at the root's identity pose
                    (e00, e01, e02), (e10, e11, e12), (e20, e21, e22) = E
                    R, x = (e00, e10, e20, e01, e11, e21, e02, e12, e22), (r0, r1, r2)
                else:
                    R, x = composed_pose(held(nodes, po, 9), held(nodes, po + Node.position, 3), E, (r0, r1, r2))
                s = axis_root_column(R, x, column)
                for i in range(6):
                    S[6 * do + i] = s[i]
            else:
                R, x = child_pose(held(nodes, po, 9), held(nodes, po + Node.position, 3), *weight_rows(data, layout[j, Flat.W]))
                for c in range(layout[j, Flat.HINGE_DIM]):
                    s = root_column(R, x, held(data, ho + 6 * c, 6))
                    for i in range(6):
                        S[6 * (do + c) + i] = s[i]
            mass, g, inertia = ten_parameters(data, mo)
            c10 = root_inertia(R, x, mass, g, inertia)
        for i in range(9):
            nodes[no + POSE + i] = R[i]
        for i in range(3):
            nodes[no + Node.position + i] = x[i]
        for i in range(10):
            nodes[no + COMPOSITE + i] = c10[i]
    for k in range(n - 1, -1, -1):  # gather: ℛ(k) complete; its columns against k's and its ancestors'
        co, dk, hk = NODE * k + COMPOSITE, layout[k, Flat.DOF], layout[k, Flat.HINGE_DIM]
        c10 = held(nodes, co, 10)
        if hk == 1:  # the common joint: no loop over k's columns (each exit of a short loop a misprediction from Python)
            _gather_column(layout, S, out, c10, k, dk)
        else:
            for c in range(hk):
                _gather_column(layout, S, out, c10, k, dk + c)
        p = layout[k, Flat.PARENT]
        if p >= 0:
            po = NODE * p + COMPOSITE
            for i in range(10):
                nodes[po + i] += c10[i]
