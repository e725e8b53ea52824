"""The rigid body as a body type (RIGID.md, *The SKO model in body coordinates*).

Node velocity ``𝒱(k) = v_k`` (``m_k = 6``), ``E_k = ᵏX_o = X_J X_T``, ``H(k) = S*``,
``M(k) = I_k``, ``a(k) = ᵏX_o γ_o + c_J + v_k × S θ̇`` and ``b(k) = v_k ×* I_k v_k``
(``v ×* f = −(v×)ᵀ f``).
It offers one attachment, its own frame: ``Γ = I``, ``γ = 0``.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable

import numpy as np

from sko.bodies.joints import Joint
from sko.spatial import inertia_parameters

from sko.bodies.contract import Attachment, BodyError, BodyType, NodeState
from sko.bodies.rigid_parameters import (RIGID_PARAMETER_NAMES, rigid_energy_regressors, rigid_force_regressor,
                                         rigid_inertia, rigid_parameters)
from sko.bodies.hinge import JointCoordinates, checked_placement, checked_spatial_inertia, hinge_state

__all__ = ["RigidBody"]

#: The body frame's ``Γ = I`` and ``γ = 0`` (read-only constants shared by every state).
_IDENTITY, _ZERO = np.eye(6), np.zeros(6)
_IDENTITY.setflags(write=False)
_ZERO.setflags(write=False)


class RigidBody(JointCoordinates, BodyType):
    """A rigid body hanging from its parent through a joint of :mod:`sko.bodies.joints`.

    Parameters
    ----------
    name, parent, attach : see :class:`~sko.bodies.contract.BodyType`
    joint : sko.bodies.joints.Joint
    inertia : (6, 6) array
        Spatial inertia about the body frame (``sko.spatial.spatial_inertia``) of a physical
        body; massless bodies and point masses are allowed.
    placement : (6, 6) array, optional
        ``X_T``: Plücker transform from the attachment frame to the joint's predecessor frame.

    Examples
    --------
    >>> from sko.bodies.joints import Revolute
    >>> from sko.spatial import spatial_inertia
    >>> body = RigidBody("arm", None, Revolute([0, 1, 0]), spatial_inertia(1.0, [0, 0, -1], np.eye(3)))
    >>> body.node_dim, body.dof_size, body.q_size
    (6, 1, 1)
    """

    node_dim = 6

    def __init__(self, name: Hashable, parent: Hashable | None, joint: Joint, inertia, placement=None,
                 attach: Hashable | None = None):
        super().__init__(name, parent, attach)
        if not isinstance(joint, Joint):
            raise BodyError(f"joint of body {name!r} must be a sko.bodies.joints.Joint, got {type(joint).__name__}")
        self.joint = joint
        self.inertia = checked_spatial_inertia(inertia, name)
        self.placement = checked_placement(placement, name)
        self.q_size, self.dof_size = joint.nq, joint.nv
        self._mass, self._com = self.inertia[5, 5], np.zeros(3)
        if self._mass != 0:
            _, self._com, _ = inertia_parameters(self.inertia)
        self.valid_by_construction = not joint.user_defined

    def at_state(self, q, qd, inboard: Attachment, gravity) -> NodeState:
        h = hinge_state(self.joint, self.placement, q, qd, inboard)
        com = h.position + h.rotation @ self._com
        frame = Attachment(Gamma=_IDENTITY, gamma=_ZERO, rotation=h.rotation, position=h.position, velocity=h.v)
        return NodeState(E=h.X, H=h.S.T, M=self.inertia, a=h.a, b=-((self.inertia @ h.v) @ h.v_cross), V=h.v,
                         attachments={None: frame}, potential=-self._mass * (gravity @ com))

    # ------------------------------------------------------------------ inertial parameters
    def inertial_parameters(self) -> np.ndarray:
        """``[m, m c, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]`` about the body frame (Pinocchio's
        order; :mod:`sko.bodies.rigid_parameters`)."""
        return rigid_parameters(self.inertia)

    def inertial_parameter_names(self) -> tuple:
        return RIGID_PARAMETER_NAMES

    def with_inertial_parameters(self, parameters, check: bool = True) -> "RigidBody":
        """This body with the spatial inertia of ``parameters`` (see
        :meth:`~sko.bodies.contract.BodyType.with_inertial_parameters`)."""
        p = checked_parameters(self, parameters, len(self.inertial_parameters()), check)
        new = copy.copy(self)
        new._set_parameters(p, check)
        return new

    def _set_parameters(self, p: np.ndarray, check: bool) -> None:
        """Replace the inertia by that of the first ten of ``p`` (on a fresh copy only)."""
        inertia = rigid_inertia(p[:10])
        if check:
            inertia = checked_spatial_inertia(inertia, self.name)
        else:
            inertia.setflags(write=False)
        self.inertia = inertia
        self._mass, self._com = p[0], np.zeros(3, dtype=p.dtype)
        if p[0] != 0:
            self._com = p[1:4] / p[0]

    def node_regressor(self, state: NodeState, alpha: np.ndarray) -> np.ndarray:
        """``I α + v ×* I v = F π`` (:func:`~sko.bodies.rigid_parameters.rigid_force_regressor`)."""
        return rigid_force_regressor(state.V[:6], alpha[:6])

    def energy_regressors(self, state: NodeState, gravity: np.ndarray) -> tuple:
        frame = state.attachments[None]
        return rigid_energy_regressors(state.V[:6], frame.rotation, frame.position, gravity)


def checked_parameters(body: BodyType, parameters, size: int, check: bool) -> np.ndarray:
    """``parameters`` as a 1-D array of ``size`` finite numbers (real when ``check``), or the
    :class:`BodyError` naming the body."""
    try:
        p = np.array(parameters, dtype=complex if not check else float)
    except (TypeError, ValueError):
        raise BodyError(f"inertial parameters of body {body.name!r} must be {size} numbers, got {parameters!r}") from None
    if p.shape != (size,):
        raise BodyError(f"body {body.name!r} ({type(body).__name__}) has {size} inertial parameters, got shape {p.shape}")
    if not np.isfinite(p).all():
        raise BodyError(f"inertial parameters of body {body.name!r} must be finite, got {p.tolist()}")
    if not check and not np.iscomplexobj(parameters) and not np.iscomplex(p).any():
        p = p.real.copy()
    return p
