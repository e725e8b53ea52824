"""Compiled kinematics of the joint library (RIGID.md, *Joint library*; Featherstone Table 4.1),
declared in the joint registry :mod:`sko.engine.joint_registry`, and the engine's calls of any
joint type's compiled functions.

Each library joint type is one declaration (:func:`~sko.engine.joint_registry.library_joint`): its
code, sizes, constants and its functions below — ``_helical`` etc. (kinematics), ``_ball_rate``,
``_free_rate``, ``_planar_rate`` (``q̇``), ``_unit_quaternion`` (projection), in the signatures of
the registry. A joint is packed once (:func:`pack_joint`; as the constants of a state kernel, the
fields of :data:`JointConstants`, :func:`joint_constants`) into a code, a polarity flag and the
:data:`Packed` record: its ``nv``, the addresses of its functions (a joint type from outside the
package) and its parameters. :func:`joint_kinematics_at` then writes, for a state ``(q, ν)``, the
same ``X_J = ˢX_p(q)``, ``S(q)`` (6 × nv) and ``c_J = S̊ ν`` as the joint's Python ``kinematics``
— in float64 or complex128 (complex-step), without Python calls: the library's functions
inlined in a switch on the code, any other joint type's through its address, its outputs checked.
:func:`joint_qdot_at` and :func:`joint_normalize_at` do the same for ``q̇`` and the projection
(the compiled rollouts).

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

from collections.abc import Callable

import numpy as np

from sko.bodies.joints import (
    Cylindrical,
    Fixed,
    Free,
    Helical,
    Joint,
    JointKinematics,
    Planar,
    Prismatic,
    RackAndPinion,
    Spherical,
    SphericalEulerZYX,
)
from sko.engine.fields import offsets
from sko.engine.jit import kernel, register
from sko.engine.joint_registry import (
    ADDRESS,
    PARAMETERS,
    REGISTRY,
    JointKernel,
    call_kinematics,
    call_normalize,
    call_qdot,
    complex_slot,
    library_joint,
)
from sko.errors import JointError
from sko.spatial import plucker

__all__ = ["FIXED", "HELICAL", "PRISMATIC", "RACK_AND_PINION", "CYLINDRICAL", "PLANAR", "SPHERICAL",
           "EULER_ZYX", "FREE", "ADDRESS", "PYTHON", "PARAMETERS", "Packed", "JointConstants", "LIBRARY", "CONSTANT_MOTION",
           "pack_joint", "checked_parameters", "joint_constants", "joint_kinematics", "joint_kinematics_at", "joint_qdot_at",
           "joint_normalize_at", "declaration", "coordinates_are_velocities", "quaternion_ok",
           "axis_rotation_transpose", "quaternion_transpose", "scaled_quaternion_rows", "quaternion_rows", "expand",
           "reverse_transform",
           "negative_apply",
           "TYPES", "joint_kernel", "joint_type"]

FIXED, HELICAL, PRISMATIC, RACK_AND_PINION, CYLINDRICAL, PLANAR, SPHERICAL, EULER_ZYX, FREE = range(9)
PYTHON = -1  #: kinematics from the joint's own Python code (a joint type without a declaration)
#: A joint's packed record (what its functions are called with): its nv, the addresses of its
#: kinematics (float64, complex128), of its ``qdot`` and ``normalize`` (float64; filled by the
#: compiled rollouts' tables only), its nq and how many parameters its type declares (the sizes of
#: the views a joint type from outside the package is given), then its parameters (axis and
#: pitch, the plane basis U, a radius…).
Packed = offsets("Packed", nv=1, kinematics=2, qdot=1, normalize=1, nq=1, count=1, parameters=PARAMETERS)
#: A joint as constants of a state kernel: code, reversed (0 or 1), then its :data:`Packed`
#: record (which starts with nv).
JointConstants = offsets("JointConstants", code=1, reverse=1, nv=1, kinematics=2, qdot=1, normalize=1, nq=1, count=1,
                         parameters=PARAMETERS)
assert all(JointConstants.nv + Packed[f] == JointConstants[f] for f in Packed.__members__ if f != "SIZE")


def declaration(joint) -> tuple[JointKernel, bool, object] | None:
    """``(declared type, reversed, joint)`` of a joint whose kinematics are compiled: the joint
    with its reversals unwrapped, its type's :class:`~sko.engine.joint_registry.JointKernel`;
    None when it has none (its Python kinematics are then the only ones), or when a subclass
    replaced the Python kinematics of the declaring class."""
    reverse = False
    while getattr(joint, "kind", None) == "reversed" and hasattr(joint, "joint"):
        joint, reverse = joint.joint, not reverse
    kind = type(joint)
    entry = joint_kernel(kind)
    if not isinstance(entry, JointKernel) or kind._kinematics is not getattr(entry, "owner", kind)._kinematics:
        return None
    return entry, reverse, joint


def pack_joint(joint) -> tuple[int, bool, np.ndarray]:
    """``(code, reversed, packed)`` of a joint (:data:`Packed`); code :data:`PYTHON` for a joint
    type with no compiled kinematics. Checks a declared joint's sizes and parameters
    (:class:`~sko.errors.JointError` naming it) and compiles a joint type from outside the
    package on first use."""
    found = declaration(joint)
    packed = np.zeros(Packed.SIZE)
    if found is None:
        return PYTHON, False, packed
    entry, reverse, joint = found
    p = checked_parameters(joint, entry)
    if p is None:  # symbolic parameters: the joint's Python kinematics, as symbols need
        return PYTHON, False, packed
    packed[Packed.nv], packed[Packed.nq], packed[Packed.count] = entry.nv, entry.nq, entry.parameters
    packed[Packed.kinematics: Packed.kinematics + 2] = entry.addresses()
    packed[Packed.parameters: Packed.parameters + p.size] = p
    return entry.code, reverse, packed


def checked_parameters(joint, entry: JointKernel) -> np.ndarray | None:
    """``joint.compiled_parameters()`` as float64, checked against its type's declaration
    ``entry`` (sizes, finite numbers: :class:`~sko.errors.JointError` naming the joint); None
    when they are symbols (sympy), which no compiled function takes."""
    if (joint.nq, joint.nv) != (entry.nq, entry.nv):
        raise JointError(f"{joint}: nq = {joint.nq}, nv = {joint.nv}, but its joint type {entry.name!r} declares "
                         f"nq = {entry.nq}, nv = {entry.nv}")
    p = np.asarray(joint.compiled_parameters())
    if p.dtype == object:
        try:
            p = p.astype(float)
        except (TypeError, ValueError):
            return None
    if p.shape != (entry.parameters,) or p.dtype.kind not in "fiub" or not np.isfinite(p).all():
        raise JointError(f"{joint}: compiled_parameters() must give {entry.parameters} finite real numbers "
                         f"(its type {entry.name!r} declares {entry.parameters}), got {p!r}")
    return p.astype(float)


def joint_constants(joint, body: str | None = None) -> np.ndarray | None:
    """The fields of :data:`JointConstants` for ``joint``, or None for a joint type with no
    compiled kinematics; a :class:`~sko.errors.JointError` names ``body`` (the body on the joint)."""
    try:
        code, reverse, packed = pack_joint(joint)
    except JointError as exc:
        if body is None:
            raise
        raise JointError(f"body {body!r}: {exc}") from None
    try:
        joint.check_rigid()  # a user's X_J, judged once when a system takes it
        joint.check_constant_motion()  # the recursions trust a declared constant S
    except JointError as exc:
        if body is None:
            raise
        raise JointError(f"body {body!r}: {exc}") from None
    if code == PYTHON:
        return None
    return np.concatenate([[code, float(reverse)], packed])


def coordinates_are_velocities(joint) -> bool:
    """True when the joint's declared type has ``q̇ = ν`` and no projection, and its Python
    methods are the declared ones (a subclass may replace them)."""
    found = declaration(joint)
    if found is None:
        return False
    entry, _, joint = found
    owner = getattr(entry, "owner", type(joint))
    return (not entry.has_qdot and not entry.has_normalize and joint.nq == joint.nv
            and type(joint)._qdot is owner._qdot and type(joint).normalize is owner.normalize
            and type(joint).qdot is owner.qdot)


@register
def quaternion_ok(w, x, y, z) -> bool:
    """False for a quaternion of (near) zero norm (``‖|q|‖ < 1e-9``, as the Python joints check;
    scaled by the largest entry, so a huge quaternion does not overflow)."""
    s = max(abs(w), abs(x), abs(y), abs(z))
    if s == 0:
        return False
    return s * np.sqrt((abs(w) / s) ** 2 + (abs(x) / s) ** 2 + (abs(y) / s) ** 2 + (abs(z) / s) ** 2) >= 1e-9


@register
def quaternion_transpose(q0, o, E):
    """``E = R(q)ᵀ`` for the homogeneous quaternion rotation ``R(q)/‖q‖²``, ``q = q0[o: o + 4]``,
    of ``q / max |q_i|`` (the same rotation: ``R(q)/‖q‖²`` is homogeneous of degree 0), so no
    square overflows or underflows for a quaternion of any finite size."""
    R = scaled_quaternion_rows(q0, o)
    E[0, 0], E[0, 1], E[0, 2] = R[0]
    E[1, 0], E[1, 1], E[1, 2] = R[1]
    E[2, 0], E[2, 1], E[2, 2] = R[2]


@register
def scaled_quaternion_rows(q0, o):
    """:func:`quaternion_rows` of ``q0[o: o + 4] / max |q_i|`` (:func:`quaternion_transpose`)."""
    s = max(abs(q0[o]), abs(q0[o + 1]), abs(q0[o + 2]), abs(q0[o + 3]))
    return quaternion_rows(q0[o] / s, q0[o + 1] / s, q0[o + 2] / s, q0[o + 3] / s)


@register
def quaternion_rows(w, x, y, z):
    """The rows of ``R(q)ᵀ`` for the homogeneous quaternion rotation ``R(q)/‖q‖²`` of
    ``q = (w, x, y, z)`` (RIGID.md, *Joint library*), on numbers or on a block's lanes
    (:mod:`sko.engine.lanes`): the one formula of :func:`quaternion_transpose`."""
    n2 = w * w + x * x + y * y + z * z
    return (((w * w + x * x - y * y - z * z) / n2, 2 * (x * y + w * z) / n2, 2 * (x * z - w * y) / n2),
            (2 * (x * y - w * z) / n2, (w * w - x * x + y * y - z * z) / n2, 2 * (y * z + w * x) / n2),
            (2 * (x * z + w * y) / n2, 2 * (y * z - w * x) / n2, (w * w - x * x - y * y + z * z) / n2))


@register
def axis_rotation_transpose(u, o, angle, E):
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
def expand(X):
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
def reverse_transform(X):
    """``X ← X^{-1}`` in the ``(E, r)`` storage of :func:`expand`: ``E ← Eᵀ``, ``r ← −E r``."""
    r0, r1, r2 = X[0, 3], X[1, 3], X[2, 3]
    for i in range(3):
        X[i, 3] = -(X[i, 0] * r0 + X[i, 1] * r1 + X[i, 2] * r2)
    for i in range(3):
        for j in range(i + 1, 3):
            X[i, j], X[j, i] = X[j, i], X[i, j]


@register
def negative_apply(X, A, ncols):
    """``A[:, :ncols] ← −X A[:, :ncols]`` for ``X = rot(E) xlt(r)`` in the ``(E, r)`` storage of
    :func:`expand`: ``X [a; b] = [E a; E (b − r × a)]``."""
    r0, r1, r2 = X[0, 3], X[1, 3], X[2, 3]
    for j in range(ncols):
        a0, a1, a2 = A[0, j], A[1, j], A[2, j]
        b0, b1, b2 = A[3, j] - (r1 * a2 - r2 * a1), A[4, j] - (r2 * a0 - r0 * a2), A[5, j] - (r0 * a1 - r1 * a0)
        for i in range(3):
            A[i, j] = -(X[i, 0] * a0 + X[i, 1] * a1 + X[i, 2] * a2)
            A[i + 3, j] = -(X[i, 0] * b0 + X[i, 1] * b1 + X[i, 2] * b2)



# ---------------------------------------------------------------------------- the library's kinematics
@register
def _fixed(p, po, q, qo, v, vo, X, S, c) -> bool:
    """No motion: ``E = I``, ``r = 0``."""
    X[0, 0] = X[1, 1] = X[2, 2] = 1
    return True


@register
def _helical(p, po, q, qo, v, vo, X, S, c) -> bool:
    """Screw about the unit axis ``u = p[po: po + 3]`` with pitch ``h = p[po + 3]`` (revolute for
    ``h = 0``): ``E = R_u(θ)ᵀ``, ``r = h θ u``, ``S = [u; h u]``."""
    axis_rotation_transpose(p, po, q[qo], X)
    for i in range(3):
        X[i, 3] = p[po + 3] * q[qo] * p[po + i]
        S[i, 0] = p[po + i]
        S[i + 3, 0] = p[po + 3] * p[po + i]
    return True


@register
def _prismatic(p, po, q, qo, v, vo, X, S, c) -> bool:
    """Translation along the unit axis ``u``: ``E = I``, ``r = θ u``, ``S = [0; u]``."""
    X[0, 0] = X[1, 1] = X[2, 2] = 1
    for i in range(3):
        X[i, 3] = q[qo] * p[po + i]
        S[i + 3, 0] = p[po + i]
    return True


@register
def _rack_and_pinion(p, po, q, qo, v, vo, X, S, c) -> bool:
    """A pinion of radius ``ρ = p[po]`` rolling along x: rotation ``θ`` about z, ``r = (ρ θ, 0, 0)``."""
    cq, sq = np.cos(q[qo]), np.sin(q[qo])
    X[0, 0], X[0, 1], X[1, 0], X[1, 1], X[2, 2] = cq, sq, -sq, cq, 1
    X[0, 3] = p[po] * q[qo]
    S[2, 0], S[3, 0], S[4, 0] = 1, p[po] * cq, -p[po] * sq
    c[3], c[4] = -p[po] * sq * v[vo] ** 2, -p[po] * cq * v[vo] ** 2
    return True


@register
def _cylindrical(p, po, q, qo, v, vo, X, S, c) -> bool:
    """Rotation ``θ₁`` about and translation ``θ₂`` along the unit axis ``u``."""
    axis_rotation_transpose(p, po, q[qo], X)
    for i in range(3):
        X[i, 3] = q[qo + 1] * p[po + i]
        S[i, 0] = p[po + i]
        S[i + 3, 1] = p[po + i]
    return True


@register
def _planar(p, po, q, qo, v, vo, X, S, c) -> bool:
    """Planar motion in the plane of the basis ``U`` (row-major at ``p[po:]``):
    ``X = rot(Uᵀ) rot(rz(θ)) xlt([x, y, 0]) rot(U) = rot(Uᵀ rz(θ) U) xlt(Uᵀ [x, y, 0])``."""
    cq, sq = np.cos(q[qo]), np.sin(q[qo])
    for i in range(3):
        u0i, u1i, u2i = p[po + i], p[po + 3 + i], p[po + 6 + i]  # U[a, b] = p[po + 3 a + b]
        for j in range(3):
            u0j, u1j, u2j = p[po + j], p[po + 3 + j], p[po + 6 + j]
            X[i, j] = u0i * (cq * u0j + sq * u1j) + u1i * (-sq * u0j + cq * u1j) + u2i * u2j
        X[i, 3] = q[qo + 1] * u0i + q[qo + 2] * u1i
        S[i, 0] = u2i
        S[i + 3, 1] = u0i
        S[i + 3, 2] = u1i
    return True


@register
def _spherical(p, po, q, qo, v, vo, X, S, c) -> bool:
    """Ball joint on the quaternion ``q``: ``E = R(q)ᵀ``, ``S = [I; 0]``."""
    if not quaternion_ok(q[qo], q[qo + 1], q[qo + 2], q[qo + 3]):
        return False
    quaternion_transpose(q, qo, X)
    S[0, 0] = S[1, 1] = S[2, 2] = 1
    return True


@register
def _euler_zyx(p, po, q, qo, v, vo, X, S, c) -> bool:
    """Ball joint on z-y-x Euler angles: ``E = rx(q₃) ry(q₂) rz(q₁)``, Featherstone Eq. 4.7–4.9."""
    c1, s1 = np.cos(q[qo]), np.sin(q[qo])
    c2, s2 = np.cos(q[qo + 1]), np.sin(q[qo + 1])
    c3, s3 = np.cos(q[qo + 2]), np.sin(q[qo + 2])
    X[0, 0], X[0, 1], X[0, 2] = c1 * c2, s1 * c2, -s2
    X[1, 0] = -s1 * c3 + c1 * s2 * s3
    X[1, 1] = c1 * c3 + s1 * s2 * s3
    X[1, 2] = c2 * s3
    X[2, 0] = s1 * s3 + c1 * s2 * c3
    X[2, 1] = -c1 * s3 + s1 * s2 * c3
    X[2, 2] = c2 * c3
    d1, d2, d3 = v[vo], v[vo + 1], v[vo + 2]
    S[0, 0], S[1, 0], S[2, 0] = -s2, c2 * s3, c2 * c3
    S[1, 1], S[2, 1] = c3, -s3
    S[0, 2] = 1
    c[0] = -c2 * d1 * d2
    c[1] = -s2 * s3 * d1 * d2 + c2 * c3 * d1 * d3 - s3 * d2 * d3
    c[2] = -s2 * c3 * d1 * d2 - c2 * s3 * d1 * d3 - c3 * d2 * d3
    return True


@register
def _free(p, po, q, qo, v, vo, X, S, c) -> bool:
    """Six dofs, ``q = (quaternion, p)``: ``E = R(q)ᵀ``, ``r = p``, ``S = I``."""
    if not quaternion_ok(q[qo], q[qo + 1], q[qo + 2], q[qo + 3]):
        return False
    quaternion_transpose(q, qo, X)
    for i in range(3):
        X[i, 3] = q[qo + 4 + i]
    for i in range(6):
        S[i, i] = 1
    return True


# ---------------------------------------------------------------------------- the library's q̇ maps
@register
def _ball_rate(p, po, q, qo, v, vo, out, oo) -> bool:
    """``q̇ = ½ q ⊗ (0, ω)`` (:func:`sko.spatial.quaternion_rate`)."""
    w, x, y, z = q[qo], q[qo + 1], q[qo + 2], q[qo + 3]
    o0, o1, o2 = v[vo], v[vo + 1], v[vo + 2]
    out[oo] = 0.5 * (-x * o0 - y * o1 - z * o2)
    out[oo + 1] = 0.5 * (w * o0 - z * o1 + y * o2)
    out[oo + 2] = 0.5 * (z * o0 + w * o1 - x * o2)
    out[oo + 3] = 0.5 * (-y * o0 + x * o1 + w * o2)
    return True


@register
def _free_rate(p, po, q, qo, v, vo, out, oo) -> bool:
    """The quaternion's rate and ``ṗ = R(q) v`` (``R`` homogeneous in ``q``: any nonzero ``q``)."""
    _ball_rate(p, po, q, qo, v, vo, out, oo)
    w, x, y, z = q[qo], q[qo + 1], q[qo + 2], q[qo + 3]
    n2 = w * w + x * x + y * y + z * z
    u0, u1, u2 = v[vo + 3], v[vo + 4], v[vo + 5]
    out[oo + 4] = ((w * w + x * x - y * y - z * z) * u0 + 2 * (x * y - w * z) * u1 + 2 * (x * z + w * y) * u2) / n2
    out[oo + 5] = (2 * (x * y + w * z) * u0 + (w * w - x * x + y * y - z * z) * u1 + 2 * (y * z - w * x) * u2) / n2
    out[oo + 6] = (2 * (x * z - w * y) * u0 + 2 * (y * z + w * x) * u1 + (w * w - x * x - y * y + z * z) * u2) / n2
    return True


@register
def _planar_rate(p, po, q, qo, v, vo, out, oo) -> bool:
    """``q̇ = (ω, R_z(θ) (v_x, v_y))``."""
    c, s = np.cos(q[qo]), np.sin(q[qo])
    out[oo] = v[vo]
    out[oo + 1] = c * v[vo + 1] - s * v[vo + 2]
    out[oo + 2] = s * v[vo + 1] + c * v[vo + 2]
    return True


@register
def _unit_quaternion(p, po, q, qo) -> bool:
    """The quaternion at ``q[qo:]`` divided by its norm."""
    n = np.sqrt(q[qo] * q[qo] + q[qo + 1] * q[qo + 1] + q[qo + 2] * q[qo + 2] + q[qo + 3] * q[qo + 3])
    for i in range(4):
        q[qo + i] /= n
    return True


# ---------------------------------------------------------------------------- the declarations
#: The library's joint types by code (the classes of :mod:`sko.bodies.joints` name theirs).
LIBRARY = (
    library_joint(FIXED, "fixed", _fixed, nq=0, nv=0, parameters=0),
    library_joint(HELICAL, "helical", _helical, nq=1, nv=1, parameters=4, constant_motion=True),
    library_joint(PRISMATIC, "prismatic", _prismatic, nq=1, nv=1, parameters=3, constant_motion=True),
    library_joint(RACK_AND_PINION, "rack-and-pinion", _rack_and_pinion, nq=1, nv=1, parameters=1),
    library_joint(CYLINDRICAL, "cylindrical", _cylindrical, nq=2, nv=2, parameters=3, constant_motion=True),
    library_joint(PLANAR, "planar", _planar, nq=3, nv=3, parameters=9, qdot=_planar_rate, constant_motion=True),
    library_joint(SPHERICAL, "spherical", _spherical, nq=4, nv=3, parameters=0, qdot=_ball_rate,
                  normalize=_unit_quaternion, constant_motion=True),
    library_joint(EULER_ZYX, "spherical-euler-zyx", _euler_zyx, nq=3, nv=3, parameters=0),
    library_joint(FREE, "free", _free, nq=7, nv=6, parameters=0, qdot=_free_rate, normalize=_unit_quaternion,
                  constant_motion=True),
)
assert all(entry.code == code for code, entry in enumerate(LIBRARY))
#: per code of :data:`LIBRARY`, whether the joint's motion subspace ``S`` is constant in its
#: successor's coordinates (so ``c_J = 0``)
CONSTANT_MOTION = np.array([entry.constant_motion for entry in LIBRARY])


# ---------------------------------------------------------------------------- the engine's calls
@kernel(entry=True)
def joint_kinematics(code, reverse, p, q, v, X, S, c) -> bool:
    """Write ``X_J`` (6 × 6), ``S`` (6 × nv, in ``S[:, :nv]``) and ``c_J`` (6) at ``(q, ν)``.

    Parameters
    ----------
    code, reverse, p
        From :func:`pack_joint` (``p`` the :data:`Packed` record).
    q, v : 1-D arrays
        The joint's position and velocity variables.
    X, S, c : arrays of the result's scalar type
        Filled in place (``S`` 6 × 6; ``X``, ``S``, ``c`` are overwritten whole).

    Returns
    -------
    bool
        False when the joint rejects the state (a quaternion of (near) zero norm; a joint type
        from outside the package that returned False, raised, or gave non-finite outputs or a
        rank-deficient ``S``); the buffers are then undefined.
    """
    S[:, :] = 0
    if not joint_kinematics_at(code, reverse, p, 0, q, 0, v, 0, X, S, c):
        return False
    expand(X)
    return True


@register
def _finite(x) -> bool:
    """``x`` (real or complex) has no NaN and no infinity."""
    return x.real - x.real == 0 and x.imag - x.imag == 0


@kernel
def _checked(X, S, c, nv) -> bool:
    """A joint type's outputs from outside the package: finite; nothing written outside the
    ``(E, r)`` storage of ``X`` nor past ``S``'s ``nv`` columns (both zeroed before its call);
    ``E`` a rotation (``E Eᵀ = I`` within ``1e-9`` and ``det E > 0``, in complex arithmetic for a
    complex state: a rotation continued analytically stays orthogonal); ``S`` of
    full column rank (its real part, by Gram–Schmidt: no column within ``1e-9`` of the span of
    the others)."""
    for i in range(3):
        for j in range(4):
            if not _finite(X[i, j]):
                return False
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if (i >= 3 or j >= 4) and X[i, j] != 0:
                return False
    for i in range(6):
        if not _finite(c[i]):
            return False
        for j in range(S.shape[1]):
            if j < nv and not _finite(S[i, j]) or j >= nv and S[i, j] != 0:
                return False
    for i in range(3):
        for j in range(3):
            d = X[i, 0] * X[j, 0] + X[i, 1] * X[j, 1] + X[i, 2] * X[j, 2]
            if not abs(d - (1.0 if i == j else 0.0)) <= 1e-9:
                return False
    if not _determinant(X).real > 0:
        return False
    G = np.zeros((6, 6))
    for j in range(nv):
        n0 = 0.0
        for i in range(6):
            G[i, j] = S[i, j].real
            n0 += G[i, j] * G[i, j]
        for k in range(j):
            d = 0.0
            for i in range(6):
                d += G[i, k] * G[i, j]
            for i in range(6):
                G[i, j] -= d * G[i, k]
        n = 0.0
        for i in range(6):
            n += G[i, j] * G[i, j]
        if not n > 1e-18 * max(n0, 1.0):
            return False
        n = np.sqrt(n)
        for i in range(6):
            G[i, j] /= n
    return True


@register
def _determinant(X):
    """``det E`` of ``E = X[:3, :3]``."""
    a, b, c = X[0, 0], X[0, 1], X[0, 2]
    d, e, f = X[1, 0], X[1, 1], X[1, 2]
    g, h, k = X[2, 0], X[2, 1], X[2, 2]
    return a * (e * k - f * h) - b * (d * k - f * g) + c * (d * h - e * g)


@kernel
def _outside(p, po, q, qo, v, vo, X, S, c) -> bool:
    """The kinematics of a joint type from outside the package, at its address, checked
    (:func:`_checked`): called on views of exactly its own parameters, ``q`` and ``ν`` (its
    bounds-checked code cannot read a neighbour's numbers) and with all of ``X`` and ``S``
    zeroed (so a write outside its storage shows)."""
    address = int(p[po + Packed.kinematics + complex_slot(X[0, 0])])
    if address == 0:
        return False
    nv, nq, count = int(p[po + Packed.nv]), int(p[po + Packed.nq]), int(p[po + Packed.count])
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            X[i, j] = 0
    for i in range(S.shape[0]):
        for j in range(S.shape[1]):
            S[i, j] = 0
    pp = po + Packed.parameters
    return (call_kinematics(address, (p[pp: pp + count], 0, q[qo: qo + nq], 0, v[vo: vo + nv], 0, X, S, c))
            and _checked(X, S, c, nv))


@kernel
def joint_kinematics_at(code, reverse, p, po, q, qo, v, vo, X, S, c) -> bool:
    """:func:`joint_kinematics` with the :data:`Packed` record, positions and velocities at
    offsets ``po``, ``qo``, ``vo`` of larger vectors (no slices: the state kernels' hot path),
    and ``X_J = rot(E) xlt(r)`` left in the ``(E, r)`` storage of :func:`expand` (``E`` in
    ``X[:3, :3]``, ``r`` in ``X[:3, 3]``; the rest of ``X`` is not written) and only the joint's
    ``nv`` columns of ``S`` written. A library joint's function is inlined (a switch on
    ``code``); any other joint type's is called through its address, all of ``X`` and ``S``
    zeroed, and its outputs checked (:func:`_outside`)."""
    for i in range(3):
        for j in range(4):
            X[i, j] = 0
    nv = int(p[po + Packed.nv])
    for i in range(6):
        c[i] = 0
        for j in range(nv):
            S[i, j] = 0
    pp = po + Packed.parameters
    if code == FIXED:
        ok = _fixed(p, pp, q, qo, v, vo, X, S, c)
    elif code == HELICAL:
        ok = _helical(p, pp, q, qo, v, vo, X, S, c)
    elif code == PRISMATIC:
        ok = _prismatic(p, pp, q, qo, v, vo, X, S, c)
    elif code == RACK_AND_PINION:
        ok = _rack_and_pinion(p, pp, q, qo, v, vo, X, S, c)
    elif code == CYLINDRICAL:
        ok = _cylindrical(p, pp, q, qo, v, vo, X, S, c)
    elif code == PLANAR:
        ok = _planar(p, pp, q, qo, v, vo, X, S, c)
    elif code == SPHERICAL:
        ok = _spherical(p, pp, q, qo, v, vo, X, S, c)
    elif code == EULER_ZYX:
        ok = _euler_zyx(p, pp, q, qo, v, vo, X, S, c)
    elif code == FREE:
        ok = _free(p, pp, q, qo, v, vo, X, S, c)
    elif code == ADDRESS:
        ok = _outside(p, po, q, qo, v, vo, X, S, c)
    else:
        ok = False
    if not ok:
        return False
    if reverse:
        # X' = X^{-1} = rot(Eᵀ) xlt(−E r), S' = −X^{-1} S, c' = −X^{-1} c
        reverse_transform(X)
        negative_apply(X, S, nv)
        negative_apply(X, c.reshape((6, 1)), 1)
    return True


@kernel
def joint_qdot_at(code, p, po, q, qo, v, vo, out, oo) -> bool:
    """``q̇`` of a joint with a ``q̇`` map of its own (declared ``qdot``) into ``out[oo:]``, the
    :data:`Packed` record at ``p[po:]``. A joint type from outside the package (its ``qdot``
    address filled in) is called on views of exactly its own parameters, ``q``, ``ν`` and
    ``q̇`` (:func:`_outside`); False when it rejects the state, raises (an index past its views)
    or gives a number that is not finite."""
    pp = po + Packed.parameters
    if code == SPHERICAL:
        return _ball_rate(p, pp, q, qo, v, vo, out, oo)
    if code == FREE:
        return _free_rate(p, pp, q, qo, v, vo, out, oo)
    if code == PLANAR:
        return _planar_rate(p, pp, q, qo, v, vo, out, oo)
    address = int(p[po + Packed.qdot])
    if code != ADDRESS or address == 0:
        return False
    nv, nq, count = int(p[po + Packed.nv]), int(p[po + Packed.nq]), int(p[po + Packed.count])
    x = out[oo: oo + nq]  # its own block: a write past it is the bounds check's error, not a neighbour's entry
    return (call_qdot(address, (p[pp: pp + count], 0, q[qo: qo + nq], 0, v[vo: vo + nv], 0, x, 0))
            and _all_finite(x))


@kernel
def joint_normalize_at(code, p, po, q, qo) -> bool:
    """A joint's declared projection of ``q[qo:]``, in place (:func:`joint_qdot_at`)."""
    pp = po + Packed.parameters
    if code == SPHERICAL or code == FREE:
        return _unit_quaternion(p, pp, q, qo)
    address = int(p[po + Packed.normalize])
    if code != ADDRESS or address == 0:
        return False
    x = q[qo: qo + int(p[po + Packed.nq])]
    return call_normalize(address, (p[pp: pp + int(p[po + Packed.count])], 0, x, 0)) and _all_finite(x)


@register
def _all_finite(x) -> bool:
    """No entry of the vector ``x`` is NaN or infinite."""
    for i in range(x.shape[0]):
        if not _finite(x[i]):
            return False
    return True


# ---------------------------------------------------------------------------- joint types
#: joint type -> its compiled kinematics: the library's, and those declared with :func:`joint_type`
#: (a subclass that declares nothing inherits its nearest base's: :func:`joint_kernel`)
TYPES: dict[type, JointKernel] = {
    Helical: LIBRARY[HELICAL], Prismatic: LIBRARY[PRISMATIC], RackAndPinion: LIBRARY[RACK_AND_PINION],
    Cylindrical: LIBRARY[CYLINDRICAL], Planar: LIBRARY[PLANAR], Spherical: LIBRARY[SPHERICAL],
    SphericalEulerZYX: LIBRARY[EULER_ZYX], Free: LIBRARY[FREE], Fixed: LIBRARY[FIXED],
}
for _kind, _entry in TYPES.items():
    _entry.owner = _kind  # the class whose Python kinematics the compiled ones equal


def joint_kernel(kind: type) -> JointKernel | None:
    """The compiled kinematics of joint type ``kind``: its own (:data:`TYPES`), else its nearest
    base's, else None (its Python kinematics are the only ones)."""
    for base in kind.__mro__:
        entry = TYPES.get(base)
        if entry is not None:
            return entry
    return None


def joint_type(*, kinematics: Callable, nq: int, nv: int, parameters: int = 0, qdot: Callable | None = None,
               normalize: Callable | None = None, constant_motion: bool = False, name: str | None = None):
    """Declare a :class:`Joint` subclass's compiled kinematics (a class decorator): one
    declaration, and the joint runs compiled in every request of every system, in batches,
    complex-step derivatives and compiled rollouts (:mod:`sko.engine.joint_registry` gives the
    signatures of ``kinematics``, ``qdot`` and ``normalize``).

    The class gets ``nq``, ``nv``, :attr:`~sko.bodies.joints.Joint.constant_motion` and its
    entry in :data:`TYPES`; its instances give their constants by
    :meth:`~sko.bodies.joints.Joint.compiled_parameters` (``parameters`` numbers). Where the class does not write its own, its Python ``_kinematics``, ``_qdot`` and
    ``normalize`` call the compiled functions (checked: finite, ``S`` of full column rank), so
    the reference path computes the same joint; written in Python, they are an independent
    reference for the compiled ones.

    Examples
    --------
    A revolute joint about z through a gear: the angle is ``N q`` for a ratio ``N``, so
    ``E = rz(N q)``, ``S = [0, 0, N, 0, 0, 0]ᵀ``:

    >>> import numpy as np
    >>> from sko.bodies import Joint
    >>> def turn(p, po, q, qo, v, vo, X, S, c):
    ...     a = p[po] * q[qo]
    ...     X[0, 0], X[0, 1], X[1, 0], X[1, 1], X[2, 2] = np.cos(a), np.sin(a), -np.sin(a), np.cos(a), 1.0
    ...     S[2, 0] = p[po]
    ...     return True
    >>> @joint_type(kinematics=turn, nq=1, nv=1, parameters=1, constant_motion=True)
    ... class GearedRevolute(Joint):
    ...     def __init__(self, ratio, name=None):
    ...         super().__init__(name)
    ...         self.ratio = float(ratio)
    ...     def compiled_parameters(self):
    ...         return np.array([self.ratio])
    >>> GearedRevolute(2.0).motion_subspace([0.1]).ravel()
    array([0., 0., 2., 0., 0., 0.])
    """
    def declare(cls):
        if not (isinstance(cls, type) and issubclass(cls, Joint)) or cls is Joint:
            raise JointError(f"joint_type decorates a subclass of Joint, got {cls!r}")
        entry = JointKernel(kinematics, nq=nq, nv=nv, parameters=parameters, qdot=qdot, normalize=normalize,
                            constant_motion=constant_motion, name=name or f"{cls.__module__}.{cls.__qualname__}")
        entry.owner = cls
        TYPES[cls], cls.nq, cls.nv = entry, entry.nq, entry.nv
        cls.constant_motion, cls.user_defined = entry.constant_motion, True
        if "_kinematics" not in cls.__dict__:
            def _kinematics(self, q, v):
                E, r, S, c = entry.run_kinematics(self, _parameters(self, entry), q, v)
                return JointKinematics(plucker(E, r), S, c)
            cls._kinematics = _kinematics
        if entry.has_qdot and "_qdot" not in cls.__dict__:
            cls._qdot = lambda self, q, v: entry.run_qdot(self, _parameters(self, entry), q, v)
        if entry.has_normalize and "normalize" not in cls.__dict__:
            def _normalize(self, q):
                q = self._vector(q, self.nq, "q")
                return entry.run_normalize(self, _parameters(self, entry), q)
            cls.normalize = _normalize
        REGISTRY[entry.name] = entry
        return cls

    return declare


def _parameters(joint: Joint, entry: JointKernel) -> np.ndarray:
    """The joint's :meth:`~Joint.compiled_parameters`, checked against its declaration."""
    p = checked_parameters(joint, entry)
    if p is None:
        raise JointError(f"{joint}: its compiled functions take numbers, but compiled_parameters() gives "
                         f"{joint.compiled_parameters()!r}")
    return p
