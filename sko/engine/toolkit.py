"""The kernel toolkit: spatial algebra and joint kinematics as numba functions a body type's state
kernel or a joint type's kinematics can call (BODIES.md, *The contract for a new body type*;
RIGID.md; Featherstone Chapter 2).

Every function here compiles in nopython mode for float64 and complex128 arrays alike (they are
analytic: complex-step derivatives pass through them) and writes its result into an output
array the caller owns (no allocation), so a kernel calls them on views of its arena
(:func:`~sko.engine.state_kernels.views`). They follow :mod:`sko.spatial`, whose numpy functions give
the same numbers: motion vectors ``[ω; v]``, force vectors ``[n; f]``, ``X = rot(E) xlt(r) =
[[E, 0], [−E r×, E]]`` (``ᴮX_A``), ``X* = X^{-ᵀ}``.

**Spatial algebra** (6-vectors and 6 × 6 matrices as arrays): :func:`skew`, :func:`cross`,
:func:`motion_cross` (``crm(v) x``), :func:`force_cross` (``crf(v) f``), :func:`bias_force`
(``v ×* I v``), :func:`plucker` (``X`` from ``(E, r)``), :func:`plucker_inverse`,
:func:`transform_motion` (``X m``), :func:`transform_force` (``X* f``),
:func:`inertia_congruence` (``Xᵀ I X``: an inertia of ``B`` re-expressed in ``A``),
:func:`transform_inertia` (``X* I X^{-1}``), :func:`rotation_from_axis_angle`,
:func:`rotation_from_quaternion`. In registers (six numbers as a tuple, the library kernels' hot
path): :func:`transform6`, :func:`motion_cross6`, :func:`bias6`.

**Joints**: :func:`joint_kinematics` (``X_J``, ``S``, ``c_J`` of any joint packed by
:func:`pack_joint`: the library's and every declared joint type, either polarity),
:func:`joint_kinematics_at` (the same on offsets, ``X_J`` as ``(E, r)``; expand it with
:func:`expand`), :func:`axis_rotation_transpose`, :func:`quaternion_transpose`,
:func:`quaternion_ok`. **A body on any joint**: :func:`hinge` computes, from the constants of
:func:`hinge_constants` (a joint and the placement of its successor frame), the body's
``ᵏX_o = X_J X_T``, ``S``, ``c_J``, its velocity, ``a = ᵏX_o γ_o + c_J + v × S θ̇`` and its
world pose into a :data:`HingeWork` scratch — what the library's rigid body, rotor link and
flexible body use; a user body type's kernel calls it to hang from any joint a user gives.
"""

from __future__ import annotations

import numpy as np

from sko.engine.jit import register
from sko.engine.joints import (
    JointConstants,
    Packed,
    axis_rotation_transpose,
    expand,
    joint_constants,
    joint_kinematics,
    joint_kinematics_at,
    negative_apply,
    pack_joint,
    quaternion_ok,
    quaternion_transpose,
    reverse_transform,
)
from sko.bodies.joints import Joint
from sko.engine.bodies.rigid import HingeWork, Placement, hinge, placement_constants
from sko.engine.bodies.rigid import bias as bias6
from sko.engine.bodies.rigid import motion_cross as motion_cross6
from sko.engine.bodies.rigid import transform as transform6
from sko.errors import JointError

__all__ = [
    # spatial algebra on arrays
    "skew", "cross", "motion_cross", "force_cross", "bias_force", "plucker", "plucker_inverse",
    "transform_motion", "transform_force", "inertia_congruence", "transform_inertia", "rotation_from_axis_angle",
    "rotation_from_quaternion",
    # in registers
    "transform6", "motion_cross6", "bias6",
    # joints
    "JointConstants", "Packed", "pack_joint", "joint_constants", "joint_kinematics", "joint_kinematics_at",
    "expand", "reverse_transform", "negative_apply", "axis_rotation_transpose", "quaternion_transpose",
    "quaternion_ok",
    # a body on a joint
    "hinge", "HingeWork", "Placement", "placement_constants", "hinge_constants", "HINGE_SCRATCH",
]

#: The scratch :func:`hinge` needs (a kernel's own follows at this offset).
HINGE_SCRATCH = int(HingeWork.SIZE)


def hinge_constants(joint: Joint, placement) -> np.ndarray:
    """The constants :func:`hinge` reads at ``reals[jc]``: the joint's (:data:`JointConstants`)
    then the placement ``X_T`` of the successor frame in the body frame (:data:`Placement`;
    ``ᵏX_o = X_J X_T``). :class:`~sko.errors.JointError` for a joint with no compiled
    kinematics (a :class:`~sko.bodies.joints.CustomJoint`, symbolic parameters)."""
    constants = joint_constants(joint)
    if constants is None:
        raise JointError(f"{joint}: has no compiled kinematics (declare its type with sko.engine.joint_type)")
    return np.concatenate([constants, placement_constants(placement)])


# ---------------------------------------------------------------------------- 3-vectors
@register
def skew(w, W):
    """``W = w×`` (3 × 3), so ``W u = w × u``."""
    W[0, 0], W[0, 1], W[0, 2] = 0 * w[0], -w[2], w[1]
    W[1, 0], W[1, 1], W[1, 2] = w[2], 0 * w[0], -w[0]
    W[2, 0], W[2, 1], W[2, 2] = -w[1], w[0], 0 * w[0]


@register
def cross(a, b, out):
    """``out = a × b`` (3-vectors; ``out`` distinct from ``a`` and ``b``)."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@register
def rotation_from_axis_angle(axis, angle, R):
    """``R`` = the active rotation by ``angle`` about the unit ``axis`` (Rodrigues:
    ``I + sin K + (1 − cos) K²``, ``K = axis×``), as :func:`sko.spatial.axis_angle_matrix`."""
    c, s = np.cos(angle), np.sin(angle)
    x, y, z = axis[0], axis[1], axis[2]
    d = 1 - c
    R[0, 0], R[0, 1], R[0, 2] = 1 + d * (x * x - 1), -s * z + d * x * y, s * y + d * x * z
    R[1, 0], R[1, 1], R[1, 2] = s * z + d * x * y, 1 + d * (y * y - 1), -s * x + d * y * z
    R[2, 0], R[2, 1], R[2, 2] = -s * y + d * x * z, s * x + d * y * z, 1 + d * (z * z - 1)


@register
def rotation_from_quaternion(q, R):
    """``R`` = the active rotation of the quaternion ``q = (w, x, y, z)``, homogeneous
    (``R(q)/‖q‖²``: any nonzero ``q``), as :func:`sko.spatial.quaternion_matrix`."""
    quaternion_transpose(q, 0, R)  # Rᵀ, then transposed in place
    for i in range(3):
        for j in range(i + 1, 3):
            R[i, j], R[j, i] = R[j, i], R[i, j]


# ---------------------------------------------------------------------------- 6-vectors
@register
def motion_cross(v, x, out):
    """``out = v × x = crm(v) x = [ω × x_ω; u × x_ω + ω × x_u]`` for ``v = [ω; u]``."""
    r = motion_cross6((v[0], v[1], v[2], v[3], v[4], v[5]), (x[0], x[1], x[2], x[3], x[4], x[5]))
    for i in range(6):
        out[i] = r[i]


@register
def force_cross(v, f, out):
    """``out = v ×* f = crf(v) f = [ω × n + u × f; ω × f]`` for ``v = [ω; u]``, ``f = [n; f]``."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    n0, n1, n2, f0, f1, f2 = f[0], f[1], f[2], f[3], f[4], f[5]
    out[0] = w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1
    out[1] = w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2
    out[2] = w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0
    out[3] = w1 * f2 - w2 * f1
    out[4] = w2 * f0 - w0 * f2
    out[5] = w0 * f1 - w1 * f0


@register
def bias_force(I, v, out):
    """``out = v ×* (I v)``, the velocity-product force of a body of inertia ``I`` (6 × 6)."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    h = (I[0, 0] * w0 + I[0, 1] * w1 + I[0, 2] * w2 + I[0, 3] * u0 + I[0, 4] * u1 + I[0, 5] * u2,
         I[1, 0] * w0 + I[1, 1] * w1 + I[1, 2] * w2 + I[1, 3] * u0 + I[1, 4] * u1 + I[1, 5] * u2,
         I[2, 0] * w0 + I[2, 1] * w1 + I[2, 2] * w2 + I[2, 3] * u0 + I[2, 4] * u1 + I[2, 5] * u2,
         I[3, 0] * w0 + I[3, 1] * w1 + I[3, 2] * w2 + I[3, 3] * u0 + I[3, 4] * u1 + I[3, 5] * u2,
         I[4, 0] * w0 + I[4, 1] * w1 + I[4, 2] * w2 + I[4, 3] * u0 + I[4, 4] * u1 + I[4, 5] * u2,
         I[5, 0] * w0 + I[5, 1] * w1 + I[5, 2] * w2 + I[5, 3] * u0 + I[5, 4] * u1 + I[5, 5] * u2)
    n0, n1, n2, f0, f1, f2 = h
    out[0] = w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1
    out[1] = w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2
    out[2] = w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0
    out[3] = w1 * f2 - w2 * f1
    out[4] = w2 * f0 - w0 * f2
    out[5] = w0 * f1 - w1 * f0


# ---------------------------------------------------------------------------- Plücker transforms
@register
def plucker(E, r, X):
    """``X = rot(E) xlt(r) = [[E, 0], [−E r×, E]]`` (6 × 6) from ``E`` (3 × 3) and ``r``."""
    for i in range(3):
        X[i, 0], X[i, 1], X[i, 2] = E[i, 0], E[i, 1], E[i, 2]
        X[i, 3] = r[i]  # the (E, r) storage of the joint kernels, expanded in place
    expand(X)


@register
def plucker_inverse(X, Y):
    """``Y = X^{-1} = [[Eᵀ, 0], [Bᵀ, Eᵀ]]`` for ``X = [[E, 0], [B, E]]`` (``Y`` distinct from ``X``)."""
    for i in range(3):
        for j in range(3):
            Y[i, j] = Y[i + 3, j + 3] = X[j, i]
            Y[i + 3, j] = X[j + 3, i]
            Y[i, j + 3] = 0 * X[0, 0]


@register
def transform_motion(X, m, out):
    """``out = X m`` for a Plücker transform ``X = [[E, 0], [B, E]]`` (``out`` distinct from ``m``)."""
    for i in range(3):
        out[i] = X[i, 0] * m[0] + X[i, 1] * m[1] + X[i, 2] * m[2]
        out[i + 3] = (X[i + 3, 0] * m[0] + X[i + 3, 1] * m[1] + X[i + 3, 2] * m[2]
                      + X[i, 0] * m[3] + X[i, 1] * m[4] + X[i, 2] * m[5])


@register
def transform_force(X, f, out):
    """``out = X* f = X^{-ᵀ} f = [[E, B], [0, E]] f`` for the motion transform ``X = [[E, 0], [B, E]]``."""
    for i in range(3):
        out[i] = (X[i, 0] * f[0] + X[i, 1] * f[1] + X[i, 2] * f[2]
                  + X[i + 3, 0] * f[3] + X[i + 3, 1] * f[4] + X[i + 3, 2] * f[5])
        out[i + 3] = X[i, 0] * f[3] + X[i, 1] * f[4] + X[i, 2] * f[5]


@register
def inertia_congruence(X, I, out):
    """``out = Xᵀ I X`` (6 × 6; ``out`` distinct from ``I``): with ``X = ᴮX_A``, an inertia in
    ``B`` coordinates re-expressed in ``A`` (the articulated and composite inertias' step)."""
    for j in range(6):  # column j of I X, then of Xᵀ (I X)
        t0 = t1 = t2 = t3 = t4 = t5 = 0 * X[0, 0]
        for k in range(6):
            xk = X[k, j]
            t0 += I[0, k] * xk
            t1 += I[1, k] * xk
            t2 += I[2, k] * xk
            t3 += I[3, k] * xk
            t4 += I[4, k] * xk
            t5 += I[5, k] * xk
        for i in range(6):
            out[i, j] = X[0, i] * t0 + X[1, i] * t1 + X[2, i] * t2 + X[3, i] * t3 + X[4, i] * t4 + X[5, i] * t5


@register
def transform_inertia(X, I, out):
    """``out = X* I X^{-1}``: an inertia in ``A`` coordinates re-expressed in ``B``, ``X = ᴮX_A``
    (:func:`sko.spatial.transform_inertia`; ``out`` distinct from ``I``)."""
    for j in range(6):  # column j of I Y, then of Yᵀ (I Y), with Y = X^{-1} read off X
        t0 = t1 = t2 = t3 = t4 = t5 = 0 * X[0, 0]
        for k in range(6):
            yk = _inverse_entry(X, k, j)
            t0 += I[0, k] * yk
            t1 += I[1, k] * yk
            t2 += I[2, k] * yk
            t3 += I[3, k] * yk
            t4 += I[4, k] * yk
            t5 += I[5, k] * yk
        for i in range(6):
            out[i, j] = (_inverse_entry(X, 0, i) * t0 + _inverse_entry(X, 1, i) * t1 + _inverse_entry(X, 2, i) * t2
                         + _inverse_entry(X, 3, i) * t3 + _inverse_entry(X, 4, i) * t4
                         + _inverse_entry(X, 5, i) * t5)


@register
def _inverse_entry(X, k, j):
    """Entry ``(k, j)`` of ``X^{-1} = [[Eᵀ, 0], [Bᵀ, Eᵀ]]`` for ``X = [[E, 0], [B, E]]``."""
    if k < 3:
        return X[j, k] if j < 3 else 0 * X[0, 0]
    return X[j + 3, k - 3] if j < 3 else X[j - 3, k - 3]
