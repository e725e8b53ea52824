"""A rigid body whose joint carries armature: reflected rotor inertia on its own diagonal of ℳ
(MuJoCo's ``armature``; BODIES.md, *The contract for a new body type*).

A motor rotor behind a gear of ratio ``N`` adds ``½ J N² θ̇²`` to the kinetic energy; lumped
per joint coordinate as ``A = J N²`` it adds ``diag(A)`` to the joint's diagonal block of ``ℳ``
and nothing else (the rotor's own gyroscopic coupling neglected). As an SKO node:

* ``𝒱(k) = [v_k; θ̇_k]`` (``m_k = 6 + n_k``), ``E_k = [ᵏX_o; 0]``, ``H*(k) = [S; 1]``,
* ``M(k) = diag(I_k, diag(A))``, ``a(k) = [a_rigid; 0]``, ``b(k) = [b_rigid; 0]``
  (``d θ̇/dt − H*(k) θ̈ = 0``),
* its frame is offered to children with ``Γ = [1₆, 0]``, ``γ = 0``.

So ``H φ M φ* H*`` is the rigid ``ℳ`` plus ``diag(A)`` on the body's joint coordinates.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from sko.bodies.contract import Attachment, BodyError, NodeState
from sko.bodies.joints import Joint
from sko.bodies.rigid import RigidBody

__all__ = ["ArmatureBody"]


class ArmatureBody(RigidBody):
    """A :class:`~sko.bodies.rigid.RigidBody` plus armature ``A`` (one non-negative entry per
    joint velocity coordinate) on its joint's diagonal of ``ℳ``.

    Examples
    --------
    >>> from sko.bodies.joints import Revolute
    >>> from sko.spatial import spatial_inertia
    >>> body = ArmatureBody("arm", None, Revolute(), spatial_inertia(1.0, [0.5, 0, 0], np.eye(3)), [0.1])
    >>> body.node_dim, body.dof_size
    (7, 1)
    """

    def __init__(self, name: Hashable, parent: Hashable | None, joint: Joint, inertia, armature, placement=None,
                 attach: Hashable | None = None):
        super().__init__(name, parent, joint, inertia, placement, attach)
        A = np.array(armature, dtype=float)
        if A.shape != (joint.nv,) or not np.isfinite(A).all() or (A < 0).any():
            raise BodyError(f"armature of body {name!r} must be {joint.nv} finite non-negative numbers, got {armature!r}")
        self.armature = A
        n = joint.nv
        self.node_dim = 6 + n
        self._M = np.zeros((6 + n, 6 + n))
        self._M[:6, :6], self._M[6:, 6:] = self.inertia, np.diag(A)
        self._Gamma = np.eye(6, 6 + n)

    def at_state(self, q, qd, inboard: Attachment, gravity) -> NodeState:
        s = super().at_state(q, qd, inboard, gravity)
        n, dtype = self.dof_size, s.a.dtype
        E = np.zeros((6 + n, 6), dtype=s.E.dtype)
        E[:6] = s.E
        H = np.concatenate([s.H, np.eye(n, dtype=s.H.dtype)], axis=1)
        pad = np.zeros(n, dtype=dtype)
        frame = s.attachments[None]
        frame = Attachment(Gamma=self._Gamma, gamma=frame.gamma, rotation=frame.rotation, position=frame.position,
                           velocity=frame.velocity)
        return NodeState(E=E, H=H, M=self._M, a=np.concatenate([s.a, pad]), b=np.concatenate([s.b, pad]),
                         V=np.concatenate([s.V, np.asarray(qd, dtype=s.V.dtype)]), attachments={None: frame},
                         potential=s.potential)
