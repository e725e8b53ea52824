"""Joints built from joints, and MuJoCo's free-joint coordinates (RIGID.md, *Joint library*).

* :class:`CompositeJoint`: several joints in series on one body, with fixed transforms between
  them (MuJoCo's several joints on one body). Joint ``i`` has predecessor frame ``A_i`` times
  the successor of joint ``i − 1``, so ``X_J = X_n A_n ⋯ X_1 A_1``. With
  ``ᶠX_i = X_n A_n ⋯ X_{i+1} A_{i+1}`` (joint ``i``'s successor to the final frame) and
  ``u_i = ᶠX_i S_i ν_i``, ``S = [ᶠX_1 S_1, …, S_n]`` and, treating the joints as a chain of
  massless bodies (the predecessor's velocity cancels),

      c_J = Σ_i ᶠX_i c_i + Σ_{j<i} u_j × u_i.

* :class:`OffsetJoint`: a one-dof joint read at ``q − q₀`` (MuJoCo's hinge and slide joints
  measure from ``qpos0``, the ``ref`` attribute).
* :class:`FreePositionFirst`: MuJoCo's free joint, ``q = (p, w, x, y, z)`` and
  ``ν = (ṗ, ω)``: the origin's velocity in the predecessor (world) frame, the angular velocity
  in the successor frame. With ``R`` the successor's axes, ``v_s = [ω; Rᵀ ṗ]``, so
  ``S = [[0, 1], [Rᵀ, 0]]`` and ``c_J = Ṡ ν = [0; −ω × Rᵀ ṗ]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sko.arrays import result_dtype
from sko.errors import JointError
from sko.spatial import (analytic_norm, crm, float_or_complex, plucker, quaternion_conjugate, quaternion_exp,
                         quaternion_log, quaternion_matrix, quaternion_multiply, quaternion_rate)

from sko.bodies.joints import Joint, JointKinematics, JointLimits, _check_quaternion, _unit_quaternion

__all__ = ["CompositeJoint", "OffsetJoint", "FreePositionFirst"]


class CompositeJoint(Joint):
    """Joints in series on one body: ``parts = [(A_1, joint_1), …, (A_n, joint_n)]``.

    ``A_i`` (6 × 6 Plücker transform, ``None`` for the identity) goes from joint ``i − 1``'s
    successor frame (the predecessor frame for ``i = 1``) to joint ``i``'s predecessor frame.
    ``q`` and ``ν`` stack the joints' coordinates in order (module docstring).
    """

    kind = "composite"

    def __init__(self, parts: Sequence, name: str | None = None):
        super().__init__(name)
        parts = [(np.eye(6) if A is None else np.array(A, dtype=float), j) for A, j in parts]
        if not parts or any(not isinstance(j, Joint) or A.shape != (6, 6) for A, j in parts):
            raise JointError(f"CompositeJoint {name!r}: parts must be a non-empty list of (6 × 6 transform or None, Joint)")
        self.parts = tuple(parts)
        self.nq = sum(j.nq for _, j in parts)
        self.nv = sum(j.nv for _, j in parts)
        if self.nv > 6:
            raise JointError(f"CompositeJoint {name!r}: {self.nv} velocity coordinates, a rigid joint has at most 6")
        self._q, self._v, qo, vo = [], [], 0, 0
        for _, j in parts:
            self._q.append(slice(qo, qo + j.nq))
            self._v.append(slice(vo, vo + j.nv))
            qo, vo = qo + j.nq, vo + j.nv

    @property
    def user_defined(self) -> bool:
        return any(j.user_defined for _, j in self.parts)

    @property
    def limits(self) -> JointLimits:
        """The parts' limits, stacked in order (unless set on the composite itself)."""
        own = getattr(self, "_limits", None)
        if own is not None:
            return own
        parts = [j.limits for _, j in self.parts]
        return JointLimits(*(np.concatenate([getattr(lim, key) for lim in parts]) for key in JointLimits._fields))

    def neutral(self):
        return np.concatenate([j.neutral() for _, j in self.parts])

    def random(self, rng):
        return np.concatenate([j.random(rng) for _, j in self.parts])

    def normalize(self, q):
        q = self._vector(q, self.nq, "q")
        return np.concatenate([j.normalize(q[s]) for (_, j), s in zip(self.parts, self._q)])

    def _integrate(self, q, v, dt):
        """Joint by joint: each part's coordinates follow its own velocity alone."""
        return np.concatenate([j.integrate(q[s], v[r], dt) for (_, j), s, r in zip(self.parts, self._q, self._v)])

    def difference(self, q0, q1):
        """Joint by joint, the inverse of :meth:`integrate` at ``dt = 1``."""
        q0, q1 = self._vector(q0, self.nq, "q0"), self._vector(q1, self.nq, "q1")
        return np.concatenate([j.difference(q0[s], q1[s]) for (_, j), s in zip(self.parts, self._q)])

    def _qdot(self, q, v):
        return np.concatenate([j._qdot(q[s], v[r]) for (_, j), s, r in zip(self.parts, self._q, self._v)])

    def _kinematics(self, q, v):
        dtype = result_dtype(q, v)
        X = np.eye(6, dtype=dtype)
        columns, biases, velocities = [], [], []
        for (A, j), s, r in zip(self.parts, self._q, self._v):
            Xi, Si, ci = j._kinematics(q[s], v[r])
            Y = Xi @ A
            X = Y @ X
            # bring what is known so far into joint i's successor frame, then add joint i
            columns = [Y @ C for C in columns] + [Si]
            biases = [Y @ b for b in biases] + [ci]
            velocities = [Y @ u for u in velocities] + [Si @ v[r]]
        S = np.concatenate(columns, axis=1) if columns else np.zeros((6, 0), dtype=dtype)
        c = sum(biases)
        total = np.zeros(6, dtype=dtype)
        for u in velocities:  # Σ_{j<i} u_j × u_i
            c = c + crm(total) @ u
            total = total + u
        return JointKinematics(X, S, c)


class OffsetJoint(Joint):
    """A joint with ``ν = q̇`` read at ``q − q₀``: ``X_J(q) = X_joint(q − q₀)``; neutral ``q₀``."""

    kind = "offset"

    def __init__(self, joint: Joint, offset, name: str | None = None):
        super().__init__(joint.name if name is None else name)
        if not isinstance(joint, Joint) or joint.nq != joint.nv:
            raise JointError(f"OffsetJoint {name!r} needs a joint with ν = q̇, got {joint!r}")
        self.joint, self.nq, self.nv = joint, joint.nq, joint.nv
        self.offset = self._vector(np.asarray(offset, dtype=float), self.nq, "offset")

    @property
    def user_defined(self) -> bool:
        return self.joint.user_defined

    def neutral(self):
        return self.joint.neutral() + self.offset

    def random(self, rng):
        return self.joint.random(rng) + self.offset

    def _kinematics(self, q, v):
        return self.joint._kinematics(q - self.offset, v)


class FreePositionFirst(Joint):
    """MuJoCo's free joint: ``q = (p, w, x, y, z)``, ``ν = (ṗ in F_p, ω in F_s)`` (module docstring)."""

    nq, nv = 7, 6
    kind = "free-position-first"

    def neutral(self):
        return np.array([0.0, 0, 0, 1, 0, 0, 0])

    def random(self, rng):
        return np.concatenate([rng.uniform(-1.0, 1.0, 3), _unit_quaternion(rng)])

    def normalize(self, q):
        q = np.array(float_or_complex(self._vector(q, 7, "q")))  # a complex step stays complex
        _check_quaternion(q[3:], self)
        q[3:] /= analytic_norm(q[3:])
        return q

    def _integrate(self, q, v, dt):
        """Exact for constant ``ν``: ``p`` moves along ``ṗ`` and ``R ← R exp(dt ω)``."""
        self._numbers_only("integrate", q, v)
        q = self.normalize(q)
        v = float_or_complex(v)
        quat = quaternion_multiply(q[3:], quaternion_exp(dt * v[3:]))
        return self.normalize(np.concatenate([q[:3] + dt * v[:3], quat]))

    def difference(self, q0, q1):
        """``(p₁ − p₀, log(q₀⁻¹ q₁))``: the inverse of :meth:`integrate` at ``dt = 1``."""
        self._numbers_only("difference", q0, q1)
        q0, q1 = self.normalize(q0), self.normalize(q1)
        return np.concatenate([q1[:3] - q0[:3], quaternion_log(quaternion_multiply(quaternion_conjugate(q0[3:]), q1[3:]))])

    def _kinematics(self, q, v):
        _check_quaternion(q[3:], self)
        dtype = result_dtype(q, v)
        R = quaternion_matrix(q[3:])
        S = np.zeros((6, 6), dtype=dtype)
        S[:3, 3:] = np.eye(3)
        S[3:, :3] = R.T
        c = np.zeros(6, dtype=dtype)
        c[3:] = -np.cross(v[3:], R.T @ v[:3])
        return JointKinematics(plucker(R.T, q[:3]), S, c)

    def _qdot(self, q, v):
        out = np.zeros(7, dtype=result_dtype(q, v))
        out[:3] = v[:3]
        out[3:] = quaternion_rate(q[3:], v[3:])
        return out

