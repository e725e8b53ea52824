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

from sko.spatial import check_inertia_size

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
        check_inertia_size(A, f"armature of body {name!r}", BodyError)  # on ℳ's diagonal: the rule of the inertia
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

    # ------------------------------------------------------------------ inertial parameters
    def inertial_parameters(self) -> np.ndarray:
        """The rigid body's ten parameters, then the armature ``A`` (one per joint coordinate)."""
        return np.concatenate([super().inertial_parameters(), self.armature])

    def inertial_parameter_names(self) -> tuple:
        return (*super().inertial_parameter_names(), *(f"armature_{i}" for i in range(self.dof_size)))

    def _set_parameters(self, p: np.ndarray, check: bool) -> None:
        super()._set_parameters(p, check)
        A = p[10:]
        if check and (A < 0).any():
            raise BodyError(f"armature of body {self.name!r} must be non-negative, got {A.tolist()}")
        if check:
            check_inertia_size(A, f"armature of body {self.name!r}", BodyError)
        n = self.dof_size
        self.armature = A
        self._M = np.zeros((6 + n, 6 + n), dtype=np.result_type(A, self.inertia))
        self._M[:6, :6], self._M[6:, 6:] = self.inertia, np.diag(A)

    def node_regressor(self, state: NodeState, alpha: np.ndarray) -> np.ndarray:
        """``[F_rigid, 0; 0, diag(α_θ)]``: the armature's force ``A θ̈`` on the node's last entries."""
        n = self.dof_size
        F = np.zeros((6 + n, 10 + n), dtype=np.result_type(state.V, alpha))
        F[:6, :10] = super().node_regressor(state, alpha)
        F[6:, 10:] = np.diag(alpha[6:])
        return F

    def energy_regressors(self, state: NodeState, gravity: np.ndarray) -> tuple:
        yT, yV = super().energy_regressors(state, gravity)
        w = state.V[6:]
        return np.concatenate([yT, 0.5 * w * w]), np.concatenate([yV, np.zeros(self.dof_size, dtype=yV.dtype)])
