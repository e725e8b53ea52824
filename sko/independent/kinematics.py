"""Homogeneous-transform kinematics for the independent particle model.

Conventions (stated here once, used by :mod:`sko.independent.lagrange`):

* A pose is a 4 × 4 homogeneous transform ``T = [[R, p], [0, 1]]``: the columns of ``R`` are the
  axes of the moving frame and ``p`` its origin, both in the reference frame's coordinates, so a
  point with coordinates ``x`` in the moving frame has coordinates ``R x + p`` in the reference.
* A joint maps its coordinates ``q_j`` to the pose of its successor frame in its predecessor
  frame, and its velocity coordinates ``θ̇_j`` to ``q̇_j = G(q_j) θ̇_j``:

  - revolute about a unit axis ``u``: ``q = θ``, ``T = [Rot(u, θ), 0]``, ``G = 1``;
  - prismatic along ``u``: ``T = [I, u q]``, ``G = 1``;
  - spherical: ``q`` a quaternion ``(w, x, y, z)``, ``θ̇ = ω`` the angular velocity in the
    successor frame, ``q̇ = ½ q ⊗ (0, ω)``;
  - free: ``q = (quaternion, p)`` (7), ``θ̇ = (ω, v)`` angular velocity and velocity of the
    origin, both in the successor frame; ``ṗ = R v``, quaternion as for spherical.

  Quaternions are normalised inside the kinematics by ``√(q·q)`` (no complex conjugate), so the
  positions are analytic in ``q`` and invariant along ``q``: complex-step derivatives are exact
  and the velocities of a tangent motion do not depend on the length of ``q``.

Every function keeps the scalar type of its input (float or complex).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = [
    "skew",
    "homogeneous",
    "rotation_about",
    "rotation_from_quaternion",
    "rotation_from_vector",
    "IndependentJoint",
    "revolute_joint",
    "prismatic_joint",
    "spherical_joint",
    "free_joint",
]


def skew(w) -> np.ndarray:
    """The matrix ``w×`` with ``(w×) x = w × x``."""
    w = np.asarray(w)
    z = np.zeros((), dtype=w.dtype)
    return np.array([[z, -w[2], w[1]], [w[2], z, -w[0]], [-w[1], w[0], z]])


def homogeneous(R, p) -> np.ndarray:
    """``[[R, p], [0, 1]]``."""
    R, p = np.asarray(R), np.asarray(p)
    T = np.zeros((4, 4), dtype=np.result_type(R, p, float))
    T[:3, :3], T[:3, 3], T[3, 3] = R, p, 1.0
    return T


def rotation_about(axis, angle) -> np.ndarray:
    """Rodrigues' formula ``Rot(u, θ) = I + sin θ u× + (1 − cos θ) u×²`` for a unit axis ``u``."""
    K = skew(np.asarray(axis, dtype=float))
    return np.eye(3) + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)


def rotation_from_quaternion(quat) -> np.ndarray:
    """Rotation matrix of the quaternion ``(w, x, y, z)`` after normalising by ``√(q·q)``."""
    quat = np.asarray(quat)
    w, x, y, z = quat / np.sqrt(quat @ quat)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def rotation_from_vector(psi) -> np.ndarray:
    """``exp(ψ×)`` (rotation by ``|ψ|`` about ``ψ``) by the matrix exponential: its Taylor
    series (20 terms) after scaling by ``2^-s`` so the argument has norm below ½, then ``s``
    squarings. Analytic in ``ψ``, so complex steps pass through."""
    A = skew(psi)
    s = max(0, int(np.ceil(np.log2(max(np.abs(A).sum(axis=0).max(), 1e-300)))) + 1)
    A = A / 2**s
    term = np.eye(3, dtype=A.dtype)
    out = term.copy()
    for k in range(1, 20):
        term = term @ A / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


def _quaternion_rate(quat) -> np.ndarray:
    """``G`` with ``q̇ = G ω`` for ``q̇ = ½ q ⊗ (0, ω)`` (``ω`` in the rotated frame)."""
    w, x, y, z = np.asarray(quat)
    return 0.5 * np.array([[-x, -y, -z], [w, -z, y], [z, w, -x], [-y, x, w]])


@dataclass(frozen=True)
class IndependentJoint:
    """A joint of the particle model: sizes, pose map and ``q̇`` map.

    ``pose(q_j)`` is the 4 × 4 pose of the successor in the predecessor frame,
    ``qdot_map(q_j)`` the ``n_q × n_v`` matrix ``G`` with ``q̇_j = G θ̇_j``.
    """

    kind: str
    nq: int
    nv: int
    pose: Callable[[np.ndarray], np.ndarray]
    qdot_map: Callable[[np.ndarray], np.ndarray]


def _unit(axis) -> np.ndarray:
    u = np.asarray(axis, dtype=float)
    return u / np.linalg.norm(u)


def revolute_joint(axis) -> IndependentJoint:
    u = _unit(axis)
    return IndependentJoint("revolute", 1, 1, lambda q: homogeneous(rotation_about(u, q[0]), np.zeros(3)),
                            lambda q: np.eye(1))


def prismatic_joint(axis) -> IndependentJoint:
    u = _unit(axis)
    return IndependentJoint("prismatic", 1, 1, lambda q: homogeneous(np.eye(3), u * q[0]), lambda q: np.eye(1))


def spherical_joint() -> IndependentJoint:
    return IndependentJoint("spherical", 4, 3, lambda q: homogeneous(rotation_from_quaternion(q), np.zeros(3)),
                            _quaternion_rate)


def _free_rate(q) -> np.ndarray:
    G = np.zeros((7, 6), dtype=np.result_type(q, float))
    G[:4, :3] = _quaternion_rate(q[:4])
    G[4:, 3:] = rotation_from_quaternion(q[:4])
    return G


def free_joint() -> IndependentJoint:
    return IndependentJoint("free", 7, 6, lambda q: homogeneous(rotation_from_quaternion(q[:4]), q[4:]), _free_rate)
