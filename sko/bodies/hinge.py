"""The joint part shared by body types that hang from their parent through a joint.

A body frame ``F_k`` is reached from the parent's attachment frame ``F_o`` through a fixed
placement ``X_T`` (RIGID.md's tree transform) and a joint ``X_J(q)``: ``ᵏX_o = X_J X_T``, so
the body-frame velocity is ``v_k = ᵏX_o v_o + S q̇`` and (Featherstone, RIGID.md ``a(k)``)

    d v_k/dt = ᵏX_o (Γ_o α(℘) + γ_o) + S θ̈ + c_J + v_k × S θ̇.

The joints are those of :mod:`sko.bodies.joints` (``kinematics(q, v) → (X_J, S, c_J)``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sko.arrays import checked_array
from sko.inertia import check_spatial_inertia
from sko.spatial import check_inertia_size, checked_transform, crm, plucker_rotation, plucker_translation

from sko.bodies.contract import Attachment, BodyError

__all__ = ["HingeState", "hinge_state", "checked_placement", "checked_spatial_inertia", "JointCoordinates"]


class HingeState(NamedTuple):
    """Joint kinematics of a body at a state."""

    X: np.ndarray  #: ᵏX_o = X_J X_T (6 × 6)
    S: np.ndarray  #: motion subspace (6 × n)
    v: np.ndarray  #: body-frame velocity v_k
    a: np.ndarray  #: velocity-product part of dv_k/dt: ᵏX_o γ_o + c_J + v_k × S θ̇
    v_cross: np.ndarray  #: crm(v_k) = v_k× (its negative transpose gives gyroscopic forces)
    rotation: np.ndarray  #: world axes of F_k (columns)
    position: np.ndarray  #: world origin of F_k


def checked_spatial_inertia(inertia, name) -> np.ndarray:
    """A body's 6 × 6 spatial inertia as a checked read-only array (finite, that of a physical
    rigid body by :func:`sko.inertia.check_spatial_inertia`: massless bodies and point masses are
    allowed, the articulated-body recursion checks that the dynamics stay defined; no entry so
    large that a state's products with it overflow, :func:`sko.spatial.check_inertia_size`), or
    :class:`BodyError` / the shared array errors naming the body."""
    inertia = checked_array(inertia, 2, "spatial inertia", name)
    if inertia.shape != (6, 6):
        raise BodyError(f"spatial inertia of body {name!r} must be 6 × 6, got {inertia.shape}")
    check_spatial_inertia(inertia, f"body {name!r}")
    check_inertia_size(inertia, f"spatial inertia of body {name!r}", BodyError)
    return inertia


def checked_placement(placement, name, what: str = "placement X_T of body") -> np.ndarray:
    """``X_T`` as a checked read-only 6 × 6 array (identity for ``None``); ``what`` and ``name``
    name it in the errors (e.g. ``"transform of frame"``).

    Raises
    ------
    DimensionError
        Not a 6 × 6 array of numbers, or not a rigid Plücker transform.
    NonFiniteError
        NaN or infinite entries.
    """
    if placement is None:
        return np.eye(6)
    return checked_transform(placement, f"{what} {name!r}")


def hinge_state(joint, placement: np.ndarray, q: np.ndarray, qd: np.ndarray, inboard: Attachment) -> HingeState:
    """The joint terms of a body hanging from ``inboard`` at joint coordinates ``q``, ``qd``."""
    XJ, S, cJ = joint.kinematics(q, qd)
    X = XJ @ placement
    vJ = S @ qd
    v = X @ inboard.velocity + vJ
    v_cross = crm(v)
    a = X @ inboard.gamma + cJ + v_cross @ vJ
    R = inboard.rotation
    return HingeState(X=X, S=S, v=v, a=a, v_cross=v_cross, rotation=R @ plucker_rotation(X).T,
                      position=inboard.position + R @ plucker_translation(X))


class JointCoordinates:
    """Mixin for body types whose coordinates are exactly their joint's (``self.joint``):
    ``q̇`` from ``θ̇``, normalisation, neutral and random configurations come from the joint."""

    def qdot(self, q, qd):
        return self.joint.qdot(q, qd)

    def normalize(self, q):
        return self.joint.normalize(q)

    def neutral(self):
        return self.joint.neutral()

    def random_configuration(self, rng):
        return self.joint.random(rng)

    def integrate(self, q, qd, dt):
        return self.joint.integrate(q, qd, dt)

    def difference(self, q0, q1):
        return self.joint.difference(q0, q1)
