"""Compiled kinematics of the joint library (RIGID.md, *Joint library*; Featherstone Table 4.1).

A joint of :mod:`sko.bodies.joints` is packed once into a code, a polarity flag and a row of
``PARAMETERS`` constants (:func:`pack_joint`; as the constants of a state kernel, the fields of
:data:`JointConstants`, :func:`joint_constants`); :func:`joint_kinematics` then writes, for a state
``(q, ν)``, the same ``X_J = ˢX_p(q)`` (6 × 6), ``S(q)`` (6 × nv) and ``c_J = S̊ ν`` as the
joint's Python ``kinematics`` — in float64 or complex128 (complex-step), without Python calls.

Every joint transform is ``X_J = rot(E) xlt(r)``; the kernels compute ``(E, r)``, which the state
kernels use as they are and :func:`joint_kinematics` expands.
A reversed joint (Table 4.2) gives ``X' = X^{-1}``, ``S' = −X^{-1} S``, ``c' = −X^{-1} c``.

Quaternions are used through the homogeneous rotation ``R(q)/‖q‖²`` as in
:func:`sko.spatial.quaternion_matrix`, so a non-unit quaternion gives the rotation of ``q/‖q‖``;
a quaternion of norm below ``1e-9`` makes :func:`joint_kinematics` return ``False`` (the caller
raises the joint library's :class:`~sko.errors.JointError`).

A :class:`~sko.bodies.joints.CustomJoint` has no compiled form (:data:`PYTHON`): its kinematics
come from its Python function and are copied into the same buffers by the caller.
"""

from __future__ import annotations

import numpy as np

from sko.algorithms.compiled.fields import offsets
from sko.algorithms.compiled.jit import kernel, register
from sko.bodies.joints import (
    Cylindrical,
    Fixed,
    Free,
    Helical,
    Joint,
    Planar,
    Prismatic,
    RackAndPinion,
    ReversedJoint,
    Spherical,
    SphericalEulerZYX,
)

__all__ = ["FIXED", "HELICAL", "PRISMATIC", "RACK_AND_PINION", "CYLINDRICAL", "PLANAR", "SPHERICAL",
           "EULER_ZYX", "FREE", "PYTHON", "PARAMETERS", "JointConstants", "pack_joint", "joint_constants", "joint_kinematics",
           "joint_kinematics_at", "quaternion_ok"]

FIXED, HELICAL, PRISMATIC, RACK_AND_PINION, CYLINDRICAL, PLANAR, SPHERICAL, EULER_ZYX, FREE = range(9)
_DOFS = (0, 1, 1, 1, 2, 3, 3, 3, 6)  #: nv by code
PYTHON = -1  #: kinematics from the joint's own Python code (user-defined joints)
PARAMETERS = 10  #: constants per joint: axis (3) and pitch, or the plane basis U (9), or a radius
#: A joint as constants of a state kernel: code, reversed (0 or 1), nq, nv, the parameters.
JointConstants = offsets("JointConstants", code=1, reverse=1, nq=1, nv=1, parameters=PARAMETERS)

_KINDS = ((Helical, HELICAL), (Prismatic, PRISMATIC), (RackAndPinion, RACK_AND_PINION), (Cylindrical, CYLINDRICAL),
          (Planar, PLANAR), (SphericalEulerZYX, EULER_ZYX), (Spherical, SPHERICAL), (Free, FREE), (Fixed, FIXED))


def pack_joint(joint: Joint) -> tuple[int, bool, np.ndarray]:
    """``(code, reversed, parameters)`` of a joint; code :data:`PYTHON` for user-defined ones."""
    reverse = False
    while isinstance(joint, ReversedJoint):
        joint, reverse = joint.joint, not reverse
    p = np.zeros(PARAMETERS)
    code = next((c for kind, c in _KINDS if type(joint) is kind or (kind is Helical and isinstance(joint, Helical))), PYTHON)
    if code in (HELICAL, PRISMATIC, CYLINDRICAL):
        p[:3] = joint.axis
        p[3] = joint.pitch if code == HELICAL else 0.0
    elif code == PLANAR:
        p[:9] = joint._U.ravel()
    elif code == RACK_AND_PINION:
        p[0] = joint.radius
    return code, reverse, p


def joint_constants(joint: Joint) -> np.ndarray | None:
    """The fields of :data:`JointConstants` for ``joint``, or None for a user-defined one."""
    code, reverse, p = pack_joint(joint)
    if code == PYTHON:
        return None
    return np.concatenate([[code, float(reverse), joint.nq, joint.nv], p])


@register
def quaternion_ok(w, x, y, z) -> bool:
    """False for a quaternion of (near) zero norm (``‖|q|‖ < 1e-9``, as the Python joints check;
    scaled by the largest entry, so a huge quaternion does not overflow)."""
    s = max(abs(w), abs(x), abs(y), abs(z))
    if s == 0:
        return False
    return s * np.sqrt((abs(w) / s) ** 2 + (abs(x) / s) ** 2 + (abs(y) / s) ** 2 + (abs(z) / s) ** 2) >= 1e-9


@register
def _quaternion_transpose(q0, o, E):
    """``E = R(q)ᵀ`` for the homogeneous quaternion rotation ``R(q)/‖q‖²``, ``q = q0[o: o + 4]``,
    of ``q / max |q_i|`` (the same rotation: ``R(q)/‖q‖²`` is homogeneous of degree 0), so no
    square overflows or underflows for a quaternion of any finite size."""
    s = max(abs(q0[o]), abs(q0[o + 1]), abs(q0[o + 2]), abs(q0[o + 3]))
    w, x, y, z = q0[o] / s, q0[o + 1] / s, q0[o + 2] / s, q0[o + 3] / s
    n2 = w * w + x * x + y * y + z * z
    E[0, 0] = (w * w + x * x - y * y - z * z) / n2
    E[1, 0] = 2 * (x * y - w * z) / n2
    E[2, 0] = 2 * (x * z + w * y) / n2
    E[0, 1] = 2 * (x * y + w * z) / n2
    E[1, 1] = (w * w - x * x + y * y - z * z) / n2
    E[2, 1] = 2 * (y * z - w * x) / n2
    E[0, 2] = 2 * (x * z - w * y) / n2
    E[1, 2] = 2 * (y * z + w * x) / n2
    E[2, 2] = (w * w - x * x - y * y + z * z) / n2


@register
def _axis_rotation_transpose(u, o, angle, E):
    """``E = R_u(angle)ᵀ = I − sin K + (1 − cos) K²`` with ``K = u×``, ``u = u[o: o + 3]`` (Rodrigues)."""
    c, s = np.cos(angle), np.sin(angle)
    x, y, z = u[o], u[o + 1], u[o + 2]
    # K = [[0, -z, y], [z, 0, -x], [-y, x, 0]],  K² = u uᵀ − I
    E[0, 0] = 1 + (1 - c) * (x * x - 1)
    E[1, 1] = 1 + (1 - c) * (y * y - 1)
    E[2, 2] = 1 + (1 - c) * (z * z - 1)
    E[0, 1] = s * z + (1 - c) * x * y
    E[1, 0] = -s * z + (1 - c) * x * y
    E[0, 2] = -s * y + (1 - c) * x * z
    E[2, 0] = s * y + (1 - c) * x * z
    E[1, 2] = s * x + (1 - c) * y * z
    E[2, 1] = -s * x + (1 - c) * y * z


@register
def _expand(X):
    """``X ← rot(E) xlt(r) = [[E, 0], [−E r×, E]]`` from ``E`` in ``X[:3, :3]`` and ``r`` in ``X[:3, 3]``."""
    r0, r1, r2 = X[0, 3], X[1, 3], X[2, 3]
    for i in range(3):
        e0, e1, e2 = X[i, 0], X[i, 1], X[i, 2]
        X[i + 3, 3], X[i + 3, 4], X[i + 3, 5] = e0, e1, e2
        X[i, 3] = X[i, 4] = X[i, 5] = 0
        X[i + 3, 0] = -(e1 * r2 - e2 * r1)
        X[i + 3, 1] = -(-e0 * r2 + e2 * r0)
        X[i + 3, 2] = -(e0 * r1 - e1 * r0)


@register
def _reverse(X):
    """``X ← X^{-1}`` in the ``(E, r)`` storage of :func:`_expand`: ``E ← Eᵀ``, ``r ← −E r``."""
    r0, r1, r2 = X[0, 3], X[1, 3], X[2, 3]
    for i in range(3):
        X[i, 3] = -(X[i, 0] * r0 + X[i, 1] * r1 + X[i, 2] * r2)
    for i in range(3):
        for j in range(i + 1, 3):
            X[i, j], X[j, i] = X[j, i], X[i, j]


@register
def _negative_apply(X, A, ncols):
    """``A[:, :ncols] ← −X A[:, :ncols]`` for ``X = rot(E) xlt(r)`` in the ``(E, r)`` storage of
    :func:`_expand`: ``X [a; b] = [E a; E (b − r × a)]``."""
    r0, r1, r2 = X[0, 3], X[1, 3], X[2, 3]
    for j in range(ncols):
        a0, a1, a2 = A[0, j], A[1, j], A[2, j]
        b0, b1, b2 = A[3, j] - (r1 * a2 - r2 * a1), A[4, j] - (r2 * a0 - r0 * a2), A[5, j] - (r0 * a1 - r1 * a0)
        for i in range(3):
            A[i, j] = -(X[i, 0] * a0 + X[i, 1] * a1 + X[i, 2] * a2)
            A[i + 3, j] = -(X[i, 0] * b0 + X[i, 1] * b1 + X[i, 2] * b2)


@kernel(entry=True)
def joint_kinematics(code, reverse, p, q, v, X, S, c) -> bool:
    """Write ``X_J`` (6 × 6), ``S`` (6 × nv, in ``S[:, :nv]``) and ``c_J`` (6) at ``(q, ν)``.

    Parameters
    ----------
    code, reverse, p
        From :func:`pack_joint`.
    q, v : 1-D arrays
        The joint's position and velocity variables.
    X, S, c : arrays of the result's scalar type
        Filled in place (``S`` must have at least ``nv`` columns; ``X``, ``S``, ``c`` are
        overwritten whole).

    Returns
    -------
    bool
        False when a quaternion has (near) zero norm; the buffers are then undefined.
    """
    S[:, :] = 0
    if not joint_kinematics_at(code, reverse, p, 0, q, 0, v, 0, X, S, c):
        return False
    _expand(X)
    return True


@kernel
def joint_kinematics_at(code, reverse, p, po, q, qo, v, vo, X, S, c) -> bool:
    """:func:`joint_kinematics` with the parameters, positions and velocities at offsets
    ``po``, ``qo``, ``vo`` of larger vectors (no slices: the state kernels' hot path), and
    ``X_J = rot(E) xlt(r)`` left in the ``(E, r)`` storage of :func:`_expand` (``E`` in
    ``X[:3, :3]``, ``r`` in ``X[:3, 3]``; the rest of ``X`` is not written) and only the joint's
    ``nv`` columns of ``S`` written."""
    for i in range(3):
        for j in range(4):
            X[i, j] = 0
    nv = _DOFS[code] if 0 <= code < len(_DOFS) else 0
    for i in range(6):
        c[i] = 0
        for j in range(nv):
            S[i, j] = 0
    E = X  # E is the upper-left 3 × 3 block of X, written in place (a view costs a reference count)
    if code == FIXED:
        E[0, 0] = E[1, 1] = E[2, 2] = 1
    elif code == HELICAL:
        _axis_rotation_transpose(p, po, q[qo], E)
        for i in range(3):
            X[i, 3] = p[po + 3] * q[qo] * p[po + i]
            S[i, 0] = p[po + i]
            S[i + 3, 0] = p[po + 3] * p[po + i]
    elif code == PRISMATIC:
        E[0, 0] = E[1, 1] = E[2, 2] = 1
        for i in range(3):
            X[i, 3] = q[qo] * p[po + i]
            S[i + 3, 0] = p[po + i]
    elif code == RACK_AND_PINION:
        cq, sq = np.cos(q[qo]), np.sin(q[qo])
        E[0, 0], E[0, 1], E[1, 0], E[1, 1], E[2, 2] = cq, sq, -sq, cq, 1
        X[0, 3] = p[po] * q[qo]
        S[2, 0], S[3, 0], S[4, 0] = 1, p[po] * cq, -p[po] * sq
        c[3], c[4] = -p[po] * sq * v[vo] ** 2, -p[po] * cq * v[vo] ** 2
    elif code == CYLINDRICAL:
        _axis_rotation_transpose(p, po, q[qo], E)
        for i in range(3):
            X[i, 3] = q[qo + 1] * p[po + i]
            S[i, 0] = p[po + i]
            S[i + 3, 1] = p[po + i]
    elif code == PLANAR:
        # X = rot(Uᵀ) rot(rz(θ)) xlt([x, y, 0]) rot(U) = rot(Uᵀ rz(θ) U) xlt(Uᵀ [x, y, 0])
        cq, sq = np.cos(q[qo]), np.sin(q[qo])
        for i in range(3):
            u0i, u1i, u2i = p[po + i], p[po + 3 + i], p[po + 6 + i]  # U[a, b] = p[po + 3 a + b]
            for j in range(3):
                u0j, u1j, u2j = p[po + j], p[po + 3 + j], p[po + 6 + j]
                E[i, j] = u0i * (cq * u0j + sq * u1j) + u1i * (-sq * u0j + cq * u1j) + u2i * u2j
            X[i, 3] = q[qo + 1] * u0i + q[qo + 2] * u1i
            S[i, 0] = u2i
            S[i + 3, 1] = u0i
            S[i + 3, 2] = u1i
    elif code == SPHERICAL:
        if not quaternion_ok(q[qo], q[qo + 1], q[qo + 2], q[qo + 3]):
            return False
        _quaternion_transpose(q, qo, E)
        S[0, 0] = S[1, 1] = S[2, 2] = 1
    elif code == EULER_ZYX:
        # E = rx(q₃) ry(q₂) rz(q₁), Featherstone Eq. 4.7–4.9
        c1, s1 = np.cos(q[qo]), np.sin(q[qo])
        c2, s2 = np.cos(q[qo + 1]), np.sin(q[qo + 1])
        c3, s3 = np.cos(q[qo + 2]), np.sin(q[qo + 2])
        E[0, 0], E[0, 1], E[0, 2] = c1 * c2, s1 * c2, -s2
        E[1, 0] = -s1 * c3 + c1 * s2 * s3
        E[1, 1] = c1 * c3 + s1 * s2 * s3
        E[1, 2] = c2 * s3
        E[2, 0] = s1 * s3 + c1 * s2 * c3
        E[2, 1] = -c1 * s3 + s1 * s2 * c3
        E[2, 2] = c2 * c3
        d1, d2, d3 = v[vo], v[vo + 1], v[vo + 2]
        S[0, 0], S[1, 0], S[2, 0] = -s2, c2 * s3, c2 * c3
        S[1, 1], S[2, 1] = c3, -s3
        S[0, 2] = 1
        c[0] = -c2 * d1 * d2
        c[1] = -s2 * s3 * d1 * d2 + c2 * c3 * d1 * d3 - s3 * d2 * d3
        c[2] = -s2 * c3 * d1 * d2 - c2 * s3 * d1 * d3 - c3 * d2 * d3
    elif code == FREE:
        if not quaternion_ok(q[qo], q[qo + 1], q[qo + 2], q[qo + 3]):
            return False
        _quaternion_transpose(q, qo, E)
        for i in range(3):
            X[i, 3] = q[qo + 4 + i]
        for i in range(6):
            S[i, i] = 1
    if reverse:
        # X' = X^{-1} = rot(Eᵀ) xlt(−E r), S' = −X^{-1} S, c' = −X^{-1} c
        _reverse(X)
        _negative_apply(X, S, nv)
        _negative_apply(X, c.reshape((6, 1)), 1)
    return True
