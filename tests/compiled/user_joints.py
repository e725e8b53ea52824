"""Joint types written outside the package, each one declaration (``sko.engine.joint_type``) and
no edit of the library: what a researcher's own joint file looks like.

* :class:`PitchedScrew`: a screw whose pitch grows with the angle (``d = h θ + k θ²/2`` along the
  axis): a moving ``S = [u; (h + k θ) u]`` and ``c_J = [0; k θ̇² u]``; its Python kinematics are
  written in numpy, an independent reference for the compiled ones.
* :class:`Universal`: a 2-dof universal joint, ``E = rx(θ₂) rz(θ₁)``: ``S(q)`` moves, ``c_J ≠ 0``;
  numpy Python kinematics too.
* :class:`HandBall`: a ball joint on a quaternion written by hand, with its own ``q̇`` map and
  projection (nq = 4, nv = 3); Python from its kernels only (one declaration).
* :class:`CubicRevolute`: a revolute joint whose coordinate is not the angle: ``θ = q + a q³``,
  ``ν = θ̇``, so ``q̇ = ν / (1 + 3 a q²) ≠ ν``; constant ``S``.
"""

from __future__ import annotations

import numpy as np

from sko.bodies import Joint, JointKinematics
from sko.engine import joint_type
from sko.engine.toolkit import axis_rotation_transpose, quaternion_ok, quaternion_transpose
from sko.spatial import axis_angle_matrix, plucker, rot, rx, rz


# ---------------------------------------------------------------------------- a screw of growing pitch
def _screw(p, po, q, qo, v, vo, X, S, c):
    theta, rate = q[qo], v[vo]
    axis_rotation_transpose(p, po, theta, X)  # E = R_u(θ)ᵀ
    lead = p[po + 3] + p[po + 4] * theta  # dd/dθ = h + k θ
    d = p[po + 3] * theta + 0.5 * p[po + 4] * theta * theta
    for i in range(3):
        X[i, 3] = d * p[po + i]
        S[i, 0] = p[po + i]
        S[i + 3, 0] = lead * p[po + i]
        c[i + 3] = p[po + 4] * rate * rate * p[po + i]
    return True


@joint_type(kinematics=_screw, nq=1, nv=1, parameters=5)
class PitchedScrew(Joint):
    kind = "pitched-screw"

    def __init__(self, axis, pitch: float, growth: float, name=None):
        super().__init__(name)
        self.axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
        self.pitch, self.growth = float(pitch), float(growth)

    def compiled_parameters(self):
        return np.array([*self.axis, self.pitch, self.growth])

    def _kinematics(self, q, v):
        u, h, k = self.axis, self.pitch, self.growth
        X = plucker(axis_angle_matrix(u, q[0]).T, (h * q[0] + 0.5 * k * q[0] ** 2) * u)
        S = np.concatenate([u, (h + k * q[0]) * u]).reshape(6, 1)
        return JointKinematics(X, S, np.concatenate([0 * u, k * v[0] ** 2 * u]))


# ---------------------------------------------------------------------------- a universal joint
def _universal(p, po, q, qo, v, vo, X, S, c):
    c1, s1, c2, s2 = np.cos(q[qo]), np.sin(q[qo]), np.cos(q[qo + 1]), np.sin(q[qo + 1])
    # E = rx(θ₂) rz(θ₁) (coordinate rotations)
    X[0, 0], X[0, 1], X[0, 2] = c1, s1, 0.0
    X[1, 0], X[1, 1], X[1, 2] = -c2 * s1, c2 * c1, s2
    X[2, 0], X[2, 1], X[2, 2] = s2 * s1, -s2 * c1, c2
    S[1, 0], S[2, 0], S[0, 1] = s2, c2, 1.0  # ω = rx(θ₂) e_z θ̇₁ + e_x θ̇₂
    c[1], c[2] = c2 * v[vo] * v[vo + 1], -s2 * v[vo] * v[vo + 1]
    return True


@joint_type(kinematics=_universal, nq=2, nv=2)
class Universal(Joint):
    kind = "universal"

    def _kinematics(self, q, v):
        E = rx(q[1]) @ rz(q[0])
        c2, s2 = np.cos(q[1]), np.sin(q[1])
        S = np.zeros((6, 2), dtype=np.result_type(q, v, float))
        S[1, 0], S[2, 0], S[0, 1] = s2, c2, 1.0
        cJ = np.zeros(6, dtype=S.dtype)
        cJ[1], cJ[2] = c2 * v[0] * v[1], -s2 * v[0] * v[1]
        return JointKinematics(rot(E), S, cJ)


# ---------------------------------------------------------------------------- a ball joint by hand
def _ball(p, po, q, qo, v, vo, X, S, c):
    if not quaternion_ok(q[qo], q[qo + 1], q[qo + 2], q[qo + 3]):
        return False
    quaternion_transpose(q, qo, X)
    S[0, 0] = S[1, 1] = S[2, 2] = 1.0
    return True


def _ball_rate(p, po, q, qo, v, vo, out, oo):
    w, x, y, z = q[qo], q[qo + 1], q[qo + 2], q[qo + 3]
    a, b, d = v[vo], v[vo + 1], v[vo + 2]
    out[oo] = 0.5 * (-x * a - y * b - z * d)
    out[oo + 1] = 0.5 * (w * a - z * b + y * d)
    out[oo + 2] = 0.5 * (z * a + w * b - x * d)
    out[oo + 3] = 0.5 * (-y * a + x * b + w * d)
    return True


def _ball_project(p, po, q, qo):
    n = np.sqrt(q[qo] * q[qo] + q[qo + 1] * q[qo + 1] + q[qo + 2] * q[qo + 2] + q[qo + 3] * q[qo + 3])
    for i in range(4):
        q[qo + i] = q[qo + i] / n
    return True


@joint_type(kinematics=_ball, qdot=_ball_rate, normalize=_ball_project, nq=4, nv=3, constant_motion=True)
class HandBall(Joint):
    kind = "hand-ball"

    def neutral(self):
        return np.array([1.0, 0.0, 0.0, 0.0])

    def random(self, rng):
        q = rng.normal(size=4)
        return q / np.linalg.norm(q)


# ---------------------------------------------------------------------------- a nonlinear coordinate
def _cubic(p, po, q, qo, v, vo, X, S, c):
    axis_rotation_transpose(p, po, q[qo] + p[po + 3] * q[qo] * q[qo] * q[qo], X)
    for i in range(3):
        S[i, 0] = p[po + i]
    return True


def _cubic_rate(p, po, q, qo, v, vo, out, oo):
    out[oo] = v[vo] / (1.0 + 3.0 * p[po + 3] * q[qo] * q[qo])
    return True


@joint_type(kinematics=_cubic, qdot=_cubic_rate, nq=1, nv=1, parameters=4, constant_motion=True)
class CubicRevolute(Joint):
    kind = "cubic-revolute"

    def __init__(self, axis, a: float, name=None):
        super().__init__(name)
        self.axis, self.a = np.asarray(axis, dtype=float) / np.linalg.norm(axis), float(a)

    def compiled_parameters(self):
        return np.array([*self.axis, self.a])

    def random(self, rng):
        return rng.uniform(-1.0, 1.0, 1)
