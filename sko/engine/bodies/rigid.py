"""The state kernels of rigid bodies and geared rotor links (RIGID.md, *The SKO model in body
coordinates*; BODIES.md): the contract of :mod:`sko.engine.state_kernels`, on the joint library of
:mod:`sko.engine.joints`.

A rigid body gives ``E = ᵏX_o`` (its frame from the attachment's), ``H = S*``, ``M = I_k`` (a
constant), ``a = ᵏX_o γ_o + c_J + v × S θ̇``, ``b = v ×* I_k v`` and its own frame's record
(``Γ = I``, ``γ = 0``, its pose and velocity). On a revolute, helical or prismatic joint, not
reversed, every level of ``terms`` takes :func:`_single_axis`: the same numbers with
``ᵏX_o = rot(E) xlt(r)`` as ``(E, r)`` and every 6-vector in registers. Any other joint goes
through :func:`hinge`, which the rotor link and the cluster's members use too.

Transforms are products of rotations and translations (Featherstone §2.8):
``rot(E_J) xlt(r_J) rot(E_T) xlt(r_T) = rot(E_J E_T) xlt(E_Tᵀ r_J + r_T)``, and
``X [w; u] = [E w; E (u − r × w)]``.
"""

from __future__ import annotations

import numpy as np
from numba import from_dtype, types

from sko.engine.borrow import matrix_view
from sko.engine.fields import offsets
from sko.engine.jit import inline_kernel, kernel, native_address, native_caller, register
from sko.engine.rigid_blocks import dot6, held, put_transform, put_weight
from sko.engine.joints import (CONSTANT_MOTION, FREE, HELICAL, PRISMATIC, JointConstants, joint_constants,
                               joint_kinematics_at, quaternion_ok, scaled_quaternion_rows)
from sko.bodies.contract import CompiledState
from sko.engine.state_kernels import DTYPES, Record, Row, StateKernel, Terms, numeric_state
from sko.spatial import plucker_translation

__all__ = ["Placement", "RigidConstants", "RotorConstants", "HingeWork", "RotorWork", "placement_constants", "hinge",
           "hinge_address", "call_hinge", "axis_transform", "coordinate_axis_transform", "axis_joint",
           "on_an_axis", "on_a_free_joint", "free_pose_only", "placed_transform", "RIGID", "ROTOR",
           "pack_rigid", "pack_rotor", "transform", "motion_cross", "force_cross", "bias", "real_dot"]

#: A free joint's coordinates: the quaternion ``(w, x, y, z)``, then the position.
FreeCoordinates = offsets("FreeCoordinates", quaternion=4, position=3)
#: A placement ``X_T = rot(E) xlt(r)``: ``E`` (row-major), ``r``.
Placement = offsets("Placement", rotation=9, translation=3)
#: A rigid body's constants: its joint, placement, spatial inertia (row-major), mass, centre of mass.
RigidConstants = offsets("RigidConstants", joint=JointConstants.SIZE, placement=Placement.SIZE, inertia=36, mass=1,
                         com=3)
#: A geared rotor link's: a rigid body's, then the gear ratio, the rotor axis, the rotor inertia (3 × 3).
RotorConstants = offsets("RotorConstants", rigid=RigidConstants.SIZE, ratio=1, axis=3, rotor_inertia=9)
#: The scratch of :func:`hinge`: ``X_J`` (in the ``(E, r)`` storage of the joint kernels), ``S``
#: (6 × nv), ``c_J``, ``X = ᵏX_o``, then ``v_J = S θ̇``, ``v``, the velocity-product acceleration
#: and the pose ``R`` (row-major), ``p``; a kernel's own scratch follows at ``HingeWork.SIZE``.
HingeWork = offsets("HingeWork", XJ=36, S=36, c=6, X=36, vJ=6, v=6, acc=6, rotation=9, position=3)
#: A rotor link's scratch after :data:`HingeWork`: ``ω_o``, ``w = ω_o + N u θ̇``, ``I_r w``.
RotorWork = offsets("RotorWork", omega=3, w=3, Iw=3)


def placement_constants(X) -> np.ndarray:
    """The fields of :data:`Placement` for a placement ``X = rot(E) xlt(r)`` (checked by
    :func:`~sko.spatial.checked_transform`)."""
    X = np.asarray(X, dtype=float)
    return np.concatenate([X[:3, :3].ravel(), plucker_translation(X)])


# ---------------------------------------------------------------------------- 6-vectors in registers
@inline_kernel
def transform(E, r0, r1, r2, a, o, add):
    """``add + X x`` for ``X = rot(E) xlt(r)`` (``E`` as three rows) and ``x = a[o: o + 6]``, six
    numbers: ``X [w; u] = [E w; E (u − r × w)]``."""
    w0, w1, w2 = a[o], a[o + 1], a[o + 2]
    u0, u1, u2 = a[o + 3] - (r1 * w2 - r2 * w1), a[o + 4] - (r2 * w0 - r0 * w2), a[o + 5] - (r0 * w1 - r1 * w0)
    (e00, e01, e02), (e10, e11, e12), (e20, e21, e22) = E
    return (add[0] + e00 * w0 + e01 * w1 + e02 * w2, add[1] + e10 * w0 + e11 * w1 + e12 * w2,
            add[2] + e20 * w0 + e21 * w1 + e22 * w2, add[3] + e00 * u0 + e01 * u1 + e02 * u2,
            add[4] + e10 * u0 + e11 * u1 + e12 * u2, add[5] + e20 * u0 + e21 * u1 + e22 * u2)


@inline_kernel
def motion_cross(v, x):
    """``v × x = crm(v) x`` for motion vectors ``v = [ω; u]``, ``x``, six numbers each."""
    w0, w1, w2, u0, u1, u2 = v
    x0, x1, x2, x3, x4, x5 = x
    return (w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0, u1 * x2 - u2 * x1 + w1 * x5 - w2 * x4,
            u2 * x0 - u0 * x2 + w2 * x3 - w0 * x5, u0 * x1 - u1 * x0 + w0 * x4 - w1 * x3)


@register
def force_cross(v, f):
    """``v ×* f = crf(v) f = [ω × n + u × g; ω × g]`` for a motion ``v = [ω; u]`` and a force
    ``f = [n; g]``, six numbers each (or six lane numbers)."""
    w0, w1, w2, u0, u1, u2 = v
    n0, n1, n2, g0, g1, g2 = f
    return (w1 * n2 - w2 * n1 + u1 * g2 - u2 * g1, w2 * n0 - w0 * n2 + u2 * g0 - u0 * g2,
            w0 * n1 - w1 * n0 + u0 * g1 - u1 * g0, w1 * g2 - w2 * g1, w2 * g0 - w0 * g2, w0 * g1 - w1 * g0)


@inline_kernel
def bias(reals, io, v):
    """``v ×* I v = [ω × n + u × f; ω × f]`` with ``[n; f] = I v`` (RIGID.md) for ``v = [ω; u]``,
    six numbers, and ``I`` the 6 × 6 inertia at ``reals[io:]`` (row-major)."""
    w0, w1, w2, u0, u1, u2 = v
    n0, n1, n2 = (dot6(reals, io, 1, w0, w1, w2, u0, u1, u2), dot6(reals, io + 6, 1, w0, w1, w2, u0, u1, u2),
                  dot6(reals, io + 12, 1, w0, w1, w2, u0, u1, u2))
    f0, f1, f2 = (dot6(reals, io + 18, 1, w0, w1, w2, u0, u1, u2), dot6(reals, io + 24, 1, w0, w1, w2, u0, u1, u2),
                  dot6(reals, io + 30, 1, w0, w1, w2, u0, u1, u2))
    return (w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1, w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2,
            w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0, w1 * f2 - w2 * f1, w2 * f0 - w0 * f2, w0 * f1 - w1 * f0)


# ---------------------------------------------------------------------------- the hinge
@kernel
def hinge(arena, reals, jc, qo, vo, io, wo, terms):
    """The joint terms of a body (Python: :func:`sko.bodies.hinge.hinge_state`) whose joint
    constants (:data:`JointConstants`, then :data:`Placement`) start at ``reals[jc]``, its ``q``
    and ``θ̇`` at ``arena[qo]``, ``arena[vo]``, hanging from the record at ``arena[io]``, into the
    :data:`HingeWork` at ``arena[wo]``; those beyond ``X`` and ``S`` as asked by ``terms`` (zero
    otherwise). False when the joint rejects the state."""
    XJ, S = matrix_view(arena, wo + HingeWork.XJ, 6, 6), matrix_view(arena, wo + HingeWork.S, 6, 6)
    X, c = matrix_view(arena, wo + HingeWork.X, 6, 6), arena[wo + HingeWork.c: wo + HingeWork.c + 6]
    vJ, vel, acc_at = wo + HingeWork.vJ, wo + HingeWork.v, wo + HingeWork.acc
    code, nv = int(reals[jc + JointConstants.code]), int(reals[jc + JointConstants.nv])
    if not joint_kinematics_at(code, reals[jc + JointConstants.reverse] != 0, reals, jc + JointConstants.nv,
                               arena, qo, arena, vo, XJ, S, c):
        return False
    xt = jc + JointConstants.SIZE  # E_T (row-major), r_T: read once (a store to X could alias them for the compiler)
    t00, t01, t02, t10, t11, t12, t20, t21, t22 = (reals[xt], reals[xt + 1], reals[xt + 2], reals[xt + 3],
                                                   reals[xt + 4], reals[xt + 5], reals[xt + 6], reals[xt + 7],
                                                   reals[xt + 8])
    j0, j1, j2 = XJ[0, 3], XJ[1, 3], XJ[2, 3]
    rt = xt + Placement.translation
    r0 = reals[rt] + t00 * j0 + t10 * j1 + t20 * j2
    r1 = reals[rt + 1] + t01 * j0 + t11 * j1 + t21 * j2
    r2 = reals[rt + 2] + t02 * j0 + t12 * j1 + t22 * j2
    for i in range(3):  # X = [[E, 0], [−E r×, E]], E = E_J E_T
        a0, a1, a2 = XJ[i, 0], XJ[i, 1], XJ[i, 2]
        e0 = a0 * t00 + a1 * t10 + a2 * t20
        e1 = a0 * t01 + a1 * t11 + a2 * t21
        e2 = a0 * t02 + a1 * t12 + a2 * t22
        X[i, 0], X[i, 1], X[i, 2] = e0, e1, e2
        X[i, 3] = X[i, 4] = X[i, 5] = 0
        X[i + 3, 0], X[i + 3, 1], X[i + 3, 2] = e2 * r1 - e1 * r2, e0 * r2 - e2 * r0, e1 * r0 - e0 * r1
        X[i + 3, 3], X[i + 3, 4], X[i + 3, 5] = e0, e1, e2
    if terms == Terms.STRUCTURE:
        for i in range(HingeWork.vJ, HingeWork.SIZE):
            arena[wo + i] = 0
        return True
    for i in range(6):  # v_J = S θ̇
        s = 0 * XJ[0, 0]
        for j in range(nv):
            s += S[i, j] * arena[vo + j]
        arena[vJ + i] = s
    E = ((X[0, 0], X[0, 1], X[0, 2]), (X[1, 0], X[1, 1], X[1, 2]), (X[2, 0], X[2, 1], X[2, 2]))
    v_J = (arena[vJ], arena[vJ + 1], arena[vJ + 2], arena[vJ + 3], arena[vJ + 4], arena[vJ + 5])
    v = transform(E, r0, r1, r2, arena, io + Record.velocity, v_J)  # X v_o + v_J
    acc = transform(E, r0, r1, r2, arena, io + Record.gamma, (c[0], c[1], c[2], c[3], c[4], c[5]))  # X γ_o + c_J
    cross = motion_cross(v, v_J)
    for i in range(6):
        arena[vel + i], arena[acc_at + i] = v[i], acc[i] + cross[i]  # a += v × v_J
    if terms == Terms.POSE:
        ro, Ro, po = io + Record.rotation, wo + HingeWork.rotation, wo + HingeWork.position
        for i in range(3):
            R0, R1, R2 = arena[ro + 3 * i], arena[ro + 3 * i + 1], arena[ro + 3 * i + 2]
            for j in range(3):
                arena[Ro + 3 * i + j] = R0 * X[j, 0] + R1 * X[j, 1] + R2 * X[j, 2]  # R = R_o Eᵀ
            arena[po + i] = arena[io + Record.position + i] + R0 * r0 + R1 * r1 + R2 * r2  # p = p_o + R_o r
    else:
        for i in range(HingeWork.rotation, HingeWork.SIZE):
            arena[wo + i] = 0
    return True


@inline_kernel
def _rigid_terms(arena, row, reals, c0, wo, terms, constants):
    """What a rigid body and a rotor link (constants from :data:`RigidConstants` at ``reals[c0]``)
    share, after :func:`hinge` (work at ``wo``): the first 6 rows of ``E`` (``ᵏX_o``), the first 6
    columns of ``H`` (``S*``), ``a``, ``b``, ``𝒱`` (first 6 entries), the own frame's record and
    the potential; with ``constants``, ``M``'s upper 6 × 6 block and the record's
    ``Γ = [I, 0]``, ``γ = 0``."""
    m = row[Row.NODE_DIM]
    X, S = matrix_view(arena, wo + HingeWork.X, 6, 6), matrix_view(arena, wo + HingeWork.S, 6, 6)
    vel, acc, Ro, po = wo + HingeWork.v, wo + HingeWork.acc, wo + HingeWork.rotation, wo + HingeWork.position
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    for i in range(6):
        for j in range(6):
            arena[eo + i * er + j * ec] = X[i, j]
    hb, ic = row[Row.H], c0 + RigidConstants.inertia
    for j in range(row[Row.NV]):
        for i in range(6):
            arena[hb + j * m + i] = S[i, j]
    ao, bo, vo, mo = row[Row.A], row[Row.B], row[Row.VELOCITY], row[Row.M]
    for i in range(6):
        arena[ao + i] = arena[acc + i]
        arena[vo + i] = arena[vel + i]
    if constants:
        for i in range(6):
            for j in range(6):
                arena[mo + i * m + j] = reals[ic + 6 * i + j]
    if terms == Terms.STRUCTURE:
        for i in range(6):
            arena[bo + i] = 0
    else:
        b = bias(reals, ic, (arena[vel], arena[vel + 1], arena[vel + 2], arena[vel + 3], arena[vel + 4],
                             arena[vel + 5]))
        for i in range(6):
            arena[bo + i] = b[i]
    rec = row[Row.RECORDS]  # own frame: γ = 0, pose, velocity, Γ = [I, 0] (6 × m)
    if constants:
        for i in range(6):
            arena[rec + Record.gamma + i] = 0
            for j in range(m):
                arena[rec + Record.SIZE + i * m + j] = 1.0 if i == j else 0.0
    for i in range(6):
        arena[rec + Record.velocity + i] = arena[vel + i]
    for i in range(9):
        arena[rec + Record.rotation + i] = arena[Ro + i]
    for i in range(3):
        arena[rec + Record.position + i] = arena[po + i]
    cm = 0 * X[0, 0]  # the potential −m g · (p + R c)
    if terms == Terms.POSE:
        for i in range(3):
            ci = arena[po + i]
            for j in range(3):
                ci += arena[Ro + 3 * i + j] * reals[c0 + RigidConstants.com + j]
            cm -= reals[i] * ci
    arena[row[Row.POTENTIAL]] = reals[c0 + RigidConstants.mass] * cm


def _hinge_types(dtype) -> tuple:
    """The numba types of :func:`hinge`'s arguments for an arena of ``dtype``."""
    return (types.Array(from_dtype(np.dtype(dtype)), 1, "C"), types.Array(types.float64, 1, "C"), *(types.int64,) * 6)


def hinge_address(dtype) -> int:
    """The address of :func:`hinge` compiled for arenas of ``dtype`` (the column ``Row.JOINT`` of
    the state table)."""
    return native_address(hinge, _hinge_types(dtype))


#: ``call_hinge(row[Row.JOINT], (arena, reals, jc, qo, vo, io, wo, terms))``: :func:`hinge` at its
#: address. The library's state kernels call it so, not directly: a kernel's machine code holds
#: a copy of every kernel it calls directly, optimized and generated again with it, and the joint
#: terms (with the joint library's switch) would be compiled again in each of them.
call_hinge = native_caller(types.boolean, False, lambda argtypes: any(argtypes == _hinge_types(d) for d in DTYPES))


# ---------------------------------------------------------------------------- rigid bodies
def _rigid(arena, row, reals, terms, constants):
    """A :class:`~sko.bodies.rigid.RigidBody` (module docstring)."""
    c0 = row[Row.CONSTANTS]
    if on_an_axis(reals, c0):
        return _single_axis(arena, row, reals, terms, constants)
    if on_a_free_joint(reals, c0) and terms == Terms.STRUCTURE:
        return _free_structure(arena, row, reals, constants)
    return _any_joint(arena, row, reals, terms, constants)


@kernel
def _any_joint(arena, row, reals, terms, constants):
    """:func:`_rigid` on any joint of the library, through :func:`hinge`."""
    c0, wo = row[Row.CONSTANTS], row[Row.SCRATCH]
    if not call_hinge(row[Row.JOINT], (arena, reals, c0, row[Row.Q], row[Row.V], row[Row.INBOARD], wo, terms)):
        return False
    _rigid_terms(arena, row, reals, c0, wo, terms, constants)
    return True


@register
def axis_transform(reals, xt, x, y, z, c, s, lin):
    """``(E, r0, r1, r2)`` of ``ᵏX_o = rot(E) xlt(r) = X_J X_T`` for a joint about the unit axis
    ``u = (x, y, z)``: ``E_J = I − s K + (1 − c) K²`` (``K = u×``, Rodrigues; ``c, s`` the cosine and
    sine of its angle), ``r_J = lin u``, placed by :func:`placed_transform`; on a coordinate axis
    ``u = ±e_k`` by :func:`coordinate_axis_transform`. On numbers or on a block's lanes."""
    k = 2 if x == 0 and y == 0 else 0 if y == 0 and z == 0 else 1 if z == 0 and x == 0 else -1
    if k >= 0:
        return coordinate_axis_transform(reals, xt, k, x + y + z, c, s, lin)
    d = 1 - c
    J = ((1 + d * (x * x - 1), s * z + d * x * y, d * x * z - s * y),
         (d * x * y - s * z, 1 + d * (y * y - 1), s * x + d * y * z),
         (s * y + d * x * z, d * y * z - s * x, 1 + d * (z * z - 1)))
    return placed_transform(reals, xt, J, lin * x, lin * y, lin * z)


@register
def coordinate_axis_transform(reals, xt, k, u, c, s, lin):
    """:func:`axis_transform` on the axis ``u e_k`` (``u = ±1``; RIGID.md, *Joints about a
    coordinate axis*): with ``(i, j, k)`` cyclic, ``E_J`` turns rows ``i`` and ``j`` in their plane
    (``c e_i + u s e_j`` and ``c e_j − u s e_i``) and keeps row ``k``, so ``E = E_J E_T`` combines
    two rows of ``E_T`` in pairs, and ``r = r_T + lin u t_k`` takes the row ``t_k`` of ``E_T``."""
    i, j = (k + 1) % 3, (k + 2) % 3
    ti, tj, tk = held(reals, xt + 3 * i, 3), held(reals, xt + 3 * j, 3), held(reals, xt + 3 * k, 3)
    us, ul, zero = u * s, u * lin, 0.0 * s
    Ei = (c * ti[0] + us * tj[0], c * ti[1] + us * tj[1], c * ti[2] + us * tj[2])
    Ej = (c * tj[0] - us * ti[0], c * tj[1] - us * ti[1], c * tj[2] - us * ti[2])
    Ek = (tk[0] + zero, tk[1] + zero, tk[2] + zero)
    rt = xt + Placement.translation
    r0, r1, r2 = reals[rt] + ul * tk[0], reals[rt + 1] + ul * tk[1], reals[rt + 2] + ul * tk[2]
    if k == 0:
        return (Ek, Ei, Ej), r0, r1, r2
    if k == 1:
        return (Ej, Ek, Ei), r0, r1, r2
    return (Ei, Ej, Ek), r0, r1, r2


@register
def placed_transform(reals, xt, J, rj0, rj1, rj2):
    """``(E, r0, r1, r2)`` of ``ᵏX_o = rot(E) xlt(r) = X_J X_T`` for the joint's
    ``X_J = rot(E_J) xlt(r_J)`` (``E_J`` as the three rows ``J``) and the placement ``X_T``
    (:data:`Placement`) at ``reals[xt]``: ``E = E_J E_T``, ``r = r_T + E_Tᵀ r_J`` (module
    docstring; the products of :func:`hinge`). On numbers or on a block's lanes."""
    (j00, j01, j02), (j10, j11, j12), (j20, j21, j22) = J
    t00, t01, t02, t10, t11, t12, t20, t21, t22 = (reals[xt], reals[xt + 1], reals[xt + 2], reals[xt + 3],
                                                   reals[xt + 4], reals[xt + 5], reals[xt + 6], reals[xt + 7],
                                                   reals[xt + 8])
    rt = xt + Placement.translation
    r0 = reals[rt] + t00 * rj0 + t10 * rj1 + t20 * rj2
    r1 = reals[rt + 1] + t01 * rj0 + t11 * rj1 + t21 * rj2
    r2 = reals[rt + 2] + t02 * rj0 + t12 * rj1 + t22 * rj2
    E = ((j00 * t00 + j01 * t10 + j02 * t20, j00 * t01 + j01 * t11 + j02 * t21, j00 * t02 + j01 * t12 + j02 * t22),
         (j10 * t00 + j11 * t10 + j12 * t20, j10 * t01 + j11 * t11 + j12 * t21, j10 * t02 + j11 * t12 + j12 * t22),
         (j20 * t00 + j21 * t10 + j22 * t20, j20 * t01 + j21 * t11 + j22 * t21, j20 * t02 + j21 * t12 + j22 * t22))
    return E, r0, r1, r2


@register
def axis_joint(arena, row, reals):
    """``(E, r0, r1, r2, S)`` of a body on a revolute (helical) or prismatic joint at the arena's
    ``q``: ``ᵏX_o = rot(E) xlt(r)`` (:func:`axis_transform`; ``E`` as three rows) and
    ``S = [s_ω; s_v]`` (six numbers; :func:`_single_axis`)."""
    c0 = row[Row.CONSTANTS]
    jp, xt = c0 + JointConstants.parameters, c0 + RigidConstants.placement
    x, y, z = reals[jp], reals[jp + 1], reals[jp + 2]
    theta = arena[row[Row.Q]]
    if int(reals[c0 + JointConstants.code]) == HELICAL:
        c, s, lin = np.cos(theta), np.sin(theta), reals[jp + 3] * theta
        S = (x, y, z, reals[jp + 3] * x, reals[jp + 3] * y, reals[jp + 3] * z)
    else:
        c, s, lin = 1.0 + 0 * theta, 0 * theta, theta
        S = (0.0, 0.0, 0.0, x, y, z)
    E, r0, r1, r2 = axis_transform(reals, xt, x, y, z, c, s, lin)
    return E, r0, r1, r2, S


@register
def on_an_axis(reals, c0) -> bool:
    """Whether the joint whose constants start at ``reals[c0]`` is a revolute (helical) or
    prismatic joint, not reversed: :func:`_rigid` takes :func:`_single_axis` for it."""
    code = int(reals[c0 + JointConstants.code])
    return reals[c0 + JointConstants.reverse] == 0 and (code == HELICAL or code == PRISMATIC)


@register
def on_a_free_joint(reals, c0) -> bool:
    """Whether the joint whose constants start at ``reals[c0]`` is a free joint, not reversed:
    :func:`_rigid` takes :func:`_free_structure` for it at ``Terms.STRUCTURE``."""
    return reals[c0 + JointConstants.reverse] == 0 and int(reals[c0 + JointConstants.code]) == FREE


@register
def free_pose_only(arena, row, reals) -> bool:
    """Whether the body of ``row`` is on a free joint, not reversed, with a quaternion the joint
    takes: its ``H = I``, written with the constants, is all a request that reads no pose of it
    needs (a root of :func:`~sko.engine.mass_matrix.rigid_mass_matrix`)."""
    if not on_a_free_joint(reals, row[Row.CONSTANTS]):
        return False
    w, x, y, z = held(arena, row[Row.Q] + FreeCoordinates.quaternion, 4)
    return quaternion_ok(w, x, y, z)


@register
def _single_axis(arena, row, reals, terms, constants):
    """:func:`_rigid` for a revolute (helical) or prismatic joint, not reversed:
    ``ᵏX_o = rot(E) xlt(r)`` as ``(E, r)`` and every 6-vector in registers, no ``X_J``, ``S`` or
    6 × 6 ``X`` stored. What no state of such a joint changes is written with the ``constants``
    only: ``H = S* = [s_ω; s_v]*``, ``M``, the zero block of ``E``, the record's
    ``Γ``, ``γ`` and, below ``POSE``, pose and potential (zero: not asked for; at ``POSE``
    :func:`_pose` writes them at every state). The joint
    (:func:`~sko.engine.joints.joint_kinematics_at`): ``E_J = R_u(θ)ᵀ``, ``r_J = h θ u``,
    ``S = [u; h u]`` (pitch ``h``) or ``E_J = I``, ``r_J = θ u``, ``S = [0; u]``, and ``c_J = 0``."""
    c0, io = row[Row.CONSTANTS], row[Row.INBOARD]
    E, r0, r1, r2, (sw0, sw1, sw2, sv0, sv1, sv2) = axis_joint(arena, row, reals)
    _pose_rows(arena, row, E, r0, r1, r2, constants)
    rec, ao, bo, vo = row[Row.RECORDS], row[Row.A], row[Row.B], row[Row.VELOCITY]
    if constants:
        hb = row[Row.H]
        arena[hb], arena[hb + 1], arena[hb + 2], arena[hb + 3], arena[hb + 4], arena[hb + 5] = (sw0, sw1, sw2, sv0, sv1,
                                                                                              sv2)
        _constant_terms(arena, row, reals, c0, terms)
    if terms == Terms.STRUCTURE:
        return True
    if terms == Terms.POSE:
        _pose(arena, row, reals, E, r0, r1, r2)
    td = arena[row[Row.V]]
    vj = (sw0 * td, sw1 * td, sw2 * td, sv0 * td, sv1 * td, sv2 * td)
    zero = 0 * td
    v = transform(E, r0, r1, r2, arena, io + Record.velocity, vj)  # X v_o + v_J
    acc = transform(E, r0, r1, r2, arena, io + Record.gamma, (zero, zero, zero, zero, zero, zero))  # X γ_o
    cross = motion_cross(v, vj)
    b = bias(reals, c0 + RigidConstants.inertia, v)
    for i in range(6):
        arena[ao + i] = acc[i] + cross[i]
        arena[vo + i] = arena[rec + Record.velocity + i] = v[i]
        arena[bo + i] = b[i]
    return True


@inline_kernel
def _pose_rows(arena, row, E, r0, r1, r2, constants):
    """``E = ᵏX_o = [[E, 0], [−E r×, E]]`` of ``(E, r)`` (``E`` as three rows) into the arena,
    its zero block with ``constants`` only: as the weight ``φ = E*`` where a body's ``E`` is its
    weight's transpose (``Row.E_ROW`` 1, at its parent's own frame), else row-major; row by row
    (:func:`~sko.engine.rigid_blocks.put_weight`, :func:`~sko.engine.rigid_blocks.put_transform`)."""
    B = (_lower_row(E[0], r0, r1, r2), _lower_row(E[1], r0, r1, r2), _lower_row(E[2], r0, r1, r2))
    if row[Row.E_ROW] == 1:
        put_weight(arena, row[Row.E], E, B, constants)
    else:
        put_transform(arena, row[Row.E], E, B, constants)


@register
def _lower_row(e, r0, r1, r2):
    """A row of ``−E r×`` from the row ``e`` of ``E`` and ``r``."""
    e0, e1, e2 = e
    return e2 * r1 - e1 * r2, e0 * r2 - e2 * r0, e1 * r0 - e0 * r1


@register
def _constant_terms(arena, row, reals, c0, terms):
    """What no state of a body on a joint of constant ``S`` changes, but ``H``: ``M``, the own
    frame's record's ``Γ = I`` and ``γ = 0``, the pose and potential zero (at ``POSE``,
    :func:`_pose` writes them at every state) and, at ``STRUCTURE``, ``a``, ``b``, ``𝒱`` zero."""
    rec, mo, ic = row[Row.RECORDS], row[Row.M], c0 + RigidConstants.inertia
    for i in range(36):
        arena[mo + i] = reals[ic + i]
        arena[rec + Record.SIZE + i] = 1.0 if i % 7 == 0 else 0.0
    for i in range(Record.velocity):
        arena[rec + i] = 0
    arena[row[Row.POTENTIAL]] = 0
    ao, bo, vo = row[Row.A], row[Row.B], row[Row.VELOCITY]
    for i in range(6 if terms == Terms.STRUCTURE else 0):
        arena[ao + i] = arena[bo + i] = arena[vo + i] = arena[rec + Record.velocity + i] = 0


@register
def _free_structure(arena, row, reals, constants):
    """:func:`_rigid` at ``Terms.STRUCTURE`` for a free joint, not reversed: ``E_J = R(q)ᵀ``,
    ``r_J = p``, ``S = I`` (the joint of :func:`~sko.engine.joints.joint_kinematics_at`), placed
    and written as :func:`_single_axis` writes its pose; False for a quaternion of (near) zero norm."""
    c0, qo = row[Row.CONSTANTS], row[Row.Q]
    w, x, y, z = held(arena, qo + FreeCoordinates.quaternion, 4)
    if not quaternion_ok(w, x, y, z):
        return False
    J = scaled_quaternion_rows(arena, qo + FreeCoordinates.quaternion)
    p0, p1, p2 = held(arena, qo + FreeCoordinates.position, 3)
    E, r0, r1, r2 = placed_transform(reals, c0 + RigidConstants.placement, J, p0, p1, p2)
    _pose_rows(arena, row, E, r0, r1, r2, constants)
    if constants:
        hb = row[Row.H]
        for i in range(36):  # H = S* = I
            arena[hb + i] = 1.0 if i % 7 == 0 else 0.0
        _constant_terms(arena, row, reals, c0, Terms.STRUCTURE)
    return True


@inline_kernel
def _pose(arena, row, reals, E, r0, r1, r2):
    """The own frame's pose ``R = R_o Eᵀ``, ``p = p_o + R_o r`` into the record of a body on
    ``ᵏX_o = rot(E) xlt(r)`` (``E`` as three rows), and its potential ``−m g · (p + R c)`` (as
    :func:`_rigid_terms`)."""
    io, rec, c0 = row[Row.INBOARD], row[Row.RECORDS], row[Row.CONSTANTS]
    ro, Ro, po, cc = io + Record.rotation, rec + Record.rotation, rec + Record.position, c0 + RigidConstants.com
    (e00, e01, e02), (e10, e11, e12), (e20, e21, e22) = E
    c0x, c0y, c0z = reals[cc], reals[cc + 1], reals[cc + 2]
    cm = 0 * r0
    for i in range(3):
        R0, R1, R2 = arena[ro + 3 * i], arena[ro + 3 * i + 1], arena[ro + 3 * i + 2]
        a0, a1, a2 = R0 * e00 + R1 * e01 + R2 * e02, R0 * e10 + R1 * e11 + R2 * e12, R0 * e20 + R1 * e21 + R2 * e22
        p = arena[io + Record.position + i] + R0 * r0 + R1 * r1 + R2 * r2
        arena[Ro + 3 * i], arena[Ro + 3 * i + 1], arena[Ro + 3 * i + 2], arena[po + i] = a0, a1, a2, p
        cm -= reals[i] * (p + a0 * c0x + a1 * c0y + a2 * c0z)
    arena[row[Row.POTENTIAL]] = reals[c0 + RigidConstants.mass] * cm


#: The rigid body's state kernel (:class:`~sko.bodies.rigid.RigidBody`).
RIGID = StateKernel(_rigid, own_frame_identity=True, name="rigid body", constants=RigidConstants,
                    calls_hinge=True, rates=True)


def pack_rigid(body) -> CompiledState | None:
    """The compiled state of a :class:`~sko.bodies.rigid.RigidBody` (``None``: user-defined joint)."""
    constants = _rigid_constants(body)
    return None if constants is None else numeric_state(RIGID, constants, HingeWork.SIZE)


def _rigid_constants(body) -> np.ndarray | None:
    """The joint's, the placement's and the body's constants (``RigidConstants``; ``None``:
    user-defined joint)."""
    joint = joint_constants(body.joint, body.name)
    if joint is None:
        return None
    return np.concatenate([joint, placement_constants(body.placement), body.inertia.ravel(), [body._mass], body._com])


# ---------------------------------------------------------------------------- geared rotor links
def _rotor(arena, row, reals, terms, constants):
    """A :class:`~sko.bodies.rotor.GearedRotorLink` (module docstring of :mod:`sko.bodies.rotor`):
    ``E = [[ᵏX_o], [I₃, 0]]``, ``H = [S*, N uᵀ]``, ``M = diag(I_k, I_r)``,
    ``a = [ᵏX_o γ_o + c_J + v × S θ̇; γ_o(ω)]``, ``b = [v ×* I_k v; ω_o × I_r w]``."""
    c0, wo, io = row[Row.CONSTANTS], row[Row.SCRATCH], row[Row.INBOARD]
    if not call_hinge(row[Row.JOINT], (arena, reals, c0, row[Row.Q], row[Row.V], io, wo, terms)):
        return False
    _rigid_terms(arena, row, reals, c0, wo, terms, constants)
    eo, er, ec = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN]
    ratio, axis, inertia = c0 + RotorConstants.ratio, c0 + RotorConstants.axis, c0 + RotorConstants.rotor_inertia
    N = reals[ratio]
    if constants:  # E's rows 6..8 = [I₃, 0]; M's rotor blocks
        for i in range(3):
            for j in range(6):
                arena[eo + (6 + i) * er + j * ec] = 1.0 if i == j else 0.0
        mo = row[Row.M]
        for i in range(9):
            for j in range(9):
                if i >= 6 or j >= 6:
                    arena[mo + 9 * i + j] = reals[inertia + 3 * (i - 6) + j - 6] if (i >= 6 and j >= 6) else 0.0
    hb = row[Row.H]
    for i in range(3):
        arena[hb + 6 + i] = N * reals[axis + i]
    # ω_o, w = ω_o + N u θ̇; a[6:] = γ_o[:3], b[6:] = ω_o × I_r w
    rw = wo + HingeWork.SIZE  # the rotor's own scratch (RotorWork)
    om, wr, iw = rw + RotorWork.omega, rw + RotorWork.w, rw + RotorWork.Iw
    qd0 = arena[row[Row.V]]
    for i in range(3):
        arena[om + i] = arena[io + Record.velocity + i]
        arena[wr + i] = arena[om + i] + N * reals[axis + i] * qd0
        arena[row[Row.A] + 6 + i] = arena[io + Record.gamma + i]
        arena[row[Row.VELOCITY] + 6 + i] = arena[wr + i]
    for i in range(3):
        s = 0 * arena[om]
        for j in range(3):
            s += reals[inertia + 3 * i + j] * arena[wr + j]
        arena[iw + i] = s
    bo = row[Row.B] + 6
    arena[bo] = arena[om + 1] * arena[iw + 2] - arena[om + 2] * arena[iw + 1]
    arena[bo + 1] = arena[om + 2] * arena[iw] - arena[om] * arena[iw + 2]
    arena[bo + 2] = arena[om] * arena[iw + 1] - arena[om + 1] * arena[iw]
    return True


@register
def _cross3(a, b):
    """``a × b`` for three numbers each."""
    return a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]


@inline_kernel
def real_dot(arena, o, stride, vo, count):
    """``Σ_j arena[o + j · stride] arena[vo + j]`` of the real parts."""
    s = 0.0
    for j in range(count):
        s += arena[o + j * stride].real * arena[vo + j].real
    return s


#: the complex step of the joint terms along ``θ̇`` (DERIVATIVES.md Eq. 21), and the terms they are called with
_STEP, _MOTION = 1e-30, int(Terms.MOTION)


@register
def constant_motion(reals, c0) -> bool:
    """The joint whose constants start at ``reals[c0]`` (:data:`JointConstants`) is a library joint
    of constant ``S`` (``c_J = 0``), not reversed."""
    code = int(reals[c0 + JointConstants.code])
    return code < CONSTANT_MOTION.size and CONSTANT_MOTION[code] and reals[c0 + JointConstants.reverse] == 0


@register
def _motion_cross3(a, b):
    """``a × b`` of motions given as two triples each, ``((ω, u), (ω', u'))``: ``[ω × ω'; ω × u' + u × ω']``."""
    (w, u), (x, y) = a, b
    c0, c1, c2 = _cross3(w, y), _cross3(u, x), _cross3(w, x)
    return c2, (c0[0] + c1[0], c0[1] + c1[1], c0[2] + c1[2])


def _rotor_velocities(arena, row, reals, work, inboard, A, B, G, dA, dB, dG, stride):
    """A rotor link's partials along its ``θ̇`` and (``inboard``) the velocity ``v_o`` of the frame it
    hangs from, in closed form at the real state the arena holds (the ``velocities`` of
    :class:`~sko.engine.state_kernels.StateKernel`; DERIVATIVES.md §9). Along ``e_d`` of ``v_o`` the
    hinge's ``v = ᵏX_o v_o + S θ̇`` moves by ``δv = ᵏX_o e_d`` (column ``d`` of ``E``) and ``ω_o`` by
    ``δω_o = e_d`` for ``d < 3``; along ``θ̇_ι``, ``v`` by ``δv = S e_ι`` and ``w = ω_o + N u θ̇₀`` by
    ``δw = N u`` (``ι = 0``). ``ã = [c_J + v × v_J; 0]`` moves by ``δv × v_J`` (``v_o``) or by
    ``s × v_J + v × s`` (``θ̇``, ``s = S e_ι``; on a joint whose ``S`` moves by a complex step of
    the joint terms alone, ``c_J`` too), ``b = [v ×* I_k v; ω_o × I_r w]`` by
    ``[δv ×* I_k v + v ×* I_k δv; δω_o × I_r w + ω_o × I_r (δω_o + δw)]``; its own frame's ``γ = 0``
    does not move."""
    c0, m, n, wo = row[Row.CONSTANTS], row[Row.NODE_DIM], row[Row.NV], row[Row.SCRATCH]
    eo, er, ec, ho, Vo, io = row[Row.E], row[Row.E_ROW], row[Row.E_COLUMN], row[Row.H], row[Row.VELOCITY], row[Row.INBOARD]
    ic, rc, vo = c0 + RigidConstants.inertia, c0 + RotorConstants.rotor_inertia, row[Row.V]
    N, ax = reals[c0 + RotorConstants.ratio], c0 + RotorConstants.axis
    vj = (real_dot(arena, ho, m, vo, n), real_dot(arena, ho + 1, m, vo, n), real_dot(arena, ho + 2, m, vo, n))
    vl = (real_dot(arena, ho + 3, m, vo, n), real_dot(arena, ho + 4, m, vo, n), real_dot(arena, ho + 5, m, vo, n))
    v0, v1, v2, v3, v4, v5 = (arena[Vo].real, arena[Vo + 1].real, arena[Vo + 2].real, arena[Vo + 3].real,
                              arena[Vo + 4].real, arena[Vo + 5].real)
    n_ = (dot6(reals, ic, 1, v0, v1, v2, v3, v4, v5), dot6(reals, ic + 6, 1, v0, v1, v2, v3, v4, v5),
          dot6(reals, ic + 12, 1, v0, v1, v2, v3, v4, v5))  # I_k v = [n; f]
    f_ = (dot6(reals, ic + 18, 1, v0, v1, v2, v3, v4, v5), dot6(reals, ic + 24, 1, v0, v1, v2, v3, v4, v5),
          dot6(reals, ic + 30, 1, v0, v1, v2, v3, v4, v5))
    om = (arena[io + Record.velocity].real, arena[io + Record.velocity + 1].real, arena[io + Record.velocity + 2].real)
    w = (arena[Vo + 6].real, arena[Vo + 7].real, arena[Vo + 8].real)
    Iw = (reals[rc] * w[0] + reals[rc + 1] * w[1] + reals[rc + 2] * w[2],
          reals[rc + 3] * w[0] + reals[rc + 4] * w[1] + reals[rc + 5] * w[2],
          reals[rc + 6] * w[0] + reals[rc + 7] * w[1] + reals[rc + 8] * w[2])
    own = 6 if inboard else 0
    for d in range(own + n):
        x = d - own  # θ̇_x, or < 0: v_o along e_d
        if x < 0:
            e = (arena[eo + d * ec].real, arena[eo + er + d * ec].real, arena[eo + 2 * er + d * ec].real)
            u = (arena[eo + 3 * er + d * ec].real, arena[eo + 4 * er + d * ec].real, arena[eo + 5 * er + d * ec].real)
            dw = (1.0 if d == 0 else 0.0, 1.0 if d == 1 else 0.0, 1.0 if d == 2 else 0.0)  # δω_o = δw
            a0, a1, a2 = _cross3(e, vj), _cross3(e, vl), _cross3(u, vj)  # δv × v_J
            r0 = _cross3(dw, Iw)
        else:
            h = ho + x * m
            e = (arena[h].real, arena[h + 1].real, arena[h + 2].real)
            u = (arena[h + 3].real, arena[h + 4].real, arena[h + 5].real)
            dw = (N * reals[ax], N * reals[ax + 1], N * reals[ax + 2]) if x == 0 else (0.0, 0.0, 0.0)
            if constant_motion(reals, c0):  # c_J = 0: ∂a = s × v_J + v × s
                p0, p1 = _motion_cross3((e, u), (vj, vl))
                q0, q1 = _motion_cross3(((v0, v1, v2), (v3, v4, v5)), (e, u))
                a0, a1 = (p0[0] + q0[0], p0[1] + q0[1], p0[2] + q0[2]), (p1[0] + q1[0], p1[1] + q1[1], p1[2] + q1[2])
            else:  # the joint terms' a, by complex step
                arena[vo + x] = complex(arena[vo + x].real, _STEP)
                moved = call_hinge(row[Row.JOINT], (arena, reals, c0, row[Row.Q], vo, io, wo, np.int64(_MOTION)))
                arena[vo + x] = arena[vo + x].real
                if not moved:
                    return False
                ha = wo + HingeWork.acc
                a0 = (arena[ha].imag / _STEP, arena[ha + 1].imag / _STEP, arena[ha + 2].imag / _STEP)
                a1 = (arena[ha + 3].imag / _STEP, arena[ha + 4].imag / _STEP, arena[ha + 5].imag / _STEP)
            a2 = (0.0, 0.0, 0.0)
            r0 = (0.0, 0.0, 0.0)
        dn = (dot6(reals, ic, 1, e[0], e[1], e[2], u[0], u[1], u[2]), dot6(reals, ic + 6, 1, e[0], e[1], e[2], u[0], u[1], u[2]),
              dot6(reals, ic + 12, 1, e[0], e[1], e[2], u[0], u[1], u[2]))  # I_k δv
        df = (dot6(reals, ic + 18, 1, e[0], e[1], e[2], u[0], u[1], u[2]),
              dot6(reals, ic + 24, 1, e[0], e[1], e[2], u[0], u[1], u[2]),
              dot6(reals, ic + 30, 1, e[0], e[1], e[2], u[0], u[1], u[2]))
        b0, b1, b2 = _cross3(e, n_), _cross3(u, f_), _cross3(e, f_)  # δv ×* I v
        c0_, c1, c2 = _cross3((v0, v1, v2), dn), _cross3((v3, v4, v5), df), _cross3((v0, v1, v2), df)  # v ×* I δv
        r1 = _cross3(om, (reals[rc] * dw[0] + reals[rc + 1] * dw[1] + reals[rc + 2] * dw[2],
                          reals[rc + 3] * dw[0] + reals[rc + 4] * dw[1] + reals[rc + 5] * dw[2],
                          reals[rc + 6] * dw[0] + reals[rc + 7] * dw[1] + reals[rc + 8] * dw[2]))  # ω_o × I_r δw
        for i in range(3):
            ai, bi = (A + i * 6 + d, B + i * 6 + d) if x < 0 else (dA + x * m + i, dB + x * m + i)
            step = 6 if x < 0 else 1  # rows of A (m × 6), or entries of a column of dA
            work[ai] = a0[i]
            work[ai + 3 * step] = a1[i] + a2[i]
            work[ai + 6 * step] = 0.0
            work[bi] = b0[i] + b1[i] + c0_[i] + c1[i]
            work[bi + 3 * step] = b2[i] + c2[i]
            work[bi + 6 * step] = r0[i] + r1[i]
        go = (G + d) if x < 0 else (dG + x * 6)  # the own frame's γ = 0
        for i in range(6):
            work[go + i * (6 if x < 0 else 1)] = 0.0
    return True


#: The geared rotor link's state kernel.
ROTOR = StateKernel(_rotor, own_frame_identity=True, name="geared rotor link", constants=RotorConstants,
                    calls_hinge=True, rates=True, velocities=_rotor_velocities)


def pack_rotor(body) -> CompiledState | None:
    """The compiled state of a :class:`~sko.bodies.rotor.GearedRotorLink`."""
    rigid = _rigid_constants(body)
    if rigid is None:
        return None
    constants = np.concatenate([rigid, [body.gear_ratio], body.rotor_axis, body.rotor_inertia.ravel()])
    return numeric_state(ROTOR, constants, HingeWork.SIZE + RotorWork.SIZE)
